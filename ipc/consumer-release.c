/* SPDX-License-Identifier: MIT */
/* The release point: when the caller's last handle of a batch goes (a
 * frame from clmem_ipc_consumer_next(), or every frame of one
 * clmem_ipc_consumer_next_many()), its planes are released on the
 * consumer's queue after everything enqueued there before, and once that
 * release completed the producer is told the frames are free (FREE).
 *
 * The last unref only queues the batch for the consumer's thread, so that
 * it never blocks (NVIDIA's release can block its caller while earlier
 * commands on the queue wait) and costs the same whatever the queue holds.
 * The thread releases every frame queued since it last looked with one
 * clmem_bridge_release_many(), waits for that release on the host
 * (clWaitForEvents: an event callback came 20-36 ms late on NVIDIA, far too
 * late for a frame), and sends one FREE naming every one of them. Host
 * order on purpose: the producer's queue never waits on a signal of this
 * process.
 *
 * next() does the same work itself when it would otherwise only wait: the
 * producer holds no frame and none is pending, so nothing can come before
 * a FREE. Then the release does not wait for the thread to wake, which is
 * on the path of every frame at one frame in flight (about 11 us from the
 * last unref to the release on the CPU test machine). next() keeps its
 * deadline: it asks the release's event without blocking, for at most
 * HELP_WAIT_NS, and leaves a release that takes longer (work the caller
 * enqueued before the drop, behind a gate that opens late) to the thread,
 * which waits for it and sends the FREE. */
#include "config.h"
#include "consumer.h"
#include "deadline.h"
#include "sock.h"

#include <sched.h>
#include <string.h>
#include <sys/socket.h>

void clmem__ipc_consumer_frame_dropped(void *user)
{
    struct consumer_frame *first = user, *last = first;
    struct clmem_ipc_consumer *c = first->c;
    uint32_t n = 1;

    while (last->next_released) {
        last = last->next_released;
        n++;
    }
    pthread_mutex_lock(&c->lock);
    c->held -= n;
    *c->released_tail = first;
    c->released_tail = &last->next_released;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

/* The connection broke while the thread worked: record it for the caller's
 * next call, unless it is already over. */
static void connection_lost(struct clmem_ipc_consumer *c, clmem_ipc_state state)
{
    int open = CLMEM_IPC_STATE_OPEN;
    atomic_compare_exchange_strong(&c->state, &open, (int)state);
}

/* Release the n frames of `batch` on the consumer's queue: *done is the
 * release's event. On failure the frames stay acquired (they cannot be
 * the producer's again; their imports' teardown hands them back to Vulkan
 * at destroy) and the connection is dropped: the producer reclaims them
 * once this process is gone. */
static bool release_enqueue(struct clmem_ipc_consumer *c, struct consumer_frame **batch, uint32_t n, cl_event *done)
{
    clmem_handle *imports[CLMEM_IPC_MAX_FRAMES * IPC_MAX_PLANES];
    cl_uint count = 0;

    *done = NULL;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t p = 0; p < batch[i]->import_count; p++)
            imports[count++] = batch[i]->imports[p];
    clmem_status st = clmem_bridge_release_many(c->bridge, count, imports, c->queue, 0, NULL, done);
    if (st != CLMEM_OK) {
        clmem__ipc_send_error_and_shutdown(c->sock, st);
        connection_lost(c, CLMEM_IPC_STATE_DROPPED);
        return false;
    }
    return true;
}

/* Wait for the release's event `done` (taken) on the host, then tell the
 * producer the n frames of `batch` are free: one FREE. */
static void release_complete(struct clmem_ipc_consumer *c, struct consumer_frame **batch, uint32_t n, cl_event done)
{
    cl_int err = clWaitForEvents(1, &done);
    clReleaseEvent(done);
    if (err != CL_SUCCESS) {
        clmem_status st =
            clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clWaitForEvents", err,
                            "The release of %u frame%s for the producer ended in an error.", n, n == 1 ? "" : "s");
        clmem__ipc_send_error_and_shutdown(c->sock, st);
        connection_lost(c, CLMEM_IPC_STATE_DROPPED);
        return;
    }
    struct ipc_msg m = {.type = IPC_FREE};
    m.u.handoff.count = n;
    pthread_mutex_lock(&c->lock);
    for (uint32_t i = 0; i < n; i++) {
        /* With the producer again before it hears so: a READY for it may
         * follow the FREE at once. */
        c->proto.frames[batch[i]->index].state = FRAME_HELD;
        m.u.handoff.index[i] = batch[i]->index;
        m.u.handoff.sequence[i] = batch[i]->sequence;
    }
    pthread_mutex_unlock(&c->lock);
    if (atomic_load(&c->state) != CLMEM_IPC_STATE_OPEN)
        return; /* the producer is gone or the connection dropped: nobody to tell */
    enum send_result r = clmem__ipc_send(c->sock, &m, -1, deadline_after(IPC_SEND_WAIT_NS));
    /* SEND_GONE leaves the state alone: the producer closed its end,
     * maybe after a BYE still unread in the socket. next() reads every
     * message left before the end, and says which end it was. */
    if (r == SEND_BAD) {
        shutdown(c->sock, SHUT_RDWR);
        connection_lost(c, CLMEM_IPC_STATE_DROPPED);
    }
}

/* The frames of `batch` no longer count as releasing: destroy() may go on. */
static void release_done(struct clmem_ipc_consumer *c, uint32_t n)
{
    pthread_mutex_lock(&c->lock);
    c->releasing -= n;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

/* Take the frames dropped and not yet taken, up to a FREE's worth (under
 * c->lock); they count as releasing until release_done(). */
static uint32_t take_released(struct clmem_ipc_consumer *c, struct consumer_frame **batch)
{
    uint32_t n = 0;

    while (c->released && n < CLMEM_IPC_MAX_FRAMES) {
        batch[n++] = c->released;
        c->released = c->released->next_released;
    }
    if (!c->released)
        c->released_tail = &c->released;
    c->releasing += n;
    return n;
}

void *clmem__ipc_consumer_release_thread(void *arg)
{
    struct clmem_ipc_consumer *c = arg;
    struct consumer_frame *batch[CLMEM_IPC_MAX_FRAMES];

    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->released && !c->awaited.n && !c->stop)
            pthread_cond_wait(&c->cond, &c->lock);
        if (c->awaited.n) {
            /* A release next() enqueued and stopped waiting for. */
            struct awaited_release a = c->awaited;
            c->awaited.n = 0;
            pthread_mutex_unlock(&c->lock);
            release_complete(c, a.frames, a.n, a.done);
            release_done(c, a.n);
            pthread_mutex_lock(&c->lock);
            continue;
        }
        if (!c->released)
            break; /* stop, and nothing left */
        uint32_t n = take_released(c, batch);
        pthread_mutex_unlock(&c->lock);
        cl_event done;
        if (release_enqueue(c, batch, n, &done))
            release_complete(c, batch, n, done);
        release_done(c, n);
        pthread_mutex_lock(&c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* Whether the release's event completed (or failed: release_complete()
 * says how) before `until`, asked without blocking, yielding between. */
static bool completes_before(cl_event done, uint64_t until)
{
    for (;;) {
        cl_int status = CL_QUEUED;
        if (clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) != CL_SUCCESS ||
            status <= CL_COMPLETE)
            return true;
        if (clock_ns(CLOCK_MONOTONIC) >= until)
            return false;
        sched_yield();
    }
}

void clmem__ipc_consumer_release_if_idle(struct clmem_ipc_consumer *c, uint64_t deadline)
{
    struct consumer_frame *batch[CLMEM_IPC_MAX_FRAMES];
    uint32_t n = 0;

    pthread_mutex_lock(&c->lock);
    bool producer_holds_one = false;
    for (uint32_t i = 0; i < c->proto.frame_count && !producer_holds_one; i++)
        producer_holds_one = c->proto.frames[i].state == FRAME_HELD;
    if (!producer_holds_one && !c->awaited.n)
        n = take_released(c, batch);
    pthread_mutex_unlock(&c->lock);
    if (!n)
        return;

    cl_event done;
    if (!release_enqueue(c, batch, n, &done)) {
        release_done(c, n);
        return;
    }
    clFlush(c->queue); /* polling the event does not submit it; clWaitForEvents would */
    uint64_t until = deadline_after(HELP_WAIT_NS);
    if (completes_before(done, until < deadline ? until : deadline)) {
        release_complete(c, batch, n, done);
        release_done(c, n);
        return;
    }
    /* Longer than next() waits here: the thread finishes it. */
    pthread_mutex_lock(&c->lock);
    c->awaited.done = done;
    memcpy(c->awaited.frames, batch, n * sizeof *batch);
    c->awaited.n = n;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}
