/* SPDX-License-Identifier: MIT */
/* clmem-bench: every row measured, in the order measured, and every part
 * that did not run with its reason. The CSV (csv.c), the JSON (json.c) and
 * the plots (svg.c) are written from here: a measure that records its rows
 * here is in all three. */
#include "bench.h"

#include <math.h>

static struct result_row *rows;
static int nrows, rows_allocated;
static struct result_skip *skips;
static int nskips, skips_allocated;

/* array, moved to a larger block when element `used` does not fit. */
static void *room_for(void *array, int used, int *allocated, size_t element)
{
    if (used < *allocated)
        return array;
    *allocated = *allocated ? 2 * *allocated : 64;
    array = realloc(array, (size_t)*allocated * element);
    if (!array)
        die("out of memory");
    return array;
}

void record_row(const char *section, uint64_t x, const char *measure, const char *variant, const struct summary *s,
                int batch, int ring)
{
    record_row_cpu(section, x, measure, variant, s, batch, ring, NAN);
}

void record_row_cpu(const char *section, uint64_t x, const char *measure, const char *variant, const struct summary *s,
                    int batch, int ring, double cpu_us)
{
    struct result_row *r;
    if (!s->have)
        return;
    rows = room_for(rows, nrows, &rows_allocated, sizeof *rows);
    r = &rows[nrows++];
    snprintf(r->section, sizeof r->section, "%s", section);
    snprintf(r->measure, sizeof r->measure, "%s", measure);
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    r->x = x;
    r->s = *s;
    r->batch = batch;
    r->ring = ring;
    r->cpu_us = cpu_us;
}

void record_paired_row(const char *section, uint64_t x, const char *measure, const struct paired *p, int batch)
{
    struct summary s = {.have = p->have, .median = p->median, .min = p->lo, .max = p->hi, .reps = p->pairs,
                        .frames_per_rep = 1};
    record_row(section, x, measure, "paired", &s, batch, 0);
}

int result_count(void)
{
    return nrows;
}

const struct result_row *result_at(int i)
{
    return &rows[i];
}

void record_skip(const char *section, const char *what, const char *fmt, ...)
{
    struct result_skip *k;
    va_list ap;
    skips = room_for(skips, nskips, &skips_allocated, sizeof *skips);
    k = &skips[nskips++];
    snprintf(k->section, sizeof k->section, "%s", section);
    snprintf(k->what, sizeof k->what, "%s", what);
    va_start(ap, fmt);
    vsnprintf(k->reason, sizeof k->reason, fmt, ap);
    va_end(ap);
}

int skip_count(void)
{
    return nskips;
}

const struct result_skip *skip_at(int i)
{
    return &skips[i];
}

void results_free(void)
{
    free(rows);
    free(skips);
    rows = NULL;
    skips = NULL;
    nrows = nskips = rows_allocated = skips_allocated = 0;
}
