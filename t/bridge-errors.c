/* Every bad input to the bridge gets its own status and changes nothing:
 * no fd, no cl_mem, no reference is left behind (checked through the fd
 * count, the context's reference count and a counting anchor). */
#include "bridge-fixture.h"
#include "fd-count.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int anchor_releases;
static void count_release(void *user)
{
    (void)user;
    anchor_releases++;
}

static cl_uint context_refs(cl_context c)
{
    cl_uint n = 0;
    clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

/* One rejected import: the status, *out reset to NULL, the message. */
static void expect(clmem_status got, clmem_status want, clmem_handle *out, const char *what, const char *needle)
{
    bool msg_ok = !needle || strstr(clmem_error_message(), needle);
    tap_ok(got == want && out == NULL && msg_ok, "%s -> %s%s%s", what, clmem_status_str(want),
           got == want && msg_ok ? "" : " | got: ", got == want && msg_ok ? "" : clmem_error_message());
}

#define JUNK ((clmem_handle *)(uintptr_t)0x1)

int main(void)
{
    struct vkctx vk;
    struct cl_fixture f, other;
    struct vk_owned host, local;
    clmem_keepalive *host_ka, *local_ka, *counted;
    clmem_handle *h = JUNK, *plain = NULL;
    clmem_vk_memory m, fake;
    clmem_path path;
    cl_uint align_bits = 0;
    int fds_before, pipefd[2];
    cl_uint refs_before;
    clmem_status s;

    bridge_open_vulkan(&vk);
    cl_fixture_open(&f);
    cl_fixture_open_on(&other, f.platform, f.device);
    fds_before = fd_count();
    refs_before = context_refs(f.context);
    host_ka = vk_owned_new(&host, &vk, 64 * 1024, path_memory_props(CLMEM_PATH_HOST_MAPPED), 0);
    local_ka = vk_owned_new(&local, &vk, 64 * 1024, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                            vk.has_memory_fd ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT : 0);
    counted = clmem_keepalive_new(count_release, NULL);
    m = host.memory;
    clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);

#define IMPORT(mem, off, size, p, ctx, q, flags, outp) \
    clmem_bridge_import_vk(mem, off, size, p, counted, ctx, q, flags, outp)

    s = IMPORT(NULL, 0, 4096, CLMEM_PATH_BEST, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "NULL memory", "memory");
    h = JUNK;
    s = IMPORT(&m, 0, 4096, CLMEM_PATH_BEST, NULL, f.queue, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "NULL context", "context");
    h = JUNK;
    s = IMPORT(&m, 0, 4096, CLMEM_PATH_BEST, f.context, NULL, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "NULL queue", "queue");
    s = IMPORT(&m, 0, 4096, CLMEM_PATH_BEST, f.context, f.queue, 0, NULL);
    tap_is_int(s, CLMEM_ERR_NULL_POINTER, "NULL out -> CLMEM_ERR_NULL_POINTER");
    fake = m;
    fake.memory = VK_NULL_HANDLE;
    h = JUNK;
    s = IMPORT(&fake, 0, 4096, CLMEM_PATH_BEST, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "VK_NULL_HANDLE memory", "memory->memory");

    h = JUNK;
    s = IMPORT(&m, 0, 0, CLMEM_PATH_BEST, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_ZERO_SIZE, h, "zero size", "size");
    h = JUNK;
    s = IMPORT(&m, 0, m.allocation_size + 4, CLMEM_PATH_BEST, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "size beyond the allocation", "beyond");
    h = JUNK;
    s = IMPORT(&m, m.allocation_size, 4, CLMEM_PATH_BEST, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "offset at the end of the allocation", "beyond");
    h = JUNK;
    s = IMPORT(&m, UINT64_MAX - 2, 8, CLMEM_PATH_BEST, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "offset + size overflowing 64 bits", "beyond");
    h = JUNK;
    s = IMPORT(&m, 4, 1024, CLMEM_PATH_HOST_MAPPED, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "misaligned offset (4 bytes)", "CL_DEVICE_MEM_BASE_ADDR_ALIGN");
    h = JUNK;
    s = IMPORT(&m, 0, 4096, CLMEM_PATH_BEST, f.context, f.queue, CL_MEM_USE_HOST_PTR, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "CL_MEM_USE_HOST_PTR in flags", "host-pointer");
    h = JUNK;
    s = IMPORT(&m, 0, 4096, CLMEM_PATH_BEST, f.context, other.queue, 0, &h);
    expect(s, CLMEM_ERR_CONTEXT_MISMATCH, h, "a queue from another context", "context");
    h = JUNK;
    s = IMPORT(&m, 0, 4096, (clmem_path)42, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "an unknown path value", "Unknown path");

    h = JUNK;
    s = IMPORT(&m, 0, 4096, CLMEM_PATH_OPAQUE_FD, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_UNSUPPORTED, h, "opaque fd on memory not allocated exportable", "exportable");
    h = JUNK;
    s = IMPORT(&local.memory, 0, 4096, CLMEM_PATH_DMA_BUF, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_UNSUPPORTED, h, "dma-buf on memory exported only as opaque fd", "dma-buf");
    fake = local.memory;
    fake.property_flags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    h = JUNK;
    s = IMPORT(&fake, 0, 4096, CLMEM_PATH_HOST_MAPPED, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_UNSUPPORTED, h, "host-mapped on memory that is not HOST_VISIBLE", "HOST_VISIBLE");

    if (clmem_bridge_check_path(vk.physical_device, f.device, CLMEM_PATH_OPAQUE_FD) != CLMEM_OK) {
        char want[400];
        snprintf(want, sizeof want, "cl_khr_external_memory_opaque_fd (not offered by %s)", f.platform_name);
        tap_ok(strstr(clmem_error_message(), want) != NULL || strstr(clmem_error_message(), "VK_KHR") != NULL ||
                   strstr(clmem_error_message(), "UUID") != NULL,
               "check_path(opaque-fd) names what is missing: %s", clmem_error_message());
        if (vk.has_memory_fd) {
            h = JUNK;
            s = IMPORT(&local.memory, 0, 4096, CLMEM_PATH_OPAQUE_FD, f.context, f.queue, 0, &h);
            expect(s, CLMEM_ERR_UNSUPPORTED, h, "opaque fd where OpenCL cannot import it",
                   "cl_khr_external_memory_opaque_fd");
        } else
            tap_skip("VK_KHR_external_memory_fd not offered by the Vulkan device", "opaque fd import refused");
        /* import_fd: refused before the fd is touched, which stays open */
        if (pipe(pipefd) != 0)
            tap_bail("pipe failed");
        h = JUNK;
        s = clmem_bridge_import_fd(pipefd[0], CLMEM_PATH_OPAQUE_FD, 4096, 0, 4096, counted, f.context, f.queue, 0, &h);
        expect(s, CLMEM_ERR_UNSUPPORTED, h, "import_fd of a pipe where opaque fd is unsupported",
               "cl_khr_external_memory_opaque_fd");
        tap_ok(fd_is_open(pipefd[0]), "the refused fd is still open and the caller's");
        close(pipefd[0]);
        close(pipefd[1]);
    } else {
        tap_skip("the device imports opaque fds: t/bridge-opaque-fd covers it", "opaque fd refusal");
        tap_skip("the device imports opaque fds: t/bridge-opaque-fd covers it", "opaque fd refusal");
        tap_skip("the device imports opaque fds: t/bridge-opaque-fd covers it", "import_fd refusal");
        tap_skip("the device imports opaque fds: t/bridge-opaque-fd covers it", "fd left open");
    }
    h = JUNK;
    s = clmem_bridge_import_fd(-1, CLMEM_PATH_OPAQUE_FD, 4096, 0, 4096, counted, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "import_fd of fd -1", "negative");
    h = JUNK;
    s = clmem_bridge_import_fd(0, CLMEM_PATH_HOST_MAPPED, 4096, 0, 4096, counted, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "import_fd with the host-mapped path", "CLMEM_PATH_OPAQUE_FD");
    h = JUNK;
    s = clmem_bridge_import_fd(0, CLMEM_PATH_OPAQUE_FD, 4096, 0, 0, counted, f.context, f.queue, 0, &h);
    expect(s, CLMEM_ERR_ZERO_SIZE, h, "import_fd of zero size", "size");

    /* pairing and capability queries */
    s = clmem_bridge_pair(NULL, NULL, NULL);
    tap_is_int(s, CLMEM_ERR_NULL_POINTER, "pair(NULL) -> CLMEM_ERR_NULL_POINTER");
    {
        /* Unpaired devices: which status depends on what the machine has. */
        cl_platform_id pp = (cl_platform_id)(uintptr_t)1;
        cl_device_id pd = (cl_device_id)(uintptr_t)1;
        bool any_uuid = false;
        cl_platform_id ps[16];
        cl_device_id ds[16];
        int nd = cl_all_devices(ps, ds, 16);
        for (int i = 0; i < nd; i++) {
            size_t sz = 0;
            clGetDeviceInfo(ds[i], CL_DEVICE_EXTENSIONS, 0, NULL, &sz);
            char *ext = malloc(sz + 1);
            clGetDeviceInfo(ds[i], CL_DEVICE_EXTENSIONS, sz, ext, NULL);
            ext[sz] = 0;
            any_uuid = any_uuid || strstr(ext, "cl_khr_device_uuid") != NULL;
            free(ext);
        }
        s = clmem_bridge_pair(vk.physical_device, &pp, &pd);
        if (!any_uuid)
            tap_ok(s == CLMEM_ERR_UNSUPPORTED && pp == NULL && pd == NULL &&
                       strstr(clmem_error_message(), "cl_khr_device_uuid"),
                   "unpaired devices, no OpenCL UUIDs -> CLMEM_ERR_UNSUPPORTED naming cl_khr_device_uuid, outputs "
                   "cleared");
        else
            tap_ok(s == CLMEM_OK || (s == CLMEM_ERR_DEVICE_MISMATCH && pp == NULL && pd == NULL),
                   "pairing with UUIDs present -> the paired device or CLMEM_ERR_DEVICE_MISMATCH (%s)",
                   s ? clmem_error_message() : "paired");
    }
    {
        VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        VkSemaphore vs;
        clmem_semaphore *sem = (clmem_semaphore *)(uintptr_t)1;
        vkCreateSemaphore(vk.device, &sci, NULL, &vs);
        s = clmem_bridge_semaphore_import(vk.device, vk.queue, vs, CLMEM_SEMAPHORE_BEST, counted, f.context,
                                          f.device, NULL);
        tap_is_int(s, CLMEM_ERR_NULL_POINTER, "semaphore import with NULL out -> CLMEM_ERR_NULL_POINTER");
        s = clmem_bridge_semaphore_import(vk.device, VK_NULL_HANDLE, vs, CLMEM_SEMAPHORE_HOST_ORDERED, counted,
                                          f.context, f.device, &sem);
        tap_ok(s == CLMEM_ERR_NULL_POINTER && sem == NULL,
               "host-ordered semaphore without a VkQueue -> CLMEM_ERR_NULL_POINTER, *out NULL");
        s = clmem_bridge_semaphore_import(vk.device, vk.queue, vs, (clmem_semaphore_mode)9, counted, f.context,
                                          f.device, &sem);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "semaphore import with an unknown mode -> CLMEM_ERR_INVALID_VALUE");
        if (clmem_bridge_check_semaphore(vk.physical_device, f.device,
                                         VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT) != CLMEM_OK) {
            s = clmem_bridge_semaphore_import(vk.device, vk.queue, vs, CLMEM_SEMAPHORE_OPAQUE_FD, counted, f.context,
                                              f.device, &sem);
            tap_ok(s == CLMEM_ERR_UNSUPPORTED && sem == NULL &&
                       strstr(clmem_error_message(), "cl_khr_external_semaphore_opaque_fd"),
                   "opaque-fd semaphore where OpenCL lacks it -> CLMEM_ERR_UNSUPPORTED naming the extension");
        } else
            tap_skip("the device imports opaque-fd semaphores: t/bridge-semaphore covers it",
                     "opaque-fd semaphore refusal");
        vkDestroySemaphore(vk.device, vs, NULL);
    }
    s = clmem_bridge_check_path(vk.physical_device, f.device, CLMEM_PATH_BEST);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "check_path(BEST) -> CLMEM_ERR_INVALID_VALUE");
    s = clmem_bridge_check_semaphore(vk.physical_device, f.device, (VkExternalSemaphoreHandleTypeFlagBits)0x80);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "check_semaphore(unknown type) -> CLMEM_ERR_INVALID_VALUE");
    s = clmem_bridge_caps(vk.physical_device, f.device, NULL);
    tap_is_int(s, CLMEM_ERR_NULL_POINTER, "caps(NULL out) -> CLMEM_ERR_NULL_POINTER");
    {
        VkBuffer b = (VkBuffer)(uintptr_t)1;
        clmem_vk_memory vm;
        s = clmem_bridge_vk_buffer_create(vk.physical_device, vk.device, 0, VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0, 0,
                                          &b, &vm);
        tap_ok(s == CLMEM_ERR_ZERO_SIZE && b == VK_NULL_HANDLE && vm.memory == VK_NULL_HANDLE,
               "vk_buffer_create(size 0) -> CLMEM_ERR_ZERO_SIZE, outputs cleared");
    }

    /* handoff misuse */
    {
        cl_mem buf = cl_fixture_buffer(&f, 4096);
        clmem_handle *good = NULL;
        clmem_handle_wrap(buf, f.queue, 0, NULL, &plain);
        s = clmem_bridge_acquire(plain, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "acquire of a handle not from the bridge -> CLMEM_ERR_INVALID_VALUE");
        s = clmem_bridge_acquire(NULL, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_NULL_POINTER, "acquire(NULL) -> CLMEM_ERR_NULL_POINTER");
        s = clmem_bridge_handle_path(plain, &path);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "handle_path of a plain handle -> CLMEM_ERR_INVALID_VALUE");
        clmem_handle_unref(plain);
        clReleaseMemObject(buf);

        s = IMPORT(&m, 0, 4096, CLMEM_PATH_HOST_MAPPED, f.context, f.queue, CL_MEM_READ_WRITE, &good);
        tap_ok(s == CLMEM_OK, "a good import for the handoff checks (%s)", s ? clmem_error_message() : "ok");
        s = clmem_bridge_release(good, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "release before acquire -> CLMEM_ERR_INVALID_VALUE");
        s = clmem_bridge_acquire(good, 0, NULL, NULL);
        tap_is_int(s, CLMEM_OK, "acquire");
        s = clmem_bridge_acquire(good, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "acquire of an acquired buffer -> CLMEM_ERR_INVALID_VALUE");
        s = clmem_bridge_handle_path(good, &path);
        tap_ok(s == CLMEM_OK && path == CLMEM_PATH_HOST_MAPPED, "handle_path says host-mapped");
        /* dropped while acquired: teardown hands it back itself */
        clmem_handle_unref(good);
    }

    clmem_keepalive_unref(counted);
    tap_is_int(anchor_releases, 1, "no failed call kept a reference on the caller's anchor");
    clmem_keepalive_unref(host_ka);
    clmem_keepalive_unref(local_ka);
    tap_ok(atomic_load(&host.released) == 1 && atomic_load(&local.released) == 1, "the Vulkan buffers were freed");
    tap_is_int(context_refs(f.context), refs_before, "no OpenCL object left behind (context reference count)");
    tap_is_int(fd_count(), fds_before, "no file descriptor leaked");
    cl_fixture_close(&other);
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&vk);
    return tap_done();
}
