/* SPDX-License-Identifier: MIT */
/* The teardown of an import, after its last handle went. The Vulkan
 * keepalives may be dropped only when all three hold:
 *  (a) every command enqueued before the last unref on every queue a
 *      handle was made for has completed: a marker on each queue;
 *  (b) the memory was handed back to Vulkan, if it was left acquired: the
 *      release is enqueued once the acquiring queue's marker completed
 *      (hand_back below says why not at once), and its event is waited for;
 *  (c) OpenCL destroyed the cl_mem: its destructor callback.
 * (c) alone is not enough: NVIDIA runs the destructor callback before the
 * kernels using the buffer completed (docs/driver-notes.md). So the
 * cl_mem is released only after (a) and (b),
 * which also keeps clReleaseMemObject from blocking (NVIDIA's blocks while
 * a kernel using the buffer runs), and the keepalives go in (c)'s callback.
 *
 * Nothing here waits for device work. The last clmem_handle_unref enqueues
 * what must run before the cl_mem goes (host-mapped: the unmap), lists the
 * import and hands it to the teardown thread (teardown-worker.h), which
 * enqueues the markers; clmem_bridge_finish() does so itself for an import
 * the thread has not reached. The release then runs on whichever thread
 * sees the last condition met: a marker's event callback, the destructor
 * callback (both driver threads), or clmem_bridge_finish(), which polls
 * the markers itself. Blocking fallbacks (clFinish, clWaitForEvents) are
 * taken only when an enqueue or callback registration fails. */
#include "config.h"
#include "fault.h"
#include "handoff.h"
#include "import-teardown.h"
#include "refcount.h"
#include "teardown-worker.h"

#include <stdlib.h>

void clmem__import_get(struct bridge_import *rec)
{
    atomic_fetch_add_explicit(&rec->refs, 1u, memory_order_relaxed);
}

/* The bridge's list of its imports that are tearing down (b->dying,
 * through next_dying, under b->lock), which clmem_bridge_finish() polls;
 * the bridge counts them (tearing_down). */
static void list_dying(struct bridge_import *rec)
{
    clmem_bridge *b = rec->bridge;

    pthread_mutex_lock(&b->lock);
    rec->next_dying = b->dying;
    b->dying = rec;
    pthread_mutex_unlock(&b->lock);
}

static void unlist_dying(struct bridge_import *rec)
{
    clmem_bridge *b = rec->bridge;
    struct bridge_import **p;

    pthread_mutex_lock(&b->lock);
    for (p = &b->dying; *p && *p != rec; p = &(*p)->next_dying)
        ;
    if (*p)
        *p = rec->next_dying;
    pthread_mutex_unlock(&b->lock);
}

/* The last of the record: its driver objects go, then the bridge's count
 * of teardowns drops, so that clmem_bridge_finish returns only once no
 * callback of this import is still due and nothing of it holds the
 * context (t/bridge/bridge-errors counts the context's references after it). */
static void record_free(struct bridge_import *rec)
{
    clmem_bridge *b = rec->bridge;
    bool listed = rec->listed_dying;

    for (unsigned i = 0; i < rec->marker_count; i++)
        clReleaseEvent(rec->markers[i]);
    if (rec->release_event)
        clReleaseEvent(rec->release_event);
    for (unsigned i = 0; i < rec->queue_count; i++)
        clReleaseCommandQueue(rec->queues[i]);
    free(rec->markers);
    free(rec->queues);
    clmem__anchor_set_drop_all(&rec->vk_anchors); /* empty unless (c) never came */
    pthread_mutex_destroy(&rec->lock);
    if (listed) { /* off the list; then the count drops, with the record's bridge reference */
        unlist_dying(rec);
        clmem__bridge_import_gone(b);
    } else
        clmem_bridge_unref(b);
    free(rec);
}

/* The record's own count: the teardown holds one, and each marker callback
 * that is still due holds one, so a late callback never sees it freed. */
void clmem__import_put(struct bridge_import *rec)
{
    if (atomic_fetch_sub_explicit(&rec->refs, 1u, memory_order_acq_rel) == 1u)
        record_free(rec);
}

/* (c) met, after (a) and (b): let go of the Vulkan side. The path's own
 * steps first (unmap before the memory can be freed, close the caller's fd),
 * then the keepalives. */
static void after_destroyed(struct bridge_import *rec)
{
    rec->ops->after_destroy(rec);
    clmem__anchor_set_drop_all(&rec->vk_anchors);
    clmem__import_put(rec);
}

/* (c) is met once every cl_mem the bridge watches is destroyed: the
 * parent and, where it is another object, the cl_mem the handles carry (a
 * sub-buffer or an image made from the buffer). NVIDIA runs destructor
 * callbacks on its own thread in no promised order: the parent's callback
 * was seen before the sub-buffer's (t/fault/fault-injection on the H200, a
 * keepalive dropped before the handles' cl_mem was destroyed), so one
 * callback alone does not say the handles' object is gone. */
static void CL_CALLBACK on_destroyed(cl_mem mem, void *user)
{
    struct bridge_import *rec = user;
    (void)mem;
    if (atomic_fetch_sub(&rec->destroy_pending, 1u) == 1u)
        after_destroyed(rec);
}

static clmem_status watch_destruction(struct bridge_import *rec, cl_mem mem)
{
    cl_int err = FAULT("clSetMemObjectDestructorCallback")
                     ? CL_OUT_OF_HOST_MEMORY
                     : clSetMemObjectDestructorCallback(mem, on_destroyed, rec);
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clSetMemObjectDestructorCallback", err,
                               "Chaining the Vulkan keepalive to the cl_mem's destruction failed.");
    atomic_fetch_add(&rec->destroy_pending, 1u);
    rec->destructor_set = true;
    return CLMEM_OK;
}

clmem_status clmem__import_arm_destructor(struct bridge_import *rec)
{
    cl_mem handed = clmem__import_handed_mem(rec);
    clmem_status s = watch_destruction(rec, rec->parent);

    if (s == CLMEM_OK && handed != rec->parent)
        s = watch_destruction(rec, handed);
    return s;
}

/* (a) and (b) met: release the cl_mem, exactly once, whoever sees it first. */
static void release_cl(struct bridge_import *rec)
{
    bool armed;

    if (atomic_exchange(&rec->cl_released, true))
        return;
    /* Read before the release: PoCL runs the destructor callback inside
     * clReleaseMemObject, and the callback may free rec. */
    armed = rec->destructor_set;
    if (rec->image) /* an image view first: it is made from the buffer below */
        clReleaseMemObject(rec->image);
    if (rec->view)
        clReleaseMemObject(rec->view);
    clReleaseMemObject(rec->parent);
    if (!armed) /* the import failed before the callback was set */
        after_destroyed(rec);
}

static void marker_done(struct bridge_import *rec)
{
    if (atomic_fetch_sub(&rec->markers_pending, 1u) == 1u)
        release_cl(rec);
}

static void CL_CALLBACK on_marker(cl_event event, cl_int status, void *user)
{
    struct bridge_import *rec = user;
    (void)event;
    (void)status; /* an errored command has ended too */
    marker_done(rec);
    clmem__import_put(rec);
}

/* marker_done once `ev` completed: through its callback, or, where the
 * callback cannot be set, by waiting here (the blocking fallback) when
 * this thread may block. In an event callback it may not (the spec leaves
 * blocking calls there undefined, and PoCL's queues stop): the teardown is
 * then completed by clmem_bridge_finish(), which polls the events itself. */
static void watch(struct bridge_import *rec, cl_event ev, bool may_block)
{
    cl_int err;

    clmem__import_get(rec); /* the callback's */
    err = FAULT("clSetEventCallback") ? CL_OUT_OF_HOST_MEMORY : clSetEventCallback(ev, CL_COMPLETE, on_marker, rec);
    if (err != CL_SUCCESS) {
        clmem__import_put(rec);
        if (!may_block)
            return;
        clWaitForEvents(1, &ev);
        marker_done(rec);
    }
}

static bool event_done(cl_event ev)
{
    cl_int status = CL_QUEUED;
    return clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) == CL_SUCCESS &&
           status <= CL_COMPLETE; /* complete, or ended with an error */
}

/*
 * (b) for memory left acquired: hand it back once everything enqueued on
 * the acquiring queue before the last unref has completed. Not at once:
 * NVIDIA's clEnqueueReleaseExternalMemObjectsKHR blocks the calling
 * thread while earlier commands on the queue wait on a user event (the
 * last unref took 100 ms and 3000 ms with a kernel gated that long:
 * t/bridge/bridge-lifetime on the H200), and on an idle queue it returns at once.
 * Runs on the acquiring queue's marker callback or in
 * clmem_bridge_finish, whichever sees the marker complete first; the
 * release's event then counts as the chain's marker. may_block is false
 * in the callback (watch() says why).
 */
static void hand_back(struct bridge_import *rec, bool may_block)
{
    cl_event rel = NULL;

    if (atomic_exchange(&rec->hand_back_claimed, true))
        return;
    /* A failed release is retried once, at once: an acquired external
     * cl_mem is never destroyed on NVIDIA. Never with a clFinish first:
     * this usually runs in an event callback, where the spec leaves
     * blocking calls undefined, and PoCL's queue stopped for good there
     * (t/fault/fakefd-fault-injection); the marker that started the hand-back
     * has completed anyway, so the queue has nothing before it to drain. */
    if (clmem__import_release_on(rec, rec->acquired_on, 0, NULL, &rel) != CLMEM_OK)
        clmem__import_release_on(rec, rec->acquired_on, 0, NULL, &rel);
    rec->ops->before_release(rec); /* host-mapped: its unmap waits for the hand-back's map; never blocks */
    clFlush(rec->acquired_on);
    rec->release_event = rel;
    atomic_store(&rec->hand_back_done, true);
    if (rel)
        watch(rec, rel, may_block);
    else
        marker_done(rec); /* the release failed twice: nothing left to wait for */
}

static void CL_CALLBACK on_acquired_queue_idle(cl_event event, cl_int status, void *user)
{
    struct bridge_import *rec = user;
    (void)event;
    (void)status;
    hand_back(rec, false);
    clmem__import_put(rec);
}

static void poll_teardown(struct bridge_import *rec)
{
    bool all = true;

    clmem__import_start_teardown(rec); /* unless the teardown thread already did, or is doing it */
    if (atomic_load(&rec->cl_released) || !atomic_load_explicit(&rec->markers_ready, memory_order_acquire))
        return;
    for (unsigned i = 0; i < rec->marker_count; i++) {
        bool done = event_done(rec->markers[i]);
        if (done && rec->hand_back && rec->markers[i] == rec->acquired_marker)
            hand_back(rec, true);
        all = all && done;
    }
    if (!all)
        return;
    if (rec->hand_back && (!atomic_load(&rec->hand_back_done) ||
                           (rec->release_event && !event_done(rec->release_event))))
        return;
    release_cl(rec);
}

/* (a): a marker on every queue, flushed so it reaches the device now. The
 * acquiring queue's marker, when the memory was left acquired, starts the
 * hand-back instead (which counts for it). */
static void enqueue_markers(struct bridge_import *rec)
{
    rec->markers = FAULT("teardown_markers_alloc") ? NULL : calloc(rec->queue_count, sizeof *rec->markers);
    for (unsigned i = 0; i < rec->queue_count; i++) {
        cl_command_queue q = rec->queues[i];
        bool starts_hand_back = rec->hand_back && q == rec->acquired_on;
        cl_event ev = NULL;
        cl_int err = !rec->markers                             ? CL_OUT_OF_HOST_MEMORY
                     : FAULT("clEnqueueMarkerWithWaitList") ? CL_OUT_OF_RESOURCES
                                                               : clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
        if (err != CL_SUCCESS) {
            clFinish(q); /* fallback: wait here for what the marker would have waited for */
            if (starts_hand_back)
                hand_back(rec, true);
            continue;
        }
        clFlush(q);
        rec->markers[rec->marker_count++] = ev;
        if (!starts_hand_back) {
            atomic_fetch_add(&rec->markers_pending, 1u);
            watch(rec, ev, true);
            continue;
        }
        rec->acquired_marker = ev;
        clmem__import_get(rec); /* the callback's */
        err = FAULT("clSetEventCallback") ? CL_OUT_OF_HOST_MEMORY
                                           : clSetEventCallback(ev, CL_COMPLETE, on_acquired_queue_idle, rec);
        if (err != CL_SUCCESS) {
            clmem__import_put(rec);
            clWaitForEvents(1, &ev);
            hand_back(rec, true);
        }
    }
}

/* The anchor's release: the import's last handle is gone. It enqueues what
 * must come before the markers in the caller's order, lists the import as
 * tearing down and hands it to the teardown thread, which enqueues the
 * markers (teardown-worker.h says why not here); an import that failed in
 * its own call starts here. */
void clmem__import_anchor_release(void *user)
{
    struct bridge_import *rec = user;
    clmem_bridge *b = rec->bridge;

    clmem__cache_forget(&b->cache, &rec->cache_entry);
    if (!rec->parent) { /* the import failed before OpenCL held anything */
        clmem__bridge_import_failed(b);
        clmem__import_put(rec);
        return;
    }
    /* One count for the start, so that no callback releases the cl_mem
     * before the markers are all enqueued; one for the hand-back, when the
     * memory was left acquired (b). And a reference for the start, which
     * clmem__teardown_worker_submit passes on: once listed, and once the
     * markers are ready, clmem_bridge_finish on another thread may complete
     * the teardown by polling (which does not wait for the start's count)
     * and free the record before the start's marker_done (TSan,
     * t/bridge/bridge-threads: a use after free). */
    clmem__import_get(rec);
    rec->hand_back = atomic_load(&rec->acquired);
    atomic_store(&rec->markers_pending, rec->hand_back ? 2u : 1u);
    /* What must run before the cl_mem goes stays on the caller's thread,
     * in the caller's order: the host-mapped path's unmap (the fd paths
     * have none) is enqueued before the caller's next command, not on
     * the teardown thread. On the H200 t/bridge/fakefd-bridge-stress crashed once
     * in four runs with it on the thread, where the next cycle's
     * clCreateBuffer on the same host memory could come before it (the
     * cause was not pinned down; 5 runs of 5 passed with it here). */
    if (!rec->hand_back)
        rec->ops->before_release(rec);
    rec->listed_dying = true;
    list_dying(rec);
    clmem__bridge_import_dying(b);
    if (rec->handed_out) {
        clmem__teardown_worker_submit(rec);
        return;
    }
    /* An import that failed part way, inside the call that made it: start
     * here, while the caller's queue is still valid. When listing that
     * queue failed, the import does not hold it, and the caller may release
     * it once the call returned (host-mapped unmaps on it). */
    clmem__import_start_teardown(rec);
    clmem__import_put(rec);
}

/* Once per import, by the teardown thread or by clmem_bridge_finish,
 * whichever claims it: (a)'s markers. Polling
 * (poll_teardown) reads the markers only once markers_ready
 * says they are all written. */
void clmem__import_start_teardown(struct bridge_import *rec)
{
    if (atomic_exchange(&rec->teardown_claimed, true))
        return;
    enqueue_markers(rec);
    atomic_store_explicit(&rec->markers_ready, true, memory_order_release);
    marker_done(rec);
}

void clmem__import_poll_dying(clmem_bridge *b)
{
    struct bridge_import *batch[16];
    unsigned n = 0;

    /* A reference for each, unless its count already reached zero. A
     * record stays listed until record_free takes this lock to unlist it,
     * so one whose last reference went on a driver thread between the
     * check of cl_released and here (a callback's release_cl and put,
     * while this thread was preempted) is found here at zero. Taking a
     * reference then brought the count back from zero and freed the
     * record twice (t/bridge/fakefd-bridge-opaque-fd on a loaded 2-core
     * machine: a use after free in record_free). Such a record is left to
     * the thread that is freeing it; until that thread has this lock, it
     * is still there to read. */
    pthread_mutex_lock(&b->lock);
    for (struct bridge_import *r = b->dying; r && n < 16; r = r->next_dying)
        if (!atomic_load(&r->cl_released) && refcount_get_unless_zero(&r->refs))
            batch[n++] = r;
    pthread_mutex_unlock(&b->lock);
    for (unsigned i = 0; i < n; i++) {
        poll_teardown(batch[i]);
        clmem__import_put(batch[i]);
    }
}
