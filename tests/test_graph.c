/*
 * The graph builder, GL-free (a fake device; the builder never calls GL):
 * shape inference through the op table, symbolic dims that follow a
 * variable, the sticky first error with its message, names, and
 * allocation-failure injection.
 */
#include "testutil.h"

#include "alloc.h"
#include "compile.h"
#include "device.h"
#include "graph.h"

static glc_device *fake(void)
{
    glc__gl gl;
    glc_device_limits lim;
    glc_device *dev;
    memset(&gl, 0, sizeof gl);
    memset(&lim, 0, sizeof lim);
    assert_int_equal(glc__device_create_fake(&gl, &lim, &dev), GLC_OK);
    return dev;
}

static void test_shapes_and_vars(void **state)
{
    glc_device *dev = fake();
    glc_graph *g;
    int64_t T, shape[4], xs[2], bs[1] = {64};
    glc_tensor x, b, y, z;
    (void)state;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    T = glc_graph_var(g, "T", 1, 128);
    assert_true(T == GLC_DIM_VAR(0));
    xs[0] = T;
    xs[1] = 64;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    b = glc_graph_param(g, "b", GLC_DTYPE_F16, 1, bs);
    y = glc_add(g, x, b); /* [T, 64] + [64] broadcasts */
    z = glc_unary(g, GLC_UNARY_SILU, glc_scale(g, y, 2.0f, 1.0f), 0);
    glc_graph_output(g, "z", z);
    assert_int_equal(glc_graph_status(g), GLC_OK);
    assert_int_equal(glc_tensor_shape(g, z, shape), 2);
    assert_true(shape[0] == T && shape[1] == 64); /* the variable carried through */
    assert_int_equal(glc_tensor_dtype(g, z), GLC_DTYPE_F32);
    assert_int_equal(g->nn, 3);
    glc_graph_destroy(g);
    glc_device_destroy(dev);
}

static void test_sticky_error(void **state)
{
    glc_device *dev = fake();
    glc_graph *g;
    int64_t s23[2] = {2, 3}, s4[1] = {4};
    glc_tensor a, b, bad, after;
    (void)state;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, s23);
    b = glc_graph_input(g, "b", GLC_DTYPE_F32, 1, s4);
    bad = glc_mul(g, a, b);
    assert_true(bad.id < 0);
    assert_int_equal(glc_graph_status(g), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_graph_errmsg(g),
                        "mul: shapes [2, 3] f32 and [4] f32 do not broadcast (dim 1: 3 vs 4)");
    after = glc_add(g, a, a); /* a no-op now: the first error stays */
    assert_true(after.id < 0);
    glc_graph_output(g, "y", after);
    assert_string_equal(glc_graph_errmsg(g),
                        "mul: shapes [2, 3] f32 and [4] f32 do not broadcast (dim 1: 3 vs 4)");
    glc_graph_destroy(g);

    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, s23);
    glc_graph_input(g, "a", GLC_DTYPE_F32, 2, s23);
    assert_string_equal(glc_graph_errmsg(g), "glc_graph_input(\"a\"): the name is taken");
    glc_graph_destroy(g);

    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    {
        int64_t bad_shape[2] = {GLC_DIM_VAR(3), 4};
        glc_graph_input(g, "x", GLC_DTYPE_F32, 2, bad_shape);
        tu_assert_contains(glc_graph_errmsg(g), "is neither >= 1 nor a variable of this graph");
    }
    glc_graph_destroy(g);

    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    glc_graph_var(g, "T", 8, 4);
    assert_string_equal(glc_graph_errmsg(g),
                        "glc_graph_var(\"T\"): bounds [8, 4] (need 1 <= min <= max)");
    glc_graph_destroy(g);

    /* found by the fuzzer: plans set variables by name, so a second "T"
     * could never be set (its values went to the first, out of bounds) */
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    assert_true(glc_graph_var(g, "T", 1, 4) == GLC_DIM_VAR(0));
    assert_true(glc_graph_var(g, "T", 1, 8) == 0);
    assert_string_equal(glc_graph_errmsg(g), "glc_graph_var(\"T\"): the name is taken");
    glc_graph_destroy(g);

    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    {
        glc_tensor stray = {7};
        glc_add(g, stray, stray);
        assert_string_equal(glc_graph_errmsg(g), "add: input 0 is not a tensor of this graph");
    }
    glc_graph_destroy(g);
    glc_graph_destroy(NULL);
    assert_int_equal(glc_graph_create(NULL, &g), GLC_ERR_INVALID_ARG);
    glc_device_destroy(dev);
}

static glc_status build_once(glc_device *dev)
{
    glc_graph *g;
    int64_t T, xs[2], ws[1] = {32};
    glc_tensor x, w, y;
    glc_status st = glc_graph_create(dev, &g);
    if (st != GLC_OK)
        return st;
    T = glc_graph_var(g, "T", 1, 16);
    xs[0] = T;
    xs[1] = 32;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    w = glc_graph_param(g, "w", GLC_DTYPE_F32, 1, ws);
    y = glc_mul(g, x, w);
    y = glc_add(g, y, x);
    glc_graph_output(g, "y", y);
    st = glc_graph_status(g);
    glc_graph_destroy(g);
    return st;
}

static void test_alloc_failures(void **state)
{
    glc_device *dev = fake();
    glc_status st = GLC_ERR_OUT_OF_MEMORY;
    long k;
    (void)state;
    for (k = 1; k < 100 && st != GLC_OK; k++) {
        glc__alloc_fail_after(k);
        st = build_once(dev);
        glc__alloc_fail_after(0);
        assert_true(st == GLC_OK || st == GLC_ERR_OUT_OF_MEMORY);
    }
    assert_int_equal(st, GLC_OK);
    assert_true(k > 3); /* it did fail on the way */
    glc_device_destroy(dev);
}

/* Found by the fuzzer (tests/fuzz_graph.c): shapes whose element count or
 * bytes overflow int64/size_t were taken, and the rules multiplied them
 * (signed overflow in glc__numel). Now leaves and op outputs past the
 * address space are refused, and the size helpers saturate. */
static void test_huge_shapes(void **state)
{
    glc_device *dev = fake();
    glc_graph *g;
    int64_t huge[2] = {INT64_MAX / 4, 18}, col[2] = {1ll << 31, 1}, row[2] = {1, 1ll << 31};
    glc_tensor a, b;
    glc__tensor t;
    (void)state;
    assert_int_equal(glc_dtype_row_bytes(GLC_DTYPE_F32, (1ll << 62) + 1), 0); /* wrapped to 4 */
    memset(&t, 0, sizeof t);
    t.dtype = GLC_DTYPE_F32;
    t.rank = 2;
    t.shape[0] = INT64_MAX / 4;
    t.shape[1] = 18;
    assert_true(glc__numel(&t) == INT64_MAX);
    assert_true(glc__tensor_bytes(&t) == SIZE_MAX);

    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    a = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, huge);
    assert_true(a.id < 0);
    assert_string_equal(glc_graph_errmsg(g),
                        "glc_graph_input(\"x\"): the shape overflows the address space");
    glc_graph_destroy(g);

    /* a variable's maximum counts */
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    huge[0] = glc_graph_var(g, "T", 1, INT64_MAX);
    huge[1] = 4;
    glc_graph_param(g, "w", GLC_DTYPE_F16, 2, huge);
    assert_int_equal(glc_graph_status(g), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_graph_errmsg(g), "overflows the address space");
    glc_graph_destroy(g);

    /* each input fits; their broadcast does not */
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, col);
    b = glc_graph_input(g, "b", GLC_DTYPE_F32, 2, row);
    assert_true(a.id >= 0 && b.id >= 0);
    a = glc_add(g, a, b);
    assert_true(a.id < 0);
    assert_int_equal(glc_graph_status(g), GLC_ERR_INVALID_ARG);
    glc_graph_destroy(g);

    /* a reshape to a shape whose product overflows (UB before: the
     * element counts were multiplied unchecked) */
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, col);
    {
        int64_t bad[3] = {1ll << 62, 29, 2};
        assert_true(glc_reshape(g, a, 3, bad).id < 0);
    }
    assert_int_equal(glc_graph_status(g), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_graph_errmsg(g), "reshape:");
    glc_graph_destroy(g);
    glc_device_destroy(dev);
}

/* Found by the fuzzer: a param no live op reads got 0 bytes in the memory
 * plan, so glc_plan_set_param refused its real size ("the param is 0
 * bytes"). Every tensor's place now has its bytes. */
static void test_unused_param_has_its_size(void **state)
{
    glc_device *dev = fake();
    glc_graph *g;
    glc__target tg;
    glc__program prog;
    char err[256];
    int64_t xs[1] = {32}, ws[2] = {32, 32};
    glc_tensor x, w;
    (void)state;
    memset(&tg, 0, sizeof tg);
    tg.limits.max_group_count[0] = tg.limits.max_group_count[1] = 65535;
    tg.limits.max_group_count[2] = 65535;
    tg.limits.max_group_size[0] = tg.limits.max_invocations = 128;
    tg.limits.max_shared_bytes = 16384;
    tg.limits.max_ssbo_blocks = tg.limits.max_ssbo_bindings = 4;
    tg.limits.max_ssbo_size = 1u << 27;
    tg.limits.ssbo_offset_alignment = 16;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 1, xs);
    w = glc_graph_param(g, "w", GLC_DTYPE_Q8_0, 2, ws); /* read by nothing */
    glc_graph_output(g, "y", glc_scale(g, x, 2.0f, 0.0f));
    assert_int_equal(glc__compile(g, &tg, &prog, err, sizeof err), GLC_OK);
    assert_int_equal(prog.place[w.id].region, GLC__REGION_NONE);
    assert_int_equal(prog.place[w.id].bytes, 32 * 34);
    glc__program_free(&prog);
    glc_graph_destroy(g);
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes_and_vars),
        cmocka_unit_test(test_sticky_error),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_huge_shapes),
        cmocka_unit_test(test_unused_param_has_its_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
