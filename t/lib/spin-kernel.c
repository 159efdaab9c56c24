/* SPDX-License-Identifier: MIT */
#include "spin-kernel.h"
#include "tap.h"

#include <stdint.h>

static const char spin_source[] = "__kernel void spin(__global uint *p, uint n) {\n"
                                  "    uint x = p[0];\n"
                                  "    for (uint i = 0; i < n; i++)\n"
                                  "        x = x * 1664525u + 1013904223u;\n"
                                  "    p[1] = x;\n"
                                  "}\n";

cl_kernel spin_kernel(struct cl_fixture *f)
{
    return cl_fixture_kernel(f, spin_source, "spin");
}

cl_int spin_enqueue(cl_command_queue q, cl_kernel k, cl_mem mem, cl_uint n, cl_uint num_wait, const cl_event *wait,
                    cl_event *ev)
{
    size_t one = 1;
    cl_int err = clSetKernelArg(k, 0, sizeof mem, &mem);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(k, 1, sizeof n, &n);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, num_wait, wait, ev);
    return err;
}

/* Wall time of one run of n iterations, enqueue to clFinish. */
static double time_spin(struct cl_fixture *f, cl_kernel k, cl_mem mem, cl_uint n)
{
    long long t0 = tap_now_ns();
    cl_int err = spin_enqueue(f->queue, k, mem, n, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(f->queue);
    if (err != CL_SUCCESS)
        tap_bail("running the spin kernel failed: %d", err);
    return tap_ms_between(t0, tap_now_ns());
}

cl_uint spin_calibrate(struct cl_fixture *f, cl_kernel k, double at_least_ms, double *ms_out)
{
    cl_mem mem = cl_fixture_buffer(f, 64);
    cl_uint zero = 0, n = 1u << 16;
    double ms;
    cl_int err = clEnqueueFillBuffer(f->queue, mem, &zero, sizeof zero, 0, 64, 0, NULL, NULL);

    if (err != CL_SUCCESS)
        tap_bail("clEnqueueFillBuffer failed: %d", err);
    time_spin(f, k, mem, 1); /* warm-up: the first launch may compile */
    for (;;) {
        double scale;
        ms = time_spin(f, k, mem, n);
        if (ms >= at_least_ms || n == UINT32_MAX)
            break;
        /* aim a third over, so that a run a little faster still makes it */
        scale = ms > 1.0 ? at_least_ms * 4.0 / 3.0 / ms : 16.0;
        if (scale < 2.0)
            scale = 2.0;
        n = (double)n * scale >= (double)UINT32_MAX ? UINT32_MAX : (cl_uint)((double)n * scale);
    }
    clReleaseMemObject(mem);
    *ms_out = ms;
    return n;
}
