/* SPDX-License-Identifier: MIT */
/* Internal: the conversation's rules for one side, kept apart from the
 * sockets and the devices so that the fuzz harness (t/ipc/fuzz-ipc.c) can drive
 * them with any bytes. clmem__ipc_proto_receive() decides whether a parsed
 * message may come now, from this peer, with these values; only then does
 * the caller act on it. It owns every fd that arrives: an fd is either kept
 * in the table (an ALLOC's, until the caller takes it) or closed, on every
 * path, so that a refused message leaves nothing open.
 *
 * The frame states, as each side sees them:
 *   producer: HELD (its own) -> LENT (READY sent) -> HELD (FREE received),
 *             or LENT -> RECLAIMING (the consumer is gone) -> HELD;
 *   consumer: WITH_PRODUCER -> WITH_CONSUMER (READY received) ->
 *             WITH_PRODUCER (FREE sent). */
#ifndef CLMEM_IPC_PROTO_H
#define CLMEM_IPC_PROTO_H
#include "wire.h"

enum proto_phase {
    PHASE_HELLO,    /* waiting for the peer's HELLO */
    PHASE_DESCRIBE, /* consumer: ALLOCs and FRAMEs arriving; producer: waiting for ACCEPT */
    PHASE_OPEN,     /* READY and FREE */
    PHASE_OVER      /* BYE or ERROR received, or the connection dropped: nothing more is accepted */
};

enum frame_state { FRAME_HELD, FRAME_LENT, FRAME_RECLAIMING };

struct proto_alloc {
    struct ipc_alloc desc;
    int fd; /* consumer: received, not yet taken by the caller; -1 otherwise */
};

struct proto_frame {
    struct ipc_frame desc;
    enum frame_state state; /* producer: HELD/LENT/RECLAIMING; consumer: HELD = with the producer, LENT = with
                               the consumer */
    uint64_t sequence;      /* of its last READY */
};

struct proto {
    enum ipc_role self;
    enum proto_phase phase;
    const char *peer; /* "producer" or "consumer", for sentences */
    struct ipc_hello peer_hello;
    uint32_t allocation_count, frame_count;
    uint32_t allocs_received, frames_received; /* consumer: in the DESCRIBE phase */
    struct proto_alloc allocs[CLMEM_IPC_MAX_ALLOCATIONS];
    struct proto_frame frames[CLMEM_IPC_MAX_FRAMES];
    uint64_t next_sequence; /* consumer: the sequence the next READY must carry; producer: the next one sent */
    uint32_t accepted_path; /* producer: from ACCEPT */
};

/* A table for `self`, empty, with no fd. */
void clmem__ipc_proto_init(struct proto *p, enum ipc_role self);

/* Whether message m, which arrived with fd `fd` (-1 when none), may come
 * now. CLMEM_OK: the table is updated (HELLO recorded, ALLOC kept with its
 * fd, FRAME recorded, READY and FREE change the frame's state, BYE and
 * ERROR end the phase) and the caller acts on it. Otherwise the error is
 * recorded, naming the rule and the values, and fd is closed. An ERROR from
 * the peer is accepted (CLMEM_OK, phase OVER): the caller reports it. */
clmem_status clmem__ipc_proto_receive(struct proto *p, const struct ipc_msg *m, int fd);

/* Close every fd the table still holds. */
void clmem__ipc_proto_close_fds(struct proto *p);
#endif
