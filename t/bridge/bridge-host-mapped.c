/* SPDX-License-Identifier: MIT */
/* The host-mapped path on every OpenCL device of the machine: Vulkan
 * writes, an OpenCL kernel transforms in place, Vulkan sees the result;
 * and the Vulkan memory is freed only after the last handle and its
 * pending work are gone. Runs on lavapipe + PoCL in CI. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

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
        clmem_bridge *b;
        cl_kernel k;
        uint32_t caps;
        char label[300];
        cl_uint align_bits = 0;
        VkDeviceSize align;

        cl_fixture_open_on(&f, platforms[d], devices[d]);
        snprintf(label, sizeof label, "%s", f.device_name);
        b = bridge_open(&vk, &f, 0);
        caps = clmem_bridge_caps(b);
        tap_ok(caps & CLMEM_BRIDGE_CAP_HOST_MAPPED, "%s: the bridge reports host-mapped sharing (caps 0x%x)", label,
               caps);
        tap_is_int(clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_HOST_MAPPED), CLMEM_OK,
                   "%s: check_path(host-mapped) -> CLMEM_OK", label);
        tap_ok(clmem_bridge_context(b) == f.context && clmem_bridge_cl_device(b) == f.device &&
                   clmem_bridge_vk_device(b) == vk.device,
               "%s: the bridge's context, OpenCL device and VkDevice are the ones it was made from", label);
        tap_diag("OpenCL device %s (%s): host-mapped %s", f.device_name, f.platform_name,
                 caps & CLMEM_BRIDGE_CAP_HOST_MAPPED_ZERO_COPY ? "zero-copy" : "works, with copies inside the driver");
        clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
        align = align_bits / 8 > 4096 ? align_bits / 8 : 4096;
        k = xform_kernel(&f);
        /* Drivers keep fds for their contexts and devices; count around the
         * bridge's work with the same driver objects open. One warm-up round
         * trip first, since a driver may open its own fds on first use. */
        round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_HOST_MAPPED, 4 * KiB, 0, 4 * KiB, label);
        int fds_before = fd_count();
        round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_HOST_MAPPED, 4 * KiB, 0, 4 * KiB, label);
        round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_HOST_MAPPED, 1 * MiB, 0, 1 * MiB, label);
        round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_HOST_MAPPED, 1 * MiB, align, 64 * KiB, label);
        round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_HOST_MAPPED, 1 * MiB, 0, 1 * MiB - align, label);
        round_trip(b, &vk, &f, k, CLMEM_BRIDGE_PATH_BEST, 256 * KiB, 0, 256 * KiB, label);
        check_release_order(b, &vk, &f, CLMEM_BRIDGE_PATH_HOST_MAPPED);
        check_pending_work(b, &vk, &f, k, CLMEM_BRIDGE_PATH_HOST_MAPPED);
        tap_is_int(fd_count(), fds_before, "%s: no file descriptor leaked", label);
        tap_is_int(bridge_settle(b), CLMEM_OK, "%s: nothing of the bridge holds Vulkan memory at the end", label);
        clmem_bridge_unref(b);
        clReleaseKernel(k);
        cl_fixture_close(&f);
    }
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error%s",
               vk.validation ? "" : " (layer not installed: nothing counted)");
    vkctx_close(&vk);
    return tap_done();
}
