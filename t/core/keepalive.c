/* SPDX-License-Identifier: MIT */
/* Keepalive anchors: reference counting, the release callback, chains and
 * the OpenCL anchor (clmem_keepalive_new_cl); and the two internal
 * operations only libclmem-bridge uses, clmem__keepalive_try_ref and
 * clmem__keepalive_user_data. Since 0.2 those are inline functions in
 * lib/keepalive-private.h rather than exported ones: this test compiles the
 * same inline code the bridge does and runs it on anchors the library made,
 * so it also checks that the library and the header agree on the layout. */
#include "clmem.h"
#include "keepalive-private.h"
#include "t/lib/cl-fixture.h"
#include "t/lib/fake-cl.h"
#include "t/lib/tap.h"

#include <string.h>

/* ------------------------------------------------ release recorders */

/* record_release counts its calls and remembers the last user pointer. */
static int release_calls;
static void *released_user;

static void record_release(void *user)
{
    release_calls++;
    released_user = user;
}

/* A second function with the same signature, for clmem__keepalive_user_data. */
static void other_release(void *user)
{
    (void)user;
}

/* order_release appends the int that user points at to `order`, so a test
 * can see which anchors were released and in what order. */
static int order[8];
static int order_len;

static void order_release(void *user)
{
    if (order_len < (int)(sizeof order / sizeof order[0]))
        order[order_len] = *(const int *)user;
    order_len++;
}

/* ------------------------------------------------ a fake ICD object
 *
 * The release order (mem, then queue) and the rollback of a half-done
 * retain cannot be seen on real PoCL objects: OpenCL has no destructor
 * callback for a queue and PoCL's retains do not fail on valid objects.
 * An ICD object is any pointer whose first member is the dispatch table,
 * so these two objects route clRetain and clRelease through the real ICD
 * loader to the stubs below, which log what was called. Only the four
 * entries set in main() are ever called. */
/* (the objects themselves: t/lib/fake-cl.h) */

/* The calls made on the fake objects, in order: "M+" retain mem, "M-"
 * release mem, "Q+" and "Q-" for the queue. */
static char fake_log[64];
static cl_int fake_retain_mem_result = CL_SUCCESS;
static cl_int fake_retain_queue_result = CL_SUCCESS;

static void fake_log_call(const char *what)
{
    if (strlen(fake_log) + strlen(what) < sizeof fake_log)
        strcat(fake_log, what);
}

static cl_int CL_API_CALL fake_retain_mem(cl_mem mem)
{
    (void)mem;
    fake_log_call("M+");
    return fake_retain_mem_result;
}

static cl_int CL_API_CALL fake_release_mem(cl_mem mem)
{
    (void)mem;
    fake_log_call("M-");
    return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_retain_queue(cl_command_queue queue)
{
    (void)queue;
    fake_log_call("Q+");
    return fake_retain_queue_result;
}

static cl_int CL_API_CALL fake_release_queue(cl_command_queue queue)
{
    (void)queue;
    fake_log_call("Q-");
    return CL_SUCCESS;
}

/* PoCL runs a buffer's destructor callbacks when its last reference goes. */
static int mem_destroyed;

static void CL_CALLBACK on_mem_destroyed(cl_mem mem, void *user)
{
    (void)mem;
    (void)user;
    mem_destroyed++;
}

/* ------------------------------------------------ the tests */

static void test_new_ref_unref(void)
{
    int tag = 0;
    clmem_keepalive *ka;

    release_calls = 0;
    released_user = NULL;
    ka = clmem_keepalive_new(record_release, &tag);
    tap_ok(ka != NULL, "clmem_keepalive_new returns an anchor");
    tap_ok(clmem_keepalive_ref(ka) == ka, "clmem_keepalive_ref returns its argument");
    clmem_keepalive_unref(ka);
    tap_is_int(release_calls, 0, "dropping the extra reference does not release");
    clmem_keepalive_unref(ka);
    tap_is_int(release_calls, 1, "a new anchor holds exactly one reference: the next unref releases it");
    tap_ok(released_user == &tag, "release gets the user pointer given to clmem_keepalive_new");

    /* release may be NULL: the anchor is just freed (valgrind would see a
     * leak or a bad call). */
    ka = clmem_keepalive_new(NULL, &tag);
    tap_ok(ka != NULL, "clmem_keepalive_new accepts a NULL release");
    clmem_keepalive_unref(ka);

    tap_ok(clmem_keepalive_ref(NULL) == NULL, "clmem_keepalive_ref(NULL) returns NULL");
    release_calls = 0;
    clmem_error_set(CLMEM_ERR_ZERO_SIZE, CLMEM_API_NONE, NULL, 0, "left here by the test");
    clmem_keepalive_unref(NULL);
    tap_ok(release_calls == 0 && clmem_error_status() == CLMEM_ERR_ZERO_SIZE,
           "clmem_keepalive_unref(NULL) does nothing: no release runs, the last error is left as it was");
    clmem_error_clear();
    tap_ok(clmem__keepalive_try_ref(NULL) == NULL, "clmem__keepalive_try_ref(NULL) returns NULL");
}

/* try_ref_in_release runs try_ref on its own anchor from inside the release
 * callback: the count is already zero there but the memory is still valid
 * (the anchor is freed after release returns). That is the window in which
 * a cache lookup holding a weak pointer can meet a dying anchor, the one
 * case try_ref exists for. */
static clmem_keepalive *dying_anchor;
static clmem_keepalive *try_ref_seen_in_release;
static int try_ref_release_calls;

static void try_ref_in_release(void *user)
{
    (void)user;
    try_ref_release_calls++;
    try_ref_seen_in_release = clmem__keepalive_try_ref(dying_anchor);
}

static void test_try_ref(void)
{
    int tag = 0;
    clmem_keepalive *ka = clmem_keepalive_new(record_release, &tag);

    release_calls = 0;
    tap_ok(clmem__keepalive_try_ref(ka) == ka, "clmem__keepalive_try_ref on a live anchor returns it");
    clmem_keepalive_unref(ka);
    tap_is_int(release_calls, 0, "try_ref took a real reference: one unref does not release");
    clmem_keepalive_unref(ka);
    tap_is_int(release_calls, 1, "the second unref releases");

    /* An anchor whose last reference is being dropped refuses: a wrong
     * answer would hand out a reference to memory about to be freed. */
    try_ref_release_calls = 0;
    try_ref_seen_in_release = (clmem_keepalive *)(void *)&tag; /* must be overwritten with NULL */
    dying_anchor = clmem_keepalive_new(try_ref_in_release, NULL);
    clmem_keepalive_unref(dying_anchor);
    tap_ok(try_ref_release_calls == 1 && try_ref_seen_in_release == NULL,
           "try_ref during the last unref's release returns NULL");
    dying_anchor = NULL;
}

static void test_chain(void)
{
    int one = 1, two = 2;
    clmem_keepalive *a, *b, *c;

    /* The chain holds its own reference on both. */
    order_len = 0;
    a = clmem_keepalive_new(order_release, &one);
    b = clmem_keepalive_new(order_release, &two);
    c = clmem_keepalive_chain(a, b);
    tap_ok(c != NULL && c != a && c != b, "clmem_keepalive_chain returns a new anchor");
    clmem_keepalive_unref(a);
    clmem_keepalive_unref(b);
    tap_is_int(order_len, 0, "after the caller drops its references the chain keeps both alive");
    clmem_keepalive_unref(c);
    tap_is_int(order_len, 2, "dropping the chain releases both");
    tap_ok(order_len == 2 && order[0] == 1 && order[1] == 2, "first is released before then");

    /* The caller keeps its own references. */
    order_len = 0;
    a = clmem_keepalive_new(order_release, &one);
    b = clmem_keepalive_new(order_release, &two);
    c = clmem_keepalive_chain(a, b);
    clmem_keepalive_unref(c);
    tap_is_int(order_len, 0, "dropping the chain leaves the caller's references alone");
    clmem_keepalive_unref(b);
    clmem_keepalive_unref(a);
    tap_ok(order_len == 2 && order[0] == 2 && order[1] == 1, "the caller's own unrefs then release each");

    /* Either side may be NULL. */
    order_len = 0;
    a = clmem_keepalive_new(order_release, &one);
    c = clmem_keepalive_chain(a, NULL);
    tap_ok(c != NULL, "clmem_keepalive_chain(first, NULL) returns an anchor");
    clmem_keepalive_unref(a);
    tap_is_int(order_len, 0, "chain(first, NULL) holds first");
    clmem_keepalive_unref(c);
    tap_ok(order_len == 1 && order[0] == 1, "dropping chain(first, NULL) releases first");

    order_len = 0;
    b = clmem_keepalive_new(order_release, &two);
    c = clmem_keepalive_chain(NULL, b);
    tap_ok(c != NULL, "clmem_keepalive_chain(NULL, then) returns an anchor");
    clmem_keepalive_unref(b);
    tap_is_int(order_len, 0, "chain(NULL, then) holds then");
    clmem_keepalive_unref(c);
    tap_ok(order_len == 1 && order[0] == 2, "dropping chain(NULL, then) releases then");

    c = clmem_keepalive_chain(NULL, NULL);
    tap_ok(c != NULL, "clmem_keepalive_chain(NULL, NULL) returns an anchor");
    clmem_keepalive_unref(c);

    /* Chains nest: the inner chain is just another anchor. */
    order_len = 0;
    a = clmem_keepalive_new(order_release, &one);
    b = clmem_keepalive_new(order_release, &two);
    c = clmem_keepalive_chain(a, NULL);
    clmem_keepalive_unref(a);
    a = clmem_keepalive_chain(c, b); /* reuse a for the outer chain */
    clmem_keepalive_unref(c);
    clmem_keepalive_unref(b);
    tap_is_int(order_len, 0, "a nested chain keeps everything alive");
    clmem_keepalive_unref(a);
    tap_ok(order_len == 2 && order[0] == 1 && order[1] == 2, "a nested chain releases inner first, then then");
}

static void test_new_cl(struct cl_fixture *f)
{
    cl_mem mem = cl_fixture_buffer(f, 64);
    cl_uint mem_before = cl_mem_refcount(mem);
    cl_uint queue_before = cl_queue_refcount(f->queue);
    clmem_keepalive *ka;

    ka = clmem_keepalive_new_cl(mem, f->queue);
    tap_ok(ka != NULL, "clmem_keepalive_new_cl returns an anchor");
    tap_is_int(cl_mem_refcount(mem), mem_before + 1, "new_cl retains mem once");
    tap_is_int(cl_queue_refcount(f->queue), queue_before + 1, "new_cl retains the queue once");
    clmem_keepalive_ref(ka);
    clmem_keepalive_unref(ka);
    tap_is_int(cl_mem_refcount(mem), mem_before + 1, "a ref/unref pair on the anchor leaves mem retained");
    clmem_keepalive_unref(ka);
    tap_is_int(cl_mem_refcount(mem), mem_before, "the last unref releases mem");
    tap_is_int(cl_queue_refcount(f->queue), queue_before, "the last unref releases the queue");

    /* With the caller's reference gone, the anchor's is the last one: its
     * release must really destroy the buffer. */
    mem_destroyed = 0;
    clSetMemObjectDestructorCallback(mem, on_mem_destroyed, NULL);
    ka = clmem_keepalive_new_cl(mem, f->queue);
    clReleaseMemObject(mem);
    tap_is_int(mem_destroyed, 0, "the anchor keeps the buffer alive after the caller released it");
    clmem_keepalive_unref(ka);
    tap_is_int(mem_destroyed, 1, "the anchor's last unref destroys the buffer");
    tap_is_int(cl_queue_refcount(f->queue), queue_before, "and leaves the queue as it found it");

    clmem_error_clear();
    tap_ok(clmem_keepalive_new_cl(NULL, f->queue) == NULL, "new_cl(NULL, queue) returns NULL");
    tap_is_int(clmem_error_status(), CLMEM_ERR_NULL_POINTER, "new_cl(NULL, queue) records CLMEM_ERR_NULL_POINTER");
    tap_is_int(cl_queue_refcount(f->queue), queue_before, "new_cl(NULL, queue) does not retain the queue");
    mem = cl_fixture_buffer(f, 64);
    mem_before = cl_mem_refcount(mem);
    clmem_error_clear();
    tap_ok(clmem_keepalive_new_cl(mem, NULL) == NULL, "new_cl(mem, NULL) returns NULL");
    tap_is_int(clmem_error_status(), CLMEM_ERR_NULL_POINTER, "new_cl(mem, NULL) records CLMEM_ERR_NULL_POINTER");
    tap_is_int(cl_mem_refcount(mem), mem_before, "new_cl(mem, NULL) does not retain mem");
    clReleaseMemObject(mem);
}

/* The order of the releases and the rollback of a failed retain, seen on
 * the fake objects. */
static void test_new_cl_fake(void)
{
    clmem_keepalive *ka;

    fake_log[0] = '\0';
    ka = clmem_keepalive_new_cl(FAKE_MEM, FAKE_QUEUE);
    tap_ok(ka != NULL && strcmp(fake_log, "M+Q+") == 0, "new_cl retains mem, then the queue (%s)", fake_log);
    fake_log[0] = '\0';
    clmem_keepalive_unref(ka);
    tap_ok(strcmp(fake_log, "M-Q-") == 0, "the last unref releases mem, then the queue (%s)", fake_log);

    fake_log[0] = '\0';
    fake_retain_mem_result = CL_INVALID_MEM_OBJECT;
    clmem_error_clear();
    ka = clmem_keepalive_new_cl(FAKE_MEM, FAKE_QUEUE);
    fake_retain_mem_result = CL_SUCCESS;
    tap_ok(ka == NULL, "new_cl returns NULL when clRetainMemObject fails");
    tap_is_int(clmem_error_status(), CLMEM_ERR_OPENCL, "and records CLMEM_ERR_OPENCL");
    tap_is_int(clmem_error_native_code(), CL_INVALID_MEM_OBJECT, "with the OpenCL code");
    tap_ok(strcmp(fake_log, "M+") == 0, "and retains nothing else (%s)", fake_log);

    fake_log[0] = '\0';
    fake_retain_queue_result = CL_INVALID_COMMAND_QUEUE;
    clmem_error_clear();
    ka = clmem_keepalive_new_cl(FAKE_MEM, FAKE_QUEUE);
    fake_retain_queue_result = CL_SUCCESS;
    tap_ok(ka == NULL, "new_cl returns NULL when clRetainCommandQueue fails");
    tap_is_int(clmem_error_native_code(), CL_INVALID_COMMAND_QUEUE, "and records the OpenCL code");
    tap_ok(clmem_error_call() && strcmp(clmem_error_call(), "clRetainCommandQueue") == 0,
           "and names clRetainCommandQueue");
    tap_ok(strcmp(fake_log, "M+Q+M-") == 0, "and gives back the mem reference it took (%s)", fake_log);
}

static void test_user_data(struct cl_fixture *f)
{
    int tag = 0;
    clmem_keepalive *ka = clmem_keepalive_new(record_release, &tag);
    clmem_keepalive *chain = clmem_keepalive_chain(ka, NULL);
    cl_mem mem = cl_fixture_buffer(f, 64);
    clmem_keepalive *cl = clmem_keepalive_new_cl(mem, f->queue);

    tap_ok(clmem__keepalive_user_data(ka, record_release) == &tag, "user_data with the matching release gives user");
    tap_ok(clmem__keepalive_user_data(ka, other_release) == NULL, "user_data with another release gives NULL");
    tap_ok(clmem__keepalive_user_data(ka, NULL) == NULL, "user_data with a NULL release gives NULL");
    tap_ok(clmem__keepalive_user_data(NULL, record_release) == NULL, "user_data of NULL gives NULL");
    tap_ok(clmem__keepalive_user_data(chain, record_release) == NULL, "user_data of a chain gives NULL");
    tap_ok(clmem__keepalive_user_data(cl, record_release) == NULL, "user_data of an OpenCL anchor gives NULL");

    release_calls = 0;
    clmem_keepalive_unref(cl);
    clmem_keepalive_unref(chain);
    tap_is_int(release_calls, 0, "user_data took no reference (the caller's is still there)");
    clmem_keepalive_unref(ka);
    tap_is_int(release_calls, 1, "and the caller's unref releases");
    clReleaseMemObject(mem);
}

/* Every buffer, image and queue the test made is gone again: OpenCL objects
 * retain their context, so the fixture's context must be held only by the
 * fixture and its queue, and that queue only by the fixture. */
int main(void)
{
    struct cl_fixture f;

    fake_dispatch.clRetainMemObject = fake_retain_mem;
    fake_dispatch.clReleaseMemObject = fake_release_mem;
    fake_dispatch.clRetainCommandQueue = fake_retain_queue;
    fake_dispatch.clReleaseCommandQueue = fake_release_queue;

    cl_fixture_open(&f);
    tap_plan(63);
    test_new_ref_unref();
    test_try_ref();
    test_chain();
    test_new_cl(&f);
    test_new_cl_fake();
    test_user_data(&f);
    cl_fixture_expect_no_leaks(&f);
    cl_fixture_close(&f);
    return tap_done();
}
