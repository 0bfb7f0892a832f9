"""Connect to the upstream, then serve the guard on stdio until the client goes."""

from __future__ import annotations

from pathlib import Path

import anyio

from ..display import clipped, error_line
from ..errors import KiteError
from ..mcpkit import stdio
from ..mcpkit.relay import Relay
from .journal import Journal
from .server import Guard, build_server
from .upstream import Upstream, all_tools, era_of, open_upstream, upstream_pipes


class UpstreamUnreachable(KiteError):
    """The upstream could not be started, reached or listed before serving."""


def _cause(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (anyio's task groups wrap the transport's)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def serve(upstream: Upstream, limits_path: Path, journal: Journal, timeout: float) -> bool:
    """True when stopped by SIGINT. A stdio upstream (POSIX) is connected in the client's era,
    read from the client's first line, so that reads take the relay (docs/guard.md)."""
    listed = False
    pipes = upstream_pipes(upstream)
    prelude = b""
    try:
        if pipes is not None:
            pipes.start()
            try:
                prelude = await stdio.first_line()
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await pipes.stop_unused()
                raise
        async with open_upstream(upstream, timeout, pipes, era_of(prelude)) as client:
            tools = await all_tools(client)
            listed = True
            guard = Guard(client, tools, limits_path, journal, timeout=timeout)
            server = build_server(guard, client.instructions)
            relay = None
            if pipes is not None:
                relay = Relay(
                    pipes,
                    client.protocol_version,
                    upstream_params=guard.relayed,
                    timed_out=guard.timed_out,
                    timeout=timeout,
                    server_info=server.server_info_stamp,
                )
            options = server.create_initialization_options()
            return await stdio.serve(server, options, prelude=prelude, relay=relay)
    except Exception as exc:
        if listed:
            raise
        said = error_line(_cause(exc))
        raise UpstreamUnreachable(
            f"cannot reach the Kite MCP server {upstream.describe()}: {clipped(said, 300)} — "
            "check the URL or command (and with --bearer-env, the token), then start again"
        ) from exc
