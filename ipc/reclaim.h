/* SPDX-License-Identifier: MIT */
/* Internal: THE point where frames lent to a consumer that is gone come
 * back to the producer (clmem-ipc.h, "When lent frames come back"). Every
 * rule about that wait is here (reclaim.c says why), and its one knob is
 * reclaim_delay_ns. */
#ifndef CLMEM_IPC_RECLAIM_H
#define CLMEM_IPC_RECLAIM_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct reclaim {
    uint64_t delay_ns; /* clmem_ipc_producer_info::reclaim_delay_ns: the wait when the process cannot be watched */
    pid_t pid;         /* the consumer's, from SCM_CREDENTIALS; 0 while unknown */
    int pidfd;         /* a pidfd of it, or -1 (unknown pid, our own pid, no pidfd on this kernel) */
    int connected_pidfd; /* a pidfd of the process that connected the socket (SO_PEERCRED), or -1 */
    bool ended;        /* the connection ended */
    bool bye;          /* ... with the consumer's BYE: it holds nothing */
    uint64_t ended_ns, exited_ns;
    bool exited;
};

void clmem__ipc_reclaim_init(struct reclaim *r, uint64_t delay_ns);

/* The connected socket, at the producer's creation: a pidfd of the
 * process at its other end (SO_PEERCRED), for a consumer whose messages
 * never carry credentials. */
void clmem__ipc_reclaim_connected(struct reclaim *r, int sock);

/* The consumer's pid, as the kernel gave it with a message. The first one
 * counts: a pidfd is opened for it (unless it is this process's own). */
void clmem__ipc_reclaim_peer(struct reclaim *r, pid_t pid);

/* The connection ended now; bye: with the consumer's BYE. */
void clmem__ipc_reclaim_ended(struct reclaim *r, uint64_t now_ns, bool bye);

/* When the frames lent at the end come back: now_ns or earlier (due), a
 * later time, or UINT64_MAX while waiting for the consumer's process to
 * exit (poll clmem__ipc_reclaim_fd() for that). Only after _ended(). */
uint64_t clmem__ipc_reclaim_due(struct reclaim *r, uint64_t now_ns);

/* The fd to poll (POLLIN: the consumer exited) while _due() is UINT64_MAX,
 * or -1. */
int clmem__ipc_reclaim_fd(const struct reclaim *r);

void clmem__ipc_reclaim_close(struct reclaim *r);
#endif
