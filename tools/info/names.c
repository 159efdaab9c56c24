/* SPDX-License-Identifier: MIT */
/* clmem-info: small helpers and the names it prints for OpenCL's values. */
#include "config.h"

#include "info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fputs("clmem-info: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

void *grow_array(void *array, int used, int *allocated, size_t element)
{
    if (used < *allocated)
        return array;
    *allocated = *allocated ? 2 * *allocated : 8;
    return xrealloc(array, (size_t)*allocated * element);
}

void format_uuid(const unsigned char u[16], char out[37])
{
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* The library names native codes for its own messages (a VkResult as
 * "VK_ERROR_FORMAT_NOT_SUPPORTED (-11)", a cl_int as "CL_INVALID_VALUE
 * (-30)"); its public error record words the tool's failures the same way,
 * so the names live in one place. The record is this thread's, and the
 * message is copied at once. */
void native_failure(char *out, size_t len, clmem_api api, const char *call, int32_t code, const char *detail)
{
    clmem_status status = api == CLMEM_API_VULKAN ? CLMEM_ERR_VULKAN : CLMEM_ERR_OPENCL;

    if (detail)
        clmem_error_set(status, api, call, code, "%s", detail);
    else
        clmem_error_set(status, api, call, code, NULL);
    snprintf(out, len, "%s", clmem_error_message());
}

/* Names from cl_ext.h; a type this table does not know prints as hex. */
static const char *memory_type_name(cl_uint t)
{
    switch (t) {
    case CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR: return "opaque-fd";
    case CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_WIN32_KHR: return "opaque-win32";
    case CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_WIN32_KMT_KHR: return "opaque-win32-kmt";
    case CL_EXTERNAL_MEMORY_HANDLE_D3D11_TEXTURE_KHR: return "d3d11-texture";
    case CL_EXTERNAL_MEMORY_HANDLE_D3D11_TEXTURE_KMT_KHR: return "d3d11-texture-kmt";
    case CL_EXTERNAL_MEMORY_HANDLE_D3D12_HEAP_KHR: return "d3d12-heap";
    case CL_EXTERNAL_MEMORY_HANDLE_D3D12_RESOURCE_KHR: return "d3d12-resource";
    case CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR: return "dma-buf";
    }
    return NULL;
}

static const char *semaphore_type_name(cl_uint t)
{
    switch (t) {
    case CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR: return "opaque-fd";
    case CL_SEMAPHORE_HANDLE_OPAQUE_WIN32_KHR: return "opaque-win32";
    case CL_SEMAPHORE_HANDLE_OPAQUE_WIN32_KMT_KHR: return "opaque-win32-kmt";
    case CL_SEMAPHORE_HANDLE_SYNC_FD_KHR: return "sync-fd";
    case CL_SEMAPHORE_HANDLE_D3D12_FENCE_KHR: return "d3d12-fence";
    }
    return NULL;
}

/* The name of handle type i of ht, or its value in hex. */
const char *handle_type_name(const struct handle_types *ht, cl_uint i, bool memory, char buf[16])
{
    const char *name = memory ? memory_type_name(ht->type[i]) : semaphore_type_name(ht->type[i]);
    if (name)
        return name;
    snprintf(buf, 16, "0x%x", (unsigned)ht->type[i]);
    return buf;
}

const char *cl_type_name(cl_device_type t, char buf[64])
{
    buf[0] = '\0';
    if (t & CL_DEVICE_TYPE_CPU)
        strcat(buf, "|CPU");
    if (t & CL_DEVICE_TYPE_GPU)
        strcat(buf, "|GPU");
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        strcat(buf, "|accelerator");
    if (t & CL_DEVICE_TYPE_CUSTOM)
        strcat(buf, "|custom");
    if (t & CL_DEVICE_TYPE_DEFAULT)
        strcat(buf, "|default");
    return buf[0] ? buf + 1 : "unknown";
}
