/*
 * rope against the C reference: NORMAL and NEOX, [T, H, D] and
 * [B, T, H, D], full and partial rope_dim, odd D and odd rope_dim/2 (the
 * half-word path), freq_factors, custom bases, f32/f16/bf16 in any mix, in
 * place, sentinels on every output, a folded grid and a real grid past
 * 65535 groups, each on the default device and on one clamped to the ES
 * 3.1 minimums; then the errors.
 */
#include "testutil.h"

#include "device.h"
#include "optest.h"
#include "ref_rope.h"

static const glc_dtype floats[3] = {GLC_DTYPE_F32, GLC_DTYPE_F16, GLC_DTYPE_BF16};

typedef struct rope_case {
    int rank;
    int64_t shape[4];
    glc_dtype tx, to;
    int neox;
    int64_t rope_dim; /* 0: D */
    float base;       /* 0: 10000 */
    int ff;           /* with freq_factors */
    int inplace;
    int max_pos;
} rope_case;

/* The threshold is DESIGN.md's for rope; 16-bit storage stays well inside it. */
static void run_rope(glc_device *dev, uint64_t *seed, const rope_case *c)
{
    int64_t d = c->shape[c->rank - 1], h = c->shape[c->rank - 2], t = c->shape[c->rank - 3];
    int64_t b = c->rank == 4 ? c->shape[0] : 1, rd = c->rope_dim ? c->rope_dim : d;
    size_t n = (size_t)ot_numel(c->rank, c->shape), i;
    float *x = malloc(n * 4), *ref = malloc(n * 4), *got = malloc(n * 4), *posf = malloc((size_t)t * 4);
    float *ff = malloc((size_t)(rd / 2 + 1) * 4);
    int32_t *pos = malloc((size_t)t * 4);
    ot_tensor X, P, F, O;
    glc_rope_desc desc;
    glc_session *s;
    glc_status st;
    char what[200];
    ot_fill(seed, x, n, -2.0f, 2.0f);
    ot_round(c->tx, x, n);
    for (i = 0; i < (size_t)t; i++) {
        pos[i] = (int32_t)(ot_rand(seed) % (uint64_t)(c->max_pos ? c->max_pos : 4096));
        posf[i] = (float)pos[i];
    }
    ot_fill(seed, ff, (size_t)(rd / 2 + 1), 1.0f, 8.0f);
    ref_rope(x, b, t, h, d, pos, c->neox, rd, c->base == 0 ? 10000.0 : c->base, c->ff ? ff : NULL,
             ref);
    ot_round(c->to, ref, n);
    X = ot_tensor_new(dev, c->tx, c->rank, c->shape, x);
    P = ot_tensor_new(dev, GLC_DTYPE_I32, 1, &t, posf);
    {
        int64_t nf = rd / 2 ? rd / 2 : 1;
        F = ot_tensor_new(dev, GLC_DTYPE_F32, 1, &nf, ff);
    }
    O = c->inplace ? X : ot_tensor_new(dev, c->to, c->rank, c->shape, NULL);
    memset(&desc, 0, sizeof desc);
    desc.mode = c->neox ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
    desc.rope_dim = c->rope_dim;
    desc.base = c->base;
    if (c->ff)
        desc.freq_factors = F.view;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    st = glc_op_rope(s, X.view, P.view, &desc, O.view);
    if (st != GLC_OK)
        fail_msg("rope: %s", glc_device_errmsg(dev));
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    snprintf(what, sizeof what,
             "rope %s [%lld, %lld, %lld, %lld] rope_dim %lld base %g%s, %s -> %s%s",
             c->neox ? "neox" : "normal", (long long)b, (long long)t, (long long)h, (long long)d,
             (long long)rd, (double)c->base, c->ff ? " freq_factors" : "", glc_dtype_name(c->tx),
             glc_dtype_name(c->to), c->inplace ? " in place" : "");
    if (!ot_read(&O, got))
        fail_msg("%s: a sentinel byte changed", what);
    ot_check(what, got, ref, n, OT_NMSE_ROPE);
    ot_free(&X);
    ot_free(&P);
    ot_free(&F);
    if (!c->inplace)
        ot_free(&O);
    free(x);
    free(ref);
    free(got);
    free(posf);
    free(ff);
    free(pos);
}

static glc_device *open_dev(int min)
{
    glc_device_desc d = tu_desc(NULL);
    d.flags = min ? GLC_DEVICE_LIMITS_MIN : 0;
    return tu_device_desc(&d);
}

static void test_rope_random(void **state)
{
    /* D, rope_dim: full, partial, odd D, odd half (NEOX pairs across words) */
    static const int64_t dr[][2] = {{128, 0}, {64, 32}, {2, 0}, {7, 4}, {10, 0}, {96, 20},
                                    {5, 2}, {14, 6}, {3, 2}};
    uint64_t seed = 77;
    int min, iter;
    (void)state;
    for (min = 0; min < 2; min++) {
        glc_device *dev = open_dev(min);
        for (iter = 0; iter < 18; iter++) {
            rope_case c;
            memset(&c, 0, sizeof c);
            c.rank = 3 + iter % 2;
            if (c.rank == 4)
                c.shape[0] = 1 + (int64_t)(ot_rand(&seed) % 3);
            c.shape[c.rank - 3] = 1 + (int64_t)(ot_rand(&seed) % 13);
            c.shape[c.rank - 2] = 1 + (int64_t)(ot_rand(&seed) % 5);
            c.shape[c.rank - 1] = dr[iter % 9][0];
            c.rope_dim = dr[iter % 9][1];
            c.neox = (iter / 2) % 2;
            c.tx = floats[iter % 3];
            c.to = floats[(iter / 3) % 3];
            c.base = iter % 4 == 3 ? 500000.0f : iter % 4 == 1 ? 10.0f : 0.0f;
            c.ff = iter % 5 == 2;
            c.inplace = iter % 4 == 0 && c.tx == c.to;
            run_rope(dev, &seed, &c);
        }
        glc_device_destroy(dev);
    }
}

static void test_rope_folding(void **state)
{
    uint64_t seed = 88;
    int min;
    (void)state;
    for (min = 0; min < 2; min++) {
        glc_device *dev = open_dev(min);
        rope_case c;
        dev->info.limits.max_group_count[0] = 3;
        dev->info.limits.max_group_count[1] = 2;
        dev->info.limits.max_group_count[2] = 64;
        memset(&c, 0, sizeof c);
        c.rank = 3;
        c.shape[0] = 37;
        c.shape[1] = 8;
        c.shape[2] = 64;
        c.neox = min;
        c.tx = GLC_DTYPE_F16;
        c.to = GLC_DTYPE_F32;
        run_rope(dev, &seed, &c);
        glc_device_destroy(dev);
    }
}

/* Past 65535 groups of 128: rows of one rotating pair, in place. */
static void test_rope_big_grid(void **state)
{
    glc_device *dev = open_dev(1);
    uint64_t seed = 99;
    rope_case c;
    (void)state;
    memset(&c, 0, sizeof c);
    c.rank = 3;
    c.shape[0] = 65536 * 2 + 3;
    c.shape[1] = 64;
    c.shape[2] = 2;
    c.tx = GLC_DTYPE_F32;
    c.to = GLC_DTYPE_F32;
    c.inplace = 1;
    c.max_pos = 64;
    run_rope(dev, &seed, &c);
    glc_device_destroy(dev);
}

static void test_rope_errors(void **state)
{
    tu_log log;
    glc_device *dev = tu_device(&log);
    glc_session *s;
    int64_t s3[3] = {4, 2, 8}, s4[1] = {4}, s5[1] = {5}, s2[1] = {2}, s2d[2] = {4, 8};
    ot_tensor x = ot_tensor_new(dev, GLC_DTYPE_F32, 3, s3, NULL);
    ot_tensor o = ot_tensor_new(dev, GLC_DTYPE_F32, 3, s3, NULL);
    ot_tensor p = ot_tensor_new(dev, GLC_DTYPE_I32, 1, s4, NULL);
    ot_tensor p5 = ot_tensor_new(dev, GLC_DTYPE_I32, 1, s5, NULL);
    ot_tensor pf = ot_tensor_new(dev, GLC_DTYPE_F32, 1, s4, NULL);
    ot_tensor f2 = ot_tensor_new(dev, GLC_DTYPE_F32, 1, s2, NULL);
    ot_tensor x2 = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s2d, NULL);
    ot_tensor xi = ot_tensor_new(dev, GLC_DTYPE_I32, 3, s3, NULL);
    glc_rope_desc d;
    glc_view past;
    glc_dispatch_stats st;
    (void)state;
    memset(&d, 0, sizeof d);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    d.rope_dim = 5;
    assert_int_equal(glc_op_rope(s, x.view, p.view, &d, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "rope: x [4, 2, 8] f32: rope_dim 5 must be even and in [0, 8] (0: D)");
    d.rope_dim = 10;
    assert_int_equal(glc_op_rope(s, x.view, p.view, &d, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "rope: x [4, 2, 8] f32: rope_dim 10 must be even and in [0, 8] (0: D)");
    d.rope_dim = 0;
    assert_int_equal(glc_op_rope(s, x.view, p5.view, &d, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "rope: positions [5] i32 do not fit x [4, 2, 8] f32 (i32 [4] wanted)");
    assert_int_equal(glc_op_rope(s, x.view, pf.view, &d, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "rope: positions [4] f32 do not fit x [4, 2, 8] f32 (i32 [4] wanted)");
    assert_int_equal(glc_op_rope(s, xi.view, p.view, &d, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "rope: x [4, 2, 8] i32: must be float [T, H, D] or [B, T, H, D]");
    assert_int_equal(glc_op_rope(s, x2.view, p.view, &d, x2.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "rope: x [4, 8] f32: must be float [T, H, D] or [B, T, H, D]");
    assert_int_equal(glc_op_rope(s, x.view, p.view, &d, xi.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "rope: x [4, 2, 8] f32, out [4, 2, 8] i32: storage must be f32, f16 or bf16");
    assert_int_equal(glc_op_rope(s, x.view, p.view, &d, x2.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "rope: output 0 is [4, 8] f32, the op makes [4, 2, 8] f32");
    d.rope_dim = 6;
    d.freq_factors = f2.view;
    assert_int_equal(glc_op_rope(s, x.view, p.view, &d, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "rope: freq_factors [2] f32 do not fit rope_dim 6 (f32 [3] wanted)");
    memset(&d, 0, sizeof d);
    d.mode = (glc_rope_mode)7;
    assert_int_equal(glc_op_rope(s, x.view, p.view, &d, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "rope: 7 is not a glc_rope_mode");
    d.mode = GLC_ROPE_NEOX;
    d.base = -2.0f;
    assert_int_equal(glc_op_rope(s, x.view, p.view, &d, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "rope: base -2: must be > 0 (0: 10000)");
    d.base = 0;
    past = x.view;
    past.offset = glc_buffer_size(x.buf) - 64;
    assert_int_equal(glc_op_rope(s, past, p.view, &d, o.view), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "rope: tensor 0: bytes [");
    tu_assert_contains(glc_device_errmsg(dev), "run past the buffer's");
    assert_int_equal(glc_op_rope(NULL, x.view, p.view, &d, o.view), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_finish(s, &st), GLC_OK);
    assert_int_equal(st.dispatches, 0); /* nothing was recorded */
    assert_int_equal(log.last_status, GLC_ERR_BOUNDS);
    ot_free(&x);
    ot_free(&o);
    ot_free(&p);
    ot_free(&p5);
    ot_free(&pf);
    ot_free(&f2);
    ot_free(&x2);
    ot_free(&xi);
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rope_random),
        cmocka_unit_test(test_rope_folding),
        cmocka_unit_test(test_rope_big_grid),
        cmocka_unit_test(test_rope_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
