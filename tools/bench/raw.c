/* SPDX-License-Identifier: MIT */
/* clmem-bench: the raw-call variant, what a program that calls the
 * extensions itself does: exactly the driver calls bridge/import.c,
 * bridge/handoff.c, bridge/semaphore.c and opencl/clext.h make, and no
 * call into the library (it names the library's types and constants only),
 * so that clmem - raw is the library's own cost. */
#include "bench.h"

/* The timed part of a raw import: exactly the calls bridge/import.c makes
 * to the drivers, nothing else. */
void raw_import(struct bench *b, const clmem_bridge_vk_memory *m, struct raw_import *r)
{
    cl_int err = CL_SUCCESS;

    r->size = (size_t)m->allocation_size;
    r->device = m->device;
    r->memory = m->memory;
    r->vk_base = NULL;
    r->cl_map = NULL;
    r->acquired = false;
    if (b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD) {
        VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                     .memory = m->memory,
                                     .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
        int fd = -1;
        check_vk(b->get_memory_fd(m->device, &info, &fd), "vkGetMemoryFdKHR");
        cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR,
                                     (cl_mem_properties)fd,
                                     CLMEM_CL_MEM_DEVICE_HANDLE_LIST,
                                     (cl_mem_properties)(uintptr_t)b->device,
                                     CLMEM_CL_DEVICE_HANDLE_LIST_END,
                                     0};
        r->mem = clCreateBufferWithProperties(b->context, props, CL_MEM_READ_WRITE, r->size, NULL, &err);
        if (err != CL_SUCCESS || !r->mem) {
            close(fd); /* The driver takes the fd only on success */
            check_cl(err != CL_SUCCESS ? err : CL_INVALID_MEM_OBJECT, "clCreateBufferWithProperties(opaque fd)");
        }
        return;
    }
    check_vk(vkMapMemory(m->device, m->memory, 0, VK_WHOLE_SIZE, 0, &r->vk_base), "vkMapMemory");
    r->mem = clCreateBuffer(b->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, r->size, r->vk_base, &err);
    check_cl(err, "clCreateBuffer(CL_MEM_USE_HOST_PTR)");
    r->cl_map = clEnqueueMapBuffer(b->queue, r->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, r->size, 0, NULL, NULL,
                                   &err);
    check_cl(err, "clEnqueueMapBuffer(import)");
}

static void CL_CALLBACK raw_destroyed(cl_mem mem, void *user)
{
    (void)mem;
    atomic_store((atomic_int *)user, 1);
}

/* Untimed: learn when OpenCL destroys the cl_mem, as the bridge does. */
void raw_watch(struct raw_import *r)
{
    atomic_store(&r->destroyed, 0);
    check_cl(clSetMemObjectDestructorCallback(r->mem, raw_destroyed, &r->destroyed),
             "clSetMemObjectDestructorCallback");
}

void raw_acquire(struct bench *b, struct raw_import *r)
{
    cl_int err;
    if (b->path == CLMEM_BRIDGE_PATH_HOST_MAPPED) {
        err = clEnqueueUnmapMemObject(b->queue, r->mem, r->cl_map, 0, NULL, NULL);
        r->cl_map = NULL;
    } else {
        err = b->ext.acquire_external(b->queue, 1, &r->mem, 0, NULL, NULL);
    }
    check_cl(err, "raw acquire");
    r->acquired = true;
}

void raw_release(struct bench *b, struct raw_import *r)
{
    cl_int err = CL_SUCCESS;
    if (b->path == CLMEM_BRIDGE_PATH_HOST_MAPPED)
        r->cl_map = clEnqueueMapBuffer(b->queue, r->mem, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, r->size, 0, NULL,
                                       NULL, &err);
    else
        err = b->ext.release_external(b->queue, 1, &r->mem, 0, NULL, NULL);
    check_cl(err, "raw release");
    r->acquired = false;
}

/* Untimed, and in the bridge's order (clmem__import_anchor_release): hand
 * the memory back, undo OpenCL's map, finish, release, and only once OpenCL
 * destroyed the cl_mem let Vulkan's mapping go. */
void raw_teardown(struct bench *b, struct raw_import *r)
{
    if (r->acquired)
        raw_release(b, r);
    if (r->cl_map)
        check_cl(clEnqueueUnmapMemObject(b->queue, r->mem, r->cl_map, 0, NULL, NULL), "clEnqueueUnmapMemObject");
    r->cl_map = NULL;
    check_cl(clFinish(b->queue), "clFinish");
    check_cl(clReleaseMemObject(r->mem), "clReleaseMemObject");
    if (!wait_until_set(&r->destroyed, teardown_deadline()))
        die("OpenCL did not destroy a raw import within %d s", DESTROY_WAIT_S);
    if (r->vk_base)
        vkUnmapMemory(r->device, r->memory);
    r->vk_base = NULL;
    r->mem = NULL;
}

/* OpenCL's import of a binary semaphore's opaque fd, as bridge/semaphore.c
 * makes it: the driver takes the fd on success; on failure it is closed
 * here, and the bench dies. */
cl_semaphore_khr raw_semaphore_from_fd(struct bench *b, int fd)
{
    cl_int err = CL_SUCCESS;
    cl_semaphore_khr cs;
    cl_semaphore_properties_khr props[] = {CL_SEMAPHORE_TYPE_KHR,
                                           CL_SEMAPHORE_TYPE_BINARY_KHR,
                                           CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR,
                                           (cl_semaphore_properties_khr)fd,
                                           CLMEM_CL_SEMAPHORE_DEVICE_HANDLE_LIST,
                                           (cl_semaphore_properties_khr)(uintptr_t)b->device,
                                           CLMEM_CL_DEVICE_HANDLE_LIST_END,
                                           0};
    cs = b->ext.create_semaphore(b->context, props, &err);
    if (err != CL_SUCCESS || !cs) {
        close(fd); /* The driver takes (closes) the fd only on success */
        check_cl(err != CL_SUCCESS ? err : CL_INVALID_VALUE, "clCreateSemaphoreWithPropertiesKHR");
    }
    return cs;
}

/* The raw import of one semaphore of the bench's device, as
 * bridge/semaphore.c makes it. */
cl_semaphore_khr raw_semaphore_import(struct bench *b, VkSemaphore s)
{
    VkSemaphoreGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
                                    .semaphore = s,
                                    .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;

    check_vk(b->get_semaphore_fd(b->vk.device, &info, &fd), "vkGetSemaphoreFdKHR");
    return raw_semaphore_from_fd(b, fd);
}

/* bridge/semaphore.c's wait and signal, without the library. */
void raw_semaphore_wait(struct bench *b, struct sem_set *set)
{
    if (b->sem_mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED) {
        VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .waitSemaphoreCount = 1,
                           .pWaitSemaphores = &set->ready,
                           .pWaitDstStageMask = &stage};
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, set->fence), "vkQueueSubmit(raw host-ordered wait)");
        check_vk(vkWaitForFences(b->vk.device, 1, &set->fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        check_vk(vkResetFences(b->vk.device, 1, &set->fence), "vkResetFences");
        return;
    }
    check_cl(b->ext.wait_semaphores(b->queue, 1, &set->cl_ready, NULL, 0, NULL, NULL), "clEnqueueWaitSemaphoresKHR");
}

void raw_semaphore_signal(struct bench *b, struct sem_set *set)
{
    if (b->sem_mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &set->done};
        check_cl(clFinish(b->queue), "clFinish(raw host-ordered signal)");
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(raw host-ordered signal)");
        return;
    }
    check_cl(b->ext.signal_semaphores(b->queue, 1, &set->cl_done, NULL, 0, NULL, NULL), "clEnqueueSignalSemaphoresKHR");
    /* The library flushes so the signal reaches the device now (clmem-bridge.h). */
    check_cl(clFlush(b->queue), "clFlush");
}

/* Raw entry points, the way opencl/clext.h resolves them. */
void raw_resolve(struct bench *b)
{
    b->ext.acquire_external = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(
        b->platform, "clEnqueueAcquireExternalMemObjectsKHR");
    b->ext.release_external = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(
        b->platform, "clEnqueueReleaseExternalMemObjectsKHR");
    b->ext.create_semaphore = (clCreateSemaphoreWithPropertiesKHR_fn)clGetExtensionFunctionAddressForPlatform(
        b->platform, "clCreateSemaphoreWithPropertiesKHR");
    b->ext.wait_semaphores = (clEnqueueWaitSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(
        b->platform, "clEnqueueWaitSemaphoresKHR");
    b->ext.signal_semaphores = (clEnqueueSignalSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(
        b->platform, "clEnqueueSignalSemaphoresKHR");
    b->ext.release_semaphore =
        (clReleaseSemaphoreKHR_fn)clGetExtensionFunctionAddressForPlatform(b->platform, "clReleaseSemaphoreKHR");
    b->get_memory_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(b->vk.device, "vkGetMemoryFdKHR");
    b->get_semaphore_fd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(b->vk.device, "vkGetSemaphoreFdKHR");
    if (b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD &&
        (!b->ext.acquire_external || !b->ext.release_external || !b->get_memory_fd))
        die("the opaque-fd path is supported, but clEnqueueAcquire/ReleaseExternalMemObjectsKHR or "
            "vkGetMemoryFdKHR cannot be resolved");
}
