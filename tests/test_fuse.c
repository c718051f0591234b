/*
 * The compiler's passes. Fusion: each pattern fires (glc_plan_info.fused, fewer
 * dispatches) and the fused plan's outputs equal the unfused plan's
 * (GLC_COMPILE_NO_FUSE) on the same inputs; patterns whose hidden value is
 * used elsewhere (another consumer, a graph output) are left alone.
 * Reorder: independent chains share the stretch between barriers.
 */
#include "testutil.h"

#include "optest.h"
#include "ref_elementwise.h"
#include "ref_quant.h"

#include "compile.h"
#include "op_run.h"

#include <math.h>

#define T 7
#define D 36
#define F 52

typedef glc_tensor (*build_fn)(glc_graph *g, glc_tensor x, glc_tensor extra_out[1]);

static glc_tensor param(glc_graph *g, const char *name, glc_dtype dt, int rank, int64_t d0,
                        int64_t d1)
{
    int64_t s[2];
    s[0] = d0;
    s[1] = d1;
    return glc_graph_param(g, name, dt, rank, s);
}

/* y = rms_norm(x) * w (both operand orders) */
static glc_tensor g_norm_mul(glc_graph *g, glc_tensor x, glc_tensor extra[1])
{
    glc_tensor w = param(g, "w", GLC_DTYPE_F16, 1, D, 0);
    glc_tensor n1 = glc_rms_norm(g, x, glc_none(), 1e-5f);
    glc_tensor n2 = glc_rms_norm(g, glc_scale(g, x, 0.5f, 1.0f), glc_none(), 1e-6f);
    (void)extra;
    return glc_add(g, glc_mul(g, n1, w), glc_mul(g, w, n2));
}

/* y = silu(x W1^T) * (x W3^T): SwiGLU */
static glc_tensor g_swiglu(glc_graph *g, glc_tensor x, glc_tensor extra[1])
{
    glc_matmul_desc nt = {1};
    glc_tensor w1 = param(g, "w1", GLC_DTYPE_F16, 2, F, D);
    glc_tensor w3 = param(g, "w3", GLC_DTYPE_F32, 2, F, D);
    glc_tensor a = glc_matmul(g, x, w1, glc_none(), &nt);
    glc_tensor b = glc_matmul(g, x, w3, glc_none(), &nt);
    (void)extra;
    return glc_mul(g, b, glc_unary(g, GLC_UNARY_SILU, a, 0));
}

/* y = gelu(x W^T + bias), z = relu(bias + x V) (a matmul without transpose) */
static glc_tensor g_mm_bias_act(glc_graph *g, glc_tensor x, glc_tensor extra[1])
{
    glc_matmul_desc nt = {1}, nn = {0};
    glc_tensor w = param(g, "w", GLC_DTYPE_BF16, 2, F, D);
    glc_tensor v = param(g, "v", GLC_DTYPE_F32, 2, D, F);
    glc_tensor bias = param(g, "bias", GLC_DTYPE_F32, 1, F, 0);
    glc_tensor y = glc_unary(g, GLC_UNARY_GELU, glc_add(g, glc_matmul(g, x, w, glc_none(), &nt), bias), 0);
    extra[0] = glc_unary(g, GLC_UNARY_RELU, glc_add(g, bias, glc_matmul(g, x, v, glc_none(), &nn)), 0);
    return y;
}

/* q8_0 weights: silu(x Wq^T + bias) */
static glc_tensor g_mmq_bias_act(glc_graph *g, glc_tensor x, glc_tensor extra[1])
{
    int64_t ks = 64;
    glc_tensor wq = param(g, "wq", GLC_DTYPE_Q8_0, 2, F, ks);
    glc_tensor bias = param(g, "bias", GLC_DTYPE_F32, 1, F, 0);
    glc_tensor x64 = glc_graph_input(g, "x64", GLC_DTYPE_F32, 2, (int64_t[2]){T, 64});
    (void)x;
    (void)extra;
    return glc_unary(g, GLC_UNARY_SILU, glc_add(g, glc_matmul_q(g, x64, wq, glc_none()), bias), 0);
}

/* not fusable: the norm is an output too; the activation and the matmul
 * feed two ops each */
static glc_tensor g_blocked(glc_graph *g, glc_tensor x, glc_tensor extra[1])
{
    glc_matmul_desc nt = {1};
    glc_tensor w = param(g, "w", GLC_DTYPE_F32, 1, D, 0);
    glc_tensor m = param(g, "m", GLC_DTYPE_F32, 2, D, D);
    glc_tensor n = glc_rms_norm(g, x, glc_none(), 1e-5f);
    glc_tensor mm = glc_matmul(g, x, m, glc_none(), &nt);
    glc_tensor sm = glc_unary(g, GLC_UNARY_SILU, mm, 0);
    extra[0] = n;
    return glc_add(g, glc_mul(g, n, w), glc_mul(g, sm, glc_add(g, sm, mm)));
}

typedef struct pattern {
    const char *name;
    build_fn build;
    int fused;       /* patterns fused */
    int saved;       /* dispatches saved */
} pattern;

static glc_plan *compile(glc_device *dev, build_fn fn, uint32_t flags, int *has_extra)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_tensor extra[1] = {{-1}};
    int64_t xs[2] = {T, D};
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    glc_graph_output(g, "y", fn(g, glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs), extra));
    *has_extra = extra[0].id >= 0;
    if (*has_extra)
        glc_graph_output(g, "z", extra[0]);
    p = tu_compile(dev, g, flags);
    return p;
}

/* Random params for every param the plan has (f32 values, or raw bytes
 * for q8_0), the same for both plans (seeded). */
static void set_params(glc_plan *p, const char *const *names, const int64_t *counts, int n,
                       uint64_t seed)
{
    int i;
    for (i = 0; i < n; i++) {
        float *v = malloc((size_t)counts[i] * 4);
        ot_fill(&seed, v, (size_t)counts[i], -1.0f, 1.0f);
        if (strcmp(names[i], "wq") == 0) {
            /* q8_0: 34 bytes a block of 32; scale 1/64, values -127..127 */
            size_t nb = (size_t)counts[i] / 32, b, j;
            uint8_t *q = malloc(nb * 34);
            for (b = 0; b < nb; b++) {
                uint16_t h = ot_f32_to_f16(1.0f / 64);
                memcpy(q + b * 34, &h, 2);
                for (j = 0; j < 32; j++)
                    q[b * 34 + 2 + j] = (uint8_t)(int8_t)(v[b * 32 + j] * 127);
            }
            glc_plan_set_param_typed(p, "wq", q, nb * 34, GLC_DTYPE_Q8_0); /* absent: ignored */
            free(q);
        } else if (glc_plan_set_param(p, names[i], v, (size_t)counts[i]) != GLC_OK) {
            /* a param this pattern does not have: ignored */
        }
        free(v);
    }
}

static void test_fusion_patterns(void **state)
{
    static const pattern pats[] = {
        {"norm_mul", g_norm_mul, 2, 2},
        {"swiglu", g_swiglu, 1, 1},
        {"mm_bias_act", g_mm_bias_act, 4, 4},
        {"mmq_bias_act", g_mmq_bias_act, 2, 2},
        {"blocked", g_blocked, 0, 0},
    };
    static const char *const names[] = {"w", "w1", "w3", "v", "bias", "m", "wq"};
    static const int64_t counts[] = {0, F * D, F * D, D * F, F, D * D, F * 64};
    glc_device *dev = tu_device(NULL);
    size_t k;
    (void)state;
    for (k = 0; k < sizeof pats / sizeof pats[0]; k++) {
        const pattern *pt = &pats[k];
        int ex, ex2, i;
        glc_plan *fused = compile(dev, pt->build, 0, &ex);
        glc_plan *plain = compile(dev, pt->build, GLC_COMPILE_NO_FUSE, &ex2);
        glc_plan_info fi, pi;
        int64_t cnt[7];
        uint64_t seed = 1000 + k;
        float x[T * D], x64[T * 64], y1[T * F], y2[T * F], z1[T * F], z2[T * F];
        size_t ny = strcmp(pt->name, "norm_mul") == 0 || strcmp(pt->name, "blocked") == 0
                        ? T * D : T * F;
        size_t nz = strcmp(pt->name, "blocked") == 0 ? T * D : T * F;
        glc_plan_input in[2] = {{"x", x, T * D}, {"x64", x64, T * 64}};
        glc_plan_output out1[2] = {{"y", y1, ny}, {"z", z1, nz}};
        glc_plan_output out2[2] = {{"y", y2, ny}, {"z", z2, nz}};
        int nin = strcmp(pt->name, "mmq_bias_act") == 0 ? 2 : 1;
        memcpy(cnt, counts, sizeof cnt);
        cnt[0] = strcmp(pt->name, "blocked") == 0 || strcmp(pt->name, "norm_mul") == 0 ? D : F * D;
        ot_fill(&seed, x, T * D, -2, 2);
        ot_fill(&seed, x64, T * 64, -2, 2);
        assert_int_equal(glc_plan_stats(fused, &fi), GLC_OK);
        assert_int_equal(glc_plan_stats(plain, &pi), GLC_OK);
        if ((int)fi.fused != pt->fused || (int)(pi.dispatches - fi.dispatches) != pt->saved)
            fail_msg("%s: fused %u patterns, %u -> %u dispatches (expected %d fused, %d saved)",
                     pt->name, fi.fused, pi.dispatches, fi.dispatches, pt->fused, pt->saved);
        assert_int_equal(pi.fused, 0);
        for (i = 0; i < 2; i++) {
            glc_plan *p = i ? plain : fused;
            set_params(p, names, cnt, 7, 77 + k);
            assert_int_equal(glc_plan_run(p, in, nin, i ? out2 : out1, ex ? 2 : 1), GLC_OK);
        }
        ot_check(pt->name, y1, y2, ny, 1e-12);
        if (ex)
            ot_check(pt->name, z1, z2, nz, 1e-12);
        glc_plan_destroy(fused);
        glc_plan_destroy(plain);
    }
    glc_device_destroy(dev);
}

/* h = x + a (a = x * x: no matmul, which would take the add as its
 * residual, mm_res), n = rms_norm(h, w): one add_rms_norm writing h and
 * n; h is read again (the residual of the last matmul: mm_res) and is an
 * output too; T is a variable, so the plan runs at smaller T with n at its
 * fixed place in the pack. */
static glc_plan *residual_plan(glc_device *dev, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_matmul_desc nt = {1};
    int64_t xs[2], ws[1] = {D}, ms[2] = {D, D};
    glc_tensor x, w, m, a, h, n, y;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    xs[0] = glc_graph_var(g, "T", 1, T);
    xs[1] = D;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    w = glc_graph_param(g, "w", GLC_DTYPE_F16, 1, ws);
    m = glc_graph_param(g, "m", GLC_DTYPE_F32, 2, ms);
    a = glc_mul(g, x, x);
    h = glc_add(g, x, a);
    n = glc_rms_norm(g, h, w, 1e-5f);
    y = glc_add(g, h, glc_matmul(g, n, m, glc_none(), &nt));
    glc_graph_output(g, "y", y);
    glc_graph_output(g, "h", h);
    p = tu_compile(dev, g, flags);
    return p;
}

static void test_fusion_residual_norm(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_plan *pl[2];
    glc_plan_info fi, pi;
    uint64_t seed = 5;
    float x[T * D], w[D], m[D * D], y[2][T * D], h[2][T * D];
    int i, t;
    (void)state;
    pl[0] = residual_plan(dev, 0);
    pl[1] = residual_plan(dev, GLC_COMPILE_NO_FUSE);
    assert_int_equal(glc_plan_stats(pl[0], &fi), GLC_OK);
    assert_int_equal(glc_plan_stats(pl[1], &pi), GLC_OK);
    /* add_norm, and mm_res where a shader binds 5 storage blocks */
    assert_int_equal(fi.fused, 1 + (tu_ssbo_blocks(dev) >= 5));
    assert_int_equal(pi.dispatches - fi.dispatches, fi.fused);
    ot_fill(&seed, w, D, 0.5f, 1.5f);
    ot_fill(&seed, m, D * D, -0.2f, 0.2f);
    for (i = 0; i < 2; i++) {
        assert_int_equal(glc_plan_set_param(pl[i], "w", w, D), GLC_OK);
        assert_int_equal(glc_plan_set_param(pl[i], "m", m, D * D), GLC_OK);
    }
    for (t = T; t >= 3; t -= 4) {
        glc_plan_var v = {"T", t};
        ot_fill(&seed, x, T * D, -2, 2);
        for (i = 0; i < 2; i++) {
            glc_plan_input in = {"x", x, (size_t)(t * D)};
            glc_plan_output out[2] = {{"y", y[i], (size_t)(t * D)}, {"h", h[i], (size_t)(t * D)}};
            assert_int_equal(glc_plan_run_with_vars(pl[i], &v, 1, &in, 1, out, 2), GLC_OK);
        }
        ot_check("residual y", y[0], y[1], (size_t)(t * D), 1e-12);
        ot_check("residual h", h[0], h[1], (size_t)(t * D), 1e-12);
    }
    glc_plan_destroy(pl[0]);
    glc_plan_destroy(pl[1]);
    glc_device_destroy(dev);
}

/* q, k, v = x Wq^T (+ bq), x Wk^T (+ bk), x Wv^T (+ bv): one dispatch over
 * the packed weights, outputs packed; then rope-free consumers read them.
 * tmax 1 (decode: consecutive segments) and > 1 (prefill: three matrices),
 * f16 and GGML weights (quant 1 q8_0, 2 q4_K, 3 q6_K), with and without
 * biases; run at T below the maximum too. */
static glc_dtype qkv_dtype(int quant)
{
    return quant == 1 ? GLC_DTYPE_Q8_0 : quant == 2 ? GLC_DTYPE_Q4_K : GLC_DTYPE_Q6_K;
}

static glc_plan *qkv_plan(glc_device *dev, int64_t tmax, int quant, int bias, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_matmul_desc nt = {1};
    static const char *const wn[3] = {"wq", "wk", "wv"}, *const bn[3] = {"bq", "bk", "bv"};
    static const int64_t nn[3] = {24, 8, 8};
    int64_t xs[2], k = quant ? (quant == 1 ? 64 : 256) : D;
    glc_tensor x, out[3];
    int i;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    xs[0] = glc_graph_var(g, "T", 1, tmax);
    xs[1] = k;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    for (i = 0; i < 3; i++) {
        glc_tensor w = param(g, wn[i], quant ? qkv_dtype(quant) : GLC_DTYPE_F16, 2, nn[i], k);
        glc_tensor b = bias ? param(g, bn[i], GLC_DTYPE_F32, 1, nn[i], 0) : glc_none();
        out[i] = quant ? glc_matmul_q(g, x, w, b) : glc_matmul(g, x, w, b, &nt);
    }
    glc_graph_output(g, "q", out[0]);
    glc_graph_output(g, "k", glc_scale(g, out[1], 2.0f, 0.0f));
    glc_graph_output(g, "v", glc_scale(g, out[2], 0.5f, 1.0f));
    p = tu_compile(dev, g, flags);
    return p;
}

static void test_fusion_qkv(void **state)
{
    static const char *const wn[3] = {"wq", "wk", "wv"}, *const bn[3] = {"bq", "bk", "bv"};
    static const int64_t nn[3] = {24, 8, 8};
    glc_device *dev = tu_device(NULL);
    int c;
    (void)state;
    for (c = 0; c < 8; c++) {
        int64_t tmax = c % 2 ? T : 1, k;
        int quant = c < 4 ? 0 : c < 6 ? 1 : c - 4, bias = c / 2 == 1 || c == 5 || c == 7;
        int i, j, t, packs;
        glc_plan *pl[2];
        glc_plan_info fi, pi;
        uint64_t seed = 300 + (uint64_t)c;
        k = quant ? (quant == 1 ? 64 : 256) : D;
        pl[0] = qkv_plan(dev, tmax, quant, bias, 0);
        pl[1] = qkv_plan(dev, tmax, quant, bias, GLC_COMPILE_NO_FUSE);
        assert_int_equal(glc_plan_stats(pl[0], &fi), GLC_OK);
        assert_int_equal(glc_plan_stats(pl[1], &pi), GLC_OK);
        /* packed where k and v (after tmax x 24 and x 32 floats) start aligned */
        packs = tu_aligned(dev, (size_t)tmax * 24 * 4) && tu_aligned(dev, (size_t)tmax * 32 * 4);
        if ((int)fi.fused != packs || (int)(pi.dispatches - fi.dispatches) != 2 * packs)
            fail_msg("qkv case %d: fused %u, %u -> %u dispatches", c, fi.fused, pi.dispatches,
                     fi.dispatches);
        for (i = 0; i < 3; i++) {
            float w[24 * 256], b[24];
            ot_fill(&seed, w, (size_t)(nn[i] * k), -1, 1);
            ot_fill(&seed, b, (size_t)nn[i], -1, 1);
            for (j = 0; j < 2; j++) {
                if (quant > 1) { /* the test references' quantizer */
                    glc_dtype qt = qkv_dtype(quant);
                    uint8_t blk[24 * 210];
                    size_t bytes = (size_t)nn[i] * glc_dtype_row_bytes(qt, k);
                    ref_quantize(qt, w, (size_t)(nn[i] * k), blk);
                    assert_int_equal(glc_plan_set_param_typed(pl[j], wn[i], blk, bytes, qt),
                                     GLC_OK);
                } else if (quant) {
                    size_t nb = (size_t)(nn[i] * k) / 32, q, e;
                    uint8_t blk[24 * 2 * 34];
                    for (q = 0; q < nb; q++) {
                        uint16_t h = ot_f32_to_f16(1.0f / 100);
                        memcpy(blk + q * 34, &h, 2);
                        for (e = 0; e < 32; e++)
                            blk[q * 34 + 2 + e] = (uint8_t)(int8_t)(w[q * 32 + e] * 100);
                    }
                    assert_int_equal(glc_plan_set_param_typed(pl[j], wn[i], blk, nb * 34,
                                                              GLC_DTYPE_Q8_0), GLC_OK);
                } else {
                    assert_int_equal(glc_plan_set_param(pl[j], wn[i], w, (size_t)(nn[i] * k)),
                                     GLC_OK);
                }
                if (bias)
                    assert_int_equal(glc_plan_set_param(pl[j], bn[i], b, (size_t)nn[i]), GLC_OK);
            }
        }
        for (t = (int)tmax; t >= 1; t -= 3) {
            float x[T * 256], o[2][3][T * 24];
            glc_plan_var v = {"T", t};
            ot_fill(&seed, x, (size_t)(t * k), -1, 1);
            for (j = 0; j < 2; j++) {
                glc_plan_input in = {"x", x, (size_t)(t * k)};
                glc_plan_output out[3] = {{"q", o[j][0], (size_t)(t * 24)},
                                          {"k", o[j][1], (size_t)(t * 8)},
                                          {"v", o[j][2], (size_t)(t * 8)}};
                assert_int_equal(glc_plan_run_with_vars(pl[j], &v, 1, &in, 1, out, 3), GLC_OK);
            }
            for (i = 0; i < 3; i++)
                ot_check(wn[i], o[0][i], o[1][i], (size_t)(t * nn[i]), 1e-12);
        }
        glc_plan_destroy(pl[0]);
        glc_plan_destroy(pl[1]);
    }
    glc_device_destroy(dev);
}

/* Sharing params between plans that both fused: set once, read by both;
 * a source plan without the pack is refused with a clear message. */
static void test_fusion_qkv_share(void **state)
{
    static const char *const wn[3] = {"wq", "wk", "wv"};
    static const int64_t nn[3] = {24, 8, 8};
    tu_log log;
    glc_device *dev = tu_device(&log);
    glc_plan *src, *dst, *plain;
    uint64_t seed = 9;
    float x[D], q[2][24];
    glc_plan_input in = {"x", x, D};
    glc_plan_output out[1] = {{"q", q[0], 24}};
    glc_plan_var v = {"T", 1};
    int i;
    (void)state;
    if (!tu_aligned(dev, 24 * 4) || !tu_aligned(dev, 32 * 4) || !tu_aligned(dev, T * 24 * 4) ||
        !tu_aligned(dev, T * 32 * 4)) { /* nothing packs on this device: nothing to share */
        glc_device_destroy(dev);
        skip();
    }
    src = qkv_plan(dev, T, 0, 0, 0);
    dst = qkv_plan(dev, 1, 0, 0, 0);
    plain = qkv_plan(dev, T, 0, 0, GLC_COMPILE_NO_FUSE);
    for (i = 0; i < 3; i++) {
        float w[24 * D];
        ot_fill(&seed, w, (size_t)(nn[i] * D), -1, 1);
        assert_int_equal(glc_plan_set_param(src, wn[i], w, (size_t)(nn[i] * D)), GLC_OK);
        assert_int_equal(glc_plan_set_param(plain, wn[i], w, (size_t)(nn[i] * D)), GLC_OK);
    }
    assert_int_equal(glc_plan_share(dst, plain, GLC_SHARE_PARAMS), GLC_ERR_UNSUPPORTED);
    tu_assert_contains(glc_device_errmsg(dev), "\"wq+wk+wv\" is packed by fusion here but not");
    assert_int_equal(glc_plan_share(dst, src, GLC_SHARE_PARAMS), GLC_OK);
    ot_fill(&seed, x, D, -1, 1);
    assert_int_equal(glc_plan_run(dst, &in, 1, out, 1), GLC_OK);
    out[0].data = q[1];
    assert_int_equal(glc_plan_run_with_vars(plain, &v, 1, &in, 1, out, 1), GLC_OK);
    ot_check("shared q", q[0], q[1], 24, 1e-12);
    glc_plan_destroy(dst);
    glc_plan_destroy(src);
    glc_plan_destroy(plain);
    glc_device_destroy(dev);
}

/* set_rows(cache, rope(x, pos), pos): one rope_rows dispatch writing the
 * rotated rows into the cache; a position past the cache is skipped, as
 * set_rows skips it. f16 cache, f32 rows. */
static void test_fusion_rope_rows(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_plan *pl[2];
    glc_plan_info fi, pi;
    int64_t cs[3] = {10, 2, 8}, xs[3] = {3, 2, 8}, ps[1] = {3};
    int32_t pos[3] = {1, 7, 12};
    float x[48];
    uint16_t zero[160], got[2][160];
    uint64_t seed = 8;
    int i;
    (void)state;
    memset(zero, 0, sizeof zero);
    ot_fill(&seed, x, 48, -1, 1);
    for (i = 0; i < 2; i++) {
        glc_graph *g;
        glc_compile_desc cd;
        glc_rope_desc rd;
        glc_tensor c, k, tp, tx;
        memset(&rd, 0, sizeof rd);
        rd.mode = GLC_ROPE_NEOX;
        assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
        c = glc_graph_handle(g, "cache", GLC_DTYPE_F16, 3, cs);
        tx = glc_graph_input(g, "x", GLC_DTYPE_F32, 3, xs);
        tp = glc_graph_input(g, "pos", GLC_DTYPE_I32, 1, ps);
        k = glc_rope(g, tx, tp, &rd, glc_none());
        glc_set_rows(g, c, k, tp);
        glc_graph_output(g, "y", glc_scale(g, tx, 1, 0)); /* a graph needs an output */
        cd.flags = i ? GLC_COMPILE_NO_FUSE : 0;
        assert_int_equal(glc_graph_compile(g, &cd, &pl[i]), GLC_OK);
        glc_graph_destroy(g);
        assert_int_equal(glc_plan_bind_handle(pl[i], "cache", zero, sizeof zero), GLC_OK);
        {
            const void *in[2] = {x, pos};
            glc_plan_slice out[1];
            assert_int_equal(glc_plan_run_slots(pl[i], in, out), GLC_OK);
        }
        assert_int_equal(glc_plan_read_handle(pl[i], "cache", got[i], sizeof got[i]), GLC_OK);
    }
    assert_int_equal(glc_plan_stats(pl[0], &fi), GLC_OK);
    assert_int_equal(glc_plan_stats(pl[1], &pi), GLC_OK);
    assert_int_equal(fi.fused, 1);
    assert_int_equal(pi.dispatches - fi.dispatches, 1);
    assert_memory_equal(got[0], got[1], sizeof got[0]);
    for (i = 0; i < 160; i++) /* rows 1 and 7 written, the rest untouched */
        if ((i / 16 != 1 && i / 16 != 7) != (got[0][i] == 0))
            fail_msg("cache element %d: %04x", i, got[0][i]);
    glc_plan_destroy(pl[0]);
    glc_plan_destroy(pl[1]);
    glc_device_destroy(dev);
}

/* y = (act(x W1^T) * (x W3^T)) W2^T at decode shapes (2 rows): w1 | w3 are
 * packed (qkv pass), the elementwise product is folded into the w2
 * matmul's input (glu pass): 5 dispatches become 2. Both orders of the
 * projections (the gate half first or second in the pack). */
static glc_plan *glu_plan(glc_device *dev, int up_first, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_matmul_desc nt = {1};
    int64_t xs[2] = {2, D};
    glc_tensor x, gate, up;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    if (up_first) {
        up = glc_matmul(g, x, param(g, "w3", GLC_DTYPE_F16, 2, 64, D), glc_none(), &nt);
        gate = glc_matmul(g, x, param(g, "w1", GLC_DTYPE_F16, 2, 64, D), glc_none(), &nt);
    } else {
        gate = glc_matmul(g, x, param(g, "w1", GLC_DTYPE_F16, 2, 64, D), glc_none(), &nt);
        up = glc_matmul(g, x, param(g, "w3", GLC_DTYPE_F16, 2, 64, D), glc_none(), &nt);
    }
    glc_graph_output(g, "y", glc_matmul(g, glc_mul(g, glc_unary(g, GLC_UNARY_SILU, gate, 0), up),
                                        param(g, "w2", GLC_DTYPE_F32, 2, D, 64), glc_none(), &nt));
    p = tu_compile(dev, g, flags);
    return p;
}

static void test_fusion_glu(void **state)
{
    glc_device *dev = tu_device(NULL);
    int order;
    (void)state;
    for (order = 0; order < 2; order++) {
        glc_plan *pl[2];
        glc_plan_info fi, pi;
        float x[2 * D], w1[64 * D], w3[64 * D], w2[D * 64], y[2][2 * D];
        uint64_t seed = 70 + (uint64_t)order;
        int i;
        pl[0] = glu_plan(dev, order, 0);
        pl[1] = glu_plan(dev, order, GLC_COMPILE_NO_FUSE);
        assert_int_equal(glc_plan_stats(pl[0], &fi), GLC_OK);
        assert_int_equal(glc_plan_stats(pl[1], &pi), GLC_OK);
        if (fi.fused != 3 || pi.dispatches != 5 || fi.dispatches != 2)
            fail_msg("glu order %d: fused %u, %u -> %u dispatches", order, fi.fused, pi.dispatches,
                     fi.dispatches);
        ot_fill(&seed, x, 2 * D, -1, 1);
        ot_fill(&seed, w1, 64 * D, -0.3f, 0.3f);
        ot_fill(&seed, w3, 64 * D, -0.3f, 0.3f);
        ot_fill(&seed, w2, D * 64, -0.3f, 0.3f);
        for (i = 0; i < 2; i++) {
            glc_plan_input in = {"x", x, 2 * D};
            glc_plan_output out = {"y", y[i], 2 * D};
            assert_int_equal(glc_plan_set_param(pl[i], "w1", w1, 64 * D), GLC_OK);
            assert_int_equal(glc_plan_set_param(pl[i], "w3", w3, 64 * D), GLC_OK);
            assert_int_equal(glc_plan_set_param(pl[i], "w2", w2, D * 64), GLC_OK);
            assert_int_equal(glc_plan_run(pl[i], &in, 1, &out, 1), GLC_OK);
        }
        ot_check("glu", y[0], y[1], 2 * D, 1e-10);
        glc_plan_destroy(pl[0]);
        glc_plan_destroy(pl[1]);
    }
    glc_device_destroy(dev);
}

/* A gate | up pack read by a live mul and by a mul nothing reads (a
 * dead branch): glu_out must leave the pack alone. It took the dead mul
 * (its reads not counted as live, the live mul's read seemed the only
 * one), turned the pack's producer into it, and the live mul read a pack
 * nothing wrote (found by test_fuse_random under GLC_TEST_SEED=117). */
static void test_fusion_glu_dead_branch(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_matmul_desc nt = {1};
    int64_t xs[2] = {2, D};
    float x[2 * D], w1[16 * D], w3[16 * D], y[2][2 * 16];
    uint64_t seed = 117;
    glc_plan *pl[2];
    int i, r, j, c;
    (void)state;
    ot_fill(&seed, x, 2 * D, -1, 1);
    ot_fill(&seed, w1, 16 * D, -0.3f, 0.3f);
    ot_fill(&seed, w3, 16 * D, -0.3f, 0.3f);
    for (i = 0; i < 2; i++) {
        glc_graph *g;
        glc_tensor xt, gate, up;
        glc_plan_input in = {"x", x, 2 * D};
        glc_plan_output out = {"y", y[i], 2 * 16};
        assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
        xt = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
        gate = glc_matmul(g, xt, param(g, "w1", GLC_DTYPE_F32, 2, 16, D), glc_none(), &nt);
        up = glc_matmul(g, xt, param(g, "w3", GLC_DTYPE_F32, 2, 16, D), glc_none(), &nt);
        glc_graph_output(g, "y", glc_mul(g, glc_unary(g, GLC_UNARY_TANH, gate, 0), up));
        (void)glc_mul(g, glc_unary(g, GLC_UNARY_SILU, gate, 0), up); /* read by nothing */
        pl[i] = tu_compile(dev, g, i ? GLC_COMPILE_NO_FUSE : 0);
        assert_int_equal(glc_plan_set_param(pl[i], "w1", w1, 16 * D), GLC_OK);
        assert_int_equal(glc_plan_set_param(pl[i], "w3", w3, 16 * D), GLC_OK);
        assert_int_equal(glc_plan_run(pl[i], &in, 1, &out, 1), GLC_OK);
        glc_plan_destroy(pl[i]);
    }
    for (r = 0; r < 2; r++)
        for (j = 0; j < 16; j++) {
            double gv = 0, uv = 0, want;
            for (c = 0; c < D; c++) {
                gv += (double)x[r * D + c] * w1[j * D + c];
                uv += (double)x[r * D + c] * w3[j * D + c];
            }
            want = tanh(gv) * uv;
            for (i = 0; i < 2; i++)
                if (fabs(y[i][r * 16 + j] - want) > 1e-5)
                    fail_msg("row %d, col %d, %s plan: %g, reference %g", r, j,
                             i ? "unfused" : "fused", y[i][r * 16 + j], want);
        }
    glc_device_destroy(dev);
}

static size_t n_allocs;
static void *count_alloc(void *u, size_t n) { (void)u; n_allocs++; return malloc(n); }
static void *count_realloc(void *u, void *p, size_t o, size_t n)
{
    (void)u;
    (void)o;
    n_allocs++;
    return realloc(p, n);
}
static void count_free(void *u, void *p, size_t n) { (void)u; (void)n; free(p); }

/* A variable that moves only params (a decode's KV length within one
 * chunk of keys): set_vars keeps the command list and its barriers and
 * just refreshes params, no allocation, no replanning of the list. */
static void test_vars_params_only(void **state)
{
    glc_device_desc dd = tu_desc(NULL);
    glc_device *dev;
    glc_graph *g;
    glc_plan *p;
    glc_sdpa_desc sd;
    int64_t qs[3] = {1, 4, 16}, cs[3] = {64, 2, 16};
    float q[64], kv[2048], out[2][64];
    uint64_t seed = 21;
    glc_plan_var v = {"L", 0};
    glc_plan_input in = {"q", q, 64};
    glc_plan_output o = {"o", out[0], 64};
    int i;
    (void)state;
    dd.allocator.alloc = count_alloc;
    dd.allocator.realloc = count_realloc;
    dd.allocator.free = count_free;
    dev = tu_device_desc(&dd);
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    memset(&sd, 0, sizeof sd);
    sd.q_offset = -1;
    sd.kv_len = glc_graph_var(g, "L", 1, 64);
    glc_graph_output(g, "o", glc_sdpa_decode(g, glc_graph_input(g, "q", GLC_DTYPE_F32, 3, qs),
                                             glc_graph_handle(g, "k", GLC_DTYPE_F32, 3, cs),
                                             glc_graph_handle(g, "v", GLC_DTYPE_F32, 3, cs), &sd));
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    ot_fill(&seed, q, 64, -1, 1);
    ot_fill(&seed, kv, 2048, -1, 1);
    assert_int_equal(glc_plan_bind_handle(p, "k", kv, sizeof kv), GLC_OK);
    assert_int_equal(glc_plan_bind_handle(p, "v", kv, sizeof kv), GLC_OK);
    v.value = 9;
    assert_int_equal(glc_plan_run_with_vars(p, &v, 1, &in, 1, &o, 1), GLC_OK);
    v.value = 5;
    o.data = out[1];
    assert_int_equal(glc_plan_run_with_vars(p, &v, 1, &in, 1, &o, 1), GLC_OK);
    v.value = 9;
    n_allocs = 0;
    assert_int_equal(glc_plan_run_with_vars(p, &v, 1, &in, 1, &o, 1), GLC_OK);
    assert_int_equal(n_allocs, 0);
    for (i = 0; i < 64; i++) /* the same value as the first run at 9 */
        assert_true(out[1][i] == out[0][i] || fabsf(out[1][i] - out[0][i]) < 1e-6f);
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

/* The compiler's reorder pass: two independent chains written one after
 * the other (a1, a2, b1, b2) run as a1, b1 | a2, b2: one barrier, not two;
 * the outputs are the same. */
static void test_plan_reorder(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_graph *g;
    glc_plan *p;
    glc_plan_info info;
    int64_t xs[1] = {100};
    float x[100], y[100], a[100], b[100];
    glc_tensor tx, ty;
    glc_plan_input in[2] = {{"x", x, 100}, {"y", y, 100}};
    glc_plan_output out[2] = {{"a", a, 100}, {"b", b, 100}};
    uint64_t seed = 4;
    int i;
    (void)state;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    tx = glc_graph_input(g, "x", GLC_DTYPE_F32, 1, xs);
    ty = glc_graph_input(g, "y", GLC_DTYPE_F32, 1, xs);
    {   /* the first steps are outputs too: their own bytes, so the only
         * order constraints are the data's (shared bytes would add some) */
        glc_tensor a1 = glc_scale(g, tx, 2, 1), b1;
        glc_graph_output(g, "a", glc_unary(g, GLC_UNARY_RELU, a1, 0));
        glc_graph_output(g, "a1", a1);
        b1 = glc_scale(g, ty, 0.5f, 0);
        glc_graph_output(g, "b", glc_unary(g, GLC_UNARY_EXP, b1, 0));
        glc_graph_output(g, "b1", b1);
    }
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    assert_int_equal(glc_plan_stats(p, &info), GLC_OK);
    assert_int_equal(info.dispatches, 4);
    assert_int_equal(info.barriers, 1);
    ot_fill(&seed, x, 100, -2, 2);
    ot_fill(&seed, y, 100, -2, 2);
    assert_int_equal(glc_plan_run(p, in, 2, out, 2), GLC_OK);
    for (i = 0; i < 100; i++) {
        float ea = 2 * x[i] + 1, eb = expf(0.5f * y[i]);
        assert_true(fabsf(a[i] - (ea > 0 ? ea : 0)) <= 1e-6f);
        assert_true(fabsf(b[i] - eb) <= 1e-5f * eb);
    }
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

/* ---- a reshape is a boundary (issue 11) ---- */

static double silu_d(double v) { return ref_act(GLC_UNARY_SILU, v, 1.0, 0.0); }
static double gelu_d(double v) { return ref_act(GLC_UNARY_GELU, v, 1.0, 0.0); }

/* Compiles the graph `build` makes (output "y") with flags, runs it on
 * inputs "a" and "b" and a param "w" (if the graph has it) and returns the
 * plan's fusion count. */
typedef glc_tensor (*rs_build)(glc_graph *g);

static uint32_t run_rs(glc_device *dev, rs_build build, uint32_t flags, const float *a, size_t na,
                       const float *b, size_t nb, const float *w, size_t nw, float *y, size_t ny)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_plan_info info;
    glc_plan_input in[2] = {{"a", a, na}, {"b", b, nb}};
    glc_plan_output out = {"y", y, ny};
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    glc_graph_output(g, "y", build(g));
    p = tu_compile(dev, g, flags);
    if (nw)
        assert_int_equal(glc_plan_set_param(p, "w", w, nw), GLC_OK);
    assert_int_equal(glc_plan_run(p, in, nb ? 2 : 1, &out, 1), GLC_OK);
    assert_int_equal(glc_plan_stats(p, &info), GLC_OK);
    glc_plan_destroy(p);
    return info.fused;
}

/* the case: a [3,1], b [3,3], y = reshape(silu(a), [1,3]) * b */
static glc_tensor rs_silu_mul(glc_graph *g)
{
    int64_t as[2] = {3, 1}, bs[2] = {3, 3}, rs[2] = {1, 3};
    glc_tensor a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, as);
    glc_tensor b = glc_graph_input(g, "b", GLC_DTYPE_F32, 2, bs);
    return glc_mul(g, glc_reshape(g, glc_unary(g, GLC_UNARY_SILU, a, 0), 2, rs), b);
}

/* the other operand order and the other broadcast: a [1,3] as [3,1] */
static glc_tensor rs_mul_gelu(glc_graph *g)
{
    int64_t as[2] = {1, 3}, bs[2] = {3, 3}, rs[2] = {3, 1};
    glc_tensor a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, as);
    glc_tensor b = glc_graph_input(g, "b", GLC_DTYPE_F32, 2, bs);
    return glc_mul(g, b, glc_reshape(g, glc_unary(g, GLC_UNARY_GELU, a, 0), 2, rs));
}

/* a reshape between a matmul and its bias and activation: y =
 * gelu(reshape(a [2,4] W^T [6,4], [3,4]) + w[4]) (a matmul's bias is per
 * column of its own output, not of the reshaped one) */
static glc_tensor rs_mm_bias_act(glc_graph *g)
{
    glc_matmul_desc nt = {1};
    int64_t as[2] = {2, 4}, ws[1] = {4}, bs[2] = {6, 4}, rs[2] = {3, 4};
    glc_tensor a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, as);
    glc_tensor b = glc_graph_input(g, "b", GLC_DTYPE_F32, 2, bs);
    glc_tensor w = glc_graph_param(g, "w", GLC_DTYPE_F32, 1, ws);
    glc_tensor mm = glc_reshape(g, glc_matmul(g, a, b, glc_none(), &nt), 2, rs);
    return glc_unary(g, GLC_UNARY_GELU, glc_add(g, mm, w), 0);
}

/* rms_norm over the rows of a reshaped residual sum, times its weight:
 * y = rms_norm(reshape(a + b, [4,3]), w[3]) */
static glc_tensor rs_add_norm(glc_graph *g)
{
    int64_t as[2] = {2, 6}, ws[1] = {3}, rs[2] = {4, 3};
    glc_tensor a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, as);
    glc_tensor b = glc_graph_input(g, "b", GLC_DTYPE_F32, 2, as);
    glc_tensor w = glc_graph_param(g, "w", GLC_DTYPE_F32, 1, ws);
    glc_tensor h = glc_reshape(g, glc_add(g, a, b), 2, rs);
    return glc_mul(g, glc_rms_norm(g, h, glc_none(), 1e-5f), w);
}

/* The case and siblings: a pattern with a reshape in it is left
 * alone (or fused only where the layout is the same), and the fused plan
 * equals the unfused one and a double-precision reference. */
static void test_fusion_reshape_boundary(void **state)
{
    glc_device *dev = tu_device(NULL);
    uint64_t seed = 1111;
    float a[12], b[24], w[4], y[2][12];
    double ref[12];
    int i, j, f;
    (void)state;
    ot_fill(&seed, a, 12, -2, 2);
    ot_fill(&seed, b, 24, -2, 2);
    ot_fill(&seed, w, 4, -1, 1);
    /* y[i][j] = silu(a[j]) * b[i][j] */
    for (f = 0; f < 2; f++)
        run_rs(dev, rs_silu_mul, f ? GLC_COMPILE_NO_FUSE : 0, a, 3, b, 9, NULL, 0, y[f], 9);
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++)
            ref[i * 3 + j] = silu_d(a[j]) * b[i * 3 + j];
    for (i = 0; i < 9; i++)
        if (fabs(y[0][i] - ref[i]) > 1e-5 || fabs(y[1][i] - ref[i]) > 1e-5)
            fail_msg("silu(reshape) * b [%d]: fused %g, unfused %g, ref %g", i, y[0][i], y[1][i],
                     ref[i]);
    /* y[i][j] = b[i][j] * gelu(a[i]) */
    for (f = 0; f < 2; f++)
        run_rs(dev, rs_mul_gelu, f ? GLC_COMPILE_NO_FUSE : 0, a, 3, b, 9, NULL, 0, y[f], 9);
    for (i = 0; i < 9; i++) {
        ref[i] = b[i] * gelu_d(a[i / 3]);
        if (fabs(y[0][i] - ref[i]) > 1e-5 || fabs(y[1][i] - ref[i]) > 1e-5)
            fail_msg("b * gelu(reshape) [%d]: fused %g, unfused %g, ref %g", i, y[0][i], y[1][i],
                     ref[i]);
    }
    /* y = gelu(reshape(a b^T) + w) (gelu's tail on llvmpipe: 1e-3 off) */
    for (f = 0; f < 2; f++)
        run_rs(dev, rs_mm_bias_act, f ? GLC_COMPILE_NO_FUSE : 0, a, 8, b, 24, w, 4, y[f], 12);
    for (i = 0; i < 12; i++) {
        int r = i / 6, c = i % 6, k;
        double s = 0;
        for (k = 0; k < 4; k++)
            s += (double)a[r * 4 + k] * b[c * 4 + k];
        ref[i] = gelu_d(s + w[i % 4]);
        if (fabs(y[0][i] - ref[i]) > 2e-3 || fabs(y[1][i] - ref[i]) > 2e-3)
            fail_msg("gelu(reshape(mm) + w) [%d]: fused %g, unfused %g, ref %g", i, y[0][i],
                     y[1][i], ref[i]);
    }
    /* y = rms_norm(reshape(a + b, [4,3])) * w */
    for (f = 0; f < 2; f++)
        run_rs(dev, rs_add_norm, f ? GLC_COMPILE_NO_FUSE : 0, a, 12, b, 12, w, 3, y[f], 12);
    for (i = 0; i < 4; i++) {
        double ss = 0;
        for (j = 0; j < 3; j++)
            ss += ((double)a[i * 3 + j] + b[i * 3 + j]) * ((double)a[i * 3 + j] + b[i * 3 + j]);
        for (j = 0; j < 3; j++) {
            double r = ((double)a[i * 3 + j] + b[i * 3 + j]) / sqrt(ss / 3 + 1e-5) * w[j];
            if (fabs(y[0][i * 3 + j] - r) > 1e-4 || fabs(y[1][i * 3 + j] - r) > 1e-4)
                fail_msg("rms_norm(reshape(a + b)) * w [%d]: fused %g, unfused %g, ref %g",
                         i * 3 + j, y[0][i * 3 + j], y[1][i * 3 + j], r);
        }
    }
    glc_device_destroy(dev);
}

/* The SwiGLU block with a variable row count (x [T,8], T 1..8, w1/w3
 * [4,8], w2 [3,4]): the fused plan (w1 | w3 packed, its SwiGLU epilogue
 * writing the product) at every T against a double-precision reference and
 * the unfused plan. The pack keeps its segments where they are at the
 * maximum, so the halves stay 8 rows apart at any T. */
static glc_plan *glu_var_plan(glc_device *dev, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_matmul_desc nt = {1};
    int64_t xs[2];
    glc_tensor x, gate, up;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    xs[0] = glc_graph_var(g, "T", 1, 8);
    xs[1] = 8;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    gate = glc_matmul(g, x, param(g, "w1", GLC_DTYPE_F32, 2, 4, 8), glc_none(), &nt);
    up = glc_matmul(g, x, param(g, "w3", GLC_DTYPE_F32, 2, 4, 8), glc_none(), &nt);
    glc_graph_output(g, "y", glc_matmul(g, glc_mul(g, glc_unary(g, GLC_UNARY_SILU, gate, 0), up),
                                        param(g, "w2", GLC_DTYPE_F32, 2, 3, 4), glc_none(), &nt));
    p = tu_compile(dev, g, flags);
    return p;
}

static void test_fusion_glu_var_rows(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_plan *pl[2];
    glc_plan_info fi;
    float x[64], w1[32], w3[32], w2[12], y[2][24];
    uint64_t seed = 88;
    int i, t, r, j, k;
    (void)state;
    pl[0] = glu_var_plan(dev, 0);
    pl[1] = glu_var_plan(dev, GLC_COMPILE_NO_FUSE);
    assert_int_equal(glc_plan_stats(pl[0], &fi), GLC_OK);
    /* swiglu, qkv (w1 | w3: packed where w3's 8 x 4 floats after w1 start
     * aligned), glu_out; else swiglu alone */
    if (tu_aligned(dev, 8 * 4 * 4) ? fi.fused != 3 || fi.dispatches != 2
                                   : fi.fused != 1 || fi.dispatches != 4)
        fail_msg("glu var rows: fused %u, %u dispatches", fi.fused, fi.dispatches);
    ot_fill(&seed, w1, 32, -0.5f, 0.5f);
    ot_fill(&seed, w3, 32, -0.5f, 0.5f);
    ot_fill(&seed, w2, 12, -0.5f, 0.5f);
    for (i = 0; i < 2; i++) {
        assert_int_equal(glc_plan_set_param(pl[i], "w1", w1, 32), GLC_OK);
        assert_int_equal(glc_plan_set_param(pl[i], "w3", w3, 32), GLC_OK);
        assert_int_equal(glc_plan_set_param(pl[i], "w2", w2, 12), GLC_OK);
    }
    for (t = 8; t >= 1; t--) { /* down, then up again: every re-plan both ways */
        glc_plan_var v = {"T", t};
        ot_fill(&seed, x, 64, -1, 1);
        for (i = 0; i < 2; i++) {
            glc_plan_input in = {"x", x, (size_t)(t * 8)};
            glc_plan_output out = {"y", y[i], (size_t)(t * 3)};
            glc_status st = glc_plan_run_with_vars(pl[i], &v, 1, &in, 1, &out, 1);
            if (st != GLC_OK)
                fail_msg("T %d, %s plan: %s: %s", t, i ? "unfused" : "fused", glc_status_str(st),
                         glc_device_errmsg(dev));
        }
        for (r = 0; r < t; r++)
            for (j = 0; j < 3; j++) {
                double s = 0;
                for (k = 0; k < 4; k++) {
                    double gv = 0, uv = 0;
                    int c;
                    for (c = 0; c < 8; c++) {
                        gv += (double)x[r * 8 + c] * w1[k * 8 + c];
                        uv += (double)x[r * 8 + c] * w3[k * 8 + c];
                    }
                    s += silu_d(gv) * uv * w2[j * 4 + k];
                }
                for (i = 0; i < 2; i++)
                    if (fabs(y[i][r * 3 + j] - s) > 1e-5)
                        fail_msg("T %d, row %d, col %d, %s plan: %g, reference %g", t, r, j,
                                 i ? "unfused" : "fused", y[i][r * 3 + j], s);
            }
    }
    for (t = 2; t <= 8; t += 3) {
        glc_plan_var v = {"T", t};
        glc_plan_input in = {"x", x, (size_t)(t * 8)};
        ot_fill(&seed, x, 64, -1, 1);
        for (i = 0; i < 2; i++) {
            glc_plan_output out = {"y", y[i], (size_t)(t * 3)};
            assert_int_equal(glc_plan_run_with_vars(pl[i], &v, 1, &in, 1, &out, 1), GLC_OK);
        }
        ot_check("glu var rows, going up", y[0], y[1], (size_t)(t * 3), 1e-12);
    }
    glc_plan_destroy(pl[0]);
    glc_plan_destroy(pl[1]);
    glc_device_destroy(dev);
}

/* The compiler's binding check covers a size a plan asks for itself, not
 * only a tensor's shape: a gated matmul input (the glu pass's form) whose
 * second half would end past the memory planned for a is refused at
 * compile, and accepted where it ends inside. GL-free (glc__compile). */
static void test_binding_past_memory_refused(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc__target tg;
    int up;
    (void)state;
    glc__target_of(dev, &tg);
    for (up = 16; up <= 24; up += 8) {
        glc_graph *g;
        glc__program prog;
        glc_matmul_desc nt = {1};
        int64_t xs[2] = {2, 16}, ws[2] = {3, 16};
        glc_tensor x, w, y;
        glc__gnode *n;
        char err[256];
        glc_status st;
        assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
        x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
        w = glc_graph_param(g, "w", GLC_DTYPE_F32, 2, ws);
        y = glc_matmul(g, x, w, glc_none(), &nt);
        glc_graph_output(g, "y", y);
        /* as the glu pass would have it: x holds gate | up, [2, 8] each */
        g->t[w.id].shape[1] = 8;
        n = &g->n[g->t[y.id].producer];
        n->raw.mm.glu = GLC_UNARY_SILU;
        n->raw.mm.glu_gate = 0; /* gate at 0, up at element `up` */
        n->raw.mm.glu_up = up;
        st = glc__compile(g, &tg, &prog, err, sizeof err);
        if (up == 16) { /* up [16, 32): x's 128 bytes */
            assert_int_equal(st, GLC_OK);
            glc__program_free(&prog);
        } else { /* up [24, 40): past them */
            assert_int_equal(st, GLC_ERR_INVALID_ARG);
            tu_assert_contains(err, "matmul: binding 0 does not fit the memory planned for it");
        }
        glc_graph_destroy(g);
    }
    glc_device_destroy(dev);
}

/* rows_first: get_rows(rms_norm(x, w), ids) [-> matmul] becomes
 * rms_norm(get_rows(x, ids), w) (then the matmul's prologue, mm_norm, up
 * to 8 rows): x [T, D] with T fixed or a variable run at every value, ids
 * random in [0, T) each run, with and without the norm's weight and the
 * matmul, 1 to 12 rows; left alone when the norm has another reader or the
 * ids are made after the norm. Fused, NO_FUSE and a double reference agree. */
typedef struct rfcase {
    int64_t tmax, nids;
    int weight, mm, extra; /* extra 1: the norm is an output too; 2: ids from an argmax after it */
    int fires;
} rfcase;

static glc_plan *rows_plan(glc_device *dev, const rfcase *c, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_matmul_desc nt = {1};
    int64_t xs[2], is[1], zs[2];
    glc_tensor x, n, ids, y;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    xs[0] = c->tmax == 1 ? 1 : glc_graph_var(g, "T", 1, c->tmax);
    xs[1] = D;
    is[0] = c->nids;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    n = glc_rms_norm(g, x, c->weight ? param(g, "w", GLC_DTYPE_F32, 1, D, 0) : glc_none(), 1e-5f);
    if (c->extra == 2) { /* ids made after the norm: row-wise argmax of z [nids, T] */
        zs[0] = c->nids;
        zs[1] = xs[0];
        ids = glc_argmax(g, glc_graph_input(g, "z", GLC_DTYPE_F32, 2, zs));
    } else {
        ids = glc_graph_input(g, "ids", GLC_DTYPE_I32, 1, is);
    }
    y = glc_get_rows(g, n, ids);
    if (c->mm)
        y = glc_matmul(g, y, param(g, "m", GLC_DTYPE_F32, 2, 5, D), glc_none(), &nt);
    glc_graph_output(g, "y", y);
    if (c->extra == 1)
        glc_graph_output(g, "n", n);
    p = tu_compile(dev, g, flags);
    return p;
}

static void test_fusion_rows_first(void **state)
{
    static const rfcase cases[] = {
        {1, 1, 1, 1, 0, 1}, {9, 1, 1, 1, 0, 1}, {9, 3, 0, 0, 0, 1},
        {5, 12, 1, 1, 0, 1}, {4, 2, 1, 0, 0, 1}, {6, 2, 1, 1, 1, 0}, {6, 2, 1, 1, 2, 0},
    };
    glc_device *dev = tu_device(NULL);
    size_t ci;
    (void)state;
    for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const rfcase *c = &cases[ci];
        int64_t ny = c->mm ? 5 : D, t, i, j, q;
        glc_plan *pl[2];
        glc_plan_info fi, pi;
        uint64_t seed = 500 + ci;
        float x[12 * D], w[D], m[5 * D], z[12 * 12], y[3][12 * D], nout[12 * D];
        int32_t ids[12];
        int p, expect;
        pl[0] = rows_plan(dev, c, 0);
        pl[1] = rows_plan(dev, c, GLC_COMPILE_NO_FUSE);
        assert_int_equal(glc_plan_stats(pl[0], &fi), GLC_OK);
        assert_int_equal(glc_plan_stats(pl[1], &pi), GLC_OK);
        /* the swap, and mm_norm after it (up to 8 rows; 6 storage blocks) */
        expect = c->fires + (c->fires && c->mm && c->nids <= 8 && tu_ssbo_blocks(dev) >= 6);
        if ((int)fi.fused != expect || (int)(pi.dispatches - fi.dispatches) != expect - c->fires)
            fail_msg("rows_first case %zu: fused %u (expected %d), %u -> %u dispatches", ci,
                     fi.fused, expect, pi.dispatches, fi.dispatches);
        ot_fill(&seed, w, D, 0.5f, 1.5f);
        ot_fill(&seed, m, 5 * D, -1, 1);
        for (p = 0; p < 2; p++) {
            if (c->weight)
                assert_int_equal(glc_plan_set_param(pl[p], "w", w, D), GLC_OK);
            if (c->mm)
                assert_int_equal(glc_plan_set_param(pl[p], "m", m, 5 * D), GLC_OK);
        }
        for (t = c->tmax; t >= 1; t--) {
            glc_plan_var v = {"T", t};
            ot_fill(&seed, x, (size_t)(t * D), -2, 2);
            ot_fill(&seed, z, (size_t)(c->nids * t), -1, 1);
            for (i = 0; i < c->nids; i++) {
                ids[i] = (int32_t)(tu_rand(&seed) % (uint64_t)t);
                if (c->extra == 2) { /* the argmax of z's row i */
                    ids[i] = 0;
                    for (j = 1; j < t; j++)
                        if (z[i * t + j] > z[i * t + ids[i]])
                            ids[i] = (int32_t)j;
                }
            }
            for (p = 0; p < 2; p++) {
                glc_plan_input in[2] = {{"x", x, (size_t)(t * D)},
                                        {c->extra == 2 ? "z" : "ids", NULL, 0}};
                glc_plan_output out[2] = {{"y", y[p], (size_t)(c->nids * ny)},
                                          {"n", nout, (size_t)(t * D)}};
                in[1].data = c->extra == 2 ? (const void *)z : (const void *)ids;
                in[1].count = c->extra == 2 ? (size_t)(c->nids * t) : (size_t)c->nids;
                assert_int_equal(glc_plan_run_with_vars(pl[p], &v, c->tmax > 1, in, 2, out,
                                                        c->extra == 1 ? 2 : 1),
                                 GLC_OK);
            }
            for (i = 0; i < c->nids; i++) { /* the reference: the picked rows, normed */
                const float *row = x + ids[i] * D;
                double ss = 0, sc, nr[D];
                for (q = 0; q < D; q++)
                    ss += (double)row[q] * row[q];
                sc = 1.0 / sqrt(ss / D + 1e-5);
                for (q = 0; q < D; q++)
                    nr[q] = row[q] * sc * (c->weight ? w[q] : 1.0);
                for (j = 0; j < ny; j++) {
                    double s = 0;
                    if (!c->mm) {
                        y[2][i * ny + j] = (float)nr[j];
                        continue;
                    }
                    for (q = 0; q < D; q++)
                        s += nr[q] * m[j * D + q];
                    y[2][i * ny + j] = (float)s;
                }
            }
            ot_check("rows_first: fused vs unfused", y[0], y[1], (size_t)(c->nids * ny), 1e-10);
            ot_check("rows_first: fused vs reference", y[0], y[2], (size_t)(c->nids * ny), 1e-9);
            if (c->tmax == 1)
                break;
        }
        glc_plan_destroy(pl[0]);
        glc_plan_destroy(pl[1]);
    }
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fusion_patterns),
        cmocka_unit_test(test_fusion_residual_norm),
        cmocka_unit_test(test_fusion_qkv),
        cmocka_unit_test(test_fusion_qkv_share),
        cmocka_unit_test(test_fusion_rope_rows),
        cmocka_unit_test(test_fusion_glu),
        cmocka_unit_test(test_fusion_glu_dead_branch),
        cmocka_unit_test(test_plan_reorder),
        cmocka_unit_test(test_vars_params_only),
        cmocka_unit_test(test_fusion_reshape_boundary),
        cmocka_unit_test(test_fusion_glu_var_rows),
        cmocka_unit_test(test_binding_past_memory_refused),
        cmocka_unit_test(test_fusion_rows_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
