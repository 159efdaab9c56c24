/* SPDX-License-Identifier: MIT */
/* Internal: the consumer's object, shared by its three files:
 *   consumer.c          creation, the handshake, next(), destroy();
 *   consumer-import.c   the producer's frames into the bridge (the paths);
 *   consumer-release.c  the last unref of a frame, and the thread that
 *                       releases it and sends FREE once that completed. */
#ifndef CLMEM_IPC_CONSUMER_H
#define CLMEM_IPC_CONSUMER_H
#include "proto.h"
#include "vk.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct clmem_ipc_consumer;

struct consumer_frame {
    struct clmem_ipc_consumer *c;
    uint32_t index;
    uint32_t plane_count;
    /* The bridge's handles, handed to OpenCL and back, held until destroy():
     * one of the whole allocation for a frame alone in its allocation, else
     * one per plane (consumer-import.c says why). */
    uint32_t import_count;
    clmem_handle *imports[IPC_MAX_PLANES];
    cl_mem planes[IPC_MAX_PLANES];        /* each plane's buffer, a reference of ours */
    uint64_t sequence;                    /* of the READY it was handed out for */
    struct consumer_frame *next_released; /* the next frame of its batch (set when handed out), then of the
                                             release thread's queue */
};

struct clmem_ipc_consumer {
    clmem_bridge *bridge;
    cl_command_queue queue;
    cl_mem_flags mem_flags;
    clmem_bridge_path want_path, path; /* asked; taken (BEST until started) */
    VkPhysicalDevice physical_device;
    struct ipc_vk vk;
    int sock;
    bool started;
    _Atomic int state; /* clmem_ipc_state */

    /* proto (the frames' descriptions and states) is read and changed by
     * next() and by the release thread: under `lock`. */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct proto proto;
    struct consumer_frame frames[CLMEM_IPC_MAX_FRAMES];
    /* Frames of READYs received, not yet handed out (next()'s own, oldest
     * first): a READY names a batch, next() hands out one frame a call. */
    uint32_t pending[CLMEM_IPC_MAX_FRAMES];
    uint32_t pending_head, pending_count;
    uint32_t held;                     /* frames handed out whose last handle is alive */
    struct consumer_frame *released;   /* dropped by the caller, waiting for the thread (oldest first) */
    struct consumer_frame **released_tail;
    uint32_t releasing;                /* taken by the thread, FREE not yet sent */
    bool stop;                         /* destroy(): the thread ends once nothing is left */
    pthread_t thread;
};

/* consumer-import.c: import every frame's planes on the path chosen
 * (c->path), from the fds proto.c holds. On failure every import made so
 * far is dropped and the error recorded. */
clmem_status clmem__ipc_consumer_import(struct clmem_ipc_consumer *c);
/* Which path: c->want_path, the bridge's answer and the producer's HELLO. */
clmem_status clmem__ipc_consumer_choose_path(struct clmem_ipc_consumer *c, const struct ipc_hello *producer);
/* Drop every import (destroy, or a failed start). */
void clmem__ipc_consumer_drop_imports(struct clmem_ipc_consumer *c);

/* consumer-release.c */
void *clmem__ipc_consumer_release_thread(void *arg);
/* The anchor's callback of a batch handed out (`user` its first frame,
 * the rest chained by next_released): the batch's last handle is gone. */
void clmem__ipc_consumer_frame_dropped(void *user);
#endif
