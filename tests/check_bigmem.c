/* Large-array allocation (include/commsweep/bigmem.h): the same contents as calloc / malloc /
 * realloc on either side of the huge-page size, huge-page alignment from it on, and overflow
 * refused. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/bigmem.h"

#define MIB ((size_t)1 << 20)

START_TEST(calloc_should_zero_small_and_large_blocks) {
  const size_t sizes[] = {1, 4096, 2 * MIB - 1, 2 * MIB, 5 * MIB + 3};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    unsigned char *p = cs_big_calloc(sizes[k], 1);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < sizes[k]; i += 4093) ck_assert_uint_eq(p[i], 0);
    ck_assert_uint_eq(p[sizes[k] - 1], 0);
    if (sizes[k] >= 2 * MIB) ck_assert_uint_eq((uintptr_t)p % (2 * MIB), 0);
    free(p);
  }
  ck_assert_ptr_null(cs_big_calloc(SIZE_MAX / 8 + 1, 16)); /* n * size overflows */
}
END_TEST

/* Growth across the huge-page size keeps every byte written before, as realloc does. */
START_TEST(realloc_should_keep_the_contents_while_growing_past_a_huge_page) {
  size_t n = 4096;
  uint32_t *a = cs_big_realloc(NULL, n * sizeof *a);
  ck_assert_ptr_nonnull(a);
  for (size_t i = 0; i < n; i++) a[i] = (uint32_t)(i * 2654435761u);
  for (int round = 0; round < 8; round++) { /* 16 KiB doubled up to 4 MiB */
    size_t m = n * 2;
    a = cs_big_realloc(a, m * sizeof *a);
    ck_assert_ptr_nonnull(a);
    size_t changed = 0; /* one assertion per round: a million in a sanitizer build are slow */
    for (size_t i = 0; i < n; i++) changed += a[i] != (uint32_t)(i * 2654435761u);
    ck_assert_uint_eq(changed, 0);
    for (size_t i = n; i < m; i++) a[i] = (uint32_t)(i * 2654435761u);
    n = m;
  }
  ck_assert_uint_ge(n * sizeof *a, 2 * MIB);
  ck_assert_uint_eq((uintptr_t)a % (2 * MIB), 0);
  free(a);
  unsigned char *b = cs_big_malloc(3 * MIB);
  ck_assert_ptr_nonnull(b);
  memset(b, 7, 3 * MIB);
  ck_assert_ptr_eq(cs_big_realloc(b, 2 * MIB), b); /* shrinking keeps the block */
  ck_assert_uint_eq(b[2 * MIB - 1], 7);
  free(b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("bigmem");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, calloc_should_zero_small_and_large_blocks);
  tcase_add_test(tc, realloc_should_keep_the_contents_while_growing_past_a_huge_page);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
