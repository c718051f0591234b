/*
 * The reorder pass, GL-free: on random command streams the permutation
 * keeps every dependency (a command never moves ahead of an earlier one it
 * conflicts with), never moves across a fence, and never needs more
 * barriers than the original order.
 */
#include "testutil.h"

#include "hazard.h"
#include "reorder.h"

#define MAXN 96
#define MAXS 4

static int conflicts(const glc__reorder_item *a, const glc__reorder_item *b)
{
    int i, j;
    for (i = 0; i < a->n; i++)
        for (j = 0; j < b->n; j++) {
            const glc__span *x = &a->spans[i], *y = &b->spans[j];
            if (x->buffer != y->buffer || x->begin >= y->end || y->begin >= x->end)
                continue;
            if ((x->access & GLC_WRITE) || (y->access & GLC_WRITE))
                return 1;
        }
    return 0;
}

/* Barriers the encoder would emit for items taken in `order`. */
static int barriers(const glc__reorder_item *items, const size_t *order, size_t n)
{
    glc__hazard h;
    size_t i;
    int b = 0;
    glc__hazard_init(&h);
    for (i = 0; i < n; i++) {
        const glc__reorder_item *it = &items[order[i]];
        if (glc__hazard_check(&h, it->spans, it->n, NULL) || it->fence) {
            glc__hazard_clear(&h);
            b += i > 0;
        }
        assert_int_equal(glc__hazard_add(&h, it->spans, it->n, (uint32_t)i), GLC_OK);
    }
    glc__hazard_finish(&h);
    return b;
}

static void test_random_streams(void **state)
{
    glc__span spans[MAXN * MAXS];
    glc__reorder_item items[MAXN];
    size_t order[MAXN], ident[MAXN], pos[MAXN];
    glc__reorder r;
    uint64_t seed = 42;
    int iter, fewer = 0;
    (void)state;
    glc__reorder_init(&r);
    for (iter = 0; iter < 400; iter++) {
        size_t n = tu_range(&seed, 1, MAXN), i, j, ns = 0;
        uint32_t nbuf = tu_range(&seed, 1, 8);
        for (i = 0; i < n; i++) {
            int k, m = (int)tu_range(&seed, 1, MAXS);
            items[i].spans = &spans[ns];
            items[i].n = m;
            items[i].fence = tu_range(&seed, 0, 30) == 0;
            for (k = 0; k < m; k++) {
                glc__span *sp = &spans[ns++];
                sp->buffer = tu_range(&seed, 1, nbuf);
                sp->begin = tu_range(&seed, 0, 7) * 64;
                sp->end = sp->begin + tu_range(&seed, 1, 3) * 64;
                sp->access = tu_range(&seed, 1, 3);
            }
            ident[i] = i;
        }
        assert_int_equal(glc__reorder_run(&r, items, n, tu_range(&seed, 1, 32), order), GLC_OK);
        memset(pos, 0xff, sizeof pos);
        for (i = 0; i < n; i++) {
            assert_true(order[i] < n);
            assert_true(pos[order[i]] == (size_t)-1); /* a permutation */
            pos[order[i]] = i;
        }
        for (i = 0; i < n; i++)
            for (j = i + 1; j < n; j++) {
                if (conflicts(&items[i], &items[j]) || items[i].fence || items[j].fence)
                    if (pos[i] > pos[j])
                        fail_msg("seed iteration %d: %zu moved ahead of %zu", iter, j, i);
            }
        assert_true(barriers(items, order, n) <= barriers(items, ident, n));
        fewer += barriers(items, order, n) < barriers(items, ident, n);
    }
    assert_true(fewer > 50); /* it does reorder, often */
    glc__reorder_finish(&r);
}

static void test_window_zero_is_identity(void **state)
{
    glc__span sp[2] = {{1, 0, 64, GLC_WRITE}, {2, 0, 64, GLC_WRITE}};
    glc__reorder_item items[3] = {{&sp[0], 1, 0}, {&sp[0], 1, 0}, {&sp[1], 1, 0}};
    size_t order[3];
    glc__reorder r;
    (void)state;
    glc__reorder_init(&r);
    assert_int_equal(glc__reorder_run(&r, items, 3, 0, order), GLC_OK);
    assert_true(order[0] == 0 && order[1] == 1 && order[2] == 2);
    assert_int_equal(glc__reorder_run(&r, items, 3, 4, order), GLC_OK);
    assert_true(order[0] == 0 && order[1] == 2 && order[2] == 1); /* 2 pulled up */
    glc__reorder_finish(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_streams),
        cmocka_unit_test(test_window_zero_is_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
