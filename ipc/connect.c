/* SPDX-License-Identifier: MIT */
/* Making the connection: a listening socket at a path, accepting one peer,
 * connecting to one. AF_UNIX SOCK_SEQPACKET, close-on-exec; who may connect
 * is the path's directory's and the umask's business, which are the
 * caller's. */
#define _GNU_SOURCE /* accept4 */
#include "config.h"
#include "error-private.h"
#include "export.h"
#include "sock.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* An errno as a status: out of fds or memory, a path the call refused, or
 * anything else. */
static clmem_status from_errno(int err, clmem_status path_status, const char *call)
{
    clmem_status st = err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS ? CLMEM_ERR_NO_MEMORY
                                                                                        : path_status;
    return clmem_error_set(st, CLMEM_API_SYSTEM, call, err, "%s.", strerror(err));
}

static clmem_status make_address(const char *path, struct sockaddr_un *a)
{
    size_t n;
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    n = strlen(path);
    if (n == 0 || n >= sizeof a->sun_path)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "the path has %zu bytes; a UNIX socket's path has 1 to %zu.", n,
                           sizeof a->sun_path - 1);
    memcpy(a->sun_path, path, n);
    return CLMEM_OK;
}

static clmem_status ipc_listen(const char *path, int *fd_out)
{
    struct sockaddr_un a;
    int fd;
    clmem_status st;

    if (fd_out)
        *fd_out = -1;
    if (!path || !fd_out)
        return clmem__null_arg(!path ? "path" : "fd_out");
    if ((st = make_address(path, &a)) != CLMEM_OK)
        return st;
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "socket");
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int err = errno;
        close(fd);
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "bind", err, "bind(\"%s\") failed: %s.", path,
                               strerror(err));
    }
    if (listen(fd, 4) != 0) {
        int err = errno;
        close(fd);
        return from_errno(err, CLMEM_ERR_UNSUPPORTED, "listen");
    }
    *fd_out = fd;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_ipc_listen(const char *path, int *fd_out)
{
    return clmem__error_in(__func__, ipc_listen(path, fd_out));
}

static clmem_status ipc_accept(int listen_fd, uint64_t timeout_ns, int *fd_out)
{
    uint64_t deadline = clmem__ipc_deadline(timeout_ns);

    if (fd_out)
        *fd_out = -1;
    if (!fd_out)
        return clmem__null_arg("fd_out");
    if (listen_fd < 0)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "listen_fd is %d.", listen_fd);
    for (;;) {
        struct pollfd pfd = {.fd = listen_fd, .events = POLLIN};
        int r = poll(&pfd, 1, clmem__ipc_poll_ms(deadline));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "poll");
        if (r == 0)
            return clmem__fail(CLMEM_ERR_TIMEOUT, "nobody connected within %s.", clmem__duration(timeout_ns).text);
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            *fd_out = fd;
            return CLMEM_OK;
        }
        if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
            return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "accept4");
    }
}

CLMEM_EXPORT clmem_status clmem_ipc_accept(int listen_fd, uint64_t timeout_ns, int *fd_out)
{
    return clmem__error_in(__func__, ipc_accept(listen_fd, timeout_ns, fd_out));
}

static clmem_status ipc_connect(const char *path, uint64_t timeout_ns, int *fd_out)
{
    struct sockaddr_un a;
    uint64_t deadline = clmem__ipc_deadline(timeout_ns);
    clmem_status st;

    if (fd_out)
        *fd_out = -1;
    if (!path || !fd_out)
        return clmem__null_arg(!path ? "path" : "fd_out");
    if ((st = make_address(path, &a)) != CLMEM_OK)
        return st;
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "socket");
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            *fd_out = fd;
            return CLMEM_OK;
        }
        int err = errno;
        close(fd);
        if (err != ENOENT && err != ECONNREFUSED && err != EINTR && err != EAGAIN)
            return clmem_error_set(
                err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS ? CLMEM_ERR_NO_MEMORY
                                                                                  : CLMEM_ERR_INVALID_VALUE,
                CLMEM_API_SYSTEM, "connect", err, "connect(\"%s\") failed: %s.", path, strerror(err));
        if (clmem__ipc_now_ns() >= deadline)
            return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_NONE, "connect", err,
                                   "nobody listened at \"%s\" within the timeout (%s).", path, strerror(err));
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

CLMEM_EXPORT clmem_status clmem_ipc_connect(const char *path, uint64_t timeout_ns, int *fd_out)
{
    return clmem__error_in(__func__, ipc_connect(path, timeout_ns, fd_out));
}

CLMEM_EXPORT const char *clmem_ipc_state_name(clmem_ipc_state state)
{
    switch (state) {
    case CLMEM_IPC_STATE_NEW: return "new";
    case CLMEM_IPC_STATE_OPEN: return "open";
    case CLMEM_IPC_STATE_ENDED: return "ended";
    case CLMEM_IPC_STATE_PEER_GONE: return "peer-gone";
    case CLMEM_IPC_STATE_DROPPED: return "dropped";
    case CLMEM_IPC_STATE_CLOSED: return "closed";
    }
    return "unknown-state";
}
