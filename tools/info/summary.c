/* SPDX-License-Identifier: MIT */
/* clmem-info: the Summary, which counts every row the report holds by what
 * it says: the path rows, the semaphore rows, each way of each image line,
 * and a bridge whose clmem_bridge_finish failed. The text and the JSON
 * both print these counts. */
#include "config.h"

#include "info.h"

#include <string.h>

void count_rows(const struct report *r, struct row_counts *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < r->n_rows; i++)
        c->paths[r->rows[i].status]++;
    for (int i = 0; i < r->n_bridges; i++) {
        const struct bridge_rec *br = &r->bridges[i];
        for (int k = 0; k < br->n_sem; k++)
            c->semaphores[br->sem[k].status]++;
        if (br->created && br->error[0])
            c->bridges_failed++;
    }
    for (int i = 0; i < r->n_images; i++)
        for (int w = 0; w < IMG_WAYS; w++)
            c->image_ways[r->images[i].status[w]]++;
    for (int s = 0; s < 3; s++)
        c->all[s] = c->paths[s] + c->semaphores[s] + c->image_ways[s];
    c->all[ROW_FAILED] += c->bridges_failed;
}
