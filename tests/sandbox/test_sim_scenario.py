"""Scenarios, the clock and the market data of the simulation."""

from __future__ import annotations

from datetime import datetime, timedelta
from itertools import pairwise

import pytest

from kite_skills.sandbox.sim import (
    IST,
    ScenarioError,
    SimClock,
    Simulation,
    load_scenario,
    parse_scenario,
    scenario_names,
)

BAD = """clock: "2026-12-02 11:30:00"
holdings:
  - {exchange: NSE, tradingsymbol: NOPE, quantity: 10}
  - {exchange: NSE, tradingsymbol: INFY, quantity: 10, t1_quantity: 4, realised_quantity: 5}
positions:
  - {exchange: NFO, tradingsymbol: NIFTY26DECFUT, product: NRML, quantity: 10}
colour: blue
market:
  NSE:INFY:
    path:
      - ["11:31", 1600.03]
      - ["11:29", 1600.0]
"""


def test_every_problem_with_its_line() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(BAD, "bad.yaml")
    lines = str(info.value).splitlines()
    assert [p.line for p in info.value.problems] == [3, 4, 6, 7, 11]
    assert all(line.startswith("bad.yaml:") and " — " in line for line in lines)
    assert "no instrument NSE:NOPE" in lines[0]
    assert "not a multiple of the lot size 65" in lines[2]
    assert "unknown key 'colour'" in lines[3]
    assert "not a multiple of the tick size" in lines[4]


def test_yaml_syntax_and_missing_clock() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario("clock: [\n", "x.yaml")
    assert str(info.value).startswith("x.yaml:")
    with pytest.raises(ScenarioError) as info:
        parse_scenario("funds: {}\n", "y.yaml")
    assert "clock" in str(info.value)


def test_built_in_scenarios_load() -> None:
    names = scenario_names()
    assert names[0] == "default"
    assert {"expiry-day", "t1-holdings", "after-square-off", "pre-open", "gap-down"} <= set(names)
    for name in names:
        s = Simulation(load_scenario(name))
        assert s.profile()["meta"]["demat_consent"] in ("consent", "physical", "empty")


def test_sim_clock_runs_at_speed() -> None:
    wall = [100.0]
    clock = SimClock(datetime(2026, 12, 2, 11, 30, tzinfo=IST), speed=60, wall=lambda: wall[0])
    wall[0] += 2
    assert clock.now() == datetime(2026, 12, 2, 11, 32, tzinfo=IST)


def test_quote_shapes_and_option_chain() -> None:
    s = Simulation(load_scenario("default"))
    chain = [
        r
        for r in s.instruments("NFO")
        if r["name"] == "NIFTY" and r["instrument_type"] in ("CE", "PE")
    ]
    assert len({r["expiry"] for r in chain}) == 2 and len(chain) == 2 * 21 * 2
    q = s.quote("NFO:NIFTY26DECFUT", "NSE:INFY", "NSE:NOPE")
    assert set(q) == {"NFO:NIFTY26DECFUT", "NSE:INFY"}
    fut = q["NFO:NIFTY26DECFUT"]
    assert fut["oi"] > 0 and len(fut["depth"]["buy"]) == 5 and "net_change" in fut
    assert fut["ohlc"]["close"] == s.ohlc("NFO:NIFTY26DECFUT")["NFO:NIFTY26DECFUT"]["ohlc"]["close"]


def test_historical_has_200_days_and_is_deterministic() -> None:
    def candles() -> list:
        s = Simulation(load_scenario("default"))
        token = s.quote("NSE:INFY")["NSE:INFY"]["instrument_token"]
        return s.historical_data(token, datetime(2025, 12, 1, tzinfo=IST), s.now, "day")

    first = candles()
    assert len(first) >= 200 and first == candles()
    assert first[-1]["date"] == "2026-12-02T00:00:00+0530"
    s = Simulation(load_scenario("default"))
    token = s.quote("NSE:INFY")["NSE:INFY"]["instrument_token"]
    bars = s.historical_data(token, s.now - timedelta(hours=3), s.now, "15minute")
    assert bars[-1]["date"] <= s.now.strftime("%Y-%m-%dT%H:%M:%S+0530")
    assert all(b["low"] <= min(b["open"], b["close"]) for b in bars)


SPREAD = """clock: "2026-12-02 11:30:00"
market:
  NFO:NIFTY26D0826050CE: {spread: 6.0}
  NFO:NIFTY26D0825950CE: {spread: 0.03}
  NFO:NIFTY26D0825900CE: {spread: 0}
"""


def test_a_scenario_sets_how_wide_a_book_is() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(SPREAD, "spread.yaml")
    assert [p.line for p in info.value.problems] == [4, 5]
    assert "'spread' must be a positive multiple of the tick size 0.05 (got 0.03)" in str(
        info.value
    )
    wide = Simulation(parse_scenario(SPREAD.rsplit("\n  NFO:NIFTY26D0825950CE", 1)[0], "s.yaml"))
    plain = Simulation(load_scenario("default"))  # same date and clock, no spreads
    for s, width in ((wide, 6.0), (plain, 0.1)):
        q = s.quote("NFO:NIFTY26D0826050CE")["NFO:NIFTY26D0826050CE"]
        bids = [level["price"] for level in q["depth"]["buy"]]
        asks = [level["price"] for level in q["depth"]["sell"]]
        assert round(asks[0] - bids[0], 2) == width
        assert bids[0] <= q["last_price"] <= asks[0]
        # deeper levels one tick further out each, and the same book every time
        assert [round(a - b, 2) for a, b in pairwise(bids)] == [0.05] * 4
        assert [round(b - a, 2) for a, b in pairwise(asks)] == [0.05] * 4
        assert s.quote("NFO:NIFTY26D0826050CE")["NFO:NIFTY26D0826050CE"]["depth"] == q["depth"]
    # the option-books scenario: around the money under 1 % of the mid, one far call wide
    books = Simulation(load_scenario("option-books"))
    keys = [f"NFO:NIFTY26D08{k}{t}" for k in range(25850, 26051, 50) for t in ("CE", "PE")]
    widths = {}
    for key, q in books.quote(*keys).items():
        bid, ask = q["depth"]["buy"][0]["price"], q["depth"]["sell"][0]["price"]
        widths[key] = (ask - bid) / ((ask + bid) / 2) * 100
    assert [k for k, pct in widths.items() if pct > 1] == ["NFO:NIFTY26D0826050CE"]


CLOCK = 'clock: "2026-12-02 11:30:00"\n'


def _only_problem(text: str) -> tuple[int, str]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "s.yaml")
    assert len(info.value.problems) == 1, str(info.value)
    problem = info.value.problems[0]
    assert str(info.value) == f"s.yaml:{problem.line}: {problem.message}"
    return problem.line, problem.message


def _nested(levels: int) -> str:
    """``description`` holding ``levels`` nested lists (a scalar at the bottom)."""
    return CLOCK + "description: " + "[" * levels + "x" + "]" * levels + "\n"


def test_an_alias_is_refused_before_it_is_expanded() -> None:
    """A "billion laughs": nine lines that would expand to 10^9 strings if any message or
    check walked them. Refused at the first alias, of a list or of a plain value."""
    bomb = CLOCK + 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for level in "bcdefgh":
        previous = chr(ord(level) - 1)
        bomb += f"{level}: &{level} [{', '.join([f'*{previous}'] * 9)}]\n"
    line, message = _only_problem(bomb)
    assert line == 3 and message.startswith("an alias (*a): a scenario does not read anchors")
    assert _only_problem(CLOCK + "name: &n x\ndescription: *n\n")[0] == 3
    scenario = parse_scenario(CLOCK + "name: &n x\n", "s.yaml")  # an anchor alone expands nothing
    assert scenario.clock.year == 2026


def test_nesting_is_refused_beyond_its_bound() -> None:
    from kite_skills.sandbox.sim.scenario import MAX_DEPTH

    parse_scenario(_nested(MAX_DEPTH - 1), "s.yaml")  # the top-level mapping is one level
    line, message = _only_problem(_nested(MAX_DEPTH))
    assert line == 2 and message.startswith(f"nested more than {MAX_DEPTH} levels deep — ")
    assert _only_problem(_nested(5000))[0] == 2  # a RecursionError before


@pytest.mark.parametrize("sign", ["", "-"])
def test_a_number_too_long_to_read_is_one_problem(sign: str) -> None:
    from kite_skills.sandbox.sim.scenario import MAX_NUMBER_CHARS

    def speed(digits: int) -> str:
        return CLOCK + f"speed: {sign}{'9' * digits}\n"

    at_limit = MAX_NUMBER_CHARS - len(sign)
    line, message = _only_problem(speed(at_limit))  # read, then too large
    assert line == 2 and "must be a finite number of at most 10^15" in message
    line, message = _only_problem(speed(at_limit + 1))
    assert line == 2
    assert message == (
        f"a number of {MAX_NUMBER_CHARS + 1} characters — every number here is at most "
        "10^15: write it with at most 16 digits"
    )
    assert _only_problem(speed(5000))[0] == 2  # Python's 4,300-digit limit: a ValueError before
    assert parse_scenario(CLOCK + f"name: '{'9' * 5000}'\n", "s.yaml").clock  # text is text


@pytest.mark.parametrize(
    ("clock", "year"),
    [("1999-12-31 23:59", 1999), ("2100-01-01 00:00", 2100), ("9999-12-31 23:59", 9999)],
)
def test_a_clock_outside_the_simulated_years_is_one_problem(clock: str, year: int) -> None:
    for written in (f'"{clock}"', f"{clock}:00"):  # quoted, and a YAML timestamp
        line, message = _only_problem(f"clock: {written}\n")
        assert line == 1
        assert message == (
            f"clock: the year {year} is outside the years the sandbox simulates — give a date "
            "from 2000 to 2099"
        )


def test_the_first_and_last_simulated_years_load() -> None:
    for clock in ("2000-01-03 10:00", "2099-12-31 23:59"):
        scenario = parse_scenario(f'clock: "{clock}"\n', "s.yaml")
        assert Simulation(scenario).now.strftime("%Y-%m-%d %H:%M") == clock
