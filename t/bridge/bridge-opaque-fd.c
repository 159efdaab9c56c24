/* SPDX-License-Identifier: MIT */
/* The opaque-fd path (VK_KHR_external_memory_fd +
 * cl_khr_external_memory_opaque_fd) on the OpenCL device paired with the
 * Vulkan device by UUID. Runs on the NVIDIA machine; elsewhere it skips,
 * naming what is missing. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const VkDeviceSize KiB = 1024, MiB = 1024 * 1024;

/* Open f on the paired device and a bridge that imports opaque fds, or skip
 * saying why. */
static clmem_bridge *open_paired(struct vkctx *vk, struct cl_fixture *f)
{
    cl_platform_id platform;
    cl_device_id device;
    clmem_status s = clmem_bridge_pair(vk->instance, NULL, vk->physical_device, &platform, &device);
    char why[1024];
    clmem_bridge *b;

    if (s == CLMEM_OK)
        cl_fixture_open_on(f, platform, device);
    else {
        snprintf(why, sizeof why, "no OpenCL device pairs with %s: %s", vk->device_name, clmem_error_message());
        cl_fixture_open(f);
    }
    b = bridge_open(vk, f, 0);
    if (s == CLMEM_OK && clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_OPAQUE_FD) == CLMEM_OK)
        return b;
    /* Unpaired, or paired without the path: say what is missing, after
     * closing everything (skipping exits). */
    if (clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_OPAQUE_FD) != CLMEM_OK)
        snprintf(why, sizeof why, "%s", clmem_error_message());
    clmem_bridge_unref(b);
    cl_fixture_close(f);
    vkctx_close(vk);
    tap_skip_all("%s", why);
}

static int export_fd(struct vkctx *vk, const clmem_bridge_vk_memory *m)
{
    PFN_vkGetMemoryFdKHR get_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(vk->device, "vkGetMemoryFdKHR");
    VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                 .memory = m->memory,
                                 .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;
    if (!get_fd || get_fd(vk->device, &info, &fd) != VK_SUCCESS)
        tap_bail("vkGetMemoryFdKHR failed");
    return fd;
}

/* The ownership rule: the imported fd stays open while the cl_mem lives
 * and is closed once OpenCL destroyed it (the driver closes the duplicate
 * it was given, as measured, and the library the caller's fd after it). */
static void fd_ownership(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f)
{
    struct vk_owned o;
    int fds_before_alloc = fd_count(); /* lavapipe backs exportable memory with an fd of its own */
    clmem_keepalive *ka = vk_owned_new(&o, b, vk, 1 * MiB, path_memory_props(CLMEM_BRIDGE_PATH_OPAQUE_FD),
                                       VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    int fd = export_fd(vk, &o.memory), fds_before_import = fd_count();
    clmem_handle *h = NULL;
    clmem_status s = clmem_bridge_import_fd(b, fd, CLMEM_BRIDGE_PATH_OPAQUE_FD, o.memory.allocation_size, 0,
                                            o.memory.allocation_size, ka, f->queue, CL_MEM_READ_WRITE, &h);
    clmem_keepalive_unref(ka);
    tap_ok(s == CLMEM_OK, "import_fd of an exported fd (%s)", s ? clmem_error_message() : "ok");
    tap_ok(fd_is_open(fd), "after import the fd is still open while the cl_mem lives");
    tap_is_int(fd_count(), fds_before_import + 1, "the driver holds one duplicate besides it");
    clmem_handle_unref(h);
    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK, "bridge_settle after the last handle -> CLMEM_OK (%s)", s ? clmem_error_message() : "ok");
    tap_ok(!fd_is_open(fd), "after the last handle and bridge_settle the fd is closed");
    tap_is_int(fd_count(), fds_before_alloc,
               "the fd and the driver's duplicate were closed, and the memory freed: the count before the allocation");
    tap_is_int(atomic_load(&o.released), 1, "and the Vulkan memory was freed, once");
}

/* Bad fds: the driver's code comes back raw and the fd stays the caller's. */
static void bad_fds(clmem_bridge *b, struct cl_fixture *f)
{
    int p[2], closed;
    clmem_handle *h = NULL;
    clmem_status s;

    if (pipe(p) != 0)
        tap_bail("pipe failed");
    s = clmem_bridge_import_fd(b, p[0], CLMEM_BRIDGE_PATH_OPAQUE_FD, 1 * MiB, 0, 1 * MiB, NULL, f->queue, 0, &h);
    tap_ok(s == CLMEM_ERR_OPENCL && h == NULL && clmem_error_native_code() != 0 &&
               strcmp(clmem_error_call(), "clCreateBufferWithProperties") == 0,
           "import_fd of a pipe -> CLMEM_ERR_OPENCL, raw code %d from %s", clmem_error_native_code(),
           clmem_error_call() ? clmem_error_call() : "(none)");
    tap_ok(fd_is_open(p[0]), "the pipe fd is still the caller's");
    close(p[0]);
    close(p[1]);
    closed = open("/dev/null", O_RDONLY);
    close(closed);
    s = clmem_bridge_import_fd(b, closed, CLMEM_BRIDGE_PATH_OPAQUE_FD, 1 * MiB, 0, 1 * MiB, NULL, f->queue, 0, &h);
    /* Duplicating it fails first: the driver is never given a closed fd. */
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && h == NULL && clmem_error_api() == CLMEM_API_SYSTEM &&
               clmem_error_native_code() == EBADF,
           "import_fd of a closed fd -> CLMEM_ERR_INVALID_VALUE, errno %d from %s", clmem_error_native_code(),
           clmem_error_call() ? clmem_error_call() : "(none)");
}

/* Many imports of one allocation, through a bridge without an import cache
 * so that each is a driver import. */
static void cycles(struct vkctx *vk, struct cl_fixture *f, int count)
{
    clmem_bridge *nc = bridge_open(vk, f, CLMEM_BRIDGE_NO_IMPORT_CACHE);
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, nc, vk, 1 * MiB, path_memory_props(CLMEM_BRIDGE_PATH_OPAQUE_FD),
                                       VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    int fds_before = fd_count(), failures = 0, still_open = 0, unsettled = 0;

    for (int i = 0; i < count; i++) {
        clmem_handle *h = NULL;
        int fd = export_fd(vk, &o.memory);
        clmem_status s = clmem_bridge_import_fd(nc, fd, CLMEM_BRIDGE_PATH_OPAQUE_FD, o.memory.allocation_size, 0,
                                                o.memory.allocation_size, ka, f->queue, 0, &h);
        if (s != CLMEM_OK) {
            failures++;
            close(fd);
            continue;
        }
        still_open += fd_is_open(fd);
        if (clmem_bridge_acquire(nc, h, 0, NULL, NULL) != CLMEM_OK ||
            clmem_bridge_release(nc, h, 0, NULL, NULL) != CLMEM_OK)
            failures++;
        clmem_handle_unref(h);
        if (bridge_settle(nc) != CLMEM_OK && unsettled++ < 3)
            tap_diag("cycle %d: bridge_settle: %s", i, clmem_error_message());
        if (fd_is_open(fd))
            failures++; /* the driver should have closed it, and the library its own */
        s = clmem_bridge_import_vk(nc, &o.memory, 0, o.memory.allocation_size, CLMEM_BRIDGE_PATH_OPAQUE_FD, ka,
                                   f->queue, 0, &h);
        failures += s != CLMEM_OK;
        clmem_handle_unref(h);
    }
    tap_is_int(failures, 0, "%d import/acquire/release cycles through import_fd and import_vk", count);
    tap_is_int(still_open, count, "each imported fd stayed open while its cl_mem lived");
    tap_is_int(unsettled, 0, "bridge_settle after each import_fd's last handle -> CLMEM_OK");
    tap_is_int(bridge_settle(nc), CLMEM_OK, "bridge_settle after the last cycle -> CLMEM_OK");
    tap_is_int(fd_count(), fds_before, "the open-fd count is unchanged after %d cycles", count);
    tap_is_int(atomic_load(&o.released), 0, "the Vulkan memory is still the test's");
    clmem_keepalive_unref(ka);
    tap_is_int(atomic_load(&o.released), 1, "until its last reference goes");
    clmem_bridge_unref(nc);
}

int main(void)
{
    struct vkctx vk;
    struct cl_fixture f;
    clmem_bridge *b;
    cl_kernel k;
    VkDeviceSize align;
    cl_uint align_bits = 0;
    int fds_before;

    bridge_open_vulkan(&vk);
    if (!vk.has_memory_fd) {
        char name[sizeof vk.device_name];
        memcpy(name, vk.device_name, sizeof name);
        vkctx_close(&vk);
        tap_skip_all("VK_KHR_external_memory_fd not offered by %s", name);
    }
    b = open_paired(&vk, &f);
    tap_diag("Vulkan %s paired with OpenCL %s (%s); validation layer %s", vk.device_name, f.device_name,
             f.platform_name, vk.validation ? "on" : "not installed");
    tap_ok(clmem_bridge_caps(b) & CLMEM_BRIDGE_CAP_OPAQUE_FD, "the bridge's caps include opaque fd (0x%x)",
           clmem_bridge_caps(b));
    if (clmem_bridge_caps(b) & CLMEM_BRIDGE_CAP_OPAQUE_FD_DEDICATED_ONLY)
        tap_diag("Vulkan exports opaque-fd buffers only from dedicated allocations here");
    clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    align = align_bits / 8;
    k = xform_kernel(&f);
    /* warm-up: the driver may open fds of its own on first use */
    round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_OPAQUE_FD, 4 * KiB, 0, 4 * KiB, f.device_name);
    fds_before = fd_count();
    round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_OPAQUE_FD, 4 * KiB, 0, 4 * KiB, f.device_name);
    round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_OPAQUE_FD, 1 * MiB, 0, 1 * MiB, f.device_name);
    round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_OPAQUE_FD, 256 * MiB, 0, 256 * MiB, f.device_name);
    round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_OPAQUE_FD, 1 * MiB, align, 64 * KiB, f.device_name);
    round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_OPAQUE_FD, 1 * MiB, 16 * align, 1 * MiB - 16 * align, f.device_name);
    round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_BEST, 1 * MiB, 0, 1 * MiB, f.device_name);
    {
        struct vk_owned o;
        clmem_keepalive *ka = vk_owned_new(&o, b, &vk, 1 * MiB, path_memory_props(CLMEM_BRIDGE_PATH_OPAQUE_FD),
                                           VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
        clmem_handle *h = NULL;
        clmem_bridge_path path = CLMEM_BRIDGE_PATH_BEST;
        clmem_status s = clmem_bridge_import_vk(b, &o.memory, align / 2 ? align / 2 : 1, 4096,
                                                CLMEM_BRIDGE_PATH_OPAQUE_FD, ka, f.queue, 0, &h);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && !h, "a misaligned offset (%llu) -> CLMEM_ERR_INVALID_VALUE",
               (unsigned long long)(align / 2));
        s = clmem_bridge_import_vk(b, &o.memory, 0, 4096, CLMEM_BRIDGE_PATH_BEST, ka, f.queue, 0, &h);
        tap_ok(s == CLMEM_OK && clmem_bridge_handle_path(h, &path) == CLMEM_OK && path == CLMEM_BRIDGE_PATH_OPAQUE_FD,
               "CLMEM_BRIDGE_PATH_BEST chooses opaque fd here");
        s = clmem_bridge_acquire(b, h, 0, NULL, NULL);
        s = s ? s : clmem_bridge_acquire(b, h, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "acquire of an acquired buffer -> CLMEM_ERR_INVALID_VALUE");
        clmem_handle_unref(h); /* dropped while acquired: teardown releases it */
        clmem_keepalive_unref(ka);
        s = bridge_settle(b);
        tap_ok(s == CLMEM_OK, "dropped while acquired: bridge_settle -> CLMEM_OK (%s)",
               s ? clmem_error_message() : "ok");
        tap_is_int(atomic_load(&o.released), 1, "dropped while acquired, the memory still goes back and is freed");
    }
    check_release_order(b, &vk, &f, CLMEM_BRIDGE_PATH_OPAQUE_FD);
    check_pending_work(b, &vk, &f, k, CLMEM_BRIDGE_PATH_OPAQUE_FD);
    fd_ownership(b, &vk, &f);
    bad_fds(b, &f);
    cycles(&vk, &f, 1000);
    tap_is_int(bridge_settle(b), CLMEM_OK, "nothing of the bridge holds Vulkan memory at the end");
    tap_is_int(fd_count(), fds_before, "no file descriptor leaked");
    clmem_bridge_unref(b);
    clReleaseKernel(k);
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error%s",
               vk.validation ? "" : " (layer not installed: nothing counted)");
    vkctx_close(&vk);
    return tap_done();
}
