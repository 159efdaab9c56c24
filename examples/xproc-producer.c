/* SPDX-License-Identifier: MIT */
/* Frames from Vulkan in this process to OpenCL in another, with no copy:
 * the producer's side (examples/xproc-consumer.c is the other).
 *
 *   xproc-producer SOCKET [--frames N] [--batch B] [--expect-consumer-death]
 *
 * Run it, then xproc-consumer SOCKET (another terminal, or this one with
 * the producer in the background: man clmem-ipc). It listens at SOCKET
 * (a socket file left there by a producer that was killed is replaced),
 * waits up to 10 s for the consumer, offers three frames in one exportable allocation
 * (an RGBA8 image whose rows are padded, an NV12 image and a plain buffer),
 * and sends N frames (64 unless told): for each, Vulkan copies a pattern into a free frame
 * (vkCmdCopyBuffer from a staging buffer), and clmem_ipc_producer_ready()
 * hands it over once the copy's fence signalled. The consumer's kernel
 * checks every byte and changes it (b ^ 0x5a); when a frame comes back the
 * producer reads it and checks every byte: the texels changed, the row
 * padding not.
 *
 * With --batch B (1 to 32) frames go over in batches: it offers 2 x B
 * frames (the same three kinds in turn), so that one batch is written
 * while the consumer has the other; clmem_ipc_producer_next_many() takes
 * up to B free frames, one submission writes them all, and
 * clmem_ipc_producer_ready_many() hands them over in one READY once its
 * fence signalled. The consumer gives them back together.
 *
 * With --expect-consumer-death the consumer is to die during the run: the
 * producer then checks that every frame comes back (the library's reclaim
 * rule) and that its own queue still runs, prints when the last frame came
 * back (CLOCK_MONOTONIC, for the test that killed the consumer), and exits 0.
 *
 * Exit status: 0 every check passed; 1 a check or a call failed; 3 the
 * connection failed, or the consumer went away (the sentence is printed;
 * everything is still torn down); 2 usage; 77 no Vulkan device with
 * VK_KHR_external_memory_fd. Built with nothing but
 * `pkg-config --cflags --libs clmem-ipc`. */
#include <clmem-ipc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_NS UINT64_C(10000000000)
#define FRAME_STRIDE 65536 /* each frame at a multiple of 64 KiB: aligned for any OpenCL device */
#define FRAMES 3      /* offered without --batch */
#define MAX_BATCH (CLMEM_IPC_MAX_FRAMES / 2)
#define W 64
#define H 48

/* The byte the producer writes at `offset` of plane `plane` of the frame
 * sent as sequence `seq`; the consumer's kernel computes the same. */
static unsigned char pattern(uint64_t seq, uint32_t plane, uint64_t offset)
{
    return (unsigned char)(seq * 131u + plane * 71u + offset * 7u + (offset >> 8));
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static const char usage[] =
    "usage: %s SOCKET [--frames N] [--batch B] [--expect-consumer-death]\n"
    "Listens at SOCKET for one xproc-consumer and sends it N frames (64 unless told),\n"
    "checking every byte when each comes back.\n"
    "  --batch B  hand frames over B at a time (1 to 32), with clmem_ipc_producer_next_many()\n"
    "             and clmem_ipc_producer_ready_many(), over 2 x B frames\n";

/* The library's sentence names the call that failed and why. */
static int fail(void)
{
    fprintf(stderr, "producer: %s\n", clmem_error_message());
    return 1;
}

#ifdef CLMEM_XPROC_FD_WATCH
/* The test's build (ipc/ipc.am): every fd vkGetMemoryFdKHR exports is
 * marked, and at the end none may be open here. */
#include "fd-watch.h"
#define GET_INSTANCE_PROC_ADDR fd_watch_get_instance_proc_addr
#else
#define GET_INSTANCE_PROC_ADDR NULL
#endif

struct vk {
    VkInstance instance;
    VkPhysicalDevice pd;
    VkDevice device;
    VkQueue queue;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
    VkPhysicalDeviceMemoryProperties mp;
};

static int find_type(const struct vk *v, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < v->mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (v->mp.memoryTypes[i].propertyFlags & want) == want)
            return (int)i;
    return -1;
}

/* A buffer bound to new memory: exportable as an opaque fd (the frames), or
 * host-visible (the staging buffer). */
static bool make_buffer(struct vk *v, VkDeviceSize size, bool exportable, VkBuffer *buf, VkDeviceMemory *mem,
                        uint32_t *type_out, VkMemoryPropertyFlags *flags_out, VkDeviceSize *allocation_size_out)
{
    VkExternalMemoryBufferCreateInfo xb = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                           .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .pNext = exportable ? &xb : NULL,
                             .size = size,
                             .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT};
    VkMemoryRequirements mr;
    if (vkCreateBuffer(v->device, &bi, NULL, buf) != VK_SUCCESS)
        return false;
    vkGetBufferMemoryRequirements(v->device, *buf, &mr);
    VkMemoryPropertyFlags want = exportable ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
                                            : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int type = find_type(v, mr.memoryTypeBits, want);
    if (type < 0 && exportable)
        type = find_type(v, mr.memoryTypeBits, 0);
    if (type < 0)
        return false;
    VkExportMemoryAllocateInfo xa = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                     .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = exportable ? &xa : NULL,
                               .allocationSize = mr.size, .memoryTypeIndex = (uint32_t)type};
    if (vkAllocateMemory(v->device, &ai, NULL, mem) != VK_SUCCESS ||
        vkBindBufferMemory(v->device, *buf, *mem, 0) != VK_SUCCESS)
        return false;
    *type_out = (uint32_t)type;
    *flags_out = v->mp.memoryTypes[type].propertyFlags;
    *allocation_size_out = mr.size; /* what the consumer's import must be told */
    return true;
}

/* Copy frames idx[0 .. n) between the staging buffer and frame memory
 * (each at the same offset in both), in one submission, and wait unless
 * told not to (the fence then says when it completed): the producer's own
 * queue, never waiting on the consumer. */
static bool copy(struct vk *v, VkBuffer src, VkBuffer dst, uint32_t n, const uint32_t *idx, bool wait)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkBufferCopy regions[MAX_BATCH];
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &v->cb};
    for (uint32_t k = 0; k < n; k++)
        regions[k] = (VkBufferCopy){(VkDeviceSize)idx[k] * FRAME_STRIDE, (VkDeviceSize)idx[k] * FRAME_STRIDE,
                                    FRAME_STRIDE};
    vkResetCommandBuffer(v->cb, 0);
    vkBeginCommandBuffer(v->cb, &begin);
    vkCmdCopyBuffer(v->cb, src, dst, n, regions);
    vkEndCommandBuffer(v->cb);
    vkResetFences(v->device, 1, &v->fence);
    if (vkQueueSubmit(v->queue, 1, &si, v->fence) != VK_SUCCESS)
        return false;
    return !wait || vkWaitForFences(v->device, 1, &v->fence, VK_TRUE, TIMEOUT_NS) == VK_SUCCESS;
}

static void vk_destroy(struct vk *v, VkBuffer staging, VkDeviceMemory staging_mem, VkBuffer frame_buf,
                       VkDeviceMemory frame_mem)
{
    vkDestroyFence(v->device, v->fence, NULL);
    vkDestroyCommandPool(v->device, v->pool, NULL);
    vkDestroyBuffer(v->device, staging, NULL);
    vkFreeMemory(v->device, staging_mem, NULL);
    vkDestroyBuffer(v->device, frame_buf, NULL);
    vkFreeMemory(v->device, frame_mem, NULL);
    vkDestroyDevice(v->device, NULL);
    vkDestroyInstance(v->instance, NULL);
}

/* Frame i's planes: offsets from the frame's start, sizes, pitches, row bytes. */
struct layout {
    uint32_t planes;
    uint64_t offset[2], size[2];
    uint32_t pitch[2], row_bytes[2], rows[2];
};

static struct layout layout_of(uint32_t frame)
{
    switch (frame % 3) {
    case 0: /* RGBA8 with rows padded to 320 bytes */
        return (struct layout){1, {0}, {320 * H}, {320}, {W * 4}, {H}};
    case 1: /* NV12: Y, then CbCr at half size, the chroma plane 4 KiB-aligned */
        return (struct layout){2, {0, 4096}, {W * H, W * H / 2}, {W, W}, {W, W}, {H, H / 2}};
    default: /* a buffer: one row of 4000 bytes */
        return (struct layout){1, {0}, {4000}, {0}, {4000}, {1}};
    }
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int frames = 64, batch = 0; /* batch 0: a frame at a time, with the per-frame calls */
    bool expect_death = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--frames") && i + 1 < argc)
            frames = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            batch = atoi(argv[++i]) >= 1 ? atoi(argv[i]) : -1; /* -1: not a batch size, refused below */
        else if (!strcmp(argv[i], "--expect-consumer-death"))
            expect_death = true;
        else if (!strcmp(argv[i], "--help")) {
            printf(usage, argv[0]);
            return 0;
        } else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else {
            fprintf(stderr, usage, argv[0]);
            return 2;
        }
    }
    if (!path || frames < 1 || batch < 0 || batch > MAX_BATCH) {
        fprintf(stderr, usage, argv[0]);
        return 2;
    }
    const uint32_t nframes = batch ? 2 * (uint32_t)batch : FRAMES; /* the frames offered */
    const uint32_t take = batch ? (uint32_t)batch : 1;             /* frames handed over at a time */

    /* Vulkan with VK_KHR_external_memory_fd. */
    struct vk v = {0};
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    uint32_t n = 1;
    if (vkCreateInstance(&ici, NULL, &v.instance) != VK_SUCCESS ||
        vkEnumeratePhysicalDevices(v.instance, &n, &v.pd) < 0 || n == 0)
        return 77;
    const char *exts[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX];
    uint32_t next = 0;
    clmem_bridge_device_extensions(v.instance, NULL, v.pd, exts, &next);
    if (next == 0 || strcmp(exts[0], "VK_KHR_external_memory_fd")) {
        fprintf(stderr, "producer: the Vulkan device has no VK_KHR_external_memory_fd\n");
        return 77;
    }
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1,
                                   .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci, .enabledExtensionCount = next, .ppEnabledExtensionNames = exts};
    if (vkCreateDevice(v.pd, &dci, NULL, &v.device) != VK_SUCCESS)
        return 1;
    vkGetDeviceQueue(v.device, 0, 0, &v.queue);
    vkGetPhysicalDeviceMemoryProperties(v.pd, &v.mp);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vkCreateCommandPool(v.device, &pci, NULL, &v.pool);
    cai.commandPool = v.pool;
    vkAllocateCommandBuffers(v.device, &cai, &v.cb);
    vkCreateFence(v.device, &fci, NULL, &v.fence);

    /* One exportable allocation for the frames, and a staging buffer laid
     * out as it is (frame i at i x FRAME_STRIDE in both). */
    VkBuffer frame_buf, staging;
    VkDeviceMemory frame_mem, staging_mem;
    uint32_t frame_type, staging_type;
    VkMemoryPropertyFlags frame_flags, staging_flags;
    VkDeviceSize frame_alloc_size, staging_alloc_size;
    unsigned char *host;
    if (!make_buffer(&v, nframes * FRAME_STRIDE, true, &frame_buf, &frame_mem, &frame_type, &frame_flags,
                     &frame_alloc_size) ||
        !make_buffer(&v, nframes * FRAME_STRIDE, false, &staging, &staging_mem, &staging_type, &staging_flags,
                     &staging_alloc_size) ||
        vkMapMemory(v.device, staging_mem, 0, nframes * FRAME_STRIDE, 0, (void **)&host) != VK_SUCCESS) {
        fprintf(stderr, "producer: allocating the frames failed\n");
        return 1;
    }

    /* The connection: a socket at PATH, one consumer. */
    int listen_fd, sock;
    clmem_status st = clmem_ipc_listen(path, &listen_fd);
    if (st == CLMEM_OK) {
        printf("producer: listening at %s\n", path);
        fflush(stdout);
        st = clmem_ipc_accept(listen_fd, TIMEOUT_NS, &sock);
        close(listen_fd);
        unlink(path);
    }
    if (st != CLMEM_OK) {
        fprintf(stderr, "producer: the connection failed: %s\n", clmem_error_message());
        vk_destroy(&v, staging, staging_mem, frame_buf, frame_mem);
        return 3;
    }
    clmem_ipc_producer_info info = {.size = sizeof info, .instance = v.instance,
                                    .get_instance_proc_addr = GET_INSTANCE_PROC_ADDR, .physical_device = v.pd,
                                    .device = v.device, .socket_fd = sock};
    clmem_ipc_producer *p;
    if (clmem_ipc_producer_create(&info, &p) != CLMEM_OK)
        return fail();

    /* Offer the frames: the images as clmem_bridge_vk_image descriptions of
     * the buffer's memory (an image laid out by other means), the buffer as
     * a range. */
    clmem_bridge_vk_memory mem = {.device = v.device, .memory = frame_mem,
                                  .allocation_size = frame_alloc_size, .property_flags = frame_flags,
                                  .export_types = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    for (uint32_t i = 0; i < nframes; i++) {
        struct layout l = layout_of(i);
        if (i % 3 == 2) {
            st = clmem_ipc_producer_add_buffer(p, &mem, frame_type, i * FRAME_STRIDE, l.size[0], 0, NULL);
        } else {
            clmem_bridge_vk_image img = {.memory = mem, .memory_offset = i * FRAME_STRIDE, .size = FRAME_STRIDE,
                                         .format = i % 3 ? VK_FORMAT_G8_B8R8_2PLANE_420_UNORM : VK_FORMAT_R8G8B8A8_UNORM,
                                         .extent = {W, H}, .tiling = VK_IMAGE_TILING_LINEAR, .plane_count = l.planes};
            for (uint32_t pl = 0; pl < l.planes; pl++)
                img.planes[pl] = (clmem_bridge_vk_image_plane){i * FRAME_STRIDE + l.offset[pl], l.size[pl], l.pitch[pl],
                                                               pl ? W / 2 : W, pl ? H / 2 : H};
            st = clmem_ipc_producer_add_image(p, &img, frame_type, NULL);
        }
        if (st != CLMEM_OK)
            return fail();
    }
    /* From here on, whatever happens, the producer is destroyed and the
     * Vulkan objects freed before the program says how it went. */
    int status = 0, sent = 0, checked = 0, wrong = 0, readies = 0; /* readies: READYs sent */
    int64_t sent_seq[CLMEM_IPC_MAX_FRAMES]; /* the sequence each frame was sent as; -1: not lent */
    for (uint32_t i = 0; i < nframes; i++)
        sent_seq[i] = -1;
    double all_back_ms = 0;
    if (clmem_ipc_producer_start(p, TIMEOUT_NS) != CLMEM_OK) {
        fprintf(stderr, "producer: the connection failed: %s\n", clmem_error_message());
        status = 3;
        goto teardown;
    }
    printf("producer: consumer connected, %d frames to send through the %s path\n", frames,
           clmem_bridge_path_name(clmem_ipc_producer_peer_path(p)));
    fflush(stdout);

    /* The loop: free frames (each checked first if it comes back from the
     * consumer), written, handed over; then every frame back. Without
     * --batch a frame at a time (clmem_ipc_producer_next() and _ready());
     * with it, up to B at a time (their _many forms). */
    int out = 0; /* frames handed over and not yet back from next() or next_many() */
    while (out > 0 || (sent < frames && clmem_ipc_producer_state(p) == CLMEM_IPC_STATE_OPEN)) {
        uint32_t idx[MAX_BATCH], count = 1;
        if (batch)
            st = clmem_ipc_producer_next_many(p, TIMEOUT_NS, take, idx, &count);
        else
            st = clmem_ipc_producer_next(p, TIMEOUT_NS, &idx[0]);
        if (st != CLMEM_OK) {
            fprintf(stderr, "producer: the connection failed: %s\n", clmem_error_message());
            status = 3;
            break;
        }
        uint32_t back[MAX_BATCH], nback = 0; /* of these, the frames the consumer gave back */
        for (uint32_t k = 0; k < count; k++)
            if (sent_seq[idx[k]] >= 0) {
                back[nback++] = idx[k];
                out--;
            }
        if (nback && clmem_ipc_producer_state(p) == CLMEM_IPC_STATE_OPEN) {
            /* Back from the consumer: every texel byte changed, padding not. */
            if (!copy(&v, frame_buf, staging, nback, back, true)) {
                fprintf(stderr, "producer: reading frames back failed\n");
                status = 1;
                break;
            }
            for (uint32_t k = 0; k < nback; k++) {
                uint32_t f = back[k];
                struct layout l = layout_of(f);
                const unsigned char *b = host + (uint64_t)f * FRAME_STRIDE;
                for (uint32_t pl = 0; pl < l.planes; pl++)
                    for (uint64_t o = 0; o < l.size[pl]; o++) {
                        bool texel = l.pitch[pl] == 0 || o % l.pitch[pl] < l.row_bytes[pl];
                        unsigned char want = pattern((uint64_t)sent_seq[f], pl, o) ^ (texel ? 0x5a : 0);
                        if (b[l.offset[pl] + o] != want && wrong++ < 5)
                            fprintf(stderr,
                                    "producer: frame %u (sequence %lld) plane %u byte %llu is 0x%02x, want 0x%02x\n",
                                    f, (long long)sent_seq[f], pl, (unsigned long long)o, b[l.offset[pl] + o], want);
                    }
                checked++;
            }
        }
        for (uint32_t k = 0; k < count; k++)
            sent_seq[idx[k]] = -1;
        if (sent == frames || clmem_ipc_producer_state(p) != CLMEM_IPC_STATE_OPEN)
            continue; /* only collecting the frames now */
        if (count > (uint32_t)(frames - sent))
            count = (uint32_t)(frames - sent); /* the rest stay the producer's, unwritten */
        for (uint32_t k = 0; k < count; k++) {
            struct layout l = layout_of(idx[k]);
            unsigned char *b = host + (uint64_t)idx[k] * FRAME_STRIDE;
            for (uint32_t pl = 0; pl < l.planes; pl++)
                for (uint64_t o = 0; o < l.size[pl]; o++)
                    b[l.offset[pl] + o] = pattern((uint64_t)(sent + (int)k), pl, o);
        }
        if (!copy(&v, staging, frame_buf, count, idx, false)) {
            fprintf(stderr, "producer: writing frames failed\n");
            status = 1;
            break;
        }
        if (batch)
            st = clmem_ipc_producer_ready_many(p, count, idx, v.fence, TIMEOUT_NS);
        else
            st = clmem_ipc_producer_ready(p, idx[0], v.fence, TIMEOUT_NS);
        if (st == CLMEM_OK) {
            for (uint32_t k = 0; k < count; k++)
                sent_seq[idx[k]] = sent++;
            out += (int)count;
            readies++;
        } else if (clmem_ipc_producer_state(p) == CLMEM_IPC_STATE_OPEN ||
                   clmem_ipc_producer_state(p) == CLMEM_IPC_STATE_DROPPED) {
            fprintf(stderr, "producer: the connection failed: %s\n", clmem_error_message());
            status = 3;
            break;
        }
        /* else the consumer is gone: collect the frames */
    }
    all_back_ms = now_ms(); /* CLOCK_MONOTONIC: the test compares it with when it killed the consumer */

teardown:;
    clmem_ipc_state end = clmem_ipc_producer_state(p);
    uint32_t lent = clmem_ipc_producer_lent(p);
    /* The producer's queue still runs: one more copy completes. */
    uint32_t first = 0;
    bool queue_ok = copy(&v, staging, frame_buf, 1, &first, true);
    clmem_ipc_producer_destroy(p);

    if (wrong) {
        fprintf(stderr, "producer: %d wrong bytes in the frames that came back\n", wrong);
        status = status ? status : 1;
    }
    if (!queue_ok) {
        fprintf(stderr, "producer: the Vulkan queue did not complete a copy after the run\n");
        status = status ? status : 1;
    }
    if (status == 0 && !expect_death && end != CLMEM_IPC_STATE_OPEN) {
        fprintf(stderr, "producer: the consumer went away\n");
        status = 3;
    }
    if (status == 3) {
        printf("producer: the connection is %s after %d frames (%u not back)\n", clmem_ipc_state_name(end), sent, lent);
    } else if (expect_death) {
        printf("producer: the connection is %s after %d frames; every frame back at %.3f ms (CLOCK_MONOTONIC); the "
               "queue still runs\n", clmem_ipc_state_name(end), sent, all_back_ms);
        if (end != CLMEM_IPC_STATE_PEER_GONE || lent) {
            fprintf(stderr, "producer: want the consumer gone (peer-gone) and every frame back\n");
            status = status ? status : 1;
        }
    } else if (status == 0 && sent == frames && checked == sent) {
        printf("producer: %d frames sent, %d checked when they came back, every byte as the consumer's kernel left "
               "it\n", sent, checked);
        if (batch)
            printf("producer: the frames went in %d batches of at most %d\n", readies, batch);
    } else {
        fprintf(stderr, "producer: sent %d of %d frames, checked %d when they came back%s\n", sent, frames, checked,
                wrong ? ", some bytes wrong (see above)" : "");
        status = status ? status : 1;
    }

    vk_destroy(&v, staging, staging_mem, frame_buf, frame_mem);
#ifdef CLMEM_XPROC_FD_WATCH
    char list[512];
    unsigned open_fds = fd_watch_open(list, sizeof list);
    printf("producer: %u memory fds exported, %u still open here (%s)\n", fd_watch_exported(), open_fds, list);
    if (open_fds)
        status = status ? status : 1;
#endif
    fflush(stdout);
    return status;
}
