/*
 * Compiled plans on llvmpipe: results equal the eager ops bit for bit;
 * barrier counts of chains and independent branches; intermediates share
 * the arena; variables give what a plan compiled at that size gives; slots
 * and raw pointers agree with named runs; runs allocate nothing; bad input
 * gets a clear status with the outputs untouched; GLC_VALIDATE checks
 * every plan's stream (and catches one built without barriers).
 */
#include "testutil.h"

#include "alloc.h"
#include "device.h"
#include "optest.h"

#include <math.h>

#define D 48

typedef struct model {
    glc_graph *g;
    glc_plan *p;
} model;

/* z = silu(softmax(rms_norm(x + w, b)) * x), n = the norm: x [T, D] */
static glc_status build(glc_device *dev, int64_t tmin, int64_t tmax, model *m)
{
    int64_t xs[2], ws[1] = {D};
    glc_tensor x, w, b, n, z;
    glc_status st = glc_graph_create(dev, &m->g);
    if (st != GLC_OK)
        return st;
    xs[0] = glc_graph_var(m->g, "T", tmin, tmax);
    xs[1] = D;
    x = glc_graph_input(m->g, "x", GLC_DTYPE_F32, 2, xs);
    w = glc_graph_param(m->g, "w", GLC_DTYPE_F16, 1, ws);
    b = glc_graph_param(m->g, "b", GLC_DTYPE_F32, 1, ws);
    n = glc_rms_norm(m->g, glc_add(m->g, x, w), b, 1e-5f);
    z = glc_unary(m->g, GLC_UNARY_SILU, glc_mul(m->g, glc_softmax(m->g, n, NULL), x), 0);
    glc_graph_output(m->g, "z", z);
    glc_graph_output(m->g, "n", n);
    st = glc_graph_compile(m->g, NULL, &m->p);
    glc_graph_destroy(m->g);
    m->g = NULL;
    return st;
}

static void set_params(glc_plan *p, const float *w, const float *b)
{
    assert_int_equal(glc_plan_set_param(p, "w", w, D), GLC_OK);
    assert_int_equal(glc_plan_set_param(p, "b", b, D), GLC_OK);
}

/* The same ops, eagerly, on buffers. */
static void eager(glc_device *dev, int64_t t, const float *x, const float *w, const float *b,
                  float *z, float *n)
{
    int64_t xs[2] = {t, D}, ws[1] = {D};
    glc_buffer *X, *W, *B, *H, *N, *S, *Y, *Z;
    glc_session *s;
    uint16_t wh[D];
    int i;
    for (i = 0; i < D; i++)
        wh[i] = ot_f32_to_f16(w[i]);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 2, xs, &X), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F16, 1, ws, &W), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, ws, &B), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 2, xs, &H), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 2, xs, &N), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 2, xs, &S), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 2, xs, &Y), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 2, xs, &Z), GLC_OK);
    assert_int_equal(glc_buffer_write(X, 0, (size_t)(t * D * 4), x), GLC_OK);
    assert_int_equal(glc_buffer_write(W, 0, sizeof wh, wh), GLC_OK);
    assert_int_equal(glc_buffer_write(B, 0, D * 4, b), GLC_OK);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    assert_int_equal(glc_op_add(s, glc_view_of(X), glc_view_of(W), glc_view_of(H)), GLC_OK);
    assert_int_equal(glc_op_rms_norm(s, glc_view_of(H), glc_view_of(B), 1e-5f, glc_view_of(N)),
                     GLC_OK);
    assert_int_equal(glc_op_softmax(s, glc_view_of(N), NULL, glc_view_of(S)), GLC_OK);
    assert_int_equal(glc_op_mul(s, glc_view_of(S), glc_view_of(X), glc_view_of(Y)), GLC_OK);
    assert_int_equal(glc_op_unary(s, GLC_UNARY_SILU, glc_view_of(Y), 0, glc_view_of(Z)), GLC_OK);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    assert_int_equal(glc_buffer_read(Z, 0, (size_t)(t * D * 4), z), GLC_OK);
    assert_int_equal(glc_buffer_read(N, 0, (size_t)(t * D * 4), n), GLC_OK);
    glc_buffer_destroy(X);
    glc_buffer_destroy(W);
    glc_buffer_destroy(B);
    glc_buffer_destroy(H);
    glc_buffer_destroy(N);
    glc_buffer_destroy(S);
    glc_buffer_destroy(Y);
    glc_buffer_destroy(Z);
}

static void run_named(glc_plan *p, int64_t t, const float *x, float *z, float *n)
{
    glc_plan_input in = {"x", x, (size_t)(t * D)};
    glc_plan_output out[2] = {{"z", z, (size_t)(t * D)}, {"n", n, (size_t)(t * D)}};
    assert_int_equal(glc_plan_run(p, &in, 1, out, 2), GLC_OK);
}

static void test_plan_equals_eager(void **state)
{
    glc_device *dev = tu_device(NULL);
    uint64_t seed = 11;
    float x[9 * D], w[D], b[D], z[9 * D], n[9 * D], ez[9 * D], en[9 * D];
    const void *raw[2];
    const void *ins[1];
    glc_plan_slice sl[2];
    glc_plan_info info;
    model m;
    (void)state;
    ot_fill(&seed, x, 9 * D, -2, 2);
    ot_fill(&seed, w, D, -1, 1);
    ot_fill(&seed, b, D, 0.5f, 1.5f);
    for (int i = 0; i < D; i++)
        w[i] = ot_f16_to_f32(ot_f32_to_f16(w[i])); /* the eager side stores w as f16 too */
    assert_int_equal(build(dev, 9, 9, &m), GLC_OK);
    set_params(m.p, w, b);
    run_named(m.p, 9, x, z, n);
    eager(dev, 9, x, w, b, ez, en);
    assert_memory_equal(z, ez, sizeof z);
    assert_memory_equal(n, en, sizeof n);
    ot_check("plan z vs eager", z, ez, 9 * D, 0);
    /* slots and raw pointers see the same bytes */
    ins[0] = x;
    assert_int_equal(glc_plan_run_slots(m.p, ins, sl), GLC_OK);
    assert_int_equal(sl[0].bytes, sizeof z);
    assert_memory_equal((const char *)glc_plan_arena_ptr(m.p) + sl[0].offset, ez, sizeof z);
    assert_memory_equal((const char *)glc_plan_arena_ptr(m.p) + sl[1].offset, en, sizeof n);
    assert_int_equal(glc_plan_run_raw(m.p, ins, raw), GLC_OK);
    assert_memory_equal(raw[0], ez, sizeof z);
    /* a chain: add, norm, softmax, mul, silu = 5 dispatches, 4 barriers */
    assert_int_equal(glc_plan_stats(m.p, &info), GLC_OK);
    assert_int_equal(info.dispatches, 5);
    assert_int_equal(info.barriers, 4);
    assert_int_equal(info.steps, 5);
    assert_true(info.arena_bytes >= info.liveness_bound);
    glc_plan_destroy(m.p);
    glc_device_destroy(dev);
}

/* 12 scales in a chain: one barrier per link, two intermediates' bytes;
 * 6 scales of one input: no barrier at all. */
static void test_barriers_and_arena(void **state)
{
    glc_device *dev = tu_device(NULL);
    int64_t s[1] = {1000};
    float x[1000], y[1000], want[1000];
    glc_plan_info info;
    glc_graph *g;
    glc_plan *p;
    glc_tensor t, in;
    uint64_t seed = 5;
    int i, k;
    (void)state;
    ot_fill(&seed, x, 1000, -1, 1);
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    t = in = glc_graph_input(g, "x", GLC_DTYPE_F32, 1, s);
    for (i = 0; i < 12; i++)
        t = glc_scale(g, t, 1.0f, 0.5f);
    glc_graph_output(g, "y", t);
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    assert_int_equal(glc_plan_stats(p, &info), GLC_OK);
    assert_int_equal(info.dispatches, 12);
    assert_int_equal(info.barriers, 11);
    /* x and y fixed, 2 intermediates alternate */
    assert_true(info.arena_bytes <= 4 * 4000 + 4 * 256);
    assert_true(info.arena_bytes >= info.liveness_bound);
    {
        glc_plan_input pi = {"x", x, 1000};
        glc_plan_output po = {"y", y, 1000};
        assert_int_equal(glc_plan_run(p, &pi, 1, &po, 1), GLC_OK);
    }
    for (i = 0; i < 1000; i++)
        want[i] = x[i] + 6.0f;
    ot_check("chain of 12 scales", y, want, 1000, 1e-12);
    glc_plan_destroy(p);

    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    in = glc_graph_input(g, "x", GLC_DTYPE_F32, 1, s);
    for (k = 0; k < 6; k++) {
        char name[8];
        snprintf(name, sizeof name, "y%d", k);
        glc_graph_output(g, name, glc_scale(g, in, (float)k, 0));
    }
    glc_scale(g, in, 3, 3); /* dead: no output needs it */
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    assert_int_equal(glc_plan_stats(p, &info), GLC_OK);
    assert_int_equal(info.steps, 6);
    assert_int_equal(info.barriers, 0);
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

/* A plan compiled for T <= 9 run at T = 4 gives what a plan for T = 4
 * gives; values out of bounds are refused and the plan still runs. */
static void test_vars(void **state)
{
    glc_device *dev = tu_device(NULL);
    uint64_t seed = 21;
    float x[9 * D], w[D], b[D], z[4 * D], n[4 * D], z4[4 * D], n4[4 * D];
    glc_plan_var v = {"T", 4}, bad = {"T", 10}, unknown = {"S", 1};
    glc_plan_info info;
    model m, m4;
    (void)state;
    ot_fill(&seed, x, 9 * D, -2, 2);
    ot_fill(&seed, w, D, -1, 1);
    ot_fill(&seed, b, D, 0.5f, 1.5f);
    assert_int_equal(build(dev, 1, 9, &m), GLC_OK);
    assert_int_equal(build(dev, 4, 4, &m4), GLC_OK);
    set_params(m.p, w, b);
    set_params(m4.p, w, b);
    assert_int_equal(glc_plan_set_vars(m.p, &bad, 1), GLC_ERR_BOUNDS);
    assert_string_equal(glc_device_errmsg(dev),
                        "glc_plan_set_vars: T = 10 is outside its bounds [1, 9]");
    assert_int_equal(glc_plan_set_vars(m.p, &unknown, 1), GLC_ERR_INVALID_ARG);
    {
        glc_plan_input in = {"x", x, 4 * D};
        glc_plan_output out[2] = {{"z", z, 4 * D}, {"n", n, 4 * D}};
        assert_int_equal(glc_plan_run_with_vars(m.p, &v, 1, &in, 1, out, 2), GLC_OK);
    }
    run_named(m4.p, 4, x, z4, n4);
    assert_memory_equal(z, z4, sizeof z);
    assert_memory_equal(n, n4, sizeof n);
    assert_int_equal(glc_plan_stats(m.p, &info), GLC_OK);
    assert_int_equal(info.dispatches, 5);
    /* back to the maximum through the extent */
    assert_int_equal(glc_plan_set_active_extent(m.p, 9), GLC_OK);
    {
        /* rows are independent in this graph: the first 4 rows at T = 9 are
         * the T = 4 result */
        float zz[9 * D], nn[9 * D];
        run_named(m.p, 9, x, zz, nn);
        assert_memory_equal(zz, z4, sizeof z4);
        assert_memory_equal(nn, n4, sizeof n4);
    }
    glc_plan_destroy(m.p);
    glc_plan_destroy(m4.p);
    glc_device_destroy(dev);
}

/* Values at which an op stops holding (a slice of rows [2, 3) when T
 * drops to 1; the fuzzer found it) are refused with the rule's status and
 * message, and the plan keeps running at its values. */
static void test_vars_op_refuses(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_graph *g;
    glc_plan *p;
    int64_t xs[2];
    float x[8 * 4], y[4];
    glc_plan_var small = {"T", 1}, four = {"T", 4};
    int i;
    (void)state;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    xs[0] = glc_graph_var(g, "T", 1, 8);
    xs[1] = 4;
    glc_graph_output(g, "y", glc_slice(g, glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs), 0, 2, 1));
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    assert_int_equal(glc_plan_set_vars(p, &four, 1), GLC_OK);
    assert_int_equal(glc_plan_set_vars(p, &small, 1), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "slice");
    for (i = 0; i < 8 * 4; i++)
        x[i] = (float)i;
    {
        glc_plan_input in = {"x", x, 4 * 4};
        glc_plan_output out = {"y", y, 4};
        assert_int_equal(glc_plan_run(p, &in, 1, &out, 1), GLC_OK); /* still at T = 4 */
    }
    for (i = 0; i < 4; i++)
        assert_true(y[i] == (float)(8 + i));
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

/* After two warm-up runs, a run allocates nothing: every allocation would
 * fail from the first on. */
static void test_runs_allocate_nothing(void **state)
{
    glc_device *dev = tu_device(NULL);
    uint64_t seed = 3;
    float x[9 * D], w[D], b[D], z[9 * D], n[9 * D];
    const void *ins[1] = {x};
    const void *raw[2];
    glc_plan_slice sl[2];
    model m;
    (void)state;
    ot_fill(&seed, x, 9 * D, -2, 2);
    ot_fill(&seed, w, D, -1, 1);
    ot_fill(&seed, b, D, 0.5f, 1.5f);
    assert_int_equal(build(dev, 9, 9, &m), GLC_OK);
    set_params(m.p, w, b);
    run_named(m.p, 9, x, z, n);
    run_named(m.p, 9, x, z, n);
    glc__alloc_fail_after(1);
    run_named(m.p, 9, x, z, n);
    assert_int_equal(glc_plan_run_slots(m.p, ins, sl), GLC_OK);
    assert_int_equal(glc_plan_run_raw(m.p, ins, raw), GLC_OK);
    assert_int_equal(glc__alloc_failures(), 0);
    glc__alloc_fail_after(0);
    /* and the check can fail: compiling allocates */
    glc__alloc_fail_after(1);
    assert_int_equal(build(dev, 9, 9, &(model){0}), GLC_ERR_OUT_OF_MEMORY);
    assert_true(glc__alloc_failures() > 0);
    glc__alloc_fail_after(0);
    glc_plan_destroy(m.p);
    glc_device_destroy(dev);
}

static void test_bad_input(void **state)
{
    glc_device *dev = tu_device(NULL);
    float x[9 * D], w[D], z[9 * D], n[9 * D], keep[9 * D];
    glc_plan_input in = {"x", x, 9 * D};
    glc_plan_output out = {"z", z, 9 * D};
    model m;
    uint64_t seed = 8;
    (void)state;
    ot_fill(&seed, x, 9 * D, -1, 1);
    ot_fill(&seed, w, D, -1, 1);
    ot_fill(&seed, z, 9 * D, -1, 1);
    memcpy(keep, z, sizeof z);
    assert_int_equal(build(dev, 9, 9, &m), GLC_OK);
    /* params not set */
    assert_int_equal(glc_plan_run(m.p, &in, 1, &out, 1), GLC_ERR_STATE);
    assert_string_equal(glc_device_errmsg(dev), "glc_plan_run: param \"w\" was never set");
    assert_int_equal(glc_plan_set_param(m.p, "w", w, D - 1), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "glc_plan_set_param(\"w\"): 47 f32 values "
                                                "given, the param is 48 values of f16");
    assert_int_equal(glc_plan_set_param(m.p, "nope", w, D), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_plan_set_param_typed(m.p, "b", w, D * 4, GLC_DTYPE_F16),
                     GLC_ERR_INVALID_ARG);
    set_params(m.p, w, w);
    /* inputs */
    in.count = 9 * D - 1;
    assert_int_equal(glc_plan_run(m.p, &in, 1, &out, 1), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "glc_plan_run: input \"x\": 431 values given, it takes 432");
    in.count = 9 * D;
    assert_int_equal(glc_plan_run(m.p, NULL, 0, &out, 1), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "glc_plan_run: input \"x\" is missing");
    in.name = "y";
    assert_int_equal(glc_plan_run(m.p, &in, 1, &out, 1), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "glc_plan_run: no input named \"y\"");
    in.name = "x";
    out.name = "q";
    assert_int_equal(glc_plan_run(m.p, &in, 1, &out, 1), GLC_ERR_INVALID_ARG);
    out.name = "z";
    out.count = 5;
    assert_int_equal(glc_plan_run(m.p, &in, 1, &out, 1), GLC_ERR_INVALID_ARG);
    assert_memory_equal(z, keep, sizeof z); /* untouched by every failure */
    out.count = 9 * D;
    assert_int_equal(glc_plan_run(m.p, &in, 1, &out, 1), GLC_OK);
    (void)n;
    glc_plan_destroy(m.p);
    glc_plan_destroy(NULL);

    /* graph errors come out of compile */
    {
        glc_graph *g;
        glc_plan *p = NULL;
        int64_t a[1] = {3}, b2[1] = {4};
        assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
        glc_graph_output(g, "y", glc_add(g, glc_graph_input(g, "a", GLC_DTYPE_F32, 1, a),
                                         glc_graph_input(g, "b", GLC_DTYPE_F32, 1, b2)));
        assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_ERR_INVALID_ARG);
        tu_assert_contains(glc_device_errmsg(dev), "add: shapes [3] f32 and [4] f32");
        assert_null(p);
        glc_graph_destroy(g);
        assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
        glc_graph_input(g, "a", GLC_DTYPE_F32, 1, a);
        assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_ERR_INVALID_ARG);
        assert_string_equal(glc_device_errmsg(dev), "glc_graph_compile: the graph has no outputs");
        glc_graph_destroy(g);
    }
    glc_device_destroy(dev);
}

/* GLC_VALIDATE checks each plan's stream with the oracle: the plans above
 * pass, and a plan built with no barriers is caught. */
static void test_validate(void **state)
{
    glc_device *dev = tu_device(NULL);
    model m;
    (void)state;
    dev->validate = 1;
    assert_int_equal(build(dev, 1, 9, &m), GLC_OK);
    glc_plan_destroy(m.p);
    dev->barrier_policy = GLC__BARRIERS_NEVER;
    assert_int_equal(build(dev, 1, 9, &m), GLC_ERR_HAZARD);
    /* (reduce.comp, or reduce_row4.comp on llvmpipe) */
    tu_assert_contains(glc_device_errmsg(dev), "GLC_VALIDATE: plan dispatch 1 (reduce");
    tu_assert_contains(glc_device_errmsg(dev), " \"rms_norm\") reads bytes");
    dev->barrier_policy = GLC__BARRIERS_TRACKED;
    dev->validate = 0;
    glc_device_destroy(dev);
}

/* A handle keeps its contents across runs; a feed refreshes it from an
 * output on the GPU; a second plan sharing it sees the same bytes; a clone
 * has its own. */
static void test_handles(void **state)
{
    glc_device *dev = tu_device(NULL);
    int64_t s16[1] = {16};
    float x[16], zero[16] = {0}, y[16], h[16], z[16];
    glc_plan_input in = {"x", x, 16};
    glc_plan_output out = {"y", y, 16}, outz = {"z", z, 16};
    glc_graph *g;
    glc_plan *acc, *twice, *clone;
    glc_tensor tx, th;
    int i, run;
    (void)state;
    for (i = 0; i < 16; i++)
        x[i] = (float)i;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    tx = glc_graph_input(g, "x", GLC_DTYPE_F32, 1, s16);
    th = glc_graph_handle(g, "h", GLC_DTYPE_F32, 1, s16);
    glc_graph_output(g, "y", glc_add(g, tx, th));
    assert_int_equal(glc_graph_compile(g, NULL, &acc), GLC_OK);
    glc_graph_destroy(g);
    assert_int_equal(glc_plan_run(acc, &in, 1, &out, 1), GLC_ERR_STATE);
    assert_string_equal(glc_device_errmsg(dev), "glc_plan_run: handle \"h\" was never bound");
    assert_int_equal(glc_plan_bind_handle(acc, "h", zero, 15 * 4), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_plan_bind_handle(acc, "h", zero, sizeof zero), GLC_OK);
    assert_int_equal(glc_plan_set_handle_feed(acc, "h", "x"), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_plan_set_handle_feed(acc, "h", "y"), GLC_OK);
    for (run = 1; run <= 3; run++) {
        assert_int_equal(glc_plan_run(acc, &in, 1, &out, 1), GLC_OK);
        for (i = 0; i < 16; i++)
            assert_true(y[i] == (float)(run * i));
    }
    assert_int_equal(glc_plan_read_handle(acc, "h", h, sizeof h), GLC_OK);
    for (i = 0; i < 16; i++)
        assert_true(h[i] == (float)(3 * i));

    /* another plan reading the same handle */
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    th = glc_graph_handle(g, "h", GLC_DTYPE_F32, 1, s16);
    glc_graph_output(g, "z", glc_scale(g, th, 2, 0));
    assert_int_equal(glc_graph_compile(g, NULL, &twice), GLC_OK);
    glc_graph_destroy(g);
    assert_int_equal(glc_plan_share(twice, acc, GLC_SHARE_HANDLES), GLC_OK);
    assert_int_equal(glc_plan_run(twice, NULL, 0, &outz, 1), GLC_OK);
    for (i = 0; i < 16; i++)
        assert_true(z[i] == (float)(6 * i));
    assert_int_equal(glc_plan_run(acc, &in, 1, &out, 1), GLC_OK); /* h = 4x */
    assert_int_equal(glc_plan_run(twice, NULL, 0, &outz, 1), GLC_OK);
    for (i = 0; i < 16; i++)
        assert_true(z[i] == (float)(8 * i));

    /* a clone: own handle, to be bound */
    assert_int_equal(glc_plan_clone(acc, &clone), GLC_OK);
    assert_int_equal(glc_plan_run(clone, &in, 1, &out, 1), GLC_ERR_STATE);
    assert_int_equal(glc_plan_bind_handle(clone, "h", x, sizeof x), GLC_OK);
    assert_int_equal(glc_plan_run(clone, &in, 1, &out, 1), GLC_OK);
    for (i = 0; i < 16; i++)
        assert_true(y[i] == (float)(2 * i));
    assert_int_equal(glc_plan_read_handle(acc, "h", h, sizeof h), GLC_OK);
    for (i = 0; i < 16; i++)
        assert_true(h[i] == (float)(4 * i)); /* the clone's runs left it alone */
    glc_plan_destroy(clone);
    glc_plan_destroy(twice);
    glc_plan_destroy(acc);
    glc_device_destroy(dev);
}

/* A handle's writes are in place, so a value of it from before a later
 * write is gone. Each way of reading one is refused with its message
 * (test_fuse_random built add(h after write 1, h after write 2) and got
 * both as the second); a reader made before the later write still runs
 * before it and sees the first write's rows, fused and not. */
static void test_handle_versions(void **state)
{
    glc_device *dev = tu_device(NULL);
    int64_t hs[2] = {6, 4}, xs[2] = {2, 4}, is[1] = {2};
    glc_graph *g;
    glc_plan *p;
    glc_tensor h, a, b, ids, v1, v2;
    float av[8], bv[8], y1[24], y2[24], zero[24] = {0};
    int32_t idv[2] = {4, 1};
    int flags, i;
    (void)state;
    for (i = 0; i < 8; i++) {
        av[i] = (float)(i + 1);
        bv[i] = (float)(-10 - i);
    }
    for (i = 0; i < 4; i++) { /* a graph, then one stale read of it each */
        assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
        h = glc_graph_handle(g, "h", GLC_DTYPE_F32, 2, hs);
        a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, xs);
        ids = glc_graph_input(g, "i", GLC_DTYPE_I32, 1, is);
        v1 = glc_set_rows(g, h, a, ids);
        if (i == 3)
            glc_graph_output(g, "early", v1);
        v2 = glc_set_rows(g, v1, a, ids);
        if (i == 0)
            glc_add(g, v1, v2);
        else if (i == 1)
            glc_graph_output(g, "o", glc_reshape(g, v1, 1, (int64_t[]){24}));
        else if (i == 2)
            glc_set_rows(g, v1, a, ids);
        assert_int_equal(glc_graph_status(g), GLC_ERR_INVALID_ARG);
        assert_non_null(strstr(glc_graph_errmsg(g), "\"h\" before"));
        glc_graph_destroy(g);
    }
    for (flags = 0; flags < 2; flags++) { /* y1 reads the first write's rows */
        assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
        h = glc_graph_handle(g, "h", GLC_DTYPE_F32, 2, hs);
        a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, xs);
        b = glc_graph_input(g, "b", GLC_DTYPE_F32, 2, xs);
        ids = glc_graph_input(g, "i", GLC_DTYPE_I32, 1, is);
        v1 = glc_set_rows(g, h, a, ids);
        glc_graph_output(g, "y1", glc_scale(g, v1, 1, 0));
        v2 = glc_set_rows(g, v1, b, ids);
        glc_graph_output(g, "y2", glc_scale(g, v2, 1, 0));
        p = tu_compile(dev, g, flags ? GLC_COMPILE_NO_FUSE : 0);
        assert_int_equal(glc_plan_bind_handle(p, "h", zero, sizeof zero), GLC_OK);
        {
            glc_plan_input in[3] = {{"a", av, 8}, {"b", bv, 8}, {"i", idv, 2}};
            glc_plan_output out[2] = {{"y1", y1, 24}, {"y2", y2, 24}};
            assert_int_equal(glc_plan_run(p, in, 3, out, 2), GLC_OK);
        }
        for (i = 0; i < 24; i++) {
            int row = i / 4, col = i % 4, k = row == 4 ? 0 : row == 1 ? 1 : -1;
            assert_true(y1[i] == (k < 0 ? 0.0f : av[4 * k + col]));
            assert_true(y2[i] == (k < 0 ? 0.0f : bv[4 * k + col]));
        }
        glc_plan_destroy(p);
    }
    glc_device_destroy(dev);
}

/* A clone keeps its source's compile options: a NO_FUSE plan with two
 * transposed matmuls of one input (what the qkv pass would pack) clones,
 * shares the source's params and gives its results; a fused plan's clone
 * is the same fused program. Against a double-precision reference. */
static glc_plan *two_proj_plan(glc_device *dev, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_matmul_desc nt = {1};
    int64_t xs[2] = {3, 16}, ws[2] = {8, 16};
    glc_tensor x;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    glc_graph_output(g, "q", glc_matmul(g, x, glc_graph_param(g, "wq", GLC_DTYPE_F32, 2, ws),
                                        glc_none(), &nt));
    glc_graph_output(g, "k", glc_matmul(g, x, glc_graph_param(g, "wk", GLC_DTYPE_F32, 2, ws),
                                        glc_none(), &nt));
    p = tu_compile(dev, g, flags);
    return p;
}

static void test_clone_keeps_options(void **state)
{
    glc_device *dev = tu_device(NULL);
    float x[48], wq[128], wk[128], q[24], k[24];
    uint64_t seed = 31;
    int f, i, j, c;
    (void)state;
    for (i = 0; i < 48; i++)
        x[i] = (float)(tu_rand(&seed) % 200) / 100.0f - 1.0f;
    for (i = 0; i < 128; i++) {
        wq[i] = (float)(tu_rand(&seed) % 200) / 100.0f - 1.0f;
        wk[i] = (float)(tu_rand(&seed) % 200) / 100.0f - 1.0f;
    }
    for (f = 0; f < 2; f++) {
        glc_plan *src = two_proj_plan(dev, f ? 0 : GLC_COMPILE_NO_FUSE), *cl = NULL;
        glc_plan_info si, ci;
        glc_plan_input in = {"x", x, 48};
        glc_plan_output out[2] = {{"q", q, 24}, {"k", k, 24}};
        glc_status st;
        assert_int_equal(glc_plan_set_param(src, "wq", wq, 128), GLC_OK);
        assert_int_equal(glc_plan_set_param(src, "wk", wk, 128), GLC_OK);
        st = glc_plan_clone(src, &cl);
        if (st != GLC_OK)
            fail_msg("clone of a %s plan: %s: %s", f ? "fused" : "NO_FUSE", glc_status_str(st),
                     glc_device_errmsg(dev));
        assert_int_equal(glc_plan_stats(src, &si), GLC_OK);
        assert_int_equal(glc_plan_stats(cl, &ci), GLC_OK);
        /* the qkv pass packs q | k where k's 3 x 8 floats after q start aligned */
        assert_int_equal(si.fused, f && tu_aligned(dev, 3 * 8 * 4) ? 1 : 0);
        assert_int_equal(ci.fused, si.fused);
        assert_int_equal(ci.dispatches, si.dispatches);
        assert_int_equal(glc_plan_run(cl, &in, 1, out, 2), GLC_OK);
        for (i = 0; i < 3; i++)
            for (j = 0; j < 8; j++) {
                double rq = 0, rk = 0;
                for (c = 0; c < 16; c++) {
                    rq += (double)x[i * 16 + c] * wq[j * 16 + c];
                    rk += (double)x[i * 16 + c] * wk[j * 16 + c];
                }
                if (fabs(q[i * 8 + j] - rq) > 1e-4 || fabs(k[i * 8 + j] - rk) > 1e-4)
                    fail_msg("clone (%s) [%d][%d]: q %g (%g), k %g (%g)", f ? "fused" : "NO_FUSE",
                             i, j, q[i * 8 + j], rq, k[i * 8 + j], rk);
            }
        glc_plan_destroy(cl);
        glc_plan_destroy(src); /* (it outlives its clone) */
    }
    glc_device_destroy(dev);
}

/* The memory planner on a general graph (issue 11): c = copy(x [1,1]);
 * s = c - c; m = s W [1,20]; a = B + m; q = (c * a) W2^T [22,20] + B2;
 * y = gelu(q). Unfused (each op its own value) and fused, the arena is at
 * the liveness bound (greedy by size alone took 368 bytes for 288). */
static void test_arena_at_bound(void **state)
{
    glc_device *dev = tu_device(NULL);
    int f;
    (void)state;
    for (f = 0; f < 2; f++) {
        glc_graph *g;
        glc_plan *p;
        glc_plan_info info;
        glc_compile_desc cd;
        glc_matmul_desc nn = {0}, nt = {1};
        int64_t xs[2] = {1, 1}, ws[2] = {1, 20}, bs[1] = {20}, w2s[2] = {22, 20}, b2s[1] = {22};
        glc_tensor x, c, m, a, q;
        assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
        x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
        c = glc_copy(g, x, NULL, 0);
        m = glc_matmul(g, glc_sub(g, c, c), glc_graph_param(g, "W", GLC_DTYPE_F32, 2, ws),
                       glc_none(), &nn);
        a = glc_add(g, glc_graph_param(g, "B", GLC_DTYPE_F32, 1, bs), m);
        q = glc_matmul(g, glc_mul(g, c, a), glc_graph_param(g, "W2", GLC_DTYPE_F32, 2, w2s),
                       glc_graph_param(g, "B2", GLC_DTYPE_F32, 1, b2s), &nt);
        glc_graph_output(g, "y", glc_unary(g, GLC_UNARY_GELU, q, 0));
        cd.flags = f ? 0 : GLC_COMPILE_NO_FUSE;
        assert_int_equal(glc_graph_compile(g, &cd, &p), GLC_OK);
        glc_graph_destroy(g);
        assert_int_equal(glc_plan_stats(p, &info), GLC_OK);
        if (info.arena_bytes != info.liveness_bound)
            fail_msg("%s: arena %zu bytes, liveness bound %zu", f ? "fused" : "unfused",
                     info.arena_bytes, info.liveness_bound);
        glc_plan_destroy(p);
    }
    glc_device_destroy(dev);
}

/* GLC_TRACE=barriers traces plans, with no session ever begun: at compile,
 * one line per barrier naming the conflict (kind, bytes, the tensors on
 * both sides and the earlier dispatch); nothing without the variable. */
static size_t count_lines(const char *all, const char *what)
{
    size_t n = 0;
    for (; (all = strstr(all, what)) != NULL; all += strlen(what))
        n++;
    return n;
}

static void test_trace_barriers(void **state)
{
    int on;
    (void)state;
    for (on = 0; on < 2; on++) {
        tu_log log;
        glc_device *dev;
        glc_graph *g;
        glc_plan *p;
        glc_plan_info info;
        int64_t xs[1] = {100};
        glc_tensor x, a;
        if (on)
            setenv("GLC_TRACE", "barriers", 1);
        else
            unsetenv("GLC_TRACE");
        dev = tu_device(&log);
        unsetenv("GLC_TRACE");
        assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
        x = glc_graph_input(g, "x", GLC_DTYPE_F32, 1, xs);
        a = glc_scale(g, x, 2.0f, 1.0f);
        glc_graph_output(g, "y", glc_unary(g, GLC_UNARY_RELU, glc_add(g, a, x), 0));
        assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
        glc_graph_destroy(g);
        assert_int_equal(glc_plan_stats(p, &info), GLC_OK);
        assert_int_equal(info.barriers, 2);
        if (!on) {
            assert_int_equal(count_lines(log.all, "plan barrier"), 0);
        } else {
            if (count_lines(log.all, "plan barrier before dispatch") != 2)
                fail_msg("trace: %s", log.all);
            tu_assert_contains(log.all, "plan barrier before dispatch 1 (binary \"add\", "
                                        "scale output, tensor 1): RAW on bytes [");
            tu_assert_contains(log.all, "with dispatch 0 (unary \"scale\", scale output, "
                                        "tensor 1)");
            tu_assert_contains(log.all, "plan barrier before dispatch 2 (unary \"unary\", "
                                        "add output, tensor 2): RAW");
        }
        glc_plan_destroy(p);
        glc_device_destroy(dev);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_equals_eager),
        cmocka_unit_test(test_barriers_and_arena),
        cmocka_unit_test(test_vars),
        cmocka_unit_test(test_runs_allocate_nothing),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_handles),
        cmocka_unit_test(test_clone_keeps_options),
        cmocka_unit_test(test_arena_at_bound),
        cmocka_unit_test(test_trace_barriers),
        cmocka_unit_test(test_vars_op_refuses),
        cmocka_unit_test(test_handle_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
