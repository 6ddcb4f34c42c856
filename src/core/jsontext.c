/* JSON text to a cJSON tree, with the checks cJSON leaves out.  cJSON refuses nesting deeper
 * than CJSON_NESTING_LIMIT with a bare syntax error, and turns every number into a double
 * without a word: 9007199254740993 reads as ...992 and 1e-400 as 0, so two texts would mean one
 * value.  Here the depth limit is named, and a literal a double cannot hold as written (an
 * integer above 2^53, a nonzero literal that underflows) is refused, quoted as written, with the
 * path of its field.  The literal walk runs over text cJSON has accepted, so it may assume valid
 * JSON. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core_int.h"

/* The line (1-based) of byte `at`. */
static int line_of(const char *text, size_t at) {
  int line = 1;
  for (size_t i = 0; i < at; i++) line += text[i] == '\n';
  return line;
}

/* Byte just past the string that opens at s[0] == '"' (or end). */
static const char *skip_string(const char *s, const char *end) {
  for (s++; s < end && *s != '"'; s++)
    if (*s == '\\' && s + 1 < end) s++;
  return s < end ? s + 1 : end;
}

/* The deepest nesting of arrays and objects, and where it first went past the limit. */
static size_t max_depth(const char *text, size_t len, size_t *over_at) {
  size_t depth = 0, deepest = 0;
  *over_at = len;
  for (const char *s = text, *end = text + len; s < end;) {
    if (*s == '"') {
      s = skip_string(s, end);
      continue;
    }
    if (*s == '[' || *s == '{') {
      if (++depth > deepest) deepest = depth;
      if (depth > CJSON_NESTING_LIMIT && *over_at == len) *over_at = (size_t)(s - text);
    } else if ((*s == ']' || *s == '}') && depth) {
      depth--;
    }
    s++;
  }
  return deepest;
}

typedef struct walk {
  const char *text, *p, *end;
  char path[256]; /* of the value being read; cut when deeper */
  cs_err *err;
} walk;

static void skip_ws(walk *w) {
  while (w->p < w->end && (*w->p == ' ' || *w->p == '\t' || *w->p == '\n' || *w->p == '\r')) w->p++;
}

/* Appends ".key" (key = the raw text of a string token) or "[i]" to the path at len. */
static void path_push(walk *w, size_t len, const char *key, size_t key_len, int index) {
  size_t cap = sizeof w->path - len;
  if (key)
    snprintf(w->path + len, cap, "%s%.*s", len ? "." : "", (int)key_len, key);
  else
    snprintf(w->path + len, cap, "[%d]", index);
}

/* A number literal the double it becomes does not hold as written: CS_EINVAL. */
static int check_number(walk *w, const char *lit, size_t n) {
  bool integral = true, nonzero = false;
  const char *mant_end = lit + n;
  for (const char *c = lit; c < lit + n; c++) {
    if (*c == '.' || *c == 'e' || *c == 'E') integral = false;
    if ((*c == 'e' || *c == 'E') && c < mant_end) mant_end = c;
  }
  for (const char *c = lit; c < mant_end; c++) nonzero |= *c >= '1' && *c <= '9';
  const char *field = w->path[0] ? w->path : "(top level)";
  if (integral) {
    const char *digits = lit + (lit[0] == '-');
    size_t nd = (size_t)(lit + n - digits);
    if (nd > 16 || (nd == 16 && strncmp(digits, "9007199254740992", 16) > 0))
      return cs_err_set(w->err, CS_EINVAL,
                        "field '%s': %.*s is above 2^53 = 9007199254740992, the largest integer "
                        "a JSON number holds exactly (it would read as %.17g)",
                        field, (int)n, lit, strtod(lit, NULL));
    return CS_OK;
  }
  char buf[128];
  if (!nonzero || n >= sizeof buf) return CS_OK;
  memcpy(buf, lit, n);
  buf[n] = '\0';
  errno = 0;
  double d = strtod(buf, NULL);
  if (d == 0 || (errno == ERANGE && fabs(d) < DBL_MIN))
    return cs_err_set(w->err, CS_EINVAL,
                      "field '%s': %s underflows: it is below the smallest normal double "
                      "(%.3g) and would read as %.17g",
                      field, buf, DBL_MIN, d);
  return CS_OK;
}

static int walk_value(walk *w) {
  skip_ws(w);
  if (w->p >= w->end) return CS_OK;
  size_t len = strlen(w->path);
  char c = *w->p;
  if (c == '{' || c == '[') {
    bool object = c == '{';
    w->p++;
    for (int index = 0;; index++) {
      skip_ws(w);
      if (w->p < w->end && (*w->p == '}' || *w->p == ']')) break;
      if (object) {
        const char *key = w->p, *after = skip_string(w->p, w->end);
        path_push(w, len, key + 1, after > key + 1 ? (size_t)(after - key - 2) : 0, 0);
        w->p = after;
        skip_ws(w);
        w->p++; /* ':' */
      } else {
        path_push(w, len, NULL, 0, index);
      }
      int rc = walk_value(w);
      w->path[len] = '\0';
      if (rc) return rc;
      skip_ws(w);
      if (w->p < w->end && *w->p == ',') w->p++;
      else break;
    }
    w->p++; /* '}' or ']' */
    return CS_OK;
  }
  if (c == '"') {
    w->p = skip_string(w->p, w->end);
    return CS_OK;
  }
  const char *lit = w->p;
  while (w->p < w->end && (strchr("+-.eE", *w->p) || (*w->p >= '0' && *w->p <= '9'))) w->p++;
  if (w->p > lit) return check_number(w, lit, (size_t)(w->p - lit));
  while (w->p < w->end && *w->p >= 'a' && *w->p <= 'z') w->p++; /* true, false, null */
  return CS_OK;
}

int cs_json_parse_text(const char *text, size_t len, cJSON **out, cs_err *err) {
  *out = NULL;
  size_t over_at;
  size_t deepest = max_depth(text, len, &over_at);
  if (deepest > CJSON_NESTING_LIMIT)
    return cs_err_set(err, CS_EPARSE,
                      "JSON nested %zu levels deep (arrays and objects inside each other; "
                      "level %d is passed at line %d, byte %zu): at most %d levels are read",
                      deepest, CJSON_NESTING_LIMIT + 1, line_of(text, over_at), over_at,
                      CJSON_NESTING_LIMIT);
  const char *end = NULL;
  cJSON *json = cJSON_ParseWithOpts(text, &end, 1);
  if (!json) {
    size_t at = end ? (size_t)(end - text) : 0;
    return cs_err_set(err, CS_EPARSE, "malformed JSON at line %d (byte %zu)%s",
                      line_of(text, at < len ? at : len), at,
                      at >= len ? ": unexpected end of file (truncated?)" : "");
  }
  walk w = {text, text, text + len, "", err};
  int rc = walk_value(&w);
  if (!rc) rc = cs_json_strict(json, "", err);
  if (rc) {
    cJSON_Delete(json);
    return rc;
  }
  *out = json;
  return CS_OK;
}
