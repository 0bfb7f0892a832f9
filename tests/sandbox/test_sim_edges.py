"""Issue 45: each Kite rule the simulation enforces, on both sides of its boundary (exactly at the
limit, one step inside, one step outside), so that a rule moved by a tick, a second or a share
fails here. The messages themselves are checked in test_sim_rejections.py."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from kite_skills.sandbox.sim import KiteConnectError, Simulation, parse_scenario, rules
from kite_skills.sandbox.sim.portfolio import FUTURES_RATE, MIS_EQUITY_RATE

# A Wednesday; funds enough for three lots of the future, so only the rule under test refuses.
BASE = """
clock: "2026-12-02 11:30:00"
profile: {meta: {demat_consent: physical}}
funds:
  equity: {opening_balance: 5000000}
  commodity: {opening_balance: 1000000}
holdings:
  - {exchange: NSE, tradingsymbol: INFY, quantity: 120, t1_quantity: 20, average_price: 1480}
"""
INFY = {"exchange": "NSE", "tradingsymbol": "INFY", "product": "CNC", "price": 1500.0}
FUT = {"exchange": "NFO", "tradingsymbol": "NIFTY26DECFUT", "product": "NRML", "price": 25000.0}
CRUDE = {"exchange": "MCX", "tradingsymbol": "CRUDEOIL26DECFUT", "product": "NRML", "price": 5800.0}
NIFTY_LOT = 65
TICK = 0.1  # INFY's and the future's tick size in the built-in master


def sim(text: str = BASE) -> Simulation:
    return Simulation(parse_scenario(text, "edges.yaml"))


def place(s: Simulation, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "variety": "regular",
        "transaction_type": "BUY",
        "quantity": 1,
        "order_type": "LIMIT",
        **INFY,
    }
    args.update(kw)
    return s.place_order(**args)


def modify(s: Simulation, order_id: str, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "quantity": None,
        "price": None,
        "order_type": None,
        "trigger_price": None,
        "validity": None,
        "disclosed_quantity": None,
    }
    args.update(kw)
    return s.modify_order("regular", order_id, **args)


def status(s: Simulation, order_id: str) -> str:
    return str(next(o for o in s.orders() if o["order_id"] == order_id)["status"])


def refusal(act: Any) -> str:
    with pytest.raises(KiteConnectError) as info:
        act()
    return info.value.message


def day_at(s: Simulation, clock: str, days: int = 0) -> datetime:
    """``clock`` (HH:MM:SS) on the scenario's day, or ``days`` later."""
    hour, minute, second = (int(part) for part in clock.split(":"))
    return s.now.replace(hour=hour, minute=minute, second=second) + timedelta(days=days)


def ltp(s: Simulation, key: str = "NSE:INFY") -> float:
    return float(s.ltp(key)[key]["last_price"])


# -- quantity: a whole number of lots --------------------------------------------------------

LOT_QUANTITIES = [
    (1, False),
    (64, False),
    (65, True),
    (66, False),
    (129, False),
    (130, True),
    (131, False),
    (194, False),
    (195, True),
    (196, False),
]


@pytest.mark.parametrize(("quantity", "whole_lots"), LOT_QUANTITIES)
def test_a_placed_quantity_must_be_a_whole_number_of_lots(quantity: int, whole_lots: bool) -> None:
    s = sim()
    row = place(s, **FUT, quantity=quantity)
    placed = next(o for o in s.orders() if o["order_id"] == row["order_id"])
    if whole_lots:
        assert placed["status"] == "OPEN", placed["status_message"]
    else:
        assert placed["status"] == "REJECTED"
        assert placed["status_message"] == rules.LOT_MULTIPLE.format(lot=NIFTY_LOT)


@pytest.mark.parametrize(("quantity", "whole_lots"), LOT_QUANTITIES)
def test_a_modified_quantity_must_be_a_whole_number_of_lots(
    quantity: int, whole_lots: bool
) -> None:
    s = sim()
    oid = place(s, **FUT, quantity=NIFTY_LOT)["order_id"]
    if whole_lots:
        modify(s, oid, quantity=quantity)
        assert next(o for o in s.orders() if o["order_id"] == oid)["quantity"] == quantity
    else:
        message = refusal(lambda: modify(s, oid, quantity=quantity))
        assert message == rules.LOT_MULTIPLE.format(lot=NIFTY_LOT)


# -- circuit limits: every priced order type, placed or modified ------------------------------


def limits(s: Simulation) -> tuple[float, float]:
    facts = s.instrument_facts("NSE", "INFY")
    return facts.lower_circuit, facts.upper_circuit


def high(s: Simulation) -> str:
    return rules.CIRCUIT_HIGH.format(limit=f"{limits(s)[1]:.2f}")


def low(s: Simulation) -> str:
    return rules.CIRCUIT_LOW.format(limit=f"{limits(s)[0]:.2f}")


# (order type, side, which limit, the trigger that makes the order valid otherwise)
PRICED = [
    ("LIMIT", "BUY", "upper", None),
    ("LIMIT", "BUY", "lower", None),
    ("LIMIT", "SELL", "upper", None),
    ("LIMIT", "SELL", "lower", None),
    ("SL", "BUY", "upper", 1700.0),  # a buy stop triggers above the LTP
    ("SL", "SELL", "lower", 1500.0),  # a sell stop triggers below it
]


def _edge_price(s: Simulation, side: str, steps: int) -> float:
    lower, upper = limits(s)
    edge = upper if side == "upper" else lower
    outward = 1 if side == "upper" else -1
    return round(edge + outward * steps * TICK, 1)


@pytest.mark.parametrize(("order_type", "side", "edge", "trigger"), PRICED)
def test_a_price_at_a_circuit_limit_is_placed_and_one_tick_beyond_it_is_refused(
    order_type: str, side: str, edge: str, trigger: float | None
) -> None:
    s = sim()
    kw = {"order_type": order_type, "transaction_type": side, "trigger_price": trigger}
    for steps in (0, -1):  # at the limit, one tick inside
        placed = place(s, **kw, price=_edge_price(s, edge, steps))
        assert status(s, placed["order_id"]) != "REJECTED"
    message = refusal(lambda: place(s, **kw, price=_edge_price(s, edge, 1)))
    assert message == (high(s) if edge == "upper" else low(s))


@pytest.mark.parametrize(("order_type", "side", "edge", "trigger"), PRICED)
def test_a_price_modified_to_a_circuit_limit_is_taken_and_one_tick_beyond_it_is_refused(
    order_type: str, side: str, edge: str, trigger: float | None
) -> None:
    s = sim()
    # A resting order of the type: a buy limit below the market, a sell limit above it, a stop.
    start = {"BUY": 1400.0, "SELL": 1800.0}[side] if trigger is None else trigger
    kw = {"order_type": order_type, "transaction_type": side, "trigger_price": trigger}
    oid = place(s, **kw, price=start)["order_id"]
    assert status(s, oid) in ("OPEN", "TRIGGER PENDING")
    message = refusal(lambda: modify(s, oid, price=_edge_price(s, edge, 1)))
    assert message == (high(s) if edge == "upper" else low(s))
    modify(s, oid, price=_edge_price(s, edge, 0))
    assert next(o for o in s.orders() if o["order_id"] == oid)["price"] == _edge_price(s, edge, 0)


# (side, which limit, the message) for a stop's trigger
TRIGGERS = [
    ("SELL", "lower", rules.TRIGGER_CIRCUIT_SELL),
    ("BUY", "upper", rules.TRIGGER_CIRCUIT_BUY),
]


@pytest.mark.parametrize(("side", "edge", "template"), TRIGGERS)
@pytest.mark.parametrize("order_type", ["SL", "SL-M"])
def test_a_trigger_at_a_circuit_limit_is_taken_and_one_tick_beyond_it_is_refused(
    order_type: str, side: str, edge: str, template: str
) -> None:
    s = sim()
    limit = limits(s)[0 if edge == "lower" else 1]
    expected = template.format(limit=f"{limit:.2f}")

    def stop(trigger: float) -> dict[str, Any]:
        price = _edge_price(s, edge, 0) if order_type == "SL" else None  # the price is inside
        return {"order_type": order_type, "trigger_price": trigger, "price": price}

    def placed(trigger: float) -> dict[str, Any]:
        return place(s, **stop(trigger), transaction_type=side, market_protection=2)

    at_limit = placed(_edge_price(s, edge, 0))["order_id"]
    assert status(s, at_limit) == "TRIGGER PENDING"
    assert refusal(lambda: placed(_edge_price(s, edge, 1))) == expected
    # and a modification may not move a resting stop's trigger past the limit either
    resting = placed(1500.0 if side == "SELL" else 1700.0)["order_id"]
    assert refusal(lambda: modify(s, resting, **stop(_edge_price(s, edge, 1)))) == expected
    modify(s, resting, **stop(_edge_price(s, edge, 0)))
    assert status(s, resting) == "TRIGGER PENDING"


# -- fresh MIS: refused from the square-off time itself ---------------------------------------

# (instrument, the square-off time that day): equity 15:20, F&O 15:25, MCX 25 minutes before
# its close (23:55 in December).
SQUARE_OFF = [(INFY, "15:20"), (FUT, "15:25"), (CRUDE, "23:30")]


@pytest.mark.parametrize(("instrument", "cutoff"), SQUARE_OFF)
def test_fresh_mis_is_taken_until_the_square_off_time_and_refused_from_it(
    instrument: dict[str, Any], cutoff: str
) -> None:
    lot = NIFTY_LOT if instrument is FUT else 1
    order = {**instrument, "product": "MIS", "quantity": lot}
    order["price"] = round(order["price"] - 100, 1)  # rests below the market
    s = sim()
    s.advance_to(day_at(s, cutoff + ":00") - timedelta(seconds=1))
    assert status(s, place(s, **order)["order_id"]) == "OPEN"
    s.advance_to(day_at(s, cutoff + ":00"))
    assert refusal(lambda: place(s, **order)) == rules.MIS_BLOCKED.format(time=cutoff)
    s.advance_to(day_at(s, cutoff + ":01"))
    assert refusal(lambda: place(s, **order)) == rules.MIS_BLOCKED.format(time=cutoff)


def test_a_conversion_to_mis_is_taken_until_the_square_off_time_and_refused_from_it() -> None:
    s = sim()
    place(s, quantity=2, price=round(ltp(s) + 10, 1))  # a CNC position bought today
    s.advance_to(day_at(s, "15:19:59"))
    assert s.convert_position("NSE", "INFY", "BUY", "day", 1, "CNC", "MIS") is True
    s.advance_to(day_at(s, "15:20:00"))
    message = refusal(lambda: s.convert_position("NSE", "INFY", "BUY", "day", 1, "CNC", "MIS"))
    assert message == rules.MIS_BLOCKED.format(time="15:20")


# -- AMO windows: equity 16:00–08:58, F&O 15:45–09:10, MCX its close–08:58 ---------------------

# (instrument, a moment, days after the scenario's day, whether an AMO may be placed then)
AMO_EDGES = [
    (INFY, "15:59:59", 0, False),
    (INFY, "16:00:00", 0, True),
    (INFY, "08:57:59", 1, True),
    (INFY, "08:58:00", 1, False),
    (FUT, "15:44:59", 0, False),
    (FUT, "15:45:00", 0, True),
    (FUT, "09:09:59", 1, True),
    (FUT, "09:10:00", 1, False),
    (CRUDE, "23:54:59", 0, False),
    (CRUDE, "23:55:00", 0, True),
    (CRUDE, "08:57:59", 1, True),
    (CRUDE, "08:58:00", 1, False),
]


@pytest.mark.parametrize(("instrument", "clock", "days", "open_for_amo"), AMO_EDGES)
def test_the_amo_window_opens_and_closes_exactly_at_its_stated_times(
    instrument: dict[str, Any], clock: str, days: int, open_for_amo: bool
) -> None:
    s = sim()
    s.advance_to(day_at(s, clock, days))
    order = {**instrument, "variety": "amo", "quantity": NIFTY_LOT if instrument is FUT else 1}
    if open_for_amo:
        assert status(s, place(s, **order)["order_id"]) == "AMO REQ RECEIVED"
    else:
        window = rules.AMO_WINDOWS[instrument["exchange"]]
        message = refusal(lambda: place(s, **order))
        assert message == rules.AMO_DURING_MARKET.format(window=window)


def test_an_amo_can_be_modified_until_its_window_closes_and_not_from_then() -> None:
    s = sim()
    s.advance_to(day_at(s, "17:00:00"))
    oid = place(s, variety="amo")["order_id"]
    s.advance_to(day_at(s, "08:57:59", 1))
    s.modify_order("amo", oid, quantity=2, price=None, order_type=None, trigger_price=None,
                   validity=None, disclosed_quantity=None)  # fmt: skip
    s.advance_to(day_at(s, "08:58:00"))
    window = rules.AMO_WINDOWS["NSE"]
    message = refusal(lambda: s.cancel_order("amo", oid))
    assert message == rules.AMO_DURING_MARKET.format(window=window)


# -- AMO release: 09:00 for equity and MCX, 09:15 for F&O and for equity SL and SL-M ----------

STOP_BUY = {"trigger_price": 1700.0, "market_protection": 2}
# (what, the order, when it is sent to the exchange)
RELEASES = [
    ("equity LIMIT", {**INFY}, "09:00"),
    ("equity SL", {**INFY, "order_type": "SL", "price": 1710.0, **STOP_BUY}, "09:15"),
    ("equity SL-M", {**INFY, "order_type": "SL-M", "price": None, **STOP_BUY}, "09:15"),
    ("F&O LIMIT", {**FUT, "quantity": NIFTY_LOT}, "09:15"),
    ("MCX LIMIT", {**CRUDE}, "09:00"),
]


# (when the AMO is placed, days after the scenario's Wednesday, days until it is released)
PLACED = [
    pytest.param("23:56:00", 0, 1, id="the evening before"),
    pytest.param("08:57:00", 1, 0, id="the same morning"),
    pytest.param("10:00:00", 3, 2, id="on Saturday"),
]


@pytest.mark.parametrize(
    ("order", "release"), [pytest.param(o, r, id=what) for what, o, r in RELEASES]
)
@pytest.mark.parametrize(("placed", "days", "waits"), PLACED)
def test_an_amo_is_released_at_its_segments_time_not_a_second_before(
    order: dict[str, Any], release: str, placed: str, days: int, waits: int
) -> None:
    s = sim()
    s.advance_to(day_at(s, placed, days))
    oid = place(s, **order, variety="amo")["order_id"]
    s.advance_to(day_at(s, release + ":00", waits) - timedelta(seconds=1))
    assert status(s, oid) == "AMO REQ RECEIVED"
    s.advance_to(day_at(s, release + ":00"))
    assert status(s, oid) in ("OPEN", "TRIGGER PENDING", "COMPLETE")
    sent = [r for r in s.order_history(oid) if r["status"] == "OPEN PENDING"]
    assert sent and sent[0]["order_timestamp"].endswith(release + ":00")


# -- a sell GTT: demat shares less every open sell --------------------------------------------

GTT_PATH = (
    BASE
    + """
market:
  NSE:INFY:
    path:
      - ["11:31", 1610.0]
      - ["11:50", 1670.0]
"""
)


def _sell_from_today(s: Simulation) -> None:
    place(s, quantity=5, price=1700.0)  # bought today: fills at the market
    place(s, transaction_type="SELL", quantity=5, price=1900.0)  # rests, backed by today's buy


def _sell_from_t1(s: Simulation) -> None:
    place(s, transaction_type="SELL", quantity=20, price=1900.0)  # the 20 T+1 shares


def _sell_into_demat(s: Simulation) -> None:
    place(s, transaction_type="SELL", quantity=30, price=1900.0)  # 20 T+1, then 10 demat


# (what the open sells hold, how they are made, the demat shares a sell GTT may still use)
OPEN_SELLS = [
    ("none", lambda s: None, 100),
    ("today's buys", _sell_from_today, 95),
    ("T+1 shares", _sell_from_t1, 80),
    ("T+1 and demat shares", _sell_into_demat, 70),
    ("all three", lambda s: (_sell_from_today(s), _sell_into_demat(s)), 65),
]


@pytest.mark.parametrize(
    ("open_sells", "free"), [pytest.param(make, free, id=what) for what, make, free in OPEN_SELLS]
)
@pytest.mark.parametrize("over", [0, 1])
def test_a_sell_gtt_is_backed_by_demat_shares_less_every_open_sell(
    open_sells: Any, free: int, over: int
) -> None:
    """100 demat shares and 20 T+1: a GTT's sell may use only demat shares, and every open
    delivery sell, whatever shares it uses, is taken from them first (kite-domain.md §0)."""
    s = sim(GTT_PATH)
    open_sells(s)
    leg = {"transaction_type": "SELL", "quantity": free + over, "price": 1648.0, "product": "CNC"}
    tid = s.place_gtt("single", "INFY", "NSE", [1650.0], 1610.0, [leg])["trigger_id"]
    s.advance_to(day_at(s, "11:55:00"))
    result = s.get_gtt(tid)["orders"][0]["result"]["order_result"]
    if over:
        assert (result["status"], result["rejection_reason"]) == (
            "failed",
            rules.INSUFFICIENT_HOLDINGS,
        )
    else:
        assert result["status"] == "success", result


# -- a sell past a long position blocks margin for the short part only ------------------------


def blocked(s: Simulation, segment: str = "equity") -> float:
    used = s.margins(segment)["utilised"]
    return float(used["exposure"] + used["span"])


@pytest.mark.parametrize("quantity", [9, 10, 11, 25])
def test_an_mis_sell_past_a_long_position_blocks_margin_for_the_short_part(quantity: int) -> None:
    s = sim()
    place(s, product="MIS", quantity=10, price=round(ltp(s) + 10, 1))  # long 10, filled
    before = blocked(s)
    place(s, product="MIS", transaction_type="SELL", quantity=quantity, price=1900.0)  # rests
    short = max(quantity - 10, 0)
    assert blocked(s) - before == pytest.approx(short * 1900.0 * MIS_EQUITY_RATE)


@pytest.mark.parametrize("quantity", [9, 10, 11, 25])
def test_an_mis_buy_past_a_short_position_blocks_margin_for_the_long_part(quantity: int) -> None:
    s = sim()
    place(s, product="MIS", transaction_type="SELL", quantity=10, price=round(ltp(s) - 10, 1))
    before = blocked(s)
    place(s, product="MIS", quantity=quantity, price=1400.0)  # rests
    extra = max(quantity - 10, 0)
    assert blocked(s) - before == pytest.approx(extra * 1400.0 * MIS_EQUITY_RATE)


@pytest.mark.parametrize("lots", [1, 2])
def test_a_futures_sell_past_a_long_position_blocks_margin_for_the_short_lots(lots: int) -> None:
    s = sim()
    price = round(ltp(s, "NFO:NIFTY26DECFUT") + 50, 1)
    place(s, **{**FUT, "price": price}, quantity=NIFTY_LOT)  # long one lot, filled
    before = blocked(s)
    sell = 28000.0  # above the market and under the upper circuit: rests
    place(s, **{**FUT, "price": sell}, transaction_type="SELL", quantity=lots * NIFTY_LOT)
    short = (lots - 1) * NIFTY_LOT
    assert blocked(s) - before == pytest.approx(short * sell * FUTURES_RATE)


@pytest.mark.parametrize(("lots", "refused"), [(19, False), (20, False), (21, True)])
def test_the_freeze_quantity_is_allowed_exactly_and_refused_one_lot_above(
    lots: int, refused: bool
) -> None:
    """BANKNIFTY's freeze quantity, 600, is 20 lots of 30 (NIFTY's 1,800 is no whole number of
    lots of 65, so its edge is one lot either side)."""
    s = sim()
    bank = {"exchange": "NFO", "tradingsymbol": "BANKNIFTY26DECFUT", "product": "NRML"}
    last = ltp(s, "NFO:BANKNIFTY26DECFUT")
    act = lambda: place(s, **bank, quantity=lots * 30, price=round(last, 1))  # noqa: E731
    if refused:
        assert refusal(act).startswith(f"The order quantity {lots * 30} ({lots} lots)")
    else:
        assert act()["order_id"]
