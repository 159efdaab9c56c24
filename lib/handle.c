/* SPDX-License-Identifier: MIT */
/* clmem_handle: an immutable, refcounted (cl_mem, queue, row pitch,
 * anchor) value. It borrows the OpenCL objects; only the anchor is held. */
#include "config.h"
#include "clmem.h"
#include "error-private.h"
#include "export.h"
#include "fault.h"
#include "handle.h"
#include "live-mark.h"

#include <stdlib.h>

/* A handle fills this many bytes: the cache-line size of x86-64 and most
 * AArch64 cores. */
#define HANDLE_BYTES 64

/* Padded to a whole cache line, so that two handles' refcounts can never
 * share one: two live allocations of 64 bytes start at least 64 bytes
 * apart, and the refcount is the first word. Two 32-byte handles from
 * malloc sat 48 bytes apart, and ref/unref from 16 threads on such
 * neighbours scaled x4.3 against x15.2 for handles far apart (clmem-bench
 * (k), H200). Padding rather than aligned_alloc: glibc gives a 64-byte
 * malloc an 80-byte chunk (48 before), where aligned_alloc(64, 64) used
 * 112 bytes and grew the heap by 145 a handle (measured over 100 000).
 * A neighbour's refcount may still share a line with this handle's
 * read-only fields; only the refcounts are kept apart. The mark
 * (live-mark.h) shares the count's word, so checking it touches no other
 * line. */
struct clmem_handle {
    clmem_refcount refs;
    uint32_t live; /* MARK_HANDLE while alive */
    cl_mem mem;
    cl_command_queue queue;
    clmem_keepalive *keepalive;
    uint32_t row_pitch;
    unsigned char pad[HANDLE_BYTES - sizeof(clmem_refcount) - 2 * sizeof(uint32_t) - 3 * sizeof(void *)];
};
_Static_assert(sizeof(struct clmem_handle) == HANDLE_BYTES, "a handle fills one cache line");

clmem_status clmem__handle_check_args(cl_mem mem, cl_command_queue queue, clmem_handle **out)
{
    if (out)
        *out = NULL;
    if (!mem || !queue || !out)
        return clmem__null_arg(!mem ? "mem" : !queue ? "queue" : "out");
    return CLMEM_OK;
}

clmem_status clmem__handle_create(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                           clmem_keepalive *keepalive, clmem_handle **out)
{
    clmem_handle *h = FAULT("handle_alloc") ? NULL : malloc(sizeof *h);
    if (!h)
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating a handle failed.");
    refcount_init(&h->refs);
    h->live = MARK_HANDLE;
    h->row_pitch = row_pitch;
    h->mem = mem;
    h->queue = queue;
    h->keepalive = clmem_keepalive_ref(keepalive);
    *out = h;
    return CLMEM_OK;
}

static clmem_status handle_wrap(cl_mem mem, cl_command_queue queue, uint32_t row_pitch, clmem_keepalive *keepalive,
                                clmem_handle **out)
{
    clmem_status s = clmem__handle_check_args(mem, queue, out);
    if (s != CLMEM_OK)
        return s;
    return clmem__handle_create(mem, queue, row_pitch, keepalive, out);
}

CLMEM_EXPORT clmem_status clmem_handle_wrap(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                                            clmem_keepalive *keepalive, clmem_handle **out)
{
    return clmem__error_in(__func__, handle_wrap(mem, queue, row_pitch, keepalive, out));
}

CLMEM_EXPORT clmem_handle *clmem_handle_ref(clmem_handle *h)
{
    if (h && !live_ref(&h->refs, &h->live, MARK_HANDLE, "clmem_handle_ref", h))
        return NULL;
    return h;
}

/* Out of line, so that an unref that is not the last needs no stack frame. */
static __attribute__((noinline)) void handle_destroy(clmem_handle *h)
{
    clmem_keepalive *ka = h->keepalive;
    live_free(h, &h->live, sizeof *h);
    clmem_keepalive_unref(ka);
}

CLMEM_EXPORT void clmem_handle_unref(clmem_handle *h)
{
    if (h && live_unref(&h->refs, &h->live, MARK_HANDLE, "clmem_handle_unref", h))
        handle_destroy(h);
}

/* The getters check the mark too: a handle read after its last unref
 * aborts rather than hand out what the allocator wrote there. */
CLMEM_EXPORT cl_mem clmem_handle_mem(const clmem_handle *h)
{
    if (!h)
        return NULL;
    LIVE_CHECK(h->live, MARK_HANDLE, "clmem_handle_mem", h);
    return h->mem;
}

CLMEM_EXPORT cl_command_queue clmem_handle_queue(const clmem_handle *h)
{
    if (!h)
        return NULL;
    LIVE_CHECK(h->live, MARK_HANDLE, "clmem_handle_queue", h);
    return h->queue;
}

CLMEM_EXPORT uint32_t clmem_handle_row_pitch(const clmem_handle *h)
{
    if (!h)
        return 0;
    LIVE_CHECK(h->live, MARK_HANDLE, "clmem_handle_row_pitch", h);
    return h->row_pitch;
}

CLMEM_EXPORT clmem_keepalive *clmem_handle_keepalive(const clmem_handle *h)
{
    if (!h)
        return NULL;
    LIVE_CHECK(h->live, MARK_HANDLE, "clmem_handle_keepalive", h);
    return h->keepalive;
}
