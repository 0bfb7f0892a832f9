"""``kite-skills guard``: serve the upstream Kite MCP server's tools on stdio with the person's
limits between the agent and every write; ``kite-skills guard limits …`` (the person's limits)
and ``kite-skills guard journal`` (what it decided).

Reached from :func:`kite_skills.cli.main` through a lazy dispatch, as the sandbox is.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, NoReturn

from .. import invocation, person
from ..cli.help import SuggestingParser, describe_subcommands
from ..errors import KiteError
from . import journal as journal_module
from . import limits as limits_module

DEFAULT_TIMEOUT: Final = 10.0
HOSTED: Final = "https://mcp.kite.trade/mcp"


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class UsageError(KiteError):
    """A guard option cannot be used as given (exit 2)."""


class _Parser(SuggestingParser):
    def error(self, message: str) -> NoReturn:
        _say(f"{self.prog}: error: {message} (see: {self.prog} --help)")
        raise SystemExit(2)


def _limits_path(args: argparse.Namespace) -> Path:
    return Path(args.limits) if args.limits else limits_module.default_path(os.environ)


def _journal_path(args: argparse.Namespace) -> Path:
    return Path(args.journal) if args.journal else journal_module.default_path(os.environ)


def _add_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--limits",
        metavar="FILE",
        help="the limits file (default: kite-skills/guard-limits.json in this OS's per-user "
        "config folder)",
    )
    parser.add_argument(
        "--journal",
        metavar="FILE",
        help="the journal (default: kite-skills/guard/journal.jsonl in this OS's per-user "
        "data folder)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kite-skills guard",
        description="Serve a Kite MCP server's own tools on stdio with your limits between "
        "the agent and every write: reads pass straight through; each order, modification, "
        "cancellation, GTT and alert is allowed, refused, or asked of you first. Your limits "
        "are yours: no MCP call reads or changes them.",
        epilog=f"Examples: kite-skills guard --url {HOSTED} | kite-skills guard --sandbox | "
        "kite-skills guard -- kite-mcp-server | kite-skills guard limits set max_order_value "
        "200000 | kite-skills guard limits kill 'stepping out'",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--url",
        help=f"a Kite MCP server over Streamable HTTP (Zerodha's hosted one: {HOSTED}; a "
        "self-hosted kite-mcp-server; kite-skills sandbox --http)",
    )
    where.add_argument(
        "--sandbox",
        action="store_true",
        help="this program's 'kite-skills sandbox' on stdio (to rehearse); its options after --",
    )
    parser.add_argument(
        "--bearer-env",
        metavar="VAR",
        help="with --url: send 'Authorization: Bearer' with the token in this environment "
        "variable (never on a command line)",
    )
    parser.add_argument(
        "--oauth",
        action="store_true",
        help="with --url: sign in with OAuth 2.1 in your browser when the server asks (the "
        "hosted server's grouped tools); tokens are kept in memory only",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"how long a call to the upstream may take (default {DEFAULT_TIMEOUT:g})",
    )
    _add_files(parser)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    limits = commands.add_parser(
        "limits",
        prog="kite-skills guard limits",
        help="show or change your limits; the kill switch",
        description="Show or change your limits (the file only a person writes) and the kill "
        "switch. The guard reads them before every write.",
        epilog="Examples: kite-skills guard limits | kite-skills guard limits set "
        "max_order_value 200000 | kite-skills guard limits set segments NSE,NFO | "
        "kite-skills guard limits set trading_hours 09:15-15:15 | kite-skills guard limits "
        "kill 'market is wild' | kite-skills guard limits resume",
    )
    _add_files(limits)
    verbs = limits.add_subparsers(title="limits commands", metavar="VERB", parser_class=_Parser)
    show = verbs.add_parser(
        "show",
        help="every limit, its value and what it checks",
        description="Print every limit, its value and what it checks.",
    )
    _add_files(show)
    show.set_defaults(run=_run_show)
    put = verbs.add_parser(
        "set",
        help="set one limit ('off' for none)",
        description="Set one limit: a number, a list (NSE,NFO), HH:MM-HH:MM, on, or off.",
    )
    put.add_argument("name", help="the limit's setting, e.g. max_order_value")
    put.add_argument("value", help="its value, or off")
    _add_files(put)
    put.set_defaults(run=_run_set)
    kill = verbs.add_parser(
        "kill",
        help="turn the kill switch on: no writes at all",
        description="Turn the kill switch on: every write is refused, with your reason, until "
        "'kite-skills guard limits resume'.",
    )
    kill.add_argument("reason", help="why (shown with every refusal)")
    _add_files(kill)
    kill.set_defaults(run=_run_kill)
    resume = verbs.add_parser(
        "resume", help="turn the kill switch off", description="Turn the kill switch off."
    )
    _add_files(resume)
    resume.set_defaults(run=_run_resume)
    limits.set_defaults(run=_run_show)
    journal = commands.add_parser(
        "journal",
        help="today's writes and what the guard decided",
        description="Print today's writes through the guard and what it decided.",
    )
    _add_files(journal)
    journal.set_defaults(run=_run_journal)
    parser.set_defaults(run=_run_serve)
    describe_subcommands(parser)
    return parser


def _run_show(args: argparse.Namespace) -> int:
    path = _limits_path(args)
    current = limits_module.load(path)
    _out(f"{path}{'' if path.exists() else ' (not written yet: the defaults)'}")
    for line in limits_module.describe(current):
        _out(line)
    return 0


def _run_set(args: argparse.Namespace) -> int:
    path = _limits_path(args)
    before = limits_module.load(path)
    try:
        changed = limits_module.with_setting(before, args.name, args.value)
    except limits_module.LimitsError as exc:
        if args.name not in limits_module.Limits.model_fields:
            raise  # its message lists the limits
        raise limits_module.LimitsError(
            f"{exc} — give it in the form 'kite-skills guard limits' shows (e.g. 200000, "
            "NSE,NFO, 09:15-15:15), or off for no limit"
        ) from exc
    limits_module.save(path, changed)
    _out(f"{args.name}: {limits_module.in_words(changed, args.name)} ({path})")
    return 0


def _run_kill(args: argparse.Namespace) -> int:
    path = _limits_path(args)
    switch = limits_module.KillSwitch(
        reason=args.reason,
        by=person.login_name("cli"),
        at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    limits_module.save(path, limits_module.load(path).model_copy(update={"kill_switch": switch}))
    _out(f"kill switch on: every write is refused until 'kite-skills guard limits resume' ({path})")
    return 0


def _run_resume(args: argparse.Namespace) -> int:
    path = _limits_path(args)
    limits_module.save(path, limits_module.load(path).model_copy(update={"kill_switch": None}))
    _out(f"kill switch off ({path})")
    return 0


def _run_journal(args: argparse.Namespace) -> int:
    for entry in journal_module.on_day(_journal_path(args), datetime.now().astimezone()):
        _out(journal_module.line(entry))
    return 0


def _upstream(args: argparse.Namespace) -> Any:
    from .upstream import Upstream

    words = args.command
    if args.url:
        if words:
            raise UsageError("give --url or a command after --, not both")
        bearer = None
        if args.bearer_env:
            bearer = os.environ.get(args.bearer_env)
            if not bearer:
                raise UsageError(f"--bearer-env {args.bearer_env}: that variable is not set")
        if args.oauth and bearer:
            raise UsageError("give --oauth or --bearer-env, not both")
        auth = None
        if args.oauth:
            from .oauth import upstream_auth

            auth = upstream_auth(args.url)
        return Upstream(url=args.url, bearer=bearer, auth=auth)
    if args.bearer_env or args.oauth:
        raise UsageError("--bearer-env and --oauth are for --url")
    if args.sandbox:
        return Upstream(
            command=(*invocation.current().words, "sandbox", *words), env=dict(os.environ)
        )
    if not words:
        raise UsageError(
            f"name the upstream: --url {HOSTED}, --sandbox, or -- COMMAND (a stdio Kite MCP server)"
        )
    return Upstream(command=tuple(words), env=dict(os.environ))


def _run_serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="kite-skills guard: %(message)s"
    )
    upstream = _upstream(args)
    limits_module.load(_limits_path(args))  # a broken limits file is said before serving
    from ..stack_loading import loading_the_stack

    with loading_the_stack():
        import anyio

        from .serve import serve
    journal = journal_module.Journal(_journal_path(args))
    _say(
        f"kite-skills guard: in front of {upstream.describe()}; limits {_limits_path(args)}; "
        f"journal {journal.path}"
    )
    try:
        return int(anyio.run(serve, upstream, _limits_path(args), journal, args.timeout))
    except KeyboardInterrupt:
        return 130
    finally:
        journal.close()


def main(argv: list[str]) -> int:
    # After "--": the upstream's own command line (or the sandbox's options), never parsed here.
    ours, command = (
        (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    )
    args = build_parser().parse_args(ours)
    args.command = command
    try:
        return int(args.run(args))
    except UsageError as exc:
        _say(f"kite-skills guard: error: {exc}")
        return 2
    except KiteError as exc:
        _say(f"kite-skills guard: error: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
