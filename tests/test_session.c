/*
 * Sessions on llvmpipe: random dependent streams give bit-for-bit the same
 * buffers in DIRECT, RECORDED (reordered), RECORDED with early flush and
 * GLC_BARRIERS=always, close to a C reference, with GLC_VALIDATE on; the
 * validator catches a deliberately dropped barrier and names both
 * dispatches; GLC_TRACE names the pair behind each barrier; commit/fence;
 * early flush; pass hooks. (llvmpipe runs dispatches one at a time, so
 * only the validator and the H100 race test, tests/gpu_race.c, can see a
 * missing barrier.)
 */
#include "testutil.h"

#include "device.h"
#include "session.h"

#include <math.h>
#include <pthread.h>

#define NBUF 4
#define ELEMS 2048

static const char *axpy_src =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(std430, binding = 0) readonly buffer X { float x[]; };\n"
    "layout(std430, binding = 1) buffer Y { float y[]; };\n"
    "void main() {\n"
    "    uint i = glc_global_index();\n"
    "    if (glc_group_out_of_range() || i >= glc_p[0]) return;\n"
    "    y[i] = y[i] * 0.5 + x[i] * glc_pf(1) + glc_pf(2);\n"
    "}\n";

typedef struct op {
    int xb, yb;
    uint32_t xoff, yoff, n; /* in elements */
    float a, b;
} op;

/* A random stream over NBUF buffers: each op reads a slice of one buffer
 * and updates a slice of another, so ops chain, fan out and overlap. */
static void make_stream(uint64_t *seed, op *ops, int n, uint32_t align_elems)
{
    int i;
    for (i = 0; i < n; i++) {
        op *o = &ops[i];
        o->xb = (int)tu_range(seed, 0, NBUF - 1);
        o->yb = (int)((o->xb + tu_range(seed, 1, NBUF - 1)) % NBUF);
        o->n = tu_range(seed, 1, 700);
        o->xoff = tu_range(seed, 0, (ELEMS - o->n) / align_elems) * align_elems;
        o->yoff = tu_range(seed, 0, (ELEMS - o->n) / align_elems) * align_elems;
        o->a = (float)tu_range(seed, 1, 7) * 0.25f;
        o->b = (float)tu_range(seed, 0, 9) - 4.0f;
    }
}

static void reference(const op *ops, int n, float host[NBUF][ELEMS])
{
    int i;
    uint32_t j;
    for (i = 0; i < n; i++)
        for (j = 0; j < ops[i].n; j++) {
            float *y = &host[ops[i].yb][ops[i].yoff + j];
            *y = *y * 0.5f + host[ops[i].xb][ops[i].xoff + j] * ops[i].a + ops[i].b;
        }
}

static void init_host(float host[NBUF][ELEMS])
{
    int b, i;
    for (b = 0; b < NBUF; b++)
        for (i = 0; i < ELEMS; i++)
            host[b][i] = (float)((b * 131 + i * 7) % 97) * 0.125f;
}

/* Runs the stream on the GPU in `mode`; returns barriers and stats. */
static void run_stream(glc_device *dev, glc_kernel *k, const op *ops, int n, int mode,
                       float out[NBUF][ELEMS], glc_dispatch_stats *stats)
{
    glc_buffer *bufs[NBUF];
    glc_session *s;
    int64_t len = ELEMS;
    int i;
    init_host(out);
    for (i = 0; i < NBUF; i++) {
        assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &len, &bufs[i]), GLC_OK);
        assert_int_equal(glc_buffer_write(bufs[i], 0, sizeof out[i], out[i]), GLC_OK);
    }
    assert_int_equal(glc_session_begin(dev, mode, &s), GLC_OK);
    for (i = 0; i < n; i++) {
        glc_binding b[2] = {{bufs[ops[i].xb], ops[i].xoff * 4u, ops[i].n * 4u, GLC_READ,
                             GLC_BIND_STORAGE},
                            {bufs[ops[i].yb], ops[i].yoff * 4u, ops[i].n * 4u, GLC_READ_WRITE,
                             GLC_BIND_STORAGE}};
        uint32_t p[3];
        glc_dispatch_desc d;
        p[0] = ops[i].n;
        memcpy(&p[1], &ops[i].a, 4);
        memcpy(&p[2], &ops[i].b, 4);
        memset(&d, 0, sizeof d);
        d.kernel = k;
        d.groups = (ops[i].n + 63) / 64;
        d.bindings = b;
        d.binding_count = 2;
        d.params = p;
        d.param_count = 3;
        d.label = "op";
        assert_int_equal(glc_session_dispatch(s, &d), GLC_OK);
    }
    assert_int_equal(glc_session_finish(s, stats), GLC_OK);
    for (i = 0; i < NBUF; i++) {
        assert_int_equal(glc_buffer_read(bufs[i], 0, sizeof out[i], out[i]), GLC_OK);
        glc_buffer_destroy(bufs[i]);
    }
}

static double max_rel_err(float a[NBUF][ELEMS], float b[NBUF][ELEMS])
{
    double worst = 0;
    int i, j;
    for (i = 0; i < NBUF; i++)
        for (j = 0; j < ELEMS; j++) {
            double d = (double)a[i][j] - (double)b[i][j], m = fabs((double)b[i][j]);
            double e = fabs(d) / (m > 1 ? m : 1);
            if (e != e) /* NaN never passes */
                return 1e30;
            worst = e > worst ? e : worst;
        }
    return worst;
}

static glc_kernel *axpy(glc_device *dev)
{
    glc_kernel_desc kd;
    glc_kernel *k;
    memset(&kd, 0, sizeof kd);
    kd.name = "axpy";
    kd.source = axpy_src;
    kd.local_size_x = 64;
    assert_int_equal(glc_kernel_create(dev, &kd, &k), GLC_OK);
    return k;
}

static void test_modes_agree_bit_for_bit(void **state)
{
    static float ref[NBUF][ELEMS], got[NBUF][ELEMS], first[NBUF][ELEMS];
    static op ops[160];
    glc_device_desc desc = tu_desc(NULL);
    glc_device *dev;
    glc_device_info in;
    glc_kernel *k;
    uint64_t seed = 2026;
    int iter;
    (void)state;
    desc.flags = GLC_DEVICE_VALIDATE; /* every emitted stream checked by the oracle */
    dev = tu_device_desc(&desc);
    glc_device_get_info(dev, &in);
    k = axpy(dev);
    for (iter = 0; iter < 4; iter++) {
        static const int modes[4] = {GLC_SESSION_DIRECT, GLC_SESSION_RECORDED,
                                     GLC_SESSION_RECORDED | GLC_SESSION_EARLY_FLUSH,
                                     GLC_SESSION_DIRECT};
        glc_dispatch_stats st[4];
        int n = iter == 3 ? 160 : (int)tu_range(&seed, 20, 100), m;
        make_stream(&seed, ops, n, in.limits.ssbo_offset_alignment / 4);
        init_host(ref);
        reference(ops, n, ref);
        for (m = 0; m < 4; m++) {
            /* GLC_BARRIERS=always sets this at creation (test_env_policies) */
            dev->barrier_policy = m == 3 ? GLC__BARRIERS_ALWAYS : GLC__BARRIERS_TRACKED;
            run_stream(dev, k, ops, n, modes[m], got, &st[m]);
            dev->barrier_policy = GLC__BARRIERS_TRACKED;
            if (m == 0) {
                /* the GPU may fuse a*b+c where C rounds twice: a tolerance */
                assert_true(max_rel_err(got, ref) < 1e-5);
                memcpy(first, got, sizeof got);
            } else if (memcmp(got, first, sizeof got) != 0) {
                fail_msg("iteration %d: mode %d differs from DIRECT", iter, m);
            }
            assert_int_equal(st[m].dispatches, (uint64_t)n);
        }
        assert_true(st[0].barriers < st[3].barriers); /* elision did elide */
        assert_true(st[1].barriers <= st[0].barriers); /* reordering never adds */
        assert_int_equal(st[3].barriers, (uint64_t)n);  /* always: one per dispatch */
        if (n >= 65)
            assert_int_equal(st[2].flushes, 2); /* the early flush and the final one */
    }
    glc_kernel_destroy(k);
    glc_device_destroy(dev);
}

static void chain(glc_device *dev, glc_kernel *k, glc_buffer *x, glc_buffer *y, glc_status want)
{
    glc_session *s;
    glc_binding b1[2] = {{x, 0, 256, GLC_READ, GLC_BIND_STORAGE},
                         {y, 0, 256, GLC_READ_WRITE, GLC_BIND_STORAGE}};
    glc_binding b2[2] = {{y, 0, 256, GLC_READ, GLC_BIND_STORAGE},
                         {x, 0, 256, GLC_READ_WRITE, GLC_BIND_STORAGE}};
    uint32_t p[3] = {64, 0x3f800000u, 0};
    glc_dispatch_desc d;
    memset(&d, 0, sizeof d);
    d.kernel = k;
    d.groups = 1;
    d.binding_count = 2;
    d.params = p;
    d.param_count = 3;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    d.bindings = b1;
    d.label = "first";
    assert_int_equal(glc_session_dispatch(s, &d), GLC_OK);
    d.bindings = b2;
    d.label = "second";
    assert_int_equal(glc_session_dispatch(s, &d), want);
    glc_session_finish(s, NULL);
}

/* A device made under `var`=`value` (NULL: the plain environment). */
static glc_device *device_under(const char *var, const char *value, tu_log *log)
{
    glc_device *dev;
    if (var)
        setenv(var, value, 1);
    dev = tu_device(log);
    if (var)
        unsetenv(var);
    return dev;
}

/* The dropped-barrier chain on a device made under GLC_VALIDATE=`value`. */
static void dropped_barrier(const char *value, glc_status want)
{
    tu_log log;
    glc_device *dev = device_under(value ? "GLC_VALIDATE" : NULL, value, &log);
    glc_kernel *k = axpy(dev);
    glc_buffer *x, *y;
    int64_t n = 64;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &x), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &y), GLC_OK);
    chain(dev, k, x, y, GLC_OK); /* the tracker puts the barrier in */
    /* now lose the second barrier it asks for: the first orders this
     * chain after the last one, the second falls between its two links */
    dev->test_drop_barrier = 2;
    chain(dev, k, x, y, want);
    if (want == GLC_ERR_HAZARD) {
        tu_assert_contains(glc_device_errmsg(dev), "GLC_VALIDATE: missing barrier: dispatch");
        tu_assert_contains(glc_device_errmsg(dev),
                           "(axpy \"second\") RAW bytes [0, 256) of buffer");
        tu_assert_contains(glc_device_errmsg(dev), "(axpy \"first\") with no barrier between");
        assert_int_equal(log.last_status, GLC_ERR_HAZARD);
    }
    glc_buffer_destroy(x);
    glc_buffer_destroy(y);
    glc_kernel_destroy(k);
    glc_device_destroy(dev);
}

static void test_validate_catches_dropped_barrier(void **state)
{
    (void)state;
    dropped_barrier("1", GLC_ERR_HAZARD);
    dropped_barrier("YES", GLC_ERR_HAZARD); /* any case, any of the boolean words */
    /* without validation the same fault passes silently: that is what the
     * validator is for */
    dropped_barrier(NULL, GLC_OK);
    dropped_barrier("0", GLC_OK);
}

static void test_trace_names_the_pair(void **state)
{
    tu_log log;
    glc_device *dev = device_under("GLC_TRACE", "barriers", &log);
    glc_kernel *k = axpy(dev);
    glc_buffer *x, *y;
    int64_t n = 64;
    (void)state;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &x), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &y), GLC_OK);
    log.all[0] = '\0';
    chain(dev, k, x, y, GLC_OK);
    tu_assert_contains(log.all, "(axpy \"second\"): RAW on bytes [0, 256) of buffer");
    tu_assert_contains(log.all, "(axpy \"first\")");
    glc_buffer_destroy(x);
    glc_buffer_destroy(y);
    glc_kernel_destroy(k);
    glc_device_destroy(dev);
}

/* A plan of six independent tanh ops on a device made under `var`=`value`,
 * compiled (and run) without any session ever begun on the device:
 * returns its barriers per run. */
static uint32_t six_tanh_barriers(const char *var, const char *value, uint32_t flags)
{
    glc_device_desc d = tu_desc(NULL);
    glc_device *dev;
    glc_graph *g;
    glc_plan *p;
    glc_plan_info info;
    glc_device_info di;
    glc_plan_input in[6];
    glc_plan_output out[6];
    static float x[6][16], y[6][16];
    static const char *xname[6] = {"x0", "x1", "x2", "x3", "x4", "x5"};
    static const char *yname[6] = {"y0", "y1", "y2", "y3", "y4", "y5"};
    int64_t n = 16;
    int i, j;
    if (var)
        setenv(var, value, 1);
    d.flags = flags;
    dev = tu_device_desc(&d);
    if (var)
        unsetenv(var);
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    for (i = 0; i < 6; i++)
        glc_graph_output(g, yname[i], glc_unary(g, GLC_UNARY_TANH,
                                                glc_graph_input(g, xname[i], GLC_DTYPE_F32, 1, &n),
                                                0));
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    assert_int_equal(glc_plan_stats(p, &info), GLC_OK);
    assert_int_equal(info.dispatches, 6);
    for (i = 0; i < 6; i++) {
        for (j = 0; j < 16; j++)
            x[i][j] = (float)(i * 16 + j - 48) * 0.0625f;
        in[i].name = xname[i];
        in[i].data = x[i];
        in[i].count = 16;
        out[i].name = yname[i];
        out[i].data = y[i];
        out[i].count = 16;
    }
    assert_int_equal(glc_plan_run(p, in, 6, out, 6), GLC_OK);
    for (i = 0; i < 6; i++)
        for (j = 0; j < 16; j++)
            assert_true(fabs((double)y[i][j] - tanh((double)x[i][j])) < 1e-5);
    glc_device_get_info(dev, &di);
    assert_string_equal(di.barriers, info.barriers ? "always" : "tracked");
    if ((var && strcmp(var, "GLC_VALIDATE") == 0) || (flags & GLC_DEVICE_VALIDATE))
        assert_true(di.validate && dev->validate);
    glc_plan_destroy(p);
    glc_device_destroy(dev);
    return info.barriers;
}

/* Found from outside: GLC_BARRIERS, GLC_VALIDATE and the VALIDATE flag were
 * read in glc_session_begin, so a program that only ran plans never got
 * them (six independent tanh ops: 0 barriers under "always"). They are the
 * device's from its creation now. */
static void test_env_policies_without_a_session(void **state)
{
    (void)state;
    assert_int_equal(six_tanh_barriers(NULL, NULL, 0), 0);
    assert_int_equal(six_tanh_barriers("GLC_BARRIERS", "always", 0), 5);
    assert_int_equal(six_tanh_barriers("GLC_BARRIERS", "Always", 0), 5);
    assert_int_equal(six_tanh_barriers("GLC_BARRIERS", "tracked", 0), 0);
    assert_int_equal(six_tanh_barriers("GLC_VALIDATE", "on", 0), 0);
    assert_int_equal(six_tanh_barriers(NULL, NULL, GLC_DEVICE_VALIDATE), 0);
}

/* A dispatch of "fill" over 1000 u32 of a new buffer *b: out[i] =
 * p[1] + p[2] * i (p: 3 params, bind: its one binding, both the caller's). */
static void fill_1000(glc_device *dev, glc_buffer **b, uint32_t *p, glc_binding *bind,
                      glc_dispatch_desc *d)
{
    int64_t n = 1000;
    glc_kernel *k;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, b), GLC_OK);
    assert_int_equal(glc__kernel_get(dev, "fill", NULL, 64, &k), GLC_OK);
    bind->buffer = *b;
    bind->offset = bind->size = 0;
    bind->access = GLC_WRITE;
    bind->kind = GLC_BIND_STORAGE;
    memset(d, 0, sizeof *d);
    d->kernel = k;
    d->groups = 16;
    d->bindings = bind;
    d->binding_count = 1;
    d->params = p;
    d->param_count = 3;
}

static void test_commit_and_fence(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_buffer *b;
    glc_session *s;
    glc_fence *f = NULL;
    uint32_t p[3] = {1000, 9, 1}, got[1000];
    glc_binding bind;
    glc_dispatch_desc d;
    int i;
    (void)state;
    fill_1000(dev, &b, p, &bind, &d);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_RECORDED, &s), GLC_OK);
    assert_int_equal(glc_session_dispatch(s, &d), GLC_OK);
    assert_int_equal(glc_session_commit(s, &f), GLC_OK);
    assert_int_equal(glc_fence_wait(f, 5000000000ull), GLC_OK);
    assert_int_equal(glc_fence_wait(f, 0), GLC_OK); /* signalled stays signalled */
    glc_fence_destroy(f);
    assert_int_equal(glc_buffer_read(b, 0, sizeof got, got), GLC_OK);
    for (i = 0; i < 1000; i++)
        assert_int_equal(got[i], 9u + (uint32_t)i);
    assert_int_equal(glc_session_commit(s, NULL), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    glc_buffer_destroy(b);
    glc_device_destroy(dev);
}

/* glc_session_create takes a desc: NULL is DIRECT, RECORDED with early
 * flush runs, and a bad mode or flag is refused with a message naming the
 * call and *out untouched; glc_session_begin stays the same. */
static void test_session_create_desc(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_buffer *b;
    glc_session *s;
    uint32_t p[3] = {1000, 5, 2}, got[1000];
    glc_binding bind;
    glc_dispatch_desc d;
    glc_session_desc sd;
    static const glc_session_desc bad[] = {
        {(glc_session_mode)7, 0},
        {GLC_SESSION_RECORDED, 0x1},
        {GLC_SESSION_DIRECT, GLC_SESSION_EARLY_FLUSH},
    };
    int i, m;
    glc_dispatch_stats st;
    (void)state;
    fill_1000(dev, &b, p, &bind, &d);
    for (m = 0; m < 2; m++) {
        memset(&sd, 0, sizeof sd);
        sd.mode = GLC_SESSION_RECORDED;
        sd.flags = GLC_SESSION_EARLY_FLUSH;
        p[1] = 5 + (uint32_t)m;
        assert_int_equal(glc_session_create(dev, m ? &sd : NULL, &s), GLC_OK);
        assert_int_equal(glc_session_dispatch(s, &d), GLC_OK);
        assert_int_equal(glc_session_finish(s, &st), GLC_OK);
        assert_int_equal(st.dispatches, 1);
        assert_int_equal(glc_buffer_read(b, 0, sizeof got, got), GLC_OK);
        for (i = 0; i < 1000; i++)
            assert_int_equal(got[i], p[1] + 2u * (uint32_t)i);
    }
    for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        s = NULL;
        assert_int_equal(glc_session_create(dev, &bad[i], &s), GLC_ERR_INVALID_ARG);
        assert_null(s);
        assert_non_null(strstr(glc_device_errmsg(dev), "glc_session_create: mode 0x"));
    }
    assert_int_equal(glc_session_create(dev, NULL, NULL), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_create(NULL, NULL, &s), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT | GLC_SESSION_EARLY_FLUSH, &s),
                     GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(glc_device_errmsg(dev), "glc_session_begin: mode 0x100"));
    glc_buffer_destroy(b);
    glc_device_destroy(dev);
}

static int pass_calls;
static size_t pass_seen;

static glc_status counting_pass(glc_session *s, glc__cmd *cmds, size_t *n, void *user)
{
    (void)s;
    (void)cmds;
    pass_calls++;
    pass_seen = *n;
    if (user && *n > 1)
        (*n)--; /* a pass may drop commands (fusion does) */
    return GLC_OK;
}

static void test_pass_hook(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_buffer *b;
    glc_kernel *k;
    glc_session *s;
    int64_t n = 64;
    uint32_t p[3] = {64, 0, 0};
    glc_binding bind = {NULL, 0, 0, GLC_WRITE, GLC_BIND_STORAGE};
    glc_dispatch_desc d;
    glc_dispatch_stats st;
    int i;
    (void)state;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b), GLC_OK);
    assert_int_equal(glc__kernel_get(dev, "fill", NULL, 64, &k), GLC_OK);
    bind.buffer = b;
    memset(&d, 0, sizeof d);
    d.kernel = k;
    d.groups = 1;
    d.bindings = &bind;
    d.binding_count = 1;
    d.params = p;
    d.param_count = 3;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_RECORDED, &s), GLC_OK);
    assert_int_equal(glc__session_add_pass(s, counting_pass, (void *)1), GLC_OK);
    for (i = 0; i < 5; i++)
        assert_int_equal(glc_session_dispatch(s, &d), GLC_OK);
    assert_int_equal(glc_session_finish(s, &st), GLC_OK);
    assert_int_equal(pass_calls, 1);
    assert_int_equal(pass_seen, 5);
    assert_int_equal(st.dispatches, 4); /* the pass dropped one */
    glc_buffer_destroy(b);
    glc_device_destroy(dev);
}

typedef struct thread_call {
    glc_session *s;
    const glc_dispatch_desc *d;
    glc_status st;
} thread_call;

static void *dispatch_elsewhere(void *p)
{
    thread_call *c = p;
    c->st = glc_session_dispatch(c->s, c->d);
    return NULL;
}

/* The dispatch hot path skips eglGetCurrentContext; it must still refuse a
 * session whose context is not the one current on this thread. */
static void test_dispatch_context_checks(void **state)
{
    glc_device *a = tu_device(NULL), *b = NULL;
    glc_device_desc desc = tu_desc(NULL);
    glc_buffer *buf;
    glc_kernel *k;
    glc_session *s;
    int64_t n = 64;
    uint32_t p[3] = {64, 1, 0};
    glc_binding bind = {NULL, 0, 0, GLC_WRITE, GLC_BIND_STORAGE};
    glc_dispatch_desc d;
    thread_call call;
    pthread_t t;
    (void)state;
    assert_int_equal(glc_buffer_create(a, GLC_DTYPE_U32, 1, &n, &buf), GLC_OK);
    assert_int_equal(glc__kernel_get(a, "fill", NULL, 64, &k), GLC_OK);
    bind.buffer = buf;
    memset(&d, 0, sizeof d);
    d.kernel = k;
    d.groups = 1;
    d.bindings = &bind;
    d.binding_count = 1;
    d.params = p;
    d.param_count = 3;
    assert_int_equal(glc_session_begin(a, GLC_SESSION_DIRECT, &s), GLC_OK);
    assert_int_equal(glc_session_dispatch(s, &d), GLC_OK);
    /* another thread */
    call.s = s;
    call.d = &d;
    call.st = GLC_OK;
    assert_int_equal(pthread_create(&t, NULL, dispatch_elsewhere, &call), 0);
    pthread_join(t, NULL);
    assert_int_equal(call.st, GLC_ERR_STATE);
    /* another device made current on this thread */
    assert_int_equal(glc_device_create(&desc, &b), GLC_OK);
    assert_int_equal(glc_session_dispatch(s, &d), GLC_ERR_STATE);
    tu_assert_contains(glc_device_errmsg(a), "another EGL context is current");
    glc_device_destroy(b);
    assert_int_equal(glc_session_dispatch(s, &d), GLC_OK); /* a's context again */
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    glc_buffer_destroy(buf);
    glc_device_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes_agree_bit_for_bit),
        cmocka_unit_test(test_validate_catches_dropped_barrier),
        cmocka_unit_test(test_trace_names_the_pair),
        cmocka_unit_test(test_env_policies_without_a_session),
        cmocka_unit_test(test_commit_and_fence),
        cmocka_unit_test(test_pass_hook),
        cmocka_unit_test(test_dispatch_context_checks),
        cmocka_unit_test(test_session_create_desc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
