/* Internal: the OpenCL extension entry points the bridge calls, resolved
 * for the bridge's platform with clGetExtensionFunctionAddressForPlatform
 * (the ICD loader only forwards extension functions that way), once, when
 * the bridge is made. An entry the platform lacks is NULL. */
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

void clmem__clext_load(struct clext *t, cl_platform_id platform);
#endif
