#!/bin/sh
# SPDX-License-Identifier: MIT
# The shipped libraries carry no fault-injection seam: FAULT() is the
# constant false there (lib/fault.h), so neither libclmem nor
# libclmem-bridge may define or even reference clmem_fault_hit, shared or
# static. As a control that the check can see the seam at all, the
# test-only t/lib/libclmem-fault.la (when built: it needs the bridge) must
# define it.
#
# Run by make check from the build directory: t/tests.am exports NM,
# top_builddir and top_srcdir.
: "${NM:=nm}"
: "${top_builddir:=.}"
LC_ALL=C
export LC_ALL

tmp=${TMPDIR:-/tmp}/no-fault-seam.$$
mkdir -p "$tmp" || exit 99
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $2 # SKIP $1"; }

# lib_path LA KIND: the file libtool built for LA, KIND "shared" (from the
# dlname it records) or "static" (old_library); empty when not built.
lib_path() {
    key=dlname
    test "$2" = static && key=old_library
    name=$(sed -n "s/^$key='\(.*\)'\$/\1/p" "$1" 2>/dev/null)
    test -n "$name" && echo "$(dirname "$1")/.libs/$name"
}

# check LA: no symbol (defined or undefined) of the built library mentions
# "fault". nm -D for the shared object (its dynamic table: what a caller
# could reach), plain nm for the archive (every global of every object).
check() {
    la=$top_builddir/$1
    if test ! -f "$la"; then
        skip "$1 is not built in this configuration" "$1 (shared) has no fault seam"
        skip "$1 is not built in this configuration" "$1 (static) has no fault seam"
        return
    fi
    for kind in shared static; do
        lib=$(lib_path "$la" $kind)
        if test -z "$lib"; then
            skip "$1 has no $kind library (configure --disable-$kind)" "$1 ($kind) has no fault seam"
            continue
        fi
        if test $kind = shared; then
            $NM -D "$lib" >"$tmp/nm.out" 2>"$tmp/nm.err"
        else
            $NM "$lib" >"$tmp/nm.out" 2>"$tmp/nm.err"
        fi
        if test $? -ne 0; then
            not_ok "$NM $lib failed"
            sed 's/^/# /' "$tmp/nm.err"
            continue
        fi
        if grep -i 'fault' "$tmp/nm.out" >"$tmp/hits"; then
            not_ok "$lib mentions a fault symbol: the seam leaked into a shipped library"
            sed 's/^/#   /' "$tmp/hits"
        else
            ok "$lib ($kind, $(wc -l <"$tmp/nm.out" | tr -d ' ') symbols) has no fault seam"
        fi
    done
}

echo "1..5"
check libclmem.la
check libclmem-bridge.la

# The control: the test-only library has the seam, so the grep above is
# looking for the right thing.
la=$top_builddir/t/lib/libclmem-fault.la
lib=$(lib_path "$la" static)
if test -z "$lib"; then
    skip "t/lib/libclmem-fault.la is built only with the bridge" "the test-only library defines clmem_fault_hit"
elif $NM --defined-only "$lib" 2>/dev/null | grep -q ' T clmem_fault_hit$'; then
    ok "the test-only $lib defines clmem_fault_hit (the check sees a seam where there is one)"
else
    not_ok "the test-only $lib does not define clmem_fault_hit"
fi
exit $failed
