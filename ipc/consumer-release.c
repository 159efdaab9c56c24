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
 * process. */
#include "config.h"
#include "consumer.h"
#include "deadline.h"
#include "sock.h"

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

/* Release the frames of `batch` (n of them) and tell the producer. */
static void release_batch(struct clmem_ipc_consumer *c, struct consumer_frame **batch, uint32_t n)
{
    clmem_handle *imports[CLMEM_IPC_MAX_FRAMES * IPC_MAX_PLANES];
    cl_uint count = 0;
    cl_event done = NULL;
    clmem_status st;

    for (uint32_t i = 0; i < n; i++)
        for (uint32_t p = 0; p < batch[i]->import_count; p++)
            imports[count++] = batch[i]->imports[p];
    st = clmem_bridge_release_many(c->bridge, count, imports, c->queue, 0, NULL, &done);
    if (st == CLMEM_OK) {
        cl_int err = clWaitForEvents(1, &done);
        if (err != CL_SUCCESS)
            st = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clWaitForEvents", err,
                                 "The release of %u frame%s for the producer ended in an error.", n, n == 1 ? "" : "s");
        clReleaseEvent(done);
    }
    if (st != CLMEM_OK) {
        /* The frames stay acquired: they cannot be the producer's again
         * (their imports' teardown hands them back to Vulkan at destroy).
         * The connection is dropped; the producer reclaims them once this
         * process is gone. */
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

void *clmem__ipc_consumer_release_thread(void *arg)
{
    struct clmem_ipc_consumer *c = arg;
    struct consumer_frame *batch[CLMEM_IPC_MAX_FRAMES];

    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->released && !c->stop)
            pthread_cond_wait(&c->cond, &c->lock);
        if (!c->released)
            break; /* stop, and nothing left */
        uint32_t n = 0;
        while (c->released && n < CLMEM_IPC_MAX_FRAMES) {
            batch[n++] = c->released;
            c->released = c->released->next_released;
        }
        if (!c->released)
            c->released_tail = &c->released;
        c->releasing += n;
        pthread_mutex_unlock(&c->lock);

        release_batch(c, batch, n);

        pthread_mutex_lock(&c->lock);
        c->releasing -= n;
        pthread_cond_broadcast(&c->cond);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}
