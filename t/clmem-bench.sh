#!/bin/sh
# tools/clmem-bench --quick runs to the end on this machine, exits 0 (every
# correctness check passed) and writes a CSV row for each measure and
# variant at each size, and for each 1920x1080 image frame it could make. No timing is asserted: machines are noisy. A
# CLMEM_VK_DEVICE that names no device is an error (exit 1), not a skip.
#
# Run by make check from the build directory: Makefile.am exports
# top_builddir and top_srcdir.
: "${top_builddir:=.}"
LC_ALL=C
export LC_ALL

tool="$top_builddir/tools/clmem-bench"
if test ! -x "$tool"; then
    echo "Bail out! $tool not found: build it first"
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

unset CLMEM_VK_DEVICE
"$tool" --quick --csv "$tmp/x.csv" --png "$tmp/x.png" >"$tmp/out" 2>&1
rc=$?
if test "$rc" -eq 77; then
    echo "1..0 # SKIP $(head -n 1 "$tmp/out")"
    exit 0
fi

echo "1..7"
n=0
check() {
    n=$((n + 1))
    if test "$1" -eq 0; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        sed "s/^/# /" "$tmp/out" "$tmp/x.csv" "$tmp/bad" 2>/dev/null
    fi
}

test "$rc" -eq 0
check $? "clmem-bench --quick exits 0 (got $rc)"

grep -Eq '^# path: (opaque-fd|host-mapped) ' "$tmp/out"
check $? "the header names the path"

test "$(head -n 1 "$tmp/x.csv" 2>/dev/null)" = "size_bytes,measure,variant,median_us,min_us,max_us,reps,frames_per_rep"
check $? "the CSV has its header"

# Every size that ran has all eight (measure, variant) rows, each with
# numbers in every column (any numbers: nothing about their size).
awk -F, 'NR > 1 && $2 !~ /^frame_/ {
        if (NF != 8 || $1 !~ /^[0-9]+$/ || $7 !~ /^[1-9][0-9]*$/) bad++
        for (i = 4; i <= 6; i++) if ($i !~ /^[0-9]+\.[0-9]+$/) bad++
        seen[$1 "," $2 "," $3] = 1; sizes[$1] = 1
    }
    END {
        split("staged_copy,baseline import,clmem import,raw cached_import,clmem handoff_wait,clmem " \
              "handoff_wait,raw handoff_semaphore,clmem handoff_semaphore,raw", want, " ")
        for (s in sizes) { nsizes++; for (k in want) if (!((s "," want[k]) in seen)) { print "# missing " s "," want[k]; bad++ } }
        exit !(nsizes > 0 && bad == 0)
    }' "$tmp/x.csv"
check $? "the CSV has a row for each measure and variant at each size"

# Three sizes in --quick (4K, 1M, 16M), unless a size did not fit.
rows=$(grep -vc '^size_bytes\|,frame_' "$tmp/x.csv")
skipped=$(grep -c '^size .*: skipped' "$tmp/out")
test "$rows" -eq $(( (3 - skipped) * 8 ))
check $? "--quick ran 3 sizes ($rows rows, $skipped sizes skipped)"

# (g) image frames, 1920x1080 in --quick: RGBA8 and NV12 each have their
# staged and zero-copy rows, or a line saying why the device makes no
# such image (lavapipe has no NV12).
frames_ok=0
for f in rgba8 nv12; do
    F=$(echo "$f" | tr a-z A-Z)
    if grep -q "^[0-9]*,frame_staged_copy_1920x1080_$f,baseline," "$tmp/x.csv"; then
        grep -q ",frame_handoff_1920x1080_$f,clmem," "$tmp/x.csv" || frames_ok=1
    else
        grep -Eq "^  \(g\) frame 1920x1080 $F +skipped: ." "$tmp/out" || frames_ok=1
    fi
done
test "$frames_ok" -eq 0
check $? "1920x1080 RGBA8 and NV12 frames have their staged and zero-copy rows, or say why not"

# Stops in its set-up, before measuring anything.
CLMEM_VK_DEVICE=99 "$tool" --quick --csv "$tmp/bad.csv" --png "$tmp/bad.png" >"$tmp/bad" 2>&1
bad_rc=$?
test "$bad_rc" -eq 1 && grep -q 'CLMEM_VK_DEVICE=99 .*index 99' "$tmp/bad"
check $? "CLMEM_VK_DEVICE=99 exits 1 (got $bad_rc), naming index 99"
