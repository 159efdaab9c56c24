/* SPDX-License-Identifier: MIT */
/* How late a host wait returns after an OpenCL event completes, three
 * ways: the frame ring's old poll (sched_yield for 200 us, then
 * nanosleep(20 us) steps), its current one (yield for 2 ms, then 50 us
 * steps; bridge/frame-ring-wait.c) and clWaitForEvents. A helper thread
 * completes a user event 100, 200, 400 and 800 us after the wait begins;
 * 200 waits each. Results: docs/latency.md.
 *
 *   cc -O2 -o poll-wait docs/probes/poll-wait.c -lOpenCL -lpthread && ./poll-wait
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The ring's poll, with its two constants as parameters. */
static void poll_wait(cl_event ev, uint64_t yield_ns, long sleep_ns)
{
    uint64_t until = now_ns() + yield_ns;
    for (;;) {
        cl_int st = CL_QUEUED;
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        if (st == CL_COMPLETE)
            return;
        if (now_ns() < until) {
            sched_yield();
        } else {
            struct timespec p = {0, sleep_ns};
            nanosleep(&p, NULL);
        }
    }
}

struct setter_arg {
    cl_event ev;
    long delay_us;
    uint64_t set_at;
};

static void *setter(void *p)
{
    struct setter_arg *a = p;
    uint64_t at = now_ns() + (uint64_t)a->delay_us * 1000u;
    while (now_ns() < at)
        ; /* spin: a sleep here would add its own lateness to the start */
    a->set_at = now_ns();
    clSetUserEventStatus(a->ev, CL_COMPLETE);
    return NULL;
}

int main(void)
{
    static const char *const names[3] = {"yield 200 us, sleep 20 us", "yield 2 ms, sleep 50 us", "clWaitForEvents"};
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;

    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS ||
        !(ctx = clCreateContext(NULL, 1, &device, NULL, NULL, NULL))) {
        fprintf(stderr, "no OpenCL device\n");
        return 77;
    }
    for (int way = 0; way < 3; way++)
        for (long delay = 100; delay <= 800; delay *= 2) {
            const int n = 200;
            double total = 0, worst = 0;
            for (int i = 0; i < n; i++) {
                struct setter_arg a = {clCreateUserEvent(ctx, NULL), delay, 0};
                pthread_t th;
                uint64_t back;
                double late;
                pthread_create(&th, NULL, setter, &a);
                if (way == 0)
                    poll_wait(a.ev, 200000, 20000);
                else if (way == 1)
                    poll_wait(a.ev, 2000000, 50000);
                else
                    clWaitForEvents(1, &a.ev);
                back = now_ns();
                pthread_join(th, NULL); /* a.set_at is the setter's, read after it ended */
                late = (double)(back - a.set_at) / 1e3;
                total += late;
                if (late > worst)
                    worst = late;
                clReleaseEvent(a.ev);
            }
            printf("%-26s event set after %4ld us: returned %6.1f us after it (mean of %d), max %7.1f\n",
                   names[way], delay, total / n, n, worst);
        }
    clReleaseContext(ctx);
    return 0;
}
