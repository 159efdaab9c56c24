/* SPDX-License-Identifier: MIT */
/* The interpreter of the fault-injection table (t/fault/fault-cases.c): one run
 * of a row's sequence on a bridge of its own, its operations done one by
 * one (do_op) with the row's point armed, the failing call's report judged
 * against the row (check_failure), the retry or the drop and the next
 * call, and then what the run left behind (run_end, fault_run_case).
 * t/fault/fault-injection.c says what is checked and why; t/fault/fault-injection.h
 * what each operation does. */
#include "fault-injection.h"
#include "t/lib/fault-control.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NSLOTS 20  /* handles (and fds) a run can hold: MANY pieces, or the other sequences' 4 */
#define NSEMS 4    /* semaphores a run can hold: a ring of 2 slots */
#define RING_FRAMES 8 /* frames a ring sequence hands out */
#define NPROBES 64 /* probe anchors a run can hand out: sequence, retry and next call (MANY twice) */
/* What an out-parameter holds before a call, so that "set to NULL" shows. */
#define JUNK_HANDLE ((clmem_handle *)(uintptr_t)0x1)
#define JUNK_SEMAPHORE ((clmem_bridge_semaphore *)(uintptr_t)0x1)
#define JUNK_BRIDGE ((clmem_bridge *)(uintptr_t)0x1)
#define JUNK_RING ((clmem_bridge_ring *)(uintptr_t)0x1)
#define JUNK_EVENT ((cl_event)(uintptr_t)0x1)

/* The run's image has optimal tiling (else linear) in exactly the
 * sequences that need an optimal-tiling import. */
static bool seq_optimal(const struct sequence *seq)
{
    return seq->needs == NEEDS_OPTIMAL_IMAGE;
}

/* ------------------------------------------- what a run is checked against */

/* Which fds are open now that were not when the baseline was taken, as
 * "number -> target": to tell a driver's fd from one the bridge lost. */
static void list_fds(char *out, size_t len, const char *except)
{
    size_t used = 0;
    out[0] = '\0';
    for (int fd = 0; fd < 4096 && used + 80 < len; fd++) {
        char path[64], target[256], item[320];
        ssize_t n;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        n = readlink(path, target, sizeof target - 1);
        if (n < 0)
            continue;
        target[n] = '\0';
        snprintf(item, sizeof item, " %d->%s", fd, target);
        if (except && strstr(except, item))
            continue;
        used += (size_t)snprintf(out + used, len - used, "%s", item);
    }
}

void fault_take_fd_baseline(struct fault_env *e)
{
    e->fds = fd_count();
    list_fds(e->fd_list, sizeof e->fd_list, NULL);
}

/* A counting anchor, for the semaphore sequences. */
static void count_release(void *user)
{
    atomic_fetch_add((atomic_int *)user, 1);
}

static bool refs_are_back(const struct fault_env *e)
{
    if (cl_context_refcount(e->f.context) != e->context_refs)
        return false;
    for (int i = 0; i < NQUEUES; i++)
        if (cl_queue_refcount(e->queues[i]) != e->queue_refs[i])
            return false;
    return true;
}

/* PoCL lets go of its own references on the queues and the context (held
 * by its commands and events, which a driver thread cleans up) a little
 * after the calls that made them returned. Wait for the counts to come
 * back: a leaked reference never does, so waiting costs time only when
 * something is wrong. Returns how long it took, or -1 after two seconds. */
static int refs_settle(struct fault_env *e)
{
    for (int ms = 0; ms < 2000; ms++) {
        if (refs_are_back(e)) {
            if (ms > e->settle_ms_max)
                e->settle_ms_max = ms;
            return ms;
        }
        usleep(1000);
    }
    return -1;
}

/* ---------------------------------------------------- what a run holds */

static const char *const mode_names[] = {"dry run", "retry", "drop"};

struct run;

/* A Vulkan keepalive of one import call, handed out in call order. It
 * holds a reference on the caller's anchor on the memory (r->ka), as an
 * application's keepalive would, and records whether OpenCL had destroyed
 * the import's cl_mem when the bridge let go of it. */
struct probe {
    struct run *r;
    clmem_keepalive *ka;   /* the caller's reference until the import call returned; then NULL */
    bool used;             /* handed to an import call */
    bool watched;          /* the import succeeded: its cl_mem's destruction is watched */
    atomic_int released;
    atomic_int destroyed;  /* the watched cl_mem's destructor callbacks (the test's own) */
    atomic_int destroyed_at_release;
};

/* Everything one run of a sequence holds. */
struct run {
    struct fault_env *e;
    const struct fault_case *c;
    const struct sequence *seq;
    clmem_bridge *b;               /* the run's own bridge (none for the bridge-creation rows) */
    bool finish_failed;            /* a finish of this run failed: later ones only check */
    cl_uint ctx_before_create;     /* the context's reference count right before bridge_create */
    struct vk_owned o;             /* the Vulkan memory the imports share (an image's: o.memory, o.released) */
    clmem_bridge_vk_image image;   /* the image sequences' VkImage, owned by the caller's anchor (r->ka) */
    clmem_keepalive *ka;           /* the caller's reference on its anchor on the memory */
    clmem_keepalive *sem_ka;       /* the caller's reference on its anchor on the semaphores */
    atomic_int sem_releases;       /* that anchor's releases */
    struct probe probes[NPROBES];
    int probes_used;
    int vk_sem_count;
    VkSemaphore vk_sems[NSEMS];
    clmem_bridge_semaphore *sems[NSEMS];
    bool sem_signalled[NSEMS];     /* the test signalled it, and no wait of the ring's was submitted since */
    int failed_slot;               /* the ops on a run of slots: the slot whose call failed */
    bool acquired_each[NSLOTS];    /* OP_ACQUIRE_EACH: acquired */
    cl_event event;                /* the event of the call that failed, as it left it */
    /* the ring sequences' */
    clmem_bridge_ring *ring;
    clmem_bridge_ring_frame ring_frames[RING_FRAMES]; /* handed out by vk_next, in order */
    int frames_out, frames_signalled;                  /* handed out; signalled by the test */
    clmem_bridge_ring_batch batches[RING_FRAMES];      /* taken by cl_next, in order */
    int batches_taken, batches_done;
    clmem_bridge *bridges[2];      /* the bridge-creation sequence's own */
    clmem_handle *h[NSLOTS];
    int fd[NSLOTS];                /* the caller's fd for OP_IMPORT_FD; -1 when none */
    struct stat fd_stat[NSLOTS];   /* to tell it from another file that got the same number */
    VkBuffer vk_buffer;
    clmem_bridge_vk_memory vk_memory;
    clmem_bridge_vk_image vk_image; /* OP_VK_IMAGE_CREATE's */
    /* what the failing call said, and what was wrong */
    char report[400];
    char problems[2048];
};

static void problem(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct run *r, const char *fmt, ...)
{
    size_t used = strlen(r->problems);
    va_list ap;

    if (used + 3 >= sizeof r->problems)
        return;
    if (used)
        used += (size_t)snprintf(r->problems + used, sizeof r->problems - used, "; ");
    va_start(ap, fmt);
    vsnprintf(r->problems + used, sizeof r->problems - used, fmt, ap);
    va_end(ap);
}

/* May run on a driver thread. The count goes last: once the main thread
 * sees it, this function touches the run no more. */
static void probe_release(void *user)
{
    struct probe *p = user;
    clmem_keepalive *callers = p->r->ka;

    atomic_store(&p->destroyed_at_release, atomic_load(&p->destroyed));
    clmem_keepalive_unref(callers); /* the probe's reference on the caller's anchor */
    atomic_fetch_add(&p->released, 1);
}

static void CL_CALLBACK probe_mem_destroyed(cl_mem mem, void *user)
{
    struct probe *p = user;
    (void)mem;
    atomic_fetch_add(&p->destroyed, 1);
}

/* The next probe for an import call (made in run_begin, with nothing
 * armed: the test's own anchors must not meet the "anchor_alloc" point). */
static struct probe *probe_take(struct run *r)
{
    struct probe *p;

    if (r->probes_used == NPROBES)
        tap_bail("a run made more than %d import calls; raise NPROBES", NPROBES);
    p = &r->probes[r->probes_used++];
    p->used = true;
    return p;
}

/* After the import call: the caller lets go of its reference (the import
 * holds its own), and a successful import's cl_mem is watched. Our
 * destructor callback is registered after the bridge's, so OpenCL runs it
 * first (callbacks run in reverse order of registration). */
static void probe_after_import(struct run *r, struct probe *p, clmem_status s, const clmem_handle *h)
{
    if (s == CLMEM_OK && h && h != JUNK_HANDLE) {
        cl_int err = clSetMemObjectDestructorCallback(clmem_handle_mem(h), probe_mem_destroyed, p);
        if (err != CL_SUCCESS)
            problem(r, "the test's clSetMemObjectDestructorCallback on the imported cl_mem failed: %d", err);
        else
            p->watched = true;
    }
    clmem_keepalive_unref(p->ka);
    p->ka = NULL;
}

/* ---------------------------------------------------------- operations */

static const char *op_name(struct op op)
{
    static const char *const names[] = {
        "end",               "import_vk",          "import_fd",         "handle_for_queue",
        "acquire",           "release",            "drop",              "finish",
        "vk_buffer_create",  "vk_buffer_destroy",  "semaphore_import",  "semaphore_unref",
        "bridge_create",     "bridge_unref",       "import_vk_image",   "vk_image_create",
        "vk_image_destroy",  "import_vk",          "drop",              "acquire",
        "acquire_many",      "release_many",       "ring_create",       "ring_vk_next",
        "ring_vk_submitted", "ring_cl_next",       "ring_cl_done",      "ring_vk_drain",
        "ring_unref"};
    static char buf[128];
    _Static_assert(sizeof names / sizeof names[0] == OP_RING_UNREF + 1, "a name for every op kind");

    switch (op.kind) {
    case OP_IMPORT:
    case OP_IMPORT_FD:
        snprintf(buf, sizeof buf, "%s #%d (%s, queue %d)", names[op.kind], op.slot,
                 op.range == SUB ? "sub-range" : "whole", op.queue);
        break;
    case OP_FOR_QUEUE:
        snprintf(buf, sizeof buf, "%s #%d (of #%d, queue %d)", names[op.kind], op.slot, op.src, op.queue);
        break;
    case OP_IMPORT_IMAGE:
        snprintf(buf, sizeof buf, "%s #%d (plane 0 %s, queue %d)", names[op.kind], op.slot,
                 op.flags & CLMEM_BRIDGE_IMAGE_AS_IMAGE ? "as an image" : "buffer", op.queue);
        break;
    case OP_ACQUIRE:
    case OP_RELEASE:
    case OP_DROP:
        snprintf(buf, sizeof buf, "%s #%d", names[op.kind], op.slot);
        break;
    case OP_IMPORT_PIECES:
        snprintf(buf, sizeof buf, "%s of pieces #%d..#%d (one each, queue %d)", names[op.kind], op.slot,
                 op.slot + op.count - 1, op.queue);
        break;
    case OP_DROP_PIECES:
    case OP_ACQUIRE_EACH:
        snprintf(buf, sizeof buf, "%s of #%d..#%d, one by one", names[op.kind], op.slot, op.slot + op.count - 1);
        break;
    case OP_ACQUIRE_MANY:
    case OP_RELEASE_MANY:
        if (op.count)
            snprintf(buf, sizeof buf, "%s of %d handles #%d..#%d (queue %d, an event)", names[op.kind], op.count,
                     op.slot, op.slot + op.count - 1, op.queue);
        else
            snprintf(buf, sizeof buf, "%s of no handles (queue %d, an event)", names[op.kind], op.queue);
        break;
    case OP_SEM_IMPORT:
    case OP_SEM_DROP:
        snprintf(buf, sizeof buf, "%s of semaphores #%d..#%d", names[op.kind], op.slot, op.slot + op.count - 1);
        break;
    case OP_RING_CREATE:
        snprintf(buf, sizeof buf, "%s (%d frames, batches of %d, queue %d)", names[op.kind], op.count, op.batch,
                 op.queue);
        break;
    case OP_VK_NEXT:
        snprintf(buf, sizeof buf, "%s%s", names[op.kind], op.flags & CLMEM_BRIDGE_RING_END_BATCH ? " (END_BATCH)" : "");
        break;
    case OP_BRIDGE_CREATE:
        snprintf(buf, sizeof buf, "%s (%s)", names[op.kind], op.slot ? "device found by UUID" : "device named");
        break;
    default: snprintf(buf, sizeof buf, "%s", names[op.kind]);
    }
    return buf;
}

/* Calls with a status to check when a fault fires inside them. */
static bool op_reports(enum op_kind k)
{
    return k != OP_DROP && k != OP_VK_DESTROY && k != OP_SEM_DROP && k != OP_BRIDGE_UNREF && k != OP_FINISH &&
           k != OP_VK_IMAGE_DESTROY && k != OP_DROP_PIECES && k != OP_RING_UNREF;
}

/* The test's own export of the Vulkan memory, for clmem_bridge_import_fd. */
static int export_fd(struct run *r, int slot)
{
    struct fault_env *e = r->e;
    PFN_vkGetMemoryFdKHR get_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(e->vk.device, "vkGetMemoryFdKHR");
    VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                 .memory = r->o.memory.memory,
                                 .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;

    if (!get_fd || get_fd(e->vk.device, &info, &fd) != VK_SUCCESS || fstat(fd, &r->fd_stat[slot]) != 0)
        tap_bail("the test's own vkGetMemoryFdKHR failed");
    return fd;
}

/* Still open, and still the same file (not another that reused the number). */
static bool fd_is_callers(const struct run *r, int slot)
{
    struct stat st;
    return fstat(r->fd[slot], &st) == 0 && st.st_dev == r->fd_stat[slot].st_dev &&
           st.st_ino == r->fd_stat[slot].st_ino;
}

/* clmem_bridge_finish on the run's bridge, which must return CLMEM_OK.
 * Once one has failed (a stranded import), later ones only check, so that
 * a broken run does not wait out every timeout. */
static void finish(struct run *r, const char *when)
{
    clmem_status s;

    if (!r->b)
        return;
    if ((s = clmem_bridge_finish(r->b, r->finish_failed ? 0 : SETTLE_NS)) != CLMEM_OK) {
        problem(r, "clmem_bridge_finish %s returned %s: %s", when, clmem_status_name(s), clmem_error_message());
        r->finish_failed = true;
    }
}

/* The event a successful call gave: there must be one; waited for and
 * released, so that the next op starts on a quiet queue. */
static void event_done(struct run *r, cl_event ev, struct op op)
{
    cl_int err;

    if (!ev || ev == JUNK_EVENT) {
        problem(r, "%s returned CLMEM_OK but no event", op_name(op));
        return;
    }
    if ((err = clWaitForEvents(1, &ev)) != CL_SUCCESS)
        problem(r, "waiting for the event of %s failed: %d", op_name(op), err);
    clReleaseEvent(ev);
}

/* The batch ops keep the ring's semaphores in step from outside, which the
 * test does for host ordering only: there the ring's own submission waits
 * on every ready[s] the test signalled once vk_submitted succeeded, and
 * done[s] is never used. (A device-ordered run would need to know which
 * side consumed each signal after a failure.) */
static void need_host_ordering(const struct run *r, struct op op)
{
    if (r->seq->sem_mode != CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED)
        tap_bail("%s in \"%s\": the ring's batch ops are for host-ordered semaphores only", op_name(op),
                 r->seq->name);
}

static int sem_slot_of(const struct run *r, VkSemaphore vk_sem)
{
    for (int i = 0; i < r->vk_sem_count; i++)
        if (r->vk_sems[i] == vk_sem)
            return i;
    tap_bail("the ring handed out a semaphore the test never imported");
}

/* Vulkan's side of the frames handed out since the last call: one empty
 * submission with the waits and signals they carry (the test writes
 * nothing into them; the ring orders the handoff, not the data). Once per
 * frame: a retried vk_submitted does not signal again. */
static void ring_signal(struct run *r)
{
    VkSemaphore waits[RING_FRAMES], signals[RING_FRAMES];
    VkPipelineStageFlags stages[RING_FRAMES];
    uint32_t nwait = 0, nsignal = 0;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};

    for (int i = r->frames_signalled; i < r->frames_out; i++) {
        const clmem_bridge_ring_frame *f = &r->ring_frames[i];
        if (f->wait_semaphore) {
            stages[nwait] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            waits[nwait++] = f->wait_semaphore;
        }
        if (f->signal_semaphore) {
            r->sem_signalled[sem_slot_of(r, f->signal_semaphore)] = true;
            signals[nsignal++] = f->signal_semaphore;
        }
    }
    r->frames_signalled = r->frames_out;
    if (!nwait && !nsignal)
        return;
    si.waitSemaphoreCount = nwait;
    si.pWaitSemaphores = waits;
    si.pWaitDstStageMask = stages;
    si.signalSemaphoreCount = nsignal;
    si.pSignalSemaphores = signals;
    if (vkQueueSubmit(r->e->vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS)
        tap_bail("the test's own vkQueueSubmit of the frames' semaphores failed");
}

/* Waits on `n` semaphores, submitted and waited for (each had a signal). */
static void submit_waits(struct run *r, const VkSemaphore *sems, uint32_t n)
{
    VkPipelineStageFlags stages[NSEMS];
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .waitSemaphoreCount = n,
                       .pWaitSemaphores = sems,
                       .pWaitDstStageMask = stages};

    for (uint32_t i = 0; i < n; i++)
        stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    if (n && (vkQueueSubmit(r->e->vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS ||
              vkQueueWaitIdle(r->e->vk.queue) != VK_SUCCESS))
        tap_bail("the test's own wait on %u semaphores failed", n);
}

/* The ring goes (both sides stopped: OpenCL's queue finished, Vulkan's
 * idle, as the header asks); then a ready semaphore the test signalled
 * that no wait of the ring's consumed is waited on, so that the next call
 * finds every semaphore unsignalled. */
static void ring_drop(struct run *r)
{
    VkSemaphore pending[NSEMS];
    uint32_t n = 0;

    if (r->ring) {
        for (int i = 0; i < NQUEUES; i++)
            clFinish(r->e->queues[i]);
        vkQueueWaitIdle(r->e->vk.queue);
        clmem_bridge_ring_unref(r->ring);
        r->ring = NULL;
    }
    for (int i = 0; i < NSEMS; i++) {
        if (r->sem_signalled[i])
            pending[n++] = r->vk_sems[i];
        r->sem_signalled[i] = false;
    }
    submit_waits(r, pending, n);
    r->frames_out = r->frames_signalled = r->batches_taken = r->batches_done = 0;
}

static clmem_status do_op(struct run *r, struct op op)
{
    struct fault_env *e = r->e;
    VkDeviceSize offset = op.range == SUB ? e->align : 0;
    VkDeviceSize size = op.range == SUB ? SUB_SIZE : r->o.memory.allocation_size;
    cl_command_queue queue = e->queues[op.queue];
    struct probe *p;
    clmem_status s;

    switch (op.kind) {
    case OP_END: break;
    case OP_IMPORT:
        p = probe_take(r);
        r->h[op.slot] = JUNK_HANDLE;
        s = clmem_bridge_import_vk(r->b, &r->o.memory, offset, size, r->seq->path, p->ka, queue, CL_MEM_READ_WRITE,
                                   &r->h[op.slot]);
        probe_after_import(r, p, s, r->h[op.slot]);
        return s;
    case OP_IMPORT_FD:
        if (r->fd[op.slot] < 0)
            r->fd[op.slot] = export_fd(r, op.slot);
        p = probe_take(r);
        r->h[op.slot] = JUNK_HANDLE;
        s = clmem_bridge_import_fd(r->b, r->fd[op.slot], CLMEM_BRIDGE_PATH_OPAQUE_FD, r->o.memory.allocation_size,
                                   offset, size, p->ka, queue, CL_MEM_READ_WRITE, &r->h[op.slot]);
        probe_after_import(r, p, s, r->h[op.slot]);
        if (s == CLMEM_OK)
            r->fd[op.slot] = -1; /* the import's now */
        return s;
    case OP_FOR_QUEUE:
        r->h[op.slot] = JUNK_HANDLE;
        return clmem_bridge_handle_for_queue(r->h[op.src], queue, &r->h[op.slot]);
    case OP_IMPORT_IMAGE:
        p = probe_take(r);
        r->h[op.slot] = JUNK_HANDLE;
        s = clmem_bridge_import_vk_image(r->b, &r->image, 0, r->seq->path, p->ka, queue, CL_MEM_READ_WRITE,
                                         op.flags, &r->h[op.slot]);
        probe_after_import(r, p, s, r->h[op.slot]);
        return s;
    case OP_ACQUIRE: return clmem_bridge_acquire(r->b, r->h[op.slot], 0, NULL, NULL);
    case OP_RELEASE: {
        cl_event done = NULL;
        cl_int err;
        s = clmem_bridge_release(r->b, r->h[op.slot], 0, NULL, &done);
        if (s == CLMEM_OK) {
            if ((err = clWaitForEvents(1, &done)) != CL_SUCCESS)
                problem(r, "waiting for the release's event failed: %d", err);
            clReleaseEvent(done);
        }
        return s;
    }
    case OP_DROP:
        clmem_handle_unref(r->h[op.slot]);
        r->h[op.slot] = NULL;
        return CLMEM_OK;
    case OP_FINISH:
        finish(r, "after the drops");
        return CLMEM_OK; /* judged there: a failed finish is a problem, never the row's status */
    case OP_VK_CREATE:
        r->vk_buffer = (VkBuffer)(uintptr_t)1;
        memset(&r->vk_memory, 0xa5, sizeof r->vk_memory);
        return clmem_bridge_vk_buffer_create(r->b, ALLOC_SIZE, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                             0, &r->vk_buffer, &r->vk_memory);
    case OP_VK_DESTROY:
        clmem_bridge_vk_buffer_destroy(r->b, r->vk_buffer, &r->vk_memory);
        r->vk_buffer = VK_NULL_HANDLE;
        memset(&r->vk_memory, 0, sizeof r->vk_memory);
        return CLMEM_OK;
    case OP_SEM_IMPORT:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            if (r->sems[i])
                continue; /* imported before the failure that is being retried */
            r->failed_slot = i;
            r->sems[i] = JUNK_SEMAPHORE;
            s = clmem_bridge_semaphore_import(r->b, e->vk.queue, r->vk_sems[i], r->seq->sem_mode, r->sem_ka,
                                              &r->sems[i]);
            if (s != CLMEM_OK)
                return s;
        }
        return CLMEM_OK;
    case OP_SEM_DROP:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            clmem_bridge_semaphore_unref(r->sems[i]);
            r->sems[i] = NULL;
        }
        return CLMEM_OK;
    case OP_BRIDGE_CREATE: {
        clmem_bridge_info info = {.size = sizeof info,
                                  .instance = e->vk.instance,
                                  .physical_device = e->vk.physical_device,
                                  .device = e->vk.device,
                                  .get_instance_proc_addr = op.slot ? e->vk.get_instance_proc_addr : NULL,
                                  .context = e->f.context,
                                  .cl_device = op.slot ? NULL : e->f.device,
                                  .flags = op.slot ? CLMEM_BRIDGE_NO_IMPORT_CACHE : 0};
        r->bridges[op.slot] = JUNK_BRIDGE;
        r->ctx_before_create = cl_context_refcount(e->f.context);
        return clmem_bridge_create(&info, &r->bridges[op.slot]);
    }
    case OP_BRIDGE_UNREF:
        clmem_bridge_unref(r->bridges[op.slot]);
        r->bridges[op.slot] = NULL;
        return CLMEM_OK;
    case OP_VK_IMAGE_CREATE:
        memset(&r->vk_image, 0xa5, sizeof r->vk_image);
        return clmem_bridge_vk_image_create(r->b, IMAGE_FORMAT, (VkExtent2D){IMAGE_W, IMAGE_H},
                                            VK_IMAGE_TILING_LINEAR, IMAGE_USAGE,
                                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                            0, &r->vk_image);
    case OP_VK_IMAGE_DESTROY:
        clmem_bridge_vk_image_destroy(r->b, &r->vk_image);
        memset(&r->vk_image, 0, sizeof r->vk_image);
        return CLMEM_OK;
    case OP_IMPORT_PIECES:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            if (r->h[i])
                continue; /* imported before the failure that is being retried */
            r->failed_slot = i;
            p = probe_take(r);
            r->h[i] = JUNK_HANDLE;
            s = clmem_bridge_import_vk(r->b, &r->o.memory, (VkDeviceSize)i * e->piece, e->piece, r->seq->path, p->ka,
                                       queue, CL_MEM_READ_WRITE, &r->h[i]);
            probe_after_import(r, p, s, r->h[i]);
            if (s != CLMEM_OK)
                return s;
        }
        return CLMEM_OK;
    case OP_DROP_PIECES:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            clmem_handle_unref(r->h[i]);
            r->h[i] = NULL;
            r->acquired_each[i] = false;
        }
        return CLMEM_OK;
    case OP_ACQUIRE_EACH:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            if (r->acquired_each[i])
                continue;
            r->failed_slot = i;
            if ((s = clmem_bridge_acquire(r->b, r->h[i], 0, NULL, NULL)) != CLMEM_OK)
                return s;
            r->acquired_each[i] = true;
        }
        return CLMEM_OK;
    case OP_ACQUIRE_MANY:
    case OP_RELEASE_MANY: {
        cl_event ev = JUNK_EVENT;
        clmem_handle *const *hs = &r->h[op.slot]; /* the array converts without a cast */
        s = op.kind == OP_ACQUIRE_MANY ? clmem_bridge_acquire_many(r->b, (cl_uint)op.count, hs, queue, 0, NULL, &ev)
                                       : clmem_bridge_release_many(r->b, (cl_uint)op.count, hs, queue, 0, NULL, &ev);
        if (s != CLMEM_OK) {
            r->event = ev; /* judged by check_failure */
            return s;
        }
        event_done(r, ev, op);
        for (int i = op.slot; op.kind == OP_RELEASE_MANY && i < op.slot + op.count; i++)
            r->acquired_each[i] = false;
        return CLMEM_OK;
    }
    case OP_RING_CREATE: {
        uint32_t depth = (uint32_t)(op.count / op.batch);
        clmem_bridge_ring_info info = {.size = sizeof info,
                                       .frame_count = (uint32_t)op.count,
                                       .batch_size = (uint32_t)op.batch,
                                       .frames = r->h,
                                       .ready = r->sems,
                                       .done = r->sems + depth,
                                       .queue = queue};
        if (op.count > NSLOTS || 2 * depth > NSEMS)
            tap_bail("%s: more frames or semaphores than a run holds", op_name(op));
        r->ring = JUNK_RING;
        s = clmem_bridge_ring_create(r->b, &info, &r->ring);
        if (s == CLMEM_OK)
            r->frames_out = r->frames_signalled = r->batches_taken = r->batches_done = 0;
        return s;
    }
    case OP_VK_NEXT:
        need_host_ordering(r, op);
        if (r->frames_out == RING_FRAMES)
            tap_bail("a ring sequence took more than %d frames; raise RING_FRAMES", RING_FRAMES);
        s = clmem_bridge_ring_vk_next(r->ring, op.flags, SETTLE_NS, &r->ring_frames[r->frames_out]);
        if (s == CLMEM_OK)
            r->frames_out++;
        return s;
    case OP_VK_SUBMITTED:
        need_host_ordering(r, op);
        if (!r->frames_out)
            tap_bail("%s before any vk_next", op_name(op));
        ring_signal(r);
        s = clmem_bridge_ring_vk_submitted(r->ring, &r->ring_frames[r->frames_out - 1]);
        if (s == CLMEM_OK) /* every batch reported is published: the ring's wait on its ready[s] is submitted */
            memset(r->sem_signalled, 0, sizeof r->sem_signalled);
        return s;
    case OP_CL_NEXT: {
        cl_event ev = JUNK_EVENT;
        need_host_ordering(r, op);
        s = clmem_bridge_ring_cl_next(r->ring, SETTLE_NS, 0, NULL, &r->batches[r->batches_taken], &ev);
        if (s != CLMEM_OK) {
            r->event = ev;
            return s;
        }
        r->batches_taken++;
        event_done(r, ev, op);
        return CLMEM_OK;
    }
    case OP_CL_DONE: {
        cl_event ev = JUNK_EVENT;
        need_host_ordering(r, op);
        if (r->batches_done == r->batches_taken)
            tap_bail("%s with no batch taken", op_name(op));
        s = clmem_bridge_ring_cl_done(r->ring, &r->batches[r->batches_done], 0, NULL, &ev);
        if (s != CLMEM_OK) {
            r->event = ev;
            return s;
        }
        r->batches_done++;
        event_done(r, ev, op);
        return CLMEM_OK;
    }
    case OP_VK_DRAIN: {
        VkSemaphore waits[NSEMS];
        uint32_t n = 0;
        need_host_ordering(r, op);
        s = clmem_bridge_ring_vk_drain(r->ring, SETTLE_NS, NSEMS, waits, &n);
        if (s == CLMEM_OK && n != 0) {
            problem(r, "vk_drain of a host-ordered ring gave %u semaphores to wait on, want none", n);
            submit_waits(r, waits, n < NSEMS ? n : NSEMS);
        }
        return s;
    }
    case OP_RING_UNREF:
        ring_drop(r);
        return CLMEM_OK;
    }
    return CLMEM_OK;
}

/* --------------------------------------------------- judging a failure */

/* The failing call's report, against the row. Read right after the call:
 * the error record is only good until the next clmem call. */
static void check_failure(struct run *r, struct op op, clmem_status s)
{
    const struct fault_case *c = r->c;
    /* A system call (the fd duplicate) reports errno; allocations, none. */
    bool system_call = c->call && strncmp(c->call, "fcntl", 5) == 0;
    clmem_api want_api = system_call                     ? CLMEM_API_SYSTEM
                         : c->want == CLMEM_ERR_OPENCL   ? CLMEM_API_OPENCL
                         : c->want == CLMEM_ERR_VULKAN   ? CLMEM_API_VULKAN
                                                         : CLMEM_API_NONE;
    const char *call = clmem_error_call();
    int32_t code = clmem_error_native_code();
    /* Right after the call, before anything else can touch the context. */
    cl_uint ctx_refs = cl_context_refcount(r->e->f.context);

    snprintf(r->report, sizeof r->report, "%s -> %s, %s, code %d", op_name(op), clmem_status_name(s),
             call ? call : "no call", (int)code);
    if (c->want == CLMEM_OK)
        problem(r, "%s failed with %s (%s), but this point is reached only by teardowns, which have no status to "
                   "report",
                op_name(op), clmem_status_name(s), clmem_error_message());
    else if (s != c->want)
        problem(r, "%s returned %s, want %s (%s)", op_name(op), clmem_status_name(s), clmem_status_name(c->want),
                clmem_error_message());
    if (clmem_error_status() != s)
        problem(r, "the error record says %s, the call returned %s", clmem_status_name(clmem_error_status()),
                clmem_status_name(s));
    if (c->want != CLMEM_OK && clmem_error_api() != want_api)
        problem(r, "clmem_error_api() is %d, want %d", (int)clmem_error_api(), (int)want_api);
    if (c->want != CLMEM_OK && (c->call ? !call || strcmp(call, c->call) != 0 : call != NULL))
        problem(r, "clmem_error_call() is %s, want %s", call ? call : "NULL", c->call ? c->call : "NULL");
    if (want_api != CLMEM_API_NONE && code == 0)
        problem(r, "the native code is 0 for a failed native call");
    switch (op.kind) {
    case OP_IMPORT:
    case OP_IMPORT_FD:
    case OP_IMPORT_IMAGE:
    case OP_FOR_QUEUE:
        if (r->h[op.slot] != NULL) {
            problem(r, "*out is %p after the failed %s, want NULL", (void *)r->h[op.slot], op_name(op));
            if (r->h[op.slot] == JUNK_HANDLE)
                r->h[op.slot] = NULL;
        }
        if (op.kind == OP_IMPORT_FD && !fd_is_callers(r, op.slot)) {
            problem(r, "the caller's fd %d was closed by the failed import_fd (clmem-bridge.h: \"On any error "
                       "the fd is still the caller's, open and untouched\")",
                    r->fd[op.slot]);
            r->fd[op.slot] = -1; /* not ours to close any more */
        }
        break;
    case OP_VK_CREATE:
        if (r->vk_buffer != VK_NULL_HANDLE || r->vk_memory.memory != VK_NULL_HANDLE || r->vk_memory.device != NULL)
            problem(r, "vk_buffer_create left its outputs set after failing");
        break;
    case OP_VK_IMAGE_CREATE: {
        static const clmem_bridge_vk_image zero;
        if (memcmp(&r->vk_image, &zero, sizeof zero) != 0) {
            problem(r, "vk_image_create left *image_out not zeroed after failing (clmem-bridge.h: \"On error "
                       "*image_out is zeroed\")");
            memset(&r->vk_image, 0, sizeof r->vk_image); /* what it holds is not known to be real: leave it */
        }
        break;
    }
    case OP_SEM_IMPORT:
        if (r->sems[r->failed_slot] != NULL) {
            problem(r, "*out is %p after the failed import of semaphore #%d, want NULL",
                    (void *)r->sems[r->failed_slot], r->failed_slot);
            if (r->sems[r->failed_slot] == JUNK_SEMAPHORE)
                r->sems[r->failed_slot] = NULL;
        }
        break;
    case OP_IMPORT_PIECES:
        snprintf(r->report + strlen(r->report), sizeof r->report - strlen(r->report), " (piece #%d)",
                 r->failed_slot);
        if (r->h[r->failed_slot] != NULL) {
            problem(r, "*out is %p after the failed import of piece #%d, want NULL", (void *)r->h[r->failed_slot],
                    r->failed_slot);
            if (r->h[r->failed_slot] == JUNK_HANDLE)
                r->h[r->failed_slot] = NULL;
        }
        break;
    case OP_ACQUIRE_EACH:
        snprintf(r->report + strlen(r->report), sizeof r->report - strlen(r->report), " (#%d)", r->failed_slot);
        break;
    case OP_ACQUIRE_MANY:
    case OP_RELEASE_MANY:
    case OP_CL_NEXT:
    case OP_CL_DONE:
        /* "*event_out (if not NULL) gets an event": none after a failure. */
        if (r->event != NULL) {
            problem(r, "*event_out is %p after the failed %s, want NULL", (void *)r->event, op_name(op));
            if (r->event != JUNK_EVENT)
                clReleaseEvent(r->event);
        }
        r->event = NULL;
        break;
    case OP_RING_CREATE:
        if (r->ring != NULL) {
            problem(r, "*out is %p after the failed ring_create, want NULL", (void *)r->ring);
            if (r->ring == JUNK_RING)
                r->ring = NULL;
        }
        break;
    case OP_BRIDGE_CREATE:
        if (r->bridges[op.slot] != NULL) {
            problem(r, "*out is %p after the failed bridge_create, want NULL", (void *)r->bridges[op.slot]);
            if (r->bridges[op.slot] == JUNK_BRIDGE)
                r->bridges[op.slot] = NULL;
        }
        /* "On error *out is NULL and nothing is retained": at once, not
         * eventually. */
        if (ctx_refs != r->ctx_before_create)
            problem(r, "the context has %u references right after the failed bridge_create, %u right before (the "
                       "failed creation retained it)",
                    ctx_refs, r->ctx_before_create);
        break;
    default: break;
    }
}

/* ------------------------------------------------- a run, start to end */

/* The sequence's steps. Returns the passes through the row's point (for
 * the dry run). A fault that fires in a step with no status (a drop: the
 * teardown has no one to report to) is judged by what follows: the
 * finish, and the leak checks. */
static int run_steps(struct run *r, int nth, enum fault_mode mode)
{
    const struct op *ops = r->seq->ops;
    bool fired_any = false;
    int passes;

    clmem_fault_reset();
    if (nth > 0)
        clmem_fault_arm(r->c->point, nth);
    for (int i = 0; ops[i].kind != OP_END; i++) {
        int fired_before = clmem_fault_fired();
        clmem_status s;

        clmem_error_clear();
        s = do_op(r, ops[i]);
        if (clmem_fault_fired() == fired_before) {
            if (s != CLMEM_OK) {
                problem(r, "%s failed with no fault fired: %s", op_name(ops[i]), clmem_error_message());
                break;
            }
            continue;
        }
        fired_any = true;
        if (!op_reports(ops[i].kind)) {
            snprintf(r->report, sizeof r->report, "%s (no status) failed inside", op_name(ops[i]));
            clmem_fault_reset();
            continue;
        }
        if (s == CLMEM_OK) {
            problem(r, "the fault fired inside %s but it returned CLMEM_OK", op_name(ops[i]));
            clmem_fault_reset();
            continue;
        }
        check_failure(r, ops[i], s);
        clmem_fault_reset(); /* disarm: everything after this must work */
        if (mode == MODE_DROP)
            break;
        if ((s = do_op(r, ops[i])) != CLMEM_OK) {
            problem(r, "retrying %s failed: %s", op_name(ops[i]), clmem_error_message());
            break;
        }
    }
    passes = clmem_fault_passes(r->c->point);
    if (nth > 0 && !fired_any)
        problem(r, "pass %d through %s was never reached", nth, r->c->point);
    clmem_fault_reset();
    return passes;
}

/* Let go of whatever a run still holds (after DROP stopped it early), and
 * finish the bridge: every teardown done, or the run lost something. */
static void drop_all(struct run *r)
{
    ring_drop(r); /* first: it holds references on the frames and the semaphores */
    for (int i = 0; i < NSLOTS; i++) {
        clmem_handle_unref(r->h[i]);
        r->h[i] = NULL;
        r->acquired_each[i] = false;
        if (r->fd[i] >= 0)
            close(r->fd[i]);
        r->fd[i] = -1;
    }
    if (r->vk_buffer || r->vk_memory.memory)
        clmem_bridge_vk_buffer_destroy(r->b, r->vk_buffer, &r->vk_memory);
    r->vk_buffer = VK_NULL_HANDLE;
    memset(&r->vk_memory, 0, sizeof r->vk_memory);
    if (r->vk_image.image || r->vk_image.memory.memory)
        clmem_bridge_vk_image_destroy(r->b, &r->vk_image);
    memset(&r->vk_image, 0, sizeof r->vk_image);
    for (int i = 0; i < NSEMS; i++) {
        clmem_bridge_semaphore_unref(r->sems[i]);
        r->sems[i] = NULL;
    }
    for (int i = 0; i < 2; i++) {
        clmem_bridge_unref(r->bridges[i]);
        r->bridges[i] = NULL;
    }
    finish(r, "after everything was dropped");
}

/* After a DROP: the whole sequence once more, all of it good. */
static void next_call(struct run *r)
{
    char saved[sizeof r->report];
    size_t before = strlen(r->problems);

    memcpy(saved, r->report, sizeof saved);
    run_steps(r, 0, MODE_DRY);
    memcpy(r->report, saved, sizeof saved);
    if (strlen(r->problems) != before)
        problem(r, "(the above in the next call, after the failure)");
    drop_all(r);
}

static bool uses_image(const struct sequence *seq)
{
    return seq->ops[0].kind == OP_IMPORT_IMAGE;
}

static bool uses_memory(const struct sequence *seq)
{
    return seq->ops[0].kind == OP_IMPORT || seq->ops[0].kind == OP_IMPORT_FD || seq->ops[0].kind == OP_IMPORT_PIECES ||
           uses_image(seq);
}

/* The semaphores a sequence imports: one past the highest slot. */
static int semaphores_used(const struct sequence *seq)
{
    int n = 0;
    for (int i = 0; seq->ops[i].kind != OP_END; i++)
        if (seq->ops[i].kind == OP_SEM_IMPORT && seq->ops[i].slot + seq->ops[i].count > n)
            n = seq->ops[i].slot + seq->ops[i].count;
    if (n > NSEMS)
        tap_bail("\"%s\" imports %d semaphores; raise NSEMS", seq->name, n);
    return n;
}

/* The image sequences' VkImage: IMAGE_FORMAT (or `format`) with the
 * sequence's tiling, exportable for its path, in memory of the path's
 * properties where Vulkan has such a type for it, else any (a CPU device
 * has no device-local type; the live check falls back the same way). */
static clmem_status image_make(struct fault_env *e, clmem_bridge *b, clmem_bridge_path path, bool optimal, VkFormat format,
                               clmem_bridge_vk_image *out)
{
    VkImageTiling tiling = optimal ? VK_IMAGE_TILING_OPTIMAL : VK_IMAGE_TILING_LINEAR;
    clmem_status s = clmem_bridge_vk_image_create(b, format, (VkExtent2D){IMAGE_W, IMAGE_H}, tiling, IMAGE_USAGE,
                                                  path_memory_props(path), path_export_types(&e->vk, path), out);
    if (s == CLMEM_ERR_UNSUPPORTED && path != CLMEM_BRIDGE_PATH_HOST_MAPPED)
        s = clmem_bridge_vk_image_create(b, format, (VkExtent2D){IMAGE_W, IMAGE_H}, tiling, IMAGE_USAGE, 0,
                                         path_export_types(&e->vk, path), out);
    return s;
}

/* The caller's anchor on the image: its release frees the image and its
 * memory, as an application's would, and drops its bridge reference. May
 * run on a driver thread or inside clmem_bridge_finish. */
static void image_owned_release(void *user)
{
    struct run *r = user;
    clmem_bridge *b = r->o.bridge;

    clmem_bridge_vk_image_destroy(b, &r->image);
    r->o.bridge = NULL;
    atomic_fetch_add(&r->o.released, 1);
    clmem_bridge_unref(b);
}

/* The live check an optimal-tiling import needs, on the run's bridge, and
 * its own import finished, so that nothing of it runs inside the sequence. */
static void image_live_check(struct fault_env *e, clmem_bridge *b)
{
    clmem_status s = clmem_bridge_image_live_check(b, e->optimal_format, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk.queue,
                                                   e->vk.queue_family, e->f.queue);
    if (s != CLMEM_OK)
        tap_bail("the live check of optimal-tiling %s passed on the first bridge but returned %s on a run's: %s",
                 clmem_bridge_image_format_name(e->optimal_format), clmem_status_name(s), clmem_error_message());
    if ((s = clmem_bridge_finish(b, SETTLE_NS)) != CLMEM_OK)
        tap_bail("clmem_bridge_finish after the live check returned %s: %s", clmem_status_name(s),
                 clmem_error_message());
}

static clmem_keepalive *image_owned_new(struct run *r)
{
    struct fault_env *e = r->e;
    clmem_keepalive *ka;
    clmem_status s;

    memset(&r->o, 0, sizeof r->o);
    r->o.vk = &e->vk;
    atomic_init(&r->o.released, 0);
    if (seq_optimal(r->seq))
        image_live_check(e, r->b);
    s = image_make(e, r->b, r->seq->path, seq_optimal(r->seq), seq_optimal(r->seq) ? e->optimal_format : IMAGE_FORMAT,
                   &r->image);
    if (s != CLMEM_OK)
        tap_bail("clmem_bridge_vk_image_create for %s failed: %s", r->seq->name, clmem_error_message());
    r->o.memory = r->image.memory; /* for the checks on the memory */
    r->o.bridge = clmem_bridge_ref(r->b);
    if (!(ka = clmem_keepalive_new(image_owned_release, r)))
        tap_bail("clmem_keepalive_new failed");
    return ka;
}

/* A run's resources, made with nothing armed: fresh Vulkan memory, the
 * caller's anchor on it and the probes for the imports; a VkSemaphore and
 * a counting anchor for the semaphores. */
static void run_begin(struct run *r, struct fault_env *e, const struct fault_case *c)
{
    memset(r, 0, sizeof *r);
    r->e = e;
    r->c = c;
    r->seq = c->seq;
    for (int i = 0; i < NSLOTS; i++)
        r->fd[i] = -1;
    atomic_init(&r->sem_releases, 0);
    if (r->seq->ops[0].kind != OP_BRIDGE_CREATE)
        r->b = bridge_open(&e->vk, &e->f, 0);
    if (uses_memory(r->seq)) {
        r->ka = uses_image(r->seq) ? image_owned_new(r)
                                   : vk_owned_new(&r->o, r->b, &e->vk, ALLOC_SIZE, path_memory_props(r->seq->path),
                                                  path_export_types(&e->vk, r->seq->path));
        for (int i = 0; i < NPROBES; i++) {
            struct probe *p = &r->probes[i];
            p->r = r;
            atomic_init(&p->released, 0);
            atomic_init(&p->destroyed, 0);
            atomic_init(&p->destroyed_at_release, 0);
            p->ka = clmem_keepalive_new(probe_release, p);
            if (!p->ka)
                tap_bail("clmem_keepalive_new failed");
            clmem_keepalive_ref(r->ka); /* the probe's, dropped by its release */
        }
    }
    if ((r->vk_sem_count = semaphores_used(r->seq)) > 0) {
        VkExportSemaphoreCreateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                          .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
        VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                    .pNext = r->seq->sem_mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD ? &ex : NULL};
        for (int i = 0; i < r->vk_sem_count; i++)
            if (vkCreateSemaphore(e->vk.device, &ci, NULL, &r->vk_sems[i]) != VK_SUCCESS)
                tap_bail("vkCreateSemaphore failed");
        /* One anchor for all of them: it runs its release once the last
         * semaphore (and the ring) let go of it, and the caller did. */
        r->sem_ka = clmem_keepalive_new(count_release, &r->sem_releases);
        if (!r->sem_ka)
            tap_bail("clmem_keepalive_new failed");
    }
}

/* After the steps and drop_all (which finished the bridge): the bridge must
 * have let go of everything it took from the caller. */
static void run_end(struct run *r)
{
    struct fault_env *e = r->e;
    int released = 0, probes_wrong = 0;

    /* The mapping the imports shared is gone: Vulkan lets us map it again
     * (the validation layer reports mapping memory that is mapped). */
    if (uses_memory(r->seq) && r->seq->path == CLMEM_BRIDGE_PATH_HOST_MAPPED) {
        void *p = NULL;
        VkResult vr = vkMapMemory(e->vk.device, r->o.memory.memory, 0, VK_WHOLE_SIZE, 0, &p);
        if (vr != VK_SUCCESS)
            problem(r, "mapping the memory after the bridge let go failed: %d", vr);
        else
            vkUnmapMemory(e->vk.device, r->o.memory.memory);
    }
    if (uses_memory(r->seq)) {
        /* Every import call's keepalive: released exactly once by now (the
         * bridge finished), and only after OpenCL destroyed the cl_mem. */
        for (int i = 0; i < r->probes_used; i++) {
            struct probe *p = &r->probes[i];
            int n = atomic_load(&p->released);
            if (n != 1) {
                if (!probes_wrong++)
                    problem(r, "import call %d's keepalive ran its release %d times after clmem_bridge_finish "
                               "returned, want once",
                            i + 1, n);
            } else if (p->watched && atomic_load(&p->destroyed_at_release) == 0) {
                if (!probes_wrong++)
                    problem(r, "import call %d's keepalive was released before OpenCL destroyed its cl_mem", i + 1);
            }
        }
        /* The probes no call took: the caller's reference is the only one. */
        for (int i = r->probes_used; i < NPROBES; i++) {
            clmem_keepalive_unref(r->probes[i].ka);
            r->probes[i].ka = NULL;
        }
    }
    /* The caller lets go: its anchor must run its release now, once: the
     * bridge finished, so no import holds it any more. */
    if (r->ka) {
        clmem_keepalive_unref(r->ka);
        r->ka = NULL;
        released = atomic_load(&r->o.released);
        if (released != 1)
            problem(r, "the caller's anchor on the memory ran its release %d times when the caller let go after "
                       "clmem_bridge_finish, want once",
                    released);
        if (released == 0 || probes_wrong)
            e->stranded++; /* see fault_env.stranded */
    }
    /* The same for the semaphores' anchor: every semaphore was dropped, and
     * no ring (nor a failed ring creation) kept a reference on one. */
    if (r->sem_ka) {
        clmem_keepalive_unref(r->sem_ka);
        r->sem_ka = NULL;
        released = atomic_load(&r->sem_releases);
        if (released != 1)
            problem(r, "the caller's anchor on the semaphores ran its release %d times when the caller let go "
                       "after clmem_bridge_finish, want once (a semaphore, or a ring holding one, is still alive)",
                    released);
        if (released == 0)
            e->stranded++; /* see fault_env.stranded */
        vkQueueWaitIdle(e->vk.queue);
        for (int i = 0; i < r->vk_sem_count; i++)
            vkDestroySemaphore(e->vk.device, r->vk_sems[i], NULL);
    }
    /* The test's reference; the Vulkan anchor's release dropped its own.
     * What a stranded import holds stays held. */
    clmem_bridge_unref(r->b);
    r->b = NULL;
}

/* One run: set up (nothing armed), the steps, cleanup, the leak checks, one
 * TAP point. Returns the passes through the point (for the dry run). */
int fault_run_case(struct fault_env *e, const struct fault_case *c, int nth, int passes, enum fault_mode mode)
{
    static struct run r; /* large */
    unsigned validation_before = vkctx_validation_errors();
    int count;

    run_begin(&r, e, c);
    count = run_steps(&r, nth, mode);
    drop_all(&r);
    if (mode == MODE_DROP)
        next_call(&r);
    run_end(&r);

    if (fd_count() != e->fds) {
        char extra[512];
        list_fds(extra, sizeof extra, e->fd_list);
        problem(&r, "%d fds open, %d before (new:%s)", fd_count(), e->fds, extra);
    }
    if (refs_settle(e) < 0) {
        char queues[128] = "";
        size_t used = 0;
        for (int i = 0; i < NQUEUES; i++)
            used += (size_t)snprintf(queues + used, sizeof queues - used, " %u (%u before)",
                                     cl_queue_refcount(e->queues[i]), e->queue_refs[i]);
        problem(&r, "the context's reference count is %u (%u before), the queues'%s, two seconds on",
                cl_context_refcount(e->f.context), e->context_refs, queues);
        /* What this run leaked stays leaked: judge the next runs on their own. */
        e->context_refs = cl_context_refcount(e->f.context);
        for (int i = 0; i < NQUEUES; i++)
            e->queue_refs[i] = cl_queue_refcount(e->queues[i]);
    }
    if (vkctx_validation_errors() != validation_before)
        problem(&r, "%u new validation errors", vkctx_validation_errors() - validation_before);

    if (mode == MODE_DRY)
        tap_ok(count > 0 && !r.problems[0], "%s, %s: reached %d time(s) with nothing armed%s%s", c->point,
               c->seq->name, count, r.problems[0] ? ": " : "", r.problems);
    else
        tap_ok(!r.problems[0], "%s pass %d/%d, %s: %s%s%s", c->point, nth, passes, mode_names[mode],
               r.report[0] ? r.report : "(no report)", r.problems[0] ? " | " : "; nothing lost", r.problems);
    return count;
}

/* One good run of a row's sequence, twice (as a DROP run's next call does),
 * no TAP point. */
void fault_warm_up(struct fault_env *e, const struct fault_case *c)
{
    static struct run r; /* large */

    run_begin(&r, e, c);
    run_steps(&r, 0, MODE_DRY);
    drop_all(&r);
    next_call(&r);
    run_end(&r);
    if (r.problems[0])
        tap_bail("the warm-up run of %s failed: %s", c->seq->name, r.problems);
}


/* ------------------------------------------ the driver's trial imports */

/* One import of plane 0 (as image_flags asks) of an image made as the
 * image sequences make theirs, on b; dropped and finished. CLMEM_OK, or
 * the failing call's status, with its message in why. */
clmem_status fault_image_trial(struct fault_env *e, clmem_bridge *b, clmem_bridge_path path, bool optimal,
                               VkFormat format, uint32_t image_flags, char *why, size_t why_len)
{
    clmem_bridge_vk_image image;
    clmem_handle *h = NULL;
    clmem_keepalive *ka;
    atomic_int released;
    clmem_status s = image_make(e, b, path, optimal, format, &image);

    if (s != CLMEM_OK) {
        snprintf(why, why_len, "clmem_bridge_vk_image_create: %s", clmem_error_message());
        return s;
    }
    atomic_init(&released, 0);
    if (!(ka = clmem_keepalive_new(count_release, &released)))
        tap_bail("clmem_keepalive_new failed");
    s = clmem_bridge_import_vk_image(b, &image, 0, path, ka, e->f.queue, CL_MEM_READ_WRITE, image_flags, &h);
    if (s != CLMEM_OK)
        snprintf(why, why_len, "clmem_bridge_import_vk_image: %s", clmem_error_message());
    clmem_keepalive_unref(ka);
    clmem_handle_unref(h);
    if (clmem_bridge_finish(b, SETTLE_NS) != CLMEM_OK || atomic_load(&released) != 1)
        tap_bail("a trial image import on the first bridge was not let go: %s", clmem_error_message());
    clmem_bridge_vk_image_destroy(b, &image);
    return s;
}
