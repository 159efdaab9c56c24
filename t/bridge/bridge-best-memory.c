/* SPDX-License-Identifier: MIT */
/* The easy call is the fast call: clmem_bridge_device_extensions lists
 * exactly the sharing extensions the device offers, and
 * clmem_bridge_best_memory names the first path the bridge's capabilities
 * offer (opaque fd, dma-buf, host-mapped) with the memory that path
 * shares, which then goes through a round trip. On the GPU machine that is
 * the opaque-fd path with device-local memory; on the CPU machines
 * host-mapped (and opaque fd again through t/lib/fake-nvidia-import.c, as
 * t/bridge/fakefd-bridge-best-memory).
 *
 * With --print-path it prints the name of the first path the capability
 * bits offer and exits: t/tools/examples.sh compares the examples' path with it. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <stdio.h>
#include <string.h>

static const clmem_bridge_path order[] = {CLMEM_BRIDGE_PATH_OPAQUE_FD, CLMEM_BRIDGE_PATH_DMA_BUF,
                                          CLMEM_BRIDGE_PATH_HOST_MAPPED};

/* The first path clmem_bridge_caps() offers, worked out from the bits alone. */
static clmem_bridge_path first_offered(const clmem_bridge *b)
{
    static const uint32_t bit[] = {CLMEM_BRIDGE_CAP_OPAQUE_FD, CLMEM_BRIDGE_CAP_DMA_BUF, CLMEM_BRIDGE_CAP_HOST_MAPPED};
    for (unsigned i = 0; i < 3; i++)
        if (clmem_bridge_caps(b) & bit[i])
            return order[i];
    return CLMEM_BRIDGE_PATH_BEST;
}

static bool device_offers(VkPhysicalDevice pd, const char *name)
{
    VkExtensionProperties ext[512];
    uint32_t n = 512;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, ext) < 0)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(ext[i].extensionName, name) == 0)
            return true;
    return false;
}

static void check_device_extensions(struct vkctx *vk)
{
    static const char *const sharing[] = {"VK_KHR_external_memory_fd", "VK_EXT_external_memory_dma_buf",
                                          "VK_KHR_external_semaphore_fd"};
    const char *names[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX] = {"x", "x", "x", "x"};
    const char *want[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX] = {NULL, NULL, NULL, NULL};
    uint32_t count = 99, nwant = 0;
    char got_list[512] = "", want_list[512] = "";
    clmem_status s;
    bool same;

    for (unsigned i = 0; i < 3; i++) {
        if (i == 1 && !device_offers(vk->physical_device, sharing[0]))
            continue; /* dma-buf export needs the fd export */
        if (device_offers(vk->physical_device, sharing[i]))
            want[nwant++] = sharing[i];
    }
    s = clmem_bridge_device_extensions(vk->instance, NULL, vk->physical_device, names, &count);
    same = s == CLMEM_OK && count == nwant;
    for (unsigned i = 0; i < CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX; i++) {
        same = same && (names[i] == want[i] || (names[i] && want[i] && strcmp(names[i], want[i]) == 0));
        if (i < count && names[i])
            snprintf(got_list + strlen(got_list), sizeof got_list - strlen(got_list), " %s", names[i]);
        if (want[i])
            snprintf(want_list + strlen(want_list), sizeof want_list - strlen(want_list), " %s", want[i]);
    }
    tap_ok(same, "clmem_bridge_device_extensions lists exactly the sharing extensions %s offers, in order, the "
                 "rest NULL:%s (want%s; %s)",
           vk->device_name, got_list[0] ? got_list : " none", want_list[0] ? want_list : " none",
           clmem_status_name(s));

    count = 99;
    s = clmem_bridge_device_extensions(vk->instance, NULL, vk->physical_device, NULL, &count);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && count == 0 && strstr(clmem_error_message(), "names_out"),
           "clmem_bridge_device_extensions(names_out NULL) -> CLMEM_ERR_NULL_POINTER, count 0 (%s)",
           clmem_error_message());
    s = clmem_bridge_device_extensions(vk->instance, NULL, vk->physical_device, names, NULL);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && strstr(clmem_error_message(), "count_out"),
           "clmem_bridge_device_extensions(count_out NULL) -> CLMEM_ERR_NULL_POINTER (%s)", clmem_error_message());
    count = 99;
    s = clmem_bridge_device_extensions(NULL, NULL, vk->physical_device, names, &count);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && count == 0 && strstr(clmem_error_message(), "instance"),
           "clmem_bridge_device_extensions(instance NULL) -> CLMEM_ERR_NULL_POINTER, count 0 (%s)",
           clmem_error_message());
}

static void check_bad_input(clmem_bridge *b)
{
    clmem_bridge_path path = CLMEM_BRIDGE_PATH_HOST_MAPPED;
    VkMemoryPropertyFlags props = 7;
    VkExternalMemoryHandleTypeFlags types = 7;
    clmem_status s = clmem_bridge_best_memory(NULL, &path, &props, &types);

    tap_ok(s == CLMEM_ERR_NULL_POINTER && path == CLMEM_BRIDGE_PATH_BEST && props == 0 && types == 0 &&
               strstr(clmem_error_message(), "bridge"),
           "best_memory(NULL bridge) -> CLMEM_ERR_NULL_POINTER, outputs cleared (%s)", clmem_error_message());
    props = 7;
    s = clmem_bridge_best_memory(b, NULL, &props, &types);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && props == 0 && strstr(clmem_error_message(), "path_out"),
           "best_memory(path_out NULL) -> CLMEM_ERR_NULL_POINTER (%s)", clmem_error_message());
    s = clmem_bridge_best_memory(b, &path, NULL, &types);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && strstr(clmem_error_message(), "property_flags_out"),
           "best_memory(property_flags_out NULL) -> CLMEM_ERR_NULL_POINTER (%s)", clmem_error_message());
    s = clmem_bridge_best_memory(b, &path, &props, NULL);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && strstr(clmem_error_message(), "export_types_out"),
           "best_memory(export_types_out NULL) -> CLMEM_ERR_NULL_POINTER (%s)", clmem_error_message());
}

int main(int argc, char **argv)
{
    struct vkctx vk;
    struct cl_fixture f;
    clmem_bridge *b;
    clmem_bridge_path path = CLMEM_BRIDGE_PATH_BEST, want;
    VkMemoryPropertyFlags props = 0;
    VkExternalMemoryHandleTypeFlags types = 0;
    clmem_status s;
    cl_kernel k;
    int fds_start;

    bridge_open_vulkan(&vk);
    cl_fixture_open_paired(&f, &vk);
    b = bridge_open(&vk, &f, 0);
    want = first_offered(b);
    if (argc > 1 && strcmp(argv[1], "--print-path") == 0) {
        printf("%s\n", clmem_bridge_path_name(want));
        clmem_bridge_unref(b);
        cl_fixture_close(&f);
        vkctx_close(&vk);
        return 0;
    }
    tap_diag("Vulkan %s, OpenCL %s (%s), caps 0x%x", vk.device_name, f.device_name, f.platform_name,
             clmem_bridge_caps(b));
    fds_start = fd_count();
    check_device_extensions(&vk);
    check_bad_input(b);

    s = clmem_bridge_best_memory(b, &path, &props, &types);
    if (want == CLMEM_BRIDGE_PATH_BEST) {
        tap_ok(s == CLMEM_ERR_UNSUPPORTED && path == CLMEM_BRIDGE_PATH_BEST,
               "no path works here, and best_memory says so: %s", clmem_error_message());
    } else {
        tap_ok(s == CLMEM_OK && path == want, "best_memory names %s, the first path the caps offer (%s)",
               clmem_bridge_path_name(path), s ? clmem_error_message() : "ok");
        tap_ok(props == path_memory_props(path) && types == path_export_types(&vk, path),
               "best_memory's memory is what %s shares: property flags 0x%x, export types 0x%x",
               clmem_bridge_path_name(path), (unsigned)props, (unsigned)types);
        tap_ok(!(clmem_bridge_caps(b) & CLMEM_BRIDGE_CAP_OPAQUE_FD) || path == CLMEM_BRIDGE_PATH_OPAQUE_FD,
               "where opaque fd works, best_memory never falls back to host-mapped (it named %s)",
               clmem_bridge_path_name(path));
        k = xform_kernel(&f);
        round_trip(b, &vk, &f, k, path, 1 << 20, 0, 1 << 20, "best_memory's memory through its path");
        clReleaseKernel(k);
    }
    tap_is_int(bridge_settle(b), CLMEM_OK, "nothing of the bridge holds Vulkan memory at the end");
    tap_is_int(fd_count(), fds_start, "no file descriptor leaked");
    clmem_bridge_unref(b);
    cl_fixture_close(&f);
    vkctx_close(&vk);
    return tap_done();
}
