/*
 * Elementwise ops beyond the case table of test_ops.c (which runs the
 * random shapes, broadcasting, dtype mixes and the grid past 65535 groups):
 * grids folded past narrowed group limits, llvmpipe's vec4 form read from
 * SSBOs and through buffer textures on each side of the texel limit, and
 * the errors for bad shapes and dtypes.
 */
#include "testutil.h"

#include "device.h"
#include "optable.h"
#include "texel_cases.h"

/* Narrowed limits fold even small grids into 3-D: table cases on such a
 * device, eagerly and through a plan. */
static void test_grid_folding(void **state)
{
    static const oc_case cases[] = {
        {OC_ADD, {GLC_DTYPE_F32, GLC_DTYPE_F16}, GLC_DTYPE_F16, {S2(33, 97), S1(97)}, {0}, {0},
         OC_T16, 0},
        {OC_UNARY, {GLC_DTYPE_F32}, GLC_DTYPE_F32, {S1(3001)}, {0}, {GLC_UNARY_SILU},
         OT_NMSE_DEFAULT, 0},
        {OC_SCALE, {GLC_DTYPE_BF16}, GLC_DTYPE_F32, {S3(5, 7, 31)}, {2.0f, 1.0f}, {0},
         OT_NMSE_DEFAULT, 0},
        /* the vec4 form on llvmpipe */
        {OC_MUL, {GLC_DTYPE_F32, GLC_DTYPE_F32}, GLC_DTYPE_F32, {S2(33, 96), S2(33, 96)}, {0},
         {0}, OT_NMSE_DEFAULT, 0},
        {OC_UNARY, {GLC_DTYPE_F32}, GLC_DTYPE_F32, {S1(3000)}, {0}, {GLC_UNARY_SILU},
         OT_NMSE_DEFAULT, 0},
    };
    glc_device *dev = tu_device(NULL);
    size_t i;
    (void)state;
    dev->info.limits.max_group_count[0] = 3;
    dev->info.limits.max_group_count[1] = 2;
    dev->info.limits.max_group_count[2] = 64;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        oc_run_eager(dev, &cases[i], 303 + i, "folded grid");
        oc_run_graph(dev, &cases[i], 303 + i, "folded grid");
    }
    glc_device_destroy(dev);
}

/* The vec4 form's two reads (llvmpipe): buffer textures up to the device's
 * texel limit (narrowed here to 100 texels: 400 values read as texels, 404
 * from SSBOs), and SSBOs on a device without them; then 24 generated cases
 * (op, length, dims, a limit within 2 texels of the operands' size) against
 * the C reference, eagerly and through plans. */
static void test_vec4_reads(void **state)
{
    static const oc_case cases[] = {
        {OC_ADD, {GLC_DTYPE_F32, GLC_DTYPE_F32}, GLC_DTYPE_F32, {S1(400), S1(400)}, {0}, {0},
         OT_NMSE_DEFAULT, 0},
        {OC_SUB, {GLC_DTYPE_F32, GLC_DTYPE_F32}, GLC_DTYPE_F32, {S2(4, 101), S2(4, 101)}, {0},
         {0}, OT_NMSE_DEFAULT, 0},
        {OC_UNARY, {GLC_DTYPE_F32}, GLC_DTYPE_F32, {S1(400)}, {0}, {GLC_UNARY_SILU},
         OT_NMSE_DEFAULT, 0},
        {OC_SCALE, {GLC_DTYPE_F32}, GLC_DTYPE_F32, {S1(404)}, {2.0f, 1.0f}, {0},
         OT_NMSE_DEFAULT, 0},
    };
    glc_device *dev = tu_device(NULL);
    int have = dev->info.features.texel_buffers;
    uint64_t seed = 0x7e4e1;
    size_t i;
    (void)state;
    tc_run_both(dev, cases, sizeof cases / sizeof cases[0], 404, 100, "vec4 form");
    /* generated: an op, a length (a multiple of 4 or not), one or two dims,
     * and a texel limit within 2 texels of what its operands need */
    for (i = 0; have && i < 24; i++) {
        static const int ops[6] = {OC_ADD, OC_SUB, OC_MUL, OC_DIV, OC_UNARY, OC_SCALE};
        uint64_t r = tu_rand(&seed);
        int op = ops[r % 6];
        int64_t n = 4 * (int64_t)(1 + (r >> 8) % 700) + (int64_t)((r >> 20) % 5 == 0 ? (r >> 24) % 4 : 0);
        int64_t rows = (r >> 28) % 2 && n % 4 == 0 && (n / 4) % 3 == 0 ? 3 : 1;
        oc_case c;
        memset(&c, 0, sizeof c);
        c.op = op;
        c.dt[0] = c.dt[1] = c.odt = GLC_DTYPE_F32;
        c.s[0][0] = c.s[1][0] = rows > 1 ? 2 : 1;
        c.s[0][1] = c.s[1][1] = rows > 1 ? rows : n;
        c.s[0][2] = c.s[1][2] = n / rows;
        c.i[0] = op == OC_UNARY ? (int64_t)GLC_UNARY_SILU : 0;
        c.f[0] = 1.5f, c.f[1] = -0.25f;
        c.nmse = OT_NMSE_DEFAULT;
        TU_TEXEL_ROUND(dev, 1, tu_texel_limit_near(r >> 40, n));
        oc_run_eager(dev, &c, 500 + i, "generated");
        oc_run_graph(dev, &c, 500 + i, "generated");
    }
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
    /* half the device's alignment (256 on most; softpipe's is 4) */
    past.offset = (size_t)tu_ssbo_alignment(dev) / 2;
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
        cmocka_unit_test(test_grid_folding),
        cmocka_unit_test(test_vec4_reads),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
