/* SPDX-License-Identifier: MIT */
/* Internal to clmem-bench's frames across processes (tools/bench/xproc*.c,
 * built where libclmem-ipc is): what its files share, and each file's entry
 * points. The files, from the top down; each calls only files below it:
 *   xproc.c           the top: the frames measured, the run of every measure,
 *                     the rows, the targets and the report
 *   xproc-child.c     the consumer process's main: its devices set up, then
 *                     the consumer role its mode names
 *   xproc-ipc.c       through libclmem-ipc, both sides; it takes turns with
 *                     the raw protocol frame by frame
 *   xproc-raw.c       the same protocol made with the raw calls, both sides
 *   xproc-shm.c       a copy through /dev/shm, both sides
 *   xproc-inproc.c    the same frames in one process: the bridge's one-frame
 *                     handoff and its ring
 *   xproc-consumer.c  the consumer process's devices and its kernel
 *   xproc-spawn.c     the consumer process started and reaped
 *   xproc-msg.c       the messages of /dev/shm and of the raw protocol
 *   xproc-common.c    what every measure shares: the frames (fill, zero,
 *                     check), the measures' labels, fences, CPU time */
#ifndef CLMEM_BENCH_XPROC_COMMON_H
#define CLMEM_BENCH_XPROC_COMMON_H
#include "bench.h"

#include <clmem-ipc.h>

/* ------------------------------------------------------------ shared: xproc-common.c */

#define XPROC_SLOTS 4
/* How long any wait on the other process may take. */
#define XPROC_TIMEOUT_NS (10ull * 1000000000u)
/* What the fill writes into word 0 of a slot's frame. */
#define XPROC_VALUE(slot) (0x100u + (uint32_t)(slot))

/* The measures, in the report's order. */
enum xmeasure {
    XM_INPROC_HANDOFF, /* one process: the bridge's one-frame handoff with the bench's two semaphores */
    XM_IPC_D1,         /* across processes through libclmem-ipc, one frame at a time */
    XM_RAW_D1,         /* across processes with the raw calls, one frame at a time */
    XM_INPROC_RING_D4, /* one process: clmem_bridge_ring of four frames */
    XM_IPC_D4,         /* across processes through libclmem-ipc, four frames in flight, handed over one by one */
    XM_IPC_BATCH_D4,   /* the same, the frames handed over in batches: one READY, one FREE a batch */
    XM_SHM_D1,         /* a copy through /dev/shm, one frame at a time */
    XM_SHM_D4,         /* a copy through /dev/shm, four frames in flight */
    XM_COUNT
};
/* Their names in the report's tables. */
extern const char *const xmeasure_label[XM_COUNT];

/* A frame's shape: an image (its planes) or a buffer. */
struct xkind {
    const char *label;
    uint64_t bytes;
    VkFormat format; /* VK_FORMAT_UNDEFINED: a buffer */
    uint32_t width, height, planes;
    uint64_t plane_offset[2], plane_size[2];
    uint32_t pitch[2];
};

/* What the measures of one frame kind found. */
struct xresult {
    const char *label;
    bool ran[XM_COUNT];
    char why[XM_COUNT][NOTE_MAX + 64]; /* a note of the bench's after a prefix */
    struct summary s[XM_COUNT];
    double cpu[XM_COUNT];  /* CPU time of both processes a frame, us (mean over the timed frames) */
    struct paired lib1;    /* libclmem-ipc D=1 minus raw D=1, paired frame by frame */
    const char *peer_path; /* the path the libclmem-ipc consumer imports through; NULL until it said */
};

struct xframe {
    struct anchored_buf *owner; /* the memory, freed by its anchor once every import of it let go */
    clmem_keepalive *anchor;
    struct vk_buf buf; /* owner->buf: exportable as an opaque fd */
    uint32_t memory_type;
    VkCommandBuffer fill; /* word 0 = XPROC_VALUE(slot) */
    VkCommandBuffer zero; /* words 0 and 1 = 0 */
    VkFence fence;
    uint32_t uses; /* kernels run since the last zero */
};

/* One frame kind's run: its frames, one per slot, and the samples of the
 * measure at hand. */
struct xrun {
    struct bench *b;
    const struct xkind *k;
    struct xframe f[XPROC_SLOTS];
    int frames, blocks, warmup;
    double *samples;
    struct vk_buf readback; /* words 0 and 1 of each slot */
    uint32_t *readback_ptr;
};

/* The frames of r->k, exportable, with their fill and zero commands and a
 * fence each; torn down once every import of them let go. */
void xproc_frames_setup(struct xrun *r);
void xproc_frames_teardown(struct xrun *r);
void xproc_frames_zero(struct xrun *r);
bool xproc_frames_check(struct xrun *r, const char *what, char *why, size_t len);
void xproc_fence_reset(struct bench *b, VkFence f);
/* Slot s's fill submitted with its fence. */
void xproc_submit_fill(struct xrun *r, int s);
/* CPU time of this process and of process `pid` (0: this one only), us. */
double xproc_cpu_us(pid_t pid);

/* ------------------------------------------------------------ the messages: xproc-msg.c */

/* The messages of the /dev/shm copy and of the raw protocol, on the same
 * kind of socket: one HELLO with the fds (the /dev/shm files, or the raw
 * protocol's Vulkan memory), then READY and FREE of a slot; the raw
 * consumer answers its HELLO with ACCEPT once its imports are made. */
enum xproc_msg_type { XMSG_HELLO = 1, XMSG_READY = 2, XMSG_FREE = 3, XMSG_ACCEPT = 4 };

struct xproc_msg {
    uint32_t type; /* enum xproc_msg_type */
    uint32_t slot;
    uint64_t bytes;
    uint32_t slots;
    uint32_t value;       /* READY: what word 0 holds */
    uint32_t path;        /* raw HELLO: the clmem_bridge_path the consumer takes */
    uint32_t memory_type; /* raw HELLO: the allocation's memory type index */
    uint32_t dedicated;   /* raw HELLO: allocated with VkMemoryDedicatedAllocateInfo */
};

/* One message with up to XPROC_SLOTS fds: whether all of it went. */
bool xproc_msg_send(int sock, const struct xproc_msg *m, const int *fds, int nfds);
/* One message, its fds in fds (up to max, the rest closed): how many came,
 * or -1 when no whole message did. */
int xproc_msg_recv(int sock, struct xproc_msg *m, int *fds, int max);

/* ------------------------------------------------------------ the consumer process */

/* xproc-spawn.c: the consumer process, clmem-bench run again with one end
 * of a socketpair, in `mode` ("ipc", "ipc-batch", "shm" or "raw"); *sock_out is this
 * process's end. Reaped: true when it exited 0 (why says otherwise). */
pid_t xproc_spawn_consumer(const char *mode, int *sock_out);
bool xproc_reap(pid_t pid, char *why, size_t len);

/* xproc-consumer.c: the consumer process's devices: its own Vulkan device,
 * the OpenCL device paired with it, and the bump kernel. */
struct consumer_devices {
    struct vkctx vk;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel bump;
};
bool xproc_consumer_open(struct consumer_devices *c);
void xproc_consumer_close(struct consumer_devices *c);
/* Says on stderr what failed, with clmem_error_message(); returns 1, the
 * consumer process's exit status. */
int xproc_consumer_fail(const char *what);

/* The consumer roles, which xproc_child_main (xproc-child.c) hands the
 * socket to; each returns the consumer process's exit status. The ipc one
 * takes the socket; the others leave it to the caller to close. */
int xproc_consume_ipc(struct consumer_devices *c, int sock, bool batched);
int xproc_consume_shm(struct consumer_devices *c, int sock);
int xproc_consume_raw(struct consumer_devices *c, int sock);

/* ------------------------------------------------------------ the measures' producer sides */

/* xproc-inproc.c: the in-process handoff and ring. */
void xproc_run_inproc(struct xrun *r, struct xresult *res);

/* xproc-ipc.c: libclmem-ipc with `slots` frames in flight (in batches for
 * XM_IPC_BATCH_D4); at one, the raw protocol too, in turn. */
void xproc_run_ipc(struct xrun *r, struct xresult *res, int slots, enum xmeasure m);

/* xproc-shm.c: the copy through /dev/shm with `slots` frames in flight. */
void xproc_run_shm(struct xrun *r, struct xresult *res, int slots, enum xmeasure m, int frames);

/* xproc-raw.c: the producer's end of the raw protocol with one consumer
 * process. Open starts the consumer process and hands it slot's memory
 * (false, why says, on failure); frame hands one frame over and times it
 * until its FREE (false on failure); close ends the consumer and reaps it. */
struct raw_producer {
    pid_t pid;
    int sock;
    int slot; /* the frame it hands over */
};
bool xproc_raw_open(struct xrun *r, struct raw_producer *x, int slot, char *why, size_t len);
bool xproc_raw_frame(struct xrun *r, struct raw_producer *x, double *us);
bool xproc_raw_close(struct raw_producer *x, char *why, size_t len);
#endif
