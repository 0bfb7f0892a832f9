"""Each calc mode at its edges (exactly at a limit, one step inside, one outside), every
field's problem reported, answers deterministic and shaped by the output schema, and the
stored tool schemas in step with the models."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import jsonschema
import pytest

from kite_skills.calc import OUTPUT_SCHEMA, CalcError, calculate, stored_tool_json, tool_json


def run(mode: str, **fields: Any) -> dict[str, Any]:
    return calculate({"mode": mode, **fields}).result


def problems(mode: str, **fields: Any) -> list[str]:
    with pytest.raises(CalcError) as caught:
        calculate({"mode": mode, **fields})
    return caught.value.problems


# -- the tool's schemas and answers ---------------------------------------------------------


def test_the_stored_tool_schemas_are_the_models_own() -> None:
    assert stored_tool_json() == tool_json(), (
        "kite_skills/calc/tool.json is stale — run: python -c 'from kite_skills import calc; "
        'open("kite_skills/calc/tool.json", "w").write(calc.tool_json())\''
    )
    schema = json.loads(stored_tool_json())["input"]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["required"] == ["mode"] and schema["additionalProperties"] is False
    assert "$ref" not in stored_tool_json()  # nested models written out: some clients read none


def test_the_flat_schema_accepts_each_modes_own_input() -> None:
    schema = json.loads(stored_tool_json())["input"]
    for mode, fields in EXAMPLES.items():
        jsonschema.validate({"mode": mode, **fields}, schema)


EXAMPLES: dict[str, dict[str, Any]] = {
    "tick": {"price": 1500.03, "tick_size": 0.05, "purpose": "sell_limit"},
    "lots": {"quantity": 4000, "lot_size": 65, "freeze_quantity": 1800},
    "sellable": {
        "holding": {"quantity": 18, "t1_quantity": 7, "realised_quantity": 11},
        "demat_consent": "consent",
    },
    "check_order": {
        "transaction_type": "BUY",
        "order_type": "LIMIT",
        "quantity": 10,
        "price": 1500,
        "last_price": 1501.2,
        "tick_size": 0.05,
        "net": 42310.55,
    },
    "size": {"entry": 100, "stop": 95, "risk_amount": 1000},
    "greeks": {
        "quote_time": "2026-12-02 11:30:00",
        "legs": [
            {
                "option_type": "CE",
                "strike": 26000,
                "underlying": 26030,
                "expiry_date": "2026-12-29",
                "option_price": 320,
            }
        ],
    },
    "payoff": {
        "legs": [
            {"instrument": "CE", "side": "SELL", "strike": 26000, "price": 150, "quantity": 65}
        ]
    },
    "charges": {
        "segment": "equity_delivery",
        "exchange": "BSE",
        "quantity": 10,
        "buy_price": 1500,
        "trade_date": "2026-12-01",
    },
    "exit_plan": {
        "positions": [
            {
                "tradingsymbol": "NIFTY26DEC26000CE",
                "exchange": "NFO",
                "product": "NRML",
                "quantity": -65,
            }
        ]
    },
}


@pytest.mark.parametrize("mode", sorted(EXAMPLES))
def test_every_answer_is_deterministic_and_follows_the_output_schema(mode: str) -> None:
    first = calculate({"mode": mode, **EXAMPLES[mode]})
    again = calculate({"mode": mode, **EXAMPLES[mode]})
    assert first.to_dict() == again.to_dict() and first.to_text() == again.to_text()
    structured = json.loads(json.dumps(first.to_dict()))  # plain JSON on the wire
    jsonschema.validate(structured, OUTPUT_SCHEMA)
    assert structured["inputs"].items() >= {
        k: v for k, v in EXAMPLES[mode].items()
    }.items() or mode in (
        "greeks",
        "payoff",
        "sellable",
        "exit_plan",
    )
    assert structured["result"] and first.to_text().startswith(f"calc {mode}")


def test_every_fields_problem_is_reported_with_what_to_send() -> None:
    found = problems("check_order", transaction_type="HOLD", quantity=0, price="1500", bogus=1)
    by_field = {p.split("`")[1]: p for p in found}
    assert set(by_field) == {
        "transaction_type",
        "quantity",
        "price",
        "bogus",
        "order_type",
        "last_price",
        "tick_size",
    }
    assert "— send BUY or SELL" in by_field["transaction_type"]
    assert "(got 'HOLD')" in by_field["transaction_type"]
    assert "greater than or equal to 1" in by_field["quantity"]
    assert "takes no such field" in by_field["bogus"]
    assert by_field["order_type"].startswith("`order_type`: missing — send LIMIT")


def test_a_nested_fields_problem_names_its_path_and_its_own_description() -> None:
    found = problems("payoff", legs=[{"instrument": "CE", "side": "BUY", "price": 1}])
    assert found == ["`legs.0.quantity`: missing — send units (lots × lot size)"]


def test_an_unknown_mode_lists_the_modes() -> None:
    with pytest.raises(CalcError) as caught:
        calculate({"mode": "margin"})
    assert caught.value.problems == [
        "`mode`: 'margin' is no mode — send one of tick, lots, sellable, check_order, size, "
        "greeks, payoff, charges, exit_plan"
    ]


def test_strict_types_refuse_a_number_written_as_text_and_a_boolean_as_a_number() -> None:
    found = problems("lots", quantity=True, lot_size="65")
    assert [p.split("`")[1] for p in found] == ["quantity", "lot_size"]


# -- tick -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("purpose", "price", "expected"),
    [
        ("buy_limit", 1500.00, "1500.00"),  # on the tick: unchanged
        ("buy_limit", 1500.04, "1500.00"),
        ("sell_limit", 1500.01, "1500.05"),
        ("sell_trigger", 1449.96, "1450.00"),
        ("buy_trigger", 1550.04, "1550.00"),
    ],
)
def test_a_price_rounds_for_its_purpose(purpose: str, price: float, expected: str) -> None:
    assert run("tick", price=price, tick_size=0.05, purpose=purpose)["price"] == Decimal(expected)


def test_a_stop_limit_at_its_trigger_is_kept_and_one_beyond_is_refused() -> None:
    at = run("tick", price=1450, tick_size=0.05, purpose="sell_stop_limit", trigger_price=1450)
    assert at["price"] == Decimal("1450.00")
    found = problems(
        "tick", price=1450.01, tick_size=0.05, purpose="sell_stop_limit", trigger_price=1450
    )
    assert found == [
        "`price`: a SELL stop's limit 1450.01 must be at or below its trigger 1450 — send a "
        "limit at or below the trigger"
    ]
    assert problems(
        "tick", price=1440, tick_size=0.05, purpose="sell_stop_limit", trigger_price=1450.02
    ) == [
        "`trigger_price`: 1450.02 is not on the 0.05 tick — round it first with purpose "
        "sell_trigger"
    ]
    assert problems("tick", price=1440, tick_size=0.05, purpose="buy_limit", trigger_price=1450)[
        0
    ].startswith("`trigger_price`: purpose buy_limit takes no trigger")


# -- lots -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quantity", "slices"), [(1755, [1755]), (1820, [1755, 65]), (1690, [1690]), (0, [])]
)
def test_orders_are_cut_at_the_freeze_quantity(quantity: int, slices: list[int]) -> None:
    # NIFTY: lots of 65, freeze 1,800, so an order holds at most 27 lots (1,755)
    assert run("lots", quantity=quantity, lot_size=65, freeze_quantity=1800)["slices"] == slices
    assert run("lots", quantity=1755, lot_size=65, freeze_quantity=1755)["slices"] == [1755]
    assert run("lots", quantity=1820, lot_size=65, freeze_quantity=1819)["slices"] == [1755, 65]


def test_an_iceberg_spreads_whole_lots_over_legs_within_the_freeze_and_its_limit() -> None:
    result = run("lots", quantity=3900, lot_size=65, freeze_quantity=1800, split="iceberg")
    assert result["iceberg_legs"] == 3 and result["slices"] == [1300, 1300, 1300]
    assert result["findings"] == []
    big = run("lots", quantity=65 * 27 * 51, lot_size=65, freeze_quantity=1755, split="iceberg")
    assert big["iceberg_legs"] == 51 and "above the iceberg limit of 50" in big["findings"][0]
    at_limit = run(
        "lots", quantity=65 * 27 * 50, lot_size=65, freeze_quantity=1755, split="iceberg"
    )
    assert at_limit["iceberg_legs"] == 50 and at_limit["findings"] == []


def test_a_freeze_quantity_below_one_lot_is_refused() -> None:
    assert problems("lots", quantity=130, lot_size=65, freeze_quantity=64)[0].startswith(
        "`freeze_quantity`: 64 is less than one lot of 65"
    )


# -- sellable -------------------------------------------------------------------------------


def test_both_readings_of_quantity_are_told_apart_per_row() -> None:
    includes = run(
        "sellable",
        holding={"quantity": 18, "t1_quantity": 7, "realised_quantity": 11},
        demat_consent="physical",
    )
    excludes = run(
        "sellable",
        holding={"quantity": 11, "t1_quantity": 7, "realised_quantity": 11},
        demat_consent="physical",
    )
    assert includes["reading"] == "includes_t1" and excludes["reading"] == "excludes_t1"
    for result in (includes, excludes):
        assert (result["demat_sellable"], result["btst"], result["sellable_now"]) == (11, 7, 18)
        assert result["tpin_needed"] is False
    assert problems(
        "sellable",
        holding={"quantity": 12, "t1_quantity": 7, "realised_quantity": 11},
        demat_consent="",
    )[0].startswith("`holding`: quantity 12 is neither realised 11 nor realised + t1 18")


def test_open_sells_and_gtts_reduce_what_can_be_sold_and_backed() -> None:
    result = run(
        "sellable",
        holding={
            "quantity": 100,
            "realised_quantity": 100,
            "used_quantity": 10,
            "authorised_quantity": 60,
        },
        open_sell_orders=20,
        active_sell_gtts=30,
        demat_consent="consent",
    )
    assert (result["demat_sellable"], result["gtt_backable"], result["btst"]) == (70, 40, 0)
    assert result["tpin_needed"] is True  # 70 to sell, 60 authorised
    covered = run(
        "sellable",
        holding={"quantity": 70, "realised_quantity": 70, "authorised_quantity": 70},
        demat_consent="consent",
    )
    assert covered["tpin_needed"] is False


# -- check_order ----------------------------------------------------------------------------


ORDER = {
    "transaction_type": "BUY",
    "order_type": "LIMIT",
    "quantity": 10,
    "price": 1000,
    "last_price": 1000,
    "tick_size": 0.05,
}


def codes(**fields: Any) -> list[str]:
    return [f["code"] for f in run("check_order", **{**ORDER, **fields})["findings"]]


def test_the_fat_finger_guards_fire_just_above_their_limits_only() -> None:
    assert codes(net=40000) == []  # 10,000 is exactly 25% of net
    assert codes(net=39999) == ["fat_finger_value"]
    assert codes(price=1050, quantity=1, net=10**7) == []  # exactly 5% away
    assert codes(price=1050.05, quantity=1, net=10**7) == ["fat_finger_price"]
    assert codes(usual_quantity=2) == []  # exactly 5 times the usual 2
    assert codes(quantity=11, usual_quantity=2) == ["fat_finger_size"]
    assert codes(net=9999.95) == ["above_net"]


def test_every_finding_comes_at_once() -> None:
    found = codes(
        quantity=1801,
        price=1200.03,
        lot_size=65,
        freeze_quantity=1800,
        upper_circuit_limit=1100,
        net=1000,
        usual_quantity=10,
    )
    assert found == [
        "off_tick",
        "fat_finger_price",
        "beyond_band",
        "not_lot_multiple",
        "above_freeze",
        "above_net",
        "fat_finger_size",
    ]


def test_a_stop_order_is_checked_against_its_trigger_side() -> None:
    found = codes(order_type="SL", price=990, trigger_price=995)
    assert found == ["trigger_side", "limit_inside_trigger"]
    assert codes(order_type="SL", price=1006, trigger_price=1005) == []


# -- size -----------------------------------------------------------------------------------


def test_size_rounds_down_to_whole_lots_within_the_budget() -> None:
    assert run("size", entry=100, stop=95, risk_amount=1000)["quantity"] == 200
    result = run(
        "size",
        entry=26000,
        stop=25900,
        risk_percent=2,
        capital=1000000,
        lot_size=65,
        margin_per_lot=150000,
    )
    assert (result["lots"], result["quantity"], result["risk"], result["margin"]) == (
        3,
        195,
        19500,
        450000,
    )
    assert run("size", entry=26000, stop=25900, risk_amount=6499, lot_size=65)["lots"] == 0
    assert run("size", entry=95, stop=100, risk_amount=1000)["side"] == "SELL"


def test_size_refuses_what_it_cannot_size() -> None:
    assert problems("size", entry=100, stop=100, risk_amount=10, risk_percent=1) == [
        "`risk_amount`: send exactly one of risk_amount or risk_percent",
        "`capital`: missing — risk_percent needs the capital it is a share of",
        "`stop`: equals the entry — send a stop away from the entry",
    ]


# -- greeks ---------------------------------------------------------------------------------


def test_greeks_refuse_a_price_no_volatility_fits_and_say_why() -> None:
    found = problems(
        "greeks",
        quote_time="2026-12-02 11:30:00",
        legs=[
            {
                "option_type": "CE",
                "strike": 25000,
                "underlying": 26000,
                "expiry_date": "2026-12-29",
                "option_price": 900,
            }
        ],
    )
    assert len(found) == 1 and found[0].startswith(
        "`legs.0`: price 900 is at or below the option's lower bound"
    )


def test_greeks_refuse_an_expired_leg_and_an_unstated_rate() -> None:
    found = problems(
        "greeks",
        model="black_scholes",
        quote_time="2026-12-29 15:31:00",
        legs=[
            {
                "option_type": "CE",
                "strike": 25000,
                "underlying": 26000,
                "expiry_date": "2026-12-29",
                "volatility": 12,
            }
        ],
    )
    assert found == [
        "`rate`: missing — black_scholes needs a stated rate in %",
        "`dividend_yield`: missing — black_scholes needs a stated dividend yield in % (0 for none)",
        "`legs.0.expiry_date`: the option expired before the quote time",
    ]


def test_time_runs_to_15_30_ist_on_the_expiry_date() -> None:
    leg = {
        "option_type": "CE",
        "strike": 100,
        "underlying": 100,
        "expiry_date": "2026-12-03",
        "volatility": 20,
    }
    result = run("greeks", quote_time="2026-12-02 15:30:00", legs=[leg])
    assert result["legs"][0]["years"] == round(1 / 365, 6)
    same = run("greeks", quote_time="2026-12-02T10:00:00+00:00", legs=[leg])  # 15:30 IST
    assert same["legs"][0]["years"] == round(1 / 365, 6)


def test_portfolio_greeks_sum_the_legs_times_their_quantities() -> None:
    legs = [
        {
            "option_type": "CE",
            "strike": 26000,
            "underlying": 26000,
            "expiry_date": "2026-12-29",
            "volatility": 12,
            "quantity": 65,
        },
        {
            "option_type": "CE",
            "strike": 26000,
            "underlying": 26000,
            "expiry_date": "2026-12-29",
            "volatility": 12,
            "quantity": -65,
        },
    ]
    result = run("greeks", quote_time="2026-12-02 11:30:00", legs=legs)
    assert result["portfolio"] == {"delta": 0, "gamma": 0, "theta": 0, "vega": 0, "rho": 0}


# -- payoff ---------------------------------------------------------------------------------


def test_an_uncovered_short_call_has_unlimited_loss() -> None:
    result = run("payoff", **EXAMPLES["payoff"])
    assert result["max_loss"] == "unlimited" and result["max_profit"] == Decimal("9750.00")
    assert result["breakevens"] == [Decimal("26150.00")] and result["net_premium"] == 9750


def test_a_long_straddle_has_two_breakevens_and_a_bounded_loss() -> None:
    legs = [
        {"instrument": "CE", "side": "BUY", "strike": 100, "price": 5, "quantity": 10},
        {"instrument": "PE", "side": "BUY", "strike": 100, "price": 4, "quantity": 10},
    ]
    result = run("payoff", legs=legs, grid_from=80, grid_to=120, grid_points=5)
    assert result["breakevens"] == [Decimal("91.00"), Decimal("109.00")]
    assert (result["max_loss"], result["max_loss_at"], result["max_profit"]) == (
        90,
        [100],
        "unlimited",
    )
    assert result["grid"] == {
        "underlying": [80, 90, 100, 110, 120],
        "pnl": [110, 10, -90, 10, 110],
    }


def test_a_value_before_expiry_lies_above_the_expiry_payoff_of_a_long_option() -> None:
    legs = [
        {
            "instrument": "CE",
            "side": "BUY",
            "strike": 100,
            "price": 5,
            "quantity": 1,
            "volatility": 30,
            "expiry_date": "2026-12-29",
        }
    ]
    result = run("payoff", legs=legs, value_time="2026-12-02 11:30:00", grid_points=11)
    grid = result["grid"]
    assert [len(c) for c in grid.values()] == [11, 11, 11]  # a value for every point
    expiry, before = grid["pnl"], grid["pnl_at_value_time"]
    # far from the strike the value nears the expiry payoff (deep in, less the discount)
    assert abs(before[0] - expiry[0]) < Decimal("0.05")
    assert abs(before[-1] - expiry[-1]) < Decimal("0.1")
    at_strike = grid["underlying"].index(100)
    assert before[at_strike] > expiry[at_strike] + 1  # about 27 days of time value
    assert problems(
        "payoff", legs=[{**legs[0], "volatility": None}], value_time="2026-12-02 11:30:00"
    ) == ["`legs.0.volatility`: missing — value_time needs each option's volatility in %"]


# -- charges --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("segment", "exchange"),
    [
        ("equity_delivery", "NSE"),
        ("equity_intraday", "BSE"),
        ("futures", "NSE"),
        ("options", "BSE"),
        ("currency_futures", "NSE"),
        ("currency_options", "BSE"),
        ("commodity_futures", "MCX"),
        ("commodity_options", "MCX"),
    ],
)
def test_every_segment_is_charged_with_dated_sourced_rates(segment: str, exchange: str) -> None:
    result = run(
        "charges",
        segment=segment,
        exchange=exchange,
        quantity=100,
        buy_price=100,
        sell_price=101,
        trade_date="2026-12-01",
    )
    parts = ("brokerage", "stt_ctt", "exchange_charges", "sebi_fee", "stamp_duty", "gst")
    assert result["total"] == sum(result[p] for p in parts) > 0
    assert [r["component"] for r in result["rates"]] == [
        "brokerage",
        "stt",
        "exchange",
        "sebi",
        "stamp",
        "gst",
    ]


def test_charges_refuse_a_date_before_the_table_and_a_wrong_exchange() -> None:
    found = problems(
        "charges", segment="commodity_futures", exchange="NSE", quantity=1, trade_date="2024-09-30"
    )
    assert found == [
        "`buy_price`: send buy_price, sell_price or both",
        "`exchange`: commodity_futures trades on MCX, not NSE",
        "`trade_date`: the rate table starts on 2024-10-01 — send a date from then on",
    ]
    assert (
        run(
            "charges",
            segment="futures",
            exchange="NSE",
            quantity=65,
            sell_price=26000,
            trade_date="2024-10-01",
        )["stt_ctt"]
        == 338
    )


def test_delivery_brokerage_is_nil_and_options_pay_flat_per_order() -> None:
    delivery = run(
        "charges",
        segment="equity_delivery",
        exchange="NSE",
        quantity=10,
        buy_price=1500,
        trade_date="2026-12-01",
    )
    assert (
        delivery["brokerage"] == 0
        and delivery["stt_ctt"] == 15
        and delivery["stamp_duty"] == Decimal("2.25")
    )
    options = run(
        "charges",
        segment="options",
        exchange="NSE",
        quantity=65,
        buy_price=1,
        sell_price=2,
        trade_date="2026-12-01",
    )
    assert options["brokerage"] == 40


# -- exit_plan ------------------------------------------------------------------------------


def test_exits_close_shorts_first_and_flag_an_mis_hedge_of_an_nrml_short() -> None:
    positions = [
        {
            "tradingsymbol": "NIFTY26DEC25000PE",
            "exchange": "NFO",
            "product": "MIS",
            "quantity": 130,
        },
        {
            "tradingsymbol": "NIFTY26DEC25500PE",
            "exchange": "NFO",
            "product": "NRML",
            "quantity": -3900,
            "lot_size": 65,
            "freeze_quantity": 1800,
        },
        {
            "tradingsymbol": "BANKNIFTY26DECFUT",
            "exchange": "NFO",
            "product": "NRML",
            "quantity": 30,
        },
        {"tradingsymbol": "INFY", "exchange": "NSE", "product": "CNC", "quantity": 0},
    ]
    result = run("exit_plan", positions=positions)
    steps = [
        (s["underlying"], s["transaction_type"], s["tradingsymbol"], s["orders"], s["after"])
        for s in result["steps"]
    ]
    assert steps == [
        ("BANKNIFTY", "SELL", "BANKNIFTY26DECFUT", [30], None),
        ("NIFTY", "BUY", "NIFTY26DEC25500PE", [1755, 1755, 390], 1),
        ("NIFTY", "SELL", "NIFTY26DEC25000PE", [130], 2),
    ]
    (flag,) = result["flags"]
    assert "MIS leg NIFTY26DEC25000PE hedges the NRML leg NIFTY26DEC25500PE" in flag


def test_a_long_future_closes_before_the_put_that_hedges_it() -> None:
    """hedged-book's NIFTY future with a protective put: selling the put first leaves the
    future uncovered (the sandbox watch's hedge-broken, found by the issue 43 rehearsal)."""
    positions = [
        {"tradingsymbol": "NIFTY26D1525500PE", "exchange": "NFO", "product": "NRML",
         "quantity": 65},
        {"tradingsymbol": "NIFTY26DECFUT", "exchange": "NFO", "product": "NRML", "quantity": 65},
        {"tradingsymbol": "NIFTY26D1526100CE", "exchange": "NFO", "product": "NRML",
         "quantity": -65},
    ]  # fmt: skip
    order = [s["tradingsymbol"] for s in run("exit_plan", positions=positions)["steps"]]
    assert order == ["NIFTY26D1526100CE", "NIFTY26DECFUT", "NIFTY26D1525500PE"]


# -- docs/calc.md ---------------------------------------------------------------------------


def test_the_page_shows_every_mode_and_every_rate_row() -> None:
    from pathlib import Path

    from kite_skills.calc import MODES
    from kite_skills.calc.charges import RATES

    page = (Path(__file__).parents[2] / "docs" / "calc.md").read_text(encoding="utf-8")
    missing_modes = [m for m in MODES if f"\n### {m}\n" not in page]
    assert missing_modes == [], f"docs/calc.md has no section for {missing_modes}"
    for mode in MODES:
        assert f"$ kite-skills calc {mode} " in page, f"docs/calc.md: no example of {mode}"
    for r in RATES:
        if r.component == "brokerage":
            if r.percent is None:
                rate = f"flat ₹{r.cap} an order"
            elif r.cap is None:
                rate = f"{r.percent}%"
            else:
                rate = f"{r.percent}% or ₹{r.cap} an order, the lower"
        else:
            rate = f"{r.percent}%"
        row = (
            f"| {r.component} | {r.segment} | {r.exchange} | {r.side} | {rate} | "
            f"{r.effective_from} | {r.source} |"
        )
        assert row in page, f"docs/calc.md's rate table lacks: {row}"
