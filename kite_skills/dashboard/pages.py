"""What the dashboard's page modules share, so that none imports another: the contract a page
handler is given (:class:`Pages`, which :class:`.app.Dashboard` fulfils), the URL of a skill's
page, and who the person at the dashboard is."""

from __future__ import annotations

from typing import Any, Final, Protocol

from starlette.requests import Request
from starlette.responses import Response

from kite_skills.person import login_name
from kite_skills.store import VIA_DASHBOARD, Skill, Store
from kite_skills.store.desk import PersonDesk

RESERVED: Final = frozenset({"new", "log", "reads", "guard"})


def skill_url(name: str) -> str:
    """A skill's page; ``/skills/new``, ``/skills/log``, ``/skills/reads`` and
    ``/skills/guard`` are pages of their own."""
    return f"/skills/{name}/view" if name in RESERVED else f"/skills/{name}"


def person() -> str:
    """The login name the dashboard's actions are audited under."""
    return login_name(VIA_DASHBOARD)


class Pages(Protocol):
    """What a page handler uses of the dashboard: its store (to read), the person's desk
    (every write), and how it answers."""

    store: Store
    desk: PersonDesk

    def page(
        self, request: Request, template: str, status: int = 200, **values: Any
    ) -> Response: ...

    def form(self, request: Request) -> dict[str, str]: ...

    def done(self, request: Request, message: str, where: str) -> Response: ...

    def skill_or_404(self, name: str) -> Skill: ...
