/*
 * Plan inputs and outputs bound to GPU memory (glc_plan_bind_input /
 * _output): a bound run equals a host run bit for bit, fused and not, at
 * every value of a row variable, through named runs, run_slots, run_raw,
 * run_profiled and commit_no_wait; a bound output is written in place (the
 * plan's own mirror keeps nothing of it) and later ops read it there; an
 * output that is a view of another value gets its one GPU copy; with a
 * handle (a KV cache appended to each run) outputs and cache equal. Then
 * every refusal, each leaving the previous binding working: a wrong dtype,
 * shape, offset or size, two outputs in one range, an input range an
 * output overlaps, a named run naming a bound tensor; then pipelined sets
 * over the bound tensors; a buffer destroyed while bound (kept alive, the
 * run refused until unbound); unbinding; glc_plan_run_views (one run on
 * views, the bindings before it back afterwards). The application's own
 * GL buffers and textures (glc_buffer_wrap_gl) are in test_adopt.c.
 */
#include "testutil.h"

#include "optest.h"

#define D 24
#define TMAX 7

typedef struct fixture {
    glc_device *dev;
    glc_plan *p;
} fixture;

/* y = silu(x * w + 1), z = y + x, v = a view of y (reshape), x [T, D] */
static glc_plan *build(glc_device *dev, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    int64_t xs[2], ws[1] = {D}, vs[3];
    glc_tensor x, w, y;
    float wv[D];
    int i;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    xs[0] = glc_graph_var(g, "T", 1, TMAX);
    xs[1] = D;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    w = glc_graph_param(g, "w", GLC_DTYPE_F32, 1, ws);
    y = glc_unary(g, GLC_UNARY_SILU, glc_scale(g, glc_mul(g, x, w), 1.0f, 1.0f), 0);
    glc_graph_output(g, "y", y);
    glc_graph_output(g, "z", glc_add(g, y, x));
    vs[0] = xs[0];
    vs[1] = D;
    vs[2] = 1;
    glc_graph_output(g, "v", glc_reshape(g, glc_unary(g, GLC_UNARY_TANH, y, 0), 3, vs));
    p = tu_compile(dev, g, flags);
    for (i = 0; i < D; i++)
        wv[i] = 0.25f + 0.05f * (float)i;
    assert_int_equal(glc_plan_set_param(p, "w", wv, D), GLC_OK);
    return p;
}

static glc_buffer *buffer(glc_device *dev, int64_t n)
{
    glc_buffer *b;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &b), GLC_OK);
    return b;
}

static glc_view rows_view(glc_buffer *b, size_t offset)
{
    int64_t s[2] = {TMAX, D};
    return glc_view_make(b, offset, GLC_DTYPE_F32, 2, s);
}

/* Host runs at T rows: outputs y, z, v of x. */
static void host_run(glc_plan *p, int64_t t, const float *x, float *y, float *z, float *v)
{
    glc_plan_var var = {"T", t};
    glc_plan_input in = {"x", x, (size_t)(t * D)};
    glc_plan_output out[3] = {{"y", y, (size_t)(t * D)}, {"z", z, (size_t)(t * D)},
                              {"v", v, (size_t)(t * D)}};
    assert_int_equal(glc_plan_run_with_vars(p, &var, 1, &in, 1, out, 3), GLC_OK);
}

static void same(const char *what, const float *got, const float *want, size_t n)
{
    if (memcmp(got, want, n * 4) != 0)
        fail_msg("%s: bound run differs from the host run", what);
}

static void test_bound_equals_host(void **state)
{
    glc_device *dev = tu_device(NULL);
    uint64_t seed = 1501;
    int f;
    (void)state;
    for (f = 0; f < 2; f++) {
        glc_plan *p = build(dev, f ? GLC_COMPILE_NO_FUSE : 0);
        size_t align = 256; /* a multiple of every device's SSBO offset alignment here */
        glc_buffer *X = buffer(dev, TMAX * D + (int64_t)align), *Y = buffer(dev, 4 * TMAX * D);
        glc_buffer *V = buffer(dev, TMAX * D);
        float x[TMAX * D], hy[TMAX * D], hz[TMAX * D], hv[TMAX * D], by[TMAX * D];
        float bz[TMAX * D], bv[TMAX * D], junk[TMAX * D];
        const void *ins[1];
        const void *raw[3];
        glc_plan_slice sl[3];
        int64_t t;
        ot_fill(&seed, x, TMAX * D, -2.0f, 2.0f);
        ot_fill(&seed, junk, TMAX * D, -9.0f, 9.0f);
        assert_int_equal(glc_buffer_write(X, align, sizeof x, x), GLC_OK);
        /* x at byte 256 of X; y at 0 and z after it in Y */
        assert_int_equal(glc_plan_bind_input(p, "x", rows_view(X, align)), GLC_OK);
        assert_int_equal(glc_plan_bind_output(p, "y", rows_view(Y, 0)), GLC_OK);
        assert_int_equal(glc_plan_bind_output(p, "z", rows_view(Y, sizeof x + 256 - sizeof x % 256)),
                         GLC_OK);
        {
            /* v is a view of another value: kept in the plan, one GPU copy */
            int64_t v3[3] = {TMAX, D, 1};
            assert_int_equal(glc_plan_bind_output(p, "v", glc_view_make(V, 0, GLC_DTYPE_F32, 3, v3)),
                             GLC_OK);
        }
        for (t = TMAX; t >= 1; t--) {
            glc_plan_var var = {"T", t};
            char what[64];
            /* the host run of an unbound plan of the same graph */
            glc_plan *h = build(dev, f ? GLC_COMPILE_NO_FUSE : 0);
            host_run(h, t, x, hy, hz, hv);
            glc_plan_destroy(h);
            assert_int_equal(glc_plan_set_vars(p, &var, 1), GLC_OK);
            assert_int_equal(glc_plan_run(p, NULL, 0, NULL, 0), GLC_OK);
            assert_int_equal(glc_buffer_read(Y, 0, (size_t)(t * D) * 4, by), GLC_OK);
            assert_int_equal(glc_buffer_read(V, 0, (size_t)(t * D) * 4, bv), GLC_OK);
            assert_int_equal(glc_buffer_read(Y, sizeof x + 256 - sizeof x % 256, (size_t)(t * D) * 4, bz),
                             GLC_OK);
            snprintf(what, sizeof what, "%s, T %lld, run", f ? "unfused" : "fused", (long long)t);
            same(what, by, hy, (size_t)(t * D));
            same(what, bz, hz, (size_t)(t * D));
            same(what, bv, hv, (size_t)(t * D));
            /* by position: the bound slot may be NULL; bound outputs have no bytes here */
            ins[0] = NULL;
            assert_int_equal(glc_plan_run_slots(p, ins, sl), GLC_OK);
            assert_int_equal(sl[0].bytes, 0);
            assert_int_equal(sl[1].bytes, 0);
            assert_int_equal(sl[2].bytes, 0);
            assert_int_equal(glc_plan_run_slots(p, NULL, sl), GLC_OK); /* all bound: none */
            ins[0] = junk; /* ignored: x is read where it is bound */
            assert_int_equal(glc_plan_run_raw(p, ins, raw), GLC_OK);
            {
                glc_plan_dispatch_time times[16];
                glc_plan_profile prof;
                memset(&prof, 0, sizeof prof);
                prof.entries = times;
                prof.capacity = 16;
                assert_int_equal(glc_plan_run_profiled(p, ins, sl, &prof), GLC_OK);
                assert_int_equal(sl[0].bytes, 0);
            }
            assert_int_equal(glc_plan_commit_no_wait(p, ins), GLC_OK);
            assert_int_equal(glc_plan_sync_pending(p, sl), GLC_OK);
            assert_int_equal(sl[0].bytes, 0);
            assert_int_equal(glc_buffer_read(Y, 0, (size_t)(t * D) * 4, by), GLC_OK);
            same(what, by, hy, (size_t)(t * D));
        }
        /* unbound: the host path again */
        {
            glc_view none;
            float y2[TMAX * D], z2[TMAX * D], v2[TMAX * D];
            memset(&none, 0, sizeof none);
            assert_int_equal(glc_plan_bind_input(p, "x", none), GLC_OK);
            assert_int_equal(glc_plan_bind_output(p, "y", none), GLC_OK);
            assert_int_equal(glc_plan_bind_output(p, "z", none), GLC_OK);
            assert_int_equal(glc_plan_bind_output(p, "v", none), GLC_OK);
            {
                glc_plan_slice sl2[3];
                assert_int_equal(glc_plan_run_slots(p, NULL, sl2), GLC_ERR_INVALID_ARG);
                tu_assert_contains(glc_device_errmsg(dev), "inputs is NULL");
            }
            host_run(p, TMAX, x, y2, z2, v2);
            host_run(p, TMAX, x, hy, hz, hv); /* (twice: the same) */
            same("unbound", y2, hy, TMAX * D);
            same("unbound", z2, hz, TMAX * D);
        }
        glc_plan_destroy(p);
        glc_buffer_destroy(X);
        glc_buffer_destroy(Y);
        glc_buffer_destroy(V);
    }
    glc_device_destroy(dev);
}

/* With persistent state: each run appends x's rows to a handle (a KV
 * cache) at positions given from host memory and reads them back; x and
 * the output bound, the positions not. Three runs bound against three host
 * runs of a plan of the same graph: outputs and the handles equal. */
#define ROWS 16
static glc_plan *build_cache(glc_device *dev)
{
    glc_graph *g;
    glc_plan *p = NULL;
    int64_t xs[2] = {3, D}, cs[2] = {ROWS, D}, ps[1] = {3};
    glc_tensor x, pos, c;
    static float zeros[ROWS * D];
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    pos = glc_graph_input(g, "pos", GLC_DTYPE_I32, 1, ps);
    c = glc_set_rows(g, glc_graph_handle(g, "cache", GLC_DTYPE_F32, 2, cs), x, pos);
    glc_graph_output(g, "y", glc_scale(g, glc_get_rows(g, c, pos), 2.0f, 0.5f));
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    assert_int_equal(glc_plan_bind_handle(p, "cache", zeros, sizeof zeros), GLC_OK);
    return p;
}

static void test_with_handles(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_plan *p = build_cache(dev), *h = build_cache(dev);
    int64_t xs[2] = {3, D};
    glc_buffer *X = buffer(dev, 3 * D), *Y = buffer(dev, 3 * D);
    float x[3 * D], y[3 * D], hy[3 * D], cb[ROWS * D], ch[ROWS * D];
    uint64_t seed = 1503;
    int r;
    (void)state;
    assert_int_equal(glc_plan_bind_input(p, "x", glc_view_make(X, 0, GLC_DTYPE_F32, 2, xs)),
                     GLC_OK);
    assert_int_equal(glc_plan_bind_output(p, "y", glc_view_make(Y, 0, GLC_DTYPE_F32, 2, xs)),
                     GLC_OK);
    for (r = 0; r < 3; r++) {
        int32_t pos[3] = {3 * r, 3 * r + 5, 15 - r};
        glc_plan_input in[2] = {{"x", x, 3 * D}, {"pos", pos, 3}};
        glc_plan_output out = {"y", hy, 3 * D};
        ot_fill(&seed, x, 3 * D, -2.0f, 2.0f);
        assert_int_equal(glc_buffer_write(X, 0, sizeof x, x), GLC_OK);
        assert_int_equal(glc_plan_run(h, in, 2, &out, 1), GLC_OK);
        assert_int_equal(glc_plan_run(p, &in[1], 1, NULL, 0), GLC_OK);
        assert_int_equal(glc_buffer_read(Y, 0, sizeof y, y), GLC_OK);
        same("with a handle: y", y, hy, 3 * D);
        assert_int_equal(glc_plan_read_handle(p, "cache", cb, sizeof cb), GLC_OK);
        assert_int_equal(glc_plan_read_handle(h, "cache", ch, sizeof ch), GLC_OK);
        same("with a handle: the cache", cb, ch, ROWS * D);
    }
    glc_plan_destroy(p);
    glc_plan_destroy(h);
    glc_buffer_destroy(X);
    glc_buffer_destroy(Y);
    glc_device_destroy(dev);
}

/* glc_plan_run_views: one run on views, by slot; the bindings before it
 * come back (a persistent y stays, x unbound stays unbound); an input with
 * neither a view nor a binding is refused, the bindings unchanged. */
static void test_run_views(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_plan *p = build(dev, 0), *h = build(dev, 0);
    glc_buffer *X = buffer(dev, TMAX * D), *Y = buffer(dev, TMAX * D), *Z = buffer(dev, TMAX * D);
    float x[TMAX * D], y[TMAX * D], z[TMAX * D], hy[TMAX * D], hz[TMAX * D], hv[TMAX * D];
    glc_view ins[1], outs[3];
    glc_plan_input in = {"x", x, TMAX * D};
    uint64_t seed = 1504;
    (void)state;
    ot_fill(&seed, x, TMAX * D, -2.0f, 2.0f);
    assert_int_equal(glc_buffer_write(X, 0, sizeof x, x), GLC_OK);
    host_run(h, TMAX, x, hy, hz, hv);
    memset(outs, 0, sizeof outs);
    memset(ins, 0, sizeof ins);
    assert_int_equal(glc_plan_run_views(p, ins, outs), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "no view and no binding");
    assert_int_equal(glc_plan_bind_output(p, "y", rows_view(Y, 0)), GLC_OK);
    ins[0] = rows_view(X, 0);
    outs[1] = rows_view(Z, 0);
    assert_int_equal(glc_plan_run_views(p, ins, outs), GLC_OK);
    assert_int_equal(glc_buffer_read(Y, 0, sizeof y, y), GLC_OK);
    assert_int_equal(glc_buffer_read(Z, 0, sizeof z, z), GLC_OK);
    same("run_views: y (bound before)", y, hy, TMAX * D);
    same("run_views: z (this run's view)", z, hz, TMAX * D);
    /* afterwards: x takes host data again, z is unbound, y still bound */
    {
        glc_plan_output oz = {"z", z, TMAX * D};
        memset(z, 0, sizeof z);
        assert_int_equal(glc_plan_run(p, &in, 1, &oz, 1), GLC_OK);
        same("after run_views: z to host memory", z, hz, TMAX * D);
        assert_int_equal(glc_plan_run(p, &in, 1, &(glc_plan_output){"y", y, TMAX * D}, 1),
                         GLC_ERR_INVALID_ARG);
    }
    glc_plan_destroy(p);
    glc_plan_destroy(h);
    glc_buffer_destroy(X);
    glc_buffer_destroy(Y);
    glc_buffer_destroy(Z);
    glc_device_destroy(dev);
}

/* A refusal names its cause, and the binding before it still works. */
static void refused(glc_device *dev, glc_status st, glc_status want, const char *needle)
{
    assert_int_equal(st, want);
    tu_assert_contains(glc_device_errmsg(dev), needle);
}

static void test_refusals(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_plan *p = build(dev, 0), *q = build(dev, 0);
    glc_buffer *X = buffer(dev, 4 * TMAX * D), *Y = buffer(dev, 4 * TMAX * D);
    glc_buffer *small = buffer(dev, TMAX * D - 1);
    int64_t wrong[2] = {TMAX - 1, D}, flat[1] = {TMAX * D};
    float x[TMAX * D], y[TMAX * D], hy[TMAX * D], hz[TMAX * D], hv[TMAX * D];
    glc_plan_input in = {"x", x, TMAX * D};
    glc_plan_output out = {"y", y, TMAX * D};
    uint64_t seed = 1502;
    (void)state;
    ot_fill(&seed, x, TMAX * D, -2.0f, 2.0f);
    assert_int_equal(glc_buffer_write(X, 0, sizeof x, x), GLC_OK);
    assert_int_equal(glc_plan_bind_input(p, "x", rows_view(X, 0)), GLC_OK);
    refused(dev, glc_plan_bind_input(p, "nope", rows_view(X, 0)), GLC_ERR_INVALID_ARG,
            "no input named \"nope\"");
    refused(dev, glc_plan_bind_output(p, "y", glc_view_make(Y, 0, GLC_DTYPE_F16, 2, wrong)),
            GLC_ERR_INVALID_ARG, "the view is [6, 24] f16, the output is [7, 24] f32");
    refused(dev, glc_plan_bind_output(p, "y", glc_view_make(Y, 0, GLC_DTYPE_F32, 1, flat)),
            GLC_ERR_INVALID_ARG, "the output is [7, 24] f32");
    refused(dev, glc_plan_bind_output(p, "y", rows_view(Y, tu_ssbo_alignment(dev) / 2)),
            GLC_ERR_INVALID_ARG, "SSBO offset alignment"); /* half of 256 here, of 4 on softpipe */
    refused(dev, glc_plan_bind_output(p, "y", rows_view(small, 0)), GLC_ERR_INVALID_ARG,
            "the range must fit");
    assert_int_equal(glc_plan_bind_output(p, "y", rows_view(Y, 0)), GLC_OK);
    refused(dev, glc_plan_bind_output(p, "z", rows_view(Y, 256)), GLC_ERR_INVALID_ARG,
            "overlaps another bound input or output");
    refused(dev, glc_plan_bind_output(p, "z", rows_view(X, 0)), GLC_ERR_INVALID_ARG,
            "overlaps another bound input or output");
    refused(dev, glc_plan_bind_input(q, "x", rows_view(X, 0)) == GLC_OK
                     ? glc_plan_bind_output(q, "y", rows_view(X, 256))
                     : GLC_ERR_GL,
            GLC_ERR_INVALID_ARG, "overlaps another bound input or output");
    refused(dev, glc_plan_run(p, &in, 1, NULL, 0), GLC_ERR_INVALID_ARG,
            "input \"x\" is bound to GPU memory");
    refused(dev, glc_plan_run(p, NULL, 0, &out, 1), GLC_ERR_INVALID_ARG,
            "output \"y\" is bound to GPU memory");
    /* the bindings before the refusals still hold */
    assert_int_equal(glc_plan_run(p, NULL, 0, NULL, 0), GLC_OK);
    assert_int_equal(glc_buffer_read(Y, 0, sizeof y, y), GLC_OK);
    {
        glc_plan *h = build(dev, 0);
        host_run(h, TMAX, x, hy, hz, hv);
        glc_plan_destroy(h);
    }
    same("after the refusals", y, hy, TMAX * D);
    {
        /* pipelined: each set reads bound x where it is, bound y holds the
         * last set's; the unbound outputs come back per set */
        static float z2[2][TMAX * D], v2[2][TMAX * D];
        const void *ins2[2] = {NULL, NULL};
        void *outs2[6] = {NULL, z2[0], v2[0], NULL, z2[1], v2[1]};
        memset(y, 0, sizeof y);
        assert_int_equal(glc_buffer_write(Y, 0, sizeof y, y), GLC_OK);
        assert_int_equal(glc_plan_run_pipelined(p, 2, ins2, outs2), GLC_OK);
        same("pipelined, set 0", z2[0], hz, TMAX * D);
        same("pipelined, set 1", v2[1], hv, TMAX * D);
        assert_int_equal(glc_buffer_read(Y, 0, sizeof y, y), GLC_OK);
        same("pipelined, bound y", y, hy, TMAX * D);
    }
    /* destroyed while bound: kept alive, runs refused until unbound */
    glc_buffer_destroy(Y);
    refused(dev, glc_plan_run(p, NULL, 0, NULL, 0), GLC_ERR_STATE,
            "the buffer bound to output \"y\" was destroyed while bound");
    {
        glc_view none;
        memset(&none, 0, sizeof none);
        assert_int_equal(glc_plan_bind_output(p, "y", none), GLC_OK); /* frees Y */
    }
    assert_int_equal(glc_plan_run(p, NULL, 0, &out, 1), GLC_OK);
    same("unbound after the destroy", y, hy, TMAX * D);
    glc_plan_destroy(q);
    glc_plan_destroy(p); /* releases X's hold */
    glc_buffer_destroy(X);
    glc_buffer_destroy(small);
    glc_device_destroy(dev); /* every object gone: a leak fails here */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_equals_host),
        cmocka_unit_test(test_with_handles),
        cmocka_unit_test(test_run_views),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
