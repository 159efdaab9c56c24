#!/bin/sh
# SPDX-License-Identifier: MIT
# libclmem alone, as a user without Vulkan (or with --disable-bridge) builds
# it: configure --disable-bridge in a build directory of its own
# (build-core/, ignored by git), then the whole `make check` and
# `make distcheck`. Nothing of the bridge may be needed and no bridge build
# output may be picked up (a bridge-example wrapper left by an earlier
# build with the bridge, for one).
#
# Usage: scripts/check-core-only.sh   (a failing step exits non-zero; the
# test logs are in build-core/t/*/*.log and build-core/test-suite.log)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-2}
dir=$top/build-core

. "$top/scripts/build-dir.sh"

mkdir -p "$dir"
source_dir "$dir"
cd "$dir"
"$src/configure" --enable-werror --disable-bridge >configure.out ||
    { echo "configure failed: $dir/config.log" >&2; exit 1; }
grep -q "libclmem-bridge:   no (--disable-bridge)" configure.out ||
    { echo "configure did not report the bridge as disabled:" >&2; cat configure.out >&2; exit 1; }
make -j"$jobs" >make.out 2>&1 || { cat make.out >&2; exit 1; }
if ! make -j"$jobs" check >check.out 2>&1; then
    cat check.out test-suite.log >&2
    exit 1
fi
grep -E "^# (TOTAL|PASS|SKIP|FAIL|ERROR):" check.out
make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--disable-bridge >distcheck.out 2>&1 ||
    { tail -50 distcheck.out >&2; exit 1; }
echo "core-only build: check and distcheck passed"
