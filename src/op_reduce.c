/*
 * PLACEHOLDER for an op family not written yet: the ops are declared and
 * their entry points exist, but each reports GLC_ERR_UNSUPPORTED ("not
 * implemented yet"). Replaced by the family's real rules and plans.
 */
#include "op_run.h"

static glc_status not_yet(glc__op_args *a, char *err, size_t len)
{
    (void)len;
    glc__op_error(err, len, glc__ops[a->op]->name, "not implemented yet");
    return GLC_ERR_UNSUPPORTED;
}

static glc_status no_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p, char *err, size_t len)
{
    (void)a; (void)tg; (void)p; (void)err; (void)len;
    return GLC_ERR_UNSUPPORTED;
}

static glc_status stub(glc_session *s, glc__op op, int nin, int nout, const glc_view *v)
{
    glc__op_args args;
    glc__op_args_init(&args, op, nin, nout);
    return glc__op_run(s, &args, v, NULL);
}

const glc__op_desc glc__op_SOFTMAX_desc = {"softmax", not_yet, no_plan};
const glc__op_desc glc__op_RMS_NORM_desc = {"rms_norm", not_yet, no_plan};
const glc__op_desc glc__op_LAYER_NORM_desc = {"layer_norm", not_yet, no_plan};
const glc__op_desc glc__op_SUM_desc = {"sum", not_yet, no_plan};
const glc__op_desc glc__op_MEAN_desc = {"mean", not_yet, no_plan};
const glc__op_desc glc__op_ARGMAX_desc = {"argmax", not_yet, no_plan};

glc_status glc_op_softmax(glc_session *s, glc_view x, const glc_softmax_desc *desc, glc_view out)
{ glc_view v[2] = {x, out}; (void)desc; return stub(s, GLC__OP_SOFTMAX, 1, 1, v); }
glc_status glc_op_rms_norm(glc_session *s, glc_view x, glc_view weight, float eps, glc_view out)
{ glc_view v[3] = {x, weight, out}; (void)eps; return stub(s, GLC__OP_RMS_NORM, 2, 1, v); }
glc_status glc_op_layer_norm(glc_session *s, glc_view x, glc_view weight, glc_view bias, float eps, glc_view out)
{ glc_view v[4] = {x, weight, bias, out}; (void)eps; return stub(s, GLC__OP_LAYER_NORM, 3, 1, v); }
glc_status glc_op_sum(glc_session *s, glc_view x, glc_view out)
{ glc_view v[2] = {x, out}; return stub(s, GLC__OP_SUM, 1, 1, v); }
glc_status glc_op_mean(glc_session *s, glc_view x, glc_view out)
{ glc_view v[2] = {x, out}; return stub(s, GLC__OP_MEAN, 1, 1, v); }
glc_status glc_op_argmax(glc_session *s, glc_view x, glc_view out)
{ glc_view v[2] = {x, out}; return stub(s, GLC__OP_ARGMAX, 1, 1, v); }
