/*
 * Host out-of-memory, through the device's allocator hook
 * (glc_device_desc.allocator): an allocator that fails its N-th call,
 * looped N = 1, 2, ... over a whole workflow until it succeeds (SQLite's
 * OOM tests). Each failing pass must report GLC_ERR_OUT_OF_MEMORY (from
 * the call, or as the graph's sticky error), leave no block behind (the
 * hook counts live blocks; ASan's leak check runs too) and never crash;
 * the pass that succeeds must compute what an unfailed run computes.
 *
 * Workflows: a transformer block (rms_norm, Q8_0 matmuls, rope, causal
 * sdpa, silu MLP, residual adds, softmax) built, compiled, given params,
 * run by name, by slots and at another variable value; eager ops in a
 * session; and device creation itself. Failures are injected two ways:
 * only the N-th call fails (recovery paths that allocate again), or the
 * N-th and every later one (cleanup under pressure).
 *
 * Also: every allocation of a device's calls goes to that device's hook,
 * even with another device's hook used last on the thread.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "testutil.h"

#include "alloc.h"
#include "device.h"

#include <dlfcn.h>
#include <link.h>
#include <math.h>

enum { D = 32, F = 64, TMAX = 4 };

typedef struct hook {
    long calls;   /* alloc + realloc calls */
    long fail_at; /* 0: never; n: call n fails */
    int sticky;   /* and every call after it */
    long live;    /* blocks handed out and not freed */
    long frees;
} hook;

static int hook_fails(hook *h)
{
    h->calls++;
    return h->fail_at && (h->calls == h->fail_at || (h->sticky && h->calls > h->fail_at));
}

static void *hook_alloc(void *user, size_t size)
{
    hook *h = (hook *)user;
    void *p;
    if (hook_fails(h))
        return NULL;
    if ((p = malloc(size)) != NULL)
        h->live++;
    return p;
}

static void *hook_realloc(void *user, void *ptr, size_t old_size, size_t new_size)
{
    hook *h = (hook *)user;
    assert_non_null(ptr);
    assert_true(old_size > 0 && new_size > 0);
    if (hook_fails(h))
        return NULL;
    return realloc(ptr, new_size);
}

static void hook_free(void *user, void *ptr, size_t size)
{
    hook *h = (hook *)user;
    assert_non_null(ptr);
    assert_true(size > 0);
    h->live--;
    h->frees++;
    free(ptr);
}

static void hook_arm(hook *h, long fail_at, int sticky)
{
    h->calls = 0;
    h->fail_at = fail_at;
    h->sticky = sticky;
}

static glc_device_desc hook_desc(hook *h, tu_log *log)
{
    glc_device_desc d = tu_desc(log);
    memset(h, 0, sizeof *h);
    d.allocator.alloc = hook_alloc;
    d.allocator.realloc = hook_realloc;
    d.allocator.free = hook_free;
    d.allocator.user = h;
    return d;
}

/* Mesa's DRI driver is unloaded with the last EGL display and leaks a few
 * blocks each time (swrast_dri.so, Mesa 22.3): once unloaded they show as
 * leaks from an unknown module. Every pass here creates devices, so the
 * driver is kept loaded (RTLD_NODELETE): its blocks stay reachable. */
static int pin_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (strstr(info->dlpi_name, "_dri.so") || strstr(info->dlpi_name, "libgallium"))
        dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    return 0;
}

static void pin_driver(void) { dl_iterate_phdr(pin_one, NULL); }

/* When set, every call of the workflows below is preceded by a call on
 * this other device, which makes its heap the current one: allocations
 * must still go to the device the call is for. */
static glc_device *other;

static void other_call(void)
{
    glc_graph *g;
    if (other && glc_graph_create(other, &g) == GLC_OK)
        glc_graph_destroy(g);
}

#define OTHER(call) (other_call(), (call))

/* ---- the transformer block ---- */

typedef struct result {
    float y[TMAX * D], p[TMAX * D], y3[3 * D];
    unsigned char slots_y[TMAX * D * 4];
} result;

/* Q8_0 rows of K values: f16 scale + 32 int8 per block. */
static void q8_weights(unsigned char *w, int64_t n, int64_t k, uint64_t *rng)
{
    int64_t r, b, i;
    for (r = 0; r < n; r++)
        for (b = 0; b < k / 32; b++) {
            unsigned char *blk = w + (r * (k / 32) + b) * 34;
            blk[0] = 0x00; /* f16 1/64 = 0x2400 */
            blk[1] = 0x24;
            for (i = 0; i < 32; i++)
                blk[2 + i] = (unsigned char)(int8_t)((int)tu_range(rng, 0, 64) - 32);
        }
}

static glc_status build(glc_device *dev, glc_graph **out)
{
    glc_graph *g;
    glc_status st = glc_graph_create(dev, &g);
    int64_t T, xs[3], ps[1], vs[1] = {D}, wdd[2] = {D, D}, wfd[2] = {F, D}, wdf[2] = {D, F};
    glc_tensor x, pos, h, q, k, v, a, o, x2, gt, up, m, y, pr;
    glc_rope_desc rope;
    glc_sdpa_desc sdpa;
    glc_softmax_desc sm;
    if (st != GLC_OK)
        return st;
    memset(&rope, 0, sizeof rope);
    memset(&sdpa, 0, sizeof sdpa);
    memset(&sm, 0, sizeof sm);
    sdpa.causal = 1;
    sdpa.q_offset = -1;
    T = glc_graph_var(g, "T", 1, TMAX);
    xs[0] = T;
    xs[1] = 1;
    xs[2] = D;
    ps[0] = T;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 3, xs);
    pos = glc_graph_input(g, "pos", GLC_DTYPE_I32, 1, ps);
    h = glc_rms_norm(g, x, glc_graph_param(g, "norm1", GLC_DTYPE_F32, 1, vs), 1e-5f);
    q = glc_rope(g, glc_matmul_q(g, h, glc_graph_param(g, "wq", GLC_DTYPE_Q8_0, 2, wdd), glc_none()),
                 pos, &rope, glc_none());
    k = glc_rope(g, glc_matmul_q(g, h, glc_graph_param(g, "wk", GLC_DTYPE_Q8_0, 2, wdd), glc_none()),
                 pos, &rope, glc_none());
    v = glc_matmul_q(g, h, glc_graph_param(g, "wv", GLC_DTYPE_Q8_0, 2, wdd), glc_none());
    a = glc_sdpa(g, q, k, v, &sdpa);
    o = glc_matmul_q(g, a, glc_graph_param(g, "wo", GLC_DTYPE_Q8_0, 2, wdd),
                     glc_graph_param(g, "bo", GLC_DTYPE_F32, 1, vs));
    x2 = glc_add(g, x, o);
    h = glc_rms_norm(g, x2, glc_graph_param(g, "norm2", GLC_DTYPE_F16, 1, vs), 1e-5f);
    gt = glc_unary(g, GLC_UNARY_SILU,
                   glc_matmul_q(g, h, glc_graph_param(g, "wg", GLC_DTYPE_Q8_0, 2, wfd), glc_none()),
                   0.0f);
    up = glc_matmul_q(g, h, glc_graph_param(g, "wu", GLC_DTYPE_Q8_0, 2, wfd), glc_none());
    m = glc_mul(g, gt, up);
    y = glc_add(g, x2, glc_matmul_q(g, m, glc_graph_param(g, "wd", GLC_DTYPE_Q8_0, 2, wdf),
                                    glc_none()));
    pr = glc_softmax(g, glc_scale(g, y, 0.5f, 0.0f), &sm);
    glc_graph_output(g, "y", y);
    glc_graph_output(g, "p", pr);
    st = glc_graph_status(g);
    if (st != GLC_OK) {
        glc_graph_destroy(g);
        return st;
    }
    *out = g;
    return GLC_OK;
}

static glc_status set_params(glc_plan *p)
{
    static unsigned char wdd[4][D * D / 32 * 34], wfd[2][F * D / 32 * 34], wdf[D * F / 32 * 34];
    static const char *dd[4] = {"wq", "wk", "wv", "wo"}, *fd[2] = {"wg", "wu"};
    float n1[D], n2[D], bo[D];
    uint64_t rng = 7;
    glc_status st;
    int i;
    for (i = 0; i < D; i++) {
        n1[i] = 1.0f + 0.01f * (float)i;
        n2[i] = 0.5f + 0.02f * (float)i;
        bo[i] = 0.001f * (float)i;
    }
    for (i = 0; i < 4; i++)
        q8_weights(wdd[i], D, D, &rng);
    for (i = 0; i < 2; i++)
        q8_weights(wfd[i], F, D, &rng);
    q8_weights(wdf, D, F, &rng);
    if ((st = OTHER(glc_plan_set_param(p, "norm1", n1, D))) != GLC_OK ||
        (st = OTHER(glc_plan_set_param(p, "norm2", n2, D))) != GLC_OK || /* f16: converted */
        (st = OTHER(glc_plan_set_param(p, "bo", bo, D))) != GLC_OK)
        return st;
    for (i = 0; i < 4; i++)
        if ((st = OTHER(glc_plan_set_param_typed(p, dd[i], wdd[i], sizeof wdd[i], GLC_DTYPE_Q8_0))) !=
            GLC_OK)
            return st;
    for (i = 0; i < 2; i++)
        if ((st = OTHER(glc_plan_set_param_typed(p, fd[i], wfd[i], sizeof wfd[i], GLC_DTYPE_Q8_0))) !=
            GLC_OK)
            return st;
    return OTHER(glc_plan_set_param_typed(p, "wd", wdf, sizeof wdf, GLC_DTYPE_Q8_0));
}

/* Build, compile, set params, run by name, by slots, at T = 3. */
static glc_status block_workflow(glc_device *dev, result *r)
{
    float x[TMAX * D];
    int32_t pos[TMAX];
    const void *slots[2];
    glc_plan_slice outs[2];
    glc_plan_input in[2];
    glc_plan_output out[2];
    glc_plan_var var;
    glc_graph *g = NULL;
    glc_plan *p = NULL;
    glc_status st;
    int i;
    for (i = 0; i < TMAX * D; i++)
        x[i] = (float)((i * 37) % 23) / 11.0f - 1.0f;
    for (i = 0; i < TMAX; i++)
        pos[i] = i;
    if ((st = build(dev, &g)) != GLC_OK)
        return st;
    st = OTHER(glc_graph_compile(g, NULL, &p));
    glc_graph_destroy(g); /* the plan keeps its own copy */
    if (st != GLC_OK)
        return st;
    if ((st = set_params(p)) != GLC_OK)
        goto out;
    in[0].name = "x";
    in[0].data = x;
    in[0].count = TMAX * D;
    in[1].name = "pos";
    in[1].data = pos;
    in[1].count = TMAX;
    out[0].name = "y";
    out[0].data = r->y;
    out[0].count = TMAX * D;
    out[1].name = "p";
    out[1].data = r->p;
    out[1].count = TMAX * D;
    if ((st = OTHER(glc_plan_run(p, in, 2, out, 2))) != GLC_OK)
        goto out;
    slots[0] = x;
    slots[1] = pos;
    if ((st = OTHER(glc_plan_run_slots(p, slots, outs))) != GLC_OK)
        goto out;
    assert_int_equal(outs[0].bytes, sizeof r->slots_y);
    memcpy(r->slots_y, (const unsigned char *)glc_plan_arena_ptr(p) + outs[0].offset,
           sizeof r->slots_y);
    var.name = "T";
    var.value = 3;
    in[0].count = 3 * D;
    in[1].count = 3;
    out[0].data = r->y3;
    out[0].count = 3 * D;
    st = OTHER(glc_plan_run_with_vars(p, &var, 1, in, 2, out, 1));
out:
    glc_plan_destroy(p);
    return st;
}

/* ---- eager ops in a session ---- */

typedef struct eager_result {
    float y[3 * D];
} eager_result;

static glc_status eager_workflow(glc_device *dev, eager_result *r)
{
    int64_t shape[2] = {3, D}, wshape[1] = {D};
    float x[3 * D], w[D];
    glc_buffer *bx = NULL, *bw = NULL, *bt = NULL, *by = NULL;
    glc_session *s = NULL;
    glc_softmax_desc sm;
    glc_status st;
    int i;
    for (i = 0; i < 3 * D; i++)
        x[i] = (float)(i % 13) * 0.25f - 1.0f;
    for (i = 0; i < D; i++)
        w[i] = 1.0f + (float)i / D;
    memset(&sm, 0, sizeof sm);
    if ((st = OTHER(glc_buffer_create(dev, GLC_DTYPE_F32, 2, shape, &bx))) != GLC_OK ||
        (st = OTHER(glc_buffer_create(dev, GLC_DTYPE_F32, 1, wshape, &bw))) != GLC_OK ||
        (st = OTHER(glc_buffer_create(dev, GLC_DTYPE_F32, 2, shape, &bt))) != GLC_OK ||
        (st = OTHER(glc_buffer_create(dev, GLC_DTYPE_F32, 2, shape, &by))) != GLC_OK ||
        (st = OTHER(glc_buffer_write(bx, 0, sizeof x, x))) != GLC_OK ||
        (st = OTHER(glc_buffer_write(bw, 0, sizeof w, w))) != GLC_OK ||
        (st = OTHER(glc_session_begin(dev, GLC_SESSION_RECORDED, &s))) != GLC_OK)
        goto out;
    if ((st = OTHER(glc_op_rms_norm(s, glc_view_of(bx), glc_view_of(bw), 1e-5f,
                                    glc_view_of(bt)))) != GLC_OK ||
        (st = OTHER(glc_op_add(s, glc_view_of(bt), glc_view_of(bx), glc_view_of(by)))) != GLC_OK ||
        (st = OTHER(glc_op_softmax(s, glc_view_of(by), &sm, glc_view_of(bt)))) != GLC_OK ||
        (st = OTHER(glc_op_mul(s, glc_view_of(bt), glc_view_of(by), glc_view_of(bx)))) != GLC_OK) {
        glc_session_finish(s, NULL);
        goto out;
    }
    if ((st = OTHER(glc_session_finish(s, NULL))) != GLC_OK)
        goto out;
    st = OTHER(glc_buffer_read(bx, 0, sizeof r->y, r->y));
out:
    glc_buffer_destroy(bx);
    glc_buffer_destroy(bw);
    glc_buffer_destroy(bt);
    glc_buffer_destroy(by);
    return st;
}

/* ---- the loops ---- */

typedef glc_status (*workflow_fn)(glc_device *dev, void *result);

static glc_status block_fn(glc_device *dev, void *r) { return block_workflow(dev, (result *)r); }
static glc_status eager_fn(glc_device *dev, void *r) { return eager_workflow(dev, (eager_result *)r); }

/* Runs fn with call N = 1, 2, ... of the hook failing (and, sticky, every
 * later one) until a pass makes fewer than N calls: each pass either
 * reports out of memory or, where the library can do without the memory
 * (the run's barrier tracker falls back to a barrier), computes the right
 * result. Returns the passes the failure hit. */
static long oom_loop(glc_device *dev, hook *h, workflow_fn fn, void *want, void *got,
                     size_t bytes, int sticky)
{
    long n, calls, live_before = h->live;
    for (n = 1;; n++) {
        glc_status st;
        memset(got, 0xa5, bytes);
        hook_arm(h, n, sticky);
        st = fn(dev, got);
        calls = h->calls;
        hook_arm(h, 0, 0);
        if (calls < n) { /* the failure was not reached: done */
            assert_int_equal(st, GLC_OK);
            break;
        }
        if (st == GLC_OK)
            assert_memory_equal(got, want, bytes);
        else if (st != GLC_ERR_OUT_OF_MEMORY)
            fail_msg("N = %ld%s: status %s (%s), not out of memory", n, sticky ? " (sticky)" : "",
                     glc_status_str(st), glc_device_errmsg(dev));
        /* what a failed pass made is gone again (the kernels are in the
         * device's cache since the reference pass, and the device's
         * barrier tracker keeps the capacity it had) */
        if (h->live != live_before)
            fail_msg("N = %ld%s: %ld blocks left behind", n, sticky ? " (sticky)" : "",
                     h->live - live_before);
        if (n > 100000)
            fail_msg("no end after %ld passes", n);
    }
    assert_memory_equal(got, want, bytes);
    print_message("%ld allocations failed in turn%s\n", n - 1, sticky ? ", each with all after it" : "");
    return n - 1;
}

static void test_block_oom(void **state)
{
    static result want, got;
    hook h;
    tu_log log;
    glc_device_desc d = hook_desc(&h, &log);
    glc_device *dev = tu_device_desc(&d);
    long calls, failed;
    (void)state;
    /* an unfailed pass first: the reference, and it compiles the kernels
     * once, so the loops below also see the cached path */
    assert_int_equal(block_workflow(dev, &want), GLC_OK);
    for (calls = 0; calls < TMAX * D; calls++)
        assert_true(isfinite(want.y[calls]) && isfinite(want.p[calls]));
    assert_memory_equal(want.slots_y, want.y, sizeof want.y); /* f32 out: the same bytes */
    assert_memory_equal(want.y3, want.y, sizeof want.y3);     /* causal: row t sees rows <= t */
    hook_arm(&h, 0, 0);
    assert_int_equal(block_workflow(dev, &got), GLC_OK);
    calls = h.calls;
    assert_true(calls > 50); /* the hook saw the workflow's allocations */
    failed = oom_loop(dev, &h, block_fn, &want, &got, sizeof want, 0);
    assert_true(failed >= calls); /* every call was failed once */
    failed = oom_loop(dev, &h, block_fn, &want, &got, sizeof want, 1);
    assert_true(failed >= calls);
    glc_device_destroy(dev);
    assert_int_equal(h.live, 0);
}

static void test_eager_oom(void **state)
{
    static eager_result want, got;
    hook h;
    glc_device_desc d = hook_desc(&h, NULL);
    glc_device *dev = tu_device_desc(&d);
    long calls;
    (void)state;
    assert_int_equal(eager_workflow(dev, &want), GLC_OK);
    hook_arm(&h, 0, 0);
    assert_int_equal(eager_workflow(dev, &got), GLC_OK);
    calls = h.calls;
    assert_true(calls > 5);
    assert_true(oom_loop(dev, &h, eager_fn, &want, &got, sizeof want, 0) >= calls);
    assert_true(oom_loop(dev, &h, eager_fn, &want, &got, sizeof want, 1) >= calls);
    glc_device_destroy(dev);
    assert_int_equal(h.live, 0);
}

/* Kernels compile on first use: a fresh device per pass puts the
 * compile path under every failure too. */
static void test_fresh_device_oom(void **state)
{
    static eager_result want, got;
    hook h;
    glc_device_desc d = hook_desc(&h, NULL);
    glc_device *dev = tu_device_desc(&d);
    glc_status st;
    long n, calls;
    int sticky;
    (void)state;
    assert_int_equal(eager_workflow(dev, &want), GLC_OK);
    glc_device_destroy(dev);
    assert_int_equal(h.live, 0);
    for (sticky = 0; sticky < 2; sticky++) {
        for (n = 1;; n++) {
            hook_arm(&h, n, sticky);
            dev = (glc_device *)(uintptr_t)0x2;
            st = glc_device_create(&d, &dev);
            if (st == GLC_OK) {
                st = eager_workflow(dev, &got);
                glc_device_destroy(dev);
            } else {
                assert_ptr_equal(dev, (glc_device *)(uintptr_t)0x2); /* untouched */
            }
            calls = h.calls;
            hook_arm(&h, 0, 0);
            assert_int_equal(h.live, 0);
            if (st != GLC_OK && st != GLC_ERR_OUT_OF_MEMORY)
                fail_msg("N = %ld: %s", n, glc_status_str(st));
            if (st == GLC_OK)
                assert_memory_equal(&got, &want, sizeof want);
            if (calls < n)
                break;
            assert_true(n < 10000);
        }
        assert_int_equal(st, GLC_OK);
        assert_true(n > 10);
    }
}

/* The check can fail: the first allocation of a compile fails it. */
static void test_hook_catches(void **state)
{
    hook h;
    glc_device_desc d = hook_desc(&h, NULL);
    glc_device *dev = tu_device_desc(&d);
    glc_graph *g;
    glc_plan *p = (glc_plan *)(uintptr_t)0x2;
    (void)state;
    assert_true(h.calls > 0); /* device creation allocated through the hook */
    assert_int_equal(build(dev, &g), GLC_OK);
    hook_arm(&h, 1, 0);
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_ERR_OUT_OF_MEMORY);
    assert_int_equal(h.calls, 1); /* the failure stopped it */
    assert_ptr_equal(p, (glc_plan *)(uintptr_t)0x2);
    tu_assert_contains(glc_device_errmsg(dev), "out of memory");
    hook_arm(&h, 0, 0);
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_plan_destroy(p);
    glc_graph_destroy(g);
    glc_device_destroy(dev);
    assert_int_equal(h.live, 0);
}

/* Two devices, two hooks: with a call on device B before every call on A
 * (B's heap current each time), A's calls allocate from A's hook only.
 * (B is made first: A's context is then the current one, and B is only
 * used for what needs no GL.) */
static void test_allocations_follow_the_device(void **state)
{
    static result want;
    static eager_result ewant;
    hook ha, hb;
    glc_device_desc da = hook_desc(&ha, NULL), db = hook_desc(&hb, NULL);
    glc_device *b = tu_device_desc(&db), *a = tu_device_desc(&da);
    long live;
    (void)state;
    other = b;
    live = hb.live;
    assert_int_equal(block_workflow(a, &want), GLC_OK);
    assert_int_equal(eager_workflow(a, &ewant), GLC_OK);
    assert_true(hb.calls > 0 && ha.calls > 0); /* both were used in turn */
    assert_int_equal(hb.live, live);         /* nothing of A's is in B's heap */
    other = NULL;
    /* B gone first: none of A's blocks lived in B's heap */
    glc_device_destroy(b);
    assert_int_equal(hb.live, 0);
    assert_int_equal(block_workflow(a, &want), GLC_OK);
    glc_device_destroy(a);
    assert_int_equal(ha.live, 0);
}

static void test_bad_allocator(void **state)
{
    hook h;
    glc_device_desc d = hook_desc(&h, NULL);
    glc_device *dev = (glc_device *)(uintptr_t)0x2;
    (void)state;
    d.allocator.free = NULL; /* alloc without free */
    assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_INVALID_ARG);
    d.allocator.alloc = NULL; /* realloc alone */
    assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_INVALID_ARG);
    assert_ptr_equal(dev, (glc_device *)(uintptr_t)0x2);
    assert_int_equal(h.calls, 0);
    /* no realloc: the library moves blocks itself */
    d = hook_desc(&h, NULL);
    d.allocator.realloc = NULL;
    dev = tu_device_desc(&d);
    {
        static result r;
        assert_int_equal(block_workflow(dev, &r), GLC_OK);
    }
    glc_device_destroy(dev);
    assert_int_equal(h.live, 0);
}

static int setup(void **state)
{
    glc_device *dev;
    (void)state;
    if (glc_device_create(NULL, &dev) == GLC_OK) {
        pin_driver();
        glc_device_destroy(dev);
    }
    return 0;
}

/* A failed test leaves `other` set: the next must not use it. */
static int reset(void **state)
{
    (void)state;
    other = NULL;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_hook_catches, reset),
        cmocka_unit_test_setup(test_bad_allocator, reset),
        cmocka_unit_test_setup(test_allocations_follow_the_device, reset),
        cmocka_unit_test_setup(test_eager_oom, reset),
        cmocka_unit_test_setup(test_fresh_device_oom, reset),
        cmocka_unit_test_setup(test_block_oom, reset),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
