#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/clmem-bench --quick --json runs to the end on this machine, exits 0
# (every correctness check passed) and writes a CSV row for each measure
# and variant at each size, for each 1920x1080 image frame it could make,
# for (h)'s two unrefs, and for its small batch run (--batches 1,4 in a
# ring of 2) a row per handoff, batch size and variant, (k)'s scaling rows
# with their verdicts, and with CLBlast the consumer pipeline (i)'s rows,
# with libclmem-av the FFmpeg frames (j)'s, every row with the same 10
# columns, after the lines that say what the run ran on. Its JSON holds the
# keys clmem-bench(1) documents under JSON OUTPUT and no other
# (t/lib/json-keys.py), and the CSV's rows; its SVG plots are well-formed XML.
# Every target is printed as the H200's, and none is met or missed on a
# machine that is not an H200, where too few samples or an unreached point
# say so. --help says what each measure is, in one line, and names no
# source file. No timing is asserted: machines are noisy. A
# CLMEM_VK_DEVICE that names no device is an error (exit 1), not a skip.
#
# Run by make check from the build directory: t/tests.am exports
# top_builddir and top_srcdir.
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
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
# With --json the report goes to standard error, the JSON to standard output.
"$tool" --quick --json --csv "$tmp/x.csv" --svg "$tmp/x.svg" >"$tmp/x.json" 2>"$tmp/out"
rc=$?
if test "$rc" -eq 77; then
    echo "1..0 # SKIP $(head -n 1 "$tmp/out")"
    exit 0
fi
# The rows: the CSV without the lines that say what the run ran on, so
# that the column names are line 1.
grep -v '^#' "$tmp/x.csv" >"$tmp/rows.csv" 2>/dev/null

echo "1..31"
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
have_python=no
command -v python3 >/dev/null 2>&1 && have_python=yes

test "$rc" -eq 0
check $? "clmem-bench --quick exits 0 (got $rc)"

grep -Eq '^# path: (opaque-fd|host-mapped) ' "$tmp/out"
check $? "the header names the path"

test "$(head -n 1 "$tmp/rows.csv" 2>/dev/null)" = "size_bytes,measure,variant,median_us,min_us,max_us,reps,frames_per_rep,batch,ring,cpu_us_per_frame"
check $? "the CSV has its header"

# Every size that ran has all nine (measure, variant) rows, each with
# numbers in every column (any numbers: nothing about their size; a
# paired row, a difference such as the import overhead or (l)'s mapped
# minus raw, and its interval may be negative). Every
# row, the (g) frames' and the batch run's too, has the 11 columns, the
# last (CPU time a frame) empty except in (x)'s rows; the
# frames' rows, like the per-frame measures, batch 1 and ring 0. The batch
# run's rows (ring_*, batch_staged_copy) and which frames ran are checked below.
awk -F, 'NR > 1 {
        if (NF != 11 || $1 !~ /^[0-9]+$/ || $7 !~ /^[1-9][0-9]*$/ || $9 !~ /^[0-9]+$/ || $10 !~ /^[0-9]+$/) bad++
        num = $3 == "paired" ? "^-?[0-9]+[.][0-9]+$" : "^[0-9]+[.][0-9]+$"
        for (i = 4; i <= 6; i++) if ($i !~ num) bad++
        if ($2 ~ /^xproc_/ ? $11 !~ /^([0-9]+[.][0-9]+)?$/ : $11 != "") bad++
        if ($2 ~ /^(ring_|batch_|scaling_|unref_|xproc_)/ || $2 ~ /_(in_flight_|upload_alone)/) next
        if ($9 != ($2 ~ /import/ ? 0 : 1) || $10 != 0) bad++
        if ($2 ~ /^(frame|consumer|ffmpeg|ffcl)_/) next
        seen[$1 "," $2 "," $3] = 1; sizes[$1] = 1
    }
    END {
        split("staged_copy,baseline import,clmem import,raw cached_import,clmem handoff_wait,clmem " \
              "handoff_wait,raw handoff_semaphore,clmem handoff_semaphore,raw import_overhead,paired", want, " ")
        for (s in sizes) { nsizes++; for (k in want) if (!((s "," want[k]) in seen)) { print "# missing " s "," want[k]; bad++ } }
        exit !(nsizes > 0 && bad == 0)
    }' "$tmp/rows.csv"
check $? "the CSV has a row for each measure and variant at each size"

# Three sizes in --quick (4K, 1M, 16M), unless a size did not fit.
rows=$(grep -Evc '^size_bytes|,(frame_[a-z0-9_]+|unref_[a-z]+|consumer_[a-z]+_[0-9x]+|ffmpeg_nv12_[0-9x]+[a-z_]*|ffcl_[a-z0-9_]+|xproc_[a-z0-9_]+|ring_[a-z]+|batch_staged_copy|scaling_[a-z_]+),' "$tmp/rows.csv")
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
    cols="$num,$num,$num,[1-9][0-9]*,1,1,0,\$"
    if grep -Eq "^[1-9][0-9]*,frame_staged_copy_1920x1080_$f,baseline,$cols" "$tmp/rows.csv"; then
        grep -Eq "^[1-9][0-9]*,frame_handoff_1920x1080_$f,clmem,$cols" "$tmp/rows.csv" || frames_ok=1
    else
        grep -Eq "^  \(g\) frame 1920x1080 $F +skipped: ." "$tmp/out" || frames_ok=1
    fi
done
grep -q ',frame_[a-z_]*_3840x2160_' "$tmp/rows.csv" && frames_ok=1
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
    }' "$tmp/rows.csv" >"$tmp/bad" 2>&1
check $? "--quick ran a batch run: batches 1 and 4 in a ring of 2 for each handoff not left out, clmem and raw, beside the staged copy of a frame"

grep -q '^handoff  *ring batch' "$tmp/out"
check $? "the batch table is printed"

# (h): both unrefs timed while the gated kernel waited, each with its
# verdict against the 1 ms target, and in the CSV (64 KiB, clmem, batch 0).
verdict='(met|missed|not applicable \(.*\)|too few samples \(.*\)|not judged here \(.*\)|not judged)'
grep -Eq "^first \(import.s handle\) +[0-9.]+ +[0-9.]+ +[0-9.]+  $verdict\$" "$tmp/out" &&
    grep -Eq "^last \(starts the teardown\) +[0-9.]+ +[0-9.]+ +[0-9.]+  $verdict\$" "$tmp/out" &&
    grep -Eq '^65536,unref_first,clmem,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,20,1,0,0,$' "$tmp/rows.csv" &&
    grep -Eq '^65536,unref_last,clmem,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,20,1,0,0,$' "$tmp/rows.csv"
check $? "the unref table (h) is printed: the first and the last unref, each with the 1 ms target's verdict; and in the CSV"

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
    }' "$tmp/rows.csv" >"$tmp/bad" 2>&1 &&
    grep -Eq '^cache hit \+ unref vs live imports, keys differing in size +(flat|sublinear|linear|worse) ' "$tmp/out"
check $? "(k) scaling: every row in the CSV with its verdict, and in the table"
# (i), with CLBlast: 128^2 and 256^2 on a CPU device in --quick (1024^2
# and 4096^2 on a GPU), each staged, zero-copy, raw and floor, and the
# paired zero-copy minus raw, with the 10 columns, batch 1 and ring 0, and
# the table; without CLBlast, the line saying why not, and no rows.
if [ "${CLMEM_CLBLAST_FOUND:-}" = yes ]; then
    rows_i=$(grep -Ec '^[1-9][0-9]*,consumer_sgemm_(128x128|256x256|1024x1024|4096x4096),(baseline|clmem|raw|floor),[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[1-9][0-9]*,1,1,0,$' "$tmp/rows.csv")
    paired_i=$(grep -Ec '^[1-9][0-9]*,consumer_overhead_(128x128|256x256|1024x1024|4096x4096),paired,-?[0-9]+\.[0-9]+,-?[0-9]+\.[0-9]+,-?[0-9]+\.[0-9]+,[1-9][0-9]*,1,1,0,$' "$tmp/rows.csv")
    test "$rows_i" -eq 8 && test "$paired_i" -eq 2 && grep -Eq '^(128|1024)\^2 .*%' "$tmp/out" &&
        grep -Eq '^(256|4096)\^2 .*%' "$tmp/out"
    check $? "(i) the consumer pipeline: two sizes, staged, zero-copy, raw and floor, and zero-copy minus raw, in the CSV ($rows_i + $paired_i rows) and the table"
else
    grep -q '^(i) a consumer library in the pipeline: skipped: .' "$tmp/out" && ! grep -q ',consumer_sgemm_' "$tmp/rows.csv"
    check $? "(i) the consumer pipeline says why it did not run (${CLMEM_CLBLAST_FOUND:-CLMEM_CLBLAST_FOUND unset})"
fi

# (j), with libclmem-av: NV12 frames of 320x180 and 640x360 on a CPU device
# in --quick (1920x1080 and 3840x2160 on a GPU), each staged, host order,
# (g)'s handoff and host order by hand, with the 10 columns, batch 1 and
# ring 0, the paired library share, host order's frames in flight for
# D = 1, 2, 4 (ring D) and FFmpeg's uploads alone beside them (raw, ring
# 4), and the tables; or, where FFmpeg makes no Vulkan
# device, the line saying so. Without libclmem-av, the line saying why
# not, and no rows.
if [ "${CLMEM_AV_BUILT:-}" = yes ]; then
    j='ffmpeg_nv12_(320x180|640x360|1920x1080|3840x2160)'
    n3='[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+'
    rows_j=$(grep -Ec "^[1-9][0-9]*,$j(|_handoff_g|_by_hand),(baseline|clmem|raw),$n3,[1-9][0-9]*,1,1,0,\$" "$tmp/rows.csv")
    paired_j=$(grep -Ec "^[1-9][0-9]*,${j}_overhead,paired,-?[0-9]+\\.[0-9]+,-?[0-9]+\\.[0-9]+,-?[0-9]+\\.[0-9]+,[1-9][0-9]*,1,1,0,\$" "$tmp/rows.csv")
    flight_j=$(grep -Ec "^[1-9][0-9]*,${j}_in_flight_host,clmem,$n3,[1-9][0-9]*,[1-9][0-9]*,1,(1|2|4),\$" "$tmp/rows.csv")
    upload_j=$(grep -Ec "^[1-9][0-9]*,${j}_upload_alone,raw,$n3,[1-9][0-9]*,[1-9][0-9]*,1,4,\$" "$tmp/rows.csv")
    { test "$rows_j" -eq 8 && test "$paired_j" -eq 2 && test "$flight_j" -eq 6 && test "$upload_j" -eq 2 &&
          grep -Eq '^(320x180|1920x1080) .*x ' "$tmp/out" && grep -Eq '^(640x360|3840x2160) .*x ' "$tmp/out" &&
          grep -Eq '^(320x180|1920x1080) +host +4 ' "$tmp/out" && grep -Eq '^(640x360|3840x2160) +upload +4 ' "$tmp/out"; } ||
        { grep -q '^  skipped: FFmpeg cannot make a Vulkan device here' "$tmp/out" && ! grep -q ',ffmpeg_nv12_' "$tmp/rows.csv"; }
    check $? "(j) FFmpeg frames: two sizes, staged, host order, (g) and by hand, the library's share, host order in flight (D 1, 2, 4) and the uploads alone, in the CSV ($rows_j + $paired_j + $flight_j + $upload_j rows) and the tables"
else
    grep -q '^(j) FFmpeg.s Vulkan frames into OpenCL: skipped: .' "$tmp/out" && ! grep -q ',ffmpeg_nv12_' "$tmp/rows.csv"
    check $? "(j) FFmpeg frames say why they did not run (${CLMEM_AV_BUILT:-CLMEM_AV_BUILT unset})"
fi

# (l), with libavfilter: for each frame size (320x180 and 640x360 on a
# CPU device in --quick, 1920x1080 and 3840x2160 on a GPU) and format
# (NV12, RGBA), today's route, the mapped one and the floor, with the 10
# columns, batch 1 and ring 0, mapped minus floor paired, and host order
# in flight for D = 1, 2, 4 (ring D); or lines saying which route was
# skipped and why (PoCL makes no NV12 OpenCL frames); the raw route and
# mapped minus raw, or a line saying why not (it mirrors the vk-image way
# only), and where it ran, frames in flight through its handover. Where
# FFmpeg makes no Vulkan device, the line saying so. Without libavfilter,
# the line saying clmem-bench was not built with it, and no rows.
if [ "${CLMEM_LIBAVFILTER_FOUND:-}" = yes ] && ! grep -q '^  skipped: FFmpeg cannot make a Vulkan device here' "$tmp/out"; then
    n3='[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+'
    bad_l=0 ran_l=0
    for size in 320x180 640x360 1920x1080 3840x2160; do
        for fmt in nv12 rgba; do
            grep -Eq "^$size +$fmt " "$tmp/out" || continue
            routes=$(grep -Ec "^[1-9][0-9]*,ffcl_${fmt}_$size,(baseline|clmem|floor),$n3,[1-9][0-9]*,1,1,0,\$" "$tmp/rows.csv")
            paired=$(grep -Ec "^[1-9][0-9]*,ffcl_${fmt}_${size}_overhead,paired,-?[0-9]+\.[0-9]+,-?[0-9]+\.[0-9]+,-?[0-9]+\.[0-9]+,[1-9][0-9]*,1,1,0,\$" "$tmp/rows.csv")
            flight=$(grep -Ec "^[1-9][0-9]*,ffcl_${fmt}_${size}_in_flight_host,clmem,$n3,[1-9][0-9]*,[1-9][0-9]*,1,(1|2|4),\$" "$tmp/rows.csv")
            if test "$routes" -eq 3 && test "$paired" -eq 1 && test "$flight" -eq 3; then
                ran_l=$((ran_l + 1))
            elif ! grep -Eq "^  $size $fmt: (mapped route|today's route and the floor) skipped: ." "$tmp/out"; then
                echo "# (l) $size $fmt: $routes routes, $paired paired, $flight in flight, and no line saying why" >>"$tmp/bad"
                bad_l=1
            fi
            # The raw route: its row and mapped minus raw, or a line saying why not.
            raw=$(grep -Ec "^[1-9][0-9]*,ffcl_${fmt}_$size,raw,$n3,[1-9][0-9]*,1,1,0,\$" "$tmp/rows.csv")
            share=$(grep -Ec "^[1-9][0-9]*,ffcl_${fmt}_${size}_share,paired,-?[0-9]+\.[0-9]+,-?[0-9]+\.[0-9]+,-?[0-9]+\.[0-9]+,[1-9][0-9]*,1,1,0,\$" "$tmp/rows.csv")
            if ! { test "$raw" -eq 1 && test "$share" -eq 1; } && ! grep -Eq "^  $size $fmt: raw route skipped: ." "$tmp/out"; then
                echo "# (l) $size $fmt: $raw raw rows, $share mapped minus raw, and no line saying why" >>"$tmp/bad"
                bad_l=1
            fi
            # Where the raw route ran, the stream through its handover too.
            raw_flight=$(grep -Ec "^[1-9][0-9]*,ffcl_${fmt}_${size}_in_flight_device,raw,$n3,[1-9][0-9]*,[1-9][0-9]*,1,(1|2|4),\$" "$tmp/rows.csv")
            if test "$raw" -eq 1 && test "$raw_flight" -ne 3; then
                echo "# (l) $size $fmt: the raw route ran, and $raw_flight raw in-flight rows" >>"$tmp/bad"
                bad_l=1
            fi
        done
    done
    test "$bad_l" -eq 0 && test "$(grep -Ec '^[0-9]+x[0-9]+ +(nv12|rgba) ' "$tmp/out")" -ge 4
    check $? "(l) FFmpeg's OpenCL filters: today, mapped and floor for each size and format, mapped minus floor and host order in flight ($ran_l ran), the raw route, or lines saying why not"
else
    { grep -q "^(l) FFmpeg's OpenCL filters on Vulkan frames: skipped: clmem-bench was not built with libavfilter" "$tmp/out" ||
          grep -q '^  skipped: FFmpeg cannot make a Vulkan device here' "$tmp/out"; } && ! grep -q ',ffcl_' "$tmp/rows.csv"
    check $? "(l) FFmpeg's OpenCL filters say why they did not run (${CLMEM_LIBAVFILTER_FOUND:-CLMEM_LIBAVFILTER_FOUND unset})"
fi

# (x), with libclmem-ipc: for each frame kind (1920x1080 RGBA8 and NV12,
# and a buffer), the eight measures in the CSV (xproc_<frame>_<measure>,
# batch 1, or 4 for the batches, ring 1 or 4, the CPU time a frame), the library's share at D=1
# paired with raw D=1 (xproc_<frame>_ipc_d1_overhead) and the tables;
# without libclmem-ipc, or a Vulkan device without memory fds, the line
# saying why not, and no rows.
if [ "${CLMEM_IPC_BUILT:-}" = yes ] && ! grep -q '^(x) across processes: not run' "$tmp/out"; then
    rows_x=$(grep -Ec '^[1-9][0-9]*,xproc_[a-z0-9_]+_(inproc_e|ipc_d1|raw_d1|inproc_ring_d4|ipc_d4|ipc_batch_d4|shm_d1|shm_d4),(clmem|raw|baseline),[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+,[1-9][0-9]*,[1-9][0-9]*,(1|4),(1|4),[0-9]+\.[0-9]+$' "$tmp/rows.csv")
    paired_x=$(grep -Ec '^[1-9][0-9]*,xproc_[a-z0-9_]+_ipc_d1_overhead,paired,-?[0-9]+\.[0-9]+,-?[0-9]+\.[0-9]+,-?[0-9]+\.[0-9]+,[1-9][0-9]*,1,1,0,$' "$tmp/rows.csv")
    test "$rows_x" -eq 24 && test "$paired_x" -eq 3 && grep -q '^(x) across processes (libclmem-ipc' "$tmp/out" &&
        grep -q "^The library's share across processes" "$tmp/out"
    check $? "(x) across processes: three frame kinds, eight measures each with its CPU time and the library's share, in the CSV ($rows_x + $paired_x rows) and the tables"
else
    grep -Eq '^\(x\) across processes: (skipped|not run): .' "$tmp/out" && ! grep -q ',xproc_' "$tmp/rows.csv"
    check $? "(x) across processes says why it did not run (${CLMEM_IPC_BUILT:-CLMEM_IPC_BUILT unset})"
fi

# The CSV's first lines say what the run ran on, each "# key: value", in
# this order, before the column names: nothing empty, the date in ISO 8601,
# the command line with its options.
awk -v out="$tmp/bad" 'BEGIN { n = split("clmem_version date command host cpu vulkan_device vulkan_driver " \
                                          "opencl_device opencl_driver path", want, " ") }
    /^# / { k++; key = substr($0, 3); sub(/:.*/, "", key); val = $0; sub(/^# [a-z_]+: /, "", val)
            if (key != want[k] || val == "" || val == $0) { print "# line " NR ": " $0 > out; bad++ }
            if (key == "date" && val !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9][-+][0-9][0-9][0-9][0-9]$/) bad++
            if (key == "command" && val !~ /clmem-bench .*--quick .*--json/) bad++
            next }
    { exit }
    END { exit !(k == n && bad == 0) }' "$tmp/x.csv"
check $? "the CSV starts with the machine, the drivers, the library version, the date and the command line"

# A point a python3 check makes, or its skip.
pycheck() { # TEXT SCRIPT ARGS...
    text=$1
    shift
    if test "$have_python" != yes; then
        n=$((n + 1))
        echo "ok $n - $text # SKIP python3 not found"
        return
    fi
    python3 - "$@" >"$tmp/bad" 2>&1
    check $? "$text"
}

# The JSON's rows are the CSV's, in its order, value for value.
pycheck "the JSON's rows are the CSV's rows" "$tmp/x.json" "$tmp/rows.csv" <<'PY'
import csv, json, sys
rows = json.load(open(sys.argv[1]))["rows"]
table = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == len(table) > 0, (len(rows), len(table))
for r, c in zip(rows, table):
    for k in c:
        want = c[k]
        got = r[k] if k in r else None
        if got is None and want == "":
            continue
        if isinstance(got, float):
            assert abs(got - float(want)) < 0.0015, (k, got, want)
        else:
            assert str(got) == want, (k, got, want)
PY

# The keys of the JSON against clmem-bench(1)'s JSON OUTPUT: five points.
if test "$have_python" = yes; then
    python3 "$top_srcdir/t/lib/json-keys.py" "$top_srcdir/man/clmem-bench.1" "$tmp/x.json" "$rc" clmem-bench $((n + 1)) \
        >"$tmp/keys" 2>&1
    cat "$tmp/keys"
    # Whatever became of the script, five points.
    for k in 1 2 3 4 5; do
        n=$((n + 1))
        grep -Eq "^(not )?ok $n " "$tmp/keys" || echo "not ok $n - t/lib/json-keys.py printed no point $n"
    done
else
    for k in 1 2 3 4 5; do
        n=$((n + 1))
        echo "ok $n - clmem-bench --json against clmem-bench(1), JSON OUTPUT # SKIP python3 not found"
    done
fi

# The plots: well-formed XML, an <svg> of a line per series, each series
# in the legend.
# (x)'s plot lies beside the sizes' where (x) ran, and nowhere else.
plots="x.svg x-batches.svg"
if grep -q ',xproc_' "$tmp/rows.csv"; then
    plots="$plots x-xproc.svg"
else
    test ! -e "$tmp/x-xproc.svg"
    check $? "no (x) plot where (x) did not run"
fi
for plot in $plots; do
    pycheck "$plot is a well-formed SVG with a line and a legend entry per series" "$tmp/$plot" <<'PY'
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
root = doc.documentElement
assert root.tagName == "svg" and root.getAttribute("xmlns") == "http://www.w3.org/2000/svg"
lines = root.getElementsByTagName("polyline")
groups = root.getElementsByTagName("g")
assert len(lines) > 0 and len(lines) == len(groups)
for g in groups:
    label = g.getElementsByTagName("text")
    assert label and label[0].firstChild.data.strip()
PY
done

# Targets: each line names where it is judged, "any GPU" (two figures of
# the same run) or "H200 only" (a time); met, missed or can't tell only
# where a verdict can be drawn: on a GPU (relative ones on any, the rest
# on an H200), at the target's point, from at least 10 samples. On a CPU
# OpenCL device none is, and the reason is printed once, in the header.
lines=$(grep -Ec '^  target \((any GPU|H200 only)\): ' "$tmp/out")
other=$(grep -Ev '^ *target \((any GPU|H200 only)\): |^# +targets: |^#  ' "$tmp/out" | grep -c '^ *target')
cpu_why=$(grep -c 'its times are the host.s threads, not a GPU.s, so no target is judged' "$tmp/out")
pycheck "every target line names where it is judged ($lines lines), none met or missed without the grounds for a verdict, a CPU device's reason said once ($cpu_why)" \
    "$tmp/x.json" "$other" "$cpu_why" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert int(sys.argv[2]) == 0, "a target printed without where it is judged"
assert len(d["targets"]) > 0
cpu = d["opencl"]["cpu_device"]
assert int(sys.argv[3]) == (1 if cpu else 0), ("the CPU device's reason", sys.argv[3])
assert d["targets_judged_here"] == (not cpu)
for t in d["targets"]:
    assert t["set_on"] == "NVIDIA H200"
    assert t["verdict"] in ("met", "missed", "cant_tell", "too_few_samples", "not_applicable", "not_judged_here",
                            "not_judged_cpu_device"), t
    if t["verdict"] in ("met", "missed", "cant_tell"):
        assert not cpu and t["samples"] >= d["min_verdict_samples"] and t["value"] is not None, t
        assert t["relative"] or d["absolute_targets_judged_here"], t
        assert t["reason"] is None, t
    else:
        assert t["reason"], t
    if t["verdict"] == "not_judged_here":
        assert not t["relative"], t
if cpu:
    assert all(t["verdict"] not in ("met", "missed", "cant_tell") for t in d["targets"])
PY

# --quick's 3 pairs are too few for the import overhead's verdict.
grep -Eq '^ +4K +3 .* too few samples \(n = 3; a verdict needs 10\)$' "$tmp/out" &&
    grep -q '"verdict": "too_few_samples"' "$tmp/x.json"
check $? "the import overhead's 3 pairs of --quick are too few samples for a verdict"

# --quick stops (k)'s threads at 2 at most: the targets at T = 16 do not apply.
test "$(grep -c 'target (any GPU): throughput at least x1[24] at T = 16: not applicable (T reaches [12] here; the target is at T = 16)' "$tmp/out")" -eq 2
check $? "(k)'s targets at T = 16 are not applicable where T reaches 2"

# --help: one line for each of (a) to (l) and (x), saying what it
# measures; no source file named.
"$tool" --help >"$tmp/help" 2>&1
help_rc=$?
ok=0
for m in a b c d e f g h i j k l x; do
    test "$(grep -c "^  ($m) [A-Za-z].\{20,\}" "$tmp/help")" -eq 1 || ok=1
done
test "$help_rc" -eq 0 && test "$ok" -eq 0 && ! grep -Eq '[a-z0-9_-]+\.[ch]\b|vkctx/|tools/|bridge/|issue' "$tmp/help"
check $? "--help says in one line each what (a) to (l) and (x) measure, and names no source file"

# The sections print in order, each with its table, the batch run last.
awk 'function at(re, name) { if (!(name in line) && $0 ~ re) line[name] = NR }
    { at("^\\(a\\) to \\(f\\), one buffer size", "a"); at("^Import overhead:", "a-table")
      at("^\\(g\\) frames:", "g"); at("^Frames, medians", "g-table")
      at("^\\(h\\) clmem_handle_unref", "h"); at("^unref, microseconds", "h-table")
      at("^\\(i\\) a consumer library", "i"); at("^\\(j\\) FFmpeg", "j")
      at("^\\(k\\) scaling on", "k"); at("^Scaling:", "k-table"); at("^\\(l\\) FFmpeg.s OpenCL filters", "l")
      at("^batches: ", "batches") }
    END { n = split("a a-table g g-table h h-table i j k k-table l batches", order, " ")
          for (i = 1; i <= n; i++) {
              if (!(order[i] in line)) { print "# no " order[i]; bad++; continue }
              if (i > 1 && line[order[i]] <= line[order[i - 1]]) { print "# " order[i] " before " order[i - 1]; bad++ }
          }
          exit bad != 0 }' "$tmp/out" >"$tmp/bad" 2>&1
check $? "the sections print in order, (a) to (l), each with its table, then the batch run"

# With --json the report went to standard error, whole.
head -n 1 "$tmp/out" | grep -q '^# clmem-bench (clmem ' && tail -n 1 "$tmp/out" | grep -q '^total .* all correctness checks passed$' &&
    test "$(head -c 1 "$tmp/x.json")" = "{"
check $? "with --json the report goes to standard error, whole, and standard output holds the JSON"

# Stops in its set-up, before measuring anything.
CLMEM_VK_DEVICE=99 "$tool" --quick --csv "$tmp/bad.csv" --svg "$tmp/bad.svg" >"$tmp/bad" 2>&1
bad_rc=$?
test "$bad_rc" -eq 1 && grep -q 'CLMEM_VK_DEVICE=99 .*index 99' "$tmp/bad"
check $? "CLMEM_VK_DEVICE=99 exits 1 (got $bad_rc), naming index 99"
