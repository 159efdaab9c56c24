#!/bin/sh
# SPDX-License-Identifier: MIT
# The C style (.clang-format, clang-format 14) on the lines changed since a
# base commit, in the libraries and tools: lib/ bridge/ av/ ipc/ opencl/
# tools/. Not the whole tree: code written before the style file was
# formatted by hand, and about a third of those files pass as they are, so
# the rule is that what a change touches follows the style, and old code
# is reformatted only where it is touched.
#
#   scripts/check-format.sh          check the commits since BASE (CI)
#   scripts/check-format.sh --fix    reformat, in the working tree, the
#                                    lines changed since BASE
#   CLMEM_FORMAT_BASE=COMMIT ...     another base
#
# Exit 0 when the changed lines follow the style, 1 with the diff that
# would make them follow it, 2 when a tool is missing.
set -eu
cd "$(dirname "$0")/.."

# The last commit before .clang-format: every line changed after it is checked.
BASE=${CLMEM_FORMAT_BASE:-e3e0ea6e531ff3c734653f524a82c2e994bbc1ca}
DIRS="lib bridge av ipc opencl tools"

for tool in clang-format git-clang-format; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "check-format: $tool is not installed (Debian: apt-get install clang-format)" >&2
        exit 2
    }
done
version=$(clang-format --version | sed -n 's/.*clang-format version \([0-9]*\)\..*/\1/p')
if [ "$version" != 14 ]; then
    echo "check-format: clang-format $version here; .clang-format is tuned for clang-format 14, and other versions format some constructs differently" >&2
fi
git rev-parse --verify --quiet "$BASE^{commit}" >/dev/null || {
    echo "check-format: the base commit $BASE is not in this repository (a shallow clone? fetch more history, or set CLMEM_FORMAT_BASE)" >&2
    exit 2
}

if [ "${1:-}" = --fix ]; then
    # shellcheck disable=SC2086 # DIRS is a list of folders
    git clang-format --extensions c,h "$BASE" -- $DIRS
    exit 0
fi

# shellcheck disable=SC2086
out=$(git clang-format --diff --extensions c,h "$BASE" HEAD -- $DIRS)
case $out in
diff*)
    printf '%s\n' "$out"
    echo "check-format: the lines above, changed since $BASE, do not follow .clang-format; scripts/check-format.sh --fix reformats them" >&2
    exit 1 ;;
esac
echo "check-format: the lines changed since $BASE in $DIRS follow .clang-format"
