/* SPDX-License-Identifier: MIT */
/* Shared on purpose by the bridge, the tools and the tests (opencl/ holds
 * what they all need of OpenCL): the OpenCL extension names that differ
 * between header releases. Debian 12's OpenCL headers (2023.02) call the
 * memory device list CL_DEVICE_HANDLE_LIST_KHR; 2023.12 calls it
 * CL_MEM_DEVICE_HANDLE_LIST_KHR; both are 0x2051. Semaphores need their own
 * list, 0x2053, which 2023.02 lacks: passing 0x2051 to
 * clCreateSemaphoreWithPropertiesKHR gives CL_INVALID_PROPERTY on NVIDIA
 * (measured: docs/driver-notes.md). The tree uses its own names so it
 * builds with either release. */
#ifndef CLMEM_CL_COMPAT_H
#define CLMEM_CL_COMPAT_H
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

#define CLMEM_CL_MEM_DEVICE_HANDLE_LIST 0x2051
#define CLMEM_CL_SEMAPHORE_DEVICE_HANDLE_LIST 0x2053
#define CLMEM_CL_DEVICE_HANDLE_LIST_END 0
#endif
