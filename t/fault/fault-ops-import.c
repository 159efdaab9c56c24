/* SPDX-License-Identifier: MIT */
/* The fault-injection test's operations on the bridge and its imports
 * (t/fault/fault-run.h lists the groups): creating and dropping a bridge,
 * importing Vulkan memory, fds, images and pieces, handles for more
 * queues, dropping handles and finishing the bridge. */
#include "fault-run.h"
#include "t/lib/tap.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The test's own export of the Vulkan memory, for clmem_bridge_import_fd. */
static int export_fd(struct run *r, int slot)
{
    struct fault_env *e = r->e;
    PFN_vkGetMemoryFdKHR get_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(e->vk.device, "vkGetMemoryFdKHR");
    VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                 .memory = r->o.memory.memory,
                                 .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;

    if (!get_fd || get_fd(e->vk.device, &info, &fd) != VK_SUCCESS || fstat(fd, &r->fd_stat[slot]) != 0)
        tap_bail("the test's own vkGetMemoryFdKHR failed");
    return fd;
}

/* Still open, and still the same file (not another that reused the number). */
bool fd_is_callers(const struct run *r, int slot)
{
    struct stat st;
    return fstat(r->fd[slot], &st) == 0 && st.st_dev == r->fd_stat[slot].st_dev &&
           st.st_ino == r->fd_stat[slot].st_ino;
}

/* The bridge and its imports: one operation, as do_op (t/fault/fault-run.c)
 * hands it over. */
clmem_status fault_do_import_op(struct run *r, struct op op)
{
    struct fault_env *e = r->e;
    VkDeviceSize offset = op.range == SUB ? e->align : 0;
    VkDeviceSize size = op.range == SUB ? SUB_SIZE : r->o.memory.allocation_size;
    cl_command_queue queue = e->queues[op.queue];
    struct probe *p;
    clmem_status s;

    switch (op.kind) {
    case OP_IMPORT:
        p = probe_take(r);
        r->h[op.slot] = JUNK_HANDLE;
        s = clmem_bridge_import_vk(r->b, &r->o.memory, offset, size, r->seq->path, p->ka, queue, CL_MEM_READ_WRITE,
                                   &r->h[op.slot]);
        probe_after_import(r, p, s, r->h[op.slot]);
        return s;
    case OP_IMPORT_FD:
        if (r->fd[op.slot] < 0)
            r->fd[op.slot] = export_fd(r, op.slot);
        p = probe_take(r);
        r->h[op.slot] = JUNK_HANDLE;
        s = clmem_bridge_import_fd(r->b, r->fd[op.slot], CLMEM_BRIDGE_PATH_OPAQUE_FD, r->o.memory.allocation_size,
                                   offset, size, p->ka, queue, CL_MEM_READ_WRITE, &r->h[op.slot]);
        probe_after_import(r, p, s, r->h[op.slot]);
        if (s == CLMEM_OK)
            r->fd[op.slot] = -1; /* the import's now */
        return s;
    case OP_FOR_QUEUE:
        r->h[op.slot] = JUNK_HANDLE;
        return clmem_bridge_handle_for_queue(r->h[op.src], queue, &r->h[op.slot]);
    case OP_IMPORT_IMAGE:
        p = probe_take(r);
        r->h[op.slot] = JUNK_HANDLE;
        s = clmem_bridge_import_vk_image(r->b, &r->image, 0, r->seq->path, p->ka, queue, CL_MEM_READ_WRITE,
                                         op.flags, &r->h[op.slot]);
        probe_after_import(r, p, s, r->h[op.slot]);
        return s;
    case OP_DROP:
        clmem_handle_unref(r->h[op.slot]);
        r->h[op.slot] = NULL;
        return CLMEM_OK;
    case OP_FINISH:
        finish(r, "after the drops");
        return CLMEM_OK; /* judged there: a failed finish is a problem, never the row's status */
    case OP_BRIDGE_CREATE: {
        clmem_bridge_info info = {.size = sizeof info,
                                  .instance = e->vk.instance,
                                  .physical_device = e->vk.physical_device,
                                  .device = e->vk.device,
                                  .get_instance_proc_addr = op.slot ? e->vk.get_instance_proc_addr : NULL,
                                  .context = e->f.context,
                                  .cl_device = op.slot ? NULL : e->f.device,
                                  .flags = op.slot ? CLMEM_BRIDGE_NO_IMPORT_CACHE : 0};
        r->bridges[op.slot] = JUNK_BRIDGE;
        r->ctx_before_create = cl_context_refcount(e->f.context);
        return clmem_bridge_create(&info, &r->bridges[op.slot]);
    }
    case OP_BRIDGE_UNREF:
        clmem_bridge_unref(r->bridges[op.slot]);
        r->bridges[op.slot] = NULL;
        return CLMEM_OK;
    case OP_IMPORT_PIECES:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            if (r->h[i])
                continue; /* imported before the failure that is being retried */
            r->failed_slot = i;
            p = probe_take(r);
            r->h[i] = JUNK_HANDLE;
            s = clmem_bridge_import_vk(r->b, &r->o.memory, (VkDeviceSize)i * e->piece, e->piece, r->seq->path, p->ka,
                                       queue, CL_MEM_READ_WRITE, &r->h[i]);
            probe_after_import(r, p, s, r->h[i]);
            if (s != CLMEM_OK)
                return s;
        }
        return CLMEM_OK;
    case OP_DROP_PIECES:
        for (int i = op.slot; i < op.slot + op.count; i++) {
            clmem_handle_unref(r->h[i]);
            r->h[i] = NULL;
            r->acquired_each[i] = false;
        }
        return CLMEM_OK;
    default: tap_bail("%s is not an operation on the bridge and its imports", op_name(op));
    }
}
