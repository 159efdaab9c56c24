/* SPDX-License-Identifier: MIT */
/* clmem-bench: what clmem_handle_unref costs while device work on the
 * memory is still pending.
 *
 * The last unref of an import starts its teardown: it enqueues a marker on
 * every queue a handle was made for and returns; the Vulkan keepalive goes
 * once the markers ran (bridge/import-teardown.c). It must never wait for
 * the device. Each rep, on the uncached bridge (so every last unref tears a
 * real driver import down):
 *   import a 64 KiB buffer, make a handle for a second queue, acquire it
 *   there, enqueue a kernel on that queue held back by a user event, then
 *   time clmem_handle_unref of the import's handle (first) and of the
 *   second queue's (last) while the kernel waits; then open the gate and
 *   clmem_bridge_finish, untimed.
 * The target, set on the H200: each unref under 1 ms (the maximum of the
 * reps). It lives here, not in t/bridge/bridge-lifetime, because a wall-clock
 * bound in a test fails on a loaded machine (it did, in CI: 1.1 ms with one
 * preemption); the test asserts that the unref does not wait for the
 * kernel. */
#include "bench.h"

#define UNREF_SIZE (64 * KIB)
#define UNREF_TARGET_US 1000.0

static struct summary unref_first, unref_last;
static const struct target *unref_target[2];
static int unref_late; /* reps where the kernel was no longer pending after the last unref */

static void unref_rep(struct bench *b, struct anchored_buf *a, clmem_keepalive *anchor, cl_command_queue q2,
                      cl_kernel k, double *first_us, double *last_us)
{
    clmem_handle *h = NULL, *h2 = NULL;
    cl_event gate, kev;
    cl_mem mem;
    cl_int err, status = CL_COMPLETE;
    size_t one = 1;
    double t0, t1, t2;

    check_clmem(clmem_bridge_import_vk(b->bridge_uncached, &a->buf.mem, 0, UNREF_SIZE, b->path, anchor, b->queue,
                                       CL_MEM_READ_WRITE, &h),
                "clmem_bridge_import_vk((h) unref)");
    check_clmem(clmem_bridge_handle_for_queue(h, q2, &h2), "clmem_bridge_handle_for_queue((h) unref)");
    check_clmem(clmem_bridge_acquire(b->bridge_uncached, h2, 0, NULL, NULL), "clmem_bridge_acquire((h) unref)");
    gate = clCreateUserEvent(b->context, &err);
    check_cl(err, "clCreateUserEvent");
    mem = clmem_handle_mem(h2);
    check_cl(clSetKernelArg(k, 0, sizeof mem, &mem), "clSetKernelArg");
    check_cl(clEnqueueNDRangeKernel(q2, k, 1, NULL, &one, NULL, 1, &gate, &kev), "clEnqueueNDRangeKernel");
    check_cl(clFlush(q2), "clFlush");

    t0 = now_us();
    clmem_handle_unref(h);
    t1 = now_us();
    clmem_handle_unref(h2); /* The last: the teardown starts, still acquired */
    t2 = now_us();
    clGetEventInfo(kev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (status == CL_COMPLETE || status < 0)
        unref_late++;
    *first_us = t1 - t0;
    *last_us = t2 - t1;

    check_cl(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
    check_cl(clFinish(q2), "clFinish((h) unref)");
    check_clmem(clmem_bridge_finish(b->bridge_uncached, FINISH_TIMEOUT_NS), "clmem_bridge_finish((h) unref)");
    clReleaseEvent(kev);
    clReleaseEvent(gate);
}

/* The rows (unref_first, unref_last: x is the import's bytes; nothing is
 * handed over, batch 0) and a target each. */
static void record_unref(struct bench *b)
{
    static const char *const name[2] = {"unref_first", "unref_last"};
    const struct summary *s[2] = {&unref_first, &unref_last};
    for (int i = 0; i < 2; i++) {
        struct target_spec spec = {"h", name[i], UNREF_SIZE, "each unref under 1000 us (the maximum)", false};
        record_row("h", UNREF_SIZE, name[i], "clmem", s[i], 0, 0);
        unref_target[i] = record_target(b, &spec, true, NULL, s[i]->reps, s[i]->max,
                                        s[i]->max < UNREF_TARGET_US ? VERDICT_MET : VERDICT_MISSED);
    }
}

void run_unref(struct bench *b, int reps)
{
    struct anchored_buf *a = calloc(1, sizeof *a);
    double *first = calloc((size_t)reps, sizeof *first), *last = calloc((size_t)reps, sizeof *last);
    clmem_keepalive *anchor;
    cl_command_queue q2;
    cl_kernel k;
    cl_int err;

    if (!a || !first || !last)
        die("out of memory");
    printf("\n(h) clmem_handle_unref with a kernel pending: a 64 KiB import on the %s path, a handle for a second\n"
           "    queue, acquired there, a kernel on it held by a user event; the first and the last unref timed\n"
           "    while it waits (%d reps, each a new driver import)\n",
           clmem_bridge_path_name(b->path), reps);
    watchdog("(h) unref", "64 KiB");
    shared_buf_create(b, &a->buf, UNREF_SIZE);
    a->bridge = b->bridge;
    atomic_init(&a->freed, 0);
    anchor = clmem_keepalive_new(anchored_buf_release, a);
    if (!anchor)
        die("clmem_keepalive_new failed");
    q2 = clCreateCommandQueueWithProperties(b->context, b->device, NULL, &err);
    check_cl(err, "clCreateCommandQueueWithProperties((h) unref)");
    k = clCreateKernel(b->program, "bump", &err);
    check_cl(err, "clCreateKernel((h) unref)");

    for (int r = 0; r < reps; r++)
        unref_rep(b, a, anchor, q2, k, &first[r], &last[r]);
    unref_first = summarize(first, reps, 1);
    unref_last = summarize(last, reps, 1);

    clReleaseKernel(k);
    clReleaseCommandQueue(q2);
    clmem_keepalive_unref(anchor);
    if (!anchored_buf_free(a, teardown_deadline()))
        fail(b, "(h): the buffer's anchor was not released %d s after its last import went", DESTROY_WAIT_S);
    if (unref_late)
        fail(b, "(h): in %d of %d reps the gated kernel was no longer pending after the last unref", unref_late,
             reps);
    alarm(0);
    free(first);
    free(last);
    record_unref(b);
}

void print_unref(void)
{
    char v[2][512];
    if (!unref_last.have)
        return;
    printf("%-26s %10s %10s %10s  %s\n", "unref, microseconds", "median", "min", "max",
           "target (H200 only): each under 1000 us");
    printf("%-26s %10.1f %10.1f %10.1f  %s\n", "first (import's handle)", unref_first.median, unref_first.min,
           unref_first.max, verdict_text(unref_target[0], v[0], sizeof v[0]));
    printf("%-26s %10.1f %10.1f %10.1f  %s\n", "last (starts the teardown)", unref_last.median, unref_last.min,
           unref_last.max, verdict_text(unref_target[1], v[1], sizeof v[1]));
}
