/* SPDX-License-Identifier: MIT */
/* Internal to clmem-bench's (x) (tools/bench/xproc*.c): frames across
 * processes through libclmem-ipc. One concept a file:
 *   xproc.c          the frames, the run and the report
 *   xproc-inproc.c   the same frames in one process: the semaphore handoff and the ring
 *   xproc-ipc.c      the producer's side through libclmem-ipc
 *   xproc-shm.c      the producer's side through /dev/shm, and its messages
 *   xproc-child.c    the consumer process: started, reaped, and what it runs */
#ifndef CLMEM_BENCH_XPROC_H
#define CLMEM_BENCH_XPROC_H
#include "bench.h"

#include <clmem-ipc.h>

#define XPROC_SLOTS 4
#define XPROC_TIMEOUT_NS (10ull * 1000000000u)
#define XPROC_VALUE(slot) (0x100u + (uint32_t)(slot))

enum xmeasure { X_INPROC_E, X_D1, X_RING4, X_D4, X_SHM1, X_SHM4, X_COUNT };
extern const char *const xmeasure_label[X_COUNT];

struct xkind {
    const char *label;
    uint64_t bytes;
    VkFormat format; /* VK_FORMAT_UNDEFINED: a buffer */
    uint32_t width, height, planes;
    uint64_t plane_offset[2], plane_size[2];
    uint32_t pitch[2];
};

struct xresult {
    const char *label;
    bool ran[X_COUNT];
    char why[X_COUNT][NOTE_MAX + 64]; /* a note of the bench's after a prefix */
    struct summary s[X_COUNT];
};

struct xframe {
    struct anchored_buf *owner; /* The memory, freed by its anchor once every import of it let go */
    clmem_keepalive *anchor;
    struct vk_buf buf;          /* owner->buf: exportable as an opaque fd */
    uint32_t memory_type;
    VkCommandBuffer fill; /* word 0 = XPROC_VALUE(slot) */
    VkCommandBuffer zero; /* words 0 and 1 = 0 */
    VkFence fence;
    uint32_t uses; /* kernels run since the last zero */
};

struct xrun {
    struct bench *b;
    const struct xkind *k;
    struct xframe f[XPROC_SLOTS];
    int frames, blocks, warmup;
    double *samples;
    struct vk_buf readback; /* words 0 and 1 of each slot */
    uint32_t *readback_ptr;
};

/* The baseline's messages, on the same kind of socket: one HELLO with the
 * /dev/shm fds, then READY and FREE of a slot. */
struct shm_msg {
    uint32_t type; /* 1 HELLO, 2 READY, 3 FREE */
    uint32_t slot;
    uint64_t bytes;
    uint32_t slots;
    uint32_t value; /* READY: what word 0 holds */
};

/* What the consumer process says its path was, for the report. */
extern char xproc_path_note[NOTE_MAX];

/* xproc.c: the frames */
void xproc_frames_zero(struct xrun *r);
bool xproc_frames_check(struct xrun *r, const char *what, char *why, size_t len);
void xproc_fence_reset(struct bench *b, VkFence f);
void xproc_submit_fill(struct xrun *r, int s);

/* xproc-inproc.c */
void xproc_run_inproc(struct xrun *r, struct xresult *res);

/* xproc-ipc.c */
void xproc_run_ipc(struct xrun *r, struct xresult *res, int slots, enum xmeasure m);

/* xproc-shm.c */
bool xproc_shm_send(int sock, const struct shm_msg *m, const int *fds, int nfds);
int xproc_shm_recv(int sock, struct shm_msg *m, int *fds, int max);
void xproc_run_shm(struct xrun *r, struct xresult *res, int slots, enum xmeasure m, int frames);

/* xproc-child.c: the consumer process, spawned with one end of a socketpair
 * in `mode` ("ipc" or "shm"); reaped, true when it exited 0 (why says
 * otherwise). */
pid_t xproc_spawn_consumer(const char *mode, int *sock_out);
bool xproc_reap(pid_t pid, char *why, size_t len);
#endif
