/* SPDX-License-Identifier: MIT */
/* Internal, shared by libclmem and libclmem-bridge: the mark that says a
 * refcounted object is alive, the one-line report that ends a program
 * which used one after its last unref, and the checked mode.
 *
 * Every refcounted object (handle, anchor, bridge, semaphore, ring) keeps
 * a mark of its type in the word beside its count: one compare, on the
 * cache line the count is on, before the count is touched. An unref of an
 * object whose mark is gone (freed: the allocator wrote over it; or never
 * that type) or whose count is already zero prints one line naming the
 * call and aborts, before anything is written: the mistake is reported
 * where it was made, not as a corrupt heap later.
 *
 * That catches a double unref as long as the memory was not handed out
 * again, and the report cannot tell an unref too many from a use after the
 * last unref (the mark it found may be any freed block's). Checked mode
 * (CLMEM_CHECK=1 in the environment, read at the first free of each kind)
 * makes it certain for a while: a freed object is poisoned (0xa5 bytes,
 * the mark set to MARK_DEAD) and held back, the last QUARANTINE_SLOTS of
 * each kind, with the name of the call that dropped its last reference,
 * before it goes back to the allocator. A use after the last unref meets
 * MARK_DEAD whatever was allocated since, and the report says which
 * mistake it is: another unref is an unref too many, any other call a use
 * after the last unref; and it names that last unref where the object is
 * still held back in this file's quarantine.
 *
 * Everything is static inline, so that libclmem and libclmem-bridge (and
 * the fault-injection library built from both) each carry their own copy
 * without sharing a symbol: each translation unit that frees objects has
 * its own quarantine. */
#ifndef CLMEM_LIVE_MARK_H
#define CLMEM_LIVE_MARK_H
#include "refcount.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One per type, none a plausible pointer half, count or size. */
#define MARK_HANDLE 0xc1e0a001u
#define MARK_ANCHOR 0xc1e0a002u
#define MARK_BRIDGE 0xc1e0a003u
#define MARK_SEMAPHORE 0xc1e0a004u
#define MARK_RING 0xc1e0a005u
#define MARK_DEAD 0xc1e0deadu

#define QUARANTINE_SLOTS 1024
#define POISON_BYTE 0xa5

static inline const char *live_mark_type(uint32_t mark)
{
    switch (mark) {
    case MARK_HANDLE: return "clmem_handle";
    case MARK_ANCHOR: return "clmem_keepalive";
    case MARK_BRIDGE: return "clmem_bridge";
    case MARK_SEMAPHORE: return "clmem_bridge_semaphore";
    case MARK_RING: return "clmem_bridge_ring";
    }
    return NULL;
}

/* Checked mode's quarantine, one per translation unit (live_free()): the
 * blocks freed last. Each file frees only its own type's objects, through
 * that type's unref, so a block found here was freed by "<type>_unref". */
static struct {
    void *held[QUARANTINE_SLOTS];
    unsigned next;
    atomic_flag busy;
} live_quarantine __attribute__((unused)) = {.busy = ATOMIC_FLAG_INIT};

static inline void live_quarantine_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&live_quarantine.busy, memory_order_acquire))
        ;
}

static inline void live_quarantine_unlock(void)
{
    atomic_flag_clear_explicit(&live_quarantine.busy, memory_order_release);
}

/* Is obj held in this file's quarantine (freed by this file's unref)? */
static inline bool live_quarantined(const void *obj)
{
    bool found = false;

    live_quarantine_lock();
    for (unsigned i = 0; i < QUARANTINE_SLOTS && !found; i++)
        found = live_quarantine.held[i] == obj;
    live_quarantine_unlock();
    return found;
}

static inline bool live_checked_mode(void);

/* Does the call drop a reference ("clmem_handle_unref")? */
static inline bool live_is_unref(const char *call)
{
    size_t n = strlen(call);
    return n >= 6 && strcmp(call + n - 6, "_unref") == 0;
}

/* abort(), through a pointer gcc cannot see through: otherwise it finds
 * that live_misuse() never returns and keeps a call to it (below). */
static void (*volatile const live_abort)(void) = abort;

/* The report: one line on stderr (one write, so that it is not interleaved
 * with another thread's output), then abort(); it never returns. `seen` is
 * the mark found, or `want` when the count was the problem. Out of line and
 * not declared noreturn (nor cold) on purpose: ref and unref end in a tail
 * call to it, so that the paths that do not fail need no stack frame (with
 * noreturn, declared or found, gcc keeps a call, and a frame for it, in
 * unref). */
__attribute__((noinline, unused)) static void live_misuse(const char *call, const void *obj, uint32_t want,
                                                                uint32_t seen)
{
    const char *type = live_mark_type(want), *other = live_mark_type(seen);
    const char *which = live_is_unref(call) ? "an unref too many" : "a use after the last unref";
    char line[512];
    int n;

    if (seen == want)
        n = snprintf(line, sizeof line,
                     "clmem: %s(%p): this %s's reference count is already zero: an unref too many. Aborting.\n",
                     call, obj, type);
    else if (seen == MARK_DEAD && live_checked_mode() && live_quarantined(obj))
        n = snprintf(line, sizeof line,
                     "clmem: %s(%p): this %s's last reference was already dropped by %s_unref: %s. Aborting.\n", call,
                     obj, type, type, which);
    else if (seen == MARK_DEAD && live_checked_mode())
        n = snprintf(line, sizeof line, "clmem: %s(%p): this %s's last reference was already dropped: %s. Aborting.\n",
                     call, obj, type, which);
    else if (seen == MARK_DEAD)
        n = snprintf(line, sizeof line,
                     "clmem: %s(%p): this %s's last reference was already dropped (an unref too many, or a use "
                     "after the last unref; CLMEM_CHECK=1 tells which). Aborting.\n",
                     call, obj, type);
    else if (other)
        n = snprintf(line, sizeof line, "clmem: %s(%p): this is a %s, not a %s. Aborting.\n", call, obj, other,
                     type);
    else if (live_checked_mode())
        n = snprintf(line, sizeof line,
                     "clmem: %s(%p): not a live %s: it never was one, or its last reference was dropped more "
                     "than %d frees of its kind ago (checked mode holds the last %d back). Aborting.\n",
                     call, obj, type, QUARANTINE_SLOTS, QUARANTINE_SLOTS);
    else
        n = snprintf(line, sizeof line,
                     "clmem: %s(%p): not a live %s: its last reference was already dropped (an unref too many, "
                     "or a use after the last unref; CLMEM_CHECK=1 tells which), or it never was one. "
                     "Aborting.\n",
                     call, obj, type);
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    live_abort();
}

/* live_misuse() for a mark found wrong, read there (not passed: then the
 * check is one compare with memory, and the mark is not kept in a
 * register for the call). */
__attribute__((noinline, unused)) static void live_misuse_mark(const char *call, const void *obj, uint32_t want,
                                                               const uint32_t *mark)
{
    live_misuse(call, obj, want, *(const volatile uint32_t *)mark);
}

/* Is the mark not `want`? The checks read
 *     if (LIVE_BAD(h->live, MARK_HANDLE)) {
 *         live_misuse_mark("clmem_handle_ref", h, MARK_HANDLE, &h->live);
 *         return ...;
 *     }
 * on every public call that takes the object, before it is used; a NULL
 * object is the caller's to handle first. */
#define LIVE_BAD(mark, want) __builtin_expect((mark) != (want), 0)

/* Abort unless the mark is `want`, where a tail call does not matter. */
#define LIVE_CHECK(mark, want, call, obj)                                                                 \
    do {                                                                                                  \
        if (LIVE_BAD(mark, want))                                                                         \
            live_misuse_mark((call), (obj), (want), &(mark));                                             \
    } while (0)

/* Drop one reference of an object whose mark was checked: 1 when it was the
 * last, 0 when others remain, -1 when the count was already zero (an unref
 * too many: the caller reports it with live_misuse(call, obj, want, want)).
 * The decrement went to the object's own count, never to the allocator's
 * data: the mark said the memory is still this object's. */
static inline int live_put(clmem_refcount *r)
{
    unsigned old = refcount_put_old(r);
    if (__builtin_expect(old > 1u, 1))
        return 0;
    return old == 1u ? 1 : -1;
}

/* A whole ref of an object that is not NULL: its mark checked (a wrong one
 * aborts), one reference taken. Returns false only where it found the mark
 * wrong, after the report; written so that the report is a tail call and
 * the path that does not fail needs no stack frame (live_misuse()). */
static inline bool live_ref(clmem_refcount *refs, uint32_t *mark, uint32_t want, const char *call, const void *obj)
{
    if (LIVE_BAD(*mark, want)) {
        live_misuse_mark(call, obj, want, mark);
        return false;
    }
    refcount_get(refs);
    return true;
}

/* A whole unref of an object that is not NULL: its mark checked, one
 * reference dropped, an unref too many reported (both abort); whether it
 * was the last reference. The reports are tail calls, as in live_ref(). */
static inline bool live_unref(clmem_refcount *refs, uint32_t *mark, uint32_t want, const char *call, const void *obj)
{
    int last;

    if (LIVE_BAD(*mark, want)) {
        live_misuse_mark(call, obj, want, mark);
        return false;
    }
    last = live_put(refs);
    if (last < 0) {
        live_misuse(call, obj, want, want);
        return false;
    }
    return last > 0;
}

/* Is checked mode on? CLMEM_CHECK set to anything but "" or "0", read once
 * per translation unit. */
static inline bool live_checked_mode(void)
{
    static atomic_int state; /* 0: not read yet, 1: off, 2: on */
    int s = atomic_load_explicit(&state, memory_order_relaxed);

    if (s == 0) {
        const char *v = getenv("CLMEM_CHECK");
        s = v && v[0] && strcmp(v, "0") != 0 ? 2 : 1;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s == 2;
}

/* The end of an object, whose last reference its type's unref dropped:
 * its mark becomes MARK_DEAD (a store the compiler keeps: the allocator may
 * leave the word as it is), then the block goes back to the allocator; in
 * checked mode its first `bytes` bytes are poisoned first and it is held
 * back behind the last QUARANTINE_SLOTS blocks this file freed. */
static inline void live_free(void *block, uint32_t *mark, size_t bytes)
{
    void *evicted;

    if (!live_checked_mode()) {
        *(volatile uint32_t *)mark = MARK_DEAD;
        free(block);
        return;
    }
    memset(block, POISON_BYTE, bytes);
    *(volatile uint32_t *)mark = MARK_DEAD;
    live_quarantine_lock();
    evicted = live_quarantine.held[live_quarantine.next];
    live_quarantine.held[live_quarantine.next] = block;
    live_quarantine.next = (live_quarantine.next + 1) % QUARANTINE_SLOTS;
    live_quarantine_unlock();
    free(evicted);
}

#endif
