"""Who the person at this computer is, for the audit log of what they do.

The CLI and the dashboard record a person's actions under their login name. The store is a
library and reads no environment, so the adapters ask here.
"""

from __future__ import annotations

import getpass


def login_name(fallback: str) -> str:
    """The login name (``getpass.getuser``: ``LOGNAME``, ``USER``… else the password
    database); ``fallback`` (the adapter's name, "cli" or "dashboard") when there is none."""
    try:
        return getpass.getuser()
    except Exception:  # no user name in the environment or the password database
        return fallback
