/* The ideal engine: every phase of a transaction takes a fixed time, the time its flits need to
 * leave at one flit per NoC cycle, and nothing else (no hops, no contention, no trackers).  A
 * phase carrying the data (a write's req, a read's rsp) has burst_length flits, the other one
 * header flit; a phase of f flits injected at tick t completes at t + ceil(f * num / den), where
 * num / den = driver GHz / NoC GHz reduced.  Invariant: completions come out in (tick, inject
 * order), so a job's results depend on its transactions alone (docs/engines.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/engine.h"
#include "commsweep/hash.h"

typedef struct ideal_event {
  uint64_t tick, seq, id;
  uint8_t phase;
} ideal_event;

typedef struct ideal_engine {
  uint64_t num, den;  /* driver ticks per NoC cycle, num / den */
  uint64_t now, seq;  /* the driver tick; events made so far */
  ideal_event *heap;  /* min-heap by (tick, seq): the phases in flight */
  size_t n, cap;
  cs_completion *ready; /* due completions, oldest first, from ready[head] */
  size_t head, n_ready, cap_ready;
  uint64_t flits;     /* flits of every phase injected */
} ideal_engine;

/* driver GHz / NoC GHz as a reduced ratio of integers (in kHz), as the other engines count */
static int ratio(const cs_adapter_config *ad, uint64_t *num, uint64_t *den, cs_err *err) {
  uint64_t n = (uint64_t)(ad->driver_cycle_frequency_ghz * 1e6 + 0.5);
  uint64_t d = (uint64_t)(ad->noc_frequency_ghz * 1e6 + 0.5);
  if (!n || !d)
    return cs_err_set(err, CS_EINVAL, "ideal: driver_cycle_frequency_ghz %g and noc_frequency_ghz "
                      "%g must be at least 1 kHz", ad->driver_cycle_frequency_ghz,
                      ad->noc_frequency_ghz);
  uint64_t g = cs_gcd_u64(n, d);
  *num = n / g;
  *den = d / g;
  return CS_OK;
}

static int ideal_validate(const cs_job *job, cs_err *err) {
  uint64_t num, den;
  return ratio(&job->adapter, &num, &den, err);
}

static double ideal_cost(const cs_job *job, uint64_t num_txns, uint32_t num_steps) {
  (void)job;
  return 0.05 * (double)num_txns + (double)num_steps; /* about a microsecond per 20 phases */
}

static int ideal_create(const cs_job *job, void **engine, cs_err *err) {
  ideal_engine *e = calloc(1, sizeof *e);
  if (!e) return cs_err_set(err, CS_ENOMEM, "ideal: out of memory");
  int rc = ratio(&job->adapter, &e->num, &e->den, err);
  if (rc) {
    free(e);
    return rc;
  }
  *engine = e;
  return CS_OK;
}

static bool before(const ideal_event *a, const ideal_event *b) {
  return a->tick < b->tick || (a->tick == b->tick && a->seq < b->seq);
}

static int push(ideal_engine *e, ideal_event ev, cs_err *err) {
  if (e->n == e->cap) {
    size_t cap = e->cap ? 2 * e->cap : 64;
    ideal_event *h = realloc(e->heap, cap * sizeof *h);
    if (!h) return cs_err_set(err, CS_ENOMEM, "ideal: out of memory");
    e->heap = h, e->cap = cap;
  }
  size_t i = e->n++;
  for (; i && before(&ev, &e->heap[(i - 1) / 2]); i = (i - 1) / 2) e->heap[i] = e->heap[(i - 1) / 2];
  e->heap[i] = ev;
  return CS_OK;
}

static ideal_event pop(ideal_engine *e) {
  ideal_event top = e->heap[0], last = e->heap[--e->n];
  size_t i = 0;
  for (size_t c; (c = 2 * i + 1) < e->n; i = c) {
    if (c + 1 < e->n && before(&e->heap[c + 1], &e->heap[c])) c++;
    if (!before(&e->heap[c], &last)) break;
    e->heap[i] = e->heap[c];
  }
  if (e->n) e->heap[i] = last;
  return top;
}

static int ideal_inject(void *engine, const cs_inject *in, cs_err *err) {
  ideal_engine *e = engine;
  if (in->packet_type != CS_PKT_REQ && in->packet_type != CS_PKT_RSP)
    return cs_err_set(err, CS_ECONSTRAINT, "C9: ideal engine: request %llu: only req and rsp may "
                      "be injected", (unsigned long long)in->request_id);
  bool req = in->packet_type == CS_PKT_REQ;
  /* the data travels with a write's req and with a read's rsp */
  uint64_t flits = req != (in->is_read != 0) ? in->burst_length : 1;
  if (!flits) flits = 1;
  uint64_t ticks = (flits * e->num + e->den - 1) / e->den;
  e->flits += flits;
  ideal_event ev = {cs_engine_advance_limit(e->now, ticks), e->seq++, in->request_id,
                    req ? CS_PHASE_REQ : CS_PHASE_FINAL};
  return push(e, ev, err);
}

static int ideal_advance(void *engine, uint64_t max_ticks, cs_err *err) {
  ideal_engine *e = engine;
  if (e->n_ready) return CS_OK;
  uint64_t limit = cs_engine_advance_limit(e->now, max_ticks);
  if (!e->n || e->heap[0].tick > limit) {
    e->now = limit;
    return CS_OK;
  }
  e->now = e->heap[0].tick;
  e->head = 0;
  while (e->n && e->heap[0].tick == e->now) {
    if (e->n_ready == e->cap_ready) {
      size_t cap = e->cap_ready ? 2 * e->cap_ready : 64;
      cs_completion *r = realloc(e->ready, cap * sizeof *r);
      if (!r) return cs_err_set(err, CS_ENOMEM, "ideal: out of memory");
      e->ready = r, e->cap_ready = cap;
    }
    ideal_event ev = pop(e);
    e->ready[e->n_ready++] = (cs_completion){ev.id, ev.tick, ev.phase};
  }
  return CS_OK;
}

static size_t ideal_poll(void *engine, cs_completion *out, size_t cap) {
  ideal_engine *e = engine;
  size_t n = e->n_ready - e->head < cap ? e->n_ready - e->head : cap;
  if (!n) return 0; /* nothing ready: ready may still be NULL */
  memcpy(out, e->ready + e->head, n * sizeof *out);
  e->head += n;
  if (e->head == e->n_ready) e->head = e->n_ready = 0;
  return n;
}

static uint64_t ideal_now(const void *engine) { return ((const ideal_engine *)engine)->now; }

#ifdef CS_IDEAL_TEST_COLUMNS
/* A test build's extra columns (engine.cmake): what a later engine's own columns look like. */
extern const cs_engine_ops cs_ideal_ops;
static const cs_engine_column ideal_result_columns[] = {
    {"ideal_flits", "flit", "flits of every phase injected"}, {NULL, NULL, NULL}};
static const cs_engine_column ideal_record_columns[] = {
    {"ideal_data_flits", "flit", "flits of the phase that carries the data"}, {NULL, NULL, NULL}};
#else
#define ideal_result_columns NULL
#define ideal_record_columns NULL
#endif

/* No placement is modelled: the physical fields say so (-1); no internal cycles (0). */
static void ideal_describe(const void *engine, uint64_t request_id, cs_txn_record *rec) {
  (void)engine, (void)request_id;
  rec->src_die = rec->dst_die = rec->src_node = rec->dst_node = -1;
  rec->src_channel = rec->dst_channel = rec->d2d_src_node = rec->d2d_dst_node = -1;
#ifdef CS_IDEAL_TEST_COLUMNS
  rec->engine_extra[cs_engine_record_slot(&cs_ideal_ops)] =
      rec->burst_length ? (int32_t)rec->burst_length : 1;
#endif
}

static void ideal_where(const void *engine, uint64_t request_id, char *buf, size_t cap) {
  const ideal_engine *e = engine;
  for (size_t i = 0; i < e->n; i++)
    if (e->heap[i].id == request_id) {
      snprintf(buf, cap, "%s phase due at tick %llu", e->heap[i].phase ? "rsp" : "req",
               (unsigned long long)e->heap[i].tick);
      return;
    }
  snprintf(buf, cap, "not in flight");
}

static void ideal_stats(const void *engine, cs_engine_stats *out) {
  const ideal_engine *e = engine;
  memset(out, 0, sizeof *out);
  out->flits_injected = out->flits_ejected = e->flits;
#ifdef CS_IDEAL_TEST_COLUMNS
  out->extra[0] = e->flits;
#endif
}

static void ideal_destroy(void *engine) {
  ideal_engine *e = engine;
  if (!e) return;
  free(e->heap);
  free(e->ready);
  free(e);
}

const cs_engine_ops cs_ideal_ops = {
    .name = "ideal",
    .summary = "fixed latency per phase: its flits at one per NoC cycle, a lower bound "
               "(docs/engines.md)",
    .model_version = "1",
    .options_doc = "takes no options",
    .validate = ideal_validate,
    .cost = ideal_cost,
    .result_columns = ideal_result_columns,
    .record_columns = ideal_record_columns,
    .create = ideal_create,
    .inject = ideal_inject,
    .advance = ideal_advance,
    .poll = ideal_poll,
    .now = ideal_now,
    .describe = ideal_describe,
    .where = ideal_where,
    .stats = ideal_stats,
    .destroy = ideal_destroy,
};
