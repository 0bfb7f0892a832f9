"""Bad input to the user-skill tools, on the wire: always a clear tool error (``isError``),
never a protocol error or an SQL error, and nothing written to the store file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kite_skills.store import Store, human

from .harness import RawPeer

GOOD = {"name": "compare-funds", "description": "Compare two funds", "body": "# Steps\n1. Look.\n"}
TEN_MB = "x" * (10 * 1024 * 1024)
SQL_WORDS = ("sqlite", "syntax error", "fts5", "operationalerror", "traceback", "malformed match")

BAD_SAVES: list[tuple[str, dict[str, Any], str]] = [
    ("space in name", {**GOOD, "name": "Foo Bar"}, "name"),
    ("path in name", {**GOOD, "name": "../x"}, "name"),
    ("empty name", {**GOOD, "name": ""}, "name"),
    ("name too long", {**GOOD, "name": "a" * 65}, "name"),
    ("double hyphen", {**GOOD, "name": "a--b"}, "name"),
    ("upper case", {**GOOD, "name": "Compare"}, "name"),
    ("empty body", {**GOOD, "body": ""}, "body"),
    ("blank body", {**GOOD, "body": " \n\t\n"}, "body"),
    ("body over 64 KiB", {**GOOD, "body": "x" * (64 * 1024 + 1)}, "64 KiB"),
    ("body over 64 KiB of UTF-8", {**GOOD, "body": "é" * 40_000}, "64 KiB"),
    ("NUL in body", {**GOOD, "body": "a\x00b"}, "NUL"),
    ("empty description", {**GOOD, "description": "  "}, "description"),
    ("two-line description", {**GOOD, "description": "one\ntwo"}, "line"),
    ("description too long", {**GOOD, "description": "d" * 1025}, "description"),
    ("10 MB body", {**GOOD, "body": TEN_MB}, "body"),
    ("10 MB name", {**GOOD, "name": TEN_MB}, "name"),
    ("10 MB description", {**GOOD, "description": TEN_MB}, "description"),
    ("name not a string", {**GOOD, "name": 5}, "name"),
    ("body not a string", {**GOOD, "body": ["# Steps"]}, "body"),
    ("null description", {**GOOD, "description": None}, "description"),
    ("no fields", {}, "required"),
    ("missing body", {"name": "compare-funds", "description": "d"}, "body"),
    ("extra field", {**GOOD, "status": "live"}, "status"),
    ("sneaky published_at", {**GOOD, "published_at": "2026-01-01"}, "published_at"),
]

BAD_OTHERS: list[tuple[str, dict[str, Any], str]] = [
    ("skillRead", {"name": "../x"}, "name"),
    ("skillRead", {"name": "Foo Bar"}, "name"),
    ("skillRead", {"name": ""}, "name"),
    ("skillRead", {"name": TEN_MB}, "name"),
    ("skillRead", {}, "name"),
    ("skillRead", {"name": "compare-funds", "extra": 1}, "extra"),
    ("skillRead", {"name": 7}, "name"),
    ("skillPublish", {"name": "../x"}, "name"),
    ("skillPublish", {}, "name"),
    ("skillUnpublish", {"name": "Foo Bar"}, "name"),
    ("skillUnpublish", {"name": ["a"]}, "name"),
    ("skills", {"limit": 0}, "limit"),
    ("skills", {"limit": 101}, "limit"),
    ("skills", {"limit": "5"}, "limit"),
    ("skills", {"limit": True}, "limit"),
    ("skills", {"q": 5}, "q"),
    ("skills", {"q": "x" * 1001}, "1000"),
    ("skills", {"q": TEN_MB}, "search text"),
    ("skills", {"query": "funds"}, "query"),
    ("skills", {"q": "fund\x00s"}, "NUL"),
    ("skills", {"q": "\x00"}, "NUL"),
]

FTS_QUERIES = [
    "a*",
    "((",
    '"unbalanced',
    "NEAR(",
    "-x",
    "compare*",
    "name:compare",
    "compare AND OR NOT",
    "^funds",
    "funds)",
    '""',
    "*",
    "-",
    "{compare funds}",
    "compare + funds",
    "'; DROP TABLE skills; --",
    "ñandú 基金",
]  # NUL is refused with its own message: tests/server/test_faults.py


def _counts(db: Path) -> tuple[int, int]:
    with sqlite3.connect(db) as conn:
        skills = conn.execute("SELECT COUNT(*) FROM skills").fetchone()[0]
        audit = conn.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0]
    return skills, audit


@pytest.fixture(params=["legacy", "modern"])
def peer(request: pytest.FixtureRequest, raw: RawPeer) -> Iterator[Any]:
    """A raw peer in one era: ``call(tool, arguments)`` returns the JSON-RPC reply."""
    if request.param == "legacy":
        raw.initialize({})

        def call(name: str, arguments: Any) -> dict[str, Any]:
            return raw.request("tools/call", {"name": name, "arguments": arguments})
    else:

        def call(name: str, arguments: Any) -> dict[str, Any]:
            return raw.modern("tools/call", {"name": name, "arguments": arguments})

    yield call
    code, err = raw.close()
    assert code == 0, err
    assert "Traceback" not in err, err


def _tool_error(reply: dict[str, Any]) -> str:
    assert "error" not in reply, reply["error"]  # never a protocol error
    result = reply["result"]
    assert result.get("isError") is True, result
    text = " ".join(c["text"] for c in result["content"] if c["type"] == "text")
    assert text, result
    assert len(text) < 2000, text[:300]  # a 10 MB argument is never echoed back
    assert not any(w in text.lower() for w in SQL_WORDS), text
    assert "internal error" not in text, text
    return text


def test_bad_input_is_a_tool_error_and_writes_nothing(peer: Any, db: Path) -> None:
    for label, arguments, hint in BAD_SAVES:
        text = _tool_error(peer("skillSave", arguments))
        assert hint.lower() in text.lower(), (label, text)
    for name, arguments, hint in BAD_OTHERS:
        text = _tool_error(peer(name, arguments))
        assert hint.lower() in text.lower(), (
            name,
            arguments if len(str(arguments)) < 99 else "…",
            text,
        )
    for arguments in (["a", "b"], "compare-funds", 5):
        # Not an object at all breaks tools/call's own params schema: the SDK answers -32602
        # before any tool runs (a protocol error is right here; nothing reaches the store).
        reply = peer("skillSave", arguments)
        assert reply.get("error", {}).get("code") == -32602, reply
    assert _counts(db) == (0, 0)
    with Store.open(db) as store:
        assert store.integrity_check() == []


def test_a_good_save_after_bad_ones_still_works(peer: Any, db: Path) -> None:
    _tool_error(peer("skillSave", {**GOOD, "body": TEN_MB}))
    reply = peer("skillSave", GOOD)
    assert reply["result"].get("isError") is not True, reply
    assert reply["result"]["structuredContent"]["status"] == "draft"
    assert _counts(db) == (1, 1)


def test_fts_syntax_in_q_is_searched_literally_never_an_error(raw: RawPeer, db: Path) -> None:
    with Store.open(db) as store:
        human.import_skills(
            store,
            [
                ("compare-funds", "Compare two funds", "# Compare\nLook at the expense ratio.\n"),
                ("exit-checks", "Before I sell", "# Exit\nCheck the tax lot first.\n"),
            ],
            via="cli",
            who="pat",
        )
    before = _counts(db)
    raw.initialize({})
    for q in FTS_QUERIES:
        reply = raw.request("tools/call", {"name": "skills", "arguments": {"q": q}})
        assert "error" not in reply, (q, reply)
        result = reply["result"]
        assert result.get("isError") is not True, (q, result)
        text = result["content"][0]["text"]
        assert not any(w in text.lower() for w in SQL_WORDS), (q, text)
        names = [s["name"] for s in result["structuredContent"]["skills"]]
        assert set(names) <= {"compare-funds", "exit-checks"}, (q, names)
        if q in ("compare*", "compare + funds", "{compare funds}"):
            assert "compare-funds" in names, (q, names)
        for s in result["structuredContent"]["skills"]:
            assert set(s) == {"name", "description"}  # never the body
    code, err = raw.close()
    assert code == 0 and "Traceback" not in err, err
    assert _counts(db) == before
