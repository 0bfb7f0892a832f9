"""/orders/exit and /orders/modify-cancel: a protected SL-M exit partly filled at the open and
left its remainder OPEN when the price gapped through its band. The recipe places no second
exit; it modifies the remainder (the total quantity, passed explicitly) to a LIMIT at the
best bid, after its own approval and re-check, and the position then shows the whole exit."""

from __future__ import annotations

import pytest

from kite_skills.sandbox import handlers

from .agent import in_process, recipe, step
from .scripts import exit_remainder

SCENARIO = "exit-gap"


def rehearse(generation: str = "grouped"):  # type: ignore[no-untyped-def]
    agent = in_process(SCENARIO, generation)
    agent.wait(minutes=10)  # 09:20: the person asks what happened to the exit
    done = exit_remainder(
        agent, recipe("orders/exit.md"), recipe("orders/modify-cancel.md"), "NSE:INFY", 0.05
    )
    return agent, done


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_the_remainder_of_a_protected_exit_is_modified_not_doubled(generation: str) -> None:
    agent, done = rehearse(generation)
    assert done.remainder["filled_quantity"] == 40 and done.remainder["pending_quantity"] == 60
    assert done.sellable == 0  # the open stop holds every remaining share
    (write,) = agent.writes()
    assert write.mode == "modify"
    sent = {k: v for k, v in write.arguments.items() if k != "mode"}
    assert sent == {
        "order_id": done.remainder["order_id"], "variety": "regular", "order_type": "LIMIT",
        "quantity": 100, "price": 1477.9, "trigger_price": 0, "validity": "DAY",
        "disclosed_quantity": 0,
    }  # fmt: skip
    # the approval came after the summary's reads, and the re-check after the approval
    approved = agent.approvals[0]
    assert [m.mode for m in agent.made[approved:]][:3] == ["history", "quote", "modify"]
    assert done.modified.final["status"] == "COMPLETE"
    assert done.modified.final["filled_quantity"] == 100
    assert done.net_after == -100  # the whole holding is sold: 40 at 1540, 60 at the bid


def test_a_modify_that_omits_quantity_would_have_been_refused() -> None:
    """The server sends quantity 1 when it is omitted (the recipe's step 7 warns): on this
    order, 40 already filled, Kite refuses it and the remainder stays OPEN at the band."""
    r = recipe("orders/modify-cancel.md")
    step(r, 7, "Some server versions send a quantity of 1 when `quantity` is omitted")
    fresh = in_process(SCENARIO)
    fresh.wait(minutes=10)
    kite = fresh.simulation
    assert kite is not None
    kite.advance_to(fresh.now)
    order_id = kite.orders()[0]["order_id"]
    omitted = handlers.grouped(lambda: kite.now).handlers["orders"](
        kite, {"mode": "modify", "order_id": order_id, "variety": "regular",
               "order_type": "LIMIT", "price": 1477.9},
    )  # fmt: skip
    assert omitted.is_error and omitted.text == "Failed to modify order"
    assert omitted.kite_error == "Quantity cannot be less than the filled quantity 40."
    assert kite.orders()[0]["pending_quantity"] == 60
