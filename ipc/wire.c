/* SPDX-License-Identifier: MIT */
/* The protocol's messages as bytes (wire.h describes the layout). Parsing
 * is the first line of defence against a peer: it sees raw bytes and the
 * number of fds the kernel delivered with them, and refuses any message
 * whose length, magic, version, type, fd count, reserved fields or field
 * values are not exactly those of a well-formed message of this version.
 * It reads fixed offsets only, each after checking the length, and keeps
 * no state. */
#include "config.h"
#include "error-private.h"
#include "wire.h"

#include <stdio.h>
#include <string.h>

/* Each type's exact length, header included. */
#define HELLO_BYTES (IPC_HEADER_BYTES + 48)
#define ALLOC_BYTES (IPC_HEADER_BYTES + 24)
#define PLANE_BYTES 32
#define FRAME_BYTES (IPC_HEADER_BYTES + 24 + IPC_MAX_PLANES * PLANE_BYTES)
#define ACCEPT_BYTES (IPC_HEADER_BYTES + 8)
#define READY_BYTES(n) (IPC_HEADER_BYTES + 16 + 4 * (size_t)(n))
#define FREE_ENTRY_BYTES 16
#define FREE_BYTES(n) (IPC_HEADER_BYTES + 8 + FREE_ENTRY_BYTES * (size_t)(n))
#define BYE_BYTES IPC_HEADER_BYTES
#define ERROR_BYTES (IPC_HEADER_BYTES + 8 + IPC_ERROR_TEXT_MAX)
_Static_assert(FREE_BYTES(CLMEM_IPC_MAX_FRAMES) <= IPC_MAX_MESSAGE_BYTES &&
                   READY_BYTES(CLMEM_IPC_MAX_FRAMES) <= IPC_MAX_MESSAGE_BYTES && ERROR_BYTES <= IPC_MAX_MESSAGE_BYTES,
               "IPC_MAX_MESSAGE_BYTES (wire.h) holds the largest message: the buffers are sized by it");

const char *clmem__ipc_type_name(uint32_t type)
{
    switch (type) {
    case IPC_HELLO: return "HELLO";
    case IPC_ALLOC: return "ALLOC";
    case IPC_FRAME: return "FRAME";
    case IPC_ACCEPT: return "ACCEPT";
    case IPC_READY: return "READY";
    case IPC_FREE: return "FREE";
    case IPC_BYE: return "BYE";
    case IPC_ERROR: return "ERROR";
    }
    return "an unknown message";
}

/* A type's exact length, header included; for READY and FREE, with
 * `count` frames. 0 for a type this version does not define. */
static size_t expected_length(uint32_t type, uint32_t count)
{
    switch (type) {
    case IPC_HELLO: return HELLO_BYTES;
    case IPC_ALLOC: return ALLOC_BYTES;
    case IPC_FRAME: return FRAME_BYTES;
    case IPC_ACCEPT: return ACCEPT_BYTES;
    case IPC_READY: return READY_BYTES(count);
    case IPC_FREE: return FREE_BYTES(count);
    case IPC_BYE: return BYE_BYTES;
    case IPC_ERROR: return ERROR_BYTES;
    }
    return 0;
}

void clmem__ipc_format_uuid(const uint8_t uuid[IPC_UUID_BYTES], char out[37])
{
    static const char hex[] = "0123456789abcdef";
    int o = 0;
    for (int i = 0; i < IPC_UUID_BYTES; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[uuid[i] >> 4];
        out[o++] = hex[uuid[i] & 15];
    }
    out[o] = '\0';
}

/* ------------------------------------------------------------ encoding */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* FRAME's body, as parse_frame reads it: six fields, then a record for
 * each of the plane_count planes (the caller zeroed the rest). */
static void encode_frame(const struct ipc_frame *f, uint8_t *b)
{
    put32(b, f->index);
    put32(b + 4, f->allocation);
    put32(b + 8, f->format);
    put32(b + 12, f->width);
    put32(b + 16, f->height);
    put32(b + 20, f->plane_count);
    for (uint32_t i = 0; i < f->plane_count && i < IPC_MAX_PLANES; i++) {
        uint8_t *pl = b + 24 + i * PLANE_BYTES;
        put64(pl, f->planes[i].offset);
        put64(pl + 8, f->planes[i].size);
        put32(pl + 16, f->planes[i].row_pitch);
        put32(pl + 20, f->planes[i].width);
        put32(pl + 24, f->planes[i].height);
        /* pl + 28: reserved */
    }
}

size_t clmem__ipc_encode(const struct ipc_msg *m, uint8_t *buf)
{
    size_t len = expected_length(m->type, m->u.handoff.count);
    uint8_t *b = buf + IPC_HEADER_BYTES;

    memset(buf, 0, len);
    put32(buf, IPC_MAGIC);
    buf[4] = (uint8_t)CLMEM_IPC_PROTOCOL_VERSION;
    buf[5] = (uint8_t)(CLMEM_IPC_PROTOCOL_VERSION >> 8);
    buf[6] = (uint8_t)m->type;
    buf[7] = (uint8_t)(m->type >> 8);
    put32(buf + 8, (uint32_t)len);
    put32(buf + 12, m->type == IPC_ALLOC ? 1u : 0u);
    switch (m->type) {
    case IPC_HELLO:
        put32(b, m->u.hello.role);
        /* b + 4: flags, 0 */
        memcpy(b + 8, m->u.hello.device_uuid, IPC_UUID_BYTES);
        memcpy(b + 24, m->u.hello.driver_uuid, IPC_UUID_BYTES);
        put32(b + 40, m->u.hello.allocation_count);
        put32(b + 44, m->u.hello.frame_count);
        break;
    case IPC_ALLOC:
        put32(b, m->u.alloc.index);
        put32(b + 4, m->u.alloc.handle_type);
        put64(b + 8, m->u.alloc.allocation_size);
        put32(b + 16, m->u.alloc.memory_type_index);
        put32(b + 20, m->u.alloc.flags);
        break;
    case IPC_FRAME: encode_frame(&m->u.frame, b); break;
    case IPC_ACCEPT:
        put32(b, m->u.accept.path);
        break;
    case IPC_READY:
        put32(b, m->u.handoff.count);
        put64(b + 8, m->u.handoff.sequence[0]);
        for (uint32_t i = 0; i < m->u.handoff.count; i++)
            put32(b + 16 + 4 * i, m->u.handoff.index[i]);
        break;
    case IPC_FREE:
        put32(b, m->u.handoff.count);
        for (uint32_t i = 0; i < m->u.handoff.count; i++) {
            put64(b + 8 + FREE_ENTRY_BYTES * i, m->u.handoff.sequence[i]);
            put32(b + 16 + FREE_ENTRY_BYTES * i, m->u.handoff.index[i]);
        }
        break;
    case IPC_BYE:
        break;
    case IPC_ERROR: {
        size_t n = strnlen(m->u.error.text, IPC_ERROR_TEXT_MAX);
        put32(b, (uint32_t)m->u.error.status);
        put32(b + 4, (uint32_t)n);
        memcpy(b + 8, m->u.error.text, n);
        break;
    }
    }
    return len;
}

/* ------------------------------------------------------------- parsing */

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static clmem_status parse_hello(const uint8_t *b, const char *who, struct ipc_hello *h)
{
    h->role = get32(b);
    if (h->role != IPC_ROLE_PRODUCER && h->role != IPC_ROLE_CONSUMER)
        return clmem__invalid("The %s sent a HELLO with role %u; a HELLO's role is 1 (producer) or 2 (consumer).", who,
                              h->role);
    if (get32(b + 4))
        return clmem__invalid("The %s sent a HELLO with flags 0x%x; version %d defines none.", who, get32(b + 4),
                              CLMEM_IPC_PROTOCOL_VERSION);
    memcpy(h->device_uuid, b + 8, IPC_UUID_BYTES);
    memcpy(h->driver_uuid, b + 24, IPC_UUID_BYTES);
    h->allocation_count = get32(b + 40);
    h->frame_count = get32(b + 44);
    return CLMEM_OK;
}

/* Each field is checked as it is read, in the body's order. */
static clmem_status parse_alloc(const uint8_t *b, const char *who, struct ipc_alloc *a)
{
    a->index = get32(b);
    a->handle_type = get32(b + 4);
    if (a->handle_type != IPC_HANDLE_OPAQUE_FD)
        return clmem__invalid("The %s sent ALLOC %u with handle type %u; version %d carries opaque fds (1) only.", who,
                              a->index, a->handle_type, CLMEM_IPC_PROTOCOL_VERSION);
    a->allocation_size = get64(b + 8);
    if (a->allocation_size == 0 || a->allocation_size > IPC_MAX_ALLOCATION_SIZE)
        return clmem__invalid("The %s sent ALLOC %u with an allocation size of %llu bytes; it must be 1 to 2^48.", who,
                              a->index, (unsigned long long)a->allocation_size);
    a->memory_type_index = get32(b + 16);
    if (a->memory_type_index >= VK_MAX_MEMORY_TYPES)
        return clmem__invalid("The %s sent ALLOC %u with memory type %u; Vulkan has at most %d.", who, a->index,
                              a->memory_type_index, VK_MAX_MEMORY_TYPES);
    a->flags = get32(b + 20);
    if (a->flags & ~IPC_ALLOC_DEDICATED)
        return clmem__invalid("The %s sent ALLOC %u with flags 0x%x; version %d defines 0x1 (dedicated) only.", who,
                              a->index, a->flags, CLMEM_IPC_PROTOCOL_VERSION);
    return CLMEM_OK;
}

/* One plane's rows must fit in its bytes: (height - 1) rows of row_pitch
 * and one of width texels. */
static clmem_status check_plane_rows(const struct ipc_frame *f, uint32_t i, const char *who)
{
    const struct ipc_plane *p = &f->planes[i];
    uint64_t row = (uint64_t)p->width * f->texel_bytes[i];
    if (p->row_pitch < row || p->row_pitch % f->texel_bytes[i])
        return clmem__invalid(
            "The %s sent FRAME %u whose plane %u has a row pitch of %u bytes; its %u texels of %u bytes "
            "need a multiple of %u that is at least %llu.",
            who, f->index, i, p->row_pitch, p->width, f->texel_bytes[i], f->texel_bytes[i], (unsigned long long)row);
    if ((uint64_t)(p->height - 1) * p->row_pitch + row > p->size)
        return clmem__invalid(
            "The %s sent FRAME %u whose plane %u (%ux%u texels, row pitch %u) needs %llu bytes but is %llu.", who,
            f->index, i, p->width, p->height, p->row_pitch,
            (unsigned long long)((uint64_t)(p->height - 1) * p->row_pitch + row), (unsigned long long)p->size);
    return CLMEM_OK;
}

static clmem_status parse_frame(const uint8_t *b, const char *who, struct ipc_frame *f)
{
    f->index = get32(b);
    f->allocation = get32(b + 4);
    f->format = get32(b + 8);
    f->width = get32(b + 12);
    f->height = get32(b + 16);
    f->plane_count = get32(b + 20);
    if (f->plane_count < 1 || f->plane_count > IPC_MAX_PLANES)
        return clmem__invalid("The %s sent FRAME %u with %u planes; a frame has 1 to %d.", who, f->index,
                              f->plane_count, IPC_MAX_PLANES);
    for (uint32_t i = 0; i < IPC_MAX_PLANES; i++) {
        const uint8_t *pl = b + 24 + i * PLANE_BYTES;
        if (i >= f->plane_count) {
            if (!all_zero(pl, PLANE_BYTES))
                return clmem__invalid(
                    "The %s sent FRAME %u with %u plane%s and bytes set in plane %u's place; they must be "
                    "zero.",
                    who, f->index, f->plane_count, f->plane_count == 1 ? "" : "s", i);
            memset(&f->planes[i], 0, sizeof f->planes[i]);
            f->texel_bytes[i] = 0;
            continue;
        }
        f->planes[i].offset = get64(pl);
        f->planes[i].size = get64(pl + 8);
        f->planes[i].row_pitch = get32(pl + 16);
        f->planes[i].width = get32(pl + 20);
        f->planes[i].height = get32(pl + 24);
        if (get32(pl + 28))
            return clmem__invalid("The %s sent FRAME %u whose plane %u has a reserved field of 0x%x; it must be zero.",
                                  who, f->index, i, get32(pl + 28));
        if (f->planes[i].size == 0 || f->planes[i].size > IPC_MAX_ALLOCATION_SIZE ||
            f->planes[i].offset > IPC_MAX_ALLOCATION_SIZE - f->planes[i].size)
            return clmem__invalid(
                "The %s sent FRAME %u whose plane %u is %llu bytes at offset %llu; a plane is 1 to 2^48 "
                "bytes and ends within 2^48.",
                who, f->index, i, (unsigned long long)f->planes[i].size, (unsigned long long)f->planes[i].offset);
    }

    if (f->format == VK_FORMAT_UNDEFINED) { /* a buffer: one plane, an optional row pitch */
        if (f->plane_count != 1 || f->width || f->height || f->planes[0].width || f->planes[0].height)
            return clmem__invalid(
                "The %s sent FRAME %u, a buffer (format 0), with %u planes and extent %ux%u; a buffer has "
                "one plane and no extent.",
                who, f->index, f->plane_count, f->width, f->height);
        if (f->planes[0].row_pitch > f->planes[0].size)
            return clmem__invalid("The %s sent FRAME %u, a buffer of %llu bytes, with a row pitch of %u.", who,
                                  f->index, (unsigned long long)f->planes[0].size, f->planes[0].row_pitch);
        return CLMEM_OK;
    }

    /* An image: a format the bridge shares, planes of the format's shape. */
    uint32_t planes = 1;
    if (clmem_bridge_image_plane_format((VkFormat)f->format, 0, NULL, NULL) != CLMEM_OK)
        return clmem__invalid("The %s sent FRAME %u with VkFormat %u, which clmem-bridge does not share.", who,
                              f->index, f->format);
    if (clmem_bridge_image_plane_format((VkFormat)f->format, 1, NULL, NULL) == CLMEM_OK)
        planes = 2;
    if (f->plane_count != planes)
        return clmem__invalid("The %s sent FRAME %u of %s with %u plane%s; the format has %u.", who, f->index,
                              clmem_bridge_image_format_name((VkFormat)f->format), f->plane_count,
                              f->plane_count == 1 ? "" : "s", planes);
    if (f->width == 0 || f->height == 0 || (planes == 2 && (f->width % 2 || f->height % 2)))
        return clmem__invalid("The %s sent FRAME %u of %s with extent %ux%u; it must not be empty%s.", who, f->index,
                              clmem_bridge_image_format_name((VkFormat)f->format), f->width, f->height,
                              planes == 2 ? " and must be even (4:2:0)" : "");
    for (uint32_t i = 0; i < planes; i++) {
        /* Two-plane formats are 4:2:0: the second plane is half wide and high. */
        uint32_t w = i ? f->width / 2 : f->width, h = i ? f->height / 2 : f->height;
        clmem_bridge_image_plane_format((VkFormat)f->format, i, NULL, &f->texel_bytes[i]);
        if (f->planes[i].width != w || f->planes[i].height != h)
            return clmem__invalid("The %s sent FRAME %u of %s %ux%u whose plane %u is %ux%u; it must be %ux%u.", who,
                                  f->index, clmem_bridge_image_format_name((VkFormat)f->format), f->width, f->height, i,
                                  f->planes[i].width, f->planes[i].height, w, h);
        clmem_status st = check_plane_rows(f, i, who);
        if (st != CLMEM_OK)
            return st;
    }
    return CLMEM_OK;
}

/* READY and FREE: a batch whose length the caller checked against its
 * count. Every index names one of the frames a producer can offer, no
 * frame comes twice, the reserved fields are zero. */
_Static_assert(CLMEM_IPC_MAX_FRAMES <= 64, "a batch's frames are told apart by a 64-bit mask");

static clmem_status parse_handoff(const uint8_t *b, uint32_t type, const char *who, struct ipc_handoff *h)
{
    const char *name = clmem__ipc_type_name(type);
    uint64_t seen = 0; /* a bit per frame index */

    h->count = get32(b);
    if (get32(b + 4))
        return clmem__invalid("The %s sent a %s with a reserved field of 0x%x; it must be zero.", who, name,
                              get32(b + 4));
    if (type == IPC_READY) {
        uint64_t first = get64(b + 8);
        if (first > UINT64_MAX - h->count)
            return clmem__invalid("The %s sent a READY of %u frames from sequence %llu, past the last sequence.", who,
                                  h->count, (unsigned long long)first);
        for (uint32_t i = 0; i < h->count; i++) {
            h->index[i] = get32(b + 16 + 4 * i);
            h->sequence[i] = first + i;
        }
    } else {
        for (uint32_t i = 0; i < h->count; i++) {
            const uint8_t *e = b + 8 + FREE_ENTRY_BYTES * i;
            h->sequence[i] = get64(e);
            h->index[i] = get32(e + 8);
            if (get32(e + 12))
                return clmem__invalid("The %s sent a FREE whose entry %u has a reserved field of 0x%x; it must be "
                                      "zero.",
                                      who, i, get32(e + 12));
        }
    }
    for (uint32_t i = 0; i < h->count; i++) {
        if (h->index[i] >= CLMEM_IPC_MAX_FRAMES)
            return clmem__invalid("The %s sent a %s whose entry %u names frame %u; a producer offers at most %d.", who,
                                  name, i, h->index[i], CLMEM_IPC_MAX_FRAMES);
        if (seen & UINT64_C(1) << h->index[i])
            return clmem__invalid("The %s sent a %s of %u frames that names frame %u twice; a batch names each frame "
                                  "once.",
                                  who, name, h->count, h->index[i]);
        seen |= UINT64_C(1) << h->index[i];
    }
    return CLMEM_OK;
}

/* Keep what can be shown of a peer's sentence: printable ASCII, the rest
 * as '?', so that it cannot forge lines or escape sequences in a log. */
static void copy_text(char *out, const uint8_t *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = in[i] >= 0x20 && in[i] < 0x7f ? (char)in[i] : '?';
    out[n] = '\0';
}

clmem_status clmem__ipc_parse(const uint8_t *buf, size_t len, unsigned fds_received, const char *who,
                              struct ipc_msg *out)
{
    memset(out, 0, sizeof *out);
    if (len < IPC_HEADER_BYTES)
        return clmem__invalid("The %s sent a message of %zu bytes; every message starts with a %d-byte header.", who,
                              len, IPC_HEADER_BYTES);
    if (get32(buf) != IPC_MAGIC)
        return clmem__invalid(
            "The %s sent a message whose magic is 0x%08x, not 0x%08x (\"CLMI\"): not a clmem-ipc peer.", who,
            get32(buf), IPC_MAGIC);
    uint16_t version = get16(buf + 4);
    if (version == 1)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "The %s speaks clmem-ipc protocol version 1, which hands frames over one at a time "
                           "(libclmem-ipc 0.3); this library speaks version %d, which hands them over in batches: "
                           "both ends need libclmem-ipc 0.4 or later.",
                           who, CLMEM_IPC_PROTOCOL_VERSION);
    if (version != CLMEM_IPC_PROTOCOL_VERSION)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "The %s speaks clmem-ipc protocol version %u; this library speaks version %d.", who, version,
                           CLMEM_IPC_PROTOCOL_VERSION);
    uint32_t type = get16(buf + 6);
    size_t want = expected_length(type, 1);
    if (!want)
        return clmem__invalid("The %s sent a message of type %u, which version %d does not define.", who, type,
                              CLMEM_IPC_PROTOCOL_VERSION);
    uint32_t length = get32(buf + 8);
    if (type == IPC_READY || type == IPC_FREE) {
        /* A batch: its length follows from its count, the body's first field. */
        uint32_t count = len >= IPC_HEADER_BYTES + 4 ? get32(buf + IPC_HEADER_BYTES) : 0;
        if (count < 1 || count > CLMEM_IPC_MAX_FRAMES)
            return clmem__invalid("The %s sent a %s of %zu bytes for a batch of %u frames; a batch has 1 to %d.", who,
                                  clmem__ipc_type_name(type), len, count, CLMEM_IPC_MAX_FRAMES);
        want = expected_length(type, count);
        if (length != len || len != want)
            return clmem__invalid("The %s sent a %s of %u frame%s in %zu bytes that says it has %u; it has %zu.", who,
                                  clmem__ipc_type_name(type), count, count == 1 ? "" : "s", len, length, want);
    } else if (length != len || len != want) {
        return clmem__invalid("The %s sent a %s of %zu bytes that says it has %u; a %s has %zu.", who,
                              clmem__ipc_type_name(type), len, length, clmem__ipc_type_name(type), want);
    }
    uint32_t fd_count = get32(buf + 12);
    uint32_t fds_allowed = type == IPC_ALLOC ? 1u : 0u;
    if (fd_count != fds_allowed || fds_received != fds_allowed)
        return clmem__invalid("The %s sent a %s that announces %u fd%s and came with %u; a %s carries %u.", who,
                              clmem__ipc_type_name(type), fd_count, fd_count == 1 ? "" : "s", fds_received,
                              clmem__ipc_type_name(type), fds_allowed);

    const uint8_t *b = buf + IPC_HEADER_BYTES;
    out->type = (enum ipc_type)type;
    out->fd_count = fd_count;
    switch (out->type) {
    case IPC_HELLO:
        return parse_hello(b, who, &out->u.hello);
    case IPC_ALLOC:
        return parse_alloc(b, who, &out->u.alloc);
    case IPC_FRAME:
        return parse_frame(b, who, &out->u.frame);
    case IPC_ACCEPT:
        out->u.accept.path = get32(b);
        if (out->u.accept.path != CLMEM_BRIDGE_PATH_OPAQUE_FD && out->u.accept.path != CLMEM_BRIDGE_PATH_HOST_MAPPED)
            return clmem__invalid("The %s sent an ACCEPT naming path %u; it is %d (opaque-fd) or %d (host-mapped).",
                                  who, out->u.accept.path, CLMEM_BRIDGE_PATH_OPAQUE_FD, CLMEM_BRIDGE_PATH_HOST_MAPPED);
        if (get32(b + 4))
            return clmem__invalid("The %s sent an ACCEPT with a reserved field of 0x%x; it must be zero.", who,
                                  get32(b + 4));
        return CLMEM_OK;
    case IPC_READY:
    case IPC_FREE: return parse_handoff(b, type, who, &out->u.handoff);
    case IPC_BYE:
        return CLMEM_OK;
    case IPC_ERROR: {
        uint32_t n = get32(b + 4);
        out->u.error.status = (int32_t)get32(b);
        if (n > IPC_ERROR_TEXT_MAX)
            return clmem__invalid("The %s sent an ERROR whose sentence says it has %u bytes; at most %d fit.", who, n,
                                  IPC_ERROR_TEXT_MAX);
        if (!all_zero(b + 8 + n, IPC_ERROR_TEXT_MAX - n))
            return clmem__invalid("The %s sent an ERROR with bytes set past its %u-byte sentence; they must be zero.",
                                  who, n);
        copy_text(out->u.error.text, b + 8, n);
        return CLMEM_OK;
    }
    }
    return clmem__invalid("The %s sent a message of type %u.", who,
                          type); /* not reached: expected_length knows the types */
}
