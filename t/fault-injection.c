/* Fault injection: every failure point of the bridge's imports, handoff,
 * semaphores and Vulkan-buffer helper is made to fail at every pass a
 * sequence of calls makes through it, and each failure must be reported as
 * documented and lose nothing.
 *
 * For each row of `cases` below (a point and the sequence that reaches it):
 *  1. a dry run with nothing armed counts the passes through the point;
 *  2. for n = 1..passes, twice (RETRY: disarm and repeat the failed call,
 *     then finish the sequence; DROP: let go of everything at once, then
 *     make one good import/acquire/release, the "next call"), the nth pass
 *     fails and the test checks
 *       - the failing call returned the row's status, clmem_error_call()
 *         names the row's call (NULL for the library's own allocations),
 *         the native code is non-zero for OpenCL and Vulkan failures, *out
 *         is NULL after a failed import, and a caller's fd is still open;
 *       - nothing was lost: the fd count and the context's and queue's
 *         OpenCL reference counts are as before, host-mapped memory is no
 *         longer mapped, the validation layer saw no new error, and the
 *         caller's anchor ran its release exactly once when the caller
 *         dropped its reference (the bridge kept none);
 *       - the library still works (the retry, or the next call).
 *
 * Adding a point is one line in `cases`. Sequences whose path the machine
 * lacks (opaque fd, device-ordered semaphores on CPU machines) are skipped
 * with check_path's reason.
 *
 * Links t/libclmem-fault.la, libclmem and libclmem-bridge built with the
 * seam (lib/fault.h), instead of the shipped libraries. */
#include "bridge-fixture.h"
#include "fault-control.h"
#include "fd-count.h"
#include "tap.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ALLOC_SIZE (64 * 1024)
#define SUB_SIZE 4096
/* What an out-parameter holds before a call, so that "set to NULL" shows. */
#define JUNK_HANDLE ((clmem_handle *)(uintptr_t)0x1)
#define JUNK_SEMAPHORE ((clmem_semaphore *)(uintptr_t)0x1)

/* ------------------------------------------------------------ sequences */

enum op_kind {
    OP_END,
    OP_IMPORT,     /* clmem_bridge_import_vk into slot */
    OP_IMPORT_FD,  /* the test exports an fd, clmem_bridge_import_fd into slot */
    OP_ACQUIRE,    /* clmem_bridge_acquire(slot) */
    OP_RELEASE,    /* clmem_bridge_release(slot), waited for */
    OP_DROP,       /* clmem_handle_unref(slot): no status, teardown inside */
    OP_VK_CREATE,  /* clmem_bridge_vk_buffer_create */
    OP_VK_DESTROY, /* clmem_bridge_vk_buffer_destroy: no status */
    OP_SEM_IMPORT, /* clmem_bridge_semaphore_import */
    OP_SEM_DROP    /* clmem_bridge_semaphore_unref: no status */
};

/* Slot 0 imports the whole allocation; slot 1 the range [align, align +
 * SUB_SIZE), a non-zero offset, so that the import makes a sub-buffer. */
struct op {
    enum op_kind kind;
    int slot;
};

enum needs { NEEDS_NOTHING, NEEDS_OPAQUE_FD, NEEDS_SEMAPHORE_OPAQUE_FD };

struct sequence {
    const char *name;
    enum needs needs;
    clmem_path path;                /* of the imports */
    clmem_semaphore_mode sem_mode;  /* of OP_SEM_IMPORT */
    struct op ops[8];
};

#define IMPORT_AND_HANDOFF                                                                                         \
    {{OP_IMPORT, 0}, {OP_IMPORT, 1}, {OP_ACQUIRE, 1}, {OP_RELEASE, 1}, {OP_DROP, 1}, {OP_DROP, 0}, {OP_END, 0}}
#define DROPPED_WHILE_ACQUIRED {{OP_IMPORT, 0}, {OP_ACQUIRE, 0}, {OP_DROP, 0}, {OP_END, 0}}

static const struct sequence seq_host = {
    "host-mapped: import whole, import sub-range, acquire, release, drop both", NEEDS_NOTHING,
    CLMEM_PATH_HOST_MAPPED, 0, IMPORT_AND_HANDOFF};
static const struct sequence seq_host_dropped = {"host-mapped: import, acquire, drop while acquired", NEEDS_NOTHING,
                                                 CLMEM_PATH_HOST_MAPPED, 0, DROPPED_WHILE_ACQUIRED};
static const struct sequence seq_fd = {"opaque-fd: import whole, import sub-range, acquire, release, drop both",
                                       NEEDS_OPAQUE_FD, CLMEM_PATH_OPAQUE_FD, 0,
                                       IMPORT_AND_HANDOFF};
static const struct sequence seq_fd_dropped = {"opaque-fd: import, acquire, drop while acquired", NEEDS_OPAQUE_FD,
                                               CLMEM_PATH_OPAQUE_FD, 0, DROPPED_WHILE_ACQUIRED};
static const struct sequence seq_import_fd = {
    "caller's opaque fd: import_fd sub-range, acquire, release, drop", NEEDS_OPAQUE_FD, CLMEM_PATH_OPAQUE_FD, 0,
    {{OP_IMPORT_FD, 1}, {OP_ACQUIRE, 1}, {OP_RELEASE, 1}, {OP_DROP, 1}, {OP_END, 0}}};
static const struct sequence seq_vk = {"vk_buffer_create, destroy", NEEDS_NOTHING, CLMEM_PATH_HOST_MAPPED, 0,
                                       {{OP_VK_CREATE, 0}, {OP_VK_DESTROY, 0}, {OP_END, 0}}};
static const struct sequence seq_sem_host = {"host-ordered semaphore: import, drop", NEEDS_NOTHING,
                                             CLMEM_PATH_HOST_MAPPED, CLMEM_SEMAPHORE_HOST_ORDERED,
                                             {{OP_SEM_IMPORT, 0}, {OP_SEM_DROP, 0}, {OP_END, 0}}};
static const struct sequence seq_sem_fd = {"opaque-fd semaphore: import, drop", NEEDS_SEMAPHORE_OPAQUE_FD,
                                           CLMEM_PATH_HOST_MAPPED, CLMEM_SEMAPHORE_OPAQUE_FD,
                                           {{OP_SEM_IMPORT, 0}, {OP_SEM_DROP, 0}, {OP_END, 0}}};

/* ---------------------------------------------------------------- cases */

struct fault_case {
    const char *point;             /* the FAULT("...") name */
    const struct sequence *seq;    /* a sequence that reaches it */
    clmem_status want;             /* what the call that fails returns */
    const char *call;              /* what clmem_error_call() names; NULL: the library's own check */
};

static const struct fault_case cases[] = {
    /* point                                   sequence           status               call named */
    {"import_record_alloc",                    &seq_host,         CLMEM_ERR_NO_MEMORY, NULL},
    {"anchor_alloc",                           &seq_host,         CLMEM_ERR_NO_MEMORY, NULL},
    {"host_map_alloc",                         &seq_host,         CLMEM_ERR_NO_MEMORY, NULL},
    {"vkMapMemory",                            &seq_host,         CLMEM_ERR_VULKAN,    "vkMapMemory"},
    {"clCreateBuffer",                         &seq_host,         CLMEM_ERR_OPENCL,    "clCreateBuffer(CL_MEM_USE_HOST_PTR)"},
    {"clEnqueueMapBuffer",                     &seq_host,         CLMEM_ERR_OPENCL,    "clEnqueueMapBuffer"},
    /* (no clCreateSubBuffer here: a host-mapped import wraps just its range) */
    {"clSetMemObjectDestructorCallback",       &seq_host,         CLMEM_ERR_OPENCL,    "clSetMemObjectDestructorCallback"},
    {"handle_alloc",                           &seq_host,         CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueUnmapMemObject",                &seq_host,         CLMEM_ERR_OPENCL,    "clEnqueueUnmapMemObject"},
    {"clEnqueueMapBuffer",                     &seq_host_dropped, CLMEM_ERR_OPENCL,    "clEnqueueMapBuffer"},
    {"vkCreateBuffer",                         &seq_vk,           CLMEM_ERR_VULKAN,    "vkCreateBuffer"},
    {"vkAllocateMemory",                       &seq_vk,           CLMEM_ERR_VULKAN,    "vkAllocateMemory"},
    {"vkBindBufferMemory",                     &seq_vk,           CLMEM_ERR_VULKAN,    "vkBindBufferMemory"},
    {"semaphore_alloc",                        &seq_sem_host,     CLMEM_ERR_NO_MEMORY, NULL},
    {"vkCreateFence",                          &seq_sem_host,     CLMEM_ERR_VULKAN,    "vkCreateFence"},
    /* the fd paths: NVIDIA (cl_khr_external_memory_opaque_fd) */
    {"import_record_alloc",                    &seq_fd,           CLMEM_ERR_NO_MEMORY, NULL},
    {"anchor_alloc",                           &seq_fd,           CLMEM_ERR_NO_MEMORY, NULL},
    {"vkGetMemoryFdKHR",                       &seq_fd,           CLMEM_ERR_VULKAN,    "vkGetMemoryFdKHR"},
    {"clCreateBufferWithProperties",           &seq_fd,           CLMEM_ERR_OPENCL,    "clCreateBufferWithProperties"},
    {"clCreateSubBuffer",                      &seq_fd,           CLMEM_ERR_OPENCL,    "clCreateSubBuffer"},
    {"clSetMemObjectDestructorCallback",       &seq_fd,           CLMEM_ERR_OPENCL,    "clSetMemObjectDestructorCallback"},
    {"handle_alloc",                           &seq_fd,           CLMEM_ERR_NO_MEMORY, NULL},
    {"clEnqueueAcquireExternalMemObjectsKHR",  &seq_fd,           CLMEM_ERR_OPENCL,    "clEnqueueAcquireExternalMemObjectsKHR"},
    {"clEnqueueReleaseExternalMemObjectsKHR",  &seq_fd,           CLMEM_ERR_OPENCL,    "clEnqueueReleaseExternalMemObjectsKHR"},
    {"clEnqueueReleaseExternalMemObjectsKHR",  &seq_fd_dropped,   CLMEM_ERR_OPENCL,    "clEnqueueReleaseExternalMemObjectsKHR"},
    {"fcntl(F_DUPFD_CLOEXEC)",                 &seq_import_fd,    CLMEM_ERR_NO_MEMORY, "fcntl(F_DUPFD_CLOEXEC)"},
    {"import_record_alloc",                    &seq_import_fd,    CLMEM_ERR_NO_MEMORY, NULL},
    {"anchor_alloc",                           &seq_import_fd,    CLMEM_ERR_NO_MEMORY, NULL},
    {"clCreateBufferWithProperties",           &seq_import_fd,    CLMEM_ERR_OPENCL,    "clCreateBufferWithProperties"},
    {"clCreateSubBuffer",                      &seq_import_fd,    CLMEM_ERR_OPENCL,    "clCreateSubBuffer"},
    {"clSetMemObjectDestructorCallback",       &seq_import_fd,    CLMEM_ERR_OPENCL,    "clSetMemObjectDestructorCallback"},
    {"handle_alloc",                           &seq_import_fd,    CLMEM_ERR_NO_MEMORY, NULL},
    {"semaphore_alloc",                        &seq_sem_fd,       CLMEM_ERR_NO_MEMORY, NULL},
    {"vkGetSemaphoreFdKHR",                    &seq_sem_fd,       CLMEM_ERR_VULKAN,    "vkGetSemaphoreFdKHR"},
    {"clCreateSemaphoreWithPropertiesKHR",     &seq_sem_fd,       CLMEM_ERR_OPENCL,    "clCreateSemaphoreWithPropertiesKHR"},
};

/* ------------------------------------------------------------ the world */

struct env {
    struct vkctx vk;
    struct cl_fixture f;
    VkDeviceSize align;             /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes: slot 1's offset */
    bool have[3];                   /* indexed by enum needs */
    char why_not[3][512];           /* check_path's message where a need is not met */
    /* the baselines, with the fixtures open and the drivers warmed up */
    int fds;
    cl_uint context_refs, queue_refs;
};

/* Which fds are open now that were not when the baseline was taken, as
 * "number -> target": to tell a driver's fd from one the bridge lost. */
static char baseline_fds[8192];
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

static cl_uint context_refs(cl_context c)
{
    cl_uint n = 0;
    clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

/* A counting anchor, for the semaphore sequences (the import sequences use
 * the fixture's vk_owned anchor, which counts too). */
static void count_release(void *user)
{
    atomic_fetch_add((atomic_int *)user, 1);
}

/* PoCL lets go of its own references on the queue and the context (held by
 * its commands and events, which a driver thread cleans up) a little after
 * the calls that made them returned. Wait for the counts to come back: a
 * leaked reference never does, so waiting costs time only when something is
 * wrong. Returns how long it took, or -1 after two seconds. */
static int settle_ms_max;
static int refs_settle(const struct env *e)
{
    for (int ms = 0; ms < 2000; ms++) {
        if (context_refs(e->f.context) == e->context_refs && cl_queue_refcount(e->f.queue) == e->queue_refs) {
            if (ms > settle_ms_max)
                settle_ms_max = ms;
            return ms;
        }
        usleep(1000);
    }
    return -1;
}

/* Runs whose caller's anchor was never released: the bridge still holds
 * (or lost) an import, and the drivers may wait for it forever when their
 * context or device is destroyed (NVIDIA's do). */
static int stranded;

enum mode { MODE_DRY, MODE_RETRY, MODE_DROP };
static const char *const mode_names[] = {"dry run", "retry", "drop"};

/* Everything one run of a sequence holds. */
struct run {
    struct env *e;
    const struct fault_case *c;
    const struct sequence *seq;
    struct vk_owned o;             /* the Vulkan memory the imports share */
    clmem_keepalive *ka;           /* the caller's reference on its anchor (or the semaphore's) */
    atomic_int sem_releases;       /* the semaphore sequences' anchor */
    VkSemaphore vk_sem;
    clmem_semaphore *sem;
    clmem_handle *h[2];
    int fd[2];                     /* the caller's fd for OP_IMPORT_FD; -1 when none */
    struct stat fd_stat[2];        /* to tell it from another file that got the same number */
    VkBuffer vk_buffer;
    clmem_vk_memory vk_memory;
    /* what the failing call said, and what was wrong */
    char report[400];
    char problems[2048];
};

static void problem(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct run *r, const char *fmt, ...)
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

static const char *op_name(struct op op)
{
    static const char *const names[] = {"end",     "import_vk",  "import_fd",        "acquire",
                                        "release", "drop",       "vk_buffer_create", "vk_buffer_destroy",
                                        "semaphore_import", "semaphore_unref"};
    static char buf[64];
    snprintf(buf, sizeof buf, "%s%s", names[op.kind],
             op.kind <= OP_DROP && op.kind != OP_END ? (op.slot ? " (sub-range)" : " (whole)") : "");
    return buf;
}

static bool op_reports(enum op_kind k)
{
    return k != OP_DROP && k != OP_VK_DESTROY && k != OP_SEM_DROP;
}

/* The test's own export of the Vulkan memory, for clmem_bridge_import_fd. */
static int export_fd(struct run *r, int slot)
{
    struct env *e = r->e;
    PFN_vkGetMemoryFdKHR get_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(e->vk.device, "vkGetMemoryFdKHR");
    VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                 .memory = r->o.memory.memory,
                                 .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;

    if (!get_fd || get_fd(e->vk.device, &info, &fd) != VK_SUCCESS || fstat(fd, &r->fd_stat[slot]) != 0)
        tap_bail("the test's own vkGetMemoryFdKHR failed");
    return fd;
}

/* Still open, and still the same file (not another that reused the number). */
static bool fd_is_callers(const struct run *r, int slot)
{
    struct stat st;
    return fstat(r->fd[slot], &st) == 0 && st.st_dev == r->fd_stat[slot].st_dev &&
           st.st_ino == r->fd_stat[slot].st_ino;
}

static clmem_status do_op(struct run *r, struct op op)
{
    struct env *e = r->e;
    VkDeviceSize offset = op.slot ? e->align : 0;
    VkDeviceSize size = op.slot ? SUB_SIZE : r->o.memory.allocation_size;
    clmem_status s;

    switch (op.kind) {
    case OP_END: break;
    case OP_IMPORT:
        r->h[op.slot] = JUNK_HANDLE;
        return clmem_bridge_import_vk(&r->o.memory, offset, size, r->seq->path, r->ka, e->f.context, e->f.queue,
                                      CL_MEM_READ_WRITE, &r->h[op.slot]);
    case OP_IMPORT_FD:
        if (r->fd[op.slot] < 0)
            r->fd[op.slot] = export_fd(r, op.slot);
        r->h[op.slot] = JUNK_HANDLE;
        s = clmem_bridge_import_fd(r->fd[op.slot], CLMEM_PATH_OPAQUE_FD, r->o.memory.allocation_size, offset, size,
                                   r->ka, e->f.context, e->f.queue, CL_MEM_READ_WRITE, &r->h[op.slot]);
        if (s == CLMEM_OK)
            r->fd[op.slot] = -1; /* OpenCL's now */
        return s;
    case OP_ACQUIRE: return clmem_bridge_acquire(r->h[op.slot], 0, NULL, NULL);
    case OP_RELEASE: {
        cl_event done = NULL;
        cl_int err;
        s = clmem_bridge_release(r->h[op.slot], 0, NULL, &done);
        if (s == CLMEM_OK) {
            if ((err = clWaitForEvents(1, &done)) != CL_SUCCESS)
                problem(r, "waiting for the release's event failed: %d", err);
            clReleaseEvent(done);
        }
        return s;
    }
    case OP_DROP:
        clmem_handle_unref(r->h[op.slot]);
        r->h[op.slot] = NULL;
        return CLMEM_OK;
    case OP_VK_CREATE:
        r->vk_buffer = (VkBuffer)(uintptr_t)1;
        memset(&r->vk_memory, 0xa5, sizeof r->vk_memory);
        return clmem_bridge_vk_buffer_create(e->vk.physical_device, e->vk.device, ALLOC_SIZE,
                                             VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                             0, &r->vk_buffer, &r->vk_memory);
    case OP_VK_DESTROY:
        clmem_bridge_vk_buffer_destroy(r->vk_buffer, &r->vk_memory);
        r->vk_buffer = VK_NULL_HANDLE;
        memset(&r->vk_memory, 0, sizeof r->vk_memory);
        return CLMEM_OK;
    case OP_SEM_IMPORT:
        r->sem = JUNK_SEMAPHORE;
        return clmem_bridge_semaphore_import(e->vk.device, e->vk.queue, r->vk_sem, r->seq->sem_mode, r->ka,
                                             e->f.context, e->f.device, &r->sem);
    case OP_SEM_DROP:
        clmem_bridge_semaphore_unref(r->sem);
        r->sem = NULL;
        return CLMEM_OK;
    }
    return CLMEM_OK;
}

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

    snprintf(r->report, sizeof r->report, "%s -> %s, %s, code %d", op_name(op), clmem_status_str(s),
             call ? call : "no call", (int)code);
    if (s != c->want)
        problem(r, "%s returned \"%s\", want \"%s\" (%s)", op_name(op), clmem_status_str(s),
                clmem_status_str(c->want), clmem_error_message());
    if (clmem_error_status() != s)
        problem(r, "the error record says %d, the call returned %d", (int)clmem_error_status(), (int)s);
    if (clmem_error_api() != want_api)
        problem(r, "clmem_error_api() is %d, want %d", (int)clmem_error_api(), (int)want_api);
    if (c->call ? !call || strcmp(call, c->call) != 0 : call != NULL)
        problem(r, "clmem_error_call() is %s, want %s", call ? call : "NULL", c->call ? c->call : "NULL");
    if (want_api != CLMEM_API_NONE && code == 0)
        problem(r, "the native code is 0 for a failed native call");
    switch (op.kind) {
    case OP_IMPORT:
    case OP_IMPORT_FD:
        if (r->h[op.slot] != NULL) {
            problem(r, "*out is %p after the failed import, want NULL", (void *)r->h[op.slot]);
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
    case OP_SEM_IMPORT:
        if (r->sem != NULL) {
            problem(r, "*out is %p after the failed semaphore import, want NULL", (void *)r->sem);
            if (r->sem == JUNK_SEMAPHORE)
                r->sem = NULL;
        }
        break;
    default: break;
    }
}

/* The sequence's steps. Returns the passes through the row's point (for
 * the dry run). A fault that fires in a step with no status (a drop: the
 * teardown has no one to report to) is judged by the leak checks alone. */
static int run_steps(struct run *r, int nth, enum mode mode)
{
    const struct op *ops = r->seq->ops;
    bool fired_any = false;
    int passes;

    clmem_fault_reset();
    if (nth > 0)
        clmem_fault_arm(r->c->point, nth);
    for (int i = 0; ops[i].kind != OP_END; i++) {
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
            snprintf(r->report, sizeof r->report, "%s (teardown) failed inside", op_name(ops[i]));
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
    passes = clmem_fault_passes(r->c->point);
    if (nth > 0 && !fired_any)
        problem(r, "pass %d through %s was never reached", nth, r->c->point);
    clmem_fault_reset();
    return passes;
}

/* Let go of whatever a run still holds (after DROP stopped it early). */
static void drop_all(struct run *r)
{
    for (int i = 0; i < 2; i++) {
        clmem_handle_unref(r->h[i]);
        r->h[i] = NULL;
        if (r->fd[i] >= 0)
            close(r->fd[i]);
        r->fd[i] = -1;
    }
    if (r->vk_buffer || r->vk_memory.memory)
        clmem_bridge_vk_buffer_destroy(r->vk_buffer, &r->vk_memory);
    r->vk_buffer = VK_NULL_HANDLE;
    memset(&r->vk_memory, 0, sizeof r->vk_memory);
    clmem_bridge_semaphore_unref(r->sem);
    r->sem = NULL;
}

/* After a DROP: the same kind of work once more, all of it good. */
static void next_call(struct run *r)
{
    static const struct op import_ops[] = {{OP_IMPORT, 0}, {OP_ACQUIRE, 0}, {OP_RELEASE, 0}, {OP_DROP, 0}};
    static const struct op import_fd_ops[] = {{OP_IMPORT_FD, 0}, {OP_ACQUIRE, 0}, {OP_RELEASE, 0}, {OP_DROP, 0}};
    static const struct op vk_ops[] = {{OP_VK_CREATE, 0}, {OP_VK_DESTROY, 0}};
    static const struct op sem_ops[] = {{OP_SEM_IMPORT, 0}, {OP_SEM_DROP, 0}};
    const struct op *ops = import_ops;
    int n = 4;

    if (r->seq->ops[0].kind == OP_IMPORT_FD)
        ops = import_fd_ops;
    else if (r->seq->ops[0].kind == OP_VK_CREATE)
        ops = vk_ops, n = 2;
    else if (r->seq->ops[0].kind == OP_SEM_IMPORT)
        ops = sem_ops, n = 2;
    for (int i = 0; i < n; i++) {
        clmem_status s = do_op(r, ops[i]);
        if (s != CLMEM_OK) {
            problem(r, "the next call after the failure, %s, failed: %s", op_name(ops[i]), clmem_error_message());
            break;
        }
    }
    drop_all(r);
}

static bool uses_memory(const struct sequence *seq)
{
    return seq->ops[0].kind == OP_IMPORT || seq->ops[0].kind == OP_IMPORT_FD;
}

/* A run's resources, made with nothing armed: fresh Vulkan memory and the
 * caller's anchor on it for the imports; a VkSemaphore and a counting
 * anchor for the semaphores. */
static void run_begin(struct run *r, struct env *e, const struct fault_case *c)
{
    memset(r, 0, sizeof *r);
    r->e = e;
    r->c = c;
    r->seq = c->seq;
    r->fd[0] = r->fd[1] = -1;
    atomic_init(&r->sem_releases, 0);
    if (uses_memory(r->seq)) {
        r->ka = vk_owned_new(&r->o, &e->vk, ALLOC_SIZE, path_memory_props(r->seq->path),
                             path_export_types(&e->vk, r->seq->path));
    } else if (r->seq->ops[0].kind == OP_SEM_IMPORT) {
        VkExportSemaphoreCreateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                          .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
        VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                    .pNext = r->seq->sem_mode == CLMEM_SEMAPHORE_OPAQUE_FD ? &ex : NULL};
        if (vkCreateSemaphore(e->vk.device, &ci, NULL, &r->vk_sem) != VK_SUCCESS)
            tap_bail("vkCreateSemaphore failed");
        r->ka = clmem_keepalive_new(count_release, &r->sem_releases);
        if (!r->ka)
            tap_bail("clmem_keepalive_new failed");
    }
}

/* After the steps and drop_all: the bridge must have let go of everything
 * it took from the caller. */
static void run_end(struct run *r)
{
    struct env *e = r->e;
    int released = 0;

    /* The mapping the imports shared is gone: Vulkan lets us map it again
     * (the validation layer reports mapping memory that is mapped). */
    if (uses_memory(r->seq) && r->seq->path == CLMEM_PATH_HOST_MAPPED) {
        void *p = NULL;
        VkResult vr = vkMapMemory(e->vk.device, r->o.memory.memory, 0, VK_WHOLE_SIZE, 0, &p);
        if (vr != VK_SUCCESS)
            problem(r, "mapping the memory after the bridge let go failed: %d", vr);
        else
            vkUnmapMemory(e->vk.device, r->o.memory.memory);
    }
    if (!r->ka)
        return;
    /* The caller lets go: its anchor must run its release now, once. The
     * cl_mem's destruction can lag on drivers that destroy on a thread of
     * their own, so wait a little for the first release (never for more). */
    clmem_keepalive_unref(r->ka);
    for (int i = 0; i < 500; i++) {
        released = uses_memory(r->seq) ? atomic_load(&r->o.released) : atomic_load(&r->sem_releases);
        if (released)
            break;
        usleep(10000);
    }
    if (released != 1)
        problem(r, "the caller's anchor ran its release %d times after the caller let go, want once", released);
    if (released == 0)
        stranded++;
    if (r->vk_sem)
        vkDestroySemaphore(e->vk.device, r->vk_sem, NULL);
}

/* One run: set up (nothing armed), the steps, cleanup, the leak checks, one
 * TAP point. Returns the passes through the point (for the dry run). */
static int run_case(struct env *e, const struct fault_case *c, int nth, int passes, enum mode mode)
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
        list_fds(extra, sizeof extra, baseline_fds);
        problem(&r, "%d fds open, %d before (new:%s)", fd_count(), e->fds, extra);
    }
    if (refs_settle(e) < 0)
        problem(&r, "the context's reference count is %u (%u before), the queue's %u (%u before), two seconds on",
                context_refs(e->f.context), e->context_refs, cl_queue_refcount(e->f.queue), e->queue_refs);
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

/* One good run of a row's sequence and of its "next call", no TAP point. */
static void warm_up(struct env *e, const struct fault_case *c)
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

/* Whether the machine can run a sequence's path at all. */
static void check_needs(struct env *e)
{
    clmem_status s;

    e->have[NEEDS_NOTHING] = true;
    s = clmem_bridge_check_path(e->vk.physical_device, e->f.device, CLMEM_PATH_OPAQUE_FD);
    e->have[NEEDS_OPAQUE_FD] = s == CLMEM_OK && e->vk.has_memory_fd;
    snprintf(e->why_not[NEEDS_OPAQUE_FD], sizeof e->why_not[0], "opaque fd: %s",
             s != CLMEM_OK ? clmem_error_message() : "VK_KHR_external_memory_fd is not enabled");
    s = clmem_bridge_check_semaphore(e->vk.physical_device, e->f.device,
                                     VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT);
    e->have[NEEDS_SEMAPHORE_OPAQUE_FD] = s == CLMEM_OK && e->vk.has_semaphore_fd;
    snprintf(e->why_not[NEEDS_SEMAPHORE_OPAQUE_FD], sizeof e->why_not[0], "opaque-fd semaphores: %s",
             s != CLMEM_OK ? clmem_error_message() : "VK_KHR_external_semaphore_fd is not enabled");
}

int main(void)
{
    static struct env e; /* large; and run_case keeps pointers into it */
    cl_uint align_bits = 0;
    struct timespec t0, t1;
    int points = 0;

    bridge_open_vulkan(&e.vk);
    cl_fixture_open_paired(&e.f, &e.vk);
    clGetDeviceInfo(e.f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    e.align = align_bits / 8 ? align_bits / 8 : 1;
    check_needs(&e);
    tap_diag("OpenCL: %s (%s); Vulkan: %s; sub-range offset %llu", e.f.device_name, e.f.platform_name,
             e.vk.device_name, (unsigned long long)e.align);

    /* Warm-up: drivers open fds and make objects of their own on first use,
     * so the OpenCL baselines are taken after one good run of every
     * sequence. */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (e.have[cases[i].seq->needs])
            warm_up(&e, &cases[i]);
    clFinish(e.f.queue);
    usleep(100000); /* let the driver's own references go (see refs_settle) */
    e.context_refs = context_refs(e.f.context);
    e.queue_refs = cl_queue_refcount(e.f.queue);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct fault_case *c = &cases[i];
        int passes;

        if (!e.have[c->seq->needs]) {
            tap_skip(e.why_not[c->seq->needs], "%s, %s", c->point, c->seq->name);
            continue;
        }
        /* The fd baseline is taken per row, after a good run of its own
         * sequence: the NVIDIA driver keeps one /dev/nvidiactl fd more or
         * less open depending on what ran last (one more after the first
         * opaque-fd run that follows host-mapped ones, the same one on
         * every later run), which is not a leak: a leak grows per run. */
        warm_up(&e, c);
        e.fds = fd_count();
        list_fds(baseline_fds, sizeof baseline_fds, NULL);
        passes = run_case(&e, c, 0, 0, MODE_DRY);
        for (int n = 1; n <= passes; n++) {
            run_case(&e, c, n, passes, MODE_RETRY);
            run_case(&e, c, n, passes, MODE_DROP);
            points++;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tap_diag("%d (point, pass) failures injected, each twice, in %.1f s; OpenCL reference counts took up to %d ms "
             "to settle",
             points, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, settle_ms_max);

    if (stranded) {
        /* Failed above already; closing would hang on the stranded import. */
        tap_diag("%d run(s) left an import behind (anchor never released): not closing the OpenCL context and the "
                 "Vulkan device, whose destruction would wait for it",
                 stranded);
        tap_skip("an import was stranded (see above)", "the Vulkan validation layer reported no error");
        return tap_done();
    }
    cl_fixture_close(&e.f);
    tap_diag("OpenCL fixture closed");
    vkctx_close(&e.vk);
    /* After vkDestroyDevice: the layer reports objects still alive then. */
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error, device teardown included");
    return tap_done();
}
