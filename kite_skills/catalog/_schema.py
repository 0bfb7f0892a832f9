"""Limits and field rules for catalog files, in one place (Agent Skills + SEP-2640). The name
and description rules every skill follows are :mod:`kite_skills.skill_rules`'."""

from __future__ import annotations

SKILL_FILE = "SKILL.md"
ROOT_PAGE = "index.md"
URI_SCHEME = "skill://"

MAX_COMPATIBILITY_LENGTH = 500
# Every SKILL.md of this catalog states its license, what it needs to run (compatibility) and
# its version (metadata.version, text): the loader refuses one that does not.
VERSION_KEY = "version"
COMPATIBILITY_HINT = "the Kite MCP server, connected in the same client"
MAX_FILES_PER_SKILL = 512
MAX_BYTES_PER_SKILL = 16 * 1024 * 1024
MAX_KEY_BYTES = 1024

# Prompts: a recipe orders/prepare.md is the prompt "orders-prepare"; a person's own live
# skill NAME is "my-NAME", so no recipe prompt may start with this prefix.
USER_PROMPT_PREFIX = "my-"

# Top-level SKILL.md fields the Agent Skills specification defines; others are refused
# so that `agentskills validate` and our validator agree.
SKILL_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
RECIPE_FIELDS = ("description",)

# Python packaging that sits at the root of the installed catalog and is not content.
PACKAGING_NAMES = frozenset({"__init__.py", "__pycache__"})
