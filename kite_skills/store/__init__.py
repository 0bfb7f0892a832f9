"""The user's own skills: one SQLite file, their lifecycle, audit log and full-text search.

A pure library (no MCP, no printing, no environment). Read with :class:`Store`; write through
:mod:`kite_skills.store.agent` (what an MCP client may do) or :mod:`kite_skills.store.human`
(what a person may do, from the dashboard or the CLI). :mod:`kite_skills.store.report`
describes a store file for ``kite-skills doctor`` without opening it as a store.
"""

from .db import LATEST_VERSION, Store, default_db_path
from .lifecycle import ARCHIVED, DRAFT, LIVE, STATES, VIA_CLI, VIA_DASHBOARD, VIA_MCP, VIAS
from .records import (
    ActionResult,
    AuditEntry,
    Author,
    PastText,
    ReadReceipt,
    Rejection,
    Revision,
    SaveResult,
    Skill,
    SkillSummary,
)

__all__ = [
    "ARCHIVED",
    "DRAFT",
    "LATEST_VERSION",
    "LIVE",
    "STATES",
    "VIAS",
    "VIA_CLI",
    "VIA_DASHBOARD",
    "VIA_MCP",
    "ActionResult",
    "AuditEntry",
    "Author",
    "PastText",
    "ReadReceipt",
    "Rejection",
    "Revision",
    "SaveResult",
    "Skill",
    "SkillSummary",
    "Store",
    "default_db_path",
]
