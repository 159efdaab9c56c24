/* SPDX-License-Identifier: MIT */
/* fd-watch.h: the bridge's exported fds, marked at export with this
 * process as their owner and found again by it. */
#define _GNU_SOURCE
#include "fd-watch.h"
#include "fd-count.h"
#include "tap.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_uint exported;
#define SERIAL_FDS 4096 /* fd numbers whose last export's serial is kept */
static atomic_uint serial_of_fd[SERIAL_FDS]; /* the export count when each fd number was last exported: #N in lists */
static PFN_vkGetDeviceProcAddr real_get_device_proc_addr;
static PFN_vkGetMemoryFdKHR real_get_memory_fd;
static PFN_vkGetSemaphoreFdKHR real_get_semaphore_fd;

/* Memory fds get this process as owner, semaphore fds its process group
 * (a negative owner), so that a count can say which is which. */
static void mark(int fd, bool semaphore)
{
    if (fcntl(fd, F_SETOWN, semaphore ? -getpgrp() : getpid()) != 0) {
        perror("fd-watch: fcntl(F_SETOWN) on an exported fd");
        abort(); /* every later count would be wrong */
    }
    unsigned n = atomic_fetch_add(&exported, 1) + 1;
    if (fd >= 0 && fd < SERIAL_FDS)
        atomic_store(&serial_of_fd[fd], n);
}

static VKAPI_ATTR VkResult VKAPI_CALL watch_get_memory_fd(VkDevice device, const VkMemoryGetFdInfoKHR *info, int *fd)
{
    VkResult r = real_get_memory_fd(device, info, fd);
    if (r == VK_SUCCESS)
        mark(*fd, false);
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL watch_get_semaphore_fd(VkDevice device, const VkSemaphoreGetFdInfoKHR *info,
                                                            int *fd)
{
    VkResult r = real_get_semaphore_fd(device, info, fd);
    if (r == VK_SUCCESS)
        mark(*fd, true);
    return r;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL watch_get_device_proc_addr(VkDevice device, const char *name)
{
    PFN_vkVoidFunction f = real_get_device_proc_addr(device, name);
    if (f && strcmp(name, "vkGetMemoryFdKHR") == 0) {
        real_get_memory_fd = (PFN_vkGetMemoryFdKHR)f;
        return (PFN_vkVoidFunction)watch_get_memory_fd;
    }
    if (f && strcmp(name, "vkGetSemaphoreFdKHR") == 0) {
        real_get_semaphore_fd = (PFN_vkGetSemaphoreFdKHR)f;
        return (PFN_vkVoidFunction)watch_get_semaphore_fd;
    }
    return f;
}

PFN_vkVoidFunction VKAPI_CALL fd_watch_get_instance_proc_addr(VkInstance instance, const char *name)
{
    PFN_vkVoidFunction f = vkGetInstanceProcAddr(instance, name);
    if (f && strcmp(name, "vkGetDeviceProcAddr") == 0) {
        real_get_device_proc_addr = (PFN_vkGetDeviceProcAddr)f;
        return (PFN_vkVoidFunction)watch_get_device_proc_addr;
    }
    return f;
}

unsigned fd_watch_exported(void)
{
    return atomic_load(&exported);
}

unsigned fd_watch_open(char *list, size_t len)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    unsigned open = 0;
    size_t at = 0;
    pid_t me = getpid(), group = -getpgrp();

    if (len)
        list[0] = '\0';
    while (d && (e = readdir(d))) {
        int fd = atoi(e->d_name);
        int owner;
        if (e->d_name[0] == '.' || fd == dirfd(d))
            continue;
        owner = fcntl(fd, F_GETOWN);
        if (owner != me && owner != group)
            continue;
        open++;
        if (at + 80 < len) {
            char path[64], target[256] = "?";
            ssize_t n;
            snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
            if ((n = readlink(path, target, sizeof target - 1)) > 0)
                target[n] = '\0';
            unsigned serial = fd < SERIAL_FDS ? atomic_load(&serial_of_fd[fd]) : 0u;
            at += (size_t)snprintf(list + at, len - at, "%s%s fd %d (#%u) -> %s", at ? ", " : "",
                                   owner == me ? "memory" : "semaphore", fd, serial, target);
        }
    }
    if (d)
        closedir(d);
    if (!open && len)
        snprintf(list, len, "none");
    return open;
}

int fd_watch_others(const char *step)
{
    char list[1024];
    unsigned exports = fd_watch_open(list, sizeof list);
    int others = fd_count() - (int)exports;

    tap_diag("fds after %s: %d others, %u the bridge exported of %u so far (%s)", step, others, exports,
             fd_watch_exported(), list);
    return others;
}

void fd_watch_check_passes(const int *others, int passes, const char *what)
{
    char list[2048];
    unsigned open = fd_watch_open(list, sizeof list);

    for (int waited = 0; open && waited < 200; waited++) {
        usleep(10000);
        open = fd_watch_open(list, sizeof list);
    }
    tap_ok(open == 0, "%s: every fd the bridge exported (%u) is closed once its imports and semaphores went (open: %s)",
           what, fd_watch_exported(), list);
    tap_ok(passes >= 2 && others[passes - 1] == others[passes - 2],
           "%s: the other fds level off: %d after pass %d, %d after pass %d", what,
           passes >= 2 ? others[passes - 2] : -1, passes - 1, passes >= 2 ? others[passes - 1] : -1, passes);
}
