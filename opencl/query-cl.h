/* SPDX-License-Identifier: MIT */
/* Shared on purpose by the bridge and clmem-info, so that clmem-info asks
 * OpenCL the bridge's way: what OpenCL says about its devices. Small
 * wrappers that turn the two-call size/data queries into one call each. No
 * Vulkan here: clmem-info links them (opencl/libclmem-opencl.la,
 * opencl/opencl.am) even when the bridge is not built; libclmem-av and
 * libclmem-ipc link them for the queue query, which records its
 * failure in libclmem's error record (clmem_error_set). */
#ifndef CLMEM_QUERY_CL_H
#define CLMEM_QUERY_CL_H
#include "cl-compat.h"
#include "clmem.h"
#include <stdbool.h>
#include <stddef.h>

/* Is `name` a whole word of the device's CL_DEVICE_EXTENSIONS? */
bool clmem__cl_device_has_extension(cl_device_id device, const char *name);

/* Does a handle-type list query (CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
 * CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR; the answer is bytes, not a
 * count) list `type`? */
bool clmem__cl_device_lists_handle_type(cl_device_id device, cl_device_info query, cl_uint type);

/* The whole answer of a handle-type list query: a malloc'd array of *n
 * types (free it), not NULL for an empty list; NULL with *n = 0 when the
 * query fails (CL_INVALID_VALUE: the device lacks the extension, which is
 * not the same as an empty list) or memory runs out. */
cl_uint *clmem__cl_device_handle_types(cl_device_id device, cl_device_info query, size_t *n);

/* CL_DEVICE_UUID_KHR into uuid[16]; false when cl_khr_device_uuid is absent
 * or the query fails. */
bool clmem__cl_device_uuid(cl_device_id device, unsigned char uuid[16]);

/* A CPU device, or one reporting CL_DEVICE_HOST_UNIFIED_MEMORY: host
 * pointers are used in place, so host-mapped sharing copies nothing. */
bool clmem__cl_device_uses_host_memory(cl_device_id device);

/* CLMEM_OK when the queue runs its commands in order (its
 * CL_QUEUE_PROPERTIES lack CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE). Else
 * records why and returns it: the query's failure as CLMEM_ERR_OPENCL with
 * the native code, or CLMEM_ERR_INVALID_VALUE with "the queue is out of
 * order: <why>", where `why` is the caller's sentence saying what an
 * out-of-order queue would break. */
clmem_status clmem__cl_require_in_order(cl_command_queue queue, const char *why);

/* Where a sub-buffer may start on the device, in bytes
 * (CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits; at least 1). CLMEM_OK, or the
 * query's failure recorded as CLMEM_ERR_OPENCL with the native code. */
clmem_status clmem__cl_device_base_align(cl_device_id device, cl_uint *bytes);

/* CL_DEVICE_NAME and the platform's CL_PLATFORM_NAME, for messages. */
void clmem__cl_device_names(cl_device_id device, char *device_name, size_t device_len, char *platform_name,
                     size_t platform_len);
#endif
