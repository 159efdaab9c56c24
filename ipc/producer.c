/* SPDX-License-Identifier: MIT */
/* The producer's end (clmem-ipc.h): the frames it offers, the handshake
 * that sends their fds and descriptions once, and the per-frame loop:
 * next() gives a frame Vulkan may write, ready() hands it over once the
 * writes completed. Nothing here waits on the consumer's GPU work, and no
 * queue of the producer's ever waits on a signal of the consumer's: frames
 * come back by FREE messages, or, from a consumer that is gone, by
 * reclaim.c's rule. */
#include "config.h"
#include "deadline.h"
#include "error-private.h"
#include "export.h"
#include "proto.h"
#include "reclaim.h"
#include "sock.h"
#include "vk.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct producer_alloc {
    VkDeviceMemory memory;
    uint64_t allocation_size;
    uint32_t memory_type_index;
    bool dedicated;
};

struct clmem_ipc_producer {
    struct ipc_vk vk;
    int sock;
    bool started;
    clmem_ipc_state state;
    struct proto proto; /* the frames' descriptions and states (proto.h) */
    struct producer_alloc allocs[CLMEM_IPC_MAX_ALLOCATIONS];
    uint32_t nallocs, nframes;
    /* Frames HELD and not handed out by next(), oldest first. */
    uint32_t free_fifo[CLMEM_IPC_MAX_FRAMES];
    uint32_t fifo_head, fifo_count;
    bool handed_out[CLMEM_IPC_MAX_FRAMES]; /* by next(), not yet given to ready() */
    struct reclaim reclaim;
};

/* ------------------------------------------------------------ creation */

static clmem_status ipc_producer_create(const clmem_ipc_producer_info *info, clmem_ipc_producer **out)
{
    clmem_ipc_producer_info in = {0};
    clmem_ipc_producer *p;
    clmem_status st;

    if (out)
        *out = NULL;
    if (!info || !out)
        return clmem__null_arg(!info ? "info" : "out");
    /* The versioned struct: its size says which fields to read. */
    if ((st = clmem__ipc_check_info_size(info, info->size, sizeof in, "clmem_ipc_producer_info")) != CLMEM_OK)
        return st;
    memcpy(&in, info, sizeof in);
    if (!in.instance || !in.physical_device || !in.device)
        return clmem__null_arg(!in.instance          ? "info->instance"
                               : !in.physical_device ? "info->physical_device"
                                                     : "info->device");
    if (in.flags)
        return clmem__ipc_no_flags(in.flags);
    if ((st = clmem__ipc_socket_check(in.socket_fd)) != CLMEM_OK)
        return st;

    p = calloc(1, sizeof *p);
    if (!p)
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "allocating the producer failed.");
    st = clmem__ipc_vk_load(&p->vk, in.get_instance_proc_addr, in.instance, in.physical_device, in.device);
    if (st == CLMEM_OK && !p->vk.fn.GetMemoryFdKHR)
        st = clmem__fail(CLMEM_ERR_UNSUPPORTED,
                         "vkGetMemoryFdKHR is not available on the device: enable "
                         "VK_KHR_external_memory_fd when creating it (clmem_bridge_device_extensions() names it).");
    if (st != CLMEM_OK) {
        free(p);
        return st;
    }
    p->sock = in.socket_fd;
    p->state = CLMEM_IPC_STATE_NEW;
    clmem__ipc_proto_init(&p->proto, IPC_ROLE_PRODUCER);
    clmem__ipc_reclaim_init(&p->reclaim,
                            in.reclaim_delay_ns ? in.reclaim_delay_ns : CLMEM_IPC_RECLAIM_DELAY_DEFAULT_NS);
    clmem__ipc_reclaim_connected(&p->reclaim, p->sock);
    *out = p;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_ipc_producer_create(const clmem_ipc_producer_info *info, clmem_ipc_producer **out)
{
    return clmem__error_in(__func__, ipc_producer_create(info, out));
}

/* ------------------------------------------------------------ offering */

/* The memory type the consumer must import with. */
static clmem_status memory_type(const clmem_ipc_producer *p, const clmem_bridge_vk_memory *m, uint32_t index,
                                uint32_t *out)
{
    const VkPhysicalDeviceMemoryProperties *mp = &p->vk.memory;
    if (index != CLMEM_IPC_MEMORY_TYPE_BY_FLAGS) {
        if (index >= mp->memoryTypeCount)
            return clmem__invalid("memory_type_index %u is past the device's %u memory types.", index,
                                  mp->memoryTypeCount);
        *out = index;
        return CLMEM_OK;
    }
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
        if (mp->memoryTypes[i].propertyFlags == m->property_flags) {
            *out = i;
            return CLMEM_OK;
        }
    return clmem__invalid(
        "CLMEM_IPC_MEMORY_TYPE_BY_FLAGS: none of the device's %u memory types has property flags 0x%x; "
        "name the memoryTypeIndex the memory was allocated with.",
        mp->memoryTypeCount, m->property_flags);
}

/* The allocation's index, adding it at its first frame. */
static clmem_status find_alloc(clmem_ipc_producer *p, const clmem_bridge_vk_memory *m, uint32_t type_index,
                               uint32_t *out)
{
    for (uint32_t i = 0; i < p->nallocs; i++)
        if (p->allocs[i].memory == m->memory) {
            if (p->allocs[i].allocation_size != m->allocation_size || p->allocs[i].memory_type_index != type_index)
                return clmem__invalid(
                    "The VkDeviceMemory of this frame was offered before with allocation size %llu and "
                    "memory type %u; now %llu and %u.",
                    (unsigned long long)p->allocs[i].allocation_size, p->allocs[i].memory_type_index,
                    (unsigned long long)m->allocation_size, type_index);
            *out = i;
            return CLMEM_OK;
        }
    if (p->nallocs == CLMEM_IPC_MAX_ALLOCATIONS)
        return clmem__invalid("A producer offers at most %d allocations.", CLMEM_IPC_MAX_ALLOCATIONS);
    p->allocs[p->nallocs] = (struct producer_alloc){m->memory, m->allocation_size, type_index, m->dedicated != 0};
    *out = p->nallocs++;
    return CLMEM_OK;
}

/* The checks both offers make on the memory, then the frame's slot. */
static clmem_status offer(clmem_ipc_producer *p, const clmem_bridge_vk_memory *m, uint32_t memory_type_index,
                          struct ipc_frame *f, uint32_t *index_out)
{
    clmem_status st;
    uint32_t type_index = 0, alloc = 0;

    if (p->started)
        return clmem__invalid("the producer has started; frames are offered before clmem_ipc_producer_start().");
    if (m->device != p->vk.device)
        return clmem__invalid("the memory belongs to another VkDevice than the producer's.");
    if (!(m->export_types & VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT))
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "the memory is not exportable as an opaque fd (export_types 0x%x): allocate it "
                           "with VkExportMemoryAllocateInfo and VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT.",
                           m->export_types);
    for (uint32_t i = 0; i < f->plane_count; i++)
        if (f->planes[i].offset > m->allocation_size || f->planes[i].size > m->allocation_size - f->planes[i].offset)
            return clmem__invalid("plane %u, %llu bytes at offset %llu, ends past the allocation's %llu bytes.", i,
                                  (unsigned long long)f->planes[i].size, (unsigned long long)f->planes[i].offset,
                                  (unsigned long long)m->allocation_size);
    if (p->nframes == CLMEM_IPC_MAX_FRAMES)
        return clmem__invalid("a producer offers at most %d frames.", CLMEM_IPC_MAX_FRAMES);
    if ((st = memory_type(p, m, memory_type_index, &type_index)) != CLMEM_OK ||
        (st = find_alloc(p, m, type_index, &alloc)) != CLMEM_OK)
        return st;
    f->index = p->nframes;
    f->allocation = alloc;
    p->proto.frames[f->index].desc = *f;
    p->proto.frames[f->index].state = FRAME_HELD;
    p->nframes++;
    if (index_out)
        *index_out = f->index;
    return CLMEM_OK;
}

static clmem_status ipc_producer_add_buffer(clmem_ipc_producer *p, const clmem_bridge_vk_memory *memory,
                                            uint32_t memory_type_index, VkDeviceSize offset, VkDeviceSize size,
                                            uint32_t row_pitch, uint32_t *index_out)
{
    struct ipc_frame f = {.format = VK_FORMAT_UNDEFINED, .plane_count = 1};

    if (!p || !memory || !memory->memory)
        return clmem__null_arg(!p ? "p" : !memory ? "memory" : "memory->memory");
    if (size == 0 || memory->allocation_size == 0)
        return clmem__fail(CLMEM_ERR_ZERO_SIZE, "%s is 0.", size == 0 ? "size" : "memory->allocation_size");
    if (row_pitch > size)
        return clmem__invalid("row pitch %u is above the frame's %llu bytes.", row_pitch, (unsigned long long)size);
    f.planes[0] = (struct ipc_plane){.offset = offset, .size = size, .row_pitch = row_pitch};
    return offer(p, memory, memory_type_index, &f, index_out);
}

CLMEM_EXPORT clmem_status clmem_ipc_producer_add_buffer(clmem_ipc_producer *p, const clmem_bridge_vk_memory *memory,
                                                        uint32_t memory_type_index, VkDeviceSize offset,
                                                        VkDeviceSize size, uint32_t row_pitch, uint32_t *index_out)
{
    return clmem__error_in(__func__,
                           ipc_producer_add_buffer(p, memory, memory_type_index, offset, size, row_pitch, index_out));
}

static clmem_status ipc_producer_add_image(clmem_ipc_producer *p, const clmem_bridge_vk_image *image,
                                           uint32_t memory_type_index, uint32_t *index_out)
{
    struct ipc_frame f = {0};
    uint8_t wire[IPC_MAX_MESSAGE_BYTES];
    struct ipc_msg m = {.type = IPC_FRAME}, checked;
    uint32_t texel = 0;

    if (!p || !image || !image->memory.memory)
        return clmem__null_arg(!p ? "p" : !image ? "image" : "image->memory.memory");
    if (image->memory.allocation_size == 0)
        return clmem__fail(CLMEM_ERR_ZERO_SIZE, "the allocation size is 0.");
    if (clmem_bridge_image_plane_format(image->format, 0, NULL, &texel) != CLMEM_OK)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "VkFormat %d is not one clmem-bridge shares (clmem_bridge_image_formats()).",
                           (int)image->format);
    if (image->tiling != VK_IMAGE_TILING_LINEAR)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "tiling %d; frames cross processes as linear images, whose planes' bytes are "
                           "defined (an optimal image's layout is the driver's).",
                           (int)image->tiling);
    if (image->plane_count < 1 || image->plane_count > IPC_MAX_PLANES)
        return clmem__invalid("plane_count %u.", image->plane_count);
    f.format = (uint32_t)image->format;
    f.width = image->extent.width;
    f.height = image->extent.height;
    f.plane_count = image->plane_count;
    for (uint32_t i = 0; i < image->plane_count; i++) {
        const clmem_bridge_vk_image_plane *pl = &image->planes[i];
        if (pl->row_pitch > UINT32_MAX)
            return clmem__invalid("plane %u's row pitch %llu is over 32 bits.", i, (unsigned long long)pl->row_pitch);
        f.planes[i] = (struct ipc_plane){.offset = pl->offset, .size = pl->size, .row_pitch = (uint32_t)pl->row_pitch,
                                         .width = pl->width, .height = pl->height};
    }
    /* The consumer's parser is the one judge of a frame's shape: run it on
     * the frame as it will cross, so that what it would refuse is refused
     * here, with the same sentence. */
    m.u.frame = f;
    size_t len = clmem__ipc_encode(&m, wire);
    if (clmem__ipc_parse(wire, len, 0, "producer", &checked) != CLMEM_OK) {
        return clmem_error_status(); /* the parser's sentence, as the consumer would say it */
    }
    f = checked.u.frame;
    return offer(p, &image->memory, memory_type_index, &f, index_out);
}

CLMEM_EXPORT clmem_status clmem_ipc_producer_add_image(clmem_ipc_producer *p, const clmem_bridge_vk_image *image,
                                                       uint32_t memory_type_index, uint32_t *index_out)
{
    return clmem__error_in(__func__, ipc_producer_add_image(p, image, memory_type_index, index_out));
}

/* ------------------------------------------------------------ the connection */

static void fifo_push(clmem_ipc_producer *p, uint32_t index)
{
    p->free_fifo[(p->fifo_head + p->fifo_count) % CLMEM_IPC_MAX_FRAMES] = index;
    p->fifo_count++;
}

/* The connection is over: `state` says how; lent frames wait for the
 * reclaim (at once after BYE). */
static void connection_over(clmem_ipc_producer *p, clmem_ipc_state state, bool bye)
{
    if (p->state != CLMEM_IPC_STATE_OPEN && p->state != CLMEM_IPC_STATE_NEW)
        return;
    p->state = state;
    p->proto.phase = PHASE_OVER;
    clmem__ipc_reclaim_ended(&p->reclaim, clock_ns(CLOCK_MONOTONIC), bye);
    for (uint32_t i = 0; i < p->nframes; i++)
        if (p->proto.frames[i].state == FRAME_LENT)
            p->proto.frames[i].state = FRAME_RECLAIMING;
}

/* Drop the connection for the error recorded (status st): tell the
 * consumer why, shut the socket down. Returns st. */
static clmem_status drop(clmem_ipc_producer *p, clmem_status st)
{
    clmem__ipc_send_error_and_shutdown(p->sock, st);
    connection_over(p, CLMEM_IPC_STATE_DROPPED, false);
    return st;
}

/* A status the peer sent in its ERROR, as ours: one we know, else
 * CLMEM_ERR_INVALID_VALUE. */
static clmem_status peer_status(int32_t s)
{
    return s > CLMEM_OK && s <= CLMEM_ERR_TIMEOUT ? (clmem_status)s : CLMEM_ERR_INVALID_VALUE;
}

/* One message from the consumer, until the deadline: RECV_MESSAGE after
 * proto.c accepted it (and the reclaim learned the pid), else what
 * happened, with the connection dropped for RECV_BAD. */
static enum recv_result receive(clmem_ipc_producer *p, uint64_t deadline, struct ipc_msg *m)
{
    int fd;
    pid_t pid;
    enum recv_result r = clmem__ipc_recv(p->sock, deadline, "consumer", m, &fd, &pid);
    if (r != RECV_MESSAGE)
        return r;
    clmem__ipc_reclaim_peer(&p->reclaim, pid);
    if (clmem__ipc_proto_receive(&p->proto, m, fd) != CLMEM_OK)
        return RECV_BAD;
    return RECV_MESSAGE;
}

static clmem_status refused(clmem_ipc_producer *p, const struct ipc_error *e)
{
    clmem_status st = peer_status(e->status);
    connection_over(p, CLMEM_IPC_STATE_DROPPED, false);
    shutdown(p->sock, SHUT_RDWR);
    return clmem__fail(st, "The consumer refused: %s", e->text);
}

/* The consumer's HELLO: the same device, or both sides refuse. */
static clmem_status check_consumer_hello(clmem_ipc_producer *p, const struct ipc_hello *h)
{
    char mine[37], theirs[37];
    if (!memcmp(h->device_uuid, p->vk.device_uuid, IPC_UUID_BYTES))
        return CLMEM_OK;
    clmem__ipc_format_uuid(p->vk.device_uuid, mine);
    clmem__ipc_format_uuid(h->device_uuid, theirs);
    return clmem__fail(CLMEM_ERR_DEVICE_MISMATCH,
                       "The consumer's device (deviceUUID %s) is not the producer's (%s, %s): its memory cannot "
                       "be shared there.",
                       theirs, mine, p->vk.device_name);
}

/* How the handshake ends when the consumer said or did `r`. */
static clmem_status handshake_ending(clmem_ipc_producer *p, enum peer_result r, const struct ipc_msg *m)
{
    switch (r) {
    case PEER_MESSAGE: return CLMEM_OK;
    case PEER_ERROR: return refused(p, &m->u.error);
    case PEER_BAD: return drop(p, clmem_error_status());
    case PEER_BYE:
        connection_over(p, CLMEM_IPC_STATE_ENDED, true);
        return clmem__invalid("The consumer said BYE during the handshake.");
    case PEER_GONE:
    case PEER_WAITING: break;
    }
    connection_over(p, CLMEM_IPC_STATE_PEER_GONE, false);
    return clmem__invalid("The consumer closed the connection during the handshake.");
}

/* A send found the consumer's end closed: why, from what it sent before. */
static clmem_status closed_during_handshake(clmem_ipc_producer *p)
{
    struct ipc_msg m;

    return handshake_ending(p, clmem__ipc_recv_after_close(p->sock, "consumer", &m), &m);
}

static clmem_status send_or_drop(clmem_ipc_producer *p, const struct ipc_msg *m, int fd, uint64_t deadline)
{
    enum send_result r = clmem__ipc_send(p->sock, m, fd, deadline);
    if (r == SEND_OK)
        return CLMEM_OK;
    if (r == SEND_GONE)
        return closed_during_handshake(p);
    return drop(p, clmem_error_status());
}

/* Send every ALLOC with its fd (exported here, closed once sent) and every
 * FRAME. */
static clmem_status send_frames(clmem_ipc_producer *p, uint64_t deadline)
{
    clmem_status st;
    for (uint32_t i = 0; i < p->nallocs; i++) {
        VkMemoryGetFdInfoKHR gi = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                   .memory = p->allocs[i].memory,
                                   .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
        int fd = -1;
        VkResult vr = p->vk.fn.GetMemoryFdKHR(p->vk.device, &gi, &fd);
        if (vr != VK_SUCCESS)
            return drop(p, clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkGetMemoryFdKHR", vr,
                                           "Exporting allocation %u (%llu bytes) as an opaque fd failed.", i,
                                           (unsigned long long)p->allocs[i].allocation_size));
        struct ipc_msg m = {.type = IPC_ALLOC};
        m.u.alloc = (struct ipc_alloc){.index = i,
                                       .handle_type = IPC_HANDLE_OPAQUE_FD,
                                       .allocation_size = p->allocs[i].allocation_size,
                                       .memory_type_index = p->allocs[i].memory_type_index,
                                       .flags = p->allocs[i].dedicated ? IPC_ALLOC_DEDICATED : 0};
        st = send_or_drop(p, &m, fd, deadline);
        close(fd); /* SCM_RIGHTS gave the consumer its own reference to the memory */
        if (st != CLMEM_OK)
            return st;
    }
    for (uint32_t i = 0; i < p->nframes; i++) {
        struct ipc_msg m = {.type = IPC_FRAME};
        m.u.frame = p->proto.frames[i].desc;
        if ((st = send_or_drop(p, &m, -1, deadline)) != CLMEM_OK)
            return st;
    }
    return CLMEM_OK;
}

/* Wait for one message of the handshake, until the deadline. */
static clmem_status handshake_receive(clmem_ipc_producer *p, uint64_t timeout_ns, uint64_t deadline, struct ipc_msg *m)
{
    enum peer_result r;

    do
        r = clmem__ipc_handshake_result(receive(p, deadline, m), m, "consumer", timeout_ns, deadline);
    while (r == PEER_WAITING);
    return handshake_ending(p, r, m);
}

static clmem_status ipc_producer_start(clmem_ipc_producer *p, uint64_t timeout_ns)
{
    uint64_t deadline = deadline_after(timeout_ns);
    struct ipc_msg m = {.type = IPC_HELLO};
    clmem_status st;

    if (!p)
        return clmem__null_arg("p");
    if (p->started)
        return clmem__ipc_started_twice(p->state);
    if (p->nframes == 0)
        return clmem__invalid("no frame was offered.");
    p->started = true;
    p->proto.frame_count = p->nframes;
    p->proto.allocation_count = p->nallocs;

    m.u.hello.role = IPC_ROLE_PRODUCER;
    memcpy(m.u.hello.device_uuid, p->vk.device_uuid, IPC_UUID_BYTES);
    memcpy(m.u.hello.driver_uuid, p->vk.driver_uuid, IPC_UUID_BYTES);
    m.u.hello.allocation_count = p->nallocs;
    m.u.hello.frame_count = p->nframes;
    if ((st = send_or_drop(p, &m, -1, deadline)) != CLMEM_OK)
        return st;
    if ((st = handshake_receive(p, timeout_ns, deadline, &m)) != CLMEM_OK)
        return st;
    /* proto.c let only a consumer's HELLO through in this phase. */
    if ((st = check_consumer_hello(p, &m.u.hello)) != CLMEM_OK)
        return drop(p, st);
    if ((st = send_frames(p, deadline)) != CLMEM_OK)
        return st;
    if ((st = handshake_receive(p, timeout_ns, deadline, &m)) != CLMEM_OK)
        return st;
    /* The ACCEPT (the only message proto.c lets through now). */
    p->state = CLMEM_IPC_STATE_OPEN;
    for (uint32_t i = 0; i < p->nframes; i++)
        fifo_push(p, i);
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_ipc_producer_start(clmem_ipc_producer *p, uint64_t timeout_ns)
{
    return clmem__error_in(__func__, ipc_producer_start(p, timeout_ns));
}

/* ------------------------------------------------------------ frames */

/* Read what the consumer sent, without waiting: FREEs put frames back,
 * BYE and the end of the connection start the reclaim. CLMEM_OK, or the
 * consumer broke the protocol (recorded; the connection is dropped). */
static clmem_status pump(clmem_ipc_producer *p, uint64_t deadline)
{
    while (p->state == CLMEM_IPC_STATE_OPEN) {
        struct ipc_msg m;
        enum recv_result r = receive(p, deadline, &m);
        if (r == RECV_TIMEOUT)
            return CLMEM_OK;
        if (r == RECV_EOF) {
            connection_over(p, CLMEM_IPC_STATE_PEER_GONE, false);
            return CLMEM_OK;
        }
        if (r == RECV_BAD)
            return drop(p, clmem_error_status());
        if (m.type == IPC_FREE)
            for (uint32_t i = 0; i < m.u.handoff.count; i++)
                fifo_push(p, m.u.handoff.index[i]); /* proto.c set them HELD */
        else if (m.type == IPC_BYE)
            connection_over(p, CLMEM_IPC_STATE_ENDED, true);
        else if (m.type == IPC_ERROR) {
            clmem_status st = refused(p, &m.u.error);
            (void)st; /* recorded; the frames it held wait for the reclaim */
            return CLMEM_OK;
        }
        deadline = 0; /* after the first message, only what is already there */
    }
    return CLMEM_OK;
}

/* Frames whose reclaim fell due are the producer's again. Returns when the
 * next one falls due (UINT64_MAX: none pending, or waiting for the
 * consumer's exit). */
static uint64_t reclaim(clmem_ipc_producer *p, uint64_t now)
{
    bool pending = false;
    for (uint32_t i = 0; i < p->nframes; i++)
        pending = pending || p->proto.frames[i].state == FRAME_RECLAIMING;
    if (!pending)
        return UINT64_MAX;
    uint64_t due = clmem__ipc_reclaim_due(&p->reclaim, now);
    if (due > now)
        return due;
    for (uint32_t i = 0; i < p->nframes; i++)
        if (p->proto.frames[i].state == FRAME_RECLAIMING) {
            p->proto.frames[i].state = FRAME_HELD;
            fifo_push(p, i);
        }
    return UINT64_MAX;
}

/* Read messages and reclaim frames until done(p) holds or the deadline
 * passes, waiting on the socket, the consumer's exit and the reclaim's due
 * time. CLMEM_OK, CLMEM_ERR_TIMEOUT (not recorded: the caller says what it
 * waited for), the producer has not started (recorded), or the consumer
 * broke the protocol (recorded). */
static clmem_status wait_until(clmem_ipc_producer *p, uint64_t deadline, bool (*done)(const clmem_ipc_producer *))
{
    clmem_status st;

    if (!p->proto.accepted_path) /* set by the consumer's ACCEPT, the handshake's end */
        return clmem__ipc_not_started("producer", p->state);
    for (;;) {
        if ((st = pump(p, 0)) != CLMEM_OK)
            return st;
        uint64_t now = clock_ns(CLOCK_MONOTONIC);
        uint64_t due = reclaim(p, now);
        if (done(p))
            return CLMEM_OK;
        if (now >= deadline)
            return CLMEM_ERR_TIMEOUT;
        struct pollfd fds[2];
        nfds_t n = 0;
        if (p->state == CLMEM_IPC_STATE_OPEN)
            fds[n++] = (struct pollfd){.fd = p->sock, .events = POLLIN};
        int exit_fd = clmem__ipc_reclaim_fd(&p->reclaim);
        if (exit_fd >= 0)
            fds[n++] = (struct pollfd){.fd = exit_fd, .events = POLLIN};
        if (poll(fds, n, poll_ms_until(due < deadline ? due : deadline)) < 0 && errno != EINTR)
            return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "poll", errno, "poll failed: %s.",
                                   strerror(errno));
    }
}

static bool has_free_frame(const clmem_ipc_producer *p)
{
    return p->fifo_count > 0;
}

static bool nothing_lent(const clmem_ipc_producer *p)
{
    return clmem_ipc_producer_lent(p) == 0;
}

/* One frame: a batch of at most one (ipc_producer_next_many, below). */
static clmem_status ipc_producer_next_many(clmem_ipc_producer *p, uint64_t timeout_ns, uint32_t max,
                                           uint32_t *indices_out, uint32_t *count_out);

static clmem_status ipc_producer_next(clmem_ipc_producer *p, uint64_t timeout_ns, uint32_t *index_out)
{
    uint32_t count;

    if (!p || !index_out)
        return clmem__null_arg(!p ? "p" : "index_out");
    return ipc_producer_next_many(p, timeout_ns, 1, index_out, &count);
}

CLMEM_EXPORT clmem_status clmem_ipc_producer_next(clmem_ipc_producer *p, uint64_t timeout_ns, uint32_t *index_out)
{
    return clmem__error_in(__func__, ipc_producer_next(p, timeout_ns, index_out));
}

static clmem_status ipc_producer_next_many(clmem_ipc_producer *p, uint64_t timeout_ns, uint32_t max,
                                           uint32_t *indices_out, uint32_t *count_out)
{
    if (count_out)
        *count_out = 0;
    if (!p || !indices_out || !count_out)
        return clmem__null_arg(!p ? "p" : !indices_out ? "indices_out" : "count_out");
    if (max == 0)
        return clmem__invalid("max is 0; it is how many frames indices_out has room for.");
    clmem_status st = wait_until(p, deadline_after(timeout_ns), has_free_frame);
    if (st == CLMEM_ERR_TIMEOUT)
        return clmem__fail(CLMEM_ERR_TIMEOUT, "no frame came back within %s (%u lent, the connection is %s).",
                           clmem__duration(timeout_ns).text, clmem_ipc_producer_lent(p),
                           clmem_ipc_state_name(p->state));
    if (st != CLMEM_OK)
        return st;
    while (p->fifo_count > 0 && *count_out < max) {
        uint32_t index = p->free_fifo[p->fifo_head];
        p->fifo_head = (p->fifo_head + 1) % CLMEM_IPC_MAX_FRAMES;
        p->fifo_count--;
        p->handed_out[index] = true;
        indices_out[(*count_out)++] = index;
    }
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_ipc_producer_next_many(clmem_ipc_producer *p, uint64_t timeout_ns, uint32_t max,
                                                       uint32_t *indices_out, uint32_t *count_out)
{
    return clmem__error_in(__func__, ipc_producer_next_many(p, timeout_ns, max, indices_out, count_out));
}

static clmem_status ipc_producer_wait_all(clmem_ipc_producer *p, uint64_t timeout_ns)
{
    if (!p)
        return clmem__null_arg("p");
    clmem_status st = wait_until(p, deadline_after(timeout_ns), nothing_lent);
    if (st == CLMEM_ERR_TIMEOUT)
        return clmem__fail(CLMEM_ERR_TIMEOUT, "%u frames were still lent after %s (the connection is %s).",
                           clmem_ipc_producer_lent(p), clmem__duration(timeout_ns).text,
                           clmem_ipc_state_name(p->state));
    return st;
}

CLMEM_EXPORT clmem_status clmem_ipc_producer_wait_all(clmem_ipc_producer *p, uint64_t timeout_ns)
{
    return clmem__error_in(__func__, ipc_producer_wait_all(p, timeout_ns));
}

/* The connection is not open: the frames were not handed over. */
static clmem_status still_the_producers(const clmem_ipc_producer *p, const char *what, uint32_t count)
{
    return clmem__invalid("the connection is %s; %s stay%s the producer's.", clmem_ipc_state_name(p->state), what,
                          count == 1 ? "s" : "");
}

/* Hand `count` frames to the consumer in one READY, once `fence` signalled
 * (their writes completed). The sentences name them ("frame 3", "4
 * frames"). Nothing changes unless the READY went. */
static clmem_status hand_over(clmem_ipc_producer *p, uint32_t count, const uint32_t *indices, VkFence fence,
                              uint64_t timeout_ns)
{
    char what[32]; /* the frames, as the sentences name them */

    if (count == 1)
        snprintf(what, sizeof what, "frame %u", indices[0]);
    else
        snprintf(what, sizeof what, "%u frames", count);
    if (fence != VK_NULL_HANDLE) {
        VkResult vr = p->vk.fn.WaitForFences(p->vk.device, 1, &fence, VK_TRUE, timeout_ns);
        if (vr == VK_TIMEOUT)
            return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_VULKAN, "vkWaitForFences", vr,
                                   "the fence of %s did not signal within %s.", what, clmem__duration(timeout_ns).text);
        if (vr != VK_SUCCESS)
            return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkWaitForFences", vr,
                                   "waiting for the fence of %s failed.", what);
    }
    /* Learn of a consumer that left before telling it anything. */
    clmem_status st = pump(p, 0);
    if (st != CLMEM_OK)
        return st;
    if (p->state != CLMEM_IPC_STATE_OPEN)
        return still_the_producers(p, what, count);

    struct ipc_msg m = {.type = IPC_READY};
    m.u.handoff.count = count;
    for (uint32_t i = 0; i < count; i++) {
        m.u.handoff.index[i] = indices[i];
        m.u.handoff.sequence[i] = p->proto.next_sequence + i;
    }
    enum send_result r = clmem__ipc_send(p->sock, &m, -1, deadline_after(IPC_SEND_WAIT_NS));
    if (r == SEND_GONE) {
        /* The consumer closed its end, maybe after a BYE or an ERROR still
         * unread: what is left in the socket says how the connection
         * ended, and an ERROR's reason is the one to report. */
        if ((st = pump(p, 0)) != CLMEM_OK)
            return st;
        connection_over(p, CLMEM_IPC_STATE_PEER_GONE, false);
        return still_the_producers(p, what, count);
    }
    if (r == SEND_BAD)
        return drop(p, clmem_error_status());
    for (uint32_t i = 0; i < count; i++) {
        p->handed_out[indices[i]] = false;
        p->proto.frames[indices[i]].state = FRAME_LENT;
        p->proto.frames[indices[i]].sequence = p->proto.next_sequence++;
    }
    return CLMEM_OK;
}

static clmem_status ipc_producer_ready(clmem_ipc_producer *p, uint32_t index, VkFence fence, uint64_t timeout_ns)
{
    if (!p)
        return clmem__null_arg("p");
    if (index >= p->nframes || !p->handed_out[index])
        return clmem__invalid("frame %u is not one clmem_ipc_producer_next() gave (the producer has %u frames).", index,
                              p->nframes);
    return hand_over(p, 1, &index, fence, timeout_ns);
}

CLMEM_EXPORT clmem_status clmem_ipc_producer_ready(clmem_ipc_producer *p, uint32_t index, VkFence fence,
                                                   uint64_t timeout_ns)
{
    return clmem__error_in(__func__, ipc_producer_ready(p, index, fence, timeout_ns));
}

static clmem_status ipc_producer_ready_many(clmem_ipc_producer *p, uint32_t count, const uint32_t *indices,
                                            VkFence fence, uint64_t timeout_ns)
{
    if (!p || !indices)
        return clmem__null_arg(!p ? "p" : "indices");
    if (count < 1 || count > p->nframes)
        return clmem__invalid("count %u; a batch has 1 to %u frames (the producer's).", count, p->nframes);
    for (uint32_t i = 0; i < count; i++) {
        if (indices[i] >= p->nframes || !p->handed_out[indices[i]])
            return clmem__invalid("indices[%u], frame %u, is not one clmem_ipc_producer_next() or "
                                  "clmem_ipc_producer_next_many() gave (the producer has %u frames).",
                                  i, indices[i], p->nframes);
        for (uint32_t k = 0; k < i; k++)
            if (indices[k] == indices[i])
                return clmem__invalid("indices[%u] and indices[%u] are both frame %u; a batch names each frame once.",
                                      k, i, indices[i]);
    }
    return hand_over(p, count, indices, fence, timeout_ns);
}

CLMEM_EXPORT clmem_status clmem_ipc_producer_ready_many(clmem_ipc_producer *p, uint32_t count, const uint32_t *indices,
                                                        VkFence fence, uint64_t timeout_ns)
{
    return clmem__error_in(__func__, ipc_producer_ready_many(p, count, indices, fence, timeout_ns));
}

CLMEM_EXPORT clmem_ipc_state clmem_ipc_producer_state(const clmem_ipc_producer *p)
{
    return p ? p->state : CLMEM_IPC_STATE_NEW;
}

CLMEM_EXPORT uint32_t clmem_ipc_producer_lent(const clmem_ipc_producer *p)
{
    uint32_t n = 0;
    if (!p)
        return 0;
    for (uint32_t i = 0; i < p->nframes; i++)
        n += p->proto.frames[i].state != FRAME_HELD;
    return n;
}

CLMEM_EXPORT clmem_bridge_path clmem_ipc_producer_peer_path(const clmem_ipc_producer *p)
{
    return p && p->proto.accepted_path ? (clmem_bridge_path)p->proto.accepted_path : CLMEM_BRIDGE_PATH_BEST;
}

CLMEM_EXPORT void clmem_ipc_producer_destroy(clmem_ipc_producer *p)
{
    if (!p)
        return;
    if (p->state == CLMEM_IPC_STATE_OPEN) {
        struct ipc_msg m = {.type = IPC_BYE};
        (void)clmem__ipc_send(p->sock, &m, -1, deadline_after(IPC_SEND_WAIT_NS));
    }
    close(p->sock);
    clmem__ipc_reclaim_close(&p->reclaim);
    free(p);
}
