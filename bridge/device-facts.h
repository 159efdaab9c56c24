/* Internal: what an import needs to know about an OpenCL device, asked once
 * per device and kept. The queries behind it (the extension string, the
 * handle-type list, the alignment) cost about 10 us per import on NVIDIA,
 * measured by clmem-bench against the raw calls; a driver import costs
 * 75-200 us, so asking every time made the library miss its 2 % target. */
#ifndef CLMEM_DEVICE_FACTS_H
#define CLMEM_DEVICE_FACTS_H
#include "cl-compat.h"
#include <stdbool.h>

struct cl_device_facts {
    cl_device_id device;
    cl_platform_id platform;
    cl_uint base_align_bytes; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes, at least 1 */
    bool imports_opaque_fd;   /* extension and handle type both present */
    bool imports_dma_buf;
};

/* The facts for device, from the table or asked now. NULL, with the error
 * recorded, when the device cannot be queried (not a valid device).
 * Entries live for the process, as root devices do; past 64 devices the
 * facts are asked again on each call (a sub-device released and another
 * made at its address would get its facts: the same parent's, in practice). */
const struct cl_device_facts *clmem__cl_device_facts(cl_device_id device);
#endif
