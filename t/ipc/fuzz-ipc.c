/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for what a peer sends: bytes become a conversation of
 * messages, each with 0 to 5 fds, parsed (ipc/wire.c) and, when they parse,
 * judged by one side's rules of conversation (ipc/proto.c), exactly as the
 * library's receive path does (ipc/sock.c closes the fds of a message the
 * parser refuses). Any broken promise is an abort(), which libFuzzer
 * reports with the input.
 *
 * The input: byte 0 picks the side (bit 0: consumer or producer) and
 * whether a valid opening (bit 1: the peer's HELLO, then for a consumer the
 * producer's ALLOC and two FRAMEs, for a producer the consumer's ACCEPT and
 * both frames lent) comes first, so that the fuzzer reaches the open stream
 * without having to invent a HELLO. Then records:
 *   kind 0: u8 fds, u8 len, len raw bytes;
 *   kind 1: u8 fds, u8 type, u8 offset, 8 bytes: a valid message of that
 *           type with 8 bytes xored in at offset (a field changed); READY
 *           and FREE are batches of both frames.
 *
 * The promises:
 *  - the parser's and the rules' answers are CLMEM_OK or an error with a
 *    sentence, and the error record says the same status;
 *  - every fd a record brought is closed afterwards, unless the table keeps
 *    it (an accepted ALLOC's, at most one per allocation), and the table's
 *    are closed by clmem__ipc_proto_close_fds();
 *  - the table never claims more than it was announced: counts within
 *    CLMEM_IPC_MAX_*, every frame it accepted inside its allocation.
 *
 * scripts/check-fuzz.sh builds this with clang -fsanitize=fuzzer,address,
 * undefined. With -DCLMEM_FUZZ_REPLAY (make check's t/ipc/fuzz-ipc) a main()
 * replays a fixed stream of pseudo-random inputs and prints TAP instead. */
#define _GNU_SOURCE
#include "proto.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void broken(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz-ipc: broken promise: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  last error: %s\n", clmem_error_message());
    abort();
}

/* A valid message of `type`, as the library's encoder writes it. */
static size_t template(uint32_t type, uint8_t *b)
{
    struct ipc_msg m = {.type = (enum ipc_type)type};
    switch (type) {
    case IPC_HELLO:
        m.u.hello = (struct ipc_hello){.role = IPC_ROLE_PRODUCER, .allocation_count = 1, .frame_count = 2};
        break;
    case IPC_ALLOC:
        m.u.alloc = (struct ipc_alloc){.handle_type = IPC_HANDLE_OPAQUE_FD, .allocation_size = 1 << 20};
        break;
    case IPC_FRAME:
        m.u.frame = (struct ipc_frame){.format = VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, .width = 64, .height = 32,
                                       .plane_count = 2};
        m.u.frame.planes[0] = (struct ipc_plane){0, 2048, 64, 64, 32};
        m.u.frame.planes[1] = (struct ipc_plane){4096, 1024, 64, 32, 16};
        break;
    case IPC_ACCEPT:
        m.u.accept.path = CLMEM_BRIDGE_PATH_HOST_MAPPED;
        break;
    case IPC_ERROR:
        strcpy(m.u.error.text, "refused");
        break;
    case IPC_READY: /* a batch of both frames of the valid opening, READY 0 and 1 */
    case IPC_FREE:
        m.u.handoff = (struct ipc_handoff){.count = 2, .index = {0, 1}, .sequence = {0, 1}};
        break;
    case IPC_BYE:
        break;
    default:
        m.type = IPC_BYE;
    }
    return clmem__ipc_encode(&m, b);
}

static int new_fd(void)
{
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        broken("open(/dev/null) failed");
    return fd;
}

static bool table_keeps(const struct proto *p, int fd)
{
    for (int i = 0; i < CLMEM_IPC_MAX_ALLOCATIONS; i++)
        if (p->allocs[i].fd == fd)
            return true;
    return false;
}

/* How far the messages delivered so far got: refused by the parser,
 * refused by the rules, accepted by both. The replay checks that its
 * stream reaches all three, so that it exercises the rules and not the
 * parser alone. */
static long refused_by_parser, refused_by_rules, accepted;

/* One message as the receive path handles it: parsed with the fds that
 * came; refused, every fd closed; accepted by the parser, at most its one
 * fd goes to the rules, which keep or close it. */
static void deliver(struct proto *p, const uint8_t *msg, size_t len, int nfds)
{
    int fds[5];
    struct ipc_msg m;
    for (int i = 0; i < nfds; i++)
        fds[i] = new_fd();
    clmem_error_clear();
    clmem_status st = clmem__ipc_parse(msg, len, (unsigned)nfds, "peer", &m);
    if (st != CLMEM_OK) {
        if (clmem_error_status() != st || st == CLMEM_OK || !clmem_error_message()[0])
            broken("the parser returned %s, its record says %s", clmem_status_name(st),
                   clmem_status_name(clmem_error_status()));
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        refused_by_parser++;
    } else {
        if (nfds != (m.type == IPC_ALLOC ? 1 : 0))
            broken("the parser let a %s through with %d fds", clmem__ipc_type_name(m.type), nfds);
        clmem_error_clear();
        st = clmem__ipc_proto_receive(p, &m, nfds ? fds[0] : -1);
        if (st != CLMEM_OK && (clmem_error_status() != st || !clmem_error_message()[0]))
            broken("the rules returned %s, the record says %s", clmem_status_name(st),
                   clmem_status_name(clmem_error_status()));
        if (st == CLMEM_OK)
            accepted++;
        else
            refused_by_rules++;
    }
    for (int i = 0; i < nfds; i++) {
        bool open_now = fcntl(fds[i], F_GETFD) != -1;
        if (open_now != table_keeps(p, fds[i]))
            broken("fd %d of a %s is %s and %s by the table", fds[i], st == CLMEM_OK ? "message accepted" : "refused message",
                   open_now ? "open" : "closed", table_keeps(p, fds[i]) ? "kept" : "not kept");
    }
}

/* What the table may claim. */
static void check_table(const struct proto *p)
{
    if (p->allocation_count > CLMEM_IPC_MAX_ALLOCATIONS || p->frame_count > CLMEM_IPC_MAX_FRAMES ||
        p->allocs_received > p->allocation_count || p->frames_received > p->frame_count)
        broken("the table claims %u of %u allocations and %u of %u frames", p->allocs_received, p->allocation_count,
               p->frames_received, p->frame_count);
    for (uint32_t i = 0; i < p->frames_received; i++) {
        const struct ipc_frame *f = &p->frames[i].desc;
        if (f->allocation >= p->allocs_received)
            broken("frame %u is in allocation %u of %u received", i, f->allocation, p->allocs_received);
        for (uint32_t k = 0; k < f->plane_count; k++)
            if (f->planes[k].offset + f->planes[k].size > p->allocs[f->allocation].desc.allocation_size)
                broken("frame %u plane %u ends past its allocation", i, k);
    }
    for (int i = 0; i < CLMEM_IPC_MAX_ALLOCATIONS; i++)
        if (p->allocs[i].fd >= 0 && fcntl(p->allocs[i].fd, F_GETFD) == -1)
            broken("the table keeps fd %d, which is closed", p->allocs[i].fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct proto p;
    uint8_t msg[IPC_MAX_MESSAGE_BYTES + 64];
    size_t at = 1;

    if (size < 1)
        return 0;
    bool consumer = data[0] & 1;
    clmem__ipc_proto_init(&p, consumer ? IPC_ROLE_CONSUMER : IPC_ROLE_PRODUCER);
    if (data[0] & 2) { /* a valid opening */
        size_t n = template(IPC_HELLO, msg);
        if (!consumer) {
            msg[IPC_HEADER_BYTES] = IPC_ROLE_CONSUMER;
            memset(msg + IPC_HEADER_BYTES + 40, 0, 8);
            p.frame_count = 2;
        }
        deliver(&p, msg, n, 0);
        if (!consumer) { /* the consumer accepted; the producer lent both frames */
            deliver(&p, msg, template(IPC_ACCEPT, msg), 0);
            for (uint32_t i = 0; i < 2; i++)
                p.frames[i] = (struct proto_frame){.state = FRAME_LENT, .sequence = i};
        } else {
            deliver(&p, msg, template(IPC_ALLOC, msg), 1);
            for (uint8_t i = 0; i < 2; i++) {
                n = template(IPC_FRAME, msg);
                msg[IPC_HEADER_BYTES] = i;
                deliver(&p, msg, n, 0);
            }
        }
    }
    while (at + 2 <= size) {
        uint8_t kind = data[at] & 1, nfds = (uint8_t)(data[at + 1] % 6);
        at += 2;
        if (kind == 0) {
            if (at >= size)
                break;
            size_t len = data[at++];
            if (len > size - at)
                len = size - at;
            memcpy(msg, data + at, len);
            at += len;
            deliver(&p, msg, len, nfds);
        } else {
            if (at + 10 > size)
                break;
            size_t n = template(data[at] % 9, msg);
            size_t off = data[at + 1] % n;
            for (size_t i = 0; i < 8 && off + i < n; i++)
                msg[off + i] ^= data[at + 2 + i];
            at += 10;
            deliver(&p, msg, n, nfds);
        }
        check_table(&p);
    }
    clmem__ipc_proto_close_fds(&p);
    for (int i = 0; i < CLMEM_IPC_MAX_ALLOCATIONS; i++)
        if (p.allocs[i].fd != -1)
            broken("clmem__ipc_proto_close_fds left fd %d in the table", p.allocs[i].fd);
    return 0;
}

#ifdef CLMEM_FUZZ_REPLAY
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

/* make check: a fixed stream of pseudo-random inputs (half of them mutated
 * valid conversations), no fuzzer needed. */
int main(void)
{
    uint64_t x = 0x9e3779b97f4a7c15u;
    uint8_t in[512];
    const int inputs = 20000;
    int before = fd_count();
    for (int i = 0; i < inputs; i++) {
        size_t n = 1 + (size_t)(x % sizeof in);
        for (size_t k = 0; k < n; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            in[k] = (uint8_t)x;
        }
        if (i % 2) { /* a valid opening, then records of changed fields */
            in[0] |= 2;
            for (size_t k = 1; k + 12 <= n; k += 12)
                in[k] = 1;
        }
        LLVMFuzzerTestOneInput(in, n);
    }
    /* A broken promise aborts inside the replay; what is left to check is
     * that the stream reached every answer. */
    tap_ok(refused_by_parser > 0 && refused_by_rules > 0 && accepted > 0,
           "%d inputs replayed through the parser and both sides' rules, every promise kept: %ld messages "
           "refused by the parser, %ld by the rules, %ld accepted",
           inputs, refused_by_parser, refused_by_rules, accepted);
    tap_is_int(fd_count(), before, "no fd left open by them");
    return tap_done();
}
#endif
