/* SPDX-License-Identifier: MIT */
/* The fault-injection test's handoffs (t/fault/fault-run.h lists the
 * groups): acquire and release of one handle, of each of a run of slots,
 * and of many at a time with an event. */
#include "fault-run.h"
#include "t/lib/tap.h"

/* Handoffs: one operation, as do_op (t/fault/fault-run.c)
 * hands it over. */
clmem_status fault_do_handoff_op(struct run *r, struct op op)
{
    struct fault_env *e = r->e;
    cl_command_queue queue = e->queues[op.queue];
    clmem_status s;

    switch (op.kind) {
    case OP_ACQUIRE: return clmem_bridge_acquire(r->b, r->h[op.slot], 0, NULL, NULL);
    case OP_RELEASE: {
        cl_event done = NULL;
        cl_int err;
        s = clmem_bridge_release(r->b, r->h[op.slot], 0, NULL, &done);
        if (s == CLMEM_OK) {
            if ((err = clWaitForEvents(1, &done)) != CL_SUCCESS)
                problem(r, "waiting for the release's event failed: %d", err);
            clReleaseEvent(done);
        }
        return s;
    }
    case OP_ACQUIRE_EACH:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            if (r->acquired_each[i])
                continue;
            r->failed_slot = i;
            if ((s = clmem_bridge_acquire(r->b, r->h[i], 0, NULL, NULL)) != CLMEM_OK)
                return s;
            r->acquired_each[i] = true;
        }
        return CLMEM_OK;
    case OP_ACQUIRE_MANY:
    case OP_RELEASE_MANY: {
        cl_event ev = JUNK_EVENT;
        clmem_handle *const *hs = &r->h[op.slot]; /* the array converts without a cast */
        s = op.kind == OP_ACQUIRE_MANY ? clmem_bridge_acquire_many(r->b, (cl_uint)op.count, hs, queue, 0, NULL, &ev)
                                       : clmem_bridge_release_many(r->b, (cl_uint)op.count, hs, queue, 0, NULL, &ev);
        if (s != CLMEM_OK) {
            r->event = ev; /* judged by check_failure */
            return s;
        }
        op_event_done(r, ev, op);
        for (int i = op.slot; op.kind == OP_RELEASE_MANY && i < op.slot + op.count; i++)
            r->acquired_each[i] = false;
        return CLMEM_OK;
    }
    default: tap_bail("%s is not an operation on handoffs", op_name(op));
    }
}
