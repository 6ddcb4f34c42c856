/* Whole-job arrays (transaction records, the plan's injects, the engines' flit and transaction
 * pools, recorded steps) run to megabytes and are walked all over within a step.  On 4 KiB
 * pages nearly every such access misses the TLB and every page costs a fault on first touch.
 * From 2 MiB on these blocks start on a huge-page boundary and are advised to the kernel as
 * transparent huge pages before anything touches them, which removes most of both (the 16 MiB
 * DCIN AllReduce: 32 k page faults -> 5.5 k).  Advice only: where the system gives no huge
 * pages the blocks behave as malloc's, and the contents are always the same.  Free them with
 * free().
 */
#ifndef COMMSWEEP_BIGMEM_H
#define COMMSWEEP_BIGMEM_H

#include <stddef.h>

/* malloc(bytes): from 2 MiB on, aligned to a huge page and advised before the first touch. */
void *cs_big_malloc(size_t bytes);

/* calloc(n, size) likewise; NULL on overflow or no memory. */
void *cs_big_calloc(size_t n, size_t size);

/* realloc(p, size); growing to 2 MiB or more moves the block into a fresh advised one (grow
 * geometrically: every such growth copies). */
void *cs_big_realloc(void *p, size_t size);

#endif
