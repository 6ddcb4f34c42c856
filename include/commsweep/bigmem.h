/* Whole-job arrays (transaction records, the plan's injects, the engines' flit and transaction
 * pools) run to tens or hundreds of MB and are walked all over within a step.  On 4 KiB pages
 * nearly every such access misses the TLB and every page costs a fault on first touch; asking
 * the kernel to back them with 2 MiB transparent huge pages removes most of both (the 16 MiB
 * DCIN AllReduce: 32 k page faults -> 7 k).  It is advice only: where the system has no huge
 * pages, or the array is small, these are plain malloc/realloc, and the contents are the same.
 * Free the blocks with free().
 */
#ifndef COMMSWEEP_BIGMEM_H
#define COMMSWEEP_BIGMEM_H

#include <stddef.h>

/* calloc(n, size) with the advice given before the first touch; NULL on overflow or no memory. */
void *cs_big_calloc(size_t n, size_t size);

/* realloc(p, size) with the advice on the block's whole-huge-page interior. */
void *cs_big_realloc(void *p, size_t size);

#endif
