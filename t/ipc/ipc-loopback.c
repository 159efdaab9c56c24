/* SPDX-License-Identifier: MIT */
/* libclmem-ipc in one process, producer and consumer on the two ends of a
 * socketpair: every argument rule of the calls (a table walked by one
 * loop; on every error the socket stays the caller's), a stream of frames
 * with the producer on its own thread and the frames dropped on a third
 * (so that the release point runs where the caller drops, under TSan too),
 * the consumer's destroy refused while a frame is held, BYE giving lent
 * frames back at once, and the reclaim point where the consumer's process
 * cannot be watched (it is this one): frames come back reclaim_delay_ns
 * after the end of the connection, not before. t/ipc/xproc runs two processes. */
#define _GNU_SOURCE
#include "t/lib/bridge-fixture.h"
#include "clmem-ipc.h"
#include "t/lib/fd-count.h"
#include "t/lib/fd-watch.h"
#include "t/lib/tap.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FRAMES 4
#define FRAME_BYTES 65536
#define STREAM 40
#define TIMEOUT_NS UINT64_C(20000000000)

static struct vkctx vk;
static struct cl_fixture f;
static clmem_bridge *bridge;
static struct vk_owned mem;
static clmem_keepalive *mem_anchor;

static void pair(int sv[2])
{
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        tap_bail("socketpair failed");
}

static clmem_ipc_producer_info producer_info(int fd)
{
    return (clmem_ipc_producer_info){.size = sizeof(clmem_ipc_producer_info), .instance = vk.instance,
                                     .get_instance_proc_addr = fd_watch_get_instance_proc_addr,
                                     .physical_device = vk.physical_device, .device = vk.device, .socket_fd = fd};
}

static clmem_ipc_consumer_info consumer_info(int fd)
{
    return (clmem_ipc_consumer_info){.size = sizeof(clmem_ipc_consumer_info), .bridge = bridge,
                                     .instance = vk.instance, .physical_device = vk.physical_device,
                                     .queue = f.queue, .socket_fd = fd};
}

/* A producer offering `n` buffer frames of the test's allocation. */
static clmem_ipc_producer *producer_with(int fd, uint32_t n, uint64_t reclaim_delay_ns)
{
    clmem_ipc_producer_info info = producer_info(fd);
    clmem_ipc_producer *p;
    info.reclaim_delay_ns = reclaim_delay_ns;
    if (clmem_ipc_producer_create(&info, &p) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
    for (uint32_t i = 0; i < n; i++)
        if (clmem_ipc_producer_add_buffer(p, &mem.memory, CLMEM_IPC_MEMORY_TYPE_BY_FLAGS, i * FRAME_BYTES,
                                          FRAME_BYTES, 256, NULL) != CLMEM_OK)
            tap_bail("%s", clmem_error_message());
    return p;
}

/* ------------------------------------------------------------ the rules */

enum call { PRODUCER_CREATE, CONSUMER_CREATE, ADD_BUFFER, ADD_IMAGE };

struct rule_case {
    const char *name;
    enum call call;
    int variant;
    clmem_status want;
    const char *fragment;
};

static const struct rule_case rules[] = {
    {"producer: a NULL info", PRODUCER_CREATE, 0, CLMEM_ERR_NULL_POINTER, "info is NULL"},
    {"producer: size 0", PRODUCER_CREATE, 1, CLMEM_ERR_INVALID_VALUE, "info->size is 0"},
    {"producer: size 4097", PRODUCER_CREATE, 2, CLMEM_ERR_INVALID_VALUE, "info->size is 4097"},
    {"producer: a newer header's field set", PRODUCER_CREATE, 3, CLMEM_ERR_UNSUPPORTED, "a newer header's field"},
    {"producer: flags 0x1", PRODUCER_CREATE, 4, CLMEM_ERR_INVALID_VALUE, "flags 0x1"},
    {"producer: a pipe for a socket", PRODUCER_CREATE, 5, CLMEM_ERR_INVALID_VALUE, "is not a socket"},
    {"producer: a SOCK_STREAM socket", PRODUCER_CREATE, 6, CLMEM_ERR_INVALID_VALUE, "SOCK_SEQPACKET (5)"},
    {"producer: a socket not connected", PRODUCER_CREATE, 7, CLMEM_ERR_INVALID_VALUE, "is not connected"},
    {"producer: a NULL device", PRODUCER_CREATE, 8, CLMEM_ERR_NULL_POINTER, "info->device is NULL"},
    {"consumer: a NULL bridge", CONSUMER_CREATE, 0, CLMEM_ERR_NULL_POINTER, "info->bridge is NULL"},
    {"consumer: the dma-buf path", CONSUMER_CREATE, 1, CLMEM_ERR_INVALID_VALUE, "path 2"},
    {"consumer: host-pointer flags", CONSUMER_CREATE, 2, CLMEM_ERR_INVALID_VALUE, "host-pointer flags"},
    {"consumer: a queue of another context", CONSUMER_CREATE, 3, CLMEM_ERR_CONTEXT_MISMATCH, "not in the bridge's"},
    {"consumer: an out-of-order queue", CONSUMER_CREATE, 4, CLMEM_ERR_INVALID_VALUE, "out of order"},
    {"consumer: a SOCK_DGRAM socket", CONSUMER_CREATE, 5, CLMEM_ERR_INVALID_VALUE, "SOCK_SEQPACKET (5)"},
    {"consumer: size 8", CONSUMER_CREATE, 6, CLMEM_ERR_INVALID_VALUE, "info->size is 8"},
    {"add_buffer: size 0", ADD_BUFFER, 0, CLMEM_ERR_ZERO_SIZE, "size is 0"},
    {"add_buffer: memory not exportable", ADD_BUFFER, 1, CLMEM_ERR_UNSUPPORTED, "not exportable as an opaque fd"},
    {"add_buffer: a range past the allocation", ADD_BUFFER, 2, CLMEM_ERR_INVALID_VALUE, "ends past the allocation"},
    {"add_buffer: a row pitch above the size", ADD_BUFFER, 3, CLMEM_ERR_INVALID_VALUE, "row pitch 5000 is above"},
    {"add_buffer: memory type 99", ADD_BUFFER, 4, CLMEM_ERR_INVALID_VALUE, "memory_type_index 99"},
    {"add_buffer: memory of another VkDevice", ADD_BUFFER, 5, CLMEM_ERR_INVALID_VALUE, "another VkDevice"},
    {"add_buffer: flags no type has", ADD_BUFFER, 6, CLMEM_ERR_INVALID_VALUE, "none of the device's"},
    {"add_image: optimal tiling", ADD_IMAGE, 0, CLMEM_ERR_UNSUPPORTED, "as linear images"},
    {"add_image: a format the bridge does not share", ADD_IMAGE, 1, CLMEM_ERR_UNSUPPORTED, "VkFormat 23"},
    {"add_image: an NV12 chroma plane of full width", ADD_IMAGE, 2, CLMEM_ERR_INVALID_VALUE, "it must be 32x16"},
    {"add_image: rows past the plane", ADD_IMAGE, 3, CLMEM_ERR_INVALID_VALUE, "needs"},
};

/* The fd a rule case passes as the socket, and whether the call may own it. */
static int case_socket(const struct rule_case *k, int *other)
{
    int sv[2];
    *other = -1;
    if (k->call == PRODUCER_CREATE && k->variant == 5) {
        if (pipe2(sv, O_CLOEXEC) != 0)
            tap_bail("pipe2");
        *other = sv[1];
        return sv[0];
    }
    if ((k->call == PRODUCER_CREATE && k->variant == 6) || (k->call == CONSUMER_CREATE && k->variant == 5)) {
        if (socketpair(AF_UNIX, (k->variant == 6 ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0, sv) != 0)
            tap_bail("socketpair");
        *other = sv[1];
        return sv[0];
    }
    if (k->call == PRODUCER_CREATE && k->variant == 7)
        return socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    pair(sv);
    *other = sv[1];
    return sv[0];
}

/* run_rule's answer where the device cannot make the case's queue. */
#define NO_OUT_OF_ORDER_QUEUE ((clmem_status)-1)

static clmem_status run_rule(const struct rule_case *k, int fd)
{
    struct {
        clmem_ipc_producer_info info;
        unsigned char tail[8];
    } big = {producer_info(fd), {0}};
    clmem_ipc_producer_info pi = producer_info(fd);
    clmem_ipc_consumer_info ci = consumer_info(fd);
    clmem_ipc_producer *p = NULL;
    clmem_ipc_consumer *c = NULL;
    clmem_status st = CLMEM_OK;
    cl_int err;

    switch (k->call) {
    case PRODUCER_CREATE:
        switch (k->variant) {
        case 0: return clmem_ipc_producer_create(NULL, &p);
        case 1: pi.size = 0; break;
        case 2: pi.size = 4097; break;
        case 3:
            big.info.size = sizeof big;
            big.tail[3] = 1;
            return clmem_ipc_producer_create(&big.info, &p);
        case 4: pi.flags = 1; break;
        case 8: pi.device = VK_NULL_HANDLE; break;
        }
        st = clmem_ipc_producer_create(&pi, &p);
        break;
    case CONSUMER_CREATE: {
        cl_context other = NULL;
        cl_command_queue q = NULL;
        switch (k->variant) {
        case 0: ci.bridge = NULL; break;
        case 1: ci.path = CLMEM_BRIDGE_PATH_DMA_BUF; break;
        case 2: ci.mem_flags = CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR; break;
        case 3:
            other = clCreateContext(NULL, 1, &f.device, NULL, NULL, &err);
            ci.queue = q = clCreateCommandQueueWithProperties(other, f.device, NULL, &err);
            break;
        case 4: {
            cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
            ci.queue = q = clCreateCommandQueueWithProperties(f.context, f.device, props, &err);
            if (!q)
                return NO_OUT_OF_ORDER_QUEUE;
            break;
        }
        case 6: ci.size = 8; break;
        }
        st = clmem_ipc_consumer_create(&ci, &c);
        if (q)
            clReleaseCommandQueue(q);
        if (other)
            clReleaseContext(other);
        break;
    }
    case ADD_BUFFER:
    case ADD_IMAGE: {
        int sv[2];
        pair(sv);
        p = producer_with(sv[0], 0, 0);
        close(sv[1]);
        clmem_bridge_vk_memory m = mem.memory;
        clmem_bridge_vk_image img = {.memory = mem.memory, .size = FRAME_BYTES,
                                     .format = VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, .extent = {64, 32},
                                     .tiling = VK_IMAGE_TILING_LINEAR, .plane_count = 2,
                                     .planes = {{0, 2048, 64, 64, 32}, {4096, 1024, 64, 32, 16}}};
        if (k->call == ADD_BUFFER) {
            uint64_t size = FRAME_BYTES;
            uint32_t type = CLMEM_IPC_MEMORY_TYPE_BY_FLAGS, pitch = 0;
            switch (k->variant) {
            case 0: size = 0; break;
            case 1: m.export_types = 0; break;
            case 2: size = m.allocation_size + 1; break;
            case 3: size = 4096, pitch = 5000; break;
            case 4: type = 99; break;
            case 5: m.device = (VkDevice)(uintptr_t)0x1234; break;
            case 6: m.property_flags = 0x7f00; break;
            }
            st = clmem_ipc_producer_add_buffer(p, &m, type, 0, size, pitch, NULL);
        } else {
            switch (k->variant) {
            case 0: img.tiling = VK_IMAGE_TILING_OPTIMAL; break;
            case 1: img.format = VK_FORMAT_R8G8B8_UNORM; break;
            case 2: img.planes[1].width = 64; break;
            case 3: img.planes[0].row_pitch = 128; break;
            }
            st = clmem_ipc_producer_add_image(p, &img, CLMEM_IPC_MEMORY_TYPE_BY_FLAGS, NULL);
        }
        clmem_ipc_producer_destroy(p); /* closes sv[0], its socket */
        return st;
    }
    }
    if (p)
        clmem_ipc_producer_destroy(p);
    if (c)
        clmem_ipc_consumer_destroy(c, TIMEOUT_NS);
    return st;
}

static void argument_rules(void)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const struct rule_case *k = &rules[i];
        int other, fd = case_socket(k, &other);
        clmem_error_clear();
        clmem_status st = run_rule(k, fd);
        if (st == NO_OUT_OF_ORDER_QUEUE) {
            tap_skip("the OpenCL device makes no out-of-order queue", "%s", k->name);
            close(fd);
            if (other >= 0)
                close(other);
            continue;
        }
        bool ok = st == k->want && strstr(clmem_error_message(), k->fragment);
        if (k->call == PRODUCER_CREATE || k->call == CONSUMER_CREATE)
            ok = ok && fd_is_open(fd); /* on error the socket is still the caller's */
        tap_ok(ok, "%s: %s, saying \"%s\"%s", k->name, clmem_status_name(k->want), k->fragment,
               k->call <= CONSUMER_CREATE ? "; the socket stays the caller's, open" : "");
        if (!ok)
            tap_diag("  got %s: %s", clmem_status_name(st), clmem_error_message());
        close(fd);
        if (other >= 0)
            close(other);
    }

    int sv[2];
    uint32_t index = 0;
    pair(sv);
    clmem_ipc_producer *p = producer_with(sv[0], 0, 0);
    tap_ok(clmem_ipc_producer_start(p, 0) == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "no frame"),
           "start with no frame offered: CLMEM_ERR_INVALID_VALUE");
    tap_ok(clmem_ipc_producer_next(p, 0, &index) == CLMEM_ERR_INVALID_VALUE &&
               strstr(clmem_error_message(), "has not started"),
           "next before the handshake: CLMEM_ERR_INVALID_VALUE");
    tap_ok(clmem_ipc_producer_ready(p, 0, VK_NULL_HANDLE, 0) == CLMEM_ERR_INVALID_VALUE,
           "ready of a frame next() never gave: CLMEM_ERR_INVALID_VALUE");
    tap_ok(clmem_ipc_producer_wait_all(p, 0) == CLMEM_ERR_INVALID_VALUE &&
               clmem_ipc_producer_wait_all(NULL, 0) == CLMEM_ERR_NULL_POINTER,
           "wait_all before the handshake: CLMEM_ERR_INVALID_VALUE; with NULL: CLMEM_ERR_NULL_POINTER");
    tap_ok(clmem_ipc_producer_state(p) == CLMEM_IPC_STATE_NEW && clmem_ipc_producer_lent(p) == 0 &&
               clmem_ipc_producer_peer_path(p) == CLMEM_BRIDGE_PATH_BEST && clmem_ipc_producer_state(NULL) ==
               CLMEM_IPC_STATE_NEW,
           "a producer not started: state new, nothing lent, no peer path");
    clmem_ipc_producer_destroy(p);
    clmem_ipc_producer_destroy(NULL);
    close(sv[1]);
    tap_ok(!strcmp(clmem_ipc_state_name(CLMEM_IPC_STATE_PEER_GONE), "peer-gone") &&
               !strcmp(clmem_ipc_state_name((clmem_ipc_state)99), "unknown-state"),
           "state names");
}

/* ------------------------------------------------------------ a stream */

struct producer_run {
    clmem_ipc_producer *p;
    uint32_t frames_to_send;
    clmem_status start, end;
    uint32_t sent;
    char why[1024];
};

static clmem_status fail_run(struct producer_run *r, clmem_status st)
{
    snprintf(r->why, sizeof r->why, "%s", clmem_error_message());
    return st;
}

/* The producer's whole side: start, then frames, each filled with
 * 0x1000 + its sequence, then every frame back. */
static void *produce(void *arg)
{
    struct producer_run *r = arg;
    clmem_status st;
    r->start = clmem_ipc_producer_start(r->p, TIMEOUT_NS);
    if (r->start != CLMEM_OK) {
        fail_run(r, r->start);
        return NULL;
    }
    while (r->sent < r->frames_to_send) {
        uint32_t i;
        if ((st = clmem_ipc_producer_next(r->p, TIMEOUT_NS, &i)) != CLMEM_OK) {
            r->end = fail_run(r, st);
            return NULL;
        }
        if (vkctx_fill(&vk, mem.buffer, i * FRAME_BYTES, FRAME_BYTES, 0x1000u + r->sent) != VK_SUCCESS)
            tap_bail("vkctx_fill failed");
        if ((st = clmem_ipc_producer_ready(r->p, i, VK_NULL_HANDLE, 0)) != CLMEM_OK) {
            r->end = fail_run(r, st);
            return NULL;
        }
        r->sent++;
    }
    if ((st = clmem_ipc_producer_wait_all(r->p, TIMEOUT_NS)) != CLMEM_OK) {
        r->end = fail_run(r, st);
        return NULL;
    }
    r->end = clmem_ipc_producer_lent(r->p) == 0 ? CLMEM_OK : CLMEM_ERR_INVALID_VALUE;
    return NULL;
}

/* Frames the consumer read are dropped here, on another thread. */
struct dropper {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    clmem_ipc_frame queue[STREAM];
    int head, tail;
    bool done;
};

static void *drop_frames(void *arg)
{
    struct dropper *d = arg;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        while (d->head == d->tail && !d->done)
            pthread_cond_wait(&d->cond, &d->lock);
        if (d->head == d->tail)
            break;
        clmem_ipc_frame fr = d->queue[d->head++];
        pthread_mutex_unlock(&d->lock);
        clmem_handle_unref(fr.planes[0].handle);
        pthread_mutex_lock(&d->lock);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static void stream(void)
{
    int sv[2];
    struct producer_run r = {.frames_to_send = STREAM};
    struct dropper d = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    pthread_t producer, dropper;
    clmem_ipc_consumer *c;
    uint32_t got = 0, wrong = 0;
    bool pitched = true;

    pair(sv);
    r.p = producer_with(sv[0], FRAMES, 0);
    clmem_ipc_consumer_info ci = consumer_info(sv[1]);
    if (clmem_ipc_consumer_create(&ci, &c) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
    pthread_create(&producer, NULL, produce, &r);
    pthread_create(&dropper, NULL, drop_frames, &d);
    clmem_status st = clmem_ipc_consumer_start(c, TIMEOUT_NS);
    tap_ok(st == CLMEM_OK && clmem_ipc_consumer_state(c) == CLMEM_IPC_STATE_OPEN,
           "the handshake between two threads: the consumer imports %d frames through the %s path", FRAMES,
           clmem_bridge_path_name(clmem_ipc_consumer_path(c)));
    if (st != CLMEM_OK)
        tap_diag("  %s", clmem_error_message());
    for (;;) {
        clmem_ipc_frame fr;
        cl_event acquired = NULL;
        uint32_t word = 0;
        if (clmem_ipc_consumer_next(c, TIMEOUT_NS, &fr, &acquired) != CLMEM_OK) {
            tap_diag("  %s", clmem_error_message());
            break;
        }
        if (fr.plane_count == 0)
            break;
        /* Another queue of the context reads it, after the acquire's event. */
        clEnqueueReadBuffer(f.queue, clmem_handle_mem(fr.planes[0].handle), CL_TRUE, 4096, 4, &word, 1, &acquired,
                            NULL);
        clReleaseEvent(acquired);
        wrong += word != 0x1000u + (uint32_t)fr.sequence;
        pitched = pitched && fr.planes[0].row_pitch == 256 && clmem_handle_row_pitch(fr.planes[0].handle) == 256 &&
                  fr.planes[0].size == FRAME_BYTES && fr.format == VK_FORMAT_UNDEFINED;
        got++;
        pthread_mutex_lock(&d.lock);
        d.queue[d.tail++ % STREAM] = fr;
        pthread_cond_signal(&d.cond);
        pthread_mutex_unlock(&d.lock);
    }
    pthread_mutex_lock(&d.lock);
    d.done = true;
    pthread_cond_signal(&d.cond);
    pthread_mutex_unlock(&d.lock);
    pthread_join(dropper, NULL);
    pthread_join(producer, NULL);
    /* The producer has every frame back; its destroy sends BYE. */
    tap_ok(r.start == CLMEM_OK && r.end == CLMEM_OK && r.sent == STREAM,
           "the producer sent %u frames and had every one back (%s)", r.sent, r.why[0] ? r.why : "no error");
    clmem_ipc_producer_destroy(r.p);
    clmem_ipc_frame fr;
    st = clmem_ipc_consumer_next(c, TIMEOUT_NS, &fr, NULL);
    tap_ok(got == STREAM && wrong == 0 && pitched,
           "the consumer got %u frames, each with the producer's value and a handle of row pitch 256", got);
    tap_ok(st == CLMEM_OK && fr.plane_count == 0 && clmem_ipc_consumer_state(c) == CLMEM_IPC_STATE_ENDED,
           "after the producer's BYE: the end of the stream (CLMEM_OK, no plane), state ended");
    tap_ok(clmem_ipc_consumer_destroy(c, TIMEOUT_NS) == CLMEM_OK, "the consumer is destroyed");
}

/* The consumer's destroy while it holds a frame; BYE gives the rest back. */
static void held_and_bye(void)
{
    int sv[2];
    struct producer_run r = {.frames_to_send = 0};
    pthread_t producer;
    clmem_ipc_consumer *c;
    clmem_ipc_frame fr;
    uint32_t i, j;

    pair(sv);
    r.p = producer_with(sv[0], 2, 0);
    clmem_ipc_consumer_info ci = consumer_info(sv[1]);
    if (clmem_ipc_consumer_create(&ci, &c) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
    pthread_create(&producer, NULL, produce, &r); /* the handshake only */
    if (clmem_ipc_consumer_start(c, TIMEOUT_NS) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
    pthread_join(producer, NULL);
    clmem_ipc_producer_next(r.p, 0, &i);
    clmem_ipc_producer_ready(r.p, i, VK_NULL_HANDLE, 0);
    clmem_ipc_producer_next(r.p, 0, &j);
    clmem_ipc_producer_ready(r.p, j, VK_NULL_HANDLE, 0);
    tap_ok(clmem_ipc_producer_lent(r.p) == 2, "two frames lent");
    clmem_ipc_consumer_next(c, TIMEOUT_NS, &fr, NULL); /* the second READY stays unread */
    clmem_status st = clmem_ipc_consumer_destroy(c, TIMEOUT_NS);
    tap_ok(st == CLMEM_ERR_IN_USE &&
               strncmp(clmem_error_message(), "clmem_ipc_consumer_destroy: 1 frame handed out still has its handles",
                       68) == 0,
           "the consumer's destroy while it holds a frame: CLMEM_ERR_IN_USE, nothing changed: %s",
           clmem_error_message());
    tap_ok(clmem_ipc_consumer_state(c) == CLMEM_IPC_STATE_OPEN, "  ... the connection is still open");
    clmem_handle_unref(fr.planes[0].handle);
    tap_ok(clmem_ipc_consumer_destroy(c, TIMEOUT_NS) == CLMEM_OK,
           "once the frame is dropped, destroy waits for its release and FREE, sends BYE and frees the consumer");
    uint32_t back = 0;
    while (clmem_ipc_producer_next(r.p, 0, &i) == CLMEM_OK)
        back++;
    if (!tap_ok(back == 2 && clmem_ipc_producer_lent(r.p) == 0 &&
                    clmem_ipc_producer_state(r.p) == CLMEM_IPC_STATE_ENDED,
                "the producer has both frames back at once, the one freed and the one never read (BYE), state ended"))
        tap_diag("  %u back, %u lent, state %s: %s", back, clmem_ipc_producer_lent(r.p),
                 clmem_ipc_state_name(clmem_ipc_producer_state(r.p)), clmem_error_message());
    tap_ok(clmem_ipc_producer_ready(r.p, i, VK_NULL_HANDLE, 0) == CLMEM_ERR_INVALID_VALUE &&
               strstr(clmem_error_message(), "the connection is ended"),
           "ready after the consumer's BYE: CLMEM_ERR_INVALID_VALUE naming the state");
    clmem_ipc_producer_destroy(r.p);
}

/* The reclaim point where the consumer's process cannot be watched (it is
 * this process): reclaim_delay_ns after the end, not before. */
static void reclaim_by_delay(void)
{
    int sv[2];
    struct producer_run r = {.frames_to_send = 0};
    pthread_t producer;
    clmem_ipc_consumer *c;
    clmem_ipc_frame fr;
    uint32_t i;
    const uint64_t delay_ns = UINT64_C(300000000);

    pair(sv);
    r.p = producer_with(sv[0], 1, delay_ns);
    clmem_ipc_consumer_info ci = consumer_info(sv[1]);
    if (clmem_ipc_consumer_create(&ci, &c) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
    pthread_create(&producer, NULL, produce, &r);
    if (clmem_ipc_consumer_start(c, TIMEOUT_NS) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
    pthread_join(producer, NULL);
    clmem_ipc_producer_next(r.p, 0, &i);
    vkctx_fill(&vk, mem.buffer, i * FRAME_BYTES, FRAME_BYTES, 0x1000u);
    clmem_ipc_producer_ready(r.p, i, VK_NULL_HANDLE, 0);
    clmem_ipc_consumer_next(c, TIMEOUT_NS, &fr, NULL);

    /* The consumer's end goes away without BYE, its frame still held. */
    long long ended = tap_now_ns();
    shutdown(sv[1], SHUT_RDWR);
    clmem_status st = clmem_ipc_producer_wait_all(r.p, UINT64_C(150000000));
    tap_ok(st == CLMEM_ERR_TIMEOUT && strstr(clmem_error_message(), "1 frames were still lent") &&
               clmem_ipc_producer_state(r.p) == CLMEM_IPC_STATE_PEER_GONE && clmem_ipc_producer_lent(r.p) == 1,
           "the consumer's end closed: the producer sees it gone and keeps its frame lent for now (wait_all: %s)",
           clmem_status_name(st));
    st = clmem_ipc_producer_next(r.p, TIMEOUT_NS, &i);
    double ms = tap_ms_between(ended, tap_now_ns());
    tap_ok(st == CLMEM_OK && ms >= 300.0 && ms < 300.0 + tap_time_bound_ms(500, 5000),
           "the lent frame comes back reclaim_delay_ns (300 ms) after the end: %.1f ms", ms);
    tap_ok(clmem_ipc_producer_lent(r.p) == 0, "  ... nothing is lent any more");

    /* The consumer's frame stays valid; its FREE finds nobody. */
    uint32_t word = 0;
    clEnqueueReadBuffer(f.queue, clmem_handle_mem(fr.planes[0].handle), CL_TRUE, 0, 4, &word, 0, NULL, NULL);
    clmem_handle_unref(fr.planes[0].handle);
    tap_ok(clmem_ipc_consumer_destroy(c, TIMEOUT_NS) == CLMEM_OK,
           "the consumer whose producer is gone still reads and drops its frame and is destroyed");
    clmem_ipc_producer_destroy(r.p);
    tap_ok(word == 0x1000u, "  ... and its bytes are still the producer's (0x%x)", word);
}

/* A second listen on a path that a process listens on is refused, and
 * finding out changes nothing for the first: no connection waits at its
 * accept (a connect() to ask would be taken there for a consumer). Asked
 * by the absolute path and by a relative one. A socket file that nobody
 * listens on any more is replaced. */
static void listen_twice(void)
{
    char dir[] = "/tmp/clmem-listen.XXXXXX", path[64];
    int first = -1, second = -1, peer = -1, here;
    clmem_status s;

    if (!mkdtemp(dir) || (here = open(".", O_RDONLY | O_CLOEXEC)) < 0)
        tap_bail("mkdtemp or open(\".\") failed");
    snprintf(path, sizeof path, "%s/sock", dir);
    s = clmem_ipc_listen(path, &first);
    tap_ok(s == CLMEM_OK && first >= 0, "clmem_ipc_listen at a new path: %s",
           s == CLMEM_OK ? "listening" : clmem_error_message());
    s = clmem_ipc_listen(path, &second);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && second == -1 && strstr(clmem_error_message(), "listens on"),
           "a second clmem_ipc_listen on that path is refused: %s", clmem_error_message());
    if (chdir(dir) != 0)
        tap_bail("chdir %s failed", dir);
    s = clmem_ipc_listen("sock", &second);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && second == -1 && strstr(clmem_error_message(), "listens on"),
           "... and so is one by the path relative to its folder: %s", clmem_error_message());
    if (fchdir(here) != 0)
        tap_bail("fchdir back failed");
    close(here);
    s = clmem_ipc_accept(first, 50 * 1000000ull, &peer);
    tap_ok(s == CLMEM_ERR_TIMEOUT && peer == -1, "... and the first listener saw no connection (its accept: %s)",
           clmem_status_name(s));
    close(first); /* its socket file stays behind, as a killed producer's would */
    s = clmem_ipc_listen(path, &second);
    tap_ok(s == CLMEM_OK && second >= 0, "a socket file nobody listens on is replaced: %s",
           s == CLMEM_OK ? "listening" : clmem_error_message());
    if (second >= 0)
        close(second);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    bridge_open_vulkan(&vk);
    if (!vk.has_memory_fd)
        tap_skip_all("the Vulkan device %s has no VK_KHR_external_memory_fd: nothing to export", vk.device_name);
    cl_fixture_open_paired(&f, &vk);
    bridge = bridge_open(&vk, &f, 0);
    mem_anchor = vk_owned_new(&mem, bridge, &vk, FRAMES * FRAME_BYTES, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                              VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    int fds_before = fd_count();
    tap_watchdog("t/ipc/ipc-loopback", 300);

    argument_rules();
    listen_twice();
    stream();
    held_and_bye();
    reclaim_by_delay();

    tap_ok(bridge_settle(bridge) == CLMEM_OK, "clmem_bridge_finish: the consumer's imports are all torn down");
    clmem_keepalive_unref(mem_anchor); /* frees the frames' memory (a driver may hold its own fd of it till then) */
    bridge_settle(bridge);
    char list[512];
    tap_ok(fd_watch_open(list, sizeof list) == 0, "every memory fd the producers exported is closed (%u exported; "
                                                  "open: %s)", fd_watch_exported(), list);
    tap_diag("fds open: %d before, %d after", fds_before, fd_count());
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error%s",
               vk.validation ? "" : " (it is not installed or not enabled: nothing checked)");
    clmem_bridge_unref(bridge);
    cl_fixture_close(&f);
    vkctx_close(&vk);
    return tap_done();
}
