/* SPDX-License-Identifier: MIT */
/* Ownership handoff between Vulkan and OpenCL, one code path for every
 * path and every count: the import's path does the enqueue (path-fd.c: the
 * extension's acquire/release, one call for all the fd-path buffers of a
 * call; path-host.c: the unmap/map CL_MEM_USE_HOST_PTR defines as its sync
 * points, one per buffer); the checks, the state, the grouping into
 * commands, the one event for the whole call and the undo of a call that
 * failed part way are here. The public calls (handoff-handles.c) check
 * their handles and hand the records here, and the teardown's release is a
 * count-1 handoff as well. */
#include "config.h"
#include "export.h"
#include "fail.h"
#include "fault.h"
#include "handoff.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

const char *clmem__handoff_entry_label(cl_uint count, cl_uint i, char *buf, size_t len)
{
    if (count == 1)
        snprintf(buf, len, "The handle");
    else
        snprintf(buf, len, "Entry %u", (unsigned)i);
    return buf;
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
            return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the lists for a handoff of %u buffers failed.",
                               (unsigned)count);
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
                               clmem__handoff_entry_label(count, i, label, sizeof label));
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
