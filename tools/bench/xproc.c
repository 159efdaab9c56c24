/* SPDX-License-Identifier: MIT */
/* clmem-bench (x): frames across processes through libclmem-ipc, against
 * the same frames in one process and against a copy through /dev/shm.
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
 * 256 MiB buffer; --quick: 1 MiB), per frame, in microseconds:
 *  - the in-process semaphore handoff: the bridge's one-frame handoff ordered by the bench's
 *    two semaphores (the semaphore handoff's mechanism and mode), blocks of K frames / K;
 *  - xproc D=1: the round trip through libclmem-ipc with one frame, from the
 *    fill's submission to the frame back in clmem_ipc_producer_next();
 *  - in-process ring D=4: clmem_bridge_ring of 4 frames, batch 1, in the semaphore handoff's
 *    semaphore mode, K frames / K;
 *  - xproc D=4: four frames in flight through libclmem-ipc, K frames / K;
 *  - /dev/shm D=1 and D=4: what a program does today without sharing: the
 *    producer copies the frame out of Vulkan (vkCmdCopyBuffer to a
 *    persistently mapped staging buffer, a fence) and into a /dev/shm file
 *    (memcpy; the file's fd went to the consumer once), the consumer writes
 *    it into its cl_mem (clEnqueueWriteBuffer) and runs the kernel; READY
 *    and FREE messages as above.
 * The targets printed after the table are the cross-process ones: D=1 at
 * most the in-process semaphore handoff + 40 us, D=4 at most 1.5x the
 * in-process ring, and
 * /dev/shm D=1 at least 20x xproc D=1 at 1920x1080. */
#include "bench.h"

#include <ctype.h>

#if HAVE_IPC
#include "xproc.h"

const char *const xmeasure_label[X_COUNT] = {"in-process (e)", "xproc D=1", "in-proc ring D=4",
                                             "xproc D=4", "/dev/shm D=1", "/dev/shm D=4"};
char xproc_path_note[NOTE_MAX];
static struct xresult xresults[3];
static int n_xresults;
static char xproc_note[NOTE_MAX];
static bool xproc_ran;
/* The rows' names (xproc_<frame>_<name>) and variants, per measure. */
static const char *const xmeasure_name[X_COUNT] = {"inproc_e", "ipc_d1", "inproc_ring_d4",
                                                   "ipc_d4",   "shm_d1", "shm_d4"};
static const char *const xmeasure_variant[X_COUNT] = {"clmem", "clmem", "clmem", "clmem", "baseline", "baseline"};
static const int xmeasure_ring[X_COUNT] = {1, 1, 4, 4, 1, 4};
#define XTARGETS (3 * 3)
static const struct target *xtargets[XTARGETS];
static int n_xtargets;

/* ------------------------------------------------------------ the frames */

static void frames_setup(struct xrun *r)
{
    struct bench *b = r->b;
    bool fd_path = b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD;
    VkMemoryPropertyFlags props = fd_path ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
                                          : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkPhysicalDeviceMemoryProperties mp;
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};

    vkGetPhysicalDeviceMemoryProperties(b->vk.physical_device, &mp);
    for (int s = 0; s < XPROC_SLOTS; s++) {
        struct xframe *f = &r->f[s];
        f->owner = calloc(1, sizeof *f->owner);
        if (!f->owner)
            die("out of memory");
        f->owner->bridge = b->bridge;
        atomic_init(&f->owner->freed, 0);
        check_clmem(clmem_bridge_vk_buffer_create(b->bridge, r->k->bytes,
                                                  VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                                      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                                  props, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
                                                  &f->owner->buf.buffer, &f->owner->buf.mem),
                    "clmem_bridge_vk_buffer_create(an exportable frame)");
        f->buf = f->owner->buf;
        f->anchor = clmem_keepalive_new(anchored_buf_release, f->owner);
        if (!f->anchor)
            die("clmem_keepalive_new failed");
        f->memory_type = CLMEM_IPC_MEMORY_TYPE_BY_FLAGS;
        f->fill = record_fill_word0(b, f->buf.buffer, XPROC_VALUE(s));
        f->zero = begin_commands(b);
        vkCmdFillBuffer(f->zero, f->buf.buffer, 0, 8, 0);
        end_commands(f->zero);
        check_vk(vkCreateFence(b->vk.device, &fi, NULL, &f->fence), "vkCreateFence");
    }
    check_clmem(clmem_bridge_vk_buffer_create(b->bridge, 8 * XPROC_SLOTS, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                              0, &r->readback.buffer, &r->readback.mem),
                "clmem_bridge_vk_buffer_create(readback)");
    check_vk(vkMapMemory(b->vk.device, r->readback.mem.memory, 0, VK_WHOLE_SIZE, 0, (void **)&r->readback_ptr),
             "vkMapMemory(readback)");
}

static void frames_teardown(struct xrun *r)
{
    struct bench *b = r->b;
    check_vk(vkDeviceWaitIdle(b->vk.device), "vkDeviceWaitIdle");
    check_cl(clFinish(b->queue), "clFinish(before the teardowns)");
    for (int s = 0; s < XPROC_SLOTS; s++) {
        VkCommandBuffer cbs[2] = {r->f[s].fill, r->f[s].zero};
        vkFreeCommandBuffers(b->vk.device, b->vk.pool, 2, cbs);
        vkDestroyFence(b->vk.device, r->f[s].fence, NULL);
        /* The memory goes once the bridge's imports of it let go (their
         * teardowns complete through the driver's callbacks once the
         * markers ran: clFinish above), as size.c waits for its buffer;
         * the consumer processes are gone, their imports with them. */
        clmem_keepalive_unref(r->f[s].anchor);
        if (!anchored_buf_free(r->f[s].owner, teardown_deadline())) /* left to the anchor, which may still run */
            fail(b, "(x): a frame's anchor was not released %d s after its last import went", DESTROY_WAIT_S);
    }
    vkUnmapMemory(b->vk.device, r->readback.mem.memory);
    clmem_bridge_vk_buffer_destroy(b->bridge, r->readback.buffer, &r->readback.mem);
}

/* Words 0 and 1 of every slot set to 0, and nothing counted. */
void xproc_frames_zero(struct xrun *r)
{
    for (int s = 0; s < XPROC_SLOTS; s++) {
        submit_and_wait(r->b, r->f[s].zero, "vkQueueSubmit(zero a frame)");
        r->f[s].uses = 0;
    }
}

/* After a measure: every slot's p[1] is its kernels' count x its value:
 * each kernel saw its own frame's write. */
bool xproc_frames_check(struct xrun *r, const char *what, char *why, size_t len)
{
    VkCommandBuffer cb = begin_commands(r->b);
    for (int s = 0; s < XPROC_SLOTS; s++) {
        VkBufferCopy region = {0, (VkDeviceSize)s * 8, 8};
        vkCmdCopyBuffer(cb, r->f[s].buf.buffer, r->readback.buffer, 1, &region);
    }
    end_commands(cb);
    submit_and_wait(r->b, cb, "vkQueueSubmit(read the frames back)");
    vkFreeCommandBuffers(r->b->vk.device, r->b->vk.pool, 1, &cb);
    for (int s = 0; s < XPROC_SLOTS; s++) {
        uint32_t w0 = r->readback_ptr[2 * s], w1 = r->readback_ptr[2 * s + 1];
        uint32_t want1 = r->f[s].uses * XPROC_VALUE(s), want0 = r->f[s].uses ? XPROC_VALUE(s) + 1 : 0;
        if (w0 != want0 || w1 != want1) {
            snprintf(why, len, "%s, slot %d after %u frames: words 0x%x 0x%x, want 0x%x 0x%x", what, s, r->f[s].uses,
                     w0, w1, want0, want1);
            return false;
        }
    }
    return true;
}

void xproc_fence_reset(struct bench *b, VkFence f)
{
    check_vk(vkResetFences(b->vk.device, 1, &f), "vkResetFences");
}

void xproc_submit_fill(struct xrun *r, int s)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                       .pCommandBuffers = &r->f[s].fill};
    xproc_fence_reset(r->b, r->f[s].fence);
    check_vk(vkQueueSubmit(r->b->vk.queue, 1, &si, r->f[s].fence), "vkQueueSubmit(fill)");
}

/* ------------------------------------------------------------ the measure */

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
 * most the in-process semaphore handoff + 40 us and D=4 at most 1.5x the
 * in-process ring's
 * time a frame, for each frame; /dev/shm D=1 at least 20x D=1's time at
 * 1920x1080. */
static void record_xproc(struct bench *b, const struct xkind *kinds)
{
    static const char *const what[3] = {"D=1 at most in-process (e) + 40 us",
                                        "D=4 at most 1.5x the in-process ring's time a frame",
                                        "/dev/shm D=1 at least 20x D=1's time"};
    static const enum xmeasure judged[3] = {X_D1, X_D4, X_SHM1}, against[3] = {X_INPROC_E, X_RING4, X_D1};
    static char text[3][3][128], measure[3][3][96];

    for (int i = 0; i < n_xresults; i++) {
        const struct xresult *x = &xresults[i];
        char slug[48];
        frame_slug(x->label, slug, sizeof slug);
        for (int m = 0; m < X_COUNT; m++) {
            char name[96];
            if (!x->ran[m])
                continue;
            snprintf(name, sizeof name, "xproc_%s_%s", slug, xmeasure_name[m]);
            record_row("x", kinds[i].bytes, name, xmeasure_variant[m], &x->s[m], 1, xmeasure_ring[m]);
        }
        for (int t = 0; t < 3 && n_xtargets < XTARGETS; t++) {
            const struct summary *a = &x->s[judged[t]], *ref = &x->s[against[t]];
            struct target_spec spec = {"x", measure[i][t], kinds[i].bytes, text[i][t]};
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
        /* The frames, the /dev/shm files, their staging buffers and the
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
        frames_setup(&r);
        watchdog("(x) in-process", kinds[i].label);
        xproc_run_inproc(&r, res);
        printf("in-process ");
        fflush(stdout);
        watchdog("(x) xproc D=1", kinds[i].label);
        xproc_run_ipc(&r, res, 1, X_D1);
        watchdog("(x) xproc D=4", kinds[i].label);
        xproc_run_ipc(&r, res, XPROC_SLOTS, X_D4);
        printf("xproc ");
        fflush(stdout);
        /* The copy moves the whole frame three times: fewer frames for the
         * big ones, at least 5. */
        int shm_frames = (int)((uint64_t)frames * 8 * MIB / kinds[i].bytes);
        shm_frames = shm_frames < 5 ? 5 : shm_frames > frames ? frames : shm_frames;
        watchdog("(x) /dev/shm", kinds[i].label);
        xproc_run_shm(&r, res, 1, X_SHM1, shm_frames);
        xproc_run_shm(&r, res, XPROC_SLOTS, X_SHM4, shm_frames);
        alarm(0);
        printf("/dev/shm done\n");
        frames_teardown(&r);
        free(r.samples);
    }
    record_xproc(b, kinds);
}

void print_xproc(void)
{
    if (!xproc_ran) {
        if (xproc_note[0])
            printf("\n(x) across processes: %s\n", xproc_note);
        return;
    }
    printf("\n(x) across processes (libclmem-ipc; this process produces with Vulkan, a second clmem-bench process\n"
           "    consumes with OpenCL%s%s). Per frame, median [min .. max], us:\n", xproc_path_note[0] ? "; " : "",
           xproc_path_note);
    printf("%-16s", "frame");
    for (int m = 0; m < X_COUNT; m++)
        printf(" %24s", xmeasure_label[m]);
    printf("\n");
    for (int i = 0; i < n_xresults; i++) {
        const struct xresult *x = &xresults[i];
        printf("%-16s", x->label);
        for (int m = 0; m < X_COUNT; m++) {
            char cell[64];
            if (x->ran[m])
                snprintf(cell, sizeof cell, "%.1f [%.0f..%.0f]", x->s[m].median, x->s[m].min, x->s[m].max);
            else
                snprintf(cell, sizeof cell, "-");
            printf(" %24s", cell);
        }
        printf("\n");
    }
    for (int i = 0; i < n_xresults; i++)
        for (int m = 0; m < X_COUNT; m++)
            if (!xresults[i].ran[m] && xresults[i].why[m][0])
                printf("  %s %s: not measured: %s\n", xresults[i].label, xmeasure_label[m], xresults[i].why[m]);
    for (int i = 0; i < n_xresults; i++)
        if (xresults[i].ran[X_D4])
            printf("  %-16s %.0f frames/s across processes with D=4\n", xresults[i].label,
                   1e6 / xresults[i].s[X_D4].median);
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

void print_xproc(void)
{
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
