/*
 * The memory planner: greedy placements (as TFLite's arena planner and the
 * "greedy by size" of Pisarchyk & Lee, 2020), split over buffers of at
 * most max_buffer bytes, the best of several kept.
 *
 * Order. Non-empty tensors are placed one at a time: FIXED ones first, then
 * SHARED ones in one of five orders (ORDERS): largest first (ties: earlier
 * first step), earliest first step, latest last step, longest interval,
 * largest size x interval (ties: largest, then by index), so each plan is
 * deterministic. Large tensors placed first leave gaps that later, smaller
 * ones fill; on layer-by-layer graphs that alone meets the liveness lower
 * bound, but on general graphs (a small value read late, next to a
 * chain of large ones) it can miss it by 30%, where another order meets
 * it. Each order is placed with best fit and then with first fit (below);
 * the smallest arena wins (ties: the earlier), and a plan at the lower
 * bound ends the search. With one buffer, a local search follows
 * (improve): a tensor at the arena's top (or, every other try, any
 * tensor) moves earlier in the best order and first fit places it all
 * again, the move kept when the arena is no larger; then random orders
 * of all the SHARED tensors, placed first fit and kept when smaller (some
 * order placed first fit meets the optimum; a small graph where the
 * greedy orders and the moves all left a value low in a gap that a later
 * one needed whole was 7.3% over: test_memplan's
 * test_fuse_random_138_at_bound). A fixed seed and budgets of tries
 * shrinking with n (none past 2048 tensors for the random orders). The
 * tests hold the result against the bound on random graphs and against
 * the optimum on small cases.
 *
 * FIXED tensors overlap everything, so each goes at the end of the first
 * buffer with room (first fit, decreasing): they form a prefix
 * [0, fixed_end[b]) of each buffer, and a SHARED tensor simply never goes
 * below fixed_end[b]. That keeps them out of every overlap query below.
 *
 * A SHARED tensor looks at the placed SHARED tensors whose intervals
 * overlap its own, in (buffer, offset) order: the gaps between them (from
 * fixed_end up) are candidates, and it takes the smallest gap that fits
 * over all buffers (best fit; ties: lowest buffer, lowest offset; first
 * fit: the lowest buffer and offset with room). When no
 * gap fits it goes on top of the overlapping tensors of the buffer whose
 * size grows least (ties: lowest buffer) among those where it stays within
 * max_buffer, else at offset 0 of a new buffer.
 *
 * Finding the overlapping tensors. SHARED tensors are sorted by first step
 * once; a tensor [f, l] overlaps exactly the ones in the prefix with
 * first <= l whose last >= f. A max-segment-tree over that order, holding
 * the last step of the placed tensors only, enumerates them in
 * O((k + 1) log n) for k results, so on graphs whose tensors die young the
 * planner costs O(P log n) for P overlapping pairs, not O(n^2). The k
 * results are then sorted by offset. When k passes about n / (8 log n),
 * where sorting them would cost as much as a pass over every placed
 * tensor, the enumeration stops and the planner scans all placed tensors
 * in (buffer, offset) order instead, skipping those that do not overlap.
 * That order is kept only from the first such scan on: a sorted list, plus
 * up to PEND newly placed tensors in a small sorted list merged into it
 * when full; a scan walks both at once. So the worst case (every interval
 * overlapping) is O(n^2), never O(n^2 log n). Both ways visit the same
 * tensors in the same order, so they place identically (the tests compare
 * the planner with a plain reference on both).
 *
 * Padding. Sizes are rounded up to the alignment and offsets are its
 * multiples, so padded and real byte ranges overlap alike. max_buffer need
 * not be a multiple of the alignment (drivers report 2^31 - 1): a tensor
 * fits when its real bytes end by max_buffer, and a buffer's size is capped
 * there, so the padding of the last tensor may pass its end.
 *
 * The lower bound is a sweep: SHARED tensors by first step and by last
 * step, adding sizes at first steps and removing those whose last step is
 * past; FIXED sizes count at every step.
 *
 * Memory: one scratch block, O(n), and the buffer size array returned;
 * nothing is written to the caller's tensors or plan until both exist.
 */
#include "memplan.h"

#include "alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tensors in placing order: FIXED first (largest first), then SHARED by
 * k1 descending, k2 descending, index ascending (the order's keys, see
 * ORDERS). */
typedef struct order_key {
    uint64_t k1, k2;
    uint32_t fixed_idx; /* bit 31: SHARED; low bits: index */
} order_key;

/* The placing orders tried, each with best fit and with first fit; the
 * first is the classic greedy by size. Keys are descending, so "ascending
 * x" is the complement of x. */
enum {
    ORD_SIZE,     /* largest first, then earliest first */
    ORD_START,    /* earliest first step first, then largest */
    ORD_END,      /* latest last step first, then largest */
    ORD_LIFETIME, /* longest live interval first, then largest */
    ORD_AREA,     /* largest size x interval first, then largest */
    ORDERS
};

typedef struct first_key { /* SHARED tensors by first step, then index */
    int32_t first, last;
    uint32_t idx;
} first_key;

typedef struct end_key { /* SHARED tensors by last step, for the sweep */
    int32_t last;
    size_t size;
} end_key;

typedef struct place_key { /* placed tensors by buffer, offset, index */
    uint32_t buf, idx;
    int32_t first, last;
    size_t off, end;
} place_key;

/* The newly placed tensors kept sorted apart from the big sorted list,
 * and merged into it when this many. */
enum { PEND = 128 };

typedef struct planner {
    const glc__mem_tensor *t;
    size_t max_buffer;
    size_t *asz;           /* [n] aligned sizes */
    uint32_t *buf;         /* [n] results */
    size_t *off;           /* [n] */
    first_key *byfirst;    /* [ns] */
    size_t ns;
    int32_t *tree;         /* [2 * leaves]: max last of the placed tensors in
                              a range of byfirst (INT32_MIN: none) */
    uint32_t *pos;         /* [n] a SHARED tensor's position in byfirst */
    size_t leaves;
    uint32_t *cand;        /* [ns] overlapping placed tensors of one query */
    place_key *keys;       /* [ns] their keys */
    uint32_t *pl;          /* [ns] SHARED tensors in placing order */
    size_t npl;
    int indexed;           /* srt and pend are kept from now on */
    place_key *srt, *tmp;  /* [ns] placed SHARED tensors, sorted; merge space */
    size_t nsrt;
    place_key *pend;       /* [PEND] placed since the last merge, sorted */
    size_t npend;
    size_t *bsize, *fixed_end, *top; /* [n] per buffer */
    size_t nbuf;
    int first_fit;         /* the lowest gap that fits, not the smallest */
} planner;

static glc_status fail(char *err, size_t errlen, glc_status st, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        int k = snprintf(err, errlen, "memory plan: ");
        va_start(ap, fmt);
        if (k > 0 && (size_t)k < errlen)
            vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return st;
}

static int cmp_order(const void *pa, const void *pb)
{
    const order_key *a = pa, *b = pb;
    uint32_t ka = a->fixed_idx >> 31, kb = b->fixed_idx >> 31;
    if (ka != kb)
        return ka < kb ? -1 : 1;
    if (a->k1 != b->k1)
        return a->k1 > b->k1 ? -1 : 1;
    if (a->k2 != b->k2)
        return a->k2 > b->k2 ? -1 : 1;
    return a->fixed_idx < b->fixed_idx ? -1 : a->fixed_idx > b->fixed_idx;
}

/* A step as an unsigned key in the same order. */
static uint64_t ukey(int32_t step) { return (uint64_t)((int64_t)step - INT32_MIN); }

/* The keys of tensor i in order `o` (FIXED ones: by size in every order). */
static order_key key_in(const glc__mem_tensor *t, uint32_t i, int o)
{
    const glc__mem_tensor *x = &t[i];
    uint64_t size = x->size, len, k1;
    if (x->kind != GLC__MEM_SHARED)
        return (order_key){size, UINT32_MAX, i};
    len = (uint64_t)((int64_t)x->last - x->first) + 1;
    switch (o) {
    case ORD_START: k1 = UINT32_MAX - ukey(x->first); break;
    case ORD_END: k1 = ukey(x->last); break;
    case ORD_LIFETIME: k1 = len; break;
    case ORD_AREA: k1 = size > UINT64_MAX / len ? UINT64_MAX : size * len; break;
    default: return (order_key){size, UINT32_MAX - ukey(x->first), i | 0x80000000u};
    }
    return (order_key){k1, size, i | 0x80000000u};
}

static int cmp_first(const void *pa, const void *pb)
{
    const first_key *a = pa, *b = pb;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_end(const void *pa, const void *pb)
{
    const end_key *a = pa, *b = pb;
    return a->last < b->last ? -1 : a->last > b->last;
}

static int key_less(const place_key *a, const place_key *b)
{
    if (a->buf != b->buf)
        return a->buf < b->buf;
    if (a->off != b->off)
        return a->off < b->off;
    return a->idx < b->idx;
}

static int cmp_place(const void *pa, const void *pb)
{
    const place_key *a = pa, *b = pb;
    return key_less(a, b) ? -1 : key_less(b, a);
}

/* Appends to cand the placed tensors at byfirst positions [lo, lo + width)
 * below hi whose last step is >= f; returns the new count, or stops at
 * cap (then the count is cap and the list incomplete). */
static size_t collect(const planner *p, size_t node, size_t lo, size_t width, size_t hi,
                      int32_t f, size_t k, size_t cap)
{
    if (lo >= hi || p->tree[node] < f || k == cap)
        return k;
    if (width == 1) {
        p->cand[k++] = p->byfirst[lo].idx;
        return k;
    }
    k = collect(p, 2 * node, lo, width / 2, hi, f, k, cap);
    return collect(p, 2 * node + 1, lo + width / 2, width / 2, hi, f, k, cap);
}

static place_key key_of(const planner *p, uint32_t idx)
{
    return (place_key){p->buf[idx], idx, p->t[idx].first, p->t[idx].last, p->off[idx],
                       p->off[idx] + p->asz[idx]};
}

/* Merges pend into srt. */
static void merge_pend(planner *p)
{
    size_t i = 0, j = 0, w = 0;
    while (i < p->nsrt || j < p->npend) {
        if (j == p->npend || (i < p->nsrt && key_less(&p->srt[i], &p->pend[j])))
            p->tmp[w++] = p->srt[i++];
        else
            p->tmp[w++] = p->pend[j++];
    }
    place_key *s = p->srt;
    p->srt = p->tmp;
    p->tmp = s;
    p->nsrt = w;
    p->npend = 0;
}

/* Keeps the sorted lists up to date with a newly placed tensor. */
static void index_add(planner *p, uint32_t idx)
{
    place_key k = key_of(p, idx);
    size_t lo = 0, n = p->npend;
    while (n > 0) {
        size_t half = n / 2;
        if (key_less(&p->pend[lo + half], &k)) {
            lo += half + 1;
            n -= half + 1;
        } else
            n = half;
    }
    memmove(&p->pend[lo + 1], &p->pend[lo], (p->npend - lo) * sizeof *p->pend);
    p->pend[lo] = k;
    if (++p->npend == PEND)
        merge_pend(p);
}

/* Starts keeping every placed SHARED tensor sorted. */
static void index_build(planner *p)
{
    for (size_t i = 0; i < p->npl; i++)
        p->srt[i] = key_of(p, p->pl[i]);
    qsort(p->srt, p->npl, sizeof *p->srt, cmp_place);
    p->nsrt = p->npl;
    p->npend = 0;
    p->indexed = 1;
}

static void put(planner *p, uint32_t idx, size_t b, size_t off)
{
    size_t end = off + p->asz[idx];
    if (b == p->nbuf) {
        p->bsize[b] = p->fixed_end[b] = 0;
        p->nbuf++;
    }
    p->buf[idx] = (uint32_t)b;
    p->off[idx] = off;
    if (end > p->max_buffer)
        end = p->max_buffer;
    if (end > p->bsize[b])
        p->bsize[b] = end;
}

static void place_fixed(planner *p, uint32_t idx)
{
    size_t b = 0;
    while (b < p->nbuf && p->fixed_end[b] + p->t[idx].size > p->max_buffer)
        b++;
    size_t off = b < p->nbuf ? p->fixed_end[b] : 0;
    put(p, idx, b, off);
    p->fixed_end[b] = off + p->asz[idx];
}

static unsigned floor_log2(size_t k)
{
    unsigned r = 0;
    while (k >>= 1)
        r++;
    return r;
}

static void place_shared(planner *p, uint32_t idx)
{
    int32_t f = p->t[idx].first, l = p->t[idx].last;
    size_t a = p->asz[idx], hi = 0, n = p->ns;

    /* hi: the byfirst positions with first <= l. */
    while (n > 0) {
        size_t half = n / 2;
        if (p->byfirst[hi + half].first <= l) {
            hi += half + 1;
            n -= half + 1;
        } else
            n = half;
    }
    /* Past cap overlapping tensors, where sorting them (k log k, with
     * qsort's costly compares) takes about as long as a pass over all the
     * placed ones, scan those instead (the factor 8 was measured). */
    size_t cap = p->npl / (8 * (floor_log2(p->npl) + 1));
    cap = cap > 32 ? cap : 32;
    size_t k = collect(p, 1, 0, p->leaves, hi, f, 0, cap);

    const place_key *s1, *s2;
    size_t n1, n2;
    if (k == cap) {
        if (!p->indexed)
            index_build(p);
        s1 = p->srt, n1 = p->nsrt;
        s2 = p->pend, n2 = p->npend;
    } else {
        for (size_t i = 0; i < k; i++)
            p->keys[i] = key_of(p, p->cand[i]);
        qsort(p->keys, k, sizeof *p->keys, cmp_place);
        s1 = p->keys, n1 = k;
        s2 = NULL, n2 = 0;
    }

    /* Visits the overlapping tensors by (buffer, offset), merging the two
     * sorted lists; top[b] is the end of those seen so far in buffer b. */
    for (size_t b = 0; b < p->nbuf; b++)
        p->top[b] = p->fixed_end[b];
    size_t best_gap = SIZE_MAX, best_b = 0, best_off = 0;
    for (size_t i = 0, j = 0;;) {
        const place_key *c;
        if (i < n1 && (j == n2 || key_less(&s1[i], &s2[j])))
            c = &s1[i++];
        else if (j < n2)
            c = &s2[j++];
        else
            break;
        if (c->first > l || c->last < f)
            continue;
        size_t *top = &p->top[c->buf];
        if (c->off > *top) {
            size_t gap = c->off - *top;
            if (gap >= a && gap < best_gap) {
                best_gap = gap;
                best_b = c->buf;
                best_off = *top;
                if (p->first_fit)
                    break; /* the lowest buffer and offset with room */
            }
        }
        if (c->end > *top)
            *top = c->end;
    }
    if (best_gap == SIZE_MAX) {
        size_t best_grow = SIZE_MAX;
        best_b = p->nbuf;
        best_off = 0;
        for (size_t b = 0; b < p->nbuf; b++) {
            if (p->top[b] + p->t[idx].size > p->max_buffer)
                continue;
            size_t end = p->top[b] + a;
            if (end > p->max_buffer)
                end = p->max_buffer;
            size_t grow = end > p->bsize[b] ? end - p->bsize[b] : 0;
            if (grow < best_grow) {
                best_grow = grow;
                best_b = b;
                best_off = p->top[b];
            }
        }
    }
    put(p, idx, best_b, best_off);
    for (size_t node = p->leaves + p->pos[idx]; node >= 1; node /= 2)
        if (p->tree[node] < l)
            p->tree[node] = l;
    p->pl[p->npl++] = idx;
    if (p->indexed)
        index_add(p, idx);
}

/* Places the tensors in the order ord (best or first fit) from scratch;
 * returns the arena's bytes. */
static size_t place_all(planner *p, const order_key *ord, size_t nord, int first_fit)
{
    size_t total = 0;
    for (size_t i = 0; i < 2 * p->leaves; i++)
        p->tree[i] = INT32_MIN;
    p->npl = p->nsrt = p->npend = p->nbuf = 0;
    p->indexed = 0;
    p->first_fit = first_fit;
    for (size_t i = 0; i < nord; i++) {
        uint32_t idx = ord[i].fixed_idx & 0x7FFFFFFFu;
        if (ord[i].fixed_idx >> 31)
            place_shared(p, idx);
        else
            place_fixed(p, idx);
    }
    for (size_t b = 0; b < p->nbuf; b++)
        total += p->bsize[b];
    return total;
}

/* The smallest plan found so far, and the order that made it. */
typedef struct best {
    size_t total, nbuf;
    uint32_t *buf;   /* [n] */
    size_t *off;     /* [n] */
    size_t *bsize;   /* [nz] */
    order_key *ord;  /* [nz] */
} best;

static void keep(const planner *p, best *b, size_t n, const order_key *ord, size_t nord)
{
    b->total = 0;
    for (size_t i = 0; i < p->nbuf; i++)
        b->total += p->bsize[i];
    b->nbuf = p->nbuf;
    memcpy(b->buf, p->buf, n * sizeof *b->buf);
    memcpy(b->off, p->off, n * sizeof *b->off);
    memcpy(b->bsize, p->bsize, p->nbuf * sizeof *b->bsize);
    if (b->ord != ord)
        memcpy(b->ord, ord, nord * sizeof *ord);
}

/* The search's random numbers: splitmix64 from a fixed seed. */
static uint64_t next_rand(uint64_t *seed)
{
    uint64_t r = (*seed += 0x9E3779B97F4A7C15ull);
    r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9ull;
    r = (r ^ (r >> 27)) * 0x94D049BB133111EBull;
    return r ^ (r >> 31);
}

/* Local search from the best plan (one buffer, above the bound): a tensor
 * that ends at the arena's top (every other try: any tensor) moves to a
 * random earlier place in the order, and the order is placed again with
 * first fit; the move stays when the arena is no larger (walking plateaus
 * too). A fixed budget of tries, fewer on larger graphs (each try costs a
 * placement), and a fixed seed: the result is deterministic. ord is
 * scratch. */
static void improve(planner *p, best *b, size_t n, order_key *ord, size_t nord, size_t bound)
{
    size_t ns = p->ns, tries = ns ? 16384 / ns : 0, nfixed = nord - ns;
    size_t restarts = ns ? 2048 / ns : 0;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    if (tries > 128)
        tries = 128;
    if (restarts > 64)
        restarts = 64;
    if (b->nbuf != 1 || ns < 2)
        return;
    memcpy(ord, b->ord, nord * sizeof *ord);
    for (size_t k = 0; k < tries && b->total > bound; k++) {
        size_t ntop = 0, pick, pos, to;
        order_key moved;
        uint64_t r;
        r = next_rand(&seed);
        /* the SHARED tensors ending at the top: pick one */
        for (size_t i = nfixed; i < nord; i++) {
            uint32_t idx = ord[i].fixed_idx & 0x7FFFFFFFu;
            if (b->off[idx] + p->asz[idx] >= b->total)
                ntop++;
        }
        if (ntop == 0)
            break;
        if (k % 2) { /* every other try: any tensor, to leave a plateau */
            pos = nfixed + (size_t)(r % ns);
        } else {
            pick = (size_t)(r % ntop);
            for (pos = nfixed; pos < nord; pos++) {
                uint32_t idx = ord[pos].fixed_idx & 0x7FFFFFFFu;
                if (b->off[idx] + p->asz[idx] >= b->total && pick-- == 0)
                    break;
            }
        }
        if (pos == nfixed)
            continue; /* placed first already */
        to = nfixed + (size_t)((r >> 32) % (pos - nfixed));
        moved = ord[pos];
        memmove(&ord[to + 1], &ord[to], (pos - to) * sizeof *ord);
        ord[to] = moved;
        if (place_all(p, ord, nord, 1) <= b->total && p->nbuf == 1) {
            keep(p, b, n, ord, nord);
        } else { /* undo */
            memmove(&ord[to], &ord[to + 1], (pos - to) * sizeof *ord);
            ord[pos] = moved;
        }
    }
    /* then random orders of the SHARED tensors: where every greedy order
     * leaves a tensor low in a gap that a later one needed whole, some
     * order places them apart (first fit over all orders meets the
     * optimum); kept only when smaller */
    for (size_t k = 0; k < restarts && b->total > bound; k++) {
        memcpy(ord, b->ord, nord * sizeof *ord);
        for (size_t i = ns; i > 1; i--) {
            size_t j = (size_t)(next_rand(&seed) % i);
            order_key x = ord[nfixed + i - 1];
            ord[nfixed + i - 1] = ord[nfixed + j];
            ord[nfixed + j] = x;
        }
        if (place_all(p, ord, nord, 1) < b->total && p->nbuf == 1)
            keep(p, b, n, ord, nord);
    }
}

/* Bytes for `count` elements of `size`, rounded up so that every array
 * carved from the scratch block stays aligned for any type. */
static size_t span_of(size_t count, size_t size)
{
    size_t a = sizeof(max_align_t);
    return (count * size + a - 1) / a * a;
}

glc_status glc__memplan_make(glc__mem_tensor *t, size_t n, size_t align, size_t max_buffer,
                             glc__memplan *out, char *err, size_t errlen)
{
    if (!out)
        return fail(err, errlen, GLC_ERR_INVALID_ARG, "the plan (out) is NULL");
    if (!t && n > 0)
        return fail(err, errlen, GLC_ERR_INVALID_ARG, "the tensor array is NULL with n = %zu", n);
    if (n > INT32_MAX)
        return fail(err, errlen, GLC_ERR_INVALID_ARG, "%zu tensors, over INT32_MAX", n);
    if (align < 4 || (align & (align - 1)))
        return fail(err, errlen, GLC_ERR_INVALID_ARG,
                    "alignment %zu is not a power of two >= 4", align);
    if (max_buffer < 1 || max_buffer > SIZE_MAX / 4)
        return fail(err, errlen, GLC_ERR_INVALID_ARG,
                    "max_buffer %zu is not in [1, SIZE_MAX / 4]", max_buffer);

    size_t ns = 0, nz = 0, sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].kind != GLC__MEM_SHARED && t[i].kind != GLC__MEM_FIXED)
            return fail(err, errlen, GLC_ERR_INVALID_ARG,
                        "tensor %zu has kind %d, neither SHARED nor FIXED", i, (int)t[i].kind);
        if (t[i].kind == GLC__MEM_SHARED && t[i].first > t[i].last)
            return fail(err, errlen, GLC_ERR_INVALID_ARG,
                        "tensor %zu has its first step %d after its last step %d", i,
                        (int)t[i].first, (int)t[i].last);
        if (t[i].size > max_buffer)
            return fail(err, errlen, GLC_ERR_INVALID_ARG,
                        "tensor %zu is %zu bytes, over the %zu-byte buffer limit (max_buffer)",
                        i, t[i].size, max_buffer);
        size_t a = (t[i].size + align - 1) & ~(align - 1);
        if (a > SIZE_MAX - sum)
            return fail(err, errlen, GLC_ERR_INVALID_ARG,
                        "the tensors' sizes add up past SIZE_MAX");
        sum += a;
        if (a > 0) {
            nz++;
            ns += t[i].kind == GLC__MEM_SHARED;
        }
    }

    planner p;
    memset(&p, 0, sizeof p);
    p.t = t;
    p.max_buffer = max_buffer;
    p.ns = ns;
    p.leaves = 1;
    while (p.leaves < ns)
        p.leaves *= 2;

    size_t bytes = span_of(n, sizeof *p.asz) + span_of(n, sizeof *p.buf) +
                   span_of(n, sizeof *p.off) +
                   span_of(n, sizeof *p.pos) +
                   span_of(nz, sizeof(order_key)) + span_of(ns, sizeof *p.byfirst) +
                   span_of(ns, sizeof(end_key)) + span_of(2 * p.leaves, sizeof *p.tree) +
                   span_of(ns, sizeof *p.cand) + 3 * span_of(ns, sizeof(place_key)) +
                   span_of(PEND, sizeof(place_key)) +
                   span_of(ns, sizeof *p.pl) + 4 * span_of(nz, sizeof(size_t)) +
                   span_of(n, sizeof(uint32_t)) + span_of(n, sizeof(size_t)) +
                   span_of(nz, sizeof(order_key));
    unsigned char *block = glc__malloc(bytes ? bytes : 1);
    if (!block)
        return fail(err, errlen, GLC_ERR_OUT_OF_MEMORY, "out of memory (%zu bytes)", bytes);
    unsigned char *cur = block;
#define CARVE(ptr, count)                                                                    \
    do {                                                                                     \
        (ptr) = (void *)cur;                                                                 \
        cur += span_of((count), sizeof *(ptr));                                              \
    } while (0)
    order_key *ord;
    end_key *ends;
    uint32_t *best_buf;
    size_t *best_off, *best_bsize;
    order_key *best_ord;
    CARVE(p.asz, n);
    CARVE(p.buf, n);
    CARVE(p.off, n);
    CARVE(p.pos, n);
    CARVE(ord, nz);
    CARVE(p.byfirst, ns);
    CARVE(ends, ns);
    CARVE(p.tree, 2 * p.leaves);
    CARVE(p.cand, ns);
    CARVE(p.keys, ns);
    CARVE(p.srt, ns);
    CARVE(p.tmp, ns);
    CARVE(p.pend, (size_t)PEND);
    CARVE(p.pl, ns);
    CARVE(p.bsize, nz);
    CARVE(p.fixed_end, nz);
    CARVE(p.top, nz);
    CARVE(best_buf, n);
    CARVE(best_off, n);
    CARVE(best_bsize, nz);
    CARVE(best_ord, nz);
#undef CARVE

    /* Keys, aligned sizes and the lower bound. */
    size_t nord = 0, nsh = 0, fixed_sum = 0;
    for (size_t i = 0; i < n; i++) {
        size_t a = (t[i].size + align - 1) & ~(align - 1);
        int shared = t[i].kind == GLC__MEM_SHARED;
        p.asz[i] = a;
        p.buf[i] = 0;
        p.off[i] = 0;
        if (a == 0)
            continue;
        ord[nord++] = key_in(t, (uint32_t)i, ORD_SIZE);
        if (shared) {
            p.byfirst[nsh] = (first_key){t[i].first, t[i].last, (uint32_t)i};
            ends[nsh++] = (end_key){t[i].last, a};
        } else
            fixed_sum += a;
    }
    qsort(ord, nord, sizeof *ord, cmp_order);
    qsort(p.byfirst, ns, sizeof *p.byfirst, cmp_first);
    qsort(ends, ns, sizeof *ends, cmp_end);

    size_t live = 0, peak = 0;
    for (size_t i = 0, j = 0; i < ns; i++) {
        while (j < ns && ends[j].last < p.byfirst[i].first)
            live -= ends[j++].size;
        live += p.asz[p.byfirst[i].idx];
        if (live > peak)
            peak = live;
    }

    for (size_t i = 0; i < ns; i++)
        p.pos[p.byfirst[i].idx] = (uint32_t)i;

    /* Every order with best fit, then with first fit; the smallest arena
     * wins (ties: the earlier try), and reaching the bound ends the search. */
    size_t bound = fixed_sum + peak;
    best b = {SIZE_MAX, 0, best_buf, best_off, best_bsize, best_ord};
    for (int try = 0; try < 2 * ORDERS && (try == 0 || b.total > bound); try++) {
        for (size_t i = 0; i < nord; i++)
            ord[i] = key_in(t, ord[i].fixed_idx & 0x7FFFFFFFu, try % ORDERS);
        qsort(ord, nord, sizeof *ord, cmp_order);
        if (place_all(&p, ord, nord, try >= ORDERS) < b.total)
            keep(&p, &b, n, ord, nord);
    }
    improve(&p, &b, n, ord, nord, bound);
    size_t best_nbuf = b.nbuf, best_total = b.total;

    size_t *bsize = NULL;
    if (best_nbuf > 0) {
        bsize = glc__malloc(best_nbuf * sizeof *bsize);
        if (!bsize) {
            glc__free(block);
            return fail(err, errlen, GLC_ERR_OUT_OF_MEMORY, "out of memory (%zu buffer sizes)",
                        best_nbuf);
        }
        memcpy(bsize, best_bsize, best_nbuf * sizeof *bsize);
    }
    for (size_t i = 0; i < n; i++) {
        t[i].buffer = (int)best_buf[i];
        t[i].offset = best_off[i];
    }
    out->nbuffers = (int)best_nbuf;
    out->buffer_size = bsize;
    out->total = best_total == SIZE_MAX ? 0 : best_total;
    out->lower_bound = fixed_sum + peak;
    glc__free(block);
    return GLC_OK;
}

void glc__memplan_finish(glc__memplan *p)
{
    if (!p)
        return;
    glc__free(p->buffer_size);
    memset(p, 0, sizeof *p);
}
