#!/bin/sh
# SPDX-License-Identifier: MIT
# The manual pages (man/*.1, man/*.7, installed by make install) pass
# `mandoc -T lint` (Debian's mandoc package) with no message at all, down
# to the STYLE level, except two kinds, which say what this machine's
# manual database holds, not whether the page is right:
#  - "referenced manual not found": whether an .Xr target (gnuplot(1), or
#    clmem(7) itself before it is installed) is installed here;
#  - "outdated mandoc.db lacks gnuplot(1) entry, run makewhatis
#    /usr/share/man": the .Xr target is installed and mandoc found it, by
#    its file name, but the machine's mandoc.db was not rebuilt since it
#    was. mandoc prints this one itself (a warnx() in its page lookup, with
#    no file, line or level) and it does not change the exit status.
# Skips, naming it, where mandoc is not installed.
#
# Run by make check from the build directory: t/tests.am exports
# top_srcdir.
: "${top_srcdir:=.}"
LC_ALL=C
export LC_ALL

pages="man/clmem-info.1 man/clmem-bench.1 man/clmem.7"
# Any other page added under man/ is linted too.
for f in "$top_srcdir"/man/*.[1-9]; do
    test -f "$f" || continue
    rel=man/${f##*/}
    case " $pages " in *" $rel "*) ;; *) pages="$pages $rel" ;; esac
done
set -- $pages
echo "1..$#"
if ! command -v mandoc >/dev/null 2>&1; then
    n=0
    for page do
        n=$((n + 1))
        echo "ok $n - $page passes mandoc -T lint # SKIP mandoc not installed (Debian: apt-get install mandoc)"
    done
    exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/man-lint.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
n=0
failed=0
for page do
    n=$((n + 1))
    if test ! -f "$top_srcdir/$page"; then
        echo "not ok $n - $page exists"
        failed=1
        continue
    fi
    mandoc -T lint -W style "$top_srcdir/$page" >"$tmp/out" 2>&1
    rc=$?
    grep -v -e ': STYLE: referenced manual not found: ' \
        -e '^mandoc: outdated mandoc\.db lacks [^ ]* entry, run ' "$tmp/out" >"$tmp/messages"
    # Exit status 1 is "STYLE messages only": those may all be the
    # filtered kind. 2 and up are warnings or errors, never filtered.
    if test ! -s "$tmp/messages" && test "$rc" -le 1; then
        echo "ok $n - $page passes mandoc -T lint -W style"
    else
        echo "not ok $n - $page: mandoc -T lint -W style exited $rc"
        sed 's/^/#   /' "$tmp/messages"
        failed=1
    fi
done
exit $failed
