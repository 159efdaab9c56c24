/* SPDX-License-Identifier: MIT */
/* What the operations of a fault-injection run share with the run that
 * judges them (t/fault/fault-run.h lists the calls): its list of problems,
 * the probe anchors its import calls hand out, an operation's name, the
 * bridge's finish, and the event a call gave. The run (fault-run.c) and
 * each group of operations (fault-ops-*.c) use these; they use neither. */
#include "fault-run.h"
#include "t/lib/fault-control.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A counting anchor, for the semaphore sequences. */
void count_release(void *user)
{
    atomic_fetch_add((atomic_int *)user, 1);
}

void problem(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void problem(struct run *r, const char *fmt, ...)
{
    size_t used = strlen(r->problems);
    va_list ap;

    if (used + 3 >= sizeof r->problems)
        return;
    if (used)
        used += (size_t)snprintf(r->problems + used, sizeof r->problems - used, "; ");
    va_start(ap, fmt);
    vsnprintf(r->problems + used, sizeof r->problems - used, fmt, ap);
    va_end(ap);
}

/* May run on a driver thread. The count goes last: once the main thread
 * sees it, this function touches the run no more. */
void probe_release(void *user)
{
    struct probe *p = user;
    clmem_keepalive *callers = p->r->ka;

    atomic_store(&p->destroyed_at_release, atomic_load(&p->destroyed));
    clmem_keepalive_unref(callers); /* the probe's reference on the caller's anchor */
    atomic_fetch_add(&p->released, 1);
}

static void CL_CALLBACK probe_mem_destroyed(cl_mem mem, void *user)
{
    struct probe *p = user;
    (void)mem;
    atomic_fetch_add(&p->destroyed, 1);
}

/* The next probe for an import call (made in run_begin, with nothing
 * armed: the test's own anchors must not meet the "anchor_alloc" point). */
struct probe *probe_take(struct run *r)
{
    struct probe *p;

    if (r->probes_used == NPROBES)
        tap_bail("a run made more than %d import calls; raise NPROBES", NPROBES);
    p = &r->probes[r->probes_used++];
    p->used = true;
    return p;
}

/* After the import call: the caller lets go of its reference (the import
 * holds its own), and a successful import's cl_mem is watched. Our
 * destructor callback is registered after the bridge's, so OpenCL runs it
 * first (callbacks run in reverse order of registration). */
void probe_after_import(struct run *r, struct probe *p, clmem_status s, const clmem_handle *h)
{
    if (s == CLMEM_OK && h && h != JUNK_HANDLE) {
        cl_int err = clSetMemObjectDestructorCallback(clmem_handle_mem(h), probe_mem_destroyed, p);
        if (err != CL_SUCCESS)
            problem(r, "the test's clSetMemObjectDestructorCallback on the imported cl_mem failed: %d", err);
        else
            p->watched = true;
    }
    clmem_keepalive_unref(p->ka);
    p->ka = NULL;
}

const char *op_name(struct op op)
{
    static const char *const names[] = {
        "end",               "import_vk",          "import_fd",         "handle_for_queue",
        "acquire",           "release",            "drop",              "finish",
        "vk_buffer_create",  "vk_buffer_destroy",  "semaphore_import",  "semaphore_unref",
        "bridge_create",     "bridge_unref",       "import_vk_image",   "vk_image_create",
        "vk_image_destroy",  "import_vk",          "drop",              "acquire",
        "acquire_many",      "release_many",       "ring_create",       "ring_vk_next",
        "ring_vk_submitted", "ring_cl_next",       "ring_cl_done",      "ring_vk_drain",
        "ring_unref"};
    static char buf[128];
    _Static_assert(sizeof names / sizeof names[0] == OP_RING_UNREF + 1, "a name for every op kind");

    switch (op.kind) {
    case OP_IMPORT:
    case OP_IMPORT_FD:
        snprintf(buf, sizeof buf, "%s #%d (%s, queue %d)", names[op.kind], op.slot,
                 op.range == SUB ? "sub-range" : "whole", op.queue);
        break;
    case OP_FOR_QUEUE:
        snprintf(buf, sizeof buf, "%s #%d (of #%d, queue %d)", names[op.kind], op.slot, op.src, op.queue);
        break;
    case OP_IMPORT_IMAGE:
        snprintf(buf, sizeof buf, "%s #%d (plane 0 %s, queue %d)", names[op.kind], op.slot,
                 op.flags & CLMEM_BRIDGE_IMAGE_AS_IMAGE ? "as an image" : "buffer", op.queue);
        break;
    case OP_ACQUIRE:
    case OP_RELEASE:
    case OP_DROP:
        snprintf(buf, sizeof buf, "%s #%d", names[op.kind], op.slot);
        break;
    case OP_IMPORT_PIECES:
        snprintf(buf, sizeof buf, "%s of pieces #%d..#%d (one each, queue %d)", names[op.kind], op.slot,
                 op.slot + op.count - 1, op.queue);
        break;
    case OP_DROP_PIECES:
    case OP_ACQUIRE_EACH:
        snprintf(buf, sizeof buf, "%s of #%d..#%d, one by one", names[op.kind], op.slot, op.slot + op.count - 1);
        break;
    case OP_ACQUIRE_MANY:
    case OP_RELEASE_MANY:
        if (op.count)
            snprintf(buf, sizeof buf, "%s of %d handles #%d..#%d (queue %d, an event)", names[op.kind], op.count,
                     op.slot, op.slot + op.count - 1, op.queue);
        else
            snprintf(buf, sizeof buf, "%s of no handles (queue %d, an event)", names[op.kind], op.queue);
        break;
    case OP_SEM_IMPORT:
    case OP_SEM_DROP:
        snprintf(buf, sizeof buf, "%s of semaphores #%d..#%d", names[op.kind], op.slot, op.slot + op.count - 1);
        break;
    case OP_RING_CREATE:
        snprintf(buf, sizeof buf, "%s (%d frames, batches of %d, queue %d)", names[op.kind], op.count, op.batch,
                 op.queue);
        break;
    case OP_VK_NEXT:
        snprintf(buf, sizeof buf, "%s%s", names[op.kind], op.flags & CLMEM_BRIDGE_RING_END_BATCH ? " (END_BATCH)" : "");
        break;
    case OP_BRIDGE_CREATE:
        snprintf(buf, sizeof buf, "%s (%s)", names[op.kind], op.slot ? "device found by UUID" : "device named");
        break;
    default: snprintf(buf, sizeof buf, "%s", names[op.kind]);
    }
    return buf;
}

/* clmem_bridge_finish on the run's bridge, which must return CLMEM_OK.
 * Once one has failed (a stranded import), later ones only check, so that
 * a broken run does not wait out every timeout. */
void finish(struct run *r, const char *when)
{
    clmem_status s;

    if (!r->b)
        return;
    if ((s = clmem_bridge_finish(r->b, r->finish_failed ? 0 : SETTLE_NS)) != CLMEM_OK) {
        problem(r, "clmem_bridge_finish %s returned %s: %s", when, clmem_status_name(s), clmem_error_message());
        r->finish_failed = true;
    }
}

/* The event a successful call gave: there must be one; waited for and
 * released, so that the next op starts on a quiet queue. */
void op_event_done(struct run *r, cl_event ev, struct op op)
{
    cl_int err;

    if (!ev || ev == JUNK_EVENT) {
        problem(r, "%s returned CLMEM_OK but no event", op_name(op));
        return;
    }
    if ((err = clWaitForEvents(1, &ev)) != CL_SUCCESS)
        problem(r, "waiting for the event of %s failed: %d", op_name(op), err);
    clReleaseEvent(ev);
}
