"""``kite-skills calc MODE [JSON]``: the ``calc`` tool's modes for a person in a terminal.
The fields come as a JSON object, as an argument or on stdin; the answer is printed for
reading, or as the tool's structured content with ``--json``."""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from typing import Any, Final

from ..display import for_terminal
from ..errors import CalcError

# The modes as the tool lists them (calc/tool.json), read with this module, once a process:
# building the parser imports no calculator, so no other command pays for pydantic.
MODE: Final[dict[str, Any]] = json.loads(
    (resources.files("kite_skills") / "calc" / "tool.json").read_text(encoding="utf-8")
)["input"]["properties"]["mode"]


def register(commands: Any) -> None:
    mode = MODE
    calc = commands.add_parser(
        "calc",
        help="the calculators of the MCP 'calc' tool: tick, lots, charges, greeks, payoff …",
        description="Compute a number a recipe asks for. MODE is one of: "
        + "; ".join(
            f"{name} ({summary})"
            for name, summary in (part.split(": ", 1) for part in mode["description"].split("; "))
        )
        + ". Fields: docs/calc.md.",
        epilog="Example: kite-skills calc tick "
        '\'{"price": 1500.03, "tick_size": 0.05, "purpose": "buy_limit"}\'',
    )
    calc.add_argument("mode", choices=mode["enum"], metavar="MODE", help="the calculator")
    calc.add_argument(
        "fields", nargs="?", help="the mode's fields as a JSON object (default: read stdin)"
    )
    calc.add_argument("--json", action="store_true", help="print the structured answer as JSON")
    calc.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from ..calc import calculate

    text = args.fields if args.fields is not None else sys.stdin.read()
    try:
        fields = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalcError(args.mode, [f"fields: not JSON ({exc}) — send a JSON object"]) from None
    if not isinstance(fields, dict):
        raise CalcError(args.mode, ["fields: send a JSON object of the mode's fields"])
    answer = calculate({**fields, "mode": args.mode})
    if args.json:
        print(json.dumps(answer.to_dict(), indent=1, ensure_ascii=False))
    else:
        print(for_terminal(answer.to_text(), multiline=True))
    return 0
