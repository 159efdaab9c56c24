#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI is kept on purpose: each installed library's ABI, as libabigail's
# abidw writes it, is stored in abi/NAME.abi, and this script fails when a
# build breaks it without announcing the break.
#
# Usage:
#   scripts/check-abi.sh            check (CI runs this: .ci/run)
#   scripts/check-abi.sh --update   store the ABI of this build in abi/
#
# Both build every library (--enable-bridge=yes --with-libav=yes: all of
# them, or configure fails naming the missing package) with debug
# information in build-abi/ (ignored by git), read each with abidw (public
# types only: those declared in include/) and compare it with abidiff to
# abi/NAME.abi. What abidiff reports decides:
#
#  - nothing, or only added functions and variables: compatible. The check
#    passes; it says which additions are not stored yet.
#  - anything else (a removed or changed function, a public struct whose
#    size or layout changed, ...): a break. It passes only when announced
#    (below); otherwise the check fails, printing abidiff's report.
#
# A break is announced when BOTH
#  1. the library's soname differs from the stored one: configure.ac's
#     libtool version was updated by its rule for a removed or changed
#     interface (CURRENT++, AGE=0, so lib<name>.so.CURRENT-AGE changes), and
#  2. its symbol map changed: the exported names and their version nodes
#     (nm -D name@@NODE) differ from the stored ones (the symbols in the
#     XML's elf-symbol lines).
# Growth at the end of a versioned struct (one whose first field is its
# size) is not a break: abi/clmem.abignore says which structs those are;
# a new versioned struct must be added there.
#
# --update stores the ABI of this build in abi/, for the libraries whose
# ABI changed (a file whose ABI is the same is left as it is): it records
# additions, a new library (no abi/NAME.abi yet), and a break that is
# announced. It refuses an unannounced break, as the check does, so the
# stored ABI cannot be rewritten to hide one. Run it when a release is
# made, and when a library or a call is added: the stored ABI is that of
# the release. Before a release has shipped an ABI (its stored file is a
# draft), a break of the draft is no break of a user's program: remove
# abi/NAME.abi and run --update to store it afresh; never after.
#
# Why the stored ABI and not a git range: the announcement is compared
# with what was stored with the ABI (its soname and symbol versions are in
# abi/NAME.abi), so the check needs no history (CI may run from a shallow
# clone or a tarball) and no choice of base commit; a break passes from the
# commit that announces it (or a later one) until the next release stores
# its ABI, as libtool's rule asks for one update per release.
#
# Needs abidw and abidiff (Debian: apt-get install abigail-tools).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-2}
dir=$top/build-abi
abidir=$top/abi
update=no
case ${1-} in
--update) update=yes ;;
'') ;;
*) echo "usage: $0 [--update]" >&2; exit 2 ;;
esac

for tool in abidw abidiff; do
    command -v $tool >/dev/null ||
        { echo "check-abi: $tool not found: install abigail-tools (Debian)" >&2; exit 1; }
done

. "$top/scripts/build-dir.sh"

mkdir -p "$dir"
source_dir "$dir"
cd "$dir"
"$src/configure" --enable-bridge=yes --with-libav=yes --disable-static CFLAGS="-g -O2" >configure.out ||
    { echo "check-abi: configure failed: $dir/config.log" >&2; exit 1; }
# Makefile first brought up to date (a configure.ac newer than the last
# run regenerates it, and prints as it does), then the installed
# libraries, as automake lists them for this configuration.
make -s am--refresh >refresh.out 2>&1 || { cat refresh.out >&2; exit 1; }
libs=$(printf 'print-libs:\n\t@echo $(lib_LTLIBRARIES)\n' | make -s -f Makefile -f - print-libs)
# Linked afresh every time (the objects are kept): the soname comes from
# configure's libtool version, which a library built before does not see.
rm -f $libs
make -j"$jobs" $libs >make.out 2>&1 || { cat make.out >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
LC_ALL=C
export LC_ALL

# symbols_of_so SO / symbols_of_abi ABI: "name node" per exported symbol.
symbols_of_so() {
    nm -D --defined-only "$1" | awk 'NF >= 3 && $(NF-1) ~ /^[BDGRSTVWiu]$/ { print $NF }' |
        sed -n 's/@@*/ /p' | sort
}
symbols_of_abi() {
    sed -n "s/.*<elf-symbol name='\\([^']*\\)' version='\\([^']*\\)'.*is-defined='yes'.*/\\1 \\2/p" "$1" | sort
}
soname_of_so() { objdump -p "$1" | awk '$1 == "SONAME" { print $2 }'; }
soname_of_abi() { sed -n "1s/.* soname='\\([^']*\\)'.*/\\1/p" "$1"; }

failed=0
for la in $libs; do
    name=${la%.la}
    so=.libs/$(sed -n "s/^dlname='\\(.*\\)'\$/\\1/p" "$la")
    stored=$abidir/$name.abi
    abidw --headers-dir "$src/include" --drop-private-types --no-corpus-path --no-comp-dir-path --short-locs \
        --no-elf-needed --type-id-style hash "$so" >"$tmp/$name.abi"

    if test ! -f "$stored"; then
        if test $update = yes; then
            mkdir -p "$abidir"
            cp "$tmp/$name.abi" "$stored"
            echo "check-abi: $name: stored its ABI ($(soname_of_so "$so"), no ABI stored before) in abi/$name.abi"
        else
            echo "check-abi: $name: FAIL: no stored ABI (abi/$name.abi): store it with scripts/check-abi.sh --update"
            failed=1
        fi
        continue
    fi

    # The interfaces are compared with the soname set aside: a new soname
    # is the announcement (below), not a break of its own. One libtool
    # version serves every library, so a library whose interfaces did not
    # change may get a new soname with another's break.
    old_soname=$(soname_of_abi "$stored")
    new_soname=$(soname_of_so "$so")
    sed "1s/ soname='[^']*'/ soname='$new_soname'/" "$stored" >"$tmp/stored.abi"
    set +e
    abidiff --no-added-syms --suppressions "$abidir/clmem.abignore" --headers-dir2 "$src/include" \
        --drop-private-types "$tmp/stored.abi" "$so" >"$tmp/breaks" 2>&1
    rc=$?
    abidiff --suppressions "$abidir/clmem.abignore" --headers-dir2 "$src/include" --drop-private-types \
        "$tmp/stored.abi" "$so" >"$tmp/all" 2>&1
    rc_all=$?
    set -e
    if test $((rc & 3)) -ne 0 || test $((rc_all & 3)) -ne 0; then
        echo "check-abi: $name: FAIL: abidiff could not compare abi/$name.abi with $so:"
        cat "$tmp/breaks" "$tmp/all"
        failed=1
        continue
    fi

    if test $((rc & 12)) -ne 0; then
        symbols_of_abi "$stored" >"$tmp/old.syms"
        symbols_of_so "$so" >"$tmp/new.syms"
        if test "$old_soname" = "$new_soname"; then
            why="the soname is still $new_soname (configure.ac's libtool version was not updated by its rule)"
        elif cmp -s "$tmp/old.syms" "$tmp/new.syms"; then
            why="the soname changed ($old_soname -> $new_soname) but the symbol map did not"
        else
            why=
        fi
        if test -n "$why"; then
            echo "check-abi: $name: FAIL: an incompatible change to the stored ABI, not announced: $why."
            echo "check-abi: a removed or changed interface needs a new soname (configure.ac: CURRENT++, AGE=0)"
            echo "check-abi: and a new symbol map (a new version node for what changed), then --update."
            echo "check-abi: abidiff abi/$name.abi $so:"
            sed 's/^/    /' "$tmp/breaks"
            failed=1
            continue
        fi
        if test $update = yes; then
            cp "$tmp/$name.abi" "$stored"
            echo "check-abi: $name: stored its new ABI ($old_soname -> $new_soname, a new symbol map)"
        else
            echo "check-abi: $name: ok: an incompatible change, announced ($old_soname -> $new_soname and a new" \
                "symbol map); store the new ABI with --update"
            sed 's/^/    /' "$tmp/breaks"
        fi
        continue
    fi

    if test $((rc_all & 12)) -ne 0; then
        added=$(grep -E "^  \\[A\\] " "$tmp/all" | sed "s/^  \\[A\\] //" || true)
        if test $update = yes; then
            cp "$tmp/$name.abi" "$stored"
            echo "check-abi: $name: stored its ABI with these additions:"
        else
            echo "check-abi: $name: ok: compatible; additions not stored yet (--update stores them):"
        fi
        echo "$added" | sed 's/^/    /'
    elif test "$old_soname" != "$new_soname"; then
        if test $update = yes; then
            cp "$tmp/$name.abi" "$stored"
            echo "check-abi: $name: stored its ABI: the same interfaces, a new soname ($old_soname -> $new_soname)"
        else
            echo "check-abi: $name: ok: the same interfaces as abi/$name.abi, a new soname" \
                "($old_soname -> $new_soname; --update stores it)"
        fi
    else
        echo "check-abi: $name: ok: the same ABI as abi/$name.abi ($new_soname)"
    fi
done
exit $failed
