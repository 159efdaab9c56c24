/* SPDX-License-Identifier: MIT */
/* Every public function of the four libraries that can fail, called with
 * one input it refuses (a NULL argument, a bad value: nothing that needs
 * a GPU), leaves a sentence that begins with its own name, once:
 * "clmem_ipc_accept: fd_out is NULL.", not "fd_out is NULL." nor
 * "clmem_ipc_accept: clmem_ipc_accept: ...".
 *
 * The table below has a row for each such function, and a list of the
 * functions that cannot fail (getters, ref and unref, which abort on
 * misuse rather than fail, names of enumerators). The test reads the
 * libraries' .sym files and fails when a public function is in neither,
 * so that a new function needs a row; and when a row names a function no
 * .sym file has.
 *
 * A library that configure did not build (the bridge, av or ipc) has its
 * rows skipped, naming it. A row marked todo is a library whose sentences
 * do not name their function yet: it is reported as TAP TODO, and once it
 * passes the harness reports an unexpected pass, the sign to drop the
 * mark. */
/* Every public function has a row, the deprecated ones too. */
#define CLMEM_DISABLE_DEPRECATION_WARNINGS
#include "clmem.h"
#include "t/lib/tap.h"

#ifdef CLMEM_TEST_BRIDGE
#include "clmem-bridge.h"
#endif
#ifdef CLMEM_TEST_AV
#include "clmem-av.h"
#endif
#ifdef CLMEM_TEST_IPC
#include "clmem-ipc.h"
#endif

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>


enum library { LIB_CORE, LIB_BRIDGE, LIB_AV, LIB_IPC, LIB_COUNT };

static const struct {
    const char *name; /* as in the messages: "libclmem-av" */
    const char *sym;  /* its .sym file under top_srcdir */
    bool built;
} libraries[LIB_COUNT] = {
    [LIB_CORE] = {"libclmem", "lib/clmem.sym", true},
#ifdef CLMEM_TEST_BRIDGE
    [LIB_BRIDGE] = {"libclmem-bridge", "bridge/clmem-bridge.sym", true},
#else
    [LIB_BRIDGE] = {"libclmem-bridge", "bridge/clmem-bridge.sym", false},
#endif
#ifdef CLMEM_TEST_AV
    [LIB_AV] = {"libclmem-av", "av/clmem-av.sym", true},
#else
    [LIB_AV] = {"libclmem-av", "av/clmem-av.sym", false},
#endif
#ifdef CLMEM_TEST_IPC
    [LIB_IPC] = {"libclmem-ipc", "ipc/clmem-ipc.sym", true},
#else
    [LIB_IPC] = {"libclmem-ipc", "ipc/clmem-ipc.sym", false},
#endif
};

/* ------------------------------------------------------------ the calls */

/* Made to fail only when memory runs out (see out_of_memory()). */
static clmem_status core_keepalive_new(void)
{
    clmem_keepalive *ka = clmem_keepalive_new(NULL, NULL);
    clmem_keepalive_unref(ka);
    return ka ? CLMEM_OK : clmem_error_status();
}

static clmem_status core_keepalive_chain(void)
{
    clmem_keepalive *ka = clmem_keepalive_chain(NULL, NULL);
    clmem_keepalive_unref(ka);
    return ka ? CLMEM_OK : clmem_error_status();
}

static clmem_status core_keepalive_new_cl(void)
{
    clmem_keepalive *ka = clmem_keepalive_new_cl(NULL, NULL);
    clmem_keepalive_unref(ka);
    return ka ? CLMEM_OK : clmem_error_status();
}

static clmem_status core_handle_wrap(void)
{
    clmem_handle *h;
    return clmem_handle_wrap(NULL, NULL, 0, NULL, &h);
}

static clmem_status core_handle_wrap_checked(void)
{
    clmem_handle *h;
    return clmem_handle_wrap_checked(NULL, NULL, 0, NULL, &h);
}

#ifdef CLMEM_TEST_BRIDGE
static clmem_handle *const no_handles[1] = {NULL};

static clmem_status bridge_pair(void)
{
    return clmem_bridge_pair(VK_NULL_HANDLE, NULL, VK_NULL_HANDLE, NULL, NULL);
}

static clmem_status bridge_create(void)
{
    clmem_bridge *b;
    return clmem_bridge_create(NULL, &b);
}

static clmem_status bridge_finish(void) { return clmem_bridge_finish(NULL, 0); }
static clmem_status bridge_device_finish(void) { return clmem_bridge_device_finish(VK_NULL_HANDLE, 0); }
static clmem_status bridge_check_path(void) { return clmem_bridge_check_path(NULL, CLMEM_BRIDGE_PATH_BEST); }

static clmem_status bridge_device_extensions(void)
{
    const char *names[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX];
    uint32_t count;
    return clmem_bridge_device_extensions(VK_NULL_HANDLE, NULL, VK_NULL_HANDLE, names, &count);
}

static clmem_status bridge_best_memory(void)
{
    clmem_bridge_path path;
    VkMemoryPropertyFlags flags;
    VkExternalMemoryHandleTypeFlags types;
    return clmem_bridge_best_memory(NULL, &path, &flags, &types);
}

static clmem_status bridge_check_semaphore(void)
{
    return clmem_bridge_check_semaphore(NULL, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD);
}

static clmem_status bridge_vk_buffer_create(void)
{
    VkBuffer buffer;
    clmem_bridge_vk_memory memory;
    return clmem_bridge_vk_buffer_create(NULL, 4096, 0, 0, 0, &buffer, &memory);
}

static clmem_status bridge_import_vk(void)
{
    clmem_handle *h;
    return clmem_bridge_import_vk(NULL, NULL, 0, 4096, CLMEM_BRIDGE_PATH_BEST, NULL, NULL, 0, &h);
}

static clmem_status bridge_import_vk_pitched(void)
{
    clmem_handle *h;
    return clmem_bridge_import_vk_pitched(NULL, NULL, 0, 4096, 64, 4, CLMEM_BRIDGE_PATH_BEST, NULL, NULL, 0, &h);
}

static clmem_status bridge_import_fd(void)
{
    clmem_handle *h;
    return clmem_bridge_import_fd(NULL, -1, CLMEM_BRIDGE_PATH_OPAQUE_FD, 4096, 0, 4096, NULL, NULL, 0, &h);
}

static clmem_status bridge_handle_for_queue(void)
{
    clmem_handle *h;
    return clmem_bridge_handle_for_queue(NULL, NULL, &h);
}

static clmem_status bridge_handle_path(void)
{
    clmem_bridge_path path;
    return clmem_bridge_handle_path(NULL, &path);
}

static clmem_status bridge_image_plane_format(void)
{
    cl_image_format format;
    uint32_t texel;
    return clmem_bridge_image_plane_format(VK_FORMAT_UNDEFINED, 0, &format, &texel);
}

static clmem_status bridge_vk_image_create(void)
{
    clmem_bridge_vk_image image;
    VkExtent2D extent = {64, 64};
    return clmem_bridge_vk_image_create(NULL, VK_FORMAT_R8G8B8A8_UNORM, extent, VK_IMAGE_TILING_LINEAR, 0, 0, 0,
                                        &image);
}

static clmem_status bridge_import_vk_image(void)
{
    clmem_handle *h;
    return clmem_bridge_import_vk_image(NULL, NULL, 0, CLMEM_BRIDGE_PATH_BEST, NULL, NULL, 0, 0, &h);
}

static clmem_status bridge_check_image(void)
{
    return clmem_bridge_check_image(NULL, VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_TILING_LINEAR, CLMEM_BRIDGE_PATH_BEST,
                                    0, 0);
}

static clmem_status bridge_image_live_check(void)
{
    return clmem_bridge_image_live_check(NULL, VK_FORMAT_R8G8B8A8_UNORM, CLMEM_BRIDGE_PATH_BEST, VK_NULL_HANDLE, 0,
                                         NULL);
}

static clmem_status bridge_acquire(void) { return clmem_bridge_acquire(NULL, NULL, 0, NULL, NULL); }
static clmem_status bridge_release(void) { return clmem_bridge_release(NULL, NULL, 0, NULL, NULL); }

static clmem_status bridge_acquire_many(void)
{
    return clmem_bridge_acquire_many(NULL, 1, no_handles, NULL, 0, NULL, NULL);
}

static clmem_status bridge_release_many(void)
{
    return clmem_bridge_release_many(NULL, 1, no_handles, NULL, 0, NULL, NULL);
}

static clmem_status bridge_semaphore_import(void)
{
    clmem_bridge_semaphore *sem;
    return clmem_bridge_semaphore_import(NULL, VK_NULL_HANDLE, VK_NULL_HANDLE, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD, NULL,
                                         &sem);
}

static clmem_status bridge_semaphore_wait(void) { return clmem_bridge_semaphore_wait(NULL, NULL, NULL, 0, NULL, NULL); }

static clmem_status bridge_semaphore_signal(void)
{
    return clmem_bridge_semaphore_signal(NULL, NULL, NULL, 0, NULL, NULL);
}

static clmem_status bridge_ring_create(void)
{
    clmem_bridge_ring *ring;
    return clmem_bridge_ring_create(NULL, NULL, &ring);
}

static clmem_status bridge_ring_vk_next(void)
{
    clmem_bridge_ring_frame frame;
    return clmem_bridge_ring_vk_next(NULL, 0, 0, &frame);
}

static clmem_status bridge_ring_vk_submitted(void) { return clmem_bridge_ring_vk_submitted(NULL, NULL); }

static clmem_status bridge_ring_vk_drain(void)
{
    VkSemaphore waits[4];
    uint32_t count;
    return clmem_bridge_ring_vk_drain(NULL, 0, 4, waits, &count);
}

static clmem_status bridge_ring_cl_next(void)
{
    clmem_bridge_ring_batch batch;
    return clmem_bridge_ring_cl_next(NULL, 0, 0, NULL, &batch, NULL);
}

static clmem_status bridge_ring_cl_done(void) { return clmem_bridge_ring_cl_done(NULL, NULL, 0, NULL, NULL); }
#endif

#ifdef CLMEM_TEST_AV
static clmem_status av_bridge_create(void)
{
    clmem_bridge *b;
    return clmem_av_bridge_create(NULL, NULL, 0, &b);
}

static clmem_status av_frames_setup(void) { return clmem_av_frames_setup(NULL); }
static clmem_status av_frames_setup_optimal(void) { return clmem_av_frames_setup_optimal(NULL); }

static clmem_status av_frame_import(void)
{
    clmem_av_frame_planes planes;
    return clmem_av_frame_import(NULL, NULL, CLMEM_BRIDGE_PATH_BEST, NULL, 0, &planes);
}

static clmem_status av_frame_acquire(void) { return clmem_av_frame_acquire(NULL, NULL, NULL, NULL, 0, NULL); }
static clmem_status av_frame_release(void) { return clmem_av_frame_release(NULL, NULL, NULL, NULL, 0, NULL); }

static clmem_status av_sync_create(void)
{
    clmem_av_sync *sync;
    return clmem_av_sync_create(NULL, NULL, CLMEM_AV_ORDER_BEST, 1, &sync);
}

static clmem_status av_sync_finish(void) { return clmem_av_sync_finish(NULL, 0); }
static clmem_status av_sync_acquire(void) { return clmem_av_sync_acquire(NULL, NULL, NULL, NULL, 0, NULL); }
static clmem_status av_sync_release(void) { return clmem_av_sync_release(NULL, NULL, NULL, NULL, 0, NULL); }

static clmem_status av_cl_device_create(void)
{
    AVBufferRef *device;
    return clmem_av_cl_device_create(NULL, &device);
}

static clmem_status av_cl_frames_create(void)
{
    AVBufferRef *frames;
    return clmem_av_cl_frames_create(NULL, NULL, &frames);
}

static clmem_status av_cl_map(void) { return clmem_av_cl_map(NULL, NULL, NULL, NULL, 0); }
#endif

#ifdef CLMEM_TEST_IPC
static clmem_status ipc_listen(void)
{
    int fd;
    return clmem_ipc_listen("", &fd);
}

static clmem_status ipc_accept(void)
{
    int fd;
    return clmem_ipc_accept(-1, 0, &fd);
}

static clmem_status ipc_connect(void)
{
    int fd;
    return clmem_ipc_connect(NULL, 0, &fd);
}

static clmem_status ipc_producer_create(void)
{
    clmem_ipc_producer *p;
    return clmem_ipc_producer_create(NULL, &p);
}

static clmem_status ipc_producer_add_buffer(void)
{
    uint32_t index;
    return clmem_ipc_producer_add_buffer(NULL, NULL, 0, 0, 4096, 0, &index);
}

static clmem_status ipc_producer_add_image(void)
{
    uint32_t index;
    return clmem_ipc_producer_add_image(NULL, NULL, 0, &index);
}

static clmem_status ipc_producer_start(void) { return clmem_ipc_producer_start(NULL, 0); }

static clmem_status ipc_producer_next(void)
{
    uint32_t index;
    return clmem_ipc_producer_next(NULL, 0, &index);
}

static clmem_status ipc_producer_ready(void) { return clmem_ipc_producer_ready(NULL, 0, VK_NULL_HANDLE, 0); }
static clmem_status ipc_producer_wait_all(void) { return clmem_ipc_producer_wait_all(NULL, 0); }

static clmem_status ipc_consumer_create(void)
{
    clmem_ipc_consumer *c;
    return clmem_ipc_consumer_create(NULL, &c);
}

static clmem_status ipc_consumer_start(void) { return clmem_ipc_consumer_start(NULL, 0); }

static clmem_status ipc_consumer_next(void)
{
    clmem_ipc_frame frame;
    return clmem_ipc_consumer_next(NULL, 0, &frame, NULL);
}

static clmem_status ipc_producer_next_many(void)
{
    uint32_t indices[4], count;
    return clmem_ipc_producer_next_many(NULL, 0, 4, indices, &count);
}

static clmem_status ipc_producer_ready_many(void)
{
    const uint32_t indices[1] = {0};
    return clmem_ipc_producer_ready_many(NULL, 1, indices, VK_NULL_HANDLE, 0);
}

static clmem_status ipc_consumer_next_many(void)
{
    clmem_ipc_frame frames[4];
    uint32_t count;
    return clmem_ipc_consumer_next_many(NULL, 0, 4, frames, &count, NULL);
}
#endif

/* ------------------------------------------------------------ the table */

enum how {
    CALL,          /* run the row's call */
    OUT_OF_MEMORY, /* run it with the heap exhausted: it fails only when memory runs out */
    ELSEWHERE      /* it fails only on a live connection: the test `where` checks its sentence begins
                      with its name (this test finds that check in the source) */
};

struct row {
    enum library lib;
    const char *name;
    enum how how;
    clmem_status (*call)(void); /* NULL where the library was not built */
    const char *todo;  /* TAP TODO reason, or NULL */
    const char *where; /* ELSEWHERE: the test that checks it */
};

#ifdef CLMEM_TEST_BRIDGE
#define BRIDGE(fn) {LIB_BRIDGE, "clmem_" #fn, CALL, fn, NULL, NULL}
#else
#define BRIDGE(fn) {LIB_BRIDGE, "clmem_" #fn, CALL, NULL, NULL, NULL}
#endif
#ifdef CLMEM_TEST_AV
#define AV(fn) {LIB_AV, "clmem_" #fn, CALL, fn, NULL, NULL}
#else
#define AV(fn) {LIB_AV, "clmem_" #fn, CALL, NULL, NULL, NULL}
#endif
#ifdef CLMEM_TEST_IPC
#define IPC(fn) {LIB_IPC, "clmem_" #fn, CALL, fn, NULL, NULL}
#else
#define IPC(fn) {LIB_IPC, "clmem_" #fn, CALL, NULL, NULL, NULL}
#endif

static const struct row rows[] = {
    {LIB_CORE, "clmem_keepalive_new", OUT_OF_MEMORY, core_keepalive_new, NULL, NULL},
    {LIB_CORE, "clmem_keepalive_chain", OUT_OF_MEMORY, core_keepalive_chain, NULL, NULL},
    {LIB_CORE, "clmem_keepalive_new_cl", CALL, core_keepalive_new_cl, NULL, NULL},
    {LIB_CORE, "clmem_handle_wrap", CALL, core_handle_wrap, NULL, NULL},
    {LIB_CORE, "clmem_handle_wrap_checked", CALL, core_handle_wrap_checked, NULL, NULL},

    BRIDGE(bridge_pair),
    BRIDGE(bridge_create),
    BRIDGE(bridge_finish),
    BRIDGE(bridge_device_finish),
    BRIDGE(bridge_check_path),
    BRIDGE(bridge_device_extensions),
    BRIDGE(bridge_best_memory),
    BRIDGE(bridge_check_semaphore),
    BRIDGE(bridge_vk_buffer_create),
    BRIDGE(bridge_import_vk),
    BRIDGE(bridge_import_vk_pitched),
    BRIDGE(bridge_import_fd),
    BRIDGE(bridge_handle_for_queue),
    BRIDGE(bridge_handle_path),
    BRIDGE(bridge_image_plane_format),
    BRIDGE(bridge_vk_image_create),
    BRIDGE(bridge_import_vk_image),
    BRIDGE(bridge_check_image),
    BRIDGE(bridge_image_live_check),
    BRIDGE(bridge_acquire),
    BRIDGE(bridge_release),
    BRIDGE(bridge_acquire_many),
    BRIDGE(bridge_release_many),
    BRIDGE(bridge_semaphore_import),
    BRIDGE(bridge_semaphore_wait),
    BRIDGE(bridge_semaphore_signal),
    BRIDGE(bridge_ring_create),
    BRIDGE(bridge_ring_vk_next),
    BRIDGE(bridge_ring_vk_submitted),
    BRIDGE(bridge_ring_vk_drain),
    BRIDGE(bridge_ring_cl_next),
    BRIDGE(bridge_ring_cl_done),

    AV(av_bridge_create),
    AV(av_frames_setup),
    AV(av_frames_setup_optimal),
    AV(av_frame_import),
    AV(av_frame_acquire),
    AV(av_frame_release),
    AV(av_sync_create),
    AV(av_sync_finish),
    AV(av_sync_acquire),
    AV(av_sync_release),
    AV(av_cl_device_create),
    AV(av_cl_frames_create),
    AV(av_cl_map),

    IPC(ipc_listen),
    IPC(ipc_accept),
    IPC(ipc_connect),
    IPC(ipc_producer_create),
    IPC(ipc_producer_add_buffer),
    IPC(ipc_producer_add_image),
    IPC(ipc_producer_start),
    IPC(ipc_producer_next),
    IPC(ipc_producer_ready),
    IPC(ipc_producer_wait_all),
    IPC(ipc_consumer_create),
    IPC(ipc_consumer_start),
    IPC(ipc_consumer_next),
    IPC(ipc_producer_next_many),
    IPC(ipc_producer_ready_many),
    IPC(ipc_consumer_next_many),
    /* A NULL consumer is no error; it fails only while frames are held or
     * a release is pending. */
    {LIB_IPC, "clmem_ipc_consumer_destroy", ELSEWHERE, NULL, NULL, "t/ipc/ipc-loopback"},
};
#define ROW_COUNT (int)(sizeof rows / sizeof rows[0])

/* The public functions that cannot fail: they record no error. */
static const char *const cannot_fail[] = {
    /* libclmem: names of statuses, the error record itself (clmem_error_set
     * records what its caller says), and ref, unref and getters, which
     * abort on misuse (live-mark.h) rather than fail. */
    "clmem_version", "clmem_status_str", "clmem_status_name", "clmem_error_status", "clmem_error_api",
    "clmem_error_call", "clmem_error_native_code", "clmem_error_message", "clmem_error_clear", "clmem_error_set",
    "clmem_keepalive_ref", "clmem_keepalive_unref", "clmem_handle_ref", "clmem_handle_unref", "clmem_handle_mem",
    "clmem_handle_queue", "clmem_handle_row_pitch", "clmem_handle_keepalive",
    /* libclmem-bridge */
    "clmem_bridge_path_name", "clmem_bridge_ref", "clmem_bridge_unref", "clmem_bridge_context",
    "clmem_bridge_cl_device", "clmem_bridge_vk_device", "clmem_bridge_caps", "clmem_bridge_vk_buffer_destroy",
    "clmem_bridge_image_formats", "clmem_bridge_image_format_name", "clmem_bridge_vk_image_destroy",
    "clmem_bridge_semaphore_get_mode", "clmem_bridge_semaphore_ref", "clmem_bridge_semaphore_unref",
    "clmem_bridge_ring_ref", "clmem_bridge_ring_unref",
    /* libclmem-av */
    "clmem_av_order_name", "clmem_av_sync_get_order", "clmem_av_sync_ref", "clmem_av_sync_unref",
    "clmem_av_frame_planes_unref", "clmem_av_cl_way_name", "clmem_av_cl_frame_way",
    /* libclmem-ipc */
    "clmem_ipc_state_name", "clmem_ipc_producer_state", "clmem_ipc_producer_lent", "clmem_ipc_producer_peer_path",
    "clmem_ipc_producer_destroy", "clmem_ipc_consumer_state", "clmem_ipc_consumer_path",
};
#define CANNOT_FAIL_COUNT (int)(sizeof cannot_fail / sizeof cannot_fail[0])

/* ------------------------------------------------------------ the .sym files */

#define MAX_SYMBOLS 256

struct symbols {
    char names[MAX_SYMBOLS][256];
    int count;
};

/* The public names of a version script: the lines "clmem_x;". */
static bool read_sym(const char *path, struct symbols *out)
{
    char line[256];
    FILE *f = fopen(path, "r");

    out->count = 0;
    if (!f)
        return false;
    while (fgets(line, sizeof line, f)) {
        char *s = line, *end;
        while (*s == ' ' || *s == '\t')
            s++;
        end = strchr(s, ';');
        if (strncmp(s, "clmem_", 6) != 0 || !end || out->count == MAX_SYMBOLS)
            continue;
        *end = '\0';
        snprintf(out->names[out->count++], sizeof out->names[0], "%s", s);
    }
    fclose(f);
    return true;
}

static bool in_table(const char *name)
{
    for (int i = 0; i < ROW_COUNT; i++)
        if (strcmp(rows[i].name, name) == 0)
            return true;
    for (int i = 0; i < CANNOT_FAIL_COUNT; i++)
        if (strcmp(cannot_fail[i], name) == 0)
            return true;
    return false;
}

static bool in_symbols(const struct symbols *all, int n, const char *name)
{
    for (int l = 0; l < n; l++)
        for (int i = 0; i < all[l].count; i++)
            if (strcmp(all[l].names[i], name) == 0)
                return true;
    return false;
}

/* One test point per library: each public name has a row or is listed as
 * one that cannot fail; then one for the table: every name in it is a
 * public function. */
static void check_coverage(void)
{
    static struct symbols all[LIB_COUNT];
    const char *top = getenv("top_srcdir");
    char path[4096];
    bool all_read = true;

    if (!top)
        top = ".";
    for (int l = 0; l < LIB_COUNT; l++) {
        char missing[2048] = "";
        size_t used = 0;

        snprintf(path, sizeof path, "%s/%s", top, libraries[l].sym);
        if (!tap_ok(read_sym(path, &all[l]) && all[l].count > 0, "%s: %s lists public functions", libraries[l].name,
                    libraries[l].sym)) {
            all_read = false;
            continue;
        }
        for (int i = 0; i < all[l].count; i++)
            if (!in_table(all[l].names[i]) && used < sizeof missing - 80)
                used += (size_t)snprintf(missing + used, sizeof missing - used, " %s", all[l].names[i]);
        tap_ok(!missing[0], "%s: every public function has a row or is listed as one that cannot fail%s%s",
               libraries[l].name, missing[0] ? "; no row for:" : "", missing);
    }
    if (all_read) {
        char stale[2048] = "";
        size_t used = 0;
        for (int i = 0; i < ROW_COUNT; i++)
            if (!in_symbols(all, LIB_COUNT, rows[i].name) && used < sizeof stale - 80)
                used += (size_t)snprintf(stale + used, sizeof stale - used, " %s", rows[i].name);
        for (int i = 0; i < CANNOT_FAIL_COUNT; i++)
            if (!in_symbols(all, LIB_COUNT, cannot_fail[i]) && used < sizeof stale - 80)
                used += (size_t)snprintf(stale + used, sizeof stale - used, " %s", cannot_fail[i]);
        tap_ok(!stale[0], "every name in the table is a public function%s%s", stale[0] ? "; not public:" : "",
               stale);
    } else {
        tap_ok(false, "every name in the table is a public function (a .sym file could not be read)");
    }
}

/* ------------------------------------------------------------ the rows */

/* Does msg begin with "name: ", once? */
static bool named_once(const char *msg, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(msg, name, n) != 0 || strncmp(msg + n, ": ", 2) != 0)
        return false;
    msg += n + 2;
    return !(strncmp(msg, name, n) == 0 && msg[n] == ':');
}

/* Does the test `where` (its .c under top_srcdir) look for "name: " at
 * the start of a message? It holds the string "\"name: " (the start of
 * a C string literal). */
static bool source_checks(const char *where, const char *name)
{
    const char *top = getenv("top_srcdir");
    char path[4096], want[256], line[1024];
    bool found = false;
    FILE *f;

    snprintf(path, sizeof path, "%s/%s.c", top ? top : ".", where);
    snprintf(want, sizeof want, "\"%s: ", name);
    if (!(f = fopen(path, "r")))
        return false;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, want) != NULL;
    fclose(f);
    return found;
}

/* Run a call with the heap exhausted: the address space is limited to
 * what the process has now and a little more, and the heap filled until
 * malloc fails; then the call, and everything freed again. False when the
 * heap could not be exhausted. */
static bool out_of_memory(clmem_status (*call)(void), clmem_status *status)
{
    struct rlimit old, low;
    void *blocks = NULL; /* each block holds the address of the one before */
    size_t sizes[] = {1 << 20, 4096, 64, 16};
    FILE *f;
    unsigned long vm_pages = 0;
    bool exhausted = false;

    f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%lu", &vm_pages) != 1 || getrlimit(RLIMIT_AS, &old) != 0) {
        if (f)
            fclose(f);
        return false;
    }
    fclose(f);
    low = old;
    low.rlim_cur = (rlim_t)vm_pages * 4096 + (rlim_t)(32 << 20);
    if (setrlimit(RLIMIT_AS, &low) != 0)
        return false;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        void *b;
        while ((b = malloc(sizes[s]))) {
            *(void **)b = blocks;
            blocks = b;
        }
        exhausted = true;
    }
    *status = call();
    while (blocks) {
        void *next = *(void **)blocks;
        free(blocks);
        blocks = next;
    }
    setrlimit(RLIMIT_AS, &old);
    return exhausted;
}

static void check_row(const struct row *r)
{
    clmem_status s = CLMEM_OK;
    const char *msg;
    bool ok;

    if (r->how == ELSEWHERE) {
        tap_ok(source_checks(r->where, r->name), "%s: %s.c checks that its sentence begins with \"%s: \"", r->name,
               r->where, r->name);
        return;
    }
    if (!libraries[r->lib].built || !r->call) {
        tap_skip("not built", "%s: %s was not built", r->name, libraries[r->lib].name);
        return;
    }
    clmem_error_clear();
    if (r->how == OUT_OF_MEMORY) {
        if (getenv("CLMEM_TEST_INSTRUMENTED")) {
            tap_skip("the address space cannot be limited under ASan or valgrind", "%s with no memory left",
                     r->name);
            return;
        }
        if (!out_of_memory(r->call, &s)) {
            tap_ok(false, "%s: the heap could be exhausted for it (RLIMIT_AS)", r->name);
            return;
        }
    } else {
        s = r->call();
    }
    msg = clmem_error_message();
    ok = s != CLMEM_OK && clmem_error_status() == s && named_once(msg, r->name);
    if (r->todo)
        tap_todo(ok, r->todo, "%s fails (%s) with a sentence that begins with its name, once: %s", r->name,
                 clmem_status_name(s), msg);
    else
        tap_ok(ok, "%s fails (%s) with a sentence that begins with its name, once: %s", r->name,
               clmem_status_name(s), msg);
}

int main(void)
{
    tap_plan(2 * LIB_COUNT + 1 + ROW_COUNT + 1);
    check_coverage();
    for (int i = 0; i < ROW_COUNT; i++)
        check_row(&rows[i]);
    /* The check itself: a sentence named twice, or not at all, is refused. */
    tap_ok(!named_once("clmem_ipc_accept: clmem_ipc_accept: nobody connected", "clmem_ipc_accept") &&
               !named_once("fd_out is NULL.", "clmem_ipc_accept") &&
               named_once("clmem_ipc_accept: fd_out is NULL.", "clmem_ipc_accept"),
           "a name written twice, or missing, is refused");
    return tap_done();
}
