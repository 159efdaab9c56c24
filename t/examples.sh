#!/bin/sh
# Runs the examples the README quotes and checks what they print.
b=${top_builddir:-.}
run() { "$b/libtool" --mode=execute "$@"; }
echo 1..4
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
    echo "not ok 4 - clblast-example: CLMEM_BRIDGE_BUILT is unset (run through make check)"
    exit 0
fi
if [ "$built" != yes ]; then
    echo "ok 2 - bridge-example # SKIP $built"
    echo "ok 3 - ring-example # SKIP $built"
    echo "ok 4 - clblast-example # SKIP $built"
    exit 0
fi
out=$(run "$b/examples/bridge-example" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "through the" && echo "$out" | grep -q "Vulkan memory freed after OpenCL let go"; then
    echo "ok 2 - bridge-example runs:" $out
else
    echo "not ok 2 - bridge-example exited $rc:" $out
fi
# The README's ring example: frames in flight, every frame checked by OpenCL.
out=$(run "$b/examples/ring-example" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "OpenCL saw every frame as Vulkan wrote it"; then
    echo "ok 3 - ring-example runs:" $out
else
    echo "not ok 3 - ring-example exited $rc:" $out
fi
# The README's CLBlast example (issue 17), when configure found CLBlast:
# SGEMM on Vulkan-written padded matrices through pitched handles, checked
# against the CPU by the example itself (it exits 1 past its tolerance).
clblast=${CLMEM_CLBLAST_FOUND:-}
if [ -z "$clblast" ]; then
    echo "not ok 4 - clblast-example: CLMEM_CLBLAST_FOUND is unset (run through make check)"
elif [ "$clblast" != yes ]; then
    echo "ok 4 - clblast-example # SKIP $clblast"
else
    out=$(run "$b/examples/clblast-example" 2>&1); rc=$?
    if [ $rc -eq 0 ] && echo "$out" | grep -q "CLBlast SGEMM .* through the .* path, ld .*: max error"; then
        echo "ok 4 - clblast-example runs:" $out
    else
        echo "not ok 4 - clblast-example exited $rc:" $out
    fi
fi
