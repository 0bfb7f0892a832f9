"""The guard's MCP server: the upstream's tools, exactly as it lists them; reads forwarded as
they are; every write judged first (:mod:`kite_skills.guard.judge`) and journalled.

Asking the person: on a handshake-era connection the guard sends ``elicitation/create`` in
the middle of the call; on a 2026-07-28 connection it answers ``input_required`` with the
question, and the client's retry carries the answer and the sealed ``requestState`` (bound to
this call's tool and arguments). Where the client declares no elicitation, it refuses.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import anyio
from mcp import Client, types
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from .. import __version__
from ..display import clipped
from ..mcpkit import (
    HANDSHAKE,
    Context,
    HandshakeState,
    SessionRules,
    handshake_of,
    internal_errors,
)
from . import judge, limits, writes
from .account import AccountReader
from .journal import Journal, entries
from .writes import Write

QUESTION: Final = "confirm"  # the input request's key, and the form's one field
FORM: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        QUESTION: {
            "type": "boolean",
            "title": "Place it",
            "description": "Yes sends this write to Kite; no sends nothing.",
        }
    },
    "required": [QUESTION],
}
INTERNAL: Final = "internal error in kite-skills guard (see its stderr)"
HISTORY: Final = timedelta(hours=1)  # writes kept for the rate and duplicate limits


def digest(name: str, arguments: dict[str, Any]) -> str:
    text = json.dumps([name, arguments], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Guard:
    """One upstream, the person's limits file and the journal."""

    def __init__(
        self,
        upstream: Client,
        tools: list[types.Tool],
        limits_path: Path,
        journal: Journal,
        *,
        timeout: float,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.upstream = upstream
        self.tools = tools
        self.limits_path = limits_path
        self.journal = journal
        self.timeout = timeout
        self.now = now
        self.names = {t.name for t in tools}
        # The _meta the SDK's client stamps on each request of its era (none on the handshake
        # era): the same on every call, so the relay reads it once (``session._stamp``, the
        # SDK's own, is the one source).
        probe: dict[str, Any] = {"method": "tools/call", "params": {}}
        upstream.session._stamp(probe, {})
        self.stamp: dict[str, Any] | None = probe["params"].get("_meta")
        self.reader = AccountReader(self._read_call, self.names, timeout)
        self.sent: list[judge.Sent] = self._sent_before()

    def _sent_before(self) -> list[judge.Sent]:
        """The writes this journal let through in the last hour (another guard process for
        the same account counts: they share the journal)."""
        since = self.now() - HISTORY
        out = []
        for entry in entries(self.journal.path):
            if entry.get("decision") not in ("allow", "asked-accepted") or "write" not in entry:
                continue
            try:
                at = datetime.fromisoformat(str(entry["at"]))
                write = Write(**entry["write"])
            except (TypeError, ValueError):
                continue
            if at >= since:
                out.append(judge.Sent(at, write))
        return out

    async def _read_call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        result = await self.upstream.call_tool(name, arguments)
        return _text(result), bool(result.is_error)

    async def forward(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        try:
            with anyio.fail_after(self.timeout):
                return await self.upstream.call_tool(name, arguments)
        except TimeoutError:
            return self.timed_out(name)

    def timed_out(self, name: str) -> types.CallToolResult:
        return _error(
            f"kite-skills guard: the Kite MCP server did not answer {name} within "
            f"{self.timeout:g} s. If it was a write it may still have gone through: read "
            "the order book before any retry."
        )

    def relayed(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """The fast path's choice (:mod:`kite_skills.mcpkit.relay`): a read of a listed tool
        goes upstream as the guard's SDK client would send it (its name and arguments, with
        that client's ``_meta`` stamp), never built as models; anything else (a write, an
        unknown tool, odd params) goes the SDK's way."""
        name = params.get("name")
        arguments = params.get("arguments")
        if not isinstance(name, str) or name not in self.names:
            return None
        if arguments is None and "arguments" in params:
            return None
        if arguments is not None and not isinstance(arguments, dict):
            return None
        if writes.classify(name, arguments or {}) is not None:
            return None
        sent: dict[str, Any] = {"name": name}
        if arguments is not None:
            sent["arguments"] = arguments
        if self.stamp:
            sent["_meta"] = self.stamp
        return sent

    async def call(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = params.arguments or {}
        write = writes.classify(params.name, arguments)
        if write is None:
            return await self.forward(params.name, params.arguments)
        now = self.now()
        can_ask = _can_ask(ctx)
        try:
            person = limits.load(self.limits_path)
        except limits.LimitsError as exc:
            verdict = judge.Verdict(write, (), f"the limits file cannot be read: {exc}", can_ask)
            return self._refuse(verdict, arguments, now)
        wanted = judge.needs(person, write)
        account = await self.reader.read(wanted, write) if wanted else judge.Account()
        verdict = judge.judge(person, write, account, self.sent, now, can_ask=can_ask)
        decision = verdict.decision
        if decision == "refuse":
            return self._refuse(verdict, arguments, now)
        if decision == "allow":
            return await self._send(params, verdict, arguments, now, "allow")
        asked = {f.rule for f in verdict.findings}
        answer = _answer(params, digest(params.name, arguments), asked)
        if answer is None and _modern(ctx):
            state = json.dumps({"call": digest(params.name, arguments), "asked": sorted(asked)})
            question = types.ElicitRequest(
                params=types.ElicitRequestFormParams(
                    message=verdict.explain(), requested_schema=FORM
                )
            )
            return types.InputRequiredResult(
                input_requests={QUESTION: question}, request_state=state
            )
        if answer is None:
            reply = await ctx.session.elicit_form(
                verdict.explain(), FORM, related_request_id=ctx.request_id
            )
            answer = _said(reply)
        if answer == "accepted":
            return await self._send(params, verdict, arguments, now, "asked-accepted")
        self._record(verdict, arguments, now, f"asked-{answer}", None)
        return _error(
            f"The person {answer} it: {verdict.explain()} Nothing was sent "
            f"[{', '.join(sorted(asked))}]."
        )

    async def _send(
        self,
        params: types.CallToolRequestParams,
        verdict: judge.Verdict,
        arguments: dict[str, Any],
        now: datetime,
        decision: str,
    ) -> types.CallToolResult:
        result = await self.forward(params.name, params.arguments)
        self.reader.forget_account()
        self.sent = [s for s in self.sent if now - s.at < HISTORY]
        self.sent.append(judge.Sent(now, verdict.write))
        upstream = "error: " + clipped(_text(result), 300) if result.is_error else "ok"
        self._record(verdict, arguments, now, decision, upstream)
        return result

    def _refuse(
        self, verdict: judge.Verdict, arguments: dict[str, Any], now: datetime
    ) -> types.CallToolResult:
        decision = "fail-closed" if verdict.cannot_judge is not None else "refuse"
        self._record(verdict, arguments, now, decision, None)
        return _error(verdict.explain())

    def _record(
        self,
        verdict: judge.Verdict,
        arguments: dict[str, Any],
        now: datetime,
        decision: str,
        upstream: str | None,
    ) -> None:
        self.journal.write(
            {
                "at": now.isoformat(),
                "tool": verdict.write.tool,
                "action": verdict.write.action,
                "arguments": arguments,
                "write": asdict(verdict.write),
                "decision": decision,
                "limits": [f.rule for f in verdict.findings],
                "numbers": {f.rule: f.numbers for f in verdict.findings},
                "message": verdict.explain() if decision != "allow" else None,
                "upstream": upstream,
            }
        )


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _modern(ctx: Context) -> bool:
    """A 2026-07-28 connection: no ``initialize`` was answered on it (the kit's handshake
    state), so there is no back channel for a question in the middle of a call."""
    state = handshake_of(ctx)
    return state is None or not state.initialized


def _can_ask(ctx: Context) -> bool:
    caps = ctx.session.client_capabilities
    return caps is not None and caps.elicitation is not None


def _said(reply: types.ElicitResult) -> str:
    """accepted (the form's box ticked), declined (no, or the box left unticked), cancelled."""
    if reply.action == "accept":
        return "accepted" if (reply.content or {}).get(QUESTION) is True else "declined"
    return "declined" if reply.action == "decline" else "cancelled"


def _answer(params: types.CallToolRequestParams, call: str, asked: set[str]) -> str | None:
    """The person's answer carried by a 2026-07-28 retry of this very call, for these limits
    (None: no answer yet, or one for another call or other limits: ask again)."""
    if not params.request_state or not params.input_responses:
        return None
    try:
        state = json.loads(params.request_state)
    except ValueError:
        return None
    if not isinstance(state, dict) or state.get("call") != call:
        return None
    if not asked <= set(state.get("asked") or ()):
        return None
    reply = params.input_responses.get(QUESTION)
    if reply is None:
        return None
    try:
        return _said(types.ElicitResult.model_validate(reply, from_attributes=True))
    except ValueError:
        return None


def build_server(guard: Guard, instructions: str | None) -> Server[Any]:
    listing = types.ListToolsResult(tools=guard.tools)
    names = {t.name for t in guard.tools}

    async def list_tools(ctx: Context, params: Any) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name not in names:
            raise MCPError(
                INVALID_PARAMS,
                f'unknown tool "{clipped(params.name, 64)}"',
                {"name": clipped(params.name, 64)},
            )
        return await guard.call(ctx, params)

    @asynccontextmanager
    async def per_connection(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        yield {HANDSHAKE: HandshakeState()}

    server: Server[Any] = Server(
        "kite-skills-guard",
        version=__version__,
        instructions=instructions,
        lifespan=per_connection,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(internal_errors(INTERNAL))
    server.middleware.append(SessionRules(server))
    server.middleware.append(
        RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=server.name)
    )
    return server
