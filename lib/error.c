/* The per-thread last-error record (see "last error" in clmem.h).
 * Written only on failure, so successful calls pay nothing for it. */
#include "config.h"
#include "clmem.h"
#include "export.h"

#include <stdarg.h>
#include <stdio.h>

#define CLMEM_ERROR_TEXT 768

struct last_error {
    clmem_status status;
    clmem_api api;
    const char *call;
    int32_t native_code;
    char explanation[CLMEM_ERROR_TEXT];
    char message[CLMEM_ERROR_TEXT + 256]; /* built from the fields above */
};

static _Thread_local struct last_error last_error;

static const char *api_name(clmem_api api)
{
    switch (api) {
    case CLMEM_API_OPENCL: return "OpenCL";
    case CLMEM_API_VULKAN: return "Vulkan";
    case CLMEM_API_SYSTEM: return "errno";
    case CLMEM_API_NONE: break;
    }
    return "";
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
    if (call)
        snprintf(e->message, sizeof e->message, "%.160s failed with %s code %d%s%.*s", call, api_name(api),
                 (int)native_code, e->explanation[0] ? ": " : ".", CLMEM_ERROR_TEXT - 1, e->explanation);
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
