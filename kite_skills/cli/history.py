"""``kite-skills skills reject|history|revert|reads`` and ``kite-skills settings``: the review
loop's memory in a terminal (issue 22 §5).

Each handler opens the store, makes one library call and prints the result; agent-written
text goes through :func:`kite_skills.display.for_terminal`.
"""

from __future__ import annotations

import argparse
import difflib
import json
from typing import Any

from kite_skills.cli.db import add_db_option, db_parent
from kite_skills.display import for_terminal, local_time
from kite_skills.store import PastText, ReadReceipt, Skill
from kite_skills.store.human import MAX_REASON_CHARS
from kite_skills.store.lifecycle import Action, puts_text_in_service
from kite_skills.store.records import short_revision

from .common import (
    Command,
    colour,
    confirm,
    confirm_in_service,
    kite_command,
    open_store,
    paint,
    person_desk,
)


def _t(text: str) -> str:
    return for_terminal(text)


def _reject(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        result = person_desk(store).reject_revision(args.name, reason=args.reason or "")
    print(result.message)
    return 0


def _label(text: PastText) -> str:
    by = text.written_by.label()
    at = local_time(text.at)
    rev = short_revision(text.revision)
    line = f"#{text.id:<5} {at}  {text.kind:<8} {text.status:<9} {rev}  {by}"
    if text.live_at and text.kind == "text":
        line += f"  (live from {local_time(text.live_at)})"
    if text.decided_by is not None:
        line += f"  — {text.status} by {text.decided_by.label()} at {local_time(text.decided_at)}"
    if text.reason:
        line += f"; reason: {text.reason}"
    return _t(line)


def _text_json(text: PastText) -> dict[str, Any]:
    return {
        "id": text.id,
        "kind": text.kind,
        "action": text.action,
        "status": text.status,
        "revision": text.revision,
        "at": text.at,
        "via": text.written_by.via or None,
        "who": text.written_by.who or None,
        "live_at": text.live_at,
        "decided_at": text.decided_at,
        "decided_by": text.decided_by.who if text.decided_by else None,
        "reason": text.reason,
        "description": text.description,
        "body": text.body,
    }


def diff_texts(
    name: str, old: PastText | Skill, new: PastText | Skill, *, coloured: bool = False
) -> str:
    """A unified diff of two texts of ``name`` (description and body), as ``skills diff``
    prints a proposed revision (coloured likewise on a terminal); each side named by its
    history id or as the current text."""

    def side(text: PastText | Skill) -> tuple[list[str], str]:
        lines = [f"description: {_t(text.description)}", ""]
        lines += for_terminal(text.body.rstrip("\n"), multiline=True).split("\n")
        label = (
            f"{name} {text.label()} revision {text.revision}"
            if isinstance(text, PastText)
            else f"{name} current text revision {text.revision} ({text.status})"
        )
        return lines, label

    (a, a_label), (b, b_label) = side(old), side(new)
    lines = list(difflib.unified_diff(a, b, fromfile=a_label, tofile=b_label, lineterm=""))
    if coloured:
        lines = [paint(line) for line in lines]
    return "\n".join(lines) if lines else "(the two texts are the same)"


def _history(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        if args.diff:
            texts: list[PastText | Skill] = [store.history_text(args.name, i) for i in args.diff]
            if len(texts) == 1:
                texts.append(store.get(args.name))
            print(diff_texts(args.name, texts[0], texts[1], coloured=colour()))
            return 0
        if args.show is not None:
            text = store.history_text(args.name, args.show)
            print(_label(text))
            print(f"description:  {_t(text.description)}\n")
            print(for_terminal(text.body.rstrip("\n"), multiline=True))
            return 0
        history = store.history(args.name, args.limit)
        if not history:
            store.get(args.name)  # a name never used: "did you mean"
    if args.json:
        print(json.dumps([_text_json(t) for t in history], indent=2, ensure_ascii=True))
        return 0
    if not history:
        print(f"no texts of '{args.name}' are kept (history is kept since schema version 6)")
        return 0
    print("   id  when                         kind     status    revision      written by")
    for text in history:
        print(_label(text))
    print(
        f"\nsee one: {kite_command()} skills history {args.name} --show ID; compare two: "
        f"--diff ID [ID]; restore one: {kite_command()} skills revert {args.name} ID"
    )
    return 0


def _revert(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        text = store.history_text(args.name, args.id)
        current = store.get(args.name)
        in_service = puts_text_in_service(Action.REVERT, current.status)
        if in_service or not args.yes:
            print(diff_texts(args.name, current, text, coloured=colour()))
        if in_service:  # the person types its name at the terminal; --yes cannot (issue 38)
            what = f"to text #{text.id} (revision {text.revision})"
            confirm_in_service(Action.REVERT, current, what)
        else:
            confirm(
                args,
                f"make text #{text.id} (revision {text.revision}) the text of "
                f"{for_terminal(repr(args.name))} ({current.status})?",
            )
        result = person_desk(store).revert(args.name, text_id=args.id)
    print(result.message)
    return 0


def _receipt_line(read: ReadReceipt) -> str:
    return _t(f"{local_time(read.at)}  {read.kind:<6} {read.item:<32} {read.via:<15} {read.client}")


def _reads(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        on = store.read_receipts_on()
        reads = store.reads("skill", args.name) if args.name else store.reads()
        if args.name and not reads:
            store.get(args.name)  # a name never used: "did you mean"
    if not on:
        print(f"read receipts are off ('{kite_command()} settings read-receipts on' turns them on)")
    elif not reads:
        print("no reads recorded yet")
    for read in reads:
        print(_receipt_line(read))
    return 0


def register(command: Command) -> None:
    """Add ``reject``, ``history``, ``revert`` and ``reads`` to ``kite-skills skills``."""
    p = command(
        "reject",
        "reject a skill's proposed revision, or an agent's new draft (request changes; the "
        "draft stays until you delete it), optionally saying why (the agent's next save is told)",
        "reject compare-funds --reason 'keep the expense ratio step'",
        _reject,
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "--reason",
        metavar="TEXT",
        help=f"why, in a few sentences (up to {MAX_REASON_CHARS} characters)",
    )
    p = command(
        "history",
        "every text a skill has had (drafts, proposals and what became of them, live "
        "versions); show, compare or restore one",
        "history compare-funds --diff 12 15",
        _history,
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--show", metavar="ID", type=int, help="print one text in full")
    p.add_argument(
        "--diff",
        metavar="ID",
        type=int,
        nargs="+",
        help="compare text ID with the current text, or two texts (ID ID)",
    )
    p.add_argument("--limit", metavar="K", type=int, default=200, help="how many (default 200)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = command(
        "revert",
        "make an earlier text from 'skills history' the skill's text again (a new revision "
        "you write; the status is unchanged)",
        "revert compare-funds 12",
        _revert,
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("id", metavar="ID", type=int, help="the text's id in 'skills history'")
    p.add_argument(
        "--yes",
        action="store_true",
        help="do not ask, for a draft (for scripts); a live or archived skill's new text is "
        "always confirmed by typing its name at the terminal",
    )
    p = command(
        "reads",
        "when each skill and recipe was last read, and by which MCP client (read receipts)",
        "reads compare-funds",
        _reads,
    )
    p.add_argument("name", metavar="NAME", nargs="?", help="only this skill")


def _settings(args: argparse.Namespace) -> int:
    with open_store(args, create=True) as store:
        print(person_desk(store).set_read_receipts(args.value == "on"))
    return 0


def register_settings(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``kite-skills settings``."""
    fmt = argparse.RawDescriptionHelpFormatter
    settings = subparsers.add_parser(
        "settings",
        help="switch store features on or off (read receipts)",
        description="Switches kept in the store file.",
        epilog="example:\n  kite-skills settings read-receipts off",
        formatter_class=fmt,
    )
    add_db_option(settings)
    sub = settings.add_subparsers(dest="settings_command", metavar="SETTING", required=True)
    p = sub.add_parser(
        "read-receipts",
        help="record which MCP client last read each skill and recipe (default on); off "
        "also deletes the receipts kept so far",
        parents=[db_parent()],
        formatter_class=fmt,
        epilog="example:\n  kite-skills settings read-receipts off",
    )
    p.add_argument("value", choices=("on", "off"))
    p.set_defaults(run=_settings)
