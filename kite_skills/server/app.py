"""Assemble the MCP server and run it on stdio.

``build_server`` is pure assembly (no streams): the handlers (:mod:`.handlers`), the prompts,
the Skills extension and the protocol middlewares on one SDK ``Server``. ``serve_stdio`` is the
only code that touches stdin/stdout, and everything it logs goes to stderr.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import PromptsListChanged

from .. import __version__, catalog, invocation
from ..catalog import Catalog
from ..display import one_line
from ..errors import KiteError
from ..mcpkit import SessionRules, internal_errors, parse_excluded, stdio
from ..mcpkit.wire import serve as serve_kept
from ..store import AgentView
from . import client_log
from .handlers import Handlers, all_tools
from .prompts import Prompts, legacy_cache_fields
from .protocol import client_logs
from .skills_extension import SkillsExtension, legacy_initialize_extensions
from .user_skills import UserSkills

__all__ = ["INSTRUCTIONS", "build_server", "excluded_tools", "serve_stdio", "serve_wire"]

log = logging.getLogger("kite_skills.server")

INSTRUCTIONS = (
    "This server holds trusted, step-by-step procedures for working with a Zerodha Kite "
    "account. Before following a catalog recipe, look for the person's own skills with the "
    "skills tool (search with the task's words): a live skill of theirs says how they want "
    "that task done, so read it with skillRead and prefer it to the recipe. Find the "
    "catalog's recipes through the Skills extension (skills/list, then skills/get and "
    "resources/read) or, if your client does not use Skills, through the help tool "
    "starting at key '/'. A procedure is documentation only: it never replaces the "
    "user's explicit approval of each order, modification, cancellation or alert."
)


def excluded_tools(value: str | None, known: Iterable[str]) -> tuple[frozenset[str], list[str]]:
    """Names from ``EXCLUDED_TOOLS`` (comma-separated), and those that name no tool."""
    names = parse_excluded(value)
    return names, sorted(names - set(known))


def build_server(
    catalog: Catalog, user_skills: UserSkills, excluded: frozenset[str] = frozenset()
) -> Server[Any]:
    """The server over ``catalog`` and ``user_skills``, without the tools in ``excluded``."""
    tools = all_tools(catalog, user_skills).excluding(excluded)
    handlers = Handlers(catalog, user_skills, tools)
    prompts = Prompts(catalog, user_skills.view, user_skills.receipts)
    changes = user_skills.changes
    changes.on_live_set_change(PromptsListChanged())  # live user skills are prompts too
    changes.on_description_change(PromptsListChanged())  # a prompt shows its description
    server: Server[Any] = Server(
        "kite-skills",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=handlers.connection,
        on_subscribe_resource=handlers.subscribe,
        on_unsubscribe_resource=handlers.unsubscribe,
        on_subscriptions_listen=changes.listen,
        on_list_tools=handlers.list_tools,
        on_list_resources=handlers.list_resources,
        on_read_resource=handlers.read_resource,
        on_list_resource_templates=handlers.list_resource_templates,
        on_get_prompt=prompts.get_prompt,
    )
    serve_kept(server, "tools/call", types.CallToolRequestParams, handlers.call_tool)
    # Declares the logging capability (the SDK's on_set_logging_level= warns on every start:
    # tests/test_sdk_faults.py::test_on_set_logging_level_warns_at_every_start).
    server.add_request_handler(
        "logging/setLevel", types.SetLevelRequestParams, handlers.set_log_level
    )
    # prompts.py answers prompts/list with a plain dict (its own kept wire form) for now.
    server.add_request_handler("prompts/list", types.PaginatedRequestParams, prompts.list_prompts)
    SkillsExtension(catalog).serve(server)
    server.middleware += [
        client_logs,  # outermost: it sends what the others log
        internal_errors("internal error (see the server log)"),
        SessionRules(server),
        prompts.remembered,  # holds legacy_cache_fields' answer
        legacy_cache_fields,
        legacy_initialize_extensions,  # innermost
    ]
    return server


def serve_stdio(db_path: Path, environ: Mapping[str, str] = os.environ) -> int:
    """Serve MCP on stdin/stdout until the client goes away: 0 on a normal end, 130 after
    Ctrl-C, 1 when the catalog is broken. A store that cannot be opened is no reason to stop:
    the catalog is served and the user-skill tools say what is wrong."""
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.WARNING)  # kite-skills' loggers pass every level: client_log.serving
    logging.basicConfig(level=logging.WARNING, format="kite-skills: %(message)s", handlers=[stderr])
    logging.getLogger("mcp.server.runner").addFilter(_quiet_drops)
    try:
        return serve_wire(db_path, environ)
    except KeyboardInterrupt:
        return 130


def _quiet_drops(record: logging.LogRecord) -> bool:
    """Not logged: a notification the SDK drops for malformed params (``notifications/progress``
    with an object as its token). It gets no answer, as JSON-RPC wants, and no stderr line
    either: a client could fill the log with them (the SDK logs each one:
    tests/test_sdk_faults.py::test_each_malformed_notification_is_logged)."""
    return not str(record.msg).startswith("dropped ")


def serve_wire(
    db_path: Path,
    environ: Mapping[str, str],
    *,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
) -> int:
    """What :func:`serve_stdio` does once logging is set up: load the catalog, open the store,
    read ``EXCLUDED_TOOLS`` and serve until the client goes away (0; 130 after SIGINT; 1 when
    the catalog is broken). ``stdin_fd``/``stdout_fd`` name other pipes than stdin and stdout:
    the tests serve in process that way (tests/server/harness.py), with no build."""
    try:
        loaded = catalog.load()
    except KiteError as exc:
        print(f"kite-skills: cannot start: {exc}", file=sys.stderr)  # noqa: T201
        return 1
    try:
        view: AgentView | None = AgentView.open(db_path, command=invocation.current().command)
    except KiteError as exc:
        view = None
        user_skills = UserSkills.without_store(str(exc))
        log.warning(
            "the skill store is unavailable, serving the catalog only: %s",
            one_line(str(exc)),
        )
    else:
        user_skills = UserSkills(view)
    names = all_tools(loaded, user_skills).names()
    excluded, unknown = excluded_tools(environ.get("EXCLUDED_TOOLS"), names)
    if unknown:
        log.warning(
            "EXCLUDED_TOOLS names no tool here: %s (known: %s)",
            ", ".join(unknown),
            ", ".join(names),
        )
    if os.isatty(stdin_fd) if stdin_fd is not None else sys.stdin.isatty():
        print(  # noqa: T201
            f"kite-skills: serving MCP on stdio for an MCP client (user skills in {db_path}); "
            f"run '{invocation.current().run('--help')}' for the commands a person uses",
            file=sys.stderr,
        )
    else:
        print(f"kite-skills: user skills in {db_path}", file=sys.stderr)  # noqa: T201
    server = build_server(loaded, user_skills, excluded)
    options = server.create_initialization_options(
        NotificationOptions(resources_changed=True, prompts_changed=True)
    )
    try:
        with client_log.serving():
            interrupted = anyio.run(
                functools.partial(stdio.serve, stdin_fd=stdin_fd, stdout_fd=stdout_fd),
                server,
                options,
            )
    finally:
        user_skills.receipts.close()
        if view is not None:
            view.close()
    return 130 if interrupted else 0
