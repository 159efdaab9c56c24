/* SPDX-License-Identifier: MIT */
/* The conversation's rules (proto.h): what each side accepts from the
 * other, and when. Pure bookkeeping over the parsed messages of wire.c; the
 * fds it is handed are its own to keep or close. */
#include "config.h"
#include "error-private.h"
#include "proto.h"

#include <string.h>
#include <unistd.h>

void clmem__ipc_proto_init(struct proto *p, enum ipc_role self)
{
    memset(p, 0, sizeof *p);
    p->self = self;
    p->phase = PHASE_HELLO;
    p->peer = self == IPC_ROLE_PRODUCER ? "consumer" : "producer";
    for (int i = 0; i < CLMEM_IPC_MAX_ALLOCATIONS; i++)
        p->allocs[i].fd = -1;
}

void clmem__ipc_proto_close_fds(struct proto *p)
{
    for (int i = 0; i < CLMEM_IPC_MAX_ALLOCATIONS; i++)
        if (p->allocs[i].fd >= 0) {
            close(p->allocs[i].fd);
            p->allocs[i].fd = -1;
        }
}

static const char *phase_text(const struct proto *p)
{
    switch (p->phase) {
    case PHASE_HELLO: return "before its HELLO";
    case PHASE_DESCRIBE:
        return p->self == IPC_ROLE_CONSUMER ? "while it described its frames" : "before its ACCEPT";
    case PHASE_OPEN: return "while frames flow";
    case PHASE_OVER: return "after the end";
    }
    return "";
}

static clmem_status unexpected(const struct proto *p, const struct ipc_msg *m)
{
    return clmem__invalid("The %s sent %s %s, which %s does not send then.", p->peer, clmem__ipc_type_name(m->type),
                          phase_text(p), p->peer);
}

static clmem_status receive_hello(struct proto *p, const struct ipc_hello *h)
{
    enum ipc_role want = p->self == IPC_ROLE_PRODUCER ? IPC_ROLE_CONSUMER : IPC_ROLE_PRODUCER;
    if (h->role != want)
        return clmem__invalid("The %s's HELLO says it is a %s too: a connection joins one producer and one consumer.",
                              p->peer, h->role == IPC_ROLE_PRODUCER ? "producer" : "consumer");
    if (p->self == IPC_ROLE_PRODUCER) {
        if (h->allocation_count || h->frame_count)
            return clmem__invalid(
                "The consumer's HELLO announces %u allocations and %u frames; a consumer announces none.",
                h->allocation_count, h->frame_count);
    } else {
        if (h->allocation_count < 1 || h->allocation_count > CLMEM_IPC_MAX_ALLOCATIONS || h->frame_count < 1 ||
            h->frame_count > CLMEM_IPC_MAX_FRAMES || h->allocation_count > h->frame_count)
            return clmem__invalid(
                "The producer's HELLO announces %u allocations and %u frames; it must be 1 to %d frames in "
                "1 to %d allocations, no more allocations than frames.",
                h->allocation_count, h->frame_count, CLMEM_IPC_MAX_FRAMES, CLMEM_IPC_MAX_ALLOCATIONS);
        p->allocation_count = h->allocation_count;
        p->frame_count = h->frame_count;
    }
    p->peer_hello = *h;
    p->phase = PHASE_DESCRIBE;
    return CLMEM_OK;
}

/* Consumer: the ALLOCs come first, in order, then the FRAMEs, in order. */
static clmem_status receive_alloc(struct proto *p, const struct ipc_alloc *a, int fd)
{
    if (p->frames_received)
        return clmem__invalid("The producer sent ALLOC %u after a FRAME; every ALLOC comes first.", a->index);
    if (a->index != p->allocs_received || a->index >= p->allocation_count)
        return clmem__invalid("The producer sent ALLOC %u where ALLOC %u of %u was due.", a->index, p->allocs_received,
                              p->allocation_count);
    p->allocs[a->index].desc = *a;
    p->allocs[a->index].fd = fd;
    p->allocs_received++;
    return CLMEM_OK;
}

static clmem_status receive_frame(struct proto *p, const struct ipc_frame *f)
{
    if (p->allocs_received != p->allocation_count)
        return clmem__invalid("The producer sent FRAME %u after %u of its %u ALLOCs; every ALLOC comes first.",
                              f->index, p->allocs_received, p->allocation_count);
    if (f->index != p->frames_received || f->index >= p->frame_count)
        return clmem__invalid("The producer sent FRAME %u where FRAME %u of %u was due.", f->index, p->frames_received,
                              p->frame_count);
    if (f->allocation >= p->allocation_count)
        return clmem__invalid("The producer sent FRAME %u in allocation %u; it announced %u.", f->index, f->allocation,
                              p->allocation_count);
    uint64_t alloc_size = p->allocs[f->allocation].desc.allocation_size;
    for (uint32_t i = 0; i < f->plane_count; i++)
        if (f->planes[i].offset > alloc_size || f->planes[i].size > alloc_size - f->planes[i].offset)
            return clmem__invalid("The producer sent FRAME %u whose plane %u, %llu bytes at offset %llu, ends past its "
                                  "allocation %u of %llu bytes.",
                                  f->index, i, (unsigned long long)f->planes[i].size,
                                  (unsigned long long)f->planes[i].offset, f->allocation,
                                  (unsigned long long)alloc_size);
    p->frames[f->index].desc = *f;
    p->frames[f->index].state = FRAME_HELD;
    p->frames_received++;
    if (p->frames_received == p->frame_count)
        p->phase = PHASE_OPEN; /* the caller imports everything, then sends ACCEPT */
    return CLMEM_OK;
}

/* The frames a READY (the consumer receiving) or a FREE (the producer
 * receiving) names: each one the producer offered, and each where its
 * sender may hand it over: with the producer for a READY, lent to the
 * consumer under that READY's sequence for a FREE. */
static clmem_status check_named_frames(const struct proto *p, const struct ipc_handoff *r, bool ready)
{
    for (uint32_t i = 0; i < r->count; i++) {
        uint32_t f = r->index[i];
        if (f >= p->frame_count)
            return ready ? clmem__invalid("The producer sent READY for frame %u; it offered %u.", f, p->frame_count)
                         : clmem__invalid("The consumer sent FREE for frame %u; the producer offered %u.", f,
                                          p->frame_count);
        if (ready && p->frames[f].state != FRAME_HELD)
            return clmem__invalid("The producer sent READY for frame %u, which the consumer still holds (READY %llu).",
                                  f, (unsigned long long)p->frames[f].sequence);
        if (!ready && p->frames[f].state != FRAME_LENT)
            return clmem__invalid("The consumer sent FREE for frame %u, which it does not hold.", f);
        if (!ready && r->sequence[i] != p->frames[f].sequence)
            return clmem__invalid("The consumer sent FREE %llu for frame %u, whose READY was %llu.",
                                  (unsigned long long)r->sequence[i], f, (unsigned long long)p->frames[f].sequence);
    }
    return CLMEM_OK;
}

/* Consumer: READY for a batch of frames, each with the producer, the
 * batch's first sequence the one due. Checked whole before anything
 * changes. */
static clmem_status receive_ready(struct proto *p, const struct ipc_handoff *r)
{
    clmem_status st = check_named_frames(p, r, true);

    if (st != CLMEM_OK)
        return st;
    if (r->sequence[0] != p->next_sequence && r->count == 1)
        return clmem__invalid("The producer sent READY %llu for frame %u where READY %llu was due.",
                              (unsigned long long)r->sequence[0], r->index[0], (unsigned long long)p->next_sequence);
    if (r->sequence[0] != p->next_sequence)
        return clmem__invalid("The producer sent READY %llu for %u frames from frame %u where READY %llu was due.",
                              (unsigned long long)r->sequence[0], r->count, r->index[0],
                              (unsigned long long)p->next_sequence);
    for (uint32_t i = 0; i < r->count; i++) {
        p->frames[r->index[i]].state = FRAME_LENT;
        p->frames[r->index[i]].sequence = r->sequence[i];
    }
    p->next_sequence += r->count;
    return CLMEM_OK;
}

/* Producer: FREE for a batch of frames the consumer holds, each naming its
 * READY. Checked whole before anything changes. */
static clmem_status receive_free(struct proto *p, const struct ipc_handoff *r)
{
    clmem_status st = check_named_frames(p, r, false);

    if (st != CLMEM_OK)
        return st;
    for (uint32_t i = 0; i < r->count; i++)
        p->frames[r->index[i]].state = FRAME_HELD;
    return CLMEM_OK;
}

clmem_status clmem__ipc_proto_receive(struct proto *p, const struct ipc_msg *m, int fd)
{
    clmem_status st;
    bool consumer = p->self == IPC_ROLE_CONSUMER;

    /* ERROR and BYE end the conversation whenever they come. */
    if (m->type == IPC_ERROR || m->type == IPC_BYE) {
        if (p->phase == PHASE_OVER)
            st = unexpected(p, m);
        else {
            p->phase = PHASE_OVER;
            st = CLMEM_OK;
        }
    } else if (p->phase == PHASE_HELLO) {
        st = m->type == IPC_HELLO ? receive_hello(p, &m->u.hello) : unexpected(p, m);
    } else if (p->phase == PHASE_DESCRIBE) {
        if (consumer && m->type == IPC_ALLOC) {
            st = receive_alloc(p, &m->u.alloc, fd);
            if (st == CLMEM_OK)
                return CLMEM_OK; /* the fd is in the table now */
        } else if (consumer && m->type == IPC_FRAME) {
            st = receive_frame(p, &m->u.frame);
        } else if (!consumer && m->type == IPC_ACCEPT) {
            p->accepted_path = m->u.accept.path;
            p->phase = PHASE_OPEN;
            st = CLMEM_OK;
        } else {
            st = unexpected(p, m);
        }
    } else if (p->phase == PHASE_OPEN) {
        if (consumer && m->type == IPC_READY)
            st = receive_ready(p, &m->u.handoff);
        else if (!consumer && m->type == IPC_FREE)
            st = receive_free(p, &m->u.handoff);
        else
            st = unexpected(p, m);
    } else {
        st = unexpected(p, m);
    }
    if (fd >= 0)
        close(fd); /* only an accepted ALLOC keeps its fd */
    return st;
}
