/* SPDX-License-Identifier: MIT */
/* clmem-bench: how the bridge's costs grow with the work: live
 * imports, re-imports, threads, queues and handles per call.
 *
 * Each row is one cost measured at several points x, and its verdict is
 * the shape of the cost against x: the slope s of log(cost) against
 * log(x) between the first and last point. flat: s < 0.15 (the cost does
 * not grow); sublinear: s < 0.8; linear: s <= 1.2 (the cost grows as x);
 * worse: s > 1.2. Every cost is per operation, so that "flat" is the goal
 * for every row but acquire_many's whole call, which handles K entries
 * and is expected to be linear (quadratic reads "worse"):
 *   hit_ranges        a cache hit plus its unref with N imports of distinct
 *                     ranges live (the hits cycle through the N keys);
 *   hit_sizes         the same where the N keys differ only in size (one
 *                     allocation, offset 0);
 *   hit_fresh_anchor  a hit (plus its unref) passing a new vk_keepalive each
 *                     time, over the first 1000 hits and over the last 1000
 *                     of N hits on one import;
 *   threads_one_bridge   hits (plus unref) from T threads, each on its own
 *                     import and queue, all on one bridge: the time per hit
 *                     that each thread sees (flat when throughput grows as
 *                     T; the table shows the throughput's scale too);
 *   threads_own_bridge   the same with a bridge per thread;
 *   handles_adjacent  clmem_handle_ref + unref from T threads, each on its own
 *                     handle, the handles allocated one after another;
 *   handles_own       the same, each thread's handle allocated by the thread;
 *   last_unref        the last clmem_handle_unref of an import with handles on
 *                     Q queues (the teardown's start; nothing pending);
 *   acquire_check     acquire_many of K handles whose last entry repeats the
 *                     first: rejected after every entry was checked, nothing
 *                     enqueued (the check alone);
 *   acquire_many      acquire_many of K distinct handles (release_many untimed).
 * Targets, set on the H200, are printed under the rows they belong to and
 * judged as targets.c says: only on an H200, at their point (N = 10000,
 * T = 16, ...), from enough samples; elsewhere they are a reference. */
#include "bench.h"

#include <math.h>
#include <pthread.h>

#define MAX_POINTS 8
#define MAX_THREADS 64
#define MAX_QUEUES 16

/* What a row's target asks of the point x = at. */
enum scale_goal {
    GOAL_NONE,
    GOAL_MEDIAN_AT_MOST,      /* microseconds per operation at most `bound` */
    GOAL_THROUGHPUT_AT_LEAST, /* throughput at least `bound` times that of x = 1 */
    GOAL_SLOPE_AT_MOST,       /* The shape up to x = at: slope at most `bound` (flat 0.15, linear 1.2) */
};

struct scale_row {
    const char *key;   /* CSV measure: scaling_<key> */
    const char *label; /* The table's */
    const char *x_name;
    bool throughput;   /* threads: also print the throughput's scale against x = 1 */
    enum scale_goal goal;
    int at;
    double bound;
    const char *target; /* The goal in words */
    int n;
    int x[MAX_POINTS];
    struct summary s[MAX_POINTS]; /* microseconds per operation */
    const struct target *judged;
};

enum { R_HIT_RANGES, R_HIT_SIZES, R_FRESH, R_THREADS_ONE, R_THREADS_OWN, R_HANDLES_ADJ, R_HANDLES_OWN,
       R_LAST_UNREF, R_ACQ_CHECK, R_ACQ_MANY, R_COUNT };

static struct scale_row rows[R_COUNT] = {
    {"hit_ranges", "cache hit + unref vs live imports, distinct ranges", "N", false, GOAL_MEDIAN_AT_MOST, 10000, 0.2,
     "at most 0.2 us at N = 10000", 0, {0}, {{0}}, NULL},
    {"hit_sizes", "cache hit + unref vs live imports, keys differing in size", "N", false, GOAL_MEDIAN_AT_MOST, 10000,
     0.2, "at most 0.2 us at N = 10000", 0, {0}, {{0}}, NULL},
    {"hit_fresh_anchor", "cache hit with a fresh anchor, by hit count", "hits", false, GOAL_SLOPE_AT_MOST, 10000, 0.15,
     "flat: the last 1000 of 10000 hits cost what the first 1000 do", 0, {0}, {{0}}, NULL},
    {"threads_one_bridge", "cache hit + unref per thread, one bridge", "T", true, GOAL_THROUGHPUT_AT_LEAST, 16, 12,
     "throughput at least x12 at T = 16", 0, {0}, {{0}}, NULL},
    {"threads_own_bridge", "cache hit + unref per thread, a bridge each", "T", true, GOAL_NONE, 0, 0, NULL, 0, {0}, {{0}}, NULL},
    {"handles_adjacent", "handle ref + unref per thread, adjacent handles", "T", true, GOAL_THROUGHPUT_AT_LEAST, 16, 14,
     "throughput at least x14 at T = 16", 0, {0}, {{0}}, NULL},
    {"handles_own", "handle ref + unref per thread, own handles", "T", true, GOAL_NONE, 0, 0, NULL, 0, {0}, {{0}}, NULL},
    {"last_unref", "last unref with handles on Q queues", "Q", false, GOAL_MEDIAN_AT_MOST, 16, 20,
     "at most 20 us at Q = 16", 0, {0}, {{0}}, NULL},
    {"acquire_check", "acquire_many rejected at its duplicate check", "K", false, GOAL_MEDIAN_AT_MOST, 256, 5,
     "at most 5 us at K = 256", 0, {0}, {{0}}, NULL},
    {"acquire_many", "acquire_many of K handles", "K", false, GOAL_SLOPE_AT_MOST, 256, 1.2,
     "linear or better up to K = 256", 0, {0}, {{0}}, NULL},
};
static bool scaling_ran;

/* ----------------------------------------------------------- verdicts */

static double slope_of(const struct scale_row *r)
{
    double c0 = r->s[0].median, c1 = r->s[r->n - 1].median;
    if (r->n < 2 || r->x[r->n - 1] <= r->x[0] || c0 <= 0 || c1 <= 0)
        return 0;
    return log(c1 / c0) / log((double)r->x[r->n - 1] / r->x[0]);
}

/* Throughput at point p against x = 1's (the first point). */
static double throughput_of(const struct scale_row *r, int p)
{
    return r->s[p].median > 0 ? r->x[p] * r->s[0].median / r->s[p].median : 0;
}

static const char *verdict_of(const struct scale_row *r)
{
    double s = slope_of(r);
    if (r->n < 2)
        return "one-point";
    return s < 0.15 ? "flat" : s < 0.8 ? "sublinear" : s <= 1.2 ? "linear" : "worse";
}

static void add_point(int row, int x, double *v, int n, int ops_per_sample)
{
    struct scale_row *r = &rows[row];
    if (r->n == MAX_POINTS)
        return;
    r->x[r->n] = x;
    r->s[r->n] = summarize(v, n, ops_per_sample);
    r->n++;
}

/* --------------------------------------------------------------- setup */

struct scale_ctx {
    struct bench *b;
    struct scale_plan plan;
    clmem_bridge *bridge;        /* its own, with the cache: clmem_bridge_finish settles it between rows
                                    (the bench's has the semaphore handoff's semaphores) */
    uint64_t align;              /* bytes between ranges: CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least 256 */
    struct anchored_buf *mem[2]; /* [0] distinct ranges, [1] sizes; owned by their anchors */
    clmem_keepalive *anchor[2];
    cl_command_queue queues[MAX_THREADS > MAX_QUEUES ? MAX_THREADS : MAX_QUEUES];
    int nqueues;
};

static void noop_release(void *user)
{
    (void)user;
}

static void scale_buf(struct scale_ctx *c, int i, uint64_t size)
{
    struct anchored_buf *a = calloc(1, sizeof *a);
    if (!a)
        die("out of memory");
    shared_buf_create(c->b, &a->buf, size);
    a->bridge = c->b->bridge; /* The bench's, which outlives every anchor */
    atomic_init(&a->freed, 0);
    c->mem[i] = a;
    if (!(c->anchor[i] = clmem_keepalive_new(anchored_buf_release, a)))
        die("clmem_keepalive_new failed");
}

/* Key i of memory `which`. 0: [i * align, +align); 1: [0, (i + 1) * align). */
static clmem_status import_key(struct scale_ctx *c, clmem_bridge *br, int which, int i, clmem_keepalive *anchor,
                               cl_command_queue q, clmem_handle **out)
{
    uint64_t offset = which ? 0 : (uint64_t)i * c->align, size = which ? (uint64_t)(i + 1) * c->align : c->align;
    return clmem_bridge_import_vk(br, &c->mem[which]->buf.mem, offset, size, c->b->path, anchor, q,
                                  CL_MEM_READ_WRITE, out);
}

static void settle(clmem_bridge *br)
{
    check_clmem(clmem_bridge_finish(br, FINISH_TIMEOUT_NS), "clmem_bridge_finish((k) scaling)");
}

/* ------------------------------------------------- hits vs live imports */

static void hits_vs_live(struct scale_ctx *c, int which, int row)
{
    int max_n = c->plan.max_imports, ops = c->plan.ops, blocks = c->plan.blocks;
    clmem_handle **live = calloc((size_t)max_n, sizeof *live);
    /* What each hit is checked against, in one array: reading it from the
     * live handle itself would add the bench's own cache miss (a handle
     * lies among the driver's allocations) to every hit it times. */
    cl_mem *live_mem = calloc((size_t)max_n, sizeof *live_mem);
    double *v = calloc((size_t)blocks, sizeof *v);
    int have = 0;

    if (!live || !live_mem || !v)
        die("out of memory");
    for (int n = 1;; n = n * 10 < max_n ? n * 10 : max_n) {
        for (; have < n; have++) {
            check_clmem(import_key(c, c->bridge, which, have, c->anchor[which], c->b->queue, &live[have]),
                        "clmem_bridge_import_vk((k) live import)");
            live_mem[have] = clmem_handle_mem(live[have]);
        }
        for (int k = 0; k < blocks; k++) {
            double t0 = now_us();
            for (int r = 0; r < ops; r++) {
                /* a stride through the keys, so that consecutive hits are not neighbours */
                int i = (int)(((long long)r * 7919) % n);
                clmem_handle *h = NULL;
                check_clmem(import_key(c, c->bridge, which, i, c->anchor[which], c->b->queue, &h),
                            "clmem_bridge_import_vk((k) hit)");
                if (clmem_handle_mem(h) != live_mem[i])
                    fail(c->b, "(k): a re-import of key %d with %d live was not a hit on its import", i, n);
                clmem_handle_unref(h);
            }
            v[k] = (now_us() - t0) / ops;
        }
        add_point(row, n, v, blocks, ops);
        if (n == max_n)
            break;
    }
    for (int i = 0; i < have; i++)
        clmem_handle_unref(live[i]);
    settle(c->bridge);
    free(live);
    free(live_mem);
    free(v);
}

/* `total` hits on one import, each with a new anchor: the first 1000 and
 * the last 1000 timed, in 10 slices each. */
static void hits_fresh_anchors(struct scale_ctx *c)
{
    int total = c->plan.fresh_hits, window = total / 2 < 1000 ? total / 2 : 1000, slice = window / 10;
    double v[2][10];
    clmem_handle *h0 = NULL;

    check_clmem(import_key(c, c->bridge, 0, 0, c->anchor[0], c->b->queue, &h0), "clmem_bridge_import_vk((k))");
    for (int done = 0, s = 0; done + slice <= total; done += slice, s++) {
        int w = done < window ? 0 : done >= total - window ? 1 : -1;
        double t0 = now_us();
        for (int r = 0; r < slice; r++) {
            clmem_keepalive *fresh = clmem_keepalive_new(noop_release, NULL);
            clmem_handle *h = NULL;
            if (!fresh)
                die("clmem_keepalive_new failed");
            check_clmem(import_key(c, c->bridge, 0, 0, fresh, c->b->queue, &h),
                        "clmem_bridge_import_vk((k) fresh anchor)");
            clmem_keepalive_unref(fresh);
            clmem_handle_unref(h);
        }
        if (w >= 0)
            v[w][w == 0 ? s : s - (total - window) / slice] = (now_us() - t0) / slice;
    }
    add_point(R_FRESH, window, v[0], 10, slice);
    add_point(R_FRESH, total, v[1], 10, slice);
    clmem_handle_unref(h0);
    settle(c->bridge);
}

/* --------------------------------------------------------------- threads */

/* The thread rows measure steady state: every thread runs until told to
 * stop, counting its operations, and the main thread reads the counts at
 * the edges of `blocks` windows of window_ms each, after one window of
 * warm-up. So a window holds only time when all T threads run: the
 * threads' start (16 wake-ups from a barrier take tens of microseconds)
 * and their stragglers are outside it, where a single timed burst per
 * thread counted them as the cost of the operation. */

struct worker {
    _Alignas(128) atomic_ulong count; /* operations so far; its own 128 bytes, as x86's adjacent-line
                                         prefetch pairs 64-byte lines */
    pthread_t thread;
    struct scale_ctx *c;
    clmem_bridge *bridge;  /* hits: the bridge they go through */
    cl_command_queue queue;
    int key;               /* hits: the thread's own key (a live import) */
    clmem_handle *handle;  /* ref/unref: the thread's handle; NULL: the thread makes its own */
    cl_mem mem;            /* what an own handle wraps */
    atomic_bool *stop;
    pthread_barrier_t *start;
};

static void *worker_run(void *arg)
{
    struct worker *w = arg;
    clmem_handle *own = NULL;
    unsigned long done = 0;

    if (!w->bridge && !w->handle) {
        check_clmem(clmem_handle_wrap(w->mem, w->queue, 0, NULL, &own), "clmem_handle_wrap((k) own handle)");
        w->handle = own;
    }
    pthread_barrier_wait(w->start);
    while (!atomic_load_explicit(w->stop, memory_order_relaxed)) {
        if (w->bridge) {
            for (int r = 0; r < 16; r++) {
                clmem_handle *h = NULL;
                check_clmem(import_key(w->c, w->bridge, 0, w->key, w->c->anchor[0], w->queue, &h),
                            "clmem_bridge_import_vk((k) thread hit)");
                clmem_handle_unref(h);
            }
            done += 16;
        } else {
            for (int r = 0; r < 64; r++)
                clmem_handle_unref(clmem_handle_ref(w->handle));
            done += 64;
        }
        atomic_store_explicit(&w->count, done, memory_order_relaxed);
    }
    if (own)
        clmem_handle_unref(own);
    return NULL;
}

static unsigned long count_all(struct worker *w, int t)
{
    unsigned long sum = 0;
    for (int i = 0; i < t; i++)
        sum += atomic_load_explicit(&w[i].count, memory_order_relaxed);
    return sum;
}

static void sleep_us(double us)
{
    struct timespec d = {(time_t)(us / 1e6), (long)(fmod(us, 1e6) * 1e3)};
    while (nanosleep(&d, &d) != 0)
        ;
}

/* T threads doing w[i]'s work (w is T workers, 128-byte aligned, their
 * roles filled in); v[k] is window k's time per operation as each thread
 * sees it: T over the operations per microsecond of all of them. */
static void run_workers(struct worker *w, int t, int windows, double window_ms, double *v)
{
    pthread_barrier_t start;
    atomic_bool stop;
    unsigned long before, after;
    double t0, t1;

    atomic_init(&stop, false);
    pthread_barrier_init(&start, NULL, (unsigned)t + 1);
    for (int i = 0; i < t; i++) {
        atomic_init(&w[i].count, 0ul);
        w[i].start = &start;
        w[i].stop = &stop;
        if (pthread_create(&w[i].thread, NULL, worker_run, &w[i]) != 0)
            die("pthread_create failed");
    }
    pthread_barrier_wait(&start);
    sleep_us(window_ms * 1e3); /* warm-up: every thread running */
    before = count_all(w, t);
    t0 = now_us();
    for (int k = 0; k < windows; k++) {
        sleep_us(window_ms * 1e3);
        after = count_all(w, t);
        t1 = now_us();
        v[k] = after > before ? t * (t1 - t0) / (double)(after - before) : t1 - t0;
        before = after;
        t0 = t1;
    }
    atomic_store(&stop, true);
    for (int i = 0; i < t; i++)
        pthread_join(w[i].thread, NULL);
    pthread_barrier_destroy(&start);
}

static struct worker *workers_alloc(void)
{
    struct worker *w = aligned_alloc(_Alignof(struct worker), MAX_THREADS * sizeof *w);
    if (!w)
        die("out of memory");
    return w;
}

/* Hits from T threads, each on its own key and queue: through one bridge
 * (own_bridge false) or a bridge each. */
static void threads_hits(struct scale_ctx *c, bool own_bridge)
{
    int max_t = c->plan.max_threads, windows = c->plan.blocks < 16 ? c->plan.blocks : 16;
    struct worker *w = workers_alloc();
    clmem_bridge *bridges[MAX_THREADS];
    clmem_handle *live[MAX_THREADS];
    double v[16];

    for (int i = 0; i < max_t; i++) {
        bridges[i] = own_bridge ? bench_bridge_create(c->b, 0, "clmem_bridge_create((k) a bridge per thread)")
                                : clmem_bridge_ref(c->bridge);
        check_clmem(import_key(c, bridges[i], 0, i, c->anchor[0], c->queues[i], &live[i]),
                    "clmem_bridge_import_vk((k) thread's import)");
    }
    for (int t = 1; t <= max_t; t = t * 2 <= max_t ? t * 2 : max_t) {
        for (int i = 0; i < t; i++)
            w[i] = (struct worker){.c = c, .bridge = bridges[i], .queue = c->queues[i], .key = i};
        run_workers(w, t, windows, c->plan.window_ms, v);
        add_point(own_bridge ? R_THREADS_OWN : R_THREADS_ONE, t, v, windows, 0);
        if (t == max_t)
            break;
    }
    for (int i = 0; i < max_t; i++)
        clmem_handle_unref(live[i]);
    for (int i = 0; i < max_t; i++) {
        settle(bridges[i]);
        clmem_bridge_unref(bridges[i]);
    }
    free(w);
}

/* ref + unref from T threads on handles allocated one after another here
 * (adjacent), or each by its thread (own). */
static void threads_handles(struct scale_ctx *c, bool adjacent, cl_mem mem)
{
    int max_t = c->plan.max_threads, windows = c->plan.blocks < 16 ? c->plan.blocks : 16;
    struct worker *w = workers_alloc();
    clmem_handle *h[MAX_THREADS] = {NULL};
    double v[16];

    for (int i = 0; adjacent && i < max_t; i++)
        check_clmem(clmem_handle_wrap(mem, c->queues[i], 0, NULL, &h[i]), "clmem_handle_wrap((k) adjacent)");
    for (int t = 1; t <= max_t; t = t * 2 <= max_t ? t * 2 : max_t) {
        for (int i = 0; i < t; i++)
            w[i] = (struct worker){.c = c, .queue = c->queues[i], .handle = h[i], .mem = mem};
        run_workers(w, t, windows, c->plan.window_ms, v);
        add_point(adjacent ? R_HANDLES_ADJ : R_HANDLES_OWN, t, v, windows, 0);
        if (t == max_t)
            break;
    }
    for (int i = 0; i < max_t; i++)
        clmem_handle_unref(h[i]);
    free(w);
}

/* ------------------------------------------------------ queues, batches */

/* The last unref of an import with handles on Q queues (each rep a new
 * import: the last one was torn down); the teardown finished, untimed. */
static void last_unref_vs_queues(struct scale_ctx *c)
{
    int reps = c->plan.reps;
    double *v = calloc((size_t)reps, sizeof *v);
    if (!v)
        die("out of memory");
    for (int q = 1; q <= c->plan.max_queues; q = q * 2 <= c->plan.max_queues ? q * 2 : c->plan.max_queues) {
        for (int r = 0; r < reps; r++) {
            clmem_handle *h[MAX_QUEUES];
            double t0;
            check_clmem(import_key(c, c->bridge, 0, 0, c->anchor[0], c->queues[0], &h[0]),
                        "clmem_bridge_import_vk((k) last unref)");
            for (int i = 1; i < q; i++)
                check_clmem(clmem_bridge_handle_for_queue(h[0], c->queues[i], &h[i]),
                            "clmem_bridge_handle_for_queue((k))");
            for (int i = 1; i < q; i++)
                clmem_handle_unref(h[i]);
            t0 = now_us();
            clmem_handle_unref(h[0]);
            v[r] = now_us() - t0;
            settle(c->bridge);
        }
        add_point(R_LAST_UNREF, q, v, reps, 1);
        if (q == c->plan.max_queues)
            break;
    }
    free(v);
}

static void acquire_vs_count(struct scale_ctx *c)
{
    static const int counts[] = {2, 16, 64, 256};
    int max_k = c->plan.max_batch, reps = c->plan.reps * 2;
    clmem_handle **h = calloc((size_t)max_k, sizeof *h);
    clmem_handle **list = calloc((size_t)max_k, sizeof *list);
    double *v = calloc((size_t)reps, sizeof *v), *v2 = calloc((size_t)reps, sizeof *v2);

    if (!h || !list || !v || !v2)
        die("out of memory");
    for (int i = 0; i < max_k; i++) {
        check_clmem(import_key(c, c->bridge, 0, i, c->anchor[0], c->b->queue, &h[i]),
                    "clmem_bridge_import_vk((k) acquire_many)");
        list[i] = h[i];
    }
    /* The rejected calls first, for every K: nothing runs on the device
     * then (a CPU OpenCL device's worker threads, busy after the handoffs
     * below, would take the cores from the timed thread). */
    for (unsigned p = 0; p < sizeof counts / sizeof counts[0] && counts[p] <= max_k; p++) {
        int k = counts[p];
        for (int r = 0; r < reps; r++) {
            double t0;
            clmem_status s;
            list[k - 1] = h[0];
            t0 = now_us();
            s = clmem_bridge_acquire_many(c->bridge, (cl_uint)k, list, c->b->queue, 0, NULL, NULL);
            v[r] = now_us() - t0;
            list[k - 1] = h[k - 1];
            if (s != CLMEM_ERR_INVALID_VALUE)
                fail(c->b, "(k): acquire_many of %d handles with a duplicate returned %s", k, clmem_status_name(s));
        }
        add_point(R_ACQ_CHECK, k, v, reps, 1);
    }
    for (unsigned p = 0; p < sizeof counts / sizeof counts[0] && counts[p] <= max_k; p++) {
        int k = counts[p];
        for (int r = 0; r < reps; r++) {
            double t0;
            clmem_status s;
            t0 = now_us();
            s = clmem_bridge_acquire_many(c->bridge, (cl_uint)k, list, c->b->queue, 0, NULL, NULL);
            v2[r] = now_us() - t0;
            check_clmem(s, "clmem_bridge_acquire_many((k))");
            check_clmem(clmem_bridge_release_many(c->bridge, (cl_uint)k, list, c->b->queue, 0, NULL, NULL),
                        "clmem_bridge_release_many((k))");
            check_cl(clFinish(c->b->queue), "clFinish((k) acquire_many)");
        }
        add_point(R_ACQ_MANY, k, v2, reps, 1);
    }
    for (int i = 0; i < max_k; i++)
        clmem_handle_unref(h[i]);
    settle(c->bridge);
    free(h);
    free(list);
    free(v);
    free(v2);
}

/* ---------------------------------------------------------------- record */

/* A row's target, judged at its point: the last point for a shape, which
 * must be the target's; else the point x = at. */
static const struct target *judge_row(struct bench *b, const struct scale_row *r)
{
    char measure[64], not_reached[160];
    /* a throughput or a shape compares points of the same run */
    struct target_spec spec = {"k", measure, (uint64_t)r->at, r->target, r->goal != GOAL_MEDIAN_AT_MOST};
    int p = 0, samples;
    double value;
    bool met;

    snprintf(measure, sizeof measure, "scaling_%s", r->key);
    if (r->goal == GOAL_SLOPE_AT_MOST)
        p = r->n >= 2 && r->x[r->n - 1] == r->at ? r->n - 1 : -1;
    else
        for (p = r->n - 1; p >= 0 && r->x[p] != r->at; p--)
            ;
    if (p < 0) {
        snprintf(not_reached, sizeof not_reached, "%s reaches %d here; the target is at %s = %d", r->x_name,
                 r->n ? r->x[r->n - 1] : 0, r->x_name, r->at);
        return record_target(b, &spec, false, not_reached, 0, 0, VERDICT_NOT_REACHED);
    }
    samples = r->s[p].reps;
    switch (r->goal) {
    case GOAL_MEDIAN_AT_MOST:
        value = r->s[p].median;
        met = value <= r->bound;
        break;
    case GOAL_THROUGHPUT_AT_LEAST:
        value = throughput_of(r, p);
        met = value >= r->bound;
        break;
    default: /* GOAL_SLOPE_AT_MOST: the samples of both ends count */
        value = slope_of(r);
        met = value <= r->bound;
        samples = r->s[0].reps < samples ? r->s[0].reps : samples;
        break;
    }
    return record_target(b, &spec, true, NULL, samples, value, met ? VERDICT_MET : VERDICT_MISSED);
}

/* The scaling_ rows: size_bytes is the point's x, the variant the row's
 * verdict, batch and ring 0; and the targets. */
static void record_scaling(struct bench *b)
{
    for (int i = 0; i < R_COUNT; i++) {
        char measure[64];
        snprintf(measure, sizeof measure, "scaling_%s", rows[i].key);
        for (int p = 0; p < rows[i].n; p++)
            record_row("k", (uint64_t)rows[i].x[p], measure, verdict_of(&rows[i]), &rows[i].s[p], 0, 0);
        if (rows[i].goal != GOAL_NONE)
            rows[i].judged = judge_row(b, &rows[i]);
    }
}

/* ------------------------------------------------------------------ run */

void run_scaling(struct bench *b, const struct scale_plan *plan)
{
    struct scale_ctx c = {.b = b, .plan = *plan};
    cl_uint align_bits = 0;
    int nq = plan->max_threads > plan->max_queues ? plan->max_threads : plan->max_queues;
    uint64_t span;
    cl_int err;

    if (plan->max_threads > MAX_THREADS || plan->max_queues > MAX_QUEUES)
        die("(k): at most %d threads and %d queues", MAX_THREADS, MAX_QUEUES);
    clGetDeviceInfo(b->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    c.align = align_bits / 8 > 256 ? align_bits / 8 : 256;
    span = (uint64_t)(plan->max_imports > plan->max_batch ? plan->max_imports : plan->max_batch) * c.align;
    if (span < (uint64_t)plan->max_threads * c.align)
        span = (uint64_t)plan->max_threads * c.align;
    printf("\n(k) scaling on the %s path: cost per operation against live imports N (up to %d), hits with a\n"
           "    fresh anchor (%d), threads T (up to %d), queues Q (up to %d) and acquire_many's K (up to %d);\n"
           "    ranges of %llu bytes in allocations of %llu KiB\n",
           clmem_bridge_path_name(b->path), plan->max_imports, plan->fresh_hits, plan->max_threads,
           plan->max_queues, plan->max_batch, (unsigned long long)c.align, (unsigned long long)(span / KIB));
    fflush(stdout);
    scale_buf(&c, 0, span);
    scale_buf(&c, 1, (uint64_t)plan->max_imports * c.align);
    c.bridge = bench_bridge_create(b, 0, "clmem_bridge_create((k))");
    for (int i = 0; i < nq; i++) {
        c.queues[i] = clCreateCommandQueueWithProperties(b->context, b->device, NULL, &err);
        check_cl(err, "clCreateCommandQueueWithProperties((k))");
    }
    c.nqueues = nq;

    watchdog("(k) cache hits vs live imports", "");
    hits_vs_live(&c, 0, R_HIT_RANGES);
    hits_vs_live(&c, 1, R_HIT_SIZES);
    watchdog("(k) hits with fresh anchors", "");
    hits_fresh_anchors(&c);
    watchdog("(k) threads", "");
    threads_hits(&c, false);
    threads_hits(&c, true);
    {
        clmem_handle *h = NULL;
        check_clmem(import_key(&c, c.bridge, 0, 0, c.anchor[0], b->queue, &h), "clmem_bridge_import_vk((k))");
        threads_handles(&c, true, clmem_handle_mem(h));
        threads_handles(&c, false, clmem_handle_mem(h));
        clmem_handle_unref(h);
        settle(c.bridge);
    }
    watchdog("(k) last unref vs queues", "");
    last_unref_vs_queues(&c);
    watchdog("(k) acquire_many vs K", "");
    acquire_vs_count(&c);
    alarm(0);

    clmem_bridge_unref(c.bridge);
    for (int i = 0; i < nq; i++)
        clReleaseCommandQueue(c.queues[i]);
    for (int i = 0; i < 2; i++) {
        struct anchored_buf *a = c.mem[i];
        clmem_keepalive_unref(c.anchor[i]);
        if (!anchored_buf_free(a, teardown_deadline()))
            fail(b, "(k): a buffer's anchor was not released %d s after its last import went", DESTROY_WAIT_S);
    }
    scaling_ran = true;
    record_scaling(b);
}

/* ---------------------------------------------------------------- report */

void print_scaling(void)
{
    if (!scaling_ran)
        return;
    printf("\nScaling: microseconds per operation at each x (median of the samples), the verdict the shape of\n"
           "cost against x (flat, sublinear, linear, worse); for threads also the throughput against T = 1\n");
    for (int i = 0; i < R_COUNT; i++) {
        const struct scale_row *r = &rows[i];
        if (!r->n)
            continue;
        printf("%-60s %-9s (slope %.2f)\n", r->label, verdict_of(r), slope_of(r));
        for (int p = 0; p < r->n; p++) {
            printf("    %-5s = %-6d %10.3f us  (min %.3f, max %.3f)", r->x_name, r->x[p], r->s[p].median, r->s[p].min,
                   r->s[p].max);
            if (r->throughput && r->s[p].median > 0)
                printf("  throughput x%.2f", throughput_of(r, p));
            printf("\n");
        }
        if (r->judged)
            print_target_line(r->judged);
    }
}
