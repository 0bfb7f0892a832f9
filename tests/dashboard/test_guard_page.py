"""The dashboard's Guard page (issue 44 §3): today's writes and refusals from the guard's
journal, the limits edited with the session's CSRF token, the kill switch; behind the same
door as /skills."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from kite_skills.dashboard.app import build_app
from kite_skills.dashboard.guard_page import GuardFiles
from kite_skills.dashboard.security import Door
from kite_skills.guard import limits
from kite_skills.store import Store

from .conftest import BASE, ORIGIN, csrf_of


@pytest.fixture
def files(tmp_path: Path) -> GuardFiles:
    journal = tmp_path / "guard.jsonl"
    now = datetime.now(UTC)
    entries = [
        {"at": (now - timedelta(days=2)).isoformat(), "tool": "place_order", "action": "place",
         "decision": "allow", "limits": []},
        {"at": now.isoformat(), "tool": "place_order", "action": "place", "decision": "allow",
         "limits": []},
        {"at": now.isoformat(), "tool": "orders", "action": "place", "decision": "refuse",
         "limits": ["order-value"], "message": "this order is ₹4,80,000, above <b>your</b> limit"},
    ]  # fmt: skip
    journal.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return GuardFiles(tmp_path / "limits.json", journal)


@pytest.fixture
def guard_client(store: Store, door: Door, files: GuardFiles) -> Iterator[TestClient]:
    app = build_app(store, door, files)
    with TestClient(app, base_url=BASE, follow_redirects=False) as client:
        assert client.get(f"/skills/guard?token={door.issue()}").status_code == 303
        client.headers["origin"] = ORIGIN
        yield client


def test_the_guard_page_needs_the_sign_in(store: Store, door: Door, files: GuardFiles) -> None:
    with TestClient(build_app(store, door, files), base_url=BASE) as anonymous:
        for path in ("/skills/guard",):
            assert anonymous.get(path).status_code == 403
        assert anonymous.post("/skills/guard/kill", data={"reason": "x"}).status_code == 403
    assert not files.limits.exists()


def test_today_writes_and_refusals_escaped(guard_client: TestClient) -> None:
    page = guard_client.get("/skills/guard")
    assert page.status_code == 200
    assert "2 writes, 1 refused or declined." in page.text  # the one two days ago is not today
    assert "above &lt;b&gt;your&lt;/b&gt; limit" in page.text and "<b>your" not in page.text
    assert 'id="max_order_value" name="max_order_value" value="500000"' in page.text


def test_limits_are_saved_from_the_form(guard_client: TestClient, files: GuardFiles) -> None:
    csrf = csrf_of(guard_client.get("/skills/guard").text)
    done = guard_client.post(
        "/skills/guard/limits",
        data={"csrf": csrf, "max_order_value": "200000", "segments": "NSE,NFO", "ask": "on"},
    )
    assert done.status_code == 303
    saved = limits.load(files.limits)
    assert saved.max_order_value == 200_000 and saved.segments == ("NSE", "NFO")
    assert saved.max_orders_per_day == 100  # the fields left as they were are unchanged


def test_a_bad_value_changes_nothing_and_says_why(
    guard_client: TestClient, files: GuardFiles
) -> None:
    csrf = csrf_of(guard_client.get("/skills/guard").text)
    done = guard_client.post(
        "/skills/guard/limits", data={"csrf": csrf, "max_order_value": "1000", "max_quantity": "-5"}
    )
    assert done.status_code == 400
    assert "max_quantity &#39;-5&#39;: Input should be greater than 0; nothing changed" in done.text
    assert not files.limits.exists()


def test_no_change_without_the_csrf_token_or_from_another_origin(
    guard_client: TestClient, files: GuardFiles
) -> None:
    assert (
        guard_client.post("/skills/guard/limits", data={"max_order_value": "1"}).status_code == 403
    )
    assert (
        guard_client.post("/skills/guard/kill", data={"csrf": "0" * 64, "reason": "x"}).status_code
        == 403
    )
    csrf = csrf_of(guard_client.get("/skills/guard").text)
    foreign = guard_client.post(
        "/skills/guard/kill",
        data={"csrf": csrf, "reason": "x"},
        headers={"origin": "http://evil.example"},
    )
    assert foreign.status_code == 403
    assert not files.limits.exists()


def test_the_kill_switch_on_and_off(guard_client: TestClient, files: GuardFiles) -> None:
    csrf = csrf_of(guard_client.get("/skills/guard").text)
    assert (
        guard_client.post(
            "/skills/guard/kill", data={"csrf": csrf, "reason": "market is wild"}
        ).status_code
        == 303
    )
    switch = limits.load(files.limits).kill_switch
    assert switch is not None and switch.reason == "market is wild"
    page = guard_client.get("/skills/guard").text
    assert "set by" in page and "market is wild. Every write is refused." in page
    assert guard_client.post("/skills/guard/resume", data={"csrf": csrf}).status_code == 303
    assert limits.load(files.limits).kill_switch is None
