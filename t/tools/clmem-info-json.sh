#!/bin/sh
# SPDX-License-Identifier: MIT
# clmem-info --json against its documented schema: the JSON OUTPUT section
# of man/clmem-info.1. Every key that section names is in the output, with
# a value of the type it gives, wherever the output has an object for it;
# and the output has no key the section does not name, so that a key added
# to the tool without its documentation fails here. t/lib/json-keys.py reads
# the page and checks the JSON (how the page lists the keys: its comment);
# a key below a null object or an empty array cannot be checked on this
# machine, and the test says how many were not (the CPU machines of CI
# pair no devices, so paired_opencl_device is null).
#
# Run by make check from the build directory: t/tests.am exports
# top_builddir, top_srcdir and CLMEM_BRIDGE_BUILT ("yes", or why the bridge
# was not built).
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
LC_ALL=C
export LC_ALL

page="$top_srcdir/man/clmem-info.1"
tool="$top_builddir/tools/clmem-info"

# configure's choice, not whether a file happens to be there.
built=${CLMEM_BRIDGE_BUILT-}
if test -z "$built"; then
    echo "1..1"
    echo "not ok 1 - CLMEM_BRIDGE_BUILT is unset (run this through make check)"
    exit 1
fi
if test "$built" != yes; then
    echo "1..0 # SKIP $built"
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP python3 not found (it parses the JSON)"
    exit 0
fi
if test ! -x "$tool"; then
    echo "Bail out! $tool not found: build it first"
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-info-json.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

unset CLMEM_VK_DEVICE
"$tool" --json >"$tmp/json" 2>"$tmp/err"
rc=$?

echo "1..5"
python3 "$top_srcdir/t/lib/json-keys.py" "$page" "$tmp/json" "$rc" clmem-info 1
status=$?
if test $status -ne 0; then
    sed 's/^/# stderr: /' "$tmp/err" | head -n 20
fi
exit $status
