/* SPDX-License-Identifier: MIT */
/* bridge/teardown-worker.c on its own, with the start of a teardown
 * replaced by a recorder (no driver needed): the hand-over returns while
 * the thread is still busy with an earlier import (a start held back by a
 * gate), every import is started exactly once, in the order handed over,
 * on one thread that is not the caller's, and its reference dropped after
 * its start; hand-overs from 8 threads at once lose or repeat none; and a
 * child made by fork() gets a thread of its own, which every later
 * hand-over wakes. (Why the thread exists:
 * the last unref's cost at 16 queues, teardown-worker.h.) */
#include "config.h"
#include "bridge/import-teardown.h"
#include "bridge/teardown-worker.h"
#include "t/lib/tap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define MANY 8000
#define HANDERS 8
#define FORK_HANDOVERS 6

/* What the recorder saw, under lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct bridge_import *started[MANY];
static unsigned started_count, put_count;
static pthread_t starter;
static bool other_starter;        /* a start ran on another thread than the first start's */
static bool put_before_start;     /* a reference was dropped before its import was started */
static bool gate_closed;          /* the next start waits until it opens */
static bool waiting_at_gate;

/* The recorder in place of import-teardown.c's. The import's `refs`
 * stands for its start count here: 1 once started. */
void clmem__import_start_teardown(struct bridge_import *rec)
{
    pthread_mutex_lock(&lock);
    if (started_count == 0)
        starter = pthread_self();
    else if (!pthread_equal(starter, pthread_self()))
        other_starter = true;
    while (gate_closed) {
        waiting_at_gate = true;
        pthread_cond_broadcast(&changed);
        pthread_cond_wait(&changed, &lock);
    }
    waiting_at_gate = false;
    atomic_fetch_add(&rec->refs, 1u);
    if (started_count < MANY)
        started[started_count] = rec;
    started_count++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

void clmem__import_put(struct bridge_import *rec)
{
    pthread_mutex_lock(&lock);
    if (atomic_load(&rec->refs) != 1u)
        put_before_start = true;
    put_count++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static struct bridge_import *records(unsigned n)
{
    struct bridge_import *r = calloc(n, sizeof *r);
    if (!r)
        tap_bail("out of memory");
    return r;
}

static void reset(void)
{
    pthread_mutex_lock(&lock);
    started_count = put_count = 0;
    other_starter = put_before_start = false;
    pthread_mutex_unlock(&lock);
}

/* Until `count` imports were started and put, or 10 s. */
static bool wait_done(unsigned count)
{
    long long until = tap_now_ns() + 10000000000ll;
    bool done;

    pthread_mutex_lock(&lock);
    while (!(done = started_count >= count && put_count >= count) && tap_now_ns() < until) {
        pthread_mutex_unlock(&lock);
        usleep(1000);
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return done;
}

static void in_order_on_the_thread(void)
{
    struct bridge_import *r = records(4);
    bool returned_while_held, in_order = true;

    reset();
    pthread_mutex_lock(&lock);
    gate_closed = true;
    pthread_mutex_unlock(&lock);
    clmem__teardown_worker_submit(&r[0]);
    /* The first start now waits at the gate on the thread; the next hand-
     * overs must return all the same. */
    pthread_mutex_lock(&lock);
    while (!waiting_at_gate)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    for (int i = 1; i < 4; i++)
        clmem__teardown_worker_submit(&r[i]);
    pthread_mutex_lock(&lock);
    returned_while_held = waiting_at_gate && started_count == 0;
    gate_closed = false;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    tap_ok(returned_while_held, "three hand-overs returned while the thread's first start was held at a gate");
    tap_ok(wait_done(4), "all four started once the gate opened, and put after");
    for (int i = 0; i < 4; i++)
        in_order = in_order && started[i] == &r[i];
    tap_ok(in_order && started_count == 4, "started in the order handed over, each once (%u starts)", started_count);
    tap_ok(!pthread_equal(starter, pthread_self()) && !other_starter,
           "every start ran on one thread, not the caller's");
    tap_ok(!put_before_start && put_count == 4, "each import's reference dropped after its start (%u puts)", put_count);
    free(r);
}

struct hander {
    pthread_t thread;
    struct bridge_import *recs;
    unsigned n;
};

static void *hand_over(void *arg)
{
    struct hander *h = arg;
    for (unsigned i = 0; i < h->n; i++)
        clmem__teardown_worker_submit(&h->recs[i]);
    return NULL;
}

static void from_many_threads(void)
{
    struct bridge_import *r = records(MANY);
    struct hander h[HANDERS];
    bool each_once = true;

    reset();
    for (int t = 0; t < HANDERS; t++) {
        h[t] = (struct hander){.recs = r + t * (MANY / HANDERS), .n = MANY / HANDERS};
        if (pthread_create(&h[t].thread, NULL, hand_over, &h[t]) != 0)
            tap_bail("pthread_create failed");
    }
    for (int t = 0; t < HANDERS; t++)
        pthread_join(h[t].thread, NULL);
    tap_ok(wait_done(MANY), "%d imports handed over from %d threads at once were all started and put", MANY,
           HANDERS);
    for (unsigned i = 0; i < MANY; i++)
        each_once = each_once && atomic_load(&r[i].refs) == 1u;
    tap_ok(each_once && started_count == MANY && put_count == MANY && !put_before_start,
           "each started exactly once (%u starts, %u puts)", started_count, put_count);
    free(r);
}

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

/* The parent's thread does not exist in a child: the child's hand-over
 * must make one (and not queue for a thread that is not there). */
static void after_fork(void)
{
    pid_t pid;
    int status = 0;

#ifdef UNDER_TSAN
    tap_skip("ThreadSanitizer does not support starting threads after a multi-threaded fork",
             "a child made by fork() starts its import on a thread of its own");
    return;
#endif
    reset();
    pid = fork();
    if (pid < 0)
        tap_bail("fork failed");
    if (pid == 0) {
        /* One at a time, each waited for: every hand-over must wake the
         * child's thread (the parent's, idle at the fork, was waiting on
         * the condition variable the child inherited). */
        struct bridge_import rec[FORK_HANDOVERS] = {{0}};
        for (unsigned i = 0; i < FORK_HANDOVERS; i++) {
            clmem__teardown_worker_submit(&rec[i]);
            if (!wait_done(i + 1))
                _exit(2 + (int)i);
        }
        _exit(!pthread_equal(starter, pthread_self()) ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "a child made by fork() started each of %d imports, handed over one at a time, on a thread of its own "
           "(exit status %d: 0 ok, 1 on the caller's thread, 2 + i when hand-over i, from 0, was not started in 10 s)",
           FORK_HANDOVERS, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(void)
{
    tap_watchdog("t/bridge/teardown-worker", 60);
    tap_plan(8);
    in_order_on_the_thread();
    from_many_threads();
    after_fork();
    return tap_done();
}
