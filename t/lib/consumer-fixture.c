/* SPDX-License-Identifier: MIT */
#include "consumer-fixture.h"
#include "tap.h"

#include <errno.h>
#include <string.h>
#include <time.h>

static void *vk_staging(clmem_bridge *b, struct vkctx *vk, struct vk_owned *staging, clmem_keepalive **ka,
                        VkDeviceSize size)
{
    void *p = NULL;
    *ka = vk_owned_new(staging, b, vk, size,
                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
    if (vkMapMemory(vk->device, staging->memory.memory, 0, VK_WHOLE_SIZE, 0, &p) != VK_SUCCESS)
        tap_bail("vkMapMemory of a %llu-byte staging buffer failed", (unsigned long long)size);
    return p;
}

void vk_write(clmem_bridge *b, struct vkctx *vk, VkBuffer dst, const void *data, VkDeviceSize size)
{
    struct vk_owned staging;
    clmem_keepalive *ka;
    void *p = vk_staging(b, vk, &staging, &ka, size);
    VkResult r;

    memcpy(p, data, size);
    vkUnmapMemory(vk->device, staging.memory.memory);
    if ((r = vkctx_copy(vk, staging.buffer, dst, size)) != VK_SUCCESS)
        tap_bail("vkCmdCopyBuffer of %llu bytes failed: %d", (unsigned long long)size, r);
    clmem_keepalive_unref(ka); /* never imported: frees the staging buffer */
}

void vk_read(clmem_bridge *b, struct vkctx *vk, VkBuffer src, void *data, VkDeviceSize size)
{
    struct vk_owned staging;
    clmem_keepalive *ka;
    void *p = vk_staging(b, vk, &staging, &ka, size);
    VkResult r;

    if ((r = vkctx_copy(vk, src, staging.buffer, size)) != VK_SUCCESS)
        tap_bail("vkCmdCopyBuffer of %llu bytes failed: %d", (unsigned long long)size, r);
    memcpy(data, p, size);
    vkUnmapMemory(vk->device, staging.memory.memory);
    clmem_keepalive_unref(ka);
}

static void *gate_thread(void *arg)
{
    struct gate *g = arg;
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += g->timeout_ms / 1000;
    until.tv_nsec += (long)(g->timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&g->lock);
    while (!atomic_load(&g->asked))
        if (pthread_cond_timedwait(&g->cond, &g->lock, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&g->lock);
    atomic_store(&g->opened, true);
    clSetUserEventStatus(g->event, CL_COMPLETE);
    return NULL;
}

void gate_start(struct gate *g, cl_context context, unsigned timeout_ms)
{
    cl_int err;

    memset(g, 0, sizeof *g);
    g->timeout_ms = timeout_ms;
    atomic_init(&g->asked, false);
    atomic_init(&g->opened, false);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->event = clCreateUserEvent(context, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateUserEvent failed: %d", err);
    if (pthread_create(&g->thread, NULL, gate_thread, g) != 0)
        tap_bail("pthread_create failed");
}

void gate_open_later(struct gate *g)
{
    pthread_mutex_lock(&g->lock);
    atomic_store(&g->asked, true);
    pthread_cond_signal(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

void gate_join(struct gate *g)
{
    pthread_join(g->thread, NULL);
    clReleaseEvent(g->event);
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->lock);
}

static void probe_release(void *user)
{
    struct probe *p = user;
    cl_event ev = atomic_load(&p->watch);
    cl_int status = 99;

    if (ev && clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) != CL_SUCCESS)
        status = 98;
    atomic_store(&p->watch_status, status);
    atomic_store(&p->gate_was_open, p->gate ? atomic_load(&p->gate->opened) : true);
    atomic_fetch_add(&p->released, 1);
}

clmem_keepalive *probe_new(struct probe *p, const char *name, struct gate *g)
{
    clmem_keepalive *ka;

    p->name = name;
    p->gate = g;
    atomic_init(&p->watch, NULL);
    atomic_init(&p->released, 0);
    atomic_init(&p->watch_status, 99);
    atomic_init(&p->gate_was_open, false);
    if (!(ka = clmem_keepalive_new(probe_release, p)))
        tap_bail("clmem_keepalive_new failed");
    return ka;
}

bool probes_wait(struct probe *const *probes, int count)
{
    long long until = tap_now_ns() + (long long)(tap_time_bound_ms(10000.0, 120000.0) * 1e6);
    for (;;) {
        int done = 0;
        for (int i = 0; i < count; i++)
            done += atomic_load(&probes[i]->released) != 0;
        if (done == count)
            return true;
        if (tap_now_ns() > until)
            return false;
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
}

clmem_bridge_path consumer_path(const clmem_bridge *b)
{
    return clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_OPAQUE_FD) == CLMEM_OK ? CLMEM_BRIDGE_PATH_OPAQUE_FD
                                                                              : CLMEM_BRIDGE_PATH_HOST_MAPPED;
}

bool cl_device_is_gpu(cl_device_id device)
{
    cl_device_type type = 0;
    clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    return (type & CL_DEVICE_TYPE_GPU) != 0;
}
