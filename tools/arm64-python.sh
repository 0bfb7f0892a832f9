#!/bin/sh
# Debian's arm64 CPython 3.11 unpacked into DIR, to run under qemu-user (no chroot, no
# binfmt_misc):  qemu-aarch64-static -L DIR DIR/usr/bin/python3.11 ...
# Needs root and Debian's package registry: installs qemu-user-static, adds the arm64
# architecture to dpkg, downloads python3.11:arm64 and what it depends on. Used by the
# opt-in test tests/test_aarch64.py (KITE_SKILLS_SLOW=1).
set -eu
dir=${1:?usage: tools/arm64-python.sh DIR}
if [ -x "$dir/usr/bin/python3.11" ] && command -v qemu-aarch64-static >/dev/null; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! command -v qemu-aarch64-static >/dev/null; then
    apt-get update -qq >/dev/null
    apt-get install -y -qq qemu-user-static >/dev/null
fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
fi
apt-get update -qq >/dev/null
debs=$dir.debs
rm -rf "$debs" "$dir"
mkdir -p "$debs" "$dir"
packages=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances python3.11:arm64 \
    | grep -E '^[a-z0-9].*:arm64$' | grep -v -E '^(dpkg|install-info|tar):' | sort -u)
(cd "$debs" && apt-get download $packages media-types >/dev/null)
for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$dir"
done
rm -rf "$debs"
qemu-aarch64-static -L "$dir" "$dir/usr/bin/python3.11" -c 'import platform; print(platform.machine())'
