/*
 * clmem-info: what this machine can share between Vulkan and OpenCL.
 *
 * Lists the OpenCL platforms and devices with the properties that decide
 * memory sharing, and (when built with libclmem-bridge) the Vulkan physical
 * devices, how they pair with OpenCL devices, and for every (Vulkan device,
 * OpenCL device) pair what a clmem_bridge made of the two answers: which
 * paths and semaphore modes are supported. A supported path is not taken
 * on trust: it is run live (Vulkan fills a buffer, OpenCL transforms it in
 * place, Vulkan reads it back and every word is checked). On each
 * supported path every image format the bridge shares is checked live too:
 * a small linear image written by Vulkan, each plane read back by OpenCL
 * through its row pitch (and through an image2d view where the device makes
 * them), and optimal tiling by the bridge's own live check. CLMEM_VK_DEVICE
 * (an index, a deviceUUID or a name: tools/vkctx.h) limits the checks to
 * the one Vulkan device it names.
 *
 * Everything is gathered first and printed at the end, as text or (--json)
 * as JSON, so both outputs come from the same records.
 *
 * Exit status: 0 when every live check passed (an unsupported path is not a
 * failure), 1 when one failed, a Vulkan device could not be opened or
 * CLMEM_VK_DEVICE names none, 2 on a usage error.
 */
#include "config.h"

#include <clmem.h>
#include <CL/cl_ext.h>
#ifdef CLMEM_INFO_WITH_VULKAN
#include <clmem-bridge.h>
#include "vkctx.h"
#endif

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PLATFORMS 16
#define MAX_CL_DEVICES 64
#define MAX_VK_DEVICES 16 /* tools/vkctx.c looks at no more than 16 */
#define MAX_HANDLE_TYPES 32
#define TEXT 1152         /* clmem_error_message() is at most 1023 bytes (lib/error.c), plus our prefix */
#define DEFAULT_SIZE (1u << 20)
#define IMAGE_WIDTH 34u /* the live image checks: even, for the 4:2:0 formats */
#define IMAGE_HEIGHT 8u

/* The pattern Vulkan writes and what the kernel must turn it into. */
#define FILL_VALUE 0x01020304u
#define EXPECTED_VALUE (FILL_VALUE * 3u + 1u)

/* ------------------------------------------------------------- records */

/* The answer to a handle-type list query. Those queries fail outright
 * (CL_INVALID_VALUE) on devices without the extension, which is not the
 * same as an empty list. */
struct handle_types {
    bool available;
    cl_uint n;
    cl_uint type[MAX_HANDLE_TYPES];
};

struct cl_dev {
    cl_device_id id;
    int platform; /* index into report.platforms */
    int index;    /* index within its platform */
    char name[256];
    cl_device_type type;
    bool has_uuid;
    unsigned char uuid[16];
    struct handle_types memory_types, semaphore_types;
    cl_bool host_unified;
    cl_uint align_bits;
    char extensions[2048]; /* only the sharing-related ones, space-separated */
};

struct cl_plat {
    char name[256];
    char version[256];
    int first_device, n_devices; /* into report.cl */
};

/* Plain types, not Vulkan's, so that the printers build without Vulkan. */
struct vk_dev {
    int index;          /* Vulkan's, in vkEnumeratePhysicalDevices order */
    bool opened;        /* vkctx_open worked; otherwise reason says why */
    char name[256];
    const char *type;
    unsigned char uuid[16];
    char api_version[32];
    bool has_memory_fd, has_dma_buf, has_semaphore_fd;
    int paired;         /* index into report.cl, or -1 */
    const char *pair_status;
    char reason[TEXT];  /* why it did not pair, or why it could not be opened */
};

enum row_status { ROW_OK, ROW_FAILED, ROW_UNSUPPORTED };

/* A semaphore mode as the pair's bridge answered it (not run live). */
struct sem_rec {
    const char *mode;
    enum row_status status; /* ROW_OK: supported */
    char reason[TEXT];
};

/* The bridge of one (Vulkan device, OpenCL device) pair. */
struct bridge_rec {
    int vk, cl;                 /* into report.vk, report.cl */
    bool created;               /* clmem_bridge_create worked */
    char error[TEXT];           /* why it was not, or why clmem_bridge_finish failed; "" otherwise */
    enum row_status error_status;
    uint32_t caps;              /* clmem_bridge_caps */
    int n_sem;
    struct sem_rec sem[2];      /* opaque-fd, sync-fd */
};

/* One (Vulkan device, OpenCL device, path) check. */
struct row {
    int bridge; /* into report.bridges */
    int vk, cl; /* into report.vk, report.cl */
    const char *path;
    enum row_status status;
    char reason[TEXT];
    int zero_copy;              /* 1, 0, or -1 when not known (unsupported) */
    long import_us, handoff_us; /* -1 when not measured */
};

/* One (pair, path, image format) check, each way of sharing run live on a
 * small image: [IMG_PLANES] each plane as a buffer read through its row
 * pitch, [IMG_VIEW] each plane as an image2d view, [IMG_OPTIMAL] an
 * optimal-tiling image (the bridge's own live check). */
enum { IMG_PLANES, IMG_VIEW, IMG_OPTIMAL, IMG_WAYS };
struct image_rec {
    int bridge;
    const char *path;
    const char *format;
    enum row_status status[IMG_WAYS];
    char reason[IMG_WAYS][TEXT];
};

struct report {
    size_t size; /* bytes per live round trip */
    char cl_error[TEXT];
    int n_platforms, n_cl;
    struct cl_plat platforms[MAX_PLATFORMS];
    struct cl_dev cl[MAX_CL_DEVICES];
    bool vulkan_built;
    char vk_error[TEXT]; /* why no Vulkan device is listed; "" when some are */
    char vk_selector[TEXT / 2]; /* CLMEM_VK_DEVICE when it chose the one device checked; "" when unset */
    bool vk_select_failed;      /* it named no device (vk_error says so) */
    int vk_total;               /* physical devices there are, when vk_selector is set */
    int n_vk;
    struct vk_dev vk[MAX_VK_DEVICES];
    int n_bridges, bridges_allocated;
    struct bridge_rec *bridges;
    int n_rows, rows_allocated;
    struct row *rows;
    int n_images, images_allocated;
    struct image_rec *images;
    int failures; /* failed rows, semaphore checks and finishes; Vulkan devices that could not be
                     opened or that CLMEM_VK_DEVICE asked for and does not exist */
};

/* --------------------------------------------------------- small helpers */

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fputs("clmem-info: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

/* Is `word` a whole space-separated word of `list`? */
static bool has_word(const char *list, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += len)
        if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return true;
    return false;
}

static void format_uuid(const unsigned char u[16], char out[37])
{
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* Names from cl_ext.h; a type this table does not know prints as hex. */
static const char *memory_type_name(cl_uint t)
{
    switch (t) {
    case CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR: return "opaque-fd";
    case CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_WIN32_KHR: return "opaque-win32";
    case CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_WIN32_KMT_KHR: return "opaque-win32-kmt";
    case CL_EXTERNAL_MEMORY_HANDLE_D3D11_TEXTURE_KHR: return "d3d11-texture";
    case CL_EXTERNAL_MEMORY_HANDLE_D3D11_TEXTURE_KMT_KHR: return "d3d11-texture-kmt";
    case CL_EXTERNAL_MEMORY_HANDLE_D3D12_HEAP_KHR: return "d3d12-heap";
    case CL_EXTERNAL_MEMORY_HANDLE_D3D12_RESOURCE_KHR: return "d3d12-resource";
    case CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR: return "dma-buf";
    }
    return NULL;
}

static const char *semaphore_type_name(cl_uint t)
{
    switch (t) {
    case CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR: return "opaque-fd";
    case CL_SEMAPHORE_HANDLE_OPAQUE_WIN32_KHR: return "opaque-win32";
    case CL_SEMAPHORE_HANDLE_OPAQUE_WIN32_KMT_KHR: return "opaque-win32-kmt";
    case CL_SEMAPHORE_HANDLE_SYNC_FD_KHR: return "sync-fd";
    case CL_SEMAPHORE_HANDLE_D3D12_FENCE_KHR: return "d3d12-fence";
    }
    return NULL;
}

/* The name of handle type i of ht, or its value in hex. */
static const char *handle_type_name(const struct handle_types *ht, cl_uint i, bool memory, char buf[16])
{
    const char *name = memory ? memory_type_name(ht->type[i]) : semaphore_type_name(ht->type[i]);
    if (name)
        return name;
    snprintf(buf, 16, "0x%x", (unsigned)ht->type[i]);
    return buf;
}

static const char *cl_type_name(cl_device_type t, char buf[64])
{
    buf[0] = '\0';
    if (t & CL_DEVICE_TYPE_CPU)
        strcat(buf, "|CPU");
    if (t & CL_DEVICE_TYPE_GPU)
        strcat(buf, "|GPU");
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        strcat(buf, "|accelerator");
    if (t & CL_DEVICE_TYPE_CUSTOM)
        strcat(buf, "|custom");
    if (t & CL_DEVICE_TYPE_DEFAULT)
        strcat(buf, "|default");
    return buf[0] ? buf + 1 : "unknown";
}

/* ------------------------------------------------------ OpenCL listing */

/* CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR and the semaphore
 * query answer with BYTES, not a count: the count is size / sizeof(type). */
static void query_handle_types(cl_device_id dev, cl_device_info param, struct handle_types *ht)
{
    size_t bytes = 0;
    cl_uint *all;

    memset(ht, 0, sizeof *ht);
    if (clGetDeviceInfo(dev, param, 0, NULL, &bytes) != CL_SUCCESS)
        return;
    ht->available = true;
    if (bytes < sizeof(cl_uint))
        return;
    all = xrealloc(NULL, bytes);
    if (clGetDeviceInfo(dev, param, bytes, all, NULL) == CL_SUCCESS) {
        ht->n = (cl_uint)(bytes / sizeof(cl_uint));
        if (ht->n > MAX_HANDLE_TYPES)
            ht->n = MAX_HANDLE_TYPES;
        memcpy(ht->type, all, ht->n * sizeof(cl_uint));
    } else {
        ht->available = false;
    }
    free(all);
}

/* Keep the extensions that matter for sharing memory. */
static void filter_extensions(const char *all, char *out, size_t out_size)
{
    const char *p = all;
    size_t used = 0;

    out[0] = '\0';
    while (*p) {
        size_t len = strcspn(p, " ");
        char word[256];
        if (len > 0 && len < sizeof word) {
            memcpy(word, p, len);
            word[len] = '\0';
            if ((strstr(word, "external") || strstr(word, "semaphore") || strstr(word, "uuid")) &&
                used + len + 2 <= out_size) {
                used += (size_t)snprintf(out + used, out_size - used, "%s%s", used ? " " : "", word);
            }
        }
        p += len;
        p += strspn(p, " ");
    }
}

static void describe_cl_device(cl_device_id id, struct cl_dev *d)
{
    size_t size = 0;
    char *all = NULL;

    d->id = id;
    clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof d->name, d->name, NULL);
    d->name[sizeof d->name - 1] = '\0';
    clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof d->type, &d->type, NULL);
    if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, NULL, &size) == CL_SUCCESS && size > 0) {
        all = xrealloc(NULL, size + 1);
        if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, size, all, NULL) != CL_SUCCESS)
            size = 0;
        all[size] = '\0';
    }
    filter_extensions(all ? all : "", d->extensions, sizeof d->extensions);
    /* CL_DEVICE_UUID_KHR exists only with the extension; asking without it
     * may return garbage rather than an error on some drivers. */
    d->has_uuid = all && has_word(all, "cl_khr_device_uuid") &&
                  clGetDeviceInfo(id, CL_DEVICE_UUID_KHR, sizeof d->uuid, d->uuid, NULL) == CL_SUCCESS;
    free(all);
    query_handle_types(id, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, &d->memory_types);
    query_handle_types(id, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR, &d->semaphore_types);
    /* Deprecated since OpenCL 2.0 but still answered; it says whether the
     * host-mapped path can be zero-copy on a GPU. */
    clGetDeviceInfo(id, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof d->host_unified, &d->host_unified, NULL);
    clGetDeviceInfo(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof d->align_bits, &d->align_bits, NULL);
}

static void list_platform_devices(struct report *r, cl_platform_id platform, int p)
{
    cl_device_id ids[MAX_CL_DEVICES];
    cl_uint n = 0;
    cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, MAX_CL_DEVICES, ids, &n);

    r->platforms[p].first_device = r->n_cl;
    if (err != CL_SUCCESS) /* CL_DEVICE_NOT_FOUND: a platform with no devices */
        n = 0;
    if (n > MAX_CL_DEVICES)
        n = MAX_CL_DEVICES;
    for (cl_uint i = 0; i < n && r->n_cl < MAX_CL_DEVICES; i++) {
        struct cl_dev *d = &r->cl[r->n_cl++];
        d->platform = p;
        d->index = (int)i;
        describe_cl_device(ids[i], d);
        r->platforms[p].n_devices++;
    }
}

static void list_opencl(struct report *r)
{
    cl_platform_id ids[MAX_PLATFORMS];
    cl_uint n = 0;
    cl_int err = clGetPlatformIDs(MAX_PLATFORMS, ids, &n);

    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && n == 0)) {
        snprintf(r->cl_error, sizeof r->cl_error, "no OpenCL platform (no ICD installed?)");
        return;
    }
    if (err != CL_SUCCESS) {
        snprintf(r->cl_error, sizeof r->cl_error, "clGetPlatformIDs failed with OpenCL code %d", (int)err);
        return;
    }
    if (n > MAX_PLATFORMS)
        n = MAX_PLATFORMS;
    for (cl_uint p = 0; p < n; p++) {
        struct cl_plat *pl = &r->platforms[r->n_platforms++];
        clGetPlatformInfo(ids[p], CL_PLATFORM_NAME, sizeof pl->name, pl->name, NULL);
        clGetPlatformInfo(ids[p], CL_PLATFORM_VERSION, sizeof pl->version, pl->version, NULL);
        pl->name[sizeof pl->name - 1] = pl->version[sizeof pl->version - 1] = '\0';
        list_platform_devices(r, ids[p], (int)p);
    }
}

#ifdef CLMEM_INFO_WITH_VULKAN
/* ------------------------------------------------------ Vulkan listing */

#define FINISH_TIMEOUT_NS UINT64_C(10000000000) /* 10 s for clmem_bridge_finish */

/* clmem_status_name() without its prefix: "OK", "DEVICE_MISMATCH". */
static const char *status_name(clmem_status s)
{
    const char *name = clmem_status_name(s);
    if (strncmp(name, "CLMEM_ERR_", 10) == 0)
        return name + 10;
    if (strncmp(name, "CLMEM_STATUS_", 13) == 0)
        return name + 13;
    if (strncmp(name, "CLMEM_", 6) == 0)
        return name + 6;
    return name;
}

static const char *vk_type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
    }
}

static void describe_vk_device(const struct vkctx *ctx, struct vk_dev *v)
{
    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
    uint32_t api;

    vkGetPhysicalDeviceProperties2(ctx->physical_device, &props);
    api = props.properties.apiVersion;
    v->opened = true;
    snprintf(v->name, sizeof v->name, "%s", props.properties.deviceName);
    v->type = vk_type_name(props.properties.deviceType);
    memcpy(v->uuid, id.deviceUUID, sizeof v->uuid);
    snprintf(v->api_version, sizeof v->api_version, "%u.%u.%u", VK_API_VERSION_MAJOR(api),
             VK_API_VERSION_MINOR(api), VK_API_VERSION_PATCH(api));
    /* vkctx enables each of these exactly when the device offers it
     * (dma-buf builds on memory_fd, so it is enabled only with it). */
    v->has_memory_fd = ctx->has_memory_fd;
    v->has_dma_buf = ctx->has_dma_buf;
    v->has_semaphore_fd = ctx->has_semaphore_fd;
}

static int find_cl_device(const struct report *r, cl_device_id id)
{
    for (int i = 0; i < r->n_cl; i++)
        if (r->cl[i].id == id)
            return i;
    return -1;
}

static void pair_vk_device(const struct report *r, const struct vkctx *ctx, struct vk_dev *v)
{
    cl_device_id dev = NULL;
    clmem_status s =
        clmem_bridge_pair(ctx->instance, ctx->get_instance_proc_addr, ctx->physical_device, NULL, &dev);

    v->pair_status = status_name(s);
    v->paired = s == CLMEM_OK ? find_cl_device(r, dev) : -1;
    if (s != CLMEM_OK)
        snprintf(v->reason, sizeof v->reason, "%s", clmem_error_message());
    else if (v->paired < 0)
        snprintf(v->reason, sizeof v->reason, "paired with an OpenCL device beyond the first %d listed",
                 MAX_CL_DEVICES);
}

/* ---------------------------------------------------- live round trip */

static const char kernel_source[] = "__kernel void transform(__global uint *x)\n"
                                    "{\n"
                                    "    size_t i = get_global_id(0);\n"
                                    "    x[i] = x[i] * 3u + 1u;\n"
                                    "}\n";

/* One fresh OpenCL context and queue for an OpenCL device, which the
 * device's bridge is made with, and the kernel, built on the first
 * supported path and shared by that device's paths. */
struct cl_env {
    char error[TEXT / 2]; /* why it could not be made; "" when it was */
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    bool built;           /* cl_env_build was tried */
    cl_program program;
    cl_kernel kernel;
};

static void build_failed(struct cl_env *env, cl_int err)
{
    char log[256] = "";
    clGetProgramBuildInfo(env->program, env->device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    log[sizeof log - 1] = '\0';
    snprintf(env->error, sizeof env->error, "clBuildProgram failed with OpenCL code %d: %s", (int)err, log);
}

/* Run the kernel once on a scratch buffer of the trip's size: drivers
 * (PoCL for one) compile a kernel for its launch size at the first
 * enqueue, and that compile is no part of the handoff being timed. */
static cl_int warm_up(struct cl_env *env, size_t size)
{
    size_t words = size / sizeof(cl_uint);
    cl_int err;
    cl_mem scratch = clCreateBuffer(env->context, CL_MEM_READ_WRITE, size, NULL, &err);

    if (err != CL_SUCCESS)
        return err;
    err = clSetKernelArg(env->kernel, 0, sizeof scratch, &scratch);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(env->queue, env->kernel, 1, NULL, &words, NULL, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(env->queue);
    clReleaseMemObject(scratch);
    return err;
}

/* The context and queue. */
static bool cl_env_open(struct cl_env *env, cl_device_id dev)
{
    cl_platform_id platform = NULL;
    cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, 0, 0};
    const char *call = "clGetDeviceInfo(CL_DEVICE_PLATFORM)";
    cl_int err;

    memset(env, 0, sizeof *env);
    env->device = dev;
    err = clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    if (err == CL_SUCCESS) {
        props[1] = (cl_context_properties)platform;
        call = "clCreateContext";
        env->context = clCreateContext(props, 1, &dev, NULL, NULL, &err);
    }
    if (err == CL_SUCCESS) {
        call = "clCreateCommandQueueWithProperties";
        env->queue = clCreateCommandQueueWithProperties(env->context, dev, NULL, &err);
    }
    if (err != CL_SUCCESS)
        snprintf(env->error, sizeof env->error, "%s failed with OpenCL code %d", call, (int)err);
    return err == CL_SUCCESS;
}

/* The kernel, built and warmed up once; false (with env->error) when it
 * cannot be. */
static bool cl_env_build(struct cl_env *env, size_t size)
{
    const char *src = kernel_source;
    const char *call = "clCreateProgramWithSource";
    cl_int err;

    if (env->built)
        return env->error[0] == '\0';
    env->built = true;
    env->program = clCreateProgramWithSource(env->context, 1, &src, NULL, &err);
    if (err == CL_SUCCESS && (err = clBuildProgram(env->program, 1, &env->device, "", NULL, NULL)) != CL_SUCCESS) {
        build_failed(env, err);
        return false;
    }
    if (err == CL_SUCCESS) {
        call = "clCreateKernel";
        env->kernel = clCreateKernel(env->program, "transform", &err);
    }
    if (err == CL_SUCCESS) {
        call = "the warm-up run of the kernel";
        err = warm_up(env, size);
    }
    if (err != CL_SUCCESS)
        snprintf(env->error, sizeof env->error, "%s failed with OpenCL code %d", call, (int)err);
    return err == CL_SUCCESS;
}

static void cl_env_close(struct cl_env *env)
{
    if (env->kernel)
        clReleaseKernel(env->kernel);
    if (env->program)
        clReleaseProgram(env->program);
    if (env->queue)
        clReleaseCommandQueue(env->queue);
    if (env->context)
        clReleaseContext(env->context);
    memset(env, 0, sizeof *env);
}

/* What our anchor for the Vulkan memory tells: set by its release, maybe
 * on a driver thread. On the heap, and leaked when the release did not
 * come, so that a late release never writes into a dead stack frame. */
struct anchor_state {
    atomic_bool released;
};

/* The state of one round trip, so that teardown can undo any prefix. */
struct trip {
    struct vkctx *ctx;
    struct cl_env *env;
    clmem_bridge *bridge;
    clmem_bridge_path path;
    VkDeviceSize size;
    VkBuffer buffer, staging;
    clmem_bridge_vk_memory memory, staging_memory;
    clmem_handle *handle;
    struct anchor_state *anchor; /* the import was given our anchor for the memory */
};

static void on_vk_released(void *user)
{
    atomic_store(&((struct anchor_state *)user)->released, true);
}

static long elapsed_us(const struct timespec *a, const struct timespec *b)
{
    return (long)((b->tv_sec - a->tv_sec) * 1000000L + (b->tv_nsec - a->tv_nsec) / 1000L);
}

/* Record a failure of a clmem call; read the message before anything else
 * can overwrite this thread's record. */
static bool failed_clmem(struct row *row, const char *what)
{
    snprintf(row->reason, sizeof row->reason, "%s: %s", what, clmem_error_message());
    return false;
}

static bool failed_native(struct row *row, const char *what, const char *api, int code)
{
    snprintf(row->reason, sizeof row->reason, "%s failed with %s code %d", what, api, code);
    return false;
}

/* The shared buffer (what the path needs) and a host-visible staging buffer
 * for reading it back through Vulkan. */
static bool make_buffers(struct trip *t, struct row *row)
{
    VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryPropertyFlags props = host;
    VkExternalMemoryHandleTypeFlags export_types = 0;

    if (t->path == CLMEM_BRIDGE_PATH_OPAQUE_FD || t->path == CLMEM_BRIDGE_PATH_DMA_BUF) {
        props = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        export_types = t->path == CLMEM_BRIDGE_PATH_DMA_BUF ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT
                                                            : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    }
    if (clmem_bridge_vk_buffer_create(t->bridge, t->size,
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                      props, export_types, &t->buffer, &t->memory) != CLMEM_OK)
        return failed_clmem(row, "clmem_bridge_vk_buffer_create (shared buffer)");
    if (clmem_bridge_vk_buffer_create(t->bridge, t->size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, host, 0, &t->staging,
                                      &t->staging_memory) != CLMEM_OK)
        return failed_clmem(row, "clmem_bridge_vk_buffer_create (staging buffer)");
    return true;
}

/* Vulkan writes the pattern, then OpenCL imports the buffer (timed). */
static bool fill_and_import(struct trip *t, struct row *row)
{
    struct timespec a, b;
    clmem_keepalive *ka;
    clmem_status s;
    VkResult vr = vkctx_fill(t->ctx, t->buffer, 0, t->size, FILL_VALUE);

    if (vr != VK_SUCCESS)
        return failed_native(row, "vkctx_fill", "Vulkan", vr);
    /* Our anchor for the Vulkan memory: the bridge takes its own reference
     * and we drop ours at once, so the callback tells us when the bridge
     * is done with the memory. */
    t->anchor = xrealloc(NULL, sizeof *t->anchor);
    atomic_init(&t->anchor->released, false);
    ka = clmem_keepalive_new(on_vk_released, t->anchor);
    if (!ka) {
        free(t->anchor);
        t->anchor = NULL;
        return failed_clmem(row, "clmem_keepalive_new");
    }
    clock_gettime(CLOCK_MONOTONIC, &a);
    s = clmem_bridge_import_vk(t->bridge, &t->memory, 0, t->size, t->path, ka, t->env->queue, CL_MEM_READ_WRITE,
                               &t->handle);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (s != CLMEM_OK)
        failed_clmem(row, "clmem_bridge_import_vk");
    clmem_keepalive_unref(ka);
    if (s != CLMEM_OK)
        return false;
    row->import_us = elapsed_us(&a, &b);
    return true;
}

/* OpenCL takes the memory, runs x = x*3+1 over it and hands it back
 * (timed from acquire to the end of clFinish). */
static bool transform(struct trip *t, struct row *row)
{
    struct timespec a, b;
    cl_mem mem = clmem_handle_mem(t->handle);
    size_t words = (size_t)t->size / sizeof(cl_uint);
    cl_int err;

    clock_gettime(CLOCK_MONOTONIC, &a);
    if (clmem_bridge_acquire(t->bridge, t->handle, 0, NULL, NULL) != CLMEM_OK)
        return failed_clmem(row, "clmem_bridge_acquire");
    if ((err = clSetKernelArg(t->env->kernel, 0, sizeof mem, &mem)) != CL_SUCCESS)
        return failed_native(row, "clSetKernelArg", "OpenCL", err);
    err = clEnqueueNDRangeKernel(t->env->queue, t->env->kernel, 1, NULL, &words, NULL, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return failed_native(row, "clEnqueueNDRangeKernel", "OpenCL", err);
    if (clmem_bridge_release(t->bridge, t->handle, 0, NULL, NULL) != CLMEM_OK)
        return failed_clmem(row, "clmem_bridge_release");
    if ((err = clFinish(t->env->queue)) != CL_SUCCESS)
        return failed_native(row, "clFinish", "OpenCL", err);
    clock_gettime(CLOCK_MONOTONIC, &b);
    row->handoff_us = elapsed_us(&a, &b);
    return true;
}

/* Vulkan copies the buffer to the staging buffer; every word must be the
 * transformed pattern. */
static bool read_back(struct trip *t, struct row *row)
{
    void *p = NULL;
    const uint32_t *w;
    size_t words = (size_t)t->size / sizeof(uint32_t), i;
    VkResult vr = vkctx_copy(t->ctx, t->buffer, t->staging, t->size);

    if (vr != VK_SUCCESS)
        return failed_native(row, "vkctx_copy", "Vulkan", vr);
    vr = vkMapMemory(t->ctx->device, t->staging_memory.memory, 0, VK_WHOLE_SIZE, 0, &p);
    if (vr != VK_SUCCESS)
        return failed_native(row, "vkMapMemory (staging)", "Vulkan", vr);
    w = p;
    for (i = 0; i < words && w[i] == EXPECTED_VALUE; i++)
        ;
    if (i < words)
        snprintf(row->reason, sizeof row->reason, "word %zu of %zu is 0x%08x, expected 0x%08x (filled 0x%08x)", i,
                 words, (unsigned)w[i], EXPECTED_VALUE, FILL_VALUE);
    vkUnmapMemory(t->ctx->device, t->staging_memory.memory);
    return i == words;
}

/* Drop the handle, then free the Vulkan memory, but only once the bridge
 * has let go of it: freeing memory OpenCL may still use is the bug this
 * check exists to catch, so then the memory is leaked instead. The bridge
 * lets go after the last handle, once the device work it waits for is done
 * (a driver callback, or clmem_bridge_finish doing it itself): finish is
 * what makes that happen now. */
static void trip_teardown(struct trip *t, struct row *row)
{
    bool ok = row->reason[0] == '\0';

    clmem_handle_unref(t->handle);
    t->handle = NULL;
    if (t->staging)
        clmem_bridge_vk_buffer_destroy(t->bridge, t->staging, &t->staging_memory);
    if (!t->buffer)
        return;
    if (t->anchor && !atomic_load(&t->anchor->released)) {
        clmem_status s = clmem_bridge_finish(t->bridge, FINISH_TIMEOUT_NS);
        if (s != CLMEM_OK) {
            if (ok)
                snprintf(row->reason, sizeof row->reason,
                         "clmem_bridge_finish after the last clmem_handle_unref: %s (memory leaked, not freed)",
                         clmem_error_message());
            return; /* t->anchor leaked on purpose: its release may still come */
        }
        if (!atomic_load(&t->anchor->released)) {
            if (ok)
                snprintf(row->reason, sizeof row->reason,
                         "Vulkan anchor not released: clmem_bridge_finish returned CLMEM_OK, but the import "
                         "still held the Vulkan memory (memory leaked, not freed)");
            return;
        }
    }
    free(t->anchor);
    t->anchor = NULL;
    clmem_bridge_vk_buffer_destroy(t->bridge, t->buffer, &t->memory);
}

static void round_trip(struct vkctx *ctx, struct cl_env *env, clmem_bridge *bridge, clmem_bridge_path path,
                       size_t size, struct row *row)
{
    struct trip t = {.ctx = ctx, .env = env, .bridge = bridge, .path = path, .size = size};
    unsigned errors_before = vkctx_validation_errors();
    unsigned new_errors;

    if (make_buffers(&t, row) && fill_and_import(&t, row) && transform(&t, row))
        read_back(&t, row);
    trip_teardown(&t, row);
    new_errors = vkctx_validation_errors() - errors_before;
    if (row->reason[0] == '\0' && new_errors)
        snprintf(row->reason, sizeof row->reason,
                 "the Vulkan validation layer reported %u error(s) (the '# validation error' lines)", new_errors);
    row->status = row->reason[0] ? ROW_FAILED : ROW_OK;
}

/* ---------------------------------------------------------- the checks */

static struct row *add_row(struct report *r, int bridge, clmem_bridge_path path)
{
    struct row *row;
    if (r->n_rows == r->rows_allocated) {
        r->rows_allocated = r->rows_allocated ? 2 * r->rows_allocated : 16;
        r->rows = xrealloc(r->rows, (size_t)r->rows_allocated * sizeof *r->rows);
    }
    row = &r->rows[r->n_rows++];
    memset(row, 0, sizeof *row);
    row->bridge = bridge;
    row->vk = r->bridges[bridge].vk;
    row->cl = r->bridges[bridge].cl;
    row->path = clmem_bridge_path_name(path);
    row->zero_copy = -1;
    row->import_us = row->handoff_us = -1;
    return row;
}

static int add_bridge(struct report *r, int vk, int cl)
{
    struct bridge_rec *br;
    if (r->n_bridges == r->bridges_allocated) {
        r->bridges_allocated = r->bridges_allocated ? 2 * r->bridges_allocated : 8;
        r->bridges = xrealloc(r->bridges, (size_t)r->bridges_allocated * sizeof *r->bridges);
    }
    br = &r->bridges[r->n_bridges];
    memset(br, 0, sizeof *br);
    br->vk = vk;
    br->cl = cl;
    return r->n_bridges++;
}

/* A missing feature or another device is "unsupported"; any other status
 * means the check itself broke. */
static enum row_status check_status(clmem_status s)
{
    return s == CLMEM_OK ? ROW_OK
           : s == CLMEM_ERR_UNSUPPORTED || s == CLMEM_ERR_DEVICE_MISMATCH ? ROW_UNSUPPORTED
                                                                         : ROW_FAILED;
}

/* What the bridge worked out at creation about the semaphore modes that
 * need an OpenCL extension (host ordering always works). Not run live. */
static void check_semaphores(struct report *r, struct bridge_rec *br, const clmem_bridge *b)
{
    static const clmem_bridge_semaphore_mode modes[] = {CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD,
                                                        CLMEM_BRIDGE_SEMAPHORE_SYNC_FD};
    static const char *const names[] = {"opaque-fd", "sync-fd"};

    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        struct sem_rec *sr = &br->sem[i];
        clmem_status s = clmem_bridge_check_semaphore(b, modes[i]);
        sr->mode = names[i];
        sr->status = check_status(s);
        if (s != CLMEM_OK)
            snprintf(sr->reason, sizeof sr->reason, "%s", clmem_error_message());
        r->failures += sr->status == ROW_FAILED;
    }
    br->n_sem = (int)(sizeof modes / sizeof modes[0]);
}

/* ------------------------------------------------- images, checked live */

/* Byte k of texel (x, y) of plane p: below 0x70, so that no half or float
 * component is a NaN or infinity. */
static unsigned char image_byte(uint32_t x, uint32_t y, unsigned p, unsigned k)
{
    return (unsigned char)((x * 7u + y * 13u + p * 5u + k * 3u) % 0x70u);
}

static void on_image_released(void *user)
{
    atomic_store(&((struct anchor_state *)user)->released, true);
}

/* Every byte of plane p (tight, w x h texels of tb bytes) is the pattern. */
static bool image_bytes_match(const unsigned char *got, unsigned p, uint32_t w, uint32_t h, uint32_t tb,
                              char *why, size_t len)
{
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (uint32_t k = 0; k < tb; k++)
                if (got[((size_t)y * w + x) * tb + k] != image_byte(x, y, p, k)) {
                    snprintf(why, len, "plane %u texel (%u, %u) byte %u is 0x%02x, want 0x%02x", p, x, y, k,
                             got[((size_t)y * w + x) * tb + k], image_byte(x, y, p, k));
                    return false;
                }
    return true;
}

/* Vulkan writes the pattern into every plane of a linear image; then each
 * plane is imported (as a buffer, or with AS_IMAGE as a view) and OpenCL
 * reads it back: clEnqueueReadBufferRect through the handle's row pitch, or
 * clEnqueueReadImage. ROW_UNSUPPORTED where a step says the machine cannot
 * (Vulkan makes no such image, the import refuses it as unsupported);
 * `why` says what. */
static enum row_status image_live(struct vkctx *ctx, struct cl_env *env, clmem_bridge *bridge,
                                  clmem_bridge_path path, VkFormat format, bool as_image, char *why, size_t len)
{
    bool fd = path != CLMEM_BRIDGE_PATH_HOST_MAPPED;
    clmem_bridge_vk_image img;
    clmem_handle *h[CLMEM_BRIDGE_IMAGE_MAX_PLANES] = {NULL, NULL, NULL};
    struct anchor_state *anchor;
    clmem_keepalive *ka;
    enum row_status st = ROW_OK;
    clmem_status s;

    s = clmem_bridge_vk_image_create(
        bridge, format, (VkExtent2D){IMAGE_WIDTH, IMAGE_HEIGHT}, VK_IMAGE_TILING_LINEAR,
        VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
        fd ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        fd ? (path == CLMEM_BRIDGE_PATH_DMA_BUF ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT
                                                : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT)
           : 0,
        &img);
    if (s != CLMEM_OK) {
        snprintf(why, len, "clmem_bridge_vk_image_create: %s", clmem_error_message());
        return check_status(s);
    }
    anchor = xrealloc(NULL, sizeof *anchor);
    atomic_init(&anchor->released, false);
    if (!(ka = clmem_keepalive_new(on_image_released, anchor))) {
        snprintf(why, len, "clmem_keepalive_new failed");
        free(anchor);
        clmem_bridge_vk_image_destroy(bridge, &img);
        return ROW_FAILED;
    }
    for (unsigned p = 0; p < img.plane_count && st == ROW_OK; p++) {
        uint32_t tb = 0, w = img.planes[p].width, hgt = img.planes[p].height;
        size_t bytes;
        VkBuffer staging = VK_NULL_HANDLE;
        clmem_bridge_vk_memory smem;
        unsigned char *data = NULL;
        VkResult vr;

        clmem_bridge_image_plane_format(format, p, NULL, &tb);
        bytes = (size_t)w * hgt * tb;
        if (clmem_bridge_vk_buffer_create(bridge, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                          &staging, &smem) != CLMEM_OK) {
            snprintf(why, len, "clmem_bridge_vk_buffer_create (staging): %s", clmem_error_message());
            st = ROW_FAILED;
        } else if ((vr = vkMapMemory(ctx->device, smem.memory, 0, VK_WHOLE_SIZE, 0, (void **)&data)) != VK_SUCCESS) {
            snprintf(why, len, "vkMapMemory (staging) failed with Vulkan code %d", vr);
            st = ROW_FAILED;
        } else {
            for (uint32_t y = 0; y < hgt; y++)
                for (uint32_t x = 0; x < w; x++)
                    for (uint32_t k = 0; k < tb; k++)
                        data[((size_t)y * w + x) * tb + k] = image_byte(x, y, p, k);
            vkUnmapMemory(ctx->device, smem.memory);
            vr = vkctx_copy_buffer_to_image(ctx, staging, 0, 0, img.image,
                                            img.plane_count == 1 ? VK_IMAGE_ASPECT_COLOR_BIT
                                            : p == 0             ? VK_IMAGE_ASPECT_PLANE_0_BIT
                                                                 : VK_IMAGE_ASPECT_PLANE_1_BIT,
                                            w, hgt, p == 0 ? VK_IMAGE_LAYOUT_UNDEFINED : VK_IMAGE_LAYOUT_GENERAL);
            if (vr != VK_SUCCESS) {
                snprintf(why, len, "vkCmdCopyBufferToImage (plane %u) failed with Vulkan code %d", p, vr);
                st = ROW_FAILED;
            }
        }
        if (staging)
            clmem_bridge_vk_buffer_destroy(bridge, staging, &smem);
    }
    for (unsigned p = 0; p < img.plane_count && st == ROW_OK; p++) {
        uint32_t tb = 0, w = img.planes[p].width, hgt = img.planes[p].height;
        unsigned char *got;
        cl_int err;

        clmem_bridge_image_plane_format(format, p, NULL, &tb);
        s = clmem_bridge_import_vk_image(bridge, &img, p, path, ka, env->queue,
                                         as_image ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE,
                                         as_image ? CLMEM_BRIDGE_IMAGE_AS_IMAGE : 0, &h[p]);
        if (s != CLMEM_OK) {
            snprintf(why, len, "clmem_bridge_import_vk_image (plane %u): %s", p, clmem_error_message());
            st = check_status(s);
            break;
        }
        if (clmem_bridge_acquire(bridge, h[p], 0, NULL, NULL) != CLMEM_OK) {
            snprintf(why, len, "clmem_bridge_acquire (plane %u): %s", p, clmem_error_message());
            st = ROW_FAILED;
            break;
        }
        got = xrealloc(NULL, (size_t)w * hgt * tb);
        if (as_image) {
            size_t origin[3] = {0, 0, 0}, region[3] = {w, hgt, 1};
            err = clEnqueueReadImage(env->queue, clmem_handle_mem(h[p]), CL_TRUE, origin, region, 0, 0, got, 0,
                                     NULL, NULL);
        } else {
            size_t origin[3] = {0, 0, 0}, region[3] = {(size_t)w * tb, hgt, 1};
            err = clEnqueueReadBufferRect(env->queue, clmem_handle_mem(h[p]), CL_TRUE, origin, origin, region,
                                          clmem_handle_row_pitch(h[p]), 0, (size_t)w * tb, 0, got, 0, NULL, NULL);
        }
        if (err != CL_SUCCESS) {
            snprintf(why, len, "%s (plane %u) failed with OpenCL code %d",
                     as_image ? "clEnqueueReadImage" : "clEnqueueReadBufferRect", p, err);
            st = ROW_FAILED;
        } else if (!image_bytes_match(got, p, w, hgt, tb, why, len)) {
            st = ROW_FAILED;
        }
        free(got);
        if (clmem_bridge_release(bridge, h[p], 0, NULL, NULL) != CLMEM_OK && st == ROW_OK) {
            snprintf(why, len, "clmem_bridge_release (plane %u): %s", p, clmem_error_message());
            st = ROW_FAILED;
        }
    }
    clFinish(env->queue);
    for (unsigned p = 0; p < CLMEM_BRIDGE_IMAGE_MAX_PLANES; p++)
        clmem_handle_unref(h[p]);
    clmem_keepalive_unref(ka);
    /* As trip_teardown: free the image only once the bridge let go of it. */
    if (!atomic_load(&anchor->released) && clmem_bridge_finish(bridge, FINISH_TIMEOUT_NS) != CLMEM_OK) {
        if (st == ROW_OK)
            snprintf(why, len, "clmem_bridge_finish after the last plane handle: %s (image leaked, not freed)",
                     clmem_error_message());
        return ROW_FAILED; /* anchor leaked on purpose */
    }
    if (!atomic_load(&anchor->released)) {
        snprintf(why, len, "the import still held the image after clmem_bridge_finish (image leaked, not freed)");
        return ROW_FAILED;
    }
    free(anchor);
    clmem_bridge_vk_image_destroy(bridge, &img);
    return st;
}

static struct image_rec *add_image(struct report *r, int bridge, clmem_bridge_path path, VkFormat format)
{
    struct image_rec *ir;
    if (r->n_images == r->images_allocated) {
        r->images_allocated = r->images_allocated ? 2 * r->images_allocated : 16;
        r->images = xrealloc(r->images, (size_t)r->images_allocated * sizeof *r->images);
    }
    ir = &r->images[r->n_images++];
    memset(ir, 0, sizeof *ir);
    ir->bridge = bridge;
    ir->path = clmem_bridge_path_name(path);
    ir->format = clmem_bridge_image_format_name(format);
    return ir;
}

/* Every format the bridge shares, on one path the pair supports: plane
 * buffers and views run live here, optimal tiling by the bridge's live
 * check. */
static void check_images(struct report *r, struct vkctx *ctx, struct cl_env *env, clmem_bridge *bridge, int bi,
                         clmem_bridge_path path)
{
    uint32_t n = 0;
    const VkFormat *formats = clmem_bridge_image_formats(&n);
    unsigned errors_before = vkctx_validation_errors();

    for (uint32_t i = 0; i < n; i++) {
        struct image_rec *ir = add_image(r, bi, path, formats[i]);
        clmem_status s;

        ir->status[IMG_PLANES] = image_live(ctx, env, bridge, path, formats[i], false, ir->reason[IMG_PLANES], TEXT);
        s = clmem_bridge_check_image(bridge, formats[i], VK_IMAGE_TILING_LINEAR, path, CL_MEM_READ_ONLY,
                                     CLMEM_BRIDGE_IMAGE_AS_IMAGE);
        if (s != CLMEM_OK) {
            snprintf(ir->reason[IMG_VIEW], TEXT, "%s", clmem_error_message());
            ir->status[IMG_VIEW] = check_status(s);
        } else {
            ir->status[IMG_VIEW] = image_live(ctx, env, bridge, path, formats[i], true, ir->reason[IMG_VIEW], TEXT);
        }
        s = clmem_bridge_image_live_check(bridge, formats[i], path, ctx->queue, ctx->queue_family, env->queue);
        if (s != CLMEM_OK)
            snprintf(ir->reason[IMG_OPTIMAL], TEXT, "%s", clmem_error_message());
        ir->status[IMG_OPTIMAL] = check_status(s);
        for (int w = 0; w < IMG_WAYS; w++)
            r->failures += ir->status[w] == ROW_FAILED;
    }
    if (vkctx_validation_errors() != errors_before) {
        struct image_rec *ir = &r->images[r->n_images - 1];
        snprintf(ir->reason[IMG_PLANES], TEXT,
                 "the Vulkan validation layer reported %u error(s) in the image checks (the '# validation error' "
                 "lines)",
                 vkctx_validation_errors() - errors_before);
        if (ir->status[IMG_PLANES] != ROW_FAILED)
            r->failures++;
        ir->status[IMG_PLANES] = ROW_FAILED;
    }
}

static void check_pair(struct report *r, struct vkctx *ctx, int vk, int cl)
{
    static const clmem_bridge_path paths[] = {CLMEM_BRIDGE_PATH_OPAQUE_FD, CLMEM_BRIDGE_PATH_DMA_BUF,
                                              CLMEM_BRIDGE_PATH_HOST_MAPPED};
    const size_t npaths = sizeof paths / sizeof paths[0];
    int bi = add_bridge(r, vk, cl);
    struct cl_env env;
    clmem_bridge *bridge = NULL;
    clmem_status s = CLMEM_OK;
    enum row_status setup_status = ROW_OK;

    /* One bridge per (Vulkan device, OpenCL device): the pair's answers
     * (caps, check_path, check_semaphore) are worked out once, at its
     * creation, on a context of that OpenCL device alone. */
    if (!cl_env_open(&env, r->cl[cl].id)) {
        snprintf(r->bridges[bi].error, sizeof r->bridges[bi].error, "OpenCL set-up: %s", env.error);
        setup_status = ROW_FAILED;
    } else {
        clmem_bridge_info info = {.size = sizeof info,
                                  .instance = ctx->instance,
                                  .physical_device = ctx->physical_device,
                                  .device = ctx->device,
                                  .get_instance_proc_addr = ctx->get_instance_proc_addr,
                                  .context = env.context,
                                  .cl_device = env.device,
                                  .flags = 0};
        s = clmem_bridge_create(&info, &bridge);
        if (s != CLMEM_OK) {
            snprintf(r->bridges[bi].error, sizeof r->bridges[bi].error, "clmem_bridge_create: %s",
                     clmem_error_message());
            setup_status = check_status(s);
        }
    }
    if (setup_status != ROW_OK) {
        for (size_t i = 0; i < npaths; i++) {
            struct row *row = add_row(r, bi, paths[i]);
            snprintf(row->reason, sizeof row->reason, "%s", r->bridges[bi].error);
            row->status = setup_status;
        }
        r->bridges[bi].error_status = setup_status;
        cl_env_close(&env);
        return;
    }
    r->bridges[bi].created = true;
    r->bridges[bi].caps = clmem_bridge_caps(bridge);
    for (size_t i = 0; i < npaths; i++) {
        struct row *row = add_row(r, bi, paths[i]);

        s = clmem_bridge_check_path(bridge, paths[i]);
        if (s != CLMEM_OK) {
            snprintf(row->reason, sizeof row->reason, "%s", clmem_error_message());
            row->status = check_status(s);
            continue;
        }
        /* The fd paths import the memory itself: no copy by design. */
        row->zero_copy = paths[i] != CLMEM_BRIDGE_PATH_HOST_MAPPED ||
                         (r->bridges[bi].caps & CLMEM_BRIDGE_CAP_HOST_MAPPED_ZERO_COPY);
        if (!cl_env_build(&env, r->size)) {
            snprintf(row->reason, sizeof row->reason, "OpenCL set-up: %s", env.error);
            row->status = ROW_FAILED;
            continue;
        }
        round_trip(ctx, &env, bridge, paths[i], r->size, row);
    }
    for (size_t i = 0; i < npaths; i++)
        if (clmem_bridge_check_path(bridge, paths[i]) == CLMEM_OK)
            check_images(r, ctx, &env, bridge, bi, paths[i]);
    check_semaphores(r, &r->bridges[bi], bridge);
    /* Before vkDestroyDevice: nothing of the bridge may hold Vulkan memory.
     * Every trip already finished its own import; this is what a program
     * does, and it must hold. */
    s = clmem_bridge_finish(bridge, FINISH_TIMEOUT_NS);
    if (s != CLMEM_OK) {
        snprintf(r->bridges[bi].error, sizeof r->bridges[bi].error, "clmem_bridge_finish before vkDestroyDevice: %s",
                 clmem_error_message());
        r->bridges[bi].error_status = ROW_FAILED;
        r->failures++;
    }
    clmem_bridge_unref(bridge);
    cl_env_close(&env);
}

static void run_vulkan(struct report *r)
{
    struct vkctx ctx;
    int n = vkctx_count_devices(&ctx), first = 0, last;
    const char *want = getenv("CLMEM_VK_DEVICE");

    r->vulkan_built = true;
    if (n < 0) {
        snprintf(r->vk_error, sizeof r->vk_error, "%s", ctx.error);
        return;
    }
    if (n == 0) {
        snprintf(r->vk_error, sizeof r->vk_error, "no Vulkan physical device");
        return;
    }
    if (n > MAX_VK_DEVICES)
        n = MAX_VK_DEVICES;
    last = n - 1;
    /* CLMEM_VK_DEVICE (index, deviceUUID or name: tools/vkctx.h) limits
     * the checks to that one device; naming none is a failure. */
    if (want && *want) {
        r->vk_total = n;
        snprintf(r->vk_selector, sizeof r->vk_selector, "%s", want);
        first = last = vkctx_find_device(&ctx);
        if (first < 0) {
            snprintf(r->vk_error, sizeof r->vk_error, "%s", ctx.error);
            r->vk_select_failed = true;
            r->failures++;
            return;
        }
    }
    /* One vkctx (instance and device) per physical device, open only
     * while that device's checks run. */
    for (int i = first; i <= last; i++) {
        struct vk_dev *v = &r->vk[r->n_vk];
        v->index = i;
        v->paired = -1;
        if (!vkctx_open(&ctx, i)) {
            snprintf(v->reason, sizeof v->reason, "%s", ctx.error);
            r->n_vk++;
            r->failures++;
            continue;
        }
        describe_vk_device(&ctx, v);
        pair_vk_device(r, &ctx, v);
        for (int cl = 0; cl < r->n_cl; cl++)
            check_pair(r, &ctx, r->n_vk, cl);
        r->n_vk++;
        vkctx_close(&ctx);
    }
}
#endif /* CLMEM_INFO_WITH_VULKAN */

/* ------------------------------------------------------------ text out */

static void print_handle_types(const char *label, const struct handle_types *ht, bool memory, const char *ext)
{
    char hex[16];
    printf("    %-24s", label);
    if (!ht->available)
        printf("unavailable (no %s)", ext);
    else if (ht->n == 0)
        printf("none");
    for (cl_uint i = 0; i < ht->n; i++)
        printf("%s%s", i ? ", " : "", handle_type_name(ht, i, memory, hex));
    putchar('\n');
}

static void print_text_cl_device(const struct cl_dev *d)
{
    char buf[64], uuid[37];
    printf("  device %d.%d: %s\n", d->platform, d->index, d->name);
    printf("    %-24s%s\n", "type:", cl_type_name(d->type, buf));
    if (d->has_uuid)
        format_uuid(d->uuid, uuid);
    printf("    %-24s%s\n", "device UUID:", d->has_uuid ? uuid : "unavailable (no cl_khr_device_uuid)");
    print_handle_types("memory import types:", &d->memory_types, true, "cl_khr_external_memory");
    print_handle_types("semaphore import types:", &d->semaphore_types, false, "cl_khr_external_semaphore");
    printf("    %-24s%s\n", "host unified memory:", d->host_unified ? "yes" : "no");
    printf("    %-24s%u bits (%u bytes)\n", "base address alignment:", (unsigned)d->align_bits,
           (unsigned)d->align_bits / 8);
    printf("    %-24s%s\n", "sharing extensions:", d->extensions[0] ? d->extensions : "none");
}

static void print_text_vk_device(const struct report *r, int i)
{
    const struct vk_dev *v = &r->vk[i];
    char uuid[37];

    if (!v->opened) {
        printf("device %d: could not be opened: %s\n", v->index, v->reason);
        return;
    }
    format_uuid(v->uuid, uuid);
    printf("device %d: %s\n", v->index, v->name);
    printf("  %-32s%s\n", "type:", v->type);
    printf("  %-32s%s\n", "device UUID:", uuid);
    printf("  %-32s%s\n", "API version:", v->api_version);
    printf("  %-32s%s\n", "VK_KHR_external_memory_fd:", v->has_memory_fd ? "yes" : "no");
    printf("  %-32s%s\n", "VK_EXT_external_memory_dma_buf:", v->has_dma_buf ? "yes" : "no");
    printf("  %-32s%s\n", "VK_KHR_external_semaphore_fd:", v->has_semaphore_fd ? "yes" : "no");
    if (v->paired >= 0)
        printf("  %-32sdevice %d.%d: %s\n", "paired OpenCL device:", r->cl[v->paired].platform,
               r->cl[v->paired].index, r->cl[v->paired].name);
    else
        printf("  %-32snone (%s: %s)\n", "paired OpenCL device:", v->pair_status, v->reason);
}

static void print_text_row(const struct row *row)
{
    printf("  %-12s ", row->path);
    if (row->status == ROW_UNSUPPORTED) {
        printf("unsupported: %s\n", row->reason);
    } else if (row->status == ROW_FAILED) {
        printf("FAILED: %s\n", row->reason);
    } else {
        printf("ok");
        if (row->zero_copy >= 0 && strcmp(row->path, "host-mapped") == 0)
            fputs(row->zero_copy ? ", zero-copy" : ", not zero-copy (copies at acquire and release)", stdout);
        printf(", import %ld us, handoff %ld us\n", row->import_us, row->handoff_us);
    }
}

/* What the pair's bridge says of the semaphore modes, and a failed
 * clmem_bridge_finish, under the pair's path rows. */
static void print_text_bridge(const struct bridge_rec *br)
{
    for (int i = 0; i < br->n_sem; i++) {
        const struct sem_rec *sr = &br->sem[i];
        printf("  %-12s %s ", "semaphore", sr->mode);
        if (sr->status == ROW_OK)
            printf("supported (the bridge's answer; not run live)\n");
        else
            printf("%s: %s\n", sr->status == ROW_UNSUPPORTED ? "unsupported" : "FAILED", sr->reason);
    }
    if (br->created && br->error[0])
        printf("  %-12s FAILED: %s\n", "bridge", br->error);
}

static const char *const image_way_names[IMG_WAYS] = {"planes", "view", "optimal"};

/* The pair's image rows: one line per (path, format), each way ok or not
 * with a footnote number; the footnotes (each reason once) after them. */
static void print_text_images(const struct report *r, int bridge)
{
    const char *notes[64];
    int n_notes = 0;
    bool any = false;

    for (int i = 0; i < r->n_images; i++) {
        const struct image_rec *ir = &r->images[i];
        if (ir->bridge != bridge)
            continue;
        if (!any)
            printf("  images, each way checked live (planes and views on a %ux%u image, optimal by the "
                   "bridge's live check):\n",
                   IMAGE_WIDTH, IMAGE_HEIGHT);
        any = true;
        printf("  %-12s %-52s", ir->path, ir->format);
        for (int w = 0; w < IMG_WAYS; w++) {
            int note = 0;
            if (ir->status[w] != ROW_OK) {
                for (note = 0; note < n_notes && strcmp(notes[note], ir->reason[w]) != 0; note++)
                    ;
                if (note == n_notes && n_notes < 64)
                    notes[n_notes++] = ir->reason[w];
                note++;
            }
            if (ir->status[w] == ROW_OK)
                printf(" %s ok", image_way_names[w]);
            else
                printf(" %s %s [%d]", image_way_names[w], ir->status[w] == ROW_FAILED ? "FAILED" : "no", note);
        }
        putchar('\n');
    }
    for (int k = 0; k < n_notes; k++)
        printf("    [%d] %s\n", k + 1, notes[k]);
}

static void print_text_rows(const struct report *r)
{
    int counts[3] = {0, 0, 0};

    printf("\nSharing paths, each supported one run live with %zu bytes:\n", r->size);
    for (int i = 0; i < r->n_rows; i++) {
        const struct row *row = &r->rows[i];
        const struct cl_dev *d = &r->cl[row->cl];
        if (i == 0 || row->bridge != r->rows[i - 1].bridge)
            printf("Vulkan %d (%s) + OpenCL %d.%d (%s) on %s:\n", r->vk[row->vk].index, r->vk[row->vk].name,
                   d->platform, d->index, d->name, r->platforms[d->platform].name);
        print_text_row(row);
        counts[row->status]++;
        if (i + 1 == r->n_rows || r->rows[i + 1].bridge != row->bridge) {
            print_text_bridge(&r->bridges[row->bridge]);
            print_text_images(r, row->bridge);
        }
    }
    if (r->n_rows == 0)
        printf("  none (%s)\n", r->vk_select_failed ? "CLMEM_VK_DEVICE names no Vulkan device"
                                                    : "no Vulkan and OpenCL device to pair");
    printf("\nSummary: %d ok, %d failed, %d unsupported\n", counts[ROW_OK], counts[ROW_FAILED],
           counts[ROW_UNSUPPORTED]);
}

static void print_text(const struct report *r)
{
    printf("clmem-info: libclmem %s\n\n", clmem_version());
    if (r->cl_error[0])
        printf("OpenCL: none (%s)\n", r->cl_error);
    else
        printf("OpenCL: %d platform(s), %d device(s)\n", r->n_platforms, r->n_cl);
    for (int p = 0; p < r->n_platforms; p++) {
        const struct cl_plat *pl = &r->platforms[p];
        printf("platform %d: %s\n  version: %s\n", p, pl->name, pl->version);
        for (int d = 0; d < pl->n_devices; d++)
            print_text_cl_device(&r->cl[pl->first_device + d]);
    }
    putchar('\n');
    if (!r->vulkan_built)
        printf("Vulkan: not built in (configured without libclmem-bridge)\n");
    else if (r->vk_select_failed)
        printf("Vulkan: no device checked (%s)\n", r->vk_error);
    else if (r->vk_error[0])
        printf("Vulkan: none (%s)\n", r->vk_error);
    else if (r->vk_selector[0] && r->n_vk == 1)
        printf("Vulkan: %d physical device(s), CLMEM_VK_DEVICE=%s selects device %d, the only one checked\n",
               r->vk_total, r->vk_selector, r->vk[0].index);
    else
        printf("Vulkan: %d physical device(s)\n", r->n_vk);
    for (int i = 0; i < r->n_vk; i++)
        print_text_vk_device(r, i);
    if (r->vulkan_built)
        print_text_rows(r);
}

/* ------------------------------------------------------------ JSON out */

/* A minimal streaming JSON writer: it tracks, per nesting level, whether a
 * comma is due, and indents two spaces a level. */
#define JSON_MAX_DEPTH 16
struct json {
    int depth;
    bool comma[JSON_MAX_DEPTH];
};

/* Length of the valid UTF-8 sequence at s, or 0 when s starts none. JSON
 * must be UTF-8 (Python's json module rejects anything else) and driver
 * strings promise nothing; overlong forms and surrogates are invalid too. */
static size_t utf8_length(const unsigned char *s)
{
    unsigned char lo = 0x80, hi = 0xBF;
    size_t n;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        n = 3, lo = s[0] == 0xE0 ? 0xA0 : 0x80, hi = s[0] == 0xED ? 0x9F : 0xBF;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        n = 4, lo = s[0] == 0xF0 ? 0x90 : 0x80, hi = s[0] == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (s[1] < lo || s[1] > hi) /* a NUL here fails too: no read past the end */
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* A JSON string: quotes, backslashes and control characters escaped, and
 * each invalid UTF-8 byte replaced by U+FFFD. */
static void json_write_string(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    putchar('"');
    while (*s) {
        size_t n = utf8_length(s);
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", stdout);
        else if (*s == '\t')
            fputs("\\t", stdout);
        else if (*s == '\r')
            fputs("\\r", stdout);
        else if (*s < 0x20)
            printf("\\u%04x", *s);
        else if (n == 0)
            fputs("\\ufffd", stdout);
        else
            fwrite(s, 1, n, stdout);
        s += n ? n : 1;
    }
    putchar('"');
}

/* Start an item at the current level: comma, new line, indent, key. */
static void json_item(struct json *j, const char *key)
{
    if (j->comma[j->depth])
        putchar(',');
    j->comma[j->depth] = true;
    if (j->depth > 0 || key)
        printf("\n%*s", 2 * j->depth, "");
    if (key) {
        json_write_string(key);
        fputs(": ", stdout);
    }
}

static void json_open(struct json *j, const char *key, char bracket)
{
    json_item(j, key);
    putchar(bracket);
    j->comma[++j->depth] = false;
}

static void json_close(struct json *j, char bracket)
{
    bool had_items = j->comma[j->depth--];
    if (had_items)
        printf("\n%*s", 2 * j->depth, "");
    putchar(bracket);
}

static void json_string(struct json *j, const char *key, const char *value)
{
    json_item(j, key);
    if (value)
        json_write_string(value);
    else
        fputs("null", stdout);
}

static void json_int(struct json *j, const char *key, long long value)
{
    json_item(j, key);
    printf("%lld", value);
}

/* value < 0 prints null: the tri-state and "not measured" fields. */
static void json_int_or_null(struct json *j, const char *key, long long value)
{
    json_item(j, key);
    if (value < 0)
        fputs("null", stdout);
    else
        printf("%lld", value);
}

static void json_bool(struct json *j, const char *key, bool value)
{
    json_item(j, key);
    fputs(value ? "true" : "false", stdout);
}

static void json_handle_types(struct json *j, const char *key, const struct handle_types *ht, bool memory)
{
    char hex[16];
    if (!ht->available) {
        json_string(j, key, NULL);
        return;
    }
    json_open(j, key, '[');
    for (cl_uint i = 0; i < ht->n; i++)
        json_string(j, NULL, handle_type_name(ht, i, memory, hex));
    json_close(j, ']');
}

static void json_words(struct json *j, const char *key, const char *list)
{
    json_open(j, key, '[');
    for (const char *p = list; *p;) {
        char word[256];
        size_t len = strcspn(p, " ");
        if (len > 0 && len < sizeof word) {
            memcpy(word, p, len);
            word[len] = '\0';
            json_string(j, NULL, word);
        }
        p += len;
        p += strspn(p, " ");
    }
    json_close(j, ']');
}

static void json_cl_device(struct json *j, const struct cl_dev *d)
{
    char buf[64], uuid[37];
    json_open(j, NULL, '{');
    json_int(j, "index", d->index);
    json_string(j, "name", d->name);
    json_string(j, "type", cl_type_name(d->type, buf));
    if (d->has_uuid)
        format_uuid(d->uuid, uuid);
    json_string(j, "uuid", d->has_uuid ? uuid : NULL);
    json_handle_types(j, "memory_import_types", &d->memory_types, true);
    json_handle_types(j, "semaphore_import_types", &d->semaphore_types, false);
    json_bool(j, "host_unified_memory", d->host_unified);
    json_int(j, "mem_base_addr_align_bits", d->align_bits);
    json_int(j, "mem_base_addr_align_bytes", d->align_bits / 8);
    json_words(j, "extensions", d->extensions);
    json_close(j, '}');
}

static void json_opencl(struct json *j, const struct report *r)
{
    json_string(j, "opencl_error", r->cl_error[0] ? r->cl_error : NULL);
    json_open(j, "opencl", '[');
    for (int p = 0; p < r->n_platforms; p++) {
        const struct cl_plat *pl = &r->platforms[p];
        json_open(j, NULL, '{');
        json_int(j, "index", p);
        json_string(j, "name", pl->name);
        json_string(j, "version", pl->version);
        json_open(j, "devices", '[');
        for (int d = 0; d < pl->n_devices; d++)
            json_cl_device(j, &r->cl[pl->first_device + d]);
        json_close(j, ']');
        json_close(j, '}');
    }
    json_close(j, ']');
}

static void json_vk_device(struct json *j, const struct report *r, int i)
{
    const struct vk_dev *v = &r->vk[i];
    char uuid[37];

    json_open(j, NULL, '{');
    json_int(j, "index", v->index);
    json_bool(j, "opened", v->opened);
    if (v->opened) {
        format_uuid(v->uuid, uuid);
        json_string(j, "name", v->name);
        json_string(j, "type", v->type);
        json_string(j, "uuid", uuid);
        json_string(j, "api_version", v->api_version);
        json_bool(j, "VK_KHR_external_memory_fd", v->has_memory_fd);
        json_bool(j, "VK_EXT_external_memory_dma_buf", v->has_dma_buf);
        json_bool(j, "VK_KHR_external_semaphore_fd", v->has_semaphore_fd);
        json_string(j, "pair_status", v->pair_status);
        if (v->paired >= 0) {
            json_open(j, "paired_opencl_device", '{');
            json_int(j, "platform_index", r->cl[v->paired].platform);
            json_int(j, "device_index", r->cl[v->paired].index);
            json_string(j, "name", r->cl[v->paired].name);
            json_close(j, '}');
        } else {
            json_string(j, "paired_opencl_device", NULL);
        }
    }
    json_string(j, "reason", v->reason[0] ? v->reason : NULL);
    json_close(j, '}');
}

static void json_row(struct json *j, const struct report *r, const struct row *row)
{
    static const char *const names[] = {"ok", "failed", "unsupported"};
    const struct cl_dev *d = &r->cl[row->cl];

    json_open(j, NULL, '{');
    json_int(j, "vulkan_index", r->vk[row->vk].index);
    json_string(j, "vulkan_device", r->vk[row->vk].name);
    json_int(j, "opencl_platform_index", d->platform);
    json_int(j, "opencl_device_index", d->index);
    json_string(j, "opencl_platform", r->platforms[d->platform].name);
    json_string(j, "opencl_device", d->name);
    json_string(j, "path", row->path);
    json_string(j, "status", names[row->status]);
    json_string(j, "reason", row->reason[0] ? row->reason : NULL);
    json_item(j, "zero_copy");
    fputs(row->zero_copy < 0 ? "null" : row->zero_copy ? "true" : "false", stdout);
    json_int_or_null(j, "import_us", row->import_us);
    json_int_or_null(j, "handoff_us", row->handoff_us);
    json_close(j, '}');
}

static void json_images(struct json *j, const struct report *r, int bridge)
{
    static const char *const names[] = {"ok", "failed", "unsupported"};

    json_open(j, "images", '[');
    for (int i = 0; i < r->n_images; i++) {
        const struct image_rec *ir = &r->images[i];
        if (ir->bridge != bridge)
            continue;
        json_open(j, NULL, '{');
        json_string(j, "path", ir->path);
        json_string(j, "format", ir->format);
        for (int w = 0; w < IMG_WAYS; w++) {
            json_open(j, w == 0 ? "planes" : w == 1 ? "view" : "optimal", '{');
            json_string(j, "status", names[ir->status[w]]);
            json_string(j, "reason", ir->status[w] != 0 ? ir->reason[w] : NULL);
            json_close(j, '}');
        }
        json_close(j, '}');
    }
    json_close(j, ']');
}

static void json_bridge(struct json *j, const struct report *r, const struct bridge_rec *br)
{
    static const char *const names[] = {"supported", "failed", "unsupported"};
    static const struct {
        uint32_t bit;
        const char *name;
    } caps[] = {
        /* clmem_bridge_cap, spelt out: these printers build without clmem-bridge.h */
        {1u << 0, "opaque-fd"},           {1u << 1, "dma-buf"},
        {1u << 2, "host-mapped"},         {1u << 3, "host-mapped-zero-copy"},
        {1u << 4, "semaphore-opaque-fd"}, {1u << 5, "semaphore-sync-fd"},
        {1u << 6, "opaque-fd-dedicated-only"}, {1u << 7, "image-view"},
    };
    const struct cl_dev *d = &r->cl[br->cl];

    json_open(j, NULL, '{');
    json_int(j, "vulkan_index", r->vk[br->vk].index);
    json_int(j, "opencl_platform_index", d->platform);
    json_int(j, "opencl_device_index", d->index);
    json_bool(j, "created", br->created);
    json_string(j, "error", br->error[0] ? br->error : NULL);
    if (br->created) {
        json_open(j, "caps", '[');
        for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
            if (br->caps & caps[i].bit)
                json_string(j, NULL, caps[i].name);
        json_close(j, ']');
    } else {
        json_string(j, "caps", NULL);
    }
    json_open(j, "semaphores", '[');
    for (int i = 0; i < br->n_sem; i++) {
        json_open(j, NULL, '{');
        json_string(j, "mode", br->sem[i].mode);
        json_string(j, "status", names[br->sem[i].status]);
        json_string(j, "reason", br->sem[i].reason[0] ? br->sem[i].reason : NULL);
        json_close(j, '}');
    }
    json_close(j, ']');
    json_images(j, r, (int)(br - r->bridges));
    json_close(j, '}');
}

static void print_json(const struct report *r)
{
    struct json j = {.depth = 0};
    int counts[3] = {0, 0, 0};

    json_open(&j, NULL, '{');
    json_string(&j, "clmem_version", clmem_version());
    json_int(&j, "size", (long long)r->size);
    json_opencl(&j, r);
    json_bool(&j, "vulkan_built", r->vulkan_built);
    json_string(&j, "vulkan_error", r->vk_error[0] ? r->vk_error : NULL);
    json_string(&j, "vulkan_device_selector", r->vk_selector[0] ? r->vk_selector : NULL);
    json_open(&j, "vulkan", '[');
    for (int i = 0; i < r->n_vk; i++)
        json_vk_device(&j, r, i);
    json_close(&j, ']');
    json_open(&j, "pairs", '[');
    for (int i = 0; i < r->n_rows; i++) {
        json_row(&j, r, &r->rows[i]);
        counts[r->rows[i].status]++;
    }
    json_close(&j, ']');
    json_open(&j, "bridges", '[');
    for (int i = 0; i < r->n_bridges; i++)
        json_bridge(&j, r, &r->bridges[i]);
    json_close(&j, ']');
    json_open(&j, "summary", '{');
    json_int(&j, "ok", counts[ROW_OK]);
    json_int(&j, "failed", counts[ROW_FAILED]);
    json_int(&j, "unsupported", counts[ROW_UNSUPPORTED]);
    json_close(&j, '}');
    json_close(&j, '}');
    putchar('\n');
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f)
{
    fprintf(f, "Usage: clmem-info [--json] [--size BYTES]\n"
               "\n"
               "List the OpenCL and Vulkan devices and what they offer for sharing memory,\n"
               "pair them, and run every supported sharing path (opaque-fd, dma-buf,\n"
               "host-mapped) live: Vulkan fills a buffer, OpenCL transforms it in place,\n"
               "Vulkan reads it back and every word is checked. On each supported path,\n"
               "each image format is checked live too: plane buffers, image2d views and\n"
               "optimal tiling (the bridge's live check).\n"
               "\n"
               "  --json        print JSON instead of text\n"
               "  --size BYTES  bytes per live round trip, a multiple of 4 (default %u)\n"
               "  --help        print this help\n"
               "\n"
               "Environment: CLMEM_VK_DEVICE=INDEX, =UUID (32 hex digits, dashes optional)\n"
               "or =NAME (a substring) checks only the Vulkan device it names.\n"
               "\n"
               "Exit status: 0 when every live check passed (unsupported paths are not\n"
               "failures), 1 when one failed, a Vulkan device could not be opened or\n"
               "CLMEM_VK_DEVICE names none, 2 on a usage error.\n",
            DEFAULT_SIZE);
}

static bool parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;

    if (!s || *s < '0' || *s > '9') /* strtoull would accept "-4" */
        return false;
    v = strtoull(s, &end, 10);
    if (*end != '\0' || v == 0 || v % 4 != 0 || v > SIZE_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

/* 0 to go on, or the exit status for main. */
static int parse_args(int argc, char **argv, bool *json, size_t *size)
{
    for (int i = 1; i < argc; i++) {
        const char *value = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(argv[i], "--json") == 0) {
            *json = true;
            continue;
        } else if (strcmp(argv[i], "--size") == 0) {
            value = i + 1 < argc ? argv[++i] : NULL;
        } else if (strncmp(argv[i], "--size=", 7) == 0) {
            value = argv[i] + 7;
        } else {
            fprintf(stderr, "clmem-info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (!parse_size(value, size)) {
            fprintf(stderr, "clmem-info: --size needs a positive multiple of 4 bytes, not '%s'\n",
                    value ? value : "");
            return 2;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct report *r = calloc(1, sizeof *r);
    bool json = false;
    int saved_stdout = -1, status;

    if (!r) {
        fputs("clmem-info: out of memory\n", stderr);
        return 1;
    }
    r->size = DEFAULT_SIZE;
    status = parse_args(argc, argv, &json, &r->size);
    if (status != 0) {
        free(r);
        return status < 0 ? 0 : status;
    }
    /* With --json stdout must hold JSON only, but the validation messenger
     * in tools/vkctx.c and some drivers print to stdout while the checks
     * run: send fd 1 to stderr until the report is written. */
    if (json) {
        fflush(stdout);
        saved_stdout = dup(STDOUT_FILENO);
        if (saved_stdout >= 0)
            dup2(STDERR_FILENO, STDOUT_FILENO);
    }
    list_opencl(r);
#ifdef CLMEM_INFO_WITH_VULKAN
    run_vulkan(r);
#endif
    if (saved_stdout >= 0) {
        fflush(stdout);
        dup2(saved_stdout, STDOUT_FILENO);
        close(saved_stdout);
    }
    if (json)
        print_json(r);
    else
        print_text(r);
    for (int i = 0; i < r->n_rows; i++)
        r->failures += r->rows[i].status == ROW_FAILED;
    status = r->failures ? 1 : 0;
    free(r->rows);
    free(r->images);
    free(r->bridges);
    free(r);
    return fflush(stdout) == 0 && status == 0 ? 0 : 1;
}
