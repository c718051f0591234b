/*
 * Params larger than the device's buffers (src/core/graph_split.c): the
 * device's max_ssbo_size is lowered to a few KiB so that small params take
 * the path a 262 MB embedding takes on llvmpipe's 128 MiB. Generated cases
 * (seeded: dtype, rows, width, pieces, bias, transposition, T at every
 * value of its variable, fused and not) against a plain C reference in
 * double: get_rows of a split table, matmul / matmul_q over a split weight
 * (transposed: pieces of the output; not: pieces of K), the table and the
 * weight one tensor (tied embeddings), a second plan sharing the pieces.
 * Plus: set_param scatters and checks the whole size, a missing set names
 * the param, a piece is not settable by name, a taken piece name is
 * refused, and a param that would take more than 64 pieces is refused as
 * too large.
 */
#include "testutil.h"

#include "device.h" /* the buffer limit, lowered */
#include "optest.h"
#include "ref_quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT 8192u /* bytes a binding may take in these tests */

static int quantized(glc_dtype t) { return t == GLC_DTYPE_Q8_0 || t == GLC_DTYPE_Q4_0; }

/* Random values for w (n x k), stored as dt: the bytes the plan gets
 * (returned, *bytes) and w rewritten with the values they hold. */
static void *store(glc_dtype dt, float *w, int64_t n, int64_t k, size_t *bytes)
{
    size_t m = (size_t)(n * k), i;
    void *out;
    *bytes = glc_dtype_row_bytes(dt, k) * (size_t)n;
    out = malloc(*bytes);
    assert_non_null(out);
    if (dt == GLC_DTYPE_Q8_0 || dt == GLC_DTYPE_Q4_0) {
        (dt == GLC_DTYPE_Q8_0 ? ref_quantize_q8_0 : ref_quantize_q4_0)(w, m, out);
        (dt == GLC_DTYPE_Q8_0 ? ref_dequantize_q8_0 : ref_dequantize_q4_0)(out, m, w);
    } else if (dt == GLC_DTYPE_F16) {
        uint16_t *h = out;
        for (i = 0; i < m; i++) {
            h[i] = ot_f32_to_f16(w[i]);
            w[i] = ot_f16_to_f32(h[i]);
        }
    } else {
        memcpy(out, w, m * 4);
    }
    return out;
}

typedef struct scase {
    glc_dtype dt;
    int64_t n, k; /* the param [n, k] */
    int64_t tmax; /* rows of x: a variable T in [1, tmax] */
    int nt, bias, rows; /* transposed product, a bias, get_rows from the same param */
} scase;

static glc_plan *build(glc_device *dev, const scase *c, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_matmul_desc md;
    int64_t t, s[2], nout = c->nt ? c->n : c->k, kin = c->nt ? c->k : c->n;
    glc_tensor x, w, b, y;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    t = glc_graph_var(g, "T", 1, c->tmax);
    s[0] = t;
    s[1] = kin;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, s);
    s[0] = c->n;
    s[1] = c->k;
    w = glc_graph_param(g, "w", c->dt, 2, s);
    b = c->bias ? glc_graph_param(g, "b", GLC_DTYPE_F32, 1, &nout) : glc_none();
    md.transpose_b = c->nt;
    y = quantized(c->dt) ? glc_matmul_q(g, x, w, b) : glc_matmul(g, x, w, b, &md);
    glc_graph_output(g, "y", y);
    if (c->rows) {
        glc_tensor ids = glc_graph_input(g, "ids", GLC_DTYPE_I32, 1, &t);
        glc_graph_output(g, "r", glc_get_rows(g, w, ids));
    }
    p = tu_compile(dev, g, flags);
    return p;
}

static double nmse(const float *got, const double *want, size_t n)
{
    double e = 0, s = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        e += (got[i] - want[i]) * (got[i] - want[i]);
        s += want[i] * want[i];
    }
    return e / (s > 0 ? s : 1);
}

static void run_case(glc_device *dev, const scase *c, uint64_t *seed)
{
    int64_t nout = c->nt ? c->n : c->k, kin = c->nt ? c->k : c->n, t, i, j, q;
    float *w = malloc((size_t)(c->n * c->k) * 4), *bias = malloc((size_t)nout * 4);
    float *x = malloc((size_t)(c->tmax * kin) * 4), *y = malloc((size_t)(c->tmax * nout) * 4);
    float *r = malloc((size_t)(c->tmax * c->k) * 4);
    double *want = malloc((size_t)(c->tmax * nout) * sizeof *want);
    int32_t *ids = malloc((size_t)c->tmax * 4);
    size_t bytes;
    void *stored;
    glc_plan *pl[2];
    int p;
    ot_fill(seed, w, (size_t)(c->n * c->k), -1.0f, 1.0f);
    ot_fill(seed, bias, (size_t)nout, -1.0f, 1.0f);
    stored = store(c->dt, w, c->n, c->k, &bytes);
    assert_true(bytes > LIMIT); /* the case exercises the split */
    pl[0] = build(dev, c, 0);
    pl[1] = build(dev, c, GLC_COMPILE_NO_FUSE);
    for (p = 0; p < 2; p++) {
        assert_int_equal(glc_plan_set_param_typed(pl[p], "w", stored, bytes, c->dt), GLC_OK);
        if (c->bias)
            assert_int_equal(glc_plan_set_param(pl[p], "b", bias, (size_t)nout), GLC_OK);
    }
    for (t = c->tmax; t >= 1; t--) {
        glc_plan_var v = {"T", t};
        ot_fill(seed, x, (size_t)(t * kin), -1.0f, 1.0f);
        for (i = 0; i < t; i++) /* ids over every piece, and one past the end (zeros) */
            ids[i] = i == 0 ? (int32_t)c->n : (int32_t)(tu_rand(seed) % (uint64_t)c->n);
        for (i = 0; i < t; i++)
            for (j = 0; j < nout; j++) {
                double s = c->bias ? bias[j] : 0;
                for (q = 0; q < kin; q++)
                    s += (double)x[i * kin + q] * (c->nt ? w[j * c->k + q] : w[q * c->k + j]);
                want[i * nout + j] = s;
            }
        for (p = 0; p < 2; p++) {
            glc_plan_input in[2] = {{"x", x, (size_t)(t * kin)}, {"ids", ids, (size_t)t}};
            glc_plan_output out[2] = {{"y", y, (size_t)(t * nout)}, {"r", r, (size_t)(t * c->k)}};
            double e;
            memset(r, 0x7f, (size_t)(t * c->k) * 4);
            assert_int_equal(glc_plan_run_with_vars(pl[p], &v, 1, in, 1 + c->rows, out, 1 + c->rows),
                             GLC_OK);
            if ((e = nmse(y, want, (size_t)(t * nout))) > 1e-9 * (c->dt == GLC_DTYPE_F32 ? 1 : 1e3))
                fail_msg("%s [%lld, %lld] nt %d bias %d T %lld %s: nmse %g", glc_dtype_name(c->dt),
                         (long long)c->n, (long long)c->k, c->nt, c->bias, (long long)t,
                         p ? "unfused" : "fused", e);
            for (i = 0; c->rows && i < t; i++)
                for (j = 0; j < c->k; j++) {
                    float want_r = ids[i] < c->n ? w[ids[i] * c->k + j] : 0.0f;
                    if (r[i * c->k + j] != want_r)
                        fail_msg("%s get_rows T %lld row %lld (id %d) col %lld: %g, want %g",
                                 glc_dtype_name(c->dt), (long long)t, (long long)i, ids[i],
                                 (long long)j, r[i * c->k + j], want_r);
                }
        }
    }
    glc_plan_destroy(pl[0]);
    glc_plan_destroy(pl[1]);
    free(w);
    free(bias);
    free(x);
    free(y);
    free(r);
    free(want);
    free(ids);
    free(stored);
}

static glc_device *small_device(void)
{
    glc_device *dev = tu_device(NULL);
    dev->info.limits.max_ssbo_size = LIMIT;
    return dev;
}

static void test_generated(void **state)
{
    static const glc_dtype dts[] = {GLC_DTYPE_F32, GLC_DTYPE_F16, GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_0};
    glc_device *dev = small_device();
    uint64_t seed = 20261127;
    int i;
    (void)state;
    for (i = 0; i < 16; i++) {
        scase c;
        int64_t pieces = (int64_t)(2 + tu_rand(&seed) % 3), blk;
        c.dt = dts[i % 4];
        blk = quantized(c.dt) ? 32 : 1;
        c.tmax = (int64_t)(1 + tu_rand(&seed) % 3);
        /* x, y and the pieces' products fit a binding: n <= LIMIT / (4 T);
         * the param takes 2 to 4 bindings' worth: k from n */
        c.n = (int64_t)(LIMIT / (4 * c.tmax)) - (int64_t)(tu_rand(&seed) % 64) * 2 - 1;
        c.k = (pieces * LIMIT / c.n * 32 / (int64_t)glc_dtype_row_bytes(c.dt, 32) + blk) / blk * blk;
        c.nt = quantized(c.dt) || (tu_rand(&seed) & 1);
        c.bias = (int)(tu_rand(&seed) & 1);
        c.rows = (int)(tu_rand(&seed) % 3 != 0) && c.nt;
        run_case(dev, &c, &seed);
    }
    glc_device_destroy(dev);
}

/* The pieces in the plan, whole-size checks, names, sharing. */
static void test_pieces(void **state)
{
    glc_device *dev = small_device();
    scase c = {GLC_DTYPE_F32, 101, 40, 2, 1, 0, 0}; /* 16160 bytes: 2 pieces of 51 and 50 rows */
    glc_plan *a = build(dev, &c, 0), *b = build(dev, &c, 0);
    float *w = calloc(101 * 40, 4), x[80], y[202];
    glc_plan_input in[1] = {{"x", x, 80}};
    glc_plan_output out[1] = {{"y", y, 202}};
    glc_graph *g;
    int64_t s[2] = {101, 40};
    glc_tensor p0, wt;
    (void)state;
    assert_non_null(w);
    /* never set: the message names the param, not a piece */
    assert_int_equal(glc_plan_run(a, in, 1, out, 1), GLC_ERR_STATE);
    tu_assert_contains(glc_device_errmsg(dev), "param \"w\" was never set");
    /* the whole size, and only the param's own name */
    assert_int_equal(glc_plan_set_param(a, "w", w, 101 * 40 - 1), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_plan_set_param(a, "w#0", w, 51 * 40), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "no param \"w#0\"");
    w[100 * 40 + 3] = 2.0f; /* a value in the last piece */
    x[3] = 1.0f;
    assert_int_equal(glc_plan_set_param(a, "w", w, 101 * 40), GLC_OK);
    /* b shares a's pieces: a value set through a is what b computes with */
    assert_int_equal(glc_plan_share(b, a, GLC_SHARE_PARAMS), GLC_OK);
    memset(x, 0, sizeof x);
    x[3] = 1.0f;
    {
        glc_plan_var v = {"T", 1};
        glc_plan_input in1[1] = {{"x", x, 40}};
        glc_plan_output out1[1] = {{"y", y, 101}};
        assert_int_equal(glc_plan_run_with_vars(b, &v, 1, in1, 1, out1, 1), GLC_OK);
        assert_true(y[100] == 2.0f && y[99] == 0.0f && y[0] == 0.0f);
    }
    glc_plan_destroy(a);
    glc_plan_destroy(b);
    /* a user's param already named like a piece */
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    p0 = glc_graph_param(g, "w#1", GLC_DTYPE_F32, 2, s);
    wt = glc_graph_param(g, "w", GLC_DTYPE_F32, 2, s);
    (void)p0;
    {
        glc_matmul_desc md = {1};
        int64_t xs[2] = {1, 40};
        glc_tensor xi = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
        glc_graph_output(g, "y", glc_matmul(g, xi, wt, glc_none(), &md));
    }
    {
        glc_compile_desc cd;
        glc_plan *p = NULL;
        memset(&cd, 0, sizeof cd);
        assert_int_equal(glc_graph_compile(g, &cd, &p), GLC_ERR_INVALID_ARG);
        tu_assert_contains(glc_device_errmsg(dev), "its piece's name \"w#1\" is taken");
    }
    glc_graph_destroy(g);
    /* past 64 pieces (here 100 of 2 rows): not split, refused as too large */
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    {
        glc_matmul_desc md = {1};
        int64_t ws[2] = {200, 1024}, xs[2] = {1, 1024};
        glc_tensor xi = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
        glc_compile_desc cd;
        glc_plan *p = NULL;
        wt = glc_graph_param(g, "big", GLC_DTYPE_F32, 2, ws);
        glc_graph_output(g, "y", glc_matmul(g, xi, wt, glc_none(), &md));
        memset(&cd, 0, sizeof cd);
        assert_int_equal(glc_graph_compile(g, &cd, &p), GLC_ERR_BOUNDS);
        tu_assert_contains(glc_device_errmsg(dev), "param \"big\" has 819200 bytes");
    }
    glc_graph_destroy(g);
    free(w);
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
