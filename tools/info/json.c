/* SPDX-License-Identifier: MIT */
/* clmem-info --json: the report as JSON (the keys: clmem-info(1), JSON
 * OUTPUT; t/tools/clmem-info-json.sh checks them). */
#include "config.h"

#include "info.h"
#include "output.h"

#include <stdio.h>
#include <string.h>

static void json_handle_types(struct json *j, const char *key, const struct handle_types *ht, bool memory)
{
    char hex[16];
    if (!ht->available) {
        json_string(j, key, NULL);
        return;
    }
    json_open(j, key, '[');
    for (cl_uint i = 0; i < ht->n; i++)
        json_string(j, NULL, handle_type_name(ht, i, memory, hex));
    json_close(j, ']');
}

static void json_words(struct json *j, const char *key, const char *list)
{
    json_open(j, key, '[');
    for (const char *p = list; *p;) {
        char word[256];
        size_t len = strcspn(p, " ");
        if (len > 0 && len < sizeof word) {
            memcpy(word, p, len);
            word[len] = '\0';
            json_string(j, NULL, word);
        }
        p += len;
        p += strspn(p, " ");
    }
    json_close(j, ']');
}

static void json_cl_device(struct json *j, const struct cl_dev *d)
{
    char buf[64], uuid[37];
    json_open(j, NULL, '{');
    json_int(j, "index", d->index);
    json_string(j, "name", d->name);
    json_string(j, "type", cl_type_name(d->type, buf));
    if (d->has_uuid)
        format_uuid(d->uuid, uuid);
    json_string(j, "uuid", d->has_uuid ? uuid : NULL);
    json_handle_types(j, "memory_import_types", &d->memory_types, true);
    json_handle_types(j, "semaphore_import_types", &d->semaphore_types, false);
    json_bool(j, "host_unified_memory", d->host_unified);
    json_int(j, "mem_base_addr_align_bits", d->align_bits);
    json_int(j, "mem_base_addr_align_bytes", d->align_bits / 8);
    json_words(j, "extensions", d->extensions);
    json_close(j, '}');
}

static void json_opencl(struct json *j, const struct report *r)
{
    json_string(j, "opencl_error", r->cl_error[0] ? r->cl_error : NULL);
    json_open(j, "opencl", '[');
    for (int p = 0; p < r->n_platforms; p++) {
        const struct cl_plat *pl = &r->platforms[p];
        json_open(j, NULL, '{');
        json_int(j, "index", p);
        json_string(j, "name", pl->name);
        json_string(j, "version", pl->version);
        json_open(j, "devices", '[');
        for (int d = 0; d < pl->n_devices; d++)
            json_cl_device(j, &r->cl[pl->first_device + d]);
        json_close(j, ']');
        json_close(j, '}');
    }
    json_close(j, ']');
}

static void json_vk_device(struct json *j, const struct report *r, int i)
{
    const struct vk_dev *v = &r->vk[i];
    char uuid[37];

    json_open(j, NULL, '{');
    json_int(j, "index", v->index);
    json_bool(j, "opened", v->opened);
    if (v->opened) {
        format_uuid(v->uuid, uuid);
        json_string(j, "name", v->name);
        json_string(j, "type", v->type);
        json_string(j, "uuid", uuid);
        json_string(j, "api_version", v->api_version);
        json_bool(j, "VK_KHR_external_memory_fd", v->has_memory_fd);
        json_bool(j, "VK_EXT_external_memory_dma_buf", v->has_dma_buf);
        json_bool(j, "VK_KHR_external_semaphore_fd", v->has_semaphore_fd);
        json_string(j, "pair_status", v->pair_status);
        if (v->paired >= 0) {
            json_open(j, "paired_opencl_device", '{');
            json_int(j, "platform_index", r->cl[v->paired].platform);
            json_int(j, "device_index", r->cl[v->paired].index);
            json_string(j, "name", r->cl[v->paired].name);
            json_close(j, '}');
        } else {
            json_string(j, "paired_opencl_device", NULL);
        }
    }
    json_string(j, "reason", v->reason[0] ? v->reason : NULL);
    json_close(j, '}');
}

static void json_row(struct json *j, const struct report *r, const struct row *row)
{
    static const char *const names[] = {"ok", "failed", "unsupported"};
    const struct cl_dev *d = &r->cl[row->cl];

    json_open(j, NULL, '{');
    json_int(j, "vulkan_index", r->vk[row->vk].index);
    json_string(j, "vulkan_device", r->vk[row->vk].name);
    json_int(j, "opencl_platform_index", d->platform);
    json_int(j, "opencl_device_index", d->index);
    json_string(j, "opencl_platform", r->platforms[d->platform].name);
    json_string(j, "opencl_device", d->name);
    json_string(j, "path", row->path);
    json_string(j, "status", names[row->status]);
    json_string(j, "reason", row->reason[0] ? row->reason : NULL);
    if (row->zero_copy < 0)
        json_null(j, "zero_copy");
    else
        json_bool(j, "zero_copy", row->zero_copy);
    json_int_or_null(j, "import_us", row->import_us);
    json_int_or_null(j, "handoff_us", row->handoff_us);
    json_close(j, '}');
}

static void json_images(struct json *j, const struct report *r, int bridge)
{
    static const char *const names[] = {"ok", "failed", "unsupported"};

    json_open(j, "images", '[');
    for (int i = 0; i < r->n_images; i++) {
        const struct image_rec *ir = &r->images[i];
        if (ir->bridge != bridge)
            continue;
        json_open(j, NULL, '{');
        json_string(j, "path", ir->path);
        json_string(j, "format", ir->format);
        for (int w = 0; w < IMG_WAYS; w++) {
            json_open(j, w == 0 ? "planes" : w == 1 ? "view" : "optimal", '{');
            json_string(j, "status", names[ir->status[w]]);
            json_string(j, "reason", ir->status[w] != 0 ? ir->reason[w] : NULL);
            json_close(j, '}');
        }
        json_close(j, '}');
    }
    json_close(j, ']');
}

static void json_bridge(struct json *j, const struct report *r, const struct bridge_rec *br)
{
    static const char *const names[] = {"supported", "failed", "unsupported"};
    static const struct {
        uint32_t bit;
        const char *name;
    } caps[] = {
        /* clmem_bridge_cap, spelt out: these printers build without clmem-bridge.h */
        {1u << 0, "opaque-fd"},           {1u << 1, "dma-buf"},
        {1u << 2, "host-mapped"},         {1u << 3, "host-mapped-zero-copy"},
        {1u << 4, "semaphore-opaque-fd"}, {1u << 5, "semaphore-sync-fd"},
        {1u << 6, "opaque-fd-dedicated-only"}, {1u << 7, "image-view"},
    };
    const struct cl_dev *d = &r->cl[br->cl];

    json_open(j, NULL, '{');
    json_int(j, "vulkan_index", r->vk[br->vk].index);
    json_int(j, "opencl_platform_index", d->platform);
    json_int(j, "opencl_device_index", d->index);
    json_bool(j, "created", br->created);
    json_string(j, "error", br->error[0] ? br->error : NULL);
    if (br->created) {
        json_open(j, "caps", '[');
        for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
            if (br->caps & caps[i].bit)
                json_string(j, NULL, caps[i].name);
        json_close(j, ']');
    } else {
        json_string(j, "caps", NULL);
    }
    json_open(j, "semaphores", '[');
    for (int i = 0; i < br->n_sem; i++) {
        json_open(j, NULL, '{');
        json_string(j, "mode", br->sem[i].mode);
        json_string(j, "status", names[br->sem[i].status]);
        json_string(j, "reason", br->sem[i].reason[0] ? br->sem[i].reason : NULL);
        json_close(j, '}');
    }
    json_close(j, ']');
    json_images(j, r, (int)(br - r->bridges));
    json_close(j, '}');
}

/* One line of the Summary: its counts, in an object of their own (key) or
 * in the current one (key NULL). */
static void json_counts(struct json *j, const char *key, const int n[3], const char *ok)
{
    if (key)
        json_open(j, key, '{');
    json_int(j, ok, n[ROW_OK]);
    json_int(j, "failed", n[ROW_FAILED]);
    json_int(j, "unsupported", n[ROW_UNSUPPORTED]);
    if (key)
        json_close(j, '}');
}

void print_json(const struct report *r)
{
    struct json j = {.out = stdout};
    struct row_counts c;

    json_open(&j, NULL, '{');
    json_string(&j, "clmem_version", clmem_version());
    json_int(&j, "size", (long long)r->size);
    json_opencl(&j, r);
    json_bool(&j, "vulkan_built", r->vulkan_built);
    json_string(&j, "vulkan_error", r->vk_error[0] ? r->vk_error : NULL);
    json_string(&j, "vulkan_device_selector", r->vk_selector[0] ? r->vk_selector : NULL);
    json_open(&j, "vulkan", '[');
    for (int i = 0; i < r->n_vk; i++)
        json_vk_device(&j, r, i);
    json_close(&j, ']');
    json_open(&j, "pairs", '[');
    for (int i = 0; i < r->n_rows; i++)
        json_row(&j, r, &r->rows[i]);
    json_close(&j, ']');
    json_open(&j, "bridges", '[');
    for (int i = 0; i < r->n_bridges; i++)
        json_bridge(&j, r, &r->bridges[i]);
    json_close(&j, ']');
    count_rows(r, &c);
    json_open(&j, "summary", '{');
    json_counts(&j, NULL, c.all, "ok");
    json_counts(&j, "paths", c.paths, "ok");
    json_counts(&j, "semaphores", c.semaphores, "supported");
    json_counts(&j, "image_ways", c.image_ways, "ok");
    json_int(&j, "bridges_failed", c.bridges_failed);
    json_close(&j, '}');
    json_close(&j, '}');
    fputc('\n', j.out);
}
