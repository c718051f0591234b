/*
 * matmul_q at prefill shapes (src/core/op_quant.c's plan_dense): from 16
 * rows of a on GPUs matmul_q runs as the dense matmul, whose kernels decode
 * the blocks quad by quad as they load them (glsl/matmul.comp, QUANT).
 * llvmpipe keeps the row variant unless GLC_MATMUL forces a dense variant,
 * which these tests do (tiled64, tiled128, direct) to run the path here.
 * Generated cases over every GGML block type (random blocks: every quant
 * bit, finite scales of either sign), odd N, 16 to 64 rows, with and
 * without a bias, against a plain C reference in double (the blocks
 * decoded by tests/ref); plus what the plans fuse at prefill: a residual
 * (mm_res) and the Q/K/V pack (its segments), and a forced small loop cap
 * (the dense K split, its partials in the scratch). The plan listing
 * shows the dense kernel (matmul; a get_rows pass before it for Q6_K,
 * decoded first) where the path fires, and not below 16 rows or on the
 * default llvmpipe device.
 */
#include "testutil.h"

#include "device.h" /* GLC_MATMUL and the loop cap, set on the device */
#include "env.h"
#include "optest.h"
#include "ref_quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const glc_dtype types[] = {GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_0, GLC_DTYPE_Q4_1, GLC_DTYPE_Q5_0,
                                  GLC_DTYPE_Q5_1, GLC_DTYPE_Q4_K, GLC_DTYPE_Q5_K, GLC_DTYPE_Q6_K};

static void append(void *user, const char *text)
{
    char *buf = user;
    size_t n = strlen(buf);
    snprintf(buf + n, 65536 - n, "%s", text);
}

typedef struct qcase {
    glc_dtype dt;
    int64_t m, n, k;
    int bias, res, qkv; /* a bias; a residual added (fused); three projections of a (packed) */
} qcase;

static glc_plan *build(glc_device *dev, const qcase *c, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    int64_t xs[2] = {c->m, c->k}, ws[2] = {c->n, c->k}, os[2] = {c->m, c->n};
    glc_tensor x, y;
    int j;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    for (j = 0; j < (c->qkv ? 3 : 1); j++) {
        char wn[8], bn[8], yn[8];
        snprintf(wn, sizeof wn, "w%d", j);
        snprintf(bn, sizeof bn, "b%d", j);
        snprintf(yn, sizeof yn, "y%d", j);
        y = glc_matmul_q(g, x, glc_graph_param(g, wn, c->dt, 2, ws),
                         c->bias ? glc_graph_param(g, bn, GLC_DTYPE_F32, 1, &c->n) : glc_none());
        if (c->res)
            y = glc_add(g, glc_graph_input(g, "r", GLC_DTYPE_F32, 2, os), y);
        glc_graph_output(g, yn, y);
    }
    p = tu_compile(dev, g, flags);
    return p;
}

/* Runs c on dev: every output against the reference; *fired: whether the
 * plan runs the dense kernel (matmul in its listing, not matmul_q). */
static void run_case(glc_device *dev, const qcase *c, uint64_t *seed, int *fired)
{
    size_t wb = glc_dtype_row_bytes(c->dt, c->k) * (size_t)c->n, mn = (size_t)(c->m * c->n);
    uint8_t *w[3];
    float *wf = malloc((size_t)(c->n * c->k) * 4 * 3), *x = malloc((size_t)(c->m * c->k) * 4);
    float *b = malloc((size_t)c->n * 4 * 3), *r = malloc(mn * 4), *y = malloc(mn * 4);
    double *want = malloc(mn * sizeof *want);
    char *dump = calloc(65536, 1);
    glc_plan *pl;
    int j, nw = c->qkv ? 3 : 1, f, decoded;
    int64_t i, jj, q;
    for (f = 0; f < 2; f++) { /* fused and not */
        pl = build(dev, c, f ? 0 : GLC_COMPILE_NO_FUSE);
        dump[0] = '\0';
        assert_int_equal(glc_plan_dump(pl, 0, append, dump), GLC_OK);
        *fired = strstr(dump, ": matmul (") != NULL;
        /* a decode pass first: Q6_K whose weights as f16 fit a binding
         * only (op_quant.c's decode_first) */
        decoded = *fired && c->dt == GLC_DTYPE_Q6_K &&
                  (uint64_t)(c->n * c->k) * 2 <= dev->info.limits.max_ssbo_size;
        assert_int_equal(strstr(dump, "get_rows") != NULL, decoded);
        assert_int_equal(*fired, strstr(dump, ": matmul_q (") == NULL);
        ot_fill(seed, x, (size_t)(c->m * c->k), -1.0f, 1.0f);
        ot_fill(seed, r, mn, -1.0f, 1.0f);
        ot_fill(seed, b, (size_t)c->n * 3, -1.0f, 1.0f);
        for (j = 0; j < nw; j++) {
            char wn[8], bn[8];
            w[j] = malloc(wb);
            ref_random_blocks(c->dt, (size_t)(c->n * c->k), seed, w[j]);
            ref_dequantize(c->dt, w[j], (size_t)(c->n * c->k), wf + (size_t)j * (size_t)(c->n * c->k));
            if (decoded) /* what the decode pass writes: the weights as f16 */
                ot_round(GLC_DTYPE_F16, wf + (size_t)j * (size_t)(c->n * c->k), (size_t)(c->n * c->k));
            snprintf(wn, sizeof wn, "w%d", j);
            snprintf(bn, sizeof bn, "b%d", j);
            assert_int_equal(glc_plan_set_param_typed(pl, wn, w[j], wb, c->dt), GLC_OK);
            if (c->bias)
                assert_int_equal(glc_plan_set_param(pl, bn, b + j * c->n, (size_t)c->n), GLC_OK);
        }
        for (j = 0; j < nw; j++) {
            glc_plan_input in[2] = {{"x", x, (size_t)(c->m * c->k)}, {"r", r, mn}};
            char yn[8];
            glc_plan_output out[1] = {{yn, y, mn}};
            const float *wj = wf + (size_t)j * (size_t)(c->n * c->k);
            double e = 0, s = 0;
            snprintf(yn, sizeof yn, "y%d", j);
            assert_int_equal(glc_plan_run(pl, in, 1 + c->res, out, 1), GLC_OK);
            for (i = 0; i < c->m; i++)
                for (jj = 0; jj < c->n; jj++) {
                    double acc = (c->bias ? b[j * c->n + jj] : 0) + (c->res ? r[i * c->n + jj] : 0);
                    for (q = 0; q < c->k; q++)
                        acc += (double)x[i * c->k + q] * wj[jj * c->k + q];
                    want[i * c->n + jj] = acc;
                }
            for (i = 0; i < (int64_t)mn; i++) {
                e += (y[i] - want[i]) * (y[i] - want[i]);
                s += want[i] * want[i];
            }
            if (!(e / s < 1e-10))
                fail_msg("%s M %lld N %lld K %lld bias %d res %d qkv %d output %d %s: nmse %g (%s)",
                         glc_dtype_name(c->dt), (long long)c->m, (long long)c->n, (long long)c->k,
                         c->bias, c->res, c->qkv, j, f ? "fused" : "unfused", e / s,
                         *fired ? "dense kernel" : "matmul_q kernel");
        }
        for (j = 0; j < nw; j++)
            free(w[j]);
        glc_plan_destroy(pl);
    }
    free(wf);
    free(x);
    free(b);
    free(r);
    free(y);
    free(want);
    free(dump);
}

static glc_device *device_with(int matmul, uint32_t cap)
{
    glc_device *dev = tu_device(NULL);
    dev->env.matmul = matmul;
    if (cap)
        dev->info.limits.max_loop_iterations = cap;
    return dev;
}

static void test_generated(void **state)
{
    static const int variants[] = {GLC__MATMUL_TILED64, GLC__MATMUL_TILED128, GLC__MATMUL_DIRECT};
    uint64_t seed = 16;
    size_t t;
    int v, fired;
    (void)state;
    for (v = 0; v < 3; v++) {
        glc_device *dev = device_with(variants[v], 0);
        for (t = 0; t < sizeof types / sizeof types[0]; t++) {
            qcase c;
            c.dt = types[t];
            c.k = glc_dtype_row_bytes(c.dt, 32) ? 32 * (int64_t)(1 + tu_rand(&seed) % 12)
                                                : 256 * (int64_t)(1 + tu_rand(&seed) % 2);
            c.m = 16 + (int64_t)(tu_rand(&seed) % 49);
            c.n = 2 * (int64_t)(tu_rand(&seed) % 40) + 1;
            c.bias = (int)(tu_rand(&seed) & 1);
            c.res = c.qkv = 0;
            run_case(dev, &c, &seed, &fired);
            if (!fired)
                fail_msg("%s M %lld: the dense kernel did not run", glc_dtype_name(c.dt),
                         (long long)c.m);
        }
        glc_device_destroy(dev);
    }
}

/* What prefill plans fuse, the dense K split, and where the path stays off */
static void test_fused_and_limits(void **state)
{
    uint64_t seed = 61;
    int fired;
    glc_device *dev = device_with(GLC__MATMUL_TILED64, 0), *capped;
    qcase c = {GLC_DTYPE_Q4_K, 24, 96, 512, 1, 1, 0};
    (void)state;
    run_case(dev, &c, &seed, &fired); /* a residual */
    assert_true(fired);
    c.dt = GLC_DTYPE_Q6_K;
    c.res = 0;
    c.qkv = 1; /* the Q/K/V pack: segments */
    run_case(dev, &c, &seed, &fired);
    assert_true(fired);
    {
        /* Q6_K past a binding as f16: decoded in the tiles, both dense kernels */
        int v;
        for (v = 0; v < 2; v++) {
            glc_device *small = device_with(v ? GLC__MATMUL_DIRECT : GLC__MATMUL_TILED64, 0);
            qcase q6 = {GLC_DTYPE_Q6_K, 16, 37, 768, 1, 0, 0};
            /* 37 x 768 f16: 56832 bytes; x, 16 x 768 f32: 49152 */
            small->info.limits.max_ssbo_size = 53248;
            run_case(small, &q6, &seed, &fired);
            assert_true(fired);
            glc_device_destroy(small);
        }
    }
    c.dt = GLC_DTYPE_Q8_0;
    c.m = 15; /* below 16 rows: the blocks kernel */
    c.qkv = 0;
    run_case(dev, &c, &seed, &fired);
    assert_false(fired);
    glc_device_destroy(dev);
    /* a loop cap that splits the dense K loop: partials in the scratch */
    capped = device_with(GLC__MATMUL_TILED64, 200);
    c.dt = GLC_DTYPE_Q5_K;
    c.m = 40;
    c.k = 1024;
    run_case(capped, &c, &seed, &fired);
    assert_true(fired);
    glc_device_destroy(capped);
    /* the device's own choice: the row variant on llvmpipe, dense on GPUs
     * (GLC_MATMUL: dense where it forces a dense kernel, not where it
     * forces matvec) */
    dev = tu_device(NULL);
    c.m = 32;
    run_case(dev, &c, &seed, &fired);
    {
        int mm = dev->env.matmul;
        assert_int_equal(fired, mm == GLC__MATMUL_TILED64 || mm == GLC__MATMUL_TILED128 ||
                                    mm == GLC__MATMUL_DIRECT ||
                                    (mm == GLC__MATMUL_AUTO && !strstr(dev->renderer, "llvmpipe")));
    }
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_fused_and_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
