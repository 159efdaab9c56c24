/* SPDX-License-Identifier: MIT */
/* The names of the native codes an error message prints: a cl_int error
 * and a VkResult by the name their headers give them, so that a message
 * says "VK_ERROR_FORMAT_NOT_SUPPORTED (-11)" and not "Vulkan code -11".
 * The Vulkan values are written out: libclmem never includes
 * <vulkan/vulkan.h> (a core-only build has none), and VkResult values
 * never change once published. t/core/error-message checks the table against
 * the Vulkan headers where they are installed. */
#include "config.h"
#include "clmem.h" /* <CL/cl.h>, for OpenCL 3.0 */
#include "native-names.h"

#define CL_NAME(x) \
    case x: return #x

const char *clmem__cl_error_name(int32_t code)
{
    switch (code) {
        CL_NAME(CL_SUCCESS);
        CL_NAME(CL_DEVICE_NOT_FOUND);
        CL_NAME(CL_DEVICE_NOT_AVAILABLE);
        CL_NAME(CL_COMPILER_NOT_AVAILABLE);
        CL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE);
        CL_NAME(CL_OUT_OF_RESOURCES);
        CL_NAME(CL_OUT_OF_HOST_MEMORY);
        CL_NAME(CL_PROFILING_INFO_NOT_AVAILABLE);
        CL_NAME(CL_MEM_COPY_OVERLAP);
        CL_NAME(CL_IMAGE_FORMAT_MISMATCH);
        CL_NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED);
        CL_NAME(CL_BUILD_PROGRAM_FAILURE);
        CL_NAME(CL_MAP_FAILURE);
        CL_NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET);
        CL_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        CL_NAME(CL_COMPILE_PROGRAM_FAILURE);
        CL_NAME(CL_LINKER_NOT_AVAILABLE);
        CL_NAME(CL_LINK_PROGRAM_FAILURE);
        CL_NAME(CL_DEVICE_PARTITION_FAILED);
        CL_NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
        CL_NAME(CL_INVALID_VALUE);
        CL_NAME(CL_INVALID_DEVICE_TYPE);
        CL_NAME(CL_INVALID_PLATFORM);
        CL_NAME(CL_INVALID_DEVICE);
        CL_NAME(CL_INVALID_CONTEXT);
        CL_NAME(CL_INVALID_QUEUE_PROPERTIES);
        CL_NAME(CL_INVALID_COMMAND_QUEUE);
        CL_NAME(CL_INVALID_HOST_PTR);
        CL_NAME(CL_INVALID_MEM_OBJECT);
        CL_NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
        CL_NAME(CL_INVALID_IMAGE_SIZE);
        CL_NAME(CL_INVALID_SAMPLER);
        CL_NAME(CL_INVALID_BINARY);
        CL_NAME(CL_INVALID_BUILD_OPTIONS);
        CL_NAME(CL_INVALID_PROGRAM);
        CL_NAME(CL_INVALID_PROGRAM_EXECUTABLE);
        CL_NAME(CL_INVALID_KERNEL_NAME);
        CL_NAME(CL_INVALID_KERNEL_DEFINITION);
        CL_NAME(CL_INVALID_KERNEL);
        CL_NAME(CL_INVALID_ARG_INDEX);
        CL_NAME(CL_INVALID_ARG_VALUE);
        CL_NAME(CL_INVALID_ARG_SIZE);
        CL_NAME(CL_INVALID_KERNEL_ARGS);
        CL_NAME(CL_INVALID_WORK_DIMENSION);
        CL_NAME(CL_INVALID_WORK_GROUP_SIZE);
        CL_NAME(CL_INVALID_WORK_ITEM_SIZE);
        CL_NAME(CL_INVALID_GLOBAL_OFFSET);
        CL_NAME(CL_INVALID_EVENT_WAIT_LIST);
        CL_NAME(CL_INVALID_EVENT);
        CL_NAME(CL_INVALID_OPERATION);
        CL_NAME(CL_INVALID_GL_OBJECT);
        CL_NAME(CL_INVALID_BUFFER_SIZE);
        CL_NAME(CL_INVALID_MIP_LEVEL);
        CL_NAME(CL_INVALID_GLOBAL_WORK_SIZE);
        CL_NAME(CL_INVALID_PROPERTY);
        CL_NAME(CL_INVALID_IMAGE_DESCRIPTOR);
        CL_NAME(CL_INVALID_COMPILER_OPTIONS);
        CL_NAME(CL_INVALID_LINKER_OPTIONS);
        CL_NAME(CL_INVALID_DEVICE_PARTITION_COUNT);
        CL_NAME(CL_INVALID_PIPE_SIZE);
        CL_NAME(CL_INVALID_DEVICE_QUEUE);
        CL_NAME(CL_INVALID_SPEC_ID);
#ifdef CL_MAX_SIZE_RESTRICTION_EXCEEDED /* OpenCL 3.0 headers */
        CL_NAME(CL_MAX_SIZE_RESTRICTION_EXCEEDED);
#endif
    /* Extension codes the bridge's calls can return (cl_khr_icd,
     * cl_khr_semaphore, cl_khr_external_memory); written out, as older
     * cl_ext.h headers lack some of them. */
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    case -1142: return "CL_INVALID_SEMAPHORE_KHR";
    }
    return NULL;
}

const char *clmem__vk_result_name(int32_t code)
{
    switch (code) {
    case 0: return "VK_SUCCESS";
    case 1: return "VK_NOT_READY";
    case 2: return "VK_TIMEOUT";
    case 3: return "VK_EVENT_SET";
    case 4: return "VK_EVENT_RESET";
    case 5: return "VK_INCOMPLETE";
    case -1: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case -2: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case -3: return "VK_ERROR_INITIALIZATION_FAILED";
    case -4: return "VK_ERROR_DEVICE_LOST";
    case -5: return "VK_ERROR_MEMORY_MAP_FAILED";
    case -6: return "VK_ERROR_LAYER_NOT_PRESENT";
    case -7: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case -8: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case -9: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case -10: return "VK_ERROR_TOO_MANY_OBJECTS";
    case -11: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case -12: return "VK_ERROR_FRAGMENTED_POOL";
    case -13: return "VK_ERROR_UNKNOWN";
    case -1000069000: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case -1000072003: return "VK_ERROR_INVALID_EXTERNAL_HANDLE";
    case -1000161000: return "VK_ERROR_FRAGMENTATION";
    case -1000257000: return "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS";
    case 1000297000: return "VK_PIPELINE_COMPILE_REQUIRED";
    case -1000000000: return "VK_ERROR_SURFACE_LOST_KHR";
    case -1000000001: return "VK_ERROR_NATIVE_WINDOW_IN_USE_KHR";
    case 1000001003: return "VK_SUBOPTIMAL_KHR";
    case -1000001004: return "VK_ERROR_OUT_OF_DATE_KHR";
    case -1000003001: return "VK_ERROR_INCOMPATIBLE_DISPLAY_KHR";
    case -1000011001: return "VK_ERROR_VALIDATION_FAILED_EXT";
    case -1000012000: return "VK_ERROR_INVALID_SHADER_NV";
    case -1000023000: return "VK_ERROR_IMAGE_USAGE_NOT_SUPPORTED_KHR";
    case -1000023001: return "VK_ERROR_VIDEO_PICTURE_LAYOUT_NOT_SUPPORTED_KHR";
    case -1000023002: return "VK_ERROR_VIDEO_PROFILE_OPERATION_NOT_SUPPORTED_KHR";
    case -1000023003: return "VK_ERROR_VIDEO_PROFILE_FORMAT_NOT_SUPPORTED_KHR";
    case -1000023004: return "VK_ERROR_VIDEO_PROFILE_CODEC_NOT_SUPPORTED_KHR";
    case -1000023005: return "VK_ERROR_VIDEO_STD_VERSION_NOT_SUPPORTED_KHR";
    case -1000158000: return "VK_ERROR_INVALID_DRM_FORMAT_MODIFIER_PLANE_LAYOUT_EXT";
    case -1000174001: return "VK_ERROR_NOT_PERMITTED_KHR";
    case -1000255000: return "VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT";
    case 1000268000: return "VK_THREAD_IDLE_KHR";
    case 1000268001: return "VK_THREAD_DONE_KHR";
    case 1000268002: return "VK_OPERATION_DEFERRED_KHR";
    case 1000268003: return "VK_OPERATION_NOT_DEFERRED_KHR";
    case -1000338000: return "VK_ERROR_COMPRESSION_EXHAUSTED_EXT";
    }
    return NULL;
}
