"""``kite-skills calc MODE [JSON]``: the tool's modes in a terminal, fields as an argument or
on stdin, the answer for reading or as JSON, and every problem on stderr with exit 1."""

from __future__ import annotations

import io
import json

import pytest

from kite_skills.cli import main

SPLIT = '{"quantity": 4000, "lot_size": 65, "freeze_quantity": 1800}'


def test_the_answer_is_printed_for_reading(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "lots", SPLIT]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:3] == [
        "calc lots",
        "4000 units -> 61 lots of 65 = 3965 units",
        "3 orders above the freeze quantity 1800: 1755 + 1755 + 455",
    ]
    assert "rounded down (never up unless asked)" in out


def test_json_on_stdin_and_json_out(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(SPLIT))
    assert main(["calc", "lots", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["mode"] == "lots" and answer["result"]["slices"] == [1755, 1755, 455]


def test_every_problem_goes_to_stderr_with_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "tick", '{"price": "1500", "purpose": "buy"}']) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0] == "kite-skills: error: calc tick: 3 problems:"
    assert [line.split("`")[1] for line in lines[1:]] == ["price", "tick_size", "purpose"]
    assert main(["calc", "tick", "{price"]) == 1
    assert "fields: not JSON" in capsys.readouterr().err
    assert main(["calc", "tick", "[1]"]) == 1
    assert "send a JSON object" in capsys.readouterr().err


def test_an_unknown_mode_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["calc", "margin", "{}"])
    assert exited.value.code == 2
    assert "invalid choice: 'margin'" in capsys.readouterr().err
