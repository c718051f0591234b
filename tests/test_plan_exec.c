/*
 * The other runs of a compiled plan, on llvmpipe: a commit without a wait
 * and its sync give what a plain run gives, and every other run is
 * refused meanwhile; pipelined sets give what n plain runs give, each
 * with its own outputs (handle feeds in order); typed runs move bytes in
 * the declared dtypes and check their counts; profiled runs name and time
 * every dispatch and change no result; the listing shows the kernels and
 * barriers where they fall; none of these runs allocates once warm (and
 * the check is shown to catch one that does).
 */
#include "testutil.h"

#include "alloc.h"
#include "device.h"
#include "optest.h"
#include "plan.h"

#define D 48
#define T 9

/* z = silu(softmax(rms_norm(x + w, b)) * x), n = the norm: x [T, D];
 * flags: glc_compile_desc.flags */
static glc_plan *build_flags(glc_device *dev, int64_t tmin, int64_t tmax, uint32_t flags)
{
    glc_compile_desc desc;
    int64_t xs[2], ws[1] = {D};
    glc_tensor x, w, b, n, z;
    glc_graph *g;
    glc_plan *p = NULL;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    xs[0] = glc_graph_var(g, "T", tmin, tmax);
    xs[1] = D;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    w = glc_graph_param(g, "w", GLC_DTYPE_F16, 1, ws);
    b = glc_graph_param(g, "b", GLC_DTYPE_F32, 1, ws);
    n = glc_rms_norm(g, glc_add(g, x, w), b, 1e-5f);
    z = glc_unary(g, GLC_UNARY_SILU, glc_mul(g, glc_softmax(g, n, NULL), x), 0);
    glc_graph_output(g, "z", z);
    glc_graph_output(g, "n", n);
    desc.flags = flags;
    assert_int_equal(glc_graph_compile(g, &desc, &p), GLC_OK);
    glc_graph_destroy(g);
    return p;
}

static glc_plan *build(glc_device *dev, int64_t tmin, int64_t tmax)
{
    return build_flags(dev, tmin, tmax, 0);
}

static glc_plan *build_ready_flags(glc_device *dev, int64_t tmin, int64_t tmax, uint32_t flags)
{
    glc_plan *p = build_flags(dev, tmin, tmax, flags);
    float w[D], b[D];
    uint64_t seed = 77;
    ot_fill(&seed, w, D, -1, 1);
    ot_fill(&seed, b, D, 0.5f, 1.5f);
    assert_int_equal(glc_plan_set_param(p, "w", w, D), GLC_OK);
    assert_int_equal(glc_plan_set_param(p, "b", b, D), GLC_OK);
    return p;
}

static glc_plan *build_ready(glc_device *dev, int64_t tmin, int64_t tmax)
{
    return build_ready_flags(dev, tmin, tmax, 0);
}

/* A plain run_slots of x: z and n copied out. */
static void plain(glc_plan *p, const float *x, float *z, float *n)
{
    const void *ins[1];
    glc_plan_slice sl[2];
    const char *arena;
    ins[0] = x;
    assert_int_equal(glc_plan_run_slots(p, ins, sl), GLC_OK);
    arena = (const char *)glc_plan_arena_ptr(p);
    memcpy(z, arena + sl[0].offset, sl[0].bytes);
    memcpy(n, arena + sl[1].offset, sl[1].bytes);
}

static const char pending_msg[] = ": a run of glc_plan_commit_no_wait is pending (call "
                                  "glc_plan_sync_pending first)";

static void assert_refused(glc_device *dev, const char *fn)
{
    char want[256];
    snprintf(want, sizeof want, "%s%s", fn, pending_msg);
    assert_string_equal(glc_device_errmsg(dev), want);
}

static void test_commit_sync(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_plan *p = build(dev, 1, T);
    float x1[T * D], x2[T * D], z1[T * D], n1[T * D], z2[T * D], n2[T * D], keep[T * D],
        dst[T * D];
    const void *ins1[1] = {x1}, *ins2[1] = {x2}, *none[1] = {NULL};
    glc_plan_slice sl[2], sl2[2];
    glc_plan_input in = {"x", x2, T * D};
    glc_plan_output out = {"z", dst, T * D};
    glc_plan_var t4 = {"T", 4}, t9 = {"T", T};
    glc_plan_dispatch_time ent[8];
    glc_plan_profile prof;
    const char *arena;
    uint64_t seed = 1;
    (void)state;
    ot_fill(&seed, x1, T * D, -2, 2);
    ot_fill(&seed, x2, T * D, -2, 2);
    ot_fill(&seed, keep, T * D, -1, 1);
    memcpy(dst, keep, sizeof dst);
    /* refused before anything runs: params unset, an input missing */
    assert_int_equal(glc_plan_commit_no_wait(p, ins1), GLC_ERR_STATE);
    assert_string_equal(glc_device_errmsg(dev),
                        "glc_plan_commit_no_wait: param \"w\" was never set");
    glc_plan_destroy(p);
    p = build_ready(dev, 1, T);
    assert_int_equal(glc_plan_commit_no_wait(p, none), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "glc_plan_commit_no_wait: input slot 0 (\"x\") is NULL");
    assert_int_equal(glc_plan_sync_pending(p, sl), GLC_ERR_STATE);
    assert_string_equal(glc_device_errmsg(dev), "glc_plan_sync_pending: no run is pending "
                                                "(glc_plan_commit_no_wait starts one)");
    plain(p, x1, z1, n1);
    plain(p, x2, z2, n2);

    assert_int_equal(glc_plan_commit_no_wait(p, ins1), GLC_OK);
    assert_true(glc_plan_is_pending(p));
    /* every other run is refused and changes nothing */
    assert_int_equal(glc_plan_run_slots(p, ins2, sl2), GLC_ERR_STATE);
    assert_refused(dev, "glc_plan_run_slots");
    assert_int_equal(glc_plan_run(p, &in, 1, &out, 1), GLC_ERR_STATE);
    assert_refused(dev, "glc_plan_run");
    assert_memory_equal(dst, keep, sizeof dst);
    assert_int_equal(glc_plan_commit_no_wait(p, ins2), GLC_ERR_STATE);
    assert_refused(dev, "glc_plan_commit_no_wait");
    assert_int_equal(glc_plan_run_pipelined(p, 1, ins2, (void *const[]){dst, dst}),
                     GLC_ERR_STATE);
    assert_refused(dev, "glc_plan_run_pipelined");
    assert_memory_equal(dst, keep, sizeof dst);
    prof.entries = ent;
    prof.capacity = 8;
    prof.count = 1234;
    assert_int_equal(glc_plan_run_profiled(p, ins2, sl2, &prof), GLC_ERR_STATE);
    assert_refused(dev, "glc_plan_run_profiled");
    assert_int_equal(prof.count, 1234);
    /* the sync gives the committed run's outputs */
    assert_int_equal(glc_plan_sync_pending(p, sl), GLC_OK);
    assert_false(glc_plan_is_pending(p));
    arena = (const char *)glc_plan_arena_ptr(p);
    assert_int_equal(sl[0].bytes, sizeof z1);
    assert_int_equal(sl[1].bytes, sizeof n1);
    assert_memory_equal(arena + sl[0].offset, z1, sizeof z1);
    assert_memory_equal(arena + sl[1].offset, n1, sizeof n1);
    assert_int_equal(glc_plan_sync_pending(p, sl), GLC_ERR_STATE);
    /* runs work again */
    assert_int_equal(glc_plan_run(p, &in, 1, &out, 1), GLC_OK);
    assert_memory_equal(dst, z2, sizeof z2);

    /* the outputs are sized by the variables of the commit, whatever they
     * are set to while it is pending; rows are independent in this graph,
     * so the first 4 rows are those of the T = 9 run */
    assert_int_equal(glc_plan_set_vars(p, &t4, 1), GLC_OK);
    assert_int_equal(glc_plan_commit_no_wait(p, ins2), GLC_OK);
    assert_int_equal(glc_plan_set_vars(p, &t9, 1), GLC_OK);
    assert_int_equal(glc_plan_sync_pending(p, sl), GLC_OK);
    assert_int_equal(sl[0].bytes, 4 * D * 4);
    assert_memory_equal((const char *)glc_plan_arena_ptr(p) + sl[0].offset, z2, 4 * D * 4);
    assert_memory_equal((const char *)glc_plan_arena_ptr(p) + sl[1].offset, n2, 4 * D * 4);

    /* a pending run is dropped by destroy (ASan sees no leak) */
    assert_int_equal(glc_plan_commit_no_wait(p, ins1), GLC_OK);
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

/* n sets in one call: each set's outputs are those of a plain run of it. */
static void test_pipelined(void **state)
{
    enum { N = 5 };
    glc_device *dev = tu_device(NULL);
    glc_plan *p = build_ready(dev, 1, T);
    static float x[N][T * D], z[N][T * D], n[N][T * D], ez[N][T * D], en[N][T * D];
    const void *ins[N];
    void *outs[2 * N];
    glc_plan_var t4 = {"T", 4};
    uint64_t seed = 5;
    int k;
    (void)state;
    for (k = 0; k < N; k++) {
        ot_fill(&seed, x[k], T * D, -2, 2);
        plain(p, x[k], ez[k], en[k]);
        ins[k] = x[k];
        outs[2 * k] = z[k];
        outs[2 * k + 1] = n[k];
    }
    assert_int_equal(glc_plan_input_bytes(p, 0), T * D * 4);
    assert_int_equal(glc_plan_output_bytes(p, 1), T * D * 4);
    assert_int_equal(glc_plan_output_bytes(p, 2), 0);
    assert_int_equal(glc_plan_run_pipelined(p, N, ins, outs), GLC_OK);
    for (k = 0; k < N; k++) {
        assert_memory_equal(z[k], ez[k], sizeof z[k]);
        assert_memory_equal(n[k], en[k], sizeof n[k]);
    }
    /* fewer sets at a smaller T: the staging buffers are reused */
    assert_int_equal(glc_plan_set_vars(p, &t4, 1), GLC_OK);
    assert_int_equal(glc_plan_output_bytes(p, 0), 4 * D * 4);
    for (k = 0; k < 3; k++)
        plain(p, x[k], ez[k], en[k]);
    memset(z, 0, sizeof z);
    assert_int_equal(glc_plan_run_pipelined(p, 3, ins, outs), GLC_OK);
    for (k = 0; k < 3; k++) {
        assert_memory_equal(z[k], ez[k], 4 * D * 4);
        assert_memory_equal(n[k], en[k], 4 * D * 4);
        assert_true(z[k][4 * D] == 0.0f); /* nothing past the run's bytes */
    }
    /* bad input: clear messages, outputs untouched */
    memset(z, 0, sizeof z);
    assert_int_equal(glc_plan_run_pipelined(p, 0, ins, outs), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "glc_plan_run_pipelined: 0 sets, inputs given, outputs given");
    ins[2] = NULL;
    assert_int_equal(glc_plan_run_pipelined(p, 3, ins, outs), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "glc_plan_run_pipelined: set 2: input slot 0 (\"x\") is NULL");
    ins[2] = x[2];
    outs[3] = NULL;
    assert_int_equal(glc_plan_run_pipelined(p, 3, ins, outs), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "glc_plan_run_pipelined: set 1: output slot 1 (\"n\") is NULL");
    for (k = 0; k < N; k++)
        assert_true(z[k][0] == 0.0f);
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

/* Two inputs of different dtypes, and a handle fed from the output: set k
 * sees the state set k - 1 left, as with plain runs in a row. */
static void test_pipelined_feed(void **state)
{
    enum { N = 4 };
    glc_device *dev = tu_device(NULL);
    int64_t s[1] = {40};
    float a[N][40], zero[40] = {0}, y[N][40], h[40];
    uint16_t b[N][40];
    const void *ins[2 * N];
    void *outs[N];
    glc_graph *g;
    glc_plan *p;
    glc_tensor ta, tb, th;
    int i, k;
    (void)state;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    ta = glc_graph_input(g, "a", GLC_DTYPE_F32, 1, s);
    tb = glc_graph_input(g, "b", GLC_DTYPE_F16, 1, s);
    th = glc_graph_handle(g, "h", GLC_DTYPE_F32, 1, s);
    glc_graph_output(g, "y", glc_add(g, glc_add(g, ta, tb), th));
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    assert_int_equal(glc_plan_bind_handle(p, "h", zero, sizeof zero), GLC_OK);
    assert_int_equal(glc_plan_set_handle_feed(p, "h", "y"), GLC_OK);
    for (k = 0; k < N; k++) {
        for (i = 0; i < 40; i++) {
            a[k][i] = (float)(i * (k + 1));
            b[k][i] = ot_f32_to_f16((float)(k + 1));
        }
        ins[2 * k] = a[k];
        ins[2 * k + 1] = b[k];
        outs[k] = y[k];
    }
    assert_int_equal(glc_plan_input_bytes(p, 1), 80);
    assert_int_equal(glc_plan_run_pipelined(p, N, ins, outs), GLC_OK);
    /* y_k = sum over sets j <= k of (a_j + b_j) */
    for (k = 0; k < N; k++)
        for (i = 0; i < 40; i++) {
            float want = 0;
            int j;
            for (j = 0; j <= k; j++)
                want += (float)(i * (j + 1)) + (float)(j + 1);
            assert_true(y[k][i] == want);
        }
    assert_int_equal(glc_plan_read_handle(p, "h", h, sizeof h), GLC_OK);
    assert_memory_equal(h, y[N - 1], sizeof h);
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

/* Typed runs: f16 and f32 inputs as their bytes, f32 and i32 outputs. */
static void test_typed(void **state)
{
    glc_device *dev = tu_device(NULL);
    int64_t s[2] = {4, 32};
    float a[128], c[128], y[128], ty[128], keep[128];
    int32_t m[4], tm[4];
    uint16_t ah[128];
    glc_graph *g;
    glc_plan *p;
    glc_tensor ta, tc, ty_;
    uint64_t seed = 9;
    int i;
    (void)state;
    ot_fill(&seed, a, 128, -4, 4);
    ot_fill(&seed, c, 128, -4, 4);
    for (i = 0; i < 128; i++) {
        ah[i] = ot_f32_to_f16(a[i]);
        a[i] = ot_f16_to_f32(ah[i]);
    }
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    ta = glc_graph_input(g, "a", GLC_DTYPE_F16, 2, s);
    tc = glc_graph_input(g, "c", GLC_DTYPE_F32, 2, s);
    ty_ = glc_add(g, ta, tc);
    glc_graph_output(g, "y", ty_);
    glc_graph_output(g, "m", glc_argmax(g, ty_));
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    {
        glc_plan_input in[2] = {{"c", c, 128}, {"a", a, 128}};
        glc_plan_output out[2] = {{"m", m, 4}, {"y", y, 128}};
        assert_int_equal(glc_plan_run(p, in, 2, out, 2), GLC_OK);
    }
    {
        glc_plan_typed_input in[2] = {{"a", ah, sizeof ah, GLC_DTYPE_F16},
                                      {"c", c, sizeof c, GLC_DTYPE_F32}};
        glc_plan_typed_output out[2] = {{"y", ty, sizeof ty, GLC_DTYPE_F32},
                                        {"m", tm, sizeof tm, GLC_DTYPE_I32}};
        assert_int_equal(glc_plan_run_typed(p, in, 2, out, 2), GLC_OK);
        assert_memory_equal(ty, y, sizeof y);
        assert_memory_equal(tm, m, sizeof m);
        for (i = 0; i < 4; i++)
            assert_true(tm[i] >= 0 && tm[i] < 32);

        /* byte counts and dtypes are checked; the outputs stay as they were */
        ot_fill(&seed, keep, 128, -1, 1);
        memcpy(ty, keep, sizeof ty);
        in[0].bytes = sizeof ah - 2;
        assert_int_equal(glc_plan_run_typed(p, in, 2, out, 2), GLC_ERR_INVALID_ARG);
        assert_string_equal(glc_device_errmsg(dev),
                            "glc_plan_run_typed: input \"a\": 254 bytes of f16 given, it "
                            "takes 256 bytes of f16");
        in[0].bytes = sizeof ah;
        in[0].dtype = GLC_DTYPE_BF16;
        assert_int_equal(glc_plan_run_typed(p, in, 2, out, 2), GLC_ERR_INVALID_ARG);
        assert_string_equal(glc_device_errmsg(dev),
                            "glc_plan_run_typed: input \"a\": 256 bytes of bf16 given, it "
                            "takes 256 bytes of f16");
        in[0].dtype = GLC_DTYPE_F16;
        out[1].dtype = GLC_DTYPE_U32;
        assert_int_equal(glc_plan_run_typed(p, in, 2, out, 2), GLC_ERR_INVALID_ARG);
        assert_string_equal(glc_device_errmsg(dev),
                            "glc_plan_run_typed: output \"m\": room for 16 bytes of u32, it "
                            "has 16 bytes of i32");
        out[1].dtype = GLC_DTYPE_I32;
        out[0].bytes = 4 * 128 / 2; /* f32 counted as f16 */
        assert_int_equal(glc_plan_run_typed(p, in, 2, out, 2), GLC_ERR_INVALID_ARG);
        out[0].bytes = sizeof ty;
        assert_int_equal(glc_plan_run_typed(p, in, 1, out, 2), GLC_ERR_INVALID_ARG);
        assert_string_equal(glc_device_errmsg(dev), "glc_plan_run_typed: input \"c\" is missing");
        in[1].name = "q";
        assert_int_equal(glc_plan_run_typed(p, in, 2, out, 2), GLC_ERR_INVALID_ARG);
        assert_string_equal(glc_device_errmsg(dev), "glc_plan_run_typed: no input named \"q\"");
        in[1].name = "a";
        assert_int_equal(glc_plan_run_typed(p, in, 2, out, 2), GLC_ERR_INVALID_ARG);
        tu_assert_contains(glc_device_errmsg(dev), "given twice");
        assert_memory_equal(ty, keep, sizeof ty);
        /* outputs are optional, inputs are not */
        in[1].name = "c";
        assert_int_equal(glc_plan_run_typed(p, in, 2, NULL, 0), GLC_OK);
    }
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

/* ops: the op of each dispatch in order, or NULL (any, not empty). */
static void check_profile(const glc_plan_profile *prof, uint32_t dispatches,
                          const char *const *ops)
{
    uint64_t sum = 0;
    uint32_t i;
    assert_int_equal(prof->count, dispatches);
    for (i = 0; i < prof->count; i++) {
        const glc_plan_dispatch_time *e = &prof->entries[i];
        assert_non_null(e->kernel);
        assert_true(e->kernel[0] != '\0');
        assert_non_null(e->op);
        if (ops)
            assert_string_equal(e->op, ops[i]);
        else
            assert_true(e->op[0] != '\0');
        assert_int_equal(e->index, i);
        sum += e->gpu_ns;
    }
    assert_true(sum == prof->total_ns);
    assert_true(prof->total_ns > 0);
}

/* Profiled runs: a name and a time per dispatch, the same results. The
 * plan is compiled unfused so its dispatches are known: one per op. */
static void test_profiled(void **state)
{
    static const char *const ops[] = {"add", "rms_norm", "softmax", "mul", "unary"};
    glc_device *dev = tu_device(NULL);
    glc_plan *p = build_ready_flags(dev, 1, T, GLC_COMPILE_NO_FUSE);
    float x[T * D], z[T * D], n[T * D];
    const void *ins[1] = {x};
    glc_plan_dispatch_time ent[8];
    glc_plan_profile prof;
    glc_plan_slice sl[2];
    glc_plan_info info;
    glc_profile_clock first;
    int had_timers;
    uint64_t seed = 13, seen = 0;
    uint32_t i;
    (void)state;
    ot_fill(&seed, x, T * D, -2, 2);
    plain(p, x, z, n);
    assert_int_equal(glc_plan_stats(p, &info), GLC_OK);
    memset(&prof, 0, sizeof prof);
    prof.entries = ent;
    prof.capacity = 8;
    assert_int_equal(glc_plan_run_profiled(p, ins, sl, &prof), GLC_OK);
    check_profile(&prof, info.dispatches, ops);
    assert_memory_equal((const char *)glc_plan_arena_ptr(p) + sl[0].offset, z, sizeof z);
    assert_memory_equal((const char *)glc_plan_arena_ptr(p) + sl[1].offset, n, sizeof n);
    assert_true(strncmp(ent[1].kernel, "reduce", 6) == 0); /* or reduce_row4 (llvmpipe) */
    if (strstr(dev->info.renderer, "llvmpipe"))
        assert_int_equal(prof.clock, GLC_PROFILE_CLOCK_TIMESTAMP); /* elapsed reads ~0 there */
    else if (dev->info.features.timer_query)
        assert_true(prof.clock == GLC_PROFILE_CLOCK_ELAPSED ||
                    prof.clock == GLC_PROFILE_CLOCK_TIMESTAMP);
    else
        assert_int_equal(prof.clock, GLC_PROFILE_CLOCK_CPU);
    fprintf(stderr, "profile clock %d (1 elapsed, 2 timestamp, 3 cpu), %llu ns in %u dispatches\n",
            (int)prof.clock, (unsigned long long)prof.total_ns, prof.count);
    first = prof.clock;
    /* again: the clock found is kept */
    assert_int_equal(glc_plan_run_profiled(p, ins, sl, &prof), GLC_OK);
    check_profile(&prof, info.dispatches, ops);
    assert_int_equal(prof.clock, first);
    /* sorted longest first, the same entries */
    glc_plan_profile_sort(&prof);
    for (i = 0; i < prof.count; i++) {
        if (i)
            assert_true(ent[i - 1].gpu_ns >= ent[i].gpu_ns);
        seen |= 1u << ent[i].index;
    }
    assert_int_equal(seen, (1u << prof.count) - 1);
    /* too little room: refused, nothing written */
    prof.capacity = 4;
    prof.count = 99;
    assert_int_equal(glc_plan_run_profiled(p, ins, sl, &prof), GLC_ERR_BOUNDS);
    assert_string_equal(glc_device_errmsg(dev),
                        "glc_plan_run_profiled: room for 4 dispatch times, the plan has 5");
    assert_int_equal(prof.count, 99);
    /* without timer queries: the host clock */
    prof.capacity = 8;
    had_timers = dev->info.features.timer_query;
    dev->info.features.timer_query = 0;
    assert_int_equal(glc_plan_run_profiled(p, ins, sl, &prof), GLC_OK);
    assert_int_equal(prof.clock, GLC_PROFILE_CLOCK_CPU);
    check_profile(&prof, info.dispatches, ops);
    assert_memory_equal((const char *)glc_plan_arena_ptr(p) + sl[0].offset, z, sizeof z);
    dev->info.features.timer_query = had_timers;
    glc_plan_destroy(p);
    /* the fused plan: fewer dispatches, each named and timed */
    p = build_ready(dev, 1, T);
    plain(p, x, z, n);
    assert_int_equal(glc_plan_stats(p, &info), GLC_OK);
    assert_int_equal(glc_plan_run_profiled(p, ins, sl, &prof), GLC_OK);
    check_profile(&prof, info.dispatches, NULL);
    assert_memory_equal((const char *)glc_plan_arena_ptr(p) + sl[0].offset, z, sizeof z);
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

typedef struct text {
    char buf[1 << 17];
    size_t len;
} text;

static void collect(void *user, const char *s)
{
    text *t = (text *)user;
    size_t n = strlen(s);
    assert_true(t->len + n < sizeof t->buf);
    memcpy(t->buf + t->len, s, n + 1);
    t->len += n;
}

/* Each needle after the one before. */
static void assert_in_order(const char *hay, const char *const *needles, int n)
{
    const char *at = hay;
    int i;
    for (i = 0; i < n; i++) {
        const char *f = strstr(at, needles[i]);
        if (!f)
            fail_msg("expected \"%s\" after \"%s\" in:\n%s", needles[i], i ? needles[i - 1] : "",
                     hay);
        at = f + strlen(needles[i]);
    }
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (; (hay = strstr(hay, needle)) != NULL; hay++)
        n++;
    return n;
}

/* h = rms_norm(x, g); s = x * 2 (independent of h: no barrier);
 * y = silu(h + b) * h: a barrier before each link of the chain. Unfused,
 * so there is one dispatch per op; the fused plan's listing agrees with
 * its stats. */
static glc_plan *dump_graph(glc_device *dev, uint32_t flags)
{
    int64_t xs[2] = {6, 32}, ws[1] = {32};
    glc_compile_desc desc;
    glc_tensor x, h;
    glc_graph *g;
    glc_plan *p = NULL;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    h = glc_rms_norm(g, x, glc_graph_param(g, "g", GLC_DTYPE_F32, 1, ws), 1e-6f);
    glc_graph_output(g, "s", glc_scale(g, x, 2, 0));
    glc_graph_output(g, "y", glc_mul(g, glc_unary(g, GLC_UNARY_SILU,
                                                   glc_add(g, h, glc_graph_param(
                                                                     g, "b", GLC_DTYPE_F32, 1,
                                                                     ws)),
                                                   0),
                                     h));
    desc.flags = flags;
    assert_int_equal(glc_graph_compile(g, &desc, &p), GLC_OK);
    glc_graph_destroy(g);
    return p;
}

static void test_dump(void **state)
{
    static text t;
    static const char *const order[] = {
        "plan: 5 steps, 5 dispatches, 3 barriers (the ops' DAG: 4 levels, 3 at least)\n",
        "input x: [6, 32] f32 at b0[0, 768)\n",
        "param g: [32] f32 at b1[",
        "output y: [6, 32] f32 at b0[",
        "dispatch 0: reduce", /* reduce_row4 on llvmpipe */
        " (rms_norm), level 0, groups ",
        "  bind 0: b0[0, 768) read x\n",
        " write t",
        "dispatch 1: unary (scale), level 0, ",
        "  bind 0: b0[0, 768) read x\n",
        "write s\n",
        "barrier: storage (before dispatch 2)\n",
        "dispatch 2: binary (add), level 1, ",
        "barrier: storage (before dispatch 3)\n",
        "dispatch 3: unary (unary), level 2, ",
        "barrier: storage (before dispatch 4)\n",
        "dispatch 4: binary (mul), level 3, ",
        "write y\n",
    };
    glc_device *dev = tu_device(NULL);
    glc_plan *p = dump_graph(dev, GLC_COMPILE_NO_FUSE);
    glc_plan_info info;
    (void)state;
    t.len = 0;
    t.buf[0] = '\0';
    assert_int_equal(glc_plan_dump(p, 0, collect, &t), GLC_OK);
    assert_in_order(t.buf, order, (int)(sizeof order / sizeof order[0]));
    assert_null(strstr(t.buf, "before dispatch 1"));
    assert_int_equal(count_of(t.buf, "barrier:"), 3);
    assert_null(strstr(t.buf, "#version"));
    /* with the sources: one per distinct program, each complete */
    t.len = 0;
    t.buf[0] = '\0';
    assert_int_equal(glc_plan_dump(p, GLC_PLAN_DUMP_SOURCE, collect, &t), GLC_OK);
    assert_in_order(t.buf, order, (int)(sizeof order / sizeof order[0]));
    assert_true(count_of(t.buf, "---- kernel ") >= 3);
    assert_int_equal(count_of(t.buf, "---- kernel "), count_of(t.buf, "#version 310 es\n"));
    tu_assert_contains(t.buf, "---- kernel reduce"); /* reduce or reduce_row4 (llvmpipe) */
    tu_assert_contains(t.buf, "first at dispatch 0 ----\n#version 310 es\n");
    tu_assert_contains(t.buf, "void main");
    /* bad arguments */
    assert_int_equal(glc_plan_dump(p, 0, NULL, NULL), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "glc_plan_dump: fn is NULL");
    assert_int_equal(glc_plan_dump(p, 2, collect, &t), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_plan_dump(NULL, 0, collect, &t), GLC_ERR_INVALID_ARG);
    glc_plan_destroy(p);
    /* fused: as many dispatch and barrier lines as the stats say */
    p = dump_graph(dev, 0);
    assert_int_equal(glc_plan_stats(p, &info), GLC_OK);
    t.len = 0;
    t.buf[0] = '\0';
    assert_int_equal(glc_plan_dump(p, 0, collect, &t), GLC_OK);
    assert_int_equal(count_of(t.buf, "\ndispatch "), (int)info.dispatches);
    assert_int_equal(count_of(t.buf, "\nbarrier: "), (int)info.barriers);
    /* params shared from another plan: their places and bindings say so */
    {
        glc_plan *q = dump_graph(dev, 0);
        assert_int_equal(glc_plan_share(q, p, GLC_SHARE_PARAMS), GLC_OK);
        t.len = 0;
        t.buf[0] = '\0';
        assert_int_equal(glc_plan_dump(q, 0, collect, &t), GLC_OK);
        assert_int_equal(count_of(t.buf, " (shared: another plan's storage)\n"), 2);
        tu_assert_contains(t.buf, "param g: [32] f32 at b");
        tu_assert_contains(t.buf, ": shared(gl ");
        tu_assert_contains(t.buf, ") read g\n");
        glc_plan_destroy(q);
    }
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

/* Once warm, none of these runs allocates (every allocation would fail);
 * and a pipelined call with more sets than before must grow its staging,
 * which the same check catches. */
/* By name there is no cap on the tensor count (there was a fixed 64):
 * y_i = x_i + x_(i+1) over 70 inputs and outputs, run plain, typed and
 * raw against the sums on the host. */
static void test_named_runs_many_tensors(void **state)
{
    enum { NT = 70, E = 4 };
    glc_device *dev = tu_device(NULL);
    static float x[NT][E], y[NT][E];
    static char names[2 * NT][8];
    glc_plan_input in[NT];
    glc_plan_output out[NT];
    glc_plan_typed_input tin[NT];
    glc_plan_typed_output tout[NT];
    const void *ins[NT], *raw[NT];
    glc_tensor t[NT];
    glc_graph *g;
    glc_plan *p;
    int64_t shape[1] = {E};
    uint64_t seed = 70;
    int i, e, mode;
    (void)state;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    for (i = 0; i < NT; i++) {
        snprintf(names[i], sizeof names[i], "x%d", i);
        snprintf(names[NT + i], sizeof names[i], "y%d", i);
        t[i] = glc_graph_input(g, names[i], GLC_DTYPE_F32, 1, shape);
    }
    for (i = 0; i < NT; i++)
        glc_graph_output(g, names[NT + i], glc_add(g, t[i], t[(i + 1) % NT]));
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    for (i = 0; i < NT; i++) {
        ot_fill(&seed, x[i], E, -2, 2);
        /* given in reverse: matched by name, not by position */
        in[NT - 1 - i] = (glc_plan_input){names[i], x[i], E};
        tin[NT - 1 - i] = (glc_plan_typed_input){names[i], x[i], sizeof x[i], GLC_DTYPE_F32};
        out[i] = (glc_plan_output){names[NT + i], y[i], E};
        tout[i] = (glc_plan_typed_output){names[NT + i], y[i], sizeof y[i], GLC_DTYPE_F32};
        ins[i] = x[i];
    }
    for (mode = 0; mode < 3; mode++) {
        memset(y, 0, sizeof y);
        if (mode == 0)
            assert_int_equal(glc_plan_run(p, in, NT, out, NT), GLC_OK);
        else if (mode == 1)
            assert_int_equal(glc_plan_run_typed(p, tin, NT, tout, NT), GLC_OK);
        else {
            assert_int_equal(glc_plan_run_raw(p, ins, raw), GLC_OK);
            for (i = 0; i < NT; i++)
                memcpy(y[i], raw[i], sizeof y[i]);
        }
        for (i = 0; i < NT; i++)
            for (e = 0; e < E; e++)
                assert_float_equal(y[i][e], x[i][e] + x[(i + 1) % NT][e], 1e-6);
    }
    /* a repeated name is still refused, naming the tensor */
    in[0] = in[NT - 1];
    assert_int_equal(glc_plan_run(p, in, NT, out, NT), GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(glc_device_errmsg(dev), "input \"x0\": given twice"));
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

static void test_runs_allocate_nothing(void **state)
{
    enum { N = 3 };
    glc_device *dev = tu_device(NULL);
    glc_plan *p = build_ready(dev, 1, T);
    static float x[N + 1][T * D], z[N + 1][T * D], n[N + 1][T * D];
    const void *ins[N + 1];
    void *outs[2 * (N + 1)];
    glc_plan_slice sl[2];
    glc_plan_dispatch_time ent[8];
    glc_plan_profile prof;
    glc_plan_typed_input tin = {"x", x[0], sizeof x[0], GLC_DTYPE_F32};
    glc_plan_typed_output tout = {"z", z[0], sizeof z[0], GLC_DTYPE_F32};
    uint64_t seed = 4;
    int k, round;
    (void)state;
    for (k = 0; k < N + 1; k++) {
        ot_fill(&seed, x[k], T * D, -2, 2);
        ins[k] = x[k];
        outs[2 * k] = z[k];
        outs[2 * k + 1] = n[k];
    }
    memset(&prof, 0, sizeof prof);
    prof.entries = ent;
    prof.capacity = 8;
    for (round = 0; round < 3; round++) {
        if (round == 2)
            glc__alloc_fail_after(1);
        assert_int_equal(glc_plan_commit_no_wait(p, ins), GLC_OK);
        assert_int_equal(glc_plan_sync_pending(p, sl), GLC_OK);
        assert_int_equal(glc_plan_run_slots(p, ins, sl), GLC_OK);
        assert_int_equal(glc_plan_run_pipelined(p, N, ins, outs), GLC_OK);
        assert_int_equal(glc_plan_run_pipelined(p, 2, ins, outs), GLC_OK);
        assert_int_equal(glc_plan_run_typed(p, &tin, 1, &tout, 1), GLC_OK);
        assert_int_equal(glc_plan_run_profiled(p, ins, sl, &prof), GLC_OK);
    }
    assert_int_equal(glc__alloc_failures(), 0);
    assert_int_equal(glc_plan_run_pipelined(p, N + 1, ins, outs), GLC_ERR_OUT_OF_MEMORY);
    assert_true(glc__alloc_failures() > 0);
    glc__alloc_fail_after(0);
    assert_int_equal(glc_plan_run_pipelined(p, N + 1, ins, outs), GLC_OK);
    glc_plan_destroy(p);
    glc_device_destroy(dev);
}

/* Inputs of every length, in turn: a [L, 1] f16, b [L, 3] f16 and k [L]
 * i32 (L the variable, 1..9: rows of 2, 6 and 4 bytes, so most lengths are
 * not whole 16-byte blocks, nor words for a) copied to f32 outputs (k
 * through get_rows of a table t[j] = j - 500), run at 60 random lengths
 * with new values each time, on `nplans` plans of the graph in turn (as
 * test_fuse_random runs them: compiled fused, unfused, and a clone of
 * each), by name, by slot, with a commit and its sync, and pipelined;
 * every output must be the run's own input, exactly. On the H100 (NVIDIA
 * 580), random graphs with f16 inputs read the previous length's values
 * (test_fuse_random, seed 100: a copy of c gave c's first value of the
 * run before). The three inputs are small, so a run uploads them packed:
 * one glBufferSubData (counted; a pipelined run's two sets too, into
 * their staging buffer), whose bytes between the inputs are poisoned
 * first (the packing buffers filled with 0xff: a NaN in f32 and f16, -1
 * in i32): nothing may read them. With NVIDIA's rule on (a write that
 * follows another waits first: buffer.c), only the first run waits (it
 * follows the params' upload): each run's write follows a dispatch. */
static int nsub, nfinish;
static void(GL_APIENTRY *real_sub)(GLenum, GLintptr, GLsizeiptr, const void *);
static void(GL_APIENTRY *real_finish)(void);
static void GL_APIENTRY counting_finish(void)
{
    nfinish++;
    real_finish();
}
static void GL_APIENTRY counting_sub(GLenum target, GLintptr offset, GLsizeiptr size,
                                     const void *data)
{
    nsub++;
    real_sub(target, offset, size, data);
}

static void inputs_every_length(int nplans)
{
    glc_device *dev = tu_device(NULL);
    glc_graph *g;
    glc_plan *p[4] = {NULL, NULL, NULL, NULL};
    glc_compile_desc cd;
    glc_tensor a, b, k, t;
    int64_t as[2], bs[2], ks[1], ts[2] = {1000, 1};
    float tv[1000];
    uint64_t r = 0x1E46ull;
    int run, f;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    as[0] = bs[0] = ks[0] = glc_graph_var(g, "L", 1, 9);
    as[1] = 1;
    bs[1] = 3;
    a = glc_graph_input(g, "a", GLC_DTYPE_F16, 2, as);
    b = glc_graph_input(g, "b", GLC_DTYPE_F16, 2, bs);
    k = glc_graph_input(g, "k", GLC_DTYPE_I32, 1, ks);
    glc_graph_output(g, "oa", glc_copy(g, a, NULL, GLC_DTYPE_F32));
    glc_graph_output(g, "ob", glc_copy(g, b, NULL, GLC_DTYPE_F32));
    t = glc_graph_param(g, "t", GLC_DTYPE_F32, 2, ts);
    glc_graph_output(g, "ok", glc_reshape(g, glc_get_rows(g, t, k), 1, ks));
    for (run = 0; run < 1000; run++)
        tv[run] = (float)(run - 500);
    for (f = 0; f < nplans && f < 2; f++) {
        memset(&cd, 0, sizeof cd);
        cd.flags = f ? GLC_COMPILE_NO_FUSE : 0;
        assert_int_equal(glc_graph_compile(g, &cd, &p[f]), GLC_OK);
        assert_int_equal(glc_plan_set_param(p[f], "t", tv, 1000), GLC_OK);
    }
    for (f = 2; f < nplans; f++)
        assert_int_equal(glc_plan_clone(p[f - 2], &p[f]), GLC_OK);
    real_sub = dev->gl.glBufferSubData;
    dev->gl.glBufferSubData = counting_sub;
    real_finish = dev->gl.glFinish;
    dev->gl.glFinish = counting_finish;
    dev->write_waits = 1;
    nfinish = 0;
    for (run = 0; run < 60; run++) {
        int64_t len = tu_range(&r, 1, 9), i;
        float fa[9], fb[27];
        int32_t ik[9];
        uint16_t ha[9], hb[27];
        glc_plan_var v = {"L", len};
        ot_fill(&r, fa, 9, -4.0f, 4.0f);
        ot_fill(&r, fb, 27, -4.0f, 4.0f);
        ot_round(GLC_DTYPE_F16, fa, 9);
        ot_round(GLC_DTYPE_F16, fb, 27);
        for (i = 0; i < len; i++)
            ik[i] = (int32_t)tu_range(&r, 0, 999);
        assert_int_equal(glc_dtype_from_f32(GLC_DTYPE_F16, fa, len, ha), GLC_OK);
        assert_int_equal(glc_dtype_from_f32(GLC_DTYPE_F16, fb, 3 * len, hb), GLC_OK);
        for (f = 0; f < nplans; f++) {
            /* one plan: every way in turn; more: as test_fuse_random */
            int how = nplans == 1 ? run % 4 : f < 2 ? 0 : f == 2 ? 1 : 2 + (int)(len & 1);
            float ga[9], gb[27], gk[9];
            memset(ga, 0, sizeof ga);
            memset(gb, 0, sizeof gb);
            memset(gk, 0, sizeof gk);
            memset(p[f]->stage, 0xff, p[f]->stage_bytes);
            if (p[f]->run.stage_host)
                memset(p[f]->run.stage_host, 0xff, p[f]->run.stage_host_bytes);
            nsub = 0;
            if (how == 0) {
                glc_plan_input in[3] = {{"a", fa, (size_t)len}, {"b", fb, (size_t)(3 * len)},
                                        {"k", ik, (size_t)len}};
                glc_plan_output out[3] = {{"oa", ga, (size_t)len},
                                          {"ob", gb, (size_t)(3 * len)},
                                          {"ok", gk, (size_t)len}};
                assert_int_equal(glc_plan_run_with_vars(p[f], &v, 1, in, 3, out, 3), GLC_OK);
            } else {
                const void *ins[6] = {ha, hb, ik, ha, hb, ik};
                glc_plan_slice sl[3];
                void *outs[6] = {ga, gb, gk, ga, gb, gk};
                assert_int_equal(glc_plan_set_vars(p[f], &v, 1), GLC_OK);
                if (how == 3) {
                    assert_int_equal(glc_plan_run_pipelined(p[f], 2, ins, outs), GLC_OK);
                } else {
                    if (how == 1)
                        assert_int_equal(glc_plan_run_slots(p[f], ins, sl), GLC_OK);
                    else
                        assert_int_equal(glc_plan_commit_no_wait(p[f], ins) == GLC_OK &&
                                             glc_plan_sync_pending(p[f], sl) == GLC_OK,
                                         1);
                    for (i = 0; i < 3; i++)
                        memcpy(outs[i], (const char *)glc_plan_arena_ptr(p[f]) + sl[i].offset,
                               sl[i].bytes);
                }
            }
            if (nsub != 1)
                fail_msg("%d plans: run %d, plan %d: %d buffer writes, not one", nplans, run, f,
                         nsub);
            for (i = 0; i < 3 * len; i++)
                if ((i < len && (ga[i] != fa[i] || gk[i] != (float)(ik[i] - 500))) ||
                    gb[i] != fb[i])
                    fail_msg("%d plans: run %d, plan %d (length %lld, %s): [%lld] a %g (given "
                             "%g), b %g (%g), k %g (%d)",
                             nplans, run, f, (long long)len,
                             how == 0   ? "by name"
                             : how == 1 ? "by slot"
                             : how == 2 ? "commit and sync"
                                        : "pipelined",
                             (long long)i, i < len ? ga[i] : 0.0, i < len ? fa[i] : 0.0, gb[i],
                             fb[i], i < len ? gk[i] : 0.0, i < len ? ik[i] - 500 : 0);
        }
    }
    dev->gl.glBufferSubData = real_sub;
    dev->gl.glFinish = real_finish;
    if (nfinish != 1)
        fail_msg("%d plans: %d waits before writes in 60 runs, not 1", nplans, nfinish);
    for (f = 4; f-- > 0;)
        glc_plan_destroy(p[f]);
    glc_graph_destroy(g);
    glc_device_destroy(dev);
}

/* Packed uploads in generated graphs: 1-6 inputs of f32, f16 or bf16
 * [L, w] (w 1-5, L a variable 1..9), each copied to an f32 output, in
 * seeded cases; in half of them the arena is split over buffers of a
 * narrowed SSBO size, so the inputs fall in several buffers, a pack each.
 * 8 runs a case at random lengths, by name or by slot, the packing buffer
 * poisoned first; every output is its input exactly, and where the arena
 * is one buffer a run makes one buffer write (a lone f16 input of an odd
 * length too: packed, its end word needs no read-back and second write). */
static void test_inputs_packed_random(void **state)
{
    glc_device *dev = tu_device(NULL);
    uint64_t r = 0x9AC4ull, ssbo = dev->info.limits.max_ssbo_size;
    static const glc_dtype dts[3] = {GLC_DTYPE_F32, GLC_DTYPE_F16, GLC_DTYPE_BF16};
    int cs, split = 0;
    (void)state;
    real_sub = dev->gl.glBufferSubData;
    dev->gl.glBufferSubData = counting_sub;
    for (cs = 0; cs < 12; cs++) {
        glc_graph *g;
        glc_plan *p;
        glc_compile_desc cd;
        int nin = (int)tu_range(&r, 1, 6), i, run;
        int64_t w[6], L;
        glc_dtype dt[6];
        char name[6][8], oname[6][8];
        dev->info.limits.max_ssbo_size = cs % 2 ? tu_range(&r, 192, 512) : ssbo;
        assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
        L = glc_graph_var(g, "L", 1, 9);
        for (i = 0; i < nin; i++) {
            int64_t sh[2];
            w[i] = tu_range(&r, 1, 5);
            dt[i] = dts[tu_range(&r, 0, 2)];
            sh[0] = L;
            sh[1] = w[i];
            snprintf(name[i], sizeof name[i], "x%d", i);
            snprintf(oname[i], sizeof oname[i], "y%d", i);
            glc_graph_output(g, oname[i],
                             glc_copy(g, glc_graph_input(g, name[i], dt[i], 2, sh), NULL,
                                      GLC_DTYPE_F32));
        }
        memset(&cd, 0, sizeof cd);
        cd.flags = tu_range(&r, 0, 1) ? GLC_COMPILE_NO_FUSE : 0;
        assert_int_equal(glc_graph_compile(g, &cd, &p), GLC_OK);
        split += p->prog.narena > 1;
        for (run = 0; run < 8; run++) {
            float f[6][45], got[6][45];
            unsigned char raw[6][180];
            const void *ins[6];
            glc_plan_slice sl[6];
            glc_plan_var v = {"L", (int64_t)tu_range(&r, 1, 9)};
            int by_slot = run % 2, k;
            for (i = 0; i < nin; i++) {
                ot_fill(&r, f[i], 45, -4.0f, 4.0f);
                ot_round(dt[i], f[i], 45);
                assert_int_equal(glc_dtype_from_f32(dt[i], f[i], v.value * w[i], raw[i]), GLC_OK);
                ins[i] = by_slot ? (const void *)raw[i] : (const void *)f[i];
            }
            memset(got, 0, sizeof got);
            memset(p->stage, 0xff, p->stage_bytes);
            nsub = 0;
            if (by_slot) {
                assert_int_equal(glc_plan_set_vars(p, &v, 1), GLC_OK);
                assert_int_equal(glc_plan_run_slots(p, ins, sl), GLC_OK);
                for (i = 0; i < nin; i++)
                    memcpy(got[i], (const char *)glc_plan_arena_ptr(p) + sl[i].offset,
                           sl[i].bytes);
            } else {
                glc_plan_input in[6];
                glc_plan_output out[6];
                for (i = 0; i < nin; i++) {
                    in[i].name = name[i];
                    in[i].data = f[i];
                    in[i].count = (size_t)(v.value * w[i]);
                    out[i].name = oname[i];
                    out[i].data = got[i];
                    out[i].count = (size_t)(v.value * w[i]);
                }
                assert_int_equal(glc_plan_run_with_vars(p, &v, 1, in, nin, out, nin), GLC_OK);
            }
            for (i = 0; i < nin; i++)
                for (k = 0; k < v.value * w[i]; k++)
                    if (got[i][k] != f[i][k])
                        fail_msg("case %d (%d inputs, %d arena buffers), run %d at L %lld: "
                                 "y%d[%d] %g, given %g",
                                 cs, nin, p->prog.narena, run, (long long)v.value, i, k,
                                 got[i][k], f[i][k]);
            if (p->prog.narena == 1 && nsub != 1)
                fail_msg("case %d (%d inputs), run %d: %d buffer writes, not one", cs, nin, run,
                         nsub);
        }
        glc_plan_destroy(p);
        glc_graph_destroy(g);
    }
    assert_true(split > 0); /* some arenas were split */
    dev->gl.glBufferSubData = real_sub;
    dev->info.limits.max_ssbo_size = ssbo;
    glc_device_destroy(dev);
}

static void test_inputs_every_length(void **state)
{
    (void)state;
    inputs_every_length(1);
}

static void test_inputs_every_length_4_plans(void **state)
{
    (void)state;
    inputs_every_length(4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit_sync),
        cmocka_unit_test(test_pipelined),
        cmocka_unit_test(test_pipelined_feed),
        cmocka_unit_test(test_typed),
        cmocka_unit_test(test_profiled),
        cmocka_unit_test(test_dump),
        cmocka_unit_test(test_runs_allocate_nothing),
        cmocka_unit_test(test_named_runs_many_tensors),
        cmocka_unit_test(test_inputs_every_length),
        cmocka_unit_test(test_inputs_every_length_4_plans),
        cmocka_unit_test(test_inputs_packed_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
