/* SPDX-License-Identifier: MIT */
/* Frames from Vulkan in another process to OpenCL in this one, with no
 * copy: the consumer's side (examples/xproc-producer.c is the other).
 *
 *   xproc-consumer SOCKET [--path best|opaque-fd|host-mapped] [--batch B]
 *                         [--spin-frame N [--spin-iterations M]] [--hold-frame N]
 *
 * It connects to SOCKET, trying for up to 10 s while nobody listens there
 * (xproc-producer SOCKET is the other side: man clmem-ipc), and takes frames until the producer ends the
 * stream. On each frame's planes an OpenCL kernel checks every byte
 * against the pattern the producer wrote and changes it (b ^ 0x5a); then
 * the frame's handles are dropped, which gives it back to the producer once
 * the kernel completed.
 *
 * With --batch B (1 to 64) it takes frames in batches:
 * clmem_ipc_consumer_next_many() hands out up to B frames already received
 * with one acquire, and the batch goes back to the producer as one, in one
 * FREE, once the last handle of any of its frames is dropped (run the
 * producer with --batch too, so that more than one frame comes at once).
 *
 * For the tests of death: --spin-frame N queues a long kernel on frame N,
 * prints "consumer: spinning on frame N" and waits for it (the test kills
 * the consumer then); --hold-frame N keeps frame N, prints "consumer:
 * holding frame N", takes frames until the producer is gone (the test kills
 * it), and only then checks frame N's bytes and drops it: the frame stays
 * valid across the producer's death. With --batch, holding frame N holds
 * its whole batch: none of it goes back before frame N's handles go.
 *
 * Exit status: 0 every check passed; 1 a check failed; 3 the connection
 * failed, nobody listening at SOCKET within 10 s included (the sentence is
 * printed; everything is still torn down); 2 usage;
 * 77 no Vulkan or OpenCL. Built with nothing but
 * `pkg-config --cflags --libs clmem-ipc`. */
#include <clmem-ipc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TIMEOUT_NS UINT64_C(10000000000)

static const char usage[] =
    "usage: %s SOCKET [--path best|opaque-fd|host-mapped] [--batch B] [--spin-frame N [--spin-iterations M]]\n"
    "       [--hold-frame N]\n"
    "Connects to the xproc-producer listening at SOCKET and checks every byte of every frame it sends.\n"
    "  --batch B  take frames up to B at a time (1 to 64) with clmem_ipc_consumer_next_many(),\n"
    "             each batch given back as one\n";

#ifdef CLMEM_XPROC_FD_WATCH
/* The test's build (ipc/ipc.am): the fds the producer exported are marked
 * with its pid as their owner (F_SETOWN), which travels with them; at the
 * end none may be open here. */
#include <dirent.h>
#include <fcntl.h>
static unsigned marked_fds_open(char *list, size_t len)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    unsigned n = 0;
    size_t used = 0;
    list[0] = '\0';
    while (d && (e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == dirfd(d) || fcntl(fd, F_GETOWN) == 0)
            continue;
        n++;
        used += (size_t)snprintf(list + used, used < len ? len - used : 0, "%sfd %d (owner %d)", n > 1 ? ", " : "",
                                 fd, fcntl(fd, F_GETOWN));
    }
    if (d)
        closedir(d);
    if (!n)
        snprintf(list, len, "none");
    return n;
}
#endif

/* The kernel's copy of the producer's pattern (examples/xproc-producer.c),
 * and the check: one work item per row. */
static const char *src =
    "uchar pattern(uint seq, uint plane, uint off)\n"
    "{ return (uchar)(seq * 131u + plane * 71u + off * 7u + (off >> 8)); }\n"
    "__kernel void check_and_mark(__global uchar *p, uint pitch, uint row_bytes, uint seq, uint plane,\n"
    "                             __global uint *bad)\n"
    "{\n"
    "    uint y = get_global_id(0);\n"
    "    for (uint x = 0; x < row_bytes; x++) {\n"
    "        uint off = y * pitch + x;\n"
    "        if (p[off] != pattern(seq, plane, off)) atomic_inc(bad);\n"
    "        p[off] ^= (uchar)0x5a;\n"
    "    }\n"
    "}\n"
    "__kernel void spin(__global uint *out, uint n)\n"
    "{ uint x = 1u; for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u; out[0] = x; }\n";

struct cl {
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel check, spin;
    cl_mem bad, scratch;
};

/* Check and mark every plane of frame f on the queue (not waited for). */
static bool check_frame(struct cl *cl, const clmem_ipc_frame *f)
{
    for (uint32_t i = 0; i < f->plane_count; i++) {
        const clmem_ipc_plane *p = &f->planes[i];
        cl_mem m = clmem_handle_mem(p->handle);
        cl_uint pitch = p->row_pitch, row_bytes = p->width ? p->width * p->texel_bytes : (cl_uint)p->size;
        cl_uint seq = (cl_uint)f->sequence, plane = i;
        size_t rows = p->height ? p->height : 1;
        clSetKernelArg(cl->check, 0, sizeof m, &m);
        clSetKernelArg(cl->check, 1, sizeof pitch, &pitch);
        clSetKernelArg(cl->check, 2, sizeof row_bytes, &row_bytes);
        clSetKernelArg(cl->check, 3, sizeof seq, &seq);
        clSetKernelArg(cl->check, 4, sizeof plane, &plane);
        clSetKernelArg(cl->check, 5, sizeof cl->bad, &cl->bad);
        if (clEnqueueNDRangeKernel(cl->queue, cl->check, 1, NULL, &rows, NULL, 0, NULL, NULL) != CL_SUCCESS)
            return false;
    }
    return true;
}

static void drop_frame(clmem_ipc_frame *f)
{
    for (uint32_t i = 0; i < f->plane_count; i++)
        clmem_handle_unref(f->planes[i].handle); /* the last one gives the frame back, after the kernels */
    f->plane_count = 0;
}

int main(int argc, char **argv)
{
    const char *socket_path = NULL;
    clmem_bridge_path path = CLMEM_BRIDGE_PATH_BEST;
    long spin_frame = -1, hold_frame = -1;
    int batch = 0; /* 0: a frame at a time, with clmem_ipc_consumer_next() */
    cl_uint spin_iterations = 400u * 1000u * 1000u;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--path") && i + 1 < argc) {
            const char *v = argv[++i];
            path = !strcmp(v, "opaque-fd") ? CLMEM_BRIDGE_PATH_OPAQUE_FD
                   : !strcmp(v, "host-mapped") ? CLMEM_BRIDGE_PATH_HOST_MAPPED : CLMEM_BRIDGE_PATH_BEST;
        } else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            batch = atoi(argv[++i]) >= 1 ? atoi(argv[i]) : -1; /* -1: not a batch size, refused below */
        else if (!strcmp(argv[i], "--spin-frame") && i + 1 < argc)
            spin_frame = atol(argv[++i]);
        else if (!strcmp(argv[i], "--spin-iterations") && i + 1 < argc)
            spin_iterations = (cl_uint)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--hold-frame") && i + 1 < argc)
            hold_frame = atol(argv[++i]);
        else if (!strcmp(argv[i], "--help")) {
            printf(usage, argv[0]);
            return 0;
        } else if (argv[i][0] != '-' && !socket_path)
            socket_path = argv[i];
        else {
            fprintf(stderr, usage, argv[0]);
            return 2;
        }
    }
    if (!socket_path || batch < 0 || batch > CLMEM_IPC_MAX_FRAMES) {
        fprintf(stderr, usage, argv[0]);
        return 2;
    }

    /* Vulkan (for the pairing, and the host-mapped path's imports) and
     * OpenCL on the same device, and the bridge between them. */
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance instance;
    VkPhysicalDevice pd;
    uint32_t n = 1;
    if (vkCreateInstance(&ici, NULL, &instance) != VK_SUCCESS ||
        vkEnumeratePhysicalDevices(instance, &n, &pd) < 0 || n == 0)
        return 77;
    const char *exts[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX];
    uint32_t next = 0;
    clmem_bridge_device_extensions(instance, NULL, pd, exts, &next);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1,
                                   .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci, .enabledExtensionCount = next, .ppEnabledExtensionNames = exts};
    VkDevice device;
    if (vkCreateDevice(pd, &dci, NULL, &device) != VK_SUCCESS)
        return 1;
    struct cl cl = {0};
    cl_platform_id platform;
    cl_int err;
    if (clmem_bridge_pair(instance, NULL, pd, &platform, &cl.dev) != CLMEM_OK &&
        (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
         clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &cl.dev, NULL) != CL_SUCCESS))
        return 77;
    cl.ctx = clCreateContext(NULL, 1, &cl.dev, NULL, NULL, &err);
    cl.queue = clCreateCommandQueueWithProperties(cl.ctx, cl.dev, NULL, &err);
    cl.prog = clCreateProgramWithSource(cl.ctx, 1, &src, NULL, &err);
    if (clBuildProgram(cl.prog, 1, &cl.dev, "", NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "consumer: the kernels did not build\n");
        return 1;
    }
    cl.check = clCreateKernel(cl.prog, "check_and_mark", &err);
    cl.spin = clCreateKernel(cl.prog, "spin", &err);
    cl_uint zero = 0;
    cl.bad = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
    cl.scratch = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    clmem_bridge_info binfo = {.size = sizeof binfo, .instance = instance, .physical_device = pd, .device = device,
                               .context = cl.ctx, .cl_device = cl.dev};
    clmem_bridge *bridge;
    if (clmem_bridge_create(&binfo, &bridge) != CLMEM_OK) {
        fprintf(stderr, "consumer: %s\n", clmem_error_message());
        return 1;
    }

    /* The connection, and the frames. */
    int sock;
    clmem_ipc_consumer *c = NULL;
    clmem_ipc_frame held = {0};
    long frames = 0, batches = 0; /* batches: next()'s or next_many()'s that gave frames */
    int status = 0;
    if (clmem_ipc_connect(socket_path, TIMEOUT_NS, &sock) != CLMEM_OK) {
        fprintf(stderr, "consumer: the connection failed: %s\n", clmem_error_message());
        status = 3;
        goto teardown;
    }
    clmem_ipc_consumer_info info = {.size = sizeof info, .bridge = bridge, .instance = instance,
                                    .physical_device = pd, .queue = cl.queue, .path = path, .socket_fd = sock};
    if (clmem_ipc_consumer_create(&info, &c) != CLMEM_OK) {
        fprintf(stderr, "consumer: %s\n", clmem_error_message());
        close(sock);
        return 1;
    }
    if (clmem_ipc_consumer_start(c, TIMEOUT_NS) != CLMEM_OK) {
        fprintf(stderr, "consumer: the connection failed: %s\n", clmem_error_message());
        status = 3;
    } else {
        printf("consumer: connected through the %s path\n", clmem_bridge_path_name(clmem_ipc_consumer_path(c)));
        fflush(stdout);
    }
    while (status == 0) {
        static clmem_ipc_frame fs[CLMEM_IPC_MAX_FRAMES];
        uint32_t count = 0;
        clmem_status st;
        if (batch) {
            st = clmem_ipc_consumer_next_many(c, TIMEOUT_NS, (uint32_t)batch, fs, &count, NULL);
        } else {
            st = clmem_ipc_consumer_next(c, TIMEOUT_NS, &fs[0], NULL);
            count = fs[0].plane_count ? 1 : 0;
        }
        if (st != CLMEM_OK) {
            fprintf(stderr, "consumer: the connection failed: %s\n", clmem_error_message());
            status = 3;
            break;
        }
        if (count == 0)
            break; /* the end of the stream */
        batches++;
        for (uint32_t k = 0; k < count && status == 0; k++) {
            clmem_ipc_frame *f = &fs[k];
            if (frames == hold_frame) {
                held = *f; /* checked once the producer is gone */
                printf("consumer: holding frame %ld\n", frames++);
                fflush(stdout);
                continue;
            }
            if (frames == spin_frame) {
                clSetKernelArg(cl.spin, 0, sizeof cl.scratch, &cl.scratch);
                clSetKernelArg(cl.spin, 1, sizeof spin_iterations, &spin_iterations);
                size_t one = 1;
                clEnqueueNDRangeKernel(cl.queue, cl.spin, 1, NULL, &one, NULL, 0, NULL, NULL);
                check_frame(&cl, f);
                clFlush(cl.queue);
                printf("consumer: spinning on frame %ld\n", frames);
                fflush(stdout);
                clFinish(cl.queue); /* the test kills the consumer meanwhile */
            } else if (!check_frame(&cl, f)) {
                fprintf(stderr, "consumer: enqueueing the check failed\n");
                status = 1;
            }
            frames++;
        }
        /* Every frame but the one held goes; with --batch the batch goes
         * back to the producer once its last frame's handles are gone. */
        for (uint32_t k = 0; k < count; k++)
            if (!held.plane_count || fs[k].planes[0].handle != held.planes[0].handle)
                drop_frame(&fs[k]);
    }
    clmem_ipc_state end = clmem_ipc_consumer_state(c);
    if (held.plane_count) {
        /* The producer is gone: the frame's memory is the import's, still valid. */
        check_frame(&cl, &held);
        drop_frame(&held);
        printf("consumer: the producer is %s; frame %ld was held across it and checked after\n",
               clmem_ipc_state_name(end), hold_frame);
        if (end != CLMEM_IPC_STATE_PEER_GONE)
            status = status ? status : 1;
    } else if (status == 0 && end != CLMEM_IPC_STATE_ENDED) {
        fprintf(stderr, "consumer: the stream ended with the connection %s, not ended by the producer\n",
                clmem_ipc_state_name(end));
        status = 1;
    }
teardown:
    clFinish(cl.queue);
    cl_uint bad = 0;
    clEnqueueReadBuffer(cl.queue, cl.bad, CL_TRUE, 0, sizeof bad, &bad, 0, NULL, NULL);
    if (clmem_ipc_consumer_destroy(c, TIMEOUT_NS) != CLMEM_OK ||
        clmem_bridge_finish(bridge, TIMEOUT_NS) != CLMEM_OK) { /* before vkDestroyDevice */
        fprintf(stderr, "consumer: teardown: %s\n", clmem_error_message());
        status = 1;
    }
    if (status != 3) {
        printf("consumer: %ld frames, %s\n", frames,
               bad ? "SOME BYTES WERE NOT AS THE PRODUCER WROTE THEM" : "every byte as the producer wrote it");
        if (batch)
            printf("consumer: the frames came in %ld batches of at most %d\n", batches, batch);
        if (bad)
            status = 1;
    }
#ifdef CLMEM_XPROC_FD_WATCH
    char list[512];
    unsigned open_fds = marked_fds_open(list, sizeof list);
    printf("consumer: producer's fds still open here: %u (%s)\n", open_fds, list);
    if (open_fds)
        status = status ? status : 1;
#endif
    fflush(stdout);
    clmem_bridge_unref(bridge);
    clReleaseMemObject(cl.bad);
    clReleaseMemObject(cl.scratch);
    clReleaseKernel(cl.check);
    clReleaseKernel(cl.spin);
    clReleaseProgram(cl.prog);
    clReleaseCommandQueue(cl.queue);
    clReleaseContext(cl.ctx);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    return status;
}
