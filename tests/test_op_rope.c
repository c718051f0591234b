/*
 * rope beyond the case table of test_ops.c (which runs NORMAL and NEOX,
 * both ranks, partial and odd rope_dim, bases, factors, dtype mixes, in
 * place and the grid past 65535 groups): a grid folded past narrowed group
 * limits, and the errors.
 */
#include "testutil.h"

#include "device.h"
#include "optable.h"

static glc_device *open_dev(int min)
{
    glc_device_desc d = tu_desc(NULL);
    d.flags = min ? GLC_DEVICE_LIMITS_MIN : 0;
    return tu_device_desc(&d);
}

/* Narrowed limits fold even small grids into 3-D: a table case on such a
 * device (default and minimum limits), eagerly and through a plan. */
static void test_rope_folding(void **state)
{
    int min;
    (void)state;
    for (min = 0; min < 2; min++) {
        glc_device *dev = open_dev(min);
        oc_case c = {OC_ROPE, {GLC_DTYPE_F16, GLC_DTYPE_I32}, GLC_DTYPE_F32,
                     {S3(37, 8, 64), S1(37)}, {0}, {0}, OT_NMSE_ROPE, 0};
        c.i[0] = min ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
        dev->info.limits.max_group_count[0] = 3;
        dev->info.limits.max_group_count[1] = 2;
        dev->info.limits.max_group_count[2] = 64;
        oc_run_eager(dev, &c, 88, "folded grid");
        oc_run_graph(dev, &c, 88, "folded grid");
        glc_device_destroy(dev);
    }
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
        cmocka_unit_test(test_rope_folding),
        cmocka_unit_test(test_rope_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
