/*
 * The reorder pass of recorded sessions, GL-free. It reorders a command
 * list so that independent dispatches share the stretch between two
 * barriers: when the next command conflicts with the current group, it
 * looks ahead a bounded window and pulls forward each command that
 * conflicts neither with the group nor with any command it would jump
 * over. Dependencies are never reordered, so results are unchanged; only
 * the number of barriers the encoder needs can drop.
 */
#ifndef GLC_REORDER_H
#define GLC_REORDER_H

#include "hazard.h"

#include <stddef.h>

typedef struct glc__reorder_item {
    const glc__span *spans;
    int n;
    int fence; /* never moved, and nothing moves across it */
} glc__reorder_item;

/* Scratch the pass reuses between calls, so steady state does not allocate. */
typedef struct glc__reorder {
    glc__hazard group, skipped;
    unsigned char *taken;
    size_t cap;
} glc__reorder;

void glc__reorder_init(glc__reorder *r);
void glc__reorder_finish(glc__reorder *r);

/* Writes a permutation of 0..n-1 to order[]. `window` bounds how far ahead
 * a command may be pulled (0: no reordering). GLC_ERR_OUT_OF_MEMORY leaves
 * order[] as the identity. */
glc_status glc__reorder_run(glc__reorder *r, const glc__reorder_item *items, size_t n,
                            size_t window, size_t *order);

#endif
