/* SPDX-License-Identifier: MIT */
/* Every bad input to the bridge gets its own status and changes nothing:
 * no fd, no cl_mem, no reference is left behind (checked at the end
 * through the fd count, the contexts' reference counts and a counting
 * anchor every refused call was given).
 *
 * Most cases are rows of the tables below, walked by one loop (run_case):
 * the call, its arguments (each named by what is wrong with it; a field
 * left out, zero, is a good argument), the status the call must return and
 * a fragment its message must hold. The call must also leave its
 * out-parameter NULL (outputs cleared). The cases that need set-up of
 * their own (a refused fd that must stay open, a semaphore or a handle of
 * one bridge passed to another, the reference counts around bridge
 * creation) are functions after the tables. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JUNK_HANDLE ((clmem_handle *)(uintptr_t)0x1)
#define JUNK_BRIDGE ((clmem_bridge *)(uintptr_t)0x1)
#define JUNK_SEMAPHORE ((clmem_bridge_semaphore *)(uintptr_t)0x1)

/* ------------------------------------------------------------ the world */

struct world {
    struct vkctx vk;
    struct vkctx vk2; /* a second VkDevice, for memory that is not the bridge's device's */
    bool have_vk2;
    struct cl_fixture f;
    struct cl_fixture other;  /* another context on the same device */
    cl_device_id stranger;    /* an OpenCL device not in f's context; NULL when the machine has one */
    int fds_before;
    cl_uint refs_before, other_refs_before;
    /* made once the bridge creation cases ran */
    clmem_bridge *b, *b2;     /* b2: of the other context */
    struct vk_owned host;     /* host-visible memory, not exportable */
    struct vk_owned local;    /* device-local memory, exportable as an opaque fd where Vulkan can */
    clmem_keepalive *host_ka, *local_ka;
    clmem_keepalive *counted; /* the anchor every refused call is given: released once, by its owner */
    VkSemaphore sem;
    cl_mem plain_mem;
    clmem_handle *plain;      /* a handle not made by a bridge */
    clmem_handle *good;       /* check_handoff's import */
};

static int anchor_releases;
static void count_release(void *user)
{
    (void)user;
    anchor_releases++;
}

/* ------------------------------------------------------------- the cases */

enum call {
    BRIDGE_CREATE,    /* clmem_bridge_create(info, out) */
    FINISH,           /* clmem_bridge_finish(bridge, 0) */
    IMPORT_VK,        /* clmem_bridge_import_vk(bridge, memory, range, path, counted, queue, flags, out) */
    IMPORT_FD,        /* clmem_bridge_import_fd(bridge, fd, path, 4096, range, counted, queue, 0, out) */
    PAIR,             /* clmem_bridge_pair(instance, NULL, physical device, NULL, NULL) */
    CHECK_PATH,       /* clmem_bridge_check_path(bridge, path) */
    CHECK_SEMAPHORE,  /* clmem_bridge_check_semaphore(bridge, mode) */
    VK_BUFFER_CREATE, /* clmem_bridge_vk_buffer_create(bridge, range's size, TRANSFER_DST, 0, 0, out, out) */
    SEMAPHORE_IMPORT, /* clmem_bridge_semaphore_import(bridge, queue, a VkSemaphore, mode, counted, out) */
    ACQUIRE,          /* clmem_bridge_acquire(bridge, handle, 0, NULL, NULL) */
    HANDLE_PATH,      /* clmem_bridge_handle_path(handle, &path) */
    HANDLE_FOR_QUEUE  /* clmem_bridge_handle_for_queue(handle, queue, out) */
};

/* The public function each call is: a refused call's message begins with
 * its name and a colon, once. */
static const char *const call_names[] = {
    [BRIDGE_CREATE] = "clmem_bridge_create",
    [FINISH] = "clmem_bridge_finish",
    [IMPORT_VK] = "clmem_bridge_import_vk",
    [IMPORT_FD] = "clmem_bridge_import_fd",
    [PAIR] = "clmem_bridge_pair",
    [CHECK_PATH] = "clmem_bridge_check_path",
    [CHECK_SEMAPHORE] = "clmem_bridge_check_semaphore",
    [VK_BUFFER_CREATE] = "clmem_bridge_vk_buffer_create",
    [SEMAPHORE_IMPORT] = "clmem_bridge_semaphore_import",
    [ACQUIRE] = "clmem_bridge_acquire",
    [HANDLE_PATH] = "clmem_bridge_handle_path",
    [HANDLE_FOR_QUEUE] = "clmem_bridge_handle_for_queue",
};

/* Does msg begin with "name: ", and name it only there? */
static bool begins_with_name(const char *msg, const char *name)
{
    size_t len = strlen(name);
    return strncmp(msg, name, len) == 0 && msg[len] == ':' && msg[len + 1] == ' ' && !strstr(msg + len, name);
}

/* The bridge_create info: the good one, or one thing wrong with it. */
enum info_arg {
    INFO_GOOD,
    INFO_NULL,
    INFO_SIZE_0,
    INFO_SIZE_SHORT, /* ending before the context */
    INFO_NO_CONTEXT,
    INFO_NO_VK_DEVICE,
    INFO_NO_PHYSICAL_DEVICE,
    INFO_NO_INSTANCE,
    INFO_UNKNOWN_FLAG,
    INFO_STRANGER /* a cl_device not in the context */
};
enum bridge_arg { BRIDGE_OURS, BRIDGE_NULL };
enum memory_arg {
    MEMORY_HOST,
    MEMORY_NULL,
    MEMORY_NULL_HANDLE,            /* the host memory with VK_NULL_HANDLE as its VkDeviceMemory */
    MEMORY_OF_VK2,                 /* the host memory, said to be of the second VkDevice */
    MEMORY_LOCAL,
    MEMORY_LOCAL_NOT_HOST_VISIBLE  /* the local memory, said to be DEVICE_LOCAL only */
};
/* Offset and size, against an allocation of `alloc` bytes. */
enum range_arg { RANGE_4K, RANGE_ZERO, RANGE_PAST_END, RANGE_AT_END, RANGE_OVERFLOW, RANGE_MISALIGNED };
enum queue_arg { QUEUE_OURS, QUEUE_NULL, QUEUE_OTHER_CONTEXT }; /* OpenCL's, or Vulkan's for SEMAPHORE_IMPORT */
enum handle_arg { HANDLE_GOOD, HANDLE_PLAIN, HANDLE_NULL };
/* What a case needs of the machine; without it the case is a skip. */
enum needs { NEEDS_NOTHING, NEEDS_VK2, NEEDS_STRANGER, NEEDS_NO_SEMAPHORE_FD, NEEDS_VK_MEMORY_FD };

static const char *const needs_missing[] = {
    [NEEDS_VK2] = "a second VkDevice could not be opened",
    [NEEDS_STRANGER] = "the machine has one OpenCL device",
    [NEEDS_NO_SEMAPHORE_FD] = "the device imports opaque-fd semaphores: t/bridge/bridge-semaphore covers it",
    [NEEDS_VK_MEMORY_FD] = "VK_KHR_external_memory_fd not offered by the Vulkan device",
};

struct error_case {
    const char *what; /* the TAP point says "<what> -> <want>" */
    enum call call;
    /* the arguments */
    enum info_arg info;
    enum bridge_arg bridge;
    enum memory_arg memory;
    enum range_arg range;
    clmem_bridge_path path;
    enum queue_arg queue;
    cl_mem_flags flags;
    int fd;
    clmem_bridge_semaphore_mode mode;
    enum handle_arg handle;
    bool no_instance, no_physical_device;
    bool no_out; /* the out-parameter is NULL */
    /* what must come of it */
    clmem_status want;
    const char *fragment; /* the message holds it; NULL: not checked */
    enum needs needs;
};

/* Bridge creation, before any bridge is made. */
static const struct error_case creation_cases[] = {
    {"bridge_create with NULL info", BRIDGE_CREATE, .info = INFO_NULL, .want = CLMEM_ERR_NULL_POINTER},
    {"bridge_create with NULL out", BRIDGE_CREATE, .no_out = true, .want = CLMEM_ERR_NULL_POINTER},
    {"bridge_create with info.size 0", BRIDGE_CREATE, .info = INFO_SIZE_0, .want = CLMEM_ERR_INVALID_VALUE},
    {"bridge_create with info.size ending before the context", BRIDGE_CREATE, .info = INFO_SIZE_SHORT,
     .want = CLMEM_ERR_INVALID_VALUE},
    {"bridge_create with a NULL context", BRIDGE_CREATE, .info = INFO_NO_CONTEXT, .want = CLMEM_ERR_NULL_POINTER},
    {"bridge_create with a NULL VkDevice", BRIDGE_CREATE, .info = INFO_NO_VK_DEVICE, .want = CLMEM_ERR_NULL_POINTER},
    {"bridge_create with a NULL VkPhysicalDevice", BRIDGE_CREATE, .info = INFO_NO_PHYSICAL_DEVICE,
     .want = CLMEM_ERR_NULL_POINTER},
    {"bridge_create with a NULL VkInstance", BRIDGE_CREATE, .info = INFO_NO_INSTANCE, .want = CLMEM_ERR_NULL_POINTER},
    {"bridge_create with an unknown flag", BRIDGE_CREATE, .info = INFO_UNKNOWN_FLAG, .want = CLMEM_ERR_INVALID_VALUE},
    {"bridge_create with a cl_device not in the context", BRIDGE_CREATE, .info = INFO_STRANGER,
     .want = CLMEM_ERR_DEVICE_MISMATCH, .needs = NEEDS_STRANGER},
};

/* With the bridges made: each call refused, nothing of it left. */
static const struct error_case cases[] = {
    {"finish(NULL)", FINISH, .bridge = BRIDGE_NULL, .want = CLMEM_ERR_NULL_POINTER},
    /* clmem_bridge_import_vk */
    {"NULL bridge", IMPORT_VK, .bridge = BRIDGE_NULL, .want = CLMEM_ERR_NULL_POINTER},
    {"NULL memory", IMPORT_VK, .memory = MEMORY_NULL, .want = CLMEM_ERR_NULL_POINTER, .fragment = "memory"},
    {"NULL queue", IMPORT_VK, .queue = QUEUE_NULL, .want = CLMEM_ERR_NULL_POINTER, .fragment = "queue"},
    {"NULL out", IMPORT_VK, .no_out = true, .want = CLMEM_ERR_NULL_POINTER},
    {"VK_NULL_HANDLE memory", IMPORT_VK, .memory = MEMORY_NULL_HANDLE, .want = CLMEM_ERR_NULL_POINTER,
     .fragment = "memory->memory"},
    /* only the device field differs: the bridge must refuse before it touches the memory */
    {"memory of another VkDevice", IMPORT_VK, .memory = MEMORY_OF_VK2, .want = CLMEM_ERR_DEVICE_MISMATCH,
     .needs = NEEDS_VK2},
    {"zero size", IMPORT_VK, .range = RANGE_ZERO, .want = CLMEM_ERR_ZERO_SIZE, .fragment = "size"},
    {"size beyond the allocation", IMPORT_VK, .range = RANGE_PAST_END, .want = CLMEM_ERR_INVALID_VALUE,
     .fragment = "beyond"},
    {"offset at the end of the allocation", IMPORT_VK, .range = RANGE_AT_END, .want = CLMEM_ERR_INVALID_VALUE,
     .fragment = "beyond"},
    {"offset + size overflowing 64 bits", IMPORT_VK, .range = RANGE_OVERFLOW, .want = CLMEM_ERR_INVALID_VALUE,
     .fragment = "beyond"},
    {"misaligned offset (4 bytes)", IMPORT_VK, .range = RANGE_MISALIGNED, .path = CLMEM_BRIDGE_PATH_HOST_MAPPED,
     .want = CLMEM_ERR_INVALID_VALUE, .fragment = "CL_DEVICE_MEM_BASE_ADDR_ALIGN"},
    {"CL_MEM_USE_HOST_PTR in flags", IMPORT_VK, .flags = CL_MEM_USE_HOST_PTR, .want = CLMEM_ERR_INVALID_VALUE,
     .fragment = "host-pointer"},
    {"a queue from another context", IMPORT_VK, .queue = QUEUE_OTHER_CONTEXT, .want = CLMEM_ERR_CONTEXT_MISMATCH,
     .fragment = "context"},
    {"an unknown path value", IMPORT_VK, .path = (clmem_bridge_path)42, .want = CLMEM_ERR_INVALID_VALUE,
     .fragment = "unknown path"},
    {"opaque fd on memory not allocated exportable", IMPORT_VK, .path = CLMEM_BRIDGE_PATH_OPAQUE_FD,
     .want = CLMEM_ERR_UNSUPPORTED, .fragment = "exportable"},
    {"dma-buf on memory exported only as opaque fd", IMPORT_VK, .memory = MEMORY_LOCAL,
     .path = CLMEM_BRIDGE_PATH_DMA_BUF, .want = CLMEM_ERR_UNSUPPORTED, .fragment = "dma-buf"},
    {"host-mapped on memory that is not HOST_VISIBLE", IMPORT_VK, .memory = MEMORY_LOCAL_NOT_HOST_VISIBLE,
     .path = CLMEM_BRIDGE_PATH_HOST_MAPPED, .want = CLMEM_ERR_UNSUPPORTED, .fragment = "HOST_VISIBLE"},
    /* clmem_bridge_import_fd (fd 0 is never read: each is refused first) */
    {"import_fd with a NULL bridge", IMPORT_FD, .bridge = BRIDGE_NULL, .path = CLMEM_BRIDGE_PATH_OPAQUE_FD,
     .want = CLMEM_ERR_NULL_POINTER},
    {"import_fd of fd -1", IMPORT_FD, .fd = -1, .path = CLMEM_BRIDGE_PATH_OPAQUE_FD, .want = CLMEM_ERR_INVALID_VALUE,
     .fragment = "negative"},
    {"import_fd with the host-mapped path", IMPORT_FD, .path = CLMEM_BRIDGE_PATH_HOST_MAPPED,
     .want = CLMEM_ERR_INVALID_VALUE, .fragment = "CLMEM_BRIDGE_PATH_OPAQUE_FD"},
    {"import_fd of zero size", IMPORT_FD, .range = RANGE_ZERO, .path = CLMEM_BRIDGE_PATH_OPAQUE_FD,
     .want = CLMEM_ERR_ZERO_SIZE, .fragment = "size"},
    {"import_fd with a queue from another context", IMPORT_FD, .queue = QUEUE_OTHER_CONTEXT,
     .path = CLMEM_BRIDGE_PATH_OPAQUE_FD, .want = CLMEM_ERR_CONTEXT_MISMATCH, .fragment = "context"},
    /* pairing and the capability queries */
    {"pair(NULL)", PAIR, .no_instance = true, .no_physical_device = true, .want = CLMEM_ERR_NULL_POINTER},
    {"pair without a physical device", PAIR, .no_physical_device = true, .want = CLMEM_ERR_NULL_POINTER},
    {"check_path(BEST)", CHECK_PATH, .path = CLMEM_BRIDGE_PATH_BEST, .want = CLMEM_ERR_INVALID_VALUE},
    {"check_path(unknown path)", CHECK_PATH, .path = (clmem_bridge_path)42, .want = CLMEM_ERR_INVALID_VALUE},
    {"check_path(NULL bridge)", CHECK_PATH, .bridge = BRIDGE_NULL, .path = CLMEM_BRIDGE_PATH_HOST_MAPPED,
     .want = CLMEM_ERR_NULL_POINTER},
    {"check_semaphore(unknown mode)", CHECK_SEMAPHORE, .mode = (clmem_bridge_semaphore_mode)0x80,
     .want = CLMEM_ERR_INVALID_VALUE},
    {"check_semaphore(host-ordered)", CHECK_SEMAPHORE, .mode = CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, .want = CLMEM_OK},
    {"check_semaphore(NULL bridge)", CHECK_SEMAPHORE, .bridge = BRIDGE_NULL,
     .mode = CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, .want = CLMEM_ERR_NULL_POINTER},
    {"vk_buffer_create(size 0)", VK_BUFFER_CREATE, .range = RANGE_ZERO, .want = CLMEM_ERR_ZERO_SIZE},
    {"vk_buffer_create(NULL bridge)", VK_BUFFER_CREATE, .bridge = BRIDGE_NULL, .want = CLMEM_ERR_NULL_POINTER},
    /* clmem_bridge_semaphore_import */
    {"semaphore import with NULL out", SEMAPHORE_IMPORT, .mode = CLMEM_BRIDGE_SEMAPHORE_BEST, .no_out = true,
     .want = CLMEM_ERR_NULL_POINTER},
    {"semaphore import with a NULL bridge", SEMAPHORE_IMPORT, .bridge = BRIDGE_NULL,
     .mode = CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, .want = CLMEM_ERR_NULL_POINTER},
    {"host-ordered semaphore without a VkQueue", SEMAPHORE_IMPORT, .queue = QUEUE_NULL,
     .mode = CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, .want = CLMEM_ERR_NULL_POINTER},
    {"semaphore import with an unknown mode", SEMAPHORE_IMPORT, .mode = (clmem_bridge_semaphore_mode)9,
     .want = CLMEM_ERR_INVALID_VALUE},
    {"opaque-fd semaphore where OpenCL lacks it", SEMAPHORE_IMPORT, .mode = CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD,
     .want = CLMEM_ERR_UNSUPPORTED, .fragment = "cl_khr_external_semaphore_opaque_fd",
     .needs = NEEDS_NO_SEMAPHORE_FD},
    /* handles a bridge did not make */
    {"acquire of a handle not from the bridge", ACQUIRE, .handle = HANDLE_PLAIN, .want = CLMEM_ERR_INVALID_VALUE},
    {"acquire(NULL handle)", ACQUIRE, .handle = HANDLE_NULL, .want = CLMEM_ERR_NULL_POINTER},
    {"handle_path of a plain handle", HANDLE_PATH, .handle = HANDLE_PLAIN, .want = CLMEM_ERR_INVALID_VALUE},
    {"handle_for_queue of a plain handle", HANDLE_FOR_QUEUE, .handle = HANDLE_PLAIN,
     .want = CLMEM_ERR_INVALID_VALUE},
};

/* handle_for_queue of check_handoff's import, while it is acquired. */
static const struct error_case good_handle_cases[] = {
    {"handle_for_queue with a queue of another context", HANDLE_FOR_QUEUE, .queue = QUEUE_OTHER_CONTEXT,
     .want = CLMEM_ERR_CONTEXT_MISMATCH, .fragment = "context"},
    {"handle_for_queue with a NULL queue", HANDLE_FOR_QUEUE, .queue = QUEUE_NULL, .want = CLMEM_ERR_NULL_POINTER,
     .fragment = "queue"},
    {"handle_for_queue of a NULL handle", HANDLE_FOR_QUEUE, .handle = HANDLE_NULL, .want = CLMEM_ERR_NULL_POINTER},
    {"handle_for_queue with NULL out", HANDLE_FOR_QUEUE, .no_out = true, .want = CLMEM_ERR_NULL_POINTER},
};

/* ----------------------------------------------------- the loop over them */

static bool has(const struct world *w, enum needs needs)
{
    switch (needs) {
    case NEEDS_NOTHING: return true;
    case NEEDS_VK2: return w->have_vk2;
    case NEEDS_STRANGER: return w->stranger != NULL;
    case NEEDS_NO_SEMAPHORE_FD: return clmem_bridge_check_semaphore(w->b, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD) != CLMEM_OK;
    case NEEDS_VK_MEMORY_FD: return w->vk.has_memory_fd;
    }
    return false;
}

static clmem_bridge_info good_info(const struct world *w)
{
    clmem_bridge_info info = {.size = sizeof info,
                              .instance = w->vk.instance,
                              .physical_device = w->vk.physical_device,
                              .device = w->vk.device,
                              .context = w->f.context,
                              .cl_device = w->f.device};
    return info;
}

static clmem_bridge_info info_of(const struct world *w, enum info_arg arg)
{
    clmem_bridge_info info = good_info(w);

    switch (arg) {
    case INFO_GOOD:
    case INFO_NULL: break;
    case INFO_SIZE_0: info.size = 0; break;
    case INFO_SIZE_SHORT: info.size = offsetof(clmem_bridge_info, context); break;
    case INFO_NO_CONTEXT: info.context = NULL; break;
    case INFO_NO_VK_DEVICE: info.device = VK_NULL_HANDLE; break;
    case INFO_NO_PHYSICAL_DEVICE: info.physical_device = VK_NULL_HANDLE; break;
    case INFO_NO_INSTANCE: info.instance = VK_NULL_HANDLE; break;
    case INFO_UNKNOWN_FLAG: info.flags = 1u << 31; break;
    case INFO_STRANGER: info.cl_device = w->stranger; break;
    }
    return info;
}

/* The memory description; the made-up ones are written into *fake. */
static const clmem_bridge_vk_memory *memory_of(const struct world *w, enum memory_arg arg,
                                               clmem_bridge_vk_memory *fake)
{
    switch (arg) {
    case MEMORY_HOST: return &w->host.memory;
    case MEMORY_NULL: return NULL;
    case MEMORY_NULL_HANDLE:
        *fake = w->host.memory;
        fake->memory = VK_NULL_HANDLE;
        return fake;
    case MEMORY_OF_VK2:
        *fake = w->host.memory;
        fake->device = w->vk2.device;
        return fake;
    case MEMORY_LOCAL: return &w->local.memory;
    case MEMORY_LOCAL_NOT_HOST_VISIBLE:
        *fake = w->local.memory;
        fake->property_flags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        return fake;
    }
    return NULL;
}

static void range_of(enum range_arg arg, VkDeviceSize alloc, VkDeviceSize *offset, VkDeviceSize *size)
{
    *offset = 0;
    *size = 4096;
    switch (arg) {
    case RANGE_4K: break;
    case RANGE_ZERO: *size = 0; break;
    case RANGE_PAST_END: *size = alloc + 4; break;
    case RANGE_AT_END: *offset = alloc, *size = 4; break;
    case RANGE_OVERFLOW: *offset = UINT64_MAX - 2, *size = 8; break;
    case RANGE_MISALIGNED: *offset = 4, *size = 1024; break;
    }
}

static cl_command_queue queue_of(const struct world *w, enum queue_arg arg)
{
    return arg == QUEUE_NULL ? NULL : arg == QUEUE_OTHER_CONTEXT ? w->other.queue : w->f.queue;
}

static clmem_handle *handle_of(const struct world *w, enum handle_arg arg)
{
    return arg == HANDLE_NULL ? NULL : arg == HANDLE_PLAIN ? w->plain : w->good;
}

/* Makes the case's call. *out_cleared: the call left its out-parameter
 * NULL (true for calls without one, or when it is NULL itself). Whatever
 * a call wrongly made is let go of. */
static clmem_status call(struct world *w, const struct error_case *c, bool *out_cleared)
{
    clmem_bridge *b = c->bridge == BRIDGE_NULL ? NULL : w->b;
    cl_command_queue queue = queue_of(w, c->queue);
    clmem_handle *h = JUNK_HANDLE;
    clmem_bridge_vk_memory fake;
    const clmem_bridge_vk_memory *memory;
    VkDeviceSize offset, size;
    clmem_status s;

    *out_cleared = true;
    switch (c->call) {
    case BRIDGE_CREATE: {
        clmem_bridge_info info = info_of(w, c->info);
        clmem_bridge *out = JUNK_BRIDGE;
        s = clmem_bridge_create(c->info == INFO_NULL ? NULL : &info, c->no_out ? NULL : &out);
        *out_cleared = c->no_out || out == NULL;
        if (out != NULL && out != JUNK_BRIDGE)
            clmem_bridge_unref(out);
        return s;
    }
    case FINISH: return clmem_bridge_finish(b, 0);
    case IMPORT_VK:
        memory = memory_of(w, c->memory, &fake);
        range_of(c->range, w->host.memory.allocation_size, &offset, &size);
        s = clmem_bridge_import_vk(b, memory, offset, size, c->path, w->counted, queue, c->flags,
                                   c->no_out ? NULL : &h);
        break;
    case IMPORT_FD:
        range_of(c->range, 4096, &offset, &size);
        s = clmem_bridge_import_fd(b, c->fd, c->path, 4096, offset, size, w->counted, queue, 0,
                                   c->no_out ? NULL : &h);
        break;
    case PAIR:
        return clmem_bridge_pair(c->no_instance ? VK_NULL_HANDLE : w->vk.instance, NULL,
                                 c->no_physical_device ? VK_NULL_HANDLE : w->vk.physical_device, NULL, NULL);
    case CHECK_PATH: return clmem_bridge_check_path(b, c->path);
    case CHECK_SEMAPHORE: return clmem_bridge_check_semaphore(b, c->mode);
    case VK_BUFFER_CREATE: {
        VkBuffer buffer = (VkBuffer)(uintptr_t)1;
        clmem_bridge_vk_memory made;
        memset(&made, 0xab, sizeof made);
        range_of(c->range, 0, &offset, &size);
        s = clmem_bridge_vk_buffer_create(b, size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0, 0, &buffer, &made);
        *out_cleared = buffer == VK_NULL_HANDLE && made.memory == VK_NULL_HANDLE;
        if (s == CLMEM_OK)
            clmem_bridge_vk_buffer_destroy(b, buffer, &made);
        return s;
    }
    case SEMAPHORE_IMPORT: {
        clmem_bridge_semaphore *sem = JUNK_SEMAPHORE;
        s = clmem_bridge_semaphore_import(b, c->queue == QUEUE_NULL ? VK_NULL_HANDLE : w->vk.queue, w->sem, c->mode,
                                          w->counted, c->no_out ? NULL : &sem);
        *out_cleared = c->no_out || sem == NULL;
        if (sem != NULL && sem != JUNK_SEMAPHORE)
            clmem_bridge_semaphore_unref(sem);
        return s;
    }
    case ACQUIRE: return clmem_bridge_acquire(b, handle_of(w, c->handle), 0, NULL, NULL);
    case HANDLE_PATH: {
        clmem_bridge_path path;
        return clmem_bridge_handle_path(handle_of(w, c->handle), &path);
    }
    case HANDLE_FOR_QUEUE:
        s = clmem_bridge_handle_for_queue(handle_of(w, c->handle), queue, c->no_out ? NULL : &h);
        break;
    default: tap_bail("case \"%s\": no such call %d", c->what, (int)c->call);
    }
    /* the calls that make a handle */
    *out_cleared = c->no_out || h == NULL;
    if (h != NULL && h != JUNK_HANDLE)
        clmem_handle_unref(h);
    return s;
}

/* One TAP point: "<what> -> <want>", and what the point says of the
 * out-parameter where the call has one. */
static void run_case(struct world *w, const struct error_case *c)
{
    const char *out_note = "";
    clmem_status got;
    bool out_cleared, named, first, good;

    if (!has(w, c->needs)) {
        tap_skip(needs_missing[c->needs], "%s", c->what);
        return;
    }
    if (!c->no_out && (c->call == BRIDGE_CREATE || c->call == SEMAPHORE_IMPORT))
        out_note = ", *out NULL";
    else if (c->call == VK_BUFFER_CREATE)
        out_note = ", outputs cleared";
    clmem_error_clear();
    got = call(w, c, &out_cleared);
    named = !c->fragment || strstr(clmem_error_message(), c->fragment);
    first = got == CLMEM_OK || begins_with_name(clmem_error_message(), call_names[c->call]);
    good = got == c->want && out_cleared && named && first;
    if (good)
        tap_ok(true, "%s -> %s%s", c->what, clmem_status_name(c->want), out_note);
    else
        tap_ok(false, "%s -> %s%s | got %s%s: %s%s%s%s%s%s%s", c->what, clmem_status_name(c->want), out_note,
               clmem_status_name(got), out_cleared ? "" : ", out not cleared", clmem_error_message(),
               named ? "" : " (the message should name \"", named ? "" : c->fragment, named ? "" : "\")",
               first ? "" : " (the message should begin \"", first ? "" : call_names[c->call],
               first ? "" : ": \", once)");
}

static void run_cases(struct world *w, const struct error_case *table, size_t n)
{
    for (size_t i = 0; i < n; i++)
        run_case(w, &table[i]);
}
#define RUN_CASES(w, table) run_cases(w, table, sizeof table / sizeof table[0])

/* ------------------------------------------------ the cases set up apart */

/* After the refused creations: none retained the context; a good one
 * without a cl_device finds it, and its last unref lets go. */
static void check_creation(struct world *w)
{
    clmem_bridge_info good = good_info(w);
    clmem_bridge *out = NULL;
    clmem_status s;

    tap_is_int(cl_context_refcount(w->f.context), w->refs_before, "no failed bridge_create retained the context");
    /* A context without cl_device: the bridge finds the device itself. */
    good.cl_device = NULL;
    s = clmem_bridge_create(&good, &out);
    tap_ok(s == CLMEM_OK && clmem_bridge_cl_device(out) == w->f.device && clmem_bridge_context(out) == w->f.context,
           "bridge_create with cl_device NULL picks the context's device (%s)", s ? clmem_error_message() : "ok");
    if (s == CLMEM_OK) {
        tap_ok(clmem_bridge_ref(out) == out, "bridge_ref returns the bridge");
        clmem_bridge_unref(out);
        tap_is_int(clmem_bridge_finish(out, 0), CLMEM_OK, "finish of a bridge that imported nothing -> CLMEM_OK");
        clmem_bridge_unref(out);
    }
    tap_is_int(cl_context_refcount(w->f.context), w->refs_before, "its last unref released the context");
    tap_ok(clmem_bridge_ref(NULL) == NULL && clmem_bridge_context(NULL) == NULL &&
               clmem_bridge_cl_device(NULL) == NULL && clmem_bridge_vk_device(NULL) == VK_NULL_HANDLE &&
               clmem_bridge_caps(NULL) == 0,
           "bridge_ref, the accessors and caps are NULL-safe");
    clmem_bridge_unref(NULL);
}

/* Where OpenCL imports no opaque fd: the bridge says what is missing, its
 * caps agree, and an import_fd is refused before the fd is touched, which
 * stays open and the caller's. */
static void check_opaque_fd_missing(struct world *w)
{
    static const struct error_case refused = {"opaque fd where OpenCL cannot import it", IMPORT_VK,
                                              .memory = MEMORY_LOCAL, .path = CLMEM_BRIDGE_PATH_OPAQUE_FD,
                                              .want = CLMEM_ERR_UNSUPPORTED,
                                              .fragment = "cl_khr_external_memory_opaque_fd",
                                              .needs = NEEDS_VK_MEMORY_FD};
    char want[400];
    clmem_handle *h = JUNK_HANDLE;
    clmem_status s;
    int pipefd[2];

    if (clmem_bridge_check_path(w->b, CLMEM_BRIDGE_PATH_OPAQUE_FD) == CLMEM_OK) {
        static const char *const covered[] = {"opaque fd refusal", "caps agree", "opaque fd refusal",
                                              "import_fd refusal", "fd left open"};
        for (int i = 0; i < 5; i++)
            tap_skip("the device imports opaque fds: t/bridge/bridge-opaque-fd covers it", "%s", covered[i]);
        return;
    }
    snprintf(want, sizeof want, "cl_khr_external_memory_opaque_fd (not offered by %s)", w->f.platform_name);
    tap_ok(strstr(clmem_error_message(), want) != NULL || strstr(clmem_error_message(), "VK_KHR") != NULL ||
               strstr(clmem_error_message(), "UUID") != NULL,
           "check_path(opaque-fd) names what is missing: %s", clmem_error_message());
    tap_ok(!(clmem_bridge_caps(w->b) & CLMEM_BRIDGE_CAP_OPAQUE_FD), "caps agree: no CLMEM_BRIDGE_CAP_OPAQUE_FD");
    run_case(w, &refused);
    if (pipe(pipefd) != 0)
        tap_bail("pipe failed");
    s = clmem_bridge_import_fd(w->b, pipefd[0], CLMEM_BRIDGE_PATH_OPAQUE_FD, 4096, 0, 4096, w->counted, w->f.queue, 0,
                               &h);
    tap_ok(s == CLMEM_ERR_UNSUPPORTED && h == NULL && strstr(clmem_error_message(), "cl_khr_external_memory_opaque_fd"),
           "import_fd of a pipe where opaque fd is unsupported -> CLMEM_ERR_UNSUPPORTED%s%s",
           s == CLMEM_ERR_UNSUPPORTED ? "" : " | got: ", s == CLMEM_ERR_UNSUPPORTED ? "" : clmem_error_message());
    tap_ok(fd_is_open(pipefd[0]), "the refused fd is still open and the caller's");
    close(pipefd[0]);
    close(pipefd[1]);
}

/* Unpaired devices: which status depends on what the machine has. */
static void check_unpaired(struct world *w)
{
    cl_platform_id pp = (cl_platform_id)(uintptr_t)1;
    cl_device_id pd = (cl_device_id)(uintptr_t)1;
    bool any_uuid = false;
    cl_platform_id ps[16];
    cl_device_id ds[16];
    int nd = cl_all_devices(ps, ds, 16);
    clmem_status s;

    for (int i = 0; i < nd; i++) {
        size_t sz = 0;
        char *ext;
        clGetDeviceInfo(ds[i], CL_DEVICE_EXTENSIONS, 0, NULL, &sz);
        if (!(ext = malloc(sz + 1)))
            tap_bail("malloc failed");
        clGetDeviceInfo(ds[i], CL_DEVICE_EXTENSIONS, sz, ext, NULL);
        ext[sz] = 0;
        any_uuid = any_uuid || strstr(ext, "cl_khr_device_uuid") != NULL;
        free(ext);
    }
    s = clmem_bridge_pair(w->vk.instance, NULL, w->vk.physical_device, &pp, &pd);
    if (!any_uuid)
        tap_ok(s == CLMEM_ERR_UNSUPPORTED && pp == NULL && pd == NULL &&
                   strstr(clmem_error_message(), "cl_khr_device_uuid"),
               "unpaired devices, no OpenCL UUIDs -> CLMEM_ERR_UNSUPPORTED naming cl_khr_device_uuid, outputs "
               "cleared");
    else
        tap_ok(s == CLMEM_OK || (s == CLMEM_ERR_DEVICE_MISMATCH && pp == NULL && pd == NULL),
               "pairing with UUIDs present -> the paired device or CLMEM_ERR_DEVICE_MISMATCH (%s)",
               s ? clmem_error_message() : "paired");
}

/* A semaphore of bridge b used through bridge b2. Vulkan signals it first,
 * so that a wait wrongly accepted returns instead of hanging. */
static void check_semaphore_across_bridges(struct world *w)
{
    clmem_bridge_semaphore *sem = NULL;
    clmem_status s = clmem_bridge_semaphore_import(w->b, w->vk.queue, w->sem, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED,
                                                   w->counted, &sem);

    if (tap_ok(s == CLMEM_OK && clmem_bridge_semaphore_get_mode(sem) == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED,
               "a host-ordered semaphore for the cross-bridge checks (%s)", s ? clmem_error_message() : "ok")) {
        VkSubmitInfo si = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .signalSemaphoreCount = 1, .pSignalSemaphores = &w->sem};
        if (vkQueueSubmit(w->vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS ||
            vkQueueWaitIdle(w->vk.queue) != VK_SUCCESS)
            tap_bail("signalling the semaphore from Vulkan failed");
        s = clmem_bridge_finish(w->b, 0);
        tap_ok(s == CLMEM_ERR_IN_USE, "finish while a semaphore lives -> CLMEM_ERR_IN_USE (%s)", clmem_status_name(s));
        s = clmem_bridge_semaphore_wait(w->b2, sem, w->other.queue, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "semaphore_wait through another bridge -> CLMEM_ERR_INVALID_VALUE");
        s = clmem_bridge_semaphore_signal(w->b2, sem, w->other.queue, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "semaphore_signal through another bridge -> CLMEM_ERR_INVALID_VALUE");
        tap_ok(clmem_bridge_semaphore_ref(sem) == sem, "semaphore_ref returns the semaphore");
        clmem_bridge_semaphore_unref(sem);
        clmem_bridge_semaphore_unref(sem);
    } else {
        for (int i = 0; i < 4; i++)
            tap_skip("no semaphore to check with", "cross-bridge semaphore check");
    }
    tap_ok(clmem_bridge_semaphore_ref(NULL) == NULL, "semaphore_ref(NULL) is NULL");
    clmem_bridge_semaphore_unref(NULL);
}

/* The handoff of a good import: refused through another bridge with
 * nothing enqueued and its state unchanged, acquired twice, handles for
 * other queues, and dropped while acquired. */
static void check_handoff(struct world *w)
{
    clmem_handle *hq = NULL;
    clmem_bridge_path path;
    cl_int err;
    cl_event gate = clCreateUserEvent(w->f.context, &err);
    cl_command_queue q2 = clCreateCommandQueueWithProperties(w->f.context, w->f.device, NULL, &err);
    clmem_status s;

    if (err != CL_SUCCESS || !gate || !q2)
        tap_bail("a second queue and a user event: %d", err);
    s = clmem_bridge_import_vk(w->b, &w->host.memory, 0, 4096, CLMEM_BRIDGE_PATH_HOST_MAPPED, w->counted, w->f.queue,
                               CL_MEM_READ_WRITE, &w->good);
    if (!tap_ok(s == CLMEM_OK, "a good import for the handoff checks (%s)", s ? clmem_error_message() : "ok"))
        tap_bail("cannot check the handoff");
    s = clmem_bridge_acquire(NULL, w->good, 0, NULL, NULL);
    tap_is_int(s, CLMEM_ERR_NULL_POINTER, "acquire(NULL bridge) -> CLMEM_ERR_NULL_POINTER");
    s = clmem_bridge_release(w->b, w->good, 0, NULL, NULL);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "release before acquire -> CLMEM_ERR_INVALID_VALUE");

    /* A handle of bridge b passed to bridge b2: refused, and nothing is
     * enqueued (nothing waits on the incomplete gate in the wait list). */
    s = clmem_bridge_acquire(w->b2, w->good, 1, &gate, NULL);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "acquire through another bridge -> CLMEM_ERR_INVALID_VALUE");
    tap_ok(cl_queue_drains(w->f.queue), "  and nothing was enqueued on the handle's queue");
    s = clmem_bridge_release(w->b, w->good, 0, NULL, NULL);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "  and the memory is still not acquired");

    s = clmem_bridge_acquire(w->b, w->good, 0, NULL, NULL);
    tap_is_int(s, CLMEM_OK, "acquire");
    s = clmem_bridge_acquire(w->b, w->good, 0, NULL, NULL);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "acquire of an acquired buffer -> CLMEM_ERR_INVALID_VALUE");
    s = clmem_bridge_release(w->b2, w->good, 1, &gate, NULL);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "release through another bridge -> CLMEM_ERR_INVALID_VALUE");
    tap_ok(cl_queue_drains(w->f.queue), "  and nothing was enqueued on the handle's queue");
    s = clmem_bridge_acquire(w->b, w->good, 0, NULL, NULL);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "  and the memory is still acquired");
    clSetUserEventStatus(gate, CL_COMPLETE);
    clReleaseEvent(gate);

    s = clmem_bridge_handle_path(w->good, &path);
    tap_ok(s == CLMEM_OK && path == CLMEM_BRIDGE_PATH_HOST_MAPPED, "handle_path says host-mapped");
    RUN_CASES(w, good_handle_cases);
    s = clmem_bridge_handle_for_queue(w->good, q2, &hq);
    tap_ok(s == CLMEM_OK && hq && clmem_handle_mem(hq) == clmem_handle_mem(w->good) && clmem_handle_queue(hq) == q2,
           "handle_for_queue with another queue of the context: the same cl_mem on that queue (%s)",
           s ? clmem_error_message() : "ok");

    s = clmem_bridge_finish(w->b, 0);
    tap_ok(s == CLMEM_ERR_IN_USE, "finish while an import has handles -> CLMEM_ERR_IN_USE (%s)",
           s ? clmem_error_message() : "CLMEM_OK");
    /* dropped while acquired: teardown hands it back itself */
    clmem_handle_unref(hq);
    clmem_handle_unref(w->good);
    w->good = NULL;
    s = bridge_settle(w->b);
    tap_ok(s == CLMEM_OK, "finish after the last handle -> CLMEM_OK (%s)", s ? clmem_error_message() : "ok");
    clReleaseCommandQueue(q2);
}

/* ------------------------------------------------------ start and end */

static void world_open(struct world *w)
{
    cl_platform_id ps[16];
    cl_device_id ds[16];
    int nd;

    memset(w, 0, sizeof *w);
    bridge_open_vulkan(&w->vk);
    w->have_vk2 = vkctx_open(&w->vk2, -1);
    cl_fixture_open(&w->f);
    cl_fixture_open_on(&w->other, w->f.platform, w->f.device);
    /* A cl_device that is not in the context: another device, if the
     * machine has one. */
    nd = cl_all_devices(ps, ds, 16);
    for (int i = 0; i < nd && !w->stranger; i++)
        if (ds[i] != w->f.device)
            w->stranger = ds[i];
    w->fds_before = fd_count();
    w->refs_before = cl_context_refcount(w->f.context);
    w->other_refs_before = cl_context_refcount(w->other.context);
}

/* The bridges and what the cases pass them. */
static void world_bridges(struct world *w)
{
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};

    w->b = bridge_open(&w->vk, &w->f, 0);
    w->b2 = bridge_open(&w->vk, &w->other, 0);
    w->host_ka = vk_owned_new(&w->host, w->b, &w->vk, 64 * 1024, path_memory_props(CLMEM_BRIDGE_PATH_HOST_MAPPED), 0);
    w->local_ka = vk_owned_new(&w->local, w->b, &w->vk, 64 * 1024, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                               w->vk.has_memory_fd ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT : 0);
    w->counted = clmem_keepalive_new(count_release, NULL);
    if (!w->counted)
        tap_bail("clmem_keepalive_new failed");
    if (vkCreateSemaphore(w->vk.device, &sci, NULL, &w->sem) != VK_SUCCESS)
        tap_bail("vkCreateSemaphore failed");
    w->plain_mem = cl_fixture_buffer(&w->f, 4096);
    if (clmem_handle_wrap(w->plain_mem, w->f.queue, 0, NULL, &w->plain) != CLMEM_OK)
        tap_bail("clmem_handle_wrap failed: %s", clmem_error_message());
}

/* Everything let go of: nothing may be left behind. */
static void world_close(struct world *w)
{
    clmem_handle_unref(w->plain);
    clReleaseMemObject(w->plain_mem);
    vkDestroySemaphore(w->vk.device, w->sem, NULL);
    clmem_keepalive_unref(w->counted);
    tap_is_int(anchor_releases, 1, "no failed call kept a reference on the caller's anchor");
    clmem_keepalive_unref(w->host_ka);
    clmem_keepalive_unref(w->local_ka);
    tap_ok(atomic_load(&w->host.released) == 1 && atomic_load(&w->local.released) == 1,
           "the Vulkan buffers were freed");
    tap_is_int(bridge_settle(w->b2), CLMEM_OK, "the second bridge has nothing to finish");
    clmem_bridge_unref(w->b2);
    clmem_bridge_unref(w->b);
    tap_is_int(cl_context_refs_settled(w->f.context, w->refs_before), w->refs_before,
               "no OpenCL object left behind (context reference count)");
    tap_is_int(cl_context_refs_settled(w->other.context, w->other_refs_before), w->other_refs_before,
               "nor in the other context (the second bridge released it)");
    tap_is_int(fd_count(), w->fds_before, "no file descriptor leaked");
    cl_fixture_close(&w->other);
    cl_fixture_close(&w->f);
    if (w->have_vk2)
        vkctx_close(&w->vk2);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&w->vk);
}

int main(void)
{
    static struct world w;

    world_open(&w);
    RUN_CASES(&w, creation_cases);
    check_creation(&w);
    world_bridges(&w);
    RUN_CASES(&w, cases);
    check_opaque_fd_missing(&w);
    check_unpaired(&w);
    check_semaphore_across_bridges(&w);
    check_handoff(&w);
    world_close(&w);
    return tap_done();
}
