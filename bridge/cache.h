/* SPDX-License-Identifier: MIT */
/* Internal: a bridge's import cache. Importing the same Vulkan memory again
 * returns a new handle on the live import (same cl_mem, same anchor)
 * instead of a new driver import. The cache holds no reference: an entry
 * points at its import's anchor weakly and the anchor's release removes it,
 * so the cache holds only live imports and never grows past them. It knows
 * nothing of imports beyond the entry's copy of what a hit reads: what a
 * hit adds to the import (its queue, its Vulkan keepalive) is import.c's.
 *
 * Costs stay flat as imports and threads are added (clmem-bench's scaling
 * measure):
 *  - the hash covers the whole key, so keys that differ in one field only
 *    (the size of ranges at offset 0, the flags, the path, the row pitch)
 *    land in different buckets;
 *  - the table is CACHE_SHARDS shards, each with its own lock and its own
 *    bucket array, which doubles when the shard holds more entries than
 *    buckets: a lookup walks about one entry whatever the number of live
 *    imports;
 *  - a lookup takes its shard's lock for reading only, so hits on one
 *    shard run side by side, and a writer (an import, a teardown) blocks
 *    only the hits of its own shard, never the whole bridge. Each shard is
 *    on its own cache lines, so threads on different shards share nothing;
 *  - an entry lives in its import's anchor block (import.c), beside the
 *    count a hit changes, and holds what a hit needs of the import: a hit
 *    reads one block, not three (entry, anchor, record) that may lie pages
 *    apart among the driver's own allocations.
 * Memory: CACHE_SHARDS * 128 bytes in the bridge (32 KiB), plus one bucket
 * pointer per live entry at most twice over. The entries are the anchors'.
 * A shard's bucket array does not shrink when imports go (it stays at its
 * peak). */
#ifndef CLMEM_CACHE_H
#define CLMEM_CACHE_H
#include "clmem-bridge.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct bridge_import;

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

/* What a hit needs of its import, copied into the entry before it is
 * listed: fields the import never changes once handed out. A hit on the
 * import's own queue with its own Vulkan keepalive reads only these. */
struct cache_hit {
    struct bridge_import *rec;
    cl_mem mem;                  /* the cl_mem every handle of the import carries */
    cl_command_queue home_queue; /* the queue the import was made on */
    clmem_keepalive *first_vk;   /* the Vulkan keepalive it was made with, or NULL */
    uint32_t row_pitch;          /* every handle's row pitch */
};

/* One listed import, embedded in the import's anchor block (import.c): the
 * cache neither allocates nor frees entries. The caller fills key, hit and
 * anchor; the rest is the cache's. */
struct cache_entry {
    /* What a walk down a bucket reads of every entry first, then the key
     * of one that may match, then what a hit takes: in the order a lookup
     * reads them, from the anchor's count on (import.c). */
    struct cache_entry *next;
    uint64_t hash; /* of key: kept so that growth and forget need not hash again */
    struct cache_key key;
    clmem_keepalive *anchor; /* weak: valid while listed (the anchor's release forgets the entry) */
    struct cache_hit hit;
};

/* How far apart two shards' locks must be for threads on different shards
 * to share nothing: 128 bytes, two 64-byte lines, because x86 cores fetch
 * the other line of an aligned 128-byte pair along with the one asked for,
 * so writers of neighbouring lines still contend. */
#define CACHE_PAIR 128
/* A power of two. With 256 shards, 16 threads hitting 16 imports land two
 * of them on one shard with odds of about 1 in 3 (64 shards: 6 in 7), and
 * readers of one shard contend on its lock word even without a writer. */
#define CACHE_SHARDS 256

struct cache_shard {
    _Alignas(CACHE_PAIR) pthread_rwlock_t lock; /* readers: lookups; writers: insert, forget, growth */
    struct cache_entry **buckets;               /* bucket_count heads, or NULL before the first insert */
    size_t bucket_count;                        /* a power of two, or 0 */
    size_t entry_count;
};

struct import_cache {
    bool enabled;
    struct cache_shard shards[CACHE_SHARDS];
};

/* The bridge that holds the cache must be allocated CACHE_PAIR-aligned
 * (bridge.c uses aligned_alloc) for the shards to sit on their own lines. */
void clmem__cache_init(struct import_cache *c, bool enabled);
void clmem__cache_destroy(struct import_cache *c); /* empty by then: every import took its entry */

/* On a hit, copies the entry's hit into *hit_out, stores a new reference
 * on the import's anchor in *anchor_out and returns true; false on a miss
 * (or when the cache is off). Takes one shard's lock for reading. */
bool clmem__cache_lookup(struct import_cache *c, const struct cache_key *key, struct cache_hit *hit_out,
                         clmem_keepalive **anchor_out);

/* List e (key, hit and anchor filled) for a new import. Best effort: when
 * the cache is off or the shard has no buckets and cannot make them, the
 * import is just not cached (and when the buckets cannot grow, they stay
 * as they are). *listed_out is what clmem__cache_forget takes later: e,
 * or NULL when not listed; it is written under the shard's lock. */
void clmem__cache_insert(struct import_cache *c, struct cache_entry *e, struct cache_entry **listed_out);

/* Unlist the entry, if any (from the anchor's release, before the block
 * that holds the entry is freed). */
void clmem__cache_forget(struct import_cache *c, struct cache_entry **listed);

#endif
