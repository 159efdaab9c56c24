/* SPDX-License-Identifier: MIT */
/* The consumer's end (clmem-ipc.h): the handshake that imports the
 * producer's frames once, next() that turns each READY into acquired plane
 * handles, and destroy(). The release point is consumer-release.c's, the
 * imports consumer-import.c's. */
#include "config.h"
#include "error-private.h"
#include "consumer.h"
#include "deadline.h"
#include "export.h"
#include "opencl/query-cl.h"
#include "sock.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static clmem_ipc_state state_of(const struct clmem_ipc_consumer *c)
{
    return (clmem_ipc_state)atomic_load(&((struct clmem_ipc_consumer *)c)->state);
}

/* ------------------------------------------------------------ creation */

static clmem_status check_queue(const clmem_ipc_consumer_info *in)
{
    cl_context ctx = NULL;
    cl_int err = clGetCommandQueueInfo(in->queue, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL);
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", err,
                               "the queue cannot be queried.");
    if (ctx != clmem_bridge_context(in->bridge))
        return clmem__fail(CLMEM_ERR_CONTEXT_MISMATCH, "the queue is not in the bridge's context.");
    return clmem__cl_require_in_order(in->queue, "a frame's release must follow the work enqueued on it.");
}

static clmem_status check_info(const clmem_ipc_consumer_info *info, clmem_ipc_consumer_info *in)
{
    clmem_status st = clmem__ipc_check_info_size(info, info->size, sizeof *in, "clmem_ipc_consumer_info");

    if (st != CLMEM_OK)
        return st;
    memcpy(in, info, sizeof *in);
    if (!in->bridge || !in->instance || !in->physical_device || !in->queue)
        return clmem__null_arg(!in->bridge            ? "info->bridge"
                               : !in->instance        ? "info->instance"
                               : !in->physical_device ? "info->physical_device"
                                                      : "info->queue");
    if (in->flags)
        return clmem__ipc_no_flags(in->flags);
    if (in->path != CLMEM_BRIDGE_PATH_BEST && in->path != CLMEM_BRIDGE_PATH_OPAQUE_FD &&
        in->path != CLMEM_BRIDGE_PATH_HOST_MAPPED)
        return clmem__invalid("path %d; the producer's memory comes as opaque fds, which the "
                              "consumer takes on the opaque-fd or the host-mapped path (or BEST).",
                              (int)in->path);
    if (in->mem_flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))
        return clmem__invalid("mem_flags 0x%llx has host-pointer flags.", (unsigned long long)in->mem_flags);
    return check_queue(in);
}

static clmem_status ipc_consumer_create(const clmem_ipc_consumer_info *info, clmem_ipc_consumer **out)
{
    clmem_ipc_consumer_info in;
    clmem_ipc_consumer *c;
    clmem_status st;
    pthread_condattr_t ca;
    sigset_t all, old;

    if (out)
        *out = NULL;
    if (!info || !out)
        return clmem__null_arg(!info ? "info" : "out");
    if ((st = check_info(info, &in)) != CLMEM_OK || (st = clmem__ipc_socket_check(in.socket_fd)) != CLMEM_OK)
        return st;
    c = calloc(1, sizeof *c);
    if (!c)
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "allocating the consumer failed.");
    st = clmem__ipc_vk_load(&c->vk, in.get_instance_proc_addr, in.instance, in.physical_device,
                            clmem_bridge_vk_device(in.bridge));
    if (st != CLMEM_OK) {
        free(c);
        return st;
    }
    cl_int err = clRetainCommandQueue(in.queue);
    if (err != CL_SUCCESS) {
        free(c);
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clRetainCommandQueue", err,
                               "retaining the queue failed.");
    }
    c->bridge = clmem_bridge_ref(in.bridge);
    c->queue = in.queue;
    c->mem_flags = in.mem_flags ? in.mem_flags : CL_MEM_READ_WRITE;
    c->want_path = in.path;
    c->path = CLMEM_BRIDGE_PATH_BEST;
    c->physical_device = in.physical_device;
    c->sock = in.socket_fd;
    atomic_init(&c->state, CLMEM_IPC_STATE_NEW);
    clmem__ipc_proto_init(&c->proto, IPC_ROLE_CONSUMER);
    for (uint32_t i = 0; i < CLMEM_IPC_MAX_FRAMES; i++) {
        c->frames[i].c = c;
        c->frames[i].index = i;
    }
    c->released_tail = &c->released;
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &ca);
    pthread_condattr_destroy(&ca);

    /* The release thread takes no signal: they are the application's. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int perr = pthread_create(&c->thread, NULL, clmem__ipc_consumer_release_thread, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (perr) {
        pthread_cond_destroy(&c->cond);
        pthread_mutex_destroy(&c->lock);
        clReleaseCommandQueue(c->queue);
        clmem_bridge_unref(c->bridge);
        free(c);
        return clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_SYSTEM, "pthread_create", perr,
                               "the consumer's thread could not be made: %s.", strerror(perr));
    }
    *out = c;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_ipc_consumer_create(const clmem_ipc_consumer_info *info, clmem_ipc_consumer **out)
{
    return clmem__error_in(__func__, ipc_consumer_create(info, out));
}

/* ------------------------------------------------------------ the handshake */

/* Drop the connection for the error recorded (status st). */
static clmem_status drop(struct clmem_ipc_consumer *c, clmem_status st)
{
    clmem__ipc_send_error_and_shutdown(c->sock, st);
    atomic_store(&c->state, CLMEM_IPC_STATE_DROPPED);
    return st;
}

static clmem_status peer_error(struct clmem_ipc_consumer *c, const struct ipc_error *e)
{
    clmem_status st = e->status > CLMEM_OK && e->status <= CLMEM_ERR_TIMEOUT ? (clmem_status)e->status
                                                                              : CLMEM_ERR_INVALID_VALUE;
    shutdown(c->sock, SHUT_RDWR);
    atomic_store(&c->state, CLMEM_IPC_STATE_DROPPED);
    return clmem__fail(st, "The producer ended the connection: %s", e->text);
}

/* One message from the producer, which the protocol takes (RECV_BAD,
 * recorded, when it does not). */
static enum recv_result receive(struct clmem_ipc_consumer *c, uint64_t deadline, struct ipc_msg *m)
{
    int fd;
    pid_t pid;
    enum recv_result r = clmem__ipc_recv(c->sock, deadline, "producer", m, &fd, &pid);
    if (r == RECV_MESSAGE && clmem__ipc_proto_receive(&c->proto, m, fd) != CLMEM_OK)
        return RECV_BAD;
    return r;
}

/* How the handshake ends when the producer said or did `r`. */
static clmem_status handshake_ending(struct clmem_ipc_consumer *c, enum peer_result r, const struct ipc_msg *m)
{
    switch (r) {
    case PEER_MESSAGE: return CLMEM_OK;
    case PEER_ERROR: return peer_error(c, &m->u.error);
    case PEER_BAD: return drop(c, clmem_error_status());
    case PEER_BYE:
        atomic_store(&c->state, CLMEM_IPC_STATE_ENDED);
        return clmem__invalid("The producer said BYE during the handshake.");
    case PEER_GONE:
    case PEER_WAITING: break;
    }
    atomic_store(&c->state, CLMEM_IPC_STATE_PEER_GONE);
    return clmem__invalid("The producer closed the connection during the handshake.");
}

/* Wait for one message of the handshake, until the deadline. */
static clmem_status handshake_receive(struct clmem_ipc_consumer *c, uint64_t timeout_ns, uint64_t deadline,
                                      struct ipc_msg *m)
{
    enum peer_result r;

    do
        r = clmem__ipc_handshake_result(receive(c, deadline, m), m, "producer", timeout_ns, deadline);
    while (r == PEER_WAITING);
    return handshake_ending(c, r, m);
}

/* A send found the producer's end closed: why, from what it sent before. */
static clmem_status closed_during_handshake(struct clmem_ipc_consumer *c)
{
    struct ipc_msg m;

    return handshake_ending(c, clmem__ipc_recv_after_close(c->sock, "producer", &m), &m);
}

static clmem_status send_or_drop(struct clmem_ipc_consumer *c, const struct ipc_msg *m, uint64_t deadline)
{
    enum send_result r = clmem__ipc_send(c->sock, m, -1, deadline);
    if (r == SEND_OK)
        return CLMEM_OK;
    if (r == SEND_GONE)
        return closed_during_handshake(c);
    return drop(c, clmem_error_status());
}

static clmem_status handshake(struct clmem_ipc_consumer *c, uint64_t timeout_ns)
{
    uint64_t deadline = deadline_after(timeout_ns);
    struct ipc_msg m = {.type = IPC_HELLO};
    char mine[37], theirs[37];
    clmem_status st;

    m.u.hello.role = IPC_ROLE_CONSUMER;
    memcpy(m.u.hello.device_uuid, c->vk.device_uuid, IPC_UUID_BYTES);
    memcpy(m.u.hello.driver_uuid, c->vk.driver_uuid, IPC_UUID_BYTES);
    if ((st = send_or_drop(c, &m, deadline)) != CLMEM_OK ||
        (st = handshake_receive(c, timeout_ns, deadline, &m)) != CLMEM_OK)
        return st;
    /* The producer's HELLO (the only message proto.c lets through first). */
    if (memcmp(m.u.hello.device_uuid, c->vk.device_uuid, IPC_UUID_BYTES)) {
        clmem__ipc_format_uuid(m.u.hello.device_uuid, theirs);
        clmem__ipc_format_uuid(c->vk.device_uuid, mine);
        clmem__fail(CLMEM_ERR_DEVICE_MISMATCH,
                    "The producer's device (deviceUUID %s) is not the consumer's (%s, %s): its memory cannot be "
                    "shared here.",
                    theirs, mine, c->vk.device_name);
        return drop(c, CLMEM_ERR_DEVICE_MISMATCH);
    }
    if ((st = clmem__ipc_consumer_choose_path(c, &m.u.hello)) != CLMEM_OK)
        return drop(c, st);
    while (c->proto.phase != PHASE_OPEN)
        if ((st = handshake_receive(c, timeout_ns, deadline, &m)) != CLMEM_OK)
            return st;
    if ((st = clmem__ipc_consumer_import(c)) != CLMEM_OK)
        return drop(c, st);
    clmem__ipc_proto_close_fds(&c->proto); /* the imports hold the memory now */
    m = (struct ipc_msg){.type = IPC_ACCEPT};
    m.u.accept.path = (uint32_t)c->path;
    if ((st = send_or_drop(c, &m, deadline)) != CLMEM_OK) {
        clmem__ipc_consumer_drop_imports(c);
        return st;
    }
    atomic_store(&c->state, CLMEM_IPC_STATE_OPEN);
    return CLMEM_OK;
}

static clmem_status ipc_consumer_start(clmem_ipc_consumer *c, uint64_t timeout_ns)
{
    clmem_status st;
    if (!c)
        return clmem__null_arg("c");
    if (c->started)
        return clmem__ipc_started_twice(state_of(c));
    c->started = true;
    st = handshake(c, timeout_ns);
    if (st != CLMEM_OK) {
        clmem__ipc_proto_close_fds(&c->proto);
        c->path = CLMEM_BRIDGE_PATH_BEST;
    }
    return st;
}

CLMEM_EXPORT clmem_status clmem_ipc_consumer_start(clmem_ipc_consumer *c, uint64_t timeout_ns)
{
    return clmem__error_in(__func__, ipc_consumer_start(c, timeout_ns));
}

/* ------------------------------------------------------------ frames */

/* Frames of READYs received and not yet handed out. */
static void pending_push(struct clmem_ipc_consumer *c, uint32_t index)
{
    c->pending[(c->pending_head + c->pending_count) % CLMEM_IPC_MAX_FRAMES] = index;
    c->pending_count++;
}

static uint32_t pending_pop(struct clmem_ipc_consumer *c)
{
    uint32_t index = c->pending[c->pending_head];
    c->pending_head = (c->pending_head + 1) % CLMEM_IPC_MAX_FRAMES;
    c->pending_count--;
    return index;
}

static void release_event(cl_event *event_out)
{
    if (event_out && *event_out) {
        clReleaseEvent(*event_out);
        *event_out = NULL;
    }
}

/* Hand out the n frames fs as one batch: acquire all their imports with
 * one call, wrap each plane in a handle of its own, all of them holding one
 * anchor whose callback (the batch's last unref) is the release point. */
static clmem_status deliver(struct clmem_ipc_consumer *c, struct consumer_frame **fs, uint32_t n, clmem_ipc_frame *out,
                            cl_event *event_out)
{
    clmem_handle *imports[CLMEM_IPC_MAX_FRAMES * IPC_MAX_PLANES] = {NULL};
    cl_uint count = 0;

    for (uint32_t k = 0; k < n; k++) {
        for (uint32_t i = 0; i < fs[k]->import_count; i++)
            imports[count++] = fs[k]->imports[i];
        fs[k]->next_released = k + 1 < n ? fs[k + 1] : NULL; /* the batch's chain */
    }
    clmem_status st = clmem_bridge_acquire_many(c->bridge, count, imports, c->queue, 0, NULL, event_out);
    if (st != CLMEM_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", clmem_error_message());
        if (n == 1)
            clmem_error_set(st, clmem_error_api(), clmem_error_call(), clmem_error_native_code(),
                            "Acquiring frame %u for OpenCL failed: %s", fs[0]->index, why);
        else
            clmem_error_set(st, clmem_error_api(), clmem_error_call(), clmem_error_native_code(),
                            "Acquiring %u frames (from frame %u) for OpenCL failed: %s", n, fs[0]->index, why);
        return drop(c, st);
    }
    pthread_mutex_lock(&c->lock);
    c->held += n; /* the anchor's callback counts them down, whatever happens below */
    pthread_mutex_unlock(&c->lock);

    clmem_keepalive *anchor = clmem_keepalive_new(clmem__ipc_consumer_frame_dropped, fs[0]);
    if (!anchor) {
        clmem__ipc_consumer_frame_dropped(fs[0]); /* released and given back as if dropped */
        release_event(event_out);
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Out of memory for the anchor of frame %u.", fs[0]->index);
    }
    st = CLMEM_OK;
    for (uint32_t k = 0; k < n && st == CLMEM_OK; k++) {
        const struct ipc_frame *d = &c->proto.frames[fs[k]->index].desc;
        for (uint32_t i = 0; i < fs[k]->plane_count && st == CLMEM_OK; i++) {
            clmem_ipc_plane *p = &out[k].planes[i];
            st = clmem_handle_wrap(fs[k]->planes[i], c->queue, d->planes[i].row_pitch, anchor, &p->handle);
            p->size = d->planes[i].size;
            p->row_pitch = d->planes[i].row_pitch;
            p->width = d->planes[i].width;
            p->height = d->planes[i].height;
            p->texel_bytes = d->texel_bytes[i];
        }
        out[k].index = fs[k]->index;
        out[k].plane_count = fs[k]->plane_count;
        out[k].sequence = fs[k]->sequence;
        out[k].format = (VkFormat)d->format;
        out[k].width = d->width;
        out[k].height = d->height;
    }
    clmem_keepalive_unref(anchor); /* the handles hold it; with none (a failed wrap), this releases the batch */
    if (st != CLMEM_OK) {
        for (uint32_t k = 0; k < n; k++)
            for (uint32_t i = 0; i < IPC_MAX_PLANES; i++)
                clmem_handle_unref(out[k].planes[i].handle);
        memset(out, 0, n * sizeof *out);
        release_event(event_out);
        return st;
    }
    return CLMEM_OK;
}

/* Wait until the deadline for frames the producer handed over: CLMEM_OK
 * with at least one pending (READYs are read only while none is), or with
 * none at the end of the stream; the error otherwise. Frames received
 * before the producer's end (BYE, or its death) are still handed out; after
 * a drop nothing is. */
static clmem_status wait_pending(struct clmem_ipc_consumer *c, uint64_t timeout_ns, uint64_t deadline)
{
    for (;;) {
        clmem_ipc_state state = state_of(c);
        if (state == CLMEM_IPC_STATE_DROPPED || state == CLMEM_IPC_STATE_CLOSED)
            c->pending_count = 0;
        if (c->pending_count || state != CLMEM_IPC_STATE_OPEN)
            return CLMEM_OK; /* frames, or the end of the stream: none */
        struct ipc_msg m;
        int fd;
        pid_t pid;
        enum recv_result r = clmem__ipc_recv(c->sock, deadline, "producer", &m, &fd, &pid);
        if (r == RECV_TIMEOUT) {
            if (clock_ns(CLOCK_MONOTONIC) < deadline)
                continue;
            return clmem__fail(CLMEM_ERR_TIMEOUT, "no frame came within %s.", clmem__duration(timeout_ns).text);
        }
        if (r == RECV_EOF) {
            int open = CLMEM_IPC_STATE_OPEN;
            atomic_compare_exchange_strong(&c->state, &open, CLMEM_IPC_STATE_PEER_GONE);
            continue;
        }
        if (r == RECV_BAD)
            return drop(c, clmem_error_status());
        pthread_mutex_lock(&c->lock);
        clmem_status st = clmem__ipc_proto_receive(&c->proto, &m, fd);
        pthread_mutex_unlock(&c->lock);
        if (st != CLMEM_OK)
            return drop(c, st);
        if (m.type == IPC_READY) {
            for (uint32_t i = 0; i < m.u.handoff.count; i++) {
                c->frames[m.u.handoff.index[i]].sequence = m.u.handoff.sequence[i];
                pending_push(c, m.u.handoff.index[i]);
            }
            continue;
        }
        if (m.type == IPC_ERROR)
            return peer_error(c, &m.u.error);
        /* BYE: the stream ended (proto.c lets nothing else through now). */
        int open = CLMEM_IPC_STATE_OPEN;
        atomic_compare_exchange_strong(&c->state, &open, CLMEM_IPC_STATE_ENDED);
    }
}

static clmem_status ipc_consumer_next_many(clmem_ipc_consumer *c, uint64_t timeout_ns, uint32_t max,
                                           clmem_ipc_frame *frames_out, uint32_t *count_out, cl_event *event_out);

/* One frame: a batch of at most one (ipc_consumer_next_many, below); the
 * end of the stream leaves *frame_out zeroed, plane_count 0. */
static clmem_status ipc_consumer_next(clmem_ipc_consumer *c, uint64_t timeout_ns, clmem_ipc_frame *frame_out,
                                      cl_event *event_out)
{
    uint32_t count;

    if (frame_out)
        memset(frame_out, 0, sizeof *frame_out);
    if (event_out)
        *event_out = NULL;
    if (!c || !frame_out)
        return clmem__null_arg(!c ? "c" : "frame_out");
    return ipc_consumer_next_many(c, timeout_ns, 1, frame_out, &count, event_out);
}

CLMEM_EXPORT clmem_status clmem_ipc_consumer_next(clmem_ipc_consumer *c, uint64_t timeout_ns,
                                                  clmem_ipc_frame *frame_out, cl_event *event_out)
{
    return clmem__error_in(__func__, ipc_consumer_next(c, timeout_ns, frame_out, event_out));
}

static clmem_status ipc_consumer_next_many(clmem_ipc_consumer *c, uint64_t timeout_ns, uint32_t max,
                                           clmem_ipc_frame *frames_out, uint32_t *count_out, cl_event *event_out)
{
    uint64_t deadline = deadline_after(timeout_ns);
    struct consumer_frame *fs[CLMEM_IPC_MAX_FRAMES];

    if (count_out)
        *count_out = 0;
    if (event_out)
        *event_out = NULL;
    if (frames_out && max)
        memset(frames_out, 0, (max < CLMEM_IPC_MAX_FRAMES ? max : CLMEM_IPC_MAX_FRAMES) * sizeof *frames_out);
    if (!c || !frames_out || !count_out)
        return clmem__null_arg(!c ? "c" : !frames_out ? "frames_out" : "count_out");
    if (max == 0)
        return clmem__invalid("max is 0; it is how many frames frames_out has room for.");
    if (c->path == CLMEM_BRIDGE_PATH_BEST)
        return clmem__ipc_not_started("consumer", state_of(c));
    clmem_status st = wait_pending(c, timeout_ns, deadline);
    if (st != CLMEM_OK || c->pending_count == 0)
        return st; /* an error, or the end of the stream: *count_out 0 */
    uint32_t n = 0;
    while (c->pending_count && n < max)
        fs[n++] = &c->frames[pending_pop(c)];
    st = deliver(c, fs, n, frames_out, event_out);
    if (st == CLMEM_OK)
        *count_out = n;
    return st;
}

CLMEM_EXPORT clmem_status clmem_ipc_consumer_next_many(clmem_ipc_consumer *c, uint64_t timeout_ns, uint32_t max,
                                                       clmem_ipc_frame *frames_out, uint32_t *count_out,
                                                       cl_event *event_out)
{
    return clmem__error_in(__func__, ipc_consumer_next_many(c, timeout_ns, max, frames_out, count_out, event_out));
}

CLMEM_EXPORT clmem_ipc_state clmem_ipc_consumer_state(const clmem_ipc_consumer *c)
{
    return c ? state_of(c) : CLMEM_IPC_STATE_NEW;
}

CLMEM_EXPORT clmem_bridge_path clmem_ipc_consumer_path(const clmem_ipc_consumer *c)
{
    return c ? c->path : CLMEM_BRIDGE_PATH_BEST;
}

static clmem_status ipc_consumer_destroy(clmem_ipc_consumer *c, uint64_t timeout_ns)
{
    uint64_t deadline = deadline_after(timeout_ns);

    if (!c)
        return CLMEM_OK;
    pthread_mutex_lock(&c->lock);
    if (c->held) {
        uint32_t held = c->held;
        pthread_mutex_unlock(&c->lock);
        return clmem__fail(CLMEM_ERR_IN_USE,
                           "%u frame%s handed out still %s handles alive; drop them "
                           "first.",
                           held, held == 1 ? "" : "s", held == 1 ? "has its" : "have their");
    }
    while (c->released || c->releasing) {
        struct timespec ts;
        uint64_t d = deadline == UINT64_MAX ? clock_ns(CLOCK_MONOTONIC) + UINT64_C(1000000000) : deadline;
        ts.tv_sec = (time_t)(d / 1000000000u);
        ts.tv_nsec = (long)(d % 1000000000u);
        if (pthread_cond_timedwait(&c->cond, &c->lock, &ts) == ETIMEDOUT && clock_ns(CLOCK_MONOTONIC) >= deadline &&
            (c->released || c->releasing)) {
            pthread_mutex_unlock(&c->lock);
            return clmem__fail(CLMEM_ERR_TIMEOUT, "a release for the producer had not completed within %s.",
                               clmem__duration(timeout_ns).text);
        }
    }
    c->stop = true;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);

    /* Every release completed and every FREE went: BYE says the consumer
     * holds nothing, so the producer may take back at once any frame whose
     * READY is still unread here. */
    if (state_of(c) == CLMEM_IPC_STATE_OPEN) {
        struct ipc_msg m = {.type = IPC_BYE};
        (void)clmem__ipc_send(c->sock, &m, -1, deadline_after(IPC_SEND_WAIT_NS));
        atomic_store(&c->state, CLMEM_IPC_STATE_CLOSED);
    }
    clmem__ipc_consumer_drop_imports(c);
    clmem__ipc_proto_close_fds(&c->proto);
    close(c->sock);
    clReleaseCommandQueue(c->queue);
    clmem_bridge_unref(c->bridge);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_ipc_consumer_destroy(clmem_ipc_consumer *c, uint64_t timeout_ns)
{
    return clmem__error_in(__func__, ipc_consumer_destroy(c, timeout_ns));
}
