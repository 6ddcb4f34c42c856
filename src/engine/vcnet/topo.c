/* Mesh and torus topologies of 1 to 3 dimensions: parsing "torus:4x4x4", router ids and
 * coordinates (dimension 0 varies fastest), neighbours through link ports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcnet_int.h"

int vcn_topo_parse(const char *text, int epr, vcn_topo *out, cs_err *err) {
  vcn_topo t;
  memset(&t, 0, sizeof t);
  const char *dims;
  if (vtf_is_fattree(text)) {
    int rc = vtf_parse(text, 1, &t.ft, err);
    if (rc) return rc;
    if (t.ft.rows > VCN_MAX_LINKS || t.ft.cols > VCN_MAX_LINKS)
      return cs_err_set(err, CS_EINVAL, "topology '%s': at most %d leaves per row and column", text,
                        VCN_MAX_LINKS);
    if (epr < 1 || epr > VCN_MAX_EPR)
      return cs_err_set(err, CS_EINVAL, "endpoints_per_router %d must be in [1, %d]", epr, VCN_MAX_EPR);
    t.ft.epl = epr;
    t.fattree = true;
    t.ndims = 2;
    t.radix[0] = t.ft.cols, t.radix[1] = t.ft.rows, t.radix[2] = 1;
    t.routers = t.ft.leaves + t.ft.rows + t.ft.cols;
    t.links = t.ft.rows > t.ft.cols ? t.ft.rows : t.ft.cols;
    t.epr = epr;
    t.endpoints = t.ft.leaves * epr;
    t.ports = t.links + epr;
    *out = t;
    return CS_OK;
  }
  if (strncmp(text, "torus:", 6) == 0) {
    t.torus = true;
    dims = text + 6;
  } else if (strncmp(text, "mesh:", 5) == 0) {
    dims = text + 5;
  } else {
    return cs_err_set(err, CS_EINVAL,
                      "topology '%s': expected \"torus:KxK..\" or \"mesh:KxK..\" (1 to %d dimensions)",
                      text, VCN_MAX_DIMS);
  }
  const char *p = dims;
  t.routers = 1;
  while (*p) {
    if (t.ndims == VCN_MAX_DIMS)
      return cs_err_set(err, CS_EINVAL, "topology '%s': more than %d dimensions", text, VCN_MAX_DIMS);
    char *end;
    long k = strtol(p, &end, 10);
    if (end == p || k < 2 || k > VCN_MAX_RADIX)
      return cs_err_set(err, CS_EINVAL, "topology '%s': radix of dimension %d must be an integer in [2, %d]",
                        text, t.ndims, VCN_MAX_RADIX);
    t.radix[t.ndims++] = (int)k;
    t.routers *= (int)k;
    p = end;
    if (*p == 'x' && p[1]) p++;
    else if (*p)
      return cs_err_set(err, CS_EINVAL, "topology '%s': unexpected '%c' after a radix", text, *p);
  }
  if (t.ndims == 0) return cs_err_set(err, CS_EINVAL, "topology '%s': no dimensions", text);
  if (epr < 1 || epr > VCN_MAX_EPR)
    return cs_err_set(err, CS_EINVAL, "endpoints_per_router %d must be in [1, %d]", epr, VCN_MAX_EPR);
  for (int d = t.ndims; d < VCN_MAX_DIMS; d++) t.radix[d] = 1;
  t.epr = epr;
  t.endpoints = t.routers * epr;
  t.links = 2 * t.ndims;
  t.ports = t.links + epr;
  *out = t;
  return CS_OK;
}

void vcn_topo_coords(const vcn_topo *t, int router, int c[VCN_MAX_DIMS]) {
  for (int d = 0; d < VCN_MAX_DIMS; d++) {
    c[d] = router % t->radix[d];
    router /= t->radix[d];
  }
}

int vcn_topo_router(const vcn_topo *t, const int c[VCN_MAX_DIMS]) {
  int id = 0;
  for (int d = VCN_MAX_DIMS - 1; d >= 0; d--) id = id * t->radix[d] + c[d];
  return id;
}

/* Fat tree: the router on link port `port`, and the port there that leads back. */
static int ft_link(const vcn_topo *t, int router, int port, int *far_port) {
  const vtf_net *f = &t->ft;
  if (router < f->leaves) {
    int r = router / f->cols, c = router % f->cols;
    if (port > 1) return -1;
    *far_port = port ? r : c;
    return port ? vtf_col_switch(f, c) : vtf_row_switch(f, r);
  }
  if (router < f->leaves + f->rows) {
    if (port >= f->cols) return -1;
    *far_port = 0;
    return vtf_leaf(f, router - f->leaves, port);
  }
  if (port >= f->rows) return -1;
  *far_port = 1;
  return vtf_leaf(f, port, router - f->leaves - f->rows);
}

int vcn_topo_arrival_port(const vcn_topo *t, int router, int port) {
  int far = port;
  if (t->fattree) ft_link(t, router, port, &far);
  return far;
}

void vcn_topo_upstream(const vcn_topo *t, int router, int port, int *up_router, int *up_port) {
  if (t->fattree) {
    *up_router = ft_link(t, router, port, up_port);
    return;
  }
  *up_router = vcn_topo_neighbour(t, router, port ^ 1);
  *up_port = port;
}

int vcn_topo_faults(vcn_topo *t, const struct vcn_params *p, cs_err *err) {
  if (!t->fattree) {
    if (p->faults[0] || p->fault_count)
      return cs_err_set(err, CS_EINVAL, "faults and fault_count apply to fattree2d topologies only, not '%s'",
                        p->topology);
    return CS_OK;
  }
  vtf_clear(&t->ft);
  int rc = vtf_faults_parse(&t->ft, p->faults, err);
  if (!rc) rc = vtf_faults_random(&t->ft, p->fault_count, p->fault_seed, err);
  return rc;
}

int vcn_topo_neighbour(const vcn_topo *t, int router, int port) {
  if (t->fattree) {
    int far;
    return port < t->links ? ft_link(t, router, port, &far) : -1;
  }
  if (port >= 2 * t->ndims) return -1;
  int d = port / 2, dir = port % 2 ? -1 : 1;
  int c[VCN_MAX_DIMS];
  vcn_topo_coords(t, router, c);
  int k = t->radix[d], x = c[d] + dir;
  if (x < 0 || x >= k) {
    if (!t->torus) return -1;
    x = (x + k) % k;
  }
  c[d] = x;
  return vcn_topo_router(t, c);
}

void vcn_port_name(const vcn_topo *t, int port, char *buf, size_t cap) {
  static const char axis[] = "XYZ";
  if (t->fattree) {
    if (port < t->links) snprintf(buf, cap, "l%d", port);
    else snprintf(buf, cap, "ep%d", port - t->links);
    return;
  }
  if (port < 2 * t->ndims) snprintf(buf, cap, "%c%c", port % 2 ? '-' : '+', axis[port / 2]);
  else snprintf(buf, cap, "ep%d", port - 2 * t->ndims);
}

void vcn_coords_name(const vcn_topo *t, int router, char *buf, size_t cap) {
  if (t->fattree) {
    vtf_node_name(&t->ft, router, buf, (int)cap);
    return;
  }
  int c[VCN_MAX_DIMS];
  vcn_topo_coords(t, router, c);
  size_t used = (size_t)snprintf(buf, cap, "(");
  for (int d = 0; d < t->ndims && used < cap; d++)
    used += (size_t)snprintf(buf + used, cap - used, d ? ",%d" : "%d", c[d]);
  if (used < cap) snprintf(buf + used, cap - used, ")");
}
