/* Generic output of records described by column tables (columns.h). */
#include "commsweep/columns.h"

#include <inttypes.h>
#include <string.h>

#include <cjson/cJSON.h>

size_t cs_cols_count(const cs_col *cols) {
  size_t n = 0;
  while (cols[n].name) n++;
  return n;
}

const cs_col *cs_cols_find(const cs_col *cols, const char *name) {
  for (; cols->name; cols++)
    if (strcmp(cols->name, name) == 0) return cols;
  return NULL;
}

double cs_col_number(const cs_col *c, const void *row) {
  const char *p = (const char *)row + c->offset;
  switch (c->kind) {
    case CS_COL_U64: { uint64_t v; memcpy(&v, p, sizeof v); return (double)v; }
    case CS_COL_F64: { double v; memcpy(&v, p, sizeof v); return v; }
    case CS_COL_U32: { uint32_t v; memcpy(&v, p, sizeof v); return v; }
    case CS_COL_I32: { int32_t v; memcpy(&v, p, sizeof v); return v; }
    case CS_COL_I16: { int16_t v; memcpy(&v, p, sizeof v); return v; }
    case CS_COL_U16: { uint16_t v; memcpy(&v, p, sizeof v); return v; }
    case CS_COL_U8: return (uint8_t)*p;
    case CS_COL_I8:
    case CS_COL_STATUS: return (int8_t)*p;
    case CS_COL_STR:
    case CS_COL_KEY: return 0;
  }
  return 0;
}

static size_t text_len(const cs_col *c, const char *p) { return strnlen(p, c->size); }

size_t cs_col_format(const cs_col *c, const void *row, char *buf, size_t cap) {
  const char *p = (const char *)row + c->offset;
  int n;
  switch (c->kind) {
    case CS_COL_STR:
    case CS_COL_KEY: n = snprintf(buf, cap, "%.*s", (int)text_len(c, p), p); break;
    case CS_COL_F64: n = snprintf(buf, cap, "%.17g", cs_col_number(c, row)); break;
    case CS_COL_U64: {
      uint64_t v;
      memcpy(&v, p, sizeof v);
      n = snprintf(buf, cap, "%" PRIu64, v);
      break;
    }
    default: n = snprintf(buf, cap, "%.0f", cs_col_number(c, row)); break;
  }
  return n < 0 ? 0 : (size_t)n;
}

static void add_json(const cs_col *c, const void *row, cJSON *obj) {
  const char *p = (const char *)row + c->offset;
  if (c->kind == CS_COL_STR || c->kind == CS_COL_KEY) {
    char text[4097];
    size_t n = text_len(c, p);
    if (n >= sizeof text) n = sizeof text - 1;
    memcpy(text, p, n);
    text[n] = '\0';
    cJSON_AddStringToObject(obj, c->name, text);
  } else if (c->flags & CS_COL_BOOLEAN) {
    cJSON_AddBoolToObject(obj, c->name, cs_col_number(c, row) != 0);
  } else {
    cJSON_AddNumberToObject(obj, c->name, cs_col_number(c, row));
  }
}

void cs_cols_to_json(const cs_col *cols, const void *row, unsigned want, unsigned skip,
                     cJSON *obj) {
  for (; cols->name; cols++)
    if ((cols->flags & want) == want && !(cols->flags & skip)) add_json(cols, row, obj);
}

/* JSON text of one value: numbers exact (integers as integers), strings escaped. */
static size_t json_value(const cs_col *c, const void *row, char *buf, size_t cap) {
  if (c->flags & CS_COL_BOOLEAN)
    return (size_t)snprintf(buf, cap, "%s", cs_col_number(c, row) != 0 ? "true" : "false");
  if (c->kind != CS_COL_STR && c->kind != CS_COL_KEY) return cs_col_format(c, row, buf, cap);
  const char *p = (const char *)row + c->offset;
  size_t n = text_len(c, p), used = 0;
  char tmp[8];
#define PUT(s, len)                                               \
  do {                                                            \
    if (used + (len) < cap) memcpy(buf + used, s, len);           \
    used += (len);                                                \
  } while (0)
  PUT("\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)p[i];
    if (ch == '"' || ch == '\\') {
      tmp[0] = '\\', tmp[1] = (char)ch;
      PUT(tmp, 2);
    } else if (ch < 0x20) {
      int k = snprintf(tmp, sizeof tmp, "\\u%04x", ch);
      PUT(tmp, (size_t)k);
    } else {
      PUT(&p[i], 1);
    }
  }
  PUT("\"", 1);
#undef PUT
  if (cap) buf[used < cap ? used : cap - 1] = '\0';
  return used;
}

size_t cs_cols_json_line(const cs_col *cols, const void *row, char *buf, size_t cap) {
  size_t used = 0;
  for (const cs_col *c = cols; c->name; c++) {
    int k = snprintf(buf + (used < cap ? used : cap), used < cap ? cap - used : 0, "%s\"%s\":",
                     c == cols ? "{" : ",", c->name);
    used += k < 0 ? 0 : (size_t)k;
    used += json_value(c, row, buf + (used < cap ? used : cap), used < cap ? cap - used : 0);
  }
  int k = snprintf(buf + (used < cap ? used : cap), used < cap ? cap - used : 0, "}");
  return used + (k < 0 ? 0 : (size_t)k);
}

void cs_cols_csv_header(const cs_col *cols, FILE *f) {
  for (const cs_col *c = cols; c->name; c++) fprintf(f, "%s%s", c == cols ? "" : ",", c->name);
}

void cs_cols_csv_values(const cs_col *cols, const void *row, FILE *f) {
  char text[4200];
  for (const cs_col *c = cols; c->name; c++) {
    if (c != cols) fputc(',', f);
    cs_col_format(c, row, text, sizeof text);
    if (c->kind != CS_COL_STR && c->kind != CS_COL_KEY) {
      fputs(text, f);
      continue;
    }
    fputc('"', f);
    for (const char *s = text; *s; s++) {
      if (*s == '"') fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  }
}
