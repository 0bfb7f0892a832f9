"""The main server's protocol glue over the kit: this connection's legacy peer (its
subscriptions). The session rules and the error middleware are the kit's
(:mod:`kite_skills.mcpkit.session`).

The other fix-ups the SDK forces live with what they fix: the Skills extension's capability in
a legacy ``initialize`` (:func:`.skills_extension.legacy_initialize_extensions`) and the
prompts listing's cache fields (:func:`.prompts.legacy_cache_fields`).
"""

from __future__ import annotations

from ..mcpkit import Context
from .changes import PEER, LegacyPeer


def peer_of(ctx: Context) -> LegacyPeer | None:
    """This connection's legacy peer; None when served without the server's lifespan."""
    state = ctx.lifespan_context
    peer = state.get(PEER) if isinstance(state, dict) else None
    return peer if isinstance(peer, LegacyPeer) else None
