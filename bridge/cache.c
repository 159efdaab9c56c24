#include "config.h"
#include "cache.h"
#include "export.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct cache_entry {
    struct cache_entry *next;
    struct cache_key key;
    struct bridge_import *rec;
    clmem_keepalive *anchor; /* weak: valid while listed */
    cl_mem mem;              /* what its handles wrap */
    cl_command_queue queue;  /* the queue the import was made with */
};

#define CACHE_BUCKETS 256

static struct cache_entry *buckets[CACHE_BUCKETS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool cache_enabled = true;

static unsigned bucket_of(const struct cache_key *k)
{
    /* Non-dispatchable Vulkan handles are 64-bit values; mix the range in. */
    uint64_t h = (uint64_t)(uintptr_t)k->memory * 0x9E3779B97F4A7C15ull;
    h ^= k->offset * 0xC2B2AE3D27D4EB4Full ^ k->size;
    return (unsigned)(h >> 56) % CACHE_BUCKETS;
}

static bool key_equal(const struct cache_key *a, const struct cache_key *b)
{
    return a->device == b->device && a->memory == b->memory && a->offset == b->offset && a->size == b->size &&
           a->flags == b->flags && a->context == b->context && a->path == b->path;
}

CLMEM_EXPORT int clmem_bridge_cache_set_enabled(int enabled)
{
    return atomic_exchange(&cache_enabled, enabled != 0);
}

clmem_status clmem__cache_lookup(const struct cache_key *key, cl_command_queue queue, clmem_keepalive *vk_keep_alive,
                                 clmem_handle **out, bool *hit)
{
    struct bridge_import *rec = NULL;
    clmem_keepalive *anchor = NULL;
    cl_command_queue import_queue = NULL;
    cl_mem mem = NULL;
    clmem_status s;

    *hit = false;
    if (!atomic_load_explicit(&cache_enabled, memory_order_relaxed))
        return CLMEM_OK;
    pthread_mutex_lock(&cache_lock);
    for (struct cache_entry *e = buckets[bucket_of(key)]; e; e = e->next)
        if (key_equal(&e->key, key)) {
            /* Fails when the last handle is being dropped right now. */
            anchor = clmem_keepalive_try_ref(e->anchor);
            rec = e->rec;
            mem = e->mem;
            import_queue = e->queue;
            break;
        }
    pthread_mutex_unlock(&cache_lock);
    if (!anchor)
        return CLMEM_OK;

    if (queue != import_queue) {
        cl_context queue_context = NULL;
        cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context, NULL);
        if (err != CL_SUCCESS || queue_context != key->context) {
            clmem_keepalive_unref(anchor);
            *hit = true;
            if (err != CL_SUCCESS)
                return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)",
                                       err, "queue is not a valid command queue.");
            return clmem_error_set(CLMEM_ERR_CONTEXT_MISMATCH, CLMEM_API_NONE, NULL, 0,
                                   "The queue belongs to context %p, not to the given context %p.",
                                   (void *)queue_context, (void *)key->context);
        }
    }
    /* Our anchor reference keeps rec alive while we add to it. */
    s = clmem__import_hold_anchor(rec, vk_keep_alive);
    if (s == CLMEM_OK)
        s = clmem_handle_wrap(mem, queue, 0, anchor, out);
    clmem_keepalive_unref(anchor);
    *hit = true;
    return s;
}

void clmem__cache_insert(const struct cache_key *key, struct bridge_import *rec, clmem_keepalive *anchor)
{
    struct cache_entry *e;
    unsigned b;

    if (!atomic_load_explicit(&cache_enabled, memory_order_relaxed) || !(e = malloc(sizeof *e)))
        return;
    e->key = *key;
    e->rec = rec;
    e->anchor = anchor;
    e->mem = rec->view ? rec->view : rec->parent;
    e->queue = rec->queue;
    b = bucket_of(key);
    pthread_mutex_lock(&cache_lock);
    e->next = buckets[b];
    buckets[b] = e;
    rec->cache_entry = e;
    pthread_mutex_unlock(&cache_lock);
}

void clmem__cache_forget(struct bridge_import *rec)
{
    struct cache_entry *e;

    pthread_mutex_lock(&cache_lock);
    e = rec->cache_entry;
    if (e) {
        struct cache_entry **p = &buckets[bucket_of(&e->key)];
        while (*p != e)
            p = &(*p)->next;
        *p = e->next;
        rec->cache_entry = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
    free(e);
}
