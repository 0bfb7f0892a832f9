"""`kite-skills` command line: with no subcommand, the stdio MCP server; otherwise tools
for people (browse the catalog, validate an author's directory, manage their skills)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..display import counted
from ..errors import CatalogError, KiteError, UnknownHelpKey

if TYPE_CHECKING:
    import argparse
    from collections.abc import (
        Callable,
    )  # imported where a parser is built: a server start needs none


def _run_help(args: argparse.Namespace) -> int:
    from .. import catalog

    try:
        page = catalog.load().help(args.key)
    except UnknownHelpKey as exc:
        print(f"kite-skills: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(page.to_markdown())
    return 0


def _run_validate(args: argparse.Namespace) -> int:
    from .. import catalog

    where = args.dir or "the embedded catalog"
    try:
        loaded = catalog.validate(Path(args.dir) if args.dir else None)
    except CatalogError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"{counted(len(exc.problems), 'problem')} in {where}", file=sys.stderr)
        return 1
    print(f"{where}: OK ({len(loaded.skills)} skills)")
    return 0


def _run_list(args: argparse.Namespace) -> int:
    from .. import catalog

    for skill in catalog.load().skills:
        own = next(r for r in skill.resources if r.uri == skill.uri)
        print(f"{skill.uri}\t{skill.name}\t{len(skill.resources)} files\t{own.digest}")
    return 0


def _run_server(args: argparse.Namespace | None) -> int:
    from ..launcher import bytecode
    from ..stack_loading import loading_the_stack

    with loading_the_stack():
        from ..server.app import serve_stdio  # the MCP stack loads only in server mode
        from .db import db_path
    try:
        return serve_stdio(db_path(args))
    finally:
        bytecode.write_later("server")  # once served, every module a session loads is loaded


def _run_dashboard(args: argparse.Namespace) -> int:
    from ..dashboard.serve import run  # Starlette, Jinja2 and uvicorn load only here
    from .db import db_path

    return run(db_path(args), args.port, not args.no_browser)


def build_parser() -> argparse.ArgumentParser:
    from . import calc, history, install, setup, skills
    from .db import DB_DEFAULT, add_db_option
    from .help import SuggestingParser, describe_subcommands

    parser = SuggestingParser(
        prog="kite-skills",
        description="Trusted procedures for AI agents on a Zerodha Kite account. "
        "With no command, serves MCP on stdio (for an MCP client to launch).",
        epilog="Example: kite-skills help /orders/reconcile",
    )
    parser.add_argument("--version", action="version", version=f"kite-skills {__version__}")
    add_db_option(parser, f"the user-skill store the server uses {DB_DEFAULT}")
    parser.set_defaults(run=_run_server)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    help_cmd = commands.add_parser(
        "help",
        help="browse the built-in catalog (the same pages the MCP 'help' tool returns)",
        epilog="Example: kite-skills help /orders   (start at '/' to see every topic)",
    )
    help_cmd.add_argument("key", nargs="?", default="/", help="help key, e.g. /orders/prepare")
    help_cmd.set_defaults(run=_run_help)

    cat = commands.add_parser("catalog", help="check or list the built-in catalog")
    cat_commands = cat.add_subparsers(title="catalog commands", metavar="COMMAND", required=True)
    validate = cat_commands.add_parser(
        "validate",
        help="validate the embedded catalog, or an author's directory before a rebuild",
        epilog="Example: kite-skills catalog validate ./skills_catalog",
    )
    validate.add_argument("dir", nargs="?", help="catalog directory (default: the embedded one)")
    validate.set_defaults(run=_run_validate)
    listing = cat_commands.add_parser(
        "list",
        help="each skill's URI, name, file count and SKILL.md digest",
        epilog="Example: kite-skills catalog list",
    )
    listing.set_defaults(run=_run_list)
    calc.register(commands)
    skills.register(commands)
    history.register_settings(commands)
    dash = commands.add_parser(
        "dashboard",
        help="review and publish your skills in a browser (serves 127.0.0.1 only)",
        description="Serve the dashboard at http://127.0.0.1:PORT/skills behind sign-in links "
        "that each work once, for two minutes: one printed on stderr, and one your browser "
        "opens (when there is one) through a page only you can read, so no secret is on "
        "its command line. For a new link, open http://127.0.0.1:PORT/skills: one is "
        "printed.",
        epilog="Example: kite-skills dashboard --port 0 --no-browser",
    )
    dash.add_argument(
        "--port", type=int, default=7381, help="port on 127.0.0.1 (default 7381; 0: a free one)"
    )
    dash.add_argument("--no-browser", action="store_true", help="only print the link")
    add_db_option(dash)
    dash.set_defaults(run=_run_dashboard)
    setup.register(commands)
    install.register(commands)
    sandbox = commands.add_parser(
        "sandbox",
        add_help=False,  # 'kite-skills sandbox --help' is the sandbox's own (main() hands over)
        help="serve the Kite MCP tools over a simulated account, to rehearse without money",
    )
    sandbox.set_defaults(run=_first_word("sandbox"))
    guard = commands.add_parser(
        "guard",
        add_help=False,  # 'kite-skills guard --help' is the guard's own (main() hands over)
        help="serve a Kite MCP server's tools with your limits before every write",
    )
    guard.set_defaults(run=_first_word("guard"))
    describe_subcommands(parser)
    return parser


def _first_word(word: str) -> Callable[[argparse.Namespace], int]:
    """``kite-skills --db X sandbox``: main() hands ``sandbox`` and ``guard`` over only as the
    first word."""

    def refuse(args: argparse.Namespace) -> int:
        print(
            f"kite-skills: '{word}' comes first and takes its own options (it uses no store): "
            f"kite-skills {word} --help",
            file=sys.stderr,
        )
        return 2

    return refuse


SIGPIPE_STATUS = 141  # 128 + SIGPIPE: what a shell shows for 'git log | head -1'


def _reader_gone() -> int:
    """stdout's reader closed the pipe (``kite-skills skills list | head -1``): stop quietly,
    as ``git`` does, with no traceback; stdout goes to the null device so that the flush at
    exit finds nowhere to fail."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)
    return SIGPIPE_STATUS


def main(argv: list[str] | None = None) -> int:
    # Before the MCP SDK's types are built: pydantic would otherwise scan every installed
    # distribution for plugins and run any it finds on each value it validates (skill texts,
    # Kite orders). None was shipped for this program; the scan alone holds 0.7 MB of the
    # warm server (docs/benchmarks.md, section 5).
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    try:
        if not (sys.argv[1:] if argv is None else argv):
            # How MCP clients launch it: no parser to build, no person's command to import.
            return _run_server(None)
        given = sys.argv[1:] if argv is None else argv
        if given[0] == "sandbox":  # its own parser; the main server never loads the sandbox
            from ..sandbox.cli import main as sandbox

            return sandbox(given[1:])
        if given[0] == "guard":  # its own parser, as the sandbox's
            from ..guard.cli import main as guard

            return guard(given[1:])
        args = build_parser().parse_args(argv)
        status = int(args.run(args))
        sys.stdout.flush()  # here, so that a reader gone before the end is seen below
        return status
    except BrokenPipeError:
        return _reader_gone()
    except KiteError as exc:
        print(f"kite-skills: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C at any point (a server start is mostly imports)
        return 130
