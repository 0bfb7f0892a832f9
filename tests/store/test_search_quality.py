"""Search finds what a person means: precision@3 of ten realistic queries over 50 skills, the
stemming migration, and the bounded candidate set behind the speed at 100,000 skills."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from kite_skills.store import Store, _search, _sql, agent, human
from kite_skills.store.db import migrations

from .helpers import counts, live

FIXTURE = Path(__file__).parent.parent / "data" / "search_skills.json"

# query → the skills a person asking it wants to see, and the precision@3 the search reaches
# (the share of the top 3 that are wanted, out of at most 3). Misses, for the record:
# "compare mutual funds" and "mutual fund comparison" put fund-redeem (mutual funds, not a
# comparison) in the top 3 (first, for the latter: porter leaves "comparison" unstemmed);
# "price alerts" puts morning-briefing ("today's alerts") there; and "login error" cannot
# find api-session-expired, which shares no word with it.
QUERIES: dict[str, tuple[set[str], float]] = {
    "compare mutual funds": (
        {"compare-funds", "fund-expense-check", "elss-tax-saving", "fund-switch"},
        2 / 3,
    ),
    "mutual fund comparison": (
        {"compare-funds", "fund-expense-check", "elss-tax-saving", "fund-switch"},
        2 / 3,
    ),
    "stop loss": ({"stop-loss-order", "bracket-order"}, 1.0),
    "how much margin do I have": ({"margin-check", "margin-pledge", "rejected-order"}, 1.0),
    "sip": ({"sip-setup", "sip-pause"}, 1.0),
    "tax report for filing": ({"tax-pnl-report", "tax-harvest", "elss-tax-saving"}, 1.0),
    "order rejected": ({"rejected-order", "order-reconcile", "place-market-order"}, 1.0),
    "price alerts": ({"price-alert", "gtt-setup", "gtt-audit"}, 2 / 3),
    "rebalancing my portfolio": (
        {"rebalance-portfolio", "portfolio-review", "concentration-check"},
        1.0,
    ),
    "login error": ({"login-trouble", "api-session-expired"}, 1 / 2),
}


@pytest.fixture
def fifty(store: Store) -> Store:
    skills = [tuple(row) for row in json.loads(FIXTURE.read_text(encoding="utf-8"))]
    assert len(skills) == 50
    human.import_skills(store, skills, via="cli", who="test")
    return store


def precision_at_3(found: list[str], wanted: set[str]) -> float:
    return len(set(found[:3]) & wanted) / min(3, len(wanted))


@pytest.mark.parametrize("q", sorted(QUERIES))
def test_precision_at_3(fifty: Store, q: str) -> None:
    wanted, floor = QUERIES[q]
    found = [s.name for s in fifty.search(q, 10)]
    assert precision_at_3(found, wanted) == 1.0 or floor < 1.0, found
    assert precision_at_3(found, wanted) >= floor - 1e-9, found


def test_mean_precision_at_3(fifty: Store) -> None:
    scores = [precision_at_3([s.name for s in fifty.search(q)], w) for q, (w, _) in QUERIES.items()]
    assert sum(scores) / len(scores) >= 0.85


def test_name_match_ranks_first(fifty: Store) -> None:
    assert fifty.search("sip")[0].name in {"sip-setup", "sip-pause"}
    assert fifty.search("gtt audit")[0].name == "gtt-audit"
    assert fifty.search("contract note charges")[0].name == "contract-note"


def test_migration_rebuilds_the_index_and_keeps_every_row(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    first = migrations()[0]
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);"
            + first[1]
            + "INSERT INTO schema_version VALUES (1, '2026-01-01T00:00:00.000000Z');"
            "INSERT INTO skills (name, description, body, status, created_at, updated_at,"
            " published_at) VALUES"
            " ('compare-funds', 'Compare two mutual funds side by side', 'x', 'live',"
            "  't', 't', 't'),"
            " ('a-draft', 'Mutual funds draft', 'y', 'draft', 't', 't', NULL);"
        )
        before = conn.execute("SELECT * FROM skills ORDER BY id").fetchall()
        # version 1 has no stemming: 'fund' does not find 'funds'
        assert (
            conn.execute(
                "SELECT rowid FROM skills_fts WHERE skills_fts MATCH '\"fund\"'"
            ).fetchall()
            == []
        )
    with Store.open(path) as store:
        assert [s.name for s in store.search("mutual fund comparison")] == ["compare-funds"]
        assert store.integrity_check() == []
    with closing(sqlite3.connect(path)) as conn:
        after = conn.execute("SELECT * FROM skills ORDER BY id").fetchall()
        assert [row[: len(before[0])] for row in after] == before  # later columns are new
        assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] >= 2
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'skills_fts'").fetchone()
        assert "porter unicode61" in sql[0]
        # only the live skill is in the index (migration 0005): the draft is not a candidate
        assert conn.execute("SELECT id FROM skills_fts_docsize").fetchall() == [(1,)]
    assert counts(path) == (2, 0)


def test_index_follows_edits_after_the_migration(store: Store) -> None:
    live(store, "alpha", description="Rebalancing the portfolio", body="x")
    human.edit(
        store,
        "alpha",
        rev=store.get("alpha").revision,
        description="Watching dividends",
        via="cli",
        who="al",
    )
    assert store.search("rebalance") == []
    assert [s.name for s in store.search("dividend")] == ["alpha"]
    assert store.integrity_check() == []


def test_bounded_candidates_rank_like_bm25_over_everything(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below the bound the ranking is exactly FTS5's own bm25 over the OR of the words."""
    skills = [
        (f"skill-{i:02d}", f"check {'margin ' * (i % 4)}note {i}", "review " * (i % 7) + "end")
        for i in range(40)
    ]
    human.import_skills(store, skills, via="cli", who="test")
    with closing(sqlite3.connect(store.path)) as conn:
        exact = [
            row[0]
            for row in conn.execute(
                "SELECT s.name FROM skills_fts JOIN skills AS s ON s.id = skills_fts.rowid"
                ' WHERE skills_fts MATCH \'"margin" OR "review"*\''
                " ORDER BY bm25(skills_fts, 10.0, 4.0, 1.0), s.name LIMIT 20"
            )
        ]
    assert [s.name for s in store.search("margin review")] == exact


def test_a_word_in_more_skills_than_the_bound_ranks_only_its_newest(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "PER_PHRASE", 5)
    skills = [(f"common-{i:02d}", f"check step {i}", "check") for i in range(12)]
    skills.append(("rare-one", "check the zymurgy", "check"))
    human.import_skills(store, skills, via="cli", who="test")
    # the rare word is scored wherever it occurs, however common the other word is
    assert store.search("check zymurgy")[0].name == "rare-one"
    # the common word alone: it is in every skill, so only its 2 newest are candidates
    monkeypatch.setattr(_search, "NEAR_EVERY_SKILL", 2)
    assert {s.name for s in store.search("check")} == {"rare-one", "common-11"}


def test_a_word_in_fewer_than_half_the_skills_keeps_its_newest_bound(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "PER_PHRASE", 5)
    monkeypatch.setattr(_search, "NEAR_EVERY_SKILL", 2)
    skills = [
        (f"skill-{i:02d}", "margin first" if i % 3 == 0 else "other words", "x") for i in range(30)
    ]
    human.import_skills(store, skills, via="cli", who="test")
    found = {s.name for s in store.search("margin")}
    assert found == {"skill-27", "skill-24", "skill-21", "skill-18", "skill-15"}


def test_drafts_between_live_skills_never_change_a_common_words_candidates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How dense a word is among the newest skills is counted in the index (live skills), not
    in row ids: drafts saved between a person's skills (or deleted skills) once made a word in
    every live skill look sparse, and its candidates grew from the newest 2 to the newest 5."""
    monkeypatch.setattr(_search, "PER_PHRASE", 5)
    monkeypatch.setattr(_search, "NEAR_EVERY_SKILL", 2)
    found = []
    for with_drafts in (False, True):
        with Store.open(tmp_path / f"drafts-{with_drafts}.db") as store:
            for i in range(12):
                live(store, f"skill-{i:02d}", description=f"check {'check ' * (i % 3)}", body="x")
                for k in range(2 if with_drafts else 0):
                    agent.save(store, f"draft-{i:02d}-{k}", "A draft", "No match here", who="bot")
            found.append([s.name for s in store.search("check")])
    assert found[0] == found[1] == ["skill-11", "skill-10"], found


def test_the_last_word_is_a_prefix_only_until_it_is_a_whole_word(store: Store) -> None:
    live(store, "plain", description="One fund", body="x")
    live(store, "longer", description="Fundamentals", body="x")
    assert [s.name for s in store.search("fund")] == ["plain"]
    assert [s.name for s in store.search("funda")] == ["longer"]


def test_live_versions_names_each_live_skill_with_its_update_time(store: Store) -> None:
    live(store, "alpha")
    live(store, "beta")
    human.archive(store, "beta", via="cli", who="al")
    versions = store.live_versions()
    assert versions == {"alpha": store.get("alpha").updated_at}
    human.edit(
        store, "alpha", rev=store.get("alpha").revision, body="new text", via="cli", who="al"
    )
    assert store.live_versions()["alpha"] == store.get("alpha").updated_at != versions["alpha"]
    with closing(sqlite3.connect(store.path)) as conn:
        plan = conn.execute("EXPLAIN QUERY PLAN " + _sql.LIVE_VERSIONS).fetchall()
    assert "COVERING INDEX skills_status_name_updated" in plan[0][3]


def test_more_than_a_batch_of_equal_scores_is_settled_by_name(store: Store) -> None:
    """120 skills score exactly alike; the 100 that come back are the first 100 by name,
    not the newest 100 (the candidates are scored newest first, so the two differ)."""
    names = [f"skill-{i:03d}" for i in range(120)]
    human.import_skills(
        store,
        [(n, f"Procedure {n}", f"# {n}\nShared word zebra.\n") for n in names],
        via="cli",
        who="t",
    )
    with closing(sqlite3.connect(store.path)) as conn:
        scores = conn.execute(
            f"SELECT bm25(skills_fts, {_sql.BM25_WEIGHTS}) FROM skills_fts"
            " WHERE skills_fts MATCH 'zebra'"
        ).fetchall()
    assert len(scores) == 120 and len(set(scores)) == 1  # a true 120-way tie
    assert [s.name for s in store.search("zebra", limit=100)] == names[:100]
    assert [s.name for s in store.search("zebra", limit=7)] == names[:7]


def test_the_bounded_search_reads_one_batch_when_the_rest_scores_worse(store: Store) -> None:
    """250 candidates: 100 with the word in their name, 150 only in their body. The best
    100 fill the first batch of names looked up, and every candidate after them scores
    worse than the limit-th one kept, so no other batch is read (counted on a real
    connection's statement trace)."""
    named = [(f"zebra-{i:03d}", f"Procedure {i}", "Steps.\n") for i in range(100)]
    bodied = [(f"other-{i:03d}", f"Procedure {i}", "Mentions a zebra.\n") for i in range(150)]
    unrelated = [(f"plain-{i:03d}", f"Procedure {i}", "Steps.\n") for i in range(300)]
    human.import_skills(store, bodied + named + unrelated, via="cli", who="t")
    lookups = _sql.LIVE_AMONG.split("?")[0]
    statements: list[str] = []
    with closing(sqlite3.connect(store.path)) as conn:
        conn.set_trace_callback(statements.append)
        found = _search.ranked(conn, _sql.fts_phrases("zebra"), 5)
        candidates = conn.execute(
            "SELECT count(*) FROM skills_fts WHERE skills_fts MATCH '\"zebra\"'"
        ).fetchone()[0]
    assert candidates == 250 > _search._BATCH
    assert [name for name, _ in found] == [f"zebra-{i:03d}" for i in range(5)]
    batches = [s for s in statements if s.startswith(lookups)]
    assert len(batches) == 1, f"{len(batches)} batches read"
