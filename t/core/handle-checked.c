/* SPDX-License-Identifier: MIT */
/* clmem_handle_wrap_checked: every rejection, and that success is the same
 * borrowed wrap as clmem_handle_wrap. */
#include "clmem.h"
#include "t/lib/cl-fixture.h"
#include "t/lib/fake-cl.h"
#include "t/lib/tap.h"

#include <stdint.h>
#include <string.h>

static int release_calls;

static void count_release(void *user)
{
    (void)user;
    release_calls++;
}

/* ------------------------------------------------ fake ICD objects
 *
 * Making clGetMemObjectInfo or clGetCommandQueueInfo fail needs an invalid
 * object, and there is no safe one on PoCL 3.1: it does not check object
 * types (a cl_command_queue passed as a cl_mem is answered with
 * CL_SUCCESS), a freed object is a use-after-free, and a junk pointer
 * crashes in the ICD loader, which calls through the object's first word.
 * So these objects carry a dispatch table of their own: the real ICD
 * loader routes the two query calls to the stubs below, which answer like
 * a driver would. */
/* (the objects themselves: t/lib/fake-cl.h) */

/* The fake mem is a 64-byte buffer in fake_context, except that querying
 * fake_failing_param fails with CL_INVALID_MEM_OBJECT. */
static cl_context fake_context;
static cl_mem_info fake_failing_param;

static cl_int CL_API_CALL fake_get_mem_info(cl_mem mem, cl_mem_info param, size_t size, void *value,
                                            size_t *size_ret)
{
    (void)mem;
    (void)size_ret;
    if (param == fake_failing_param)
        return CL_INVALID_MEM_OBJECT;
    if (param == CL_MEM_CONTEXT && size == sizeof(cl_context))
        memcpy(value, &fake_context, sizeof(cl_context));
    else if (param == CL_MEM_TYPE && size == sizeof(cl_mem_object_type))
        *(cl_mem_object_type *)value = CL_MEM_OBJECT_BUFFER;
    else if (param == CL_MEM_SIZE && size == sizeof(size_t))
        *(size_t *)value = 64;
    else
        return CL_INVALID_VALUE;
    return CL_SUCCESS;
}

/* The fake queue is never valid. */
static cl_int CL_API_CALL fake_get_queue_info(cl_command_queue queue, cl_command_queue_info param, size_t size,
                                              void *value, size_t *size_ret)
{
    (void)queue;
    (void)param;
    (void)size;
    (void)value;
    (void)size_ret;
    return CL_INVALID_COMMAND_QUEUE;
}

/* ------------------------------------------------ helpers */

/* wrap_checked must fail with `want`, record it (with `call` and `code`
 * when an OpenCL call failed), set *out to NULL and take no anchor
 * reference. 6 test points. */
static void expect_rejected(const char *what, cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                            clmem_status want, const char *call, cl_int code)
{
    int junk = 0;
    clmem_handle *out = (clmem_handle *)(void *)&junk; /* must be overwritten with NULL */
    clmem_keepalive *ka = clmem_keepalive_new(count_release, NULL);
    const char *got_call;

    release_calls = 0;
    clmem_error_clear();
    tap_is_int(clmem_handle_wrap_checked(mem, queue, row_pitch, ka, &out), want, "%s: returns %s", what,
               clmem_status_str(want));
    tap_is_int(clmem_error_status(), want, "%s: records the status", what);
    got_call = clmem_error_call();
    if (call) {
        tap_ok(clmem_error_api() == CLMEM_API_OPENCL && clmem_error_native_code() == code,
               "%s: records OpenCL code %d (got api %d, code %d)", what, (int)code, (int)clmem_error_api(),
               (int)clmem_error_native_code());
        tap_ok(got_call && strcmp(got_call, call) == 0, "%s: names %s (got %s)", what, call,
               got_call ? got_call : "NULL");
    } else {
        tap_ok(clmem_error_api() == CLMEM_API_NONE && clmem_error_native_code() == 0,
               "%s: records no native code", what);
        tap_ok(got_call == NULL, "%s: names no native call (got %s)", what, got_call ? got_call : "NULL");
    }
    tap_ok(out == NULL, "%s: sets *out to NULL", what);
    clmem_keepalive_unref(ka);
    tap_is_int(release_calls, 1, "%s: took no anchor reference", what);
}

/* wrap_checked must succeed like wrap: borrowed mem and queue, one anchor
 * reference held until the handle's last unref. 7 test points. */
static void expect_accepted(const char *what, cl_mem mem, cl_command_queue queue, uint32_t row_pitch)
{
    cl_uint mem_before = cl_mem_refcount(mem);
    cl_uint queue_before = cl_queue_refcount(queue);
    clmem_keepalive *ka = clmem_keepalive_new(count_release, NULL);
    clmem_handle *h = NULL;
    clmem_status s;

    release_calls = 0;
    s = clmem_handle_wrap_checked(mem, queue, row_pitch, ka, &h);
    tap_is_int(s, CLMEM_OK, "%s: accepted", what);
    if (s != CLMEM_OK)
        tap_diag("  %s", clmem_error_message());
    tap_ok(h && clmem_handle_mem(h) == mem && clmem_handle_queue(h) == queue &&
               clmem_handle_row_pitch(h) == row_pitch && clmem_handle_keepalive(h) == ka,
           "%s: the handle holds what was wrapped", what);
    tap_ok(cl_mem_refcount(mem) == mem_before && cl_queue_refcount(queue) == queue_before,
           "%s: mem and queue are borrowed, not retained", what);
    clmem_keepalive_unref(ka);
    tap_is_int(release_calls, 0, "%s: the handle holds the anchor after the caller drops it", what);
    clmem_handle_unref(h);
    tap_is_int(release_calls, 1, "%s: the handle's last unref releases the anchor", what);
    tap_is_int(cl_mem_refcount(mem), mem_before, "%s: unref does not release mem", what);
    tap_is_int(cl_queue_refcount(queue), queue_before, "%s: unref does not release the queue", what);
}

static cl_mem create_image(struct cl_fixture *f)
{
    cl_image_format format = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc;
    cl_int err;
    cl_mem image;

    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 4;
    desc.image_height = 4;
    image = clCreateImage(f->context, CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateImage(4x4 RGBA8) failed: %d", err);
    return image;
}

/* Every buffer, image and queue the test made is gone again: OpenCL objects
 * retain their context, so the fixture's context must be held only by the
 * fixture and its queue, and that queue only by the fixture. */
int main(void)
{
    struct cl_fixture f;
    cl_mem buffer, image, sub, other_buffer;
    cl_buffer_region region = {0, 64};
    cl_context other_context;
    cl_command_queue other_queue;
    cl_int err;

    fake_dispatch.clGetMemObjectInfo = fake_get_mem_info;
    fake_dispatch.clGetCommandQueueInfo = fake_get_queue_info;

    cl_fixture_open(&f);
    buffer = cl_fixture_buffer(&f, 256);
    image = create_image(&f);
    sub = clCreateSubBuffer(buffer, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateSubBuffer(0, 64) failed: %d", err);
    other_context = clCreateContext(NULL, 1, &f.device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateContext (a second one) failed: %d", err);
    other_queue = clCreateCommandQueueWithProperties(other_context, f.device, NULL, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateCommandQueueWithProperties (second context) failed: %d", err);
    other_buffer = clCreateBuffer(other_context, CL_MEM_READ_WRITE, 32, NULL, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateBuffer (second context) failed: %d", err);
    fake_context = f.context;

    tap_plan(12 * 6 + 6 * 7 + 2);

    /* The NULL checks are the same as clmem_handle_wrap's. */
    expect_rejected("NULL mem", NULL, f.queue, 0, CLMEM_ERR_NULL_POINTER, NULL, 0);
    expect_rejected("NULL queue", buffer, NULL, 0, CLMEM_ERR_NULL_POINTER, NULL, 0);

    /* Invalid objects: the OpenCL error is passed on as it came. */
    fake_failing_param = CL_MEM_CONTEXT;
    expect_rejected("an invalid mem", FAKE_MEM, f.queue, 0, CLMEM_ERR_OPENCL, "clGetMemObjectInfo(CL_MEM_CONTEXT)",
                    CL_INVALID_MEM_OBJECT);
    expect_rejected("an invalid queue", buffer, FAKE_QUEUE, 0, CLMEM_ERR_OPENCL,
                    "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", CL_INVALID_COMMAND_QUEUE);
    /* A mem whose context query works but whose later queries fail. */
    fake_failing_param = CL_MEM_TYPE;
    expect_rejected("a mem whose type query fails", FAKE_MEM, f.queue, 16, CLMEM_ERR_OPENCL,
                    "clGetMemObjectInfo(CL_MEM_TYPE)", CL_INVALID_MEM_OBJECT);
    fake_failing_param = CL_MEM_SIZE;
    expect_rejected("a mem whose size query fails", FAKE_MEM, f.queue, 16, CLMEM_ERR_OPENCL,
                    "clGetMemObjectInfo(CL_MEM_SIZE)", CL_INVALID_MEM_OBJECT);

    /* Real objects that do not go together. */
    expect_rejected("a queue of another context", buffer, other_queue, 0, CLMEM_ERR_CONTEXT_MISMATCH, NULL, 0);
    expect_rejected("a row_pitch on an image", image, f.queue, 16, CLMEM_ERR_NOT_A_BUFFER, NULL, 0);
    expect_rejected("a row_pitch one past the buffer", buffer, f.queue, 257, CLMEM_ERR_INVALID_VALUE, NULL, 0);
    expect_rejected("row_pitch UINT32_MAX", buffer, f.queue, UINT32_MAX, CLMEM_ERR_INVALID_VALUE, NULL, 0);
    /* A sub-buffer's size is its own, not its parent's. */
    expect_rejected("a row_pitch past a sub-buffer", sub, f.queue, 65, CLMEM_ERR_INVALID_VALUE, NULL, 0);
    /* The context check also holds with row_pitch 0 on an image. */
    expect_rejected("an image with a queue of another context", image, other_queue, 0,
                    CLMEM_ERR_CONTEXT_MISMATCH, NULL, 0);

    expect_accepted("a buffer with row_pitch 0", buffer, f.queue, 0);
    expect_accepted("a buffer with a row_pitch inside it", buffer, f.queue, 16);
    expect_accepted("a buffer with row_pitch equal to its size", buffer, f.queue, 256);
    expect_accepted("a sub-buffer with row_pitch equal to its size", sub, f.queue, 64);
    expect_accepted("an image with row_pitch 0", image, f.queue, 0);
    expect_accepted("a buffer and queue of the second context", other_buffer, other_queue, 32);

    clReleaseMemObject(other_buffer);
    clReleaseCommandQueue(other_queue);
    clReleaseContext(other_context);
    clReleaseMemObject(sub);
    clReleaseMemObject(image);
    clReleaseMemObject(buffer);
    cl_fixture_expect_no_leaks(&f);
    cl_fixture_close(&f);
    return tap_done();
}
