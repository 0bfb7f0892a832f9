"""Each recipe defect the rehearsals found, on the recipe text that had it (kept in
tests/rehearsal/defects/ as it was before its `recipe:` fix): the step the rehearsal follows
does not name the call, or the parameter, the rehearsal must make there, so the harness
refuses it; with today's text the same call goes through (the rehearsals pass)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .agent import Recipe, in_process, recipe, step

DEFECTS = Path(__file__).parent / "defects"

GTT_SINGLE = {"exchange": "NSE", "tradingsymbol": "INFY", "last_price": 1612,
              "transaction_type": "SELL", "product": "CNC", "trigger_type": "single",
              "trigger_value": 1650, "quantity": 100, "limit_price": 1648.3}  # fmt: skip
OCO = {"exchange": "NFO", "tradingsymbol": "NIFTY27JANFUT", "last_price": 26000,
       "transaction_type": "SELL", "product": "NRML", "trigger_type": "two-leg",
       "lower_trigger_value": 25700, "lower_quantity": 65, "lower_limit_price": 25600,
       "upper_trigger_value": 26500, "upper_quantity": 65, "upper_limit_price": 26500}  # fmt: skip
ALERT = {"uuids": [], "name": "x", "alert_type": "simple", "lhs_exchange": "NSE",
         "lhs_tradingsymbol": "INFY", "lhs_attribute": "LastTradedPrice", "operator": "<=",
         "rhs_type": "constant", "rhs_constant": 1600}  # fmt: skip

CASES: list[tuple[str, int, str, str, dict[str, Any], str]] = [
    ("orders/modify-cancel.md", 6, "market", "quote", {"instruments": ["NSE:INFY"]},
     "does not name the call market quote"),
    ("market-data/resolve.md", 1, "market", "search",
     {"search_mode": "get_by_tradingsymbol", "exchange": "NSE", "tradingsymbol": "INFY",
      "verbosity": "full"}, "does not name the call market search"),
    ("triggers-and-alerts/gtt.md", 8, "gtt", "place", GTT_SINGLE,
     "does not name the parameter 'trigger_value'"),
    ("orders/expiry-rollover.md", 10, "market", "quote", {"instruments": ["NFO:NIFTY27JANFUT"]},
     "does not name the call market quote"),
    ("orders/cancel-all.md", 5, "orders", "list", {"from": 0, "limit": 50},
     "does not name the call orders list"),
    ("triggers-and-alerts/alerts.md", 7, "alerts", "create", ALERT,
     "does not name the parameter 'rhs_constant'"),
    ("orders/entry-stop-target.md", 11, "gtt", "place", OCO,
     "does not name the parameter 'lower_trigger_value'"),
    ("derivatives/spreads.md", 12, "market", "quote", {"instruments": ["NFO:NIFTY27JANFUT"]},
     "does not name the call market quote"),
    ("daily-review/account-briefing.md", 4, "portfolio", "holdings",
     {"type": "full", "from": 0, "limit": 50}, r"gives type \['summary'\]"),
    ("triggers-and-alerts/audit.md", 2, "alerts", "get", {"uuids": ["x"], "history": True},
     "does not name the parameter 'history'"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "number", "tool", "mode", "args", "refusal"), CASES)
def test_the_old_text_is_refused_and_the_fixed_text_is_followed(
    path: str, number: int, tool: str, mode: str, args: dict[str, Any], refusal: str
) -> None:
    old = Recipe(path, (DEFECTS / path.replace("/", "_")).read_text("utf-8"))
    agent = in_process("default")
    with pytest.raises(AssertionError, match=refusal):
        agent.call(step(old, number, ""), tool, mode, **args)
    fixed = step(recipe(path), number, "")  # the fixed step names this call, these arguments
    written = agent._named(fixed, tool, mode, args)
    agent._check_arguments(fixed, written, tool, agent._schema(tool, mode), args)


def test_the_old_audit_read_a_field_this_server_never_returns() -> None:
    """audit step 5 read `orders[].result` of a triggered GTT: the Kite MCP server's GTT rows
    are gokiteconnect's GTT with Orders []Order, which has no `result`."""
    old = (DEFECTS / "triggers-and-alerts_audit.md").read_text("utf-8")
    assert "read `orders[].result`" in old
    assert "read `orders[].result`" not in recipe("triggers-and-alerts/audit.md").text
    agent = in_process("t1-holdings")
    agent.wait(minutes=30)  # the GTT triggers at 10:50 and its sell is refused
    (gtt,) = agent.call(
        step(recipe("triggers-and-alerts/audit.md"), 1, "`gtt` mode `list`"), "gtt", "list",
        **{"from": 0, "limit": 100},
    )["data"]  # fmt: skip
    assert gtt["status"] == "triggered"
    assert all("result" not in leg for leg in gtt["orders"])
