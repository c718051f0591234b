/*
 * Rotary position embedding (rope): rules and plan here (GL-free), the
 * kernel in glsl/rope.comp (llvmpipe's f32 form: glsl/rope4.comp; rope_qkv,
 * a fusion's: glsl/rope_qkv.comp).
 *
 * x and out are [T, H, D] or [B, T, H, D]; a row is one head of one token,
 * D elements. Its first rope_dim elements rotate in pairs by
 * theta_i = pos * base^(-2i / rope_dim) (/ freq_factors[i]); NORMAL pairs
 * are (2i, 2i + 1), NEOX pairs (i, i + rope_dim/2); the rest are copied.
 *
 * An invocation owns whole pairs, so in place (x and out one view) is safe:
 * every element is read and written by the one invocation that owns it.
 * When every unit's outputs are whole 16-bit words (D even, and for NEOX
 * rope_dim/2 even: units of two pairs) the kernel stores words; otherwise
 * (odd D, odd half) a 16-bit output is stored half-word with atomics.
 */
#include "op_run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LOCAL 128 /* the ES 3.1 minimum of invocations: fits every device */
#define ROPE4_LOOP_OVERHEAD 16 /* rope4's loop iterations besides the heads' */

static glc_status rope_infer(glc__op_args *a, char *err, size_t len)
{
    glc__tensor *x = &a->t[0], *pos = &a->t[1], *ff = &a->t[2], *o = &a->t[3];
    char sx[96], sp[96];
    int64_t d, rd, t;
    if (!glc__is_float(x->dtype) || (x->rank != 3 && x->rank != 4))
        return glc__op_error(err, len, "rope", "x %s: must be float [T, H, D] or [B, T, H, D]",
                             glc__shape_str(x, sx, sizeof sx));
    d = x->shape[x->rank - 1];
    t = x->shape[x->rank - 3];
    rd = a->rope.dim ? a->rope.dim : d;
    if (a->rope.mode != GLC_ROPE_NORMAL && a->rope.mode != GLC_ROPE_NEOX)
        return glc__op_error(err, len, "rope", "%lld is not a glc_rope_mode",
                             (long long)a->rope.mode);
    if (rd < 0 || rd % 2 || rd > d)
        return glc__op_error(err, len, "rope",
                             "x %s: rope_dim %lld must be even and in [0, %lld] (0: D)",
                             glc__shape_str(x, sx, sizeof sx), (long long)rd, (long long)d);
    if (!(a->rope.base >= 0) || !isfinite(a->rope.base))
        return glc__op_error(err, len, "rope", "base %g: must be > 0 (0: 10000)",
                             (double)a->rope.base);
    if (pos->dtype != GLC_DTYPE_I32 || pos->rank != 1 || pos->shape[0] != t)
        return glc__op_error(err, len, "rope", "positions %s do not fit x %s (i32 [%lld] wanted)",
                             glc__shape_str(pos, sp, sizeof sp), glc__shape_str(x, sx, sizeof sx),
                             (long long)t);
    if (ff->present && (ff->dtype != GLC_DTYPE_F32 || ff->rank != 1 || ff->shape[0] != rd / 2))
        return glc__op_error(err, len, "rope",
                             "freq_factors %s do not fit rope_dim %lld (f32 [%lld] wanted)",
                             glc__shape_str(ff, sp, sizeof sp), (long long)rd,
                             (long long)(rd / 2));
    if (o->dtype == 0)
        o->dtype = x->dtype;
    if (!glc__is_float(o->dtype))
        return glc__op_error(err, len, "rope", "x %s, out %s: storage must be f32, f16 or bf16",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(o, sp, sizeof sp));
    if (glc__numel(x) > 0xffffffffll)
        return glc__op_error(err, len, "rope", "x %s: %lld elements (at most 2^32 - 1)",
                             glc__shape_str(x, sx, sizeof sx), (long long)glc__numel(x));
    o->rank = x->rank;
    memcpy(o->shape, x->shape, sizeof o->shape);
    return GLC_OK;
}

/* The bindings rope.comp and rope4.comp share: x, the positions, the
 * freq_factors (when present), then tensor `out`, written. */
static void rope_binds(glc__dispatch_plan *dp, const glc__op_args *a, int out)
{
    glc__plan_bind(dp, 0, GLC_READ);
    glc__plan_bind(dp, 1, GLC_READ);
    if (a->t[2].present)
        glc__plan_bind(dp, 2, GLC_READ);
    glc__plan_bind(dp, out, GLC_WRITE);
}

/* The params rope.comp and rope4.comp share: `total` units, `units` a row
 * (rope4: a token), `rot` of them rotating; the shape, rope_dim and theta
 * step from a. */
static void rope_params(glc__dispatch_plan *dp, const glc__op_args *a, uint64_t total,
                        int64_t units, int64_t rot)
{
    const glc__tensor *x = &a->t[0];
    int64_t d = x->shape[x->rank - 1], rd = a->rope.dim ? a->rope.dim : d;
    double base = a->rope.base != 0 ? a->rope.base : 10000.0;
    glc__plan_param_at(dp, GLC__KP_ROPE_UNITS, (uint32_t)total);
    glc__plan_param_at(dp, GLC__KP_ROPE_ROW_UNITS, (uint32_t)units);
    glc__plan_param_at(dp, GLC__KP_ROPE_ROT, (uint32_t)rot);
    glc__plan_param_at(dp, GLC__KP_ROPE_H, (uint32_t)x->shape[x->rank - 2]);
    glc__plan_param_at(dp, GLC__KP_ROPE_T, (uint32_t)x->shape[x->rank - 3]);
    glc__plan_param_at(dp, GLC__KP_ROPE_D, (uint32_t)d);
    glc__plan_param_at(dp, GLC__KP_ROPE_ROPE_DIM, (uint32_t)rd);
    glc__plan_paramf_at(dp, GLC__KP_ROPE_THETA_STEP, (float)(-2.0 * log2(base) / (double)rd));
}

/* llvmpipe's form (glsl/rope4.comp): f32 x and out in whole quads, an
 * invocation looping over a token's heads (its cosines and sines taken
 * once a token), x read as texels when they are worth it. 2 cores, 4096
 * tokens x 32 heads x 128 NEOX: rope.comp 3.3 GB/s (7% of memcpy), this
 * 10-12 GB/s (22-32%; bench/RESULTS.md). Not past the loop budget, not
 * for rope_rows. */
static int rope4_form(const glc__op_args *a, const glc__target *tg, int out)
{
    const glc__tensor *x = &a->t[0];
    int64_t d = x->shape[x->rank - 1], h = x->shape[x->rank - 2];
    int64_t rd = a->rope.dim ? a->rope.dim : d;
    uint64_t budget = glc__loop_budget(tg);
    return tg->is_llvmpipe && x->dtype == GLC_DTYPE_F32 && a->t[out].dtype == GLC_DTYPE_F32 &&
           d % 4 == 0 && rd % (a->rope.mode == GLC_ROPE_NEOX ? 8 : 4) == 0 &&
           (!budget || (uint64_t)h + ROPE4_LOOP_OVERHEAD <= budget);
}

static void plan_rope4(const glc__op_args *a, const glc__target *tg, glc__op_plan *p)
{
    const glc__tensor *x = &a->t[0];
    int64_t d = x->shape[x->rank - 1], h = x->shape[x->rank - 2];
    int64_t rd = a->rope.dim ? a->rope.dim : d, tokens = glc__numel(x) / d / h;
    int neox = a->rope.mode == GLC_ROPE_NEOX;
    int64_t rot = neox ? rd / 8 : rd / 4, units = rot + (d - rd) / 4;
    uint64_t bytes = (uint64_t)glc__numel(x) * 4;
    glc__dispatch_plan *dp = glc__plan_dispatch(p, "rope4", LOCAL, (uint64_t)(tokens * units));
    glc__define_int(dp, "NEOX", neox);
    glc__define_int(dp, "HAS_FF", a->t[2].present);
    rope_binds(dp, a, 3);
    /* x through a buffer texture as well, its SSBO binding kept */
    if (glc__texel_ok(tg, bytes) && glc__texel_worth(tg, bytes)) {
        glc__define(dp, "TEXEL", "1");
        glc__plan_bind_texel(dp, 0);
    }
    rope_params(dp, a, (uint64_t)(tokens * units), units, rot);
}

/* out: the output's tensor index; cache_rows: rows of the cache the rows
 * go to (rope_rows), 0 for plain rope. */
static void plan_rope(const glc__op_args *a, glc__op_plan *p, int out, int64_t cache_rows)
{
    const glc__tensor *x = &a->t[0];
    int64_t d = x->shape[x->rank - 1];
    int64_t rd = a->rope.dim ? a->rope.dim : d, half = rd / 2, rows = glc__numel(x) / d;
    int neox = a->rope.mode == GLC_ROPE_NEOX;
    int aligned = d % 2 == 0 && (!neox || half % 2 == 0);
    int rw = aligned && neox ? 2 : 1, tw = aligned ? 2 : 1;
    int64_t rot = half / rw, units = rot + (d - rd) / tw;
    glc__dispatch_plan *dp;
    dp = glc__plan_dispatch(p, "rope", LOCAL, (uint64_t)(rows * units));
    glc__define_t(dp, "TX", x->dtype);
    glc__define_t(dp, "TO", a->t[out].dtype);
    if (cache_rows)
        glc__define(dp, "OUT_ROWS", "1");
    glc__define_int(dp, "NEOX", neox);
    glc__define_int(dp, "ALIGNED", aligned);
    glc__define_int(dp, "HAS_FF", a->t[2].present);
    rope_binds(dp, a, out);
    rope_params(dp, a, (uint64_t)(rows * units), units, rot);
    if (cache_rows)
        glc__plan_param_at(dp, GLC__KP_ROPE_CACHE_ROWS, (uint32_t)cache_rows);
}

static glc_status rope_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                            char *err, size_t len)
{
    (void)err;
    (void)len;
    if (rope4_form(a, tg, 3))
        plan_rope4(a, tg, p);
    else
        plan_rope(a, p, 3, 0);
    return GLC_OK;
}

/* rope_rows (internal: the fusion of set_rows(cache, rope(x, pos), pos)):
 * tensors x [T, H, D], pos, freq_factors, cache [S, H, D] (the state
 * before), out (the state after: the same bytes); the rotated row of token
 * t goes to cache row pos[t] (positions outside [0, S) are skipped, as
 * set_rows skips them). Scalars as rope's. */
static glc_status rope_rows_infer(glc__op_args *a, char *err, size_t len)
{
    glc__op_args r = *a;
    const glc__tensor *x = &a->t[0], *c = &a->t[3];
    char sx[96], sc[96];
    glc_status st;
    r.nin = 3;
    r.t[3] = a->t[4];
    r.t[3].dtype = c->dtype;
    if ((st = rope_infer(&r, err, len)) != GLC_OK)
        return st;
    if (x->rank != 3 || c->rank != 3 || c->shape[1] != x->shape[1] || c->shape[2] != x->shape[2] ||
        !glc__is_float(c->dtype) || (c->dtype != GLC_DTYPE_F32 && x->shape[2] % 2))
        return glc__op_error(err, len, "rope_rows", "x %s does not fit the rows of cache %s",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(c, sc, sizeof sc));
    a->t[4] = *c;
    a->t[4].present = 1;
    return GLC_OK;
}

static glc_status rope_rows_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                                 char *err, size_t len)
{
    (void)tg;
    (void)err;
    (void)len;
    plan_rope(a, p, 4, a->t[3].shape[0]);
    return GLC_OK;
}

/* rope_qkv (internal: the fusion of rope(q, pos), rope_rows(k -> kcache)
 * and set_rows(vcache, v, pos), one decode layer's attention prologue):
 * tensors q [T, Hq, D] (rotated in place: the graph's rope output becomes
 * an alias of q), k [T, Hk, D], v [T, ...], pos, freq_factors, kcache
 * [S, Hk, D] (written: rope_rows' rows), vcache [S', ...] (the state
 * before), out (vcache after: the same bytes). Token t's rotated k row
 * goes to kcache row pos[t], its v row (all of v's dims after the first)
 * to vcache row pos[t]; positions outside a cache are skipped. One grid
 * covers the q, k and v units. Scalars as rope's. */
static glc_status rope_qkv_infer(glc__op_args *a, char *err, size_t len)
{
    glc__op_args r = *a;
    const glc__tensor *q = &a->t[0], *k = &a->t[1], *v = &a->t[2], *vc = &a->t[6];
    char sq[96], sv[96];
    int64_t vd;
    int i;
    glc_status st;
    /* q: a rope in place */
    r.nin = 3;
    r.t[1] = a->t[3];
    r.t[2] = a->t[4];
    r.t[3] = *q;
    r.t[3].present = 1;
    if ((st = rope_infer(&r, err, len)) != GLC_OK)
        return st;
    /* k: a rope_rows into kcache */
    r = *a;
    r.nin = 4;
    r.t[0] = a->t[1];
    r.t[1] = a->t[3];
    r.t[2] = a->t[4];
    r.t[3] = a->t[5];
    r.t[4].dtype = 0;
    if ((st = rope_rows_infer(&r, err, len)) != GLC_OK)
        return st;
    if (q->rank != 3 || q->shape[0] != k->shape[0] || q->shape[2] != k->shape[2])
        return glc__op_error(err, len, "rope_qkv", "q %s and k: T and D differ",
                             glc__shape_str(q, sq, sizeof sq));
    /* v: a set_rows into vcache, a row per token */
    vd = v->rank >= 2 ? glc__numel(v) / v->shape[0] : 0;
    if (!glc__is_float(v->dtype) || !glc__is_float(vc->dtype) || v->rank != vc->rank ||
        v->rank < 2 || v->shape[0] != k->shape[0] || (vc->dtype != GLC_DTYPE_F32 && vd % 2) ||
        glc__numel(v) > 0xffffffffll || glc__numel(vc) > 0xffffffffll)
        return glc__op_error(err, len, "rope_qkv", "v %s does not fit the rows of cache %s",
                             glc__shape_str(v, sv, sizeof sv), glc__shape_str(vc, sq, sizeof sq));
    for (i = 1; i < v->rank; i++)
        if (v->shape[i] != vc->shape[i])
            return glc__op_error(err, len, "rope_qkv", "v %s does not fit the rows of cache %s",
                                 glc__shape_str(v, sv, sizeof sv),
                                 glc__shape_str(vc, sq, sizeof sq));
    a->t[7] = *vc;
    a->t[7].present = 1;
    return GLC_OK;
}

static glc_status rope_qkv_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                                char *err, size_t len)
{
    const glc__tensor *q = &a->t[0], *k = &a->t[1], *v = &a->t[2], *kc = &a->t[5];
    const glc__tensor *vc = &a->t[7];
    int64_t t = q->shape[0], hq = q->shape[1], hk = k->shape[1], d = q->shape[2];
    int64_t rd = a->rope.dim ? a->rope.dim : d, half = rd / 2;
    int64_t vd = glc__numel(v) / t, vw = vd % 2 ? 1 : 2;
    int neox = a->rope.mode == GLC_ROPE_NEOX;
    int aligned = d % 2 == 0 && (!neox || half % 2 == 0);
    int rw = aligned && neox ? 2 : 1, tw = aligned ? 2 : 1;
    int64_t rot = half / rw, units = rot + (d - rd) / tw;
    int64_t qend = t * hq * units, kend = qend + t * hk * units, total = kend + t * (vd / vw);
    double base = a->rope.base != 0 ? a->rope.base : 10000.0;
    glc__dispatch_plan *dp;
    (void)tg;
    if (total > 0xffffffffll)
        return glc__op_error(err, len, "rope_qkv", "%lld work items (at most 2^32 - 1)",
                             (long long)total);
    dp = glc__plan_dispatch(p, "rope_qkv", LOCAL, (uint64_t)total);
    glc__define_t(dp, "TQ", q->dtype);
    glc__define_t(dp, "TK", k->dtype);
    glc__define_t(dp, "TV", v->dtype);
    glc__define_t(dp, "TKC", kc->dtype);
    glc__define_t(dp, "TVC", vc->dtype);
    glc__define_int(dp, "NEOX", neox);
    glc__define_int(dp, "ALIGNED", aligned);
    glc__define_int(dp, "HAS_FF", a->t[4].present);
    glc__define_int(dp, "VW", vw);
    glc__plan_bind(dp, 0, GLC_READ_WRITE);
    glc__plan_bind(dp, 1, GLC_READ);
    glc__plan_bind(dp, 2, GLC_READ);
    glc__plan_bind(dp, 3, GLC_READ);
    if (a->t[4].present)
        glc__plan_bind(dp, 4, GLC_READ);
    glc__plan_bind(dp, 5, GLC_WRITE);
    glc__plan_bind(dp, 7, GLC_WRITE);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_Q_END, (uint32_t)qend);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_K_END, (uint32_t)kend);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_UNITS, (uint32_t)total);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_ROW_UNITS, (uint32_t)units);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_ROT, (uint32_t)rot);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_HQ, (uint32_t)hq);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_HK, (uint32_t)hk);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_T, (uint32_t)t);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_D, (uint32_t)d);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_ROPE_DIM, (uint32_t)rd);
    glc__plan_paramf_at(dp, GLC__KP_ROPE_QKV_THETA_STEP, (float)(-2.0 * log2(base) / (double)rd));
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_K_ROWS, (uint32_t)kc->shape[0]);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_V_ROWS, (uint32_t)vc->shape[0]);
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_V_UNITS, (uint32_t)(vd / vw));
    glc__plan_param_at(dp, GLC__KP_ROPE_QKV_VD, (uint32_t)vd);
    return GLC_OK;
}

const glc__op_desc glc__op_ROPE_desc = {"rope", rope_infer, rope_plan};
const glc__op_desc glc__op_ROPE_ROWS_desc = {"rope_rows", rope_rows_infer, rope_rows_plan};
const glc__op_desc glc__op_ROPE_QKV_desc = {"rope_qkv", rope_qkv_infer, rope_qkv_plan};

void glc__pack_rope(glc__op_args *a, const glc_rope_desc *desc)
{
    a->rope.mode = desc ? desc->mode : GLC_ROPE_NORMAL;
    a->rope.dim = desc ? desc->rope_dim : 0;
    a->rope.base = desc ? desc->base : 0.0f;
}

glc_status glc_op_rope(glc_session *s, glc_view x, glc_view positions, const glc_rope_desc *desc,
                       glc_view out)
{
    glc__op_args args;
    glc_view v[4];
    v[0] = x;
    v[1] = positions;
    memset(&v[2], 0, sizeof v[2]);
    v[3] = out;
    glc__op_args_init(&args, GLC__OP_ROPE, 3, 1);
    glc__pack_rope(&args, desc);
    if (desc)
        v[2] = desc->freq_factors;
    return glc__op_run(s, &args, v, NULL);
}
