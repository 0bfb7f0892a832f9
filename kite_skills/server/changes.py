"""Change detection and delivery for the user's live skills: what changed, and one path that
tells every session in both protocol eras.

Detection belongs to the store library (:class:`kite_skills.store.LiveSkills`, the one judge
of whether the live skills changed); this module decides only when to ask it and what to tell.
A poller asks :meth:`LiveSkills.poll <kite_skills.store.LiveSkills.poll>` every
:data:`POLL_SECONDS`, which looks only when another process (the dashboard, the CLI, another
server) committed to the file; the writing tools call :meth:`ChangeFeed.check` after their
own writes. A look compares the live skills' names and ``updated_at`` with the previous one
and reads no text, so one unreadable row cannot blind it; a store that fails anyway is logged
once (one line), the server keeps serving, and the poller retries with backoff until the
store answers again.

Delivery: :meth:`ChangeFeed.publish` is the only way out. It hands every event to the SDK's
subscription bus (2026-07-28 ``subscriptions/listen`` streams filter it per stream) and to
each legacy session (one per served connection, whatever the number of
``resources/subscribe`` calls; ``resources/updated`` only for the URIs it subscribed).

Anything else whose list follows the set of live skills is announced by registering its
event once: ``feed.on_live_set_change(PromptsListChanged())``; a list that also shows each
live skill's description (prompts do) registers with ``feed.on_description_change(…)`` too,
and is announced when a live skill's description changes (an accepted revision, an edit).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
from mcp import types
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types import LoggingLevel

from ..display import clipped, error_line
from ..mcpkit import Context, HandshakeState
from ..store import AgentView, LiveChange, LiveSkills
from . import client_log, store_thread

log = logging.getLogger("kite_skills.server")

URI_SCHEME: Final = "user-skill://"
POLL_SECONDS: Final = 0.5  # how often another process's writes are looked for
MAX_BACKOFF_SECONDS: Final = 30.0  # the longest wait between retries of a failing store
MAX_LISTEN_STREAMS: Final = 1024  # open subscriptions/listen streams per served connection
PEER: Final = "kite_skills.legacy_peer"  # the key of this connection's LegacyPeer in the lifespan


def uri_of(name: str) -> str:
    return URI_SCHEME + name


class LegacyPeer:
    """The one legacy (handshake-era) session of a served connection, the URIs it
    subscribed to and the log level it set. A connection that never sends ``initialize``
    (2026-07-28) has no session: the kit's session rules set it in ``handshake``
    (:class:`kite_skills.mcpkit.HandshakeState`)."""

    def __init__(self, handshake: HandshakeState) -> None:
        self.handshake = handshake
        self.uris: set[str] = set()
        self.log_level: LoggingLevel | None = None  # logging/setLevel's; None: no log lines

    @property
    def session(self) -> ServerSession | None:
        return self.handshake.session

    def subscribe(self, uri: str) -> None:
        self.uris.add(uri)

    def unsubscribe(self, uri: str) -> None:
        self.uris.discard(uri)

    async def deliver(self, event: ServerEvent) -> None:
        if self.session is None:
            return
        notification = _legacy_notification(event, self.uris)
        if notification is None:
            return
        await self._send(notification)

    async def log(self, lines: list[client_log.Line]) -> None:
        """Send the lines at or above the session's log level (the poller's)."""
        if self.session is None:
            return
        for notification in client_log.notifications(lines, self.log_level):
            await self._send(notification)

    async def _send(self, notification: Any) -> None:
        assert self.session is not None
        try:
            await self.session.send_notification(notification)
        except Exception:  # a client that went away must not stop the delivery to others
            log.debug("notification not delivered", exc_info=True)


def _legacy_notification(event: ServerEvent, uris: set[str]) -> Any:
    if isinstance(event, ResourceUpdated):
        if event.uri not in uris:
            return None
        return types.ResourceUpdatedNotification(
            params=types.ResourceUpdatedNotificationParams(uri=event.uri)
        )
    if isinstance(event, ResourcesListChanged):
        return types.ResourceListChangedNotification()
    if isinstance(event, PromptsListChanged):
        return types.PromptListChangedNotification()
    if isinstance(event, ToolsListChanged):
        return types.ToolListChangedNotification()
    return None


class BoundedListen:
    """``subscriptions/listen`` with its bound answered as a request error: the SDK's handler
    refuses a stream past its bound with ``-32603`` internal error, which tells the client
    nothing it can act on. Past :data:`MAX_LISTEN_STREAMS` open streams this answers
    ``-32602`` naming the limit (issue 38). It counts a stream from before the SDK's handler
    takes it until after it let it go, so the SDK never sees more than this lets through.
    (tests/test_sdk_faults.py::test_a_listen_stream_past_the_bound_is_an_internal_error)"""

    def __init__(self, handler: ListenHandler) -> None:
        self._handler = handler
        self.open = 0

    async def __call__(
        self, ctx: Context, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        if self.open >= MAX_LISTEN_STREAMS:
            raise MCPError(
                types.INVALID_PARAMS,
                f"too many open subscriptions/listen streams: the limit is "
                f"{MAX_LISTEN_STREAMS} per connection; end one (cancel its request) before "
                "opening another",
                {"limit": MAX_LISTEN_STREAMS},
            )
        self.open += 1
        try:
            return await self._handler(ctx, params)
        finally:
            self.open -= 1


class ChangeFeed:
    """Tells every session what changed in one store's live skills (``None``: no store)."""

    def __init__(self, view: AgentView | None) -> None:
        self._live: LiveSkills | None = view.live if view is not None else None
        self.bus = InMemorySubscriptionBus()
        # serves 2026-07-28 subscriptions/listen
        self.listen = BoundedListen(ListenHandler(self.bus, max_subscriptions=MAX_LISTEN_STREAMS))
        self._on_live_set_change: list[ServerEvent] = [ResourcesListChanged()]
        self._peers: list[LegacyPeer] = []
        self._on_description_change: list[ServerEvent] = []
        self._failing = False
        # The poller and the writing tools both check; one at a time, so the announcements
        # go out in the order of the looks that found them.
        self._checking = anyio.Lock()

    def on_live_set_change(self, event: ServerEvent) -> None:
        """Announce ``event`` too whenever the set of live skills changes."""
        if event not in self._on_live_set_change:
            self._on_live_set_change.append(event)

    def on_description_change(self, event: ServerEvent) -> None:
        """Announce ``event`` too whenever a live skill's description changes."""
        if event not in self._on_description_change:
            self._on_description_change.append(event)

    async def publish(self, event: ServerEvent) -> None:
        """The one way out: 2026-07-28 listen streams and every legacy session."""
        await self.bus.publish(event)
        for peer in list(self._peers):
            await peer.deliver(event)

    @asynccontextmanager
    async def serving(self, handshake: HandshakeState) -> AsyncIterator[LegacyPeer]:
        """For one served connection (the server's lifespan) and its ``handshake``: its
        LegacyPeer, and the poller while it is served."""
        peer = LegacyPeer(handshake)
        self._peers.append(peer)
        try:
            if self._live is None:
                yield peer
                return
            await self.check()  # the first reading, before the first request is served
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._poll, peer)
                yield peer
                tasks.cancel_scope.cancel()
        finally:
            self._peers.remove(peer)

    async def _poll(self, peer: LegacyPeer) -> None:
        """Look every POLL_SECONDS (backing off while the store fails); what a look logs
        goes to ``peer`` too, at its log level."""
        assert self._live is not None
        delay = POLL_SECONDS
        while True:
            await anyio.sleep(delay)
            with client_log.collecting() as lines:
                ok = await self._guarded(self._live.poll)
            await peer.log(lines)
            delay = POLL_SECONDS if ok else min(delay * 2, MAX_BACKOFF_SECONDS)

    async def check(self) -> bool:
        """Look for changes to the live skills and announce them; False (after one log line)
        when the store could not be read."""
        if self._live is None:
            return True
        return await self._guarded(self._live.look)

    async def _guarded(self, look: Callable[[], LiveChange | None]) -> bool:
        try:
            async with self._checking:
                change = await store_thread.run(look)
                if change is not None:
                    await self._announce(change)
        except Exception as exc:  # a broken store must never end the server
            if not self._failing:
                log.warning(
                    "cannot read the skill store to look for changes (%s); still serving, "
                    "and trying again with backoff",
                    clipped(error_line(exc), 300),
                )
            self._failing = True
            return False
        if self._failing:
            log.info("the skill store answers again; change notifications resume")
            self._failing = False
        return True

    async def _announce(self, change: LiveChange) -> None:
        if change.came_or_went:
            for event in self._on_live_set_change:
                await self.publish(event)
        for name in change.changed:
            await self.publish(ResourceUpdated(uri=uri_of(name)))
        # Descriptions last: the first check reads them all (about a second at 100,000 live
        # skills), and the announcements above must not wait for it (bench section 4). They
        # are read only when a listener is registered, and only when the versions moved.
        if not self._on_description_change or not change.moved:
            return
        assert self._live is not None
        live = self._live
        described = await store_thread.run(lambda: live.described(change))
        if described and not change.came_or_went:
            for event in self._on_description_change:
                await self.publish(event)
