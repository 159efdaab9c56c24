/* Ownership handoff between Vulkan and OpenCL, one call for every path:
 * the import's path does the enqueue (path-fd.c: the extension's
 * acquire/release; path-host.c: the unmap/map CL_MEM_USE_HOST_PTR defines
 * as its sync points); the state and its checks are here. */
#include "config.h"
#include "export.h"
#include "import.h"

static clmem_status find_import(clmem_bridge *b, const clmem_handle *h, struct bridge_import **rec_out)
{
    if (!b || !h)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s is NULL.",
                               !b ? "bridge" : "handle");
    *rec_out = clmem__import_of_handle(h);
    if (!*rec_out)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The handle did not come from clmem-bridge, so there is nothing to hand over.");
    if ((*rec_out)->bridge != b)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The handle belongs to bridge %p, not to bridge %p.", (void *)(*rec_out)->bridge,
                               (void *)b);
    return CLMEM_OK;
}

static clmem_status acquire_on(struct bridge_import *rec, cl_command_queue queue, cl_uint n, const cl_event *wait,
                               cl_event *event_out)
{
    const char *call = NULL;
    _Bool expected = 0;
    cl_int err;

    if (!atomic_compare_exchange_strong(&rec->acquired, &expected, 1))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The memory is already acquired by OpenCL; release it first.");
    err = rec->ops->acquire(rec, queue, n, wait, event_out, &call);
    if (err == CL_SUCCESS) {
        rec->acquired_on = queue; /* the teardown hands it back there if the user does not */
        return CLMEM_OK;
    }
    atomic_store(&rec->acquired, 0);
    return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, call, err,
                           "Handing the imported memory (%s) to OpenCL failed.",
                           clmem_bridge_path_name(rec->ops->path));
}

clmem_status clmem__import_release_on(struct bridge_import *rec, cl_command_queue queue, cl_uint n,
                                      const cl_event *wait, cl_event *event_out)
{
    const char *call = NULL;
    _Bool expected = 1;
    cl_int err;

    if (!atomic_compare_exchange_strong(&rec->acquired, &expected, 0))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The memory is not acquired by OpenCL, so it cannot be released.");
    err = rec->ops->release(rec, queue, n, wait, event_out, &call);
    if (err == CL_SUCCESS)
        return CLMEM_OK;
    atomic_store(&rec->acquired, 1);
    return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, call, err,
                           "Handing the imported memory (%s) back to Vulkan failed.",
                           clmem_bridge_path_name(rec->ops->path));
}

CLMEM_EXPORT clmem_status clmem_bridge_acquire(clmem_bridge *b, const clmem_handle *h, cl_uint num_events,
                                               const cl_event *wait_list, cl_event *event_out)
{
    struct bridge_import *rec;
    clmem_status s = find_import(b, h, &rec);
    if (s != CLMEM_OK)
        return s;
    return acquire_on(rec, clmem_handle_queue(h), num_events, wait_list, event_out);
}

CLMEM_EXPORT clmem_status clmem_bridge_release(clmem_bridge *b, const clmem_handle *h, cl_uint num_events,
                                               const cl_event *wait_list, cl_event *event_out)
{
    struct bridge_import *rec;
    clmem_status s = find_import(b, h, &rec);
    if (s != CLMEM_OK)
        return s;
    return clmem__import_release_on(rec, clmem_handle_queue(h), num_events, wait_list, event_out);
}
