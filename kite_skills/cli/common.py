"""What every command group of the CLI shares: opening the store, who the person is, the
command that starts kite-skills here, questions at the terminal, and diff colours. Public, so
that no command module borrows another's private names."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from kite_skills import invocation
from kite_skills.errors import KiteError, StoreUnavailable
from kite_skills.person import login_name
from kite_skills.store import VIA_CLI, Skill, Store
from kite_skills.store.desk import PersonDesk
from kite_skills.store.lifecycle import LIVE, Action, Actor, find_rule, puts_text_in_service

from . import confirm as terminal
from .db import db_path

Handler = Callable[[argparse.Namespace], int]
"""What a subcommand runs: its parsed arguments in, the exit status out."""
Command = Callable[[str, str, str, Handler], argparse.ArgumentParser]
"""Adds one subcommand of a group: its name, help, example and what it runs."""


class Refused(KiteError):
    """The command did nothing, for the reason in its message (exit status 1)."""


def person_name() -> str:
    return login_name(VIA_CLI)


def open_store(args: argparse.Namespace, *, create: bool = False) -> Store:
    """The store; only commands that add skills (new, import) may create a missing file."""
    path = db_path(args)
    if not create and not path.exists():
        raise StoreUnavailable(
            f"no store at {path} (nothing was created): check --db or KITE_SKILLS_DB; an "
            f"agent's first skillSave or '{kite_command()} skills new' creates it"
        )
    return Store.open(path, command=kite_command())


def person_desk(store: Store) -> PersonDesk:
    """The person's entry point to ``store``: every write a CLI command makes goes through it,
    audited as the CLI's, under the login name."""
    return PersonDesk(store, via=VIA_CLI, who=person_name())


def kite_command() -> str:
    """What starts kite-skills here, for the hints that name a command."""
    return invocation.current().command


def interactive() -> bool:
    """Whether a person is at the terminal (stdin and stdout are TTYs)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def ask(question: str) -> str:
    try:
        return input(question).strip().lower()
    except EOFError:
        return ""


def ask_text(question: str) -> str:
    """A line of free text (as typed, stripped); "" at end of input."""
    try:
        return input(question).strip()
    except EOFError:
        return ""


def colour(stream: Any = None) -> bool:
    """Whether to colour what goes to ``stream`` (stdout by default): only on a terminal,
    and never when ``NO_COLOR`` is set to anything (https://no-color.org)."""
    stream = sys.stdout if stream is None else stream
    return bool(stream.isatty()) and not os.environ.get("NO_COLOR")


_SGR = {"+++": "\x1b[1m", "---": "\x1b[1m", "@@": "\x1b[36m", "+": "\x1b[32m", "-": "\x1b[31m"}


def paint(line: str) -> str:
    """One line of a unified diff in the colours ``git diff`` uses (the line's text is
    already escaped, so it holds no escape sequence of its own)."""
    for start, code in _SGR.items():
        if line.startswith(start):
            return f"{code}{line}\x1b[0m"
    return line


def confirm(args: argparse.Namespace, question: str) -> None:
    if args.yes:
        return
    if not interactive():
        raise Refused(f"{question.rstrip('?')}: pass --yes to confirm (nothing changed)")
    if ask(f"{question} [y/N] ") != "y":
        raise Refused("nothing changed")


def confirm_in_service(action: Action, skill: Skill, what: str) -> None:
    """The person types the skill's name at the terminal when ``action`` puts text into
    service (issue 38); ``what`` names the text (``revision …``), or is empty."""
    if not puts_text_in_service(action, skill.status):
        return
    rule = find_rule(action, Actor.HUMAN, skill.status, skill.published_at is not None)
    to = rule.to_state if rule else skill.status
    if to != skill.status:
        effect = f"({skill.status} -> {to}): agents will read it"
    elif to == LIVE:
        effect = "(live): agents read the new text at once"
    else:
        effect = f"({to}): an agent can put it back in service"
    verb = action.value.replace("_", " ")
    terminal.confirm(verb, skill.name, f"{what} {effect}".lstrip(), kite=kite_command())
