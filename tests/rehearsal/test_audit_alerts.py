"""/triggers-and-alerts/audit, the alerts half, on `alerts-audit`: every alert listed with
`uuids` `[]`, the disabled one reported, the ATO alert flagged with its basket before it fires;
then the truth: the price crosses, the basket's order is placed and filled, and a second audit
reads the alert's history to explain the trigger. The oldest legacy server has no alerts tool:
the audit says so and covers GTTs only."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import audit_alerts, audit_gtts

AUDIT = recipe("triggers-and-alerts/audit.md")


@pytest.mark.parametrize("generation", ["grouped", "legacy"])
def test_the_ato_alert_is_flagged_before_it_places_its_basket(generation: str) -> None:
    agent = in_process("alerts-audit", generation)
    kite = agent.simulation
    assert kite is not None
    truth = {a["name"]: a for a in kite.get_alerts()}
    lines = audit_alerts(agent, AUDIT)
    assert lines == [
        "Alerts: 3 (enabled 2, disabled 1); 1 ATO alert places BUY 10 SBIN when fired; limit 200",
        "- TCS below 3000: disabled (no reason given)",
        "- SBIN dip buy: ATO, places BUY 10 SBIN LIMIT 800.00 when NSE:SBIN <= 800.00; "
        "LTP 812.00 (1.5% away)",
    ]
    assert len(truth) == 3 and not agent.writes()  # the audit only reads
    (gtt,) = audit_gtts(agent, AUDIT)  # both halves of the report
    assert gtt.startswith("- 100001 ITC SELL two-leg @ 380.00: active")
    # the truth: SBIN trades at 799.50 at 10:30; the ATO alert places its basket once
    agent.wait(minutes=40)
    kite.advance_to(agent.now)
    (order,) = kite.orders()
    assert (order["tradingsymbol"], order["transaction_type"], order["quantity"]) == (
        "SBIN", "BUY", 10)  # fmt: skip
    assert order["meta"]["alert"] == truth["SBIN dip buy"]["uuid"]
    again = audit_alerts(agent, AUDIT)
    assert again == [
        "Alerts: 3 (enabled 1, disabled 2); no enabled ATO alert; limit 200",
        "- TCS below 3000: disabled (no reason given)",
        f"- SBIN dip buy: disabled (triggered); fired 10:30, order {order['order_id']} COMPLETE",
    ]
    (history,) = agent.calls_of("alerts", "get")[-1:]
    assert history.arguments["history"] is True and history.arguments["uuids"] == [
        truth["SBIN dip buy"]["uuid"]
    ]
    assert not agent.writes()


def test_the_oldest_server_has_no_alerts_the_audit_says_so() -> None:
    agent = in_process("alerts-audit", "legacy-oldest")
    assert audit_alerts(agent, AUDIT) == [
        "Alerts: not available on this server (no alerts tool); GTTs only"
    ]
    assert len(audit_gtts(agent, AUDIT)) == 1
    assert not agent.calls_of("alerts") and not agent.writes()
