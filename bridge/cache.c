/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* glibc: pthread_rwlockattr_setkind_np */
#include "config.h"
#include "cache.h"
#include "keepalive-private.h"

#include <stdint.h>
#include <stdlib.h>

/* A shard starts with this many buckets at its first insert. */
#define FIRST_BUCKETS 8

/* One 64-bit word into the running hash: a multiply and a shift, so that
 * every bit of the word moves the high bits (the shard) and the low bits
 * (the bucket) both. */
static uint64_t mix(uint64_t h, uint64_t word)
{
    h ^= word;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* Every field of the key: two keys that differ anywhere should differ here. */
static uint64_t hash_of(const struct cache_key *k)
{
    uint64_t h = 0x243F6A8885A308D3ull;

    h = mix(h, (uint64_t)(uintptr_t)k->memory);
    h = mix(h, k->offset);
    h = mix(h, k->size);
    h = mix(h, (uint64_t)k->flags);
    h = mix(h, (uint64_t)k->path << 32 | k->row_pitch);
    h = mix(h, (uint64_t)k->image_kind << 32 | k->image_format.image_channel_order);
    h = mix(h, (uint64_t)k->image_format.image_channel_data_type);
    h = mix(h, (uint64_t)k->image_width << 32 | k->image_height);
    /* Finish so that the last fields reach the top bits too. */
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return h;
}

/* The top bits pick the shard; the low bits the bucket within it. */
static struct cache_shard *shard_of(struct import_cache *c, uint64_t hash)
{
    return &c->shards[(hash >> 56) % CACHE_SHARDS];
}

static size_t bucket_of(const struct cache_shard *s, uint64_t hash)
{
    return (size_t)hash & (s->bucket_count - 1);
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
    pthread_rwlockattr_t attr;

    /* glibc's default rwlock lets readers in while a writer waits, so a
     * shard under a stream of hits could keep an import (or a teardown's
     * forget) waiting indefinitely; prefer the writer. Safe because no
     * thread takes a shard's read lock twice. */
    pthread_rwlockattr_init(&attr);
#ifdef __GLIBC__
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    c->enabled = enabled;
    for (unsigned i = 0; i < CACHE_SHARDS; i++) {
        pthread_rwlock_init(&c->shards[i].lock, &attr);
        c->shards[i].buckets = NULL;
        c->shards[i].bucket_count = 0;
        c->shards[i].entry_count = 0;
    }
    pthread_rwlockattr_destroy(&attr);
}

void clmem__cache_destroy(struct import_cache *c)
{
    for (unsigned i = 0; i < CACHE_SHARDS; i++) {
        pthread_rwlock_destroy(&c->shards[i].lock);
        free(c->shards[i].buckets);
    }
}

bool clmem__cache_lookup(struct import_cache *c, const struct cache_key *key, struct cache_hit *hit_out,
                         clmem_keepalive **anchor_out)
{
    struct cache_shard *s;
    uint64_t hash;

    *anchor_out = NULL;
    if (!c->enabled)
        return false;
    hash = hash_of(key);
    s = shard_of(c, hash);
    pthread_rwlock_rdlock(&s->lock);
    if (s->bucket_count)
        for (struct cache_entry *e = s->buckets[bucket_of(s, hash)]; e; e = e->next)
            if (e->hash == hash && key_equal(&e->key, key)) {
                /* Fails when the last handle is being dropped right now: a
                 * miss. An atomic on the import's own anchor: readers of
                 * one shard need not exclude each other. */
                *anchor_out = clmem__keepalive_try_ref(e->anchor);
                if (*anchor_out)
                    *hit_out = e->hit;
                break;
            }
    pthread_rwlock_unlock(&s->lock);
    return *anchor_out != NULL;
}

/* Double the shard's buckets (or make its first ones), under its write
 * lock. On an allocation failure the old buckets stay: chains get longer,
 * lookups stay right. */
static void shard_grow(struct cache_shard *s)
{
    size_t n = s->bucket_count ? s->bucket_count * 2 : FIRST_BUCKETS;
    struct cache_entry **grown = calloc(n, sizeof *grown);

    if (!grown)
        return;
    for (size_t i = 0; i < s->bucket_count; i++)
        for (struct cache_entry *e = s->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = grown[(size_t)e->hash & (n - 1)];
            grown[(size_t)e->hash & (n - 1)] = e;
        }
    free(s->buckets);
    s->buckets = grown;
    s->bucket_count = n;
}

void clmem__cache_insert(struct import_cache *c, struct cache_entry *e, struct cache_entry **listed_out)
{
    struct cache_shard *s;

    *listed_out = NULL;
    if (!c->enabled)
        return;
    e->hash = hash_of(&e->key);
    s = shard_of(c, e->hash);
    pthread_rwlock_wrlock(&s->lock);
    if (s->entry_count >= s->bucket_count)
        shard_grow(s);
    if (s->bucket_count) { /* else not even the first buckets: not cached */
        e->next = s->buckets[bucket_of(s, e->hash)];
        s->buckets[bucket_of(s, e->hash)] = e;
        s->entry_count++;
        *listed_out = e;
    }
    pthread_rwlock_unlock(&s->lock);
}

void clmem__cache_forget(struct import_cache *c, struct cache_entry **listed)
{
    /* Read before taking a lock, to find the shard: *listed was written
     * (under the shard's lock) before the import's first handle was
     * returned, and only the anchor's release, which runs once, forgets
     * it. */
    struct cache_entry *e = *listed, **p;
    struct cache_shard *s;

    if (!e)
        return;
    s = shard_of(c, e->hash);
    pthread_rwlock_wrlock(&s->lock);
    p = &s->buckets[bucket_of(s, e->hash)];
    while (*p != e)
        p = &(*p)->next;
    *p = e->next;
    s->entry_count--;
    *listed = NULL;
    pthread_rwlock_unlock(&s->lock);
}
