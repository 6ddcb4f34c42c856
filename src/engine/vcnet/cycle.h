/* A cycle in a directed graph by iterative depth-first search (cycle.c), shared by the channel
 * dependency graphs of the mesh/torus (cdg.c) and of the 2-D fat tree (vtftr_analysis.c). */
#ifndef CS_VCNET_CYCLE_H
#define CS_VCNET_CYCLE_H

#include <stddef.h>
#include <stdint.h>

#include "commsweep/err.h"

/* The out-edges of node `node` are numbered by the graph, 0 .. 65534.  Returns the number of the
 * first edge at or after `from` and its head in *to, or -1 when no edge is left. */
typedef int (*cs_cycle_next_fn)(const void *graph, uint32_t node, int from, uint32_t *to);

/* Searches the graph of `nodes` nodes for a cycle.  On CS_OK, *cycle is NULL and *len 0 when
 * there is none, or else a malloc'd array of the *len nodes of the first cycle found, in edge
 * order.  CS_ENOMEM (err says so) when memory runs out. */
int cs_cycle_find(size_t nodes, cs_cycle_next_fn next, const void *graph, uint32_t **cycle,
                  size_t *len, cs_err *err);

#endif
