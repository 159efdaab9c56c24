/* SPDX-License-Identifier: MIT */
/* clmem-bench: the semaphores of the semaphore handoff: the library's imports, and the raw variant's
 * in the same mode. */
#include "bench.h"

void sem_owner_release(void *user)
{
    struct sem_owner *o = user;
    vkDestroySemaphore(o->device, o->semaphore, NULL);
    free(o);
}

/* A binary semaphore, exportable as opaque fd when asked. */
VkSemaphore semaphore_create(struct bench *b, bool exportable)
{
    VkExportSemaphoreCreateInfo export_info = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                               .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                .pNext = exportable ? &export_info : NULL};
    VkSemaphore s;
    check_vk(vkCreateSemaphore(b->vk.device, &ci, NULL, &s), "vkCreateSemaphore");
    return s;
}

/* The library's import of one semaphore in `mode`; its anchor destroys it. */
clmem_status lib_semaphore_import(struct bench *b, VkSemaphore s, clmem_bridge_semaphore_mode mode,
                                  clmem_bridge_semaphore **out)
{
    struct sem_owner *o = malloc(sizeof *o);
    clmem_keepalive *ka;
    clmem_status st;

    if (!o)
        die("out of memory");
    o->device = b->vk.device;
    o->semaphore = s;
    ka = clmem_keepalive_new(sem_owner_release, o);
    if (!ka)
        die("clmem_keepalive_new failed");
    st = clmem_bridge_semaphore_import(b->bridge, b->vk.queue, s, mode, ka, out);
    clmem_keepalive_unref(ka); /* on success the import holds it; on failure this destroys the semaphore */
    return st;
}

/* Both variants' semaphores, in one mode: opaque fd (device ordering) when
 * the bridge says it works, else host ordering; the raw variant mirrors it,
 * so that the two do the same work. (Not BEST: where only sync fd worked it
 * could choose that, a one-wait-per-import mode the raw loop does not
 * mirror.) Failure leaves the semaphore handoff out. */
void semaphores_setup(struct bench *b)
{
    struct sem_set *lib = &b->sem[V_CLMEM], *raw = &b->sem[V_RAW];
    char why_not_fd[sizeof b->sem_note] = "";
    clmem_status st;

    st = clmem_bridge_check_semaphore(b->bridge, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD);
    if (st == CLMEM_OK) {
        b->sem_mode = CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD;
        b->sem_exportable = true; /* as opaque fd, which the bridge found Vulkan can export */
    } else {
        snprintf(why_not_fd, sizeof why_not_fd, "%s", clmem_error_message());
        b->sem_mode = CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED;
        b->sem_exportable = false;
    }
    lib->ready = semaphore_create(b, b->sem_exportable);
    lib->done = semaphore_create(b, b->sem_exportable);
    /* A failed import's anchor destroys that semaphore; the other one is
     * undone here. */
    st = lib_semaphore_import(b, lib->ready, b->sem_mode, &lib->lib_ready);
    if (st != CLMEM_OK) {
        snprintf(b->sem_note, sizeof b->sem_note, "clmem_bridge_semaphore_import failed: %s", clmem_error_message());
        vkDestroySemaphore(b->vk.device, lib->done, NULL);
    } else if ((st = lib_semaphore_import(b, lib->done, b->sem_mode, &lib->lib_done)) != CLMEM_OK) {
        snprintf(b->sem_note, sizeof b->sem_note, "clmem_bridge_semaphore_import failed: %s", clmem_error_message());
        clmem_bridge_semaphore_unref(lib->lib_ready);
    }
    if (st != CLMEM_OK) {
        memset(lib, 0, sizeof *lib);
        fail(b, "(e) left out: %s", b->sem_note);
        return;
    }
    if (clmem_bridge_semaphore_get_mode(lib->lib_ready) != b->sem_mode)
        die("clmem_bridge_semaphore_get_mode says mode %d, not the %d imported with",
            (int)clmem_bridge_semaphore_get_mode(lib->lib_ready), (int)b->sem_mode);
    raw->ready = semaphore_create(b, b->sem_exportable);
    raw->done = semaphore_create(b, b->sem_exportable);
    if (b->sem_mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED) {
        VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        check_vk(vkCreateFence(b->vk.device, &fi, NULL, &raw->fence), "vkCreateFence");
        snprintf(b->sem_note, sizeof b->sem_note,
                 "host-ordered (the host waits for each signal with a fence; raw mirrors it); opaque fd: %s",
                 why_not_fd);
    } else if (b->sem_mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD) {
        if (!b->get_semaphore_fd || !b->ext.create_semaphore || !b->ext.wait_semaphores ||
            !b->ext.signal_semaphores || !b->ext.release_semaphore)
            die("the library imported opaque-fd semaphores, but the raw entry points are missing");
        raw->cl_ready = raw_semaphore_import(b, raw->ready);
        raw->cl_done = raw_semaphore_import(b, raw->done);
        snprintf(b->sem_note, sizeof b->sem_note,
                 "opaque-fd (device ordering: clEnqueueWait/SignalSemaphoresKHR + clFlush); raw mirrors it");
    } else {
        snprintf(b->sem_note, sizeof b->sem_note, "mode %d, which this bench cannot mirror raw", (int)b->sem_mode);
        fail(b, "(e) left out: %s", b->sem_note);
        return;
    }
    b->sem_ok = true;
}

void semaphores_teardown(struct bench *b)
{
    struct sem_set *lib = &b->sem[V_CLMEM], *raw = &b->sem[V_RAW];
    vkDeviceWaitIdle(b->vk.device);
    clFinish(b->queue);
    clmem_bridge_semaphore_unref(lib->lib_ready); /* their anchors destroy the VkSemaphores */
    clmem_bridge_semaphore_unref(lib->lib_done);
    if (raw->cl_ready)
        b->ext.release_semaphore(raw->cl_ready);
    if (raw->cl_done)
        b->ext.release_semaphore(raw->cl_done);
    if (raw->fence)
        vkDestroyFence(b->vk.device, raw->fence, NULL);
    if (raw->ready)
        vkDestroySemaphore(b->vk.device, raw->ready, NULL);
    if (raw->done)
        vkDestroySemaphore(b->vk.device, raw->done, NULL);
    memset(b->sem, 0, sizeof b->sem);
}
