#include "config.h"
#include "clext.h"
#include "clmem.h"

#include <pthread.h>
#include <stddef.h>

/* Machines have a handful of platforms; a fixed table needs no freeing. */
#define CLEXT_MAX_PLATFORMS 32

static struct clext tables[CLEXT_MAX_PLATFORMS];
static unsigned table_count;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static void *lookup(cl_platform_id platform, const char *name)
{
    return clGetExtensionFunctionAddressForPlatform(platform, name);
}

const struct clext *clmem__clext_for_platform(cl_platform_id platform)
{
    const struct clext *found = NULL;

    pthread_mutex_lock(&table_lock);
    for (unsigned i = 0; i < table_count && !found; i++)
        if (tables[i].platform == platform)
            found = &tables[i];
    if (!found && table_count < CLEXT_MAX_PLATFORMS) {
        struct clext *t = &tables[table_count];
        t->platform = platform;
        t->acquire_external = (clEnqueueAcquireExternalMemObjectsKHR_fn)lookup(
            platform, "clEnqueueAcquireExternalMemObjectsKHR");
        t->release_external = (clEnqueueReleaseExternalMemObjectsKHR_fn)lookup(
            platform, "clEnqueueReleaseExternalMemObjectsKHR");
        t->create_semaphore =
            (clCreateSemaphoreWithPropertiesKHR_fn)lookup(platform, "clCreateSemaphoreWithPropertiesKHR");
        t->wait_semaphores = (clEnqueueWaitSemaphoresKHR_fn)lookup(platform, "clEnqueueWaitSemaphoresKHR");
        t->signal_semaphores = (clEnqueueSignalSemaphoresKHR_fn)lookup(platform, "clEnqueueSignalSemaphoresKHR");
        t->release_semaphore = (clReleaseSemaphoreKHR_fn)lookup(platform, "clReleaseSemaphoreKHR");
        found = t;
        table_count++;
    }
    pthread_mutex_unlock(&table_lock);
    if (!found)
        clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_NONE, NULL, 0,
                        "More than %d OpenCL platforms were seen.", CLEXT_MAX_PLATFORMS);
    return found;
}
