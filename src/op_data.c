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

const glc__op_desc glc__op_GET_ROWS_desc = {"get_rows", not_yet, no_plan};
const glc__op_desc glc__op_SET_ROWS_desc = {"set_rows", not_yet, no_plan};
const glc__op_desc glc__op_COPY_desc = {"copy", not_yet, no_plan};
const glc__op_desc glc__op_CONCAT_desc = {"concat", not_yet, no_plan};
const glc__op_desc glc__op_SLICE_desc = {"slice", not_yet, no_plan};

glc_status glc_op_get_rows(glc_session *s, glc_view table, glc_view ids, glc_view out)
{ glc_view v[3] = {table, ids, out}; return stub(s, GLC__OP_GET_ROWS, 2, 1, v); }
glc_status glc_op_set_rows(glc_session *s, glc_view src, glc_view ids, glc_view dst)
{ glc_view v[3] = {src, ids, dst}; return stub(s, GLC__OP_SET_ROWS, 2, 1, v); }
glc_status glc_op_copy(glc_session *s, glc_view x, const int *perm, glc_view out)
{ glc_view v[2] = {x, out}; (void)perm; return stub(s, GLC__OP_COPY, 1, 1, v); }
glc_status glc_op_concat(glc_session *s, glc_view a, glc_view b, int axis, glc_view out)
{ glc_view v[3] = {a, b, out}; (void)axis; return stub(s, GLC__OP_CONCAT, 2, 1, v); }
glc_status glc_op_slice(glc_session *s, glc_view x, int axis, int64_t start, glc_view out)
{ glc_view v[2] = {x, out}; (void)axis; (void)start; return stub(s, GLC__OP_SLICE, 1, 1, v); }
