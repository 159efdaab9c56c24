/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes (its report's (x)): the top. The
 * frames measured, the run of every measure on each, the rows, the targets
 * and the report; the measures themselves are in xproc-*.c, which
 * xproc-common.h lists. Frames go through libclmem-ipc, against the same
 * frames in one process and against a copy through /dev/shm.
 *
 * The producer is this process (Vulkan, the bench's device); the consumer
 * is clmem-bench run again (posix_spawn of /proc/self/exe with the hidden
 * option XPROC_CHILD_OPTION and one end of a socketpair), so that it
 * starts with no driver loaded and pairs its own devices, as a separate
 * program would. Per frame Vulkan writes word 0 of plane 0 (vkCmdFillBuffer
 * of 4 bytes, the same constant per frame slot) and the consumer runs the
 * bench's one-work-item kernel on it (p[0] += 1, p[1] += the value seen), so
 * that afterwards p[1] = the slot's frames x its value proves that every
 * kernel ran after its own frame's write, whatever the process.
 *
 * For each frame (1920x1080 RGBA8, 1920x1080 NV12 with its two planes, a
 * 256 MiB buffer; --quick: 1 MiB), per frame, in microseconds, under the
 * labels the report prints:
 *  - "in-process (e)": the bridge's one-frame handoff ordered by the bench's
 *    two semaphores (the mechanism and mode of the bench's own handoff
 *    measure), blocks of K frames / K;
 *  - xproc D=1: the round trip through libclmem-ipc with one frame, from the
 *    fill's submission to the frame back in clmem_ipc_producer_next();
 *  - raw D=1: the same protocol made with the raw calls (xproc-raw.c), frame
 *    by frame in turn with xproc D=1, and the library's share: xproc D=1
 *    minus raw D=1, paired, with its 95 % interval;
 *  - in-process ring D=4: clmem_bridge_ring of 4 frames, batch 1, in the
 *    handoff's semaphore mode, K frames / K;
 *  - xproc D=4: four frames in flight through libclmem-ipc, each handed
 *    over (READY) and given back (FREE) on its own, K frames / K;
 *  - xproc batch D=4: the same four frames in batches: the producer hands
 *    every frame it holds over at once (clmem_ipc_producer_next_many(),
 *    one fence, clmem_ipc_producer_ready_many()), the consumer takes and
 *    releases what came as one (clmem_ipc_consumer_next_many()), K frames
 *    / K;
 *  - /dev/shm D=1 and D=4: what a program does today without sharing: the
 *    producer copies the frame out of Vulkan (vkCmdCopyBuffer to a
 *    persistently mapped staging buffer, a fence) and into a /dev/shm file
 *    (memcpy; the file's fd went to the consumer once), the consumer writes
 *    it into its cl_mem (clEnqueueWriteBuffer) and runs the kernel; READY
 *    and FREE messages on the socket (xproc-shm.c).
 * Beside each, the CPU time a frame of both processes (their CPU clocks,
 * every thread, over the timed frames): what the copy costs in cores.
 * The targets printed after the table are the cross-process ones, each
 * comparing two figures of the same run: the library's share at D=1 at
 * most 10 us (the whole interval), D=1 at most the in-process handoff + 40
 * us, D=4 in batches at most 1.5x the in-process ring, and /dev/shm D=1 at least 20x xproc
 * D=1 at 1920x1080. */
#include "bench.h"

#include <ctype.h>
#include <math.h>

#if HAVE_IPC
#include "xproc-common.h"

static struct xresult xresults[3];
static int n_xresults;
static char xproc_note[NOTE_MAX];
static bool xproc_ran;
/* The rows' names (xproc_<frame>_<name>) and variants, per measure. */
static const char *const xmeasure_name[XM_COUNT] = {"inproc_e", "ipc_d1",       "raw_d1", "inproc_ring_d4",
                                                    "ipc_d4",   "ipc_batch_d4", "shm_d1", "shm_d4"};
static const char *const xmeasure_variant[XM_COUNT] = {"clmem", "clmem", "raw",      "clmem",
                                                       "clmem", "clmem", "baseline", "baseline"};
/* The CSV's batch and ring columns: frames a handover, frames in flight. */
static const int xmeasure_batch[XM_COUNT] = {1, 1, 1, 1, 1, 4, 1, 1};
static const int xmeasure_ring[XM_COUNT] = {1, 1, 1, 4, 4, 4, 1, 4};
#define XTARGETS (3 * 4)
static const struct target *xtargets[XTARGETS];
static int n_xtargets;

/* ------------------------------------------------------------ the run */

static void xkinds(bool quick, struct xkind *k, int *n)
{
    const uint32_t w = 1920, h = 1080;
    k[0] = (struct xkind){"1920x1080 RGBA8", (uint64_t)w * h * 4, VK_FORMAT_R8G8B8A8_UNORM, w, h, 1,
                          {0, 0}, {(uint64_t)w * h * 4, 0}, {w * 4, 0}};
    k[1] = (struct xkind){"1920x1080 NV12", (uint64_t)w * h * 3 / 2, VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, w, h, 2,
                          {0, (uint64_t)w * h}, {(uint64_t)w * h, (uint64_t)w * h / 2}, {w, w}};
    uint64_t big = quick ? 1 * MIB : 256 * MIB;
    k[2] = (struct xkind){quick ? "1 MiB buffer" : "256 MiB buffer", big, VK_FORMAT_UNDEFINED, 0, 0, 1,
                          {0, 0}, {big, 0}, {0, 0}};
    *n = 3;
}

/* "1920x1080 RGBA8" -> "1920x1080_rgba8": the frame's part of a row name. */
static void frame_slug(const char *label, char *out, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; label[i] && j + 1 < len; i++)
        out[j++] = isalnum((unsigned char)label[i]) ? (char)tolower((unsigned char)label[i]) : '_';
    out[j] = 0;
}

/* The rows, xproc_<frame>_<measure> (size_bytes: the frame's bytes; batch
 * 1; ring the frames in flight), and the targets, set on the H200: D=1 at
 * most the in-process handoff + 40 us and D=4 in batches at most 1.5x the in-process ring's
 * time a frame, for each frame; /dev/shm D=1 at least 20x D=1's time at
 * 1920x1080. */
static void record_xproc(struct bench *b, const struct xkind *kinds)
{
    static char share_measure[3][96], share_text[3][128];
    static const char *const what[3] = {"D=1 at most in-process (e) + 40 us",
                                        "D=4 in batches at most 1.5x the in-process ring's time a frame",
                                        "/dev/shm D=1 at least 20x D=1's time"};
    static const enum xmeasure judged[3] = {XM_IPC_D1, XM_IPC_BATCH_D4, XM_SHM_D1},
                               against[3] = {XM_INPROC_HANDOFF, XM_INPROC_RING_D4, XM_IPC_D1};
    static char text[3][3][128], measure[3][3][96];

    for (int i = 0; i < n_xresults; i++) {
        const struct xresult *x = &xresults[i];
        char slug[48];
        frame_slug(x->label, slug, sizeof slug);
        for (int m = 0; m < XM_COUNT; m++) {
            char name[96];
            if (!x->ran[m])
                continue;
            snprintf(name, sizeof name, "xproc_%s_%s", slug, xmeasure_name[m]);
            record_row_cpu("x", kinds[i].bytes, name, xmeasure_variant[m], &x->s[m], xmeasure_batch[m],
                           xmeasure_ring[m], x->cpu[m]);
        }
        /* xproc D=1 minus raw D=1, paired frame by frame: min and max are
         * the bounds of the median's 95 % interval, reps the pairs. */
        snprintf(share_measure[i], sizeof share_measure[i], "xproc_%s_ipc_d1_overhead", slug);
        snprintf(share_text[i], sizeof share_text[i],
                 "the library's share at D=1 at most 10 us a frame, the whole "
                 "interval (%s)",
                 x->label);
        struct target_spec share = {"x", share_measure[i], kinds[i].bytes, share_text[i], true};
        if (x->ran[XM_RAW_D1] && x->lib1.have) {
            record_paired_row("x", kinds[i].bytes, share_measure[i], &x->lib1, 1);
            xtargets[n_xtargets++] = record_target(b, &share, true, NULL, x->lib1.pairs, x->lib1.median,
                                                   paired_verdict_within(&x->lib1, 10.0));
        } else {
            xtargets[n_xtargets++] =
                record_target(b, &share, false, "raw D=1 did not run here", 0, 0, VERDICT_NOT_REACHED);
        }
        for (int t = 0; t < 3 && n_xtargets < XTARGETS; t++) {
            const struct summary *a = &x->s[judged[t]], *ref = &x->s[against[t]];
            struct target_spec spec = {"x", measure[i][t], kinds[i].bytes, text[i][t], true};
            double value;
            bool met;
            if (t == 2 && !strstr(x->label, "1920x1080"))
                continue;
            snprintf(measure[i][t], sizeof measure[i][t], "xproc_%s_%s", slug, xmeasure_name[judged[t]]);
            snprintf(text[i][t], sizeof text[i][t], "%s (%s)", what[t], x->label);
            if (!x->ran[judged[t]] || !x->ran[against[t]]) {
                xtargets[n_xtargets++] = record_target(b, &spec, false, "not measured here", 0, 0, VERDICT_NOT_REACHED);
                continue;
            }
            value = t == 0 ? a->median - ref->median : a->median / ref->median;
            met = t == 0 ? value <= 40.0 : t == 1 ? value <= 1.5 : value >= 20.0;
            xtargets[n_xtargets++] = record_target(b, &spec, true, NULL, a->reps < ref->reps ? a->reps : ref->reps,
                                                   value, met ? VERDICT_MET : VERDICT_MISSED);
        }
    }
}

void run_xproc(struct bench *b, bool quick, int frames, int blocks)
{
    struct xkind kinds[3];
    int nk;

    if (!b->vk.has_memory_fd) {
        snprintf(xproc_note, sizeof xproc_note, "not run: the Vulkan device has no VK_KHR_external_memory_fd");
        record_skip("x", "frames across processes", "the Vulkan device has no VK_KHR_external_memory_fd");
        return;
    }
    xproc_ran = true;
    xkinds(quick, kinds, &nk);
    for (int i = 0; i < nk; i++) {
        struct xrun r = {.b = b, .k = &kinds[i], .frames = frames, .blocks = blocks, .warmup = quick ? 2 : WARMUP_FRAMES};
        struct xresult *res = &xresults[n_xresults++];
        char sz[32];
        /* the frames, the /dev/shm files, their staging buffers and the
         * consumer's cl_mems: about four of each */
        if (b->host_mem && 16 * kinds[i].bytes > b->host_mem / 4 * 3) {
            snprintf(res->why[0], sizeof res->why[0], "needs more than 75%% of the host's memory");
            res->label = kinds[i].label;
            continue;
        }
        res->label = kinds[i].label;
        r.samples = calloc((size_t)(frames > blocks ? frames : blocks) + 16, sizeof *r.samples);
        if (!r.samples)
            die("out of memory");
        size_text(kinds[i].bytes, sz, sizeof sz);
        printf("\n(x) %s (%s): ", kinds[i].label, sz);
        fflush(stdout);
        xproc_frames_setup(&r);
        watchdog("(x) in-process", kinds[i].label);
        xproc_run_inproc(&r, res);
        printf("in-process ");
        fflush(stdout);
        watchdog("(x) xproc D=1", kinds[i].label);
        xproc_run_ipc(&r, res, 1, XM_IPC_D1);
        watchdog("(x) xproc D=4", kinds[i].label);
        xproc_run_ipc(&r, res, XPROC_SLOTS, XM_IPC_D4);
        watchdog("(x) xproc batch D=4", kinds[i].label);
        xproc_run_ipc(&r, res, XPROC_SLOTS, XM_IPC_BATCH_D4);
        printf("xproc ");
        fflush(stdout);
        /* The copy moves the whole frame three times: fewer frames for the
         * big ones, at least 5. */
        int shm_frames = (int)((uint64_t)frames * 8 * MIB / kinds[i].bytes);
        shm_frames = shm_frames < 5 ? 5 : shm_frames > frames ? frames : shm_frames;
        watchdog("(x) /dev/shm", kinds[i].label);
        xproc_run_shm(&r, res, 1, XM_SHM_D1, shm_frames);
        xproc_run_shm(&r, res, XPROC_SLOTS, XM_SHM_D4, shm_frames);
        alarm(0);
        printf("/dev/shm done\n");
        xproc_frames_teardown(&r);
        free(r.samples);
    }
    record_xproc(b, kinds);
}

/* "12.3 us [-1.0 .. +25.6]", and what can be said of it: the library's
 * share is "can't tell" from zero when its interval holds zero, and a
 * figure behind fewer than MIN_VERDICT_SAMPLES samples says so. */
static const char *share_words(const struct paired *p)
{
    if (p->pairs < MIN_VERDICT_SAMPLES)
        return "few samples";
    if (p->lo <= 0 && p->hi >= 0)
        return "can't tell";
    return p->lo > 0 ? "the library costs more" : "the library costs less";
}

void print_xproc(const struct bench *b)
{
    const char *peer_path = NULL;
    char path_note[NOTE_MAX] = "";

    if (!xproc_ran) {
        if (xproc_note[0])
            printf("\n(x) across processes: %s\n", xproc_note);
        return;
    }
    for (int i = 0; i < n_xresults && !peer_path; i++)
        peer_path = xresults[i].peer_path;
    if (peer_path)
        snprintf(path_note, sizeof path_note, "; the consumer process imports through the %s path", peer_path);
    printf("\n(x) across processes (libclmem-ipc; this process produces with Vulkan, a second clmem-bench process\n"
           "    consumes with OpenCL%s). Per frame, microseconds:\n",
           path_note);
    printf("%-16s %-17s %10s %21s %5s %12s\n", "frame", "measure", "median", "[min .. max]", "n", "cpu us/frame");
    for (int i = 0; i < n_xresults; i++) {
        const struct xresult *x = &xresults[i];
        for (int m = 0; m < XM_COUNT; m++) {
            char range[48], cpu[24];
            if (!x->ran[m]) {
                if (x->why[m][0])
                    printf("%-16s %-17s not measured: %s\n", x->label, xmeasure_label[m], x->why[m]);
                continue;
            }
            snprintf(range, sizeof range, "[%.0f .. %.0f]", x->s[m].min, x->s[m].max);
            if (isnan(x->cpu[m]))
                snprintf(cpu, sizeof cpu, "-");
            else
                snprintf(cpu, sizeof cpu, "%.1f", x->cpu[m]);
            printf("%-16s %-17s %10.1f %21s %5d %12s%s\n", x->label, xmeasure_label[m], x->s[m].median, range,
                   x->s[m].reps, cpu, x->s[m].reps < MIN_VERDICT_SAMPLES ? "  few samples" : "");
        }
    }
    printf("  median, [min .. max]: the time a frame over the samples (D=1 and /dev/shm D=1: one frame a sample;\n"
           "    the rest: blocks of K frames, the block's time / K); n: the samples;\n"
           "  cpu us/frame: CPU time of both processes (all their threads) over the timed frames / the frames:\n"
           "    above the median, more than one core is busy; zero-copy's against the copy's is the copy's cost in "
           "cores;\n"
           "  in-process (e): one process, the bridge's handoff with two semaphores; xproc D=1: libclmem-ipc, one\n"
           "    frame at a time; raw D=1: the same protocol with the raw calls, in turn with xproc D=1; in-proc ring\n"
           "    D=4: clmem_bridge_ring of 4 frames; xproc D=4: libclmem-ipc, 4 frames in flight, each handed over and\n"
           "    given back on its own; xproc batch D=4: the same 4, every frame free handed over in one batch (one\n"
           "    fence wait, one READY) and taken and given back as one (one acquire, one release, one FREE);\n"
           "    /dev/shm: a copy out of Vulkan into shared memory and into OpenCL, as programs do without sharing\n");
    if (b->cpu_device)
        printf(
            "  On a CPU OpenCL device one process can come out slower than two: Vulkan's and OpenCL's work are\n"
            "    ordinary threads of this host, stalled whenever other work takes its cores; in-process (e) and the\n"
            "    ring are timed in blocks of K frames, so a block's time / K takes in every stall, while D=1 is\n"
            "    timed frame by frame and its median leaves the stalled frames out. A cpu us/frame far below the\n"
            "    median is such a block: waiting, not working. Compare the minima: undisturbed, one process is "
            "faster.\n");
    printf("\nThe library's share across processes: xproc D=1 minus raw D=1, frame by frame in turn (each going\n"
           "first every other frame), median and its 95%% interval, microseconds:\n");
    printf("%-16s %6s %10s %10s %22s  %s\n", "frame", "pairs", "raw D=1", "lib-raw", "95% interval", "reads");
    for (int i = 0; i < n_xresults; i++) {
        const struct paired *p = &xresults[i].lib1;
        if (!xresults[i].ran[XM_RAW_D1] || !p->have)
            continue;
        printf("%-16s %6d %10.1f %+10.2f   [%+8.2f .. %+8.2f]  %s\n", xresults[i].label, p->pairs, p->raw_median,
               p->median, p->lo, p->hi, share_words(p));
    }
    printf("  pairs: frames of each; raw D=1: its median; lib-raw: the median of the differences; 95%% interval:\n"
           "    of that median (distribution-free); reads: can't tell when the interval holds 0, few samples\n"
           "    under %d pairs\n",
           MIN_VERDICT_SAMPLES);
    for (int i = 0; i < n_xresults; i++)
        if (xresults[i].ran[XM_IPC_D4])
            printf("  %-16s %.0f frames/s across processes with D=4\n", xresults[i].label,
                   1e6 / xresults[i].s[XM_IPC_D4].median);
    for (int i = 0; i < n_xresults; i++)
        if (xresults[i].ran[XM_IPC_BATCH_D4])
            printf("  %-16s %.0f frames/s across processes with D=4 in batches\n", xresults[i].label,
                   1e6 / xresults[i].s[XM_IPC_BATCH_D4].median);
    for (int t = 0; t < n_xtargets; t++)
        print_target_line(xtargets[t]);
}
#else
void run_xproc(struct bench *b, bool quick, int frames, int blocks)
{
    (void)b;
    (void)quick;
    (void)frames;
    (void)blocks;
}

void print_xproc(const struct bench *b)
{
    (void)b;
    printf("\n(x) across processes: skipped: libclmem-ipc is not built (configure --enable-ipc)\n");
}

int xproc_child_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "clmem-bench: %s needs libclmem-ipc, which this build lacks\n", XPROC_CHILD_OPTION);
    return 2;
}
#endif
