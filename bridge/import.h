/* SPDX-License-Identifier: MIT */
/* Internal: importing Vulkan memory into OpenCL (import.c): the checks
 * every import passes, the choice of path, and the record behind a handle.
 * The record itself is import-record.h's. */
#ifndef CLMEM_IMPORT_H
#define CLMEM_IMPORT_H
#include "import-record.h"

/* The record behind a bridge handle, or NULL for any other handle. */
struct bridge_import *clmem__import_of_handle(const clmem_handle *h);

/*
 * The import every Vulkan import goes through (clmem_bridge_import_vk and
 * each plane of clmem_bridge_import_vk_image): memory's device and range
 * checks, the cache, the path choice and the driver import of
 * req->memory's [req->offset, + req->size), with req->row_pitch and
 * req->image on the handles. req is filled but for allocation_size, which
 * this sets. The caller has checked b, queue, out and memory for NULL.
 */
clmem_status clmem__import_vk_request(clmem_bridge *b, struct import_request *req, clmem_bridge_path path,
                                      clmem_keepalive *vk_keepalive, clmem_handle **out);

/* The checks of clmem__import_vk_request in the order clmem-bridge.h's
 * "Which error wins" gives them, for a caller (image.c) that has checks of
 * its own to put between them: check_own is step 2, req's arguments on
 * their own (host-pointer flags, an unknown path, the range; it sets
 * req->allocation_size), check_fits step 3 (the memory's VkDevice, the
 * queue's context). Recorded when they fail. */
clmem_status clmem__import_check_own(struct import_request *req, clmem_bridge_path path);
clmem_status clmem__import_check_fits(clmem_bridge *b, const struct import_request *req);
#endif
