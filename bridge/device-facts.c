#include "config.h"
#include "device-facts.h"
#include "clmem.h"
#include "query.h"

#include <pthread.h>

#define FACTS_MAX 64

static struct cl_device_facts table[FACTS_MAX];
static unsigned count;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static bool imports(cl_device_id device, const char *extension, cl_uint handle_type)
{
    return clmem__cl_device_has_extension(device, extension) &&
           clmem__cl_device_lists_handle_type(device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, handle_type);
}

/* Ask the driver, outside the lock (the queries take microseconds). */
static clmem_status ask(cl_device_id device, struct cl_device_facts *f)
{
    cl_uint align_bits = 0;
    cl_int err = clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof f->platform, &f->platform, NULL);

    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetDeviceInfo(CL_DEVICE_PLATFORM)", err,
                               "Finding the queue's device and platform failed.");
    err = clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetDeviceInfo(CL_DEVICE_MEM_BASE_ADDR_ALIGN)",
                               err, "Querying the sub-buffer alignment failed.");
    f->device = device;
    f->base_align_bytes = align_bits / 8 ? align_bits / 8 : 1;
    f->imports_opaque_fd = imports(device, "cl_khr_external_memory_opaque_fd", CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR);
    f->imports_dma_buf = imports(device, "cl_khr_external_memory_dma_buf", CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR);
    return CLMEM_OK;
}

const struct cl_device_facts *clmem__cl_device_facts(cl_device_id device)
{
    const struct cl_device_facts *found = NULL;
    struct cl_device_facts fresh;

    pthread_mutex_lock(&table_lock);
    for (unsigned i = 0; i < count && !found; i++)
        if (table[i].device == device)
            found = &table[i];
    pthread_mutex_unlock(&table_lock);
    if (found)
        return found;

    if (ask(device, &fresh) != CLMEM_OK)
        return NULL;
    pthread_mutex_lock(&table_lock);
    for (unsigned i = 0; i < count && !found; i++) /* another thread may have added it meanwhile */
        if (table[i].device == device)
            found = &table[i];
    if (!found && count < FACTS_MAX) {
        table[count] = fresh;
        found = &table[count++];
    }
    pthread_mutex_unlock(&table_lock);
    if (!found) { /* table full (many sub-devices): answer uncached, from this thread's copy */
        static _Thread_local struct cl_device_facts overflow;
        overflow = fresh;
        found = &overflow;
    }
    return found;
}
