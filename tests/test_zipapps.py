"""The per-platform zipapps as people meet them.

The host's file runs end to end on every CPython on this machine that it accepts
(``--version``, ``help``, an MCP session with a ``skillSave``); every older one, and every
other platform's file, gets one stderr line saying what to run instead. Each other
platform's file is checked statically: a binary of the right format and architecture for
every extension module the program imports and every Python version the file declares,
and the same pure-Python files as the host's, byte for byte.

./build.sh test builds every file once; nothing here rebuilds."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client import advertise

from kite_skills import __version__
from kite_skills.launcher import build_info
from kite_skills.launcher.preamble import PLATFORMS, platform_for
from kite_skills.launcher.start import UNPACKED
from kite_skills.store import Store

from .sandbox.sandbox_harness import http_sandbox
from .server.harness import SKILLS_EXTENSION, custom_request, server_env, zipapp
from .terminal import at_terminal
from .zipapp_platforms import (
    AUTHORS_CATALOG,
    BINARY,
    MODES,
    PYTHONS,
    SANDBOX_URL,
    TOOLS_SESSION,
    Interpreter,
    authors_catalog,
    binary_kinds,
    built_target,
    dashboard,
    distributions,
    extension_suffixes,
    host_name,
    imported_modules,
    local_cpythons,
    platform_file,
    run,
    runnable,
    session,
    session_messages,
    too_old,
)

pytestmark = pytest.mark.zipapp

HOST = platform_for(sys.platform, platform.machine())
OTHERS = sorted(set(PLATFORMS) - {HOST})
RUNNABLE = runnable()
TOO_OLD = too_old()


def ids(interpreter: Interpreter) -> str:
    return interpreter.version


def test_this_machine_has_a_cpython_the_file_accepts() -> None:
    assert {i.version for i in RUNNABLE} >= {f"{sys.version_info[0]}.{sys.version_info[1]}"}


@pytest.mark.parametrize("python", RUNNABLE, ids=ids)
def test_cli_on_every_local_cpython(python: Interpreter, shiv_root: Path, tmp_path: Path) -> None:
    env = server_env(shiv_root, tmp_path / "skills.db")
    version = run(python.path, zipapp(), ["--version"], env)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"kite-skills {__version__}"
    page = run(python.path, zipapp(), ["help", "/orders"], env)
    assert page.returncode == 0, page.stderr
    assert "/orders/reconcile" in page.stdout
    assert "Traceback" not in page.stderr


@pytest.mark.anyio
@pytest.mark.parametrize("python", RUNNABLE, ids=ids)
async def test_mcp_session_on_every_local_cpython(
    python: Interpreter, shiv_root: Path, tmp_path: Path
) -> None:
    db = tmp_path / "skills.db"
    params = StdioServerParameters(
        command=python.path, args=[str(zipapp())], env=server_env(shiv_root, db)
    )
    extensions = [advertise(SKILLS_EXTENSION)]
    async with Client(params, mode="legacy", extensions=extensions) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"skillSave", "skillRead"} <= tools  # help is hidden from Skills clients
        listed = await custom_request(client, "skills/list", {})
        assert "skill://orders/SKILL.md" in {s["uri"] for s in listed["skills"]}
        saved = await client.call_tool(
            "skillSave",
            {
                "name": f"on-python-{python.version.replace('.', '-')}",
                "description": "Saved by the zipapp while running on this interpreter.",
                "body": "# Check\n\n1. Nothing to do.\n",
            },
        )
        assert not saved.is_error, saved
    with Store.open(db) as store:
        assert [s.name for s in store.list_all()] == [
            f"on-python-{python.version.replace('.', '-')}"
        ]


@pytest.mark.parametrize("python", TOO_OLD, ids=ids)
def test_an_older_python_gets_one_line(python: Interpreter, tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    result = run(python.path, zipapp(), ["--version"], server_env(root, tmp_path / "s.db"))
    assert result.returncode == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert re.search(r"runs on CPython 3\.11.3\.14, but it was started with Python", line), line
    assert f"Python {python.version} " in line and "python3.13" in line
    assert "get CPython 3.13 from python.org/downloads, Homebrew" in line, line
    assert "uv python install 3.13" in line, line
    assert not root.exists(), "nothing is unpacked for an interpreter that cannot run it"


@pytest.mark.parametrize("name", OTHERS)
def test_another_platforms_file_names_the_one_to_use(name: str, tmp_path: Path) -> None:
    host = host_name()
    root = tmp_path / "shiv"
    result = run(sys.executable, platform_file(name), ["--version"], server_env(root, tmp_path))
    assert result.returncode == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"kite-skills: kite-skills-{name}.pyz is built for "), line
    assert line.endswith(
        f"download kite-skills-{host}.pyz instead (from the same place as this file)"
    ), line
    assert not root.exists()


def test_every_file_declares_its_platform_and_cpython_3_11_to_3_14() -> None:
    for name in PLATFORMS:
        assert built_target(platform_file(name)) == {"platform": name, "pythons": PYTHONS}
    assert zipapp().read_bytes() == platform_file(host_name()).read_bytes()


@pytest.fixture(scope="module")
def import_logs(shiv_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """Every mode of the host's file, on every CPython here, with the import log on:
    mode label -> the modules it imported (on any interpreter). They run from the worker's
    extraction (``shiv_root``, tests/conftest.py), which the tests above unpacked for each
    CPython (and wrote its bytecode): a
    first start imports more of the standard library and shiv's bootstrap, but nothing more
    of the file's distributions, so a fresh cache per CPython would only unpack and compile
    again."""
    logs: dict[str, set[str]] = {}
    for python in RUNNABLE:
        work = tmp_path_factory.mktemp(f"imports-{python.version}")
        env = server_env(shiv_root, work / "skills.db", PYTHONPROFILEIMPORTTIME="1")
        env["HOME"] = str(work)
        for label, args, _ in MODES:
            if label in ("server", "server-modern"):
                era = "modern" if label == "server-modern" else "legacy"
                code, replies, err = session([python.path, str(zipapp())], env, era)
                sent = {m["id"] for m in session_messages(era) if "id" in m}
                assert set(replies) == sent, (python.version, label, err[-3000:])
                assert all("result" in r for i, r in replies.items() if i != 10), (label, replies)
                assert replies[11]["result"]["isError"] is True, replies[11]  # type: ignore[index]
            elif label == "sandbox":
                argv = [python.path, str(zipapp()), *args]
                code, replies, err = session(argv, env, messages=TOOLS_SESSION)
                tools = replies[2]["result"]["tools"]  # type: ignore[index]
                assert "portfolio" in {t["name"] for t in tools}, (python.version, err[-3000:])
            elif label == "guard-url":
                with http_sandbox(work, work / "sandbox.jsonl") as (port, token, _):
                    url = f"http://127.0.0.1:{port}/mcp"
                    argv = [
                        python.path,
                        str(zipapp()),
                        *(url if a == SANDBOX_URL else a for a in args),
                    ]
                    code, replies, err = session(
                        argv, {**env, "SANDBOX_TOKEN": token}, messages=TOOLS_SESSION
                    )
                tools = replies[2]["result"]["tools"]  # type: ignore[index]
                assert "portfolio" in {t["name"] for t in tools}, (python.version, err[-3000:])
            elif label == "dashboard":
                code, err = dashboard([python.path, str(zipapp())], env)
            elif label == "skills-publish":  # the person types the name at the terminal
                typed = at_terminal([python.path, str(zipapp()), *args], env, ["import-check"])
                code, err = typed.returncode, typed.stderr
            else:
                authors = authors_catalog(work / "authors") if AUTHORS_CATALOG in args else None
                args = [str(authors) if a == AUTHORS_CATALOG else a for a in args]
                result = run(python.path, zipapp(), args, env)
                code, err = result.returncode, result.stderr
            assert code == 0, (python.version, label, err[-3000:])
            assert "Traceback" not in err, (python.version, label)
            logs.setdefault(label, set()).update(imported_modules(err))
    return logs


def test_the_file_holds_only_what_some_mode_imports(import_logs: dict[str, set[str]]) -> None:
    owner = distributions(zipapp())
    shipped = set(owner.values())
    imported = {
        owner[m.split(".")[0]]
        for ms in import_logs.values()
        for m in ms
        if m.split(".")[0] in owner
    }
    unused = shipped - imported - {"kite_skills"}
    assert not unused, (
        f"nothing imports {sorted(unused)}: list them in requirements/not-in-zipapp.txt"
    )
    dropped = [
        line.strip()
        for line in (Path(__file__).parents[1] / "requirements" / "not-in-zipapp.txt")
        .read_text()
        .splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert dropped and not {d.lower() for d in dropped} & {s.lower() for s in shipped}


def test_the_server_imports_mcps_windows_helpers(import_logs: dict[str, set[str]]) -> None:
    # mcp.server.stdio imports mcp.os.win32.utilities, which on Windows imports pywin32
    # (win32api, win32con, win32job, pywintypes): so the Windows file must carry pywin32.
    assert "mcp.os.win32.utilities" in import_logs["server"]
    names = set(zipfile.ZipFile(platform_file("windows-amd64")).namelist())
    for python in PYTHONS:
        tree = f"site-packages/_per_version/cp{python.replace('.', '')}"
        for module in ("win32/win32api.pyd", "win32/win32job.pyd", "win32/lib/win32con.py"):
            assert f"{tree}/{module}" in names
        dll = f"{tree}/pywin32_system32/pywintypes{python.replace('.', '')}.dll"
        assert dll in names
    assert "site-packages/kite-skills-per-version.pth" in names


@pytest.fixture(scope="module")
def extension_modules(import_logs: dict[str, set[str]]) -> list[str]:
    """Imported modules that are compiled extensions in the host's file."""
    binaries = [n for n in zipfile.ZipFile(zipapp()).namelist() if n.endswith((".so", ".pyd"))]
    found = []
    for module in sorted(set().union(*import_logs.values())):
        stem = "site-packages/" + module.replace(".", "/") + "."
        if any(n.startswith(stem) for n in binaries):
            found.append(module)
    return found


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_each_extension_module_has_a_binary_for_every_declared_python(
    name: str, extension_modules: list[str]
) -> None:
    modules = extension_modules
    assert {"pydantic_core._pydantic_core", "rpds.rpds", "_cffi_backend"} <= set(modules)
    with zipfile.ZipFile(platform_file(name)) as archive:
        names = set(archive.namelist())
        for module in modules:
            stem = "site-packages/" + module.replace(".", "/")
            for python in PYTHONS:
                suffixes = extension_suffixes(name, python)[:2]  # tagged or abi3, never bare
                matches = [stem + s for s in suffixes if stem + s in names]
                assert matches, f"{name}: no {module} for CPython {python} ({suffixes})"
                with archive.open(matches[0]) as binary:  # its headers, not all of it
                    kinds = binary_kinds(binary.read(4096))
                assert BINARY[name] in kinds, f"{matches[0]} is {kinds}, not {BINARY[name]}"


def comparable(archive: zipfile.ZipFile) -> dict[str, bytes]:
    """The pure-Python part of a file: what must be the same on every platform."""
    kept = {}
    for info in archive.infolist():
        n = info.filename
        if (
            n.endswith((".so", ".pyd", ".dll"))
            or n in ("environment.json", build_info.MEMBER)
            or re.search(r"\.dist-info/(RECORD|WHEEL|sboms/)", n)
            or "/_per_version/" in n
            or n.endswith(("/kite-skills-per-version.pth", "/_kite_skills_per_version.py"))
        ):
            continue
        kept[n] = archive.read(info)
    return kept


def compiled_distributions(pyz: Path) -> set[str]:
    owner = distributions(pyz)
    names = zipfile.ZipFile(pyz).namelist()
    tops = {n.split("/")[1] for n in names if n.startswith("site-packages/") and n.endswith(".so")}
    return {owner[re.sub(r"\..*$", "", top)] for top in tops}


@pytest.mark.parametrize("name", OTHERS)
def test_pure_python_files_match_the_host_build_byte_for_byte(name: str) -> None:
    """Byte for byte, except that a compiled package's wheel built on Windows may ship its
    text files with CRLF line ends (pydantic_core's, cffi's): those match line for line."""
    owner = distributions(zipapp())
    compiled = compiled_distributions(zipapp())
    with zipfile.ZipFile(zipapp()) as host, zipfile.ZipFile(platform_file(name)) as other:
        ours, theirs = comparable(host), comparable(other)
    assert sorted(ours) == sorted(theirs)
    different = [n for n in ours if ours[n] != theirs[n]]
    for n in different:
        top = re.sub(r"(-[^-/]+\.dist-info|\.py)$", "", n.split("/")[1])
        distribution = owner.get(top) or top.replace("_", "-")
        assert name.startswith("windows") and (
            distribution in compiled or distribution.replace("-", "_") in compiled
        ), f"{n} differs from the host's"
        assert ours[n] == theirs[n].replace(b"\r\n", b"\n"), f"{n} differs beyond line ends"
    assert sum(n.endswith(".py") for n in ours) > 500


def test_every_local_interpreter_was_found() -> None:
    versions = {i.version for i in local_cpythons()}
    assert f"{sys.version_info[0]}.{sys.version_info[1]}" in versions


@pytest.fixture(scope="module")
def windows_site_packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Windows file's site-packages, unpacked as shiv would (each CPython's pywin32 win32
    folder, and the .pth), once for every CPython's test: site.addsitedir only reads it."""
    folder = tmp_path_factory.mktemp("windows")
    with zipfile.ZipFile(platform_file("windows-amd64")) as archive:
        members = [n for n in archive.namelist() if n.startswith("site-packages/")]
        members = [n for n in members if "/_per_version/" not in n or "/win32/" in n or ".pth" in n]
        archive.extractall(folder, members)
    return folder / "site-packages"


@pytest.mark.parametrize("python", RUNNABLE, ids=ids)
def test_the_windows_file_puts_its_interpreters_pywin32_on_sys_path(
    python: Interpreter, windows_site_packages: Path
) -> None:
    """What shiv's bootstrap does with the Windows file's site-packages (site.addsitedir),
    on this OS: the .pth adds this version's pywin32 tree and its win32 folder."""
    site_packages = windows_site_packages
    code = (
        "import site, sys; site.addsitedir(sys.argv[1]); "
        "print('\\n'.join(p for p in sys.path if '_per_version' in p))"
    )
    result = subprocess.run(
        [python.path, "-S", "-c", code, str(site_packages)], capture_output=True, text=True
    )
    tree = site_packages / "_per_version" / f"cp{python.version.replace('.', '')}"
    assert result.stdout.split() == [str(tree), str(tree / "win32")], result.stderr


def test_a_server_parses_no_markdown_and_reads_no_tool_schemas(tmp_path: Path) -> None:
    """The build stores what the parser finds in the shipped catalog, under a fingerprint of
    the packed parser: through the first tools/list and the first help pages (the root and a
    recipe, whose links become help keys) the server imports no Markdown parser, so every body
    was found there and the fingerprint matched. Nor does it load the recorded Kite tool
    schemas, which only a catalog check reads."""
    assert (
        "site-packages/skills_catalog/markdown-facts.json" in zipfile.ZipFile(zipapp()).namelist()
    )
    env = server_env(tmp_path / "shiv", tmp_path / "skills.db", PYTHONPROFILEIMPORTTIME="1")
    initialize, initialized, tools_list = session_messages()[:3]
    # A client without the Skills extension: help answers it with pages.
    initialize = {**initialize, "params": {**initialize["params"], "capabilities": {}}}
    helps = [
        {"jsonrpc": "2.0", "id": n, "method": "tools/call",
         "params": {"name": "help", "arguments": {"key": key}}}
        for n, key in ((3, "/"), (4, "/orders/prepare"))
    ]  # fmt: skip
    lines = [initialize, initialized, tools_list, *helps]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    for _ in range(2):  # the first run unpacks; the second is a warm start
        result = run(sys.executable, zipapp(), [], env, stdin=stdin)
        assert result.returncode == 0, result.stderr[-3000:]
        replies = [json.loads(line) for line in result.stdout.splitlines()]
        assert [reply["id"] for reply in replies] == [1, 2, 3, 4]
        recipe = replies[3]["result"]
        assert not recipe.get("isError") and "(`/" in recipe["content"][0]["text"]  # keyed links
        modules = imported_modules(result.stderr)
        assert "kite_skills.catalog.loader" in modules
        assert not {m for m in modules if m.startswith(("markdown_it", "mdurl"))}
        assert "kite_skills.kite_schemas" not in modules
        assert "argparse" not in modules  # serving builds no command-line parser


def test_a_warm_start_runs_without_shivs_bootstrap_unless_a_shiv_setting_asks(
    tmp_path: Path,
) -> None:
    """Once this CPython's files are unpacked, the start puts them on sys.path itself: neither
    shiv's bootstrap nor the archive's copy of the preamble is compiled and run again (the
    unpacked preamble still checks the machine and holds the cache). A SHIV_* setting other
    than SHIV_ROOT is shiv's to read, so such a start still goes through shiv's bootstrap."""
    env = server_env(tmp_path / "shiv", tmp_path / "skills.db", PYTHONPROFILEIMPORTTIME="1")
    first = run(sys.executable, zipapp(), ["--version"], env)
    warm = run(sys.executable, zipapp(), ["--version"], env)
    for result in (first, warm):
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.startswith("kite-skills ")
    assert "_bootstrap" in imported_modules(first.stderr)
    # The archive's preamble unpacked only this CPython's files (shiv's would unpack all).
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert list((tmp_path / "shiv").glob(f"kite-skills_*/site-packages/{UNPACKED.format(tag=tag)}"))
    warm_modules = imported_modules(warm.stderr)
    assert "_bootstrap" not in warm_modules
    # Imported (not run from the archive, which the import log does not list): the unpacked
    # copy's checks ran.
    assert "kite_skills.launcher.preamble" in warm_modules
    (lock,) = (tmp_path / "shiv").glob(".kite-skills_*.kite-skills-in-use")
    assert lock.is_file()

    env.pop("PYTHONPROFILEIMPORTTIME")
    shiv_said = run(sys.executable, zipapp(), [], {**env, "SHIV_ENTRY_POINT": "os:getcwd"})
    assert shiv_said.returncode == 1  # shiv's bootstrap exits with what the entry point returned
    assert shiv_said.stderr.strip() == os.getcwd()


# Runs the file as `python FILE` does (runpy on the archive), then writes where every loaded
# module came from: a module's name and its file.
MODULES_PROBE = """import json, runpy, sys
pyz, out = sys.argv[1], sys.argv[2]
sys.argv = [pyz, *sys.argv[3:]]
try:
    runpy.run_path(pyz, run_name="__main__")
except SystemExit:
    pass
with open(out, "w") as written:
    json.dump({n: getattr(m, "__file__", None) for n, m in list(sys.modules.items())}, written)
"""


def loaded_from(tmp_path: Path, env: dict[str, str], name: str, *args: str) -> dict[str, str]:
    """Module name -> file, for the modules a start of the built file loaded."""
    out = tmp_path / f"{name}.json"
    result = subprocess.run(
        [sys.executable, "-c", MODULES_PROBE, str(zipapp()), str(out), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # -c puts the working directory first on sys.path: not the checkout
        timeout=120,
        check=False,
    )
    assert out.is_file(), result.stderr[-3000:]
    return {n: f for n, f in json.loads(out.read_text()).items() if f}


def test_no_launcher_file_runs_under_two_names(tmp_path: Path) -> None:
    """Each launcher module (kite_skills/launcher/) is in the archive once, as the package's
    own file, and runs under its one name, kite_skills.launcher.<module>: from the archive
    before anything is unpacked, from the unpacked copy after (where its bytecode is kept),
    never as a copy under another name."""
    pyz = zipapp()
    launcher = "site-packages/kite_skills/launcher/"
    with zipfile.ZipFile(pyz) as archive:
        members = [i for i in archive.infolist() if not i.is_dir()]
        mine = [
            i for i in members if i.filename.startswith(launcher) and i.filename.endswith(".py")
        ]
        # A copy has the same checksum and size: only those members are read and compared.
        alike = {(i.CRC, i.file_size) for i in mine}
        bodies = {i.filename: archive.read(i) for i in members if (i.CRC, i.file_size) in alike}
        names = [i.filename for i in members]
    ours = {i.filename: bodies[i.filename] for i in mine}
    assert {n.removeprefix(launcher) for n in ours} == {
        f"{m}.py"
        for m in (
            "__init__",
            "first",
            "start",
            "preamble",
            "build_info",
            "bytecode",
            "compile_ahead",
        )
    }
    for member, body in ours.items():
        assert [n for n, b in bodies.items() if b == body] == [member]  # no copy elsewhere
    assert not [n for n in names if n.startswith("_kite_skills")]  # no archive-root copies

    env = server_env(tmp_path / "shiv", tmp_path / "skills.db", PYTHONDONTWRITEBYTECODE="1")
    starts = {
        "first": loaded_from(tmp_path, env, "first", "--version"),
        "warm": loaded_from(tmp_path, env, "warm", "--version"),
        "server": loaded_from(tmp_path, env, "server"),  # stops at once: writes bytecode
    }
    (extraction,) = (tmp_path / "shiv").glob("kite-skills_*")
    in_archive = str(pyz) + os.sep
    in_cache = str(extraction / "site-packages" / "kite_skills" / "launcher") + os.sep
    for start, modules in starts.items():
        names: dict[str, set[str]] = {}
        for name, file in modules.items():
            assert not name.startswith("_kite_skills"), (start, name, file)
            if file.startswith(in_archive + launcher.replace("/", os.sep)) or file.startswith(
                in_cache
            ):
                names.setdefault(Path(file).stem, set()).add(name)
        assert all(len(n) == 1 for n in names.values()), (start, names)
        for stem, (name,) in names.items():
            assert name == (
                "kite_skills.launcher" if stem == "__init__" else f"kite_skills.launcher.{stem}"
            )
        seen = {n: f for n, f in modules.items() if n.startswith("kite_skills.launcher")}
        assert {"first", "start", "preamble", "build_info"} <= set(names), (start, seen)
        # The archive's first module and start always run from the archive.
        for name in ("first", "start"):
            assert modules[f"kite_skills.launcher.{name}"].startswith(in_archive), (start, name)
    # Before unpacking, the preamble and the facts are read from the archive; after, from
    # the unpacked copy (its bytecode cached), whatever the start.
    for name in ("preamble", "build_info"):
        assert starts["first"][f"kite_skills.launcher.{name}"].startswith(in_archive)
        assert starts["warm"][f"kite_skills.launcher.{name}"].startswith(in_cache)
    assert starts["server"]["kite_skills.launcher.bytecode"].startswith(in_cache)


def test_doctor_reports_the_build_info(tmp_path: Path) -> None:
    """doctor names the file, what it was built for (the build's facts, from its build-info
    member) and where it is unpacked."""
    pyz = zipapp()
    with zipfile.ZipFile(pyz) as archive:
        facts = build_info.loads(archive.read(build_info.MEMBER))
    assert facts == build_info.BuildInfo(HOST or "", tuple(PYTHONS), __version__)
    home = tmp_path / "home"
    env = server_env(tmp_path / "shiv", home / "skills.db", HOME=str(home))
    result = run(sys.executable, pyz, ["doctor"], env)
    assert result.returncode == 0, result.stderr[-3000:]
    (extraction,) = (tmp_path / "shiv").glob("kite-skills_*")
    lines = result.stdout.splitlines()
    assert lines[1:3] == [
        f"file:          {pyz}",
        f"built for:     {HOST}, CPython 3.11–3.14 (kite-skills {__version__})",
    ]
    assert lines[3].startswith(f"extracted to:  {extraction} (")
