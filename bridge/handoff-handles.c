/* SPDX-License-Identifier: MIT */
/* The public handoff calls, over handles: clmem_bridge_acquire[_many] and
 * clmem_bridge_release[_many]. Each handle's import record is found and
 * checked here (a handle of the bridge's imports, no import twice, the
 * queue in each import's list); handoff.c hands the records over. */
#include "config.h"
#include "error-private.h"
#include "export.h"
#include "fail.h"
#include "fault.h"
#include "handoff.h"
#include "handoff-handles.h"
#include "import.h"

#include <stdint.h>
#include <stdlib.h>

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
                               clmem__handoff_entry_label(count, i, label, sizeof label));
        rec = clmem__import_of_handle(h);
        if (!rec)
            return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                               "%s did not come from clmem-bridge, so there is nothing to hand over.",
                               clmem__handoff_entry_label(count, i, label, sizeof label));
        if (rec->bridge != b)
            return clmem__fail(CLMEM_ERR_INVALID_VALUE, "%s belongs to bridge %p, not to bridge %p.",
                               clmem__handoff_entry_label(count, i, label, sizeof label), (void *)rec->bridge,
                               (void *)b);
        if (!queue)
            return fail_null("queue");
        if (atomic_load(&rec->in_ring))
            return clmem__fail(CLMEM_ERR_INVALID_VALUE, "%s is a frame of a frame ring, which alone hands it over.",
                               clmem__handoff_entry_label(count, i, label, sizeof label));
        /* The teardown hands an import left acquired back on its acquire's
         * queue and waits for the queues in its list: an acquire on a queue
         * outside the list would escape both. */
        if (!clmem__import_has_queue(rec, queue))
            return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                               "%s: no handle of its import was made for queue %p; make one with "
                               "clmem_bridge_handle_for_queue(), so that the import's teardown waits for that "
                               "queue too.",
                               clmem__handoff_entry_label(count, i, label, sizeof label), (void *)queue);
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
        return clmem__fail(CLMEM_ERR_NULL_POINTER, "The handle list is NULL, with a count of %u.", (unsigned)count);
    if (count > HANDOFF_STACK && !(recs = FAULT("handoff_alloc") ? NULL : malloc(count * sizeof *recs)))
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the list for a handoff of %u buffers failed.",
                           (unsigned)count);
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
