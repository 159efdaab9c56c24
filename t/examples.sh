#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the examples the README quotes and checks what they print. The
# bridge and ring examples run again under the Khronos validation layer
# (errors, warnings and performance warnings reported, synchronisation
# validation on), which must stay silent, as docs/vulkan-sync.md promises;
# and built with t/fake-nvidia-import.c (t/fakefd-*-example), so that their
# ownership transfers to and from VK_QUEUE_FAMILY_EXTERNAL run on an
# exported buffer on the CPU machines too.
b=${top_builddir:-.}
run() { "$b/libtool" --mode=execute "$@"; }
echo 1..12
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
    echo "$bridge_points;8 ffmpeg-example;9 clblast-example;10 bridge-minimal;11 bridge-minimal under the validation layer;12 ffmpeg-filter-example" |
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
elif VK_LOADER_DEBUG=layer validated "$b/t/bridge-best-memory" --print-path 2>&1 |
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
# t/bridge-best-memory --print-path works it out for the same pairing; the
# fakefd builds through the path t/fakefd-bridge-best-memory works out.
best=$(run "$b/t/bridge-best-memory" --print-path 2>&1 | tail -n 1)
fakebest=$(run "$b/t/fakefd-bridge-best-memory" --print-path 2>/dev/null | tail -n 1)
bridge_ok="through the $best path: .*every byte checked"
freed="Vulkan memory freed after OpenCL let go"
out=$(run "$b/examples/bridge-example" 2>&1); rc=$?
check 2 "bridge-example: Vulkan writes, OpenCL inverts, Vulkan checks every byte ($best)" "$bridge_ok" "$freed" \
    "$out" $rc
if [ "$layer" = yes ]; then
    out=$(validated "$b/examples/bridge-example" 2>&1); rc=$?
    check 3 "bridge-example under the validation layer, silent" "$bridge_ok" "$freed" "$out" $rc
    out=$(validated "$b/t/fakefd-bridge-example" 2>&1); rc=$?
    check 4 "fakefd-bridge-example ($fakebest path) under the validation layer, silent" \
        "through the $fakebest path: .*every byte checked" "$freed" "$out" $rc
else
    echo "ok 3 - bridge-example under the validation layer # SKIP $layer"
    out=$(run "$b/t/fakefd-bridge-example" 2>&1); rc=$?
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
    out=$(validated "$b/t/fakefd-ring-example" 2>&1); rc=$?
    check 7 "fakefd-ring-example ($fakebest path) under the validation layer, silent" "$ring_ok" \
        "through the $fakebest path" "$out" $rc
else
    echo "ok 6 - ring-example under the validation layer # SKIP $layer"
    out=$(run "$b/t/fakefd-ring-example" 2>&1); rc=$?
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
