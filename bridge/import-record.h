/* SPDX-License-Identifier: MIT */
/* Internal: the import record. One import of Vulkan memory into OpenCL is
 * shared by the handles made from it (cache hits and
 * clmem_bridge_handle_for_queue make more). Its anchor is the handles'
 * keepalive. When the anchor's last reference goes, the teardown
 * (import-teardown.h) runs; each path (path-fd.c, path-host.c) supplies its
 * own import, handoff and teardown steps through struct import_ops, so
 * nothing outside a path's file asks which path an import took. The import
 * itself is import.h's; the handoff, handoff.h's. */
#ifndef CLMEM_IMPORT_RECORD_H
#define CLMEM_IMPORT_RECORD_H
#include "anchor-set.h"
#include "bridge.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct bridge_import;
struct image_format;

/* What an image import adds to a request (image.c): the handles carry an
 * OpenCL image rather than the buffer. NULL in a request for buffer
 * handles, plane buffers included (their row pitch is the request's). */
struct image_request {
    const struct image_format *format;
    unsigned plane;
    cl_image_format cl_format; /* the plane's */
    uint32_t texel_bytes;
    uint32_t width, height; /* the plane's */
    bool optimal;           /* the image is imported from the fd (fd paths); else a view of the range */
};

/* The validated request an import function works from. */
struct import_request {
    const clmem_bridge_vk_memory *memory; /* import_vk; NULL for import_fd */
    int fd;                               /* import_fd; -1 for import_vk */
    uint64_t allocation_size;
    uint64_t offset;
    uint64_t size;
    cl_command_queue queue;
    cl_mem_flags flags;
    uint32_t row_pitch;                /* the handles' row_pitch: a plane's rowPitch; 0 for plain buffers */
    const struct image_request *image; /* NULL unless the handles carry an OpenCL image */
};

struct import_ops {
    clmem_bridge_path path;
    /* Can this Vulkan memory take this path at all (export types, memory
     * properties)? CLMEM_ERR_UNSUPPORTED saying why. */
    clmem_status (*memory_allows)(const clmem_bridge_vk_memory *m);
    /* Make rec->parent (and whatever else the path keeps) from req. On
     * failure nothing of the path is left: rec->parent is NULL. */
    clmem_status (*import)(struct bridge_import *rec, const struct import_request *req);
    /* Hand the memory of recs[0..count) to OpenCL / back to Vulkan on
     * queue, after wait, as ONE command; *event_out (when event_out is not
     * NULL) is its event. handoff.c gives every record of one call whose
     * ops share this function to one call of it when `batches` is set (the
     * fd paths: one clEnqueue{Acquire,Release}ExternalMemObjectsKHR for
     * all), and one record at a time otherwise (host-mapped: an unmap or
     * map per buffer). On failure nothing is enqueued and *call names the
     * failing call. The state (rec->acquired) is handoff.c's, not the
     * path's. */
    cl_int (*acquire)(struct bridge_import *const *recs, cl_uint count, cl_command_queue queue, cl_uint n,
                      const cl_event *wait, cl_event *event_out, const char **call);
    cl_int (*release)(struct bridge_import *const *recs, cl_uint count, cl_command_queue queue, cl_uint n,
                      const cl_event *wait, cl_event *event_out, const char **call);
    bool batches;
    /* Teardown, before the markers: enqueue what must run before the
     * cl_mem goes (host-mapped: undo OpenCL's own map). Never blocks. */
    void (*before_release)(struct bridge_import *rec);
    /* Teardown, after OpenCL destroyed the cl_mem: let go of the rest (the
     * caller's fd, the host mapping). */
    void (*after_destroy)(struct bridge_import *rec);
    /* Does the sub-buffer rule apply to [offset, +size) of the parent?
     * (host-mapped wraps the range itself: the parent is the range.) */
    bool parent_is_range;
};

extern const struct import_ops clmem__opaque_fd_ops;
extern const struct import_ops clmem__dma_buf_ops;
extern const struct import_ops clmem__host_mapped_ops;

struct bridge_import {
    clmem_bridge *bridge; /* one reference, dropped when the record is freed */
    const struct import_ops *ops;
    cl_mem parent; /* the imported allocation (host-mapped: the range) */
    size_t parent_size;
    cl_mem view;                  /* sub-buffer for the range, or NULL when parent is the range */
    cl_mem image;                 /* image2d view of the range (image.c), or NULL; parent itself is the image for
                             optimal tiling */
    uint32_t row_pitch;           /* every handle's row_pitch: the plane's pitch; 0 for images and plain buffers */
    cl_command_queue home_queue;  /* the queue the import was made on (in queues[] too); set once it is listed,
                                    never written after the import is handed out */
    clmem_keepalive *first_vk;    /* the import's own Vulkan keepalive (in vk_anchors too), or NULL; the same */
    atomic_bool acquired;         /* OpenCL owns the memory (between acquire and release) */
    cl_command_queue acquired_on; /* the queue of that acquire (one of queues[]) */
    atomic_bool in_ring;          /* a frame of a ring (frame-ring.c), which alone hands it over */

    pthread_mutex_t lock;     /* guards the queue list and the anchor set below */
    cl_command_queue *queues; /* retained: every queue a handle was made for */
    unsigned queue_count;
    struct anchor_set vk_anchors; /* each distinct Vulkan keepalive once, held until OpenCL destroyed the cl_mem */

    /* path state */
    int caller_fd;             /* import_fd: the caller's fd, closed after destruction; else -1 */
    struct host_map *host_map; /* host-mapped: the shared vkMapMemory mapping */
    void *host_base;           /* host-mapped: first byte of the allocation */
    void *cl_map_ptr;          /* host-mapped: OpenCL's mapping while the host owns the memory */
    cl_event map_event;        /* host-mapped: the non-blocking map of the last release, or NULL */

    /* teardown (import-teardown.c) */
    bool destructor_set;         /* a destructor callback is registered (on parent, and the handed cl_mem) */
    atomic_uint destroy_pending; /* registered destructor callbacks that have not run yet */
    cl_event *markers;           /* one per queue, enqueued after the last handle went */
    unsigned marker_count;
    atomic_uint markers_pending;      /* markers not yet seen complete */
    atomic_bool cl_released;          /* the cl_mem release was claimed (exactly once) */
    bool hand_back;                   /* left acquired at the last unref: (b) is due */
    cl_event acquired_marker;         /* the acquiring queue's marker, which starts the hand-back */
    atomic_bool hand_back_claimed;    /* the hand-back was started (exactly once) */
    atomic_bool hand_back_done;       /* ...and enqueued: release_event is set */
    cl_event release_event;           /* the hand-back's release, or NULL */
    bool handed_out;                  /* a handle of it was returned: it did not fail in the call that made it */
    atomic_bool teardown_claimed;     /* the start (the markers) was claimed (exactly once) */
    atomic_bool markers_ready;        /* ...and done: markers and marker_count are written */
    struct bridge_import *next_start; /* the teardown thread's queue, under its lock */
    atomic_uint refs;                 /* the teardown's, plus one per marker callback still due (and the start's) */
    bool listed_dying;                /* on the bridge's list of teardowns */
    struct bridge_import *next_dying; /* the bridge's list, under its lock */
    struct cache_entry *cache_entry;  /* set while the bridge's cache lists this import */
};

/* Add a queue to the import's list (retained once); CLMEM_ERR_NO_MEMORY. */
clmem_status clmem__import_add_queue(struct bridge_import *rec, cl_command_queue queue);

/* Does the import list `queue` (a handle was made for it: checked against
 * the bridge's context, and retained, when it joined)? */
bool clmem__import_has_queue(struct bridge_import *rec, cl_command_queue queue);

/* The cl_mem the import's handles carry: the image, else the sub-buffer,
 * else the parent. */
cl_mem clmem__import_handed_mem(const struct bridge_import *rec);
#endif
