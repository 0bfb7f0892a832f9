"""Properties every calculator keeps, over generated inputs (hypothesis; derandomised in CI,
see tests/conftest.py): put-call parity, IV round trips, delta monotone in the underlying, a
payoff zero at its breakevens, tick rounding never crossing the trigger it protects, lots
never rounded up unless asked, slices summing to the quantity."""

from __future__ import annotations

import math
from decimal import Decimal

from hypothesis import assume, given
from hypothesis import strategies as st

from kite_skills.calc import calculate
from kite_skills.calc.greeks import Market, bounds, greeks, implied_vol, price
from kite_skills.calc.payoff import PayoffLeg, breakevens, pnl_at, profile

underlyings = st.floats(min_value=50, max_value=60000)
moneyness = st.floats(min_value=0.7, max_value=1.3)
years = st.floats(min_value=2 / 365, max_value=2.0)
rates = st.floats(min_value=0.0, max_value=0.12)
yields = st.floats(min_value=0.0, max_value=0.05)
vols = st.floats(min_value=0.05, max_value=1.5)
ticks = st.sampled_from(["0.05", "0.01", "0.10", "0.25", "1", "0.0025"])


@given(underlyings, moneyness, years, rates, yields, vols, st.booleans())
def test_put_call_parity(
    s: float, m: float, t: float, r: float, q: float, v: float, b76: bool
) -> None:
    k = s * m
    carry = r if b76 else q
    call = price(Market(s, k, t, r, carry, True, b76), v)
    put = price(Market(s, k, t, r, carry, False, b76), v)
    forward_value = s * math.exp(-carry * t) - k * math.exp(-r * t)
    assert math.isclose(call - put, forward_value, rel_tol=1e-9, abs_tol=1e-7 * s)


@given(underlyings, moneyness, years, rates, vols, st.booleans())
def test_an_iv_solved_from_a_price_gives_that_price_back(
    s: float, m: float, t: float, r: float, v: float, call: bool
) -> None:
    market = Market(s, s * m, t, r, r, call, True)
    target = price(market, v)
    # with no time value left in a float (deep in the money, low vol) no IV can be recovered
    assume(target - bounds(market)[0] > 1e-6 * s)
    iv = implied_vol(market, target)
    assert isinstance(iv, float), iv
    assert math.isclose(price(market, iv), target, rel_tol=1e-7, abs_tol=1e-8 * s)


def test_a_price_below_the_lower_bound_is_refused_with_the_reason() -> None:
    market = Market(25000.0, 24000.0, 0.05, 0.06, 0.06, True, True)
    refusal = implied_vol(market, bounds(market)[0] - 1)
    assert isinstance(refusal, str) and "lower bound" in refusal
    refusal = implied_vol(market, bounds(market)[1] + 1)
    assert isinstance(refusal, str) and "upper bound" in refusal


@given(underlyings, moneyness, years, rates, yields, vols, st.booleans(), st.floats(0.001, 0.2))
def test_delta_is_monotone_in_the_underlying(
    s: float, m: float, t: float, r: float, q: float, v: float, call: bool, step: float
) -> None:
    k = s * m
    lower = greeks(Market(s, k, t, r, q, call, False), v).delta
    higher = greeks(Market(s * (1 + step), k, t, r, q, call, False), v).delta
    assert higher >= lower - 1e-12
    assert (0 <= lower <= 1) if call else (-1 <= lower <= 0)


legs = st.lists(
    st.builds(
        PayoffLeg,
        instrument=st.sampled_from(["CE", "PE", "FUT"]),
        side=st.sampled_from(["BUY", "SELL"]),
        price=st.integers(0, 50000).map(lambda p: p / 20),
        quantity=st.integers(1, 5).map(lambda n: n * 25),
        strike=st.integers(400, 600).map(lambda k: k * 50.0),
    ).map(
        lambda g: (
            g.model_copy(update={"strike": None, "price": g.price + 1})
            if g.instrument == "FUT"
            else g
        )
    ),
    min_size=1,
    max_size=4,
)


@given(legs)
def test_a_payoff_is_zero_at_its_breakevens(position: list[PayoffLeg]) -> None:
    for x in breakevens(position):
        assert abs(pnl_at(position, x)) < Decimal("1e-15"), x


@given(legs, st.lists(st.integers(0, 10**8).map(lambda p: Decimal(p) / 1000), max_size=20))
def test_the_straight_pieces_are_the_payoff(position: list[PayoffLeg], xs: list[Decimal]) -> None:
    shape = profile(position)
    for x in [*xs, *shape.kinks]:
        assert shape.at(x) == pnl_at(position, x), x


@given(legs)
def test_the_payoff_tool_agrees_with_its_grid(position: list[PayoffLeg]) -> None:
    arguments = {"mode": "payoff", "legs": [g.model_dump(exclude_none=True) for g in position]}
    result = calculate(arguments).result
    grid = result["grid"]
    assert len(grid["underlying"]) == len(grid["pnl"]) == 41
    for x, pnl in zip(grid["underlying"], grid["pnl"], strict=True):
        assert pnl == pnl_at(position, x).quantize(Decimal("0.01"))
    if result["max_loss"] != "unlimited":
        assert all(pnl >= -result["max_loss"] for pnl in grid["pnl"])
    if result["max_profit"] != "unlimited":
        assert all(pnl <= result["max_profit"] for pnl in grid["pnl"])


@given(st.integers(1, 10**7), ticks, st.sampled_from(["buy", "sell"]), st.integers(1, 40))
def test_a_stop_limit_never_crosses_its_trigger(
    trigger_ticks: int, tick: str, side: str, buffer: int
) -> None:
    size = Decimal(tick)
    trigger = trigger_ticks * size
    # a limit some way beyond the trigger, off the tick
    offset = size * buffer / 7
    limit = trigger - offset if side == "sell" else trigger + offset
    assume(limit > 0)
    answer = calculate(
        {
            "mode": "tick",
            "price": float(limit),
            "tick_size": float(size),
            "purpose": f"{side}_stop_limit",
            "trigger_price": float(trigger),
        }
    )
    rounded = answer.result["price"]
    assert rounded % size == 0
    assert rounded <= trigger if side == "sell" else rounded >= trigger
    # away from the trigger, never towards it: a SELL stop's limit down, a BUY stop's up
    assert rounded <= limit if side == "sell" else rounded >= limit


@given(
    st.floats(0.01, 100000),
    ticks,
    st.sampled_from(["buy_limit", "sell_limit", "buy_trigger", "sell_trigger"]),
)
def test_a_price_rounds_the_way_its_purpose_needs(value: float, tick: str, purpose: str) -> None:
    answer = calculate(
        {"mode": "tick", "price": value, "tick_size": float(tick), "purpose": purpose}
    )
    rounded, given_price = answer.result["price"], Decimal(repr(value))
    assert rounded % Decimal(tick) == 0
    assert abs(rounded - given_price) < Decimal(tick)
    if purpose in ("buy_limit", "buy_trigger"):
        assert rounded <= given_price
    else:
        assert rounded >= given_price


@given(st.integers(0, 10**6), st.integers(1, 5000), st.booleans())
def test_lots_never_round_up_unless_asked(quantity: int, lot: int, up: bool) -> None:
    result = calculate(
        {"mode": "lots", "quantity": quantity, "lot_size": lot, "round_up": up}
    ).result
    assert result["quantity"] % lot == 0
    if up:
        assert quantity <= result["quantity"] < quantity + lot
    else:
        assert quantity - lot < result["quantity"] <= quantity


@given(
    st.integers(0, 10**6),
    st.integers(1, 2000),
    st.integers(1, 20000),
    st.sampled_from(["orders", "iceberg"]),
)
def test_the_slices_sum_to_the_quantity(quantity: int, lot: int, freeze: int, split: str) -> None:
    assume(freeze >= lot)
    result = calculate(
        {
            "mode": "lots",
            "quantity": quantity,
            "lot_size": lot,
            "freeze_quantity": freeze,
            "split": split,
        }
    ).result
    slices = result["slices"]
    assert sum(slices) == result["quantity"]
    assert all(0 < s <= freeze and s % lot == 0 for s in slices)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(
    st.sampled_from(
        [
            "tick",
            "lots",
            "sellable",
            "check_order",
            "size",
            "greeks",
            "payoff",
            "charges",
            "exit_plan",
            "nope",
        ]
    ),
    st.dictionaries(st.text(max_size=16), json_values, max_size=5),
)
def test_any_arguments_get_an_answer_or_a_calc_error(mode: str, fields: dict[str, object]) -> None:
    from kite_skills.calc import CalcError

    try:
        calculate({**fields, "mode": mode})
    except CalcError as exc:
        assert exc.problems and all("`" in p for p in exc.problems)
