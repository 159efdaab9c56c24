/* SPDX-License-Identifier: MIT */
/* Internal: the messages of the clmem-ipc protocol, as bytes on the wire
 * and as a checked struct. Nothing here does I/O or keeps state: encoding
 * writes bytes, parsing reads bytes someone else sent and refuses anything
 * that does not have exactly the shape of a message (proto.c checks what a
 * message means at that point of the conversation).
 *
 * Every message is one SOCK_SEQPACKET packet, little-endian, starting with
 * a 16-byte header; its size is fixed per type, and for READY and FREE per
 * type and frame count (they carry a batch of 1 to CLMEM_IPC_MAX_FRAMES
 * frames). The header:
 *   u32 magic "CLMI"   u16 version   u16 type   u32 length (the packet's)
 *   u32 fd_count (fds sent with it by SCM_RIGHTS: 1 for ALLOC, else 0)
 * Fields named "reserved" must be zero: a peer that sets them speaks
 * something this version does not know. */
#ifndef CLMEM_IPC_WIRE_H
#define CLMEM_IPC_WIRE_H
#include "clmem-ipc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPC_MAGIC 0x494d4c43u /* "CLMI" in little-endian byte order */
#define IPC_HEADER_BYTES 16
#define IPC_UUID_BYTES 16
#define IPC_ERROR_TEXT_MAX 200          /* bytes of an ERROR's sentence */
#define IPC_MAX_ALLOCATION_SIZE (UINT64_C(1) << 48) /* 256 TiB: no device has more */
#define IPC_MAX_MESSAGE_BYTES 1048                  /* the largest message: a FREE of CLMEM_IPC_MAX_FRAMES frames */
#define IPC_MAX_PLANES CLMEM_BRIDGE_IMAGE_MAX_PLANES

enum ipc_type {
    IPC_HELLO = 1,  /* both ways, first */
    IPC_ALLOC = 2,  /* producer: one allocation, with its fd */
    IPC_FRAME = 3,  /* producer: one frame's description */
    IPC_ACCEPT = 4, /* consumer: every frame is imported */
    IPC_READY = 5,  /* producer: the batch's frames are written, they are the consumer's */
    IPC_FREE = 6,   /* consumer: the frames' release completed, they are the producer's */
    IPC_BYE = 7,    /* either: the end */
    IPC_ERROR = 8   /* either: why this side drops the connection */
};

enum ipc_role { IPC_ROLE_PRODUCER = 1, IPC_ROLE_CONSUMER = 2 };

/* ALLOC's handle type: the only one this version carries. */
#define IPC_HANDLE_OPAQUE_FD 1u
/* ALLOC's flags. */
#define IPC_ALLOC_DEDICATED 1u

struct ipc_hello {
    uint32_t role; /* enum ipc_role */
    uint8_t device_uuid[IPC_UUID_BYTES];
    uint8_t driver_uuid[IPC_UUID_BYTES];
    uint32_t allocation_count; /* producer: ALLOCs that follow; consumer: 0 */
    uint32_t frame_count;      /* producer: FRAMEs that follow; consumer: 0 */
};

struct ipc_alloc {
    uint32_t index;
    uint32_t handle_type; /* IPC_HANDLE_OPAQUE_FD */
    uint64_t allocation_size;
    uint32_t memory_type_index;
    uint32_t flags; /* IPC_ALLOC_DEDICATED */
};

struct ipc_plane {
    uint64_t offset; /* in the allocation */
    uint64_t size;
    uint32_t row_pitch;
    uint32_t width, height; /* texels; 0 for a buffer frame */
};

struct ipc_frame {
    uint32_t index;
    uint32_t allocation;
    uint32_t format; /* a VkFormat of clmem_bridge_image_formats(), or 0 (VK_FORMAT_UNDEFINED): a buffer */
    uint32_t width, height;
    uint32_t plane_count;
    struct ipc_plane planes[IPC_MAX_PLANES];
    uint32_t texel_bytes[IPC_MAX_PLANES]; /* not on the wire: worked out by the parser from the format */
};

struct ipc_accept {
    uint32_t path; /* clmem_bridge_path: OPAQUE_FD or HOST_MAPPED */
};

/* READY and FREE: a batch of `count` frames, no frame twice.
 *   READY: u32 count, u32 reserved, u64 first sequence, count x u32 index;
 *          frame i of the batch has sequence first + i.
 *   FREE:  u32 count, u32 reserved, count x (u64 sequence, u32 index,
 *          u32 reserved): each frame with the sequence of the READY that
 *          lent it. */
struct ipc_handoff {
    uint32_t count; /* 1 .. CLMEM_IPC_MAX_FRAMES */
    uint32_t index[CLMEM_IPC_MAX_FRAMES];
    uint64_t sequence[CLMEM_IPC_MAX_FRAMES];
};

struct ipc_error {
    int32_t status; /* a clmem_status */
    char text[IPC_ERROR_TEXT_MAX + 1]; /* printable ASCII only, terminated */
};

struct ipc_msg {
    enum ipc_type type;
    uint32_t fd_count;
    union {
        struct ipc_hello hello;
        struct ipc_alloc alloc;
        struct ipc_frame frame;
        struct ipc_accept accept;
        struct ipc_handoff handoff;
        struct ipc_error error;
    } u;
};

/* A message type's name ("READY"), for sentences. */
const char *clmem__ipc_type_name(uint32_t type);

/* Encode m into buf (at least IPC_MAX_MESSAGE_BYTES), returning its length.
 * The producer's and consumer's own messages: m is trusted. */
size_t clmem__ipc_encode(const struct ipc_msg *m, uint8_t *buf);

/* Parse `len` bytes that arrived with `fds_received` fds. CLMEM_OK with *out
 * filled, or the error recorded (CLMEM_ERR_INVALID_VALUE, or
 * CLMEM_ERR_UNSUPPORTED for another version) with a sentence that says
 * "<who> sent ..." and names the rule and the value. Never reads past len. */
clmem_status clmem__ipc_parse(const uint8_t *buf, size_t len, unsigned fds_received, const char *who,
                              struct ipc_msg *out);

/* Format a UUID as clmem-info prints it: 36 characters and a NUL. */
void clmem__ipc_format_uuid(const uint8_t uuid[IPC_UUID_BYTES], char out[37]);
#endif
