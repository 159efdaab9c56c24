/* SPDX-License-Identifier: MIT */
/* clmem-info: the report as text. */
#include "config.h"

#include "info.h"

#include <stdio.h>
#include <string.h>

static void print_handle_types(const char *label, const struct handle_types *ht, bool memory, const char *ext)
{
    char hex[16];
    printf("    %-24s", label);
    if (!ht->available)
        printf("unavailable (no %s)", ext);
    else if (ht->n == 0)
        printf("none");
    for (cl_uint i = 0; i < ht->n; i++)
        printf("%s%s", i ? ", " : "", handle_type_name(ht, i, memory, hex));
    putchar('\n');
}

static void print_text_cl_device(const struct cl_dev *d)
{
    char buf[64], uuid[37];
    printf("  device %d.%d: %s\n", d->platform, d->index, d->name);
    printf("    %-24s%s\n", "type:", cl_type_name(d->type, buf));
    if (d->has_uuid)
        format_uuid(d->uuid, uuid);
    printf("    %-24s%s\n", "device UUID:", d->has_uuid ? uuid : "unavailable (no cl_khr_device_uuid)");
    print_handle_types("memory import types:", &d->memory_types, true, "cl_khr_external_memory");
    print_handle_types("semaphore import types:", &d->semaphore_types, false, "cl_khr_external_semaphore");
    printf("    %-24s%s\n", "host unified memory:", d->host_unified ? "yes" : "no");
    printf("    %-24s%u bits (%u bytes)\n", "base address alignment:", (unsigned)d->align_bits,
           (unsigned)d->align_bits / 8);
    printf("    %-24s%s\n", "sharing extensions:", d->extensions[0] ? d->extensions : "none");
}

static void print_text_vk_device(const struct report *r, int i)
{
    const struct vk_dev *v = &r->vk[i];
    char uuid[37];

    if (!v->opened) {
        printf("device %d: could not be opened: %s\n", v->index, v->reason);
        return;
    }
    format_uuid(v->uuid, uuid);
    printf("device %d: %s\n", v->index, v->name);
    printf("  %-32s%s\n", "type:", v->type);
    printf("  %-32s%s\n", "device UUID:", uuid);
    printf("  %-32s%s\n", "API version:", v->api_version);
    printf("  %-32s%s\n", "VK_KHR_external_memory_fd:", v->has_memory_fd ? "yes" : "no");
    printf("  %-32s%s\n", "VK_EXT_external_memory_dma_buf:", v->has_dma_buf ? "yes" : "no");
    printf("  %-32s%s\n", "VK_KHR_external_semaphore_fd:", v->has_semaphore_fd ? "yes" : "no");
    if (v->paired >= 0)
        printf("  %-32sdevice %d.%d: %s\n", "paired OpenCL device:", r->cl[v->paired].platform,
               r->cl[v->paired].index, r->cl[v->paired].name);
    else
        printf("  %-32snone (%s: %s)\n", "paired OpenCL device:", v->pair_status, v->reason);
}

static void print_text_row(const struct row *row)
{
    printf("  %-12s ", row->path);
    if (row->status == ROW_UNSUPPORTED) {
        printf("unsupported: %s\n", row->reason);
    } else if (row->status == ROW_FAILED) {
        printf("FAILED: %s\n", row->reason);
    } else {
        printf("ok");
        if (row->zero_copy >= 0 && strcmp(row->path, "host-mapped") == 0)
            fputs(row->zero_copy ? ", zero-copy" : ", not zero-copy (copies at acquire and release)", stdout);
        printf(", import %ld us, handoff %ld us\n", row->import_us, row->handoff_us);
    }
}

/* What the pair's bridge says of the semaphore modes, and a failed
 * clmem_bridge_finish, under the pair's path rows. */
static void print_text_bridge(const struct bridge_rec *br)
{
    for (int i = 0; i < br->n_sem; i++) {
        const struct sem_rec *sr = &br->sem[i];
        printf("  %-12s %s ", "semaphore", sr->mode);
        if (sr->status == ROW_OK)
            printf("supported (the bridge's answer; not run live)\n");
        else
            printf("%s: %s\n", sr->status == ROW_UNSUPPORTED ? "unsupported" : "FAILED", sr->reason);
    }
    if (br->created && br->error[0])
        printf("  %-12s FAILED: %s\n", "bridge", br->error);
}

static const char *const image_way_names[IMG_WAYS] = {"planes", "view", "optimal"};

/* The pair's image rows: one line per (path, format), each way ok or not
 * with a footnote number; the footnotes (each reason once) after them. */
static void print_text_images(const struct report *r, int bridge)
{
    const char *notes[64];
    int n_notes = 0;
    bool any = false;

    for (int i = 0; i < r->n_images; i++) {
        const struct image_rec *ir = &r->images[i];
        if (ir->bridge != bridge)
            continue;
        if (!any)
            printf("  images, each way checked live (planes and views on a %ux%u image, optimal by the "
                   "bridge's live check):\n",
                   IMAGE_WIDTH, IMAGE_HEIGHT);
        any = true;
        printf("  %-12s %-52s", ir->path, ir->format);
        for (int w = 0; w < IMG_WAYS; w++) {
            int note = 0;
            if (ir->status[w] != ROW_OK) {
                for (note = 0; note < n_notes && strcmp(notes[note], ir->reason[w]) != 0; note++)
                    ;
                if (note == n_notes && n_notes < 64)
                    notes[n_notes++] = ir->reason[w];
                note++;
            }
            if (ir->status[w] == ROW_OK)
                printf(" %s ok", image_way_names[w]);
            else
                printf(" %s %s [%d]", image_way_names[w], ir->status[w] == ROW_FAILED ? "FAILED" : "no", note);
        }
        putchar('\n');
    }
    for (int k = 0; k < n_notes; k++)
        printf("    [%d] %s\n", k + 1, notes[k]);
}

static void print_counts(const char *label, const int n[3], const char *ok)
{
    printf("  %-12s %d %s, %d failed, %d unsupported\n", label, n[ROW_OK], ok, n[ROW_FAILED], n[ROW_UNSUPPORTED]);
}

static void print_text_summary(const struct report *r)
{
    struct row_counts c;
    count_rows(r, &c);
    printf("\nSummary: %d rows checked: %d ok, %d failed, %d unsupported\n",
           c.all[ROW_OK] + c.all[ROW_FAILED] + c.all[ROW_UNSUPPORTED], c.all[ROW_OK], c.all[ROW_FAILED],
           c.all[ROW_UNSUPPORTED]);
    print_counts("paths:", c.paths, "ok");
    print_counts("semaphores:", c.semaphores, "supported");
    print_counts("image ways:", c.image_ways, "ok");
    if (c.bridges_failed)
        printf("  %-12s %d failed\n", "bridges:", c.bridges_failed);
}

static void print_text_rows(const struct report *r)
{

    printf("\nSharing paths, each supported one run live with %zu bytes:\n", r->size);
    for (int i = 0; i < r->n_rows; i++) {
        const struct row *row = &r->rows[i];
        const struct cl_dev *d = &r->cl[row->cl];
        if (i == 0 || row->bridge != r->rows[i - 1].bridge)
            printf("Vulkan %d (%s) + OpenCL %d.%d (%s) on %s:\n", r->vk[row->vk].index, r->vk[row->vk].name,
                   d->platform, d->index, d->name, r->platforms[d->platform].name);
        print_text_row(row);
        if (i + 1 == r->n_rows || r->rows[i + 1].bridge != row->bridge) {
            print_text_bridge(&r->bridges[row->bridge]);
            print_text_images(r, row->bridge);
        }
    }
    if (r->n_rows == 0)
        printf("  none (%s)\n", r->vk_select_failed ? "CLMEM_VK_DEVICE names no Vulkan device"
                                                    : "no Vulkan and OpenCL device to pair");
    print_text_summary(r);
}

void print_text(const struct report *r)
{
    printf("clmem-info: libclmem %s\n\n", clmem_version());
    if (r->cl_error[0])
        printf("OpenCL: none (%s)\n", r->cl_error);
    else
        printf("OpenCL: %d platform(s), %d device(s)\n", r->n_platforms, r->n_cl);
    for (int p = 0; p < r->n_platforms; p++) {
        const struct cl_plat *pl = &r->platforms[p];
        printf("platform %d: %s\n  version: %s\n", p, pl->name, pl->version);
        for (int d = 0; d < pl->n_devices; d++)
            print_text_cl_device(&r->cl[pl->first_device + d]);
    }
    putchar('\n');
    if (!r->vulkan_built)
        printf("Vulkan: not built in (configured without libclmem-bridge)\n");
    else if (r->vk_select_failed)
        printf("Vulkan: no device checked (%s)\n", r->vk_error);
    else if (r->vk_error[0])
        printf("Vulkan: none (%s)\n", r->vk_error);
    else if (r->vk_selector[0] && r->n_vk == 1)
        printf("Vulkan: %d physical device(s), CLMEM_VK_DEVICE=%s selects device %d, the only one checked\n",
               r->vk_total, r->vk_selector, r->vk[0].index);
    else
        printf("Vulkan: %d physical device(s)\n", r->n_vk);
    for (int i = 0; i < r->n_vk; i++)
        print_text_vk_device(r, i);
    if (r->vulkan_built)
        print_text_rows(r);
}
