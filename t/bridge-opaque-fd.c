/* The opaque-fd path (VK_KHR_external_memory_fd +
 * cl_khr_external_memory_opaque_fd) on the OpenCL device paired with the
 * Vulkan device by UUID. Runs on the NVIDIA machine; elsewhere it skips,
 * naming what is missing. */
#include "bridge-fixture.h"
#include "fd-count.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const VkDeviceSize KiB = 1024, MiB = 1024 * 1024;

/* Find the paired device that imports opaque fds, or skip saying why. */
static void open_paired(struct vkctx *vk, struct cl_fixture *f)
{
    cl_platform_id platform;
    cl_device_id device;
    clmem_status s = clmem_bridge_pair(vk->physical_device, &platform, &device);

    if (s == CLMEM_OK && clmem_bridge_check_path(vk->physical_device, device, CLMEM_PATH_OPAQUE_FD) == CLMEM_OK) {
        cl_fixture_open_on(f, platform, device);
        return;
    }
    {
        /* Unpaired, or paired without the path: say what is missing, after
         * closing the Vulkan context (skipping exits). */
        char why[1024];
        cl_platform_id ps[4];
        cl_device_id ds[4];
        if (s == CLMEM_OK || (cl_all_devices(ps, ds, 4) > 0 &&
                              clmem_bridge_check_path(vk->physical_device, ds[0], CLMEM_PATH_OPAQUE_FD) != CLMEM_OK))
            snprintf(why, sizeof why, "%s", clmem_error_message());
        else
            snprintf(why, sizeof why, "no OpenCL device pairs with %s: %s", vk->device_name, clmem_error_message());
        vkctx_close(vk);
        tap_skip_all("%s", why);
    }
}

static int export_fd(struct vkctx *vk, const clmem_vk_memory *m)
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
static void fd_ownership(struct vkctx *vk, struct cl_fixture *f)
{
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, vk, 1 * MiB, path_memory_props(CLMEM_PATH_OPAQUE_FD),
                                       VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    int fd = export_fd(vk, &o.memory), fds_before_import = fd_count();
    clmem_handle *h = NULL;
    clmem_status s = clmem_bridge_import_fd(fd, CLMEM_PATH_OPAQUE_FD, o.memory.allocation_size, 0,
                                            o.memory.allocation_size, ka, f->context, f->queue, CL_MEM_READ_WRITE, &h);
    clmem_keepalive_unref(ka);
    tap_ok(s == CLMEM_OK, "import_fd of an exported fd (%s)", s ? clmem_error_message() : "ok");
    tap_ok(fd_is_open(fd), "after import the fd is still open while the cl_mem lives");
    tap_is_int(fd_count(), fds_before_import + 1, "the driver holds one duplicate besides it");
    clmem_handle_unref(h);
    tap_ok(!fd_is_open(fd), "after the last handle the fd is closed");
    tap_is_int(fd_count(), fds_before_import - 1, "the fd and the driver's duplicate were closed, nothing else");
    tap_is_int(atomic_load(&o.released), 1, "and the Vulkan memory was freed");
}

/* Bad fds: the driver's code comes back raw and the fd stays the caller's. */
static void bad_fds(struct vkctx *vk, struct cl_fixture *f)
{
    int p[2], closed;
    clmem_handle *h = NULL;
    clmem_status s;

    if (pipe(p) != 0)
        tap_bail("pipe failed");
    s = clmem_bridge_import_fd(p[0], CLMEM_PATH_OPAQUE_FD, 1 * MiB, 0, 1 * MiB, NULL, f->context, f->queue, 0, &h);
    tap_ok(s == CLMEM_ERR_OPENCL && h == NULL && clmem_error_native_code() != 0 &&
               strcmp(clmem_error_call(), "clCreateBufferWithProperties") == 0,
           "import_fd of a pipe -> CLMEM_ERR_OPENCL, raw code %d from %s", clmem_error_native_code(),
           clmem_error_call() ? clmem_error_call() : "(none)");
    tap_ok(fd_is_open(p[0]), "the pipe fd is still the caller's");
    close(p[0]);
    close(p[1]);
    closed = open("/dev/null", O_RDONLY);
    close(closed);
    s = clmem_bridge_import_fd(closed, CLMEM_PATH_OPAQUE_FD, 1 * MiB, 0, 1 * MiB, NULL, f->context, f->queue, 0, &h);
    /* Duplicating it fails first: the driver is never given a closed fd. */
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && h == NULL && clmem_error_api() == CLMEM_API_SYSTEM &&
               clmem_error_native_code() == EBADF,
           "import_fd of a closed fd -> CLMEM_ERR_INVALID_VALUE, errno %d from %s", clmem_error_native_code(),
           clmem_error_call() ? clmem_error_call() : "(none)");
    (void)vk;
}

/* Many imports of one allocation, the cache off so each is a driver import. */
static void cycles(struct vkctx *vk, struct cl_fixture *f, int count)
{
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, vk, 1 * MiB, path_memory_props(CLMEM_PATH_OPAQUE_FD),
                                       VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    int fds_before = fd_count(), failures = 0, still_open = 0;
    int was_on = clmem_bridge_cache_set_enabled(0);

    for (int i = 0; i < count; i++) {
        clmem_handle *h = NULL;
        int fd = export_fd(vk, &o.memory);
        clmem_status s = clmem_bridge_import_fd(fd, CLMEM_PATH_OPAQUE_FD, o.memory.allocation_size, 0,
                                                o.memory.allocation_size, ka, f->context, f->queue, 0, &h);
        if (s != CLMEM_OK) {
            failures++;
            close(fd);
            continue;
        }
        still_open += fd_is_open(fd);
        if (clmem_bridge_acquire(h, 0, NULL, NULL) != CLMEM_OK || clmem_bridge_release(h, 0, NULL, NULL) != CLMEM_OK)
            failures++;
        clmem_handle_unref(h);
        if (fd_is_open(fd))
            failures++; /* the driver should have closed it */
        s = clmem_bridge_import_vk(&o.memory, 0, o.memory.allocation_size, CLMEM_PATH_OPAQUE_FD, ka, f->context,
                                   f->queue, 0, &h);
        failures += s != CLMEM_OK;
        clmem_handle_unref(h);
    }
    clmem_bridge_cache_set_enabled(was_on);
    tap_is_int(failures, 0, "%d import/acquire/release cycles through import_fd and import_vk", count);
    tap_is_int(still_open, count, "each imported fd stayed open while its cl_mem lived");
    tap_is_int(fd_count(), fds_before, "the open-fd count is unchanged after %d cycles", count);
    tap_is_int(atomic_load(&o.released), 0, "the Vulkan memory is still the test's");
    clmem_keepalive_unref(ka);
    tap_is_int(atomic_load(&o.released), 1, "until its last reference goes");
}

int main(void)
{
    struct vkctx vk;
    struct cl_fixture f;
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
    open_paired(&vk, &f);
    tap_diag("Vulkan %s paired with OpenCL %s (%s); validation layer %s", vk.device_name, f.device_name,
             f.platform_name, vk.validation ? "on" : "not installed");
    clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    align = align_bits / 8;
    k = xform_kernel(&f);
    /* warm-up: the driver may open fds of its own on first use */
    round_trip(&vk, &f, k, CLMEM_PATH_OPAQUE_FD, 4 * KiB, 0, 4 * KiB, f.device_name);
    fds_before = fd_count();
    round_trip(&vk, &f, k, CLMEM_PATH_OPAQUE_FD, 4 * KiB, 0, 4 * KiB, f.device_name);
    round_trip(&vk, &f, k, CLMEM_PATH_OPAQUE_FD, 1 * MiB, 0, 1 * MiB, f.device_name);
    round_trip(&vk, &f, k, CLMEM_PATH_OPAQUE_FD, 256 * MiB, 0, 256 * MiB, f.device_name);
    round_trip(&vk, &f, k, CLMEM_PATH_OPAQUE_FD, 1 * MiB, align, 64 * KiB, f.device_name);
    round_trip(&vk, &f, k, CLMEM_PATH_OPAQUE_FD, 1 * MiB, 16 * align, 1 * MiB - 16 * align, f.device_name);
    round_trip(&vk, &f, k, CLMEM_PATH_BEST, 1 * MiB, 0, 1 * MiB, f.device_name);
    {
        struct vk_owned o;
        clmem_keepalive *ka = vk_owned_new(&o, &vk, 1 * MiB, path_memory_props(CLMEM_PATH_OPAQUE_FD),
                                           VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
        clmem_handle *h = NULL;
        clmem_path path = CLMEM_PATH_BEST;
        clmem_status s = clmem_bridge_import_vk(&o.memory, align / 2 ? align / 2 : 1, 4096, CLMEM_PATH_OPAQUE_FD, ka,
                                                f.context, f.queue, 0, &h);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && !h, "a misaligned offset (%llu) -> CLMEM_ERR_INVALID_VALUE",
               (unsigned long long)(align / 2));
        s = clmem_bridge_import_vk(&o.memory, 0, 4096, CLMEM_PATH_BEST, ka, f.context, f.queue, 0, &h);
        tap_ok(s == CLMEM_OK && clmem_bridge_handle_path(h, &path) == CLMEM_OK && path == CLMEM_PATH_OPAQUE_FD,
               "CLMEM_PATH_BEST chooses opaque fd here");
        s = clmem_bridge_acquire(h, 0, NULL, NULL);
        s = s ? s : clmem_bridge_acquire(h, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "acquire of an acquired buffer -> CLMEM_ERR_INVALID_VALUE");
        clmem_handle_unref(h); /* dropped while acquired: teardown releases it */
        clmem_keepalive_unref(ka);
        tap_is_int(atomic_load(&o.released), 1, "dropped while acquired, the memory still goes back and is freed");
    }
    check_release_order(&vk, &f, CLMEM_PATH_OPAQUE_FD);
    check_pending_work(&vk, &f, k, CLMEM_PATH_OPAQUE_FD);
    fd_ownership(&vk, &f);
    bad_fds(&vk, &f);
    cycles(&vk, &f, 1000);
    tap_is_int(fd_count(), fds_before, "no file descriptor leaked");
    clReleaseKernel(k);
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error%s",
               vk.validation ? "" : " (layer not installed: nothing counted)");
    vkctx_close(&vk);
    return tap_done();
}
