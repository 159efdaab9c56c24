#include "config.h"
#include "clext.h"

static void *lookup(cl_platform_id platform, const char *name)
{
    return clGetExtensionFunctionAddressForPlatform(platform, name);
}

void clmem__clext_load(struct clext *t, cl_platform_id platform)
{
    t->acquire_external =
        (clEnqueueAcquireExternalMemObjectsKHR_fn)lookup(platform, "clEnqueueAcquireExternalMemObjectsKHR");
    t->release_external =
        (clEnqueueReleaseExternalMemObjectsKHR_fn)lookup(platform, "clEnqueueReleaseExternalMemObjectsKHR");
    t->create_semaphore = (clCreateSemaphoreWithPropertiesKHR_fn)lookup(platform, "clCreateSemaphoreWithPropertiesKHR");
    t->wait_semaphores = (clEnqueueWaitSemaphoresKHR_fn)lookup(platform, "clEnqueueWaitSemaphoresKHR");
    t->signal_semaphores = (clEnqueueSignalSemaphoresKHR_fn)lookup(platform, "clEnqueueSignalSemaphoresKHR");
    t->release_semaphore = (clReleaseSemaphoreKHR_fn)lookup(platform, "clReleaseSemaphoreKHR");
}
