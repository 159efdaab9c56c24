/* SPDX-License-Identifier: MIT */
/* fd numbers that NVIDIA's semaphore imports spoil for memory imports
 * (fd-numbers.h says what the driver does). A bitmap of the numbers the
 * bridge's semaphore fds had, process-wide like the driver's own state. */
#include "config.h"
#include "fd-numbers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

/* Numbers up to 65535: beyond that a semaphore fd is not noted, and a
 * memory fd is not moved (a process with that many fds open is not one
 * this was measured in). */
#define NOTED_MAX 65536
#define WORD_BITS 64
static atomic_uint_least64_t noted[NOTED_MAX / WORD_BITS];

void clmem__fd_number_note_semaphore(int fd)
{
    if (fd >= 0 && fd < NOTED_MAX)
        atomic_fetch_or(&noted[fd / WORD_BITS], (uint_least64_t)1 << (fd % WORD_BITS));
}

static bool was_semaphore(int fd)
{
    return fd >= 0 && fd < NOTED_MAX && (atomic_load(&noted[fd / WORD_BITS]) >> (fd % WORD_BITS) & 1u);
}

int clmem__fd_number_for_memory(int fd)
{
    int moved = fd;

    /* The lowest free number above, then above that while the number was
     * a semaphore's. The minimum only grows, so a spoiled duplicate can be
     * closed at once: F_DUPFD never hands its number back here. */
    while (was_semaphore(moved)) {
        int next = fcntl(fd, F_DUPFD_CLOEXEC, moved + 1), fcntl_errno = errno;
        if (moved != fd)
            close(moved);
        if (next < 0) {
            errno = fcntl_errno;
            return -1;
        }
        moved = next;
    }
    if (moved != fd)
        close(fd);
    return moved;
}
