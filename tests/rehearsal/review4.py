"""The scripted agents of the recipes issue 43 added (catalog-review-4 §6), in the style of
scripts.py: each decision cites its recipe text, each call goes through the agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kite_skills.calc import calculate

from .agent import Agent, Recipe, part, recipe, step
from .scripts import TERMINAL, quote_of, resolve_row, snap

# ------------------------------------------------------------------ orders/position-size.md


@dataclass(frozen=True)
class Sized:
    lots: int
    quantity: int
    risk: float
    line: str


def position_size(agent: Agent, r: Recipe, key: str, budget: float, stop_below: float) -> Sized:
    """/orders/position-size: a long at the touch, the stop ``stop_below`` rupees under it."""
    exchange, symbol = key.split(":")
    step(r, 1, "Get the budget: an amount in rupees")
    s2 = step(r, 2, "Resolve the instrument with `market` mode `search` with `search_mode`")
    row = resolve_row(agent, s2, exchange, symbol)
    quote = quote_of(agent, step(r, 2, "take `market` mode `quote` for the"), key)
    entry = snap(quote["depth"]["sell"][0]["price"], row["tick_size"], down=True)
    stop = snap(entry - stop_below, row["tick_size"], down=False)
    agent.decide(step(r, 3, "A long's stop is below the entry"), f"entry {entry}, stop {stop}")
    s4 = step(r, 4, "Size: call `calc` mode `size` with `entry`, `stop`, `risk_amount`")
    sized = calculate(
        {"mode": "size", "entry": entry, "stop": stop, "risk_amount": budget,
         "lot_size": row["lot_size"], "multiplier": row.get("multiplier") or 1}
    ).result  # fmt: skip
    agent.decide(s4, f"{sized['lots']} lots")
    if sized["lots"] == 0:
        line = (
            f"one lot risks {float(sized['risk_per_lot']):,.2f}, above your budget "
            f"{budget:,.2f}: refused"
        )
        agent.decide(step(r, 5, "if one lot already risks more than the budget (0 lots), refuse"),
                     line)  # fmt: skip
        return Sized(0, 0, 0.0, line)
    margins = agent.call(step(r, 6, "Funds: read `portfolio` mode `margins`"), "portfolio",
                         "margins")  # fmt: skip
    assert margins["equity"]["net"] > 0
    line = (
        f"{sized['quantity']} {symbol} ({sized['lots']} lots): risk {float(sized['risk']):,.2f} "
        f"of {budget:,.2f}, stop {stop} ({(entry - stop) / entry * 100:.2f}% below {entry})"
    )
    agent.decide(step(r, 7, "Report the quantity, the lots, the risk in rupees"), line)
    return Sized(sized["lots"], sized["quantity"], float(sized["risk"]), line)


# ------------------------------------------------------------------ holdings/rebalance.md


@dataclass(frozen=True)
class Rebalanced:
    plan: list[str]
    gate: list[str]
    announced: list[str]
    sent: list[dict[str, Any]]


def rebalance(agent: Agent, r: Recipe, targets: dict[str, float]) -> Rebalanced:
    """/holdings/rebalance to ``targets`` (symbol -> weight, the rest cash): the plan, the
    TPIN gate for each sell, and each order approved on its own."""
    s1 = step(r, 1, "Read `portfolio` mode `holdings` (paged)")
    rows = {h["tradingsymbol"]: h for h in agent.page(s1, "portfolio", "holdings")}
    margins = agent.call(step(r, 1, "Read `portfolio` mode `margins`"), "portfolio", "margins")
    cash = margins["equity"]["net"] - margins["equity"]["available"]["collateral"]
    value = {s: rows[s]["quantity"] * rows[s]["last_price"] for s in targets}
    total = sum(h["quantity"] * h["last_price"] for h in rows.values()) + cash
    s2 = step(r, 2, "Quantity to trade = (target − current)")
    trades = {s: int((targets[s] * total - value[s]) / rows[s]["last_price"]) for s in targets}
    agent.decide(s2, f"trades {trades}")
    s3 = step(r, 3, "Read `portfolio` mode `positions` for today's CNC rows")
    agent.page(s3, "portfolio", "positions")
    consent = agent.call(step(r, 3, "read `portfolio` mode `profile` `meta.demat_consent`"),
                         "portfolio", "profile")["meta"]["demat_consent"]  # fmt: skip
    gate = []
    for symbol, qty in sorted(trades.items(), key=lambda kv: kv[1]):
        if qty >= 0:
            continue
        held = rows[symbol]
        answer = calculate(
            {"mode": "sellable", "holding": {k: held[k] for k in (
                "tradingsymbol", "quantity", "t1_quantity", "realised_quantity",
                "used_quantity", "authorised_quantity", "collateral_quantity") if k in held},
             "demat_consent": consent}
        ).result  # fmt: skip
        if answer["tpin_needed"] and held.get("authorised_quantity", 0) < -qty:
            gate.append(f"SELL {-qty} {symbol}: TPIN authorisation needed today ({consent})")
    if gate:
        drop = step(r, 3, "A sell that cannot go through drops its buys too")
        agent.decide(drop, "; ".join(gate))
    s5 = step(r, 5, "Look for duplicates: `orders` mode `list` and `orders` mode `all_trades`")
    agent.page(s5, "orders", "list")
    agent.page(s5, "orders", "all_trades")
    order = sorted(trades.items(), key=lambda kv: kv[1])  # sells (negative) first
    announced: list[str] = []  # in the plan the person approves, not a stop
    resize = step(r, 3, "A sell\n   that leaves fewer demat shares than an active SELL GTT")
    gtts = agent.page(resize, "gtt", "list")
    for symbol, qty in order:
        left = rows[symbol]["realised_quantity"] + min(qty, 0)
        for g in gtts:
            legs = g["orders"]
            if (g["status"] == "active" and g["condition"]["tradingsymbol"] == symbol
                    and legs[0]["transaction_type"] == "SELL"
                    and max(leg["quantity"] for leg in legs) > left):  # fmt: skip
                announced.append(
                    f"GTT {g['id']} {symbol} covers {max(x['quantity'] for x in legs)} > "
                    f"{left} left after the sell: it fails when it triggers; resize it "
                    "(its own approval)"
                )
                agent.decide(resize, announced[-1])
    plan = [f"{'SELL' if q < 0 else 'BUY'} {abs(q)} {s} CNC LIMIT" for s, q in order if q != 0]
    agent.decide(step(r, 5, "Present one\n   plan: sells then buys"), "; ".join(plan))
    sent: list[dict[str, Any]] = []
    if gate:
        return Rebalanced(plan + announced, gate, announced, sent)
    for symbol, qty in order:
        if qty == 0:
            continue
        side = "SELL" if qty < 0 else "BUY"
        key = f"{rows[symbol]['exchange']}:{symbol}"
        touch = quote_of(agent, step(r, 5, "`market` mode `quote`"), key)["depth"]
        price = touch["buy" if side == "SELL" else "sell"][0]["price"]
        agent.decide(step(r, 6, "present its summary"), f"{side} {abs(qty)} {symbol} @ {price}")
        agent.approve(part(r, "Steps", "**Stop for approval.** Do not go on until the user "
                                       "approves this exact order"))  # fmt: skip
        s7 = step(r, 7, "Re-check right before the write: take a new `market` mode `quote`")
        quote_of(agent, s7, key)
        agent.page(s7.plus(s5), "orders", "list")  # "repeat the duplicates of step 5"
        agent.page(s7.plus(s5), "orders", "all_trades")
        if side == "BUY":
            agent.call(s7, "portfolio", "margins")
        args = {
            "variety": "regular", "exchange": rows[symbol]["exchange"], "tradingsymbol": symbol,
            "transaction_type": side, "quantity": abs(qty), "product": "CNC",
            "order_type": "LIMIT", "price": price, "tag": f"ksRB{symbol[:10]}",
        }  # fmt: skip
        agent.call(step(r, 8, "Call `orders` mode `place` with `variety` `regular`"), "orders",
                   "place", **args)  # fmt: skip
        step(r, 9, "Reconcile with [Reconcile orders](../orders/reconcile.md)")
        rows_now = agent.page(reconcile_list_step(), "orders", "list")
        mine = [o for o in rows_now if o["tag"] == args["tag"]]
        assert mine and mine[-1]["status"] in (*TERMINAL, "OPEN"), mine
        sent.append(args)
    return Rebalanced(plan + announced, gate, announced, sent)


def reconcile_list_step() -> Any:
    """Reconcile's own first step (the recipes link it): list today's orders."""
    return step(recipe("orders/reconcile.md"), 1, "`orders` mode `list` with `from` 0")


# ------------------------------------------------------------------ orders/square-off-all.md


def square_off_all(agent: Agent, r: Recipe) -> list[dict[str, Any]]:
    """/orders/square-off-all: the Net rows planned by `calc` mode `exit_plan` (shorts before
    the longs of their underlying), one approved LIMIT at the touch per order, and each next
    order only after the previous one is `COMPLETE`."""
    s1 = step(r, 1, "Read `portfolio` mode `positions` (paged) and keep the Net rows")
    rows = agent.page(s1, "portfolio", "positions")
    keys = [(x["exchange"], x["tradingsymbol"], x["product"]) for x in rows]
    net = [x for i, x in enumerate(rows) if keys[i] not in keys[i + 1 :] and x["quantity"]]
    s2 = step(r, 2, "Resolve each row with `market` mode `search` with `search_mode`")
    found = {x["tradingsymbol"]: resolve_row(agent, s2, x["exchange"], x["tradingsymbol"])
             for x in net}  # fmt: skip
    plan = calculate(
        {"mode": "exit_plan", "positions": [
            {"tradingsymbol": x["tradingsymbol"], "exchange": x["exchange"],
             "product": x["product"], "quantity": x["quantity"],
             "lot_size": found[x["tradingsymbol"]]["lot_size"],
             "freeze_quantity": found[x["tradingsymbol"]]["freeze_quantity"]} for x in net]}
    ).result  # fmt: skip
    agent.decide(step(r, 2, "Plan: call `calc` mode `exit_plan` with `positions`"),
                 f"{len(plan['steps'])} steps")  # fmt: skip
    s3 = step(r, 3, "Look for duplicates and orphans: `orders` mode `list`, `orders` mode")
    agent.page(s3, "orders", "list")
    agent.page(s3, "orders", "all_trades")
    agent.page(s3, "gtt", "list")
    sent_all: list[dict[str, Any]] = []
    for planned in plan["steps"]:
        symbol, side = planned["tradingsymbol"], planned["transaction_type"]
        key = f"{planned['exchange']}:{symbol}"
        for quantity in planned["orders"]:
            depth = quote_of(agent, step(r, 5, "LIMIT at the touch from `market` mode `quote`"),
                             key)["depth"]  # fmt: skip
            touch = depth["buy" if side == "SELL" else "sell"][0]["price"]
            price = snap(touch, found[symbol]["tick_size"], down=side == "SELL")
            agent.decide(step(r, 6, "present its own summary"), f"{side} {quantity} {symbol}")
            agent.approve(part(r, "Steps", "**Stop for approval.** Do not go on until the "
                                           "user approves this exact order"))  # fmt: skip
            s7 = step(r, 7, "re-read `portfolio` mode `positions`, take a new")
            agent.page(s7, "portfolio", "positions")
            quote_of(agent, s7, key)
            again = s7.plus(s3)  # "re-check ... the duplicates of step 3"
            agent.page(again, "orders", "list")
            agent.page(again, "orders", "all_trades")
            agent.page(again, "gtt", "list")
            sent = {
                "variety": "regular", "exchange": planned["exchange"], "tradingsymbol": symbol,
                "transaction_type": side, "quantity": quantity, "product": planned["product"],
                "order_type": "LIMIT", "price": price, "tag": f"ksSQ{symbol[-12:]}",
            }  # fmt: skip
            agent.call(step(r, 8, "Call `orders` mode `place` with `variety` `regular`"),
                       "orders", "place", **sent)  # fmt: skip
            s9 = step(r, 9, "Go on only when it\n   is `COMPLETE`")
            agent.wait(seconds=5)
            mine = [o for o in agent.page(reconcile_list_step(), "orders", "list")
                    if o["tag"] == sent["tag"]]  # fmt: skip
            assert mine[-1]["status"] == "COMPLETE", f"{s9}: stop, {mine[-1]['status']}"
            sent_all.append(sent)
    agent.page(step(r, 10, "re-read `portfolio` mode `positions`"), "portfolio", "positions")
    return sent_all


# ------------------------------------------------------------------ daily-review/journal.md


def journal(agent: Agent, r: Recipe) -> list[str]:
    """/daily-review/journal: today's orders by tag, slippage of filled LIMITs, rejections."""
    s1 = step(r, 1, "Read `orders` mode `list` and `orders` mode `all_trades` (both paged)")
    orders = agent.page(s1, "orders", "list")
    agent.page(s1, "orders", "all_trades")
    s2 = step(r, 2, "Slippage for each filled LIMIT order")
    lines = []
    for o in orders:
        if o["status"] == "COMPLETE" and o["order_type"] == "LIMIT":
            sign = 1 if o["transaction_type"] == "BUY" else -1
            unit = round(sign * (o["average_price"] - o["price"]), 2)
            lines.append(
                f"{o['tag'] or 'untagged'}: {o['transaction_type']} {o['filled_quantity']} "
                f"{o['tradingsymbol']} slippage {unit:.2f} a unit, "
                f"{unit * o['filled_quantity']:.2f}"
            )
            agent.decide(s2, lines[-1])
    s3 = step(r, 3, "the last row of `orders`\n   mode `history` with `order_id`")
    for o in orders:
        if o["status"] == "REJECTED":
            last = agent.call(s3, "orders", "history", order_id=o["order_id"])[-1]
            lines.append(f"rejected {o['tradingsymbol']}: {last['status_message']}")
            agent.decide(s3, lines[-1])
    s4 = step(r, 4, "Realised P&L: from the Net rows of `portfolio` mode `positions`")
    agent.page(s4, "portfolio", "positions")
    return lines


# ------------------------------------------------------------- daily-review/exposure-audit.md


def exposure_audit(agent: Agent, r: Recipe) -> list[str]:
    """/daily-review/exposure-audit: the unprotected rows and the margin use."""
    s1 = step(r, 1, "Read, each paged: `portfolio` mode `positions`")
    rows = agent.page(s1, "portfolio", "positions")
    keys = [(x["exchange"], x["tradingsymbol"], x["product"]) for x in rows]
    net = [x for i, x in enumerate(rows) if keys[i] not in keys[i + 1 :] and x["quantity"]]
    holdings = agent.page(s1, "portfolio", "holdings")
    stops = [o for o in agent.page(s1, "orders", "list") if o["status"] == "TRIGGER PENDING"]
    gtts = [g for g in agent.page(s1, "gtt", "list") if g["status"] == "active"]
    margins = agent.call(s1, "portfolio", "margins")
    agent.call(s1, "portfolio", "profile")
    covered = {o["tradingsymbol"] for o in stops} | {g["condition"]["tradingsymbol"] for g in gtts}
    s3 = step(r, 3, "a position or holding with **no stop or GTT** on the opposite side")
    findings = [
        f"no stop or GTT: {x['tradingsymbol']} {x['quantity']}"
        for x in [*net, *holdings]
        if x["tradingsymbol"] not in covered
    ]
    for line in findings:
        agent.decide(s3, line)
    equity = margins["equity"]
    used = equity["utilised"]["debits"]
    use = used / (used + equity["net"]) * 100 if used + equity["net"] > 0 else 0.0
    findings.append(f"margin use {use:.1f}%")
    agent.decide(step(r, 3, "**margin use**: `utilised.debits` as a share"), findings[-1])
    return findings


# ------------------------------------------------------------------ daily-review/pre-market.md


def pre_market(agent: Agent, r: Recipe) -> list[str]:
    """/daily-review/pre-market: queued AMOs, GTTs within 1% of their trigger, the 50:50 rule."""
    agent.page(step(r, 1, "today's expiries come from `expiry_date`"), "portfolio", "positions")
    s4 = step(r, 4, "Queued AMOs: `orders` mode `list`, status `AMO REQ RECEIVED`")
    amos = [o for o in agent.page(s4, "orders", "list") if o["status"] == "AMO REQ RECEIVED"]
    lines = [f"AMOs queued: {len(amos) or 'none'}"]
    s5 = step(r, 5, "GTTs near their trigger: `gtt` mode `list` (`active`), a fresh `market`")
    gtts = [g for g in agent.page(s5, "gtt", "list") if g["status"] == "active"]
    keys = sorted({f"{g['condition']['exchange']}:{g['condition']['tradingsymbol']}" for g in gtts})
    ltp = agent.call(s5, "market", "ltp", instruments=keys) if keys else {}
    for g in gtts:
        key = f"{g['condition']['exchange']}:{g['condition']['tradingsymbol']}"
        last = ltp[key]["last_price"]
        near = min(abs(v - last) / last * 100 for v in g["condition"]["trigger_values"])
        lines.append(f"GTT {g['id']} {key}: {near:.2f}% from its trigger" + (
            " (may fire at the open)" if near <= 1 else ""))  # fmt: skip
        agent.decide(s5, lines[-1])
    agent.page(step(r, 6, "(`portfolio` mode\n   `holdings`)"), "portfolio", "holdings")
    s7 = step(r, 7, "Margin: `portfolio` mode `margins`")
    equity = agent.call(s7, "portfolio", "margins")["equity"]
    used = equity["utilised"]["span"] + equity["utilised"]["exposure"]
    cash = equity["available"]["cash"]
    short = max(used / 2 - cash, 0.0)
    lines.append(f"net {equity['net']:,.2f}; cash shortfall {short:,.2f}")
    agent.decide(s7, lines[-1])
    return lines


# ------------------------------------------------------------------ orders/charges.md


def charges_of_todays_fills(agent: Agent, r: Recipe, trade_date: str) -> list[dict[str, Any]]:
    """/orders/charges for each of today's fills (a delivery buy, as the default has)."""
    s1 = step(r, 1, "For today's fills read `orders` mode\n   `all_trades` (paged)")
    fills = agent.page(s1, "orders", "all_trades")
    s3 = step(r, 3, "Call `calc` mode `charges` with `segment`, `exchange`, `quantity`")
    out = []
    for f in fills:
        if f["exchange"] not in ("NSE", "BSE"):
            continue
        side = "buy_price" if f["transaction_type"] == "BUY" else "sell_price"
        answer = calculate(
            {"mode": "charges", "segment": "equity_delivery", "exchange": f["exchange"],
             "quantity": f["quantity"], side: f["average_price"], "trade_date": trade_date}
        ).result  # fmt: skip
        agent.decide(s3, f"{f['tradingsymbol']}: total {answer['total']}")
        out.append({"fill": f, "charges": answer})
    return out


# ------------------------------------------------------------------ derivatives/payoff.md


def net_rows(agent: Agent, where: Any) -> list[dict[str, Any]]:
    rows = agent.page(where, "portfolio", "positions")
    keys = [(x["exchange"], x["tradingsymbol"], x["product"]) for x in rows]
    return [x for i, x in enumerate(rows) if keys[i] not in keys[i + 1 :] and x["quantity"]]


def payoff_of_the_book(agent: Agent, r: Recipe) -> dict[str, Any]:
    """/derivatives/payoff at expiry for the Net F&O rows (options and futures)."""
    net = [
        x
        for x in net_rows(agent, step(r, 1, "Read `portfolio` mode `positions` (paged)"))
        if x["exchange"] in ("NFO", "BFO")
    ]
    s2 = step(r, 2, "Resolve each contract with `market` mode `search` with `search_mode`")
    legs = []
    for x in net:
        row = resolve_row(agent, s2, x["exchange"], x["tradingsymbol"])
        kind = row["instrument_type"]
        leg = {"instrument": kind, "side": "BUY" if x["quantity"] > 0 else "SELL",
               "price": x["average_price"], "quantity": abs(x["quantity"])}  # fmt: skip
        if kind in ("CE", "PE"):
            leg["strike"] = row["strike"]
        legs.append(leg)
    keys = [f"{x['exchange']}:{x['tradingsymbol']}" for x in net]
    agent.call(step(r, 2, "quote every leg and the same-expiry\n   future in one"), "market",
               "quote", instruments=keys)  # fmt: skip
    s3 = step(r, 3, "Payoff at expiry: call `calc` mode `payoff` with `legs`")
    result = calculate({"mode": "payoff", "legs": legs}).result
    agent.decide(s3, f"max loss {result['max_loss']}")
    return result


# ------------------------------------------------------------------ derivatives/expiry-day.md


def expiring_today(agent: Agent, r: Recipe) -> list[str]:
    """/derivatives/expiry-day steps 1 and 2: which Net rows expire on the clock's date."""
    s1 = step(r, 1, "Never read the expiry off the symbol")
    today = agent.now.date().isoformat()
    out = []
    for x in net_rows(agent, s1):
        if x["exchange"] not in ("NFO", "BFO", "MCX"):
            continue
        row = resolve_row(agent, s1, x["exchange"], x["tradingsymbol"])
        expiry = str(row["expiry_date"])[:10]
        line = f"{x['tradingsymbol']} expires {expiry}" + (" (today)" if expiry == today else "")
        agent.decide(step(r, 2, "Go by\n   `expiry_date`, not by the weekday"), line)
        out.append(line)
    return out
