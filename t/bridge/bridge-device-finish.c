/* SPDX-License-Identifier: MIT */
/* Being done with a VkDevice after the last unref (clmem_bridge_device_finish).
 *
 * The careless program, in a child process (t/lib/child.h) so that a crash is
 * a failed test point and not a lost test: it imports a buffer, acquires
 * it and enqueues a kernel held back by a user event that a helper thread
 * opens 1.5 s later (6 s in an instrumented run); drops the bridge first, then the last handle while
 * the kernel is pending and the memory still acquired; releases its queue
 * and context; calls clmem_bridge_device_finish(); destroys the VkDevice
 * at once (vkctx_close); and lives on for another two seconds. Before
 * that call existed, the teardown ran later on a PoCL thread and called
 * vkUnmapMemory on the destroyed device (SIGSEGV). The child reports its
 * checks as "CHECK <0|1> <what>" lines, which this process turns into
 * test points: the call returned CLMEM_OK only after the gate opened, the
 * keepalive (which frees the memory) ran once, before it returned; and
 * after vkDestroyDevice the library made no Vulkan call (the bridge's
 * vkMapMemory and vkUnmapMemory go through a counting wrapper) and the
 * process did not die.
 *
 * The same program without the call, as a control: the teardown's Vulkan
 * calls then come after the point where it would destroy the device (so
 * the gate really holds the teardown back). Then the call's contract in
 * this process: NULL, a device no bridge has, handles still alive
 * (CLMEM_ERR_IN_USE, nothing released), a timeout while the gate is
 * closed, and a bridge the application still holds.
 *
 * Runs on the path the bridge offers first: host-mapped on the CPU
 * machines (lavapipe + PoCL), opaque fd on the GPU machine. The careless
 * case alone: `t/bridge/bridge-device-finish careless` (scripts/check-device-finish.sh
 * runs it 20 times). */
#include "t/lib/bridge-fixture.h"
#include "t/lib/child.h"
#include "t/lib/tap.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long the gate stays closed: 1.5 s, or 6 s where ASan, TSan or
 * valgrind slow every call (CLMEM_TEST_INSTRUMENTED, tap.h), so that what
 * must happen before it opens still does. */
static int gate_ms(void)
{
    return (int)tap_time_bound_ms(1500.0, 6000.0);
}
#define LIVE_ON_MS 2000
static const VkDeviceSize KiB = 1024;
static const uint64_t SECOND_NS = 1000000000u;

/* ------------------------------------------------ Vulkan calls, counted */

static struct vkctx *watched_vk;
static atomic_bool device_destroyed;
static atomic_int late_vulkan_calls;
static PFN_vkGetDeviceProcAddr real_get_device_proc_addr;
static PFN_vkMapMemory real_map;
static PFN_vkUnmapMemory real_unmap;

/* Counted and then made, as the careless program would make them. */
static VKAPI_ATTR VkResult VKAPI_CALL counted_map(VkDevice device, VkDeviceMemory memory, VkDeviceSize offset,
                                                  VkDeviceSize size, VkMemoryMapFlags flags, void **data)
{
    if (atomic_load(&device_destroyed))
        atomic_fetch_add(&late_vulkan_calls, 1);
    return real_map(device, memory, offset, size, flags, data);
}

static VKAPI_ATTR void VKAPI_CALL counted_unmap(VkDevice device, VkDeviceMemory memory)
{
    if (atomic_load(&device_destroyed))
        atomic_fetch_add(&late_vulkan_calls, 1);
    real_unmap(device, memory);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL counting_device_proc_addr(VkDevice device, const char *name)
{
    if (strcmp(name, "vkMapMemory") == 0) {
        real_map = (PFN_vkMapMemory)real_get_device_proc_addr(device, name);
        return (PFN_vkVoidFunction)counted_map;
    }
    if (strcmp(name, "vkUnmapMemory") == 0) {
        real_unmap = (PFN_vkUnmapMemory)real_get_device_proc_addr(device, name);
        return (PFN_vkVoidFunction)counted_unmap;
    }
    return real_get_device_proc_addr(device, name);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL counting_instance_proc_addr(VkInstance instance, const char *name)
{
    if (strcmp(name, "vkGetDeviceProcAddr") == 0) {
        real_get_device_proc_addr =
            (PFN_vkGetDeviceProcAddr)watched_vk->get_instance_proc_addr(instance, "vkGetDeviceProcAddr");
        return (PFN_vkVoidFunction)counting_device_proc_addr;
    }
    return watched_vk->get_instance_proc_addr(instance, name);
}

/* ------------------------------------------------ the memory's keepalive */

/* Frees the buffer and memory with the application's own Vulkan calls
 * (the bridge is no longer the application's to use), noting when. */
struct owned {
    VkDevice device;
    VkBuffer buffer;
    VkDeviceMemory memory;
    atomic_int runs;
    atomic_int runs_after_destroy;
    atomic_llong ran_ns;
};

static void owned_release(void *user)
{
    struct owned *o = user;
    if (atomic_load(&device_destroyed)) {
        atomic_fetch_add(&o->runs_after_destroy, 1);
        atomic_fetch_add(&late_vulkan_calls, 1);
    }
    atomic_store(&o->ran_ns, tap_now_ns());
    vkDestroyBuffer(o->device, o->buffer, NULL);
    vkFreeMemory(o->device, o->memory, NULL);
    atomic_fetch_add(&o->runs, 1);
}

/* A 64 KiB buffer on the path the bridge offers first, imported with an
 * owned_release anchor (the import holds the only reference); its handle. */
static clmem_handle *owned_import(struct owned *o, clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f)
{
    clmem_bridge_path path = bridge_test_path(b);
    clmem_bridge_vk_memory memory;
    clmem_keepalive *ka;
    clmem_handle *h = NULL;

    memset(o, 0, sizeof *o);
    if (clmem_bridge_vk_buffer_create(b, 64 * KiB, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, path_memory_props(path),
                                      path_export_types(vk, path), &o->buffer, &memory) != CLMEM_OK)
        tap_bail("clmem_bridge_vk_buffer_create failed: %s", clmem_error_message());
    o->device = vk->device;
    o->memory = memory.memory;
    if (!(ka = clmem_keepalive_new(owned_release, o)))
        tap_bail("clmem_keepalive_new failed");
    if (clmem_bridge_import_vk(b, &memory, 0, 64 * KiB, path, ka, f->queue, CL_MEM_READ_WRITE, &h) != CLMEM_OK)
        tap_bail("clmem_bridge_import_vk failed: %s", clmem_error_message());
    clmem_keepalive_unref(ka);
    printf("# path %s, OpenCL %s, Vulkan %s\n", clmem_bridge_path_name(path), f->device_name, vk->device_name);
    return h;
}

/* ------------------------------------------------ the gate */

struct gate {
    cl_event event; /* one reference, the helper's */
    int delay_ms;
    atomic_llong opened_ns;
};

static void *open_gate(void *arg)
{
    struct gate *g = arg;
    usleep((useconds_t)g->delay_ms * 1000);
    atomic_store(&g->opened_ns, tap_now_ns());
    clSetUserEventStatus(g->event, CL_COMPLETE);
    clReleaseEvent(g->event);
    return NULL;
}

static const char writer_source[] = "__kernel void write_words(__global uint *p) {\n"
                                    "    size_t i = get_global_id(0);\n"
                                    "    p[i] = (uint)i * 3u + 1u;\n"
                                    "}\n";

/* Acquire h, and enqueue a kernel on it behind a user event that a helper
 * thread opens delay_ms from now. */
static void enqueue_gated(clmem_bridge *b, struct cl_fixture *f, clmem_handle *h, struct gate *g,
                          pthread_t *thread, int delay_ms)
{
    cl_kernel k = cl_fixture_kernel(f, writer_source, "write_words");
    cl_mem mem = clmem_handle_mem(h);
    size_t words = 64 * KiB / 4;
    cl_int err;

    if (clmem_bridge_acquire(b, h, 0, NULL, NULL) != CLMEM_OK)
        tap_bail("clmem_bridge_acquire failed: %s", clmem_error_message());
    g->event = clCreateUserEvent(f->context, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateUserEvent failed: %d", err);
    if ((err = clSetKernelArg(k, 0, sizeof mem, &mem)) != CL_SUCCESS ||
        (err = clEnqueueNDRangeKernel(f->queue, k, 1, NULL, &words, NULL, 1, &g->event, NULL)) != CL_SUCCESS)
        tap_bail("enqueueing the gated kernel failed: %d", err);
    clFlush(f->queue);
    clReleaseKernel(k); /* the command holds it */
    g->delay_ms = delay_ms;
    atomic_init(&g->opened_ns, 0);
    if (pthread_create(thread, NULL, open_gate, g) != 0)
        tap_bail("starting the gate's thread failed");
}

/* ------------------------------------------------ the careless program */

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
    va_list ap;
    printf("CHECK %d ", ok ? 1 : 0);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* with_call: the program makes clmem_bridge_device_finish() before
 * vkDestroyDevice; without it (the control) it keeps the device, notes
 * when it would have destroyed it, and looks at when the teardown came. */
static int careless(bool with_call)
{
    static struct vkctx vk;
    struct cl_fixture f;
    struct owned o;
    struct gate g;
    pthread_t thread;
    clmem_bridge *b;
    clmem_handle *h;
    clmem_status s;
    struct tap_stopwatch sw;
    long long t_unref, t_call, t_back, t_destroy;

    bridge_open_vulkan(&vk);
    watched_vk = &vk;
    cl_fixture_open_paired(&f, &vk);
    b = bridge_open_with(&vk, &f, 0, counting_instance_proc_addr);
    h = owned_import(&o, b, &vk, &f);
    enqueue_gated(b, &f, h, &g, &thread, gate_ms());

    clmem_bridge_unref(b); /* the bridge first */
    t_unref = tap_now_ns();
    tap_stopwatch_start(&sw);
    clmem_handle_unref(h); /* the last handle, the kernel pending, the memory acquired */
    tap_stopwatch_stop(&sw);
    check(tap_stopwatch_under(&sw, gate_ms() / 2.0) && atomic_load(&g.opened_ns) == 0,
          "the last clmem_handle_unref returned at once (%.2f ms), before the gate opened", sw.wall_ms);
    cl_fixture_close(&f); /* the queue and the context */

    if (!with_call) {
        t_destroy = tap_now_ns(); /* where the careless program destroys the device */
        while (atomic_load(&o.runs) == 0 && tap_ms_between(t_destroy, tap_now_ns()) < 30000.0)
            usleep(10000);
        check(atomic_load(&o.runs) == 1 && atomic_load(&o.ran_ns) > t_destroy,
              "without the call, the keepalive (vkFreeMemory) ran %.0f ms after the point where the program "
              "destroys the device",
              tap_ms_between(t_destroy, atomic_load(&o.ran_ns)));
        s = clmem_bridge_device_finish(vk.device, 30 * SECOND_NS);
        check(s == CLMEM_OK, "and clmem_bridge_device_finish then has nothing left to wait for: %s",
              clmem_status_name(s));
        pthread_join(thread, NULL);
        vkctx_close(&vk);
        return 0;
    }

    t_call = tap_now_ns();
    s = clmem_bridge_device_finish(vk.device, 30 * SECOND_NS);
    t_back = tap_now_ns();
    check(s == CLMEM_OK, "clmem_bridge_device_finish: %s%s%s", clmem_status_name(s), s ? ", " : "",
          s ? clmem_error_message() : "");
    check(atomic_load(&g.opened_ns) != 0 && t_back >= atomic_load(&g.opened_ns),
          "it returned after the gate opened (it waited %.0f ms; the gate opened %.0f ms after the unref)",
          tap_ms_between(t_call, t_back),
          atomic_load(&g.opened_ns) ? tap_ms_between(t_unref, atomic_load(&g.opened_ns)) : -1.0);
    check(atomic_load(&o.runs) == 1 && atomic_load(&o.ran_ns) <= t_back &&
              atomic_load(&o.ran_ns) >= atomic_load(&g.opened_ns),
          "the keepalive ran once (%d), after the gate opened and before the call returned", atomic_load(&o.runs));

    atomic_store(&device_destroyed, true);
    vkctx_close(&vk); /* vkDestroyDevice, at once */
    pthread_join(thread, NULL);
    usleep(LIVE_ON_MS * 1000); /* the process lives on */
    check(atomic_load(&late_vulkan_calls) == 0,
          "after vkDestroyDevice, and %d ms more, the library made no Vulkan call (%d made)", LIVE_ON_MS,
          atomic_load(&late_vulkan_calls));
    check(atomic_load(&o.runs) == 1 && atomic_load(&o.runs_after_destroy) == 0,
          "and the keepalive did not run again");
    check(vkctx_validation_errors() == 0, "the validation layer reported nothing (%u)", vkctx_validation_errors());
    return 0;
}

/* The child's CHECK lines as test points; its end as one more. */
static void run_careless(const char *name, int expect_checks)
{
    struct child_result r;
    char how[96];
    int checks = 0;
    bool ok;

    if (!child_run(name, NULL, 120, &r)) {
        tap_ok(false, "%s: the child ran (%s)", name, r.output);
        return;
    }
    for (const char *line = r.output; *line;) {
        const char *end = strchr(line, '\n');
        int n = end ? (int)(end - line) : (int)strlen(line);
        if (n > 8 && strncmp(line, "CHECK ", 6) == 0 && checks < expect_checks) {
            tap_ok(line[6] == '1', "%s: %.*s", name, n - 8, line + 8);
            checks++;
        } else if (n > 2 && line[0] == '#') {
            tap_diag("  %s: %.*s", name, n - 2, line + 2);
        }
        if (!end)
            break;
        line = end + 1;
    }
    for (; checks < expect_checks; checks++)
        tap_ok(false, "%s: check %d was not reached", name, checks + 1);
    ok = tap_ok(r.ran && !r.timed_out && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s: the process %s",
                name, child_how(&r, how, sizeof how));
    if (!ok)
        child_diag(&r);
}

/* ------------------------------------------------ the contract */

static void check_contract(void)
{
    struct vkctx vk;
    struct cl_fixture f;
    struct owned o;
    struct gate g;
    pthread_t thread;
    clmem_bridge *b;
    clmem_handle *h;
    clmem_status s;
    long long t0;

    tap_is_int(clmem_bridge_device_finish(VK_NULL_HANDLE, 0), CLMEM_ERR_NULL_POINTER, "a NULL device");
    t0 = tap_now_ns();
    s = clmem_bridge_device_finish((VkDevice)(uintptr_t)0x1234, SECOND_NS);
    tap_ok(s == CLMEM_OK && tap_ms_between(t0, tap_now_ns()) < 500.0,
           "a device no bridge was made for: CLMEM_OK at once (%s)", clmem_status_name(s));

    bridge_open_vulkan(&vk);
    cl_fixture_open_paired(&f, &vk);
    b = bridge_open(&vk, &f, 0);
    h = owned_import(&o, b, &vk, &f);

    s = clmem_bridge_device_finish(vk.device, SECOND_NS);
    tap_ok(s == CLMEM_ERR_IN_USE && strstr(clmem_error_message(), "still has handles") &&
               atomic_load(&o.runs) == 0,
           "a handle still alive: CLMEM_ERR_IN_USE, nothing released (%s)", clmem_error_message());

    enqueue_gated(b, &f, h, &g, &thread, gate_ms());
    clmem_handle_unref(h);
    t0 = tap_now_ns();
    s = clmem_bridge_device_finish(vk.device, 0);
    tap_ok(s == CLMEM_ERR_TIMEOUT && atomic_load(&o.runs) == 0 && tap_ms_between(t0, tap_now_ns()) < gate_ms() / 2.0,
           "the gate still closed, a timeout of 0: CLMEM_ERR_TIMEOUT at once, the memory kept (%s)",
           clmem_error_message());
    s = clmem_bridge_device_finish(vk.device, 30 * SECOND_NS);
    tap_ok(s == CLMEM_OK && atomic_load(&o.runs) == 1 && atomic_load(&o.ran_ns) >= atomic_load(&g.opened_ns),
           "then CLMEM_OK once the gate opened, the keepalive run (%s)", clmem_status_name(s));
    pthread_join(thread, NULL);

    /* The application still holds the bridge: done, and still its to use. */
    tap_ok(clmem_bridge_caps(b) != 0 && clmem_bridge_device_finish(vk.device, 0) == CLMEM_OK,
           "a bridge the application still holds stays, with nothing pending");
    clmem_bridge_unref(b);
    cl_fixture_close(&f);
    vkctx_close(&vk);
    tap_is_int(vkctx_validation_errors(), 0, "the validation layer reported nothing");
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "careless") == 0)
        return careless(true);
    if (argc == 2 && strcmp(argv[1], "careless-without-the-call") == 0)
        return careless(false);
    if (argc != 1) {
        fprintf(stderr, "usage: %s [careless | careless-without-the-call]\n", argv[0]);
        return 2;
    }
    {
        struct vkctx probe; /* skip everything where there is no Vulkan */
        bridge_open_vulkan(&probe);
        vkctx_close(&probe);
    }
    tap_plan(8 + 4 + 7);
    run_careless("careless", 7);
    run_careless("careless-without-the-call", 3);
    check_contract();
    return tap_done();
}
