"""Issue 41 §1: the watch. Each rule of :data:`kite_skills.sandbox.sim.watch.RULES` names two
tests here: one where the bad sequence, made by hand, makes it fire, and one where the safe
sequence (or the state one step inside the rule) must not. Then the adapter: findings in the
journal, the timeline and the summary; ``--watch strict`` refuses; a tool's answer never
changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kite_skills.calc.orders import FAT_FINGER
from kite_skills.sandbox import handlers, journal
from kite_skills.sandbox.server import Sandbox
from kite_skills.sandbox.sim import Simulation, parse_scenario
from kite_skills.sandbox.sim.events import Finding
from kite_skills.sandbox.sim.watch import RULES

LONG_CE, SHORT_CE = "NIFTY26D1525900CE", "NIFTY26D1526100CE"
LONG_PE, SHORT_PE = "NIFTY26D1525500PE", "NIFTY26D1525700PE"
FUT = "NIFTY26DECFUT"
LOT = 65

SPREAD = f"""
clock: "2026-12-02 11:30:00"
profile: {{meta: {{demat_consent: physical}}}}
funds:
  equity: {{opening_balance: 5000000}}
positions:
  - {{exchange: NFO, tradingsymbol: {LONG_CE}, product: NRML, quantity: {{long}}}}
  - {{exchange: NFO, tradingsymbol: {SHORT_CE}, product: NRML, quantity: -65}}
"""
FLAT = """
clock: "2026-12-02 11:30:00"
profile: {meta: {demat_consent: physical}}
funds:
  equity: {opening_balance: 5000000}
holdings:
  - {exchange: NSE, tradingsymbol: INFY, quantity: 120, t1_quantity: 20, average_price: 1480}
"""
NAKED_SHORT = f"""positions:
  - {{exchange: NFO, tradingsymbol: {SHORT_CE}, product: NRML, quantity: -65}}
"""
LONG_FUTURE = f"""
clock: "2026-12-02 11:30:00"
funds:
  equity: {{opening_balance: 5000000}}
positions:
  - {{exchange: NFO, tradingsymbol: {FUT}, product: NRML, quantity: 65}}
"""


def sim(text: str) -> Simulation:
    return Simulation(parse_scenario(text, "watch.yaml"))


def spread(long: int = LOT) -> Simulation:
    return sim(SPREAD.replace("{long}", str(long)))


def began(s: Simulation) -> list[str]:
    """The rules whose state began since the last look (the watch looks after each call)."""
    return [n.rule for n in s.after_call() if isinstance(n, Finding) and n.phase == "began"]


def ltp(s: Simulation, symbol: str, exchange: str = "NFO") -> float:
    key = f"{exchange}:{symbol}"
    return float(s.ltp(key)[key]["last_price"])


def order(s: Simulation, symbol: str, side: str, qty: int = LOT, **kw: Any) -> str:
    args: dict[str, Any] = {
        "variety": "regular",
        "exchange": "NFO",
        "tradingsymbol": symbol,
        "transaction_type": side,
        "quantity": qty,
        "product": "NRML",
        "order_type": "MARKET",
        "market_protection": -1,
    }
    args.update(kw)
    if args["order_type"] in ("LIMIT", "SL"):
        args.pop("market_protection")
    return str(s.place_order(**args)["order_id"])


def tick_below(s: Simulation, symbol: str, share: float, exchange: str = "NFO") -> float:
    return round(ltp(s, symbol, exchange) * share, 1)


def test_every_rule_is_one_row_with_its_two_tests() -> None:
    names = {n for n in globals() if n.startswith("test_")}
    assert len({r.name for r in RULES}) == len(RULES) >= 8
    for rule in RULES:
        for test in (rule.fires, rule.quiet):
            path, _, name = test.partition("::")
            assert path == "tests/sandbox/test_watch.py" and name in names, test
        assert rule.detects and rule.message and rule.source


# ----- hedge broken -----------------------------------------------------------------------


def test_hedge_broken_fires() -> None:
    s = spread()
    began(s)
    order(s, LONG_CE, "SELL")  # the long leg first: the short is naked
    assert began(s) == ["hedge-broken"]
    order(s, SHORT_CE, "BUY")
    ended = [n for n in s.after_call() if isinstance(n, Finding)]
    assert [(n.rule, n.phase) for n in ended] == [("hedge-broken", "ended")]


def test_hedge_broken_quiet() -> None:
    s = spread()
    order(s, SHORT_CE, "BUY")  # the short leg first, then the long
    order(s, LONG_CE, "SELL")
    assert began(s) == []


def test_hedge_broken_at_the_edge_of_its_cover() -> None:
    s = spread(long=2 * LOT)  # covered twice over: one lot of the long can go
    order(s, LONG_CE, "SELL")
    assert began(s) == []
    order(s, LONG_CE, "SELL")  # cover one unit short of the short: exposed
    assert began(s) == ["hedge-broken"]


def test_hedge_broken_by_selling_the_future_under_a_covered_call() -> None:
    s = sim(
        LONG_FUTURE
        + f"  - {{exchange: NFO, tradingsymbol: {SHORT_CE}, product: NRML, quantity: -65}}\n"
    )
    order(s, FUT, "SELL")
    assert began(s) == ["hedge-broken"]


# ----- short before its hedge -------------------------------------------------------------


def test_short_before_hedge_fires() -> None:
    s = sim(FLAT)
    resting = tick_below(s, LONG_CE, 0.97)  # within the fat-finger band
    order(s, LONG_CE, "BUY", order_type="LIMIT", price=resting)  # the hedge rests, unfilled
    assert began(s) == []
    order(s, SHORT_CE, "SELL")
    assert began(s) == ["short-before-hedge"]


def test_short_before_hedge_fires_when_the_short_goes_first() -> None:
    s = sim(FLAT)
    order(s, SHORT_PE, "SELL")
    assert began(s) == []  # a naked short alone is not this rule
    order(s, LONG_PE, "BUY", order_type="LIMIT", price=tick_below(s, LONG_PE, 0.97))
    assert began(s) == ["short-before-hedge"]


def test_short_before_hedge_quiet() -> None:
    s = sim(FLAT)
    order(s, LONG_CE, "BUY")  # the hedge fills first
    order(s, SHORT_CE, "SELL")
    assert began(s) == []


# ----- over-exit --------------------------------------------------------------------------


def test_over_exit_fires() -> None:
    s = sim(LONG_FUTURE)
    price = ltp(s, FUT)
    stop = round(price * 0.98, 1)
    order(s, FUT, "SELL", order_type="SL", price=stop - 5, trigger_price=stop)
    assert began(s) == []  # exits for exactly the open quantity
    order(s, FUT, "SELL", order_type="LIMIT", price=round(price * 1.02, 1))
    assert began(s) == ["over-exit"]


def test_over_exit_fires_for_a_stop_left_on_a_closed_position() -> None:
    s = sim(LONG_FUTURE)
    stop = round(ltp(s, FUT) * 0.98, 1)
    order(s, FUT, "SELL", order_type="SL", price=stop - 5, trigger_price=stop)
    assert began(s) == []
    order(s, FUT, "SELL")  # the exit fills; the stop would now open a short
    assert began(s) == ["over-exit"]


def test_over_exit_quiet() -> None:
    s = sim(LONG_FUTURE)
    price = ltp(s, FUT)
    s.place_gtt(
        "two-leg",
        FUT,
        "NFO",
        [round(price * 0.98, 1), round(price * 1.02, 1)],
        price,
        [
            {
                "transaction_type": "SELL",
                "quantity": LOT,
                "price": round(price * 0.97, 1),
                "product": "NRML",
            },
            {
                "transaction_type": "SELL",
                "quantity": LOT,
                "price": round(price * 1.02, 1),
                "product": "NRML",
            },
        ],
    )
    assert began(s) == []  # one-cancels-other: it sells once


# ----- protection removed -----------------------------------------------------------------


def _stopped_future() -> tuple[Simulation, str]:
    s = sim(LONG_FUTURE)
    stop = round(ltp(s, FUT) * 0.98, 1)
    sl = order(s, FUT, "SELL", order_type="SL", price=stop - 5, trigger_price=stop)
    began(s)
    return s, sl


def test_protection_removed_fires() -> None:
    s, sl = _stopped_future()
    s.cancel_order("regular", sl)
    assert began(s) == ["protection-removed"]


def test_protection_removed_quiet() -> None:
    s, sl = _stopped_future()
    stop = round(ltp(s, FUT) * 0.97, 1)
    order(s, FUT, "SELL", order_type="SL", price=stop - 5, trigger_price=stop)
    began(s)  # (two stops for one position: over-exit, which the replacement ends)
    s.cancel_order("regular", sl)  # the replacement went in first
    assert began(s) == []
    s2, sl2 = _stopped_future()
    lower = round(ltp(s2, FUT) * 0.97, 1)
    s2.modify_order("regular", sl2, quantity=LOT, price=lower - 5, trigger_price=lower)
    assert began(s2) == []


# ----- product mismatch -------------------------------------------------------------------


def test_product_mismatch_fires() -> None:
    s = sim(FLAT + NAKED_SHORT)
    order(s, LONG_CE, "BUY", product="MIS")
    assert began(s) == ["product-mismatch"]


def test_product_mismatch_quiet() -> None:
    s = sim(FLAT + NAKED_SHORT)
    order(s, LONG_CE, "BUY", product="NRML")
    assert began(s) == []


# ----- duplicate intent -------------------------------------------------------------------


def _infy_buy(s: Simulation) -> str:
    price = tick_below(s, "INFY", 0.97, "NSE")
    return order(
        s, "INFY", "BUY", 1, exchange="NSE", product="CNC", order_type="LIMIT", price=price
    )


def test_duplicate_intent_fires() -> None:
    s = sim(FLAT)
    _infy_buy(s)
    _infy_buy(s)
    assert began(s) == ["duplicate-intent"]


def test_duplicate_intent_fires_after_a_read_made_before_both() -> None:
    s = sim(FLAT)
    s.orders()  # a read before the first order reconciles nothing
    _infy_buy(s)
    _infy_buy(s)
    assert began(s) == ["duplicate-intent"]


def test_duplicate_intent_quiet() -> None:
    s = sim(FLAT)
    _infy_buy(s)
    s.orders()  # reconciled: the second is a deliberate order
    _infy_buy(s)
    assert began(s) == []


# ----- fat finger -------------------------------------------------------------------------


def test_fat_finger_fires() -> None:
    s = sim(FLAT)
    last = ltp(s, "INFY", "NSE")
    far = round(last * (1 - FAT_FINGER.price_distance_pct / 100) - 0.1, 1)
    order(s, "INFY", "BUY", 1, exchange="NSE", product="CNC", order_type="LIMIT", price=far)
    notes = [(n.rule, n.phase) for n in s.after_call() if isinstance(n, Finding)]
    assert notes == [("fat-finger", "began"), ("fat-finger", "ended")]  # judged at placement


def test_fat_finger_fires_on_value() -> None:
    s = sim(FLAT)
    net = s.engine.net("equity")
    last = ltp(s, "INFY", "NSE")
    qty = int(net * FAT_FINGER.net_share_pct / 100 / last) + 1
    order(s, "INFY", "BUY", qty, exchange="NSE", product="CNC", order_type="LIMIT", price=last)
    assert began(s) == ["fat-finger"]


def test_fat_finger_quiet() -> None:
    s = sim(FLAT)
    last = ltp(s, "INFY", "NSE")
    near = round(last * (1 - FAT_FINGER.price_distance_pct / 100) + 0.1, 1)
    order(s, "INFY", "BUY", 1, exchange="NSE", product="CNC", order_type="LIMIT", price=near)
    net = s.engine.net("equity")
    qty = int(net * FAT_FINGER.net_share_pct / 100 / last) - 1
    order(s, "INFY", "BUY", qty, exchange="NSE", product="CNC", order_type="LIMIT", price=last)
    assert began(s) == []


# ----- a stop that cannot fire ------------------------------------------------------------


def _sell_gtt(s: Simulation, qty: int) -> None:
    last = ltp(s, "INFY", "NSE")
    trigger = round(last * 0.9, 1)
    s.place_gtt(
        "single",
        "INFY",
        "NSE",
        [trigger],
        last,
        [{"transaction_type": "SELL", "quantity": qty, "price": trigger - 1, "product": "CNC"}],
    )


def test_stop_cannot_fire_fires() -> None:
    s = sim(FLAT)
    _sell_gtt(s, 101)  # 100 in demat, 20 of the 120 are T+1
    assert began(s) == ["stop-cannot-fire"]
    for consent in ("consent", "empty", "ddpi"):  # ddpi: a value Kite may add, unknown here
        s = sim(FLAT)
        s.engine.demat_consent = consent
        _sell_gtt(s, 100)  # no TPIN authorisation today, and none standing
        assert began(s) == ["stop-cannot-fire"], consent


def test_stop_cannot_fire_quiet() -> None:
    s = sim(FLAT)
    _sell_gtt(s, 100)  # POA on file (physical): a standing authorisation
    assert began(s) == []
    authorised = FLAT.replace("physical", "consent").replace(
        "average_price: 1480}", "average_price: 1480, authorised_quantity: 100}"
    )
    s = sim(authorised)
    _sell_gtt(s, 100)  # today's TPIN covers it
    assert began(s) == []


# ----- the adapter: journal, timeline, summary, strict ---------------------------------------


def _sandbox(path: Path, strict: bool = False) -> tuple[Sandbox, Simulation]:
    s = spread()
    clock = [s.now]
    tools = handlers.generation("grouped", lambda: clock[0])
    return Sandbox(s, lambda: clock[0], tools, journal.Journal(path), strict=strict), s


SELL_LONG = {
    "mode": "place",
    "variety": "regular",
    "exchange": "NFO",
    "tradingsymbol": LONG_CE,
    "transaction_type": "SELL",
    "quantity": LOT,
    "product": "NRML",
    "order_type": "MARKET",
    "market_protection": -1,
}


def test_the_journal_the_timeline_and_the_summary_show_the_watch(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    box, _s = _sandbox(path)
    result = box.call("orders", SELL_LONG)
    assert result is not None and not result.is_error  # the answer is the real server's
    assert json.loads(result.text)["order_id"]
    box.call("orders", {**SELL_LONG, "tradingsymbol": SHORT_CE, "transaction_type": "BUY"})
    kinds = [json.loads(line)["kind"] for line in path.read_text().splitlines()]
    assert kinds[:4] == ["call", "event", "event", "watch"]  # placed, filled, then the finding
    lines = list(journal.timeline(path))
    assert any("WRITE orders mode=place" in line for line in lines)
    assert any("!! WATCH hedge-broken began" in line for line in lines)
    assert any("!! WATCH hedge-broken ended after 0m00s" in line for line in lines)
    assert any("~ fill:" in line for line in lines)
    summary = journal.summary(path)
    assert summary["watch"] == {"hedge-broken": 1}
    assert summary["writes"] == 2 and summary["calls"] == 2
    assert summary["findings"][0]["lasted_seconds"] == 0
    assert summary["findings"][0]["instruments"] == [f"NFO:{SHORT_CE}"]


def test_strict_refuses_the_call_and_leaves_the_account(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    box, s = _sandbox(path, strict=True)
    result = box.call("orders", SELL_LONG)
    assert result is not None and result.is_error
    assert "refused this call: a hedged leg is now naked" in result.text
    net = {p["tradingsymbol"]: p["quantity"] for p in s.positions()["net"]}
    assert net[LONG_CE] == LOT  # nothing was sold
    assert journal.summary(path)["watch"] == {"hedge-broken": 1}
    safe = box.call("orders", {**SELL_LONG, "tradingsymbol": SHORT_CE, "transaction_type": "BUY"})
    assert safe is not None and not safe.is_error


@pytest.mark.parametrize("strict", [False, True])
def test_a_safe_call_answers_the_same_with_the_watch_strict_or_not(
    tmp_path: Path, strict: bool
) -> None:
    box, _s = _sandbox(tmp_path / "j.jsonl", strict)
    result = box.call("orders", {**SELL_LONG, "tradingsymbol": SHORT_CE, "transaction_type": "BUY"})
    assert result is not None and json.loads(result.text) == {"order_id": "261202200000001"}


def test_docs_sandbox_md_shows_every_rule_as_its_row() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "sandbox.md").read_text("utf-8")
    for rule in RULES:
        assert f"| `{rule.name}` | {rule.detects} | {rule.message} | {rule.source} |" in text


def test_new_exposure_beside_a_hedge_is_not_a_broken_hedge() -> None:
    s = sim(
        LONG_FUTURE
        + f"  - {{exchange: NFO, tradingsymbol: {LONG_PE}, product: NRML, quantity: 65}}\n"
    )
    order(s, FUT, "BUY")  # a second future beside the one the put hedges: nothing was lost
    assert began(s) == []
    order(s, LONG_PE, "SELL")  # now the put goes: cover lost under an open future
    assert began(s) == ["hedge-broken"]


def test_the_bench_account_of_200_positions_loads_and_starts_unexposed() -> None:
    """bench/run.py's account for the watch's row (the bench itself needs a build)."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[2] / "bench" / "run.py"
    spec = importlib.util.spec_from_file_location("bench_run", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    s = sim(bench.hedged_account(200))
    assert len(s.positions()["net"]) == 200
    assert [n for n in s.take_notes() if isinstance(n, Finding)] == []


def test_sandbox_journal_json_prints_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kite_skills.cli import main

    path = tmp_path / "j.jsonl"
    box, _s = _sandbox(path)
    box.call("orders", SELL_LONG)
    assert main(["sandbox", "journal", "--json", str(path)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["watch"] == {"hedge-broken": 1} and summary["writes"] == 1
    assert summary["findings"][0]["lasted_seconds"] is None  # still open
    assert summary["events"] == {"fill": 1, "placed": 1}
