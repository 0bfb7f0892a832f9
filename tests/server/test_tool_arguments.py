"""Tool arguments: the quick check in front of jsonschema never changes a verdict or a message.

``argument_problems`` skips jsonschema for arguments a flat schema plainly allows; whatever it
does not wave through gets jsonschema's own messages, exactly as before the quick check.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kite_skills.mcpkit import argument_problems, validator_problems
from kite_skills.server.tools import HELP_INPUT
from kite_skills.server.user_skills import NAME_INPUT, SAVE_INPUT, SKILLS_INPUT

SCHEMAS = {"help": HELP_INPUT, "skills": SKILLS_INPUT, "name": NAME_INPUT, "save": SAVE_INPUT}
KEYS = ["key", "q", "limit", "name", "description", "body", "other"]


def _jsonschema_problems(schema: Mapping[str, Any], arguments: Any) -> list[str]:
    """What every call paid before: jsonschema on every argument set."""
    return validator_problems(jsonschema.Draft202012Validator(schema), arguments)


EDGES: list[Any] = [
    {},
    {"key": "/"},
    {"key": "/", "other": 1},
    {"key": None},
    {"key": 5},
    {"limit": 5},
    {"limit": 5.0},  # an integer to JSON Schema; the quick check leaves it to jsonschema
    {"limit": True},
    {"limit": 0},
    {"limit": 100},
    {"limit": 101},
    {"limit": -(2**70)},
    {"q": "fund", "limit": 20},
    {"name": "compare-funds"},
    {"name": ["compare-funds"]},
    {"name": "a", "description": "d", "body": "b"},
    {"name": "a", "description": "d"},
    [],
    "arguments",
    None,
]


@pytest.mark.parametrize("tool", sorted(SCHEMAS))
@pytest.mark.parametrize("arguments", EDGES, ids=repr)
def test_the_same_problems_as_jsonschema(tool: str, arguments: Any) -> None:
    schema = SCHEMAS[tool]
    assert argument_problems(schema, arguments) == _jsonschema_problems(schema, arguments)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)


@given(
    tool=st.sampled_from(sorted(SCHEMAS)),
    arguments=st.dictionaries(st.sampled_from(KEYS), JSON | st.integers(-5, 105), max_size=4),
)
def test_any_arguments_get_jsonschema_verdict(tool: str, arguments: dict[str, Any]) -> None:
    schema = SCHEMAS[tool]
    assert argument_problems(schema, arguments) == _jsonschema_problems(schema, arguments)
