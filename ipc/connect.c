/* SPDX-License-Identifier: MIT */
/* Making the connection: a listening socket at a path, accepting one peer,
 * connecting to one. AF_UNIX SOCK_SEQPACKET, close-on-exec; who may connect
 * is the path's directory's and the umask's business, which are the
 * caller's. */
#define _GNU_SOURCE /* accept4 */
#include "config.h"
#include "deadline.h"
#include "error-private.h"
#include "export.h"
#include "sock.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/* The arguments of listen and connect: *fd_out -1 first, then path and
 * fd_out given and path short enough for a UNIX socket's address. */
static clmem_status read_path_args(const char *path, int *fd_out, struct sockaddr_un *a)
{
    size_t n;
    if (fd_out)
        *fd_out = -1;
    if (!path || !fd_out)
        return clmem__null_arg(!path ? "path" : "fd_out");
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    n = strlen(path);
    if (n == 0 || n >= sizeof a->sun_path)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "the path has %zu bytes; a UNIX socket's path has 1 to %zu.", n,
                           sizeof a->sun_path - 1);
    memcpy(a->sun_path, path, n);
    return CLMEM_OK;
}

/* Does a process listen on a UNIX socket bound at `path`? Read from the
 * kernel's list of UNIX sockets (/proc/net/unix), so that asking changes
 * nothing: a connect() to find out would be taken by that process's
 * accept as a consumer that came and went. A line lists the socket's
 * flags (__SO_ACCEPTCON, 0x10000, while it listens) and the path as its
 * bind() was given it, so both the path as written and its absolute form
 * are compared. Returns -1 where the list cannot be read. */
static int listened_on(const char *path)
{
    char absolute[PATH_MAX + 1] = "", line[PATH_MAX + 128];
    FILE *f = fopen("/proc/net/unix", "re");
    int found = 0;

    if (!f)
        return -1;
    if (path[0] != '/' && getcwd(absolute, sizeof absolute)) {
        size_t n = strlen(absolute);
        if (n + 1 + strlen(path) < sizeof absolute) {
            absolute[n] = '/';
            memcpy(absolute + n + 1, path, strlen(path) + 1);
        } else
            absolute[0] = '\0';
    }
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long flags;
        char bound[PATH_MAX + 1];
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf(line, "%*s %*s %*s %lx %*s %*s %*s %4096s", &flags, bound) != 2)
            continue;
        if ((flags & 0x10000ul) && (strcmp(bound, path) == 0 || (absolute[0] && strcmp(bound, absolute) == 0)))
            found = 1;
    }
    fclose(f);
    return found;
}

/* A file is at `path` (bind() said EADDRINUSE). When it is a socket that
 * nobody listens on, it was left by a process that ended without unlinking
 * it: remove it, and CLMEM_OK. Any other file, or a socket somebody listens
 * on, stays, with the sentence. Whether anybody listens is read from the
 * kernel's list first; only a socket that list does not show as listened on
 * (under another spelling of its path, say) is asked with a connect(),
 * which a listener would see. */
static clmem_status remove_stale_socket(const char *path, const struct sockaddr_un *a)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return CLMEM_OK; /* gone meanwhile: bind again */
    if (!S_ISSOCK(sb.st_mode))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "bind", EADDRINUSE,
                               "\"%s\" exists and is not a socket: remove it, or choose another path.", path);
    if (listened_on(path) == 1)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "bind", EADDRINUSE,
                               "a process listens on \"%s\" already: choose another path.", path);
    /* Non-blocking, so that a listener whose backlog is full answers EAGAIN
     * rather than making this wait. */
    int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (probe < 0)
        return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "socket");
    int err = connect(probe, (const struct sockaddr *)a, sizeof *a) == 0 ? 0 : errno;
    close(probe);
    if (err == ECONNREFUSED) {
        if (unlink(path) != 0 && errno != ENOENT)
            return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "unlink", errno,
                                   "nobody listens on the socket \"%s\", and removing it failed: %s.", path,
                                   strerror(errno));
        return CLMEM_OK;
    }
    if (err == 0 || err == EAGAIN || err == EINPROGRESS)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "bind", EADDRINUSE,
                               "a process listens on \"%s\" already: choose another path.", path);
    return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "connect", err,
                           "the socket \"%s\" is in the way, and connecting to it to see whether anybody listens "
                           "failed: %s; remove it if no program uses it.",
                           path, strerror(err));
}

static clmem_status ipc_listen(const char *path, int *fd_out)
{
    struct sockaddr_un a;
    int fd;
    clmem_status st;

    if ((st = read_path_args(path, fd_out, &a)) != CLMEM_OK)
        return st;
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return from_errno(errno, CLMEM_ERR_UNSUPPORTED, "socket");
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
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "bind", err, "\"%s\": %s.", path,
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
    uint64_t deadline = deadline_after(timeout_ns);

    if (fd_out)
        *fd_out = -1;
    if (!fd_out)
        return clmem__null_arg("fd_out");
    if (listen_fd < 0)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "listen_fd is %d.", listen_fd);
    for (;;) {
        struct pollfd pfd = {.fd = listen_fd, .events = POLLIN};
        int r = poll(&pfd, 1, poll_ms_until(deadline));
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
    uint64_t deadline = deadline_after(timeout_ns);
    clmem_status st;

    if ((st = read_path_args(path, fd_out, &a)) != CLMEM_OK)
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
        if (clock_ns(CLOCK_MONOTONIC) >= deadline)
            return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_SYSTEM, "connect", err,
                                   "nobody listened at \"%s\": timed out after %s.", path,
                                   clmem__duration(timeout_ns).text);
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
