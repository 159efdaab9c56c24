/* SPDX-License-Identifier: MIT */
/* bridge/fd-numbers.c on its own: a memory fd whose number a semaphore fd
 * had is moved to a number none had, the same file, its old number closed
 * and no duplicate left behind; other fds are handed back as they are; and
 * where no duplicate can be made, the fd is untouched. (Why: NVIDIA never
 * closes a memory fd imported at such a number, docs/driver-notes.md; the
 * H200 ring tests are where the driver itself is seen.) */
#define _GNU_SOURCE
#include "bridge/fd-numbers.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int memfd(void)
{
    int fd = memfd_create("fd-numbers", MFD_CLOEXEC);
    if (fd < 0)
        tap_bail("memfd_create failed");
    return fd;
}

static bool same_file(int a, int b)
{
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static bool is_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

/* n numbers in a row that semaphore fds had, the lowest free ones: made
 * open, noted, closed again (as the driver closes a semaphore's fd). */
static int note_run(int n)
{
    int first = -1, fds[8];
    for (int i = 0; i < n; i++) {
        fds[i] = memfd();
        if (i == 0)
            first = fds[0];
        else if (fds[i] != first + i)
            tap_bail("the free fd numbers are not consecutive here (%d after %d)", fds[i], first);
        clmem__fd_number_note_semaphore(fds[i]);
    }
    for (int i = 0; i < n; i++)
        close(fds[i]);
    return first;
}

int main(void)
{
    int before = fd_count(), fd, got, spoiled;

    fd = memfd();
    got = clmem__fd_number_for_memory(fd);
    tap_ok(got == fd && is_open(fd), "an fd at a number no semaphore fd had is handed back as it is (%d -> %d)", fd,
           got);
    close(fd);

    spoiled = note_run(1);
    fd = memfd();
    if (fd != spoiled)
        tap_bail("the memory fd did not take the semaphore's number (%d, %d)", fd, spoiled);
    {
        int keep = dup(fd); /* to compare the file after fd is closed */
        got = clmem__fd_number_for_memory(fd);
        tap_ok(got >= 0 && got != spoiled && !is_open(spoiled) && same_file(got, keep),
               "a memory fd at a semaphore fd's number %d moves to %d, the same file, and %d is closed", spoiled, got,
               spoiled);
        close(keep);
    }
    close(got);
    tap_is_int(fd_count(), before, "nothing else is left open");

    /* Three in a row: the first number above all of them. */
    spoiled = note_run(3);
    fd = memfd();
    got = clmem__fd_number_for_memory(fd);
    tap_ok(got > spoiled + 2 && !is_open(spoiled) && !is_open(spoiled + 1) && !is_open(spoiled + 2),
           "past three semaphore numbers in a row (%d..%d): %d, and none of the three left open", spoiled,
           spoiled + 2, got);
    close(got);
    tap_is_int(fd_count(), before, "nothing else is left open");

    /* No number above is allowed: the fd stays as it was. */
    spoiled = note_run(1);
    fd = memfd();
    {
        struct rlimit old, low;
        int err;
        getrlimit(RLIMIT_NOFILE, &old);
        low = old;
        low.rlim_cur = (rlim_t)fd + 1;
        if (setrlimit(RLIMIT_NOFILE, &low) != 0)
            tap_bail("setrlimit failed");
        got = clmem__fd_number_for_memory(fd);
        err = errno;
        setrlimit(RLIMIT_NOFILE, &old);
        tap_ok(got == -1 && err != 0 && is_open(fd), "no duplicate possible (RLIMIT_NOFILE %d): -1, errno %d, fd %d "
                                                     "still open and the caller's",
               fd + 1, err, fd);
    }
    close(fd);
    tap_is_int(fd_count(), before, "nothing else is left open");
    return tap_done();
}
