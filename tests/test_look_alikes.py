"""Issue 38: a new draft named like another skill (``cornpare-funds`` beside
``compare-funds``) or like a catalog skill is flagged on the dashboard and in the CLI; the rule
is :mod:`kite_skills.look_alikes`'s alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from kite_skills.catalog import skill_names
from kite_skills.look_alikes import MIN_EDIT_CHARS, LookAlikes, looks_like, skeleton
from kite_skills.store import Store, agent, human

from .test_cli_person import main, tty  # noqa: F401


@pytest.mark.parametrize(
    ("name", "other"),
    [
        ("cornpare-funds", "compare-funds"),  # rn reads as m
        ("vvatch-list", "watch-list"),  # vv as w
        ("clay-orders", "day-orders"),  # cl as d
        ("h0ldings", "holdings"),  # 0 as o
        ("se11-all", "sell-all"),  # 1 as l
        ("5ell-all", "sell-all"),  # 5 as s
        ("compare-fund", "compare-funds"),  # one dropped
        ("compare-fundss", "compare-funds"),  # one added
        ("compare-fumds", "compare-funds"),  # one changed
        ("cmopare-funds", "compare-funds"),  # two neighbours swapped
        ("abcde", "abcdf"),  # one changed, at the shortest length it counts for
        ("c0mpare-fund", "compare-funds"),  # a look-alike digit and one dropped letter
    ],
)
def test_look_alikes(name: str, other: str) -> None:
    assert looks_like(name, other) and looks_like(other, name)
    assert not looks_like(name, name)  # a name is not its own look-alike


@pytest.mark.parametrize(
    ("name", "other"),
    [
        ("abcd", "abce"),  # one changed, one character short of MIN_EDIT_CHARS (5)
        ("compare-funds", "compare-fonds-x"),  # two edits
        ("compare-funds", "fund-compare"),
        ("orders", "holders"),  # two edits
        ("abcde", "badce"),  # two swaps
        ("sip-2024-01", "sip-2024-02"),  # a series: only digits differ
        ("skill-0001", "skill-0011"),  # 0 reads as o and 1 as l, but they are digits here
        ("report-7", "report-78"),
    ],
)
def test_not_look_alikes(name: str, other: str) -> None:
    assert not looks_like(name, other) and not looks_like(other, name)


NAMES = st.from_regex(r"[a-z0-9rnvcl15-]{1,9}", fullmatch=True)


def test_the_edit_rule_starts_at_min_edit_chars() -> None:
    assert MIN_EDIT_CHARS == 5 and skeleton("abcd") == "abcd"


@given(st.lists(NAMES, max_size=30), NAMES)
def test_the_index_finds_exactly_what_comparing_every_name_finds(
    names: list[str], name: str
) -> None:
    assert LookAlikes(names).of(name) == sorted({o for o in names if looks_like(name, o)})


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "skills.db"
    with Store.open(path) as store:
        agent.save(store, "compare-funds", "Compare two funds", "# Compare\n", who="bot")
        human.publish(store, "compare-funds", rev=store.get("compare-funds").revision,
                      via="cli", who="pat")  # fmt: skip
        agent.save(store, "cornpare-funds", "Compare two funds", "# Compare\n", who="bot")
        agent.save(store, "h0ldings", "Holdings", "# Holdings\n", who="bot")
        agent.save(store, "unlike-any", "Other", "# Other\n", who="bot")
    return path


def test_the_cli_flags_a_draft_named_like_a_skill_or_a_catalog_skill(
    db: Path,
    tty: list[str],  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "holdings" in skill_names()
    assert main(db, "list") == 0
    listed = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert listed["cornpare-funds"].endswith("!! looks like compare-funds (live)")
    assert listed["h0ldings"].endswith("!! looks like holdings (catalog)")
    assert "looks like" not in listed["unlike-any"] + listed["compare-funds"]
    assert main(db, "show", "cornpare-funds") == 0
    note = (
        "!! the name 'cornpare-funds' looks like compare-funds (live): an agent may have "
        "named it to pass for that one; check it is the skill you mean before you publish"
    )
    assert note in capsys.readouterr().out
    assert main(db, "show", "compare-funds") == 0  # a live skill is not flagged
    assert "looks like" not in capsys.readouterr().out
    tty.extend(["s", "s", "s"])
    assert main(db, "review") == 0
    out = capsys.readouterr().out
    assert note in out and "'h0ldings' looks like holdings (catalog)" in out


def test_the_dashboard_flags_it_in_the_list_and_above_publish(db: Path, tmp_path: Path) -> None:
    from kite_skills.dashboard.app import build_app
    from kite_skills.dashboard.security import Door

    door = Door(8123)
    with (
        Store.open(db) as store,
        TestClient(
            build_app(store, door), base_url="http://127.0.0.1:8123", follow_redirects=False
        ) as client,
    ):
        assert client.get(f"/skills?token={door.issue()}").status_code == 303
        index = client.get("/skills").text
        rows = {
            re.search(r'href="/skills/([a-z0-9-]+)"', row).group(1): row  # type: ignore[union-attr]
            for row in index.split('<tr class="waiting-row">')[1:]
        }
        assert "looks like <code>compare-funds</code> (live)" in rows["cornpare-funds"]
        assert "looks like <code>holdings</code> (catalog)" in rows["h0ldings"]
        assert "looks like" not in rows["unlike-any"]
        page = client.get("/skills/cornpare-funds").text
        warning = page.index('id="looks-like"')
        assert warning < page.index('id="publish"')
        assert "looks like <code>compare-funds</code> (live)" in page[warning:]
        assert 'id="looks-like"' not in client.get("/skills/unlike-any").text
