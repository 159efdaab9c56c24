/* SPDX-License-Identifier: MIT */
/* Fake OpenCL objects for tests that need a driver call to fail or to be
 * observed. An ICD object is any pointer whose first member is the
 * dispatch table, so the real ICD loader routes calls on these objects to
 * whatever entries a test sets in fake_dispatch (each test sets only the
 * ones it uses; the others are NULL and must never be reached). */
#ifndef CLMEM_FAKE_CL_H
#define CLMEM_FAKE_CL_H
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>

extern struct _cl_icd_dispatch fake_dispatch;

struct fake_cl_object {
    const struct _cl_icd_dispatch *dispatch;
};
extern struct fake_cl_object fake_mem_obj, fake_queue_obj;

#define FAKE_MEM ((cl_mem)(void *)&fake_mem_obj)
#define FAKE_QUEUE ((cl_command_queue)(void *)&fake_queue_obj)
#endif
