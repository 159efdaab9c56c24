/* SPDX-License-Identifier: MIT */
/* Internal: the thread that starts imports' teardowns, so that the last
 * clmem_handle_unref of an import does not pay for them. Starting a
 * teardown enqueues a marker, a flush and an event callback on every
 * queue a handle of the import was made for (import-teardown.c): about
 * 10 us a queue on the H200, 155 us for 16 queues (clmem-bench's scaling
 * measure). The last unref lists the import as tearing down and hands it
 * here; this thread, or clmem_bridge_finish() if it gets there first,
 * starts it. (The
 * host-mapped path's unmap, which must come before the caller's next
 * command on the same host memory, stays in the unref.)
 *
 * One thread for the process, made with the first bridge (or, failing
 * that, at the first hand-over) and joined when the library is unloaded
 * (or at exit). A marker enqueued a little later
 * still waits for everything enqueued before the last unref, which is all
 * the teardown's rule asks. Where the thread cannot be made, the teardown
 * starts on the caller's thread. After fork() the
 * child starts a thread of its own when it needs one. */
#ifndef CLMEM_TEARDOWN_WORKER_H
#define CLMEM_TEARDOWN_WORKER_H

struct bridge_import;

/* Make the thread now if it is not there yet, so that the first last
 * unref does not pay for making it (under valgrind that took 38 ms of the
 * unref's CPU: t/bridge/bridge-lifetime). Best effort: where it cannot be made,
 * the first hand-over tries again. */
void clmem__teardown_worker_start(void);

/* Hand rec, already listed as tearing down, to the thread, which calls
 * clmem__import_start_teardown(rec) (import-teardown.c) and drops one
 * reference on rec afterwards: the caller gives that reference. */
void clmem__teardown_worker_submit(struct bridge_import *rec);

#endif
