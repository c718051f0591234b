/*
 * Elementwise ops against the C reference: random shapes (1, odd, prime),
 * numpy broadcasting, f32/f16/bf16 storage in any mix, sentinels around
 * every output (odd-length 16-bit outputs end mid-word), a grid folded past
 * the group limit, and the errors for bad shapes and dtypes.
 */
#include "testutil.h"

#include "device.h"
#include "optest.h"
#include "ref_elementwise.h"

static const glc_dtype floats[3] = {GLC_DTYPE_F32, GLC_DTYPE_F16, GLC_DTYPE_BF16};

/* 16-bit storage rounds inputs and outputs: compare in that light. */
static double limit_for(glc_dtype o)
{
    return o == GLC_DTYPE_F32 ? OT_NMSE_DEFAULT : o == GLC_DTYPE_F16 ? 1e-6 : 3e-5;
}

static void run_binary(glc_device *dev, uint64_t *seed, int op, int ra, const int64_t *sa, int rb,
                       const int64_t *sb, glc_dtype ta, glc_dtype tb, glc_dtype to)
{
    int64_t so[4];
    int ro = ra > rb ? ra : rb, i;
    size_t na = (size_t)ot_numel(ra, sa), nb = (size_t)ot_numel(rb, sb), no;
    float *a, *b, *ref, *got;
    ot_tensor A, B, O;
    glc_session *s;
    char what[160];
    for (i = 0; i < ro; i++) {
        int ia = i - (ro - ra), ib = i - (ro - rb);
        int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
        so[i] = da > db ? da : db;
    }
    no = (size_t)ot_numel(ro, so);
    a = malloc(na * 4);
    b = malloc(nb * 4);
    ref = malloc(no * 4);
    got = malloc(no * 4);
    ot_fill(seed, a, na, -2.0f, 2.0f);
    ot_fill(seed, b, nb, 0.5f, 3.0f); /* away from 0: div stays well-conditioned */
    ot_round(ta, a, na);
    ot_round(tb, b, nb);
    ref_binary(op, a, ra, sa, b, rb, sb, ref, ro, so);
    ot_round(to, ref, no);
    A = ot_tensor_new(dev, ta, ra, sa, a);
    B = ot_tensor_new(dev, tb, rb, sb, b);
    O = ot_tensor_new(dev, to, ro, so, NULL);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    {
        glc_status (*fn[4])(glc_session *, glc_view, glc_view, glc_view) = {
            glc_op_add, glc_op_sub, glc_op_mul, glc_op_div};
        glc_status st = fn[op](s, A.view, B.view, O.view);
        if (st != GLC_OK)
            fail_msg("binary op %d: %s", op, glc_device_errmsg(dev));
    }
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    snprintf(what, sizeof what, "binary op %d, a %s rank %d, b %s rank %d, out %s, %zu elements",
             op, glc_dtype_name(ta), ra, glc_dtype_name(tb), rb, glc_dtype_name(to), no);
    if (!ot_read(&O, got))
        fail_msg("%s: a sentinel byte changed", what);
    ot_check(what, got, ref, no, limit_for(to));
    ot_free(&A);
    ot_free(&B);
    ot_free(&O);
    free(a);
    free(b);
    free(ref);
    free(got);
}

static void random_shape(uint64_t *seed, int *rank, int64_t *shape)
{
    static const int64_t dims[] = {1, 2, 3, 5, 7, 13, 31, 64, 97, 127};
    int i;
    *rank = 1 + (int)(ot_rand(seed) % 4);
    for (i = 0; i < *rank; i++)
        shape[i] = dims[ot_rand(seed) % (*rank > 2 ? 7 : 10)];
}

static void test_binary_random(void **state)
{
    glc_device *dev = tu_device(NULL);
    uint64_t seed = 101;
    int iter;
    (void)state;
    for (iter = 0; iter < 36; iter++) {
        int ra, rb, i, op = iter % 4;
        int64_t sa[4], sb[4];
        random_shape(&seed, &ra, sa);
        /* b: the same shape, a suffix of it, or a 1 in some dims */
        rb = 1 + (int)(ot_rand(&seed) % (unsigned)ra);
        for (i = 0; i < rb; i++)
            sb[i] = ot_rand(&seed) % 3 == 0 ? 1 : sa[ra - rb + i];
        if (iter % 5 == 0) { /* and sometimes a broadcasts against b */
            int64_t tmp[4];
            int t = ra;
            memcpy(tmp, sa, sizeof tmp);
            memcpy(sa, sb, sizeof sa);
            memcpy(sb, tmp, sizeof sb);
            ra = rb;
            rb = t;
        }
        run_binary(dev, &seed, op, ra, sa, rb, sb, floats[iter % 3], floats[(iter / 3) % 3],
                   floats[(iter / 9) % 3]);
    }
    glc_device_destroy(dev);
}

static void run_unary(glc_device *dev, uint64_t *seed, int op, size_t n, glc_dtype tx,
                      glc_dtype to, float param)
{
    int64_t shape[1];
    float *x = malloc(n * 4), *ref = malloc(n * 4), *got = malloc(n * 4);
    ot_tensor X, O;
    glc_session *s;
    char what[128];
    shape[0] = (int64_t)n;
    ot_fill(seed, x, n, -4.0f, 4.0f);
    ot_round(tx, x, n);
    ref_unary(op, x, ref, n, op == REF_UNARY_SCALE ? 1.5f : param, -0.25f);
    ot_round(to, ref, n);
    X = ot_tensor_new(dev, tx, 1, shape, x);
    O = ot_tensor_new(dev, to, 1, shape, NULL);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    if (op == REF_UNARY_SCALE)
        assert_int_equal(glc_op_scale(s, X.view, 1.5f, -0.25f, O.view), GLC_OK);
    else
        assert_int_equal(glc_op_unary(s, (glc_unary_op)op, X.view, param, O.view), GLC_OK);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    snprintf(what, sizeof what, "unary op %d, %s -> %s, n %zu", op, glc_dtype_name(tx),
             glc_dtype_name(to), n);
    if (!ot_read(&O, got))
        fail_msg("%s: a sentinel byte changed", what);
    ot_check(what, got, ref, n, limit_for(to));
    ot_free(&X);
    ot_free(&O);
    free(x);
    free(ref);
    free(got);
}

static void test_unary_all(void **state)
{
    glc_device *dev = tu_device(NULL);
    static const size_t sizes[] = {1, 2, 7, 257, 4099};
    uint64_t seed = 202;
    int op;
    size_t i;
    (void)state;
    for (op = GLC_UNARY_GELU; op <= REF_UNARY_SCALE; op++)
        for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            run_unary(dev, &seed, op, sizes[i], floats[(op + i) % 3], floats[(op + 2 * i) % 3],
                      3.0f);
    glc_device_destroy(dev);
}

static void test_grid_folding(void **state)
{
    glc_device *dev = tu_device(NULL);
    uint64_t seed = 303;
    int64_t s1[2] = {33, 97}, s2[1] = {97};
    (void)state;
    /* narrowed limits fold even small grids into 3-D */
    dev->info.limits.max_group_count[0] = 3;
    dev->info.limits.max_group_count[1] = 2;
    dev->info.limits.max_group_count[2] = 64;
    run_binary(dev, &seed, 0, 2, s1, 1, s2, GLC_DTYPE_F32, GLC_DTYPE_F16, GLC_DTYPE_F16);
    run_unary(dev, &seed, GLC_UNARY_SILU, 3001, GLC_DTYPE_F32, GLC_DTYPE_F32, 0);
    glc_device_destroy(dev);
}

static void test_big_grid(void **state)
{
    glc_device_desc d = tu_desc(NULL);
    glc_device *dev;
    uint64_t seed = 404;
    (void)state;
    d.flags = GLC_DEVICE_LIMITS_MIN; /* 65535 groups of 128 x 2 elements */
    dev = tu_device_desc(&d);
    run_unary(dev, &seed, GLC_UNARY_RELU, 65535u * 256u + 2049u, GLC_DTYPE_F32, GLC_DTYPE_F32, 0);
    glc_device_destroy(dev);
}

static void test_errors(void **state)
{
    tu_log log;
    glc_device *dev = tu_device(&log);
    glc_session *s;
    int64_t s23[2] = {2, 3}, s4[1] = {4}, s22[2] = {2, 2}, s8[1] = {8};
    ot_tensor a = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s23, NULL);
    ot_tensor b = ot_tensor_new(dev, GLC_DTYPE_F32, 1, s4, NULL);
    ot_tensor o = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s23, NULL);
    ot_tensor o22 = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s22, NULL);
    ot_tensor i8 = ot_tensor_new(dev, GLC_DTYPE_I32, 1, s8, NULL);
    glc_view past;
    glc_dispatch_stats st;
    (void)state;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    assert_int_equal(glc_op_add(s, a.view, b.view, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "add: shapes [2, 3] f32 and [4] f32 do not broadcast (dim 1: 3 vs 4)");
    assert_int_equal(glc_op_mul(s, a.view, a.view, o22.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "mul: output 0 is [2, 2] f32, the op makes [2, 3] f32");
    assert_int_equal(glc_op_unary(s, GLC_UNARY_EXP, i8.view, 0, i8.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "unary: x i32, out i32: storage must be f32, f16 or bf16");
    assert_int_equal(glc_op_unary(s, GLC_UNARY_SOFTCAP, a.view, 0, o.view), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "softcap needs a cap > 0");
    past = a.view;
    past.offset = glc_buffer_size(a.buf) - 16;
    assert_int_equal(glc_op_add(s, past, a.view, o.view), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "add: tensor 0: bytes [");
    tu_assert_contains(glc_device_errmsg(dev), "run past the buffer's");
    past.offset = 4;
    assert_int_equal(glc_op_add(s, past, a.view, o.view), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "is not a multiple of the device's SSBO offset alignment");
    assert_int_equal(glc_op_add(NULL, a.view, a.view, o.view), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_op_add(s, a.view, a.view, ot_none()), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_finish(s, &st), GLC_OK);
    assert_int_equal(st.dispatches, 0); /* nothing was recorded */
    assert_int_equal(log.last_status, GLC_ERR_INVALID_ARG);
    ot_free(&a);
    ot_free(&b);
    ot_free(&o);
    ot_free(&o22);
    ot_free(&i8);
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_random),
        cmocka_unit_test(test_unary_all),
        cmocka_unit_test(test_grid_folding),
        cmocka_unit_test(test_big_grid),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
