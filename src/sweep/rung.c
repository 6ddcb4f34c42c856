/* The cheap rung of a refinement: the same matrix, job for job in the same order, with the
 * engine replaced by the calibration's.  Matrix index i of both rungs is one design, which is
 * what lets a refinement pair a cheap row with its expensive row. */
#include <stdio.h>
#include <string.h>

#include "commsweep/config.h"
#include "sweep_int.h"

/* "engine.name" or "engine.<cheap>..." would undo the replacement. */
static int check_axes(const cJSON *doc, const char *cheap, const char *path, cs_err *err) {
  char own[64];
  snprintf(own, sizeof own, "engine.%s", cheap);
  size_t i = 0, len = strlen(own);
  for (const cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, "matrix")->child; a; a = a->next, i++) {
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(a, "field");
    const cJSON *many = cJSON_GetObjectItemCaseSensitive(a, "fields");
    for (const cJSON *f = one ? one : many ? many->child : NULL; f; f = one ? NULL : f->next) {
      const char *p = f->valuestring;
      if (!strcmp(p, "engine.name"))
        return cs_err_set(err, CS_EINVAL, "sweep file '%s': matrix[%zu]: a refinement runs the "
                          "matrix on two engines, so no axis may set 'engine.name'", path, i);
      if (!strncmp(p, own, len) && (p[len] == '.' || !p[len]))
        return cs_err_set(err, CS_EINVAL, "sweep file '%s': matrix[%zu]: '%s' sets an option of "
                          "the cheap engine, which the calibration fixes", path, i, p);
    }
  }
  return CS_OK;
}

int cs_sweep_cheap_doc(const char *path, const cJSON *engine, cJSON **out, cs_err *err) {
  *out = NULL;
  cJSON *doc = NULL;
  if (cs_config_parse_file(path, &doc, err)) return cs_err_prefix(err, "sweep file");
  cs_sweep_def def; /* checks the file as a sweep would */
  if (cs_sweep_def_parse(doc, path, &def, err)) return err->code;
  doc = def.doc;
  def.doc = NULL;
  cs_sweep_def_free(&def);
  const char *cheap = cJSON_GetObjectItemCaseSensitive(engine, "name")->valuestring;
  int rc = check_axes(doc, cheap, path, err);
  cJSON *base = cJSON_GetObjectItemCaseSensitive(doc, "base");
  cJSON *mine = rc ? NULL : cJSON_Duplicate(engine, true);
  if (!rc && !mine) rc = cs_err_set(err, CS_ENOMEM, "out of memory");
  const cJSON *theirs = cJSON_GetObjectItemCaseSensitive(base, "engine");
  for (const cJSON *it = theirs->child; !rc && it; it = it->next) {
    if (cJSON_GetObjectItemCaseSensitive(mine, it->string) || !strcmp(it->string, cheap)) continue;
    cJSON *c = cJSON_Duplicate(it, true);
    if (!c) rc = cs_err_set(err, CS_ENOMEM, "out of memory");
    else cJSON_AddItemToObject(mine, it->string, c);
  }
  if (!rc) {
    cJSON_ReplaceItemInObjectCaseSensitive(base, "engine", mine);
    mine = NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "pareto");
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "refine");
    *out = doc;
    doc = NULL;
  }
  cJSON_Delete(mine);
  cJSON_Delete(doc);
  return rc;
}
