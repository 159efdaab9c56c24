/* SPDX-License-Identifier: MIT */
/* One run of a fault-injection row (t/fault/fault-cases.c): its sequence on
 * a bridge of its own, its operations done one by one (do_op, which hands
 * each to its group's file: t/fault/fault-run.h lists them) with the row's
 * point armed, the failing call's report judged against the row
 * (check_failure), the retry or the drop and the next call, and then what
 * the run left behind (run_end, fault_run_case).
 * t/fault/fault-injection.c says what is checked and why;
 * t/fault/fault-injection.h what each operation does. */
#include "fault-run.h"
#include "t/lib/fault-control.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------- what a run is checked against */

/* Which fds are open now that were not when the baseline was taken, as
 * "number -> target": to tell a driver's fd from one the bridge lost. */
static void list_fds(char *out, size_t len, const char *except)
{
    size_t used = 0;
    out[0] = '\0';
    for (int fd = 0; fd < 4096 && used + 80 < len; fd++) {
        char path[64], target[256], item[320];
        ssize_t n;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        n = readlink(path, target, sizeof target - 1);
        if (n < 0)
            continue;
        target[n] = '\0';
        snprintf(item, sizeof item, " %d->%s", fd, target);
        if (except && strstr(except, item))
            continue;
        used += (size_t)snprintf(out + used, len - used, "%s", item);
    }
}

void fault_take_fd_baseline(struct fault_env *e)
{
    e->fds = fd_count();
    list_fds(e->fd_list, sizeof e->fd_list, NULL);
}

static bool refs_are_back(const struct fault_env *e)
{
    if (cl_context_refcount(e->f.context) != e->context_refs)
        return false;
    for (int i = 0; i < NQUEUES; i++)
        if (cl_queue_refcount(e->queues[i]) != e->queue_refs[i])
            return false;
    return true;
}

/* PoCL lets go of its own references on the queues and the context (held
 * by its commands and events, which a driver thread cleans up) a little
 * after the calls that made them returned. Wait for the counts to come
 * back: a leaked reference never does, so waiting costs time only when
 * something is wrong. Returns how long it took, or -1 after two seconds. */
static int refs_settle(struct fault_env *e)
{
    for (int ms = 0; ms < 2000; ms++) {
        if (refs_are_back(e)) {
            if (ms > e->settle_ms_max)
                e->settle_ms_max = ms;
            return ms;
        }
        usleep(1000);
    }
    return -1;
}

/* ---------------------------------------------------- what a run holds */

static const char *const mode_names[] = {"dry run", "retry", "drop"};

/* ---------------------------------------------------------- operations */

/* Calls with a status to check when a fault fires inside them. */
static bool op_reports(enum op_kind k)
{
    return k != OP_DROP && k != OP_VK_DESTROY && k != OP_SEM_DROP && k != OP_BRIDGE_UNREF && k != OP_FINISH &&
           k != OP_VK_IMAGE_DESTROY && k != OP_DROP_PIECES && k != OP_RING_UNREF;
}

/* One operation of a sequence, done by its group's file. */
static clmem_status do_op(struct run *r, struct op op)
{
    switch (op.kind) {
    case OP_END: return CLMEM_OK;
    case OP_BRIDGE_CREATE:
    case OP_BRIDGE_UNREF:
    case OP_IMPORT:
    case OP_IMPORT_FD:
    case OP_IMPORT_IMAGE:
    case OP_IMPORT_PIECES:
    case OP_FOR_QUEUE:
    case OP_DROP:
    case OP_DROP_PIECES:
    case OP_FINISH: return fault_do_import_op(r, op);
    case OP_ACQUIRE:
    case OP_RELEASE:
    case OP_ACQUIRE_EACH:
    case OP_ACQUIRE_MANY:
    case OP_RELEASE_MANY: return fault_do_handoff_op(r, op);
    case OP_SEM_IMPORT:
    case OP_SEM_DROP:
    case OP_RING_CREATE:
    case OP_VK_NEXT:
    case OP_VK_SUBMITTED:
    case OP_CL_NEXT:
    case OP_CL_DONE:
    case OP_VK_DRAIN:
    case OP_RING_UNREF: return fault_do_ring_op(r, op);
    case OP_VK_CREATE:
    case OP_VK_DESTROY:
    case OP_VK_IMAGE_CREATE:
    case OP_VK_IMAGE_DESTROY: return fault_do_vk_op(r, op);
    }
    return CLMEM_OK;
}

/* --------------------------------------------------- judging a failure */

/* The failing call's report, against the row. Read right after the call:
 * the error record is only good until the next clmem call. */
static void check_failure(struct run *r, struct op op, clmem_status s)
{
    const struct fault_case *c = r->c;
    /* A system call (the fd duplicate) reports errno; allocations, none. */
    bool system_call = c->call && strncmp(c->call, "fcntl", 5) == 0;
    clmem_api want_api = system_call                     ? CLMEM_API_SYSTEM
                         : c->want == CLMEM_ERR_OPENCL   ? CLMEM_API_OPENCL
                         : c->want == CLMEM_ERR_VULKAN   ? CLMEM_API_VULKAN
                                                         : CLMEM_API_NONE;
    const char *call = clmem_error_call();
    int32_t code = clmem_error_native_code();
    /* Right after the call, before anything else can touch the context. */
    cl_uint ctx_refs = cl_context_refcount(r->e->f.context);

    snprintf(r->report, sizeof r->report, "%s -> %s, %s, code %d", op_name(op), clmem_status_name(s),
             call ? call : "no call", (int)code);
    if (c->want == CLMEM_OK)
        problem(r, "%s failed with %s (%s), but this point is reached only by teardowns, which have no status to "
                   "report",
                op_name(op), clmem_status_name(s), clmem_error_message());
    else if (s != c->want)
        problem(r, "%s returned %s, want %s (%s)", op_name(op), clmem_status_name(s), clmem_status_name(c->want),
                clmem_error_message());
    if (clmem_error_status() != s)
        problem(r, "the error record says %s, the call returned %s", clmem_status_name(clmem_error_status()),
                clmem_status_name(s));
    if (c->want != CLMEM_OK && clmem_error_api() != want_api)
        problem(r, "clmem_error_api() is %d, want %d", (int)clmem_error_api(), (int)want_api);
    if (c->want != CLMEM_OK && (c->call ? !call || strcmp(call, c->call) != 0 : call != NULL))
        problem(r, "clmem_error_call() is %s, want %s", call ? call : "NULL", c->call ? c->call : "NULL");
    if (want_api != CLMEM_API_NONE && code == 0)
        problem(r, "the native code is 0 for a failed native call");
    switch (op.kind) {
    case OP_IMPORT:
    case OP_IMPORT_FD:
    case OP_IMPORT_IMAGE:
    case OP_FOR_QUEUE:
        if (r->h[op.slot] != NULL) {
            problem(r, "*out is %p after the failed %s, want NULL", (void *)r->h[op.slot], op_name(op));
            if (r->h[op.slot] == JUNK_HANDLE)
                r->h[op.slot] = NULL;
        }
        if (op.kind == OP_IMPORT_FD && !fd_is_callers(r, op.slot)) {
            problem(r, "the caller's fd %d was closed by the failed import_fd (clmem-bridge.h: \"On any error "
                       "the fd is still the caller's, open and untouched\")",
                    r->fd[op.slot]);
            r->fd[op.slot] = -1; /* not ours to close any more */
        }
        break;
    case OP_VK_CREATE:
        if (r->vk_buffer != VK_NULL_HANDLE || r->vk_memory.memory != VK_NULL_HANDLE || r->vk_memory.device != NULL)
            problem(r, "vk_buffer_create left its outputs set after failing");
        break;
    case OP_VK_IMAGE_CREATE: {
        static const clmem_bridge_vk_image zero;
        if (memcmp(&r->vk_image, &zero, sizeof zero) != 0) {
            problem(r, "vk_image_create left *image_out not zeroed after failing (clmem-bridge.h: \"On error "
                       "*image_out is zeroed\")");
            memset(&r->vk_image, 0, sizeof r->vk_image); /* what it holds is not known to be real: leave it */
        }
        break;
    }
    case OP_SEM_IMPORT:
        if (r->sems[r->failed_slot] != NULL) {
            problem(r, "*out is %p after the failed import of semaphore #%d, want NULL",
                    (void *)r->sems[r->failed_slot], r->failed_slot);
            if (r->sems[r->failed_slot] == JUNK_SEMAPHORE)
                r->sems[r->failed_slot] = NULL;
        }
        break;
    case OP_IMPORT_PIECES:
        snprintf(r->report + strlen(r->report), sizeof r->report - strlen(r->report), " (piece #%d)",
                 r->failed_slot);
        if (r->h[r->failed_slot] != NULL) {
            problem(r, "*out is %p after the failed import of piece #%d, want NULL", (void *)r->h[r->failed_slot],
                    r->failed_slot);
            if (r->h[r->failed_slot] == JUNK_HANDLE)
                r->h[r->failed_slot] = NULL;
        }
        break;
    case OP_ACQUIRE_EACH:
        snprintf(r->report + strlen(r->report), sizeof r->report - strlen(r->report), " (#%d)", r->failed_slot);
        break;
    case OP_ACQUIRE_MANY:
    case OP_RELEASE_MANY:
    case OP_CL_NEXT:
    case OP_CL_DONE:
        /* "*event_out (if not NULL) gets an event": none after a failure. */
        if (r->event != NULL) {
            problem(r, "*event_out is %p after the failed %s, want NULL", (void *)r->event, op_name(op));
            if (r->event != JUNK_EVENT)
                clReleaseEvent(r->event);
        }
        r->event = NULL;
        break;
    case OP_RING_CREATE:
        if (r->ring != NULL) {
            problem(r, "*out is %p after the failed ring_create, want NULL", (void *)r->ring);
            if (r->ring == JUNK_RING)
                r->ring = NULL;
        }
        break;
    case OP_BRIDGE_CREATE:
        if (r->bridges[op.slot] != NULL) {
            problem(r, "*out is %p after the failed bridge_create, want NULL", (void *)r->bridges[op.slot]);
            if (r->bridges[op.slot] == JUNK_BRIDGE)
                r->bridges[op.slot] = NULL;
        }
        /* "On error *out is NULL and nothing is retained": at once, not
         * eventually. */
        if (ctx_refs != r->ctx_before_create)
            problem(r, "the context has %u references right after the failed bridge_create, %u right before (the "
                       "failed creation retained it)",
                    ctx_refs, r->ctx_before_create);
        break;
    default: break;
    }
}

/* ------------------------------------------------- a run, start to end */

/* The sequence's steps. Returns the passes through the row's point (for
 * the dry run). A fault that fires in a step with no status (a drop: the
 * teardown has no one to report to) is judged by what follows: the
 * finish, and the leak checks. */
static int run_steps(struct run *r, int nth, enum fault_mode mode)
{
    const struct op *ops = r->seq->ops;
    bool fired_any = false;
    int passes, i;

    clmem_fault_reset();
    if (nth > 0)
        clmem_fault_arm(r->c->point, nth);
    for (i = 0; ops[i].kind != OP_END; i++) {
        int fired_before = clmem_fault_fired();
        clmem_status s;

        clmem_error_clear();
        s = do_op(r, ops[i]);
        if (clmem_fault_fired() == fired_before) {
            if (s != CLMEM_OK) {
                problem(r, "%s failed with no fault fired: %s", op_name(ops[i]), clmem_error_message());
                break;
            }
            continue;
        }
        fired_any = true;
        if (!op_reports(ops[i].kind)) {
            snprintf(r->report, sizeof r->report, "%s (no status) failed inside", op_name(ops[i]));
            clmem_fault_reset();
            continue;
        }
        if (s == CLMEM_OK) {
            problem(r, "the fault fired inside %s but it returned CLMEM_OK", op_name(ops[i]));
            clmem_fault_reset();
            continue;
        }
        check_failure(r, ops[i], s);
        clmem_fault_reset(); /* disarm: everything after this must work */
        if (mode == MODE_DROP)
            break;
        if ((s = do_op(r, ops[i])) != CLMEM_OK) {
            problem(r, "retrying %s failed: %s", op_name(ops[i]), clmem_error_message());
            break;
        }
    }
    /* Every fault seen above was followed by a reset, and a point fires
     * once per arming: a count left now is one that fired on another
     * thread between two steps, in work a step left behind (a drop hands
     * the memory back on the teardown thread after it returned). Judged as
     * a step with no status is: by the finish and the leak checks. */
    if (clmem_fault_fired() > 0) {
        snprintf(r->report, sizeof r->report,
                 "a step with no status failed after it returned, on another thread (a teardown; seen after step %d)",
                 i);
        fired_any = true;
    }
    passes = clmem_fault_passes(r->c->point);
    if (nth > 0 && !fired_any)
        problem(r, "pass %d through %s was never reached", nth, r->c->point);
    clmem_fault_reset();
    return passes;
}

/* Let go of whatever a run still holds (after DROP stopped it early), and
 * finish the bridge: every teardown done, or the run lost something. */
static void drop_all(struct run *r)
{
    ring_drop(r); /* first: it holds references on the frames and the semaphores */
    for (int i = 0; i < NSLOTS; i++) {
        clmem_handle_unref(r->h[i]);
        r->h[i] = NULL;
        r->acquired_each[i] = false;
        if (r->fd[i] >= 0)
            close(r->fd[i]);
        r->fd[i] = -1;
    }
    if (r->vk_buffer || r->vk_memory.memory)
        clmem_bridge_vk_buffer_destroy(r->b, r->vk_buffer, &r->vk_memory);
    r->vk_buffer = VK_NULL_HANDLE;
    memset(&r->vk_memory, 0, sizeof r->vk_memory);
    if (r->vk_image.image || r->vk_image.memory.memory)
        clmem_bridge_vk_image_destroy(r->b, &r->vk_image);
    memset(&r->vk_image, 0, sizeof r->vk_image);
    for (int i = 0; i < NSEMS; i++) {
        clmem_bridge_semaphore_unref(r->sems[i]);
        r->sems[i] = NULL;
    }
    for (int i = 0; i < 2; i++) {
        clmem_bridge_unref(r->bridges[i]);
        r->bridges[i] = NULL;
    }
    finish(r, "after everything was dropped");
}

/* After a DROP: the whole sequence once more, all of it good. */
static void next_call(struct run *r)
{
    char saved[sizeof r->report];
    size_t before = strlen(r->problems);

    memcpy(saved, r->report, sizeof saved);
    run_steps(r, 0, MODE_DRY);
    memcpy(r->report, saved, sizeof saved);
    if (strlen(r->problems) != before)
        problem(r, "(the above in the next call, after the failure)");
    drop_all(r);
}

static bool uses_image(const struct sequence *seq)
{
    return seq->ops[0].kind == OP_IMPORT_IMAGE;
}

static bool uses_memory(const struct sequence *seq)
{
    return seq->ops[0].kind == OP_IMPORT || seq->ops[0].kind == OP_IMPORT_FD || seq->ops[0].kind == OP_IMPORT_PIECES ||
           uses_image(seq);
}

/* The semaphores a sequence imports: one past the highest slot. */
static int semaphores_used(const struct sequence *seq)
{
    int n = 0;
    for (int i = 0; seq->ops[i].kind != OP_END; i++)
        if (seq->ops[i].kind == OP_SEM_IMPORT && seq->ops[i].slot + seq->ops[i].count > n)
            n = seq->ops[i].slot + seq->ops[i].count;
    if (n > NSEMS)
        tap_bail("\"%s\" imports %d semaphores; raise NSEMS", seq->name, n);
    return n;
}

/* A run's resources, made with nothing armed: fresh Vulkan memory, the
 * caller's anchor on it and the probes for the imports; a VkSemaphore and
 * a counting anchor for the semaphores. */
static void run_begin(struct run *r, struct fault_env *e, const struct fault_case *c)
{
    memset(r, 0, sizeof *r);
    r->e = e;
    r->c = c;
    r->seq = c->seq;
    for (int i = 0; i < NSLOTS; i++)
        r->fd[i] = -1;
    atomic_init(&r->sem_releases, 0);
    if (r->seq->ops[0].kind != OP_BRIDGE_CREATE)
        r->b = bridge_open(&e->vk, &e->f, 0);
    if (uses_memory(r->seq)) {
        r->ka = uses_image(r->seq) ? image_owned_new(r)
                                   : vk_owned_new(&r->o, r->b, &e->vk, ALLOC_SIZE, path_memory_props(r->seq->path),
                                                  path_export_types(&e->vk, r->seq->path));
        for (int i = 0; i < NPROBES; i++) {
            struct probe *p = &r->probes[i];
            p->r = r;
            atomic_init(&p->released, 0);
            atomic_init(&p->destroyed, 0);
            atomic_init(&p->destroyed_at_release, 0);
            p->ka = clmem_keepalive_new(probe_release, p);
            if (!p->ka)
                tap_bail("clmem_keepalive_new failed");
            clmem_keepalive_ref(r->ka); /* the probe's, dropped by its release */
        }
    }
    if ((r->vk_sem_count = semaphores_used(r->seq)) > 0) {
        VkExportSemaphoreCreateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                          .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
        VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                    .pNext = r->seq->sem_mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD ? &ex : NULL};
        for (int i = 0; i < r->vk_sem_count; i++)
            if (vkCreateSemaphore(e->vk.device, &ci, NULL, &r->vk_sems[i]) != VK_SUCCESS)
                tap_bail("vkCreateSemaphore failed");
        /* One anchor for all of them: it runs its release once the last
         * semaphore (and the ring) let go of it, and the caller did. */
        r->sem_ka = clmem_keepalive_new(count_release, &r->sem_releases);
        if (!r->sem_ka)
            tap_bail("clmem_keepalive_new failed");
    }
}

/* After the steps and drop_all (which finished the bridge): the bridge must
 * have let go of everything it took from the caller. */
static void run_end(struct run *r)
{
    struct fault_env *e = r->e;
    int released = 0, probes_wrong = 0;

    /* The mapping the imports shared is gone: Vulkan lets us map it again
     * (the validation layer reports mapping memory that is mapped). */
    if (uses_memory(r->seq) && r->seq->path == CLMEM_BRIDGE_PATH_HOST_MAPPED) {
        void *p = NULL;
        VkResult vr = vkMapMemory(e->vk.device, r->o.memory.memory, 0, VK_WHOLE_SIZE, 0, &p);
        if (vr != VK_SUCCESS)
            problem(r, "mapping the memory after the bridge let go failed: %d", vr);
        else
            vkUnmapMemory(e->vk.device, r->o.memory.memory);
    }
    if (uses_memory(r->seq)) {
        /* Every import call's keepalive: released exactly once by now (the
         * bridge finished), and only after OpenCL destroyed the cl_mem. */
        for (int i = 0; i < r->probes_used; i++) {
            struct probe *p = &r->probes[i];
            int n = atomic_load(&p->released);
            if (n != 1) {
                if (!probes_wrong++)
                    problem(r, "import call %d's keepalive ran its release %d times after clmem_bridge_finish "
                               "returned, want once",
                            i + 1, n);
            } else if (p->watched && atomic_load(&p->destroyed_at_release) == 0) {
                if (!probes_wrong++)
                    problem(r, "import call %d's keepalive was released before OpenCL destroyed its cl_mem", i + 1);
            }
        }
        /* The probes no call took: the caller's reference is the only one. */
        for (int i = r->probes_used; i < NPROBES; i++) {
            clmem_keepalive_unref(r->probes[i].ka);
            r->probes[i].ka = NULL;
        }
    }
    /* The caller lets go: its anchor must run its release now, once: the
     * bridge finished, so no import holds it any more. */
    if (r->ka) {
        clmem_keepalive_unref(r->ka);
        r->ka = NULL;
        released = atomic_load(&r->o.released);
        if (released != 1)
            problem(r, "the caller's anchor on the memory ran its release %d times when the caller let go after "
                       "clmem_bridge_finish, want once",
                    released);
        if (released == 0 || probes_wrong)
            e->stranded++; /* see fault_env.stranded */
    }
    /* The same for the semaphores' anchor: every semaphore was dropped, and
     * no ring (nor a failed ring creation) kept a reference on one. */
    if (r->sem_ka) {
        clmem_keepalive_unref(r->sem_ka);
        r->sem_ka = NULL;
        released = atomic_load(&r->sem_releases);
        if (released != 1)
            problem(r, "the caller's anchor on the semaphores ran its release %d times when the caller let go "
                       "after clmem_bridge_finish, want once (a semaphore, or a ring holding one, is still alive)",
                    released);
        if (released == 0)
            e->stranded++; /* see fault_env.stranded */
        vkQueueWaitIdle(e->vk.queue);
        for (int i = 0; i < r->vk_sem_count; i++)
            vkDestroySemaphore(e->vk.device, r->vk_sems[i], NULL);
    }
    /* The test's reference; the Vulkan anchor's release dropped its own.
     * What a stranded import holds stays held. */
    clmem_bridge_unref(r->b);
    r->b = NULL;
}

/* One run: set up (nothing armed), the steps, cleanup, the leak checks, one
 * TAP point. Returns the passes through the point (for the dry run). */
int fault_run_case(struct fault_env *e, const struct fault_case *c, int nth, int passes, enum fault_mode mode)
{
    static struct run r; /* large */
    unsigned validation_before = vkctx_validation_errors();
    int count;

    run_begin(&r, e, c);
    count = run_steps(&r, nth, mode);
    drop_all(&r);
    if (mode == MODE_DROP)
        next_call(&r);
    run_end(&r);

    if (fd_count() != e->fds) {
        char extra[512];
        list_fds(extra, sizeof extra, e->fd_list);
        problem(&r, "%d fds open, %d before (new:%s)", fd_count(), e->fds, extra);
    }
    if (refs_settle(e) < 0) {
        char queues[128] = "";
        size_t used = 0;
        for (int i = 0; i < NQUEUES; i++)
            used += (size_t)snprintf(queues + used, sizeof queues - used, " %u (%u before)",
                                     cl_queue_refcount(e->queues[i]), e->queue_refs[i]);
        problem(&r, "the context's reference count is %u (%u before), the queues'%s, two seconds on",
                cl_context_refcount(e->f.context), e->context_refs, queues);
        /* What this run leaked stays leaked: judge the next runs on their own. */
        e->context_refs = cl_context_refcount(e->f.context);
        for (int i = 0; i < NQUEUES; i++)
            e->queue_refs[i] = cl_queue_refcount(e->queues[i]);
    }
    if (vkctx_validation_errors() != validation_before)
        problem(&r, "%u new validation errors", vkctx_validation_errors() - validation_before);

    if (mode == MODE_DRY)
        tap_ok(count > 0 && !r.problems[0], "%s, %s: reached %d time(s) with nothing armed%s%s", c->point,
               c->seq->name, count, r.problems[0] ? ": " : "", r.problems);
    else
        tap_ok(!r.problems[0], "%s pass %d/%d, %s: %s%s%s", c->point, nth, passes, mode_names[mode],
               r.report[0] ? r.report : "(no report)", r.problems[0] ? " | " : "; nothing lost", r.problems);
    return count;
}

/* One good run of a row's sequence, twice (as a DROP run's next call does),
 * no TAP point. */
void fault_warm_up(struct fault_env *e, const struct fault_case *c)
{
    static struct run r; /* large */

    run_begin(&r, e, c);
    run_steps(&r, 0, MODE_DRY);
    drop_all(&r);
    next_call(&r);
    run_end(&r);
    if (r.problems[0])
        tap_bail("the warm-up run of %s failed: %s", c->seq->name, r.problems);
}
