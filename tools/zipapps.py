"""Build the per-platform zipapps from a wheelhouse (build.sh runs this with its build venv,
which has pip and shiv).

For one platform, the pinned compiled wheels are installed once per target CPython version
(the pure-Python ones, the same wheel for every version and platform, once for the whole
build): for each pin, the wheel pip would choose for that platform and version (its tags,
ranked by ``packaging``), unpacked by ``installer`` as ``pip install --target`` lays it out.
The trees are merged into one site-packages (a file present in several trees must be
byte-identical; only the install records ``RECORD``/``WHEEL`` of a compiled package are
merged line by line), shiv packs it reproducibly, and the preamble goes in front of shiv's
bootstrap. The platforms are built side by side, a process per core and one more, and their
downloads side by side too.

    python tools/zipapps.py download WHEELHOUSE [PLATFORM...]
    python tools/zipapps.py export WHEELHOUSE DIR
    python tools/zipapps.py build WHEELHOUSE KITE_SKILLS_WHEEL OUT_DIR [PLATFORM...]
    python tools/zipapps.py normalize-wheel WHEEL
    python tools/zipapps.py sums OUT_DIR [FILE...]
    python tools/zipapps.py host
"""

from __future__ import annotations

import base64
import concurrent.futures
import hashlib
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from kite_skills import __version__  # noqa: E402
from kite_skills.launcher import build_info  # noqa: E402
from kite_skills.launcher.preamble import PLATFORMS, platform_for  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
import pinned_links  # noqa: E402

if TYPE_CHECKING:
    from packaging.tags import Tag

PYTHONS = ["3.11", "3.12", "3.13", "3.14"]
# pip platform tags per file; pip also accepts older macOS versions and universal2.
PIP_PLATFORMS: dict[str, list[str]] = {
    "linux-x86_64": ["manylinux_2_17_x86_64", "manylinux2014_x86_64"],
    "linux-aarch64": ["manylinux_2_17_aarch64", "manylinux2014_aarch64"],
    "macos-arm64": ["macosx_11_0_arm64"],
    "macos-x86_64": ["macosx_10_15_x86_64"],
    "windows-amd64": ["win_amd64"],
}
SYS_PLATFORM = {name: os_name for name, (os_name, _) in PLATFORMS.items()}
# Packages whose extension modules carry no interpreter tag in their names (pywin32's
# win32api.pyd): each version gets its own tree, added to sys.path by a .pth at start.
PER_VERSION = {"pywin32"}
PYWIN32_KEEP = re.compile(
    r"pywin32\.pth|pywin32_system32/.*|win32/(_win32sysloader|win32api|win32job)\.pyd"
    r"|win32/lib/(pywin32_bootstrap|pywintypes|win32con|winerror)\.py"
    r"|pywin32-[^/]+\.dist-info/(METADATA|WHEEL|top_level\.txt|licenses/.*)"
)
PER_VERSION_PTH = "kite-skills-per-version.pth"
PER_VERSION_MODULE = '''"""Put this interpreter's pywin32 on sys.path."""
import os
import site
import sys

_tree = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "_per_version",
    "cp%d%d" % sys.version_info[:2],
)
if os.path.isdir(_tree):
    site.addsitedir(_tree)
'''
# Files of the pinned wheels that no mode of the program can import or read, left out to keep
# each file under 15 MB (tests/test_zipapps.py runs every mode of the built file with the import
# log on; tests/test_zipapp_size.py checks that none of these is in a file):
# - type stubs (.pyi): only type checkers read them;
# - pydantic.v1, pydantic 1's API kept for migrating code, imported only by `import
#   pydantic.v1` or a v1-style type (``__get_validators__``), which nothing here defines;
#   and pydantic.mypy, a mypy plugin;
# - jsonschema's own test suite and benchmarks;
# - cffi's Python package, which declares and compiles C bindings when a package is built (its
#   parser needs pycparser, not in the file): at run time cryptography loads _cffi_backend only;
# - httpx2.websockets and anyio's trio backend, which need wsproto and trio (not in the file),
#   and anyio's pytest plugin.
NOT_SHIPPED = re.compile(
    r".*\.pyi|pydantic/v1/.*|pydantic/mypy\.py|jsonschema/(tests|benchmarks)/.*|cffi/.*"
    r"|httpx2/websockets/.*|anyio/_backends/_trio\.py|anyio/pytest_plugin\.py"
)
# Mach-O CPU types of each macOS file. A universal ("fat") binary in a wheel (cryptography
# has only universal2 wheels for macOS) is cut down to the slice for the file's architecture:
# the bytes that macOS loads from the universal file, each slice signed on its own.
MACHO_CPU = {"macos-arm64": 0x0100000C, "macos-x86_64": 0x01000007}
FAT_MAGIC = b"\xca\xfe\xba\xbe"
MERGED_BY_LINE = re.compile(r"[^/]+\.dist-info/(RECORD|WHEEL)")
# A compiled wheel's software bill of materials describes that one wheel's build: when the
# versions' copies differ, each is kept under its interpreter's name (x.cp311.json).
PER_WHEEL = re.compile(r"[^/]+\.dist-info/sboms/.+")
# The archive's __main__.py, in place of shiv's: Ctrl-C during the start (unpacking, imports)
# ends it at once with exit code 130 and no traceback. Its first statement, so that nothing the
# file runs is without it (through _signal: importing signal builds its enums first, a window
# in which a Ctrl-C came out as a traceback); the entry point gets Python's own handler back
# (kite_skills/launcher/start.py). Then it runs kite_skills.launcher.first from the archive, in
# syntax every Python reads, as that module's own: first.load does the same for the others.
MAIN = """# -*- coding: utf-8 -*-
import os

try:
    import _signal as signal  # signal's C core: no enum classes to build before the handler
except ImportError:  # Python 2
    import signal

try:
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
except KeyboardInterrupt:  # a Ctrl-C before this line: signal() delivers it first
    os._exit(130)
import sys
import zipimport

launcher = zipimport.zipimporter(
    os.path.join(sys.argv[0], "site-packages", "kite_skills", "launcher", "")
)
first = type(sys)("kite_skills.launcher.first")
first.__file__ = launcher.archive + os.sep + launcher.prefix + "first.py"
first.__loader__ = launcher
first.__package__ = "kite_skills.launcher"
sys.modules[first.__name__] = first
exec(launcher.get_code("first"), first.__dict__)
first.main(launcher)
"""
# Compiled binaries are stored with LZMA, a quarter smaller than deflate, which keeps each
# file under 15 MB with four CPythons' binaries in it. Only the preamble and shiv's
# bootstrap unpack them (with zipfile); zipimport, which reads the launcher's modules from the
# archive, knows only deflate, so everything else stays deflated.
LZMA_MEMBERS = re.compile(r"site-packages/.*\.(so|pyd|dll)")
PIP = [sys.executable, "-m", "pip"]
PIP_QUIET = ["--disable-pip-version-check", "--no-input", "--quiet"]
# What a zipapp's .dist-info/INSTALLER names (pip's says "pip").
INSTALLER = b"kite-skills tools/zipapps.py\n"


def host_platform() -> str:
    name = platform_for(sys.platform, platform.machine())
    if name is None:
        sys.exit(f"zipapps.py: no zipapp is built for {sys.platform} {platform.machine()}")
    return name


def requirements(target: str, everything: bool = False) -> tuple[list[str], list[str]]:
    """(shared, per-version) pins for ``target`` from requirements/runtime.txt, minus
    requirements/not-in-zipapp.txt unless ``everything`` (the wheelhouse also serves the
    wheel's install); ``sys_platform`` markers judged for the target."""
    dropped = {
        line.split("#")[0].strip().lower()
        for line in (ROOT / "requirements" / "not-in-zipapp.txt").read_text().splitlines()
    } - {""}
    shared: list[str] = []
    per_version: list[str] = []
    for raw in (ROOT / "requirements" / "runtime.txt").read_text().splitlines():
        line = raw.split("#")[0].strip()
        if not line:
            continue
        pin, _, marker = line.partition(";")
        marker = marker.strip()
        if marker:
            match = re.fullmatch(r"sys_platform\s*==\s*[\"']([^\"']+)[\"']", marker)
            if not match:
                sys.exit(f"zipapps.py: runtime.txt: cannot judge marker '{marker}'")
            if match.group(1) != SYS_PLATFORM[target]:
                continue
        name = pin.split("==")[0].strip()
        if name.lower() in dropped and not everything:
            continue
        (per_version if name.lower() in PER_VERSION else shared).append(pin.strip())
    return shared, per_version


def pip_target_options(target: str, version: str) -> list[str]:
    options = ["--only-binary=:all:", "--no-deps", "--implementation", "cp"]
    options += ["--python-version", version, "--abi", "cp" + version.replace(".", "")]
    for tag in PIP_PLATFORMS[target]:
        options += ["--platform", tag]
    return options


def _name(pin: str) -> str:
    return re.sub(r"[-_.]+", "_", pin.split("==")[0].strip()).lower()


def pure_names(wheelhouse: Path) -> set[str]:
    """Packages the wheelhouse holds as one pure-Python wheel (py3-none-any)."""
    return {
        _name(wheel.name.split("-")[0])
        for wheel in wheelhouse.glob("*-none-any.whl")
        if wheel.name.split("-")[-2] == "none"
    }


def download(wheelhouse: Path, targets: list[str]) -> None:
    """Every wheel the targets need, and the build tools (requirements/build.txt). A
    pure-Python wheel is fetched once; the compiled ones once per (platform, version). A
    (platform, version, pins) already fetched is skipped (a stamp in ``wheelhouse`` names its
    hash), and so are build tools already fetched. The first (platform, version) fetches the
    pure-Python wheels; then each platform's versions are fetched one after the other, the
    platforms side by side (no two of them share a wheel: a compiled wheel names its
    platform, and cryptography's abi3 wheel, shared by the versions, is fetched once per
    platform). Each ``pip download`` reads the pinned releases' files from one local page
    (:func:`index_options`) when the index lists them in JSON."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    if not targets:
        return
    fetched = [version_stamp(wheelhouse, t, v).exists() for t in targets for v in PYTHONS]
    if all(fetched) and tools_stamp(wheelhouse).exists():
        return
    index = index_options(wheelhouse, targets)
    download_versions(wheelhouse, targets[0], PYTHONS[:1], index)
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(targets) + 1) as pool:
        jobs = [pool.submit(download_versions, wheelhouse, t, PYTHONS, index) for t in targets]
        jobs.append(pool.submit(download_tools, wheelhouse, index))
        for done in jobs:
            done.result()


def index_options(wheelhouse: Path, targets: list[str]) -> list[str]:
    """pip's options to read the pinned releases' files from one local page
    (tools/pinned_links.py), or none when the index cannot list them in JSON."""
    page = pinned_links.page_for(pinned_links.index_url(PIP), sorted(every_pin(targets)))
    if page is None:
        return []
    path = wheelhouse / ".pinned-links.html"
    path.write_text(page, encoding="utf-8")
    return ["--no-index", "--find-links", str(path)]


def every_pin(targets: list[str]) -> set[str]:
    """The build tools' pins and every pin of ``targets`` (not-in-zipapp.txt's too: the
    wheelhouse also serves the wheel's install)."""
    pins = set(build_tools())
    for target in targets:
        shared, per_version = requirements(target, everything=True)
        pins |= {*shared, *per_version}
    return pins


def build_tools() -> list[str]:
    """The pins of requirements/build.txt: what the build venv runs (pip, setuptools, shiv)."""
    lines = (ROOT / "requirements" / "build.txt").read_text().splitlines()
    return [pin for pin in (line.split("#")[0].strip() for line in lines) if pin]


def tools_stamp(wheelhouse: Path) -> Path:
    return wheelhouse / f".downloaded-{digest(['tools', build_tools()])}"


def download_tools(wheelhouse: Path, index: list[str]) -> None:
    """The build tools' wheels (pure Python, the same for every platform), so that
    ``./build.sh --offline`` makes its venv from the wheelhouse alone. shiv's dependencies
    are pinned beside it (pip, setuptools here; click in runtime.txt)."""
    stamp = tools_stamp(wheelhouse)
    if stamp.exists():
        return
    options = ["--only-binary=:all:", "--no-deps", *index, "-d", str(wheelhouse)]
    subprocess.run([*PIP, "download", *PIP_QUIET, *options, *build_tools()], check=True)
    stamp.write_text("build tools\n")


def digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:20]


def version_stamp(wheelhouse: Path, target: str, version: str) -> Path:
    """The mark that ``target``'s wheels for ``version`` were fetched, named by a hash of
    the pip options and pins that fetched them."""
    shared, per_version = requirements(target, everything=True)
    pins = [*shared, *per_version]
    return wheelhouse / f".downloaded-{digest((pip_target_options(target, version), pins))}"


def download_versions(wheelhouse: Path, target: str, versions: list[str], index: list[str]) -> None:
    shared, per_version = requirements(target, everything=True)
    for version in versions:
        stamp = version_stamp(wheelhouse, target, version)
        if stamp.exists():
            continue
        pure = pure_names(wheelhouse)
        wanted = [pin for pin in [*shared, *per_version] if _name(pin) not in pure]
        if wanted:
            options = [*pip_target_options(target, version), *index, "-d", str(wheelhouse)]
            subprocess.run([*PIP, "download", *PIP_QUIET, *options, *wanted], check=True)
        stamp.write_text(f"{target} {version}\n")


def export(wheelhouse: Path, dest: Path) -> list[Path]:
    """Copy from ``wheelhouse`` (filled by :func:`download` for every platform) into ``dest``
    the wheels of every pin: runtime.txt's for every platform (not-in-zipapp.txt's too: the
    wheel's install needs them) and build.txt's. Wheels of other versions that an older
    lock left in the cache stay behind. Each file is written under a temporary name and
    renamed, so an interrupted copy leaves no half wheel."""
    wanted = {(_name(pin), pin.split("==")[1].strip()) for pin in every_pin(list(PIP_PLATFORMS))}
    dest.mkdir(parents=True, exist_ok=True)
    copied = []
    found: set[tuple[str, str]] = set()
    for wheel in sorted(wheelhouse.glob("*.whl")):
        name, version = wheel.name.split("-")[:2]
        if (_name(name), version) not in wanted:
            continue
        partial = dest / f".{wheel.name}.partial"
        shutil.copyfile(wheel, partial)
        os.replace(partial, dest / wheel.name)
        copied.append(dest / wheel.name)
        found.add((_name(name), version))
    if wanted - found:
        missing = ", ".join(sorted(f"{n}=={v}" for n, v in wanted - found))
        sys.exit(
            f"zipapps.py: {wheelhouse} has no wheel of {missing}, though its stamps say they "
            f"were fetched — delete {wheelhouse} and run ./build.sh --wheelhouse again"
        )
    return copied


def supported_tags(target: str, version: str) -> list[Tag]:
    """The wheel tags that CPython ``version`` on ``target`` runs, best first: the platforms
    ``pip download`` was given (:func:`pip_target_options`), with older macOS versions and
    universal2 added as pip adds them."""
    from packaging.tags import compatible_tags, cpython_tags, mac_platforms

    python = tuple(int(part) for part in version.split("."))
    platforms: list[str] = []
    for tag in PIP_PLATFORMS[target]:
        if tag.startswith("macosx_"):
            _, major, minor, cpu = tag.split("_", 3)
            platforms += mac_platforms((int(major), int(minor)), cpu)
        else:
            platforms.append(tag)
    abi = "cp" + version.replace(".", "")
    return [*cpython_tags(python, [abi], platforms), *compatible_tags(python, abi, platforms)]


def wheels_for(wheelhouse: Path, target: str, version: str, pins: list[str]) -> list[Path]:
    """For each pin, the wheel in ``wheelhouse`` that pip would install for CPython
    ``version`` on ``target``: of the pinned version, with the best-ranked supported tag."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    rank = {tag: n for n, tag in enumerate(supported_tags(target, version))}
    candidates: dict[tuple[str, str], list[tuple[int, Path]]] = {}
    for wheel in wheelhouse.glob("*.whl"):
        try:
            name, wheel_version, _, tags = parse_wheel_filename(wheel.name)
        except InvalidWheelFilename as error:
            sys.exit(f"zipapps.py: {wheel}: {error} — remove it from {wheelhouse}")
        best = min((rank[tag] for tag in tags if tag in rank), default=None)
        if best is not None:
            candidates.setdefault((name, str(wheel_version)), []).append((best, wheel))
    chosen = []
    for pin in pins:
        name, _, pinned = pin.partition("==")
        found = candidates.get((canonicalize_name(name), pinned.strip()))
        if not found:
            sys.exit(
                f"zipapps.py: {wheelhouse} has no wheel of {pin.strip()} for CPython {version} "
                f"on {target} — run ./build.sh (or ./build.sh --wheelhouse DIR) to fetch it"
            )
        chosen.append(min(found)[1])
    return chosen


def install(wheels: list[Path], dest: Path) -> None:
    """Unpack ``wheels`` into ``dest`` as ``pip install --target`` lays them out, without a
    pip process for each (about 1.2 CPU-s each, 30 in a build of every platform). Console
    scripts are dropped, and their RECORD lines: the zipapp has its own entry point."""
    from installer import install as install_wheel
    from installer.destinations import SchemeDictionaryDestination
    from installer.sources import WheelFile

    scheme = {
        "purelib": dest,
        "platlib": dest,
        "data": dest,
        "scripts": dest / "bin",
        "headers": dest / "include",
    }
    destination = SchemeDictionaryDestination(
        {key: str(path) for key, path in scheme.items()}, "python", "posix"
    )
    for wheel in wheels:
        with WheelFile.open(wheel) as source:
            install_wheel(source, destination, {"INSTALLER": INSTALLER})
    shutil.rmtree(scheme["scripts"], ignore_errors=True)
    for record in dest.glob("*.dist-info/RECORD"):
        kept = [line for line in record.read_text().splitlines() if not line.startswith("bin/")]
        record.write_text("".join(f"{line}\n" for line in kept))


def files(tree: Path) -> dict[str, Path]:
    return {p.relative_to(tree).as_posix(): p for p in tree.rglob("*") if p.is_file()}


def merge(trees: list[Path], dest: Path) -> None:
    """Merge per-version trees into ``dest``; fail, naming the file, on any conflict."""
    seen: dict[str, Path] = {}
    merged_lines: dict[str, list[str]] = {}
    per_wheel: dict[str, dict[str, Path]] = {}
    for tree in trees:
        for relative, path in sorted(files(tree).items()):
            if MERGED_BY_LINE.fullmatch(relative):
                lines = merged_lines.setdefault(relative, [])
                lines += [ln for ln in path.read_text().splitlines() if ln not in lines]
                continue
            if PER_WHEEL.fullmatch(relative):
                per_wheel.setdefault(relative, {})[tree.name] = path
                continue
            if relative in seen:
                if seen[relative].read_bytes() != path.read_bytes():
                    sys.exit(
                        f"zipapps.py: merge conflict: {relative} differs between "
                        f"{seen[relative].parent} and {path} — the same pinned version must "
                        "give the same pure-Python files for every interpreter"
                    )
                continue
            seen[relative] = path
    for relative, copies in per_wheel.items():
        if len({p.read_bytes() for p in copies.values()}) == 1:
            seen[relative] = next(iter(copies.values()))
            continue
        for tag, path in copies.items():
            stem, dot, suffix = relative.rpartition(".")
            seen[f"{stem}.{tag}.{suffix}" if dot else f"{relative}.{tag}"] = path
    for relative, path in seen.items():
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest / relative)
    for relative, lines in merged_lines.items():
        if relative.endswith("RECORD"):
            lines = sorted(lines)
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        (dest / relative).write_text("".join(f"{line}\n" for line in lines))


def drop_not_shipped(site_packages: Path) -> None:
    """Remove the files NOT_SHIPPED names, and their lines in each wheel's RECORD (which
    then lists what the file holds)."""
    for relative, path in files(site_packages).items():
        if NOT_SHIPPED.fullmatch(relative):
            path.unlink()
    for directory in sorted(site_packages.rglob("*"), reverse=True):
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
    for record in site_packages.glob("*.dist-info/RECORD"):
        lines = record.read_text().splitlines()
        kept = [line for line in lines if not NOT_SHIPPED.fullmatch(line.split(",")[0])]
        if kept != lines:
            record.write_text("".join(f"{line}\n" for line in kept))


def thin_universal(site_packages: Path, target: str) -> None:
    """Replace each universal Mach-O binary with its slice for ``target``'s CPU, and its
    line in the wheel's RECORD with the slice's hash and size."""
    cpu = MACHO_CPU[target]
    for binary in sorted(site_packages.rglob("*.so")):
        data = binary.read_bytes()
        if data[:4] != FAT_MAGIC:
            continue
        count = int.from_bytes(data[4:8], "big")
        slices = {}
        for n in range(count):
            fields = [
                int.from_bytes(data[8 + 20 * n + 4 * i : 12 + 20 * n + 4 * i], "big")
                for i in range(5)
            ]
            slices[fields[0]] = data[fields[2] : fields[2] + fields[3]]
        if cpu not in slices:
            sys.exit(
                f"zipapps.py: {binary} has no slice for {target} (CPU types: {sorted(slices)})"
            )
        thin = slices[cpu]
        binary.write_bytes(thin)
        relative = binary.relative_to(site_packages).as_posix()
        digest = base64.urlsafe_b64encode(hashlib.sha256(thin).digest()).rstrip(b"=").decode()
        for record in site_packages.glob("*.dist-info/RECORD"):
            lines = record.read_text().splitlines()
            changed = [
                f"{relative},sha256={digest},{len(thin)}"
                if line.startswith(f"{relative},")
                else line
                for line in lines
            ]
            if changed != lines:
                record.write_text("".join(f"{line}\n" for line in changed))


def pack(site_packages: Path, out: Path, target: str) -> None:
    """shiv's reproducible, compressed archive, entered through the launcher
    (kite_skills/launcher/: its modules are the package's own, in site-packages), with the
    build's facts in one member beside them (build_info.MEMBER)."""
    from datetime import UTC, datetime

    import shiv
    from shiv import builder
    from shiv.bootstrap.environment import Environment
    from shiv.cli import find_entry_point
    from shiv.constants import BUILD_AT_TIMESTAMP_FORMAT, SOURCE_DATE_EPOCH_DEFAULT

    facts = build_info.BuildInfo(target, tuple(PYTHONS), __version__)
    member = site_packages / Path(build_info.MEMBER).relative_to("site-packages")
    if not member.parent.is_dir():
        sys.exit(f"zipapps.py: {member.parent} is missing — the wheel has no launcher package")
    member.write_bytes(build_info.dumps(facts).encode())
    built_at = datetime.fromtimestamp(SOURCE_DATE_EPOCH_DEFAULT, UTC)
    env = Environment(
        built_at=built_at.strftime(BUILD_AT_TIMESTAMP_FORMAT),
        shiv_version=shiv.__version__,
        entry_point=find_entry_point([site_packages], "kite-skills"),
        compile_pyc=False,
        reproducible=True,
    )
    builder.create_archive(
        [site_packages],
        target=out,
        interpreter="/usr/bin/env python3",
        main="kite_skills.launcher.first:main",  # recorded only: MAIN replaces shiv's __main__
        env=env,
        compressed=False,  # recompress() compresses every member, once
    )
    recompress(out)


def normal_mode(external_attr: int) -> int:
    """A member's Unix mode as the same commit gives it on any machine: 0644, or 0755 when
    any execute bit is set (the umask, and how the sources were checked out, decide the
    rest)."""
    mode = external_attr >> 16
    return (stat.S_IFREG | (0o755 if mode & 0o111 else 0o644)) << 16


def recompress(pyz: Path) -> None:
    """Rewrite shiv's archive in the same order, with LZMA for LZMA_MEMBERS, and MAIN as its
    ``__main__.py``."""
    data = pyz.read_bytes()
    prefix = data[: data.index(b"PK\x03\x04")]  # shiv's shebang line
    rewritten = pyz.with_name(pyz.name + ".lzma")
    with zipfile.ZipFile(pyz) as old, rewritten.open("wb") as fd:
        fd.write(prefix)
        with zipfile.ZipFile(fd, "w") as new:
            for info in old.infolist():
                copy = zipfile.ZipInfo(info.filename, date_time=info.date_time)
                copy.external_attr = normal_mode(info.external_attr)
                copy.compress_type = (
                    zipfile.ZIP_LZMA
                    if LZMA_MEMBERS.fullmatch(info.filename)
                    else zipfile.ZIP_DEFLATED
                )
                body = MAIN.encode() if info.filename == "__main__.py" else old.read(info)
                new.writestr(copy, body)
    shutil.copymode(pyz, rewritten)
    os.replace(rewritten, pyz)


def compiled_names(wheelhouse: Path) -> set[str]:
    """Packages the wheelhouse holds a wheel of that is not pure Python (one per platform and
    version)."""
    return {
        _name(wheel.name.split("-")[0])
        for wheel in wheelhouse.glob("*.whl")
        if not wheel.name.endswith("-none-any.whl")
    }


def split_pins(wheelhouse: Path, pins: list[str]) -> tuple[list[str], list[str]]:
    """(pure, compiled): a pin is pure when the wheelhouse holds no wheel of it that names a
    platform or an interpreter, so pip installs the same wheel for every target."""
    compiled = compiled_names(wheelhouse)
    return (
        [pin for pin in pins if _name(pin) not in compiled],
        [pin for pin in pins if _name(pin) in compiled],
    )


def install_pure(wheelhouse: Path, wheel: Path, target: str, dest: Path) -> Path:
    """The pure-Python pins of ``target`` and kite-skills' own wheel, installed once, with
    the catalog's facts: the same files whatever the platform and the version (the first of
    PYTHONS is named)."""
    pure, _ = split_pins(wheelhouse, requirements(target)[0])
    shutil.rmtree(dest, ignore_errors=True)
    install([*wheels_for(wheelhouse, target, PYTHONS[0], pure), wheel], dest)
    write_catalog_facts(dest)
    return dest


def build(wheelhouse: Path, wheel: Path, out_dir: Path, target: str, pure: Path) -> Path:
    """``target``'s file from ``pure`` (:func:`install_pure`) and its compiled pins, installed
    per version."""
    stage = ROOT / ".build" / "stage" / target
    shutil.rmtree(stage, ignore_errors=True)
    shared, per_version = requirements(target)
    _, compiled = split_pins(wheelhouse, shared)
    trees = [pure]
    for version in PYTHONS if compiled else []:
        tree = stage / f"cp{version.replace('.', '')}"
        install(wheels_for(wheelhouse, target, version, compiled), tree)
        trees.append(tree)
    site_packages = stage / "site-packages"
    merge(trees, site_packages)
    drop_not_shipped(site_packages)
    if per_version:
        for version in PYTHONS:
            tree = site_packages / "_per_version" / f"cp{version.replace('.', '')}"
            install(wheels_for(wheelhouse, target, version, per_version), tree)
            for relative, path in files(tree).items():
                if not PYWIN32_KEEP.fullmatch(relative):
                    path.unlink()
            for directory in sorted(tree.rglob("*"), reverse=True):
                if directory.is_dir() and not any(directory.iterdir()):
                    directory.rmdir()
        (site_packages / "_kite_skills_per_version.py").write_text(PER_VERSION_MODULE)
        (site_packages / PER_VERSION_PTH).write_text("import _kite_skills_per_version\n")
    if target in MACHO_CPU:
        thin_universal(site_packages, target)
    built = stage / f"kite-skills-{target}.pyz"
    pack(site_packages, built, target)
    # The finished file goes into dist/ last, so a running client never sees half of it.
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / built.name
    os.replace(built, out)
    write_sha256(out)
    shutil.rmtree(stage)
    return out


def build_all(wheelhouse: Path, wheel: Path, out_dir: Path, targets: list[str]) -> None:
    """Every target's file, from pure-Python trees installed once. Packing is LZMA, all CPU:
    five processes on two cores spent 15% more CPU time than two, and two left one file
    packing alone at the end, so the pool has a process per core and one more."""
    pures: dict[tuple[str, ...], Path] = {}
    jobs = []
    for target in targets:
        pins = tuple(split_pins(wheelhouse, requirements(target)[0])[0])
        if pins not in pures:
            dest = ROOT / ".build" / "stage" / f"pure-{len(pures)}"
            pures[pins] = install_pure(wheelhouse, wheel, target, dest)
        jobs.append((target, pures[pins]))
    if len(jobs) == 1:
        outs = [build(wheelhouse, wheel, out_dir, *jobs[0])]
    else:
        workers = min(len(jobs), (os.cpu_count() or 1) + 1)
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(build, wheelhouse, wheel, out_dir, *job) for job in jobs]
            outs = [future.result() for future in futures]
    for pure in pures.values():
        shutil.rmtree(pure)
    for out in outs:
        print(f"{out} ({out.stat().st_size} bytes)")  # noqa: T201


def write_catalog_facts(site_packages: Path) -> None:
    """What the Markdown parser finds in the shipped catalog, stored in it so that a start
    parses nothing. The packed code computes it (-S: kite_skills and markdown-it only as they
    are in ``site_packages``; both are pure Python, so the pure tree serves every platform),
    under a fingerprint of that code which a start checks."""
    subprocess.run([sys.executable, "-S", "-c", WRITE_FACTS, str(site_packages)], check=True)


WRITE_FACTS = """import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from kite_skills.catalog.catalog import write_facts
write_facts(Path(sys.argv[1]) / "skills_catalog")
"""


def normalize_wheel(wheel: Path) -> None:
    """Rewrite ``wheel`` in the same order with normal modes (see :func:`normal_mode`): the
    build backend copies each source file's mode into the wheel, which the umask of
    whoever checked the sources out decides."""
    rewritten = wheel.with_name(wheel.name + ".partial")
    with zipfile.ZipFile(wheel) as old, zipfile.ZipFile(rewritten, "w") as new:
        for info in old.infolist():
            copy = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            copy.external_attr = normal_mode(info.external_attr)
            copy.compress_type = zipfile.ZIP_DEFLATED
            new.writestr(copy, old.read(info))
    os.replace(rewritten, wheel)


SUMS = "SHA256SUMS"


def write_sums(out_dir: Path, extra: list[Path]) -> Path:
    """``OUT_DIR/SHA256SUMS`` in the format ``sha256sum -c`` reads: one line per release
    file (every platform's zipapp, then ``extra``, e.g. the wheel), sorted by name,
    names relative to ``out_dir``. The host's copy under the old name is left out: it
    is one of the platform files, and a release publishes each file once."""
    wanted = [out_dir / f"kite-skills-{target}.pyz" for target in PIP_PLATFORMS]
    missing = [p.name for p in wanted if not p.is_file()]
    if missing:
        sys.exit(
            f"zipapps.py: {out_dir}: {', '.join(missing)} missing — SHA256SUMS lists every "
            "platform's file: build them all (./build.sh --all)"
        )
    for path in extra:
        if path.resolve().parent != out_dir.resolve():
            sys.exit(f"zipapps.py: {path} is not in {out_dir} — SHA256SUMS names files beside it")
    files = sorted({p.name: p for p in [*wanted, *extra]}.items())
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {name}\n" for name, p in files]
    sums = out_dir / SUMS
    partial = out_dir / f".{SUMS}.partial"
    partial.write_text("".join(lines))
    os.replace(partial, sums)
    return sums


def write_sha256(path: Path) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    (path.parent / f"{path.name}.sha256").write_text(f"{digest}  {path.name}\n")


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "download":
        download(Path(argv[1]), argv[2:] or list(PIP_PLATFORMS))
    elif len(argv) == 3 and argv[0] == "export":
        copied = export(Path(argv[1]), Path(argv[2]))
        print(f"{len(copied)} wheels in {argv[2]}")  # noqa: T201
    elif len(argv) >= 4 and argv[0] == "build":
        wheelhouse, wheel, out_dir = Path(argv[1]), Path(argv[2]), Path(argv[3])
        targets = argv[4:] or [host_platform()]
        unknown = [t for t in targets if t not in PIP_PLATFORMS]
        if unknown:
            sys.exit(f"zipapps.py: unknown platform {unknown[0]} (known: {', '.join(PLATFORMS)})")
        build_all(wheelhouse, wheel, out_dir, targets)
        host = host_platform()
        if host in targets:
            # The old name stays the host's file, so existing client configs keep working.
            partial = out_dir / ".kite-skills.pyz.partial"
            shutil.copyfile(out_dir / f"kite-skills-{host}.pyz", partial)
            partial.chmod(0o755)
            os.replace(partial, out_dir / "kite-skills.pyz")
            write_sha256(out_dir / "kite-skills.pyz")
    elif len(argv) == 2 and argv[0] == "normalize-wheel":
        normalize_wheel(Path(argv[1]))
    elif len(argv) >= 2 and argv[0] == "sums":
        print(write_sums(Path(argv[1]), [Path(a) for a in argv[2:]]))  # noqa: T201
    elif argv[:1] == ["host"]:
        print(host_platform())  # noqa: T201
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
