#!/bin/sh
# SPDX-License-Identifier: MIT
# The whole build and test suite on the lent GPU machine, in one go (it
# starts bare and goes back after 30 s idle): configure, build, make check
# (at most CHECK_SECONDS, default 480, so that a hung test still leaves its
# log; on the H200 at 0.3.0 the whole suite ran past 300 s, its host-mapped
# stress cycles slowed some 30 times by the other tests beside them), then
# clmem-info and clmem-bench, with every log in one tarball under $OUT
# (only a few files come back per call). Progress goes to stdout as it
# happens, so a call that runs out of time still shows how far it got.
#
# Usage there:  . .device/setup.sh && sh scripts/gpu-check.sh [TESTS...]
# With TESTS, only those run (make check TESTS="..."). Then clmem-bench
# (BENCH_ARGS, at most BENCH_SECONDS; NO_BENCH=1 skips it), its CSV to
# $OUT/bench.csv.
set -u
# Headers found through CPATH are searched as -I directories, so a
# third-party header there (CLBlast 1.5.3's clblast_c.h has a non-prototype
# declaration) fails the --enable-werror build below; as C_INCLUDE_PATH
# they are system directories, whose warnings GCC leaves alone.
if [ -n "${CPATH:-}" ]; then
    export C_INCLUDE_PATH="$CPATH${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
    export CPLUS_INCLUDE_PATH="$CPATH${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}"
    unset CPATH
fi
out=${OUT:-/tmp/out}
mkdir -p "$out"
jobs=$(nproc)
pack() { tar -czf "$out/logs.tgz" t/*/*.log test-suite.log configure.out make.out check.out bench.out 2>/dev/null; }
trap pack EXIT
echo "== $(date -u +%T) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
autoreconf -fi >/dev/null 2>&1 && ./configure --enable-werror >configure.out 2>&1 || { tail -30 configure.out; exit 1; }
echo "== $(date -u +%T) configured"
# What configure found of the optional parts: a consumer test skips when its
# library was not staged, and this says so before the tests run.
grep -E "^ +(libclmem-bridge|CLBlast|clFFT):" configure.out
make -j"$jobs" >make.out 2>&1 || { grep -E "error|warning" make.out | head -40; exit 1; }
echo "== $(date -u +%T) built"
rm -f t/*/*.log t/*/*.trs test-suite.log # a copy of an earlier run's logs would pass for this one's
if [ $# -gt 0 ]; then
    timeout "${CHECK_SECONDS:-480}" make -j"$jobs" check TESTS="$*" >check.out 2>&1
else
    timeout "${CHECK_SECONDS:-480}" make -j"$jobs" check >check.out 2>&1
fi
echo "== $(date -u +%T) make check exit $?"
grep -E "^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):" check.out
grep -hE "^(FAIL|ERROR|XPASS):" check.out
for f in t/*/*.log; do [ -f "${f%.log}.trs" ] || echo "unfinished: $f: $(tail -2 "$f" | tr '\n' ' ')"; done
echo "== skips"; grep -h "^SKIP:" check.out | cut -c1-200 | head -60
echo "== clmem-info"; ./tools/clmem-info 2>&1 | head -80
if [ -z "${NO_BENCH:-}" ]; then
    echo "== $(date -u +%T) clmem-bench ${BENCH_ARGS:-}"
    timeout "${BENCH_SECONDS:-240}" ./tools/clmem-bench ${BENCH_ARGS:-} --csv "$out/bench.csv" >bench.out 2>&1
    echo "clmem-bench exit $?"
    cat bench.out
fi
