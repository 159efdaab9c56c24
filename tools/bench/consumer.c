/* SPDX-License-Identifier: MIT */
/* clmem-bench: a consumer library in the pipeline. Vulkan holds A and B
 * (written by Vulkan before the reps), CLBlast computes C = A B, Vulkan gets
 * C back; square float matrices of n x n with rows padded to a multiple of
 * 256 bytes. Four ways, interleaved rep by rep so that drift hits all
 * alike; each rep is timed from "A and B are Vulkan's" to "C is Vulkan's",
 * and staged's, zero-copy's and raw's start right after a small Vulkan
 * write, zero-copy's and raw's after an SGEMM too, both untimed, and
 * zero-copy and raw take turns to go first (vk_wrote_last says why):
 *   staged:    what users write today: Vulkan copies A and B to host-visible
 *              staging (vkCmdCopyBuffer, vkQueueWaitIdle), clEnqueueWriteBuffer
 *              into plain cl buffers, CLBlastSgemm, a blocking
 *              clEnqueueReadBuffer into staging, Vulkan copies it into C;
 *   zero-copy: through the bridge: A, B and C imported once (untimed) with
 *              their row pitch, then acquire_many, CLBlastSgemm on the
 *              handles (ld = row_pitch / 4), release_many after SGEMM's
 *              event, waited for;
 *   raw:       the zero-copy way written with the raw interop calls and no
 *              library call (what bridge/handoff.c calls, as
 *              tools/bench/raw.c mirrors the bridge): A, B and C in Vulkan
 *              memory of their own, imported once (untimed) as raw.c does,
 *              then one clEnqueueAcquireExternalMemObjectsKHR of the three
 *              (host-mapped path: an unmap each), CLBlastSgemm, one
 *              clEnqueueReleaseExternalMemObjectsKHR after SGEMM's event
 *              (a map each), waited for. zero-copy minus raw, over two
 *              reps, one with each first, is the library's share;
 *   floor:     CLBlastSgemm on plain OpenCL buffers, no Vulkan at all,
 *              waited for.
 * The target, set on the H200: zero-copy within 2 % of the floor, far ahead
 * of staged, at 4096^2 (targets.c judges it). Sizes 1024^2 and 4096^2 on a GPU; 256^2 and 512^2 on a
 * CPU device (128^2 and 256^2 with --quick). Checked once per size, after
 * the reps: C of each way, as Vulkan (or OpenCL, for the floor) sees it,
 * equals a CPU reference at sampled elements. Built with CLBlast only:
 * without it, the consumer-library measure prints why it did not run. */
#include "bench.h"

#if HAVE_CLBLAST
#include <clblast_c.h>
#include <math.h>

enum way { W_STAGED, W_ZERO, W_RAW, W_FLOOR, W_COUNT };
static const char *const way_label[W_COUNT] = {"staged", "zero-copy", "raw", "floor"};
static const char *const way_variant[W_COUNT] = {"baseline", "clmem", "raw", "floor"};
#define CONSUMER_SIZES 2

struct consumer_result {
    uint32_t n, pitch;
    struct summary s[W_COUNT];
    struct paired lib; /* zero-copy minus raw, paired by crossover (run_consumer) */
};
static struct consumer_result results[CONSUMER_SIZES];
static int nresults;
static const struct target *target;
static const struct target *lib_target[CONSUMER_SIZES];
static char not_run[256];

/* One size's buffers: [0] A, [1] B, [2] C. */
struct consumer_run {
    uint32_t n, pitch;
    uint64_t bytes;
    float *host[3];                 /* The data, padded rows */
    struct anchored_buf *zero[3];   /* zero-copy: Vulkan memory owned by anchors */
    clmem_handle *h[3];
    struct vk_buf vk[3];            /* staged: Vulkan's own buffers */
    struct vk_buf raw_buf[3];       /* raw: Vulkan memory of its own (one vkMapMemory per memory) */
    struct raw_import raw[3];
    struct vk_buf staging[3];
    void *staging_ptr[3];
    cl_mem plain[3];                /* staged and floor: plain cl buffers */
    VkCommandBuffer down_ab, up_c;  /* staged: A, B to staging; staging to C */
    struct vk_buf scratch;          /* what Vulkan's last write before a rep touches */
    VkCommandBuffer vk_last;        /* that write: a 4-byte fill of scratch */
};

static float value(int which, uint32_t i, uint32_t j)
{
    return which == 0 ? (float)((int)((i * 7u + j * 3u) % 13u) - 6) * 0.5f
                      : (float)((int)((i * 5u + j * 11u) % 11u) - 5) * 0.25f;
}

static cl_event sgemm(struct bench *b, cl_mem a, cl_mem bm, cl_mem c, uint32_t n, uint32_t ld)
{
    cl_event ev = NULL;
    cl_command_queue q = b->queue;
    CLBlastStatusCode st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, 1.0f,
                                        a, 0, ld, bm, 0, ld, 0.0f, c, 0, ld, &q, &ev);
    if (st != CLBlastSuccess)
        die("CLBlastSgemm %u^3 returned status %d", n, (int)st);
    return ev;
}

/* Where the consumer-library measure's Vulkan copies run: a transfer-only queue where the device
 * has one. The copy engines do not switch GPU context against OpenCL;
 * the graphics queue does, about 157 us each way on the H200
 * (docs/driver-notes.md), and a switch lands on the first OpenCL command
 * after Vulkan's work (zero-copy's, when it alone came after staged's in
 * the interleaving: 1024^2 read +107 % over the floor so). A careful
 * staged program copies there too. Every Vulkan command of the consumer-library measure
 * runs on this one queue family, so no buffer changes family. */
static VkQueue copy_queue(const struct bench *b)
{
    return b->vk.has_transfer_queue ? b->vk.transfer_queue : b->vk.queue;
}

static VkCommandPool copy_pool(const struct bench *b)
{
    return b->vk.has_transfer_queue ? b->vk.transfer_pool : b->vk.pool;
}

/* Vulkan copies host data into buf (through the run's staging), untimed. */
static void vk_upload(struct bench *b, struct consumer_run *r, int i, VkBuffer dst)
{
    memcpy(r->staging_ptr[i], r->host[i], r->bytes);
    VkCommandBuffer cb = record_copy_in(b, copy_pool(b), r->staging[i].buffer, dst, r->bytes);
    submit_and_wait_on(copy_queue(b), cb, "vkQueueSubmit((i) upload)");
    vkFreeCommandBuffers(b->vk.device, copy_pool(b), 1, &cb);
}

static void run_setup(struct bench *b, struct consumer_run *r, uint32_t n)
{
    cl_int err;

    memset(r, 0, sizeof *r);
    r->n = n;
    r->pitch = (n * 4u + 4u + 255u) / 256u * 256u;
    r->bytes = (uint64_t)n * r->pitch;
    for (int i = 0; i < 3; i++) {
        if (!(r->host[i] = calloc(1, r->bytes)))
            die("out of host memory for (i)");
        for (uint32_t y = 0; i < 2 && y < n; y++)
            for (uint32_t x = 0; x < n; x++)
                r->host[i][(size_t)y * (r->pitch / 4) + x] = value(i, y, x);
        staging_buf_create(b, &r->staging[i], r->bytes);
        check_vk(vkMapMemory(b->vk.device, r->staging[i].mem.memory, 0, VK_WHOLE_SIZE, 0, &r->staging_ptr[i]),
                 "vkMapMemory((i) staging)");
        shared_buf_create(b, &r->vk[i], r->bytes);
        if (!(r->zero[i] = calloc(1, sizeof *r->zero[i])))
            die("out of memory");
        r->zero[i]->bridge = b->bridge;
        shared_buf_create(b, &r->zero[i]->buf, r->bytes);
        r->plain[i] = clCreateBuffer(b->context, CL_MEM_READ_WRITE, r->bytes, NULL, &err);
        check_cl(err, "clCreateBuffer((i) plain)");
    }
    /* Vulkan writes A and B, into each way's Vulkan memory; C starts at 0. */
    for (int i = 0; i < 3; i++) {
        shared_buf_create(b, &r->raw_buf[i], r->bytes);
        vk_upload(b, r, i, r->vk[i].buffer);
        vk_upload(b, r, i, r->zero[i]->buf.buffer);
        vk_upload(b, r, i, r->raw_buf[i].buffer);
        raw_import(b, &r->raw_buf[i].mem, &r->raw[i]);
        raw_watch(&r->raw[i]);
    }
    for (int i = 0; i < 3; i++) {
        clmem_keepalive *anchor = clmem_keepalive_new(anchored_buf_release, r->zero[i]);
        if (!anchor)
            die("out of memory");
        check_clmem(clmem_bridge_import_vk_pitched(b->bridge, &r->zero[i]->buf.mem, 0, r->bytes, r->pitch,
                                                   sizeof(float), b->path, anchor, b->queue, CL_MEM_READ_WRITE,
                                                   &r->h[i]),
                    "clmem_bridge_import_vk_pitched((i))");
        clmem_keepalive_unref(anchor); /* The import's now */
    }
    {
        VkCommandBuffer cb = begin_commands_in(b, copy_pool(b));
        VkBufferCopy region = {0, 0, r->bytes};
        vkCmdCopyBuffer(cb, r->vk[0].buffer, r->staging[0].buffer, 1, &region);
        vkCmdCopyBuffer(cb, r->vk[1].buffer, r->staging[1].buffer, 1, &region);
        end_commands(cb);
        r->down_ab = cb;
        r->up_c = record_copy_in(b, copy_pool(b), r->staging[2].buffer, r->vk[2].buffer, r->bytes);
    }
    staging_buf_create(b, &r->scratch, 4096);
    r->vk_last = begin_commands_in(b, copy_pool(b));
    vkCmdFillBuffer(r->vk_last, r->scratch.buffer, 0, 4, 0xA5u);
    end_commands(r->vk_last);
}

/* Untimed, before each rep of staged, zero-copy and raw: Vulkan's last
 * work, on the queue of the consumer-library measure's copies, waited for, so that a rep starts
 * where a pipeline's step does, right after Vulkan produced A and B.
 *
 * Zero-copy's and raw's reps also start after an untimed SGEMM on the
 * plain buffers, and take turns to go first after staged's. On the H200
 * the SGEMMs that follow staged's copies ran slower, whichever way's they
 * were: with zero-copy always first, zero-copy minus raw read +34 us
 * (1024^2) and +203 us (4096^2); with raw always first, -19 and -180 us;
 * with the untimed SGEMM between, still +2 to +10 and +40 to +66 us. So
 * the library's share is paired by crossover (run_consumer). */
static void vk_wrote_last(struct bench *b, struct consumer_run *r)
{
    submit_and_wait_on(copy_queue(b), r->vk_last, "vkQueueSubmit((i) Vulkan's last write)");
}

static double rep_staged(struct bench *b, struct consumer_run *r)
{
    double t0 = now_us();
    cl_event ev;

    submit_and_wait_on(copy_queue(b), r->down_ab, "vkQueueSubmit((i) staged: A, B to staging)");
    check_cl(clEnqueueWriteBuffer(b->queue, r->plain[0], CL_FALSE, 0, r->bytes, r->staging_ptr[0], 0, NULL, NULL),
             "clEnqueueWriteBuffer((i) A)");
    check_cl(clEnqueueWriteBuffer(b->queue, r->plain[1], CL_FALSE, 0, r->bytes, r->staging_ptr[1], 0, NULL, NULL),
             "clEnqueueWriteBuffer((i) B)");
    ev = sgemm(b, r->plain[0], r->plain[1], r->plain[2], r->n, r->pitch / 4);
    check_cl(clEnqueueReadBuffer(b->queue, r->plain[2], CL_TRUE, 0, r->bytes, r->staging_ptr[2], 1, &ev, NULL),
             "clEnqueueReadBuffer((i) C)");
    submit_and_wait_on(copy_queue(b), r->up_c, "vkQueueSubmit((i) staged: staging to C)");
    clReleaseEvent(ev);
    return now_us() - t0;
}

static double rep_zero_copy(struct bench *b, struct consumer_run *r)
{
    double t0 = now_us();
    cl_event ev, rel;

    check_clmem(clmem_bridge_acquire_many(b->bridge, 3, r->h, b->queue, 0, NULL, NULL),
                "clmem_bridge_acquire_many((i))");
    ev = sgemm(b, clmem_handle_mem(r->h[0]), clmem_handle_mem(r->h[1]), clmem_handle_mem(r->h[2]), r->n,
               clmem_handle_row_pitch(r->h[0]) / sizeof(float));
    check_clmem(clmem_bridge_release_many(b->bridge, 3, r->h, b->queue, 1, &ev, &rel),
                "clmem_bridge_release_many((i))");
    check_cl(clWaitForEvents(1, &rel), "clWaitForEvents((i) release)");
    clReleaseEvent(ev);
    clReleaseEvent(rel);
    return now_us() - t0;
}

/* What acquire_many and release_many call for three imports, with no
 * library call: on the fd path one extension call for all three, on the
 * host-mapped path an unmap (acquire) and a map (release) each. */
static double rep_raw(struct bench *b, struct consumer_run *r)
{
    double t0 = now_us();
    cl_mem mem[3] = {r->raw[0].mem, r->raw[1].mem, r->raw[2].mem};
    cl_event ev, rel = NULL;
    cl_int err = CL_SUCCESS;

    if (b->path == CLMEM_BRIDGE_PATH_HOST_MAPPED) {
        for (int i = 0; i < 3 && err == CL_SUCCESS; i++) {
            err = clEnqueueUnmapMemObject(b->queue, mem[i], r->raw[i].cl_map, 0, NULL, NULL);
            r->raw[i].cl_map = NULL;
        }
    } else {
        err = b->ext.acquire_external(b->queue, 3, mem, 0, NULL, NULL);
    }
    check_cl(err, "raw acquire((i))");
    ev = sgemm(b, mem[0], mem[1], mem[2], r->n, r->pitch / 4);
    if (b->path == CLMEM_BRIDGE_PATH_HOST_MAPPED) {
        for (int i = 0; i < 3 && err == CL_SUCCESS; i++)
            r->raw[i].cl_map = clEnqueueMapBuffer(b->queue, mem[i], CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                                  r->raw[i].size, 1, &ev, i == 2 ? &rel : NULL, &err);
    } else {
        err = b->ext.release_external(b->queue, 3, mem, 1, &ev, &rel);
    }
    check_cl(err, "raw release((i))");
    check_cl(clWaitForEvents(1, &rel), "clWaitForEvents((i) raw release)");
    clReleaseEvent(ev);
    clReleaseEvent(rel);
    return now_us() - t0;
}

static double rep_floor(struct bench *b, struct consumer_run *r)
{
    double t0 = now_us();
    cl_event ev = sgemm(b, r->plain[0], r->plain[1], r->plain[2], r->n, r->pitch / 4);
    check_cl(clWaitForEvents(1, &ev), "clWaitForEvents((i) floor)");
    clReleaseEvent(ev);
    return now_us() - t0;
}

/* C of one way against the CPU at sampled elements. */
static void check_c(struct bench *b, struct consumer_run *r, const float *c, const char *way)
{
    const uint32_t n = r->n, ld = r->pitch / 4;
    for (unsigned s = 0; s < 256; s++) {
        uint32_t i = (uint32_t)((s * 7919ull) % n), j = (uint32_t)((s * 104729ull + s / 3) % n);
        double want = 0;
        for (uint32_t k = 0; k < n; k++)
            want += (double)r->host[0][(size_t)i * ld + k] * r->host[1][(size_t)k * ld + j];
        if (!(fabs(c[(size_t)i * ld + j] - want) <= 1e-3)) {
            fail(b, "(i) %u^2 %s: C[%u][%u] is %g, want %g", n, way, i, j, c[(size_t)i * ld + j], want);
            return;
        }
    }
}

static void run_check(struct bench *b, struct consumer_run *r)
{
    float *c = malloc(r->bytes);
    if (!c)
        die("out of host memory for (i)'s check");
    /* staged: C is in Vulkan's buffer; zero-copy and raw: in their
     * imported memory. */
    for (int w = W_STAGED; w <= W_RAW; w++) {
        VkBuffer from = w == W_STAGED ? r->vk[2].buffer : w == W_ZERO ? r->zero[2]->buf.buffer : r->raw_buf[2].buffer;
        VkCommandBuffer cb = record_copy_in(b, copy_pool(b), from, r->staging[2].buffer, r->bytes);
        submit_and_wait_on(copy_queue(b), cb, "vkQueueSubmit((i) check)");
        vkFreeCommandBuffers(b->vk.device, copy_pool(b), 1, &cb);
        memcpy(c, r->staging_ptr[2], r->bytes);
        check_c(b, r, c, way_label[w]);
    }
    check_cl(clEnqueueReadBuffer(b->queue, r->plain[2], CL_TRUE, 0, r->bytes, c, 0, NULL, NULL),
             "clEnqueueReadBuffer((i) check)");
    check_c(b, r, c, way_label[W_FLOOR]);
    free(c);
}

static void run_teardown(struct bench *b, struct consumer_run *r)
{
    double deadline;

    vkFreeCommandBuffers(b->vk.device, copy_pool(b), 1, &r->down_ab);
    vkFreeCommandBuffers(b->vk.device, copy_pool(b), 1, &r->up_c);
    vkFreeCommandBuffers(b->vk.device, copy_pool(b), 1, &r->vk_last);
    clmem_bridge_vk_buffer_destroy(b->bridge, r->scratch.buffer, &r->scratch.mem);
    for (int i = 0; i < 3; i++) {
        clmem_handle_unref(r->h[i]); /* The anchor frees the Vulkan memory once OpenCL let go */
        raw_teardown(b, &r->raw[i]);
        clmem_bridge_vk_buffer_destroy(b->bridge, r->raw_buf[i].buffer, &r->raw_buf[i].mem);
        clReleaseMemObject(r->plain[i]);
        vkUnmapMemory(b->vk.device, r->staging[i].mem.memory);
        clmem_bridge_vk_buffer_destroy(b->bridge, r->staging[i].buffer, &r->staging[i].mem);
        clmem_bridge_vk_buffer_destroy(b->bridge, r->vk[i].buffer, &r->vk[i].mem);
        free(r->host[i]);
    }
    /* Not clmem_bridge_finish: the bench's semaphores live on this bridge.
     * The anchors run once OpenCL let go (driver callbacks). */
    deadline = teardown_deadline();
    for (int i = 0; i < 3; i++)
        if (!anchored_buf_free(r->zero[i], deadline))
            fail(b, "(i): an imported matrix was not freed %d s after its last handle", DESTROY_WAIT_S);
}

/* The rows, consumer_sgemm_NxN (size_bytes: one matrix, padded rows
 * included; one product per rep: batch 1), and the target at 4096^2. */
static void record_consumer(struct bench *b)
{
    struct target_spec spec = {"i", "consumer_sgemm_4096x4096", 0, "zero-copy within 2 % of the floor at 4096^2", true};
    const struct consumer_result *at = NULL;
    char sizes[64] = "";

    for (int i = 0; i < nresults; i++) {
        char measure[64];
        uint64_t bytes = (uint64_t)results[i].n * results[i].pitch;
        snprintf(measure, sizeof measure, "consumer_sgemm_%ux%u", results[i].n, results[i].n);
        for (int w = 0; w < W_COUNT; w++)
            record_row("i", bytes, measure, way_variant[w], &results[i].s[w], 1, 0);
        snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%u^2", i ? " and " : "", results[i].n);
        if (results[i].n == 4096) {
            at = &results[i];
            spec.x = bytes;
        }
    }
    /* zero-copy minus raw, paired by crossover (consumer_overhead_NxN): its min
     * and max are the bounds of the median's 95 % interval, its reps the
     * pairs, as import_overhead's; the target at each size. */
    for (int i = 0; i < nresults; i++) {
        const struct paired *p = &results[i].lib;
        char measure[64];
        struct target_spec lib_spec = {"i", measure, (uint64_t)results[i].n * results[i].pitch,
                                       "zero-copy minus raw at most 2 us a rep", true};
        snprintf(measure, sizeof measure, "consumer_overhead_%ux%u", results[i].n, results[i].n);
        record_paired_row("i", lib_spec.x, measure, p, 1);
        if (p->have)
            lib_target[i] = record_target(b, &lib_spec, true, NULL, p->pairs, p->median, paired_verdict_within(p, 2.0));
    }
    if (at) {
        double ratio = at->s[W_ZERO].median / at->s[W_FLOOR].median;
        target = record_target(b, &spec, true, NULL, at->s[W_ZERO].reps, ratio,
                               ratio <= 1.02 ? VERDICT_MET : VERDICT_MISSED);
    } else {
        char why[128];
        snprintf(why, sizeof why, "the sizes here are %s; the target is at 4096^2", sizes);
        target = record_target(b, &spec, false, why, 0, 0, VERDICT_NOT_REACHED);
    }
}

void run_consumer(struct bench *b, bool quick, int reps)
{
    const uint32_t sizes[CONSUMER_SIZES] = {b->cpu_device ? (quick ? 128u : 256u) : 1024u,
                                            b->cpu_device ? (quick ? 256u : 512u) : 4096u};
    double *samples = malloc(sizeof(double) * (size_t)reps * (W_COUNT + 2));

    if (!samples)
        die("out of memory");
    for (int s = 0; s < CONSUMER_SIZES; s++) {
        struct consumer_run r;
        char label[32];
        snprintf(label, sizeof label, "(i) %u^2", sizes[s]);
        watchdog("(i) consumer", label);
        run_setup(b, &r, sizes[s]);
        /* Untimed: CLBlast compiles its kernels on a first call. */
        rep_floor(b, &r);
        rep_zero_copy(b, &r);
        rep_raw(b, &r);
        rep_staged(b, &r);
        for (int i = 0; i < reps; i++) {
            /* Zero-copy and raw take turns to go first (see vk_wrote_last). */
            const enum way first = i % 2 ? W_RAW : W_ZERO, second = i % 2 ? W_ZERO : W_RAW;
            vk_wrote_last(b, &r);
            samples[W_STAGED * reps + i] = rep_staged(b, &r);
            for (int k = 0; k < 2; k++) {
                const enum way w = k ? second : first;
                rep_floor(b, &r); /* untimed */
                vk_wrote_last(b, &r);
                samples[w * reps + i] = w == W_ZERO ? rep_zero_copy(b, &r) : rep_raw(b, &r);
            }
            samples[W_FLOOR * reps + i] = rep_floor(b, &r); /* no Vulkan at all */
        }
        results[nresults].n = r.n;
        results[nresults].pitch = r.pitch;
        /* The library's share, paired by crossover, before summarize()
         * sorts the samples: zero-copy minus raw over reps 2k and 2k + 1,
         * zero-copy first in one and raw first in the other, so that what
         * going first costs cancels out. */
        {
            const int pairs = reps / 2;
            double *zero2 = samples + W_COUNT * reps, *raw2 = zero2 + pairs, *scratch = raw2 + pairs;
            for (int k = 0; k < pairs; k++) {
                zero2[k] = (samples[W_ZERO * reps + 2 * k] + samples[W_ZERO * reps + 2 * k + 1]) / 2.0;
                raw2[k] = (samples[W_RAW * reps + 2 * k] + samples[W_RAW * reps + 2 * k + 1]) / 2.0;
            }
            results[nresults].lib = summarize_paired(zero2, raw2, scratch, pairs);
        }
        for (int w = 0; w < W_COUNT; w++)
            results[nresults].s[w] = summarize(samples + w * reps, reps, 1);
        nresults++;
        run_check(b, &r);
        run_teardown(b, &r);
    }
    alarm(0);
    free(samples);
    CLBlastClearCache();
    record_consumer(b);
}

void print_consumer(void)
{
    printf("\n(i) a consumer library in the pipeline: Vulkan holds A and B, CLBlast SGEMM, Vulkan gets C\n"
           "    (rows padded to 256 bytes; microseconds, median and min..max; raw = zero-copy made with the raw\n"
           "    interop calls and no library call; zero-raw = the library's share of a rep: zero-copy minus\n"
           "    raw over two reps, one with each going first, median and its 95%% interval)\n");
    if (*not_run) {
        printf("  skipped: %s\n", not_run);
        return;
    }
    printf("%-8s %26s %26s %26s %26s %11s %24s %12s  %s\n", "size", "staged", "zero-copy", "raw", "floor", "zero/floor",
           "zero-raw", "staged/zero", "zero-raw reads");
    for (int i = 0; i < nresults; i++) {
        const struct consumer_result *c = &results[i];
        char name[32];
        snprintf(name, sizeof name, "%u^2", c->n);
        printf("%-8s", name);
        for (int w = 0; w < W_COUNT; w++) {
            char cell[64];
            snprintf(cell, sizeof cell, "%.1f (%.1f..%.1f)", c->s[w].median, c->s[w].min, c->s[w].max);
            printf(" %26s", cell);
        }
        {
            char lib[64];
            snprintf(lib, sizeof lib, "%.1f (%.1f..%.1f)", c->lib.median, c->lib.lo, c->lib.hi);
            printf(" %+10.1f%% %24s %11.2fx  %s\n", (c->s[W_ZERO].median / c->s[W_FLOOR].median - 1) * 100, lib,
                   c->s[W_STAGED].median / c->s[W_ZERO].median, paired_reads(&c->lib));
        }
    }
    printf("  floor: the SGEMM on plain OpenCL buffers, no Vulkan; zero/floor: zero-copy over the floor, in %%;\n"
           "  staged/zero: staged over zero-copy (> 1: sharing wins); zero-raw reads: can't tell when its interval\n"
           "  holds 0, few samples under %d pairs\n",
           MIN_VERDICT_SAMPLES);
    if (target)
        print_target_line(target);
    for (int i = 0; i < nresults; i++)
        if (lib_target[i])
            print_target_line(lib_target[i]);
}
#else
void run_consumer(struct bench *b, bool quick, int reps)
{
    (void)b;
    (void)quick;
    (void)reps;
    record_skip("i", "consumer pipeline", "%s", CLBLAST_FOUND);
}

void print_consumer(void)
{
    printf("\n(i) a consumer library in the pipeline: skipped: %s\n", CLBLAST_FOUND);
}
#endif
