/* SPDX-License-Identifier: MIT */
/* Ownership handoff between Vulkan and OpenCL, one code path for every
 * path and every count: the import's path does the enqueue (path-fd.c: the
 * extension's acquire/release, one call for all the fd-path buffers of a
 * call; path-host.c: the unmap/map CL_MEM_USE_HOST_PTR defines as its sync
 * points, one per buffer); the checks, the state, the grouping into
 * commands, the one event for the whole call and the undo of a call that
 * failed part way are here. clmem_bridge_acquire() is acquire_many with a
 * count of 1, and the teardown's release is a count-1 handoff as well. */
#include "config.h"
#include "export.h"
#include "fail.h"
#include "fault.h"
#include "import.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Calls up to this many handles use the stack for their scratch lists. */
#define HANDOFF_STACK 16

/* One command of a call: order[first .. first + count) go to one path op. */
struct handoff_cmd {
    const struct import_ops *ops;
    cl_uint first, count;
    bool stuck; /* enqueued, and its undo failed */
};

static const char *direction(bool to_opencl)
{
    return to_opencl ? "to OpenCL" : "back to Vulkan";
}

/* "The handle" for a one-handle call, "Entry 3" otherwise. */
static const char *entry_label(cl_uint count, cl_uint i, char *buf, size_t len)
{
    if (count == 1)
        snprintf(buf, len, "The handle");
    else
        snprintf(buf, len, "Entry %u", (unsigned)i);
    return buf;
}

/* The duplicate check of a call's records. Up to HANDOFF_STACK entries a
 * pairwise scan as each entry is checked (at most 120 comparisons, no
 * allocation); above that, one pass through an open-addressing table of
 * the records seen, so that K = 256 costs a few microseconds rather than
 * K * K / 2 comparisons. */

/* Is rec among recs[0, i)? *k_out: where. */
static bool duplicate_before(struct bridge_import *const *recs, cl_uint i, const struct bridge_import *rec,
                             cl_uint *k_out)
{
    for (cl_uint k = 0; k < i; k++)
        if (recs[k] == rec) {
            *k_out = k;
            return true;
        }
    return false;
}

struct seen_rec {
    const struct bridge_import *rec; /* NULL: a free slot */
    cl_uint entry;                   /* where it was first */
};

/* Is any record in recs[0, count) twice? Then *i_out is the lowest entry
 * that repeats an earlier one and *k_out that record's first entry: what
 * the pairwise scan reports. The table holds at least twice as many slots
 * as entries, so probes stay short. When it cannot be allocated, the
 * pairwise scan itself (slow, but the answer is the same). */
static bool first_duplicate(struct bridge_import *const *recs, cl_uint count, cl_uint *k_out, cl_uint *i_out)
{
    size_t slots = 32;
    struct seen_rec *seen;
    bool found = false;

    while (slots < 2 * (size_t)count)
        slots *= 2;
    if (!(seen = calloc(slots, sizeof *seen))) {
        for (cl_uint i = 1; i < count; i++)
            if (duplicate_before(recs, i, recs[i], k_out)) {
                *i_out = i;
                return true;
            }
        return false;
    }
    for (cl_uint i = 0; i < count && !found; i++) {
        /* records are heap pointers: drop the alignment bits, then spread */
        size_t j = (size_t)(((uint64_t)(uintptr_t)recs[i] >> 4) * 0x9E3779B97F4A7C15ull >> 32) & (slots - 1);
        while (seen[j].rec && seen[j].rec != recs[i])
            j = (j + 1) & (slots - 1);
        if (seen[j].rec) {
            *k_out = seen[j].entry;
            *i_out = i;
            found = true;
        } else {
            seen[j] = (struct seen_rec){recs[i], i};
        }
    }
    free(seen);
    return found;
}

static clmem_status duplicate_error(cl_uint k, cl_uint i)
{
    return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                       "Entries %u and %u are the same imported memory (handles of one import share one state): "
                       "list it once.",
                       (unsigned)k, (unsigned)i);
}

clmem_status clmem__handoff_check(const clmem_bridge *b, cl_uint count, const clmem_handle *const *handles,
                                  cl_command_queue queue, struct bridge_import **recs_out)
{
    char label[32];
    cl_uint k = 0, i;

    for (i = 0; i < count; i++) {
        const clmem_handle *h = handles[i];
        struct bridge_import *rec;

        if (!h)
            return clmem__fail(CLMEM_ERR_NULL_POINTER, "%s is NULL.",
                               entry_label(count, i, label, sizeof label));
        rec = clmem__import_of_handle(h);
        if (!rec)
            return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                               "%s did not come from clmem-bridge, so there is nothing to hand over.",
                               entry_label(count, i, label, sizeof label));
        if (rec->bridge != b)
            return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                               "%s belongs to bridge %p, not to bridge %p.",
                               entry_label(count, i, label, sizeof label), (void *)rec->bridge, (void *)b);
        if (!queue)
            return fail_null("queue");
        if (atomic_load(&rec->in_ring))
            return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                               "%s is a frame of a frame ring, which alone hands it over.",
                               entry_label(count, i, label, sizeof label));
        /* The teardown hands an import left acquired back on its acquire's
         * queue and waits for the queues in its list: an acquire on a queue
         * outside the list would escape both. */
        if (!clmem__import_has_queue(rec, queue))
            return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                               "%s: no handle of its import was made for queue %p; make one with "
                               "clmem_bridge_handle_for_queue(), so that the import's teardown waits for that "
                               "queue too.",
                               entry_label(count, i, label, sizeof label), (void *)queue);
        if (count <= HANDOFF_STACK && duplicate_before(recs_out, i, rec, &k))
            return duplicate_error(k, i);
        recs_out[i] = rec;
    }
    /* Longer lists: the duplicates in one pass, O(K). The first reported
     * is the one the pairwise scan above would have found (but
     * an entry that fails its own checks is reported first, wherever it
     * is in the list). */
    if (count > HANDOFF_STACK && first_duplicate(recs_out, count, &k, &i))
        return duplicate_error(k, i);
    return CLMEM_OK;
}

/* The commands of a call: one for all the records whose path batches and
 * shares one op, then one per record of the other paths. */
static cl_uint group(struct bridge_import *const *recs, cl_uint count, struct bridge_import **order,
                     struct handoff_cmd *cmds)
{
    cl_uint pos = 0, ncmds = 0;

    for (cl_uint i = 0; i < count; i++) {
        const struct import_ops *ops = recs[i]->ops;
        bool seen = false;

        if (!ops->batches)
            continue;
        for (cl_uint k = 0; k < i && !seen; k++)
            seen = recs[k]->ops->batches && recs[k]->ops->acquire == ops->acquire;
        if (seen)
            continue;
        cmds[ncmds] = (struct handoff_cmd){ops, pos, 0, false};
        for (cl_uint j = i; j < count; j++)
            if (recs[j]->ops->batches && recs[j]->ops->acquire == ops->acquire)
                order[pos++] = recs[j];
        cmds[ncmds].count = pos - cmds[ncmds].first;
        ncmds++;
    }
    for (cl_uint i = 0; i < count; i++)
        if (!recs[i]->ops->batches) {
            cmds[ncmds++] = (struct handoff_cmd){recs[i]->ops, pos, 1, false};
            order[pos++] = recs[i];
        }
    return ncmds;
}

/* Undo commands [0, done) of a call that failed after them: each one's
 * inverse, after its own event. Returns how many records could not be
 * handed back (their commands are marked stuck). */
static cl_uint undo(bool to_opencl, struct bridge_import **order, struct handoff_cmd *cmds, cl_uint done,
                    cl_event *events, cl_command_queue queue)
{
    cl_uint stuck = 0;

    for (cl_uint c = done; c-- > 0;) {
        const struct import_ops *ops = cmds[c].ops;
        const char *call = NULL;
        cl_int err = (to_opencl ? ops->release : ops->acquire)(&order[cmds[c].first], cmds[c].count, queue, 1,
                                                                &events[c], NULL, &call);
        if (err != CL_SUCCESS) {
            cmds[c].stuck = true;
            stuck += cmds[c].count;
        }
    }
    return stuck;
}

clmem_status clmem__import_handoff(bool to_opencl, struct bridge_import *const *recs, cl_uint count,
                                   cl_command_queue queue, cl_uint n, const cl_event *wait, cl_event *event_out)
{
    struct bridge_import *order_stack[HANDOFF_STACK], **order = order_stack;
    struct handoff_cmd cmds_stack[HANDOFF_STACK], *cmds = cmds_stack;
    cl_event events_stack[HANDOFF_STACK], *events = events_stack;
    void *scratch = NULL;
    const char *call = NULL;
    cl_uint ncmds, done = 0, stuck = 0;
    cl_int err = CL_SUCCESS;
    char label[32];

    if (event_out)
        *event_out = NULL;
    if (count > HANDOFF_STACK) {
        scratch = FAULT("handoff_alloc") ? NULL
                                         : malloc(count * (sizeof *order + sizeof *cmds + sizeof *events));
        if (!scratch)
            return clmem__fail(CLMEM_ERR_NO_MEMORY,
                               "Allocating the lists for a handoff of %u buffers failed.", (unsigned)count);
        cmds = scratch;
        order = (struct bridge_import **)(cmds + count);
        events = (cl_event *)(order + count);
    }

    /* The state first, so that a second call for the same memory (which
     * the header forbids racing with this one) cannot enqueue too. */
    for (cl_uint i = 0; i < count; i++) {
        _Bool expected = !to_opencl;
        if (!atomic_compare_exchange_strong(&recs[i]->acquired, &expected, to_opencl)) {
            for (cl_uint k = 0; k < i; k++)
                atomic_store(&recs[k]->acquired, !to_opencl);
            free(scratch);
            return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                               to_opencl ? "%s is already acquired by OpenCL; release it first. Nothing was "
                                           "handed over."
                                         : "%s is not acquired by OpenCL, so it cannot be released. Nothing was "
                                           "handed back.",
                               entry_label(count, i, label, sizeof label));
        }
    }

    ncmds = group(recs, count, order, cmds);
    for (; done < ncmds; done++) {
        const struct import_ops *ops = cmds[done].ops;
        /* One command: its event is the call's. Several: each has one, for
         * the marker and for an undo. */
        cl_event *ev = ncmds > 1 ? &events[done] : event_out;
        err = (to_opencl ? ops->acquire : ops->release)(&order[cmds[done].first], cmds[done].count, queue, n, wait,
                                                        ev, &call);
        if (err != CL_SUCCESS)
            break;
    }
    if (err == CL_SUCCESS && ncmds > 1 && event_out) {
        call = "clEnqueueMarkerWithWaitList";
        err = FAULT("clEnqueueMarkerWithWaitList(handoff)")
                  ? CL_OUT_OF_RESOURCES
                  : clEnqueueMarkerWithWaitList(queue, ncmds, events, event_out);
        if (err != CL_SUCCESS && event_out)
            *event_out = NULL;
    }
    if (err != CL_SUCCESS)
        stuck = undo(to_opencl, order, cmds, done, events, queue);
    if (ncmds > 1)
        for (cl_uint c = 0; c < done; c++)
            clReleaseEvent(events[c]);

    if (err == CL_SUCCESS) {
        if (to_opencl) /* the teardown hands it back there if the user does not */
            for (cl_uint i = 0; i < count; i++)
                recs[i]->acquired_on = queue;
        free(scratch);
        return CLMEM_OK;
    }
    /* Back to where it was, but for memory whose undo failed: its state
     * tells where the memory really is. */
    for (cl_uint i = 0; i < count; i++)
        atomic_store(&recs[i]->acquired, !to_opencl);
    for (cl_uint c = 0; c < done; c++)
        for (cl_uint i = 0; cmds[c].stuck && i < cmds[c].count; i++) {
            struct bridge_import *rec = order[cmds[c].first + i];
            if (to_opencl)
                rec->acquired_on = queue;
            atomic_store(&rec->acquired, to_opencl);
        }
    free(scratch);
    if (stuck)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, call, err,
                               "Handing %u imported buffer%s %s failed, and undoing the commands already enqueued "
                               "failed too: %u of them stay where those commands put them.",
                               (unsigned)count, count == 1 ? "" : "s", direction(to_opencl), (unsigned)stuck);
    if (count == 1)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, call, err, "Handing the imported memory (%s) %s failed.",
                               clmem_bridge_path_name(recs[0]->ops->path), direction(to_opencl));
    return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, call, err,
                           "Handing %u imported buffers %s failed; nothing of the call is left enqueued and no state "
                           "changed.",
                           (unsigned)count, direction(to_opencl));
}

clmem_status clmem__import_release_on(struct bridge_import *rec, cl_command_queue queue, cl_uint n,
                                      const cl_event *wait, cl_event *event_out)
{
    return clmem__import_handoff(false, &rec, 1, queue, n, wait, event_out);
}

static clmem_status handoff_many(bool to_opencl, clmem_bridge *b, cl_uint count, const clmem_handle *const *handles,
                                 cl_command_queue queue, cl_uint num_events, const cl_event *wait_list,
                                 cl_event *event_out)
{
    struct bridge_import *recs_stack[HANDOFF_STACK], **recs = recs_stack;
    clmem_status s;
    cl_int err;

    if (event_out)
        *event_out = NULL;
    if (!b)
        return fail_null("bridge");
    BRIDGE_LIVE(b, to_opencl ? "clmem_bridge_acquire" : "clmem_bridge_release");
    if (count == 0) {
        /* Nothing to hand over: an event that completes after the wait
         * list, if one is asked for, so that code waiting on it works. */
        if (!queue)
            return fail_null("queue");
        if ((s = clmem__bridge_check_queue(b, queue)) != CLMEM_OK || !event_out)
            return s;
        err = FAULT("clEnqueueMarkerWithWaitList(handoff)")
                  ? CL_OUT_OF_RESOURCES
                  : clEnqueueMarkerWithWaitList(queue, num_events, wait_list, event_out);
        if (err != CL_SUCCESS) {
            *event_out = NULL;
            return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clEnqueueMarkerWithWaitList", err,
                                   "Enqueueing the event of an empty handoff failed.");
        }
        return CLMEM_OK;
    }
    if (!handles)
        return clmem__fail(CLMEM_ERR_NULL_POINTER,
                           "The handle list is NULL, with a count of %u.", (unsigned)count);
    if (count > HANDOFF_STACK && !(recs = FAULT("handoff_alloc") ? NULL : malloc(count * sizeof *recs)))
        return clmem__fail(CLMEM_ERR_NO_MEMORY,
                           "Allocating the list for a handoff of %u buffers failed.", (unsigned)count);
    s = clmem__handoff_check(b, count, handles, queue, recs);
    if (s == CLMEM_OK)
        s = clmem__import_handoff(to_opencl, recs, count, queue, num_events, wait_list, event_out);
    if (recs != recs_stack)
        free(recs);
    return s;
}

CLMEM_EXPORT clmem_status clmem_bridge_acquire_many(clmem_bridge *b, cl_uint count, clmem_handle *const *handles,
                                                    cl_command_queue queue, cl_uint num_events,
                                                    const cl_event *wait_list, cl_event *event_out)
{
    /* The public type is the one callers' arrays convert to; the handles are
     * only read. */
    return clmem__error_in(__func__, handoff_many(true, b, count, (const clmem_handle *const *)handles, queue,
                                                  num_events, wait_list, event_out));
}

CLMEM_EXPORT clmem_status clmem_bridge_release_many(clmem_bridge *b, cl_uint count, clmem_handle *const *handles,
                                                    cl_command_queue queue, cl_uint num_events,
                                                    const cl_event *wait_list, cl_event *event_out)
{
    /* The public type is the one callers' arrays convert to; the handles are
     * only read. */
    return clmem__error_in(__func__, handoff_many(false, b, count, (const clmem_handle *const *)handles, queue,
                                                  num_events, wait_list, event_out));
}

/* The one-handle calls: a count of 1 on the handle's own queue. */
clmem_status clmem__handoff_one(bool to_opencl, clmem_bridge *b, const clmem_handle *h, cl_uint num_events,
                                const cl_event *wait_list, cl_event *event_out)
{
    return handoff_many(to_opencl, b, 1, &h, clmem_handle_queue(h), num_events, wait_list, event_out);
}

CLMEM_EXPORT clmem_status clmem_bridge_acquire(clmem_bridge *b, const clmem_handle *h, cl_uint num_events,
                                               const cl_event *wait_list, cl_event *event_out)
{
    return clmem__error_in(__func__, clmem__handoff_one(true, b, h, num_events, wait_list, event_out));
}

CLMEM_EXPORT clmem_status clmem_bridge_release(clmem_bridge *b, const clmem_handle *h, cl_uint num_events,
                                               const cl_event *wait_list, cl_event *event_out)
{
    return clmem__error_in(__func__, clmem__handoff_one(false, b, h, num_events, wait_list, event_out));
}
