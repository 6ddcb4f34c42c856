/* Canonical JSON: object keys sorted bytewise, no whitespace, integral numbers printed as
 * integers and others with 17 significant digits, strings escaped minimally.  Two documents that
 * mean the same thing give the same bytes, whatever their key order or formatting.  Only a
 * document that passes cs_json_strict (no repeated key, no number out of a double's range) has
 * one meaning; the loaders reject any other before a canonical form is taken. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"

typedef struct out_buf {
  char *buf;
  size_t cap, len; /* len counts every byte wanted, even past cap */
} out_buf;

static void put(out_buf *o, const char *s, size_t n) {
  if (o->len < o->cap) {
    size_t room = o->cap - o->len - 1;
    memcpy(o->buf + o->len, s, n < room ? n : room);
  }
  o->len += n;
}

static void put_str(out_buf *o, const char *s) {
  put(o, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    const unsigned char *run = p; /* characters that need no escape go out as one run */
    while (*p && *p != '"' && *p != '\\' && *p >= 0x20) p++;
    if (p > run) put(o, (const char *)run, (size_t)(p - run));
    if (!*p) break;
    char esc[8];
    if (*p == '"' || *p == '\\') {
      esc[0] = '\\';
      esc[1] = (char)*p;
      put(o, esc, 2);
    } else {
      snprintf(esc, sizeof esc, "\\u%04x", *p);
      put(o, esc, 6);
    }
  }
  put(o, "\"", 1);
}

static int cmp_keys(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* An integral double below 2^53 in magnitude as "%.0f" prints it ("-0" included) into num. */
static void put_integer(char num[40], double d) {
  char digits[24];
  int n = 0;
  uint64_t u = (uint64_t)fabs(d);
  do {
    digits[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  int k = 0;
  if (signbit(d)) num[k++] = '-';
  while (n) num[k++] = digits[--n];
  num[k] = '\0';
}

static void put_value(out_buf *o, const cJSON *v) {
  char num[40];
  if (cJSON_IsObject(v)) {
    size_t n = 0;
    for (const cJSON *c = v->child; c; c = c->next) n++;
    const cJSON **kids = n ? malloc(n * sizeof *kids) : NULL;
    size_t i = 0;
    for (const cJSON *c = v->child; c && kids; c = c->next) kids[i++] = c;
    if (kids) qsort(kids, n, sizeof *kids, cmp_keys);
    put(o, "{", 1);
    for (i = 0; kids && i < n; i++) {
      if (i) put(o, ",", 1);
      put_str(o, kids[i]->string);
      put(o, ":", 1);
      put_value(o, kids[i]);
    }
    put(o, "}", 1);
    free(kids);
  } else if (cJSON_IsArray(v)) {
    put(o, "[", 1);
    for (const cJSON *c = v->child; c; c = c->next) {
      if (c != v->child) put(o, ",", 1);
      put_value(o, c);
    }
    put(o, "]", 1);
  } else if (cJSON_IsString(v)) {
    put_str(o, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    /* Never "inf" or "nan", which are not JSON and would not parse back. */
    if (isnan(d))
      snprintf(num, sizeof num, "null");
    else if (isinf(d))
      snprintf(num, sizeof num, "%s", d > 0 ? "1e999" : "-1e999");
    else if (d == floor(d) && fabs(d) < 9007199254740992.0)
      put_integer(num, d); /* what "%.0f" prints, without printf's cost on the hot path */
    else
      snprintf(num, sizeof num, "%.17g", d);
    put(o, num, strlen(num));
  } else if (cJSON_IsBool(v)) {
    put(o, cJSON_IsTrue(v) ? "true" : "false", cJSON_IsTrue(v) ? 4 : 5);
  } else {
    put(o, "null", 4);
  }
}

size_t cs_json_canonical(const cJSON *value, char *buf, size_t cap) {
  out_buf o = {buf, cap, 0};
  put_value(&o, value);
  if (cap) buf[o.len < cap ? o.len : cap - 1] = '\0';
  return o.len;
}

/* Appends ".key" or "[i]" to the path for a message; a path that does not fit is cut. */
static void child_path(char *out, size_t cap, const char *path, const cJSON *child, int index) {
  if (child->string)
    snprintf(out, cap, "%s%s%s", path, path[0] ? "." : "", child->string);
  else
    snprintf(out, cap, "%s[%d]", path, index);
}

int cs_json_strict(const cJSON *value, const char *path, cs_err *err) {
  if (cJSON_IsNumber(value) && !isfinite(value->valuedouble))
    return cs_err_set(err, CS_EINVAL,
                      "field '%s': the number is out of the range of a double (%g), only finite "
                      "numbers are accepted",
                      path[0] ? path : "(top level)", value->valuedouble);
  if (!cJSON_IsObject(value) && !cJSON_IsArray(value)) return CS_OK;
  int index = 0;
  for (const cJSON *c = value->child; c; c = c->next, index++) {
    char sub[256];
    child_path(sub, sizeof sub, path, c, index);
    if (cJSON_IsObject(value))
      for (const cJSON *later = c->next; later; later = later->next)
        if (strcmp(later->string, c->string) == 0)
          return cs_err_set(err, CS_EINVAL, "field '%s' appears twice", sub);
    int rc = cs_json_strict(c, sub, err);
    if (rc) return rc;
  }
  return CS_OK;
}
