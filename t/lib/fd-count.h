/* SPDX-License-Identifier: MIT */
/* Open-file-descriptor accounting for leak tests: take a snapshot of
 * /proc/self/fd before, compare after. */
#ifndef CLMEM_FD_COUNT_H
#define CLMEM_FD_COUNT_H
#include <stdbool.h>
#include <stddef.h>

/* The number of open fds (entries in /proc/self/fd, less the one used to
 * read it). -1 if /proc is unreadable. */
int fd_count(void);

/* True when fd is an open descriptor. */
bool fd_is_open(int fd);

/* Which fds are open, for naming the ones a step left behind. */
#define FD_SNAPSHOT_MAX 1024
struct fd_snapshot {
    bool open[FD_SNAPSHOT_MAX];
};

void fd_snapshot_take(struct fd_snapshot *s);

/* "fd 57 -> /dev/nvidia0, fd 58 -> anon_inode:sync_file" for each fd open
 * now and not in s (at most len bytes, always terminated); "none" when
 * there is none. */
void fd_describe_new(const struct fd_snapshot *s, char *out, size_t len);
#endif
