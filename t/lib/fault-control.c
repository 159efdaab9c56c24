/* SPDX-License-Identifier: MIT */
/* The fault-injection seam's counters, for t/lib/libclmem-fault.la only: the
 * clmem_fault_hit() that lib/fault.h's FAULT() calls when the library is
 * built with -DCLMEM_FAULT_INJECTION, and the control functions of
 * t/lib/fault-control.h. Never part of a shipped library: it lives here, next
 * to the tests that use it, and only t/tests.am builds it.
 *
 * A small fixed table under one mutex: the library has a few dozen points
 * and the tests that use this are not measuring speed, so simple wins. */
#include "config.h"
#include "fault.h"
#include "fault-control.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAULT_POINTS_MAX 64

struct fault_point {
    const char *name; /* the FAULT() literal, or the test's copy of it */
    int passes;       /* since arm or reset */
    int fail_at;      /* the pass that fails; 0 when disarmed */
    bool reached;     /* the library passed it at least once (a reset keeps this) */
};

static struct fault_point points[FAULT_POINTS_MAX];
static int point_count;
static int fired;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry for name, made on first use. Called with the lock held. A full
 * table is a test bug (a new point beyond 64): stop loudly, since quietly
 * not counting would make a fault test pass without testing anything. */
static struct fault_point *find(const char *name)
{
    for (int i = 0; i < point_count; i++)
        if (strcmp(points[i].name, name) == 0)
            return &points[i];
    if (point_count == FAULT_POINTS_MAX) {
        fprintf(stderr, "t/lib/fault-control.c: more than %d fault points; raise FAULT_POINTS_MAX\n", FAULT_POINTS_MAX);
        abort();
    }
    points[point_count].name = name;
    points[point_count].passes = 0;
    points[point_count].fail_at = 0;
    points[point_count].reached = false;
    return &points[point_count++];
}

bool clmem_fault_hit(const char *point)
{
    struct fault_point *p;
    bool hit;

    pthread_mutex_lock(&lock);
    p = find(point);
    p->passes++;
    p->reached = true;
    hit = p->fail_at != 0 && p->passes == p->fail_at;
    if (hit) {
        p->fail_at = 0; /* once: the retry after a failure must go through */
        fired++;
    }
    pthread_mutex_unlock(&lock);
    return hit;
}

void clmem_fault_arm(const char *point, int nth)
{
    struct fault_point *p;

    pthread_mutex_lock(&lock);
    p = find(point);
    p->passes = 0;
    p->fail_at = nth > 0 ? nth : 0;
    pthread_mutex_unlock(&lock);
}

int clmem_fault_passes(const char *point)
{
    int n = 0;

    pthread_mutex_lock(&lock);
    for (int i = 0; i < point_count; i++)
        if (strcmp(points[i].name, point) == 0)
            n = points[i].passes;
    pthread_mutex_unlock(&lock);
    return n;
}

int clmem_fault_fired(void)
{
    int n;

    pthread_mutex_lock(&lock);
    n = fired;
    pthread_mutex_unlock(&lock);
    return n;
}

void clmem_fault_reset(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < point_count; i++) {
        points[i].passes = 0;
        points[i].fail_at = 0;
    }
    fired = 0;
    pthread_mutex_unlock(&lock);
}

int clmem_fault_seen(const char **names, int max)
{
    int n = 0;

    pthread_mutex_lock(&lock);
    for (int i = 0; i < point_count; i++)
        if (points[i].reached) {
            if (n < max)
                names[n] = points[i].name;
            n++;
        }
    pthread_mutex_unlock(&lock);
    return n;
}
