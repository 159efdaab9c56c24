/* SPDX-License-Identifier: MIT */
/* The teardown thread (teardown-worker.h): a queue of imports whose last
 * handle went, and one thread that starts their teardowns in order. */
#include "config.h"
#include "fault.h"
#include "import-teardown.h"
#include "teardown-worker.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

/* All guarded by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct bridge_import *head, *tail; /* waiting to start, oldest first, through next_start */
static bool running;                      /* the thread exists */
static bool sleeping;                     /* ...and waits on `wake`: a hand-over signals it */
static bool stopping;                     /* the library is being unloaded: no new thread, the thread ends */
static pthread_t thread;
static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;

static void *worker_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        struct bridge_import *rec;

        while (!head && !stopping) {
            sleeping = true;
            pthread_cond_wait(&wake, &lock);
            sleeping = false;
        }
        /* On unload, what is still queued stays: at exit the driver may
         * already be gone, and an unload with imports still tearing down
         * skipped the clmem_bridge_finish() that would have started them. */
        if (stopping)
            break;
        rec = head;
        head = rec->next_start;
        if (!head)
            tail = NULL;
        pthread_mutex_unlock(&lock);
        clmem__import_start_teardown(rec);
        clmem__import_put(rec);
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* With every signal blocked, so that none of the application's handlers
 * ever runs on a thread it did not make. Called with the lock held. */
static bool start_thread(void)
{
    sigset_t all, old;
    int err;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    err = pthread_create(&thread, NULL, worker_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err == 0;
}

/* fork(): the lock is held across it, so that no other thread is inside
 * it. The child has no thread, and what the parent had queued is the
 * parent's. The child makes the lock and the condition variable anew: the
 * parent's thread, idle, was waiting on `wake`, and the child's copy would
 * still count that waiter, which does not exist there (glibc then lost the
 * child's third wake-up and hung in the fourth signal: t/bridge/teardown-worker). */
static void before_fork(void) { pthread_mutex_lock(&lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&lock); }
static void after_fork_child(void)
{
    head = tail = NULL;
    running = sleeping = false;
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&wake, NULL);
}

static void register_fork_handlers(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* Is the thread there to take a hand-over, made now if need be? Once the
 * library is being unloaded, no: it takes nothing more (it may have ended
 * already). Called with the lock held. */
static bool thread_ready(void)
{
    if (!running && !stopping)
        running = start_thread();
    return running && !stopping;
}

void clmem__teardown_worker_start(void)
{
    pthread_once(&fork_handlers_once, register_fork_handlers);
    pthread_mutex_lock(&lock);
    thread_ready();
    pthread_mutex_unlock(&lock);
}

void clmem__teardown_worker_submit(struct bridge_import *rec)
{
    /* The fault point stands for a thread that could not be made: checked
     * on every hand-over, as the thread is made only once a process. */
    bool use_thread = !FAULT("teardown_thread"), queued = false;

    pthread_once(&fork_handlers_once, register_fork_handlers);
    pthread_mutex_lock(&lock);
    if (use_thread && thread_ready()) {
        rec->next_start = NULL;
        if (tail)
            tail->next_start = rec;
        else
            head = rec;
        tail = rec;
        if (sleeping) /* a busy thread finds it without a wake-up (a system call) */
            pthread_cond_signal(&wake);
        queued = true;
    }
    pthread_mutex_unlock(&lock);
    if (!queued) { /* no thread, or unloading: start it here, as the last unref did before */
        clmem__import_start_teardown(rec);
        clmem__import_put(rec);
    }
}

/* Unload (dlclose) or exit: the thread must not outlive the code it runs. */
__attribute__((destructor)) static void teardown_worker_stop(void)
{
    bool join;

    pthread_mutex_lock(&lock);
    join = running;
    stopping = true;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    if (join)
        pthread_join(thread, NULL);
}
