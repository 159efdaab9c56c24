/* SPDX-License-Identifier: MIT */
/* Test-only control of the fault-injection seam (lib/fault.h).
 *
 * Only t/lib/libclmem-fault.la has these functions: it is libclmem and
 * libclmem-bridge built from the same sources with -DCLMEM_FAULT_INJECTION,
 * plus t/lib/fault-control.c, which implements them. The shipped libraries have
 * no seam at all (every FAULT() there is the constant false;
 * t/tree/no-fault-seam.sh checks it).
 *
 * A point is named by the string its FAULT("...") passes. Every time the
 * library reaches a point it counts one pass; an armed point makes exactly
 * one pass fail: the nth after it was armed. All functions are thread-safe
 * (one mutex); points never reached do not need to be declared. The point
 * names passed here must have static storage (string literals): the table
 * keeps the pointer. */
#ifndef CLMEM_FAULT_CONTROL_H
#define CLMEM_FAULT_CONTROL_H

/* Make the nth pass (1-based, counted from now) through `point` fail, once.
 * Resets the point's pass count. nth <= 0 disarms it. Arming one point
 * leaves the others armed or not as they were. */
void clmem_fault_arm(const char *point, int nth);

/* How many times `point` was reached since it was last armed or since the
 * last clmem_fault_reset(); 0 for a point never seen. */
int clmem_fault_passes(const char *point);

/* How many armed faults fired (made a pass fail) since the last reset. */
int clmem_fault_fired(void);

/* Disarm everything and forget every pass count. */
void clmem_fault_reset(void);

/* The names of the points the library has reached since the program
 * started (a reset does not forget them): up to max of them into names, in
 * the order they were first reached; returns how many there are in all.
 * For a test to check that every point it meets has a case of its own. */
int clmem_fault_seen(const char **names, int max);
#endif
