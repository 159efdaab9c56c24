#include "config.h"
#include "host-map.h"
#include "fault.h"

#include <pthread.h>
#include <stdlib.h>

struct host_map {
    struct host_map *next;
    VkDevice device;
    VkDeviceMemory memory;
    void *base;
    unsigned users; /* guarded by maps_lock */
};

static struct host_map *maps;
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;

clmem_status clmem__host_map_get(VkDevice device, VkDeviceMemory memory, struct host_map **map_out, void **base_out)
{
    struct host_map *m;
    clmem_status status = CLMEM_OK;

    pthread_mutex_lock(&maps_lock);
    for (m = maps; m; m = m->next)
        if (m->device == device && m->memory == memory)
            break;
    if (m) {
        m->users++;
    } else if (!(m = calloc(1, sizeof *m)) || FAULT("host_map_alloc")) {
        free(m);
        m = NULL;
        status = clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_NONE, NULL, 0, "Allocating a mapping record failed.");
    } else {
        VkResult r = FAULT("vkMapMemory") ? VK_ERROR_MEMORY_MAP_FAILED
                                          : vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &m->base);
        if (r != VK_SUCCESS) {
            free(m);
            m = NULL;
            status = clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkMapMemory", r,
                                     "Mapping the Vulkan memory for the host-mapped path failed; it must be "
                                     "HOST_VISIBLE and not mapped elsewhere.");
        } else {
            m->device = device;
            m->memory = memory;
            m->users = 1;
            m->next = maps;
            maps = m;
        }
    }
    pthread_mutex_unlock(&maps_lock);
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
    pthread_mutex_lock(&maps_lock);
    last = --map->users == 0;
    if (last) {
        struct host_map **p = &maps;
        while (*p != map)
            p = &(*p)->next;
        *p = map->next;
        /* Under the lock: a concurrent get of the same memory must not map
         * it again before this unmap. */
        vkUnmapMemory(map->device, map->memory);
    }
    pthread_mutex_unlock(&maps_lock);
    if (last)
        free(map);
}
