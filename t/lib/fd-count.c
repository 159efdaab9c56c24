/* SPDX-License-Identifier: MIT */
#include "fd-count.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory stream's own fd */
}

bool fd_is_open(int fd)
{
    return fd >= 0 && fcntl(fd, F_GETFD) != -1;
}

void fd_snapshot_take(struct fd_snapshot *s)
{
    for (int fd = 0; fd < FD_SNAPSHOT_MAX; fd++)
        s->open[fd] = fd_is_open(fd);
}

void fd_describe_new(const struct fd_snapshot *s, char *out, size_t len)
{
    size_t used = 0;
    if (!len)
        return;
    out[0] = '\0';
    for (int fd = 0; fd < FD_SNAPSHOT_MAX; fd++) {
        char link[64], target[256];
        ssize_t n;
        int w;
        if (s->open[fd] || !fd_is_open(fd))
            continue;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        w = snprintf(out + used, len - used, "%sfd %d -> %s", used ? ", " : "", fd, n > 0 ? target : "?");
        if (w < 0 || (size_t)w >= len - used)
            return; /* truncated, still terminated */
        used += (size_t)w;
    }
    if (!used)
        snprintf(out, len, "none");
}
