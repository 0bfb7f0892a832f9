"""Rehearsals of the recipes issue 43 added, against the sandbox's built-in scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills.calc import calculate

from .agent import harm, in_process, recipe
from .review4 import (
    charges_of_todays_fills,
    expiring_today,
    exposure_audit,
    journal,
    payoff_of_the_book,
    position_size,
    pre_market,
    rebalance,
    square_off_all,
)


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_a_share_position_sized_within_the_budget(generation: str) -> None:
    agent = in_process("default", generation)
    sized = position_size(agent, recipe("orders/position-size.md"), "NSE:INFY", 5000.0, 30.0)
    assert sized.lots > 0 and sized.risk <= 5000.0
    assert sized.risk + 30.0 > 5000.0  # one more share would break the budget
    assert not agent.writes()


def test_one_nifty_lot_above_the_budget_is_refused() -> None:
    agent = in_process("default")
    sized = position_size(agent, recipe("orders/position-size.md"), "NFO:NIFTY26DECFUT", 5000.0,
                          100.0)  # fmt: skip
    # the truth: one lot of 65 risks 6,500 at a 100-point stop
    assert sized.lots == 0 and sized.line.startswith("one lot risks 6,500.00")
    assert not agent.writes() and not agent.approvals


def test_rebalance_stops_at_the_tpin_gate_without_physical_authorisation() -> None:
    """demat-consent's `demat_consent` is `consent`: a sell beyond today's 30 TPIN-authorised
    shares needs a same-day TPIN (issue 43 X5), so the plan is shown and nothing is placed."""
    agent = in_process("demat-consent")
    done = rebalance(agent, recipe("holdings/rebalance.md"), {"INFY": 0.0})
    assert done.plan[0].startswith("SELL 100 INFY") and done.gate
    assert "TPIN authorisation needed today (consent)" in done.gate[0]
    assert not agent.writes() and not agent.approvals
    truth = calculate(
        {"mode": "sellable", "holding": {"tradingsymbol": "INFY", "quantity": 100,
                                          "t1_quantity": 0, "realised_quantity": 100,
                                          "authorised_quantity": 30},
         "demat_consent": "consent"}
    ).result  # fmt: skip
    assert truth["tpin_needed"]


def test_rebalance_sells_first_with_the_watch_on(tmp_path: Path) -> None:
    """default (`physical`): TCS and ITC trimmed, HDFCBANK bought with the cash freed; each
    order approved on its own, the watch sees nothing begin."""
    book = tmp_path / "journal.jsonl"
    agent = in_process("default", journal_path=book)
    done = rebalance(
        agent, recipe("holdings/rebalance.md"), {"TCS": 0.05, "ITC": 0.10, "HDFCBANK": 0.25}
    )
    sides = [s["transaction_type"] for s in done.sent]
    assert sides == sorted(sides, reverse=True) and sides[0] == "SELL"  # sells first
    assert len(agent.approvals) == len(done.sent) == len(agent.writes())
    assert not [m for m in agent.writes() if m.is_error]
    # announced in the plan the person approved: ITC's two-leg SELL GTT covers more than the
    # shares left after the sell, so it would fail when it triggers (resized on its own)
    (resize,) = done.announced
    assert resize.startswith("GTT ") and " ITC covers " in resize
    assert harm(book) == ["stop-cannot-fire"]


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_the_journal_of_the_default_day(generation: str) -> None:
    agent = in_process("default", generation)
    lines = journal(agent, recipe("daily-review/journal.md"))
    # the truth: the morning RELIANCE buy filled at its limit; WIPRO was refused for funds
    assert "morningbuy: BUY 10 RELIANCE slippage 0.00 a unit, 0.00" in lines
    assert any(line.startswith("rejected WIPRO: Insufficient funds") for line in lines)
    assert not agent.writes()


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_the_exposure_audit_of_the_default_account(generation: str) -> None:
    agent = in_process("default", generation)
    findings = exposure_audit(agent, recipe("daily-review/exposure-audit.md"))
    kite = agent.simulation
    assert kite is not None
    # the truth: the NIFTY future has no stop; ITC alone has a GTT; TCS one too
    protected = {
        g["condition"]["tradingsymbol"] for g in kite.get_gtts() if g["status"] == "active"
    }
    assert "no stop or GTT: NIFTY26DECFUT 65" in findings
    assert not [f for f in findings if any(f"GTT: {s} " in f for s in protected)]
    assert findings[-1].startswith("margin use ")
    assert not agent.writes()


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_the_pre_market_checks_of_the_default_account(generation: str) -> None:
    agent = in_process("default", generation)
    lines = pre_market(agent, recipe("daily-review/pre-market.md"))
    kite = agent.simulation
    assert kite is not None
    assert lines[0] == "AMOs queued: none"
    active = [g for g in kite.get_gtts() if g["status"] == "active"]
    assert len([x for x in lines if x.startswith("GTT ")]) == len(active)
    assert lines[-1].endswith("cash shortfall 0.00")  # the truth: no F&O margin beyond cash
    assert not agent.writes()


def test_the_charges_of_the_morning_buy() -> None:
    agent = in_process("default")
    done = charges_of_todays_fills(agent, recipe("orders/charges.md"), "2026-12-02")
    (buy,) = [x for x in done if x["fill"]["tradingsymbol"] == "RELIANCE"]
    # the truth: 10 RELIANCE delivered at 1,535: STT 0.1% = 15.35, rounded to 15; stamp 0.015%
    assert buy["charges"]["stt_ctt"] == 15 and str(buy["charges"]["stamp_duty"]) == "2.30"
    assert buy["charges"]["brokerage"] == 0
    assert not agent.writes()


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_the_payoff_of_a_long_future_has_no_limit(generation: str) -> None:
    agent = in_process("default", generation)
    result = payoff_of_the_book(agent, recipe("derivatives/payoff.md"))
    # the truth: a long NIFTY future (65 from 25,890) loses everything down to 0, gains without
    # a limit
    assert result["max_profit"] == "unlimited"
    assert float(result["max_loss"]) == 65 * 25890
    assert not agent.writes()


def test_nothing_in_the_default_book_expires_today() -> None:
    agent = in_process("default")
    lines = expiring_today(agent, recipe("derivatives/expiry-day.md"))
    kite = agent.simulation
    assert kite is not None
    assert lines == ["NIFTY26DECFUT expires 2026-12-29"]  # the contract's last Tuesday
    assert not agent.writes()


@pytest.mark.parametrize("scenario", ["hedged-book", "mis-hedge"])
def test_square_off_everything_with_the_watch_on(tmp_path: Path, scenario: str) -> None:
    """Every structure closed short leg first, one approved order after the previous fills:
    the watch sees nothing begin (no hedge broken on the way)."""
    book = tmp_path / "journal.jsonl"
    agent = in_process(scenario, journal_path=book)
    sent = square_off_all(agent, recipe("orders/square-off-all.md"))
    assert sent and len(agent.approvals) == len(sent) == len(agent.writes())
    assert not [m for m in agent.writes() if m.is_error]
    kite = agent.simulation
    assert kite is not None
    assert not [p for p in kite.positions()["net"] if p["quantity"]]  # the truth: flat
    assert harm(book) == []


@pytest.mark.parametrize("consent", ["physical", "consent", "empty", "", "ddpi"])
def test_the_sandbox_and_the_calculator_read_demat_consent_alike(consent: str) -> None:
    """Issue 43 X5: the recipes (through `calc` mode `sellable`) and the sandbox's order path
    agree that only `physical` is a standing authorisation."""
    from kite_skills.sandbox.sim import engine

    holding = {"tradingsymbol": "INFY", "quantity": 10, "t1_quantity": 0, "realised_quantity": 10}
    answer = calculate({"mode": "sellable", "holding": holding, "demat_consent": consent}).result
    assert engine.standing_authorisation(consent) is (not answer["tpin_needed"])
    assert answer["tpin_needed"] is (consent != "physical")
