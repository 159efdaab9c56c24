/* SPDX-License-Identifier: MIT */
/* libclmem-ipc's messages written and read byte by byte, for the tests
 * that play a peer by hand (t/ipc/xproc, t/ipc/ipc-end): a peer that
 * sends what the library would never send has to be written without the
 * library. The layout is ipc/wire.h's; the tests check the library
 * against it, so it is spelled out here again on purpose, once. */
#ifndef CLMEM_T_WIRE_BY_HAND_H
#define CLMEM_T_WIRE_BY_HAND_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum { T_HELLO = 1, T_ALLOC, T_FRAME, T_ACCEPT, T_READY, T_FREE, T_BYE, T_ERROR };
enum { ROLE_PRODUCER = 1, ROLE_CONSUMER = 2 };

void wire_put32(uint8_t *b, uint32_t v);
void wire_put64(uint8_t *b, uint64_t v);
uint32_t wire_get32(const uint8_t *b);

/* Zero b[0, len), then the header: magic "CLMI", protocol version 2,
 * type, length, fds announced. */
void wire_header(uint8_t *b, uint16_t type, uint32_t len, uint32_t fds);

/* HELLO of `role` with the two UUIDs (16 bytes each) and the counts; its
 * length (64). */
size_t wire_hello(uint8_t *b, uint32_t role, const uint8_t *device_uuid, const uint8_t *driver_uuid,
                  uint32_t allocs, uint32_t frames);

/* One message from s within timeout_ms, every fd it carried closed: its
 * length, or -1 (nothing came, or the connection failed). */
ssize_t wire_recv(int s, uint8_t *b, size_t cap, int timeout_ms);
#endif
