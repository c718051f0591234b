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

/* What plans are chosen for: the device's limits, features, driver. */
void glc__target_of(glc_device *dev, glc__target *tg);

/* For benchmarks only: the variant overrides later plans take (NULL: none). */
void glc__device_tune(glc_device *dev, const glc__tune *t);

#endif
