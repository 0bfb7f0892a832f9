"""The scripted agents' procedures, one per recipe, shared by the in-process rehearsals, the
HTTP one and the ones that read their recipe through the built zipapp. Each line of decision
logic cites the recipe text it implements (:func:`agent.step` / :func:`agent.part`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .agent import Agent, Recipe, part, step

TERMINAL = ("COMPLETE", "CANCELLED", "REJECTED")


def when(stamp: str) -> datetime:
    """The handlers' Go timestamps ("2026-12-02T11:29:40+05:30")."""
    return datetime.fromisoformat(stamp)


# ------------------------------------------------------------------ orders/reconcile.md


@dataclass(frozen=True)
class Attempt:
    """A write the agent made whose answer never came (a timeout)."""

    tag: str
    exchange: str
    tradingsymbol: str
    transaction_type: str
    quantity: int
    sent_at: datetime


@dataclass(frozen=True)
class Reconciled:
    order: dict[str, Any]
    history: list[str]
    trades: list[dict[str, Any]]
    average: float
    lines: list[str]
    unreconciled: list[str]


def reconcile(agent: Agent, r: Recipe, attempt: Attempt, as_of: str) -> list[Reconciled]:
    """Follow /orders/reconcile after an ambiguous failure of ``attempt``."""
    s1 = step(r, 1, "`orders` mode `list` with `from` 0 and `limit` 50; page until")
    rows = agent.page(s1, "orders", "list", limit=50)

    s2 = step(r, 2, "After an ambiguous failure, match")
    window = timedelta(minutes=2)
    matches = [
        o
        for o in rows
        if o["tag"] == attempt.tag
        and o["tradingsymbol"] == attempt.tradingsymbol
        and o["exchange"] == attempt.exchange
        and o["transaction_type"] == attempt.transaction_type
        and o["quantity"] == attempt.quantity
        and abs(when(o["order_timestamp"]) - attempt.sent_at) <= window
    ]
    agent.decide(s2, f"{len(matches)} match(es) for tag {attempt.tag}")
    duplicate = step(r, 2, "More than one match means a possible duplicate: report all of them")
    unreconciled: list[str] = []
    if len(matches) > 1:
        unreconciled.append("possible duplicate: " + ", ".join(o["order_id"] for o in matches))
        agent.decide(duplicate, "reported every match")

    out = []
    for order in matches:
        s3 = step(r, 3, "Terminal: `COMPLETE`, `CANCELLED`, `REJECTED`.")
        terminal = order["status"] in TERMINAL
        agent.decide(s3, f"{order['status']} is {'terminal' if terminal else 'not terminal'}")
        history: list[str] = []
        s4 = step(r, 4, "read `orders` mode `history` with `order_id`. The last row is the current")
        if not terminal or order["modified"] or order["status"] == "REJECTED":
            rows4 = agent.call(s4, "orders", "history", order_id=order["order_id"])
            history = [h["status"] for h in rows4]
        trades: list[dict[str, Any]] = []
        s5 = step(
            r, 5, "For every order with `filled_quantity` above 0, read `orders` mode `trades`"
        )
        if order["filled_quantity"] > 0:
            trades = agent.call(s5, "orders", "trades", order_id=order["order_id"])
        s6 = part(r, "Partial fills", "Verify `average_price` as Σ(trade `quantity` × trade")
        traded = sum(t["quantity"] for t in trades)
        average = (
            round(sum(t["quantity"] * t["average_price"] for t in trades) / traded, 2)
            if traded
            else 0.0
        )
        if traded != order["filled_quantity"]:
            unreconciled.append(f"trades {traded} != filled {order['filled_quantity']}")
        working = part(
            r, "Partial fills", "`filled_quantity + pending_quantity + cancelled_quantity"
        )
        sums = order["filled_quantity"] + order["pending_quantity"] + order["cancelled_quantity"]
        if not terminal and sums != order["quantity"]:
            unreconciled.append(f"quantities do not add up for {order['order_id']}")
        agent.decide(s6, f"average {average} from {len(trades)} trade(s)")
        agent.decide(working, f"{sums} = {order['quantity']}")
        s8 = step(r, 8, "Report each order with the template below")
        matches_avg = "matches" if abs(average - order["average_price"]) < 0.005 else "MISMATCH"
        lines = [
            f"Order {order['order_id']} {order['transaction_type']} {order['tradingsymbol']} "
            f"{order['exchange']} {order['product']} {order['order_type']} "
            f"{order['price']:.2f}, qty {order['quantity']}, tag {order['tag']}",
            f"Status {order['status']} (as of {as_of} IST): filled {order['filled_quantity']}, "
            f"pending {order['pending_quantity']}, cancelled {order['cancelled_quantity']} "
            f"({order['filled_quantity']}+{order['cancelled_quantity']}+"
            f"{order['pending_quantity']} = {order['quantity']})",
            f"Trades: {len(trades)} ({traded} shares), average {average:.2f}; order "
            f"average_price {order['average_price']:.2f} - {matches_avg}",
            "History: " + " -> ".join(history),
            "Unreconciled: " + ("; ".join(unreconciled) or "none"),
        ]
        agent.decide(s8, "reported with the template")
        out.append(Reconciled(order, history, trades, average, lines, unreconciled))
    return out
