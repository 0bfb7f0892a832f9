"""``kite-skills install-command [--uninstall] [--dir DIR]`` run for real: a launcher in a
temporary HOME's ~/.local/bin that starts the file, run by the shell; never someone else's
file overwritten or removed."""

from __future__ import annotations

import shlex
import stat
import sys
from pathlib import Path

from kite_skills import __version__
from kite_skills.cli.install import launcher_text

from .small_zipapp import environment, make_pyz, run, run_pyz


def one_line(text: str) -> str:
    (line,) = text.splitlines()
    assert "Traceback" not in line
    return line


def test_writes_a_launcher_that_starts_this_file(tmp_path: Path, apps: Path) -> None:
    home = tmp_path / "home"
    bin_dir = home / ".local" / "bin"
    pyz = make_pyz(apps)
    env = environment(home, bin_dir)
    done = run_pyz(pyz, ["install-command"], env)
    assert done.returncode == 0, done.stderr
    launcher = bin_dir / "kite-skills"
    assert done.stdout == (
        f"kite-skills: wrote {launcher}: 'kite-skills' starts "
        f"{shlex.join([sys.executable, str(pyz)])}\n"
    )
    assert done.stderr == ""  # its folder is on PATH: nothing to warn about
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o755
    assert launcher.read_text() == (
        "#!/bin/sh\n# written by 'kite-skills install-command'\n"
        f'exec {shlex.join([sys.executable, str(pyz)])} "$@"\n'
    )
    version = run(["kite-skills", "--version"], env)  # found on PATH, run by the kernel
    assert (version.returncode, version.stdout) == (0, f"kite-skills {__version__}\n")


def test_running_it_again_changes_nothing(tmp_path: Path, apps: Path) -> None:
    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home, home / ".local" / "bin")
    assert run_pyz(pyz, ["install-command"], env).returncode == 0
    launcher = home / ".local" / "bin" / "kite-skills"
    before = launcher.stat()
    again = run_pyz(pyz, ["install-command"], env)
    assert again.returncode == 0
    assert again.stdout.endswith("; unchanged\n") and str(launcher) in again.stdout
    assert launcher.stat().st_ino == before.st_ino  # not rewritten


def test_its_own_launcher_for_another_file_is_updated(tmp_path: Path, apps: Path) -> None:
    home = tmp_path / "home"
    env = environment(home, home / ".local" / "bin")
    old = make_pyz(apps / "old")
    new = make_pyz(apps / "new")
    assert run_pyz(old, ["install-command"], env).returncode == 0
    moved = run_pyz(new, ["install-command"], env)
    assert moved.returncode == 0, moved.stderr
    assert f"updated from {shlex.join([sys.executable, str(old)])} to " in moved.stdout
    assert str(new) in (home / ".local" / "bin" / "kite-skills").read_text()


def test_someone_elses_file_is_never_overwritten(tmp_path: Path, apps: Path) -> None:
    home = tmp_path / "home"
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    theirs = bin_dir / "kite-skills"
    theirs.write_text("#!/bin/sh\necho mine\n")
    pyz = make_pyz(apps)
    env = environment(home, bin_dir)
    for args in (["install-command"], ["install-command", "--uninstall"]):
        refused = run_pyz(pyz, args, env)
        assert refused.returncode == 1
        line = one_line(refused.stderr)
        assert line.startswith(
            f"kite-skills: error: {theirs} already exists and kite-skills did not write it "
            "(its first line: '#!/bin/sh'); nothing was changed — "
        )
        assert "--dir DIR" in line
        assert theirs.read_text() == "#!/bin/sh\necho mine\n"


def test_uninstall_removes_only_its_own_launcher(tmp_path: Path, apps: Path) -> None:
    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home, home / ".local" / "bin")
    assert run_pyz(pyz, ["install-command"], env).returncode == 0
    launcher = home / ".local" / "bin" / "kite-skills"
    removed = run_pyz(pyz, ["install-command", "--uninstall"], env)
    assert (removed.returncode, removed.stdout) == (0, f"kite-skills: removed {launcher}\n")
    assert not launcher.exists()
    nothing = run_pyz(pyz, ["install-command", "--uninstall"], env)
    assert (nothing.returncode, nothing.stdout) == (0, f"kite-skills: no launcher at {launcher}\n")


def test_a_folder_not_on_path_is_named_with_the_fix(tmp_path: Path, apps: Path) -> None:
    home = tmp_path / "home"
    elsewhere = tmp_path / "my bin"
    pyz = make_pyz(apps)
    done = run_pyz(pyz, ["install-command", "--dir", str(elsewhere)], environment(home))
    assert done.returncode == 0, done.stderr
    assert (elsewhere / "kite-skills").is_file()
    warning = one_line(done.stderr)
    assert warning.startswith(
        f"kite-skills: warning: {elsewhere} is not on your PATH, so 'kite-skills' is not found "
        "yet — add it to PATH: "
    )
    assert f'export PATH="{elsewhere}:$PATH"' in warning


def test_the_windows_launcher_is_a_cmd_file() -> None:
    text = launcher_text((r"C:\Python313\python.exe", r"C:\My Apps\kite-skills.pyz"), "win32")
    assert text == (
        "@echo off\r\nrem written by 'kite-skills install-command'\r\n"
        'C:\\Python313\\python.exe "C:\\My Apps\\kite-skills.pyz" %*\r\n'
    )
