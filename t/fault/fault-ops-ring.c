/* SPDX-License-Identifier: MIT */
/* The fault-injection test's semaphores and frame rings (t/fault/fault-run.h
 * lists the groups): importing and dropping semaphores, and a ring's
 * whole life, with the test playing Vulkan's side of the semaphores. */
#include "fault-run.h"
#include "t/lib/tap.h"

#include <string.h>

/* The batch ops keep the ring's semaphores in step from outside, which the
 * test does for host ordering only: there the ring's own submission waits
 * on every ready[s] the test signalled once vk_submitted succeeded, and
 * done[s] is never used. (A device-ordered run would need to know which
 * side consumed each signal after a failure.) */
static void need_host_ordering(const struct run *r, struct op op)
{
    if (r->seq->sem_mode != CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED)
        tap_bail("%s in \"%s\": the ring's batch ops are for host-ordered semaphores only", op_name(op),
                 r->seq->name);
}

static int sem_slot_of(const struct run *r, VkSemaphore vk_sem)
{
    for (int i = 0; i < r->vk_sem_count; i++)
        if (r->vk_sems[i] == vk_sem)
            return i;
    tap_bail("the ring handed out a semaphore the test never imported");
}

/* Vulkan's side of the frames handed out since the last call: one empty
 * submission with the waits and signals they carry (the test writes
 * nothing into them; the ring orders the handoff, not the data). Once per
 * frame: a retried vk_submitted does not signal again. */
static void ring_signal(struct run *r)
{
    VkSemaphore waits[RING_FRAMES], signals[RING_FRAMES];
    VkPipelineStageFlags stages[RING_FRAMES];
    uint32_t nwait = 0, nsignal = 0;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};

    for (int i = r->frames_signalled; i < r->frames_out; i++) {
        const clmem_bridge_ring_frame *f = &r->ring_frames[i];
        if (f->wait_semaphore) {
            stages[nwait] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            waits[nwait++] = f->wait_semaphore;
        }
        if (f->signal_semaphore) {
            r->sem_signalled[sem_slot_of(r, f->signal_semaphore)] = true;
            signals[nsignal++] = f->signal_semaphore;
        }
    }
    r->frames_signalled = r->frames_out;
    if (!nwait && !nsignal)
        return;
    si.waitSemaphoreCount = nwait;
    si.pWaitSemaphores = waits;
    si.pWaitDstStageMask = stages;
    si.signalSemaphoreCount = nsignal;
    si.pSignalSemaphores = signals;
    if (vkQueueSubmit(r->e->vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS)
        tap_bail("the test's own vkQueueSubmit of the frames' semaphores failed");
}

/* Waits on `n` semaphores, submitted and waited for (each had a signal). */
static void submit_waits(struct run *r, const VkSemaphore *sems, uint32_t n)
{
    VkPipelineStageFlags stages[NSEMS];
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .waitSemaphoreCount = n,
                       .pWaitSemaphores = sems,
                       .pWaitDstStageMask = stages};

    for (uint32_t i = 0; i < n; i++)
        stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    if (n && (vkQueueSubmit(r->e->vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS ||
              vkQueueWaitIdle(r->e->vk.queue) != VK_SUCCESS))
        tap_bail("the test's own wait on %u semaphores failed", n);
}

/* The ring goes (both sides stopped: OpenCL's queue finished, Vulkan's
 * idle, as the header asks); then a ready semaphore the test signalled
 * that no wait of the ring's consumed is waited on, so that the next call
 * finds every semaphore unsignalled. */
void ring_drop(struct run *r)
{
    VkSemaphore pending[NSEMS];
    uint32_t n = 0;

    if (r->ring) {
        for (int i = 0; i < NQUEUES; i++)
            clFinish(r->e->queues[i]);
        vkQueueWaitIdle(r->e->vk.queue);
        clmem_bridge_ring_unref(r->ring);
        r->ring = NULL;
    }
    for (int i = 0; i < NSEMS; i++) {
        if (r->sem_signalled[i])
            pending[n++] = r->vk_sems[i];
        r->sem_signalled[i] = false;
    }
    submit_waits(r, pending, n);
    r->frames_out = r->frames_signalled = r->batches_taken = r->batches_done = 0;
}

/* Semaphores and frame rings: one operation, as do_op (t/fault/fault-run.c)
 * hands it over. */
clmem_status fault_do_ring_op(struct run *r, struct op op)
{
    struct fault_env *e = r->e;
    cl_command_queue queue = e->queues[op.queue];
    clmem_status s;

    switch (op.kind) {
    case OP_SEM_IMPORT:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            if (r->sems[i])
                continue; /* imported before the failure that is being retried */
            r->failed_slot = i;
            r->sems[i] = JUNK_SEMAPHORE;
            s = clmem_bridge_semaphore_import(r->b, e->vk.queue, r->vk_sems[i], r->seq->sem_mode, r->sem_ka,
                                              &r->sems[i]);
            if (s != CLMEM_OK)
                return s;
        }
        return CLMEM_OK;
    case OP_SEM_DROP:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            clmem_bridge_semaphore_unref(r->sems[i]);
            r->sems[i] = NULL;
        }
        return CLMEM_OK;
    case OP_RING_CREATE: {
        uint32_t depth = (uint32_t)(op.count / op.batch);
        clmem_bridge_ring_info info = {.size = sizeof info,
                                       .frame_count = (uint32_t)op.count,
                                       .batch_size = (uint32_t)op.batch,
                                       .frames = r->h,
                                       .ready = r->sems,
                                       .done = r->sems + depth,
                                       .queue = queue};
        if (op.count > NSLOTS || 2 * depth > NSEMS)
            tap_bail("%s: more frames or semaphores than a run holds", op_name(op));
        r->ring = JUNK_RING;
        s = clmem_bridge_ring_create(r->b, &info, &r->ring);
        if (s == CLMEM_OK)
            r->frames_out = r->frames_signalled = r->batches_taken = r->batches_done = 0;
        return s;
    }
    case OP_VK_NEXT:
        need_host_ordering(r, op);
        if (r->frames_out == RING_FRAMES)
            tap_bail("a ring sequence took more than %d frames; raise RING_FRAMES", RING_FRAMES);
        s = clmem_bridge_ring_vk_next(r->ring, op.flags, SETTLE_NS, &r->ring_frames[r->frames_out]);
        if (s == CLMEM_OK)
            r->frames_out++;
        return s;
    case OP_VK_SUBMITTED:
        need_host_ordering(r, op);
        if (!r->frames_out)
            tap_bail("%s before any vk_next", op_name(op));
        ring_signal(r);
        s = clmem_bridge_ring_vk_submitted(r->ring, &r->ring_frames[r->frames_out - 1]);
        if (s == CLMEM_OK) /* every batch reported is published: the ring's wait on its ready[s] is submitted */
            memset(r->sem_signalled, 0, sizeof r->sem_signalled);
        return s;
    case OP_CL_NEXT: {
        cl_event ev = JUNK_EVENT;
        need_host_ordering(r, op);
        s = clmem_bridge_ring_cl_next(r->ring, SETTLE_NS, 0, NULL, &r->batches[r->batches_taken], &ev);
        if (s != CLMEM_OK) {
            r->event = ev;
            return s;
        }
        r->batches_taken++;
        op_event_done(r, ev, op);
        return CLMEM_OK;
    }
    case OP_CL_DONE: {
        cl_event ev = JUNK_EVENT;
        need_host_ordering(r, op);
        if (r->batches_done == r->batches_taken)
            tap_bail("%s with no batch taken", op_name(op));
        s = clmem_bridge_ring_cl_done(r->ring, &r->batches[r->batches_done], 0, NULL, &ev);
        if (s != CLMEM_OK) {
            r->event = ev;
            return s;
        }
        r->batches_done++;
        op_event_done(r, ev, op);
        return CLMEM_OK;
    }
    case OP_VK_DRAIN: {
        VkSemaphore waits[NSEMS];
        uint32_t n = 0;
        need_host_ordering(r, op);
        s = clmem_bridge_ring_vk_drain(r->ring, SETTLE_NS, NSEMS, waits, &n);
        if (s == CLMEM_OK && n != 0) {
            problem(r, "vk_drain of a host-ordered ring gave %u semaphores to wait on, want none", n);
            submit_waits(r, waits, n < NSEMS ? n : NSEMS);
        }
        return s;
    }
    case OP_RING_UNREF:
        ring_drop(r);
        return CLMEM_OK;
    default: tap_bail("%s is not an operation on semaphores and frame rings", op_name(op));
    }
}
