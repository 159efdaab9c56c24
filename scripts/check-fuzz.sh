#!/bin/sh
# SPDX-License-Identifier: MIT
# Fuzz clmem_handle_wrap, clmem_handle_wrap_checked and
# clmem_bridge_import_fd with libFuzzer (t/core/fuzz-wrap.c), with ASan and UBSan,
# for FUZZ_SECONDS (default 60) seconds; then, where libclmem-ipc is built,
# what a cross-process peer sends (t/ipc/fuzz-ipc.c: libclmem-ipc's parser and
# rules of conversation) for IPC_FUZZ_SECONDS (default FUZZ_SECONDS).
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
# (build-fuzz/fuzz-ipc for one of build-fuzz/ipc-crash-*).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build-fuzz
seconds=${FUZZ_SECONDS:-60}
ipc_seconds=${IPC_FUZZ_SECONDS:-$seconds}
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
clang $flags -fsanitize=fuzzer -I"$src/include" -I"$src/tools/vkctx" -I"$build" $(pkg-config --cflags vulkan OpenCL 2>/dev/null) \
    -o fuzz-wrap "$src/t/core/fuzz-wrap.c" "$src/tools/vkctx/vkctx.c" "$src/tools/vkctx/vkctx-commands.c" .libs/libclmem-bridge.a .libs/libclmem.a \
    $(pkg-config --libs vulkan OpenCL 2>/dev/null || echo -lvulkan -lOpenCL) -pthread

mkdir -p corpus
# Leaks are checked per input (libFuzzer's -detect_leaks, on by default with
# ASan); intercept_tls_get_addr=0 and fast_unwind_on_malloc=0 as in
# scripts/check-sanitizers.sh (gcc or clang, the same LeakSanitizer DTLS
# crash with glibc 2.36; stacks through the drivers' frames).
ASAN_OPTIONS=${ASAN_OPTIONS:-intercept_tls_get_addr=0:fast_unwind_on_malloc=0}
LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/t/data/lsan.supp}
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

# What a cross-process peer sends: libclmem-ipc's parser and rules of
# conversation, compiled into the harness (they are internal to the
# library), where configure builds libclmem-ipc.
if ! grep -q '^IPC_BUILT = yes$' Makefile; then
    echo "fuzz-ipc: skipped, $(sed -n 's/^IPC_BUILT = //p' Makefile)"
    exit 0
fi
clang $flags -fsanitize=fuzzer -I"$src/include" -I"$src/lib" -I"$src/ipc" -I"$build" \
    $(pkg-config --cflags vulkan OpenCL 2>/dev/null) -o fuzz-ipc "$src/t/ipc/fuzz-ipc.c" "$src/ipc/wire.c" \
    "$src/ipc/proto.c" .libs/libclmem-bridge.a .libs/libclmem.a \
    $(pkg-config --libs vulkan OpenCL 2>/dev/null || echo -lvulkan -lOpenCL) -pthread
mkdir -p corpus-ipc
echo "fuzzing libclmem-ipc's parser for $ipc_seconds s (corpus: $build/corpus-ipc)"
./fuzz-ipc -max_total_time="$ipc_seconds" -print_final_stats=1 -artifact_prefix="$build/ipc-" "$@" corpus-ipc \
    2>fuzz-ipc.log && status=0 || status=$?
grep -E '^#[0-9]+.*(DONE|pulse|INITED)|^stat::|^Done|ERROR|SUMMARY' fuzz-ipc.log | tail -15
if test "$status" -ne 0; then
    echo "fuzz-ipc: FAILED (exit $status): see $build/fuzz-ipc.log and the ipc-crash-* input in $build" >&2
    exit 1
fi
echo "fuzz-ipc: no crash and no broken promise in $ipc_seconds s; corpus $(ls corpus-ipc | wc -l) inputs"
