/* SPDX-License-Identifier: MIT */
/* Internal: marks the definitions that form the public ABI. Everything else
 * is hidden (-fvisibility=hidden); the version script (clmem.sym) is the
 * second guard, and t/tree/exported-symbols checks that the two agree.
 *
 * Internal functions shared between files are named clmem__*: visibility
 * does not apply to the static archives, so even there every global name
 * the libraries define carries the project's prefix. */
#ifndef CLMEM_EXPORT_H
#define CLMEM_EXPORT_H
#if defined(__GNUC__)
#define CLMEM_EXPORT __attribute__((visibility("default")))
#else
#define CLMEM_EXPORT
#endif
#endif
