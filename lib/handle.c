/* clmem_handle: an immutable, refcounted (cl_mem, queue, row pitch,
 * anchor) value. It borrows the OpenCL objects; only the anchor is held. */
#include "config.h"
#include "clmem.h"
#include "export.h"
#include "fault.h"
#include "handle.h"
#include "refcount.h"

#include <stdlib.h>

/* The cache-line size handles are laid out for (64 bytes on x86-64 and
 * most AArch64 cores). */
#define HANDLE_LINE 64

/* Each handle starts a cache line of its own and fills it: threads that
 * take and drop references on different handles never write the same line
 * (two 32-byte handles from plain malloc sat 48 bytes apart and scaled
 * x4.3 at 16 threads, against x15.2 for handles far apart: clmem-bench
 * (k)). The cost is memory: 64 bytes a handle (glibc: a 80-byte chunk
 * from aligned_alloc plus its alignment slack) where malloc gave a 48-byte
 * chunk. */
struct clmem_handle {
    _Alignas(HANDLE_LINE) clmem_refcount refs;
    uint32_t row_pitch;
    cl_mem mem;
    cl_command_queue queue;
    clmem_keepalive *keepalive;
};
_Static_assert(sizeof(struct clmem_handle) == HANDLE_LINE, "a handle fills one cache line");

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
    clmem_handle *h = FAULT("handle_alloc") ? NULL : aligned_alloc(HANDLE_LINE, sizeof *h);
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
