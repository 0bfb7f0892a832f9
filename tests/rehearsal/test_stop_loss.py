"""/orders/stop-loss under the default account's long NIFTY future: an SL stop (trigger
rounded towards the price, limit beyond it), the position's own product and whole lots,
approval, re-check, place, and the order waiting as TRIGGER PENDING."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import stop_loss


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_an_sl_stop_under_a_long_future(generation: str) -> None:
    agent = in_process("default", generation)
    summary, sent, final = stop_loss(
        agent, recipe("orders/stop-loss.md"), recipe("holdings/positions.md"),
        recipe("orders/reconcile.md"), "NIFTY26DECFUT", 0.02, 20,
    )  # fmt: skip
    kite = agent.simulation
    assert kite is not None
    facts = kite.instrument_facts("NFO", "NIFTY26DECFUT")
    assert (sent["quantity"], sent["product"]) == (65, "NRML")
    assert sent["price"] == round(sent["trigger_price"] - 20 * facts.tick_size, 2)
    assert summary[1].startswith("closes 1 lots if triggered")
    assert final["status"] == "TRIGGER PENDING"
    (order,) = [o for o in kite.orders() if o["tag"] == sent["tag"]]
    assert (order["order_type"], order["trigger_price"]) == ("SL", sent["trigger_price"])
