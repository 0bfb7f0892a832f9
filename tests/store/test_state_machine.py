"""Random agent and human actions interleaved; the draft boundary holds after every step.

Invariants checked after every step:
- no skill is live unless a human action made it live at some point (since it was created),
  and an agent only ever turns on an archived skill a person had published;
- ``published_at`` is set only by human actions (an agent action never changes it);
- an agent action never changes the text of a skill a person has published (in any state:
  live, archived or moved back to draft), nor a text a person wrote (a never-published draft
  from ``human.create``/``edit``); it can only propose a revision beside it;
- every skill says who wrote its text (an agent via MCP, or a person via cli/dashboard), and
  a person's publish/accept/edit names the full revision it started from;
- drafts and archived skills are never returned by ``search``, ``list_live`` or ``read_live``;
- every change writes exactly one audit row, matching the action and its from/to states;
  no-ops and refusals write none.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kite_skills.errors import StoreError
from kite_skills.store import ActionResult, Author, SaveResult, Store, agent, human

NAMES = st.sampled_from(["alpha", "charlie-fund"])
WORDS = st.sampled_from(["fund", "margin", "alpha", "review", "AND", '"', "(", "-x", "a*", ""])
TEXT = st.text(alphabet="abc xyz\n#-*", min_size=0, max_size=40)
VIA = st.sampled_from(["cli", "dashboard"])

HUMAN_ACTIONS: dict[str, Callable[..., ActionResult]] = {
    "publish": human.publish,
    "accept": human.accept_revision,
    "reject": human.reject_revision,
    "move_to_draft": human.move_to_draft,
    "archive": human.archive,
    "restore": human.restore,
    "delete": human.delete,
}


class SkillLifecycle(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="kite-skills-sm-"))
        self.store = Store.open(self.dir / "skills.db")
        self.made_live_by_human: set[str] = set()
        self.audit_count = 0
        self.saves = 0

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- bookkeeping ---------------------------------------------------------------------

    def _published(self) -> dict[str, tuple[str, str | None]]:
        return {s.name: (s.status, s.published_at) for s in self.store.list_all()}

    def _texts(self) -> dict[str, tuple[str, str]]:
        return {s.name: (s.description, s.body) for s in self.store.list_all()}

    def _agent_wrote(self) -> dict[str, bool]:
        return {s.name: s.written_by.is_agent for s in self.store.list_all()}

    def _check_audit(self, result: ActionResult | SaveResult | None, action: str) -> None:
        rows = self.store.audit(limit=10_000)
        if result is None or (isinstance(result, ActionResult) and not result.changed):
            assert len(rows) == self.audit_count, f"{action} wrote an audit row without a change"
            return
        assert len(rows) == self.audit_count + 1, f"{action} wrote {len(rows) - self.audit_count}"
        self.audit_count += 1
        last = rows[0]
        if isinstance(result, ActionResult):
            assert (last.skill, last.action, last.from_status, last.to_status) == (
                result.name,
                result.action,
                result.from_status,
                result.to_status,
            )
            assert last.via in ("cli", "dashboard", "mcp")
        else:
            assert (last.skill, last.via, last.to_status) == (result.name, "mcp", result.status)

    def _agent(self, action: str, call: Callable[[], ActionResult | SaveResult]) -> None:
        before = self._published()
        texts = self._texts()
        agent_wrote = self._agent_wrote()
        try:
            result: ActionResult | SaveResult | None = call()
        except StoreError:
            result = None
        after = self._published()
        for name, text in self._texts().items():
            if before.get(name, ("absent", None))[1] is not None:
                assert text == texts[name], f"agent {action} changed a published skill's text"
            if name in agent_wrote and not agent_wrote[name]:
                assert text == texts[name], f"agent {action} changed a text a person wrote"
            if name not in texts or text != texts[name]:
                assert self.store.get(name).written_by.is_agent  # its new author is the agent
        for name, (status, published_at) in after.items():
            old_status, old_published = before.get(name, ("absent", None))
            assert published_at == old_published, f"agent {action} changed published_at"
            if status == "live" and old_status != "live":
                # the only way an agent turns a skill on: put back an archived skill that a
                # person published before (never a draft, never one moved back to draft)
                assert (action, old_status) == ("republish", "archived"), (action, old_status)
                assert old_published is not None
        self._check_audit(result, action)

    # ---- agent actions -------------------------------------------------------------------

    @rule(name=NAMES, description=TEXT, body=TEXT)
    def agent_save(self, name: str, description: str, body: str) -> None:
        self._agent("save", lambda: agent.save(self.store, name, description, body, who="bot"))

    @rule(name=NAMES)
    def agent_propose(self, name: str) -> None:
        # a well-formed save: a draft for a new name, a proposal over an existing one
        self.saves += 1  # a different text each time, so an overwrite always shows
        body = f"# {name}\nsteps, take {self.saves}"
        self._agent(
            "propose", lambda: agent.save(self.store, name, f"About {name}", body, who="bot")
        )

    @rule(name=NAMES)
    def agent_unpublish(self, name: str) -> None:
        self._agent("unpublish", lambda: agent.unpublish(self.store, name, who="bot"))

    @rule(name=NAMES)
    def agent_republish(self, name: str) -> None:
        self._agent("republish", lambda: agent.republish(self.store, name, who="bot"))

    @rule(name=NAMES)
    def agent_read(self, name: str) -> None:
        try:
            skill = self.store.read_live(name)
        except StoreError:
            return
        assert skill.status == "live"

    @rule(q=WORDS)
    def agent_search(self, q: str) -> None:
        for hit in self.store.search(q):
            assert self.store.get(hit.name).status == "live"

    # ---- human actions -------------------------------------------------------------------

    def _reviewed(self, action: str, name: str) -> dict[str, str]:
        """The full revision a person reviewed, for the actions that must name one."""
        if action not in ("publish", "accept"):
            return {}
        try:
            skill = self.store.get(name)
        except StoreError:
            return {"rev": "0" * 32}
        text = skill.proposed if action == "accept" else skill
        return {"rev": text.revision if text is not None else "0" * 32}

    def _human(self, action: str, name: str, via: str) -> None:
        try:
            result: ActionResult | None = HUMAN_ACTIONS[action](
                self.store, name, via=via, who="alice", **self._reviewed(action, name)
            )
        except StoreError:
            result = None
        if result is not None and result.changed:
            if result.to_status == "live" and result.from_status != "live":
                self.made_live_by_human.add(name)
            if result.to_status is None:  # deleted: a new skill by this name starts over
                self.made_live_by_human.discard(name)
        self._check_audit(result, action)

    @rule(name=NAMES, via=VIA)
    def human_publish(self, name: str, via: str) -> None:
        self._human("publish", name, via)

    @rule(name=NAMES, via=VIA)
    def human_accept(self, name: str, via: str) -> None:
        self._human("accept", name, via)

    @rule(name=NAMES, via=VIA)
    def human_reject(self, name: str, via: str) -> None:
        self._human("reject", name, via)

    @rule(name=NAMES, via=VIA)
    def human_move_to_draft(self, name: str, via: str) -> None:
        self._human("move_to_draft", name, via)

    @rule(name=NAMES, via=VIA)
    def human_archive(self, name: str, via: str) -> None:
        self._human("archive", name, via)

    @rule(name=NAMES, via=VIA)
    def human_restore(self, name: str, via: str) -> None:
        self._human("restore", name, via)

    @rule(name=NAMES, via=VIA)
    def human_delete(self, name: str, via: str) -> None:
        self._human("delete", name, via)

    @rule(name=NAMES, via=VIA, stale=st.booleans())
    def human_edit(self, name: str, via: str, stale: bool) -> None:
        self.saves += 1
        try:
            rev = "f" * 32 if stale else self.store.get(name).revision
            result: ActionResult | None = human.edit(
                self.store, name, rev=rev, body=f"edited {name} {self.saves}", via=via, who="al"
            )
        except StoreError:
            result = None
        if stale:
            assert result is None, "an edit from a revision that is not the text went through"
        if result is not None:
            assert self.store.get(name).written_by == Author(via, "al")
        self._check_audit(result, "edit")

    @rule(name=NAMES, via=VIA)
    def human_create(self, name: str, via: str) -> None:
        try:
            result: ActionResult | None = human.create(
                self.store, name, description="Mine", body=f"# {name}\nmine", via=via, who="al"
            )
        except StoreError:
            result = None
        if result is not None:
            assert self.store.get(name).written_by == Author(via, "al")
        self._check_audit(result, "create")

    # ---- invariants ----------------------------------------------------------------------

    @invariant()
    def only_humans_make_skills_live(self) -> None:
        for skill in self.store.list_all():
            if skill.status == "live":
                assert skill.name in self.made_live_by_human, skill
            if skill.published_at is not None:
                assert skill.name in self.made_live_by_human, skill
            else:
                assert skill.status != "live"

    @invariant()
    def only_live_skills_are_served(self) -> None:
        skills = self.store.list_all()
        live = sorted(s.name for s in skills if s.status == "live")
        assert [s.name for s in self.store.list_live(100)] == live
        for skill in skills:
            found = [h.name for h in self.store.search(skill.name)]
            if skill.status != "live":
                assert skill.name not in found
                with pytest.raises(StoreError):
                    self.store.read_live(skill.name)
            else:
                assert skill.name in found
                assert self.store.read_live(skill.name).body == skill.body

    @invariant()
    def every_text_has_its_author(self) -> None:
        for skill in self.store.list_all():
            assert skill.written_by.via in ("mcp", "cli", "dashboard"), skill
            if skill.proposed is not None:
                assert skill.proposed.author.is_agent

    @invariant()
    def audit_log_is_complete(self) -> None:
        assert len(self.store.audit(limit=10_000)) == self.audit_count


SkillLifecycle.TestCase.settings = settings(
    max_examples=max(150, settings.default.max_examples),  # more under the "long" profile
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSkillLifecycle = SkillLifecycle.TestCase
