/* SPDX-License-Identifier: MIT */
/* What the consumer tests (t/bridge/consumer-clblast.c, t/bridge/consumer-clfft.c) share:
 * Vulkan writing and reading a buffer through host-visible staging, the
 * shared-best path choice, a gate (a user event another thread opens
 * later) and a probe anchor that records, when the import lets go, whether
 * the consumer's own event had completed. */
#ifndef CLMEM_CONSUMER_FIXTURE_H
#define CLMEM_CONSUMER_FIXTURE_H
#include "bridge-fixture.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* Vulkan copies `size` bytes of host data into `dst` (through a staging
 * buffer and vkCmdCopyBuffer), or `dst` into host memory. Bail out on
 * failure. */
void vk_write(clmem_bridge *b, struct vkctx *vk, VkBuffer dst, const void *data, VkDeviceSize size);
void vk_read(clmem_bridge *b, struct vkctx *vk, VkBuffer src, void *data, VkDeviceSize size);

/* A user event that a thread of its own completes once gate_open_later()
 * asks it to, or, so that a consumer that waits inside its enqueue call
 * cannot hang the test, after `timeout_ms` whatever happens. */
struct gate {
    cl_event event;
    pthread_t thread;
    unsigned timeout_ms;
    atomic_bool asked;  /* gate_open_later() was called */
    atomic_bool opened; /* the thread is completing the event (set just before) */
    pthread_mutex_t lock;
    pthread_cond_t cond;
};
void gate_start(struct gate *g, cl_context context, unsigned timeout_ms);
void gate_open_later(struct gate *g);
void gate_join(struct gate *g); /* waits for the thread; releases the event */

/* An anchor handed to an import as (part of) its Vulkan keepalive: when the
 * import lets go, its release records whether the gate had opened and the
 * status of the consumer's event (`watch`, set once the consumer returned
 * it). Only non-blocking queries there: it may run on a driver thread. */
struct probe {
    const char *name;
    struct gate *gate;
    _Atomic(cl_event) watch;
    atomic_int released;
    atomic_int watch_status; /* CL_EVENT_COMMAND_EXECUTION_STATUS at release; 99 while unset */
    atomic_bool gate_was_open;
};
clmem_keepalive *probe_new(struct probe *p, const char *name, struct gate *g);

/* Wait (polling) until every probe of `probes` released, up to the tests'
 * 10 s bound (120 s instrumented). */
bool probes_wait(struct probe *const *probes, int count);

/* Memory for the path the bridge shares best: opaque fd where it offers it
 * (device-local, exportable), else host-mapped. */
clmem_bridge_path consumer_path(const clmem_bridge *b);

/* Round v up to a multiple of m. */
static inline uint32_t round_up_u32(uint32_t v, uint32_t m)
{
    return (v + m - 1) / m * m;
}

/* Is the OpenCL device a GPU (sizes are scaled down elsewhere)? */
bool cl_device_is_gpu(cl_device_id device);
#endif
