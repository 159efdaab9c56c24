#!/bin/sh
# SPDX-License-Identifier: MIT
# The shell commands of README.md and docs/guide.md, run as a reader would
# run them: every ```sh block, in page order, from the source tree, in one
# shell session (what a block exports, the next one has), against this
# build tree installed into $HOME/clmem, with HOME a temporary directory.
# A block passes when its commands exit 0 (the examples check their own
# results and exit 1 when a check fails).
#
# The line just before a block may say how the test treats it:
#   <!-- not run: WHY -->  the block is a skip naming WHY (it needs root,
#                          the network, a release tarball);
#   <!-- install: ... -->  the block builds and installs clmem; the test
#                          installs its own build tree there instead
#                          (make install DESTDIR=, moved to $HOME/clmem).
# A block that needs a part configure did not build (the bridge, the IPC
# library, CLBlast), or man, is a skip naming it.
# Under AddressSanitizer (scripts/check-sanitizers.sh) the installed
# libraries are instrumented and the programs the pages build with plain cc
# are not: the ASan runtime cannot come first, and they cannot run. The
# plain make check and make distcheck run every block.
if [ "${CLMEM_TEST_INSTRUMENTED:-}" = asan ]; then
    echo "1..0 # SKIP a program built with plain cc cannot load AddressSanitizer-instrumented libraries"
    exit 0
fi
s=$(cd "${top_srcdir:-.}" && pwd) || exit 99
b=$(cd "${top_builddir:-.}" && pwd) || exit 99
tmp=$(mktemp -d "${TMPDIR:-/tmp}/docs-commands.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
home=$tmp/home
mkdir -p "$home" "$tmp/tmp" "$tmp/blocks"

# Every sh block of the pages, one file each (NNN.sh), with NNN.where
# ("PAGE:LINE") and NNN.marker (the comment before it, or nothing).
n=0
for page in README.md docs/guide.md; do
    awk -v dir="$tmp/blocks" -v page="$page" -v start="$n" '
        /^```sh$/ { n++; f = sprintf("%s/%03d", dir, start + n); inside = 1
                    print page ":" NR > (f ".where"); close(f ".where")
                    m = prev ~ /^<!-- .* -->$/ ? prev : ""
                    print m > (f ".marker"); close(f ".marker")
                    printf "" > (f ".sh"); next }
        inside && /^```$/ { inside = 0; close(f ".sh"); next }
        inside { print >> (f ".sh"); next }
        { prev = $0 }' "$s/$page"
    n=$(ls "$tmp/blocks" | grep -c '\.sh$')
done
echo "1..$n"

# Blocks need configure's word on what it built (t/tests.am exports it).
bridge=${CLMEM_BRIDGE_BUILT:-}
ipc=${CLMEM_IPC_BUILT:-}
clblast=${CLMEM_CLBLAST_FOUND:-}
av=${CLMEM_AV_BUILT:-}

# The readers' shell: their own PATH, PKG_CONFIG_PATH and LD_LIBRARY_PATH
# as this test found them (a library the reader installed outside the
# default paths, CLBlast say, is on them already), and no clmem path yet:
# the pages' exports add it. The state file carries the exports from one
# block to the next.
state=$tmp/state
: >"$state"
failed=0
i=0
for f in "$tmp"/blocks/*.sh; do
    i=$((i + 1))
    base=${f%.sh}
    where=$(cat "$base.where")
    marker=$(cat "$base.marker")
    # The block's name: its line naming an example, else its first line.
    first=$(grep -m 1 'examples/' "$f" || sed -n 1p "$f")
    what="$where: $first"
    case $marker in
    "<!-- not run: "*)
        why=${marker#<!-- not run: }
        echo "ok $i - $what # SKIP ${why% -->}"
        continue ;;
    "<!-- install: "*)
        # The configured prefix, installed under DESTDIR and moved to
        # $HOME/clmem; the .pc files name where it is now.
        prefix=$(sed -n 's/^prefix = //p' "$b/Makefile")
        if (cd "$b" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make install DESTDIR="$tmp/dest") \
                >"$tmp/install.log" 2>&1 && mv "$tmp/dest$prefix" "$home/clmem" &&
           test -f "$home/clmem/lib/pkgconfig/clmem.pc"; then
            sed -i "s|$prefix|$home/clmem|g" "$home/clmem"/lib/pkgconfig/*.pc
            echo "ok $i - $what: the build tree installed into \$HOME/clmem in its place (make install DESTDIR=)"
        else
            failed=1
            echo "not ok $i - $what: installing the build tree into \$HOME/clmem (prefix $prefix) failed:"
            tail -n 20 "$tmp/install.log" | sed 's/^/# /'
            ls "$home/clmem" "$home/clmem/lib" 2>&1 | sed 's/^/# /'
        fi
        continue ;;
    "") ;;
    *)
        failed=1
        echo "not ok $i - $what: the line before the block, \"$marker\", is neither \"<!-- not run: WHY -->\" nor \"<!-- install: ... -->\""
        continue ;;
    esac
    missing=
    for need in "clmem-bridge:$bridge" "clmem-ipc:$ipc" "clblast:$clblast" "clmem-av:$av"; do
        word=${need%%:*}
        built=${need#*:}
        grep -q -- "$word" "$f" || continue
        if [ -z "$built" ]; then
            missing="configure's word on $word is unset (run through make check)"
        elif [ "$built" != yes ]; then
            missing=$built
        fi
        [ -n "$missing" ] && break
    done
    if [ -z "$missing" ] && grep -q '^man ' "$f" && ! command -v man >/dev/null 2>&1; then
        missing="man is not installed"
    fi
    if [ -n "$missing" ]; then
        case $missing in
        *"(run through make check)") failed=1; echo "not ok $i - $what: $missing" ;;
        *) echo "ok $i - $what # SKIP $missing" ;;
        esac
        continue
    fi
    {
        echo '. "$1"'
        echo 'set -e'
        cat "$f"
        echo "export -p | grep -E '^export (PATH|PKG_CONFIG_PATH|LD_LIBRARY_PATH|MANPATH)=' >\"\$1.new\""
    } >"$tmp/run.sh"
    rm -f "$state.new"
    out=$(cd "$s" && env HOME="$home" TMPDIR="$tmp/tmp" sh "$tmp/run.sh" "$state" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && [ -f "$state.new" ]; then
        mv "$state.new" "$state"
        echo "ok $i - $what ($(sed -n '$=' "$f") lines, from the source tree, exit 0)"
        echo "$out" | tail -n 5 | sed 's/^/# /'
    else
        failed=1
        echo "not ok $i - $what: exited $rc:"
        sed 's/^/#   $ /' "$f"
        echo "$out" | tail -n 30 | sed 's/^/# /'
    fi
done
exit $failed
