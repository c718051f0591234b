/*
 * The rope_qkv fusion (src/core/fuse.c): a decode layer's attention
 * prologue, Q/K/V projections of one input (packed by the qkv pass), then
 * qr = rope(q), kcache <- rope(k) at pos, vcache <- v at pos, becomes two
 * dispatches per layer (the packed projection and rope_qkv) instead of
 * four. Fused, GLC_COMPILE_NO_FUSE and a plain C reference (double) agree
 * on qr and on both caches, rows not written included: f32 and f16
 * caches, NEOX (aligned and not) and NORMAL, partial rope_dim, freq
 * factors, odd D and head counts, kv heads < heads, T = 1 and a variable
 * T, a position past the cache (skipped). An extra reader of rope(k)'s
 * rows or of q's bytes leaves the pattern unfused. Q, K and V weights of
 * three types are not packed: rope_qkv then reads three values.
 */
#include "testutil.h"

#include "optest.h"
#include "ref_rope.h"

#include <math.h>
#include <string.h>

#define DM 8     /* model width: the projections' K */
#define S 9      /* cache rows */
#define LAYERS 2
#define MAXT 5

typedef struct rcase {
    glc_dtype cache;
    int neox;
    int64_t hq, hk, d, rope_dim; /* rope_dim 0: D */
    int64_t tmax;                /* 1: T fixed at 1; else T a variable in [1, tmax] */
    int ff;                      /* freq_factors */
} rcase;

static const rcase cases[] = {
    {GLC_DTYPE_F32, 1, 8, 4, 7, 6, 1, 0},    /* odd D, unaligned NEOX, copied tail */
    {GLC_DTYPE_F16, 0, 5, 1, 12, 0, 5, 0},   /* odd heads, MQA, variable T */
    {GLC_DTYPE_F16, 1, 6, 3, 12, 0, 4, 1},   /* aligned NEOX, odd kv heads, freq factors */
    {GLC_DTYPE_F32, 0, 3, 1, 12, 8, 3, 0},   /* partial rope_dim */
    {GLC_DTYPE_F16, 1, 6, 2, 10, 0, 1, 0},   /* unaligned NEOX into an f16 cache */
};

/* With `mixed`, the projections' weights are f32, f16 and bf16 (Q, K, V),
 * so the qkv pass leaves them apart and rope_qkv takes three values. */
static const glc_dtype mixed_types[3] = {GLC_DTYPE_F32, GLC_DTYPE_F16, GLC_DTYPE_BF16};

static glc_tensor param2(glc_graph *g, const char *name, int l, int64_t rows, glc_dtype dt)
{
    char full[32];
    int64_t s[2];
    s[0] = rows;
    s[1] = DM;
    snprintf(full, sizeof full, "%s.%d", name, l);
    return glc_graph_param(g, full, dt, 2, s);
}

/* LAYERS independent layers over one x; outputs q.<l> (rope(q)). With
 * extra, a second reader of layer 0's rope(k) (output "kr") and, with
 * extra 2, of q's projection (output "qp"). */
static glc_plan *build(glc_device *dev, const rcase *c, uint32_t flags, int extra, int mixed)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_matmul_desc nt = {1};
    glc_rope_desc rd;
    glc_tensor x, pos, ff = glc_none();
    int64_t t, xs[2], s3[3];
    int l;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    t = c->tmax > 1 ? glc_graph_var(g, "T", 1, c->tmax) : 1;
    xs[0] = t;
    xs[1] = DM;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    pos = glc_graph_input(g, "pos", GLC_DTYPE_I32, 1, &t);
    memset(&rd, 0, sizeof rd);
    rd.mode = c->neox ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
    rd.rope_dim = (int)c->rope_dim;
    rd.base = 500.0f;
    if (c->ff) {
        int64_t n = (c->rope_dim ? c->rope_dim : c->d) / 2;
        ff = glc_graph_param(g, "ff", GLC_DTYPE_F32, 1, &n);
    }
    for (l = 0; l < LAYERS; l++) {
        glc_tensor q, k, v, kc, vc, qp;
        char name[32];
        s3[0] = S;
        s3[1] = c->hk;
        s3[2] = c->d;
        snprintf(name, sizeof name, "kc.%d", l);
        kc = glc_graph_handle(g, name, c->cache, 3, s3);
        snprintf(name, sizeof name, "vc.%d", l);
        vc = glc_graph_handle(g, name, c->cache, 3, s3);
        s3[0] = t;
        s3[1] = c->hq;
        qp = glc_matmul(g, x, param2(g, "wq", l, c->hq * c->d, mixed_types[0]), glc_none(), &nt);
        q = glc_reshape(g, qp, 3, s3);
        s3[1] = c->hk;
        k = glc_reshape(g, glc_matmul(g, x, param2(g, "wk", l, c->hk * c->d,
                                                   mixed ? mixed_types[1] : GLC_DTYPE_F32),
                                      glc_none(), &nt), 3, s3);
        v = glc_reshape(g, glc_matmul(g, x, param2(g, "wv", l, c->hk * c->d,
                                                   mixed ? mixed_types[2] : GLC_DTYPE_F32),
                                      glc_none(), &nt), 3, s3);
        q = glc_rope(g, q, pos, &rd, ff);
        k = glc_rope(g, k, pos, &rd, ff);
        glc_set_rows(g, kc, k, pos);
        glc_set_rows(g, vc, v, pos);
        snprintf(name, sizeof name, "q.%d", l);
        glc_graph_output(g, name, q);
        if (l == 0 && extra == 1)
            glc_graph_output(g, "kr", glc_scale(g, k, 1.0f, 0.0f));
        if (l == 0 && extra == 2)
            glc_graph_output(g, "qp", qp);
    }
    p = tu_compile(dev, g, flags);
    return p;
}

static void near(const char *what, int ci, int t, const float *got, const float *ref, size_t n,
                 double tol)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!(fabs((double)got[i] - ref[i]) <= tol * (1.0 + fabs(ref[i]))))
            fail_msg("case %d, T %d, %s[%zu]: %g, reference %g", ci, t, what, i, got[i], ref[i]);
}

/* The qkv pass packs the projections (what rope_qkv needs) only where k's
 * and v's parts start on the device's binding alignment. */
static int packs(glc_device *dev, const rcase *c)
{
    return tu_aligned(dev, (size_t)(c->tmax * c->hq * c->d) * 4) &&
           tu_aligned(dev, (size_t)(c->tmax * (c->hq + c->hk) * c->d) * 4);
}

/* y[r, :] = x[r, :] W^T (double sums) */
static void proj(const float *x, const float *w, int64_t rows, int64_t n, float *y)
{
    int64_t r, j, k;
    for (r = 0; r < rows; r++)
        for (j = 0; j < n; j++) {
            double s = 0;
            for (k = 0; k < DM; k++)
                s += (double)x[r * DM + k] * w[j * DM + k];
            y[r * n + j] = (float)s;
        }
}

#define MAXQ (MAXT * 8 * 12)
#define MAXC (S * 4 * 12)

static void run_case(glc_device *dev, int ci, int mixed)
{
    const rcase *c = &cases[ci];
    glc_plan *pl[2];
    glc_plan_info fi, pi;
    int64_t nq = c->hq * c->d, nk = c->hk * c->d, rd = c->rope_dim ? c->rope_dim : c->d;
    size_t cn = (size_t)(S * nk), esz = c->cache == GLC_DTYPE_F32 ? 4 : 2;
    static float wq[LAYERS][96 * DM], wk[LAYERS][48 * DM], wv[LAYERS][48 * DM], ffv[8];
    static float cinit[2 * LAYERS][MAXC], cref[2 * LAYERS][MAXC], got[MAXC];
    static float x[MAXT * DM], q[MAXQ], qref[MAXQ], kv[MAXQ], qout[MAXQ];
    static unsigned char cbytes[MAXC * 4];
    uint64_t seed = 1000 + (uint64_t)ci;
    int i, l, t, ti;
    char name[32];
    glc_device_info info;
    pl[0] = build(dev, c, 0, 0, mixed);
    pl[1] = build(dev, c, GLC_COMPILE_NO_FUSE, 0, mixed);
    assert_int_equal(glc_plan_stats(pl[0], &fi), GLC_OK);
    assert_int_equal(glc_plan_stats(pl[1], &pi), GLC_OK);
    assert_int_equal(glc_device_get_info(dev, &info), GLC_OK);
    /* unfused: 3 matmuls, 2 ropes, 2 set_rows per layer; fused: the packed
     * projection and rope_qkv (qkv, rope_rows and rope_qkv: 3 patterns); no
     * pack on this device: rope_rows alone (6 a layer, 1 pattern). Mixed
     * weight types: rope_rows and rope_qkv a layer over the 6 matmuls, or
     * over 3 packs of a type each (both layers' Q, K, V: one input) */
    if (pi.dispatches != 7 * LAYERS ||
        (mixed && info.limits.max_ssbo_blocks >= (c->ff ? 7u : 6u)
             ? !((fi.fused == 2 * LAYERS && fi.dispatches == 6 + LAYERS) ||
                 (fi.fused == 2 * LAYERS + 3 && fi.dispatches == 3 + LAYERS && packs(dev, c)))
         : !mixed && packs(dev, c) ? fi.dispatches != 2 * LAYERS || fi.fused != 3 * LAYERS
                                   : fi.dispatches != 6 * LAYERS || fi.fused != LAYERS))
        fail_msg("case %d%s: %u -> %u dispatches, %u patterns fused", ci,
                 mixed ? " (mixed weights)" : "", pi.dispatches, fi.dispatches, fi.fused);
    ot_fill(&seed, ffv, 8, 0.5f, 2.0f);
    for (l = 0; l < LAYERS; l++) {
        ot_fill(&seed, wq[l], (size_t)(nq * DM), -0.5f, 0.5f);
        ot_fill(&seed, wk[l], (size_t)(nk * DM), -0.5f, 0.5f);
        ot_fill(&seed, wv[l], (size_t)(nk * DM), -0.5f, 0.5f);
        if (mixed) { /* the values the params hold */
            ot_round(mixed_types[1], wk[l], (size_t)(nk * DM));
            ot_round(mixed_types[2], wv[l], (size_t)(nk * DM));
        }
        ot_fill(&seed, cinit[2 * l], cn, -1, 1);
        ot_fill(&seed, cinit[2 * l + 1], cn, -1, 1);
        ot_round(c->cache, cinit[2 * l], cn);
        ot_round(c->cache, cinit[2 * l + 1], cn);
        memcpy(cref[2 * l], cinit[2 * l], cn * sizeof(float));
        memcpy(cref[2 * l + 1], cinit[2 * l + 1], cn * sizeof(float));
    }
    for (i = 0; i < 2; i++) {
        for (l = 0; l < LAYERS; l++) {
            snprintf(name, sizeof name, "wq.%d", l);
            assert_int_equal(glc_plan_set_param(pl[i], name, wq[l], (size_t)(nq * DM)), GLC_OK);
            snprintf(name, sizeof name, "wk.%d", l);
            assert_int_equal(glc_plan_set_param(pl[i], name, wk[l], (size_t)(nk * DM)), GLC_OK);
            snprintf(name, sizeof name, "wv.%d", l);
            assert_int_equal(glc_plan_set_param(pl[i], name, wv[l], (size_t)(nk * DM)), GLC_OK);
            ot_to_bytes(c->cache, cinit[2 * l], cbytes, cn);
            snprintf(name, sizeof name, "kc.%d", l);
            assert_int_equal(glc_plan_bind_handle(pl[i], name, cbytes, cn * esz), GLC_OK);
            ot_to_bytes(c->cache, cinit[2 * l + 1], cbytes, cn);
            snprintf(name, sizeof name, "vc.%d", l);
            assert_int_equal(glc_plan_bind_handle(pl[i], name, cbytes, cn * esz), GLC_OK);
        }
        if (c->ff)
            assert_int_equal(glc_plan_set_param(pl[i], "ff", ffv, (size_t)(rd / 2)), GLC_OK);
    }
    /* runs at T = tmax, then down to 1 (re-plans), each appending */
    for (ti = 0; ti < (c->tmax > 1 ? 3 : 2); ti++) {
        int32_t pos[MAXT];
        glc_plan_var var = {"T", 0};
        t = ti == 0 ? (int)c->tmax : ti == 1 ? 1 : (int)(c->tmax + 1) / 2;
        var.value = t;
        for (i = 0; i < t; i++) /* distinct rows; the last of the first run past the cache */
            pos[i] = ti == 0 && i == t - 1 ? S + 2 : (int32_t)((ti * 4 + i * 2 + 1) % S);
        ot_fill(&seed, x, (size_t)(t * DM), -1, 1);
        for (i = 0; i < 2; i++) {
            glc_plan_input in[2] = {{"x", x, (size_t)(t * DM)}, {"pos", pos, (size_t)t}};
            glc_plan_output out[LAYERS];
            static float qo[2][LAYERS][MAXQ];
            glc_status st;
            for (l = 0; l < LAYERS; l++) {
                static char names[LAYERS][8];
                snprintf(names[l], sizeof names[l], "q.%d", l);
                out[l].name = names[l];
                out[l].data = qo[i][l];
                out[l].count = (size_t)(t * nq);
            }
            st = c->tmax > 1 ? glc_plan_run_with_vars(pl[i], &var, 1, in, 2, out, LAYERS)
                             : glc_plan_run(pl[i], in, 2, out, LAYERS);
            if (st != GLC_OK)
                fail_msg("case %d, T %d, %s: %s", ci, t, i ? "unfused" : "fused",
                         glc_device_errmsg(dev));
            for (l = 0; l < LAYERS; l++) {
                /* the reference: projections, rope, cache rows */
                proj(x, wq[l], t, nq, q);
                ref_rope(q, 1, t, c->hq, c->d, pos, c->neox, rd, 500.0, c->ff ? ffv : NULL, qref);
                memcpy(qout, qo[i][l], (size_t)(t * nq) * sizeof(float));
                near(i ? "q unfused" : "q fused", ci, t, qout, qref, (size_t)(t * nq), 1e-5);
                if (i == 0) {
                    int r;
                    proj(x, wk[l], t, nk, q);
                    ref_rope(q, 1, t, c->hk, c->d, pos, c->neox, rd, 500.0, c->ff ? ffv : NULL, kv);
                    proj(x, wv[l], t, nk, q);
                    for (r = 0; r < t; r++)
                        if (pos[r] >= 0 && pos[r] < S) {
                            memcpy(&cref[2 * l][pos[r] * nk], &kv[r * nk], (size_t)nk * sizeof(float));
                            memcpy(&cref[2 * l + 1][pos[r] * nk], &q[r * nk], (size_t)nk * sizeof(float));
                        }
                    ot_round(c->cache, cref[2 * l], cn);
                    ot_round(c->cache, cref[2 * l + 1], cn);
                }
            }
        }
        for (i = 0; i < 2; i++)
            for (l = 0; l < LAYERS; l++) {
                double tol = c->cache == GLC_DTYPE_F32 ? 1e-5 : 2e-3;
                snprintf(name, sizeof name, "kc.%d", l);
                assert_int_equal(glc_plan_read_handle(pl[i], name, cbytes, cn * esz), GLC_OK);
                ot_from_bytes(c->cache, cbytes, got, cn);
                near(i ? "kcache unfused" : "kcache fused", ci, t, got, cref[2 * l], cn, tol);
                snprintf(name, sizeof name, "vc.%d", l);
                assert_int_equal(glc_plan_read_handle(pl[i], name, cbytes, cn * esz), GLC_OK);
                ot_from_bytes(c->cache, cbytes, got, cn);
                near(i ? "vcache unfused" : "vcache fused", ci, t, got, cref[2 * l + 1], cn, tol);
            }
    }
    glc_plan_destroy(pl[0]);
    glc_plan_destroy(pl[1]);
}

static void test_rope_qkv_fused(void **state)
{
    glc_device *dev = tu_device(NULL);
    int ci;
    (void)state;
    for (ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ci++)
        run_case(dev, ci, 0);
    glc_device_destroy(dev);
}

/* Q, K and V weights of different types (as a Q4_K_M file's): no pack,
 * and rope_qkv reads the three projections as values of their own. */
static void test_rope_qkv_unpacked(void **state)
{
    glc_device *dev = tu_device(NULL);
    int ci;
    (void)state;
    for (ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ci++)
        run_case(dev, ci, 1);
    glc_device_destroy(dev);
}

/* Another reader of rope(k)'s rows (so no rope_rows) or of q's projection
 * bytes (rotating them in place would change what it reads): layer 0
 * stays as it was, layer 1 still fuses. */
static void test_rope_qkv_blocked(void **state)
{
    glc_device *dev = tu_device(NULL);
    int extra;
    (void)state;
    if (!packs(dev, &cases[2])) { /* no pack, no rope_qkv to block */
        glc_device_destroy(dev);
        skip();
    }
    for (extra = 1; extra <= 2; extra++) {
        glc_plan *p = build(dev, &cases[2], 0, extra, 0);
        glc_plan_info fi;
        assert_int_equal(glc_plan_stats(p, &fi), GLC_OK);
        /* layer 0: the packed projection, rope, rope(k) + set_rows (extra 1:
         * rope_rows blocked, so 2 more for k: rope, scale, set_rows) or
         * rope + rope_rows (extra 2), set_rows; layer 1: 2 */
        if (extra == 1 && (fi.dispatches != 6 + 2 || fi.fused != 1 + 3))
            fail_msg("extra reader of rope(k): %u dispatches, %u fused", fi.dispatches, fi.fused);
        if (extra == 2 && (fi.dispatches != 4 + 2 || fi.fused != 2 + 3))
            fail_msg("extra reader of q: %u dispatches, %u fused", fi.dispatches, fi.fused);
        glc_plan_destroy(p);
    }
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rope_qkv_fused),
        cmocka_unit_test(test_rope_qkv_unpacked),
        cmocka_unit_test(test_rope_qkv_blocked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
