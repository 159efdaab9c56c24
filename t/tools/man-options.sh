#!/bin/sh
# SPDX-License-Identifier: MIT
# Every option a tool's --help lists is documented in its manual page, as
# an item of the page's OPTIONS section (".It Fl \-name ..."), and every
# long option the page documents there is one --help lists. The options
# are read from the built tools at run time, so an option added to a tool
# (clmem-bench --batches, say) fails here until its page documents it.
#
# clmem-info is always built; clmem-bench only with libclmem-bridge, so
# its points skip, with configure's reason, when CLMEM_BRIDGE_BUILT is not
# "yes". Run by make check from the build directory: t/tests.am exports
# top_builddir, top_srcdir and CLMEM_BRIDGE_BUILT.
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
LC_ALL=C
export LC_ALL

tmp=$(mktemp -d "${TMPDIR:-/tmp}/man-options.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $2 # SKIP $1"; }

# help_options FILE: the options a --help text names, one a line, sorted:
# every --long-option, and every -x short option that starts a word.
help_options() {
    { grep -o -- '--[a-z][a-z0-9-]*' "$1"
      grep -o -E -- '(^|[ ,[])-[A-Za-z]([] ,=]|$)' "$1" | grep -o -E -- '-[A-Za-z]'
    } | sort -u
}

# page_options PAGE: the options the OPTIONS section documents as items,
# one a line, sorted: "Fl \-name" is --name, "Fl x" is -x.
page_options() {
    awk '/^\.Sh / { in_options = ($0 == ".Sh OPTIONS"); next }
         in_options && /^\.It / {
             line = $0
             while (match(line, /Fl (\\-)?[A-Za-z0-9][A-Za-z0-9-]*/)) {
                 opt = substr(line, RSTART + 3, RLENGTH - 3)
                 sub(/^\\-/, "--", opt)
                 if (opt !~ /^--/) opt = "-" opt
                 print opt
                 line = substr(line, RSTART + RLENGTH)
             }
         }' "$1" | sort -u
}

# check TOOL: three points for tools/TOOL and man/TOOL.1.
check() {
    tool=$top_builddir/tools/$1
    page=$top_srcdir/man/$1.1
    if test ! -x "$tool"; then
        not_ok "$tool --help: $tool is not built (run make first)"
        not_ok "every option of $1 --help is documented in man/$1.1"
        not_ok "every long option man/$1.1 documents is in $1 --help"
        return
    fi
    "$tool" --help >"$tmp/$1.help" 2>"$tmp/$1.err"
    rc=$?
    help_options "$tmp/$1.help" >"$tmp/$1.help-opts"
    count=$(wc -l <"$tmp/$1.help-opts" | tr -d ' ')
    if test "$rc" -eq 0 && test "$count" -gt 0; then
        ok "$1 --help exits 0 and lists $count options:" $(cat "$tmp/$1.help-opts")
    else
        not_ok "$1 --help exited $rc and listed $count options"
        sed 's/^/#   /' "$tmp/$1.help" "$tmp/$1.err"
    fi
    if test ! -f "$page"; then
        not_ok "every option of $1 --help is documented in man/$1.1 (there is no $page)"
        not_ok "every long option man/$1.1 documents is in $1 --help (there is no $page)"
        return
    fi
    page_options "$page" >"$tmp/$1.page-opts"
    missing=$(comm -23 "$tmp/$1.help-opts" "$tmp/$1.page-opts")
    if test -z "$missing"; then
        ok "every option of $1 --help is documented under OPTIONS in man/$1.1"
    else
        not_ok "man/$1.1 does not document, under OPTIONS, what $1 --help lists:" $missing
    fi
    stale=$(comm -13 "$tmp/$1.help-opts" "$tmp/$1.page-opts" | grep -- '^--')
    if test -z "$stale"; then
        ok "every long option man/$1.1 documents is in $1 --help"
    else
        not_ok "man/$1.1 documents long options $1 --help does not list:" $stale
    fi
}

echo "1..6"
check clmem-info

built=${CLMEM_BRIDGE_BUILT-}
if test -z "$built"; then
    not_ok "clmem-bench: CLMEM_BRIDGE_BUILT is unset (run this through make check)"
    not_ok "every option of clmem-bench --help is documented in man/clmem-bench.1 (not checked)"
    not_ok "every long option man/clmem-bench.1 documents is in clmem-bench --help (not checked)"
elif test "$built" != yes; then
    skip "$built" "clmem-bench --help lists its options"
    skip "$built" "every option of clmem-bench --help is documented in man/clmem-bench.1"
    skip "$built" "every long option man/clmem-bench.1 documents is in clmem-bench --help"
else
    check clmem-bench
fi
exit $failed
