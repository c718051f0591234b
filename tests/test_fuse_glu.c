/*
 * The glu_out fusion (src/core/fuse.c): h = act(x W1^T + b1) * (x W3^T +
 * b3) at decode shapes (<= 8 rows) becomes one matmul over the packed
 * W1 | W3 whose epilogue writes h: a gate row and its up row are summed by
 * the same subgroup or invocation, so neither half is stored and the mul's
 * dispatch goes. Fused, GLC_COMPILE_NO_FUSE and a plain C reference
 * (double) agree over generated cases: f32, f16, bf16 and GGML block
 * weights (q8_0, q4_0, the K types and q4_1 / q5_0 / q5_1); T = 1 and a
 * variable T run at every value; the gate built before or after the up
 * projection (the pack's two orders); biases; SiLU, GELU and ReLU; with
 * and without the rms_norm prologue (mm_norm) and a down projection after
 * it; odd and prime widths; a forced small loop cap
 * (the product then K-split, ksum applying the epilogue); on GPUs, matvec
 * with its K parts forced (2, 4, 8 subgroups a row); on llvmpipe every
 * other case with buffer textures off (its direct kernel then reads b, a
 * and the norm's weight from SSBOs), the others through them at any size.
 * Left apart: 12
 * or 16 rows (prefill), a half read by another op, halves of different
 * widths. The plan listing shows the GLU_OUT kernel where it fired.
 */
#include "testutil.h"

#include "device.h" /* the loop cap, as test_op_matmul sets it */
#include "forced_mv.h"
#include "optest.h"
#include "ref_elementwise.h"
#include "ref_quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct gcase {
    glc_dtype w;
    int64_t tmax, k, half; /* tmax 1: T fixed at 1; else T a variable in [1, tmax] */
    int act;               /* glc_unary_op on the gate */
    int bias, up_first, norm, down;
    uint32_t cap;  /* a loop cap forced on the device (0: its own) */
    int extra;     /* 1: the gate is an output too; 2: the up half is 1 wider (no pack) */
    int fused;     /* glu_out expected */
} gcase;

static const gcase cases[] = {
    {GLC_DTYPE_F32, 1, 16, 16, GLC_UNARY_SILU, 0, 0, 0, 0, 0, 0, 1},
    {GLC_DTYPE_F32, 1, 16, 16, GLC_UNARY_SILU, 0, 1, 0, 0, 0, 0, 1},
    {GLC_DTYPE_F16, 8, 40, 37, GLC_UNARY_GELU, 1, 0, 1, 1, 0, 0, 1},
    {GLC_DTYPE_F16, 4, 24, 9, GLC_UNARY_RELU, 1, 1, 0, 1, 0, 0, 1},
    {GLC_DTYPE_BF16, 4, 32, 11, GLC_UNARY_SILU, 0, 0, 1, 0, 0, 0, 1},
    {GLC_DTYPE_F32, 4, 20, 64, GLC_UNARY_SILU, 1, 1, 1, 1, 0, 0, 1},
    {GLC_DTYPE_Q8_0, 1, 64, 12, GLC_UNARY_SILU, 0, 1, 1, 1, 0, 0, 1},
    {GLC_DTYPE_Q8_0, 8, 96, 7, GLC_UNARY_GELU, 1, 0, 0, 0, 0, 0, 1},
    {GLC_DTYPE_Q4_0, 1, 128, 28, GLC_UNARY_SILU, 0, 0, 1, 1, 0, 0, 1},
    {GLC_DTYPE_Q4_0, 4, 64, 13, GLC_UNARY_SILU, 1, 1, 0, 0, 0, 0, 1},
    /* a small loop cap: K split, the epilogue in ksum */
    {GLC_DTYPE_F32, 4, 4000, 5, GLC_UNARY_SILU, 1, 0, 1, 0, 600, 0, 1},
    {GLC_DTYPE_F16, 1, 4096, 8, GLC_UNARY_GELU, 0, 1, 0, 1, 600, 0, 1},
    {GLC_DTYPE_Q8_0, 2, 8192, 6, GLC_UNARY_SILU, 1, 1, 1, 0, 2000, 0, 1},
    {GLC_DTYPE_Q4_0, 1, 8192, 4, GLC_UNARY_SILU, 0, 0, 0, 0, 2000, 0, 1},
    /* caps where the plain product fits one pass but the epilogue's twice the
     * rows does not: a K split all the same, so ksum applies it */
    {GLC_DTYPE_F32, 1, 4000, 8, GLC_UNARY_SILU, 1, 0, 0, 0, 1700, 0, 1},
    {GLC_DTYPE_Q8_0, 3, 4096, 4, GLC_UNARY_GELU, 0, 1, 1, 0, 2400, 0, 1},
    /* left apart: prefill rows, the gate read elsewhere, halves of two widths */
    {GLC_DTYPE_F32, 12, 16, 4, GLC_UNARY_SILU, 0, 0, 0, 0, 0, 0, 0},
    {GLC_DTYPE_Q8_0, 16, 32, 4, GLC_UNARY_SILU, 0, 0, 0, 1, 0, 0, 0},
    {GLC_DTYPE_F32, 4, 16, 5, GLC_UNARY_SILU, 0, 0, 0, 0, 0, 1, 0},
    {GLC_DTYPE_F32, 4, 16, 4, GLC_UNARY_SILU, 0, 0, 0, 0, 0, 2, 0},
    /* the other GGML block types (last: the cases above keep their seeds) */
    {GLC_DTYPE_Q4_K, 1, 256, 12, GLC_UNARY_SILU, 0, 1, 1, 1, 0, 0, 1},
    {GLC_DTYPE_Q6_K, 4, 512, 7, GLC_UNARY_GELU, 1, 0, 0, 0, 0, 0, 1},
    {GLC_DTYPE_Q5_K, 1, 256, 5, GLC_UNARY_SILU, 1, 0, 1, 0, 0, 0, 1},
    {GLC_DTYPE_Q4_1, 2, 64, 9, GLC_UNARY_SILU, 0, 0, 1, 1, 0, 0, 1},
    {GLC_DTYPE_Q5_0, 1, 96, 11, GLC_UNARY_RELU, 1, 1, 0, 0, 0, 0, 1},
    {GLC_DTYPE_Q5_1, 3, 32, 6, GLC_UNARY_SILU, 0, 0, 1, 0, 0, 0, 1},
    /* with a small loop cap */
    {GLC_DTYPE_Q4_K, 1, 2048, 4, GLC_UNARY_SILU, 0, 0, 1, 0, 600, 0, 1},
    {GLC_DTYPE_Q6_K, 2, 2304, 6, GLC_UNARY_SILU, 1, 1, 0, 0, 600, 0, 1},
    /* one row of a, long K: matvec with its lanes across K (LK), up to 4
     * words a lane when the test forces 32 or 64 lanes */
    {GLC_DTYPE_F16, 1, 1000, 37, GLC_UNARY_GELU, 1, 0, 1, 0, 0, 0, 1},
    {GLC_DTYPE_F32, 1, 508, 19, GLC_UNARY_SILU, 0, 1, 1, 1, 0, 0, 1},
    {GLC_DTYPE_BF16, 1, 264, 13, GLC_UNARY_SILU, 1, 0, 1, 0, 0, 0, 1},
};

static int quantized(glc_dtype t) { return glc_dtype_size(t) == 0; }

static glc_tensor project(glc_graph *g, const gcase *c, glc_tensor a, const char *w,
                          const char *b, int64_t n)
{
    glc_matmul_desc nt = {1};
    int64_t ws[2] = {n, c->k};
    glc_tensor wt = glc_graph_param(g, w, c->w, 2, ws);
    glc_tensor bt = c->bias ? glc_graph_param(g, b, GLC_DTYPE_F32, 1, &n) : glc_none();
    return quantized(c->w) ? glc_matmul_q(g, a, wt, bt) : glc_matmul(g, a, wt, bt, &nt);
}

static glc_plan *build(glc_device *dev, const gcase *c, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_matmul_desc nt = {1};
    int64_t t, xs[2], w2s[2], nup = c->half + (c->extra == 2);
    glc_tensor x, a, gate, up, h;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    t = c->tmax == 1 ? 1 : glc_graph_var(g, "T", 1, c->tmax);
    xs[0] = t;
    xs[1] = c->k;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    a = c->norm ? glc_rms_norm(g, x, glc_graph_param(g, "wn", GLC_DTYPE_F32, 1, &c->k), 1e-5f) : x;
    if (c->up_first) { /* node order decides the pack's order */
        up = project(g, c, a, "w3", "b3", nup);
        gate = project(g, c, a, "w1", "b1", c->half);
    } else {
        gate = project(g, c, a, "w1", "b1", c->half);
        up = project(g, c, a, "w3", "b3", nup);
    }
    if (c->extra == 2) { /* the up half one wider: sliced back, not a pack's half */
        up = glc_slice(g, up, 1, 0, c->half);
    }
    h = glc_mul(g, glc_unary(g, (glc_unary_op)c->act, gate, 0.0f), up);
    if (c->down) {
        w2s[0] = 5;
        w2s[1] = c->half;
        h = glc_matmul(g, h, glc_graph_param(g, "w2", GLC_DTYPE_F32, 2, w2s), glc_none(), &nt);
    }
    glc_graph_output(g, "y", h);
    if (c->extra == 1)
        glc_graph_output(g, "g", gate);
    p = tu_compile(dev, g, flags);
    return p;
}

/* build() for fm_plans (forced_mv.h) */
static glc_plan *build_any(glc_device *dev, const void *c, uint32_t flags)
{
    return build(dev, (const gcase *)c, flags);
}


/* w (n x k floats) as the weights the plan gets: rounded to the dtype, or
 * made GGML blocks (returned, *bytes set) whose values w then holds. */
static uint8_t *weights(glc_dtype t, float *w, int64_t n, int64_t k, size_t *bytes)
{
    size_t nb = (size_t)(n * k) / 32, bl;
    uint8_t *q;
    int j;
    if (!quantized(t)) {
        ot_round(t, w, (size_t)(n * k));
        return NULL;
    }
    if (t != GLC_DTYPE_Q8_0 && t != GLC_DTYPE_Q4_0) { /* the test references' quantizers */
        *bytes = (size_t)n * glc_dtype_row_bytes(t, k);
        q = malloc(*bytes);
        ref_quantize(t, w, (size_t)(n * k), q);
        ref_dequantize(t, q, (size_t)(n * k), w);
        return q;
    }
    *bytes = nb * (t == GLC_DTYPE_Q8_0 ? 34 : 18);
    q = malloc(*bytes);
    for (bl = 0; bl < nb; bl++) {
        float *v = w + bl * 32;
        if (t == GLC_DTYPE_Q8_0) { /* scale 1/64, int8 values */
            uint16_t h = ot_f32_to_f16(1.0f / 64);
            memcpy(q + bl * 34, &h, 2);
            for (j = 0; j < 32; j++) {
                int8_t iv = (int8_t)lrintf(v[j] * 127);
                q[bl * 34 + 2 + (size_t)j] = (uint8_t)iv;
                v[j] = (float)iv / 64;
            }
        } else { /* scale 1/8; element j the low nibble of byte j, j + 16 the high one */
            uint16_t h = ot_f32_to_f16(1.0f / 8);
            memcpy(q + bl * 18, &h, 2);
            for (j = 0; j < 16; j++) {
                int lo = (int)lrintf(v[j] * 7.5f + 8), hi = (int)lrintf(v[j + 16] * 7.5f + 8);
                lo = lo < 0 ? 0 : lo > 15 ? 15 : lo;
                hi = hi < 0 ? 0 : hi > 15 ? 15 : hi;
                q[bl * 18 + 2 + (size_t)j] = (uint8_t)(lo | hi << 4);
                v[j] = (float)(lo - 8) / 8;
                v[j + 16] = (float)(hi - 8) / 8;
            }
        }
    }
    return q;
}

static void set_weights(glc_plan *p, const char *name, glc_dtype t, const float *w,
                        const uint8_t *q, size_t bytes, size_t count)
{
    if (q)
        assert_int_equal(glc_plan_set_param_typed(p, name, q, bytes, t), GLC_OK);
    else
        assert_int_equal(glc_plan_set_param(p, name, w, count), GLC_OK);
}

static void append(void *user, const char *text)
{
    char *buf = user;
    size_t used = strlen(buf);
    snprintf(buf + used, 65536 - used, "%s", text);
}

static void test_glu_out(void **state)
{
    size_t ci;
    int lk = 0;  /* cases whose forced plan has matvec's lanes across K */
    int vsg = 0; /* and matmul_q's emulated subgroups */
    int sgs = 0; /* a device with subgroups (no emulation) */
    (void)state;
    for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const gcase *c = &cases[ci];
        int64_t k = c->k, h = c->half, nup = h + (c->extra == 2), tm = c->tmax, t, i, j, q;
        uint64_t seed = 71 + ci;
        float *x = malloc((size_t)(tm * k) * 4), *w1 = malloc((size_t)(h * k) * 4);
        float *w3 = malloc((size_t)(nup * k) * 4), *b1 = malloc((size_t)h * 4);
        float *b3 = malloc((size_t)nup * 4), *wn = malloc((size_t)k * 4);
        float *w2 = malloc((size_t)(5 * h) * 4), *y[5];
        double *xn = malloc((size_t)k * sizeof *xn), *hd = malloc((size_t)h * sizeof *hd);
        int64_t ny = c->down ? 5 : h;
        uint8_t *q1 = NULL, *q3 = NULL;
        size_t by1 = 0, by3 = 0;
        char *dump = calloc(65536, 1), what[96];
        float wscale = (float)(2.0 / sqrt((double)k));
        glc_device *dev = tu_device(NULL);
        uint32_t cap = dev->info.limits.max_loop_iterations;
        glc_plan *pl[4] = {NULL, NULL, NULL, NULL};
        if (ci % 2) /* (before any plan: the kernels' prelude follows the feature) */
            dev->info.features.texel_buffers = 0;
        else /* the texel form whatever the size */
            dev->texel_min_bytes = 0;
        /* the qkv pass packs the two projections only where the second
         * part starts on the device's binding alignment */
        int p, np, expect = c->fused && (size_t)(tm * h * 4) % dev->info.limits.ssbo_offset_alignment == 0;
        if (c->cap)
            dev->info.limits.max_loop_iterations = c->cap;
        pl[0] = build(dev, c, 0);
        pl[1] = build(dev, c, GLC_COMPILE_NO_FUSE);
        sgs = dev->info.features.subgroup;
        fm_plans(dev, build_any, c, ci, c->w, k, tm, &pl[2], &pl[3]);
        np = 4;
        if (pl[3]) { /* the lanes across K where K fits them (no loop cap forced) */
            dump[0] = '\0';
            assert_int_equal(glc_plan_dump(pl[3], 0, append, dump), GLC_OK);
            lk += strstr(dump, "LK=") != NULL;
            vsg += strstr(dump, "VSG=") != NULL;
            dump[0] = '\0';
        }
        assert_int_equal(glc_plan_dump(pl[0], 0, append, dump), GLC_OK);
        if ((strstr(dump, "GLU_OUT") != NULL) != expect)
            fail_msg("case %zu: glu_out %s, expected %s\n%s", ci,
                     strstr(dump, "GLU_OUT") ? "fired" : "did not fire",
                     expect ? "to fire" : "not", dump);
        /* weights of a trained layer's scale (sums of K terms stay O(1)): a
         * gate of -30 puts silu deep in its exponential tail, where the
         * output's relative error is the gate's absolute one (f32 sums of
         * K terms: ~1e-5), past any threshold for the orders of two plans */
        ot_fill(&seed, w1, (size_t)(h * k), -wscale, wscale);
        ot_fill(&seed, w3, (size_t)(nup * k), -wscale, wscale);
        ot_fill(&seed, b1, (size_t)h, -1.0f, 1.0f);
        ot_fill(&seed, b3, (size_t)nup, -1.0f, 1.0f);
        ot_fill(&seed, wn, (size_t)k, 0.5f, 1.5f);
        ot_fill(&seed, w2, (size_t)(5 * h), -1.0f, 1.0f);
        q1 = weights(c->w, w1, h, k, &by1);
        q3 = weights(c->w, w3, nup, k, &by3);
        for (p = 0; p < np; p++) {
            if (!pl[p])
                continue;
            set_weights(pl[p], "w1", c->w, w1, q1, by1, (size_t)(h * k));
            set_weights(pl[p], "w3", c->w, w3, q3, by3, (size_t)(nup * k));
            if (c->bias) {
                assert_int_equal(glc_plan_set_param(pl[p], "b1", b1, (size_t)h), GLC_OK);
                assert_int_equal(glc_plan_set_param(pl[p], "b3", b3, (size_t)nup), GLC_OK);
            }
            if (c->norm)
                assert_int_equal(glc_plan_set_param(pl[p], "wn", wn, (size_t)k), GLC_OK);
            if (c->down)
                assert_int_equal(glc_plan_set_param(pl[p], "w2", w2, (size_t)(5 * h)), GLC_OK);
        }
        for (q = 0; q < 5; q++)
            y[q] = malloc((size_t)(tm * ny) * 4);
        for (t = tm; t >= 1; t--) { /* every value of the variable */
            glc_plan_var v = {"T", t};
            ot_fill(&seed, x, (size_t)(t * k), -2.0f, 2.0f);
            for (p = 0; p < np; p++) {
                glc_plan_input in[1] = {{"x", x, (size_t)(t * k)}};
                glc_plan_output out[1] = {{"y", y[p < 2 ? p : p + 1], (size_t)(t * ny)}};
                if (!pl[p])
                    continue;
                assert_int_equal(glc_plan_run_with_vars(pl[p], &v, tm > 1, in, 1, out, 1), GLC_OK);
            }
            for (i = 0; i < t; i++) {
                double ss = 0, sc;
                for (q = 0; q < k; q++)
                    ss += (double)x[i * k + q] * x[i * k + q];
                sc = 1.0 / sqrt(ss / (double)k + 1e-5);
                for (q = 0; q < k; q++)
                    xn[q] = c->norm ? x[i * k + q] * sc * wn[q] : x[i * k + q];
                for (j = 0; j < h; j++) {
                    double gs = c->bias ? b1[j] : 0, us = c->bias ? b3[j] : 0;
                    for (q = 0; q < k; q++) {
                        gs += xn[q] * w1[j * k + q];
                        us += xn[q] * w3[j * k + q];
                    }
                    hd[j] = ref_act(c->act, gs, 1.0, 0.0) * us;
                }
                for (j = 0; j < ny; j++) {
                    double s = 0;
                    if (!c->down) {
                        y[2][i * ny + j] = (float)hd[j];
                        continue;
                    }
                    for (q = 0; q < h; q++)
                        s += hd[q] * w2[j * h + q];
                    y[2][i * ny + j] = (float)s;
                }
            }
            snprintf(what, sizeof what, "case %zu, T %lld: fused vs unfused", ci, (long long)t);
            ot_check(what, y[0], y[1], (size_t)(t * ny), 1e-9); /* (two sum orders, K to 8192) */
            snprintf(what, sizeof what, "case %zu, T %lld: fused vs reference", ci, (long long)t);
            ot_check(what, y[0], y[2], (size_t)(t * ny), 1e-9);
            snprintf(what, sizeof what, "case %zu, T %lld: K parts vs reference", ci, (long long)t);
            if (pl[2])
                ot_check(what, y[3], y[2], (size_t)(t * ny), 1e-9);
            snprintf(what, sizeof what, "case %zu, T %lld: LK or VSG vs reference", ci,
                     (long long)t);
            if (pl[3])
                ot_check(what, y[4], y[2], (size_t)(t * ny), 1e-9);
            if (tm == 1)
                break;
        }
        dev->info.limits.max_loop_iterations = cap;
        for (q = 0; q < 5; q++)
            free(y[q]);
        free(x);
        free(w1);
        free(w3);
        free(b1);
        free(b3);
        free(wn);
        free(w2);
        free(xn);
        free(hd);
        free(q1);
        free(q3);
        free(dump);
        glc_plan_destroy(pl[0]);
        glc_plan_destroy(pl[1]);
        glc_plan_destroy(pl[2]);
        glc_plan_destroy(pl[3]);
        glc_device_destroy(dev);
    }
    assert_true(lk > 0);
    assert_true(sgs || vsg > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glu_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
