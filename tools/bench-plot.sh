#!/bin/sh
# tools/bench-plot.sh CSV [PNG]: plot a clmem-bench CSV with gnuplot, for
# a CSV that came from a machine without gnuplot (clmem-bench plots by
# itself when gnuplot is on PATH). Log-log: time against buffer size for
# (a) to (e), clmem's runs solid with min..max bars, raw runs dashed.
set -e
csv=${1:?usage: tools/bench-plot.sh CSV [PNG]}
png=${2:-${csv%.csv}.png}
command -v gnuplot >/dev/null 2>&1 || { echo "bench-plot.sh: gnuplot is not on PATH" >&2; exit 1; }

# One gnuplot datablock per (measure, variant): "size median min max".
series() { # NAME MEASURE VARIANT
    echo "\$$1 << EOD"
    awk -F, -v m="$2" -v v="$3" 'NR > 1 && $2 == m && $3 == v { print $1, $4, $5, $6 }' "$csv"
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
