/*
 * Row ops (softmax, rms_norm, layer_norm, sum, mean, argmax) beyond the
 * case table of test_ops.c (which runs random shapes, masks, weights,
 * dtype mixes, in place, the variant boundaries and a vocab row, eagerly
 * and through plans): the variants a GPU gets forced on llvmpipe, grids
 * folded past the group limit and one real grid past 65535 groups, the
 * loop cap, each on the default device and on one clamped to the ES 3.1
 * minimums; llvmpipe's vec4 rows read from SSBOs and through buffer
 * textures on each side of the texel limit; then the errors.
 */
#include "testutil.h"

#include "device.h"
#include "op_run.h"
#include "optest.h"
#include "ref_reduce.h"

enum { R_SOFTMAX, R_RMS, R_LAYER, R_SUM, R_MEAN, R_ARGMAX };
static const char *const rop_names[] = {"softmax", "rms_norm", "layer_norm", "sum", "mean",
                                        "argmax"};
static const glc_dtype floats[3] = {GLC_DTYPE_F32, GLC_DTYPE_F16, GLC_DTYPE_BF16};

typedef struct rcase {
    int op;
    int rank;
    int64_t shape[4];
    glc_dtype tx, to;  /* to: I32 or U32 for argmax */
    glc_dtype tw, tb;  /* norms: weight / bias dtype, 0 for none */
    float scale, eps;  /* softmax scale; norm eps (0: the default) */
    int causal;
    int64_t off;
    int ties;          /* argmax: small integers, so maxima repeat */
    int inplace;       /* softmax, norms: out is x */
    int64_t peak;      /* > 0: element peak - 1 of every row is the row's maximum */
} rcase;

/* 16-bit outputs are compared with a reference rounded the same way; the
 * kernel and the reference may still round an element to neighbouring
 * 16-bit values, which bounds the NMSE at about 2^-22 (f16) and 2^-16
 * (bf16). */
static double limit_for(int op, glc_dtype o)
{
    if (o == GLC_DTYPE_F16)
        return 1e-6;
    if (o == GLC_DTYPE_BF16)
        return 3e-5;
    return op == R_SOFTMAX ? OT_NMSE_SOFTMAX : OT_NMSE_DEFAULT;
}

static float *fresh(uint64_t *seed, size_t n, float lo, float hi, glc_dtype t)
{
    float *v = malloc((n ? n : 1) * 4);
    ot_fill(seed, v, n, lo, hi);
    ot_round(t, v, n);
    return v;
}

static void run_case(glc_device *dev, uint64_t *seed, const rcase *c)
{
    int64_t n = c->shape[c->rank - 1], rows = ot_numel(c->rank, c->shape) / n;
    int64_t oshape[4] = {1, 1, 1, 1}, nout;
    int orank, reduces = c->op >= R_SUM, i;
    float *x, *w = NULL, *b = NULL, *ref, *got;
    ot_tensor X, W, B, O;
    glc_view wv = ot_none(), bv = ot_none(), ov;
    glc_session *s;
    glc_status st = GLC_OK;
    char what[256];
    orank = reduces ? (c->rank > 1 ? c->rank - 1 : 1) : c->rank;
    for (i = 0; i < orank; i++)
        oshape[i] = reduces ? (c->rank > 1 ? c->shape[i] : 1) : c->shape[i];
    nout = ot_numel(orank, oshape);
    x = fresh(seed, (size_t)(rows * n), -3.0f, 3.0f, c->tx);
    if (c->ties)
        for (i = 0; i < rows * n; i++)
            x[i] = (float)(int)(x[i] * 2.0f);
    if (c->peak)
        for (i = 0; i < rows; i++)
            x[i * n + c->peak - 1] = 5.0f;
    if (c->op == R_LAYER) /* a mean far from 0: the norm must not cancel */
        for (i = 0; i < rows * n; i++)
            x[i] += 20.0f;
    ot_round(c->tx, x, (size_t)(rows * n));
    ref = malloc((size_t)nout * 4);
    got = malloc((size_t)nout * 4);
    if (c->tw)
        w = fresh(seed, (size_t)n, -2.0f, 2.0f, c->tw);
    if (c->tb)
        b = fresh(seed, (size_t)n, -1.0f, 1.0f, c->tb);
    switch (c->op) {
    case R_SOFTMAX:
        ref_softmax(x, rows, n, c->scale == 0 ? 1.0f : c->scale, c->causal,
                    c->rank > 1 ? c->shape[c->rank - 2] : 1, c->off, ref);
        break;
    case R_RMS: ref_rms_norm(x, rows, n, w, c->eps == 0 ? 1e-6f : c->eps, ref); break;
    case R_LAYER: ref_layer_norm(x, rows, n, w, b, c->eps == 0 ? 1e-5f : c->eps, ref); break;
    case R_SUM: ref_sum(x, rows, n, 0, ref); break;
    case R_MEAN: ref_sum(x, rows, n, 1, ref); break;
    default: ref_argmax(x, rows, n, ref); break;
    }
    if (c->op != R_ARGMAX)
        ot_round(c->to, ref, (size_t)nout);
    X = ot_tensor_new(dev, c->tx, c->rank, c->shape, x);
    W = c->tw ? ot_tensor_new(dev, c->tw, 1, &n, w) : X;
    B = c->tb ? ot_tensor_new(dev, c->tb, 1, &n, b) : X;
    O = c->inplace ? X : ot_tensor_new(dev, c->to, orank, oshape, NULL);
    if (c->tw)
        wv = W.view;
    if (c->tb)
        bv = B.view;
    ov = O.view;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    switch (c->op) {
    case R_SOFTMAX: {
        glc_softmax_desc d;
        memset(&d, 0, sizeof d);
        d.scale = c->scale;
        d.causal = c->causal;
        d.pos_offset = c->off;
        st = glc_op_softmax(s, X.view, &d, ov);
        break;
    }
    case R_RMS: st = glc_op_rms_norm(s, X.view, wv, c->eps, ov); break;
    case R_LAYER: st = glc_op_layer_norm(s, X.view, wv, bv, c->eps, ov); break;
    case R_SUM: st = glc_op_sum(s, X.view, ov); break;
    case R_MEAN: st = glc_op_mean(s, X.view, ov); break;
    default: st = glc_op_argmax(s, X.view, ov); break;
    }
    if (st != GLC_OK)
        fail_msg("%s: %s", rop_names[c->op], glc_device_errmsg(dev));
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    snprintf(what, sizeof what,
             "%s [%lld rows x %lld] x %s out %s w %s b %s scale %g causal %d off %lld%s",
             rop_names[c->op], (long long)rows, (long long)n, glc_dtype_name(c->tx),
             glc_dtype_name(c->to), c->tw ? glc_dtype_name(c->tw) : "-",
             c->tb ? glc_dtype_name(c->tb) : "-", (double)c->scale, c->causal, (long long)c->off,
             c->inplace ? " in place" : "");
    if (!ot_read(&O, got))
        fail_msg("%s: a sentinel byte changed", what);
    ot_check(what, got, ref, (size_t)nout, c->op == R_ARGMAX ? 0.0 : limit_for(c->op, c->to));
    ot_free(&X);
    if (c->tw)
        ot_free(&W);
    if (c->tb)
        ot_free(&B);
    if (!c->inplace)
        ot_free(&O);
    free(x);
    free(w);
    free(b);
    free(ref);
    free(got);
}

/* The default device and one clamped to the ES 3.1 minimums (the portable
 * path: 128 invocations, no bigger groups). */
static glc_device *open_dev(int min)
{
    glc_device_desc d = tu_desc(NULL);
    d.flags = min ? GLC_DEVICE_LIMITS_MIN : 0;
    return tu_device_desc(&d);
}

/* The variants a GPU gets (rows in registers, teams up to the group size,
 * subgroups where the device has them), on any device: llvmpipe is told
 * it is something else. */
static void test_gpu_variants(void **state)
{
    static const int64_t lens[] = {7, 33, 129, 1000, 4097, 9001};
    uint64_t seed = 45;
    int min;
    size_t i;
    (void)state;
    for (min = 0; min < 2; min++) {
        glc_device *dev = open_dev(min);
        snprintf(dev->renderer, sizeof dev->renderer, "%s", "not the software rasterizer");
        for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            rcase c;
            memset(&c, 0, sizeof c);
            c.op = (int)i % 3;
            c.rank = 2;
            c.shape[0] = 3;
            c.shape[1] = lens[i];
            c.tx = floats[i % 3];
            c.to = floats[(i + 1) % 3];
            c.tw = c.op != R_SOFTMAX ? GLC_DTYPE_F32 : 0;
            c.tb = c.op == R_LAYER ? GLC_DTYPE_F32 : 0;
            c.causal = c.op == R_SOFTMAX;
            c.off = -1;
            run_case(dev, &seed, &c);
            c.op = R_ARGMAX + (int)i % 2 * (R_SUM - R_ARGMAX);
            c.to = c.op == R_ARGMAX ? GLC_DTYPE_U32 : GLC_DTYPE_F32;
            run_case(dev, &seed, &c);
        }
        glc_device_destroy(dev);
    }
}

static void test_grid_folding(void **state)
{
    uint64_t seed = 55;
    int min, op;
    (void)state;
    for (min = 0; min < 2; min++) {
        glc_device *dev = open_dev(min);
        /* narrowed limits fold even small grids into 3-D */
        dev->info.limits.max_group_count[0] = 3;
        dev->info.limits.max_group_count[1] = 2;
        dev->info.limits.max_group_count[2] = 64;
        for (op = R_SOFTMAX; op <= R_ARGMAX; op++) {
            rcase c;
            memset(&c, 0, sizeof c);
            c.op = op;
            c.rank = 3;
            c.shape[0] = 5;
            c.shape[1] = 31;
            c.shape[2] = op % 2 ? 3 : 97; /* many rows a group, or a group a row */
            c.tx = floats[op % 3];
            c.to = op == R_ARGMAX ? GLC_DTYPE_U32 : floats[(op + 1) % 3];
            c.causal = op == R_SOFTMAX;
            run_case(dev, &seed, &c);
        }
        glc_device_destroy(dev);
    }
}

/* llvmpipe's rows of whole vec4s (reduce_row4): x (and an f32 weight) read
 * through buffer textures up to the texel limit, narrowed to 256 texels
 * (1024 values: 8 rows of 128 as texels, 9 from SSBOs; one row of 1024
 * and its weight as texels, two from SSBOs: the weight goes with its rows),
 * and from SSBOs on a device without them; softmax causal and not,
 * rms_norm with and without a weight; then 24 generated cases (op, rows,
 * length, weight, a limit within 2 texels of the rows' size). */
static void test_row4_reads(void **state)
{
    static const struct { int op; int64_t rows, n; int causal; glc_dtype tw; } cs[] = {
        {R_SOFTMAX, 8, 128, 1, 0},  {R_SOFTMAX, 9, 128, 0, 0},
        {R_RMS, 8, 128, 0, GLC_DTYPE_F32}, {R_RMS, 9, 128, 0, 0},
        {R_RMS, 2, 1024, 0, GLC_DTYPE_F32}, {R_RMS, 1, 1024, 0, GLC_DTYPE_F32}};
    glc_device *dev = open_dev(0);
    int have = dev->info.features.texel_buffers, texel;
    uint64_t seed = 0x40e;
    size_t i;
    (void)state;
    for (texel = 0; texel <= have; texel++) {
        TU_TEXEL_ROUND(dev, texel, 256);
        for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            rcase c;
            memset(&c, 0, sizeof c);
            c.op = cs[i].op;
            c.rank = 2;
            c.shape[0] = cs[i].rows;
            c.shape[1] = cs[i].n;
            c.tx = c.to = GLC_DTYPE_F32;
            c.tw = cs[i].tw;
            c.causal = cs[i].causal;
            c.scale = 0.7f;
            run_case(dev, &seed, &c);
        }
    }
    /* generated: softmax (causal or not) or rms_norm (a weight or none),
     * 1-40 rows of 4-512 values (now and then not whole vec4s), a texel
     * limit within 2 texels of the rows' size */
    for (i = 0; have && i < 24; i++) {
        uint64_t r = tu_rand(&seed);
        rcase c;
        int64_t total;
        memset(&c, 0, sizeof c);
        c.op = r % 2 ? R_RMS : R_SOFTMAX;
        c.rank = 2;
        c.shape[0] = 1 + (int64_t)((r >> 4) % 40);
        c.shape[1] = 4 * (1 + (int64_t)((r >> 12) % 128)) + ((r >> 20) % 7 == 0 ? 2 : 0);
        c.tx = c.to = GLC_DTYPE_F32;
        c.tw = c.op == R_RMS && (r >> 24) % 2 ? GLC_DTYPE_F32 : 0;
        c.causal = c.op == R_SOFTMAX && (r >> 25) % 2;
        c.scale = 0.5f;
        total = c.shape[0] * c.shape[1];
        TU_TEXEL_ROUND(dev, 1, tu_texel_limit_near(r >> 40, total));
        run_case(dev, &seed, &c);
    }
    glc_device_destroy(dev);
}

/* A real grid past 65535 groups: rows of 2 elements, 64-128 rows a group. */
static void test_big_grid(void **state)
{
    glc_device *dev = open_dev(1);
    uint64_t seed = 66;
    rcase c;
    (void)state;
    memset(&c, 0, sizeof c);
    c.op = R_SUM;
    c.rank = 2;
    c.shape[0] = 65536 * 128 + 77;
    c.shape[1] = 2;
    c.tx = GLC_DTYPE_F16;
    c.to = GLC_DTYPE_F16;
    run_case(dev, &seed, &c);
    glc_device_destroy(dev);
}

/* Rows longer than llvmpipe's 65535 loop iterations per invocation allow
 * a team of 64 lanes (2 elements an iteration): each op is split into
 * segments and a merge pass. Before, sum read only the first 8388480
 * elements, argmax missed a maximum at 8999000 and softmax left 611648
 * outputs unwritten, all with GLC_OK. The sizes cross the cap on any
 * device that has one (the split is planned from max_loop_iterations). */
static void test_loop_cap_long_rows(void **state)
{
    glc_device *dev = open_dev(0);
    uint64_t seed = 77;
    rcase c;
    (void)state;
    if (!dev->info.limits.max_loop_iterations)
        dev->info.limits.max_loop_iterations = 65535; /* plan as llvmpipe must */
    memset(&c, 0, sizeof c);
    c.op = R_SUM;
    c.rank = 1;
    c.shape[0] = 9000000;
    c.tx = c.to = GLC_DTYPE_F32;
    run_case(dev, &seed, &c);
    c.op = R_ARGMAX;
    c.to = GLC_DTYPE_I32;
    c.peak = 8999000 + 1;
    run_case(dev, &seed, &c);
    memset(&c, 0, sizeof c);
    c.op = R_SOFTMAX;
    c.rank = 2;
    c.shape[0] = 1;
    c.shape[1] = 4500000;
    c.tx = c.to = GLC_DTYPE_F32;
    run_case(dev, &seed, &c);
    glc_device_destroy(dev);
}

/* A small forced cap splits short rows: every op, 16-bit tensors whose
 * rows share words, causal softmax, norms with weight and bias, in place,
 * the llvmpipe (with a folded grid; 3 and 9 rows) and the GPU team
 * shapes. */
static void test_loop_cap_forced(void **state)
{
    uint64_t seed = 78;
    int gpu, op, k = 0;
    (void)state;
    for (gpu = 0; gpu < 2; gpu++) {
        glc_device *dev = open_dev(0);
        if (gpu)
            snprintf(dev->renderer, sizeof dev->renderer, "%s", "not the software rasterizer");
        dev->info.limits.max_loop_iterations = 160;
        if (!gpu) { /* and the (row, segment) grid folded into 3-D */
            dev->info.limits.max_group_count[0] = 3;
            dev->info.limits.max_group_count[1] = 2;
            dev->info.limits.max_group_count[2] = 64;
        }
        for (op = R_SOFTMAX; op <= R_ARGMAX; op++, k++) {
            rcase c;
            memset(&c, 0, sizeof c);
            c.op = op;
            c.rank = 2;
            c.shape[0] = 3;
            c.shape[1] = gpu ? 40001 : 20001;
            c.tx = floats[k % 3];
            c.to = op == R_ARGMAX ? GLC_DTYPE_U32 : floats[(k + 1) % 3];
            c.tw = op == R_RMS || op == R_LAYER ? floats[(k + 2) % 3] : 0;
            c.tb = op == R_LAYER ? GLC_DTYPE_F32 : 0;
            c.causal = op == R_SOFTMAX;
            c.off = 9000 - 3; /* keys past 9000 + q masked: whole segments of them */
            c.ties = op == R_ARGMAX && gpu;
            c.peak = op == R_ARGMAX && !gpu ? 17000 : 0;
            c.inplace = op == R_RMS && c.tx == c.to;
            run_case(dev, &seed, &c);
            if (!gpu) { /* rows too long for one invocation: teams, split */
                c.shape[0] = 9;
                run_case(dev, &seed, &c);
            }
        }
        glc_device_destroy(dev);
    }
}

/* add_rms_norm (made by the compiler's fusion: h = x + r into out, the
 * norm of h after it) split into segments under a small cap: pass 1 writes
 * h, pass 2 the norm from x + r again. Run through the op table. */
static void test_loop_cap_add_rms_norm(void **state)
{
    int64_t rows = 3, n = 20001, numel = rows * n, noff = numel + 1, sx[2] = {3, 20001};
    int64_t sw[1] = {20001}, so[1] = {2 * numel + 1};
    float *x = malloc((size_t)numel * 4), *r = malloc((size_t)numel * 4);
    float *w = malloc((size_t)n * 4), *ref = malloc((size_t)(2 * numel + 1) * 4);
    float *got = malloc((size_t)(2 * numel + 1) * 4);
    glc_device *dev = open_dev(0);
    uint64_t seed = 79;
    ot_tensor X, R, W, O;
    glc__op_args args;
    glc_view v[4];
    glc_session *s;
    int64_t i;
    (void)state;
    ot_fill(&seed, x, (size_t)numel, -3.0f, 3.0f);
    ot_fill(&seed, r, (size_t)numel, -1.0f, 1.0f);
    ot_fill(&seed, w, (size_t)n, -2.0f, 2.0f);
    for (i = 0; i < numel; i++)
        ref[i] = x[i] + r[i];
    ref_rms_norm(ref, rows, n, w, 1e-6f, ref + noff);
    X = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sx, x);
    R = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sx, r);
    W = ot_tensor_new(dev, GLC_DTYPE_F32, 1, sw, w);
    O = ot_tensor_new(dev, GLC_DTYPE_F32, 1, so, NULL);
    v[0] = X.view;
    v[1] = R.view;
    v[2] = W.view;
    v[3] = O.view;
    glc__op_args_init(&args, GLC__OP_ADD_RMS_NORM, 3, 1);
    args.norm.at = noff;
    dev->info.limits.max_loop_iterations = 160;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    if (glc__op_run(s, &args, v, NULL) != GLC_OK)
        fail_msg("add_rms_norm: %s", glc_device_errmsg(dev));
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    assert_true(ot_read(&O, got));
    ot_check("add_rms_norm h", got, ref, (size_t)numel, OT_NMSE_DEFAULT);
    ot_check("add_rms_norm norm", got + noff, ref + noff, (size_t)numel, OT_NMSE_DEFAULT);
    ot_free(&X);
    ot_free(&R);
    ot_free(&W);
    ot_free(&O);
    free(x);
    free(r);
    free(w);
    free(ref);
    free(got);
    glc_device_destroy(dev);
}

static void test_errors(void **state)
{
    tu_log log;
    glc_device *dev = tu_device(&log);
    glc_session *s;
    int64_t s23[2] = {2, 3}, s2[1] = {2}, s3[1] = {3}, s4[1] = {4};
    ot_tensor a = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s23, NULL);
    ot_tensor o = ot_tensor_new(dev, GLC_DTYPE_F32, 2, s23, NULL);
    ot_tensor r2 = ot_tensor_new(dev, GLC_DTYPE_F32, 1, s2, NULL);
    ot_tensor r3 = ot_tensor_new(dev, GLC_DTYPE_F32, 1, s3, NULL);
    ot_tensor w4 = ot_tensor_new(dev, GLC_DTYPE_F16, 1, s4, NULL);
    ot_tensor i23 = ot_tensor_new(dev, GLC_DTYPE_I32, 2, s23, NULL);
    ot_tensor i2 = ot_tensor_new(dev, GLC_DTYPE_I32, 1, s2, NULL);
    glc_view past;
    glc_dispatch_stats st;
    (void)state;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    assert_int_equal(glc_op_softmax(s, a.view, NULL, r3.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "softmax: output 0 is [3] f32, the op makes [2, 3] f32");
    assert_int_equal(glc_op_softmax(s, i23.view, NULL, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "softmax: x [2, 3] i32: storage must be f32, f16 or bf16");
    assert_int_equal(glc_op_rms_norm(s, a.view, o.view, 0, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "rms_norm: weight [2, 3] f32 does not fit x [2, 3] f32 (float [3] wanted)");
    assert_int_equal(glc_op_layer_norm(s, a.view, r3.view, w4.view, 0, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "layer_norm: bias [4] f16 does not fit x [2, 3] f32 (float [3] wanted)");
    assert_int_equal(glc_op_layer_norm(s, a.view, ot_none(), ot_none(), -1.0f, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "layer_norm: eps -1: must be >= 0 and finite");
    assert_int_equal(glc_op_sum(s, a.view, r3.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "sum: output 0 is [3] f32, the op makes [2] f32");
    assert_int_equal(glc_op_mean(s, a.view, i2.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "mean: x [2, 3] f32, out [2] i32: storage must be f32, f16 or bf16");
    assert_int_equal(glc_op_argmax(s, a.view, r2.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "argmax: x [2, 3] f32, out [2] f32: out must be i32 or u32");
    past = a.view;
    past.offset = glc_buffer_size(a.buf) - 16;
    assert_int_equal(glc_op_softmax(s, past, NULL, o.view), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "softmax: tensor 0: bytes [");
    tu_assert_contains(glc_device_errmsg(dev), "run past the buffer's");
    assert_int_equal(glc_op_rms_norm(s, a.view, ot_none(), 0, past), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "rms_norm: tensor 2: bytes [");
    assert_int_equal(glc_op_argmax(NULL, a.view, i2.view), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_op_sum(s, a.view, ot_none()), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_finish(s, &st), GLC_OK);
    assert_int_equal(st.dispatches, 0); /* nothing was recorded */
    assert_int_equal(log.last_status, GLC_ERR_INVALID_ARG);
    ot_free(&a);
    ot_free(&o);
    ot_free(&r2);
    ot_free(&r3);
    ot_free(&w4);
    ot_free(&i23);
    ot_free(&i2);
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_variants),
        cmocka_unit_test(test_grid_folding),
        cmocka_unit_test(test_row4_reads),
        cmocka_unit_test(test_big_grid),
        cmocka_unit_test(test_loop_cap_long_rows),
        cmocka_unit_test(test_loop_cap_forced),
        cmocka_unit_test(test_loop_cap_add_rms_norm),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
