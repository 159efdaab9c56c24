/* The host-mapped path on every OpenCL device of the machine: Vulkan
 * writes, an OpenCL kernel transforms in place, Vulkan sees the result;
 * and the Vulkan memory is freed only after the last handle and its
 * pending work are gone. Runs on lavapipe + PoCL in CI. */
#include "bridge-fixture.h"
#include "fd-count.h"
#include "tap.h"

#include <stdio.h>

static const VkDeviceSize KiB = 1024, MiB = 1024 * 1024;

int main(void)
{
    struct vkctx vk;
    cl_platform_id platforms[16];
    cl_device_id devices[16];
    int ndev;

    bridge_open_vulkan(&vk);
    ndev = cl_all_devices(platforms, devices, 16);
    if (ndev == 0)
        tap_bail("no OpenCL device");
    tap_diag("Vulkan device: %s; validation layer %s", vk.device_name, vk.validation ? "on" : "not installed");
    for (int d = 0; d < ndev; d++) {
        struct cl_fixture f;
        cl_kernel k;
        uint32_t caps = 0;
        char label[300];
        cl_uint align_bits = 0;
        VkDeviceSize align;

        cl_fixture_open_on(&f, platforms[d], devices[d]);
        snprintf(label, sizeof label, "%s", f.device_name);
        clmem_bridge_caps(vk.physical_device, f.device, &caps);
        tap_diag("OpenCL device %s (%s): host-mapped %s", f.device_name, f.platform_name,
                 caps & CLMEM_CAP_HOST_MAPPED_ZERO_COPY ? "zero-copy" : "works, with copies inside the driver");
        clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
        align = align_bits / 8 > 4096 ? align_bits / 8 : 4096;
        k = xform_kernel(&f);
        /* Drivers keep fds for their contexts and devices; count around the
         * bridge's work with the same driver objects open. One warm-up round
         * trip first, since a driver may open its own fds on first use. */
        round_trip(&vk, &f, k, CLMEM_PATH_HOST_MAPPED, 4 * KiB, 0, 4 * KiB, label);
        int fds_before = fd_count();
        round_trip(&vk, &f, k, CLMEM_PATH_HOST_MAPPED, 4 * KiB, 0, 4 * KiB, label);
        round_trip(&vk, &f, k, CLMEM_PATH_HOST_MAPPED, 1 * MiB, 0, 1 * MiB, label);
        round_trip(&vk, &f, k, CLMEM_PATH_HOST_MAPPED, 1 * MiB, align, 64 * KiB, label);
        round_trip(&vk, &f, k, CLMEM_PATH_HOST_MAPPED, 1 * MiB, 0, 1 * MiB - align, label);
        round_trip(&vk, &f, k, CLMEM_PATH_BEST, 256 * KiB, 0, 256 * KiB, label);
        check_release_order(&vk, &f, CLMEM_PATH_HOST_MAPPED);
        check_pending_work(&vk, &f, k, CLMEM_PATH_HOST_MAPPED);
        tap_is_int(fd_count(), fds_before, "%s: no file descriptor leaked", label);
        clReleaseKernel(k);
        cl_fixture_close(&f);
    }
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error%s",
               vk.validation ? "" : " (layer not installed: nothing counted)");
    vkctx_close(&vk);
    return tap_done();
}
