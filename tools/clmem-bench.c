/*
 * clmem-bench: what handing Vulkan memory to OpenCL through clmem-bridge
 * costs, against what programs do without it (a staged copy) and against
 * the raw extension calls the bridge makes.
 *
 * For each buffer size (4 KiB to 1 GiB by powers of 4; 256 MiB on a CPU
 * OpenCL device) it prints the median and the min..max, in microseconds, of
 *   (a) staged copy: Vulkan copies its buffer into a HOST_VISIBLE staging
 *       buffer (vkCmdCopyBuffer + vkQueueWaitIdle), then
 *       clEnqueueWriteBuffer(blocking) into a plain cl buffer;
 *   (b) first import: clmem_bridge_import_vk on a bridge made with
 *       CLMEM_BRIDGE_NO_IMPORT_CACHE (each rep a new driver import); the
 *       unref and the teardown it starts (clmem_bridge_finish) untimed;
 *   (c) cached import: a second clmem_bridge_import_vk of memory that has a
 *       live import, with the cache on;
 *   (d) per-frame handoff with host waits: Vulkan fills word 0,
 *       vkQueueWaitIdle, acquire, a one-work-item kernel, release, clFinish;
 *   (e) the same handoff ordered by two binary semaphores, no host wait in
 *       the loop: total time of K frames / K;
 * Both bridges are made once, before any timing, on the bench's context.
 * and (f) (b), (d), (e) once more through the raw calls with no library,
 * interleaved rep by rep with the clmem runs so that drift hits both alike.
 * Then (g) image frames (1920x1080 and 3840x2160, RGBA8 and NV12, linear
 * VkImages): a staged copy (vkCmdCopyImageToBuffer, then host writes into
 * OpenCL) against the zero-copy handoff of the plane handles
 * (clmem_bridge_import_vk_image), interleaved rep by rep.
 * Then the ratios (a)/(d), (a)/(e) and clmem vs raw, a CSV and, when
 * gnuplot is on PATH, a PNG.
 *
 * The raw variants mirror what bridge/import.c, bridge/handoff.c and
 * bridge/semaphore.c call, so that clmem - raw is the library's own cost.
 * Correctness is checked once per size (the kernel's results as Vulkan sees
 * them); any failure makes the exit status 1.
 *
 * Exit status: 0; 1 a check or a call failed; 2 usage error; 77 no Vulkan or
 * no OpenCL device, so nothing to measure (the automake "skip" code).
 */
#include "config.h"

#include <clmem-bridge.h>
#include <CL/cl_ext.h>
#include "vkctx.h"

#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define KIB (1024ull)
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)

#define MAX_SIZES 32
#define CPU_DEFAULT_CAP (256ull * MIB) /* a 2-core machine finishes in minutes */
#define GPU_DEFAULT_CAP (1ull * GIB)   /* 4 GiB only when asked with --max-size */
#define DEFAULT_FRAMES 200
#define DEFAULT_BLOCKS 10     /* (e): timed blocks of K frames per variant */
#define WARMUP_FRAMES 10      /* (d), (e): untimed frames before timing */
#define DESTROY_WAIT_S 5      /* how long the raw teardown waits for OpenCL to destroy a cl_mem, and
                                 clmem_bridge_finish for the bridge's teardowns */
#define FINISH_TIMEOUT_NS ((uint64_t)DESTROY_WAIT_S * 1000000000u)
#define WATCHDOG_S 120        /* no measure of one size takes this long; a hang (a semaphore never
                                 signalled) ends the run naming where, instead of at the caller's limit */

/* The property list names differ between OpenCL header releases (see
 * bridge/cl-compat.h); the values are what the bridge passes. */
#define MEM_DEVICE_HANDLE_LIST 0x2051
#define SEMAPHORE_DEVICE_HANDLE_LIST 0x2053
#define DEVICE_HANDLE_LIST_END 0

/* What Vulkan writes into the whole buffer before (a), and word 0's value
 * in frame f of (d) and (e). */
#define PATTERN 0x5eed1234u
#define FRAME_VALUE(f) (0x10000u + (uint32_t)(f) * 7u)

/* One work-item: the smallest kernel that reads and writes the shared
 * memory. p[1] accumulates every frame's p[0], so after K frames it shows
 * whether each kernel saw its own frame's Vulkan write (ordering), not only
 * the last one. */
static const char kernel_source[] = "__kernel void bump(__global uint *p) {\n"
                                    "    uint v = p[0];\n"
                                    "    p[0] = v + 1u;\n"
                                    "    p[1] = p[1] + v;\n"
                                    "}\n";

/* ---------------------------------------------------------------- results */

enum measure { M_STAGED, M_IMPORT, M_CACHED, M_WAIT, M_SEM, M_COUNT };
enum variant { V_BASE, V_CLMEM, V_RAW, V_COUNT };

static const char *const measure_name[M_COUNT] = {"staged_copy", "import", "cached_import", "handoff_wait",
                                                  "handoff_semaphore"};
static const char *const variant_name[V_COUNT] = {"baseline", "clmem", "raw"};

struct summary {
    bool have;
    double median, min, max; /* microseconds */
    int reps;                /* samples behind the numbers */
    int frames_per_rep;      /* (e): frames per timed block; otherwise 1 */
};

struct size_result {
    uint64_t size;
    struct summary s[M_COUNT][V_COUNT];
};

/* ---------------------------------------------------------------- options */

struct options {
    uint64_t sizes[MAX_SIZES];
    int nsizes;        /* > 0 when --sizes was given */
    uint64_t max_size; /* 0: the default cap for the device type */
    int reps;          /* 0: by size */
    int frames;
    int blocks;
    bool quick;
    bool validate;
    const char *csv;
    const char *png;
    /* the batch run: --batches, --ring-sizes, --batch-frame-size */
    int batches[16];
    int nbatches;              /* 0: no batch run */
    int rings[8];
    int nrings;
    uint64_t batch_frame_size; /* 0: by device */
};

/* ---------------------------------------------------------------- state */

/* One variant's two binary semaphores: Vulkan signals `ready`, OpenCL
 * signals `done`. */
struct sem_set {
    VkSemaphore ready, done;
    clmem_bridge_semaphore *lib_ready, *lib_done; /* clmem variant */
    cl_semaphore_khr cl_ready, cl_done;    /* raw variant, device ordering */
    VkFence fence;                         /* raw variant, host ordering */
};

struct bench {
    struct vkctx vk;
    VkPhysicalDeviceProperties vk_props;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_kernel kernel[V_COUNT]; /* V_CLMEM and V_RAW, each bound to its own buffer */
    cl_program program;        /* kept: the batch run makes a kernel per frame */
    bool cpu_device;
    clmem_bridge_path path; /* CLMEM_BRIDGE_PATH_OPAQUE_FD or CLMEM_BRIDGE_PATH_HOST_MAPPED */
    /* Made once, outside every timed loop, on this context and device: one
     * with the import cache ((c), (d), (e), the semaphores), one made with
     * CLMEM_BRIDGE_NO_IMPORT_CACHE ((b): each import a new driver import). */
    clmem_bridge *bridge;
    clmem_bridge *bridge_uncached;
    char pair_note[1152]; /* clmem_error_message() is at most 1023 bytes */
    char path_note[1152];

    /* Raw entry points, resolved as the bridge does (clext.c). */
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire_external;
    clEnqueueReleaseExternalMemObjectsKHR_fn release_external;
    clCreateSemaphoreWithPropertiesKHR_fn create_semaphore;
    clEnqueueWaitSemaphoresKHR_fn wait_semaphores;
    clEnqueueSignalSemaphoresKHR_fn signal_semaphores;
    clReleaseSemaphoreKHR_fn release_semaphore;
    PFN_vkGetMemoryFdKHR get_memory_fd;
    PFN_vkGetSemaphoreFdKHR get_semaphore_fd;

    /* (e) */
    bool sem_ok;        /* both variants' semaphores are usable */
    bool sem_exportable;
    clmem_bridge_semaphore_mode sem_mode; /* what the library imported with; the raw variant mirrors it */
    char sem_note[1152];
    struct sem_set sem[V_COUNT];

    /* limits for the per-size memory check */
    uint64_t cl_max_alloc, cl_global_mem, vk_max_alloc, host_mem;
    int failures;
};

/* ---------------------------------------------------------------- helpers */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("clmem-bench: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* Every call is checked, also inside the timed loops: a branch costs both
 * variants the same, and a silently failing call would time nothing. */
static void check_vk(VkResult r, const char *what)
{
    if (r != VK_SUCCESS)
        die("%s failed: VkResult %d", what, (int)r);
}

static void check_cl(cl_int err, const char *what)
{
    if (err != CL_SUCCESS)
        die("%s failed: OpenCL error %d", what, (int)err);
}

static void check_clmem(clmem_status s, const char *what)
{
    if (s != CLMEM_OK)
        die("%s failed: %s", what, clmem_error_message());
}

/* The watchdog: alarm() per measure; the handler only write()s and _exit()s. */
#define STRINGIFY(x) #x
#define NUMBER_TEXT(x) STRINGIFY(x)
static char watchdog_what[160];
static volatile size_t watchdog_len;

static void on_watchdog(int sig)
{
    static const char msg[] = "clmem-bench: error: no progress in " NUMBER_TEXT(WATCHDOG_S) " s, stuck in ";
    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0 || write(STDERR_FILENO, watchdog_what, watchdog_len) < 0 ||
        write(STDERR_FILENO, "\n", 1) < 0)
        _exit(1);
    _exit(1);
}

static void watchdog(const char *what, const char *size)
{
    int n = snprintf(watchdog_what, sizeof watchdog_what, "%s at %s", what, size);
    watchdog_len = n < 0 ? 0 : (size_t)n < sizeof watchdog_what ? (size_t)n : sizeof watchdog_what - 1;
    signal(SIGALRM, on_watchdog);
    alarm(WATCHDOG_S);
}

/* A check of the results: reported, counted, and the run goes on. */
static void fail(struct bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct bench *b, const char *fmt, ...)
{
    va_list ap;
    printf("FAIL: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    b->failures++;
}

static int compare_double(const void *pa, const void *pb)
{
    double x = *(const double *)pa, y = *(const double *)pb;
    return (x > y) - (x < y);
}

/* Median, min and max of n samples (sorts them in place). */
static struct summary summarize(double *v, int n, int frames_per_rep)
{
    struct summary s = {.have = n > 0, .reps = n, .frames_per_rep = frames_per_rep};
    if (n <= 0)
        return s;
    qsort(v, (size_t)n, sizeof *v, compare_double);
    s.min = v[0];
    s.max = v[n - 1];
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return s;
}

/* "4K", "16M", "1G", or the number of bytes when it is no round multiple. */
static const char *size_text(uint64_t size, char *buf, size_t len)
{
    if (size >= GIB && size % GIB == 0)
        snprintf(buf, len, "%lluG", (unsigned long long)(size / GIB));
    else if (size >= MIB && size % MIB == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(size / MIB));
    else if (size >= KIB && size % KIB == 0)
        snprintf(buf, len, "%lluK", (unsigned long long)(size / KIB));
    else
        snprintf(buf, len, "%llu", (unsigned long long)size);
    return buf;
}

/* "4096", "4K", "4KiB", "16M", "1G" (binary units). 0 when not a size. */
static uint64_t parse_size(const char *text)
{
    char *end;
    unsigned long long n;
    uint64_t unit = 1;

    if (!text || *text < '0' || *text > '9')
        return 0;
    n = strtoull(text, &end, 10);
    switch (*end) {
    case 'k': case 'K': unit = KIB; end++; break;
    case 'm': case 'M': unit = MIB; end++; break;
    case 'g': case 'G': unit = GIB; end++; break;
    default: break;
    }
    if (unit != 1 && strcasecmp(end, "iB") == 0)
        end += 2;
    if (strcasecmp(end, "B") == 0)
        end++;
    if (*end != '\0' || n == 0 || n > UINT64_MAX / unit)
        return 0;
    return (uint64_t)n * unit;
}

static int parse_count(const char *text, const char *option)
{
    char *end;
    long n = text ? strtol(text, &end, 10) : 0;
    if (!text || *text == '\0' || *end != '\0' || n < 1 || n > 1000000) {
        fprintf(stderr, "clmem-bench: %s takes a count from 1 to 1000000, not '%s'\n", option, text ? text : "");
        exit(2);
    }
    return (int)n;
}

/* ---------------------------------------------------------------- Vulkan */

struct vk_buf {
    VkBuffer buffer;
    clmem_bridge_vk_memory mem;
};

/* The clmem variant's buffer belongs to an anchor, as the bridge expects:
 * the anchor frees it once the bench and every import let go. */
struct anchored_buf {
    struct vk_buf buf;
    clmem_bridge *bridge; /* borrowed: the bench's, which outlives every anchor */
    atomic_int freed;
};

static void anchored_buf_release(void *user)
{
    struct anchored_buf *a = user;
    clmem_bridge_vk_buffer_destroy(a->bridge, a->buf.buffer, &a->buf.mem);
    atomic_store(&a->freed, 1);
}

static const VkBufferUsageFlags buffer_usage =
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;

/* The memory a path shares: exportable device-local memory for opaque fd,
 * host-visible coherent memory for host-mapped (bridge/import.c's rule). */
static void shared_buf_create(struct bench *b, struct vk_buf *out, uint64_t size)
{
    bool fd = b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD;
    clmem_status s = clmem_bridge_vk_buffer_create(
        b->bridge, size, buffer_usage,
        fd ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        fd ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT : 0, &out->buffer, &out->mem);
    check_clmem(s, "clmem_bridge_vk_buffer_create(shared buffer)");
}

/* The staging buffer of (a). HOST_CACHED first: the host reads it (the
 * clEnqueueWriteBuffer source), and reading uncached (write-combined)
 * memory would make the baseline slower than a careful program's. */
static bool staging_buf_create(struct bench *b, struct vk_buf *out, uint64_t size)
{
    const VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    clmem_status s = clmem_bridge_vk_buffer_create(b->bridge, size, buffer_usage,
                                                   coherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0, &out->buffer,
                                                   &out->mem);
    if (s == CLMEM_ERR_UNSUPPORTED) {
        s = clmem_bridge_vk_buffer_create(b->bridge, size, buffer_usage, coherent, 0, &out->buffer, &out->mem);
        check_clmem(s, "clmem_bridge_vk_buffer_create(staging buffer)");
        return false;
    }
    check_clmem(s, "clmem_bridge_vk_buffer_create(staging buffer)");
    return true;
}

static VkCommandBuffer begin_commands(struct bench *b)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = b->vk.pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    /* No ONE_TIME_SUBMIT: these are recorded once and submitted every rep. */
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkCommandBuffer cb;
    check_vk(vkAllocateCommandBuffers(b->vk.device, &ai, &cb), "vkAllocateCommandBuffers");
    check_vk(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    return cb;
}

/* The same barrier as tools/vkctx-commands.c: transfer writes made
 * visible to the host and to whatever reads the memory next. */
static void end_commands(VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0,
                         NULL);
    check_vk(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
}

static VkCommandBuffer record_fill_word0(struct bench *b, VkBuffer buffer, uint32_t value)
{
    VkCommandBuffer cb = begin_commands(b);
    vkCmdFillBuffer(cb, buffer, 0, 4, value);
    end_commands(cb);
    return cb;
}

static VkCommandBuffer record_copy(struct bench *b, VkBuffer src, VkBuffer dst, uint64_t size)
{
    VkCommandBuffer cb = begin_commands(b);
    VkBufferCopy region = {0, 0, size};
    vkCmdCopyBuffer(cb, src, dst, 1, &region);
    end_commands(cb);
    return cb;
}

static void submit_and_wait(struct bench *b, VkCommandBuffer cb, const char *what)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), what);
    check_vk(vkQueueWaitIdle(b->vk.queue), what);
}

/* ------------------------------------------------ raw import (no library) */

/* What a program that calls the extensions itself holds for one import. */
struct raw_import {
    cl_mem mem;
    size_t size;
    VkDevice device;
    VkDeviceMemory memory;
    void *vk_base; /* host-mapped: vkMapMemory's pointer */
    void *cl_map;  /* host-mapped: OpenCL's map while the host (Vulkan) owns the memory */
    bool acquired;
    atomic_int destroyed;
};

/* The timed part of a raw import: exactly the calls bridge/import.c makes
 * to the drivers, nothing else. */
static void raw_import(struct bench *b, const clmem_bridge_vk_memory *m, struct raw_import *r)
{
    cl_int err = CL_SUCCESS;

    r->size = (size_t)m->allocation_size;
    r->device = m->device;
    r->memory = m->memory;
    r->vk_base = NULL;
    r->cl_map = NULL;
    r->acquired = false;
    if (b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD) {
        VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                     .memory = m->memory,
                                     .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
        int fd = -1;
        check_vk(b->get_memory_fd(m->device, &info, &fd), "vkGetMemoryFdKHR");
        cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR,
                                     (cl_mem_properties)fd,
                                     MEM_DEVICE_HANDLE_LIST,
                                     (cl_mem_properties)(uintptr_t)b->device,
                                     DEVICE_HANDLE_LIST_END,
                                     0};
        r->mem = clCreateBufferWithProperties(b->context, props, CL_MEM_READ_WRITE, r->size, NULL, &err);
        if (err != CL_SUCCESS || !r->mem) {
            close(fd); /* the driver takes the fd only on success */
            check_cl(err != CL_SUCCESS ? err : CL_INVALID_MEM_OBJECT, "clCreateBufferWithProperties(opaque fd)");
        }
        return;
    }
    check_vk(vkMapMemory(m->device, m->memory, 0, VK_WHOLE_SIZE, 0, &r->vk_base), "vkMapMemory");
    r->mem = clCreateBuffer(b->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, r->size, r->vk_base, &err);
    check_cl(err, "clCreateBuffer(CL_MEM_USE_HOST_PTR)");
    r->cl_map = clEnqueueMapBuffer(b->queue, r->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, r->size, 0, NULL, NULL,
                                   &err);
    check_cl(err, "clEnqueueMapBuffer(import)");
}

static void CL_CALLBACK raw_destroyed(cl_mem mem, void *user)
{
    (void)mem;
    atomic_store((atomic_int *)user, 1);
}

/* Untimed: learn when OpenCL destroys the cl_mem, as the bridge does. */
static void raw_watch(struct raw_import *r)
{
    atomic_store(&r->destroyed, 0);
    check_cl(clSetMemObjectDestructorCallback(r->mem, raw_destroyed, &r->destroyed),
             "clSetMemObjectDestructorCallback");
}

static void raw_acquire(struct bench *b, struct raw_import *r)
{
    cl_int err;
    if (b->path == CLMEM_BRIDGE_PATH_HOST_MAPPED) {
        err = clEnqueueUnmapMemObject(b->queue, r->mem, r->cl_map, 0, NULL, NULL);
        r->cl_map = NULL;
    } else {
        err = b->acquire_external(b->queue, 1, &r->mem, 0, NULL, NULL);
    }
    check_cl(err, "raw acquire");
    r->acquired = true;
}

static void raw_release(struct bench *b, struct raw_import *r)
{
    cl_int err = CL_SUCCESS;
    if (b->path == CLMEM_BRIDGE_PATH_HOST_MAPPED)
        r->cl_map = clEnqueueMapBuffer(b->queue, r->mem, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, r->size, 0, NULL,
                                       NULL, &err);
    else
        err = b->release_external(b->queue, 1, &r->mem, 0, NULL, NULL);
    check_cl(err, "raw release");
    r->acquired = false;
}

/* Untimed, and in the bridge's order (clmem__import_anchor_release): hand
 * the memory back, undo OpenCL's map, finish, release, and only once OpenCL
 * destroyed the cl_mem let Vulkan's mapping go. */
static void raw_teardown(struct bench *b, struct raw_import *r)
{
    double deadline;
    if (r->acquired)
        raw_release(b, r);
    if (r->cl_map)
        check_cl(clEnqueueUnmapMemObject(b->queue, r->mem, r->cl_map, 0, NULL, NULL), "clEnqueueUnmapMemObject");
    r->cl_map = NULL;
    check_cl(clFinish(b->queue), "clFinish");
    check_cl(clReleaseMemObject(r->mem), "clReleaseMemObject");
    deadline = now_us() + DESTROY_WAIT_S * 1e6;
    while (!atomic_load(&r->destroyed)) {
        struct timespec pause = {0, 50000};
        if (now_us() > deadline)
            die("OpenCL did not destroy a raw import within %d s", DESTROY_WAIT_S);
        nanosleep(&pause, NULL);
    }
    if (r->vk_base)
        vkUnmapMemory(r->device, r->memory);
    r->vk_base = NULL;
    r->mem = NULL;
}

/* ------------------------------------------------------------- semaphores */

struct sem_owner {
    VkDevice device;
    VkSemaphore semaphore;
};

static void sem_owner_release(void *user)
{
    struct sem_owner *o = user;
    vkDestroySemaphore(o->device, o->semaphore, NULL);
    free(o);
}

static VkSemaphore semaphore_create(struct bench *b)
{
    VkExportSemaphoreCreateInfo export_info = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                               .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                .pNext = b->sem_exportable ? &export_info : NULL};
    VkSemaphore s;
    check_vk(vkCreateSemaphore(b->vk.device, &ci, NULL, &s), "vkCreateSemaphore");
    return s;
}

/* The library's import of one semaphore; its anchor destroys it. */
static clmem_status lib_semaphore_import(struct bench *b, VkSemaphore s, clmem_bridge_semaphore **out)
{
    struct sem_owner *o = malloc(sizeof *o);
    clmem_keepalive *ka;
    clmem_status st;

    if (!o)
        die("out of memory");
    o->device = b->vk.device;
    o->semaphore = s;
    ka = clmem_keepalive_new(sem_owner_release, o);
    if (!ka)
        die("clmem_keepalive_new failed");
    st = clmem_bridge_semaphore_import(b->bridge, b->vk.queue, s, b->sem_mode, ka, out);
    clmem_keepalive_unref(ka); /* on success the import holds it; on failure this destroys the semaphore */
    return st;
}

/* The raw import of one semaphore, as bridge/semaphore.c makes it. */
static cl_semaphore_khr raw_semaphore_import(struct bench *b, VkSemaphore s)
{
    VkSemaphoreGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
                                    .semaphore = s,
                                    .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    cl_int err = CL_SUCCESS;
    int fd = -1;
    cl_semaphore_khr cs;

    check_vk(b->get_semaphore_fd(b->vk.device, &info, &fd), "vkGetSemaphoreFdKHR");
    cl_semaphore_properties_khr props[] = {CL_SEMAPHORE_TYPE_KHR,
                                           CL_SEMAPHORE_TYPE_BINARY_KHR,
                                           CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR,
                                           (cl_semaphore_properties_khr)fd,
                                           SEMAPHORE_DEVICE_HANDLE_LIST,
                                           (cl_semaphore_properties_khr)(uintptr_t)b->device,
                                           DEVICE_HANDLE_LIST_END,
                                           0};
    cs = b->create_semaphore(b->context, props, &err);
    if (err != CL_SUCCESS || !cs) {
        close(fd); /* the driver takes (closes) the fd only on success */
        check_cl(err != CL_SUCCESS ? err : CL_INVALID_VALUE, "clCreateSemaphoreWithPropertiesKHR");
    }
    return cs;
}

/* Both variants' semaphores, in one mode: opaque fd (device ordering) when
 * the bridge says it works, else host ordering; the raw variant mirrors it,
 * so that the two do the same work. (Not BEST: where only sync fd worked it
 * could choose that, a one-wait-per-import mode the raw loop does not
 * mirror.) Failure leaves (e) out. */
static void semaphores_setup(struct bench *b)
{
    struct sem_set *lib = &b->sem[V_CLMEM], *raw = &b->sem[V_RAW];
    char why_not_fd[sizeof b->sem_note] = "";
    clmem_status st;

    st = clmem_bridge_check_semaphore(b->bridge, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD);
    if (st == CLMEM_OK) {
        b->sem_mode = CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD;
        b->sem_exportable = true; /* as opaque fd, which the bridge found Vulkan can export */
    } else {
        snprintf(why_not_fd, sizeof why_not_fd, "%s", clmem_error_message());
        b->sem_mode = CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED;
        b->sem_exportable = false;
    }
    lib->ready = semaphore_create(b);
    lib->done = semaphore_create(b);
    /* A failed import's anchor destroys that semaphore; the other one is
     * undone here. */
    st = lib_semaphore_import(b, lib->ready, &lib->lib_ready);
    if (st != CLMEM_OK) {
        snprintf(b->sem_note, sizeof b->sem_note, "clmem_bridge_semaphore_import failed: %s", clmem_error_message());
        vkDestroySemaphore(b->vk.device, lib->done, NULL);
    } else if ((st = lib_semaphore_import(b, lib->done, &lib->lib_done)) != CLMEM_OK) {
        snprintf(b->sem_note, sizeof b->sem_note, "clmem_bridge_semaphore_import failed: %s", clmem_error_message());
        clmem_bridge_semaphore_unref(lib->lib_ready);
    }
    if (st != CLMEM_OK) {
        memset(lib, 0, sizeof *lib);
        fail(b, "(e) left out: %s", b->sem_note);
        return;
    }
    if (clmem_bridge_semaphore_get_mode(lib->lib_ready) != b->sem_mode)
        die("clmem_bridge_semaphore_get_mode says mode %d, not the %d imported with",
            (int)clmem_bridge_semaphore_get_mode(lib->lib_ready), (int)b->sem_mode);
    raw->ready = semaphore_create(b);
    raw->done = semaphore_create(b);
    if (b->sem_mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED) {
        VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        check_vk(vkCreateFence(b->vk.device, &fi, NULL, &raw->fence), "vkCreateFence");
        snprintf(b->sem_note, sizeof b->sem_note,
                 "host-ordered (the host waits for each signal with a fence; raw mirrors it); opaque fd: %s",
                 why_not_fd);
    } else if (b->sem_mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD) {
        if (!b->get_semaphore_fd || !b->create_semaphore || !b->wait_semaphores || !b->signal_semaphores ||
            !b->release_semaphore)
            die("the library imported opaque-fd semaphores, but the raw entry points are missing");
        raw->cl_ready = raw_semaphore_import(b, raw->ready);
        raw->cl_done = raw_semaphore_import(b, raw->done);
        snprintf(b->sem_note, sizeof b->sem_note,
                 "opaque-fd (device ordering: clEnqueueWait/SignalSemaphoresKHR + clFlush); raw mirrors it");
    } else {
        snprintf(b->sem_note, sizeof b->sem_note, "mode %d, which this bench cannot mirror raw", (int)b->sem_mode);
        fail(b, "(e) left out: %s", b->sem_note);
        return;
    }
    b->sem_ok = true;
}

static void semaphores_teardown(struct bench *b)
{
    struct sem_set *lib = &b->sem[V_CLMEM], *raw = &b->sem[V_RAW];
    vkDeviceWaitIdle(b->vk.device);
    clFinish(b->queue);
    clmem_bridge_semaphore_unref(lib->lib_ready); /* their anchors destroy the VkSemaphores */
    clmem_bridge_semaphore_unref(lib->lib_done);
    if (raw->cl_ready)
        b->release_semaphore(raw->cl_ready);
    if (raw->cl_done)
        b->release_semaphore(raw->cl_done);
    if (raw->fence)
        vkDestroyFence(b->vk.device, raw->fence, NULL);
    if (raw->ready)
        vkDestroySemaphore(b->vk.device, raw->ready, NULL);
    if (raw->done)
        vkDestroySemaphore(b->vk.device, raw->done, NULL);
    memset(b->sem, 0, sizeof b->sem);
}

/* bridge/semaphore.c's wait and signal, without the library. */
static void raw_semaphore_wait(struct bench *b, struct sem_set *set)
{
    if (b->sem_mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED) {
        VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .waitSemaphoreCount = 1,
                           .pWaitSemaphores = &set->ready,
                           .pWaitDstStageMask = &stage};
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, set->fence), "vkQueueSubmit(raw host-ordered wait)");
        check_vk(vkWaitForFences(b->vk.device, 1, &set->fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        check_vk(vkResetFences(b->vk.device, 1, &set->fence), "vkResetFences");
        return;
    }
    check_cl(b->wait_semaphores(b->queue, 1, &set->cl_ready, NULL, 0, NULL, NULL), "clEnqueueWaitSemaphoresKHR");
}

static void raw_semaphore_signal(struct bench *b, struct sem_set *set)
{
    if (b->sem_mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &set->done};
        check_cl(clFinish(b->queue), "clFinish(raw host-ordered signal)");
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(raw host-ordered signal)");
        return;
    }
    check_cl(b->signal_semaphores(b->queue, 1, &set->cl_done, NULL, 0, NULL, NULL), "clEnqueueSignalSemaphoresKHR");
    /* The library flushes so the signal reaches the device now (clmem-bridge.h). */
    check_cl(clFlush(b->queue), "clFlush");
}

/* ---------------------------------------------------------- one size */

/* Everything one size needs. */
struct size_run {
    uint64_t size;
    int reps;
    int frames; /* K */
    int blocks;
    int warmup_frames;
    struct anchored_buf *lib;   /* the clmem variant's shared buffer */
    clmem_keepalive *lib_anchor;
    struct vk_buf raw_buf;      /* the raw variant's shared buffer: each variant has its own, so the
                                   host-mapped path's single vkMapMemory per memory never collides */
    struct vk_buf staging;
    uint32_t *staging_ptr;      /* mapped for the whole size */
    bool staging_cached;
    cl_mem plain;
    VkCommandBuffer copy_cb;
    VkCommandBuffer *fill_cb[V_COUNT]; /* per variant, one per frame value */
    int nfill;
    clmem_handle *h;          /* (d), (e): the clmem variant's import */
    struct raw_import raw;    /* (d), (e): the raw variant's import */
    double *samples;          /* scratch, big enough for every measure */
    double *samples2;
};

static void enqueue_kernel(struct bench *b, enum variant v)
{
    size_t one = 1;
    check_cl(clEnqueueNDRangeKernel(b->queue, b->kernel[v], 1, NULL, &one, NULL, 0, NULL, NULL),
             "clEnqueueNDRangeKernel");
}

static VkBuffer variant_buffer(struct size_run *s, enum variant v)
{
    return v == V_CLMEM ? s->lib->buf.buffer : s->raw_buf.buffer;
}

/* Vulkan's view of words 0 and 1, through the staging buffer. */
static void vulkan_words(struct bench *b, struct size_run *s, VkBuffer buffer, uint32_t out[2])
{
    check_vk(vkctx_copy(&b->vk, buffer, s->staging.buffer, 8), "vkctx_copy(read back)");
    out[0] = s->staging_ptr[0];
    out[1] = s->staging_ptr[1];
}

static void check_frames(struct bench *b, struct size_run *s, enum variant v, int frames, const char *what)
{
    uint32_t got[2], want0 = FRAME_VALUE(frames - 1) + 1u, want1 = 0;
    char sz[32];
    for (int f = 0; f < frames; f++)
        want1 += FRAME_VALUE(f);
    vulkan_words(b, s, variant_buffer(s, v), got);
    if (got[0] != want0 || got[1] != want1)
        fail(b, "%s %s at %s: Vulkan sees word 0 = 0x%08x (want 0x%08x), word 1 = 0x%08x (want 0x%08x, the sum "
                "of %d frames' values)",
             what, variant_name[v], size_text(s->size, sz, sizeof sz), got[0], want0, got[1], want1, frames);
}

/* Word 1 starts each (d) run and (e) block at 0. Vulkan owns the memory
 * between frames, so it may write it. */
static void reset_sum(struct bench *b, struct size_run *s, enum variant v)
{
    check_vk(vkctx_fill(&b->vk, variant_buffer(s, v), 4, 4, 0), "vkctx_fill(word 1)");
}

static void size_setup(struct bench *b, struct size_run *s)
{
    cl_int err;
    s->lib = calloc(1, sizeof *s->lib);
    if (!s->lib)
        die("out of memory");
    shared_buf_create(b, &s->lib->buf, s->size);
    s->lib->bridge = b->bridge;
    atomic_init(&s->lib->freed, 0);
    s->lib_anchor = clmem_keepalive_new(anchored_buf_release, s->lib);
    if (!s->lib_anchor)
        die("clmem_keepalive_new failed");
    shared_buf_create(b, &s->raw_buf, s->size);
    s->staging_cached = staging_buf_create(b, &s->staging, s->size);
    check_vk(vkMapMemory(b->vk.device, s->staging.mem.memory, 0, VK_WHOLE_SIZE, 0, (void **)&s->staging_ptr),
             "vkMapMemory(staging)");
    s->plain = clCreateBuffer(b->context, CL_MEM_READ_WRITE, (size_t)s->size, NULL, &err);
    check_cl(err, "clCreateBuffer(plain)");
    check_vk(vkctx_fill(&b->vk, s->lib->buf.buffer, 0, VK_WHOLE_SIZE, PATTERN), "vkctx_fill(pattern)");
    check_vk(vkctx_fill(&b->vk, s->raw_buf.buffer, 0, VK_WHOLE_SIZE, PATTERN), "vkctx_fill(pattern)");
    s->copy_cb = record_copy(b, s->lib->buf.buffer, s->staging.buffer, s->size);
    s->nfill = s->warmup_frames + s->frames;
    for (int v = V_CLMEM; v <= V_RAW; v++) {
        s->fill_cb[v] = calloc((size_t)s->nfill, sizeof *s->fill_cb[v]);
        if (!s->fill_cb[v])
            die("out of memory");
        for (int f = 0; f < s->nfill; f++)
            s->fill_cb[v][f] = record_fill_word0(b, variant_buffer(s, (enum variant)v), FRAME_VALUE(f));
    }
    s->samples = calloc((size_t)(s->nfill + s->reps + s->blocks + 8), sizeof *s->samples);
    s->samples2 = calloc((size_t)(s->nfill + s->reps + s->blocks + 8), sizeof *s->samples2);
    if (!s->samples || !s->samples2)
        die("out of memory");
}

static void size_teardown(struct bench *b, struct size_run *s)
{
    clmem_status st;
    double deadline;
    check_vk(vkQueueWaitIdle(b->vk.queue), "vkQueueWaitIdle");
    for (int v = V_CLMEM; v <= V_RAW; v++) {
        vkFreeCommandBuffers(b->vk.device, b->vk.pool, (uint32_t)s->nfill, s->fill_cb[v]);
        free(s->fill_cb[v]);
    }
    vkFreeCommandBuffers(b->vk.device, b->vk.pool, 1, &s->copy_cb);
    clReleaseMemObject(s->plain);
    vkUnmapMemory(b->vk.device, s->staging.mem.memory);
    clmem_bridge_vk_buffer_destroy(b->bridge, s->staging.buffer, &s->staging.mem);
    clmem_bridge_vk_buffer_destroy(b->bridge, s->raw_buf.buffer, &s->raw_buf.mem);
    /* Every handle is gone. A bridge drops its keepalive reference after
     * an import's last handle, once the device work is done: a driver
     * callback, or clmem_bridge_finish doing it itself. The uncached
     * bridge's imports were each finished already; this must hold. */
    st = clmem_bridge_finish(b->bridge_uncached, FINISH_TIMEOUT_NS);
    if (st != CLMEM_OK)
        fail(b, "clmem_bridge_finish (uncached bridge) returned %s: %s", clmem_status_name(st),
             clmem_error_message());
    /* The cached bridge still holds the semaphores, so it cannot be
     * finished here: its teardowns complete through the driver's callbacks
     * once the markers the last unref enqueued ran (clFinish). Then the
     * bench's reference is the last and dropping it frees the memory. */
    check_cl(clFinish(b->queue), "clFinish(before the teardowns)");
    clmem_keepalive_unref(s->lib_anchor);
    deadline = now_us() + DESTROY_WAIT_S * 1e6;
    while (!atomic_load(&s->lib->freed) && now_us() < deadline) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    if (atomic_load(&s->lib->freed))
        free(s->lib);
    else /* leave it to the anchor, which may still run */
        fail(b, "the clmem buffer's anchor was not released %d s after its last import went", DESTROY_WAIT_S);
    free(s->samples);
    free(s->samples2);
}

/* (a) what a program does without sharing: Vulkan copies into staging,
 * the host hands the bytes to OpenCL. The staging buffer is mapped once
 * (persistently, as careful programs do) and the copy is pre-recorded, so
 * the timing holds only the per-transfer work. */
static struct summary run_staged(struct bench *b, struct size_run *s)
{
    uint32_t first = 0, last = 0;
    char sz[32];
    for (int rep = -1; rep < s->reps; rep++) { /* rep -1: warm-up */
        double t0 = now_us();
        submit_and_wait(b, s->copy_cb, "vkQueueSubmit(staging copy)");
        check_cl(clEnqueueWriteBuffer(b->queue, s->plain, CL_TRUE, 0, (size_t)s->size, s->staging_ptr, 0, NULL, NULL),
                 "clEnqueueWriteBuffer");
        double t1 = now_us();
        if (rep >= 0)
            s->samples[rep] = t1 - t0;
    }
    check_cl(clEnqueueReadBuffer(b->queue, s->plain, CL_TRUE, 0, 4, &first, 0, NULL, NULL), "clEnqueueReadBuffer");
    check_cl(clEnqueueReadBuffer(b->queue, s->plain, CL_TRUE, (size_t)s->size - 4, 4, &last, 0, NULL, NULL),
             "clEnqueueReadBuffer");
    if (first != PATTERN || last != PATTERN)
        fail(b, "(a) at %s: the plain buffer holds 0x%08x ... 0x%08x, want 0x%08x", size_text(s->size, sz, sizeof sz),
             first, last, PATTERN);
    return summarize(s->samples, s->reps, 1);
}

/* An import of the clmem variant's buffer through `bridge` (b->bridge, or
 * b->bridge_uncached for (b)). */
static clmem_status lib_import(struct bench *b, clmem_bridge *bridge, struct size_run *s, clmem_handle **h)
{
    return clmem_bridge_import_vk(bridge, &s->lib->buf.mem, 0, s->lib->buf.mem.allocation_size, b->path,
                                  s->lib_anchor, b->queue, CL_MEM_READ_WRITE, h);
}

/* Untimed, after the last handle of the uncached bridge's import went: the
 * teardown that unref started (markers on the queue, then the Vulkan
 * keepalive dropped) is done before the next import, as raw_teardown waits
 * for its cl_mem. So no rep inherits another's pending teardown, and the
 * two bridges never hold a host mapping of the same memory at once. (Not
 * for the cached bridge: it holds the semaphores all run long, so its
 * clmem_bridge_finish is CLMEM_ERR_IN_USE until the end.) */
static void lib_settle(clmem_bridge *bridge, const char *what)
{
    clmem_status st = clmem_bridge_finish(bridge, FINISH_TIMEOUT_NS);
    if (st != CLMEM_OK)
        die("clmem_bridge_finish (%s) returned %s: %s", what, clmem_status_name(st), clmem_error_message());
}

/* (b) and raw (b): a new driver import each rep, clmem and raw in turns.
 * The clmem variant imports through the bridge made without a cache. */
static void run_import(struct bench *b, struct size_run *s, struct summary *lib_out, struct summary *raw_out)
{
    for (int rep = -1; rep < s->reps; rep++) {
        for (int turn = 0; turn < 2; turn++) {
            /* Even reps: clmem first; odd reps (and the warm-up): raw first. */
            bool lib_turn = (rep >= 0 && rep % 2 == 0) == (turn == 0);
            double t0, t1;
            if (lib_turn) {
                clmem_handle *h = NULL;
                t0 = now_us();
                clmem_status st = lib_import(b, b->bridge_uncached, s, &h);
                t1 = now_us();
                check_clmem(st, "clmem_bridge_import_vk (CLMEM_BRIDGE_NO_IMPORT_CACHE)");
                clmem_handle_unref(h);
                lib_settle(b->bridge_uncached, "after an uncached import");
            } else {
                struct raw_import r;
                t0 = now_us();
                raw_import(b, &s->raw_buf.mem, &r);
                t1 = now_us();
                raw_watch(&r);
                raw_teardown(b, &r);
            }
            if (rep >= 0)
                (lib_turn ? s->samples : s->samples2)[rep] = t1 - t0;
        }
    }
    *lib_out = summarize(s->samples, s->reps, 1);
    *raw_out = summarize(s->samples2, s->reps, 1);
}

/* (c): a second import of memory with a live import, through the bridge
 * with the cache. */
static struct summary run_cached(struct bench *b, struct size_run *s)
{
    clmem_handle *h0 = NULL;
    char sz[32];
    bool same = true;

    check_clmem(lib_import(b, b->bridge, s, &h0), "clmem_bridge_import_vk (the live import)");
    for (int rep = -1; rep < s->reps; rep++) {
        clmem_handle *h = NULL;
        double t0 = now_us();
        clmem_status st = lib_import(b, b->bridge, s, &h);
        double t1 = now_us();
        check_clmem(st, "clmem_bridge_import_vk (cached)");
        same = same && clmem_handle_mem(h) == clmem_handle_mem(h0);
        clmem_handle_unref(h);
        if (rep >= 0)
            s->samples[rep] = t1 - t0;
    }
    if (!same)
        fail(b, "(c) at %s: the cached import returned another cl_mem than the live import's",
             size_text(s->size, sz, sizeof sz));
    clmem_handle_unref(h0);
    return summarize(s->samples, s->reps, 1);
}

/* One frame of (d); returns its time. */
static double wait_frame(struct bench *b, struct size_run *s, enum variant v, int f)
{
    double t0 = now_us();
    submit_and_wait(b, s->fill_cb[v][f], "vkQueueSubmit(fill word 0) + vkQueueWaitIdle");
    if (v == V_CLMEM) {
        check_clmem(clmem_bridge_acquire(b->bridge, s->h, 0, NULL, NULL), "clmem_bridge_acquire");
        enqueue_kernel(b, v);
        check_clmem(clmem_bridge_release(b->bridge, s->h, 0, NULL, NULL), "clmem_bridge_release");
    } else {
        raw_acquire(b, &s->raw);
        enqueue_kernel(b, v);
        raw_release(b, &s->raw);
    }
    check_cl(clFinish(b->queue), "clFinish");
    return now_us() - t0;
}

/* (d) and raw (d), alternating frame by frame (and which goes first). */
static void run_wait(struct bench *b, struct size_run *s, struct summary *lib_out, struct summary *raw_out)
{
    int total = s->warmup_frames + s->frames;
    reset_sum(b, s, V_CLMEM);
    reset_sum(b, s, V_RAW);
    for (int f = 0; f < total; f++) {
        for (int turn = 0; turn < 2; turn++) {
            enum variant v = (f % 2 == 0) == (turn == 0) ? V_CLMEM : V_RAW;
            double t = wait_frame(b, s, v, f);
            if (f >= s->warmup_frames)
                (v == V_CLMEM ? s->samples : s->samples2)[f - s->warmup_frames] = t;
        }
    }
    check_frames(b, s, V_CLMEM, total, "(d)");
    check_frames(b, s, V_RAW, total, "(d)");
    *lib_out = summarize(s->samples, s->frames, 1);
    *raw_out = summarize(s->samples2, s->frames, 1);
}

/* One block of (e): `frames` frames with no host wait in the loop (the
 * library's host-ordered mode waits inside its own calls), then one final
 * wait. Returns the time per frame. */
static double semaphore_block(struct bench *b, struct size_run *s, enum variant v, int frames)
{
    struct sem_set *set = &b->sem[v];
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo last = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                         .waitSemaphoreCount = 1,
                         .pWaitSemaphores = &set->done,
                         .pWaitDstStageMask = &stage};
    double t0, t1;

    reset_sum(b, s, v);
    t0 = now_us();
    for (int f = 0; f < frames; f++) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &s->fill_cb[v][f],
                           .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &set->ready};
        if (f > 0) { /* Vulkan writes only after OpenCL finished the previous frame */
            si.waitSemaphoreCount = 1;
            si.pWaitSemaphores = &set->done;
            si.pWaitDstStageMask = &stage;
        }
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(fill, semaphores)");
        if (v == V_CLMEM) {
            check_clmem(clmem_bridge_semaphore_wait(b->bridge, set->lib_ready, b->queue, 0, NULL, NULL),
                        "clmem_bridge_semaphore_wait");
            check_clmem(clmem_bridge_acquire(b->bridge, s->h, 0, NULL, NULL), "clmem_bridge_acquire");
            enqueue_kernel(b, v);
            check_clmem(clmem_bridge_release(b->bridge, s->h, 0, NULL, NULL), "clmem_bridge_release");
            check_clmem(clmem_bridge_semaphore_signal(b->bridge, set->lib_done, b->queue, 0, NULL, NULL),
                        "clmem_bridge_semaphore_signal");
        } else {
            raw_semaphore_wait(b, set);
            raw_acquire(b, &s->raw);
            enqueue_kernel(b, v);
            raw_release(b, &s->raw);
            raw_semaphore_signal(b, set);
        }
    }
    /* The one host wait: Vulkan consumes the last signal, both queues drain. */
    check_vk(vkQueueSubmit(b->vk.queue, 1, &last, VK_NULL_HANDLE), "vkQueueSubmit(final wait)");
    check_vk(vkQueueWaitIdle(b->vk.queue), "vkQueueWaitIdle(final)");
    check_cl(clFinish(b->queue), "clFinish(final)");
    t1 = now_us();
    check_frames(b, s, v, frames, "(e)");
    return (t1 - t0) / frames;
}

/* (e) and raw (e): whole blocks alternate (a pipeline cannot be split frame
 * by frame between two variants), in the order clmem-raw, raw-clmem, ... */
static void run_semaphore(struct bench *b, struct size_run *s, struct summary *lib_out, struct summary *raw_out)
{
    int warm = s->warmup_frames < s->frames ? s->warmup_frames : s->frames;
    semaphore_block(b, s, V_CLMEM, warm > 0 ? warm : 1);
    semaphore_block(b, s, V_RAW, warm > 0 ? warm : 1);
    for (int blk = 0; blk < s->blocks; blk++) {
        for (int turn = 0; turn < 2; turn++) {
            enum variant v = (blk % 2 == 0) == (turn == 0) ? V_CLMEM : V_RAW;
            double t = semaphore_block(b, s, v, s->frames);
            (v == V_CLMEM ? s->samples : s->samples2)[blk] = t;
        }
    }
    *lib_out = summarize(s->samples, s->blocks, s->frames);
    *raw_out = summarize(s->samples2, s->blocks, s->frames);
}

static void print_line(const char *label, const char *variant, const struct summary *m)
{
    if (!m->have)
        return;
    printf("  %-34s %-8s %11.2f us  [%.2f .. %.2f]  n=%d%s\n", label, variant, m->median, m->min, m->max, m->reps,
           m->frames_per_rep > 1 ? " blocks" : "");
}

static void run_size(struct bench *b, struct size_run *s, struct size_result *res)
{
    char sz[32];
    double t_start = now_us();

    res->size = s->size;
    size_setup(b, s);
    printf("\nsize %s (allocation %llu bytes; reps %d, frames %d, semaphore blocks %d)%s\n",
           size_text(s->size, sz, sizeof sz), (unsigned long long)s->lib->buf.mem.allocation_size, s->reps,
           s->frames, s->blocks, s->staging_cached ? "" : " staging is not HOST_CACHED");
    fflush(stdout);

    watchdog("(a) staged copy", sz);
    res->s[M_STAGED][V_BASE] = run_staged(b, s);
    print_line("(a) staged copy", "baseline", &res->s[M_STAGED][V_BASE]);
    fflush(stdout);

    watchdog("(b) first import", sz);
    run_import(b, s, &res->s[M_IMPORT][V_CLMEM], &res->s[M_IMPORT][V_RAW]);
    print_line("(b) first import (cache off)", "clmem", &res->s[M_IMPORT][V_CLMEM]);
    print_line("(f) first import", "raw", &res->s[M_IMPORT][V_RAW]);
    fflush(stdout);

    watchdog("(c) cached import", sz);
    res->s[M_CACHED][V_CLMEM] = run_cached(b, s);
    print_line("(c) cached import", "clmem", &res->s[M_CACHED][V_CLMEM]);
    fflush(stdout);

    /* (d) and (e) share one live import per variant. */
    check_clmem(lib_import(b, b->bridge, s, &s->h), "clmem_bridge_import_vk");
    raw_import(b, &s->raw_buf.mem, &s->raw);
    raw_watch(&s->raw);
    {
        cl_mem lib_mem = clmem_handle_mem(s->h);
        check_cl(clSetKernelArg(b->kernel[V_CLMEM], 0, sizeof lib_mem, &lib_mem), "clSetKernelArg");
    }
    check_cl(clSetKernelArg(b->kernel[V_RAW], 0, sizeof(cl_mem), &s->raw.mem), "clSetKernelArg");

    watchdog("(d) handoff with host waits", sz);
    run_wait(b, s, &res->s[M_WAIT][V_CLMEM], &res->s[M_WAIT][V_RAW]);
    print_line("(d) handoff, host waits, per frame", "clmem", &res->s[M_WAIT][V_CLMEM]);
    print_line("(f) handoff, host waits, per frame", "raw", &res->s[M_WAIT][V_RAW]);
    fflush(stdout);

    if (b->sem_ok) {
        watchdog("(e) handoff with semaphores", sz);
        run_semaphore(b, s, &res->s[M_SEM][V_CLMEM], &res->s[M_SEM][V_RAW]);
        print_line("(e) handoff, semaphores, per frame", "clmem", &res->s[M_SEM][V_CLMEM]);
        print_line("(f) handoff, semaphores, per frame", "raw", &res->s[M_SEM][V_RAW]);
    }

    watchdog("teardown", sz);
    clmem_handle_unref(s->h);
    s->h = NULL;
    raw_teardown(b, &s->raw);
    size_teardown(b, s);
    alarm(0);
    printf("  (size done in %.1f s)\n", (now_us() - t_start) / 1e6);
    fflush(stdout);
}

/* ---------------------------------------------------------------- frames */

/* (g) image frames: a linear VkImage of 1920x1080 or 3840x2160 in RGBA8 or
 * NV12 reaching an OpenCL kernel, two ways, interleaved rep by rep:
 *   staged: vkCmdCopyImageToBuffer of every plane into persistently mapped
 *     staging + vkQueueWaitIdle, clEnqueueWriteBuffer of each plane into a
 *     plain cl buffer, the one-work-item kernel on plane 0, clFinish;
 *   zero-copy: clmem_bridge_acquire of each plane handle
 *     (clmem_bridge_import_vk_image, imported once before timing), the
 *     kernel on plane 0's buffer, clmem_bridge_release of each, clFinish.
 * A format or size the device cannot make is a line saying why. */

#define MAX_FRAME_RESULTS 4

struct frame_result {
    const char *label;    /* "1920x1080 RGBA8" */
    const char *key;      /* "1920x1080_rgba8" (CSV) */
    uint64_t bytes;       /* the frame's texel bytes, every plane */
    struct summary staged, handoff;
};

static struct frame_result frame_results[MAX_FRAME_RESULTS];
static int n_frame_results;

struct anchored_image {
    clmem_bridge_vk_image img;
    clmem_bridge *bridge; /* borrowed: the bench's */
    atomic_int freed;
};

static void anchored_image_release(void *user)
{
    struct anchored_image *a = user;
    clmem_bridge_vk_image_destroy(a->bridge, &a->img);
    atomic_store(&a->freed, 1);
}

static VkImageAspectFlagBits frame_aspect(const clmem_bridge_vk_image *img, unsigned p)
{
    return img->plane_count == 1 ? VK_IMAGE_ASPECT_COLOR_BIT : p == 0 ? VK_IMAGE_ASPECT_PLANE_0_BIT
                                                                      : VK_IMAGE_ASPECT_PLANE_1_BIT;
}

static void run_frame(struct bench *b, VkFormat format, const char *fmt_name, const char *fmt_key, uint32_t w,
                      uint32_t h, int reps)
{
    bool fd = b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD;
    struct anchored_image *a = calloc(1, sizeof *a);
    clmem_keepalive *ka;
    clmem_handle *hd[2] = {NULL, NULL};
    cl_mem plain[2] = {NULL, NULL};
    uint64_t off[2] = {0, 0}, bytes[2] = {0, 0}, total = 0;
    struct vk_buf staging;
    unsigned char *mapped = NULL;
    VkCommandBuffer copy_cb;
    double *st = calloc((size_t)reps, sizeof *st), *zc = calloc((size_t)reps, sizeof *zc);
    char label[64], what[160];
    clmem_status s;
    cl_int err;

    snprintf(label, sizeof label, "%ux%u %s", w, h, fmt_name);
    if (!a || !st || !zc)
        die("out of memory");
    a->bridge = b->bridge;
    atomic_init(&a->freed, 0);
    s = clmem_bridge_vk_image_create(
        b->bridge, format, (VkExtent2D){w, h}, VK_IMAGE_TILING_LINEAR,
        VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
        fd ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        fd ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT : 0, &a->img);
    if (s != CLMEM_OK) {
        printf("  (g) frame %-16s skipped: %s\n", label, clmem_error_message());
        free(a);
        free(st);
        free(zc);
        return;
    }
    if (!(ka = clmem_keepalive_new(anchored_image_release, a)))
        die("clmem_keepalive_new failed");
    for (unsigned p = 0; p < a->img.plane_count; p++) {
        uint32_t tb = 0;
        clmem_bridge_image_plane_format(format, p, NULL, &tb);
        off[p] = total;
        bytes[p] = (uint64_t)a->img.planes[p].width * a->img.planes[p].height * tb;
        total += bytes[p];
    }
    staging_buf_create(b, &staging, total);
    check_vk(vkMapMemory(b->vk.device, staging.mem.memory, 0, VK_WHOLE_SIZE, 0, (void **)&mapped),
             "vkMapMemory(frame staging)");
    /* Vulkan writes the frame once: a byte pattern, plane by plane. */
    for (uint64_t i = 0; i < total; i++)
        mapped[i] = (unsigned char)(i * 7u + i / 4099u);
    for (unsigned p = 0; p < a->img.plane_count; p++) {
        uint32_t tb = 0;
        clmem_bridge_image_plane_format(format, p, NULL, &tb);
        check_vk(vkctx_copy_buffer_to_image(&b->vk, staging.buffer, off[p], 0, a->img.image, frame_aspect(&a->img, p),
                                            a->img.planes[p].width, a->img.planes[p].height,
                                            p == 0 ? VK_IMAGE_LAYOUT_UNDEFINED : VK_IMAGE_LAYOUT_GENERAL),
                 "vkctx_copy_buffer_to_image(frame)");
        snprintf(what, sizeof what, "clmem_bridge_import_vk_image(%s plane %u)", label, p);
        check_clmem(clmem_bridge_import_vk_image(b->bridge, &a->img, p, b->path, ka, b->queue, CL_MEM_READ_WRITE, 0,
                                                 &hd[p]),
                    what);
        plain[p] = clCreateBuffer(b->context, CL_MEM_READ_WRITE, (size_t)bytes[p], NULL, &err);
        check_cl(err, "clCreateBuffer(frame plane)");
    }
    clmem_keepalive_unref(ka); /* the imports hold it now */
    /* The staged copy, recorded once: every plane into staging, tightly packed. */
    copy_cb = begin_commands(b);
    {
        VkImageMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                                   .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                                   .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
                                   .oldLayout = VK_IMAGE_LAYOUT_GENERAL,
                                   .newLayout = VK_IMAGE_LAYOUT_GENERAL,
                                   .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                   .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                   .image = a->img.image,
                                   .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
        vkCmdPipelineBarrier(copy_cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL,
                             0, NULL, 1, &mb);
        for (unsigned p = 0; p < a->img.plane_count; p++) {
            VkBufferImageCopy region = {.bufferOffset = off[p],
                                        .imageSubresource = {(VkImageAspectFlags)frame_aspect(&a->img, p), 0, 0, 1},
                                        .imageExtent = {a->img.planes[p].width, a->img.planes[p].height, 1}};
            vkCmdCopyImageToBuffer(copy_cb, a->img.image, VK_IMAGE_LAYOUT_GENERAL, staging.buffer, 1, &region);
        }
    }
    end_commands(copy_cb);

    for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up */
        double t0, t1, t2;
        cl_mem m;

        t0 = now_us();
        submit_and_wait(b, copy_cb, "vkQueueSubmit(frame staged copy)");
        for (unsigned p = 0; p < a->img.plane_count; p++)
            check_cl(clEnqueueWriteBuffer(b->queue, plain[p], CL_FALSE, 0, (size_t)bytes[p], mapped + off[p], 0,
                                          NULL, NULL),
                     "clEnqueueWriteBuffer(frame plane)");
        m = plain[0];
        check_cl(clSetKernelArg(b->kernel[V_RAW], 0, sizeof m, &m), "clSetKernelArg");
        enqueue_kernel(b, V_RAW);
        check_cl(clFinish(b->queue), "clFinish(frame staged)");
        t1 = now_us();
        for (unsigned p = 0; p < a->img.plane_count; p++)
            check_clmem(clmem_bridge_acquire(b->bridge, hd[p], 0, NULL, NULL), "clmem_bridge_acquire(frame plane)");
        m = clmem_handle_mem(hd[0]);
        check_cl(clSetKernelArg(b->kernel[V_CLMEM], 0, sizeof m, &m), "clSetKernelArg");
        enqueue_kernel(b, V_CLMEM);
        for (unsigned p = 0; p < a->img.plane_count; p++)
            check_clmem(clmem_bridge_release(b->bridge, hd[p], 0, NULL, NULL), "clmem_bridge_release(frame plane)");
        check_cl(clFinish(b->queue), "clFinish(frame handoff)");
        t2 = now_us();
        if (rep >= 0) {
            st[rep] = t1 - t0;
            zc[rep] = t2 - t1;
        }
    }
    /* Correctness, once: the last plane's last row as OpenCL sees it
     * through the plane handle's row pitch, and the staged copy's last
     * bytes, are what Vulkan wrote (the kernel touches plane 0's first 8
     * bytes only). */
    {
        unsigned p = a->img.plane_count - 1;
        uint32_t tb = 0, rowb;
        unsigned char *row;
        size_t origin[3] = {0, a->img.planes[p].height - 1, 0}, hostorg[3] = {0, 0, 0}, region[3];
        clmem_bridge_image_plane_format(format, p, NULL, &tb);
        rowb = a->img.planes[p].width * tb;
        region[0] = rowb;
        region[1] = 1;
        region[2] = 1;
        row = malloc(2 * (size_t)rowb);
        if (!row)
            die("out of memory");
        check_clmem(clmem_bridge_acquire(b->bridge, hd[p], 0, NULL, NULL), "clmem_bridge_acquire(frame check)");
        check_cl(clEnqueueReadBufferRect(b->queue, clmem_handle_mem(hd[p]), CL_TRUE, origin, hostorg, region,
                                         clmem_handle_row_pitch(hd[p]), 0, rowb, 0, row, 0, NULL, NULL),
                 "clEnqueueReadBufferRect(frame check)");
        check_clmem(clmem_bridge_release(b->bridge, hd[p], 0, NULL, NULL), "clmem_bridge_release(frame check)");
        check_cl(clEnqueueReadBuffer(b->queue, plain[p], CL_TRUE, (size_t)bytes[p] - rowb, rowb, row + rowb, 0, NULL,
                                     NULL),
                 "clEnqueueReadBuffer(frame check)");
        if (memcmp(row, mapped + off[p] + bytes[p] - rowb, rowb) != 0 ||
            memcmp(row + rowb, mapped + off[p] + bytes[p] - rowb, rowb) != 0)
            fail(b, "(g) frame %s: the last row of plane %u differs from what Vulkan wrote (zero-copy %s, staged %s)",
                 label, p, memcmp(row, mapped + off[p] + bytes[p] - rowb, rowb) ? "differs" : "ok",
                 memcmp(row + rowb, mapped + off[p] + bytes[p] - rowb, rowb) ? "differs" : "ok");
        free(row);
    }
    if (n_frame_results < MAX_FRAME_RESULTS) {
        struct frame_result *fr = &frame_results[n_frame_results++];
        static char labels[MAX_FRAME_RESULTS][64], keys[MAX_FRAME_RESULTS][64];
        snprintf(labels[n_frame_results - 1], 64, "%s", label);
        snprintf(keys[n_frame_results - 1], 64, "%ux%u_%s", w, h, fmt_key);
        fr->label = labels[n_frame_results - 1];
        fr->key = keys[n_frame_results - 1];
        fr->bytes = total;
        fr->staged = summarize(st, reps, 1);
        fr->handoff = summarize(zc, reps, 1);
        printf("  (g) frame %-16s staged %10.1f us [%.1f .. %.1f]  zero-copy %9.1f us [%.1f .. %.1f]  %7.1fx  n=%d\n",
               label, fr->staged.median, fr->staged.min, fr->staged.max, fr->handoff.median, fr->handoff.min,
               fr->handoff.max, fr->handoff.median > 0 ? fr->staged.median / fr->handoff.median : 0.0, reps);
        fflush(stdout);
    }

    check_vk(vkQueueWaitIdle(b->vk.queue), "vkQueueWaitIdle");
    vkFreeCommandBuffers(b->vk.device, b->vk.pool, 1, &copy_cb);
    for (unsigned p = 0; p < 2; p++) {
        clmem_handle_unref(hd[p]);
        if (plain[p])
            clReleaseMemObject(plain[p]);
    }
    vkUnmapMemory(b->vk.device, staging.mem.memory);
    clmem_bridge_vk_buffer_destroy(b->bridge, staging.buffer, &staging.mem);
    /* As size_teardown: the cached bridge's teardowns complete through the
     * driver's callbacks once the markers ran. */
    check_cl(clFinish(b->queue), "clFinish(before the frame's teardown)");
    {
        double deadline = now_us() + DESTROY_WAIT_S * 1e6;
        while (!atomic_load(&a->freed) && now_us() < deadline) {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
        if (atomic_load(&a->freed))
            free(a);
        else
            fail(b, "the frame %s's image was not freed %d s after its last plane handle went", label,
                 DESTROY_WAIT_S);
    }
    free(st);
    free(zc);
}

static void run_frames(struct bench *b, bool quick, int reps)
{
    static const struct {
        uint32_t w, h;
    } sizes[] = {{1920, 1080}, {3840, 2160}};
    static const struct {
        VkFormat vk;
        const char *name, *key;
    } formats[] = {{VK_FORMAT_R8G8B8A8_UNORM, "RGBA8", "rgba8"}, {VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, "NV12", "nv12"}};

    printf("\n(g) frames: linear images on the %s path; staged = vkCmdCopyImageToBuffer + vkQueueWaitIdle +\n"
           "    clEnqueueWriteBuffer per plane; zero-copy = acquire the plane handles, release; each with the\n"
           "    1-work-item kernel on plane 0 and clFinish; interleaved rep by rep\n",
           clmem_bridge_path_name(b->path));
    for (size_t z = 0; z < (quick ? 1u : 2u); z++)
        for (size_t f = 0; f < 2; f++) {
            watchdog("(g) frames", formats[f].name);
            run_frame(b, formats[f].vk, formats[f].name, formats[f].key, sizes[z].w, sizes[z].h, reps);
            alarm(0);
        }
}

static void print_frames(void)
{
    if (!n_frame_results)
        return;
    printf("\nFrames, medians in microseconds: staged copy vs zero-copy handoff (> 1x: sharing wins)\n");
    printf("%-16s %12s %12s %9s\n", "frame", "staged", "zero-copy", "ratio");
    for (int i = 0; i < n_frame_results; i++) {
        const struct frame_result *fr = &frame_results[i];
        printf("%-16s %12.1f %12.1f %8.1fx\n", fr->label, fr->staged.median, fr->handoff.median,
               fr->handoff.median > 0 ? fr->staged.median / fr->handoff.median : 0.0);
    }
}

/* ------------------------------------------------------------- batches */

/*
 * --batches: frames in flight. For each batch size K, each ring size D (the
 * slots, so D batches in flight and N = K * D frames) and each handoff:
 *   semaphores      a clmem_bridge_ring with device-ordered (opaque-fd)
 *                   semaphores, Vulkan's writes on the graphics/compute queue;
 *   host waits      the same ring with host-ordered semaphores (the host
 *                   waits on a fence for Vulkan and on an event for OpenCL);
 *   transfer queue  the semaphore ring with Vulkan's writes on a queue of a
 *                   transfer-only family (where the device has one);
 * the time per frame of blocks of F frames (Vulkan fills word 0 of each
 * frame of a batch in one submission, OpenCL runs the one-work-item kernel
 * on each), the clmem blocks through the ring, the raw blocks through the
 * same driver calls made directly (one acquire/release extension call per
 * batch, one semaphore wait/signal per batch, the host-ordered variant's
 * fence and event), alternating block by block. Beside them the staged copy
 * of one frame (as (a), at the frame size), one rep before each
 * configuration, so that all of it is interleaved in one run.
 */

#define MAX_BATCH 64
#define MAX_RING 8
#define BATCH_TIMEOUT_NS (5ull * 1000000000u)

enum handoff { H_SEM, H_HOST, H_TRANSFER, H_COUNT };
static const char *const handoff_measure[H_COUNT] = {"ring_semaphore", "ring_host", "ring_transfer"};
static const char *const handoff_label[H_COUNT] = {"semaphores", "host waits", "transfer queue"};

struct batch_point {
    int batch, ring;
    struct summary s[H_COUNT][V_COUNT];
};

struct batch_results {
    bool ran;
    uint64_t frame_size;
    struct summary staged;
    struct batch_point *points;
    int npoints;
    char why_not[H_COUNT][1152]; /* empty: measured; a clmem_error_message() fits */
};

/* One variant's semaphores in one mode: [0] device (opaque fd), [1] host. */
struct bsems {
    bool ok;
    VkSemaphore ready[MAX_RING], done[MAX_RING];
    clmem_bridge_semaphore *lib_ready[MAX_RING], *lib_done[MAX_RING]; /* clmem */
    cl_semaphore_khr cl_ready[MAX_RING], cl_done[MAX_RING];           /* raw, device ordering */
    VkFence fence[MAX_RING];                                          /* raw, host ordering */
};

/* The raw variant's own ring bookkeeping, what the library keeps per slot. */
struct braw_slot {
    bool done_pending;    /* device: done[s] signalled, no Vulkan wait yet */
    cl_event released;    /* host: the release of the slot's last batch */
    bool fence_in_flight; /* host: the fence wait is submitted */
};

struct batch_ctx {
    struct bench *b;
    uint64_t frame_size;
    int nframes; /* per variant */
    struct anchored_buf **lib;  /* clmem frames, owned by their anchors */
    clmem_keepalive **lib_anchor;
    clmem_handle **handles;
    struct vk_buf *raw_buf;     /* raw frames */
    struct raw_import *raw;
    cl_kernel *kernel[V_COUNT];         /* per frame, bound to it */
    VkCommandBuffer *fill[V_COUNT][2];  /* per frame: [0] graphics pool, [1] transfer pool */
    uint32_t *uses[V_COUNT];            /* kernel runs on each frame since the configuration began */
    struct bsems sems[V_COUNT][2];
    /* the staged copy of one frame */
    struct vk_buf staging;
    uint32_t *staging_ptr;
    cl_mem plain;
    VkCommandBuffer copy_cb;
    double *staged;
    int nstaged, staged_cap;
    /* the configuration being measured */
    int k, d;
    enum handoff handoff;
    clmem_bridge_ring *ring;
    struct braw_slot raw_slot[MAX_RING];
    uint64_t raw_produced, raw_consumed;
};

static VkQueue handoff_queue(const struct batch_ctx *c)
{
    return c->handoff == H_TRANSFER ? c->b->vk.transfer_queue : c->b->vk.queue;
}

static int handoff_mode(enum handoff h)
{
    return h == H_HOST; /* 0: device ordering, 1: host */
}

/* Recorded once, submitted again while a previous submission may still be
 * pending (a frame's next batch is submitted before the device ran the
 * last): SIMULTANEOUS_USE. */
static VkCommandBuffer record_fill_reusable(struct bench *b, VkCommandPool pool, VkBuffer buffer, uint32_t value)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
    VkCommandBuffer cb;
    check_vk(vkAllocateCommandBuffers(b->vk.device, &ai, &cb), "vkAllocateCommandBuffers");
    check_vk(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    vkCmdFillBuffer(cb, buffer, 0, 4, value);
    end_commands(cb);
    return cb;
}

static VkSemaphore batch_semaphore(struct bench *b, bool exportable)
{
    VkExportSemaphoreCreateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                      .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = exportable ? &ex : NULL};
    VkSemaphore s;
    check_vk(vkCreateSemaphore(b->vk.device, &ci, NULL, &s), "vkCreateSemaphore");
    return s;
}

static clmem_bridge_semaphore *batch_lib_semaphore(struct bench *b, VkSemaphore s, clmem_bridge_semaphore_mode mode)
{
    struct sem_owner *o = malloc(sizeof *o);
    clmem_bridge_semaphore *out = NULL;
    clmem_keepalive *ka;

    if (!o)
        die("out of memory");
    o->device = b->vk.device;
    o->semaphore = s;
    ka = clmem_keepalive_new(sem_owner_release, o);
    if (!ka)
        die("clmem_keepalive_new failed");
    check_clmem(clmem_bridge_semaphore_import(b->bridge, b->vk.queue, s, mode, ka, &out),
                "clmem_bridge_semaphore_import (batch run)");
    clmem_keepalive_unref(ka); /* the import holds its own; it destroys the semaphore at the end */
    return out;
}

/* The semaphores of every handoff that can run; why_not says why not. */
static void batch_semaphores(struct batch_ctx *c, struct batch_results *out)
{
    struct bench *b = c->b;
    bool device = clmem_bridge_check_semaphore(b->bridge, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD) == CLMEM_OK;

    if (!device)
        snprintf(out->why_not[H_SEM], sizeof out->why_not[H_SEM], "needs device ordering: %s", clmem_error_message());
    else if (!b->get_semaphore_fd || !b->create_semaphore || !b->wait_semaphores || !b->signal_semaphores ||
             !b->release_semaphore)
        snprintf(out->why_not[H_SEM], sizeof out->why_not[H_SEM],
                 "the raw cl_khr_semaphore / vkGetSemaphoreFdKHR entry points are missing");
    if (!b->vk.has_transfer_queue)
        snprintf(out->why_not[H_TRANSFER], sizeof out->why_not[H_TRANSFER],
                 "%s has no transfer-only queue family", b->vk.device_name);
    else if (out->why_not[H_SEM][0])
        snprintf(out->why_not[H_TRANSFER], sizeof out->why_not[H_TRANSFER], "%s", out->why_not[H_SEM]);
    for (int m = 0; m < 2; m++) {
        if (m == 0 && out->why_not[H_SEM][0])
            continue;
        for (int v = V_CLMEM; v <= V_RAW; v++) {
            struct bsems *set = &c->sems[v][m];
            for (int i = 0; i < MAX_RING; i++) {
                set->ready[i] = batch_semaphore(b, m == 0);
                set->done[i] = batch_semaphore(b, m == 0);
                if (v == V_CLMEM) {
                    clmem_bridge_semaphore_mode mode =
                        m == 0 ? CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD : CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED;
                    set->lib_ready[i] = batch_lib_semaphore(b, set->ready[i], mode);
                    set->lib_done[i] = batch_lib_semaphore(b, set->done[i], mode);
                } else if (m == 0) {
                    set->cl_ready[i] = raw_semaphore_import(b, set->ready[i]);
                    set->cl_done[i] = raw_semaphore_import(b, set->done[i]);
                } else {
                    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
                    check_vk(vkCreateFence(b->vk.device, &fi, NULL, &set->fence[i]), "vkCreateFence");
                }
            }
            set->ok = true;
        }
    }
}

static void batch_semaphores_teardown(struct batch_ctx *c)
{
    struct bench *b = c->b;
    vkDeviceWaitIdle(b->vk.device);
    clFinish(b->queue);
    for (int m = 0; m < 2; m++)
        for (int v = V_CLMEM; v <= V_RAW; v++) {
            struct bsems *set = &c->sems[v][m];
            for (int i = 0; set->ok && i < MAX_RING; i++) {
                if (v == V_CLMEM) { /* their anchors destroy the VkSemaphores */
                    clmem_bridge_semaphore_unref(set->lib_ready[i]);
                    clmem_bridge_semaphore_unref(set->lib_done[i]);
                    continue;
                }
                if (set->cl_ready[i])
                    b->release_semaphore(set->cl_ready[i]);
                if (set->cl_done[i])
                    b->release_semaphore(set->cl_done[i]);
                if (set->fence[i])
                    vkDestroyFence(b->vk.device, set->fence[i], NULL);
                vkDestroySemaphore(b->vk.device, set->ready[i], NULL);
                vkDestroySemaphore(b->vk.device, set->done[i], NULL);
            }
        }
}

static void batch_setup(struct batch_ctx *c, struct bench *b, uint64_t frame_size, int nframes, int staged_cap,
                        struct batch_results *out)
{
    memset(c, 0, sizeof *c);
    c->b = b;
    c->frame_size = frame_size;
    c->nframes = nframes;
    c->lib = calloc((size_t)nframes, sizeof *c->lib);
    c->lib_anchor = calloc((size_t)nframes, sizeof *c->lib_anchor);
    c->handles = calloc((size_t)nframes, sizeof *c->handles);
    c->raw_buf = calloc((size_t)nframes, sizeof *c->raw_buf);
    c->raw = calloc((size_t)nframes, sizeof *c->raw);
    c->staged = calloc((size_t)staged_cap, sizeof *c->staged);
    c->staged_cap = staged_cap;
    if (!c->lib || !c->lib_anchor || !c->handles || !c->raw_buf || !c->raw || !c->staged)
        die("out of memory");
    for (int v = V_CLMEM; v <= V_RAW; v++) {
        c->kernel[v] = calloc((size_t)nframes, sizeof *c->kernel[v]);
        c->uses[v] = calloc((size_t)nframes, sizeof *c->uses[v]);
        for (int q = 0; q < 2; q++)
            c->fill[v][q] = calloc((size_t)nframes, sizeof *c->fill[v][q]);
        if (!c->kernel[v] || !c->uses[v] || !c->fill[v][0] || !c->fill[v][1])
            die("out of memory");
    }
    for (int i = 0; i < nframes; i++) {
        cl_int err;
        cl_mem mem;
        /* clmem: memory owned by an anchor, imported through the bridge */
        c->lib[i] = calloc(1, sizeof *c->lib[i]);
        if (!c->lib[i])
            die("out of memory");
        shared_buf_create(b, &c->lib[i]->buf, frame_size);
        c->lib[i]->bridge = b->bridge;
        atomic_init(&c->lib[i]->freed, 0);
        c->lib_anchor[i] = clmem_keepalive_new(anchored_buf_release, c->lib[i]);
        if (!c->lib_anchor[i])
            die("clmem_keepalive_new failed");
        check_clmem(clmem_bridge_import_vk(b->bridge, &c->lib[i]->buf.mem, 0, frame_size, b->path, c->lib_anchor[i],
                                           b->queue, CL_MEM_READ_WRITE, &c->handles[i]),
                    "clmem_bridge_import_vk (batch frame)");
        /* raw: its own memory, imported with the raw calls */
        shared_buf_create(b, &c->raw_buf[i], frame_size);
        raw_import(b, &c->raw_buf[i].mem, &c->raw[i]);
        raw_watch(&c->raw[i]);
        for (int v = V_CLMEM; v <= V_RAW; v++) {
            VkBuffer buf = v == V_CLMEM ? c->lib[i]->buf.buffer : c->raw_buf[i].buffer;
            mem = v == V_CLMEM ? clmem_handle_mem(c->handles[i]) : c->raw[i].mem;
            c->kernel[v][i] = clCreateKernel(b->program, "bump", &err);
            check_cl(err, "clCreateKernel (batch frame)");
            check_cl(clSetKernelArg(c->kernel[v][i], 0, sizeof mem, &mem), "clSetKernelArg");
            check_vk(vkctx_fill(&b->vk, buf, 0, VK_WHOLE_SIZE, PATTERN), "vkctx_fill(batch frame)");
            c->fill[v][0][i] = record_fill_reusable(b, b->vk.pool, buf, FRAME_VALUE(i));
            if (b->vk.has_transfer_queue)
                c->fill[v][1][i] = record_fill_reusable(b, b->vk.transfer_pool, buf, FRAME_VALUE(i));
        }
    }
    staging_buf_create(b, &c->staging, frame_size);
    check_vk(vkMapMemory(b->vk.device, c->staging.mem.memory, 0, VK_WHOLE_SIZE, 0, (void **)&c->staging_ptr),
             "vkMapMemory(batch staging)");
    {
        cl_int err;
        c->plain = clCreateBuffer(b->context, CL_MEM_READ_WRITE, (size_t)frame_size, NULL, &err);
        check_cl(err, "clCreateBuffer(batch plain)");
    }
    c->copy_cb = record_copy(b, c->lib[0]->buf.buffer, c->staging.buffer, frame_size);
    batch_semaphores(c, out);
}

static void batch_teardown(struct batch_ctx *c)
{
    struct bench *b = c->b;
    double deadline;

    batch_semaphores_teardown(c);
    for (int v = V_CLMEM; v <= V_RAW; v++) {
        for (int i = 0; i < c->nframes; i++) {
            clReleaseKernel(c->kernel[v][i]);
            vkFreeCommandBuffers(b->vk.device, b->vk.pool, 1, &c->fill[v][0][i]);
            if (c->fill[v][1][i])
                vkFreeCommandBuffers(b->vk.device, b->vk.transfer_pool, 1, &c->fill[v][1][i]);
        }
        free(c->kernel[v]);
        free(c->uses[v]);
        free(c->fill[v][0]);
        free(c->fill[v][1]);
    }
    vkFreeCommandBuffers(b->vk.device, b->vk.pool, 1, &c->copy_cb);
    clReleaseMemObject(c->plain);
    vkUnmapMemory(b->vk.device, c->staging.mem.memory);
    clmem_bridge_vk_buffer_destroy(b->bridge, c->staging.buffer, &c->staging.mem);
    for (int i = 0; i < c->nframes; i++) {
        clmem_handle_unref(c->handles[i]);
        raw_teardown(b, &c->raw[i]);
        clmem_bridge_vk_buffer_destroy(b->bridge, c->raw_buf[i].buffer, &c->raw_buf[i].mem);
    }
    /* As size_teardown: the cached bridge still holds the size run's
     * semaphores, so the frames' teardowns complete through the driver's
     * callbacks; then the anchors free the memory. */
    check_cl(clFinish(b->queue), "clFinish(before the batch teardowns)");
    for (int i = 0; i < c->nframes; i++)
        clmem_keepalive_unref(c->lib_anchor[i]);
    deadline = now_us() + DESTROY_WAIT_S * 1e6;
    for (int i = 0; i < c->nframes; i++) {
        while (!atomic_load(&c->lib[i]->freed) && now_us() < deadline) {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
        if (atomic_load(&c->lib[i]->freed))
            free(c->lib[i]);
        else
            fail(b, "batch frame %d's anchor was not released %d s after its import went", i, DESTROY_WAIT_S);
    }
    free(c->lib);
    free(c->lib_anchor);
    free(c->handles);
    free(c->raw_buf);
    free(c->raw);
    free(c->staged);
}

/* One staged copy of a frame, as (a). */
static void batch_staged_rep(struct batch_ctx *c, bool keep)
{
    struct bench *b = c->b;
    double t0 = now_us();
    submit_and_wait(b, c->copy_cb, "vkQueueSubmit(batch staging copy)");
    check_cl(clEnqueueWriteBuffer(b->queue, c->plain, CL_TRUE, 0, (size_t)c->frame_size, c->staging_ptr, 0, NULL,
                                  NULL),
             "clEnqueueWriteBuffer(batch staged)");
    if (keep && c->nstaged < c->staged_cap)
        c->staged[c->nstaged++] = now_us() - t0;
}

static void submit_batch(struct batch_ctx *c, enum variant v, uint32_t first, int count, VkSemaphore wait,
                         VkSemaphore signal)
{
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .waitSemaphoreCount = wait != VK_NULL_HANDLE,
                       .pWaitSemaphores = &wait,
                       .pWaitDstStageMask = &stage,
                       .commandBufferCount = (uint32_t)count,
                       .pCommandBuffers = &c->fill[v][c->handoff == H_TRANSFER][first],
                       .signalSemaphoreCount = signal != VK_NULL_HANDLE,
                       .pSignalSemaphores = &signal};
    check_vk(vkQueueSubmit(handoff_queue(c), 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(batch)");
}

static void run_kernels(struct batch_ctx *c, enum variant v, uint32_t first, uint32_t count)
{
    size_t one = 1;
    for (uint32_t i = 0; i < count; i++) {
        check_cl(clEnqueueNDRangeKernel(c->b->queue, c->kernel[v][first + i], 1, NULL, &one, NULL, 0, NULL, NULL),
                 "clEnqueueNDRangeKernel(batch)");
        c->uses[v][first + i]++;
    }
}

/* The clmem variant: everything through the ring. */
static void lib_produce(struct batch_ctx *c)
{
    clmem_bridge_ring_frame fr[MAX_BATCH];
    for (int p = 0; p < c->k; p++)
        check_clmem(clmem_bridge_ring_vk_next(c->ring, 0, BATCH_TIMEOUT_NS, &fr[p]), "clmem_bridge_ring_vk_next");
    submit_batch(c, V_CLMEM, fr[0].index, c->k, fr[0].wait_semaphore, fr[c->k - 1].signal_semaphore);
    check_clmem(clmem_bridge_ring_vk_submitted(c->ring, &fr[c->k - 1]), "clmem_bridge_ring_vk_submitted");
}

static void lib_consume(struct batch_ctx *c)
{
    clmem_bridge_ring_batch bt;
    check_clmem(clmem_bridge_ring_cl_next(c->ring, BATCH_TIMEOUT_NS, 0, NULL, &bt, NULL), "clmem_bridge_ring_cl_next");
    run_kernels(c, V_CLMEM, bt.first_index, bt.count);
    check_clmem(clmem_bridge_ring_cl_done(c->ring, &bt, 0, NULL, NULL), "clmem_bridge_ring_cl_done");
}

/* The raw variant: the same driver calls, the ring's order kept by hand. */
static void raw_produce(struct batch_ctx *c)
{
    struct bench *b = c->b;
    bool host = c->handoff == H_HOST;
    struct bsems *set = &c->sems[V_RAW][handoff_mode(c->handoff)];
    uint32_t s = (uint32_t)(c->raw_produced % (uint64_t)c->d);
    struct braw_slot *slot = &c->raw_slot[s];
    VkSemaphore wait = VK_NULL_HANDLE;

    if (slot->released) { /* host ordering: OpenCL's release of the slot, on the host */
        check_cl(clWaitForEvents(1, &slot->released), "clWaitForEvents(raw release)");
        clReleaseEvent(slot->released);
        slot->released = NULL;
    }
    if (slot->done_pending)
        wait = set->done[s];
    slot->done_pending = false;
    submit_batch(c, V_RAW, s * (uint32_t)c->k, c->k, wait, set->ready[s]);
    if (host) {
        VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .waitSemaphoreCount = 1,
                           .pWaitSemaphores = &set->ready[s],
                           .pWaitDstStageMask = &stage};
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, set->fence[s]), "vkQueueSubmit(raw host-ordered wait)");
        slot->fence_in_flight = true;
    }
    c->raw_produced++;
}

static void raw_consume(struct batch_ctx *c)
{
    struct bench *b = c->b;
    bool host = c->handoff == H_HOST, fd = b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD;
    struct bsems *set = &c->sems[V_RAW][handoff_mode(c->handoff)];
    uint32_t s = (uint32_t)(c->raw_consumed % (uint64_t)c->d), first = s * (uint32_t)c->k;
    struct braw_slot *slot = &c->raw_slot[s];
    cl_mem mems[MAX_BATCH];
    cl_event ev = NULL;

    if (host) {
        check_vk(vkWaitForFences(b->vk.device, 1, &set->fence[s], VK_TRUE, BATCH_TIMEOUT_NS), "vkWaitForFences");
        check_vk(vkResetFences(b->vk.device, 1, &set->fence[s]), "vkResetFences");
        slot->fence_in_flight = false;
    } else {
        check_cl(b->wait_semaphores(b->queue, 1, &set->cl_ready[s], NULL, 0, NULL, NULL),
                 "clEnqueueWaitSemaphoresKHR(raw)");
    }
    for (int i = 0; i < c->k; i++)
        mems[i] = c->raw[first + i].mem;
    if (fd) {
        check_cl(b->acquire_external(b->queue, (cl_uint)c->k, mems, 0, NULL, NULL), "raw acquire (batch)");
    } else {
        for (int i = 0; i < c->k; i++) {
            check_cl(clEnqueueUnmapMemObject(b->queue, mems[i], c->raw[first + i].cl_map, 0, NULL, NULL),
                     "raw unmap (batch)");
            c->raw[first + i].cl_map = NULL;
        }
    }
    run_kernels(c, V_RAW, first, (uint32_t)c->k);
    if (fd) {
        check_cl(b->release_external(b->queue, (cl_uint)c->k, mems, 0, NULL, host ? &ev : NULL), "raw release (batch)");
    } else {
        for (int i = 0; i < c->k; i++) {
            cl_int err = CL_SUCCESS;
            bool last = i + 1 == c->k;
            c->raw[first + i].cl_map =
                clEnqueueMapBuffer(b->queue, mems[i], CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, c->raw[first + i].size,
                                   0, NULL, host && last ? &ev : NULL, &err);
            check_cl(err, "raw map (batch)");
        }
    }
    if (host) {
        check_cl(clFlush(b->queue), "clFlush");
        slot->released = ev; /* the in-order queue: the last command's event covers the batch */
    } else {
        check_cl(b->signal_semaphores(b->queue, 1, &set->cl_done[s], NULL, 0, NULL, NULL),
                 "clEnqueueSignalSemaphoresKHR(raw)");
        check_cl(clFlush(b->queue), "clFlush");
        slot->done_pending = true;
    }
    c->raw_consumed++;
}

/* One block of `frames` frames; returns microseconds per frame. Up to D
 * batches in flight; at the end both queues are drained (a host wait, as
 * (e) ends its blocks). */
static double batch_block(struct batch_ctx *c, enum variant v, int frames)
{
    int nb = frames / c->k, produced = 0, consumed = 0;
    double t0 = now_us();
    while (consumed < nb) {
        while (produced < nb && produced - consumed < c->d) {
            (v == V_CLMEM ? lib_produce : raw_produce)(c);
            produced++;
        }
        (v == V_CLMEM ? lib_consume : raw_consume)(c);
        consumed++;
    }
    check_vk(vkQueueWaitIdle(handoff_queue(c)), "vkQueueWaitIdle(batch block)");
    check_cl(clFinish(c->b->queue), "clFinish(batch block)");
    return (now_us() - t0) / frames;
}

static void batch_config_begin(struct batch_ctx *c, int k, int d, enum handoff h)
{
    struct bench *b = c->b;
    struct bsems *lib = &c->sems[V_CLMEM][handoff_mode(h)];
    clmem_bridge_ring_info info = {.size = sizeof info,
                                   .frame_count = (uint32_t)(k * d),
                                   .batch_size = (uint32_t)k,
                                   .frames = c->handles,
                                   .ready = lib->lib_ready,
                                   .done = lib->lib_done,
                                   .queue = b->queue};
    c->k = k;
    c->d = d;
    c->handoff = h;
    memset(c->raw_slot, 0, sizeof c->raw_slot);
    c->raw_produced = c->raw_consumed = 0;
    for (int v = V_CLMEM; v <= V_RAW; v++)
        for (int i = 0; i < k * d; i++) {
            c->uses[v][i] = 0;
            check_vk(vkctx_fill(&b->vk, v == V_CLMEM ? c->lib[i]->buf.buffer : c->raw_buf[i].buffer, 4, 4, 0),
                     "vkctx_fill(word 1)");
        }
    check_clmem(clmem_bridge_ring_create(b->bridge, &info, &c->ring), "clmem_bridge_ring_create");
}

/* The end of a configuration: the ring drained and its last waits
 * submitted, the raw variant likewise; then every frame's words checked. */
static void batch_config_end(struct batch_ctx *c)
{
    struct bench *b = c->b;
    struct bsems *raw = &c->sems[V_RAW][handoff_mode(c->handoff)];
    VkSemaphore waits[2 * MAX_RING];
    VkPipelineStageFlags stages[2 * MAX_RING];
    uint32_t n = 0, got = 0;
    char sz[32];

    check_clmem(clmem_bridge_ring_vk_drain(c->ring, BATCH_TIMEOUT_NS, MAX_RING, waits, &got),
                "clmem_bridge_ring_vk_drain");
    n = got;
    for (int s = 0; s < c->d; s++) {
        if (c->raw_slot[s].done_pending)
            waits[n++] = raw->done[s];
        if (c->raw_slot[s].released) {
            clWaitForEvents(1, &c->raw_slot[s].released);
            clReleaseEvent(c->raw_slot[s].released);
        }
    }
    memset(c->raw_slot, 0, sizeof c->raw_slot);
    for (uint32_t i = 0; i < n; i++)
        stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    if (n) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .waitSemaphoreCount = n,
                           .pWaitSemaphores = waits,
                           .pWaitDstStageMask = stages};
        check_vk(vkQueueSubmit(handoff_queue(c), 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(the last waits)");
    }
    check_vk(vkQueueWaitIdle(handoff_queue(c)), "vkQueueWaitIdle");
    check_cl(clFinish(b->queue), "clFinish");
    clmem_bridge_ring_unref(c->ring);
    c->ring = NULL;
    for (int v = V_CLMEM; v <= V_RAW; v++)
        for (int i = 0; i < c->k * c->d; i++) {
            uint32_t got_words[2], want0 = FRAME_VALUE(i) + 1u, want1 = c->uses[v][i] * FRAME_VALUE(i);
            check_vk(vkctx_copy(&b->vk, v == V_CLMEM ? c->lib[i]->buf.buffer : c->raw_buf[i].buffer,
                                c->staging.buffer, 8),
                     "vkctx_copy(batch read back)");
            got_words[0] = c->staging_ptr[0];
            got_words[1] = c->staging_ptr[1];
            if (got_words[0] != want0 || got_words[1] != want1) {
                fail(b, "%s %s, batch %d, ring %d, frame %d of %s: Vulkan sees word 0 = 0x%08x (want 0x%08x), "
                        "word 1 = 0x%08x (want 0x%08x: %u kernels each saw Vulkan's 0x%08x)",
                     handoff_label[c->handoff], variant_name[v], c->k, c->d, i, size_text(c->frame_size, sz, sizeof sz),
                     got_words[0], want0, got_words[1], want1, c->uses[v][i], FRAME_VALUE(i));
                break;
            }
        }
}

/* Why `frames` frames of frame_size (each variant's), a staging buffer and
 * a plain cl buffer cannot run here, or NULL. */
static const char *batch_unfit(const struct bench *b, uint64_t frame_size, int frames, char *why, size_t len)
{
    uint64_t total = frame_size * (uint64_t)(frames + 2);
    bool host_path = b->path == CLMEM_BRIDGE_PATH_HOST_MAPPED || b->cpu_device;
    if (frame_size > b->cl_max_alloc || (b->vk_max_alloc && frame_size > b->vk_max_alloc))
        snprintf(why, len, "a frame is above the largest allocation of OpenCL or Vulkan");
    else if (total > b->cl_global_mem / 10 * 9)
        snprintf(why, len, "%llu MiB in all is more than 90%% of the OpenCL device's %llu MiB",
                 (unsigned long long)(total / MIB), (unsigned long long)(b->cl_global_mem / MIB));
    else if (host_path && b->host_mem && total > b->host_mem / 4 * 3)
        snprintf(why, len, "%llu MiB of host memory is more than 75%% of %llu MiB", (unsigned long long)(total / MIB),
                 (unsigned long long)(b->host_mem / MIB));
    else
        return NULL;
    return why;
}

static int frames_per_block(int n, bool quick)
{
    int rounds = quick ? 2 : (64 + n - 1) / n;
    if (!quick && rounds < 4)
        rounds = 4;
    return n * rounds;
}

static void run_batches(struct bench *b, const struct options *o, struct batch_results *out)
{
    struct batch_ctx c;
    int maxk = 1, maxd = 1, npoints = o->nbatches * o->nrings, configs = 0;
    uint64_t frame_size = o->batch_frame_size ? o->batch_frame_size
                          : o->quick           ? 4 * KIB
                          : b->cpu_device      ? 1 * MIB
                                               : 256 * MIB;
    char sz[32], why[256];
    double t_start = now_us();

    memset(out, 0, sizeof *out);
    for (int i = 0; i < o->nbatches; i++)
        maxk = o->batches[i] > maxk ? o->batches[i] : maxk;
    for (int i = 0; i < o->nrings; i++)
        maxd = o->rings[i] > maxd ? o->rings[i] : maxd;
    out->frame_size = frame_size;
    if (batch_unfit(b, frame_size, 2 * maxk * maxd, why, sizeof why)) {
        printf("\nbatches: skipped, %d frames of %s (%s)\n", 2 * maxk * maxd, size_text(frame_size, sz, sizeof sz),
               why);
        return;
    }
    out->points = calloc((size_t)npoints, sizeof *out->points);
    if (!out->points)
        die("out of memory");
    batch_setup(&c, b, frame_size, maxk * maxd, npoints * H_COUNT + 2, out);
    printf("\nbatches: frames of %s, %d of them per variant; batch sizes", size_text(frame_size, sz, sizeof sz),
           maxk * maxd);
    for (int i = 0; i < o->nbatches; i++)
        printf(" %d", o->batches[i]);
    printf("; ring sizes");
    for (int i = 0; i < o->nrings; i++)
        printf(" %d", o->rings[i]);
    printf("; %d blocks per variant\n", o->blocks);
    for (int h = 0; h < H_COUNT; h++)
        if (out->why_not[h][0])
            printf("  %s: left out, %s\n", handoff_label[h], out->why_not[h]);
    fflush(stdout);

    batch_staged_rep(&c, false); /* warm-up */
    for (int bi = 0; bi < o->nbatches; bi++)
        for (int ri = 0; ri < o->nrings; ri++) {
            struct batch_point *pt = &out->points[out->npoints++];
            int k = o->batches[bi], d = o->rings[ri], n = k * d, frames = frames_per_block(n, o->quick);
            pt->batch = k;
            pt->ring = d;
            for (int h = 0; h < H_COUNT; h++) {
                double *lib = calloc((size_t)o->blocks, sizeof *lib), *raw = calloc((size_t)o->blocks, sizeof *raw);
                char what[96];
                if (!lib || !raw)
                    die("out of memory");
                if (out->why_not[h][0]) {
                    free(lib);
                    free(raw);
                    continue;
                }
                snprintf(what, sizeof what, "batches (%s, batch %d, ring %d)", handoff_label[h], k, d);
                watchdog(what, size_text(frame_size, sz, sizeof sz));
                batch_staged_rep(&c, true);
                batch_config_begin(&c, k, d, (enum handoff)h);
                batch_block(&c, V_CLMEM, n); /* warm-up: every frame once */
                batch_block(&c, V_RAW, n);
                for (int blk = 0; blk < o->blocks; blk++)
                    for (int turn = 0; turn < 2; turn++) {
                        enum variant v = (blk % 2 == 0) == (turn == 0) ? V_CLMEM : V_RAW;
                        (v == V_CLMEM ? lib : raw)[blk] = batch_block(&c, v, frames);
                    }
                batch_config_end(&c);
                alarm(0);
                pt->s[h][V_CLMEM] = summarize(lib, o->blocks, frames);
                pt->s[h][V_RAW] = summarize(raw, o->blocks, frames);
                printf("  %-15s ring %d batch %2d: clmem %9.2f us/frame [%.2f .. %.2f], raw %9.2f us/frame, "
                       "%d blocks of %d frames\n",
                       handoff_label[h], d, k, pt->s[h][V_CLMEM].median, pt->s[h][V_CLMEM].min,
                       pt->s[h][V_CLMEM].max, pt->s[h][V_RAW].median, o->blocks, frames);
                fflush(stdout);
                configs++;
                free(lib);
                free(raw);
            }
        }
    out->staged = summarize(c.staged, c.nstaged, 1);
    batch_teardown(&c);
    out->ran = true;
    printf("  (batches done in %.1f s: %d configurations, staged copy of a frame %.2f us, median of %d)\n",
           (now_us() - t_start) / 1e6, configs, out->staged.median, out->staged.reps);
    fflush(stdout);
}

static void print_batch_table(const struct batch_results *r)
{
    char sz[32];
    if (!r->ran || r->npoints == 0)
        return;
    printf("\nBatches: frames of %s; medians per frame; staged copy of one frame %.2f us [%.2f .. %.2f]\n",
           size_text(r->frame_size, sz, sizeof sz), r->staged.median, r->staged.min, r->staged.max);
    printf("clmem-raw = the library's cost per batch over the same raw calls; staged/clmem = the staged copy per\n"
           "frame over the handoff per frame (> 1: sharing wins)\n");
    printf("%-15s %4s %5s %12s %12s %12s %14s %12s\n", "handoff", "ring", "batch", "clmem us/fr", "raw us/fr",
           "frames/s", "clmem-raw/bat", "staged/clmem");
    for (int h = 0; h < H_COUNT; h++)
        for (int i = 0; i < r->npoints; i++) {
            const struct batch_point *p = &r->points[i];
            const struct summary *lib = &p->s[h][V_CLMEM], *raw = &p->s[h][V_RAW];
            if (!lib->have)
                continue;
            printf("%-15s %4d %5d %12.2f %12.2f %12.0f %+12.2f us %11.1fx\n", handoff_label[h], p->ring, p->batch,
                   lib->median, raw->median, lib->median > 0 ? 1e6 / lib->median : 0.0,
                   (lib->median - raw->median) * p->batch, lib->median > 0 ? r->staged.median / lib->median : 0.0);
        }
}

/* ---------------------------------------------------------------- output */

static void print_ratio(const struct summary *lib, const struct summary *raw)
{
    if (lib->have && raw->have && raw->median > 0)
        printf("  %+7.1f%% (%+8.1f us)", (lib->median / raw->median - 1) * 100, lib->median - raw->median);
    else
        printf("  %24s", "-");
}

static void print_times(double v, bool have)
{
    if (have)
        printf(v < 10 ? " %10.2f" : " %10.1f", v);
    else
        printf(" %10s", "-");
}

static void print_tables(const struct size_result *res, int n)
{
    static const struct {
        enum measure m;
        enum variant v;
    } cols[] = {{M_STAGED, V_BASE}, {M_IMPORT, V_CLMEM}, {M_IMPORT, V_RAW}, {M_CACHED, V_CLMEM},
                {M_WAIT, V_CLMEM},  {M_WAIT, V_RAW},     {M_SEM, V_CLMEM},  {M_SEM, V_RAW}};
    char sz[32];

    printf("\nMedians in microseconds (min..max above and in the CSV); (d) and (e) are per frame\n");
    printf("%6s %10s %10s %10s %10s %10s %10s %10s %10s\n", "size", "a:staged", "b:import", "b:raw", "c:cached",
           "d:wait", "d:raw", "e:sem", "e:raw");
    for (int i = 0; i < n; i++) {
        printf("%6s", size_text(res[i].size, sz, sizeof sz));
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
            print_times(res[i].s[cols[c].m][cols[c].v].median, res[i].s[cols[c].m][cols[c].v].have);
        printf("\n");
    }

    printf("\nRatios: a/d and a/e = staged copy time over clmem handoff time per frame (> 1: sharing wins);\n"
           "clmem vs raw = the library's overhead over the same raw calls (median to median)\n");
    printf("%6s %8s %8s  %24s  %24s  %24s\n", "size", "a/d", "a/e", "import clmem vs raw", "(d) clmem vs raw",
           "(e) clmem vs raw");
    for (int i = 0; i < n; i++) {
        const struct summary *a = &res[i].s[M_STAGED][V_BASE], *d = &res[i].s[M_WAIT][V_CLMEM],
                             *e = &res[i].s[M_SEM][V_CLMEM];
        printf("%6s", size_text(res[i].size, sz, sizeof sz));
        if (a->have && d->have && d->median > 0)
            printf(" %7.2fx", a->median / d->median);
        else
            printf(" %8s", "-");
        if (a->have && e->have && e->median > 0)
            printf(" %7.2fx", a->median / e->median);
        else
            printf(" %8s", "-");
        print_ratio(&res[i].s[M_IMPORT][V_CLMEM], &res[i].s[M_IMPORT][V_RAW]);
        print_ratio(d, &res[i].s[M_WAIT][V_RAW]);
        print_ratio(e, &res[i].s[M_SEM][V_RAW]);
        printf("\n");
    }
}

/* frames per handoff, for the CSV's batch column: 1 for what moves one
 * frame at a time, 0 for the imports, which hand nothing over */
static int measure_batch(enum measure m)
{
    return m == M_IMPORT || m == M_CACHED ? 0 : 1;
}

static bool write_csv(const char *path, const struct size_result *res, int n, const struct batch_results *br)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return false;
    }
    fprintf(f, "size_bytes,measure,variant,median_us,min_us,max_us,reps,frames_per_rep,batch,ring\n");
    for (int i = 0; i < n; i++)
        for (int m = 0; m < M_COUNT; m++)
            for (int v = 0; v < V_COUNT; v++) {
                const struct summary *x = &res[i].s[m][v];
                if (x->have)
                    fprintf(f, "%llu,%s,%s,%.3f,%.3f,%.3f,%d,%d,%d,0\n", (unsigned long long)res[i].size,
                            measure_name[m], variant_name[v], x->median, x->min, x->max, x->reps, x->frames_per_rep,
                            measure_batch((enum measure)m));
            }
    /* (g): size_bytes is the frame's texel bytes; the measure names the frame;
     * one frame per handoff, no ring: batch 1, ring 0, as the per-frame measures. */
    for (int i = 0; i < n_frame_results; i++) {
        const struct frame_result *fr = &frame_results[i];
        const struct summary *x[2] = {&fr->staged, &fr->handoff};
        for (int k = 0; k < 2; k++)
            fprintf(f, "%llu,frame_%s_%s,%s,%.3f,%.3f,%.3f,%d,1,1,0\n", (unsigned long long)fr->bytes,
                    k ? "handoff" : "staged_copy", fr->key, k ? "clmem" : "baseline", x[k]->median, x[k]->min,
                    x[k]->max, x[k]->reps);
    }
    if (br && br->ran) {
        if (br->staged.have)
            fprintf(f, "%llu,batch_staged_copy,baseline,%.3f,%.3f,%.3f,%d,1,1,0\n",
                    (unsigned long long)br->frame_size, br->staged.median, br->staged.min, br->staged.max,
                    br->staged.reps);
        for (int h = 0; h < H_COUNT; h++)
            for (int i = 0; i < br->npoints; i++)
                for (int v = V_CLMEM; v <= V_RAW; v++) {
                    const struct summary *x = &br->points[i].s[h][v];
                    if (x->have)
                        fprintf(f, "%llu,%s,%s,%.3f,%.3f,%.3f,%d,%d,%d,%d\n", (unsigned long long)br->frame_size,
                                handoff_measure[h], variant_name[v], x->median, x->min, x->max, x->reps,
                                x->frames_per_rep, br->points[i].batch, br->points[i].ring);
                }
    }
    return fclose(f) == 0;
}

static bool on_path(const char *program)
{
    const char *path = getenv("PATH");
    char dir[4096];
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && len + strlen(program) + 2 < sizeof dir) {
            memcpy(dir, path, len);
            snprintf(dir + len, sizeof dir - len, "/%s", program);
            if (access(dir, X_OK) == 0)
                return true;
        }
        path += len;
        if (*path == ':')
            path++;
    }
    return false;
}

/* A gnuplot single-quoted string: a quote is written twice. */
static void gp_quoted(FILE *gp, const char *s)
{
    fputc('\'', gp);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', gp);
        fputc(*s, gp);
    }
    fputc('\'', gp);
}

static bool write_png(const struct bench *b, const char *png, const struct size_result *res, int n)
{
    static const struct {
        enum measure m;
        enum variant v;
        const char *title;
        const char *style;
    } series[] = {
        {M_STAGED, V_BASE, "(a) staged copy", "using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#9400d3'"},
        {M_IMPORT, V_CLMEM, "(b) first import", "using 1:2:3:4 with yerrorlines lw 2 pt 5 lc rgb '#009e73'"},
        {M_CACHED, V_CLMEM, "(c) cached import", "using 1:2:3:4 with yerrorlines lw 2 pt 9 lc rgb '#56b4e9'"},
        {M_WAIT, V_CLMEM, "(d) handoff, host waits (per frame)", "using 1:2:3:4 with yerrorlines lw 2 pt 11 lc rgb '#e69f00'"},
        {M_SEM, V_CLMEM, "(e) handoff, semaphores (per frame)", "using 1:2:3:4 with yerrorlines lw 2 pt 13 lc rgb '#d55e00'"},
        {M_IMPORT, V_RAW, "(b) raw", "using 1:2 with lines dt 2 lw 1 lc rgb '#009e73'"},
        {M_WAIT, V_RAW, "(d) raw", "using 1:2 with lines dt 2 lw 1 lc rgb '#e69f00'"},
        {M_SEM, V_RAW, "(e) raw", "using 1:2 with lines dt 2 lw 1 lc rgb '#d55e00'"},
    };
    const int nseries = (int)(sizeof series / sizeof series[0]);
    char title[1024], sz[32];
    bool first = true;
    int status;
    FILE *gp = popen("gnuplot", "w");

    if (!gp)
        return false;
    fprintf(gp, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1200,750 } "
                "else { set terminal png size 1200,750 }\n");
    fprintf(gp, "set output ");
    gp_quoted(gp, png);
    snprintf(title, sizeof title, "clmem-bench: Vulkan %s + OpenCL device, %s path", b->vk.device_name,
             clmem_bridge_path_name(b->path));
    fprintf(gp, "\nset title ");
    gp_quoted(gp, title);
    fprintf(gp, "\nset logscale xy\nset grid\nset key below\n"
                "set xlabel 'buffer size'\nset ylabel 'microseconds (median; bars: min..max)'\nset xtics (");
    for (int i = 0; i < n; i++)
        fprintf(gp, "%s'%s' %llu", i ? ", " : "", size_text(res[i].size, sz, sizeof sz),
                (unsigned long long)res[i].size);
    fprintf(gp, ")\n");
    for (int k = 0; k < nseries; k++) {
        fprintf(gp, "$s%d << EOD\n", k);
        for (int i = 0; i < n; i++) {
            const struct summary *x = &res[i].s[series[k].m][series[k].v];
            if (x->have)
                fprintf(gp, "%llu %.3f %.3f %.3f\n", (unsigned long long)res[i].size, x->median, x->min, x->max);
        }
        fprintf(gp, "EOD\n");
    }
    fprintf(gp, "plot");
    for (int k = 0; k < nseries; k++) {
        bool any = false;
        for (int i = 0; i < n; i++)
            any = any || res[i].s[series[k].m][series[k].v].have;
        if (!any) /* gnuplot stops on an empty series */
            continue;
        fprintf(gp, "%s $s%d %s title ", first ? "" : ",", k, series[k].style);
        gp_quoted(gp, series[k].title);
        first = false;
    }
    fprintf(gp, "\n");
    status = pclose(gp);
    return !first && status == 0;
}

/* "x.png" -> "x-batches.png" */
static void batch_png_path(const char *png, char *out, size_t len)
{
    size_t n = strlen(png);
    if (n > 4 && strcmp(png + n - 4, ".png") == 0)
        snprintf(out, len, "%.*s-batches.png", (int)(n - 4), png);
    else
        snprintf(out, len, "%s-batches.png", png);
}

/* Microseconds per frame against batch size: one line per handoff, ring
 * size and variant (raw dashed), the staged copy of a frame flat. */
static bool write_batch_png(const struct bench *b, const char *png, const struct batch_results *r)
{
    static const char *const colour[H_COUNT] = {"#d55e00", "#e69f00", "#0072b2"};
    char title[1024], sz[32];
    bool first = true;
    int nseries = 0, status;
    FILE *gp = popen("gnuplot", "w");

    if (!gp)
        return false;
    fprintf(gp, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1200,750 } "
                "else { set terminal png size 1200,750 }\n");
    fprintf(gp, "set output ");
    gp_quoted(gp, png);
    snprintf(title, sizeof title, "clmem-bench: frames in flight, Vulkan %s, %s frames of %s", b->vk.device_name,
             clmem_bridge_path_name(b->path), size_text(r->frame_size, sz, sizeof sz));
    fprintf(gp, "\nset title ");
    gp_quoted(gp, title);
    fprintf(gp, "\nset logscale xy 2\nset grid\nset key below\n"
                "set xlabel 'batch size (frames per semaphore signal and wait)'\n"
                "set ylabel 'microseconds per frame (median; bars: min..max)'\n");
    for (int h = 0; h < H_COUNT; h++)
        for (int v = V_CLMEM; v <= V_RAW; v++)
            for (int ring = 1; ring <= MAX_RING; ring++) {
                bool any = false;
                for (int i = 0; i < r->npoints; i++)
                    any = any || (r->points[i].ring == ring && r->points[i].s[h][v].have);
                if (!any)
                    continue;
                fprintf(gp, "$s%d << EOD\n", nseries++);
                for (int i = 0; i < r->npoints; i++)
                    if (r->points[i].ring == ring && r->points[i].s[h][v].have)
                        fprintf(gp, "%d %.3f %.3f %.3f\n", r->points[i].batch, r->points[i].s[h][v].median,
                                r->points[i].s[h][v].min, r->points[i].s[h][v].max);
                fprintf(gp, "EOD\n");
            }
    fprintf(gp, "plot");
    nseries = 0;
    for (int h = 0; h < H_COUNT; h++)
        for (int v = V_CLMEM; v <= V_RAW; v++)
            for (int ring = 1; ring <= MAX_RING; ring++) {
                bool any = false;
                char name[128];
                for (int i = 0; i < r->npoints; i++)
                    any = any || (r->points[i].ring == ring && r->points[i].s[h][v].have);
                if (!any)
                    continue;
                snprintf(name, sizeof name, "%s, ring %d, %s", handoff_label[h], ring, variant_name[v]);
                fprintf(gp, "%s $s%d using 1:2:3:4 with yerrorlines lw %d dt %d pt %d lc rgb '%s' title ", first ? "" : ",",
                        nseries++, v == V_CLMEM ? 2 : 1, v == V_CLMEM ? 1 : 2, 5 + 2 * ring, colour[h]);
                gp_quoted(gp, name);
                first = false;
            }
    if (r->staged.have) {
        fprintf(gp, "%s %.3f with lines lw 2 lc rgb '#9400d3' title ", first ? "" : ",", r->staged.median);
        snprintf(title, sizeof title, "staged copy of one frame (%s)", size_text(r->frame_size, sz, sizeof sz));
        gp_quoted(gp, title);
        first = false;
    }
    fprintf(gp, "\n");
    status = pclose(gp);
    return !first && status == 0;
}

/* ---------------------------------------------------------------- setup */

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: clmem-bench [OPTION]...\n"
            "Measure Vulkan -> OpenCL sharing through clmem-bridge against a staged copy and the raw calls.\n"
            "\n"
            "  --sizes A,B,...    buffer sizes (4096, 4K, 16M, 1G; binary units), instead of\n"
            "                     4K to 1G by powers of 4\n"
            "  --max-size BYTES   largest default size (default: 256M on a CPU OpenCL device,\n"
            "                     1G otherwise; 4G adds the 4 GiB size where memory allows)\n"
            "  --reps N           reps of (a), (b), (c) (default: 50 up to 1M, 30 up to 16M,\n"
            "                     15 up to 256M, 5 above)\n"
            "  --frames K         frames of (d) and per block of (e) (default %d)\n"
            "  --blocks N         timed blocks of (e), and of each --batches configuration, per\n"
            "                     variant (default %d)\n"
            "  --batches K,...    also measure frames in flight (clmem_bridge_ring) for each batch size K\n"
            "                     (1 to %d; e.g. 1,2,4,8,16): per frame, for each ring size and handoff\n"
            "                     (semaphores, host waits, transfer queue where a transfer-only queue\n"
            "                     family exists), against the same raw calls and the staged copy\n"
            "  --ring-sizes D,... ring sizes for --batches: batches in flight, N = K x D frames\n"
            "                     (default 2,3,4; 1 to %d)\n"
            "  --batch-frame-size BYTES  the frames of --batches (default: 256M, 1M on a CPU OpenCL\n"
            "                     device, 4K with --quick)\n"
            "  --quick            a smoke test: sizes 4K, 1M, 16M, 3 reps, 20 frames, 2 blocks, and a\n"
            "                     batch run (batches 1,4, ring size 2) unless --batches says otherwise\n"
            "  --csv FILE         where the CSV goes (default clmem-bench.csv)\n"
            "  --png FILE         where the plot goes when gnuplot is on PATH (default clmem-bench.png)\n"
            "  --validate         enable the Vulkan validation layer (off by default: it slows Vulkan calls)\n"
            "  --help             this text\n"
            "\n"
            "CSV columns: size_bytes, measure (staged_copy, import, cached_import, handoff_wait,\n"
            "handoff_semaphore; with batches ring_semaphore, ring_host, ring_transfer and\n"
            "batch_staged_copy), variant (baseline, clmem, raw), median_us, min_us, max_us, reps (the\n"
            "samples: reps; frames for handoff_wait; blocks for handoff_semaphore and the ring_ measures,\n"
            "whose values are per frame), frames_per_rep, batch (frames per handoff: 1 for the per-frame\n"
            "measures, 0 for the imports), ring (batches in flight; 0 outside a ring). The CSV is\n"
            "rewritten after every size. The (g) image frames add rows frame_staged_copy_WxH_FMT\n"
            "(baseline) and frame_handoff_WxH_FMT (clmem), size_bytes the frame's bytes, batch 1, ring 0;\n"
            "--quick runs 1920x1080 only.\n"
            "\n"
            "Environment: CLMEM_VK_DEVICE picks the Vulkan device: an index (all digits), a deviceUUID\n"
            "(32 hex digits, dashes optional) or a substring of its name (tools/vkctx.h).\n"
            "Exit status: 0; 1 when a check or a call failed; 2 usage error; 77 no Vulkan or\n"
            "OpenCL device (nothing to measure).\n",
            DEFAULT_FRAMES, DEFAULT_BLOCKS, MAX_BATCH, MAX_RING);
}

static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t len = strlen(name);
    if (strncmp(argv[*i], name, len) != 0)
        return NULL;
    if (argv[*i][len] == '=')
        return argv[*i] + len + 1;
    if (argv[*i][len] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "clmem-bench: %s needs a value\n", name);
        exit(2);
    }
    return argv[++*i];
}

/* "1,2,4": counts from 1 to max, at most cap of them. */
static int parse_list(const char *text, const char *option, int max, int *out, int cap)
{
    char list[256], *save = NULL;
    int n = 0;
    snprintf(list, sizeof list, "%s", text);
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(t, &end, 10);
        if (*t == '\0' || *end != '\0' || v < 1 || v > max || n == cap) {
            fprintf(stderr, "clmem-bench: %s takes up to %d counts from 1 to %d, comma-separated, not '%s'\n", option,
                    cap, max, text);
            exit(2);
        }
        out[n++] = (int)v;
    }
    if (n == 0) {
        fprintf(stderr, "clmem-bench: %s needs at least one count\n", option);
        exit(2);
    }
    return n;
}

static void parse_options(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->csv = "clmem-bench.csv";
    o->png = "clmem-bench.png";
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(argv[i], "--quick") == 0) {
            o->quick = true;
        } else if (strcmp(argv[i], "--validate") == 0) {
            o->validate = true;
        } else if ((v = option_value(argc, argv, &i, "--sizes"))) {
            char list[1024], *save = NULL;
            snprintf(list, sizeof list, "%s", v);
            o->nsizes = 0;
            for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                uint64_t sz = parse_size(t);
                /* 8 bytes: the kernel uses words 0 and 1; multiples of 4: vkCmdFillBuffer */
                if (sz < 8 || sz % 4 || o->nsizes == MAX_SIZES) {
                    fprintf(stderr, "clmem-bench: --sizes: '%s' is not a size of at least 8 bytes, a multiple "
                                    "of 4 (or more than %d sizes)\n",
                            t, MAX_SIZES);
                    exit(2);
                }
                o->sizes[o->nsizes++] = sz;
            }
            if (o->nsizes == 0) {
                fprintf(stderr, "clmem-bench: --sizes needs at least one size\n");
                exit(2);
            }
        } else if ((v = option_value(argc, argv, &i, "--max-size"))) {
            if (!(o->max_size = parse_size(v))) {
                fprintf(stderr, "clmem-bench: --max-size: '%s' is not a size\n", v);
                exit(2);
            }
        } else if ((v = option_value(argc, argv, &i, "--reps"))) {
            o->reps = parse_count(v, "--reps");
        } else if ((v = option_value(argc, argv, &i, "--frames"))) {
            o->frames = parse_count(v, "--frames");
        } else if ((v = option_value(argc, argv, &i, "--blocks"))) {
            o->blocks = parse_count(v, "--blocks");
        } else if ((v = option_value(argc, argv, &i, "--batches"))) {
            o->nbatches = parse_list(v, "--batches", MAX_BATCH, o->batches, 16);
        } else if ((v = option_value(argc, argv, &i, "--ring-sizes"))) {
            o->nrings = parse_list(v, "--ring-sizes", MAX_RING, o->rings, 8);
        } else if ((v = option_value(argc, argv, &i, "--batch-frame-size"))) {
            if ((o->batch_frame_size = parse_size(v)) < 8 || o->batch_frame_size % 4) {
                fprintf(stderr, "clmem-bench: --batch-frame-size: '%s' is not a size of at least 8 bytes, a "
                                "multiple of 4\n",
                        v);
                exit(2);
            }
        } else if ((v = option_value(argc, argv, &i, "--csv"))) {
            o->csv = v;
        } else if ((v = option_value(argc, argv, &i, "--png"))) {
            o->png = v;
        } else {
            fprintf(stderr, "clmem-bench: unknown option '%s' (try --help)\n", argv[i]);
            exit(2);
        }
    }
    if (!o->frames)
        o->frames = o->quick ? 20 : DEFAULT_FRAMES;
    if (!o->blocks)
        o->blocks = o->quick ? 2 : DEFAULT_BLOCKS;
    /* --quick includes a small batch run; otherwise --batches asks for one. */
    if (!o->nbatches && o->quick) {
        o->batches[o->nbatches++] = 1;
        o->batches[o->nbatches++] = 4;
    }
    if (o->nbatches && !o->nrings) {
        if (o->quick) {
            o->rings[o->nrings++] = 2;
        } else {
            for (int d = 2; d <= 4; d++)
                o->rings[o->nrings++] = d;
        }
    }
}

static int default_reps(uint64_t size)
{
    return size <= 1 * MIB ? 50 : size <= 16 * MIB ? 30 : size <= 256 * MIB ? 15 : 5;
}

/* Why a size cannot run here, or NULL. Counts the bench's buffers: two
 * shared, one staging, one plain cl buffer. */
static const char *size_unfit(const struct bench *b, uint64_t size, char *why, size_t len)
{
    bool host_path = b->path == CLMEM_BRIDGE_PATH_HOST_MAPPED || b->cpu_device;
    uint64_t host_need = host_path ? 4 * size : size;
    if (size > b->cl_max_alloc)
        snprintf(why, len, "above CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu MiB)", (unsigned long long)(b->cl_max_alloc / MIB));
    else if (b->vk_max_alloc && size > b->vk_max_alloc)
        snprintf(why, len, "above Vulkan's maxMemoryAllocationSize (%llu MiB)",
                 (unsigned long long)(b->vk_max_alloc / MIB));
    else if (3 * size > b->cl_global_mem / 10 * 9)
        snprintf(why, len, "3 x the size is more than 90%% of the OpenCL device's %llu MiB",
                 (unsigned long long)(b->cl_global_mem / MIB));
    else if (b->host_mem && host_need > b->host_mem / 4 * 3)
        snprintf(why, len, "needs %llu MiB of host memory, more than 75%% of %llu MiB",
                 (unsigned long long)(host_need / MIB), (unsigned long long)(b->host_mem / MIB));
    else
        return NULL;
    return why;
}

/* Vulkan's driverVersion: NVIDIA packs it 10.8.8.6, others use VK_MAKE_VERSION. */
static void vk_driver_text(const VkPhysicalDeviceProperties *p, char *buf, size_t len)
{
    uint32_t v = p->driverVersion;
    if (p->vendorID == 0x10de)
        snprintf(buf, len, "%u.%u.%u.%u", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f);
    else
        snprintf(buf, len, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

static void cl_text(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    if (clGetDeviceInfo(d, what, len, buf, NULL) != CL_SUCCESS)
        snprintf(buf, len, "?");
}

/* The paired OpenCL device, or the first one there is. */
static void pick_opencl(struct bench *b)
{
    clmem_status s = clmem_bridge_pair(b->vk.instance, b->vk.get_instance_proc_addr, b->vk.physical_device,
                                       &b->platform, &b->device);
    cl_platform_id platforms[16];
    cl_uint np = 0;

    if (s == CLMEM_OK) {
        snprintf(b->pair_note, sizeof b->pair_note, "paired with the Vulkan device by deviceUUID");
        return;
    }
    snprintf(b->pair_note, sizeof b->pair_note, "the first OpenCL device (clmem_bridge_pair: %s)",
             clmem_error_message());
    if (clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS)
        np = 0;
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &b->device, &nd) == CL_SUCCESS && nd > 0) {
            b->platform = platforms[p];
            return;
        }
    }
    printf("clmem-bench: no OpenCL device, nothing to measure\n");
    exit(77);
}

static void setup(struct bench *b, const struct options *o)
{
    cl_context_properties cprops[3] = {CL_CONTEXT_PLATFORM, 0, 0};
    cl_device_type type = 0;
    cl_int err;

    /* The validation layer (tools/vkctx.c turns it on when installed) slows
     * every Vulkan call; a benchmark runs without it unless asked. */
    if (!o->validate)
        setenv("CLMEM_VALIDATION", "0", 1);
    if (!vkctx_open(&b->vk, -1)) {
        const char *want = getenv("CLMEM_VK_DEVICE");
        struct vkctx probe;
        /* Asking for a device that is not there is a mistake, not a
         * machine without Vulkan: an error, not a skip. */
        if (want && *want && vkctx_find_device(&probe) < 0 && vkctx_count_devices(&probe) > 0)
            die("%s", b->vk.error);
        printf("clmem-bench: no usable Vulkan device, nothing to measure: %s\n", b->vk.error);
        exit(77);
    }
    vkGetPhysicalDeviceProperties(b->vk.physical_device, &b->vk_props);
    pick_opencl(b);

    cprops[1] = (cl_context_properties)b->platform;
    b->context = clCreateContext(cprops, 1, &b->device, NULL, NULL, &err);
    check_cl(err, "clCreateContext");
    b->queue = clCreateCommandQueueWithProperties(b->context, b->device, NULL, &err);
    check_cl(err, "clCreateCommandQueueWithProperties");
    b->program = clCreateProgramWithSource(b->context, 1, (const char *[]){kernel_source}, NULL, &err);
    check_cl(err, "clCreateProgramWithSource");
    check_cl(clBuildProgram(b->program, 1, &b->device, "", NULL, NULL), "clBuildProgram");
    for (int v = V_CLMEM; v <= V_RAW; v++) {
        b->kernel[v] = clCreateKernel(b->program, "bump", &err);
        check_cl(err, "clCreateKernel");
    }

    clGetDeviceInfo(b->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    b->cpu_device = (type & CL_DEVICE_TYPE_CPU) != 0;

    /* The bridges, before anything is timed. */
    {
        clmem_bridge_info info = {.size = sizeof info,
                                  .instance = b->vk.instance,
                                  .physical_device = b->vk.physical_device,
                                  .device = b->vk.device,
                                  .get_instance_proc_addr = b->vk.get_instance_proc_addr,
                                  .context = b->context,
                                  .cl_device = b->device,
                                  .flags = 0};
        check_clmem(clmem_bridge_create(&info, &b->bridge), "clmem_bridge_create");
        info.flags = CLMEM_BRIDGE_NO_IMPORT_CACHE;
        check_clmem(clmem_bridge_create(&info, &b->bridge_uncached),
                    "clmem_bridge_create(CLMEM_BRIDGE_NO_IMPORT_CACHE)");
    }

    /* The bridge answered this at creation (the flag does not change it). */
    if (clmem_bridge_check_path(b->bridge, CLMEM_BRIDGE_PATH_OPAQUE_FD) == CLMEM_OK) {
        b->path = CLMEM_BRIDGE_PATH_OPAQUE_FD;
        snprintf(b->path_note, sizeof b->path_note, "clmem_bridge_check_path(opaque-fd) is OK");
    } else {
        snprintf(b->path_note, sizeof b->path_note, "opaque fd is not possible: %s", clmem_error_message());
        b->path = CLMEM_BRIDGE_PATH_HOST_MAPPED;
        check_clmem(clmem_bridge_check_path(b->bridge, CLMEM_BRIDGE_PATH_HOST_MAPPED),
                    "clmem_bridge_check_path(host-mapped)");
    }

    /* Raw entry points, the way bridge/clext.c resolves them. */
    b->acquire_external = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(
        b->platform, "clEnqueueAcquireExternalMemObjectsKHR");
    b->release_external = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(
        b->platform, "clEnqueueReleaseExternalMemObjectsKHR");
    b->create_semaphore = (clCreateSemaphoreWithPropertiesKHR_fn)clGetExtensionFunctionAddressForPlatform(
        b->platform, "clCreateSemaphoreWithPropertiesKHR");
    b->wait_semaphores = (clEnqueueWaitSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(
        b->platform, "clEnqueueWaitSemaphoresKHR");
    b->signal_semaphores = (clEnqueueSignalSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(
        b->platform, "clEnqueueSignalSemaphoresKHR");
    b->release_semaphore =
        (clReleaseSemaphoreKHR_fn)clGetExtensionFunctionAddressForPlatform(b->platform, "clReleaseSemaphoreKHR");
    b->get_memory_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(b->vk.device, "vkGetMemoryFdKHR");
    b->get_semaphore_fd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(b->vk.device, "vkGetSemaphoreFdKHR");
    if (b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD && (!b->acquire_external || !b->release_external || !b->get_memory_fd))
        die("the opaque-fd path is supported, but clEnqueueAcquire/ReleaseExternalMemObjectsKHR or "
            "vkGetMemoryFdKHR cannot be resolved");

    {
        cl_ulong v = 0;
        VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &m3};
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        clGetDeviceInfo(b->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof v, &v, NULL);
        b->cl_max_alloc = v;
        clGetDeviceInfo(b->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof v, &v, NULL);
        b->cl_global_mem = v;
        vkGetPhysicalDeviceProperties2(b->vk.physical_device, &p2);
        b->vk_max_alloc = m3.maxMemoryAllocationSize;
        b->host_mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    }

    semaphores_setup(b);
}

static void print_header(const struct bench *b, const struct options *o, const uint64_t *sizes, int n)
{
    char when[64], host[256] = "?", cl_name[256], cl_driver[256], cl_version[256], plat_name[256] = "?",
                   vk_driver[64], sz[32];
    time_t t = time(NULL);
    struct tm tm;

    localtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %z", &tm);
    gethostname(host, sizeof host - 1);
    cl_text(b->device, CL_DEVICE_NAME, cl_name, sizeof cl_name);
    cl_text(b->device, CL_DRIVER_VERSION, cl_driver, sizeof cl_driver);
    cl_text(b->device, CL_DEVICE_VERSION, cl_version, sizeof cl_version);
    clGetPlatformInfo(b->platform, CL_PLATFORM_NAME, sizeof plat_name, plat_name, NULL);
    vk_driver_text(&b->vk_props, vk_driver, sizeof vk_driver);

    printf("# clmem-bench (clmem %s), %s on %s\n", clmem_version(), when, host);
    printf("# Vulkan: %s, driverVersion %s (0x%08x), API %u.%u.%u, validation %s\n", b->vk.device_name, vk_driver,
           b->vk_props.driverVersion, VK_API_VERSION_MAJOR(b->vk_props.apiVersion),
           VK_API_VERSION_MINOR(b->vk_props.apiVersion), VK_API_VERSION_PATCH(b->vk_props.apiVersion),
           b->vk.validation ? "ON (timings include the layer)" : "off");
    printf("# OpenCL: %s on %s (%s), CL_DRIVER_VERSION %s, %s device\n", cl_name, plat_name, cl_version, cl_driver,
           b->cpu_device ? "CPU" : "non-CPU");
    printf("#   chosen: %s\n", b->pair_note);
    printf("# path: %s (%s)\n", clmem_bridge_path_name(b->path), b->path_note);
    printf("# bridges: made once before timing; (b) through one made with CLMEM_BRIDGE_NO_IMPORT_CACHE\n"
           "#       (clmem_bridge_finish after each rep, untimed), the rest through one with the cache\n");
    printf("# semaphores: %s\n", b->sem_ok ? b->sem_note : b->sem_note[0] ? b->sem_note : "not usable");
    printf("# sizes:");
    for (int i = 0; i < n; i++)
        printf(" %s", size_text(sizes[i], sz, sizeof sz));
    printf("; reps %s; frames K=%d; (e) blocks %d%s\n", o->reps ? "fixed" : "by size", o->frames, o->blocks,
           o->quick ? " (--quick)" : "");
    printf("# (a) = pre-recorded vkCmdCopyBuffer into persistently mapped staging + vkQueueWaitIdle +\n"
           "#       clEnqueueWriteBuffer(blocking) into a plain cl buffer\n"
           "# (d),(e) Vulkan's write: one pre-recorded command buffer per frame value (vkCmdFillBuffer of\n"
           "#       word 0 + barrier), recorded before timing; kernel (1 work-item): v=p[0]; p[0]=v+1; p[1]+=v\n"
           "# raw = the same driver calls without the library, interleaved rep by rep ((e): block by block)\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static struct bench b;
    struct options o;
    uint64_t sizes[MAX_SIZES] = {0};
    struct size_result *results;
    struct batch_results batches = {0};
    int nsizes = 0, nresults = 0;
    double t_start = now_us();
    char sz[32], why[256];

    parse_options(argc, argv, &o);
    setup(&b, &o);

    /* The sizes: --sizes, or the default ladder up to the cap. */
    if (o.nsizes) {
        for (int i = 0; i < o.nsizes; i++)
            if (!o.max_size || o.sizes[i] <= o.max_size)
                sizes[nsizes++] = o.sizes[i];
    } else {
        uint64_t cap = o.max_size ? o.max_size : b.cpu_device ? CPU_DEFAULT_CAP : GPU_DEFAULT_CAP;
        if (o.quick) {
            static const uint64_t quick[] = {4 * KIB, 1 * MIB, 16 * MIB};
            for (int i = 0; i < 3; i++)
                if (quick[i] <= cap)
                    sizes[nsizes++] = quick[i];
        } else {
            for (uint64_t s = 4 * KIB; s <= cap && s <= 4 * GIB && nsizes < MAX_SIZES; s *= 4)
                sizes[nsizes++] = s;
        }
    }
    print_header(&b, &o, sizes, nsizes);

    results = calloc((size_t)(nsizes ? nsizes : 1), sizeof *results);
    if (!results)
        die("out of memory");
    for (int i = 0; i < nsizes; i++) {
        struct size_run s = {.size = sizes[i]};
        if (size_unfit(&b, sizes[i], why, sizeof why)) {
            printf("\nsize %s: skipped, %s\n", size_text(sizes[i], sz, sizeof sz), why);
            continue;
        }
        s.reps = o.reps ? o.reps : o.quick ? 3 : default_reps(sizes[i]);
        s.frames = o.frames;
        s.blocks = o.blocks;
        s.warmup_frames = o.quick ? 2 : WARMUP_FRAMES;
        run_size(&b, &s, &results[nresults++]);
        /* Rewritten after every size, so a run that dies later (the
         * watchdog, a failing call) still leaves the sizes it finished. */
        write_csv(o.csv, results, nresults, NULL);
    }

    run_frames(&b, o.quick, o.reps ? o.reps : o.quick ? 3 : 20);
    write_csv(o.csv, results, nresults, NULL); /* as after a size: the frames survive a batch run that dies */
    print_tables(results, nresults);
    print_frames();
    if (o.nbatches) {
        run_batches(&b, &o, &batches);
        print_batch_table(&batches);
    }
    if (write_csv(o.csv, results, nresults, &batches))
        printf("\nCSV: %s\n", o.csv);
    else
        fail(&b, "writing the CSV %s failed", o.csv);
    if (!on_path("gnuplot"))
        printf("PNG: skipped, gnuplot is not on PATH (tools/bench-plot.sh plots the CSV elsewhere)\n");
    else if (write_png(&b, o.png, results, nresults))
        printf("PNG: %s\n", o.png);
    else
        printf("PNG: gnuplot failed, no plot written (the CSV has the data)\n");
    if (batches.ran && on_path("gnuplot")) {
        char png[4096];
        batch_png_path(o.png, png, sizeof png);
        if (write_batch_png(&b, png, &batches))
            printf("PNG: %s (time per frame against batch size)\n", png);
        else
            printf("PNG: gnuplot failed on the batch plot (the CSV has the data)\n");
    }

    semaphores_teardown(&b);
    /* Before vkDestroyDevice (vkctx_close): nothing of either bridge may
     * still hold Vulkan memory. */
    {
        clmem_bridge *bridges[2] = {b.bridge, b.bridge_uncached};
        for (int i = 0; i < 2; i++) {
            clmem_status st = clmem_bridge_finish(bridges[i], FINISH_TIMEOUT_NS);
            if (st != CLMEM_OK)
                fail(&b, "clmem_bridge_finish (%s bridge) before vkDestroyDevice returned %s: %s",
                     i == 0 ? "cached" : "uncached", clmem_status_name(st), clmem_error_message());
            clmem_bridge_unref(bridges[i]);
        }
        b.bridge = b.bridge_uncached = NULL;
    }
    for (int v = V_CLMEM; v <= V_RAW; v++)
        clReleaseKernel(b.kernel[v]);
    clReleaseProgram(b.program);
    clReleaseCommandQueue(b.queue);
    clReleaseContext(b.context);
    if (b.vk.validation && vkctx_validation_errors())
        fail(&b, "%u Vulkan validation errors (printed above)", vkctx_validation_errors());
    vkctx_close(&b.vk);
    free(results);
    free(batches.points);

    printf("total %.1f s; %s\n", (now_us() - t_start) / 1e6,
           b.failures ? "SOME CHECKS FAILED" : "all correctness checks passed");
    return b.failures ? 1 : 0;
}
