"""What the guard's end-to-end tests share: ``kite-skills guard`` from this tree in a real
subprocess, in front of ``kite-skills sandbox`` (its upstream, over stdio or HTTP), and the
MCP SDK's client on the guard's stdio, answering elicitation as the test's person does."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from mcp import Client, StdioServerParameters, types

from ..sandbox.sandbox_harness import command as sandbox_command
from ..sandbox.sandbox_harness import env, text_of

Answer = Literal["accept", "decline", "cancel", "accept-unticked"]
ORDER: dict[str, Any] = {
    "variety": "regular",
    "exchange": "NSE",
    "tradingsymbol": "INFY",
    "transaction_type": "BUY",
    "product": "CNC",
    "order_type": "LIMIT",
}


class Person:
    """Answers the guard's questions; keeps what it was asked."""

    def __init__(self, answer: Answer = "accept") -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params.message)
        if self.answer == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        if self.answer == "accept-unticked":
            return types.ElicitResult(action="accept", content={"confirm": False})
        return types.ElicitResult(action=self.answer)


def guard_argv(home: Path, *upstream: str, timeout: float | None = None) -> list[str]:
    extra = ["--timeout", str(timeout)] if timeout is not None else []
    return [
        sys.executable, "-m", "kite_skills", "guard",
        "--limits", str(home / "limits.json"), "--journal", str(home / "guard.jsonl"),
        *extra, *upstream,
    ]  # fmt: skip


def over_sandbox(home: Path, *sandbox: str) -> list[str]:
    """The upstream words: the sandbox from this tree on stdio."""
    return ["--", *sandbox_command(home / "sandbox.jsonl", *sandbox)]


def client(
    argv: list[str],
    home: Path,
    *,
    mode: Literal["legacy", "auto"] = "legacy",
    person: Callable[..., Awaitable[types.ElicitResult]] | None = None,
    environ: dict[str, str] | None = None,
) -> Client:
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], env={**env(home), **(environ or {})}
    )
    return Client(params, mode=mode, elicitation_callback=person)


def journal(home: Path) -> list[dict[str, Any]]:
    path = home / "guard.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def limits(home: Path, **settings: Any) -> None:
    """Write the person's limits file (as 'kite-skills guard limits set' would)."""
    from kite_skills.guard import limits as module

    module.save(home / "limits.json", module.Limits(**settings))


__all__ = [
    "ORDER",
    "Person",
    "client",
    "guard_argv",
    "journal",
    "limits",
    "over_sandbox",
    "text_of",
]
