"""One rule for every command's ``--help``: it opens with what the command does. And one
parser for every command: a mistyped command, subcommand or choice is answered "did you
mean" (:mod:`kite_skills.suggest`).

argparse shows a subcommand's ``help=`` only in its parent's list; ``kite-skills skills review
--help`` would open with its usage line alone. Each command's one-line summary becomes its
description, unless it has a longer one of its own.
"""

from __future__ import annotations

import argparse
from typing import Any


class SuggestingParser(argparse.ArgumentParser):
    """argparse's parser, whose "invalid choice" names the near misses among the choices
    (``invalid choice: 'lst'; did you mean 'list'? (choose from …)``). Subparsers are made
    of the same class, so every command and subcommand has it."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices or not isinstance(value, str):
            super()._check_value(action, value)
            return
        from kite_skills.suggest import did_you_mean, similar

        offer = did_you_mean([repr(c) for c in similar(value, [str(c) for c in choices])])
        listed = ", ".join(map(repr, choices))
        hint = f"; {offer}" if offer else ""
        raise argparse.ArgumentError(
            action, f"invalid choice: {value!r}{hint} (choose from {listed})"
        )


def describe_subcommands(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand under ``parser`` (at any depth) its summary as its description."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        summaries = {choice.dest: choice.help for choice in action._choices_actions}
        for name, sub in action.choices.items():
            summary = summaries.get(name)
            if not sub.description and summary:
                sub.description = f"{summary[:1].upper()}{summary[1:]}."
            describe_subcommands(sub)
