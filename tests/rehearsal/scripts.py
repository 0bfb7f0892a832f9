"""The scripted agents' procedures, one per recipe, shared by the in-process rehearsals, the
HTTP one and the ones that read their recipe through the built zipapp. Each line of decision
logic cites the recipe text it implements (:func:`agent.step` / :func:`agent.part`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

from kite_skills.calc import calculate
from kite_skills.calc.orders import FAT_FINGER

from .agent import Agent, Recipe, Where, part, recipe, step

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
    candidates = [
        o
        for o in rows
        if o["tag"] == attempt.tag
        and o["tradingsymbol"] == attempt.tradingsymbol
        and o["exchange"] == attempt.exchange
        and o["transaction_type"] == attempt.transaction_type
        and o["quantity"] == attempt.quantity
    ]
    placed = step(r, 2, "the **first** row of `orders` mode\n   `history` with `order_id`")
    matches = []
    histories: dict[str, list[dict[str, Any]]] = {}
    for o in candidates:
        histories[o["order_id"]] = agent.call(placed, "orders", "history", order_id=o["order_id"])
        if abs(when(histories[o["order_id"]][0]["order_timestamp"]) - attempt.sent_at) <= window:
            matches.append(o)
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
            rows4 = histories[order["order_id"]]  # read in step 2, no newer state since
            agent.decide(s4, f"history of {order['order_id']} read in step 2")
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


def snap(price: float, tick: float, down: bool) -> float:
    """A price on the tick grid, rounded away from the side that would not fill."""
    steps = price / tick
    whole = int(steps) if down else -int(-steps)
    if abs(steps - round(steps)) < 1e-9:
        whole = round(steps)
    return round(whole * tick, 2)


def quote_of(agent: Agent, where: Any, key: str) -> dict[str, Any]:
    answer = agent.call(where, "market", "quote", instruments=[key])
    assert isinstance(answer, dict), answer
    return answer[key]


# ------------------------------------------------------------------ orders/modify-cancel.md


@dataclass(frozen=True)
class Modified:
    before: dict[str, Any]
    sent: dict[str, Any]
    summary: list[str]
    final: dict[str, Any]


def modify_to_limit(agent: Agent, r: Recipe, order_id: str, key: str, tick: float) -> Modified:
    """Follow /orders/modify-cancel to move an order to a LIMIT at the touch that can fill."""
    s1 = step(r, 1, "`orders` mode `history` with `order_id`, the order's own")
    before = agent.call(s1, "orders", "history", order_id=order_id)[-1]
    s2 = step(r, 2, "Only `OPEN`, `TRIGGER PENDING` and `AMO REQ RECEIVED` orders can usefully")
    assert before["status"] in ("OPEN", "TRIGGER PENDING", "AMO REQ RECEIVED"), before["status"]
    agent.decide(s2, f"{before['status']} can be changed")
    s3 = step(r, 3, "each modify request normally adds a `MODIFY VALIDATION PENDING` row")
    history = agent.call(s1, "orders", "history", order_id=order_id)
    count = sum(h["status"] == "MODIFY VALIDATION PENDING" for h in history)
    agent.decide(s3, f"{count} modifications so far")
    s4 = step(r, 4, "the new `quantity` is the **total** order quantity, not the remainder")
    quote = quote_of(agent, step(r, 4, "Take a fresh `market` mode `quote`"), key)
    selling = before["transaction_type"] == "SELL"
    touch = quote["depth"]["buy" if selling else "sell"][0]["price"]
    price = snap(touch, tick, down=selling)
    variety = before["variety"]
    if variety == "amo" and before["status"] != "AMO REQ RECEIVED":
        released = step(r, 7, "An\n   `amo` order with any later status has been released")
        agent.decide(released, "released to the exchange: modify as regular")
        variety = "regular"
    new = {
        "order_id": order_id,
        "variety": variety,
        "order_type": "LIMIT",
        "quantity": before["quantity"],
        "price": price,
        "trigger_price": 0,
        "validity": before["validity"],
        "disclosed_quantity": before["disclosed_quantity"],
    }
    assert new["quantity"] >= before["filled_quantity"]
    agent.decide(s4, f"quantity {new['quantity']} (total), LIMIT {price} at the touch")
    s5 = step(r, 5, "a before/after line for every field, the fills so far")
    summary = [
        f"Modify {order_id} {before['transaction_type']} {before['tradingsymbol']}",
        f"order_type {before['order_type']} -> LIMIT",
        f"quantity {before['quantity']} -> {new['quantity']} (total; "
        f"{before['filled_quantity']} filled, {before['pending_quantity']} pending)",
        f"price {before['price']} -> {price} (best {'bid' if selling else 'ask'} {touch})",
        f"modifications so far: {count}",
    ]
    agent.decide(s5, "presented the summary")
    agent.approve(
        part(r, "Steps", "**Stop for approval.** Do not go on until the user has approved")
    )
    s6 = step(r, 6, "read `orders` mode `history` again and take a new `market` mode `quote`")
    again = agent.call(s6, "orders", "history", order_id=order_id)[-1]
    quote_of(agent, s6, key)
    assert (again["status"], again["filled_quantity"]) == (
        before["status"],
        before["filled_quantity"],
    ), "the order changed: a new summary and approval are needed"
    s7 = step(r, 7, "all passed explicitly")
    answer = agent.call(s7, "orders", "modify", **new)
    assert isinstance(answer, dict), answer
    s8 = step(r, 8, "read `orders` mode `history` until the last")
    final: dict[str, Any] = {}
    for _ in range(5):
        agent.wait(seconds=5) if agent.clock else None
        final = agent.call(s8, "orders", "history", order_id=order_id)[-1]
        if final["status"] not in ("MODIFY VALIDATION PENDING", "MODIFY PENDING", "MODIFIED"):
            break
    return Modified(before, {"mode": "modify", **new}, summary, final)


# ------------------------------------------------------------------ orders/exit.md


@dataclass(frozen=True)
class ExitRemainder:
    sellable: int
    remainder: dict[str, Any]
    modified: Modified
    net_after: int


def exit_remainder(agent: Agent, r: Recipe, mc: Recipe, key: str, tick: float) -> ExitRemainder:
    """/orders/exit for a holding whose protected stop exit left a remainder OPEN."""
    symbol = key.split(":")[1]
    s2 = step(r, 2, "For a holding, read `portfolio` mode `holdings` (paged)")
    holding = next(
        h for h in agent.page(s2, "portfolio", "holdings") if h["tradingsymbol"] == symbol
    )
    agent.call(
        step(r, 2, "Read `portfolio` mode `profile` `meta.demat_consent`"), "portfolio", "profile"
    )
    s5 = step(r, 5, "Flag an open exit order on the same symbol and side")
    orders = agent.page(s5, "orders", "list")
    agent.page(s5, "orders", "all_trades")
    agent.page(step(r, 5, "active GTTs from `gtt` mode `list` on the symbol"), "gtt", "list")
    open_sells = [
        o
        for o in orders
        if o["tradingsymbol"] == symbol
        and o["transaction_type"] == "SELL"
        and o["status"] not in TERMINAL
    ]
    sellable = (
        holding["realised_quantity"]
        - holding["used_quantity"]
        - sum(o["pending_quantity"] for o in open_sells)
    )
    agent.decide(
        step(
            r,
            2,
            "`realised_quantity` less `used_quantity` and open SELL orders",
        ),
        f"{sellable} can be sold besides the open exit",
    )
    (remainder,) = open_sells
    agent.decide(s5, f"open exit {remainder['order_id']} flagged")
    never = part(r, "Partial fills", "Never place a second exit for the full quantity")
    agent.decide(never, "no new exit order; the remainder is changed instead")
    s10 = step(r, 10, "modify the remainder to a `LIMIT` that can fill")
    modified = modify_to_limit(agent, mc, remainder["order_id"], key, tick)
    agent.decide(s10, "modified the remainder through modify-cancel")
    after = step(r, 10, "re-read `portfolio` mode `positions`")
    rows = agent.page(after, "portfolio", "positions")
    # Day rows then Net rows, unlabelled (holdings/positions.md): the Net row is the second
    net = [p for p in rows if p["tradingsymbol"] == symbol and p["product"] == "CNC"][-1]
    return ExitRemainder(sellable, remainder, modified, net["quantity"])


# ------------------------------------------------------------------ market-data/resolve.md


@dataclass(frozen=True)
class Resolved:
    row: dict[str, Any]
    quote: dict[str, Any]
    lines: list[str]


def resolve(agent: Agent, r: Recipe, exchange: str, symbol: str) -> Resolved:
    """/market-data/resolve for an exact EXCHANGE:SYMBOL, on any generation."""
    key = f"{exchange}:{symbol}"
    s1 = step(r, 1, "`market` mode `search` with `search_mode` `get_by_tradingsymbol`")
    if agent.generation == "legacy-oldest":
        oldest = part(r, "Check first", "keep only the row whose `id` equals `NSE:INFY`")
        first = agent.call(s1, "search_instruments", query=symbol, filter_on="id", limit=1)
        total = first["pagination"]["total"]
        agent.decide(
            part(r, "Check first", "pass a `limit` above `total`"), f"total {total}: fetch once"
        )
        rows = agent.call(s1, "search_instruments", query=symbol, filter_on="id", limit=total + 1)
        rows = rows["data"] if isinstance(rows, dict) else rows
        exact = [row for row in rows if row["id"] == key]
        agent.decide(oldest, f"{len(rows)} substring matches, {len(exact)} exact")
    else:
        found = agent.call(
            s1,
            "market",
            "search",
            search_mode="get_by_tradingsymbol",
            exchange=exchange,
            tradingsymbol=symbol,
            verbosity="full",
        )
        exact = found["data"] if isinstance(found, dict) else found
    s4 = step(r, 4, "Choose one row and confirm with the user when more than one fits")
    (row,) = exact
    assert row["active"], "inactive instrument"
    agent.decide(s4, f"one row, active, {row['instrument_type']}")
    s6 = step(r, 6, '`market` mode `quote` with `instruments` `["NSE:INFY"]` gives')
    quote = agent.call(s6, "market", "quote", instruments=[key])[key]
    s7 = step(r, 7, "the exact instrument, its identifiers and sizes, the price with its timestamp")
    lines = [
        f"Resolved: {key} ({row['instrument_type']}), token {row['instrument_token']}, "
        f"ISIN {row.get('isin', '')}, tick {row['tick_size']:g}, lot {row['lot_size']}, "
        f"{'active' if row['active'] else 'inactive'}",
        f"Quote {quote['last_price']:.2f}, last trade {quote['last_trade_time'][11:19]} IST",
    ]
    agent.decide(s7, "reported with the template")
    return Resolved(row, quote, lines)


# ------------------------------------------------------------------ triggers-and-alerts/gtt.md


@dataclass(frozen=True)
class GttPlaced:
    capacity: int
    definition: dict[str, Any]
    summary: list[str]
    answer: Any
    listed: list[dict[str, Any]]


def sell_gtt(
    agent: Agent, r: Recipe, resolve_recipe: Recipe, key: str, trigger: float, lost: bool = False
) -> GttPlaced:
    """/triggers-and-alerts/gtt: a single SELL GTT on held shares for "all of them"."""
    exchange, symbol = key.split(":")
    step(r, 1, "Resolve the instrument with `verbosity` `full`")
    row = resolve(agent, resolve_recipe, exchange, symbol).row
    tick = row["tick_size"]
    s2 = step(r, 2, "`market` mode `ltp` with `instruments` such as")
    ltp = agent.call(s2, "market", "ltp", instruments=[key])[key]["last_price"]
    s4 = step(r, 4, "decide per row whether `quantity` is `realised_quantity + t1_quantity`")
    holding = next(
        h for h in agent.page(s4, "portfolio", "holdings") if h["tradingsymbol"] == symbol
    )
    orders = agent.page(s4, "orders", "list")
    gtts = agent.page(step(r, 5, "read `gtt` mode `list`"), "gtt", "list")
    open_sells = sum(
        o["pending_quantity"]
        for o in orders
        if o["tradingsymbol"] == symbol
        and o["transaction_type"] == "SELL"
        and o["status"] not in TERMINAL
    )
    other_gtts = sum(
        leg["quantity"]
        for g in gtts
        if g["status"] == "active" and g["condition"]["tradingsymbol"] == symbol
        for leg in g["orders"][:1]
        if leg["transaction_type"] == "SELL"
    )
    capacity = holding["realised_quantity"] - holding["used_quantity"] - open_sells - other_gtts
    agent.decide(
        step(r, 4, "`realised_quantity` less `used_quantity`, less open SELL orders and other"),
        f"demat capacity {capacity} (holdings quantity {holding['quantity']}, "
        f"T+1 {holding['t1_quantity']})",
    )
    profile = agent.call(
        step(r, 4, "Read `portfolio` mode `profile` `meta.demat_consent`"), "portfolio", "profile"
    )
    consent = profile["meta"]["demat_consent"]
    tpin = consent != "physical" and holding["authorised_quantity"] < capacity
    s5 = step(r, 5, "flag any `active` GTT with the same symbol, side and triggers")
    same = [
        g
        for g in gtts
        if g["status"] == "active"
        and g["condition"]["tradingsymbol"] == symbol
        and abs(g["condition"]["trigger_values"][0] - trigger) <= 2 * tick
    ]
    assert not same, f"{s5}: a duplicate exists; ask before going on"
    s3 = step(r, 3, "So a SELL leg's limit rounds down")
    limit_price = snap(trigger * 0.999, tick, down=True)
    definition = {
        "exchange": exchange,
        "tradingsymbol": symbol,
        "transaction_type": "SELL",
        "product": "CNC",
        "trigger_type": "single",
        "trigger_value": trigger,
        "quantity": capacity,
        "limit_price": limit_price,
    }
    agent.decide(s3, f"limit {limit_price} below the trigger {trigger}")
    s6 = step(r, 6, "the LTP with its time and the distance to each")
    summary = [
        f"Place GTT SELL {symbol} ({exchange}, CNC) single: trigger {trigger:.2f}, "
        f"limit {limit_price:.2f}, qty {capacity}",
        f"LTP {ltp:.2f} ({(trigger - ltp) / ltp * 100:.2f}% to the trigger); expires in one year",
        f"Not included: {holding['t1_quantity']} T+1 shares (sellable only as BTST)",
    ]
    if tpin:
        summary.append("TPIN: a triggered sell is rejected unless authorised that day")
    agent.decide(s6, "presented the summary")
    agent.approve(
        part(r, "Steps", "**Stop for approval.** Do not go on until the user has approved")
    )
    s7 = step(r, 7, "take a new `market` mode `ltp` (it becomes the")
    fresh = agent.call(s7, "market", "ltp", instruments=[key])[key]["last_price"]
    again = agent.page(s7, "gtt", "list")
    assert len(again) == len(gtts) and abs(trigger - fresh) / fresh > 0.0025
    s8 = step(r, 8, "place, `single`: `gtt` mode `place` with `exchange`, `tradingsymbol`")
    answer = agent.call(s8, "gtt", "place", lost=lost, last_price=fresh, **definition)
    listed: list[dict[str, Any]] = []
    if lost:
        u = part(
            r,
            "Uncertainty",
            "read `gtt` mode `list`\n(paged) and look for one with the same symbol, side",
        )
        listed = agent.page(u, "gtt", "list")
        agent.decide(u, "looked for the GTT before any new attempt")
    else:
        s9 = step(r, 9, "read `gtt` mode `list` again and confirm the GTT's `status`")
        listed = agent.page(s9, "gtt", "list")
    return GttPlaced(capacity, {"last_price": fresh, **definition}, summary, answer, listed)


# ------------------------------------------------------------------ triggers-and-alerts/audit.md


def audit_gtts(agent: Agent, r: Recipe) -> list[str]:
    """/triggers-and-alerts/audit, the GTT half: flags and the report's GTT lines."""
    s1 = step(r, 1, "`gtt` mode `list` with `from` 0 and `limit` 100, paging until `has_more`")
    gtts = agent.page(s1, "gtt", "list", limit=100)
    s3 = step(r, 3, "`portfolio` mode `holdings` with `type` `full`")
    if agent.generation == "legacy-oldest":
        holdings = agent.page(s3, "get_holdings")
    else:
        holdings = agent.page(s3, "portfolio", "holdings", type="full")
    keys = sorted({f"{g['condition']['exchange']}:{g['condition']['tradingsymbol']}" for g in gtts})
    ltps = agent.call(
        step(r, 3, "a fresh `market` mode\n   `ltp`"), "market", "ltp", instruments=keys
    )
    profile = agent.call(step(r, 3, "`portfolio` mode `profile` for"), "portfolio", "profile")
    ddpi = profile["meta"]["demat_consent"] == "physical"
    s4 = step(r, 4, "SELL more than the demat quantity, or are for a symbol no longer held")
    tpin = step(r, 4, 'Flag it as "needs TPIN on the day" in the report')
    lines = []
    s5 = step(r, 5, "find the order whose `meta` carries the GTT id")
    triggered = [g for g in gtts if g["status"] == "triggered"]
    orders = agent.page(step(r, 5, "Read `orders` mode `list` (today only)"), "orders", "list")
    for g in gtts:
        c = g["condition"]
        if g in triggered:
            placed = [o for o in orders if (o.get("meta") or {}).get("gtt") == g["id"]]
            if not placed:
                none = step(r, 5, "triggered, no order found -> not executed")
                lines.append(
                    f"- {g['id']} {c['tradingsymbol']} {g['orders'][0]['transaction_type']}: "
                    f"triggered {g['updated_at'][:16].replace('T', ' ')}, no order found "
                    "-> not executed"
                )
                agent.decide(none, lines[-1])
            for order in placed:
                agent.call(s5, "orders", "trades", order_id=order["order_id"])
                lines.append(
                    f"- {g['id']} {c['tradingsymbol']}: triggered; order {order['order_id']} "
                    f"{order['status']}, filled {order['filled_quantity']}"
                )
                agent.decide(s5, lines[-1])
            continue
        if g["status"] != "active":
            continue
        key = f"{c['exchange']}:{c['tradingsymbol']}"
        leg = g["orders"][0]
        ltp = ltps[key]["last_price"]
        away = abs(c["trigger_values"][0] - ltp) / ltp * 100
        line = (
            f"- {g['id']} {c['tradingsymbol']} {leg['transaction_type']} {g['type']} @ "
            f"{c['trigger_values'][0]:,.2f}: active; LTP {ltp:,.2f} ({away:.1f}% away)"
        )
        held = next((h for h in holdings if h["tradingsymbol"] == c["tradingsymbol"]), None)
        if leg["transaction_type"] == "SELL":
            demat = 0 if held is None else held["realised_quantity"] - held["used_quantity"]
            if leg["quantity"] > demat:
                line += f"; holding {demat}, GTT {leg['quantity']} -> will fail"
                agent.decide(s4, line)
            authorised = 0 if held is None else held["authorised_quantity"]
            if not ddpi and authorised < leg["quantity"]:
                line += "; needs TPIN on the day"
                agent.decide(tpin, line)
        lines.append(line)
    return lines


def audit_alerts(agent: Agent, r: Recipe) -> list[str]:
    """/triggers-and-alerts/audit, the alerts half: the report's "Alerts:" line, then one line
    per alert the recipe flags (disabled, ATO, never fired for months)."""
    s2 = step(r, 2, "List every alert: `alerts` mode `get` with `uuids` `[]` (empty means all)")
    if agent.lacks(s2, "alerts", "get"):
        only = part(r, "Check first", "Older servers have no alerts tool; then audit GTTs only")
        line = "Alerts: not available on this server (no alerts tool); GTTs only"
        agent.decide(only, line)
        return [line]
    alerts = agent.call(s2, "alerts", "get", uuids=[])["alerts"] or []
    ato = [a for a in alerts if a["type"] == "ato" and a["status"] == "enabled"]
    keys = sorted({f"{a['lhs_exchange']}:{a['lhs_tradingsymbol']}" for a in ato})
    s3 = step(r, 3, "a fresh `market` mode\n   `ltp` for every GTT and alert symbol")
    ltps = agent.call(s3, "market", "ltp", instruments=keys) if keys else {}
    s7 = step(r, 7, "For alerts, flag: `disabled` ones with `disabled_reason`")
    s7_ato = step(
        r, 7, "every `ato` alert, which will\n   place orders when it fires (show its basket)"
    )
    s7_old = step(r, 7, "alerts with `alert_count` 0 that are months\n   old")
    explain = step(r, 2, "`alerts` mode `get` with `history` `true` and `uuids`\n   holding its id")
    lines = []
    for a in alerts:
        if a["status"] == "disabled":
            line = f"- {a['name']}: disabled ({a['disabled_reason'] or 'no reason given'})"
            if a["disabled_reason"] == "triggered":  # what did it do when it fired?
                found = agent.call(explain, "alerts", "get", uuids=[a["uuid"]], history=True)
                for fired in found.get("history") or []:
                    line += f"; fired {fired['created_at'][11:16]}"
                    for placed in fired.get("order_meta") or []:
                        line += f", order {placed['order_id']} {placed['status']}"
            lines.append(line)
            agent.decide(s7, line)
        elif a["type"] == "ato":
            key = f"{a['lhs_exchange']}:{a['lhs_tradingsymbol']}"
            ltp = ltps[key]["last_price"]
            items = ", ".join(
                f"{i['params']['transaction_type']} {i['params']['quantity']} {i['tradingsymbol']}"
                f" {i['params']['order_type']} {i['params']['price']:,.2f}"
                for i in a["basket"]["items"]
            )
            away = abs(a["rhs_constant"] - ltp) / ltp * 100
            lines.append(
                f"- {a['name']}: ATO, places {items} when {key} {a['operator']} "
                f"{a['rhs_constant']:,.2f}; LTP {ltp:,.2f} ({away:.1f}% away)"
            )
            agent.decide(s7_ato, lines[-1])
        created = when(a["created_at"])
        if a["alert_count"] == 0 and (agent.now - created).days > 90:
            lines.append(f"- {a['name']}: never fired since {created:%d %b %Y}")
            agent.decide(s7_old, lines[-1])
    s8 = step(r, 8, "200 alerts including disabled ones")
    enabled = sum(a["status"] == "enabled" for a in alerts)
    what = "; ".join(
        "1 ATO alert places "
        + ", ".join(
            f"{i['params']['transaction_type']} {i['params']['quantity']} {i['tradingsymbol']}"
            for i in a["basket"]["items"]
        )
        + " when fired"
        for a in ato
    )
    head = (
        f"Alerts: {len(alerts)} (enabled {enabled}, disabled {len(alerts) - enabled}); "
        f"{what or 'no enabled ATO alert'}; limit 200"
    )
    agent.decide(s8, head)
    return [head, *lines]


# ------------------------------------------------------------------ holdings/positions.md


@dataclass(frozen=True)
class Books:
    day: list[dict[str, Any]]
    net: list[dict[str, Any]]
    lines: list[str]
    total: float


def positions(agent: Agent, r: Recipe, as_of: str) -> Books:
    s1 = step(r, 1, "`portfolio` mode `positions` with `from` 0 and `limit` 100; page until")
    rows = agent.page(s1, "portfolio", "positions", limit=100)
    s3 = step(r, 3, "The first copy of a repeated key is\n   the **Day** row")
    seen: dict[tuple[str, str, str], int] = {}
    for row in rows:
        key = (row["exchange"], row["tradingsymbol"], row["product"])
        seen[key] = seen.get(key, 0) + 1
    day: list[dict[str, Any]] = []
    net: list[dict[str, Any]] = []
    count: dict[tuple[str, str, str], int] = {}
    for row in rows:
        key = (row["exchange"], row["tradingsymbol"], row["product"])
        count[key] = count.get(key, 0) + 1
        (day if seen[key] == 2 and count[key] == 1 else net).append(row)
    agent.decide(s3, f"{len(day)} Day rows, {len(net)} Net rows")
    wrong = step(r, 3, "a Day row with `overnight_quantity` above 0 means the split")
    assert not any(row["overnight_quantity"] > 0 for row in day), f"{wrong}: stop"
    s4 = step(r, 4, "Report from the Net book")
    s6 = step(r, 6, "Net rows with `quantity` 0 were closed today; list them")
    lines = [f"Positions as of {as_of} IST (market open), Net book"]
    for row in net:
        if row["quantity"]:
            lines.append(
                f"{row['tradingsymbol']} {row['exchange']} {row['product']} qty "
                f"{row['quantity']} avg {row['average_price']:,.2f} ltp "
                f"{row['last_price']:,.2f} pnl {row['pnl']:+,.2f}"
            )
    agent.decide(s4, "open Net rows reported")
    for row in net:
        if not row["quantity"]:
            lines.append(
                f"{row['tradingsymbol']} {row['exchange']} {row['product']} qty 0 "
                f"(closed today) realised {row['realised']:+,.2f}"
            )
    agent.decide(s6, "closed rows listed separately")
    never = step(r, 2, "Never sum `pnl` over the whole list")
    total = round(sum(row["pnl"] for row in net), 2)
    agent.decide(never, f"Net P&L {total} from the Net rows only")
    lines.append(
        "Day book: "
        + ", ".join(
            f"{row['tradingsymbol']} bought {row['day_buy_quantity']} "
            f"sold {row['day_sell_quantity']}"
            for row in day
        )
    )
    lines.append(
        f"Total Net P&L {total:+,.2f}; Console figures are end-of-day and include charges."
    )
    return Books(day, net, lines, total)


# ------------------------------------------------------------------ orders/funds-check.md


@dataclass(frozen=True)
class Funds:
    net: float
    need: float
    verdict: str
    lines: list[str]


def funds_check(agent: Agent, r: Recipe, key: str, quantity: int, as_of: str) -> Funds:
    """/orders/funds-check for a CNC buy at the market price."""
    s1 = step(r, 1, "Read `portfolio` mode `profile`: the segments and products enabled")
    profile = agent.call(s1, "portfolio", "profile")
    exchange, symbol = key.split(":")
    assert exchange in profile["exchanges"] and "CNC" in profile["products"]
    s2 = step(r, 2, "the number an order is checked against is `net`, the available margin")
    margins = agent.call(step(r, 2, "Read `portfolio` mode `margins`"), "portfolio", "margins")
    equity = margins["equity"]
    net = equity["net"]
    agent.decide(s2, f"equity net {net}")
    s3 = step(r, 3, "Price it from a fresh `market` mode `quote`")
    price = quote_of(agent, s3, key)["last_price"]
    need = round(price * quantity, 2)
    agent.decide(step(r, 3, "| CNC buy | quantity × price, plus charges |"), f"needs {need}")
    s4 = step(r, 4, "`net` already excludes the\n   margin blocked by open orders")
    orders = agent.page(
        step(r, 4, "Show open BUY orders from `orders` mode `list`"), "orders", "list"
    )
    blocked = sum(
        o["pending_quantity"] * o["price"]
        for o in orders
        if o["transaction_type"] == "BUY" and o["status"] not in TERMINAL
    )
    rows = agent.page(
        step(r, 4, "today's M2M from\n   `portfolio` mode `positions`"), "portfolio", "positions"
    )
    m2m = sum(row["m2m"] for row in rows)
    agent.decide(s4, f"open orders block {blocked}: already inside net, not subtracted again")
    s5 = step(r, 5, "what is to spare is `net` minus the\n   estimate")
    cash = step(r, 5, "A CNC buy or an option buy is paid from cash: compare it with `net` less")
    spare = round(net - equity["available"]["collateral"] - need, 2)
    agent.decide(cash, "a CNC buy: net less collateral")
    verdict = (
        f"enough ({spare:,.2f} to spare before charges)"
        if spare >= 0
        else (f"not enough (short by {-spare:,.2f})")
    )
    agent.decide(s5, verdict)
    a = equity["available"]
    lines = [
        f"Equity margin as of {as_of} IST: net {net:,.2f} (cash {a['cash']:,.2f}, collateral "
        f"{a['collateral']:,.2f}, debits {equity['utilised']['debits']:,.2f})",
        f"Order: BUY {quantity} {symbol} CNC LIMIT {price:,.2f} -> needs about {need:,.2f} "
        "+ charges (cash)",
        f"Context, already inside net: open BUY orders block about {blocked:,.2f}; "
        f"today's m2m {m2m:,.2f}",
        f"Verdict: {verdict}.",
    ]
    return Funds(net, need, verdict, lines)


# ------------------------------------------------------------------ orders/prepare.md (session)


def minutes(hhmm: str) -> int:
    hours, mins = hhmm.split(":")
    return int(hours) * 60 + int(mins)


def session_gate(agent: Agent, r: Recipe, sessions: Recipe, key: str, product: str) -> str | None:
    """/orders/prepare steps 1 to 3 and 6 for an NSE equity order: None when an order can be
    placed now, else what to tell the person (the recipe stops there, with no write)."""
    exchange, symbol = key.split(":")
    profile = agent.call(step(r, 1, "Read `portfolio` mode `profile`"), "portfolio", "profile")
    assert product in profile["products"]
    s2 = step(r, 2, "`search` with `search_mode` `get_by_tradingsymbol`, `exchange`")
    if agent.generation != "legacy-oldest":
        agent.call(
            s2, "market", "search", search_mode="get_by_tradingsymbol", exchange=exchange,
            tradingsymbol=symbol, verbosity="full",
        )  # fmt: skip
    quote = quote_of(agent, step(r, 3, "Take a live quote: `market` mode `quote`"), key)
    now = when(quote["timestamp"])  # the quote's own time is the clock the recipe reads
    at = now.hour * 60 + now.minute
    s6 = step(
        r,
        6,
        "order can be placed: stop and tell the person when to retry",
    )
    mis = step(r, 6, "MIS is squared off\n   automatically at 15:20 (equity)")
    if product == "MIS" and at >= minutes("15:20"):
        agent.decide(mis, "fresh MIS blocked after 15:20")
        return (
            f"Fresh MIS orders are blocked after 15:20 (now {now:%H:%M} IST). Retry at 09:15 on "
            "the next trading day, or place it as CNC before 15:30."
        )
    gap = part(sessions, "Gaps: nothing can be placed", "Equity: 15:30 to 16:00, 08:58 to 09:00")
    amo = part(sessions, "AMO windows", "Equity: 16:00 to 08:58")
    if minutes("15:30") <= at < minutes("16:00"):
        agent.decide(gap, "in the equity gap")
        agent.decide(s6, "stop: tell the person when to retry")
        agent.decide(amo, "the AMO window opens at 16:00")
        return (
            f"No order can be placed now ({now:%H:%M} IST: equity closes at 15:30, AMOs open at "
            "16:00). Retry at 16:00 as an AMO (`variety` `amo`), or at 09:15 on the next "
            "trading day as a regular order."
        )
    if minutes("09:08") <= at < minutes("09:15"):
        agent.decide(gap, "in the pre-open gap")
        return f"No order can be placed now ({now:%H:%M} IST). Retry at 09:15."
    return None


# ------------------------------------------------------------------ orders/expiry-rollover.md


@dataclass(frozen=True)
class Rolled:
    near: dict[str, Any]
    next_row: dict[str, Any]
    legs: list[dict[str, Any]]
    summaries: list[str]
    net_after: dict[str, int]


def _filled(agent: Agent, rec: Recipe, order_id: str) -> dict[str, Any]:
    s4 = step(rec, 4, "read `orders` mode `history` with `order_id`. The last row is the current")
    last: dict[str, Any] = {}
    for _ in range(6):
        agent.wait(seconds=10)
        last = agent.call(s4, "orders", "history", order_id=order_id)[-1]
        if last["status"] in TERMINAL:
            break
    return last


def rollover(agent: Agent, r: Recipe, rec: Recipe, pos: Recipe, symbol: str) -> Rolled:
    """/orders/expiry-rollover of a long NRML future into the next expiry, both legs."""
    s1 = step(r, 1, "Read `portfolio` mode `positions` (paged)")
    rows = agent.page(s1, "portfolio", "positions")
    step(pos, 3, "a key seen only once is a **Net**\n   row")
    keys = [(x["exchange"], x["tradingsymbol"], x["product"]) for x in rows]
    net_rows = [x for i, x in enumerate(rows) if keys[i] not in keys[i + 1 :]]
    held = next(x for x in net_rows if x["tradingsymbol"] == symbol and x["product"] == "NRML")
    s1r = step(r, 1, "resolve it with\n   `market` mode `search` with `search_mode`")
    found = agent.call(
        s1r, "market", "search", search_mode="get_by_tradingsymbol", exchange=held["exchange"],
        tradingsymbol=symbol, verbosity="full",
    )  # fmt: skip
    (near,) = found["data"] if isinstance(found, dict) else found
    lots = held["quantity"] // near["lot_size"]
    agent.decide(step(r, 1, 'State "closes N lots"'), f"closes {lots} lots")
    s3 = step(r, 3, "compact rows having no `expiry_date`")
    query = f"{held['exchange']}:{near['name']}"
    first = agent.call(
        s3, "market", "search", search_mode="search", filter_on="underlying", verbosity="full",
        query=query, limit=1,
    )  # fmt: skip
    total = first["pagination"]["total"]
    every = agent.call(
        s3, "market", "search", search_mode="search", filter_on="underlying", verbosity="full",
        query=query, limit=total + 1,
    )["data"]  # fmt: skip
    assert len(every) == total
    pick = step(r, 3, "Pick the row with that `expiry_date`, the same `instrument_type`")
    later = [
        x
        for x in every
        if x["instrument_type"] == near["instrument_type"]
        and x["strike"] == near["strike"]
        and x["expiry_date"] > near["expiry_date"]
    ]
    next_row = min(later, key=lambda x: x["expiry_date"])
    agent.decide(pick, f"next contract {next_row['tradingsymbol']} ({next_row['expiry_date']})")
    new_lots = held["quantity"] // next_row["lot_size"]
    near_key = f"{held['exchange']}:{symbol}"
    next_key = f"{held['exchange']}:{next_row['tradingsymbol']}"
    s4 = step(r, 4, "Quote both contracts with `market` mode `quote` (one call, both")
    quotes = agent.call(s4, "market", "quote", instruments=[near_key, next_key])
    spread = quotes[next_key]["last_price"] - quotes[near_key]["last_price"]
    agent.call(
        step(r, 4, "Check funds with `portfolio`\n   mode `margins`"), "portfolio", "margins"
    )
    s5 = step(r, 5, "Look for duplicates: `orders` mode `list` and `orders` mode `all_trades`")
    orders = agent.page(s5, "orders", "list")
    agent.page(s5, "orders", "all_trades")
    assert not [
        o
        for o in orders
        if o["tradingsymbol"] in (symbol, next_row["tradingsymbol"]) and o["status"] not in TERMINAL
    ]
    bid = quotes[near_key]["depth"]["buy"][0]["price"]
    summaries = [
        f"SELL {held['quantity']} {symbol} {held['exchange']} NRML LIMIT @ {bid:.2f} - closes "
        f"{lots} lot(s) of the long Net position; then BUY {new_lots} lot(s) of "
        f"{next_row['tradingsymbol']} (lot {next_row['lot_size']}, token "
        f"{next_row['instrument_token']}), spread {spread:+.2f}; the second leg gets its own "
        "approval after the first has filled"
    ]
    agent.decide(step(r, 6, "Present the first leg"), summaries[0])
    agent.approve(
        part(
            r, "Steps", "**Stop for approval.** Do not go on until the user approves the first leg"
        )
    )
    s7 = step(r, 7, "take a new `market` mode `quote`, re-check the session window")
    again = agent.call(s7, "market", "quote", instruments=[near_key])[near_key]
    assert again["depth"]["buy"][0]["price"] >= bid - near["tick_size"] * 20
    s8 = step(r, 8, "`orders` mode `place` with `variety` `regular`")
    leg1 = {
        "variety": "regular", "exchange": held["exchange"], "tradingsymbol": symbol,
        "transaction_type": "SELL", "quantity": lots * near["lot_size"], "product": "NRML",
        "order_type": "LIMIT", "price": bid, "tag": "ksroll1",
    }  # fmt: skip
    placed = agent.call(s8, "orders", "place", **leg1)
    first_fill = _filled(agent, rec, placed["order_id"])
    s9 = step(r, 9, "If it filled only partly, stop and ask")
    assert first_fill["status"] == "COMPLETE", f"{s9}: {first_fill['status']}"
    s10 = step(r, 10, "Take a new `market` mode `quote` of the next contract and present")
    ask = agent.call(s10, "market", "quote", instruments=[next_key])[next_key]
    price = ask["depth"]["sell"][0]["price"]
    summaries.append(
        f"BUY {new_lots * next_row['lot_size']} {next_row['tradingsymbol']} NRML LIMIT @ "
        f"{price:.2f} (expiry {next_row['expiry_date']}); first leg filled at "
        f"{first_fill['average_price']:.2f}, realised spread "
        f"{price - first_fill['average_price']:+.2f}"
    )
    agent.decide(s10, summaries[1])
    agent.approve(
        part(
            r, "Steps", "**Stop for approval.** Do not go on until the user approves the second leg"
        )
    )
    s11 = step(r, 11, "a new `market` mode `quote` of the next contract")
    agent.call(s11, "market", "quote", instruments=[next_key])
    s12 = step(r, 12, "Place the second leg with `orders` mode `place` with `variety` `regular`")
    leg2 = {
        "variety": "regular", "exchange": held["exchange"],
        "tradingsymbol": next_row["tradingsymbol"], "transaction_type": "BUY",
        "quantity": new_lots * next_row["lot_size"], "product": "NRML", "order_type": "LIMIT",
        "price": price, "tag": "ksroll2",
    }  # fmt: skip
    placed2 = agent.call(s12, "orders", "place", **leg2)
    _filled(agent, rec, placed2["order_id"])
    after = agent.page(step(r, 12, "and `portfolio` mode `positions`"), "portfolio", "positions")
    keys = [(x["exchange"], x["tradingsymbol"], x["product"]) for x in after]
    net_after = {
        x["tradingsymbol"]: x["quantity"]
        for i, x in enumerate(after)
        if keys[i] not in keys[i + 1 :] and x["product"] == "NRML"
    }
    return Rolled(near, next_row, [leg1, leg2], summaries, net_after)


@dataclass(frozen=True)
class Prepared:
    summary: list[str]
    sent: dict[str, Any]
    final: dict[str, Any]


def prepare_buy(
    agent: Agent,
    r: Recipe,
    rec: Recipe,
    key: str,
    quantity: int,
    limit: float,
    tag: str,
    lost: bool = False,
) -> Prepared:
    """/orders/prepare for a CNC LIMIT BUY the person asked for, to the verified order; with
    ``lost``, to the place call, whose answer never reaches the agent (``final`` is empty:
    what to do next is /orders/reconcile's)."""
    exchange, symbol = key.split(":")
    profile = agent.call(step(r, 1, "Read `portfolio` mode `profile`"), "portfolio", "profile")
    assert exchange in profile["exchanges"] and "CNC" in profile["products"]
    s2 = step(r, 2, "`search` with `search_mode` `get_by_tradingsymbol`, `exchange`")
    found = agent.call(
        s2, "market", "search", search_mode="get_by_tradingsymbol", exchange=exchange,
        tradingsymbol=symbol, verbosity="full",
    )  # fmt: skip
    (row,) = found["data"] if isinstance(found, dict) else found
    assert row["active"], f"{s2}: stop unless active"
    s3 = step(r, 3, "Take a live quote: `market` mode `quote` with `instruments`")
    quote = quote_of(agent, s3, key)
    s4 = step(r, 4, "`calc` mode `tick` with `price`, `tick_size` and\n   `purpose` rounds")
    tick = {"price": float(limit), "tick_size": float(row["tick_size"]), "purpose": "buy_limit"}
    price = float(calculate({"mode": "tick", **tick}).result["price"])
    agent.decide(s4, f"limit {limit} -> {price}")
    s5 = step(r, 5, "`calc` mode `lots` with `quantity`")
    lots = {
        "quantity": quantity,
        "lot_size": row["lot_size"],
        "freeze_quantity": row["freeze_quantity"],
    }
    assert calculate({"mode": "lots", **lots}).result["slices"] == [quantity], s5
    s6 = step(r, 6, "Decide the session from the current IST time")
    at = when(quote["timestamp"])
    assert minutes("09:15") <= at.hour * 60 + at.minute < minutes("15:30"), s6
    agent.decide(s6, "market open: a regular order")
    s7 = step(r, 7, "A CNC buy and an option buy need cash:\n   compare with `net` less")
    equity = agent.call(s7, "portfolio", "margins")["equity"]
    value = round(quantity * price, 2)
    cash = round(equity["net"] - equity["available"]["collateral"], 2)
    if value > cash:
        short = step(r, 7, "If it is above, stop: say it does not fit and by how much")
        line = (
            f"Does not fit: BUY {quantity} {symbol} @ {price:.2f} is about {value:,.2f}, "
            f"{value - cash:,.2f} above the cash it can use {cash:,.2f}; "
            'Kite would reject it ("Insufficient funds"). A smaller quantity?'
        )
        agent.decide(short, line)
        return Prepared([line], {}, {})
    s9 = step(
        r, 9, "Look for duplicates: `orders` mode `list` (paged) and `orders` mode `all_trades`"
    )
    orders = agent.page(s9, "orders", "list")
    trades = agent.page(s9, "orders", "all_trades")
    same = [
        o
        for o in orders
        if o["tradingsymbol"] == symbol
        and o["transaction_type"] == "BUY"
        and (o["status"] not in TERMINAL or o["tag"] == tag)
    ]
    assert not same, f"{s9}: ask before going on"
    s11 = step(r, 11, "the largest of today's trades on the symbol and the holding's `quantity`")
    holdings = agent.page(s11, "portfolio", "holdings")
    usual = max(
        [t["quantity"] for t in trades if t["tradingsymbol"] == symbol]
        + [h["quantity"] for h in holdings if h["tradingsymbol"] == symbol]
        + [0]
    )
    s11_calc = step(r, 11, "Call `calc` mode `check_order` with")
    check = calculate(
        {
            "mode": "check_order",
            "transaction_type": "BUY",
            "order_type": "LIMIT",
            "quantity": quantity,
            "price": float(price),
            "last_price": float(quote["last_price"]),
            "tick_size": float(row["tick_size"]),
            "net": float(equity["net"]),
            **({"usual_quantity": usual} if usual else {}),
        }
    ).result
    found = {f["code"] for f in check["findings"]}
    agent.decide(s11_calc, f"findings {sorted(found)}")
    share, away = check["net_share_pct"], check["price_distance_pct"]
    guard = FAT_FINGER
    a = equity["available"]
    summary = [
        f"BUY {quantity} {symbol} ({exchange}, equity; {quantity} shares) CNC LIMIT @ "
        f"{price:.2f} (tick {row['tick_size']:g}), validity DAY",
        f"Estimated value {value:,.2f} plus charges; equity net margin {equity['net']:,.2f} "
        f"(cash {a['cash']:,.2f}, collateral {a['collateral']:,.2f}, debits "
        f"{equity['utilised']['debits']:,.2f}; margins as of {at:%H:%M:%S} IST)",
        f"Last price {quote['last_price']:.2f} at {at:%H:%M:%S} IST, circuit "
        f"{quote['lower_circuit_limit']:.2f}-{quote['upper_circuit_limit']:.2f}; "
        "session: market open",
        f"Tag {tag}; a BUY, so no position to close; market protection: not used (LIMIT)",
        f"Size check: value {value:,.2f} is {share:.2f}% of net (guard "
        f"{guard.net_share_pct}%); usual size {usual or 'no usual size known'}; limit "
        f"{away:.2f}% from last price (guard {guard.price_distance_pct}%)",
    ]
    if "fat_finger_value" in found:
        summary.append(
            f"WARNING: the value is above {guard.net_share_pct}% of net. Is {quantity} shares "
            "what you meant?"
        )
    if "fat_finger_size" in found:
        summary.append(
            f"WARNING: {quantity} is more than {guard.usual_size_multiple} times your usual "
            f"{usual}."
        )
    summary.append('Reply "approve" to place exactly this order, or say what to change.')
    agent.decide(step(r, 12, "Present the summary below"), "presented")
    agent.approve(
        part(r, "Steps", "**Stop for approval.** Do not go on until the user approves the step 12")
    )
    s13 = step(r, 13, "take a new `market` mode `quote`, re-check the session")
    again = quote_of(agent, s13, key)
    agent.page(
        s13.plus(step(r, 13, "repeat the duplicate check of step 9")).plus(s9), "orders", "list"
    )
    assert again["last_price"] > 0
    s14 = step(r, 14, "Call `orders` mode `place` with `variety`, `exchange`, `tradingsymbol`")
    sent = {
        "variety": "regular", "exchange": exchange, "tradingsymbol": symbol,
        "transaction_type": "BUY", "quantity": quantity, "product": "CNC",
        "order_type": "LIMIT", "price": price, "validity": "DAY", "tag": tag,
    }  # fmt: skip
    agent.call(s14, "orders", "place", lost=lost, **sent)
    if lost:
        return Prepared(summary, sent, {})
    s15 = step(r, 15, "find the order by `tag`, read `orders` mode\n    `history`")
    agent.wait(seconds=5)
    listed = agent.page(step(rec, 1, "List today's orders: `orders` mode `list`"), "orders", "list")
    mine = [o for o in listed if o["tag"] == tag]
    (order,) = mine
    final = agent.call(s15, "orders", "history", order_id=order["order_id"])[-1]
    return Prepared(summary, sent, final)


# ------------------------------------------------------------------ orders/cancel-all.md


@dataclass(frozen=True)
class Cancelled:
    summary: list[str]
    left_orders: list[dict[str, Any]]
    left_gtts: list[dict[str, Any]]
    kept: list[str]


def cancel_all(agent: Agent, r: Recipe, strike_protection: bool = False) -> Cancelled:
    """/orders/cancel-all: every working order and active GTT listed, the ones that protect an
    open position or holding marked and kept (unless the person strikes them:
    ``strike_protection``), one approval for the list, one call per item."""
    s1 = step(r, 1, "List every open order: `orders` mode `list`, paged until `has_more`")
    working = [o for o in agent.page(s1, "orders", "list") if o["status"] not in TERMINAL]
    s2 = step(r, 2, "List every active GTT: `gtt` mode `list`, paged; keep `status` `active`")
    active = [g for g in agent.page(s2, "gtt", "list") if g["status"] == "active"]
    s3 = step(r, 3, "Always read `portfolio` mode `positions`")
    rows = agent.page(s3, "portfolio", "positions")
    keys = [(x["exchange"], x["tradingsymbol"], x["product"]) for x in rows]
    held: dict[str, int] = {}
    for i, x in enumerate(rows):
        if keys[i] not in keys[i + 1 :] and x["quantity"]:
            held[x["tradingsymbol"]] = held.get(x["tradingsymbol"], 0) + x["quantity"]
    for h in agent.page(s3, "portfolio", "holdings"):
        held[h["tradingsymbol"]] = held.get(h["tradingsymbol"], 0) + h["quantity"]

    def protects(symbol: str, side: str) -> bool:
        open_qty = held.get(symbol, 0)
        return (side == "SELL" and open_qty > 0) or (side == "BUY" and open_qty < 0)

    mark = step(r, 3, "Protective items are **kept** unless the person strikes them")
    kept: list[str] = []
    if not strike_protection:
        for o in working:
            if o["order_type"] in ("SL", "SL-M") and protects(
                o["tradingsymbol"], o["transaction_type"]
            ):
                kept.append(f"keep order {o['order_id']}: protects {o['tradingsymbol']}")
        for g in active:
            if protects(g["condition"]["tradingsymbol"], g["orders"][0]["transaction_type"]):
                kept.append(f"keep GTT {g['id']}: protects {g['condition']['tradingsymbol']}")
        working = [o for o in working if not any(f" {o['order_id']}:" in k for k in kept)]
        active = [g for g in active if not any(f"GTT {g['id']}:" in k for k in kept)]
    agent.decide(mark, "; ".join(kept) or "nothing protective")
    s4 = step(r, 4, "a numbered list of every order to cancel")
    summary = [
        f"{i}. cancel order {o['order_id']} {o['tradingsymbol']} {o['transaction_type']} "
        f"{o['quantity']} (filled {o['filled_quantity']}) {o['order_type']} {o['status']}"
        for i, o in enumerate(working, 1)
    ] + [
        f"{i}. delete GTT {g['id']} {g['condition']['tradingsymbol']} "
        f"{g['orders'][0]['transaction_type']} triggers {g['condition']['trigger_values']}"
        for i, g in enumerate(active, len(working) + 1)
    ]
    agent.decide(s4, f"{len(working)} orders and {len(active)} GTTs listed, {len(kept)} kept")
    agent.approve(
        part(
            r,
            "Steps",
            "**Stop for approval.** Do not go on until the user approves this exact list",
        ),
        covers=len(working) + len(active),
    )
    s5 = step(r, 5, "read `orders` mode `list` and `gtt` mode `list` again")
    still = {o["order_id"]: o for o in agent.page(s5, "orders", "list")}
    again = {g["id"] for g in agent.page(s5, "gtt", "list") if g["status"] == "active"}
    assert all(still[o["order_id"]]["status"] not in TERMINAL for o in working)
    assert {g["id"] for g in active} <= again, f"{s5}: a new summary is needed"
    s6 = step(
        r, 6, "`orders` mode\n   `cancel` with `order_id` and `variety` (the order's own `variety`"
    )
    released = step(r, 6, "an `amo` order whose status is no longer `AMO REQ RECEIVED`")
    for o in working:
        variety = o["variety"]
        if variety == "amo" and o["status"] != "AMO REQ RECEIVED":
            agent.decide(released, f"{o['order_id']} was released: cancel as regular")
            variety = "regular"
        agent.call(s6, "orders", "cancel", order_id=o["order_id"], variety=variety)
    for g in active:
        agent.call(s6, "gtt", "delete", trigger_id=g["id"])
    s7 = step(r, 7, "Reconcile: `orders` mode `list` again")
    agent.wait(seconds=5)
    left = [o for o in agent.page(s7, "orders", "list") if o["status"] not in TERMINAL]
    gone = step(r, 7, "Read `gtt` mode `list` again: each deleted GTT")
    left_gtts = [g for g in agent.page(gone, "gtt", "list") if g["status"] == "active"]
    return Cancelled(summary, left, left_gtts, kept)


# ------------------------------------------------------------------ orders/stop-loss.md


def resolve_row(agent: Agent, where: Where, exchange: str, symbol: str) -> dict[str, Any]:
    """The exact lookup ``where`` writes, or on legacy-oldest the fallback it links to
    ([Resolve an instrument](../market-data/resolve.md))."""
    exact = any(c.tool == "market" and c.mode == "search" for c in where.calls)
    if agent.generation == "legacy-oldest" or not exact:
        assert "resolve.md)" in where.text, f"{where}: no lookup or link given"
        return resolve(agent, recipe("market-data/resolve.md"), exchange, symbol).row
    found = agent.call(
        where, "market", "search", search_mode="get_by_tradingsymbol", exchange=exchange,
        tradingsymbol=symbol, verbosity="full",
    )  # fmt: skip
    (row,) = found["data"] if isinstance(found, dict) else found
    return dict(row)


def stop_loss(
    agent: Agent, r: Recipe, pos: Recipe, rec: Recipe, symbol: str, below: float, buffer_ticks: int
) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """/orders/stop-loss: an SL stop under a long Net position, ``below`` (a fraction) under
    the last price with the person's buffer of ``buffer_ticks`` ticks."""
    s1 = step(r, 1, "Read `portfolio` mode `positions` (separate the books")
    rows = agent.page(s1, "portfolio", "positions")
    step(pos, 3, "a key seen only once is a **Net**\n   row")
    keys = [(x["exchange"], x["tradingsymbol"], x["product"]) for x in rows]
    net = [x for i, x in enumerate(rows) if keys[i] not in keys[i + 1 :]]
    held = next(x for x in net if x["tradingsymbol"] == symbol and x["quantity"] > 0)
    key = f"{held['exchange']}:{symbol}"
    s2 = step(r, 2, "Resolve the instrument with `market` mode `search` with `search_mode`")
    row = resolve_row(agent, s2, held["exchange"], symbol)
    quote = quote_of(agent, step(r, 2, "take `market` mode `quote` for `last_price`"), key)
    tick = row["tick_size"]
    s4 = step(r, 4, "Round a\n   trigger towards the price (SELL up, BUY down)")
    trigger = snap(quote["last_price"] * (1 - below), tick, down=False)
    limit = snap(trigger - buffer_ticks * tick, tick, down=True)
    agent.decide(s4, f"trigger {trigger}, limit {limit}")
    lots = held["quantity"] // row["lot_size"]
    s5 = step(r, 5, "Flag another\n   `TRIGGER PENDING` stop on the same symbol and side")
    orders = agent.page(s5, "orders", "list")
    agent.page(s5, "orders", "all_trades")
    agent.page(step(r, 5, "active GTTs from `gtt` mode `list` on the"), "gtt", "list")
    assert not [
        o for o in orders if o["tradingsymbol"] == symbol and o["status"] == "TRIGGER PENDING"
    ]
    at = when(quote["timestamp"])
    distance = (quote["last_price"] - trigger) / quote["last_price"] * 100
    summary = [
        f"SELL {held['quantity']} ({lots} lot) {symbol} {held['product']} SL: trigger "
        f"{trigger:.2f}, limit {limit:.2f}; last price {quote['last_price']:.2f} at "
        f"{at:%H:%M:%S} IST ({distance:.2f}% above the trigger)",
        f"closes {lots} lots if triggered; validity DAY; tag ksSL{symbol[:8]}; ends at the close",
    ]
    agent.decide(step(r, 6, "Present the summary"), "presented")
    agent.approve(
        part(
            r,
            "Steps",
            "**Stop for approval.** Do not go on until the user approves this exact stop",
        )
    )
    s7 = step(r, 7, "If the price is already through the trigger")
    again = quote_of(agent, step(r, 7, "take a new `market` mode `quote`"), key)
    assert again["last_price"] > trigger, s7
    agent.page(step(r, 7, "the\n   duplicates of step 5").plus(s5), "orders", "list")
    s8 = step(r, 8, "Call `orders` mode `place` with `variety` `regular`")
    sent = {
        "variety": "regular", "exchange": held["exchange"], "tradingsymbol": symbol,
        "transaction_type": "SELL", "quantity": held["quantity"], "product": held["product"],
        "order_type": "SL", "trigger_price": trigger, "price": limit, "validity": "DAY",
        "tag": f"ksSL{symbol[:8]}",
    }  # fmt: skip
    placed = agent.call(s8, "orders", "place", **sent)
    s9 = step(r, 9, "the order should be `TRIGGER PENDING`")
    agent.wait(seconds=5)
    final = agent.call(
        step(rec, 4, "read `orders` mode `history` with `order_id`"), "orders", "history",
        order_id=placed["order_id"],
    )[-1]  # fmt: skip
    agent.decide(s9, final["status"])
    return summary, sent, final


# ------------------------------------------------------------------ triggers-and-alerts/alerts.md


def price_alert(agent: Agent, r: Recipe, key: str, level: float) -> tuple[list[str], Any, Any]:
    """/triggers-and-alerts/alerts: a simple alert when ``key`` trades at or below ``level``."""
    exchange, symbol = key.split(":")
    s1 = step(r, 1, "Read existing alerts: `alerts` mode `get` with `uuids` `[]` (all)")
    existing = agent.call(s1, "alerts", "get", uuids=[])["alerts"]
    same = [
        a for a in existing
        if a["lhs_tradingsymbol"] == symbol and a["operator"] == "<=" and a["rhs_constant"] == level
    ]  # fmt: skip
    assert not same, f"{s1}: a duplicate"
    s2 = step(r, 2, "take a fresh\n   `market` mode `ltp`")
    resolve_row(
        agent, step(r, 2, "Resolve the instrument ([Resolve an instrument]"), exchange, symbol
    )
    ltp = agent.call(s2, "market", "ltp", instruments=[key])[key]["last_price"]
    s3 = step(r, 3, "`rhs_type` `constant` with `rhs_constant`")
    definition = {
        "name": f"{symbol} at or below {level:g}", "alert_type": "simple",
        "lhs_exchange": exchange, "lhs_tradingsymbol": symbol,
        "lhs_attribute": "LastTradedPrice", "operator": "<=", "rhs_type": "constant",
        "rhs_constant": level,
    }  # fmt: skip
    agent.decide(s3, "a simple alert on the last traded price")
    summary = [
        f"when {key} last traded price <= {level:,.2f}; LTP {ltp:,.2f} "
        f"({(ltp - level) / ltp * 100:.2f}% above); simple alert (no orders)"
    ]
    agent.decide(step(r, 5, "Present the summary: the condition in words"), summary[0])
    agent.approve(
        part(
            r,
            "Steps",
            "**Stop for approval.** Do not go on until the user has approved the summary",
        )
    )
    s6 = step(r, 6, "read `alerts` mode `get` again (for a duplicate")
    agent.call(s6, "alerts", "get")
    again = agent.call(s6, "market", "ltp", instruments=[key])[key]["last_price"]
    assert again > level, f"{s6}: the condition would already be met"
    s7 = step(r, 7, "create: `alerts` mode `create` with `uuids` `[]`, `name`, `alert_type`")
    created = agent.call(s7, "alerts", "create", uuids=[], **definition)
    s8 = step(r, 8, "Verify with `alerts` mode `get` with `uuids`, the affected ids")
    uuid = created["alert"]["uuid"]
    listed = agent.call(s8, "alerts", "get", uuids=[uuid])
    return summary, created, listed


# ------------------------------------------------------------------ holdings/concentration.md


def concentration(agent: Agent, r: Recipe) -> list[tuple[str, float, float]]:
    """(tradingsymbol, weight %, value) by ISIN, descending."""
    s1 = step(r, 1, "`portfolio` mode `holdings` with `type` `full`, `from` 0 and `limit` 100")
    if agent.generation == "legacy-oldest":
        rows = agent.page(s1, "get_holdings", limit=100)
    else:
        rows = agent.page(s1, "portfolio", "holdings", limit=100, type="full")
    s2 = step(r, 2, "Decide per row and say which")
    s3 = step(r, 3, "`last_price` if above 0; else `close_price` if above 0")
    by_isin: dict[str, tuple[str, float]] = {}
    for row in rows:
        price = row["last_price"] or row["close_price"]
        assert price > 0, f"{s3}: a fresh ltp is needed"
        inside = row["quantity"] == row["realised_quantity"] + row["t1_quantity"]
        outside = row["quantity"] == row["realised_quantity"] and row["t1_quantity"] > 0
        held = row["quantity"] + (row["t1_quantity"] if outside and not inside else 0)
        value = held * price
        reading = "T+1 outside quantity" if outside and not inside else "T+1 inside quantity"
        agent.decide(s2, f"{row['tradingsymbol']} qty {held} ({reading})")
        name, before = by_isin.get(row["isin"], (row["tradingsymbol"], 0.0))
        by_isin[row["isin"]] = (name, before + value)
    agent.decide(step(r, 5, "Aggregate by `isin`"), f"{len(by_isin)} ISINs")
    total = sum(v for _, v in by_isin.values())
    s6 = step(r, 6, "Weight = value / sum of all values. Sort descending")
    out = sorted(
        (
            (name, round(value / total * 100, 1), round(value, 2))
            for name, value in by_isin.values()
        ),
        key=lambda x: -x[2],
    )
    agent.decide(s6, f"top {out[0][0]}")
    return out


# ------------------------------------------------------------------ holdings/mutual-funds.md


def mutual_funds(agent: Agent, r: Recipe) -> list[str]:
    s1 = step(r, 1, "Read `mutual_funds` mode `holdings`")
    answer = agent.call(s1, "mutual_funds", "holdings")
    rows = answer["data"] if isinstance(answer, dict) else answer
    s2 = step(r, 2, "Check `pnl` against value − cost and report a difference")
    lines = []
    differ = []
    for row in rows:
        value = row["quantity"] * row["last_price"]
        cost = row["quantity"] * row["average_price"]
        if abs(row["pnl"] - (value - cost)) > 0.01:
            differ.append(row["tradingsymbol"])
        lines.append(
            f"{row['fund']} ({row['tradingsymbol']}), folios 1: {row['quantity']:,.3f} units, "
            f"NAV {row['last_price']:.4f}, value {value:,.2f}, cost {cost:,.2f}, "
            f"P&L {value - cost:+,.2f} (NAV of {row['last_price_date']})"
        )
    agent.decide(s2, f"pnl differs: {differ or 'none'}")
    lines.append(f"Rows whose pnl differs from value - cost: {', '.join(differ) or 'none'}")
    return lines


# ------------------------------------------------------------------ market-data/historical.md

MAX_DAYS = {"minute": 60, "3minute": 100, "5minute": 100, "10minute": 100, "15minute": 200,
            "30minute": 200, "60minute": 400, "day": 2000}  # fmt: skip


def candles(
    agent: Agent, h: Recipe, key: str, interval: str, days: int, now: datetime
) -> tuple[int, list[dict[str, Any]], int]:
    """/market-data/historical: (token, complete candles oldest first, calls made)."""
    exchange, symbol = key.split(":")
    s1 = step(h, 1, "Resolve the instrument with [Resolve an instrument](resolve.md)")
    token = resolve_row(agent, s1, exchange, symbol)["instrument_token"]
    s4 = step(h, 4, "A\n   request over the limit is an error, not a shorter series")
    size = MAX_DAYS[interval]
    start = now - timedelta(days=days)
    chunks = []
    while start < now:
        end = min(start + timedelta(days=size), now)
        chunks.append((start, end))
        start = end
    agent.decide(s4, f"{len(chunks)} chunk(s) of at most {size} days")
    s5 = step(
        h, 5, "Call `market` mode `historical` with `instrument_token`, `interval`, `from_date`"
    )
    rows: dict[str, dict[str, Any]] = {}
    for begin, end in chunks:
        answer = agent.call(
            s5, "market", "historical", instrument_token=token, interval=interval,
            from_date=f"{begin:%Y-%m-%d %H:%M:%S}", to_date=f"{end:%Y-%m-%d %H:%M:%S}",
        )  # fmt: skip
        assert isinstance(answer, list), answer
        for row in answer:
            rows[row["date"]] = row
    s6 = step(h, 6, "de-duplicate on `date` and sort ascending")
    merged = [rows[d] for d in sorted(rows)]
    agent.decide(s6, f"{len(merged)} candles")
    s7 = step(h, 7, "During market hours the final candle can be the still-forming")
    if merged and when(merged[-1]["date"]).date() == now.date() and interval == "day":
        merged = merged[:-1]
        agent.decide(s7, "dropped today's forming candle")
    return token, merged, len(chunks)


def rsi14(closes: list[float], r: Recipe) -> float:
    """The recipe's formula (Wilder, seeded by simple averages), unrounded."""
    part(r, "Steps", "AvgGain(t) = (AvgGain(t-1) × 13 + G(t)) / 14")
    gains = [max(b - a, 0.0) for a, b in pairwise(closes)]
    losses = [max(a - b, 0.0) for a, b in pairwise(closes)]
    gain = sum(gains[:14]) / 14
    loss = sum(losses[:14]) / 14
    for g, l_ in zip(gains[14:], losses[14:], strict=True):
        gain = (gain * 13 + g) / 14
        loss = (loss * 13 + l_) / 14
    return 100.0 if loss == 0 else 100 - 100 / (1 + gain / loss)


def ema(closes: list[float], n: int, r: Recipe) -> float:
    part(r, "Steps", "Seed: EMA at bar n = SMA(n) at bar n")
    value = sum(closes[:n]) / n
    alpha = 2 / (n + 1)
    for c in closes[n:]:
        value = alpha * c + (1 - alpha) * value
    return value


# ------------------------------------------------------------------ troubleshooting/*.md


def why_rejected(agent: Agent, r: Recipe, rec: Recipe, symbol: str) -> list[str]:
    """/troubleshooting/execution for "why was my <symbol> order rejected?"."""
    step(r, 1, "run\n   [Reconcile orders](../orders/reconcile.md) first")
    rows = agent.page(step(rec, 1, "List today's orders: `orders` mode `list`"), "orders", "list")
    (order,) = [o for o in rows if o["tradingsymbol"] == symbol]
    s2 = step(
        r, 2, "If the order exists and is `REJECTED`, read `status_message` from `orders` mode"
    )
    assert order["status"] == "REJECTED"
    last = agent.call(s2, "orders", "history", order_id=order["order_id"])[-1]
    message = last["status_message"]
    funds = step(r, 2, 'Insufficient funds ("Required margin is ... but available margin is ...")')
    lines = [f"Attempted: {order['transaction_type']} {order['quantity']} {symbol} "
             f"{order['product']} {order['order_type']} {order['price']:.2f}",
             f"Now: REJECTED ({message})"]  # fmt: skip
    numbers = re.findall(r"margin is (\d+(?:\.\d+)?)", message)
    if message.startswith("Insufficient funds") and len(numbers) == 2:
        agent.decide(funds, "both numbers reported; the order is not shrunk")
        lines.append(
            f"Cause: insufficient funds: required {float(numbers[0]):,.2f}, available "
            f"{float(numbers[1]):,.2f}"
        )
    s7 = step(r, 7, "A new attempt is a new write: it needs a fresh summary and the user's")
    lines.append("Options: a new order through Prepare an order, with a fresh approval")
    agent.decide(s7, "no retry here")
    return lines


def session_check(agent: Agent, r: Recipe) -> str:
    """/troubleshooting/authentication steps 2 and 3 on the newest server."""
    s2 = step(r, 2, "Newest server: call `session` mode `status`")
    status = agent.call(s2, "session", "status")
    s3 = step(r, 3, "Test against Kite: call `portfolio` mode `profile` once")
    profile = agent.call(s3, "portfolio", "profile")
    works = isinstance(profile, dict) and "user_id" in profile
    agent.decide(s3, "the session works" if works else "expired")
    return f"{status['status']}; Kite answers: {'yes' if works else 'no'}"


def missing_keys(agent: Agent, r: Recipe, asked: list[str]) -> tuple[list[str], dict[str, Any]]:
    """/troubleshooting/data step 3: keys asked for but not returned."""
    s3 = step(r, 3, "Compare the\n   keys you sent with the keys you got")
    got = agent.call(step(r, 3, "Missing quote keys: `market` mode `quote`"), "market", "quote",
                     instruments=asked)  # fmt: skip
    missing = [k for k in asked if k not in got]
    agent.decide(s3, f"missing: {missing}")
    return missing, got


# ------------------------------------------------------------------ orders/entry-stop-target.md


def entry_with_oco(
    agent: Agent, r: Recipe, rec: Recipe, symbol: str, stop_pct: float, target_pct: float
) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """/orders/entry-stop-target: an NRML future BUY, then a two-leg GTT on what filled."""
    key = f"NFO:{symbol}"
    s1 = step(r, 1, "profile\n   (note `meta.demat_consent`), instrument with `verbosity` `full`")
    prepare = recipe("orders/prepare.md")
    agent.call(step(prepare, 1, "Read `portfolio` mode `profile`"), "portfolio", "profile")
    row = resolve_row(
        agent, step(prepare, 2, "`search` with `search_mode` `get_by_tradingsymbol`"), "NFO", symbol
    )
    quote = quote_of(agent, step(prepare, 3, "Take a live quote: `market` mode `quote`"), key)
    agent.call(
        step(prepare, 7, "Check funds with `portfolio` mode `margins`"), "portfolio", "margins"
    )
    agent.decide(s1, "prepared as /orders/prepare steps 1 to 11")
    tick = row["tick_size"]
    ask = quote["depth"]["sell"][0]["price"]
    s2 = step(r, 2, "Compute the risk per unit (entry − stop)")
    stop = snap(ask * (1 - stop_pct), tick, down=False)
    stop_limit = snap(stop * 0.995, tick, down=True)
    target = snap(ask * (1 + target_pct), tick, down=True)
    agent.decide(s2, f"risk {ask - stop:.2f}, reward {target - ask:.2f}")
    s3 = step(r, 3, "`NRML` (F&O): a two-leg GTT")
    agent.decide(s3, "NRML: protection is a two-leg GTT")
    s4 = step(r, 4, "Look for duplicates: `orders` mode `list` and `orders` mode `all_trades`")
    agent.page(s4, "orders", "list")
    agent.page(s4, "orders", "all_trades")
    agent.page(s4, "gtt", "list")
    lots = row["lot_size"]
    summary = [
        f"BUY {lots} {symbol} NFO NRML LIMIT @ {ask:.2f}; stop {stop:.2f}, target {target:.2f}; "
        f"risk {ask - stop:.2f} reward {target - ask:.2f} per unit; the protection is a second "
        "write with its own approval after the entry fills"
    ]
    agent.approve(
        part(
            r,
            "Steps",
            "**Stop for approval.** Do not go on until the user approves this exact entry",
        )
    )
    s6 = step(r, 6, "take a new `market` mode `quote`, re-check the session window and the")
    quote_of(agent, s6, key)
    agent.page(s6.plus(s4), "orders", "list")
    s7 = step(r, 7, "Place the entry: call `orders` mode `place` with `variety` `regular`")
    entry = {
        "variety": "regular", "exchange": "NFO", "tradingsymbol": symbol,
        "transaction_type": "BUY", "quantity": lots, "product": "NRML",
        "order_type": "LIMIT", "price": ask, "validity": "DAY", "tag": "ksentry1",
    }  # fmt: skip
    order_id = agent.call(s7, "orders", "place", **entry)["order_id"]
    s8 = step(r, 8, "The\n   protection is sized from `filled_quantity`")
    filled = _filled(agent, rec, order_id)
    assert filled["status"] == "COMPLETE", filled["status"]
    quantity = filled["filled_quantity"]
    agent.decide(s8, f"protect {quantity}")
    summary.append(
        f"two-leg GTT SELL {quantity} {symbol} NRML: stop {stop:.2f} (limit {stop_limit:.2f}), "
        f"target {target:.2f}; entry average {filled['average_price']:.2f}"
    )
    agent.decide(step(r, 9, "Present the protection summary"), summary[-1])
    agent.approve(
        part(
            r,
            "Steps",
            "**Stop for approval.** Do not go on until the user approves this exact protection",
        )
    )
    s10 = step(r, 10, "re-read the entry's `filled_quantity`, take a new `market` mode `quote`")
    agent.call(step(rec, 4, "read `orders` mode `history` with `order_id`"), "orders", "history",
               order_id=order_id)  # fmt: skip
    last = quote_of(agent, s10, key)["last_price"]
    assert stop < last < target, f"{s10}: through a trigger"
    s11 = step(r, 11, "`trigger_type` `two-leg`, `lower_trigger_value`")
    gtt = {
        "exchange": "NFO", "tradingsymbol": symbol, "last_price": last,
        "transaction_type": "SELL", "product": "NRML", "trigger_type": "two-leg",
        "lower_trigger_value": stop, "lower_quantity": quantity, "lower_limit_price": stop_limit,
        "upper_trigger_value": target, "upper_quantity": quantity, "upper_limit_price": target,
    }  # fmt: skip
    agent.call(s11, "gtt", "place", **gtt)
    s12 = step(r, 12, "Verify: `gtt` mode `list` (the GTT `active`")
    active = [g for g in agent.page(s12, "gtt", "list") if g["status"] == "active"
              and g["condition"]["tradingsymbol"] == symbol]  # fmt: skip
    (placed,) = active
    return summary, entry, placed


# ------------------------------------------------------------------ derivatives/option-chain.md


@dataclass(frozen=True)
class Chain:
    spot: float
    expiry: str
    strikes: list[float]
    pcr: float
    wide: list[str]


def option_chain(agent: Agent, r: Recipe, underlying: str, query: str, n: int) -> Chain:
    s1 = step(r, 1, "Price the underlying: `market` mode `quote` with `instruments` such as")
    spot = quote_of(agent, s1, underlying)["last_price"]
    s2 = step(r, 2, "List the contracts: `market` mode `search` with `search_mode` `search`")
    if agent.generation == "legacy-oldest":
        first = agent.call(s2, "search_instruments", query=query, filter_on="underlying", limit=1)
        total = first["pagination"]["total"]
        rows = agent.call(s2, "search_instruments", query=query, filter_on="underlying",
                          limit=total + 1)  # fmt: skip
    else:
        first = agent.call(s2, "market", "search", search_mode="search", filter_on="underlying",
                           verbosity="full", query=query, limit=1)  # fmt: skip
        total = first["pagination"]["total"]
        rows = agent.call(s2, "market", "search", search_mode="search", filter_on="underlying",
                          verbosity="full", query=query, limit=total + 1)  # fmt: skip
    rows = rows["data"] if isinstance(rows, dict) else rows
    options = [x for x in rows if x["instrument_type"] in ("CE", "PE") and x["active"]]
    expiry = min(x["expiry_date"] for x in options)
    chosen = sorted((x for x in options if x["expiry_date"] == expiry), key=lambda x: x["strike"])
    agent.decide(step(r, 2, "Rows come unordered: sort\n   by strike yourself"), f"expiry {expiry}")
    s3 = step(r, 3, "the at-the-money strike is the one nearest the underlying's price")
    strikes = sorted({x["strike"] for x in chosen})
    atm = min(strikes, key=lambda k: abs(k - spot))
    i = strikes.index(atm)
    shown = strikes[max(0, i - n) : i + n + 1]
    agent.decide(s3, f"ATM {atm}")
    keys = [f"NFO:{x['tradingsymbol']}" for x in chosen if x["strike"] in shown]
    s4 = step(r, 4, "Quote the chosen contracts: `market` mode `quote` with `instruments`")
    quotes = agent.call(s4, "market", "quote", instruments=keys)
    s6 = step(r, 6, "Put-call ratio (by OI) = Σ put\n   `oi` / Σ call `oi`")
    puts = sum(q["oi"] for k, q in quotes.items() if k.endswith("PE"))
    calls = sum(q["oi"] for k, q in quotes.items() if k.endswith("CE"))
    wide = []
    for k, q in quotes.items():
        bid, ask = q["depth"]["buy"][0]["price"], q["depth"]["sell"][0]["price"]
        if not bid or not ask or (ask - bid) / ((ask + bid) / 2) * 100 > 1:
            wide.append(k)
    agent.decide(s6, f"PCR {puts}/{calls}")
    return Chain(spot, expiry, shown, round(puts / calls, 2) if calls else 0.0, wide)


# ------------------------------------------------------------------ derivatives/greeks.md


def implied_vol(agent: Agent, r: Recipe, option: str, underlying: str) -> tuple[float, float]:
    """/derivatives/greeks steps 1 to 5: (IV, the option price used)."""
    exchange, symbol = option.split(":")
    s1 = step(r, 1, "Resolve the option: `market` mode `search` with `search_mode`")
    row = resolve_row(agent, s1, exchange, symbol)
    s2 = step(r, 2, "Quote the option and its underlying in one `market` mode `quote` call")
    quotes = agent.call(s2, "market", "quote", instruments=[option, underlying])
    q = quotes[option]
    bid, ask = q["depth"]["buy"][0]["price"], q["depth"]["sell"][0]["price"]
    price = (bid + ask) / 2 if bid and ask else q["last_price"]
    spot = quotes[underlying]["last_price"]
    s4 = step(r, 4, "Call `calc` mode `greeks` with `legs`, `quote_time`, `model` `black_scholes`")
    answer = calculate(
        {
            "mode": "greeks",
            "model": "black_scholes",
            "rate": 6.5,  # step 3's default
            "dividend_yield": 0,
            "quote_time": q["timestamp"],
            "legs": [
                {
                    "option_type": row["instrument_type"],
                    "strike": float(row["strike"]),
                    "underlying": float(spot),
                    "expiry_date": row["expiry_date"][:10],
                    "option_price": float(price),
                }
            ],
        }
    )
    iv = answer.result["legs"][0]["iv_pct"] / 100
    agent.decide(s4, f"IV {iv:.4f} (calc greeks)")
    return iv, price


# ------------------------------------------------------------------ derivatives/spreads.md


def bull_call_spread(
    agent: Agent, r: Recipe, rec: Recipe, long_leg: str, short_leg: str
) -> tuple[list[str], list[dict[str, Any]]]:
    """/derivatives/spreads: BUY one lot of ``long_leg``, then SELL ``short_leg`` once the
    hedge is COMPLETE (NFO symbols)."""
    s1 = step(r, 1, "Read `portfolio` mode `profile` (NFO or BFO enabled)")
    assert "NFO" in agent.call(s1, "portfolio", "profile")["exchanges"]
    agent.page(s1, "portfolio", "positions")
    s2 = step(r, 2, "Resolve every leg: `market` mode `search` with `search_mode`")
    rows = {leg: resolve_row(agent, s2, "NFO", leg) for leg in (long_leg, short_leg)}
    keys = [f"NFO:{long_leg}", f"NFO:{short_leg}"]
    s3 = step(r, 3, "Quote every leg in one `market` mode `quote` call")
    quotes = agent.call(s3, "market", "quote", instruments=keys)
    buy = snap(quotes[keys[0]]["depth"]["sell"][0]["price"], rows[long_leg]["tick_size"], False)
    sell = snap(quotes[keys[1]]["depth"]["buy"][0]["price"], rows[short_leg]["tick_size"], False)
    s4 = step(r, 4, "net credit per unit = Σ SELL prices − Σ BUY prices (negative = a debit)")
    width = rows[short_leg]["strike"] - rows[long_leg]["strike"]
    debit = round(buy - sell, 2)
    lot = rows[long_leg]["lot_size"]
    agent.decide(s4, f"debit {debit}, max profit {width - debit}")
    agent.call(step(r, 5, "Funds: `portfolio` mode `margins`"), "portfolio", "margins")
    s7 = step(r, 7, "Look for duplicates: `orders` mode `list` and `orders` mode `all_trades`")
    agent.page(s7, "orders", "list")
    agent.page(s7, "orders", "all_trades")
    s6 = step(r, 6, "the long (hedge) leg first, and the short leg only after the hedge is")
    summary = [
        f"1. BUY {lot} ({1} lot) {long_leg} NRML LIMIT {buy:.2f} tag ksBCS1",
        f"2. SELL {lot} ({1} lot) {short_leg} NRML LIMIT ~{sell:.2f} tag ksBCS2, after the hedge "
        "fills, with its own approval",
        f"Net debit {debit:.2f} per unit ({debit * lot:,.2f}); max loss {debit * lot:,.2f}, "
        f"max profit {(width - debit) * lot:,.2f}, breakeven "
        f"{rows[long_leg]['strike'] + debit:.2f}; the margin cannot be known here",
    ]
    agent.decide(s6, "hedge first")
    agent.approve(
        part(
            r,
            "Steps",
            "**Stop for approval.** Do not go on until the user approves this exact plan",
        )
    )
    s9 = step(r, 9, "take a new `market` mode `quote` of every leg")
    agent.call(s9, "market", "quote", instruments=keys)
    agent.page(s9.plus(s7), "orders", "list")
    s10 = step(r, 10, "Place the hedge: call `orders` mode `place` with `variety` `regular`")
    hedge = {
        "variety": "regular", "exchange": "NFO", "tradingsymbol": long_leg,
        "transaction_type": "BUY", "quantity": lot, "product": "NRML", "order_type": "LIMIT",
        "price": buy, "validity": "DAY", "tag": "ksBCS1",
    }  # fmt: skip
    hedge_id = agent.call(s10, "orders", "place", **hedge)["order_id"]
    s11 = step(r, 11, "Confirm the hedge with [Reconcile orders](../orders/reconcile.md) until")
    filled = _filled(agent, rec, hedge_id)
    assert filled["status"] == "COMPLETE", f"{s11}: {filled['status']}"
    s12 = step(r, 12, "a new `market` mode `quote` of the short leg")
    now_bid = agent.call(s12, "market", "quote", instruments=[keys[1]])[keys[1]]
    sell = snap(now_bid["depth"]["buy"][0]["price"], rows[short_leg]["tick_size"], False)
    summary.append(
        f"SELL {filled['filled_quantity']} {short_leg} NRML LIMIT {sell:.2f}; hedge filled "
        f"{filled['filled_quantity']} at {filled['average_price']:.2f}"
    )
    agent.approve(
        part(
            r, "Steps", "**Stop for approval.** Do not go on until the user approves the short leg"
        )
    )
    s13 = step(r, 13, "re-read `portfolio` mode `positions` (the hedge must\n    still be open)")
    agent.page(s13, "portfolio", "positions")
    s14 = step(r, 14, "Place the short leg: call `orders` mode `place` with `variety` `regular`")
    short = {**hedge, "tradingsymbol": short_leg, "transaction_type": "SELL", "price": sell,
             "quantity": filled["filled_quantity"], "tag": "ksBCS2"}  # fmt: skip
    short_id = agent.call(s14, "orders", "place", **short)["order_id"]
    _filled(agent, rec, short_id)
    return summary, [hedge, short]


# ------------------------------------------------------------ daily-review/account-briefing.md


def briefing(agent: Agent, r: Recipe, pos: Recipe) -> list[str]:
    """/daily-review/account-briefing: the briefing's lines that count things."""
    if agent.generation == "grouped":
        status = agent.call(step(r, 1, "Session: `session` mode `status`"), "session", "status")
        assert not status["kite_session_expired"]
    else:
        agent.decide(step(r, 1, "Legacy servers have\n   no status tool"), "profile decides")
    agent.call(step(r, 2, "Profile and funds: `portfolio` mode `profile`"), "portfolio", "profile")
    equity = agent.call(step(r, 2, "`portfolio` mode `margins`"), "portfolio", "margins")["equity"]
    s3 = step(r, 3, "Market context: `market` mode `quote` with `instruments`")
    indices = agent.call(s3, "market", "quote",
                         instruments=["NSE:NIFTY 50", "NSE:NIFTY BANK", "BSE:SENSEX"])  # fmt: skip
    s4 = step(r, 4, "`portfolio` mode `holdings` with `type` `summary`")
    if agent.generation == "legacy-oldest":
        holdings = agent.page(s4, "get_holdings")
    else:
        agent.call(s4, "portfolio", "holdings", type="summary")
        full = step(r, 4, "then `portfolio` mode `holdings` with `type` `full`, paged")
        holdings = agent.page(full, "portfolio", "holdings", type="full")
    value = sum(h["quantity"] * h["last_price"] for h in holdings)
    s5 = step(r, 5, "Positions: `portfolio` mode `positions`, paged")
    rows = agent.page(s5, "portfolio", "positions")
    step(pos, 3, "a key seen only once is a **Net**\n   row")
    keys = [(x["exchange"], x["tradingsymbol"], x["product"]) for x in rows]
    net = [x for i, x in enumerate(rows) if keys[i] not in keys[i + 1 :]]
    agent.call(
        step(r, 6, "Mutual funds: `mutual_funds` mode `holdings`"), "mutual_funds", "holdings"
    )
    s7 = step(r, 7, "Orders and trades: `orders` mode `list` and `orders` mode `all_trades`, paged")
    orders = agent.page(s7, "orders", "list")
    trades = agent.page(s7, "orders", "all_trades")
    s8 = step(r, 8, "`gtt` mode `list` (paged) and `alerts` mode `get` with `uuids` `[]`")
    gtts = agent.page(s8, "gtt", "list")
    alerts = [] if agent.lacks(s8, "alerts", "get") else agent.call(
        s8, "alerts", "get", uuids=[])["alerts"]  # fmt: skip
    by_status: dict[str, int] = {}
    for o in orders:
        by_status[o["status"]] = by_status.get(o["status"], 0) + 1
    nifty = indices["NSE:NIFTY 50"]
    change = (nifty["last_price"] - nifty["ohlc"]["close"]) / nifty["ohlc"]["close"] * 100
    open_net = [x for x in net if x["quantity"]]
    return [
        f"Funds (equity): net {equity['net']:,.2f} (cash {equity['available']['cash']:,.2f}, "
        f"collateral {equity['available']['collateral']:,.2f}, debits "
        f"{equity['utilised']['debits']:,.2f})",
        f"Indices: NIFTY 50 {nifty['last_price']:,.2f} ({change:+.2f}%)",
        f"Holdings: {len(holdings)}, value {value:,.2f}",
        f"Positions: {len(open_net)} open, {len(net) - len(open_net)} closed today",
        f"Orders today: {len(orders)} ("
        + ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
        + f"); trades {len(trades)}",
        f"GTTs: {sum(g['status'] == 'active' for g in gtts)} active; alerts: "
        f"{sum(a['status'] == 'enabled' for a in alerts)} enabled",
    ]


# ------------------------------------------------------------------ holdings/corporate-actions.md


def corporate_action(agent: Agent, r: Recipe, key: str, factor: int, old_qty: int,
                     old_avg: float) -> list[str]:  # fmt: skip
    """/holdings/corporate-actions for a split of ``factor`` new shares per old one, ex today;
    the person says they held ``old_qty`` at ``old_avg`` before."""
    symbol = key.split(":")[1]
    s1 = step(r, 1, "The adjustment factor is new shares per old share")
    agent.decide(s1, f"factor {factor}")
    s2 = step(r, 2, "Expected after the\n   action: quantity × factor and `average_price` ÷ factor")
    if agent.generation == "legacy-oldest":
        rows = agent.page(s2, "get_holdings")
    else:
        rows = agent.page(s2, "portfolio", "holdings", type="full")
    held = next(h for h in rows if h["tradingsymbol"] == symbol)
    adjusted = held["quantity"] == old_qty * factor and abs(
        held["average_price"] - old_avg / factor
    ) < 0.01  # fmt: skip
    lines = [f"Holdings: {'adjusted' if adjusted else 'not adjusted'} "
             f"({held['quantity']} at {held['average_price']:.2f})"]  # fmt: skip
    s3 = step(r, 3, "after the ex-date the price is roughly the old price ÷ factor")
    price = quote_of(agent, step(r, 3, "Take `market` mode `quote`"), key)["last_price"]
    agent.decide(s3, f"price {price}")
    s4 = step(
        r,
        4,
        "An `active` GTT whose trigger\n   was set before the ex-date is now at the wrong level",
    )
    for g in agent.page(step(r, 4, "Read `gtt` mode `list` (paged)"), "gtt", "list"):
        c = g["condition"]
        if c["tradingsymbol"] != symbol or g["status"] != "active":
            continue
        leg = g["orders"][0]
        lines.append(
            f"GTT {g['id']}: trigger {c['trigger_values'][0]:.2f} is at the old level -> "
            f"re-create at {c['trigger_values'][0] / factor:.2f} for {leg['quantity'] * factor} "
            "(or delete), through Place, modify or delete a GTT"
        )
        agent.decide(s4, lines[-1])
    s5 = step(r, 5, "Read `alerts` mode `get` with `uuids` `[]`")
    if not agent.lacks(s5, "alerts", "get"):
        for a in agent.call(s5, "alerts", "get", uuids=[])["alerts"]:
            if a["lhs_tradingsymbol"] == symbol and a["status"] == "enabled":
                fires = a["operator"] in ("<=", "<") and price <= a["rhs_constant"]
                lines.append(
                    f"Alert {a['name']!r}: {a['operator']} {a['rhs_constant']:g} is at the old "
                    f"level{' and fires at once' if fires else ''}"
                )
    s6 = step(
        r,
        6,
        "A close-to-open\n   jump near the factor on the ex-date means the series is unadjusted",
    )
    token = held["instrument_token"]
    now = agent.now
    start = now - timedelta(days=21)
    days = agent.call(
        step(r, 6, "`market` mode `historical` with `instrument_token`"), "market", "historical",
        instrument_token=token, interval="day", from_date=f"{start:%Y-%m-%d %H:%M:%S}",
        to_date=f"{now:%Y-%m-%d %H:%M:%S}",
    )  # fmt: skip
    jumps = [b["open"] / a["close"] for a, b in pairwise(days)]
    unadjusted = any(abs(j - 1 / factor) < 0.05 for j in jumps)
    lines.append(f"Candles: {'unadjusted: divide earlier prices' if unadjusted else 'adjusted'}")
    agent.decide(s6, lines[-1])
    return lines


# ------------------------------------------------------------------ orders/exit.md, every row


def exit_every_position(agent: Agent, r: Recipe, pos: Recipe) -> list[dict[str, Any]]:
    """/orders/exit for "square off everything": the Net rows in the order step 1's `calc`
    mode `exit_plan` gives (shorts before the longs that hedge them), a LIMIT at the touch,
    each with its own approval and re-check, each next leg only after the previous one is
    `COMPLETE` (issue 43 X2)."""
    s1 = step(r, 1, "For a position, read `portfolio` mode `positions` (paged)")
    rows = agent.page(s1, "portfolio", "positions")
    step(pos, 3, "a key seen only once is a **Net**\n   row")
    keys = [(x["exchange"], x["tradingsymbol"], x["product"]) for x in rows]
    net = [x for i, x in enumerate(rows) if keys[i] not in keys[i + 1 :] and x["quantity"]]
    plan = step(r, 1, "call `calc` mode `exit_plan` with `positions`")
    steps = calculate(
        {"mode": "exit_plan", "positions": [
            {k: x[k] for k in ("tradingsymbol", "exchange", "product", "quantity")} for x in net
        ]}
    ).result["steps"]  # fmt: skip
    agent.decide(
        plan, " then ".join(f"{s['transaction_type']} {s['tradingsymbol']}" for s in steps)
    )
    after = step(r, 1, "Place\n   each next leg only after [Reconcile](reconcile.md) shows")
    by_symbol = {x["tradingsymbol"]: x for x in net}
    sent_all: list[dict[str, Any]] = []
    for planned in steps:
        held = by_symbol[planned["tradingsymbol"]]
        symbol, qty = held["tradingsymbol"], held["quantity"]
        key = f"{held['exchange']}:{symbol}"
        s3 = step(r, 3, "Resolve the instrument with `market` mode `search` with `search_mode`")
        row = resolve_row(agent, s3, held["exchange"], symbol)
        quote = quote_of(agent, step(r, 3, "take `market` mode `quote` for the best bid"), key)
        s5 = step(r, 5, "`orders` mode `list` and `orders` mode `all_trades`")
        agent.page(s5, "orders", "list")
        agent.page(s5, "orders", "all_trades")
        agent.page(step(r, 5, "active GTTs from `gtt` mode `list` on the symbol"), "gtt", "list")
        side = "SELL" if qty > 0 else "BUY"
        touch = quote["depth"]["buy" if side == "SELL" else "sell"][0]["price"]
        price = snap(touch, row["tick_size"], down=side == "SELL")
        lots = abs(qty) // row["lot_size"]
        agent.decide(step(r, 7, "Present the summary"), f"{side} {abs(qty)} {symbol}: {lots} lots")
        agent.approve(
            part(r, "Steps", "**Stop for approval.** Do not go on until the user approves this")
        )
        agent.page(step(r, 8, "re-read `portfolio` mode `positions`"), "portfolio", "positions")
        quote_of(agent, step(r, 8, "take a new `market` mode `quote`"), key)
        sent = {
            "variety": "regular", "exchange": held["exchange"], "tradingsymbol": symbol,
            "transaction_type": side, "quantity": abs(qty), "product": held["product"],
            "order_type": "LIMIT", "price": price, "tag": f"ksX{symbol[:12]}",
        }  # fmt: skip
        agent.call(step(r, 9, "Call `orders` mode `place` with `variety` `regular`"), "orders",
                   "place", **sent)  # fmt: skip
        agent.wait(seconds=5)
        reconciled = step(recipe("orders/reconcile.md"), 1, "`orders` mode `list` with `from` 0")
        mine = [o for o in agent.page(reconciled, "orders", "list") if o["tag"] == sent["tag"]]
        assert mine[-1]["status"] == "COMPLETE", f"{after}: stop, {mine[-1]['status']}"
        agent.decide(after, f"{symbol} COMPLETE")
        sent_all.append(sent)
    return sent_all
