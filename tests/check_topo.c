/* Shipped topology files: every die and layout loads, values match the model page's defaults,
 * the endpoint scheme maps ids to (die, node), and malformed files are refused by field. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/topo.h"
#include "test_support.h"
#include "topo/topo_int.h"

extern const cs_topo_file cs_topo_files[]; /* the shipped table (generated) */

START_TEST(shipped_dies_should_load_with_model_defaults) {
  cs_die_params d;
  cs_err err;
  ck_assert_int_eq(cs_topo_die("5x4", &d, &err), CS_OK);
  ck_assert_int_eq(d.rows, 5);
  ck_assert_int_eq(d.cols, 4);
  ck_assert_int_eq(d.slice_per_link_h, 7);
  ck_assert_double_eq(d.ddr_r_latency_ns, 40);
  ck_assert(!d.etag_t1_enabled);
  ck_assert_int_eq(d.tl_etag_t2, 15);
  ck_assert_int_eq(d.tr_etag_t2, 16);
  ck_assert(!d.routing_yx);
  ck_assert_int_eq(cs_topo_die("2261_5x4", &d, &err), CS_OK);
  ck_assert_int_eq(d.slice_per_link_v, 9);
  ck_assert_double_eq(d.ddr_r_latency_ns, 150);
  ck_assert(d.etag_t1_enabled);
  ck_assert_int_eq(d.tl_etag_t2, 8);
  ck_assert_int_eq(d.td_etag_t2, 12);
}
END_TEST

START_TEST(shipped_layouts_should_load) {
  cs_layout l;
  cs_err err;
  ck_assert_int_eq(cs_topo_layout("1die", &l, &err), CS_OK);
  ck_assert_int_eq(l.num_dies, 1);
  ck_assert_int_eq(l.num_links, 0);
  ck_assert_int_eq(cs_topo_layout("2die", &l, &err), CS_OK);
  ck_assert_int_eq(l.num_links, 4);
  ck_assert_int_eq(l.links[0].node_a, 0);
  ck_assert_int_eq(l.links[0].node_b, 3);
  ck_assert_int_eq(l.select, CS_D2D_SELECT_BY_DDR_INDEX);
  ck_assert_int_eq(l.d2d_sn_wdb_size, 512);
  ck_assert_int_eq(cs_topo_layout("2die_spread", &l, &err), CS_OK);
  ck_assert_int_eq(l.select, CS_D2D_SELECT_SPREAD);
  ck_assert_int_eq(cs_topo_layout("4die", &l, &err), CS_OK);
  ck_assert_int_eq(l.num_dies, 4);
  ck_assert_int_eq(l.num_links, 12);
  ck_assert_int_eq(l.d2d_rn_rdb_size, 256);
  /* every die pair has two links */
  for (int a = 0; a < 4; a++)
    for (int b = a + 1; b < 4; b++) {
      int n = 0;
      for (int i = 0; i < l.num_links; i++)
        n += (l.links[i].die_a == a && l.links[i].die_b == b) ||
             (l.links[i].die_a == b && l.links[i].die_b == a);
      ck_assert_int_eq(n, 2);
    }
}
END_TEST

START_TEST(unknown_names_should_list_the_shipped_ones) {
  cs_die_params d;
  cs_layout l;
  cs_err err;
  ck_assert_int_eq(cs_topo_die("6x6", &d, &err), CS_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(err.msg, "5x4"));
  ck_assert_ptr_null(strstr(err.msg, "2die")); /* layouts are not dies */
  ck_assert_int_eq(cs_topo_layout("5x4", &l, &err), CS_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(err.msg, "4die"));
  char names[256];
  cs_topo_layout_names(names, sizeof names);
  ck_assert_str_eq(names, "1die, 2die, 2die_spread, 4die");
}
END_TEST

START_TEST(scheme_should_map_ids_to_die_and_node) {
  cs_die_params d;
  cs_err err;
  ck_assert_int_eq(cs_topo_die("5x4", &d, &err), CS_OK);
  ck_assert_int_eq(cs_scheme_endpoints(&d, 4), 80);
  cs_endpoint e = cs_scheme_locate(&d, 0);
  ck_assert_int_eq(e.die, 0);
  ck_assert_int_eq(e.node, 0);
  e = cs_scheme_locate(&d, 39);
  ck_assert_int_eq(e.die, 1);
  ck_assert_int_eq(e.node, 19);
  e = cs_scheme_locate(&d, 45);
  ck_assert_int_eq(e.die, 2);
  ck_assert_int_eq(e.node, 5);
  ck_assert_int_eq(cs_topo_hops(&d, 0, 19), 7);
  ck_assert_int_eq(cs_topo_hops(&d, 5, 10), 2);
  ck_assert_int_eq(cs_topo_hops(&d, 3, 3), 0);
}
END_TEST

START_TEST(malformed_layouts_should_be_refused_by_field) {
  cs_layout l;
  cs_err err;
  const char *base =
      "{\"name\":\"x\",\"num_dies\":2,\"die_topologies\":[\"5x4\"],\"links\":%s,"
      "\"d2d_select\":\"%s\",\"ar_latency_ns\":20,\"r_latency_ns\":20,\"aw_latency_ns\":20,"
      "\"w_latency_ns\":20,\"b_latency_ns\":20,\"axi_bw_gb_per_s\":192,\"d2d_rn_bw_gb_per_s\":192,"
      "\"d2d_sn_bw_gb_per_s\":192,\"d2d_rn_rdb_size\":512,\"d2d_rn_wdb_size\":512,"
      "\"d2d_sn_rdb_size\":512,\"d2d_sn_wdb_size\":512}";
  char json[1024];
  snprintf(json, sizeof json, base, "[[0,0,1,3]]", "ddr_index");
  ck_assert_int_eq(cs_topo_layout_parse(json, "t", &l, &err), CS_OK);
  snprintf(json, sizeof json, base, "[[0,0,0,3]]", "ddr_index");
  ck_assert_int_eq(cs_topo_layout_parse(json, "t", &l, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "links[0]"));
  snprintf(json, sizeof json, base, "[[0,0,1]]", "ddr_index");
  ck_assert_int_eq(cs_topo_layout_parse(json, "t", &l, &err), CS_EINVAL);
  snprintf(json, sizeof json, base, "[[0,0,1,3]]", "random");
  ck_assert_int_eq(cs_topo_layout_parse(json, "t", &l, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "d2d_select"));
  ck_assert_int_eq(cs_topo_layout_parse("{", "t", &l, &err), CS_EPARSE);
}
END_TEST

/* The parse cache holds every file of its table, not only the first 64: 100 files under other
 * names (each the shipped 5x4 die, and one layout at the end) are all found, parsed. */
START_TEST(parse_cache_should_hold_every_file_however_many) {
  const char *die_json = NULL, *layout_json = NULL;
  for (int i = 0; cs_topo_files[i].name; i++) {
    if (!strcmp(cs_topo_files[i].name, "5x4")) die_json = cs_topo_files[i].json;
    if (!strcmp(cs_topo_files[i].name, "2die")) layout_json = cs_topo_files[i].json;
  }
  ck_assert_ptr_nonnull(die_json);
  ck_assert_ptr_nonnull(layout_json);
  enum { N = 100 };
  static char names[N][16];
  cs_topo_file table[N + 1];
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "f%03d", i);
    table[i] = (cs_topo_file){names[i], i == N - 1 ? layout_json : die_json};
  }
  table[N] = (cs_topo_file){NULL, NULL};
  cs_topo_cache cache;
  cs_err err;
  ck_assert_int_eq(cs_topo_cache_build(table, &cache, &err), CS_OK);
  ck_assert_uint_eq(cache.count, N);
  for (int i = 0; i < N - 1; i++) {
    const cs_topo_parsed *f = cs_topo_cache_find(&cache, names[i], false);
    ck_assert_msg(f != NULL, "file %d of %d not cached", i, N);
    ck_assert_int_eq(f->rc, CS_OK);
    ck_assert_int_eq(f->die.rows, 5);
  }
  const cs_topo_parsed *last = cs_topo_cache_find(&cache, names[N - 1], true);
  ck_assert_ptr_nonnull(last);
  ck_assert_int_eq(last->layout.num_dies, 2);
  ck_assert_ptr_null(cs_topo_cache_find(&cache, names[N - 1], false)); /* a layout, not a die */
  ck_assert_ptr_null(cs_topo_cache_find(&cache, "f100", false));
  cs_topo_cache_free(&cache);
}
END_TEST

int main(void) {
  Suite *s = suite_create("topo");
  TCase *tc = tcase_create("files");
  tcase_add_test(tc, shipped_dies_should_load_with_model_defaults);
  tcase_add_test(tc, shipped_layouts_should_load);
  tcase_add_test(tc, unknown_names_should_list_the_shipped_ones);
  tcase_add_test(tc, scheme_should_map_ids_to_die_and_node);
  tcase_add_test(tc, malformed_layouts_should_be_refused_by_field);
  tcase_add_test(tc, parse_cache_should_hold_every_file_however_many);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
