/*
 * The mm_res and mm_norm fusions (src/core/fuse.c). mm_res: y = add(r, act(x W^T + bias)) (either
 * operand order) becomes one matmul whose epilogue adds the residual r.
 * Fused, GLC_COMPILE_NO_FUSE and a plain C reference (double) agree: f32,
 * f16 and GGML block weights (q8_0, q4_K, q6_K ...: a matmul_q node), T =
 * 1 and a variable T run at several values, odd N and K, bias as the
 * matmul's input or a separate add, an activation before the add, the direct, tiled and K-split (ksum) kernels
 * (GLC_MATMUL forced; a K past llvmpipe's loop cap), and on GPUs matvec with
 * its K parts forced (2, 4, 8 subgroups a row). A product with a
 * second reader, or a residual that broadcasts, stays a separate add, as
 * does every one on a device of 4 SSBO blocks (GLC_LIMITS=min).
 * mm_norm: matmul(rms_norm(x, wn), W) at decode shapes (<= 8 rows) becomes
 * one matmul computing each row's norm itself (with or without the
 * residual), checked the same way: M = 1 to 8, f32 and f16 weights, bias
 * and activation, a forced tiled variant (it goes direct), K up to 8192;
 * GGML block weights too (matmul_q); left apart at 12 or 16 rows (prefill), K
 * past 8192 or not a multiple of 4, a second reader of the norm, and
 * below 6 SSBO blocks. A norm read by several products (weights of
 * different types, unpacked) goes into each: test_mm_norm_readers.
 */
#include "testutil.h"

#include "device.h"
#include "forced_mv.h"
#include "optest.h"
#include "ref_elementwise.h"
#include "ref_quant.h"
#include "ref_reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct rcase {
    glc_dtype w;
    int64_t tmax, k, n; /* tmax 1: T fixed at 1; else T a variable in [1, tmax] */
    int bias;           /* 0 none, 1 the matmul's input, 2 a separate add */
    int act;            /* a glc_unary_op before the add, 0 none */
    int res_first;      /* add(r, p), else add(p, r) */
    const char *variant; /* GLC_MATMUL, NULL: the device's choice */
    int extra;          /* 1: p is an output too; 2: r is [1, N] (broadcast); 3: the norm is */
    int res_fused;      /* mm_res expected to fire */
    int norm;           /* the matmul reads rms_norm(x, wn) (wn f32 [K]) */
    int norm_fused;     /* mm_norm expected to fire */
} rcase;

/* The NMSE two plans' sums may differ by (fused vs unfused) */
static double order_nmse(const rcase *c)
{
    double floor = c->norm ? 1e-10 : 1e-12, k = 0x1p-46 * (double)c->k;
    return k > floor ? k : floor;
}

static const rcase cases[] = {
    {GLC_DTYPE_F32, 1, 11, 13, 0, 0, 1, NULL, 0, 1, 0, 0},
    {GLC_DTYPE_F16, 5, 19, 7, 1, 0, 0, NULL, 0, 1, 0, 0},
    {GLC_DTYPE_F32, 4, 16, 9, 2, GLC_UNARY_SILU, 1, NULL, 0, 1, 0, 0},
    {GLC_DTYPE_F16, 1, 24, 5, 1, GLC_UNARY_GELU, 0, "tiled64", 0, 1, 0, 0},
    {GLC_DTYPE_F32, 6, 33, 70, 2, 0, 0, "tiled64", 0, 1, 0, 0},
    {GLC_DTYPE_F32, 3, 40003, 5, 1, GLC_UNARY_RELU, 1, "tiled64", 0, 1, 0, 0}, /* K split */
    {GLC_DTYPE_F16, 1, 40000, 3, 0, 0, 0, "tiled64", 0, 1, 0, 0},               /* K split, M 1 */
    {GLC_DTYPE_F32, 2, 120001, 3, 2, 0, 0, NULL, 0, 1, 0, 0},                   /* direct K split */
    {GLC_DTYPE_Q8_0, 3, 64, 9, 1, 0, 1, NULL, 0, 1, 0, 0},
    {GLC_DTYPE_Q8_0, 1, 32, 5, 2, GLC_UNARY_SILU, 0, NULL, 0, 1, 0, 0},
    {GLC_DTYPE_Q8_0, 2, 262144, 3, 1, 0, 1, NULL, 0, 1, 0, 0},  /* K split (ksum) */
    {GLC_DTYPE_F32, 3, 12, 6, 0, GLC_UNARY_SILU, 1, NULL, 1, 0, 0, 0}, /* p read twice */
    {GLC_DTYPE_F32, 3, 12, 6, 0, 0, 0, NULL, 2, 0, 0, 0},              /* r broadcasts */
    /* mm_norm: the rms_norm as the matmul's prologue (decode shapes) */
    {GLC_DTYPE_F32, 1, 64, 13, 0, 0, 1, NULL, 0, 1, 1, 1},
    {GLC_DTYPE_F16, 5, 36, 7, 1, GLC_UNARY_SILU, 0, NULL, 0, 1, 1, 1},
    {GLC_DTYPE_F32, 8, 20, 9, 0, 0, 1, NULL, 0, 1, 1, 1},      /* 8 rows: RM 4 */
    {GLC_DTYPE_F32, 3, 40, 6, 2, 0, 0, "tiled64", 0, 1, 1, 1}, /* goes direct */
    {GLC_DTYPE_F32, 4, 8192, 5, 0, 0, 1, NULL, 0, 1, 1, 1},    /* the largest K */
    {GLC_DTYPE_F32, 2, 8196, 5, 0, 0, 1, NULL, 0, 1, 1, 0},    /* K past 8192 */
    {GLC_DTYPE_F32, 16, 32, 5, 0, 0, 1, NULL, 0, 1, 1, 0},     /* 16 rows: prefill */
    {GLC_DTYPE_F32, 3, 13, 5, 0, 0, 1, NULL, 0, 1, 1, 0},      /* K % 4 */
    {GLC_DTYPE_F32, 3, 16, 5, 0, 0, 1, NULL, 3, 1, 1, 0},      /* the norm read twice */
    {GLC_DTYPE_Q8_0, 1, 64, 5, 0, 0, 1, NULL, 0, 1, 1, 1},     /* matmul_q */
    {GLC_DTYPE_Q8_0, 6, 96, 7, 1, GLC_UNARY_SILU, 0, NULL, 0, 1, 1, 1},
    {GLC_DTYPE_Q8_0, 12, 32, 5, 0, 0, 1, NULL, 0, 1, 1, 0},    /* 12 rows */
    /* the other block types (last: the cases above keep their seeds) */
    {GLC_DTYPE_Q4_K, 3, 256, 9, 1, 0, 1, NULL, 0, 1, 0, 0},
    {GLC_DTYPE_Q6_K, 2, 2816, 3, 2, GLC_UNARY_GELU, 0, NULL, 0, 1, 0, 0},
    {GLC_DTYPE_Q4_K, 1, 512, 5, 0, 0, 1, NULL, 0, 1, 1, 1},     /* mm_norm */
    {GLC_DTYPE_Q5_K, 6, 256, 7, 1, GLC_UNARY_SILU, 0, NULL, 0, 1, 1, 1},
    {GLC_DTYPE_Q6_K, 3, 768, 5, 2, 0, 1, NULL, 0, 1, 1, 1},
    {GLC_DTYPE_Q5_1, 1, 64, 5, 0, 0, 1, NULL, 0, 1, 1, 1},
    /* one row of a, long K: matvec's lanes across K (LK), up to 4 words a
     * lane when the test forces 32 or 64 lanes */
    {GLC_DTYPE_F16, 1, 1000, 37, 1, 0, 1, NULL, 0, 1, 1, 1},
    {GLC_DTYPE_F32, 1, 508, 70, 2, GLC_UNARY_SILU, 0, NULL, 0, 1, 0, 0},
    {GLC_DTYPE_BF16, 1, 200, 11, 1, 0, 1, NULL, 0, 1, 1, 1},
};

static glc_plan *build(glc_device *dev, const rcase *c, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_matmul_desc nt = {1};
    int64_t t, xs[2], rs[2], ws[2], bs[1];
    glc_tensor x, r, w, b, prod, a;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    t = c->tmax == 1 ? 1 : glc_graph_var(g, "T", 1, c->tmax);
    xs[0] = t;
    xs[1] = c->k;
    rs[0] = c->extra == 2 ? 1 : t;
    rs[1] = c->n;
    ws[0] = c->n;
    ws[1] = c->k;
    bs[0] = c->n;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    r = glc_graph_input(g, "r", GLC_DTYPE_F32, 2, rs);
    w = glc_graph_param(g, "w", c->w, 2, ws);
    b = c->bias ? glc_graph_param(g, "b", GLC_DTYPE_F32, 1, bs) : glc_none();
    a = c->norm ? glc_rms_norm(g, x, glc_graph_param(g, "wn", GLC_DTYPE_F32, 1, &c->k), 1e-5f) : x;
    prod = glc_dtype_size(c->w) == 0 ? glc_matmul_q(g, a, w, c->bias == 1 ? b : glc_none())
                                     : glc_matmul(g, a, w, c->bias == 1 ? b : glc_none(), &nt);
    if (c->bias == 2)
        prod = glc_add(g, prod, b);
    if (c->act)
        prod = glc_unary(g, (glc_unary_op)c->act, prod, 0.0f);
    glc_graph_output(g, "y", c->res_first ? glc_add(g, r, prod) : glc_add(g, prod, r));
    if (c->extra == 1)
        glc_graph_output(g, "p", prod);
    if (c->extra == 3)
        glc_graph_output(g, "p", a);
    p = tu_compile(dev, g, flags);
    return p;
}

/* build() for fm_plans (forced_mv.h) */
static glc_plan *build_any(glc_device *dev, const void *c, uint32_t flags)
{
    return build(dev, (const rcase *)c, flags);
}


static void append(void *user, const char *text)
{
    char *buf = user;
    size_t used = strlen(buf);
    snprintf(buf + used, 65536 - used, "%s", text);
}

static void test_mm_res(void **state)
{
    size_t ci;
    int lk = 0;  /* cases whose forced plan has matvec's lanes across K */
    int vsg = 0; /* and matmul_q's emulated subgroups */
    int sgs = 0; /* a device with subgroups (no emulation) */
    char *dump = calloc(65536, 1);
    (void)state;
    for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const rcase *c = &cases[ci];
        int64_t k = c->k, n = c->n, tm = c->tmax, t, i, j, q;
        uint64_t seed = 31 + ci;
        float *x = malloc((size_t)(tm * k) * 4), *r = malloc((size_t)(tm * n) * 4);
        float *w = malloc((size_t)(n * k) * 4), *b = malloc((size_t)n * 4);
        float *wn = malloc((size_t)k * 4);
        float *xn = malloc((size_t)(tm * k) * sizeof *xn);
        int64_t np = c->extra == 3 ? k : n; /* output p's row */
        float *y[5], *pp[4];
        uint8_t *wq = NULL;
        glc_device *dev;
        glc_plan *pl[4] = {NULL, NULL, NULL, NULL};
        glc_plan_info fi, pi;
        glc_device_info info;
        int expect, p, nplan;
        char what[64];
        if (c->variant)
            setenv("GLC_MATMUL", c->variant, 1);
        dev = tu_device(NULL);
        unsetenv("GLC_MATMUL");
        pl[0] = build(dev, c, 0);
        pl[1] = build(dev, c, GLC_COMPILE_NO_FUSE);
        sgs = dev->info.features.subgroup;
        fm_plans(dev, build_any, c, ci, c->w, k, tm, &pl[2], &pl[3]);
        if (pl[3]) { /* the forced decode kernel where K fits it (no loop cap forced) */
            glc_plan_dump(pl[3], 0, append, dump);
            lk += strstr(dump, "LK=") != NULL;
            vsg += strstr(dump, "VSG=") != NULL;
            dump[0] = '\0';
        }
        nplan = 4;
        assert_int_equal(glc_plan_stats(pl[0], &fi), GLC_OK);
        assert_int_equal(glc_plan_stats(pl[1], &pi), GLC_OK);
        assert_int_equal(glc_device_get_info(dev, &info), GLC_OK);
        /* the residual is a 5th binding: not on devices with the ES 3.1
         * minimum of 4 SSBO blocks (GLC_LIMITS=min) */
        expect = (c->bias == 2) + (c->act != 0) + (c->res_fused && info.limits.max_ssbo_blocks >= 5) +
                 (c->norm_fused && info.limits.max_ssbo_blocks >= 6);
        if ((int)fi.fused != expect || (int)(pi.dispatches - fi.dispatches) != expect)
            fail_msg("case %zu: fused %u, %u -> %u dispatches (expected %d fused)", ci, fi.fused,
                     pi.dispatches, fi.dispatches, expect);
        ot_fill(&seed, w, (size_t)(n * k), -1.0f, 1.0f);
        ot_fill(&seed, b, (size_t)n, -1.0f, 1.0f);
        ot_fill(&seed, wn, (size_t)k, 0.5f, 1.5f);
        if (c->w == GLC_DTYPE_Q8_0) { /* blocks of 32: f16 scale 1/64, int8 values */
            size_t nb = (size_t)(n * k) / 32, bl;
            wq = malloc(nb * 34);
            for (bl = 0; bl < nb; bl++) {
                uint16_t h = ot_f32_to_f16(1.0f / 64);
                memcpy(wq + bl * 34, &h, 2);
                for (j = 0; j < 32; j++) {
                    int8_t v = (int8_t)lrintf(w[bl * 32 + (size_t)j] * 127);
                    wq[bl * 34 + 2 + (size_t)j] = (uint8_t)v;
                    w[bl * 32 + (size_t)j] = (float)v / 64;
                }
            }
        } else if (glc_dtype_size(c->w) == 0) { /* the test references' quantizer */
            wq = malloc((size_t)n * glc_dtype_row_bytes(c->w, k));
            ref_quantize(c->w, w, (size_t)(n * k), wq);
            ref_dequantize(c->w, wq, (size_t)(n * k), w);
        } else if (c->w == GLC_DTYPE_F16 || c->w == GLC_DTYPE_BF16) {
            ot_round(c->w, w, (size_t)(n * k));
        }
        for (p = 0; p < nplan; p++) {
            if (!pl[p])
                continue;
            if (wq)
                assert_int_equal(glc_plan_set_param_typed(pl[p], "w", wq,
                                                          (size_t)n * glc_dtype_row_bytes(c->w, k),
                                                          c->w),
                                 GLC_OK);
            else
                assert_int_equal(glc_plan_set_param(pl[p], "w", w, (size_t)(n * k)), GLC_OK);
            if (c->bias)
                assert_int_equal(glc_plan_set_param(pl[p], "b", b, (size_t)n), GLC_OK);
            if (c->norm)
                assert_int_equal(glc_plan_set_param(pl[p], "wn", wn, (size_t)k), GLC_OK);
        }
        for (q = 0; q < 5; q++)
            y[q] = malloc((size_t)(tm * n) * 4);
        for (q = 0; q < 4; q++)
            pp[q] = malloc((size_t)(tm * np) * 4);
        for (t = tm; t >= 1; t -= 2) {
            glc_plan_var v = {"T", t};
            int64_t rn = c->extra == 2 ? n : t * n;
            ot_fill(&seed, x, (size_t)(t * k), -1.0f, 1.0f);
            ot_fill(&seed, r, (size_t)rn, -2.0f, 2.0f);
            for (p = 0; p < nplan; p++) {
                glc_plan_input in[2] = {{"x", x, (size_t)(t * k)}, {"r", r, (size_t)rn}};
                glc_plan_output out[2] = {{"y", y[p < 2 ? p : p + 1], (size_t)(t * n)},
                                          {"p", pp[p], (size_t)(t * np)}};
                if (!pl[p])
                    continue;
                assert_int_equal(glc_plan_run_with_vars(pl[p], &v, tm > 1, in, 2, out,
                                                        c->extra == 1 || c->extra == 3 ? 2 : 1),
                                 GLC_OK);
            }
            if (c->norm)
                ref_rms_norm(x, t, k, wn, 1e-5f, xn);
            else
                memcpy(xn, x, (size_t)(t * k) * sizeof *xn);
            for (i = 0; i < t; i++)
                for (j = 0; j < n; j++) {
                    double s = 0;
                    for (q = 0; q < k; q++)
                        s += xn[i * k + q] * w[j * k + q];
                    if (c->bias)
                        s += b[j];
                    s = ref_act(c->act, s, 1.0, 0.0);
                    y[2][i * n + j] = (float)(r[(c->extra == 2 ? 0 : i * n) + j] + s);
                }
            snprintf(what, sizeof what, "case %zu, T %lld: fused vs unfused", ci, (long long)t);
            /* the norm prologue sums in another order than the norm's kernel;
             * two plans' f32 sums of K terms in different orders differ by
             * an NMSE of about eps^2 K / 12 (eps 2^-23: K 120001 gave up to
             * 1.7e-11 on the H100) */
            ot_check(what, y[0], y[1], (size_t)(t * n), order_nmse(c));
            snprintf(what, sizeof what, "case %zu, T %lld: fused vs reference", ci, (long long)t);
            ot_check(what, y[0], y[2], (size_t)(t * n), 1e-9);
            snprintf(what, sizeof what, "case %zu, T %lld: K parts vs reference", ci, (long long)t);
            if (pl[2])
                ot_check(what, y[3], y[2], (size_t)(t * n), 1e-9);
            snprintf(what, sizeof what, "case %zu, T %lld: LK or VSG vs reference", ci,
                     (long long)t);
            if (pl[3])
                ot_check(what, y[4], y[2], (size_t)(t * n), 1e-9);
            if (c->extra == 1 || c->extra == 3)
                ot_check("p", pp[0], pp[1], (size_t)(t * np), order_nmse(c));
            if (tm == 1)
                break;
        }
        for (q = 0; q < 5; q++)
            free(y[q]);
        for (q = 0; q < 4; q++)
            free(pp[q]);
        free(x);
        free(r);
        free(w);
        free(b);
        free(wn);
        free(xn);
        free(wq);
        glc_plan_destroy(pl[0]);
        glc_plan_destroy(pl[1]);
        glc_plan_destroy(pl[2]);
        glc_plan_destroy(pl[3]);
        glc_device_destroy(dev);
    }
    free(dump);
    assert_true(lk > 0);
    assert_true(sgs || vsg > 0);
}

/* One norm, several readers (mm_norm): rms_norm(x, wn) read by R decode
 * products whose weights may differ in type (so the qkv pack leaves them
 * apart, as a Q4_K_M file's Q, K and V), each with an N of its own; every
 * reader takes the prologue and the norm's dispatch goes, unless R is past
 * NORM_MAX_READERS (4) or the norm has another reader (an add: the norm
 * stays, and no product takes it). Seeded cases against GLC_COMPILE_NO_FUSE
 * and a double reference, T a variable run at every value. */
static void test_mm_norm_readers(void **state)
{
    static const glc_dtype wt[] = {GLC_DTYPE_Q4_K, GLC_DTYPE_Q6_K, GLC_DTYPE_Q8_0, GLC_DTYPE_F16,
                                   GLC_DTYPE_F32,  GLC_DTYPE_Q5_0, GLC_DTYPE_Q4_0};
    int ci;
    (void)state;
    for (ci = 0; ci < 8; ci++) {
        uint64_t seed = 977 + (uint64_t)ci;
        int nr = ci < 5 ? ci + 1 : ci == 5 ? 5 : 3, other = ci == 6 || ci == 7, r, p, j;
        int64_t k = 256, tmax = ci % 2 ? 4 : 1, n[5], t, i, q, xs[2];
        float *x = malloc((size_t)(tmax * k) * 4), *wn = malloc((size_t)k * 4), *w[5], *y[5][2];
        float *xn = malloc((size_t)(tmax * k) * sizeof *xn);
        uint8_t *wq[5];
        glc_device *dev = tu_device(NULL);
        glc_device_info info;
        glc_plan *pl[3] = {NULL, NULL, NULL};
        glc_plan_info fi, pi;
        glc_dtype dt[5];
        int expect;
        for (p = 0; p < 2; p++) {
            glc_graph *g;
            glc_compile_desc cd = {p ? GLC_COMPILE_NO_FUSE : 0};
            glc_matmul_desc nt = {1};
            glc_tensor xt, nm;
            assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
            xs[0] = tmax == 1 ? 1 : glc_graph_var(g, "T", 1, tmax);
            xs[1] = k;
            xt = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
            nm = glc_rms_norm(g, xt, glc_graph_param(g, "wn", GLC_DTYPE_F32, 1, &k), 1e-5f);
            for (r = 0; r < nr; r++) {
                char name[8];
                int64_t ws[2];
                glc_tensor wp;
                dt[r] = wt[(ci + r) % 7];
                n[r] = 5 + 3 * r + ci % 3;
                ws[0] = n[r];
                ws[1] = k;
                snprintf(name, sizeof name, "w%d", r);
                wp = glc_graph_param(g, name, dt[r], 2, ws);
                snprintf(name, sizeof name, "y%d", r);
                glc_graph_output(g, name, glc_dtype_size(dt[r]) == 0
                                              ? glc_matmul_q(g, nm, wp, glc_none())
                                              : glc_matmul(g, nm, wp, glc_none(), &nt));
            }
            if (other) /* another reader: an add of the norm */
                glc_graph_output(g, "z", glc_add(g, nm, xt));
            if (glc_graph_compile(g, &cd, &pl[p]) != GLC_OK)
                fail_msg("case %d: compile: %s", ci, glc_device_errmsg(dev));
            glc_graph_destroy(g);
        }
        assert_int_equal(glc_plan_stats(pl[0], &fi), GLC_OK);
        assert_int_equal(glc_plan_stats(pl[1], &pi), GLC_OK);
        assert_int_equal(glc_device_get_info(dev, &info), GLC_OK);
        expect = nr <= 4 && !other && info.limits.max_ssbo_blocks >= 6;
        if ((int)fi.fused != (expect ? nr : 0) || (int)(pi.dispatches - fi.dispatches) != expect)
            fail_msg("case %d (%d readers%s): fused %u, %u -> %u dispatches", ci, nr,
                     other ? " and an add" : "", fi.fused, pi.dispatches, fi.dispatches);
        ot_fill(&seed, wn, (size_t)k, 0.5f, 1.5f);
        for (r = 0; r < nr; r++) {
            size_t bytes = (size_t)n[r] * glc_dtype_row_bytes(dt[r], k);
            char name[8];
            w[r] = malloc((size_t)(n[r] * k) * 4);
            wq[r] = malloc(bytes);
            ot_fill(&seed, w[r], (size_t)(n[r] * k), -1.0f, 1.0f);
            if (glc_dtype_size(dt[r]) == 0) {
                ref_quantize(dt[r], w[r], (size_t)(n[r] * k), wq[r]);
                ref_dequantize(dt[r], wq[r], (size_t)(n[r] * k), w[r]);
            } else {
                ot_round(dt[r], w[r], (size_t)(n[r] * k));
                assert_int_equal(glc_dtype_from_f32(dt[r], w[r], n[r] * k, wq[r]), GLC_OK);
            }
            snprintf(name, sizeof name, "w%d", r);
            for (p = 0; p < 2; p++)
                assert_int_equal(glc_plan_set_param_typed(pl[p], name, wq[r], bytes, dt[r]), GLC_OK);
            y[r][0] = malloc((size_t)(tmax * n[r]) * 4);
            y[r][1] = malloc((size_t)(tmax * n[r]) * 4);
        }
        for (p = 0; p < 2; p++)
            assert_int_equal(glc_plan_set_param(pl[p], "wn", wn, (size_t)k), GLC_OK);
        for (t = 1; t <= tmax; t++) {
            glc_plan_var v = {"T", t};
            glc_plan_output out[5];
            glc_plan_input in = {"x", x, (size_t)(t * k)};
            char names[5][8];
            ot_fill(&seed, x, (size_t)(t * k), -1.0f, 1.0f);
            for (p = 0; p < 2; p++) {
                for (r = 0; r < nr; r++) {
                    snprintf(names[r], sizeof names[r], "y%d", r);
                    out[r].name = names[r];
                    out[r].data = y[r][p];
                    out[r].count = (size_t)(t * n[r]);
                }
                assert_int_equal(glc_plan_run_with_vars(pl[p], &v, tmax > 1, &in, 1, out, nr),
                                 GLC_OK);
            }
            ref_rms_norm(x, t, k, wn, 1e-5f, xn);
            for (r = 0; r < nr; r++) {
                float *want = malloc((size_t)(t * n[r]) * 4);
                for (i = 0; i < t; i++)
                    for (j = 0; j < n[r]; j++) {
                        double s = 0;
                        for (q = 0; q < k; q++)
                            s += xn[i * k + q] * w[r][j * k + q];
                        want[i * n[r] + j] = (float)s;
                    }
                ot_check("fused vs unfused", y[r][0], y[r][1], (size_t)(t * n[r]), 1e-10);
                ot_check("fused vs reference", y[r][0], want, (size_t)(t * n[r]), 1e-9);
                free(want);
            }
        }
        for (r = 0; r < nr; r++) {
            free(w[r]);
            free(wq[r]);
            free(y[r][0]);
            free(y[r][1]);
        }
        free(x);
        free(wn);
        free(xn);
        glc_plan_destroy(pl[0]);
        glc_plan_destroy(pl[1]);
        glc_device_destroy(dev);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mm_res),
        cmocka_unit_test(test_mm_norm_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
