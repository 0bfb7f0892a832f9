"""The user's own skills: one SQLite file, their lifecycle, audit log and full-text search.

A pure library (no MCP, no printing, no environment). Read with :class:`Store`; write through
one of three typed entry points: :class:`AgentView` (what an MCP client may do: the MCP server
is given one, never the :class:`Store`; with :class:`LiveSkills`, the one judge of whether the
live skills changed), :class:`~kite_skills.store.desk.PersonDesk` (what a person may do, from
the dashboard or the CLI; imported by name, so that the MCP server never loads it) and the
read receipts' :class:`~kite_skills.store.receipts.ReceiptWriter`, which only an
``AgentView`` hands out. :mod:`kite_skills.store.report` describes a store file for
``kite-skills doctor`` without opening it as a store.
"""

from ._validate import DEFAULT_LIMIT, MAX_BODY_BYTES, MAX_LIMIT
from .agent import AgentView
from .db import LATEST_VERSION, Store, default_db_path
from .lifecycle import ARCHIVED, DRAFT, LIVE, STATES, VIA_CLI, VIA_DASHBOARD, VIA_MCP, VIAS
from .live import Listing, LiveChange, LiveSkills
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
    Waiting,
)

__all__ = [
    "ARCHIVED",
    "DEFAULT_LIMIT",
    "DRAFT",
    "LATEST_VERSION",
    "LIVE",
    "MAX_BODY_BYTES",
    "MAX_LIMIT",
    "STATES",
    "VIAS",
    "VIA_CLI",
    "VIA_DASHBOARD",
    "VIA_MCP",
    "ActionResult",
    "AgentView",
    "AuditEntry",
    "Author",
    "Listing",
    "LiveChange",
    "LiveSkills",
    "PastText",
    "ReadReceipt",
    "Rejection",
    "Revision",
    "SaveResult",
    "Skill",
    "SkillSummary",
    "Store",
    "Waiting",
    "default_db_path",
]
