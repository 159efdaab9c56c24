/* SPDX-License-Identifier: MIT */
/* One run of a fault-injection row (t/fault/fault-cases.c), shared by the
 * files that carry it out: t/fault/fault-run.c runs a row's sequence and
 * judges it, and the operations a sequence is written in are done by
 * group, each group in a file of its own; t/fault/fault-op-common.c holds
 * what the run and the groups share:
 *
 *   t/fault/fault-ops-import.c   the bridge and its imports: create and
 *                                unref a bridge; import buffers, fds,
 *                                images and pieces; handles for more
 *                                queues; drops and finish
 *   t/fault/fault-ops-handoff.c  handoffs: acquire and release, one, each
 *                                and many at a time
 *   t/fault/fault-ops-ring.c     semaphores and frame rings
 *   t/fault/fault-ops-vk.c       the bridge's Vulkan buffer and image
 *                                makers, and the image the image
 *                                sequences import
 *
 * Private to the fault-injection test; t/fault/fault-injection.h is what
 * the driver sees. */
#ifndef CLMEM_T_FAULT_RUN_H
#define CLMEM_T_FAULT_RUN_H

#include "fault-injection.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#define NSLOTS 20  /* handles (and fds) a run can hold: MANY pieces, or the other sequences' 4 */
#define NSEMS 4    /* semaphores a run can hold: a ring of 2 slots */
#define RING_FRAMES 8 /* frames a ring sequence hands out */
#define NPROBES 64 /* probe anchors a run can hand out: sequence, retry and next call (MANY twice) */
/* What an out-parameter holds before a call, so that "set to NULL" shows. */
#define JUNK_HANDLE ((clmem_handle *)(uintptr_t)0x1)
#define JUNK_SEMAPHORE ((clmem_bridge_semaphore *)(uintptr_t)0x1)
#define JUNK_BRIDGE ((clmem_bridge *)(uintptr_t)0x1)
#define JUNK_RING ((clmem_bridge_ring *)(uintptr_t)0x1)
#define JUNK_EVENT ((cl_event)(uintptr_t)0x1)

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
    struct fault_env *e;
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

/* ------------------------- fault-op-common.c, for the run and the groups */

/* Adds a problem to the run's list (its TAP point fails with them). */
void problem(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The operation as the TAP line names it (a static buffer). */
const char *op_name(struct op op);
/* A probe anchor's release (the run makes the anchors, fault-op-common.c
 * watches them). */
void probe_release(void *user);
/* The next probe for an import call, and what follows the call. */
struct probe *probe_take(struct run *r);
void probe_after_import(struct run *r, struct probe *p, clmem_status s, const clmem_handle *h);
/* clmem_bridge_finish on the run's bridge, which must return CLMEM_OK. */
void finish(struct run *r, const char *when);
/* The event a successful call gave, waited for and released. */
void op_event_done(struct run *r, cl_event ev, struct op op);
/* A counting anchor's release: adds one to the atomic_int at user. */
void count_release(void *user);

/* ----------------------------------------------------- the groups' ops */

clmem_status fault_do_import_op(struct run *r, struct op op);
clmem_status fault_do_handoff_op(struct run *r, struct op op);
clmem_status fault_do_ring_op(struct run *r, struct op op);
clmem_status fault_do_vk_op(struct run *r, struct op op);

/* fault-ops-import.c: the caller's fd of slot is still open and the same file. */
bool fd_is_callers(const struct run *r, int slot);
/* fault-ops-ring.c: the run's ring goes, and no semaphore stays signalled. */
void ring_drop(struct run *r);
/* fault-ops-vk.c: the image sequences' image and the caller's anchor on it. */
clmem_keepalive *image_owned_new(struct run *r);

#endif
