"""A mode's inputs checked against its model: every field's problem, each naming the field,
what is wrong and what to send (the field's own description)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..display import clipped
from ..errors import CalcError

M = TypeVar("M", bound=BaseModel)


def validated(mode: str, model: type[M], arguments: dict[str, Any]) -> M:
    """``arguments`` as ``model``, or a :class:`CalcError` with every field's problem."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise CalcError(mode, problems(mode, model, exc)) from None


def problems(mode: str, model: type[BaseModel], exc: ValidationError) -> list[str]:
    out = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        owner = _owner(model, error["loc"])
        name = str(error["loc"][-1]) if error["loc"] else ""
        if error["type"] == "extra_forbidden":
            fields = ", ".join(f"`{f}`" for f in owner.model_fields) if owner else "none"
            out.append(f"`{where}`: mode `{mode}` takes no such field — send only {fields}")
            continue
        info = owner.model_fields.get(name) if owner else None
        send = info.description if info is not None and info.description else "a valid value"
        if error["type"] == "missing":
            out.append(f"`{where}`: missing — send {send}")
            continue
        got = clipped(repr(error.get("input")), 60)
        what = error["msg"][0].lower() + error["msg"][1:]
        out.append(f"`{where}`: {what} (got {got}) — send {send}")
    return out


def _owner(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model that declares the field at ``loc`` (a leg's model for ``legs.0.strike``)."""
    owner: type[BaseModel] | None = model
    for part in loc[:-1]:
        if owner is None or isinstance(part, int):
            continue
        info = owner.model_fields.get(str(part))
        owner = _inner_model(info.annotation) if info is not None else None
    return owner


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def refuse(mode: str, *problems: str) -> CalcError:
    """A refusal the model cannot express (two fields that disagree, a price with no IV)."""
    return CalcError(mode, list(problems))
