"""Search and listing: only live skills, ranked, and safe for any text a user types."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from kite_skills.errors import SkillNotLive, UnknownSkill
from kite_skills.store import Store, agent, human
from kite_skills.store._sql import fts_phrases

from .helpers import BODY, archived, draft, live

HOSTILE = [
    '"unbalanced',
    "a*",
    "-x",
    "(",
    ")",
    "AND OR NOT",
    "NEAR(",
    "NEAR(a b",
    'x"y',
    '""',
    '"',
    "*",
    "^",
    ":",
    "name:fund",
    "{name}: fund",
    "fund OR",
    "NOT fund",
    "+",
    "'",
    "\\",
    "%",
    "_",
    "a AND (b OR",
    "   ",
    "",
    "\t\n",
    "🙂",
    "fund*",
    "col:",
]  # NUL is refused with its own message: tests/store/test_search_nul.py


@pytest.fixture
def funds(store: Store) -> Store:
    live(
        store,
        "compare-funds",
        description="How I compare two mutual funds",
        body="Check the expense ratio and the rolling returns.",
    )
    live(
        store,
        "position-check",
        description="What I check before opening a position",
        body="Confirm the margin; never buy a fund on a Friday.",
    )
    live(
        store,
        "daily-review",
        description="Morning routine",
        body="Look at holdings, then orders. A fund can appear here too.",
    )
    return store


@pytest.mark.parametrize("q", HOSTILE)
def test_any_text_is_accepted(funds: Store, q: str) -> None:
    results = funds.search(q)
    assert isinstance(results, list)


def test_operators_are_searched_as_words(store: Store) -> None:
    live(store, "logic-gates", description="AND OR NOT gates", body="near the NEAR keyword")
    live(store, "other", description="something", body="unrelated text")
    assert [s.name for s in store.search("AND OR NOT")] == ["logic-gates"]
    assert [s.name for s in store.search("NEAR(")] == ["logic-gates"]
    assert [s.name for s in store.search('"unbalanced')] == []


def test_fts_phrases_quote_every_word() -> None:
    assert fts_phrases('say "hi" AND-NOT (x') == ['"say"', '"""hi"""', '"AND-NOT"', '"(x"']
    assert fts_phrases("NEAR( compa") == ['"NEAR("', '"compa"*']
    assert fts_phrases("fund ab") == ['"fund"', '"ab"']  # short last words are not prefixes
    assert fts_phrases("fund FUND fund") == ['"fund"', '"FUND"', '"fund"*']
    assert fts_phrases("a a") == ['"a"']  # duplicates dropped
    assert fts_phrases("  ") == []
    assert fts_phrases('" ( * -') == []


def test_blank_query_lists_live_skills(funds: Store) -> None:
    assert funds.search("") == funds.list_live()
    assert funds.search(" \t\n ", limit=2) == funds.list_live(2)
    assert [s.name for s in funds.search("")] == ["compare-funds", "daily-review", "position-check"]


def test_symbol_only_query_returns_nothing(funds: Store) -> None:
    assert funds.search("( * -") == []


def test_ranking_prefers_name_then_description_then_body(funds: Store) -> None:
    names = [s.name for s in funds.search("fund")]
    assert names[0] == "compare-funds"
    assert set(names) == {"compare-funds", "position-check", "daily-review"}


def test_description_hit_beats_body_hit(store: Store) -> None:
    live(store, "aaa-body", description="Unrelated words", body="margin " + "filler " * 30)
    live(store, "zzz-desc", description="Check the margin first", body="filler " * 30)
    assert [s.name for s in store.search("margin")] == ["zzz-desc", "aaa-body"]


def test_last_word_matches_as_a_prefix(funds: Store) -> None:
    assert [s.name for s in funds.search("compa")] == ["compare-funds"]
    assert [s.name for s in funds.search("expense rat")] == ["compare-funds"]
    assert [s.name for s in funds.search("routi two")] == ["compare-funds"]  # only the last
    assert "daily-review" in [s.name for s in funds.search("two routi")]  # word is a prefix
    assert funds.search("co") == []  # and only from 3 characters on


def test_any_word_matches_and_more_words_rank_first(funds: Store) -> None:
    assert [s.name for s in funds.search("margin friday")] == ["position-check"]
    # OR: each skill with either word, the one with both (and the rarer one) first
    assert [s.name for s in funds.search("margin holdings")] == ["daily-review", "position-check"]
    assert funds.search("margin friday holdings")[0].name == "position-check"


def test_words_are_stemmed(funds: Store) -> None:
    assert [s.name for s in funds.search("comparing")] == ["compare-funds"]
    assert [s.name for s in funds.search("confirmed margins")] == ["position-check"]
    assert funds.search("expenses ratios")[0].name == "compare-funds"


def test_mutual_fund_comparison_finds_compare_two_mutual_funds(store: Store) -> None:
    live(store, "side-by-side", description="Compare two mutual funds side by side", body="x")
    live(store, "other", description="Place a bracket order", body="Check the margin first.")
    assert [s.name for s in store.search("mutual fund comparison")] == ["side-by-side"]


def test_results_are_summaries_without_bodies(funds: Store) -> None:
    hit = funds.search("expense")[0]
    assert hit == type(hit)("compare-funds", "How I compare two mutual funds")
    assert not hasattr(hit, "body")


def test_limit(funds: Store) -> None:
    assert len(funds.search("fund", limit=2)) == 2
    assert [s.name for s in funds.list_live(2)] == ["compare-funds", "daily-review"]


def test_drafts_and_archived_never_show(store: Store) -> None:
    live(store, "live-fund", description="fund live")
    draft(store, "draft-fund", description="fund draft")
    archived(store, "archived-fund", description="fund archived")
    live(store, "back-to-draft", description="fund moved back")
    human.move_to_draft(store, "back-to-draft", via="cli", who="alice")
    assert [s.name for s in store.search("fund")] == ["live-fund"]
    assert [s.name for s in store.search("draft")] == []
    assert [s.name for s in store.list_live()] == ["live-fund"]
    with pytest.raises(SkillNotLive) as info:
        store.read_live("draft-fund")
    assert (info.value.status, str(info.value)) == (
        "draft",
        "'draft-fund' is a draft, not live: a person must publish it first — ask the person "
        "to open their kite-skills dashboard (they can start it with: kite-skills dashboard) "
        "and publish 'draft-fund' there",
    )
    with pytest.raises(SkillNotLive) as info:
        store.read_live("archived-fund")
    assert (info.value.status, str(info.value)) == (
        "archived",
        "'archived-fund' is archived (taken out of service), not live: it can be put back "
        "with skillPublish",
    )
    with pytest.raises(SkillNotLive, match="a person must publish it first"):
        store.read_live("back-to-draft")
    with pytest.raises(UnknownSkill) as unknown:
        store.read_live("nothing-here")
    assert str(unknown.value) == (
        "no live skill named 'nothing-here'; find one with the skills tool"
    )


def test_proposed_text_is_not_searchable(store: Store) -> None:
    from kite_skills.store import agent

    live(store, "compare-funds")
    agent.save(store, "compare-funds", "platypus", "platypus body", who="bot")
    assert store.search("platypus") == []
    assert store.read_live("compare-funds").body != "platypus body"


def test_list_live_is_sorted_by_name(store: Store) -> None:
    for name in ("zeta", "alpha", "mid-one"):
        live(store, name)
    assert [s.name for s in store.list_live()] == ["alpha", "mid-one", "zeta"]


def test_index_stays_consistent(store: Store) -> None:
    live(store, "a-skill")
    human.edit(
        store,
        "a-skill",
        rev=store.get("a-skill").revision,
        body="changed words",
        via="cli",
        who="al",
    )
    human.delete(store, "a-skill", via="cli", who="al")
    draft(store, "b-skill")
    assert store.integrity_check() == []


def test_a_name_match_ranks_above_description_and_body_matches(store: Store) -> None:
    """What a user relies on: the skill *named* for what they typed comes first, even when
    other skills say the word more often in their description or text, and even when its
    name sorts last. (Issue 9 §5: holds whatever the query semantics or tokenizer.)"""
    live(
        store,
        "aaa-in-body",
        description="Weekly portfolio routine",
        body="Rebalance when drift is large. Rebalance again after a rebalance fails.\n" * 3,
    )
    live(
        store,
        "bbb-in-description",
        description="Rebalance the rebalance band: when to rebalance",
        body="Look at the weights.",
    )
    live(store, "zzz-rebalance", description="Quarterly routine", body="Look at the weights.")
    live(store, "unrelated", description="Something else", body="Nothing to see.")
    names = [s.name for s in store.search("rebalance")]
    assert names[0] == "zzz-rebalance", names
    assert set(names) == {"zzz-rebalance", "bbb-in-description", "aaa-in-body"}


def _found(store: Store, queries: list[str]) -> list[list[str]]:
    return [[s.name for s in store.search(q, limit=20)] for q in queries]


def test_drafts_never_change_what_agents_find(store: Store) -> None:
    """Issue 24: 520 agent drafts holding a person's words made the person's live skill
    unfindable (the drafts filled each word's bounded candidate set of newest skills, then
    were filtered out as not live). Drafts, and skills taken out of service, are not in the
    search index at all: they change neither the candidates nor the ranking."""
    live(store, "compare-funds", description="How I compare two mutual funds", body=BODY)
    live(store, "margin-check", description="Check the margin before a fund order", body="x")
    live(store, "sip-setup", description="Start a monthly fund SIP", body="Pick the date.")
    queries = ["compare mutual funds", "fund", "margin", "monthly sip", "check", "expense"]
    before = _found(store, queries)
    assert before[0][0] == "compare-funds"
    for i in range(520):
        agent.save(
            store,
            f"flood-{i:03d}",
            "How I compare two mutual funds; check the margin monthly",
            f"{BODY}\nfund fund margin expense {i}\n",
            who="flooding-agent 1.0",
        )
    archived(store, "old-fund", description="How I compare two mutual funds", body=BODY)
    assert _found(store, queries) == before
    # ...and once a person takes a draft into service, it is found like any live skill
    human.publish(store, "flood-007", rev=store.get("flood-007").revision, via="cli", who="alice")
    assert "flood-007" in _found(store, ["compare mutual funds"])[0]
    human.move_to_draft(store, "flood-007", via="cli", who="alice")
    assert _found(store, queries) == before
    assert store.integrity_check() == []


def _indexed(store: Store) -> set[str]:
    """The names of the skills in the search index, read from its own row-size table (a
    query on the index itself reads the text through the view); the FTS5 check against its
    content table must pass too."""
    with closing(sqlite3.connect(store.path)) as conn:
        conn.execute("INSERT INTO skills_fts (skills_fts, rank) VALUES ('integrity-check', 1)")
        rows = conn.execute(
            "SELECT s.name FROM skills_fts_docsize AS d JOIN skills AS s ON s.id = d.id"
        ).fetchall()
    return {name for (name,) in rows}


def test_the_index_holds_exactly_the_live_skills(store: Store) -> None:
    live(store, "alpha", description="Alpha fund")
    draft(store, "beta", description="Beta fund")
    assert _indexed(store) == {"alpha"}
    human.publish(store, "beta", rev=store.get("beta").revision, via="cli", who="al")
    assert _indexed(store) == {"alpha", "beta"}
    agent.save(store, "alpha", "Proposed words", "Proposed body", who="bot")
    assert _indexed(store) == {"alpha", "beta"} and store.search("proposed") == []
    proposed = store.get("alpha").proposed
    assert proposed is not None
    human.accept_revision(store, "alpha", rev=proposed.revision, via="cli", who="al")
    assert [s.name for s in store.search("proposed")] == ["alpha"]
    human.archive(store, "alpha", via="cli", who="al")
    human.edit(
        store, "alpha", rev=store.get("alpha").revision, body="Archived words", via="cli", who="al"
    )
    assert _indexed(store) == {"beta"} and store.search("archived") == []
    human.restore(store, "alpha", via="cli", who="al")
    assert [s.name for s in store.search("archived")] == ["alpha"]
    human.move_to_draft(store, "beta", via="cli", who="al")
    human.delete(store, "alpha", via="cli", who="al")
    assert _indexed(store) == set()
    assert store.integrity_check() == []
