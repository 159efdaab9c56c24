/* SPDX-License-Identifier: MIT */
/* The allocations a bridge made itself (own-memory.h): a small chained hash
 * table under one lock, consulted by each new import of Vulkan memory (not
 * by cache hits) and changed by the bridge's allocate and free calls. */
#include "config.h"
#include "error-private.h"
#include "own-memory.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

struct own_memory_entry {
    struct own_memory_entry *next;
    VkDeviceMemory memory;
    VkDeviceSize size;
};

static unsigned bucket_of(VkDeviceMemory memory)
{
    uint64_t h = (uint64_t)(uintptr_t)memory;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15u;
    return (unsigned)(h >> 58) % OWN_MEMORY_BUCKETS;
}

void clmem__own_memory_init(struct own_memory *t)
{
    pthread_mutex_init(&t->lock, NULL);
    for (unsigned i = 0; i < OWN_MEMORY_BUCKETS; i++)
        t->buckets[i] = NULL;
}

void clmem__own_memory_destroy(struct own_memory *t)
{
    for (unsigned i = 0; i < OWN_MEMORY_BUCKETS; i++)
        while (t->buckets[i]) {
            struct own_memory_entry *e = t->buckets[i];
            t->buckets[i] = e->next;
            free(e);
        }
    pthread_mutex_destroy(&t->lock);
}

void clmem__own_memory_note(struct own_memory *t, VkDeviceMemory memory, VkDeviceSize allocation_size)
{
    struct own_memory_entry *e = malloc(sizeof *e);
    unsigned i = bucket_of(memory);

    if (!e)
        return;
    e->memory = memory;
    e->size = allocation_size;
    pthread_mutex_lock(&t->lock);
    e->next = t->buckets[i];
    t->buckets[i] = e;
    pthread_mutex_unlock(&t->lock);
}

void clmem__own_memory_forget(struct own_memory *t, VkDeviceMemory memory)
{
    struct own_memory_entry **p, *gone = NULL;

    pthread_mutex_lock(&t->lock);
    for (p = &t->buckets[bucket_of(memory)]; *p; p = &(*p)->next)
        if ((*p)->memory == memory) {
            gone = *p;
            *p = gone->next;
            break;
        }
    pthread_mutex_unlock(&t->lock);
    free(gone);
}

clmem_status clmem__own_memory_check(struct own_memory *t, const clmem_bridge_vk_memory *m)
{
    VkDeviceSize size = 0;
    bool listed = false;

    pthread_mutex_lock(&t->lock);
    for (struct own_memory_entry *e = t->buckets[bucket_of(m->memory)]; e && !listed; e = e->next)
        if (e->memory == m->memory) {
            listed = true;
            size = e->size;
        }
    pthread_mutex_unlock(&t->lock);
    if (!listed || size == m->allocation_size)
        return CLMEM_OK;
    return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                       "memory->allocation_size is %llu bytes, but the bridge allocated this VkDeviceMemory "
                       "with %llu bytes.",
                       (unsigned long long)m->allocation_size, (unsigned long long)size);
}
