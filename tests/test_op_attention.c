/*
 * Attention (sdpa prefill, sdpa_decode) against the C reference: random
 * q/k/v, causal and not, grouped-query ratios 1 to 4, a prefill after a
 * cache (Tk > Tq), kv_len < Tk, f16 k/v, odd and unequal head dims, decode
 * over 1 to 4099 keys (one and several chunks) and against the prefill of
 * the same row. The cases on the device's own variant (llvmpipe: rows),
 * default and minimum limits, are in the case table of test_ops.c (eagerly
 * and through plans); here three shapes run on the GPU variants (tile and split, forced by hiding the renderer's
 * name), with the device's shared memory and with the 16 KiB minimum
 * (smaller tiles). Then folded grids, a grid past 65535 groups, llvmpipe's
 * loop cap, and the errors.
 */
#include "testutil.h"

#include "device.h"
#include "optest.h"
#include "ref_attention.h"

#include <math.h>

enum { MODE_DEFAULT, MODE_GPU, MODE_MIN, MODE_MIN_GPU, MODE_COUNT };

static const char *mode_names[MODE_COUNT] = {"default", "gpu variants", "limits min",
                                             "limits min, gpu variants"};

/* The plans choose the GPU variants on every renderer but llvmpipe: rename
 * it to run them here. */
static void force_gpu_variants(glc_device *dev)
{
    snprintf(dev->renderer, sizeof dev->renderer, "test renderer");
}

static glc_device *open_mode(int mode)
{
    glc_device_desc d = tu_desc(NULL);
    glc_device *dev;
    if (mode == MODE_MIN || mode == MODE_MIN_GPU)
        d.flags = GLC_DEVICE_LIMITS_MIN;
    dev = tu_device_desc(&d);
    if (mode == MODE_GPU || mode == MODE_MIN_GPU)
        force_gpu_variants(dev);
    return dev;
}

typedef struct sdpa_case {
    int64_t tq, tk, hq, hkv, d, dv;
    glc_dtype kt, vt;
    int use_desc;     /* 0: desc NULL */
    glc_sdpa_desc desc;
} sdpa_case;

static ref_sdpa_shape shape_of(const sdpa_case *c)
{
    ref_sdpa_shape r;
    memset(&r, 0, sizeof r);
    r.tq = c->tq;
    r.tk = c->tk;
    r.hq = c->hq;
    r.hkv = c->hkv;
    r.d = c->d;
    r.dv = c->dv;
    r.kv_len = c->use_desc && c->desc.kv_len ? c->desc.kv_len : c->tk;
    r.scale = c->use_desc && c->desc.scale != 0 ? c->desc.scale : 1.0f / sqrtf((float)c->d);
    r.causal = c->use_desc && c->desc.causal;
    r.q_offset = c->use_desc && c->desc.q_offset != -1 ? c->desc.q_offset : r.kv_len - c->tq;
    return r;
}

/* Runs one case as prefill (and, for Tq = 1, as decode too, checking the
 * two against each other); fails the test on a mismatch or a touched
 * sentinel. */
static void run_case(glc_device *dev, uint64_t *seed, const sdpa_case *c, int decode,
                     const char *mode)
{
    int64_t sq[3] = {c->tq, c->hq, c->d}, sk[3] = {c->tk, c->hkv, c->d};
    int64_t sv[3] = {c->tk, c->hkv, c->dv}, so[3] = {c->tq, c->hq, c->dv}, nscratch[1];
    size_t nq = (size_t)(c->tq * c->hq * c->d), nk = (size_t)(c->tk * c->hkv * c->d);
    size_t nv = (size_t)(c->tk * c->hkv * c->dv), no = (size_t)(c->tq * c->hq * c->dv);
    float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nv * 4);
    float *ref = malloc(no * 4), *got = malloc(no * 4), *got2 = malloc(no * 4);
    ref_sdpa_shape rs = shape_of(c);
    const glc_sdpa_desc *desc = c->use_desc ? &c->desc : NULL;
    ot_tensor Q, K, V, O, O2, S;
    glc_session *s;
    glc_status st;
    char what[256];
    ot_fill(seed, q, nq, -2.0f, 2.0f);
    ot_fill(seed, k, nk, -2.0f, 2.0f);
    ot_fill(seed, v, nv, -1.0f, 1.0f);
    ot_round(c->kt, k, nk);
    ot_round(c->vt, v, nv);
    ref_sdpa(&rs, q, k, v, ref);
    Q = ot_tensor_new(dev, GLC_DTYPE_F32, 3, sq, q);
    K = ot_tensor_new(dev, c->kt, 3, sk, k);
    V = ot_tensor_new(dev, c->vt, 3, sv, v);
    O = ot_tensor_new(dev, GLC_DTYPE_F32, 3, so, NULL);
    snprintf(what, sizeof what,
             "%s: %s q [%lld, %lld, %lld], k %s [%lld, %lld, %lld], v %s dv %lld, causal %d, "
             "q_offset %lld, kv_len %lld",
             mode, decode ? "sdpa_decode" : "sdpa", (long long)c->tq, (long long)c->hq,
             (long long)c->d, glc_dtype_name(c->kt), (long long)c->tk, (long long)c->hkv,
             (long long)c->d, glc_dtype_name(c->vt), (long long)c->dv, rs.causal,
             (long long)rs.q_offset, (long long)rs.kv_len);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    st = glc_op_sdpa(s, Q.view, K.view, V.view, desc, O.view);
    if (st != GLC_OK)
        fail_msg("%s: %s", what, glc_device_errmsg(dev));
    if (decode) {
        nscratch[0] = glc_sdpa_decode_scratch(c->hq, c->dv, rs.kv_len);
        assert_true(nscratch[0] > 0);
        S = ot_tensor_new(dev, GLC_DTYPE_F32, 1, nscratch, NULL);
        O2 = ot_tensor_new(dev, GLC_DTYPE_F32, 3, so, NULL);
        st = glc_op_sdpa_decode(s, Q.view, K.view, V.view, desc, S.view, O2.view);
        if (st != GLC_OK)
            fail_msg("%s: %s", what, glc_device_errmsg(dev));
    }
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    if (!ot_read(&O, got))
        fail_msg("%s: a sentinel byte changed", what);
    ot_check(what, got, ref, no, OT_NMSE_MATMUL);
    if (decode) {
        float *scratch = malloc((size_t)nscratch[0] * 4);
        if (!ot_read(&S, scratch))
            fail_msg("%s: a scratch sentinel byte changed", what);
        if (!ot_read(&O2, got2))
            fail_msg("%s: a sentinel byte changed", what);
        ot_check(what, got2, ref, no, OT_NMSE_MATMUL);
        ot_check("decode against prefill", got2, got, no, OT_NMSE_MATMUL);
        free(scratch);
        ot_free(&S);
        ot_free(&O2);
    }
    ot_free(&Q);
    ot_free(&K);
    ot_free(&V);
    ot_free(&O);
    free(q);
    free(k);
    free(v);
    free(ref);
    free(got);
    free(got2);
}

static sdpa_case mk(int64_t tq, int64_t tk, int64_t hq, int64_t hkv, int64_t d, int64_t dv,
                    glc_dtype kt, glc_dtype vt)
{
    sdpa_case c;
    memset(&c, 0, sizeof c);
    c.tq = tq;
    c.tk = tk;
    c.hq = hq;
    c.hkv = hkv;
    c.d = d;
    c.dv = dv;
    c.kt = kt;
    c.vt = vt;
    return c;
}

static sdpa_case with(sdpa_case c, int causal, int64_t q_offset, int64_t kv_len, float scale)
{
    c.use_desc = 1;
    c.desc.causal = causal;
    c.desc.q_offset = q_offset;
    c.desc.kv_len = kv_len;
    c.desc.scale = scale;
    return c;
}

#define F32 GLC_DTYPE_F32
#define F16 GLC_DTYPE_F16

/* Three shapes, each as prefill and decode, on the GPU variants (each shape
 * is a compile of its own there): f16 k with f32 v and GQA 4; odd dims
 * (the scalar loads), kv_len < Tk and GQA 3; the largest head dim with
 * GQA 12 (two head blocks in decode) after a cache. */
static void gpu_cases(glc_device *dev, int mode)
{
    uint64_t seed = 2000 + (uint64_t)mode;
    sdpa_case c[6];
    size_t i;
    c[0] = with(mk(37, 37, 8, 2, 40, 24, F16, F32), 1, -1, 0, 0);
    c[1] = with(mk(1, 300, 8, 2, 40, 24, F16, F32), 0, -1, 0, 0.2f);
    c[2] = with(mk(17, 23, 3, 1, 33, 7, F16, F32), 1, 3, 20, 0);
    c[3] = with(mk(1, 600, 3, 1, 33, 7, F16, F32), 0, -1, 513, 0);
    c[4] = with(mk(9, 50, 24, 2, 256, 128, F32, F16), 1, -1, 45, 0);
    c[5] = with(mk(1, 520, 24, 2, 256, 128, F32, F16), 1, -1, 0, 0);
    for (i = 0; i < sizeof c / sizeof c[0]; i++)
        run_case(dev, &seed, &c[i], c[i].tq == 1, mode_names[mode]);
}

/* Narrowed group limits fold even small grids into 3-D (shapes compiled
 * already by the GPU cases or on first use). */
static void folded_cases(glc_device *dev, int mode)
{
    uint64_t seed = 3000 + (uint64_t)mode;
    glc_device_limits saved = dev->info.limits;
    sdpa_case pre = with(mk(45, 45, 6, 2, 40, 24, F16, F32), 1, -1, 0, 0);
    sdpa_case dec = with(mk(1, 1500, 8, 1, 40, 24, F16, F32), 1, -1, 0, 0);
    dev->info.limits.max_group_count[0] = 3;
    dev->info.limits.max_group_count[1] = 2;
    dev->info.limits.max_group_count[2] = 64;
    run_case(dev, &seed, &pre, 0, mode_names[mode]);
    run_case(dev, &seed, &dec, 1, mode_names[mode]);
    dev->info.limits = saved;
}

/* (the rows variant's cases, default and minimum limits: test_ops) */
static void test_default(void **state)
{
    glc_device *dev = open_mode(MODE_DEFAULT);
    (void)state;
    folded_cases(dev, MODE_DEFAULT);
    glc_device_destroy(dev);
}

static void test_gpu_variants(void **state)
{
    glc_device *dev = open_mode(MODE_GPU);
    (void)state;
    gpu_cases(dev, MODE_GPU);
    folded_cases(dev, MODE_GPU);
    glc_device_destroy(dev);
}

static void test_limits_min_gpu_variants(void **state)
{
    glc_device *dev = open_mode(MODE_MIN_GPU);
    (void)state;
    gpu_cases(dev, MODE_MIN_GPU);
    glc_device_destroy(dev);
}

/* A real grid past 65535 groups (the limit per dim of llvmpipe and of
 * the ES minimum): decode's combine pass runs a group per query head, 65540
 * of them here, all reading one kv head of 300 keys (two chunks). */
static void test_big_grid(void **state)
{
    uint64_t seed = 4000;
    glc_device *dev = open_mode(MODE_DEFAULT);
    sdpa_case c = with(mk(1, 300, 65540, 1, 1, 1, F32, F32), 1, -1, 0, 0);
    (void)state;
    run_case(dev, &seed, &c, 1, mode_names[MODE_DEFAULT]);
    glc_device_destroy(dev);
}

/* llvmpipe stops every loop of an invocation after 65535 iterations in all:
 * the rows variant scores 32 keys a pass when 16 would run past that, and
 * past what one invocation holds even so, prefill splits the keys into
 * chunks merged by sdpa_combine (54000 keys at head dim 64 were refused
 * before). Planned from the device's max_loop_iterations, so any device
 * plans as llvmpipe must when told its cap is 65535. */
static void test_llvmpipe_loop_cap(void **state)
{
    uint64_t seed = 5000;
    glc_device *dev = tu_device(NULL);
    sdpa_case c = mk(2, 26000, 1, 1, 64, 64, F16, F16); /* KB 32 */
    sdpa_case c2 = with(mk(3, 54000, 2, 1, 64, 64, F16, F32), 1, 53990, 0, 0);
    (void)state;
    dev->info.limits.max_loop_iterations = 65535;
    run_case(dev, &seed, &c, 0, mode_names[MODE_DEFAULT]);
    run_case(dev, &seed, &c2, 0, mode_names[MODE_DEFAULT]); /* causal: rows see 53991.. keys */
    glc_device_destroy(dev);
}

/* A small forced cap: prefill in chunks of keys on the rows variant (GPUs
 * too: their tile variant would loop too long), causal rows whose last
 * chunks are all masked, GQA, f16 k/v; decode's merge; and a refusal where
 * no chunk fits, never a wrong result. */
static void test_loop_cap_forced(void **state)
{
    uint64_t seed = 5100;
    int mode;
    (void)state;
    for (mode = MODE_DEFAULT; mode <= MODE_GPU; mode++) {
        glc_device *dev = open_mode(mode);
        sdpa_case a = with(mk(5, 3000, 4, 2, 64, 32, F32, F16), 1, 0, 2900, 0);
        sdpa_case b = mk(1, 1000, 2, 1, 36, 40, F16, F16);
        int64_t sq[3] = {1, 1, 256}, sk[3] = {600, 1, 256};
        ot_tensor q, k, o;
        glc_session *s;
        dev->info.limits.max_loop_iterations = 2000;
        run_case(dev, &seed, &a, 0, mode_names[mode]);
        run_case(dev, &seed, &b, 1, mode_names[mode]);
        dev->info.limits.max_loop_iterations = 150; /* less than one pass over d 256 */
        q = ot_tensor_new(dev, F32, 3, sq, NULL);
        k = ot_tensor_new(dev, F16, 3, sk, NULL);
        o = ot_tensor_new(dev, F32, 3, sq, NULL);
        assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
        assert_int_equal(glc_op_sdpa(s, q.view, k.view, k.view, NULL, o.view),
                         GLC_ERR_INVALID_ARG);
        assert_string_equal(glc_device_errmsg(dev),
                            "sdpa: 600 keys with head dims 256 and 256: more than this device "
                            "runs in one shader invocation (150 loop iterations in all)");
        assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
        ot_free(&q);
        ot_free(&k);
        ot_free(&o);
        glc_device_destroy(dev);
    }
}

static void test_errors(void **state)
{
    tu_log log;
    glc_device *dev = tu_device(&log);
    glc_session *s;
    int64_t s_q[3] = {4, 6, 8}, s_k[3] = {10, 4, 8}, s_k3[3] = {10, 3, 8}, s_k9[3] = {10, 3, 9};
    int64_t s_o[3] = {4, 6, 8}, s_q1[3] = {1, 6, 8}, s_o1[3] = {1, 6, 8}, s_d[3] = {4, 6, 300};
    int64_t s_kd[3] = {10, 3, 300};
    int64_t s_small[1] = {5}, n_scratch[1];
    ot_tensor q = ot_tensor_new(dev, F32, 3, s_q, NULL);
    ot_tensor k = ot_tensor_new(dev, F32, 3, s_k, NULL);       /* 4 kv heads: 6 % 4 != 0 */
    ot_tensor k3 = ot_tensor_new(dev, F32, 3, s_k3, NULL);
    ot_tensor k9 = ot_tensor_new(dev, F32, 3, s_k9, NULL);
    ot_tensor k16 = ot_tensor_new(dev, GLC_DTYPE_BF16, 3, s_k3, NULL);
    ot_tensor o = ot_tensor_new(dev, F32, 3, s_o, NULL);
    ot_tensor o16 = ot_tensor_new(dev, F16, 3, s_o, NULL);
    ot_tensor q1 = ot_tensor_new(dev, F32, 3, s_q1, NULL);
    ot_tensor o1 = ot_tensor_new(dev, F32, 3, s_o1, NULL);
    ot_tensor qd = ot_tensor_new(dev, F32, 3, s_d, NULL);
    ot_tensor kd = ot_tensor_new(dev, F32, 3, s_kd, NULL);
    ot_tensor small = ot_tensor_new(dev, F32, 1, s_small, NULL);
    ot_tensor scr16, scr;
    glc_sdpa_desc desc;
    glc_dispatch_stats st;
    glc_view past;
    (void)state;
    n_scratch[0] = glc_sdpa_decode_scratch(6, 8, 10);
    assert_int_equal(n_scratch[0], 6 * 1 * 10);
    assert_int_equal(glc_sdpa_decode_scratch(32, 128, 8192), 32 * 32 * 130);
    assert_int_equal(glc_sdpa_decode_scratch(0, 128, 8192), 0);
    scr = ot_tensor_new(dev, F32, 1, n_scratch, NULL);
    scr16 = ot_tensor_new(dev, F16, 1, n_scratch, NULL);
    memset(&desc, 0, sizeof desc);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);

    assert_int_equal(glc_op_sdpa(s, q.view, k.view, k.view, NULL, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "sdpa: q [4, 6, 8] f32, k [10, 4, 8] f32: 6 query "
                                                "heads are not a multiple of 4 kv heads");
    assert_int_equal(glc_op_sdpa(s, q.view, k9.view, k9.view, NULL, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "sdpa: q [4, 6, 8] f32 and k [10, 3, 9] f32: head dims differ (8 vs 9)");
    desc.kv_len = 11;
    assert_int_equal(glc_op_sdpa(s, q.view, k3.view, k3.view, &desc, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "sdpa: kv_len 11 with k [10, 3, 8] f32: must be in [0, 10]");
    desc.kv_len = 0;
    desc.q_offset = -2;
    assert_int_equal(glc_op_sdpa(s, q.view, k3.view, k3.view, &desc, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "sdpa: q_offset -2: must be >= 0, or -1 for kv_len - Tq");
    desc.q_offset = -1;
    desc.causal = 1;
    desc.kv_len = 3;
    assert_int_equal(glc_op_sdpa(s, q.view, k3.view, k3.view, &desc, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "sdpa: causal with q [4, 6, 8] f32 and kv_len 3: query row 0 would sit at "
                        "position -1, before every key");
    memset(&desc, 0, sizeof desc);
    assert_int_equal(glc_op_sdpa(s, q.view, k16.view, k3.view, NULL, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "sdpa: q [4, 6, 8] f32, k [10, 3, 8] bf16, v [10, 3, 8] f32: q must be "
                        "f32, k and v f32 or f16");
    assert_int_equal(glc_op_sdpa(s, k16.view, k3.view, k3.view, NULL, o.view),
                     GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "q must be f32");
    assert_int_equal(glc_op_sdpa(s, q.view, k3.view, k3.view, NULL, o16.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "sdpa: output 0 is [4, 6, 8] f16, the op makes [4, 6, 8] f32");
    assert_int_equal(glc_op_sdpa(s, qd.view, kd.view, kd.view, NULL, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "sdpa: q [4, 6, 300] f32, v [10, 3, 300] f32: "
                                                "head dims up to 256 are supported");
    assert_int_equal(glc_op_sdpa(s, q.view, k3.view, small.view, NULL, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "sdpa: q [4, 6, 8] f32, k [10, 3, 8] f32, v [5] "
                                                "f32: each must be rank 3 [T, H, D]");
    desc.scale = NAN;
    assert_int_equal(glc_op_sdpa(s, q.view, k3.view, k3.view, &desc, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "sdpa: scale nan is not finite");
    desc.scale = 0;
    past = k3.view;
    past.offset = glc_buffer_size(k3.buf) - 64;
    assert_int_equal(glc_op_sdpa(s, q.view, past, k3.view, NULL, o.view), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "sdpa: tensor 1: bytes [");
    tu_assert_contains(glc_device_errmsg(dev), "run past the buffer's");

    /* decode */
    assert_int_equal(glc_op_sdpa_decode(s, q.view, k3.view, k3.view, NULL, scr.view, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "sdpa_decode: q [4, 6, 8] f32: decode takes one query row");
    assert_int_equal(glc_op_sdpa_decode(s, q1.view, k.view, k.view, NULL, scr.view, o1.view),
                     GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "sdpa_decode: q [1, 6, 8] f32, k [10, 4, 8] f32: 6 "
                                               "query heads are not a multiple of 4 kv heads");
    assert_int_equal(glc_op_sdpa_decode(s, q1.view, k3.view, k3.view, NULL, small.view, o1.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "sdpa_decode: needs 240 bytes of scratch");
    assert_int_equal(glc_op_sdpa_decode(s, q1.view, k3.view, k3.view, NULL, ot_none(), o1.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "sdpa_decode: needs 240 bytes of scratch");
    assert_int_equal(glc_op_sdpa_decode(s, q1.view, k3.view, k3.view, NULL, scr16.view, o1.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "sdpa_decode: scratch is f16, must be f32");
    past = scr.view;
    past.offset = glc_buffer_size(scr.buf) - 64;
    assert_int_equal(glc_op_sdpa_decode(s, q1.view, k3.view, k3.view, NULL, past, o1.view),
                     GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "sdpa_decode: scratch: bytes [");
    past.offset = 4;
    assert_int_equal(glc_op_sdpa_decode(s, q1.view, k3.view, k3.view, NULL, past, o1.view),
                     GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "sdpa_decode: scratch: offset 4 is not a multiple");
    desc.kv_len = 12;
    assert_int_equal(glc_op_sdpa_decode(s, q1.view, k3.view, k3.view, &desc, scr.view, o1.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "sdpa_decode: kv_len 12 with k [10, 3, 8] f32: must be in [0, 10]");
    assert_int_equal(glc_op_sdpa(NULL, q.view, k3.view, k3.view, NULL, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_op_sdpa_decode(NULL, q1.view, k3.view, k3.view, NULL, scr.view, o1.view),
                     GLC_ERR_INVALID_ARG);

    assert_int_equal(glc_session_finish(s, &st), GLC_OK);
    assert_int_equal(st.dispatches, 0); /* nothing was recorded */
    assert_int_equal(log.last_status, GLC_ERR_INVALID_ARG);
    ot_free(&q);
    ot_free(&k);
    ot_free(&k3);
    ot_free(&k9);
    ot_free(&k16);
    ot_free(&o);
    ot_free(&o16);
    ot_free(&q1);
    ot_free(&o1);
    ot_free(&qd);
    ot_free(&kd);
    ot_free(&small);
    ot_free(&scr);
    ot_free(&scr16);
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default),
        cmocka_unit_test(test_gpu_variants),
        cmocka_unit_test(test_limits_min_gpu_variants),
        cmocka_unit_test(test_big_grid),
        cmocka_unit_test(test_llvmpipe_loop_cap),
        cmocka_unit_test(test_loop_cap_forced),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
