/* SPDX-License-Identifier: MIT */
/* Internal: the atomic reference count shared by anchors and handles.
 * Taking a reference is a relaxed increment (the taker already holds one,
 * so nothing needs ordering); dropping one is an acquire-release decrement,
 * so the thread that drops the last reference sees every write made by the
 * others before they let go (the FFmpeg / Linux kref pattern). */
#ifndef CLMEM_REFCOUNT_H
#define CLMEM_REFCOUNT_H
#include <stdatomic.h>
#include <stdbool.h>

typedef atomic_uint clmem_refcount;

static inline void refcount_init(clmem_refcount *r)
{
    atomic_init(r, 1u);
}

static inline void refcount_get(clmem_refcount *r)
{
    atomic_fetch_add_explicit(r, 1u, memory_order_relaxed);
}

/* True when this was the last reference. */
static inline bool refcount_put(clmem_refcount *r)
{
    return atomic_fetch_sub_explicit(r, 1u, memory_order_acq_rel) == 1u;
}

/* The same decrement, returning the count before it: 1 for the last
 * reference, 0 for one too many (live-mark.h's live_put checks both). */
static inline unsigned refcount_put_old(clmem_refcount *r)
{
    return atomic_fetch_sub_explicit(r, 1u, memory_order_acq_rel);
}

/* Take a reference unless the count already reached zero. */
static inline bool refcount_get_unless_zero(clmem_refcount *r)
{
    unsigned seen = atomic_load_explicit(r, memory_order_relaxed);
    while (seen != 0u) {
        if (atomic_compare_exchange_weak_explicit(r, &seen, seen + 1u, memory_order_acquire,
                                                  memory_order_relaxed))
            return true;
    }
    return false;
}
#endif
