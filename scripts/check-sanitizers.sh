#!/bin/sh
# SPDX-License-Identifier: MIT
# The test suite under the sanitizers, each in a build directory of its own
# beside the sources (build-asan/, build-tsan/; ignored by git):
#
#   asan  gcc, AddressSanitizer + UndefinedBehaviorSanitizer (no recovery:
#         the first report ends the test), LeakSanitizer at exit: the whole
#         `make check`.
#   tsan  clang, ThreadSanitizer: the threaded tests (t/core/threads,
#         t/bridge/teardown-worker: hand-overs to the teardown thread from 8
#         threads, t/bridge/bridge-cache, t/bridge/bridge-cache-scale: 8 threads on keys that
#         share the cache's shards while their buckets grow,
#         t/bridge/bridge-threads: 8 threads importing, dropping
#         and calling clmem_bridge_finish on one bridge, t/bridge/bridge-ring-threads:
#         a ring's producer and consumer on two threads) and
#         t/fault/fault-injection, whose teardowns finish on driver threads
#         (marker and destructor callbacks) and in clmem_bridge_finish,
#         through every fallback path; t/fault/fault-injection again on the
#         fd path (t/fault/fakefd-fault-injection: sub-buffers, destroyed late from
#         the stand-in's own thread); t/bridge/bridge-device-finish, whose
#         careless program finishes a device from the main thread while
#         the teardown completes on PoCL's and a gate thread opens late;
#         and, where libclmem-ipc is built, t/ipc/ipc-loopback (a producer
#         thread, the consumer's release thread, frames dropped on a third)
#         and t/ipc/xproc (the two examples as two processes, themselves built
#         with TSan here, killed mid-frame).
#
# Usage: scripts/check-sanitizers.sh [asan|tsan|all]   (default: all)
# A report makes its test fail (a non-zero exit status, which the TAP
# driver reports as ERROR), so the script exits non-zero; the report is in
# build-*/t/<room>/<test>.log. To start a build directory afresh: rm -rf build-asan.
#
# The suppression files hide what the drivers (the OpenCL ICD loader, PoCL
# and its LLVM, Mesa's lavapipe, the Vulkan loader and validation layer) do
# on their own, and nothing of clmem's: t/data/lsan.supp, t/data/tsan.supp; each entry
# says what it hides and why it is not ours.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
jobs=${JOBS:-2}

. "$top/scripts/build-dir.sh"

# configure_in DIR CONFIGURE-ARGUMENTS...: configure once (a Makefile that
# exists is kept, and regenerates itself when the .am files change).
# Without --enable-werror: the instrumentation confuses gcc's
# -Wformat-truncation range analysis (false alarms in lib/error.c at -O1
# with -fsanitize=address); the normal CI build is the warnings gate.
configure_in() {
    dir=$1
    shift
    mkdir -p "$dir"
    source_dir "$dir"
    if ! test -f "$dir/Makefile"; then
        (cd "$dir" && "$src/configure" "$@" >configure.out) ||
            { echo "configure failed: $dir/config.log" >&2; exit 1; }
    fi
}

status=0

run_asan() {
    flags='-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all'
    configure_in "$top/build-asan" CC=gcc CXX=g++ CFLAGS="$flags" CXXFLAGS="$flags" \
        LDFLAGS='-fsanitize=address,undefined'
    # detect_leaks: LeakSanitizer at exit, with t/data/lsan.supp for what is not
    # clmem's. intercept_tls_get_addr=0: gcc 12's LeakSanitizer follows
    # glibc's dynamic TLS (the blocks of dlopen()ed libraries: the ICD
    # loader opens PoCL, the Vulkan loader lavapipe) and, with glibc 2.36,
    # reads a bogus block and crashes ("Tracer caught signal 11", "DTLS 12 at
    # 0x1d23-0x800002e25" with verbosity=1); static TLS and every stack are
    # still scanned. fast_unwind_on_malloc=0: the drivers are built without
    # frame pointers, and the fast unwinder stops at their first frame, so
    # an allocation made inside a driver would show no caller at all (and
    # could only be suppressed by the driver's name, which would hide clmem
    # leaking a driver object too). abort_on_error=0 and exitcode: a report
    # is a non-zero exit, not a core dump.
    # The tests that build a program as a user would, with plain cc
    # (t/tools/docs-commands, t/tree/version-pin), skip those programs here:
    # they cannot load the instrumented libraries.
    ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0:fast_unwind_on_malloc=0:halt_on_error=1:abort_on_error=0:exitcode=86:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1
    LSAN_OPTIONS=suppressions=$top/t/data/lsan.supp:print_suppressions=0:exitcode=87
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=88
    export ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
    CLMEM_TEST_INSTRUMENTED=asan # t/lib/tap.h: wall-clock bounds of instrumented builds
    export CLMEM_TEST_INSTRUMENTED
    start=$(date +%s)
    if (cd "$top/build-asan" && make -j"$jobs" >make.out 2>&1 && make -j"$jobs" check); then
        echo "asan: make check passed under ASan+UBSan+LSan in $(($(date +%s) - start)) s"
    else
        echo "asan: FAILED (reports in build-asan/t/*/*.log; build output in build-asan/make.out)" >&2
        status=1
    fi
    unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS CLMEM_TEST_INSTRUMENTED
}

run_tsan() {
    flags='-O1 -g -fsanitize=thread -fno-omit-frame-pointer'
    configure_in "$top/build-tsan" CC=clang CXX=clang++ CFLAGS="$flags" CXXFLAGS="$flags" \
        LDFLAGS='-fsanitize=thread'
    # halt_on_error=0: one run lists every race; exitcode: any report at
    # all makes the test exit non-zero. The drivers' own races are in
    # t/data/tsan.supp; clmem's frames are never suppressed.
    TSAN_OPTIONS="suppressions=$top/t/data/tsan.supp halt_on_error=0 exitcode=66 second_deadlock_stack=1 history_size=4"
    # CLMEM_VALIDATION=0: no Khronos validation layer here. It is a big
    # uninstrumented C++ library with threads of its own, and TSan reports a
    # lock-order inversion among its own mutexes (every frame in
    # libVkLayer_khronos_validation.so, from vkQueueSubmit and
    # vkDestroyDevice in the test's Vulkan context). Suppressing it by module
    # would also hide a cycle through clmem's locks (the bridge calls
    # vkMapMemory holding its mapping lock), so the layer is left out of this
    # run instead; every other run of the suite uses it.
    CLMEM_VALIDATION=0
    CLMEM_TEST_INSTRUMENTED=tsan
    ipc_tests=
    if grep -q '^IPC_BUILT = yes$' "$top/build-tsan/Makefile"; then
        ipc_tests='t/ipc/ipc-loopback t/ipc/xproc'
    fi
    export TSAN_OPTIONS CLMEM_VALIDATION CLMEM_TEST_INSTRUMENTED
    start=$(date +%s)
    if (cd "$top/build-tsan" && make -j"$jobs" >make.out 2>&1 &&
        make -j"$jobs" check TESTS="t/core/threads t/bridge/teardown-worker t/bridge/bridge-cache t/bridge/bridge-cache-scale t/bridge/bridge-threads t/bridge/bridge-ring-threads t/fault/fault-injection
            t/fault/fakefd-fault-injection t/bridge/bridge-device-finish $ipc_tests"); then
        echo "tsan: the threaded tests passed under ThreadSanitizer in $(($(date +%s) - start)) s"
    else
        echo "tsan: FAILED (reports in build-tsan/t/*/*.log; build output in build-tsan/make.out)" >&2
        status=1
    fi
    unset TSAN_OPTIONS CLMEM_VALIDATION
}

case $what in
asan) run_asan ;;
tsan) run_tsan ;;
all) run_asan; run_tsan ;;
*) echo "usage: $0 [asan|tsan|all]" >&2; exit 2 ;;
esac
exit $status
