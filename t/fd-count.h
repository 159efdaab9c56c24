/* Open-file-descriptor accounting for leak tests: take a snapshot of
 * /proc/self/fd before, compare after. */
#ifndef CLMEM_FD_COUNT_H
#define CLMEM_FD_COUNT_H
#include <stdbool.h>

/* The number of open fds (entries in /proc/self/fd, less the one used to
 * read it). -1 if /proc is unreadable. */
int fd_count(void);

/* True when fd is an open descriptor. */
bool fd_is_open(int fd);
#endif
