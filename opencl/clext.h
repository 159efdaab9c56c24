/* SPDX-License-Identifier: MIT */
/* Shared on purpose by the bridge and clmem-bench (whose raw variant makes
 * the bridge's extension calls itself): the OpenCL extension entry points,
 * and how they are resolved for one platform: with
 * clGetExtensionFunctionAddressForPlatform, the only way the ICD loader
 * forwards extension functions. The bridge resolves them once, when it is
 * made. An entry the platform lacks is NULL. */
#ifndef CLMEM_CLEXT_H
#define CLMEM_CLEXT_H
#include "cl-compat.h"

struct clext {
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire_external;
    clEnqueueReleaseExternalMemObjectsKHR_fn release_external;
    clCreateSemaphoreWithPropertiesKHR_fn create_semaphore;
    clEnqueueWaitSemaphoresKHR_fn wait_semaphores;
    clEnqueueSignalSemaphoresKHR_fn signal_semaphores;
    clReleaseSemaphoreKHR_fn release_semaphore;
};

/* Fills t for `platform`. */
static inline void clmem__clext_load(struct clext *t, cl_platform_id platform)
{
    t->acquire_external = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clEnqueueAcquireExternalMemObjectsKHR");
    t->release_external = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clEnqueueReleaseExternalMemObjectsKHR");
    t->create_semaphore = (clCreateSemaphoreWithPropertiesKHR_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clCreateSemaphoreWithPropertiesKHR");
    t->wait_semaphores = (clEnqueueWaitSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clEnqueueWaitSemaphoresKHR");
    t->signal_semaphores = (clEnqueueSignalSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clEnqueueSignalSemaphoresKHR");
    t->release_semaphore =
        (clReleaseSemaphoreKHR_fn)clGetExtensionFunctionAddressForPlatform(platform, "clReleaseSemaphoreKHR");
}
#endif
