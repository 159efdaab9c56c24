/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes: the messages of the /dev/shm copy
 * and of the raw protocol (struct xproc_msg), one a datagram of a
 * SOCK_SEQPACKET socketpair, with fds passed as SCM_RIGHTS. */
#include "xproc-common.h"

#include <sys/socket.h>
#include <unistd.h>

bool xproc_msg_send(int sock, const struct xproc_msg *m, const int *fds, int nfds)
{
    union {
        char space[CMSG_SPACE(sizeof(int) * XPROC_SLOTS)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {(void *)m, sizeof *m};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds) {
        memset(&control, 0, sizeof control);
        h.msg_control = control.space;
        h.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    return sendmsg(sock, &h, MSG_NOSIGNAL) == (ssize_t)sizeof *m;
}

/* One message, its fds in fds (up to max, the rest closed): how many came,
 * or -1 when no whole message did. */
int xproc_msg_recv(int sock, struct xproc_msg *m, int *fds, int max)
{
    union {
        char space[CMSG_SPACE(sizeof(int) * XPROC_SLOTS)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {m, sizeof *m};
    struct msghdr h = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
    ssize_t n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC);
    int got = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); n > 0 && c; c = CMSG_NXTHDR(&h, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
                if (got < max)
                    fds[got++] = fd;
                else
                    close(fd);
            }
    return n == (ssize_t)sizeof *m ? got : -1;
}
