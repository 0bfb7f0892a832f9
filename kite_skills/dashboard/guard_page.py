"""The Guard page (issue 44 §3): today's writes through ``kite-skills guard`` and what it
decided, the person's limits (edited here or with ``kite-skills guard limits``) and the kill
switch. Behind the same door as /skills (loopback, sign-in token, CSRF, Host and Origin
checks: :func:`.security.guard`); every change is a POST carrying the session's CSRF token.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from kite_skills.guard import journal, limits

from .pages import Pages, person

REFUSED = frozenset({"refuse", "fail-closed", "asked-declined", "asked-cancelled"})


@dataclass(frozen=True)
class GuardFiles:
    """The guard's limits file and journal that this dashboard shows."""

    limits: Path
    journal: Path

    @classmethod
    def default(cls) -> GuardFiles:
        return cls(limits.default_path(os.environ), journal.default_path(os.environ))


def show(dashboard: Pages, files: GuardFiles, request: Request) -> Response:
    """GET ``/skills/guard``: the kill switch, today's writes and refusals, and the limits."""
    return _page(dashboard, files, request, problem=None)


def _page(dashboard: Pages, files: GuardFiles, request: Request, problem: str | None) -> Response:
    current = limits.load(files.limits)
    today = journal.on_day(files.journal, datetime.now().astimezone())
    rows = [
        (
            r.setting,
            limits.in_words(current, r.setting),
            limits.as_text(current, r.setting),
            r.checks,
        )
        for r in limits.RULES
        if r.setting != "kill_switch"
    ] + [
        (name, limits.in_words(current, name), limits.as_text(current, name), checks)
        for name, checks in limits.EXTRA
    ]
    return dashboard.page(
        request,
        "guard.html",
        status=400 if problem else 200,
        switch=current.kill_switch,
        rows=rows,
        writes=list(reversed(today)),
        refused=sum(1 for e in today if e.get("decision") in REFUSED),
        limits_path=str(files.limits),
        journal_path=str(files.journal),
        problem=problem,
    )


def save(dashboard: Pages, files: GuardFiles, request: Request) -> Response:
    """POST ``/skills/guard/limits``: every setting in the form, all or none."""
    form = dashboard.form(request)
    changed = current = limits.load(files.limits)
    try:
        for setting in limits.settings():
            if setting in form and form[setting] != limits.as_text(current, setting):
                changed = limits.with_setting(changed, setting, form[setting])
    except limits.LimitsError as exc:
        return _page(dashboard, files, request, problem=f"{exc}; nothing changed")
    if changed == current:
        return dashboard.done(request, "No limit changed", "/skills/guard")
    limits.save(files.limits, changed)
    return dashboard.done(
        request, "Limits saved; the guard applies them to the next write", "/skills/guard"
    )


def kill(dashboard: Pages, files: GuardFiles, request: Request) -> Response:
    """POST ``/skills/guard/kill``: the kill switch on, with the person's reason."""
    form = dashboard.form(request)
    reason = form.get("reason", "").strip()
    if not reason:
        return _page(dashboard, files, request, problem="say why the kill switch is on")
    switch = limits.KillSwitch(
        reason=reason[: limits.MAX_REASON_CHARS],
        by=person(),
        at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    current = limits.load(files.limits)
    limits.save(files.limits, current.model_copy(update={"kill_switch": switch}))
    return dashboard.done(request, "Kill switch on: every write is refused", "/skills/guard")


def resume(dashboard: Pages, files: GuardFiles, request: Request) -> Response:
    """POST ``/skills/guard/resume``: the kill switch off."""
    dashboard.form(request)
    current = limits.load(files.limits)
    limits.save(files.limits, current.model_copy(update={"kill_switch": None}))
    return dashboard.done(
        request, "Kill switch off: writes are judged by your limits again", "/skills/guard"
    )
