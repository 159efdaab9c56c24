/* SPDX-License-Identifier: MIT */
/* clmem-bench: the names of the measures and variants, and the statistics of samples. */
#include "bench.h"

#include <math.h>

const char *const measure_name[M_COUNT] = {"staged_copy", "import", "cached_import", "handoff_wait",
                                           "handoff_semaphore"};
const char *const variant_name[V_COUNT] = {"baseline", "clmem", "raw"};

static int compare_double(const void *pa, const void *pb)
{
    double x = *(const double *)pa, y = *(const double *)pb;
    return (x > y) - (x < y);
}

/* Median, min and max of n samples (sorts them in place). */
struct summary summarize(double *v, int n, int frames_per_rep)
{
    struct summary s = {.have = n > 0, .reps = n, .frames_per_rep = frames_per_rep};
    if (n <= 0)
        return s;
    qsort(v, (size_t)n, sizeof *v, compare_double);
    s.min = v[0];
    s.max = v[n - 1];
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return s;
}

/* The median of lib[i] - raw[i] and its distribution-free 95 % interval:
 * the order statistics of ranks n/2 -+ 0.98 sqrt(n) (the normal
 * approximation of the binomial(n, 1/2) bounds), clamped to the samples.
 * lib and raw are left as they were; diff is scratch of n doubles. */
struct paired summarize_paired(const double *lib, const double *raw, double *diff, int n)
{
    struct paired p = {.have = n > 0, .pairs = n};
    struct summary d, r;
    int lo, hi;

    if (n <= 0)
        return p;
    for (int i = 0; i < n; i++)
        diff[i] = lib[i] - raw[i];
    d = summarize(diff, n, 1); /* sorts diff */
    lo = (int)floor(n / 2.0 - 0.98 * sqrt((double)n));
    hi = (int)ceil(n / 2.0 + 0.98 * sqrt((double)n));
    p.median = d.median;
    p.lo = diff[lo < 0 ? 0 : lo];
    p.hi = diff[hi > n - 1 ? n - 1 : hi];
    for (int i = 0; i < n; i++)
        diff[i] = raw[i];
    r = summarize(diff, n, 1);
    p.raw_median = r.median;
    return p;
}

/* What a paired difference lets a reader say about it: "few samples"
 * under MIN_VERDICT_SAMPLES pairs, "can't tell" when its 95 % interval
 * holds 0 (the library may cost nothing), else "". */
const char *paired_reads(const struct paired *p)
{
    if (p->pairs < MIN_VERDICT_SAMPLES)
        return "few samples";
    if (p->lo <= 0 && p->hi >= 0)
        return "can't tell";
    return "";
}

/* met: the whole interval is within bound_us; missed: all of it is
 * above; otherwise the samples cannot tell. */
enum verdict paired_verdict_within(const struct paired *p, double bound_us)
{
    if (p->hi <= bound_us)
        return VERDICT_MET;
    if (p->lo > bound_us)
        return VERDICT_MISSED;
    return VERDICT_UNCLEAR;
}

/* The import's: within IMPORT_TARGET_US or IMPORT_TARGET_FRACTION of the
 * raw import, whichever is larger. */
enum verdict paired_verdict(const struct paired *p)
{
    double target = IMPORT_TARGET_US > IMPORT_TARGET_FRACTION * p->raw_median ? IMPORT_TARGET_US
                                                                              : IMPORT_TARGET_FRACTION * p->raw_median;
    return paired_verdict_within(p, target);
}
