/* SPDX-License-Identifier: MIT */
/* The per-thread last-error record (see "last error" in clmem.h).
 * Written only on failure, so successful calls pay nothing for it. */
#define _GNU_SOURCE /* strerrorname_np */
#include "config.h"
#include "clmem.h"
#include "export.h"
#include "native-names.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Room for the explanation, terminator included. A message that lists a
 * reason per path and names both devices (the import's "No path fits this
 * memory") runs to some 1500 bytes on a CPU pair; callers put the reason
 * that applies first too, so that a cut never loses it. */
#define CLMEM_ERROR_TEXT 2048

struct last_error {
    clmem_status status;
    clmem_api api;
    const char *call;
    int32_t native_code;
    char explanation[CLMEM_ERROR_TEXT];
    char message[CLMEM_ERROR_TEXT + 320]; /* built from the fields above: call, code, explanation */
};

static _Thread_local struct last_error last_error;

/* The code as its API names it: "CL_INVALID_VALUE (-30)",
 * "VK_ERROR_FORMAT_NOT_SUPPORTED (-11)", "EMFILE (errno 24)"; a code no
 * header names keeps its number ("OpenCL code 999": NVIDIA's for a bad fd). */
static void format_code(char *out, size_t size, clmem_api api, int32_t code)
{
    const char *name = NULL;

    switch (api) {
    case CLMEM_API_OPENCL:
        if ((name = clmem__cl_error_name(code)))
            snprintf(out, size, "%s (%d)", name, (int)code);
        else
            snprintf(out, size, "OpenCL code %d", (int)code);
        return;
    case CLMEM_API_VULKAN:
        if ((name = clmem__vk_result_name(code)))
            snprintf(out, size, "%s (%d)", name, (int)code);
        else
            snprintf(out, size, "Vulkan code %d", (int)code);
        return;
    case CLMEM_API_SYSTEM:
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
        name = strerrorname_np(code);
#endif
        if (name)
            snprintf(out, size, "%s (errno %d)", name, (int)code);
        else
            snprintf(out, size, "errno %d", (int)code);
        return;
    case CLMEM_API_NONE: break;
    }
    snprintf(out, size, "code %d", (int)code);
}

CLMEM_EXPORT clmem_status clmem_error_set(clmem_status status, clmem_api api, const char *call,
                                          int32_t native_code, const char *fmt, ...)
{
    struct last_error *e = &last_error;
    va_list ap;

    e->status = status;
    e->api = api;
    e->call = call;
    e->native_code = native_code;
    e->explanation[0] = '\0';
    if (fmt) {
        va_start(ap, fmt);
        vsnprintf(e->explanation, sizeof e->explanation, fmt, ap);
        va_end(ap);
    }
    if (call) {
        char code[96];
        format_code(code, sizeof code, api, native_code);
        snprintf(e->message, sizeof e->message, "%.160s failed with %s%s%.*s", call, code,
                 e->explanation[0] ? ": " : ".", CLMEM_ERROR_TEXT - 1, e->explanation);
    }
    else if (e->explanation[0]) /* the library's own check: its explanation says it all */
        snprintf(e->message, sizeof e->message, "%.*s", CLMEM_ERROR_TEXT - 1, e->explanation);
    else
        snprintf(e->message, sizeof e->message, "%s", clmem_status_str(status));
    return status;
}

CLMEM_EXPORT void clmem_error_clear(void)
{
    struct last_error *e = &last_error;
    e->status = CLMEM_OK;
    e->api = CLMEM_API_NONE;
    e->call = NULL;
    e->native_code = 0;
    e->explanation[0] = '\0';
    e->message[0] = '\0';
}

CLMEM_EXPORT clmem_status clmem_error_status(void) { return last_error.status; }
CLMEM_EXPORT clmem_api clmem_error_api(void) { return last_error.api; }
CLMEM_EXPORT const char *clmem_error_call(void) { return last_error.call; }
CLMEM_EXPORT int32_t clmem_error_native_code(void) { return last_error.native_code; }

CLMEM_EXPORT const char *clmem_error_message(void)
{
    return last_error.status == CLMEM_OK ? "No error." : last_error.message;
}
