/* SPDX-License-Identifier: MIT */
/* Which of the fds the bridge exported are still open.
 *
 * Counting /proc/self/fd cannot tell the bridge's fds from a driver's own:
 * on the H200 both are /dev/nvidiactl, and NVIDIA's own count grows as
 * rings of exported memory and semaphores come and go, with no library in
 * the way (docs/probes/ring-fd-probe.c). So a test hands the bridge, as
 * clmem_bridge_info.get_instance_proc_addr, entry points that mark every
 * fd vkGetMemoryFdKHR and vkGetSemaphoreFdKHR give it: the open file
 * description gets this process (memory) or its process group (semaphores)
 * as its owner (F_SETOWN, which does nothing without O_ASYNC, and which no
 * driver's own fd has). Whoever holds that
 * description later (the driver, after an import took the fd; or nobody,
 * once it is closed), and whatever number it has by then, it is found
 * again by its owner. */
#ifndef CLMEM_FD_WATCH_H
#define CLMEM_FD_WATCH_H
#include <stddef.h>
#include <vulkan/vulkan.h>

/* The entry points to pass as clmem_bridge_info.get_instance_proc_addr:
 * the loader's, with what vkGetMemoryFdKHR and vkGetSemaphoreFdKHR return
 * marked. */
PFN_vkVoidFunction VKAPI_CALL fd_watch_get_instance_proc_addr(VkInstance instance, const char *name);

/* How many fds were exported through those entry points so far. */
unsigned fd_watch_exported(void);

/* How many fds open now are exported ones, named in `list` ("memory fd
 * 57 (#13) -> /dev/nvidiactl, ...", or "none"; #13: the 13th export, the
 * last one that got that fd number), at most len bytes. */
unsigned fd_watch_open(char *list, size_t len);

/* The open fds that are not the bridge's exports: the drivers', the
 * test's. Printed as a TAP comment, with the exports open, after `step`. */
int fd_watch_others(const char *step);

/* After passes of the same work, others[i] = fd_watch_others() after pass
 * i: two TAP points. Every fd the bridge exported is closed (given 2 s for
 * a driver that closes late), and the other fds level off: the last pass
 * left as many as the one before it (a driver's cache grows to a
 * high-water mark in the first pass: docs/probes/ring-fd-probe.c). */
void fd_watch_check_passes(const int *others, int passes, const char *what);
#endif
