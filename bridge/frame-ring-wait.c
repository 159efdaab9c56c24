/* SPDX-License-Identifier: MIT */
/* The frame ring's host waits (frame-ring.h), on deadline.h's monotonic
 * deadlines: what the producer and the consumer wait for on the host, the
 * ring's counters under its lock and, with host ordering, the releases'
 * events. */
#include "config.h"
#include "deadline.h"
#include "fail.h"
#include "frame-ring.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

/* One wait on the condition (lock held); false once the deadline passed. */
bool clmem__ring_wait_changed(clmem_bridge_ring *ring, uint64_t deadline)
{
    struct timespec ts;

    if (deadline == UINT64_MAX) {
        pthread_cond_wait(&ring->changed, &ring->lock);
        return true;
    }
    if (clock_ns(CLOCK_MONOTONIC) >= deadline)
        return false;
    ts.tv_sec = (time_t)(deadline / 1000000000u);
    ts.tv_nsec = (long)(deadline % 1000000000u);
    pthread_cond_timedwait(&ring->changed, &ring->lock, &ts); /* the caller re-checks its condition */
    return true;
}

/* Until ev completed, or the deadline. CLMEM_ERR_TIMEOUT, CLMEM_ERR_OPENCL
 * (the query failed, or the command ended in an error). clWaitForEvents
 * has no timeout, and event callbacks come late (NVIDIA: 20-36 ms after
 * the work, docs/driver-notes.md), so the status is polled: yielding for
 * the first 2 ms, then sleeping 50 us at a time. The yield phase is that long
 * because a sleep is never short: with Linux's default 50 us timer slack a
 * nanosleep(20 us) took 122 us on average on the CPU test machine, and a
 * host-ordered batch on the H200 completes a few hundred microseconds
 * after its wait begins (a GPU context switch each way). A 200 us yield
 * phase returned 24-80 us after an event completing 200-800 us into the
 * wait, against 1-24 us for this one (docs/probes/poll-wait.c,
 * docs/latency.md): the likely cause of +31 to +55 us per batch that
 * clmem-bench measured over the raw calls' clWaitForEvents on the H200.
 * Without a deadline it is clWaitForEvents. */
clmem_status clmem__ring_wait_event(cl_event ev, uint64_t deadline, const char *what)
{
    uint64_t spin_until = clock_ns(CLOCK_MONOTONIC) + 2000000u;

    for (;;) {
        cl_int status = CL_QUEUED;
        cl_int err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        uint64_t left;

        if (err != CL_SUCCESS)
            return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetEventInfo", err,
                                   "Asking whether %s completed failed.", what);
        if (status < 0)
            return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetEventInfo", status,
                                   "%s ended in an error on the device.", what);
        if (status == CL_COMPLETE)
            return CLMEM_OK;
        left = time_left(deadline);
        if (left == UINT64_MAX) {
            clWaitForEvents(1, &ev); /* then the status says how it ended */
            continue;
        }
        if (left == 0)
            return clmem__fail(CLMEM_ERR_TIMEOUT, "%s had not completed in time.", what);
        if (clock_ns(CLOCK_MONOTONIC) < spin_until) {
            sched_yield();
            continue;
        }
        {
            struct timespec pause = {0, left < 50000 ? (long)left : 50000};
            nanosleep(&pause, NULL);
        }
    }
}
