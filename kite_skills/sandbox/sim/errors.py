"""Errors of the simulation.

``KiteConnectError`` is what Kite Connect itself would answer (an HTTP 4xx with ``error_type`` and
``message``): the adapter shows it the way the Kite MCP server shows a Kite failure.
``ScenarioError`` is a broken scenario file: it is a kite-skills error (the CLI prints it and
serves nothing) and carries every problem, one ``source:line: what — what to do`` per line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kite_skills.errors import KiteError as _ProjectError


class KiteConnectError(Exception):
    """An error answer of Kite Connect. ``str(err) == err.message``. The one error type of
    the simulation's order path (the project's own ``kite_skills.errors.KiteError`` is a
    kite-skills failure a person acts on, such as a broken scenario: ``ScenarioError``)."""

    def __init__(self, error_type: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.status = status


def input_error(message: str) -> KiteConnectError:
    return KiteConnectError("InputException", message, 400)


def order_error(message: str) -> KiteConnectError:
    return KiteConnectError("OrderException", message, 400)


@dataclass(frozen=True)
class ScenarioProblem:
    source: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}"


class ScenarioError(_ProjectError):
    """A scenario that cannot be loaded. ``problems`` holds every problem found."""

    def __init__(self, problems: Sequence[ScenarioProblem]) -> None:
        self.problems = tuple(sorted(problems, key=lambda p: (p.source, p.line)))
        super().__init__("\n".join(str(p) for p in self.problems))
