/* SPDX-License-Identifier: MIT */
/* A decoder hands a frame to a compute stage through a clmem_handle. */
#include <clmem.h>
#include <stdio.h>

/* The consumer: it gets a handle, takes its own reference, and may keep it
 * as long as it likes; the anchor keeps the cl_mem and queue alive. */
static clmem_handle *kept;
static void consume(clmem_handle *frame)
{
    kept = clmem_handle_ref(frame);
    printf("consumer got %u-byte rows\n", clmem_handle_row_pitch(frame));
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
        return 77;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    cl_mem frame = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1088 * 1920 * 4, NULL, &err);

    /* The producer: the anchor retains mem and queue; the handle borrows. */
    clmem_keepalive *anchor = clmem_keepalive_new_cl(frame, queue);
    clmem_handle *h = NULL;
    clmem_status s = clmem_handle_wrap_checked(frame, queue, 1920 * 4, anchor, &h);
    if (s != CLMEM_OK) {
        fprintf(stderr, "wrap failed: %s\n", clmem_error_message());
        return 1;
    }
    clmem_keepalive_unref(anchor); /* the handle holds its own reference */
    clReleaseMemObject(frame);     /* and the anchor holds the objects */
    clReleaseCommandQueue(queue);

    consume(h);
    clmem_handle_unref(h);    /* the producer is done */
    clmem_handle_unref(kept); /* the last reference releases mem, then queue */
    clReleaseContext(ctx);
    return 0;
}
