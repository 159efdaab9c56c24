/* SPDX-License-Identifier: MIT */
/* Handles and anchors shared between threads: the reference counts stay
 * exact and the release callback runs exactly once, after the last unref.
 * A lost update (a non-atomic count) shows up as an early or missing
 * release, or as the wrong count left over afterwards. */
#include "clmem.h"
#include "t/lib/cl-fixture.h"
#include "t/lib/tap.h"

#include <pthread.h>
#include <stdatomic.h>

#define NTHREADS 8
#define PAIRS 100000 /* ref/unref pairs per thread on each object */
#define WRAPS 20000  /* wrap/unref per thread */
#define RACES 200    /* rounds of the last-unref race */

static atomic_int release_calls;

static void count_release(void *user)
{
    (void)user;
    atomic_fetch_add(&release_calls, 1);
}

/* What every thread works on; main sets it up before starting them. */
struct shared {
    pthread_barrier_t start; /* so that the threads really overlap */
    clmem_handle *handle;
    clmem_keepalive *anchor;
    cl_mem mem;
    cl_command_queue queue;
    atomic_int bad_returns;    /* ref did not return its argument, or wrap failed */
    atomic_int early_releases; /* the callback ran while a thread still held a reference */
};

/* Part 1: ref/unref pairs on one shared handle and one shared anchor. */
static void *ref_unref_worker(void *arg)
{
    struct shared *s = arg;

    pthread_barrier_wait(&s->start);
    for (int i = 0; i < PAIRS; i++) {
        if (clmem_handle_ref(s->handle) != s->handle)
            atomic_fetch_add(&s->bad_returns, 1);
        if (clmem_keepalive_ref(s->anchor) != s->anchor)
            atomic_fetch_add(&s->bad_returns, 1);
        /* Both references are held here, so a release now is early. */
        if (atomic_load_explicit(&release_calls, memory_order_relaxed) != 0)
            atomic_fetch_add(&s->early_releases, 1);
        clmem_handle_unref(s->handle);
        clmem_keepalive_unref(s->anchor);
    }
    return NULL;
}

/* Part 2: each thread wraps and drops handles of its own on a shared anchor. */
static void *wrap_worker(void *arg)
{
    struct shared *s = arg;

    pthread_barrier_wait(&s->start);
    for (int i = 0; i < WRAPS; i++) {
        clmem_handle *h = NULL;
        if (clmem_handle_wrap(s->mem, s->queue, (uint32_t)i, s->anchor, &h) != CLMEM_OK ||
            clmem_handle_keepalive(h) != s->anchor || clmem_handle_row_pitch(h) != (uint32_t)i)
            atomic_fetch_add(&s->bad_returns, 1);
        clmem_handle_unref(h);
    }
    return NULL;
}

/* Part 3: each thread owns one handle on the shared anchor (main dropped
 * its own reference), churns it a little and drops it: the threads race
 * for the last unref, and exactly one of them must run the release. */
struct racer {
    struct shared *s;
    clmem_handle *own;
};

static void *race_worker(void *arg)
{
    struct racer *r = arg;

    pthread_barrier_wait(&r->s->start);
    for (int i = 0; i < 100; i++)
        clmem_handle_unref(clmem_handle_ref(r->own));
    if (atomic_load(&release_calls) != 0)
        atomic_fetch_add(&r->s->early_releases, 1);
    clmem_handle_unref(r->own);
    return NULL;
}

static void run_threads(struct shared *s, void *(*fn)(void *), void *args, size_t arg_size)
{
    pthread_t threads[NTHREADS];

    pthread_barrier_init(&s->start, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++)
        if (pthread_create(&threads[i], NULL, fn, (char *)args + (size_t)i * arg_size) != 0)
            tap_bail("pthread_create failed");
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&s->start);
}

/* Every buffer, image and queue the test made is gone again: OpenCL objects
 * retain their context, so the fixture's context must be held only by the
 * fixture and its queue, and that queue only by the fixture. */
int main(void)
{
    struct cl_fixture f;
    struct shared s = {0};
    struct racer racers[NTHREADS];
    int early = 0, wrong = 0;

    cl_fixture_open(&f);
    s.mem = cl_fixture_buffer(&f, 256);
    s.queue = f.queue;
    tap_plan(12);

    /* Part 1. The handle holds one anchor reference, main holds another. */
    atomic_store(&release_calls, 0);
    s.anchor = clmem_keepalive_new(count_release, NULL);
    if (clmem_handle_wrap(s.mem, s.queue, 0, s.anchor, &s.handle) != CLMEM_OK)
        tap_bail("clmem_handle_wrap failed: %s", clmem_error_message());
    run_threads(&s, ref_unref_worker, &s, 0);
    tap_is_int(atomic_load(&s.bad_returns), 0, "%d threads x %d ref/unref pairs: every ref returned its argument",
               NTHREADS, PAIRS);
    tap_is_int(atomic_load(&s.early_releases), 0, "the release never ran while the threads held references");
    tap_is_int(atomic_load(&release_calls), 0, "the release has not run after the threads finished");
    clmem_keepalive_unref(s.anchor);
    tap_is_int(atomic_load(&release_calls), 0, "main's anchor unref leaves exactly the handle's reference");
    clmem_handle_unref(s.handle);
    tap_is_int(atomic_load(&release_calls), 1, "the handle's final unref runs the release exactly once");

    /* Part 2. */
    atomic_store(&release_calls, 0);
    s.bad_returns = 0;
    s.anchor = clmem_keepalive_new(count_release, NULL);
    run_threads(&s, wrap_worker, &s, 0);
    tap_is_int(atomic_load(&s.bad_returns), 0, "%d threads x %d wraps on one anchor: all succeeded", NTHREADS,
               WRAPS);
    tap_is_int(atomic_load(&release_calls), 0, "the anchor outlived all those handles");
    clmem_keepalive_unref(s.anchor);
    tap_is_int(atomic_load(&release_calls), 1, "and main's unref, the last, releases it once");

    /* Part 3. */
    s.early_releases = 0;
    for (int round = 0; round < RACES; round++) {
        atomic_store(&release_calls, 0);
        s.anchor = clmem_keepalive_new(count_release, NULL);
        for (int i = 0; i < NTHREADS; i++) {
            racers[i].s = &s;
            if (clmem_handle_wrap(s.mem, s.queue, 0, s.anchor, &racers[i].own) != CLMEM_OK)
                tap_bail("clmem_handle_wrap failed: %s", clmem_error_message());
        }
        clmem_keepalive_unref(s.anchor); /* the handles hold it now */
        if (atomic_load(&release_calls) != 0)
            early++;
        run_threads(&s, race_worker, racers, sizeof racers[0]);
        if (atomic_load(&release_calls) != 1)
            wrong++;
    }
    early += atomic_load(&s.early_releases);
    tap_is_int(early, 0, "%d rounds of %d threads racing for the last unref: no early release", RACES, NTHREADS);
    tap_is_int(wrong, 0, "in every round the release ran exactly once");

    clReleaseMemObject(s.mem);
    cl_fixture_expect_no_leaks(&f);
    cl_fixture_close(&f);
    return tap_done();
}
