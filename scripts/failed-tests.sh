#!/bin/sh
# SPDX-License-Identifier: MIT
# Names the tests that failed in automake build directories, for a run
# whose output is read from its end (CI's): the end of each failed test's
# log first, then one line per test, last, with the line that says why
# (its first "not ok" or "Bail out!", or how it ended).
#
# Usage: scripts/failed-tests.sh DIR...   (a DIR without test results is
# passed over; exits 0 either way, it only reports)

lines=${LINES_PER_LOG:-40}
failed=""

for dir in "$@"; do
    [ -d "$dir" ] || continue
    for trs in $(find "$dir" -name '*.trs' | sort); do
        grep -Eq '^:global-test-result: (FAIL|ERROR|XPASS)' "$trs" || continue
        log=${trs%.trs}.log
        echo "---- the end of $log"
        tail -n "$lines" "$log" 2>/dev/null
        result=$(sed -n 's/^:global-test-result: //p' "$trs")
        why=$(grep -m1 -E '^(not ok|Bail out!)' "$log" 2>/dev/null)
        [ -n "$why" ] || why="(no failing line in the log; the harness ended it: see the log)"
        failed="$failed$result: $log: $why
"
    done
done

if [ -n "$failed" ]; then
    echo "==== the tests that failed"
    printf '%s' "$failed"
fi
exit 0
