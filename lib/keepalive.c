/* SPDX-License-Identifier: MIT */
/* Keep-alive anchors: refcounted objects whose last release runs a
 * callback exactly once. Chains and the OpenCL anchor are anchors whose
 * callback drops what they hold; they live in one allocation each. */
#include "config.h"
#include "clmem.h"
#include "error-private.h"
#include "export.h"
#include "fault.h"
#include "keepalive-private.h"

#include <stdlib.h>

/* An anchor that holds two others; `base.user` points at itself. */
struct chain_anchor {
    struct clmem_keepalive base;
    clmem_keepalive *first;
    clmem_keepalive *then;
};

/* An anchor that holds retained OpenCL objects. */
struct cl_anchor {
    struct clmem_keepalive base;
    cl_mem mem;
    cl_command_queue queue;
};

static void *anchor_alloc(size_t size, void (*release)(void *), void *user)
{
    struct clmem_keepalive *ka = FAULT("anchor_alloc") ? NULL : malloc(size);
    if (!ka) {
        clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating an anchor of %zu bytes failed.", size);
        return NULL;
    }
    clmem__keepalive_init(ka, release, user);
    return ka;
}

CLMEM_EXPORT clmem_keepalive *clmem_keepalive_new(void (*release)(void *user), void *user)
{
    clmem_keepalive *ka = anchor_alloc(sizeof(struct clmem_keepalive), release, user);
    return ka ? ka : clmem__null_in(__func__);
}

CLMEM_EXPORT clmem_keepalive *clmem_keepalive_ref(clmem_keepalive *ka)
{
    if (ka && !live_ref(&ka->refs, &ka->live, MARK_ANCHOR, "clmem_keepalive_ref", ka))
        return NULL;
    return ka;
}

/* The last reference went: out of line, so that an unref that is not the
 * last needs no stack frame. */
static __attribute__((noinline)) void anchor_destroy(clmem_keepalive *ka)
{
    /* Dead from here: a ref or unref of it from inside its own release
     * aborts, rather than reviving what is about to be freed. */
    ka->live = MARK_DEAD;
    if (ka->release)
        ka->release(ka->user);
    /* The header: anchors of any size end here. */
    live_free(ka, &ka->live, sizeof *ka);
}

CLMEM_EXPORT void clmem_keepalive_unref(clmem_keepalive *ka)
{
    if (ka && live_unref(&ka->refs, &ka->live, MARK_ANCHOR, "clmem_keepalive_unref", ka))
        anchor_destroy(ka);
}

static void chain_release(void *user)
{
    struct chain_anchor *c = user;
    clmem_keepalive_unref(c->first);
    clmem_keepalive_unref(c->then);
}

CLMEM_EXPORT clmem_keepalive *clmem_keepalive_chain(clmem_keepalive *first, clmem_keepalive *then)
{
    struct chain_anchor *c = anchor_alloc(sizeof *c, chain_release, NULL);
    if (!c)
        return clmem__null_in(__func__);
    c->base.user = c;
    c->first = clmem_keepalive_ref(first);
    c->then = clmem_keepalive_ref(then);
    return &c->base;
}

static void cl_anchor_release(void *user)
{
    struct cl_anchor *a = user;
    clReleaseMemObject(a->mem);
    clReleaseCommandQueue(a->queue);
}

static clmem_keepalive *keepalive_new_cl(cl_mem mem, cl_command_queue queue)
{
    struct cl_anchor *a;
    cl_int err;

    if (!mem || !queue) {
        clmem__null_arg(!mem ? "mem" : "queue");
        return NULL;
    }
    a = anchor_alloc(sizeof *a, cl_anchor_release, NULL);
    if (!a)
        return NULL;
    err = clRetainMemObject(mem);
    if (err != CL_SUCCESS) {
        clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clRetainMemObject", err, "mem is not a valid cl_mem.");
        free(a);
        return NULL;
    }
    err = clRetainCommandQueue(queue);
    if (err != CL_SUCCESS) {
        clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clRetainCommandQueue", err,
                        "queue is not a valid cl_command_queue.");
        clReleaseMemObject(mem);
        free(a);
        return NULL;
    }
    a->base.user = a;
    a->mem = mem;
    a->queue = queue;
    return &a->base;
}

CLMEM_EXPORT clmem_keepalive *clmem_keepalive_new_cl(cl_mem mem, cl_command_queue queue)
{
    clmem_keepalive *ka = keepalive_new_cl(mem, queue);
    return ka ? ka : clmem__null_in(__func__);
}
