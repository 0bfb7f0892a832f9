"""``kite-skills skills …``: the person's side of the user-skill store in a terminal.

Each handler opens the store, makes one library call and prints the result. Errors are
``KiteError`` subclasses that ``kite_skills.cli.main`` prints and turns into exit status 1.
"""

from __future__ import annotations

import argparse
import getpass
import os
from collections.abc import Callable
from pathlib import Path

from kite_skills.store import ActionResult, Skill, Store, default_db_path, human

VIA = "cli"


def _who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in the environment or the password database
        return "cli"


def _open(args: argparse.Namespace) -> Store:
    db = getattr(args, "db", None)
    path = Path(db) if db else default_db_path(os.environ)
    return Store.open(path)


def _show(skill: Skill) -> str:
    lines = [
        f"name:         {skill.name}",
        f"status:       {skill.status}",
        f"description:  {skill.description}",
        f"created:      {skill.created_at}",
        f"updated:      {skill.updated_at}",
        f"published:    {skill.published_at or 'never'}",
        "",
        skill.body.rstrip("\n"),
    ]
    if skill.proposed is not None:
        p = skill.proposed
        lines += [
            "",
            f"--- proposed revision by {p.proposed_by} at {p.proposed_at}"
            f" (accept or reject with 'kite-skills skills accept|reject {skill.name}')",
            f"description:  {p.description}",
            "",
            p.body.rstrip("\n"),
        ]
    return "\n".join(lines)


def _list(args: argparse.Namespace) -> int:
    with _open(args) as store:
        skills = store.list_all()
    if not skills:
        print("no skills yet")
    for s in skills:
        mark = " (revision proposed)" if s.proposed else ""
        print(f"{s.name:<32} {s.status:<9} {s.description}{mark}")
    return 0


def _show_cmd(args: argparse.Namespace) -> int:
    with _open(args) as store:
        print(_show(store.get(args.name)))
    return 0


def _log(args: argparse.Namespace) -> int:
    with _open(args) as store:
        entries = store.audit(limit=args.limit, name=args.name)
    for e in entries:
        move = f"{e.from_status or '-'} -> {e.to_status or '-'}"
        detail = f"  ({e.detail})" if e.detail else ""
        print(f"{e.at}  {e.skill:<24} {e.action:<13} {move:<20} {e.via}:{e.who}{detail}")
    return 0


def _human(action: Callable[..., ActionResult]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        with _open(args) as store:
            print(action(store, args.name, via=VIA, who=_who()).message)
        return 0

    return run


_ACTIONS: tuple[tuple[str, Callable[..., ActionResult], str], ...] = (
    ("publish", human.publish, "put a draft into service (draft -> live)"),
    ("draft", human.move_to_draft, "take a skill back for review (live/archived -> draft)"),
    ("archive", human.archive, "take a live skill out of service (live -> archived)"),
    ("restore", human.restore, "put an archived skill back (archived -> live)"),
    ("accept", human.accept_revision, "accept a skill's proposed revision"),
    ("reject", human.reject_revision, "reject a skill's proposed revision"),
    ("delete", human.delete, "delete a skill (its audit history stays)"),
)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``skills`` and its subcommands to the main parser's subparsers."""
    fmt = argparse.RawDescriptionHelpFormatter
    skills = subparsers.add_parser(
        "skills",
        help="review, publish and manage your own skills",
        description="Review and manage your own skills (the user-skill store).",
        epilog="example:\n  kite-skills skills list",
        formatter_class=fmt,
    )
    db_help = (
        "the store file (default: $KITE_SKILLS_DB, else $XDG_DATA_HOME/kite-skills/skills.db, "
        "else ~/.local/share/kite-skills/skills.db)"
    )
    skills.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help=db_help)
    # Also accepted after the subcommand ("skills list --db PATH").
    db_parent = argparse.ArgumentParser(add_help=False)
    db_parent.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help=db_help)
    sub = skills.add_subparsers(dest="skills_command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "list",
        help="list every skill with its status",
        formatter_class=fmt,
        parents=[db_parent],
        epilog="example:\n  kite-skills skills list",
    )
    p.set_defaults(run=_list)
    p = sub.add_parser(
        "show",
        help="show one skill's text, status and any proposed revision",
        formatter_class=fmt,
        parents=[db_parent],
        epilog="example:\n  kite-skills skills show compare-funds",
    )
    p.add_argument("name", metavar="NAME")
    p.set_defaults(run=_show_cmd)
    for command, action, help_text in _ACTIONS:
        p = sub.add_parser(
            command,
            help=help_text,
            formatter_class=fmt,
            parents=[db_parent],
            epilog=f"example:\n  kite-skills skills {command} compare-funds",
        )
        p.add_argument("name", metavar="NAME")
        p.set_defaults(run=_human(action))
    p = sub.add_parser(
        "log",
        help="show the audit log, newest first",
        formatter_class=fmt,
        parents=[db_parent],
        epilog="example:\n  kite-skills skills log --name compare-funds --limit 10",
    )
    p.add_argument("--name", metavar="N", help="only this skill's entries")
    p.add_argument("--limit", metavar="K", type=int, default=50, help="how many (default 50)")
    p.set_defaults(run=_log)
