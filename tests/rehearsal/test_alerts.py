"""/triggers-and-alerts/alerts: a simple price alert, checked for a duplicate, approved,
re-checked, created with the recipe's fields and verified; the alert then fires when the
simulated price reaches the level."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import price_alert


@pytest.mark.parametrize("generation", ["grouped", "legacy"])
def test_a_simple_price_alert(generation: str) -> None:
    agent = in_process("default", generation)
    summary, _, listed = price_alert(
        agent, recipe("triggers-and-alerts/alerts.md"), "NSE:INFY", 1600.0
    )
    assert summary == [
        "when NSE:INFY last traded price <= 1,600.00; LTP 1,634.60 (2.12% above); "
        "simple alert (no orders)"
    ]
    (write,) = agent.writes()
    assert write.arguments["rhs_constant"] == 1600.0 and write.arguments["uuids"] == []
    alert = listed["alert"]  # one uuid: the one alert
    assert (alert["status"], alert["operator"], alert["rhs_constant"]) == ("enabled", "<=", 1600)
    kite = agent.simulation
    assert kite is not None
    assert [a["uuid"] for a in kite.get_alerts()].count(alert["uuid"]) == 1
