/* SPDX-License-Identifier: MIT */
/* clmem-info: the checks of one (Vulkan device, OpenCL device) pair: its
 * bridge, every path live (live-buffer.c), every image format on them
 * (live-image.c) and the semaphore modes. */
#include "config.h"

#include "info.h"

#include <stdio.h>
#include <string.h>

static struct row *add_row(struct report *r, int bridge, clmem_bridge_path path)
{
    struct row *row;
    r->rows = grow_array(r->rows, r->n_rows, &r->rows_allocated, sizeof *r->rows);
    row = &r->rows[r->n_rows++];
    memset(row, 0, sizeof *row);
    row->bridge = bridge;
    row->vk = r->bridges[bridge].vk;
    row->cl = r->bridges[bridge].cl;
    row->path = clmem_bridge_path_name(path);
    row->zero_copy = -1;
    row->import_us = row->handoff_us = -1;
    return row;
}

static int add_bridge(struct report *r, int vk, int cl)
{
    struct bridge_rec *br;
    r->bridges = grow_array(r->bridges, r->n_bridges, &r->bridges_allocated, sizeof *r->bridges);
    br = &r->bridges[r->n_bridges];
    memset(br, 0, sizeof *br);
    br->vk = vk;
    br->cl = cl;
    return r->n_bridges++;
}

/* What the bridge worked out at creation about the semaphore modes that
 * need an OpenCL extension (host ordering always works). Not run live. */
static void check_semaphores(struct report *r, struct bridge_rec *br, const clmem_bridge *b)
{
    static const clmem_bridge_semaphore_mode modes[] = {CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD,
                                                        CLMEM_BRIDGE_SEMAPHORE_SYNC_FD};
    static const char *const names[] = {"opaque-fd", "sync-fd"};

    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        struct sem_rec *sr = &br->sem[i];
        clmem_status s = clmem_bridge_check_semaphore(b, modes[i]);
        sr->mode = names[i];
        sr->status = check_status(s);
        if (s != CLMEM_OK)
            snprintf(sr->reason, sizeof sr->reason, "%s", clmem_error_message());
        r->failures += sr->status == ROW_FAILED;
    }
    br->n_sem = (int)(sizeof modes / sizeof modes[0]);
}

/* One bridge per pair, made on a context of the OpenCL device alone; every
 * path it supports run live, then the images on those paths, then the
 * semaphore modes; and clmem_bridge_finish before the Vulkan device goes. */
void check_pair(struct report *r, struct vkctx *ctx, int vk, int cl)
{
    static const clmem_bridge_path paths[] = {CLMEM_BRIDGE_PATH_OPAQUE_FD, CLMEM_BRIDGE_PATH_DMA_BUF,
                                              CLMEM_BRIDGE_PATH_HOST_MAPPED};
    const size_t npaths = sizeof paths / sizeof paths[0];
    int bi = add_bridge(r, vk, cl);
    struct cl_env env;
    clmem_bridge *bridge = NULL;
    clmem_status s = CLMEM_OK;
    enum row_status setup_status = ROW_OK;

    /* One bridge per (Vulkan device, OpenCL device): the pair's answers
     * (caps, check_path, check_semaphore) are worked out once, at its
     * creation, on a context of that OpenCL device alone. */
    if (!cl_env_open(&env, r->cl[cl].id)) {
        snprintf(r->bridges[bi].error, sizeof r->bridges[bi].error, "OpenCL set-up: %s", env.error);
        setup_status = ROW_FAILED;
    } else {
        clmem_bridge_info info = {.size = sizeof info,
                                  .instance = ctx->instance,
                                  .physical_device = ctx->physical_device,
                                  .device = ctx->device,
                                  .get_instance_proc_addr = ctx->get_instance_proc_addr,
                                  .context = env.context,
                                  .cl_device = env.device,
                                  .flags = 0};
        s = clmem_bridge_create(&info, &bridge);
        if (s != CLMEM_OK) {
            snprintf(r->bridges[bi].error, sizeof r->bridges[bi].error, "clmem_bridge_create: %s",
                     clmem_error_message());
            setup_status = check_status(s);
        }
    }
    if (setup_status != ROW_OK) {
        for (size_t i = 0; i < npaths; i++) {
            struct row *row = add_row(r, bi, paths[i]);
            snprintf(row->reason, sizeof row->reason, "%s", r->bridges[bi].error);
            row->status = setup_status;
        }
        r->bridges[bi].error_status = setup_status;
        cl_env_close(&env);
        return;
    }
    r->bridges[bi].created = true;
    r->bridges[bi].caps = clmem_bridge_caps(bridge);
    for (size_t i = 0; i < npaths; i++) {
        struct row *row = add_row(r, bi, paths[i]);

        s = clmem_bridge_check_path(bridge, paths[i]);
        if (s != CLMEM_OK) {
            snprintf(row->reason, sizeof row->reason, "%s", clmem_error_message());
            row->status = check_status(s);
            continue;
        }
        /* The fd paths import the memory itself: no copy by design. */
        row->zero_copy = paths[i] != CLMEM_BRIDGE_PATH_HOST_MAPPED ||
                         (r->bridges[bi].caps & CLMEM_BRIDGE_CAP_HOST_MAPPED_ZERO_COPY);
        if (!cl_env_build(&env, r->size)) {
            snprintf(row->reason, sizeof row->reason, "OpenCL set-up: %s", env.error);
            row->status = ROW_FAILED;
            continue;
        }
        round_trip(ctx, &env, bridge, paths[i], r->size, row);
    }
    for (size_t i = 0; i < npaths; i++)
        if (clmem_bridge_check_path(bridge, paths[i]) == CLMEM_OK)
            check_images(r, ctx, &env, bridge, bi, paths[i]);
    check_semaphores(r, &r->bridges[bi], bridge);
    /* Before vkDestroyDevice: nothing of the bridge may hold Vulkan memory.
     * Every trip already finished its own import; this is what a program
     * does, and it must hold. */
    s = clmem_bridge_finish(bridge, FINISH_TIMEOUT_NS);
    if (s != CLMEM_OK) {
        snprintf(r->bridges[bi].error, sizeof r->bridges[bi].error, "clmem_bridge_finish before vkDestroyDevice: %s",
                 clmem_error_message());
        r->bridges[bi].error_status = ROW_FAILED;
        r->failures++;
    }
    clmem_bridge_unref(bridge);
    cl_env_close(&env);
}
