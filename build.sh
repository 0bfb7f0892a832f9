#!/usr/bin/env bash
# Build and smoke-test the zipapps, or run the whole test suite.
#
#   ./build.sh                    build this machine's file (dist/kite-skills.pyz and
#                                 dist/kite-skills-<platform>.pyz, + .sha256) and the wheel
#   ./build.sh --all              build every platform's file (linux x86_64/aarch64,
#                                 macos arm64/x86_64, windows amd64), each for CPython 3.11-3.14,
#                                 its MCP Bundle for Claude Desktop (kite-skills-<platform>.mcpb)
#                                 and dist/SHA256SUMS (every platform's file, bundle and the wheel)
#   ./build.sh test               build every file, then install test tools and run every test
#   ./build.sh bench [--tiny]     benchmark the built zipapps (bench/run.py; table + plot)
#   ./build.sh --wheelhouse DIR   every wheel every platform's build needs, into DIR (from the
#                                 build's cache .build/wheels; what it lacks is downloaded)
#   ./build.sh --offline DIR [PLATFORM...]
#                                 build every file (or those named) from such a directory,
#                                 with no package index (and no MCP Bundles: npm needs one)
#
# Any CPython >= 3.11 drives the build (PYTHON=..., else the first python3 that fits).
set -euo pipefail

cd "$(dirname "$0")"
ROOT=$PWD
WORK=$ROOT/.build
DIST=$ROOT/dist
INSPECTOR_VERSION=2.12.0
# The real Claude Code CLI, for tests/test_cli_setup.py (`setup claude-code --write`, then
# `claude mcp list`): npm's package carries a native binary, which needs no Node at run time.
CLAUDE_CODE_VERSION=2.1.332
CLAUDE=$WORK/claude-code/node_modules/.bin/claude
MCPB_VERSION=2.1.2
MCPB=$WORK/mcpb/node_modules/.bin/mcpb
BUNDLES=()
PIP_FLAGS=(--disable-pip-version-check --no-input --quiet)
# The build venv's requirements (make_venv): the build's tools, and what `python -m kite_skills
# catalog validate` imports (pydantic and what it brings: the check of a recipe's `calc` calls
# reads the calculators' own models). The test and bench venvs have them too (uv_venv).
BUILD_TOOLS=(-r requirements/build.txt)
for pin in ruamel.yaml markdown-it-py mdurl pydantic pydantic_core annotated-types \
    typing-inspection typing_extensions; do
    BUILD_TOOLS+=("$(grep "^$pin==" requirements/runtime.txt)")
done
# The pinned uv (requirements/dev.txt), which installs the test and bench venvs (fetch_uv).
UV=$WORK/uv/bin/uv

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

# fitting PYTHON: the path of the interpreter PYTHON runs when it is CPython 3.11 or newer,
# else nothing. The build then runs that path itself, past a version manager's shim (pyenv's
# is a shell script that costs half a second of each of the build's dozen calls).
fitting() {
    "$1" -c 'import sys
if sys.implementation.name == "cpython" and sys.version_info >= (3, 11):
    print(sys.executable or sys.argv[1])' "$1" 2>/dev/null || true
}

check_python() {
    local found
    if [[ -n ${PYTHON:-} ]]; then
        command -v "$PYTHON" >/dev/null || die "PYTHON=$PYTHON not found — set PYTHON to a CPython 3.11 or newer"
        found=$(fitting "$PYTHON")
        [[ -n $found ]] || die "PYTHON=$PYTHON is not CPython 3.11 or newer — set PYTHON to one that is"
        PYTHON=$found
        return
    fi
    local candidate
    for candidate in python3 python3.14 python3.13 python3.12 python3.11; do
        command -v "$candidate" >/dev/null || continue
        found=$(fitting "$candidate")
        if [[ -n $found ]]; then
            PYTHON=$found
            return
        fi
    done
    die "no CPython 3.11 or newer found (tried python3, python3.14 … python3.11) — install one or set PYTHON"
}

# make_venv DIR [pip index options...]: a venv with the pinned build tools (pip among them: every
# build runs the same pip, whichever CPython made the venv).
make_venv() {
    local venv=$1; shift
    if [[ ! -x $venv/bin/python ]]; then
        new_venv "$venv" "$@"
    fi
    pip_install "$venv" "$@" "${BUILD_TOOLS[@]}"
}

# new_venv DIR [pip index options...]: a venv with the pinned pip. When the wheelhouse (the
# --find-links directory, else .build/wheels) holds that pip's wheel, pip installs itself
# from it, running from the wheel, instead of the CPython's bundled pip being installed only
# to be replaced (an offline build's venv: 10.5 s -> 7 s).
new_venv() {
    local venv=$1; shift
    local wheels=$WORK/wheels pip_wheel
    while [[ $# -gt 0 ]]; do
        [[ $1 == --find-links ]] && wheels=$2
        shift
    done
    pip_wheel=$(pinned_pip_wheel "$wheels")
    if [[ -z $pip_wheel ]]; then
        "$PYTHON" -m venv "$venv"
        return
    fi
    "$PYTHON" -m venv --without-pip "$venv"
    "$venv/bin/python" "$pip_wheel/pip" install "${PIP_FLAGS[@]}" --no-index "$pip_wheel" \
        || { rm -rf "$venv"; die "installing $pip_wheel into $venv failed (the messages above)"; }
}

# fetch_pip: the pinned pip's wheel into .build/wheels, for new_venv, with the driving CPython's
# own pip when it has one (under a second of CPU; a venv made from the wheel saves six). Without
# it nothing is lost: new_venv installs the CPython's bundled pip and then the pinned one.
fetch_pip() {
    [[ -n $(pinned_pip_wheel "$WORK/wheels") ]] && return
    "$PYTHON" -m pip --version >/dev/null 2>&1 || return 0
    "$PYTHON" -m pip download "${PIP_FLAGS[@]}" --no-deps --only-binary=:all: \
        -d "$WORK/wheels" "$(grep '^pip==' requirements/build.txt)" >/dev/null 2>&1 || true
}

# pinned_pip_wheel DIR: the path of the pinned pip's wheel in DIR, or nothing.
pinned_pip_wheel() {
    local pin
    pin=$(grep '^pip==' requirements/build.txt)
    compgen -G "$1/pip-${pin#pip==}-py3-none-any.whl" || true
}

# pip_install VENV ARGS...: VENV's `pip install ARGS`, skipped when VENV already had the same
# install (the same arguments, requirement files and pyproject.toml: a stamp in VENV names
# their hash), so that a second ./build.sh or ./build.sh bench spends no time in pip.
pip_install() {
    local venv=$1; shift
    local stamp; stamp=$(stamp_of "$venv" "$@")
    [[ -f $stamp ]] && return
    local hint=""
    [[ " $* " == *" --no-index "* ]] && hint=" — a wheelhouse made by ./build.sh --wheelhouse \
from an older commit may lack a tool this one pins (requirements/build.txt): make it again"
    "$venv/bin/python" -m pip install "${PIP_FLAGS[@]}" "$@" \
        || die "pip could not install the build tools into $venv (its messages are above)$hint"
    touch "$stamp"
}

# uv_install VENV ARGS...: as pip_install, with the pinned uv (`uv pip install ARGS`), which
# compiles nothing, as pip's --no-compile.
uv_install() {
    local venv=$1; shift
    local stamp; stamp=$(stamp_of "$venv" uv "$@")
    [[ -f $stamp ]] && return
    "$UV" pip install --quiet --python "$venv/bin/python" "$@" \
        || die "uv could not install $* into $venv (the messages above say why)"
    touch "$stamp"
}

# stamp_of VENV ARGS...: the path of the stamp that says VENV had the install ARGS.
stamp_of() {
    local venv=$1; shift
    printf '%s/.installed-' "$venv"
    { printf '%s\n' "$@"; cat requirements/*.txt pyproject.toml; } \
        | "$venv/bin/python" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:20])'
}

# uv_venv DIR ARGS...: a venv with the build tools (BUILD_TOOLS, pip among them) and ARGS,
# installed in one go by the pinned uv, from PyPI (uv reads its own settings, not pip's): the
# test and bench venvs in about 10 CPU-s with uv's own install, where pip took about 30. The
# build venv stays on pip: an offline build has its wheelhouse and no index, and no uv.
uv_venv() {
    local venv=$1; shift
    fetch_uv
    if [[ ! -x $venv/bin/python ]]; then
        "$PYTHON" -m venv --without-pip "$venv" || die "$PYTHON -m venv $venv failed (the messages above)"
    fi
    uv_install "$venv" "${BUILD_TOOLS[@]}" "$@"
}

# fetch_uv: the pinned uv (requirements/dev.txt's pin) in its own venv .build/uv, installed with
# the pinned pip from its wheel when fetch_pip fetched it (as new_venv), else the venv's own.
fetch_uv() {
    local pin venv=$WORK/uv pip_wheel
    pin=$(grep '^uv==' requirements/dev.txt)
    [[ "$("$UV" --version 2>/dev/null) " == "uv ${pin#uv==} "* ]] && return
    say "$pin (pip)"
    rm -rf "$venv"
    pip_wheel=$(pinned_pip_wheel "$WORK/wheels")
    if [[ -n $pip_wheel ]]; then
        "$PYTHON" -m venv --without-pip "$venv" \
            && "$venv/bin/python" "$pip_wheel/pip" install "${PIP_FLAGS[@]}" --no-compile "$pin"
    else
        "$PYTHON" -m venv "$venv" \
            && "$venv/bin/python" -m pip install "${PIP_FLAGS[@]}" --no-compile "$pin"
    fi || { rm -rf "$venv"; die "installing $pin into $venv failed (the messages above)"; }
}

size_of() { wc -c < "$1" | tr -d ' '; }

# build WHEELHOUSE|"" PLATFORM... : with a wheelhouse, nothing comes from an index.
build() {
    local wheelhouse=$1; shift
    local index_opts=()
    check_python
    if [[ -n $wheelhouse ]]; then
        index_opts=(--no-index --find-links "$wheelhouse")
    else
        fetch_pip
    fi
    say "build venv ($("$PYTHON" -c 'import platform; print("CPython", platform.python_version())'))"
    make_venv "$WORK/venv" ${index_opts[@]+"${index_opts[@]}"}
    local py=$WORK/venv/bin/python
    # A fixed staging path: pip records the wheel's location inside the zipapp, and a
    # random one would make two builds of the same commit differ.
    local stage=$WORK/stage
    rm -rf "$stage" && mkdir -p "$stage"

    say "validate the catalog"
    PYTHONPATH=$ROOT "$py" -m kite_skills catalog validate skills_catalog >/dev/null \
        || die "the catalog is broken — fix the problems above"

    say "wheel"
    SOURCE_DATE_EPOCH=315532800 "$py" -m pip wheel "${PIP_FLAGS[@]}" --no-deps \
        --no-build-isolation -w "$stage/wheel" .
    rm -rf build kite_skills.egg-info
    # A SHA256SUMS names the files of one build of every platform (release_sums): any build
    # makes the one in dist/ stale.
    rm -f "$DIST/SHA256SUMS"
    # A bundle holds its platform's zipapp: any build makes the bundles in dist/ stale too
    # (./build.sh --all packs them again).
    rm -f "$DIST"/kite-skills-*.mcpb "$DIST"/kite-skills-*.mcpb.sha256
    local wheel; wheel=$(ls "$stage"/wheel/*.whl)
    "$py" tools/zipapps.py normalize-wheel "$wheel"
    mkdir -p "$DIST"
    cp "$wheel" "$DIST/"

    if [[ -z $wheelhouse ]]; then
        wheelhouse=$WORK/wheels
        say "wheels for ${*:-this machine} (cached in $wheelhouse)"
        "$py" tools/zipapps.py download "$wheelhouse" "${@:-$("$py" tools/zipapps.py host)}"
    fi
    say "zipapps: ${*:-this machine}"
    "$py" tools/zipapps.py build "$wheelhouse" "$wheel" "$DIST" "$@" >&2
    rm -rf "$stage"
    BUILT_WHEEL=$DIST/$(basename "$wheel")
    smoke_test
    say "built $DIST/kite-skills.pyz ($(size_of "$DIST/kite-skills.pyz") bytes, $(cut -c1-16 "$DIST/kite-skills.pyz.sha256")…)"
}

# release_sums [FILE...]: dist/SHA256SUMS, in the format `sha256sum -c` reads, for what a
# release publishes: every platform's file, the wheel just built, and the FILEs named.
release_sums() {
    say "dist/SHA256SUMS"
    "$WORK/venv/bin/python" tools/zipapps.py sums "$DIST" "$BUILT_WHEEL" "$@" >/dev/null
}

every_platform() {
    local name
    for name in "${ALL[@]}"; do
        [[ " $* " == *" $name "* ]] || return 1
    done
}

smoke_test() {
    say "smoke test (another directory, private SHIV_ROOT)"
    local elsewhere; elsewhere=$(mktemp -d)
    (
        cd "$elsewhere"
        export SHIV_ROOT=$elsewhere/shiv
        "$PYTHON" "$DIST/kite-skills.pyz" --version
        "$PYTHON" "$DIST/kite-skills.pyz" catalog validate >/dev/null
        "$PYTHON" "$DIST/kite-skills.pyz" help / | grep -q '/orders' \
            || die "smoke test: 'help /' does not list /orders"
    ) || { rm -rf "$elsewhere"; die "smoke test failed"; }
    rm -rf "$elsewhere"
}

# bundles PLATFORM... : each platform zipapp in dist/ packed as an MCP Bundle (tools/mcpb.py),
# validated and packed with the official mcpb CLI, pinned and installed from npm.
bundles() {
    install_mcpb
    say "MCP Bundles: $*"
    "$WORK/venv/bin/python" tools/mcpb.py "$MCPB" "$DIST" "$@" >&2
    local name
    for name in "$@"; do BUNDLES+=("$DIST/kite-skills-$name.mcpb"); done
}

install_mcpb() {
    say "mcpb $MCPB_VERSION (npm)"
    command -v npm >/dev/null || { apt_install nodejs npm; }
    if [[ ! -x $MCPB || $("$MCPB" --version 2>/dev/null) != "$MCPB_VERSION" ]]; then
        npm install --prefix "$WORK/mcpb" --no-audit --no-fund --loglevel=error \
            "@anthropic-ai/mcpb@$MCPB_VERSION" >/dev/null
    fi
}

# wheelhouse DIR: every platform's wheels and the build tools, fetched into the build's own
# cache .build/wheels (what an earlier build or --wheelhouse fetched is not fetched again),
# then the wheels of the pinned versions copied into DIR.
wheelhouse() {
    local dir=$1
    check_python
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    say "build venv ($("$PYTHON" -c 'import platform; print("CPython", platform.python_version())'))"
    fetch_pip
    make_venv "$WORK/venv"
    say "every wheel the build needs (every platform, CPython 3.11-3.14), cached in $WORK/wheels"
    "$WORK/venv/bin/python" tools/zipapps.py download "$WORK/wheels"
    say "copying them into $dir"
    "$WORK/venv/bin/python" tools/zipapps.py export "$WORK/wheels" "$dir" >/dev/null
    say "done: $(ls "$dir" | wc -l | tr -d ' ') files; build with ./build.sh --offline $dir"
}

# ./build.sh test sets up what the tests need in two jobs that run while the files build
# (mostly downloads and unpacking, while the build is mostly compressing): test_venv
# (the venv, ruff, mypy, then the bench venv) and test_programs (apt, npm, the arm64
# CPython). Each writes its log to .build/logs/ and `finish` shows it when the job is done.
test_venv() {
    local venv=$WORK/test-venv
    say "test venv"
    # uv compiles nothing: pytest writes the bytecode of what the tests import (run_tests), a
    # tenth of the 2,800 files pip would compile here (10 CPU-s, beside the build's compression)
    uv_venv "$venv" -r requirements/runtime.txt -r requirements/dev.txt
    # The project, editable, alone: its dependencies are the pins above (--no-deps), and it is
    # built with the venv's pinned setuptools (--no-build-isolation), with no build venv to make.
    uv_install "$venv" --no-deps --no-build-isolation -e .

    say "ruff"
    "$venv/bin/ruff" check .
    "$venv/bin/ruff" format --check . >/dev/null || die "ruff format would change files — run ruff format"

    say "mypy --strict (the whole package)"
    "$venv/bin/mypy" --strict kite_skills

    bench_venv  # tests/test_bench.py runs ./build.sh bench --tiny
}

test_programs() {
    command -v npm >/dev/null || { apt_install nodejs npm; }
    say "Chromium (the dashboard's browser tests; Playwright drives it, downloads nothing)"
    [[ -x ${CHROMIUM_PATH:-/usr/bin/chromium} ]] \
        || apt_install --no-install-recommends chromium fonts-liberation

    say "shellcheck (actionlint runs it on the release workflow's scripts)"
    command -v shellcheck >/dev/null || apt_install shellcheck

    install_mcpb
    say "MCP Inspector $INSPECTOR_VERSION (npm)"
    if [[ ! -x $WORK/inspector/node_modules/.bin/inspector ]]; then
        npm install --prefix "$WORK/inspector" --no-audit --no-fund --loglevel=error \
            "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null
    fi
    say "Claude Code $CLAUDE_CODE_VERSION (npm)"
    if [[ ! -x $CLAUDE ]] || [[ $("$CLAUDE" --version 2>/dev/null) != "$CLAUDE_CODE_VERSION "* ]]; then
        npm install --prefix "$WORK/claude-code" --no-audit --no-fund --loglevel=error \
            "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >/dev/null
    fi

    # tests/test_aarch64.py runs tools/arm64-python.sh itself (a no-op once it is set up):
    # here it is out of the tests' way. Debian's, as root; elsewhere the test says why not.
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        say "Debian's arm64 CPython 3.11 for qemu-user (tools/arm64-python.sh)"
        tools/arm64-python.sh "$WORK/arm64-python" >/dev/null \
            || say "tools/arm64-python.sh failed: tests/test_aarch64.py will try again"
    fi
}

JOBS=()
# start NAME: run the function NAME in the background, its output in .build/logs/NAME.log.
start() {
    mkdir -p "$WORK/logs"
    "$1" >"$WORK/logs/$1.log" 2>&1 &
    JOBS+=("$!")
    eval "JOB_$1=$!"
}

# finish NAME: wait for the job NAME, show its log, and stop if it failed.
finish() {
    local pid rc=0
    eval "pid=\$JOB_$1"
    wait "$pid" || rc=$?
    cat "$WORK/logs/$1.log" >&2
    [[ $rc -eq 0 ]] || die "$1 failed (exit $rc): its output is above and in .build/logs/$1.log"
}

stop_jobs() {
    local pid
    for pid in ${JOBS[@]+"${JOBS[@]}"}; do kill "$pid" 2>/dev/null || true; done
}

run_tests() {
    finish test_venv
    # Three workers (pytest-xdist) on two cores: besides the CPU time of its subprocesses
    # (zipapp starts, builds), the suite waits (a server's change poll, a deadline, a browser),
    # and a third worker fills those waits (pytest 351 s -> 325 s here).
    local workers=3
    say "pytest ($workers workers)"
    # Bytecode for the checkout (gitignored) is written: with PYTHONDONTWRITEBYTECODE set (some
    # containers set it) each worker's collection and each subprocess run from the checkout
    # compiled it all again (collection 10.5 -> 4.5 CPU-s). The tests that need the variable
    # set it themselves.
    env -u PYTHONDONTWRITEBYTECODE \
        KITE_SKILLS_PYZ="$DIST/kite-skills.pyz" \
        KITE_SKILLS_INSPECTOR="$WORK/inspector/node_modules/.bin/inspector" \
        KITE_SKILLS_MCPB="$MCPB" \
        KITE_SKILLS_CLAUDE="$CLAUDE" \
        "$WORK/test-venv/bin/pytest" -p no:cacheprovider -n "$workers" --dist loadscope --no-loadscope-reorder "$@"
}

# The bench venv: ./build.sh test makes it, then tests/test_bench.py runs ./build.sh bench,
# which need not install anything again (uv_install's stamp).
bench_venv() {
    say "bench venv"
    uv_venv "$WORK/bench-venv" -r requirements/bench.txt
}

bench() {
    [[ -f $DIST/kite-skills.pyz ]] || die "dist/kite-skills.pyz is missing — run ./build.sh first"
    check_python
    bench_venv
    PYTHONPATH=$ROOT "$WORK/bench-venv/bin/python" bench/run.py "$@"
}

apt_install() {
    say "apt-get install $*"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ALL=(linux-x86_64 linux-aarch64 macos-arm64 macos-x86_64 windows-amd64)
case "${1:-}" in
    "") build "" ;;
    --all) build "" "${ALL[@]}"; bundles "${ALL[@]}"; release_sums "${BUNDLES[@]}" ;;
    test) shift; check_python; trap stop_jobs EXIT
        fetch_pip  # before the jobs: the three venvs take pip from its wheel (new_venv)
        start test_venv; start test_programs
        build "" "${ALL[@]}"
        finish test_programs; bundles "${ALL[@]}"; release_sums "${BUNDLES[@]}"
        run_tests "$@" ;;
    bench) shift; bench "$@" ;;
    --wheelhouse) [[ -n ${2:-} ]] || die "usage: ./build.sh --wheelhouse DIR"; wheelhouse "$2" ;;
    --offline)
        [[ -d ${2:-} ]] || die "usage: ./build.sh --offline DIR [PLATFORM...] (DIR made by --wheelhouse)"
        dir=$(cd "$2" && pwd); shift 2
        build "$dir" "${@:-${ALL[@]}}"
        if every_platform "${@:-${ALL[@]}}"; then release_sums; fi ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) die "unknown argument '$1' — try ./build.sh --help" ;;
esac
