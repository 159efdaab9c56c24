/* SPDX-License-Identifier: MIT */
/* What the files of the fault-injection test share: the shape of a row of
 * the table (t/fault/fault-cases.c), the machine the rows run on, and the
 * calls of the interpreter that runs a row's sequence of operations
 * (t/fault/fault-run.c) for the driver (t/fault/fault-injection.c, which
 * says what is checked). */
#ifndef CLMEM_T_FAULT_INJECTION_H
#define CLMEM_T_FAULT_INJECTION_H
#include "t/lib/bridge-fixture.h"

#include <stdbool.h>
#include <stdint.h>

#define ALLOC_SIZE (64 * 1024) /* the Vulkan buffer a run's imports share */
#define SUB_SIZE 4096          /* a SUB range's size */
#define MANY 17    /* handles in one big acquire_many: one more than bridge/handoff.c's HANDOFF_STACK and
                      bridge/path-fd.c's FD_STACK_MEMS */
#define NQUEUES 3  /* the fixture's queue and two more of its context */
#define SETTLE_NS UINT64_C(5000000000) /* finish's timeout: teardowns take milliseconds */
/* The images the image sequences make: rows of 256 bytes in RGBA8. */
#define IMAGE_FORMAT VK_FORMAT_R8G8B8A8_UNORM
#define IMAGE_W 64
#define IMAGE_H 16
#define IMAGE_USAGE (VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT)

/* ------------------------------------------------------------ sequences */

/* The operations a sequence is made of (t/fault/fault-cases.c writes them with
 * the macros there; t/fault/fault-run.c's do_op runs them). A slot is a place
 * in the run that holds a handle (or a semaphore, or a bridge). */
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
 * [i * fault_env.piece, (i + 1) * fault_env.piece), one import per piece (the cache keys on the range). */
enum range { WHOLE, SUB, PIECE };

struct op {
    enum op_kind kind;
    int slot;
    enum range range; /* imports */
    int queue;        /* imports and OP_FOR_QUEUE: index into fault_env.queues */
    int src;          /* OP_FOR_QUEUE: the slot whose handle it starts from */
    uint32_t flags;   /* OP_IMPORT_IMAGE: 0 (the plane buffer) or CLMEM_BRIDGE_IMAGE_AS_IMAGE;
                         OP_VK_NEXT: 0 or CLMEM_BRIDGE_RING_END_BATCH */
    int count;        /* the ops on a run of slots: how many (0 for acquire_many and release_many: none) */
    int batch;        /* OP_RING_CREATE: batch_size */
};

/* What a sequence needs of the machine; where it is missing, its rows skip
 * with the bridge's reason (the driver checks each once). */
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

/* A sequence: the calls of a run, up to OP_END. */
struct sequence {
    const char *name;
    enum needs needs;
    clmem_bridge_path path;               /* of the imports */
    clmem_bridge_semaphore_mode sem_mode; /* of OP_SEM_IMPORT */
    struct op ops[28];
};

/* --------------------------------------------------------------- cases */

/* A row of the table: a failure point and a sequence that reaches it. */
struct fault_case {
    const char *point;          /* the FAULT("...") name */
    const struct sequence *seq; /* a sequence that reaches it */
    clmem_status want;          /* what a call that fails there returns (CLMEM_OK: only teardowns reach it) */
    const char *call;           /* what clmem_error_call() names; NULL: the library's own check */
};

extern const struct fault_case fault_cases[];
extern const int fault_case_count;

/* ----------------------------------------------------------- the world */

struct fault_env {
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
    char fd_list[8192];                /* the fds open then, as " number->target" */
    cl_uint context_refs, queue_refs[NQUEUES];
    /* what the runs found */
    int settle_ms_max;                 /* the longest the reference counts took to come back */
    /* Runs that left something of the caller's held (an anchor never
     * released): the bridge still holds (or lost) an import, and the
     * drivers may wait for it forever when their context or device is
     * destroyed (NVIDIA's do). */
    int stranded;
};

/* ----------------------------------------------------- the interpreter */

enum fault_mode { MODE_DRY, MODE_RETRY, MODE_DROP };

/* One run of c's sequence on a bridge of its own: nothing armed (the dry
 * run), or pass nth of passes through c's point failing, then the failed
 * call retried or everything dropped and the sequence run again; then the
 * checks that nothing was lost, and one TAP point. Returns the passes
 * through the point (what the dry run counts). */
int fault_run_case(struct fault_env *e, const struct fault_case *c, int nth, int passes, enum fault_mode mode);

/* One good run of c's sequence, twice (as a DROP run's next call does),
 * and no TAP point; bails out when it fails. */
void fault_warm_up(struct fault_env *e, const struct fault_case *c);

/* The fds open now become the baseline a run is checked against. */
void fault_take_fd_baseline(struct fault_env *e);

/* One import of plane 0 (as image_flags asks) of an image made as the
 * image sequences make theirs, on b; dropped and finished. CLMEM_OK, or
 * the failing call's status, with its message in why. */
clmem_status fault_image_trial(struct fault_env *e, clmem_bridge *b, clmem_bridge_path path, bool optimal,
                               VkFormat format, uint32_t image_flags, char *why, size_t why_len);
#endif
