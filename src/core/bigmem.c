/* Huge-page advice for large arrays (include/commsweep/bigmem.h). */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE, malloc_usable_size */
#include "commsweep/bigmem.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2u << 20 };

/* A block of `bytes` starting on a huge-page boundary, advised before anything touches it, so
 * every whole huge page of it is backed by one (only the last partial one is not); NULL when
 * out of memory.  Small blocks are plain malloc. */
static void *big_alloc(size_t bytes) {
  if (bytes < HUGE_PAGE) return malloc(bytes ? bytes : 1);
  void *p = NULL;
  if (posix_memalign(&p, HUGE_PAGE, bytes)) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, bytes & ~(size_t)(HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
  return p;
}

void *cs_big_malloc(size_t bytes) { return big_alloc(bytes); }

void *cs_big_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  size_t bytes = n * size;
  if (bytes < HUGE_PAGE) return calloc(n ? n : 1, size ? size : 1);
  void *p = big_alloc(bytes);
  return p ? memset(p, 0, bytes) : NULL;
}

/* Growing past a huge page moves the block into a fresh advised one (as realloc would move it,
 * but realloc's moved pages would keep their small size). */
void *cs_big_realloc(void *p, size_t size) {
  if (size < HUGE_PAGE) return realloc(p, size);
  size_t had = p ? malloc_usable_size(p) : 0;
  if (had >= size) return p;
  void *q = big_alloc(size);
  if (!q) return NULL;
  if (p) memcpy(q, p, had);
  free(p);
  return q;
}
