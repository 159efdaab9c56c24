/* SPDX-License-Identifier: MIT */
/* clmem-info: the OpenCL platforms and devices, and what each offers for
 * sharing memory. The queries that libclmem-bridge answers too are asked
 * the bridge's way: opencl/query-cl.c (opencl/libclmem-opencl.la). */
#include "config.h"

#include "info.h"
#include "opencl/query-cl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The handle-type list queries fail outright (CL_INVALID_VALUE) on devices
 * without the extension, which is not the same as an empty list:
 * clmem__cl_device_handle_types tells the two apart. */
static void query_handle_types(cl_device_id dev, cl_device_info param, struct handle_types *ht)
{
    size_t n = 0;
    cl_uint *all = clmem__cl_device_handle_types(dev, param, &n);

    memset(ht, 0, sizeof *ht);
    if (!all)
        return;
    ht->available = true;
    ht->n = n > MAX_HANDLE_TYPES ? MAX_HANDLE_TYPES : (cl_uint)n;
    memcpy(ht->type, all, ht->n * sizeof(cl_uint));
    free(all);
}

/* Keep the extensions that matter for sharing memory. */
static void filter_extensions(const char *all, char *out, size_t out_size)
{
    const char *p = all;
    size_t used = 0;

    out[0] = '\0';
    while (*p) {
        size_t len = strcspn(p, " ");
        char word[256];
        if (len > 0 && len < sizeof word) {
            memcpy(word, p, len);
            word[len] = '\0';
            if ((strstr(word, "external") || strstr(word, "semaphore") || strstr(word, "uuid")) &&
                used + len + 2 <= out_size) {
                used += (size_t)snprintf(out + used, out_size - used, "%s%s", used ? " " : "", word);
            }
        }
        p += len;
        p += strspn(p, " ");
    }
}

static void describe_cl_device(cl_device_id id, struct cl_dev *d)
{
    size_t size = 0;
    char *all = NULL;

    d->id = id;
    clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof d->name, d->name, NULL);
    d->name[sizeof d->name - 1] = '\0';
    clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof d->type, &d->type, NULL);
    if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, NULL, &size) == CL_SUCCESS && size > 0) {
        all = xrealloc(NULL, size + 1);
        if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, size, all, NULL) != CL_SUCCESS)
            size = 0;
        all[size] = '\0';
    }
    filter_extensions(all ? all : "", d->extensions, sizeof d->extensions);
    /* CL_DEVICE_UUID_KHR exists only with the extension; asking without it
     * may return garbage rather than an error on some drivers, so
     * clmem__cl_device_uuid asks only when cl_khr_device_uuid is there. */
    d->has_uuid = clmem__cl_device_uuid(id, d->uuid);
    free(all);
    query_handle_types(id, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, &d->memory_types);
    query_handle_types(id, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR, &d->semaphore_types);
    /* Deprecated since OpenCL 2.0 but still answered; it says whether the
     * host-mapped path can be zero-copy on a GPU. */
    clGetDeviceInfo(id, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof d->host_unified, &d->host_unified, NULL);
    clGetDeviceInfo(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof d->align_bits, &d->align_bits, NULL);
}

static void list_platform_devices(struct report *r, cl_platform_id platform, int p)
{
    cl_device_id ids[MAX_CL_DEVICES];
    cl_uint n = 0;
    cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, MAX_CL_DEVICES, ids, &n);

    r->platforms[p].first_device = r->n_cl;
    if (err != CL_SUCCESS) /* CL_DEVICE_NOT_FOUND: a platform with no devices */
        n = 0;
    if (n > MAX_CL_DEVICES)
        n = MAX_CL_DEVICES;
    for (cl_uint i = 0; i < n && r->n_cl < MAX_CL_DEVICES; i++) {
        struct cl_dev *d = &r->cl[r->n_cl++];
        d->platform = p;
        d->index = (int)i;
        describe_cl_device(ids[i], d);
        r->platforms[p].n_devices++;
    }
}

void list_opencl(struct report *r)
{
    cl_platform_id ids[MAX_PLATFORMS];
    cl_uint n = 0;
    cl_int err = clGetPlatformIDs(MAX_PLATFORMS, ids, &n);

    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && n == 0)) {
        snprintf(r->cl_error, sizeof r->cl_error, "no OpenCL platform (no ICD installed?)");
        return;
    }
    if (err != CL_SUCCESS) {
        native_failure(r->cl_error, sizeof r->cl_error, CLMEM_API_OPENCL, "clGetPlatformIDs", err, NULL);
        return;
    }
    if (n > MAX_PLATFORMS)
        n = MAX_PLATFORMS;
    for (cl_uint p = 0; p < n; p++) {
        struct cl_plat *pl = &r->platforms[r->n_platforms++];
        clGetPlatformInfo(ids[p], CL_PLATFORM_NAME, sizeof pl->name, pl->name, NULL);
        clGetPlatformInfo(ids[p], CL_PLATFORM_VERSION, sizeof pl->version, pl->version, NULL);
        pl->name[sizeof pl->name - 1] = pl->version[sizeof pl->version - 1] = '\0';
        list_platform_devices(r, ids[p], (int)p);
    }
}
