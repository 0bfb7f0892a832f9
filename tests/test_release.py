"""A release as people meet it (docs/releases.md): the published files with SHA256SUMS, built
the same twice, by a workflow actionlint finds nothing in; the wheel's index metadata, and
the wheel installed as a command with pipx and with uv, offline.

The workflow tests need no build. The others (``zipapp``) read dist/ and .build/wheels, which
./build.sh --all makes (./build.sh test does); the reproducibility test reads the suite's one
rebuild of this machine's file, offline in another folder (tests/rebuild.py): a few minutes."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from kite_skills import __version__
from kite_skills.launcher.preamble import PLATFORMS, platform_for

from .rebuild import Rebuild
from .zipapp_platforms import PYTHONS, Interpreter, runnable, session_messages

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
WHEELHOUSE = ROOT / ".build" / "wheels"
WHEEL = DIST / f"kite_skills-{__version__}-py3-none-any.whl"
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
SUMS_LINE = re.compile(r"([0-9a-f]{64})  ([A-Za-z0-9_.-]+)")


def tool(name: str) -> str:
    """A test tool requirements/dev.txt installs beside this interpreter (build.sh's test
    venv), else the one on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing — ./build.sh test installs it (requirements/dev.txt)")
    return found


# The workflow ----------------------------------------------------------------------------


def actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.fail(
            "shellcheck is missing — ./build.sh test installs it (apt-get install shellcheck)"
        )
    return subprocess.run(
        [tool("actionlint"), "-no-color", "-shellcheck", shellcheck, str(path)],
        capture_output=True,
        text=True,
        cwd=path.parents[2],
        timeout=120,
    )


def test_a_run_without_shellcheck_says_so_in_its_first_line(tmp_path: Path) -> None:
    """A bare ``pip install`` brings actionlint but not shellcheck: the inner loop says so at
    its start (tests/conftest.py), before the two tests above fail; with it, nothing."""
    empty, provided = tmp_path / "empty", tmp_path / "provided"
    for folder in (empty, provided):
        folder.mkdir()
    fake = provided / "shellcheck"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    lines = {}
    for folder in (empty, provided):
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "--co",
             "tests/test_invisible.py"],
            capture_output=True, text=True, cwd=ROOT, timeout=120,
            env={**os.environ, "PATH": str(folder), "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        lines[folder] = run.stdout.splitlines()
    assert lines[empty][0] == (
        "shellcheck is missing: the two actionlint tests in tests/test_release.py will fail — "
        "apt-get install shellcheck (./build.sh test installs it)"
    )
    assert not any("shellcheck" in line for line in lines[provided])


def workflow() -> dict[str, Any]:
    loaded = YAML(typ="safe").load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_actionlint_finds_nothing_in_the_release_workflow() -> None:
    result = actionlint(WORKFLOW)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_actionlint_reports_a_broken_workflow(tmp_path: Path) -> None:
    """The check above can fail: a job that needs one that does not exist, and a shell
    mistake in a step's script (shellcheck's, through actionlint), are both reported."""
    text = WORKFLOW.read_text(encoding="utf-8")
    broken = text.replace("needs: compare", "needs: comparison")
    broken = broken.replace(
        "files < <(awk '{print $2}' SHA256SUMS)", "files < <(awk '{print $2}' $sums)"
    )
    assert broken.count("comparison") == 1 and "$sums" in broken
    path = tmp_path / ".github" / "workflows" / "release.yml"
    path.parent.mkdir(parents=True)
    path.write_text(broken, encoding="utf-8")
    result = actionlint(path)
    assert result.returncode == 1, result.stderr
    assert 'needs job "comparison" which does not exist' in result.stdout, result.stdout
    assert "SC2086" in result.stdout, result.stdout


def test_a_tag_starting_with_v_starts_a_release() -> None:
    assert workflow()["on"] == {"push": {"tags": ["v*"]}}


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    found = job["steps"]
    assert isinstance(found, list)
    return found


def test_every_action_is_pinned_by_its_full_commit_id() -> None:
    jobs = workflow()["jobs"]
    uses = [step["uses"] for job in jobs.values() for step in steps(job) if "uses" in step]
    assert len(uses) >= 4
    for action in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action
    # ...and the tag each id had, for the person who updates them.
    text = WORKFLOW.read_text(encoding="utf-8")
    assert len(re.findall(r"uses: \S+@[0-9a-f]{40}  # v\d+\.\d+\.\d+$", text, re.M)) == len(uses)


def test_only_the_publish_job_may_write_and_only_the_repositorys_contents() -> None:
    flow = workflow()
    assert flow["permissions"] == {}
    for name, job in flow["jobs"].items():
        assert "permissions" in job, f"job {name} has no permissions of its own"
        if name == "publish":
            assert job["permissions"] == {"contents": "write"}
        else:
            assert "write" not in job["permissions"].values(), name


def test_two_builds_are_compared_before_anything_is_published() -> None:
    jobs = workflow()["jobs"]
    build, compare, publish = jobs["build"], jobs["compare"], jobs["publish"]
    assert len(build["strategy"]["matrix"]["build"]) == 2
    assert ["./build.sh --all"] == [
        s["run"] for s in steps(build) if "build.sh" in s.get("run", "")
    ]
    assert compare["needs"] == "build" and publish["needs"] == "compare"
    script = "\n".join(s.get("run", "") for s in steps(compare))
    assert "diff -u dist-first/SHA256SUMS dist-second/SHA256SUMS" in script
    assert "sha256sum --check --strict SHA256SUMS" in script
    published = "\n".join(s.get("run", "") for s in steps(publish))
    assert "gh release create" in published and '"${files[@]}" SHA256SUMS' in published


# SHA256SUMS ------------------------------------------------------------------------------


def sums() -> list[tuple[str, str]]:
    path = DIST / "SHA256SUMS"
    if not path.is_file():
        pytest.fail(f"{path} is missing — run ./build.sh --all (./build.sh test does)")
    lines = path.read_text(encoding="ascii").splitlines()
    parsed = []
    for line in lines:
        match = SUMS_LINE.fullmatch(line)
        assert match, f"SHA256SUMS: {line!r} is not '<sha256>  <name>'"
        parsed.append((match.group(2), match.group(1)))
    return parsed


@pytest.mark.zipapp
def test_sha256sums_lists_every_release_file_with_its_hash() -> None:
    listed = sums()
    names = [name for name, _ in listed]
    assert names == sorted(names)
    zipapps = {f"kite-skills-{name}.pyz" for name in PLATFORMS}
    bundles = {f"kite-skills-{name}.mcpb" for name in PLATFORMS}
    assert zipapps | {WHEEL.name} <= set(names) <= zipapps | {WHEEL.name} | bundles
    assert len(names) == len(set(names))
    for name, digest in listed:
        assert digest == hashlib.sha256((DIST / name).read_bytes()).hexdigest(), name
        if name.endswith(".pyz"):
            assert (DIST / f"{name}.sha256").read_text().split() == [digest, name]


@pytest.mark.zipapp
def test_sha256sum_checks_every_file_and_refuses_a_changed_one(tmp_path: Path) -> None:
    result = subprocess.run(
        ["sha256sum", "--check", "--strict", "SHA256SUMS"],
        cwd=DIST,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [f"{name}: OK" for name, _ in sums()]
    # A download that lost its last byte: the same check says FAILED.
    (tmp_path / "SHA256SUMS").write_text((DIST / "SHA256SUMS").read_text())
    for name, _ in sums():
        (tmp_path / name).symlink_to(DIST / name)
    (tmp_path / WHEEL.name).unlink()
    (tmp_path / WHEEL.name).write_bytes(WHEEL.read_bytes()[:-1])
    damaged = subprocess.run(
        ["sha256sum", "--check", "--quiet", "SHA256SUMS"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert damaged.returncode == 1
    assert damaged.stdout.splitlines() == [f"{WHEEL.name}: FAILED"]


# Two builds, the same bytes -----------------------------------------------------------------


@pytest.mark.zipapp
def test_a_second_build_in_another_folder_gives_the_same_bytes(offline_rebuild: Rebuild) -> None:
    """This machine's file and the wheel, built again offline from a fresh wheelhouse in a
    folder of another length, from a checkout made under umask 002 at another time, with
    another time zone and SOURCE_DATE_EPOCH (tests/rebuild.py: the suite's one rebuild, which
    tests/test_offline_build.py reads too), give the bytes of the suite's own build in dist/
    (one extra build, not two: the suite's build is the first)."""
    host = platform_for(sys.platform, platform.machine())
    assert host is not None
    first = ROOT / "dist"
    if not (first / f"kite-skills-{host}.pyz").is_file():
        pytest.fail(f"{first} has no kite-skills-{host}.pyz — run ./build.sh first")
    checkout = offline_rebuild.checkout  # made as under umask 002, at another time
    assert (checkout / "build.sh").stat().st_mode & 0o777 == 0o775
    assert (checkout / "README.md").stat().st_mtime == 1_700_000_000.0
    second = offline_rebuild.dist
    for name in (f"kite-skills-{host}.pyz", WHEEL.name):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    with zipfile.ZipFile(second / f"kite-skills-{host}.pyz") as archive:
        modes = {info.external_attr >> 16 for info in archive.infolist()}
    assert modes == {0o100644, 0o100755}


# The wheel on an index ---------------------------------------------------------------------


def wheel_metadata() -> Message:
    if not WHEEL.is_file():
        pytest.fail(f"{WHEEL} is missing — run ./build.sh first")
    with zipfile.ZipFile(WHEEL) as wheel:
        text = wheel.read(f"kite_skills-{__version__}.dist-info/METADATA").decode()
    return Parser().parsestr(text)


@pytest.mark.zipapp
def test_the_wheels_metadata_is_complete_for_an_index() -> None:
    meta = wheel_metadata()
    assert meta["Name"] == "kite-skills" and meta["Version"] == __version__
    assert "MCP server" in meta["Summary"]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert set(urls) >= {"Homepage", "Documentation", "Releases", "Issues"}
    home = urls["Homepage"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", home), home
    assert all(url.startswith(home + "/") for name, url in urls.items() if name != "Homepage")
    assert urls["Releases"] == f"{home}/releases"
    for name, url in urls.items():  # a page inside the repository exists in this tree
        inside = re.match(rf"{re.escape(home)}/(?:tree|blob)/main/(.+)", url)
        assert inside is None or (ROOT / inside.group(1)).exists(), (name, url)
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    keywords = meta["Keywords"].split(",")
    assert {"mcp", "zerodha", "kite"} <= set(keywords)
    classifiers = meta.get_all("Classifier") or []
    declared = {c.rsplit(" :: ", 1)[1] for c in classifiers if re.search(r":: 3\.\d+$", c)}
    assert sorted(declared) == PYTHONS, "the classifiers name the CPythons the zipapps carry"
    assert meta["Requires-Python"] == f">={PYTHONS[0]}"
    assert "Programming Language :: Python :: 3 :: Only" in classifiers
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    assert any(c.startswith("Topic :: ") for c in classifiers)
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload() == (ROOT / "README.md").read_text(encoding="utf-8")
    with zipfile.ZipFile(WHEEL) as wheel:
        licence = wheel.read(f"kite_skills-{__version__}.dist-info/licenses/LICENSE")
    assert licence == (ROOT / "LICENSE").read_bytes()


# pipx and uv, offline ------------------------------------------------------------------------


def isolated(home: Path, **extra: str) -> dict[str, str]:
    """An environment whose home, caches and package settings are all under ``home``, with
    no index: pip and uv find packages only in .build/wheels."""
    if not WHEEL.is_file() or not any(WHEELHOUSE.glob("mcp-*.whl")):
        pytest.fail(f"{WHEEL} or {WHEELHOUSE} is missing — run ./build.sh first")
    return {
        "PATH": f"{home / 'bin'}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(WHEELHOUSE),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "LC_ALL": "C.UTF-8",
        **extra,
    }


def check_the_command(home: Path, env: dict[str, str]) -> None:
    """The installed command: its version, and one stdio session (initialize, tools/list)."""
    command = home / "bin" / "kite-skills"
    assert command.is_file(), sorted(p.name for p in (home / "bin").iterdir())
    version = subprocess.run(
        [str(command), "--version"], capture_output=True, text=True, env=env, timeout=120
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"kite-skills {__version__}"
    stdin = "".join(json.dumps(m) + "\n" for m in session_messages()[:3])
    served = subprocess.run(
        [str(command)],
        input=stdin,
        capture_output=True,
        text=True,
        env={**env, "KITE_SKILLS_DB": str(home / "skills.db")},
        timeout=120,
    )
    assert served.returncode == 0, served.stderr[-3000:]
    replies = {r["id"]: r for r in map(json.loads, served.stdout.splitlines())}
    assert set(replies) == {1, 2}, served.stdout
    assert replies[1]["result"]["serverInfo"]["name"] == "kite-skills"
    assert {"skillSave", "skillRead"} <= {t["name"] for t in replies[2]["result"]["tools"]}


def newest() -> Interpreter:
    found = runnable()
    assert found, f"no CPython {PYTHONS[0]}-{PYTHONS[-1]} on this machine"
    return found[-1]


@pytest.mark.zipapp
def test_pipx_installs_the_wheel_offline_and_the_command_serves(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = isolated(
        home,
        PIPX_HOME=str(home / "pipx"),
        PIPX_BIN_DIR=str(home / "bin"),
        PIPX_MAN_DIR=str(home / "man"),
    )
    install = subprocess.run(
        [
            *[tool("pipx"), "install", "--python", newest().path],
            *["--pip-args", f"--no-index --find-links {WHEELHOUSE}", str(WHEEL)],
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    assert f"installed package kite-skills {__version__}" in install.stdout, install.stdout
    check_the_command(home, env)


@pytest.mark.zipapp
def test_uv_tool_installs_the_wheel_offline_and_the_command_serves(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = isolated(
        home,
        UV_TOOL_DIR=str(home / "uv-tools"),
        UV_TOOL_BIN_DIR=str(home / "bin"),
        UV_CACHE_DIR=str(home / "uv-cache"),
        UV_PYTHON_DOWNLOADS="never",
        UV_NO_CONFIG="1",
    )
    install = subprocess.run(
        [
            *[tool("uv"), "tool", "install", "--offline", "--no-index"],
            *["--find-links", str(WHEELHOUSE), "--python", newest().path, str(WHEEL)],
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    assert "kite-skills" in install.stdout + install.stderr
    check_the_command(home, env)
