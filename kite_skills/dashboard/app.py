"""The dashboard's pages: one routing table, server-rendered HTML, no script.

Every state change is a POST carrying the session's CSRF token (and, for publish and accept,
the revision id the page showed); GET never changes anything. Actions go through
:mod:`kite_skills.store.human` with ``via="dashboard"``.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from jinja2 import Environment, FunctionLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from kite_skills.catalog import hidden_constructs
from kite_skills.display import count_hidden, visible
from kite_skills.errors import IllegalTransition, KiteError, StaleRevision, UnknownSkill
from kite_skills.store import ActionResult, Skill, Store, human

from . import render
from .security import Door, guard

VIA: Final = "dashboard"
WAITING_ACTIONS: Final = frozenset({"create", "save_draft", "propose"})


RESERVED: Final = frozenset({"new", "log"})


def skill_url(name: str) -> str:
    """A skill's page; ``/skills/new`` and ``/skills/log`` are pages of their own."""
    return f"/skills/{name}/view" if name in RESERVED else f"/skills/{name}"


def _template_source(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


def _environment() -> Environment:
    env = Environment(
        loader=FunctionLoader(_template_source),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["visible"] = render.visible_html
    env.filters["plain"] = lambda text: visible(text or "")  # where no markup may go
    env.filters["local_time"] = render.local_time
    env.globals["skill_url"] = skill_url
    env.globals["count_hidden"] = count_hidden
    return env


def _who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in the environment or the password database
        return "dashboard"


def _home_short(path: str) -> str:
    """``path`` with the home directory written ``~`` (the full path is in the title)."""
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


@dataclass(frozen=True)
class Waiting:
    skill: Skill
    kind: str  # "draft" | "revision"
    by: str
    at: str


_ACTIONS: Final[dict[str, tuple[Callable[..., ActionResult], str | None]]] = {
    # action: (library call, which revision id the form must carry)
    "publish": (human.publish, "text"),
    "accept": (human.accept_revision, "proposed"),
    "reject": (human.reject_revision, None),
    "draft": (human.move_to_draft, None),
    "archive": (human.archive, None),
    "restore": (human.restore, None),
    "delete": (human.delete, None),
}


class Dashboard:
    """Pages over one open store."""

    def __init__(self, store: Store, door: Door) -> None:
        self.store = store
        self.door = door
        self.env = _environment()
        self._flash: dict[str, str] = {}

    # ---- helpers ------------------------------------------------------------------------

    def page(self, request: Request, template: str, status: int = 200, **values: Any) -> Response:
        session = request.state.session
        text = self.env.get_template(template).render(
            store_path=self.store.path,
            store_short=_home_short(self.store.path),
            csrf=self.door.csrf_for(session),
            flash=self._flash.pop(session, None),
            **values,
        )
        return HTMLResponse(text, status_code=status)

    async def form(self, request: Request) -> dict[str, str]:
        """The POSTed form, after its CSRF token is checked (403 and nothing done if not)."""
        data = await request.form()
        if not self.door.check_csrf(request.state.session, data.get("csrf")):
            raise HTTPException(
                403,
                "the form's security token is missing or wrong; nothing changed — reload "
                "the page and try again",
            )
        return {k: v for k, v in data.items() if isinstance(v, str)}

    def done(self, request: Request, message: str, where: str) -> Response:
        self._flash[request.state.session] = message
        return RedirectResponse(where, status_code=303)

    def skill_or_404(self, name: str) -> Skill:
        try:
            return self.store.get(name)
        except (UnknownSkill, KiteError) as exc:
            raise HTTPException(404, str(exc)) from exc

    def proposer(self, skill: Skill) -> tuple[str, str]:
        """Who wrote the waiting text, from the audit log: ``(via:who, at)``."""
        if skill.proposed is not None:
            return skill.proposed.proposed_by, skill.proposed.proposed_at
        for entry in self.store.audit(limit=20, name=skill.name):
            if entry.action in WAITING_ACTIONS:
                who = entry.who if entry.via == "mcp" else f"{entry.who} ({entry.via})"
                return who, entry.at
        return "", skill.updated_at

    # ---- pages --------------------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        skills = self.store.list_all()
        waiting = []
        for skill in skills:
            if skill.status == "draft" or skill.proposed is not None:
                by, at = self.proposer(skill)
                kind = "revision" if skill.proposed is not None else "draft"
                waiting.append(Waiting(skill, kind, by, at))
        waiting.sort(key=lambda w: w.at, reverse=True)
        return self.page(
            request,
            "index.html",
            waiting=waiting,
            live=[s for s in skills if s.status == "live"],
            archived=[s for s in skills if s.status == "archived"],
        )

    async def detail(self, request: Request) -> Response:
        return self.show(request, self.skill_or_404(request.path_params["name"]))

    def show(
        self, request: Request, skill: Skill, *, error: str = "", status: int = 200
    ) -> Response:
        p = skill.proposed
        diff = render.diff_lines(skill.description, skill.body, p.description, p.body) if p else []
        return self.page(
            request,
            "skill.html",
            status=status,
            skill=skill,
            body_html=render.body_html(skill.body),
            source_html=render.source_html(skill.body, "L"),
            constructs=hidden_constructs(skill.body),
            proposed_source_html=render.source_html(p.body, "P") if p else "",
            proposed_constructs=hidden_constructs(p.body) if p else [],
            hidden=render.hidden_in((skill.description, False), (skill.body, True)),
            proposed_hidden=render.hidden_in((p.description, False), (p.body, True)) if p else 0,
            diff=diff,
            history=self.store.audit(limit=200, name=skill.name),
            error=error,
        )

    async def act(self, request: Request) -> Response:
        name, action = request.path_params["name"], request.path_params["action"]
        if action not in _ACTIONS:
            raise HTTPException(404, f"no action '{action}'")
        self.skill_or_404(name)  # a malformed or unknown name: 404 before anything else
        form = await self.form(request)
        call, needs = _ACTIONS[action]
        kwargs: dict[str, Any] = {"via": VIA, "who": _who()}
        if needs is not None:
            kwargs["rev"] = form.get("rev", "")
        if action == "delete" and form.get("confirm") != "yes":
            return RedirectResponse(f"/skills/{name}/delete", status_code=303)
        try:
            result = call(self.store, name, **kwargs)
        except (StaleRevision, IllegalTransition) as exc:
            skill = self.skill_or_404(name)
            return self.show(request, skill, error=str(exc), status=409)
        except UnknownSkill as exc:
            raise HTTPException(404, str(exc)) from exc
        where = "/skills" if action == "delete" else skill_url(name)
        return self.done(request, result.message, where)

    async def confirm_delete(self, request: Request) -> Response:
        skill = self.skill_or_404(request.path_params["name"])
        return self.page(request, "delete.html", skill=skill)

    async def new(self, request: Request) -> Response:
        values = {"name": "", "description": "", "body": ""}
        if request.method == "POST":
            form = await self.form(request)
            values = {k: form.get(k, "") for k in values}
            problems = human.field_problems(values["name"], values["description"], values["body"])
            if not problems:
                try:
                    result = human.create(
                        self.store,
                        values["name"],
                        description=values["description"],
                        body=values["body"],
                        via=VIA,
                        who=_who(),
                    )
                except IllegalTransition as exc:
                    problems = {"name": str(exc)}
                else:
                    return self.done(request, result.message, skill_url(values["name"]))
            return self.page(
                request, "form.html", status=400, values=values, problems=problems, editing=None
            )
        return self.page(request, "form.html", values=values, problems={}, editing=None)

    async def edit(self, request: Request) -> Response:
        skill = self.skill_or_404(request.path_params["name"])
        values = {"name": skill.name, "description": skill.description, "body": skill.body}
        if request.method == "GET":
            return self.page(
                request, "form.html", values=values, problems={}, editing=skill, rev=skill.revision
            )
        form = await self.form(request)
        values.update(description=form.get("description", ""), body=form.get("body", ""))
        problems = human.field_problems(skill.name, values["description"], values["body"])
        problems.pop("name", None)
        if not problems and form.get("rev") != skill.revision:
            problems["form"] = (
                f"'{skill.name}' changed since you opened this editor (it is now revision "
                f"{skill.revision}); nothing was saved — open its page to see the new text"
            )
        if problems:
            return self.page(
                request,
                "form.html",
                status=400,
                values=values,
                problems=problems,
                editing=skill,
                rev=form.get("rev", ""),
            )
        if (values["description"], values["body"]) == (skill.description, skill.body):
            return self.done(
                request, f"'{skill.name}' is unchanged; nothing was saved", skill_url(skill.name)
            )
        result = human.edit(
            self.store,
            skill.name,
            description=values["description"],
            body=values["body"],
            via=VIA,
            who=_who(),
        )
        return self.done(request, result.message, skill_url(skill.name))

    async def log(self, request: Request) -> Response:
        skill = request.query_params.get("skill") or None
        via = request.query_params.get("via") or None
        if via not in (None, "mcp", "dashboard", "cli"):
            via = None
        try:
            entries = self.store.audit(limit=10_000 if via else 500, name=skill)
        except KiteError as exc:
            raise HTTPException(400, str(exc)) from exc
        if via:
            entries = [e for e in entries if e.via == via][:500]
        return self.page(request, "log.html", entries=entries, skill=skill or "", via=via or "")

    async def stylesheet(self, request: Request) -> Response:
        css = resources.files(__package__).joinpath("static", "style.css").read_bytes()
        return Response(css, media_type="text/css")

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
            detail=detail,
        )


def build_app(store: Store, door: Door) -> Any:
    """The dashboard as an ASGI app, behind :func:`.security.guard`."""
    d = Dashboard(store, door)
    routes = [
        Route("/", lambda r: RedirectResponse("/skills", status_code=303)),
        Route("/static/style.css", d.stylesheet),
        Route("/skills", d.index),
        Route("/skills/new", d.new, methods=["GET", "POST"]),
        Route("/skills/log", d.log),
        Route("/skills/{name}", d.detail),
        Route("/skills/{name}/view", d.detail),
        Route("/skills/{name}/edit", d.edit, methods=["GET", "POST"]),
        Route("/skills/{name}/delete", d.confirm_delete),
        Route("/skills/{name}/{action}", d.act, methods=["POST"]),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: d.error})
    return guard(app, door)
