/* Building a die (die.c): its stations, IP interfaces with their resources, rings and the lists
 * a step fills, all carved from the engine's arena and allocated once. */
#ifndef CS_DCIN_DIE_H
#define CS_DCIN_DIE_H

#include "model.h"

/* Arena entries (flit slots of bounded queues) one die needs. */
size_t dcin_die_arena_slots(const dcin_cfg *c);
int dcin_die_init(dcin_sim *s, dcin_die *d, int id, cs_err *err);
void dcin_die_free(dcin_die *d);

#endif
