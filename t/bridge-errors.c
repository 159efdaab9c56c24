/* Every bad input to the bridge gets its own status and changes nothing:
 * no fd, no cl_mem, no reference is left behind (checked through the fd
 * count, the contexts' reference counts and a counting anchor). */
#include "bridge-fixture.h"
#include "fd-count.h"
#include "tap.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
    tap_ok(got == want && out == NULL && msg_ok, "%s -> %s%s%s", what, clmem_status_name(want),
           got == want && msg_ok ? "" : " | got: ", got == want && msg_ok ? "" : clmem_error_message());
}

/* One rejected bridge creation: the status and *out reset to NULL. */
static void expect_create(const clmem_bridge_info *info, clmem_status want, const char *what)
{
    clmem_bridge *out = (clmem_bridge *)(uintptr_t)0x1;
    clmem_status got = clmem_bridge_create(info, &out);
    tap_ok(got == want && out == NULL, "bridge_create with %s -> %s, *out NULL%s%s", what, clmem_status_name(want),
           got == want && out == NULL ? "" : " | got: ",
           got == want && out == NULL ? "" : got ? clmem_error_message() : "CLMEM_OK");
    if (got == CLMEM_OK && out && out != (clmem_bridge *)(uintptr_t)0x1)
        clmem_bridge_unref(out);
}


#define JUNK ((clmem_handle *)(uintptr_t)0x1)

int main(void)
{
    struct vkctx vk, vk2;
    struct cl_fixture f, other;
    struct vk_owned host, local;
    clmem_keepalive *host_ka, *local_ka, *counted;
    clmem_handle *h = JUNK, *plain = NULL;
    clmem_bridge *b, *b2;
    clmem_bridge_vk_memory m, fake;
    clmem_bridge_path path;
    cl_uint align_bits = 0;
    int fds_before, pipefd[2];
    cl_uint refs_before, other_refs_before;
    clmem_status s;
    bool have_vk2;

    bridge_open_vulkan(&vk);
    /* A second VkDevice, for memory that is not the bridge's device's. */
    have_vk2 = vkctx_open(&vk2, -1);
    cl_fixture_open(&f);
    cl_fixture_open_on(&other, f.platform, f.device);
    fds_before = fd_count();
    refs_before = context_refs(f.context);
    other_refs_before = context_refs(other.context);

    /* ------------------------------------------------ bridge creation */
    {
        clmem_bridge_info good = {.size = sizeof good,
                                  .instance = vk.instance,
                                  .physical_device = vk.physical_device,
                                  .device = vk.device,
                                  .context = f.context,
                                  .cl_device = f.device};
        clmem_bridge_info bad;
        clmem_bridge *out = (clmem_bridge *)(uintptr_t)0x1;

        expect_create(NULL, CLMEM_ERR_NULL_POINTER, "NULL info");
        s = clmem_bridge_create(&good, NULL);
        tap_is_int(s, CLMEM_ERR_NULL_POINTER, "bridge_create with NULL out -> CLMEM_ERR_NULL_POINTER");
        bad = good;
        bad.size = 0;
        expect_create(&bad, CLMEM_ERR_INVALID_VALUE, "info.size 0");
        bad.size = offsetof(clmem_bridge_info, context);
        expect_create(&bad, CLMEM_ERR_INVALID_VALUE, "info.size ending before the context");
        bad = good;
        bad.context = NULL;
        expect_create(&bad, CLMEM_ERR_NULL_POINTER, "a NULL context");
        bad = good;
        bad.device = VK_NULL_HANDLE;
        expect_create(&bad, CLMEM_ERR_NULL_POINTER, "a NULL VkDevice");
        bad = good;
        bad.physical_device = VK_NULL_HANDLE;
        expect_create(&bad, CLMEM_ERR_NULL_POINTER, "a NULL VkPhysicalDevice");
        bad = good;
        bad.instance = VK_NULL_HANDLE;
        expect_create(&bad, CLMEM_ERR_NULL_POINTER, "a NULL VkInstance");
        bad = good;
        bad.flags = 1u << 31;
        expect_create(&bad, CLMEM_ERR_INVALID_VALUE, "an unknown flag");
        {
            /* A cl_device that is not in the context: another device, if
             * the machine has one. */
            cl_platform_id ps[16];
            cl_device_id ds[16], stranger = NULL;
            int nd = cl_all_devices(ps, ds, 16);
            for (int i = 0; i < nd && !stranger; i++)
                if (ds[i] != f.device)
                    stranger = ds[i];
            if (stranger) {
                bad = good;
                bad.cl_device = stranger;
                expect_create(&bad, CLMEM_ERR_DEVICE_MISMATCH, "a cl_device not in the context");
            } else
                tap_skip("the machine has one OpenCL device", "bridge_create with a cl_device not in the context");
        }
        tap_is_int(context_refs(f.context), refs_before, "no failed bridge_create retained the context");
        /* A context without cl_device: the bridge finds the device itself. */
        good.cl_device = NULL;
        s = clmem_bridge_create(&good, &out);
        tap_ok(s == CLMEM_OK && clmem_bridge_cl_device(out) == f.device && clmem_bridge_context(out) == f.context,
               "bridge_create with cl_device NULL picks the context's device (%s)", s ? clmem_error_message() : "ok");
        if (s == CLMEM_OK) {
            tap_ok(clmem_bridge_ref(out) == out, "bridge_ref returns the bridge");
            clmem_bridge_unref(out);
            tap_is_int(clmem_bridge_finish(out, 0), CLMEM_OK, "finish of a bridge that imported nothing -> CLMEM_OK");
            clmem_bridge_unref(out);
        }
        tap_is_int(context_refs(f.context), refs_before, "its last unref released the context");
        tap_ok(clmem_bridge_ref(NULL) == NULL && clmem_bridge_context(NULL) == NULL &&
                   clmem_bridge_cl_device(NULL) == NULL && clmem_bridge_vk_device(NULL) == VK_NULL_HANDLE &&
                   clmem_bridge_caps(NULL) == 0,
               "bridge_ref, the accessors and caps are NULL-safe");
        clmem_bridge_unref(NULL);
        tap_is_int(clmem_bridge_finish(NULL, 0), CLMEM_ERR_NULL_POINTER, "finish(NULL) -> CLMEM_ERR_NULL_POINTER");
    }

    b = bridge_open(&vk, &f, 0);
    b2 = bridge_open(&vk, &other, 0);
    host_ka = vk_owned_new(&host, b, &vk, 64 * 1024, path_memory_props(CLMEM_BRIDGE_PATH_HOST_MAPPED), 0);
    local_ka = vk_owned_new(&local, b, &vk, 64 * 1024, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                            vk.has_memory_fd ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT : 0);
    counted = clmem_keepalive_new(count_release, NULL);
    m = host.memory;
    clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);

    /* ------------------------------------------------------- import */
#define IMPORT(mem, off, size, p, q, flags, outp) clmem_bridge_import_vk(b, mem, off, size, p, counted, q, flags, outp)

    s = clmem_bridge_import_vk(NULL, &m, 0, 4096, CLMEM_BRIDGE_PATH_BEST, counted, f.queue, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "NULL bridge", NULL);
    h = JUNK;
    s = IMPORT(NULL, 0, 4096, CLMEM_BRIDGE_PATH_BEST, f.queue, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "NULL memory", "memory");
    h = JUNK;
    s = IMPORT(&m, 0, 4096, CLMEM_BRIDGE_PATH_BEST, NULL, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "NULL queue", "queue");
    s = IMPORT(&m, 0, 4096, CLMEM_BRIDGE_PATH_BEST, f.queue, 0, NULL);
    tap_is_int(s, CLMEM_ERR_NULL_POINTER, "NULL out -> CLMEM_ERR_NULL_POINTER");
    fake = m;
    fake.memory = VK_NULL_HANDLE;
    h = JUNK;
    s = IMPORT(&fake, 0, 4096, CLMEM_BRIDGE_PATH_BEST, f.queue, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "VK_NULL_HANDLE memory", "memory->memory");
    if (have_vk2) {
        /* Only the device field differs: the bridge must refuse before it
         * touches the memory. */
        fake = m;
        fake.device = vk2.device;
        h = JUNK;
        s = IMPORT(&fake, 0, 4096, CLMEM_BRIDGE_PATH_BEST, f.queue, 0, &h);
        expect(s, CLMEM_ERR_DEVICE_MISMATCH, h, "memory of another VkDevice", NULL);
    } else
        tap_skip("a second VkDevice could not be opened", "memory of another VkDevice");

    h = JUNK;
    s = IMPORT(&m, 0, 0, CLMEM_BRIDGE_PATH_BEST, f.queue, 0, &h);
    expect(s, CLMEM_ERR_ZERO_SIZE, h, "zero size", "size");
    h = JUNK;
    s = IMPORT(&m, 0, m.allocation_size + 4, CLMEM_BRIDGE_PATH_BEST, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "size beyond the allocation", "beyond");
    h = JUNK;
    s = IMPORT(&m, m.allocation_size, 4, CLMEM_BRIDGE_PATH_BEST, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "offset at the end of the allocation", "beyond");
    h = JUNK;
    s = IMPORT(&m, UINT64_MAX - 2, 8, CLMEM_BRIDGE_PATH_BEST, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "offset + size overflowing 64 bits", "beyond");
    h = JUNK;
    s = IMPORT(&m, 4, 1024, CLMEM_BRIDGE_PATH_HOST_MAPPED, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "misaligned offset (4 bytes)", "CL_DEVICE_MEM_BASE_ADDR_ALIGN");
    h = JUNK;
    s = IMPORT(&m, 0, 4096, CLMEM_BRIDGE_PATH_BEST, f.queue, CL_MEM_USE_HOST_PTR, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "CL_MEM_USE_HOST_PTR in flags", "host-pointer");
    h = JUNK;
    s = IMPORT(&m, 0, 4096, CLMEM_BRIDGE_PATH_BEST, other.queue, 0, &h);
    expect(s, CLMEM_ERR_CONTEXT_MISMATCH, h, "a queue from another context", "context");
    h = JUNK;
    s = IMPORT(&m, 0, 4096, (clmem_bridge_path)42, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "an unknown path value", "Unknown path");

    h = JUNK;
    s = IMPORT(&m, 0, 4096, CLMEM_BRIDGE_PATH_OPAQUE_FD, f.queue, 0, &h);
    expect(s, CLMEM_ERR_UNSUPPORTED, h, "opaque fd on memory not allocated exportable", "exportable");
    h = JUNK;
    s = IMPORT(&local.memory, 0, 4096, CLMEM_BRIDGE_PATH_DMA_BUF, f.queue, 0, &h);
    expect(s, CLMEM_ERR_UNSUPPORTED, h, "dma-buf on memory exported only as opaque fd", "dma-buf");
    fake = local.memory;
    fake.property_flags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    h = JUNK;
    s = IMPORT(&fake, 0, 4096, CLMEM_BRIDGE_PATH_HOST_MAPPED, f.queue, 0, &h);
    expect(s, CLMEM_ERR_UNSUPPORTED, h, "host-mapped on memory that is not HOST_VISIBLE", "HOST_VISIBLE");

    if (clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_OPAQUE_FD) != CLMEM_OK) {
        char want[400];
        snprintf(want, sizeof want, "cl_khr_external_memory_opaque_fd (not offered by %s)", f.platform_name);
        tap_ok(strstr(clmem_error_message(), want) != NULL || strstr(clmem_error_message(), "VK_KHR") != NULL ||
                   strstr(clmem_error_message(), "UUID") != NULL,
               "check_path(opaque-fd) names what is missing: %s", clmem_error_message());
        tap_ok(!(clmem_bridge_caps(b) & CLMEM_BRIDGE_CAP_OPAQUE_FD), "caps agree: no CLMEM_BRIDGE_CAP_OPAQUE_FD");
        if (vk.has_memory_fd) {
            h = JUNK;
            s = IMPORT(&local.memory, 0, 4096, CLMEM_BRIDGE_PATH_OPAQUE_FD, f.queue, 0, &h);
            expect(s, CLMEM_ERR_UNSUPPORTED, h, "opaque fd where OpenCL cannot import it",
                   "cl_khr_external_memory_opaque_fd");
        } else
            tap_skip("VK_KHR_external_memory_fd not offered by the Vulkan device", "opaque fd import refused");
        /* import_fd: refused before the fd is touched, which stays open */
        if (pipe(pipefd) != 0)
            tap_bail("pipe failed");
        h = JUNK;
        s = clmem_bridge_import_fd(b, pipefd[0], CLMEM_BRIDGE_PATH_OPAQUE_FD, 4096, 0, 4096, counted, f.queue, 0, &h);
        expect(s, CLMEM_ERR_UNSUPPORTED, h, "import_fd of a pipe where opaque fd is unsupported",
               "cl_khr_external_memory_opaque_fd");
        tap_ok(fd_is_open(pipefd[0]), "the refused fd is still open and the caller's");
        close(pipefd[0]);
        close(pipefd[1]);
    } else {
        tap_skip("the device imports opaque fds: t/bridge-opaque-fd covers it", "opaque fd refusal");
        tap_skip("the device imports opaque fds: t/bridge-opaque-fd covers it", "caps agree");
        tap_skip("the device imports opaque fds: t/bridge-opaque-fd covers it", "opaque fd refusal");
        tap_skip("the device imports opaque fds: t/bridge-opaque-fd covers it", "import_fd refusal");
        tap_skip("the device imports opaque fds: t/bridge-opaque-fd covers it", "fd left open");
    }
    h = JUNK;
    s = clmem_bridge_import_fd(NULL, 0, CLMEM_BRIDGE_PATH_OPAQUE_FD, 4096, 0, 4096, counted, f.queue, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "import_fd with a NULL bridge", NULL);
    h = JUNK;
    s = clmem_bridge_import_fd(b, -1, CLMEM_BRIDGE_PATH_OPAQUE_FD, 4096, 0, 4096, counted, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "import_fd of fd -1", "negative");
    h = JUNK;
    s = clmem_bridge_import_fd(b, 0, CLMEM_BRIDGE_PATH_HOST_MAPPED, 4096, 0, 4096, counted, f.queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "import_fd with the host-mapped path", "CLMEM_BRIDGE_PATH_OPAQUE_FD");
    h = JUNK;
    s = clmem_bridge_import_fd(b, 0, CLMEM_BRIDGE_PATH_OPAQUE_FD, 4096, 0, 0, counted, f.queue, 0, &h);
    expect(s, CLMEM_ERR_ZERO_SIZE, h, "import_fd of zero size", "size");
    h = JUNK;
    s = clmem_bridge_import_fd(b, 0, CLMEM_BRIDGE_PATH_OPAQUE_FD, 4096, 0, 4096, counted, other.queue, 0, &h);
    expect(s, CLMEM_ERR_CONTEXT_MISMATCH, h, "import_fd with a queue from another context", "context");

    /* ------------------------------------- pairing and capability queries */
    s = clmem_bridge_pair(NULL, NULL, NULL, NULL, NULL);
    tap_is_int(s, CLMEM_ERR_NULL_POINTER, "pair(NULL) -> CLMEM_ERR_NULL_POINTER");
    s = clmem_bridge_pair(vk.instance, NULL, VK_NULL_HANDLE, NULL, NULL);
    tap_is_int(s, CLMEM_ERR_NULL_POINTER, "pair without a physical device -> CLMEM_ERR_NULL_POINTER");
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
        s = clmem_bridge_pair(vk.instance, NULL, vk.physical_device, &pp, &pd);
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
    s = clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_BEST);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "check_path(BEST) -> CLMEM_ERR_INVALID_VALUE");
    s = clmem_bridge_check_path(b, (clmem_bridge_path)42);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "check_path(unknown path) -> CLMEM_ERR_INVALID_VALUE");
    s = clmem_bridge_check_path(NULL, CLMEM_BRIDGE_PATH_HOST_MAPPED);
    tap_is_int(s, CLMEM_ERR_NULL_POINTER, "check_path(NULL bridge) -> CLMEM_ERR_NULL_POINTER");
    s = clmem_bridge_check_semaphore(b, (clmem_bridge_semaphore_mode)0x80);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "check_semaphore(unknown mode) -> CLMEM_ERR_INVALID_VALUE");
    s = clmem_bridge_check_semaphore(b, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED);
    tap_is_int(s, CLMEM_OK, "check_semaphore(host-ordered) -> CLMEM_OK");
    s = clmem_bridge_check_semaphore(NULL, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED);
    tap_is_int(s, CLMEM_ERR_NULL_POINTER, "check_semaphore(NULL bridge) -> CLMEM_ERR_NULL_POINTER");
    {
        VkBuffer vb = (VkBuffer)(uintptr_t)1;
        clmem_bridge_vk_memory vm;
        memset(&vm, 0xab, sizeof vm);
        s = clmem_bridge_vk_buffer_create(b, 0, VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0, 0, &vb, &vm);
        tap_ok(s == CLMEM_ERR_ZERO_SIZE && vb == VK_NULL_HANDLE && vm.memory == VK_NULL_HANDLE,
               "vk_buffer_create(size 0) -> CLMEM_ERR_ZERO_SIZE, outputs cleared");
        vb = (VkBuffer)(uintptr_t)1;
        s = clmem_bridge_vk_buffer_create(NULL, 4096, VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0, 0, &vb, &vm);
        tap_ok(s == CLMEM_ERR_NULL_POINTER && vb == VK_NULL_HANDLE,
               "vk_buffer_create(NULL bridge) -> CLMEM_ERR_NULL_POINTER, outputs cleared");
    }

    /* ---------------------------------------------------------- semaphores */
    {
        VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        VkSemaphore vs;
        clmem_bridge_semaphore *sem = (clmem_bridge_semaphore *)(uintptr_t)1;
        vkCreateSemaphore(vk.device, &sci, NULL, &vs);
        s = clmem_bridge_semaphore_import(b, vk.queue, vs, CLMEM_BRIDGE_SEMAPHORE_BEST, counted, NULL);
        tap_is_int(s, CLMEM_ERR_NULL_POINTER, "semaphore import with NULL out -> CLMEM_ERR_NULL_POINTER");
        s = clmem_bridge_semaphore_import(NULL, vk.queue, vs, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, counted, &sem);
        tap_ok(s == CLMEM_ERR_NULL_POINTER && sem == NULL,
               "semaphore import with a NULL bridge -> CLMEM_ERR_NULL_POINTER, *out NULL");
        sem = (clmem_bridge_semaphore *)(uintptr_t)1;
        s = clmem_bridge_semaphore_import(b, VK_NULL_HANDLE, vs, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, counted, &sem);
        tap_ok(s == CLMEM_ERR_NULL_POINTER && sem == NULL,
               "host-ordered semaphore without a VkQueue -> CLMEM_ERR_NULL_POINTER, *out NULL");
        s = clmem_bridge_semaphore_import(b, vk.queue, vs, (clmem_bridge_semaphore_mode)9, counted, &sem);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "semaphore import with an unknown mode -> CLMEM_ERR_INVALID_VALUE");
        if (clmem_bridge_check_semaphore(b, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD) != CLMEM_OK) {
            s = clmem_bridge_semaphore_import(b, vk.queue, vs, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD, counted, &sem);
            tap_ok(s == CLMEM_ERR_UNSUPPORTED && sem == NULL &&
                       strstr(clmem_error_message(), "cl_khr_external_semaphore_opaque_fd"),
                   "opaque-fd semaphore where OpenCL lacks it -> CLMEM_ERR_UNSUPPORTED naming the extension");
        } else
            tap_skip("the device imports opaque-fd semaphores: t/bridge-semaphore covers it",
                     "opaque-fd semaphore refusal");
        /* A semaphore of bridge b used through bridge b2. Vulkan signals it
         * first, so that a wait wrongly accepted returns instead of hanging. */
        s = clmem_bridge_semaphore_import(b, vk.queue, vs, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, counted, &sem);
        if (tap_ok(s == CLMEM_OK && clmem_bridge_semaphore_get_mode(sem) == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED,
                   "a host-ordered semaphore for the cross-bridge checks (%s)", s ? clmem_error_message() : "ok")) {
            VkSubmitInfo si = {
                .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .signalSemaphoreCount = 1, .pSignalSemaphores = &vs};
            if (vkQueueSubmit(vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS || vkQueueWaitIdle(vk.queue) != VK_SUCCESS)
                tap_bail("signalling the semaphore from Vulkan failed");
            s = clmem_bridge_finish(b, 0);
            tap_ok(s == CLMEM_ERR_IN_USE, "finish while a semaphore lives -> CLMEM_ERR_IN_USE (%s)",
                   clmem_status_name(s));
            s = clmem_bridge_semaphore_wait(b2, sem, other.queue, 0, NULL, NULL);
            tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "semaphore_wait through another bridge -> CLMEM_ERR_INVALID_VALUE");
            s = clmem_bridge_semaphore_signal(b2, sem, other.queue, 0, NULL, NULL);
            tap_is_int(s, CLMEM_ERR_INVALID_VALUE,
                       "semaphore_signal through another bridge -> CLMEM_ERR_INVALID_VALUE");
            tap_ok(clmem_bridge_semaphore_ref(sem) == sem, "semaphore_ref returns the semaphore");
            clmem_bridge_semaphore_unref(sem);
            clmem_bridge_semaphore_unref(sem);
        } else
            for (int i = 0; i < 4; i++)
                tap_skip("no semaphore to check with", "cross-bridge semaphore check");
        tap_ok(clmem_bridge_semaphore_ref(NULL) == NULL, "semaphore_ref(NULL) is NULL");
        clmem_bridge_semaphore_unref(NULL);
        vkDestroySemaphore(vk.device, vs, NULL);
    }

    /* -------------------------------------------------------- handoff */
    {
        cl_mem buf = cl_fixture_buffer(&f, 4096);
        clmem_handle *good = NULL, *hq = JUNK;
        cl_int err;
        cl_event gate = clCreateUserEvent(f.context, &err);
        cl_command_queue q2 = clCreateCommandQueueWithProperties(f.context, f.device, NULL, &err);

        if (err != CL_SUCCESS || !gate || !q2)
            tap_bail("a second queue and a user event: %d", err);
        clmem_handle_wrap(buf, f.queue, 0, NULL, &plain);
        s = clmem_bridge_acquire(b, plain, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "acquire of a handle not from the bridge -> CLMEM_ERR_INVALID_VALUE");
        s = clmem_bridge_acquire(b, NULL, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_NULL_POINTER, "acquire(NULL handle) -> CLMEM_ERR_NULL_POINTER");
        s = clmem_bridge_handle_path(plain, &path);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "handle_path of a plain handle -> CLMEM_ERR_INVALID_VALUE");
        s = clmem_bridge_handle_for_queue(plain, f.queue, &hq);
        expect(s, CLMEM_ERR_INVALID_VALUE, hq, "handle_for_queue of a plain handle", NULL);
        clmem_handle_unref(plain);
        clReleaseMemObject(buf);

        s = IMPORT(&m, 0, 4096, CLMEM_BRIDGE_PATH_HOST_MAPPED, f.queue, CL_MEM_READ_WRITE, &good);
        if (!tap_ok(s == CLMEM_OK, "a good import for the handoff checks (%s)", s ? clmem_error_message() : "ok"))
            tap_bail("cannot check the handoff");
        s = clmem_bridge_acquire(NULL, good, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_NULL_POINTER, "acquire(NULL bridge) -> CLMEM_ERR_NULL_POINTER");
        s = clmem_bridge_release(b, good, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "release before acquire -> CLMEM_ERR_INVALID_VALUE");

        /* A handle of bridge b passed to bridge b2: refused, and nothing is
         * enqueued (nothing waits on the incomplete gate in the wait list). */
        s = clmem_bridge_acquire(b2, good, 1, &gate, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "acquire through another bridge -> CLMEM_ERR_INVALID_VALUE");
        tap_ok(cl_queue_drains(f.queue), "  and nothing was enqueued on the handle's queue");
        s = clmem_bridge_release(b, good, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "  and the memory is still not acquired");

        s = clmem_bridge_acquire(b, good, 0, NULL, NULL);
        tap_is_int(s, CLMEM_OK, "acquire");
        s = clmem_bridge_acquire(b, good, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "acquire of an acquired buffer -> CLMEM_ERR_INVALID_VALUE");
        s = clmem_bridge_release(b2, good, 1, &gate, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "release through another bridge -> CLMEM_ERR_INVALID_VALUE");
        tap_ok(cl_queue_drains(f.queue), "  and nothing was enqueued on the handle's queue");
        s = clmem_bridge_acquire(b, good, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "  and the memory is still acquired");
        clSetUserEventStatus(gate, CL_COMPLETE);
        clReleaseEvent(gate);

        s = clmem_bridge_handle_path(good, &path);
        tap_ok(s == CLMEM_OK && path == CLMEM_BRIDGE_PATH_HOST_MAPPED, "handle_path says host-mapped");

        hq = JUNK;
        s = clmem_bridge_handle_for_queue(good, other.queue, &hq);
        expect(s, CLMEM_ERR_CONTEXT_MISMATCH, hq, "handle_for_queue with a queue of another context", "context");
        hq = JUNK;
        s = clmem_bridge_handle_for_queue(good, NULL, &hq);
        expect(s, CLMEM_ERR_NULL_POINTER, hq, "handle_for_queue with a NULL queue", "queue");
        hq = JUNK;
        s = clmem_bridge_handle_for_queue(NULL, f.queue, &hq);
        expect(s, CLMEM_ERR_NULL_POINTER, hq, "handle_for_queue of a NULL handle", NULL);
        s = clmem_bridge_handle_for_queue(good, f.queue, NULL);
        tap_is_int(s, CLMEM_ERR_NULL_POINTER, "handle_for_queue with NULL out -> CLMEM_ERR_NULL_POINTER");
        hq = NULL;
        s = clmem_bridge_handle_for_queue(good, q2, &hq);
        tap_ok(s == CLMEM_OK && hq && clmem_handle_mem(hq) == clmem_handle_mem(good) &&
                   clmem_handle_queue(hq) == q2,
               "handle_for_queue with another queue of the context: the same cl_mem on that queue (%s)",
               s ? clmem_error_message() : "ok");

        s = clmem_bridge_finish(b, 0);
        tap_ok(s == CLMEM_ERR_IN_USE, "finish while an import has handles -> CLMEM_ERR_IN_USE (%s)",
               s ? clmem_error_message() : "CLMEM_OK");
        /* dropped while acquired: teardown hands it back itself */
        clmem_handle_unref(hq);
        clmem_handle_unref(good);
        s = bridge_settle(b);
        tap_ok(s == CLMEM_OK, "finish after the last handle -> CLMEM_OK (%s)", s ? clmem_error_message() : "ok");
        clReleaseCommandQueue(q2);
    }

    clmem_keepalive_unref(counted);
    tap_is_int(anchor_releases, 1, "no failed call kept a reference on the caller's anchor");
    clmem_keepalive_unref(host_ka);
    clmem_keepalive_unref(local_ka);
    tap_ok(atomic_load(&host.released) == 1 && atomic_load(&local.released) == 1, "the Vulkan buffers were freed");
    tap_is_int(bridge_settle(b2), CLMEM_OK, "the second bridge has nothing to finish");
    clmem_bridge_unref(b2);
    clmem_bridge_unref(b);
    tap_is_int(cl_context_refs_settled(f.context, refs_before), refs_before,
               "no OpenCL object left behind (context reference count)");
    tap_is_int(cl_context_refs_settled(other.context, other_refs_before), other_refs_before,
               "nor in the other context (the second bridge released it)");
    tap_is_int(fd_count(), fds_before, "no file descriptor leaked");
    cl_fixture_close(&other);
    cl_fixture_close(&f);
    if (have_vk2)
        vkctx_close(&vk2);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&vk);
    return tap_done();
}
