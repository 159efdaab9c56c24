/* SPDX-License-Identifier: MIT */
/* Making the connection: a listening socket at a path, accepting one peer,
 * connecting to one. AF_UNIX SOCK_SEQPACKET, close-on-exec; who may connect
 * is the path's directory's and the umask's business, which are the
 * caller's. */
#define _GNU_SOURCE /* accept4 */
#include "config.h"
#include "export.h"
#include "sock.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/* A timeout for a sentence, in the largest unit that holds it whole: "10 s",
 * "200 ms", else milliseconds with decimals ("0.25 ms"). */
static void duration_text(uint64_t ns, char *out, size_t size)
{
    if (ns >= 1000000000u && ns % 1000000000u == 0)
        snprintf(out, size, "%llu s", (unsigned long long)(ns / 1000000000u));
    else if (ns % 1000000u == 0)
        snprintf(out, size, "%llu ms", (unsigned long long)(ns / 1000000u));
    else
        snprintf(out, size, "%.6g ms", (double)ns / 1e6);
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

/* A file is at `path` (bind() said EADDRINUSE). When it is a socket that
 * nobody listens on (connect() is refused: ECONNREFUSED), it was left by a
 * process that ended without unlinking it: remove it, and CLMEM_OK. Any
 * other file, or a socket somebody listens on, stays, with the sentence. */
static clmem_status remove_stale_socket(const char *path, const struct sockaddr_un *a)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return CLMEM_OK; /* gone meanwhile: bind again */
    if (!S_ISSOCK(sb.st_mode))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "bind", EADDRINUSE,
                               "clmem_ipc_listen: \"%s\" exists and is not a socket: remove it, or choose another "
                               "path.", path);
    /* Non-blocking, so that a listener whose backlog is full answers EAGAIN
     * rather than making this wait. */
    int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (probe < 0)
        return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "socket", "clmem_ipc_listen");
    int err = connect(probe, (const struct sockaddr *)a, sizeof *a) == 0 ? 0 : errno;
    close(probe);
    if (err == ECONNREFUSED) {
        if (unlink(path) != 0 && errno != ENOENT)
            return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "unlink", errno,
                                   "clmem_ipc_listen: nobody listens on the socket \"%s\", and removing it failed: "
                                   "%s.", path, strerror(errno));
        return CLMEM_OK;
    }
    if (err == 0 || err == EAGAIN || err == EINPROGRESS)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "bind", EADDRINUSE,
                               "clmem_ipc_listen: a process listens on \"%s\" already: choose another path.", path);
    return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "connect", err,
                           "clmem_ipc_listen: the socket \"%s\" is in the way, and connecting to it to see whether "
                           "anybody listens failed: %s; remove it if no program uses it.", path, strerror(err));
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
    bool bound = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (!bound && errno == EADDRINUSE) {
        if ((st = remove_stale_socket(path, &a)) != CLMEM_OK) {
            close(fd);
            return st;
        }
        bound = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    }
    if (!bound) {
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
    uint64_t deadline = clmem__ipc_deadline(timeout_ns);

    if (fd_out)
        *fd_out = -1;
    if (!fd_out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "clmem_ipc_accept: fd_out is NULL.");
    if (listen_fd < 0)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "clmem_ipc_accept: listen_fd is %d.", listen_fd);
    for (;;) {
        struct pollfd pfd = {.fd = listen_fd, .events = POLLIN};
        int r = poll(&pfd, 1, clmem__ipc_poll_ms(deadline));
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
    uint64_t deadline = clmem__ipc_deadline(timeout_ns);
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
        if (clmem__ipc_now_ns() >= deadline) {
            char after[64];
            duration_text(timeout_ns, after, sizeof after);
            return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_SYSTEM, "connect", err,
                                   "clmem_ipc_connect: nobody listened at \"%s\": timed out after %s.", path, after);
        }
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
