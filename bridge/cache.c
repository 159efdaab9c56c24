#include "config.h"
#include "cache.h"
#include "keepalive-private.h"

#include <stdint.h>
#include <stdlib.h>

struct cache_entry {
    struct cache_entry *next;
    struct cache_key key;
    struct bridge_import *rec;
    clmem_keepalive *anchor; /* weak: valid while listed */
};

static unsigned bucket_of(const struct cache_key *k)
{
    /* Non-dispatchable Vulkan handles are 64-bit values; mix the range in. */
    uint64_t h = (uint64_t)(uintptr_t)k->memory * 0x9E3779B97F4A7C15ull;
    h ^= k->offset * 0xC2B2AE3D27D4EB4Full ^ k->size;
    return (unsigned)(h >> 56) % CACHE_BUCKETS;
}

static bool key_equal(const struct cache_key *a, const struct cache_key *b)
{
    return a->memory == b->memory && a->offset == b->offset && a->size == b->size && a->flags == b->flags &&
           a->path == b->path && a->row_pitch == b->row_pitch && a->image_kind == b->image_kind &&
           a->image_format.image_channel_order == b->image_format.image_channel_order &&
           a->image_format.image_channel_data_type == b->image_format.image_channel_data_type &&
           a->image_width == b->image_width && a->image_height == b->image_height;
}

void clmem__cache_init(struct import_cache *c, bool enabled)
{
    c->enabled = enabled;
    pthread_mutex_init(&c->lock, NULL);
    for (unsigned i = 0; i < CACHE_BUCKETS; i++)
        c->buckets[i] = NULL;
}

void clmem__cache_destroy(struct import_cache *c)
{
    pthread_mutex_destroy(&c->lock);
}

struct bridge_import *clmem__cache_lookup(struct import_cache *c, const struct cache_key *key,
                                          clmem_keepalive **anchor_out)
{
    struct bridge_import *rec = NULL;

    *anchor_out = NULL;
    if (!c->enabled)
        return NULL;
    pthread_mutex_lock(&c->lock);
    for (struct cache_entry *e = c->buckets[bucket_of(key)]; e; e = e->next)
        if (key_equal(&e->key, key)) {
            /* Fails when the last handle is being dropped right now: a miss. */
            *anchor_out = clmem__keepalive_try_ref(e->anchor);
            rec = *anchor_out ? e->rec : NULL;
            break;
        }
    pthread_mutex_unlock(&c->lock);
    return rec;
}

void clmem__cache_insert(struct import_cache *c, const struct cache_key *key, struct bridge_import *rec,
                         clmem_keepalive *anchor, struct cache_entry **entry_out)
{
    struct cache_entry *e;
    unsigned b;

    if (!c->enabled || !(e = malloc(sizeof *e)))
        return;
    e->key = *key;
    e->rec = rec;
    e->anchor = anchor;
    b = bucket_of(key);
    pthread_mutex_lock(&c->lock);
    e->next = c->buckets[b];
    c->buckets[b] = e;
    *entry_out = e;
    pthread_mutex_unlock(&c->lock);
}

void clmem__cache_forget(struct import_cache *c, struct cache_entry **entry)
{
    struct cache_entry *e;

    pthread_mutex_lock(&c->lock);
    e = *entry;
    if (e) {
        struct cache_entry **p = &c->buckets[bucket_of(&e->key)];
        while (*p != e)
            p = &(*p)->next;
        *p = e->next;
        *entry = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    free(e);
}
