/*
 * Attention: prefill (glc_op_sdpa) and decode (glc_op_sdpa_decode), both
 * grouped-query, both with online softmax so no Tq x Tk score matrix is
 * ever stored. Rules and plans here (GL-free), kernels in glsl/sdpa*.comp.
 *
 * Variants, chosen from the target:
 *  - GPUs: prefill runs the tile variant (glsl/sdpa_tile.comp), one work
 *    group per (block of BQ query rows, head) streaming BK-key tiles of K and V through shared
 *    memory, the tile sizes the largest that fit the device's shared memory
 *    (16 KiB on the ES 3.1 minimum, 48 KiB on NVIDIA). Decode runs the
 *    split variant, one group per (kv head, block of the query heads
 *    that share it, chunk of SDPA_CHUNK keys): each K and V row is read once
 *    for all the heads of the group.
 *  - llvmpipe, where barrier() and shared memory are slow: the rows variant
 *    (sdpa_rows.comp),
 *    one invocation per (query row, head) (decode: per (head, chunk)) with q
 *    and the output row in registers.
 * Decode is flash-decoding: the keys are cut into chunks of SDPA_CHUNK, the
 * first dispatch writes each chunk's max, sum and unnormalised output into
 * the scratch view, and glsl/sdpa_combine.comp merges them per head. A
 * decode whose keys fit one chunk is a single dispatch that writes out.
 *
 * sdpa_decode with 7 inputs is the fusion of a decode layer's rope_qkv
 * into its attention (src/core/fuse.c sdpa_rope): q [1, Hq, D], the k and
 * v caches, the token's k and v rows [1, Hkv, D / DV] (f32), its position
 * (i32 [1]) and the freq_factors (or none), the rope's scalars in
 * sdpa.rope_*. On llvmpipe its rows kernel rotates q as it reads it,
 * writes the token's rotated k row and its v row into the caches (row
 * pos, when inside them) and reads that key from the token's rows, not
 * from the caches the same dispatch writes (glsl/sdpa.glsl ROPE):
 * rope_qkv's dispatch, and the barrier before the attention, go. On GPUs
 * the node runs rope_qkv's dispatch first (rope_first).
 *
 * The kernels work in base 2: q is scaled by scale * log2(e) once and the
 * exponentials are exp2 (glsl/sdpa.glsl holds what the three share). Keys masked out (past kv_len, or after the query's
 * position with causal) weigh exactly 0.
 */
#include "op_run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SDPA_CHUNK 256   /* decode keys per split: glc_sdpa_decode_scratch depends on it */
#define SDPA_MAX_DIM 256 /* D and Dv */
#define TILE_LOCAL 128   /* the ES 3.1 minimum of invocations per group */
#define ROWS_LOCAL 32    /* rows variant: (row, head) pairs per group */
/* llvmpipe ends every loop of a shader invocation once 65535 iterations
 * have run in all of them together (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS),
 * silently: the rows variant's loops are counted and kept below the
 * device's budget (glc__loop_budget); prefill rows with more keys than fit
 * are split into chunks of keys merged by sdpa_combine, as decode's are. */
/* tile variant: loop iterations an invocation spends per key, estimated
 * from its loops (two staging loops and the head-dim loop per key tile,
 * three over the tile's keys: about 5 a key at BK 32) */
#define TILE_KEY_COST 8
#define COMBINE_LOCAL 64
#define SPLIT_MAX_HEADS 8 /* query heads per split-variant group */
#define SPLIT_MIN_GROUPS 64
#define SPLIT_WIDE_LOCAL 256 /* few groups: more key groups in the output pass */
#define LOG2E 1.4426950408889634

/* The resolved scalars of one call (desc defaults filled in). */
typedef struct sdpa_cfg {
    int64_t tq, tk, hq, hkv, d, dv;
    int64_t kv_len;   /* keys in use */
    int64_t q_offset; /* position of query row 0 (meaningful with causal) */
    int causal;
    int rope; /* sdpa_decode's fused rope_qkv */
    float scale;
} sdpa_cfg;

static int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The shared checks of both ops; fills cfg and the output's shape. */
static glc_status sdpa_check(glc__op_args *a, const char *name, sdpa_cfg *c, char *err,
                             size_t len)
{
    glc__tensor *q = &a->t[0], *k = &a->t[1], *v = &a->t[2], *o = &a->t[3];
    char sq[96], sk[96], sv[96];
    glc__shape_str(q, sq, sizeof sq);
    glc__shape_str(k, sk, sizeof sk);
    glc__shape_str(v, sv, sizeof sv);
    if (q->dtype != GLC_DTYPE_F32 || (k->dtype != GLC_DTYPE_F32 && k->dtype != GLC_DTYPE_F16) ||
        (v->dtype != GLC_DTYPE_F32 && v->dtype != GLC_DTYPE_F16))
        return glc__op_error(err, len, name,
                             "q %s, k %s, v %s: q must be f32, k and v f32 or f16", sq, sk, sv);
    if (q->rank != 3 || k->rank != 3 || v->rank != 3)
        return glc__op_error(err, len, name, "q %s, k %s, v %s: each must be rank 3 [T, H, D]",
                             sq, sk, sv);
    c->tq = q->shape[0];
    c->hq = q->shape[1];
    c->d = q->shape[2];
    c->tk = k->shape[0];
    c->hkv = k->shape[1];
    c->dv = v->shape[2];
    if (k->shape[2] != c->d)
        return glc__op_error(err, len, name, "q %s and k %s: head dims differ (%lld vs %lld)", sq,
                             sk, (long long)c->d, (long long)k->shape[2]);
    if (v->shape[0] != c->tk || v->shape[1] != c->hkv)
        return glc__op_error(err, len, name, "k %s and v %s: keys or kv heads differ", sk, sv);
    if (c->hq % c->hkv)
        return glc__op_error(err, len, name,
                             "q %s, k %s: %lld query heads are not a multiple of %lld kv heads",
                             sq, sk, (long long)c->hq, (long long)c->hkv);
    if (c->d > SDPA_MAX_DIM || c->dv > SDPA_MAX_DIM)
        return glc__op_error(err, len, name, "q %s, v %s: head dims up to %d are supported", sq,
                             sv, SDPA_MAX_DIM);
    /* element indices are u32 in the kernels */
    if (glc__numel(q) > 0xffffffffll || glc__numel(k) > 0xffffffffll ||
        glc__numel(v) > 0xffffffffll || c->tq * c->hq * c->dv > 0xffffffffll)
        return glc__op_error(err, len, name, "q %s, k %s, v %s: over 2^32 - 1 elements", sq, sk,
                             sv);
    if (!(a->sdpa.scale == a->sdpa.scale) || a->sdpa.scale > 3.4e38f || a->sdpa.scale < -3.4e38f)
        return glc__op_error(err, len, name, "scale %g is not finite", (double)a->sdpa.scale);
    c->scale = a->sdpa.scale != 0 ? a->sdpa.scale : (float)(1.0 / sqrt((double)c->d));
    c->causal = a->sdpa.causal != 0;
    c->rope = a->op == GLC__OP_SDPA_DECODE && a->nin == 7; /* decode_plan may clear it */
    if (a->sdpa.kv_len < 0 || a->sdpa.kv_len > c->tk)
        return glc__op_error(err, len, name, "kv_len %lld with k %s: must be in [0, %lld]",
                             (long long)a->sdpa.kv_len, sk, (long long)c->tk);
    c->kv_len = a->sdpa.kv_len ? a->sdpa.kv_len : c->tk;
    if (a->sdpa.q_offset < -1)
        return glc__op_error(err, len, name, "q_offset %lld: must be >= 0, or -1 for kv_len - Tq",
                             (long long)a->sdpa.q_offset);
    c->q_offset = a->sdpa.q_offset == -1 ? c->kv_len - c->tq : a->sdpa.q_offset;
    if (c->causal && c->q_offset < 0)
        return glc__op_error(err, len, name,
                             "causal with q %s and kv_len %lld: query row 0 would sit at "
                             "position %lld, before every key",
                             sq, (long long)c->kv_len, (long long)c->q_offset);
    if (c->q_offset > 0xffffffffll - c->tq)
        return glc__op_error(err, len, name, "q_offset %lld is too large",
                             (long long)c->q_offset);
    o->dtype = GLC_DTYPE_F32;
    o->rank = 3;
    o->shape[0] = c->tq;
    o->shape[1] = c->hq;
    o->shape[2] = c->dv;
    o->shape[3] = 1;
    return GLC_OK;
}

static glc_status sdpa_infer(glc__op_args *a, char *err, size_t len)
{
    sdpa_cfg c;
    return sdpa_check(a, "sdpa", &c, err, len);
}

/* Keys the last query row can see: the keys any work needs. */
static int64_t keys_needed(const sdpa_cfg *c, int64_t last_row)
{
    if (c->causal && c->q_offset + last_row + 1 < c->kv_len)
        return c->q_offset + last_row + 1;
    return c->kv_len;
}

/* glsl/sdpa.glsl's defines, and with dims the head dims D, DV (sdpa_rows
 * takes them as params: one compile for every shape). */
static void common_defines(glc__dispatch_plan *d, const glc__op_args *a, const sdpa_cfg *c,
                           int dims)
{
    if (dims) {
        glc__define_int(d, "D", c->d);
        glc__define_int(d, "DV", c->dv);
    }
    glc__define_t(d, "KT", a->t[1].dtype);
    glc__define_t(d, "VT", a->t[2].dtype);
    glc__define_int(d, "KVEC", c->d % 4 == 0);
    glc__define_int(d, "VVEC", c->dv % 4 == 0);
}

/* The fused rope_qkv in the rows kernel (c->rope): defines, the caches
 * written, bindings 4-7 (the token's k and v rows, pos, freq_factors) and
 * the two params at `at` (the theta step, the caches' rows). */
static void rope_prologue(glc__dispatch_plan *d, const glc__op_args *a, const sdpa_cfg *c, int at)
{
    int64_t rd = a->sdpa.rope_dim ? a->sdpa.rope_dim : c->d;
    double base = a->sdpa.rope_base != 0 ? a->sdpa.rope_base : 10000.0;
    if (!c->rope)
        return;
    glc__define_int(d, "ROPE", rd); /* rope_dim */
    glc__define_int(d, "NEOX", a->sdpa.rope_mode == GLC_ROPE_NEOX);
    glc__define_int(d, "HAS_FF", a->t[6].present);
    d->bind[1].access = GLC_READ_WRITE;
    d->bind[2].access = GLC_READ_WRITE;
    glc__plan_bind(d, 3, GLC_READ);
    glc__plan_bind(d, 4, GLC_READ);
    glc__plan_bind(d, 5, GLC_READ);
    if (a->t[6].present)
        glc__plan_bind(d, 6, GLC_READ);
    glc__plan_paramf_at(d, at, (float)(-2.0 * log2(base) / (double)rd));
    glc__plan_param_at(d, at + 1, (uint32_t)c->tk);
}

/* The bindings of the kernels reading q, k, v (tensors 0-2) and writing
 * tensor out (the output, or the scratch of partials). */
static void bind_qkv(glc__dispatch_plan *d, int out)
{
    glc__plan_bind(d, 0, GLC_READ);
    glc__plan_bind(d, 1, GLC_READ);
    glc__plan_bind(d, 2, GLC_READ);
    glc__plan_bind(d, out, GLC_WRITE);
}

/* The slots sdpa_rows and sdpa_tile share (GLC__KP_SDPA_HEAD). */
static void head_params(glc__dispatch_plan *d, const sdpa_cfg *c)
{
    glc__plan_param_at(d, GLC__KP_SDPA_HEAD_TQ, (uint32_t)c->tq);
    glc__plan_param_at(d, GLC__KP_SDPA_HEAD_HQ, (uint32_t)c->hq);
    glc__plan_param_at(d, GLC__KP_SDPA_HEAD_GROUP, (uint32_t)(c->hq / c->hkv));
    glc__plan_param_at(d, GLC__KP_SDPA_HEAD_HKV, (uint32_t)c->hkv);
    glc__plan_param_at(d, GLC__KP_SDPA_HEAD_KV_LEN, (uint32_t)c->kv_len);
    glc__plan_param_at(d, GLC__KP_SDPA_HEAD_Q_OFFSET, (uint32_t)c->q_offset);
    glc__plan_param_at(d, GLC__KP_SDPA_HEAD_CAUSAL, (uint32_t)c->causal);
    glc__plan_paramf_at(d, GLC__KP_SDPA_HEAD_QSCALE, (float)(c->scale * LOG2E));
}

/* The rows variant's KB for `keys` keys an invocation under the device's
 * loop budget (0: none fits). KB keys a pass over the head dims: the loop
 * iterations of one invocation. KB 32 is the most Mesa unrolls (a loop over
 * 64 keys would count 64 iterations a head-dim step). */
static int rows_kb(const sdpa_cfg *c, const glc__target *tg, int64_t keys)
{
    int64_t du = (c->d + 3) / 4, dvu = (c->dv + 3) / 4, budget = (int64_t)glc__loop_budget(tg);
    /* the fused rope: q's and the token's k row rotated (4 a unit), the
     * token's key scored once, its rows written */
    int64_t rope = c->rope ? 14 * du + dvu : 0;
    int kb;
    for (kb = 16; kb <= 32; kb *= 2)
        if (!budget || rope + du + 2 * dvu + ceil_div64(keys, kb) * (du + dvu + 4) <= budget)
            return kb;
    return 0;
}

/* Keys per chunk the rows variant takes under the loop budget (a multiple
 * of 32). */
static int64_t rows_chunk(const sdpa_cfg *c, const glc__target *tg)
{
    int64_t du = (c->d + 3) / 4, dvu = (c->dv + 3) / 4, budget = (int64_t)glc__loop_budget(tg);
    int64_t rope = c->rope ? 14 * du + dvu : 0;
    int64_t passes = (budget - rope - du - 2 * dvu) / (du + dvu + 4);
    return passes > 0 ? passes * 32 : 0;
}

/* The rows variant (glsl/sdpa_rows.comp): items (row, head) pairs, or with split (row,
 * head, chunk of `chunk` keys) triples whose partials go to the scratch. */
static glc_status plan_rows(glc__op_plan *p, const glc__op_args *a, const sdpa_cfg *c,
                            const glc__target *tg, int split, int64_t chunk, uint64_t nsplit,
                            int out_tensor, char *err, size_t len)
{
    uint64_t items = (uint64_t)(c->tq * c->hq) * (split ? nsplit : 1);
    int64_t keys = split ? chunk : keys_needed(c, c->tq - 1);
    int kb = rows_kb(c, tg, keys);
    glc__dispatch_plan *d;
    if (!kb)
        return glc__op_error(err, len, glc__ops[a->op]->name,
                             "%lld keys with head dims %lld and %lld: more than this device runs "
                             "in one shader invocation (%u loop iterations in all)",
                             (long long)keys, (long long)c->d, (long long)c->dv,
                             tg->limits.max_loop_iterations);
    d = glc__plan_dispatch(p, "sdpa_rows", ROWS_LOCAL, items);
    common_defines(d, a, c, 0);
    glc__define_int(d, "KB", kb);
    bind_qkv(d, out_tensor);
    head_params(d, c);
    glc__plan_param_at(d, GLC__KP_SDPA_ROWS_CHUNK_KEYS, (uint32_t)chunk);
    glc__plan_param_at(d, GLC__KP_SDPA_ROWS_NSPLIT, (uint32_t)nsplit);
    glc__plan_param_at(d, GLC__KP_SDPA_ROWS_ITEMS, (uint32_t)items);
    glc__plan_param_at(d, GLC__KP_SDPA_ROWS_D, (uint32_t)c->d);
    glc__plan_param_at(d, GLC__KP_SDPA_ROWS_DV, (uint32_t)c->dv);
    glc__plan_param_at(d, GLC__KP_SDPA_ROWS_SPLIT, (uint32_t)split);
    rope_prologue(d, a, c, GLC__KP_SDPA_ROWS_THETA_STEP);
    if (out_tensor == GLC__SCRATCH)
        d->bind[3].size = 4 * (size_t)items * (size_t)(c->dv + 2);
    return GLC_OK;
}

/* Shared bytes of the tile variant with bq rows and bk keys per tile (vec4 rows
 * of q and k padded to an odd number of vec4, score rows by one float:
 * conflict-free column reads). */
static size_t tile_bytes(const sdpa_cfg *c, int bq, int bk)
{
    size_t du = (size_t)(c->d + 3) / 4, dvu = (size_t)(c->dv + 3) / 4;
    size_t st = du | 1;
    return 16 * (bq * st + bk * st + bk * dvu) + 4 * 2 * (size_t)bq * (bk + 1);
}

static glc_status plan_tile(glc__op_plan *p, const glc__op_args *a, const sdpa_cfg *c,
                            const glc__target *tg, char *err, size_t len)
{
    static const int bqs[3] = {16, 8, 4}, bks[6] = {32, 16, 8, 4, 2, 1};
    uint32_t budget = tg->limits.max_shared_bytes;
    int bq = 0, bk = 0, i, j, per, rq, rk;
    uint64_t nqb;
    glc__dispatch_plan *d;
    for (i = 0; i < 3 && !bq; i++)
        for (j = 0; j < 6 && !bq; j++)
            if (tile_bytes(c, bqs[i], bks[j]) <= budget) {
                bq = bqs[i];
                bk = bks[j];
            }
    if (!bq)
        return glc__op_error(err, len, "sdpa", "head dims %lld, %lld need more than the %u "
                             "bytes of shared memory of this device",
                             (long long)c->d, (long long)c->dv, budget);
    /* scores per thread as a rq x rk register block */
    per = bq * bk / TILE_LOCAL;
    rq = per >= 2 ? 2 : 1;
    rk = per >= 4 ? per / 2 : 1;
    nqb = (uint64_t)(c->tq + bq - 1) / bq;
    d = glc__plan_dispatch(p, "sdpa_tile", TILE_LOCAL, 1);
    d->groups = nqb * (uint64_t)c->hq;
    common_defines(d, a, c, 1);
    glc__define_int(d, "BQ", bq);
    glc__define_int(d, "BK", bk);
    glc__define_int(d, "RQ", rq);
    glc__define_int(d, "RK", rk);
    bind_qkv(d, 3);
    head_params(d, c);
    glc__plan_param_at(d, GLC__KP_SDPA_TILE_QBLOCKS, (uint32_t)nqb);
    return GLC_OK;
}

/* The merge of nsplit partials per (row, head) into out: sdpa_combine, a
 * group per (row, head), each invocation looping over the partials. */
static glc_status plan_combine(glc__op_plan *p, const glc__op_args *a, const sdpa_cfg *c,
                               const glc__target *tg, uint64_t nsplit, char *err, size_t len)
{
    uint64_t budget = glc__loop_budget(tg);
    glc__dispatch_plan *d;
    if (budget && (uint64_t)ceil_div64(c->dv, COMBINE_LOCAL) * (nsplit + 1) + 16 > budget)
        return glc__op_error(err, len, glc__ops[a->op]->name,
                             "%lld keys in %llu chunks: more than this device merges in one "
                             "shader invocation (%u loop iterations in all)",
                             (long long)c->kv_len, (unsigned long long)nsplit,
                             tg->limits.max_loop_iterations);
    d = glc__plan_dispatch(p, "sdpa_combine", COMBINE_LOCAL, 1);
    d->groups = (uint64_t)(c->tq * c->hq);
    glc__plan_bind(d, GLC__SCRATCH, GLC_READ);
    d->bind[0].size = 4 * (size_t)(c->tq * c->hq) * nsplit * (size_t)(c->dv + 2);
    glc__plan_bind(d, a->nin, GLC_WRITE);
    glc__plan_param_at(d, GLC__KP_SDPA_COMBINE_NSPLIT, (uint32_t)nsplit);
    glc__plan_param_at(d, GLC__KP_SDPA_COMBINE_DV, (uint32_t)c->dv);
    return GLC_OK;
}

static glc_status sdpa_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                            char *err, size_t len)
{
    glc__op_args tmp = *a;
    sdpa_cfg c;
    int64_t keys, chunk;
    uint64_t nsplit, budget = glc__loop_budget(tg);
    glc_status st = sdpa_check(&tmp, "sdpa", &c, err, len);
    if (st != GLC_OK)
        return st;
    keys = keys_needed(&c, c.tq - 1);
    /* the tile variant walks every key tile in one invocation */
    if (!tg->is_llvmpipe && (!budget || (uint64_t)keys * TILE_KEY_COST <= budget))
        return plan_tile(p, a, &c, tg, err, len);
    if (rows_kb(&c, tg, keys))
        return plan_rows(p, a, &c, tg, 0, 0, 1, 3, err, len);
    /* too many keys for one invocation: chunks of keys, merged per row */
    chunk = rows_chunk(&c, tg);
    if (chunk <= 0)
        return plan_rows(p, a, &c, tg, 0, 0, 1, 3, err, len); /* refuses, with the message */
    nsplit = (uint64_t)ceil_div64(keys, chunk);
    if ((uint64_t)(c.tq * c.hq) * nsplit * (uint64_t)(c.dv + 2) > 0xffffffffull)
        return glc__op_error(err, len, "sdpa", "%lld keys for %lld query rows: the chunks' "
                             "partials would pass 2^32 - 1 floats", (long long)keys,
                             (long long)c.tq);
    p->scratch_bytes = 4 * (size_t)(c.tq * c.hq) * nsplit * (size_t)(c.dv + 2);
    if ((st = plan_rows(p, a, &c, tg, 1, chunk, nsplit, GLC__SCRATCH, err, len)) != GLC_OK)
        return st;
    return plan_combine(p, a, &c, tg, nsplit, err, len);
}

/* ---- decode ---- */

int64_t glc_sdpa_decode_scratch(int64_t hq, int64_t dv, int64_t kv_len)
{
    if (hq < 1 || dv < 1 || kv_len < 1)
        return 0;
    return hq * ceil_div64(kv_len, SDPA_CHUNK) * (dv + 2);
}

/* The fused rope_qkv's inputs (a 7-input sdpa_decode): rope_qkv's rule
 * on q, k, v, pos, freq_factors and the caches, then what the kernels
 * take: f32 rows of one token, head dims of whole vec4s. */
static glc_status rope_check(const glc__op_args *a, char *err, size_t len)
{
    glc__op_args r;
    const glc__tensor *q = &a->t[0], *k = &a->t[3], *v = &a->t[4];
    char sk[96], sv[96];
    glc_status st;
    glc__op_args_init(&r, GLC__OP_ROPE_QKV, 7, 1);
    r.t[0] = a->t[0];
    r.t[1] = a->t[3];
    r.t[2] = a->t[4];
    r.t[3] = a->t[5];
    r.t[4] = a->t[6];
    r.t[5] = a->t[1];
    r.t[6] = a->t[2];
    r.rope.base = a->sdpa.rope_base;
    r.rope.mode = a->sdpa.rope_mode;
    r.rope.dim = a->sdpa.rope_dim;
    if ((st = glc__ops[GLC__OP_ROPE_QKV]->infer(&r, err, len)) != GLC_OK)
        return st;
    if (q->dtype != GLC_DTYPE_F32 || k->dtype != GLC_DTYPE_F32 || v->dtype != GLC_DTYPE_F32 ||
        k->rank != 3 || v->rank != 3 || k->shape[0] != 1 || k->shape[2] % 4 ||
        v->shape[2] % 4)
        return glc__op_error(err, len, "sdpa_decode",
                             "k %s, v %s: the fused rope takes f32 [1, Hkv, D] rows, head dims "
                             "multiples of 4",
                             glc__shape_str(k, sk, sizeof sk), glc__shape_str(v, sv, sizeof sv));
    return GLC_OK;
}

static glc_status decode_infer(glc__op_args *a, char *err, size_t len)
{
    sdpa_cfg c;
    char sq[96];
    glc__op_args three = *a;
    glc_status st;
    if (a->nin != 3 && a->nin != 7)
        return glc__op_error(err, len, "sdpa_decode", "internal: %d inputs", a->nin);
    /* the attention over q and the caches (out in t[3] for sdpa_check) */
    three.nin = 3;
    if ((st = sdpa_check(&three, "sdpa_decode", &c, err, len)) != GLC_OK)
        return st;
    a->t[a->nin] = three.t[3];
    if (a->nin == 7 && (st = rope_check(a, err, len)) != GLC_OK)
        return st;
    if (c.tq != 1)
        return glc__op_error(err, len, "sdpa_decode", "q %s: decode takes one query row",
                             glc__shape_str(&a->t[0], sq, sizeof sq));
    /* sdpa.scratch: the scratch view's dtype as the entry point saw it (0: none) */
    if (a->sdpa.scratch && a->sdpa.scratch != GLC_DTYPE_F32)
        return glc__op_error(err, len, "sdpa_decode", "scratch is %s, must be f32",
                             glc_dtype_name((glc_dtype)a->sdpa.scratch));
    return GLC_OK;
}

/* Shared bytes of the split variant with gb heads per group and rg heads per
 * reduction round. */
static size_t split_bytes(const sdpa_cfg *c, int gb, int rg, uint32_t local)
{
    size_t du = (size_t)(c->d + 3) / 4;
    return 16 * (size_t)gb * du + 16 * (size_t)SDPA_CHUNK * (size_t)((gb + 3) / 4) +
           4 * (size_t)gb * local + 20 * (size_t)rg * local;
}

static glc_status plan_split(glc__op_plan *p, const glc__op_args *a, const sdpa_cfg *c,
                             const glc__target *tg, uint64_t nused, int out_tensor, char *err,
                             size_t len)
{
    int64_t group = c->hq / c->hkv;
    int gb = group < SPLIT_MAX_HEADS ? (int)group : SPLIT_MAX_HEADS, rg = gb, units, lanes;
    uint32_t budget = tg->limits.max_shared_bytes;
    uint64_t nhb;
    glc__dispatch_plan *d;
    /* few keys: a group per query head rather than per kv head, or the
     * GPU runs a handful of groups (8 for 8 kv heads and one chunk) */
    uint32_t local = TILE_LOCAL;
    if ((uint64_t)c->hkv * nused * (uint64_t)ceil_div64(group, gb) < SPLIT_MIN_GROUPS) {
        gb = rg = 1;
        if (tg->limits.max_invocations >= SPLIT_WIDE_LOCAL)
            local = SPLIT_WIDE_LOCAL;
    }
    while (split_bytes(c, gb, rg, local) > budget) {
        if (rg > 1)
            rg--;
        else if (gb > 1)
            gb = rg = gb - 1;
        else
            return glc__op_error(err, len, "sdpa_decode",
                                 "head dim %lld needs more than the %u bytes of shared memory "
                                 "of this device",
                                 (long long)c->d, budget);
    }
    nhb = (uint64_t)ceil_div64(group, gb);
    units = (int)((c->dv + 3) / 4);
    for (lanes = 1; lanes < units; lanes *= 2)
        ;
    d = glc__plan_dispatch(p, "sdpa_split", local, 1);
    d->groups = (uint64_t)c->hkv * nhb * nused;
    common_defines(d, a, c, 1);
    glc__define_int(d, "GB", gb);
    glc__define_int(d, "RG", rg);
    glc__define_int(d, "CHUNK", SDPA_CHUNK);
    glc__define_int(d, "LANES", lanes);
    bind_qkv(d, out_tensor);
    glc__plan_param_at(d, GLC__KP_SDPA_SPLIT_HQ, (uint32_t)c->hq);
    glc__plan_param_at(d, GLC__KP_SDPA_SPLIT_GROUP, (uint32_t)group);
    glc__plan_param_at(d, GLC__KP_SDPA_SPLIT_HKV, (uint32_t)c->hkv);
    glc__plan_param_at(d, GLC__KP_SDPA_SPLIT_KEYS, (uint32_t)keys_needed(c, 0));
    glc__plan_param_at(d, GLC__KP_SDPA_SPLIT_NSPLIT, (uint32_t)nused);
    glc__plan_param_at(d, GLC__KP_SDPA_SPLIT_HEAD_BLOCKS, (uint32_t)nhb);
    glc__plan_paramf_at(d, GLC__KP_SDPA_SPLIT_QSCALE, (float)(c->scale * LOG2E));
    glc__plan_param_at(d, GLC__KP_SDPA_SPLIT_NORMALIZE, nused == 1);
    if (out_tensor == GLC__SCRATCH)
        d->bind[3].size = 4 * (size_t)c->hq * nused * (size_t)(c->dv + 2);
    return GLC_OK;
}

/* The fused rope_qkv on GPUs: rope_qkv's own dispatch first (q rotated
 * in place, the caches' rows), its tensors mapped to the fused op's. On
 * the H100 the attention kernel doing the rope itself (its caches bound
 * writable) made the 1b decode slower: q4_0 1.52 -> 1.67 ms/token
 * (bench/RESULTS.md, issue 13). */
static glc_status rope_first(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                             char *err, size_t len)
{
    static const int from[8] = {0, 3, 4, 5, 6, 1, 2, 2}; /* rope_qkv's t[i]: the fused op's */
    glc__op_args r;
    glc__op_plan rp;
    glc_status st;
    int i;
    glc__op_args_init(&r, GLC__OP_ROPE_QKV, 7, 1);
    for (i = 0; i < 8; i++)
        r.t[i] = a->t[from[i]];
    r.rope.base = a->sdpa.rope_base;
    r.rope.mode = a->sdpa.rope_mode;
    r.rope.dim = a->sdpa.rope_dim;
    memset(&rp, 0, sizeof rp);
    if ((st = glc__ops[GLC__OP_ROPE_QKV]->plan(&r, tg, &rp, err, len)) != GLC_OK)
        return st;
    if (rp.ndisp != 1)
        return glc__op_error(err, len, "sdpa_decode", "internal: %d rope dispatches", rp.ndisp);
    p->disp[p->ndisp] = rp.disp[0];
    for (i = 0; i < p->disp[p->ndisp].nbind; i++) {
        int t = p->disp[p->ndisp].bind[i].tensor;
        if (t < 0 || t > 7)
            return glc__op_error(err, len, "sdpa_decode", "internal: rope binding %d", t);
        p->disp[p->ndisp].bind[i].tensor = from[t];
    }
    p->ndisp++;
    return GLC_OK;
}

static glc_status decode_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                              char *err, size_t len)
{
    glc__op_args tmp = *a;
    sdpa_cfg c;
    uint64_t nused;
    glc_status st = sdpa_check(&tmp, "sdpa_decode", &c, err, len);
    if (st != GLC_OK)
        return st;
    if (c.rope && !tg->is_llvmpipe) { /* GPUs: the rope's dispatch, then the attention */
        c.rope = 0;
        if ((st = rope_first(a, tg, p, err, len)) != GLC_OK)
            return st;
    }
    nused = (uint64_t)ceil_div64(keys_needed(&c, 0), SDPA_CHUNK);
    p->scratch_bytes = 4 * (size_t)glc_sdpa_decode_scratch(c.hq, c.dv, c.kv_len);
    /* one chunk: no partials to merge, the first dispatch writes out */
    if (nused == 1)
        return tg->is_llvmpipe ? plan_rows(p, a, &c, tg, 0, SDPA_CHUNK, 1, a->nin, err, len)
                               : plan_split(p, a, &c, tg, 1, a->nin, err, len);
    st = tg->is_llvmpipe ? plan_rows(p, a, &c, tg, 1, SDPA_CHUNK, nused, GLC__SCRATCH, err, len)
                         : plan_split(p, a, &c, tg, nused, GLC__SCRATCH, err, len);
    if (st != GLC_OK)
        return st;
    return plan_combine(p, a, &c, tg, nused, err, len);
}

const glc__op_desc glc__op_SDPA_desc = {"sdpa", sdpa_infer, sdpa_plan};
const glc__op_desc glc__op_SDPA_DECODE_desc = {"sdpa_decode", decode_infer, decode_plan};

/* desc NULL: all defaults, q_offset -1. A zero-initialised desc means
 * q_offset 0: query row 0 sits at position 0 (a prompt with no cache
 * before it); pass -1 for "the last Tq positions of kv_len". */
void glc__pack_sdpa(glc__op_args *a, const glc_sdpa_desc *desc, glc_dtype scratch)
{
    a->sdpa.scale = desc ? desc->scale : 0.0f;
    a->sdpa.causal = desc ? desc->causal : 0;
    a->sdpa.q_offset = desc ? desc->q_offset : -1;
    a->sdpa.kv_len = desc ? desc->kv_len : 0;
    a->sdpa.scratch = scratch;
}

glc_status glc_op_sdpa(glc_session *s, glc_view q, glc_view k, glc_view v,
                       const glc_sdpa_desc *desc, glc_view out)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_SDPA, 3, 1);
    glc__pack_sdpa(&args, desc, 0);
    return glc__op_run(s, &args, (glc_view[]){q, k, v, out}, NULL);
}

glc_status glc_op_sdpa_decode(glc_session *s, glc_view q, glc_view k, glc_view v,
                              const glc_sdpa_desc *desc, glc_view scratch, glc_view out)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_SDPA_DECODE, 3, 1);
    glc__pack_sdpa(&args, desc, scratch.buffer ? scratch.dtype : (glc_dtype)0);
    return glc__op_run(s, &args, (glc_view[]){q, k, v, out}, &scratch);
}
