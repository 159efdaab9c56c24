/* SPDX-License-Identifier: MIT */
/* The cross-process examples as two real processes (fork + exec of
 * examples/xproc-producer.c and examples/xproc-consumer.c, built with the
 * fd watch: ipc/ipc.am), and this test as a hostile peer of each:
 *  - a normal run: every byte checked on both sides, no fd left open;
 *  - the consumer SIGKILLed while its kernel runs on a frame: the producer
 *    has every frame back within 1 s of the kill, its queue still runs, no
 *    exported fd is left open;
 *  - the producer SIGKILLed while the consumer holds a frame: the frame
 *    stays valid (checked after the producer is gone), the consumer ends
 *    cleanly with no fd of the producer's left open;
 *  - each of those again with both examples handing frames over four at a
 *    time (--batch 4: the _many calls), where holding a frame holds its
 *    batch;
 *  - a normal run and the producer killed again with the consumer on the
 *    opaque-fd path, a frame at a time and in batches
 *    (t/ipc/fakefd-xproc-consumer: t/lib/fake-nvidia-import.c's stand-in
 *    for NVIDIA's import on the CPU machines, the driver's own on a GPU);
 *  - malformed messages, to the consumer and to the producer (a table of
 *    cases): each exits 3 with a sentence naming the rule broken, after
 *    tearing everything down, with no fd left open.
 * The messages here are built byte by byte, not with the library's
 * encoder, so that the test does not share its mistakes.
 *
 * CLMEM_TEST_EXPECT_IPC_PATH=opaque-fd (scripts/gpu-check.sh on the GPU
 * machine) makes the normal run fail unless it took that path. */
#define _GNU_SOURCE
#include "t/lib/tap.h"
#include "t/lib/wire-by-hand.h"
#include "vkctx.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS 30000

static char dir[256];
static char producer_prog[512], consumer_prog[512], fakefd_consumer_prog[512];
static int sockets_made;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* ------------------------------------------------------------ children */

struct child {
    pid_t pid;
    int out; /* its stdout and stderr */
    char buf[32768];
    size_t len;
    int status; /* from waitpid, once finished */
};

static bool spawn(struct child *c, const char *prog, const char *const *args)
{
    int p[2];
    const char *argv[16] = {prog};
    int n = 1;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    memset(c, 0, sizeof *c);
    if (pipe2(p, O_CLOEXEC) != 0)
        return false;
    fflush(stdout);
    c->pid = fork();
    if (c->pid < 0)
        return false;
    if (c->pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        execv(prog, (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    c->out = p[0];
    return true;
}

/* Read what the child printed until `needle` shows (true), or it closed
 * its output, or the time ran out. */
static bool read_until(struct child *c, const char *needle, int timeout_ms)
{
    double end = now_ms() + timeout_ms;
    for (;;) {
        c->buf[c->len] = '\0';
        if (needle && strstr(c->buf, needle))
            return true;
        double left = end - now_ms();
        if (left <= 0 || c->out < 0)
            return false;
        struct pollfd pfd = {.fd = c->out, .events = POLLIN};
        if (poll(&pfd, 1, (int)left) <= 0)
            continue;
        ssize_t n = read(c->out, c->buf + c->len, sizeof c->buf - 1 - c->len);
        if (n <= 0) {
            close(c->out);
            c->out = -1;
        } else
            c->len += (size_t)n;
    }
}

/* Wait for the child's end (killing it after the timeout); its exit status,
 * 128 + the signal that ended it, or -1 when it had to be killed. */
static int finish(struct child *c, int timeout_ms)
{
    double end = now_ms() + timeout_ms;
    read_until(c, NULL, timeout_ms);
    for (;;) {
        pid_t r = waitpid(c->pid, &c->status, WNOHANG);
        if (r == c->pid)
            break;
        if (now_ms() > end) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, &c->status, 0);
            tap_diag("  %d still running after %d ms: killed", (int)c->pid, timeout_ms);
            return -1;
        }
        usleep(1000);
    }
    if (c->out >= 0)
        close(c->out);
    return WIFEXITED(c->status) ? WEXITSTATUS(c->status) : 128 + WTERMSIG(c->status);
}

static void show(const char *who, const struct child *c)
{
    const char *s = c->buf;
    while (*s) {
        const char *e = strchr(s, '\n');
        int n = e ? (int)(e - s) : (int)strlen(s);
        tap_diag("  %s| %.*s", who, n, s);
        s += n + (e ? 1 : 0);
    }
}

static void socket_path(char *out, size_t len)
{
    snprintf(out, len, "%s/s%d", dir, sockets_made++);
}

/* ------------------------------------------------------------ the runs */

/* Each run a frame at a time (batch NULL), or with both examples handing
 * frames over `batch` at a time (--batch: the _many calls). */

/* args, NULL-terminated with room for two more: "--batch" `batch` added
 * where batch is not NULL. */
static const char **batched(const char **args, const char *batch)
{
    size_t n = 0;
    while (args[n])
        n++;
    if (batch) {
        args[n++] = "--batch";
        args[n++] = batch;
        args[n] = NULL;
    }
    return args;
}

/* How a run's points say which it was. */
static const char *mode(const char *batch)
{
    static char s[64];
    if (!batch)
        return "";
    snprintf(s, sizeof s, " [batches of %s]", batch);
    return s;
}

/* A normal run, both sides ours. `want_path`: the path the consumer must
 * take (NULL: CLMEM_TEST_EXPECT_IPC_PATH's, or any). */
static void normal_run(const char *consumer, const char *want_path, const char *batch)
{
    char path[300];
    struct child p, c;
    socket_path(path, sizeof path);
    const char *pargs[8] = {path, "--frames", "120", NULL};
    const char *cargs[8] = {path, NULL};
    if (!spawn(&p, producer_prog, batched(pargs, batch)) || !spawn(&c, consumer, batched(cargs, batch)))
        tap_bail("fork failed: %s", strerror(errno));
    int cs = finish(&c, TIMEOUT_MS), ps = finish(&p, TIMEOUT_MS);
    if (ps == 77 || cs == 77) {
        show("producer", &p);
        show("consumer", &c);
        tap_skip_all("the examples found no Vulkan device with VK_KHR_external_memory_fd, or no OpenCL device "
                     "(they exited 77)");
    }
    const char *taken = strstr(p.buf, "through the ");
    char path_name[32] = "?";
    if (taken)
        sscanf(taken, "through the %31s", path_name);
    const char *want = want_path ? want_path : getenv("CLMEM_TEST_EXPECT_IPC_PATH");
    bool ok = tap_ok(ps == 0 && cs == 0, "normal run through the %s path%s: producer exits %d, consumer %d",
                     path_name, mode(batch), ps, cs);
    ok &= tap_ok(strstr(p.buf, "120 frames sent, 120 checked when they came back, every byte as") != NULL,
                 "the producer checked all 120 frames' bytes as the consumer's kernel left them%s", mode(batch));
    ok &= tap_ok(strstr(c.buf, "120 frames, every byte as the producer wrote it") != NULL,
                 "the consumer's kernel checked all 120 frames' bytes as the producer wrote them%s", mode(batch));
    ok &= tap_ok(strstr(p.buf, "0 still open here (none)") && strstr(c.buf, "fds still open here: 0 (none)"),
                 "no exported memory fd is left open in either process%s", mode(batch));
    if (batch) {
        /* 120 frames in batches of at most 4: 30 of them where every batch
         * is whole; more than 60 would mean mostly single frames. */
        const char *pb = strstr(p.buf, "the frames went in "), *cb = strstr(c.buf, "the frames came in ");
        int pn = pb ? atoi(pb + strlen("the frames went in ")) : 0;
        int cn = cb ? atoi(cb + strlen("the frames came in ")) : 0;
        ok &= tap_ok(pn >= 30 && pn <= 60 && cn >= 30 && cn <= 60,
                     "the frames went over in batches: %d READYs, %d batches taken by the consumer (30 to 60 each)%s",
                     pn, cn, mode(batch));
    }
    if (want)
        ok &= tap_ok(!strcmp(want, path_name), "the path is %s%s%s", want,
                     want_path ? "" : " (CLMEM_TEST_EXPECT_IPC_PATH)", mode(batch));
    if (!ok) {
        show("producer", &p);
        show("consumer", &c);
    }
}

/* The consumer killed while its kernel runs on a frame. */
static void consumer_killed(const char *batch)
{
    char path[300];
    struct child p, c;
    socket_path(path, sizeof path);
    const char *pargs[8] = {path, "--frames", "1000000", "--expect-consumer-death", NULL};
    const char *cargs[10] = {path, "--spin-frame", "30", "--spin-iterations", "2000000000", NULL};
    if (!spawn(&p, producer_prog, batched(pargs, batch)) || !spawn(&c, consumer_prog, batched(cargs, batch)))
        tap_bail("fork failed: %s", strerror(errno));
    bool spinning = read_until(&c, "consumer: spinning on frame 30", TIMEOUT_MS);
    double killed_at = now_ms();
    kill(c.pid, SIGKILL);
    int cs = finish(&c, TIMEOUT_MS), ps = finish(&p, TIMEOUT_MS);
    bool ok = tap_ok(spinning && cs == 128 + SIGKILL, "the consumer was killed while its kernel ran on frame 30%s",
                     mode(batch));
    ok &= tap_ok(ps == 0 && strstr(p.buf, "the connection is peer-gone") && strstr(p.buf, "the queue still runs"),
                 "the producer sees the consumer gone, gets its frames back and its queue still runs (exit %d)%s", ps,
                 mode(batch));
    double back_at = 0;
    const char *s = strstr(p.buf, "every frame back at ");
    if (s)
        back_at = atof(s + strlen("every frame back at "));
    ok &= tap_ok(s && back_at - killed_at <= 1000.0,
                 "every frame was back %.1f ms after the kill (at most 1000)%s", back_at - killed_at, mode(batch));
    ok &= tap_ok(strstr(p.buf, "0 still open here (none)") != NULL,
                 "no exported memory fd is left open in the producer%s", mode(batch));
    if (!ok) {
        show("producer", &p);
        show("consumer", &c);
    }
}

/* The producer killed while the consumer holds a frame. */
static void producer_killed(const char *consumer, const char *batch)
{
    char path[300];
    struct child p, c;
    socket_path(path, sizeof path);
    const char *pargs[8] = {path, "--frames", "1000000", NULL};
    const char *cargs[8] = {path, "--hold-frame", "20", NULL};
    if (!spawn(&p, producer_prog, batched(pargs, batch)) || !spawn(&c, consumer, batched(cargs, batch)))
        tap_bail("fork failed: %s", strerror(errno));
    bool holding = read_until(&c, "consumer: holding frame 20", TIMEOUT_MS);
    usleep(50 * 1000); /* frames keep flowing past the held one meanwhile */
    kill(p.pid, SIGKILL);
    int ps = finish(&p, TIMEOUT_MS), cs = finish(&c, TIMEOUT_MS);
    bool ok = tap_ok(holding && ps == 128 + SIGKILL, "the producer was killed while the consumer held frame 20%s",
                     mode(batch));
    ok &= tap_ok(cs == 0 && strstr(c.buf, "the producer is peer-gone; frame 20 was held across it and checked after"),
                 "the consumer learns the producer is gone and checks the held frame after (exit %d)%s", cs,
                 mode(batch));
    ok &= tap_ok(strstr(c.buf, "every byte as the producer wrote it") != NULL,
                 "every byte the consumer checked, the held frame's included, was as the producer wrote it%s",
                 mode(batch));
    ok &= tap_ok(strstr(c.buf, "fds still open here: 0 (none)") != NULL,
                 "no fd of the producer's is left open in the consumer%s", mode(batch));
    if (!ok) {
        show("producer", &p);
        show("consumer", &c);
    }
}

/* ------------------------------------------------------------ messages, by hand */

static size_t alloc(uint8_t *b, uint32_t index, uint64_t size, uint32_t type)
{
    wire_header(b, T_ALLOC, 40, 1);
    wire_put32(b + 16, index);
    wire_put32(b + 20, 1); /* opaque fd */
    wire_put64(b + 24, size);
    wire_put32(b + 32, type);
    return 40;
}

static size_t buffer_frame(uint8_t *b, uint32_t index, uint64_t offset, uint64_t size)
{
    wire_header(b, T_FRAME, 136, 0);
    wire_put32(b + 16, index);
    wire_put32(b + 36, 1); /* one plane; format 0: a buffer */
    wire_put64(b + 40, offset);
    wire_put64(b + 48, size);
    return 136;
}

/* A READY or FREE of one frame: count 1, then READY's first sequence and
 * index, or FREE's entry (sequence, index). */
static size_t handoff(uint8_t *b, uint16_t type, uint32_t index, uint64_t seq)
{
    if (type == T_READY) {
        wire_header(b, type, 36, 0);
        wire_put32(b + 16, 1);
        wire_put64(b + 24, seq);
        wire_put32(b + 32, index);
        return 36;
    }
    wire_header(b, type, 40, 0);
    wire_put32(b + 16, 1);
    wire_put64(b + 24, seq);
    wire_put32(b + 32, index);
    return 40;
}

static void send_msg(int s, const uint8_t *b, size_t len, const int *fds, int nfds)
{
    char control[CMSG_SPACE(sizeof(int) * 8)];
    struct iovec iov = {(void *)b, len};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
    memset(control, 0, sizeof control);
    if (nfds) {
        h.msg_control = control;
        h.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    if (sendmsg(s, &h, MSG_NOSIGNAL) < 0)
        tap_diag("  sendmsg: %s (the peer may have gone already)", strerror(errno));
}

/* ------------------------------------------------------------ this test's memory */

/* Exportable Vulkan memory, for the cases where this test plays a producer
 * whose frames the consumer imports for real. */
static struct {
    struct vkctx vk;
    bool ok;
    VkDeviceMemory memory;
    uint32_t type;
    PFN_vkGetMemoryFdKHR get_fd;
} mem;

#define TEST_ALLOC_SIZE (1u << 20)

static void memory_setup(void)
{
    if (!vkctx_open(&mem.vk, -1) || !mem.vk.has_memory_fd)
        return;
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(mem.vk.physical_device, &mp);
    mem.type = 0;
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) {
            mem.type = i;
            break;
        }
    VkExportMemoryAllocateInfo xa = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                     .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &xa,
                               .allocationSize = TEST_ALLOC_SIZE, .memoryTypeIndex = mem.type};
    mem.get_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(mem.vk.device, "vkGetMemoryFdKHR");
    mem.ok = mem.get_fd && vkAllocateMemory(mem.vk.device, &ai, NULL, &mem.memory) == VK_SUCCESS;
}

/* A marked fd (its owner this process, as the producer example's are), so
 * that the consumer names it if it is left open. */
static int marked(int fd)
{
    fcntl(fd, F_SETOWN, getpid());
    return fd;
}

static int memory_fd(void)
{
    VkMemoryGetFdInfoKHR gi = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, .memory = mem.memory,
                               .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;
    if (mem.get_fd(mem.vk.device, &gi, &fd) != VK_SUCCESS)
        tap_bail("vkGetMemoryFdKHR failed");
    return marked(fd);
}

static void close_all(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

/* ------------------------------------------------------------ a hostile producer */

struct consumer_case {
    const char *name;
    const char *fragment; /* in the consumer's sentence */
    void (*script)(int s, const uint8_t *dev, const uint8_t *drv);
    bool needs_memory;
    bool hold_first; /* the consumer keeps its first frame (--hold-frame 0), so that it cannot have
                        given it back before the script's next message */
};

static void c_magic(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    wire_hello(b, 1, dev, drv, 1, 1);
    memcpy(b, "XXXX", 4);
    send_msg(s, b, 64, NULL, 0);
}

static void c_version(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    wire_hello(b, 1, dev, drv, 1, 1);
    b[4] = 3;
    send_msg(s, b, 64, NULL, 0);
}

/* A producer of the per-frame protocol (libclmem-ipc 0.3): version 1. */
static void c_version1(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    wire_hello(b, 1, dev, drv, 1, 1);
    b[4] = 1;
    send_msg(s, b, 64, NULL, 0);
}

static void c_uuid(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64], other[16];
    memcpy(other, dev, 16);
    other[15] ^= 0xff;
    send_msg(s, b, wire_hello(b, 1, other, drv, 1, 1), NULL, 0);
}

static void c_counts(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    send_msg(s, b, wire_hello(b, 1, dev, drv, 1, 65), NULL, 0);
}

static void c_alloc_no_fd(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    send_msg(s, b, wire_hello(b, 1, dev, drv, 1, 1), NULL, 0);
    send_msg(s, b, alloc(b, 0, TEST_ALLOC_SIZE, mem.type), NULL, 0);
}

static void c_alloc_two_fds(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    int fds[2] = {memory_fd(), marked(open("/dev/null", O_RDONLY | O_CLOEXEC))};
    send_msg(s, b, wire_hello(b, 1, dev, drv, 1, 1), NULL, 0);
    send_msg(s, b, alloc(b, 0, TEST_ALLOC_SIZE, mem.type), fds, 2);
    close_all(fds, 2);
}

static void c_alloc_many_fds(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    int fds[8];
    for (int i = 0; i < 8; i++)
        fds[i] = marked(open("/dev/null", O_RDONLY | O_CLOEXEC));
    send_msg(s, b, wire_hello(b, 1, dev, drv, 1, 1), NULL, 0);
    send_msg(s, b, alloc(b, 0, TEST_ALLOC_SIZE, mem.type), fds, 8);
    close_all(fds, 8);
}

static void c_too_long(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[1100];
    wire_hello(b, 1, dev, drv, 1, 1);
    memset(b + 64, 0, sizeof b - 64);
    wire_put32(b + 8, sizeof b);
    send_msg(s, b, sizeof b, NULL, 0);
}

static void c_pipe_fd(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[136];
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        tap_bail("pipe2");
    marked(p[0]);
    send_msg(s, b, wire_hello(b, 1, dev, drv, 1, 1), NULL, 0);
    send_msg(s, b, alloc(b, 0, 4096, mem.type), &p[0], 1);
    send_msg(s, b, buffer_frame(b, 0, 0, 4096), NULL, 0);
    close_all(p, 2);
}

static void c_short_memfd(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[136];
    int fd = marked(memfd_create("short", MFD_CLOEXEC));
    if (fd < 0 || ftruncate(fd, 4096) != 0)
        tap_bail("memfd_create");
    send_msg(s, b, wire_hello(b, 1, dev, drv, 1, 1), NULL, 0);
    send_msg(s, b, alloc(b, 0, TEST_ALLOC_SIZE, mem.type), &fd, 1);
    send_msg(s, b, buffer_frame(b, 0, 0, 4096), NULL, 0);
    close(fd);
}

static void c_plane_past(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[136];
    int fd = memory_fd();
    send_msg(s, b, wire_hello(b, 1, dev, drv, 1, 1), NULL, 0);
    send_msg(s, b, alloc(b, 0, TEST_ALLOC_SIZE, mem.type), &fd, 1);
    send_msg(s, b, buffer_frame(b, 0, TEST_ALLOC_SIZE - 4096, 8192), NULL, 0);
    close(fd);
}

/* A real handshake, up to the consumer's ACCEPT: one buffer frame. */
static bool handshake(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[136];
    int fd = memory_fd();
    send_msg(s, b, wire_hello(b, 1, dev, drv, 1, 1), NULL, 0);
    send_msg(s, b, alloc(b, 0, TEST_ALLOC_SIZE, mem.type), &fd, 1);
    send_msg(s, b, buffer_frame(b, 0, 0, 4096), NULL, 0);
    close(fd);
    ssize_t n = wire_recv(s, b, sizeof b, TIMEOUT_MS);
    if (n != 24 || b[6] != T_ACCEPT) {
        tap_diag("  the consumer did not ACCEPT the test's frame (%zd bytes, type %u)", n, n > 7 ? b[6] : 0);
        return false;
    }
    return true;
}

static void c_ready_range(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    if (handshake(s, dev, drv))
        send_msg(s, b, handoff(b, T_READY, 5, 0), NULL, 0);
}

/* The consumer holds frame 0 (hold_first): a second READY for it while it
 * does breaks the rules however fast the consumer is. */
static void c_ready_twice(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    if (!handshake(s, dev, drv))
        return;
    send_msg(s, b, handoff(b, T_READY, 0, 0), NULL, 0);
    send_msg(s, b, handoff(b, T_READY, 0, 1), NULL, 0);
}

static void c_ready_sequence(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    if (handshake(s, dev, drv))
        send_msg(s, b, handoff(b, T_READY, 0, 7), NULL, 0);
}

static void c_ready_with_fd(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    int fd = marked(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (handshake(s, dev, drv)) {
        size_t n = handoff(b, T_READY, 0, 0);
        send_msg(s, b, n, &fd, 1);
    }
    close(fd);
}

static const struct consumer_case consumer_cases[] = {
    {"bad magic", "not a clmem-ipc peer", c_magic, false, false},
    {"protocol version 3", "speaks clmem-ipc protocol version 3", c_version, false, false},
    {"protocol version 1 (frames one at a time)", "version 1, which hands frames over one at a time", c_version1,
     false, false},
    {"another device's UUID", "is not the consumer's", c_uuid, false, false},
    {"65 frames announced", "announces 1 allocations and 65 frames", c_counts, false, false},
    {"ALLOC without its fd", "announces 1 fd and came with 0", c_alloc_no_fd, true, false},
    {"ALLOC with two fds", "announces 1 fd and came with 2", c_alloc_two_fds, true, false},
    {"ALLOC with eight fds", "did not fit (MSG_CTRUNC)", c_alloc_many_fds, true, false},
    {"a 1100-byte message", "longer than 1048 bytes (MSG_TRUNC)", c_too_long, false, false},
    {"a pipe as memory", "is a pipe, not memory", c_pipe_fd, false, false},
    {"a memfd shorter than announced", "its fd is a file of 4096 bytes", c_short_memfd, false, false},
    {"a plane past its allocation", "ends past its allocation 0 of 1048576 bytes", c_plane_past, true, false},
    {"READY for a frame not offered", "READY for frame 5; it offered 1", c_ready_range, true, false},
    {"READY for a frame the consumer holds", "which the consumer still holds", c_ready_twice, true, true},
    {"READY out of sequence", "READY 7 for frame 0 where READY 0 was due", c_ready_sequence, true, false},
    {"READY with an fd", "READY that announces 0 fds and came with 1", c_ready_with_fd, true, false},
};

static int listen_at(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (strlen(path) >= sizeof a.sun_path)
        tap_bail("socket path too long: %s", path);
    memcpy(a.sun_path, path, strlen(path) + 1);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 1) != 0)
        tap_bail("listening at %s: %s", path, strerror(errno));
    return s;
}

static void against_consumer(const struct consumer_case *k)
{
    char path[300];
    struct child c;
    uint8_t b[64];
    if (k->needs_memory && !mem.ok) {
        tap_skip("this test has no exportable Vulkan memory of its own", "malformed to the consumer: %s", k->name);
        return;
    }
    socket_path(path, sizeof path);
    int l = listen_at(path);
    const char *cargs[] = {path, k->hold_first ? "--hold-frame" : NULL, "0", NULL};
    if (!spawn(&c, consumer_prog, cargs))
        tap_bail("fork failed");
    struct pollfd pfd = {.fd = l, .events = POLLIN};
    int s = poll(&pfd, 1, TIMEOUT_MS) == 1 ? accept4(l, NULL, NULL, SOCK_CLOEXEC) : -1;
    close(l);
    unlink(path);
    if (s >= 0 && wire_recv(s, b, sizeof b, TIMEOUT_MS) == 64 && wire_get32(b + 16) == 2)
        k->script(s, b + 24, b + 40);
    else
        tap_diag("  no HELLO from the consumer");
    int cs = finish(&c, TIMEOUT_MS);
    if (s >= 0)
        close(s);
    bool ok = tap_ok(cs == 3 && strstr(c.buf, k->fragment), "malformed to the consumer: %s: it exits 3 saying \"%s\"",
                     k->name, k->fragment);
    ok &= tap_ok(strstr(c.buf, "fds still open here: 0 (none)") != NULL, "  ... and leaves no fd it was sent open");
    if (!ok)
        show("consumer", &c);
}

/* ------------------------------------------------------------ a hostile consumer */

struct producer_case {
    const char *name;
    const char *fragment;
    void (*script)(int s, const uint8_t *dev, const uint8_t *drv);
};

static void p_role(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    send_msg(s, b, wire_hello(b, 1, dev, drv, 0, 0), NULL, 0);
}

static void p_uuid(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64], other[16];
    memcpy(other, dev, 16);
    other[0] ^= 0xff;
    send_msg(s, b, wire_hello(b, 2, other, drv, 0, 0), NULL, 0);
}

static void p_garbage(int s, const uint8_t *dev, const uint8_t *drv)
{
    send_msg(s, (const uint8_t *)"abc", 3, NULL, 0);
}

/* A consumer's HELLO, then the producer's ALLOCs and FRAMEs read (their
 * fds closed). */
static bool described(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[256];
    send_msg(s, b, wire_hello(b, 2, dev, drv, 0, 0), NULL, 0);
    for (int frames = 0; frames < 3;) {
        ssize_t n = wire_recv(s, b, sizeof b, TIMEOUT_MS);
        if (n < 16) {
            tap_diag("  the producer sent no description (%zd)", n);
            return false;
        }
        frames += b[6] == T_FRAME;
    }
    return true;
}

static void p_free_early(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    if (described(s, dev, drv))
        send_msg(s, b, handoff(b, T_FREE, 0, 0), NULL, 0);
}

static void accept_frames(int s)
{
    uint8_t b[24];
    wire_header(b, T_ACCEPT, 24, 0);
    wire_put32(b + 16, 3); /* host-mapped */
    send_msg(s, b, 24, NULL, 0);
}

static void p_free_range(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    if (!described(s, dev, drv))
        return;
    accept_frames(s);
    send_msg(s, b, handoff(b, T_FREE, 7, 0), NULL, 0);
}

static void p_free_sequence(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[64];
    if (!described(s, dev, drv))
        return;
    accept_frames(s);
    if (wire_recv(s, b, sizeof b, TIMEOUT_MS) != 36 || b[6] != T_READY) {
        tap_diag("  no READY of one frame from the producer");
        return;
    }
    uint32_t index = wire_get32(b + 32), seq = wire_get32(b + 24);
    send_msg(s, b, handoff(b, T_FREE, index, seq + 1), NULL, 0);
}

static void p_accept_with_fd(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[24];
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (described(s, dev, drv)) {
        wire_header(b, T_ACCEPT, 24, 0);
        wire_put32(b + 16, 3);
        send_msg(s, b, 24, &fd, 1);
    }
    close(fd);
}

static void p_bad_path(int s, const uint8_t *dev, const uint8_t *drv)
{
    uint8_t b[24];
    if (!described(s, dev, drv))
        return;
    wire_header(b, T_ACCEPT, 24, 0);
    wire_put32(b + 16, 2); /* dma-buf: not a path the protocol takes */
    send_msg(s, b, 24, NULL, 0);
}

static const struct producer_case producer_cases[] = {
    {"a HELLO saying producer", "says it is a producer too", p_role},
    {"another device's UUID", "is not the producer's", p_uuid},
    {"a 3-byte message", "a message of 3 bytes", p_garbage},
    {"FREE before ACCEPT", "sent FREE before its ACCEPT", p_free_early},
    {"FREE for a frame not offered", "FREE for frame 7; the producer offered 3", p_free_range},
    {"FREE out of sequence", "whose READY was", p_free_sequence},
    {"ACCEPT with an fd", "ACCEPT that announces 0 fds and came with 1", p_accept_with_fd},
    {"ACCEPT naming the dma-buf path", "naming path 2", p_bad_path},
};

static int connect_to(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        tap_bail("socket path too long: %s", path);
    memcpy(a.sun_path, path, strlen(path) + 1);
    double end = now_ms() + TIMEOUT_MS;
    while (now_ms() < end) {
        int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
            return s;
        close(s);
        usleep(2000);
    }
    return -1;
}

static void against_producer(const struct producer_case *k)
{
    char path[300];
    struct child p;
    uint8_t b[64];
    socket_path(path, sizeof path);
    const char *pargs[] = {path, "--frames", "10", NULL};
    if (!spawn(&p, producer_prog, pargs))
        tap_bail("fork failed");
    int s = connect_to(path);
    if (s >= 0 && wire_recv(s, b, sizeof b, TIMEOUT_MS) == 64 && wire_get32(b + 16) == 1)
        k->script(s, b + 24, b + 40);
    else
        tap_diag("  no HELLO from the producer");
    int ps = finish(&p, TIMEOUT_MS);
    if (s >= 0)
        close(s);
    bool ok = tap_ok(ps == 3 && strstr(p.buf, k->fragment), "malformed to the producer: %s: it exits 3 saying \"%s\"",
                     k->name, k->fragment);
    ok &= tap_ok(strstr(p.buf, "0 still open here (none)") != NULL, "  ... and leaves no exported fd open");
    if (!ok)
        show("producer", &p);
}

/* ------------------------------------------------------------ main */

int main(void)
{
    const char *b = getenv("top_builddir");
    b = b ? b : ".";
    snprintf(producer_prog, sizeof producer_prog, "%s/t/ipc/xproc-producer", b);
    snprintf(consumer_prog, sizeof consumer_prog, "%s/t/ipc/xproc-consumer", b);
    snprintf(fakefd_consumer_prog, sizeof fakefd_consumer_prog, "%s/t/ipc/fakefd-xproc-consumer", b);
    snprintf(dir, sizeof dir, "%s/clmem-xproc.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        tap_bail("mkdtemp: %s", strerror(errno));
    signal(SIGPIPE, SIG_IGN);
    tap_watchdog("t/ipc/xproc", 600);

    normal_run(consumer_prog, NULL, NULL); /* skips everything where the examples exit 77 */
    consumer_killed(NULL);
    producer_killed(consumer_prog, NULL);
    /* The same with frames handed over four at a time (the _many calls):
     * the death of either side is survived as with single frames. */
    normal_run(consumer_prog, NULL, "4");
    consumer_killed("4");
    producer_killed(consumer_prog, "4");
    /* The consumer's opaque-fd path (clmem_bridge_import_fd per plane): on
     * the CPU machines through t/lib/fake-nvidia-import.c, a stand-in for NVIDIA's import
     * of lavapipe's fds; where a driver imports opaque fds itself, the
     * stand-in steps aside and the driver's import runs. */
    normal_run(fakefd_consumer_prog, "opaque-fd", NULL);
    producer_killed(fakefd_consumer_prog, NULL);
    normal_run(fakefd_consumer_prog, "opaque-fd", "4");
    producer_killed(fakefd_consumer_prog, "4");
    memory_setup();
    for (size_t i = 0; i < sizeof consumer_cases / sizeof consumer_cases[0]; i++)
        against_consumer(&consumer_cases[i]);
    for (size_t i = 0; i < sizeof producer_cases / sizeof producer_cases[0]; i++)
        against_producer(&producer_cases[i]);

    if (mem.memory)
        vkFreeMemory(mem.vk.device, mem.memory, NULL);
    if (mem.vk.device)
        vkctx_close(&mem.vk);
    rmdir(dir);
    return tap_done();
}
