"""The order engine: validation, states, fills, positions and funds.

States (rules.md §9, kiteconnect-mocks order_info.json): PUT ORDER REQ RECEIVED →
VALIDATION PENDING → OPEN PENDING → OPEN (or TRIGGER PENDING for SL/SL-M) → COMPLETE /
CANCELLED / REJECTED; modify: MODIFY VALIDATION PENDING → MODIFY PENDING → MODIFIED → OPEN;
cancel: CANCEL PENDING → CANCELLED; AMO: AMO REQ RECEIVED until release.
Orders that fail Kite's pre-exchange validation raise ``KiteConnectError`` and never enter the book
(rules.md §9, "Rejection before the exchange"); RMS and exchange rejections enter the book as
REJECTED with ``status_message``.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from datetime import datetime, time, timedelta
from typing import Any

from ...calc.holdings import standing_authorisation
from . import rules, sessions
from .clock import IST, ist, kite_ts
from .events import Event
from .instruments import Instrument, InstrumentMaster
from .market import Market, round_tick
from .order_request import OrderRequest
from .order_rules import (
    AMO_RULES,
    CALL_VARIETY_RULES,
    CANCEL_STATE_RULES,
    CIRCUIT_RULES,
    EXCHANGE_RULES,
    FUNDS_RULES,
    INSTRUMENT_RULES,
    MIS_RULES,
    MODIFY_RULES,
    MODIFY_STATE_RULES,
    ORDER_LOOKUP_RULES,
    PLACE_RULES,
    RMS_RULES,
    SELL_RULES,
    SESSION_RULES,
    TRIGGER_SIDE_RULES,
    VARIETY_RULES,
    FundsCase,
    MisCase,
    OrderCase,
    SellCase,
    broken,
    check,
)
from .order_rules import (
    WORKING as WORKING,  # the watch and the simulation ask the engine
)
from .portfolio import Holding, Position, margin_for, total
from .responses import Margins, OrderRow, TradeRow
from .scenario import Funds

TERMINAL = ("COMPLETE", "CANCELLED", "REJECTED")


@dataclass
class Order:
    order_id: str
    inst: Instrument
    variety: str
    transaction_type: str
    quantity: int
    product: str
    order_type: str
    price: float
    trigger_price: float
    validity: str
    validity_ttl: int
    disclosed_quantity: int
    market_protection: float
    tag: str
    placed_at: datetime
    placed_by: str = "ZS0001"
    status: str = "PUT ORDER REQ RECEIVED"
    status_message: str | None = None
    status_message_raw: str | None = None  # the RMS's or exchange's own text, when it differs
    exchange_order_id: str | None = None
    exchange_timestamp: datetime | None = None
    exchange_update_timestamp: datetime | None = None
    filled_quantity: int = 0
    fill_value: float = 0.0
    cancelled_quantity: int = 0
    modified: bool = False
    modifications: int = 0
    limit_price: float = 0.0  # the price fills are checked against (band for protected orders)
    triggered: bool = False
    release_at: datetime | None = None
    expires_at: datetime | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    history: list[OrderRow] = field(default_factory=list)
    trades: list[TradeRow] = field(default_factory=list)

    @property
    def pending_quantity(self) -> int:
        if self.status in ("CANCELLED", "REJECTED"):
            return 0
        return self.quantity - self.filled_quantity - self.cancelled_quantity

    @property
    def average_price(self) -> float:
        if not self.filled_quantity:
            return 0.0
        return round(self.fill_value / self.filled_quantity, 4)

    @property
    def shown_price(self) -> float:
        """The book's price: a protected MARKET or SL-M order working at the exchange is a
        limit at its band, and the book shows that limit (issue 41 §2)."""
        if self.order_type in ("MARKET", "SL-M") and self.status == "OPEN":
            return self.limit_price
        return self.price

    def row(self) -> OrderRow:
        return {
            "placed_by": self.placed_by,
            "order_id": self.order_id,
            "exchange_order_id": self.exchange_order_id,
            "parent_order_id": None,
            "status": self.status,
            "status_message": self.status_message,
            "status_message_raw": self.status_message_raw or self.status_message,
            "order_timestamp": kite_ts(self.exchange_update_timestamp or self.placed_at),
            "exchange_update_timestamp": kite_ts(self.exchange_update_timestamp)
            if self.exchange_update_timestamp
            else None,
            "exchange_timestamp": kite_ts(self.exchange_timestamp)
            if self.exchange_timestamp
            else None,
            "variety": self.variety,
            "modified": self.modified,
            "exchange": self.inst.exchange,
            "tradingsymbol": self.inst.tradingsymbol,
            "instrument_token": self.inst.instrument_token,
            "order_type": self.order_type,
            "transaction_type": self.transaction_type,
            "validity": self.validity,
            "validity_ttl": self.validity_ttl,
            "product": self.product,
            "quantity": self.quantity,
            "disclosed_quantity": self.disclosed_quantity,
            "price": self.shown_price,
            "trigger_price": self.trigger_price,
            "average_price": self.average_price,
            "filled_quantity": self.filled_quantity,
            "pending_quantity": self.pending_quantity,
            "cancelled_quantity": self.cancelled_quantity,
            "market_protection": self.market_protection,
            "meta": {k: v for k, v in self.meta.items() if not k.startswith("_")},
            "tag": self.tag or None,
            "tags": [self.tag] if self.tag else [],
            "guid": f"sim{self.order_id}",
            "auction_number": "",
            "account_id": self.placed_by,
        }

    def record(self, status: str, at: datetime, message: str | None = None) -> None:
        self.status = status
        if message is not None:
            self.status_message = message
        row = self.row()
        row["order_timestamp"] = kite_ts(at)
        row["exchange_update_timestamp"] = kite_ts(at) if self.exchange_order_id else None
        self.history.append(row)


class Engine:
    """The account: orders, trades, positions, holdings and funds."""

    def __init__(
        self,
        master: InstrumentMaster,
        market: Market,
        funds: dict[str, Funds],
        demat_consent: str,
        user_id: str,
        start: datetime,
    ) -> None:
        self.master = master
        self.market = market
        self.funds = funds
        self.demat_consent = demat_consent
        self.user_id = user_id
        self.now = ist(start)
        self.orders: dict[str, Order] = {}
        self.trades: list[TradeRow] = []
        self.positions: dict[tuple[str, str, str], Position] = {}
        self.holdings: dict[str, Holding] = {}
        self.charges = {"equity": 0.0, "commodity": 0.0}
        self._order_seq = 0
        self._trade_seq = 0
        self._exchange_seq = 0
        self._liquidity: dict[tuple[int, datetime], int] = {}
        self._today_sold: dict[str, int] = {}
        self.events: list[Event] = []

    def note(self, kind: str, order: Order, text: str, at: datetime | None = None) -> None:
        """Record what happened to ``order`` (journalled by the adapter as an event)."""
        self.events.append(
            Event(
                at or self.now,
                kind,
                f"order {order.order_id} {order.transaction_type} {order.quantity} "
                f"{order.inst.key} {order.product} {order.order_type}: {text}",
                (order.inst.key,),
            )
        )

    # ----- identifiers ---------------------------------------------------------------------
    def _next_order_id(self) -> str:
        self._order_seq += 1
        return f"{self.now:%y%m%d}{200000000 + self._order_seq:09d}"

    def _next_exchange_id(self) -> str:
        self._exchange_seq += 1
        return f"{1100000000000000 + self._exchange_seq * 7919}"

    def _next_trade_id(self) -> str:
        self._trade_seq += 1
        return f"{40000000 + self._trade_seq}"

    # ----- lookups ---------------------------------------------------------------------------
    def instrument(self, exchange: str, tradingsymbol: str) -> Instrument:
        inst = self.master.get(exchange, tradingsymbol)
        check(INSTRUMENT_RULES, inst)
        assert inst is not None
        return inst

    def ltp(self, inst: Instrument) -> float:
        return self.market.price_at(inst, self.now)

    def underlying_price(self, inst: Instrument) -> float:
        if inst.underlying:
            under = self.master.by_key(inst.underlying)
            if under is not None:
                return self.ltp(under)
        return self.ltp(inst)

    def position(self, inst: Instrument, product: str) -> Position:
        key = (inst.exchange, inst.tradingsymbol, product)
        pos = self.positions.get(key)
        if pos is None:
            pos = Position(inst, product)
            self.positions[key] = pos
        return pos

    def get_order(self, order_id: str) -> Order:
        order = self.orders.get(str(order_id))
        check(ORDER_LOOKUP_RULES, order)
        assert order is not None
        return order

    def mis_case(self, inst: Instrument, product: str, *, converting: bool = False) -> MisCase:
        """An MIS order (refused from the square-off to an hour after the close) or a
        conversion to MIS (refused from the square-off on)."""
        cutoff = sessions.square_off_time(inst.exchange, self.now.date())
        session = sessions.session(inst.exchange, self.now.date())
        if converting:
            until = cutoff + timedelta(days=1)
        else:
            until = session[1] + timedelta(hours=1) if session is not None else cutoff
        return MisCase(product, self.now, cutoff, until)

    def case(self, order: Order, **terms: Any) -> OrderCase:
        """``order`` as an order case: its terms (``terms`` replacing some), with the book's
        status and counts."""
        ice = order.meta.get("iceberg") or {}
        request = OrderRequest(
            variety=order.variety,
            exchange=order.inst.exchange,
            tradingsymbol=order.inst.tradingsymbol,
            transaction_type=order.transaction_type,
            quantity=terms.get("quantity", order.quantity),
            product=order.product,
            order_type=terms.get("order_type", order.order_type),
            price=terms.get("price", order.price),
            trigger_price=terms.get("trigger_price", order.trigger_price),
            market_protection=order.market_protection,
            iceberg_quantity=ice.get("leg_quantity"),
        )
        return OrderCase(
            request,
            order.inst,
            self.now,
            terms.get("variety", order.variety),
            status=order.status,
            modifications=order.modifications,
            filled=order.filled_quantity,
        )

    # ----- funds -----------------------------------------------------------------------------
    def _opening_margin_quantity(self, order: Order, quantity: int) -> int:
        """The part of ``quantity`` that opens or adds to a position (needs margin)."""
        pos = self.positions.get((order.inst.exchange, order.inst.tradingsymbol, order.product))
        held = pos.quantity if pos else 0
        if order.transaction_type == "SELL" and held > 0:
            return max(quantity - held, 0)
        if order.transaction_type == "BUY" and held < 0:
            return max(quantity + held, 0)
        if order.product == "CNC" and order.transaction_type == "SELL":
            return 0  # a delivery sell is backed by holdings, checked separately
        return quantity

    def _order_price(self, order: Order) -> float:
        if order.order_type in ("MARKET", "SL-M"):
            return order.limit_price or order.trigger_price or self.ltp(order.inst)
        return order.price

    def utilised(self, segment: str) -> dict[str, float]:
        parts = {"span": 0.0, "exposure": 0.0, "option_premium": 0.0, "delivery": 0.0}
        flows = 0.0
        m2m = 0.0
        realised = 0.0
        hedged = self._hedged_units(segment)
        for pos in self.positions.values():
            inst = pos.inst
            if inst.margin_segment != segment:
                continue
            ltp = self.ltp(inst)
            close = self.market.prev_close(inst, self.now.date())
            qty = pos.quantity
            if inst.is_option or pos.product == "CNC":
                flows += pos.day_sell_value - pos.day_buy_value
                if inst.is_option:
                    # The premium of options bought today is shown as utilised
                    # option_premium (Kite's margins); the net stays the same.
                    premium = max(pos.day_buy_value - pos.day_sell_value, 0.0)
                    parts["option_premium"] += premium
                    flows += premium
                if inst.is_option and qty < 0:
                    parts_short = margin_for(
                        inst, pos.product, "SELL", -qty, ltp, self.underlying_price(inst)
                    )
                    covered, loss = hedged.get(inst.key, (0, 0.0))
                    share = covered / -qty
                    for k, v in parts_short.items():
                        # A hedged unit blocks at most its spread's largest loss.
                        hedged_part = min(v * share, loss * v / max(total(parts_short), 1e-9))
                        parts[k] += v * (1 - share) + hedged_part
                continue
            pnl = pos.m2m(ltp, close)
            m2m += pnl
            if qty:
                side = "BUY" if qty > 0 else "SELL"
                for k, v in margin_for(
                    inst, pos.product, side, abs(qty), ltp, self.underlying_price(inst)
                ).items():
                    parts[k] += v
            closed = min(pos.day_buy_quantity, pos.day_sell_quantity)
            if closed:
                realised += (
                    pos.day_sell_value / pos.day_sell_quantity
                    - pos.day_buy_value / pos.day_buy_quantity
                ) * closed
        for order in self.orders.values():
            if order.status not in WORKING or order.inst.margin_segment != segment:
                continue
            qty = self._opening_margin_quantity(order, order.pending_quantity)
            if qty:
                for k, v in margin_for(
                    order.inst,
                    order.product,
                    order.transaction_type,
                    qty,
                    self._order_price(order),
                    self.underlying_price(order.inst),
                ).items():
                    parts[k] += v
        parts["flows"] = flows
        parts["m2m"] = m2m
        parts["realised"] = realised
        return parts

    def _hedged_units(self, segment: str) -> dict[str, tuple[int, float]]:
        """The hedge benefit (issue 41 §2), a simple model, not SPAN: each unit of a short
        option paired with a long option of the same underlying and type (the nearest strike
        first) blocks no more than the pair's largest loss, the strikes' distance when the long
        is further out of the money, nothing when it is nearer (a debit spread). Zerodha's
        margin calculator shows the same effect on spreads ("hedged positions get a margin
        benefit", support article on margin benefits for hedged F&O positions); breaking the
        pair raises the margin back. Returns short key → (units paired, their largest loss)."""
        longs: dict[tuple[str, str], list[list[Any]]] = {}
        shorts = []
        for pos in self.positions.values():
            inst = pos.inst
            if not inst.is_option or inst.margin_segment != segment or pos.quantity == 0:
                continue
            group = (inst.underlying, inst.instrument_type)
            if pos.quantity > 0:
                longs.setdefault(group, []).append([inst.strike, pos.quantity])
            else:
                shorts.append(pos)
        out: dict[str, tuple[int, float]] = {}
        for pos in sorted(shorts, key=lambda p: p.inst.key):
            inst = pos.inst
            call = inst.instrument_type == "CE"
            pool = sorted(
                longs.get((inst.underlying, inst.instrument_type), []),
                key=lambda leg: abs(leg[0] - inst.strike),
            )
            left, paired, loss = -pos.quantity, 0, 0.0
            for leg in pool:
                take = min(left, leg[1])
                if take <= 0:
                    continue
                width = leg[0] - inst.strike if call else inst.strike - leg[0]
                loss += max(width, 0.0) * take * inst.multiplier
                leg[1] -= take
                left -= take
                paired += take
            if paired:
                out[inst.key] = (paired, loss)
        return out

    def net(self, segment: str) -> float:
        funds = self.funds[segment]
        used = self.utilised(segment)
        base = funds.opening_balance + funds.intraday_payin + funds.collateral + funds.adhoc_margin
        blocked = used["span"] + used["exposure"] + used["option_premium"] + used["delivery"]
        return round(base - blocked + used["m2m"] + used["flows"] - self.charges[segment], 2)

    def margins_row(self, segment: str) -> Margins:
        funds = self.funds[segment]
        used = self.utilised(segment)
        debits = (
            used["span"]
            + used["exposure"]
            + used["option_premium"]
            + used["delivery"]
            + self.charges[segment]
        )
        net = self.net(segment)
        return {
            "enabled": funds.enabled,
            "net": net,
            "available": {
                "adhoc_margin": funds.adhoc_margin,
                "cash": funds.opening_balance,
                "opening_balance": funds.opening_balance,
                "live_balance": round(
                    funds.opening_balance
                    + funds.intraday_payin
                    - debits
                    + used["flows"]
                    + used["m2m"],
                    2,
                ),
                "collateral": funds.collateral,
                "intraday_payin": funds.intraday_payin,
            },
            "utilised": {
                "debits": round(debits, 2),
                "exposure": round(used["exposure"], 2),
                "m2m_realised": round(-used["realised"], 2),
                "m2m_unrealised": round(-(used["m2m"] - used["realised"]), 2),
                "option_premium": round(used["option_premium"], 2),
                "payout": 0.0,
                "span": round(used["span"], 2),
                "holding_sales": round(max(used["flows"], 0.0), 2),
                "turnover": 0.0,
                "liquid_collateral": 0.0,
                "stock_collateral": funds.collateral,
                "delivery": round(used["delivery"], 2),
            },
        }

    # ----- placing ---------------------------------------------------------------------------
    def place(
        self,
        request: OrderRequest,
        *,
        meta: dict[str, Any] | None = None,
        demat_only: bool = False,
        placed_by: str | None = None,
    ) -> Order:
        # --- input checks (order_rules): InputException, nothing enters the book ---
        check(VARIETY_RULES, request.variety)
        inst = self.instrument(request.exchange, request.tradingsymbol)
        case = OrderCase(request, inst, self.now, request.variety)
        check(PLACE_RULES, case)
        check(SESSION_RULES, case)
        check(MIS_RULES, self.mis_case(inst, request.product))
        validity = request.validity or "DAY"
        price = float(request.price or 0.0)
        trigger = float(request.trigger_price or 0.0)
        protection = float(request.market_protection or 0.0)
        legs = int(request.iceberg_legs or 0) if request.variety == "iceberg" else 0
        ltp = self.ltp(inst)
        lower, upper = self.market.circuits(inst, self.now.date())
        case = replace(case, ltp=ltp, lower=lower, upper=upper)
        check(CIRCUIT_RULES, case)
        check(TRIGGER_SIDE_RULES, case)
        # rules.md §10/§11: delivery sells need free holdings, and TPIN authorisation for demat
        # shares without a standing authorisation (demat_consent other than "physical", §3).
        alloc: dict[str, int] | None = None
        if request.product == "CNC" and request.transaction_type == "SELL" and inst.is_equity:
            alloc = self._check_holdings(inst, request.quantity, demat_only)
        order = Order(
            order_id=self._next_order_id(),
            inst=inst,
            variety=request.variety,
            transaction_type=request.transaction_type,
            quantity=request.quantity,
            product=request.product,
            order_type=request.order_type,
            price=price,
            trigger_price=trigger,
            validity=validity,
            validity_ttl=int(request.validity_ttl or 0),
            disclosed_quantity=int(request.disclosed_quantity or 0),
            market_protection=protection,
            tag=request.tag or "",
            placed_at=self.now,
            placed_by=placed_by or self.user_id,
            meta=dict(meta or {}),
        )
        if legs:
            order.meta["iceberg"] = {
                "leg": 1,
                "legs": legs,
                "leg_quantity": request.iceberg_quantity,
                "total_quantity": request.quantity,
                "remaining_quantity": request.quantity,
            }
        if alloc is not None:
            order.meta["_alloc"] = alloc
        self.orders[order.order_id] = order
        order.record("PUT ORDER REQ RECEIVED", self.now)
        order.record("VALIDATION PENDING", self.now)
        self.note(
            "placed", order, "placed " + _terms(order) + (f", by {placed_by}" if placed_by else "")
        )
        # --- RMS checks: the order enters the book as REJECTED ---
        rms = broken(RMS_RULES, case)
        if rms is not None:
            self._reject(order, rms.refusal(case))
            return order
        order.limit_price = self._limit_for(order, ltp)
        segment = inst.margin_segment
        needed_qty = self._opening_margin_quantity(order, request.quantity)
        if needed_qty:
            required = total(
                margin_for(
                    inst,
                    request.product,
                    request.transaction_type,
                    needed_qty,
                    self._order_price(order),
                    self.underlying_price(inst),
                )
            )
            available = self.net(segment)  # the new order is not in the book's blocks yet
            funds = FundsCase(required, available)
            short = broken(FUNDS_RULES, funds)
            if short is not None:
                order.status_message_raw = rules.RMS_MARGIN_RAW.format(
                    required=required, available=available, user_id=self.user_id
                )
                self._reject(order, short.refusal(funds))
                return order
        if request.variety == "amo":
            order.release_at = sessions.amo_release_time(
                inst.exchange, request.order_type, self.now
            )
            order.record("AMO REQ RECEIVED", self.now)
            return order
        self._send_to_exchange(order)
        return order

    def _pending_alloc(self, inst: Instrument) -> dict[str, int]:
        """What working delivery sells of ``inst`` still hold, by source of the shares."""
        out = {"t1": 0, "today": 0, "demat": 0}
        for o in self.orders.values():
            if o.inst.key == inst.key and o.status in WORKING and "_alloc" in o.meta:
                for k, v in o.meta["_alloc"].items():
                    out[k] += int(v)
        return out

    def _check_holdings(self, inst: Instrument, quantity: int, demat_only: bool) -> dict[str, int]:
        """Which shares a delivery sell of ``quantity`` uses: today's buys first (an intraday
        square-up), then T+1 shares (BTST), then demat shares. A GTT's sell (``demat_only``)
        is backed only by demat shares less open sells (kite-domain.md §0). Raises Kite's
        errors (rules.md §10, §11)."""
        holding = self.holdings.get(inst.key)
        pending = self._pending_alloc(inst)
        pos = self.positions.get((inst.exchange, inst.tradingsymbol, "CNC"))
        bought = (pos.day_buy_quantity if pos else 0) - self._today_sold.get(inst.key, 0)
        demat = holding.demat_free() if holding else 0
        if demat_only:
            t1_avail, today_avail = 0, 0
            demat_avail = demat - sum(pending.values())
        else:
            t1_avail = (holding.t1_free() if holding else 0) - pending["t1"]
            today_avail = bought - pending["today"]
            demat_avail = demat - pending["demat"]
        t1_avail, today_avail, demat_avail = (
            max(t1_avail, 0),
            max(today_avail, 0),
            max(demat_avail, 0),
        )
        from_today = min(quantity, today_avail)
        from_t1 = min(quantity - from_today, t1_avail)
        from_demat = quantity - from_t1 - from_today
        # Without DDPI/POA, demat shares need today's TPIN authorisation; T+1 shares and today's
        # buys are not in demat yet and need none (rules.md §11).
        unauthorised = 0
        if from_demat and not standing_authorisation(self.demat_consent) and holding is not None:
            authorised = holding.authorised_quantity - holding.sold_authorised - pending["demat"]
            if from_demat > authorised:
                unauthorised = from_demat - max(authorised, 0)
        check(SELL_RULES, SellCase(quantity, t1_avail + today_avail + demat_avail, unauthorised))
        return {"t1": from_t1, "today": from_today, "demat": from_demat}

    def _limit_for(self, order: Order, ltp: float) -> float:
        """The price a protected MARKET/SL-M order is converted to (rules.md §3): the band
        ``market_protection`` % away from the LTP (SL-M: from the trigger price)."""
        if order.order_type not in ("MARKET", "SL-M"):
            return order.price
        percent = (
            rules.AUTO_PROTECTION_PERCENT
            if order.market_protection < 0
            else order.market_protection
        )
        base = order.trigger_price if order.order_type == "SL-M" else ltp
        tick = order.inst.tick_size
        if order.transaction_type == "BUY":
            return round_tick(base * (1 + percent / 100), tick, "up")
        return max(round_tick(base * (1 - percent / 100), tick, "down"), tick)

    def _reject(self, order: Order, message: str) -> None:
        order.record("REJECTED", self.now, message)
        self.note("rejected", order, message)

    def _send_to_exchange(self, order: Order) -> None:
        order.record("OPEN PENDING", self.now)
        # rules.md §1, §4: the exchange's rejections (off the tick grid, SL-M barred).
        case = self.case(order)
        refused = broken(EXCHANGE_RULES, case)
        if refused is not None:
            self._reject(order, refused.refusal(case))
            return
        order.exchange_order_id = self._next_exchange_id()
        order.exchange_timestamp = self.now
        order.exchange_update_timestamp = self.now
        if order.validity == "TTL":
            order.expires_at = self.now + timedelta(minutes=order.validity_ttl)
        if order.order_type in ("SL", "SL-M"):
            order.record("TRIGGER PENDING", self.now)
        else:
            order.record("OPEN", self.now)
        self.match_now(order)

    # ----- fills -----------------------------------------------------------------------------
    def match_now(self, order: Order) -> None:
        """Try ``order`` against the current tick (placement, release, trigger)."""
        inst = order.inst
        path = self.market.day_path(inst, self.now.date())
        i = bisect.bisect_right(path.times, self.now) - 1
        if i < 0 or not sessions.is_open(inst.exchange, self.now):
            self._ioc_done(order)
            return
        self.on_tick(order, path.times[i], path.prices[i], path.liquidity[i], immediate=True)
        self._ioc_done(order)

    def _ioc_done(self, order: Order) -> None:
        if order.validity == "IOC" and order.status == "OPEN":
            order.cancelled_quantity = order.quantity - order.filled_quantity
            order.record("CANCELLED", self.now)
            self.note("cancelled", order, "IOC: the rest cancelled")

    def on_tick(
        self,
        order: Order,
        at: datetime,
        price: float,
        liquidity: int | None,
        immediate: bool = False,
    ) -> None:
        if order.status == "TRIGGER PENDING":
            hit = (
                price >= order.trigger_price
                if order.transaction_type == "BUY"
                else price <= order.trigger_price
            )
            if not hit:
                return
            order.triggered = True
            if order.order_type == "SL-M":
                order.limit_price = self._limit_for(order, price)
            order.exchange_update_timestamp = at
            order.record("OPEN", at)
            self.note(
                "stop triggered", order, f"trigger {order.trigger_price:g} hit at {price:g}", at
            )
            immediate = True
        if order.status != "OPEN":
            return
        limit = order.limit_price
        buy = order.transaction_type == "BUY"
        # A limit arriving (placed, triggered) meets the book: it is marketable when it reaches
        # the touch, the best ask for a buy and the best bid for a sell, and fills there
        # (issue 41 §2). A resting limit fills at its own price once the market trades
        # through it; a MARKET or SL-M order at the tick's price.
        touching = immediate and order.order_type not in ("MARKET", "SL-M")
        bid, ask = self.market.touch(order.inst, price) if touching else (price, price)
        marketable = (ask <= limit) if buy else (bid >= limit)
        if not marketable:
            return
        if order.order_type in ("MARKET", "SL-M"):
            fill_price = price
        elif touching:
            fill_price = ask if buy else bid
        else:
            fill_price = limit
        want = order.pending_quantity
        if liquidity is not None:
            key = (order.inst.instrument_token, at)
            left = liquidity - self._liquidity.get(key, 0)
            lot = max(order.inst.lot_size, 1)
            left = left // lot * lot
            if left <= 0:
                return
            want = min(want, left)
            self._liquidity[key] = self._liquidity.get(key, 0) + want
        self.fill(order, want, fill_price, at)

    def fill(self, order: Order, quantity: int, price: float, at: datetime) -> None:
        # A fill is never stamped before the order was placed (issue 41 §2): a placement
        # between two ticks fills against the earlier tick, at the placement's time.
        at = max(at, order.placed_at)
        order.filled_quantity += quantity
        order.fill_value += quantity * price
        order.exchange_update_timestamp = at
        trade: TradeRow = {
            "trade_id": self._next_trade_id(),
            "order_id": order.order_id,
            "exchange": order.inst.exchange,
            "tradingsymbol": order.inst.tradingsymbol,
            "instrument_token": order.inst.instrument_token,
            "product": order.product,
            "average_price": price,
            "quantity": quantity,
            "exchange_order_id": order.exchange_order_id,
            "transaction_type": order.transaction_type,
            "fill_timestamp": kite_ts(at),
            "order_timestamp": kite_ts(order.placed_at),
            "exchange_timestamp": kite_ts(at),
        }
        self.trades.append(trade)
        order.trades.append(trade)
        self.position(order.inst, order.product).add_fill(order.transaction_type, quantity, price)
        alloc = order.meta.get("_alloc")
        if alloc is not None:
            left = quantity
            used = {}
            for source in ("today", "t1", "demat"):
                take = min(left, int(alloc[source]))
                alloc[source] -= take
                used[source] = take
                left -= take
            holding = self.holdings.get(order.inst.key)
            if holding is not None:
                holding.sold_t1 += used["t1"]
                holding.sold_authorised += used["demat"]
                holding.used_quantity += used["t1"] + used["demat"]
            key = order.inst.key
            self._today_sold[key] = self._today_sold.get(key, 0) + used["today"]
        if "iceberg" in order.meta:
            ice = order.meta["iceberg"]
            ice["remaining_quantity"] = order.quantity - order.filled_quantity
            ice["leg"] = min(ice["legs"], 1 + order.filled_quantity // max(ice["leg_quantity"], 1))
        self.note(
            "fill",
            order,
            f"{quantity} filled at {price:g} ({order.filled_quantity} of {order.quantity})",
            at,
        )
        if order.pending_quantity == 0:
            order.record("COMPLETE", at)
        else:  # each partial fill is a row of the order's history (the book equals the last)
            order.record("OPEN", at)

    # ----- modify / cancel -------------------------------------------------------------------
    def modify(
        self,
        variety: str,
        order_id: str,
        quantity: int | None,
        price: float | None,
        order_type: str | None,
        trigger_price: float | None,
        validity: str | None,
        disclosed_quantity: int | None,
    ) -> Order:
        order = self.get_order(order_id)
        new_type = order_type or order.order_type
        new_qty = int(quantity) if quantity else order.quantity
        new_price = float(price) if price else (order.price if new_type in ("LIMIT", "SL") else 0.0)
        new_trigger = (
            float(trigger_price)
            if trigger_price
            else (order.trigger_price if new_type in ("SL", "SL-M") else 0.0)
        )
        inst = order.inst
        lower, upper = self.market.circuits(inst, self.now.date())
        case = replace(
            self.case(
                order,
                variety=variety,
                quantity=new_qty,
                order_type=new_type,
                price=new_price,
                trigger_price=new_trigger,
            ),
            lower=lower,
            upper=upper,
        )
        check(MODIFY_STATE_RULES, case)
        check(CALL_VARIETY_RULES, variety)
        check(AMO_RULES, case)
        check(MODIFY_RULES, case)
        order.modifications += 1
        was = order.status
        order.record("MODIFY VALIDATION PENDING", self.now)
        order.record("MODIFY PENDING", self.now)
        order.quantity, order.price, order.trigger_price = new_qty, new_price, new_trigger
        order.order_type = new_type
        if validity:
            order.validity = validity
        if disclosed_quantity is not None:
            order.disclosed_quantity = int(disclosed_quantity)
        order.modified = True
        order.limit_price = self._limit_for(order, self.ltp(inst))
        order.exchange_update_timestamp = self.now if order.exchange_order_id else None
        order.record("MODIFIED", self.now)
        self.note("modified", order, "modified " + _terms(order))
        if was == "AMO REQ RECEIVED":
            order.record("AMO REQ RECEIVED", self.now)
            return order
        if new_type in ("SL", "SL-M") and not order.triggered:
            order.record("TRIGGER PENDING", self.now)
        else:
            order.record("OPEN", self.now)
        self.match_now(order)
        return order

    def cancel(self, variety: str, order_id: str, message: str | None = None) -> Order:
        order = self.get_order(order_id)
        case = self.case(order, variety=variety)
        check(CANCEL_STATE_RULES, case)
        check(CALL_VARIETY_RULES, variety)
        check(AMO_RULES, case)
        self._cancel(order, self.now, message)
        return order

    def _cancel(
        self, order: Order, at: datetime, message: str | None = None, why: str | None = None
    ) -> None:
        # CANCEL PENDING is an expected transient state (kite-domain.md §2; no Zerodha source).
        order.record("CANCEL PENDING", at)
        order.cancelled_quantity = order.quantity - order.filled_quantity
        if order.exchange_order_id:
            order.exchange_update_timestamp = at
        order.record("CANCELLED", at, message)
        self.note("cancelled", order, why or message or "cancelled", at)

    # ----- scheduled events ------------------------------------------------------------------
    def release_amo(self, order: Order, at: datetime) -> None:
        if order.status != "AMO REQ RECEIVED":
            return
        saved = self.now
        self.now = at
        order.limit_price = self._limit_for(order, self.ltp(order.inst))
        self.note(
            "AMO released", order, "sent to the exchange (modify or cancel with variety regular)"
        )
        self._send_to_exchange(order)
        self.now = saved

    def square_off(self, exchanges: tuple[str, ...], at: datetime) -> None:
        """MIS auto square-off (rules.md §5): cancel open MIS orders, close MIS positions at the
        LTP, charge ₹50 + GST per order."""
        for order in list(self.orders.values()):
            if (
                order.product == "MIS"
                and order.status in WORKING
                and order.inst.exchange in exchanges
            ):
                self._cancel(order, at, rules.SQUARE_OFF_MESSAGE)
        for pos in list(self.positions.values()):
            if pos.product != "MIS" or pos.inst.exchange not in exchanges or pos.quantity == 0:
                continue
            side = "SELL" if pos.quantity > 0 else "BUY"
            price = self.market.price_at(pos.inst, at)
            for qty in _slices(abs(pos.quantity), pos.inst):
                self._square_off_order(pos.inst, side, qty, price, at)

    def _square_off_order(
        self, inst: Instrument, side: str, qty: int, price: float, at: datetime
    ) -> None:
        order = Order(
            order_id=self._next_order_id(),
            inst=inst,
            variety="regular",
            transaction_type=side,
            quantity=qty,
            product="MIS",
            order_type="MARKET",
            price=0.0,
            trigger_price=0.0,
            validity="DAY",
            validity_ttl=0,
            disclosed_quantity=0,
            market_protection=-1,
            tag="",
            placed_at=at,
            placed_by="ADMINSQF",
        )
        self.orders[order.order_id] = order
        self.note("auto square-off", order, f"MIS closed by the broker at {price:g}", at)
        order.record("PUT ORDER REQ RECEIVED", at)
        order.record("VALIDATION PENDING", at)
        order.record("OPEN PENDING", at)
        order.exchange_order_id = self._next_exchange_id()
        order.exchange_timestamp = at
        order.status_message = rules.SQUARE_OFF_MESSAGE
        order.record("OPEN", at)
        order.limit_price = price
        self.fill(order, qty, price, at)
        self.charges[inst.margin_segment] += rules.SQUARE_OFF_CHARGE

    def close_session(self, exchanges: tuple[str, ...], at: datetime) -> None:
        """Whatever is still working at the close is cancelled (Kite has no good-till-cancelled
        orders; a GTT's order that did not fill is cancelled too, rules.md §8)."""
        for order in self.orders.values():
            if order.inst.exchange in exchanges and order.status in ("OPEN", "TRIGGER PENDING"):
                self._cancel(order, at, why="cancelled at the close (a DAY order)")

    def roll_day(self, at: datetime) -> None:
        """The start of a new trading day (at midnight before it): yesterday settles.

        - funds: the opening balance takes yesterday's cash flows (delivery and option trades),
          the M2M of futures and MIS positions (settled daily) and the charges;
        - holdings: T+1 shares settle into demat (realised), shares sold leave, today's CNC
          buys arrive as T+1; used and TPIN-authorised quantities reset (authorisation lasts a
          day, rules.md §11);
        - positions: carried NRML positions become overnight at yesterday's close; expired
          contracts settle at their last price (options at intrinsic value) and close;
        - the order book and tradebook start empty, except AMOs waiting for release.
        """
        self.now = at
        day = at.date()
        before = sessions.previous_trading_day(day)
        close_at = datetime.combine(before, time(23, 59, 59), IST)
        for segment in ("equity", "commodity"):
            used = self.utilised(segment)
            funds = self.funds[segment]
            self.funds[segment] = replace(
                funds,
                opening_balance=round(
                    funds.opening_balance
                    + funds.intraday_payin
                    + used["flows"]
                    + used["m2m"]
                    - self.charges[segment],
                    2,
                ),
                intraday_payin=0.0,
            )
            self.charges[segment] = 0.0
        for holding in self.holdings.values():
            holding.realised_quantity += holding.t1_quantity - holding.used_quantity
            holding.t1_quantity = 0
            holding.used_quantity = holding.sold_t1 = holding.sold_authorised = 0
            holding.authorised_quantity = 0
            holding.authorised_date = ""
        carried: dict[tuple[str, str, str], Position] = {}
        for key, pos in self.positions.items():
            qty = pos.quantity
            inst = pos.inst
            if qty == 0:
                continue
            last = self.market.price_at(inst, close_at)
            if pos.product == "CNC" and inst.is_equity:
                if qty > 0:
                    bought = (
                        pos.day_buy_value / pos.day_buy_quantity if pos.day_buy_quantity else last
                    )
                    target = self.holdings.get(inst.key)
                    if target is None:
                        target = Holding(inst, 0, 0, 0, 0, 0, "", 0, "", 0.0, 0)
                        self.holdings[inst.key] = target
                    total_qty = target.realised_quantity + qty
                    target.average_price = round(
                        (target.average_price * target.realised_quantity + bought * qty)
                        / total_qty,
                        4,
                    )
                    target.t1_quantity += qty
                continue
            if inst.expiry is not None and inst.expiry < day:
                self.events.append(
                    Event(
                        at,
                        "expiry",
                        f"{inst.key} {pos.product} {qty} expired and settled",
                        (inst.key,),
                    )
                )
                if inst.is_option:
                    spot = self.underlying_price_at(inst, close_at)
                    value = max(
                        0.0,
                        spot - inst.strike if inst.instrument_type == "CE" else inst.strike - spot,
                    )
                    funds = self.funds[inst.margin_segment]
                    self.funds[inst.margin_segment] = replace(
                        funds,
                        opening_balance=round(
                            funds.opening_balance + qty * value * inst.multiplier, 2
                        ),
                    )
                continue
            carried[key] = Position(inst, pos.product, qty, last)
        for holding in self.holdings.values():
            holding.quantity = holding.realised_quantity + holding.t1_quantity
            holding.opening_quantity = holding.quantity
        self.holdings = {k: h for k, h in self.holdings.items() if h.quantity > 0}
        self.positions = carried
        self.orders = {k: o for k, o in self.orders.items() if o.status == "AMO REQ RECEIVED"}
        self.trades = []
        self._today_sold = {}
        self._liquidity = {}

    def underlying_price_at(self, inst: Instrument, moment: datetime) -> float:
        under = self.master.by_key(inst.underlying) if inst.underlying else None
        return self.market.price_at(under or inst, moment)

    def expire_ttl(self, order: Order, at: datetime) -> None:
        if order.status in ("OPEN", "TRIGGER PENDING"):
            self._cancel(order, at, why="its validity_ttl ran out")


def _terms(order: Order) -> str:
    price = f" at {order.price:g}" if order.order_type in ("LIMIT", "SL") else ""
    trigger = f" trigger {order.trigger_price:g}" if order.order_type in ("SL", "SL-M") else ""
    return f"({order.variety}{price}{trigger})"


def _slices(quantity: int, inst: Instrument) -> list[int]:
    """An order of ``quantity`` split at the freeze quantity in whole lots, as the exchange
    takes no single order above it (rules.md §2): the auto square-off's orders."""
    if not inst.freeze_quantity or quantity <= inst.freeze_quantity:
        return [quantity]
    lot = max(inst.lot_size, 1)
    most = inst.freeze_quantity // lot * lot
    out = [most] * (quantity // most)
    if quantity % most:
        out.append(quantity % most)
    return out
