#!/bin/sh
# SPDX-License-Identifier: MIT
# The examples README.md and docs/guide.md quote are the example programs,
# byte for byte, so the code people copy is the code the tests build and
# run (t/tools/examples.sh). In each page, the C block after a line
# "<!-- file: examples/NAME.c -->" must be examples/NAME.c; every C block
# must have such a line, so that no example goes unchecked; and each page
# must quote the files it is known to (README.md: the handle and the short
# bridge example; docs/guide.md: the round trip, the ring and CLBlast).
s=${top_srcdir:-.}
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/readme-example.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# quoted PAGE FILE: the C block marked as examples/FILE in PAGE, on stdout.
quoted() {
    awk -v marker="<!-- file: examples/$2 -->" '$0 == marker {marked=1; next}
         marked && /^```c$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' "$s/$1"
}

# check PAGE FILE...: one point per FILE, and one for the page's C blocks.
check() {
    page=$1
    shift
    for f do
        quoted "$page" "$f" >"$tmp/block"
        if [ -s "$tmp/block" ] && cmp -s "$tmp/block" "$s/examples/$f"; then
            ok "$page quotes examples/$f byte for byte"
        else
            not_ok "$page's block for examples/$f differs from the file (or is missing):"
            diff "$tmp/block" "$s/examples/$f" | sed 's/^/# /'
        fi
    done
    # Every C block follows a marker line, or is not checked.
    unmarked=$(awk '/^<!-- file: examples\/[^ ]*\.c -->$/ {marked=NR; next}
        /^```c$/ { if (marked != NR - 1) print NR }' "$s/$page")
    blocks=$(grep -c '^```c$' "$s/$page")
    if [ -z "$unmarked" ]; then
        ok "each of the $blocks C blocks of $page is marked with the example it is"
    else
        not_ok "$page has C blocks that no marker names, at lines:" $unmarked
    fi
}

echo 1..7
check README.md handle-example.c bridge-minimal.c
check docs/guide.md bridge-example.c ring-example.c clblast-example.c
exit $failed
