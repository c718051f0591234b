/*
 * Tests of the memory planner (src/core/memplan.c). A checker verifies any plan
 * (bounds, alignment, no shared bytes between tensors live together,
 * buffer sizes, total, the lower bound against a per-step brute force) and
 * is shown to catch broken plans; a simple reference planner (the same
 * greedy rules and search, written the obvious O(n^2 log n) way) must
 * place every tensor exactly where the planner does, on thousands of
 * random cases (sizes 0 and 1 included, small max_buffer forcing splits,
 * dense intervals taking the planner's full-scan path). Hand cases with
 * exact answers (the issue's chain at its bound), random DAGs against the
 * liveness bound (worst and mean ratio), small cases against the optimum
 * by brute force, transformer-like graphs whose arena must stay within
 * 1.05x the lower bound, errors with exact messages, out-of-memory at
 * each allocation, and the time for 10,000 tensors (printed).
 *
 * Random cases use a fixed seed; GLC_TEST_SEED=<n> overrides it, and every
 * failure prints the seed and case.
 */
#include "testutil.h"

#include <time.h>

#include "alloc.h"
#include "memplan.h"

#define DEFAULT_SEED 0x5EEDull
static uint64_t g_seed = DEFAULT_SEED;

#define SHARED(sz, f, l) {(sz), (f), (l), GLC__MEM_SHARED, -1, 0}
#define FIXED(sz) {(sz), 0, 0, GLC__MEM_FIXED, -1, 0}

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) & ~(a - 1);
}

static int live_together(const glc__mem_tensor *a, const glc__mem_tensor *b)
{
    if (a->kind == GLC__MEM_FIXED || b->kind == GLC__MEM_FIXED)
        return 1;
    return a->first <= b->last && b->first <= a->last;
}

/* The lower bound by brute force: every step from the smallest first to
 * the largest last. */
static size_t brute_lower_bound(const glc__mem_tensor *t, size_t n, size_t align)
{
    size_t fixed = 0, peak = 0;
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        if (t[i].kind == GLC__MEM_FIXED)
            fixed += align_up(t[i].size, align);
        else if (t[i].size > 0) {
            lo = t[i].first < lo ? t[i].first : lo;
            hi = t[i].last > hi ? t[i].last : hi;
        }
    }
    for (int64_t s = lo; s <= hi; s++) {
        size_t live = 0;
        for (size_t i = 0; i < n; i++)
            if (t[i].kind == GLC__MEM_SHARED && t[i].first <= s && s <= t[i].last)
                live += align_up(t[i].size, align);
        peak = live > peak ? live : peak;
    }
    return fixed + peak;
}

/* Verifies a plan; on failure writes why and returns 0. Brute force over
 * pairs of tensors (and steps, for the lower bound when `lb` is set). */
static int check_plan(const glc__mem_tensor *t, size_t n, size_t align, size_t max_buffer,
                      const glc__memplan *p, int lb, char *why, size_t whylen)
{
    size_t total = 0;
    if (p->nbuffers < 0 || (p->nbuffers > 0 && !p->buffer_size)) {
        snprintf(why, whylen, "bad buffer list");
        return 0;
    }
    for (int b = 0; b < p->nbuffers; b++) {
        if (p->buffer_size[b] > max_buffer || p->buffer_size[b] == 0) {
            snprintf(why, whylen, "buffer %d: size %zu (max %zu)", b, p->buffer_size[b],
                     max_buffer);
            return 0;
        }
        total += p->buffer_size[b];
    }
    if (total != p->total) {
        snprintf(why, whylen, "total %zu, buffers add up to %zu", p->total, total);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (t[i].size == 0)
            continue;
        if (t[i].buffer < 0 || t[i].buffer >= p->nbuffers || t[i].offset % align != 0 ||
            t[i].offset + t[i].size > p->buffer_size[t[i].buffer]) {
            snprintf(why, whylen, "tensor %zu (%zu bytes) at buffer %d offset %zu: outside", i,
                     t[i].size, t[i].buffer, t[i].offset);
            return 0;
        }
        for (size_t j = 0; j < i; j++) {
            if (t[j].size == 0 || t[j].buffer != t[i].buffer || !live_together(&t[i], &t[j]))
                continue;
            if (t[i].offset < t[j].offset + t[j].size && t[j].offset < t[i].offset + t[i].size) {
                snprintf(why, whylen, "tensors %zu and %zu share bytes", j, i);
                return 0;
            }
        }
    }
    if (lb) {
        size_t want = brute_lower_bound(t, n, align);
        if (p->lower_bound != want) {
            snprintf(why, whylen, "lower bound %zu, brute force %zu", p->lower_bound, want);
            return 0;
        }
    }
    /* Capping buffers at a max_buffer that is not a multiple of the
     * alignment may save up to that padding per buffer. */
    if (max_buffer % align == 0 && p->total < p->lower_bound) {
        snprintf(why, whylen, "total %zu below the lower bound %zu", p->total, p->lower_bound);
        return 0;
    }
    return 1;
}

/* ---- The reference planner ---------------------------------------------- */

typedef struct ref_item {
    size_t b, off, end;
} ref_item;

static int ref_cmp(const void *pa, const void *pb)
{
    const ref_item *a = pa, *b = pb;
    if (a->b != b->b)
        return a->b < b->b ? -1 : 1;
    return a->off < b->off ? -1 : a->off > b->off;
}

static const glc__mem_tensor *g_ref_t;
static int g_ref_order; /* 0 size, 1 start, 2 end, 3 lifetime, 4 size x lifetime */

/* A SHARED tensor's first key in order g_ref_order (larger first). */
static double ref_key(const glc__mem_tensor *a)
{
    double len = (double)a->last - (double)a->first + 1;
    switch (g_ref_order) {
    case 1: return -(double)a->first;
    case 2: return (double)a->last;
    case 3: return len;
    case 4: return (double)a->size * len;
    default: return (double)a->size;
    }
}

/* FIXED first (largest, lowest index), then SHARED by the order's key,
 * then (size order) earliest or (others) largest, then lowest index. */
static int ref_order(const void *pa, const void *pb)
{
    size_t i = *(const size_t *)pa, j = *(const size_t *)pb;
    const glc__mem_tensor *a = &g_ref_t[i], *b = &g_ref_t[j];
    if (a->kind != b->kind)
        return a->kind == GLC__MEM_FIXED ? -1 : 1;
    if (a->kind == GLC__MEM_FIXED) {
        if (a->size != b->size)
            return a->size > b->size ? -1 : 1;
        return i < j ? -1 : 1;
    }
    if (ref_key(a) != ref_key(b))
        return ref_key(a) > ref_key(b) ? -1 : 1;
    if (g_ref_order == 0 && a->first != b->first)
        return a->first < b->first ? -1 : 1;
    if (g_ref_order != 0 && a->size != b->size)
        return a->size > b->size ? -1 : 1;
    return i < j ? -1 : 1;
}

/* The same rules as the planner, the obvious way, for one order and fit
 * (best: the smallest gap; first: the lowest): every placed tensor is
 * looked at, the overlapping ones sorted by offset each time. Writes
 * buffer/offset into t and the buffer sizes into bsize; returns nbuffers. */
/* The non-empty tensors of t in order `order`; returns their count. */
static size_t ref_order_of(const glc__mem_tensor *t, size_t n, int order, size_t *ord)
{
    size_t nord = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i].size > 0)
            ord[nord++] = i;
    g_ref_t = t;
    g_ref_order = order;
    qsort(ord, nord, sizeof *ord, ref_order);
    return nord;
}

static size_t ref_place(glc__mem_tensor *t, size_t n, size_t align, size_t maxb, size_t *bsize,
                        const size_t *ord, size_t nord, int first_fit)
{
    size_t *fixed_end = calloc(n + 1, sizeof *fixed_end);
    size_t *top = calloc(n + 1, sizeof *top);
    ref_item *items = malloc((n + 1) * sizeof *items);
    unsigned char *placed = calloc(n + 1, 1);
    size_t nbuf = 0;
    assert_true(fixed_end && top && items && placed);
    for (size_t i = 0; i < n; i++) {
        t[i].buffer = 0;
        t[i].offset = 0;
    }
    for (size_t k = 0; k < nord; k++) {
        size_t i = ord[k], a = align_up(t[i].size, align), b = 0, off = 0;
        if (t[i].kind == GLC__MEM_FIXED) {
            while (b < nbuf && fixed_end[b] + t[i].size > maxb)
                b++;
            off = b < nbuf ? fixed_end[b] : 0;
            if (b == nbuf)
                bsize[nbuf++] = 0;
            fixed_end[b] = off + a;
        } else {
            size_t ni = 0, best_gap = SIZE_MAX, best_grow = SIZE_MAX;
            for (size_t j = 0; j < n; j++)
                if (placed[j] && t[j].kind == GLC__MEM_SHARED && live_together(&t[i], &t[j]))
                    items[ni++] = (ref_item){(size_t)t[j].buffer, t[j].offset,
                                             t[j].offset + align_up(t[j].size, align)};
            qsort(items, ni, sizeof *items, ref_cmp);
            for (size_t c = 0; c < nbuf; c++)
                top[c] = fixed_end[c];
            for (size_t j = 0; j < ni; j++) {
                size_t c = items[j].b;
                if (items[j].off > top[c] && items[j].off - top[c] >= a &&
                    items[j].off - top[c] < best_gap) {
                    best_gap = items[j].off - top[c];
                    b = c;
                    off = top[c];
                    if (first_fit)
                        break;
                }
                top[c] = items[j].end > top[c] ? items[j].end : top[c];
            }
            if (best_gap == SIZE_MAX) {
                b = nbuf;
                off = 0;
                for (size_t c = 0; c < nbuf; c++) {
                    if (top[c] + t[i].size > maxb)
                        continue;
                    size_t end = top[c] + a < maxb ? top[c] + a : maxb;
                    size_t grow = end > bsize[c] ? end - bsize[c] : 0;
                    if (grow < best_grow) {
                        best_grow = grow;
                        b = c;
                        off = top[c];
                    }
                }
                if (b == nbuf) {
                    fixed_end[nbuf] = 0;
                    bsize[nbuf++] = 0;
                }
            }
        }
        t[i].buffer = (int)b;
        t[i].offset = off;
        placed[i] = 1;
        size_t end = off + a < maxb ? off + a : maxb;
        bsize[b] = end > bsize[b] ? end : bsize[b];
    }
    free(fixed_end);
    free(top);
    free(items);
    free(placed);
    return nbuf;
}

/* The planner's own splitmix64 (src/core/memplan.c; tu_rand's streams
 * follow GLC_TEST_SEED, the planner's do not) */
static uint64_t planner_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ref_plan's best so far: u's places into t, the sizes and the order
 * kept; returns total. */
static size_t ref_keep(glc__mem_tensor *t, const glc__mem_tensor *u, size_t n, size_t *bsize,
                       const size_t *ub, size_t nb, size_t *bord, const size_t *ord, size_t nord,
                       size_t total)
{
    memcpy(bsize, ub, nb * sizeof *ub);
    memcpy(bord, ord, nord * sizeof *ord);
    for (size_t i = 0; i < n; i++) {
        t[i].buffer = u[i].buffer;
        t[i].offset = u[i].offset;
    }
    return total;
}

/* The planner's search, written plainly: each order with best fit, then
 * each with first fit (the first smallest total wins; the lower bound
 * stops it); then, with one buffer, the local search: a tensor ending at
 * the top (even tries) or any tensor (odd tries) moves to a random earlier
 * place in the order, kept when first fit gives no larger arena; then
 * random orders of the SHARED tensors, kept when smaller; the same seed
 * and budgets as the planner's. */
static size_t ref_plan(glc__mem_tensor *t, size_t n, size_t align, size_t maxb, size_t *bsize)
{
    glc__mem_tensor *u = malloc((n + 1) * sizeof *u);
    size_t *ub = malloc((n + 1) * sizeof *ub), best = SIZE_MAX, nbest = 0;
    size_t *ord = malloc((n + 1) * sizeof *ord), *bord = malloc((n + 1) * sizeof *bord);
    size_t bound = brute_lower_bound(t, n, align), nord = 0, ns = 0;
    assert_true(u && ub && ord && bord);
    for (int k = 0; k < 10 && (k == 0 || best > bound); k++) {
        size_t total = 0, nb;
        memcpy(u, t, n * sizeof *u);
        nord = ref_order_of(u, n, k % 5, ord);
        nb = ref_place(u, n, align, maxb, ub, ord, nord, k >= 5);
        for (size_t b = 0; b < nb; b++)
            total += ub[b];
        if (total < best) {
            best = ref_keep(t, u, n, bsize, ub, nb, bord, ord, nord, total);
            nbest = nb;
        }
    }
    for (size_t i = 0; i < n; i++)
        ns += t[i].size > 0 && t[i].kind == GLC__MEM_SHARED;
    if (nbest == 1 && ns >= 2) {
        size_t tries = 16384 / ns < 128 ? 16384 / ns : 128, nfixed = nord - ns;
        uint64_t seed = 0x9E3779B97F4A7C15ull;
        for (size_t k = 0; k < tries && best > bound; k++) {
            size_t ntop = 0, pos = nfixed, to, moved, total = 0, nb;
            uint64_t r = planner_rand(&seed);
            for (size_t i = nfixed; i < nord; i++)
                ntop += t[bord[i]].offset + align_up(t[bord[i]].size, align) >= best;
            if (ntop == 0)
                break;
            if (k % 2) {
                pos = nfixed + (size_t)(r % ns);
            } else {
                size_t pick = (size_t)(r % ntop);
                for (pos = nfixed; pos < nord; pos++)
                    if (t[bord[pos]].offset + align_up(t[bord[pos]].size, align) >= best &&
                        pick-- == 0)
                        break;
            }
            if (pos == nfixed)
                continue;
            to = nfixed + (size_t)((r >> 32) % (pos - nfixed));
            memcpy(ord, bord, nord * sizeof *ord);
            moved = ord[pos];
            memmove(&ord[to + 1], &ord[to], (pos - to) * sizeof *ord);
            ord[to] = moved;
            memcpy(u, t, n * sizeof *u);
            nb = ref_place(u, n, align, maxb, ub, ord, nord, 1);
            for (size_t b = 0; b < nb; b++)
                total += ub[b];
            if (total <= best && nb == 1)
                best = ref_keep(t, u, n, bsize, ub, nb, bord, ord, nord, total);
        }
        /* then random orders (Fisher-Yates), kept only when smaller */
        for (size_t k = 0; k < (2048 / ns < 64 ? 2048 / ns : 64) && best > bound; k++) {
            size_t total = 0, nb;
            memcpy(ord, bord, nord * sizeof *ord);
            for (size_t i = ns; i > 1; i--) {
                size_t j = (size_t)(planner_rand(&seed) % i), x = ord[nfixed + i - 1];
                ord[nfixed + i - 1] = ord[nfixed + j];
                ord[nfixed + j] = x;
            }
            memcpy(u, t, n * sizeof *u);
            nb = ref_place(u, n, align, maxb, ub, ord, nord, 1);
            for (size_t b = 0; b < nb; b++)
                total += ub[b];
            if (total < best && nb == 1)
                best = ref_keep(t, u, n, bsize, ub, nb, bord, ord, nord, total);
        }
    }
    free(u);
    free(ub);
    free(ord);
    free(bord);
    return nbest;
}

/* ---- Random cases -------------------------------------------------------- */

typedef struct rcase {
    size_t n, align, max_buffer;
    int32_t steps;
    int dense;
} rcase;

static void random_tensors(uint64_t *r, const rcase *c, glc__mem_tensor *t)
{
    for (size_t i = 0; i < c->n; i++) {
        uint32_t pick = tu_range(r, 0, 19);
        size_t cap = c->max_buffer < 5000 ? c->max_buffer : 5000;
        size_t sz;
        if (pick == 0)
            sz = 0;
        else if (pick == 1)
            sz = 1;
        else if (pick == 2)
            sz = c->max_buffer;
        else if (pick < 6)
            sz = (size_t)tu_range(r, 1, 4) * c->align;
        else
            sz = tu_range(r, 1, (uint32_t)cap);
        if (sz > c->max_buffer)
            sz = c->max_buffer;
        int32_t f = (int32_t)tu_range(r, 0, (uint32_t)c->steps - 1);
        int32_t len = c->dense ? (int32_t)tu_range(r, (uint32_t)c->steps / 2, (uint32_t)c->steps)
                               : (int32_t)tu_range(r, 0, tu_range(r, 0, 1) ? 3 : (uint32_t)c->steps);
        glc__mem_tensor x = SHARED(sz, f, f + len);
        if (tu_range(r, 0, 9) == 0)
            x.kind = GLC__MEM_FIXED;
        t[i] = x;
    }
}

static void run_random(const rcase *c, uint64_t *r, int which)
{
    glc__mem_tensor *t = malloc((c->n + 1) * sizeof *t), *u = malloc((c->n + 1) * sizeof *u);
    size_t *rb = malloc((c->n + 1) * sizeof *rb);
    char why[256], err[256];
    glc__memplan p;
    assert_true(t && u && rb);
    random_tensors(r, c, t);
    memcpy(u, t, c->n * sizeof *t);
    glc_status st = glc__memplan_make(t, c->n, c->align, c->max_buffer, &p, err, sizeof err);
    if (st != GLC_OK)
        fail_msg("seed %llu case %d: %s", (unsigned long long)g_seed, which, err);
    if (!check_plan(t, c->n, c->align, c->max_buffer, &p, 1, why, sizeof why))
        fail_msg("seed %llu case %d (n %zu align %zu max %zu): %s", (unsigned long long)g_seed,
                 which, c->n, c->align, c->max_buffer, why);
    size_t nb = ref_plan(u, c->n, c->align, c->max_buffer, rb);
    if (nb != (size_t)p.nbuffers)
        fail_msg("seed %llu case %d: %d buffers, reference %zu", (unsigned long long)g_seed, which,
                 p.nbuffers, nb);
    for (size_t b = 0; b < nb; b++)
        if (rb[b] != p.buffer_size[b])
            fail_msg("seed %llu case %d: buffer %zu is %zu bytes, reference %zu",
                     (unsigned long long)g_seed, which, b, p.buffer_size[b], rb[b]);
    for (size_t i = 0; i < c->n; i++)
        if (t[i].size > 0 && (t[i].buffer != u[i].buffer || t[i].offset != u[i].offset))
            fail_msg("seed %llu case %d: tensor %zu at %d:%zu, reference %d:%zu",
                     (unsigned long long)g_seed, which, i, t[i].buffer, t[i].offset, u[i].buffer,
                     u[i].offset);
    glc__memplan_finish(&p);
    free(t);
    free(u);
    free(rb);
}

static void test_random_vs_reference(void **state)
{
    (void)state;
    uint64_t r = g_seed;
    static const size_t aligns[] = {4, 16, 256};
    for (int k = 0; k < 3000; k++) {
        rcase c;
        c.n = tu_range(&r, 0, 60);
        c.align = aligns[tu_range(&r, 0, 2)];
        switch (tu_range(&r, 0, 3)) {
        case 0: c.max_buffer = (size_t)1 << 30; break;
        case 1: c.max_buffer = tu_range(&r, 1, 8) * c.align * 16; break; /* splits */
        case 2: c.max_buffer = tu_range(&r, 1, 20000); break; /* any, even tiny */
        default: c.max_buffer = tu_range(&r, 2000, 12000); break;
        }
        c.steps = (int32_t)tu_range(&r, 1, 40);
        c.dense = 0;
        run_random(&c, &r, k);
    }
}

/* Long intervals: most tensors overlap most others, so the planner takes
 * its full-scan path (k log k over the placed count) for many of them. */
static void test_random_dense(void **state)
{
    (void)state;
    uint64_t r = g_seed ^ 0xD15Eull;
    for (int k = 0; k < 40; k++) {
        rcase c = {tu_range(&r, 100, k < 4 ? 1500 : 400), 16, k % 2 ? (size_t)1 << 30 : 40000,
                   (int32_t)tu_range(&r, 4, 50), 1};
        run_random(&c, &r, k);
    }
}

/* ---- The checker catches broken plans ------------------------------------ */

static void test_checker_catches(void **state)
{
    (void)state;
    glc__mem_tensor t[] = {SHARED(100, 0, 2), SHARED(64, 1, 3), SHARED(32, 3, 4), FIXED(40)};
    glc__memplan p;
    char why[256];
    assert_int_equal(glc__memplan_make(t, 4, 16, 1 << 20, &p, NULL, 0), GLC_OK);
    assert_true(check_plan(t, 4, 16, 1 << 20, &p, 1, why, sizeof why));

    glc__mem_tensor bad[4];
    memcpy(bad, t, sizeof t); /* 1 lands on 0, live together */
    bad[1].offset = bad[0].offset;
    assert_false(check_plan(bad, 4, 16, 1 << 20, &p, 1, why, sizeof why));
    tu_assert_contains(why, "share bytes");
    memcpy(bad, t, sizeof t); /* misaligned */
    bad[2].offset += 4;
    assert_false(check_plan(bad, 4, 16, 1 << 20, &p, 1, why, sizeof why));
    memcpy(bad, t, sizeof t); /* past its buffer */
    bad[2].offset = p.buffer_size[0];
    assert_false(check_plan(bad, 4, 16, 1 << 20, &p, 1, why, sizeof why));
    tu_assert_contains(why, "outside");
    memcpy(bad, t, sizeof t); /* a FIXED tensor on top of one not live with... any */
    bad[3].offset = bad[2].offset;
    assert_false(check_plan(bad, 4, 16, 1 << 20, &p, 1, why, sizeof why));
    glc__memplan q = p; /* a wrong lower bound, a wrong total */
    q.lower_bound--;
    assert_false(check_plan(t, 4, 16, 1 << 20, &q, 1, why, sizeof why));
    q = p;
    q.total++;
    assert_false(check_plan(t, 4, 16, 1 << 20, &q, 1, why, sizeof why));
    glc__memplan_finish(&p);
}

/* ---- Hand cases ---------------------------------------------------------- */

static glc__memplan plan_ok(glc__mem_tensor *t, size_t n, size_t align, size_t maxb)
{
    glc__memplan p;
    char err[256] = "", why[256];
    glc_status st = glc__memplan_make(t, n, align, maxb, &p, err, sizeof err);
    if (st != GLC_OK)
        fail_msg("%s", err);
    if (!check_plan(t, n, align, maxb, &p, 1, why, sizeof why))
        fail_msg("%s", why);
    return p;
}

static void test_chain_reuses(void **state)
{
    (void)state;
    /* a -> b -> c: a and c never live together, so c takes a's bytes. */
    glc__mem_tensor t[] = {SHARED(100, 0, 1), SHARED(100, 1, 2), SHARED(100, 2, 3)};
    glc__memplan p = plan_ok(t, 3, 4, 1 << 20);
    assert_int_equal(p.nbuffers, 1);
    assert_int_equal(p.total, 200);
    assert_int_equal(p.lower_bound, 200);
    assert_int_equal(t[0].offset, 0);
    assert_int_equal(t[1].offset, 100);
    assert_int_equal(t[2].offset, 0);
    glc__memplan_finish(&p);

    /* A long chain of equal tensors needs two slots whatever its length. */
    glc__mem_tensor c[50];
    for (int i = 0; i < 50; i++)
        c[i] = (glc__mem_tensor)SHARED(1000, i, i + 1);
    p = plan_ok(c, 50, 16, 1 << 20);
    assert_int_equal(p.total, 2 * 1008);
    assert_int_equal(p.lower_bound, 2 * 1008);
    glc__memplan_finish(&p);
}

static void test_live_together_do_not_share(void **state)
{
    (void)state;
    glc__mem_tensor t[] = {SHARED(100, 0, 5), SHARED(60, 3, 4)};
    glc__memplan p = plan_ok(t, 2, 4, 1 << 20);
    assert_int_equal(p.total, 160);
    assert_int_equal(p.lower_bound, 160);
    assert_int_equal(t[0].offset, 0);
    assert_int_equal(t[1].offset, 100);
    glc__memplan_finish(&p);

    /* Touching at one step is overlapping (intervals are inclusive). */
    glc__mem_tensor u[] = {SHARED(64, 0, 3), SHARED(64, 3, 6)};
    p = plan_ok(u, 2, 64, 1 << 20);
    assert_int_equal(p.total, 128);
    glc__memplan_finish(&p);
}

static void test_all_fixed_is_sum(void **state)
{
    (void)state;
    /* Intervals of FIXED tensors are ignored, even when they would not
     * overlap; sizes round up to the alignment. */
    glc__mem_tensor t[] = {FIXED(10), FIXED(20), FIXED(30), FIXED(0), FIXED(16)};
    t[1].first = 5, t[1].last = 6;
    glc__memplan p = plan_ok(t, 5, 16, 1 << 20);
    assert_int_equal(p.nbuffers, 1);
    assert_int_equal(p.total, 16 + 32 + 32 + 16);
    assert_int_equal(p.lower_bound, p.total);
    /* Largest first: 30 (idx 2) at 0, then 20 at 32, then 16 (idx 4), 10. */
    assert_int_equal(t[2].offset, 0);
    assert_int_equal(t[1].offset, 32);
    assert_int_equal(t[4].offset, 64);
    assert_int_equal(t[0].offset, 80);
    assert_int_equal(t[3].buffer, 0);
    assert_int_equal(t[3].offset, 0);
    glc__memplan_finish(&p);
}

static void test_fixed_below_shared(void **state)
{
    (void)state;
    /* Shared tensors never go below the FIXED prefix, and never reuse it. */
    glc__mem_tensor t[] = {SHARED(64, 0, 0), FIXED(32), SHARED(64, 1, 1)};
    glc__memplan p = plan_ok(t, 3, 32, 1 << 20);
    assert_int_equal(t[1].offset, 0);
    assert_int_equal(t[0].offset, 32);
    assert_int_equal(t[2].offset, 32);
    assert_int_equal(p.total, 96);
    assert_int_equal(p.lower_bound, 96);
    glc__memplan_finish(&p);
}

static void test_best_fit(void **state)
{
    (void)state;
    /* Placed largest first: A [0,100) B [100,200) C [200,260) D [260,316).
     * From step 5 only B and D are live, leaving gaps of 100 bytes (A's)
     * and 60 (C's): E (48) takes the smaller one. */
    glc__mem_tensor t[] = {
        SHARED(100, 0, 4), /* A */
        SHARED(100, 0, 9), /* B */
        SHARED(60, 0, 4),  /* C */
        SHARED(56, 0, 9),  /* D */
        SHARED(48, 5, 9),  /* E */
    };
    glc__memplan p = plan_ok(t, 5, 4, 1 << 20);
    assert_int_equal(t[2].offset, 200);
    assert_int_equal(t[3].offset, 260);
    assert_int_equal(t[4].offset, 200);
    assert_int_equal(p.total, 316);
    assert_int_equal(p.lower_bound, 316);
    glc__memplan_finish(&p);
}

static void test_zero_sizes(void **state)
{
    (void)state;
    glc__mem_tensor t[] = {SHARED(0, 0, 1), FIXED(0)};
    glc__memplan p = plan_ok(t, 2, 4, 1 << 20);
    assert_int_equal(p.nbuffers, 0);
    assert_null(p.buffer_size);
    assert_int_equal(p.total, 0);
    assert_int_equal(p.lower_bound, 0);
    assert_int_equal(t[0].buffer, 0);
    assert_int_equal(t[0].offset, 0);
    glc__memplan_finish(&p);
    glc__memplan_finish(&p); /* twice, and NULL */
    glc__memplan_finish(NULL);

    p = plan_ok(NULL, 0, 4, 1 << 20);
    assert_int_equal(p.nbuffers, 0);
    glc__memplan_finish(&p);
}

static void test_splits(void **state)
{
    (void)state;
    /* Three FIXED of 60 in buffers of 100: one each; 40 fits beside one. */
    glc__mem_tensor t[] = {FIXED(60), FIXED(60), FIXED(60), FIXED(40)};
    glc__memplan p = plan_ok(t, 4, 4, 100);
    assert_int_equal(p.nbuffers, 3);
    assert_int_equal(p.total, 100 + 60 + 60);
    assert_int_equal(t[3].buffer, 0);
    assert_int_equal(t[3].offset, 60);
    glc__memplan_finish(&p);

    /* max_buffer not a multiple of the alignment: a 100-byte tensor fits
     * a 100-byte buffer though it pads to 128; the buffer is capped. */
    glc__mem_tensor u[] = {SHARED(100, 0, 1), SHARED(100, 1, 2), SHARED(100, 2, 3)};
    p = plan_ok(u, 3, 64, 100);
    assert_int_equal(p.nbuffers, 2);
    assert_int_equal(p.buffer_size[0], 100);
    assert_int_equal(p.buffer_size[1], 100);
    assert_int_equal(u[0].buffer, 0);
    assert_int_equal(u[1].buffer, 1);
    assert_int_equal(u[2].buffer, 0);
    assert_int_equal(p.lower_bound, 256);
    glc__memplan_finish(&p);

    /* Shared tensors that do not fit beside the others open buffers, and
     * reuse them when they die: the second 700 opens buffer 1, the third
     * takes the first's bytes, the 300 live throughout goes on top of
     * buffer 0, and the last 300 finds buffer 1 free from step 2. */
    glc__mem_tensor v[] = {SHARED(700, 0, 1), SHARED(700, 0, 1), SHARED(700, 2, 3),
                           SHARED(300, 2, 3), SHARED(300, 0, 3)};
    p = plan_ok(v, 5, 4, 1000);
    assert_int_equal(p.nbuffers, 2);
    assert_int_equal(p.total, 1700);
    assert_int_equal(p.lower_bound, 1700);
    assert_int_equal(v[2].buffer, 0);
    assert_int_equal(v[2].offset, 0);
    assert_int_equal(v[4].buffer, 0);
    assert_int_equal(v[4].offset, 700);
    assert_int_equal(v[3].buffer, 1);
    assert_int_equal(v[3].offset, 0);
    glc__memplan_finish(&p);
}

static void test_deterministic(void **state)
{
    (void)state;
    uint64_t r = g_seed ^ 0xDE7ull;
    rcase c = {300, 16, 1 << 16, 30, 0};
    glc__mem_tensor t[300], u[300];
    glc__memplan p, q;
    random_tensors(&r, &c, t);
    for (int i = 0; i < 300; i++) /* many exact ties */
        t[i].size = t[i].size ? 64 * (1 + t[i].size % 3) : 0;
    memcpy(u, t, sizeof t);
    assert_int_equal(glc__memplan_make(t, 300, 16, 1 << 16, &p, NULL, 0), GLC_OK);
    assert_int_equal(glc__memplan_make(u, 300, 16, 1 << 16, &q, NULL, 0), GLC_OK);
    assert_memory_equal(t, u, sizeof t);
    assert_int_equal(p.total, q.total);
    glc__memplan_finish(&p);
    glc__memplan_finish(&q);
}

/* ---- Errors --------------------------------------------------------------- */

static void expect_error(glc__mem_tensor *t, size_t n, size_t align, size_t maxb,
                         glc__memplan *out, const char *msg)
{
    char err[256] = "";
    glc__mem_tensor before[8];
    glc__memplan sentinel;
    memset(&sentinel, 0xAB, sizeof sentinel);
    if (out)
        *out = sentinel;
    if (t)
        memcpy(before, t, n * sizeof *t);
    assert_int_equal(glc__memplan_make(t, n, align, maxb, out, err, sizeof err),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(err, msg);
    if (t)
        assert_memory_equal(before, t, n * sizeof *t); /* untouched */
    if (out)
        assert_memory_equal(out, &sentinel, sizeof sentinel);
    /* A NULL or empty message buffer is fine. */
    assert_int_equal(glc__memplan_make(t, n, align, maxb, out, NULL, 0), GLC_ERR_INVALID_ARG);
    char small[8];
    assert_int_equal(glc__memplan_make(t, n, align, maxb, out, small, sizeof small),
                     GLC_ERR_INVALID_ARG);
    assert_int_equal(strlen(small), sizeof small - 1);
}

static void test_errors(void **state)
{
    (void)state;
    glc__memplan p;
    glc__mem_tensor t[] = {SHARED(64, 0, 1), SHARED(300, 1, 2), FIXED(8)};
    expect_error(t, 3, 16, 256, &p,
                 "memory plan: tensor 1 is 300 bytes, over the 256-byte buffer limit (max_buffer)");
    t[1].size = 32;
    t[2].size = 257;
    expect_error(t, 3, 16, 256, &p,
                 "memory plan: tensor 2 is 257 bytes, over the 256-byte buffer limit (max_buffer)");
    t[2].size = 8;
    expect_error(t, 3, 0, 256, &p, "memory plan: alignment 0 is not a power of two >= 4");
    expect_error(t, 3, 2, 256, &p, "memory plan: alignment 2 is not a power of two >= 4");
    expect_error(t, 3, 24, 256, &p, "memory plan: alignment 24 is not a power of two >= 4");
    expect_error(t, 3, 16, 0, &p, "memory plan: max_buffer 0 is not in [1, SIZE_MAX / 4]");
    expect_error(NULL, 2, 16, 256, &p, "memory plan: the tensor array is NULL with n = 2");
    expect_error(t, 3, 16, 256, NULL, "memory plan: the plan (out) is NULL");
    t[0].first = 3;
    expect_error(t, 3, 16, 256, &p,
                 "memory plan: tensor 0 has its first step 3 after its last step 1");
    t[0].first = 0;
    t[2].kind = (glc__mem_kind)7;
    expect_error(t, 3, 16, 256, &p, "memory plan: tensor 2 has kind 7, neither SHARED nor FIXED");
    t[2].kind = GLC__MEM_FIXED;
    glc__mem_tensor huge[5];
    for (int i = 0; i < 5; i++)
        huge[i] = (glc__mem_tensor)FIXED(SIZE_MAX / 4);
    expect_error(huge, 5, 16, SIZE_MAX / 4, &p,
                 "memory plan: the tensors' sizes add up past SIZE_MAX");
    char msg[128];
    snprintf(msg, sizeof msg, "memory plan: max_buffer %zu is not in [1, SIZE_MAX / 4]",
             SIZE_MAX / 4 + 1);
    expect_error(t, 3, 16, SIZE_MAX / 4 + 1, &p, msg);
    p = plan_ok(t, 3, 16, 256); /* and now it plans */
    glc__memplan_finish(&p);
}

/* ---- Out of memory ------------------------------------------------------- */

static void test_oom(void **state)
{
    (void)state;
    glc__mem_tensor t[] = {SHARED(64, 0, 1), SHARED(300, 1, 2), FIXED(8), SHARED(0, 0, 0)};
    glc__mem_tensor before[4];
    for (int i = 0; i < 4; i++)
        t[i].buffer = 99, t[i].offset = 77;
    memcpy(before, t, sizeof t);
    int ok = 0;
    for (long k = 1; k < 100 && !ok; k++) {
        glc__memplan p, sentinel;
        char err[128] = "";
        memset(&sentinel, 0xCD, sizeof sentinel);
        p = sentinel;
        glc__alloc_fail_after(k);
        glc_status st = glc__memplan_make(t, 4, 16, 1 << 20, &p, err, sizeof err);
        long failures = glc__alloc_failures();
        glc__alloc_fail_after(0);
        if (k <= 2) /* the scratch block, then the buffer sizes */
            assert_int_equal(st, GLC_ERR_OUT_OF_MEMORY);
        if (st == GLC_OK) {
            ok = 1;
            assert_int_equal(failures, 0);
            assert_int_equal(k, 3);
            char why[256];
            assert_true(check_plan(t, 4, 16, 1 << 20, &p, 1, why, sizeof why));
            glc__memplan_finish(&p);
        } else {
            assert_int_equal(st, GLC_ERR_OUT_OF_MEMORY);
            tu_assert_contains(err, "memory plan: out of memory");
            assert_memory_equal(t, before, sizeof t);
            assert_memory_equal(&p, &sentinel, sizeof p);
        }
    }
    assert_true(ok);
}

/* ---- Against the liveness bound and the optimum ---------------------------- */

/* The issue's chain, as the compiler gives it (align 16): x [1,1] in,
 * c = copy(x), s = c - c, m = s W [1,20], a = B + m, t = c * a,
 * q = t W2^T + B2 [1,22], y = gelu(q) out. Greedy by size alone needs
 * 368 bytes; a layout at the bound (288) exists and must be found. */
static void test_issue_chain_at_bound(void **state)
{
    (void)state;
    glc__mem_tensor t[] = {
        FIXED(4),          /* x */
        FIXED(88),         /* y */
        SHARED(4, 0, 4),   /* c: read by s and t */
        SHARED(4, 1, 2),   /* s */
        SHARED(80, 2, 3),  /* m */
        SHARED(80, 3, 4),  /* a */
        SHARED(80, 4, 5),  /* t */
        SHARED(88, 5, 6),  /* q */
    };
    glc__memplan p = plan_ok(t, 8, 16, 1 << 20);
    assert_int_equal(p.lower_bound, 288);
    assert_int_equal(p.total, 288);
    glc__memplan_finish(&p);
}

/* test_fuse_random's seed 138, graph 18 (x and c f16 inputs, ids, one
 * output; the intermediates of a SwiGLU block, then rows_first's get_rows
 * and norm, lifetimes in levels; align 16). Every greedy order and the
 * local search gave 944 bytes (7.3% over); the optimum is the bound, 880:
 * the 288-byte value high in its gap, so the 240-byte one read after it
 * fits below. The random orders after the local search find it. */
static void test_fuse_random_138_at_bound(void **state)
{
    (void)state;
    glc__mem_tensor t[] = {
        FIXED(160), FIXED(96), FIXED(20), FIXED(12),
        SHARED(192, 0, 1), SHARED(192, 1, 2), SHARED(192, 1, 2), SHARED(192, 2, 3),
        SHARED(288, 3, 4), SHARED(240, 4, 5), SHARED(240, 5, 6), SHARED(160, 6, 7),
    };
    glc__memplan p = plan_ok(t, 12, 16, 1 << 20);
    assert_int_equal(p.lower_bound, 880);
    assert_int_equal(p.total, 880);
    glc__memplan_finish(&p);
}

/* Lifetimes of a random DAG in execution order: op i writes tensor i
 * (sizes mostly small, a quarter up to 128x larger) and reads 1-3 earlier
 * outputs, mostly recent ones, sometimes any; the first tensor is an input
 * (FIXED) half of the time, the last an output (FIXED). */
static size_t random_dag(uint64_t *r, glc__mem_tensor *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t sz = (size_t)tu_range(r, 1, 64) * 16;
        if (tu_range(r, 0, 3) == 0)
            sz = (size_t)tu_range(r, 1, 8) * 16 * tu_range(r, 1, 16);
        if (tu_range(r, 0, 9) == 0)
            sz = tu_range(r, 1, 100); /* unaligned */
        t[i] = (glc__mem_tensor)SHARED(sz, (int32_t)i, (int32_t)i);
    }
    for (size_t i = 1; i < n; i++) {
        uint32_t nin = tu_range(r, 1, 3);
        for (uint32_t k = 0; k < nin; k++) {
            size_t back = i - 1 < 3 ? i - 1 : 3;
            size_t j = tu_range(r, 0, 3) == 0 ? tu_range(r, 0, (uint32_t)(i - 1))
                                              : i - 1 - tu_range(r, 0, (uint32_t)back);
            if (t[j].last < (int32_t)i)
                t[j].last = (int32_t)i;
        }
    }
    if (tu_range(r, 0, 1))
        t[0].kind = GLC__MEM_FIXED;
    t[n - 1].kind = GLC__MEM_FIXED;
    return n;
}

/* Seeded random graphs: every plan valid, none above 1.20x the liveness
 * bound, the mean under 1.04x (greedy by size alone: 1.34x and 1.07x). */
static void test_random_graphs_vs_bound(void **state)
{
    (void)state;
    uint64_t r = g_seed ^ 0xDA6ull;
    double worst = 1, sum = 0;
    int cases = 400, at_bound = 0;
    glc__mem_tensor *t = malloc(300 * sizeof *t);
    assert_non_null(t);
    for (int k = 0; k < cases; k++) {
        size_t n = random_dag(&r, t, tu_range(&r, 4, 200));
        char why[256];
        glc__memplan p = plan_ok(t, n, 16, (size_t)1 << 30);
        double ratio = (double)p.total / (double)p.lower_bound;
        if (!check_plan(t, n, 16, (size_t)1 << 30, &p, 1, why, sizeof why))
            fail_msg("seed %llu graph %d: %s", (unsigned long long)g_seed, k, why);
        if (ratio > 1.20)
            fail_msg("seed %llu graph %d (%zu tensors): arena %zu, bound %zu: %.3fx",
                     (unsigned long long)g_seed, k, n, p.total, p.lower_bound, ratio);
        worst = ratio > worst ? ratio : worst;
        sum += ratio;
        at_bound += p.total == p.lower_bound;
        glc__memplan_finish(&p);
    }
    printf("random graphs: %d at the bound of %d, mean %.4fx, worst %.4fx\n", at_bound, cases,
           sum / cases, worst);
    assert_true(sum / cases < 1.04);
    free(t);
}

/* The optimum of a small case: every order placed first fit (lowest
 * offset). That is exact: from an optimal layout, placing its tensors by
 * increasing offset, each at the lowest offset free of those placed,
 * moves none up (each one's old place stays free), so it is no larger. */
static size_t brute_best;
static void brute(const glc__mem_tensor *t, size_t n, size_t *off, unsigned char *used,
                  size_t *perm, size_t k, size_t top)
{
    if (top >= brute_best)
        return;
    if (k == n) {
        brute_best = top;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t o = 0;
        int moved = 1;
        if (used[i])
            continue;
        while (moved) {
            moved = 0;
            for (size_t j = 0; j < k; j++) {
                const glc__mem_tensor *q = &t[perm[j]];
                if (live_together(&t[i], q) && o < off[perm[j]] + q->size &&
                    off[perm[j]] < o + t[i].size) {
                    o = off[perm[j]] + q->size;
                    moved = 1;
                }
            }
        }
        used[i] = 1;
        perm[k] = i;
        off[i] = o;
        brute(t, n, off, used, perm, k + 1, o + t[i].size > top ? o + t[i].size : top);
        used[i] = 0;
    }
}

/* Small random cases (2-7 SHARED tensors, sizes multiples of the
 * alignment) against the optimum: the planner is a heuristic, so it may
 * miss it, rarely and by little. Over 100 seeds (GLC_TEST_SEED 0..99,
 * 200000 cases) it missed 6 (0.003%), by at most 7.7% (an arena of 224
 * bytes for an optimum of 208); here at most 4 of a seed's 2000, by at
 * most 10%, and the default seed's all at the optimum. */
static void test_small_vs_brute_force(void **state)
{
    (void)state;
    uint64_t r = g_seed ^ 0xB7ull;
    int missed = 0;
    for (int k = 0; k < 2000; k++) {
        glc__mem_tensor t[7];
        size_t n = tu_range(&r, 2, 7), off[7], perm[7];
        unsigned char used[7] = {0};
        for (size_t i = 0; i < n; i++) {
            int32_t f = (int32_t)tu_range(&r, 0, 6);
            t[i] = (glc__mem_tensor)SHARED((size_t)tu_range(&r, 1, 8) * 16, f,
                                           f + (int32_t)tu_range(&r, 0, 4));
        }
        brute_best = SIZE_MAX;
        brute(t, n, off, used, perm, 0, 0);
        glc__memplan p = plan_ok(t, n, 16, (size_t)1 << 30);
        if (p.total < brute_best || (double)p.total > 1.1 * (double)brute_best ||
            (p.total != brute_best && (g_seed == DEFAULT_SEED || ++missed > 4)))
            fail_msg("seed %llu case %d (%zu tensors): arena %zu, optimum %zu (%d missed before)",
                     (unsigned long long)g_seed, k, n, p.total, brute_best, missed);
        glc__memplan_finish(&p);
    }
}

/* ---- Transformer-like graphs ---------------------------------------------- */

/* A pre-norm transformer, one step per op, fp32. Per layer, from the
 * residual x: ln1 = norm(x); q, k, v = ln1 W; s = q k^T (per head);
 * p = softmax(s); a = p v; o = a Wo; x1 = x + o; ln2 = norm(x1);
 * h = ln2 W1 (4D); g = gelu(h); f = g W2; x2 = x1 + f. The first x is a
 * FIXED input and the last op (a final norm) writes a FIXED output; with
 * `weights`, every layer's weights and norm scales are FIXED too. Returns
 * the tensor count. */
static size_t transformer(glc__mem_tensor *t, int layers, size_t d, size_t seq, int weights)
{
    size_t n = 0, act = seq * d * 4, heads = d / 64 ? d / 64 : 1;
    size_t scores = heads * seq * seq * 4;
    int32_t s = 0;
    size_t x = n;
    t[n++] = (glc__mem_tensor)FIXED(act);
    for (int l = 0; l < layers; l++) {
        glc__mem_tensor lay[] = {
            SHARED(act, s + 0, s + 3),        /* ln1: read by q, k, v */
            SHARED(act, s + 1, s + 4),        /* q */
            SHARED(act, s + 2, s + 4),        /* k */
            SHARED(act, s + 3, s + 6),        /* v */
            SHARED(scores, s + 4, s + 5),     /* s */
            SHARED(scores, s + 5, s + 6),     /* p */
            SHARED(act, s + 6, s + 7),        /* a */
            SHARED(act, s + 7, s + 8),        /* o */
            SHARED(act, s + 8, s + 13),       /* x1: read by ln2 and the second add */
            SHARED(act, s + 9, s + 10),       /* ln2 */
            SHARED(4 * act, s + 10, s + 11),  /* h */
            SHARED(4 * act, s + 11, s + 12),  /* g */
            SHARED(act, s + 12, s + 13),      /* f */
            SHARED(act, s + 13, s + 14),      /* x2: the next layer's x */
        };
        memcpy(&t[n], lay, sizeof lay);
        if (t[x].kind == GLC__MEM_SHARED)
            t[x].last = s + 8; /* read by ln1 and the first add */
        x = n + 13; /* x2 */
        n += 14;
        if (weights) {
            static const size_t w[] = {1, 1, 1, 1, 4, 4};
            for (int i = 0; i < 6; i++)
                t[n++] = (glc__mem_tensor)FIXED(w[i] * d * d * 4);
            t[n++] = (glc__mem_tensor)FIXED(d * 4);
            t[n++] = (glc__mem_tensor)FIXED(d * 4);
        }
        s += 14;
    }
    t[x].last = s; /* read by the final norm */
    t[n++] = (glc__mem_tensor)FIXED(act);
    return n;
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_transformer_ratio(void **state)
{
    (void)state;
    static const int layers[] = {4, 16};
    static const size_t dm[] = {256, 2048}, seq[] = {1, 128};
    static glc__mem_tensor t[16 * 22 + 4];
    for (int w = 0; w < 2; w++)
        for (int li = 0; li < 2; li++)
            for (int di = 0; di < 2; di++)
                for (int si = 0; si < 2; si++) {
                    size_t n = transformer(t, layers[li], dm[di], seq[si], w);
                    glc__memplan p = plan_ok(t, n, 256, (size_t)1 << 31);
                    double ratio = (double)p.total / (double)p.lower_bound;
                    printf("transformer %2d layers d_model %4zu seq %3zu%s: %4zu tensors, arena "
                           "%11zu B, lower bound %11zu B, ratio %.4f\n",
                           layers[li], dm[di], seq[si], w ? " +weights" : "         ", n,
                           p.total, p.lower_bound, ratio);
                    assert_true(ratio <= 1.05);
                    glc__memplan_finish(&p);
                }
}

static void test_timing_10k(void **state)
{
    (void)state;
    size_t cap = 10000;
    glc__mem_tensor *t = malloc(cap * sizeof *t);
    assert_non_null(t);
    glc__memplan p;

    /* A transformer of 10,000 tensors (714 layers, d_model 256, seq 128). */
    size_t n = transformer(t, (int)((cap - 2) / 14), 256, 128, 0);
    double t0 = seconds();
    assert_int_equal(glc__memplan_make(t, n, 256, (size_t)1 << 31, &p, NULL, 0), GLC_OK);
    double t1 = seconds();
    printf("plan of %zu transformer tensors: %.2f ms, ratio %.4f\n", n, (t1 - t0) * 1e3,
           (double)p.total / (double)p.lower_bound);
    glc__memplan_finish(&p);

    /* 10,000 random tensors over 2,000 steps, 10% FIXED, half living up
     * to 3 steps, half up to 2,000: most pairs overlap. */
    uint64_t r = g_seed ^ 0x10Cull;
    rcase c = {cap, 64, (size_t)1 << 27, 2000, 0};
    random_tensors(&r, &c, t);
    t0 = seconds();
    assert_int_equal(glc__memplan_make(t, cap, 64, (size_t)1 << 27, &p, NULL, 0), GLC_OK);
    t1 = seconds();
    printf("plan of %zu random tensors: %.2f ms\n", cap, (t1 - t0) * 1e3);
    glc__memplan_finish(&p);

    /* The worst case: 10,000 tensors all live together. */
    for (size_t i = 0; i < cap; i++)
        t[i] = (glc__mem_tensor)SHARED(64 + (i * 7919) % 4096, (int32_t)(i % 7), 100);
    t0 = seconds();
    assert_int_equal(glc__memplan_make(t, cap, 64, (size_t)1 << 27, &p, NULL, 0), GLC_OK);
    t1 = seconds();
    printf("plan of %zu tensors all overlapping (worst case): %.2f ms\n", cap, (t1 - t0) * 1e3);
    glc__memplan_finish(&p);
    free(t);
}

int main(void)
{
    const char *seed = getenv("GLC_TEST_SEED");
    if (seed && *seed)
        g_seed = strtoull(seed, NULL, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_vs_reference),
        cmocka_unit_test(test_random_dense),
        cmocka_unit_test(test_checker_catches),
        cmocka_unit_test(test_chain_reuses),
        cmocka_unit_test(test_live_together_do_not_share),
        cmocka_unit_test(test_all_fixed_is_sum),
        cmocka_unit_test(test_fixed_below_shared),
        cmocka_unit_test(test_best_fit),
        cmocka_unit_test(test_zero_sizes),
        cmocka_unit_test(test_splits),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_issue_chain_at_bound),
        cmocka_unit_test(test_fuse_random_138_at_bound),
        cmocka_unit_test(test_random_graphs_vs_bound),
        cmocka_unit_test(test_small_vs_brute_force),
        cmocka_unit_test(test_transformer_ratio),
        cmocka_unit_test(test_timing_10k),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
