/* SPDX-License-Identifier: MIT */
/* Internal, header-only, for libclmem-bridge and libclmem-ipc: bounded
 * waits (clmem_bridge_finish(), clmem_bridge_device_finish(), the frame
 * ring, the ipc calls that take a timeout) count in nanoseconds of
 * CLOCK_MONOTONIC, which no clock step moves. pthread_cond_timedwait() on
 * a default condition takes CLOCK_REALTIME, so those waits are cut into
 * short slices, each converted by realtime_in(); a condition made on
 * CLOCK_MONOTONIC takes the deadline itself, and poll() takes
 * poll_ms_until(). */
#ifndef CLMEM_DEADLINE_H
#define CLMEM_DEADLINE_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The monotonic deadline timeout_ns from now (UINT64_MAX: none). */
static inline uint64_t deadline_after(uint64_t timeout_ns)
{
    uint64_t now = clock_ns(CLOCK_MONOTONIC);
    return timeout_ns >= UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

/* What is left of a deadline: 0 once it passed, UINT64_MAX for none. */
static inline uint64_t time_left(uint64_t deadline)
{
    uint64_t now;
    if (deadline == UINT64_MAX)
        return UINT64_MAX;
    now = clock_ns(CLOCK_MONOTONIC);
    return now >= deadline ? 0 : deadline - now;
}

/* The CLOCK_REALTIME time wait_ns from now, for pthread_cond_timedwait(). */
static inline struct timespec realtime_in(uint64_t wait_ns)
{
    uint64_t abs_ns = clock_ns(CLOCK_REALTIME) + wait_ns;
    struct timespec until = {(time_t)(abs_ns / 1000000000u), (long)(abs_ns % 1000000000u)};
    return until;
}

/* poll()'s timeout in ms until the deadline: -1 for none, rounded up so
 * that poll never wakes before it, at most 1000 s. */
static inline int poll_ms_until(uint64_t deadline)
{
    uint64_t left = time_left(deadline), ms;
    if (left == UINT64_MAX)
        return -1;
    ms = (left + 999999u) / 1000000u;
    return ms > 1000000 ? 1000000 : (int)ms;
}
#endif
