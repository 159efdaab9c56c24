/* SPDX-License-Identifier: MIT */
/* Fault injection: every failure point of the bridge's creation, imports
 * (of buffers, and of images: plane buffers, image views, optimal-tiling
 * images), handles for more queues, handoff (of one handle, and of many
 * at once), teardown, semaphores, the frame ring and Vulkan buffer and
 * image helpers is made to fail at every pass a sequence of calls makes
 * through it, and each failure must be reported as documented and lose
 * nothing.
 *
 * The test is this driver; t/fault/fault-cases.c, the table of cases (a
 * point, a sequence of calls that reaches it, the status and the call a
 * failure there reports); and the interpreter that runs a sequence and
 * judges one run: t/fault/fault-run.c, with the operations in groups
 * (t/fault/fault-ops-*.c; t/fault/fault-run.h lists them). For each row of the table:
 *  1. a dry run with nothing armed counts the passes through the point;
 *  2. for n = 1..passes, twice (RETRY: disarm and repeat the failed call,
 *     then finish the sequence; DROP: let go of everything at once, then
 *     run the whole sequence once more with nothing armed, the "next
 *     call"), the nth pass fails and the test checks
 *       - the failing call returned the row's status, clmem_error_call()
 *         names the row's call (NULL for the library's own allocations and
 *         checks), the native code is non-zero for OpenCL, Vulkan and
 *         system failures, *out is NULL after a failed import, handle,
 *         semaphore, ring or bridge creation, *event_out is NULL after a
 *         failed acquire_many, release_many, cl_next or cl_done, a caller's
 *         fd is still open, and a failed bridge creation retained nothing
 *         (the context's reference count is unchanged right after it);
 *       - a pass that fails inside a call with no status (the last unref,
 *         which starts the import's teardown: the marker list, the markers,
 *         their callbacks, the hand-back of memory left acquired) is judged
 *         by what follows: clmem_bridge_finish must still return CLMEM_OK,
 *         and nothing may be lost;
 *       - nothing was lost, after clmem_bridge_finish returned CLMEM_OK and
 *         the test dropped its bridge reference: the fd count and the
 *         context's and the three queues' OpenCL reference counts are as
 *         before the run's bridge was made, host-mapped memory is no longer
 *         mapped, the validation layer saw no new error, every Vulkan
 *         keepalive an import was given (a probe anchor of its own per
 *         import call) has run its release exactly once, and only after
 *         OpenCL destroyed the cl_mem the import made, and the caller's
 *         anchor on the Vulkan memory runs its release at once, exactly
 *         once, when the caller drops its reference (the bridge kept none),
 *         and so does the caller's anchor on the semaphores (no ring or
 *         semaphore still holds one: a failed ring creation let go of the
 *         frames, the semaphores, the queue and the bridge);
 *       - the library still works (the retry, or the next call).
 *
 * Each run makes a bridge of its own (import cache on) and drops it at
 * the end, so that what one broken run strands is not blamed on the next;
 * the bridge-creation rows make and drop theirs in the sequence. Adding a
 * point is one row in t/fault/fault-cases.c; this driver reads the library's
 * sources (CLMEM_TOP_SRCDIR) and fails when a FAULT("...") there has no
 * row, when a row names a point the sources lack, or when the library
 * reached a point that has no row. Sequences whose path the machine lacks
 * (opaque fd, device-ordered semaphores, image views, optimal-tiling images
 * on CPU machines) are skipped with the bridge's reason, naming what is
 * missing.
 *
 * Links t/lib/libclmem-fault.la, libclmem and libclmem-bridge built with the
 * seam (lib/fault.h), instead of the shipped libraries; built twice, the
 * second time as t/fault/fakefd-fault-injection with t/lib/fake-nvidia-import.c. */
#include "fault-injection.h"
#include "t/lib/fault-control.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef CLMEM_TOP_SRCDIR
#define CLMEM_TOP_SRCDIR "."
#endif

#define PIECE_MIN 1024 /* bytes of a piece (more where the sub-range offset needs it) */

/* ------------------------------------------------- what the machine has */

/* A need met by a trial import: met on CLMEM_OK; not met, with the
 * bridge's reason, on CLMEM_ERR_UNSUPPORTED (not offered here). Any other
 * status is a failure of its own, not a missing capability: a TAP point
 * that fails. */
static void need_from_trial(struct fault_env *e, enum needs need, clmem_status s, const char *what, const char *why)
{
    e->have[need] = s == CLMEM_OK;
    snprintf(e->why_not[need], sizeof e->why_not[0], "%s: %s", what, why);
    if (s != CLMEM_OK && s != CLMEM_ERR_UNSUPPORTED) {
        tap_ok(false, "a trial import for \"%s\" failed with %s, not a missing capability: %s", what,
               clmem_status_name(s), why);
        snprintf(e->why_not[need], sizeof e->why_not[0], "%s: the trial import failed (the point above)", what);
    }
}

/* NEEDS_LINEAR_IMAGE: a linear image in host-visible memory, its plane
 * buffer on the host-mapped path. */
static void check_linear_image(struct fault_env *e, clmem_bridge *b)
{
    char why[512] = "", label[256];
    clmem_status s = fault_image_trial(e, b, CLMEM_BRIDGE_PATH_HOST_MAPPED, false, IMAGE_FORMAT, 0, why, sizeof why);

    snprintf(label, sizeof label, "a %ux%u linear %s image's plane buffer on the host-mapped path", IMAGE_W, IMAGE_H,
             clmem_bridge_image_format_name(IMAGE_FORMAT));
    need_from_trial(e, NEEDS_LINEAR_IMAGE, s, label, why);
}

/* NEEDS_IMAGE_VIEW(_OPAQUE_FD): the path, the capability, then a view of
 * the image the sequence makes (the device's pitch and address rules
 * depend on it). */
static void check_image_view(struct fault_env *e, clmem_bridge *b, enum needs need, clmem_bridge_path path)
{
    const char *what = path == CLMEM_BRIDGE_PATH_HOST_MAPPED ? "host-mapped" : "opaque-fd";
    bool view = (clmem_bridge_caps(b) & CLMEM_BRIDGE_CAP_IMAGE_VIEW) != 0;
    char why[512] = "", label[256];
    clmem_status s;

    if (need == NEEDS_IMAGE_VIEW_OPAQUE_FD && !e->have[NEEDS_OPAQUE_FD]) {
        snprintf(e->why_not[need], sizeof e->why_not[0], "image views on the opaque-fd path (%s): %.600s",
                 view ? "CLMEM_BRIDGE_CAP_OPAQUE_FD" : "CLMEM_BRIDGE_CAP_OPAQUE_FD and CLMEM_BRIDGE_CAP_IMAGE_VIEW",
                 e->why_not[NEEDS_OPAQUE_FD]);
        return;
    }
    if (!view) {
        s = clmem_bridge_check_image(b, IMAGE_FORMAT, VK_IMAGE_TILING_LINEAR, path, CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE);
        snprintf(e->why_not[need], sizeof e->why_not[0], "image views (CLMEM_BRIDGE_CAP_IMAGE_VIEW): %s",
                 s != CLMEM_OK ? clmem_error_message() : "the bridge does not report the capability");
        return;
    }
    s = fault_image_trial(e, b, path, false, IMAGE_FORMAT, CLMEM_BRIDGE_IMAGE_AS_IMAGE, why, sizeof why);
    snprintf(label, sizeof label,
             "image views (CLMEM_BRIDGE_CAP_IMAGE_VIEW is set, but not of a %ux%u %s linear image on the %s path)",
             IMAGE_W, IMAGE_H, clmem_bridge_image_format_name(IMAGE_FORMAT), what);
    need_from_trial(e, need, s, label, why);
}

/* NEEDS_OPTIMAL_IMAGE: the opaque-fd path, and the first format of the
 * bridge's list whose optimal-tiling live check passes (then one import). */
static void check_optimal_image(struct fault_env *e, clmem_bridge *b)
{
    char last[512] = "no format offers optimal tiling", why[512], label[256];
    uint32_t n = 0;
    const VkFormat *formats = clmem_bridge_image_formats(&n);
    clmem_status s;

    if (!e->have[NEEDS_OPAQUE_FD]) {
        snprintf(e->why_not[NEEDS_OPTIMAL_IMAGE], sizeof e->why_not[0],
                 "optimal-tiling images (CLMEM_BRIDGE_CAP_OPAQUE_FD, then clmem_bridge_image_live_check): %.600s",
                 e->why_not[NEEDS_OPAQUE_FD]);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        s = clmem_bridge_image_live_check(b, formats[i], CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk.queue,
                                          e->vk.queue_family, e->f.queue);
        if (s == CLMEM_OK) {
            e->optimal_format = formats[i];
            break;
        }
        if (s != CLMEM_ERR_UNSUPPORTED) /* not an answer: the check could not be set up */
            tap_ok(false, "the optimal-tiling live check of %s on the first bridge could be set up: %s %s",
                   clmem_bridge_image_format_name(formats[i]), clmem_status_name(s), clmem_error_message());
        snprintf(last, sizeof last, "%s: %s", clmem_bridge_image_format_name(formats[i]), clmem_error_message());
    }
    if (!e->optimal_format) {
        snprintf(e->why_not[NEEDS_OPTIMAL_IMAGE], sizeof e->why_not[0],
                 "optimal-tiling images: no format passed clmem_bridge_image_live_check on the opaque-fd path "
                 "(last: %s)",
                 last);
        return;
    }
    if ((s = clmem_bridge_finish(b, SETTLE_NS)) != CLMEM_OK)
        tap_bail("clmem_bridge_finish after the live checks returned %s: %s", clmem_status_name(s),
                 clmem_error_message());
    s = fault_image_trial(e, b, CLMEM_BRIDGE_PATH_OPAQUE_FD, true, e->optimal_format, CLMEM_BRIDGE_IMAGE_AS_IMAGE, why, sizeof why);
    snprintf(label, sizeof label, "optimal-tiling images (the live check of %s passed, but not for a %ux%u one)",
             clmem_bridge_image_format_name(e->optimal_format), IMAGE_W, IMAGE_H);
    need_from_trial(e, NEEDS_OPTIMAL_IMAGE, s, label, why);
}

/* An OpenCL failure of the moment inside the live check (the fault's code,
 * CL_OUT_OF_RESOURCES: the driver out of something, or a context that
 * failed in earlier work) is returned, not kept: the next check runs
 * again and gives the driver's own answer. */
static void check_live_check_not_kept(struct fault_env *e)
{
    const char *point = "clCreateImageWithProperties";
    uint32_t n = 0;
    const VkFormat format = clmem_bridge_image_formats(&n)[0];
    const char *name = clmem_bridge_image_format_name(format);
    clmem_bridge *b;
    clmem_status first, again;
    char first_message[512];
    int32_t first_code;
    int passes;

    if (!e->have[NEEDS_OPAQUE_FD]) {
        tap_skip(e->why_not[NEEDS_OPAQUE_FD], "the live check keeps no OpenCL failure of the moment");
        tap_skip(e->why_not[NEEDS_OPAQUE_FD], "  ... and runs again the next time");
        return;
    }
    b = bridge_open(&e->vk, &e->f, 0);
    clmem_fault_reset();
    clmem_fault_arm(point, 1);
    first = clmem_bridge_image_live_check(b, format, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk.queue, e->vk.queue_family,
                                          e->f.queue);
    first_code = clmem_error_native_code();
    snprintf(first_message, sizeof first_message, "%s", clmem_error_message());
    if (first == CLMEM_ERR_UNSUPPORTED && clmem_fault_fired() == 0) {
        /* Refused before the import: optimal-tiling images of the format
         * are not offered here at all (the sentence says why). */
        clmem_fault_reset();
        tap_skip(first_message, "the live check keeps no OpenCL failure of the moment");
        tap_skip(first_message, "  ... and runs again the next time");
        goto done;
    }
    tap_ok(clmem_fault_fired() == 1 && first == CLMEM_ERR_OPENCL && strcmp(clmem_error_call(), point) == 0 &&
               first_code == CL_OUT_OF_RESOURCES,
           "the live check of %s with %s failing (CL_OUT_OF_RESOURCES) -> CLMEM_ERR_OPENCL naming the call, not a "
           "kept refusal (%s: %s)",
           name, point, clmem_status_name(first), first_message);
    clmem_fault_reset();
    again = clmem_bridge_image_live_check(b, format, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk.queue, e->vk.queue_family,
                                          e->f.queue);
    passes = clmem_fault_passes(point);
    tap_ok(passes == 1 && (again == CLMEM_OK || again == CLMEM_ERR_UNSUPPORTED) &&
               (again == CLMEM_OK || strstr(clmem_error_message(), "CL_OUT_OF_RESOURCES") == NULL),
           "  ... and runs again the next time (%d import(s)), giving the driver's own answer: %s%s%s", passes,
           clmem_status_name(again), again ? ": " : "", again ? clmem_error_message() : "");
done:
    if ((first = clmem_bridge_finish(b, SETTLE_NS)) != CLMEM_OK)
        tap_bail("clmem_bridge_finish after the live checks returned %s: %s", clmem_status_name(first),
                 clmem_error_message());
    clmem_bridge_unref(b);
}

/* Whether the machine can run a sequence's path at all. */
static void check_needs(struct fault_env *e)
{
    clmem_bridge *b = bridge_open(&e->vk, &e->f, 0);
    clmem_status s;

    e->have[NEEDS_NOTHING] = true;
    s = clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_OPAQUE_FD);
    e->have[NEEDS_OPAQUE_FD] = s == CLMEM_OK && e->vk.has_memory_fd;
    snprintf(e->why_not[NEEDS_OPAQUE_FD], sizeof e->why_not[0], "opaque fd: %s",
             s != CLMEM_OK ? clmem_error_message() : "VK_KHR_external_memory_fd is not enabled");
    s = clmem_bridge_check_semaphore(b, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD);
    e->have[NEEDS_SEMAPHORE_OPAQUE_FD] = s == CLMEM_OK && e->vk.has_semaphore_fd;
    snprintf(e->why_not[NEEDS_SEMAPHORE_OPAQUE_FD], sizeof e->why_not[0], "opaque-fd semaphores: %s",
             s != CLMEM_OK ? clmem_error_message() : "VK_KHR_external_semaphore_fd is not enabled");
    check_linear_image(e, b);
    check_image_view(e, b, NEEDS_IMAGE_VIEW, CLMEM_BRIDGE_PATH_HOST_MAPPED);
    check_image_view(e, b, NEEDS_IMAGE_VIEW_OPAQUE_FD, CLMEM_BRIDGE_PATH_OPAQUE_FD);
    check_optimal_image(e, b);
    clmem_bridge_unref(b);
}

/* ----------------------------------------------------- the point list */

#define SOURCE_POINTS_MAX 128
static char *source_points[SOURCE_POINTS_MAX];
static char source_where[SOURCE_POINTS_MAX][64];
static int source_point_count;

/* Every FAULT("...") in dir's *.c files, deduplicated, into source_points.
 * False (with why) when the directory cannot be read. */
static bool scan_sources(const char *dir, char *why, size_t len)
{
    char path[4096];
    DIR *d;
    struct dirent *de;

    snprintf(path, sizeof path, "%s/%s", CLMEM_TOP_SRCDIR, dir);
    if (!(d = opendir(path))) {
        snprintf(why, len, "cannot read %.400s", path);
        return false;
    }
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        FILE *fp;
        char *text, *p;
        long size;

        if (n < 3 || strcmp(de->d_name + n - 2, ".c") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s/%s", CLMEM_TOP_SRCDIR, dir, de->d_name);
        if (!(fp = fopen(path, "rb")))
            continue;
        fseek(fp, 0, SEEK_END);
        size = ftell(fp);
        rewind(fp);
        text = calloc(1, (size_t)(size > 0 ? size : 0) + 1);
        if (text && size > 0 && fread(text, 1, (size_t)size, fp) != (size_t)size)
            text[0] = '\0';
        fclose(fp);
        for (p = text; p && (p = strstr(p, "FAULT(\"")); p++) {
            char *start = p + 7, *end = strchr(start, '"');
            bool known = false;
            if (!end)
                break;
            for (int i = 0; i < source_point_count && !known; i++)
                known = strlen(source_points[i]) == (size_t)(end - start) &&
                        strncmp(source_points[i], start, (size_t)(end - start)) == 0;
            if (!known && source_point_count < SOURCE_POINTS_MAX) {
                source_points[source_point_count] = strndup(start, (size_t)(end - start));
                snprintf(source_where[source_point_count], sizeof source_where[0], "%s/%s", dir, de->d_name);
                source_point_count++;
            }
        }
        free(text);
    }
    closedir(d);
    return true;
}

static bool has_row(const char *point)
{
    for (int i = 0; i < fault_case_count; i++)
        if (strcmp(fault_cases[i].point, point) == 0)
            return true;
    return false;
}

/* Before the runs: the rows and the sources name the same points. */
static void check_point_list(void)
{
    char why[4096] = "", missing[2048] = "", stale[2048] = "";
    size_t used = 0;
    bool readable = scan_sources("bridge", why, sizeof why) && scan_sources("lib", why, sizeof why);

    if (!readable || source_point_count == 0) {
        tap_ok(false, "the library's sources list their FAULT() points: %s", readable ? "none found" : why);
        return;
    }
    for (int i = 0; i < source_point_count; i++)
        if (!has_row(source_points[i]) && used + 80 < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used, " %s (%s)", source_points[i],
                                     source_where[i]);
    tap_ok(!missing[0], "every FAULT() point of bridge/*.c and lib/*.c (%d) has a row in cases%s%s",
           source_point_count, missing[0] ? "; none for:" : "", missing);
    used = 0;
    for (int i = 0; i < fault_case_count; i++) {
        bool found = false, listed = false;
        for (int j = 0; j < source_point_count && !found; j++)
            found = strcmp(source_points[j], fault_cases[i].point) == 0;
        for (int j = 0; j < i && !listed; j++)
            listed = strcmp(fault_cases[j].point, fault_cases[i].point) == 0;
        if (!found && !listed && used + 80 < sizeof stale)
            used += (size_t)snprintf(stale + used, sizeof stale - used, " %s", fault_cases[i].point);
    }
    tap_ok(!stale[0], "every row's point is a FAULT() of the sources%s%s", stale[0] ? "; not found:" : "", stale);
}

/* After the runs: nothing the library reached went untested. */
static void check_points_reached(const bool *injected)
{
    const char *seen[128];
    int n = clmem_fault_seen(seen, 128);
    char missing[2048] = "", untested[2048] = "";
    size_t used = 0, used2 = 0;

    for (int i = 0; i < n && i < 128; i++)
        if (!has_row(seen[i]) && used + 80 < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used, " %s", seen[i]);
    tap_ok(!missing[0], "every point the library reached (%d) has a row%s%s", n, missing[0] ? "; none for:" : "",
           missing);
    for (int i = 0; i < source_point_count; i++) {
        bool done = false;
        for (int j = 0; j < fault_case_count && !done; j++)
            done = injected[j] && strcmp(fault_cases[j].point, source_points[i]) == 0;
        if (!done && used2 + 80 < sizeof untested)
            used2 += (size_t)snprintf(untested + used2, sizeof untested - used2, " %s", source_points[i]);
    }
    if (untested[0])
        tap_diag("points whose rows were all skipped on this machine (their path is missing):%s", untested);
}

int main(void)
{
    static struct fault_env e; /* large; and the runs keep pointers into it */
    bool *injected = calloc((size_t)fault_case_count, sizeof *injected); /* rows whose point was made to fail */
    cl_uint align_bits = 0;
    struct timespec t0, t1;
    cl_int err;
    int points = 0;

    if (!injected)
        tap_bail("calloc failed");
    bridge_open_vulkan(&e.vk); /* may skip the whole program: before any test point */
    cl_fixture_open_paired(&e.f, &e.vk);
    check_point_list();
    e.queues[0] = e.f.queue;
    for (int i = 1; i < NQUEUES; i++) {
        e.queues[i] = clCreateCommandQueueWithProperties(e.f.context, e.f.device, NULL, &err);
        if (err != CL_SUCCESS)
            tap_bail("clCreateCommandQueueWithProperties failed: %d", err);
    }
    clGetDeviceInfo(e.f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    e.align = align_bits / 8 ? align_bits / 8 : 1;
    e.piece = e.align > PIECE_MIN ? e.align : PIECE_MIN;
    if ((VkDeviceSize)MANY * e.piece > ALLOC_SIZE)
        tap_bail("%d pieces of %llu bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN) do not fit in the %d-byte buffer", MANY,
                 (unsigned long long)e.piece, ALLOC_SIZE);
    check_needs(&e);
    check_live_check_not_kept(&e);
    tap_diag("OpenCL: %s (%s); Vulkan: %s; sub-range offset %llu, pieces of %llu bytes", e.f.device_name,
             e.f.platform_name, e.vk.device_name, (unsigned long long)e.align, (unsigned long long)e.piece);

    /* Warm-up: drivers open fds and make objects of their own on first use,
     * so the OpenCL baselines are taken after one good run of every
     * sequence. */
    for (int i = 0; i < fault_case_count; i++)
        if (e.have[fault_cases[i].seq->needs]) {
            bool first = true;
            for (int j = 0; j < i && first; j++)
                first = fault_cases[j].seq != fault_cases[i].seq;
            if (!first) /* once per sequence: a run reads nothing of the row but its sequence */
                continue;
            tap_diag("warming up: %s", fault_cases[i].seq->name); /* so that a crash names its sequence */
            fault_warm_up(&e, &fault_cases[i]);
        }
    for (int i = 0; i < NQUEUES; i++)
        clFinish(e.queues[i]);
    usleep(100000); /* let the driver's own references go (see t/fault/fault-run.c's refs_settle) */
    e.context_refs = cl_context_refcount(e.f.context);
    for (int i = 0; i < NQUEUES; i++)
        e.queue_refs[i] = cl_queue_refcount(e.queues[i]);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < fault_case_count; i++) {
        const struct fault_case *c = &fault_cases[i];
        int passes;

        if (!e.have[c->seq->needs]) {
            tap_skip(e.why_not[c->seq->needs], "%s, %s", c->point, c->seq->name);
            continue;
        }
        /* The fd baseline is taken per row, after a good run of its own
         * sequence: the NVIDIA driver keeps one /dev/nvidiactl fd more or
         * less open depending on what ran last (one more after the first
         * opaque-fd run that follows host-mapped ones, the same one on
         * every later run), which is not a leak: a leak grows per run. */
        fault_warm_up(&e, c);
        fault_take_fd_baseline(&e);
        passes = fault_run_case(&e, c, 0, 0, MODE_DRY);
        for (int n = 1; n <= passes; n++) {
            fault_run_case(&e, c, n, passes, MODE_RETRY);
            fault_run_case(&e, c, n, passes, MODE_DROP);
            points++;
        }
        injected[i] = passes > 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tap_diag("%d (point, pass) failures injected, each twice, in %.1f s; OpenCL reference counts took up to %d ms "
             "to settle",
             points, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, e.settle_ms_max);
    check_points_reached(injected);

    if (e.stranded) {
        /* Failed above already; closing would hang on the stranded import. */
        tap_diag("%d run(s) left an import behind (an anchor never released): not closing the OpenCL context and "
                 "the Vulkan device, whose destruction would wait for it",
                 e.stranded);
        tap_skip("an import was stranded (see above)", "the Vulkan validation layer reported no error");
        free(injected);
        return tap_done();
    }
    for (int i = 1; i < NQUEUES; i++)
        clReleaseCommandQueue(e.queues[i]);
    cl_fixture_close(&e.f);
    tap_diag("OpenCL fixture closed");
    vkctx_close(&e.vk);
    /* After vkDestroyDevice: the layer reports objects still alive then. */
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error, device teardown included");
    free(injected);
    return tap_done();
}
