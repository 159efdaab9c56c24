/* clmem_bridge_import_vk_pitched: a buffer import whose handles carry a row
 * pitch. The pitch is checked here, before anything is imported, with the
 * rules clmem_handle_wrap_checked() applies to a handle's pitch; the import
 * itself is the one every Vulkan import goes through (import.c), which
 * already puts a request's row_pitch on its handles and in the cache key. */
#include "config.h"
#include "export.h"
#include "import.h"

CLMEM_EXPORT clmem_status clmem_bridge_import_vk_pitched(clmem_bridge *b, const clmem_bridge_vk_memory *memory,
                                                         VkDeviceSize offset, VkDeviceSize size, uint32_t row_pitch,
                                                         uint32_t element_size, clmem_bridge_path path,
                                                         clmem_keepalive *vk_keepalive, cl_command_queue queue,
                                                         cl_mem_flags flags, clmem_handle **out)
{
    struct import_request req = {memory, -1, 0, offset, size, queue, flags, row_pitch, NULL};

    if (out)
        *out = NULL;
    if (!b || !queue || !out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !b ? "bridge" : !queue ? "queue" : "out");
    if (!memory || !memory->device || !memory->memory)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !memory ? "memory" : !memory->device ? "memory->device" : "memory->memory");
    if (size == 0)
        return clmem_error_set(CLMEM_ERR_ZERO_SIZE, CLMEM_API_NONE, NULL, 0, "The size is zero.");
    if (row_pitch == 0)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "row_pitch is 0; a packed range needs no pitch: use clmem_bridge_import_vk().");
    if (row_pitch > size)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "row_pitch %u is larger than the range's %llu bytes.", (unsigned)row_pitch,
                               (unsigned long long)size);
    if (element_size != 0 && row_pitch % element_size != 0)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "row_pitch %u is not a multiple of the %u-byte element, so no leading dimension in "
                               "elements is exact.",
                               (unsigned)row_pitch, (unsigned)element_size);
    return clmem__import_vk_request(b, &req, path, vk_keepalive, out);
}
