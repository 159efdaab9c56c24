/* clmem_status_str and the last-error record. */
#include "clmem.h"
#include "tap.h"

#include <string.h>

int main(void)
{
    const char *seen[CLMEM_ERR_NO_MEMORY + 1];
    bool distinct = true, nonnull = true;

    for (int s = CLMEM_OK; s <= CLMEM_ERR_NO_MEMORY; s++) {
        seen[s] = clmem_status_str((clmem_status)s);
        if (!seen[s] || !seen[s][0])
            nonnull = false;
        for (int t = 0; t < s && seen[s]; t++)
            if (seen[t] && strcmp(seen[s], seen[t]) == 0)
                distinct = false;
    }
    tap_ok(nonnull, "every status has a non-empty sentence");
    tap_ok(distinct, "the sentences are distinct");
    for (int u = -1; u <= 1000; u += 1001) {
        const char *s = clmem_status_str((clmem_status)u);
        bool unknown_distinct = s != NULL;
        for (int t = 0; t <= CLMEM_ERR_NO_MEMORY && s; t++)
            if (strcmp(s, seen[t]) == 0)
                unknown_distinct = false;
        tap_ok(unknown_distinct, "unknown value %d gets its own non-NULL sentence", u);
    }

    clmem_error_clear();
    tap_is_int(clmem_error_status(), CLMEM_OK, "a cleared record says CLMEM_OK");
    tap_ok(strcmp(clmem_error_message(), "No error.") == 0, "a cleared record's message says so");
    tap_is_int(clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clFoo", 999, "because %s", "reasons"),
               CLMEM_ERR_OPENCL, "clmem_error_set returns its status");
    tap_is_int(clmem_error_native_code(), 999, "the native code is kept raw, positive values too");
    tap_is_int(clmem_error_api(), CLMEM_API_OPENCL, "the API is kept");
    tap_ok(clmem_error_call() && strcmp(clmem_error_call(), "clFoo") == 0, "the failing call is kept");
    tap_ok(strstr(clmem_error_message(), "clFoo") && strstr(clmem_error_message(), "999") &&
               strstr(clmem_error_message(), "because reasons"),
           "the message names call, code and reason: %s", clmem_error_message());
    tap_ok(strcmp(clmem_version(), "0.1.0") == 0, "clmem_version is the package version");
    return tap_done();
}
