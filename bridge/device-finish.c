/* SPDX-License-Identifier: MIT */
/* clmem_bridge_device_finish: what an application calls before
 * vkDestroyDevice, keyed by the VkDevice rather than by a bridge, so that
 * it works after the application dropped every bridge (the last unref of a
 * bridge returns at once; the bridge lives on while the teardowns of its
 * imports are pending, each holding a reference, and those teardowns call
 * Vulkan: the host-mapped unmap, the keepalives' callbacks).
 *
 * The process keeps a list of its bridges. The call takes a reference on
 * each bridge of the device and finishes it (clmem_bridge_finish: wait for
 * its teardowns, doing their work where the driver's callbacks have not),
 * then drops that reference: for a bridge the application no longer holds,
 * that is the last one, and the bridge goes on the calling thread. A
 * bridge whose last reference another thread is dropping at that moment
 * is waited for until it is off the list. In the manner of
 * vkDeviceWaitIdle, and of VMA's synchronous vmaDestroyAllocator. */
#include "config.h"
#include "bridge.h"
#include "deadline.h"
#include "export.h"
#include "fail.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* All guarded by lock; `gone` is broadcast when a bridge leaves the list. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gone = PTHREAD_COND_INITIALIZER;
static clmem_bridge *bridges; /* through next_of_process */

void clmem__device_bridges_add(clmem_bridge *b)
{
    pthread_mutex_lock(&lock);
    b->next_of_process = bridges;
    bridges = b;
    pthread_mutex_unlock(&lock);
}

void clmem__device_bridges_remove(clmem_bridge *b)
{
    clmem_bridge **p;

    pthread_mutex_lock(&lock);
    for (p = &bridges; *p && *p != b; p = &(*p)->next_of_process)
        ;
    if (*p)
        *p = b->next_of_process;
    pthread_cond_broadcast(&gone);
    pthread_mutex_unlock(&lock);
}

/* A reference on every listed bridge of `device` that still has one:
 * *count_out of them, in a new array the caller frees (NULL when there are
 * none). False when the array cannot be allocated. */
static bool hold_bridges_of(VkDevice device, clmem_bridge ***held_out, unsigned *count_out)
{
    clmem_bridge **held = NULL;
    unsigned listed = 0, n = 0;

    pthread_mutex_lock(&lock);
    for (clmem_bridge *b = bridges; b; b = b->next_of_process)
        listed += b->device == device;
    if (listed && !(held = malloc(listed * sizeof *held))) {
        pthread_mutex_unlock(&lock);
        return false;
    }
    for (clmem_bridge *b = bridges; held && b; b = b->next_of_process)
        if (b->device == device && refcount_get_unless_zero(&b->refs))
            held[n++] = b;
    pthread_mutex_unlock(&lock);
    if (!n) {
        free(held);
        held = NULL;
    }
    *held_out = held;
    *count_out = n;
    return true;
}

/* Until no bridge of `device` is listed whose last reference is gone (one
 * another thread is destroying), or the monotonic deadline. */
static bool wait_destroyed(VkDevice device, uint64_t deadline)
{
    bool dying;

    pthread_mutex_lock(&lock);
    for (;;) {
        uint64_t left = time_left(deadline);
        struct timespec until;

        dying = false;
        for (clmem_bridge *b = bridges; b && !dying; b = b->next_of_process)
            dying = b->device == device && atomic_load(&b->refs) == 0;
        if (!dying || !left)
            break;
        /* `gone` uses CLOCK_REALTIME: wait in slices of at most 100 ms, so
         * that a clock step cannot stretch the wait. */
        until = realtime_in(left < 100000000u ? left : 100000000u);
        pthread_cond_timedwait(&gone, &lock, &until);
    }
    pthread_mutex_unlock(&lock);
    return !dying;
}

static clmem_status device_finish(VkDevice device, uint64_t timeout_ns)
{
    uint64_t deadline = deadline_after(timeout_ns);
    clmem_status s = CLMEM_OK;
    clmem_bridge **held;
    unsigned count, i;

    if (!device)
        return fail_null("device");
    if (!hold_bridges_of(device, &held, &count))
        return clmem__fail(CLMEM_ERR_NO_MEMORY,
                           "Allocating the list of the device's bridges failed.");
    for (i = 0; i < count && s == CLMEM_OK; i++) {
        s = clmem__bridge_finish(held[i], time_left(deadline));
        if (s != CLMEM_OK) {
            /* Say which call it was, and keep the bridge's reason. */
            char why[1024];
            snprintf(why, sizeof why, "%s", clmem_error_message());
            s = clmem__fail(s, "A bridge of VkDevice %p is not done with it: %s%s",
                            (void *)device, why,
                            s == CLMEM_ERR_IN_USE ? " Drop them before vkDestroyDevice." : "");
        }
    }
    /* The references taken above: for a bridge the application dropped,
     * this is the last one, and the bridge goes here, on this thread. */
    for (i = 0; i < count; i++)
        clmem_bridge_unref(held[i]);
    free(held);
    if (s != CLMEM_OK)
        return s;
    /* A bridge whose last reference another thread is dropping makes no
     * Vulkan call any more, but CLMEM_OK promises it is gone. */
    if (!wait_destroyed(device, deadline))
        return clmem__fail(CLMEM_ERR_TIMEOUT,
                           "A bridge of VkDevice %p was still being destroyed on another thread after %s.",
                           (void *)device, duration_text(timeout_ns).s);
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_device_finish(VkDevice device, uint64_t timeout_ns)
{
    return clmem__error_in(__func__, device_finish(device, timeout_ns));
}
