/*
 * Every op from one case table. A case is one table line: the op, operand
 * dtypes and shapes, its arguments, the NMSE limit and a few flags. Each
 * case runs four ways against the plain C reference of tests/ref (double
 * accumulation): eagerly through glc_op_* in a session, and through a plan
 * compiled from the glc_* graph builders (glc_graph_compile + glc_plan_run),
 * each on the default device and on one created with GLC_DEVICE_LIMITS_MIN
 * (what GLC_LIMITS=min gives). Eager outputs sit between sentinel bytes;
 * plan outputs are read into host arrays with sentinel floats after them.
 *
 * Adding an op: one entry in oc_ops (tests/ref/optable.c: how to make its
 * inputs, its reference, its eager call and its builder call) and a few
 * lines in the case table (tests/ref/opcases.c); a variant of an op is a
 * few lines there. The
 * builder list of include/glcompute.h is parsed at test time and each
 * builder must have a case (test_table_covers_builders) and must have run
 * one through a compiled plan (test_graph*).
 *
 * Only the public API (glcompute.h) and the harness of tests/ref are used.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glcompute.h"
#include "optable.h"


/* ---- the tests ---- */

static glc_device *device(unsigned flags)
{
    glc_device_desc desc;
    glc_device *dev = NULL;
    glc_status st;
    memset(&desc, 0, sizeof desc);
    desc.flags = flags;
    st = glc_device_create(&desc, &dev);
    if (st == GLC_ERR_NO_DEVICE) {
        fprintf(stderr, "no EGL device: skipping\n");
        skip();
    }
    assert_int_equal(st, GLC_OK);
    return dev;
}

/* GLC_OPS_CASE=n runs case n alone (bisecting; generated cases follow
 * the table's). GLC_OPS_OP=name runs the cases of the builders whose name
 * starts with it (GLC_OPS_OP=matmul GLC_MATMUL=matvec: the decode kernels
 * on the table's and the generated shapes, about 12 s on llvmpipe, so not
 * in `make check`). GLC_OPS_SMALLEST=1
 * runs, of each op and pair of first operand dtypes, its case of fewest
 * operand elements (the slow drivers' run: softpipe in .ci/run). */
static int selected(const oc_case *c, size_t i)
{
    const char *e = getenv("GLC_OPS_CASE"), *o = getenv("GLC_OPS_OP");
    if (o && *o && strncmp(oc_ops[c->op].builder, o, strlen(o)) != 0)
        return 0;
    return !e || !*e || (size_t)atoi(e) == i;
}

static int64_t case_size(const oc_case *c)
{
    int64_t n = 0;
    int k, d;
    for (k = 0; k < MAXIN; k++) {
        int64_t m = 1;
        for (d = 1; d <= c->s[k][0] && d < 5; d++)
            m *= c->s[k][d];
        n += c->s[k][0] > 0 ? m : 0;
    }
    return n;
}

/* With GLC_OPS_SMALLEST: whether case i (of the table then the generated,
 * all[]) is the smallest of its op and operand dtypes (the first of
 * equals). */
static int smallest_of_op(const oc_case *all, size_t n, size_t i)
{
    const char *e = getenv("GLC_OPS_SMALLEST");
    size_t j;
    if (!e || !*e || strcmp(e, "0") == 0)
        return 1;
    for (j = 0; j < n; j++)
        if (all[j].op == all[i].op && all[j].dt[0] == all[i].dt[0] && all[j].dt[1] == all[i].dt[1] &&
            (case_size(&all[j]) < case_size(&all[i]) ||
             (case_size(&all[j]) == case_size(&all[i]) && j < i)))
            return 0;
    return 1;
}

static void run_all(unsigned flags, int graph)
{
    glc_device *dev = device(flags);
    size_t i;
    char label[32];
    oc_case *gen = malloc(OC_NGEN * sizeof *gen);
    size_t ngen, ncases;
    const oc_case *cases = oc_cases(&ncases);
    oc_case *all;
    int min = (flags & GLC_DEVICE_LIMITS_MIN) != 0, nrun = 0;
    memset(oc_ran, 0, sizeof oc_ran);
    ngen = oc_generate(gen);
    all = malloc((ncases + ngen) * sizeof *all);
    assert_non_null(all);
    memcpy(all, cases, ncases * sizeof *all);
    memcpy(all + ncases, gen, ngen * sizeof *all);
    for (i = 0; i < ncases; i++) {
        if (!selected(&cases[i], i) || !smallest_of_op(all, ncases + ngen, i))
            continue;
        nrun++;
        /* big cases once eagerly (default device) and once planned (min) */
        if ((cases[i].flags & C_BIG) && graph != min)
            continue;
        snprintf(label, sizeof label, "case %zu", i);
        if (graph)
            oc_run_graph(dev, &cases[i], 0x5eed0000u + i * 7919u, label);
        else
            oc_run_eager(dev, &cases[i], 0x5eed0000u + i * 7919u, label);
    }
    for (i = 0; i < ngen; i++) {
        if (!selected(&gen[i], ncases + i) || !smallest_of_op(all, ncases + ngen, ncases + i))
            continue;
        nrun++;
        snprintf(label, sizeof label, "generated case %zu", ncases + i);
        if (graph)
            oc_run_graph(dev, &gen[i], 0x9e3700u + i, label);
        else
            oc_run_eager(dev, &gen[i], 0x9e3700u + i, label);
    }
    if (getenv("GLC_OPS_SMALLEST"))
        fprintf(stderr, "GLC_OPS_SMALLEST: %d cases of %zu\n", nrun, ncases + ngen);
    free(gen);
    free(all);
    glc_device_destroy(dev);
    if (graph && !getenv("GLC_OPS_CASE") && !getenv("GLC_OPS_OP")) { /* every builder ran through a plan */
        int op;
        for (op = 0; op < OC_COUNT; op++)
            if (!oc_ran[op])
                fail_msg("builder glc_%s: no case ran through a plan", oc_ops[op].builder);
    }
}

static void test_eager(void **state)
{
    (void)state;
    run_all(0, 0);
}

static void test_graph(void **state)
{
    (void)state;
    run_all(0, 1);
}

static void test_eager_limits_min(void **state)
{
    (void)state;
    run_all(GLC_DEVICE_LIMITS_MIN, 0);
}

static void test_graph_limits_min(void **state)
{
    (void)state;
    run_all(GLC_DEVICE_LIMITS_MIN, 1);
}

/* The op builders of include/glcompute.h: every declaration
 * "GLC_API glc_tensor glc_NAME(" but glc_none and the glc_graph_* ones
 * (inputs, params, handles). They and the table's ops must match one to
 * one, and each op must have a case in the table. */
static void test_table_covers_builders(void **state)
{
    size_t ncases;
    const oc_case *cases = oc_cases(&ncases);
    char path[512], line[512];
    const char *slash = strrchr(__FILE__, '/');
    FILE *f;
    int found = 0, op;
    size_t i;
    (void)state;
    /* __FILE__ is tests/test_ops.c (make runs from the top): the header
     * is one level up */
    snprintf(path, sizeof path, "%.*s../include/glcompute.h",
             slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__);
    for (op = 0; op < OC_COUNT; op++)
        if (!oc_ops[op].builder || !oc_ops[op].gen || !oc_ops[op].ref || !oc_ops[op].graph)
            fail_msg("op %d has no (complete) entry in the op table", op);
    f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    while (fgets(line, sizeof line, f)) {
        static const char pre[] = "GLC_API glc_tensor glc_";
        char name[64];
        int known = 0;
        if (strncmp(line, pre, sizeof pre - 1))
            continue;
        if (sscanf(line + sizeof pre - 1, "%63[a-z0-9_]", name) != 1)
            fail_msg("cannot read the builder's name in: %s", line);
        if (!strncmp(name, "graph_", 6) || !strcmp(name, "none"))
            continue;
        found++;
        for (op = 0; op < OC_COUNT; op++)
            known |= !strcmp(oc_ops[op].builder, name);
        if (!known)
            fail_msg("builder glc_%s of glcompute.h has no entry in the op table", name);
    }
    fclose(f);
    assert_int_equal(found, OC_COUNT); /* (names are unique: one to one) */
    for (op = 0; op < OC_COUNT; op++) {
        int n = 0;
        for (i = 0; i < ncases; i++)
            n += cases[i].op == op;
        if (!n)
            fail_msg("op %s has no case in the table", oc_ops[op].builder);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_covers_builders),
        cmocka_unit_test(test_eager),
        cmocka_unit_test(test_graph),
        cmocka_unit_test(test_eager_limits_min),
        cmocka_unit_test(test_graph_limits_min),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
