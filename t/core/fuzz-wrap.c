/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: bytes become arguments for clmem_handle_wrap,
 * clmem_handle_wrap_checked and clmem_bridge_import_fd, and every result
 * is checked against what clmem.h and clmem-bridge.h promise. Any broken
 * promise is an abort(), which libFuzzer reports as a crash with the input.
 *
 * The OpenCL objects are real (made once, in LLVMFuzzerInitialize): two
 * contexts on the first device, a queue in each, a buffer, an image and a
 * sub-buffer in the first, a buffer in the second, and a bridge (on the
 * first Vulkan device) for each context. Only those (or NULL) are
 * ever passed as cl_mem or cl_command_queue: a junk pointer would crash the
 * ICD loader, legitimately, before the library could say anything. Every
 * other argument is arbitrary: row pitches, sizes, offsets, paths, flags,
 * and fds from {-1, a closed number, both ends of a pipe, /dev/null, huge
 * numbers, any int}.
 *
 * The promises checked:
 *  - the status is one the rules that the arguments break allow (when
 *    several are broken, any of them), CLMEM_OK when none is, and the error
 *    record says the same status;
 *  - on failure *out is NULL, no reference was taken on the anchor (its
 *    release runs exactly once, when the caller drops its own reference),
 *    and an fd passed to import_fd is still open and still the same file;
 *  - on success the handle holds exactly what was wrapped and borrows the
 *    cl_mem (its OpenCL reference count is unchanged).
 *
 * scripts/check-fuzz.sh builds this with clang -fsanitize=fuzzer,address,
 * undefined. With -DCLMEM_FUZZ_REPLAY (make check's t/core/fuzz-wrap) a main()
 * replays a fixed stream of pseudo-random inputs and prints TAP instead. */
#define CL_TARGET_OPENCL_VERSION 300
#include "clmem-bridge.h"
#include "vkctx.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------- the world */

enum { MEM_BUFFER, MEM_IMAGE, MEM_SUB, MEM_OTHER_CONTEXT, MEM_NULL, MEM_CHOICES };
enum { QUEUE_MAIN, QUEUE_OTHER_CONTEXT, QUEUE_NULL, QUEUE_CHOICES };
enum { CONTEXT_MAIN, CONTEXT_OTHER, CONTEXT_NULL, CONTEXT_CHOICES };

static struct {
    cl_device_id device;
    cl_context contexts[CONTEXT_CHOICES];
    clmem_bridge *bridges[CONTEXT_CHOICES]; /* one per context (the bridge import_fd takes); NULL for NULL */
    struct vkctx vk;
    cl_command_queue queues[QUEUE_CHOICES];
    cl_mem mems[MEM_CHOICES];
    cl_context mem_context[MEM_CHOICES];
    bool mem_is_buffer[MEM_CHOICES];
    size_t mem_size[MEM_CHOICES];
    cl_uint align;   /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes */
    bool imports_fd; /* the device takes opaque fds or dma-bufs at all */
    int pipe_fds[2], devnull, closed_fd;
} w;

static void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz-wrap: broken promise: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  last error: %s\n", clmem_error_message());
    abort();
}

static void setup_fail(const char *what, cl_int err) __attribute__((noreturn));
static void setup_fail(const char *what, cl_int err)
{
    fprintf(stderr, "fuzz-wrap: setting up: %s failed (%d)\n", what, err);
    exit(2);
}

static bool has_extension(cl_device_id device, const char *name)
{
    char ext[8192] = "";
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
    return strstr(ext, name) != NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *want = getenv("CLMEM_TEST_CL_PLATFORM");
    cl_platform_id platforms[16];
    cl_uint n = 0, align_bits = 0;
    cl_image_format format = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 16, .image_height = 16};
    cl_buffer_region region;
    cl_int err;

    (void)argc;
    (void)argv;
    if (clGetPlatformIDs(16, platforms, &n) != CL_SUCCESS || n == 0)
        setup_fail("clGetPlatformIDs", -1);
    for (cl_uint i = 0; i < n && i < 16 && !w.device; i++) {
        char name[256] = "";
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if ((want && !strstr(name, want)) ||
            clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &w.device, NULL) != CL_SUCCESS)
            w.device = NULL;
    }
    if (!w.device)
        setup_fail("finding an OpenCL device", -1);
    clGetDeviceInfo(w.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    w.align = align_bits / 8 ? align_bits / 8 : 1;
    w.imports_fd = has_extension(w.device, "cl_khr_external_memory_opaque_fd") ||
                   has_extension(w.device, "cl_khr_external_memory_dma_buf");

    for (int c = CONTEXT_MAIN; c <= CONTEXT_OTHER; c++) {
        w.contexts[c] = clCreateContext(NULL, 1, &w.device, NULL, NULL, &err);
        if (err != CL_SUCCESS)
            setup_fail("clCreateContext", err);
        w.queues[c] = clCreateCommandQueueWithProperties(w.contexts[c], w.device, NULL, &err);
        if (err != CL_SUCCESS)
            setup_fail("clCreateCommandQueueWithProperties", err);
    }
    w.mems[MEM_BUFFER] = clCreateBuffer(w.contexts[CONTEXT_MAIN], CL_MEM_READ_WRITE, 65536, NULL, &err);
    if (err != CL_SUCCESS)
        setup_fail("clCreateBuffer", err);
    w.mems[MEM_IMAGE] = clCreateImage(w.contexts[CONTEXT_MAIN], CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
    if (err != CL_SUCCESS)
        setup_fail("clCreateImage", err);
    region.origin = w.align;
    region.size = 4096;
    w.mems[MEM_SUB] = clCreateSubBuffer(w.mems[MEM_BUFFER], 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err != CL_SUCCESS)
        setup_fail("clCreateSubBuffer", err);
    w.mems[MEM_OTHER_CONTEXT] = clCreateBuffer(w.contexts[CONTEXT_OTHER], CL_MEM_READ_WRITE, 1024, NULL, &err);
    if (err != CL_SUCCESS)
        setup_fail("clCreateBuffer (other context)", err);
    for (int m = 0; m < MEM_NULL; m++) {
        cl_mem_object_type type = 0;
        clGetMemObjectInfo(w.mems[m], CL_MEM_CONTEXT, sizeof w.mem_context[m], &w.mem_context[m], NULL);
        clGetMemObjectInfo(w.mems[m], CL_MEM_TYPE, sizeof type, &type, NULL);
        clGetMemObjectInfo(w.mems[m], CL_MEM_SIZE, sizeof w.mem_size[m], &w.mem_size[m], NULL);
        w.mem_is_buffer[m] = type == CL_MEM_OBJECT_BUFFER;
    }

    /* import_fd takes a bridge, and a bridge a Vulkan device. */
    if (!vkctx_open(&w.vk, -1))
        setup_fail(w.vk.error, -1);
    for (int c = CONTEXT_MAIN; c <= CONTEXT_OTHER; c++) {
        clmem_bridge_info info = {.size = sizeof info,
                                  .instance = w.vk.instance,
                                  .physical_device = w.vk.physical_device,
                                  .device = w.vk.device,
                                  .context = w.contexts[c],
                                  .cl_device = w.device};
        if (clmem_bridge_create(&info, &w.bridges[c]) != CLMEM_OK)
            setup_fail("clmem_bridge_create", -1);
    }

    if (pipe(w.pipe_fds) != 0 || (w.devnull = open("/dev/null", O_RDWR)) < 0)
        setup_fail("pipe or /dev/null", -1);
    /* A number that is not open: /dev/null opened and closed again, and
     * nothing opened since (checked at each use: a driver may open one). */
    w.closed_fd = open("/dev/null", O_RDONLY);
    close(w.closed_fd);
    return 0;
}

/* ------------------------------------------------------------ the input */

struct input {
    const uint8_t *p;
    size_t left;
};

static uint64_t take(struct input *in, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes && in->left; i++, in->left--)
        v |= (uint64_t)*in->p++ << (8 * i);
    return v;
}

/* Sizes and offsets: mostly small or aligned, so that the range checks are
 * passed often and the later checks get reached; sometimes anything. */
static uint64_t take_size(struct input *in)
{
    switch (take(in, 1) % 5) {
    case 0: return 0;
    case 1: return take(in, 2);
    case 2: return take(in, 1) * (uint64_t)w.align;
    case 3: return UINT64_MAX - take(in, 1);
    default: return take(in, 8);
    }
}

/* ------------------------------------------------------------- anchors */

static int releases;
static void count_release(void *user)
{
    (void)user;
    releases++;
}

/* NULL or a fresh counting anchor (the caller's one reference). */
static clmem_keepalive *take_anchor(struct input *in)
{
    clmem_keepalive *ka;
    if (take(in, 1) & 1)
        return NULL;
    releases = 0;
    ka = clmem_keepalive_new(count_release, NULL);
    if (!ka)
        fuzz_fail("clmem_keepalive_new failed");
    return ka;
}

/* The caller drops its anchor after everything else: its release must run
 * now, exactly once, whatever the call did. */
static void drop_anchor(clmem_keepalive *ka, const char *what)
{
    if (!ka)
        return;
    if (releases != 0)
        fuzz_fail("%s: the anchor was released while the caller still held it", what);
    clmem_keepalive_unref(ka);
    if (releases != 1)
        fuzz_fail("%s: the anchor ran its release %d times when the caller let go, want once", what, releases);
}

/* ------------------------------------------------------------- the calls */

/* The status must be one of the `allowed` bits (1 << status). */
static void expect_status(clmem_status s, unsigned allowed, const char *what)
{
    if (s > CLMEM_ERR_NO_MEMORY || !(allowed & (1u << s)))
        fuzz_fail("%s returned %d (%s), allowed mask 0x%x", what, (int)s, clmem_status_str(s), allowed);
    if (s != CLMEM_OK && clmem_error_status() != s)
        fuzz_fail("%s returned %d but the error record says %d", what, (int)s, (int)clmem_error_status());
    if (s != CLMEM_OK && !clmem_error_message()[0])
        fuzz_fail("%s failed with an empty error message", what);
}

#define BIT(s) (1u << (s))

static void fuzz_wrap(struct input *in, bool checked)
{
    const char *what = checked ? "clmem_handle_wrap_checked" : "clmem_handle_wrap";
    int m = (int)(take(in, 1) % MEM_CHOICES), q = (int)(take(in, 1) % QUEUE_CHOICES);
    uint32_t row_pitch = (uint32_t)((take(in, 1) & 1) ? take(in, 4) : take(in, 1) % 3 ? 0 : take(in, 2));
    bool want_out = take(in, 1) % 8 != 0;
    clmem_keepalive *ka = take_anchor(in);
    cl_mem mem = w.mems[m];
    cl_command_queue queue = w.queues[q];
    clmem_handle *h = (clmem_handle *)(uintptr_t)0x1;
    cl_uint refs_before = 0, refs_after = 0;
    unsigned broken = 0;
    clmem_status s;

    if (mem)
        clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof refs_before, &refs_before, NULL);
    s = checked ? clmem_handle_wrap_checked(mem, queue, row_pitch, ka, want_out ? &h : NULL)
                : clmem_handle_wrap(mem, queue, row_pitch, ka, want_out ? &h : NULL);

    /* The rules, from clmem.h. */
    if (!mem || !queue || !want_out)
        broken |= BIT(CLMEM_ERR_NULL_POINTER);
    else if (checked) {
        if (w.mem_context[m] != w.contexts[q])
            broken |= BIT(CLMEM_ERR_CONTEXT_MISMATCH);
        if (row_pitch != 0 && !w.mem_is_buffer[m])
            broken |= BIT(CLMEM_ERR_NOT_A_BUFFER);
        if (row_pitch != 0 && w.mem_is_buffer[m] && row_pitch > w.mem_size[m])
            broken |= BIT(CLMEM_ERR_INVALID_VALUE);
    }
    expect_status(s, broken ? broken : BIT(CLMEM_OK), what);

    if (s == CLMEM_OK) {
        if (!h || clmem_handle_mem(h) != mem || clmem_handle_queue(h) != queue ||
            clmem_handle_row_pitch(h) != row_pitch || clmem_handle_keepalive(h) != ka)
            fuzz_fail("%s: the handle does not hold what was wrapped", what);
        clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof refs_after, &refs_after, NULL);
        if (refs_after != refs_before)
            fuzz_fail("%s: the cl_mem's reference count went from %u to %u: handles borrow", what, refs_before,
                      refs_after);
        if (ka && releases != 0)
            fuzz_fail("%s: the anchor was released while a handle held it", what);
        clmem_handle_unref(h);
    } else if (want_out && h != NULL) {
        fuzz_fail("%s failed but *out is %p, not NULL", what, (void *)h);
    }
    drop_anchor(ka, what);
}

/* Which fd: the choices the header describes, and any int at all. */
static int take_fd(struct input *in)
{
    switch (take(in, 1) % 9) {
    case 0: return -1;
    case 1: return w.closed_fd;
    case 2: return w.pipe_fds[0];
    case 3: return w.pipe_fds[1];
    case 4: return w.devnull;
    case 5: return INT_MAX;
    case 6: return 1 << 20;
    case 7: return INT_MIN;
    default: return (int)(uint32_t)take(in, 4);
    }
}

static void fuzz_import_fd(struct input *in)
{
    const char *what = "clmem_bridge_import_fd";
    int fd = take_fd(in);
    uint8_t path_byte = (uint8_t)take(in, 1);
    clmem_bridge_path path = path_byte < 200 ? (clmem_bridge_path)(path_byte % 5)
                                             : (clmem_bridge_path)(int)(uint32_t)take(in, 4);
    uint64_t allocation_size = take_size(in), offset = take_size(in), size = take_size(in);
    int c = (int)(take(in, 1) % CONTEXT_CHOICES), q = (int)(take(in, 1) % QUEUE_CHOICES);
    uint8_t flag_byte = (uint8_t)take(in, 1);
    cl_mem_flags flags = flag_byte < 128   ? 0
                         : flag_byte < 200 ? (cl_mem_flags)1 << (flag_byte % 16)
                                           : (cl_mem_flags)take(in, 8);
    bool want_out = take(in, 1) % 8 != 0;
    clmem_keepalive *ka = take_anchor(in);
    clmem_handle *h = (clmem_handle *)(uintptr_t)0x1;
    struct stat before, after;
    bool was_open = fd >= 0 && fstat(fd, &before) == 0;
    unsigned broken = 0;
    clmem_status s;

    s = clmem_bridge_import_fd(w.bridges[c], fd, path, allocation_size, offset, size, ka, w.queues[q], flags,
                               want_out ? &h : NULL);

    /* The rules, from clmem-bridge.h: import_fd takes the fd paths only, a
     * non-negative fd, a range inside the allocation, no host-pointer flag,
     * a queue of the bridge's context, an aligned offset, and a device that
     * imports. */
    if (!want_out || !w.bridges[c] || !w.queues[q])
        broken |= BIT(CLMEM_ERR_NULL_POINTER);
    else {
        if (fd < 0)
            broken |= BIT(CLMEM_ERR_INVALID_VALUE);
        if (path != CLMEM_BRIDGE_PATH_OPAQUE_FD && path != CLMEM_BRIDGE_PATH_DMA_BUF)
            broken |= BIT(CLMEM_ERR_INVALID_VALUE);
        if (allocation_size == 0 || size == 0)
            broken |= BIT(CLMEM_ERR_ZERO_SIZE);
        else if (offset > allocation_size || size > allocation_size - offset)
            broken |= BIT(CLMEM_ERR_INVALID_VALUE);
        if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))
            broken |= BIT(CLMEM_ERR_INVALID_VALUE);
        if (c != q) /* contexts[i] owns queues[i] */
            broken |= BIT(CLMEM_ERR_CONTEXT_MISMATCH);
        if (offset % w.align != 0)
            broken |= BIT(CLMEM_ERR_INVALID_VALUE);
        if (!broken && !w.imports_fd)
            broken |= BIT(CLMEM_ERR_UNSUPPORTED);
    }
    /* With every rule kept, a driver that imports may still refuse the fd. */
    expect_status(s,
                  broken ? broken
                         : BIT(CLMEM_OK) | BIT(CLMEM_ERR_OPENCL) | BIT(CLMEM_ERR_UNSUPPORTED) |
                               BIT(CLMEM_ERR_NO_MEMORY) | BIT(CLMEM_ERR_INVALID_VALUE),
                  what);

    if (s == CLMEM_OK) {
        /* Only where a driver imports: the fd is OpenCL's now. Give the
         * world a new one in its place so that no later input reuses it. */
        if (!h || !clmem_handle_mem(h))
            fuzz_fail("%s succeeded without a handle", what);
        clmem_handle_unref(h);
        if (fd == w.devnull)
            w.devnull = open("/dev/null", O_RDWR);
        else if (fd == w.pipe_fds[0] || fd == w.pipe_fds[1]) {
            close(fd == w.pipe_fds[0] ? w.pipe_fds[1] : w.pipe_fds[0]);
            if (pipe(w.pipe_fds) != 0)
                setup_fail("pipe", -1);
        }
    } else {
        if (want_out && h != NULL)
            fuzz_fail("%s failed but *out is %p, not NULL", what, (void *)h);
        if (was_open && (fstat(fd, &after) != 0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino))
            fuzz_fail("%s failed and the caller's fd %d is no longer open (or not the same file)", what, fd);
    }
    drop_anchor(ka, what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input in = {data, size};

    /* Up to 16 calls an input, so that a sequence of calls is explored too. */
    for (int i = 0; i < 16 && in.left; i++) {
        switch (take(&in, 1) % 3) {
        case 0: fuzz_wrap(&in, false); break;
        case 1: fuzz_wrap(&in, true); break;
        default: fuzz_import_fd(&in); break;
        }
    }
    return 0;
}

#ifdef CLMEM_FUZZ_REPLAY
/* make check: a fixed stream of pseudo-random inputs through the harness.
 * A broken promise aborts, which the TAP driver reports as an error. */
int main(void)
{
    enum { INPUTS = 3000 };
    uint64_t x = 0x9E3779B97F4A7C15ull;
    uint8_t buf[192];

    printf("1..1\n");
    fflush(stdout);
    LLVMFuzzerInitialize(NULL, NULL);
    for (int i = 0; i < INPUTS; i++) {
        size_t len;
        for (size_t j = 0; j < sizeof buf; j++) {
            x ^= x << 13; /* xorshift64 */
            x ^= x >> 7;
            x ^= x << 17;
            buf[j] = (uint8_t)(x >> 24);
        }
        len = (size_t)(x % sizeof buf);
        LLVMFuzzerTestOneInput(buf, len);
    }
    printf("ok 1 - %d pseudo-random inputs through the fuzz harness: every promise held\n", INPUTS);
    return 0;
}
#endif
