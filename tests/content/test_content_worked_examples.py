"""Recompute the worked examples printed in the technical-analysis recipes."""

import pytest
from content_helpers import (
    catalog_root,
    ema,
    parse_worked_example,
    rsi,
    sma,
    split_frontmatter,
)

FUNCS = {"SMA": sma, "EMA": ema, "RSI": rsi}
EXPECTED_KINDS = {
    "moving-averages.md": {"SMA", "EMA"},
    "rsi.md": {"RSI"},
}


def example(name):
    path = catalog_root() / "technical-analysis" / name
    return parse_worked_example(split_frontmatter(path.read_text(encoding="utf-8")).body)


@pytest.mark.parametrize("name", sorted(EXPECTED_KINDS))
def test_worked_example_values_match(name):
    closes, results = example(name)
    assert results, "no printed results"
    assert {kind for kind, *_ in results} == EXPECTED_KINDS[name]
    for kind, n, bar, printed in results:
        assert bar <= len(closes)
        computed = FUNCS[kind](closes, n, bar)
        assert f"{computed:.2f}" == printed, (
            f"{kind}({n}) at bar {bar}: {computed:.4f} vs {printed}"
        )


def test_rsi_example_is_rsi_14_with_about_20_bars():
    closes, results = example("rsi.md")
    assert 15 <= len(closes) <= 30
    assert {n for _, n, _, _ in results} == {14}
    assert max(bar for _, _, bar, _ in results) == len(closes)


def test_moving_average_example_uses_small_n():
    closes, results = example("moving-averages.md")
    assert all(n <= 10 for _, n, _, _ in results)
    assert max(bar for _, _, bar, _ in results) == len(closes)


def test_reference_implementations():
    closes = [float(x) for x in range(1, 21)]
    assert sma(closes, 5, 5) == 3.0
    assert ema(closes, 5, 5) == sma(closes, 5, 5)  # seeded with the SMA
    assert ema([10.0] * 5 + [16.0], 5, 6) == pytest.approx(12.0)  # alpha = 1/3
    assert rsi(closes, 14, 20) == 100.0  # no losses
    alternating = [10.0, 11.0] * 10
    assert rsi(alternating, 14, 15) == pytest.approx(50.0)
