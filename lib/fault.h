/* Internal: the fault-injection seam. The shipped libraries are built
 * without CLMEM_FAULT_INJECTION and every FAULT() is the constant false.
 * The test-only library (t/libclmem-fault.la) is built from the same
 * sources with it, and t/fault-control.h lets a test make the n-th pass
 * through a named point fail. */
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
