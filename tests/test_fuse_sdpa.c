/*
 * The sdpa_rope fusion (src/core/fuse.c): a decode layer's rope_qkv (q
 * rotated, the token's rotated k row and its v row into the caches) and
 * the sdpa_decode right after it become one sdpa_decode whose kernels
 * rotate q as they read it, write the caches' rows and read the token's
 * key from its rows (glsl/sdpa.glsl ROPE; on GPUs the node runs rope_qkv's
 * dispatch, then the split kernel). Generated cases (seeded): f32
 * and f16 caches, NEOX and NORMAL, partial rope_dim, freq_factors, 1 to 4
 * query heads a kv head, head dims 4 to 64, caches of 9 to 300 rows
 * (more than one chunk of keys: the combine pass after), the caches
 * filled with random rows first, then decode steps with kv_len = pos + 1
 * (a small cache decoded from position 0 to its end: kv_len at every
 * value), kv_len short of pos + 1, and a position past the cache
 * (nothing written, nothing substituted). The
 * fused plan, GLC_COMPILE_NO_FUSE and a plain C reference (double) agree
 * on the attention output and on both caches, on the device's own variant
 * (llvmpipe: the rows kernel) and on the GPU one (forced by hiding the
 * renderer's name, under GLC_DEVICE_VALIDATE's barrier oracle). Where the
 * device binds fewer than 7 storage blocks a shader (GLC_LIMITS=min), or
 * rope(q) has another reader, the pattern stays apart.
 * Where the projection runs on matvec (GPUs; here GLC_MATMUL=matvec) the
 * qkv_rope fusion takes the rope into the projection's epilogue instead
 * (glsl/matvec.comp QKV_ROPE: q rotated, the caches' rows written) and
 * the attention reads the caches; where it runs on matmul_q's split
 * variant (Q8_0, Q4_0) that kernel's tiles do the same: the same cases
 * with f32, f16, Q8_0 and Q4_0 weights, model widths 8 to 64, with and
 * without Q/K/V biases, on matvec's lanes across K and (tuned off) its
 * subgroup-a-slot layout.
 */
#include "testutil.h"

#include "device.h"
#include "op_run.h"
#include "optest.h"
#include "ref_attention.h"
#include "ref_quant.h"
#include "ref_rope.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXDM 64  /* model width: the projections' K (6 unless qkv_rope's cases) */
#define MAXS 300  /* cache rows */
#define MAXH 8    /* query heads */
#define MAXD 64
#define CASES 3

typedef struct scase {
    glc_dtype cache;
    int neox, ff;
    int64_t hq, hk, d, rope_dim, rows; /* rope_dim 0: D */
    int64_t dm;                        /* model width (0: 6) */
    glc_dtype wt;                      /* the projections' weights (0: f32) */
    glc_dtype wtv;                     /* V's where not wt's (0: wt): Q | K and V apart */
    int bias;                          /* the projections add biases (bq, bk, bv) */
} scase;

static scase gen(uint64_t *seed, int i)
{
    static const int64_t ds[] = {4, 8, 12, 16, 32, 64};
    scase c;
    int64_t group;
    memset(&c, 0, sizeof c); /* (wtv, bias: 0 unless qkv_rope's cases set them) */
    group = 1 + (int64_t)(tu_rand(seed) % 4);
    c.cache = tu_rand(seed) % 2 ? GLC_DTYPE_F16 : GLC_DTYPE_F32;
    c.neox = (int)(tu_rand(seed) % 2);
    c.ff = (int)(tu_rand(seed) % 2);
    c.hk = 1 + (int64_t)(tu_rand(seed) % 2);
    c.hq = c.hk * group;
    c.d = ds[tu_rand(seed) % 6];
    c.rope_dim = 0;
    if (tu_rand(seed) % 3 == 0) /* partial: an even rope_dim below or at D */
        c.rope_dim = 2 * (1 + (int64_t)(tu_rand(seed) % (uint64_t)(c.d / 2)));
    c.rows = i % 3 == 2 ? 260 + (int64_t)(tu_rand(seed) % 41) : 9 + (int64_t)(tu_rand(seed) % 30);
    c.dm = 6;
    c.wt = GLC_DTYPE_F32;
    return c;
}

/* The dtype of projection w (0 q, 1 k, 2 v) */
static glc_dtype wdt(const scase *c, int w)
{
    return w == 2 && c->wtv ? c->wtv : c->wt;
}

/* x W^T (+ b) for a param W [ws] of dtype wt (GGML blocks: matmul_q),
 * with bias a param "b" + name's second letter, f32 [ws[0]] */
static glc_tensor proj_node(glc_graph *g, glc_tensor x, const char *name, glc_dtype wt,
                            const int64_t *ws, int bias)
{
    glc_matmul_desc nt = {1};
    glc_tensor w = glc_graph_param(g, name, wt, 2, ws), b = glc_none();
    char bn[3] = {'b', name[1], 0};
    if (bias)
        b = glc_graph_param(g, bn, GLC_DTYPE_F32, 1, ws);
    return glc_dtype_size(wt) ? glc_matmul(g, x, w, b, &nt) : glc_matmul_q(g, x, w, b);
}

/* With qr_out, rope(q) is an output too: a second reader of the rotated
 * q, which the fusion must leave apart (its kernel never writes q). */
static glc_plan *build(glc_device *dev, const scase *c, uint32_t flags, int qr_out)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_rope_desc rd;
    glc_sdpa_desc sd;
    glc_tensor x, pos, ff = glc_none(), q, k, v, kc, vc;
    int64_t one = 1, xs[2] = {1, c->dm}, s3[3], ws[2], len;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    len = glc_graph_var(g, "L", 1, c->rows);
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    pos = glc_graph_input(g, "pos", GLC_DTYPE_I32, 1, &one);
    memset(&rd, 0, sizeof rd);
    rd.mode = c->neox ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
    rd.rope_dim = (int)c->rope_dim;
    rd.base = 700.0f;
    if (c->ff) {
        int64_t n = (c->rope_dim ? c->rope_dim : c->d) / 2;
        ff = glc_graph_param(g, "ff", GLC_DTYPE_F32, 1, &n);
    }
    s3[0] = c->rows;
    s3[1] = c->hk;
    s3[2] = c->d;
    kc = glc_graph_handle(g, "kc", c->cache, 3, s3);
    vc = glc_graph_handle(g, "vc", c->cache, 3, s3);
    ws[1] = c->dm;
    s3[0] = 1;
    s3[1] = c->hq;
    ws[0] = c->hq * c->d;
    q = glc_reshape(g, proj_node(g, x, "wq", c->wt, ws, c->bias),
                    3, s3);
    s3[1] = c->hk;
    ws[0] = c->hk * c->d;
    k = glc_reshape(g, proj_node(g, x, "wk", c->wt, ws, c->bias),
                    3, s3);
    v = glc_reshape(g, proj_node(g, x, "wv", wdt(c, 2), ws, c->bias),
                    3, s3);
    q = glc_rope(g, q, pos, &rd, ff);
    k = glc_rope(g, k, pos, &rd, ff);
    kc = glc_set_rows(g, kc, k, pos);
    vc = glc_set_rows(g, vc, v, pos);
    memset(&sd, 0, sizeof sd);
    sd.q_offset = -1;
    sd.kv_len = len;
    glc_graph_output(g, "a", glc_sdpa_decode(g, q, kc, vc, &sd));
    if (qr_out)
        glc_graph_output(g, "qr", q);
    p = tu_compile(dev, g, flags);
    return p;
}

static void append(void *user, const char *text)
{
    strncat((char *)user, text, 65535 - strlen((char *)user));
}

/* y = x W^T (+ b), W [n, dm] (double sums) */
static void proj(const float *x, const float *w, const float *b, int64_t n, int64_t dm, float *y)
{
    int64_t j, k;
    for (j = 0; j < n; j++) {
        double s = b ? b[j] : 0;
        for (k = 0; k < dm; k++)
            s += (double)x[k] * w[j * dm + k];
        y[j] = (float)s;
    }
}

/* qkv: the plan expected to take the rope into the projection (qkv_rope)
 * rather than into the attention (sdpa_rope) */
static void run_case(glc_device *dev, int ci, const scase *c, uint64_t seed, int qkv)
{
    static float wq[MAXH * MAXD * MAXDM], wk[2 * MAXD * MAXDM], wv[2 * MAXD * MAXDM];
    static float ffv[MAXD / 2];
    static uint8_t wb[3][MAXH * MAXD * MAXDM]; /* block weights (fewer bytes than floats) */
    static float bq[MAXH * MAXD], bk[2 * MAXD], bv[2 * MAXD];
    float *const wts[3] = {wq, wk, wv};
    int w;
    static float cref[2][MAXS * 2 * MAXD], got[MAXS * 2 * MAXD], x[MAXDM], q[MAXH * MAXD];
    static float qr[MAXH * MAXD], kr[2 * MAXD], vr[2 * MAXD], want[MAXH * MAXD];
    static float out[2][MAXH * MAXD];
    static unsigned char bytes[MAXS * 2 * MAXD * 4];
    static char dump[65536];
    int64_t nq = c->hq * c->d, nk = c->hk * c->d, rd = c->rope_dim ? c->rope_dim : c->d;
    size_t cn = (size_t)(c->rows * nk), esz = c->cache == GLC_DTYPE_F32 ? 4 : 2;
    glc_plan *pl[2];
    glc_device_info info;
    int p, step, nsteps, fused_expected, fired;
    assert_int_equal(glc_device_get_info(dev, &info), GLC_OK);
    pl[0] = build(dev, c, 0, 0);
    pl[1] = build(dev, c, GLC_COMPILE_NO_FUSE, 0);
    /* fused: the attention reads the token's rows itself (no rope_qkv) */
    dump[0] = '\0';
    assert_int_equal(glc_plan_dump(pl[0], 0, append, dump), GLC_OK);
    fused_expected = info.limits.max_ssbo_blocks >= (c->ff ? 8u : 7u);
    if (qkv) /* the projection's define, and no rope dispatch */
        fired = strstr(dump, "QKV_ROPE") != NULL && !strstr(dump, "rope_qkv (");
    else /* the rows kernel's define, or (GPUs) the fused node's rope
          * dispatch (a dispatch lists as "kernel (op)") */
        fired = !strstr(dump, "QKV_ROPE") &&
                (strstr(dump, "ROPE") != NULL || strstr(dump, "rope_qkv (sdpa_decode)") != NULL);
    if (fired != fused_expected || (fired && strstr(dump, "rope_qkv (rope_qkv)")))
        fail_msg("case %d: %s %s, expected %s\n%s", ci, qkv ? "qkv_rope" : "sdpa_rope",
                 fired ? "fired" : "did not fire", fused_expected ? "to" : "not", dump);
    ot_fill(&seed, wq, (size_t)(nq * c->dm), -0.5f, 0.5f);
    ot_fill(&seed, wk, (size_t)(nk * c->dm), -0.5f, 0.5f);
    ot_fill(&seed, wv, (size_t)(nk * c->dm), -0.5f, 0.5f);
    ot_fill(&seed, bq, (size_t)nq, -0.5f, 0.5f);
    ot_fill(&seed, bk, (size_t)nk, -0.5f, 0.5f);
    ot_fill(&seed, bv, (size_t)nk, -0.5f, 0.5f);
    for (w = 0; w < 3; w++) { /* blocks: the reference reads them dequantized */
        glc_dtype t = wdt(c, w);
        size_t cnt = (size_t)((w ? nk : nq) * c->dm);
        if (glc_dtype_size(t)) {
            ot_round(t, wts[w], cnt);
        } else {
            ref_quantize(t, wts[w], cnt, wb[w]);
            ref_dequantize(t, wb[w], cnt, wts[w]);
        }
    }
    ot_fill(&seed, ffv, (size_t)(rd / 2), 0.5f, 2.0f);
    ot_fill(&seed, cref[0], cn, -1, 1);
    ot_fill(&seed, cref[1], cn, -1, 1);
    ot_round(c->cache, cref[0], cn);
    ot_round(c->cache, cref[1], cn);
    for (p = 0; p < 2; p++) {
        for (w = 0; w < 3; w++) {
            static const char *const names[3] = {"wq", "wk", "wv"};
            glc_dtype t = wdt(c, w);
            size_t rows = (size_t)(w ? nk : nq);
            if (glc_dtype_size(t))
                assert_int_equal(glc_plan_set_param(pl[p], names[w], wts[w], rows * (size_t)c->dm),
                                 GLC_OK);
            else
                assert_int_equal(glc_plan_set_param_typed(pl[p], names[w], wb[w],
                                                          rows * glc_dtype_row_bytes(t, c->dm), t),
                                 GLC_OK);
        }
        if (c->ff)
            assert_int_equal(glc_plan_set_param(pl[p], "ff", ffv, (size_t)(rd / 2)), GLC_OK);
        if (c->bias) {
            assert_int_equal(glc_plan_set_param(pl[p], "bq", bq, (size_t)nq), GLC_OK);
            assert_int_equal(glc_plan_set_param(pl[p], "bk", bk, (size_t)nk), GLC_OK);
            assert_int_equal(glc_plan_set_param(pl[p], "bv", bv, (size_t)nk), GLC_OK);
        }
        ot_to_bytes(c->cache, cref[0], bytes, cn);
        assert_int_equal(glc_plan_bind_handle(pl[p], "kc", bytes, cn * esz), GLC_OK);
        ot_to_bytes(c->cache, cref[1], bytes, cn);
        assert_int_equal(glc_plan_bind_handle(pl[p], "vc", bytes, cn * esz), GLC_OK);
    }
    /* steps: a small cache decoded row by row from position 0 (kv_len at
     * every value), a large one at its first row, random rows and its
     * last; then kv_len short of pos + 1 (the token's row written, not
     * read) and a position past the cache (skipped) */
    nsteps = c->rows < 64 ? (int)c->rows + 2 : 6;
    for (step = 0; step < nsteps; step++) {
        int last = step == nsteps - 1, short_len = step == nsteps - 2;
        int32_t any = 1 + (int32_t)(tu_rand(&seed) % (uint64_t)(c->rows - 1)); /* 1 .. rows - 1 */
        int32_t pos = last                         ? (int32_t)(c->rows + 3)
                      : c->rows < 64 && !short_len ? step
                      : step == 0                  ? 0
                      : step == 3                  ? (int32_t)(c->rows - 1)
                                                   : any;
        int64_t len = last ? c->rows : short_len ? pos : pos + 1, h;
        glc_plan_var var = {"L", len};
        ref_sdpa_shape sh;
        ot_fill(&seed, x, (size_t)c->dm, -1, 1);
        for (p = 0; p < 2; p++) {
            glc_plan_input in[2] = {{"x", x, (size_t)c->dm}, {"pos", &pos, 1}};
            glc_plan_output o[1] = {{"a", out[p], (size_t)(c->hq * c->d)}};
            if (glc_plan_run_with_vars(pl[p], &var, 1, in, 2, o, 1) != GLC_OK)
                fail_msg("case %d, step %d: %s", ci, step, glc_device_errmsg(dev));
        }
        /* the reference: the projections, rope, the caches' rows, attention */
        proj(x, wq, c->bias ? bq : NULL, nq, c->dm, q);
        ref_rope(q, 1, 1, c->hq, c->d, &pos, c->neox, rd, 700.0, c->ff ? ffv : NULL, qr);
        proj(x, wk, c->bias ? bk : NULL, nk, c->dm, q);
        ref_rope(q, 1, 1, c->hk, c->d, &pos, c->neox, rd, 700.0, c->ff ? ffv : NULL, kr);
        proj(x, wv, c->bias ? bv : NULL, nk, c->dm, vr);
        if (pos < c->rows) {
            memcpy(&cref[0][pos * nk], kr, (size_t)nk * sizeof(float));
            memcpy(&cref[1][pos * nk], vr, (size_t)nk * sizeof(float));
            ot_round(c->cache, &cref[0][pos * nk], (size_t)nk);
            ot_round(c->cache, &cref[1][pos * nk], (size_t)nk);
        }
        memset(&sh, 0, sizeof sh);
        sh.tq = 1;
        sh.tk = c->rows;
        sh.hq = c->hq;
        sh.hkv = c->hk;
        sh.d = sh.dv = c->d;
        sh.scale = (float)(1.0 / sqrt((double)c->d));
        sh.q_offset = len - 1;
        sh.kv_len = len;
        ref_sdpa(&sh, qr, cref[0], cref[1], want);
        for (h = 0; h < 2; h++) {
            char what[96];
            snprintf(what, sizeof what, "case %d (%s), step %d, pos %d, kv_len %lld: %s", ci,
                     info.renderer, step, pos, (long long)len, h ? "unfused" : "fused");
            ot_check(what, out[h], want, (size_t)nq, c->cache == GLC_DTYPE_F32 ? 1e-9 : 1e-6);
        }
        ot_check("fused vs unfused", out[0], out[1], (size_t)nq, 1e-10);
    }
    for (p = 0; p < 2; p++) {
        int which;
        for (which = 0; which < 2; which++) {
            assert_int_equal(glc_plan_read_handle(pl[p], which ? "vc" : "kc", bytes, cn * esz),
                             GLC_OK);
            ot_from_bytes(c->cache, bytes, got, cn);
            ot_check(which ? "vcache" : "kcache", got, cref[which], cn,
                     c->cache == GLC_DTYPE_F32 ? 1e-10 : 1e-6);
        }
    }
    glc_plan_destroy(pl[0]);
    glc_plan_destroy(pl[1]);
}

/* The plans choose the GPU variants on every renderer but llvmpipe: rename
 * it to run them here. qkv: the projections on matvec (GLC_MATMUL=matvec,
 * weights f32 or f16 of widths 8-24, K a multiple of 8), so the rope goes
 * into their epilogue; 2: with matvec's lanes across K tuned off (its
 * subgroup-a-slot layout, emulated here). */
static void cases_on(int gpu_variants, uint64_t seed0, int qkv)
{
    uint64_t seed = seed0;
    int i;
    for (i = 0; i < CASES; i++) {
        scase c = gen(&seed, i);
        glc_device_desc d = tu_desc(NULL);
        glc_device *dev;
        glc__tune off = {0, 0, 0, 0, 1, 0};
        if (qkv) {
            static const glc_dtype wts[] = {GLC_DTYPE_F32, GLC_DTYPE_F16, GLC_DTYPE_Q8_0,
                                            GLC_DTYPE_Q4_0};
            c.wt = wts[tu_rand(&seed) % 4];
            c.dm = glc_dtype_size(c.wt) ? 8 * (1 + (int64_t)(tu_rand(&seed) % 3))
                                        : 32 * (1 + (int64_t)(tu_rand(&seed) % 2));
            c.bias = i != 1; /* (Qwen2's Q/K/V biases) */
            if (i == 2) { /* V apart, as in a Q4_K_M file (its Q and K Q4_K, its V Q6_K) */
                c.wtv = c.wt == GLC_DTYPE_Q8_0 ? GLC_DTYPE_Q4_0 : GLC_DTYPE_Q8_0;
                c.dm = 32 * (1 + (int64_t)(tu_rand(&seed) % 2));
            }
            setenv("GLC_MATMUL", "matvec", 1); /* read when the device is made */
        }
        /* the GPU plan (rope_qkv's dispatch, then the attention, in one
         * node) under the barrier oracle too */
        if (gpu_variants)
            d.flags |= GLC_DEVICE_VALIDATE;
        dev = tu_device_desc(&d);
        unsetenv("GLC_MATMUL");
        if (qkv == 2)
            glc__device_tune(dev, &off);
        if (gpu_variants)
            snprintf(dev->renderer, sizeof dev->renderer, "test renderer");
        if (getenv("TEST_VERBOSE"))
            printf("case %d: %s cache, %s, ff %d, %lld/%lld heads, d %lld, rope_dim %lld, "
                   "%lld rows, width %lld %s%s%s%s\n",
                   i, glc_dtype_name(c.cache), c.neox ? "neox" : "normal", c.ff, (long long)c.hq,
                   (long long)c.hk, (long long)c.d, (long long)c.rope_dim, (long long)c.rows,
                   (long long)c.dm, glc_dtype_name(c.wt), c.wtv ? ", v " : "",
                   c.wtv ? glc_dtype_name(c.wtv) : "", c.bias ? ", biases" : "");
        run_case(dev, i, &c, seed0 * 31 + (uint64_t)i, qkv != 0);
        glc_device_destroy(dev);
    }
}

static void test_sdpa_rope_rows(void **state)
{
    (void)state;
    cases_on(0, 5, 0);
}

/* rope(q) read by an output as well: rope_qkv stays its own dispatch (it
 * rotates q in place, which the output reads) and the attention reads the
 * rotated q; outputs equal to the unfused plan's. */
static void test_sdpa_rope_blocked(void **state)
{
    static const scase c = {GLC_DTYPE_F16, 1, 0, 4, 2, 16, 0, 12, 6, GLC_DTYPE_F32, 0, 0};
    static float w[3][4 * 16 * 6], x[6], out[2][2][4 * 16];
    static char dump[65536];
    static uint16_t cache[12 * 2 * 16]; /* f16 zeros */
    glc_device *dev = tu_device(NULL);
    glc_plan *pl[2];
    uint64_t seed = 9;
    int32_t pos = 5;
    glc_plan_var var = {"L", 6};
    glc_device_info info;
    int p, i;
    (void)state;
    assert_int_equal(glc_device_get_info(dev, &info), GLC_OK);
    pl[0] = build(dev, &c, 0, 1);
    pl[1] = build(dev, &c, GLC_COMPILE_NO_FUSE, 1);
    dump[0] = '\0';
    assert_int_equal(glc_plan_dump(pl[0], 0, append, dump), GLC_OK);
    if (strstr(dump, "ROPE") || strstr(dump, "rope_qkv (sdpa_decode)") ||
        (info.limits.max_ssbo_blocks >= 6) != (strstr(dump, "rope_qkv (rope_qkv)") != NULL))
        fail_msg("rope(q) read twice: sdpa_rope fired or rope_qkv did not\n%s", dump);
    for (i = 0; i < 3; i++)
        ot_fill(&seed, w[i], (size_t)((i ? 2 : 4) * 16 * 6), -0.5f, 0.5f);
    ot_fill(&seed, x, 6, -1, 1);
    for (p = 0; p < 2; p++) {
        glc_plan_input in[2] = {{"x", x, 6}, {"pos", &pos, 1}};
        glc_plan_output o[2] = {{"a", out[p][0], 4 * 16}, {"qr", out[p][1], 4 * 16}};
        assert_int_equal(glc_plan_set_param(pl[p], "wq", w[0], 4 * 16 * 6), GLC_OK);
        assert_int_equal(glc_plan_set_param(pl[p], "wk", w[1], 2 * 16 * 6), GLC_OK);
        assert_int_equal(glc_plan_set_param(pl[p], "wv", w[2], 2 * 16 * 6), GLC_OK);
        assert_int_equal(glc_plan_bind_handle(pl[p], "kc", cache, sizeof cache), GLC_OK);
        assert_int_equal(glc_plan_bind_handle(pl[p], "vc", cache, sizeof cache), GLC_OK);
        if (glc_plan_run_with_vars(pl[p], &var, 1, in, 2, o, 2) != GLC_OK)
            fail_msg("%s: %s", p ? "unfused" : "fused", glc_device_errmsg(dev));
    }
    ot_check("a, rope(q) read twice", out[0][0], out[1][0], 4 * 16, 1e-10);
    ot_check("rope(q), read twice", out[0][1], out[1][1], 4 * 16, 1e-12);
    glc_plan_destroy(pl[0]);
    glc_plan_destroy(pl[1]);
    glc_device_destroy(dev);
}

/* Where the product's K loop would pass the device's loop cap (llvmpipe:
 * 65535 iterations an invocation; K 24576 f32 under GLC_MATMUL=matvec),
 * matvec does not take it, so its plan has no rope epilogue: qkv_rope
 * declines (it plans the fused node first) and the rope stays with the
 * attention; the outputs match the unfused plan's. */
static void test_qkv_rope_declined(void **state)
{
    enum { K = 24576, D = 8 };
    static const scase c = {GLC_DTYPE_F32, 1, 0, 1, 1, D, 0, 12, K, GLC_DTYPE_F32, 0, 0};
    static float w[K * D], x[K], out[2][D];
    static char dump[65536];
    static float cache[12 * D];
    glc_device *dev;
    glc_plan *pl[2];
    uint64_t seed = 11;
    int32_t pos = 4;
    glc_plan_var var = {"L", 5};
    int p;
    (void)state;
    setenv("GLC_MATMUL", "matvec", 1); /* read when the device is made */
    dev = tu_device(NULL);
    unsetenv("GLC_MATMUL");
    pl[0] = build(dev, &c, 0, 0);
    pl[1] = build(dev, &c, GLC_COMPILE_NO_FUSE, 0);
    dump[0] = '\0';
    assert_int_equal(glc_plan_dump(pl[0], 0, append, dump), GLC_OK);
    if (dev->info.limits.max_loop_iterations && strstr(dump, "QKV_ROPE"))
        fail_msg("qkv_rope fired past matvec's loop cap\n%s", dump);
    ot_fill(&seed, w, (size_t)K * D, -0.05f, 0.05f);
    ot_fill(&seed, x, K, -1, 1);
    ot_fill(&seed, cache, 12 * D, -1, 1);
    for (p = 0; p < 2; p++) {
        glc_plan_input in[2] = {{"x", x, K}, {"pos", &pos, 1}};
        glc_plan_output o[1] = {{"a", out[p], D}};
        assert_int_equal(glc_plan_set_param(pl[p], "wq", w, (size_t)K * D), GLC_OK);
        assert_int_equal(glc_plan_set_param(pl[p], "wk", w, (size_t)K * D), GLC_OK);
        assert_int_equal(glc_plan_set_param(pl[p], "wv", w, (size_t)K * D), GLC_OK);
        assert_int_equal(glc_plan_bind_handle(pl[p], "kc", cache, sizeof cache), GLC_OK);
        assert_int_equal(glc_plan_bind_handle(pl[p], "vc", cache, sizeof cache), GLC_OK);
        if (glc_plan_run_with_vars(pl[p], &var, 1, in, 2, o, 1) != GLC_OK)
            fail_msg("%s: %s", p ? "unfused" : "fused", glc_device_errmsg(dev));
    }
    ot_check("past the loop cap: fused vs unfused", out[0], out[1], D, 1e-10);
    glc_plan_destroy(pl[0]);
    glc_plan_destroy(pl[1]);
    glc_device_destroy(dev);
}

static void test_sdpa_rope_split(void **state)
{
    (void)state;
    cases_on(1, 6, 0);
}

/* qkv_rope: the rope in the projection's epilogue (matvec), the attention
 * the split kernel's (renamed renderer) and the rows kernel's */
static void test_qkv_rope(void **state)
{
    (void)state;
    cases_on(1, 7, 1);
    cases_on(0, 8, 1);
    cases_on(1, 9, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sdpa_rope_rows),
        cmocka_unit_test(test_sdpa_rope_split),
        cmocka_unit_test(test_qkv_rope),
        cmocka_unit_test(test_qkv_rope_declined),
        cmocka_unit_test(test_sdpa_rope_blocked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
