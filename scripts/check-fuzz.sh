#!/bin/sh
# Fuzz clmem_handle_wrap, clmem_handle_wrap_checked and
# clmem_bridge_import_fd with libFuzzer (t/fuzz-wrap.c), with ASan and UBSan,
# for FUZZ_SECONDS (default 60) seconds.
#
# Usage: scripts/check-fuzz.sh [extra libFuzzer arguments]
#   FUZZ_SECONDS=300 scripts/check-fuzz.sh
#
# Builds libclmem and libclmem-bridge with clang in build-fuzz/ (ignored by
# git), instrumented for coverage (-fsanitize=fuzzer-no-link) and with the
# sanitizers, links the harness against the static libraries
# (.libs/libclmem.a, .libs/libclmem-bridge.a) with -fsanitize=fuzzer, and
# runs it on build-fuzz/corpus (kept between runs, so each run goes on from
# the last). A crash, a sanitizer report or a broken promise (the harness
# aborts) stops the run with a non-zero exit and leaves the input in
# build-fuzz/crash-*; replay it with build-fuzz/fuzz-wrap build-fuzz/crash-...
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build-fuzz
seconds=${FUZZ_SECONDS:-60}
jobs=${JOBS:-2}
flags='-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer'

command -v clang >/dev/null || { echo "clang is not installed" >&2; exit 77; }

mkdir -p "$build"
. "$top/scripts/build-dir.sh"
source_dir "$build"
if ! test -f "$build/Makefile"; then
    # fuzzer-no-link: coverage feedback from inside the libraries, which is
    # what steers the fuzzer through their checks. No --enable-werror: the
    # instrumentation is not what the warnings gate is for.
    (cd "$build" && "$src/configure" CC=clang CXX=clang++ CFLAGS="$flags -fsanitize=fuzzer-no-link" \
        LDFLAGS='-fsanitize=address,undefined' >configure.out) ||
        { echo "configure failed: $build/config.log" >&2; exit 1; }
fi
cd "$build"
make -j"$jobs" libclmem.la libclmem-bridge.la >make.out 2>&1 || { echo "build failed: $build/make.out" >&2; exit 1; }
clang $flags -fsanitize=fuzzer -I"$src/include" -I"$src/vkctx" -I"$build" $(pkg-config --cflags vulkan OpenCL 2>/dev/null) \
    -o fuzz-wrap "$src/t/fuzz-wrap.c" "$src/vkctx/vkctx.c" "$src/vkctx/vkctx-commands.c" .libs/libclmem-bridge.a .libs/libclmem.a \
    $(pkg-config --libs vulkan OpenCL 2>/dev/null || echo -lvulkan -lOpenCL) -pthread

mkdir -p corpus
# Leaks are checked per input (libFuzzer's -detect_leaks, on by default with
# ASan); intercept_tls_get_addr=0 and fast_unwind_on_malloc=0 as in
# scripts/check-sanitizers.sh (gcc or clang, the same LeakSanitizer DTLS
# crash with glibc 2.36; stacks through the drivers' frames).
ASAN_OPTIONS=${ASAN_OPTIONS:-intercept_tls_get_addr=0:fast_unwind_on_malloc=0}
LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/t/lsan.supp}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
echo "fuzzing for $seconds s (corpus: $build/corpus)"
./fuzz-wrap -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$build/" "$@" corpus 2>fuzz.log &&
    status=0 || status=$?
grep -E '^#[0-9]+.*(DONE|pulse|INITED)|^stat::|^Done|ERROR|SUMMARY' fuzz.log | tail -15
if test "$status" -ne 0; then
    echo "fuzz: FAILED (exit $status): see $build/fuzz.log and the crash-* input in $build" >&2
    exit 1
fi
echo "fuzz: no crash and no broken promise in $seconds s; corpus $(ls corpus | wc -l) inputs"
