/* The sweep file's "pareto" and "refine" sections and the calibration file a refinement reads
 * (docs/pareto.md).  Checked as strictly as the rest of the file: a fault names the section,
 * the field, the value and the rule.  A plain sweep checks both sections but reads no
 * calibration file; only a refinement does. */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/config.h"
#include "commsweep/engine.h"
#include "sweep_int.h"

#define BAND_MAX 10.0 /* a relative error of 1000%: beyond it a cheap rung says nothing */

static int only(const cJSON *obj, const char *const *keys, const char *where, const char *valid,
                cs_err *err) {
  for (const cJSON *it = obj->child; it; it = it->next) {
    bool ok = false;
    for (const char *const *k = keys; *k && !ok; k++) ok = !strcmp(*k, it->string);
    if (!ok)
      return cs_err_set(err, CS_EINVAL, "%s: unknown key '%s' (valid: %s)", where, it->string,
                        valid);
  }
  return CS_OK;
}

static int band_value(const cJSON *v, const char *where, double *out, cs_err *err) {
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > BAND_MAX)
    return cs_err_set(err, CS_EINVAL, "%s: expected a relative error from 0 to %g (0.05 is 5%%)",
                      where, BAND_MAX);
  *out = v->valuedouble;
  return CS_OK;
}

/* A number (every primitive) or {"allreduce": 0.04, ...} (those named). */
static int parse_band(const cJSON *v, const char *where, double *band, cs_err *err) {
  for (int p = 0; p < CS_PRIM_COUNT; p++) band[p] = -1;
  if (cJSON_IsNumber(v)) {
    double b = 0;
    if (band_value(v, where, &b, err)) return err->code;
    for (int p = 0; p < CS_PRIM_COUNT; p++) band[p] = b;
    return CS_OK;
  }
  if (!cJSON_IsObject(v) || !v->child)
    return cs_err_set(err, CS_EINVAL, "%s: expected a number or an object of numbers by "
                      "primitive", where);
  for (const cJSON *it = v->child; it; it = it->next) {
    cs_primitive p;
    char at[256];
    snprintf(at, sizeof at, "%s.%s", where, it->string);
    if (cs_primitive_parse(it->string, &p))
      return cs_err_set(err, CS_EINVAL, "%s: unknown primitive '%s' (allreduce, allgather, "
                        "reducescatter, alltoall, p2p)", where, it->string);
    if (band_value(it, at, &band[p], err)) return err->code;
  }
  return CS_OK;
}

static int check_engine(const cJSON *engine, const char *where, cs_err *err) {
  cs_engine_options opts;
  if (!cJSON_IsObject(engine))
    return cs_err_set(err, CS_EINVAL, "%s: expected an engine section {\"name\": ...}", where);
  return cs_engine_options_from_json(engine, where, &opts, err);
}

/* engine and band of a calibration file into r (a calibration's fit is informational). */
static int load_calibration(const char *path, cs_sweep_refine_spec *r, cs_err *err) {
  static const char *const keys[] = {"engine", "band", "fit", "description", NULL};
  cJSON *doc = NULL;
  char where[PATH_MAX + 32];
  snprintf(where, sizeof where, "calibration '%s'", path);
  if (cs_config_parse_file(path, &doc, err)) return cs_err_prefix(err, "calibration");
  const cJSON *engine = cJSON_GetObjectItemCaseSensitive(doc, "engine");
  const cJSON *band = cJSON_GetObjectItemCaseSensitive(doc, "band");
  int rc = cJSON_IsObject(doc) ? only(doc, keys, where, "engine, band, fit, description", err)
                               : cs_err_set(err, CS_EINVAL, "%s: expected an object", where);
  if (!rc && (!engine || !band))
    rc = cs_err_set(err, CS_EINVAL, "%s: missing '%s'", where, engine ? "band" : "engine");
  if (!rc) {
    char at[PATH_MAX + 64];
    snprintf(at, sizeof at, "%s: engine", where);
    rc = check_engine(engine, at, err);
    snprintf(at, sizeof at, "%s: band", where);
    if (!rc) rc = parse_band(band, at, r->band, err);
  }
  if (!rc && !(r->engine = cJSON_Duplicate(engine, true))) rc = cs_err_set(err, CS_ENOMEM, "out of memory");
  if (!rc) snprintf(r->source, sizeof r->source, "%.500s", where);
  cJSON_Delete(doc);
  return rc;
}

/* The refine section: its keys and types; with r, its values too (base_dir: the sweep file's
 * directory, for a relative calibration path). */
static int parse_refine(const cJSON *sec, const char *base_dir, cs_sweep_refine_spec *r, cs_err *err) {
  static const char *const keys[] = {"calibration", "engine", "band", "max_jobs", "max_rounds",
                                     "widen_band", NULL};
  if (!cJSON_IsObject(sec)) return cs_err_set(err, CS_EINVAL, "refine: expected an object");
  if (only(sec, keys, "refine", "calibration, engine, band, max_jobs, max_rounds, widen_band", err))
    return err->code;
  const cJSON *cal = cJSON_GetObjectItemCaseSensitive(sec, "calibration");
  const cJSON *engine = cJSON_GetObjectItemCaseSensitive(sec, "engine");
  const cJSON *band = cJSON_GetObjectItemCaseSensitive(sec, "band");
  const cJSON *max_jobs = cJSON_GetObjectItemCaseSensitive(sec, "max_jobs");
  const cJSON *max_rounds = cJSON_GetObjectItemCaseSensitive(sec, "max_rounds");
  const cJSON *widen = cJSON_GetObjectItemCaseSensitive(sec, "widen_band");
  if (cal && (engine || band))
    return cs_err_set(err, CS_EINVAL, "refine: give either 'calibration' (a file) or 'engine' "
                      "and 'band', not both");
  if (!cal && (!engine || !band))
    return cs_err_set(err, CS_EINVAL, "refine: give 'calibration' (a file) or both 'engine' "
                      "and 'band'");
  if (cal && (!cJSON_IsString(cal) || !cal->valuestring[0]))
    return cs_err_set(err, CS_EINVAL, "refine.calibration: expected a file name");
  double band_tmp[CS_PRIM_COUNT];
  if (engine && check_engine(engine, "refine.engine", err)) return err->code;
  if (band && parse_band(band, "refine.band", r ? r->band : band_tmp, err)) return err->code;
  if (max_jobs && (!cJSON_IsNumber(max_jobs) || max_jobs->valuedouble < 1 ||
                   max_jobs->valuedouble > CS_SWEEP_MAX_JOBS ||
                   max_jobs->valuedouble != (double)(uint64_t)max_jobs->valuedouble))
    return cs_err_set(err, CS_EINVAL, "refine.max_jobs: expected an integer from 1 to %u",
                      CS_SWEEP_MAX_JOBS);
  if (max_rounds && (!cJSON_IsNumber(max_rounds) || max_rounds->valuedouble < 1 ||
                     max_rounds->valuedouble > 1000 ||
                     max_rounds->valuedouble != (double)(int)max_rounds->valuedouble))
    return cs_err_set(err, CS_EINVAL, "refine.max_rounds: expected an integer from 1 to 1000");
  if (widen && !cJSON_IsBool(widen))
    return cs_err_set(err, CS_EINVAL, "refine.widen_band: expected true or false");
  if (!r) return CS_OK;
  r->max_jobs = max_jobs ? (uint64_t)max_jobs->valuedouble : 0;
  r->max_rounds = max_rounds ? (unsigned)max_rounds->valuedouble : CS_SWEEP_REFINE_ROUNDS;
  r->widen_band = widen ? cJSON_IsTrue(widen) : true;
  if (engine) {
    if (!(r->engine = cJSON_Duplicate(engine, true))) return cs_err_set(err, CS_ENOMEM, "out of memory");
    snprintf(r->source, sizeof r->source, "the refine section");
    return CS_OK;
  }
  char full[PATH_MAX];
  if (cal->valuestring[0] == '/' || !base_dir)
    snprintf(full, sizeof full, "%s", cal->valuestring);
  else if ((size_t)snprintf(full, sizeof full, "%s/%s", base_dir, cal->valuestring) >= sizeof full)
    return cs_err_set(err, CS_EINVAL, "refine.calibration: the path is too long");
  return load_calibration(full, r, err);
}

int cs_sweep_study_check(const cJSON *doc, cs_err *err) {
  const cJSON *pareto = cJSON_GetObjectItemCaseSensitive(doc, "pareto");
  const cJSON *refine = cJSON_GetObjectItemCaseSensitive(doc, "refine");
  cs_pareto_spec spec;
  if (pareto && cs_pareto_spec_from_json(pareto, "pareto", &spec, err)) return err->code;
  if (refine && parse_refine(refine, NULL, NULL, err)) return err->code;
  if (refine && !pareto)
    return cs_err_set(err, CS_EINVAL, "refine: a refinement needs a 'pareto' section (the "
                      "objectives whose front it refines)");
  return CS_OK;
}

int cs_sweep_study_read(const cJSON *doc, const char *path, const char *calibration,
                        cs_sweep_study *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  const cJSON *pareto = cJSON_GetObjectItemCaseSensitive(doc, "pareto");
  const cJSON *refine = cJSON_GetObjectItemCaseSensitive(doc, "refine");
  char dir_buf[PATH_MAX];
  snprintf(dir_buf, sizeof dir_buf, "%s", path);
  const char *dir = dirname(dir_buf);
  int rc = CS_OK;
  if ((out->has_pareto = pareto != NULL)) rc = cs_pareto_spec_from_json(pareto, "pareto", &out->pareto, err);
  out->refine.max_rounds = CS_SWEEP_REFINE_ROUNDS;
  out->refine.widen_band = true;
  if (!rc && refine && !calibration) rc = parse_refine(refine, dir, &out->refine, err);
  if (!rc && refine && calibration) { /* the section's limits, the command line's calibration */
    cJSON *limits = cJSON_Duplicate(refine, true);
    cJSON_DeleteItemFromObjectCaseSensitive(limits, "calibration");
    cJSON_DeleteItemFromObjectCaseSensitive(limits, "engine");
    cJSON_DeleteItemFromObjectCaseSensitive(limits, "band");
    cJSON_AddStringToObject(limits, "calibration", calibration);
    rc = limits ? parse_refine(limits, NULL, &out->refine, err)
                : cs_err_set(err, CS_ENOMEM, "out of memory");
    cJSON_Delete(limits);
  } else if (!rc && calibration) {
    rc = load_calibration(calibration, &out->refine, err);
  }
  out->has_refine = refine || calibration;
  if (rc) {
    cs_err_prefix(err, "sweep file '%s'", path);
    cs_sweep_study_free(out);
  }
  return rc;
}

void cs_sweep_study_free(cs_sweep_study *s) {
  if (!s) return;
  cJSON_Delete(s->refine.engine);
  memset(s, 0, sizeof *s);
}
