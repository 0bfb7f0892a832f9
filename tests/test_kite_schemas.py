"""The recorded tool schemas of the three Kite MCP generations, read through their one loader."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from kite_skills import kite_schemas


@pytest.mark.parametrize(
    ("generation", "count", "first", "last"),
    [
        ("grouped", 7, "portfolio", "session"),
        ("legacy", 23, "login", "delete_gtt_order"),
        ("legacy-oldest", 22, "login", "delete_gtt_order"),
    ],
)
def test_each_generation_loads_in_registration_order(
    generation: kite_schemas.Generation, count: int, first: str, last: str
) -> None:
    tools = kite_schemas.load(generation)
    assert (len(tools), tools[0].name, tools[-1].name) == (count, first, last)
    assert all(t.generation == generation for t in tools)


@pytest.mark.parametrize("generation", kite_schemas.GENERATIONS)
def test_the_wire_shape_is_the_recorded_file(generation: kite_schemas.Generation) -> None:
    recorded = kite_schemas.raw(generation)
    assert [t.to_wire() for t in kite_schemas.load(generation)] == [
        {"name": e["name"], "description": e["description"], "inputSchema": e["inputSchema"]}
        for e in recorded
    ]


def test_the_files_are_package_data_read_as_resources() -> None:
    package = resources.files("kite_skills.kite_schemas")
    for name in ("grouped.json", "legacy.json", "legacy-oldest.json"):
        assert isinstance(json.loads(package.joinpath(name).read_text("utf-8")), list)
    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert "**/*.json" in pyproject["tool"]["setuptools"]["package-data"]["kite_skills"]


def test_per_mode_requirements_reads_ignores_and_defaults() -> None:
    orders = kite_schemas.tools("grouped")["orders"]
    place, modify = orders.modes["place"], orders.modes["modify"]
    assert "variety" not in place.required and place.defaults["variety"] == "regular"
    assert "market_protection" in place.reads
    assert modify.required == ("order_id", "order_type")
    assert "market_protection" in modify.ignored and "quantity" in modify.reads
    assert place.writes and not orders.modes["list"].writes
    assert orders.params["variety"].enum == ("regular", "co", "amo", "iceberg", "auction")


def test_legacy_tools_take_their_requirements_from_the_handler() -> None:
    place = kite_schemas.tools("legacy")["place_order"]
    assert not place.has_modes and place.mode(None) is place.modes[""]
    assert place.modes[""].required[0] == "variety"
    search = kite_schemas.tools("legacy")["search_instruments"].modes[""]
    assert search.required_by_value["mode"]["get_by_tradingsymbol"] == ("exchange", "tradingsymbol")


def test_alerts_keep_conditional_requirements_as_text() -> None:
    alerts = kite_schemas.tools("grouped")["alerts"]
    create, modify = alerts.modes["create"], alerts.modes["modify"]
    assert "rhs_type" in create.required
    assert "rhs_constant (if rhs_type=constant)" in create.conditional
    assert modify.required[0] == "uuids" and set(create.required) < set(modify.required)


def test_the_oldest_server_lacks_alerts_lookups_and_holdings_type() -> None:
    oldest = kite_schemas.tools("legacy-oldest")
    assert "alerts" not in oldest
    assert set(oldest["search_instruments"].params) == {"query", "filter_on", "from", "limit"}
    assert "type" not in oldest["get_holdings"].params
    assert "market_protection" not in oldest["place_order"].params


def test_pagination_per_generation() -> None:
    grouped = kite_schemas.tools("grouped")
    assert grouped["market"].modes["search"].paginated
    assert not grouped["mutual_funds"].modes["holdings"].paginated
    for generation in ("legacy", "legacy-oldest"):
        assert kite_schemas.tools(generation)["get_mf_holdings"].modes[""].paginated


def test_every_legacy_twin_exists() -> None:
    grouped, legacy = kite_schemas.tools("grouped"), kite_schemas.tools("legacy")
    for (tool, mode), twin in kite_schemas.LEGACY_TWIN.items():
        assert mode in grouped[tool].modes and twin in legacy


def test_an_unknown_generation_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown generation 'newest'"):
        kite_schemas.load("newest")  # type: ignore[arg-type]
