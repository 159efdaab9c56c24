#!/bin/sh
# SPDX-License-Identifier: MIT
# The careless program of t/bridge/bridge-device-finish, run N times (default 20):
# a kernel held back by a user event that opens 1.5 s later; the bridge
# dropped first, then the last handle while the kernel is pending and the
# memory acquired; the queue and context released;
# clmem_bridge_device_finish(); vkDestroyDevice at once; and the process
# lives on for 2 s. Each run must exit 0 with every check passed; a crash
# (SIGSEGV on a driver thread, as before the call existed) or a failed
# check counts against it.
#
# Usage: scripts/check-device-finish.sh [N] [BUILDDIR]   (after make check
# built t/bridge/bridge-device-finish; default BUILDDIR .)
set -u
runs=${1:-20}
builddir=${2:-.}
test=$builddir/t/bridge/bridge-device-finish
test -x "$test" || { echo "$test is not built: run make check (or make t/bridge/bridge-device-finish) first" >&2; exit 2; }

good=0 crashed=0 failed=0 i=1
while [ "$i" -le "$runs" ]; do
    out=$("$test" careless 2>&1)
    status=$?
    if [ "$status" -gt 128 ]; then
        crashed=$((crashed + 1))
        echo "run $i: killed by signal $((status - 128))"
        printf '%s\n' "$out" | sed 's/^/    /'
    elif [ "$status" -ne 0 ] || printf '%s\n' "$out" | grep -q '^CHECK 0'; then
        failed=$((failed + 1))
        echo "run $i: exit status $status"
        printf '%s\n' "$out" | grep -v '^CHECK 1' | sed 's/^/    /'
    else
        good=$((good + 1))
        waited=$(printf '%s\n' "$out" | sed -n 's/.*it waited \([0-9]*\) ms.*/\1/p')
        echo "run $i: ok (clmem_bridge_device_finish waited ${waited:-?} ms)"
    fi
    i=$((i + 1))
done
echo "careless program: $runs runs, $good passed, $crashed crashed, $failed failed a check"
[ "$good" -eq "$runs" ]
