#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/clmem-info runs, in text and JSON, exits 0 on this machine, proves
# the host-mapped path live (buffers and RGBA8 image planes), and on PoCL reports the opaque-fd path as
# unsupported for the right reason (PoCL has no cl_khr_external_memory_opaque_fd).
# CLMEM_VK_DEVICE by index and by deviceUUID selects the device the default
# run lists as device 0; an index that does not exist fails, naming it.
#
# Run by make check from the build directory: t/tests.am exports
# top_builddir and top_srcdir.
: "${top_builddir:=.}"
LC_ALL=C
export LC_ALL

tool="$top_builddir/tools/clmem-info"
if test ! -x "$tool"; then
    echo "Bail out! $tool not found: build it first"
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-info.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# The default run lists every device: CLMEM_VK_DEVICE must not leak in.
unset CLMEM_VK_DEVICE
"$tool" >"$tmp/text" 2>"$tmp/text.err"
text_rc=$?
"$tool" --json >"$tmp/json" 2>"$tmp/json.err"
json_rc=$?

# The tool's own summary line says why there is nothing to pair.
vulkan_line=$(grep '^Vulkan: ' "$tmp/text")
case $vulkan_line in
"Vulkan: not built in"*)
    echo "1..0 # SKIP clmem-info was built without Vulkan (configured without libclmem-bridge)"
    exit 0 ;;
"Vulkan: none"*)
    reason=${vulkan_line#Vulkan: none (}
    echo "1..0 # SKIP no Vulkan physical device: ${reason%)}"
    exit 0 ;;
esac

echo "1..12"
n=0
# ok CONDITION-STATUS DESCRIPTION: one TAP line; on failure show the output.
check() {
    n=$((n + 1))
    if test "$1" -eq 0; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        sed "s/^/# /" "$tmp/text" "$tmp/text.err" "$tmp/py.err" "$tmp/sel" "$tmp/sel.err" 2>/dev/null
    fi
}

test "$text_rc" -eq 0
check $? "clmem-info exits 0 (got $text_rc)"

test "$json_rc" -eq 0
check $? "clmem-info --json exits 0 (got $json_rc)"

# Rows are "  PATH  STATUS..." under a "Vulkan N (...) + OpenCL P.D (...) on PLATFORM:" heading.
if grep -q '^OpenCL: none' "$tmp/text"; then
    echo "ok 3 - # SKIP no OpenCL device, so no host-mapped round trip"
    n=3
else
    grep -Eq '^  host-mapped +ok, ' "$tmp/text"
    check $? "a host-mapped round trip is ok"
fi

if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json, sys
d = json.load(sys.stdin)
for key in ("clmem_version", "opencl", "vulkan", "pairs", "bridges"):
    assert key in d, key
for p in d["pairs"]:
    assert p["status"] in ("ok", "failed", "unsupported"), p["status"]
' <"$tmp/json" 2>"$tmp/py.err"
    check $? "the JSON parses and has the top-level keys (python3)"
else
    # Weaker without python3: one object, and the keys are there.
    head -c 1 "$tmp/json" | grep -q '{' && tail -n 1 "$tmp/json" | grep -q '^}$' &&
        grep -q '"clmem_version": ' "$tmp/json" && grep -q '"pairs": \[' "$tmp/json"
    check $? "the JSON looks whole"
    echo "# python3 not found: the JSON was only checked with grep, not parsed"
fi

# Text and JSON agree that PoCL's opaque-fd row is unsupported, and say why.
if grep -q '^platform [0-9]*: Portable Computing Language$' "$tmp/text"; then
    awk '/^Vulkan [0-9]+ .* \+ OpenCL [0-9]+\.[0-9]+ / { pocl = /on Portable Computing Language:$/ }
         pocl && $1 == "opaque-fd" { rows++; if ($2 == "unsupported:" && /cl_khr_external_memory_opaque_fd/) good++ }
         END { exit !(rows > 0 && rows == good) }' "$tmp/text"
    check $? "PoCL's opaque-fd rows are unsupported, naming cl_khr_external_memory_opaque_fd"
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import json, sys
rows = [p for p in json.load(sys.stdin)["pairs"]
        if p["opencl_platform"] == "Portable Computing Language" and p["path"] == "opaque-fd"]
assert rows
for p in rows:
    assert p["status"] == "unsupported" and "cl_khr_external_memory_opaque_fd" in p["reason"], p
' <"$tmp/json"
        check $? "the same in the JSON"
    else
        n=$((n + 1))
        echo "ok $n - # SKIP python3 not found"
    fi
else
    echo "ok 5 - # SKIP no PoCL platform"
    echo "ok 6 - # SKIP no PoCL platform"
    n=6
fi

# Images: every pair with a host-mapped path lists its image formats, and
# RGBA8's plane buffers were read back live; the JSON carries the same.
if grep -q '^OpenCL: none' "$tmp/text"; then
    n=$((n + 1))
    echo "ok $n - # SKIP no OpenCL device, so no image rows"
else
    grep -Eq '^  host-mapped +VK_FORMAT_R8G8B8A8_UNORM +planes ok ' "$tmp/text" &&
        { ! command -v python3 >/dev/null 2>&1 || python3 -c 'import json, sys
rows = [i for b in json.load(sys.stdin)["bridges"] for i in b["images"]
        if i["path"] == "host-mapped" and i["format"] == "VK_FORMAT_R8G8B8A8_UNORM"]
assert rows and all(i["planes"]["status"] == "ok" for i in rows), rows
' <"$tmp/json" 2>"$tmp/py.err"; }
    check $? "host-mapped RGBA8 plane buffers are read back live, in the text and the JSON"
fi

# The image footnotes give each reason once: no footnote is another's
# reason under a prefix (a view that could not be checked for the planes'
# reason shares their footnote). Image usage is given by flag names.
awk '/^    \[[0-9]+\] / { sub(/^    \[[0-9]+\] /, ""); note[++k] = $0 }
     END { for (i = 1; i <= k; i++) for (j = 1; j <= k; j++)
               if (i != j && note[i] != note[j] && length(note[i]) > length(note[j]) &&
                   substr(note[i], length(note[i]) - length(note[j]) + 1) == note[j]) {
                   print "footnote \"" note[i] "\" repeats \"" note[j] "\"" >"/dev/stderr"; bad = 1 }
           exit bad }' "$tmp/text" 2>"$tmp/py.err" && ! grep -n 'usage 0x' "$tmp/text" >>"$tmp/py.err"
check $? "the image footnotes give each reason once, and name usage flags rather than a number"

# Usage errors are exit status 2, --help is 0.
"$tool" --size 6 >/dev/null 2>&1
size_rc=$?
"$tool" --help >/dev/null 2>&1
help_rc=$?
test "$size_rc" -eq 2 && test "$help_rc" -eq 0
check $? "--size 6 exits 2 (got $size_rc), --help exits 0 (got $help_rc)"

# Vulkan device 0's block of a text report: from "device 0: " up to the
# next device, the blank line or the rows (the OpenCL devices are indented,
# so "^device " is Vulkan's).
vk_device0() {
    awk '/^Vulkan: / { vk = 1; next }
         vk && /^device 0: / { on = 1 }
         vk && on && (/^$/ || (/^device [0-9]+: / && !/^device 0: /)) { exit }
         on { print }' "$1"
}
vk_device0 "$tmp/text" >"$tmp/dev0"
uuid=$(sed -n 's/^  device UUID: *//p' "$tmp/dev0")

# One run with CLMEM_VK_DEVICE=$1: exits 0, says it checks only device 0,
# and lists device 0 exactly as the default run did.
selects_device0() {
    CLMEM_VK_DEVICE=$1 "$tool" >"$tmp/sel" 2>"$tmp/sel.err"
    sel_rc=$?
    vk_device0 "$tmp/sel" >"$tmp/sel.dev0"
    test "$sel_rc" -eq 0 && test -s "$tmp/dev0" && cmp -s "$tmp/dev0" "$tmp/sel.dev0" &&
        grep -q "^Vulkan: .*CLMEM_VK_DEVICE=$1 selects device 0, the only one checked\$" "$tmp/sel"
}

selects_device0 0
check $? "CLMEM_VK_DEVICE=0 selects the default run's device 0 (exit $sel_rc)"

# The UUID as clmem-info prints it, then without dashes and in upper case:
# both spellings must work.
if test -n "$uuid"; then
    plain=$(echo "$uuid" | tr -d - | tr abcdef ABCDEF)
    selects_device0 "$uuid" && selects_device0 "$plain"
    check $? "CLMEM_VK_DEVICE=$uuid (and $plain) selects the same device (exit $sel_rc)"
else
    n=$((n + 1))
    echo "not ok $n - no device UUID for Vulkan device 0 in the text output"
    sed "s/^/# /" "$tmp/text"
fi

# No host here has 99 Vulkan devices: exit 1, and the message names the
# index asked for and the devices there are.
CLMEM_VK_DEVICE=99 "$tool" >"$tmp/sel" 2>"$tmp/sel.err"
sel_rc=$?
test "$sel_rc" -eq 1 && grep -q '^Vulkan: no device checked (CLMEM_VK_DEVICE=99 .*index 99.*device.*: 0 = ' "$tmp/sel"
check $? "CLMEM_VK_DEVICE=99 exits 1 (got $sel_rc), naming index 99 and the devices there are"
