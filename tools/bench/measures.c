/* SPDX-License-Identifier: MIT */
/* clmem-bench: the six measures of one buffer size: the staged copy, the
 * imports and the two handoffs, clmem and raw interleaved. */
#include "bench.h"

/* what a program does without sharing: Vulkan copies into staging,
 * the host hands the bytes to OpenCL. The staging buffer is mapped once
 * (persistently, as careful programs do) and the copy is pre-recorded, so
 * the timing holds only the per-transfer work. */
static struct summary run_staged(struct bench *b, struct size_run *s)
{
    uint32_t first = 0, last = 0;
    char sz[32];
    for (int rep = -1; rep < s->reps; rep++) { /* rep -1: warm-up */
        double t0 = now_us();
        submit_and_wait(b, s->copy_cb, "vkQueueSubmit(staging copy)");
        check_cl(clEnqueueWriteBuffer(b->queue, s->plain, CL_TRUE, 0, (size_t)s->size, s->staging_ptr, 0, NULL, NULL),
                 "clEnqueueWriteBuffer");
        double t1 = now_us();
        if (rep >= 0)
            s->samples[rep] = t1 - t0;
    }
    check_cl(clEnqueueReadBuffer(b->queue, s->plain, CL_TRUE, 0, 4, &first, 0, NULL, NULL), "clEnqueueReadBuffer");
    check_cl(clEnqueueReadBuffer(b->queue, s->plain, CL_TRUE, (size_t)s->size - 4, 4, &last, 0, NULL, NULL),
             "clEnqueueReadBuffer");
    if (first != PATTERN || last != PATTERN)
        fail(b, "(a) at %s: the plain buffer holds 0x%08x ... 0x%08x, want 0x%08x", size_text(s->size, sz, sizeof sz),
             first, last, PATTERN);
    return summarize(s->samples, s->reps, 1);
}

/* An import of the clmem variant's buffer through `bridge` (b->bridge, or
 * b->bridge_uncached for the first import). */
static clmem_status lib_import(struct bench *b, clmem_bridge *bridge, struct size_run *s, clmem_handle **h)
{
    return clmem_bridge_import_vk(bridge, &s->lib->buf.mem, 0, s->lib->buf.mem.allocation_size, b->path,
                                  s->lib_anchor, b->queue, CL_MEM_READ_WRITE, h);
}

/* Untimed, after the last handle of the uncached bridge's import went: the
 * teardown that unref started (markers on the queue, then the Vulkan
 * keepalive dropped) is done before the next import, as raw_teardown waits
 * for its cl_mem. So no rep inherits another's pending teardown, and the
 * two bridges never hold a host mapping of the same memory at once. (Not
 * for the cached bridge: it holds the semaphores all run long, so its
 * clmem_bridge_finish is CLMEM_ERR_IN_USE until the end.) */
static void lib_settle(clmem_bridge *bridge, const char *what)
{
    clmem_status st = clmem_bridge_finish(bridge, FINISH_TIMEOUT_NS);
    if (st != CLMEM_OK)
        die("clmem_bridge_finish (%s) returned %s: %s", what, clmem_status_name(st), clmem_error_message());
}

/* The clmem and raw first imports: a new driver import each rep, clmem and raw in turns
 * (import_reps pairs). The clmem variant imports through the bridge made
 * without a cache. The pairs' differences give the library's overhead. */
static void run_import(struct bench *b, struct size_run *s, struct summary *lib_out, struct summary *raw_out,
                       struct paired *overhead)
{
    for (int rep = -1; rep < s->import_reps; rep++) {
        for (int turn = 0; turn < 2; turn++) {
            /* Even reps: clmem first; odd reps (and the warm-up): raw first. */
            bool lib_turn = (rep >= 0 && rep % 2 == 0) == (turn == 0);
            double t0, t1;
            if (lib_turn) {
                clmem_handle *h = NULL;
                t0 = now_us();
                clmem_status st = lib_import(b, b->bridge_uncached, s, &h);
                t1 = now_us();
                check_clmem(st, "clmem_bridge_import_vk (CLMEM_BRIDGE_NO_IMPORT_CACHE)");
                clmem_handle_unref(h);
                lib_settle(b->bridge_uncached, "after an uncached import");
            } else {
                struct raw_import r;
                t0 = now_us();
                raw_import(b, &s->raw_buf.mem, &r);
                t1 = now_us();
                raw_watch(&r);
                raw_teardown(b, &r);
            }
            if (rep >= 0)
                (lib_turn ? s->samples : s->samples2)[rep] = t1 - t0;
        }
    }
    *overhead = summarize_paired(s->samples, s->samples2, s->samples3, s->import_reps);
    *lib_out = summarize(s->samples, s->import_reps, 1);
    *raw_out = summarize(s->samples2, s->import_reps, 1);
}

/* The cached import: a second import of memory with a live import, through the bridge
 * with the cache. */
static struct summary run_cached(struct bench *b, struct size_run *s)
{
    clmem_handle *h0 = NULL;
    char sz[32];
    bool same = true;

    check_clmem(lib_import(b, b->bridge, s, &h0), "clmem_bridge_import_vk (the live import)");
    for (int rep = -1; rep < s->reps; rep++) {
        clmem_handle *h = NULL;
        double t0 = now_us();
        clmem_status st = lib_import(b, b->bridge, s, &h);
        double t1 = now_us();
        check_clmem(st, "clmem_bridge_import_vk (cached)");
        same = same && clmem_handle_mem(h) == clmem_handle_mem(h0);
        clmem_handle_unref(h);
        if (rep >= 0)
            s->samples[rep] = t1 - t0;
    }
    if (!same)
        fail(b, "(c) at %s: the cached import returned another cl_mem than the live import's",
             size_text(s->size, sz, sizeof sz));
    clmem_handle_unref(h0);
    return summarize(s->samples, s->reps, 1);
}

/* One frame of the host-wait handoff; returns its time. */
static double wait_frame(struct bench *b, struct size_run *s, enum variant v, int f)
{
    double t0 = now_us();
    submit_and_wait(b, s->fill_cb[v][f], "vkQueueSubmit(fill word 0) + vkQueueWaitIdle");
    if (v == V_CLMEM) {
        check_clmem(clmem_bridge_acquire(b->bridge, s->h, 0, NULL, NULL), "clmem_bridge_acquire");
        enqueue_kernel(b, v);
        check_clmem(clmem_bridge_release(b->bridge, s->h, 0, NULL, NULL), "clmem_bridge_release");
    } else {
        raw_acquire(b, &s->raw);
        enqueue_kernel(b, v);
        raw_release(b, &s->raw);
    }
    check_cl(clFinish(b->queue), "clFinish");
    return now_us() - t0;
}

/* The clmem and raw host-wait handoffs, alternating frame by frame (and which goes first). */
static void run_wait(struct bench *b, struct size_run *s, struct summary *lib_out, struct summary *raw_out)
{
    int total = s->warmup_frames + s->frames;
    reset_sum(b, s, V_CLMEM);
    reset_sum(b, s, V_RAW);
    for (int f = 0; f < total; f++) {
        for (int turn = 0; turn < 2; turn++) {
            enum variant v = (f % 2 == 0) == (turn == 0) ? V_CLMEM : V_RAW;
            double t = wait_frame(b, s, v, f);
            if (f >= s->warmup_frames)
                (v == V_CLMEM ? s->samples : s->samples2)[f - s->warmup_frames] = t;
        }
    }
    check_frames(b, s, V_CLMEM, total, "(d)");
    check_frames(b, s, V_RAW, total, "(d)");
    *lib_out = summarize(s->samples, s->frames, 1);
    *raw_out = summarize(s->samples2, s->frames, 1);
}

/* One block of the semaphore handoff: `frames` frames with no host wait in the loop (the
 * library's host-ordered mode waits inside its own calls), then one final
 * wait. Returns the time per frame. */
static double semaphore_block(struct bench *b, struct size_run *s, enum variant v, int frames)
{
    struct sem_set *set = &b->sem[v];
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo last = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                         .waitSemaphoreCount = 1,
                         .pWaitSemaphores = &set->done,
                         .pWaitDstStageMask = &stage};
    double t0, t1;

    reset_sum(b, s, v);
    t0 = now_us();
    for (int f = 0; f < frames; f++) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &s->fill_cb[v][f],
                           .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &set->ready};
        if (f > 0) { /* Vulkan writes only after OpenCL finished the previous frame */
            si.waitSemaphoreCount = 1;
            si.pWaitSemaphores = &set->done;
            si.pWaitDstStageMask = &stage;
        }
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(fill, semaphores)");
        if (v == V_CLMEM) {
            check_clmem(clmem_bridge_semaphore_wait(b->bridge, set->lib_ready, b->queue, 0, NULL, NULL),
                        "clmem_bridge_semaphore_wait");
            check_clmem(clmem_bridge_acquire(b->bridge, s->h, 0, NULL, NULL), "clmem_bridge_acquire");
            enqueue_kernel(b, v);
            check_clmem(clmem_bridge_release(b->bridge, s->h, 0, NULL, NULL), "clmem_bridge_release");
            check_clmem(clmem_bridge_semaphore_signal(b->bridge, set->lib_done, b->queue, 0, NULL, NULL),
                        "clmem_bridge_semaphore_signal");
        } else {
            raw_semaphore_wait(b, set);
            raw_acquire(b, &s->raw);
            enqueue_kernel(b, v);
            raw_release(b, &s->raw);
            raw_semaphore_signal(b, set);
        }
    }
    /* The one host wait: Vulkan consumes the last signal, both queues drain. */
    check_vk(vkQueueSubmit(b->vk.queue, 1, &last, VK_NULL_HANDLE), "vkQueueSubmit(final wait)");
    check_vk(vkQueueWaitIdle(b->vk.queue), "vkQueueWaitIdle(final)");
    check_cl(clFinish(b->queue), "clFinish(final)");
    t1 = now_us();
    check_frames(b, s, v, frames, "(e)");
    return (t1 - t0) / frames;
}

/* The clmem and raw semaphore handoffs: whole blocks alternate (a pipeline cannot be split frame
 * by frame between two variants), in the order clmem-raw, raw-clmem, ... */
static void run_semaphore(struct bench *b, struct size_run *s, struct summary *lib_out, struct summary *raw_out)
{
    int warm = s->warmup_frames < s->frames ? s->warmup_frames : s->frames;
    semaphore_block(b, s, V_CLMEM, warm > 0 ? warm : 1);
    semaphore_block(b, s, V_RAW, warm > 0 ? warm : 1);
    for (int blk = 0; blk < s->blocks; blk++) {
        for (int turn = 0; turn < 2; turn++) {
            enum variant v = (blk % 2 == 0) == (turn == 0) ? V_CLMEM : V_RAW;
            double t = semaphore_block(b, s, v, s->frames);
            (v == V_CLMEM ? s->samples : s->samples2)[blk] = t;
        }
    }
    *lib_out = summarize(s->samples, s->blocks, s->frames);
    *raw_out = summarize(s->samples2, s->blocks, s->frames);
}

static void print_line(const char *label, const char *variant, const struct summary *m)
{
    if (!m->have)
        return;
    printf("  %-34s %-8s %11.2f us  [%.2f .. %.2f]  n=%d%s%s\n", label, variant, m->median, m->min, m->max, m->reps,
           m->frames_per_rep > 1 ? " blocks" : "", m->reps < MIN_VERDICT_SAMPLES ? " (few samples)" : "");
}

/* Frames per handoff, for the batch column: 1 for what moves one frame
 * at a time, 0 for the imports, which hand nothing over. */
static int measure_batch(enum measure m)
{
    return m == M_IMPORT || m == M_CACHED ? 0 : 1;
}

/* The size's rows, in the order of the text, and the import overhead's
 * target. The paired row's min and max are the bounds of the median's
 * 95 % interval, its reps the pairs. */
static void record_size(struct bench *b, struct size_result *res)
{
    static const struct {
        const char *section;
        enum measure m;
        enum variant v;
    } order[] = {{"a", M_STAGED, V_BASE}, {"b", M_IMPORT, V_CLMEM}, {"f", M_IMPORT, V_RAW},
                 {"c", M_CACHED, V_CLMEM}, {"d", M_WAIT, V_CLMEM},  {"f", M_WAIT, V_RAW},
                 {"e", M_SEM, V_CLMEM},    {"f", M_SEM, V_RAW}};
    const struct paired *p = &res->import_overhead;
    struct target_spec spec = {"f", "import_overhead", res->size, "clmem - raw at most 1 us or 2 % of the raw import",
                               true};

    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        record_row(order[i].section, res->size, measure_name[order[i].m], variant_name[order[i].v],
                   &res->s[order[i].m][order[i].v], measure_batch(order[i].m), 0);
    record_paired_row("f", res->size, "import_overhead", p, 0);
    if (p->have)
        res->overhead_target = record_target(b, &spec, true, NULL, p->pairs, p->median, paired_verdict(p));
}

void run_size(struct bench *b, struct size_run *s, struct size_result *res)
{
    char sz[32];
    double t_start = now_us();

    res->size = s->size;
    size_setup(b, s);
    printf("\nsize %s (allocation %llu bytes; reps %d, frames %d, semaphore blocks %d)%s\n",
           size_text(s->size, sz, sizeof sz), (unsigned long long)s->lib->buf.mem.allocation_size, s->reps,
           s->frames, s->blocks, s->staging_cached ? "" : " staging is not HOST_CACHED");
    fflush(stdout);

    watchdog("(a) staged copy", sz);
    res->s[M_STAGED][V_BASE] = run_staged(b, s);
    print_line("(a) staged copy", "baseline", &res->s[M_STAGED][V_BASE]);
    fflush(stdout);

    watchdog("(b) first import", sz);
    run_import(b, s, &res->s[M_IMPORT][V_CLMEM], &res->s[M_IMPORT][V_RAW], &res->import_overhead);
    print_line("(b) first import (cache off)", "clmem", &res->s[M_IMPORT][V_CLMEM]);
    print_line("(f) first import", "raw", &res->s[M_IMPORT][V_RAW]);
    printf("  (b) - (f), paired by rep          clmem-raw %+9.2f us  [%+.2f .. %+.2f] 95%%, n=%d pairs%s%s%s\n",
           res->import_overhead.median, res->import_overhead.lo, res->import_overhead.hi, res->import_overhead.pairs,
           *paired_reads(&res->import_overhead) ? " (" : "", paired_reads(&res->import_overhead),
           *paired_reads(&res->import_overhead) ? ")" : "");
    fflush(stdout);

    watchdog("(c) cached import", sz);
    res->s[M_CACHED][V_CLMEM] = run_cached(b, s);
    print_line("(c) cached import", "clmem", &res->s[M_CACHED][V_CLMEM]);
    fflush(stdout);

    /* The host-wait handoff and the semaphore handoff share one live import per variant. */
    check_clmem(lib_import(b, b->bridge, s, &s->h), "clmem_bridge_import_vk");
    raw_import(b, &s->raw_buf.mem, &s->raw);
    raw_watch(&s->raw);
    {
        cl_mem lib_mem = clmem_handle_mem(s->h);
        check_cl(clSetKernelArg(b->kernel[V_CLMEM], 0, sizeof lib_mem, &lib_mem), "clSetKernelArg");
    }
    check_cl(clSetKernelArg(b->kernel[V_RAW], 0, sizeof(cl_mem), &s->raw.mem), "clSetKernelArg");

    watchdog("(d) handoff with host waits", sz);
    run_wait(b, s, &res->s[M_WAIT][V_CLMEM], &res->s[M_WAIT][V_RAW]);
    print_line("(d) handoff, host waits, per frame", "clmem", &res->s[M_WAIT][V_CLMEM]);
    print_line("(f) handoff, host waits, per frame", "raw", &res->s[M_WAIT][V_RAW]);
    fflush(stdout);

    if (b->sem_ok) {
        watchdog("(e) handoff with semaphores", sz);
        run_semaphore(b, s, &res->s[M_SEM][V_CLMEM], &res->s[M_SEM][V_RAW]);
        print_line("(e) handoff, semaphores, per frame", "clmem", &res->s[M_SEM][V_CLMEM]);
        print_line("(f) handoff, semaphores, per frame", "raw", &res->s[M_SEM][V_RAW]);
    }

    watchdog("teardown", sz);
    clmem_handle_unref(s->h);
    s->h = NULL;
    raw_teardown(b, &s->raw);
    size_teardown(b, s);
    alarm(0);
    record_size(b, res);
    printf("  (size done in %.1f s)\n", (now_us() - t_start) / 1e6);
    fflush(stdout);
}
