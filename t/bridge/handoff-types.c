/* SPDX-License-Identifier: MIT */
/* clmem_bridge_acquire_many() and clmem_bridge_release_many() take the
 * handle arrays callers have, without a cast: an array of handles
 * (clmem_handle *[]), a pointer to its first element (clmem_handle **),
 * and a ring batch's frames (clmem_handle *const *).
 * Built with -std=c99 -pedantic -Werror -Wall -Wextra (t/tests.am):
 * building this is the test, so a parameter type that one of these does
 * not convert to fails the build. Running it checks that each call reaches
 * the library, which refuses the NULL bridge; no device is needed. */
#include <clmem-bridge.h>

#include <stdio.h>

static int point;
static int failed;

static void check(clmem_status s, const char *what)
{
    point++;
    failed |= s != CLMEM_ERR_NULL_POINTER;
    printf("%s %d - %s, without a cast -> %s\n", s == CLMEM_ERR_NULL_POINTER ? "ok" : "not ok", point, what,
           clmem_status_name(s));
}

int main(void)
{
    clmem_handle *array[2] = {NULL, NULL};
    clmem_handle **pointer = array;
    clmem_bridge_ring_batch batch = {0, 0, 0, 2, array};
    clmem_handle *const *frames = batch.frames;

    printf("1..6\n");
    check(clmem_bridge_acquire_many(NULL, 2, array, NULL, 0, NULL, NULL), "acquire_many(clmem_handle *[2])");
    check(clmem_bridge_acquire_many(NULL, 2, pointer, NULL, 0, NULL, NULL), "acquire_many(clmem_handle **)");
    check(clmem_bridge_acquire_many(NULL, 2, frames, NULL, 0, NULL, NULL),
          "acquire_many(clmem_handle *const *, a ring batch's frames)");
    check(clmem_bridge_release_many(NULL, 2, array, NULL, 0, NULL, NULL), "release_many(clmem_handle *[2])");
    check(clmem_bridge_release_many(NULL, 2, pointer, NULL, 0, NULL, NULL), "release_many(clmem_handle **)");
    check(clmem_bridge_release_many(NULL, 2, frames, NULL, 0, NULL, NULL),
          "release_many(clmem_handle *const *, a ring batch's frames)");
    return failed;
}
