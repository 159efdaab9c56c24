#!/bin/sh
# tools/clmem-bench --quick runs to the end on this machine, exits 0 (every
# correctness check passed) and writes a CSV row for each measure and
# variant at each size, for each 1920x1080 image frame it could make, and
# for its small batch run (--batches 1,4 in a ring of 2) a row per handoff,
# batch size and variant, (k)'s scaling rows with their verdicts, and with
# CLBlast the consumer pipeline (i)'s rows, with libclmem-av the FFmpeg
# frames (j)'s, every row with the same 10 columns. No timing is
# asserted: machines are noisy. A CLMEM_VK_DEVICE that names no device is
# an error (exit 1), not a skip.
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

echo "1..13"
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

test "$(head -n 1 "$tmp/x.csv" 2>/dev/null)" = "size_bytes,measure,variant,median_us,min_us,max_us,reps,frames_per_rep,batch,ring"
check $? "the CSV has its header"

# Every size that ran has all nine (measure, variant) rows, each with
# numbers in every column (any numbers: nothing about their size; the
# paired import overhead and its interval may be negative). Every
# row, the (g) frames' and the batch run's too, has the 10 columns; the
# frames' rows, like the per-frame measures, batch 1 and ring 0. The batch
# run's rows (ring_*, batch_staged_copy) and which frames ran are checked below.
awk -F, 'NR > 1 {
        if (NF != 10 || $1 !~ /^[0-9]+$/ || $7 !~ /^[1-9][0-9]*$/ || $9 !~ /^[0-9]+$/ || $10 !~ /^[0-9]+$/) bad++
        num = $2 ~ /overhead/ ? "^-?[0-9]+[.][0-9]+$" : "^[0-9]+[.][0-9]+$"
        for (i = 4; i <= 6; i++) if ($i !~ num) bad++
        if ($2 ~ /^(ring_|batch_|scaling_)/ || $2 ~ /_in_flight_/) next
        if ($9 != ($2 ~ /import/ ? 0 : 1) || $10 != 0) bad++
        if ($2 ~ /^(frame|consumer|ffmpeg)_/) next
        seen[$1 "," $2 "," $3] = 1; sizes[$1] = 1
    }
    END {
        split("staged_copy,baseline import,clmem import,raw cached_import,clmem handoff_wait,clmem " \
              "handoff_wait,raw handoff_semaphore,clmem handoff_semaphore,raw import_overhead,paired", want, " ")
        for (s in sizes) { nsizes++; for (k in want) if (!((s "," want[k]) in seen)) { print "# missing " s "," want[k]; bad++ } }
        exit !(nsizes > 0 && bad == 0)
    }' "$tmp/x.csv"
check $? "the CSV has a row for each measure and variant at each size"

# Three sizes in --quick (4K, 1M, 16M), unless a size did not fit.
rows=$(grep -Evc '^size_bytes|,(frame_[a-z0-9_]+|consumer_[a-z]+_[0-9x]+|ffmpeg_nv12_[0-9x]+[a-z_]*|ring_[a-z]+|batch_staged_copy|scaling_[a-z_]+),' "$tmp/x.csv")
skipped=$(grep -c '^size .*: skipped' "$tmp/out")
test "$rows" -eq $(( (3 - skipped) * 9 ))
check $? "--quick ran 3 sizes ($rows rows, $skipped sizes skipped)"

# (g) image frames, 1920x1080 in --quick: RGBA8 and NV12 each have their
# staged and zero-copy rows, or a line saying why the device makes no
# such image (lavapipe has no NV12). Their rows have the 10 columns, one
# frame per rep, batch 1 and ring 0; --quick makes no 3840x2160 frame.
frames_ok=0
for f in rgba8 nv12; do
    F=$(echo "$f" | tr a-z A-Z)
    num='[0-9]+\.[0-9]+'
    cols="$num,$num,$num,[1-9][0-9]*,1,1,0\$"
    if grep -Eq "^[1-9][0-9]*,frame_staged_copy_1920x1080_$f,baseline,$cols" "$tmp/x.csv"; then
        grep -Eq "^[1-9][0-9]*,frame_handoff_1920x1080_$f,clmem,$cols" "$tmp/x.csv" || frames_ok=1
    else
        grep -Eq "^  \(g\) frame 1920x1080 $F +skipped: ." "$tmp/out" || frames_ok=1
    fi
done
grep -q ',frame_[a-z_]*_3840x2160_' "$tmp/x.csv" && frames_ok=1
test "$frames_ok" -eq 0
check $? "1920x1080 RGBA8 and NV12 frames have their staged and zero-copy rows (10 columns, batch 1, ring 0), or say why not"

# --quick's batch run: batch sizes 1 and 4 in a ring of 2, for every
# handoff the header does not say was left out (host waits always run),
# clmem and raw, and the staged copy of one frame beside them.
awk -F, -v out="$tmp/out" 'BEGIN {
        while ((getline line < out) > 0)
            if (line ~ /^  (semaphores|host waits|transfer queue): left out/) {
                sub(/^  /, "", line); sub(/: left out.*/, "", line); left[line] = 1
            }
        split("ring_semaphore:semaphores ring_host:host waits ring_transfer:transfer queue", h, " ")
    }
    NR > 1 && $2 ~ /^ring_/ {
        if ($7 !~ /^[1-9][0-9]*$/ || $8 % $9 != 0 || ($9 != 1 && $9 != 4) || $10 != 2) bad++
        seen[$2 "," $3 "," $9] = 1
    }
    NR > 1 && $2 == "batch_staged_copy" && $3 == "baseline" { staged = 1 }
    END {
        want["ring_semaphore"] = !("semaphores" in left)
        want["ring_host"] = !("host waits" in left)
        want["ring_transfer"] = !("transfer queue" in left)
        if (!want["ring_host"]) { print "# host waits were left out"; bad++ }
        for (m in want) if (want[m]) for (k = 1; k <= 4; k += 3) for (v = 0; v < 2; v++)
            if (!((m "," (v ? "raw" : "clmem") "," k) in seen)) { print "# missing " m " batch " k; bad++ }
        if (!staged) { print "# missing batch_staged_copy"; bad++ }
        exit bad != 0
    }' "$tmp/x.csv" >"$tmp/bad" 2>&1
check $? "--quick ran a batch run: batches 1 and 4 in a ring of 2 for each handoff not left out, clmem and raw, beside the staged copy of a frame"

grep -q '^handoff  *ring batch' "$tmp/out"
check $? "the batch table is printed"

# (h): both unrefs timed while the gated kernel waited, each with its verdict.
grep -Eq '^first \(import.s handle\) +[0-9.]+ +[0-9.]+ +[0-9.]+  (met|missed)$' "$tmp/out" &&
    grep -Eq '^last \(starts the teardown\) +[0-9.]+ +[0-9.]+ +[0-9.]+  (met|missed)$' "$tmp/out"
check $? "the unref table (h) is printed: the first and the last unref, with the 1 ms target met or missed"

# (k): every scaling row, at two points or more, its verdict in the
# variant column (the same on each of its rows), batch and ring 0; and the
# table names each row's verdict. No number is judged.
awk -F, 'NR > 1 && $2 ~ /^scaling_/ {
        if ($3 !~ /^(flat|sublinear|linear|worse|one-point)$/ || $9 != 0 || $10 != 0) bad++
        if (($2 in verdict) && verdict[$2] != $3) bad++
        verdict[$2] = $3; points[$2]++
    }
    END {
        n = split("hit_ranges hit_sizes hit_fresh_anchor threads_one_bridge threads_own_bridge handles_adjacent " \
                  "handles_own last_unref acquire_check acquire_many", want, " ")
        for (i = 1; i <= n; i++)
            if (points["scaling_" want[i]] < 2 && !(want[i] ~ /^(threads|handles)/ && points["scaling_" want[i]] == 1)) {
                print "# missing scaling_" want[i]; bad++
            }
        exit bad != 0
    }' "$tmp/x.csv" >"$tmp/bad" 2>&1 &&
    grep -Eq '^cache hit \+ unref vs live imports, keys differing in size +(flat|sublinear|linear|worse) ' "$tmp/out"
check $? "(k) scaling: every row in the CSV with its verdict, and in the table"
# (i), with CLBlast: 128^2 and 256^2 on a CPU device in --quick (1024^2
# and 4096^2 on a GPU), each staged, zero-copy, raw and floor, and the
# paired zero-copy minus raw, with the 10 columns, batch 1 and ring 0, and
# the table; without CLBlast, the line saying why not, and no rows.
if [ "${CLMEM_CLBLAST_FOUND:-}" = yes ]; then
    rows_i=$(grep -Ec '^[1-9][0-9]*,consumer_sgemm_(128x128|256x256|1024x1024|4096x4096),(baseline|clmem|raw|floor),[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[1-9][0-9]*,1,1,0$' "$tmp/x.csv")
    paired_i=$(grep -Ec '^[1-9][0-9]*,consumer_overhead_(128x128|256x256|1024x1024|4096x4096),paired,-?[0-9]+\.[0-9]+,-?[0-9]+\.[0-9]+,-?[0-9]+\.[0-9]+,[1-9][0-9]*,1,1,0$' "$tmp/x.csv")
    test "$rows_i" -eq 8 && test "$paired_i" -eq 2 && grep -Eq '^(128|1024)\^2 .*%' "$tmp/out" &&
        grep -Eq '^(256|4096)\^2 .*%' "$tmp/out"
    check $? "(i) the consumer pipeline: two sizes, staged, zero-copy, raw and floor, and zero-copy minus raw, in the CSV ($rows_i + $paired_i rows) and the table"
else
    grep -q '^(i) a consumer library in the pipeline: skipped: .' "$tmp/out" && ! grep -q ',consumer_sgemm_' "$tmp/x.csv"
    check $? "(i) the consumer pipeline says why it did not run (${CLMEM_CLBLAST_FOUND:-CLMEM_CLBLAST_FOUND unset})"
fi

# (j), with libclmem-av: NV12 frames of 320x180 and 640x360 on a CPU device
# in --quick (1920x1080 and 3840x2160 on a GPU), each staged, host order,
# (g)'s handoff and host order by hand, with the 10 columns, batch 1 and
# ring 0, the paired library share, and host order's frames in flight for
# D = 1, 2, 4 (ring D), and the tables; or, where FFmpeg makes no Vulkan
# device, the line saying so. Without libclmem-av, the line saying why
# not, and no rows.
if [ "${CLMEM_AV_BUILT:-}" = yes ]; then
    j='ffmpeg_nv12_(320x180|640x360|1920x1080|3840x2160)'
    n3='[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+'
    rows_j=$(grep -Ec "^[1-9][0-9]*,$j(|_handoff_g|_by_hand),(baseline|clmem|raw),$n3,[1-9][0-9]*,1,1,0\$" "$tmp/x.csv")
    paired_j=$(grep -Ec "^[1-9][0-9]*,${j}_overhead,paired,-?[0-9]+\\.[0-9]+,-?[0-9]+\\.[0-9]+,-?[0-9]+\\.[0-9]+,[1-9][0-9]*,1,1,0\$" "$tmp/x.csv")
    flight_j=$(grep -Ec "^[1-9][0-9]*,${j}_in_flight_host,clmem,$n3,[1-9][0-9]*,[1-9][0-9]*,1,(1|2|4)\$" "$tmp/x.csv")
    { test "$rows_j" -eq 8 && test "$paired_j" -eq 2 && test "$flight_j" -eq 6 &&
          grep -Eq '^(320x180|1920x1080) .*x ' "$tmp/out" && grep -Eq '^(640x360|3840x2160) .*x ' "$tmp/out" &&
          grep -Eq '^(320x180|1920x1080) +host +4 ' "$tmp/out"; } ||
        { grep -q '^  skipped: FFmpeg cannot make a Vulkan device here' "$tmp/out" && ! grep -q ',ffmpeg_nv12_' "$tmp/x.csv"; }
    check $? "(j) FFmpeg frames: two sizes, staged, host order, (g) and by hand, the library's share, host order in flight (D 1, 2, 4), in the CSV ($rows_j + $paired_j + $flight_j rows) and the tables"
else
    grep -q '^(j) FFmpeg.s Vulkan frames into OpenCL: skipped: .' "$tmp/out" && ! grep -q ',ffmpeg_nv12_' "$tmp/x.csv"
    check $? "(j) FFmpeg frames say why they did not run (${CLMEM_AV_BUILT:-CLMEM_AV_BUILT unset})"
fi

# Stops in its set-up, before measuring anything.
CLMEM_VK_DEVICE=99 "$tool" --quick --csv "$tmp/bad.csv" --png "$tmp/bad.png" >"$tmp/bad" 2>&1
bad_rc=$?
test "$bad_rc" -eq 1 && grep -q 'CLMEM_VK_DEVICE=99 .*index 99' "$tmp/bad"
check $? "CLMEM_VK_DEVICE=99 exits 1 (got $bad_rc), naming index 99"
