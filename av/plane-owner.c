/* SPDX-License-Identifier: MIT */
/* Which frame's plane each buffer clmem_av_frame_import() made shows.
 *
 * A clmem_av_frame_planes holds handles, and nothing in a handle says
 * which AVVkFrame its memory belongs to; clmem_av_frame_acquire() and
 * _release() signal and advance the semaphores of the frame they are
 * given, so planes of another frame would be handed over with the wrong
 * frame's semaphores. The import records each plane buffer (cl_mem) with
 * the VkImage it shows, and sets a destructor callback on the buffer for
 * each record; the record goes when its last callback ran. A cl_mem value
 * can be reused once OpenCL destroyed the buffer, which can be before its
 * callbacks ran (NVIDIA runs them on a thread of its own, 0.075 ms later):
 * so a cache hit (the same live buffer) counts one more callback rather
 * than trusting the record it finds, and a new buffer at a destroyed one's
 * value replaces its record (whose callbacks then only count down). */
#include "config.h"
#include "error-private.h"
#include "plane-owner.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define BUCKETS 256

struct owner {
    struct owner *next;
    cl_mem mem;
    VkImage image;
    unsigned callbacks; /* destructor callbacks set and not yet run (owners_lock) */
    bool listed;        /* on the table (owners_lock) */
};

static pthread_mutex_t owners_lock = PTHREAD_MUTEX_INITIALIZER;
static struct owner *owners[BUCKETS];

static struct owner **bucket(cl_mem mem)
{
    uintptr_t v = (uintptr_t)mem;
    return &owners[((v >> 4) ^ (v >> 12)) % BUCKETS];
}

/* The record of mem, or NULL (owners_lock held). */
static struct owner *find_locked(cl_mem mem)
{
    struct owner *o = *bucket(mem);
    while (o && o->mem != mem)
        o = o->next;
    return o;
}

/* Off the table (owners_lock held). */
static void unlink_locked(struct owner *gone)
{
    for (struct owner **at = bucket(gone->mem); *at; at = &(*at)->next)
        if (*at == gone) {
            *at = gone->next;
            break;
        }
    gone->listed = false;
}

/* One callback fewer; the record goes with its last (owners_lock held).
 * True when it is to be freed. */
static bool put_locked(struct owner *o)
{
    if (--o->callbacks)
        return false;
    if (o->listed)
        unlink_locked(o);
    return true;
}

static void CL_CALLBACK forget(cl_mem mem, void *user)
{
    bool gone;

    (void)mem;
    pthread_mutex_lock(&owners_lock);
    gone = put_locked(user);
    pthread_mutex_unlock(&owners_lock);
    if (gone)
        free(user);
}

clmem_status clmem__av_plane_owner_add(cl_mem mem, VkImage image)
{
    struct owner *fresh = malloc(sizeof *fresh), *o;
    bool unused;
    cl_int err;

    if (!fresh)
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating a plane record failed.");
    pthread_mutex_lock(&owners_lock);
    o = find_locked(mem);
    if (o && o->image != image) {
        unlink_locked(o); /* a destroyed buffer's: its callbacks still count it down */
        o = NULL;
    }
    if (!o) {
        o = fresh;
        o->mem = mem;
        o->image = image;
        o->callbacks = 0;
        o->next = *bucket(mem);
        o->listed = true;
        *bucket(mem) = o;
    }
    unused = o != fresh;
    o->callbacks++;
    pthread_mutex_unlock(&owners_lock);
    if (unused)
        free(fresh);
    if ((err = clSetMemObjectDestructorCallback(mem, forget, o)) != CL_SUCCESS) {
        bool gone;
        pthread_mutex_lock(&owners_lock);
        gone = put_locked(o);
        pthread_mutex_unlock(&owners_lock);
        if (gone)
            free(o);
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clSetMemObjectDestructorCallback", err,
                               "Recording which frame a plane buffer shows failed.");
    }
    return CLMEM_OK;
}

bool clmem__av_planes_show(const clmem_av_frame_planes *planes, const VkImage *images)
{
    bool all = true;

    pthread_mutex_lock(&owners_lock);
    for (uint32_t p = 0; p < planes->count && all; p++) {
        const struct owner *o = planes->planes[p] ? find_locked(clmem_handle_mem(planes->planes[p])) : NULL;
        all = o && o->image == images[p];
    }
    pthread_mutex_unlock(&owners_lock);
    return all;
}
