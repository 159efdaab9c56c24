/* SPDX-License-Identifier: MIT */
/* Internal: what works on a bridge's device pair, worked out once when the
 * bridge is made. Every question "can path X / semaphore mode Y work
 * here" is answered from this one record: clmem_bridge_caps(),
 * clmem_bridge_check_path(), the import's path choice, the semaphore's
 * BEST, and clmem-info (through the public calls). */
#ifndef CLMEM_CAPS_H
#define CLMEM_CAPS_H
#include "opencl/cl-compat.h"
#include "clmem-bridge.h"
#include "vkfn.h"

#include <stdbool.h>

#define CAPS_MESSAGE_MAX 640

/* One answer: CLMEM_OK, or the status and sentence a failed check gives. */
struct cap_answer {
    clmem_status status;
    char message[CAPS_MESSAGE_MAX];
};

struct bridge_caps {
    uint32_t bits;                     /* clmem_bridge_cap */
    struct cap_answer path[3];         /* by CAPS_PATH(a concrete clmem_bridge_path) */
    struct cap_answer cl_import[4];    /* the OpenCL side alone of the fd paths (clmem_bridge_import_fd) */
    struct cap_answer semaphore[3];    /* by clmem_bridge_semaphore_mode: [OPAQUE_FD], [SYNC_FD] */
    cl_uint base_align_bytes;          /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes, at least 1 */
    bool uses_host_memory;             /* CPU or host-unified OpenCL device: host-mapped is zero-copy */
    /* images (image.c) */
    cl_uint image_pitch_align;         /* CL_DEVICE_IMAGE_PITCH_ALIGNMENT, texels; 0: no images from buffers */
    cl_uint image_base_align;          /* CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, texels; 0 if not reported */
    struct cap_answer image_view;      /* can the device make image2d views of buffers at all */
    struct cap_answer image_from_fd;   /* the OpenCL side of an optimal-tiling import, before format and check */
    char cl_device_name[256];
    char cl_platform_name[256];
    char vk_device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    uint32_t vk_vendor_id;             /* VkPhysicalDeviceProperties.vendorID */
};

/* The index in bridge_caps.path of a concrete path: opaque fd 0, dma-buf
 * 1, host-mapped 2. */
#define CAPS_PATH(p) ((p)-CLMEM_BRIDGE_PATH_OPAQUE_FD)

#define VK_VENDOR_NVIDIA 0x10deu

/* Ask both APIs, once. Errors only when a query that every device answers
 * fails (CLMEM_ERR_OPENCL); an unsupported path is an answer, not an error. */
clmem_status clmem__caps_compute(struct bridge_caps *caps, const struct vkfn *vk, VkPhysicalDevice pd,
                                 cl_device_id cl_device);

/* Record `a` as this thread's last error (when it is not CLMEM_OK) and
 * return its status. */
clmem_status clmem__caps_report(const struct cap_answer *a);
#endif
