/* SPDX-License-Identifier: MIT */
/* clmem.h on its own in strict C99 (-std=c99 -pedantic -Werror -Wall
 * -Wextra, see t/tests.am): it must bring in everything it uses and not
 * lean on GNU or C11 features. Building this is the test; running it only
 * checks that the declarations link against the library. */
#include <clmem.h>

#include <stdio.h>

/* CLMEM_CHECK_VERSION in #if, as programs use it: true for this version
 * and every earlier one, false for every later one. A wrong answer stops
 * the build. */
#if !CLMEM_CHECK_VERSION(CLMEM_VERSION_MAJOR, CLMEM_VERSION_MINOR, CLMEM_VERSION_MICRO)
#error "CLMEM_CHECK_VERSION is false for the headers' own version"
#endif
#if !CLMEM_CHECK_VERSION(0, 3, 0) || !CLMEM_CHECK_VERSION(0, 2, 99) || !CLMEM_CHECK_VERSION(0, 0, 0)
#error "CLMEM_CHECK_VERSION is false for a version at or before 0.3.0"
#endif
#if CLMEM_CHECK_VERSION(CLMEM_VERSION_MAJOR, CLMEM_VERSION_MINOR, CLMEM_VERSION_MICRO + 1) || \
    CLMEM_CHECK_VERSION(CLMEM_VERSION_MAJOR, CLMEM_VERSION_MINOR + 1, 0) ||                 \
    CLMEM_CHECK_VERSION(CLMEM_VERSION_MAJOR + 1, 0, 0)
#error "CLMEM_CHECK_VERSION is true for a later version"
#endif

int main(void)
{
    /* Use the types and a few declarations so a broken prototype or a
     * missing typedef fails to compile rather than going unnoticed. */
    clmem_status s;
    clmem_handle *h = NULL;
    clmem_keepalive *ka = NULL;
    cl_mem mem = NULL;
    uint32_t pitch = 0;
    int ok;

    s = clmem_handle_wrap(mem, NULL, pitch, ka, &h);
    ok = s == CLMEM_ERR_NULL_POINTER && h == NULL && clmem_error_api() == CLMEM_API_NONE &&
         clmem_handle_row_pitch(h) == 0 && clmem_handle_keepalive(h) == NULL &&
         clmem_status_name(CLMEM_ERR_TIMEOUT) != NULL && CLMEM_VERSION_MAJOR == 0;
    printf("1..1\n%s 1 - clmem.h builds alone as C99 (clmem %s)\n", ok ? "ok" : "not ok", clmem_version());
    return ok ? 0 : 1;
}
