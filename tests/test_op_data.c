/*
 * Data movement beyond the case table of test_ops.c (which runs copy,
 * slice, concat, get_rows and set_rows over their shapes, axes and dtypes,
 * exact, eagerly and through plans): a folded grid for every kernel, a
 * real grid past 65535 groups (2^23 one-element f16 rows), a sequence in
 * one RECORDED session, a graph chaining get_rows, copy, slice and concat,
 * and the errors.
 */
#include "testutil.h"

#include "device.h"
#include "optable.h"
#include "texel_cases.h"
#include "ref_data.h"
#include "ref_quant.h"

#define F32 GLC_DTYPE_F32
#define F16 GLC_DTYPE_F16
#define BF16 GLC_DTYPE_BF16

static glc_device *open_dev(int min)
{
    glc_device_desc d = tu_desc(NULL);
    d.flags = min ? GLC_DEVICE_LIMITS_MIN : 0;
    return tu_device_desc(&d);
}

/* Bit-exact comparison (so -0 vs 0 and NaN payloads count too). */
static void check_exact(const char *what, const float *got, const float *ref, size_t n)
{
    size_t i, bad = 0, first = 0;
    for (i = 0; i < n; i++)
        if (memcmp(&got[i], &ref[i], sizeof got[i]) != 0) {
            if (bad < 5)
                fprintf(stderr, "  [%zu] got %.9g ref %.9g\n", i, (double)got[i], (double)ref[i]);
            if (!bad)
                first = i;
            bad++;
        }
    if (bad)
        fail_msg("%s: %zu of %zu elements differ (first at %zu)", what, bad, n, first);
}

static void read_check(const char *what, const ot_tensor *t, const float *ref)
{
    size_t n = (size_t)ot_numel(t->view.rank, t->view.shape);
    float *got = malloc(n * sizeof *got);
    if (!ot_read(t, got))
        fail_msg("%s: a sentinel byte changed", what);
    check_exact(what, got, ref, n);
    free(got);
}

static void must(glc_device *dev, glc_status st, const char *what)
{
    if (st != GLC_OK)
        fail_msg("%s: %s (%s)", what, glc_status_str(st), glc_device_errmsg(dev));
}

/* ---- grids ---- */

/* Every kernel with the group counts clamped tiny, so each grid folds into
 * 2-D and 3-D with surplus groups that must exit: table cases on such a
 * device (default and minimum limits), eagerly and through a plan. */
static void test_folding(void **state)
{
    static const oc_case cases[] = {
        {OC_COPY, {F32}, BF16, {S3(17, 9, 13)}, {0}, {1, 2, 0, 1}, OC_EXACT, 0},
        {OC_COPY, {F16}, F16, {S1(3001)}, {0}, {0}, OC_EXACT, 0},
        {OC_COPY, {F32}, F32, {S2(37, 41)}, {0}, {1, 1, 0}, OC_EXACT, 0},
        {OC_SLICE, {BF16}, F32, {S3(17, 9, 13)}, {0}, {1, 2, 5}, OC_EXACT, 0},
        {OC_CONCAT, {F16, F32}, BF16, {S3(17, 9, 13), S3(17, 4, 13)}, {0}, {1}, OC_EXACT, 0},
        {OC_GET_ROWS, {GLC_DTYPE_Q8_0, GLC_DTYPE_I32}, F32, {S2(40, 64), S1(3001)}, {0}, {0},
         OC_EXACT, 0},
        {OC_GET_ROWS, {F32, GLC_DTYPE_I32}, F16, {S2(40, 3), S1(3001)}, {0}, {0}, OC_EXACT, 0},
        {OC_SET_ROWS, {F32, GLC_DTYPE_I32, F16}, F16, {S2(200, 5), S1(200), S2(211, 5)}, {0}, {0},
         OC_EXACT, 0},
    };
    int min;
    size_t i;
    (void)state;
    for (min = 0; min < 2; min++) {
        glc_device *dev = open_dev(min);
        dev->info.limits.max_group_count[0] = 3;
        dev->info.limits.max_group_count[1] = 2;
        dev->info.limits.max_group_count[2] = 64;
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            oc_run_eager(dev, &cases[i], 66 + i, "folded grid");
            oc_run_graph(dev, &cases[i], 66 + i, "folded grid");
        }
        glc_device_destroy(dev);
    }
}

/* Past 65535 groups of 128 for real: set_rows of 2^23 + 5 one-element
 * f16 rows (one invocation each, every store a lone half-word next to
 * another invocation's), into a cache in scrambled order. */
static void test_big_grid(void **state)
{
    glc_device *dev = open_dev(1);
    int64_t n = (1 << 23) + 5, v = n + 2, sh[2], i;
    uint16_t *src = malloc((size_t)n * 2), *dst = malloc((size_t)v * 2);
    uint16_t *got = malloc((size_t)v * 2);
    int32_t *ids = malloc((size_t)n * 4);
    ot_tensor S, I, D;
    glc_session *s;
    glc_dispatch_stats st;
    uint64_t seed = 77;
    (void)state;
    for (i = 0; i < n; i++) {
        src[i] = (uint16_t)(0x3c00u + (ot_rand(&seed) & 0x3ffu)); /* 1.x, never 0 */
        /* 7919 is prime and v is no multiple of it: distinct ids */
        ids[i] = i % 1000 == 999 ? -1 : (int32_t)((i * 7919 + 5) % v);
    }
    for (i = 0; i < v; i++)
        dst[i] = 0x4000u; /* 2.0: rows not written keep it */
    sh[0] = n;
    sh[1] = 1;
    S = ot_tensor_bytes(dev, GLC_DTYPE_F16, 2, sh, src);
    I = ot_tensor_bytes(dev, GLC_DTYPE_I32, 1, &n, ids);
    sh[0] = v;
    D = ot_tensor_bytes(dev, GLC_DTYPE_F16, 2, sh, dst);
    for (i = 0; i < n; i++)
        if (ids[i] >= 0)
            dst[ids[i]] = src[i];
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    must(dev, glc_op_set_rows(s, S.view, I.view, D.view), "set_rows big grid");
    assert_int_equal(glc_session_finish(s, &st), GLC_OK);
    assert_int_equal(st.dispatches, 1);
    assert_int_equal(st.group_histogram[8], 1); /* 65537 groups: in [4^8, 4^9) */
    if (!ot_read_bytes(&D, got))
        fail_msg("set_rows big grid: a sentinel byte changed");
    for (i = 0; i < v; i++)
        if (got[i] != dst[i])
            fail_msg("set_rows big grid: element %lld is 0x%04x, want 0x%04x", (long long)i,
                     got[i], dst[i]);
    ot_free(&S);
    ot_free(&I);
    ot_free(&D);
    free(src);
    free(dst);
    free(got);
    free(ids);
    glc_device_destroy(dev);
}

/* ---- a sequence ---- */

/* A decode step's data movement in one RECORDED session: new rows
 * converted f32 -> f16, written into a cache at positions, rows of the
 * cache gathered (f16 -> bf16) and joined to another tensor. Each op reads
 * what the one before wrote, so the tracker must put a barrier before each
 * (the byte ranges the ops bind are what it sees). */
static void test_sequence(void **state)
{
    enum { N = 3, D = 24, V = 16, M = 4, E = 8 };
    int64_t ks[2] = {N, D}, cs[2] = {V, D}, ns = N, ms = M, rs[2] = {M, D}, os[2] = {M, E};
    int64_t outs[2] = {M, D + E};
    int32_t ids[N] = {5, 0, 15}, ids2[M] = {15, 5, 7, 0};
    float k[N * D], cache[V * D], other[M * E], idsf[N], ids2f[M], rows[M * D];
    float want[M * (D + E)];
    uint64_t seed = 99;
    int min, i;
    (void)state;
    for (i = 0; i < N; i++)
        idsf[i] = (float)ids[i];
    for (i = 0; i < M; i++)
        ids2f[i] = (float)ids2[i];
    for (min = 0; min < 2; min++) {
        glc_device *dev = open_dev(min);
        ot_tensor K, K16, C, I, I2, R, O, OUT;
        glc_session *s;
        glc_dispatch_stats st;
        ot_fill(&seed, k, N * D, -2.0f, 2.0f);
        ot_fill(&seed, cache, V * D, -2.0f, 2.0f);
        ot_fill(&seed, other, M * E, -2.0f, 2.0f);
        ot_round(F16, cache, V * D);
        ot_round(F16, other, M * E);
        K = ot_tensor_new(dev, F32, 2, ks, k);
        K16 = ot_tensor_new(dev, F16, 2, ks, NULL);
        C = ot_tensor_new(dev, F16, 2, cs, cache);
        I = ot_tensor_new(dev, GLC_DTYPE_I32, 1, &ns, idsf);
        I2 = ot_tensor_new(dev, GLC_DTYPE_I32, 1, &ms, ids2f);
        R = ot_tensor_new(dev, BF16, 2, rs, NULL);
        O = ot_tensor_new(dev, F16, 2, os, other);
        OUT = ot_tensor_new(dev, F32, 2, outs, NULL);
        assert_int_equal(glc_session_begin(dev, GLC_SESSION_RECORDED, &s), GLC_OK);
        must(dev, glc_op_copy(s, K.view, NULL, K16.view), "sequence copy");
        must(dev, glc_op_set_rows(s, K16.view, I.view, C.view), "sequence set_rows");
        must(dev, glc_op_get_rows(s, C.view, I2.view, R.view), "sequence get_rows");
        must(dev, glc_op_concat(s, R.view, O.view, 1, OUT.view), "sequence concat");
        assert_int_equal(glc_session_finish(s, &st), GLC_OK);
        assert_int_equal(st.dispatches, 4);
        assert_int_equal(st.barriers, 3);
        ot_round(F16, k, N * D);
        ref_set_rows(k, N, D, ids, cache, V);
        ref_get_rows(cache, V, D, ids2, M, rows);
        ot_round(BF16, rows, M * D);
        ref_concat(rows, rs, other, os, 2, 1, want);
        read_check("sequence cache", &C, cache);
        read_check("sequence out", &OUT, want);
        ot_free(&K);
        ot_free(&K16);
        ot_free(&C);
        ot_free(&I);
        ot_free(&I2);
        ot_free(&R);
        ot_free(&O);
        ot_free(&OUT);
        glc_device_destroy(dev);
    }
}

/* ---- a graph ---- */

/* emb (Q8_0 param) -> get_rows -> transpose to f16 -> slice -> concat with
 * an input, compiled and run, against the references. */
static void run_graph(glc_device *dev)
{
    enum { V = 10, D = 64, N = 5, C = 3 };
    int64_t es[2] = {V, D}, is[1] = {N}, xs[2] = {32, C}, shape[GLC_MAX_DIMS];
    static const int tr[2] = {1, 0};
    float emb[V * D], x[32 * C], h[N * D], ht[D * N], sl[32 * N], want[32 * (N + C)];
    float got_h[N * D], got_c[32 * (N + C)];
    int32_t ids[N] = {3, 0, 9, 12, 3};
    uint8_t q[V * 68];
    uint64_t seed = 88;
    glc_graph *g;
    glc_plan *p;
    glc_tensor te, ti, tx, th, tt, ts, tc;
    ot_fill(&seed, emb, V * D, -3.0f, 3.0f);
    ot_fill(&seed, x, 32 * C, -3.0f, 3.0f);
    ref_quantize_q8_0(emb, V * D, q);
    ref_dequantize_q8_0(q, V * D, emb);
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    te = glc_graph_param(g, "emb", GLC_DTYPE_Q8_0, 2, es);
    ti = glc_graph_input(g, "ids", GLC_DTYPE_I32, 1, is);
    tx = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    th = glc_get_rows(g, te, ti);
    tt = glc_copy(g, th, tr, GLC_DTYPE_F16);
    ts = glc_slice(g, tt, 0, 16, 32);
    tc = glc_concat(g, ts, tx, -1);
    glc_graph_output(g, "h", th);
    glc_graph_output(g, "c", tc);
    assert_int_equal(glc_graph_status(g), GLC_OK);
    assert_int_equal(glc_tensor_dtype(g, th), GLC_DTYPE_F32);
    assert_int_equal(glc_tensor_dtype(g, tt), GLC_DTYPE_F16);
    assert_int_equal(glc_tensor_dtype(g, tc), GLC_DTYPE_F16);
    assert_int_equal(glc_tensor_shape(g, tc, shape), 2);
    assert_int_equal(shape[0], 32);
    assert_int_equal(shape[1], N + C);
    if (glc_graph_compile(g, NULL, &p) != GLC_OK)
        fail_msg("compile: %s", glc_graph_errmsg(g));
    glc_graph_destroy(g);
    must(dev, glc_plan_set_param_typed(p, "emb", q, sizeof q, GLC_DTYPE_Q8_0), "set emb");
    {
        glc_plan_input in[2] = {{"ids", ids, N}, {"x", x, 32 * C}};
        glc_plan_output out[2] = {{"h", got_h, N * D}, {"c", got_c, 32 * (N + C)}};
        must(dev, glc_plan_run(p, in, 2, out, 2), "graph run");
    }
    ref_get_rows(emb, V, D, ids, N, h);
    ref_permute(h, 2, (const int64_t[]){N, D}, tr, ht);
    ot_round(GLC_DTYPE_F16, ht, D * N);
    ref_slice(ht, 2, (const int64_t[]){D, N}, 0, 16, 32, sl);
    ref_concat(sl, (const int64_t[]){32, N}, x, xs, 2, 1, want);
    ot_round(GLC_DTYPE_F16, want, 32 * (N + C));
    check_exact("graph h", got_h, h, N * D);
    check_exact("graph c", got_c, want, 32 * (N + C));
    glc_plan_destroy(p);
}

static void test_graph(void **state)
{
    int min;
    (void)state;
    for (min = 0; min < 2; min++) {
        glc_device *dev = open_dev(min);
        run_graph(dev);
        glc_device_destroy(dev);
    }
}

/* Builder errors are sticky and name the op and shapes. */
static void test_graph_errors(void **state)
{
    glc_device *dev = tu_device(NULL);
    int64_t s2[2] = {4, 6}, s3[2] = {4, 5};
    static const int bad[2] = {1, 1};
    glc_graph *g;
    glc_tensor a, b;
    (void)state;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, s2);
    b = glc_graph_input(g, "b", GLC_DTYPE_F16, 2, s3);
    assert_true(glc_copy(g, a, bad, 0).id < 0);
    assert_int_equal(glc_graph_status(g), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_graph_errmsg(g),
                        "copy: perm [1, 1] is not a permutation of the 2 dims of x [4, 6] f32");
    assert_true(glc_concat(g, a, b, 0).id < 0); /* sticky: the first error stays */
    tu_assert_contains(glc_graph_errmsg(g), "copy: perm");
    glc_graph_destroy(g);
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, s2);
    assert_true(glc_slice(g, a, 1, 4, 3).id < 0);
    assert_int_equal(glc_graph_status(g), GLC_ERR_BOUNDS);
    assert_string_equal(glc_graph_errmsg(g), "slice: x [4, 6] f32: [4, 4 + 3) is not a non-empty "
                                             "range inside dim 1 (6)");
    glc_graph_destroy(g);
    glc_device_destroy(dev);
}

/* ---- errors ---- */

#define EXPECT(call, status, msg)                                   \
    do {                                                            \
        assert_int_equal((call), (status));                         \
        assert_string_equal(glc_device_errmsg(dev), (msg));         \
    } while (0)

/* get_rows on llvmpipe with the table's words as RGBA32UI texels (f32 rows
 * of whole vec4s, GGML blocks): fixed tables with texels and without, ids
 * outside the table among them, then 24 generated ones (f32 or a block
 * type, 1-40 rows of 1-4 vec4s or blocks, 1-30 ids) with a texel limit
 * within 2 texels of the table's, eagerly and through plans, each exactly
 * the C reference's. */
static void test_get_rows_texels(void **state)
{
    static const glc_dtype types[] = {GLC_DTYPE_F32, GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_0,
                                      GLC_DTYPE_Q4_K, GLC_DTYPE_Q6_K, GLC_DTYPE_Q5_1};
    static const oc_case fixed[] = {
        {OC_GET_ROWS, {F32, GLC_DTYPE_I32}, F32, {S2(37, 16), S1(20)}, {0}, {0}, OC_EXACT, 0},
        {OC_GET_ROWS, {GLC_DTYPE_Q8_0, GLC_DTYPE_I32}, F32, {S2(8, 64), S1(11)}, {0}, {0},
         OC_EXACT, C_RAWQ},
        {OC_GET_ROWS, {GLC_DTYPE_Q4_0, GLC_DTYPE_I32}, F16, {S2(24, 32), S2(3, 4)}, {0}, {0},
         OC_EXACT, C_RAWQ},
        {OC_GET_ROWS, {GLC_DTYPE_Q6_K, GLC_DTYPE_I32}, F32, {S2(4, 256), S1(7)}, {0}, {0},
         OC_EXACT, C_RAWQ},
    };
    glc_device *dev = tu_device(NULL);
    int have = dev->info.features.texel_buffers;
    uint64_t seed = 0x6e7705;
    size_t i;
    (void)state;
    tc_run_both(dev, fixed, sizeof fixed / sizeof fixed[0], 900, 1 << 20, "get_rows");
    for (i = 0; have && i < 24; i++) {
        uint64_t r = tu_rand(&seed);
        glc_dtype dt = types[r % 6];
        int64_t per = dt == GLC_DTYPE_F32 ? 4 : glc_dtype_row_bytes(dt, 32) ? 32 : 256;
        int64_t v = 1 + (int64_t)((r >> 4) % 40), d = per * (1 + (int64_t)((r >> 10) % 4));
        oc_case c;
        memset(&c, 0, sizeof c);
        c.op = OC_GET_ROWS;
        c.dt[0] = dt;
        c.dt[1] = GLC_DTYPE_I32;
        c.odt = F32;
        c.s[0][0] = 2, c.s[0][1] = v, c.s[0][2] = d;
        c.s[1][0] = 1, c.s[1][1] = 1 + (int64_t)((r >> 14) % 30);
        c.nmse = OC_EXACT;
        c.flags = dt == GLC_DTYPE_F32 ? 0 : C_RAWQ;
        TU_TEXEL_ROUND(dev, 1, tu_texel_limit_near(r >> 40, v * (int64_t)glc_dtype_row_bytes(dt, d) / 4));
        oc_run_eager(dev, &c, 950 + i, "get_rows, generated");
        oc_run_graph(dev, &c, 950 + i, "get_rows, generated");
    }
    glc_device_destroy(dev);
}

static void test_errors(void **state)
{
    tu_log log;
    glc_device *dev = tu_device(&log);
    glc_session *s;
    int64_t s46[2] = {4, 6}, s64[2] = {6, 4}, s45[2] = {4, 5}, s3[1] = {3}, s2[1] = {2};
    int64_t s36[2] = {3, 6}, s56[2] = {5, 6}, s446[3] = {4, 4, 6}, s32[2] = {3, 32};
    int64_t s96[2] = {9, 6}, s26[2] = {2, 6}, s42[2] = {4, 2};
    ot_tensor x = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s46, NULL);
    ot_tensor xt = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s64, NULL);
    ot_tensor x45 = ot_tensor_new(dev, GLC_DTYPE_F16, 2, s45, NULL);
    ot_tensor xi = ot_tensor_new(dev, GLC_DTYPE_I32, 2, s46, NULL);
    ot_tensor x3d = ot_tensor_new(dev, GLC_DTYPE_F32, 3, s446, NULL);
    ot_tensor ids3 = ot_tensor_new(dev, GLC_DTYPE_I32, 1, s3, NULL);
    ot_tensor ids2 = ot_tensor_new(dev, GLC_DTYPE_I32, 1, s2, NULL);
    ot_tensor idsf = ot_tensor_new(dev, GLC_DTYPE_F32, 1, s3, NULL);
    ot_tensor o36 = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s36, NULL);
    ot_tensor o56 = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s56, NULL);
    ot_tensor o36i = ot_tensor_new(dev, GLC_DTYPE_I32, 2, s36, NULL);
    ot_tensor o96 = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s96, NULL);
    ot_tensor o26 = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s26, NULL);
    ot_tensor o42 = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s42, NULL);
    ot_tensor q = ot_tensor_new(dev, GLC_DTYPE_U8, 2, s32, NULL);
    static const int dup[2] = {0, 0}, big[2] = {0, 2}, tr[2] = {1, 0};
    glc_view past, q30;
    glc_dispatch_stats st;
    (void)state;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);

    /* get_rows */
    EXPECT(glc_op_get_rows(s, xi.view, ids3.view, o36.view), GLC_ERR_INVALID_ARG,
           "get_rows: table [4, 6] i32: must be [V, D] of f32, f16, bf16 or GGML blocks");
    EXPECT(glc_op_get_rows(s, x3d.view, ids3.view, o36.view), GLC_ERR_INVALID_ARG,
           "get_rows: table [4, 4, 6] f32: must be [V, D] of f32, f16, bf16 or GGML blocks");
    EXPECT(glc_op_get_rows(s, x.view, idsf.view, o36.view), GLC_ERR_INVALID_ARG,
           "get_rows: ids [3] f32: must be i32 of rank 1 to 3");
    EXPECT(glc_op_get_rows(s, x.view, ids3.view, o56.view), GLC_ERR_INVALID_ARG,
           "get_rows: output 0 is [5, 6] f32, the op makes [3, 6] f32");
    EXPECT(glc_op_get_rows(s, x.view, ids3.view, o36i.view), GLC_ERR_INVALID_ARG,
           "get_rows: table [4, 6] f32, out [3, 6] i32: out must be f32, f16 or bf16");
    q30 = glc_view_make(q.buf, q.pad, GLC_DTYPE_Q8_0, 2, (const int64_t[]){2, 30});
    EXPECT(glc_op_get_rows(s, q30, ids3.view, o36.view), GLC_ERR_INVALID_ARG,
           "get_rows: tensor 0: rank 2, dtype q8_0: not a valid shape for the dtype");

    /* set_rows */
    EXPECT(glc_op_set_rows(s, o36.view, ids2.view, x.view), GLC_ERR_INVALID_ARG,
           "set_rows: ids [2] i32 do not fit src [3, 6] f32 (i32 [3] wanted)");
    EXPECT(glc_op_set_rows(s, o36.view, ids3.view, x45.view), GLC_ERR_INVALID_ARG,
           "set_rows: src [3, 6] f32 and dst [4, 5] f16: rows differ (all dims but the first "
           "must match)");
    EXPECT(glc_op_set_rows(s, o36i.view, ids3.view, x.view), GLC_ERR_INVALID_ARG,
           "set_rows: src [3, 6] i32, dst [4, 6] f32: must be f32, f16 or bf16 [rows, ...] of "
           "rank 2 to 4");
    EXPECT(glc_op_set_rows(s, ids3.view, ids3.view, x.view), GLC_ERR_INVALID_ARG,
           "set_rows: src [3] i32, dst [4, 6] f32: must be f32, f16 or bf16 [rows, ...] of "
           "rank 2 to 4");

    /* copy */
    EXPECT(glc_op_copy(s, x.view, dup, xt.view), GLC_ERR_INVALID_ARG,
           "copy: perm [0, 0] is not a permutation of the 2 dims of x [4, 6] f32");
    EXPECT(glc_op_copy(s, x.view, big, xt.view), GLC_ERR_INVALID_ARG,
           "copy: perm [0, 2] is not a permutation of the 2 dims of x [4, 6] f32");
    EXPECT(glc_op_copy(s, x.view, NULL, xt.view), GLC_ERR_INVALID_ARG,
           "copy: output 0 is [6, 4] f32, the op makes [4, 6] f32");
    EXPECT(glc_op_copy(s, x.view, tr, x.view), GLC_ERR_INVALID_ARG,
           "copy: output 0 is [4, 6] f32, the op makes [6, 4] f32");
    EXPECT(glc_op_copy(s, xi.view, NULL, x.view), GLC_ERR_INVALID_ARG,
           "copy: x [4, 6] i32: must be f32, f16 or bf16 of rank 1 to 4");
    EXPECT(glc_op_copy(s, x.view, NULL, xi.view), GLC_ERR_INVALID_ARG,
           "copy: x [4, 6] f32, out [4, 6] i32: storage must be f32, f16 or bf16");
    past = x.view;
    past.offset = glc_buffer_size(x.buf) - 64;
    assert_int_equal(glc_op_copy(s, past, NULL, xt.view), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "copy: tensor 0: bytes [");
    tu_assert_contains(glc_device_errmsg(dev), "run past the buffer's");
    past = o36.view;
    past.offset = glc_buffer_size(o36.buf) - 64;
    assert_int_equal(glc_op_copy(s, o36.view, NULL, past), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "copy: tensor 1: bytes [");

    /* slice */
    EXPECT(glc_op_slice(s, x.view, 1, 5, o42.view), GLC_ERR_BOUNDS,
           "slice: x [4, 6] f32: [5, 5 + 2) is not a non-empty range inside dim 1 (6)");
    EXPECT(glc_op_slice(s, x.view, 0, -1, o26.view), GLC_ERR_BOUNDS,
           "slice: x [4, 6] f32: [-1, -1 + 2) is not a non-empty range inside dim 0 (4)");
    EXPECT(glc_op_slice(s, x.view, 2, 0, o26.view), GLC_ERR_INVALID_ARG,
           "slice: axis 2 is out of range for x [4, 6] f32");
    EXPECT(glc_op_slice(s, x.view, -3, 0, o26.view), GLC_ERR_INVALID_ARG,
           "slice: axis -3 is out of range for x [4, 6] f32");
    EXPECT(glc_op_slice(s, x.view, 0, 1, x3d.view), GLC_ERR_INVALID_ARG,
           "slice: output 0 is [4, 4, 6] f32, the op makes [1, 6] f32");
    EXPECT(glc_op_slice(s, xi.view, 0, 1, o26.view), GLC_ERR_INVALID_ARG,
           "slice: x [4, 6] i32: must be f32, f16 or bf16 of rank 1 to 4");

    /* concat */
    EXPECT(glc_op_concat(s, x.view, x45.view, 0, o96.view), GLC_ERR_INVALID_ARG,
           "concat: a [4, 6] f32 and b [4, 5] f16 differ in dim 1 (only dim 0, the axis, may)");
    EXPECT(glc_op_concat(s, x.view, x3d.view, 0, o96.view), GLC_ERR_INVALID_ARG,
           "concat: a [4, 6] f32 and b [4, 4, 6] f32 differ in rank");
    EXPECT(glc_op_concat(s, x.view, x.view, 2, o96.view), GLC_ERR_INVALID_ARG,
           "concat: axis 2 is out of range for a [4, 6] f32");
    EXPECT(glc_op_concat(s, x.view, o56.view, 0, o56.view), GLC_ERR_INVALID_ARG,
           "concat: output 0 is [5, 6] f32, the op makes [9, 6] f32");
    EXPECT(glc_op_concat(s, x.view, xi.view, 0, o96.view), GLC_ERR_INVALID_ARG,
           "concat: a [4, 6] f32, b [4, 6] i32: must be f32, f16 or bf16 of rank 1 to 4");

    assert_int_equal(glc_op_copy(NULL, x.view, NULL, x.view), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_finish(s, &st), GLC_OK);
    assert_int_equal(st.dispatches, 0); /* nothing was recorded */
    assert_int_equal(log.last_status, GLC_ERR_INVALID_ARG);
    ot_free(&x);
    ot_free(&xt);
    ot_free(&x45);
    ot_free(&xi);
    ot_free(&x3d);
    ot_free(&ids3);
    ot_free(&ids2);
    ot_free(&idsf);
    ot_free(&o36);
    ot_free(&o56);
    ot_free(&o36i);
    ot_free(&o96);
    ot_free(&o26);
    ot_free(&o42);
    ot_free(&q);
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folding),
        cmocka_unit_test(test_big_grid),  cmocka_unit_test(test_sequence),
        cmocka_unit_test(test_graph),
        cmocka_unit_test(test_graph_errors), cmocka_unit_test(test_get_rows_texels),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
