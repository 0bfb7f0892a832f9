"""What the simulated market did to the account (issue 41 §2): fills, stop and GTT triggers,
AMO release, auto square-off, cancellation at the close, expiry; and what a write did (an
order placed, modified, cancelled or rejected). The adapter journals them as ``event``
entries beside the calls."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Event:
    at: datetime
    kind: str  # "placed", "fill", "rejected", "cancelled", "modified", "stop triggered", ...
    text: str  # one line for a person: the fields that matter
    instruments: tuple[str, ...]


@dataclass(frozen=True)
class Finding:
    """A watch rule's state began or ended (issue 41 §1)."""

    at: datetime
    rule: str
    phase: str  # "began" or "ended"
    instruments: tuple[str, ...]
    detail: str  # what the account looks like, in the rule's words
    message: str  # the rule's message for a person
    began: datetime  # when the state began (== at for "began")

    @property
    def lasted(self) -> float:
        """Seconds of simulated time the state lasted (0 when it began)."""
        return (self.at - self.began).total_seconds()


Note = Event | Finding
