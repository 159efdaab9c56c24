/* SPDX-License-Identifier: MIT */
/* Internal to clmem-bench: the state every part of the bench shares, and
 * the functions one file gives the others. One concept a file:
 *   main.c        the run: sizes, frames, batches, output, teardown
 *   args.c        the command line and --help
 *   probe.c       the devices, the bridges, the path, the limits
 *   util.c        the clock, teardown waits, errors, checks, the watchdog, size text
 *   stats.c       measure and variant names, the statistics of samples
 *   vulkan.c      Vulkan buffers and command buffers
 *   raw.c         the raw-call variant (no library call)
 *   sems.c        the semaphores of (e)
 *   size.c        one size's setup, teardown and checks
 *   measures.c    (a) to (f) at one size
 *   frames.c      (g) image frames
 *   unref.c       (h) clmem_handle_unref with a kernel pending
 *   consumer.c    (i) a consumer library (CLBlast) in the pipeline
 *   ffmpeg-frames.c (j) FFmpeg's Vulkan frames through libclmem-av
 *   ffmpeg-cl.c   (l) FFmpeg's OpenCL filters on Vulkan frames (clmem_av_cl_map)
 *   ffmpeg-cl-raw.c (l)'s raw route: the map's handover with the raw calls
 *   ffvk.c        (l): the entry points of FFmpeg's VkDevice
 *   xproc*.c      (x) frames across processes through libclmem-ipc, and its
 *                 consumer process (clmem-bench run again: XPROC_CHILD_OPTION);
 *                 tools/bench/xproc-common.h lists its files
 *   batches.c     the batch run's setup and teardown
 *   batch-run.c   the batch run measured
 *   results.c     every row measured and every part skipped, for the outputs
 *   targets.c     the targets (set on an H200) and their verdicts
 *   machine.c     what the run ran on: CPU, devices, drivers, date, command
 *   report.c      the header and the text tables
 *   csv.c         the CSV
 *   json.c        --json
 *   svg.c         the plots, as SVG */
#ifndef CLMEM_BENCH_H
#define CLMEM_BENCH_H
#include "config.h"

#include <clmem-bridge.h>
#include "opencl/clext.h" /* the extension entry-point types and cl-compat.h's constants */
#include "vkctx.h"

#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define KIB (1024ull)
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)

#define MAX_SIZES 32
/* Room for a note that holds a clmem_error_message() (at most 2367 bytes:
 * clmem.h) after a short prefix of the bench's own. */
#define NOTE_MAX 2560
#define CPU_DEFAULT_CAP (256ull * MIB) /* a 2-core machine finishes in minutes */
#define GPU_DEFAULT_CAP (1ull * GIB)   /* 4 GiB only when asked with --max-size */
#define DEFAULT_FRAMES 200
#define DEFAULT_BLOCKS 10     /* (e): timed blocks of K frames per variant */
#define WARMUP_FRAMES 10      /* (d), (e): untimed frames before timing */
#define DESTROY_WAIT_S 5      /* how long the raw teardown waits for OpenCL to destroy a cl_mem, and
                                 clmem_bridge_finish for the bridge's teardowns */
#define FINISH_TIMEOUT_NS ((uint64_t)DESTROY_WAIT_S * 1000000000u)
#define WATCHDOG_S 120        /* no measure of one size takes this long; a hang (a semaphore never
                                 signalled) ends the run naming where, instead of at the caller's limit */

/* What Vulkan writes into the whole buffer before (a), and word 0's value
 * in frame f of (d) and (e). */
#define PATTERN 0x5eed1234u
#define FRAME_VALUE(f) (0x10000u + (uint32_t)(f) * 7u)

/* ---------------------------------------------------------------- results */

enum measure { M_STAGED, M_IMPORT, M_CACHED, M_WAIT, M_SEM, M_COUNT };
enum variant { V_BASE, V_CLMEM, V_RAW, V_COUNT };

extern const char *const measure_name[M_COUNT];
extern const char *const variant_name[V_COUNT];

struct summary {
    bool have;
    double median, min, max; /* microseconds */
    int reps;                /* samples behind the numbers */
    int frames_per_rep;      /* (e): frames per timed block; otherwise 1 */
};

/* The import's overhead, paired: clmem minus raw within each rep (the two
 * imports of a rep run back to back, in alternating order), so that the
 * driver's own drift from rep to rep cancels out. */
struct paired {
    bool have;
    double median;   /* of the differences, microseconds */
    double lo, hi;   /* distribution-free 95 % interval of that median */
    double raw_median;
    int pairs;
};

/* The import overhead's target: at most 1 us, or 2 % of the raw import. */
#define IMPORT_PAIRS 200
#define IMPORT_TARGET_US 1.0
#define IMPORT_TARGET_FRACTION 0.02

struct size_result {
    uint64_t size;
    struct summary s[M_COUNT][V_COUNT];
    struct paired import_overhead;
    const struct target *overhead_target;
};

/* ---------------------------------------------------------------- results */

/* One row of the CSV and of the JSON's rows (results.c). */
struct result_row {
    char section[8];  /* the measure's letter, "a" to "l" or "x", or "batches" */
    char measure[64]; /* staged_copy, frame_handoff_1920x1080_rgba8, scaling_hit_ranges, ... */
    char variant[16]; /* baseline, clmem, raw, paired, floor, or (k)'s shape verdict */
    uint64_t x;       /* size_bytes: the buffer's or frame's bytes, or (k)'s point */
    struct summary s;
    int batch, ring;
    double cpu_us; /* CPU time a frame of every process involved; NAN where not measured */
};

/* A part that did not run here, and why. */
struct result_skip {
    char section[8]; /* "a-f" for a buffer size */
    char what[64];
    char reason[NOTE_MAX];
};

/* ---------------------------------------------------------------- targets */

/* Fewer samples than this behind a value give no verdict: the distribution-
 * free 95 % interval of a median needs about 10 (at n = 10 it spans the
 * 2nd to the 9th of the sorted samples). */
#define MIN_VERDICT_SAMPLES 10

enum verdict {
    VERDICT_MET,
    VERDICT_MISSED,
    VERDICT_UNCLEAR,     /* can't tell: the interval straddles the target */
    VERDICT_TOO_FEW,     /* fewer than MIN_VERDICT_SAMPLES */
    VERDICT_NOT_REACHED, /* the run did not reach the target's point */
    VERDICT_ELSEWHERE,   /* a target in absolute time, and not the GPU it was set on (an H200) */
    VERDICT_CPU_DEVICE,  /* a CPU OpenCL device: its times say nothing of a GPU's */
};

/* What a target asks of which row. */
struct target_spec {
    const char *section;
    const char *measure; /* the row's */
    uint64_t x;          /* the point it is set at (the row's size_bytes) */
    const char *text;    /* "at most 20 us at Q = 16" */
    bool relative;       /* compares two figures of the same run (the library against raw, a route
                            against another, D = 4 against D = 1): judged on any GPU; otherwise a
                            time, judged only on the GPU it was set on */
};

struct target {
    char section[8];
    char measure[64];
    uint64_t x;
    char text[128];
    bool relative;
    int samples;
    double value; /* what it was judged by (us, a ratio, a slope); NAN when not reached */
    enum verdict verdict;
    char why[320]; /* what stands in the way of met or missed; "" when judged */
};

/* ---------------------------------------------------------------- options */

/* (k) scaling (scaling.c): how far each of its rows goes, and how long. */
struct scale_plan {
    int max_imports; /* N: live imports, 1 to this by powers of 10 */
    int fresh_hits;  /* hits with a fresh anchor each (first and last 1000 timed) */
    int max_threads; /* T: 1 to this by powers of 2 */
    int max_queues;  /* Q: 1 to this by powers of 2 (at most 16) */
    int max_batch;   /* K: 2, 16, 64, 256 up to this */
    int ops;         /* hits per timed block (hits vs N) */
    int window_ms;   /* threads: one timed window, all threads running (one more before, untimed) */
    int blocks;      /* timed blocks (threads: windows) per point */
    int reps;        /* reps per point of the last unref (acquire_many: twice as many) */
};

struct options {
    int argc;
    char **argv; /* the command line, for the outputs */
    uint64_t sizes[MAX_SIZES];
    int nsizes;        /* > 0 when --sizes was given */
    uint64_t max_size; /* 0: the default cap for the device type */
    int reps;          /* 0: by size */
    int frames;
    int blocks;
    bool quick;
    bool validate;
    const char *csv;
    const char *svg;
    bool json;
    /* the batch run: --batches, --ring-sizes, --batch-frame-size */
    int batches[16];
    int nbatches;              /* 0: no batch run */
    int rings[8];
    int nrings;
    uint64_t batch_frame_size; /* 0: by device */
    /* (k): --scaling-only, --scale-imports, --scale-threads (0: by device) */
    bool scaling_only;
    int scale_imports;
    int scale_threads;
    bool xproc_only; /* --xproc-only: (x) alone */
    bool ffcl_only;  /* --ffcl-only: (l) alone */
};

/* ---------------------------------------------------------------- state */

/* One variant's two binary semaphores: Vulkan signals `ready`, OpenCL
 * signals `done`. */
struct sem_set {
    VkSemaphore ready, done;
    clmem_bridge_semaphore *lib_ready, *lib_done; /* clmem variant */
    cl_semaphore_khr cl_ready, cl_done;    /* raw variant, device ordering */
    VkFence fence;                         /* raw variant, host ordering */
};

/* What the run ran on and how it was started (machine.c), for the header,
 * the CSV and the JSON. */
struct machine {
    char date[40]; /* ISO 8601, local time with its offset */
    char host[256];
    char cpu[256]; /* /proc/cpuinfo's model name */
    int cpus;      /* online */
    char command[4096];
    char vk_driver[64], vk_api[32], vk_uuid[37];
    char cl_name[256], cl_platform[256], cl_version[256], cl_driver[256];
};

struct bench {
    struct vkctx vk;
    struct machine machine;
    VkPhysicalDeviceProperties vk_props;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_kernel kernel[V_COUNT]; /* V_CLMEM and V_RAW, each bound to its own buffer */
    cl_program program;        /* kept: the batch run makes a kernel per frame */
    bool cpu_device;
    clmem_bridge_path path; /* CLMEM_BRIDGE_PATH_OPAQUE_FD or CLMEM_BRIDGE_PATH_HOST_MAPPED */
    /* Made once, outside every timed loop, on this context and device: one
     * with the import cache ((c), (d), (e), the semaphores), one made with
     * CLMEM_BRIDGE_NO_IMPORT_CACHE ((b): each import a new driver import). */
    clmem_bridge *bridge;
    clmem_bridge *bridge_uncached;
    char pair_note[NOTE_MAX];
    char path_note[NOTE_MAX];

    /* Raw entry points, resolved as the bridge does (opencl/clext.h). */
    struct clext ext; /* opencl/clext.h's table, filled by raw_resolve (raw.c) */
    PFN_vkGetMemoryFdKHR get_memory_fd;
    PFN_vkGetSemaphoreFdKHR get_semaphore_fd;

    /* (e) */
    bool sem_ok;        /* both variants' semaphores are usable */
    bool sem_exportable;
    clmem_bridge_semaphore_mode sem_mode; /* what the library imported with; the raw variant mirrors it */
    char sem_note[NOTE_MAX];
    struct sem_set sem[V_COUNT];

    /* limits for the per-size memory check */
    uint64_t cl_max_alloc, cl_global_mem, vk_max_alloc, host_mem;
    int failures;
};

/* ---------------------------------------------------------------- Vulkan */

struct vk_buf {
    VkBuffer buffer;
    clmem_bridge_vk_memory mem;
};

/* The clmem variant's buffer belongs to an anchor, as the bridge expects:
 * the anchor frees it once the bench and every import let go. */
struct anchored_buf {
    struct vk_buf buf;
    clmem_bridge *bridge; /* borrowed: the bench's, which outlives every anchor */
    atomic_int freed;
};

/* ------------------------------------------------ raw import (no library) */

/* What a program that calls the extensions itself holds for one import. */
struct raw_import {
    cl_mem mem;
    size_t size;
    VkDevice device;
    VkDeviceMemory memory;
    void *vk_base; /* host-mapped: vkMapMemory's pointer */
    void *cl_map;  /* host-mapped: OpenCL's map while the host (Vulkan) owns the memory */
    bool acquired;
    atomic_int destroyed;
};

/* ------------------------------------------------------------- semaphores */

/* The owner of a VkSemaphore the library imported: its anchor. */
struct sem_owner {
    VkDevice device;
    VkSemaphore semaphore;
};

/* ---------------------------------------------------------- one size */

/* Everything one size needs. */
struct size_run {
    uint64_t size;
    int reps;
    int import_reps; /* pairs of (b) and raw (b): at least 200 by default */
    int frames; /* K */
    int blocks;
    int warmup_frames;
    struct anchored_buf *lib;   /* the clmem variant's shared buffer */
    clmem_keepalive *lib_anchor;
    struct vk_buf raw_buf;      /* the raw variant's shared buffer: each variant has its own, so the
                                   host-mapped path's single vkMapMemory per memory never collides */
    struct vk_buf staging;
    uint32_t *staging_ptr;      /* mapped for the whole size */
    bool staging_cached;
    cl_mem plain;
    VkCommandBuffer copy_cb;
    VkCommandBuffer *fill_cb[V_COUNT]; /* per variant, one per frame value */
    int nfill;
    clmem_handle *h;          /* (d), (e): the clmem variant's import */
    struct raw_import raw;    /* (d), (e): the raw variant's import */
    double *samples;          /* scratch, big enough for every measure */
    double *samples2;
    double *samples3;
};

/* ---------------------------------------------------------------- frames */

/* ------------------------------------------------------------- batches */

#define MAX_BATCH 64
#define MAX_RING 8
#define BATCH_TIMEOUT_NS (5ull * 1000000000u)

enum handoff { H_SEM, H_HOST, H_TRANSFER, H_COUNT };
extern const char *const handoff_measure[H_COUNT];
extern const char *const handoff_label[H_COUNT];

struct batch_point {
    int batch, ring;
    struct summary s[H_COUNT][V_COUNT];
};

struct batch_results {
    bool ran;
    uint64_t frame_size;
    struct summary staged;
    struct batch_point *points;
    int npoints;
    char why_not[H_COUNT][NOTE_MAX]; /* empty: measured */
};

/* One variant's semaphores in one mode: [0] device (opaque fd), [1] host. */
struct bsems {
    bool ok;
    VkSemaphore ready[MAX_RING], done[MAX_RING];
    clmem_bridge_semaphore *lib_ready[MAX_RING], *lib_done[MAX_RING]; /* clmem */
    cl_semaphore_khr cl_ready[MAX_RING], cl_done[MAX_RING];           /* raw, device ordering */
    VkFence fence[MAX_RING];                                          /* raw, host ordering */
};

/* The raw variant's own ring bookkeeping, what the library keeps per slot. */
struct braw_slot {
    bool done_pending;    /* device: done[s] signalled, no Vulkan wait yet */
    cl_event released;    /* host: the release of the slot's last batch */
    bool fence_in_flight; /* host: the fence wait is submitted */
};

struct batch_ctx {
    struct bench *b;
    uint64_t frame_size;
    int nframes; /* per variant */
    struct anchored_buf **lib;  /* clmem frames, owned by their anchors */
    clmem_keepalive **lib_anchor;
    clmem_handle **handles;
    struct vk_buf *raw_buf;     /* raw frames */
    struct raw_import *raw;
    cl_kernel *kernel[V_COUNT];         /* per frame, bound to it */
    VkCommandBuffer *fill[V_COUNT][2];  /* per frame: [0] graphics pool, [1] transfer pool */
    uint32_t *uses[V_COUNT];            /* kernel runs on each frame since the configuration began */
    struct bsems sems[V_COUNT][2];
    /* the staged copy of one frame */
    struct vk_buf staging;
    uint32_t *staging_ptr;
    cl_mem plain;
    VkCommandBuffer copy_cb;
    double *staged;
    int nstaged, staged_cap;
    /* the configuration being measured */
    int k, d;
    enum handoff handoff;
    clmem_bridge_ring *ring;
    struct braw_slot raw_slot[MAX_RING];
    uint64_t raw_produced, raw_consumed;
};

/* ---------------------------------------------------------------- functions */

/* results.c */
void record_row(const char *section, uint64_t x, const char *measure, const char *variant, const struct summary *s,
                int batch, int ring);
/* A paired difference's row (variant "paired"): the median, the bounds of
 * its 95 % interval as min and max, the pairs as reps; ring 0. */
/* The same, with the CPU time a frame of every process involved. */
void record_row_cpu(const char *section, uint64_t x, const char *measure, const char *variant, const struct summary *s,
                    int batch, int ring, double cpu_us);
void record_paired_row(const char *section, uint64_t x, const char *measure, const struct paired *p, int batch);
int result_count(void);
const struct result_row *result_at(int i);
void record_skip(const char *section, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int skip_count(void);
const struct result_skip *skip_at(int i);
void results_free(void);

/* targets.c: not_reached says why when !reached ("T reaches 2; the target
 * is at T = 16"); outcome is the verdict where the target can be judged. */
bool on_target_machine(const struct bench *b);
const struct target *record_target(const struct bench *b, const struct target_spec *spec, bool reached,
                                   const char *not_reached, int samples, double value, enum verdict outcome);
int target_count(void);
const struct target *target_at(int i);
const char *verdict_key(enum verdict v);
const char *verdict_text(const struct target *t, char *buf, size_t len);
void print_target_line(const struct target *t);
/* Why nothing is judged on a CPU OpenCL device, in one sentence. */
extern const char cpu_device_not_judged[];

/* machine.c */
void describe_machine(struct bench *b, const struct options *o);

/* util.c */
double now_us(void);
double teardown_deadline(void);
bool wait_until_set(atomic_int *flag, double deadline_us);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void check_vk(VkResult r, const char *what);
void check_cl(cl_int err, const char *what);
void check_clmem(clmem_status s, const char *what);
void watchdog(const char *what, const char *size);
void fail(struct bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *size_text(uint64_t size, char *buf, size_t len);

/* stats.c */
struct paired summarize_paired(const double *lib, const double *raw, double *diff, int n);
enum verdict paired_verdict(const struct paired *p);
enum verdict paired_verdict_within(const struct paired *p, double bound_us);
const char *paired_reads(const struct paired *p);
struct summary summarize(double *v, int n, int frames_per_rep);

/* args.c */
void parse_options(int argc, char **argv, struct options *o);

/* probe.c */
void setup(struct bench *b, const struct options *o);
clmem_bridge *bench_bridge_create(struct bench *b, uint32_t flags, const char *what);

/* vulkan.c */
void anchored_buf_release(void *user);
bool anchored_buf_free(struct anchored_buf *a, double deadline_us);
void shared_buf_create(struct bench *b, struct vk_buf *out, uint64_t size);
bool staging_buf_create(struct bench *b, struct vk_buf *out, uint64_t size);
VkCommandBuffer begin_commands(struct bench *b);
/* The same, in another command pool (the transfer-only queue's). */
VkCommandBuffer begin_commands_in(struct bench *b, VkCommandPool pool);
void end_commands(VkCommandBuffer cb);
VkCommandBuffer record_fill_word0(struct bench *b, VkBuffer buffer, uint32_t value);
VkCommandBuffer record_copy(struct bench *b, VkBuffer src, VkBuffer dst, uint64_t size);
VkCommandBuffer record_copy_in(struct bench *b, VkCommandPool pool, VkBuffer src, VkBuffer dst, uint64_t size);
void submit_and_wait(struct bench *b, VkCommandBuffer cb, const char *what);
void submit_and_wait_on(VkQueue queue, VkCommandBuffer cb, const char *what);

/* raw.c */
void raw_import(struct bench *b, const clmem_bridge_vk_memory *m, struct raw_import *r);
void raw_watch(struct raw_import *r);
void raw_acquire(struct bench *b, struct raw_import *r);
void raw_release(struct bench *b, struct raw_import *r);
void raw_teardown(struct bench *b, struct raw_import *r);
cl_semaphore_khr raw_semaphore_from_fd(struct bench *b, int fd);
cl_semaphore_khr raw_semaphore_import(struct bench *b, VkSemaphore s);
void raw_semaphore_wait(struct bench *b, struct sem_set *set);
void raw_semaphore_signal(struct bench *b, struct sem_set *set);
void raw_resolve(struct bench *b);

/* sems.c */
void sem_owner_release(void *user);
VkSemaphore semaphore_create(struct bench *b, bool exportable);
clmem_status lib_semaphore_import(struct bench *b, VkSemaphore s, clmem_bridge_semaphore_mode mode,
                                  clmem_bridge_semaphore **out);
void semaphores_setup(struct bench *b);
void semaphores_teardown(struct bench *b);

/* size.c */
void enqueue_kernel(struct bench *b, enum variant v);
void check_frames(struct bench *b, struct size_run *s, enum variant v, int frames, const char *what);
void reset_sum(struct bench *b, struct size_run *s, enum variant v);
void size_setup(struct bench *b, struct size_run *s);
void size_teardown(struct bench *b, struct size_run *s);

/* measures.c */
void run_size(struct bench *b, struct size_run *s, struct size_result *res);

/* frames.c */
void run_frames(struct bench *b, bool quick, int reps);
void print_frames(void);

/* unref.c */
void run_unref(struct bench *b, int reps);
void print_unref(void);

/* scaling.c */
void run_scaling(struct bench *b, const struct scale_plan *plan);
void print_scaling(void);

/* consumer.c: (i); without CLBlast, print_consumer says why it did not run
 * and it records no rows */
void run_consumer(struct bench *b, bool quick, int reps);
void print_consumer(void);

/* ffmpeg-frames.c: (j); without libclmem-av (or where FFmpeg's device does
 * not pair with the bench's), print_ffmpeg_frames says why it did not run
 * and it records no rows. */
void run_ffmpeg_frames(struct bench *b, bool quick, int reps);
void print_ffmpeg_frames(void);

/* ffmpeg-cl.c: (l), where configure found libavfilter (HAVE_LIBAVFILTER);
 * without it, or where FFmpeg's device does not pair with the bench's,
 * print_ffmpeg_cl says why it did not run and it records no rows. */
void run_ffmpeg_cl(struct bench *b, bool quick, int reps);
void print_ffmpeg_cl(void);

/* xproc.c: (x), where libclmem-ipc is built (HAVE_IPC); without it,
 * print_xproc says why it did not run. The consumer process is clmem-bench
 * run again with XPROC_CHILD_OPTION as its first argument, which main()
 * hands to xproc_child_main() (xproc-child.c) before anything else. */
#define XPROC_CHILD_OPTION "--xproc-consumer-process"
void run_xproc(struct bench *b, bool quick, int frames, int blocks);
void print_xproc(const struct bench *b);
int xproc_child_main(int argc, char **argv);

/* batches.c */
VkQueue handoff_queue(const struct batch_ctx *c);
int handoff_mode(enum handoff h);
void batch_setup(struct batch_ctx *c, struct bench *b, uint64_t frame_size, int nframes, int staged_cap,
                        struct batch_results *out);
void batch_teardown(struct batch_ctx *c);

/* batch-run.c */
void run_batches(struct bench *b, const struct options *o, struct batch_results *out);

/* report.c */
void print_tables(const struct size_result *res, int n);
void print_import_overhead(const struct size_result *res, int n);
void print_batch_table(const struct batch_results *r);
void print_header(const struct bench *b, const struct options *o, const uint64_t *sizes, int n);

/* csv.c */
bool write_csv(const struct bench *b, const char *path);

/* json.c */
void write_json(const struct bench *b, FILE *out, double seconds);

/* svg.c */
bool write_size_svg(const struct bench *b, const char *path);
void batch_svg_path(const char *svg, char *out, size_t len);
bool write_batch_svg(const struct bench *b, const char *path);
/* (x)'s plot: at the --svg path when no buffer size was measured, else
 * beside it (xproc_svg_path). */
void xproc_svg_path(const char *svg, char *out, size_t len);
bool write_xproc_svg(const struct bench *b, const char *path);
#endif
