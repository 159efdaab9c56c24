/* Internal: one import of Vulkan memory into OpenCL, shared by the handles
 * made from it (the cache hands out more). Its anchor (import_anchor) is the
 * handles' keep-alive; the record itself lives until OpenCL destroys the
 * imported cl_mem, whose destructor callback drops the Vulkan anchor. */
#ifndef CLMEM_IMPORT_H
#define CLMEM_IMPORT_H
#include "clext.h"
#include "clmem-bridge.h"
#include "host-map.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct cache_entry;

struct bridge_import {
    clmem_path path;                /* a concrete path, never BEST */
    const struct clext *ext;        /* the platform's extension entry points */
    cl_command_queue queue;         /* retained */
    cl_mem parent;                  /* retained: the whole allocation */
    size_t parent_size;             /* its size in bytes */
    cl_mem view;                    /* retained sub-buffer, or NULL when parent is the range */
    clmem_keepalive *vk_keep_alive; /* one reference, dropped when parent is destroyed */
    clmem_keepalive **more_vk_anchors; /* cache hits' other Vulkan anchors, held alike (under lock) */
    unsigned more_vk_anchor_count;
    struct host_map *host_map;      /* host-mapped path: the shared vkMapMemory mapping */
    void *host_base;                /* host-mapped path: first byte of the allocation */
    void *cl_map_ptr;               /* host-mapped path: OpenCL's mapping while the host owns it */
    atomic_bool acquired;           /* OpenCL owns the memory (between acquire and release) */
    int caller_fd;                  /* import_fd: the caller's fd, closed when parent is destroyed; else -1 */
    bool destructor_set;            /* on_parent_destroyed is registered on parent */
    /* Who drops the Vulkan anchor and frees the record: the thread that
     * released the last handle (it waits for OpenCL's destruction) or, when
     * that wait timed out, the destructor callback. */
    pthread_mutex_t lock;
    pthread_cond_t destroyed_cond;
    enum { IMPORT_LIVE, IMPORT_DESTROYED, IMPORT_ABANDONED } teardown;
    struct cache_entry *cache_entry;/* set while the import cache lists this import */
};

/* The release callback of every import anchor; also the tag that
 * clmem_keepalive_user_data() checks to find the record from a handle. */
void clmem__import_anchor_release(void *user);

/* The record behind a bridge handle, or NULL for any other handle. */
struct bridge_import *clmem__import_of_handle(const clmem_handle *h);

/* A cache hit with another Vulkan anchor: hold it too, until destruction. */
clmem_status clmem__import_hold_anchor(struct bridge_import *rec, clmem_keepalive *vk_keep_alive);

/* clmem_bridge_release() on a record (also used by teardown). */
clmem_status clmem__handoff_release(struct bridge_import *rec, cl_uint num_events, const cl_event *wait_list,
                             cl_event *event_out);
#endif
