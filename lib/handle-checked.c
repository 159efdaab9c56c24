/* SPDX-License-Identifier: MIT */
/* clmem_handle_wrap_checked: clmem_handle_wrap after asking OpenCL whether
 * the arguments make sense together. What the Rust original leaves to the
 * caller as undefined behaviour becomes a typed error here. */
#include "config.h"
#include "clmem.h"
#include "error-private.h"
#include "export.h"
#include "handle.h"

#include <stdbool.h>

static clmem_status cl_failed(const char *call, cl_int err, const char *what)
{
    return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, call, err, "%s", what);
}

static clmem_status not_a_queue(const char *call, cl_int err)
{
    return cl_failed(call, err, "queue is not a valid command queue.");
}

static bool is_mem_object_type(cl_mem_object_type type)
{
    switch (type) {
    case CL_MEM_OBJECT_BUFFER:
    case CL_MEM_OBJECT_IMAGE2D:
    case CL_MEM_OBJECT_IMAGE3D:
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
    case CL_MEM_OBJECT_PIPE: return true;
    }
    return false;
}

/* Is the queue's device one of the context's? A driver that answers
 * CL_QUEUE_* for any of its objects (PoCL 3.1: a cl_mem asked as a queue
 * gives its context, and its type where the device should be) fails it. */
static clmem_status check_queue_device(cl_command_queue queue, cl_context context)
{
    cl_device_id device = NULL, devices[64];
    size_t bytes = 0;
    cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL);

    if (err != CL_SUCCESS)
        return not_a_queue("clGetCommandQueueInfo(CL_QUEUE_DEVICE)", err);
    err = clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof devices, devices, &bytes);
    if (err != CL_SUCCESS) /* more than 64 devices: the check is skipped, not failed */
        return CLMEM_OK;
    for (size_t i = 0; i < bytes / sizeof devices[0]; i++)
        if (devices[i] == device)
            return CLMEM_OK;
    return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                       "queue is not a command queue: its CL_QUEUE_DEVICE %p is none of its context's %zu "
                       "devices (the driver answered a queue query on another kind of object).",
                       (void *)device, bytes / sizeof devices[0]);
}

static clmem_status handle_wrap_checked(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                                        clmem_keepalive *keepalive, clmem_handle **out)
{
    cl_context mem_ctx = NULL, queue_ctx = NULL;
    cl_mem_object_type type = 0;
    size_t size = 0;
    cl_int err;
    clmem_status s = clmem__handle_check_args(mem, queue, out);

    if (s != CLMEM_OK)
        return s;

    err = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof mem_ctx, &mem_ctx, NULL);
    if (err != CL_SUCCESS)
        return cl_failed("clGetMemObjectInfo(CL_MEM_CONTEXT)", err, "mem is not a valid memory object.");
    /* The type, whatever the pitch: PoCL 3.1 answers CL_SUCCESS when a
     * queue is asked as a memory object, with the queue's context, and only
     * the type shows it is none (docs/driver-notes.md). */
    err = clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof type, &type, NULL);
    if (err != CL_SUCCESS)
        return cl_failed("clGetMemObjectInfo(CL_MEM_TYPE)", err, "Querying the memory object type failed.");
    if (!is_mem_object_type(type))
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "mem is not a memory object: its CL_MEM_TYPE 0x%x is no memory object type (the "
                           "driver answered a memory object query on another kind of object).",
                           (unsigned)type);
    err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queue_ctx, &queue_ctx, NULL);
    if (err != CL_SUCCESS)
        return not_a_queue("clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", err);
    if (mem_ctx != queue_ctx)
        return clmem__fail(CLMEM_ERR_CONTEXT_MISMATCH, "mem belongs to context %p, the queue to context %p.",
                           (void *)mem_ctx, (void *)queue_ctx);
    if ((s = check_queue_device(queue, queue_ctx)) != CLMEM_OK)
        return s;

    if (row_pitch != 0) {
        if (type != CL_MEM_OBJECT_BUFFER)
            return clmem__fail(CLMEM_ERR_NOT_A_BUFFER,
                               "row_pitch is %u but mem is of type 0x%x, not CL_MEM_OBJECT_BUFFER; image "
                               "objects carry their own pitch and take row_pitch 0.",
                               (unsigned)row_pitch, (unsigned)type);
        err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL);
        if (err != CL_SUCCESS)
            return cl_failed("clGetMemObjectInfo(CL_MEM_SIZE)", err, "Querying the buffer size failed.");
        if (row_pitch > size)
            return clmem__fail(CLMEM_ERR_INVALID_VALUE, "row_pitch %u is larger than the buffer's %zu bytes.",
                               (unsigned)row_pitch, size);
    }
    return clmem__handle_create(mem, queue, row_pitch, keepalive, out);
}

CLMEM_EXPORT clmem_status clmem_handle_wrap_checked(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                                                    clmem_keepalive *keepalive, clmem_handle **out)
{
    return clmem__error_in(__func__, handle_wrap_checked(mem, queue, row_pitch, keepalive, out));
}
