/*
 * Row ops along the last dim: softmax (scale, causal mask), rms_norm,
 * layer_norm, sum, mean, argmax. Rules and plans here (GL-free), the
 * kernel in glsl/reduce.comp.
 *
 * Every dim but the last is a row. A row is handled by a team of TS
 * invocations (a power of two); short rows share a work group (local / TS
 * rows per group), long rows get the whole group. Elements go in pairs
 * aligned to even global indices, so a 16-bit row is written a word at a
 * time and only a word shared with the next row needs atomics.
 *
 * Variants, chosen in plan():
 *  - PER 4: each invocation keeps its 4 pairs of the row in registers, so
 *    the row is read once (softmax and norms of rows up to 8 * local
 *    elements: 8192 wide at local 1024). Not on llvmpipe (see choose()).
 *  - PER 0: a loop over the row; softmax (online max and sum) and the
 *    norms read it twice, sum/mean/argmax once. Long rows (151936-wide vocab
 *    rows) take this path with the largest group the device allows.
 *  - Team reductions: subgroupAdd/Max/Min then one barrier, when the
 *    device has subgroups and the team is the whole group; otherwise a
 *    shared-memory tree down to 8 partials summed serially.
 * Rows past the group limit go through the runner's grid folding; every
 * count is a u32, so an op covers at most 2^32 - 1 elements.
 *
 * A device may cap the loop iterations of one invocation (llvmpipe: 65535;
 * glc__loop_budget). A row too long for a team's lanes under that cap is
 * cut into segments: a first dispatch writes each segment's partial (sum,
 * max and sum of exp, the index of its maximum) into the op's scratch, a
 * second merges them (and, for softmax and the norms, writes each segment
 * with its row's merged statistics).
 */
#include "op_run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PAIRS_PER_LANE 4 /* aim: 8 elements per invocation before widening the team */
#define PER 4            /* pairs one invocation keeps in registers */
#define LOCAL_ROWS 128   /* group size for short rows, several rows a group */
#define LOCAL_MAX 1024   /* the widest team (GPU) */
#define LOCAL_LLVMPIPE 64


static const char *op_name(const glc__op_args *a) { return glc__ops[a->op]->name; }

static void row_dims(const glc__tensor *x, int64_t *rows, int64_t *n)
{
    *n = x->shape[x->rank - 1];
    *rows = glc__numel(x) / *n;
}

static glc_status check_x(const glc__op_args *a, char *err, size_t len)
{
    const glc__tensor *x = &a->t[0];
    char sx[96];
    if (!glc__is_float(x->dtype))
        return glc__op_error(err, len, op_name(a), "x %s: storage must be f32, f16 or bf16",
                             glc__shape_str(x, sx, sizeof sx));
    if (glc__numel(x) > 0xffffffffll)
        return glc__op_error(err, len, op_name(a), "x %s: %lld elements (at most 2^32 - 1)",
                             glc__shape_str(x, sx, sizeof sx), (long long)glc__numel(x));
    return GLC_OK;
}

/* out keeps its given float dtype (x's when unset) and takes x's shape. */
static glc_status same_shape_out(glc__op_args *a, char *err, size_t len)
{
    glc__tensor *x = &a->t[0], *o = &a->t[a->nin];
    char sx[96], so[96];
    if (o->dtype == 0)
        o->dtype = x->dtype;
    if (!glc__is_float(o->dtype))
        return glc__op_error(err, len, op_name(a), "x %s, out %s: storage must be f32, f16 or bf16",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(o, so, sizeof so));
    o->rank = x->rank;
    memcpy(o->shape, x->shape, sizeof o->shape);
    return GLC_OK;
}

static glc_status softmax_infer(glc__op_args *a, char *err, size_t len)
{
    glc_status st = check_x(a, err, len);
    return st != GLC_OK ? st : same_shape_out(a, err, len);
}

/* weight / bias of the norms: absent, or float [n]. */
static glc_status check_vec(const glc__op_args *a, int idx, const char *what, char *err,
                            size_t len)
{
    const glc__tensor *x = &a->t[0], *v = &a->t[idx];
    char sx[96], sv[96];
    if (!v->present)
        return GLC_OK;
    if (!glc__is_float(v->dtype) || v->rank != 1 || v->shape[0] != x->shape[x->rank - 1])
        return glc__op_error(err, len, op_name(a), "%s %s does not fit x %s (float [%lld] wanted)",
                             what, glc__shape_str(v, sv, sizeof sv), glc__shape_str(x, sx, sizeof sx),
                             (long long)x->shape[x->rank - 1]);
    return GLC_OK;
}

static glc_status norm_infer(glc__op_args *a, char *err, size_t len)
{
    glc_status st = check_x(a, err, len);
    if (st == GLC_OK)
        st = check_vec(a, 1, "weight", err, len);
    if (st == GLC_OK && a->op == GLC__OP_LAYER_NORM)
        st = check_vec(a, 2, "bias", err, len);
    if (st == GLC_OK && !(a->norm.eps >= 0 && isfinite(a->norm.eps)))
        st = glc__op_error(err, len, op_name(a), "eps %g: must be >= 0 and finite",
                           (double)a->norm.eps);
    return st != GLC_OK ? st : same_shape_out(a, err, len);
}

/* add_rms_norm (fusion of h = x + r and rms_norm(h, w)): x, r f32 of one
 * shape, w optional; out f32 [noff + numel] holds h at element 0 and the
 * norm at element noff = a->norm.at (even, >= numel at the variables' maxima,
 * so the two never overlap whatever the current row count). */
static glc_status add_norm_infer(glc__op_args *a, char *err, size_t len)
{
    const glc__tensor *x = &a->t[0], *r = &a->t[1];
    glc__tensor *o = &a->t[3];
    char sx[96], sr[96];
    glc_status st = check_x(a, err, len);
    if (st == GLC_OK)
        st = check_vec(a, 2, "weight", err, len);
    if (st != GLC_OK)
        return st;
    if (x->dtype != GLC_DTYPE_F32 || !glc__same_shape(x, r) || r->dtype != GLC_DTYPE_F32)
        return glc__op_error(err, len, "add_rms_norm", "x %s and r %s: must be f32 of one shape",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(r, sr, sizeof sr));
    if (a->norm.at < glc__numel(x) || a->norm.at % 2 || a->norm.at + glc__numel(x) > 0xffffffffll)
        return glc__op_error(err, len, "add_rms_norm", "x %s: norm offset %lld too small or odd",
                             glc__shape_str(x, sx, sizeof sx), (long long)a->norm.at);
    o->dtype = GLC_DTYPE_F32;
    o->rank = 1;
    o->shape[0] = a->norm.at + glc__numel(x);
    o->shape[1] = o->shape[2] = o->shape[3] = 1;
    return GLC_OK;
}

/* sum, mean, argmax: out is x's shape without the last dim ([1] for rank 1). */
static glc_status reduce_infer(glc__op_args *a, char *err, size_t len)
{
    glc__tensor *x = &a->t[0], *o = &a->t[1];
    char sx[96], so[96];
    glc_status st = check_x(a, err, len);
    int i;
    if (st != GLC_OK)
        return st;
    if (a->op == GLC__OP_ARGMAX) {
        if (o->dtype == 0)
            o->dtype = GLC_DTYPE_I32;
        if (o->dtype != GLC_DTYPE_I32 && o->dtype != GLC_DTYPE_U32)
            return glc__op_error(err, len, op_name(a), "x %s, out %s: out must be i32 or u32",
                                 glc__shape_str(x, sx, sizeof sx), glc__shape_str(o, so, sizeof so));
    } else {
        if (o->dtype == 0)
            o->dtype = x->dtype;
        if (!glc__is_float(o->dtype))
            return glc__op_error(err, len, op_name(a),
                                 "x %s, out %s: storage must be f32, f16 or bf16",
                                 glc__shape_str(x, sx, sizeof sx), glc__shape_str(o, so, sizeof so));
    }
    o->rank = x->rank > 1 ? x->rank - 1 : 1;
    for (i = 0; i < GLC_MAX_DIMS; i++)
        o->shape[i] = x->rank > 1 && i < x->rank - 1 ? x->shape[i] : 1;
    return GLC_OK;
}

static uint32_t pow2_at_most(uint64_t v)
{
    uint32_t p = 1;
    while ((uint64_t)p * 2 <= v && p < (1u << 30))
        p <<= 1;
    return p;
}

typedef struct row_cfg {
    uint32_t local, ts, per;
    int row4; /* glsl/reduce_row4.comp: a row an invocation in vec4s (llvmpipe) */
    int texel, texel_w; /* row4 reads the rows, the weight through buffer textures */
} row_cfg;

/* Team size, group size and registers for rows of n elements. Few
 * variants on purpose: each is a compile, and softmax over a growing KV
 * cache meets every row length. Teams of 1, 4, 16, then 64 up to the
 * group size in powers of two, about PAIRS_PER_LANE pairs a lane. On
 * llvmpipe, with `lane_rows`, a row an invocation (glc-bench-ops softmax
 * 4096 x 4096: 2.8x faster than teams of 64, whose barriers switch every
 * lane's coroutine; a single row, as decode's argmax, costs the same
 * either way), whatever the number of rows, so that a row's result does
 * not depend on the rows beside it. */
static row_cfg choose(const glc__target *tg, int64_t n, int lane_rows, int cache)
{
    const glc_device_limits *l = &tg->limits;
    uint64_t cap = l->max_invocations < l->max_group_size[0] ? l->max_invocations
                                                             : l->max_group_size[0];
    uint64_t pairs = ((uint64_t)n + 1) / 2, want = (pairs + PAIRS_PER_LANE - 1) / PAIRS_PER_LANE;
    uint32_t lmax, lrow, ts = 1;
    row_cfg c;
    if (cap > LOCAL_MAX)
        cap = LOCAL_MAX;
    /* shared memory: 2 floats + 1 uint per invocation */
    if (cap * 12 > l->max_shared_bytes)
        cap = l->max_shared_bytes / 12;
    lmax = pow2_at_most(cap ? cap : 1);
    /* llvmpipe runs a group's invocations as SIMD lanes of one CPU thread and
     * a barrier() switches every lane's coroutine: small groups there. Its
     * LLVM compile of the register variant costs 2-10x the loop's, for rows
     * that sit in the CPU's cache anyway: the loop only. */
    if (tg->is_llvmpipe) {
        lmax = lmax < LOCAL_LLVMPIPE ? lmax : LOCAL_LLVMPIPE;
        cache = 0;
    }
    lrow = lmax < LOCAL_ROWS ? lmax : LOCAL_ROWS;
    if (tg->is_llvmpipe && lane_rows)
        want = 1;
    while (ts < want && ts < 64 && ts * 4 <= lmax)
        ts *= 4;
    while (ts < want && ts * 2 <= lmax)
        ts *= 2;
    c.ts = ts;
    c.row4 = 0;
    c.per = cache && pairs <= (uint64_t)ts * PER ? PER : 0;
    c.local = c.ts > lrow ? c.ts : lrow;
    return c;
}

/* Loop iterations an invocation spends outside the loops over its row:
 * the team reductions (a loop over the subgroups on that path) and the
 * rest, with room to spare. */
#define LOOP_OVERHEAD 64

/* The row params both kernels take: softmax's causal mask and scale, or a
 * norm's eps. */
static void row_params(glc__dispatch_plan *d, const glc__op_args *a, const glc__tensor *x, int kop,
                       int64_t n)
{
    if (kop == GLC__R_SOFTMAX) {
        /* causal: keys j < q + 1 + off survive, q = row % Tq; the offset goes
         * as two magnitudes so the kernel never overflows */
        int64_t tq = x->rank > 1 ? x->shape[x->rank - 2] : 1, off = a->softmax.pos_offset;
        uint32_t offp = 0, offn = 0;
        if (!a->softmax.causal) {
            tq = 1;
            offp = (uint32_t)(n - 1);
        } else if (off >= 0) {
            offp = (uint32_t)(off < n - 1 ? off : n - 1);
        } else {
            offn = (uint32_t)(off < -0xffffffffll ? 0xffffffffll : -off);
        }
        glc__plan_param_at(d, GLC__KP_REDUCE_TQ, (uint32_t)tq);
        glc__plan_param_at(d, GLC__KP_REDUCE_OFFP, offp);
        glc__plan_param_at(d, GLC__KP_REDUCE_OFFN, offn);
        glc__plan_paramf_at(d, GLC__KP_REDUCE_SCALE,
                            a->softmax.scale == 0 ? 1.0f : a->softmax.scale);
    } else {
        float eps = a->norm.eps != 0 ? a->norm.eps : kop == GLC__R_LAYER_NORM ? 1e-5f : 1e-6f;
        glc__plan_param_at(d, GLC__KP_REDUCE_TQ, 1);
        glc__plan_param_at(d, GLC__KP_REDUCE_OFFP, 0);
        glc__plan_param_at(d, GLC__KP_REDUCE_OFFN, 0);
        glc__plan_paramf_at(d, GLC__KP_REDUCE_EPS, eps);
    }
}

/* One reduce.comp dispatch over `teams` teams; segs: 0 whole rows, 1 the
 * segments' partials into the scratch, 2 their merge, 3 a layer_norm's
 * bias added in place (see the kernel). A pass binds only what it reads
 * and writes: the partials pass no weight or bias; add_rms_norm's merge
 * pass reads the row x + r back from out, where the partials pass wrote
 * it, not x and r; with `bias_apart` the merge pass leaves the bias to
 * pass 3. So no pass binds more than 4 SSBOs, the ES 3.1 minimum. */
static glc__dispatch_plan *reduce_dispatch(glc__op_plan *p, const glc__op_args *a, int kop,
                                           const row_cfg *c, uint64_t teams, int segs,
                                           uint32_t segp, uint32_t nseg, int bias_apart)
{
    const glc__tensor *x = &a->t[0], *o = &a->t[a->nin];
    int64_t rows, n;
    int bind = 2, res = a->op == GLC__OP_ADD_RMS_NORM, wi = res ? 2 : 1;
    int norm = kop == GLC__R_RMS_NORM || kop == GLC__R_LAYER_NORM;
    glc__dispatch_plan *d;
    row_dims(x, &rows, &n);
    if (c->row4 && segs == 0) { /* softmax or rms_norm of f32 rows: vec4s */
        d = glc__plan_dispatch(p, "reduce_row4", c->local, teams);
        glc__define_int(d, "OP", kop);
        glc__plan_bind(d, 0, GLC_READ);
        glc__plan_bind(d, a->nin, GLC_WRITE);
        if (norm && a->t[wi].present) {
            glc__define_int(d, "BW", 2);
            glc__plan_bind(d, wi, GLC_READ);
        }
        /* llvmpipe: the rows (and an f32 weight) read through buffer
         * textures as well, their SSBO bindings kept (the kernel's points) */
        if (c->texel) {
            glc__define(d, "TEXEL", "1");
            glc__plan_bind_texel(d, 0);
        }
        if (c->texel_w) {
            glc__define(d, "TEXEL_W", "1");
            glc__plan_bind_texel(d, wi);
        }
        glc__plan_param_at(d, GLC__KP_REDUCE_ROWS, (uint32_t)rows);
        glc__plan_param_at(d, GLC__KP_REDUCE_N, (uint32_t)n);
        row_params(d, a, x, kop, n);
        return d;
    }
    d = glc__plan_dispatch(p, "reduce", c->local, teams * c->ts);
    glc__define_int(d, "OP", kop);
    glc__define_t(d, "TX", x->dtype);
    glc__define_t(d, "TO", o->dtype);
    glc__define_int(d, "TS", c->ts);
    glc__define_int(d, "PER", c->per);
    glc__plan_bind(d, 0, GLC_READ);
    glc__plan_bind(d, a->nin, segs == 3 || (segs == 2 && res) ? GLC_READ_WRITE : GLC_WRITE);
    if (norm && a->t[wi].present && (segs == 0 || segs == 2)) {
        glc__define_t(d, "TW", a->t[wi].dtype);
        glc__define_int(d, "BW", bind++);
        glc__plan_bind(d, wi, GLC_READ);
    }
    if (res && segs < 2) { /* the residual r: out holds x + r, then the norm at noff */
        glc__define_int(d, "BR", bind++);
        glc__plan_bind(d, 1, GLC_READ);
    }
    if (res && segs == 2)
        glc__define(d, "SUMO", "1");
    if (kop == GLC__R_LAYER_NORM && a->t[2].present && (segs == 0 || segs == 3 ||
                                                        (segs == 2 && !bias_apart))) {
        glc__define_t(d, "TB", a->t[2].dtype);
        glc__define_int(d, "BB", bind++);
        glc__plan_bind(d, 2, GLC_READ);
    }
    if (segs) {
        glc__define_int(d, "SEGS", segs);
    }
    if (segs == 1 || segs == 2) {
        glc__define_int(d, "BP", bind++);
        glc__plan_bind(d, GLC__SCRATCH, segs == 1 ? GLC_WRITE : GLC_READ);
    }
    glc__plan_param_at(d, GLC__KP_REDUCE_ROWS, (uint32_t)rows);
    glc__plan_param_at(d, GLC__KP_REDUCE_N, (uint32_t)n);
    row_params(d, a, x, kop, n);
    glc__plan_param_at(d, GLC__KP_REDUCE_NOFF, res ? (uint32_t)(a->norm.at / 2) : 0u);
    glc__plan_param_at(d, GLC__KP_REDUCE_SEG_PAIRS, segp);
    glc__plan_param_at(d, GLC__KP_REDUCE_NSEG, nseg);
    return d;
}

static glc_status reduce_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                              char *err, size_t len)
{
    const glc__tensor *x = &a->t[0];
    int64_t rows, n;
    uint64_t budget = glc__loop_budget(tg), pairs, seg_iters, segp, nseg;
    int kop, loops, bias_apart;
    row_cfg c;
    row_dims(x, &rows, &n);
    switch (a->op) {
    case GLC__OP_SOFTMAX: kop = GLC__R_SOFTMAX; break;
    case GLC__OP_RMS_NORM: kop = GLC__R_RMS_NORM; break;
    case GLC__OP_ADD_RMS_NORM: kop = GLC__R_RMS_NORM; break;
    case GLC__OP_LAYER_NORM: kop = GLC__R_LAYER_NORM; break;
    case GLC__OP_SUM: kop = GLC__R_SUM; break;
    case GLC__OP_MEAN: kop = GLC__R_MEAN; break;
    default: kop = GLC__R_ARGMAX; break;
    }
    c = choose(tg, n, 1, kop <= GLC__R_LAYER_NORM);
    /* the loop variant passes over the row once (sum, mean, argmax) or
     * twice; each lane takes every TS-th pair of the (n + 1) / 2 + 1 a row
     * may span */
    loops = kop <= GLC__R_LAYER_NORM ? 2 : 1;
    pairs = (uint64_t)n / 2 + 2;
    if (budget && c.ts == 1 && loops * pairs + LOOP_OVERHEAD > budget)
        c = choose(tg, n, 0, kop <= GLC__R_LAYER_NORM); /* too long for one invocation: teams */
    /* a row an invocation on llvmpipe, f32 softmax or rms_norm of whole
     * vec4s: glsl/reduce_row4.comp (fewer loop iterations than the pairs') */
    c.row4 = tg->is_llvmpipe && c.ts == 1 && !c.per && n % 4 == 0 &&
             (a->op == GLC__OP_SOFTMAX || a->op == GLC__OP_RMS_NORM) &&
             x->dtype == GLC_DTYPE_F32 && a->t[a->nin].dtype == GLC_DTYPE_F32 &&
             (a->op != GLC__OP_RMS_NORM || !a->t[1].present || a->t[1].dtype == GLC_DTYPE_F32);
    c.texel = c.row4 && glc__texel_ok(tg, (uint64_t)rows * (uint64_t)n * 4) &&
              glc__texel_worth(tg, (uint64_t)rows * (uint64_t)n * 4);
    c.texel_w = c.texel && a->op == GLC__OP_RMS_NORM && a->t[1].present &&
                glc__texel_ok(tg, (uint64_t)n * 4);
    if (!budget || c.per ||
        loops * ((pairs + c.ts - 1) / c.ts) + LOOP_OVERHEAD <= budget) {
        reduce_dispatch(p, a, kop, &c, (uint64_t)rows, 0, 0, 0, 0);
        return GLC_OK;
    }
    /* Too long for one invocation: segments of segp pairs, a team each, and
     * a merge pass that loops over a row's segments. Half the budget goes
     * to a segment's loop, half to the merge. */
    seg_iters = (budget - LOOP_OVERHEAD) / 2;
    segp = seg_iters * c.ts;
    nseg = (pairs + segp - 1) / segp;
    if (nseg > seg_iters || (uint64_t)rows * nseg * c.ts > 0xffffffffull)
        return glc__op_error(err, len, op_name(a),
                             "rows of %lld elements: more than this device runs in one shader "
                             "invocation's %u loop iterations, even split in %llu segments",
                             (long long)n, tg->limits.max_loop_iterations,
                             (unsigned long long)nseg);
    p->scratch_bytes = (size_t)rows * (size_t)nseg * 8;
    /* a layer_norm with weight and bias: x, out, both and the partials are 5
     * SSBOs; on a device with fewer its bias goes in a pass of its own */
    bias_apart = kop == GLC__R_LAYER_NORM && a->t[1].present && a->t[2].present &&
                 tg->limits.max_ssbo_blocks < 5;
    reduce_dispatch(p, a, kop, &c, (uint64_t)rows * nseg, 1, (uint32_t)segp, (uint32_t)nseg, 0);
    reduce_dispatch(p, a, kop, &c, kop <= GLC__R_LAYER_NORM ? (uint64_t)rows * nseg : (uint64_t)rows, 2,
                    (uint32_t)segp, (uint32_t)nseg, bias_apart);
    if (bias_apart)
        reduce_dispatch(p, a, kop, &c, (uint64_t)rows * nseg, 3, (uint32_t)segp, (uint32_t)nseg,
                        0);
    return GLC_OK;
}

const glc__op_desc glc__op_SOFTMAX_desc = {"softmax", softmax_infer, reduce_plan};
const glc__op_desc glc__op_RMS_NORM_desc = {"rms_norm", norm_infer, reduce_plan};
const glc__op_desc glc__op_LAYER_NORM_desc = {"layer_norm", norm_infer, reduce_plan};
const glc__op_desc glc__op_SUM_desc = {"sum", reduce_infer, reduce_plan};
const glc__op_desc glc__op_MEAN_desc = {"mean", reduce_infer, reduce_plan};
const glc__op_desc glc__op_ARGMAX_desc = {"argmax", reduce_infer, reduce_plan};
const glc__op_desc glc__op_ADD_RMS_NORM_desc = {"add_rms_norm", add_norm_infer, reduce_plan};

void glc__pack_softmax(glc__op_args *a, const glc_softmax_desc *desc)
{
    a->softmax.scale = desc ? desc->scale : 0.0f;
    a->softmax.causal = desc ? desc->causal != 0 : 0;
    a->softmax.pos_offset = desc ? desc->pos_offset : 0;
}

void glc__pack_norm(glc__op_args *a, float eps) { a->norm.eps = eps; }

/* An op of nin inputs and no scalars but eps (sum, mean, argmax: 0). */
static glc_status run(glc_session *s, glc__op op, int nin, glc_view *v, float eps)
{
    glc__op_args args;
    glc__op_args_init(&args, op, nin, 1);
    glc__pack_norm(&args, eps);
    return glc__op_run(s, &args, v, NULL);
}

glc_status glc_op_softmax(glc_session *s, glc_view x, const glc_softmax_desc *desc, glc_view out)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_SOFTMAX, 1, 1);
    glc__pack_softmax(&args, desc);
    return glc__op_run(s, &args, (glc_view[]){x, out}, NULL);
}

glc_status glc_op_rms_norm(glc_session *s, glc_view x, glc_view weight, float eps, glc_view out)
{
    return run(s, GLC__OP_RMS_NORM, 2, (glc_view[]){x, weight, out}, eps);
}

glc_status glc_op_layer_norm(glc_session *s, glc_view x, glc_view weight, glc_view bias, float eps,
                             glc_view out)
{
    return run(s, GLC__OP_LAYER_NORM, 3, (glc_view[]){x, weight, bias, out}, eps);
}

glc_status glc_op_sum(glc_session *s, glc_view x, glc_view out)
{
    return run(s, GLC__OP_SUM, 1, (glc_view[]){x, out}, 0);
}

glc_status glc_op_mean(glc_session *s, glc_view x, glc_view out)
{
    return run(s, GLC__OP_MEAN, 1, (glc_view[]){x, out}, 0);
}

glc_status glc_op_argmax(glc_session *s, glc_view x, glc_view out)
{
    return run(s, GLC__OP_ARGMAX, 1, (glc_view[]){x, out}, 0);
}
