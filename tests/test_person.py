"""Who the person is, for the audit log of the CLI and the dashboard."""

from __future__ import annotations

import pytest

from kite_skills.person import login_name


def test_login_name_is_the_login(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGNAME", "asha")
    assert login_name("cli") == "asha"
