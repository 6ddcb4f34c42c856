/* Huge-page advice for large arrays (include/commsweep/bigmem.h). */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "commsweep/bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2u << 20, ADVISE_FROM = 4u << 20 };

/* Advises the whole huge pages inside [p, p + bytes); pages already touched keep their size
 * until the kernel collapses them. */
static void advise(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (!p || bytes < ADVISE_FROM) return;
  uintptr_t begin = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  uintptr_t end = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
  if (end > begin) (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
#else
  (void)p, (void)bytes;
#endif
}

void *cs_big_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  size_t bytes = n * size;
  if (bytes < ADVISE_FROM) return calloc(n ? n : 1, size ? size : 1);
  /* malloc, advice, then zero: calloc may zero (and so touch) the pages before the advice */
  void *p = malloc(bytes);
  if (!p) return NULL;
  advise(p, bytes);
  return memset(p, 0, bytes);
}

void *cs_big_realloc(void *p, size_t size) {
  void *q = realloc(p, size);
  advise(q, size);
  return q;
}
