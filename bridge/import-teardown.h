/* SPDX-License-Identifier: MIT */
/* Internal: the teardown of an import after its last handle went
 * (import-teardown.c), and the bridge's list of those teardowns, which
 * clmem_bridge_finish() polls. */
#ifndef CLMEM_IMPORT_TEARDOWN_H
#define CLMEM_IMPORT_TEARDOWN_H
#include "import-record.h"

/* The release callback of every import anchor; also the tag that finds the
 * record from a handle. */
void clmem__import_anchor_release(void *user);

/* Start the teardown of an import whose last handle went: the markers on
 * its queues. Once; a second call returns at once (import-teardown.c). */
void clmem__import_start_teardown(struct bridge_import *rec);

/* Register the destructor callback on rec->parent (import-teardown.c). */
clmem_status clmem__import_arm_destructor(struct bridge_import *rec);

/* The record's own count (the teardown's reference, and one per marker
 * callback still due); the last put frees the record. */
void clmem__import_get(struct bridge_import *rec);
void clmem__import_put(struct bridge_import *rec);

/* clmem_bridge_finish(): do what the marker callbacks would, for every
 * import of b that is tearing down and whose markers completed (the
 * driver may run those callbacks late). Called without b's lock. */
void clmem__import_poll_dying(clmem_bridge *b);
#endif
