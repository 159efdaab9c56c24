/* SPDX-License-Identifier: MIT */
/* Fixture for the bridge tests: a Vulkan context (tools/vkctx/vkctx.h), a
 * Vulkan anchor that really frees its buffer and memory and records when,
 * an event-order log, and the round trip every path is tested with.
 *
 * How t/ is laid out (libevdev's model): one test program per area of the
 * library, t/<room>/<area>.c (t/bridge/bridge-image-errors.c, t/bridge/bridge-ring.c, ...),
 * each a main() that calls its area's checks in turn, and shared fixtures
 * for everything two programs need: this file (a Vulkan context, OpenCL
 * on the paired device, a bridge, a test's start and end, Vulkan buffers
 * owned by anchors, read-backs), t/lib/cl-fixture.[ch] (OpenCL alone),
 * t/lib/image-fixture.[ch] (images), t/lib/ring-fixture.[ch] (frame rings),
 * t/lib/consumer-fixture.[ch] (other libraries on handles), t/lib/fd-count.h and
 * t/lib/tap.h. A program too large to read in one sitting is split by topic
 * into programs of its own (t/bridge/bridge-image-*.c), or into a driver, a table
 * of cases and the table's interpreter (t/fault/fault-*.c). */
#ifndef CLMEM_BRIDGE_FIXTURE_H
#define CLMEM_BRIDGE_FIXTURE_H
#include "cl-fixture.h"
#include "clmem-bridge.h"
#include "vkctx.h"

#include <stdatomic.h>
#include <stdbool.h>

/* Opens the Vulkan context or skips the whole test, naming why. */
void bridge_open_vulkan(struct vkctx *vk);

/* Opens f on the OpenCL device paired with vk by UUID where there is one
 * (so the GPU machine tests its own device), else as cl_fixture_open does. */
void cl_fixture_open_paired(struct cl_fixture *f, struct vkctx *vk);

/* A bridge of vk's device and f's context and device, with `flags`
 * (clmem_bridge_info.flags); bails out when creation fails. The caller owns
 * the one reference. */
clmem_bridge *bridge_open(struct vkctx *vk, struct cl_fixture *f, uint32_t flags);

/* The same with the bridge's entry points taken through
 * get_instance_proc_addr (fd-watch.h's, to watch its exported fds). */
clmem_bridge *bridge_open_with(struct vkctx *vk, struct cl_fixture *f, uint32_t flags,
                               PFN_vkGetInstanceProcAddr get_instance_proc_addr);

/* The path a test exercises on b: opaque fd where the bridge offers it (the
 * GPU machine), else host-mapped (the CPU machines). */
clmem_bridge_path bridge_test_path(const clmem_bridge *b);

/* What a test of one bridge starts from. */
struct bridge_test {
    struct vkctx vk;
    struct cl_fixture f; /* on the OpenCL device paired with vk (cl_fixture_open_paired) */
    clmem_bridge *b;     /* bridge_open(&vk, &f, 0): the test owns the one reference */
    clmem_bridge_path path; /* bridge_test_path(b) */
};

/* The start every such test shares: a watchdog named `name` (none when
 * watchdog_seconds is 0), the Vulkan context (or a skip of the whole
 * program, before any test point), OpenCL on the paired device, the bridge
 * and its path, named in one diagnostic line. */
void bridge_test_open(struct bridge_test *t, const char *name, unsigned watchdog_seconds);

/* Its end, four TAP points: clmem_bridge_finish(b, 0) -> CLMEM_OK (nothing
 * of the bridge holds Vulkan memory any more), then with the bridge's last
 * reference gone cl_fixture_expect_no_leaks (two points), and no error
 * from the validation layer; then the contexts are closed. The caller
 * releases its own OpenCL objects (kernels, queues) first. */
void bridge_test_close(struct bridge_test *t);

/* clmem_bridge_finish(b, 10 s): what a test calls before it checks that
 * the Vulkan anchor dropped (the last clmem_handle_unref starts the
 * import's teardown; finish waits for it). Returns its status (the
 * message is in clmem_error_message()). */
clmem_status bridge_settle(clmem_bridge *b);

/* A UUID as 32 lower-case hex digits, and whether a message names it: in
 * either case, with or without dashes or colons between the digits (the
 * bridge's messages print CL_DEVICE_UUID_KHR and deviceUUID that way). */
void uuid_hex(const unsigned char uuid[16], char out[33]);
bool message_has_uuid(const char *msg, const char hex[33]);

/* Ordered event log: event_log() appends, event_position() finds. */
void event_log(const char *what);
int event_position(const char *what); /* -1 when absent */
void event_log_reset(void);

/* A Vulkan buffer and its memory owned by an anchor: the anchor's release
 * frees both (as an application's would), drops its bridge reference and
 * logs "vulkan memory freed". */
struct vk_owned {
    struct vkctx *vk;
    clmem_bridge *bridge; /* one reference, dropped by the anchor's release */
    VkBuffer buffer;
    clmem_bridge_vk_memory memory;
    atomic_int released;
};

/* Creates the buffer on b's device (bails out on failure) and its anchor;
 * the caller owns one reference on the returned anchor. */
clmem_keepalive *vk_owned_new(struct vk_owned *o, clmem_bridge *b, struct vkctx *vk, VkDeviceSize size,
                              VkMemoryPropertyFlags props, VkExternalMemoryHandleTypeFlags export_types);

/* A host-visible, host-coherent Vulkan buffer of `size` bytes on b's
 * device, mapped at `data`, for the tests' own uploads and read-backs. It
 * is never imported, so closing it frees it at once. Opening returns false
 * (data NULL) only when the mapping failed; close it all the same. */
struct vk_staging {
    struct vk_owned o;
    clmem_keepalive *ka;
    void *data;
};
bool vk_staging_open(struct vk_staging *s, clmem_bridge *b, struct vkctx *vk, VkDeviceSize size);
void vk_staging_close(struct vk_staging *s);

/* Vulkan's view of the first `size` bytes of `buffer`: copied by Vulkan
 * into a staging buffer this opens, to read at s->data and then close.
 * False, with why, when the copy or the mapping failed. */
bool vk_read_back(struct vk_staging *s, clmem_bridge *b, struct vkctx *vk, VkBuffer buffer, VkDeviceSize size,
                  char *why, size_t why_len);

/* Records a barrier on the whole of buf between all commands, with the
 * queue-family transfer from src_family to dst_family (both
 * VK_QUEUE_FAMILY_IGNORED for none). */
void vk_buffer_barrier(VkCommandBuffer cb, VkBuffer buf, uint32_t src_family, uint32_t dst_family, VkAccessFlags src,
                       VkAccessFlags dst);

/* The properties and export types a path's buffer is made with. */
VkMemoryPropertyFlags path_memory_props(clmem_bridge_path path);
VkExternalMemoryHandleTypeFlags path_export_types(const struct vkctx *vk, clmem_bridge_path path);

/* Registers a destructor callback on mem that logs `what` when OpenCL
 * destroys it. `what` must be a string literal. */
void log_cl_destruction(cl_mem mem, const char *what);

/* The in-place transform: p[i] = p[i] * 3 + 1 over `words` uints. */
cl_kernel xform_kernel(struct cl_fixture *f);
cl_int run_xform(struct cl_fixture *f, cl_kernel k, cl_mem mem, size_t words);

/*
 * The round trip: Vulkan fills an allocation of alloc_size bytes with
 * `value`; [offset, offset + size) is imported through `path`, acquired, the
 * kernel transforms it, released; Vulkan copies the whole allocation to a
 * staging buffer and every word is checked (inside the range: value*3+1,
 * outside: value). Then the handle goes, and the anchor must have freed the
 * Vulkan memory. One TAP point; returns its result.
 */
bool round_trip(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, cl_kernel k, clmem_bridge_path path,
                VkDeviceSize alloc_size, VkDeviceSize offset, VkDeviceSize size, const char *label);

/* The cl_mem is destroyed before the Vulkan anchor drops, the drop happens
 * only after the last handle went, and bridge_settle() sees it done.
 * Several TAP points. */
void check_release_order(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path);

/* Work still queued on another queue holds the memory past the last handle;
 * the Vulkan anchor drops once it completed. Several TAP points. */
void check_pending_work(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, cl_kernel k,
                        clmem_bridge_path path);
#endif
