/* SPDX-License-Identifier: MIT */
/* Images: plane handles behave like buffer handles (t/lib/image-fixture.h
 * says how the image tests work): each plane its own import, the cache,
 * handle_for_queue, handle_path, the acquire and release rules, finish
 * while they live, one plane's handles keeping the import alive after the
 * other's went, and the teardown's order. On described NV12, so that it
 * runs on every path and machine. */
#include "t/lib/image-fixture.h"
#include "t/lib/tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ behaviour */

static void CL_CALLBACK count_destroyed(cl_mem m, void *user)
{
    (void)m;
    atomic_fetch_add((atomic_int *)user, 1);
}

/* Plane handles behave like buffer handles: described NV12 (runs on every
 * path and machine). */
static void check_behaviour(struct image_env *e, clmem_bridge_path path)
{
    const struct image_fmt *nv12 = image_fmt_of(VK_FORMAT_G8_B8R8_2PLANE_420_UNORM);
    const char *pn = clmem_bridge_path_name(path);
    struct subject s;
    clmem_handle *y = NULL, *uv = NULL, *y2 = NULL, *yq = NULL;
    clmem_bridge_path got_path = CLMEM_BRIDGE_PATH_BEST;
    cl_command_queue other;
    cl_int err = CL_SUCCESS;
    atomic_int destroyed;
    clmem_status st;
    char why[512] = "";

    atomic_init(&destroyed, 0);
    subject_described(e, nv12, 34, 8, path, 3, false, &s);
    subject_upload(&s, 1, why, sizeof why);
    st = clmem_bridge_import_vk_image(e->b, &s.desc, 0, path, s.ka, e->f->queue, CL_MEM_READ_WRITE, 0, &y);
    if (st == CLMEM_OK)
        st = clmem_bridge_import_vk_image(e->b, &s.desc, 1, path, s.ka, e->f->queue, CL_MEM_READ_WRITE, 0, &uv);
    if (!tap_ok(st == CLMEM_OK, "%s behaviour: NV12 planes import (%s)", pn, st ? clmem_error_message() : "ok")) {
        clmem_handle_unref(y);
        subject_done(&s, why, sizeof why);
        return;
    }
    tap_ok(clmem_handle_mem(y) != clmem_handle_mem(uv) && clmem_handle_keepalive(y) != clmem_handle_keepalive(uv) &&
               clmem_handle_row_pitch(y) == s.desc.planes[0].row_pitch &&
               clmem_handle_row_pitch(uv) == s.desc.planes[1].row_pitch,
           "%s behaviour: each plane is its own import (Y pitch %u, CbCr pitch %u)", pn, clmem_handle_row_pitch(y),
           clmem_handle_row_pitch(uv));
    st = clmem_bridge_import_vk_image(e->b, &s.desc, 0, path, s.ka, e->f->queue, CL_MEM_READ_WRITE, 0, &y2);
    tap_ok(st == CLMEM_OK && clmem_handle_mem(y2) == clmem_handle_mem(y) &&
               clmem_handle_keepalive(y2) == clmem_handle_keepalive(y) && clmem_handle_row_pitch(y2) ==
               clmem_handle_row_pitch(y),
           "%s behaviour: importing plane 0 again is a cache hit: same cl_mem, anchor and row pitch (%s)", pn,
           st ? clmem_error_message() : "ok");
    {
        /* The same plane imported with another pitch is another import. */
        clmem_bridge_vk_image other_pitch = s.desc;
        clmem_handle *hp = NULL;
        other_pitch.planes[0].row_pitch -= 1; /* still holds the row of 34 texels of 1 byte */
        st = clmem_bridge_import_vk_image(e->b, &other_pitch, 0, path, s.ka, e->f->queue, CL_MEM_READ_WRITE, 0,
                                          &hp);
        tap_ok(st == CLMEM_OK && clmem_handle_mem(hp) != clmem_handle_mem(y) &&
                   clmem_handle_row_pitch(hp) == other_pitch.planes[0].row_pitch,
               "%s behaviour: the same bytes with another row pitch are another import, not a cache hit (%s)", pn,
               st ? clmem_error_message() : "ok");
        clmem_handle_unref(hp);
    }
    other = clCreateCommandQueueWithProperties(e->f->context, e->f->device, NULL, &err);
    st = err == CL_SUCCESS ? clmem_bridge_handle_for_queue(uv, other, &yq) : CLMEM_ERR_OPENCL;
    tap_ok(st == CLMEM_OK && clmem_handle_mem(yq) == clmem_handle_mem(uv) && clmem_handle_queue(yq) == other &&
               clmem_handle_row_pitch(yq) == clmem_handle_row_pitch(uv),
           "%s behaviour: handle_for_queue keeps the plane's cl_mem and row pitch on the other queue (%s)", pn,
           st ? clmem_error_message() : "ok");
    st = clmem_bridge_handle_path(uv, &got_path);
    tap_ok(st == CLMEM_OK && (path == CLMEM_BRIDGE_PATH_BEST || got_path == path),
           "%s behaviour: handle_path says %s", pn, clmem_bridge_path_name(got_path));
    st = clmem_bridge_acquire(e->b, y, 0, NULL, NULL);
    tap_ok(st == CLMEM_OK && clmem_bridge_acquire(e->b, y2, 0, NULL, NULL) == CLMEM_ERR_INVALID_VALUE,
           "%s behaviour: acquire works, and acquiring the cached handle of the acquired plane again is "
           "CLMEM_ERR_INVALID_VALUE", pn);
    tap_is_int(clmem_bridge_release(e->b, uv, 0, NULL, NULL), CLMEM_ERR_INVALID_VALUE,
               "%s behaviour: releasing the CbCr plane, which is not acquired, is CLMEM_ERR_INVALID_VALUE", pn);
    tap_is_int(clmem_bridge_finish(e->b, 0), CLMEM_ERR_IN_USE,
               "%s behaviour: finish while plane handles live -> CLMEM_ERR_IN_USE", pn);
    clSetMemObjectDestructorCallback(clmem_handle_mem(y), count_destroyed, &destroyed);
    clSetMemObjectDestructorCallback(clmem_handle_mem(uv), count_destroyed, &destroyed);
    /* The Y plane is left acquired on purpose: the teardown hands it back. */
    clmem_keepalive_unref(s.ka);
    s.ka = NULL;
    clmem_handle_unref(y);
    clmem_handle_unref(y2);
    tap_ok(bridge_settle(e->b) == CLMEM_ERR_IN_USE && atomic_load(&s.released) == 0,
           "%s behaviour: the CbCr handles keep their import, and the memory, alive after the Y plane's went", pn);
    st = clmem_bridge_acquire(e->b, uv, 0, NULL, NULL);
    err = st == CLMEM_OK ? run_pitch_kernel(e, nv12, 1, clmem_handle_mem(uv), clmem_handle_row_pitch(uv), 17, 4) : -1;
    if (st == CLMEM_OK)
        st = clmem_bridge_release(e->b, uv, 0, NULL, NULL);
    clFinish(e->f->queue);
    tap_ok(st == CLMEM_OK && err == CL_SUCCESS, "%s behaviour: the CbCr plane still works (%s; kernel %d)", pn,
           st ? clmem_error_message() : "ok", err);
    clmem_handle_unref(uv);
    clmem_handle_unref(yq);
    st = bridge_settle(e->b);
    tap_ok(st == CLMEM_OK && atomic_load(&s.released) == 1 && atomic_load(&destroyed) == 2,
           "%s behaviour: after the last plane handle, the teardown destroyed both cl_mems and then freed the Vulkan "
           "memory, once (%s; destroyed %d, freed %d)",
           pn, st ? clmem_error_message() : "ok", atomic_load(&destroyed), atomic_load(&s.released));
    if (err == CL_SUCCESS || other)
        clReleaseCommandQueue(other);
}

int main(void)
{
    struct image_env e;

    image_env_open(&e, "bridge-image-handles");
    image_for_each_path(&e, "plane handles behave like buffer handles", check_behaviour);
    image_env_close(&e);
    return tap_done();
}
