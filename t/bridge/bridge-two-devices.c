/* SPDX-License-Identifier: MIT */
/* Two devices in one process: the case that breaks choosing a
 * device by name is two identical GPUs, so every claim is proven by UUID.
 *  - each Vulkan device pairs with the OpenCL device of its own deviceUUID,
 *    not another one of the same name;
 *  - CLMEM_VK_DEVICE by index and by UUID names each device;
 *  - Vulkan on one device and OpenCL on the other: the fd paths answer
 *    CLMEM_ERR_DEVICE_MISMATCH naming both UUIDs, and a bridge left to find
 *    its OpenCL device in a context of the other one is refused;
 *  - two bridges, one a device, each driving a ring of 3 frames over 1000
 *    frames from its own thread at the same time; every word checked both
 *    ways, every exported fd closed, both dropped in either order.
 * It needs two Vulkan devices that pair with OpenCL devices and skips,
 * naming what the machine has, elsewhere. CLMEM_TEST_ONE_DEVICE_TWICE=1
 * runs it on one device opened twice (two VkDevices, two cl_contexts; the
 * paired one, or on a CPU machine the first with the default OpenCL
 * device): the rings, threads, fds and drop orders then run, and the
 * points that need two distinct devices skip, saying so. */
#include "t/lib/ring-fixture.h"
#include "opencl/cl-compat.h" /* CL_DEVICE_UUID_KHR (cl_ext.h) */
#include "t/lib/fd-watch.h"
#include "t/lib/tap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VK 8
#define RING_FRAMES 1000

struct side {
    struct vkctx vk;
    struct cl_fixture f;
    clmem_bridge *b;
    bool paired;            /* cl_device has the Vulkan device's UUID (else the default, one device twice) */
    cl_platform_id cl_platform;
    cl_device_id cl_device;
    struct ring_run r;
};

/* The indices of the Vulkan devices that pair with an OpenCL device, at
 * most `max`; *total the number of Vulkan devices; *list what they are. */
static int paired_devices(int *idx, int max, int *total, char *list, size_t len)
{
    struct vkctx probe;
    int n = 0, count = vkctx_count_devices(&probe);

    *total = count < 0 ? 0 : count;
    list[0] = '\0';
    for (int i = 0; i < *total; i++) {
        struct vkctx vk;
        char uuid[37] = "no UUID";
        bool pairs = false;
        size_t used = strlen(list);

        if (vkctx_open(&vk, i)) {
            if (vk.has_device_uuid)
                vkctx_format_uuid(vk.device_uuid, uuid);
            pairs = clmem_bridge_pair(vk.instance, NULL, vk.physical_device, NULL, NULL) == CLMEM_OK;
            snprintf(list + used, len - used, "%s%d %s %s (%s)", used ? "; " : "", i, vk.device_name, uuid,
                     pairs ? "pairs" : "pairs with no OpenCL device");
            vkctx_close(&vk);
        } else {
            snprintf(list + used, len - used, "%s%d cannot be opened", used ? "; " : "", i);
        }
        if (pairs && n < max)
            idx[n++] = i;
    }
    return n;
}

static void open_side(struct side *s, int index)
{
    memset(s, 0, sizeof *s);
    if (!vkctx_open(&s->vk, index))
        tap_bail("Vulkan device %d: %s", index, s->vk.error);
    s->paired =
        clmem_bridge_pair(s->vk.instance, NULL, s->vk.physical_device, &s->cl_platform, &s->cl_device) == CLMEM_OK;
    if (s->paired) {
        cl_fixture_open_on(&s->f, s->cl_platform, s->cl_device);
    } else { /* one device twice, on a machine where none pairs */
        cl_fixture_open(&s->f);
        s->cl_platform = s->f.platform;
        s->cl_device = s->f.device;
    }
    s->b = bridge_open_with(&s->vk, &s->f, 0, fd_watch_get_instance_proc_addr);
}

static void close_side(struct side *s)
{
    clmem_bridge_unref(s->b);
    cl_fixture_close(&s->f);
    vkctx_close(&s->vk);
}

static void check_pairing(struct side *a, struct side *b, bool distinct)
{
    struct side *sides[2] = {a, b};

    for (int i = 0; i < 2; i++) {
        if (!sides[i]->paired) {
            tap_skip("no OpenCL device has this Vulkan device's deviceUUID (one device used twice)",
                     "Vulkan device %d pairs with the OpenCL device of its UUID", sides[i]->vk.device_index);
            continue;
        }
        uint8_t cl_uuid[16] = {0};
        char vk_text[37], cl_text[37];
        bool has = clGetDeviceInfo(sides[i]->cl_device, CL_DEVICE_UUID_KHR, sizeof cl_uuid, cl_uuid, NULL) ==
                   CL_SUCCESS;
        vkctx_format_uuid(sides[i]->vk.device_uuid, vk_text);
        vkctx_format_uuid(cl_uuid, cl_text);
        tap_ok(has && memcmp(cl_uuid, sides[i]->vk.device_uuid, 16) == 0,
               "Vulkan device %d (%s, %s) pairs with OpenCL %s of CL_DEVICE_UUID_KHR %s", sides[i]->vk.device_index,
               sides[i]->vk.device_name, vk_text, sides[i]->f.device_name, cl_text);
    }
    if (distinct)
        tap_ok(a->cl_device != b->cl_device && memcmp(a->vk.device_uuid, b->vk.device_uuid, 16) != 0,
               "the two Vulkan devices pair with two different OpenCL devices (%p, %p)", (void *)a->cl_device,
               (void *)b->cl_device);
    else
        tap_skip("one device used twice (CLMEM_TEST_ONE_DEVICE_TWICE)", "two Vulkan devices pair with two OpenCL "
                                                                         "devices");
}

/* CLMEM_VK_DEVICE=<index> and =<uuid> (as clmem-info prints it) name s. */
static void check_env_choice(const struct side *s)
{
    struct vkctx probe;
    char value[40], uuid[37];
    int by_index, by_uuid;
    const char *old = getenv("CLMEM_VK_DEVICE");
    char *saved = old ? strdup(old) : NULL;

    snprintf(value, sizeof value, "%d", s->vk.device_index);
    setenv("CLMEM_VK_DEVICE", value, 1);
    by_index = vkctx_find_device(&probe);
    vkctx_format_uuid(s->vk.device_uuid, uuid);
    setenv("CLMEM_VK_DEVICE", uuid, 1);
    by_uuid = vkctx_find_device(&probe);
    if (saved)
        setenv("CLMEM_VK_DEVICE", saved, 1);
    else
        unsetenv("CLMEM_VK_DEVICE");
    free(saved);
    tap_ok(by_index == s->vk.device_index && by_uuid == s->vk.device_index,
           "CLMEM_VK_DEVICE=%d and CLMEM_VK_DEVICE=%s choose device %d (got %d and %d)", s->vk.device_index, uuid,
           s->vk.device_index, by_index, by_uuid);
}

/* Vulkan of a with OpenCL of b. */
static void check_mismatch(struct side *a, struct side *b, bool distinct)
{
    clmem_bridge_info info = {.size = sizeof info,
                              .instance = a->vk.instance,
                              .physical_device = a->vk.physical_device,
                              .device = a->vk.device,
                              .context = b->f.context,
                              .cl_device = b->cl_device};
    clmem_bridge *x = NULL;
    clmem_status s;
    char ua[33], ub[33];

    if (!distinct) {
        tap_skip("one device used twice (CLMEM_TEST_ONE_DEVICE_TWICE)", "Vulkan on one device, OpenCL on the other: "
                                                                         "the fd paths answer DEVICE_MISMATCH");
        tap_skip("one device used twice (CLMEM_TEST_ONE_DEVICE_TWICE)", "a bridge finding its OpenCL device in the "
                                                                         "other device's context is refused");
        return;
    }
    uuid_hex(a->vk.device_uuid, ua);
    uuid_hex(b->vk.device_uuid, ub);
    s = clmem_bridge_create(&info, &x);
    if (s != CLMEM_OK) {
        tap_ok(false, "a bridge of Vulkan device %d and OpenCL device %p named in info->cl_device: %s: %s",
               a->vk.device_index, (void *)b->cl_device, clmem_status_name(s), clmem_error_message());
    } else {
        clmem_status fd = clmem_bridge_check_path(x, CLMEM_BRIDGE_PATH_OPAQUE_FD);
        const char *msg = clmem_error_message();
        tap_ok(fd == CLMEM_ERR_DEVICE_MISMATCH && message_has_uuid(msg, ua) && message_has_uuid(msg, ub),
               "Vulkan on device %d, OpenCL on device %d: the opaque-fd path answers %s, naming both UUIDs: %s",
               a->vk.device_index, b->vk.device_index, clmem_status_name(fd), msg);
        clmem_bridge_unref(x);
    }
    info.cl_device = NULL;
    x = NULL;
    s = clmem_bridge_create(&info, &x);
    tap_ok(s == CLMEM_ERR_DEVICE_MISMATCH && !x,
           "a bridge of Vulkan device %d left to find its OpenCL device in device %d's context is refused: %s: %s",
           a->vk.device_index, b->vk.device_index, clmem_status_name(s), clmem_error_message());
    clmem_bridge_unref(x);
}

static void *drive(void *arg)
{
    struct ring_run *r = arg;
    while (ring_produce_batch(r) && ring_consume_batch(r))
        ;
    return NULL;
}

/* Both rings at once, each from its own thread; checked on this thread;
 * then dropped, `first` before the other, each bridge settled. */
static void rings_at_once(struct side *s[2], int first, const char *round)
{
    pthread_t t[2];
    char label[2][96];

    for (int i = 0; i < 2; i++) {
        clmem_bridge_path path = bridge_test_path(s[i]->b);
        clmem_bridge_semaphore_mode mode = clmem_bridge_caps(s[i]->b) & CLMEM_BRIDGE_CAP_SEMAPHORE_OPAQUE_FD
                                               ? CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD
                                               : CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED;
        snprintf(label[i], sizeof label[i], "%s, bridge %d (Vulkan device %d), ring of 3", round, i,
                 s[i]->vk.device_index);
        ring_run_open(&s[i]->r, &s[i]->vk, &s[i]->f, s[i]->b, path, mode, 3, 1, RING_FRAMES, label[i]);
    }
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, drive, &s[i]->r) != 0)
            tap_bail("pthread_create failed");
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++)
        ring_run_check(&s[i]->r);
    for (int k = 0; k < 2; k++) {
        struct side *x = s[k == 0 ? first : 1 - first];
        clmem_status st;
        ring_run_close(&x->r);
        st = bridge_settle(x->b);
        tap_ok(st == CLMEM_OK, "%s: bridge %d's ring and frames dropped %s, its teardowns finished: %s", round,
               k == 0 ? first : 1 - first, k == 0 ? "first" : "second", clmem_status_name(st));
    }
}

int main(void)
{
    int idx[MAX_VK], total = 0, n;
    char list[2048];
    bool twice = getenv("CLMEM_TEST_ONE_DEVICE_TWICE") && strcmp(getenv("CLMEM_TEST_ONE_DEVICE_TWICE"), "1") == 0;
    bool distinct;
    struct side a, b, *s[2] = {&a, &b};
    int others[2];

    n = paired_devices(idx, MAX_VK, &total, list, sizeof list);
    if (n < 2 && !(twice && total >= 1))
        tap_skip_all("needs two Vulkan devices that each pair with an OpenCL device by deviceUUID; this machine "
                     "has %d Vulkan device%s, %d of them paired%s%s",
                     total, total == 1 ? "" : "s", n, total ? ": " : "", list);
    distinct = n >= 2;
    tap_diag("Vulkan devices: %s", list);
    tap_diag("%s", distinct ? "two devices" : "one device opened twice (CLMEM_TEST_ONE_DEVICE_TWICE=1)");
    open_side(&a, n ? idx[0] : 0);
    open_side(&b, distinct ? idx[1] : n ? idx[0] : 0);

    check_pairing(&a, &b, distinct);
    check_env_choice(&a);
    if (distinct)
        check_env_choice(&b);
    else
        tap_skip("one device used twice (CLMEM_TEST_ONE_DEVICE_TWICE)", "CLMEM_VK_DEVICE names the second device");
    check_mismatch(&a, &b, distinct);
    check_mismatch(&b, &a, distinct);

    rings_at_once(s, 0, "round 1");
    others[0] = fd_watch_others("round 1");
    rings_at_once(s, 1, "round 2");
    others[1] = fd_watch_others("round 2");
    fd_watch_check_passes(others, 2, "two bridges' rings on two threads");

    close_side(&b); /* the bridges themselves, the second one first */
    close_side(&a);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    return tap_done();
}
