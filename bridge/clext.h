/* Internal: the OpenCL extension entry points the bridge calls, resolved per
 * platform with clGetExtensionFunctionAddressForPlatform (the ICD loader
 * only forwards extension functions that way). Resolved once per platform
 * and kept for the process's life. */
#ifndef CLMEM_CLEXT_H
#define CLMEM_CLEXT_H
#include "cl-compat.h"

struct clext {
    cl_platform_id platform;
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire_external;
    clEnqueueReleaseExternalMemObjectsKHR_fn release_external;
    clCreateSemaphoreWithPropertiesKHR_fn create_semaphore;
    clEnqueueWaitSemaphoresKHR_fn wait_semaphores;
    clEnqueueSignalSemaphoresKHR_fn signal_semaphores;
    clReleaseSemaphoreKHR_fn release_semaphore;
};

/* The table for platform; NULL only when more platforms than the table
 * holds were seen (then CLMEM_ERR_NO_MEMORY is recorded). */
const struct clext *clmem__clext_for_platform(cl_platform_id platform);
#endif
