/*
 * The op table and the helpers rules and plans share (see ops.h). GL-free.
 */
#include "ops.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Each family's struct lies over f[] and i[] slot by slot (ops.h). */
#define SLOT_F(m, k) _Static_assert(offsetof(glc__op_args, m) == offsetof(glc__op_args, f[k]), #m)
#define SLOT_I(m, k) _Static_assert(offsetof(glc__op_args, m) == offsetof(glc__op_args, i[k]) && \
                                    GLC__I_SLOT(m) == (k), #m)
SLOT_F(bin.act_param, 0);
SLOT_I(bin.act, 0);
SLOT_F(unary.param, 0);
SLOT_I(unary.op, 0);
SLOT_F(scale.add, 1);
SLOT_I(softmax.pos_offset, 1);
SLOT_I(norm.at, 0);
SLOT_I(rope.dim, 1);
SLOT_I(mm.transpose_b, 0);
SLOT_I(mm.seg, 2);
SLOT_I(mm.glu_gate, 7);
SLOT_I(mm.glu_up, 8);
SLOT_I(mm.glu_out, 9);
SLOT_I(mm.glu_up_first, 10);
SLOT_I(affine.group, 1);
SLOT_I(sdpa.kv_len, 2);
SLOT_I(sdpa.scratch, 3);
SLOT_I(copy.perm, 1);
SLOT_I(axis.len, 2);
#define FITS(t) \
    _Static_assert(sizeof(t) <= sizeof(float[GLC__OP_NF]) + sizeof(int64_t[GLC__OP_NI]), #t)
FITS(glc__matmul_args);
FITS(glc__copy_args);
_Static_assert(sizeof(glc__op_scalars) == offsetof(glc__op_args, i[GLC__OP_NI]) -
                                              offsetof(glc__op_args, f[0]), "scalars");

const glc__op_desc *const glc__ops[GLC__OP_COUNT] = {
#define GLC__OP_ENTRY(id, name) &glc__op_##id##_desc,
    GLC__OP_LIST(GLC__OP_ENTRY)
#undef GLC__OP_ENTRY
};

/* Both saturate (INT64_MAX, SIZE_MAX) instead of overflowing: rules check
 * shapes from callers and graphs against limits, and a product that does
 * not fit is over every limit. A dim below 1 makes 0. */
int64_t glc__numel(const glc__tensor *t)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < t->rank; i++) {
        if (t->shape[i] < 1)
            return 0;
        if (n > INT64_MAX / t->shape[i])
            return INT64_MAX;
        n *= t->shape[i];
    }
    return n;
}

size_t glc__tensor_bytes(const glc__tensor *t)
{
    size_t row;
    int i;
    if (t->rank < 1)
        return 0;
    row = glc_dtype_row_bytes(t->dtype, t->shape[t->rank - 1]);
    for (i = 0; i < t->rank - 1; i++) {
        if (t->shape[i] < 1)
            return 0;
        if ((uint64_t)t->shape[i] > SIZE_MAX / (row ? row : 1))
            return SIZE_MAX;
        row *= (size_t)t->shape[i];
    }
    return row;
}

int glc__is_float(glc_dtype d)
{
    return d == GLC_DTYPE_F32 || d == GLC_DTYPE_F16 || d == GLC_DTYPE_BF16;
}

int glc__is_block(glc_dtype d)
{
    return glc__dtype_block(d) > 1;
}

int glc__same_shape(const glc__tensor *a, const glc__tensor *b)
{
    int i;
    if (a->rank != b->rank)
        return 0;
    for (i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

const char *glc__shape_str(const glc__tensor *t, char *buf, size_t len)
{
    size_t used;
    int i;
    snprintf(buf, len, "[");
    for (i = 0; i < t->rank; i++) {
        used = strlen(buf);
        snprintf(buf + used, len - used, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    }
    used = strlen(buf);
    snprintf(buf + used, len - used, "] %s", glc_dtype_name(t->dtype));
    return buf;
}

glc_status glc__op_error(char *err, size_t errlen, const char *op, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(err, errlen, "%s: ", op);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return GLC_ERR_INVALID_ARG;
}

glc__kdtype glc__kdtype_of(glc_dtype d)
{
    switch (d) {
    case GLC_DTYPE_F16: return GLC__T_F16;
    case GLC_DTYPE_BF16: return GLC__T_BF16;
    case GLC_DTYPE_Q8_0: return GLC__T_Q8_0;
    case GLC_DTYPE_Q4_0: return GLC__T_Q4_0;
    case GLC_DTYPE_Q4_K: return GLC__T_Q4_K;
    case GLC_DTYPE_Q5_K: return GLC__T_Q5_K;
    case GLC_DTYPE_Q6_K: return GLC__T_Q6_K;
    case GLC_DTYPE_Q4_1: return GLC__T_Q4_1;
    case GLC_DTYPE_Q5_0: return GLC__T_Q5_0;
    case GLC_DTYPE_Q5_1: return GLC__T_Q5_1;
    default: return GLC__T_F32;
    }
}

void glc__define(glc__dispatch_plan *d, const char *name, const char *value)
{
    size_t used = strlen(d->defines);
    snprintf(d->defines + used, sizeof d->defines - used, "#define %s %s\n", name, value);
}

void glc__define_int(glc__dispatch_plan *d, const char *name, long long value)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", value);
    glc__define(d, name, v);
}

void glc__define_t(glc__dispatch_plan *d, const char *name, glc_dtype dtype)
{
    glc__define_int(d, name, glc__kdtype_of(dtype));
}

glc__dispatch_plan *glc__plan_dispatch(glc__op_plan *p, const char *kernel, uint32_t local,
                                       uint64_t items)
{
    glc__dispatch_plan *d = &p->disp[p->ndisp++];
    memset(d, 0, sizeof *d);
    d->kernel = kernel;
    d->local_size = local;
    /* local 0 (a variant the device cannot run): no groups, and glc__op_plan
     * refuses the plan */
    d->groups = local ? (items + local - 1) / local : 0;
    if (d->groups == 0 && local)
        d->groups = 1;
    return d;
}

glc_status glc__op_plan_check(const glc__op_plan *p, const char *op, const glc__target *tg,
                              char *err, size_t errlen)
{
    uint32_t cap = tg->limits.max_invocations;
    int j;
    for (j = 0; j < p->ndisp; j++) {
        const glc__dispatch_plan *d = &p->disp[j];
        if (d->local_size == 0 || (cap && d->local_size > cap) || d->groups == 0) {
            glc__op_error(err, errlen, op,
                          "kernel %s planned with local size %u and %llu groups: this device "
                          "(at most %u invocations per group) cannot run it",
                          d->kernel, d->local_size, (unsigned long long)d->groups, cap);
            return GLC_ERR_UNSUPPORTED;
        }
        if (strlen(d->defines) + 1 >= sizeof d->defines) /* glc__define cut one short */
            return glc__op_error(err, errlen, op, "internal: kernel %s's defines fill its %zu bytes",
                                 d->kernel, sizeof d->defines);
    }
    return GLC_OK;
}

glc_status glc__op_make_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                             char *err, size_t errlen)
{
    const glc__op_desc *desc = glc__ops[a->op];
    glc_status st = desc->plan(a, tg, p, err, errlen);
    return st != GLC_OK ? st : glc__op_plan_check(p, desc->name, tg, err, errlen);
}

uint64_t glc__loop_budget(const glc__target *tg)
{
    uint32_t l = tg->limits.max_loop_iterations;
    return l ? l - l / 8 : 0;
}

void glc__plan_bind(glc__dispatch_plan *d, int tensor, glc_access access)
{
    glc__bind_plan *b = &d->bind[d->nbind++];
    b->tensor = tensor;
    b->access = access;
    b->offset = 0;
    b->size = 0;
    b->kind = GLC_BIND_STORAGE;
}

void glc__plan_bind_texel_as(glc__dispatch_plan *d, int tensor, glc_binding_kind kind)
{
    glc__plan_bind(d, tensor, GLC_READ);
    d->bind[d->nbind - 1].kind = kind;
    if (!strstr(d->defines, "GLC_TEXEL")) /* the prelude enables buffer textures (kernel.c) */
        glc__define(d, "GLC_TEXEL", "1");
}

void glc__plan_bind_texel(glc__dispatch_plan *d, int tensor)
{
    glc__plan_bind_texel_as(d, tensor, GLC_BIND_TEXEL);
}

int glc__texel_worth(const glc__target *tg, uint64_t bytes)
{
    return bytes >= tg->texel_min;
}

int glc__texel_ok(const glc__target *tg, uint64_t bytes)
{
    return tg->features.texel_buffers && bytes > 0 && bytes % 16 == 0 &&
           bytes / 16 <= tg->limits.max_texel_buffer_size;
}

void glc__plan_param_at(glc__dispatch_plan *d, int slot, uint32_t v)
{
    d->params[slot] = v;
    if (d->nparams < slot + 1)
        d->nparams = slot + 1;
}

void glc__plan_paramf_at(glc__dispatch_plan *d, int slot, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    glc__plan_param_at(d, slot, u);
}
