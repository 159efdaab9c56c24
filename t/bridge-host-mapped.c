/* The host-mapped path on every OpenCL device of the machine: Vulkan
 * writes, an OpenCL kernel transforms in place, Vulkan sees the result;
 * and the Vulkan memory is freed only after the last handle and its
 * pending work are gone. Runs on lavapipe + PoCL in CI. */
#include "bridge-fixture.h"
#include "fd-count.h"
#include "tap.h"

#include <stdio.h>
#include <unistd.h>

static const VkDeviceSize KiB = 1024, MiB = 1024 * 1024;

/* The cl_mem is destroyed before the Vulkan anchor drops, and the drop
 * happens when the last handle goes. */
static void release_order(struct vkctx *vk, struct cl_fixture *f)
{
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, vk, 64 * KiB, path_memory_props(CLMEM_PATH_HOST_MAPPED), 0);
    clmem_handle *h = NULL, *h2;
    clmem_status s = clmem_bridge_import_vk(&o.memory, 0, 64 * KiB, CLMEM_PATH_HOST_MAPPED, ka, f->context,
                                            f->queue, CL_MEM_READ_WRITE, &h);

    clmem_keepalive_unref(ka);
    if (!tap_ok(s == CLMEM_OK, "order: import (%s)", s ? clmem_error_message() : "ok"))
        return;
    event_log_reset();
    log_cl_destruction(clmem_handle_mem(h), "cl_mem destroyed");
    h2 = clmem_handle_ref(h);
    clmem_handle_unref(h);
    tap_is_int(atomic_load(&o.released), 0, "order: a second reference keeps the Vulkan memory");
    clmem_handle_unref(h2);
    tap_is_int(atomic_load(&o.released), 1, "order: the last unref frees the Vulkan memory, once");
    tap_ok(event_position("cl_mem destroyed") >= 0 &&
               event_position("cl_mem destroyed") < event_position("vulkan memory freed"),
           "order: OpenCL destroyed the cl_mem (%d) before the Vulkan memory was freed (%d)",
           event_position("cl_mem destroyed"), event_position("vulkan memory freed"));
}

/* Work still queued on another queue holds the memory past the last
 * handle: the Vulkan anchor waits for it. */
static void pending_work(struct vkctx *vk, struct cl_fixture *f, cl_kernel k)
{
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, vk, 64 * KiB, path_memory_props(CLMEM_PATH_HOST_MAPPED), 0);
    clmem_handle *h = NULL;
    cl_int err;
    cl_command_queue other = clCreateCommandQueueWithProperties(f->context, f->device, NULL, &err);
    cl_event gate = clCreateUserEvent(f->context, &err);
    cl_mem mem;
    size_t words = 64 * KiB / 4;
    clmem_status s = clmem_bridge_import_vk(&o.memory, 0, 64 * KiB, CLMEM_PATH_HOST_MAPPED, ka, f->context,
                                            f->queue, CL_MEM_READ_WRITE, &h);
    bool freed = false;

    clmem_keepalive_unref(ka);
    if (!tap_ok(s == CLMEM_OK && err == CL_SUCCESS, "pending: import and a second queue (%s)",
                s ? clmem_error_message() : "ok"))
        return;
    mem = clmem_handle_mem(h);
    clmem_bridge_acquire(h, 0, NULL, NULL);
    clFinish(f->queue);
    clSetKernelArg(k, 0, sizeof mem, &mem);
    err = clEnqueueNDRangeKernel(other, k, 1, NULL, &words, NULL, 1, &gate, NULL);
    clFlush(other);
    tap_is_int(err, CL_SUCCESS, "pending: a kernel waits on a user event on the other queue");
    clmem_handle_unref(h); /* the last handle; the kernel has not run */
    tap_is_int(atomic_load(&o.released), 0, "pending: the Vulkan memory outlives the last handle while work is queued");
    clSetUserEventStatus(gate, CL_COMPLETE);
    clFinish(other);
    /* The driver destroys the cl_mem once the kernel is done, possibly on
     * its own thread; give it up to five seconds. */
    for (int i = 0; i < 500 && !freed; i++) {
        freed = atomic_load(&o.released) == 1;
        if (!freed)
            usleep(10000);
    }
    tap_ok(freed, "pending: the Vulkan memory is freed once the queued kernel completed");
    clReleaseEvent(gate);
    clReleaseCommandQueue(other);
}

int main(void)
{
    struct vkctx vk;
    cl_platform_id platforms[16];
    cl_device_id devices[16];
    int ndev, fds_before;

    bridge_open_vulkan(&vk);
    fds_before = fd_count();
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
        round_trip(&vk, &f, k, CLMEM_PATH_HOST_MAPPED, 4 * KiB, 0, 4 * KiB, label);
        round_trip(&vk, &f, k, CLMEM_PATH_HOST_MAPPED, 1 * MiB, 0, 1 * MiB, label);
        round_trip(&vk, &f, k, CLMEM_PATH_HOST_MAPPED, 1 * MiB, align, 64 * KiB, label);
        round_trip(&vk, &f, k, CLMEM_PATH_HOST_MAPPED, 1 * MiB, 0, 1 * MiB - align, label);
        round_trip(&vk, &f, k, CLMEM_PATH_BEST, 256 * KiB, 0, 256 * KiB, label);
        release_order(&vk, &f);
        pending_work(&vk, &f, k);
        clReleaseKernel(k);
        cl_fixture_close(&f);
    }
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error%s",
               vk.validation ? "" : " (layer not installed: nothing counted)");
    vkctx_close(&vk);
    tap_is_int(fd_count(), fds_before, "no file descriptor leaked");
    return tap_done();
}
