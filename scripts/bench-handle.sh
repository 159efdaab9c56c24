#!/bin/sh
# SPDX-License-Identifier: MIT
# Cost of the handle's hot path, counted by valgrind rather than timed:
#   instructions per clmem_handle_ref + unref pair (callgrind), and
#   heap allocations per clmem_handle_wrap (memcheck's heap summary).
# Each figure is the difference between a run that does the work N times and
# one that does it 0 times, divided by N, so the OpenCL set-up cancels out.
#
# Usage: scripts/bench-handle.sh [BUILDDIR]   (after make; default BUILDDIR .)
# Targets: <= 20 instructions per pair, 1 allocation per wrap.
set -e
builddir=${1:-.}
PAIRS=1000000
WRAPS=1000
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# tools/bench-handle is a libtool wrapper script; --mode=execute runs
# valgrind on the real binary with the uninstalled library.
run() {
    "$builddir/libtool" --mode=execute "$@"
}

# Total instructions (Ir) of one callgrind run: the out-file's summary line.
callgrind_ir() {
    run valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" "$builddir/tools/bench-handle" --pairs "$1" \
        >/dev/null 2>"$tmp/cg.$1.log"
    sed -n 's/^summary: *//p' "$tmp/cg.$1"
}

# Heap allocations of one memcheck run: "total heap usage: N allocs, ...".
memcheck_allocs() {
    run valgrind --tool=memcheck "$builddir/tools/bench-handle" --wraps "$1" >/dev/null 2>"$tmp/mc.$1.log"
    sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' "$tmp/mc.$1.log" | tr -d ,
}

ir_n=$(callgrind_ir $PAIRS)
ir_0=$(callgrind_ir 0)
echo "callgrind: --pairs $PAIRS: $ir_n Ir; --pairs 0: $ir_0 Ir"
awk -v a="$ir_n" -v b="$ir_0" -v n=$PAIRS \
    'BEGIN { printf "instructions per clmem_handle_ref+unref pair: %.2f (target <= 20)\n", (a - b) / n }'

al_n=$(memcheck_allocs $WRAPS)
al_0=$(memcheck_allocs 0)
echo "memcheck: --wraps $WRAPS: $al_n allocs; --wraps 0: $al_0 allocs"
awk -v a="$al_n" -v b="$al_0" -v n=$WRAPS \
    'BEGIN { printf "allocations per clmem_handle_wrap: %.3f (target 1)\n", (a - b) / n }'
