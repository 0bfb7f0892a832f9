"""The user's own skills: one SQLite file, their lifecycle, audit log and full-text search.

A pure library (no MCP, no printing, no environment). Read with :class:`Store`; write through
:mod:`kite_skills.store.agent` (what an MCP client may do) or :mod:`kite_skills.store.human`
(what a person may do, from the dashboard or the CLI).
"""

from .db import LATEST_VERSION, Store, default_db_path
from .lifecycle import ARCHIVED, DRAFT, LIVE, STATES
from .records import ActionResult, AuditEntry, Revision, SaveResult, Skill, SkillSummary
from .report import StoreReport, describe

__all__ = [
    "ARCHIVED",
    "DRAFT",
    "LATEST_VERSION",
    "LIVE",
    "STATES",
    "ActionResult",
    "AuditEntry",
    "Revision",
    "SaveResult",
    "Skill",
    "SkillSummary",
    "Store",
    "StoreReport",
    "default_db_path",
    "describe",
]
