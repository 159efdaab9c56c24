/* SPDX-License-Identifier: MIT */
/* Internal: the two halves of clmem_handle_wrap, shared with the checked
 * variant so both validate arguments and allocate the same way. */
#ifndef CLMEM_HANDLE_H
#define CLMEM_HANDLE_H
#include "clmem.h"

/* NULL checks; sets *out = NULL first when out is not NULL. */
clmem_status clmem__handle_check_args(cl_mem mem, cl_command_queue queue, clmem_handle **out);

/* Allocates the handle and takes the keepalive reference. */
clmem_status clmem__handle_create(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                           clmem_keepalive *keepalive, clmem_handle **out);
#endif
