/* SPDX-License-Identifier: MIT */
/* Internal, shared by libclmem and libclmem-bridge (never installed): the
 * anchor's layout, and the three operations only the bridge needs, which
 * clmem.h does not offer users. They are inline on the struct, so neither
 * is an exported symbol of libclmem. What keeps the layout the same on
 * both sides is libclmem's private version node, named after the exact
 * release (lib/clmem-private.sym.in): libclmem-bridge records that it needs
 * CLMEM_PRIVATE_<this version>, so the dynamic linker refuses to start it
 * with a libclmem of another release. The pkg-config files pin the same
 * version for building (t/version-pin.sh tests both). */
#ifndef CLMEM_KEEPALIVE_PRIVATE_H
#define CLMEM_KEEPALIVE_PRIVATE_H
#include "clmem.h"
#include "live-mark.h"

#include <stddef.h>

struct clmem_keepalive {
    clmem_refcount refs;
    uint32_t live; /* MARK_ANCHOR while alive (live-mark.h) */
    void (*release)(void *user);
    void *user;
};

/* Set up an anchor the caller allocated with malloc (the last unref frees
 * it with free()), of any size from sizeof(struct clmem_keepalive): the
 * bridge gives an import's anchor, whose count every cache hit changes,
 * a block of its own (import.c). One reference, as clmem_keepalive_new. */
static inline void clmem__keepalive_init(struct clmem_keepalive *ka, void (*release)(void *user), void *user)
{
    refcount_init(&ka->refs);
    ka->live = MARK_ANCHOR;
    ka->release = release;
    ka->user = user;
}

/* Take a reference only if the anchor still has one: returns ka with a new
 * reference, or NULL when its last reference is already being dropped
 * (Linux's kref_get_unless_zero). Only meaningful while something else
 * keeps the anchor's memory valid: a cache holding a weak pointer that the
 * anchor's release callback removes under the same lock the lookup holds. */
static inline clmem_keepalive *clmem__keepalive_try_ref(clmem_keepalive *ka)
{
    if (ka && refcount_get_unless_zero(&ka->refs))
        return ka;
    return NULL;
}

/* The `user` pointer ka was created with, if ka was created by
 * clmem_keepalive_new() with exactly this `release` function; NULL
 * otherwise (and for NULL ka): a type-checked way for the library that made
 * an anchor to find its own data again. Borrowed: no reference is taken. */
static inline void *clmem__keepalive_user_data(const clmem_keepalive *ka, void (*release)(void *user))
{
    if (!ka || !release || ka->release != release)
        return NULL;
    return ka->user;
}
#endif
