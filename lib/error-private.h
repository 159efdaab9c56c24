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

/* The library's own check failed: status and a sentence, no native call.
 * Returns status, so that a caller can `return clmem__fail(...)`. Write the
 * sentence as it reads after "clmem_thing_do: ". */
#define clmem__fail(status, ...) clmem_error_set((status), CLMEM_API_NONE, NULL, 0, __VA_ARGS__)

/* The public call `function` is returning `status`. When status is not
 * CLMEM_OK, the recorded message is made to begin with "function: " (once:
 * a message that already begins so is left alone; a nested public call's
 * message keeps its own name after the outer one). Returns status. Only on
 * failure does it touch the record: a call that succeeds pays one compare. */
clmem_status clmem__error_in(const char *function, clmem_status status);
#endif
