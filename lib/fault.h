/* SPDX-License-Identifier: MIT */
/* Internal: the fault-injection seam. The shipped libraries are built
 * without CLMEM_FAULT_INJECTION and every FAULT() is the constant false.
 * The test-only library (t/lib/libclmem-fault.la) is built from the same
 * sources with it, and t/lib/fault-control.h lets a test make the n-th pass
 * through a named point fail. This header stays in lib/ because the
 * library sources include it; clmem_fault_hit() itself is defined next to
 * the tests, in t/lib/fault-control.c, which only t/lib/libclmem-fault.la links. */
#ifndef CLMEM_FAULT_H
#define CLMEM_FAULT_H
#include <stdbool.h>

#ifdef CLMEM_FAULT_INJECTION
bool clmem_fault_hit(const char *point);
#define FAULT(point) clmem_fault_hit(point)
#else
#define FAULT(point) false
#endif
#endif
