/* Each job's canonical JSON is held deflated against the base's canonical JSON (a preset
 * dictionary): jobs of one sweep differ from the base in a few values, so ~950 characters become
 * ~40 bytes, and rank 0 can hold the text of a million jobs until the structural step writes
 * their /jobs rows.  Raw deflate (no header or trailer): the text's length is kept beside it and
 * checked when it is inflated. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "commsweep/config.h"
#include "sweep_int.h"

char *cs_sweep_canonical_text(const cJSON *v) {
  char stack[8192];
  size_t n = cs_json_canonical(v, stack, sizeof stack);
  char *s = malloc(n + 1);
  if (!s) return NULL;
  if (n < sizeof stack) memcpy(s, stack, n + 1);
  else cs_json_canonical(v, s, n + 1);
  return s;
}

char *cs_sweep_base_json(const cs_sweep_def *def) {
  cJSON *doc = cJSON_CreateObject();
  for (int s = 0; doc && s < 3; s++) {
    cJSON *copy = cJSON_Duplicate(def->base[s], true);
    if (!copy) {
      cJSON_Delete(doc);
      return NULL;
    }
    cJSON_AddItemToObject(doc, cs_sweep_sections[s], copy);
  }
  char *text = doc ? cs_sweep_canonical_text(doc) : NULL;
  cJSON_Delete(doc);
  return text;
}

int cs_sweep_zip_init(cs_sweep_zip *zp, const char *dict) {
  memset(zp, 0, sizeof *zp);
  zp->dict = dict;
  zp->dict_len = strlen(dict);
  zp->stream = calloc(1, sizeof(z_stream));
  if (!zp->stream) return CS_ENOMEM;
  /* A 4 KiB window (base and job text together are ~2 KB) and a 1 KiB hash table: deflateReset
   * clears the tables once per job, and zlib's defaults (32 KiB, 128 KiB) made that clearing most
   * of the cost.  Inflation with the default window reads these streams. */
  if (deflateInit2((z_stream *)zp->stream, 1, Z_DEFLATED, -12, 2, Z_DEFAULT_STRATEGY) != Z_OK) {
    free(zp->stream);
    zp->stream = NULL;
    return CS_ENOMEM;
  }
  return CS_OK;
}

void cs_sweep_zip_end(cs_sweep_zip *zp) {
  if (zp->stream) deflateEnd((z_stream *)zp->stream);
  free(zp->stream);
  zp->stream = NULL;
}

int cs_sweep_zip_put(cs_sweep_zip *zp, const char *json, cs_sweep_job *j) {
  z_stream *z = zp->stream;
  size_t len = strlen(json);
  if (len > UINT32_MAX / 2) return CS_EINVAL;
  if (deflateReset(z) != Z_OK ||
      deflateSetDictionary(z, (const Bytef *)zp->dict, (uInt)zp->dict_len) != Z_OK)
    return CS_EINTERNAL;
  uLong cap = deflateBound(z, (uLong)len);
  unsigned char *out = malloc(cap);
  if (!out) return CS_ENOMEM;
  z->next_in = (Bytef *)(uintptr_t)json;
  z->avail_in = (uInt)len;
  z->next_out = out;
  z->avail_out = (uInt)cap;
  if (deflate(z, Z_FINISH) != Z_STREAM_END) {
    free(out);
    return CS_EINTERNAL;
  }
  unsigned char *fit = realloc(out, z->total_out ? z->total_out : 1);
  j->json_z = fit ? fit : out;
  j->json_z_len = (uint32_t)z->total_out;
  j->json_len = (uint32_t)len;
  return CS_OK;
}

char *cs_sweep_job_json(const cs_sweep *sw, const cs_sweep_job *j) {
  if (!j->json_z || !sw->base_json) return NULL;
  char *text = malloc((size_t)j->json_len + 1);
  z_stream z;
  memset(&z, 0, sizeof z);
  if (!text || inflateInit2(&z, -15) != Z_OK) {
    free(text);
    return NULL;
  }
  bool ok = inflateSetDictionary(&z, (const Bytef *)sw->base_json, (uInt)strlen(sw->base_json)) == Z_OK;
  z.next_in = j->json_z;
  z.avail_in = j->json_z_len;
  z.next_out = (Bytef *)text;
  z.avail_out = j->json_len;
  ok = ok && inflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out == j->json_len;
  inflateEnd(&z);
  if (!ok) {
    free(text);
    return NULL;
  }
  text[j->json_len] = '\0';
  return text;
}
