/* SPDX-License-Identifier: MIT */
/* libclmem-ipc's batches, through their own calls
 * (clmem_ipc_producer_next_many, clmem_ipc_producer_ready_many,
 * clmem_ipc_consumer_next_many), producer and consumer in one process on
 * the two ends of a socketpair, with CLMEM_IPC_MAX_FRAMES frames offered:
 * half of them buffers, half NV12 images (two planes each).
 *  - batches of 1, 3, 4 and CLMEM_IPC_MAX_FRAMES: every byte of every plane
 *    of every frame checked on the consumer's side, the frames in the
 *    order the producer named them, their sequences in order;
 *  - the release point of a batch: with one handle of it alive none of its
 *    frames comes back; with the last one gone all of them do, and
 *    clmem_ipc_producer_next_many() hands every one out again;
 *  - a batch taken by the consumer in parts (max below the batch), one
 *    READY read a frame at a time, and max above CLMEM_IPC_MAX_FRAMES;
 *  - every frame lent and dropped behind a gate (a user event) on the
 *    consumer's queue, so that the producer holds none:
 *    clmem_ipc_consumer_next() keeps its deadline, nothing comes back
 *    before the gate opens, everything after; and with the gate opened by
 *    another thread while next() waits;
 *  - bad input to each _many call (NULL, count or max 0, count above the
 *    frames, an index twice, an index not the caller's, a frame already
 *    handed over, a fence that never signals): refused with its status and
 *    a sentence that begins with the call's name, and nothing changed: the
 *    frames are handed over afterwards and arrive with the sequences due.
 * Built twice: t/ipc/fakefd-ipc-batch takes the consumer's opaque-fd path
 * (t/lib/fake-nvidia-import.c on the CPU machines). */
#define _GNU_SOURCE
#include "t/lib/bridge-fixture.h"
#include "clmem-ipc.h"
#include "t/lib/fd-count.h"
#include "t/lib/fd-watch.h"
#include "t/lib/tap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FRAMES CLMEM_IPC_MAX_FRAMES
#define FRAME_BYTES 65536
#define TIMEOUT_NS UINT64_C(20000000000)
#define SHORT_NS UINT64_C(100000000) /* how long a frame that must not come back is waited for */
/* The NV12 frames (odd indices): 64x32, the chroma plane 4 KiB in. */
#define NV12_W 64
#define NV12_H 32
#define CHROMA_OFFSET 4096

static struct vkctx vk;
static struct cl_fixture f;
static clmem_bridge *bridge;
static struct vk_owned mem;
static clmem_keepalive *mem_anchor;
static struct vk_staging staging;
static VkFence fence;

static clmem_ipc_producer *p;
static clmem_ipc_consumer *c;
static uint64_t next_sequence; /* the sequence the producer's next frame gets */

/* The byte at `offset` of the frame handed over as sequence `seq`. */
static unsigned char pattern(uint64_t seq, uint64_t offset)
{
    return (unsigned char)(seq * 151u + offset * 13u + (offset >> 9) + 1u);
}

/* A plane of frame `index`: its first byte in the frame, its bytes. */
static uint32_t plane_count_of(uint32_t index)
{
    return index % 2 ? 2 : 1;
}

static uint64_t plane_offset(uint32_t index, uint32_t plane)
{
    return index % 2 && plane ? CHROMA_OFFSET : 0;
}

static uint64_t plane_size(uint32_t index, uint32_t plane)
{
    if (index % 2 == 0)
        return FRAME_BYTES;
    return plane ? NV12_W * NV12_H / 2 : NV12_W * NV12_H;
}

/* Vulkan writes frames indices[0 .. n) with the pattern of sequences
 * seq0, seq0 + 1, ...: one submission, `fence` signalled at its end (not
 * waited for here: clmem_ipc_producer_ready_many() waits). */
static VkCommandBuffer upload(uint32_t n, const uint32_t *indices, uint64_t seq0)
{
    VkBufferCopy regions[FRAMES];
    VkCommandBuffer cb;
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = vk.pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    for (uint32_t k = 0; k < n; k++) {
        unsigned char *dst = (unsigned char *)staging.data + (uint64_t)indices[k] * FRAME_BYTES;
        for (uint64_t o = 0; o < FRAME_BYTES; o++)
            dst[o] = pattern(seq0 + k, o);
        regions[k] = (VkBufferCopy){(uint64_t)indices[k] * FRAME_BYTES, (uint64_t)indices[k] * FRAME_BYTES,
                                    FRAME_BYTES};
    }
    if (vkAllocateCommandBuffers(vk.device, &cai, &cb) != VK_SUCCESS)
        tap_bail("vkAllocateCommandBuffers failed");
    vkBeginCommandBuffer(cb, &begin);
    vkCmdCopyBuffer(cb, staging.o.buffer, mem.buffer, n, regions);
    vkEndCommandBuffer(cb);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    vkResetFences(vk.device, 1, &fence);
    if (vkQueueSubmit(vk.queue, 1, &si, fence) != VK_SUCCESS)
        tap_bail("vkQueueSubmit failed");
    return cb;
}

/* After the submission's fence: its command buffer goes. */
static void upload_done(VkCommandBuffer cb)
{
    if (vkWaitForFences(vk.device, 1, &fence, VK_TRUE, TIMEOUT_NS) != VK_SUCCESS)
        tap_bail("the upload's fence did not signal");
    vkFreeCommandBuffers(vk.device, vk.pool, 1, &cb);
}

/* Every byte of every plane of fr, read through its handles, against the
 * pattern of its sequence at the plane's place in the frame. Returns the
 * wrong bytes (the first named in a diagnostic). */
static uint64_t wrong_bytes(const clmem_ipc_frame *fr)
{
    static unsigned char got[FRAME_BYTES];
    uint64_t wrong = 0;
    if (fr->plane_count != plane_count_of(fr->index)) {
        tap_diag("  frame %u came with %u planes, want %u", fr->index, fr->plane_count, plane_count_of(fr->index));
        return 1;
    }
    for (uint32_t pl = 0; pl < fr->plane_count; pl++) {
        uint64_t size = plane_size(fr->index, pl);
        if (fr->planes[pl].size != size ||
            clEnqueueReadBuffer(f.queue, clmem_handle_mem(fr->planes[pl].handle), CL_TRUE, 0, size, got, 0, NULL,
                                NULL) != CL_SUCCESS) {
            tap_diag("  frame %u plane %u: size %llu (want %llu), or the read failed", fr->index, pl,
                     (unsigned long long)fr->planes[pl].size, (unsigned long long)size);
            return wrong + 1;
        }
        for (uint64_t o = 0; o < size; o++) {
            unsigned char want = pattern(fr->sequence, plane_offset(fr->index, pl) + o);
            if (got[o] != want && wrong++ == 0)
                tap_diag("  frame %u (sequence %llu) plane %u byte %llu is 0x%02x, want 0x%02x", fr->index,
                         (unsigned long long)fr->sequence, pl, (unsigned long long)o, got[o], want);
        }
    }
    return wrong;
}

static void drop_frame(clmem_ipc_frame *fr)
{
    for (uint32_t pl = 0; pl < fr->plane_count; pl++)
        clmem_handle_unref(fr->planes[pl].handle);
    fr->plane_count = 0;
}

/* The message begins with the call's name, and holds `fragment`. */
static bool says(const char *call, const char *fragment)
{
    const char *m = clmem_error_message();
    size_t n = strlen(call);
    return strncmp(m, call, n) == 0 && m[n] == ':' && strstr(m, fragment) != NULL;
}

/* ------------------------------------------------------------ setup */

struct starter {
    clmem_ipc_producer *p;
    clmem_status st;
    char why[1024];
};

static void *start_producer(void *arg)
{
    struct starter *s = arg;
    s->st = clmem_ipc_producer_start(s->p, TIMEOUT_NS);
    snprintf(s->why, sizeof s->why, "%s", s->st == CLMEM_OK ? "" : clmem_error_message());
    return NULL;
}

/* An NV12 image of `memory`, FRAME_BYTES from `base`, its chroma plane
 * `chroma` bytes into the frame. */
static clmem_bridge_vk_image nv12_at(const clmem_bridge_vk_memory *memory, uint64_t base, uint64_t chroma)
{
    return (clmem_bridge_vk_image){.memory = *memory, .memory_offset = base, .size = FRAME_BYTES,
                                   .format = VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, .extent = {NV12_W, NV12_H},
                                   .tiling = VK_IMAGE_TILING_LINEAR, .plane_count = 2,
                                   .planes = {{base, NV12_W * NV12_H, NV12_W, NV12_W, NV12_H},
                                              {base + chroma, NV12_W * NV12_H / 2, NV12_W, NV12_W / 2, NV12_H / 2}}};
}

/* FRAMES frames in one allocation: buffers and NV12 images in turn. */
static void offer_shared(void)
{
    for (uint32_t i = 0; i < FRAMES; i++) {
        clmem_status st;
        uint64_t base = (uint64_t)i * FRAME_BYTES;
        if (i % 2 == 0) {
            st = clmem_ipc_producer_add_buffer(p, &mem.memory, CLMEM_IPC_MEMORY_TYPE_BY_FLAGS, base, FRAME_BYTES, 0,
                                               NULL);
        } else {
            clmem_bridge_vk_image img = nv12_at(&mem.memory, base, CHROMA_OFFSET);
            st = clmem_ipc_producer_add_image(p, &img, CLMEM_IPC_MEMORY_TYPE_BY_FLAGS, NULL);
        }
        if (st != CLMEM_OK)
            tap_bail("offering frame %u: %s", i, clmem_error_message());
    }
}

/* A producer and a consumer on the two ends of a socketpair, not started. */
static void create_pair(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        tap_bail("socketpair failed");
    clmem_ipc_producer_info pi = {.size = sizeof pi, .instance = vk.instance,
                                  .get_instance_proc_addr = fd_watch_get_instance_proc_addr,
                                  .physical_device = vk.physical_device, .device = vk.device, .socket_fd = sv[0]};
    clmem_ipc_consumer_info ci = {.size = sizeof ci, .bridge = bridge, .instance = vk.instance,
                                  .physical_device = vk.physical_device, .queue = f.queue, .socket_fd = sv[1]};
    if (clmem_ipc_producer_create(&pi, &p) != CLMEM_OK || clmem_ipc_consumer_create(&ci, &c) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
}

/* Both started at once, the producer on a thread of its own: the
 * consumer's status; the producer's in *s. */
static clmem_status start_pair(struct starter *s)
{
    pthread_t t;
    s->p = p;
    pthread_create(&t, NULL, start_producer, s);
    clmem_status st = clmem_ipc_consumer_start(c, TIMEOUT_NS);
    pthread_join(t, NULL);
    return st;
}

/* A producer offering the frames `offer` adds (`what`) and a consumer,
 * started. */
static void connect_pair(void (*offer)(void), const char *what)
{
    create_pair();

    /* Before the handshake: each _many call refuses, naming the state. */
    uint32_t idx[1], count = 7;
    clmem_ipc_frame fr[1];
    tap_ok(clmem_ipc_producer_next_many(p, 0, 1, idx, &count) == CLMEM_ERR_INVALID_VALUE && count == 0 &&
               says("clmem_ipc_producer_next_many", "has not started"),
           "producer_next_many before the handshake: CLMEM_ERR_INVALID_VALUE, count 0: %s", clmem_error_message());
    count = 7;
    tap_ok(clmem_ipc_consumer_next_many(c, 0, 1, fr, &count, NULL) == CLMEM_ERR_INVALID_VALUE && count == 0 &&
               says("clmem_ipc_consumer_next_many", "has not started"),
           "consumer_next_many before the handshake: CLMEM_ERR_INVALID_VALUE, count 0: %s", clmem_error_message());

    offer();
    struct starter s;
    clmem_status st = start_pair(&s);
    if (!tap_ok(st == CLMEM_OK && s.st == CLMEM_OK, "the handshake: %s through the %s path", what,
                clmem_bridge_path_name(clmem_ipc_consumer_path(c))))
        tap_bail("the handshake failed: consumer %s; producer %s", st == CLMEM_OK ? "ok" : clmem_error_message(),
                 s.why);
#ifdef CLMEM_TEST_FAKEFD
    if (clmem_ipc_consumer_path(c) == CLMEM_BRIDGE_PATH_OPAQUE_FD)
        tap_ok(true, "the consumer took the opaque-fd path (this build's point)");
    else if (bridge_test_path(bridge) != CLMEM_BRIDGE_PATH_OPAQUE_FD)
        tap_skip("the bridge offers no opaque-fd import here (the stand-in stepped aside for a driver without it)",
                 "the consumer took the opaque-fd path");
    else
        tap_ok(false, "the consumer took the opaque-fd path: it took %s though the bridge offers opaque-fd",
               clmem_bridge_path_name(clmem_ipc_consumer_path(c)));
#endif
}

/* ------------------------------------------------------------ batches */

/* One batch of n frames: taken with producer_next_many (max n), written,
 * handed over with one ready_many and the upload's fence, taken by the
 * consumer with one next_many (max FRAMES), every byte checked; then every
 * handle but one dropped (nothing may come back), then the last (all of
 * them must). */
static void batch(uint32_t n, const char *label)
{
    uint32_t idx[FRAMES], count = 0;
    clmem_ipc_frame fr[FRAMES];
    cl_event acquired = NULL;
    clmem_status st = clmem_ipc_producer_next_many(p, 0, n, idx, &count);
    bool distinct = true;
    for (uint32_t k = 0; k < count; k++)
        for (uint32_t j = 0; j < k; j++)
            distinct = distinct && idx[j] != idx[k];
    if (!tap_ok(st == CLMEM_OK && count == n && distinct,
                "%s: producer_next_many(max %u) hands out %u distinct free frames", label, n, count))
        tap_bail("  %s", clmem_error_message());
    uint64_t seq0 = next_sequence;
    VkCommandBuffer cb = upload(n, idx, seq0);
    st = clmem_ipc_producer_ready_many(p, n, idx, fence, TIMEOUT_NS);
    upload_done(cb);
    tap_ok(st == CLMEM_OK && clmem_ipc_producer_lent(p) == n,
           "  ... ready_many hands the %u over in one READY once the fence signalled: %u lent", n,
           clmem_ipc_producer_lent(p));
    if (st != CLMEM_OK)
        tap_bail("  %s", clmem_error_message());
    next_sequence += n;

    st = clmem_ipc_consumer_next_many(c, TIMEOUT_NS, FRAMES, fr, &count, &acquired);
    bool in_order = st == CLMEM_OK && count == n;
    for (uint32_t k = 0; in_order && k < n; k++)
        in_order = fr[k].index == idx[k] && fr[k].sequence == seq0 + k;
    tap_ok(in_order && acquired != NULL,
           "  ... consumer_next_many takes all %u at once (%u), in the producer's order, sequences %llu to %llu, "
           "with one acquire event", n, count, (unsigned long long)seq0, (unsigned long long)(seq0 + n - 1));
    if (st != CLMEM_OK)
        tap_bail("  %s", clmem_error_message());
    if (acquired) {
        clWaitForEvents(1, &acquired);
        clReleaseEvent(acquired);
    }
    uint64_t wrong = 0, bytes = 0;
    for (uint32_t k = 0; k < count; k++) {
        wrong += wrong_bytes(&fr[k]);
        for (uint32_t pl = 0; pl < fr[k].plane_count; pl++)
            bytes += fr[k].planes[pl].size;
    }
    tap_ok(wrong == 0, "  ... every byte of every plane as Vulkan wrote it (%llu bytes, %llu wrong)",
           (unsigned long long)bytes, (unsigned long long)wrong);

    /* The release point: the batch's last handle. */
    clmem_handle *last = fr[0].planes[0].handle;
    fr[0].planes[0].handle = NULL;
    for (uint32_t k = 0; k < count; k++)
        drop_frame(&fr[k]);
    if (n > 1 || plane_count_of(idx[0]) > 1) {
        st = clmem_ipc_producer_wait_all(p, SHORT_NS);
        tap_ok(st == CLMEM_ERR_TIMEOUT && clmem_ipc_producer_lent(p) == n,
               "  ... with every handle but one dropped, none of the %u comes back (%u lent after %llu ms)", n,
               clmem_ipc_producer_lent(p), (unsigned long long)(SHORT_NS / 1000000));
    }
    clmem_handle_unref(last);
    st = clmem_ipc_producer_wait_all(p, TIMEOUT_NS);
    tap_ok(st == CLMEM_OK && clmem_ipc_producer_lent(p) == 0,
           "  ... with the last one dropped, all %u come back together (%s)", n,
           st == CLMEM_OK ? "none lent" : clmem_error_message());
}

/* Every frame is free: one next_many takes them all, whatever batches
 * they were lent in; they go back as one batch of FRAMES. */
static void all_back(const char *after)
{
    uint32_t idx[FRAMES + 8], count = 0;
    bool seen[FRAMES] = {false};
    uint32_t distinct = 0;
    clmem_status st = clmem_ipc_producer_next_many(p, 0, FRAMES + 8, idx, &count);
    for (uint32_t k = 0; st == CLMEM_OK && k < count; k++)
        if (idx[k] < FRAMES && !seen[idx[k]]) {
            seen[idx[k]] = true;
            distinct++;
        }
    tap_ok(st == CLMEM_OK && count == FRAMES && distinct == FRAMES,
           "after %s: producer_next_many(max %d) hands out every frame, %u distinct", after, FRAMES + 8, distinct);
    if (st != CLMEM_OK || count == 0)
        tap_bail("  %s", clmem_error_message());
    /* Handed over again (no fence: nothing was written), and taken back. */
    st = clmem_ipc_producer_ready_many(p, count, idx, VK_NULL_HANDLE, 0);
    clmem_ipc_frame fr[FRAMES];
    uint32_t got = 0;
    if (st == CLMEM_OK)
        st = clmem_ipc_consumer_next_many(c, TIMEOUT_NS, FRAMES, fr, &got, NULL);
    for (uint32_t k = 0; k < got; k++)
        drop_frame(&fr[k]);
    next_sequence += count;
    if (st == CLMEM_OK)
        st = clmem_ipc_producer_wait_all(p, TIMEOUT_NS);
    tap_ok(st == CLMEM_OK && got == count && clmem_ipc_producer_lent(p) == 0,
           "  ... handed over and given back as one batch of %u (%s)", got,
           st == CLMEM_OK ? "ok" : clmem_error_message());
}

/* One READY of 4, taken by the consumer in parts: max 3, then the rest;
 * then one of 3 taken a frame at a time with clmem_ipc_consumer_next(). */
static void taken_in_parts(void)
{
    uint32_t idx[4], count = 0, got1 = 0, got2 = 0;
    clmem_ipc_frame fr[FRAMES];
    if (clmem_ipc_producer_next_many(p, 0, 4, idx, &count) != CLMEM_OK || count != 4)
        tap_bail("producer_next_many: %s", clmem_error_message());
    uint64_t seq0 = next_sequence;
    VkCommandBuffer cb = upload(4, idx, seq0);
    if (clmem_ipc_producer_ready_many(p, 4, idx, fence, TIMEOUT_NS) != CLMEM_OK)
        tap_bail("ready_many: %s", clmem_error_message());
    upload_done(cb);
    next_sequence += 4;
    clmem_status st1 = clmem_ipc_consumer_next_many(c, TIMEOUT_NS, 3, fr, &got1, NULL);
    clmem_status st2 = clmem_ipc_consumer_next_many(c, TIMEOUT_NS, FRAMES - 3, fr + 3, &got2, NULL);
    bool ok = st1 == CLMEM_OK && st2 == CLMEM_OK && got1 == 3 && got2 == 1;
    uint64_t wrong = 0;
    for (uint32_t k = 0; ok && k < 4; k++) {
        ok = fr[k].index == idx[k] && fr[k].sequence == seq0 + k;
        wrong += wrong_bytes(&fr[k]);
    }
    tap_ok(ok && wrong == 0,
           "a READY of 4 taken with max 3: 3 frames, then the fourth, in order, every byte right (%u + %u)", got1,
           got2);
    /* Two batches on the consumer's side: the first's frames come back
     * without the second's. How soon the first's come back is the
     * consumer's release thread's and the machine's to say (a loaded
     * machine took over 100 ms): they are waited for as long as any
     * frame is; only the fourth, which must not come back, gets the short
     * wait. */
    for (uint32_t k = 0; k < 3; k++)
        drop_frame(&fr[k]);
    long long until = tap_now_ns() + (long long)TIMEOUT_NS;
    while (clmem_ipc_producer_lent(p) > 1 && tap_now_ns() < until)
        (void)clmem_ipc_producer_wait_all(p, SHORT_NS / 10);
    clmem_status st = clmem_ipc_producer_wait_all(p, SHORT_NS);
    uint32_t back = 0, b[FRAMES];
    bool firsts = true;
    if (clmem_ipc_producer_next_many(p, 0, FRAMES, b, &back) == CLMEM_OK)
        for (uint32_t k = 0; k < back; k++)
            firsts = firsts && b[k] != idx[3];
    tap_ok(st == CLMEM_ERR_TIMEOUT && clmem_ipc_producer_lent(p) == 1 && firsts,
           "  ... the consumer's first part released: its 3 frames come back, the fourth stays lent (%u lent)",
           clmem_ipc_producer_lent(p));
    drop_frame(&fr[3]);
    /* The frames next_many handed out just now go over again, one READY,
     * and are read a frame at a time. */
    if (back == 0 || clmem_ipc_producer_ready_many(p, back, b, VK_NULL_HANDLE, 0) != CLMEM_OK)
        tap_bail("ready_many: %s", clmem_error_message());
    uint64_t seq1 = next_sequence;
    next_sequence += back;
    ok = true;
    for (uint32_t k = 0; k < back; k++) {
        clmem_ipc_frame one;
        ok = ok && clmem_ipc_consumer_next(c, TIMEOUT_NS, &one, NULL) == CLMEM_OK && one.plane_count &&
             one.index == b[k] && one.sequence == seq1 + k;
        drop_frame(&one);
    }
    st = clmem_ipc_producer_wait_all(p, TIMEOUT_NS);
    tap_ok(ok && st == CLMEM_OK, "  ... a READY of %u read with clmem_ipc_consumer_next(): one frame a call, in "
                                 "order, all back once dropped", back);
}

/* max above CLMEM_IPC_MAX_FRAMES: the consumer takes at most that many and
 * zeroes no element past them. */
static void consumer_max_above(void)
{
    enum { ROOM = FRAMES + 16 };
    static clmem_ipc_frame fr[ROOM];
    uint32_t idx[2], count = 0, got = 0;
    memset(fr, 0xab, sizeof fr);
    if (clmem_ipc_producer_next_many(p, 0, 2, idx, &count) != CLMEM_OK ||
        clmem_ipc_producer_ready_many(p, count, idx, VK_NULL_HANDLE, 0) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
    next_sequence += count;
    clmem_status st = clmem_ipc_consumer_next_many(c, TIMEOUT_NS, ROOM, fr, &got, NULL);
    bool zeroed = true, untouched = true;
    for (uint32_t k = got; k < FRAMES; k++)
        zeroed = zeroed && fr[k].plane_count == 0 && fr[k].planes[0].handle == NULL;
    for (const unsigned char *b = (const unsigned char *)&fr[FRAMES]; b < (const unsigned char *)&fr[ROOM]; b++)
        untouched = untouched && *b == 0xab;
    tap_ok(st == CLMEM_OK && got == count && zeroed && untouched,
           "consumer_next_many with max %d: CLMEM_OK, %u frames; the first %d elements zeroed, none past them "
           "touched", ROOM, got, FRAMES);
    for (uint32_t k = 0; k < got; k++)
        drop_frame(&fr[k]);
    if (clmem_ipc_producer_wait_all(p, TIMEOUT_NS) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
}

/* ------------------------------------------------- a release behind a gate */

/* Every frame lent to the consumer and taken by it, then a gate (a user
 * event) enqueued on the consumer's queue ahead of their release, and
 * every handle dropped: the producer holds none, and can send nothing
 * before their FREE. The gate is returned. */
static cl_event all_lent_behind_gate(clmem_ipc_frame *fr)
{
    uint32_t idx[FRAMES], count = 0, got = 0;
    cl_int err;
    if (clmem_ipc_producer_next_many(p, 0, FRAMES, idx, &count) != CLMEM_OK || count != FRAMES ||
        clmem_ipc_producer_ready_many(p, count, idx, VK_NULL_HANDLE, 0) != CLMEM_OK)
        tap_bail("lending every frame: %s", clmem_error_message());
    next_sequence += count;
    if (clmem_ipc_consumer_next_many(c, TIMEOUT_NS, FRAMES, fr, &got, NULL) != CLMEM_OK || got != FRAMES)
        tap_bail("taking every frame: %s", clmem_error_message());
    cl_event gate = clCreateUserEvent(f.context, &err);
    if (err != CL_SUCCESS || clEnqueueMarkerWithWaitList(f.queue, 1, &gate, NULL) != CL_SUCCESS ||
        clFlush(f.queue) != CL_SUCCESS)
        tap_bail("a gate on the consumer's queue: %d", err);
    for (uint32_t k = 0; k < got; k++)
        drop_frame(&fr[k]);
    return gate;
}

struct late_gate {
    cl_event gate;
    clmem_status back, ready;
    uint32_t index;
};

/* The gate opens 50 ms after the consumer began to wait; once the frames
 * are back, the producer hands one over. */
static void *open_gate_late(void *arg)
{
    struct late_gate *g = arg;
    usleep(50000);
    clSetUserEventStatus(g->gate, CL_COMPLETE);
    g->back = clmem_ipc_producer_wait_all(p, TIMEOUT_NS);
    g->ready = g->back;
    if (g->ready == CLMEM_OK)
        g->ready = clmem_ipc_producer_next(p, 0, &g->index);
    if (g->ready == CLMEM_OK)
        g->ready = clmem_ipc_producer_ready(p, g->index, VK_NULL_HANDLE, 0);
    return NULL;
}

/* With every frame dropped and their release behind a gate, the
 * consumer's next() keeps its deadline, and FREE goes only once the
 * release completed: against a gate that opens late, on this thread and
 * on another one. On NVIDIA the release's enqueue itself waits behind the
 * gate (docs/driver-notes.md), so a next() that made it would be held past
 * its deadline. */
static void release_behind_gate(void)
{
    clmem_ipc_frame fr[FRAMES], one;

    cl_event gate = all_lent_behind_gate(fr);
    long long t0 = tap_now_ns();
    clmem_status st = clmem_ipc_consumer_next(c, SHORT_NS, &one, NULL);
    double waited = tap_ms_between(t0, tap_now_ns());
    tap_ok(st == CLMEM_ERR_TIMEOUT && one.plane_count == 0 && waited < SHORT_NS / 1e6 + 1000,
           "every frame dropped behind a shut gate: clmem_ipc_consumer_next(%llu ms) times out on time (%.0f ms): %s",
           (unsigned long long)(SHORT_NS / 1000000), waited, st == CLMEM_OK ? "a frame" : clmem_error_message());
    st = clmem_ipc_producer_wait_all(p, SHORT_NS);
    tap_ok(st == CLMEM_ERR_TIMEOUT && clmem_ipc_producer_lent(p) == FRAMES,
           "  ... and none comes back while the gate is shut (%u lent)", clmem_ipc_producer_lent(p));
    clSetUserEventStatus(gate, CL_COMPLETE);
    st = clmem_ipc_producer_wait_all(p, TIMEOUT_NS);
    tap_ok(st == CLMEM_OK && clmem_ipc_producer_lent(p) == 0, "  ... once it opens, all %d come back (%s)", FRAMES,
           st == CLMEM_OK ? "none lent" : clmem_error_message());
    clReleaseEvent(gate);

    struct late_gate g = {.gate = all_lent_behind_gate(fr)};
    uint64_t seq = next_sequence;
    pthread_t t;
    t0 = tap_now_ns(); /* before the thread's 50 ms begin */
    pthread_create(&t, NULL, open_gate_late, &g);
    st = clmem_ipc_consumer_next(c, TIMEOUT_NS, &one, NULL);
    waited = tap_ms_between(t0, tap_now_ns());
    pthread_join(t, NULL);
    next_sequence += g.ready == CLMEM_OK;
    tap_ok(st == CLMEM_OK && g.back == CLMEM_OK && g.ready == CLMEM_OK && one.plane_count > 0 &&
               one.index == g.index && one.sequence == seq && waited >= 50,
           "  ... a gate opened by another thread 50 ms in: the frames come back, and the consumer's next() hands "
           "out the frame the producer sent then (after %.0f ms): %s",
           waited, st != CLMEM_OK ? clmem_error_message() : g.ready != CLMEM_OK ? "the producer failed" : "ok");
    drop_frame(&one);
    if (clmem_ipc_producer_wait_all(p, TIMEOUT_NS) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
    clReleaseEvent(g.gate);
}

/* ------------------------------------------------------------ bad input */

/* The consumer has nothing waiting: next_many with no wait times out. */
static bool consumer_has_nothing(void)
{
    clmem_ipc_frame fr[FRAMES];
    uint32_t got = 9;
    return clmem_ipc_consumer_next_many(c, 0, FRAMES, fr, &got, NULL) == CLMEM_ERR_TIMEOUT && got == 0;
}

static void bad_input(void)
{
    uint32_t idx[FRAMES + 1], count = 0, lent_idx[2], got = 0;
    clmem_ipc_frame fr[FRAMES];
    cl_event ev = (cl_event)(uintptr_t)1;

    /* Two frames lent to the consumer, held there (already handed over). */
    if (clmem_ipc_producer_next_many(p, 0, 2, lent_idx, &count) != CLMEM_OK || count != 2 ||
        clmem_ipc_producer_ready_many(p, 2, lent_idx, VK_NULL_HANDLE, 0) != CLMEM_OK ||
        clmem_ipc_consumer_next_many(c, TIMEOUT_NS, FRAMES, fr, &got, NULL) != CLMEM_OK || got != 2)
        tap_bail("lending two frames: %s", clmem_error_message());
    next_sequence += 2;
    clmem_ipc_frame lent_fr[2] = {fr[0], fr[1]};
    /* Three frames the caller holds from producer_next_many. */
    uint32_t mine[3];
    if (clmem_ipc_producer_next_many(p, 0, 3, mine, &count) != CLMEM_OK || count != 3)
        tap_bail("producer_next_many: %s", clmem_error_message());
    /* A frame the producer holds that next_many did not hand out. */
    uint32_t never = FRAMES;
    for (uint32_t i = 0; i < FRAMES && never == FRAMES; i++)
        if (i != mine[0] && i != mine[1] && i != mine[2] && i != lent_idx[0] && i != lent_idx[1])
            never = i;

    /* producer_next_many */
    count = 5;
    tap_ok(clmem_ipc_producer_next_many(NULL, 0, 1, idx, &count) == CLMEM_ERR_NULL_POINTER && count == 0 &&
               says("clmem_ipc_producer_next_many", "p is NULL"),
           "producer_next_many(NULL producer): CLMEM_ERR_NULL_POINTER, count 0: %s", clmem_error_message());
    count = 5;
    tap_ok(clmem_ipc_producer_next_many(p, 0, 1, NULL, &count) == CLMEM_ERR_NULL_POINTER && count == 0 &&
               says("clmem_ipc_producer_next_many", "indices_out is NULL"),
           "producer_next_many(NULL indices_out): CLMEM_ERR_NULL_POINTER: %s", clmem_error_message());
    tap_ok(clmem_ipc_producer_next_many(p, 0, 1, idx, NULL) == CLMEM_ERR_NULL_POINTER &&
               says("clmem_ipc_producer_next_many", "count_out is NULL"),
           "producer_next_many(NULL count_out): CLMEM_ERR_NULL_POINTER: %s", clmem_error_message());
    count = 5;
    tap_ok(clmem_ipc_producer_next_many(p, 0, 0, idx, &count) == CLMEM_ERR_INVALID_VALUE && count == 0 &&
               says("clmem_ipc_producer_next_many", "max is 0"),
           "producer_next_many(max 0): CLMEM_ERR_INVALID_VALUE, count 0: %s", clmem_error_message());

    /* producer_ready_many: each refused, the three frames still the caller's. */
    struct {
        const char *name;
        uint32_t count;
        uint32_t idx[4];
        bool null_p, null_indices;
        clmem_status want;
        const char *fragment;
    } cases[] = {
        {"a NULL producer", 1, {mine[0]}, true, false, CLMEM_ERR_NULL_POINTER, "p is NULL"},
        {"NULL indices", 1, {0}, false, true, CLMEM_ERR_NULL_POINTER, "indices is NULL"},
        {"count 0", 0, {mine[0]}, false, false, CLMEM_ERR_INVALID_VALUE, "count 0;"},
        {"count above the frames offered", FRAMES + 1, {0}, false, false, CLMEM_ERR_INVALID_VALUE, "count 65;"},
        {"an index twice", 3, {mine[0], mine[1], mine[0]}, false, false, CLMEM_ERR_INVALID_VALUE,
         "a batch names each frame once"},
        {"an index past the frames", 2, {mine[0], 99}, false, false, CLMEM_ERR_INVALID_VALUE, "frame 99, is not one"},
        {"a frame next_many did not hand out", 2, {mine[1], never}, false, false, CLMEM_ERR_INVALID_VALUE,
         "is not one clmem_ipc_producer_next()"},
        {"a frame already handed over (lent)", 3, {mine[0], mine[1], lent_idx[0]}, false, false,
         CLMEM_ERR_INVALID_VALUE, "is not one clmem_ipc_producer_next()"},
    };
    char fragment[64];
    snprintf(fragment, sizeof fragment, "indices[0] and indices[2] are both frame %u", mine[0]);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint32_t *ix = cases[i].idx;
        uint32_t big[FRAMES + 1];
        if (cases[i].count > 4) { /* count 65: the first 3 the caller's, the rest anything */
            for (uint32_t k = 0; k < FRAMES + 1; k++)
                big[k] = k < 3 ? mine[k] : k;
            ix = big;
        }
        clmem_error_clear();
        clmem_status st = clmem_ipc_producer_ready_many(cases[i].null_p ? NULL : p, cases[i].count,
                                                        cases[i].null_indices ? NULL : ix, VK_NULL_HANDLE, 0);
        const char *frag = strstr(cases[i].name, "twice") ? fragment : cases[i].fragment;
        bool ok = tap_ok(st == cases[i].want && says("clmem_ipc_producer_ready_many", frag) &&
                             clmem_ipc_producer_lent(p) == 2,
                         "ready_many with %s: %s, saying \"%s\"; nothing lent beyond the two", cases[i].name,
                         clmem_status_name(cases[i].want), frag);
        if (!ok)
            tap_diag("  got %s: %s", clmem_status_name(st), clmem_error_message());
    }
    /* A fence that never signals: nothing sent. */
    VkFence never_signalled;
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vkCreateFence(vk.device, &fci, NULL, &never_signalled);
    clmem_status st = clmem_ipc_producer_ready_many(p, 3, mine, never_signalled, UINT64_C(1000000));
    tap_ok(st == CLMEM_ERR_TIMEOUT && says("clmem_ipc_producer_ready_many", "the fence of 3 frames did not signal") &&
               clmem_ipc_producer_lent(p) == 2,
           "ready_many with a fence that never signals: CLMEM_ERR_TIMEOUT, nothing sent: %s", clmem_error_message());
    vkDestroyFence(vk.device, never_signalled, NULL);
    tap_ok(consumer_has_nothing(), "  ... after every refusal the consumer has received nothing");

    /* consumer_next_many: each refused with count 0 and no event. */
    got = 5;
    tap_ok(clmem_ipc_consumer_next_many(NULL, 0, 1, fr, &got, &ev) == CLMEM_ERR_NULL_POINTER && got == 0 &&
               ev == NULL && says("clmem_ipc_consumer_next_many", "c is NULL"),
           "consumer_next_many(NULL consumer): CLMEM_ERR_NULL_POINTER, count 0, no event: %s", clmem_error_message());
    got = 5;
    tap_ok(clmem_ipc_consumer_next_many(c, 0, 1, NULL, &got, NULL) == CLMEM_ERR_NULL_POINTER && got == 0 &&
               says("clmem_ipc_consumer_next_many", "frames_out is NULL"),
           "consumer_next_many(NULL frames_out): CLMEM_ERR_NULL_POINTER: %s", clmem_error_message());
    tap_ok(clmem_ipc_consumer_next_many(c, 0, 1, fr, NULL, NULL) == CLMEM_ERR_NULL_POINTER &&
               says("clmem_ipc_consumer_next_many", "count_out is NULL"),
           "consumer_next_many(NULL count_out): CLMEM_ERR_NULL_POINTER: %s", clmem_error_message());

    /* The three frames are still the caller's: handed over now, with the
     * sequences due (no refused call took one); the consumer's bad calls
     * come while they wait for it and take nothing. */
    uint64_t seq0 = next_sequence;
    VkCommandBuffer cb = upload(3, mine, seq0);
    st = clmem_ipc_producer_ready_many(p, 3, mine, fence, TIMEOUT_NS);
    upload_done(cb);
    tap_ok(st == CLMEM_OK && clmem_ipc_producer_lent(p) == 5,
           "after the refusals the same three frames are handed over: CLMEM_OK, 5 lent (%s)",
           st == CLMEM_OK ? "ok" : clmem_error_message());
    next_sequence += 3;
    got = 5;
    ev = (cl_event)(uintptr_t)1;
    tap_ok(clmem_ipc_consumer_next_many(c, 0, 0, fr, &got, &ev) == CLMEM_ERR_INVALID_VALUE && got == 0 &&
               ev == NULL && says("clmem_ipc_consumer_next_many", "max is 0"),
           "consumer_next_many(max 0) with a batch waiting: CLMEM_ERR_INVALID_VALUE, count 0, no event: %s",
           clmem_error_message());
    st = clmem_ipc_consumer_next_many(c, TIMEOUT_NS, FRAMES, fr, &got, NULL);
    bool ok = st == CLMEM_OK && got == 3;
    uint64_t wrong = 0;
    for (uint32_t k = 0; ok && k < 3; k++) {
        ok = fr[k].index == mine[k] && fr[k].sequence == seq0 + k;
        wrong += wrong_bytes(&fr[k]);
    }
    tap_ok(ok && wrong == 0, "  ... and the consumer then gets the three whole, in order, sequences %llu to %llu, "
                             "every byte right", (unsigned long long)seq0, (unsigned long long)(seq0 + 2));
    for (uint32_t k = 0; k < got; k++)
        drop_frame(&fr[k]);
    drop_frame(&lent_fr[0]);
    drop_frame(&lent_fr[1]);
    st = clmem_ipc_producer_wait_all(p, TIMEOUT_NS);
    tap_ok(st == CLMEM_OK, "  ... and all five come back once dropped (%s)",
           st == CLMEM_OK ? "none lent" : clmem_error_message());
    /* The frame the refused call named (never handed out) is still free. */
    uint32_t back = 0;
    bool found = false;
    if (clmem_ipc_producer_next_many(p, 0, FRAMES, idx, &back) == CLMEM_OK)
        for (uint32_t k = 0; k < back; k++)
            found = found || idx[k] == never;
    tap_ok(back == FRAMES && found, "  ... and next_many hands out all %u frames, frame %u among them", back, never);
    if (back && clmem_ipc_producer_ready_many(p, back, idx, VK_NULL_HANDLE, 0) == CLMEM_OK) {
        next_sequence += back;
        if (clmem_ipc_consumer_next_many(c, TIMEOUT_NS, FRAMES, fr, &got, NULL) == CLMEM_OK)
            for (uint32_t k = 0; k < got; k++)
                drop_frame(&fr[k]);
    }
    if (clmem_ipc_producer_wait_all(p, TIMEOUT_NS) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
}

/* ------------------------------------------------------------ the end */

static void end(void)
{
    clmem_ipc_producer_destroy(p); /* BYE */
    clmem_ipc_frame fr[FRAMES];
    uint32_t got = 9;
    clmem_status st = clmem_ipc_consumer_next_many(c, TIMEOUT_NS, FRAMES, fr, &got, NULL);
    tap_ok(st == CLMEM_OK && got == 0 && clmem_ipc_consumer_state(c) == CLMEM_IPC_STATE_ENDED,
           "after the producer's BYE: consumer_next_many says the end (CLMEM_OK, count 0), state ended");
    tap_ok(clmem_ipc_consumer_destroy(c, TIMEOUT_NS) == CLMEM_OK, "the consumer is destroyed");
}

/* ------------------------------------------------- a frame alone in its allocation */

#define ALONE 2
static struct vk_owned alone_mem[ALONE];
static clmem_keepalive *alone_anchor[ALONE];

/* ALONE NV12 images, each the only frame of its allocation, the chroma
 * plane CHROMA_OFFSET in. */
static void offer_alone(void)
{
    for (uint32_t i = 0; i < ALONE; i++) {
        clmem_bridge_vk_image img = nv12_at(&alone_mem[i].memory, 0, CHROMA_OFFSET);
        if (clmem_ipc_producer_add_image(p, &img, CLMEM_IPC_MEMORY_TYPE_BY_FLAGS, NULL) != CLMEM_OK)
            tap_bail("offering frame %u: %s", i, clmem_error_message());
    }
}

/* The first of them again, its chroma plane 4 bytes further: not where a
 * sub-buffer can start on any device that aligns buffers to more. */
static void offer_misaligned(void)
{
    clmem_bridge_vk_image img = nv12_at(&alone_mem[0].memory, 0, CHROMA_OFFSET + 4);
    if (clmem_ipc_producer_add_image(p, &img, CLMEM_IPC_MEMORY_TYPE_BY_FLAGS, NULL) != CLMEM_OK)
        tap_bail("offering the frame: %s", clmem_error_message());
}

/* The buffer a plane's cl_mem is a sub-buffer of (NULL: none), and where. */
static cl_mem parent_of(const clmem_ipc_plane *pl, size_t *offset)
{
    cl_mem parent = NULL;
    *offset = 0;
    clGetMemObjectInfo(clmem_handle_mem(pl->handle), CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL);
    clGetMemObjectInfo(clmem_handle_mem(pl->handle), CL_MEM_OFFSET, sizeof *offset, offset, NULL);
    return parent;
}

/* Every 32-bit word of the plane is `value`. */
static bool plane_holds(const clmem_ipc_plane *pl, uint32_t value)
{
    static uint32_t got[FRAME_BYTES / 4];
    size_t words = (size_t)pl->size / 4;
    if (clEnqueueReadBuffer(f.queue, clmem_handle_mem(pl->handle), CL_TRUE, 0, words * 4, got, 0, NULL, NULL) !=
        CL_SUCCESS)
        return false;
    for (size_t w = 0; w < words; w++)
        if (got[w] != value)
            return false;
    return true;
}

/* A frame alone in its allocation whose chroma plane cannot be a
 * sub-buffer there: the consumer's start refuses it with
 * CLMEM_ERR_INVALID_VALUE naming the plane, after the luma plane's
 * sub-buffer and the import were made (both let go again: the bridge
 * settles, and main() checks every exported fd is closed). */
static void misaligned_plane(void)
{
    cl_uint align_bits = 0;
    clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    if (align_bits / 8 <= 4) {
        tap_skip("the OpenCL device starts sub-buffers at any multiple of 4 bytes", "a misaligned chroma plane");
        return;
    }
    create_pair();
    offer_misaligned();
    struct starter s;
    clmem_status st = start_pair(&s);
    char fragment[96];
    snprintf(fragment, sizeof fragment, "plane 1 of frame 0 (%d bytes at offset %d", NV12_W * NV12_H / 2,
             CHROMA_OFFSET + 4);
    tap_ok(st == CLMEM_ERR_INVALID_VALUE && says("clmem_ipc_consumer_start", fragment) &&
               strstr(clmem_error_message(), "CL_DEVICE_MEM_BASE_ADDR_ALIGN") && s.st != CLMEM_OK,
           "a frame alone in its allocation, its chroma plane at offset %d (the device aligns to %u bytes): the "
           "consumer's start refuses it, CLMEM_ERR_INVALID_VALUE naming the plane (%s: %s); the producer's "
           "fails too (%s)",
           CHROMA_OFFSET + 4, align_bits / 8, clmem_status_name(st), clmem_error_message(), s.why);
    clmem_ipc_producer_destroy(p);
    tap_ok(clmem_ipc_consumer_destroy(c, TIMEOUT_NS) == CLMEM_OK &&
               bridge_settle(bridge) == CLMEM_OK,
           "  ... both are destroyed, and the bridge has nothing of it left to tear down");
}

/* A frame alone in its allocation: its planes are sub-buffers of one
 * import of the whole allocation (one object to hand over, as the raw calls
 * would import it), at the planes' offsets, and hold the bytes Vulkan
 * wrote; twice, so that the second time is a frame handed out before. */
static void alone_in_allocation(void)
{
    for (uint32_t i = 0; i < ALONE; i++)
        alone_anchor[i] = vk_owned_new(&alone_mem[i], bridge, &vk, FRAME_BYTES, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                       VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    connect_pair(offer_alone, "2 NV12 images, each alone in its allocation");
    for (uint32_t round = 0; round < 2; round++) {
        uint32_t idx[ALONE], count = 0, got = 0;
        clmem_ipc_frame fr[FRAMES];
        if (clmem_ipc_producer_next_many(p, 0, ALONE, idx, &count) != CLMEM_OK || count != ALONE)
            tap_bail("producer_next_many: %s", clmem_error_message());
        for (uint32_t k = 0; k < count; k++)
            if (vkctx_fill(&vk, alone_mem[idx[k]].buffer, 0, FRAME_BYTES, 0x5a000000u + round * 16 + idx[k]) !=
                VK_SUCCESS)
                tap_bail("vkctx_fill failed");
        clmem_status st = clmem_ipc_producer_ready_many(p, count, idx, VK_NULL_HANDLE, 0);
        if (st == CLMEM_OK)
            st = clmem_ipc_consumer_next_many(c, TIMEOUT_NS, FRAMES, fr, &got, NULL);
        if (st != CLMEM_OK || got != ALONE)
            tap_bail("handing the frames over: %s", clmem_error_message());
        next_sequence += count;
        for (uint32_t k = 0; k < got; k++) {
            size_t luma_at, chroma_at;
            cl_mem luma = parent_of(&fr[k].planes[0], &luma_at), chroma = parent_of(&fr[k].planes[1], &chroma_at);
            uint32_t value = 0x5a000000u + round * 16 + fr[k].index;
            tap_ok(fr[k].plane_count == 2 && luma && luma == chroma && luma_at == 0 && chroma_at == CHROMA_OFFSET,
                   "%sframe %u alone in its allocation: both planes are sub-buffers of one import, at offsets %zu "
                   "and %zu (want 0 and %d)",
                   round ? "again, " : "", fr[k].index, luma_at, chroma_at, CHROMA_OFFSET);
            tap_ok(plane_holds(&fr[k].planes[0], value) && plane_holds(&fr[k].planes[1], value),
                   "  ... both planes hold what Vulkan wrote (0x%08x)", value);
        }
        for (uint32_t k = 0; k < got; k++)
            drop_frame(&fr[k]);
        st = clmem_ipc_producer_wait_all(p, TIMEOUT_NS);
        tap_ok(st == CLMEM_OK && clmem_ipc_producer_lent(p) == 0, "  ... and both come back once dropped (%s)",
               st == CLMEM_OK ? "none lent" : clmem_error_message());
    }
    end();
}

int main(void)
{
    bridge_open_vulkan(&vk);
    if (!vk.has_memory_fd)
        tap_skip_all("the Vulkan device %s has no VK_KHR_external_memory_fd: nothing to export", vk.device_name);
    cl_fixture_open_paired(&f, &vk);
    bridge = bridge_open(&vk, &f, 0);
    mem_anchor = vk_owned_new(&mem, bridge, &vk, (VkDeviceSize)FRAMES * FRAME_BYTES,
                              VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    if (!vk_staging_open(&staging, bridge, &vk, (VkDeviceSize)FRAMES * FRAME_BYTES))
        tap_bail("mapping the staging buffer failed");
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (vkCreateFence(vk.device, &fci, NULL, &fence) != VK_SUCCESS)
        tap_bail("vkCreateFence failed");
    int fds_before = fd_count();
    tap_watchdog("t/ipc/ipc-batch", 300);

    connect_pair(offer_shared, "64 frames (buffers and NV12 images) in one allocation");
    all_back("the handshake");
    batch(1, "a batch of 1");
    batch(3, "a batch of 3");
    batch(4, "a batch of 4");
    all_back("batches of 1, 3 and 4");
    batch(FRAMES, "a batch of CLMEM_IPC_MAX_FRAMES (64)");
    batch(FRAMES, "a second batch of 64");
    batch(4, "a batch of 4 after them");
    taken_in_parts();
    consumer_max_above();
    release_behind_gate();
    bad_input();
    end();
    alone_in_allocation();
    misaligned_plane();

    tap_ok(bridge_settle(bridge) == CLMEM_OK, "clmem_bridge_finish: the consumer's imports are all torn down");
    vkDestroyFence(vk.device, fence, NULL);
    vk_staging_close(&staging);
    clmem_keepalive_unref(mem_anchor);
    for (uint32_t i = 0; i < ALONE; i++)
        clmem_keepalive_unref(alone_anchor[i]);
    bridge_settle(bridge);
    char list[512];
    tap_ok(fd_watch_open(list, sizeof list) == 0, "every memory fd the producer exported is closed (%u exported; "
                                                  "open: %s)", fd_watch_exported(), list);
    tap_diag("fds open: %d before, %d after", fds_before, fd_count());
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error%s",
               vk.validation ? "" : " (it is not installed or not enabled: nothing checked)");
    clmem_bridge_unref(bridge);
    cl_fixture_close(&f);
    vkctx_close(&vk);
    return tap_done();
}
