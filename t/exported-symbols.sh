#!/bin/sh
# The dynamic symbols libclmem defines are exactly the names in
# lib/clmem.sym, and all of them carry the clmem_ prefix. -fvisibility=hidden
# and the version script are two guards on the ABI; this checks that they
# agree with each other and with the list a reviewer reads.
#
# Run by make check from the build directory: Makefile.am exports NM,
# top_builddir and top_srcdir (which differ under make distcheck).
: "${NM:=nm}"
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
LC_ALL=C
export LC_ALL

la="$top_builddir/libclmem.la"
symfile="$top_srcdir/lib/clmem.sym"

echo "1..4"

# libtool records the shared object's name; it is empty for a static-only
# build (configure --disable-shared), which has no dynamic symbols to check.
dlname=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" "$la" 2>/dev/null)
if test ! -f "$la"; then
    echo "Bail out! $la not found: build the library first"
    exit 1
fi
if test -z "$dlname"; then
    echo "ok 1 - # SKIP libclmem was built without a shared library (--disable-shared)"
    echo "ok 2 - # SKIP no shared library"
    echo "ok 3 - # SKIP no shared library"
    echo "ok 4 - # SKIP no shared library"
    exit 0
fi
so="$top_builddir/.libs/$dlname"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-symbols.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# Defined dynamic symbols, functions and data only: this drops the version
# node itself (CLMEM_0.1 is listed as an absolute symbol, type A). Newer
# binutils print name@@VERSION; keep the name.
if $NM -D --defined-only "$so" >"$tmp/nm.out" 2>"$tmp/nm.err"; then
    awk 'NF >= 3 && $(NF-1) ~ /^[BDGRSTVWiu]$/ { print $NF }' "$tmp/nm.out" |
        sed 's/@.*//' | sort -u >"$tmp/exported"
    n=$(wc -l <"$tmp/exported" | tr -d ' ')
    if test "$n" -gt 0; then
        echo "ok 1 - $NM -D lists $n function and data symbols in $so"
    else
        echo "not ok 1 - $NM -D lists no function or data symbols in $so"
        sed 's/^/# /' "$tmp/nm.out"
    fi
else
    echo "not ok 1 - $NM -D --defined-only $so failed"
    sed 's/^/# /' "$tmp/nm.err"
    : >"$tmp/exported"
fi

# The names in the version script's global: sections, one "name;" a line.
sed -n '/global:/,/local:/p' "$symfile" |
    sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*;.*$/\1/p' | sort -u >"$tmp/listed"
n=$(wc -l <"$tmp/listed" | tr -d ' ')
if test "$n" -gt 0; then
    echo "ok 2 - $symfile lists $n symbols"
else
    echo "not ok 2 - no symbols found in the global: sections of $symfile"
fi

extra=$(comm -23 "$tmp/exported" "$tmp/listed")
missing=$(comm -13 "$tmp/exported" "$tmp/listed")
if test -z "$extra" && test -z "$missing"; then
    echo "ok 3 - the exported symbols are exactly those in lib/clmem.sym"
else
    echo "not ok 3 - the exported symbols differ from lib/clmem.sym"
    for s in $extra; do echo "#   exported but not listed: $s"; done
    for s in $missing; do echo "#   listed but not exported: $s"; done
fi

unprefixed=$(grep -v '^clmem_' "$tmp/exported")
if test -z "$unprefixed"; then
    echo "ok 4 - every exported symbol starts with clmem_"
else
    echo "not ok 4 - exported symbols without the clmem_ prefix"
    for s in $unprefixed; do echo "#   $s"; done
fi
