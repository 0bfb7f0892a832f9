"""tools/zipapps.py installs each platform's compiled wheels without a pip process: it picks,
for each pin, the wheel pip would choose for that platform and CPython (``wheels_for``), and
unpacks it as ``pip install --target`` lays it out (``install``). The built files run on
every local CPython and under qemu (test_zipapps.py, test_aarch64.py); here are the choices
and the layout themselves, on wheelhouses and wheels made in the test."""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path

import pytest

from .tool_modules import load_tool

zipapps = load_tool("zipapps")


def wheelhouse(tmp_path: Path, *names: str) -> Path:
    """A folder of wheels by name only: ``wheels_for`` reads no wheel's contents."""
    for name in names:
        (tmp_path / name).write_bytes(b"")
    return tmp_path


def chosen(folder: Path, target: str, version: str, *pins: str) -> list[str]:
    return [p.name for p in zipapps.wheels_for(folder, target, version, list(pins))]


def test_each_cpython_gets_the_wheel_of_its_own_version(tmp_path: Path) -> None:
    folder = wheelhouse(
        tmp_path,
        *(
            f"pydantic_core-2.50.5-cp3{m}-cp3{m}-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
            for m in (11, 12, 13, 14)
        ),
        "pydantic_core-2.50.5-cp312-cp312-manylinux2014_aarch64.manylinux_2_17_aarch64.whl",
        "pydantic_core-2.50.5-cp312-cp312-win_amd64.whl",
        "pydantic_core-2.49.0-cp313-cp313-manylinux2014_x86_64.whl",  # an older lock's
    )
    for version in zipapps.PYTHONS:
        tag = "cp" + version.replace(".", "")
        assert chosen(folder, "linux-x86_64", version, "pydantic-core==2.50.5") == [
            f"pydantic_core-2.50.5-{tag}-{tag}-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
        ]
    assert chosen(folder, "windows-amd64", "3.12", "pydantic_core==2.50.5") == [
        "pydantic_core-2.50.5-cp312-cp312-win_amd64.whl"
    ]


def test_one_abi3_wheel_serves_every_later_cpython(tmp_path: Path) -> None:
    folder = wheelhouse(
        tmp_path,
        "cryptography-48.0.1-cp311-abi3-win_amd64.whl",
        "cryptography-48.0.1-cp311-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
    )
    for version in zipapps.PYTHONS:
        assert chosen(folder, "windows-amd64", version, "cryptography==48.0.1") == [
            "cryptography-48.0.1-cp311-abi3-win_amd64.whl"
        ]


def test_a_mac_takes_its_own_architecture_first_then_universal2(tmp_path: Path) -> None:
    """pip adds older macOS versions and universal2 to the platform it is given."""
    universal = "cryptography-48.0.1-cp311-abi3-macosx_10_9_universal2.whl"
    arm = "cffi-2.1.1-cp313-cp313-macosx_11_0_arm64.whl"
    folder = wheelhouse(
        tmp_path,
        universal,
        arm,
        "cffi-2.1.1-cp313-cp313-macosx_10_9_universal2.whl",
        "markupsafe-3.0.4-cp313-cp313-macosx_10_13_x86_64.whl",
    )
    assert chosen(folder, "macos-arm64", "3.13", "cryptography==48.0.1", "cffi==2.1.1") == [
        universal,
        arm,
    ]
    assert chosen(folder, "macos-x86_64", "3.13", "cryptography==48.0.1", "markupsafe==3.0.4") == [
        universal,
        "markupsafe-3.0.4-cp313-cp313-macosx_10_13_x86_64.whl",
    ]


def test_a_pin_without_a_wheel_for_the_platform_names_what_is_missing(tmp_path: Path) -> None:
    folder = wheelhouse(
        tmp_path,
        "rpds_py-2026.9.1-cp312-cp312-win_amd64.whl",
        "rpds_py-2026.9.1-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    )
    with pytest.raises(SystemExit) as stopped:
        zipapps.wheels_for(folder, "linux-aarch64", "3.12", ["rpds-py==2026.9.1"])
    message = str(stopped.value)
    assert "no wheel of rpds-py==2026.9.1 for CPython 3.12 on linux-aarch64" in message
    assert str(folder) in message and "./build.sh" in message


def test_a_file_not_named_as_a_wheel_is_named_in_one_line(tmp_path: Path) -> None:
    folder = wheelhouse(tmp_path, "cffi-2.1.1-cp312-cp312-win_amd64.whl", "download.whl")
    with pytest.raises(SystemExit) as stopped:
        zipapps.wheels_for(folder, "windows-amd64", "3.12", ["cffi==2.1.1"])
    (line,) = str(stopped.value).splitlines()
    assert line.startswith(f"zipapps.py: {folder / 'download.whl'}: ")
    assert line.endswith(f"— remove it from {folder}")


def make_wheel(folder: Path) -> Path:
    """A compiled-looking wheel with a console script and a data file, as pip builds them."""
    wheel = folder / "demo-1.0-cp312-cp312-manylinux2014_x86_64.whl"
    info = "demo-1.0.dist-info"
    members = {
        "demo/__init__.py": "VALUE = 1\n",
        "demo/_speed.cpython-312-x86_64-linux-gnu.so": "not really a binary\n",
        "demo-1.0.data/data/share/demo.txt": "shared data\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
            "Tag: cp312-cp312-manylinux2014_x86_64\n"
        ),
        f"{info}/entry_points.txt": "[console_scripts]\ndemo = demo:main\n",
    }
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in members))
    return wheel


def test_install_lays_a_wheel_out_as_pip_target_does_without_its_scripts(tmp_path: Path) -> None:
    dest = tmp_path / "site-packages"
    zipapps.install([make_wheel(tmp_path)], dest)
    assert (dest / "demo" / "__init__.py").read_text() == "VALUE = 1\n"
    assert (dest / "demo" / "_speed.cpython-312-x86_64-linux-gnu.so").is_file()
    assert (dest / "share" / "demo.txt").read_text() == "shared data\n"  # --target: data at the top
    info = dest / "demo-1.0.dist-info"
    assert (info / "INSTALLER").read_bytes() == zipapps.INSTALLER
    # The console script, and the RECORD lines naming it, are gone: they hold this machine's
    # interpreter path, and the zipapp has its own entry point.
    assert not (dest / "bin").exists()
    record = (info / "RECORD").read_text().splitlines()
    listed = {posixpath.normpath(line.split(",")[0]) for line in record}
    assert not [path for path in listed if path.startswith("bin/")]
    assert listed >= {
        "demo/__init__.py",
        "share/demo.txt",
        "demo-1.0.dist-info/INSTALLER",
        "demo-1.0.dist-info/RECORD",
    }


def test_what_no_mode_imports_is_left_out_with_its_record_lines(tmp_path: Path) -> None:
    """``drop_not_shipped`` removes the files NOT_SHIPPED names, and their RECORD lines, and
    keeps their neighbours: cffi's backend (which cryptography loads) but not its package,
    pydantic's v1 package but not version.py or a module named like it, a stub but not its
    module, jsonschema's tests but not its validators."""
    dropped = [
        "pydantic/v1/main.py",
        "pydantic/mypy.py",
        "pydantic_core/_pydantic_core.pyi",
        "jsonschema/tests/test_validators.py",
        "jsonschema/benchmarks/issue232.py",
        "cffi/api.py",
        "httpx2/websockets/_api.py",
        "anyio/_backends/_trio.py",
        "anyio/pytest_plugin.py",
    ]
    kept = [
        "pydantic/v1.py",
        "pydantic/version.py",
        "pydantic/mypy_plugin_notes.py",
        "pydantic_core/_pydantic_core.py",
        "jsonschema/validators.py",
        "_cffi_backend.cpython-312-x86_64-linux-gnu.so",
        "httpx2/_client.py",
        "anyio/_backends/_asyncio.py",
        "httpcore2/_backends/trio.py",
    ]
    for relative in [*dropped, *kept]:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("")
    record = tmp_path / "some-1.0.dist-info" / "RECORD"
    record.parent.mkdir()
    record.write_text("".join(f"{r},sha256=x,0\n" for r in [*dropped, *kept]))
    zipapps.drop_not_shipped(tmp_path)
    left = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert left == {*kept, "some-1.0.dist-info/RECORD"}
    assert record.read_text() == "".join(f"{r},sha256=x,0\n" for r in kept)
    assert not (tmp_path / "cffi").exists() and not (tmp_path / "jsonschema" / "tests").exists()
