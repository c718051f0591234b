/*
 * The op case table's runner (see optable.h): per op, how to make its
 * inputs, its reference, its eager call and its graph builder call; then
 * the two ways of running a case.
 */
#include "optable.h"

#include "ref_attention.h"
#include "ref_data.h"
#include "ref_elementwise.h"
#include "ref_matmul.h"
#include "ref_quant.h"
#include "ref_reduce.h"
#include "ref_rope.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>


static size_t numel(int rank, const int64_t *shape)
{
    return (size_t)ot_numel(rank, shape);
}

static size_t onumel(const oc_data *d)
{
    return numel(d->orank, d->oshape);
}

static void set_out(oc_data *d, int rank, const int64_t *shape)
{
    d->orank = rank;
    memcpy(d->oshape, shape, (size_t)rank * sizeof *shape);
    d->ref = calloc(numel(rank, shape) + 1, 4);
}
/* ---- inputs ---- */

/* Every operand of the case: random floats in [-2, 2) rounded to its
 * dtype (I32 operands get 0..7, set by the op's gen). */
static void gen_default(const oc_case *c, oc_data *d, uint64_t *seed)
{
    int i;
    for (i = 0; i < MAXIN; i++) {
        oc_operand *o = &d->in[i];
        size_t n;
        o->rank = (int)c->s[i][0];
        if (o->rank <= 0)
            continue;
        o->dt = c->dt[i] ? c->dt[i] : F32;
        memcpy(o->shape, &c->s[i][1], sizeof o->shape);
        n = numel(o->rank, o->shape);
        o->f = malloc((n + 1) * 4);
        ot_fill(seed, o->f, n, -2.0f, 2.0f);
        if (o->dt == I32 || (i == 0 && (c->flags & C_TIES))) {
            size_t j;
            for (j = 0; j < n; j++)
                o->f[j] = (float)(ot_rand(seed) % 8);
        }
        if (i == 0 && c->op == OC_LAYER_NORM) { /* a mean far from 0: the norm must not cancel */
            size_t j;
            for (j = 0; j < n; j++)
                o->f[j] += 20.0f;
        }
        ot_round(o->dt, o->f, n);
    }
}

static void ids_in(oc_operand *o, uint64_t *seed, int64_t lo, int64_t hi)
{
    size_t j, n = numel(o->rank, o->shape);
    for (j = 0; j < n; j++)
        o->f[j] = (float)(lo + (int64_t)(ot_rand(seed) % (uint64_t)(hi - lo)));
}

/* Weights [rows, k] (GGML blocks when dt is a block type: w quantized,
 * or random blocks with C_RAWQ): raw bytes, and the dequantized values
 * into deq. */
static void *weights(const oc_case *c, glc_dtype dt, const float *w, int64_t rows, int64_t k,
                     float *deq, uint64_t *seed)
{
    size_t n = (size_t)(rows * k);
    if (glc_dtype_size(dt) == 0) {
        uint8_t *q = malloc((size_t)rows * glc_dtype_row_bytes(dt, k));
        if (c->flags & C_RAWQ)
            ref_random_blocks(dt, n, seed, q);
        else
            ref_quantize(dt, w, n, q);
        ref_dequantize(dt, q, n, deq);
        return q;
    }
    memcpy(deq, w, n * 4);
    ot_round(dt, deq, n);
    return NULL;
}

/* ---- elementwise ---- */

static void ref_bin(const oc_case *c, oc_data *d)
{
    const oc_operand *a = &d->in[0], *b = &d->in[1];
    int64_t so[4];
    int ro = a->rank > b->rank ? a->rank : b->rank, i;
    for (i = 0; i < ro; i++) {
        int ia = i - (ro - a->rank), ib = i - (ro - b->rank);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        so[i] = da > db ? da : db;
    }
    set_out(d, ro, so);
    ref_binary(c->op - OC_ADD, a->f, a->rank, a->shape, b->f, b->rank, b->shape, d->ref, ro, so);
}

static void gen_bin(const oc_case *c, oc_data *d, uint64_t *seed)
{
    size_t j, n;
    gen_default(c, d, seed);
    if (c->op != OC_DIV)
        return;
    n = numel(d->in[1].rank, d->in[1].shape); /* away from 0: div stays well-conditioned */
    for (j = 0; j < n; j++)
        d->in[1].f[j] = 0.5f + fabsf(d->in[1].f[j]);
    ot_round(d->in[1].dt, d->in[1].f, n);
}

static glc_status eager_bin(glc_session *s, glc_device *dev, const oc_case *c, const glc_view *in,
                            glc_view out)
{
    glc_status (*fn[4])(glc_session *, glc_view, glc_view, glc_view) = {glc_op_add, glc_op_sub,
                                                                         glc_op_mul, glc_op_div};
    (void)dev;
    return fn[c->op - OC_ADD](s, in[0], in[1], out);
}

static glc_tensor graph_bin(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    glc_tensor (*fn[4])(glc_graph *, glc_tensor, glc_tensor) = {glc_add, glc_sub, glc_mul, glc_div};
    return fn[c->op - OC_ADD](g, in[0], in[1]);
}

static void ref_scale(const oc_case *c, oc_data *d)
{
    set_out(d, d->in[0].rank, d->in[0].shape);
    ref_unary(REF_UNARY_SCALE, d->in[0].f, d->ref, onumel(d), c->f[0], c->f[1]);
}

static glc_status eager_scale(glc_session *s, glc_device *dev, const oc_case *c,
                              const glc_view *in, glc_view out)
{
    (void)dev;
    return glc_op_scale(s, in[0], c->f[0], c->f[1], out);
}

static glc_tensor graph_scale(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    return glc_scale(g, in[0], c->f[0], c->f[1]);
}

static void ref_un(const oc_case *c, oc_data *d)
{
    set_out(d, d->in[0].rank, d->in[0].shape);
    ref_unary((int)c->i[0], d->in[0].f, d->ref, onumel(d), c->f[0], 0);
}

static glc_status eager_un(glc_session *s, glc_device *dev, const oc_case *c, const glc_view *in,
                           glc_view out)
{
    (void)dev;
    return glc_op_unary(s, (glc_unary_op)c->i[0], in[0], c->f[0], out);
}

static glc_tensor graph_un(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    return glc_unary(g, (glc_unary_op)c->i[0], in[0], c->f[0]);
}

/* ---- row ops ---- */

static int64_t rows_of(const oc_operand *x)
{
    return (int64_t)numel(x->rank, x->shape) / x->shape[x->rank - 1];
}

static glc_softmax_desc softmax_desc(const oc_case *c)
{
    glc_softmax_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.scale = c->f[0];
    sd.causal = (int)c->i[0];
    sd.pos_offset = c->i[1];
    return sd;
}

static void ref_softmax_c(const oc_case *c, oc_data *d)
{
    const oc_operand *x = &d->in[0];
    set_out(d, x->rank, x->shape);
    ref_softmax(x->f, rows_of(x), x->shape[x->rank - 1], c->f[0] ? c->f[0] : 1.0f, (int)c->i[0],
                x->rank > 1 ? x->shape[x->rank - 2] : 1, c->i[1], d->ref);
}

static glc_status eager_softmax(glc_session *s, glc_device *dev, const oc_case *c,
                                const glc_view *in, glc_view out)
{
    glc_softmax_desc sd = softmax_desc(c);
    (void)dev;
    return glc_op_softmax(s, in[0], &sd, out);
}

static glc_tensor graph_softmax(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    glc_softmax_desc sd = softmax_desc(c);
    return glc_softmax(g, in[0], &sd);
}

static void ref_norm(const oc_case *c, oc_data *d)
{
    const oc_operand *x = &d->in[0];
    float eps = c->f[0] != 0 ? c->f[0] : c->op == OC_RMS_NORM ? 1e-6f : 1e-5f; /* 0: default */
    set_out(d, x->rank, x->shape);
    if (c->op == OC_RMS_NORM)
        ref_rms_norm(x->f, rows_of(x), x->shape[x->rank - 1], d->in[1].f, eps, d->ref);
    else
        ref_layer_norm(x->f, rows_of(x), x->shape[x->rank - 1], d->in[1].f, d->in[2].f, eps,
                       d->ref);
}

static glc_status eager_norm(glc_session *s, glc_device *dev, const oc_case *c,
                             const glc_view *in, glc_view out)
{
    (void)dev;
    if (c->op == OC_RMS_NORM)
        return glc_op_rms_norm(s, in[0], in[1], c->f[0], out);
    return glc_op_layer_norm(s, in[0], in[1], in[2], c->f[0], out);
}

static glc_tensor graph_norm(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    if (c->op == OC_RMS_NORM)
        return glc_rms_norm(g, in[0], in[1], c->f[0]);
    return glc_layer_norm(g, in[0], in[1], in[2], c->f[0]);
}

static void ref_reduce(const oc_case *c, oc_data *d)
{
    const oc_operand *x = &d->in[0];
    int64_t one = 1;
    if (x->rank == 1)
        set_out(d, 1, &one);
    else
        set_out(d, x->rank - 1, x->shape);
    if (c->op == OC_ARGMAX)
        ref_argmax(x->f, rows_of(x), x->shape[x->rank - 1], d->ref);
    else
        ref_sum(x->f, rows_of(x), x->shape[x->rank - 1], c->op == OC_MEAN, d->ref);
}

static glc_status eager_reduce(glc_session *s, glc_device *dev, const oc_case *c,
                               const glc_view *in, glc_view out)
{
    (void)dev;
    return c->op == OC_SUM    ? glc_op_sum(s, in[0], out)
           : c->op == OC_MEAN ? glc_op_mean(s, in[0], out)
                              : glc_op_argmax(s, in[0], out);
}

static glc_tensor graph_reduce(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    return c->op == OC_SUM    ? glc_sum(g, in[0])
           : c->op == OC_MEAN ? glc_mean(g, in[0])
                              : glc_argmax(g, in[0]);
}

/* ---- rope: x [T, H, D] or [B, T, H, D], positions I32 [T], optional
 * factors [rope_dim / 2]; i[0] mode, i[1] rope_dim, i[2] positions below
 * (0: 4096), f[0] base ---- */

static void gen_rope(const oc_case *c, oc_data *d, uint64_t *seed)
{
    size_t j;
    gen_default(c, d, seed);
    ids_in(&d->in[1], seed, 0, c->i[2] ? c->i[2] : 4096);
    if (d->in[2].rank)
        for (j = 0; j < numel(1, d->in[2].shape); j++)
            d->in[2].f[j] = 1.0f + fabsf(d->in[2].f[j]);
}

static glc_rope_desc rope_desc(const oc_case *c, glc_view ff)
{
    glc_rope_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.mode = (glc_rope_mode)c->i[0];
    rd.rope_dim = c->i[1];
    rd.base = c->f[0];
    rd.freq_factors = ff;
    return rd;
}

static void ref_rope_c(const oc_case *c, oc_data *d)
{
    const oc_operand *x = &d->in[0];
    int64_t b = x->rank == 4 ? x->shape[0] : 1, t = x->shape[x->rank - 3], j;
    int32_t *pos = malloc((size_t)t * 4);
    for (j = 0; j < t; j++)
        pos[j] = (int32_t)d->in[1].f[j];
    set_out(d, x->rank, x->shape);
    ref_rope(x->f, b, t, x->shape[x->rank - 2], x->shape[x->rank - 1], pos, (int)c->i[0],
             c->i[1] ? c->i[1] : x->shape[x->rank - 1], c->f[0] ? c->f[0] : 10000.0,
             d->in[2].f, d->ref);
    free(pos);
}

static glc_status eager_rope(glc_session *s, glc_device *dev, const oc_case *c,
                             const glc_view *in, glc_view out)
{
    glc_rope_desc rd = rope_desc(c, in[2]);
    (void)dev;
    return glc_op_rope(s, in[0], in[1], &rd, out);
}

static glc_tensor graph_rope(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    glc_rope_desc rd = rope_desc(c, ot_none());
    return glc_rope(g, in[0], in[1], &rd, in[2]);
}

/* ---- matmul: a [.., M, K], b [.., K, N] or (i[0]) [.., N, K], bias ---- */

static void ref_mm(const oc_case *c, oc_data *d)
{
    const oc_operand *a = &d->in[0], *b = &d->in[1];
    int nt = (int)c->i[0], r;
    int64_t m = a->shape[a->rank - 2], k = a->shape[a->rank - 1];
    int64_t n = nt ? b->shape[b->rank - 2] : b->shape[b->rank - 1];
    int64_t ab[2] = {1, 1}, bb[2] = {1, 1}, so[4];
    for (r = 0; r < a->rank - 2; r++) {
        ab[2 - (a->rank - 2) + r] = a->shape[r];
        so[r] = a->shape[r];
    }
    for (r = 0; r < b->rank - 2; r++)
        bb[2 - (b->rank - 2) + r] = b->shape[r];
    so[a->rank - 2] = m;
    so[a->rank - 1] = n;
    set_out(d, a->rank, so);
    ref_matmul(a->f, b->f, d->in[2].f, ab, bb, m, n, k, nt, d->ref);
}

static glc_status eager_mm(glc_session *s, glc_device *dev, const oc_case *c, const glc_view *in,
                           glc_view out)
{
    glc_matmul_desc md;
    (void)dev;
    md.transpose_b = (int)c->i[0];
    return glc_op_matmul(s, in[0], in[1], in[2], &md, out);
}

static glc_tensor graph_mm(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    glc_matmul_desc md;
    md.transpose_b = (int)c->i[0];
    return glc_matmul(g, in[0], in[1], in[2], &md);
}

/* ---- matmul_affine: a s[0] [M, K]; s[1] = {N}; dt[1] the scales' dtype,
 * dt[3] the biases' (0: dt[1]); bias [N] when s[2] is given; i[0] bits,
 * i[1] group ---- */

static void gen_affine(const oc_case *c, oc_data *d, uint64_t *seed)
{
    int64_t m = c->s[0][1], k = c->s[0][2], n = c->s[1][1], bits = c->i[0], gs = c->i[1];
    float *w = malloc((size_t)(n * k) * 4), *sc = malloc((size_t)(n * k / gs) * 4);
    float *bi = malloc((size_t)(n * k / gs) * 4);
    uint32_t *wq = malloc((size_t)(n * k * bits / 32) * 4);
    oc_operand *o = d->in;
    (void)m;
    gen_default(c, d, seed); /* a, and bias */
    d->in[4] = d->in[2];
    ot_fill(seed, w, (size_t)(n * k), -1.0f, 1.0f);
    /* scales rounded to dt[1], biases to dt[3] (0: dt[1]) */
    ref_quantize_affine(w, n, k, (int)bits, (int)gs, F32, wq, sc, bi);
    ot_round(c->dt[1], sc, (size_t)(n * k / gs));
    ot_round(c->dt[3] ? c->dt[3] : c->dt[1], bi, (size_t)(n * k / gs));
    d->aux = malloc((size_t)(n * k) * 4);
    ref_dequantize_affine(wq, sc, bi, n, k, (int)bits, (int)gs, d->aux);
    free(w);
    free(o[1].f);
    o[1].dt = GLC_DTYPE_U32;
    o[1].rank = 2;
    o[1].shape[0] = n;
    o[1].shape[1] = k * bits / 32;
    o[1].f = NULL;
    o[1].raw = wq;
    o[1].param = 1;
    o[2].dt = c->dt[1];
    o[3].dt = c->dt[3] ? c->dt[3] : c->dt[1];
    o[2].rank = o[3].rank = 2;
    o[2].shape[0] = o[3].shape[0] = n;
    o[2].shape[1] = o[3].shape[1] = k / gs;
    o[2].f = sc;
    o[3].f = bi;
    o[2].param = o[3].param = 1;
    o[2].raw = o[3].raw = NULL;
}

static void ref_affine(const oc_case *c, oc_data *d)
{
    int64_t m = d->in[0].shape[0], k = d->in[0].shape[1], n = c->s[1][1], so[2];
    so[0] = m;
    so[1] = n;
    set_out(d, 2, so);
    ref_matmul_nt(d->in[0].f, d->aux, d->in[4].f, m, n, k, d->ref);
}

static glc_status eager_affine(glc_session *s, glc_device *dev, const oc_case *c,
                               const glc_view *in, glc_view out)
{
    (void)dev;
    return glc_op_matmul_affine(s, in[0], in[1], in[2], in[3], (int)c->i[0], (int)c->i[1], in[4],
                                out);
}

static glc_tensor graph_affine(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    return glc_matmul_affine(g, in[0], in[1], in[2], in[3], (int)c->i[0], (int)c->i[1], in[4]);
}

/* ---- matmul_q: a [M, K], w dt[1] [N, K], bias ---- */

static void gen_q(const oc_case *c, oc_data *d, uint64_t *seed)
{
    oc_operand *w = &d->in[1];
    int64_t rows;
    gen_default(c, d, seed);
    rows = (int64_t)numel(w->rank, w->shape) / w->shape[w->rank - 1];
    ot_fill(seed, w->f, numel(w->rank, w->shape), -1.0f, 1.0f);
    d->aux = malloc(numel(w->rank, w->shape) * 4);
    w->raw = weights(c, w->dt, w->f, rows, w->shape[w->rank - 1], d->aux, seed);
    if (w->raw) {
        free(w->f);
        w->f = NULL;
    } else {
        memcpy(w->f, d->aux, numel(w->rank, w->shape) * 4);
    }
    w->param = 1;
}

static void ref_q(const oc_case *c, oc_data *d)
{
    const oc_operand *a = &d->in[0];
    int64_t k = a->shape[a->rank - 1], m = (int64_t)numel(a->rank, a->shape) / k;
    int64_t n = d->in[1].shape[0], so[4];
    (void)c;
    memcpy(so, a->shape, sizeof so);
    so[a->rank - 1] = n; /* leading dims of a are rows too */
    set_out(d, a->rank, so);
    ref_matmul_nt(a->f, d->aux, d->in[2].f, m, n, k, d->ref);
}

static glc_status eager_q(glc_session *s, glc_device *dev, const oc_case *c, const glc_view *in,
                          glc_view out)
{
    (void)dev;
    (void)c;
    return glc_op_matmul_q(s, in[0], in[1], in[2], out);
}

static glc_tensor graph_q(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    (void)c;
    return glc_matmul_q(g, in[0], in[1], in[2]);
}

/* ---- matmul_expert: a [M, K] or [M, k, K], w dt[1] [E, N, K], ids I32
 * [M, k] (some outside [0, E): zero rows) ---- */

static void gen_expert(const oc_case *c, oc_data *d, uint64_t *seed)
{
    size_t j, n;
    gen_q(c, d, seed);
    n = numel(d->in[2].rank, d->in[2].shape);
    ids_in(&d->in[2], seed, 0, d->in[1].shape[0]);
    for (j = 0; j < n; j += 5)
        d->in[2].f[j] = j % 2 ? -1.0f : (float)d->in[1].shape[0];
}

static void ref_expert(const oc_case *c, oc_data *d)
{
    const oc_operand *a = &d->in[0], *ids = &d->in[2];
    int64_t m = ids->shape[0], kk = ids->shape[1], e = d->in[1].shape[0], n = d->in[1].shape[1];
    int64_t k = d->in[1].shape[2], p, so[3];
    (void)c;
    so[0] = m;
    so[1] = kk;
    so[2] = n;
    set_out(d, 3, so);
    for (p = 0; p < m * kk; p++) {
        int64_t id = (int64_t)ids->f[p];
        if (id >= 0 && id < e)
            ref_matmul_nt(a->f + (a->rank == 3 ? p : p / kk) * k, d->aux + id * n * k, NULL, 1, n,
                          k, d->ref + p * n);
    }
}

static glc_status eager_expert(glc_session *s, glc_device *dev, const oc_case *c,
                               const glc_view *in, glc_view out)
{
    (void)dev;
    (void)c;
    return glc_op_matmul_expert(s, in[0], in[1], in[2], out);
}

static glc_tensor graph_expert(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    (void)c;
    return glc_matmul_expert(g, in[0], in[1], in[2]);
}

/* ---- sdpa: q [Tq, Hq, D], k dt[1] [Tk, Hkv, D], v dt[2] [Tk, Hkv, Dv];
 * f[0] scale, i[0] causal, i[1] q_offset, i[2] kv_len, i[3] 1: desc NULL
 * (the defaults) ---- */

static glc_sdpa_desc sdpa_desc(const oc_case *c)
{
    glc_sdpa_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.scale = c->f[0];
    sd.causal = (int)c->i[0];
    sd.q_offset = c->i[1];
    sd.kv_len = c->i[2];
    return sd;
}

static void ref_sdpa_c(const oc_case *c, oc_data *d)
{
    const oc_operand *q = &d->in[0], *k = &d->in[1], *v = &d->in[2];
    ref_sdpa_shape sh;
    int64_t so[3];
    sh.tq = q->shape[0];
    sh.hq = q->shape[1];
    sh.d = q->shape[2];
    sh.tk = k->shape[0];
    sh.hkv = k->shape[1];
    sh.dv = v->shape[2];
    sh.scale = c->f[0] ? c->f[0] : (float)(1.0 / sqrt((double)sh.d));
    sh.causal = (int)c->i[0];
    sh.kv_len = c->i[2] ? c->i[2] : sh.tk;
    sh.q_offset = c->i[1] < 0 ? sh.kv_len - sh.tq : c->i[1];
    so[0] = sh.tq;
    so[1] = sh.hq;
    so[2] = sh.dv;
    set_out(d, 3, so);
    ref_sdpa(&sh, q->f, k->f, v->f, d->ref);
}

static glc_buffer *scratch; /* sdpa_decode's, freed after the session */

static glc_status eager_sdpa(glc_session *s, glc_device *dev, const oc_case *c,
                             const glc_view *in, glc_view out)
{
    glc_sdpa_desc sd = sdpa_desc(c);
    glc_status st;
    int64_t n;
    const glc_sdpa_desc *dp = c->i[3] ? NULL : &sd;
    if (c->op == OC_SDPA)
        return glc_op_sdpa(s, in[0], in[1], in[2], dp, out);
    n = glc_sdpa_decode_scratch(in[0].shape[1], in[2].shape[2],
                                sd.kv_len ? sd.kv_len : in[1].shape[0]);
    st = glc_buffer_create(dev, F32, 1, &n, &scratch);
    if (st != GLC_OK)
        return st;
    return glc_op_sdpa_decode(s, in[0], in[1], in[2], dp, glc_view_of(scratch), out);
}

static glc_tensor graph_sdpa(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    glc_sdpa_desc sd = sdpa_desc(c);
    const glc_sdpa_desc *dp = c->i[3] ? NULL : &sd;
    if (c->op == OC_SDPA)
        return glc_sdpa(g, in[0], in[1], in[2], dp);
    return glc_sdpa_decode(g, in[0], in[1], in[2], dp);
}

/* ---- data movement ---- */

/* get_rows: table dt[0] [V, D] (GGML blocks too), ids I32 s[1] (some
 * outside [0, V)). */
static void gen_get_rows(const oc_case *c, oc_data *d, uint64_t *seed)
{
    oc_operand *t = &d->in[0];
    size_t j, n;
    gen_default(c, d, seed);
    if (glc_dtype_size(t->dt) == 0) {
        d->aux = malloc(numel(t->rank, t->shape) * 4);
        t->raw = weights(c, t->dt, t->f, t->shape[0], t->shape[1], d->aux, seed);
        free(t->f);
        t->f = NULL;
    }
    n = numel(d->in[1].rank, d->in[1].shape);
    ids_in(&d->in[1], seed, 0, t->shape[0]);
    for (j = 3; j < n; j += 7)
        d->in[1].f[j] = j % 2 ? -1.0f : (float)t->shape[0];
}

static void ref_get_rows_c(const oc_case *c, oc_data *d)
{
    const oc_operand *ids = &d->in[1];
    int64_t so[4], v = d->in[0].shape[0], dd = d->in[0].shape[1];
    int64_t n = (int64_t)numel(ids->rank, ids->shape), j;
    int32_t *id = malloc((size_t)n * 4);
    (void)c;
    memcpy(so, ids->shape, (size_t)ids->rank * sizeof *so);
    so[ids->rank] = dd;
    set_out(d, ids->rank + 1, so);
    for (j = 0; j < n; j++)
        id[j] = (int32_t)ids->f[j];
    ref_get_rows(d->in[0].raw ? d->aux : d->in[0].f, v, dd, id, n, d->ref);
    free(id);
}

static glc_status eager_get_rows(glc_session *s, glc_device *dev, const oc_case *c,
                                 const glc_view *in, glc_view out)
{
    (void)dev;
    (void)c;
    return glc_op_get_rows(s, in[0], in[1], out);
}

static glc_tensor graph_get_rows(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    (void)c;
    return glc_get_rows(g, in[0], in[1]);
}

/* set_rows: src dt[0] [n, ...], ids I32 [n] (some outside), dst dt[2]
 * [V, ...]: the output is dst itself (a handle in the graph). */
static void gen_set_rows(const oc_case *c, oc_data *d, uint64_t *seed)
{
    int64_t j, n, v, stride = 7, a, b;
    gen_default(c, d, seed);
    n = d->in[1].shape[0];
    v = d->in[2].shape[0];
    for (;;) { /* a stride coprime to v */
        for (a = stride, b = v; b;) {
            int64_t t = a % b;
            a = b;
            b = t;
        }
        if (a == 1)
            break;
        stride += 2;
    }
    /* distinct in-range ids (which of repeated ids lands is unspecified),
     * some out of range */
    for (j = 0; j < n; j++) {
        uint64_t r = ot_rand(seed) % 8;
        d->in[1].f[j] = r == 0   ? (float)(-1 - (int64_t)(ot_rand(seed) % 3))
                        : r == 1 ? (float)(v + (int64_t)(ot_rand(seed) % 3))
                                 : (float)((j * stride + 3) % v);
    }
}

static void ref_set_rows_c(const oc_case *c, oc_data *d)
{
    const oc_operand *src = &d->in[0], *dst = &d->in[2];
    int64_t n = src->shape[0], row = (int64_t)numel(src->rank, src->shape) / n, j;
    int32_t *id = malloc((size_t)n * 4);
    float *s = malloc(numel(src->rank, src->shape) * 4);
    (void)c;
    set_out(d, dst->rank, dst->shape);
    memcpy(d->ref, dst->f, onumel(d) * 4);
    memcpy(s, src->f, numel(src->rank, src->shape) * 4);
    ot_round(dst->dt, s, numel(src->rank, src->shape));
    for (j = 0; j < n; j++)
        id[j] = (int32_t)d->in[1].f[j];
    ref_set_rows(s, n, row, id, d->ref, dst->shape[0]);
    free(id);
    free(s);
}

static glc_status eager_set_rows(glc_session *s, glc_device *dev, const oc_case *c,
                                 const glc_view *in, glc_view out)
{
    (void)dev;
    (void)c;
    return glc_op_set_rows(s, in[0], in[1], out);
}

static glc_tensor graph_set_rows(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    (void)c;
    return glc_set_rows(g, in[2], in[0], in[1]);
}

/* copy: i[0] 1 with a permutation in i[1..rank] */
static void ref_copy(const oc_case *c, oc_data *d)
{
    const oc_operand *x = &d->in[0];
    int perm[4], r;
    int64_t so[4];
    for (r = 0; r < x->rank; r++) {
        perm[r] = c->i[0] ? (int)c->i[1 + r] : r;
        so[r] = x->shape[perm[r]];
    }
    set_out(d, x->rank, so);
    ref_permute(x->f, x->rank, x->shape, perm, d->ref);
}

static glc_status eager_copy(glc_session *s, glc_device *dev, const oc_case *c,
                             const glc_view *in, glc_view out)
{
    int perm[4] = {(int)c->i[1], (int)c->i[2], (int)c->i[3], (int)c->i[4]};
    (void)dev;
    return glc_op_copy(s, in[0], c->i[0] ? perm : NULL, out);
}

static glc_tensor graph_copy(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    int perm[4] = {(int)c->i[1], (int)c->i[2], (int)c->i[3], (int)c->i[4]};
    return glc_copy(g, in[0], c->i[0] ? perm : NULL, c->odt);
}

/* concat: a, b along i[0] (negative: from the end) */
static void ref_concat_c(const oc_case *c, oc_data *d)
{
    const oc_operand *a = &d->in[0], *b = &d->in[1];
    int axis = (int)(c->i[0] < 0 ? a->rank + c->i[0] : c->i[0]);
    int64_t so[4];
    memcpy(so, a->shape, sizeof so);
    so[axis] += b->shape[axis];
    set_out(d, a->rank, so);
    ref_concat(a->f, a->shape, b->f, b->shape, a->rank, axis, d->ref);
}

static glc_status eager_concat(glc_session *s, glc_device *dev, const oc_case *c,
                               const glc_view *in, glc_view out)
{
    (void)dev;
    return glc_op_concat(s, in[0], in[1], (int)c->i[0], out);
}

static glc_tensor graph_concat(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    return glc_concat(g, in[0], in[1], (int)c->i[0]);
}

/* slice: i[0] axis, i[1] start, i[2] len */
static void ref_slice_c(const oc_case *c, oc_data *d)
{
    const oc_operand *x = &d->in[0];
    int axis = (int)(c->i[0] < 0 ? x->rank + c->i[0] : c->i[0]);
    int64_t so[4];
    memcpy(so, x->shape, sizeof so);
    so[axis] = c->i[2];
    set_out(d, x->rank, so);
    ref_slice(x->f, x->rank, x->shape, axis, c->i[1], c->i[2], d->ref);
}

static glc_status eager_slice(glc_session *s, glc_device *dev, const oc_case *c,
                              const glc_view *in, glc_view out)
{
    (void)dev;
    return glc_op_slice(s, in[0], (int)c->i[0], c->i[1], out);
}

static glc_tensor graph_slice(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    return glc_slice(g, in[0], (int)c->i[0], c->i[1], c->i[2]);
}

/* reshape (graph only: eagerly it is a view): x to the shape s[1], then
 * scaled by f[0] so the plan has a dispatch reading the new shape. */
static void gen_reshape(const oc_case *c, oc_data *d, uint64_t *seed)
{
    gen_default(c, d, seed);
    free(d->in[1].f);
    memset(&d->in[1], 0, sizeof d->in[1]);
}

static void ref_reshape(const oc_case *c, oc_data *d)
{
    set_out(d, (int)c->s[1][0], &c->s[1][1]);
    ref_unary(REF_UNARY_SCALE, d->in[0].f, d->ref, onumel(d), c->f[0], 0);
}

static glc_tensor graph_reshape(glc_graph *g, const oc_case *c, const glc_tensor *in)
{
    return glc_scale(g, glc_reshape(g, in[0], (int)c->s[1][0], &c->s[1][1]), c->f[0], 0);
}

const oc_opinfo oc_ops[OC_COUNT] = {
    [OC_ADD] = {"add", 0, gen_bin, ref_bin, eager_bin, graph_bin},
    [OC_SUB] = {"sub", 0, gen_bin, ref_bin, eager_bin, graph_bin},
    [OC_MUL] = {"mul", 0, gen_bin, ref_bin, eager_bin, graph_bin},
    [OC_DIV] = {"div", 0, gen_bin, ref_bin, eager_bin, graph_bin},
    [OC_SCALE] = {"scale", 0, gen_default, ref_scale, eager_scale, graph_scale},
    [OC_UNARY] = {"unary", 0, gen_default, ref_un, eager_un, graph_un},
    [OC_SOFTMAX] = {"softmax", 0, gen_default, ref_softmax_c, eager_softmax, graph_softmax},
    [OC_RMS_NORM] = {"rms_norm", 0, gen_default, ref_norm, eager_norm, graph_norm},
    [OC_LAYER_NORM] = {"layer_norm", 0, gen_default, ref_norm, eager_norm, graph_norm},
    [OC_SUM] = {"sum", 0, gen_default, ref_reduce, eager_reduce, graph_reduce},
    [OC_MEAN] = {"mean", 0, gen_default, ref_reduce, eager_reduce, graph_reduce},
    [OC_ARGMAX] = {"argmax", 0, gen_default, ref_reduce, eager_reduce, graph_reduce},
    [OC_ROPE] = {"rope", 0, gen_rope, ref_rope_c, eager_rope, graph_rope},
    [OC_MATMUL] = {"matmul", 0, gen_default, ref_mm, eager_mm, graph_mm},
    [OC_MATMUL_AFFINE] = {"matmul_affine", 0, gen_affine, ref_affine, eager_affine, graph_affine},
    [OC_MATMUL_Q] = {"matmul_q", 0, gen_q, ref_q, eager_q, graph_q},
    [OC_MATMUL_EXPERT] = {"matmul_expert", 0, gen_expert, ref_expert, eager_expert, graph_expert},
    [OC_SDPA] = {"sdpa", 0, gen_default, ref_sdpa_c, eager_sdpa, graph_sdpa},
    [OC_SDPA_DECODE] = {"sdpa_decode", 0, gen_default, ref_sdpa_c, eager_sdpa, graph_sdpa},
    [OC_GET_ROWS] = {"get_rows", 0, gen_get_rows, ref_get_rows_c, eager_get_rows, graph_get_rows},
    [OC_SET_ROWS] = {"set_rows", 1, gen_set_rows, ref_set_rows_c, eager_set_rows, graph_set_rows},
    [OC_COPY] = {"copy", 0, gen_default, ref_copy, eager_copy, graph_copy},
    [OC_CONCAT] = {"concat", 0, gen_default, ref_concat_c, eager_concat, graph_concat},
    [OC_SLICE] = {"slice", 0, gen_default, ref_slice_c, eager_slice, graph_slice},
    [OC_RESHAPE] = {"reshape", 0, gen_reshape, ref_reshape, NULL, graph_reshape},
};
/* ---- running a case ---- */

static void describe(const oc_case *c, char *buf, size_t size, const char *label,
                     const char *mode)
{
    int i, n;
    n = snprintf(buf, size, "%s (%s, %s):", label, oc_ops[c->op].builder, mode);
    for (i = 0; i < MAXIN && n < (int)size; i++) {
        int r;
        if (c->s[i][0] <= 0)
            continue;
        n += snprintf(buf + n, size - (size_t)n, " %s[", glc_dtype_name(c->dt[i] ? c->dt[i] : F32));
        for (r = 0; r < c->s[i][0] && n < (int)size; r++)
            n += snprintf(buf + n, size - (size_t)n, r ? ", %lld" : "%lld",
                          (long long)c->s[i][1 + r]);
        if (n < (int)size)
            n += snprintf(buf + n, size - (size_t)n, "]");
    }
}

static void prepare(const oc_case *c, oc_data *d, uint64_t seed)
{
    memset(d, 0, sizeof *d);
    oc_ops[c->op].gen(c, d, &seed);
    if (c->flags & C_NANINF) {
        oc_operand *o = &d->in[0];
        size_t n = numel(o->rank, o->shape);
        if (n > 1)
            o->f[1] = NAN;
        if (n > 3)
            o->f[3] = INFINITY;
        if (n > 5)
            o->f[5] = -INFINITY;
    }
    oc_ops[c->op].ref(c, d);
}

static void release(oc_data *d)
{
    int i;
    for (i = 0; i < MAXIN; i++) {
        free(d->in[i].f);
        free(d->in[i].raw);
    }
    free(d->aux);
    free(d->ref);
}

/* got against ref rounded to dtype: non-finite values must match (NaN
 * where NaN, the same infinity), the rest within the NMSE limit. */
static void compare(const char *what, const float *got, const oc_data *d, glc_dtype dt,
                    double limit)
{
    size_t n = onumel(d), i, m = 0;
    float *ref = malloc(n * 4), *g = malloc(n * 4), *r = malloc(n * 4);
    memcpy(ref, d->ref, n * 4);
    ot_round(dt, ref, n);
    for (i = 0; i < n; i++) {
        if (isfinite(ref[i])) {
            g[m] = got[i];
            r[m++] = ref[i];
        } else if (!(isnan(ref[i]) ? isnan(got[i]) : got[i] == ref[i])) {
            fail_msg("%s: [%zu] got %g, expected %g", what, i, (double)got[i], (double)ref[i]);
        }
    }
    if (limit == OC_EXACT) { /* bit for bit: -0 is not 0 */
        for (i = 0; i < m; i++)
            if (memcmp(&g[i], &r[i], sizeof g[i]))
                fail_msg("%s: [%zu of the finite] got %.9g, expected %.9g (exact)", what, i,
                         (double)g[i], (double)r[i]);
    } else {
        ot_check(what, g, r, m, limit);
    }
    free(ref);
    free(g);
    free(r);
}

void oc_run_eager(glc_device *dev, const oc_case *c, uint64_t seed, const char *label)
{
    oc_data d;
    ot_tensor t[MAXIN], out;
    glc_view v[MAXIN];
    glc_session *s;
    glc_status st;
    float *got;
    char what[256];
    /* the operand written in place, or -1 */
    int i, io = oc_ops[c->op].inplace ? 2 : (c->flags & C_INPLACE) ? 0 : -1;
    if (!oc_ops[c->op].eager)
        return;
    describe(c, what, sizeof what, label, "eager");
    prepare(c, &d, seed);
    memset(t, 0, sizeof t);
    for (i = 0; i < MAXIN; i++) {
        oc_operand *o = &d.in[i];
        if (!o->rank) {
            v[i] = ot_none();
            continue;
        }
        t[i] = o->raw ? ot_tensor_bytes(dev, o->dt, o->rank, o->shape, o->raw)
                      : ot_tensor_new(dev, o->dt, o->rank, o->shape, o->f);
        v[i] = t[i].view;
    }
    memset(&out, 0, sizeof out);
    if (io < 0)
        out = ot_tensor_new(dev, c->odt, d.orank, d.oshape, NULL);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    st = oc_ops[c->op].eager(s, dev, c, v, io >= 0 ? v[io] : out.view);
    if (st != GLC_OK)
        fail_msg("%s: %s", what, glc_device_errmsg(dev));
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    glc_buffer_destroy(scratch);
    scratch = NULL;
    got = malloc(onumel(&d) * 4 + 4);
    if (!ot_read(io >= 0 ? &t[io] : &out, got))
        fail_msg("%s: a sentinel byte changed", what);
    compare(what, got, &d, io >= 0 ? d.in[io].dt : c->odt, c->nmse);
    free(got);
    for (i = 0; i < MAXIN; i++)
        if (t[i].buf)
            ot_free(&t[i]);
    if (out.buf)
        ot_free(&out);
    release(&d);
}

static void to_bytes(glc_dtype dt, const float *v, size_t n, void *out)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (dt == F16 || dt == BF16) {
            uint16_t h = dt == F16 ? ot_f32_to_f16(v[i]) : ot_f32_to_bf16(v[i]);
            memcpy((char *)out + 2 * i, &h, 2);
        } else if (dt == I32) {
            int32_t x = (int32_t)v[i];
            memcpy((char *)out + 4 * i, &x, 4);
        } else {
            memcpy((char *)out + 4 * i, &v[i], 4);
        }
    }
}

static void from_bytes(glc_dtype dt, const void *in, size_t n, float *v)
{
    size_t i;
    for (i = 0; i < n; i++) {
        uint16_t h;
        if (dt == F16 || dt == BF16) {
            memcpy(&h, (const char *)in + 2 * i, 2);
            v[i] = dt == F16 ? ot_f16_to_f32(h) : ot_bf16_to_f32(h);
        } else {
            memcpy(&v[i], (const char *)in + 4 * i, 4);
        }
    }
}

#define GUARD 16 /* sentinel words after a plan's output */

int oc_ran[OC_COUNT];

/* Case c's graph (operand i named in<i>: an input, a param, or in place a
 * handle), its output "out", compiled on dev into *p; the output's dtype
 * in *odt. GLC_OK, or the compile's status. */
static glc_status compile_case(glc_device *dev, const oc_case *c, const oc_data *d,
                               const char *what, glc_plan **p, glc_dtype *odt)
{
    glc_graph *g;
    glc_tensor t[MAXIN], r;
    char name[8];
    int i, inplace = oc_ops[c->op].inplace, rank;
    int64_t shape[GLC_MAX_DIMS];
    glc_status st;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    for (i = 0; i < MAXIN; i++) {
        const oc_operand *o = &d->in[i];
        snprintf(name, sizeof name, "in%d", i);
        if (!o->rank)
            t[i] = glc_none();
        else if (inplace && i == 2)
            t[i] = glc_graph_handle(g, name, o->dt, o->rank, o->shape);
        else if (o->raw || o->param)
            t[i] = glc_graph_param(g, name, o->dt, o->rank, o->shape);
        else
            t[i] = glc_graph_input(g, name, o->dt, o->rank, o->shape);
    }
    r = oc_ops[c->op].graph(g, c, t);
    /* a plan needs an output: in place, a copy of the state after the write */
    glc_graph_output(g, "out", inplace ? glc_copy(g, r, NULL, 0) : r);
    if (glc_graph_status(g) != GLC_OK)
        fail_msg("%s: builder: %s", what, glc_graph_errmsg(g));
    rank = glc_tensor_shape(g, r, shape);
    *odt = glc_tensor_dtype(g, r);
    assert_int_equal(rank, d->orank);
    assert_memory_equal(shape, d->oshape, (size_t)rank * sizeof *shape);
    st = glc_graph_compile(g, NULL, p);
    glc_graph_destroy(g);
    return st;
}

glc_status oc_compile_graph(glc_device *dev, const oc_case *c, uint64_t seed)
{
    oc_data d;
    glc_plan *p = NULL;
    glc_dtype odt;
    char what[256];
    glc_status st;
    describe(c, what, sizeof what, "compile only", "plan");
    prepare(c, &d, seed);
    st = compile_case(dev, c, &d, what, &p, &odt);
    glc_plan_destroy(p);
    release(&d);
    return st;
}

void oc_run_graph(glc_device *dev, const oc_case *c, uint64_t seed, const char *label)
{
    oc_data d;
    glc_plan *p;
    glc_plan_input pin[MAXIN];
    void *ibuf[MAXIN];
    char names[MAXIN][8], what[256];
    int i, nin = 0, inplace = oc_ops[c->op].inplace;
    glc_dtype odt;
    size_t n, es;
    uint32_t *got;
    float *gotf;
    describe(c, what, sizeof what, label, "plan");
    prepare(c, &d, seed);
    if (compile_case(dev, c, &d, what, &p, &odt) != GLC_OK)
        fail_msg("%s: compile: %s", what, glc_device_errmsg(dev));
    for (i = 0; i < MAXIN; i++) {
        snprintf(names[i], sizeof names[i], "in%d", i);
        ibuf[i] = NULL;
    }
    for (i = 0; i < MAXIN; i++) {
        oc_operand *o = &d.in[i];
        size_t k = numel(o->rank, o->shape);
        if (!o->rank)
            continue;
        if (inplace && i == 2) {
            es = glc_dtype_size(o->dt);
            ibuf[i] = malloc(k * es);
            to_bytes(o->dt, o->f, k, ibuf[i]);
            assert_int_equal(glc_plan_bind_handle(p, names[i], ibuf[i], k * es), GLC_OK);
        } else if (o->raw) {
            glc_view vv = glc_view_make(NULL, 0, o->dt, o->rank, o->shape);
            assert_int_equal(
                glc_plan_set_param_typed(p, names[i], o->raw, glc_view_bytes(&vv), o->dt), GLC_OK);
        } else if (o->param) {
            assert_int_equal(glc_plan_set_param(p, names[i], o->f, k), GLC_OK);
        } else {
            ibuf[i] = malloc(k * 4);
            to_bytes(o->dt == I32 ? I32 : F32, o->f, k, ibuf[i]);
            pin[nin].name = names[i];
            pin[nin].data = ibuf[i];
            pin[nin].count = k;
            nin++;
        }
    }
    n = onumel(&d);
    got = malloc((n + GUARD) * 4);
    gotf = malloc(n * 4 + 4);
    memset(got, OT_SENTINEL, (n + GUARD) * 4);
    {
        glc_plan_output po;
        po.name = "out";
        po.data = got;
        po.count = n;
        if (glc_plan_run(p, pin, nin, &po, 1) != GLC_OK)
            fail_msg("%s: run: %s", what, glc_device_errmsg(dev));
        for (i = 0; i < GUARD; i++)
            if (got[n + (size_t)i] != 0xCDCDCDCDu)
                fail_msg("%s: word %zu past the output changed", what, n + (size_t)i);
        if (odt == I32)
            for (es = 0; es < n; es++)
                gotf[es] = (float)(int32_t)got[es];
        else
            from_bytes(F32, got, n, gotf);
    }
    if (inplace) { /* and the handle itself */
        compare(what, gotf, &d, odt, c->nmse);
        es = glc_dtype_size(odt);
        assert_int_equal(glc_plan_read_handle(p, "in2", got, n * es), GLC_OK);
        from_bytes(odt, got, n, gotf);
    }
    compare(what, gotf, &d, odt, c->nmse);
    oc_ran[c->op]++;
    glc_plan_destroy(p);
    for (i = 0; i < MAXIN; i++)
        free(ibuf[i]);
    free(got);
    free(gotf);
    release(&d);
}
