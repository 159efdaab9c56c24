/* SPDX-License-Identifier: MIT */
/* clmem_status_str and clmem_status_name: one distinct sentence, and the
 * enumerator's name, per status. */
#include "config.h"
#include "clmem.h"
#include "export.h"

CLMEM_EXPORT const char *clmem_status_str(clmem_status s)
{
    switch (s) {
    case CLMEM_OK: return "Success.";
    case CLMEM_ERR_NULL_POINTER: return "A required pointer or handle argument is NULL.";
    case CLMEM_ERR_ZERO_SIZE: return "The size is zero.";
    case CLMEM_ERR_INVALID_VALUE: return "A value breaks its documented rule.";
    case CLMEM_ERR_CONTEXT_MISMATCH: return "The command queue's context does not own the memory object.";
    case CLMEM_ERR_NOT_A_BUFFER: return "A non-zero row pitch was given for a memory object that is not a buffer.";
    case CLMEM_ERR_OPENCL: return "An OpenCL call failed.";
    case CLMEM_ERR_VULKAN: return "A Vulkan call failed.";
    case CLMEM_ERR_UNSUPPORTED: return "A needed extension or handle type is not supported.";
    case CLMEM_ERR_DEVICE_MISMATCH: return "The Vulkan and OpenCL devices are not the same device.";
    case CLMEM_ERR_NO_MEMORY: return "Out of memory.";
    case CLMEM_ERR_IN_USE: return "Handles or semaphores of the object are still alive.";
    case CLMEM_ERR_TIMEOUT: return "Device work was still pending when the timeout ran out.";
    }
    return "Unknown clmem status value.";
}

CLMEM_EXPORT const char *clmem_status_name(clmem_status s)
{
    switch (s) {
#define NAME(x) \
    case x: return #x
        NAME(CLMEM_OK);
        NAME(CLMEM_ERR_NULL_POINTER);
        NAME(CLMEM_ERR_ZERO_SIZE);
        NAME(CLMEM_ERR_INVALID_VALUE);
        NAME(CLMEM_ERR_CONTEXT_MISMATCH);
        NAME(CLMEM_ERR_NOT_A_BUFFER);
        NAME(CLMEM_ERR_OPENCL);
        NAME(CLMEM_ERR_VULKAN);
        NAME(CLMEM_ERR_UNSUPPORTED);
        NAME(CLMEM_ERR_DEVICE_MISMATCH);
        NAME(CLMEM_ERR_NO_MEMORY);
        NAME(CLMEM_ERR_IN_USE);
        NAME(CLMEM_ERR_TIMEOUT);
#undef NAME
    }
    return "CLMEM_STATUS_UNKNOWN";
}
