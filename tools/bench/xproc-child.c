/* SPDX-License-Identifier: MIT */
/* clmem-bench (x): the consumer process. It is clmem-bench run again
 * (posix_spawn of /proc/self/exe with XPROC_CHILD_OPTION, the mode and the
 * fd of its end of a socketpair), so that it loads its drivers itself, as
 * a separate program would: its own Vulkan device (CLMEM_VK_DEVICE, like
 * the parent's), the OpenCL device paired with it, and the bench's
 * one-work-item kernel, run on every frame. */
#include "xproc.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

extern char **environ;

/* ------------------------------------------------------------ the consumer process */

/* The child: clmem-bench XPROC_CHILD_OPTION MODE FD, spawned with no driver
 * loaded; its own Vulkan device (CLMEM_VK_DEVICE, as the parent's), the
 * paired OpenCL device, a bridge, the bump kernel. */
pid_t xproc_spawn_consumer(const char *mode, int *sock_out)
{
    int sv[2], inherit;
    char fdtext[16];
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        die("(x): socketpair: %s", strerror(errno));
    inherit = fcntl(sv[1], F_DUPFD, 10); /* without FD_CLOEXEC: the one fd the child keeps */
    if (inherit < 0)
        die("(x): fcntl(F_DUPFD): %s", strerror(errno));
    snprintf(fdtext, sizeof fdtext, "%d", inherit);
    char *argv[] = {(char *)"clmem-bench", (char *)XPROC_CHILD_OPTION, (char *)mode, fdtext, NULL};
    fflush(stdout);
    int err = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
    close(inherit);
    close(sv[1]);
    if (err)
        die("(x): posix_spawn(/proc/self/exe): %s", strerror(err));
    *sock_out = sv[0];
    return pid;
}

/* The child's exit: 0, or why not (its stderr went to the bench's). */
bool xproc_reap(pid_t pid, char *why, size_t len)
{
    int status;
    for (int i = 0; i < 10000; i++) { /* 10 s */
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return true;
            snprintf(why, len, "the consumer process ended with %s %d", WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            return false;
        }
        usleep(1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    snprintf(why, len, "the consumer process did not end within 10 s (killed)");
    return false;
}

/* ------------------------------------------------------------ the child */

struct child_cl {
    struct vkctx vk;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel bump;
};

static const char child_kernel[] = "__kernel void bump(__global uint *p) {\n"
                                   "    uint v = p[0];\n"
                                   "    p[0] = v + 1u;\n"
                                   "    p[1] = p[1] + v;\n"
                                   "}\n";

static int child_fail(const char *what)
{
    fprintf(stderr, "clmem-bench (x) consumer: %s: %s\n", what, clmem_error_message());
    return 1;
}

static bool child_setup(struct child_cl *c)
{
    cl_int err;
    if (!vkctx_open(&c->vk, -1)) {
        fprintf(stderr, "clmem-bench (x) consumer: %s\n", c->vk.error);
        return false;
    }
    if (clmem_bridge_pair(c->vk.instance, c->vk.get_instance_proc_addr, c->vk.physical_device, &c->platform,
                          &c->device) != CLMEM_OK &&
        (clGetPlatformIDs(1, &c->platform, NULL) != CL_SUCCESS ||
         clGetDeviceIDs(c->platform, CL_DEVICE_TYPE_ALL, 1, &c->device, NULL) != CL_SUCCESS))
        return false;
    c->context = clCreateContext(NULL, 1, &c->device, NULL, NULL, &err);
    c->queue = clCreateCommandQueueWithProperties(c->context, c->device, NULL, &err);
    c->program = clCreateProgramWithSource(c->context, 1, (const char *[]){child_kernel}, NULL, &err);
    if (clBuildProgram(c->program, 1, &c->device, "", NULL, NULL) != CL_SUCCESS)
        return false;
    c->bump = clCreateKernel(c->program, "bump", &err);
    return err == CL_SUCCESS;
}

static void child_teardown(struct child_cl *c)
{
    clReleaseKernel(c->bump);
    clReleaseProgram(c->program);
    clReleaseCommandQueue(c->queue);
    clReleaseContext(c->context);
    vkctx_close(&c->vk);
}

/* The consumer of libclmem-ipc: the bump kernel on plane 0 of every frame. */
static int child_ipc(struct child_cl *c, int sock)
{
    clmem_bridge_info bi = {.size = sizeof bi, .instance = c->vk.instance, .physical_device = c->vk.physical_device,
                            .device = c->vk.device, .get_instance_proc_addr = c->vk.get_instance_proc_addr,
                            .context = c->context, .cl_device = c->device};
    clmem_bridge *bridge;
    clmem_ipc_consumer *consumer;
    if (clmem_bridge_create(&bi, &bridge) != CLMEM_OK)
        return child_fail("clmem_bridge_create");
    clmem_ipc_consumer_info ci = {.size = sizeof ci, .bridge = bridge, .instance = c->vk.instance,
                                  .get_instance_proc_addr = c->vk.get_instance_proc_addr,
                                  .physical_device = c->vk.physical_device, .queue = c->queue, .socket_fd = sock};
    if (clmem_ipc_consumer_create(&ci, &consumer) != CLMEM_OK)
        return child_fail("clmem_ipc_consumer_create");
    if (clmem_ipc_consumer_start(consumer, XPROC_TIMEOUT_NS) != CLMEM_OK)
        return child_fail("clmem_ipc_consumer_start");
    for (;;) {
        clmem_ipc_frame f;
        size_t one = 1;
        if (clmem_ipc_consumer_next(consumer, XPROC_TIMEOUT_NS, &f, NULL) != CLMEM_OK)
            return child_fail("clmem_ipc_consumer_next");
        if (f.plane_count == 0)
            break;
        cl_mem m = clmem_handle_mem(f.planes[0].handle);
        clSetKernelArg(c->bump, 0, sizeof m, &m);
        if (clEnqueueNDRangeKernel(c->queue, c->bump, 1, NULL, &one, NULL, 0, NULL, NULL) != CL_SUCCESS)
            return child_fail("clEnqueueNDRangeKernel");
        for (uint32_t p = 0; p < f.plane_count; p++)
            clmem_handle_unref(f.planes[p].handle); /* The release point: after the kernel */
    }
    if (clmem_ipc_consumer_state(consumer) != CLMEM_IPC_STATE_ENDED) {
        fprintf(stderr, "clmem-bench (x) consumer: the stream ended %s\n",
                clmem_ipc_state_name(clmem_ipc_consumer_state(consumer)));
        return 1;
    }
    if (clmem_ipc_consumer_destroy(consumer, XPROC_TIMEOUT_NS) != CLMEM_OK)
        return child_fail("clmem_ipc_consumer_destroy");
    if (clmem_bridge_finish(bridge, XPROC_TIMEOUT_NS) != CLMEM_OK)
        return child_fail("clmem_bridge_finish");
    clmem_bridge_unref(bridge);
    return 0;
}

/* The consumer of the /dev/shm baseline: each frame written into its slot's
 * cl_mem, the kernel, FREE once it completed. */
static int child_shm(struct child_cl *c, int sock)
{
    struct shm_msg hello, msg;
    int fds[XPROC_SLOTS];
    void *shm[XPROC_SLOTS];
    cl_mem mem[XPROC_SLOTS];
    cl_int err;
    uint32_t wrong = 0;
    int nfds = xproc_shm_recv(sock, &hello, fds, XPROC_SLOTS);
    if (nfds < 1 || hello.type != 1 || hello.slots != (uint32_t)nfds) {
        for (int s = 0; s < nfds; s++)
            close(fds[s]);
        return child_fail("the /dev/shm HELLO");
    }
    for (uint32_t s = 0; s < hello.slots; s++) {
        shm[s] = mmap(NULL, hello.bytes, PROT_READ, MAP_SHARED, fds[s], 0);
        close(fds[s]);
        mem[s] = clCreateBuffer(c->context, CL_MEM_READ_WRITE, hello.bytes, NULL, &err);
        if (shm[s] == MAP_FAILED || err != CL_SUCCESS)
            return child_fail("mapping a /dev/shm slot or making its cl_mem");
    }
    while (xproc_shm_recv(sock, &msg, NULL, 0) == 0 && msg.type == 2 && msg.slot < hello.slots) {
        size_t one = 1;
        uint32_t s = msg.slot;
        wrong += *(volatile uint32_t *)shm[s] != msg.value;
        if (clEnqueueWriteBuffer(c->queue, mem[s], CL_FALSE, 0, hello.bytes, shm[s], 0, NULL, NULL) != CL_SUCCESS)
            return child_fail("clEnqueueWriteBuffer");
        clSetKernelArg(c->bump, 0, sizeof mem[s], &mem[s]);
        clEnqueueNDRangeKernel(c->queue, c->bump, 1, NULL, &one, NULL, 0, NULL, NULL);
        if (clFinish(c->queue) != CL_SUCCESS)
            return child_fail("clFinish");
        msg.type = 3;
        if (!xproc_shm_send(sock, &msg, NULL, 0))
            break;
    }
    for (uint32_t s = 0; s < hello.slots; s++) {
        munmap(shm[s], hello.bytes);
        clReleaseMemObject(mem[s]);
    }
    if (wrong)
        fprintf(stderr, "clmem-bench (x) consumer: %u frames read from /dev/shm were not what the producer wrote\n",
                wrong);
    return wrong ? 1 : 0;
}

int xproc_child_main(int argc, char **argv)
{
    struct child_cl c = {0};
    int sock = argc == 4 ? atoi(argv[3]) : -1;
    if (sock < 0 || (strcmp(argv[2], "ipc") && strcmp(argv[2], "shm"))) {
        fprintf(stderr, "clmem-bench: %s is for clmem-bench's own use\n", XPROC_CHILD_OPTION);
        return 2;
    }
    if (!child_setup(&c))
        return child_fail("setting up Vulkan and OpenCL");
    int status = !strcmp(argv[2], "ipc") ? child_ipc(&c, sock) : child_shm(&c, sock);
    if (!strcmp(argv[2], "shm"))
        close(sock);
    child_teardown(&c);
    return status;
}
