/* SPDX-License-Identifier: MIT */
/* Internal, shared by the four libraries (never installed): how a failure
 * becomes the sentence clmem_error_message() returns.
 *
 * Every failing public call leaves a sentence that begins with its own
 * name, once: "clmem_bridge_import_vk: the range [0, 2097152) reaches
 * beyond the 1048576-byte allocation." The code that finds the fault does
 * not need to know which public call it serves: it records what went wrong
 * with clmem__fail() (the library's own check) or clmem_error_set() (a
 * native call failed, named with its code), and the public function names
 * itself on the way out:
 *
 *     CLMEM_EXPORT clmem_status clmem_thing_do(clmem_thing *t)
 *     {
 *         return clmem__error_in(__func__, thing_do(t));
 *     }
 *
 * clmem__error_in() is a private export of libclmem (lib/clmem-private.sym.in
 * says why it is versioned), so the other libraries share this one
 * implementation. */
#ifndef CLMEM_ERROR_PRIVATE_H
#define CLMEM_ERROR_PRIVATE_H
#include "clmem.h"

#include <stdint.h>
#include <stdio.h>

/* The library's own check failed: status and a sentence, no native call.
 * Returns status, so that a caller can `return clmem__fail(...)`. Write the
 * sentence as it reads after "clmem_thing_do: ". */
#define clmem__fail(status, ...) clmem_error_set((status), CLMEM_API_NONE, NULL, 0, __VA_ARGS__)

/* The commonest of those: an argument or a peer's message that breaks its
 * rule (CLMEM_ERR_INVALID_VALUE). */
#define clmem__invalid(...) clmem__fail(CLMEM_ERR_INVALID_VALUE, __VA_ARGS__)

/* An argument that may not be NULL is: "name is NULL." (CLMEM_ERR_NULL_POINTER). */
#define clmem__null_arg(name) clmem__fail(CLMEM_ERR_NULL_POINTER, "%s is NULL.", (name))

/* The public call `function` is returning `status`. When status is not
 * CLMEM_OK, the recorded message is made to begin with "function: " (once:
 * a message that already begins so is left alone; a nested public call's
 * message keeps its own name after the outer one). Returns status. Only on
 * failure does it touch the record: a call that succeeds pays one compare. */
clmem_status clmem__error_in(const char *function, clmem_status status);

/* clmem__error_in() for a public function that returns a pointer: NULL,
 * with the sentence its callee recorded made to begin with `function`.
 *
 *     return ka ? ka : clmem__null_in(__func__);
 */
static inline void *clmem__null_in(const char *function)
{
    clmem__error_in(function, clmem_error_status());
    return NULL;
}

/* A duration for a sentence, in the unit a caller would have written it:
 * "10 s", "200 ms", "50 us", "1500 ns"; "no limit" for UINT64_MAX (a
 * timeout that never runs out). Used in the printf arguments,
 *     clmem__fail(CLMEM_ERR_TIMEOUT, "nothing came within %s.", clmem__duration(timeout_ns).text);
 * the text lives until the end of the full expression. */
struct clmem__duration_text {
    char text[32];
};

static inline struct clmem__duration_text clmem__duration(uint64_t ns)
{
    struct clmem__duration_text d;
    if (ns == UINT64_MAX)
        snprintf(d.text, sizeof d.text, "no limit");
    else if (ns >= UINT64_C(1000000000) && ns % UINT64_C(1000000000) == 0)
        snprintf(d.text, sizeof d.text, "%llu s", (unsigned long long)(ns / UINT64_C(1000000000)));
    else if (ns >= UINT64_C(1000000) && ns % UINT64_C(1000000) == 0)
        snprintf(d.text, sizeof d.text, "%llu ms", (unsigned long long)(ns / UINT64_C(1000000)));
    else if (ns >= UINT64_C(1000) && ns % UINT64_C(1000) == 0)
        snprintf(d.text, sizeof d.text, "%llu us", (unsigned long long)(ns / UINT64_C(1000)));
    else
        snprintf(d.text, sizeof d.text, "%llu ns", (unsigned long long)ns);
    return d;
}
#endif
