#!/bin/sh
# SPDX-License-Identifier: MIT
# Every file of the project points only inside it: what a comment or a page
# cites as evidence is in the tree (docs/driver-notes.md, docs/probes/), so
# a user of a clone or a tarball can read it.
#  1. no file names a path outside the tree: a sibling folder of the
#     checkout (dot-dot then "shared"), the device notes' folder, or an
#     absolute path under the developers' /work;
#  2. every probe a file cites (a path under docs/probes/, or a bare file
#     name ending in -probe.c) is in docs/probes/;
#  3. every docs/probes/*.c is distributed: named in an EXTRA_DIST line of
#     a .am file (so make dist puts it in the tarball).
# In a git checkout the files are those git tracks; in a release tarball,
# the source-like files it holds (autotools' output left out).
#
# The patterns below are written with a bracket ("[.]") so that this file
# does not match them itself.
: "${top_srcdir:=.}"
LC_ALL=C
export LC_ALL
echo 1..3
cd "$top_srcdir" || exit 99

if command -v git >/dev/null 2>&1 && git ls-files --error-unmatch configure.ac >/dev/null 2>&1; then
    list=$(git ls-files)
else
    list=$(find . -type f | sed 's|^\./||' | while read -r f; do
        case $f in
        */Makefile.in | Makefile.in | configure | aclocal.m4 | config.h.in | build-aux/* | m4/* | autom4te.cache/*) ;;
        *.c | *.h | *.cpp | *.sh | *.am | *.ac | *.in | *.py | *.sym | *.supp | *.md | *.[17] | NEWS | COPYING | .ci/run)
            echo "$f" ;;
        esac
    done)
fi
[ -n "$list" ] || { echo "Bail out! no files found under $top_srcdir"; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-self-contained.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
# The regular files of the list, one a line, for xargs (no name has a space).
for f in $list; do [ -f "$f" ] && echo "$f"; done >"$tmp/files"

outside='[.][.]/shared|shared/devic[e]|/wor[k]/'
xargs grep -nE "$outside" <"$tmp/files" >"$tmp/outside" 2>/dev/null
if [ -s "$tmp/outside" ]; then
    echo "not ok 1 - these lines point outside the tree (move what they cite into docs/driver-notes.md or docs/probes/):"
    sed 's/^/#   /' "$tmp/outside"
else
    echo "ok 1 - no file of the $(wc -l <"$tmp/files" | tr -d ' ') points outside the tree"
fi

# The probes cited, by path or by a bare name, against docs/probes/.
xargs grep -ohE 'docs/probes/[A-Za-z0-9_.-]+[.]c|[A-Za-z0-9_-]+-prob[e][.]c' <"$tmp/files" 2>/dev/null |
    sed 's|^docs/probes/||' | sort -u >"$tmp/cited"
missing=
for p in $(cat "$tmp/cited"); do
    [ -f "docs/probes/$p" ] || missing="$missing $p"
done
if [ -z "$missing" ] && [ -s "$tmp/cited" ]; then
    echo "ok 2 - each of the $(wc -l <"$tmp/cited" | tr -d ' ') probes cited is in docs/probes/"
elif [ -z "$missing" ]; then
    echo "not ok 2 - no probe is cited at all: the pattern no longer finds docs/probes/ citations"
else
    echo "not ok 2 - these probes are cited but not in docs/probes/:$missing"
fi

# EXTRA_DIST's words in the .am files: the assignment lines and their
# backslash continuations.
for f in $(grep -E '(^|/)[^/]*[.]am$' "$tmp/files"); do
    awk '/^EXTRA_DIST[ \t]*[+]?=/ { on = 1 }
         on { line = $0; sub(/^EXTRA_DIST[ \t]*[+]?=/, "", line); cont = sub(/\\$/, "", line); print line; on = cont }' "$f"
done | tr ' \t' '\n\n' | grep -v '^$' | sort -u >"$tmp/dist"
probes=$(grep '^docs/probes/[^/]*[.]c$' "$tmp/files")
undist=
for p in $probes; do
    grep -qxF "$p" "$tmp/dist" || undist="$undist $p"
done
if [ -z "$probes" ]; then
    echo "not ok 3 - no docs/probes/*.c found"
elif [ -z "$undist" ]; then
    echo "ok 3 - each of the $(echo "$probes" | wc -l | tr -d ' ') docs/probes/*.c is in EXTRA_DIST"
else
    echo "not ok 3 - these probes are not in any EXTRA_DIST (add them to Makefile.am's):$undist"
fi
