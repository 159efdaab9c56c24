/* Fault injection: every failure point of the bridge's creation, imports
 * (of buffers, and of images: plane buffers, image views, optimal-tiling
 * images), handles for more queues, handoff (of one handle, and of many
 * at once), teardown, semaphores, the frame ring and Vulkan buffer and
 * image helpers is made to fail at every pass a sequence
 * of calls makes through it, and each failure must be reported as
 * documented and lose nothing.
 *
 * For each row of `cases` below (a point and the sequence that reaches it):
 *  1. a dry run with nothing armed counts the passes through the point;
 *  2. for n = 1..passes, twice (RETRY: disarm and repeat the failed call,
 *     then finish the sequence; DROP: let go of everything at once, then
 *     run the whole sequence once more with nothing armed, the "next
 *     call"), the nth pass fails and the test checks
 *       - the failing call returned the row's status, clmem_error_call()
 *         names the row's call (NULL for the library's own allocations and
 *         checks), the native code is non-zero for OpenCL, Vulkan and
 *         system failures, *out is NULL after a failed import, handle,
 *         semaphore, ring or bridge creation, *event_out is NULL after a
 *         failed acquire_many, release_many, cl_next or cl_done, a caller's
 *         fd is still open, and a failed bridge creation retained nothing
 *         (the context's reference count is unchanged right after it);
 *       - a pass that fails inside a call with no status (the last unref,
 *         which starts the import's teardown: the marker list, the markers,
 *         their callbacks, the hand-back of memory left acquired) is judged
 *         by what follows: clmem_bridge_finish must still return CLMEM_OK,
 *         and nothing may be lost;
 *       - nothing was lost, after clmem_bridge_finish returned CLMEM_OK and
 *         the test dropped its bridge reference: the fd count and the
 *         context's and the three queues' OpenCL reference counts are as
 *         before the run's bridge was made, host-mapped memory is no longer
 *         mapped, the
 *         validation layer saw no new error, every Vulkan keepalive an
 *         import was given (a probe anchor of its own per import call) has
 *         run its release exactly once, and only after OpenCL destroyed the
 *         cl_mem the import made, and the caller's anchor on the Vulkan
 *         memory runs its release at once, exactly once, when the caller
 *         drops its reference (the bridge kept none), and so does the
 *         caller's anchor on the semaphores (no ring or semaphore still
 *         holds one: a failed ring creation let go of the frames, the
 *         semaphores, the queue and the bridge);
 *       - the library still works (the retry, or the next call).
 *
 * Each run makes a bridge of its own (import cache on) and drops it at
 * the end, so that what one broken run strands is not blamed on the next;
 * the bridge-creation rows make and drop theirs in the sequence. Adding a point is one line in `cases`; the test reads the library's
 * sources (CLMEM_TOP_SRCDIR) and fails when a FAULT("...") there has no
 * row, when a row names a point the sources lack, or when the library
 * reached a point that has no row. Sequences whose path the machine lacks
 * (opaque fd, device-ordered semaphores, image views, optimal-tiling images
 * on CPU machines) are skipped with the bridge's reason, naming what is
 * missing.
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
 * is made and dropped only.
 *
 * Links t/libclmem-fault.la, libclmem and libclmem-bridge built with the
 * seam (lib/fault.h), instead of the shipped libraries. */
#include "bridge-fixture.h"
#include "fault-control.h"
#include "fd-count.h"
#include "tap.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef CLMEM_TOP_SRCDIR
#define CLMEM_TOP_SRCDIR "."
#endif

#define ALLOC_SIZE (64 * 1024)
#define SUB_SIZE 4096
#define MANY 17    /* handles in one big acquire_many: one more than bridge/handoff.c's HANDOFF_STACK and
                      bridge/path-fd.c's FD_STACK_MEMS */
#define NSLOTS 20  /* handles (and fds) a run can hold: MANY pieces, or the other sequences' 4 */
#define NSEMS 4    /* semaphores a run can hold: a ring of 2 slots */
#define RING_FRAMES 8 /* frames a ring sequence hands out */
#define PIECE_MIN 1024 /* bytes of a piece (more where the sub-range offset needs it) */
#define NQUEUES 3  /* the fixture's queue and two more of its context */
#define NPROBES 64 /* probe anchors a run can hand out: sequence, retry and next call (MANY twice) */
#define SETTLE_NS UINT64_C(5000000000) /* finish's timeout: teardowns take milliseconds */
/* What an out-parameter holds before a call, so that "set to NULL" shows. */
#define JUNK_HANDLE ((clmem_handle *)(uintptr_t)0x1)
#define JUNK_SEMAPHORE ((clmem_bridge_semaphore *)(uintptr_t)0x1)
#define JUNK_BRIDGE ((clmem_bridge *)(uintptr_t)0x1)
#define JUNK_RING ((clmem_bridge_ring *)(uintptr_t)0x1)
#define JUNK_EVENT ((cl_event)(uintptr_t)0x1)
/* The images the image sequences make: rows of 256 bytes in RGBA8. */
#define IMAGE_FORMAT VK_FORMAT_R8G8B8A8_UNORM
#define IMAGE_W 64
#define IMAGE_H 16
#define IMAGE_USAGE (VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT)

/* ------------------------------------------------------------ sequences */

enum op_kind {
    OP_END,
    OP_IMPORT,         /* clmem_bridge_import_vk(range, queue) into slot */
    OP_IMPORT_FD,      /* the test exports an fd, clmem_bridge_import_fd(range, queue) into slot */
    OP_FOR_QUEUE,      /* clmem_bridge_handle_for_queue(src's handle, queue) into slot */
    OP_ACQUIRE,        /* clmem_bridge_acquire(slot) */
    OP_RELEASE,        /* clmem_bridge_release(slot), waited for */
    OP_DROP,           /* clmem_handle_unref(slot): no status; an import's last one starts its teardown */
    OP_FINISH,         /* clmem_bridge_finish(10 s): must return CLMEM_OK, whatever failed before */
    OP_VK_CREATE,      /* clmem_bridge_vk_buffer_create */
    OP_VK_DESTROY,     /* clmem_bridge_vk_buffer_destroy: no status */
    OP_SEM_IMPORT,     /* clmem_bridge_semaphore_import into semaphore slots [slot, slot + count) still empty */
    OP_SEM_DROP,       /* clmem_bridge_semaphore_unref of semaphore slots [slot, slot + count): no status */
    OP_BRIDGE_CREATE,  /* clmem_bridge_create into slot: 0 names the OpenCL device, 1 lets the bridge find it */
    OP_BRIDGE_UNREF,     /* clmem_bridge_unref(slot): no status */
    OP_IMPORT_IMAGE,     /* clmem_bridge_import_vk_image(the run's image, plane 0, queue, flags) into slot */
    OP_VK_IMAGE_CREATE,  /* clmem_bridge_vk_image_create (linear, host-visible) */
    OP_VK_IMAGE_DESTROY, /* clmem_bridge_vk_image_destroy: no status */
    OP_IMPORT_PIECES,    /* clmem_bridge_import_vk of piece i into slot i, for the slots [slot, slot + count)
                            still empty (a retry goes on where the failed import stopped) */
    OP_DROP_PIECES,      /* clmem_handle_unref of slots [slot, slot + count): no status */
    OP_ACQUIRE_EACH,     /* clmem_bridge_acquire of each of slots [slot, slot + count) not acquired yet */
    OP_ACQUIRE_MANY,     /* clmem_bridge_acquire_many(slots [slot, slot + count), queue), with an event, waited for */
    OP_RELEASE_MANY,     /* clmem_bridge_release_many(slots [slot, slot + count), queue), with an event, waited for */
    OP_RING_CREATE,      /* clmem_bridge_ring_create: frames slots [0, count), batch_size batch, ready semaphores
                            [0, count / batch), done the next as many, on queue */
    OP_VK_NEXT,          /* clmem_bridge_ring_vk_next(flags) */
    OP_VK_SUBMITTED,     /* the test's signal of the frames handed out (once), clmem_bridge_ring_vk_submitted(the
                            last one) */
    OP_CL_NEXT,          /* clmem_bridge_ring_cl_next, with an event, waited for */
    OP_CL_DONE,          /* clmem_bridge_ring_cl_done(the oldest batch taken), with an event, waited for */
    OP_VK_DRAIN,         /* clmem_bridge_ring_vk_drain, and the waits it gives submitted */
    OP_RING_UNREF        /* clmem_bridge_ring_unref, after both queues drained: no status */
};

/* SUB: [align, align + SUB_SIZE), a non-zero offset (a sub-buffer on the fd paths). PIECE: piece i,
 * [i * env.piece, (i + 1) * env.piece), one import per piece (the cache keys on the range). */
enum range { WHOLE, SUB, PIECE };

struct op {
    enum op_kind kind;
    int slot;
    enum range range; /* imports */
    int queue;        /* imports and OP_FOR_QUEUE: index into env.queues */
    int src;          /* OP_FOR_QUEUE: the slot whose handle it starts from */
    uint32_t flags;   /* OP_IMPORT_IMAGE: 0 (the plane buffer) or CLMEM_BRIDGE_IMAGE_AS_IMAGE;
                         OP_VK_NEXT: 0 or CLMEM_BRIDGE_RING_END_BATCH */
    int count;        /* the ops on a run of slots: how many (0 for acquire_many and release_many: none) */
    int batch;        /* OP_RING_CREATE: batch_size */
};

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

enum needs {
    NEEDS_NOTHING,
    NEEDS_OPAQUE_FD,
    NEEDS_SEMAPHORE_OPAQUE_FD,
    NEEDS_LINEAR_IMAGE,         /* a linear image in host-visible memory, its plane buffer on host-mapped */
    NEEDS_IMAGE_VIEW,           /* CLMEM_BRIDGE_CAP_IMAGE_VIEW, and a view of the run's image on host-mapped */
    NEEDS_IMAGE_VIEW_OPAQUE_FD, /* the same on the opaque-fd path */
    NEEDS_OPTIMAL_IMAGE,        /* opaque fd, and a format whose optimal-tiling live check passes */
    NEEDS_COUNT
};

struct sequence {
    const char *name;
    enum needs needs;
    clmem_bridge_path path;               /* of the imports */
    clmem_bridge_semaphore_mode sem_mode; /* of OP_SEM_IMPORT */
    struct op ops[28];
};

/* The run's image has optimal tiling (else linear) in exactly the
 * sequences that need an optimal-tiling import. */
static bool seq_optimal(const struct sequence *seq)
{
    return seq->needs == NEEDS_OPTIMAL_IMAGE;
}

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

/* ---------------------------------------------------------------- cases */

struct fault_case {
    const char *point;          /* the FAULT("...") name */
    const struct sequence *seq; /* a sequence that reaches it */
    clmem_status want;          /* what a call that fails there returns (CLMEM_OK: only teardowns reach it) */
    const char *call;           /* what clmem_error_call() names; NULL: the library's own check */
};

#define TEARDOWN CLMEM_OK, NULL /* reached only inside the last unref: no status to check */

static const struct fault_case cases[] = {
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
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* ------------------------------------------------------------ the world */

struct env {
    struct vkctx vk;
    struct cl_fixture f;
    cl_command_queue queues[NQUEUES];  /* [0] is f.queue */
    VkDeviceSize align;                /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes: SUB's offset */
    VkDeviceSize piece;                /* a PIECE's size: PIECE_MIN, or align where that is more */
    bool have[NEEDS_COUNT];
    char why_not[NEEDS_COUNT][768];    /* the bridge's message where a need is not met */
    VkFormat optimal_format;           /* NEEDS_OPTIMAL_IMAGE: the first format whose live check passed */
    /* the baselines, with the fixtures open (no bridge) and the drivers warmed up */
    int fds;
    cl_uint context_refs, queue_refs[NQUEUES];
};

/* Which fds are open now that were not when the baseline was taken, as
 * "number -> target": to tell a driver's fd from one the bridge lost. */
static char baseline_fds[8192];
static void list_fds(char *out, size_t len, const char *except)
{
    size_t used = 0;
    out[0] = '\0';
    for (int fd = 0; fd < 4096 && used + 80 < len; fd++) {
        char path[64], target[256], item[320];
        ssize_t n;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        n = readlink(path, target, sizeof target - 1);
        if (n < 0)
            continue;
        target[n] = '\0';
        snprintf(item, sizeof item, " %d->%s", fd, target);
        if (except && strstr(except, item))
            continue;
        used += (size_t)snprintf(out + used, len - used, "%s", item);
    }
}

static cl_uint context_refs(cl_context c)
{
    cl_uint n = 0;
    clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

/* A counting anchor, for the semaphore sequences. */
static void count_release(void *user)
{
    atomic_fetch_add((atomic_int *)user, 1);
}

static bool refs_are_back(const struct env *e)
{
    if (context_refs(e->f.context) != e->context_refs)
        return false;
    for (int i = 0; i < NQUEUES; i++)
        if (cl_queue_refcount(e->queues[i]) != e->queue_refs[i])
            return false;
    return true;
}

/* PoCL lets go of its own references on the queues and the context (held
 * by its commands and events, which a driver thread cleans up) a little
 * after the calls that made them returned. Wait for the counts to come
 * back: a leaked reference never does, so waiting costs time only when
 * something is wrong. Returns how long it took, or -1 after two seconds. */
static int settle_ms_max;
static int refs_settle(const struct env *e)
{
    for (int ms = 0; ms < 2000; ms++) {
        if (refs_are_back(e)) {
            if (ms > settle_ms_max)
                settle_ms_max = ms;
            return ms;
        }
        usleep(1000);
    }
    return -1;
}

/* Runs that left something of the caller's held (an anchor never
 * released): the bridge still holds (or lost) an import, and the drivers
 * may wait for it forever when their context or device is destroyed
 * (NVIDIA's do). */
static int stranded;

enum mode { MODE_DRY, MODE_RETRY, MODE_DROP };
static const char *const mode_names[] = {"dry run", "retry", "drop"};

struct run;

/* A Vulkan keepalive of one import call, handed out in call order. It
 * holds a reference on the caller's anchor on the memory (r->ka), as an
 * application's keepalive would, and records whether OpenCL had destroyed
 * the import's cl_mem when the bridge let go of it. */
struct probe {
    struct run *r;
    clmem_keepalive *ka;   /* the caller's reference until the import call returned; then NULL */
    bool used;             /* handed to an import call */
    bool watched;          /* the import succeeded: its cl_mem's destruction is watched */
    atomic_int released;
    atomic_int destroyed;  /* the watched cl_mem's destructor callbacks (the test's own) */
    atomic_int destroyed_at_release;
};

/* Everything one run of a sequence holds. */
struct run {
    struct env *e;
    const struct fault_case *c;
    const struct sequence *seq;
    clmem_bridge *b;               /* the run's own bridge (none for the bridge-creation rows) */
    bool finish_failed;            /* a finish of this run failed: later ones only check */
    cl_uint ctx_before_create;     /* the context's reference count right before bridge_create */
    struct vk_owned o;             /* the Vulkan memory the imports share (an image's: o.memory, o.released) */
    clmem_bridge_vk_image image;   /* the image sequences' VkImage, owned by the caller's anchor (r->ka) */
    clmem_keepalive *ka;           /* the caller's reference on its anchor on the memory */
    clmem_keepalive *sem_ka;       /* the caller's reference on its anchor on the semaphores */
    atomic_int sem_releases;       /* that anchor's releases */
    struct probe probes[NPROBES];
    int probes_used;
    int vk_sem_count;
    VkSemaphore vk_sems[NSEMS];
    clmem_bridge_semaphore *sems[NSEMS];
    bool sem_signalled[NSEMS];     /* the test signalled it, and no wait of the ring's was submitted since */
    int failed_slot;               /* the ops on a run of slots: the slot whose call failed */
    bool acquired_each[NSLOTS];    /* OP_ACQUIRE_EACH: acquired */
    cl_event event;                /* the event of the call that failed, as it left it */
    /* the ring sequences' */
    clmem_bridge_ring *ring;
    clmem_bridge_ring_frame ring_frames[RING_FRAMES]; /* handed out by vk_next, in order */
    int frames_out, frames_signalled;                  /* handed out; signalled by the test */
    clmem_bridge_ring_batch batches[RING_FRAMES];      /* taken by cl_next, in order */
    int batches_taken, batches_done;
    clmem_bridge *bridges[2];      /* the bridge-creation sequence's own */
    clmem_handle *h[NSLOTS];
    int fd[NSLOTS];                /* the caller's fd for OP_IMPORT_FD; -1 when none */
    struct stat fd_stat[NSLOTS];   /* to tell it from another file that got the same number */
    VkBuffer vk_buffer;
    clmem_bridge_vk_memory vk_memory;
    clmem_bridge_vk_image vk_image; /* OP_VK_IMAGE_CREATE's */
    /* what the failing call said, and what was wrong */
    char report[400];
    char problems[2048];
};

static void problem(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct run *r, const char *fmt, ...)
{
    size_t used = strlen(r->problems);
    va_list ap;

    if (used + 3 >= sizeof r->problems)
        return;
    if (used)
        used += (size_t)snprintf(r->problems + used, sizeof r->problems - used, "; ");
    va_start(ap, fmt);
    vsnprintf(r->problems + used, sizeof r->problems - used, fmt, ap);
    va_end(ap);
}

/* May run on a driver thread. The count goes last: once the main thread
 * sees it, this function touches the run no more. */
static void probe_release(void *user)
{
    struct probe *p = user;
    clmem_keepalive *callers = p->r->ka;

    atomic_store(&p->destroyed_at_release, atomic_load(&p->destroyed));
    clmem_keepalive_unref(callers); /* the probe's reference on the caller's anchor */
    atomic_fetch_add(&p->released, 1);
}

static void CL_CALLBACK probe_mem_destroyed(cl_mem mem, void *user)
{
    struct probe *p = user;
    (void)mem;
    atomic_fetch_add(&p->destroyed, 1);
}

/* The next probe for an import call (made in run_begin, with nothing
 * armed: the test's own anchors must not meet the "anchor_alloc" point). */
static struct probe *probe_take(struct run *r)
{
    struct probe *p;

    if (r->probes_used == NPROBES)
        tap_bail("a run made more than %d import calls; raise NPROBES", NPROBES);
    p = &r->probes[r->probes_used++];
    p->used = true;
    return p;
}

/* After the import call: the caller lets go of its reference (the import
 * holds its own), and a successful import's cl_mem is watched. Our
 * destructor callback is registered after the bridge's, so OpenCL runs it
 * first (callbacks run in reverse order of registration). */
static void probe_after_import(struct run *r, struct probe *p, clmem_status s, const clmem_handle *h)
{
    if (s == CLMEM_OK && h && h != JUNK_HANDLE) {
        cl_int err = clSetMemObjectDestructorCallback(clmem_handle_mem(h), probe_mem_destroyed, p);
        if (err != CL_SUCCESS)
            problem(r, "the test's clSetMemObjectDestructorCallback on the imported cl_mem failed: %d", err);
        else
            p->watched = true;
    }
    clmem_keepalive_unref(p->ka);
    p->ka = NULL;
}

static const char *op_name(struct op op)
{
    static const char *const names[] = {
        "end",               "import_vk",          "import_fd",         "handle_for_queue",
        "acquire",           "release",            "drop",              "finish",
        "vk_buffer_create",  "vk_buffer_destroy",  "semaphore_import",  "semaphore_unref",
        "bridge_create",     "bridge_unref",       "import_vk_image",   "vk_image_create",
        "vk_image_destroy",  "import_vk",          "drop",              "acquire",
        "acquire_many",      "release_many",       "ring_create",       "ring_vk_next",
        "ring_vk_submitted", "ring_cl_next",       "ring_cl_done",      "ring_vk_drain",
        "ring_unref"};
    static char buf[128];
    _Static_assert(sizeof names / sizeof names[0] == OP_RING_UNREF + 1, "a name for every op kind");

    switch (op.kind) {
    case OP_IMPORT:
    case OP_IMPORT_FD:
        snprintf(buf, sizeof buf, "%s #%d (%s, queue %d)", names[op.kind], op.slot,
                 op.range == SUB ? "sub-range" : "whole", op.queue);
        break;
    case OP_FOR_QUEUE:
        snprintf(buf, sizeof buf, "%s #%d (of #%d, queue %d)", names[op.kind], op.slot, op.src, op.queue);
        break;
    case OP_IMPORT_IMAGE:
        snprintf(buf, sizeof buf, "%s #%d (plane 0 %s, queue %d)", names[op.kind], op.slot,
                 op.flags & CLMEM_BRIDGE_IMAGE_AS_IMAGE ? "as an image" : "buffer", op.queue);
        break;
    case OP_ACQUIRE:
    case OP_RELEASE:
    case OP_DROP:
        snprintf(buf, sizeof buf, "%s #%d", names[op.kind], op.slot);
        break;
    case OP_IMPORT_PIECES:
        snprintf(buf, sizeof buf, "%s of pieces #%d..#%d (one each, queue %d)", names[op.kind], op.slot,
                 op.slot + op.count - 1, op.queue);
        break;
    case OP_DROP_PIECES:
    case OP_ACQUIRE_EACH:
        snprintf(buf, sizeof buf, "%s of #%d..#%d, one by one", names[op.kind], op.slot, op.slot + op.count - 1);
        break;
    case OP_ACQUIRE_MANY:
    case OP_RELEASE_MANY:
        if (op.count)
            snprintf(buf, sizeof buf, "%s of %d handles #%d..#%d (queue %d, an event)", names[op.kind], op.count,
                     op.slot, op.slot + op.count - 1, op.queue);
        else
            snprintf(buf, sizeof buf, "%s of no handles (queue %d, an event)", names[op.kind], op.queue);
        break;
    case OP_SEM_IMPORT:
    case OP_SEM_DROP:
        snprintf(buf, sizeof buf, "%s of semaphores #%d..#%d", names[op.kind], op.slot, op.slot + op.count - 1);
        break;
    case OP_RING_CREATE:
        snprintf(buf, sizeof buf, "%s (%d frames, batches of %d, queue %d)", names[op.kind], op.count, op.batch,
                 op.queue);
        break;
    case OP_VK_NEXT:
        snprintf(buf, sizeof buf, "%s%s", names[op.kind], op.flags & CLMEM_BRIDGE_RING_END_BATCH ? " (END_BATCH)" : "");
        break;
    case OP_BRIDGE_CREATE:
        snprintf(buf, sizeof buf, "%s (%s)", names[op.kind], op.slot ? "device found by UUID" : "device named");
        break;
    default: snprintf(buf, sizeof buf, "%s", names[op.kind]);
    }
    return buf;
}

/* Calls with a status to check when a fault fires inside them. */
static bool op_reports(enum op_kind k)
{
    return k != OP_DROP && k != OP_VK_DESTROY && k != OP_SEM_DROP && k != OP_BRIDGE_UNREF && k != OP_FINISH &&
           k != OP_VK_IMAGE_DESTROY && k != OP_DROP_PIECES && k != OP_RING_UNREF;
}

/* The test's own export of the Vulkan memory, for clmem_bridge_import_fd. */
static int export_fd(struct run *r, int slot)
{
    struct env *e = r->e;
    PFN_vkGetMemoryFdKHR get_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(e->vk.device, "vkGetMemoryFdKHR");
    VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                 .memory = r->o.memory.memory,
                                 .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;

    if (!get_fd || get_fd(e->vk.device, &info, &fd) != VK_SUCCESS || fstat(fd, &r->fd_stat[slot]) != 0)
        tap_bail("the test's own vkGetMemoryFdKHR failed");
    return fd;
}

/* Still open, and still the same file (not another that reused the number). */
static bool fd_is_callers(const struct run *r, int slot)
{
    struct stat st;
    return fstat(r->fd[slot], &st) == 0 && st.st_dev == r->fd_stat[slot].st_dev &&
           st.st_ino == r->fd_stat[slot].st_ino;
}

/* clmem_bridge_finish on the run's bridge, which must return CLMEM_OK.
 * Once one has failed (a stranded import), later ones only check, so that
 * a broken run does not wait out every timeout. */
static void finish(struct run *r, const char *when)
{
    clmem_status s;

    if (!r->b)
        return;
    if ((s = clmem_bridge_finish(r->b, r->finish_failed ? 0 : SETTLE_NS)) != CLMEM_OK) {
        problem(r, "clmem_bridge_finish %s returned %s: %s", when, clmem_status_name(s), clmem_error_message());
        r->finish_failed = true;
    }
}

/* The event a successful call gave: there must be one; waited for and
 * released, so that the next op starts on a quiet queue. */
static void event_done(struct run *r, cl_event ev, struct op op)
{
    cl_int err;

    if (!ev || ev == JUNK_EVENT) {
        problem(r, "%s returned CLMEM_OK but no event", op_name(op));
        return;
    }
    if ((err = clWaitForEvents(1, &ev)) != CL_SUCCESS)
        problem(r, "waiting for the event of %s failed: %d", op_name(op), err);
    clReleaseEvent(ev);
}

/* The batch ops keep the ring's semaphores in step from outside, which the
 * test does for host ordering only: there the ring's own submission waits
 * on every ready[s] the test signalled once vk_submitted succeeded, and
 * done[s] is never used. (A device-ordered run would need to know which
 * side consumed each signal after a failure.) */
static void need_host_ordering(const struct run *r, struct op op)
{
    if (r->seq->sem_mode != CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED)
        tap_bail("%s in \"%s\": the ring's batch ops are for host-ordered semaphores only", op_name(op),
                 r->seq->name);
}

static int sem_slot_of(const struct run *r, VkSemaphore vk_sem)
{
    for (int i = 0; i < r->vk_sem_count; i++)
        if (r->vk_sems[i] == vk_sem)
            return i;
    tap_bail("the ring handed out a semaphore the test never imported");
}

/* Vulkan's side of the frames handed out since the last call: one empty
 * submission with the waits and signals they carry (the test writes
 * nothing into them; the ring orders the handoff, not the data). Once per
 * frame: a retried vk_submitted does not signal again. */
static void ring_signal(struct run *r)
{
    VkSemaphore waits[RING_FRAMES], signals[RING_FRAMES];
    VkPipelineStageFlags stages[RING_FRAMES];
    uint32_t nwait = 0, nsignal = 0;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};

    for (int i = r->frames_signalled; i < r->frames_out; i++) {
        const clmem_bridge_ring_frame *f = &r->ring_frames[i];
        if (f->wait_semaphore) {
            stages[nwait] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            waits[nwait++] = f->wait_semaphore;
        }
        if (f->signal_semaphore) {
            r->sem_signalled[sem_slot_of(r, f->signal_semaphore)] = true;
            signals[nsignal++] = f->signal_semaphore;
        }
    }
    r->frames_signalled = r->frames_out;
    if (!nwait && !nsignal)
        return;
    si.waitSemaphoreCount = nwait;
    si.pWaitSemaphores = waits;
    si.pWaitDstStageMask = stages;
    si.signalSemaphoreCount = nsignal;
    si.pSignalSemaphores = signals;
    if (vkQueueSubmit(r->e->vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS)
        tap_bail("the test's own vkQueueSubmit of the frames' semaphores failed");
}

/* Waits on `n` semaphores, submitted and waited for (each had a signal). */
static void submit_waits(struct run *r, const VkSemaphore *sems, uint32_t n)
{
    VkPipelineStageFlags stages[NSEMS];
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .waitSemaphoreCount = n,
                       .pWaitSemaphores = sems,
                       .pWaitDstStageMask = stages};

    for (uint32_t i = 0; i < n; i++)
        stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    if (n && (vkQueueSubmit(r->e->vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS ||
              vkQueueWaitIdle(r->e->vk.queue) != VK_SUCCESS))
        tap_bail("the test's own wait on %u semaphores failed", n);
}

/* The ring goes (both sides stopped: OpenCL's queue finished, Vulkan's
 * idle, as the header asks); then a ready semaphore the test signalled
 * that no wait of the ring's consumed is waited on, so that the next call
 * finds every semaphore unsignalled. */
static void ring_drop(struct run *r)
{
    VkSemaphore pending[NSEMS];
    uint32_t n = 0;

    if (r->ring) {
        for (int i = 0; i < NQUEUES; i++)
            clFinish(r->e->queues[i]);
        vkQueueWaitIdle(r->e->vk.queue);
        clmem_bridge_ring_unref(r->ring);
        r->ring = NULL;
    }
    for (int i = 0; i < NSEMS; i++) {
        if (r->sem_signalled[i])
            pending[n++] = r->vk_sems[i];
        r->sem_signalled[i] = false;
    }
    submit_waits(r, pending, n);
    r->frames_out = r->frames_signalled = r->batches_taken = r->batches_done = 0;
}

static clmem_status do_op(struct run *r, struct op op)
{
    struct env *e = r->e;
    VkDeviceSize offset = op.range == SUB ? e->align : 0;
    VkDeviceSize size = op.range == SUB ? SUB_SIZE : r->o.memory.allocation_size;
    cl_command_queue queue = e->queues[op.queue];
    struct probe *p;
    clmem_status s;

    switch (op.kind) {
    case OP_END: break;
    case OP_IMPORT:
        p = probe_take(r);
        r->h[op.slot] = JUNK_HANDLE;
        s = clmem_bridge_import_vk(r->b, &r->o.memory, offset, size, r->seq->path, p->ka, queue, CL_MEM_READ_WRITE,
                                   &r->h[op.slot]);
        probe_after_import(r, p, s, r->h[op.slot]);
        return s;
    case OP_IMPORT_FD:
        if (r->fd[op.slot] < 0)
            r->fd[op.slot] = export_fd(r, op.slot);
        p = probe_take(r);
        r->h[op.slot] = JUNK_HANDLE;
        s = clmem_bridge_import_fd(r->b, r->fd[op.slot], CLMEM_BRIDGE_PATH_OPAQUE_FD, r->o.memory.allocation_size,
                                   offset, size, p->ka, queue, CL_MEM_READ_WRITE, &r->h[op.slot]);
        probe_after_import(r, p, s, r->h[op.slot]);
        if (s == CLMEM_OK)
            r->fd[op.slot] = -1; /* the import's now */
        return s;
    case OP_FOR_QUEUE:
        r->h[op.slot] = JUNK_HANDLE;
        return clmem_bridge_handle_for_queue(r->h[op.src], queue, &r->h[op.slot]);
    case OP_IMPORT_IMAGE:
        p = probe_take(r);
        r->h[op.slot] = JUNK_HANDLE;
        s = clmem_bridge_import_vk_image(r->b, &r->image, 0, r->seq->path, p->ka, queue, CL_MEM_READ_WRITE,
                                         op.flags, &r->h[op.slot]);
        probe_after_import(r, p, s, r->h[op.slot]);
        return s;
    case OP_ACQUIRE: return clmem_bridge_acquire(r->b, r->h[op.slot], 0, NULL, NULL);
    case OP_RELEASE: {
        cl_event done = NULL;
        cl_int err;
        s = clmem_bridge_release(r->b, r->h[op.slot], 0, NULL, &done);
        if (s == CLMEM_OK) {
            if ((err = clWaitForEvents(1, &done)) != CL_SUCCESS)
                problem(r, "waiting for the release's event failed: %d", err);
            clReleaseEvent(done);
        }
        return s;
    }
    case OP_DROP:
        clmem_handle_unref(r->h[op.slot]);
        r->h[op.slot] = NULL;
        return CLMEM_OK;
    case OP_FINISH:
        finish(r, "after the drops");
        return CLMEM_OK; /* judged there: a failed finish is a problem, never the row's status */
    case OP_VK_CREATE:
        r->vk_buffer = (VkBuffer)(uintptr_t)1;
        memset(&r->vk_memory, 0xa5, sizeof r->vk_memory);
        return clmem_bridge_vk_buffer_create(r->b, ALLOC_SIZE, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                             0, &r->vk_buffer, &r->vk_memory);
    case OP_VK_DESTROY:
        clmem_bridge_vk_buffer_destroy(r->b, r->vk_buffer, &r->vk_memory);
        r->vk_buffer = VK_NULL_HANDLE;
        memset(&r->vk_memory, 0, sizeof r->vk_memory);
        return CLMEM_OK;
    case OP_SEM_IMPORT:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            if (r->sems[i])
                continue; /* imported before the failure that is being retried */
            r->failed_slot = i;
            r->sems[i] = JUNK_SEMAPHORE;
            s = clmem_bridge_semaphore_import(r->b, e->vk.queue, r->vk_sems[i], r->seq->sem_mode, r->sem_ka,
                                              &r->sems[i]);
            if (s != CLMEM_OK)
                return s;
        }
        return CLMEM_OK;
    case OP_SEM_DROP:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            clmem_bridge_semaphore_unref(r->sems[i]);
            r->sems[i] = NULL;
        }
        return CLMEM_OK;
    case OP_BRIDGE_CREATE: {
        clmem_bridge_info info = {.size = sizeof info,
                                  .instance = e->vk.instance,
                                  .physical_device = e->vk.physical_device,
                                  .device = e->vk.device,
                                  .get_instance_proc_addr = op.slot ? e->vk.get_instance_proc_addr : NULL,
                                  .context = e->f.context,
                                  .cl_device = op.slot ? NULL : e->f.device,
                                  .flags = op.slot ? CLMEM_BRIDGE_NO_IMPORT_CACHE : 0};
        r->bridges[op.slot] = JUNK_BRIDGE;
        r->ctx_before_create = context_refs(e->f.context);
        return clmem_bridge_create(&info, &r->bridges[op.slot]);
    }
    case OP_BRIDGE_UNREF:
        clmem_bridge_unref(r->bridges[op.slot]);
        r->bridges[op.slot] = NULL;
        return CLMEM_OK;
    case OP_VK_IMAGE_CREATE:
        memset(&r->vk_image, 0xa5, sizeof r->vk_image);
        return clmem_bridge_vk_image_create(r->b, IMAGE_FORMAT, (VkExtent2D){IMAGE_W, IMAGE_H},
                                            VK_IMAGE_TILING_LINEAR, IMAGE_USAGE,
                                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                            0, &r->vk_image);
    case OP_VK_IMAGE_DESTROY:
        clmem_bridge_vk_image_destroy(r->b, &r->vk_image);
        memset(&r->vk_image, 0, sizeof r->vk_image);
        return CLMEM_OK;
    case OP_IMPORT_PIECES:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            if (r->h[i])
                continue; /* imported before the failure that is being retried */
            r->failed_slot = i;
            p = probe_take(r);
            r->h[i] = JUNK_HANDLE;
            s = clmem_bridge_import_vk(r->b, &r->o.memory, (VkDeviceSize)i * e->piece, e->piece, r->seq->path, p->ka,
                                       queue, CL_MEM_READ_WRITE, &r->h[i]);
            probe_after_import(r, p, s, r->h[i]);
            if (s != CLMEM_OK)
                return s;
        }
        return CLMEM_OK;
    case OP_DROP_PIECES:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            clmem_handle_unref(r->h[i]);
            r->h[i] = NULL;
            r->acquired_each[i] = false;
        }
        return CLMEM_OK;
    case OP_ACQUIRE_EACH:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            if (r->acquired_each[i])
                continue;
            r->failed_slot = i;
            if ((s = clmem_bridge_acquire(r->b, r->h[i], 0, NULL, NULL)) != CLMEM_OK)
                return s;
            r->acquired_each[i] = true;
        }
        return CLMEM_OK;
    case OP_ACQUIRE_MANY:
    case OP_RELEASE_MANY: {
        cl_event ev = JUNK_EVENT;
        clmem_handle *const *hs = &r->h[op.slot]; /* the array converts without a cast */
        s = op.kind == OP_ACQUIRE_MANY ? clmem_bridge_acquire_many(r->b, (cl_uint)op.count, hs, queue, 0, NULL, &ev)
                                       : clmem_bridge_release_many(r->b, (cl_uint)op.count, hs, queue, 0, NULL, &ev);
        if (s != CLMEM_OK) {
            r->event = ev; /* judged by check_failure */
            return s;
        }
        event_done(r, ev, op);
        for (int i = op.slot; op.kind == OP_RELEASE_MANY && i < op.slot + op.count; i++)
            r->acquired_each[i] = false;
        return CLMEM_OK;
    }
    case OP_RING_CREATE: {
        uint32_t depth = (uint32_t)(op.count / op.batch);
        clmem_bridge_ring_info info = {.size = sizeof info,
                                       .frame_count = (uint32_t)op.count,
                                       .batch_size = (uint32_t)op.batch,
                                       .frames = r->h,
                                       .ready = r->sems,
                                       .done = r->sems + depth,
                                       .queue = queue};
        if (op.count > NSLOTS || 2 * depth > NSEMS)
            tap_bail("%s: more frames or semaphores than a run holds", op_name(op));
        r->ring = JUNK_RING;
        s = clmem_bridge_ring_create(r->b, &info, &r->ring);
        if (s == CLMEM_OK)
            r->frames_out = r->frames_signalled = r->batches_taken = r->batches_done = 0;
        return s;
    }
    case OP_VK_NEXT:
        need_host_ordering(r, op);
        if (r->frames_out == RING_FRAMES)
            tap_bail("a ring sequence took more than %d frames; raise RING_FRAMES", RING_FRAMES);
        s = clmem_bridge_ring_vk_next(r->ring, op.flags, SETTLE_NS, &r->ring_frames[r->frames_out]);
        if (s == CLMEM_OK)
            r->frames_out++;
        return s;
    case OP_VK_SUBMITTED:
        need_host_ordering(r, op);
        if (!r->frames_out)
            tap_bail("%s before any vk_next", op_name(op));
        ring_signal(r);
        s = clmem_bridge_ring_vk_submitted(r->ring, &r->ring_frames[r->frames_out - 1]);
        if (s == CLMEM_OK) /* every batch reported is published: the ring's wait on its ready[s] is submitted */
            memset(r->sem_signalled, 0, sizeof r->sem_signalled);
        return s;
    case OP_CL_NEXT: {
        cl_event ev = JUNK_EVENT;
        need_host_ordering(r, op);
        s = clmem_bridge_ring_cl_next(r->ring, SETTLE_NS, 0, NULL, &r->batches[r->batches_taken], &ev);
        if (s != CLMEM_OK) {
            r->event = ev;
            return s;
        }
        r->batches_taken++;
        event_done(r, ev, op);
        return CLMEM_OK;
    }
    case OP_CL_DONE: {
        cl_event ev = JUNK_EVENT;
        need_host_ordering(r, op);
        if (r->batches_done == r->batches_taken)
            tap_bail("%s with no batch taken", op_name(op));
        s = clmem_bridge_ring_cl_done(r->ring, &r->batches[r->batches_done], 0, NULL, &ev);
        if (s != CLMEM_OK) {
            r->event = ev;
            return s;
        }
        r->batches_done++;
        event_done(r, ev, op);
        return CLMEM_OK;
    }
    case OP_VK_DRAIN: {
        VkSemaphore waits[NSEMS];
        uint32_t n = 0;
        need_host_ordering(r, op);
        s = clmem_bridge_ring_vk_drain(r->ring, SETTLE_NS, NSEMS, waits, &n);
        if (s == CLMEM_OK && n != 0) {
            problem(r, "vk_drain of a host-ordered ring gave %u semaphores to wait on, want none", n);
            submit_waits(r, waits, n < NSEMS ? n : NSEMS);
        }
        return s;
    }
    case OP_RING_UNREF:
        ring_drop(r);
        return CLMEM_OK;
    }
    return CLMEM_OK;
}

/* The failing call's report, against the row. Read right after the call:
 * the error record is only good until the next clmem call. */
static void check_failure(struct run *r, struct op op, clmem_status s)
{
    const struct fault_case *c = r->c;
    /* A system call (the fd duplicate) reports errno; allocations, none. */
    bool system_call = c->call && strncmp(c->call, "fcntl", 5) == 0;
    clmem_api want_api = system_call                     ? CLMEM_API_SYSTEM
                         : c->want == CLMEM_ERR_OPENCL   ? CLMEM_API_OPENCL
                         : c->want == CLMEM_ERR_VULKAN   ? CLMEM_API_VULKAN
                                                         : CLMEM_API_NONE;
    const char *call = clmem_error_call();
    int32_t code = clmem_error_native_code();
    /* Right after the call, before anything else can touch the context. */
    cl_uint ctx_refs = context_refs(r->e->f.context);

    snprintf(r->report, sizeof r->report, "%s -> %s, %s, code %d", op_name(op), clmem_status_name(s),
             call ? call : "no call", (int)code);
    if (c->want == CLMEM_OK)
        problem(r, "%s failed with %s (%s), but this point is reached only by teardowns, which have no status to "
                   "report",
                op_name(op), clmem_status_name(s), clmem_error_message());
    else if (s != c->want)
        problem(r, "%s returned %s, want %s (%s)", op_name(op), clmem_status_name(s), clmem_status_name(c->want),
                clmem_error_message());
    if (clmem_error_status() != s)
        problem(r, "the error record says %s, the call returned %s", clmem_status_name(clmem_error_status()),
                clmem_status_name(s));
    if (c->want != CLMEM_OK && clmem_error_api() != want_api)
        problem(r, "clmem_error_api() is %d, want %d", (int)clmem_error_api(), (int)want_api);
    if (c->want != CLMEM_OK && (c->call ? !call || strcmp(call, c->call) != 0 : call != NULL))
        problem(r, "clmem_error_call() is %s, want %s", call ? call : "NULL", c->call ? c->call : "NULL");
    if (want_api != CLMEM_API_NONE && code == 0)
        problem(r, "the native code is 0 for a failed native call");
    switch (op.kind) {
    case OP_IMPORT:
    case OP_IMPORT_FD:
    case OP_IMPORT_IMAGE:
    case OP_FOR_QUEUE:
        if (r->h[op.slot] != NULL) {
            problem(r, "*out is %p after the failed %s, want NULL", (void *)r->h[op.slot], op_name(op));
            if (r->h[op.slot] == JUNK_HANDLE)
                r->h[op.slot] = NULL;
        }
        if (op.kind == OP_IMPORT_FD && !fd_is_callers(r, op.slot)) {
            problem(r, "the caller's fd %d was closed by the failed import_fd (clmem-bridge.h: \"On any error "
                       "the fd is still the caller's, open and untouched\")",
                    r->fd[op.slot]);
            r->fd[op.slot] = -1; /* not ours to close any more */
        }
        break;
    case OP_VK_CREATE:
        if (r->vk_buffer != VK_NULL_HANDLE || r->vk_memory.memory != VK_NULL_HANDLE || r->vk_memory.device != NULL)
            problem(r, "vk_buffer_create left its outputs set after failing");
        break;
    case OP_VK_IMAGE_CREATE: {
        static const clmem_bridge_vk_image zero;
        if (memcmp(&r->vk_image, &zero, sizeof zero) != 0) {
            problem(r, "vk_image_create left *image_out not zeroed after failing (clmem-bridge.h: \"On error "
                       "*image_out is zeroed\")");
            memset(&r->vk_image, 0, sizeof r->vk_image); /* what it holds is not known to be real: leave it */
        }
        break;
    }
    case OP_SEM_IMPORT:
        if (r->sems[r->failed_slot] != NULL) {
            problem(r, "*out is %p after the failed import of semaphore #%d, want NULL",
                    (void *)r->sems[r->failed_slot], r->failed_slot);
            if (r->sems[r->failed_slot] == JUNK_SEMAPHORE)
                r->sems[r->failed_slot] = NULL;
        }
        break;
    case OP_IMPORT_PIECES:
        snprintf(r->report + strlen(r->report), sizeof r->report - strlen(r->report), " (piece #%d)",
                 r->failed_slot);
        if (r->h[r->failed_slot] != NULL) {
            problem(r, "*out is %p after the failed import of piece #%d, want NULL", (void *)r->h[r->failed_slot],
                    r->failed_slot);
            if (r->h[r->failed_slot] == JUNK_HANDLE)
                r->h[r->failed_slot] = NULL;
        }
        break;
    case OP_ACQUIRE_EACH:
        snprintf(r->report + strlen(r->report), sizeof r->report - strlen(r->report), " (#%d)", r->failed_slot);
        break;
    case OP_ACQUIRE_MANY:
    case OP_RELEASE_MANY:
    case OP_CL_NEXT:
    case OP_CL_DONE:
        /* "*event_out (if not NULL) gets an event": none after a failure. */
        if (r->event != NULL) {
            problem(r, "*event_out is %p after the failed %s, want NULL", (void *)r->event, op_name(op));
            if (r->event != JUNK_EVENT)
                clReleaseEvent(r->event);
        }
        r->event = NULL;
        break;
    case OP_RING_CREATE:
        if (r->ring != NULL) {
            problem(r, "*out is %p after the failed ring_create, want NULL", (void *)r->ring);
            if (r->ring == JUNK_RING)
                r->ring = NULL;
        }
        break;
    case OP_BRIDGE_CREATE:
        if (r->bridges[op.slot] != NULL) {
            problem(r, "*out is %p after the failed bridge_create, want NULL", (void *)r->bridges[op.slot]);
            if (r->bridges[op.slot] == JUNK_BRIDGE)
                r->bridges[op.slot] = NULL;
        }
        /* "On error *out is NULL and nothing is retained": at once, not
         * eventually. */
        if (ctx_refs != r->ctx_before_create)
            problem(r, "the context has %u references right after the failed bridge_create, %u right before (the "
                       "failed creation retained it)",
                    ctx_refs, r->ctx_before_create);
        break;
    default: break;
    }
}

/* The sequence's steps. Returns the passes through the row's point (for
 * the dry run). A fault that fires in a step with no status (a drop: the
 * teardown has no one to report to) is judged by what follows: the
 * finish, and the leak checks. */
static int run_steps(struct run *r, int nth, enum mode mode)
{
    const struct op *ops = r->seq->ops;
    bool fired_any = false;
    int passes;

    clmem_fault_reset();
    if (nth > 0)
        clmem_fault_arm(r->c->point, nth);
    for (int i = 0; ops[i].kind != OP_END; i++) {
        int fired_before = clmem_fault_fired();
        clmem_status s;

        clmem_error_clear();
        s = do_op(r, ops[i]);
        if (clmem_fault_fired() == fired_before) {
            if (s != CLMEM_OK) {
                problem(r, "%s failed with no fault fired: %s", op_name(ops[i]), clmem_error_message());
                break;
            }
            continue;
        }
        fired_any = true;
        if (!op_reports(ops[i].kind)) {
            snprintf(r->report, sizeof r->report, "%s (no status) failed inside", op_name(ops[i]));
            clmem_fault_reset();
            continue;
        }
        if (s == CLMEM_OK) {
            problem(r, "the fault fired inside %s but it returned CLMEM_OK", op_name(ops[i]));
            clmem_fault_reset();
            continue;
        }
        check_failure(r, ops[i], s);
        clmem_fault_reset(); /* disarm: everything after this must work */
        if (mode == MODE_DROP)
            break;
        if ((s = do_op(r, ops[i])) != CLMEM_OK) {
            problem(r, "retrying %s failed: %s", op_name(ops[i]), clmem_error_message());
            break;
        }
    }
    passes = clmem_fault_passes(r->c->point);
    if (nth > 0 && !fired_any)
        problem(r, "pass %d through %s was never reached", nth, r->c->point);
    clmem_fault_reset();
    return passes;
}

/* Let go of whatever a run still holds (after DROP stopped it early), and
 * finish the bridge: every teardown done, or the run lost something. */
static void drop_all(struct run *r)
{
    ring_drop(r); /* first: it holds references on the frames and the semaphores */
    for (int i = 0; i < NSLOTS; i++) {
        clmem_handle_unref(r->h[i]);
        r->h[i] = NULL;
        r->acquired_each[i] = false;
        if (r->fd[i] >= 0)
            close(r->fd[i]);
        r->fd[i] = -1;
    }
    if (r->vk_buffer || r->vk_memory.memory)
        clmem_bridge_vk_buffer_destroy(r->b, r->vk_buffer, &r->vk_memory);
    r->vk_buffer = VK_NULL_HANDLE;
    memset(&r->vk_memory, 0, sizeof r->vk_memory);
    if (r->vk_image.image || r->vk_image.memory.memory)
        clmem_bridge_vk_image_destroy(r->b, &r->vk_image);
    memset(&r->vk_image, 0, sizeof r->vk_image);
    for (int i = 0; i < NSEMS; i++) {
        clmem_bridge_semaphore_unref(r->sems[i]);
        r->sems[i] = NULL;
    }
    for (int i = 0; i < 2; i++) {
        clmem_bridge_unref(r->bridges[i]);
        r->bridges[i] = NULL;
    }
    finish(r, "after everything was dropped");
}

/* After a DROP: the whole sequence once more, all of it good. */
static void next_call(struct run *r)
{
    char saved[sizeof r->report];
    size_t before = strlen(r->problems);

    memcpy(saved, r->report, sizeof saved);
    run_steps(r, 0, MODE_DRY);
    memcpy(r->report, saved, sizeof saved);
    if (strlen(r->problems) != before)
        problem(r, "(the above in the next call, after the failure)");
    drop_all(r);
}

static bool uses_image(const struct sequence *seq)
{
    return seq->ops[0].kind == OP_IMPORT_IMAGE;
}

static bool uses_memory(const struct sequence *seq)
{
    return seq->ops[0].kind == OP_IMPORT || seq->ops[0].kind == OP_IMPORT_FD || seq->ops[0].kind == OP_IMPORT_PIECES ||
           uses_image(seq);
}

/* The semaphores a sequence imports: one past the highest slot. */
static int semaphores_used(const struct sequence *seq)
{
    int n = 0;
    for (int i = 0; seq->ops[i].kind != OP_END; i++)
        if (seq->ops[i].kind == OP_SEM_IMPORT && seq->ops[i].slot + seq->ops[i].count > n)
            n = seq->ops[i].slot + seq->ops[i].count;
    if (n > NSEMS)
        tap_bail("\"%s\" imports %d semaphores; raise NSEMS", seq->name, n);
    return n;
}

/* The image sequences' VkImage: IMAGE_FORMAT (or `format`) with the
 * sequence's tiling, exportable for its path, in memory of the path's
 * properties where Vulkan has such a type for it, else any (a CPU device
 * has no device-local type; the live check falls back the same way). */
static clmem_status image_make(struct env *e, clmem_bridge *b, clmem_bridge_path path, bool optimal, VkFormat format,
                               clmem_bridge_vk_image *out)
{
    VkImageTiling tiling = optimal ? VK_IMAGE_TILING_OPTIMAL : VK_IMAGE_TILING_LINEAR;
    clmem_status s = clmem_bridge_vk_image_create(b, format, (VkExtent2D){IMAGE_W, IMAGE_H}, tiling, IMAGE_USAGE,
                                                  path_memory_props(path), path_export_types(&e->vk, path), out);
    if (s == CLMEM_ERR_UNSUPPORTED && path != CLMEM_BRIDGE_PATH_HOST_MAPPED)
        s = clmem_bridge_vk_image_create(b, format, (VkExtent2D){IMAGE_W, IMAGE_H}, tiling, IMAGE_USAGE, 0,
                                         path_export_types(&e->vk, path), out);
    return s;
}

/* The caller's anchor on the image: its release frees the image and its
 * memory, as an application's would, and drops its bridge reference. May
 * run on a driver thread or inside clmem_bridge_finish. */
static void image_owned_release(void *user)
{
    struct run *r = user;
    clmem_bridge *b = r->o.bridge;

    clmem_bridge_vk_image_destroy(b, &r->image);
    r->o.bridge = NULL;
    atomic_fetch_add(&r->o.released, 1);
    clmem_bridge_unref(b);
}

/* The live check an optimal-tiling import needs, on the run's bridge, and
 * its own import finished, so that nothing of it runs inside the sequence. */
static void image_live_check(struct env *e, clmem_bridge *b)
{
    clmem_status s = clmem_bridge_image_live_check(b, e->optimal_format, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk.queue,
                                                   e->vk.queue_family, e->f.queue);
    if (s != CLMEM_OK)
        tap_bail("the live check of optimal-tiling %s passed on the first bridge but returned %s on a run's: %s",
                 clmem_bridge_image_format_name(e->optimal_format), clmem_status_name(s), clmem_error_message());
    if ((s = clmem_bridge_finish(b, SETTLE_NS)) != CLMEM_OK)
        tap_bail("clmem_bridge_finish after the live check returned %s: %s", clmem_status_name(s),
                 clmem_error_message());
}

static clmem_keepalive *image_owned_new(struct run *r)
{
    struct env *e = r->e;
    clmem_keepalive *ka;
    clmem_status s;

    memset(&r->o, 0, sizeof r->o);
    r->o.vk = &e->vk;
    atomic_init(&r->o.released, 0);
    if (seq_optimal(r->seq))
        image_live_check(e, r->b);
    s = image_make(e, r->b, r->seq->path, seq_optimal(r->seq), seq_optimal(r->seq) ? e->optimal_format : IMAGE_FORMAT,
                   &r->image);
    if (s != CLMEM_OK)
        tap_bail("clmem_bridge_vk_image_create for %s failed: %s", r->seq->name, clmem_error_message());
    r->o.memory = r->image.memory; /* for the checks on the memory */
    r->o.bridge = clmem_bridge_ref(r->b);
    if (!(ka = clmem_keepalive_new(image_owned_release, r)))
        tap_bail("clmem_keepalive_new failed");
    return ka;
}

/* A run's resources, made with nothing armed: fresh Vulkan memory, the
 * caller's anchor on it and the probes for the imports; a VkSemaphore and
 * a counting anchor for the semaphores. */
static void run_begin(struct run *r, struct env *e, const struct fault_case *c)
{
    memset(r, 0, sizeof *r);
    r->e = e;
    r->c = c;
    r->seq = c->seq;
    for (int i = 0; i < NSLOTS; i++)
        r->fd[i] = -1;
    atomic_init(&r->sem_releases, 0);
    if (r->seq->ops[0].kind != OP_BRIDGE_CREATE)
        r->b = bridge_open(&e->vk, &e->f, 0);
    if (uses_memory(r->seq)) {
        r->ka = uses_image(r->seq) ? image_owned_new(r)
                                   : vk_owned_new(&r->o, r->b, &e->vk, ALLOC_SIZE, path_memory_props(r->seq->path),
                                                  path_export_types(&e->vk, r->seq->path));
        for (int i = 0; i < NPROBES; i++) {
            struct probe *p = &r->probes[i];
            p->r = r;
            atomic_init(&p->released, 0);
            atomic_init(&p->destroyed, 0);
            atomic_init(&p->destroyed_at_release, 0);
            p->ka = clmem_keepalive_new(probe_release, p);
            if (!p->ka)
                tap_bail("clmem_keepalive_new failed");
            clmem_keepalive_ref(r->ka); /* the probe's, dropped by its release */
        }
    }
    if ((r->vk_sem_count = semaphores_used(r->seq)) > 0) {
        VkExportSemaphoreCreateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                          .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
        VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                    .pNext = r->seq->sem_mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD ? &ex : NULL};
        for (int i = 0; i < r->vk_sem_count; i++)
            if (vkCreateSemaphore(e->vk.device, &ci, NULL, &r->vk_sems[i]) != VK_SUCCESS)
                tap_bail("vkCreateSemaphore failed");
        /* One anchor for all of them: it runs its release once the last
         * semaphore (and the ring) let go of it, and the caller did. */
        r->sem_ka = clmem_keepalive_new(count_release, &r->sem_releases);
        if (!r->sem_ka)
            tap_bail("clmem_keepalive_new failed");
    }
}

/* After the steps and drop_all (which finished the bridge): the bridge must
 * have let go of everything it took from the caller. */
static void run_end(struct run *r)
{
    struct env *e = r->e;
    int released = 0, probes_wrong = 0;

    /* The mapping the imports shared is gone: Vulkan lets us map it again
     * (the validation layer reports mapping memory that is mapped). */
    if (uses_memory(r->seq) && r->seq->path == CLMEM_BRIDGE_PATH_HOST_MAPPED) {
        void *p = NULL;
        VkResult vr = vkMapMemory(e->vk.device, r->o.memory.memory, 0, VK_WHOLE_SIZE, 0, &p);
        if (vr != VK_SUCCESS)
            problem(r, "mapping the memory after the bridge let go failed: %d", vr);
        else
            vkUnmapMemory(e->vk.device, r->o.memory.memory);
    }
    if (uses_memory(r->seq)) {
        /* Every import call's keepalive: released exactly once by now (the
         * bridge finished), and only after OpenCL destroyed the cl_mem. */
        for (int i = 0; i < r->probes_used; i++) {
            struct probe *p = &r->probes[i];
            int n = atomic_load(&p->released);
            if (n != 1) {
                if (!probes_wrong++)
                    problem(r, "import call %d's keepalive ran its release %d times after clmem_bridge_finish "
                               "returned, want once",
                            i + 1, n);
            } else if (p->watched && atomic_load(&p->destroyed_at_release) == 0) {
                if (!probes_wrong++)
                    problem(r, "import call %d's keepalive was released before OpenCL destroyed its cl_mem", i + 1);
            }
        }
        /* The probes no call took: the caller's reference is the only one. */
        for (int i = r->probes_used; i < NPROBES; i++) {
            clmem_keepalive_unref(r->probes[i].ka);
            r->probes[i].ka = NULL;
        }
    }
    /* The caller lets go: its anchor must run its release now, once: the
     * bridge finished, so no import holds it any more. */
    if (r->ka) {
        clmem_keepalive_unref(r->ka);
        r->ka = NULL;
        released = atomic_load(&r->o.released);
        if (released != 1)
            problem(r, "the caller's anchor on the memory ran its release %d times when the caller let go after "
                       "clmem_bridge_finish, want once",
                    released);
        if (released == 0 || probes_wrong)
            stranded++;
    }
    /* The same for the semaphores' anchor: every semaphore was dropped, and
     * no ring (nor a failed ring creation) kept a reference on one. */
    if (r->sem_ka) {
        clmem_keepalive_unref(r->sem_ka);
        r->sem_ka = NULL;
        released = atomic_load(&r->sem_releases);
        if (released != 1)
            problem(r, "the caller's anchor on the semaphores ran its release %d times when the caller let go "
                       "after clmem_bridge_finish, want once (a semaphore, or a ring holding one, is still alive)",
                    released);
        if (released == 0)
            stranded++;
        vkQueueWaitIdle(e->vk.queue);
        for (int i = 0; i < r->vk_sem_count; i++)
            vkDestroySemaphore(e->vk.device, r->vk_sems[i], NULL);
    }
    /* The test's reference; the Vulkan anchor's release dropped its own.
     * What a stranded import holds stays held. */
    clmem_bridge_unref(r->b);
    r->b = NULL;
}

/* One run: set up (nothing armed), the steps, cleanup, the leak checks, one
 * TAP point. Returns the passes through the point (for the dry run). */
static int run_case(struct env *e, const struct fault_case *c, int nth, int passes, enum mode mode)
{
    static struct run r; /* large */
    unsigned validation_before = vkctx_validation_errors();
    int count;

    run_begin(&r, e, c);
    count = run_steps(&r, nth, mode);
    drop_all(&r);
    if (mode == MODE_DROP)
        next_call(&r);
    run_end(&r);

    if (fd_count() != e->fds) {
        char extra[512];
        list_fds(extra, sizeof extra, baseline_fds);
        problem(&r, "%d fds open, %d before (new:%s)", fd_count(), e->fds, extra);
    }
    if (refs_settle(e) < 0) {
        char queues[128] = "";
        size_t used = 0;
        for (int i = 0; i < NQUEUES; i++)
            used += (size_t)snprintf(queues + used, sizeof queues - used, " %u (%u before)",
                                     cl_queue_refcount(e->queues[i]), e->queue_refs[i]);
        problem(&r, "the context's reference count is %u (%u before), the queues'%s, two seconds on",
                context_refs(e->f.context), e->context_refs, queues);
        /* What this run leaked stays leaked: judge the next runs on their own. */
        e->context_refs = context_refs(e->f.context);
        for (int i = 0; i < NQUEUES; i++)
            e->queue_refs[i] = cl_queue_refcount(e->queues[i]);
    }
    if (vkctx_validation_errors() != validation_before)
        problem(&r, "%u new validation errors", vkctx_validation_errors() - validation_before);

    if (mode == MODE_DRY)
        tap_ok(count > 0 && !r.problems[0], "%s, %s: reached %d time(s) with nothing armed%s%s", c->point,
               c->seq->name, count, r.problems[0] ? ": " : "", r.problems);
    else
        tap_ok(!r.problems[0], "%s pass %d/%d, %s: %s%s%s", c->point, nth, passes, mode_names[mode],
               r.report[0] ? r.report : "(no report)", r.problems[0] ? " | " : "; nothing lost", r.problems);
    return count;
}

/* One good run of a row's sequence, twice (as a DROP run's next call does),
 * no TAP point. */
static void warm_up(struct env *e, const struct fault_case *c)
{
    static struct run r; /* large */

    run_begin(&r, e, c);
    run_steps(&r, 0, MODE_DRY);
    drop_all(&r);
    next_call(&r);
    run_end(&r);
    if (r.problems[0])
        tap_bail("the warm-up run of %s failed: %s", c->seq->name, r.problems);
}

/* One import of plane 0 (as image_flags asks) of an image made as the
 * image sequences make theirs, on b; dropped and finished. CLMEM_OK, or
 * the failing call's status, with its message in why. */
static clmem_status image_trial(struct env *e, clmem_bridge *b, clmem_bridge_path path, bool optimal, VkFormat format,
                                uint32_t image_flags, char *why, size_t why_len)
{
    clmem_bridge_vk_image image;
    clmem_handle *h = NULL;
    clmem_keepalive *ka;
    atomic_int released;
    clmem_status s = image_make(e, b, path, optimal, format, &image);

    if (s != CLMEM_OK) {
        snprintf(why, why_len, "clmem_bridge_vk_image_create: %s", clmem_error_message());
        return s;
    }
    atomic_init(&released, 0);
    if (!(ka = clmem_keepalive_new(count_release, &released)))
        tap_bail("clmem_keepalive_new failed");
    s = clmem_bridge_import_vk_image(b, &image, 0, path, ka, e->f.queue, CL_MEM_READ_WRITE, image_flags, &h);
    if (s != CLMEM_OK)
        snprintf(why, why_len, "clmem_bridge_import_vk_image: %s", clmem_error_message());
    clmem_keepalive_unref(ka);
    clmem_handle_unref(h);
    if (clmem_bridge_finish(b, SETTLE_NS) != CLMEM_OK || atomic_load(&released) != 1)
        tap_bail("a trial image import on the first bridge was not let go: %s", clmem_error_message());
    clmem_bridge_vk_image_destroy(b, &image);
    return s;
}

/* A need met by a trial import: met on CLMEM_OK; not met, with the
 * bridge's reason, on CLMEM_ERR_UNSUPPORTED (not offered here). Any other
 * status is a failure of its own, not a missing capability: a TAP point
 * that fails. */
static void need_from_trial(struct env *e, enum needs need, clmem_status s, const char *what, const char *why)
{
    e->have[need] = s == CLMEM_OK;
    snprintf(e->why_not[need], sizeof e->why_not[0], "%s: %s", what, why);
    if (s != CLMEM_OK && s != CLMEM_ERR_UNSUPPORTED) {
        tap_ok(false, "a trial import for \"%s\" failed with %s, not a missing capability: %s", what,
               clmem_status_name(s), why);
        snprintf(e->why_not[need], sizeof e->why_not[0], "%s: the trial import failed (the point above)", what);
    }
}

/* NEEDS_LINEAR_IMAGE: a linear image in host-visible memory, its plane
 * buffer on the host-mapped path. */
static void check_linear_image(struct env *e, clmem_bridge *b)
{
    char why[512] = "", label[256];
    clmem_status s = image_trial(e, b, CLMEM_BRIDGE_PATH_HOST_MAPPED, false, IMAGE_FORMAT, 0, why, sizeof why);

    snprintf(label, sizeof label, "a %ux%u linear %s image's plane buffer on the host-mapped path", IMAGE_W, IMAGE_H,
             clmem_bridge_image_format_name(IMAGE_FORMAT));
    need_from_trial(e, NEEDS_LINEAR_IMAGE, s, label, why);
}

/* NEEDS_IMAGE_VIEW(_OPAQUE_FD): the path, the capability, then a view of
 * the image the sequence makes (the device's pitch and address rules
 * depend on it). */
static void check_image_view(struct env *e, clmem_bridge *b, enum needs need, clmem_bridge_path path)
{
    const char *what = path == CLMEM_BRIDGE_PATH_HOST_MAPPED ? "host-mapped" : "opaque-fd";
    bool view = (clmem_bridge_caps(b) & CLMEM_BRIDGE_CAP_IMAGE_VIEW) != 0;
    char why[512] = "", label[256];
    clmem_status s;

    if (need == NEEDS_IMAGE_VIEW_OPAQUE_FD && !e->have[NEEDS_OPAQUE_FD]) {
        snprintf(e->why_not[need], sizeof e->why_not[0], "image views on the opaque-fd path (%s): %.600s",
                 view ? "CLMEM_BRIDGE_CAP_OPAQUE_FD" : "CLMEM_BRIDGE_CAP_OPAQUE_FD and CLMEM_BRIDGE_CAP_IMAGE_VIEW",
                 e->why_not[NEEDS_OPAQUE_FD]);
        return;
    }
    if (!view) {
        s = clmem_bridge_check_image(b, IMAGE_FORMAT, VK_IMAGE_TILING_LINEAR, path, CL_MEM_READ_WRITE, AS_IMAGE);
        snprintf(e->why_not[need], sizeof e->why_not[0], "image views (CLMEM_BRIDGE_CAP_IMAGE_VIEW): %s",
                 s != CLMEM_OK ? clmem_error_message() : "the bridge does not report the capability");
        return;
    }
    s = image_trial(e, b, path, false, IMAGE_FORMAT, AS_IMAGE, why, sizeof why);
    snprintf(label, sizeof label,
             "image views (CLMEM_BRIDGE_CAP_IMAGE_VIEW is set, but not of a %ux%u %s linear image on the %s path)",
             IMAGE_W, IMAGE_H, clmem_bridge_image_format_name(IMAGE_FORMAT), what);
    need_from_trial(e, need, s, label, why);
}

/* NEEDS_OPTIMAL_IMAGE: the opaque-fd path, and the first format of the
 * bridge's list whose optimal-tiling live check passes (then one import). */
static void check_optimal_image(struct env *e, clmem_bridge *b)
{
    char last[512] = "no format offers optimal tiling", why[512], label[256];
    uint32_t n = 0;
    const VkFormat *formats = clmem_bridge_image_formats(&n);
    clmem_status s;

    if (!e->have[NEEDS_OPAQUE_FD]) {
        snprintf(e->why_not[NEEDS_OPTIMAL_IMAGE], sizeof e->why_not[0],
                 "optimal-tiling images (CLMEM_BRIDGE_CAP_OPAQUE_FD, then clmem_bridge_image_live_check): %.600s",
                 e->why_not[NEEDS_OPAQUE_FD]);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        s = clmem_bridge_image_live_check(b, formats[i], CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk.queue,
                                          e->vk.queue_family, e->f.queue);
        if (s == CLMEM_OK) {
            e->optimal_format = formats[i];
            break;
        }
        if (s != CLMEM_ERR_UNSUPPORTED) /* not an answer: the check could not be set up */
            tap_ok(false, "the optimal-tiling live check of %s on the first bridge could be set up: %s %s",
                   clmem_bridge_image_format_name(formats[i]), clmem_status_name(s), clmem_error_message());
        snprintf(last, sizeof last, "%s: %s", clmem_bridge_image_format_name(formats[i]), clmem_error_message());
    }
    if (!e->optimal_format) {
        snprintf(e->why_not[NEEDS_OPTIMAL_IMAGE], sizeof e->why_not[0],
                 "optimal-tiling images: no format passed clmem_bridge_image_live_check on the opaque-fd path "
                 "(last: %s)",
                 last);
        return;
    }
    if ((s = clmem_bridge_finish(b, SETTLE_NS)) != CLMEM_OK)
        tap_bail("clmem_bridge_finish after the live checks returned %s: %s", clmem_status_name(s),
                 clmem_error_message());
    s = image_trial(e, b, CLMEM_BRIDGE_PATH_OPAQUE_FD, true, e->optimal_format, AS_IMAGE, why, sizeof why);
    snprintf(label, sizeof label, "optimal-tiling images (the live check of %s passed, but not for a %ux%u one)",
             clmem_bridge_image_format_name(e->optimal_format), IMAGE_W, IMAGE_H);
    need_from_trial(e, NEEDS_OPTIMAL_IMAGE, s, label, why);
}

/* Whether the machine can run a sequence's path at all. */
static void check_needs(struct env *e)
{
    clmem_bridge *b = bridge_open(&e->vk, &e->f, 0);
    clmem_status s;

    e->have[NEEDS_NOTHING] = true;
    s = clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_OPAQUE_FD);
    e->have[NEEDS_OPAQUE_FD] = s == CLMEM_OK && e->vk.has_memory_fd;
    snprintf(e->why_not[NEEDS_OPAQUE_FD], sizeof e->why_not[0], "opaque fd: %s",
             s != CLMEM_OK ? clmem_error_message() : "VK_KHR_external_memory_fd is not enabled");
    s = clmem_bridge_check_semaphore(b, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD);
    e->have[NEEDS_SEMAPHORE_OPAQUE_FD] = s == CLMEM_OK && e->vk.has_semaphore_fd;
    snprintf(e->why_not[NEEDS_SEMAPHORE_OPAQUE_FD], sizeof e->why_not[0], "opaque-fd semaphores: %s",
             s != CLMEM_OK ? clmem_error_message() : "VK_KHR_external_semaphore_fd is not enabled");
    check_linear_image(e, b);
    check_image_view(e, b, NEEDS_IMAGE_VIEW, CLMEM_BRIDGE_PATH_HOST_MAPPED);
    check_image_view(e, b, NEEDS_IMAGE_VIEW_OPAQUE_FD, CLMEM_BRIDGE_PATH_OPAQUE_FD);
    check_optimal_image(e, b);
    clmem_bridge_unref(b);
}

/* ----------------------------------------------------- the point list */

#define SOURCE_POINTS_MAX 128
static char *source_points[SOURCE_POINTS_MAX];
static char source_where[SOURCE_POINTS_MAX][64];
static int source_point_count;

/* Every FAULT("...") in dir's *.c files, deduplicated, into source_points.
 * False (with why) when the directory cannot be read. */
static bool scan_sources(const char *dir, char *why, size_t len)
{
    char path[4096];
    DIR *d;
    struct dirent *de;

    snprintf(path, sizeof path, "%s/%s", CLMEM_TOP_SRCDIR, dir);
    if (!(d = opendir(path))) {
        snprintf(why, len, "cannot read %.400s", path);
        return false;
    }
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        FILE *fp;
        char *text, *p;
        long size;

        if (n < 3 || strcmp(de->d_name + n - 2, ".c") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s/%s", CLMEM_TOP_SRCDIR, dir, de->d_name);
        if (!(fp = fopen(path, "rb")))
            continue;
        fseek(fp, 0, SEEK_END);
        size = ftell(fp);
        rewind(fp);
        text = calloc(1, (size_t)(size > 0 ? size : 0) + 1);
        if (text && size > 0 && fread(text, 1, (size_t)size, fp) != (size_t)size)
            text[0] = '\0';
        fclose(fp);
        for (p = text; p && (p = strstr(p, "FAULT(\"")); p++) {
            char *start = p + 7, *end = strchr(start, '"');
            bool known = false;
            if (!end)
                break;
            for (int i = 0; i < source_point_count && !known; i++)
                known = strlen(source_points[i]) == (size_t)(end - start) &&
                        strncmp(source_points[i], start, (size_t)(end - start)) == 0;
            if (!known && source_point_count < SOURCE_POINTS_MAX) {
                source_points[source_point_count] = strndup(start, (size_t)(end - start));
                snprintf(source_where[source_point_count], sizeof source_where[0], "%s/%s", dir, de->d_name);
                source_point_count++;
            }
        }
        free(text);
    }
    closedir(d);
    return true;
}

static bool has_row(const char *point)
{
    for (int i = 0; i < NCASES; i++)
        if (strcmp(cases[i].point, point) == 0)
            return true;
    return false;
}

/* Before the runs: the rows and the sources name the same points. */
static void check_point_list(void)
{
    char why[4096] = "", missing[2048] = "", stale[2048] = "";
    size_t used = 0;
    bool readable = scan_sources("bridge", why, sizeof why) && scan_sources("lib", why, sizeof why);

    if (!readable || source_point_count == 0) {
        tap_ok(false, "the library's sources list their FAULT() points: %s", readable ? "none found" : why);
        return;
    }
    for (int i = 0; i < source_point_count; i++)
        if (!has_row(source_points[i]) && used + 80 < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used, " %s (%s)", source_points[i],
                                     source_where[i]);
    tap_ok(!missing[0], "every FAULT() point of bridge/*.c and lib/*.c (%d) has a row in cases%s%s",
           source_point_count, missing[0] ? "; none for:" : "", missing);
    used = 0;
    for (int i = 0; i < NCASES; i++) {
        bool found = false, listed = false;
        for (int j = 0; j < source_point_count && !found; j++)
            found = strcmp(source_points[j], cases[i].point) == 0;
        for (int j = 0; j < i && !listed; j++)
            listed = strcmp(cases[j].point, cases[i].point) == 0;
        if (!found && !listed && used + 80 < sizeof stale)
            used += (size_t)snprintf(stale + used, sizeof stale - used, " %s", cases[i].point);
    }
    tap_ok(!stale[0], "every row's point is a FAULT() of the sources%s%s", stale[0] ? "; not found:" : "", stale);
}

/* After the runs: nothing the library reached went untested. */
static void check_points_reached(const bool *injected)
{
    const char *seen[128];
    int n = clmem_fault_seen(seen, 128);
    char missing[2048] = "", untested[2048] = "";
    size_t used = 0, used2 = 0;

    for (int i = 0; i < n && i < 128; i++)
        if (!has_row(seen[i]) && used + 80 < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used, " %s", seen[i]);
    tap_ok(!missing[0], "every point the library reached (%d) has a row%s%s", n, missing[0] ? "; none for:" : "",
           missing);
    for (int i = 0; i < source_point_count; i++) {
        bool done = false;
        for (int j = 0; j < NCASES && !done; j++)
            done = injected[j] && strcmp(cases[j].point, source_points[i]) == 0;
        if (!done && used2 + 80 < sizeof untested)
            used2 += (size_t)snprintf(untested + used2, sizeof untested - used2, " %s", source_points[i]);
    }
    if (untested[0])
        tap_diag("points whose rows were all skipped on this machine (their path is missing):%s", untested);
}

int main(void)
{
    static struct env e; /* large; and run_case keeps pointers into it */
    static bool injected[NCASES];
    cl_uint align_bits = 0;
    struct timespec t0, t1;
    cl_int err;
    int points = 0;

    bridge_open_vulkan(&e.vk); /* may skip the whole program: before any test point */
    cl_fixture_open_paired(&e.f, &e.vk);
    check_point_list();
    e.queues[0] = e.f.queue;
    for (int i = 1; i < NQUEUES; i++) {
        e.queues[i] = clCreateCommandQueueWithProperties(e.f.context, e.f.device, NULL, &err);
        if (err != CL_SUCCESS)
            tap_bail("clCreateCommandQueueWithProperties failed: %d", err);
    }
    clGetDeviceInfo(e.f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    e.align = align_bits / 8 ? align_bits / 8 : 1;
    e.piece = e.align > PIECE_MIN ? e.align : PIECE_MIN;
    if ((VkDeviceSize)MANY * e.piece > ALLOC_SIZE)
        tap_bail("%d pieces of %llu bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN) do not fit in the %d-byte buffer", MANY,
                 (unsigned long long)e.piece, ALLOC_SIZE);
    check_needs(&e);
    tap_diag("OpenCL: %s (%s); Vulkan: %s; sub-range offset %llu, pieces of %llu bytes", e.f.device_name,
             e.f.platform_name, e.vk.device_name, (unsigned long long)e.align, (unsigned long long)e.piece);

    /* Warm-up: drivers open fds and make objects of their own on first use,
     * so the OpenCL baselines are taken after one good run of every
     * sequence. */
    for (int i = 0; i < NCASES; i++)
        if (e.have[cases[i].seq->needs]) {
            bool first = true;
            for (int j = 0; j < i && first; j++)
                first = cases[j].seq != cases[i].seq;
            if (first) /* so that a crash inside a driver names the sequence it was in */
                tap_diag("warming up: %s", cases[i].seq->name);
            warm_up(&e, &cases[i]);
        }
    for (int i = 0; i < NQUEUES; i++)
        clFinish(e.queues[i]);
    usleep(100000); /* let the driver's own references go (see refs_settle) */
    e.context_refs = context_refs(e.f.context);
    for (int i = 0; i < NQUEUES; i++)
        e.queue_refs[i] = cl_queue_refcount(e.queues[i]);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < NCASES; i++) {
        const struct fault_case *c = &cases[i];
        int passes;

        if (!e.have[c->seq->needs]) {
            tap_skip(e.why_not[c->seq->needs], "%s, %s", c->point, c->seq->name);
            continue;
        }
        /* The fd baseline is taken per row, after a good run of its own
         * sequence: the NVIDIA driver keeps one /dev/nvidiactl fd more or
         * less open depending on what ran last (one more after the first
         * opaque-fd run that follows host-mapped ones, the same one on
         * every later run), which is not a leak: a leak grows per run. */
        warm_up(&e, c);
        e.fds = fd_count();
        list_fds(baseline_fds, sizeof baseline_fds, NULL);
        passes = run_case(&e, c, 0, 0, MODE_DRY);
        for (int n = 1; n <= passes; n++) {
            run_case(&e, c, n, passes, MODE_RETRY);
            run_case(&e, c, n, passes, MODE_DROP);
            points++;
        }
        injected[i] = passes > 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tap_diag("%d (point, pass) failures injected, each twice, in %.1f s; OpenCL reference counts took up to %d ms "
             "to settle",
             points, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, settle_ms_max);
    check_points_reached(injected);

    if (stranded) {
        /* Failed above already; closing would hang on the stranded import. */
        tap_diag("%d run(s) left an import behind (an anchor never released): not closing the OpenCL context and "
                 "the Vulkan device, whose destruction would wait for it",
                 stranded);
        tap_skip("an import was stranded (see above)", "the Vulkan validation layer reported no error");
        return tap_done();
    }
    for (int i = 1; i < NQUEUES; i++)
        clReleaseCommandQueue(e.queues[i]);
    cl_fixture_close(&e.f);
    tap_diag("OpenCL fixture closed");
    vkctx_close(&e.vk);
    /* After vkDestroyDevice: the layer reports objects still alive then. */
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error, device teardown included");
    return tap_done();
}
