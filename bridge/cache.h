/* Internal: the import cache. Importing the same Vulkan memory again
 * returns a new handle on the live import (same cl_mem, same anchor)
 * instead of a new driver import. The cache holds no reference: an entry
 * points at its import's anchor weakly and the anchor's release removes it,
 * so the cache holds only live imports and never grows past them. */
#ifndef CLMEM_CACHE_H
#define CLMEM_CACHE_H
#include "import.h"

/* "The same memory": the same VkDeviceMemory of the same VkDevice, range,
 * cl_mem_flags, cl_context and requested path. */
struct cache_key {
    VkDevice device;
    VkDeviceMemory memory;
    uint64_t offset;
    uint64_t size;
    cl_mem_flags flags;
    cl_context context;
    clmem_path path;
};

/* On a hit, *hit is true and *out is a new handle on the live import,
 * paired with `queue` (which must be in key->context: CLMEM_ERR_CONTEXT_MISMATCH
 * otherwise); the import then also holds vk_keep_alive, as a new import
 * would. On a miss, *hit is false and CLMEM_OK is returned. */
clmem_status clmem__cache_lookup(const struct cache_key *key, cl_command_queue queue, clmem_keepalive *vk_keep_alive,
                                 clmem_handle **out, bool *hit);

/* List a new import whose handles hold `anchor`. Best effort: when the
 * cache is off or an entry cannot be allocated, the import is just not
 * cached. */
void clmem__cache_insert(const struct cache_key *key, struct bridge_import *rec, clmem_keepalive *anchor);

/* Remove rec's entry, if any (from the anchor's release). */
void clmem__cache_forget(struct bridge_import *rec);
#endif
