/* SPDX-License-Identifier: MIT */
/* Internal: the names of native codes, for the messages of the last-error
 * record (error.c). */
#ifndef CLMEM_NATIVE_NAMES_H
#define CLMEM_NATIVE_NAMES_H
#include <stdint.h>

/* "CL_INVALID_VALUE" for -30...; NULL for a code no OpenCL header names. */
const char *clmem__cl_error_name(int32_t code);

/* "VK_ERROR_FORMAT_NOT_SUPPORTED" for -11...; NULL for a value that is no
 * VkResult. */
const char *clmem__vk_result_name(int32_t code);
#endif
