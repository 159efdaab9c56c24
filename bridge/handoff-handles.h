/* SPDX-License-Identifier: MIT */
/* Internal: the public handoff calls over handles (handoff-handles.c). */
#ifndef CLMEM_HANDOFF_HANDLES_H
#define CLMEM_HANDOFF_HANDLES_H
#include "import-record.h"

/* clmem_bridge_acquire_many's checks of one call's handles, without the
 * state: each entry is a handle of b's imports (recs_out[i] its record),
 * no import appears twice, and queue is in each import's queue list.
 * CLMEM_ERR_NULL_POINTER / CLMEM_ERR_INVALID_VALUE, recorded, naming the
 * entry. Also used by the frame ring at creation. */
clmem_status clmem__handoff_check(const clmem_bridge *b, cl_uint count, const clmem_handle *const *handles,
                                  cl_command_queue queue, struct bridge_import **recs_out);

/* clmem_bridge_acquire() (to_opencl) and clmem_bridge_release(), for the
 * image live check: their sentence is the calling public function's
 * (lib/error-private.h). */
clmem_status clmem__handoff_one(bool to_opencl, clmem_bridge *b, const clmem_handle *h, cl_uint num_events,
                                const cl_event *wait_list, cl_event *event_out);
#endif
