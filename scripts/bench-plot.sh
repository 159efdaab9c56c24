#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/bench-plot.sh CSV [PNG]: plot a clmem-bench CSV with gnuplot, for
# a CSV that came from a machine without gnuplot (clmem-bench plots by
# itself when gnuplot is on PATH). Log-log: time against buffer size for
# (a) to (e), clmem's runs solid with min..max bars, raw runs dashed. When
# the CSV has a batch run (clmem-bench --batches), a second plot, PNG with
# "-batches" before ".png": microseconds per frame against batch size, a
# line per handoff, ring size and variant, and the staged copy of a frame.
set -e
csv=${1:?usage: scripts/bench-plot.sh CSV [PNG]}
png=${2:-${csv%.csv}.png}
command -v gnuplot >/dev/null 2>&1 || { echo "bench-plot.sh: gnuplot is not on PATH" >&2; exit 1; }

# One gnuplot datablock per (measure, variant): "size median min max"
# (the batch run's rows, ring > 0 or batch_staged_copy, are not sizes; nor
# are the (g) image frames' frame_* rows, whose size_bytes is a frame's
# bytes: no series names them, and clmem-bench's own plot leaves them out).
series() { # NAME MEASURE VARIANT
    echo "\$$1 << EOD"
    awk -F, -v m="$2" -v v="$3" 'NR > 1 && $2 == m && $3 == v && $10 + 0 == 0 { print $1, $4, $5, $6 }' "$csv"
    echo "EOD"
}
has() { awk -F, -v m="$1" -v v="$2" 'NR > 1 && $2 == m && $3 == v { f = 1 } END { exit !f }' "$csv"; }

{
    echo "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1200,750 } else { set terminal png size 1200,750 }"
    echo "set output '$png'"
    echo "set title 'clmem-bench: $(basename "$csv")'"
    echo "set logscale x 4; set logscale y; set grid; set key below; set format x '%.0b%BB'"
    echo "set xlabel 'buffer size (bytes)'; set ylabel 'microseconds (median; bars: min..max)'"
    series a staged_copy baseline
    series b import clmem
    series c cached_import clmem
    series d handoff_wait clmem
    series e handoff_semaphore clmem
    series rb import raw
    series rd handoff_wait raw
    series re handoff_semaphore raw
    plot="plot"
    sep=""
    # NAME MEASURE VARIANT STYLE COLOUR TITLE...: a raw series has its clmem series' colour.
    for s in "a staged_copy baseline bars #9400d3 (a) staged copy" \
             "b import clmem bars #009e73 (b) first import" \
             "c cached_import clmem bars #56b4e9 (c) cached import" \
             "d handoff_wait clmem bars #e69f00 (d) handoff, host waits (per frame)" \
             "e handoff_semaphore clmem bars #d55e00 (e) handoff, semaphores (per frame)" \
             "rb import raw lines #009e73 (b) raw" \
             "rd handoff_wait raw lines #e69f00 (d) raw" \
             "re handoff_semaphore raw lines #d55e00 (e) raw"; do
        set -- $s
        name=$1 measure=$2 variant=$3 style=$4 colour=$5
        shift 5
        has "$measure" "$variant" || continue
        if test "$style" = lines; then style="using 1:2 with lines dt 2"; else style="using 1:2:3:4 with yerrorlines lw 2"; fi
        plot="$plot$sep \$$name $style lc rgb '$colour' title '$*'"
        sep=","
    done
    echo "$plot"
} | gnuplot
echo "bench-plot.sh: wrote $png"

# The batch run: microseconds per frame against batch size.
awk -F, 'NR > 1 && $2 ~ /^ring_/ { f = 1 } END { exit !f }' "$csv" || exit 0
bpng=${png%.png}-batches.png
{
    echo "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1200,750 } else { set terminal png size 1200,750 }"
    echo "set output '$bpng'"
    frame=$(awk -F, 'NR > 1 && $2 ~ /^ring_/ { print $1; exit }' "$csv")
    echo "set title 'clmem-bench: frames in flight, $(basename "$csv"), frames of $frame bytes'"
    echo "set logscale xy 2; set grid; set key below"
    echo "set xlabel 'batch size (frames per semaphore signal and wait)'; set ylabel 'microseconds per frame (median; bars: min..max)'"
    plot="plot"
    sep=""
    n=0
    for m in ring_semaphore:#d55e00:semaphores ring_host:#e69f00:host-waits ring_transfer:#0072b2:transfer-queue; do
        measure=${m%%:*} rest=${m#*:}
        colour=${rest%%:*} label=$(echo "${rest#*:}" | tr - ' ')
        for ring in $(awk -F, -v m="$measure" 'NR > 1 && $2 == m { print $10 }' "$csv" | sort -nu); do
            for variant in clmem raw; do
                n=$((n + 1))
                echo "\$b$n << EOD"
                awk -F, -v m="$measure" -v v="$variant" -v r="$ring" \
                    'NR > 1 && $2 == m && $3 == v && $10 == r { print $9, $4, $5, $6 }' "$csv" | sort -n
                echo "EOD"
                if test "$variant" = clmem; then style="lw 2 dt 1"; else style="lw 1 dt 2"; fi
                plot="$plot$sep \$b$n using 1:2:3:4 with yerrorlines $style pt $((5 + 2 * ring)) lc rgb '$colour' title '$label, ring $ring, $variant'"
                sep=","
            done
        done
    done
    staged=$(awk -F, 'NR > 1 && $2 == "batch_staged_copy" { print $4; exit }' "$csv")
    if test -n "$staged"; then
        plot="$plot$sep $staged with lines lw 2 lc rgb '#9400d3' title 'staged copy of one frame'"
    fi
    echo "$plot"
} | gnuplot
echo "bench-plot.sh: wrote $bpng"
