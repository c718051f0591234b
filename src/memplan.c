/*
 * The memory planner: greedy by size, best fit (as TFLite's arena planner
 * and the "greedy by size" of Pisarchyk & Lee, 2020), split over buffers
 * of at most max_buffer bytes.
 *
 * Order. Non-empty tensors are placed one at a time: FIXED ones first, then
 * SHARED ones; within each kind largest first, ties by earlier first step,
 * then by index, so the plan is deterministic. Large tensors placed first
 * leave gaps that later, smaller ones fill; on layer-by-layer graphs this
 * stays within a few percent of the liveness lower bound (the tests
 * measure it on transformer-like graphs).
 *
 * FIXED tensors overlap everything, so each goes at the end of the first
 * buffer with room (first fit, decreasing): they form a prefix
 * [0, fixed_end[b]) of each buffer, and a SHARED tensor simply never goes
 * below fixed_end[b]. That keeps them out of every overlap query below.
 *
 * A SHARED tensor looks at the placed SHARED tensors whose intervals
 * overlap its own, in (buffer, offset) order: the gaps between them (from
 * fixed_end up) are candidates, and it takes the smallest gap that fits
 * over all buffers (best fit; ties: lowest buffer, lowest offset). When no
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

/* Tensors in placing order: FIXED first, then size descending, first step
 * ascending, index ascending. */
typedef struct order_key {
    size_t size;
    int32_t first;
    uint32_t fixed_idx; /* bit 31: SHARED; low bits: index */
} order_key;

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
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return a->fixed_idx < b->fixed_idx ? -1 : a->fixed_idx > b->fixed_idx;
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
                   span_of(ns, sizeof *p.pl) + 3 * span_of(nz, sizeof(size_t));
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
        ord[nord++] = (order_key){t[i].size, shared ? t[i].first : 0,
                                  (uint32_t)i | (shared ? 0x80000000u : 0)};
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

    for (size_t i = 0; i < 2 * p.leaves; i++)
        p.tree[i] = INT32_MIN;
    for (size_t i = 0; i < ns; i++)
        p.pos[p.byfirst[i].idx] = (uint32_t)i;

    for (size_t i = 0; i < nord; i++) {
        uint32_t idx = ord[i].fixed_idx & 0x7FFFFFFFu;
        if (ord[i].fixed_idx >> 31)
            place_shared(&p, idx);
        else
            place_fixed(&p, idx);
    }

    size_t *bsize = NULL, total = 0;
    if (p.nbuf > 0) {
        bsize = glc__malloc(p.nbuf * sizeof *bsize);
        if (!bsize) {
            glc__free(block);
            return fail(err, errlen, GLC_ERR_OUT_OF_MEMORY, "out of memory (%zu buffer sizes)",
                        p.nbuf);
        }
        for (size_t b = 0; b < p.nbuf; b++) {
            bsize[b] = p.bsize[b];
            total += bsize[b];
        }
    }
    for (size_t i = 0; i < n; i++) {
        t[i].buffer = (int)p.buf[i];
        t[i].offset = p.off[i];
    }
    out->nbuffers = (int)p.nbuf;
    out->buffer_size = bsize;
    out->total = total;
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
