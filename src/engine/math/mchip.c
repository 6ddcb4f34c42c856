/* The chip as the math model sees it: node positions and XY (or YX) routes on each die, the
 * capacities of the resources data crosses, and the token-bucket bursts of the D2D interfaces.
 * Everything here is read from the die and layout files and the adapter; nothing is fitted
 * but the ring lane's usable share and the buckets' fill at a step's start. */
#include <stdlib.h>
#include <string.h>

#include "math_int.h"

int mchip_init(mchip *c, const cs_adapter_config *ad, const cs_math_params *p, cs_err *err) {
  memset(c, 0, sizeof *c);
  int rc = cs_topo_die(ad->topology, &c->die, err);
  if (!rc) rc = cs_topo_layout(ad->dcin_layout, &c->lay, err);
  if (rc) return rc;
  c->per_die = c->die.rows * c->die.cols;
  c->dies = c->lay.num_dies;
  c->endpoints = cs_scheme_endpoints(&c->die, c->dies);
  c->f_noc = ad->noc_frequency_ghz;
  c->f_ip = ad->ip_frequency_ghz;
  c->flit_bytes = ad->bw_bytes;
  /* a hop: the link's slices and the node's cross-point slices, one slice per NoC cycle */
  c->hop_h = c->die.slice_per_link_h + c->die.cp_slice_count;
  c->hop_v = c->die.slice_per_link_v + c->die.cp_slice_count;
  int nodes = c->dies * c->per_die;
  c->base_ddr = 2 * c->endpoints;
  c->base_ring = c->base_ddr + 2 * c->endpoints;
  c->base_axi = c->base_ring + 4 * nodes;
  c->base_sn = c->base_axi + 2 * c->lay.num_links;
  c->base_rn = c->base_sn + nodes;
  c->n_res = c->base_rn + nodes;
  c->cap = calloc((size_t)c->n_res, sizeof *c->cap);
  c->burst = calloc((size_t)c->n_res, sizeof *c->burst);
  if (!c->cap || !c->burst) {
    mchip_free(c);
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  }
  /* an IP moves at most one flit per IP cycle, whatever its bandwidth limit */
  double ip_bw = c->flit_bytes * c->f_ip;
  double gdma = c->die.gdma_bw_limit_gb_per_s < ip_bw ? c->die.gdma_bw_limit_gb_per_s : ip_bw;
  double ddr = c->die.ddr_bw_limit_gb_per_s < ip_bw ? c->die.ddr_bw_limit_gb_per_s : ip_bw;
  for (int i = 0; i < 2 * c->endpoints; i++) {
    c->cap[i] = gdma;
    c->cap[c->base_ddr + i] = ddr;
  }
  double lane = c->flit_bytes * c->f_noc * p->ring_efficiency; /* a flit per slice per cycle */
  for (int i = 0; i < 4 * nodes; i++) c->cap[c->base_ring + i] = lane;
  /* D2D token buckets hold as many flits as their GB/s figure (docs/dcin-model.md) */
  for (int i = 0; i < 2 * c->lay.num_links; i++) {
    c->cap[c->base_axi + i] = c->lay.axi_bw_gb_per_s;
    c->burst[c->base_axi + i] = c->lay.axi_bw_gb_per_s * c->flit_bytes * p->bucket_fraction;
  }
  for (int i = 0; i < nodes; i++) {
    c->cap[c->base_sn + i] = c->lay.d2d_sn_bw_gb_per_s;
    c->burst[c->base_sn + i] = c->lay.d2d_sn_bw_gb_per_s * c->flit_bytes * p->bucket_fraction;
    c->cap[c->base_rn + i] = c->lay.d2d_rn_bw_gb_per_s;
    c->burst[c->base_rn + i] = c->lay.d2d_rn_bw_gb_per_s * c->flit_bytes * p->bucket_fraction;
  }
  return CS_OK;
}

void mchip_free(mchip *c) {
  free(c->cap);
  free(c->burst);
  c->cap = c->burst = NULL;
}

static int ring_link(const mchip *c, int die, int row, int col, int dir) {
  return c->base_ring + 4 * (die * c->per_die + row * c->die.cols + col) + dir;
}

/* The horizontal leg along row `row` from column c0 to c1, then (or first, for YX) the vertical
 * leg along column `col` from row r0 to r1. */
static void leg_h(const mchip *c, int die, int row, int c0, int c1, int *res, size_t *n) {
  int step = c1 > c0 ? 1 : -1, dir = c1 > c0 ? MCHIP_EAST : MCHIP_WEST;
  for (int col = c0; col != c1; col += step) res[(*n)++] = ring_link(c, die, row, col, dir);
}

static void leg_v(const mchip *c, int die, int col, int r0, int r1, int *res, size_t *n) {
  int step = r1 > r0 ? 1 : -1, dir = r1 > r0 ? MCHIP_SOUTH : MCHIP_NORTH;
  for (int row = r0; row != r1; row += step) res[(*n)++] = ring_link(c, die, row, col, dir);
}

double mchip_path(const mchip *c, const cs_math_params *p, int die, int a, int b, int *res,
                  size_t *n) {
  int cols = c->die.cols;
  int r0 = a / cols, c0 = a % cols, r1 = b / cols, c1 = b % cols;
  int dh = c1 > c0 ? c1 - c0 : c0 - c1, dv = r1 > r0 ? r1 - r0 : r0 - r1;
  if (res) {
    if (c->die.routing_yx) {
      leg_v(c, die, c0, r0, r1, res, n);
      leg_h(c, die, r1, c0, c1, res, n);
    } else {
      leg_h(c, die, r0, c0, c1, res, n);
      leg_v(c, die, c1, r0, r1, res, n);
    }
  }
  return dh * c->hop_h + dv * c->hop_v + (dh && dv ? p->turn_cycles : 0.0);
}
