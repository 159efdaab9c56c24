/* SPDX-License-Identifier: MIT */
/* Finishing bridges: clmem_bridge_finish waits for one bridge's import
 * teardowns, polling them where the driver's callbacks come late (import-
 * teardown.h). clmem_bridge_device_finish, what an application calls before
 * vkDestroyDevice, is keyed by the VkDevice rather than by a bridge, so that
 * it works after the application dropped every bridge (the last unref of a
 * bridge returns at once; the bridge lives on while the teardowns of its
 * imports are pending, each holding a reference, and those teardowns call
 * Vulkan: the host-mapped unmap, the keepalives' callbacks).
 *
 * The process keeps a list of its bridges (bridge.c). The call takes a reference on
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
#include "import-teardown.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

clmem_status clmem__bridge_finish(clmem_bridge *b, uint64_t timeout_ns)
{
    uint64_t deadline;
    unsigned live, sems, pending;

    clmem_status s = CLMEM_OK;

    if (!b)
        return fail_null("bridge");
    BRIDGE_LIVE(b, "clmem_bridge_finish");
    deadline = deadline_after(timeout_ns);
    pthread_mutex_lock(&b->lock);
    live = b->live_imports;
    sems = b->live_semaphores;
    pthread_mutex_unlock(&b->lock);
    if (live || sems)
        return clmem__fail(CLMEM_ERR_IN_USE,
                           "%u import%s still %s handles and %u semaphore%s still alive; nothing was released.", live,
                           live == 1 ? "" : "s", live == 1 ? "has" : "have", sems, sems == 1 ? " is" : "s are");
    clmem_bridge_ref(b); /* see clmem__bridge_import_gone */
    for (;;) {
        uint64_t left;
        clmem__import_poll_dying(b);
        pthread_mutex_lock(&b->lock);
        pending = b->tearing_down;
        left = time_left(deadline);
        if (pending && left) {
            /* Sleep until a teardown finishes, or 1 ms, then poll again. */
            struct timespec until = realtime_in(left < 1000000u ? left : 1000000u);
            pthread_cond_timedwait(&b->changed, &b->lock, &until);
            pending = b->tearing_down;
        }
        pthread_mutex_unlock(&b->lock);
        if (!pending)
            break;
        if (!time_left(deadline)) {
            s = clmem__fail(CLMEM_ERR_TIMEOUT,
                            "%u dropped import%s still wait%s for device work after %s; their Vulkan "
                            "keepalives are held.",
                            pending, pending == 1 ? "" : "s", pending == 1 ? "s" : "",
                            clmem__duration(timeout_ns).text);
            break;
        }
    }
    clmem_bridge_unref(b);
    return s;
}

CLMEM_EXPORT clmem_status clmem_bridge_finish(clmem_bridge *b, uint64_t timeout_ns)
{
    return clmem__error_in(__func__, clmem__bridge_finish(b, timeout_ns));
}

static clmem_status device_finish(VkDevice device, uint64_t timeout_ns)
{
    uint64_t deadline = deadline_after(timeout_ns);
    clmem_status s = CLMEM_OK;
    clmem_bridge **held;
    unsigned count, i;

    if (!device)
        return fail_null("device");
    if (!clmem__bridges_hold(device, &held, &count))
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the list of the device's bridges failed.");
    for (i = 0; i < count && s == CLMEM_OK; i++) {
        s = clmem__bridge_finish(held[i], time_left(deadline));
        if (s != CLMEM_OK) {
            /* Say which call it was, and keep the bridge's reason. */
            char why[1024];
            snprintf(why, sizeof why, "%s", clmem_error_message());
            s = clmem__fail(s, "A bridge of VkDevice %p is not done with it: %s%s", (void *)device, why,
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
    if (!clmem__bridges_wait_destroyed(device, deadline))
        return clmem__fail(CLMEM_ERR_TIMEOUT,
                           "A bridge of VkDevice %p was still being destroyed on another thread after %s.",
                           (void *)device, clmem__duration(timeout_ns).text);
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_device_finish(VkDevice device, uint64_t timeout_ns)
{
    return clmem__error_in(__func__, device_finish(device, timeout_ns));
}
