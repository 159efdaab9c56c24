/* clmem_handle: an immutable, refcounted (cl_mem, queue, row pitch,
 * anchor) value. It borrows the OpenCL objects; only the anchor is held. */
#include "config.h"
#include "clmem.h"
#include "export.h"
#include "fault.h"
#include "handle.h"
#include "refcount.h"

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
 * read-only fields; only the refcounts are kept apart. */
struct clmem_handle {
    clmem_refcount refs;
    uint32_t row_pitch;
    cl_mem mem;
    cl_command_queue queue;
    clmem_keepalive *keepalive;
    unsigned char pad[HANDLE_BYTES - sizeof(clmem_refcount) - sizeof(uint32_t) - 3 * sizeof(void *)];
};
_Static_assert(sizeof(struct clmem_handle) == HANDLE_BYTES, "a handle fills one cache line");

clmem_status clmem__handle_check_args(cl_mem mem, cl_command_queue queue, clmem_handle **out)
{
    if (out)
        *out = NULL;
    if (!mem || !queue || !out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !mem ? "mem" : !queue ? "queue" : "out");
    return CLMEM_OK;
}

clmem_status clmem__handle_create(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                           clmem_keepalive *keepalive, clmem_handle **out)
{
    clmem_handle *h = FAULT("handle_alloc") ? NULL : malloc(sizeof *h);
    if (!h)
        return clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_NONE, NULL, 0, "Allocating a handle failed.");
    refcount_init(&h->refs);
    h->row_pitch = row_pitch;
    h->mem = mem;
    h->queue = queue;
    h->keepalive = clmem_keepalive_ref(keepalive);
    *out = h;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_handle_wrap(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                                            clmem_keepalive *keepalive, clmem_handle **out)
{
    clmem_status s = clmem__handle_check_args(mem, queue, out);
    if (s != CLMEM_OK)
        return s;
    return clmem__handle_create(mem, queue, row_pitch, keepalive, out);
}

CLMEM_EXPORT clmem_handle *clmem_handle_ref(clmem_handle *h)
{
    if (h)
        refcount_get(&h->refs);
    return h;
}

CLMEM_EXPORT void clmem_handle_unref(clmem_handle *h)
{
    clmem_keepalive *ka;

    if (!h || !refcount_put(&h->refs))
        return;
    ka = h->keepalive;
    free(h);
    clmem_keepalive_unref(ka);
}

CLMEM_EXPORT cl_mem clmem_handle_mem(const clmem_handle *h) { return h ? h->mem : NULL; }
CLMEM_EXPORT cl_command_queue clmem_handle_queue(const clmem_handle *h) { return h ? h->queue : NULL; }
CLMEM_EXPORT uint32_t clmem_handle_row_pitch(const clmem_handle *h) { return h ? h->row_pitch : 0; }
CLMEM_EXPORT clmem_keepalive *clmem_handle_keepalive(const clmem_handle *h) { return h ? h->keepalive : NULL; }
