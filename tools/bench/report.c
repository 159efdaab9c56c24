/* SPDX-License-Identifier: MIT */
/* clmem-bench: the text: the header, the tables of medians and ratios, the
 * batch table. */
#include "bench.h"

/* lib over raw, median to median; "few" beside a ratio from fewer than
 * MIN_VERDICT_SAMPLES samples of either. */
static void print_ratio(const struct summary *lib, const struct summary *raw)
{
    if (lib->have && raw->have && raw->median > 0)
        printf("  %+7.1f%% (%+8.1f us) %-3s", (lib->median / raw->median - 1) * 100, lib->median - raw->median,
               lib->reps < MIN_VERDICT_SAMPLES || raw->reps < MIN_VERDICT_SAMPLES ? "few" : "");
    else
        printf("  %24s %3s", "-", "");
}

static void print_times(double v, bool have)
{
    if (have)
        printf(v < 10 ? " %10.2f" : " %10.1f", v);
    else
        printf(" %10s", "-");
}

void print_tables(const struct size_result *res, int n)
{
    static const struct {
        enum measure m;
        enum variant v;
    } cols[] = {{M_STAGED, V_BASE}, {M_IMPORT, V_CLMEM}, {M_IMPORT, V_RAW}, {M_CACHED, V_CLMEM},
                {M_WAIT, V_CLMEM},  {M_WAIT, V_RAW},     {M_SEM, V_CLMEM},  {M_SEM, V_RAW}};
    char sz[32];

    printf("\nMedians in microseconds (min..max above and in the CSV); (d) and (e) are per frame\n");
    printf("%6s %10s %10s %10s %10s %10s %10s %10s %10s\n", "size", "a:staged", "b:import", "b:raw", "c:cached",
           "d:wait", "d:raw", "e:sem", "e:raw");
    for (int i = 0; i < n; i++) {
        printf("%6s", size_text(res[i].size, sz, sizeof sz));
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
            print_times(res[i].s[cols[c].m][cols[c].v].median, res[i].s[cols[c].m][cols[c].v].have);
        printf("\n");
    }
    printf(
        "  a:staged (a) staged copy; b:import (b) first import, cache off; c:cached (c) cached import;\n"
        "  d:wait (d) handoff with host waits; e:sem (e) handoff with semaphores; :raw the same through raw calls\n");

    printf("\nRatios: a/d and a/e = staged copy time over clmem handoff time per frame (> 1: sharing wins);\n"
           "clmem vs raw = the library's overhead over the same raw calls (median to median)\n");
    printf("%6s %8s %8s  %28s  %28s  %28s\n", "size", "a/d", "a/e", "import clmem vs raw", "(d) clmem vs raw",
           "(e) clmem vs raw");
    for (int i = 0; i < n; i++) {
        const struct summary *a = &res[i].s[M_STAGED][V_BASE], *d = &res[i].s[M_WAIT][V_CLMEM],
                             *e = &res[i].s[M_SEM][V_CLMEM];
        printf("%6s", size_text(res[i].size, sz, sizeof sz));
        if (a->have && d->have && d->median > 0)
            printf(" %7.2fx", a->median / d->median);
        else
            printf(" %8s", "-");
        if (a->have && e->have && e->median > 0)
            printf(" %7.2fx", a->median / e->median);
        else
            printf(" %8s", "-");
        print_ratio(&res[i].s[M_IMPORT][V_CLMEM], &res[i].s[M_IMPORT][V_RAW]);
        print_ratio(d, &res[i].s[M_WAIT][V_RAW]);
        print_ratio(e, &res[i].s[M_SEM][V_RAW]);
        printf("\n");
    }
    printf("  a/d, a/e: (a) over (d), (a) over (e); clmem vs raw: the library's median over raw's, in %% and us;\n"
           "  few: from fewer than %d samples (--quick's (e) has 2 blocks): noise, not a figure to quote\n",
           MIN_VERDICT_SAMPLES);
}

/* The import's overhead, paired rep by rep, against its target. */
void print_import_overhead(const struct size_result *res, int n)
{
    char sz[32], v[512];

    printf("\nImport overhead: clmem - raw within each rep (paired), median with its 95%% interval;\n"
           "target (any GPU): at most %.0f us or %.0f %% of the raw import (met: the whole interval is within it;\n"
           "missed: all of it is above)\n",
           IMPORT_TARGET_US, IMPORT_TARGET_FRACTION * 100);
    printf("%6s %6s %10s %12s %22s %8s  %-11s %s\n", "size", "pairs", "raw us", "clmem-raw us", "95% interval", "%",
           "reads", "verdict");
    for (int i = 0; i < n; i++) {
        const struct paired *p = &res[i].import_overhead;
        if (!p->have)
            continue;
        printf("%6s %6d %10.1f %+12.2f   [%+8.2f .. %+8.2f] %+7.2f%%  %-11s %s\n",
               size_text(res[i].size, sz, sizeof sz), p->pairs, p->raw_median, p->median, p->lo, p->hi,
               p->raw_median > 0 ? p->median / p->raw_median * 100 : 0.0,
               p->pairs < MIN_VERDICT_SAMPLES ? "-" : paired_reads(p), /* the verdict says too few */
               res[i].overhead_target ? verdict_text(res[i].overhead_target, v, sizeof v) : "-");
    }
    printf("  pairs: reps, each importing both ways; raw us: the raw import's median; clmem-raw us: the median of\n"
           "  the differences; 95%% interval: of that median; %%: of the raw import; reads: can't tell when the\n"
           "  interval holds 0, few samples under %d pairs; verdict: against the target\n",
           MIN_VERDICT_SAMPLES);
}

void print_batch_table(const struct batch_results *r)
{
    char sz[32];
    if (!r->ran || r->npoints == 0)
        return;
    printf("\nBatches: frames of %s; medians per frame; staged copy of one frame %.2f us [%.2f .. %.2f]\n",
           size_text(r->frame_size, sz, sizeof sz), r->staged.median, r->staged.min, r->staged.max);
    printf("clmem-raw = the library's cost per batch over the same raw calls; staged/clmem = the staged copy per\n"
           "frame over the handoff per frame (> 1: sharing wins)\n");
    printf("%-15s %4s %5s %12s %12s %12s %14s %12s\n", "handoff", "ring", "batch", "clmem us/fr", "raw us/fr",
           "frames/s", "clmem-raw/bat", "staged/clmem");
    for (int h = 0; h < H_COUNT; h++)
        for (int i = 0; i < r->npoints; i++) {
            const struct batch_point *p = &r->points[i];
            const struct summary *lib = &p->s[h][V_CLMEM], *raw = &p->s[h][V_RAW];
            if (!lib->have)
                continue;
            printf("%-15s %4d %5d %12.2f %12.2f %12.0f %+12.2f us %11.1fx%s\n", handoff_label[h], p->ring, p->batch,
                   lib->median, raw->median, lib->median > 0 ? 1e6 / lib->median : 0.0,
                   (lib->median - raw->median) * p->batch, lib->median > 0 ? r->staged.median / lib->median : 0.0,
                   lib->reps < MIN_VERDICT_SAMPLES || raw->reps < MIN_VERDICT_SAMPLES ? "  few samples" : "");
        }
    printf("  ring: batches in flight; batch: frames per semaphore signal and wait; clmem us/fr, raw us/fr: the\n"
           "  median time a frame through the library and through the raw calls; frames/s: the library's;\n"
           "  few samples: under %d\n",
           MIN_VERDICT_SAMPLES);
}

void print_header(const struct bench *b, const struct options *o, const uint64_t *sizes, int n)
{
    const struct machine *m = &b->machine;
    char sz[32];

    printf("# clmem-bench (clmem %s), %s on %s\n", clmem_version(), m->date, m->host);
    printf("# command: %s\n", m->command);
    printf("# CPU: %s, %d online\n", m->cpu, m->cpus);
    printf("# Vulkan: %s, driverVersion %s (0x%08x), API %s, validation %s\n", b->vk.device_name, m->vk_driver,
           b->vk_props.driverVersion, m->vk_api, b->vk.validation ? "ON (timings include the layer)" : "off");
    /* Two identical GPUs have the same name: the index and UUID say which
     * one CLMEM_VK_DEVICE chose. */
    printf("#   device %d, deviceUUID %s\n", b->vk.device_index,
           m->vk_uuid[0] ? m->vk_uuid : "unknown (no Vulkan 1.1)");
    printf("# OpenCL: %s on %s (%s), CL_DRIVER_VERSION %s, %s device\n", m->cl_name, m->cl_platform, m->cl_version,
           m->cl_driver, b->cpu_device ? "CPU" : "non-CPU");
    printf("#   chosen: %s\n", b->pair_note);
    printf("# path: %s (%s)\n", clmem_bridge_path_name(b->path), b->path_note);
    printf("# bridges: made once before timing; (b) through one made with CLMEM_BRIDGE_NO_IMPORT_CACHE\n"
           "#       (clmem_bridge_finish after each rep, untimed), the rest through one with the cache\n");
    printf("# semaphores: %s\n", b->sem_ok ? b->sem_note : b->sem_note[0] ? b->sem_note : "not usable");
    printf("# sizes:");
    for (int i = 0; i < n; i++)
        printf(" %s", size_text(sizes[i], sz, sizeof sz));
    printf("; reps %s; frames K=%d; (e) blocks %d%s\n", o->reps ? "fixed" : "by size", o->frames, o->blocks,
           o->quick ? " (--quick)" : "");
    printf("# targets: set on an NVIDIA H200; judged (met, missed, can't tell) at the point each names, from at\n"
           "#       least %d samples: \"any GPU\" ones (two figures of the same run) on any GPU, \"H200 only\"\n"
           "#       ones (a time) on an H200 only; ",
           MIN_VERDICT_SAMPLES);
    if (b->cpu_device)
        printf("here none: %s\n", cpu_device_not_judged);
    else
        printf("%s\n",
               on_target_machine(b) ? "this is an H200: all of them" : "this is not an H200: the \"any GPU\" ones");
    printf("# (a) = pre-recorded vkCmdCopyBuffer into persistently mapped staging + vkQueueWaitIdle +\n"
           "#       clEnqueueWriteBuffer(blocking) into a plain cl buffer\n"
           "# (d),(e) Vulkan's write: one pre-recorded command buffer per frame value (vkCmdFillBuffer of\n"
           "#       word 0 + barrier), recorded before timing; kernel (1 work-item): v=p[0]; p[0]=v+1; p[1]+=v\n"
           "# raw = the same driver calls without the library, interleaved rep by rep ((e): block by block)\n");
    fflush(stdout);
}
