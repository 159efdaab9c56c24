/* SPDX-License-Identifier: MIT */
/* libclmem-ipc's messages by hand, for the tests that play a peer
 * (wire-by-hand.h). */
#include "t/lib/wire-by-hand.h"

#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void wire_put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> 8 * i);
}

void wire_put64(uint8_t *b, uint64_t v)
{
    wire_put32(b, (uint32_t)v);
    wire_put32(b + 4, (uint32_t)(v >> 32));
}

uint32_t wire_get32(const uint8_t *b)
{
    return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

void wire_header(uint8_t *b, uint16_t type, uint32_t len, uint32_t fds)
{
    memset(b, 0, len);
    memcpy(b, "CLMI", 4);
    b[4] = 2;
    b[6] = (uint8_t)type;
    wire_put32(b + 8, len);
    wire_put32(b + 12, fds);
}

size_t wire_hello(uint8_t *b, uint32_t role, const uint8_t *device_uuid, const uint8_t *driver_uuid,
                  uint32_t allocs, uint32_t frames)
{
    wire_header(b, T_HELLO, 64, 0);
    wire_put32(b + 16, role);
    memcpy(b + 24, device_uuid, 16);
    memcpy(b + 40, driver_uuid, 16);
    wire_put32(b + 56, allocs);
    wire_put32(b + 60, frames);
    return 64;
}

ssize_t wire_recv(int s, uint8_t *b, size_t cap, int timeout_ms)
{
    char control[CMSG_SPACE(sizeof(int) * 8)];
    struct iovec iov = {b, cap};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    struct pollfd pfd = {.fd = s, .events = POLLIN};
    if (poll(&pfd, 1, timeout_ms) != 1)
        return -1;
    ssize_t n = recvmsg(s, &h, MSG_CMSG_CLOEXEC);
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); n >= 0 && c; c = CMSG_NXTHDR(&h, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                close(fd);
            }
    return n;
}
