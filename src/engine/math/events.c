/* The math engine's pending completions: a radix queue, taken out in (tick, insertion) order
 * (math_int.h describes it). */
#include <stdlib.h>

#include "math_int.h"

static int bucket_of(uint64_t last, uint64_t tick) {
  return tick == last ? 0 : 64 - __builtin_clzll(tick ^ last);
}

static inline bool bucket_append(mqueue_bucket *b, mevent e) {
  if (b->n == b->cap && !math_grow((void **)&b->ev, &b->cap, b->n + 1, sizeof *b->ev)) return false;
  b->ev[b->n++] = e;
  return true;
}

/* Lowers `last` to `tick` by queueing every event again, in order.  Needed only when a request
 * comes in after the engine looked ahead to a later completion without reaching it (the driver
 * injects a step only once the previous one is complete, so it never does). */
static int queue_rebase(mqueue *q, uint64_t tick) {
  mevent *all = malloc((q->count ? q->count : 1) * sizeof *all);
  if (!all) return CS_ENOMEM;
  size_t n = 0;
  for (int i = 0; i < MQUEUE_BUCKETS; i++) {
    mqueue_bucket *b = &q->bucket[i];
    for (size_t k = i == 0 ? q->head : 0; k < b->n; k++) all[n++] = b->ev[k];
    b->n = 0;
  }
  q->head = 0;
  q->last = tick;
  int rc = CS_OK;
  for (size_t k = 0; k < n && !rc; k++)
    if (!bucket_append(&q->bucket[bucket_of(tick, all[k].tick)], all[k])) rc = CS_ENOMEM;
  free(all);
  return rc;
}

/* Queues the completion of request id in phase `phase` at `tick`; `floor` (<= tick, the
 * engine's clock) becomes `last` when the queue is empty, so the events of a new step start in
 * low buckets. */
int mqueue_push(mqueue *q, uint64_t floor, uint64_t tick, uint64_t id, uint8_t phase) {
  if (!q->count) q->last = floor;
  if (tick < q->last) {
    int rc = queue_rebase(q, tick);
    if (rc) return rc;
  }
  if (!bucket_append(&q->bucket[bucket_of(q->last, tick)], (mevent){tick, id << 8 | phase}))
    return CS_ENOMEM;
  q->count++;
  return CS_OK;
}

/* The smallest queued tick (the queue is not empty) into *tick, filling bucket 0 if it ran
 * dry.  Out of memory (a lower bucket's first growth) leaves the queue unusable: the job fails. */
int mqueue_front(mqueue *q, uint64_t *tick) {
  mqueue_bucket *zero = &q->bucket[0];
  if (q->head < zero->n) {
    *tick = q->last;
    return CS_OK;
  }
  int i = 1;
  while (q->bucket[i].n == 0) i++;
  mqueue_bucket *b = &q->bucket[i];
  uint64_t min = b->ev[0].tick;
  for (size_t k = 1; k < b->n; k++)
    if (b->ev[k].tick < min) min = b->ev[k].tick;
  q->last = min;
  for (size_t k = 0; k < b->n; k++) /* each lands in a lower bucket */
    if (!bucket_append(&q->bucket[bucket_of(min, b->ev[k].tick)], b->ev[k])) return CS_ENOMEM;
  b->n = 0;
  *tick = min;
  return CS_OK;
}

/* Takes the next mevent of bucket 0 (not empty). */
mevent mqueue_pop(mqueue *q) {
  mqueue_bucket *zero = &q->bucket[0];
  mevent e = zero->ev[q->head++];
  if (q->head == zero->n) zero->n = q->head = 0;
  q->count--;
  return e;
}

void mqueue_reset(mqueue *q) {
  q->last = 0;
  q->count = q->head = 0;
  for (int i = 0; i < MQUEUE_BUCKETS; i++) q->bucket[i].n = 0;
}

void mqueue_free(mqueue *q) {
  for (int i = 0; i < MQUEUE_BUCKETS; i++) free(q->bucket[i].ev);
}
