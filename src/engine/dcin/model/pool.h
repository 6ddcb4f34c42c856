/* Storage of the model (pool.c): the flit pool, intrusive lists of flits and of transactions,
 * the transaction table with its request-id map, and the arena every bounded queue is carved
 * from.  Invariant: a flit index is either on the free list or in exactly one place of the model.
 */
#ifndef CS_DCIN_POOL_H
#define CS_DCIN_POOL_H

#include "state.h"

int dcin_arena_take(dcin_sim *s, dcin_q *q, int cap);
/* The same for an eject FIFO, whose buffer holds one entry beyond the depth (dcin_q). */
int dcin_arena_take_ej(dcin_sim *s, dcin_q *q, int cap);
void dcin_list_push(dcin_sim *s, dcin_list *l, uint32_t f);
void dcin_list_push_front(dcin_sim *s, dcin_list *l, uint32_t f);
uint32_t dcin_list_pop(dcin_sim *s, dcin_list *l);
void dcin_wait_push(dcin_sim *s, dcin_list *l, uint32_t t);
uint32_t dcin_wait_pop(dcin_sim *s, dcin_list *l);
int dcin_txn_new(dcin_sim *s, uint64_t request_id, uint32_t *out, cs_err *err);
uint32_t dcin_txn_find(const dcin_sim *s, uint64_t request_id);
/* Recycles the slot of a finished, described transaction that nothing references any more. */
void dcin_txn_try_free(dcin_sim *s, uint32_t t);
/* Doubles the flit pool, threading the new flits onto the free list (CS_ENOMEM if it cannot);
 * external so that dcin_flit_new, inlined into its callers, may call it. */
int dcin_pool_grow_flits(dcin_sim *s);
/* A zeroed flit off the free list (DCIN_NIL when the pool cannot grow). */
uint32_t dcin_flit_new(dcin_sim *s);
/* A new flit of transaction t (DCIN_NIL, with the fault noted, when the pool cannot grow). */
uint32_t dcin_make_flit(dcin_sim *s, uint32_t t, int die, int net, int kind, int src_node,
                        int src_ip, int dst_node, int dst_ip);
/* Returns flit f to the free list; its transaction's slot is recycled with its last flit. */
void dcin_flit_free(dcin_sim *s, uint32_t f);
/* Notes that the flit pool could not grow (the cycle's fault). */
void dcin_pool_fault(dcin_sim *s);

#endif
