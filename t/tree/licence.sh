#!/bin/sh
# SPDX-License-Identifier: MIT
# clmem is MIT-licensed (COPYING). Every source, header, script, test,
# example, build fragment and manual page says so in an SPDX line within
# its first three lines, so that a file copied out of the tree still says
# under what terms. In a git checkout the files are those git tracks; in a
# release tarball, those the tarball holds (less what autotools made).
: "${top_srcdir:=.}"
LC_ALL=C
export LC_ALL
echo 1..3
cd "$top_srcdir" || exit 99

if [ -f COPYING ] && grep -q '^MIT License$' COPYING &&
    grep -q '^Copyright (c) 2026 The clmem authors$' COPYING; then
    echo "ok 1 - COPYING holds the MIT licence and the copyright line"
else
    echo "not ok 1 - COPYING is missing, or lacks the MIT licence or the copyright line"
fi

if grep -q 'MIT' README.md && grep -q 'COPYING' README.md; then
    echo "ok 2 - README.md names the licence and COPYING"
else
    echo "not ok 2 - README.md does not name the MIT licence and COPYING"
fi

# The files that must carry the line: by name, wherever they are, less
# what autotools and configure write (in a tarball built in place, they
# lie among the sources).
is_source() {
    case $1 in
    abi/*.abi | */Makefile.in | Makefile.in | configure | aclocal.m4 | config.h.in | config.h | build-aux/* | m4/*) return 1 ;;
    lib/clmem-private.sym) return 1 ;;
    *.c | *.h | *.cpp | *.sh | *.am | *.ac | *.py | *.sym | *.supp | *.abignore | *.pc.in | Doxyfile.in | .ci/run | man/*.[17]) return 0 ;;
    esac
    return 1
}
if command -v git >/dev/null 2>&1 && git ls-files --error-unmatch configure.ac >/dev/null 2>&1; then
    list=$(git ls-files)
else
    # A build tree below this one (make distcheck's _build/sub, a VPATH
    # build) holds only what the build wrote: left out.
    builds=$(find . -mindepth 2 -name config.status | sed 's|^\./||; s|/config.status$||')
    list=$(find . -type f | sed 's|^\./||' | while read -r f; do
        keep=yes
        for d in $builds; do
            case $f in "$d"/*) keep=no ;; esac
        done
        [ $keep = yes ] && echo "$f"
    done)
fi
missing=
count=0
for f in $list; do
    is_source "$f" || continue
    [ -f "$f" ] || continue
    count=$((count + 1))
    head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT' || missing="$missing $f"
done
if [ -z "$missing" ] && [ "$count" -gt 0 ]; then
    echo "ok 3 - each of the $count source files has its SPDX-License-Identifier: MIT line"
else
    echo "not ok 3 - of $count source files, these lack an SPDX-License-Identifier: MIT line in their first three lines:"
    for f in $missing; do echo "#   $f"; done
fi
