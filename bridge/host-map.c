/* SPDX-License-Identifier: MIT */
#include "config.h"
#include "host-map.h"
#include "error-private.h"
#include "fault.h"

#include <pthread.h>
#include <stdlib.h>

struct host_map {
    struct host_map *next;
    VkDevice device;
    VkDeviceMemory memory;
    PFN_vkUnmapMemory unmap; /* the mapping bridge's */
    void *base;
    unsigned users; /* guarded by table_lock */
};

static struct host_map *table;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

void clmem__host_maps_init(struct host_maps *maps, const struct vkfn *vk, VkDevice device)
{
    maps->vk = vk;
    maps->device = device;
}

clmem_status clmem__host_map_get(struct host_maps *maps, VkDeviceMemory memory, struct host_map **map_out,
                                 void **base_out)
{
    struct host_map *m;
    clmem_status status = CLMEM_OK;

    pthread_mutex_lock(&table_lock);
    for (m = table; m; m = m->next)
        if (m->device == maps->device && m->memory == memory)
            break;
    if (m) {
        m->users++;
    } else if (!(m = calloc(1, sizeof *m)) || FAULT("host_map_alloc")) {
        free(m);
        m = NULL;
        status = clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating a mapping record failed.");
    } else {
        VkResult r = FAULT("vkMapMemory") ? VK_ERROR_MEMORY_MAP_FAILED
                                          : maps->vk->MapMemory(maps->device, memory, 0, VK_WHOLE_SIZE, 0, &m->base);
        if (r != VK_SUCCESS) {
            free(m);
            m = NULL;
            status = clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkMapMemory", r,
                                     "Mapping the Vulkan memory for the host-mapped path failed; it must be "
                                     "HOST_VISIBLE and not mapped elsewhere.");
        } else {
            m->device = maps->device;
            m->memory = memory;
            m->unmap = maps->vk->UnmapMemory;
            m->users = 1;
            m->next = table;
            table = m;
        }
    }
    pthread_mutex_unlock(&table_lock);
    if (m) {
        *map_out = m;
        *base_out = m->base;
    }
    return status;
}

void clmem__host_map_put(struct host_map *map)
{
    bool last;

    if (!map)
        return;
    pthread_mutex_lock(&table_lock);
    last = --map->users == 0;
    if (last) {
        struct host_map **p = &table;
        while (*p != map)
            p = &(*p)->next;
        *p = map->next;
        /* Under the lock: a concurrent get of the same memory must not map
         * it again before this unmap. */
        map->unmap(map->device, map->memory);
    }
    pthread_mutex_unlock(&table_lock);
    if (last)
        free(map);
}
