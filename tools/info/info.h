/* SPDX-License-Identifier: MIT */
/* clmem-info's internal header: the records the probes and the live
 * checks fill in and both printers read (everything is gathered first and
 * printed at the end, so text and JSON come from the same records), and
 * the functions one file of tools/info/ gives another:
 *
 *   args.c        --help and the command line
 *   names.c       small helpers, the names printed for OpenCL's values
 *   probe-cl.c    the OpenCL platforms and devices
 *   probe-vk.c    the Vulkan devices and their pairing        (with Vulkan)
 *   live.c        the checks of one pair: bridge, paths, semaphores (with Vulkan)
 *   live-buffer.c one live round trip on a path               (with Vulkan)
 *   live-image.c  every image format, live on a path          (with Vulkan)
 *   summary.c     the counts of every row checked, by what it says
 *   text.c        the report as text
 *   json.c        the report as JSON
 *   main.c        main
 *
 * Without the bridge (CLMEM_INFO_WITH_VULKAN undefined) the Vulkan files
 * are not built: tools/info.am. */
#ifndef CLMEM_INFO_H
#define CLMEM_INFO_H

#include <clmem.h>
#include <CL/cl_ext.h>
#ifdef CLMEM_INFO_WITH_VULKAN
#include <clmem-bridge.h>
#include "vkctx.h"
#include <stdatomic.h>
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_PLATFORMS 16
#define MAX_CL_DEVICES 64
#define MAX_VK_DEVICES 16 /* tools/vkctx/vkctx.c looks at no more than 16 */
#define MAX_HANDLE_TYPES 32
#define TEXT 2560         /* clmem_error_message() is at most 2367 bytes (clmem.h), plus our prefix */
#define DEFAULT_SIZE (1u << 20)
#define IMAGE_WIDTH 34u /* the live image checks: even, for the 4:2:0 formats */
#define IMAGE_HEIGHT 8u
#define FINISH_TIMEOUT_NS UINT64_C(10000000000) /* 10 s for clmem_bridge_finish */

/* The pattern Vulkan writes and what the kernel must turn it into. */
#define FILL_VALUE 0x01020304u
#define EXPECTED_VALUE (FILL_VALUE * 3u + 1u)

/* ------------------------------------------------------------- records */

/* The answer to a handle-type list query. Those queries fail outright
 * (CL_INVALID_VALUE) on devices without the extension, which is not the
 * same as an empty list. */
struct handle_types {
    bool available;
    cl_uint n;
    cl_uint type[MAX_HANDLE_TYPES];
};

struct cl_dev {
    cl_device_id id;
    int platform; /* index into report.platforms */
    int index;    /* index within its platform */
    char name[256];
    cl_device_type type;
    bool has_uuid;
    unsigned char uuid[16];
    struct handle_types memory_types, semaphore_types;
    cl_bool host_unified;
    cl_uint align_bits;
    char extensions[2048]; /* only the sharing-related ones, space-separated */
};

struct cl_plat {
    char name[256];
    char version[256];
    int first_device, n_devices; /* into report.cl */
};

/* Plain types, not Vulkan's, so that the printers build without Vulkan. */
struct vk_dev {
    int index;          /* Vulkan's, in vkEnumeratePhysicalDevices order */
    bool opened;        /* vkctx_open worked; otherwise reason says why */
    char name[256];
    const char *type;
    unsigned char uuid[16];
    char api_version[32];
    bool has_memory_fd, has_dma_buf, has_semaphore_fd;
    int paired;         /* index into report.cl, or -1 */
    const char *pair_status;
    char reason[TEXT];  /* why it did not pair, or why it could not be opened */
};

enum row_status { ROW_OK, ROW_FAILED, ROW_UNSUPPORTED };

/* A row's status from the call that checked it: a missing feature or
 * another device is "unsupported"; any other failure means the check
 * itself broke. */
static inline enum row_status check_status(clmem_status s)
{
    return s == CLMEM_OK                                                  ? ROW_OK
           : s == CLMEM_ERR_UNSUPPORTED || s == CLMEM_ERR_DEVICE_MISMATCH ? ROW_UNSUPPORTED
                                                                          : ROW_FAILED;
}

/* A semaphore mode as the pair's bridge answered it (not run live). */
struct sem_rec {
    const char *mode;
    enum row_status status; /* ROW_OK: supported */
    char reason[TEXT];
};

/* The bridge of one (Vulkan device, OpenCL device) pair. */
struct bridge_rec {
    int vk, cl;                 /* into report.vk, report.cl */
    bool created;               /* clmem_bridge_create worked */
    char error[TEXT];           /* why it was not, or why clmem_bridge_finish failed; "" otherwise */
    enum row_status error_status;
    uint32_t caps;              /* clmem_bridge_caps */
    int n_sem;
    struct sem_rec sem[2];      /* opaque-fd, sync-fd */
};

/* One (Vulkan device, OpenCL device, path) check. */
struct row {
    int bridge; /* into report.bridges */
    int vk, cl; /* into report.vk, report.cl */
    const char *path;
    enum row_status status;
    char reason[TEXT];
    int zero_copy;              /* 1, 0, or -1 when not known (unsupported) */
    long import_us, handoff_us; /* -1 when not measured */
};

/* One (pair, path, image format) check, each way of sharing run live on a
 * small image: [IMG_PLANES] each plane as a buffer read through its row
 * pitch, [IMG_VIEW] each plane as an image2d view, [IMG_OPTIMAL] an
 * optimal-tiling image (the bridge's own live check). */
enum { IMG_PLANES, IMG_VIEW, IMG_OPTIMAL, IMG_WAYS };
struct image_rec {
    int bridge;
    const char *path;
    const char *format;
    enum row_status status[IMG_WAYS];
    char reason[IMG_WAYS][TEXT];
};

struct report {
    size_t size; /* bytes per live round trip */
    char cl_error[TEXT];
    int n_platforms, n_cl;
    struct cl_plat platforms[MAX_PLATFORMS];
    struct cl_dev cl[MAX_CL_DEVICES];
    bool vulkan_built;
    char vk_error[TEXT]; /* why no Vulkan device is listed; "" when some are */
    char vk_selector[TEXT / 2]; /* CLMEM_VK_DEVICE when it chose the one device checked; "" when unset */
    bool vk_select_failed;      /* it named no device (vk_error says so) */
    int vk_total;               /* physical devices there are, when vk_selector is set */
    int n_vk;
    struct vk_dev vk[MAX_VK_DEVICES];
    int n_bridges, bridges_allocated;
    struct bridge_rec *bridges;
    int n_rows, rows_allocated;
    struct row *rows;
    int n_images, images_allocated;
    struct image_rec *images;
    int failures; /* failed rows, semaphore checks and finishes; Vulkan devices that could not be
                     opened or that CLMEM_VK_DEVICE asked for and does not exist */
};

/* ------------------------------------------------------------ names.c */

/* realloc, or exit(1) with a message. */
void *xrealloc(void *p, size_t n);
/* array, or array moved to a larger block (its capacity, *allocated
 * elements of `element` bytes, doubles from 8), with room for element
 * `used`; exit(1) with a message when memory runs out. */
void *grow_array(void *array, int used, int *allocated, size_t element);
void format_uuid(const unsigned char u[16], char out[37]);
/* Into out: "CALL failed with NAME (CODE)" and, if detail is not NULL,
 * ": DETAIL", naming the native code as the library's own messages do
 * (clmem_error_message()). call must be a string literal. */
void native_failure(char *out, size_t len, clmem_api api, const char *call, int32_t code, const char *detail);
/* The name of handle type i of ht, or its value in hex in buf. */
const char *handle_type_name(const struct handle_types *ht, cl_uint i, bool memory, char buf[16]);
const char *cl_type_name(cl_device_type t, char buf[64]);

/* ---------------------------------------------------- args.c, probe-cl.c */

/* 0 to go on, -1 after --help (exit 0), or the exit status for main. */
int parse_args(int argc, char **argv, bool *json, size_t *size);
/* Fill r->platforms and r->cl, or r->cl_error. */
void list_opencl(struct report *r);

/* ------------------------------------------------------------ summary.c */

/* Every row checked, by status (enum row_status: ok or supported, failed,
 * unsupported or "no"): the path rows, the semaphore rows, the ways of the
 * image lines, and the bridges whose clmem_bridge_finish failed; `all`
 * adds them up. */
struct row_counts {
    int paths[3], semaphores[3], image_ways[3];
    int bridges_failed;
    int all[3];
};
void count_rows(const struct report *r, struct row_counts *c);

/* ------------------------------------------------------ text.c, json.c */

void print_text(const struct report *r);
void print_json(const struct report *r);

#ifdef CLMEM_INFO_WITH_VULKAN
/* ------------------------------------------------------- the live checks */

/* One fresh OpenCL context and queue for an OpenCL device, which the
 * device's bridge is made with, and the kernel, built on the first
 * supported path and shared by that device's paths. */
struct cl_env {
    char error[TEXT / 2]; /* why it could not be made; "" when it was */
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    bool built;           /* cl_env_build was tried */
    cl_program program;
    cl_kernel kernel;
};

/* What our anchor for the Vulkan memory tells: set by its release, maybe
 * on a driver thread. On the heap, and leaked when the release did not
 * come, so that a late release never writes into a dead stack frame. */
struct anchor_state {
    atomic_bool released;
};

/* probe-vk.c: list the Vulkan devices (as CLMEM_VK_DEVICE limits them)
 * and check every pair of one with an OpenCL device. */
void run_vulkan(struct report *r);

/* live.c: the pair's bridge, its paths live, its images and semaphores. */
void check_pair(struct report *r, struct vkctx *ctx, int vk, int cl);

/* live-buffer.c: the OpenCL context and queue of a pair, the kernel (built
 * once, on the first supported path), and one round trip into row. */
bool cl_env_open(struct cl_env *env, cl_device_id dev);
bool cl_env_build(struct cl_env *env, size_t size);
void cl_env_close(struct cl_env *env);
void round_trip(struct vkctx *ctx, struct cl_env *env, clmem_bridge *bridge, clmem_bridge_path path, size_t size,
                struct row *row);

/* live-image.c: every format the bridge shares, on one path of bridge bi. */
void check_images(struct report *r, struct vkctx *ctx, struct cl_env *env, clmem_bridge *bridge, int bi,
                  clmem_bridge_path path);
#endif /* CLMEM_INFO_WITH_VULKAN */

#endif
