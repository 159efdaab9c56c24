#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the examples the README quotes and checks what they print. The
# bridge and ring examples run again under the Khronos validation layer
# (errors, warnings and performance warnings reported, synchronisation
# validation on), which must stay silent, as docs/vulkan-sync.md promises;
# and built with t/lib/fake-nvidia-import.c (t/tools/fakefd-*-example), so that their
# ownership transfers to and from VK_QUEUE_FAMILY_EXTERNAL run on an
# exported buffer on the CPU machines too. And the process pair, run as
# clmem-ipc(7) says, printing what it says they print; a stale socket file
# (its producer killed before anyone connected) replaced by the next
# producer; a consumer with nobody listening; and their --help.
b=${top_builddir:-.}
s=${top_srcdir:-.}
run() { "$b/libtool" --mode=execute "$@"; }
echo 1..16
out=$(run "$b/examples/handle-example" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "consumer got 7680-byte rows"; then
    echo "ok 1 - handle-example runs: $out"
else
    echo "not ok 1 - handle-example exited $rc: $out"
fi
# configure's choice, not whether a file happens to be there (a stale
# build output must not be run): "yes", or the reason it was not built.
built=${CLMEM_BRIDGE_BUILT:-}
bridge_points="2 bridge-example;3 bridge-example under the validation layer;4 fakefd-bridge-example;5 ring-example"
bridge_points="$bridge_points;6 ring-example under the validation layer;7 fakefd-ring-example"
if [ "$built" != yes ]; then
    echo "$bridge_points;8 ffmpeg-example;9 clblast-example;10 bridge-minimal;11 bridge-minimal under the validation layer;12 ffmpeg-filter-example;13 xproc pair as clmem-ipc(7) says;14 xproc pair after a stale socket;15 xproc-consumer with nobody listening;16 xproc --help" |
        tr ';' '\n' | while read -r n what; do
        if [ -z "$built" ]; then
            echo "not ok $n - $what: CLMEM_BRIDGE_BUILT is unset (run through make check)"
        else
            echo "ok $n - $what # SKIP $built"
        fi
    done
    exit 0
fi

# The validation layer, where the Vulkan loader finds it and
# CLMEM_VALIDATION=0 does not turn it off (as for vkctx's tests): the layer's
# settings (every report level, to stdout) in a file of their own, and the
# loader's word that it inserted the layer.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-examples.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
cat >"$tmp/vk_layer_settings.txt" <<'EOF'
khronos_validation.report_flags = error,warn,perf
khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG
khronos_validation.log_filename = stdout
EOF
# Synchronisation validation too, except in a sanitizer build
# (CLMEM_TEST_INSTRUMENTED, set by scripts/check-sanitizers.sh): there the
# layer's (1.3.239) synchronisation state, never freed before the loader
# unloads the layer, is what LeakSanitizer reports.
sync=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
[ -n "${CLMEM_TEST_INSTRUMENTED:-}" ] && sync=
validated() {
    VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation VK_LAYER_ENABLES=$sync \
        VK_LAYER_SETTINGS_PATH="$tmp/vk_layer_settings.txt" run "$@"
}
if [ "${CLMEM_VALIDATION:-}" = 0 ]; then
    layer="CLMEM_VALIDATION=0 asks for no validation layer"
elif VK_LOADER_DEBUG=layer validated "$b/t/bridge/bridge-best-memory" --print-path 2>&1 |
    grep -q 'Insert instance layer "VK_LAYER_KHRONOS_validation"'; then
    layer=yes
else
    layer="the Vulkan loader did not load VK_LAYER_KHRONOS_validation (Debian: vulkan-validationlayers)"
fi
# What the layer prints: "VUID-...(ERROR / SPEC): ... Validation Error: ...",
# "Validation Warning", "Validation Performance Warning", "SYNC-HAZARD-...".
vk_messages='Validation (Error|Warning|Performance)|VUID-|SYNC-HAZARD|UNASSIGNED-'

# check N WHAT PATTERN1 PATTERN2 OUTPUT RC: point N passes when the program
# exited 0, printed both patterns, and no validation message.
check() {
    if [ "$6" -eq 0 ] && echo "$5" | grep -q -- "$3" && echo "$5" | grep -q -- "$4" &&
       ! echo "$5" | grep -E -q "$vk_messages"; then
        echo "ok $1 - $2:" $5
    else
        echo "not ok $1 - $2 exited $6, want \"$3\" and no validation message:"
        echo "$5" | sed 's/^/# /'
    fi
}

# The examples share through the best path the bridge's capabilities offer
# (opaque fd on the GPU machine, host-mapped on the CPU machines): the
# first of opaque fd, dma-buf, host-mapped in clmem_bridge_caps(), as
# t/bridge/bridge-best-memory --print-path works it out for the same pairing; the
# fakefd builds through the path t/bridge/fakefd-bridge-best-memory works out.
best=$(run "$b/t/bridge/bridge-best-memory" --print-path 2>&1 | tail -n 1)
fakebest=$(run "$b/t/bridge/fakefd-bridge-best-memory" --print-path 2>/dev/null | tail -n 1)
bridge_ok="through the $best path: .*every byte checked"
freed="Vulkan memory freed after OpenCL let go"
out=$(run "$b/examples/bridge-example" 2>&1); rc=$?
check 2 "bridge-example: Vulkan writes, OpenCL inverts, Vulkan checks every byte ($best)" "$bridge_ok" "$freed" \
    "$out" $rc
if [ "$layer" = yes ]; then
    out=$(validated "$b/examples/bridge-example" 2>&1); rc=$?
    check 3 "bridge-example under the validation layer, silent" "$bridge_ok" "$freed" "$out" $rc
    out=$(validated "$b/t/tools/fakefd-bridge-example" 2>&1); rc=$?
    check 4 "fakefd-bridge-example ($fakebest path) under the validation layer, silent" \
        "through the $fakebest path: .*every byte checked" "$freed" "$out" $rc
else
    echo "ok 3 - bridge-example under the validation layer # SKIP $layer"
    out=$(run "$b/t/tools/fakefd-bridge-example" 2>&1); rc=$?
    check 4 "fakefd-bridge-example ($fakebest path), without the validation layer" \
        "through the $fakebest path: .*every byte checked" "$freed" "$out" $rc
fi

# The README's ring example: frames in flight, every frame checked by OpenCL.
ring_ok="OpenCL saw every frame as Vulkan wrote it"
out=$(run "$b/examples/ring-example" 2>&1); rc=$?
check 5 "ring-example ($best)" "$ring_ok" "through the $best path" "$out" $rc
if [ "$layer" = yes ]; then
    out=$(validated "$b/examples/ring-example" 2>&1); rc=$?
    check 6 "ring-example under the validation layer, silent" "$ring_ok" "through the $best path" "$out" $rc
    out=$(validated "$b/t/tools/fakefd-ring-example" 2>&1); rc=$?
    check 7 "fakefd-ring-example ($fakebest path) under the validation layer, silent" "$ring_ok" \
        "through the $fakebest path" "$out" $rc
else
    echo "ok 6 - ring-example under the validation layer # SKIP $layer"
    out=$(run "$b/t/tools/fakefd-ring-example" 2>&1); rc=$?
    check 7 "fakefd-ring-example ($fakebest path), without the validation layer" "$ring_ok" \
        "through the $fakebest path" "$out" $rc
fi

# The README's FFmpeg example (libclmem-av), where configure built it.
av=${CLMEM_AV_BUILT:-"CLMEM_AV_BUILT is unset (run through make check)"}
if [ "$av" != yes ]; then
    echo "ok 8 - ffmpeg-example # SKIP $av"
else
    out=$(run "$b/examples/ffmpeg-example" 2>&1); rc=$?
    if [ $rc -eq 0 ] && echo "$out" | grep -q "frame planes through the" && echo "$out" | grep -q "match the CPU"; then
        echo "ok 8 - ffmpeg-example runs:" $out
    else
        echo "not ok 8 - ffmpeg-example exited $rc:" $out
    fi
fi
# The README's CLBlast example, when configure found CLBlast: SGEMM on
# Vulkan-written padded matrices through pitched handles, checked against
# the CPU by the example itself (it exits 1 past its tolerance).
clblast=${CLMEM_CLBLAST_FOUND:-}
if [ -z "$clblast" ]; then
    echo "not ok 9 - clblast-example: CLMEM_CLBLAST_FOUND is unset (run through make check)"
elif [ "$clblast" != yes ]; then
    echo "ok 9 - clblast-example # SKIP $clblast"
else
    out=$(run "$b/examples/clblast-example" 2>&1); rc=$?
    if [ $rc -eq 0 ] && echo "$out" | grep -q "CLBlast SGEMM .* through the $best path, ld .*: max error"; then
        echo "ok 9 - clblast-example runs through the best path ($best):" $out
    else
        echo "not ok 9 - clblast-example exited $rc, want the $best path:" $out
    fi
fi
# The README's short bridge example: the fewest calls, OpenCL writing
# Vulkan memory between acquire and release, the end before vkDestroyDevice.
minimal_ok="OpenCL wrote 1048576 bytes of Vulkan memory through the $best path"
out=$(run "$b/examples/bridge-minimal" 2>&1); rc=$?
check 10 "bridge-minimal ($best)" "$minimal_ok" "$minimal_ok" "$out" $rc
if [ "$layer" = yes ]; then
    out=$(validated "$b/examples/bridge-minimal" 2>&1); rc=$?
    check 11 "bridge-minimal under the validation layer, silent" "$minimal_ok" "$minimal_ok" "$out" $rc
else
    echo "ok 11 - bridge-minimal under the validation layer # SKIP $layer"
fi
# FFmpeg's OpenCL filters on mapped Vulkan frames, when configure found
# libavfilter: the example compares every byte with the hwupload route
# itself. Exit 2 is its word that no image way fits this machine.
avfilter=${CLMEM_LIBAVFILTER_FOUND:-}
if [ -z "$avfilter" ]; then
    echo "not ok 12 - ffmpeg-filter-example: CLMEM_LIBAVFILTER_FOUND is unset (run through make check)"
elif [ "$avfilter" != yes ]; then
    echo "ok 12 - ffmpeg-filter-example # SKIP $avfilter"
else
    out=$(run "$b/examples/ffmpeg-filter-example" 2>&1); rc=$?
    if [ $rc -eq 0 ] && echo "$out" | grep -q "every byte as the hwupload route's"; then
        echo "ok 12 - ffmpeg-filter-example runs:" $out
    elif [ $rc -eq 2 ] && echo "$out" | grep -q "no image way for these frames here"; then
        echo "ok 12 - ffmpeg-filter-example # SKIP" $out
    else
        echo "not ok 12 - ffmpeg-filter-example exited $rc:" $out
    fi
fi

# The process pair (libclmem-ipc), where configure built it: the commands
# of clmem-ipc(7)'s EXAMPLES, with the examples of this build tree.
ipc=${CLMEM_IPC_BUILT:-"CLMEM_IPC_BUILT is unset (run through make check)"}
if [ "$ipc" != yes ]; then
    for p in "13 xproc pair as clmem-ipc(7) says" "14 xproc pair after a stale socket" \
        "15 xproc-consumer with nobody listening" "16 xproc --help"; do
        echo "ok ${p%% *} - ${p#* } # SKIP $ipc"
    done
    exit 0
fi
producer=$b/examples/xproc-producer
consumer=$b/examples/xproc-consumer
# pair N WHAT SOCKET: the manual's two commands, the producer in the
# background; passes when both exit 0 and print every line the manual
# says they print (its socket path and sharing path are this run's).
pair() {
    run "$producer" "$3" --frames 16 >"$tmp/producer.out" 2>&1 &
    pid=$!
    run "$consumer" "$3" >"$tmp/consumer.out" 2>&1
    crc=$?
    wait $pid
    prc=$?
    out=$(cat "$tmp/producer.out" "$tmp/consumer.out")
    missing=
    # What clmem-ipc(7) says they print: its lines "producer: ..." and
    # "consumer: ...", as patterns.
    sed -n 's/^\(producer\|consumer\): /&/p' "$s/man/clmem-ipc.7" | sed 's/[][\.*^$]/\\&/g' |
        sed 's/listening at .*/listening at .*/; s/the host-mapped path/the [a-z-]* path/' >"$tmp/want"
    while read -r line; do
        echo "$out" | grep -q -- "^$line\$" || missing="$missing [$line]"
    done <"$tmp/want"
    if [ $prc -eq 0 ] && [ $crc -eq 0 ] && [ -s "$tmp/want" ] && [ -z "$missing" ]; then
        echo "ok $1 - $2: both exit 0, printing the $(wc -l <"$tmp/want") lines clmem-ipc(7) shows"
    else
        echo "not ok $1 - $2: producer exited $prc, consumer $crc; lines of clmem-ipc(7) missing:$missing"
        echo "$out" | sed 's/^/# /'
    fi
}
pair 13 "the xproc pair, as clmem-ipc(7) runs it" "$tmp/xproc.sock"

# A producer killed before anyone connected leaves its socket file; the
# next producer at the path replaces it.
# (libtool itself in the background, not run(): $! is then the process
# that becomes the producer, libtool's last step being an exec.)
"$b/libtool" --mode=execute "$producer" "$tmp/stale.sock" >/dev/null 2>&1 &
pid=$!
i=0
while [ ! -S "$tmp/stale.sock" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
if [ -S "$tmp/stale.sock" ]; then
    pair 14 "a producer killed before anyone connected left its socket file; the next pair at that path" \
        "$tmp/stale.sock"
else
    echo "not ok 14 - the killed producer left no socket file at $tmp/stale.sock to test with"
fi

# Nobody listening: the consumer tries for 10 s, then exits 3 saying it
# timed out, naming connect()'s errno.
out=$(run "$consumer" "$tmp/nobody.sock" 2>&1); rc=$?
if [ $rc -eq 3 ] && echo "$out" | grep -q 'timed out after 10 s' && echo "$out" | grep -E -q 'ENOENT|ECONNREFUSED'; then
    echo "ok 15 - a consumer with nobody listening exits 3: $out"
else
    echo "not ok 15 - a consumer with nobody listening exited $rc, want 3, \"timed out after 10 s\" and the errno's name: $out"
fi

# --help: the usage, on stdout, exit 0.
pout=$(run "$producer" --help 2>/dev/null); prc=$?
cout=$(run "$consumer" --help 2>/dev/null); crc=$?
if [ $prc -eq 0 ] && [ $crc -eq 0 ] && echo "$pout" | grep -q '^usage: .*SOCKET' && echo "$cout" | grep -q '^usage: .*SOCKET'; then
    echo "ok 16 - xproc-producer --help and xproc-consumer --help print their usage and exit 0"
else
    echo "not ok 16 - --help: producer exited $prc, consumer $crc:" $pout $cout
fi
