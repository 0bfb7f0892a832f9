"""One rule for every command's ``--help``: it opens with what the command does.

argparse shows a subcommand's ``help=`` only in its parent's list; ``kite-skills skills review
--help`` would open with its usage line alone. Each command's one-line summary becomes its
description, unless it has a longer one of its own.
"""

from __future__ import annotations

import argparse


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
