/* clmem_handle_wrap_checked: clmem_handle_wrap after asking OpenCL whether
 * the arguments make sense together. What the Rust original leaves to the
 * caller as undefined behaviour becomes a typed error here. */
#include "config.h"
#include "clmem.h"
#include "export.h"
#include "handle.h"

static clmem_status cl_failed(const char *call, cl_int err, const char *what)
{
    return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, call, err, "%s", what);
}

CLMEM_EXPORT clmem_status clmem_handle_wrap_checked(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
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
    err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queue_ctx, &queue_ctx, NULL);
    if (err != CL_SUCCESS)
        return cl_failed("clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", err, "queue is not a valid command queue.");
    if (mem_ctx != queue_ctx)
        return clmem_error_set(CLMEM_ERR_CONTEXT_MISMATCH, CLMEM_API_NONE, NULL, 0,
                               "mem belongs to context %p, the queue to context %p.", (void *)mem_ctx,
                               (void *)queue_ctx);

    if (row_pitch != 0) {
        err = clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof type, &type, NULL);
        if (err != CL_SUCCESS)
            return cl_failed("clGetMemObjectInfo(CL_MEM_TYPE)", err, "Querying the memory object type failed.");
        if (type != CL_MEM_OBJECT_BUFFER)
            return clmem_error_set(CLMEM_ERR_NOT_A_BUFFER, CLMEM_API_NONE, NULL, 0,
                                   "row_pitch is %u but mem is of type 0x%x, not CL_MEM_OBJECT_BUFFER; image "
                                   "objects carry their own pitch and take row_pitch 0.",
                                   (unsigned)row_pitch, (unsigned)type);
        err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL);
        if (err != CL_SUCCESS)
            return cl_failed("clGetMemObjectInfo(CL_MEM_SIZE)", err, "Querying the buffer size failed.");
        if (row_pitch > size)
            return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                                   "row_pitch %u is larger than the buffer's %zu bytes.", (unsigned)row_pitch,
                                   size);
    }
    return clmem__handle_create(mem, queue, row_pitch, keepalive, out);
}
