/* SPDX-License-Identifier: MIT */
/* When frames lent to a consumer that is gone come back (reclaim.h).
 *
 * What a dead consumer leaves running was measured on the H200
 * (docs/driver-notes.md, "A process that dies with GPU work in flight"): a
 * consumer SIGKILLed mid-kernel had its kernel stopped, the last write to
 * the shared memory landing 10-13 ms after the kill; the producer saw the
 * socket's EOF 2-38 ms after the kill (before that last write when the
 * socket had a higher fd number than the driver's fds: a dying process's
 * fds are closed in order); the consumer's pidfd became readable 113-126 ms
 * after the kill, once every fd of the process, the driver's included, was
 * closed, 100 ms after the last write. So EOF alone does not mean the GPU
 * has stopped writing, and the pidfd does. Hence:
 *  - a consumer that said BYE holds nothing (it sends BYE only after every
 *    release it made completed): its frames come back at once;
 *  - otherwise they come back when the consumer's process has exited: a
 *    pidfd of the pid the kernel attached to its messages (SCM_CREDENTIALS,
 *    which also names the right process for a socketpair(), where
 *    SO_PEERCRED names the one that made the pair) becomes readable;
 *  - where the process cannot be watched (no credentials arrived, the
 *    consumer is this very process, the kernel has no pidfd_open, or the
 *    pid is not visible from here: another pid namespace), delay_ns after
 *    the end of the connection: 250 ms by default, some twenty times the
 *    longest the measured kernels wrote after an early EOF.
 * A consumer that closes the connection and lives on keeps its frames
 * until it exits: it still holds their memory, and may still write it. */
#define _GNU_SOURCE
#include "config.h"
#include "reclaim.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

void clmem__ipc_reclaim_init(struct reclaim *r, uint64_t delay_ns)
{
    *r = (struct reclaim){.delay_ns = delay_ns, .pidfd = -1};
}

void clmem__ipc_reclaim_peer(struct reclaim *r, pid_t pid)
{
    if (r->pid || pid <= 0)
        return;
    r->pid = pid;
    if (pid == getpid())
        return; /* a consumer in this process: its exit is ours */
#ifdef SYS_pidfd_open
    r->pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* -1 where the kernel has none: the delay alone then */
    /* pidfd_open's fds are close-on-exec (the kernel sets O_CLOEXEC). */
#endif
}

void clmem__ipc_reclaim_ended(struct reclaim *r, uint64_t now_ns, bool bye)
{
    if (r->ended)
        return;
    r->ended = true;
    r->bye = bye;
    r->ended_ns = now_ns;
}

static bool has_exited(struct reclaim *r, uint64_t now_ns)
{
    if (!r->exited) {
        struct pollfd p = {.fd = r->pidfd, .events = POLLIN};
        if (poll(&p, 1, 0) == 1) {
            r->exited = true;
            r->exited_ns = now_ns;
        }
    }
    return r->exited;
}

uint64_t clmem__ipc_reclaim_due(struct reclaim *r, uint64_t now_ns)
{
    if (r->bye)
        return r->ended_ns;
    if (r->pidfd < 0)
        return r->ended_ns + r->delay_ns;
    return has_exited(r, now_ns) ? r->exited_ns : UINT64_MAX;
}

int clmem__ipc_reclaim_fd(const struct reclaim *r) { return r->ended && !r->bye && !r->exited ? r->pidfd : -1; }

void clmem__ipc_reclaim_close(struct reclaim *r)
{
    if (r->pidfd >= 0)
        close(r->pidfd);
    r->pidfd = -1;
}
