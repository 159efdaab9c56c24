/* SPDX-License-Identifier: MIT */
/* Internal: the Vulkan keepalives an import holds until OpenCL destroyed
 * its cl_mem: each distinct anchor once, however often it is passed (the
 * import and every cache hit pass theirs). An open-addressing set of
 * pointers, so that a hit costs the same on the millionth re-import as on
 * the first: a hit whose anchor is held already adds nothing and allocates
 * nothing; a new anchor costs one slot (the table doubles when half full,
 * so at most four pointers per held anchor). Not thread-safe: the import's
 * lock guards it. */
#ifndef CLMEM_ANCHOR_SET_H
#define CLMEM_ANCHOR_SET_H
#include "clmem.h"

struct anchor_set {
    clmem_keepalive **slots; /* capacity entries, NULL where free */
    unsigned capacity;       /* 0 or a power of two */
    unsigned count;
};

/* Take one reference on ka unless the set holds ka already (NULL: nothing
 * to hold). CLMEM_ERR_NO_MEMORY, recorded, when the set cannot grow; the
 * set and ka are unchanged then. */
clmem_status clmem__anchor_set_hold(struct anchor_set *set, clmem_keepalive *ka);

/* Drop the set's reference on every anchor and free its table; the set is
 * empty afterwards. */
void clmem__anchor_set_drop_all(struct anchor_set *set);
#endif
