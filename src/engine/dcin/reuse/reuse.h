/* Exact step reuse, a layer above the cycle model (reuse.c; the whole-state string in
 * fullstate.c): the hooks the engine ops call around the model.  The model never calls back.
 */
#ifndef CS_DCIN_REUSE_H
#define CS_DCIN_REUSE_H

#include "../model/model.h"

/* The hooks of the engine ops. */
bool dcin_reuse_take(dcin_sim *s, uint64_t id, int src_id, int dst_id, const dcin_place *p);
int dcin_reuse_flush(dcin_sim *s, cs_err *err);
bool dcin_reuse_has(const dcin_sim *s, uint64_t id);
bool dcin_reuse_playing(const dcin_sim *s);
/* fullstate.c: the whole engine state between cycles, flits in flight included, as a byte string
 * (phase: the cycle's place in the clocks' common period); false when it cannot be made. */
bool dcin_full_state(const dcin_sim *s, uint64_t phase, dcin_bytes *out);
/* A replayed chain has not reached a quiet end: the engine may only replay (reuse.c). */
bool dcin_reuse_stale(const dcin_sim *s);
uint64_t dcin_reuse_next(const dcin_sim *s);
void dcin_reuse_deliver(dcin_sim *s, uint64_t c);
int dcin_reuse_rsp(dcin_sim *s, uint64_t id, int src_id, int dst_id, bool *handled, cs_err *err);
bool dcin_reuse_describe(const dcin_sim *s, uint64_t id, cs_txn_record *rec);
int dcin_reuse_finish(dcin_sim *s, uint64_t *now_tick, const cs_engine_step *step,
                      cs_txn_record *rec, bool *finished, cs_err *err);
void dcin_reuse_note_completions(dcin_sim *s, uint64_t c);
void dcin_reuse_note_rsp(dcin_sim *s, uint32_t t);
void dcin_reuse_note_describe(dcin_sim *s, uint32_t t);
void dcin_reuse_figures(const dcin_sim *s, uint64_t *seen, uint64_t *replayed, uint64_t *recorded);
void dcin_reuse_free(dcin_sim *s);
int dcin_reuse_attach(dcin_sim *s, cs_dcin_reuse *c); /* -1 after the first request */
/* Tests and benchmarks: the context's budget in bytes (default 256 MB; least recently used steps
 * make room for new ones), and what it holds. */
void dcin_reuse_set_budget(cs_dcin_reuse *c, size_t bytes);
void dcin_reuse_cache_figures(const cs_dcin_reuse *c, size_t *bytes, uint64_t *steps,
                              uint64_t *evicted);

#endif
