#!/usr/bin/env bash
# Build and smoke-test dist/kite-skills.pyz, or run the whole test suite.
#
#   ./build.sh                    build dist/kite-skills.pyz (+ .sha256) and smoke-test it
#   ./build.sh test               build, then install test tools and run every test
#   ./build.sh bench [--tiny]     benchmark dist/kite-skills.pyz (bench/run.py; table + plot)
#   ./build.sh --wheelhouse DIR   download every wheel the build needs into DIR
#   ./build.sh --offline DIR      build from such a directory, with no package index
set -euo pipefail

cd "$(dirname "$0")"
ROOT=$PWD
PYTHON=${PYTHON:-python3.11}
WORK=$ROOT/.build
DIST=$ROOT/dist
INSPECTOR_VERSION=2.12.0
PIP_FLAGS=(--disable-pip-version-check --no-input --quiet)

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

check_python() {
    command -v "$PYTHON" >/dev/null || die "$PYTHON not found — the zipapp is built for CPython 3.11; install it or set PYTHON"
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
        || die "$PYTHON is not CPython 3.11 — set PYTHON to a 3.11 interpreter"
}

# make_venv DIR [pip index options...]: a venv with the pinned build tools.
make_venv() {
    local venv=$1; shift
    if [[ ! -x $venv/bin/python ]]; then
        "$PYTHON" -m venv "$venv"
    fi
    "$venv/bin/pip" install "${PIP_FLAGS[@]}" "$@" -r requirements/build.txt shiv==1.0.8 \
        "$(grep '^ruamel.yaml==' requirements/runtime.txt)"
}

build() {
    local index_opts=("$@")
    check_python
    say "build venv"
    make_venv "$WORK/venv" "${index_opts[@]}"
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

    say "site-packages"
    "$py" -m pip install "${PIP_FLAGS[@]}" "${index_opts[@]}" --no-deps --only-binary=:all: \
        --no-compile --target "$stage/site-packages" \
        -r requirements/runtime.txt "$stage"/wheel/*.whl
    # Drop what records this machine's paths (the wheel's location, script shebangs),
    # so that the same commit builds the same bytes anywhere.
    rm -rf "$stage/site-packages/bin"
    find "$stage/site-packages" -name direct_url.json -delete
    sed -i -E '/direct_url.json|^(\.\.\/)*bin\//d' "$stage"/site-packages/*.dist-info/RECORD

    say "preamble"
    local built_for
    built_for=$("$py" -c 'import platform, sys; print(repr((f"{sys.version_info[0]}.{sys.version_info[1]}", sys.platform, platform.machine())))')
    sed "s|^BUILT_FOR: .*|BUILT_FOR = $built_for|" kite_skills/preamble.py > "$stage/preamble.py"

    say "shiv"
    "$WORK/venv/bin/shiv" --reproducible --compressed \
        -c kite-skills -p '/usr/bin/env python3.11' \
        --preamble "$stage/preamble.py" \
        --site-packages "$stage/site-packages" \
        -o "$stage/kite-skills.pyz" >/dev/null

    mkdir -p "$DIST"
    mv "$stage/kite-skills.pyz" "$DIST/kite-skills.pyz"
    rm -rf "$stage"
    (cd "$DIST" && sha256sum kite-skills.pyz > kite-skills.pyz.sha256)
    smoke_test
    say "built $DIST/kite-skills.pyz ($(stat -c %s "$DIST/kite-skills.pyz") bytes, $(cut -c1-16 "$DIST/kite-skills.pyz.sha256")…)"
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

wheelhouse() {
    local dir=$1
    check_python
    mkdir -p "$dir"
    say "downloading every wheel the build needs into $dir"
    "$PYTHON" -m pip download "${PIP_FLAGS[@]}" --only-binary=:all: -d "$dir" \
        -r requirements/runtime.txt -r requirements/build.txt shiv==1.0.8
    say "done: $(ls "$dir" | wc -l) files; build with ./build.sh --offline $dir"
}

run_tests() {
    check_python
    local venv=$WORK/test-venv
    say "test venv"
    make_venv "$venv"
    "$venv/bin/pip" install "${PIP_FLAGS[@]}" -r requirements/runtime.txt -r requirements/dev.txt
    "$venv/bin/pip" install "${PIP_FLAGS[@]}" --no-deps --no-build-isolation -e .

    say "MCP Inspector $INSPECTOR_VERSION (npm)"
    command -v npm >/dev/null || { apt_install nodejs npm; }
    if [[ ! -x $WORK/inspector/node_modules/.bin/inspector ]]; then
        npm install --prefix "$WORK/inspector" --no-audit --no-fund --loglevel=error \
            "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null
    fi

    say "ruff"
    "$venv/bin/ruff" check .
    "$venv/bin/ruff" format --check . >/dev/null || die "ruff format would change files — run ruff format"

    say "mypy --strict (the pure libraries)"
    "$venv/bin/mypy" --strict kite_skills/catalog kite_skills/store

    say "pytest"
    KITE_SKILLS_PYZ=$DIST/kite-skills.pyz \
    KITE_SKILLS_INSPECTOR=$WORK/inspector/node_modules/.bin/inspector \
        "$venv/bin/pytest" -p no:cacheprovider "$@"
}

bench() {
    [[ -f $DIST/kite-skills.pyz ]] || die "dist/kite-skills.pyz is missing — run ./build.sh first"
    check_python
    say "bench venv"
    make_venv "$WORK/bench-venv"
    "$WORK/bench-venv/bin/pip" install "${PIP_FLAGS[@]}" -r requirements/bench.txt
    PYTHONPATH=$ROOT "$WORK/bench-venv/bin/python" bench/run.py "$@"
}

apt_install() {
    say "apt-get install $*"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

case "${1:-}" in
    "") build ;;
    test) shift; build; run_tests "$@" ;;
    bench) shift; bench "$@" ;;
    --wheelhouse) [[ -n ${2:-} ]] || die "usage: ./build.sh --wheelhouse DIR"; wheelhouse "$2" ;;
    --offline)
        [[ -d ${2:-} ]] || die "usage: ./build.sh --offline DIR (a directory made by --wheelhouse)"
        build --no-index --find-links "$(cd "$2" && pwd)" ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) die "unknown argument '$1' — try ./build.sh --help" ;;
esac
