#!/bin/sh
# The whole build and test suite on the lent GPU machine, in one go (it
# starts bare and goes back after 30 s idle): configure, build, make check,
# then clmem-info and a quick clmem-bench, with every log in one tarball
# under $OUT (only a few files come back per call).
#
# Usage there:  . .device/setup.sh && sh tools/gpu-check.sh [TESTS...]
# With TESTS, only those run (make check TESTS="..."). Prints the TAP totals,
# then runs clmem-bench (BENCH_ARGS, at most BENCH_SECONDS; NO_BENCH=1 skips
# it), its CSV to $OUT/bench.csv.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
jobs=$(nproc)
log=$out/gpu-check.txt
{
    echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
    autoreconf -fi >/dev/null 2>&1 && ./configure --enable-werror >configure.out 2>&1 || { tail -30 configure.out; exit 1; }
    make -j"$jobs" >make.out 2>&1 || { grep -E "error|warning" make.out | head -40; exit 1; }
    if [ $# -gt 0 ]; then
        make -j"$jobs" check TESTS="$*" >check.out 2>&1
    else
        make -j"$jobs" check >check.out 2>&1
    fi
    echo "make check exit $?"
    grep -E "^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):" check.out
    grep -hE "^(FAIL|ERROR|XPASS):" check.out
    echo "== skips"; grep -h "^SKIP:" check.out | head -60
    echo "== clmem-info"; ./tools/clmem-info 2>&1 | head -80
    if [ -z "${NO_BENCH:-}" ]; then
        echo "== clmem-bench ${BENCH_ARGS:-}"
        timeout "${BENCH_SECONDS:-240}" ./tools/clmem-bench ${BENCH_ARGS:-} --csv "$out/bench.csv" >bench.out 2>&1
        echo "clmem-bench exit $?"
        cat bench.out
    fi
} >"$log" 2>&1
cat "$log"
tar -czf "$out/logs.tgz" t/*.log test-suite.log configure.out make.out check.out bench.out 2>/dev/null
true
