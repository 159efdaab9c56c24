/* SPDX-License-Identifier: MIT */
/* A kernel that keeps an OpenCL device busy for a measured time, for the
 * tests whose rule must hold against work that is still running (not
 * only against work held behind a user event, which some drivers treat
 * differently: docs/driver-notes.md). One work-item runs a dependent chain
 * of n multiply-adds: its run time is proportional to n and nothing can
 * fold the loop away. It reads word 0 of its buffer and writes word 1. */
#ifndef CLMEM_SPIN_KERNEL_H
#define CLMEM_SPIN_KERNEL_H
#include "cl-fixture.h"

/* The kernel, built in f's context (bails out on failure). */
cl_kernel spin_kernel(struct cl_fixture *f);

/* Enqueues one run of n iterations on q over `mem` (at least 8 bytes). */
cl_int spin_enqueue(cl_command_queue q, cl_kernel k, cl_mem mem, cl_uint n, cl_uint num_wait, const cl_event *wait,
                    cl_event *ev);

/* The trip count for one run of at least at_least_ms on f's device,
 * measured on f's queue: scaled up from a short run until one run took
 * that long. *ms_out: that run's wall time, enqueue to clFinish. */
cl_uint spin_calibrate(struct cl_fixture *f, cl_kernel k, double at_least_ms, double *ms_out);
#endif
