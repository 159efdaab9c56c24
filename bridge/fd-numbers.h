/* SPDX-License-Identifier: MIT */
/* fd numbers that NVIDIA's semaphore imports spoil for memory imports.
 *
 * On the H200 (NVIDIA 580), a memory fd imported into OpenCL at a number
 * that an imported semaphore's fd had before is never closed: the cl_mem
 * is released, its destructor callback runs, the context is released, and
 * the fd stays open, holding the memory. Raw calls, no library:
 * docs/probes/ring-fd-probe.c, kind "semfirst" (docs/driver-notes.md).
 * The driver closes a semaphore's fd during the import, so the next fd
 * the process opens (often the next memory export) takes its number.
 *
 * So the bridge notes the number of every semaphore fd it hands OpenCL,
 * and moves a memory fd that has such a number to one that never was
 * before handing it over. Semaphores imported into OpenCL by other code in
 * the process are not seen here. */
#ifndef CLMEM_BRIDGE_FD_NUMBERS_H
#define CLMEM_BRIDGE_FD_NUMBERS_H

/* Note fd's number: a semaphore fd about to be handed to OpenCL. */
void clmem__fd_number_note_semaphore(int fd);

/* The fd to hand OpenCL for memory: fd itself, or, where fd's number was a
 * semaphore's, a duplicate at a number that never was, fd then closed.
 * -1 with errno set where no duplicate could be made; fd is then untouched
 * and still the caller's. */
int clmem__fd_number_for_memory(int fd);

#endif
