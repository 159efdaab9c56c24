/* SPDX-License-Identifier: MIT */
/* clmem_handle_wrap and the handle's reference counting: the handle borrows
 * mem and queue and holds one reference on its anchor. */
#include "clmem.h"
#include "t/lib/cl-fixture.h"
#include "t/lib/tap.h"

#include <stdint.h>

static int release_calls;
static void *released_user;

static void record_release(void *user)
{
    release_calls++;
    released_user = user;
}

/* A borrowed wrap: refcounts of mem and queue never move; the anchor is
 * released only by the handle's last unref. */
static void test_wrap(struct cl_fixture *f, cl_mem mem)
{
    int tag = 0;
    cl_uint mem_before = cl_mem_refcount(mem);
    cl_uint queue_before = cl_queue_refcount(f->queue);
    clmem_keepalive *ka = clmem_keepalive_new(record_release, &tag);
    clmem_handle *h = NULL;

    release_calls = 0;
    released_user = NULL;
    tap_is_int(clmem_handle_wrap(mem, f->queue, 16, ka, &h), CLMEM_OK, "clmem_handle_wrap succeeds");
    tap_ok(h != NULL, "and gives a handle");
    tap_is_int(cl_mem_refcount(mem), mem_before, "wrap does not retain mem");
    tap_is_int(cl_queue_refcount(f->queue), queue_before, "wrap does not retain the queue");
    tap_ok(clmem_handle_mem(h) == mem, "clmem_handle_mem returns the wrapped mem");
    tap_ok(clmem_handle_queue(h) == f->queue, "clmem_handle_queue returns the wrapped queue");
    tap_is_int(clmem_handle_row_pitch(h), 16, "clmem_handle_row_pitch returns the wrapped pitch");
    tap_ok(clmem_handle_keepalive(h) == ka, "clmem_handle_keepalive returns the anchor");

    tap_ok(clmem_handle_ref(h) == h, "clmem_handle_ref returns its argument");
    tap_is_int(cl_mem_refcount(mem), mem_before, "handle ref does not retain mem");
    tap_is_int(cl_queue_refcount(f->queue), queue_before, "handle ref does not retain the queue");

    /* The handle took its own anchor reference: the caller's can go. */
    clmem_keepalive_unref(ka);
    tap_is_int(release_calls, 0, "the handle keeps the anchor alive after the caller drops it");
    clmem_handle_unref(h);
    tap_is_int(release_calls, 0, "dropping one of two handle references keeps the anchor");
    tap_ok(clmem_handle_keepalive(h) == ka, "the handle is still readable after that");
    clmem_handle_unref(h);
    tap_is_int(release_calls, 1, "the handle's last unref releases the anchor once");
    tap_ok(released_user == &tag, "with the anchor's user pointer");
    tap_is_int(cl_mem_refcount(mem), mem_before, "the last unref does not release mem");
    tap_is_int(cl_queue_refcount(f->queue), queue_before, "the last unref does not release the queue");

    /* No anchor at all is allowed. */
    h = NULL;
    tap_is_int(clmem_handle_wrap(mem, f->queue, 0, NULL, &h), CLMEM_OK, "wrap with a NULL anchor succeeds");
    tap_ok(h != NULL && clmem_handle_keepalive(h) == NULL, "and the handle has no anchor");
    tap_is_int(clmem_handle_row_pitch(h), 0, "row_pitch 0 is kept");
    clmem_handle_unref(h);

    /* wrap asks OpenCL nothing, so any pitch is kept as given. */
    tap_is_int(clmem_handle_wrap(mem, f->queue, UINT32_MAX, NULL, &h), CLMEM_OK,
               "wrap does not check row_pitch");
    tap_ok(clmem_handle_row_pitch(h) == UINT32_MAX, "the full 32-bit pitch is kept");
    clmem_handle_unref(h);
}

/* One NULL argument: CLMEM_ERR_NULL_POINTER, *out cleared, no anchor
 * reference taken (the caller's unref is then the last one). */
static void expect_null_rejected(const char *what, cl_mem mem, cl_command_queue queue, int use_out)
{
    int junk = 0;
    clmem_handle *out = (clmem_handle *)(void *)&junk; /* must be overwritten with NULL */
    clmem_keepalive *ka = clmem_keepalive_new(record_release, NULL);

    release_calls = 0;
    clmem_error_clear();
    tap_is_int(clmem_handle_wrap(mem, queue, 0, ka, use_out ? &out : NULL), CLMEM_ERR_NULL_POINTER,
               "wrap with %s returns CLMEM_ERR_NULL_POINTER", what);
    tap_is_int(clmem_error_status(), CLMEM_ERR_NULL_POINTER, "wrap with %s records it", what);
    tap_is_int(clmem_error_api(), CLMEM_API_NONE, "wrap with %s names no native API", what);
    if (use_out)
        tap_ok(out == NULL, "wrap with %s sets *out to NULL", what);
    clmem_keepalive_unref(ka);
    tap_is_int(release_calls, 1, "wrap with %s took no anchor reference", what);
}

static void test_null_args(struct cl_fixture *f, cl_mem mem)
{
    cl_uint mem_before = cl_mem_refcount(mem);
    cl_uint queue_before = cl_queue_refcount(f->queue);

    expect_null_rejected("a NULL mem", NULL, f->queue, 1);
    expect_null_rejected("a NULL queue", mem, NULL, 1);
    expect_null_rejected("a NULL out", mem, f->queue, 0);
    tap_is_int(cl_mem_refcount(mem), mem_before, "rejected wraps leave mem's refcount alone");
    tap_is_int(cl_queue_refcount(f->queue), queue_before, "rejected wraps leave the queue's refcount alone");
}

/* Successful calls leave the last-error record as it was. */
static void test_success_keeps_error(struct cl_fixture *f, cl_mem mem)
{
    clmem_handle *h = NULL;

    clmem_error_set(CLMEM_ERR_ZERO_SIZE, CLMEM_API_NONE, NULL, 0, "left here by the test");
    clmem_handle_wrap(mem, f->queue, 0, NULL, &h);
    clmem_handle_unref(clmem_handle_ref(h));
    tap_is_int(clmem_error_status(), CLMEM_ERR_ZERO_SIZE, "a successful wrap does not touch the last error");
    clmem_handle_unref(h);
    clmem_error_clear();
}

static void test_null_handle(void)
{
    tap_ok(clmem_handle_ref(NULL) == NULL, "clmem_handle_ref(NULL) returns NULL");
    clmem_error_set(CLMEM_ERR_ZERO_SIZE, CLMEM_API_NONE, NULL, 0, "left here by the test");
    clmem_handle_unref(NULL);
    tap_is_int(clmem_error_status(), CLMEM_ERR_ZERO_SIZE,
               "clmem_handle_unref(NULL) does nothing: the last error is left as it was");
    clmem_error_clear();
    tap_ok(clmem_handle_mem(NULL) == NULL, "clmem_handle_mem(NULL) is NULL");
    tap_ok(clmem_handle_queue(NULL) == NULL, "clmem_handle_queue(NULL) is NULL");
    tap_is_int(clmem_handle_row_pitch(NULL), 0, "clmem_handle_row_pitch(NULL) is 0");
    tap_ok(clmem_handle_keepalive(NULL) == NULL, "clmem_handle_keepalive(NULL) is NULL");
}

/* Every buffer, image and queue the test made is gone again: OpenCL objects
 * retain their context, so the fixture's context must be held only by the
 * fixture and its queue, and that queue only by the fixture. */
int main(void)
{
    struct cl_fixture f;
    cl_mem mem;

    cl_fixture_open(&f);
    mem = cl_fixture_buffer(&f, 256);
    tap_plan(48);
    test_wrap(&f, mem);
    test_null_args(&f, mem);
    test_success_keeps_error(&f, mem);
    test_null_handle();
    clReleaseMemObject(mem);
    cl_fixture_expect_no_leaks(&f);
    cl_fixture_close(&f);
    return tap_done();
}
