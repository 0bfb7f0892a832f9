"""The dashboard's pages: one routing table, server-rendered HTML, no script.

Every state change is a POST carrying the session's CSRF token (and, for publish and accept,
the revision id the page showed); GET never changes anything. Every write goes through the
person's desk (:class:`kite_skills.store.desk.PersonDesk`, opened with ``via="dashboard"``).

Handlers are plain functions run in a worker thread (:func:`_off_loop` reads a POSTed form
first), so a store that waits (busy, slow disk) never stalls the event loop. A store error
shows the store's own message on an error page (503 when the store cannot be used).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from importlib import resources
from typing import Any

from jinja2 import Environment, FunctionLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from kite_skills.catalog import hidden_constructs
from kite_skills.display import count_hidden, text_size, visible
from kite_skills.errors import (
    IllegalTransition,
    InvalidQuery,
    InvalidSkill,
    KiteError,
    StaleRevision,
    StoreUnavailable,
    UnknownSkill,
    UnreadableSkill,
)
from kite_skills.guard import limits as guard_limits
from kite_skills.look_alikes import LOOK_ALIKE_RULE, is_new_draft, look_alikes
from kite_skills.os_dirs import home
from kite_skills.skill_rules import NAME_CHARS
from kite_skills.store import VIA_DASHBOARD, VIAS, AuditEntry, Skill, Store
from kite_skills.store.desk import PersonDesk
from kite_skills.store.human import MAX_REASON_CHARS, field_problems
from kite_skills.store.lifecycle import (
    ARCHIVED,
    LIVE,
    Action,
    person_action_meanings,
    person_actions,
)
from kite_skills.store.records import revision_id, short_revision
from kite_skills.store.verbs import PERSON_VERBS, Asked, Needs

from . import guard_page, history, render
from .guard_page import GuardFiles
from .pages import person, skill_url
from .security import Door, guard


def _template_source(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


def _environment() -> Environment:
    env = Environment(
        loader=FunctionLoader(_template_source),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # Each filter is named after the function it runs (visible: text, where no markup may go;
    # visible_html: marked HTML), so a name means one thing in Python and in a template.
    for function in (
        visible,
        render.visible_html,
        render.cell_html,
        render.diff_html,
        render.local_time,
        render.revision_html,
        short_revision,
        seen_field,
    ):
        env.filters[function.__name__] = function
    env.globals["skill_url"] = skill_url
    env.globals["count_hidden"] = count_hidden
    env.globals["LIVE"] = LIVE
    env.globals["VIAS"] = VIAS
    env.globals["NAME_CHARS"] = NAME_CHARS
    env.globals["MAX_REASON_CHARS"] = MAX_REASON_CHARS
    env.globals["GUARD_REASON_CHARS"] = guard_limits.MAX_REASON_CHARS
    env.globals["LOOK_ALIKE_RULE"] = LOOK_ALIKE_RULE
    return env


def _home_short(path: str) -> str:
    """``path`` with the home directory written ``~`` (the full path is in the title)."""
    folder = str(home(os.environ, sys.platform))
    if folder not in ("", "/", "~") and path.startswith(folder + os.sep):
        return "~" + path[len(folder) :]
    return path


def _audit_html(entries: list[AuditEntry]) -> list[AuditEntry]:
    """Audit rows with every field the templates print bare made visible and escaped
    (another tool may have written any text there); ``skill``, ``who`` and ``detail`` are
    passed through the ``visible`` filter where they are shown."""

    def html(text: str | None) -> str | None:
        return None if text is None else render.visible_html(text)

    return [
        dataclasses.replace(
            e,
            at=render.visible_html(e.at),
            action=render.visible_html(e.action),
            from_status=html(e.from_status),
            to_status=html(e.to_status),
            via=render.visible_html(e.via),
        )
        for e in entries
    ]


def _off_loop(handler: Callable[[Request], Response]) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` run in a worker thread, its POSTed form read first (``request.state.form``)."""

    async def endpoint(request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            request.state.form = await request.form()
        return await run_in_threadpool(handler, request)

    return endpoint


def seen_field(description: str, body: str) -> str:
    """The text a publish or accept form showed, for its hidden ``seen`` field: if the text
    changed before the click, the refusal shows what changed since (base64 JSON, so no line
    break is rewritten on the way)."""
    data = json.dumps({"description": description, "body": body}, ensure_ascii=False)
    return base64.b64encode(data.encode("utf-8", "surrogatepass")).decode("ascii")


def _seen_text(field: str, rev: str) -> tuple[str, str] | None:
    """The ``(description, body)`` a form's ``seen`` field carries, if it is the revision
    ``rev`` the form names (anything else is ignored: the refusal then shows no diff)."""
    try:
        data = json.loads(base64.b64decode(field, validate=True).decode("utf-8", "surrogatepass"))
        description, body = data["description"], data["body"]
    except (binascii.Error, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    if not (isinstance(description, str) and isinstance(body, str)):
        return None
    return (description, body) if revision_id(description, body) == rev else None


@dataclass(frozen=True)
class Stale:
    """A publish or accept refused because the text changed after the page showed it: the
    revision the person saw, the one now waiting (None: nothing waits any more), and the diff
    between the two (empty when the page's text is not known)."""

    verb: str
    seen: str
    now: str | None
    by: str
    diff: list[render.DiffLine]


class Dashboard:
    """Pages over one open store."""

    def __init__(self, store: Store, door: Door) -> None:
        self.store = store  # what the pages read
        self.desk = PersonDesk(store, via=VIA_DASHBOARD, who=person())  # every write
        self.door = door
        self.env = _environment()
        self._flash: dict[str, str] = {}
        self._next: dict[str, str] = {}  # after publish/accept: the next waiting name, or ""

    # ---- helpers ------------------------------------------------------------------------

    def page(self, request: Request, template: str, status: int = 200, **values: Any) -> Response:
        session = request.state.session
        text = self.env.get_template(template).render(
            store_path=self.store.path,
            store_short=_home_short(self.store.path),
            csrf=self.door.csrf_for(session),
            flash=self._flash.pop(session, None),
            flash_next=self._next.pop(session, None),
            **values,
        )
        return HTMLResponse(text, status_code=status)

    def form(self, request: Request) -> dict[str, str]:
        """The POSTed form, after its CSRF token is checked (403 and nothing done if not)."""
        data = request.state.form
        if not self.door.check_csrf(request.state.session, data.get("csrf")):
            raise HTTPException(
                403,
                "the form's security token is missing or wrong; nothing changed — reload "
                "the page and try again",
            )
        # A browser sends each line break of a text box as CR LF: the text is LF-separated,
        # so no CR is left for the hidden-character check to warn about.
        return {k: v.replace("\r\n", "\n") for k, v in data.items() if isinstance(v, str)}

    def done(self, request: Request, message: str, where: str) -> Response:
        self._flash[request.state.session] = render.full_stop(message)
        return RedirectResponse(where, status_code=303)

    def skill_or_404(self, name: str) -> Skill:
        try:
            return self.store.get(name)
        except (UnknownSkill, InvalidSkill, UnreadableSkill) as exc:
            raise HTTPException(404, str(exc)) from exc

    # ---- pages --------------------------------------------------------------------------

    def index(self, request: Request) -> Response:
        skills, unreadable = self.store.list_all_and_unreadable()
        waiting = self.store.waiting(skills)
        return self.page(
            request,
            "index.html",
            waiting=waiting,
            looks_like=look_alikes(skills),
            live=[s for s in skills if s.status == LIVE],
            archived=[s for s in skills if s.status == ARCHIVED],
            unreadable=unreadable,
        )

    def detail(self, request: Request) -> Response:
        return self.show(request, self.skill_or_404(request.path_params["name"]))

    def show(
        self,
        request: Request,
        skill: Skill,
        *,
        error: str = "",
        status: int = 200,
        stale: Stale | None = None,
    ) -> Response:
        p = skill.proposed
        diff = render.diff_lines(skill.description, skill.body, p.description, p.body) if p else []
        return self.page(
            request,
            "skill.html",
            status=status,
            skill=skill,
            actions=person_actions(skill.status, **skill.facts),
            meanings={  # Restore's, for an earlier text, is on the history page
                a: m
                for a, m in person_action_meanings(skill.status, **skill.facts).items()
                if a is not Action.REVERT
            },
            body_html=render.body_html(skill.body),
            source_html=render.source_html(skill.body, "L"),
            constructs=hidden_constructs(skill.body),
            proposed_source_html=render.source_html(p.body, "P") if p else "",
            proposed_constructs=hidden_constructs(p.body) if p else [],
            rtl=render.rtl_lines(skill.description, skill.body),
            looks_like=look_alikes(self.store.list_all(), name=skill.name).get(skill.name, [])
            if is_new_draft(skill)
            else [],
            proposed_rtl=render.rtl_lines(p.description, p.body) if p else [],
            size=text_size(skill.body),
            proposed_size=text_size(p.body) if p else "",
            hidden=render.hidden_in((skill.description, False), (skill.body, True)),
            proposed_hidden=render.hidden_in((p.description, False), (p.body, True)) if p else 0,
            diff=diff,
            history=_audit_html(self.store.audit(limit=200, name=skill.name)),
            reads=self.store.reads("skill", skill.name),
            reads_on=self.store.read_receipts_on(),
            error=error,
            stale=stale,
        )

    def stale(self, skill: Skill, action: str, form: dict[str, str], exc: StaleRevision) -> Stale:
        """What the refusal shows: the revision the page showed against the one now waiting."""
        p = skill.proposed
        now = (p.description, p.body) if action == "accept" and p else None
        if action == "publish":
            now = (skill.description, skill.body)
        seen = _seen_text(form.get("seen", ""), form.get("rev", "").strip().lower())
        diff = render.diff_lines(*seen, *now) if seen and now else []
        by = self.store.proposer(skill)[0].label() if now else ""
        return Stale(action, exc.reviewed, exc.current if now else None, by, diff)

    def act(self, request: Request) -> Response:
        name, action = request.path_params["name"], request.path_params["action"]
        verb = PERSON_VERBS.get(action)
        if verb is None:
            raise HTTPException(404, f"no action '{action}'")
        self.skill_or_404(name)  # a malformed or unknown name: 404 before anything else
        form = self.form(request)
        # A verb that asks first gets confirm=yes only from its question page
        # (/skills/NAME/ACTION): without it the POST changes nothing and goes there.
        if verb.asks_first and form.get("confirm") != "yes":
            return RedirectResponse(f"/skills/{name}/{action}", status_code=303)
        asked = Asked(
            rev=form.get("rev", "") if verb.needs.names_a_revision else "",
            reason=form.get("reason", "") if verb.needs is Needs.REASON else "",
        )
        try:
            result = verb.run(self.desk, name, asked)
        except StaleRevision as exc:
            skill = self.skill_or_404(name)
            stale = self.stale(skill, action, form, exc)
            return self.show(request, skill, error=str(exc), status=409, stale=stale)
        except IllegalTransition as exc:
            skill = self.skill_or_404(name)
            return self.show(request, skill, error=render.full_stop(str(exc)), status=409)
        except UnknownSkill as exc:
            raise HTTPException(404, str(exc)) from exc
        message = result.message
        if action == "delete" and form.get("purge") == "yes":  # and forget what it kept
            message += "; " + self.desk.purge(name).message
        where = "/skills" if action == "delete" else skill_url(name)
        if action in ("publish", "accept"):  # on to the next thing to review, if any
            after = [w.skill.name for w in self.store.waiting() if w.skill.name != name]
            self._next[request.state.session] = after[0] if after else ""
        return self.done(request, message, where)

    def confirm_delete(self, request: Request) -> Response:
        skill = self.skill_or_404(request.path_params["name"])
        return self.page(request, "delete.html", skill=skill)

    def confirm_restore(self, request: Request) -> Response:
        """The question before an archived skill goes back into service: which text, and
        what it means for agents (the lifecycle table's words)."""
        skill = self.skill_or_404(request.path_params["name"])
        if Action.RESTORE not in person_actions(skill.status, **skill.facts):
            return RedirectResponse(skill_url(skill.name), status_code=303)
        meaning = person_action_meanings(skill.status, **skill.facts).get(Action.RESTORE, "")
        return self.page(request, "restore.html", skill=skill, meaning=meaning)

    def new(self, request: Request) -> Response:
        values = {"name": "", "description": "", "body": ""}
        if request.method == "POST":
            form = self.form(request)
            values = {k: form.get(k, "") for k in values}
            problems = field_problems(values["name"], values["description"], values["body"])
            if not problems:
                try:
                    result = self.desk.create(
                        values["name"], description=values["description"], body=values["body"]
                    )
                except IllegalTransition as exc:
                    problems = {"name": str(exc)}
                else:
                    return self.done(request, result.message, skill_url(values["name"]))
            return self.page(
                request, "form.html", status=400, values=values, problems=problems, editing=None
            )
        return self.page(request, "form.html", values=values, problems={}, editing=None)

    def edit(self, request: Request) -> Response:
        skill = self.skill_or_404(request.path_params["name"])
        values = {"name": skill.name, "description": skill.description, "body": skill.body}
        if request.method == "GET":
            return self.page(
                request, "form.html", values=values, problems={}, editing=skill, rev=skill.revision
            )
        form = self.form(request)
        values.update(description=form.get("description", ""), body=form.get("body", ""))
        problems = field_problems(skill.name, values["description"], values["body"])
        problems.pop("name", None)
        if not problems and (values["description"], values["body"]) == (
            skill.description,
            skill.body,
        ):
            return self.done(
                request, f"'{skill.name}' is unchanged; nothing was saved", skill_url(skill.name)
            )
        if not problems:
            try:  # the library compares the revision the editor opened, in its transaction
                result = self.desk.edit(
                    skill.name,
                    rev=form.get("rev", ""),
                    description=values["description"],
                    body=values["body"],
                )
            except StaleRevision as exc:
                problems["form"] = str(exc)
            else:
                return self.done(request, result.message, skill_url(skill.name))
        return self.page(
            request,
            "form.html",
            status=400,
            values=values,
            problems=problems,
            editing=skill,
            rev=form.get("rev", ""),
        )

    def log(self, request: Request) -> Response:
        skill = request.query_params.get("skill") or None
        via = request.query_params.get("via") or None
        if via not in VIAS:
            via = None
        try:
            entries = self.store.audit(limit=500, name=skill, via=via)
        except (InvalidSkill, InvalidQuery) as exc:
            raise HTTPException(400, str(exc)) from exc
        return self.page(
            request, "log.html", entries=_audit_html(entries), skill=skill or "", via=via or ""
        )

    async def stylesheet(self, request: Request) -> Response:
        css = resources.files(__package__).joinpath("static", "style.css").read_bytes()
        return Response(css, media_type="text/css")

    async def store_error(self, request: Request, exc: Exception) -> Response:
        """The store's own message (busy, full disk, moved, a row another tool wrote)."""
        assert isinstance(exc, KiteError)
        if isinstance(exc, StoreUnavailable):
            status, title = 503, "The store cannot be used"
        elif isinstance(exc, (InvalidSkill, InvalidQuery, UnknownSkill)):
            status, title = 404 if isinstance(exc, UnknownSkill) else 400, "Not done"
        else:
            status, title = 409, "Not done"
        detail = render.full_stop(str(exc))
        return self.page(request, "error.html", status=status, title=title, detail=detail)

    async def error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        titles = {403: "Refused", 404: "Not found", 405: "Not allowed"}
        detail = exc.detail
        if exc.status_code == 405:
            detail = "This address takes a form from a dashboard page; nothing changed."
        if not hasattr(request.state, "session"):
            return HTMLResponse(f"{exc.status_code}", status_code=exc.status_code)
        return self.page(
            request,
            "error.html",
            status=exc.status_code,
            title=titles.get(exc.status_code, "Error"),
            detail=render.full_stop(str(detail)),
        )


def build_app(store: Store, door: Door, guard_files: GuardFiles | None = None) -> ASGIApp:
    """The dashboard as an ASGI app, behind :func:`.security.guard`; its Guard page shows
    ``guard_files`` (default: the guard's own default files)."""
    d = Dashboard(store, door)
    files = guard_files or GuardFiles.default()
    routes = [
        Route("/", lambda r: RedirectResponse("/skills", status_code=303)),
        Route("/static/style.css", d.stylesheet),
        Route("/skills", _off_loop(d.index)),
        Route("/skills/new", _off_loop(d.new), methods=["GET", "POST"]),
        Route("/skills/log", _off_loop(d.log)),
        Route("/skills/reads", _off_loop(partial(history.reads, d))),
        Route(
            "/skills/reads/setting",
            _off_loop(partial(history.reads_setting, d)),
            methods=["POST"],
        ),
        Route("/skills/guard", _off_loop(partial(guard_page.show, d, files))),
        Route(
            "/skills/guard/limits", _off_loop(partial(guard_page.save, d, files)), methods=["POST"]
        ),
        Route(
            "/skills/guard/kill", _off_loop(partial(guard_page.kill, d, files)), methods=["POST"]
        ),
        Route(
            "/skills/guard/resume",
            _off_loop(partial(guard_page.resume, d, files)),
            methods=["POST"],
        ),
        Route("/skills/{name}", _off_loop(d.detail)),
        Route("/skills/{name}/view", _off_loop(d.detail)),
        Route("/skills/{name}/edit", _off_loop(d.edit), methods=["GET", "POST"]),
        Route("/skills/{name}/delete", _off_loop(d.confirm_delete)),
        Route("/skills/{name}/restore", _off_loop(d.confirm_restore)),
        Route("/skills/{name}/history", _off_loop(partial(history.history, d))),
        Route(
            "/skills/{name}/history/{id}/restore",
            _off_loop(partial(history.restore, d)),
            methods=["GET", "POST"],
        ),
        Route("/skills/{name}/{action}", _off_loop(d.act), methods=["POST"]),
    ]
    app = Starlette(
        routes=routes, exception_handlers={HTTPException: d.error, KiteError: d.store_error}
    )
    return guard(app, door)
