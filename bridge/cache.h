/* Internal: a bridge's import cache. Importing the same Vulkan memory again
 * returns a new handle on the live import (same cl_mem, same anchor)
 * instead of a new driver import. The cache holds no reference: an entry
 * points at its import's anchor weakly and the anchor's release removes it,
 * so the cache holds only live imports and never grows past them. It knows
 * nothing of imports beyond that pointer: what a hit adds to the import
 * (its queue, its Vulkan keepalive) is import.c's. */
#ifndef CLMEM_CACHE_H
#define CLMEM_CACHE_H
#include "clmem-bridge.h"

#include <pthread.h>
#include <stdbool.h>

struct bridge_import;
struct cache_entry;

/* "The same memory": the same VkDeviceMemory, range, cl_mem_flags and
 * requested path (the VkDevice and cl_context are the bridge's), handed
 * out the same way: the same row pitch, and for an OpenCL image the same
 * image format, extent and kind (image_kind 0: buffer handles). */
struct cache_key {
    VkDeviceMemory memory;
    uint64_t offset;
    uint64_t size;
    cl_mem_flags flags;
    clmem_bridge_path path;
    uint32_t row_pitch;
    uint32_t image_kind; /* 0: buffer; 1: image2d view of the range; 2: image from the fd (optimal) */
    cl_image_format image_format;
    uint32_t image_width, image_height;
};

#define CACHE_BUCKETS 64

struct import_cache {
    bool enabled;
    pthread_mutex_t lock;
    struct cache_entry *buckets[CACHE_BUCKETS];
};

void clmem__cache_init(struct import_cache *c, bool enabled);
void clmem__cache_destroy(struct import_cache *c); /* empty by then: every import took its entry */

/* On a hit, returns the live import and stores a new reference on its
 * anchor in *anchor_out; NULL on a miss (or when the cache is off). */
struct bridge_import *clmem__cache_lookup(struct import_cache *c, const struct cache_key *key,
                                          clmem_keepalive **anchor_out);

/* List a new import whose handles hold `anchor` (weakly). Best effort: when
 * the cache is off or an entry cannot be allocated, the import is just not
 * cached. *entry_out is what clmem__cache_forget takes later (NULL when not
 * listed); it is written under the cache lock. */
void clmem__cache_insert(struct import_cache *c, const struct cache_key *key, struct bridge_import *rec,
                         clmem_keepalive *anchor, struct cache_entry **entry_out);

/* Remove the entry, if any (from the anchor's release). */
void clmem__cache_forget(struct import_cache *c, struct cache_entry **entry);
#endif
