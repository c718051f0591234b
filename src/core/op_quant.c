/*
 * Quantized matmuls: out = a x W^T with W stored as MLX affine groups
 * (matmul_affine), GGML blocks (matmul_q: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
 * Q4_K, Q5_K, Q6_K; K whole blocks), or per expert (matmul_expert: f32,
 * f16 or GGML experts picked by ids). Rules and
 * plans here (GL-free); a kernel each (glsl/matmul_q.comp,
 * matmul_affine.comp, matmul_expert.comp) around one tile engine
 * (glsl/matmul_q.glsl).
 *
 * Variants (chosen from the target):
 * - split: a subgroup per tile of RN weight rows x CM rows of a, its lanes
 *   splitting K and reducing with subgroupAdd; reads each weight byte once
 *   per CM rows of a, coalesced. Needs GL_KHR_shader_subgroup arithmetic;
 *   the GPU path.
 * - row: an invocation per tile over all of K, no reduction, no shared
 *   memory, no barrier: llvmpipe (where it measures fastest) and devices
 *   without subgroups.
 * CM grows with M (1, 2, 4, 8), so prefill reuses each dequantized chunk
 * across up to 8 rows of a instead of paying the decode cost per row.
 * - dense (prefill shapes on GPUs: >= DENSE_MIN_ROWS rows of a, no SwiGLU
 *   epilogue or norm prologue): the dense matmul's tiled kernel
 *   (op_matmul.c, glsl/matmul.comp) with the blocks as its b, each quad
 *   of weights decoded into f32 as it is staged in shared memory (the
 *   values get_rows gives). The tile loop then runs at the dense path's
 *   speed, which the row and split variants, decoding every chunk per
 *   tile, reach nowhere near at many rows; no scratch, no extra pass.
 *   Q6_K, the costliest to decode, is decoded first instead (get_rows.comp
 *   into the op's scratch as f16, then the dense tiles) where that fits
 *   one binding.
 * matmul_q takes the dense matmul's fused epilogues and prologue (residual,
 * rms_norm, SwiGLU: op_matmul.c); with the SwiGLU epilogue a tile holds
 * twice the weight rows (gates, then their up rows).
 *
 * matmul_affine binds a, w, scales, biases, out (+ bias): 5 or 6 SSBOs. On
 * a device with fewer SSBO blocks per shader (the ES 3.1 minimum is 4) it
 * runs in two dispatches: out = sum scale * (q . a), then out += sum bias
 * * (sum of a over the group) (+ bias).
 */
#include "env.h"
#include "op_run.h"

#include <stdio.h>
#include <string.h>

#define SUBGROUP_ARITHMETIC 0x4u /* GL_SUBGROUP_FEATURE_ARITHMETIC_BIT_KHR */
#define Q_TYPES "q8_0, q4_0, q4_1, q5_0, q5_1, q4_K, q5_K, q6_K"
#define ROW_LOCAL 64
#define ASH_MAX_BYTES 16384 /* the most of a matmul_q's decode stages in shared memory */
#define ASH_WIDE_BYTES 32768 /* the same, with ASH_WIDE_SLOTS tiles a group sharing it */
#define ASH_WIDE_SLOTS 8
#define DENSE_MIN_ROWS 16 /* rows of a from which matmul_q runs as the dense matmul */

/* ---- rules ---- */

static glc_status check_a(const char *op, const glc__tensor *a, char *err, size_t len)
{
    char sa[96];
    if (a->dtype != GLC_DTYPE_F32)
        return glc__op_error(err, len, op, "a %s: must be f32", glc__shape_str(a, sa, sizeof sa));
    return GLC_OK;
}

static glc_status check_bias(const char *op, const glc__tensor *bias, int64_t n, char *err,
                             size_t len)
{
    char sb[96];
    if (bias->present && (bias->dtype != GLC_DTYPE_F32 || bias->rank != 1 || bias->shape[0] != n))
        return glc__op_error(err, len, op, "bias %s: must be f32 [%lld]",
                             glc__shape_str(bias, sb, sizeof sb), (long long)n);
    return GLC_OK;
}

/* out: a's shape with the last dim n. */
static glc_status out_like_a(const char *op, const glc__tensor *a, int64_t n, glc__tensor *o,
                             char *err, size_t len)
{
    o->dtype = GLC_DTYPE_F32;
    o->rank = a->rank;
    memcpy(o->shape, a->shape, sizeof o->shape);
    o->shape[a->rank - 1] = n;
    if (glc__numel(o) > 0xffffffffll || glc__numel(a) > 0xffffffffll)
        return glc__op_error(err, len, op, "%lld outputs, %lld inputs (at most 2^32 - 1)",
                             (long long)glc__numel(o), (long long)glc__numel(a));
    return GLC_OK;
}

static glc_status q_infer(glc__op_args *a, char *err, size_t len)
{
    const glc__tensor *x = &a->t[0], *w = &a->t[1];
    char sx[96], sw[96];
    glc_status st;
    if ((st = check_a("matmul_q", x, err, len)) != GLC_OK)
        return st;
    if (!glc__is_block(w->dtype) || w->rank != 2)
        return glc__op_error(err, len, "matmul_q", "w %s: must be GGML blocks [N, K] (" Q_TYPES ")",
                             glc__shape_str(w, sw, sizeof sw));
    if (w->shape[1] % glc__dtype_block(w->dtype) || x->shape[x->rank - 1] != w->shape[1])
        return glc__op_error(err, len, "matmul_q",
                             "a %s and w %s: K must match and be whole blocks (%lld values)",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(w, sw, sizeof sw),
                             (long long)glc__dtype_block(w->dtype));
    if ((st = check_bias("matmul_q", &a->t[2], w->shape[0], err, len)) != GLC_OK)
        return st;
    if (a->mm.glu_out && (w->shape[0] % 2 || a->mm.act || a->mm.seg[0] ||
                          (a->nin > 3 && a->t[3].present) || a->mm.glu_out < GLC_UNARY_GELU ||
                          a->mm.glu_out > GLC_UNARY_RELU))
        return glc__op_error(err, len, "matmul_q",
                             "w %s: not a gate | up pair this matmul's SwiGLU epilogue takes",
                             glc__shape_str(w, sw, sizeof sw));
    if ((st = out_like_a("matmul_q", x, a->mm.glu_out ? w->shape[0] / 2 : w->shape[0],
                         &a->t[a->nin], err, len)) != GLC_OK)
        return st;
    /* fused (fuse.c): a residual of out's elements (4th input), an rms_norm
     * prologue's f32 [K] weight (5th), as the dense matmul's */
    if (a->nin > 3 && a->t[3].present &&
        (a->t[3].dtype != GLC_DTYPE_F32 || glc__numel(&a->t[3]) != glc__numel(&a->t[a->nin]) ||
         a->t[3].shape[a->t[3].rank - 1] != w->shape[0] || a->mm.seg[0]))
        return glc__op_error(err, len, "matmul_q", "residual %s: must be f32, out's elements",
                             glc__shape_str(&a->t[3], sx, sizeof sx));
    if (a->nin > 4 && a->t[4].present &&
        (a->t[4].dtype != GLC_DTYPE_F32 || a->t[4].rank != 1 || a->t[4].shape[0] != w->shape[1]))
        return glc__op_error(err, len, "matmul_q", "norm weight %s: must be f32 [K]",
                             glc__shape_str(&a->t[4], sx, sizeof sx));
    if (glc__mm_has_rope(a)) /* the rope epilogue (fuse.c qkv_rope) */
        return glc__mm_rope_infer(a, glc__numel(x) / w->shape[1], w->shape[0], err, len);
    return GLC_OK;
}

static glc_status affine_infer(glc__op_args *a, char *err, size_t len)
{
    const glc__tensor *x = &a->t[0], *w = &a->t[1], *sc = &a->t[2], *bi = &a->t[3];
    int64_t bits = a->affine.bits, group = a->affine.group, k, n;
    char sx[96], sw[96], ss[96], sb[96];
    glc_status st;
    if ((st = check_a("matmul_affine", x, err, len)) != GLC_OK)
        return st;
    if (bits != 4 && bits != 8)
        return glc__op_error(err, len, "matmul_affine", "bits %lld (need 4 or 8)",
                             (long long)bits);
    if (group != 32 && group != 64 && group != 128)
        return glc__op_error(err, len, "matmul_affine", "group_size %lld (need 32, 64 or 128)",
                             (long long)group);
    k = x->shape[x->rank - 1];
    if (k % group)
        return glc__op_error(err, len, "matmul_affine",
                             "group_size %lld does not divide K = %lld (a %s)", (long long)group,
                             (long long)k, glc__shape_str(x, sx, sizeof sx));
    if (w->dtype != GLC_DTYPE_U32 || w->rank != 2 || w->shape[1] != k * bits / 32)
        return glc__op_error(err, len, "matmul_affine",
                             "w %s: must be u32 [N, K * bits / 32] = [N, %lld] for a %s",
                             glc__shape_str(w, sw, sizeof sw), (long long)(k * bits / 32),
                             glc__shape_str(x, sx, sizeof sx));
    n = w->shape[0];
    if (sc->dtype != GLC_DTYPE_F32 && sc->dtype != GLC_DTYPE_F16)
        return glc__op_error(err, len, "matmul_affine", "scales %s: must be f32 or f16",
                             glc__shape_str(sc, ss, sizeof ss));
    if (bi->dtype != GLC_DTYPE_F32 && bi->dtype != GLC_DTYPE_F16)
        return glc__op_error(err, len, "matmul_affine", "biases %s: must be f32 or f16",
                             glc__shape_str(bi, sb, sizeof sb));
    if (sc->rank != 2 || sc->shape[0] != n || sc->shape[1] != k / group || bi->rank != 2 ||
        bi->shape[0] != n || bi->shape[1] != k / group)
        return glc__op_error(err, len, "matmul_affine",
                             "scales %s and biases %s: must be [N, K / group_size] = [%lld, %lld]",
                             glc__shape_str(sc, ss, sizeof ss), glc__shape_str(bi, sb, sizeof sb),
                             (long long)n, (long long)(k / group));
    if ((st = check_bias("matmul_affine", &a->t[4], n, err, len)) != GLC_OK)
        return st;
    return out_like_a("matmul_affine", x, n, &a->t[5], err, len);
}

static glc_status expert_infer(glc__op_args *a, char *err, size_t len)
{
    const glc__tensor *x = &a->t[0], *w = &a->t[1], *ids = &a->t[2];
    glc__tensor *o = &a->t[3];
    char sx[96], sw[96], si[96];
    glc_status st;
    if ((st = check_a("matmul_expert", x, err, len)) != GLC_OK)
        return st;
    if (w->rank != 3 || (w->dtype != GLC_DTYPE_F32 && w->dtype != GLC_DTYPE_F16 &&
                         !glc__is_block(w->dtype)))
        return glc__op_error(err, len, "matmul_expert",
                             "w %s: must be f32, f16 or GGML blocks [E, N, K] (" Q_TYPES ")",
                             glc__shape_str(w, sw, sizeof sw));
    if (ids->dtype != GLC_DTYPE_I32 || ids->rank != 2)
        return glc__op_error(err, len, "matmul_expert", "ids %s: must be i32 [M, k]",
                             glc__shape_str(ids, si, sizeof si));
    if ((x->rank != 2 && x->rank != 3) || x->shape[0] != ids->shape[0] ||
        (x->rank == 3 && x->shape[1] != ids->shape[1]) || x->shape[x->rank - 1] != w->shape[2])
        return glc__op_error(err, len, "matmul_expert",
                             "a %s, w %s, ids %s: a must be [M, K] or [M, k, K] for ids [M, k] "
                             "and w [E, N, K]",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(w, sw, sizeof sw),
                             glc__shape_str(ids, si, sizeof si));
    o->dtype = GLC_DTYPE_F32;
    o->rank = 3;
    o->shape[0] = ids->shape[0];
    o->shape[1] = ids->shape[1];
    o->shape[2] = w->shape[1];
    if (glc__numel(o) > 0xffffffffll || glc__numel(x) > 0xffffffffll)
        return glc__op_error(err, len, "matmul_expert", "%lld outputs (at most 2^32 - 1)",
                             (long long)glc__numel(o));
    return GLC_OK;
}

/* ---- plans ---- */

typedef struct variant {
    int split;
    uint32_t local, slots;
    uint32_t sg; /* split: a tile's lanes (the subgroup size, or VSG) */
    int vsg;     /* split with an emulated subgroup (glsl/matmul_q.glsl VSG) */
    int rn, cm;
} variant;

static int cm_for(int64_t rows)
{
    return rows <= 1 ? 1 : rows <= 2 ? 2 : rows <= 4 ? 4 : 8;
}

/* The lanes of matmul_q's emulated subgroup (glsl/matmul_q.glsl VSG) */
#define VSG_LANES 8

/* rows: the rows of a one tile may share (M, or pairs per expert); n:
 * the weight rows (an expert's); wt: the weights' dtype (a K type's
 * tiles are shorter). vsg: the split variant may emulate its
 * subgroups where GLC_MATMUL=matvec forces it on a device without
 * subgroup sums (matmul_q's dense tiles only: the tests on llvmpipe run
 * the decode's GPU kernel that way). */
static variant choose(const glc__target *tg, int64_t rows, int64_t n, glc_dtype wt, int vsg)
{
    const glc_device_features *f = &tg->features;
    uint32_t max_local = tg->limits.max_invocations < 128 ? tg->limits.max_invocations : 128;
    variant v;
    memset(&v, 0, sizeof v);
    if (f->subgroup && (f->subgroup_ops & SUBGROUP_ARITHMETIC) && f->subgroup_size >= 4 &&
        f->subgroup_size <= max_local && !tg->is_llvmpipe) {
        v.split = 1;
        v.sg = f->subgroup_size;
        v.slots = max_local / f->subgroup_size;
        if (tg->tune.slots && tg->tune.slots * f->subgroup_size <= tg->limits.max_invocations)
            v.slots = tg->tune.slots; /* a benchmark's sweep (ops.h) */
    } else if (vsg && tg->matmul == GLC__MATMUL_MATVEC && max_local >= 2 * VSG_LANES) {
        v.split = v.vsg = 1;
        v.sg = VSG_LANES;
        v.slots = max_local / VSG_LANES;
    }
    if (v.split) {
        /* Weight rows a tile, H100, 1b decode (bench/RESULTS.md): wide
         * products gain from longer tiles. The K types' chunks are dearer to
         * decode: a row a tile for the narrow products (wo, w2, qkv), 2 for
         * the wide (w1 | w3, lm_head) took the q4_K_M decode from 2.26-2.29
         * to 1.95-1.96 ms/token; the same for Q8_0 made its decode 5%
         * slower (1.72 -> 1.81-1.84), so the 32-value blocks keep 2 and 4. */
        if (glc__dtype_block(wt) > 32)
            v.rn = n >= 8192 ? 2 : 1;
        else
            v.rn = n >= 8192 ? 4 : 2;
        if (tg->tune.rn)
            v.rn = (int)tg->tune.rn;
        v.local = v.slots * v.sg;
        v.cm = cm_for(rows);
    } else {
        v.local = ROW_LOCAL < max_local ? ROW_LOCAL : max_local;
        v.slots = v.local;
        v.cm = rows <= 1 ? 1 : 4; /* each variant costs llvmpipe ~0.1 s to compile */
        v.rn = 4;
    }
    return v;
}

/* llvmpipe's row variant reads the weights as RGBA32UI texels (their raw
 * words: any storage type) and a as RGBA32F texels, each binding's SSBO
 * kept (the kernel's binding points): llvmpipe's texel fetch is a gather,
 * its SSBO load a loop over the lanes. Texel binds go last: NORM names
 * its SSBO binding by the count of binds before it. */
static void row_texels(glc__dispatch_plan *d, const glc__op_args *a, const glc__target *tg,
                       int64_t m, int64_t n, int64_t k)
{
    uint64_t wbytes = (uint64_t)n * (uint64_t)glc_dtype_row_bytes(a->t[1].dtype, k);
    int unit = 0;
    if (!glc__texel_worth(tg, wbytes))
        return;
    if (glc__texel_ok(tg, wbytes)) {
        glc__define_int(d, "WTEX", unit++);
        glc__plan_bind_texel_as(d, 1, GLC_BIND_TEXEL_UINT);
    }
    if (k % 4 == 0 && glc__texel_ok(tg, (uint64_t)m * (uint64_t)k * 4)) {
        glc__define_int(d, "ATEX", unit++);
        glc__plan_bind_texel(d, 0);
    }
}

/* A dispatch of `kernel` with the tile engine's defines and params 0..7
 * for a tile grid of `tiles` (wf: the weights' storage type, -1 for a
 * kernel of one). Only values that differ from the kernel's defaults are
 * defined: a plan holds 256 bytes of defines. */
static glc__dispatch_plan *begin(glc__op_plan *p, const char *kernel, const variant *v, int wf,
                                 int64_t m, int64_t n, int64_t k, uint32_t p4, uint64_t tiles,
                                 uint32_t wstride)
{
    glc__dispatch_plan *d = glc__plan_dispatch(p, kernel, v->local, 1);
    d->groups = (tiles + v->slots - 1) / v->slots;
    if (wf >= 0)
        glc__define_int(d, "WF", wf);
    glc__define_int(d, "RN", v->rn);
    glc__define_int(d, "CM", v->cm);
    if (v->split)
        glc__define_int(d, "SLOTS", v->slots);
    if (v->vsg)
        glc__define_int(d, "VSG", v->sg);
    if (k % 4)
        glc__define(d, "AVEC", "0");
    /* the engine's slots: one layout for the three kernels */
    glc__plan_param_at(d, GLC__KP_MATMUL_Q_M, (uint32_t)m);
    glc__plan_param_at(d, GLC__KP_MATMUL_Q_N, (uint32_t)n);
    glc__plan_param_at(d, GLC__KP_MATMUL_Q_K, (uint32_t)k);
    glc__plan_param_at(d, GLC__KP_MATMUL_Q_CHUNKS, (uint32_t)((k + 31) / 32));
    glc__plan_param_at(d, GLC__KP_MATMUL_Q_MTILES, p4);
    glc__plan_param_at(d, GLC__KP_MATMUL_Q_NTILES, (uint32_t)((n + v->rn - 1) / v->rn));
    glc__plan_param_at(d, GLC__KP_MATMUL_Q_TILES, (uint32_t)tiles);
    glc__plan_param_at(d, GLC__KP_MATMUL_Q_WSTRIDE, wstride);
    return d;
}

static uint32_t q_stride(glc_dtype dt, int64_t k)
{
    return glc__is_block(dt) ? (uint32_t)glc_dtype_row_bytes(dt, k)
           : k % 4 == 0      ? (uint32_t)(k / 4)
                             : (uint32_t)k;
}

/* ---- the loop cap ----
 * A device may cap one invocation's loop iterations (glc__loop_budget).
 * A tile costs about Q_CHUNK_COST a chunk of K its lane walks (the chunk
 * loop and its 8 steps of 4 values) and Q_GROUP_COST per group of CM rows
 * (stores and the rest); an expert tile also loops once per pair it scans.
 * Over the budget, expert tiles scan ranges of pairs (more tiles), and
 * where a single group is too long K is split into parts whose partial
 * products glsl/ksum.comp sums. */
#define Q_CHUNK_COST 12
#define Q_GROUP_COST 64

typedef struct qsplit {
    uint32_t kch;    /* chunks per K part; 0: no K split */
    uint32_t parts;  /* K parts */
    uint32_t pr;     /* expert: pairs per range; 0: all */
    uint32_t ranges;
} qsplit;

static glc_status plan_cap(const glc__target *tg, const variant *v, const char *op, int64_t chunks,
                           int64_t pairs, qsplit *q, char *err, size_t len)
{
    uint64_t budget = glc__loop_budget(tg), lanes = v->split ? v->sg : 1;
    uint64_t group = (chunks + lanes - 1) / lanes * Q_CHUNK_COST + Q_GROUP_COST, g, steps;
    uint64_t cm = (uint64_t)v->cm, groups_all = ((uint64_t)pairs + cm - 1) / cm;
    memset(q, 0, sizeof *q);
    q->parts = q->ranges = 1;
    if (!budget || (!pairs && group <= budget) ||
        (pairs && (uint64_t)pairs + (groups_all + 1) * (group + 1) <= budget))
        return GLC_OK;
    if (pairs ? group + 1 > budget / 4 : group > budget) {
        /* K parts: a group then costs at most a quarter of the budget (the
         * whole budget without pairs to scan) */
        uint64_t room = pairs ? budget / 4 : budget;
        steps = room > Q_GROUP_COST + 1 ? (room - Q_GROUP_COST - 1) / Q_CHUNK_COST : 0;
        if (steps == 0)
            return glc__op_error(err, len, op,
                                 "the device's loop cap (%u iterations an invocation) is too "
                                 "small for any part of K",
                                 tg->limits.max_loop_iterations);
        q->kch = (uint32_t)(steps * lanes);
        q->parts = (uint32_t)((chunks + q->kch - 1) / q->kch);
        group = (q->kch + lanes - 1) / lanes * Q_CHUNK_COST + Q_GROUP_COST;
    }
    if (pairs) { /* the most groups of CM pairs one tile scans in the budget */
        g = (budget - group - 1) / (cm + group + 1);
        q->pr = (uint32_t)(g * cm);
        q->ranges = (uint32_t)(((uint64_t)pairs + q->pr - 1) / q->pr);
    }
    return GLC_OK;
}

/* Applies q to dispatches [first, p->ndisp) of `tiles` tiles (out tensor
 * out_t): the grid over every part and range, the expert range param, and
 * with K parts the partials into the scratch and the ksum pass. */
static glc_status apply_cap(glc__op_plan *p, const glc__op_args *a, const glc__target *tg,
                            const variant *v, int first, uint64_t tiles, const qsplit *q,
                            int bias_t, int out_t, uint64_t total, int64_t n, char *err,
                            size_t len)
{
    uint64_t all = tiles * q->parts * q->ranges;
    int j, i, nd = p->ndisp;
    if (q->parts == 1 && q->ranges == 1)
        return GLC_OK;
    if (all > 0xffffffffull)
        return glc__op_error(err, len, glc__ops[a->op]->name,
                             "%llu tiles after splitting for the device's loop cap (%u "
                             "iterations an invocation): more than 2^32 - 1",
                             (unsigned long long)all, tg->limits.max_loop_iterations);
    for (j = first; j < nd; j++) {
        glc__dispatch_plan *d = &p->disp[j];
        d->params[GLC__KP_MATMUL_Q_TILES] = (uint32_t)all;
        d->groups = (all + v->slots - 1) / v->slots;
        if (q->pr)
            d->params[GLC__KP_MATMUL_EXPERT_RANGE_PAIRS] = q->pr;
        if (q->parts == 1)
            continue;
        glc__define_int(d, "KCH", q->kch);
        for (i = 0; i < d->nbind; i++)
            if (d->bind[i].tensor == out_t) {
                d->bind[i].tensor = GLC__SCRATCH;
                d->bind[i].size = 0;
            }
    }
    if (q->parts == 1)
        return GLC_OK;
    return glc__plan_ksum(p, a, total, n, q->parts, bias_t, out_t, tg, err, len);
}

/* Bindings below follow the kernels' order (see glsl/matmul_*.comp). */

/* Whether matmul_q runs as the dense matmul (plan_dense): prefill rows, a
 * product the dense kernels make whole (no SwiGLU epilogue, no norm
 * prologue: decode-shape fusions); on GPUs, or where GLC_MATMUL forces a
 * dense tile variant (tests on llvmpipe). */
static int dense_first(const glc__op_args *a, const glc__target *tg, int64_t m)
{
    int forced = tg->matmul == GLC__MATMUL_TILED64 || tg->matmul == GLC__MATMUL_TILED128 ||
                 tg->matmul == GLC__MATMUL_DIRECT;
    if (a->op != GLC__OP_MATMUL_Q || m < DENSE_MIN_ROWS || a->mm.glu_out ||
        (a->nin > 4 && a->t[4].present))
        return 0;
    return forced || (!tg->is_llvmpipe && tg->matmul == GLC__MATMUL_AUTO);
}

/* Q6_K's quads cost the most to decode (blocks on 2-byte boundaries, a
 * 2-bit high part, two scales a chunk): decoded in the tiles its prefill
 * products took 1.3-2.1x f16's time on the H100, against 1.0-1.4x with its
 * weights decoded first (bench/RESULTS.md, issue 16). So it decodes first
 * where the decoded weights fit one binding: as f16 (DECODED_T), so the
 * pass writes, and the dense tiles read, half the bytes of f32 and the
 * tiles are the f16 path's. A Q6_K weight d * scale * q needs up to 24
 * significant bits; f16 keeps 11 (a relative error of at most 2^-11 a
 * weight, as in an f16 model). */
#define DECODED_T GLC_DTYPE_F16
static int decode_first(const glc__tensor *w, const glc__target *tg)
{
    uint64_t bytes = (uint64_t)w->shape[0] * (uint64_t)w->shape[1] * glc_dtype_size(DECODED_T);
    return w->dtype == GLC_DTYPE_Q6_K && bytes <= tg->limits.max_ssbo_size;
}

/* The dense plan (dense_first): the dense matmul's own plan (op_matmul.c)
 * with the blocks as its transposed b, which its kernels decode quad by
 * quad as they stage their tiles; or, decode_first, get_rows.comp writes
 * the weights as DECODED_T at scratch offset 0 and the dense matmul's dispatches
 * read them there, their own scratch (K-split partials) after them. */
static glc_status plan_dense(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                             char *err, size_t len)
{
    const glc__tensor *w = &a->t[1];
    size_t wbytes = (size_t)w->shape[0] * (size_t)w->shape[1] * glc_dtype_size(DECODED_T), align,
           woff;
    glc__op_args g, mm = *a;
    glc__op_plan rows, dense;
    glc__dispatch_plan *d;
    glc_status st;
    int i, j;
    mm.op = GLC__OP_MATMUL;
    mm.mm.transpose_b = 1;
    if (!decode_first(w, tg))
        return glc__ops[GLC__OP_MATMUL]->plan(&mm, tg, p, err, len);
    /* the decode: get_rows of every row, DECODED_T out */
    glc__op_args_init(&g, GLC__OP_GET_ROWS, 2, 1);
    g.t[0] = *w;
    g.t[1] = *w;
    g.t[1].dtype = GLC_DTYPE_I32;
    g.t[1].rank = 1;
    g.t[2] = *w;
    g.t[2].dtype = DECODED_T;
    memset(&rows, 0, sizeof rows);
    if ((st = glc__ops[GLC__OP_GET_ROWS]->plan(&g, tg, &rows, err, len)) != GLC_OK)
        return st;
    /* the product over the decoded weights */
    mm.t[1].dtype = DECODED_T;
    memset(&dense, 0, sizeof dense);
    if ((st = glc__ops[GLC__OP_MATMUL]->plan(&mm, tg, &dense, err, len)) != GLC_OK)
        return st;
    if (1 + dense.ndisp > GLC__OP_MAX_DISPATCH || rows.ndisp != 1)
        return glc__op_error(err, len, "matmul_q", "internal: %d dense dispatches", dense.ndisp);
    align = tg->limits.ssbo_offset_alignment ? (size_t)tg->limits.ssbo_offset_alignment : 256;
    woff = (wbytes + align - 1) / align * align;
    p->ndisp = 0;
    d = &p->disp[p->ndisp++];
    *d = rows.disp[0];
    glc__define(d, "IDS_ALL", "1");
    for (j = 0; j < d->nbind; j++) { /* table -> w (also in the unread ids' place), out -> scratch */
        if (d->bind[j].tensor == 2) {
            d->bind[j].tensor = GLC__SCRATCH;
            d->bind[j].offset = 0;
            d->bind[j].size = wbytes;
        } else {
            d->bind[j].tensor = 1;
        }
    }
    for (i = 0; i < dense.ndisp; i++) {
        d = &p->disp[p->ndisp++];
        *d = dense.disp[i];
        for (j = 0; j < d->nbind; j++)
            if (d->bind[j].tensor == 1) {
                d->bind[j].tensor = GLC__SCRATCH;
                d->bind[j].offset = 0;
                d->bind[j].size = wbytes;
            } else if (d->bind[j].tensor == GLC__SCRATCH) {
                d->bind[j].offset += woff;
            }
    }
    p->scratch_bytes = woff + dense.scratch_bytes;
    return GLC_OK;
}

/* The shared memory of matmul_q's split variant with a (K values) staged:
 * the stage, the norm's partial sums (norm: a fused rms_norm) and an
 * emulated subgroup's sums (glsl/matmul_q.glsl, glsl/subgroup.glsl). */
static uint64_t shared_bytes(const variant *v, int64_t k, int norm)
{
    return (uint64_t)k * 4u + (norm ? 4u * v->local : 0) + (v->vsg ? 4u * v->local : 0);
}

/* Whether the split variant's decode (one row of a, K whole) stages a in
 * shared memory (glsl/matmul_q.glsl ASH): read once a group instead of once
 * a tile, coalesced. H100, 1b shapes (glc-bench-ops decode mat-vec): K 2048
 * (8 KiB) 1.04-1.27x the GB/s; K 8192 (32 KiB a group, fewer groups an SM)
 * 0.80-0.88x for the K types: so up to ASH_MAX_BYTES, and up to
 * ASH_WIDE_BYTES where ASH_WIDE_SLOTS tiles share the stage (v widened to
 * them; `--only "mv chain"`, w2 2048 x 8192, us profiled: q4_0 21.0 -> 19.6,
 * q8_0 24.9 -> 22.3, q4_K 30.2 -> 26.3; Q6_K 34.6 -> 36.0, so not there;
 * other types not measured). A benchmark's tune.ash replaces ASH_MAX_BYTES
 * and turns the widening off. */
static int stages_a(const glc__target *tg, variant *v, int64_t k, glc_dtype wt, int norm)
{
    uint64_t bytes = (uint64_t)k * 4u;
    variant wide = *v;
    if (bytes <= (tg->tune.ash ? tg->tune.ash : ASH_MAX_BYTES))
        return shared_bytes(v, k, norm) <= tg->limits.max_shared_bytes;
    if (tg->tune.ash || bytes > ASH_WIDE_BYTES ||
        (wt != GLC_DTYPE_Q4_0 && wt != GLC_DTYPE_Q8_0 && wt != GLC_DTYPE_Q4_K))
        return 0;
    if (!v->vsg && !tg->tune.slots) { /* (an emulated subgroup's group has 16 tiles) */
        wide.slots = ASH_WIDE_SLOTS;
        wide.local = ASH_WIDE_SLOTS * v->sg;
    }
    if (wide.slots < ASH_WIDE_SLOTS || wide.local > tg->limits.max_invocations ||
        shared_bytes(&wide, k, norm) > tg->limits.max_shared_bytes)
        return 0;
    *v = wide;
    return 1;
}

static glc_status q_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                         char *err, size_t len)
{
    const glc__tensor *w = &a->t[1];
    int64_t k = w->shape[1], n = w->shape[0], m = glc__numel(&a->t[0]) / k;
    variant v = choose(tg, m, a->mm.glu_out ? n / 2 : n, w->dtype, 1);
    uint32_t mtiles = (uint32_t)((m + v.cm - 1) / v.cm);
    uint64_t tiles;
    glc__dispatch_plan *d;
    qsplit q;
    glc_status st;
    int64_t chunks = (k + 31) / 32;
    int glu_out, ash, norm = a->op == GLC__OP_MATMUL_Q && a->nin > 4 && a->t[4].present;
    if (dense_first(a, tg, m))
        return plan_dense(a, tg, p, err, len);
    /* the SwiGLU epilogue: a tile's gate rows and their up rows, twice the
     * weight rows, as costly as twice the chunks. Where that needs a K split,
     * the product is plain, in at least 2 parts, and ksum applies it. */
    if ((st = plan_cap(tg, &v, glc__ops[a->op]->name, a->mm.glu_out ? 2 * chunks : chunks, 0, &q,
                       err, len)) != GLC_OK)
        return st;
    glu_out = a->mm.glu_out && q.parts == 1;
    if (glc__mm_has_rope(a) && (!v.split || q.parts != 1)) /* (fuse.c plans it before it fuses) */
        return glc__op_error(err, len, "matmul_q",
                             "the rope epilogue needs the split variant, K whole");
    if (glc__mm_has_rope(a)) /* tiles of pairs of columns that rotate together */
        v.rn = (v.rn + 1) / 2 * 2;
    if (glu_out) /* a gate row and its up row an output: RN even (split, past 2 rows:
                  * the tile's rows split into gates and ups rather than doubled;
                  * H100, q4_0 1b decode 1.42-1.49 -> 1.34-1.43 ms/token) */
        v.rn = v.split && v.rn > 2 ? (v.rn + 1) / 2 * 2 : 2 * v.rn;
    else if (a->mm.glu_out) { /* the parts of the chunks themselves, 2 at least */
        if (q.kch > (uint32_t)((chunks + 1) / 2))
            q.kch = (uint32_t)((chunks + 1) / 2);
        q.parts = (uint32_t)((chunks + q.kch - 1) / q.kch);
    }
    ash = v.split && m == 1 && k % 4 == 0 && q.parts == 1 && stages_a(tg, &v, k, w->dtype, norm);
    tiles = (uint64_t)mtiles * (uint64_t)((n + v.rn - 1) / v.rn);
    d = begin(p, "matmul_q", &v, (int)glc__kdtype_of(w->dtype), m, n, k, mtiles, tiles,
              q_stride(w->dtype, k));
    if (ash)
        glc__define_int(d, "ASH", k / 4);
    if (glu_out) {
        glc__define_glu_out(d, a);
        glc__plan_paramf_at(d, GLC__KP_MATMUL_Q_ACT_PARAM, a->mm.act_param);
    }
    glc__plan_segments(d, a, GLC__KP_MATMUL_Q_S1); /* fused Q/K/V: see glsl/matmul_q.comp */
    glc__plan_param_at(d, GLC__KP_MATMUL_Q_FLAGS, (uint32_t)a->t[2].present);
    if (a->mm.act) { /* fused activation (compile's fuse pass; dense matmul's mat-vec too)
                      */
        glc__define_int(d, "ACT", a->mm.act);
        glc__plan_paramf_at(d, GLC__KP_MATMUL_Q_ACT_PARAM, a->mm.act_param);
    }
    glc__plan_bind(d, 0, GLC_READ);
    glc__plan_bind(d, 1, GLC_READ);
    glc__plan_bind(d, a->nin, GLC_WRITE);
    glc__plan_bind(d, a->t[2].present ? 2 : 0, GLC_READ); /* a stands in for no bias */
    if (a->op == GLC__OP_MATMUL_Q && a->nin > 3 && a->t[3].present) { /* fused residual */
        glc__define(d, "RES", "1");
        glc__plan_bind(d, 3, GLC_READ);
    }
    if (norm) { /* fused norm */
        char eps[32];
        snprintf(eps, sizeof eps, "%.9g", (double)a->mm.norm_eps);
        glc__define_int(d, "NORM", d->nbind);
        glc__define(d, "NORM_EPS", eps);
        glc__plan_bind(d, 4, GLC_READ);
    }
    if (a->mm.seg[0]) /* segments start at fixed places: bind through the last one's end */
        d->bind[2].size = (size_t)(a->mm.seg[3] + m * (n - a->mm.seg[1])) * 4;
    if (glc__mm_has_rope(a)) {
        static const int slot[7] = {GLC__KP_MATMUL_Q_R_QW,    GLC__KP_MATMUL_Q_R_KEND,
                                    GLC__KP_MATMUL_Q_R_D,     GLC__KP_MATMUL_Q_R_DIM,
                                    GLC__KP_MATMUL_Q_R_THETA, GLC__KP_MATMUL_Q_R_KROWS,
                                    GLC__KP_MATMUL_Q_R_VROWS};
        glc__plan_rope(d, a, slot);
    }
    if (tg->is_llvmpipe && !v.split)
        row_texels(d, a, tg, m, n, k);
    return apply_cap(p, a, tg, &v, 0, tiles, &q, a->t[2].present ? 2 : -1, a->nin,
                     (uint64_t)m * (uint64_t)n, n, err, len);
}

static glc_status affine_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                              char *err, size_t len)
{
    const glc__tensor *w = &a->t[1];
    int64_t bits = a->affine.bits, group = a->affine.group, n = w->shape[0],
            k = w->shape[1] * 32 / bits;
    int64_t m = glc__numel(&a->t[0]) / k;
    variant v = choose(tg, m, n, GLC_DTYPE_U8, 0); /* (tiles as the 32-value blocks') */
    uint32_t mtiles = (uint32_t)((m + v.cm - 1) / v.cm);
    uint64_t tiles = (uint64_t)mtiles * (uint64_t)((n + v.rn - 1) / v.rn);
    uint32_t wstride = (uint32_t)(k * bits / 128);
    int has_bias = a->t[4].present, two = tg->limits.max_ssbo_blocks < 6, pass;
    uint32_t flags = (uint32_t)has_bias | (a->t[2].dtype == GLC_DTYPE_F16 ? 2u : 0u) |
                     (a->t[3].dtype == GLC_DTYPE_F16 ? 4u : 0u);
    qsplit q;
    glc_status st;
    for (pass = two ? 1 : 0; pass <= (two ? 2 : 0); pass++) {
        glc__dispatch_plan *d = begin(p, "matmul_affine", &v, -1, m, n, k, mtiles, tiles,
                                      wstride);
        if (bits != 4)
            glc__define_int(d, "BITS", bits);
        if (pass)
            glc__define_int(d, "PASS", pass);
        glc__plan_param_at(d, GLC__KP_MATMUL_AFFINE_GROUPS, (uint32_t)(k / group));
        glc__plan_param_at(d, GLC__KP_MATMUL_AFFINE_GROUP_CHUNKS, (uint32_t)(group / 32));
        glc__plan_param_at(d, GLC__KP_MATMUL_AFFINE_FLAGS, flags);
        glc__plan_bind(d, 0, GLC_READ);
        if (pass != 2)
            glc__plan_bind(d, 1, GLC_READ);
        glc__plan_bind(d, 5, pass == 2 ? GLC_READ_WRITE : GLC_WRITE);
        if (pass != 2)
            glc__plan_bind(d, 2, GLC_READ);
        if (pass != 1)
            glc__plan_bind(d, 3, GLC_READ);
        if (pass != 1)
            glc__plan_bind(d, has_bias ? 4 : 0, GLC_READ); /* a stands in for no bias */
    }
    if ((st = plan_cap(tg, &v, "matmul_affine", k / 32, 0, &q, err, len)) != GLC_OK)
        return st;
    return apply_cap(p, a, tg, &v, 0, tiles, &q, has_bias ? 4 : -1, 5, (uint64_t)m * (uint64_t)n, n,
                     err, len);
}

static glc_status expert_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                              char *err, size_t len)
{
    const glc__tensor *x = &a->t[0], *w = &a->t[1], *ids = &a->t[2];
    int64_t e = w->shape[0], n = w->shape[1], k = w->shape[2];
    int64_t pairs = ids->shape[0] * ids->shape[1];
    variant v = choose(tg, (pairs + e - 1) / e, w->shape[1], w->dtype, 0);
    uint64_t tiles = (uint64_t)(e + 1) * (uint64_t)((n + v.rn - 1) / v.rn);
    glc__dispatch_plan *d = begin(p, "matmul_expert", &v, (int)glc__kdtype_of(w->dtype), pairs, n,
                                  k, (uint32_t)ids->shape[1], tiles, q_stride(w->dtype, k));
    qsplit q;
    glc_status st;
    glc__plan_param_at(d, GLC__KP_MATMUL_EXPERT_E, (uint32_t)e);
    glc__plan_param_at(d, GLC__KP_MATMUL_EXPERT_PAIR_ROWS, x->rank == 3);
    glc__plan_param_at(d, GLC__KP_MATMUL_EXPERT_FLAGS, 0);
    glc__plan_bind(d, 0, GLC_READ);
    glc__plan_bind(d, 1, GLC_READ);
    glc__plan_bind(d, 3, GLC_WRITE);
    glc__plan_bind(d, 2, GLC_READ);
    if ((st = plan_cap(tg, &v, "matmul_expert", (k + 31) / 32, pairs, &q, err, len)) != GLC_OK)
        return st;
    return apply_cap(p, a, tg, &v, 0, tiles, &q, -1, 3, (uint64_t)pairs * (uint64_t)n, n, err,
                     len);
}

const glc__op_desc glc__op_MATMUL_AFFINE_desc = {"matmul_affine", affine_infer, affine_plan};
const glc__op_desc glc__op_MATMUL_Q_desc = {"matmul_q", q_infer, q_plan};
const glc__op_desc glc__op_MATMUL_EXPERT_desc = {"matmul_expert", expert_infer, expert_plan};

/* ---- entry points ---- */

void glc__pack_affine(glc__op_args *a, int bits, int group_size)
{
    a->affine.bits = bits;
    a->affine.group = group_size;
}

glc_status glc_op_matmul_affine(glc_session *s, glc_view a, glc_view w, glc_view scales,
                                glc_view biases, int bits, int group_size, glc_view bias,
                                glc_view out)
{
    glc__op_args args;
    glc_view v[6] = {a, w, scales, biases, bias, out};
    glc__op_args_init(&args, GLC__OP_MATMUL_AFFINE, 5, 1);
    glc__pack_affine(&args, bits, group_size);
    return glc__op_run(s, &args, v, NULL);
}

glc_status glc_op_matmul_q(glc_session *s, glc_view a, glc_view w, glc_view bias, glc_view out)
{
    glc__op_args args;
    glc_view v[4] = {a, w, bias, out};
    glc__op_args_init(&args, GLC__OP_MATMUL_Q, 3, 1);
    return glc__op_run(s, &args, v, NULL);
}

glc_status glc_op_matmul_expert(glc_session *s, glc_view a, glc_view w, glc_view ids,
                                glc_view out)
{
    glc__op_args args;
    glc_view v[4] = {a, w, ids, out};
    glc__op_args_init(&args, GLC__OP_MATMUL_EXPERT, 3, 1);
    return glc__op_run(s, &args, v, NULL);
}
