"""``Simulation``: a fake Kite Connect over a scenario, driven by ``advance_to``."""

from __future__ import annotations

import heapq
import json
from datetime import date, datetime, time, timedelta
from typing import Any, Literal

from . import gtt as gtt_rules
from . import rules, sessions
from .alerts import Alert
from .clock import IST, ist, kite_ts
from .engine import WORKING, Engine, Order
from .errors import KiteConnectError, input_error
from .events import Event, Note
from .gtt import Gtt
from .instruments import Instrument, InstrumentFacts, master_for
from .market import Market
from .order_request import OrderRequest
from .order_rules import (
    ALERT_COUNT_RULES,
    ALERT_LOOKUP_RULES,
    ALERT_RULES,
    CONVERSION_RULES,
    GTT_CHANGE_RULES,
    GTT_COUNT_RULES,
    GTT_LOOKUP_RULES,
    MIS_RULES,
    ORDER_LOOKUP_RULES,
    AlertCase,
    ConversionCase,
    check,
)
from .portfolio import Holding, Position, margin_for, total
from .responses import (
    AlertRow,
    AllMargins,
    BasketMargins,
    BasketTotal,
    Candle,
    Charges,
    GttLegResult,
    GttResponse,
    GttRow,
    HoldingCompact,
    HoldingRow,
    HoldingsSummary,
    Margins,
    MfHolding,
    OrderMargins,
    OrderResponse,
    OrderResult,
    OrderRow,
    PositionRow,
    Positions,
    Profile,
    Quote,
    QuoteLtp,
    QuoteOhlc,
    TradeRow,
)
from .scenario import Scenario
from .watch import Watch

INTERVALS: dict[str, int | None] = {
    "minute": 1,
    "3minute": 3,
    "5minute": 5,
    "10minute": 10,
    "15minute": 15,
    "30minute": 30,
    "60minute": 60,
    "day": None,
}
# Kite's longest range per request for each interval (Kite Connect historical API docs, as
# quoted on the Kite forum). The error text is UNVERIFIED.
MAX_DAYS = {
    "minute": 60,
    "3minute": 100,
    "5minute": 100,
    "10minute": 100,
    "15minute": 200,
    "30minute": 200,
    "60minute": 400,
    "day": 2000,
}
_GROUPS = (("NSE", "BSE"), ("NFO", "BFO"), ("MCX",))


class Simulation:
    def __init__(self, scenario: Scenario, start: datetime | None = None) -> None:
        self.scenario = scenario
        self.day = scenario.clock.date()
        self.master = master_for(self.day)
        self.market = Market(self.master, self.day, dict(scenario.market))
        self.user_id = str(scenario.profile.get("user_id", "ZS0001"))
        self.engine = Engine(
            self.master,
            self.market,
            dict(scenario.funds),
            scenario.demat_consent,
            self.user_id,
            scenario.clock,
        )
        self.gtts: dict[int, Gtt] = {}
        self.alerts: dict[str, Alert] = {}
        self._gtt_seq = 100000
        self._alert_seq = 0
        self._cursor = ist(scenario.clock)
        self.notes: list[Note] = []  # events and watch findings not yet taken by the adapter
        self.book_reads: list[int] = []  # orders placed before each read of the order book
        self._load()
        clock = self._cursor
        if sessions.is_trading_day(clock.date()):
            for group in _GROUPS:  # a scenario that starts past the square-off time
                cut = sessions.square_off_time(group[0], clock.date())
                if cut <= clock:
                    self.engine.now = cut
                    self.engine.square_off(group, cut)
        self.engine.now = self._cursor
        self.engine.events.clear()  # the scenario's own history is not news
        self.watch = Watch(self)
        self.notes.extend(self.watch.look("event"))  # what the account starts exposed to
        if start is not None:
            start = ist(start)
            if start > self._cursor:
                self.advance_to(start)
            else:
                self._cursor = start
                self.engine.now = start

    # ----- loading the scenario -------------------------------------------------------------
    def _inst(self, key: str) -> Instrument:
        inst = self.master.by_key(key)
        assert inst is not None, key
        return inst

    def _load(self) -> None:
        sc = self.scenario
        for row in sc.holdings:
            inst = self._inst(row["key"])
            self.engine.holdings[inst.key] = Holding(
                inst=inst,
                quantity=row["quantity"],
                t1_quantity=row["t1_quantity"],
                realised_quantity=row["realised_quantity"],
                used_quantity=row["used_quantity"],
                authorised_quantity=row["authorised_quantity"],
                authorised_date=row["authorised_date"]
                or (
                    kite_ts(datetime.combine(self.day, time(7, 5), IST))
                    if row["authorised_quantity"]
                    else ""
                ),
                collateral_quantity=row["collateral_quantity"],
                collateral_type=row["collateral_type"],
                average_price=row["average_price"],
                opening_quantity=row["opening_quantity"] or row["quantity"],
            )
        for row in sc.positions:
            inst = self._inst(row["key"])
            pos = self.engine.position(inst, row["product"])
            pos.overnight_quantity = row["quantity"]
            pos.overnight_price = row["average_price"] or self.market.prev_close(inst, self.day)
        for row in sorted(sc.orders, key=lambda r: r["at"]):
            self._seed_order(row)
        for row in sc.gtts:
            inst = self._inst(row["key"])
            created = row["created_at"] or datetime.combine(
                sessions.previous_trading_day(self.day), time(10, 0), IST
            )
            self._gtt_seq += 1
            self.gtts[self._gtt_seq] = Gtt(
                id=self._gtt_seq,
                inst=inst,
                type=row["type"],
                trigger_values=list(row["trigger_values"]),
                last_price=row["last_price"] or self.market.prev_close(inst, self.day),
                orders=list(row["orders"]),
                created_at=created,
                updated_at=created,
                status=row["status"],
                user_id=self.user_id,
            )
        for row in sc.alerts:
            inst = self._inst(row["key"])
            rhs = None
            if row["rhs_type"] == "instrument":
                rhs = self.master.for_alert(row["rhs_exchange"], row["rhs_tradingsymbol"])
            created = datetime.combine(sessions.previous_trading_day(self.day), time(10, 0), IST)
            alert = self._new_alert(
                row["name"],
                row["type"],
                inst,
                row["operator"],
                row["rhs_type"],
                row["rhs_constant"],
                rhs,
                row["basket"],
                created,
            )
            alert.status = row["status"]

    def _seed_order(self, row: dict[str, Any]) -> None:
        eng = self.engine
        at: datetime = row["at"]
        eng.now = at
        inst = self._inst(row["key"])
        order = Order(
            order_id=eng._next_order_id(),
            inst=inst,
            variety=row["variety"],
            transaction_type=row["transaction_type"],
            quantity=row["quantity"],
            product=row["product"],
            order_type=row["order_type"],
            price=row["price"],
            trigger_price=row["trigger_price"],
            validity=row["validity"],
            validity_ttl=0,
            disclosed_quantity=0,
            market_protection=row["market_protection"],
            tag=row["tag"],
            placed_at=at,
            placed_by=self.user_id,
        )
        if order.product == "CNC" and order.transaction_type == "SELL" and inst.is_equity:
            try:
                order.meta["_alloc"] = eng._check_holdings(inst, order.quantity, False)
            except KiteConnectError:  # the scenario says it was accepted: take demat shares
                order.meta["_alloc"] = {"t1": 0, "today": 0, "demat": order.quantity}
        eng.orders[order.order_id] = order
        order.record("PUT ORDER REQ RECEIVED", at)
        order.record("VALIDATION PENDING", at)
        status = row["status"]
        if status == "REJECTED":
            order.record(
                "REJECTED",
                at,
                row["status_message"]
                or rules.INSUFFICIENT_FUNDS.format(
                    required=order.quantity * (order.price or eng.ltp(inst)), available=0.0
                ),
            )
            return
        order.record("OPEN PENDING", at)
        order.exchange_order_id = eng._next_exchange_id()
        order.exchange_timestamp = at
        order.exchange_update_timestamp = at
        order.limit_price = eng._limit_for(order, eng.ltp(inst))
        order.record("TRIGGER PENDING" if status == "TRIGGER PENDING" else "OPEN", at)
        filled = row["filled_quantity"]
        if filled < 0:
            filled = order.quantity if status == "COMPLETE" else 0
        if filled:
            price = row["average_price"] or row["price"] or eng.ltp(inst)
            eng.fill(order, filled, price, at)
        if status == "CANCELLED" and order.status != "COMPLETE":
            eng._cancel(order, at, row["status_message"] or None)

    # ----- time -----------------------------------------------------------------------------
    @property
    def now(self) -> datetime:
        return self._cursor

    def _watched(self) -> set[int]:
        tokens = {
            o.inst.instrument_token
            for o in self.engine.orders.values()
            if o.status in ("OPEN", "TRIGGER PENDING")
        }
        tokens |= {g.inst.instrument_token for g in self.gtts.values() if g.status == "active"}
        for alert in self.alerts.values():
            if alert.status == "enabled":
                tokens.add(alert.inst.instrument_token)
        return tokens

    def advance_to(self, when: datetime) -> None:
        """Process every event up to ``when`` in time order (ticks, AMO release, square-off,
        session close, TTL expiry). An earlier ``when`` is ignored."""
        when = ist(when).replace(microsecond=0)
        start = self._cursor
        if when <= start:
            return
        heap: list[tuple[datetime, int, int, str, Any]] = []
        seq = 0

        def push(at: datetime, prio: int, kind: str, payload: Any) -> None:
            nonlocal seq
            seq += 1
            heapq.heappush(heap, (at, prio, seq, kind, payload))

        day = start.date()
        while day <= when.date():
            midnight = datetime.combine(day, time(0, 0), IST)
            if sessions.is_trading_day(day) and start < midnight <= when:
                push(midnight, -1, "rollover", None)
            if sessions.is_trading_day(day):
                for group in _GROUPS:
                    window = sessions.session(group[0], day)
                    assert window is not None
                    cut = sessions.square_off_time(group[0], day)
                    if start < cut <= when:
                        push(cut, 2, "squareoff", group)
                    if start < window[1] <= when:
                        push(window[1], 3, "close", group)
            day += timedelta(days=1)
        for order in self.engine.orders.values():
            if order.release_at is not None and start < order.release_at <= when:
                push(order.release_at, 0, "release", order.order_id)
            if order.expires_at is not None and start < order.expires_at <= when:
                push(order.expires_at, 4, "ttl", order.order_id)
        watched: set[int] = set()

        def watch(after: datetime) -> None:
            for token in sorted(self._watched() - watched):
                watched.add(token)
                inst = self.master.by_token(token)
                assert inst is not None
                for tick in self.market.ticks_between(inst, after, when):
                    push(tick.at, 1, "tick", (inst, tick.price, tick.liquidity))

        watch(start)
        while heap:
            at, _, _, kind, payload = heapq.heappop(heap)
            self.engine.now = at
            if kind == "tick":
                inst, price, liquidity = payload
                self._on_tick(inst, at, price, liquidity)
            elif kind == "release":
                self.engine.release_amo(self.engine.orders[payload], at)
            elif kind == "squareoff":
                self.engine.square_off(payload, at)
            elif kind == "close":
                self.engine.close_session(payload, at)
            elif kind == "rollover":
                self.engine.roll_day(at)
            elif kind == "ttl":
                self.engine.expire_ttl(self.engine.orders[payload], at)
            if kind != "tick" or self.engine.events:
                self._look("event")
            watch(at)
        self._cursor = when
        self.engine.now = when

    def _look(self, cause: str) -> None:
        """The watch's look, after an event, or after a call that changed the account (every
        change is an event: a call that changed nothing cannot begin or end a finding)."""
        if cause == "call" and not self.engine.events:
            return
        self.notes.extend(self.engine.events)
        self.engine.events.clear()
        self.notes.extend(self.watch.look(cause))

    def _gtt_event(self, trigger: Gtt, what: str) -> None:
        legs = ", ".join(
            f"{leg['transaction_type']} {leg['quantity']} at {leg['price']:g}"
            for leg in trigger.orders
        )
        values = "/".join(f"{v:g}" for v in trigger.trigger_values)
        self.engine.events.append(
            Event(
                self.now,
                f"GTT {what}",
                f"GTT {trigger.id} {trigger.inst.key} {trigger.type} at {values}: {legs} "
                f"({trigger.status})",
                (trigger.inst.key,),
            )
        )

    def after_call(self) -> list[Note]:
        """The watch's look after a tool call; returns every note since the last take (the
        events and findings of the clock's advance, then the call's own)."""
        self._look("call")
        return self.take_notes()

    def take_notes(self) -> list[Note]:
        notes, self.notes = self.notes, []
        return notes

    def _on_tick(self, inst: Instrument, at: datetime, price: float, liquidity: int | None) -> None:
        for order in list(self.engine.orders.values()):
            if order.inst.instrument_token == inst.instrument_token and order.status in (
                "OPEN",
                "TRIGGER PENDING",
            ):
                self.engine.on_tick(order, at, price, liquidity)
        for trigger in list(self.gtts.values()):
            if (
                trigger.inst.instrument_token == inst.instrument_token
                and trigger.status == "active"
            ):
                leg = trigger.leg_hit(price)
                if leg is not None:
                    self._fire_gtt(trigger, leg, at)
        for alert in list(self.alerts.values()):
            if alert.inst.instrument_token == inst.instrument_token and alert.status == "enabled":
                self._check_alert(alert, at, price)

    # ----- account (read) -------------------------------------------------------------------
    def profile(self) -> Profile:
        """The scenario's profile, a copy each call (a caller may change what it gets)."""
        p = self.scenario.profile
        return {
            "user_id": p["user_id"],
            "user_type": p["user_type"],
            "email": p["email"],
            "user_name": p["user_name"],
            "user_shortname": p["user_shortname"],
            "broker": p["broker"],
            "exchanges": list(p["exchanges"]),
            "products": list(p["products"]),
            "order_types": list(p["order_types"]),
            "avatar_url": p["avatar_url"],
            "meta": {"demat_consent": p["meta"]["demat_consent"]},
        }

    def margins(self, segment: str | None = None) -> Margins | AllMargins:
        if segment is not None:
            if segment not in ("equity", "commodity"):
                raise input_error("Invalid segment.")  # UNVERIFIED text
            return self.engine.margins_row(segment)
        return {
            "equity": self.engine.margins_row("equity"),
            "commodity": self.engine.margins_row("commodity"),
        }

    def holdings(self) -> list[HoldingRow]:
        out: list[HoldingRow] = []
        for h in self.engine.holdings.values():
            ltp = self.engine.ltp(h.inst)
            close = self.market.prev_close(h.inst, self.now.date())
            out.append(
                {
                    "tradingsymbol": h.inst.tradingsymbol,
                    "exchange": h.inst.exchange,
                    "instrument_token": h.inst.instrument_token,
                    "isin": h.inst.isin,
                    "product": "CNC",
                    "price": 0,
                    "quantity": h.quantity,
                    "used_quantity": h.used_quantity,
                    "t1_quantity": h.t1_quantity,
                    "realised_quantity": h.realised_quantity,
                    "authorised_quantity": h.authorised_quantity,
                    "authorised_date": h.authorised_date,
                    "authorisation": {},
                    "opening_quantity": h.opening_quantity,
                    "short_quantity": 0,
                    "collateral_quantity": h.collateral_quantity,
                    "collateral_type": h.collateral_type,
                    "discrepancy": False,
                    "average_price": h.average_price,
                    "last_price": ltp,
                    "close_price": close,
                    "pnl": round((ltp - h.average_price) * h.quantity, 2),
                    "day_change": round(ltp - close, 2),
                    "day_change_percentage": round((ltp - close) / close * 100, 4)
                    if close
                    else 0.0,
                    "mtf": {
                        "quantity": 0,
                        "used_quantity": 0,
                        "average_price": 0,
                        "value": 0,
                        "initial_margin": 0,
                    },
                }
            )
        return out

    def holdings_summary(self) -> HoldingsSummary:
        """GET /portfolio/holdings/summary (kiteconnect-mocks holdings_summary.json)."""
        rows = self.holdings()
        invested = sum(r["average_price"] * r["quantity"] for r in rows)
        current = sum(r["last_price"] * r["quantity"] for r in rows)
        before = sum(r["close_price"] * r["quantity"] for r in rows)
        total_pnl = current - invested
        today = current - before
        return {
            "total_pnl": round(total_pnl, 2),
            "total_pnl_percent": round(total_pnl / invested * 100, 4) if invested else 0.0,
            "today_pnl": round(today, 2),
            "today_pnl_percent": round(today / before * 100, 4) if before else 0.0,
            "invested_amount": round(invested, 2),
            "current_value": round(current, 2),
        }

    def holdings_compact(self) -> list[HoldingCompact]:
        """GET /portfolio/holdings/compact (kiteconnect-mocks holdings_compact.json)."""
        return [
            {
                "exchange": r["exchange"],
                "tradingsymbol": r["tradingsymbol"],
                "instrument_token": r["instrument_token"],
                "t1_quantity": r["t1_quantity"],
                "quantity": r["quantity"],
            }
            for r in self.holdings()
        ]

    def positions(self) -> Positions:
        net: list[PositionRow] = []
        day: list[PositionRow] = []
        for pos in self.engine.positions.values():
            if not pos.traded_today and pos.overnight_quantity == 0:
                continue
            ltp = self.engine.ltp(pos.inst)
            close = self.market.prev_close(pos.inst, self.now.date())
            day_row, net_row = pos.rows(ltp, close)
            net.append(net_row)
            if day_row is not None:
                day.append(day_row)
        return {"net": net, "day": day}

    def _read_book(self) -> None:
        self.book_reads.append(self.engine._order_seq)

    def orders(self) -> list[OrderRow]:
        self._read_book()
        return [o.row() for o in self.engine.orders.values()]

    def order_history(self, order_id: str) -> list[OrderRow]:
        self._read_book()
        return [r.copy() for r in self.engine.get_order(order_id).history]

    def order_trades(self, order_id: str) -> list[TradeRow]:
        return [t.copy() for t in self.engine.get_order(order_id).trades]

    def trades(self) -> list[TradeRow]:
        self._read_book()
        return [t.copy() for t in self.engine.trades]

    # ----- orders (write) -------------------------------------------------------------------
    def place_order(
        self,
        variety: str,
        exchange: str,
        tradingsymbol: str,
        transaction_type: str,
        quantity: int,
        product: str,
        order_type: str,
        price: float | None = None,
        validity: str | None = None,
        validity_ttl: int | None = None,
        disclosed_quantity: int | None = None,
        trigger_price: float | None = None,
        iceberg_legs: int | None = None,
        iceberg_quantity: int | None = None,
        auction_number: str | None = None,
        tag: str | None = None,
        market_protection: float | None = None,
    ) -> OrderResponse:
        """Kite Connect's place call by its parameters (the SDKs' signature)."""
        return self.place(
            OrderRequest(
                variety,
                exchange,
                tradingsymbol,
                transaction_type,
                quantity,
                product,
                order_type,
                price,
                validity,
                validity_ttl,
                disclosed_quantity,
                trigger_price,
                iceberg_legs,
                iceberg_quantity,
                auction_number,
                tag,
                market_protection,
            )
        )

    def place(self, request: OrderRequest) -> OrderResponse:
        """The place call as the handler reads it: one typed request to the engine."""
        return {"order_id": self.engine.place(request).order_id}

    def modify_order(
        self,
        variety: str,
        order_id: str,
        parent_order_id: str | None = None,
        quantity: int | None = None,
        price: float | None = None,
        order_type: str | None = None,
        trigger_price: float | None = None,
        validity: str | None = None,
        disclosed_quantity: int | None = None,
    ) -> OrderResponse:
        order = self.engine.modify(
            variety,
            order_id,
            quantity,
            price,
            order_type,
            trigger_price,
            validity,
            disclosed_quantity,
        )
        return {"order_id": order.order_id}

    def cancel_order(
        self, variety: str, order_id: str, parent_order_id: str | None = None
    ) -> OrderResponse:
        order = self.engine.cancel(variety, order_id)
        return {"order_id": order.order_id}

    def convert_position(
        self,
        exchange: str,
        tradingsymbol: str,
        transaction_type: str,
        position_type: str,
        quantity: int,
        old_product: str,
        new_product: str,
    ) -> bool:
        inst = self.engine.instrument(exchange, tradingsymbol)
        check(MIS_RULES, self.engine.mis_case(inst, new_product, converting=True))
        old = self.engine.positions.get((exchange, tradingsymbol, old_product))
        sign = 1 if transaction_type == "BUY" else -1
        check(CONVERSION_RULES, ConversionCase(sign * old.quantity if old else 0, quantity))
        assert old is not None
        new = self.engine.position(inst, new_product)
        avg_value = (
            old.day_buy_value / old.day_buy_quantity
            if sign > 0 and old.day_buy_quantity
            else old.day_sell_value / old.day_sell_quantity
            if old.day_sell_quantity
            else self.engine.ltp(inst) * inst.multiplier
        )
        if sign > 0:
            old.day_buy_quantity -= quantity
            old.day_buy_value -= avg_value * quantity
        else:
            old.day_sell_quantity -= quantity
            old.day_sell_value -= avg_value * quantity
        new.add_fill(transaction_type, quantity, avg_value / inst.multiplier)
        self.engine.events.append(
            Event(
                self.now,
                "converted",
                f"{inst.key} {quantity} {old_product} -> {new_product}",
                (inst.key,),
            )
        )
        return True

    def _margin_row(self, item: dict[str, Any]) -> OrderMargins:
        inst = self.engine.instrument(str(item.get("exchange")), str(item.get("tradingsymbol")))
        qty = int(item.get("quantity") or 0)
        price = float(item.get("price") or 0) or self.engine.ltp(inst)
        parts = margin_for(
            inst,
            str(item.get("product") or "CNC"),
            str(item.get("transaction_type") or "BUY"),
            qty,
            price,
            self.engine.underlying_price(inst),
        )
        zero_charges: Charges = {
            "transaction_tax": 0.0,
            "transaction_tax_type": "stt",
            "exchange_turnover_charge": 0.0,
            "sebi_turnover_charge": 0.0,
            "brokerage": 0.0,
            "stamp_duty": 0.0,
            "gst": {"igst": 0.0, "cgst": 0.0, "sgst": 0.0, "total": 0.0},
            "total": 0.0,
        }
        return {
            "type": inst.margin_segment,
            "tradingsymbol": inst.tradingsymbol,
            "exchange": inst.exchange,
            "span": round(parts["span"], 2),
            "exposure": round(parts["exposure"], 2),
            "option_premium": round(parts["option_premium"], 2),
            "additional": 0,
            "bo": 0,
            "cash": 0,
            "var": round(parts["delivery"], 2),
            "pnl": {"realised": 0, "unrealised": 0},
            "leverage": 5 if item.get("product") == "MIS" and inst.is_equity else 1,
            "charges": zero_charges,
            "total": round(total(parts), 2),
        }

    def order_margins(self, orders: list[dict[str, Any]]) -> list[OrderMargins]:
        return [self._margin_row(item) for item in orders]

    def basket_order_margins(
        self, orders: list[dict[str, Any]], consider_positions: bool = True, mode: str | None = None
    ) -> BasketMargins:
        rows = self.order_margins(orders)

        def summed(key: Literal["span", "exposure", "option_premium", "total"]) -> float:
            return round(sum(float(r[key]) for r in rows), 2)

        charges: Charges | dict[str, float] = rows[0]["charges"] if rows else {}

        def block() -> BasketTotal:
            return {
                "type": "",
                "tradingsymbol": "",
                "exchange": "",
                "additional": 0,
                "bo": 0,
                "cash": 0,
                "var": 0,
                "pnl": {"realised": 0, "unrealised": 0},
                "leverage": 1,
                "charges": charges,
                "span": summed("span"),
                "exposure": summed("exposure"),
                "option_premium": summed("option_premium"),
                "total": summed("total"),
            }

        return {"initial": block(), "final": block(), "orders": rows, "charges": charges}

    # ----- GTT ------------------------------------------------------------------------------
    def get_gtts(self) -> list[GttRow]:
        return [
            g.row()
            for g in sorted(self.gtts.values(), key=lambda g: -g.id)
            if g.status != "deleted"
        ]

    def get_gtt(self, trigger_id: int) -> GttRow:
        return self._gtt(trigger_id).row()

    def _gtt(self, trigger_id: int) -> Gtt:
        found = self.gtts.get(int(trigger_id))
        check(GTT_LOOKUP_RULES, found.status if found else None)
        assert found is not None
        return found

    def place_gtt(
        self,
        trigger_type: str,
        tradingsymbol: str,
        exchange: str,
        trigger_values: list[float],
        last_price: float,
        orders: list[dict[str, Any]],
    ) -> GttResponse:
        inst = self.engine.instrument(exchange, tradingsymbol)
        legs = gtt_rules.validate(
            inst, trigger_type, list(trigger_values), float(last_price), orders, self.now
        )
        check(GTT_COUNT_RULES, sum(1 for g in self.gtts.values() if g.status == "active"))
        self._gtt_seq += 1
        trigger = Gtt(
            id=self._gtt_seq,
            inst=inst,
            type=trigger_type,
            trigger_values=[float(v) for v in trigger_values],
            last_price=float(last_price),
            orders=legs,
            created_at=self.now,
            updated_at=self.now,
            user_id=self.user_id,
        )
        if gtt_rules.too_close(trigger.trigger_values, self.engine.ltp(inst)):
            trigger.status = "disabled"
        self.gtts[trigger.id] = trigger
        self._gtt_event(trigger, "placed")
        return {"trigger_id": trigger.id}

    def modify_gtt(
        self,
        trigger_id: int,
        trigger_type: str,
        tradingsymbol: str,
        exchange: str,
        trigger_values: list[float],
        last_price: float,
        orders: list[dict[str, Any]],
    ) -> GttResponse:
        trigger = self.gtts.get(int(trigger_id))
        check(GTT_CHANGE_RULES, trigger.status if trigger else None)
        assert trigger is not None
        inst = self.engine.instrument(exchange, tradingsymbol)
        legs = gtt_rules.validate(
            inst, trigger_type, list(trigger_values), float(last_price), orders, self.now
        )
        trigger.inst, trigger.type, trigger.orders = inst, trigger_type, legs
        trigger.trigger_values = [float(v) for v in trigger_values]
        trigger.last_price = float(last_price)
        trigger.updated_at = self.now
        if gtt_rules.too_close(trigger.trigger_values, self.engine.ltp(inst)):
            trigger.status = "disabled"
        self._gtt_event(trigger, "modified")
        return {"trigger_id": trigger.id}

    def delete_gtt(self, trigger_id: int) -> GttResponse:
        trigger = self.gtts.get(int(trigger_id))
        check(GTT_CHANGE_RULES, trigger.status if trigger else None)
        assert trigger is not None
        trigger.status = "deleted"
        trigger.updated_at = self.now
        self._gtt_event(trigger, "deleted")
        return {"trigger_id": trigger.id}

    def _fire_gtt(self, trigger: Gtt, leg: int, at: datetime) -> None:
        """Place the leg's LIMIT order under the same rules (rules.md §8); a sell is backed only
        by demat shares (kite-domain.md §0)."""
        spec = trigger.orders[leg]
        trigger.status = "triggered"
        trigger.updated_at = at
        self.engine.events.append(
            Event(
                at,
                "GTT triggered",
                f"GTT {trigger.id} {trigger.inst.key} leg {leg + 1} of {len(trigger.orders)}: "
                f"{spec['transaction_type']} {spec['quantity']} at {spec['price']:g}",
                (trigger.inst.key,),
            )
        )
        order_result: OrderResult
        try:
            order = self.engine.place(
                OrderRequest(
                    variety="regular",
                    exchange=trigger.inst.exchange,
                    tradingsymbol=trigger.inst.tradingsymbol,
                    transaction_type=spec["transaction_type"],
                    quantity=spec["quantity"],
                    product=spec["product"],
                    order_type="LIMIT",
                    price=spec["price"],
                ),
                meta={"gtt": trigger.id},
                demat_only=True,
            )
        except KiteConnectError as err:
            order_result = {"order_id": "", "rejection_reason": err.message, "status": "failed"}
            self.engine.events.append(
                Event(
                    at, "GTT order refused", f"GTT {trigger.id}: {err.message}", (trigger.inst.key,)
                )
            )
        else:
            failed = order.status == "REJECTED"
            order_result = {
                "order_id": order.order_id,
                "rejection_reason": order.status_message or "" if failed else "",
                "status": "failed" if failed else "success",
            }
        result: GttLegResult = {
            "account_id": self.user_id,
            "exchange": trigger.inst.exchange,
            "tradingsymbol": trigger.inst.tradingsymbol,
            "validity": "DAY",
            "product": spec["product"],
            "order_type": "LIMIT",
            "transaction_type": spec["transaction_type"],
            "quantity": spec["quantity"],
            "price": spec["price"],
            "meta": {"gtt": trigger.id},
            "timestamp": kite_ts(at),
            "triggered_at": spec["price"],
            "order_result": order_result,
        }
        results: list[GttLegResult | None] = [None] * len(trigger.orders)
        results[leg] = result
        trigger.results = results

    # ----- alerts ---------------------------------------------------------------------------
    def _new_alert(
        self,
        name: str,
        kind: str,
        inst: Instrument,
        op: str,
        rhs_type: str,
        constant: float,
        rhs: Instrument | None,
        basket: Any,
        created: datetime,
    ) -> Alert:
        self._alert_seq += 1
        uuid = f"{self._alert_seq:08x}-0000-4000-8000-{inst.instrument_token:012x}"
        alert = Alert(
            uuid=uuid,
            name=name,
            type=kind,
            inst=inst,
            operator=op,
            rhs_type=rhs_type,
            rhs_constant=constant,
            rhs_inst=rhs,
            basket=basket if isinstance(basket, dict) else None,
            created_at=created,
            updated_at=created,
            user_id=self.user_id,
        )
        self.alerts[uuid] = alert
        return alert

    def _alert_params(self, params: dict[str, Any]) -> tuple[Any, ...]:
        rhs_type = str(params.get("rhs_type") or "constant")
        rhs = None
        constant: float | None = 0.0
        if rhs_type == "instrument":
            rhs = self.master.for_alert(
                str(params.get("rhs_exchange")), str(params.get("rhs_tradingsymbol"))
            )
        else:
            try:
                constant = float(params.get("rhs_constant") or 0)
            except (TypeError, ValueError):
                constant = None
        basket = params.get("basket")
        basket_read = True
        if isinstance(basket, str) and basket:
            try:
                basket = json.loads(basket)
            except ValueError:
                basket_read = False
        case = AlertCase(
            name=str(params.get("name") or ""),
            type=str(params.get("type") or params.get("alert_type") or "simple"),
            lhs=self.master.for_alert(
                str(params.get("lhs_exchange")), str(params.get("lhs_tradingsymbol"))
            ),
            lhs_attribute=str(params.get("lhs_attribute") or "LastTradedPrice"),
            operator=str(params.get("operator") or ""),
            rhs_type=rhs_type,
            rhs=rhs,
            rhs_constant=constant,
            basket=basket,
            basket_read=basket_read,
        )
        check(ALERT_RULES, case)
        return (
            case.name,
            case.type,
            case.lhs,
            case.operator,
            rhs_type,
            constant or 0.0,
            rhs,
            basket,
        )

    def get_alerts(self, filters: dict[str, Any] | None = None) -> list[AlertRow]:
        out = []
        for alert in self.alerts.values():
            if filters and filters.get("status") and alert.status != filters["status"]:
                continue
            if filters and filters.get("type") and alert.type != filters["type"]:
                continue
            out.append(alert.row())
        return out

    def _alert(self, uuid: str) -> Alert:
        alert = self.alerts.get(uuid)
        check(ALERT_LOOKUP_RULES, alert)
        assert alert is not None
        return alert

    def get_alert(self, uuid: str) -> AlertRow:
        return self._alert(uuid).row()

    def create_alert(self, **params: Any) -> AlertRow:
        check(ALERT_COUNT_RULES, len(self.alerts))
        name, kind, inst, op, rhs_type, constant, rhs, basket = self._alert_params(params)
        return self._new_alert(
            name, kind, inst, op, rhs_type, constant, rhs, basket, self.now
        ).row()

    def modify_alert(self, uuid: str, **params: Any) -> AlertRow:
        alert = self._alert(uuid)
        name, kind, inst, op, rhs_type, constant, rhs, basket = self._alert_params(params)
        alert.name, alert.type, alert.inst, alert.operator = name, kind, inst, op
        alert.rhs_type, alert.rhs_constant, alert.rhs_inst = rhs_type, constant, rhs
        alert.basket = basket if isinstance(basket, dict) else None
        alert.updated_at = self.now
        alert.status, alert.disabled_reason, alert.armed = "enabled", "", True
        return alert.row()

    def delete_alerts(self, *uuids: str) -> None:
        for uuid in uuids:
            self._alert(uuid)
        for uuid in uuids:
            del self.alerts[uuid]

    def get_alert_history(self, uuid: str) -> list[dict[str, Any]]:
        return [dict(h) for h in self._alert(uuid).history]

    def _check_alert(self, alert: Alert, at: datetime, price: float) -> None:
        rhs = self.market.price_at(alert.rhs_inst, at) if alert.rhs_inst else alert.rhs_constant
        if not alert.holds(price, rhs):
            alert.armed = True
            return
        if not alert.armed:
            return
        alert.armed = False
        alert.alert_count += 1
        alert.updated_at = at
        order_meta: list[dict[str, Any]] | None = None
        if alert.type == "ato" and alert.basket:
            order_meta = []
            for item in alert.basket.get("items", []):
                params = dict(item.get("params") or {})
                try:
                    order = self.engine.place(
                        OrderRequest(
                            variety=str(params.get("variety") or "regular"),
                            exchange=str(item.get("exchange")),
                            tradingsymbol=str(item.get("tradingsymbol")),
                            transaction_type=str(params.get("transaction_type")),
                            quantity=int(params.get("quantity") or 0),
                            product=str(params.get("product")),
                            order_type=str(params.get("order_type")),
                            price=params.get("price"),
                            trigger_price=params.get("trigger_price"),
                            validity=params.get("validity"),
                            market_protection=params.get("market_protection"),
                        ),
                        meta={"alert": alert.uuid},
                    )
                    order_meta.append(
                        {
                            "order_id": order.order_id,
                            "status": order.status,
                            "status_message": order.status_message,
                        }
                    )
                except KiteConnectError as err:
                    order_meta.append(
                        {"order_id": "", "status": "failed", "status_message": err.message}
                    )
            # An ATO alert places its basket once.
            alert.status, alert.disabled_reason = "disabled", "triggered"
        quote: dict[str, Any] = {
            **self.market.quote_row(alert.inst, at),
            "tradingsymbol": alert.inst.tradingsymbol,
            "exchange": "INDICES" if alert.inst.is_index else alert.inst.exchange,
        }
        target = (
            f"{alert.rhs_inst.exchange}:{alert.rhs_inst.tradingsymbol}"
            if alert.rhs_inst
            else f"{alert.rhs_constant:g}"
        )
        alert.history.append(
            {
                "uuid": alert.uuid,
                "type": alert.type,
                "meta": [quote],
                "condition": f"LastTradedPrice({alert.inst.exchange}:{alert.inst.tradingsymbol}) "
                f"{alert.operator} {target}",
                "created_at": kite_ts(at),
                "order_meta": order_meta,
            }
        )

    # ----- market ---------------------------------------------------------------------------
    def _lookup(self, names: tuple[str, ...]) -> list[tuple[str, Instrument]]:
        out = []
        for name in names:
            inst = self.master.by_key(str(name))
            if inst is not None:
                out.append((str(name), inst))
        return out

    def quote(self, *instruments: str) -> dict[str, Quote]:
        return {k: self.market.quote_row(i, self.now) for k, i in self._lookup(instruments)}

    def ohlc(self, *instruments: str) -> dict[str, QuoteOhlc]:
        return {k: self.market.ohlc_row(i, self.now) for k, i in self._lookup(instruments)}

    def ltp(self, *instruments: str) -> dict[str, QuoteLtp]:
        return {k: self.market.ltp_row(i, self.now) for k, i in self._lookup(instruments)}

    def historical_data(
        self,
        instrument_token: int,
        from_date: datetime | date | str,
        to_date: datetime | date | str,
        interval: str,
        continuous: bool = False,
        oi: bool = False,
    ) -> list[Candle]:
        inst = self.master.by_token(int(instrument_token))
        if inst is None:
            raise input_error("invalid token")  # UNVERIFIED
        if interval not in INTERVALS:
            raise input_error("invalid interval")  # UNVERIFIED
        start, end = _moment(from_date), _moment(to_date, end_of_day=True)
        if end < start:
            raise input_error("invalid from/to dates: from is after to")  # UNVERIFIED
        if (end - start).days > MAX_DAYS[interval]:
            raise input_error(f"interval exceeds max limit: {MAX_DAYS[interval]} days")  # UNV.
        return self.market.candles(inst, start, end, INTERVALS[interval], self.now, oi)

    def instruments(self, exchange: str | None = None) -> list[dict[str, Any]]:
        return [i.row() for i in self.master.all() if exchange is None or i.exchange == exchange]

    def instrument_facts(self, exchange: str, tradingsymbol: str) -> InstrumentFacts:
        """What the simulation knows of an instrument (not a Kite call: the server's JSON
        master, and tests). ``LookupError`` for one not in the master."""
        inst = self.master.get(exchange, tradingsymbol)
        if inst is None:
            raise LookupError(f"{exchange}:{tradingsymbol}: not in the sandbox's instruments")
        lower, upper = self.market.circuits(inst, self.now.date())
        return InstrumentFacts(
            instrument_token=inst.instrument_token,
            exchange=inst.exchange,
            tradingsymbol=inst.tradingsymbol,
            instrument_type=inst.instrument_type,
            segment=inst.segment,
            tick_size=inst.tick_size,
            lot_size=inst.lot_size,
            freeze_quantity=inst.freeze_quantity,
            max_order_quantity=(100000 if inst.is_equity else inst.freeze_quantity),
            lower_circuit=lower,
            upper_circuit=upper,
            expiry=inst.expiry.isoformat() if inst.expiry else "",
            strike=inst.strike,
            isin=inst.isin,
            name=inst.name,
        )

    # ----- mutual funds ---------------------------------------------------------------------
    def _nav_date(self) -> date:
        return sessions.previous_trading_day(self.now.date())

    def mf_instruments(self) -> list[dict[str, Any]]:
        return [f.row(self._nav_date()) for f in self.master.mutual_funds]

    def mf_holdings(self) -> list[MfHolding]:
        out: list[MfHolding] = []
        for row in self.scenario.mf_holdings:
            fund = self.master.mutual_fund(row["tradingsymbol"])
            assert fund is not None
            out.append(
                {
                    "folio": row["folio"],
                    "fund": fund.name,
                    "tradingsymbol": fund.tradingsymbol,
                    "average_price": row["average_price"],
                    "last_price": fund.nav,
                    "last_price_date": self._nav_date().isoformat(),
                    "pledged_quantity": row["pledged_quantity"],
                    "pnl": round((fund.nav - row["average_price"]) * row["quantity"], 2),
                    "quantity": row["quantity"],
                }
            )
        return out

    def mf_orders(self, order_id: str | None = None) -> list[dict[str, Any]] | dict[str, Any]:
        rows = [dict(r) for r in self.scenario.mf_orders]
        if order_id is None:
            return rows
        found = next((row for row in rows if str(row.get("order_id")) == str(order_id)), None)
        check(ORDER_LOOKUP_RULES, found)
        assert found is not None
        return found

    def mf_sips(self, sip_id: str | None = None) -> list[dict[str, Any]] | dict[str, Any]:
        rows = [dict(r) for r in self.scenario.mf_sips]
        if sip_id is None:
            return rows
        for row in rows:
            if str(row.get("sip_id")) == str(sip_id):
                return row
        raise input_error("Invalid `sip_id`.")  # UNVERIFIED


def _moment(value: datetime | date | str, end_of_day: bool = False) -> datetime:
    if isinstance(value, datetime):
        return ist(value)
    if isinstance(value, date):
        return datetime.combine(value, time(23, 59, 59) if end_of_day else time(0, 0), IST)
    text = str(value).strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime.combine(day, time(23, 59, 59) if end_of_day else time(0, 0), IST)
        return ist(datetime.fromisoformat(text))
    except ValueError as exc:
        raise input_error(f"invalid date {text!r}") from exc  # UNVERIFIED


__all__ = ["INTERVALS", "WORKING", "Position", "Simulation"]
