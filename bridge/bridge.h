/* SPDX-License-Identifier: MIT */
/* Internal: the bridge object. It owns what the imports of one VkDevice
 * into one cl_context share: the entry points of both APIs, the capability
 * answer, the host mappings, the import cache, and the count of imports
 * and semaphores still alive or still tearing down, which
 * clmem_bridge_finish() waits on. */
#ifndef CLMEM_BRIDGE_INTERNAL_H
#define CLMEM_BRIDGE_INTERNAL_H
#include "cache.h"
#include "caps.h"
#include "opencl/clext.h"
#include "formats.h"
#include "host-map.h"
#include "live-mark.h"
#include "own-memory.h"
#include "vkfn.h"

#include <pthread.h>

struct bridge_import;

/* One optimal-tiling live check's kept result (image.h). */
enum image_check_state { IMAGE_CHECK_NOT_RUN = 0, IMAGE_CHECK_PASSED, IMAGE_CHECK_FAILED };
struct image_check {
    enum image_check_state state;
    struct cap_answer answer; /* CLMEM_ERR_UNSUPPORTED and why, when FAILED */
};

struct clmem_bridge {
    clmem_refcount refs;
    uint32_t live; /* MARK_BRIDGE while alive (live-mark.h) */
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    cl_context context; /* retained */
    cl_device_id cl_device;
    cl_platform_id platform;
    uint32_t flags;
    struct vkfn vk;
    struct clext cl;
    struct bridge_caps caps;
    struct import_cache cache;
    struct host_maps maps;
    struct own_memory own;       /* the allocations the bridge made itself, to check imports of them */
    struct clmem_bridge *next_of_process; /* the process's list of bridges, under its lock */

    /* Guarded by lock; `changed` is broadcast when a count drops. */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    unsigned live_imports;        /* imports whose anchor some handle still holds */
    unsigned live_semaphores;
    unsigned tearing_down;        /* dropped imports not yet freed: keepalives held, or callbacks due */
    struct bridge_import *dying;  /* those imports, linked through next_dying (import-teardown.c) */

    /* Optimal-tiling live checks, by format table index and fd path
     * ([0] opaque fd, [1] dma-buf): written under check_lock, which is held
     * for a whole check, so that a format is checked once. */
    pthread_mutex_t check_lock;
    struct image_check image_checks[FORMAT_COUNT][2];
};

/* Bookkeeping called by the import record and the semaphores. */
void clmem__bridge_import_born(clmem_bridge *b);
void clmem__bridge_import_dying(clmem_bridge *b);                           /* last handle gone */
void clmem__bridge_import_gone(clmem_bridge *b);                            /* record freed */
void clmem__bridge_import_failed(clmem_bridge *b);                          /* never had a handle */
void clmem__bridge_semaphore_count(clmem_bridge *b, int delta);

/* Abort, naming `call`, unless b is a live bridge (live-mark.h): on the
 * public calls that take one, after their NULL check. */
#define BRIDGE_LIVE(b, call) LIVE_CHECK((b)->live, MARK_BRIDGE, call, (b))

/* The process's list of bridges, by VkDevice, for
 * clmem_bridge_device_finish() (finish.c): a bridge is listed at creation
 * and unlisted at the very end of its destruction, once it let go of
 * everything (its context too).
 *
 * clmem__bridges_hold: a reference on every listed bridge of `device` that
 * still has one: *count_out of them, in a new array the caller frees (NULL
 * when there are none). False when the array cannot be allocated.
 *
 * clmem__bridges_wait_destroyed: until no bridge of `device` is listed
 * whose last reference is gone (one another thread is destroying), or the
 * monotonic deadline; false at the deadline. */
bool clmem__bridges_hold(VkDevice device, clmem_bridge ***held_out, unsigned *count_out);
bool clmem__bridges_wait_destroyed(VkDevice device, uint64_t deadline);

/* clmem_bridge_finish(), for clmem_bridge_device_finish(): its sentence is
 * the calling public function's (lib/error-private.h). */
clmem_status clmem__bridge_finish(clmem_bridge *b, uint64_t timeout_ns);

/* CLMEM_OK when queue is a valid queue of b's context; else
 * CLMEM_ERR_OPENCL or CLMEM_ERR_CONTEXT_MISMATCH, recorded. */
clmem_status clmem__bridge_check_queue(const clmem_bridge *b, cl_command_queue queue);
#endif
