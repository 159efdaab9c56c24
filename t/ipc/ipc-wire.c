/* SPDX-License-Identifier: MIT */
/* The protocol's parser (ipc/wire.c) and its rules of conversation
 * (ipc/proto.c) on their own, no device and no socket: a table of
 * malformed messages, each a valid message with one field changed, walked
 * by one loop (the status and a fragment of the sentence); then sequences
 * of messages each side must refuse; and the fds that come with messages:
 * kept by an accepted ALLOC, closed by everything else. */
#define _GNU_SOURCE
#include "proto.h"
#include "t/lib/tap.h"
#include "t/lib/fd-count.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void put(uint8_t *b, size_t off, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        b[off + i] = (uint8_t)(v >> 8 * i);
}

/* A valid message of each type, as the library's encoder writes it. */
static size_t valid(enum ipc_type type, uint8_t *b)
{
    struct ipc_msg m = {.type = type};
    switch (type) {
    case IPC_HELLO:
        m.u.hello = (struct ipc_hello){.role = IPC_ROLE_PRODUCER, .allocation_count = 1, .frame_count = 2};
        memset(m.u.hello.device_uuid, 0xab, 16);
        break;
    case IPC_ALLOC:
        m.u.alloc = (struct ipc_alloc){.index = 0, .handle_type = IPC_HANDLE_OPAQUE_FD, .allocation_size = 1 << 20,
                                       .memory_type_index = 1};
        break;
    case IPC_FRAME: /* NV12 64x32: Y at 0, CbCr at 4096, pitch 64 */
        m.u.frame = (struct ipc_frame){.index = 0, .allocation = 0, .format = VK_FORMAT_G8_B8R8_2PLANE_420_UNORM,
                                       .width = 64, .height = 32, .plane_count = 2};
        m.u.frame.planes[0] = (struct ipc_plane){0, 2048, 64, 64, 32};
        m.u.frame.planes[1] = (struct ipc_plane){4096, 1024, 64, 32, 16};
        break;
    case IPC_ACCEPT:
        m.u.accept.path = CLMEM_BRIDGE_PATH_OPAQUE_FD;
        break;
    case IPC_READY:
    case IPC_FREE:
        m.u.handoff = (struct ipc_handoff){.count = 1, .index = {1}, .sequence = {0}};
        break;
    case IPC_ERROR:
        m.u.error.status = CLMEM_ERR_UNSUPPORTED;
        strcpy(m.u.error.text, "no path");
        break;
    case IPC_BYE:
        break;
    }
    return clmem__ipc_encode(&m, b);
}

/* One field changed: `bytes` bytes at `off` set to `value`; len_delta
 * makes the message longer or shorter than valid. */
struct parse_case {
    const char *name;
    enum ipc_type type;
    size_t off;
    uint64_t value;
    int bytes;
    int len_delta;
    unsigned fds; /* how many fds "arrived" with it */
    clmem_status want;
    const char *fragment;
};

#define H 16 /* the header's size: fields of a message's body start here */
#define PL(i) (H + 24 + (i) * 32) /* FRAME's plane i */

static const struct parse_case parse_cases[] = {
    /* valid messages */
    {"valid HELLO", IPC_HELLO, 0, 0, 0, 0, 0, CLMEM_OK, NULL},
    {"valid ALLOC with its fd", IPC_ALLOC, 0, 0, 0, 0, 1, CLMEM_OK, NULL},
    {"valid NV12 FRAME", IPC_FRAME, 0, 0, 0, 0, 0, CLMEM_OK, NULL},
    {"valid ACCEPT", IPC_ACCEPT, 0, 0, 0, 0, 0, CLMEM_OK, NULL},
    {"valid READY", IPC_READY, 0, 0, 0, 0, 0, CLMEM_OK, NULL},
    {"valid FREE", IPC_FREE, 0, 0, 0, 0, 0, CLMEM_OK, NULL},
    {"valid BYE", IPC_BYE, 0, 0, 0, 0, 0, CLMEM_OK, NULL},
    {"valid ERROR", IPC_ERROR, 0, 0, 0, 0, 0, CLMEM_OK, NULL},
    /* the header */
    {"a message shorter than the header", IPC_BYE, 0, 0, 0, -1, 0, CLMEM_ERR_INVALID_VALUE, "a message of 15 bytes"},
    {"bad magic", IPC_HELLO, 0, 0x58585858, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "not a clmem-ipc peer"},
    {"version 0", IPC_HELLO, 4, 0, 2, 0, 0, CLMEM_ERR_UNSUPPORTED, "protocol version 0"},
    {"version 1 (frames one at a time)", IPC_HELLO, 4, 1, 2, 0, 0, CLMEM_ERR_UNSUPPORTED,
     "version 1, which hands frames over one at a time (libclmem-ipc 0.3); this library speaks version 2"},
    {"version 3", IPC_READY, 4, 3, 2, 0, 0, CLMEM_ERR_UNSUPPORTED, "protocol version 3; this library speaks version 2"},
    {"type 0", IPC_BYE, 6, 0, 2, 0, 0, CLMEM_ERR_INVALID_VALUE, "type 0, which version 2 does not define"},
    {"type 9", IPC_BYE, 6, 9, 2, 0, 0, CLMEM_ERR_INVALID_VALUE, "type 9"},
    {"type 0xffff", IPC_BYE, 6, 0xffff, 2, 0, 0, CLMEM_ERR_INVALID_VALUE, "type 65535"},
    {"a length field that lies", IPC_READY, 8, 37, 4, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "READY of 1 frame in 36 bytes that says it has 37"},
    {"a READY one byte too long", IPC_READY, 8, 37, 4, 1, 0, CLMEM_ERR_INVALID_VALUE, "says it has 37; it has 36"},
    {"a FREE cut short", IPC_FREE, 8, 39, 4, -1, 0, CLMEM_ERR_INVALID_VALUE, "FREE of 1 frame in 39 bytes"},
    {"a FRAME cut short", IPC_FRAME, 8, 100, 4, -36, 0, CLMEM_ERR_INVALID_VALUE, "a FRAME has 136"},
    {"READY announcing an fd", IPC_READY, 12, 1, 4, 0, 1, CLMEM_ERR_INVALID_VALUE, "announces 1 fd and came with 1"},
    {"READY with an fd unannounced", IPC_READY, 0, 0, 0, 0, 1, CLMEM_ERR_INVALID_VALUE,
     "announces 0 fds and came with 1"},
    {"ALLOC without its fd", IPC_ALLOC, 0, 0, 0, 0, 0, CLMEM_ERR_INVALID_VALUE, "announces 1 fd and came with 0"},
    {"ALLOC with two fds", IPC_ALLOC, 0, 0, 0, 0, 2, CLMEM_ERR_INVALID_VALUE, "came with 2"},
    {"ALLOC announcing two", IPC_ALLOC, 12, 2, 4, 0, 2, CLMEM_ERR_INVALID_VALUE, "announces 2 fds"},
    /* HELLO */
    {"HELLO role 3", IPC_HELLO, H, 3, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "role 3"},
    {"HELLO flags", IPC_HELLO, H + 4, 0x10, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "flags 0x10"},
    /* ALLOC */
    {"ALLOC handle type 2", IPC_ALLOC, H + 4, 2, 4, 0, 1, CLMEM_ERR_INVALID_VALUE, "handle type 2"},
    {"ALLOC of 0 bytes", IPC_ALLOC, H + 8, 0, 8, 0, 1, CLMEM_ERR_INVALID_VALUE, "allocation size of 0 bytes"},
    {"ALLOC of 2^48 + 1 bytes", IPC_ALLOC, H + 8, (UINT64_C(1) << 48) + 1, 8, 0, 1, CLMEM_ERR_INVALID_VALUE,
     "must be 1 to 2^48"},
    {"ALLOC of 2^64 - 1 bytes", IPC_ALLOC, H + 8, UINT64_MAX, 8, 0, 1, CLMEM_ERR_INVALID_VALUE, "must be 1 to 2^48"},
    {"ALLOC memory type 32", IPC_ALLOC, H + 16, 32, 4, 0, 1, CLMEM_ERR_INVALID_VALUE, "memory type 32"},
    {"ALLOC flags 0x2", IPC_ALLOC, H + 20, 2, 4, 0, 1, CLMEM_ERR_INVALID_VALUE, "flags 0x2"},
    /* FRAME */
    {"FRAME of 0 planes", IPC_FRAME, H + 20, 0, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "with 0 planes"},
    {"FRAME of 4 planes", IPC_FRAME, H + 20, 4, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "with 4 planes"},
    {"FRAME with bytes in an unused plane", IPC_FRAME, PL(2) + 8, 1, 1, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "bytes set in plane 2's place"},
    {"FRAME plane reserved field", IPC_FRAME, PL(0) + 28, 1, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "reserved field of 0x1"},
    {"FRAME plane of 0 bytes", IPC_FRAME, PL(1) + 8, 0, 8, 0, 0, CLMEM_ERR_INVALID_VALUE, "plane 1 is 0 bytes"},
    {"FRAME plane offset overflowing", IPC_FRAME, PL(1), UINT64_MAX - 100, 8, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "ends within 2^48"},
    {"FRAME of an unknown format", IPC_FRAME, H + 8, 12345, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "VkFormat 12345"},
    {"NV12 FRAME of 1 plane", IPC_FRAME, H + 20, 1, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "bytes set in plane 1's place"},
    {"NV12 FRAME of odd width", IPC_FRAME, H + 12, 63, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "must be even"},
    {"NV12 FRAME of width 0", IPC_FRAME, H + 12, 0, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "must not be empty"},
    {"NV12 FRAME with a full-size chroma plane", IPC_FRAME, PL(1) + 20, 64, 4, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "plane 1 is 64x16; it must be 32x16"},
    {"FRAME pitch shorter than a row", IPC_FRAME, PL(0) + 16, 63, 4, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "row pitch of 63 bytes"},
    {"FRAME chroma pitch not a multiple of its texel", IPC_FRAME, PL(1) + 16, 65, 4, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "a multiple of 2"},
    {"FRAME rows past the plane's bytes", IPC_FRAME, PL(0) + 16, 128, 4, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "needs 4032 bytes but is 2048"},
    {"buffer FRAME with an extent", IPC_FRAME, H + 8, 0, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "a buffer has one plane"},
    /* ACCEPT, READY, ERROR */
    {"ACCEPT naming dma-buf", IPC_ACCEPT, H, 2, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "naming path 2"},
    {"ACCEPT naming BEST", IPC_ACCEPT, H, 0, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "naming path 0"},
    {"ACCEPT reserved", IPC_ACCEPT, H + 4, 1, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "reserved field of 0x1"},
    {"READY reserved", IPC_READY, H + 4, 7, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "reserved field of 0x7"},
    /* READY and FREE: batches */
    {"READY of 0 frames", IPC_READY, H, 0, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "a batch of 0 frames; a batch has 1 to 64"},
    {"FREE of 65 frames", IPC_FREE, H, 65, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "a batch of 65 frames; a batch has 1 to 64"},
    {"READY of 2 frames in 1 frame's bytes", IPC_READY, H, 2, 4, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "READY of 2 frames in 36 bytes that says it has 36; it has 40"},
    {"FREE of 2 frames in 1 frame's bytes", IPC_FREE, H, 2, 4, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "FREE of 2 frames in 40 bytes that says it has 40; it has 56"},
    {"READY naming frame 64", IPC_READY, H + 16, 64, 4, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "entry 0 names frame 64; a producer offers at most 64"},
    {"FREE naming frame 2^32 - 1", IPC_FREE, H + 16, UINT32_MAX, 4, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "entry 0 names frame 4294967295"},
    {"READY from the last sequence on", IPC_READY, H + 8, UINT64_MAX, 8, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "past the last sequence"},
    {"FREE reserved", IPC_FREE, H + 4, 1, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "FREE with a reserved field of 0x1"},
    {"FREE entry reserved", IPC_FREE, H + 20, 3, 4, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "entry 0 has a reserved field of 0x3"},
    {"ERROR of 201 bytes", IPC_ERROR, H + 4, 201, 4, 0, 0, CLMEM_ERR_INVALID_VALUE, "says it has 201 bytes"},
    {"ERROR with bytes past its sentence", IPC_ERROR, H + 8 + 100, 'x', 1, 0, 0, CLMEM_ERR_INVALID_VALUE,
     "bytes set past its 7-byte sentence"},
};

static void parse_table(void)
{
    for (size_t i = 0; i < sizeof parse_cases / sizeof parse_cases[0]; i++) {
        const struct parse_case *k = &parse_cases[i];
        uint8_t b[IPC_MAX_MESSAGE_BYTES + 64] = {0};
        struct ipc_msg m;
        size_t len = valid(k->type, b);
        /* Cases that keep a wrong-length message consistent say so with
         * the length field itself; the others keep what was encoded. */
        if (k->bytes)
            put(b, k->off, k->value, k->bytes);
        len = (size_t)((long)len + k->len_delta);
        clmem_error_clear();
        clmem_status st = clmem__ipc_parse(b, len, k->fds, "peer", &m);
        bool ok = st == k->want && (!k->fragment || strstr(clmem_error_message(), k->fragment));
        tap_ok(ok, "parse: %s: %s%s%s", k->name, clmem_status_name(k->want), k->fragment ? ", saying " : "",
               k->fragment ? k->fragment : "");
        if (!ok)
            tap_diag("  got %s: %s", clmem_status_name(st), clmem_error_message());
    }
}

/* The encoder and the parser agree on every field. */
static void round_trip(void)
{
    uint8_t b[IPC_MAX_MESSAGE_BYTES];
    struct ipc_msg m = {.type = IPC_FRAME}, back;
    m.u.frame = (struct ipc_frame){.index = 5, .allocation = 2, .format = VK_FORMAT_R8G8B8A8_UNORM, .width = 33,
                                   .height = 7, .plane_count = 1};
    m.u.frame.planes[0] = (struct ipc_plane){UINT64_C(0x123456789000), 7 * 256, 256, 33, 7};
    size_t len = clmem__ipc_encode(&m, b);
    bool ok = clmem__ipc_parse(b, len, 0, "peer", &back) == CLMEM_OK && back.u.frame.index == 5 &&
              back.u.frame.allocation == 2 && back.u.frame.planes[0].offset == UINT64_C(0x123456789000) &&
              back.u.frame.planes[0].row_pitch == 256 && back.u.frame.texel_bytes[0] == 4;
    tap_ok(ok, "a FRAME's fields survive encoding and parsing, 48-bit offsets included (texel bytes worked out: 4)");

    m = (struct ipc_msg){.type = IPC_ERROR};
    m.u.error.status = CLMEM_ERR_DEVICE_MISMATCH;
    strcpy(m.u.error.text, "line one\nline\x1b[2Jtwo");
    len = clmem__ipc_encode(&m, b);
    ok = clmem__ipc_parse(b, len, 0, "peer", &back) == CLMEM_OK && back.u.error.status == CLMEM_ERR_DEVICE_MISMATCH &&
         !strcmp(back.u.error.text, "line one?line?[2Jtwo");
    tap_ok(ok, "a peer's ERROR sentence keeps printable ASCII only: control bytes become '?' (got \"%s\")",
           back.u.error.text);
}

/* ------------------------------------------------------------ conversations */

static struct ipc_msg msg_of(enum ipc_type type)
{
    uint8_t b[IPC_MAX_MESSAGE_BYTES];
    struct ipc_msg m;
    size_t len = valid(type, b);
    if (clmem__ipc_parse(b, len, type == IPC_ALLOC, "peer", &m) != CLMEM_OK)
        tap_bail("the valid %s does not parse: %s", clmem__ipc_type_name(type), clmem_error_message());
    return m;
}

/* A READY or FREE of n frames, encoded and parsed as a peer's would be. */
static struct ipc_msg batch(enum ipc_type type, uint32_t n, const uint32_t *index, const uint64_t *sequence)
{
    uint8_t b[IPC_MAX_MESSAGE_BYTES];
    struct ipc_msg m = {.type = type};
    m.u.handoff.count = n;
    for (uint32_t i = 0; i < n; i++) {
        m.u.handoff.index[i] = index[i];
        m.u.handoff.sequence[i] = sequence[i];
    }
    size_t len = clmem__ipc_encode(&m, b);
    if (clmem__ipc_parse(b, len, 0, "peer", &m) != CLMEM_OK)
        tap_bail("the %s of %u frames does not parse: %s", clmem__ipc_type_name(type), n, clmem_error_message());
    return m;
}

/* Batches on the wire: the largest round trip, and a frame named twice. */
static void batches(void)
{
    uint8_t b[IPC_MAX_MESSAGE_BYTES + 1];
    struct ipc_msg m = {.type = IPC_FREE}, back;
    m.u.handoff.count = CLMEM_IPC_MAX_FRAMES;
    for (uint32_t i = 0; i < CLMEM_IPC_MAX_FRAMES; i++) {
        m.u.handoff.index[i] = CLMEM_IPC_MAX_FRAMES - 1 - i;
        m.u.handoff.sequence[i] = UINT64_C(0x100000000) + 3 * i;
    }
    size_t len = clmem__ipc_encode(&m, b);
    bool ok = len == IPC_MAX_MESSAGE_BYTES && clmem__ipc_parse(b, len, 0, "peer", &back) == CLMEM_OK &&
              back.u.handoff.count == CLMEM_IPC_MAX_FRAMES;
    for (uint32_t i = 0; ok && i < CLMEM_IPC_MAX_FRAMES; i++)
        ok = back.u.handoff.index[i] == m.u.handoff.index[i] && back.u.handoff.sequence[i] == m.u.handoff.sequence[i];
    tap_ok(ok, "a FREE of %d frames is the largest message (%zu bytes) and survives encoding and parsing",
           CLMEM_IPC_MAX_FRAMES, len);
    m.type = IPC_READY;
    len = clmem__ipc_encode(&m, b);
    ok = clmem__ipc_parse(b, len, 0, "peer", &back) == CLMEM_OK && back.u.handoff.count == CLMEM_IPC_MAX_FRAMES;
    for (uint32_t i = 0; ok && i < CLMEM_IPC_MAX_FRAMES; i++)
        ok = back.u.handoff.index[i] == m.u.handoff.index[i] &&
             back.u.handoff.sequence[i] == m.u.handoff.sequence[0] + i;
    tap_ok(ok, "a READY of %d frames (%zu bytes) survives encoding and parsing, its sequences consecutive",
           CLMEM_IPC_MAX_FRAMES, len);
    for (int type = IPC_READY; type <= IPC_FREE; type++) {
        m = (struct ipc_msg){.type = (enum ipc_type)type};
        m.u.handoff.count = 3;
        m.u.handoff.index[0] = 2, m.u.handoff.index[1] = 0, m.u.handoff.index[2] = 2;
        len = clmem__ipc_encode(&m, b);
        clmem_status st = clmem__ipc_parse(b, len, 0, "peer", &back);
        ok = st == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "of 3 frames that names frame 2 twice");
        tap_ok(ok, "parse: a %s of frames 2, 0, 2 is refused, saying it names frame 2 twice",
               clmem__ipc_type_name((uint32_t)type));
        if (!ok)
            tap_diag("  got %s: %s", clmem_status_name(st), clmem_error_message());
    }
}

/* A consumer's table after the producer's HELLO, ALLOC (with fd) and two
 * buffer FRAMEs. */
static void described_consumer(struct proto *p, int fd)
{
    struct ipc_msg m = msg_of(IPC_HELLO);
    clmem__ipc_proto_init(p, IPC_ROLE_CONSUMER);
    if (clmem__ipc_proto_receive(p, &m, -1) != CLMEM_OK)
        tap_bail("HELLO refused: %s", clmem_error_message());
    m = msg_of(IPC_ALLOC);
    if (clmem__ipc_proto_receive(p, &m, fd) != CLMEM_OK)
        tap_bail("ALLOC refused: %s", clmem_error_message());
    for (uint32_t i = 0; i < 2; i++) {
        m = msg_of(IPC_FRAME);
        m.u.frame.index = i;
        if (clmem__ipc_proto_receive(p, &m, -1) != CLMEM_OK)
            tap_bail("FRAME %u refused: %s", i, clmem_error_message());
    }
}

static bool refuses(struct proto *p, struct ipc_msg m, int fd, const char *fragment, const char *name)
{
    clmem_status st = clmem__ipc_proto_receive(p, &m, fd);
    bool ok = st == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), fragment);
    tap_ok(ok, "conversation: %s is refused, saying \"%s\"", name, fragment);
    if (!ok)
        tap_diag("  got %s: %s", clmem_status_name(st), clmem_error_message());
    return ok;
}

static int devnull(void)
{
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void conversations(void)
{
    struct proto p;
    struct ipc_msg m;
    int before = fd_count();

    /* The consumer's side. */
    clmem__ipc_proto_init(&p, IPC_ROLE_CONSUMER);
    refuses(&p, msg_of(IPC_READY), -1, "sent READY before its HELLO", "a READY before the producer's HELLO");
    m = msg_of(IPC_HELLO);
    m.u.hello.role = IPC_ROLE_CONSUMER;
    refuses(&p, m, -1, "says it is a consumer too", "a HELLO from a second consumer");
    m = msg_of(IPC_HELLO);
    m.u.hello.allocation_count = 3;
    refuses(&p, m, -1, "no more allocations than frames", "a HELLO announcing 3 allocations for 2 frames");
    m = msg_of(IPC_HELLO);
    clmem__ipc_proto_receive(&p, &m, -1);
    refuses(&p, msg_of(IPC_HELLO), -1, "sent HELLO while it described its frames", "a second HELLO");
    m = msg_of(IPC_ALLOC);
    m.u.alloc.index = 1;
    int fd = devnull();
    refuses(&p, m, fd, "ALLOC 1 where ALLOC 0 of 1 was due", "an ALLOC out of order");
    tap_ok(!fd_is_open(fd), "  ... and the fd that came with the refused ALLOC is closed");
    refuses(&p, msg_of(IPC_FRAME), -1, "after 0 of its 1 ALLOCs", "a FRAME before the ALLOCs");
    fd = devnull();
    m = msg_of(IPC_ALLOC);
    tap_ok(clmem__ipc_proto_receive(&p, &m, fd) == CLMEM_OK && p.allocs[0].fd == fd && fd_is_open(fd),
           "conversation: an accepted ALLOC keeps its fd in the table");
    m = msg_of(IPC_FRAME);
    m.u.frame.allocation = 1;
    refuses(&p, m, -1, "in allocation 1; it announced 1", "a FRAME in an allocation not announced");
    m = msg_of(IPC_FRAME);
    m.u.frame.planes[1].offset = (1 << 20) - 512;
    refuses(&p, m, -1, "ends past its allocation 0 of 1048576 bytes", "a FRAME whose plane ends past its allocation");
    m = msg_of(IPC_FRAME);
    m.u.frame.index = 1;
    refuses(&p, m, -1, "FRAME 1 where FRAME 0 of 2 was due", "a FRAME out of order");
    clmem__ipc_proto_close_fds(&p);
    tap_ok(!fd_is_open(fd) && p.allocs[0].fd == -1, "conversation: the table's fds are closed with it");

    described_consumer(&p, devnull());
    tap_ok(p.phase == PHASE_OPEN, "conversation: a complete description opens the stream");
    m = msg_of(IPC_READY);
    m.u.handoff.index[0] = 2;
    refuses(&p, m, -1, "READY for frame 2; it offered 2", "a READY for a frame not offered");
    m = msg_of(IPC_READY);
    m.u.handoff.sequence[0] = 1;
    refuses(&p, m, -1, "READY 1 for frame 1 where READY 0 was due", "a READY out of sequence");
    m = msg_of(IPC_READY);
    tap_ok(clmem__ipc_proto_receive(&p, &m, -1) == CLMEM_OK && p.frames[1].state == FRAME_LENT,
           "conversation: READY 0 for frame 1 hands it to the consumer");
    m.u.handoff.sequence[0] = 1;
    refuses(&p, m, -1, "which the consumer still holds (READY 0)", "a second READY for the frame the consumer holds");
    m = batch(IPC_READY, 2, (uint32_t[]){0, 1}, (uint64_t[]){1, 2});
    refuses(&p, m, -1, "READY for frame 1, which the consumer still holds",
            "a READY batch of frames 0 and 1, the consumer holding 1");
    tap_ok(p.frames[0].state == FRAME_HELD && p.next_sequence == 1,
           "  ... and frame 0, before it in the batch, stays the producer's: a refused batch changes nothing");
    refuses(&p, msg_of(IPC_FREE), -1, "sent FREE while frames flow", "a FREE to the consumer");
    fd = devnull();
    refuses(&p, msg_of(IPC_ALLOC), fd, "sent ALLOC while frames flow", "an ALLOC while frames flow");
    tap_ok(!fd_is_open(fd), "  ... and its fd is closed");
    m = batch(IPC_READY, 1, (uint32_t[]){0}, (uint64_t[]){1});
    tap_ok(clmem__ipc_proto_receive(&p, &m, -1) == CLMEM_OK && p.frames[0].state == FRAME_LENT &&
               p.frames[0].sequence == 1 && p.next_sequence == 2,
           "conversation: READY 1 for frame 0 hands it over too (both lent, READY 2 due)");
    clmem__ipc_proto_close_fds(&p);
    described_consumer(&p, devnull());
    m = batch(IPC_READY, 2, (uint32_t[]){1, 0}, (uint64_t[]){0, 1});
    tap_ok(clmem__ipc_proto_receive(&p, &m, -1) == CLMEM_OK && p.frames[1].state == FRAME_LENT &&
               p.frames[1].sequence == 0 && p.frames[0].state == FRAME_LENT && p.frames[0].sequence == 1 &&
               p.next_sequence == 2,
           "conversation: one READY of frames 1 and 0 hands both over, with sequences 0 and 1");
    m = msg_of(IPC_BYE);
    tap_ok(clmem__ipc_proto_receive(&p, &m, -1) == CLMEM_OK && p.phase == PHASE_OVER, "conversation: BYE ends it");
    refuses(&p, msg_of(IPC_BYE), -1, "sent BYE after the end", "a second BYE");
    clmem__ipc_proto_close_fds(&p);

    /* The producer's side. */
    clmem__ipc_proto_init(&p, IPC_ROLE_PRODUCER);
    p.frame_count = 2;
    refuses(&p, msg_of(IPC_HELLO), -1, "says it is a producer too", "a HELLO from a second producer");
    m = msg_of(IPC_HELLO);
    m.u.hello.role = IPC_ROLE_CONSUMER;
    refuses(&p, m, -1, "announces 1 allocations and 2 frames; a consumer announces none",
            "a consumer's HELLO that announces frames");
    m.u.hello.allocation_count = m.u.hello.frame_count = 0;
    clmem__ipc_proto_receive(&p, &m, -1);
    refuses(&p, msg_of(IPC_FREE), -1, "sent FREE before its ACCEPT", "a FREE before ACCEPT");
    m = msg_of(IPC_ACCEPT);
    tap_ok(clmem__ipc_proto_receive(&p, &m, -1) == CLMEM_OK && p.accepted_path == CLMEM_BRIDGE_PATH_OPAQUE_FD,
           "conversation: ACCEPT opens the stream with the consumer's path");
    refuses(&p, msg_of(IPC_FREE), -1, "FREE for frame 1, which it does not hold", "a FREE for a frame not lent");
    p.frames[1].state = FRAME_LENT;
    p.frames[1].sequence = 4;
    refuses(&p, msg_of(IPC_FREE), -1, "FREE 0 for frame 1, whose READY was 4", "a FREE naming another READY");
    m = msg_of(IPC_FREE);
    m.u.handoff.sequence[0] = 4;
    tap_ok(clmem__ipc_proto_receive(&p, &m, -1) == CLMEM_OK && p.frames[1].state == FRAME_HELD,
           "conversation: the FREE naming the frame's READY gives it back");
    p.frames[0] = (struct proto_frame){.state = FRAME_LENT, .sequence = 5};
    p.frames[1] = (struct proto_frame){.state = FRAME_LENT, .sequence = 6};
    m = batch(IPC_FREE, 2, (uint32_t[]){0, 1}, (uint64_t[]){5, 7});
    refuses(&p, m, -1, "FREE 7 for frame 1, whose READY was 6", "a FREE batch whose second frame names another READY");
    tap_ok(p.frames[0].state == FRAME_LENT && p.frames[1].state == FRAME_LENT,
           "  ... and frame 0, before it in the batch, stays lent: a refused batch changes nothing");
    m = batch(IPC_FREE, 2, (uint32_t[]){1, 0}, (uint64_t[]){6, 5});
    tap_ok(clmem__ipc_proto_receive(&p, &m, -1) == CLMEM_OK && p.frames[0].state == FRAME_HELD &&
               p.frames[1].state == FRAME_HELD,
           "conversation: one FREE of frames 1 and 0, each naming its READY, gives both back");
    refuses(&p, msg_of(IPC_READY), -1, "sent READY while frames flow", "a READY to the producer");

    tap_is_int(fd_count(), before, "no fd is left open by any of these");
}

int main(void)
{
    parse_table();
    round_trip();
    batches();
    conversations();
    return tap_done();
}
