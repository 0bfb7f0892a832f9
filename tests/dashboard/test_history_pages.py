"""Issue 22 §5 on the dashboard, over HTTP (the pages have no script): a rejection's reason,
a skill's history (every text, any two compared, an earlier one restored behind CSRF and
Origin), and the read receipts with their switch."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from kite_skills.store import ReadReceipt, Store, agent, human
from kite_skills.store.receipts import ReceiptWriter

from .conftest import csrf_of, rows

NAME = "compare-funds"


def _live_with_proposal(store: Store, body: str = "# Better\n") -> None:
    human.publish(store, NAME, rev=store.get(NAME).revision, via="cli", who="pat")
    agent.save(store, NAME, "When comparing funds", body, who="bot 1")


def test_reject_with_a_reason_is_kept_and_told_to_the_agent(
    client: TestClient, store: Store
) -> None:
    _live_with_proposal(store)
    page = client.get(f"/skills/{NAME}").text
    assert 'name="reason"' in page
    done = client.post(
        f"/skills/{NAME}/reject",
        data={"csrf": csrf_of(page), "reason": "Keep the <b>expense</b> ratio"},
    )
    assert done.status_code == 303
    told = agent.save(store, NAME, "When comparing funds", "# Again\n", who="bot 1")
    assert told.rejected is not None and told.rejected.reason == "Keep the <b>expense</b> ratio"
    history = client.get(f"/skills/{NAME}/history").text
    assert "Keep the &lt;b&gt;expense&lt;/b&gt; ratio" in history  # escaped, never markup


def test_history_lists_every_text_and_compares_any_two(client: TestClient, store: Store) -> None:
    _live_with_proposal(store, "# Better\n<script>alert(1)</script>\n")
    texts = store.history(NAME)
    proposal, first = texts[0], texts[-1]
    page = client.get(f"/skills/{NAME}/history").text
    for t in texts:
        assert f'id="text-{t.id}"' in page
    assert "served live" in page
    diff = client.get(f"/skills/{NAME}/history?a={first.id}&b={proposal.id}").text
    assert 'id="history-diff"' in diff
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in diff and "<script>alert" not in diff
    # the dashboard's own diff rendering: the stored text's line numbers, word highlights
    assert '<td class="num new">1</td><td class="mark">+</td><td><pre># ' in diff
    assert 'class="word">Better</ins>' in diff
    same = client.get(f"/skills/{NAME}/history?a={first.id}&b=current").text
    assert 'id="same"' in same  # the first text is the live text still


def test_an_unknown_or_foreign_text_id_is_404(client: TestClient, store: Store) -> None:
    human.create(store, "other-skill", description="Other", body="# o\n", via="cli", who="pat")
    foreign = store.history("other-skill")[0].id
    assert client.get(f"/skills/{NAME}/history?show={foreign}").status_code == 404
    assert client.get(f"/skills/{NAME}/history?a=x&b=current").status_code == 404


def test_restore_an_earlier_text_is_a_persons_audited_action(
    client: TestClient, store: Store
) -> None:
    _live_with_proposal(store)
    rev = store.get(NAME).proposed.revision  # type: ignore[union-attr]
    human.accept_revision(store, NAME, rev=rev, via="cli", who="pat")
    first = store.history(NAME)[-1]
    page = client.get(f"/skills/{NAME}/history?a={first.id}&b=current").text
    url = f"/skills/{NAME}/history/{first.id}/restore"
    assert f'id="restore-compared" href="{url}"' in page  # a question first, not a form
    before = store.audit(limit=1)[0].id
    asked = client.get(url).text  # says what it will do, and changes nothing
    assert store.audit(limit=1)[0].id == before
    what = asked[
        asked.index('id="restore-what"') : asked.index("</p>", asked.index("restore-what"))
    ]
    assert f"The earlier {first.label()}, revision <code>{first.revision}</code>, becomes" in what
    assert "agents read the restored text from the moment you confirm" in what  # it is live
    assert 'id="restore-diff"' in asked and 'id="confirm-restore"' in asked
    done = client.post(url, data={"csrf": csrf_of(asked), "confirm": "yes"})
    assert done.status_code == 303 and done.headers["location"] == f"/skills/{NAME}"
    skill = store.get(NAME)
    assert (skill.body, skill.status) == ("# Compare\n\n1. A\n", "live")
    entry = store.audit(limit=1)[0]
    assert (entry.action, entry.via) == ("revert", "dashboard")
    assert "restored an earlier text" in client.get(f"/skills/{NAME}").text  # the flash


def test_restore_without_csrf_or_from_another_origin_changes_nothing(
    client: TestClient, store: Store, db: Path
) -> None:
    first = store.history(NAME)[-1]
    agent.save(store, NAME, "When comparing two funds", "# Newer\n", who="claude-code 2.1")
    url = f"/skills/{NAME}/history/{first.id}/restore"
    page = client.get(url).text
    before = rows(db)
    assert client.post(url, data={"confirm": "yes"}).status_code == 403
    assert client.post(url, data={"csrf": "0" * 64, "confirm": "yes"}).status_code == 403
    refused = client.post(
        url,
        data={"csrf": csrf_of(page), "confirm": "yes"},
        headers={"origin": "http://evil.example"},
    )
    assert refused.status_code == 403
    assert client.get(url).status_code == 200  # the question: a GET changes nothing
    assert client.post(url, data={"csrf": csrf_of(page)}).status_code == 400  # unconfirmed
    assert rows(db) == before


def test_skill_page_and_reads_page_show_who_read_what(client: TestClient, store: Store) -> None:
    human.publish(store, NAME, rev=store.get(NAME).revision, via="cli", who="pat")
    writer = ReceiptWriter(store.path)
    writer.record(
        [
            ReadReceipt("skill", NAME, "claude-ai <1.0>", "skillRead", "2026-01-01T09:30:00.0Z"),
            ReadReceipt("recipe", "/orders/prepare", "cursor 2", "help", "2026-01-02T09:30:00.0Z"),
        ]
    )
    writer.close()
    page = client.get(f"/skills/{NAME}").text
    assert 'id="last-read"' in page and "claude-ai &lt;1.0&gt;" in page and "skillRead" in page
    reads = client.get("/skills/reads").text
    assert "/orders/prepare" in reads and "catalog recipe" in reads and "cursor 2" in reads


def test_the_switch_turns_receipts_off_and_forgets_them(client: TestClient, store: Store) -> None:
    ReceiptWriter(store.path).record(
        [ReadReceipt("skill", NAME, "claude-ai 1.0", "skillRead", "2026-01-01T09:30:00.0Z")]
    )
    page = client.get("/skills/reads").text
    assert 'id="receipts-off"' in page
    done = client.post("/skills/reads/setting", data={"csrf": csrf_of(page), "value": "off"})
    assert done.status_code == 303
    assert not store.read_receipts_on() and store.reads() == []
    off = client.get("/skills/reads").text
    assert "Read receipts are off" in off and 'id="receipts-on"' in off
    assert client.post("/skills/reads/setting", data={"value": "on"}).status_code == 403
    assert not store.read_receipts_on()


def test_an_agents_new_draft_rejected_with_a_reason_stays_a_draft(
    client: TestClient, store: Store
) -> None:
    page = client.get(f"/skills/{NAME}").text  # the agent's new draft, never published
    assert 'id="reject-draft"' in page and 'id="draft-reason"' in page
    done = client.post(
        f"/skills/{NAME}/reject", data={"csrf": csrf_of(page), "reason": "Name the <b>fund</b>"}
    )
    assert done.status_code == 303 and done.headers["location"] == f"/skills/{NAME}"
    assert "rejected the draft" in client.get(done.headers["location"]).text
    assert store.get(NAME).status == "draft"  # delete stays a separate act
    told = agent.save(store, NAME, "When comparing funds", "# Again\n", who="bot 1")
    assert told.rejected is not None and told.rejected.draft
    assert told.rejected.reason == "Name the <b>fund</b>"
    history = client.get(f"/skills/{NAME}/history").text
    assert "rejected by person" in history and "Name the &lt;b&gt;fund&lt;/b&gt;" in history


def test_a_persons_own_draft_has_no_reject_button(client: TestClient, store: Store) -> None:
    human.create(store, "mine", description="Mine", body="# mine\n", via="cli", who="pat")
    assert 'id="reject-draft"' not in client.get("/skills/mine").text
    _live_with_proposal(store)  # a live skill with a proposal: the proposal's Reject only
    page = client.get(f"/skills/{NAME}").text
    assert 'id="reject"' in page and 'id="reject-draft"' not in page


def test_a_draft_sent_back_is_marked_so_on_the_skills_page(
    client: TestClient, store: Store
) -> None:
    human.reject_revision(store, NAME, via="dashboard", who="pat", reason="say which funds")
    row = client.get("/skills").text.split('class="waiting-row"')[1].split("</tr>")[0]
    assert "sent back to the agent" in row and "person: pat via dashboard" in row
    agent.save(store, NAME, "When comparing funds", "# Again\n", who="bot 1")  # its answer
    row = client.get("/skills").text.split('class="waiting-row"')[1].split("</tr>")[0]
    assert "new draft" in row and "sent back" not in row
