/*
 * Tests of the hazard tracker (src/core/hazard.c) and its oracle
 * (src/core/hazard_oracle.c): the tracker against the oracle on thousands of
 * random streams, hand-written graphs with exact barrier counts, stream
 * validation (a correct stream passes, one with a barrier removed fails at
 * exactly the right dispatch), out-of-memory at every allocation, and no
 * allocation in the steady state.
 *
 * Random streams use a fixed seed; GLC_TEST_SEED=<n> overrides it, and every
 * failure prints the seed, stream and dispatch that failed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hazard.h"

/* ---- Helpers ------------------------------------------------------------- */

#define R(b, lo, hi) {(b), (lo), (hi), GLC_READ}
#define W(b, lo, hi) {(b), (lo), (hi), GLC_WRITE}
#define RW(b, lo, hi) {(b), (lo), (hi), GLC_READ_WRITE}

typedef struct disp {
    const glc__span *s;
    int n;
} disp;

#define SPANS(...) (const glc__span[]){__VA_ARGS__}
#define NSPANS(...) ((int)(sizeof((glc__span[]){__VA_ARGS__}) / sizeof(glc__span)))
#define DISP(...) {SPANS(__VA_ARGS__), NSPANS(__VA_ARGS__)}

static uint64_t g_seed = 0x9E3779B97F4A7C15ull;

/* splitmix64: small, fast, and good enough for test streams. */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnext(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t below(rng *r, uint64_t n)
{
    return n ? rnext(r) % n : 0;
}

/* White-box: in every set the pieces are sorted, disjoint, non-empty, with
 * same-id neighbours merged, and tail lanes [0, nt) hold non-empty ranges;
 * idle records are empty; every record is reachable through its slot,
 * whose flags say which of its sets are non-empty; entries add up. */
static int tracker_ok(const glc__hazard *h)
{
    size_t total = 0;
    if (h->nbufs > h->pool || h->pool > h->bufcap)
        return 0;
    for (size_t r = 0; r < h->pool; r++) {
        const glc__hazard_buf *b = &h->bufs[r];
        for (int s = 0; s < 2; s++) {
            const glc__hazard_set *set = &b->set[s];
            if (set->nt > GLC__HAZ_TAIL || set->n > set->cap)
                return 0;
            for (unsigned k = 0; k < set->nt; k++)
                if (set->tb[k] >= set->te[k])
                    return 0;
            if (r >= h->nbufs) {
                if (set->n != 0 || set->nt != 0)
                    return 0;
                continue;
            }
            for (size_t i = 0; i < set->n; i++) {
                if (set->v[i].begin >= set->v[i].end)
                    return 0;
                if (i > 0 && (set->v[i - 1].end > set->v[i].begin ||
                              (set->v[i - 1].end == set->v[i].begin &&
                               set->v[i - 1].id == set->v[i].id)))
                    return 0;
            }
            total += set->n + set->nt;
        }
        if (r < h->nbufs) {
            uint32_t rec = h->slots[b->slot].rec;
            if ((rec & 0x3FFFFFFFu) != r + 1 || h->slots[b->slot].key != b->buffer)
                return 0;
            for (int s = 0; s < 2; s++)
                if (!(rec & (0x40000000u << s)) !=
                    !(b->set[s].nt || b->set[s].n))
                    return 0;
        }
    }
    return total == h->entries;
}

static int same_conflict(const glc__conflict *a, const glc__conflict *b)
{
    return a->kinds == b->kinds && a->earlier == b->earlier &&
           a->buffer == b->buffer && a->begin == b->begin && a->end == b->end;
}

typedef struct logent {
    uint32_t id;
    glc__span s;
} logent;

/* 1 when *c describes a real conflict: one new span covers [begin, end) of
 * c->buffer, and earlier spans of dispatch c->earlier with an access that
 * conflicts with it cover the same bytes. */
static int genuine(const logent *log, size_t nlog, const glc__span *sp, int n,
                   const glc__conflict *c)
{
    if (c->begin >= c->end)
        return 0;
    for (uint32_t x = GLC_READ; x <= GLC_WRITE; x++) {
        int new_ok = 0;
        for (int k = 0; k < n; k++) {
            const glc__span *s = &sp[k];
            if (s->buffer == c->buffer && s->begin <= c->begin &&
                c->end <= s->end &&
                (x == GLC_WRITE ? (s->access & 3) : (s->access & GLC_WRITE)))
                new_ok = 1;
        }
        if (!new_ok)
            continue;
        uint64_t cur = c->begin;
        for (;;) {
            int moved = 0;
            for (size_t i = 0; i < nlog; i++) {
                const logent *e = &log[i];
                if (e->id == c->earlier && e->s.buffer == c->buffer &&
                    (e->s.access & x) && e->s.begin <= cur && cur < e->s.end) {
                    cur = e->s.end;
                    moved = 1;
                }
            }
            if (cur >= c->end)
                return 1;
            if (!moved)
                break;
        }
    }
    return 0;
}

/* Runs dispatches d[0..n) (ids first_id, first_id+1, ...) through the tracker
 * and the oracle with the policy "if check != 0: barrier, then add"; both
 * must agree at every dispatch. Returns the number of barriers. */
static int run_policy(glc__hazard *h, glc__oracle *o, const disp *d, int n,
                      uint32_t first_id)
{
    int barriers = 0;
    for (int i = 0; i < n; i++) {
        unsigned kt = glc__hazard_check(h, d[i].s, d[i].n, NULL);
        unsigned ko = glc__oracle_check(o, d[i].s, d[i].n, NULL);
        assert_int_equal(kt, ko);
        if (kt) {
            glc__hazard_clear(h);
            glc__oracle_clear(o);
            barriers++;
        }
        assert_int_equal(glc__hazard_add(h, d[i].s, d[i].n, first_id + (uint32_t)i), GLC_OK);
        assert_int_equal(glc__oracle_add(o, d[i].s, d[i].n, first_id + (uint32_t)i), GLC_OK);
    }
    assert_true(tracker_ok(h));
    return barriers;
}

static int barriers_of(const disp *d, int n)
{
    glc__hazard h;
    glc__oracle o;
    glc__hazard_init(&h);
    glc__oracle_init(&o);
    int b = run_policy(&h, &o, d, n, 1);
    glc__hazard_finish(&h);
    glc__oracle_finish(&o);
    return b;
}

/* Tracker state after adding d[0..n) with no barriers; then one check. */
static unsigned check_after(const disp *d, int n, const glc__span *s, int ns,
                            glc__conflict *why, glc__conflict *owhy)
{
    glc__hazard h;
    glc__oracle o;
    glc__hazard_init(&h);
    glc__oracle_init(&o);
    for (int i = 0; i < n; i++) {
        assert_int_equal(glc__hazard_add(&h, d[i].s, d[i].n, 100 + (uint32_t)i), GLC_OK);
        assert_int_equal(glc__oracle_add(&o, d[i].s, d[i].n, 100 + (uint32_t)i), GLC_OK);
    }
    unsigned k = glc__hazard_check(&h, s, ns, why);
    assert_int_equal(glc__oracle_check(&o, s, ns, owhy), k);
    glc__hazard_finish(&h);
    glc__oracle_finish(&o);
    return k;
}

/* ---- Random streams against the oracle ----------------------------------- */

enum { HIST = 64, MAX_SPANS = 16, MAX_LOG = 4096 };

typedef struct gen {
    rng r;
    uint32_t pool[8];
    int npool;
    uint64_t npos, gran; /* positions are multiples of gran below npos*gran */
    int p_read, p_write; /* percent; the rest is read-write */
    int max_spans;
    uint32_t id_mod;     /* 0: unique ids; else ids repeat modulo this */
    int sparse;          /* short spans over a wide range: long epochs */
    glc__span hist[HIST];
    int nhist;
} gen;

static const uint32_t id_choices[] = {0, 1, 2, 3, 4, 5, 6, 7, 42, 511, 512,
                                      0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu,
                                      0xFFFFFFFEu, 16, 32, 48};

static void gen_init(gen *g, uint64_t seed)
{
    g->r.s = seed;
    g->sparse = below(&g->r, 10) < 3;
    g->npool = 1 + (int)below(&g->r, g->sparse ? 8 : 6);
    for (int i = 0; i < g->npool; i++)
        g->pool[i] = id_choices[below(&g->r, sizeof id_choices / sizeof id_choices[0])];
    g->npos = g->sparse ? 64 + below(&g->r, 2000) : 2 + below(&g->r, 40);
    static const uint64_t grans[] = {1, 4, 16, 256};
    g->gran = grans[below(&g->r, 4)];
    g->p_read = 20 + (int)below(&g->r, 60);
    g->p_write = (int)below(&g->r, (uint64_t)(100 - g->p_read));
    g->max_spans = below(&g->r, 2) ? 4 : MAX_SPANS;
    g->id_mod = below(&g->r, 10) == 0 ? 3 : 0;
    g->nhist = 0;
}

static glc__span gen_span(gen *g)
{
    glc__span s;
    rng *r = &g->r;
    uint64_t mode = below(r, 100);
    s.buffer = g->pool[below(r, (uint64_t)g->npool)];
    if (mode < 15 && g->nhist > 0) { /* identical range, maybe other access */
        s = g->hist[below(r, (uint64_t)g->nhist)];
    } else if (mode < 25 && g->nhist > 0) { /* nested in an earlier range */
        s = g->hist[below(r, (uint64_t)g->nhist)];
        uint64_t len = s.end - s.begin;
        uint64_t a = below(r, len + 1), b = below(r, len + 1);
        if (a > b) {
            uint64_t t = a;
            a = b;
            b = t;
        }
        s.end = s.begin + b;
        s.begin += a;
    } else if (mode < 28) { /* near the top of the 64-bit range */
        s.begin = UINT64_MAX - below(r, 64);
        s.end = s.begin + below(r, UINT64_MAX - s.begin + 1);
    } else {
        uint64_t a = below(r, g->npos) * g->gran, b = below(r, g->npos) * g->gran;
        if (g->sparse)
            b = a + below(r, 8) * g->gran;
        if (a > b) {
            uint64_t t = a;
            a = b;
            b = t;
        }
        if (mode < 35)
            b = a; /* empty */
        s.begin = a;
        s.end = b;
    }
    uint64_t acc = below(r, 100);
    s.access = acc < (uint64_t)g->p_read ? GLC_READ
             : acc < (uint64_t)(g->p_read + g->p_write) ? GLC_WRITE : GLC_READ_WRITE;
    g->hist[g->nhist < HIST ? g->nhist++ : (int)below(r, HIST)] = s;
    return s;
}

static int gen_dispatch(gen *g, glc__span *out)
{
    int n = 1 + (int)below(&g->r, (uint64_t)g->max_spans);
    for (int k = 0; k < n; k++)
        out[k] = gen_span(g);
    return n;
}

#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            print_error("seed %llu stream %d dispatch %d: %s\n",              \
                        (unsigned long long)g_seed, stream, d, #cond);        \
            fail();                                                           \
        }                                                                     \
    } while (0)

static void test_random_vs_oracle(void **state)
{
    (void)state;
    static logent log[MAX_LOG];
    long total_dispatches = 0, total_barriers = 0;
    glc__hazard h;
    glc__oracle o;
    glc__hazard_init(&h);
    glc__oracle_init(&o);

    for (int stream = 0; stream < 4000; stream++) {
        gen g;
        size_t nlog = 0;
        gen_init(&g, g_seed + (uint64_t)stream * 7919);
        int ndisp = 1 + (int)below(&g.r, g.sparse ? 200 : 60);
        /* Half the streams reuse the previous stream's tracker after a
         * clear, so pooled records meet new buffers. */
        if (stream % 2) {
            glc__hazard_finish(&h);
            glc__hazard_init(&h);
        }
        glc__hazard_clear(&h);
        glc__oracle_clear(&o);
        for (int d = 0; d < ndisp; d++) {
            glc__span sp[MAX_SPANS];
            int n = gen_dispatch(&g, sp);
            uint32_t id = g.id_mod ? (uint32_t)d % g.id_mod : (uint32_t)d;
            glc__conflict wt, wo, sentinel;
            sentinel = (glc__conflict){0xA5A5u, 0xA5A5u, 0xA5A5u, 0xA5A5u, 0xA5A5u};
            wt = sentinel;
            wo = sentinel;
            unsigned kt = glc__hazard_check(&h, sp, n, &wt);
            unsigned ko = glc__oracle_check(&o, sp, n, &wo);
            EXPECT(kt == ko);
            EXPECT(glc__hazard_check(&h, sp, n, NULL) == kt);
            if (kt) {
                EXPECT(wt.kinds == kt && wo.kinds == ko);
                EXPECT(genuine(log, nlog, sp, n, &wt));
                EXPECT(genuine(log, nlog, sp, n, &wo));
                glc__hazard_clear(&h);
                glc__oracle_clear(&o);
                EXPECT(glc__hazard_entries(&h) == 0);
                nlog = 0;
                total_barriers++;
            } else {
                EXPECT(same_conflict(&wt, &sentinel));
                EXPECT(same_conflict(&wo, &sentinel));
            }
            EXPECT(glc__hazard_add(&h, sp, n, id) == GLC_OK);
            EXPECT(glc__oracle_add(&o, sp, n, id) == GLC_OK);
            for (int k = 0; k < n && nlog < MAX_LOG; k++)
                log[nlog++] = (logent){id, sp[k]};
            EXPECT(tracker_ok(&h));
            /* The dispatch never conflicts with itself alone. */
            if (o.ndisp == 1)
                EXPECT(glc__hazard_check(&h, sp, n, NULL) ==
                       glc__oracle_check(&o, sp, n, NULL));
            total_dispatches++;
        }
    }
    glc__hazard_finish(&h);
    glc__oracle_finish(&o);
    /* The streams must exercise both outcomes, or the test proves little. */
    assert_true(total_barriers > total_dispatches / 10);
    assert_true(total_dispatches - total_barriers > total_dispatches / 10);
}

/* ---- Hand-written graphs ------------------------------------------------- */

enum { X = 1, Y = 2, Z = 3, WB = 4, WT0 = 10, ARENA = 20 };

static void test_independent_branches(void **state)
{
    (void)state;
    /* 300 branches reading shared weights and input, each writing its own
     * slice of one output buffer and its own scratch buffer. */
    enum { N = 300 };
    glc__span sp[N][4];
    disp d[N];
    for (int i = 0; i < N; i++) {
        sp[i][0] = (glc__span)R(WT0, 0, 1 << 20);
        sp[i][1] = (glc__span)R(X, 0, 4096);
        sp[i][2] = (glc__span)W(ARENA, (uint64_t)i * 256, (uint64_t)(i + 1) * 256);
        sp[i][3] = (glc__span)RW(1000 + (uint32_t)i, 0, 64);
        d[i] = (disp){sp[i], 4};
    }
    assert_int_equal(barriers_of(d, N), 0);

    glc__hazard h;
    glc__oracle o;
    glc__hazard_init(&h);
    glc__oracle_init(&o);
    assert_int_equal(run_policy(&h, &o, d, N, 1), 0);
    /* Adjacent slices of different dispatches stay separate ranges (each
     * names its writer); the shared reads keep one range each. */
    assert_int_equal(glc__hazard_entries(&h), 2 + N + 2 * N);
    glc__hazard_clear(&h);
    assert_int_equal(glc__hazard_entries(&h), 0);
    glc__hazard_finish(&h);
    glc__oracle_finish(&o);
}

static void test_chain(void **state)
{
    (void)state;
    const disp d[] = {
        DISP(R(X, 0, 64), W(Y, 0, 64)),   /* A */
        DISP(R(Y, 0, 64), W(Z, 0, 64)),   /* B */
        DISP(R(Z, 0, 64), W(WB, 0, 64)),  /* C */
        DISP(R(WB, 0, 64), W(X, 64, 128)) /* D */
    };
    assert_int_equal(barriers_of(d, 4), 3);
}

static void test_diamond(void **state)
{
    (void)state;
    const disp d[] = {
        DISP(W(X, 0, 64)),                             /* A */
        DISP(R(X, 0, 64), W(Y, 0, 64)),                /* B */
        DISP(R(X, 0, 64), W(Z, 0, 64)),                /* C */
        DISP(R(Y, 0, 64), R(Z, 0, 64), W(WB, 0, 64)),  /* D */
    };
    assert_int_equal(barriers_of(d, 4), 2);
}

static void test_in_place(void **state)
{
    (void)state;
    const disp d[] = {DISP(RW(X, 0, 64)), DISP(RW(X, 0, 64))};
    assert_int_equal(barriers_of(d, 2), 1);
    glc__conflict why;
    assert_int_equal(check_after(d, 1, d[1].s, d[1].n, &why, NULL),
                     GLC__HAZ_RAW | GLC__HAZ_WAR | GLC__HAZ_WAW);
    assert_int_equal(why.earlier, 100);
    assert_int_equal(why.buffer, X);
    assert_int_equal(why.begin, 0);
    assert_int_equal(why.end, 64);
}

static void test_disjoint_slices(void **state)
{
    (void)state;
    const disp d[] = {
        DISP(W(ARENA, 0, 16)),
        DISP(W(ARENA, 32, 48), R(ARENA, 100, 200)),
        DISP(R(ARENA, 64, 80), W(ARENA, 48, 64)),
        DISP(RW(ARENA, 200, 300), R(ARENA, 16, 32)),
    };
    assert_int_equal(barriers_of(d, 4), 0);
}

static void test_touching(void **state)
{
    (void)state;
    const disp d[] = {
        DISP(W(X, 0, 16)),
        DISP(R(X, 16, 32)),  /* touches the write: no RAW */
        DISP(W(X, 32, 48)),  /* touches the read: no WAR */
        DISP(RW(X, 48, 64)), /* touches the write: no WAW */
        DISP(R(X, 64, 80), W(X, 80, 96), W(Y, 0, 16)),
    };
    assert_int_equal(barriers_of(d, 5), 0);
}

static void test_war_alone(void **state)
{
    (void)state;
    const disp d[] = {DISP(R(X, 0, 64), W(Y, 0, 64))};
    const glc__span s[] = {W(X, 32, 96), R(Y, 64, 128)};
    glc__conflict why, owhy;
    assert_int_equal(check_after(d, 1, s, 2, &why, &owhy), GLC__HAZ_WAR);
    assert_int_equal(why.kinds, GLC__HAZ_WAR);
    assert_int_equal(why.earlier, 100);
    assert_int_equal(why.buffer, X);
    assert_int_equal(why.begin, 32);
    assert_int_equal(why.end, 64);
    assert_true(same_conflict(&why, &owhy));
    const disp e[] = {d[0], {s, 2}};
    assert_int_equal(barriers_of(e, 2), 1);
}

static void test_waw_alone(void **state)
{
    (void)state;
    const disp d[] = {DISP(W(X, 16, 64)), DISP(R(Y, 0, 8))};
    const glc__span s[] = {W(X, 0, 32), R(Y, 0, 8)};
    glc__conflict why, owhy;
    assert_int_equal(check_after(d, 2, s, 2, &why, &owhy), GLC__HAZ_WAW);
    assert_int_equal(why.kinds, GLC__HAZ_WAW);
    assert_int_equal(why.earlier, 100);
    assert_int_equal(why.buffer, X);
    assert_int_equal(why.begin, 16);
    assert_int_equal(why.end, 32);
    assert_true(same_conflict(&why, &owhy));
}

static void test_raw_alone(void **state)
{
    (void)state;
    const disp d[] = {DISP(R(X, 0, 64)), DISP(W(Z, 0, 64), R(Y, 0, 256))};
    const glc__span s[] = {R(X, 0, 64), R(Z, 48, 128), W(WB, 0, 64)};
    glc__conflict why, owhy;
    assert_int_equal(check_after(d, 2, s, 3, &why, &owhy), GLC__HAZ_RAW);
    assert_int_equal(why.kinds, GLC__HAZ_RAW);
    assert_int_equal(why.earlier, 101);
    assert_int_equal(why.buffer, Z);
    assert_int_equal(why.begin, 48);
    assert_int_equal(why.end, 64);
    assert_true(same_conflict(&why, &owhy));
}

static void test_never_conflicts(void **state)
{
    (void)state;
    /* Read/read, empty spans, and spans within one dispatch. */
    const disp d[] = {
        DISP(R(X, 0, 64), R(X, 0, 64)),
        DISP(R(X, 0, 64), W(Y, 0, 64), R(Y, 0, 64), RW(Y, 32, 40)),
        DISP(W(X, 10, 10), R(Y, 5, 5), RW(Y, 0, 0), W(X, 64, 64)),
        DISP(W(Z, 0, 8), RW(Z, 0, 8)),
    };
    assert_int_equal(barriers_of(d, 4), 0);
    /* But a later dispatch does conflict with them. */
    const glc__span s[] = {R(Y, 39, 40)};
    glc__conflict why;
    assert_int_equal(check_after(d, 4, s, 1, &why, NULL), GLC__HAZ_RAW);
    assert_int_equal(why.earlier, 101);
}

static void test_why_names_last_writer(void **state)
{
    (void)state;
    /* Writes by A and B touch; the read spans both: the tracker names the
     * last writer of the bytes it reports, with exactly those bytes. */
    const disp d[] = {DISP(W(X, 0, 16)), DISP(W(X, 16, 32)), DISP(W(X, 4, 8))};
    const glc__span s[] = {R(X, 8, 24)};
    glc__conflict why;
    assert_int_equal(check_after(d, 2, s, 1, &why, NULL), GLC__HAZ_RAW);
    assert_int_equal(why.earlier, 101);
    assert_int_equal(why.begin, 16);
    assert_int_equal(why.end, 24);
    /* C overwrote [4, 8) of A's bytes: reading [5, 6) names C. */
    const glc__span s2[] = {R(X, 5, 6)};
    assert_int_equal(check_after(d, 3, s2, 1, &why, NULL), GLC__HAZ_RAW);
    assert_int_equal(why.earlier, 102);
    assert_int_equal(why.begin, 5);
    assert_int_equal(why.end, 6);
    /* The oracle names the oldest conflicting dispatch instead. */
    glc__conflict owhy;
    assert_int_equal(check_after(d, 3, s2, 1, &why, &owhy), GLC__HAZ_RAW);
    assert_int_equal(owhy.earlier, 100);

    /* The same once the ranges left the tail for the sorted pieces: 8 more
     * writes elsewhere push A, B, C out of it. */
    disp e[11];
    glc__span more[8];
    for (int i = 0; i < 3; i++)
        e[i] = d[i];
    for (int i = 0; i < 8; i++) {
        more[i] = (glc__span)W(X, 1000 + (uint64_t)i * 10, 1005 + (uint64_t)i * 10);
        e[3 + i] = (disp){&more[i], 1};
    }
    assert_int_equal(check_after(e, 11, s2, 1, &why, NULL), GLC__HAZ_RAW);
    assert_int_equal(why.earlier, 102);
    assert_int_equal(check_after(e, 11, s, 1, &why, NULL), GLC__HAZ_RAW);
    assert_int_equal(why.earlier, 100); /* the first piece [8, 16) meets */
    assert_int_equal(why.begin, 8);
    assert_int_equal(why.end, 16);
}

static void test_many_buffers(void **state)
{
    (void)state;
    /* Many buffers (hash growth), ids near 2^32, clears and reuse. */
    glc__hazard h;
    glc__oracle o;
    glc__hazard_init(&h);
    glc__oracle_init(&o);
    for (int round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < 700; i++) {
            uint32_t buf = (round == 1) ? 0xFFFFFFFFu - i * 977u : i * (uint32_t)(round + 1);
            const glc__span s[] = {W(buf, 0, 64), R(buf ^ 1u, 64, 128)};
            assert_int_equal(glc__hazard_check(&h, s, 2, NULL),
                             glc__oracle_check(&o, s, 2, NULL));
            assert_int_equal(glc__hazard_add(&h, s, 2, i), GLC_OK);
            assert_int_equal(glc__oracle_add(&o, s, 2, i), GLC_OK);
        }
        assert_true(tracker_ok(&h));
        for (uint32_t i = 0; i < 1400; i++) {
            const glc__span s[] = {RW(i * 7u, 60, 70)};
            assert_int_equal(glc__hazard_check(&h, s, 1, NULL),
                             glc__oracle_check(&o, s, 1, NULL));
        }
        glc__hazard_clear(&h);
        glc__oracle_clear(&o);
        assert_int_equal(glc__hazard_entries(&h), 0);
        assert_int_equal(h.nbufs, 0);
        assert_true(tracker_ok(&h));
    }
    glc__hazard_finish(&h);
    glc__hazard_finish(&h); /* finishing twice is allowed */
    glc__oracle_finish(&o);
}

static void test_invalid_args(void **state)
{
    (void)state;
    glc__hazard h;
    glc__oracle o;
    glc__hazard_init(&h);
    glc__oracle_init(&o);
    const glc__span ok[] = {W(X, 0, 64)};
    assert_int_equal(glc__hazard_add(&h, ok, 1, 1), GLC_OK);
    assert_int_equal(glc__oracle_add(&o, ok, 1, 1), GLC_OK);
    const glc__span backwards[] = {R(Y, 0, 8), W(X, 64, 32)};
    const glc__span noaccess[] = {{Y, 0, 8, 0}};
    const glc__span badaccess[] = {{Y, 0, 8, 4}};
    assert_int_equal(glc__hazard_add(&h, backwards, 2, 2), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc__hazard_add(&h, noaccess, 1, 2), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc__hazard_add(&h, badaccess, 1, 2), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc__hazard_add(&h, ok, -1, 2), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc__hazard_add(&h, NULL, 1, 2), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc__oracle_add(&o, backwards, 2, 2), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc__oracle_add(&o, badaccess, 1, 2), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc__hazard_entries(&h), 1);
    assert_int_equal(o.ndisp, 1);
    /* n == 0 is an empty dispatch; check of nothing finds nothing. */
    assert_int_equal(glc__hazard_add(&h, NULL, 0, 3), GLC_OK);
    assert_int_equal(glc__oracle_add(&o, NULL, 0, 3), GLC_OK);
    assert_int_equal(glc__hazard_check(&h, NULL, 0, NULL), 0);
    assert_int_equal(glc__oracle_check(&o, NULL, 0, NULL), 0);
    /* check ignores what add would reject. */
    assert_int_equal(glc__hazard_check(&h, backwards, 2, NULL), 0);
    assert_int_equal(glc__oracle_check(&o, backwards, 2, NULL), 0);
    assert_int_equal(glc__hazard_check(&h, noaccess, 1, NULL), 0);
    glc__hazard_finish(&h);
    glc__oracle_finish(&o);
}

/* ---- Validation of emitted streams --------------------------------------- */

static void test_validate_diamond(void **state)
{
    (void)state;
    const glc__span a[] = {W(X, 0, 64)};
    const glc__span b[] = {R(X, 0, 64), W(Y, 0, 64)};
    const glc__span c[] = {R(X, 0, 64), W(Z, 0, 64)};
    const glc__span d[] = {R(Y, 0, 64), R(Z, 0, 64), W(WB, 0, 64)};
    const glc__event good[] = {
        {0, 10, a, 1}, {1, 0, NULL, 0}, {0, 11, b, 2}, {0, 12, c, 2},
        {1, 0, NULL, 0}, {0, 13, d, 3},
    };
    size_t bad = 99;
    glc__conflict why = {0, 0, 0, 0, 0};
    assert_int_equal(glc__oracle_validate(good, 6, &bad, &why), GLC_OK);
    assert_int_equal(bad, 99); /* untouched */
    assert_int_equal(glc__oracle_validate(good, 6, NULL, NULL), GLC_OK);
    assert_int_equal(glc__oracle_validate(NULL, 0, NULL, NULL), GLC_OK);

    /* The second barrier removed: D (now index 4) reads B's and C's y, z. */
    const glc__event no2[] = {good[0], good[1], good[2], good[3], good[5]};
    assert_int_equal(glc__oracle_validate(no2, 5, &bad, &why), GLC_ERR_HAZARD);
    assert_int_equal(bad, 4);
    assert_int_equal(why.earlier, 11);
    assert_int_equal(why.kinds, GLC__HAZ_RAW);
    assert_int_equal(why.buffer, Y);
    assert_int_equal(why.begin, 0);
    assert_int_equal(why.end, 64);

    /* The first barrier removed: B (index 1) reads A's x. */
    const glc__event no1[] = {good[0], good[2], good[3], good[4], good[5]};
    assert_int_equal(glc__oracle_validate(no1, 5, &bad, &why), GLC_ERR_HAZARD);
    assert_int_equal(bad, 1);
    assert_int_equal(why.earlier, 10);
    assert_int_equal(why.buffer, X);

    /* A malformed dispatch is named too. */
    const glc__span broken[] = {R(X, 8, 4)};
    const glc__event ev_bad[] = {good[0], good[1], {0, 14, broken, 1}};
    assert_int_equal(glc__oracle_validate(ev_bad, 3, &bad, NULL), GLC_ERR_INVALID_ARG);
    assert_int_equal(bad, 2);
    assert_int_equal(glc__oracle_validate(NULL, 1, NULL, NULL), GLC_ERR_INVALID_ARG);
}

static void test_validate_random(void **state)
{
    (void)state;
    enum { MAXEV = 200 };
    static glc__span spans[MAXEV][MAX_SPANS];
    glc__event ev[MAXEV], cut[MAXEV];
    int removals = 0;

    for (int stream = 0; stream < 300; stream++) {
        int d = -1;
        gen g;
        gen_init(&g, g_seed ^ (0xABCDEF12345ull + (uint64_t)stream));
        glc__hazard h;
        glc__hazard_init(&h);
        size_t nev = 0;
        int ndisp = 1 + (int)below(&g.r, 40);
        /* Emit with the tracker's policy. */
        for (int i = 0; i < ndisp; i++) {
            int n = gen_dispatch(&g, spans[i]);
            d = i;
            if (glc__hazard_check(&h, spans[i], n, NULL)) {
                glc__hazard_clear(&h);
                ev[nev++] = (glc__event){1, 0, NULL, 0};
            }
            EXPECT(glc__hazard_add(&h, spans[i], n, (uint32_t)i) == GLC_OK);
            ev[nev++] = (glc__event){0, (uint32_t)i, spans[i], n};
        }
        glc__hazard_finish(&h);
        d = -1; /* the whole stream */
        EXPECT(glc__oracle_validate(ev, nev, NULL, NULL) == GLC_OK);

        /* Each barrier removed in turn: the dispatch right after it is
         * caught, naming a dispatch of the epoch before the barrier. */
        for (size_t b = 0; b < nev; b++) {
            if (!ev[b].is_barrier)
                continue;
            size_t m = 0, prev_barrier = 0;
            for (size_t i = 0; i < nev; i++)
                if (i != b)
                    cut[m++] = ev[i];
            for (size_t i = 0; i < b; i++)
                if (ev[i].is_barrier)
                    prev_barrier = i;
            size_t bad = 0;
            glc__conflict why;
            d = (int)b;
            EXPECT(glc__oracle_validate(cut, m, &bad, &why) == GLC_ERR_HAZARD);
            EXPECT(bad == b);
            int in_epoch = 0;
            for (size_t i = prev_barrier; i < b; i++)
                if (!ev[i].is_barrier && ev[i].id == why.earlier)
                    in_epoch = 1;
            EXPECT(in_epoch);
            removals++;
        }
    }
    assert_true(removals > 100);
}

/* ---- Out of memory -------------------------------------------------------- */

/* Probe dispatches: every buffer in `bufs` with a few ranges and accesses. */
static void probe_all(const glc__hazard *h, const glc__oracle *o,
                      const uint32_t *bufs, int nbufs, unsigned *out)
{
    static const uint64_t rng_[][2] = {{0, 8}, {0, 1u << 20}, {60, 70}, {512, 520}};
    int k = 0;
    for (int b = 0; b < nbufs; b++)
        for (int r = 0; r < 4; r++)
            for (uint32_t a = 1; a <= 3; a++) {
                const glc__span s[] = {{bufs[b], rng_[r][0], rng_[r][1], a}};
                unsigned kt = glc__hazard_check(h, s, 1, NULL);
                if (o)
                    assert_int_equal(kt, glc__oracle_check(o, s, 1, NULL));
                out[k++] = kt;
            }
}

typedef struct oom_case {
    const disp *prefix;
    int nprefix;
    disp d;
} oom_case;

static void oom_one(const oom_case *c, const uint32_t *bufs, int nbufs)
{
    unsigned before[64 * 12], after[64 * 12];
    int succeeded = 0;
    assert_true(nbufs <= 64);
    for (long k = 1; k < 1000 && !succeeded; k++) {
        glc__hazard h;
        glc__oracle o;
        glc__hazard_init(&h);
        glc__oracle_init(&o);
        for (int i = 0; i < c->nprefix; i++) {
            assert_int_equal(glc__hazard_add(&h, c->prefix[i].s, c->prefix[i].n, (uint32_t)i), GLC_OK);
            assert_int_equal(glc__oracle_add(&o, c->prefix[i].s, c->prefix[i].n, (uint32_t)i), GLC_OK);
        }
        size_t entries = glc__hazard_entries(&h), held = h.nbufs;
        probe_all(&h, &o, bufs, nbufs, before);

        glc__alloc_fail_after(k);
        glc_status st = glc__hazard_add(&h, c->d.s, c->d.n, 77);
        long failures = glc__alloc_failures();
        glc__alloc_fail_after(0);
        if (k == 1) /* the case must allocate, or it shows nothing */
            assert_int_equal(st, GLC_ERR_OUT_OF_MEMORY);
        if (st == GLC_OK) {
            succeeded = 1;
            assert_int_equal(failures, 0);
        } else {
            assert_int_equal(st, GLC_ERR_OUT_OF_MEMORY);
            assert_true(failures > 0);
            assert_true(tracker_ok(&h));
            assert_int_equal(glc__hazard_entries(&h), entries);
            assert_int_equal(h.nbufs, held); /* new records were dropped */
            probe_all(&h, &o, bufs, nbufs, after);
            assert_memory_equal(before, after, sizeof(unsigned) * (size_t)nbufs * 12);
            /* Still usable: the same add now succeeds. */
            assert_int_equal(glc__hazard_add(&h, c->d.s, c->d.n, 77), GLC_OK);
        }
        assert_int_equal(glc__oracle_add(&o, c->d.s, c->d.n, 77), GLC_OK);
        assert_true(tracker_ok(&h));
        probe_all(&h, &o, bufs, nbufs, after); /* agrees with the oracle */
        glc__hazard_finish(&h);
        glc__oracle_finish(&o);
    }
    assert_true(succeeded);
}

static void test_oom_add(void **state)
{
    (void)state;
    uint32_t bufs[40];
    for (int i = 0; i < 40; i++)
        bufs[i] = (uint32_t)i;

    /* A fresh tracker: the first table, records and sets. */
    const oom_case fresh = {NULL, 0, DISP(R(1, 0, 64), W(2, 0, 64), RW(3, 8, 16))};
    oom_one(&fresh, bufs, 8);

    /* 9 buffers held; 16 more spans: 8 ranges more on buffer 0 (its tail
     * overflows, its pieces get an array) and 8 new buffers (the table grows
     * at 17 buffers, the record array past 16). */
    glc__span pre[9][1], many[16];
    disp pre_d[9];
    for (int i = 0; i < 9; i++) {
        pre[i][0] = (glc__span)RW((uint32_t)i, 0, 64);
        pre_d[i] = (disp){pre[i], 1};
    }
    for (int i = 0; i < 16; i++)
        many[i] = (glc__span)W((uint32_t)(i < 8 ? 0 : 1 + i), (uint64_t)i * 100 + 200,
                               (uint64_t)i * 100 + 250);
    const oom_case grow = {pre_d, 9, {many, 16}};
    oom_one(&grow, bufs, 40);

    /* A full tail of slices; then a write inside one slice and a tail's
     * worth more: the first flushes the slices into pieces, the last flushes
     * again, splitting a piece in the middle; the piece array is new. */
    enum { T = GLC__HAZ_TAIL };
    glc__span full[T], more[2 + T];
    for (int k = 0; k < T; k++)
        full[k] = (glc__span)W(5, (uint64_t)k * 20, (uint64_t)k * 20 + 10);
    more[0] = (glc__span)R(5, 0, 1000);
    more[1] = (glc__span)W(5, 62, 64);
    for (int k = 0; k < T; k++)
        more[2 + k] = (glc__span)W(5, 1000 + (uint64_t)k * 10, 1005 + (uint64_t)k * 10);
    const disp slices[] = {{full, T}};
    const oom_case split = {slices, 1, {more, 2 + T}};
    oom_one(&split, bufs, 8);
}

static void test_oom_random(void **state)
{
    (void)state;
    int failures = 0;
    for (int stream = 0; stream < 1000; stream++) {
        int d = -1;
        gen g;
        gen_init(&g, g_seed * 31 + (uint64_t)stream);
        glc__hazard h;
        glc__oracle o;
        glc__hazard_init(&h);
        glc__oracle_init(&o);
        int ndisp = 1 + (int)below(&g.r, 40);
        for (d = 0; d < ndisp; d++) {
            glc__span sp[MAX_SPANS];
            int n = gen_dispatch(&g, sp);
            unsigned k = glc__hazard_check(&h, sp, n, NULL);
            EXPECT(k == glc__oracle_check(&o, sp, n, NULL));
            if (k) {
                glc__hazard_clear(&h);
                glc__oracle_clear(&o);
            }
            if (below(&g.r, 3) == 0) {
                glc__alloc_fail_after(1 + (long)below(&g.r, 4));
                glc_status st = glc__hazard_add(&h, sp, n, (uint32_t)d);
                glc__alloc_fail_after(0);
                if (st != GLC_OK) {
                    EXPECT(st == GLC_ERR_OUT_OF_MEMORY);
                    EXPECT(tracker_ok(&h));
                    EXPECT(glc__hazard_check(&h, sp, n, NULL) ==
                           glc__oracle_check(&o, sp, n, NULL));
                    failures++;
                    EXPECT(glc__hazard_add(&h, sp, n, (uint32_t)d) == GLC_OK);
                }
            } else {
                EXPECT(glc__hazard_add(&h, sp, n, (uint32_t)d) == GLC_OK);
            }
            EXPECT(glc__oracle_add(&o, sp, n, (uint32_t)d) == GLC_OK);
            EXPECT(tracker_ok(&h));
        }
        glc__hazard_finish(&h);
        glc__oracle_finish(&o);
    }
    assert_true(failures > 100); /* about 180 expected */
}

static void test_oom_oracle(void **state)
{
    (void)state;
    const glc__span a[] = {W(X, 0, 64), R(Y, 0, 64)};
    const glc__span b[] = {R(X, 0, 64)};
    int succeeded = 0;
    /* A fresh oracle allocates its span array, then its dispatch array. */
    for (long k = 1; k < 100 && !succeeded; k++) {
        glc__oracle o;
        glc__oracle_init(&o);
        glc__alloc_fail_after(k);
        glc_status st = glc__oracle_add(&o, a, 2, 2);
        glc__alloc_fail_after(0);
        if (st == GLC_OK) {
            succeeded = 1;
            assert_true(k > 2);
            assert_int_equal(glc__oracle_check(&o, b, 1, NULL), GLC__HAZ_RAW);
        } else {
            assert_int_equal(st, GLC_ERR_OUT_OF_MEMORY);
            assert_int_equal(o.ndisp, 0);
            assert_int_equal(o.nspans, 0);
            assert_int_equal(glc__oracle_check(&o, b, 1, NULL), 0);
            assert_int_equal(glc__oracle_add(&o, a, 2, 2), GLC_OK);
            assert_int_equal(glc__oracle_check(&o, b, 1, NULL), GLC__HAZ_RAW);
        }
        glc__oracle_finish(&o);
    }
    assert_true(succeeded);

    const glc__event ev[] = {{0, 1, a, 2}, {0, 2, b, 1}};
    glc__alloc_fail_after(1);
    assert_int_equal(glc__oracle_validate(ev, 2, NULL, NULL), GLC_ERR_OUT_OF_MEMORY);
    glc__alloc_fail_after(0);
    assert_int_equal(glc__oracle_validate(ev, 2, NULL, NULL), GLC_ERR_HAZARD);
}

/* ---- Steady state ---------------------------------------------------------- */

/* A transformer-like layer stream over weights and one arena: bump-allocated
 * slices, parallel q/k/v and gate/up projections. */
static int transformer_stream(glc__span (*sp)[4], disp *d, int layers)
{
    int n = 0;
    for (int l = 0; l < layers; l++) {
        uint64_t x = (uint64_t)(l % 2) * 4096, h = 8192, q = 12288, k = 16384,
                 v = 20480, a = 24576, f1 = 28672, f2 = 36864, x2 = (uint64_t)((l + 1) % 2) * 4096;
        uint32_t w = WT0 + (uint32_t)(l % 4);
#define OP(...)                                                               \
    do {                                                                      \
        const glc__span t_[] = {__VA_ARGS__};                                 \
        memcpy(sp[n], t_, sizeof t_);                                         \
        d[n] = (disp){sp[n], (int)(sizeof t_ / sizeof t_[0])};                \
        n++;                                                                  \
    } while (0)
        OP(R(ARENA, x, x + 4096), R(w, 0, 256), W(ARENA, h, h + 4096));
        OP(R(ARENA, h, h + 4096), R(w, 256, 65536), W(ARENA, q, q + 4096));
        OP(R(ARENA, h, h + 4096), R(w, 65536, 131072), W(ARENA, k, k + 4096));
        OP(R(ARENA, h, h + 4096), R(w, 131072, 196608), W(ARENA, v, v + 4096));
        OP(R(ARENA, q, q + 4096), R(ARENA, k, k + 4096), R(ARENA, v, v + 4096), W(ARENA, a, a + 4096));
        OP(R(ARENA, a, a + 4096), R(ARENA, x, x + 4096), R(w, 196608, 262144), W(ARENA, x2, x2 + 4096));
        OP(R(ARENA, x2, x2 + 4096), R(w, 0, 256), W(ARENA, h, h + 4096));
        OP(R(ARENA, h, h + 4096), R(w, 262144, 524288), W(ARENA, f1, f1 + 8192));
        OP(R(ARENA, h, h + 4096), R(w, 524288, 786432), W(ARENA, f2, f2 + 8192));
        OP(R(ARENA, f1, f1 + 8192), RW(ARENA, f2, f2 + 8192));
        OP(R(ARENA, f2, f2 + 8192), R(w, 786432, 1048576), RW(ARENA, x2, x2 + 4096));
#undef OP
    }
    return n;
}

static void test_steady_state_no_alloc(void **state)
{
    (void)state;
    enum { LAYERS = 8, NT = LAYERS * 11, NR = 200 };
    static glc__span tsp[NT][4], rsp[NR][MAX_SPANS];
    disp td[NT], rd[NR];
    int nt = transformer_stream(tsp, td, LAYERS);
    assert_int_equal(nt, NT);
    gen g;
    gen_init(&g, g_seed + 5);
    g.max_spans = MAX_SPANS;
    for (int i = 0; i < NR; i++)
        rd[i] = (disp){rsp[i], gen_dispatch(&g, rsp[i])};

    glc__hazard h;
    glc__hazard_init(&h);
    for (int pass = 0; pass < 4; pass++) {
        /* Pass 0 warms up; then any allocation would fail the add. */
        if (pass == 1)
            glc__alloc_fail_after(1);
        int barriers = 0;
        for (int s = 0; s < 2; s++) {
            const disp *d = s ? rd : td;
            int n = s ? NR : nt;
            for (int i = 0; i < n; i++) {
                if (glc__hazard_check(&h, d[i].s, d[i].n, NULL)) {
                    glc__hazard_clear(&h);
                    barriers++;
                }
                assert_int_equal(glc__hazard_add(&h, d[i].s, d[i].n, (uint32_t)i), GLC_OK);
            }
            glc__hazard_clear(&h);
        }
        assert_true(barriers > 0);
    }
    assert_int_equal(glc__alloc_failures(), 0);
    glc__alloc_fail_after(0);
    /* The guard works: a fresh tracker with failure armed cannot add. */
    glc__hazard fresh;
    glc__hazard_init(&fresh);
    glc__alloc_fail_after(1);
    assert_int_equal(glc__hazard_add(&fresh, td[0].s, td[0].n, 0), GLC_ERR_OUT_OF_MEMORY);
    glc__alloc_fail_after(0);
    glc__hazard_finish(&fresh);
    glc__hazard_finish(&h);
}

static void test_transformer_barriers(void **state)
{
    (void)state;
    /* Per layer: norm | q k v | attn | o+res | norm | gate up | act | down:
     * 8 epochs, so 8 barriers per layer less the very first. */
    static glc__span sp[4 * 11][4];
    disp d[4 * 11];
    int n = transformer_stream(sp, d, 4);
    assert_int_equal(barriers_of(d, n), 4 * 8 - 1);
}

int main(void)
{
    const char *seed = getenv("GLC_TEST_SEED");
    if (seed && *seed)
        g_seed = strtoull(seed, NULL, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_vs_oracle),
        cmocka_unit_test(test_independent_branches),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_diamond),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_disjoint_slices),
        cmocka_unit_test(test_touching),
        cmocka_unit_test(test_war_alone),
        cmocka_unit_test(test_waw_alone),
        cmocka_unit_test(test_raw_alone),
        cmocka_unit_test(test_never_conflicts),
        cmocka_unit_test(test_why_names_last_writer),
        cmocka_unit_test(test_many_buffers),
        cmocka_unit_test(test_invalid_args),
        cmocka_unit_test(test_validate_diamond),
        cmocka_unit_test(test_validate_random),
        cmocka_unit_test(test_oom_add),
        cmocka_unit_test(test_oom_random),
        cmocka_unit_test(test_oom_oracle),
        cmocka_unit_test(test_steady_state_no_alloc),
        cmocka_unit_test(test_transformer_barriers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
