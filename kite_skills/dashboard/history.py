"""The review loop's memory on the dashboard (issue 22 §5): a skill's history (every text it
has had, any two compared, an earlier one restored) and the read receipts.

Pages are GET and change nothing; restoring a text and switching read receipts are POSTs
carrying the session's CSRF token (the Origin check is :func:`.security.guard`'s, as for
every form). Both go through the person's desk (:class:`kite_skills.store.desk.PersonDesk`),
audited with ``via="dashboard"``.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from kite_skills.errors import IllegalTransition, InvalidSkill, UnknownSkill
from kite_skills.store import PastText, Skill
from kite_skills.store.lifecycle import Action, person_action_meanings

from . import render
from .pages import Pages, skill_url

CURRENT = "current"


def _text_id(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    if not value.isdigit() or len(value) > 12:
        raise HTTPException(404, f"no text {value[:20]!r} in this history; pick one from the list")
    return int(value)


def _pick(dashboard: Pages, skill: Skill, value: str | None) -> PastText | Skill | None:
    """A text named in the query: a history id, or ``current`` (the skill's text now)."""
    if value == CURRENT:
        return skill
    text_id = _text_id(value)
    if text_id is None:
        return None
    try:
        return dashboard.store.history_text(skill.name, text_id)
    except UnknownSkill as exc:
        raise HTTPException(404, str(exc)) from exc


def _id_of(text: PastText | Skill | None) -> int | str | None:
    """A picked text as the page names it: its history id, ``current``, or None."""
    if text is None:
        return None
    return text.id if isinstance(text, PastText) else CURRENT


def _title(text: PastText | Skill) -> str:
    if isinstance(text, PastText):
        return f"{text.label()}, revision {text.revision}"
    return f"the current text ({text.status}), revision {text.revision}"


def history(dashboard: Pages, request: Request) -> Response:
    """``/skills/{name}/history``: the list; ``?a=ID&b=ID|current`` compares two texts;
    ``?show=ID`` shows one as stored."""
    skill = dashboard.skill_or_404(request.path_params["name"])
    texts = dashboard.store.history(skill.name)
    query = request.query_params
    a, b = _pick(dashboard, skill, query.get("a")), _pick(dashboard, skill, query.get("b"))
    shown = _pick(dashboard, skill, query.get("show"))
    values: dict[str, Any] = {
        "skill": skill,
        "texts": texts,
        "shown": shown,
        "a_id": _id_of(a),
        "b_id": _id_of(b),
        "shown_id": _id_of(shown),
    }
    if a is not None and b is not None:
        values["diff"] = render.diff_lines(a.description, a.body, b.description, b.body)
        values["a_title"], values["b_title"] = _title(a), _title(b)
    if shown is not None:
        values["shown_title"] = _title(shown)
        values["shown_source_html"] = render.source_html(shown.body, "H")
        values["shown_rtl"] = render.rtl_lines(shown.description, shown.body)
    return dashboard.page(request, "history.html", **values)


def restore(dashboard: Pages, request: Request) -> Response:
    """``/skills/{name}/history/{id}/restore``: GET asks the person to confirm, saying what
    restoring that text will do; the confirmation POSTs here and the text becomes the
    skill's text."""
    name = request.path_params["name"]
    skill = dashboard.skill_or_404(name)
    text_id = _text_id(request.path_params["id"])
    if text_id is None:
        raise HTTPException(404, "no text given; pick one from the history")
    if request.method == "GET":
        return _confirm_restore(dashboard, request, skill, text_id)
    form = dashboard.form(request)
    if form.get("confirm") != "yes":
        raise HTTPException(400, "restoring needs the form's confirmation; nothing changed")
    try:
        result = dashboard.desk.revert(name, text_id=text_id)
    except UnknownSkill as exc:
        raise HTTPException(404, str(exc)) from exc
    except (InvalidSkill, IllegalTransition) as exc:
        raise HTTPException(409, str(exc)) from exc
    return dashboard.done(request, result.message, skill_url(name))


def _confirm_restore(dashboard: Pages, request: Request, skill: Skill, text_id: int) -> Response:
    """The question before a restore: which text replaces which, the change as a diff, and
    what it means for agents in the skill's state (the lifecycle table's words)."""
    text = _pick(dashboard, skill, str(text_id))
    assert isinstance(text, PastText)
    meaning = person_action_meanings(skill.status, **skill.facts).get(Action.REVERT, "")
    return dashboard.page(
        request,
        "restore_text.html",
        skill=skill,
        text=text,
        meaning=meaning,
        diff=render.diff_lines(skill.description, skill.body, text.description, text.body),
    )


def reads(dashboard: Pages, request: Request) -> Response:
    """``/skills/reads``: every read receipt kept (skills and catalog recipes), and the switch."""
    return dashboard.page(
        request,
        "reads.html",
        reads=dashboard.store.reads(),
        on=dashboard.store.read_receipts_on(),
    )


def reads_setting(dashboard: Pages, request: Request) -> Response:
    """POST ``/skills/reads/setting``: turn read receipts on or off."""
    form = dashboard.form(request)
    value = form.get("value")
    if value not in ("on", "off"):
        raise HTTPException(400, "the setting is 'on' or 'off'; nothing changed")
    return dashboard.done(request, dashboard.desk.set_read_receipts(value == "on"), "/skills/reads")
