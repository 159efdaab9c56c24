/* SPDX-License-Identifier: MIT */
/* Images: optimal tiling (t/lib/image-fixture.h says how the image tests
 * work). Where it is offered (the opaque-fd path, after a live check on
 * the bridge) and where not, each refusal with its status and reason; the
 * live checks themselves, each an answer that stays the same; and an
 * import of a format whose live check failed. The round trips of the
 * formats that passed are t/bridge/bridge-image-trips's. */
#include "t/lib/image-fixture.h"
#include "t/lib/tap.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ optimal tiling */

static const char *check_results[IMAGE_FMT_COUNT]; /* "passed", or the failure, per format (NULL: not run) */
static char check_failures[IMAGE_FMT_COUNT][640];

/* Where optimal tiling is offered, and the live checks themselves: before
 * any round trip, so that "no live check has run" can be seen. */
static void check_optimal_offer(struct image_env *e)
{
    const struct image_fmt *r8 = image_fmt_of(VK_FORMAT_R8_UNORM);
    const struct image_fmt *nv12 = image_fmt_of(VK_FORMAT_G8_B8R8_2PLANE_420_UNORM);
    clmem_status st;

    st = clmem_bridge_image_live_check(e->b, r8->vk, CLMEM_BRIDGE_PATH_HOST_MAPPED, e->vk->queue,
                                       e->vk->queue_family, e->f->queue);
    expect_refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "fd paths only", NULL, "the live check on the host-mapped path");
    st = clmem_bridge_image_live_check(e->b, nv12->vk, CLMEM_BRIDGE_PATH_BEST, e->vk->queue, e->vk->queue_family,
                                       e->f->queue);
    expect_refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "offers no optimal-tiling import", NULL, "the live check of NV12");

    if (clmem_bridge_check_path(e->b, CLMEM_BRIDGE_PATH_OPAQUE_FD) != CLMEM_OK) {
        /* Optimal tiling is not offered here, and says why precisely: the
         * opaque-fd path's own answer. */
        static const char named[] = "clmem_bridge_check_path: ";
        const char *answer = clmem_error_message();
        char why[700];
        /* The answer as the live check quotes it: without check_path's
         * name, its first letter a capital again (the name lower-cased it). */
        if (strncmp(answer, named, sizeof named - 1) == 0)
            answer += sizeof named - 1;
        snprintf(why, sizeof why, "%s", answer);
        why[0] = (char)toupper((unsigned char)why[0]);
        st = clmem_bridge_image_live_check(e->b, r8->vk, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk->queue,
                                           e->vk->queue_family, e->f->queue);
        expect_refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "has no opaque-fd path", why,
                       "the live check where the bridge has no opaque-fd path (with the path's answer)");
        st = clmem_bridge_check_image(e->b, r8->vk, VK_IMAGE_TILING_OPTIMAL, CLMEM_BRIDGE_PATH_OPAQUE_FD,
                                      CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE);
        expect_refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "has no opaque-fd path", NULL,
                       "check_image of optimal tiling there");
        {
            struct subject opt;
            clmem_handle *out = NULL;
            if (subject_image(e, r8, 16, 16, VK_IMAGE_TILING_OPTIMAL, CLMEM_BRIDGE_PATH_OPAQUE_FD, &opt) ==
                CLMEM_OK) {
                st = clmem_bridge_import_vk_image(e->b, &opt.desc, 0, CLMEM_BRIDGE_PATH_BEST, opt.ka, e->f->queue,
                                                  CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
                expect_refused(st, CLMEM_ERR_UNSUPPORTED, out, "none fits", NULL,
                               "importing an exportable optimal-tiling image with BEST there");
                clmem_handle_unref(out);
                clmem_keepalive_unref(opt.ka);
            } else {
                tap_skip(clmem_error_message(), "bad input: an optimal-tiling image with BEST there");
            }
        }
        return;
    }

    /* Before any live check: not offered, and saying so. */
    st = clmem_bridge_check_image(e->b, r8->vk, VK_IMAGE_TILING_OPTIMAL, CLMEM_BRIDGE_PATH_OPAQUE_FD,
                                  CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE);
    expect_refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "clmem_bridge_image_live_check", NULL,
                   "check_image of optimal tiling before the live check");
    {
        struct subject opt;
        clmem_handle *out = NULL;
        if (subject_image(e, r8, 16, 16, VK_IMAGE_TILING_OPTIMAL, CLMEM_BRIDGE_PATH_OPAQUE_FD, &opt) == CLMEM_OK) {
            st = clmem_bridge_import_vk_image(e->b, &opt.desc, 0, CLMEM_BRIDGE_PATH_OPAQUE_FD, opt.ka, e->f->queue,
                                              CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
            expect_refused(st, CLMEM_ERR_UNSUPPORTED, out, "none has run", NULL,
                           "importing an optimal-tiling image before the live check");
            clmem_handle_unref(out);
            clmem_keepalive_unref(opt.ka);
        } else {
            tap_skip(clmem_error_message(), "bad input: an optimal-tiling image before the live check");
        }
    }
    /* The checks: each an answer, kept. */
    for (unsigned i = 0; i < IMAGE_FMT_COUNT; i++) {
        const struct image_fmt *f = &image_fmts[i];
        clmem_status again;
        if (!f->optimal)
            continue;
        st = clmem_bridge_image_live_check(e->b, f->vk, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk->queue,
                                           e->vk->queue_family, e->f->queue);
        if (st == CLMEM_ERR_UNSUPPORTED)
            snprintf(check_failures[i], sizeof check_failures[i], "%s", clmem_error_message());
        again = clmem_bridge_image_live_check(e->b, f->vk, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk->queue,
                                              e->vk->queue_family, e->f->queue);
        /* UNSUPPORTED is either the check's kept failure ("The live check of
         * ... failed") or "not offered" before any check (OpenCL lacks the
         * format); only the former is a failed live check. */
        check_results[i] = st == CLMEM_OK ? "passed"
                           : st == CLMEM_ERR_UNSUPPORTED && strstr(check_failures[i], "The live check")
                               ? check_failures[i]
                               : NULL;
        tap_ok((st == CLMEM_OK || st == CLMEM_ERR_UNSUPPORTED) && again == st,
               "opaque-fd: the live check of optimal-tiling %s gives an answer, the same the second time (%s%s%s; "
               "again: %s)",
               f->name, clmem_status_name(st), st ? ": " : "", st ? check_failures[i] : "", clmem_status_name(again));
        tap_diag("opaque-fd optimal %s: %s", f->name, st == CLMEM_OK ? "offered (live check passed)"
                                                                   : st == CLMEM_ERR_UNSUPPORTED ? check_failures[i]
                                                                                                 : "not run");
    }
}

/* Where a live check failed, the import says so. */
static void check_failed_optimal(struct image_env *e)
{
    bool any = false;

    if (clmem_bridge_check_path(e->b, CLMEM_BRIDGE_PATH_OPAQUE_FD) != CLMEM_OK)
        return;
    for (unsigned i = 0; i < IMAGE_FMT_COUNT && !any; i++) {
        const struct image_fmt *f = &image_fmts[i];
        struct subject opt;
        clmem_handle *out = NULL;
        clmem_status st;

        if (!check_results[i] || strcmp(check_results[i], "passed") == 0)
            continue;
        any = true;
        if (subject_image(e, f, 16, 16, VK_IMAGE_TILING_OPTIMAL, CLMEM_BRIDGE_PATH_OPAQUE_FD, &opt) != CLMEM_OK) {
            tap_skip(clmem_error_message(), "bad input: optimal-tiling %s where its live check failed", f->name);
            continue;
        }
        st = clmem_bridge_import_vk_image(e->b, &opt.desc, 0, CLMEM_BRIDGE_PATH_OPAQUE_FD, opt.ka, e->f->queue,
                                          CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
        expect_refused(st, CLMEM_ERR_UNSUPPORTED, out, "live check", "failed",
                       "importing an optimal-tiling image whose format failed the live check");
        clmem_handle_unref(out);
        clmem_keepalive_unref(opt.ka);
    }
    if (!any) {
        char why[256];
        snprintf(why, sizeof why, "every format passed the optimal-tiling live check on %s", e->device);
        tap_skip(why, "bad input: optimal tiling where the live check failed");
    }
}

int main(void)
{
    struct image_env e;

    image_env_open(&e, "bridge-image-optimal");
    check_optimal_offer(&e);
    check_failed_optimal(&e);
    image_env_close(&e);
    return tap_done();
}
