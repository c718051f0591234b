/*
 * rope beyond the case table of test_ops.c (which runs NORMAL and NEOX,
 * both ranks, partial and odd rope_dim, bases, factors, dtype mixes, in
 * place and the grid past 65535 groups): a grid folded past narrowed group
 * limits; llvmpipe's f32 form (glsl/rope4.comp: an invocation across a
 * token's heads, x read as texels or from its SSBO) on generated shapes
 * against the C reference, and the rule that picks it; the errors.
 */
#include "testutil.h"

#include "device.h"
#include "ops.h"
#include "optable.h"
#include "texel_cases.h"

static glc_device *open_dev(int min)
{
    glc_device_desc d = tu_desc(NULL);
    d.flags = min ? GLC_DEVICE_LIMITS_MIN : 0;
    return tu_device_desc(&d);
}

/* Narrowed limits fold even small grids into 3-D: a table case on such a
 * device (default and minimum limits), eagerly and through a plan; then
 * f32 (llvmpipe's rope4 where it runs) the same way. */
static void test_rope_folding(void **state)
{
    int min, f32;
    (void)state;
    for (min = 0; min < 2; min++)
        for (f32 = 0; f32 < 2; f32++) {
            glc_device *dev = open_dev(min);
            oc_case c = {OC_ROPE, {GLC_DTYPE_F16, GLC_DTYPE_I32}, GLC_DTYPE_F32,
                         {S3(37, 8, 64), S1(37)}, {0}, {0}, OT_NMSE_ROPE, 0};
            c.i[0] = min ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
            if (f32)
                c.dt[0] = GLC_DTYPE_F32;
            dev->info.limits.max_group_count[0] = 3;
            dev->info.limits.max_group_count[1] = 2;
            dev->info.limits.max_group_count[2] = 64;
            oc_run_eager(dev, &c, 88, "folded grid");
            oc_run_graph(dev, &c, 88, "folded grid");
            glc_device_destroy(dev);
        }
}

/* rope4's rule: llvmpipe, f32 x and out, D % 4 == 0, rope_dim a multiple
 * of 8 (NEOX) or 4 (NORMAL), the heads within the loop budget; rope.comp
 * elsewhere. */
static void test_rope4_rule(void **state)
{
    static const struct {
        int64_t h, d, rd;
        int neox, llvmpipe;
        glc_dtype x, out;
        uint32_t loop_cap;
        const char *kernel;
    } cases[] = {
        {32, 128, 0, 1, 1, GLC_DTYPE_F32, GLC_DTYPE_F32, 0, "rope4"},
        {8, 64, 40, 1, 1, GLC_DTYPE_F32, GLC_DTYPE_F32, 0, "rope4"},     /* 40 % 8 */
        {8, 64, 36, 1, 1, GLC_DTYPE_F32, GLC_DTYPE_F32, 0, "rope"},      /* 36 % 8 */
        {8, 64, 36, 0, 1, GLC_DTYPE_F32, GLC_DTYPE_F32, 0, "rope4"},     /* NORMAL: % 4 */
        {8, 64, 34, 0, 1, GLC_DTYPE_F32, GLC_DTYPE_F32, 0, "rope"},
        {8, 66, 0, 0, 1, GLC_DTYPE_F32, GLC_DTYPE_F32, 0, "rope"},       /* D % 4 */
        {8, 64, 0, 1, 1, GLC_DTYPE_F16, GLC_DTYPE_F32, 0, "rope"},
        {8, 64, 0, 1, 1, GLC_DTYPE_F32, GLC_DTYPE_BF16, 0, "rope"},
        {8, 64, 0, 1, 0, GLC_DTYPE_F32, GLC_DTYPE_F32, 0, "rope"},       /* not llvmpipe */
        {40, 64, 0, 1, 1, GLC_DTYPE_F32, GLC_DTYPE_F32, 64, "rope4"},    /* 40 + 16 <= 56 */
        {41, 64, 0, 1, 1, GLC_DTYPE_F32, GLC_DTYPE_F32, 64, "rope"},     /* the loop budget */
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        glc__op_args a;
        glc__target tg;
        glc__op_plan p;
        glc__op_args_init(&a, GLC__OP_ROPE, 3, 1);
        memset(a.t, 0, sizeof a.t);
        a.t[0].present = a.t[1].present = 1;
        a.t[0].dtype = cases[i].x;
        a.t[0].rank = 3;
        a.t[0].shape[0] = 5;
        a.t[0].shape[1] = cases[i].h;
        a.t[0].shape[2] = cases[i].d;
        a.t[1].dtype = GLC_DTYPE_I32;
        a.t[1].rank = 1;
        a.t[1].shape[0] = 5;
        a.t[3].dtype = cases[i].out;
        a.rope.mode = cases[i].neox ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
        a.rope.dim = cases[i].rd;
        tu_rule_target(&tg, cases[i].llvmpipe);
        tg.limits.max_loop_iterations = cases[i].loop_cap;
        tu_plan_op(&a, &tg, &p);
        if (strcmp(p.disp[0].kernel, cases[i].kernel) != 0)
            fail_msg("case %zu: %s, want %s", i, p.disp[0].kernel, cases[i].kernel);
    }
}

/* rope4 against the C reference: fixed shapes (NEOX and NORMAL, partial
 * rope_dim with its copied tail, factors, rank 4, one head, one token, in
 * place, NaN and infinities) with x read from its SSBO and as texels, then
 * 24 generated ones (T 1-40, H 1-40, D 4-160 in quads, rope_dim whole or a
 * multiple of 8 or 4, or one that is not, so rope.comp takes it) with a
 * texel limit within 2 texels of x's size, eagerly and through plans. */
static void test_rope4(void **state)
{
    static const oc_case fixed[] = {
        {OC_ROPE, {GLC_DTYPE_F32, GLC_DTYPE_I32}, GLC_DTYPE_F32, {S3(9, 6, 32), S1(9)}, {0},
         {GLC_ROPE_NEOX, 0}, OT_NMSE_ROPE, 0},
        {OC_ROPE, {GLC_DTYPE_F32, GLC_DTYPE_I32, GLC_DTYPE_F32}, GLC_DTYPE_F32,
         {S3(7, 3, 40), S1(7), S1(12)}, {500000.0f}, {GLC_ROPE_NORMAL, 24}, OT_NMSE_ROPE, 0},
        {OC_ROPE, {GLC_DTYPE_F32, GLC_DTYPE_I32, GLC_DTYPE_F32}, GLC_DTYPE_F32,
         {S4(2, 5, 4, 48), S1(5), S1(16)}, {0}, {GLC_ROPE_NEOX, 32}, OT_NMSE_ROPE, C_INPLACE},
        {OC_ROPE, {GLC_DTYPE_F32, GLC_DTYPE_I32}, GLC_DTYPE_F32, {S3(1, 1, 8), S1(1)}, {10.0f},
         {GLC_ROPE_NORMAL, 0}, OT_NMSE_ROPE, C_INPLACE},
        /* NaN and infinities among x: they stay where the reference has them */
        {OC_ROPE, {GLC_DTYPE_F32, GLC_DTYPE_I32}, GLC_DTYPE_F32, {S3(6, 5, 16), S1(6)}, {0},
         {GLC_ROPE_NEOX, 8}, OT_NMSE_ROPE, C_NANINF},
    };
    glc_device *dev = tu_device(NULL);
    uint64_t seed = 0x40be4;
    size_t i;
    (void)state;
    tc_run_both(dev, fixed, sizeof fixed / sizeof fixed[0], 700, 1 << 20, "rope4");
    for (i = 0; i < 24; i++) {
        uint64_t r = tu_rand(&seed);
        int neox = (int)(r % 2), rank = 3 + (int)((r >> 1) % 2);
        int64_t t = 1 + (int64_t)((r >> 2) % 40), h = 1 + (int64_t)((r >> 8) % 40);
        int64_t d = 4 * (1 + (int64_t)((r >> 14) % 40)), q = neox ? 8 : 4, rd, b = 1;
        oc_case c;
        memset(&c, 0, sizeof c);
        switch ((r >> 20) % 4) {
        case 0: rd = 0; break;                                                   /* all of D */
        case 1: rd = q * (int64_t)((r >> 24) % (uint64_t)(d / q + 1)); break;    /* whole quads */
        case 2: rd = 2 * (1 + (int64_t)((r >> 24) % (uint64_t)(d / 2))); break; /* any even */
        default: rd = d - d % q; break;
        }
        if (neox && d % 8) /* (NEOX over all of D: D % 8, else rope.comp) */
            rd = rd ? rd : d;
        c.op = OC_ROPE;
        c.dt[0] = c.odt = GLC_DTYPE_F32;
        c.dt[1] = GLC_DTYPE_I32;
        c.s[0][0] = rank;
        if (rank == 4)
            c.s[0][1] = b = 1 + (int64_t)((r >> 32) % 3);
        c.s[0][rank - 2] = t;
        c.s[0][rank - 1] = h;
        c.s[0][rank] = d;
        c.s[1][0] = 1;
        c.s[1][1] = t;
        if ((r >> 36) % 3 == 0 && (rd ? rd : d) / 2) { /* freq_factors */
            c.dt[2] = GLC_DTYPE_F32;
            c.s[2][0] = 1;
            c.s[2][1] = (rd ? rd : d) / 2;
        }
        c.f[0] = (r >> 40) % 2 ? 10000.0f : 0.0f;
        c.i[0] = neox ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
        c.i[1] = rd;
        c.flags = (r >> 42) % 2 ? C_INPLACE : 0;
        c.nmse = OT_NMSE_ROPE;
        TU_TEXEL_ROUND(dev, 1, tu_texel_limit_near(r >> 44, b * t * h * d));
        oc_run_eager(dev, &c, 800 + i, "rope4, generated");
        oc_run_graph(dev, &c, 800 + i, "rope4, generated");
    }
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
        cmocka_unit_test(test_rope_folding),
        cmocka_unit_test(test_rope4_rule),
        cmocka_unit_test(test_rope4),
        cmocka_unit_test(test_rope_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
