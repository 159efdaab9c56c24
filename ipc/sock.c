/* SPDX-License-Identifier: MIT */
/* Messages in and out of the socket (sock.h). Receiving is where the
 * kernel's view of a message is checked: that it was not cut short
 * (MSG_TRUNC), that its control data was not (MSG_CTRUNC), that it carried
 * nothing but fds and credentials, and how many fds it really brought, which
 * the parser holds against what the message announces. Every fd that
 * arrives is closed on every path that does not hand it on. */
#define _GNU_SOURCE /* struct ucred, SCM_CREDENTIALS, MSG_CMSG_CLOEXEC */
#include "config.h"
#include "deadline.h"
#include "error-private.h"
#include "sock.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static clmem_status system_error(clmem_status st, const char *call, int err, const char *what)
{
    return clmem_error_set(st, CLMEM_API_SYSTEM, call, err, "%s: %s.", what, strerror(err));
}

clmem_status clmem__ipc_socket_check(int fd)
{
    int domain = 0, type = 0, one = 1;
    socklen_t len = sizeof domain;
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;

    if (fd < 0)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "socket_fd is %d.", fd);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "getsockopt(SO_DOMAIN)", errno,
                               "socket_fd %d is not a socket (%s).", fd, strerror(errno));
    len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
        return system_error(CLMEM_ERR_INVALID_VALUE, "getsockopt(SO_TYPE)", errno, "checking socket_fd");
    if (domain != AF_UNIX || type != SOCK_SEQPACKET)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "socket_fd %d is a socket of domain %d and type %d; clmem-ipc needs AF_UNIX (%d) "
                           "and SOCK_SEQPACKET (%d).",
                           fd, domain, type, AF_UNIX, SOCK_SEQPACKET);
    if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "getpeername", errno,
                               "socket_fd %d is not connected (%s).", fd, strerror(errno));
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) != 0)
        return system_error(CLMEM_ERR_INVALID_VALUE, "setsockopt(SO_PASSCRED)", errno, "checking socket_fd");
    return CLMEM_OK;
}

clmem_status clmem__ipc_check_info_size(const void *info, size_t size, size_t known, const char *type)
{
    if (size < known || size > 4096)
        return clmem__invalid("info->size is %zu; set it to sizeof(%s) (%zu).", size, type, known);
    for (size_t i = known; i < size; i++)
        if (((const unsigned char *)info)[i])
            return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                               "byte %zu of info, past this library's %s (%zu bytes), is set: a newer header's "
                               "field.",
                               i, type, known);
    return CLMEM_OK;
}

clmem_status clmem__ipc_no_flags(uint32_t flags)
{
    return clmem__invalid("flags 0x%x; none are defined.", flags);
}

clmem_status clmem__ipc_started_twice(clmem_ipc_state state)
{
    return clmem__invalid("called before (the state is %s).", clmem_ipc_state_name(state));
}

clmem_status clmem__ipc_not_started(const char *who, clmem_ipc_state state)
{
    return clmem__invalid("the %s has not started (the state is %s).", who, clmem_ipc_state_name(state));
}

static void close_all(int *fds, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        close(fds[i]);
}

enum recv_result clmem__ipc_recv(int sock, uint64_t deadline_ns, const char *who, struct ipc_msg *m, int *fd_out,
                                 pid_t *pid_out)
{
    /* One byte more than the largest message, so that a longer one shows
     * as longer rather than as exactly the right length (MSG_TRUNC says it
     * too). */
    uint8_t buf[IPC_MAX_MESSAGE_BYTES + 1];
    union {
        char space[CMSG_SPACE(sizeof(int) * IPC_RECV_MAX_FDS) + CMSG_SPACE(sizeof(struct ucred))];
        struct cmsghdr align;
    } control;
    int fds[IPC_RECV_MAX_FDS];
    unsigned nfds = 0;
    bool other_control = false;

    *fd_out = -1;
    *pid_out = 0;
    /* With no time left, recvmsg alone says whether a message is there
     * (EAGAIN: none); a poll first would be a second system call a message. */
    while (time_left(deadline_ns) != 0) {
        struct pollfd pfd = {.fd = sock, .events = POLLIN};
        int r = poll(&pfd, 1, poll_ms_until(deadline_ns));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            system_error(CLMEM_ERR_INVALID_VALUE, "poll", errno, "receiving from the peer");
            return RECV_BAD;
        }
        if (r == 0)
            return RECV_TIMEOUT;
        break;
    }

    struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space,
                       .msg_controllen = sizeof control.space};
    ssize_t n;
    bool reset = false;
    for (;;) {
        n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n >= 0 || errno != EINTR) {
            if (n >= 0 || errno != ECONNRESET || reset)
                break;
            /* The peer closed its end with messages of ours unread: Linux
             * reports that once (ECONNRESET), before the messages the peer
             * had sent, which are still there to read. */
            reset = true;
        }
    }
    if (n < 0) {
        if (errno == ECONNRESET)
            return RECV_EOF;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return RECV_TIMEOUT; /* woken for nothing: the caller's loop waits again */
        system_error(CLMEM_ERR_INVALID_VALUE, "recvmsg", errno, "receiving from the peer");
        return RECV_BAD;
    }

    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                if (nfds < IPC_RECV_MAX_FDS)
                    fds[nfds++] = fd;
                else
                    close(fd); /* cannot happen: the buffer holds no more; closed all the same */
            }
        } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                   c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
            struct ucred cred;
            memcpy(&cred, CMSG_DATA(c), sizeof cred);
            *pid_out = cred.pid;
        } else {
            other_control = true;
        }
    }

    if (n == 0 && nfds == 0 && !(h.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
        return RECV_EOF; /* SOCK_SEQPACKET: 0 bytes is the end of the connection */
    if (h.msg_flags & MSG_CTRUNC) {
        close_all(fds, nfds);
        clmem__fail(CLMEM_ERR_INVALID_VALUE,
                    "The %s sent a message whose control data did not fit (MSG_CTRUNC): more than %d fds; the "
                    "%u that arrived are closed.",
                    who, IPC_RECV_MAX_FDS, nfds);
        return RECV_BAD;
    }
    if (h.msg_flags & MSG_TRUNC) {
        close_all(fds, nfds);
        clmem__fail(CLMEM_ERR_INVALID_VALUE,
                    "The %s sent a message longer than %d bytes (MSG_TRUNC); no message is that long.", who,
                    IPC_MAX_MESSAGE_BYTES);
        return RECV_BAD;
    }
    if (other_control) {
        close_all(fds, nfds);
        clmem__fail(CLMEM_ERR_INVALID_VALUE, "The %s sent control data other than fds and credentials.", who);
        return RECV_BAD;
    }
    if (clmem__ipc_parse(buf, (size_t)n, nfds, who, m) != CLMEM_OK) {
        close_all(fds, nfds);
        return RECV_BAD;
    }
    *fd_out = nfds ? fds[0] : -1; /* the parser let through exactly the fds the type carries: 0 or 1 */
    return RECV_MESSAGE;
}

enum peer_result clmem__ipc_handshake_result(enum recv_result r, const struct ipc_msg *m, const char *who,
                                             uint64_t timeout_ns, uint64_t deadline)
{
    if (r == RECV_MESSAGE)
        return m->type == IPC_ERROR ? PEER_ERROR : m->type == IPC_BYE ? PEER_BYE : PEER_MESSAGE;
    if (r == RECV_EOF)
        return PEER_GONE;
    if (r == RECV_BAD)
        return PEER_BAD;
    if (clock_ns(CLOCK_MONOTONIC) < deadline)
        return PEER_WAITING;
    clmem__fail(CLMEM_ERR_TIMEOUT, "The %s did not complete the handshake within %s.", who,
                clmem__duration(timeout_ns).text);
    return PEER_BAD;
}

enum peer_result clmem__ipc_recv_after_close(int sock, const char *who, struct ipc_msg *m)
{
    for (;;) {
        int fd;
        pid_t pid;
        enum recv_result r = clmem__ipc_recv(sock, 0, who, m, &fd, &pid);
        if (r == RECV_BAD)
            return PEER_BAD;
        if (r != RECV_MESSAGE)
            return PEER_GONE;
        if (fd >= 0)
            close(fd); /* a message the handshake no longer takes: only ERROR and BYE matter now */
        if (m->type == IPC_ERROR)
            return PEER_ERROR;
        if (m->type == IPC_BYE)
            return PEER_BYE;
    }
}

enum send_result clmem__ipc_send(int sock, const struct ipc_msg *m, int fd, uint64_t deadline_ns)
{
    uint8_t buf[IPC_MAX_MESSAGE_BYTES];
    union {
        char space[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    size_t len = clmem__ipc_encode(m, buf);
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};

    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        h.msg_control = control.space;
        h.msg_controllen = sizeof control.space;
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    for (;;) {
        ssize_t n = sendmsg(sock, &h, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == (ssize_t)len)
            return SEND_OK;
        if (n >= 0) { /* SOCK_SEQPACKET sends whole messages: cannot happen */
            clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, "sendmsg", 0,
                            "sendmsg sent %zd of the %zu bytes of a %s.", n, len, clmem__ipc_type_name(m->type));
            return SEND_BAD;
        }
        if (errno == EINTR)
            continue;
        if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)
            return SEND_GONE;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            system_error(CLMEM_ERR_INVALID_VALUE, "sendmsg", errno, "sending to the peer");
            return SEND_BAD;
        }
        struct pollfd pfd = {.fd = sock, .events = POLLOUT};
        int r = poll(&pfd, 1, poll_ms_until(deadline_ns));
        if (r == 0) {
            clmem__fail(CLMEM_ERR_INVALID_VALUE, "The peer does not read its messages: no room to send a %s in time.",
                        clmem__ipc_type_name(m->type));
            return SEND_BAD;
        }
        if (r < 0 && errno != EINTR) {
            system_error(CLMEM_ERR_INVALID_VALUE, "poll", errno, "sending to the peer");
            return SEND_BAD;
        }
    }
}

void clmem__ipc_send_error_and_shutdown(int sock, clmem_status status)
{
    struct ipc_msg m = {.type = IPC_ERROR};
    m.u.error.status = (int32_t)status;
    strncpy(m.u.error.text, clmem_error_message(), IPC_ERROR_TEXT_MAX);
    m.u.error.text[IPC_ERROR_TEXT_MAX] = '\0';
    (void)clmem__ipc_send(sock, &m, -1, 0);
    shutdown(sock, SHUT_RDWR);
}
