/* clmem-bench: the names of the measures and variants, and the statistics of samples. */
#include "bench.h"

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
