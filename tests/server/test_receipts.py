"""Read receipts per connection over the in-process stdio wire (issue 38): a 2026-07-28
request names its client itself, so one connection inventing names could push every other
client's receipt of an item out. A connection's receipts are kept under at most
MAX_CLIENTS_PER_CONNECTION names, the first it used; its reads are served as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kite_skills.store import Store, human
from kite_skills.store.receipts import MAX_CLIENTS_PER_CONNECTION, MAX_CLIENTS_PER_ITEM

from .harness import MODERN, RawPeer, Target

NAME = "compare-funds"
URI = f"user-skill://{NAME}"


def read_as(peer: RawPeer, client: str, request_id: int) -> dict[str, Any]:
    """``resources/read`` of the live skill, by a 2026-07-28 request naming ``client``."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1.0"},
    }
    params = {"uri": URI, "_meta": meta}
    peer.send({"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": params})
    reply = peer.receive()
    assert reply.get("id") == request_id and "result" in reply, reply
    return reply


def test_one_connection_inventing_names_cannot_push_another_clients_receipt_out(
    target: Target, shiv_root: Path, db: Path
) -> None:
    with Store.open(db) as store:
        human.import_skills(store, [(NAME, "How I compare", "# Compare\n")], via="cli", who="p")
    real = RawPeer(target, shiv_root, db)
    read_as(real, "claude-code", 1)
    assert real.close()[0] == 0  # its receipt is written as the server stops
    hostile = RawPeer(target, shiv_root, db)
    invented = [f"invented {i}" for i in range(2 * MAX_CLIENTS_PER_ITEM)]
    for number, client in enumerate(invented, 1):
        read_as(hostile, client, number)  # every read is served
    read_as(hostile, invented[0], len(invented) + 1)  # a name it used before still counts
    code, stderr = hostile.close()
    assert code == 0, stderr
    with Store.open(db) as store:
        clients = {read.client for read in store.reads("skill", NAME)}
    kept = {f"{client} 1.0" for client in invented[:MAX_CLIENTS_PER_CONNECTION]}
    assert clients == {"claude-code 1.0", *kept}  # exactly the first names; the next is not
    assert stderr.count("read receipts under 'invented 3 1.0' are not recorded: this ") == 1
    assert stderr.count("read receipts under") == 1, stderr  # one line, not one per read
