"""``kite-skills sandbox``: serve the Kite MCP server's tools over a simulated account, and
``kite-skills sandbox journal [FILE]``: print what was asked of it.

Reached from :func:`kite_skills.cli.main` through a lazy dispatch: the main server never
imports this package.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import sys
import textwrap
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final, NoReturn

from .. import invocation
from ..cli.help import SuggestingParser, describe_subcommands
from ..display import counted
from ..errors import KiteError
from ..launcher import bytecode
from ..stack_loading import loading_the_stack
from . import journal as journal_module
from .schemas import GENERATIONS

DEFAULT_PORT: Final = 7382
HOST: Final = "127.0.0.1"
AT_FORMAT: Final = "%Y-%m-%d %H:%M"
# Every tick up to the simulated now is played on each call: faster than an hour a second,
# a minute's wait would play days of ticks before the next answer.
MAX_SPEED: Final = 3600.0
MAX_AHEAD: Final = timedelta(days=7)  # --at past the scenario's clock: every tick is played


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class _Formatter(argparse.HelpFormatter):
    """Lines never broken inside a hyphenated name (a scenario such as ``partial-fill``)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(text, width, break_on_hyphens=False)


class _Parser(SuggestingParser):
    """argparse, but a bad option is one line on stderr (exit 2), not the usage block."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        _say(f"{self.prog}: error: {message} (see: {self.prog} --help)")
        raise SystemExit(2)


def _speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_SPEED:  # also refuses nan
        raise argparse.ArgumentTypeError(
            f"{text!r}: give simulated seconds per real second, more than 0 and at most "
            f"{MAX_SPEED:g} (1: real time, 60: a minute a second)"
        )
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port from 0 to 65535 (0: a free one)")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kite-skills sandbox",
        description="Serve the Kite MCP server's own tools over a SIMULATED Zerodha account and "
        "market: no Kite account, no network, no money at stake. On stdio (what an MCP client "
        "launches) by default, or with --http on 127.0.0.1 behind a bearer token printed on "
        "stderr. Every call is appended to a journal.",
        epilog="Examples: kite-skills sandbox --scenario pre-open --speed 60 | "
        "kite-skills sandbox --http --port 0 | kite-skills sandbox journal",
    )
    parser.add_argument(
        "--scenario",
        metavar="NAME|FILE",
        default="default",
        help="a built-in scenario: default (a typical account mid-session), expiry-day, "
        "t1-holdings, after-square-off, pre-open, gap-down, the rehearsals' reconcile-timeout, "
        "exit-gap, t1-gtt, positions-closed, funds-blocked, split-day, option-books, "
        "alerts-audit, and for the watch partial-fill, hedged-book, mis-hedge, amo-released, "
        "ddpi-gtt, demat-physical, demat-consent or demat-empty; or your own scenario YAML "
        "file (its format: docs/sandbox-scenarios.md)",
    )
    parser.add_argument(
        "--at",
        metavar="'YYYY-MM-DD HH:MM'",
        help="start the simulated clock here, IST (default: the scenario's clock; from it to "
        "7 days after it)",
    )
    parser.add_argument(
        "--speed",
        type=_speed,
        default=1.0,
        metavar="X",
        help="simulated seconds per real second (default 1; 60: a minute a second; at most "
        f"{MAX_SPEED:g})",
    )
    parser.add_argument(
        "--tools",
        choices=GENERATIONS,
        default="grouped",
        help="which Kite MCP server to imitate: grouped (the 7 tools with modes, default), "
        "legacy (the separate tools) or legacy-oldest (the first generation)",
    )
    parser.add_argument(
        "--journal",
        metavar="FILE",
        help="append the journal here (default: kite-skills/sandbox/journal.jsonl in this OS's "
        "per-user data folder)",
    )
    parser.add_argument(
        "--watch",
        choices=("journal", "strict"),
        default="journal",
        help="what the watch does with a harm it sees (docs/sandbox.md, 'What the sandbox "
        "watches for'): journal it (default), or strict: also refuse the call that would "
        "cause it, with the rule's message",
    )
    parser.add_argument(
        "--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 instead of stdio"
    )
    parser.add_argument(
        "--oauth",
        action="store_true",
        help="with --http: sign in as Zerodha's hosted server does (OAuth 2.1: dynamic client "
        "registration, PKCE, a consent page to approve or deny, access tokens of an hour and "
        "refresh tokens until 06:00 IST, on the simulated clock) instead of the bearer token",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"with --http: the port on 127.0.0.1 (default {DEFAULT_PORT}; 0: a free one)",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    show = commands.add_parser(
        "journal",
        prog="kite-skills sandbox journal",
        help="print a journal as a readable timeline",
        epilog="Example: kite-skills sandbox journal ./rehearsal.jsonl",
    )
    show.add_argument("file", nargs="?", help="the journal (default: the default journal)")
    show.add_argument(
        "--json",
        action="store_true",
        help="print the last launch's summary as JSON instead: calls, writes, events, and the "
        "watch's findings with counts per rule",
    )
    show.set_defaults(run=_run_journal)
    parser.set_defaults(run=_run_serve)
    describe_subcommands(parser)
    return parser


def _journal_path(value: str | None) -> Path:
    return Path(value) if value else journal_module.default_path(os.environ)


def _run_journal(args: argparse.Namespace) -> int:
    path = _journal_path(args.file)
    if args.json:
        print(json.dumps(journal_module.summary(path), indent=2))  # noqa: T201
        return 0
    for line in journal_module.timeline(path):
        print(line)  # noqa: T201  (a command for a person: the timeline is its output)
    return 0


class UsageError(KiteError):
    """A sandbox option cannot be used as given (exit 2, as argparse's own refusals)."""


def _parse_at(value: str | None, tz: Any) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.strptime(value.strip(), AT_FORMAT).replace(tzinfo=tz)
    except ValueError as exc:
        raise UsageError(
            f"--at {value!r}: write the simulated start as 'YYYY-MM-DD HH:MM' (IST), "
            "e.g. --at '2026-12-02 13:00'"
        ) from exc


def _run_serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="kite-skills sandbox: %(message)s"
    )
    _parse_at(args.at, None)  # a bad --at is said before anything loads
    if args.oauth and not args.http:
        raise UsageError("--oauth signs in to the HTTP server: add --http")
    # The port first: a taken one is said before anything else is.
    sock = _bind(args.port) if args.http else None
    try:
        return _prepare_and_serve(args, sock)
    finally:
        if sock is not None:
            sock.close()


def _prepare_and_serve(args: argparse.Namespace, sock: socket.socket | None) -> int:
    # The MCP stack and the simulation load here, as the main server's do.
    with loading_the_stack():
        from ..mcpkit import parse_excluded
        from . import sim
        from .handlers import generation
        from .server import Sandbox
    if args.scenario not in sim.scenario_names() and not Path(args.scenario).is_file():
        raise UsageError(
            f"--scenario {args.scenario!r}: no built-in scenario and no file by that name — "
            f"give a scenario YAML file or one of: {', '.join(sim.scenario_names())}"
        )
    try:
        scenario = sim.load_scenario(args.scenario)
    except sim.ScenarioError as exc:
        for problem in exc.problems:
            _say(f"{problem.source}:{problem.line}: {problem.message}")
        _say(
            f"kite-skills sandbox: {counted(len(exc.problems), 'problem')} in {args.scenario}; "
            "nothing served"
        )
        return 1
    start = _parse_at(args.at, sim.IST)
    if start is not None and start < scenario.clock:
        raise UsageError(
            f"--at {args.at!r} is before the scenario's clock ({scenario.clock:{AT_FORMAT}}), "
            "which is the moment its account describes — give a time from then to 7 days "
            "after, or write a scenario file with an earlier 'clock:'"
        )
    if start is not None and start - scenario.clock > MAX_AHEAD:
        raise UsageError(
            f"--at {args.at!r} is more than {MAX_AHEAD.days} days after the scenario's clock "
            f"({scenario.clock:{AT_FORMAT}}): the sandbox plays every tick in between — give a "
            "time within a week of it, or set 'clock:' in a scenario file"
        )
    simulation = sim.Simulation(scenario, start)
    clock = sim.SimClock(simulation.now, args.speed)
    path = _journal_path(args.journal)
    try:
        journal = journal_module.Journal(path)
    except journal_module.JournalError as exc:
        raise UsageError(str(exc)) from exc
    sandbox = Sandbox(
        simulation,
        clock.now,
        generation(args.tools, clock.now),
        journal,
        strict=args.watch == "strict",
        excluded=parse_excluded(os.environ.get("EXCLUDED_TOOLS")),
    )
    if sandbox.unknown_excluded:
        logging.getLogger("kite_skills.sandbox").warning(
            "EXCLUDED_TOOLS names no %s tool: %s", args.tools, ", ".join(sandbox.unknown_excluded)
        )
    begun = simulation.now.strftime(AT_FORMAT)
    transport = "http" if sock is not None else "stdio"
    journal.start(
        scenario=args.scenario,
        clock=begun,
        speed=args.speed,
        tools=args.tools,
        transport=transport,
        watch=args.watch,
    )
    sandbox.journal_notes(simulation.take_notes())  # what the account starts exposed to
    line = (
        f"kite-skills sandbox: a SIMULATION (no Kite account, no real money): scenario "
        f"{args.scenario!r}, clock {begun} IST at {args.speed:g}x, tools {args.tools}; "
        f"journal {path}"
    )
    if sock is None and sys.stdin.isatty():  # a person at a terminal, not an MCP client
        line += (
            "; serving MCP on stdio for an MCP client (Ctrl-C stops it; "
            f"'{invocation.current().run('setup')} CLIENT --sandbox' connects one)"
        )
    _say(line)
    try:
        if sock is not None:
            return _serve_http(sandbox, sock, args.speed if args.oauth else None)
        return _serve_stdio(sandbox)
    finally:
        journal.close()
        bytecode.write_later("sandbox")  # once served, every module a session loads is loaded


def _serve_stdio(sandbox: Any) -> int:
    import anyio

    from ..mcpkit import stdio
    from .server import build_server

    server = build_server(sandbox)
    try:
        interrupted = anyio.run(stdio.serve, server, server.create_initialization_options())
    except KeyboardInterrupt:
        return 130
    return 130 if interrupted else 0


class PortInUse(KiteError):
    """The port asked for is taken."""


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise PortInUse(
            f"cannot listen on {HOST}:{port}: {exc.strerror or exc} — choose another port "
            "with --port N, or --port 0 for a free one"
        ) from exc
    sock.listen(64)
    return sock


def _serve_http(sandbox: Any, sock: socket.socket, oauth_speed: float | None) -> int:
    """``oauth_speed``: with --oauth, the simulated clock's speed (token lifetimes run on it)."""
    from ..mcpkit import localhost
    from .server import build_server, http_app, new_token

    port = sock.getsockname()[1]
    if oauth_speed is None:
        token = new_token()
        app = http_app(build_server(sandbox), port, token)
        _say(
            f"kite-skills sandbox: serving MCP at http://{HOST}:{port}/mcp; every request needs "
            f"'Authorization: Bearer {token}' (a new token each launch)"
        )
    else:
        from .oauth import SandboxAuthority

        app = http_app(build_server(sandbox), port, SandboxAuthority(sandbox.clock, oauth_speed))
        _say(
            f"kite-skills sandbox: serving MCP at http://{HOST}:{port}/mcp; sign in with OAuth "
            f"2.1 (metadata at http://{HOST}:{port}/.well-known/oauth-authorization-server; "
            "each sign-in asks for approval on a consent page)"
        )
    config = localhost.config(app, lifespan="on")  # the SDK's session manager
    try:
        localhost.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        return 130
    return 0


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except UsageError as exc:
        _say(f"kite-skills sandbox: error: {exc}")
        return 2
    except KiteError as exc:
        _say(f"kite-skills sandbox: error: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
