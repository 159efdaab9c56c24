/* SPDX-License-Identifier: MIT */
/*
 * A FAKE, for tests only: a stand-in for NVIDIA's
 * cl_khr_external_memory_opaque_fd import on the CPU machines.
 *
 * Why: so that the bridge's fd path (sub-buffers, fd ownership, the
 * extension's acquire and release, the teardown's rules) runs in CI, where
 * PoCL has no external memory.
 *
 * How: the functions below named cl* are NOT OpenCL's. They replace
 * clGetDeviceInfo, clCreateBufferWithProperties, clCreateSubBuffer,
 * clRetainMemObject, clReleaseMemObject, clSetMemObjectDestructorCallback,
 * clRetainEvent, clReleaseEvent, clGetEventInfo and
 * clGetExtensionFunctionAddressForPlatform in the program this file is
 * linked into: the program's definitions win over libOpenCL's for every
 * caller, the bridge included, and each reaches the real one through
 * dlsym(RTLD_NEXT). Where the first Vulkan device is not lavapipe or an
 * OpenCL device offers cl_khr_external_memory itself (the GPU machine),
 * the fake steps aside and the same programs test the driver's import.
 *
 * Who links it: only the fakefd-* test programs (t/tests.am), which are
 * the bridge, fault-injection, stress and av tests built a second time with
 * this file. No library and no installed program contains it.
 *
 * What it models is what docs/driver-notes.md records as measured on the
 * H200, not what the extension allows:
 *  - a CPU device lists cl_khr_external_memory, cl_khr_external_memory_opaque_fd
 *    and cl_khr_device_uuid, imports CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR
 *    only, and its CL_DEVICE_UUID_KHR is the Vulkan device's deviceUUID (the
 *    first Vulkan device: lavapipe, the only one on a CPU machine);
 *  - clCreateBufferWithProperties with an opaque fd maps it and takes the
 *    fd. lavapipe's opaque fds are memfds that start with Mesa's memory
 *    header (two 64-bit words: the file's size, then the offset of the
 *    data, one page in; then a driver UUID, not checked here), read as
 *    lavapipe's own import reads them, so both APIs share the very pages. An fd that is not
 *    such a memfd gives NVIDIA's non-standard 999, and on any failure the
 *    fd is still the caller's;
 *  - only imports can be acquired and released, and an import released
 *    while acquired aborts the program (NVIDIA never destroys it);
 *  - at the caller's last release of an import its fd is closed and its
 *    destructor callbacks run, whatever still uses the buffer (NVIDIA runs
 *    them before kernels using it complete). They run on the releasing
 *    thread, where NVIDIA uses a thread of its own: from one thread of the
 *    stand-in's, a cache test's 16 000 releases would queue behind each
 *    other there and time out under load;
 *  - a sub-buffer of an import is destroyed 50 ms after the caller's last
 *    release, so its callbacks come after its parent's, as NVIDIA's did
 *    (t/fault/fault-injection on the H200);
 *  - clEnqueueAcquire/ReleaseExternalMemObjectsKHR order like markers (the
 *    memory is coherent host memory), and their events say they are of
 *    those commands.
 * Semaphores and images imported from fds are not modelled: the bridge
 * finds no cl_khr_external_semaphore, and clCreateImageWithProperties with
 * an fd fails, so the image live check answers "not offered".
 */
#define _GNU_SOURCE
#include "opencl/cl-compat.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#define FAKE_EXTENSIONS " cl_khr_external_memory cl_khr_external_memory_opaque_fd cl_khr_device_uuid"
#define FAKE_BAD_FD 999        /* NVIDIA's answer to an fd it cannot import (docs/driver-notes.md) */
#define SUB_BUFFER_DELAY_NS 50000000L

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "fake-nvidia-import: no %s to forward to\n", name);
        abort();
    }
    return f;
}

/* The real entry points, looked up once (pthread_once: the wrappers run
 * on driver threads too). */
typedef cl_int (*get_device_info_fn)(cl_device_id, cl_device_info, size_t, void *, size_t *);
typedef cl_mem (*create_buffer_fn)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
typedef cl_mem (*create_buffer_props_fn)(cl_context, const cl_mem_properties *, cl_mem_flags, size_t, void *,
                                         cl_int *);
typedef cl_int (*set_destructor_fn)(cl_mem, void(CL_CALLBACK *)(cl_mem, void *), void *);
typedef cl_int (*event_fn)(cl_event);
typedef cl_int (*event_info_fn)(cl_event, cl_event_info, size_t, void *, size_t *);
typedef void *(*extension_address_fn)(cl_platform_id, const char *);
typedef cl_int (*mem_fn)(cl_mem);
typedef cl_mem (*create_sub_buffer_fn)(cl_mem, cl_mem_flags, cl_buffer_create_type, const void *, cl_int *);

static struct {
    get_device_info_fn get_device_info;
    create_buffer_fn create_buffer;
    create_buffer_props_fn create_buffer_props;
    set_destructor_fn set_destructor;
    event_fn retain_event, release_event;
    event_info_fn get_event_info;
    extension_address_fn extension_address;
    mem_fn retain_mem, release_mem;
    create_sub_buffer_fn create_sub_buffer;
} next;
static pthread_once_t next_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    next.get_device_info = (get_device_info_fn)real("clGetDeviceInfo");
    next.create_buffer = (create_buffer_fn)real("clCreateBuffer");
    next.create_buffer_props = (create_buffer_props_fn)real("clCreateBufferWithProperties");
    next.set_destructor = (set_destructor_fn)real("clSetMemObjectDestructorCallback");
    next.retain_event = (event_fn)real("clRetainEvent");
    next.release_event = (event_fn)real("clReleaseEvent");
    next.get_event_info = (event_info_fn)real("clGetEventInfo");
    next.extension_address = (extension_address_fn)real("clGetExtensionFunctionAddressForPlatform");
    next.retain_mem = (mem_fn)real("clRetainMemObject");
    next.release_mem = (mem_fn)real("clReleaseMemObject");
    next.create_sub_buffer = (create_sub_buffer_fn)real("clCreateSubBuffer");
}

#define NEXT(f) (pthread_once(&next_once, resolve), next.f)

/* ------------------------------------------------------------ active? */

/* Only where it models something real: the first Vulkan device is
 * lavapipe (whose opaque fds it knows how to read) and no OpenCL device
 * offers any cl_khr_external_memory of its own. On the GPU machine, or
 * beside a driver with dma-buf import, the same test programs run the
 * driver's own import, untouched. Of the devices, only CPU ones are
 * dressed up (fake_device). */
static bool active;
static pthread_once_t active_once = PTHREAD_ONCE_INIT;
static unsigned char vk_uuid[VK_UUID_SIZE];
static bool vk_is_lavapipe;

/* The first Vulkan device's deviceUUID and driver, asked of Vulkan once. */
static void find_vk_device(void)
{
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance inst;
    VkPhysicalDevice pd;
    uint32_t n = 1;

    if (vkCreateInstance(&ci, NULL, &inst) != VK_SUCCESS)
        return;
    if (vkEnumeratePhysicalDevices(inst, &n, &pd) >= 0 && n >= 1) {
        VkPhysicalDeviceDriverProperties driver = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
        VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES,
                                           .pNext = &driver};
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
        vkGetPhysicalDeviceProperties2(pd, &p2);
        memcpy(vk_uuid, id.deviceUUID, sizeof vk_uuid);
        vk_is_lavapipe = driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE;
    }
    vkDestroyInstance(inst, NULL);
}

static bool offers_external_memory(cl_device_id device)
{
    size_t len = 0;
    char *text;
    bool found;

    if (NEXT(get_device_info)(device, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || !len)
        return false;
    if (!(text = calloc(1, len + 1)))
        return true; /* cannot tell: stay out of the way */
    found = NEXT(get_device_info)(device, CL_DEVICE_EXTENSIONS, len, text, NULL) == CL_SUCCESS &&
            strstr(text, "cl_khr_external_memory");
    free(text);
    return found;
}

static void decide_active(void)
{
    cl_platform_id platforms[16];
    cl_uint np = 0;
    const char *why = NULL;

    find_vk_device();
    if (!vk_is_lavapipe)
        why = "the first Vulkan device is not lavapipe";
    if (clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS)
        np = 0;
    for (cl_uint i = 0; i < np && i < 16 && !why; i++) {
        cl_device_id devices[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 16, devices, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && d < 16 && !why; d++)
            if (offers_external_memory(devices[d]))
                why = "an OpenCL device offers cl_khr_external_memory itself";
    }
    active = !why;
    fprintf(stderr, "fake-nvidia-import: %s%s\n",
            active ? "standing in for cl_khr_external_memory_opaque_fd on the CPU OpenCL devices" : "inactive: ",
            active ? "" : why);
}

static bool fake_active(void)
{
    pthread_once(&active_once, decide_active);
    return active;
}

/* ------------------------------------------------------------ device info */

static cl_int answer(const void *value, size_t size, size_t param_size, void *param_value, size_t *size_ret)
{
    if (size_ret)
        *size_ret = size;
    if (param_value) {
        if (param_size < size)
            return CL_INVALID_VALUE;
        memcpy(param_value, value, size);
    }
    return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device, cl_device_info name, size_t param_size,
                                                void *param_value, size_t *size_ret)
{
    get_device_info_fn real_info = NEXT(get_device_info);
    cl_device_type type = 0;

    if (!fake_active() || (name != CL_DEVICE_EXTENSIONS && name != CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR &&
                           name != CL_DEVICE_UUID_KHR) ||
        real_info(device, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS || !(type & CL_DEVICE_TYPE_CPU))
        return real_info(device, name, param_size, param_value, size_ret);
    if (name == CL_DEVICE_EXTENSIONS) {
        size_t len = 0;
        char *text;
        cl_int err = real_info(device, name, 0, NULL, &len);
        if (err != CL_SUCCESS)
            return err;
        text = calloc(1, len + sizeof FAKE_EXTENSIONS);
        if (!text)
            return CL_OUT_OF_HOST_MEMORY;
        err = real_info(device, name, len, text, NULL);
        if (err == CL_SUCCESS) {
            strcat(text, FAKE_EXTENSIONS);
            err = answer(text, strlen(text) + 1, param_size, param_value, size_ret);
        }
        free(text);
        return err;
    }
    if (name == CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR) {
        cl_external_memory_handle_type_khr types[1] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR};
        return answer(types, sizeof types, param_size, param_value, size_ret);
    }
    if (name == CL_DEVICE_UUID_KHR)
        return answer(vk_uuid, sizeof vk_uuid, param_size, param_value, size_ret);
    return real_info(device, name, param_size, param_value, size_ret);
}

/* ------------------------------------------------------------ imports */

/* An import's mapping, unmapped when PoCL really destroys the buffer. */
struct mapping {
    void *base;
    size_t size;
};

static void CL_CALLBACK unmap_import(cl_mem mem, void *user)
{
    struct mapping *m = user;
    (void)mem;
    munmap(m->base, m->size);
    free(m);
}

/* The imports and their sub-buffers, with the caller's references (every
 * clRetainMemObject and clReleaseMemObject reaches the wrappers below;
 * PoCL's own references do not), so that what happens at the caller's
 * last release can be NVIDIA's:
 *  - an import's destructor callbacks run then, in reverse order of
 *    registration, whatever still uses the buffer, and its fd is closed
 *    (docs/driver-notes.md: the driver closes it when the cl_mem is released);
 *  - a sub-buffer's release reaches PoCL 50 ms later, from a thread of the
 *    layer's, so its callbacks come after its parent's, and still before
 *    PoCL frees it (its address is not reused before they ran). */
struct held_callback {
    void(CL_CALLBACK *fn)(cl_mem, void *);
    void *user;
    struct held_callback *next;
};

struct tracked {
    cl_mem mem;
    bool sub;
    bool acquired;             /* an import's: acquired by OpenCL (enqueue order) */
    unsigned refs;
    int fd;                    /* an import's */
    struct held_callback *cbs; /* an import's, newest first */
    struct tracked *next;
};

static pthread_mutex_t tracked_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tracked *tracked_list;

static struct tracked **tracked_find(cl_mem mem)
{
    struct tracked **p = &tracked_list;
    while (*p && (*p)->mem != mem)
        p = &(*p)->next;
    return p;
}

static bool track(cl_mem mem, bool sub, int fd)
{
    struct tracked *t = calloc(1, sizeof *t);
    if (!t)
        return false;
    t->mem = mem;
    t->sub = sub;
    t->refs = 1;
    t->fd = fd;
    pthread_mutex_lock(&tracked_lock);
    t->next = tracked_list;
    tracked_list = t;
    pthread_mutex_unlock(&tracked_lock);
    return true;
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateBufferWithProperties(cl_context context, const cl_mem_properties *props,
                                                             cl_mem_flags flags, size_t size, void *host_ptr,
                                                             cl_int *errcode_ret)
{
    struct mapping *m;
    struct stat st;
    uint64_t header[2]; /* Mesa's memory header: the file's size, the data's offset */
    cl_mem mem;
    cl_int err;
    int fd = -1;

    if (!fake_active())
        return NEXT(create_buffer_props)(context, props, flags, size, host_ptr, errcode_ret);
    /* Pairs, but for the device list, which runs to its own 0. */
    for (size_t i = 0; props && props[i];) {
        if (props[i] == CLMEM_CL_MEM_DEVICE_HANDLE_LIST) {
            for (i++; props[i]; i++)
                ;
            i++;
            continue;
        }
        if (props[i] == CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR)
            fd = (int)props[i + 1];
        if (props[i] == CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR) {
            if (errcode_ret)
                *errcode_ret = CL_INVALID_PROPERTY; /* what NVIDIA answers */
            return NULL;
        }
        i += 2;
    }
    if (fd < 0)
        return NEXT(create_buffer_props)(context, props, flags, size, host_ptr, errcode_ret);
    if (host_ptr || size == 0) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_VALUE;
        return NULL;
    }
    m = malloc(sizeof *m);
    if (!m || fstat(fd, &st) != 0 || pread(fd, header, sizeof header, 0) != (ssize_t)sizeof header ||
        header[0] != (uint64_t)st.st_size || header[1] >= header[0] || header[0] - header[1] < size) {
        free(m);
        if (errcode_ret)
            *errcode_ret = FAKE_BAD_FD;
        return NULL;
    }
    m->base = mmap(NULL, (size_t)header[0], PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m->base == MAP_FAILED) {
        free(m);
        if (errcode_ret)
            *errcode_ret = FAKE_BAD_FD;
        return NULL;
    }
    m->size = (size_t)header[0];
    mem = NEXT(create_buffer)(context, (flags & ~(cl_mem_flags)CL_MEM_ALLOC_HOST_PTR) | CL_MEM_USE_HOST_PTR, size,
                              (char *)m->base + header[1], &err);
    if (mem && (err = NEXT(set_destructor)(mem, unmap_import, m)) != CL_SUCCESS) {
        NEXT(release_mem)(mem);
        mem = NULL;
    } else if (mem && !track(mem, false, fd)) { /* unmap_import runs in the release */
        NEXT(release_mem)(mem);
        if (errcode_ret)
            *errcode_ret = CL_OUT_OF_HOST_MEMORY;
        return NULL; /* the fd stays the caller's */
    }
    if (!mem) {
        munmap(m->base, m->size);
        free(m); /* the fd stays the caller's */
        if (errcode_ret)
            *errcode_ret = err;
        return NULL;
    }
    if (errcode_ret)
        *errcode_ret = CL_SUCCESS;
    return mem;
}

/* ------------------------------------------------------------ acquire, release */

/* The handoff's events are PoCL markers; what their command type says is
 * the extension command's, as a driver's own would. The table follows the
 * callers' references (clRetainEvent, clReleaseEvent), so an entry goes
 * with the caller's last reference, before PoCL can reuse the pointer. */
struct handoff_event {
    cl_event event;
    cl_command_type type;
    unsigned refs;
    struct handoff_event *next;
};

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handoff_event *events;

static struct handoff_event **event_find(cl_event ev)
{
    struct handoff_event **p = &events;
    while (*p && (*p)->event != ev)
        p = &(*p)->next;
    return p;
}

static cl_int handoff(cl_command_type type, cl_command_queue queue, cl_uint num_mem_objects,
                      const cl_mem *mem_objects, cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    cl_event ev = NULL;
    cl_int err;

    if (num_mem_objects == 0 || !mem_objects)
        return CL_INVALID_VALUE;
    /* Only imports can be handed over; the state is kept for the check at
     * their last release. */
    pthread_mutex_lock(&tracked_lock);
    for (cl_uint i = 0; i < num_mem_objects; i++) {
        struct tracked *t = mem_objects[i] ? *tracked_find(mem_objects[i]) : NULL;
        if (!t || t->sub) {
            pthread_mutex_unlock(&tracked_lock);
            return CL_INVALID_MEM_OBJECT;
        }
    }
    err = clEnqueueMarkerWithWaitList(queue, num_events, wait_list, event ? &ev : NULL);
    for (cl_uint i = 0; err == CL_SUCCESS && i < num_mem_objects; i++)
        (*tracked_find(mem_objects[i]))->acquired = type == CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR;
    pthread_mutex_unlock(&tracked_lock);
    if (err == CL_SUCCESS && event) {
        struct handoff_event *e = malloc(sizeof *e);
        if (e) {
            e->event = ev;
            e->type = type;
            e->refs = 1;
            pthread_mutex_lock(&events_lock);
            e->next = events;
            events = e;
            pthread_mutex_unlock(&events_lock);
        }
        *event = ev;
    }
    return err;
}

static cl_int CL_API_CALL acquire(cl_command_queue queue, cl_uint n, const cl_mem *mems, cl_uint num_events,
                                  const cl_event *wait_list, cl_event *event)
{
    return handoff(CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR, queue, n, mems, num_events, wait_list, event);
}

static cl_int CL_API_CALL release(cl_command_queue queue, cl_uint n, const cl_mem *mems, cl_uint num_events,
                                  const cl_event *wait_list, cl_event *event)
{
    return handoff(CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR, queue, n, mems, num_events, wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clRetainEvent(cl_event ev)
{
    struct handoff_event **p;
    cl_int err = NEXT(retain_event)(ev);

    pthread_mutex_lock(&events_lock);
    if (err == CL_SUCCESS && *(p = event_find(ev)))
        (*p)->refs++;
    pthread_mutex_unlock(&events_lock);
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseEvent(cl_event ev)
{
    struct handoff_event **p, *gone = NULL;

    pthread_mutex_lock(&events_lock);
    if (ev && *(p = event_find(ev)) && --(*p)->refs == 0) {
        gone = *p;
        *p = gone->next;
    }
    pthread_mutex_unlock(&events_lock);
    free(gone);
    return NEXT(release_event)(ev);
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventInfo(cl_event ev, cl_event_info name, size_t param_size, void *param_value,
                                               size_t *size_ret)
{
    struct handoff_event **p;
    cl_command_type type = 0;

    if (name == CL_EVENT_COMMAND_TYPE) {
        pthread_mutex_lock(&events_lock);
        if (*(p = event_find(ev)))
            type = (*p)->type;
        pthread_mutex_unlock(&events_lock);
        if (type)
            return answer(&type, sizeof type, param_size, param_value, size_ret);
    }
    return NEXT(get_event_info)(ev, name, param_size, param_value, size_ret);
}

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char *name)
{
    if (fake_active() && !strcmp(name, "clEnqueueAcquireExternalMemObjectsKHR"))
        return (void *)acquire;
    if (fake_active() && !strcmp(name, "clEnqueueReleaseExternalMemObjectsKHR"))
        return (void *)release;
    return NEXT(extension_address)(platform, name);
}

/* ------------------------------------------------------------ releases */

/* A sub-buffer's real release, done 50 ms after the caller's last one by
 * a thread of the layer's, in order, so its callbacks follow its parent's
 * and still come before PoCL can reuse its address. An import's held
 * callbacks run at the caller's last release, on that thread, then its
 * real release (release_now). */
struct late_release {
    cl_mem mem;
    struct held_callback *cbs; /* an import's, newest first */
    struct timespec due;
    struct late_release *next;
};

static bool due_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static pthread_mutex_t late_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t late_changed; /* on CLOCK_MONOTONIC, as the due times */
static pthread_once_t late_once = PTHREAD_ONCE_INIT;
static struct late_release *late_head, *late_tail; /* in due order */
static bool late_thread_started, late_busy;

static void late_init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&late_changed, &ca);
    pthread_condattr_destroy(&ca);
}

static void release_now(struct late_release *r)
{
    while (r->cbs) {
        struct held_callback *c = r->cbs;
        r->cbs = c->next;
        c->fn(r->mem, c->user);
        free(c);
    }
    NEXT(release_mem)(r->mem);
    free(r);
}

static void *release_late(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&late_lock);
    for (;;) {
        struct late_release *r;
        struct timespec now;
        while (!late_head)
            pthread_cond_wait(&late_changed, &late_lock);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (due_before(&now, &late_head->due)) {
            pthread_cond_timedwait(&late_changed, &late_lock, &late_head->due);
            continue;
        }
        r = late_head;
        late_head = r->next;
        if (!late_head)
            late_tail = NULL;
        late_busy = true;
        pthread_mutex_unlock(&late_lock);
        release_now(r);
        pthread_mutex_lock(&late_lock);
        late_busy = false;
        pthread_cond_broadcast(&late_changed);
    }
    return NULL;
}

/* At exit, what is still due is done first (for up to 2 s), so that no
 * release runs into PoCL's own exit handlers. */
static void drain_at_exit(void)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 2;
    pthread_mutex_lock(&late_lock);
    while (late_head || late_busy)
        if (pthread_cond_timedwait(&late_changed, &late_lock, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&late_lock);
}

/* Queues r, due delay_ns from now; done at once if no thread can be had.
 * One delay, so appending keeps the queue in due order. */
static void release_later(struct late_release *r, long delay_ns)
{
    clock_gettime(CLOCK_MONOTONIC, &r->due);
    r->due.tv_nsec += delay_ns;
    while (r->due.tv_nsec >= 1000000000L) {
        r->due.tv_sec++;
        r->due.tv_nsec -= 1000000000L;
    }
    r->next = NULL;
    pthread_once(&late_once, late_init);
    pthread_mutex_lock(&late_lock);
    if (!late_thread_started) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        late_thread_started = pthread_create(&t, &attr, release_late, NULL) == 0;
        pthread_attr_destroy(&attr);
        if (late_thread_started)
            atexit(drain_at_exit);
    }
    if (!late_thread_started) {
        pthread_mutex_unlock(&late_lock);
        release_now(r);
        return;
    }
    if (late_tail)
        late_tail->next = r;
    else
        late_head = r;
    late_tail = r;
    pthread_cond_broadcast(&late_changed);
    pthread_mutex_unlock(&late_lock);
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateSubBuffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type,
                                                  const void *info, cl_int *errcode_ret)
{
    cl_mem sub = NEXT(create_sub_buffer)(parent, flags, type, info, errcode_ret);
    bool of_import;

    pthread_mutex_lock(&tracked_lock);
    of_import = *tracked_find(parent) && !(*tracked_find(parent))->sub;
    pthread_mutex_unlock(&tracked_lock);
    if (sub && of_import && !track(sub, true, -1)) {
        NEXT(release_mem)(sub);
        if (errcode_ret)
            *errcode_ret = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    return sub;
}

CL_API_ENTRY cl_int CL_API_CALL clRetainMemObject(cl_mem mem)
{
    cl_int err = NEXT(retain_mem)(mem);
    struct tracked **p;

    pthread_mutex_lock(&tracked_lock);
    if (err == CL_SUCCESS && *(p = tracked_find(mem)))
        (*p)->refs++;
    pthread_mutex_unlock(&tracked_lock);
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseMemObject(cl_mem mem)
{
    struct tracked **p, *last = NULL;
    struct late_release *r;
    bool is_sub;

    pthread_mutex_lock(&tracked_lock);
    if (mem && *(p = tracked_find(mem)) && --(*p)->refs == 0) {
        last = *p;
        *p = last->next;
    }
    pthread_mutex_unlock(&tracked_lock);
    if (!last)
        return NEXT(release_mem)(mem);
    if (last->acquired) {
        /* NVIDIA never destroys an import OpenCL still holds (docs/driver-notes.md):
         * the bridge must hand it back first. Loudly, not a quiet leak. */
        fprintf(stderr,
                "fake-nvidia-import: cl_mem %p released while acquired by OpenCL; NVIDIA would never destroy it\n",
                (void *)mem);
        abort();
    }
    is_sub = last->sub;
    if (!is_sub)
        close(last->fd); /* at the release, as NVIDIA closes it */
    r = calloc(1, sizeof *r);
    if (!r) { /* no note to queue: the callbacks now, then the release */
        while (last->cbs) {
            struct held_callback *c = last->cbs;
            last->cbs = c->next;
            c->fn(mem, c->user);
            free(c);
        }
        free(last);
        return NEXT(release_mem)(mem);
    }
    r->mem = mem;
    r->cbs = last->cbs;
    free(last);
    if (!is_sub) {
        release_now(r); /* on the releasing thread: see the header */
        return CL_SUCCESS;
    }
    release_later(r, SUB_BUFFER_DELAY_NS);
    return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clSetMemObjectDestructorCallback(cl_mem mem, void(CL_CALLBACK *fn)(cl_mem, void *),
                                                                 void *user)
{
    struct held_callback *c;
    struct tracked **p;

    if (!fn)
        return NEXT(set_destructor)(mem, fn, user);
    pthread_mutex_lock(&tracked_lock);
    p = tracked_find(mem);
    if (!*p || (*p)->sub) {
        pthread_mutex_unlock(&tracked_lock);
        return NEXT(set_destructor)(mem, fn, user);
    }
    if (!(c = malloc(sizeof *c))) {
        pthread_mutex_unlock(&tracked_lock);
        return CL_OUT_OF_HOST_MEMORY;
    }
    c->fn = fn;
    c->user = user;
    c->next = (*p)->cbs;
    (*p)->cbs = c;
    pthread_mutex_unlock(&tracked_lock);
    return CL_SUCCESS;
}
