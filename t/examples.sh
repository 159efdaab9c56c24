#!/bin/sh
# Runs the examples the README quotes and checks what they print.
b=${top_builddir:-.}
run() { "$b/libtool" --mode=execute "$@"; }
echo 1..5
out=$(run "$b/examples/handle-example" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "consumer got 7680-byte rows"; then
    echo "ok 1 - handle-example runs: $out"
else
    echo "not ok 1 - handle-example exited $rc: $out"
fi
# configure's choice, not whether a file happens to be there (a stale
# build output must not be run): "yes", or the reason it was not built.
built=${CLMEM_BRIDGE_BUILT:-}
if [ -z "$built" ]; then
    echo "not ok 2 - bridge-example: CLMEM_BRIDGE_BUILT is unset (run through make check)"
    echo "not ok 3 - ring-example: CLMEM_BRIDGE_BUILT is unset (run through make check)"
    echo "not ok 4 - ffmpeg-example: CLMEM_BRIDGE_BUILT is unset (run through make check)"
    echo "not ok 5 - clblast-example: CLMEM_BRIDGE_BUILT is unset (run through make check)"
    exit 0
fi
if [ "$built" != yes ]; then
    echo "ok 2 - bridge-example # SKIP $built"
    echo "ok 3 - ring-example # SKIP $built"
    echo "ok 4 - ffmpeg-example # SKIP $built"
    echo "ok 5 - clblast-example # SKIP $built"
    exit 0
fi
# The examples share through the best path the bridge's capabilities offer
# (opaque fd on the GPU machine, host-mapped on the CPU machines): the
# first of opaque fd, dma-buf, host-mapped in clmem_bridge_caps(), as
# t/bridge-best-memory --print-path works it out for the same pairing.
best=$(run "$b/t/bridge-best-memory" --print-path 2>&1 | tail -n 1)
out=$(run "$b/examples/bridge-example" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "through the $best path" &&
   echo "$out" | grep -q "Vulkan memory freed after OpenCL let go"; then
    echo "ok 2 - bridge-example runs through the best path ($best):" $out
else
    echo "not ok 2 - bridge-example exited $rc, want the $best path:" $out
fi
# The README's ring example: frames in flight, every frame checked by OpenCL.
out=$(run "$b/examples/ring-example" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "OpenCL saw every frame as Vulkan wrote it" &&
   echo "$out" | grep -q "through the $best path"; then
    echo "ok 3 - ring-example runs through the best path ($best):" $out
else
    echo "not ok 3 - ring-example exited $rc, want the $best path:" $out
fi
# The README's FFmpeg example (libclmem-av), where configure built it.
av=${CLMEM_AV_BUILT:-"CLMEM_AV_BUILT is unset (run through make check)"}
if [ "$av" != yes ]; then
    echo "ok 4 - ffmpeg-example # SKIP $av"
else
    out=$(run "$b/examples/ffmpeg-example" 2>&1); rc=$?
    if [ $rc -eq 0 ] && echo "$out" | grep -q "frame planes through the" && echo "$out" | grep -q "match the CPU"; then
        echo "ok 4 - ffmpeg-example runs:" $out
    else
        echo "not ok 4 - ffmpeg-example exited $rc:" $out
    fi
fi
# The README's CLBlast example (issue 17), when configure found CLBlast:
# SGEMM on Vulkan-written padded matrices through pitched handles, checked
# against the CPU by the example itself (it exits 1 past its tolerance).
clblast=${CLMEM_CLBLAST_FOUND:-}
if [ -z "$clblast" ]; then
    echo "not ok 5 - clblast-example: CLMEM_CLBLAST_FOUND is unset (run through make check)"
elif [ "$clblast" != yes ]; then
    echo "ok 5 - clblast-example # SKIP $clblast"
else
    out=$(run "$b/examples/clblast-example" 2>&1); rc=$?
    if [ $rc -eq 0 ] && echo "$out" | grep -q "CLBlast SGEMM .* through the $best path, ld .*: max error"; then
        echo "ok 5 - clblast-example runs through the best path ($best):" $out
    else
        echo "not ok 5 - clblast-example exited $rc, want the $best path:" $out
    fi
fi
