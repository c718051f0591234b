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

const glc__op_desc glc__op_SDPA_desc = {"sdpa", not_yet, no_plan};
const glc__op_desc glc__op_SDPA_DECODE_desc = {"sdpa_decode", not_yet, no_plan};

glc_status glc_op_sdpa(glc_session *s, glc_view q, glc_view k, glc_view v, const glc_sdpa_desc *desc, glc_view out)
{ glc_view w[4] = {q, k, v, out}; (void)desc; return stub(s, GLC__OP_SDPA, 3, 1, w); }
glc_status glc_op_sdpa_decode(glc_session *s, glc_view q, glc_view k, glc_view v, const glc_sdpa_desc *desc, glc_view scratch, glc_view out)
{ glc_view w[4] = {q, k, v, out}; (void)desc; (void)scratch; return stub(s, GLC__OP_SDPA_DECODE, 3, 1, w); }
int64_t glc_sdpa_decode_scratch(int64_t hq, int64_t dv, int64_t kv_len) { (void)hq; (void)dv; (void)kv_len; return 0; }
