/*
 * Data movement: get_rows, set_rows, copy (permute and convert), concat,
 * slice. Rules and plans here (GL-free); the kernels are glsl/copy.comp
 * (copy, slice and concat: one strided gather), glsl/get_rows.comp and
 * glsl/set_rows.comp.
 *
 * Args, as the eager entry points and the graph builders pack them
 * (tensors inputs first, then the output):
 *   GET_ROWS  t: table, ids, out. i[0]: the id of the table's first row (0;
 *             a piece of a split param: graph_split.c)
 *   SET_ROWS  t: src, ids, dst, out: dst (an input: the state before)
 *             and out (the state after, the same bytes: one view given
 *             twice eagerly, an alias of a handle in graphs). No scalars.
 *   COPY      t: x, out. a->copy: permuted 1 when a permutation is
 *             given (0: the identity), perm[0 .. rank).
 *   CONCAT    t: a, b, out. a->axis: axis (negative counts from the end).
 *   SLICE     t: x, out. a->axis: axis (negative counts from the end),
 *             start, len.
 * An output dtype of 0 (not chosen) becomes the input's (get_rows: F32).
 *
 * Every op here is exact: values are moved, or converted between F32,
 * F16 and BF16 with one round to nearest even (values of GGML blocks are
 * dequantized in f32 as GGML computes them: glsl/quant.glsl). Where the
 * source and destination dtypes agree, raw bits are moved (NaN payloads
 * survive).
 *
 * Outputs must not overlap inputs (the graph never places them so): an
 * invocation reads elements that another one writes.
 *
 * copy, slice and concat are one gather over the contiguous output: out
 * element (i0..i3) comes from source a at base + sum ik * sa[k], or (concat)
 * from b where i_axis >= split. The plan drops dims of extent 1 and merges
 * neighbouring dims whose source strides allow it, so any copy that is
 * contiguous in the end (a conversion, a slice of the outermost dim, a
 * concat on the outermost dim) runs as a 1-D copy with no index
 * arithmetic; the others (inner slices and concats, permutations that keep
 * the last dim) decompose the output index once per pair of elements; and
 * transposes (the source's contiguous dim moved away from the last) run in
 * 2-D tiles, so that both loads and stores come in whole runs.
 */
#include "op_run.h"

#include <stdio.h>
#include <string.h>

#define LOCAL 128      /* the ES 3.1 minimum of invocations: fits every device */
#define UNROLL 4       /* pairs per invocation (contiguous copy, float get_rows) */
#define UNROLL_IDX 1   /* ... where copy decomposes indices (ALU-bound: no gain from more) */
#define UNROLL_Q 2     /* 4-value units per invocation (quantized get_rows) */
#define VEC4_UNITS 4   /* vec4 units per invocation (llvmpipe, f32 get_rows) */
#define MAX_ELEMS 0xffffffffll /* element indices are u32 in the kernels */

static int is_float_rank(const glc__tensor *t, int lo, int hi)
{
    return glc__is_float(t->dtype) && t->rank >= lo && t->rank <= hi;
}

/* Element strides of a contiguous tensor. */
static void strides_of(const glc__tensor *t, int64_t s[GLC_MAX_DIMS])
{
    int64_t acc = 1;
    int i;
    for (i = t->rank - 1; i >= 0; i--) {
        s[i] = acc;
        acc *= t->shape[i];
    }
}

/* axis in [-rank, rank) to [0, rank); -1 when outside. */
static int norm_axis(int64_t axis, int rank)
{
    if (axis < 0)
        axis += rank;
    return axis >= 0 && axis < rank ? (int)axis : -1;
}

static glc_status check_count(char *err, size_t len, const char *op, const glc__tensor *t,
                              const char *what)
{
    char s[96];
    if (glc__numel(t) > MAX_ELEMS)
        return glc__op_error(err, len, op, "%s %s: %lld elements (at most 2^32 - 1)", what,
                             glc__shape_str(t, s, sizeof s), (long long)glc__numel(t));
    return GLC_OK;
}

/* ---- the gather behind copy, slice and concat ---- */

typedef struct gather {
    int nd;               /* dims after collapsing, 1..4 */
    int64_t n[4];         /* output extents, outermost first */
    int64_t sa[4], sb[4]; /* element strides of a and b per output dim */
    int axis;             /* dim where b takes over (two sources), else -1 */
    int64_t split;        /* index along axis where b starts */
    int64_t base;         /* element offset of a */
} gather;

/* Drops dims of extent 1 and merges dim j with j + 1 when both sources
 * step through them as one (stride[j] == stride[j+1] * n[j+1]); the concat
 * axis only absorbs inner dims (its split scales with them). */
static void collapse(gather *g)
{
    int i, j, k = 0, two = g->axis >= 0;
    for (i = 0; i < g->nd; i++) {
        if (g->n[i] == 1 && i != g->axis)
            continue;
        g->n[k] = g->n[i];
        g->sa[k] = g->sa[i];
        g->sb[k] = g->sb[i];
        if (i == g->axis)
            g->axis = k;
        k++;
    }
    if (k == 0) {
        g->n[0] = 1;
        g->sa[0] = g->sb[0] = 1;
        k = 1;
    }
    g->nd = k;
    for (j = g->nd - 2; j >= 0; j--) {
        if (j + 1 == g->axis || g->sa[j] != g->sa[j + 1] * g->n[j + 1] ||
            (two && g->sb[j] != g->sb[j + 1] * g->n[j + 1]))
            continue;
        if (j == g->axis)
            g->split *= g->n[j + 1];
        g->n[j] *= g->n[j + 1];
        g->sa[j] = g->sa[j + 1];
        g->sb[j] = g->sb[j + 1];
        for (i = j + 1; i < g->nd - 1; i++) {
            g->n[i] = g->n[i + 1];
            g->sa[i] = g->sa[i + 1];
            g->sb[i] = g->sb[i + 1];
        }
        if (g->axis > j + 1)
            g->axis--;
        g->nd--;
    }
}

/* One dispatch of copy.comp for gather g from t[0] (and t[1]) into t[out]. */
static void plan_gather(glc__op_plan *p, gather *g, const glc__op_args *a, int out)
{
    const glc__tensor *o = &a->t[out];
    uint64_t n = (uint64_t)glc__numel(o), pairs = (n + 1) / 2;
    int two = g->axis >= 0, i, pad, ndim, unroll, tk = -1, tkl, tile;
    int ta = (int)glc__kdtype_of(a->t[0].dtype);
    int tb = two ? (int)glc__kdtype_of(a->t[1].dtype) : ta, to = (int)glc__kdtype_of(o->dtype);
    int64_t n4[4], sa4[4], sb4[4];
    glc__dispatch_plan *d;
    collapse(g);
    /* concat: the axis absorbed every inner dim and no outer one, so it is
     * the last dim, which the kernel assumes */
    /* the kernel decomposes 1, 2 or 4 dims (3 as 4, the outer 1) */
    ndim = g->nd == 3 ? 4 : g->nd;
    pad = 4 - g->nd;
    for (i = 0; i < 4; i++) {
        n4[i] = i >= pad ? g->n[i - pad] : 1;
        sa4[i] = i >= pad ? g->sa[i - pad] : 0;
        sb4[i] = i >= pad && two ? g->sb[i - pad] : 0;
    }
    /* A transpose (the source's contiguous dim tk is not the output's
     * last): tiles of tkl (along tk: 32 bytes of the source) by
     * 2 LOCAL / tkl (along the last dim), so that a warp's loads cover
     * whole 32-byte runs of the source and its stores whole runs of the
     * output; a flat order would read one element per run. A 16-bit
     * output needs rows of whole words (even last dim). */
    for (i = 0; !two && ndim >= 2 && sa4[3] != 1 && i < 3; i++)
        if (sa4[i] == 1)
            tk = i;
    tkl = ta == 0 ? 8 : 16;
    tile = tk >= 0 && n4[3] >= 16 && n4[tk] >= tkl && (to == 0 || n4[3] % 2 == 0);
    unroll = ndim == 1 ? UNROLL : UNROLL_IDX;
    d = glc__plan_dispatch(p, "copy", LOCAL, pairs);
    d->groups = (pairs + (uint64_t)(LOCAL * unroll) - 1) / (uint64_t)(LOCAL * unroll);
    if (tile) {
        int64_t wt = (n4[3] + 2 * LOCAL / tkl - 1) / (2 * LOCAL / tkl);
        int64_t kt = (n4[tk] + tkl - 1) / tkl;
        int64_t rest = n4[0] * n4[1] * n4[2] / n4[tk];
        d->groups = (uint64_t)(rest * kt * wt);
        sb4[0] = n4[0]; /* the tiled kernel has no b: its slots carry the tiling */
        sb4[1] = wt;
        sb4[2] = kt;
    }
    if (d->groups == 0)
        d->groups = 1;
    glc__define_int(d, "TA", ta);
    glc__define_int(d, "TB", tb);
    glc__define_int(d, "TO", to);
    glc__define_int(d, "TWO", two);
    glc__define_int(d, "NDIM", ndim);
    /* a 1-D run of a 16-bit dtype, unconverted: word moves */
    glc__define_int(d, "WORDS", !two && ndim == 1 && sa4[3] == 1 && ta == to && to != 0);
    glc__define_int(d, "UNROLL", unroll);
    glc__define_int(d, "TILE", tile);
    if (tile) {
        glc__define_int(d, "TK", tk);
        glc__define_int(d, "TKL", tkl);
    }
    glc__plan_bind(d, 0, GLC_READ);
    if (two)
        glc__plan_bind(d, 1, GLC_READ);
    glc__plan_bind(d, out, GLC_WRITE);
    glc__plan_param_at(d, GLC__KP_COPY_N, (uint32_t)n);
    for (i = 1; i < 4; i++)
        glc__plan_param_at(d, GLC__KP_COPY_N1 - 1 + i, (uint32_t)n4[i]);
    for (i = 0; i < 4; i++) /* TILE's three sit in b's slots */
        glc__plan_param_at(d, GLC__KP_COPY_A_STRIDES + i, (uint32_t)sa4[i]);
    for (i = 0; i < 4; i++)
        glc__plan_param_at(d, GLC__KP_COPY_B_STRIDES + i, (uint32_t)(two || tile ? sb4[i] : 0));
    glc__plan_param_at(d, GLC__KP_COPY_SPLIT, (uint32_t)(two ? g->split : 0));
    glc__plan_param_at(d, GLC__KP_COPY_BASE, (uint32_t)g->base);
}

/* ---- copy ---- */

/* x float of rank 1..4; out float, x's dtype when not given. */
static glc_status float_in_out(const glc__tensor *x, glc__tensor *o, const char *op, char *err,
                               size_t len)
{
    char sx[96], so[96];
    if (!is_float_rank(x, 1, GLC_MAX_DIMS))
        return glc__op_error(err, len, op, "x %s: must be f32, f16 or bf16 of rank 1 to %d",
                             glc__shape_str(x, sx, sizeof sx), GLC_MAX_DIMS);
    if (o->dtype == 0)
        o->dtype = x->dtype;
    if (!glc__is_float(o->dtype))
        return glc__op_error(err, len, op, "x %s, out %s: storage must be f32, f16 or bf16",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(o, so, sizeof so));
    return GLC_OK;
}

static glc_status copy_infer(glc__op_args *a, char *err, size_t len)
{
    glc__tensor *x = &a->t[0], *o = &a->t[1];
    char sx[96], sp[64];
    int seen = 0, i;
    glc_status st;
    if ((st = float_in_out(x, o, "copy", err, len)) != GLC_OK)
        return st;
    if (a->copy.permuted) {
        sp[0] = '\0';
        for (i = 0; i < x->rank; i++) {
            size_t used = strlen(sp);
            snprintf(sp + used, sizeof sp - used, "%s%lld", i ? ", " : "",
                     (long long)a->copy.perm[i]);
        }
        for (i = 0; i < x->rank; i++) {
            int64_t v = a->copy.perm[i];
            if (v < 0 || v >= x->rank || (seen >> v & 1))
                return glc__op_error(err, len, "copy",
                                     "perm [%s] is not a permutation of the %d dims of x %s", sp,
                                     x->rank, glc__shape_str(x, sx, sizeof sx));
            seen |= 1 << v;
        }
    }
    o->rank = x->rank;
    for (i = 0; i < GLC_MAX_DIMS; i++)
        o->shape[i] = i < x->rank ? x->shape[a->copy.permuted ? a->copy.perm[i] : i] : 1;
    return check_count(err, len, "copy", x, "x");
}

/* A gather over x's dims, no axis, x's strides into xs (the caller sets
 * the extents g->n and source strides g->sa). */
static void gather_over(gather *g, const glc__tensor *x, int64_t xs[GLC_MAX_DIMS])
{
    memset(g, 0, sizeof *g);
    strides_of(x, xs);
    g->nd = x->rank;
    g->axis = -1;
}

static glc_status copy_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                            char *err, size_t len)
{
    const glc__tensor *x = &a->t[0];
    int64_t xs[GLC_MAX_DIMS];
    gather g;
    int i;
    (void)tg;
    (void)err;
    (void)len;
    gather_over(&g, x, xs);
    for (i = 0; i < x->rank; i++) {
        int from = a->copy.permuted ? (int)a->copy.perm[i] : i;
        g.n[i] = x->shape[from];
        g.sa[i] = xs[from];
    }
    plan_gather(p, &g, a, 1);
    return GLC_OK;
}

/* ---- slice ---- */

static glc_status slice_infer(glc__op_args *a, char *err, size_t len)
{
    glc__tensor *x = &a->t[0], *o = &a->t[1];
    char sx[96];
    int ax;
    glc_status st;
    if ((st = float_in_out(x, o, "slice", err, len)) != GLC_OK)
        return st;
    if ((ax = norm_axis(a->axis.axis, x->rank)) < 0)
        return glc__op_error(err, len, "slice", "axis %lld is out of range for x %s",
                             (long long)a->axis.axis, glc__shape_str(x, sx, sizeof sx));
    if (a->axis.start < 0 || a->axis.len < 1 || a->axis.start > x->shape[ax] - a->axis.len) {
        glc__op_error(err, len, "slice",
                      "x %s: [%lld, %lld + %lld) is not a non-empty range inside dim %d (%lld)",
                      glc__shape_str(x, sx, sizeof sx), (long long)a->axis.start,
                      (long long)a->axis.start, (long long)a->axis.len, ax,
                      (long long)x->shape[ax]);
        return GLC_ERR_BOUNDS;
    }
    o->rank = x->rank;
    memcpy(o->shape, x->shape, sizeof o->shape);
    o->shape[ax] = a->axis.len;
    return check_count(err, len, "slice", x, "x");
}

static glc_status slice_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                             char *err, size_t len)
{
    const glc__tensor *x = &a->t[0];
    int ax = norm_axis(a->axis.axis, x->rank), i;
    int64_t xs[GLC_MAX_DIMS];
    gather g;
    (void)tg;
    (void)err;
    (void)len;
    gather_over(&g, x, xs);
    for (i = 0; i < x->rank; i++) {
        g.n[i] = i == ax ? a->axis.len : x->shape[i];
        g.sa[i] = xs[i];
    }
    g.base = a->axis.start * xs[ax];
    plan_gather(p, &g, a, 1);
    return GLC_OK;
}

/* ---- concat ---- */

static glc_status concat_infer(glc__op_args *a, char *err, size_t len)
{
    glc__tensor *x = &a->t[0], *y = &a->t[1], *o = &a->t[2];
    char sx[96], sy[96], so[96];
    int ax, i;
    if (!is_float_rank(x, 1, GLC_MAX_DIMS) || !is_float_rank(y, 1, GLC_MAX_DIMS))
        return glc__op_error(err, len, "concat",
                             "a %s, b %s: must be f32, f16 or bf16 of rank 1 to %d",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(y, sy, sizeof sy),
                             GLC_MAX_DIMS);
    if (o->dtype == 0)
        o->dtype = x->dtype;
    if (!glc__is_float(o->dtype))
        return glc__op_error(err, len, "concat",
                             "a %s, b %s, out %s: storage must be f32, f16 or bf16",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(y, sy, sizeof sy),
                             glc__shape_str(o, so, sizeof so));
    if (x->rank != y->rank)
        return glc__op_error(err, len, "concat", "a %s and b %s differ in rank",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(y, sy, sizeof sy));
    if ((ax = norm_axis(a->axis.axis, x->rank)) < 0)
        return glc__op_error(err, len, "concat", "axis %lld is out of range for a %s",
                             (long long)a->axis.axis, glc__shape_str(x, sx, sizeof sx));
    for (i = 0; i < x->rank; i++)
        if (i != ax && x->shape[i] != y->shape[i])
            return glc__op_error(err, len, "concat",
                                 "a %s and b %s differ in dim %d (only dim %d, the axis, may)",
                                 glc__shape_str(x, sx, sizeof sx),
                                 glc__shape_str(y, sy, sizeof sy), i, ax);
    o->rank = x->rank;
    memcpy(o->shape, x->shape, sizeof o->shape);
    o->shape[ax] = x->shape[ax] + y->shape[ax];
    return check_count(err, len, "concat", o, "out");
}

static glc_status concat_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                              char *err, size_t len)
{
    const glc__tensor *x = &a->t[0], *y = &a->t[1], *o = &a->t[2];
    int ax = norm_axis(a->axis.axis, x->rank), i;
    int64_t xs[GLC_MAX_DIMS], ys[GLC_MAX_DIMS];
    gather g;
    (void)tg;
    (void)err;
    (void)len;
    memset(&g, 0, sizeof g);
    strides_of(x, xs);
    strides_of(y, ys);
    g.nd = o->rank;
    g.axis = ax;
    g.split = x->shape[ax];
    for (i = 0; i < o->rank; i++) {
        g.n[i] = o->shape[i];
        g.sa[i] = xs[i];
        g.sb[i] = ys[i];
    }
    plan_gather(p, &g, a, 2);
    return GLC_OK;
}

/* ---- get_rows ---- */

/* get_rows.comp's TT: the table's storage type, or -1 for a table dtype
 * it cannot read. */
static int table_format(glc_dtype d)
{
    return glc__is_float(d) || glc__is_block(d) ? (int)glc__kdtype_of(d) : -1;
}

static glc_status get_rows_infer(glc__op_args *a, char *err, size_t len)
{
    glc__tensor *t = &a->t[0], *ids = &a->t[1], *o = &a->t[2];
    char st_[96], si[96], so[96];
    int i;
    glc_status st;
    if (table_format(t->dtype) < 0 || t->rank != 2)
        return glc__op_error(err, len, "get_rows",
                             "table %s: must be [V, D] of f32, f16, bf16 or GGML blocks",
                             glc__shape_str(t, st_, sizeof st_));
    if (t->shape[1] % glc__dtype_block(t->dtype))
        return glc__op_error(err, len, "get_rows", "table %s: D must be whole blocks (%lld)",
                             glc__shape_str(t, st_, sizeof st_),
                             (long long)glc__dtype_block(t->dtype));
    if (a->i[0] < 0 || a->i[0] > INT32_MAX)
        return glc__op_error(err, len, "get_rows", "first row id %lld (0 to 2^31 - 1)",
                             (long long)a->i[0]);
    if (ids->dtype != GLC_DTYPE_I32 || ids->rank < 1 || ids->rank > GLC_MAX_DIMS - 1)
        return glc__op_error(err, len, "get_rows", "ids %s: must be i32 of rank 1 to %d",
                             glc__shape_str(ids, si, sizeof si), GLC_MAX_DIMS - 1);
    if (o->dtype == 0)
        o->dtype = GLC_DTYPE_F32;
    if (!glc__is_float(o->dtype))
        return glc__op_error(err, len, "get_rows",
                             "table %s, out %s: out must be f32, f16 or bf16",
                             glc__shape_str(t, st_, sizeof st_), glc__shape_str(o, so, sizeof so));
    o->rank = ids->rank + 1;
    for (i = 0; i < GLC_MAX_DIMS; i++)
        o->shape[i] = i < ids->rank ? ids->shape[i] : i == ids->rank ? t->shape[1] : 1;
    if ((st = check_count(err, len, "get_rows", t, "table")) != GLC_OK)
        return st;
    return check_count(err, len, "get_rows", o, "out");
}

static glc_status get_rows_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                                char *err, size_t len)
{
    const glc__tensor *t = &a->t[0], *o = &a->t[2];
    int fmt = table_format(t->dtype), quant = fmt >= GLC__T_Q8_0;
    /* llvmpipe: f32 rows of whole vec4s as vec4s (its JIT's fast form) */
    int vec4 = tg->is_llvmpipe && t->dtype == GLC_DTYPE_F32 && o->dtype == GLC_DTYPE_F32 &&
               t->shape[1] % 4 == 0;
    uint64_t n = (uint64_t)glc__numel(o), units = quant || vec4 ? n / 4 : (n + 1) / 2, tbytes;
    int unroll = quant ? UNROLL_Q : vec4 ? VEC4_UNITS : UNROLL;
    glc__dispatch_plan *d;
    (void)err;
    (void)len;
    d = glc__plan_dispatch(p, "get_rows", LOCAL, units);
    d->groups = (units + (uint64_t)(LOCAL * unroll) - 1) / (uint64_t)(LOCAL * unroll);
    if (d->groups == 0)
        d->groups = 1;
    glc__define_int(d, "TT", fmt);
    glc__define_t(d, "TO", o->dtype);
    glc__define_int(d, vec4 ? "VEC4" : "UNROLL", unroll);
    glc__plan_bind(d, 0, GLC_READ);
    glc__plan_bind(d, 1, GLC_READ);
    glc__plan_bind(d, 2, GLC_WRITE);
    /* llvmpipe: the table's words through RGBA32UI texels as well (a
     * gather, where its SSBO load is a loop over the lanes) */
    tbytes = (uint64_t)t->shape[0] * (uint64_t)glc_dtype_row_bytes(t->dtype, t->shape[1]);
    if (tg->is_llvmpipe && (vec4 || quant) && glc__texel_ok(tg, tbytes) &&
        glc__texel_worth(tg, n * 4)) {
        glc__define(d, "TEXEL", "1");
        glc__plan_bind_texel_as(d, 0, GLC_BIND_TEXEL_UINT);
    }
    glc__plan_param_at(d, GLC__KP_GET_ROWS_UNITS, (uint32_t)units);
    glc__plan_param_at(d, GLC__KP_GET_ROWS_D, (uint32_t)t->shape[1]);
    glc__plan_param_at(d, GLC__KP_GET_ROWS_V, (uint32_t)t->shape[0]);
    glc__plan_param_at(d, GLC__KP_GET_ROWS_ROW_BYTES, (uint32_t)glc_dtype_row_bytes(t->dtype, t->shape[1]));
    glc__plan_param_at(d, GLC__KP_GET_ROWS_N, (uint32_t)n);
    glc__plan_param_at(d, GLC__KP_GET_ROWS_ROW0, (uint32_t)a->i[0]);
    return GLC_OK;
}

/* ---- set_rows ---- */

static glc_status set_rows_infer(glc__op_args *a, char *err, size_t len)
{
    glc__tensor *src = &a->t[0], *ids = &a->t[1], *dst = &a->t[2];
    char ss[96], si[96], sd[96];
    int i;
    glc_status st;
    if (!is_float_rank(src, 2, GLC_MAX_DIMS) || !is_float_rank(dst, 2, GLC_MAX_DIMS))
        return glc__op_error(err, len, "set_rows",
                             "src %s, dst %s: must be f32, f16 or bf16 [rows, ...] of rank 2 "
                             "to %d",
                             glc__shape_str(src, ss, sizeof ss), glc__shape_str(dst, sd, sizeof sd),
                             GLC_MAX_DIMS);
    for (i = 1; i < src->rank; i++)
        if (src->rank != dst->rank || src->shape[i] != dst->shape[i])
            return glc__op_error(err, len, "set_rows",
                                 "src %s and dst %s: rows differ (all dims but the first must "
                                 "match)",
                                 glc__shape_str(src, ss, sizeof ss),
                                 glc__shape_str(dst, sd, sizeof sd));
    if (ids->dtype != GLC_DTYPE_I32 || ids->rank != 1 || ids->shape[0] != src->shape[0])
        return glc__op_error(err, len, "set_rows", "ids %s do not fit src %s (i32 [%lld] wanted)",
                             glc__shape_str(ids, si, sizeof si), glc__shape_str(src, ss, sizeof ss),
                             (long long)src->shape[0]);
    if ((st = check_count(err, len, "set_rows", src, "src")) != GLC_OK ||
        (st = check_count(err, len, "set_rows", dst, "dst")) != GLC_OK)
        return st;
    /* the output is dst after the write: same bytes (aliased in graphs) */
    a->t[3].dtype = dst->dtype;
    a->t[3].rank = dst->rank;
    memcpy(a->t[3].shape, dst->shape, sizeof dst->shape);
    return GLC_OK;
}

static glc_status set_rows_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                                char *err, size_t len)
{
    const glc__tensor *src = &a->t[0], *dst = &a->t[3];
    int64_t rows = src->shape[0], d = glc__numel(src) / rows, u = (d + 1) / 2;
    glc__dispatch_plan *dp;
    (void)tg;
    (void)err;
    (void)len;
    dp = glc__plan_dispatch(p, "set_rows", LOCAL, (uint64_t)(rows * u));
    glc__define_t(dp, "TS", src->dtype);
    glc__define_t(dp, "TD", dst->dtype);
    glc__plan_bind(dp, 0, GLC_READ);
    glc__plan_bind(dp, 1, GLC_READ);
    glc__plan_bind(dp, 3, GLC_WRITE);
    glc__plan_param_at(dp, GLC__KP_SET_ROWS_UNITS, (uint32_t)(rows * u));
    glc__plan_param_at(dp, GLC__KP_SET_ROWS_U, (uint32_t)u);
    glc__plan_param_at(dp, GLC__KP_SET_ROWS_D, (uint32_t)d);
    glc__plan_param_at(dp, GLC__KP_SET_ROWS_V, (uint32_t)dst->shape[0]);
    return GLC_OK;
}

const glc__op_desc glc__op_GET_ROWS_desc = {"get_rows", get_rows_infer, get_rows_plan};
const glc__op_desc glc__op_SET_ROWS_desc = {"set_rows", set_rows_infer, set_rows_plan};
const glc__op_desc glc__op_COPY_desc = {"copy", copy_infer, copy_plan};
const glc__op_desc glc__op_CONCAT_desc = {"concat", concat_infer, concat_plan};
const glc__op_desc glc__op_SLICE_desc = {"slice", slice_infer, slice_plan};

/* ---- eager entry points ---- */

glc_status glc_op_get_rows(glc_session *s, glc_view table, glc_view ids, glc_view out)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_GET_ROWS, 2, 1);
    return glc__op_run(s, &args, (glc_view[]){table, ids, out}, NULL);
}

glc_status glc_op_set_rows(glc_session *s, glc_view src, glc_view ids, glc_view dst)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_SET_ROWS, 3, 1);
    /* dst read as the state before, written as the state after */
    return glc__op_run(s, &args, (glc_view[]){src, ids, dst, dst}, NULL);
}

void glc__pack_copy(glc__op_args *a, const int *perm, int rank)
{
    int i;
    a->copy.permuted = perm != NULL;
    for (i = 0; perm && i < rank && i < GLC_MAX_DIMS; i++)
        a->copy.perm[i] = perm[i];
}

void glc__pack_concat(glc__op_args *a, int axis) { a->axis.axis = axis; }

void glc__pack_slice(glc__op_args *a, int axis, int64_t start, int64_t len)
{
    a->axis.axis = axis;
    a->axis.start = start;
    a->axis.len = len;
}

glc_status glc_op_copy(glc_session *s, glc_view x, const int *perm, glc_view out)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_COPY, 1, 1);
    glc__pack_copy(&args, perm, x.rank);
    return glc__op_run(s, &args, (glc_view[]){x, out}, NULL);
}

glc_status glc_op_concat(glc_session *s, glc_view a, glc_view b, int axis, glc_view out)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_CONCAT, 2, 1);
    glc__pack_concat(&args, axis);
    return glc__op_run(s, &args, (glc_view[]){a, b, out}, NULL);
}

glc_status glc_op_slice(glc_session *s, glc_view x, int axis, int64_t start, glc_view out)
{
    glc__op_args args;
    int ax = x.rank >= 1 && x.rank <= GLC_MAX_DIMS ? norm_axis(axis, x.rank) : -1;
    glc__op_args_init(&args, GLC__OP_SLICE, 1, 1);
    /* the length is the output's extent on the axis (the rule then checks
     * the range, and glc__op_run the other dims) */
    glc__pack_slice(&args, axis, start, ax >= 0 && out.rank == x.rank ? out.shape[ax] : 1);
    return glc__op_run(s, &args, (glc_view[]){x, out}, NULL);
}
