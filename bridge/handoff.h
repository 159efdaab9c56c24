/* SPDX-License-Identifier: MIT */
/* Internal: the handoff of import records between Vulkan and OpenCL
 * (handoff.c). */
#ifndef CLMEM_HANDOFF_H
#define CLMEM_HANDOFF_H
#include "import-record.h"

/* Calls up to this many handles use the stack for their scratch lists. */
#define HANDOFF_STACK 16

/* "The handle" for a one-handle call, "Entry 3" otherwise, in buf. */
const char *clmem__handoff_entry_label(cl_uint count, cl_uint i, char *buf, size_t len);

/* The handoff of records already known to be distinct imports of one
 * bridge, each with `queue` in its queue list (handoff.c). All or nothing:
 * flips every record's `acquired` (CLMEM_ERR_INVALID_VALUE, nothing
 * enqueued, when one is already in the wanted state), enqueues the paths'
 * commands on queue after wait, and *event_out (if not NULL) covers all of
 * them. On an error no record's state is changed and nothing stays
 * enqueued that is not undone (see clmem_bridge_acquire_many). Shared by
 * the public calls, the frame ring and the teardown. */
clmem_status clmem__import_handoff(bool to_opencl, struct bridge_import *const *recs, cl_uint count,
                                   cl_command_queue queue, cl_uint n, const cl_event *wait, cl_event *event_out);

/* The teardown's release of a record left acquired: a count-1 handoff. */
clmem_status clmem__import_release_on(struct bridge_import *rec, cl_command_queue queue, cl_uint n,
                                      const cl_event *wait, cl_event *event_out);
#endif
