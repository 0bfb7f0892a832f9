"""The harness refuses what a recipe does not say: a quote the step does not contain, a call
or parameter the cited text does not name, a value other than the one written, a write before
the approval stop or without a re-check after it, and a call marked as not on the agent's
generation."""

from __future__ import annotations

import pytest

from .agent import Recipe, in_process, part, recipe, step

RECONCILE = recipe("orders/reconcile.md")
MODIFY = recipe("orders/modify-cancel.md")


def test_a_quote_must_be_in_its_step() -> None:
    with pytest.raises(AssertionError, match="no longer says"):
        step(RECONCILE, 1, "list every order of the last week")
    with pytest.raises(AssertionError, match="no longer says"):
        part(RECONCILE, "Partial fills", "There is a PARTIAL status")


def test_only_the_calls_and_parameters_the_text_names() -> None:
    agent = in_process("default")
    s1 = step(RECONCILE, 1, "List today's orders")
    with pytest.raises(AssertionError, match="does not name the call orders history"):
        agent.call(s1, "orders", "history", order_id="1")
    with pytest.raises(AssertionError, match="does not name the parameter 'tag'"):
        agent.call(s1, "orders", "list", tag="x")
    with pytest.raises(AssertionError, match=r"gives limit \['50'\]"):
        agent.call(s1, "orders", "list", **{"from": 0, "limit": 10})
    assert not agent.made  # nothing reached the sandbox


def test_a_write_needs_the_approval_and_a_recheck_after_it() -> None:
    agent = in_process("default")
    s7 = step(MODIFY, 7, "all passed explicitly")
    order = {"order_id": "261202200000002", "variety": "regular", "order_type": "LIMIT",
             "quantity": 50, "price": 901.0, "trigger_price": 0, "validity": "DAY",
             "disclosed_quantity": 0}  # fmt: skip
    with pytest.raises(AssertionError, match="before any approval"):
        agent.call(s7, "orders", "modify", **order)
    agent.approve(part(MODIFY, "Steps", "**Stop for approval.**"))
    with pytest.raises(AssertionError, match="without the re-check"):
        agent.call(s7, "orders", "modify", **order)
    agent.call(step(MODIFY, 6, "read `orders` mode `history` again"), "orders", "history",
               order_id=order["order_id"])  # fmt: skip
    assert agent.call(s7, "orders", "modify", **order) == {"order_id": order["order_id"]}
    with pytest.raises(AssertionError, match="more writes than the approval covered"):
        agent.call(s7, "orders", "modify", **order)
    with pytest.raises(AssertionError, match="is not an approval stop"):
        agent.approve(step(MODIFY, 6, "read `orders` mode `history` again"))


def test_a_call_marked_not_on_a_generation_is_not_made_there() -> None:
    agent = in_process("default", "legacy-oldest")
    s1 = step(recipe("market-data/resolve.md"), 1, "`market` mode `search` with `search_mode`")
    with pytest.raises(AssertionError, match="marked not on legacy-oldest"):
        agent.call(s1, "market", "search", search_mode="get_by_tradingsymbol",
                   exchange="NSE", tradingsymbol="INFY", verbosity="full")  # fmt: skip


def test_a_legacy_twin_must_be_named() -> None:
    text = RECONCILE.text.replace("(legacy `get_order_history`)", "")
    agent = in_process("default", "legacy")
    s4 = step(Recipe("orders/reconcile.md", text), 4, "read `orders` mode `history`")
    with pytest.raises(AssertionError, match="never names the legacy twin get_order_history"):
        agent.call(s4, "orders", "history", order_id="1")
