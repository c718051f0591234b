/*
 * Eager op execution (op_run.c): the GL side of the op table.
 */
#ifndef GLC_OP_RUN_H
#define GLC_OP_RUN_H

#include "ops.h"

/* Runs op a->op on views[0 .. a->nin + a->nout) (inputs, then outputs;
 * absent optional inputs have .buffer NULL) with a->f / a->i set by the
 * caller; scratch may be NULL. */
glc_status glc__op_run(glc_session *s, glc__op_args *a, const glc_view *views,
                       const glc_view *scratch);

/* Shorthand for the entry points: sets up args for `op` with nin inputs
 * and nout outputs. */
static inline void glc__op_args_init(glc__op_args *a, glc__op op, int nin, int nout)
{
    int i;
    a->op = op;
    a->nin = nin;
    a->nout = nout;
    for (i = 0; i < 4; i++)
        a->f[i] = 0;
    for (i = 0; i < 8; i++)
        a->i[i] = 0;
}

#endif
