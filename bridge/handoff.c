/* Ownership handoff between Vulkan and OpenCL, one call for every path:
 * the fd paths use the extension's acquire/release; the host-mapped path
 * uses the unmap/map that CL_MEM_USE_HOST_PTR defines as its sync points. */
#include "config.h"
#include "clmem-bridge.h"
#include "export.h"
#include "fault.h"
#include "import.h"

static clmem_status find_import(const clmem_handle *h, struct bridge_import **rec_out)
{
    if (!h)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The handle is NULL.");
    *rec_out = clmem__import_of_handle(h);
    if (!*rec_out)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The handle did not come from clmem-bridge, so there is nothing to hand over.");
    return CLMEM_OK;
}

static clmem_status handoff_acquire(struct bridge_import *rec, cl_command_queue queue, cl_uint num_events,
                                    const cl_event *wait_list, cl_event *event_out)
{
    _Bool expected = 0;
    cl_int err;

    if (!atomic_compare_exchange_strong(&rec->acquired, &expected, 1))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The memory is already acquired by OpenCL; release it first.");
    if (rec->path == CLMEM_PATH_HOST_MAPPED) {
        err = FAULT("clEnqueueUnmapMemObject") ? CL_OUT_OF_RESOURCES
                                               : clEnqueueUnmapMemObject(queue, rec->parent, rec->cl_map_ptr,
                                                                         num_events, wait_list, event_out);
        if (err == CL_SUCCESS) {
            rec->cl_map_ptr = NULL;
            return CLMEM_OK;
        }
        atomic_store(&rec->acquired, 0);
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clEnqueueUnmapMemObject", err,
                               "Handing host-mapped memory to the device failed.");
    }
    if (!rec->ext->acquire_external) {
        atomic_store(&rec->acquired, 0);
        return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0,
                               "The platform has no clEnqueueAcquireExternalMemObjectsKHR.");
    }
    err = FAULT("clEnqueueAcquireExternalMemObjectsKHR")
              ? CL_OUT_OF_RESOURCES
              : rec->ext->acquire_external(queue, 1, &rec->parent, num_events, wait_list, event_out);
    if (err == CL_SUCCESS)
        return CLMEM_OK;
    atomic_store(&rec->acquired, 0);
    return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clEnqueueAcquireExternalMemObjectsKHR", err,
                           "Acquiring the imported memory failed.");
}

static clmem_status release_on(struct bridge_import *rec, cl_command_queue queue, cl_uint num_events,
                               const cl_event *wait_list, cl_event *event_out)
{
    _Bool expected = 1;
    cl_int err = CL_OUT_OF_RESOURCES;

    if (!atomic_compare_exchange_strong(&rec->acquired, &expected, 0))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The memory is not acquired by OpenCL, so it cannot be released.");
    if (rec->path == CLMEM_PATH_HOST_MAPPED) {
        void *p = FAULT("clEnqueueMapBuffer")
                      ? NULL
                      : clEnqueueMapBuffer(queue, rec->parent, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                           rec->parent_size, num_events, wait_list, event_out, &err);
        if (err == CL_SUCCESS && p) {
            rec->cl_map_ptr = p;
            return CLMEM_OK;
        }
        atomic_store(&rec->acquired, 1);
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clEnqueueMapBuffer", err,
                               "Handing host-mapped memory back to the host failed.");
    }
    if (!rec->ext->release_external) {
        atomic_store(&rec->acquired, 1);
        return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0,
                               "The platform has no clEnqueueReleaseExternalMemObjectsKHR.");
    }
    err = FAULT("clEnqueueReleaseExternalMemObjectsKHR")
              ? CL_OUT_OF_RESOURCES
              : rec->ext->release_external(queue, 1, &rec->parent, num_events, wait_list, event_out);
    if (err == CL_SUCCESS)
        return CLMEM_OK;
    atomic_store(&rec->acquired, 1);
    return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clEnqueueReleaseExternalMemObjectsKHR", err,
                           "Releasing the imported memory failed.");
}

clmem_status clmem__handoff_release(struct bridge_import *rec, cl_uint num_events, const cl_event *wait_list,
                             cl_event *event_out)
{
    return release_on(rec, rec->queue, num_events, wait_list, event_out);
}

CLMEM_EXPORT clmem_status clmem_bridge_acquire(const clmem_handle *h, cl_uint num_events, const cl_event *wait_list,
                                               cl_event *event_out)
{
    struct bridge_import *rec;
    clmem_status s = find_import(h, &rec);
    if (s != CLMEM_OK)
        return s;
    return handoff_acquire(rec, clmem_handle_queue(h), num_events, wait_list, event_out);
}

CLMEM_EXPORT clmem_status clmem_bridge_release(const clmem_handle *h, cl_uint num_events, const cl_event *wait_list,
                                               cl_event *event_out)
{
    struct bridge_import *rec;
    clmem_status s = find_import(h, &rec);
    if (s != CLMEM_OK)
        return s;
    return release_on(rec, clmem_handle_queue(h), num_events, wait_list, event_out);
}
