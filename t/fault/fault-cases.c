/* SPDX-License-Identifier: MIT */
/* The table of the fault-injection test (t/fault/fault-injection.c runs it):
 * each row is a failure point of the library, a sequence of calls that
 * reaches it, and what a call that fails there must report. Adding a point
 * is one row. The sequences are lists of operations that t/fault/fault-run.c
 * interprets (t/fault/fault-injection.h says what each does).
 *
 * The image sequences share a Vulkan image (clmem_bridge_vk_image_create,
 * made with nothing armed) owned by the caller's anchor, as the buffer
 * sequences share a buffer; an optimal-tiling sequence's bridge passes
 * clmem_bridge_image_live_check first, also with nothing armed, and
 * finishes that check's own import before the sequence starts.
 *
 * The many-handle sequences import "pieces", disjoint ranges of the run's
 * buffer (one import each), and hand them over in one call: 2 of them (one
 * event over several commands: the handoff's marker), or 17, one more than
 * the handoff keeps on the stack (handoff_alloc; on the fd paths one more
 * than the extension call's list on the stack: fd_handoff_alloc). The ring
 * sequence makes a ring of 4 pieces in 2 slots of 2 from host-ordered
 * semaphores the test imports, carries 2 full batches and a short one
 * (slot 0 again) through vk_next, vk_submitted (after the test's own
 * signal of ready[s]), cl_next and cl_done, drains it and drops it; a
 * semaphore the test signalled that no ring wait consumed (a failed
 * vk_submitted, then the drop) is waited on by the test before the next
 * call, so that every binary semaphore alternates signal and wait. The
 * device-ordered ring (opaque-fd semaphores, cl_khr_external_semaphore)
 * is made and dropped only. */
#include "fault-injection.h"

/* ------------------------------------------------------------ operations */

/* The operations of a sequence, as t/fault/fault-injection.h's enum op_kind. */
#define IMPORT(s, r, q) {OP_IMPORT, s, r, q, 0, 0, 0, 0}
#define IMPORT_FD(s, r, q) {OP_IMPORT_FD, s, r, q, 0, 0, 0, 0}
#define FOR_QUEUE(s, from, q) {OP_FOR_QUEUE, s, WHOLE, q, from, 0, 0, 0}
#define ACQUIRE(s) {OP_ACQUIRE, s, WHOLE, 0, 0, 0, 0, 0}
#define RELEASE(s) {OP_RELEASE, s, WHOLE, 0, 0, 0, 0, 0}
#define DROP(s) {OP_DROP, s, WHOLE, 0, 0, 0, 0, 0}
#define FINISH {OP_FINISH, 0, WHOLE, 0, 0, 0, 0, 0}
#define END {OP_END, 0, WHOLE, 0, 0, 0, 0, 0}
#define SIMPLE(k, s) {k, s, WHOLE, 0, 0, 0, 0, 0}
#define IMPORT_IMAGE(s, q, fl) {OP_IMPORT_IMAGE, s, WHOLE, q, 0, fl, 0, 0}
#define AS_IMAGE CLMEM_BRIDGE_IMAGE_AS_IMAGE
#define SEM_IMPORT(s, n) {OP_SEM_IMPORT, s, WHOLE, 0, 0, 0, n, 0}
#define SEM_DROP(s, n) {OP_SEM_DROP, s, WHOLE, 0, 0, 0, n, 0}
#define IMPORT_PIECES(s, n, q) {OP_IMPORT_PIECES, s, PIECE, q, 0, 0, n, 0}
#define DROP_PIECES(s, n) {OP_DROP_PIECES, s, WHOLE, 0, 0, 0, n, 0}
#define ACQUIRE_EACH(s, n) {OP_ACQUIRE_EACH, s, WHOLE, 0, 0, 0, n, 0}
#define ACQUIRE_MANY(s, n, q) {OP_ACQUIRE_MANY, s, WHOLE, q, 0, 0, n, 0}
#define RELEASE_MANY(s, n, q) {OP_RELEASE_MANY, s, WHOLE, q, 0, 0, n, 0}
#define RING_CREATE(n, k, q) {OP_RING_CREATE, 0, WHOLE, q, 0, 0, n, k}
#define VK_NEXT(fl) {OP_VK_NEXT, 0, WHOLE, 0, 0, fl, 0, 0}
#define END_BATCH CLMEM_BRIDGE_RING_END_BATCH

/* ------------------------------------------------------------ sequences */

/* Import whole and a sub-range, hand the sub-range over and back, drop both. */
#define IMPORT_AND_HANDOFF                                                                                         \
    {IMPORT(0, WHOLE, 0), IMPORT(1, SUB, 0), ACQUIRE(1), RELEASE(1), DROP(1), DROP(0), FINISH, END}
/* The last handle goes while OpenCL owns the memory: the teardown hands it back. */
#define DROPPED_WHILE_ACQUIRED {IMPORT(0, WHOLE, 0), ACQUIRE(0), DROP(0), FINISH, END}
/* One import, three queues: a cache hit on the second, a handle for the
 * third; the teardown puts a marker on each. */
#define THREE_QUEUES                                                                                               \
    {IMPORT(0, WHOLE, 0), IMPORT(2, WHOLE, 1), FOR_QUEUE(3, 0, 2), ACQUIRE(0), RELEASE(0), DROP(0), DROP(3),       \
     DROP(2), FINISH, END}
/* Acquired through the cache hit's queue and dropped so: handed back there. */
#define THREE_QUEUES_DROPPED                                                                                       \
    {IMPORT(0, WHOLE, 0), IMPORT(2, WHOLE, 1), FOR_QUEUE(3, 0, 2), ACQUIRE(2), DROP(0), DROP(2), DROP(3), FINISH, END}

static const struct sequence seq_host = {"host-mapped: import whole, import sub-range, acquire, release, drop both",
                                         NEEDS_NOTHING, CLMEM_BRIDGE_PATH_HOST_MAPPED, 0, IMPORT_AND_HANDOFF};
static const struct sequence seq_host_dropped = {"host-mapped: import, acquire, drop while acquired", NEEDS_NOTHING,
                                                 CLMEM_BRIDGE_PATH_HOST_MAPPED, 0, DROPPED_WHILE_ACQUIRED};
static const struct sequence seq_host_queues = {
    "host-mapped: import, cache hit on a 2nd queue, handle for a 3rd, acquire, release, drop all", NEEDS_NOTHING,
    CLMEM_BRIDGE_PATH_HOST_MAPPED, 0, THREE_QUEUES};
static const struct sequence seq_host_queues_dropped = {
    "host-mapped: import on 3 queues, acquire on the 2nd, drop all while acquired", NEEDS_NOTHING,
    CLMEM_BRIDGE_PATH_HOST_MAPPED, 0, THREE_QUEUES_DROPPED};
static const struct sequence seq_fd = {"opaque-fd: import whole, import sub-range, acquire, release, drop both",
                                       NEEDS_OPAQUE_FD, CLMEM_BRIDGE_PATH_OPAQUE_FD, 0, IMPORT_AND_HANDOFF};
static const struct sequence seq_fd_dropped = {"opaque-fd: import, acquire, drop while acquired", NEEDS_OPAQUE_FD,
                                               CLMEM_BRIDGE_PATH_OPAQUE_FD, 0, DROPPED_WHILE_ACQUIRED};
static const struct sequence seq_fd_queues = {
    "opaque-fd: import, cache hit on a 2nd queue, handle for a 3rd, acquire, release, drop all", NEEDS_OPAQUE_FD,
    CLMEM_BRIDGE_PATH_OPAQUE_FD, 0, THREE_QUEUES};
static const struct sequence seq_fd_queues_dropped = {
    "opaque-fd: import on 3 queues, acquire on the 2nd, drop all while acquired", NEEDS_OPAQUE_FD,
    CLMEM_BRIDGE_PATH_OPAQUE_FD, 0, THREE_QUEUES_DROPPED};
static const struct sequence seq_import_fd = {
    "caller's opaque fd: import_fd sub-range, handle for a 2nd queue, acquire, release, drop", NEEDS_OPAQUE_FD,
    CLMEM_BRIDGE_PATH_OPAQUE_FD, 0,
    {IMPORT_FD(1, SUB, 0), FOR_QUEUE(2, 1, 1), ACQUIRE(1), RELEASE(1), DROP(2), DROP(1), FINISH, END}};
static const struct sequence seq_vk = {"vk_buffer_create, destroy", NEEDS_NOTHING, CLMEM_BRIDGE_PATH_HOST_MAPPED, 0,
                                       {SIMPLE(OP_VK_CREATE, 0), SIMPLE(OP_VK_DESTROY, 0), END}};
static const struct sequence seq_sem_host = {"host-ordered semaphore: import, drop", NEEDS_NOTHING,
                                             CLMEM_BRIDGE_PATH_HOST_MAPPED, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED,
                                             {SEM_IMPORT(0, 1), SEM_DROP(0, 1), FINISH, END}};
static const struct sequence seq_sem_fd = {"opaque-fd semaphore: import, drop", NEEDS_SEMAPHORE_OPAQUE_FD,
                                           CLMEM_BRIDGE_PATH_HOST_MAPPED, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD,
                                           {SEM_IMPORT(0, 1), SEM_DROP(0, 1), FINISH, END}};
/* An image's plane imported on one queue, a cache hit on a second, handed
 * over and back, both dropped. */
#define IMAGE_TWO_QUEUES(fl)                                                                                       \
    {IMPORT_IMAGE(0, 0, fl), IMPORT_IMAGE(1, 1, fl), ACQUIRE(1), RELEASE(1), DROP(0), DROP(1), FINISH, END}
static const struct sequence seq_vk_image = {"vk_image_create (linear, host-visible), destroy", NEEDS_NOTHING,
                                             CLMEM_BRIDGE_PATH_HOST_MAPPED, 0,
                                             {SIMPLE(OP_VK_IMAGE_CREATE, 0), SIMPLE(OP_VK_IMAGE_DESTROY, 0), END}};
static const struct sequence seq_image_planes = {
    "host-mapped linear image: import plane buffer, cache hit on a 2nd queue, acquire, release, drop both",
    NEEDS_LINEAR_IMAGE, CLMEM_BRIDGE_PATH_HOST_MAPPED, 0, IMAGE_TWO_QUEUES(0)};
static const struct sequence seq_image_view = {
    "host-mapped linear image: import image view, cache hit on a 2nd queue, acquire, release, drop both",
    NEEDS_IMAGE_VIEW, CLMEM_BRIDGE_PATH_HOST_MAPPED, 0, IMAGE_TWO_QUEUES(AS_IMAGE)};
static const struct sequence seq_image_view_fd = {
    "opaque-fd linear image: import image view, cache hit on a 2nd queue, acquire, release, drop both",
    NEEDS_IMAGE_VIEW_OPAQUE_FD, CLMEM_BRIDGE_PATH_OPAQUE_FD, 0, IMAGE_TWO_QUEUES(AS_IMAGE)};
static const struct sequence seq_image_optimal = {
    "opaque-fd optimal-tiling image (live check passed): import, cache hit on a 2nd queue, acquire, release, "
    "drop both",
    NEEDS_OPTIMAL_IMAGE, CLMEM_BRIDGE_PATH_OPAQUE_FD, 0, IMAGE_TWO_QUEUES(AS_IMAGE)};
static const struct sequence seq_bridge = {
    "bridge_create (device named), bridge_create (device found), unref both", NEEDS_NOTHING,
    CLMEM_BRIDGE_PATH_HOST_MAPPED, 0,
    {SIMPLE(OP_BRIDGE_CREATE, 0), SIMPLE(OP_BRIDGE_CREATE, 1), SIMPLE(OP_BRIDGE_UNREF, 0),
     SIMPLE(OP_BRIDGE_UNREF, 1), END}};
/* Pieces handed over in one call: two host-mapped ones are two commands
 * under one marker (and an empty call with an event is a marker alone);
 * MANY is past the handoff's stack lists. On the fd paths the MANY pieces
 * go in one extension call, past its list on the stack too: there the
 * release direction has a sequence of its own, since the failing call
 * named is the direction's. */
static const struct sequence seq_many_host2 = {
    "host-mapped: 2 pieces, acquire_many of none, then of both, release_many of both (an event each), drop both",
    NEEDS_NOTHING, CLMEM_BRIDGE_PATH_HOST_MAPPED, 0,
    {IMPORT_PIECES(0, 2, 0), ACQUIRE_MANY(0, 0, 0), ACQUIRE_MANY(0, 2, 0), RELEASE_MANY(0, 2, 0), DROP_PIECES(0, 2),
     FINISH, END}};
static const struct sequence seq_many_host = {
    "host-mapped: 17 pieces, acquire_many and release_many of all 17 (an event each), drop all", NEEDS_NOTHING,
    CLMEM_BRIDGE_PATH_HOST_MAPPED, 0,
    {IMPORT_PIECES(0, MANY, 0), ACQUIRE_MANY(0, MANY, 0), RELEASE_MANY(0, MANY, 0), DROP_PIECES(0, MANY), FINISH,
     END}};
static const struct sequence seq_many_fd = {
    "opaque-fd: 17 pieces, acquire_many of all 17 (one extension call), drop all while acquired", NEEDS_OPAQUE_FD,
    CLMEM_BRIDGE_PATH_OPAQUE_FD, 0,
    {IMPORT_PIECES(0, MANY, 0), ACQUIRE_MANY(0, MANY, 0), DROP_PIECES(0, MANY), FINISH, END}};
static const struct sequence seq_many_fd_back = {
    "opaque-fd: 17 pieces, acquired one by one, release_many of all 17 (one extension call), drop all",
    NEEDS_OPAQUE_FD, CLMEM_BRIDGE_PATH_OPAQUE_FD, 0,
    {IMPORT_PIECES(0, MANY, 0), ACQUIRE_EACH(0, MANY), RELEASE_MANY(0, MANY, 0), DROP_PIECES(0, MANY), FINISH, END}};
/* A frame ring of the pieces 0..3, 2 slots of 2 frames. A full batch: two
 * frames for Vulkan, reported submitted, taken by OpenCL, handed back. */
#define RING_FULL_BATCH                                                                                            \
    VK_NEXT(0), VK_NEXT(0), SIMPLE(OP_VK_SUBMITTED, 0), SIMPLE(OP_CL_NEXT, 0), SIMPLE(OP_CL_DONE, 0)
static const struct sequence seq_ring_host = {
    "host-ordered ring of 4 host-mapped pieces in 2 slots of 2: 2 batches, a short 3rd in slot 0 again, drain, "
    "drop",
    NEEDS_NOTHING, CLMEM_BRIDGE_PATH_HOST_MAPPED, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED,
    {IMPORT_PIECES(0, 4, 0), SEM_IMPORT(0, 4), RING_CREATE(4, 2, 0), RING_FULL_BATCH, RING_FULL_BATCH,
     VK_NEXT(END_BATCH), SIMPLE(OP_VK_SUBMITTED, 0), SIMPLE(OP_CL_NEXT, 0), SIMPLE(OP_CL_DONE, 0),
     SIMPLE(OP_VK_DRAIN, 0), SIMPLE(OP_RING_UNREF, 0), SEM_DROP(0, 4), DROP_PIECES(0, 4), FINISH, END}};
/* Device ordering: made and dropped (no fence, no host-ordered submission;
 * the one ring point it reaches is the ring's allocation). */
static const struct sequence seq_ring_device = {
    "device-ordered ring (opaque-fd semaphores) of 4 host-mapped pieces in 2 slots of 2: create, drop",
    NEEDS_SEMAPHORE_OPAQUE_FD, CLMEM_BRIDGE_PATH_HOST_MAPPED, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD,
    {IMPORT_PIECES(0, 4, 0), SEM_IMPORT(0, 4), RING_CREATE(4, 2, 0), SIMPLE(OP_RING_UNREF, 0), SEM_DROP(0, 4),
     DROP_PIECES(0, 4), FINISH, END}};


/* ---------------------------------------------------------------- rows */

#define TEARDOWN CLMEM_OK, NULL /* reached only inside the last unref: no status to check */

const struct fault_case fault_cases[] = {
    /* point                                   sequence                  status               call named */
    /* the bridge */
    {"bridge_alloc",                           &seq_bridge,              CLMEM_ERR_NO_MEMORY, NULL},
    {"vkGetInstanceProcAddr",                  &seq_bridge,              CLMEM_ERR_UNSUPPORTED, NULL},
    {"clGetContextInfo(CL_CONTEXT_DEVICES)",   &seq_bridge,              CLMEM_ERR_OPENCL,    "clGetContextInfo(CL_CONTEXT_DEVICES)"},
    {"clRetainContext",                        &seq_bridge,              CLMEM_ERR_OPENCL,    "clRetainContext"},
    /* host-mapped */
    {"import_record_alloc",                    &seq_host,                CLMEM_ERR_NO_MEMORY, NULL},
    {"anchor_alloc",                           &seq_host,                CLMEM_ERR_NO_MEMORY, NULL},
    {"host_map_alloc",                         &seq_host,                CLMEM_ERR_NO_MEMORY, NULL},
    {"vkMapMemory",                            &seq_host,                CLMEM_ERR_VULKAN,    "vkMapMemory"},
    {"clCreateBuffer",                         &seq_host,                CLMEM_ERR_OPENCL,    "clCreateBuffer(CL_MEM_USE_HOST_PTR)"},
    {"clEnqueueMapBuffer",                     &seq_host,                CLMEM_ERR_OPENCL,    "clEnqueueMapBuffer"},
    /* (no clCreateSubBuffer here: a host-mapped import wraps just its range) */
    {"import_queue_list",                      &seq_host,                CLMEM_ERR_NO_MEMORY, NULL},
    {"clSetMemObjectDestructorCallback",       &seq_host,                CLMEM_ERR_OPENCL,    "clSetMemObjectDestructorCallback"},
    {"import_anchor_list",                     &seq_host,                CLMEM_ERR_NO_MEMORY, NULL},
    {"handle_alloc",                           &seq_host,                CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueUnmapMemObject",                &seq_host,                CLMEM_ERR_OPENCL,    "clEnqueueUnmapMemObject"},
    {"teardown_markers_alloc",                 &seq_host,                TEARDOWN},
    {"clEnqueueMarkerWithWaitList",            &seq_host,                TEARDOWN},
    {"clSetEventCallback",                     &seq_host,                TEARDOWN},
    {"teardown_thread",                        &seq_host,                TEARDOWN},
    {"clEnqueueMapBuffer",                     &seq_host_dropped,        CLMEM_ERR_OPENCL,    "clEnqueueMapBuffer"},
    {"clEnqueueMarkerWithWaitList",            &seq_host_dropped,        TEARDOWN},
    /* host-mapped, three queues: the cache hit and handle_for_queue grow the lists */
    {"import_queue_list",                      &seq_host_queues,         CLMEM_ERR_NO_MEMORY, NULL},
    {"import_anchor_list",                     &seq_host_queues,         CLMEM_ERR_NO_MEMORY, NULL},
    {"handle_alloc",                           &seq_host_queues,         CLMEM_ERR_NO_MEMORY, NULL},
    {"teardown_markers_alloc",                 &seq_host_queues,         TEARDOWN},
    {"clEnqueueMarkerWithWaitList",            &seq_host_queues,         TEARDOWN},
    {"clSetEventCallback",                     &seq_host_queues,         TEARDOWN},
    {"clEnqueueMapBuffer",                     &seq_host_queues_dropped, CLMEM_ERR_OPENCL,    "clEnqueueMapBuffer"},
    {"clEnqueueMarkerWithWaitList",            &seq_host_queues_dropped, TEARDOWN},
    {"clSetEventCallback",                     &seq_host_queues_dropped, TEARDOWN},
    /* the Vulkan buffer helper, the host-ordered semaphore */
    {"vkCreateBuffer",                         &seq_vk,                  CLMEM_ERR_VULKAN,    "vkCreateBuffer"},
    {"vkAllocateMemory",                       &seq_vk,                  CLMEM_ERR_VULKAN,    "vkAllocateMemory"},
    {"vkBindBufferMemory",                     &seq_vk,                  CLMEM_ERR_VULKAN,    "vkBindBufferMemory"},
    {"semaphore_alloc",                        &seq_sem_host,            CLMEM_ERR_NO_MEMORY, NULL},
    {"vkCreateFence",                          &seq_sem_host,            CLMEM_ERR_VULKAN,    "vkCreateFence"},
    /* the Vulkan image helper */
    {"vkCreateImage",                          &seq_vk_image,            CLMEM_ERR_VULKAN,    "vkCreateImage"},
    {"vkAllocateMemory",                       &seq_vk_image,            CLMEM_ERR_VULKAN,    "vkAllocateMemory"},
    {"vkBindImageMemory",                      &seq_vk_image,            CLMEM_ERR_VULKAN,    "vkBindImageMemory"},
    /* many handles in one call: a marker over the commands; lists above 16 entries; a partial call undone */
    {"clEnqueueMarkerWithWaitList(handoff)",   &seq_many_host2,          CLMEM_ERR_OPENCL,    "clEnqueueMarkerWithWaitList"},
    {"clEnqueueUnmapMemObject",                &seq_many_host2,          CLMEM_ERR_OPENCL,    "clEnqueueUnmapMemObject"},
    {"clEnqueueMapBuffer",                     &seq_many_host2,          CLMEM_ERR_OPENCL,    "clEnqueueMapBuffer"},
    {"handoff_alloc",                          &seq_many_host,           CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueMarkerWithWaitList(handoff)",   &seq_many_host,           CLMEM_ERR_OPENCL,    "clEnqueueMarkerWithWaitList"},
    /* the host-ordered frame ring: its fences, the fence submission, the batches' handoffs (retried) */
    {"ring_alloc",                             &seq_ring_host,           CLMEM_ERR_NO_MEMORY, NULL},
    {"vkCreateFence(ring)",                    &seq_ring_host,           CLMEM_ERR_VULKAN,    "vkCreateFence"},
    {"vkQueueSubmit(ring)",                    &seq_ring_host,           CLMEM_ERR_VULKAN,    "vkQueueSubmit"},
    {"clEnqueueMarkerWithWaitList(handoff)",   &seq_ring_host,           CLMEM_ERR_OPENCL,    "clEnqueueMarkerWithWaitList"},
    {"clEnqueueUnmapMemObject",                &seq_ring_host,           CLMEM_ERR_OPENCL,    "clEnqueueUnmapMemObject"},
    {"clEnqueueMapBuffer",                     &seq_ring_host,           CLMEM_ERR_OPENCL,    "clEnqueueMapBuffer"},
    /* a linear image's plane buffer: clmem_bridge_import_vk of the plane, through the image entry point */
    {"import_record_alloc",                    &seq_image_planes,        CLMEM_ERR_NO_MEMORY, NULL},
    {"clCreateBuffer",                         &seq_image_planes,        CLMEM_ERR_OPENCL,    "clCreateBuffer(CL_MEM_USE_HOST_PTR)"},
    {"import_anchor_list",                     &seq_image_planes,        CLMEM_ERR_NO_MEMORY, NULL},
    {"handle_alloc",                           &seq_image_planes,        CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueUnmapMemObject",                &seq_image_planes,        CLMEM_ERR_OPENCL,    "clEnqueueUnmapMemObject"},
    {"clEnqueueMarkerWithWaitList",            &seq_image_planes,        TEARDOWN},
    /* image2d views of linear planes (CLMEM_BRIDGE_CAP_IMAGE_VIEW): the steps after the view must undo it */
    {"clCreateImage",                          &seq_image_view,          CLMEM_ERR_OPENCL,    "clCreateImage"},
    {"clSetMemObjectDestructorCallback",       &seq_image_view,          CLMEM_ERR_OPENCL,    "clSetMemObjectDestructorCallback"},
    {"handle_alloc",                           &seq_image_view,          CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueMarkerWithWaitList",            &seq_image_view,          TEARDOWN},
    /* the fd paths: NVIDIA (cl_khr_external_memory_opaque_fd) */
    {"import_record_alloc",                    &seq_fd,                  CLMEM_ERR_NO_MEMORY, NULL},
    {"anchor_alloc",                           &seq_fd,                  CLMEM_ERR_NO_MEMORY, NULL},
    {"vkGetMemoryFdKHR",                       &seq_fd,                  CLMEM_ERR_VULKAN,    "vkGetMemoryFdKHR"},
    {"clCreateBufferWithProperties",           &seq_fd,                  CLMEM_ERR_OPENCL,    "clCreateBufferWithProperties"},
    {"import_queue_list",                      &seq_fd,                  CLMEM_ERR_NO_MEMORY, NULL},
    {"clCreateSubBuffer",                      &seq_fd,                  CLMEM_ERR_OPENCL,    "clCreateSubBuffer"},
    {"clSetMemObjectDestructorCallback",       &seq_fd,                  CLMEM_ERR_OPENCL,    "clSetMemObjectDestructorCallback"},
    {"import_anchor_list",                     &seq_fd,                  CLMEM_ERR_NO_MEMORY, NULL},
    {"handle_alloc",                           &seq_fd,                  CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueAcquireExternalMemObjectsKHR",  &seq_fd,                  CLMEM_ERR_OPENCL,    "clEnqueueAcquireExternalMemObjectsKHR"},
    {"clEnqueueReleaseExternalMemObjectsKHR",  &seq_fd,                  CLMEM_ERR_OPENCL,    "clEnqueueReleaseExternalMemObjectsKHR"},
    {"teardown_markers_alloc",                 &seq_fd,                  TEARDOWN},
    {"clEnqueueMarkerWithWaitList",            &seq_fd,                  TEARDOWN},
    {"clSetEventCallback",                     &seq_fd,                  TEARDOWN},
    {"clEnqueueReleaseExternalMemObjectsKHR",  &seq_fd_dropped,          CLMEM_ERR_OPENCL,    "clEnqueueReleaseExternalMemObjectsKHR"},
    {"clEnqueueMarkerWithWaitList",            &seq_fd_dropped,          TEARDOWN},
    {"import_queue_list",                      &seq_fd_queues,           CLMEM_ERR_NO_MEMORY, NULL},
    {"import_anchor_list",                     &seq_fd_queues,           CLMEM_ERR_NO_MEMORY, NULL},
    {"handle_alloc",                           &seq_fd_queues,           CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueMarkerWithWaitList",            &seq_fd_queues,           TEARDOWN},
    {"clSetEventCallback",                     &seq_fd_queues,           TEARDOWN},
    {"clEnqueueReleaseExternalMemObjectsKHR",  &seq_fd_queues_dropped,   CLMEM_ERR_OPENCL,    "clEnqueueReleaseExternalMemObjectsKHR"},
    {"clEnqueueMarkerWithWaitList",            &seq_fd_queues_dropped,   TEARDOWN},
    {"fcntl(F_DUPFD_CLOEXEC)",                 &seq_import_fd,           CLMEM_ERR_NO_MEMORY, "fcntl(F_DUPFD_CLOEXEC)"},
    {"import_record_alloc",                    &seq_import_fd,           CLMEM_ERR_NO_MEMORY, NULL},
    {"anchor_alloc",                           &seq_import_fd,           CLMEM_ERR_NO_MEMORY, NULL},
    {"clCreateBufferWithProperties",           &seq_import_fd,           CLMEM_ERR_OPENCL,    "clCreateBufferWithProperties"},
    {"import_queue_list",                      &seq_import_fd,           CLMEM_ERR_NO_MEMORY, NULL},
    {"clCreateSubBuffer",                      &seq_import_fd,           CLMEM_ERR_OPENCL,    "clCreateSubBuffer"},
    {"clSetMemObjectDestructorCallback",       &seq_import_fd,           CLMEM_ERR_OPENCL,    "clSetMemObjectDestructorCallback"},
    {"import_anchor_list",                     &seq_import_fd,           CLMEM_ERR_NO_MEMORY, NULL},
    {"handle_alloc",                           &seq_import_fd,           CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueMarkerWithWaitList",            &seq_import_fd,           TEARDOWN},
    {"semaphore_alloc",                        &seq_sem_fd,              CLMEM_ERR_NO_MEMORY, NULL},
    {"vkGetSemaphoreFdKHR",                    &seq_sem_fd,              CLMEM_ERR_VULKAN,    "vkGetSemaphoreFdKHR"},
    {"clCreateSemaphoreWithPropertiesKHR",     &seq_sem_fd,              CLMEM_ERR_OPENCL,    "clCreateSemaphoreWithPropertiesKHR"},
    /* the device-ordered ring (cl_khr_external_semaphore) */
    {"ring_alloc",                             &seq_ring_device,         CLMEM_ERR_NO_MEMORY, NULL},
    /* 17 fd pieces: ONE extension call, its list past the stack. Its allocation failing is reported as the
     * extension call refused (CL_OUT_OF_HOST_MEMORY), so the call named is the direction's. */
    {"handoff_alloc",                          &seq_many_fd,             CLMEM_ERR_NO_MEMORY, NULL},
    {"fd_handoff_alloc",                       &seq_many_fd,             CLMEM_ERR_OPENCL,    "clEnqueueAcquireExternalMemObjectsKHR"},
    {"clEnqueueAcquireExternalMemObjectsKHR",  &seq_many_fd,             CLMEM_ERR_OPENCL,    "clEnqueueAcquireExternalMemObjectsKHR"},
    {"clEnqueueReleaseExternalMemObjectsKHR",  &seq_many_fd,             TEARDOWN},
    {"handoff_alloc",                          &seq_many_fd_back,        CLMEM_ERR_NO_MEMORY, NULL},
    {"fd_handoff_alloc",                       &seq_many_fd_back,        CLMEM_ERR_OPENCL,    "clEnqueueReleaseExternalMemObjectsKHR"},
    {"clEnqueueReleaseExternalMemObjectsKHR",  &seq_many_fd_back,        CLMEM_ERR_OPENCL,    "clEnqueueReleaseExternalMemObjectsKHR"},
    /* image views on the opaque-fd path */
    {"clCreateImage",                          &seq_image_view_fd,       CLMEM_ERR_OPENCL,    "clCreateImage"},
    {"clSetMemObjectDestructorCallback",       &seq_image_view_fd,       CLMEM_ERR_OPENCL,    "clSetMemObjectDestructorCallback"},
    {"handle_alloc",                           &seq_image_view_fd,       CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueAcquireExternalMemObjectsKHR",  &seq_image_view_fd,       CLMEM_ERR_OPENCL,    "clEnqueueAcquireExternalMemObjectsKHR"},
    {"clEnqueueReleaseExternalMemObjectsKHR",  &seq_image_view_fd,       CLMEM_ERR_OPENCL,    "clEnqueueReleaseExternalMemObjectsKHR"},
    {"clEnqueueMarkerWithWaitList",            &seq_image_view_fd,       TEARDOWN},
    /* optimal-tiling images from the fd, once the live check passed */
    {"vkGetMemoryFdKHR",                       &seq_image_optimal,       CLMEM_ERR_VULKAN,    "vkGetMemoryFdKHR"},
    {"clCreateImageWithProperties",            &seq_image_optimal,       CLMEM_ERR_OPENCL,    "clCreateImageWithProperties"},
    {"clSetMemObjectDestructorCallback",       &seq_image_optimal,       CLMEM_ERR_OPENCL,    "clSetMemObjectDestructorCallback"},
    {"handle_alloc",                           &seq_image_optimal,       CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueAcquireExternalMemObjectsKHR",  &seq_image_optimal,       CLMEM_ERR_OPENCL,    "clEnqueueAcquireExternalMemObjectsKHR"},
    {"clEnqueueReleaseExternalMemObjectsKHR",  &seq_image_optimal,       CLMEM_ERR_OPENCL,    "clEnqueueReleaseExternalMemObjectsKHR"},
    {"clEnqueueMarkerWithWaitList",            &seq_image_optimal,       TEARDOWN},
};

const int fault_case_count = (int)(sizeof fault_cases / sizeof fault_cases[0]);
