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
 *  - in-process (e): the bridge's one-frame handoff ordered by the bench's
 *    two semaphores ((e)'s mechanism and mode), blocks of K frames / K;
 *  - xproc D=1: the round trip through libclmem-ipc with one frame, from the
 *    fill's submission to the frame back in clmem_ipc_producer_next();
 *  - in-process ring D=4: clmem_bridge_ring of 4 frames, batch 1, in (e)'s
 *    semaphore mode, K frames / K;
 *  - xproc D=4: four frames in flight through libclmem-ipc, K frames / K;
 *  - /dev/shm D=1 and D=4: what a program does today without sharing: the
 *    producer copies the frame out of Vulkan (vkCmdCopyBuffer to a
 *    persistently mapped staging buffer, a fence) and into a /dev/shm file
 *    (memcpy; the file's fd went to the consumer once), the consumer writes
 *    it into its cl_mem (clEnqueueWriteBuffer) and runs the kernel; READY
 *    and FREE messages as above.
 * The targets printed after the table are the cross-process ones: D=1 at
 * most in-process (e) + 40 us, D=4 at most 1.5x the in-process ring, and
 * /dev/shm D=1 at least 20x xproc D=1 at 1920x1080. */
#include "bench.h"

#if HAVE_IPC
#include <clmem-ipc.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

extern char **environ;

#define XPROC_SLOTS 4
#define XPROC_TIMEOUT_NS (10ull * 1000000000u)
#define XPROC_VALUE(slot) (0x100u + (uint32_t)(slot))

enum xmeasure { X_INPROC_E, X_D1, X_RING4, X_D4, X_SHM1, X_SHM4, X_COUNT };
static const char *const xmeasure_label[X_COUNT] = {"in-process (e)", "xproc D=1", "in-proc ring D=4",
                                                    "xproc D=4", "/dev/shm D=1", "/dev/shm D=4"};

struct xkind {
    const char *label;
    uint64_t bytes;
    VkFormat format; /* VK_FORMAT_UNDEFINED: a buffer */
    uint32_t width, height, planes;
    uint64_t plane_offset[2], plane_size[2];
    uint32_t pitch[2];
};

struct xresult {
    const char *label;
    bool ran[X_COUNT];
    char why[X_COUNT][1200]; /* a clmem_error_message() fits */
    struct summary s[X_COUNT];
};

static struct xresult xresults[3];
static int n_xresults;
static char xproc_note[1152];
static bool xproc_ran;

/* ------------------------------------------------------------ the frames */

struct xframe {
    struct anchored_buf *owner; /* the memory, freed by its anchor once every import of it let go */
    clmem_keepalive *anchor;
    struct vk_buf buf;          /* owner->buf: exportable as an opaque fd */
    uint32_t memory_type;
    VkCommandBuffer fill; /* word 0 = XPROC_VALUE(slot) */
    VkCommandBuffer zero; /* words 0 and 1 = 0 */
    VkFence fence;
    uint32_t uses; /* kernels run since the last zero */
};

struct xrun {
    struct bench *b;
    const struct xkind *k;
    struct xframe f[XPROC_SLOTS];
    int frames, blocks, warmup;
    double *samples;
    struct vk_buf readback; /* words 0 and 1 of each slot */
    uint32_t *readback_ptr;
};

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
        double deadline = now_us() + DESTROY_WAIT_S * 1e6;
        while (!atomic_load(&r->f[s].owner->freed) && now_us() < deadline) {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
        if (atomic_load(&r->f[s].owner->freed))
            free(r->f[s].owner);
        else /* left to the anchor, which may still run */
            fail(b, "(x): a frame's anchor was not released %d s after its last import went", DESTROY_WAIT_S);
    }
    vkUnmapMemory(b->vk.device, r->readback.mem.memory);
    clmem_bridge_vk_buffer_destroy(b->bridge, r->readback.buffer, &r->readback.mem);
}

/* Words 0 and 1 of every slot set to 0, and nothing counted. */
static void frames_zero(struct xrun *r)
{
    for (int s = 0; s < XPROC_SLOTS; s++) {
        submit_and_wait(r->b, r->f[s].zero, "vkQueueSubmit(zero a frame)");
        r->f[s].uses = 0;
    }
}

/* After a measure: every slot's p[1] is its kernels' count x its value:
 * each kernel saw its own frame's write. */
static bool frames_check(struct xrun *r, const char *what, char *why, size_t len)
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

/* ------------------------------------------------------------ in one process */

/* The bridge's imports of the slots (plane 0's range), with a kernel each. */
struct inproc {
    clmem_handle *h[XPROC_SLOTS];
    cl_kernel k[XPROC_SLOTS];
};

static void inproc_setup(struct xrun *r, struct inproc *ip)
{
    struct bench *b = r->b;
    for (int s = 0; s < XPROC_SLOTS; s++) {
        cl_int err;
        cl_mem m;
        check_clmem(clmem_bridge_import_vk(b->bridge, &r->f[s].buf.mem, 0, r->k->plane_size[0], b->path, r->f[s].anchor,
                                           b->queue, CL_MEM_READ_WRITE, &ip->h[s]),
                    "clmem_bridge_import_vk(an (x) frame)");
        ip->k[s] = clCreateKernel(b->program, "bump", &err);
        check_cl(err, "clCreateKernel");
        m = clmem_handle_mem(ip->h[s]);
        check_cl(clSetKernelArg(ip->k[s], 0, sizeof m, &m), "clSetKernelArg");
    }
}

static void inproc_teardown(struct xrun *r, struct inproc *ip)
{
    check_cl(clFinish(r->b->queue), "clFinish");
    for (int s = 0; s < XPROC_SLOTS; s++) { /* the imports hold the frames' anchors until their teardown */
        clmem_handle_unref(ip->h[s]);
        clReleaseKernel(ip->k[s]);
    }
}

static void enqueue_bump(struct bench *b, cl_kernel k)
{
    size_t one = 1;
    check_cl(clEnqueueNDRangeKernel(b->queue, k, 1, NULL, &one, NULL, 0, NULL, NULL), "clEnqueueNDRangeKernel");
}

/* (e) on slot 0: K frames one at a time, ordered by the bench's semaphores;
 * time per frame. */
static double inproc_e_block(struct xrun *r, struct inproc *ip, int frames)
{
    struct bench *b = r->b;
    struct sem_set *set = &b->sem[V_CLMEM];
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo last = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .waitSemaphoreCount = 1,
                         .pWaitSemaphores = &set->done, .pWaitDstStageMask = &stage};
    double t0 = now_us();
    for (int f = 0; f < frames; f++) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                           .pCommandBuffers = &r->f[0].fill, .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &set->ready};
        if (f > 0) {
            si.waitSemaphoreCount = 1;
            si.pWaitSemaphores = &set->done;
            si.pWaitDstStageMask = &stage;
        }
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(fill, semaphores)");
        check_clmem(clmem_bridge_semaphore_wait(b->bridge, set->lib_ready, b->queue, 0, NULL, NULL),
                    "clmem_bridge_semaphore_wait");
        check_clmem(clmem_bridge_acquire(b->bridge, ip->h[0], 0, NULL, NULL), "clmem_bridge_acquire");
        enqueue_bump(b, ip->k[0]);
        check_clmem(clmem_bridge_release(b->bridge, ip->h[0], 0, NULL, NULL), "clmem_bridge_release");
        check_clmem(clmem_bridge_semaphore_signal(b->bridge, set->lib_done, b->queue, 0, NULL, NULL),
                    "clmem_bridge_semaphore_signal");
        r->f[0].uses++;
    }
    check_vk(vkQueueSubmit(b->vk.queue, 1, &last, VK_NULL_HANDLE), "vkQueueSubmit(final wait)");
    check_vk(vkQueueWaitIdle(b->vk.queue), "vkQueueWaitIdle");
    check_cl(clFinish(b->queue), "clFinish");
    return (now_us() - t0) / frames;
}

/* The in-process ring of the four slots, batch 1: K frames / K. */
struct ring_sems {
    VkSemaphore ready[XPROC_SLOTS], done[XPROC_SLOTS];
    clmem_bridge_semaphore *lib_ready[XPROC_SLOTS], *lib_done[XPROC_SLOTS];
};

static double ring_block(struct xrun *r, struct inproc *ip, struct ring_sems *rs, int frames, char *why, size_t len)
{
    struct bench *b = r->b;
    clmem_bridge_ring_info info = {.size = sizeof info, .frame_count = XPROC_SLOTS, .batch_size = 1,
                                   .frames = ip->h, .ready = rs->lib_ready, .done = rs->lib_done, .queue = b->queue};
    clmem_bridge_ring *ring;
    VkSemaphore waits[XPROC_SLOTS];
    uint32_t nwaits = 0;
    int produced = 0, consumed = 0;

    if (clmem_bridge_ring_create(b->bridge, &info, &ring) != CLMEM_OK) {
        snprintf(why, len, "clmem_bridge_ring_create: %s", clmem_error_message());
        return -1;
    }
    double t0 = now_us();
    while (consumed < frames) {
        /* Vulkan keeps up to four frames ahead; OpenCL takes the oldest. */
        while (produced < frames && produced - consumed < XPROC_SLOTS) {
            clmem_bridge_ring_frame fr;
            VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            check_clmem(clmem_bridge_ring_vk_next(ring, produced == frames - 1 ? CLMEM_BRIDGE_RING_END_BATCH : 0,
                                                  BATCH_TIMEOUT_NS, &fr),
                        "clmem_bridge_ring_vk_next");
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                               .pCommandBuffers = &r->f[fr.index].fill,
                               .waitSemaphoreCount = fr.wait_semaphore ? 1 : 0, .pWaitSemaphores = &fr.wait_semaphore,
                               .pWaitDstStageMask = &stage, .signalSemaphoreCount = fr.signal_semaphore ? 1 : 0,
                               .pSignalSemaphores = &fr.signal_semaphore};
            check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(ring frame)");
            check_clmem(clmem_bridge_ring_vk_submitted(ring, &fr), "clmem_bridge_ring_vk_submitted");
            produced++;
        }
        clmem_bridge_ring_batch batch;
        check_clmem(clmem_bridge_ring_cl_next(ring, BATCH_TIMEOUT_NS, 0, NULL, &batch, NULL),
                    "clmem_bridge_ring_cl_next");
        enqueue_bump(b, ip->k[batch.first_index]);
        r->f[batch.first_index].uses++;
        check_clmem(clmem_bridge_ring_cl_done(ring, &batch, 0, NULL, NULL), "clmem_bridge_ring_cl_done");
        consumed++;
    }
    check_clmem(clmem_bridge_ring_vk_drain(ring, BATCH_TIMEOUT_NS, XPROC_SLOTS, waits, &nwaits),
                "clmem_bridge_ring_vk_drain");
    if (nwaits) {
        VkPipelineStageFlags stages[XPROC_SLOTS];
        for (uint32_t i = 0; i < nwaits; i++)
            stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .waitSemaphoreCount = nwaits,
                           .pWaitSemaphores = waits, .pWaitDstStageMask = stages};
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(drain waits)");
    }
    check_vk(vkQueueWaitIdle(b->vk.queue), "vkQueueWaitIdle");
    check_cl(clFinish(b->queue), "clFinish");
    double per = (now_us() - t0) / frames;
    clmem_bridge_ring_unref(ring);
    return per;
}

static void run_inproc(struct xrun *r, struct xresult *res)
{
    struct bench *b = r->b;
    struct inproc ip = {0};
    struct ring_sems rs = {0};
    char why[256];

    inproc_setup(r, &ip);
    if (!b->sem_ok) {
        snprintf(res->why[X_INPROC_E], sizeof res->why[0], "the bench's semaphores are not usable: %s", b->sem_note);
        snprintf(res->why[X_RING4], sizeof res->why[0], "the bench's semaphores are not usable");
    } else {
        frames_zero(r);
        inproc_e_block(r, &ip, r->warmup);
        for (int blk = 0; blk < r->blocks; blk++)
            r->samples[blk] = inproc_e_block(r, &ip, r->frames);
        res->s[X_INPROC_E] = summarize(r->samples, r->blocks, r->frames);
        res->ran[X_INPROC_E] = frames_check(r, "in-process (e)", res->why[X_INPROC_E], sizeof res->why[0]);
        if (!res->ran[X_INPROC_E])
            fail(b, "(x) %s: %s", r->k->label, res->why[X_INPROC_E]);

        /* The ring's semaphores, in (e)'s mode. */
        bool ok = true;
        for (int s = 0; s < XPROC_SLOTS && ok; s++) {
            rs.ready[s] = semaphore_create(b, b->sem_exportable);
            rs.done[s] = semaphore_create(b, b->sem_exportable);
            ok = lib_semaphore_import(b, rs.ready[s], b->sem_mode, &rs.lib_ready[s]) == CLMEM_OK &&
                 lib_semaphore_import(b, rs.done[s], b->sem_mode, &rs.lib_done[s]) == CLMEM_OK;
        }
        if (!ok)
            snprintf(res->why[X_RING4], sizeof res->why[0], "clmem_bridge_semaphore_import: %s", clmem_error_message());
        frames_zero(r);
        double per = ok ? ring_block(r, &ip, &rs, r->warmup, why, sizeof why) : -1;
        for (int blk = 0; blk < r->blocks && per >= 0; blk++)
            per = r->samples[blk] = ring_block(r, &ip, &rs, r->frames, why, sizeof why);
        if (ok && per < 0)
            snprintf(res->why[X_RING4], sizeof res->why[0], "%s", why);
        else if (ok) {
            res->s[X_RING4] = summarize(r->samples, r->blocks, r->frames);
            res->ran[X_RING4] = frames_check(r, "in-process ring", res->why[X_RING4], sizeof res->why[0]);
            if (!res->ran[X_RING4])
                fail(b, "(x) %s: %s", r->k->label, res->why[X_RING4]);
        }
        check_vk(vkDeviceWaitIdle(b->vk.device), "vkDeviceWaitIdle");
        for (int s = 0; s < XPROC_SLOTS; s++) { /* their anchors destroy the VkSemaphores */
            clmem_bridge_semaphore_unref(rs.lib_ready[s]);
            clmem_bridge_semaphore_unref(rs.lib_done[s]);
        }
    }
    inproc_teardown(r, &ip);
}

/* ------------------------------------------------------------ the consumer process */

/* The child: clmem-bench XPROC_CHILD_OPTION MODE FD, spawned with no driver
 * loaded; its own Vulkan device (CLMEM_VK_DEVICE, as the parent's), the
 * paired OpenCL device, a bridge, the bump kernel. */
static pid_t spawn_consumer(const char *mode, int *sock_out)
{
    int sv[2], inherit;
    char fdtext[16];
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        die("(x): socketpair: %s", strerror(errno));
    inherit = fcntl(sv[1], F_DUPFD, 10); /* without FD_CLOEXEC: the one fd the child keeps */
    if (inherit < 0)
        die("(x): fcntl(F_DUPFD): %s", strerror(errno));
    snprintf(fdtext, sizeof fdtext, "%d", inherit);
    char *argv[] = {(char *)"clmem-bench", (char *)XPROC_CHILD_OPTION, (char *)mode, fdtext, NULL};
    fflush(stdout);
    int err = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
    close(inherit);
    close(sv[1]);
    if (err)
        die("(x): posix_spawn(/proc/self/exe): %s", strerror(err));
    *sock_out = sv[0];
    return pid;
}

/* The child's exit: 0, or why not (its stderr went to the bench's). */
static bool reap(pid_t pid, char *why, size_t len)
{
    int status;
    for (int i = 0; i < 10000; i++) { /* 10 s */
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return true;
            snprintf(why, len, "the consumer process ended with %s %d", WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            return false;
        }
        usleep(1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    snprintf(why, len, "the consumer process did not end within 10 s (killed)");
    return false;
}

/* ------------------------------------------------------------ through libclmem-ipc */

static void fence_reset(struct bench *b, VkFence f)
{
    check_vk(vkResetFences(b->vk.device, 1, &f), "vkResetFences");
}

static void submit_fill(struct xrun *r, int s)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                       .pCommandBuffers = &r->f[s].fill};
    fence_reset(r->b, r->f[s].fence);
    check_vk(vkQueueSubmit(r->b->vk.queue, 1, &si, r->f[s].fence), "vkQueueSubmit(fill)");
}

static bool ipc_offer(struct xrun *r, clmem_ipc_producer *p, int slots)
{
    for (int s = 0; s < slots; s++) {
        clmem_status st;
        if (r->k->format == VK_FORMAT_UNDEFINED) {
            st = clmem_ipc_producer_add_buffer(p, &r->f[s].buf.mem, r->f[s].memory_type, 0, r->k->bytes, 0, NULL);
        } else {
            clmem_bridge_vk_image img = {.memory = r->f[s].buf.mem, .size = r->k->bytes, .format = r->k->format,
                                         .extent = {r->k->width, r->k->height}, .tiling = VK_IMAGE_TILING_LINEAR,
                                         .plane_count = r->k->planes};
            for (uint32_t p2 = 0; p2 < r->k->planes; p2++)
                img.planes[p2] = (clmem_bridge_vk_image_plane){r->k->plane_offset[p2], r->k->plane_size[p2],
                                                               r->k->pitch[p2], p2 ? r->k->width / 2 : r->k->width,
                                                               p2 ? r->k->height / 2 : r->k->height};
            st = clmem_ipc_producer_add_image(p, &img, r->f[s].memory_type, NULL);
        }
        if (st != CLMEM_OK)
            return false;
    }
    return true;
}

/* D frames in flight through libclmem-ipc. D=1: the round trip of each
 * frame, from the fill's submission to the frame back from next(). D=4:
 * blocks of K frames, each ended by clmem_ipc_producer_wait_all(), K frames
 * / K. */
static void run_ipc(struct xrun *r, struct xresult *res, int slots, enum xmeasure m)
{
    struct bench *b = r->b;
    char *why = res->why[m];
    int sock, done = 0;
    pid_t pid = spawn_consumer("ipc", &sock);
    clmem_ipc_producer_info info = {.size = sizeof info, .instance = b->vk.instance,
                                    .get_instance_proc_addr = b->vk.get_instance_proc_addr,
                                    .physical_device = b->vk.physical_device, .device = b->vk.device,
                                    .socket_fd = sock};
    clmem_ipc_producer *p = NULL;
    uint32_t i = 0;
    bool ok = clmem_ipc_producer_create(&info, &p) == CLMEM_OK && ipc_offer(r, p, slots) &&
              clmem_ipc_producer_start(p, XPROC_TIMEOUT_NS) == CLMEM_OK;
    if (!p)
        close(sock);
    if (ok && !xproc_note[0])
        snprintf(xproc_note, sizeof xproc_note, "the consumer process imports through the %s path",
                 clmem_bridge_path_name(clmem_ipc_producer_peer_path(p)));
    frames_zero(r);
    if (slots == 1) {
        ok = ok && clmem_ipc_producer_next(p, 0, &i) == CLMEM_OK; /* the one frame */
        for (int f = 0; ok && f < r->warmup + r->frames; f++) {
            double t0 = now_us();
            submit_fill(r, (int)i);
            ok = clmem_ipc_producer_ready(p, i, r->f[i].fence, XPROC_TIMEOUT_NS) == CLMEM_OK &&
                 clmem_ipc_producer_next(p, XPROC_TIMEOUT_NS, &i) == CLMEM_OK;
            r->f[i].uses++;
            if (f >= r->warmup)
                r->samples[done++] = now_us() - t0;
        }
    } else {
        for (int blk = -1; ok && blk < r->blocks; blk++) { /* block -1: the warm-up */
            int n = blk < 0 ? r->warmup : r->frames;
            double t0 = now_us();
            for (int f = 0; ok && f < n; f++) {
                ok = clmem_ipc_producer_next(p, XPROC_TIMEOUT_NS, &i) == CLMEM_OK;
                if (!ok)
                    break;
                submit_fill(r, (int)i);
                ok = clmem_ipc_producer_ready(p, i, r->f[i].fence, XPROC_TIMEOUT_NS) == CLMEM_OK;
                r->f[i].uses++;
            }
            ok = ok && clmem_ipc_producer_wait_all(p, XPROC_TIMEOUT_NS) == CLMEM_OK;
            if (blk >= 0)
                r->samples[done++] = (now_us() - t0) / n;
        }
    }
    if (!ok)
        snprintf(why, sizeof res->why[0], "%s", clmem_error_message());
    clmem_ipc_producer_destroy(p); /* BYE: the consumer ends */
    char child[256] = "";
    bool child_ok = reap(pid, child, sizeof child);
    if (ok && !child_ok)
        snprintf(why, sizeof res->why[0], "%s", child);
    if (ok && child_ok) {
        res->s[m] = summarize(r->samples, done, slots == 1 ? 1 : r->frames);
        res->ran[m] = frames_check(r, xmeasure_label[m], why, sizeof res->why[0]);
    }
    if (!res->ran[m])
        fail(b, "(x) %s %s: %s", r->k->label, xmeasure_label[m], why);
}

/* ------------------------------------------------------------ through /dev/shm */

/* The baseline's messages, on the same kind of socket: one HELLO with the
 * /dev/shm fds, then READY and FREE of a slot. */
struct shm_msg {
    uint32_t type; /* 1 HELLO, 2 READY, 3 FREE */
    uint32_t slot;
    uint64_t bytes;
    uint32_t slots;
    uint32_t value; /* READY: what word 0 holds */
};

static bool shm_send(int sock, const struct shm_msg *m, const int *fds, int nfds)
{
    union {
        char space[CMSG_SPACE(sizeof(int) * XPROC_SLOTS)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {(void *)m, sizeof *m};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds) {
        memset(&control, 0, sizeof control);
        h.msg_control = control.space;
        h.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    return sendmsg(sock, &h, MSG_NOSIGNAL) == (ssize_t)sizeof *m;
}

/* One message, its fds in fds (up to max, the rest closed): how many came,
 * or -1 when no whole message did. */
static int shm_recv(int sock, struct shm_msg *m, int *fds, int max)
{
    union {
        char space[CMSG_SPACE(sizeof(int) * XPROC_SLOTS)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {m, sizeof *m};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space,
                       .msg_controllen = sizeof control.space};
    ssize_t n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC);
    int got = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); n > 0 && c; c = CMSG_NXTHDR(&h, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
                if (got < max)
                    fds[got++] = fd;
                else
                    close(fd);
            }
    return n == (ssize_t)sizeof *m ? got : -1;
}

/* The producer's side: per frame, Vulkan writes word 0 and copies the frame
 * into its slot's staging buffer, the host copies that into the slot's
 * /dev/shm file, READY; the slot is written again after its FREE. */
static void run_shm(struct xrun *r, struct xresult *res, int slots, enum xmeasure m, int frames)
{
    struct bench *b = r->b;
    char *why = res->why[m];
    uint64_t bytes = r->k->bytes;
    int fds[XPROC_SLOTS];
    void *shm[XPROC_SLOTS];
    struct vk_buf staging[XPROC_SLOTS];
    void *staged[XPROC_SLOTS];
    VkCommandBuffer copy[XPROC_SLOTS];
    int sock, done = 0, in_flight = 0;
    bool ok = true;

    for (int s = 0; s < slots; s++) {
        char name[64];
        snprintf(name, sizeof name, "/clmem-bench-xproc-%d-%d", (int)getpid(), s);
        fds[s] = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fds[s] < 0)
            die("(x): shm_open(%s): %s", name, strerror(errno));
        shm_unlink(name); /* the fds are all anyone needs */
        if (ftruncate(fds[s], (off_t)bytes) != 0 ||
            (shm[s] = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[s], 0)) == MAP_FAILED)
            die("(x): a /dev/shm file of %llu bytes: %s", (unsigned long long)bytes, strerror(errno));
        staging_buf_create(b, &staging[s], bytes);
        check_vk(vkMapMemory(b->vk.device, staging[s].mem.memory, 0, VK_WHOLE_SIZE, 0, &staged[s]), "vkMapMemory");
        copy[s] = begin_commands(b);
        vkCmdFillBuffer(copy[s], r->f[s].buf.buffer, 0, 4, XPROC_VALUE(s));
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
        vkCmdPipelineBarrier(copy[s], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                             NULL, 0, NULL);
        VkBufferCopy region = {0, 0, bytes};
        vkCmdCopyBuffer(copy[s], r->f[s].buf.buffer, staging[s].buffer, 1, &region);
        end_commands(copy[s]);
    }
    pid_t pid = spawn_consumer("shm", &sock);
    struct shm_msg hello = {.type = 1, .bytes = bytes, .slots = (uint32_t)slots};
    ok = shm_send(sock, &hello, fds, slots);
    for (int s = 0; s < slots; s++)
        close(fds[s]);

    int total = r->warmup + frames;
    double t0 = now_us();
    for (int f = 0; ok && f < total; f++) {
        int s = f % slots;
        struct shm_msg msg;
        if (f == r->warmup)
            t0 = now_us();
        if (in_flight == slots) { /* the slot's previous frame first */
            ok = shm_recv(sock, &msg, NULL, 0) == 0 && msg.type == 3;
            in_flight--;
        }
        double f0 = now_us();
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &copy[s]};
        fence_reset(b, r->f[s].fence);
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, r->f[s].fence), "vkQueueSubmit(write the frame, copy it out)");
        check_vk(vkWaitForFences(b->vk.device, 1, &r->f[s].fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        memcpy(shm[s], staged[s], bytes);
        msg = (struct shm_msg){.type = 2, .slot = (uint32_t)s, .value = XPROC_VALUE(s)};
        ok = ok && shm_send(sock, &msg, NULL, 0);
        in_flight++;
        if (slots == 1) {
            ok = ok && shm_recv(sock, &msg, NULL, 0) == 0 && msg.type == 3;
            in_flight--;
            if (f >= r->warmup)
                r->samples[done++] = now_us() - f0;
        }
    }
    while (ok && in_flight) {
        struct shm_msg msg;
        ok = shm_recv(sock, &msg, NULL, 0) == 0 && msg.type == 3;
        in_flight--;
    }
    if (slots > 1)
        r->samples[done++] = (now_us() - t0) / frames;
    if (!ok)
        snprintf(why, sizeof res->why[0], "the /dev/shm consumer stopped answering");
    close(sock); /* the consumer ends at EOF */
    char child[256] = "";
    if (!reap(pid, child, sizeof child) && ok) {
        ok = false;
        snprintf(why, sizeof res->why[0], "%s (it checks word 0 of every frame)", child);
    }
    for (int s = 0; s < slots; s++) {
        munmap(shm[s], bytes);
        vkFreeCommandBuffers(b->vk.device, b->vk.pool, 1, &copy[s]);
        vkUnmapMemory(b->vk.device, staging[s].mem.memory);
        clmem_bridge_vk_buffer_destroy(b->bridge, staging[s].buffer, &staging[s].mem);
    }
    if (ok) {
        res->s[m] = summarize(r->samples, done, slots == 1 ? 1 : frames);
        res->ran[m] = true;
    } else {
        fail(b, "(x) %s %s: %s", r->k->label, xmeasure_label[m], why);
    }
}

/* ------------------------------------------------------------ the child */

struct child_cl {
    struct vkctx vk;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel bump;
};

static const char child_kernel[] = "__kernel void bump(__global uint *p) {\n"
                                   "    uint v = p[0];\n"
                                   "    p[0] = v + 1u;\n"
                                   "    p[1] = p[1] + v;\n"
                                   "}\n";

static int child_fail(const char *what)
{
    fprintf(stderr, "clmem-bench (x) consumer: %s: %s\n", what, clmem_error_message());
    return 1;
}

static bool child_setup(struct child_cl *c)
{
    cl_int err;
    if (!vkctx_open(&c->vk, -1)) {
        fprintf(stderr, "clmem-bench (x) consumer: %s\n", c->vk.error);
        return false;
    }
    if (clmem_bridge_pair(c->vk.instance, c->vk.get_instance_proc_addr, c->vk.physical_device, &c->platform,
                          &c->device) != CLMEM_OK &&
        (clGetPlatformIDs(1, &c->platform, NULL) != CL_SUCCESS ||
         clGetDeviceIDs(c->platform, CL_DEVICE_TYPE_ALL, 1, &c->device, NULL) != CL_SUCCESS))
        return false;
    c->context = clCreateContext(NULL, 1, &c->device, NULL, NULL, &err);
    c->queue = clCreateCommandQueueWithProperties(c->context, c->device, NULL, &err);
    c->program = clCreateProgramWithSource(c->context, 1, (const char *[]){child_kernel}, NULL, &err);
    if (clBuildProgram(c->program, 1, &c->device, "", NULL, NULL) != CL_SUCCESS)
        return false;
    c->bump = clCreateKernel(c->program, "bump", &err);
    return err == CL_SUCCESS;
}

static void child_teardown(struct child_cl *c)
{
    clReleaseKernel(c->bump);
    clReleaseProgram(c->program);
    clReleaseCommandQueue(c->queue);
    clReleaseContext(c->context);
    vkctx_close(&c->vk);
}

/* The consumer of libclmem-ipc: the bump kernel on plane 0 of every frame. */
static int child_ipc(struct child_cl *c, int sock)
{
    clmem_bridge_info bi = {.size = sizeof bi, .instance = c->vk.instance, .physical_device = c->vk.physical_device,
                            .device = c->vk.device, .get_instance_proc_addr = c->vk.get_instance_proc_addr,
                            .context = c->context, .cl_device = c->device};
    clmem_bridge *bridge;
    clmem_ipc_consumer *consumer;
    if (clmem_bridge_create(&bi, &bridge) != CLMEM_OK)
        return child_fail("clmem_bridge_create");
    clmem_ipc_consumer_info ci = {.size = sizeof ci, .bridge = bridge, .instance = c->vk.instance,
                                  .get_instance_proc_addr = c->vk.get_instance_proc_addr,
                                  .physical_device = c->vk.physical_device, .queue = c->queue, .socket_fd = sock};
    if (clmem_ipc_consumer_create(&ci, &consumer) != CLMEM_OK)
        return child_fail("clmem_ipc_consumer_create");
    if (clmem_ipc_consumer_start(consumer, XPROC_TIMEOUT_NS) != CLMEM_OK)
        return child_fail("clmem_ipc_consumer_start");
    for (;;) {
        clmem_ipc_frame f;
        size_t one = 1;
        if (clmem_ipc_consumer_next(consumer, XPROC_TIMEOUT_NS, &f, NULL) != CLMEM_OK)
            return child_fail("clmem_ipc_consumer_next");
        if (f.plane_count == 0)
            break;
        cl_mem m = clmem_handle_mem(f.planes[0].handle);
        clSetKernelArg(c->bump, 0, sizeof m, &m);
        if (clEnqueueNDRangeKernel(c->queue, c->bump, 1, NULL, &one, NULL, 0, NULL, NULL) != CL_SUCCESS)
            return child_fail("clEnqueueNDRangeKernel");
        for (uint32_t p = 0; p < f.plane_count; p++)
            clmem_handle_unref(f.planes[p].handle); /* the release point: after the kernel */
    }
    if (clmem_ipc_consumer_state(consumer) != CLMEM_IPC_STATE_ENDED) {
        fprintf(stderr, "clmem-bench (x) consumer: the stream ended %s\n",
                clmem_ipc_state_name(clmem_ipc_consumer_state(consumer)));
        return 1;
    }
    if (clmem_ipc_consumer_destroy(consumer, XPROC_TIMEOUT_NS) != CLMEM_OK)
        return child_fail("clmem_ipc_consumer_destroy");
    if (clmem_bridge_finish(bridge, XPROC_TIMEOUT_NS) != CLMEM_OK)
        return child_fail("clmem_bridge_finish");
    clmem_bridge_unref(bridge);
    return 0;
}

/* The consumer of the /dev/shm baseline: each frame written into its slot's
 * cl_mem, the kernel, FREE once it completed. */
static int child_shm(struct child_cl *c, int sock)
{
    struct shm_msg hello, msg;
    int fds[XPROC_SLOTS];
    void *shm[XPROC_SLOTS];
    cl_mem mem[XPROC_SLOTS];
    cl_int err;
    uint32_t wrong = 0;
    int nfds = shm_recv(sock, &hello, fds, XPROC_SLOTS);
    if (nfds < 1 || hello.type != 1 || hello.slots != (uint32_t)nfds) {
        for (int s = 0; s < nfds; s++)
            close(fds[s]);
        return child_fail("the /dev/shm HELLO");
    }
    for (uint32_t s = 0; s < hello.slots; s++) {
        shm[s] = mmap(NULL, hello.bytes, PROT_READ, MAP_SHARED, fds[s], 0);
        close(fds[s]);
        mem[s] = clCreateBuffer(c->context, CL_MEM_READ_WRITE, hello.bytes, NULL, &err);
        if (shm[s] == MAP_FAILED || err != CL_SUCCESS)
            return child_fail("mapping a /dev/shm slot or making its cl_mem");
    }
    while (shm_recv(sock, &msg, NULL, 0) == 0 && msg.type == 2 && msg.slot < hello.slots) {
        size_t one = 1;
        uint32_t s = msg.slot;
        wrong += *(volatile uint32_t *)shm[s] != msg.value;
        if (clEnqueueWriteBuffer(c->queue, mem[s], CL_FALSE, 0, hello.bytes, shm[s], 0, NULL, NULL) != CL_SUCCESS)
            return child_fail("clEnqueueWriteBuffer");
        clSetKernelArg(c->bump, 0, sizeof mem[s], &mem[s]);
        clEnqueueNDRangeKernel(c->queue, c->bump, 1, NULL, &one, NULL, 0, NULL, NULL);
        if (clFinish(c->queue) != CL_SUCCESS)
            return child_fail("clFinish");
        msg.type = 3;
        if (!shm_send(sock, &msg, NULL, 0))
            break;
    }
    for (uint32_t s = 0; s < hello.slots; s++) {
        munmap(shm[s], hello.bytes);
        clReleaseMemObject(mem[s]);
    }
    if (wrong)
        fprintf(stderr, "clmem-bench (x) consumer: %u frames read from /dev/shm were not what the producer wrote\n",
                wrong);
    return wrong ? 1 : 0;
}

int xproc_child_main(int argc, char **argv)
{
    struct child_cl c = {0};
    int sock = argc == 4 ? atoi(argv[3]) : -1;
    if (sock < 0 || (strcmp(argv[2], "ipc") && strcmp(argv[2], "shm"))) {
        fprintf(stderr, "clmem-bench: %s is for clmem-bench's own use\n", XPROC_CHILD_OPTION);
        return 2;
    }
    if (!child_setup(&c))
        return child_fail("setting up Vulkan and OpenCL");
    int status = !strcmp(argv[2], "ipc") ? child_ipc(&c, sock) : child_shm(&c, sock);
    if (!strcmp(argv[2], "shm"))
        close(sock);
    child_teardown(&c);
    return status;
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

void run_xproc(struct bench *b, bool quick, int frames, int blocks)
{
    struct xkind kinds[3];
    int nk;

    if (!b->vk.has_memory_fd) {
        snprintf(xproc_note, sizeof xproc_note, "not run: the Vulkan device has no VK_KHR_external_memory_fd");
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
        frames_setup(&r);
        watchdog("(x) in-process", kinds[i].label);
        run_inproc(&r, res);
        printf("in-process ");
        fflush(stdout);
        watchdog("(x) xproc D=1", kinds[i].label);
        run_ipc(&r, res, 1, X_D1);
        watchdog("(x) xproc D=4", kinds[i].label);
        run_ipc(&r, res, XPROC_SLOTS, X_D4);
        printf("xproc ");
        fflush(stdout);
        /* The copy moves the whole frame three times: fewer frames for the
         * big ones, at least 5. */
        int shm_frames = (int)((uint64_t)frames * 8 * MIB / kinds[i].bytes);
        shm_frames = shm_frames < 5 ? 5 : shm_frames > frames ? frames : shm_frames;
        watchdog("(x) /dev/shm", kinds[i].label);
        run_shm(&r, res, 1, X_SHM1, shm_frames);
        run_shm(&r, res, XPROC_SLOTS, X_SHM4, shm_frames);
        alarm(0);
        printf("/dev/shm done\n");
        frames_teardown(&r);
        free(r.samples);
    }
}

void print_xproc(void)
{
    if (!xproc_ran) {
        if (xproc_note[0])
            printf("\n(x) across processes: %s\n", xproc_note);
        return;
    }
    printf("\n(x) across processes (libclmem-ipc; this process produces with Vulkan, a second clmem-bench process\n"
           "    consumes with OpenCL; %s). Per frame, median [min .. max], us:\n", xproc_note);
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
    printf("Targets (frames/s with D=4 = 1e6 / its per-frame time):\n");
    for (int i = 0; i < n_xresults; i++) {
        const struct xresult *x = &xresults[i];
        if (x->ran[X_D1] && x->ran[X_INPROC_E])
            printf("  %-16s xproc D=1 - in-process (e): %+8.1f us (target <= +40): %s\n", x->label,
                   x->s[X_D1].median - x->s[X_INPROC_E].median,
                   x->s[X_D1].median - x->s[X_INPROC_E].median <= 40.0 ? "met" : "missed");
        if (x->ran[X_D4] && x->ran[X_RING4])
            printf("  %-16s xproc D=4 / in-process ring D=4: %6.2fx (target <= 1.5x): %s; %.0f frames/s across "
                   "processes\n", x->label, x->s[X_D4].median / x->s[X_RING4].median,
                   x->s[X_D4].median <= 1.5 * x->s[X_RING4].median ? "met" : "missed", 1e6 / x->s[X_D4].median);
        if (x->ran[X_SHM1] && x->ran[X_D1])
            printf("  %-16s /dev/shm D=1 / xproc D=1: %7.1fx%s\n", x->label, x->s[X_SHM1].median / x->s[X_D1].median,
                   strstr(x->label, "1920x1080")
                       ? (x->s[X_SHM1].median >= 20.0 * x->s[X_D1].median ? " (target >= 20x): met"
                                                                          : " (target >= 20x): missed")
                       : "");
    }
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
