/* SPDX-License-Identifier: MIT */
/* Internal: the allocations a bridge made itself (clmem_bridge_vk_buffer_create,
 * clmem_bridge_vk_image_create), by VkDeviceMemory, with the allocationSize
 * Vulkan was asked for, so that an import of that memory can check the
 * allocation_size it is told. Vulkan cannot be asked the size of a
 * VkDeviceMemory afterwards (vkGetDeviceMemoryCommitment answers only for
 * lazily allocated memory), so for memory the application allocated the
 * bridge trusts the caller. An entry goes when the bridge's own destroy
 * call frees the memory, and with the bridge. */
#ifndef CLMEM_OWN_MEMORY_H
#define CLMEM_OWN_MEMORY_H
#include "clmem-bridge.h"

#include <pthread.h>

#define OWN_MEMORY_BUCKETS 64

struct own_memory_entry;

struct own_memory {
    pthread_mutex_t lock;
    struct own_memory_entry *buckets[OWN_MEMORY_BUCKETS];
};

void clmem__own_memory_init(struct own_memory *t);
void clmem__own_memory_destroy(struct own_memory *t);

/* Remember memory's size. Best effort: when the entry cannot be allocated,
 * imports of the memory go unchecked, as for the application's own. */
void clmem__own_memory_note(struct own_memory *t, VkDeviceMemory memory, VkDeviceSize allocation_size);

/* Forget memory (not listed: nothing happens). */
void clmem__own_memory_forget(struct own_memory *t, VkDeviceMemory memory);

/* CLMEM_OK unless the table lists m->memory with another size than
 * m->allocation_size: then CLMEM_ERR_INVALID_VALUE, recorded, naming both. */
clmem_status clmem__own_memory_check(struct own_memory *t, const clmem_bridge_vk_memory *m);
#endif
