"""Every hint names a command that works here (kite_skills/invocation.py): ``kite-skills`` when
that command starts this program, else the interpreter and the file (a downloaded .pyz has no
command of its own), else ``python -m kite_skills``. Checked for each way of starting it, on
real files and processes: the CLI's hints, the dashboard's sign-in page, and what an agent is
told (what to ask the person, never a command to run)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from kite_skills.invocation import describe, fragile_place, launcher_text, quote
from kite_skills.store import Store, agent

from .small_zipapp import environment, make_pyz, run, run_pyz


def test_a_zipapp_is_started_with_its_interpreter_and_file(tmp_path: Path) -> None:
    pyz = tmp_path / "my files" / "kite-skills.pyz"
    here = describe(str(pyz), "/usr/bin/python3", {"PATH": ""}, "linux", zipapp=True)
    assert here.words == ("/usr/bin/python3", str(pyz))
    assert here.command == f"/usr/bin/python3 '{pyz}'"  # quoted for sh: the space
    assert here.run("dashboard") == f"/usr/bin/python3 '{pyz}' dashboard"
    windows = describe(r"C:\My Files\k.pyz", r"C:\Python313\python.exe", {}, "win32", zipapp=True)
    assert windows.command == r'C:\Python313\python.exe "C:\My Files\k.pyz"'


def test_an_installed_command_on_path_is_just_its_name(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "kite-skills"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    on_path = describe(str(script), "/py", {"PATH": str(bin_dir)}, "linux", zipapp=False)
    assert (on_path.command, on_path.words) == ("kite-skills", (str(script),))
    elsewhere = describe(str(script), "/py", {"PATH": "/usr/bin"}, "linux", zipapp=False)
    assert elsewhere.command == str(script)  # a venv's script, not on PATH: its full path


def _launcher(bin_dir: Path, words: tuple[str, ...]) -> Path:
    """The launcher ``install-command`` writes for ``words``, on a PATH folder of its own."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    launcher = bin_dir / "kite-skills"
    launcher.write_text(launcher_text(words, "linux"), encoding="utf-8")
    launcher.chmod(0o755)
    return launcher


@pytest.mark.parametrize(
    ("written_for", "started"),
    [
        (("/usr/bin/python3", "/apps/kite-skills.pyz"), "/apps/old/kite-skills.pyz"),
        (("/usr/bin/python3", "/apps/kite-skills.pyz"), "/apps/kite-skills.py"),  # a prefix
        (("/usr/bin/python3", "/apps/kite-skills.pyz.bak"), "/apps/kite-skills.pyz"),
        (("/opt/python3.12/bin/python3", "/apps/kite-skills.pyz"), "/apps/kite-skills.pyz"),
    ],
)
def test_a_launcher_written_for_another_copy_is_not_this_program(
    tmp_path: Path, written_for: tuple[str, ...], started: str
) -> None:
    """The hints name ``kite-skills`` only when that command starts this very file with this
    interpreter; a launcher install-command wrote for another copy starts something else."""
    bin_dir = tmp_path / "bin"
    _launcher(bin_dir, written_for)
    here = describe(started, "/usr/bin/python3", {"PATH": str(bin_dir)}, "linux", zipapp=True)
    assert here.on_path is False
    assert here.command == f"/usr/bin/python3 {started}"


def test_the_launcher_written_for_this_copy_is_this_program(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _launcher(bin_dir, ("/usr/bin/python3", "/apps/kite-skills.pyz"))
    env = {"PATH": f"{tmp_path / 'empty'}:{bin_dir}"}
    here = describe("/apps/kite-skills.pyz", "/usr/bin/python3", env, "linux", zipapp=True)
    assert (here.on_path, here.command) == (True, "kite-skills")
    # the first kite-skills on PATH is the one a shell runs: another copy's launcher hides it
    _launcher(tmp_path / "first", ("/usr/bin/python3", "/apps/old/kite-skills.pyz"))
    env = {"PATH": f"{tmp_path / 'first'}:{bin_dir}"}
    here = describe("/apps/kite-skills.pyz", "/usr/bin/python3", env, "linux", zipapp=True)
    assert here.on_path is False


def test_another_installs_console_script_on_path_is_not_this_program(tmp_path: Path) -> None:
    scripts = []
    for name in ("venv-a", "venv-b"):
        folder = tmp_path / name / "bin"
        folder.mkdir(parents=True)
        script = folder / "kite-skills"
        script.write_text("#!/bin/sh\n")
        script.chmod(0o755)
        scripts.append(script)
    a, b = scripts
    env = {"PATH": str(a.parent)}
    assert describe(str(a), "/py", env, "linux", zipapp=False).command == "kite-skills"
    assert describe(str(b), "/py", env, "linux", zipapp=False).command == str(b)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "kite-skills").symlink_to(b)  # a link to this very script is this program
    env = {"PATH": str(linked)}
    assert describe(str(b), "/py", env, "linux", zipapp=False).command == "kite-skills"


def test_otherwise_python_dash_m(tmp_path: Path) -> None:
    here = describe(
        "/x/site-packages/kite_skills/__main__.py", "/v/bin/python", {}, "linux", zipapp=False
    )
    assert here.command == "/v/bin/python -m kite_skills"


def test_downloads_and_temp_folders_are_fragile(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    warning = fragile_place(str(tmp_path / "Downloads" / "k.pyz"), env, "linux")
    assert warning is not None and "Downloads" in warning and "move it" in warning
    assert fragile_place("/tmp/k.pyz", env, "linux") is not None
    assert fragile_place("/opt/kite/k.pyz", env, "linux") is None


def test_cli_hints_name_the_interpreter_and_file(tmp_path: Path, apps: Path) -> None:
    """A person who downloaded the file is told to type the interpreter and the file."""
    home = tmp_path / "home"
    pyz = make_pyz(apps / "my apps")  # a space: the hint quotes it
    env = environment(home)
    with Store.open(home / "skills.db") as store:
        agent.save(store, "g1", "Holdings", "1. Sum.\n", who="bot 1")
    shown = run_pyz(pyz, ["skills", "show", "g1"], env)
    assert shown.returncode == 0, shown.stderr
    kite = shlex.join([sys.executable, str(pyz)])
    assert f"publish it with: {kite} skills publish g1 --rev " in shown.stdout
    assert "kite-skills skills publish" not in shown.stdout
    # The refusal of a publish without the reviewed revision names it too.
    refused = run_pyz(pyz, ["skills", "publish", "g1"], env)
    assert refused.returncode == 1
    assert f"run '{kite} skills show g1'" in refused.stderr


def test_after_install_command_the_hints_say_kite_skills(tmp_path: Path, apps: Path) -> None:
    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home, home / ".local" / "bin")
    with Store.open(home / "skills.db") as store:
        agent.save(store, "g1", "Holdings", "1. Sum.\n", who="bot 1")
    assert run_pyz(pyz, ["install-command"], env).returncode == 0
    for command in ([sys.executable, str(pyz)], ["kite-skills"]):  # the file, or the launcher
        shown = run([*command, "skills", "show", "g1"], env)
        assert shown.returncode == 0, shown.stderr
        assert "publish it with: kite-skills skills publish g1 --rev " in shown.stdout


def test_the_dashboards_sign_in_page_names_the_command(tmp_path: Path, apps: Path) -> None:
    """A browser without a valid link gets 'Not signed in' with the command that started
    this dashboard (its terminal shows the newest link)."""
    pyz = make_pyz(apps)
    env = environment(tmp_path / "home")
    process = subprocess.Popen(
        [sys.executable, str(pyz), "dashboard", "--port", "0", "--no-browser"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert process.stderr is not None
        port = None
        for _ in range(20):
            line = process.stderr.readline()
            found = re.search(r"http://127\.0\.0\.1:(\d+)/skills\?token=", line)
            if found:
                port = found.group(1)
                break
        assert port, "the dashboard printed no link"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/skills", timeout=30)
        page = refused.value.read().decode()
        assert refused.value.code == 403 and "Not signed in" in page
        kite = shlex.join([sys.executable, str(pyz)])
        assert f"the newest link that &#x27;{kite} dashboard&#x27; printed" in page
    finally:
        process.terminate()
        process.wait(timeout=30)
        time.sleep(0)


def test_an_agent_is_told_what_to_ask_the_person(tmp_path: Path) -> None:
    """The store's messages to an agent name the command for the person, and never tell the
    agent to run one."""
    kite = quote(["/usr/bin/python3", "/home/p/kite-skills.pyz"], "linux")
    with Store.open(tmp_path / "s.db", command=kite) as store:
        saved = agent.save(store, "g1", "Holdings", "1. Sum.\n", who="bot 1")
        assert saved.message == (
            "saved 'g1' as a new draft; agents cannot list or read it until a person "
            "publishes it: ask the person to open their kite-skills dashboard (they can start "
            f"it with: {kite} dashboard) and publish 'g1' there"
        )
        with pytest.raises(Exception) as refused:
            agent.republish(store, "g1", who="bot 1")
        assert "ask the person to open their kite-skills dashboard" in str(refused.value)
        assert "'kite-skills skills" not in str(refused.value)
        with pytest.raises(Exception) as unread:
            store.read_live("g1")
        assert f"(they can start it with: {kite} dashboard)" in str(unread.value)
