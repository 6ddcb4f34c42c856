/* Iterative depth-first search for a cycle: a node is new, on the stack (grey) or finished; an
 * edge into a grey node closes a cycle, the stack from that node up. */
#include "cycle.h"

#include <stdlib.h>

enum { NODE_NEW = 0, NODE_ON_STACK = 1, NODE_DONE = 2 };

int cs_cycle_find(size_t nodes, cs_cycle_next_fn next, const void *graph, uint32_t **cycle,
                  size_t *len, cs_err *err) {
  *cycle = NULL;
  *len = 0;
  uint8_t *color = calloc(nodes ? nodes : 1, 1);
  uint16_t *next_edge = calloc(nodes ? nodes : 1, sizeof *next_edge); /* edges below: explored */
  uint32_t *stack = malloc((nodes ? nodes : 1) * sizeof *stack);
  int rc = CS_OK;
  if (!color || !next_edge || !stack) {
    rc = cs_err_set(err, CS_ENOMEM, "cycle search: out of memory for %zu nodes", nodes);
    goto done;
  }
  for (size_t root = 0; root < nodes && !*cycle; root++) {
    if (color[root] != NODE_NEW) continue;
    size_t sp = 0;
    stack[sp++] = (uint32_t)root;
    color[root] = NODE_ON_STACK;
    while (sp) {
      uint32_t node = stack[sp - 1], to;
      int edge = next(graph, node, next_edge[node], &to);
      if (edge < 0) {
        color[node] = NODE_DONE;
        sp--;
        continue;
      }
      next_edge[node] = (uint16_t)(edge + 1);
      if (color[to] == NODE_NEW) {
        color[to] = NODE_ON_STACK;
        stack[sp++] = to;
      } else if (color[to] == NODE_ON_STACK) {
        size_t from = 0;
        while (stack[from] != to) from++;
        *len = sp - from;
        if (!(*cycle = malloc(*len * sizeof **cycle))) {
          *len = 0;
          rc = cs_err_set(err, CS_ENOMEM, "cycle search: out of memory for a cycle of %zu", sp - from);
          goto done;
        }
        for (size_t i = from; i < sp; i++) (*cycle)[i - from] = stack[i];
        break;
      }
    }
  }
done:
  free(color), free(next_edge), free(stack);
  return rc;
}
