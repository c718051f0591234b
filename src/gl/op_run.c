/*
 * Eager ops: views in, dispatches recorded into a session. The one path
 * every glc_op_* entry point takes: check the views (buffer, range,
 * alignment), run the op's shape rule, compare the outputs' shapes with the
 * rule's, plan, then get each kernel variant and dispatch it with the
 * plan's byte ranges mapped onto the views. Nothing is recorded unless the
 * whole op is valid.
 */
#include "op_run.h"

#include "buffer.h"
#include "device.h"
#include "kernel.h"
#include "session.h"

#include <stdio.h>
#include <string.h>

glc_view glc_view_of(glc_buffer *buf)
{
    glc_view v;
    memset(&v, 0, sizeof v);
    if (!buf)
        return v;
    v.buffer = buf;
    v.dtype = buf->dtype;
    v.rank = buf->rank;
    memcpy(v.shape, buf->shape, sizeof v.shape);
    return v;
}

glc_view glc_view_make(glc_buffer *buf, size_t offset, glc_dtype dtype, int rank,
                       const int64_t *shape)
{
    glc_view v;
    int i;
    memset(&v, 0, sizeof v);
    v.buffer = buf;
    v.offset = offset;
    v.dtype = dtype;
    v.rank = rank < 0 ? 0 : rank > GLC_MAX_DIMS ? GLC_MAX_DIMS : rank;
    for (i = 0; i < GLC_MAX_DIMS; i++)
        v.shape[i] = i < v.rank && shape ? shape[i] : 1;
    return v;
}

static void tensor_of(const glc_view *v, glc__tensor *t)
{
    memset(t, 0, sizeof *t);
    t->present = v->buffer != NULL;
    t->dtype = v->dtype;
    t->rank = v->rank;
    memcpy(t->shape, v->shape, sizeof t->shape);
}

size_t glc_view_bytes(const glc_view *v)
{
    glc__tensor t;
    int i;
    if (!v || v->rank < 1 || v->rank > GLC_MAX_DIMS)
        return 0;
    for (i = 0; i < v->rank; i++)
        if (v->shape[i] < 1)
            return 0;
    tensor_of(v, &t);
    return glc__tensor_bytes(&t);
}

/* what: "tensor 2", "scratch" (for messages) */
static glc_status check_view(glc_device *dev, const char *op, const char *what, const glc_view *v)
{
    size_t bytes = glc_view_bytes(v);
    if (v->buffer->dev != dev)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: %s is a buffer of another device", op,
                         what);
    if (bytes == 0)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "%s: %s: rank %d, dtype %s: not a valid shape for the dtype", op,
                         what, v->rank, glc_dtype_name(v->dtype));
    if (v->offset > v->buffer->bytes || bytes > v->buffer->bytes - v->offset)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "%s: %s: bytes [%zu, %zu + %zu) run past the buffer's %zu bytes",
                         op, what, v->offset, v->offset, bytes, v->buffer->bytes);
    if (v->offset % dev->info.limits.ssbo_offset_alignment)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "%s: %s: offset %zu is not a multiple of the device's SSBO "
                         "offset alignment %u",
                         op, what, v->offset, dev->info.limits.ssbo_offset_alignment);
    return GLC_OK;
}

void glc__target_of(glc_device *dev, glc__target *tg)
{
    tg->limits = dev->info.limits;
    tg->features = dev->info.features;
    tg->is_llvmpipe = strstr(dev->renderer, "llvmpipe") != NULL;
    tg->matmul = dev->env.matmul;
    tg->texel_min = dev->texel_min_bytes;
    tg->rows_min = dev->rows_min_macs;
    tg->tune = dev->tune;
}

/* The benchmark hook: later plans take t's overrides (ops.h). */
void glc__device_tune(glc_device *dev, const glc__tune *t)
{
    memset(&dev->tune, 0, sizeof dev->tune);
    if (t)
        dev->tune = *t;
}

/* Scratch for an op whose API takes none (a split reduction's partials):
 * a buffer the session keeps until glc_session_finish, the last one reused
 * when large enough (the session's hazard tracking orders its uses). */
static glc_status session_scratch(glc_session *s, size_t bytes, glc_view *out)
{
    glc_buffer *b = s->nscratch ? s->scratch[s->nscratch - 1] : NULL;
    int64_t words = (int64_t)((bytes + 3) / 4);
    glc_status st;
    if (!b || glc_buffer_size(b) < bytes) {
        if (s->nscratch == GLC__SESSION_SCRATCH)
            return glc__fail(s->dev, GLC_ERR_OUT_OF_MEMORY,
                             "session scratch: more than %d growths in one session",
                             GLC__SESSION_SCRATCH);
        if ((st = glc_buffer_create(s->dev, GLC_DTYPE_U32, 1, &words, &b)) != GLC_OK)
            return st;
        s->scratch[s->nscratch++] = b;
    }
    memset(out, 0, sizeof *out);
    out->buffer = b;
    out->dtype = GLC_DTYPE_U32;
    out->rank = 1;
    out->shape[0] = words;
    return GLC_OK;
}

glc_status glc__op_run(glc_session *s, glc__op_args *a, const glc_view *views,
                       const glc_view *scratch)
{
    const glc__op_desc *desc;
    glc_device *dev;
    glc__op_plan plan;
    glc__target tg;
    glc__tensor given[GLC__OP_MAX_TENSORS];
    char err[512], sa[96], sb[96], what[24]; /* "tensor %d" for any int */
    glc_kernel *kernels[GLC__OP_MAX_DISPATCH];
    glc__glstate gs;
    glc_view own;
    glc_status st;
    int i, j, n;
    if (!s)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_op_%s: the session is NULL",
                         glc__ops[a->op]->name);
    dev = s->dev;
    desc = glc__ops[a->op];
    n = a->nin + a->nout;
    for (i = 0; i < n; i++) {
        tensor_of(&views[i], &a->t[i]);
        given[i] = a->t[i];
        snprintf(what, sizeof what, "tensor %d", i);
        if (views[i].buffer && (st = check_view(dev, desc->name, what, &views[i])) != GLC_OK)
            return st;
        if (!views[i].buffer && i >= a->nin)
            return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: output %d has no buffer", desc->name,
                             i - a->nin);
    }
    if (scratch && scratch->buffer &&
        (st = check_view(dev, desc->name, "scratch", scratch)) != GLC_OK)
        return st;
    err[0] = '\0';
    st = desc->infer(a, err, sizeof err);
    if (st != GLC_OK)
        return glc__fail(dev, st, "%s", err);
    for (i = a->nin; i < n; i++) {
        if (!glc__same_shape(&a->t[i], &given[i]) || a->t[i].dtype != given[i].dtype)
            return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: output %d is %s, the op makes %s",
                             desc->name, i - a->nin, glc__shape_str(&given[i], sa, sizeof sa),
                             glc__shape_str(&a->t[i], sb, sizeof sb));
    }
    glc__target_of(dev, &tg);
    memset(&plan, 0, sizeof plan);
    st = glc__op_make_plan(a, &tg, &plan, err, sizeof err);
    if (st != GLC_OK)
        return glc__fail(dev, st, "%s", err);
    if (plan.scratch_bytes && scratch &&
        (!scratch->buffer || glc_view_bytes(scratch) < plan.scratch_bytes))
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: needs %zu bytes of scratch", desc->name,
                         plan.scratch_bytes);
    /* the full context check first (not the hot one: an op costs far more
     * than it, and a context made current behind our back is caught here),
     * then every variant compiled before any dispatch, so a failure records
     * nothing and no GL call goes to a foreign context */
    if ((st = glc__enter(dev, 0, 0, &gs)) != GLC_OK)
        return st;
    for (j = 0; j < plan.ndisp && st == GLC_OK; j++)
        st = glc__kernel_get(dev, plan.disp[j].kernel, plan.disp[j].defines,
                             plan.disp[j].local_size, &kernels[j]);
    glc__leave(dev, &gs);
    if (st != GLC_OK)
        return st;
    if (plan.scratch_bytes && !scratch) { /* an entry point with no scratch view */
        if ((st = session_scratch(s, plan.scratch_bytes, &own)) != GLC_OK)
            return st;
        scratch = &own;
    }
    for (j = 0; j < plan.ndisp; j++) {
        const glc__dispatch_plan *dp = &plan.disp[j];
        glc_binding b[GLC__OP_MAX_BIND];
        glc_dispatch_desc d;
        for (i = 0; i < dp->nbind; i++) {
            const glc_view *v = dp->bind[i].tensor == GLC__SCRATCH ? scratch
                                                                   : &views[dp->bind[i].tensor];
            size_t whole = glc_view_bytes(v);
            b[i].buffer = v->buffer;
            b[i].offset = v->offset + dp->bind[i].offset;
            b[i].size = dp->bind[i].size ? dp->bind[i].size : whole - dp->bind[i].offset;
            /* whole words: a 16-bit tensor of odd length ends mid-word */
            b[i].size = (b[i].size + 3) & ~(size_t)3;
            b[i].access = dp->bind[i].access;
            b[i].kind = dp->bind[i].kind;
        }
        memset(&d, 0, sizeof d);
        d.kernel = kernels[j];
        d.groups = dp->groups;
        d.bindings = b;
        d.binding_count = dp->nbind;
        d.params = dp->params;
        d.param_count = dp->nparams;
        d.label = desc->name;
        if ((st = glc_session_dispatch(s, &d)) != GLC_OK)
            return st;
    }
    return GLC_OK;
}
