/* SPDX-License-Identifier: MIT */
/* Making the connection: a listening socket at a path, accepting one peer,
 * connecting to one. AF_UNIX SOCK_SEQPACKET, close-on-exec; who may connect
 * is the path's directory's and the umask's business, which are the
 * caller's. */
#define _GNU_SOURCE /* accept4 */
#include "config.h"
#include "deadline.h"
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
static clmem_status from_errno(int err, clmem_status path_status, const char *call, const char *what)
{
    clmem_status st = err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS ? CLMEM_ERR_NO_MEMORY
                                                                                        : path_status;
    return clmem_error_set(st, CLMEM_API_SYSTEM, call, err, "%s: %s failed: %s.", what, call, strerror(err));
}

static clmem_status make_address(const char *path, struct sockaddr_un *a, const char *what)
{
    size_t n;
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    n = strlen(path);
    if (n == 0 || n >= sizeof a->sun_path)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "%s: the path has %zu bytes; a UNIX socket's path has 1 to %zu.", what, n,
                               sizeof a->sun_path - 1);
    memcpy(a->sun_path, path, n);
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_ipc_listen(const char *path, int *fd_out)
{
    struct sockaddr_un a;
    int fd;
    clmem_status st;

    if (fd_out)
        *fd_out = -1;
    if (!path || !fd_out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0,
                               "clmem_ipc_listen: %s is NULL.", !path ? "path" : "fd_out");
    if ((st = make_address(path, &a, "clmem_ipc_listen")) != CLMEM_OK)
        return st;
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "socket", "clmem_ipc_listen");
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int err = errno;
        close(fd);
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "bind", err,
                               "clmem_ipc_listen: bind(\"%s\") failed: %s.", path, strerror(err));
    }
    if (listen(fd, 4) != 0) {
        int err = errno;
        close(fd);
        return from_errno(err, CLMEM_ERR_UNSUPPORTED, "listen", "clmem_ipc_listen");
    }
    *fd_out = fd;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_ipc_accept(int listen_fd, uint64_t timeout_ns, int *fd_out)
{
    uint64_t deadline = deadline_after(timeout_ns);

    if (fd_out)
        *fd_out = -1;
    if (!fd_out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "clmem_ipc_accept: fd_out is NULL.");
    if (listen_fd < 0)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "clmem_ipc_accept: listen_fd is %d.", listen_fd);
    for (;;) {
        struct pollfd pfd = {.fd = listen_fd, .events = POLLIN};
        int r = poll(&pfd, 1, poll_ms_until(deadline));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "poll", "clmem_ipc_accept");
        if (r == 0)
            return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_NONE, NULL, 0,
                                   "clmem_ipc_accept: nobody connected within the timeout.");
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            *fd_out = fd;
            return CLMEM_OK;
        }
        if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
            return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "accept4", "clmem_ipc_accept");
    }
}

CLMEM_EXPORT clmem_status clmem_ipc_connect(const char *path, uint64_t timeout_ns, int *fd_out)
{
    struct sockaddr_un a;
    uint64_t deadline = deadline_after(timeout_ns);
    clmem_status st;

    if (fd_out)
        *fd_out = -1;
    if (!path || !fd_out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0,
                               "clmem_ipc_connect: %s is NULL.", !path ? "path" : "fd_out");
    if ((st = make_address(path, &a, "clmem_ipc_connect")) != CLMEM_OK)
        return st;
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "socket", "clmem_ipc_connect");
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            *fd_out = fd;
            return CLMEM_OK;
        }
        int err = errno;
        close(fd);
        if (err != ENOENT && err != ECONNREFUSED && err != EINTR && err != EAGAIN)
            return clmem_error_set(err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS
                                       ? CLMEM_ERR_NO_MEMORY
                                       : CLMEM_ERR_INVALID_VALUE,
                                   CLMEM_API_SYSTEM, "connect", err, "clmem_ipc_connect: connect(\"%s\") failed: %s.",
                                   path, strerror(err));
        if (clock_ns(CLOCK_MONOTONIC) >= deadline)
            return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_NONE, "connect", err,
                                   "clmem_ipc_connect: nobody listened at \"%s\" within the timeout (%s).", path,
                                   strerror(err));
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
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
