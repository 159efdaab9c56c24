/* SPDX-License-Identifier: MIT */
#include "config.h"
#include "anchor-set.h"
#include "error-private.h"
#include "fault.h"

#include <stdint.h>
#include <stdlib.h>

#define FIRST_CAPACITY 4u

/* Anchors are heap pointers: drop the alignment bits, then let a multiply
 * spread the rest over the high bits, from which the slot is taken. */
static unsigned slot_of(const clmem_keepalive *ka, unsigned capacity)
{
    uint64_t h = ((uint64_t)(uintptr_t)ka >> 4) * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 32) & (capacity - 1);
}

/* The slot holding ka, or the free slot where it would go. The table is
 * never full (at most half), so the search ends. */
static unsigned find_slot(const struct anchor_set *set, const clmem_keepalive *ka)
{
    unsigned i = slot_of(ka, set->capacity);
    while (set->slots[i] && set->slots[i] != ka)
        i = (i + 1) & (set->capacity - 1);
    return i;
}

static clmem_status no_memory(void)
{
    return clmem__fail(CLMEM_ERR_NO_MEMORY, "Holding the import's Vulkan keepalive failed.");
}

static clmem_status grow(struct anchor_set *set)
{
    unsigned capacity = set->capacity ? set->capacity * 2 : FIRST_CAPACITY;
    struct anchor_set bigger = {calloc(capacity, sizeof *bigger.slots), capacity, set->count};

    if (!bigger.slots)
        return no_memory();
    for (unsigned i = 0; i < set->capacity; i++)
        if (set->slots[i])
            bigger.slots[find_slot(&bigger, set->slots[i])] = set->slots[i];
    free(set->slots);
    *set = bigger;
    return CLMEM_OK;
}

clmem_status clmem__anchor_set_hold(struct anchor_set *set, clmem_keepalive *ka)
{
    clmem_status s;

    if (!ka || (set->capacity && set->slots[find_slot(set, ka)] == ka))
        return CLMEM_OK;
    /* A new anchor. The fault point is passed for each one, as when every
     * anchor grew a list. */
    if (FAULT("import_anchor_list"))
        return no_memory();
    if ((set->count + 1) * 2 > set->capacity && (s = grow(set)) != CLMEM_OK)
        return s;
    set->slots[find_slot(set, ka)] = clmem_keepalive_ref(ka);
    set->count++;
    return CLMEM_OK;
}

void clmem__anchor_set_drop_all(struct anchor_set *set)
{
    for (unsigned i = 0; i < set->capacity; i++)
        if (set->slots[i])
            clmem_keepalive_unref(set->slots[i]);
    free(set->slots);
    *set = (struct anchor_set){NULL, 0, 0};
}
