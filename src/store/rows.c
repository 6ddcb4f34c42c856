/* The job row's typed columns from a loaded job, and text columns.  (Results and records need no
 * conversion: the store's rows embed cs_result and cs_txn_record.)  Every function writes into
 * zeroed rows, so the padding the checksum covers stays zero. */
#include <stdio.h>
#include <string.h>

#include "commsweep/store.h"

void cs_store_set_text(char *dst, size_t cap, const char *src) {
  memset(dst, 0, cap);
  size_t n = strlen(src);
  if (n < cap) {
    memcpy(dst, src, n);
    return;
  }
  memcpy(dst, src, cap - 1);
  if (cap > 4) memcpy(dst + cap - 4, "...", 3); /* keeps a NUL: NULLTERM columns */
}

void cs_store_get_text(const char *src, size_t len, char *dst, size_t cap) {
  size_t n = 0;
  while (n < len && src[n]) n++;
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

const char *cs_store_status_name(int status) {
  switch (status) {
    case CS_STORE_PENDING: return "pending";
    case CS_STORE_DONE: return "done";
    case CS_STORE_FAILED: return "failed";
  }
  return "corrupt";
}

static void participants_text(const cs_spec *s, char *buf, size_t cap) {
  char tmp[CS_STORE_PARTS_LEN + 16]; /* enough to know the list was cut */
  size_t used = 0;
  tmp[0] = '\0';
  for (int i = 0; i < s->num_participants && used < sizeof tmp; i++)
    used += (size_t)snprintf(tmp + used, sizeof tmp - used, "%s%d", i ? "," : "",
                             (int)cs_spec_participant(s, i));
  cs_store_set_text(buf, cap, tmp);
}

/* An adapter field into its /jobs column: text cut as every text column is, numbers as they are. */
#define COPY_STR_(name) cs_store_set_text(row->name, sizeof row->name, a->name);
#define COPY_I32_(name) row->name = a->name;
#define COPY_F64_(name) row->name = a->name;
#define COPY_(ctype, name, dim, kind, unit, flags, doc) COPY_##kind##_(name)

void cs_store_job_from(const cs_job *job, cs_store_job_row *row) {
  const cs_spec *s = &job->spec;
  const cs_adapter_config *a = &job->adapter;
  const char *prim = cs_primitive_name(s->primitive), *algo = cs_algorithm_name(s->algorithm);
  const char *op = s->p2p_op == CS_P2P_NONE ? "" : cs_p2p_op_name(s->p2p_op);
  cs_store_set_text(row->primitive, sizeof row->primitive, prim ? prim : "?");
  cs_store_set_text(row->algorithm, sizeof row->algorithm, algo ? algo : "?");
  cs_store_set_text(row->dtype, sizeof row->dtype, s->dtype);
  cs_store_set_text(row->p2p_op, sizeof row->p2p_op, op ? op : "?");
  row->msg_size_bytes = s->msg_size_bytes;
  row->num_participants = s->num_participants;
  participants_text(s, row->participants, sizeof row->participants);
  CS_ADAPTER_JOB_COLUMNS_ALL(COPY_)
  cs_store_set_text(row->engine, sizeof row->engine, job->engine.name);
}
#undef COPY_
