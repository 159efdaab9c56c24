/* SPDX-License-Identifier: MIT */
/* The last-error message: a native code by its name and number
 * ("VK_ERROR_FORMAT_NOT_SUPPORTED (-11)", "CL_INVALID_VALUE (-30)",
 * "EMFILE (errno 24)"), its number alone where no header names it, and an
 * explanation kept whole up to 2047 bytes, the documented limit. Where
 * the Vulkan headers are installed, every VkResult the library names is
 * checked against them. */
#include "clmem.h"
#include "t/lib/tap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<vulkan/vulkan_core.h>)
#include <vulkan/vulkan_core.h>
#define HAVE_VULKAN_HEADER 1
#endif
#endif

static bool message_has(clmem_status status, clmem_api api, int32_t code, const char *want)
{
    clmem_error_set(status, api, "someCall", code, "Why.");
    return strstr(clmem_error_message(), want) != NULL;
}

struct named { int32_t code; const char *name; };

#define N(x) {(int32_t)x, #x}
static const struct named cl_codes[] = {
    N(CL_DEVICE_NOT_FOUND), N(CL_OUT_OF_RESOURCES), N(CL_OUT_OF_HOST_MEMORY), N(CL_MAP_FAILURE),
    N(CL_MISALIGNED_SUB_BUFFER_OFFSET), N(CL_INVALID_VALUE), N(CL_INVALID_CONTEXT), N(CL_INVALID_COMMAND_QUEUE),
    N(CL_INVALID_MEM_OBJECT), N(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR), N(CL_INVALID_OPERATION),
    N(CL_INVALID_BUFFER_SIZE), N(CL_INVALID_PROPERTY), N(CL_INVALID_IMAGE_DESCRIPTOR),
};
#ifdef HAVE_VULKAN_HEADER
/* Those of Vulkan 1.0 to 1.2 and their early extensions, in every header
 * the library can be built with. */
static const struct named vk_codes[] = {
    N(VK_NOT_READY), N(VK_TIMEOUT), N(VK_INCOMPLETE), N(VK_ERROR_OUT_OF_HOST_MEMORY),
    N(VK_ERROR_OUT_OF_DEVICE_MEMORY), N(VK_ERROR_INITIALIZATION_FAILED), N(VK_ERROR_DEVICE_LOST),
    N(VK_ERROR_MEMORY_MAP_FAILED), N(VK_ERROR_LAYER_NOT_PRESENT), N(VK_ERROR_EXTENSION_NOT_PRESENT),
    N(VK_ERROR_FEATURE_NOT_PRESENT), N(VK_ERROR_INCOMPATIBLE_DRIVER), N(VK_ERROR_TOO_MANY_OBJECTS),
    N(VK_ERROR_FORMAT_NOT_SUPPORTED), N(VK_ERROR_FRAGMENTED_POOL), N(VK_ERROR_UNKNOWN),
    N(VK_ERROR_OUT_OF_POOL_MEMORY), N(VK_ERROR_INVALID_EXTERNAL_HANDLE), N(VK_ERROR_FRAGMENTATION),
    N(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS), N(VK_ERROR_SURFACE_LOST_KHR), N(VK_SUBOPTIMAL_KHR),
    N(VK_ERROR_OUT_OF_DATE_KHR), N(VK_ERROR_VALIDATION_FAILED_EXT),
};
#endif
#undef N

int main(void)
{
    char want[160], long_text[3001];
    int bad;

    tap_plan(13);

    tap_ok(message_has(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, -11,
                       "someCall failed with VK_ERROR_FORMAT_NOT_SUPPORTED (-11): Why."),
           "a VkResult is printed by name and number: %s", clmem_error_message());
    tap_ok(message_has(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, -30, "someCall failed with CL_INVALID_VALUE (-30): Why."),
           "a cl_int is printed by name and number: %s", clmem_error_message());
    tap_ok(message_has(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, 999, "someCall failed with OpenCL code 999: Why."),
           "an OpenCL code no header names keeps its number (NVIDIA's 999): %s", clmem_error_message());
    tap_ok(message_has(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, 123456, "failed with Vulkan code 123456: Why."),
           "so does an unknown VkResult: %s", clmem_error_message());
    tap_ok(message_has(CLMEM_ERR_NO_MEMORY, CLMEM_API_SYSTEM, EMFILE, "(errno 24): Why.") ||
               message_has(CLMEM_ERR_NO_MEMORY, CLMEM_API_SYSTEM, EMFILE, "errno 24: Why."),
           "an errno value carries its number: %s", clmem_error_message());
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    tap_ok(message_has(CLMEM_ERR_NO_MEMORY, CLMEM_API_SYSTEM, EMFILE, "failed with EMFILE (errno 24): Why."),
           "and its name, where the C library has strerrorname_np: %s", clmem_error_message());
#else
    tap_skip("strerrorname_np needs glibc 2.32", "an errno value by name");
#endif
    tap_is_int(clmem_error_native_code(), EMFILE, "the native code itself is still the raw number");

    bad = 0;
    for (size_t i = 0; i < sizeof cl_codes / sizeof cl_codes[0]; i++) {
        snprintf(want, sizeof want, "%s (%d)", cl_codes[i].name, (int)cl_codes[i].code);
        if (!message_has(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, cl_codes[i].code, want)) {
            tap_diag("  wanted \"%s\", got: %s", want, clmem_error_message());
            bad++;
        }
    }
    tap_is_int(bad, 0, "every OpenCL code of <CL/cl.h> tried has its name");
#ifdef HAVE_VULKAN_HEADER
    bad = 0;
    for (size_t i = 0; i < sizeof vk_codes / sizeof vk_codes[0]; i++) {
        snprintf(want, sizeof want, "%s (%d)", vk_codes[i].name, (int)vk_codes[i].code);
        if (!message_has(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, vk_codes[i].code, want)) {
            tap_diag("  wanted \"%s\", got: %s", want, clmem_error_message());
            bad++;
        }
    }
    tap_is_int(bad, 0, "every VkResult tried has the name and value <vulkan/vulkan_core.h> gives it");
#else
    tap_skip("<vulkan/vulkan_core.h> is not installed", "VkResult names against the Vulkan header");
#endif

    /* The limit: 2047 bytes of explanation are kept, more are cut there. */
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[2000] = '\0';
    clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0, "%s", long_text);
    tap_is_int(strlen(clmem_error_message()), 2000, "an explanation of 2000 bytes is kept whole");
    long_text[2000] = 'x';
    long_text[3000] = '\0';
    clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0, "%s", long_text);
    tap_is_int(strlen(clmem_error_message()), 2047, "one of 3000 is cut at 2047");
    clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkSomeVeryLongCallName", -1000072003, "%s", long_text);
    tap_ok(strlen(clmem_error_message()) <= 2367 &&
               strncmp(clmem_error_message(),
                       "vkSomeVeryLongCallName failed with VK_ERROR_INVALID_EXTERNAL_HANDLE (-1000072003): xxx", 84) ==
                   0,
           "with a call and a long code name, the whole sentence stays within 2367 bytes (%zu)",
           strlen(clmem_error_message()));
    clmem_error_clear();
    tap_ok(strcmp(clmem_error_message(), "No error.") == 0, "clmem_error_clear empties the record");
    return tap_done();
}
