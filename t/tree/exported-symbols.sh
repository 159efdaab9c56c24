#!/bin/sh
# SPDX-License-Identifier: MIT
# The dynamic symbols libclmem defines are exactly the names in the global:
# sections of lib/clmem.sym, and all of them carry the clmem_ prefix; the
# same for libclmem-bridge against bridge/clmem-bridge.sym when configure
# built the bridge, and for libclmem-av against av/clmem-av.sym when it
# built that. -fvisibility=hidden and the version script are two
# guards on each ABI; this checks that they agree with each other and with
# the list a reviewer reads. The lists are read from the .sym files at run
# time, so a new symbol needs no edit here.
#
# Also: the two anchor operations libclmem exported before 0.2
# (clmem_keepalive_try_ref and clmem_keepalive_user_data, inline in
# lib/keepalive-private.h for the bridge) are not exported, nor is 0.1's
# spelling clmem_handle_keep_alive. The exact-match point would catch them
# only while the .sym file is right; this one holds even if someone puts
# them back in both.
#
# Run by make check from the build directory: t/tests.am exports NM,
# top_builddir and top_srcdir (which differ under make distcheck), and
# CLMEM_BRIDGE_BUILT, CLMEM_AV_BUILT and CLMEM_IPC_BUILT: "yes", or the
# sentence saying why that library was not built.
: "${NM:=nm}"
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
LC_ALL=C
export LC_ALL

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $2 # SKIP $1"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-symbols.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# listed SYMFILE: the names a GNU ld version script makes global, one a
# line, sorted. Comments are dropped and every node counts, so a later node
# written without global: or local: (the usual form of an added version)
# is read too. A wildcard pattern is printed as written: it can never equal
# an exported name, so point 3 names it rather than passing by accident.
listed() {
    awk '
        { text = text $0 "\n" }
        END {
            while ((i = index(text, "/*")) > 0) {
                rest = substr(text, i + 2)
                j = index(rest, "*/")
                if (j == 0) { text = substr(text, 1, i - 1); break }
                text = substr(text, 1, i - 1) " " substr(rest, j + 2)
            }
            gsub(/[{};:]/, " & ", text)
            count = split(text, tok, /[ \t\n]+/)
            depth = 0
            for (k = 1; k <= count; k++) {
                t = tok[k]
                if (t == "") continue
                if (t == "{") { depth++; scope = "global"; continue }
                if (t == "}") { depth--; continue }
                if (depth == 0 || t == ";") continue
                if ((t == "global" || t == "local") && tok[k + 1] == ":") { scope = t; k++; continue }
                if (scope == "global") print t
            }
        }' "$1" | sort -u
}

# since_of HEADER: "name version" for each function HEADER declares after
# a comment with `@since version` (and a CLMEM_DEPRECATED_FOR line, if it
# is deprecated), sorted by name.
since_of() {
    awk '
        /\/\*\*/ { incomment = 1; since = "" }
        incomment && match($0, /@since [0-9]+\.[0-9]+/) { since = substr($0, RSTART + 7, RLENGTH - 7) }
        incomment && /\*\// { incomment = 0; pending = since; next }
        !incomment && pending != "" && /^CLMEM_DEPRECATED_FOR\(/ { next }
        !incomment && pending != "" && NF > 0 {
            if (match($0, /clmem_[a-z0-9_]+ *\(/)) {
                name = substr($0, RSTART, RLENGTH - 1)
                sub(/ +$/, "", name)
                print name, pending
            }
            pending = ""
        }' "$1" | sort -u
}

# check_since NAME HEADER: every symbol NAME exports is in the version
# node its header comment says it came in (`@since 0.3`: node ..._0.3),
# as the linker wrote it into the library (nm -D: name@@NODE).
check_since() {
    so="$top_builddir/.libs/$dlname"
    if test "$shared" = no; then
        skip "$1 was built without a shared library (--disable-shared)" "$1's symbol versions match @since in $2"
        return
    fi
    $NM -D --defined-only "$so" | awk 'NF >= 3 && $(NF-1) ~ /^[BDGRSTVWiu]$/ { print $NF }' |
        grep '@@' | grep -v '^clmem__' | sed 's/@@.*_\([0-9][0-9.]*\)$/ \1/' | sort -u >"$tmp/nodes"
    if test ! -s "$tmp/nodes"; then
        skip "$NM -D prints no symbol versions for $so (no version script, or an older nm)" \
            "$1's symbol versions match @since in $2"
        return
    fi
    since_of "$top_srcdir/$2" >"$tmp/since"
    wrong=$(join -a 1 -e none -o 0,1.2,2.2 "$tmp/nodes" "$tmp/since" | awk '$2 != $3')
    if test -z "$wrong"; then
        ok "each of the $(wc -l <"$tmp/nodes" | tr -d ' ') symbols of $1 is in the version node its @since in $2 names"
    else
        not_ok "$1's symbol versions and the @since of $2 disagree"
        echo "$wrong" | while read -r name node since; do
            echo "#   $name: in version node $node, @since $since"
        done
    fi
}

# check_lib NAME SYMFILE: four points for the library NAME.la in
# top_builddir. Leaves its exported names in $tmp/NAME.exported, and sets
# `shared` to no when there is no shared object to read.
check_lib() {
    la="$top_builddir/$1.la"
    exported="$tmp/$1.exported"
    : >"$exported"
    shared=yes
    if test ! -f "$la"; then
        echo "Bail out! $la not found: build the library first"
        exit 1
    fi
    # libtool records the shared object's name; it is empty for a
    # static-only build (configure --disable-shared), which has no dynamic
    # symbols to check.
    dlname=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" "$la")
    if test -z "$dlname"; then
        shared=no
        why="$1 was built without a shared library (--disable-shared)"
        skip "$why" "$1 exports function and data symbols"
        skip "$why" "$2 lists symbols"
        skip "$why" "$1 exports exactly the symbols in $2"
        skip "$why" "every symbol $1 exports starts with clmem_"
        return
    fi
    so="$top_builddir/.libs/$dlname"

    # Defined dynamic symbols, functions and data only: this drops the
    # version nodes themselves (CLMEM_0.2 is listed as an absolute symbol,
    # type A). Newer binutils print name@@VERSION; keep the name.
    if $NM -D --defined-only "$so" >"$tmp/nm.out" 2>"$tmp/nm.err"; then
        awk 'NF >= 3 && $(NF-1) ~ /^[BDGRSTVWiu]$/ { print $NF }' "$tmp/nm.out" |
            sed 's/@.*//' | sort -u >"$exported"
        count=$(wc -l <"$exported" | tr -d ' ')
        if test "$count" -gt 0; then
            ok "$NM -D lists $count function and data symbols in $so"
        else
            not_ok "$NM -D lists no function or data symbols in $so"
            sed 's/^/# /' "$tmp/nm.out"
        fi
    else
        not_ok "$NM -D --defined-only $so failed"
        sed 's/^/# /' "$tmp/nm.err"
    fi

    symfile="$top_srcdir/$2"
    if test -f "$symfile"; then
        listed "$symfile" >"$tmp/listed"
    else
        : >"$tmp/listed"
    fi
    # A third argument is the private map configure writes into the build
    # directory (libclmem's lib/clmem-private.sym): its names are exported
    # too, in a node of their own.
    if test -n "${3-}" && test -f "$top_builddir/$3"; then
        listed "$top_builddir/$3" >>"$tmp/listed"
        sort -u -o "$tmp/listed" "$tmp/listed"
    fi
    count=$(wc -l <"$tmp/listed" | tr -d ' ')
    if test "$count" -gt 0; then
        ok "$2 lists $count global symbols"
    else
        not_ok "no global symbols found in $symfile"
    fi

    extra=$(comm -23 "$exported" "$tmp/listed")
    missing=$(comm -13 "$exported" "$tmp/listed")
    if test -z "$extra" && test -z "$missing"; then
        ok "$1 exports exactly the symbols in $2"
    else
        not_ok "the symbols $1 exports differ from $2"
        for s in $extra; do echo "#   exported but not listed: $s"; done
        for s in $missing; do echo "#   listed but not exported: $s"; done
    fi

    unprefixed=$(grep -v '^clmem_' "$exported")
    if test -z "$unprefixed"; then
        ok "every symbol $1 exports starts with clmem_"
    else
        not_ok "$1 exports symbols without the clmem_ prefix"
        for s in $unprefixed; do echo "#   $s"; done
    fi
}

echo "1..21"

# Points 1-6: libclmem, always built.
check_lib libclmem lib/clmem.sym lib/clmem-private.sym
check_since libclmem include/clmem.h
if test "$shared" = no; then
    skip "libclmem was built without a shared library (--disable-shared)" \
        "libclmem does not export the names 0.2 removed"
else
    gone=
    for s in clmem_keepalive_try_ref clmem_keepalive_user_data clmem_handle_keep_alive; do
        grep -qx "$s" "$tmp/libclmem.exported" && gone="$gone $s"
    done
    if test -z "$gone"; then
        ok "libclmem does not export clmem_keepalive_try_ref, clmem_keepalive_user_data nor clmem_handle_keep_alive"
    else
        not_ok "libclmem still exports names 0.2 removed:$gone"
    fi
fi

# Points 7-11: libclmem-bridge, when configure built it. The variable, not
# the presence of a .la, decides: a stale libclmem-bridge.la left in the
# build directory by an earlier configuration must not be checked, and a
# missing one where the bridge was built is an error.
case ${CLMEM_BRIDGE_BUILT-} in
yes)
    check_lib libclmem-bridge bridge/clmem-bridge.sym
    check_since libclmem-bridge include/clmem-bridge.h
    ;;
*)
    why=${CLMEM_BRIDGE_BUILT:-"CLMEM_BRIDGE_BUILT is not set (make check sets it from configure)"}
    skip "$why" "libclmem-bridge exports function and data symbols"
    skip "$why" "bridge/clmem-bridge.sym lists symbols"
    skip "$why" "libclmem-bridge exports exactly the symbols in bridge/clmem-bridge.sym"
    skip "$why" "every symbol libclmem-bridge exports starts with clmem_"
    skip "$why" "libclmem-bridge's symbol versions match @since in include/clmem-bridge.h"
    ;;
esac
# Points 12-16: libclmem-av, when configure built it (the same rule).
case ${CLMEM_AV_BUILT-} in
yes)
    check_lib libclmem-av av/clmem-av.sym
    check_since libclmem-av include/clmem-av.h
    ;;
*)
    why=${CLMEM_AV_BUILT:-"CLMEM_AV_BUILT is not set (make check sets it from configure)"}
    skip "$why" "libclmem-av exports function and data symbols"
    skip "$why" "av/clmem-av.sym lists symbols"
    skip "$why" "libclmem-av exports exactly the symbols in av/clmem-av.sym"
    skip "$why" "every symbol libclmem-av exports starts with clmem_"
    skip "$why" "libclmem-av's symbol versions match @since in include/clmem-av.h"
    ;;
esac
# Points 17-21: libclmem-ipc, when configure built it (the same rule).
case ${CLMEM_IPC_BUILT-} in
yes)
    check_lib libclmem-ipc ipc/clmem-ipc.sym
    check_since libclmem-ipc include/clmem-ipc.h
    ;;
*)
    why=${CLMEM_IPC_BUILT:-"CLMEM_IPC_BUILT is not set (make check sets it from configure)"}
    skip "$why" "libclmem-ipc exports function and data symbols"
    skip "$why" "ipc/clmem-ipc.sym lists symbols"
    skip "$why" "libclmem-ipc exports exactly the symbols in ipc/clmem-ipc.sym"
    skip "$why" "every symbol libclmem-ipc exports starts with clmem_"
    skip "$why" "libclmem-ipc's symbol versions match @since in include/clmem-ipc.h"
    ;;
esac
exit $failed
