"""The dashboard papercuts of issue 22 §4 over HTTP (TestClient, a real store file): a text
box's CR LF, the hidden-character warning naming its field, the stale-revision refusal with
its diff, diff rows, the empty store, the next waiting item, what Archive and Move to draft
mean for agents. What only a browser shows is in test_papercuts_browser.py."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.testclient import TestClient

from kite_skills.dashboard import render
from kite_skills.store import Store, agent, human
from kite_skills.store.lifecycle import FOR_AGENTS, LIVE, Action

from .conftest import csrf_of, rev_of, rows


def _new(client: TestClient, **fields: str) -> tuple[int, str]:
    page = client.get("/skills/new").text
    answer = client.post("/skills/new", data={"csrf": csrf_of(page), **fields})
    return answer.status_code, answer.text


def test_a_text_box_crlf_is_no_hidden_character_and_is_stored_as_lf(
    client: TestClient, store: Store
) -> None:
    body = "# Mine\r\n\r\n1. First.\r\n2. Second.\r\n"
    status, page = _new(client, name="Bad Name", description="Mine", body=body)
    assert status == 400 and 'id="error-name"' in page  # shown again, for the name
    assert 'id="hidden"' not in page  # a browser's line breaks are not hidden characters
    assert "\r" not in page
    status, _ = _new(client, name="mine", description="Mine", body=body)
    assert status == 303
    assert store.get("mine").body == "# Mine\n\n1. First.\n2. Second.\n"


def test_the_hidden_character_warning_names_the_field_that_holds_them(
    client: TestClient,
) -> None:
    status, page = _new(client, name="Bad Name", description="Mine", body="1. A\r2. B\r\n")
    assert status == 400
    warning = page[page.index('id="hidden"') : page.index("</div>", page.index('id="hidden"'))]
    assert "The procedure holds 1 hidden character(s)" in warning
    assert 'id="hidden-body"' in warning and 'id="hidden-description"' not in warning
    assert 'aria-describedby="error-body hidden-body">' in page  # the box points at both
    status, page = _new(client, name="Bad Name", description="Mine\u200b", body="1. A\n")
    warning = page[page.index('id="hidden"') : page.index("</div>", page.index('id="hidden"'))]
    assert "The description holds 1 hidden character(s)" in warning
    assert 'id="hidden-description"' in warning and 'id="hidden-body"' not in warning


def _stale_form(page: str, action: str) -> dict[str, str]:
    seen = re.search(rf'/{action}">.*?name="seen" value="([^"]+)"', page, re.S)
    assert seen, "no seen field on the form"
    return {"csrf": csrf_of(page), "rev": rev_of(page, action), "seen": seen.group(1)}


def test_a_stale_publish_says_so_plainly_with_the_diff_from_the_revision_seen(
    client: TestClient, store: Store, db: Path
) -> None:
    page = client.get("/skills/compare-funds").text
    form = _stale_form(page, "publish")
    agent.save(store, "compare-funds", "When comparing two funds", "# Compare\n\n1. B\n", who="x")
    before = rows(db)
    refused = client.post("/skills/compare-funds/publish", data=form)
    assert refused.status_code == 409 and rows(db) == before
    text = refused.text
    assert "Nothing was published: the text changed while you were reading it." in text
    # short, as lists show a revision; the whole id on hover and in what is copied
    seen = form["rev"]
    assert (
        f'the revision you saw (<code class="revision" title="{seen}">{seen[:12]}'
        f'<span class="revision-rest">{seen[12:]}</span></code>)'
    ) in text
    now = store.get("compare-funds").revision
    assert f"the one now waiting ({render.revision_html(now)})" in text
    table = text[text.index('id="stale-diff"') : text.index("</table>", text.index("stale-diff"))]
    assert '<pre>1. <del class="word">A</del></pre>' in table
    assert '<pre>1. <ins class="word">B</ins></pre>' in table


def test_a_stale_accept_diffs_the_two_proposals_and_a_gone_one_says_so(
    client: TestClient, store: Store
) -> None:
    human.publish(
        store, "compare-funds", rev=store.get("compare-funds").revision, via="cli", who="pat"
    )
    agent.save(store, "compare-funds", "When comparing two funds", "# Compare\n\n1. B\n", who="x")
    page = client.get("/skills/compare-funds").text
    form = _stale_form(page, "accept")
    agent.save(store, "compare-funds", "When comparing two funds", "# Compare\n\n1. C\n", who="y")
    refused = client.post("/skills/compare-funds/accept", data=form).text
    assert "Nothing was accepted: the text changed while you were reading it." in refused
    start = refused.index('id="stale-diff"')
    table = refused[start : refused.index("</table>", start)]
    assert '<del class="word">B</del>' in table and '<ins class="word">C</ins>' in table
    assert "1. A" not in table  # the live text is not what the person reviewed
    human.reject_revision(store, "compare-funds", via="cli", who="pat")
    gone = client.post("/skills/compare-funds/accept", data=form).text
    assert "the proposed revision you saw is no longer waiting" in gone


def test_a_seen_field_that_is_not_the_named_revision_shows_no_diff(
    client: TestClient, store: Store
) -> None:
    page = client.get("/skills/compare-funds").text
    form = _stale_form(page, "publish")
    form["seen"] = render_seen("anything", "# Anything\n")
    agent.save(store, "compare-funds", "When comparing two funds", "# Other\n", who="x")
    refused = client.post("/skills/compare-funds/publish", data=form)
    assert refused.status_code == 409
    assert "Nothing was published" in refused.text and 'id="stale-diff"' not in refused.text


def render_seen(description: str, body: str) -> str:
    from kite_skills.dashboard.app import seen_field

    return seen_field(description, body)


def test_diff_rows_are_numbered_with_blank_lines_and_word_marks() -> None:
    old = "# T\n\n1. Read the ratios.\n2. Keep.\n"
    new = "# T\n\n1. Read the expense ratios.\n\n2. Keep.\n"
    lines = render.diff_lines("d", old, "d", new)
    assert [(line.kind, line.old, line.new) for line in lines] == [
        ("same", 1, 1),
        ("same", 2, 2),
        ("del", 3, None),
        ("add", None, 3),
        ("add", None, 4),
        ("same", 4, 5),
    ]
    assert str(render.diff_html(lines[3])) == '1. Read the <ins class="word">expense </ins>ratios.'
    assert str(render.diff_html(lines[4])) == ('<span class="blank" title="an empty line">⏎</span>')
    rewritten = render.diff_lines("d", "alpha beta gamma\n", "d", "one two three\n")
    assert all(line.words == () for line in rewritten)  # nothing alike: whole lines
    hidden = render.diff_lines("d", "a b\n", "d", "a \u202eb\n")
    assert 'class="hidden-char"' in str(render.diff_html(hidden[-1]))


def test_an_empty_store_says_what_to_do_next(tmp_path: Path, door: object) -> None:
    from kite_skills.dashboard.app import build_app

    from .conftest import BASE, ORIGIN

    with Store.open(tmp_path / "empty.db") as store:
        app = build_app(store, door)  # type: ignore[arg-type]
        with TestClient(app, base_url=BASE, follow_redirects=False) as client:
            client.get(f"/skills?token={door.issue()}")  # type: ignore[attr-defined]
            client.headers["origin"] = ORIGIN
            page = client.get("/skills").text
    assert 'id="empty-store"' in page and "No skills yet" in page
    assert "Ask your agent to remember how you do something" in page
    assert '<a href="/skills/new" id="new-first">New skill</a>' in page
    assert 'id="waiting"' not in page


def test_after_publish_and_accept_a_link_to_the_next_waiting_item(
    client: TestClient, store: Store
) -> None:
    agent.save(store, "second", "Second", "# 2\n", who="bot")
    page = client.get("/skills/compare-funds").text
    client.post("/skills/compare-funds/publish", data={"csrf": csrf_of(page), "rev": rev_of(page)})
    shown = client.get("/skills/compare-funds").text
    assert '<a id="next-waiting" href="/skills/second">Next waiting: second →</a>' in shown
    page = client.get("/skills/second").text
    client.post("/skills/second/publish", data={"csrf": csrf_of(page), "rev": rev_of(page)})
    assert "Nothing else is waiting for you." in client.get("/skills/second").text
    page = client.get("/skills/second").text  # a flash is shown once
    assert 'id="next-waiting"' not in page
    agent.save(store, "second", "Second", "# 2, better\n", who="bot")
    page = client.get("/skills/second").text
    client.post(
        "/skills/second/accept", data={"csrf": csrf_of(page), "rev": rev_of(page, "accept")}
    )
    assert "Nothing else is waiting for you." in client.get("/skills/second").text
    page = client.get("/skills/second").text
    client.post("/skills/second/archive", data={"csrf": csrf_of(page)})
    assert 'id="next-waiting"' not in client.get("/skills/second").text  # only after a review


def test_archive_and_move_to_draft_say_what_they_mean_for_agents(
    client: TestClient, store: Store
) -> None:
    draft = client.get("/skills/compare-funds").text
    assert 'id="meanings"' not in draft  # a draft is no agent's to read anyway
    human.publish(
        store, "compare-funds", rev=store.get("compare-funds").revision, via="cli", who="pat"
    )
    live = client.get("/skills/compare-funds").text
    assert 'id="archive"' in live and 'id="move-to-draft"' in live
    for action in (Action.ARCHIVE, Action.MOVE_TO_DRAFT):
        meaning = FOR_AGENTS[(action, LIVE)].replace("'", "&#39;")
        assert f'<dd id="means-{action.value}">{meaning}</dd>' in live
    assert "agents no longer list or read it" in live
    human.archive(store, "compare-funds", via="cli", who="pat")
    archived = client.get("/skills/compare-funds").text
    assert 'id="means-restore"' in archived and 'id="means-move_to_draft"' in archived
    assert "agents can no longer put it back" in archived
