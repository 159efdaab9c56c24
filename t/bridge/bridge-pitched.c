/* SPDX-License-Identifier: MIT */
/* clmem_bridge_import_vk_pitched: a buffer import whose handles carry a row
 * pitch. Bad pitches get CLMEM_ERR_INVALID_VALUE (a NULL argument
 * CLMEM_ERR_NULL_POINTER, a zero size CLMEM_ERR_ZERO_SIZE), each with its
 * own sentence, and leave nothing behind: no fd, no cl_mem, no reference on
 * the Vulkan anchor. A round trip over a padded matrix (a kernel that
 * indexes rows by clmem_handle_row_pitch() writes only the first `cols`
 * words of each row; Vulkan then sees the padding untouched) runs on the
 * path the bridge offers: host-mapped on the CPU machines, and the fd path
 * when built as t/bridge/fakefd-bridge-pitched (t/lib/fake-nvidia-import.c) or on a
 * GPU. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define JUNK ((clmem_handle *)(uintptr_t)0x1)

static int anchor_releases;
static void count_release(void *user)
{
    (void)user;
    anchor_releases++;
}

/* One rejected import: the status, *out reset to NULL, the sentence. */
static void expect(clmem_status got, clmem_status want, clmem_handle *out, const char *what, const char *needle)
{
    bool msg_ok = !needle || strstr(clmem_error_message(), needle);
    tap_ok(got == want && out == NULL && msg_ok, "%s -> %s%s%s", what, clmem_status_name(want),
           got == want && out == NULL && msg_ok ? "" : " | got: ",
           got == want && out == NULL && msg_ok ? "" : clmem_error_message());
}

static const char pitched_source[] =
    "__kernel void pitched(__global uint *p, uint pitch_words, uint cols) {\n"
    "    size_t x = get_global_id(0), y = get_global_id(1);\n"
    "    if (x < cols) p[y * pitch_words + x] = p[y * pitch_words + x] * 3u + 1u;\n"
    "}\n";

/* Vulkan's view of the whole allocation after the kernel: inside the range,
 * the first `cols` words of each row are value*3+1; everything else, the
 * rows' padding and the bytes outside the range, is still value. */
static bool vulkan_sees_rows(clmem_bridge *b, struct vkctx *vk, struct vk_owned *o, VkDeviceSize alloc_size,
                             VkDeviceSize offset, uint32_t pitch, uint32_t cols, uint32_t rows, uint32_t value,
                             char *why, size_t why_len)
{
    struct vk_staging staging;
    bool good = vk_read_back(&staging, b, vk, o->buffer, alloc_size, why, why_len);
    const uint32_t *words = staging.data;

    for (VkDeviceSize i = 0; good && i < alloc_size / 4; i++) {
        VkDeviceSize byte = i * 4;
        bool written = false;
        if (byte >= offset && byte < offset + (VkDeviceSize)pitch * rows) {
            VkDeviceSize in = byte - offset;
            written = in % pitch < (VkDeviceSize)cols * 4;
        }
        uint32_t want = written ? value * 3u + 1u : value;
        if (words[i] != want) {
            snprintf(why, why_len, "word %llu is 0x%08x, want 0x%08x (%s)", (unsigned long long)i, words[i], want,
                     written ? "a matrix element" : "padding or outside the range");
            good = false;
        }
    }
    vk_staging_close(&staging);
    return good;
}

/* A rows x pitch matrix at `offset`, whose rows hold `cols` words: import
 * it pitched, check the handles' pitch (this one, a cache hit's, another
 * queue's), run the kernel by the handle's pitch, and have Vulkan check
 * every word. Then the handles go and the anchor must free the memory. */
static void pitched_round_trip(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, cl_kernel k,
                               clmem_bridge_path path, VkDeviceSize offset, uint32_t pitch, uint32_t cols,
                               uint32_t rows)
{
    const VkDeviceSize size = (VkDeviceSize)pitch * rows, alloc_size = offset + size + 4096;
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, b, vk, alloc_size, path_memory_props(path), path_export_types(vk, path));
    const uint32_t value = 0x00010203u + cols;
    clmem_handle *h = NULL, *hit = NULL, *other_h = NULL;
    cl_command_queue other = NULL;
    cl_event done = NULL;
    clmem_bridge_path got_path = CLMEM_BRIDGE_PATH_BEST;
    char why[512] = "";
    bool good = false;
    cl_int err = CL_SUCCESS;
    VkResult r = vkctx_fill(vk, o.buffer, 0, VK_WHOLE_SIZE, value);
    clmem_status s = r != VK_SUCCESS ? CLMEM_ERR_VULKAN
                                     : clmem_bridge_import_vk_pitched(b, &o.memory, offset, size, pitch, 4, path, ka,
                                                                      f->queue, CL_MEM_READ_WRITE, &h);

    clmem_keepalive_unref(ka); /* the import holds its own reference */
    if (!tap_ok(s == CLMEM_OK, "%s: pitched import of %u rows of %u bytes (%u words used) at offset %llu (%s)",
                clmem_bridge_path_name(path), rows, pitch, cols, (unsigned long long)offset,
                r != VK_SUCCESS ? "vkCmdFillBuffer failed" : s ? clmem_error_message() : "ok")) {
        tap_ok(atomic_load(&o.released) == 1, "%s: the failed import left the anchor alone",
               clmem_bridge_path_name(path));
        return;
    }
    clmem_bridge_handle_path(h, &got_path);
    tap_ok(clmem_handle_row_pitch(h) == pitch && got_path == path,
           "%s: the handle carries row pitch %u (got %u) and came through %s", clmem_bridge_path_name(path), pitch,
           clmem_handle_row_pitch(h), clmem_bridge_path_name(got_path));

    s = clmem_bridge_import_vk_pitched(b, &o.memory, offset, size, pitch, 4, path, NULL, f->queue,
                                       CL_MEM_READ_WRITE, &hit);
    tap_ok(s == CLMEM_OK && clmem_handle_mem(hit) == clmem_handle_mem(h) && clmem_handle_row_pitch(hit) == pitch,
           "%s: the same pitched range again is a cache hit with the same cl_mem and pitch (%s)",
           clmem_bridge_path_name(path), s ? clmem_error_message() : "ok");
    other = clCreateCommandQueueWithProperties(f->context, f->device, NULL, &err);
    s = err == CL_SUCCESS ? clmem_bridge_handle_for_queue(h, other, &other_h) : CLMEM_ERR_OPENCL;
    tap_ok(s == CLMEM_OK && clmem_handle_row_pitch(other_h) == pitch && clmem_handle_queue(other_h) == other,
           "%s: clmem_bridge_handle_for_queue's handle carries the pitch too (%s)", clmem_bridge_path_name(path),
           s ? clmem_error_message() : "ok");
    clmem_handle_unref(hit);
    clmem_handle_unref(other_h);

    {
        cl_mem mem = clmem_handle_mem(h);
        cl_uint pitch_words = clmem_handle_row_pitch(h) / 4, ucols = cols;
        size_t global[2] = {pitch_words, rows};
        if ((s = clmem_bridge_acquire(b, h, 0, NULL, NULL)) != CLMEM_OK)
            snprintf(why, sizeof why, "acquire failed: %s", clmem_error_message());
        else if ((err = clSetKernelArg(k, 0, sizeof mem, &mem)) != CL_SUCCESS ||
                 (err = clSetKernelArg(k, 1, sizeof pitch_words, &pitch_words)) != CL_SUCCESS ||
                 (err = clSetKernelArg(k, 2, sizeof ucols, &ucols)) != CL_SUCCESS ||
                 (err = clEnqueueNDRangeKernel(f->queue, k, 2, NULL, global, NULL, 0, NULL, NULL)) != CL_SUCCESS)
            snprintf(why, sizeof why, "the kernel failed: %d", err);
        else if ((s = clmem_bridge_release(b, h, 0, NULL, &done)) != CLMEM_OK)
            snprintf(why, sizeof why, "release failed: %s", clmem_error_message());
        else if ((err = clWaitForEvents(1, &done)) != CL_SUCCESS)
            snprintf(why, sizeof why, "waiting for the release failed: %d", err);
        else
            good = vulkan_sees_rows(b, vk, &o, alloc_size, offset, pitch, cols, rows, value, why, sizeof why);
    }
    if (done)
        clReleaseEvent(done);
    tap_ok(good, "%s: a kernel indexing rows by the handle's pitch wrote the %u x %u matrix, and Vulkan sees its "
                 "padding untouched%s%s",
           clmem_bridge_path_name(path), rows, cols, good ? "" : ": ", why);
    tap_is_int(atomic_load(&o.released), 0, "%s: the Vulkan memory lives while a handle does",
               clmem_bridge_path_name(path));
    clmem_handle_unref(h);
    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK && atomic_load(&o.released) == 1,
           "%s: after the last handle and bridge_settle the anchor freed the Vulkan memory, once (%s; %d)",
           clmem_bridge_path_name(path), s ? clmem_error_message() : "ok", atomic_load(&o.released));
    if (other)
        clReleaseCommandQueue(other);
}

/* Every bad input on one memory: its status and sentence, *out NULL. Then
 * nothing is left: no fd, the anchor held by nobody but the caller. */
static void bad_input(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path)
{
    struct vk_owned o;
    clmem_keepalive *owner = vk_owned_new(&o, b, vk, 65536, path_memory_props(path), path_export_types(vk, path));
    clmem_keepalive *counted = clmem_keepalive_new(count_release, NULL);
    clmem_bridge_vk_memory m = o.memory, no_memory = o.memory;
    clmem_handle *h = JUNK;
    struct fd_snapshot before;
    int fds_before;
    char extra[256];
    clmem_status s;

    no_memory.memory = VK_NULL_HANDLE;
    anchor_releases = 0;
    fd_snapshot_take(&before);
    fds_before = fd_count();

    s = clmem_bridge_import_vk_pitched(NULL, &m, 0, 65536, 256, 4, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "pitched import with a NULL bridge", "bridge");
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, NULL, 0, 65536, 256, 4, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "pitched import with NULL memory", "memory");
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &no_memory, 0, 65536, 256, 4, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "pitched import with memory->memory NULL", "memory->memory");
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 65536, 256, 4, path, counted, NULL, 0, &h);
    expect(s, CLMEM_ERR_NULL_POINTER, h, "pitched import with a NULL queue", "queue");
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 65536, 256, 4, path, counted, f->queue, 0, NULL);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && strstr(clmem_error_message(), "out"),
           "pitched import with a NULL out -> CLMEM_ERR_NULL_POINTER (%s)", clmem_error_message());
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 0, 256, 4, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_ZERO_SIZE, h, "pitched import of 0 bytes", "size is zero");
    /* A zero size wins over a bad pitch: the size is checked first. */
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 0, 0, 4, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_ZERO_SIZE, h, "pitched import of 0 bytes with row_pitch 0", "size is zero");
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 0, 258, 4, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_ZERO_SIZE, h, "pitched import of 0 bytes with row_pitch 258 (> size, not a multiple of 4)",
           "size is zero");
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 65536, 0, 4, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "pitched import with row_pitch 0", "use clmem_bridge_import_vk()");
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 4096, 4100, 4, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "pitched import with row_pitch 4100 > the 4096-byte range",
           "larger than the range's 4096 bytes");
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 65536, 258, 4, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "pitched import with row_pitch 258, element 4",
           "not a multiple of the 4-byte element");
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 65536, 1000, 16, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "pitched import with row_pitch 1000, element 16 (a float4)",
           "not a multiple of the 16-byte element");
    /* The import's own checks still come after the pitch's. */
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 4096, 65536, 256, 4, path, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "pitched import of a range beyond the allocation", "reaches beyond");
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 65536, 256, 4, path, counted, f->queue, CL_MEM_USE_HOST_PTR, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "pitched import with CL_MEM_USE_HOST_PTR", "host-pointer flag");
    h = JUNK;
    s = clmem_bridge_import_vk_pitched(b, &m, 0, 65536, 256, 4, (clmem_bridge_path)42, counted, f->queue, 0, &h);
    expect(s, CLMEM_ERR_INVALID_VALUE, h, "pitched import through path 42", "clmem_bridge_import_vk_pitched: unknown path 42");

    fd_describe_new(&before, extra, sizeof extra);
    tap_ok(fd_count() == fds_before, "pitched bad input: no fd left open (%d before, %d after; new: %s)", fds_before,
           fd_count(), extra);
    clmem_keepalive_unref(counted);
    tap_is_int(anchor_releases, 1, "pitched bad input: no call kept a reference on the anchor");
    s = clmem_bridge_finish(b, 0);
    tap_ok(s == CLMEM_OK, "pitched bad input: the bridge has no import left (finish(0): %s)",
           s ? clmem_error_message() : "ok");
    clmem_keepalive_unref(owner);
}

/* element_size is checked, not kept: the same range and pitch with element
 * sizes 0 and 4 is one import (a cache hit: the same cl_mem), a pitch that
 * is no multiple of the element is refused even while that import lives,
 * and another pitch is another import. */
static void element_size_and_cache(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path)
{
    struct vk_owned o;
    clmem_keepalive *owner = vk_owned_new(&o, b, vk, 65536, path_memory_props(path), path_export_types(vk, path));
    clmem_handle *h0 = NULL, *h4 = NULL, *h3 = JUNK, *h512 = NULL;
    clmem_status s0, s4, s3, s512;

    s0 = clmem_bridge_import_vk_pitched(b, &o.memory, 0, 65536, 256, 0, path, owner, f->queue, 0, &h0);
    s4 = clmem_bridge_import_vk_pitched(b, &o.memory, 0, 65536, 256, 4, path, owner, f->queue, 0, &h4);
    tap_ok(s0 == CLMEM_OK && s4 == CLMEM_OK && clmem_handle_mem(h0) == clmem_handle_mem(h4) &&
               clmem_handle_row_pitch(h4) == 256,
           "element size: pitch 256 with element 0, then element 4 -> one import, the second a cache hit on the "
           "same cl_mem (%s)",
           s0 ? clmem_error_message() : s4 ? clmem_error_message() : "ok");
    s3 = clmem_bridge_import_vk_pitched(b, &o.memory, 0, 65536, 256, 3, path, owner, f->queue, 0, &h3);
    tap_ok(s3 == CLMEM_ERR_INVALID_VALUE && !h3 && strstr(clmem_error_message(), "3-byte element"),
           "element size: pitch 256 with element 3 -> CLMEM_ERR_INVALID_VALUE although that range and pitch are "
           "imported (%s)",
           clmem_error_message());
    s512 = clmem_bridge_import_vk_pitched(b, &o.memory, 0, 65536, 512, 4, path, owner, f->queue, 0, &h512);
    tap_ok(s512 == CLMEM_OK && clmem_handle_mem(h512) != clmem_handle_mem(h0) && clmem_handle_row_pitch(h512) == 512,
           "element size: the same range with pitch 512 -> another import, another cl_mem (%s)",
           s512 ? clmem_error_message() : "ok");
    clmem_handle_unref(h0);
    clmem_handle_unref(h4);
    clmem_handle_unref(h512);
    clmem_keepalive_unref(owner);
    s0 = bridge_settle(b);
    tap_ok(s0 == CLMEM_OK, "element size: every import let go (%s)", s0 ? clmem_error_message() : "ok");
}

int main(void)
{
    struct bridge_test t;
    cl_kernel k;
    cl_uint align_bits = 0;

    bridge_test_open(&t, "bridge-pitched", 300);
    clGetDeviceInfo(t.f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    k = cl_fixture_kernel(&t.f, pitched_source, "pitched");

    bad_input(t.b, &t.vk, &t.f, t.path);
    element_size_and_cache(t.b, &t.vk, &t.f, t.path);
    /* A 100 x 60 float matrix whose rows are padded to 512 bytes, at the
     * allocation's start, and then at a sub-buffer origin. */
    pitched_round_trip(t.b, &t.vk, &t.f, k, t.path, 0, 512, 60, 100);
    pitched_round_trip(t.b, &t.vk, &t.f, k, t.path, align_bits / 8 > 4096 ? align_bits / 8 : 4096, 512, 60, 100);
    /* A pitch equal to the packed width is a pitch too. */
    pitched_round_trip(t.b, &t.vk, &t.f, k, t.path, 0, 240, 60, 33);

    clReleaseKernel(k);
    bridge_test_close(&t);
    return tap_done();
}
