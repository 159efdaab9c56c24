/* SPDX-License-Identifier: MIT */
/* Misuse of the core objects is reported at the call, in one line, and the
 * program stops there (SIGABRT) rather than going on with a corrupt heap:
 * an unref too many of a handle or an anchor, a use after the last unref,
 * a pointer that never was one, an object of the wrong kind, a count
 * already zero. Each case runs in a child process (t/lib/child.h) and the
 * parent checks how it ended and the line it printed.
 *
 * Without CLMEM_CHECK, a double unref is caught while the freed memory was
 * not handed out again: the cases make no allocation in between, and the
 * report says it cannot tell which mistake it is. With CLMEM_CHECK=1
 * (checked mode) freed objects are poisoned and held back, so the case
 * that allocates a new handle in between (which glibc gives the freed
 * block) is caught too; the report says which mistake it is (an unref too
 * many, or a use after the last unref) and names the unref that dropped
 * the last reference; and a correct program runs unchanged.
 *
 * Under AddressSanitizer the cases that read freed memory are reported by
 * ASan first (heap-use-after-free, inside the clmem call): that is
 * accepted, as long as the report names the call (t/lib/child.c,
 * misuse_check). Under valgrind the
 * children run without it (it does not follow exec); the parent still
 * runs under it.
 *
 * Then clmem_handle_wrap_checked with objects of the wrong kind (a queue
 * as the cl_mem, a cl_mem as the queue), which PoCL answers with
 * CL_SUCCESS: refused all the same. */
#include "t/lib/child.h"
#include "t/lib/cl-fixture.h"
#include "clmem.h"
#include "keepalive-private.h"
#include "t/lib/tap.h"

#include <stdlib.h>
#include <string.h>

/* Non-NULL stand-ins: clmem_handle_wrap asks OpenCL nothing. */
#define FAKE_MEM ((cl_mem)(uintptr_t)0x1000)
#define FAKE_QUEUE ((cl_command_queue)(uintptr_t)0x2000)

static clmem_handle *wrap(void)
{
    clmem_handle *h = NULL;
    if (clmem_handle_wrap(FAKE_MEM, FAKE_QUEUE, 0, NULL, &h) != CLMEM_OK)
        exit(100);
    return h;
}

/* ---------------------------------------------------------- the cases */

static void handle_unref_twice(void)
{
    clmem_handle *h = wrap();
    clmem_handle_unref(h);
    clmem_handle_unref(h);
}

static void handle_ref_after_unref(void)
{
    clmem_handle *h = wrap();
    clmem_handle_unref(h);
    clmem_handle_ref(h);
}

static void handle_mem_after_unref(void)
{
    clmem_handle *h = wrap();
    clmem_handle_unref(h);
    (void)clmem_handle_mem(h);
}

/* The freed block is handed to the next handle (glibc does): without
 * checked mode the stale unref would drop the new handle's reference. */
static void handle_unref_after_reuse(void)
{
    clmem_handle *h = wrap(), *h2;
    clmem_handle_unref(h);
    h2 = wrap();
    clmem_handle_unref(h);
    clmem_handle_unref(h2);
}

static void handle_garbage(void)
{
    static _Alignas(16) unsigned char block[64]; /* zeroes: no handle */
    clmem_handle_unref((clmem_handle *)block);
}

static void anchor_as_handle(void)
{
    clmem_keepalive *ka = clmem_keepalive_new(NULL, NULL);
    clmem_handle_unref((clmem_handle *)ka);
}

static void anchor_unref_twice(void)
{
    clmem_keepalive *ka = clmem_keepalive_new(NULL, NULL);
    clmem_keepalive_unref(ka);
    clmem_keepalive_unref(ka);
}

static void anchor_ref_after_unref(void)
{
    clmem_keepalive *ka = clmem_keepalive_new(NULL, NULL);
    clmem_keepalive_unref(ka);
    clmem_keepalive_ref(ka);
}

static void chain_unref_twice(void)
{
    clmem_keepalive *first = clmem_keepalive_new(NULL, NULL), *chain = clmem_keepalive_chain(first, NULL);
    clmem_keepalive_unref(first);
    clmem_keepalive_unref(chain);
    clmem_keepalive_unref(chain);
}

static clmem_keepalive *self_anchor;

static void unref_self(void *user)
{
    (void)user;
    clmem_keepalive_unref(self_anchor);
}

static void ref_self(void *user)
{
    (void)user;
    clmem_keepalive_ref(self_anchor);
}

static void anchor_unref_in_its_release(void)
{
    self_anchor = clmem_keepalive_new(unref_self, NULL);
    clmem_keepalive_unref(self_anchor);
}

static void anchor_ref_in_its_release(void)
{
    self_anchor = clmem_keepalive_new(ref_self, NULL);
    clmem_keepalive_unref(self_anchor);
}

/* A count of zero on a block that still carries the mark: what an unref
 * racing the last one on another thread meets. Made here by setting the
 * count of an anchor the test set up itself (keepalive-private.h). */
static void anchor_count_zero(void)
{
    struct clmem_keepalive *ka = malloc(sizeof *ka);
    if (!ka)
        exit(100);
    clmem__keepalive_init(ka, NULL, NULL);
    atomic_store(&ka->refs, 0u);
    clmem_keepalive_unref(ka);
}

/* Checked mode does not change a correct program: more objects than the
 * quarantine holds, made and dropped. */
static void correct_use(void)
{
    for (int i = 0; i < 3 * 1024; i++) {
        clmem_keepalive *ka = clmem_keepalive_new(NULL, NULL);
        clmem_handle *h = NULL;
        if (!ka || clmem_handle_wrap(FAKE_MEM, FAKE_QUEUE, 0, ka, &h) != CLMEM_OK)
            exit(100);
        clmem_keepalive_unref(ka);
        clmem_handle_unref(clmem_handle_ref(h));
        if (clmem_handle_mem(h) != FAKE_MEM)
            exit(101);
        clmem_handle_unref(h);
    }
}

static const struct misuse_case cases[] = {
    {"handle-unref-twice", handle_unref_twice, false, "clmem_handle_unref",
     "(an unref too many, or a use after the last unref; CLMEM_CHECK=1 tells which)", true},
    /* Checked mode tells which, and names the unref that freed it. */
    {"handle-unref-twice-checked", handle_unref_twice, true, "clmem_handle_unref",
     "last reference was already dropped by clmem_handle_unref: an unref too many. Aborting.", false},
    {"handle-ref-after-unref-checked", handle_ref_after_unref, true, "clmem_handle_ref",
     "last reference was already dropped by clmem_handle_unref: a use after the last unref. Aborting.", false},
    {"handle-mem-after-unref-checked", handle_mem_after_unref, true, "clmem_handle_mem",
     "last reference was already dropped by clmem_handle_unref: a use after the last unref. Aborting.", false},
    {"handle-unref-after-reuse-checked", handle_unref_after_reuse, true, "clmem_handle_unref",
     "last reference was already dropped by clmem_handle_unref: an unref too many. Aborting.", false},
    {"handle-garbage", handle_garbage, false, "clmem_handle_unref", "not a live clmem_handle", false},
    {"anchor-as-handle", anchor_as_handle, false, "clmem_handle_unref", "this is a clmem_keepalive, not a clmem_handle",
     false},
    {"anchor-unref-twice", anchor_unref_twice, false, "clmem_keepalive_unref", "CLMEM_CHECK=1 tells which", true},
    {"anchor-unref-twice-checked", anchor_unref_twice, true, "clmem_keepalive_unref",
     "last reference was already dropped by clmem_keepalive_unref: an unref too many. Aborting.", false},
    {"anchor-ref-after-unref-checked", anchor_ref_after_unref, true, "clmem_keepalive_ref",
     "last reference was already dropped by clmem_keepalive_unref: a use after the last unref. Aborting.", false},
    {"chain-unref-twice", chain_unref_twice, false, "clmem_keepalive_unref", "CLMEM_CHECK=1 tells which", true},
    {"chain-unref-twice-checked", chain_unref_twice, true, "clmem_keepalive_unref",
     "last reference was already dropped by clmem_keepalive_unref: an unref too many. Aborting.", false},
    /* Inside its own release the anchor is dead and not freed yet: checked
     * mode tells which, with no unref to name. */
    {"anchor-unref-in-its-release-checked", anchor_unref_in_its_release, true, "clmem_keepalive_unref",
     "last reference was already dropped: an unref too many. Aborting.", false},
    {"anchor-unref-in-its-release", anchor_unref_in_its_release, false, "clmem_keepalive_unref",
     "last reference was already dropped", false},
    {"anchor-ref-in-its-release", anchor_ref_in_its_release, false, "clmem_keepalive_ref",
     "last reference was already dropped", false},
    {"anchor-count-zero", anchor_count_zero, false, "clmem_keepalive_unref", "reference count is already zero",
     false},
    {"correct-use-checked", correct_use, true, NULL, NULL, false},
};
#define CASE_COUNT (int)(sizeof cases / sizeof cases[0])

/* ------------------------------------------ wrap_checked, wrong kinds */

static void check_wrong_kinds(void)
{
    struct cl_fixture f;
    clmem_handle *h = (clmem_handle *)&f; /* must become NULL */
    clmem_status s;
    cl_mem mem;

    cl_fixture_open(&f);
    mem = cl_fixture_buffer(&f, 4096);
    s = clmem_handle_wrap_checked((cl_mem)f.queue, f.queue, 0, NULL, &h);
    tap_ok((s == CLMEM_ERR_INVALID_VALUE || s == CLMEM_ERR_OPENCL) && !h,
           "wrap_checked refuses a queue passed as the cl_mem: %s, %s", clmem_status_name(s),
           clmem_error_message());
    h = (clmem_handle *)&f;
    s = clmem_handle_wrap_checked(mem, (cl_command_queue)mem, 0, NULL, &h);
    tap_ok((s == CLMEM_ERR_INVALID_VALUE || s == CLMEM_ERR_OPENCL) && !h,
           "wrap_checked refuses a cl_mem passed as the queue: %s, %s", clmem_status_name(s),
           clmem_error_message());
    s = clmem_handle_wrap_checked(mem, f.queue, 0, NULL, &h);
    tap_ok(s == CLMEM_OK && h, "and takes the right objects: %s", clmem_status_name(s));
    clmem_handle_unref(h);
    clReleaseMemObject(mem);
    cl_fixture_close(&f);
}

int main(int argc, char **argv)
{
    int child = misuse_run_child(cases, CASE_COUNT, argc, argv);

    if (child >= 0) /* a child: it ran one case */
        return child;
    tap_plan(CASE_COUNT + 3);
    for (int i = 0; i < CASE_COUNT; i++)
        misuse_check(&cases[i], 60);
    check_wrong_kinds();
    return tap_done();
}
