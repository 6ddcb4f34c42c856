/* The vcnet engine's options: one table drives strict JSON loading (every key required, unknown
 * keys rejected), the help text and serialisation. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "commsweep/vcnet.h"
#include "vcnet_int.h"

typedef enum { OPT_INT, OPT_DOUBLE, OPT_STRING } opt_type;

typedef struct opt_row {
  const char *key;
  opt_type type;
  size_t offset, size;
  double min, max;
  const char *meaning;
} opt_row;

#define INT_ROW(k, lo, hi, m) {#k, OPT_INT, offsetof(vcn_params, k), 0, lo, hi, m}
static const opt_row rows[] = {
    {"topology", OPT_STRING, offsetof(vcn_params, topology), sizeof(((vcn_params *)0)->topology), 0, 0,
     "\"torus:4x4x4\", \"mesh:8x8\": kind and radix per dimension (dimension 0 first)"},
    {"routing", OPT_STRING, offsetof(vcn_params, routing), sizeof(((vcn_params *)0)->routing), 0, 0,
     "dor | dor_dateline"},
    INT_ROW(endpoints_per_router, 1, VCN_MAX_EPR, "endpoints attached to each router"),
    INT_ROW(num_vcs, 1, VCN_MAX_VCS, "virtual channels per port"),
    INT_ROW(vc_depth, 1, 4096, "flits per VC buffer"),
    INT_ROW(rc_delay, 0, 64, "route computation, cycles"),
    INT_ROW(va_delay, 0, 64, "VC allocation, cycles"),
    INT_ROW(sa_delay, 0, 64, "switch allocation, cycles"),
    INT_ROW(st_delay, 0, 64, "switch traversal, cycles"),
    INT_ROW(link_latency, 1, 1024, "router-to-router link and credit latency, cycles"),
    INT_ROW(flit_bytes, 1, 65536, "bytes per network flit"),
    {"frequency_ghz", OPT_DOUBLE, offsetof(vcn_params, frequency_ghz), 0, 1e-6, 1e3, "network clock, GHz"},
};
#define NROWS (sizeof rows / sizeof rows[0])

int vcn_params_from_json(const void *json, const char *source, vcn_params *out, cs_err *err) {
  const cJSON *obj = json;
  if (!cJSON_IsObject(obj)) return cs_err_set(err, CS_EINVAL, "%s: expected an object", source);
  vcn_params p;
  memset(&p, 0, sizeof p);
  for (const cJSON *it = obj->child; it; it = it->next) {
    size_t i = 0;
    while (i < NROWS && strcmp(rows[i].key, it->string) != 0) i++;
    if (i == NROWS) {
      char keys[512];
      cs_vcnet_option_keys(keys, sizeof keys);
      return cs_err_set(err, CS_EINVAL, "%s: unknown field '%s' (valid: %s)", source, it->string, keys);
    }
  }
  for (size_t i = 0; i < NROWS; i++) {
    const opt_row *r = &rows[i];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, r->key);
    if (!v) return cs_err_set(err, CS_EINVAL, "%s: missing field '%s' (%s)", source, r->key, r->meaning);
    char *dst = (char *)&p + r->offset;
    if (r->type == OPT_STRING) {
      if (!cJSON_IsString(v) || strlen(v->valuestring) >= r->size)
        return cs_err_set(err, CS_EINVAL, "%s: field '%s': expected a string shorter than %zu characters",
                          source, r->key, r->size);
      memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
      continue;
    }
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= r->min && v->valuedouble <= r->max) ||
        (r->type == OPT_INT && v->valuedouble != floor(v->valuedouble)))
      return cs_err_set(err, CS_EINVAL, "%s: field '%s': expected %s in [%g, %g] (%s)", source, r->key,
                        r->type == OPT_INT ? "an integer" : "a number", r->min, r->max, r->meaning);
    if (r->type == OPT_INT) *(int *)dst = (int)v->valuedouble;
    else *(double *)dst = v->valuedouble;
  }
  vcn_topo t;
  int rc = vcn_topo_parse(p.topology, p.endpoints_per_router, &t, err);
  if (!rc && !vcn_routing_find(p.routing, &t, p.num_vcs, err)) rc = CS_EINVAL;
  if (!rc) rc = vcn_params_check(&p, err);
  if (rc) return cs_err_prefix(err, "%s", source);
  *out = p;
  return CS_OK;
}

void cs_vcnet_option_keys(char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NROWS && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", rows[i].key);
}

void cs_vcnet_print_options(FILE *f) {
  for (size_t i = 0; i < NROWS; i++)
    fprintf(f, "  %-22s %s\n", rows[i].key, rows[i].meaning);
}

void *vcn_params_to_json(const vcn_params *p) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  for (size_t i = 0; i < NROWS; i++) {
    const char *src = (const char *)p + rows[i].offset;
    if (rows[i].type == OPT_STRING) cJSON_AddStringToObject(o, rows[i].key, src);
    else if (rows[i].type == OPT_INT) cJSON_AddNumberToObject(o, rows[i].key, *(const int *)src);
    else cJSON_AddNumberToObject(o, rows[i].key, *(const double *)src);
  }
  return o;
}
