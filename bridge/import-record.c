/* SPDX-License-Identifier: MIT */
/* The import record's own lists: the queues its handles were made for,
 * and the cl_mem they carry. */
#include "config.h"
#include "error-private.h"
#include "fault.h"
#include "import-record.h"

#include <stdlib.h>

clmem_status clmem__import_add_queue(struct bridge_import *rec, cl_command_queue queue)
{
    clmem_status s = CLMEM_OK;
    bool listed = false;

    if (queue == rec->home_queue) /* listed from the import on (clmem__import_has_queue) */
        return CLMEM_OK;
    pthread_mutex_lock(&rec->lock);
    for (unsigned i = 0; i < rec->queue_count && !listed; i++)
        listed = rec->queues[i] == queue;
    if (!listed) {
        cl_command_queue *grown =
            FAULT("import_queue_list") ? NULL : realloc(rec->queues, (rec->queue_count + 1) * sizeof *rec->queues);
        cl_int err = grown ? clRetainCommandQueue(queue) : CL_SUCCESS;
        if (grown)
            rec->queues = grown;
        if (!grown)
            s = clmem__fail(CLMEM_ERR_NO_MEMORY, "Growing the import's queue list failed.");
        else if (err != CL_SUCCESS)
            s = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clRetainCommandQueue", err,
                                "Retaining the queue failed.");
        else
            rec->queues[rec->queue_count++] = queue;
    }
    pthread_mutex_unlock(&rec->lock);
    return s;
}

bool clmem__import_has_queue(struct bridge_import *rec, cl_command_queue queue)
{
    bool listed = false;

    /* The queue the import was made on joined the list before the import
     * was handed out and never leaves it, and home_queue is not written
     * after that: no lock for the usual case, a hit or a handoff on that
     * queue (clmem-bench's scaling measure: the lock was most of
     * acquire_many's check). */
    if (queue == rec->home_queue)
        return true;
    pthread_mutex_lock(&rec->lock);
    for (unsigned i = 0; i < rec->queue_count && !listed; i++)
        listed = rec->queues[i] == queue;
    pthread_mutex_unlock(&rec->lock);
    return listed;
}

cl_mem clmem__import_handed_mem(const struct bridge_import *rec)
{
    return rec->image ? rec->image : rec->view ? rec->view : rec->parent;
}
