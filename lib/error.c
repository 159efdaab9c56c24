/* SPDX-License-Identifier: MIT */
/* The per-thread last-error record (see "last error" in clmem.h).
 * Written only on failure, so successful calls pay nothing for it. */
#define _GNU_SOURCE /* strerrorname_np */
#include "config.h"
#include "clmem.h"
#include "export.h"
#include "error-private.h"
#include "native-names.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
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
    const char *unnamed = "code "; /* what stands before the number of a code no header names */
    const char *named = "";        /* what stands before the number after a name */

    switch (api) {
    case CLMEM_API_OPENCL:
        name = clmem__cl_error_name(code);
        unnamed = "OpenCL code ";
        break;
    case CLMEM_API_VULKAN:
        name = clmem__vk_result_name(code);
        unnamed = "Vulkan code ";
        break;
    case CLMEM_API_SYSTEM:
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
        name = strerrorname_np(code);
#endif
        unnamed = named = "errno ";
        break;
    case CLMEM_API_NONE: break;
    }
    if (name)
        snprintf(out, size, "%s (%s%d)", name, named, (int)code);
    else
        snprintf(out, size, "%s%d", unnamed, (int)code);
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

/* Does the sentence begin with an ordinary capitalised word ("The",
 * "A", "Nobody")? After "clmem_x: " it reads on in lower case. A name keeps
 * its case: one in capitals or mixed case ("OpenCL", "VkDevice",
 * "CL_MEM_READ_ONLY", "FFmpeg") fails the test by itself, and the proper
 * nouns that look like ordinary words are listed. */
static bool starts_with_common_word(const char *s)
{
    static const char *const names[] = {"Vulkan", "Linux", "Debian", "Mesa"};
    size_t n = 1;

    if (!isupper((unsigned char)s[0]))
        return false;
    while (isalpha((unsigned char)s[n])) {
        if (!islower((unsigned char)s[n]))
            return false;
        n++;
    }
    if (s[n] == '_' || isdigit((unsigned char)s[n]))
        return false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == n && strncmp(s, names[i], n) == 0)
            return false;
    return n > 1 || s[0] == 'A';
}

CLMEM_EXPORT clmem_status clmem__error_in(const char *function, clmem_status status)
{
    struct last_error *e = &last_error;
    char named[sizeof e->message];
    size_t len;

    if (status == CLMEM_OK || !function)
        return status;
    /* A failure that recorded nothing (a path that returns a status its
     * callee set without a sentence) still gets one: the status's own. */
    if (e->status != status || !e->message[0])
        clmem__fail(status, "%s", clmem_status_str(status));
    len = strnlen(function, 160);
    if (strncmp(e->message, function, len) == 0 && e->message[len] == ':' && e->message[len + 1] == ' ')
        return status;
    /* The name goes first; the sentence is cut at the end if it must be. */
    snprintf(named, sizeof named, "%.160s: %.*s", function, (int)(sizeof named - len - 3), e->message);
    if (starts_with_common_word(named + len + 2))
        named[len + 2] = (char)tolower((unsigned char)named[len + 2]);
    memcpy(e->message, named, sizeof e->message);
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
