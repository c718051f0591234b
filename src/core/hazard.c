/*
 * The buffer-range hazard tracker: decides, per dispatch, whether a barrier
 * is needed before it, at a small fraction of the ~1.2 us of CPU a GPU
 * dispatch costs (bench/bench_hazard.c measures it against the oracle).
 *
 * Representation. Each buffer touched since the last barrier has a record
 * with two sets, the bytes read and the bytes written. A set holds:
 *  - a tail: the GLC__HAZ_TAIL latest ranges added, unsorted, in fixed
 *    lanes, [0, nt) in use (stale lanes are masked off, never wiped), and
 *  - the older ranges as sorted, disjoint, non-empty pieces, each carrying
 *    the id of the last dispatch that touched its bytes; adjacent pieces
 *    (one's end is the next's begin) always carry different ids, since
 *    same-id neighbours are merged. Painting a range in adds at most 2
 *    pieces, and a set usually holds about one per distinct tensor.
 * Records are found through an open-addressing hash table keyed by buffer
 * id (linear probing, load <= 1/2): buffer ids are small dense integers,
 * but nothing here relies on a maximum. Each slot also says which of its
 * record's sets are non-empty, so checking a span against an empty set
 * (an input never written, an output never read) reads only the table.
 *
 * Why a tail. Most buffers see a few ranges between two barriers. Keeping
 * only a sorted array means a search, a shift and several data-dependent
 * branches per range added; appending to a tail is a few stores, and the
 * check compares a span with all lanes without branches, then, only if
 * there are older pieces, binary-searches them. When a tail is full its
 * ranges are painted into the pieces in the order they came (see paint),
 * which keeps a set's size bounded however many dispatches touch it. On
 * the benchmark's streams of 8 and 16 spans per dispatch over 512 buffers
 * this made check + add 2 to 2.5 times faster than sorted arrays alone;
 * 8 lanes beat 4 and 6 there and cost little on barrier-heavy streams.
 *
 * Check. A span conflicts with a set when it overlaps a tail lane or the
 * first piece ending after span.begin starts before span.end. Reads look in
 * the write set (RAW); writes in the read set (WAR) and the write set (WAW).
 * The conflict reported is the newest tail range that overlaps, else the
 * overlapping piece: either way its id is the last dispatch that touched
 * the reported bytes in that set, so a reported conflict is always real.
 *
 * Add runs in two phases so that a failure leaves the tracker as it was:
 * first each span is validated, its record found or created, and each set
 * it goes into gets room for 2 pieces per range that may be painted into
 * it by this call (only when its tail will overflow); then the appends and
 * paints, which cannot fail. On failure the records created by this call
 * (all still empty) are removed again: they were the last inserted in the
 * hash table (a rehash reinserts records in order), so emptying their
 * slots in reverse order leaves every other probe chain intact.
 *
 * Clear. Records [0, nbufs) are exactly the buffers touched since the last
 * barrier; clear empties their hash slots (each record knows its slot) and
 * their sets, and sets nbufs to 0. Records, piece arrays and the table keep
 * their memory and are reused by the next buffers touched, so clear is
 * O(buffers touched) and a repeated stream allocates nothing after the
 * first pass.
 */
#include "hazard.h"

#include "alloc.h"

#include <string.h>

enum { SET_READ = 0, SET_WRITE = 1, TAIL = GLC__HAZ_TAIL };
_Static_assert(TAIL >= 1 && TAIL < 32, "tail lanes are bits of an unsigned");

/* A slot's rec: the record index + 1 in the low bits, and a bit per set
 * that is non-empty, so that a check skips the record of a buffer whose
 * set it would look in is empty (inputs never written, outputs never
 * read), reading only the table. */
#define REC_INDEX 0x3FFFFFFFu
#define REC_HAS(set) (0x40000000u << (set))
#define MAX_BUFS ((size_t)1 << 29)

static inline uint32_t home_slot(const glc__hazard *h, uint32_t key)
{
    /* Fibonacci hashing: dense ids spread over the whole table. */
    return (uint32_t)((key * 0x9E3779B1u) >> h->shift);
}

/* The slot of `key`, or NULL when it has no record. */
static inline glc__hazard_slot *find_slot(const glc__hazard *h, uint32_t key)
{
    if (h->nbufs == 0)
        return NULL;
    for (uint32_t i = home_slot(h, key);; i = (i + 1) & h->mask) {
        glc__hazard_slot *s = &h->slots[i];
        if (s->rec == 0)
            return NULL;
        if (s->key == key)
            return s;
    }
}

static inline glc__hazard_buf *find_buf(const glc__hazard *h, uint32_t key)
{
    const glc__hazard_slot *s = find_slot(h, key);
    return s ? &h->bufs[(s->rec & REC_INDEX) - 1] : NULL;
}

/* Index of the first piece whose end is after x (n when none is). Written
 * so that compilers use a conditional move per step, not a branch that
 * would be mispredicted half the time. */
static inline size_t first_end_after(const glc__hazard_piece *v, size_t n,
                                     uint64_t x)
{
    size_t lo = 0;
    if (n == 0)
        return 0;
    while (n > 1) {
        size_t half = n / 2;
        lo = v[lo + half - 1].end <= x ? lo + half : lo;
        n -= half;
    }
    return lo + (v[lo].end <= x);
}

/* Bit k set when tail lane k (< nt) overlaps [b, e). All lanes are
 * compared, without branches; lanes past nt hold stale ranges and are
 * masked off, so neither clear nor a flush has to wipe them. */
static inline unsigned tail_lanes(const glc__hazard_set *s, uint64_t b,
                                  uint64_t e)
{
    unsigned lanes = 0;
    for (unsigned k = 0; k < TAIL; k++)
        lanes |= (unsigned)((s->tb[k] < e) & (b < s->te[k])) << k;
    return lanes & ((1u << s->nt) - 1);
}

/* 1 when [b, e) (non-empty) overlaps set `s`; then, if `out` is not NULL,
 * *out is the range it meets: the newest tail range that overlaps, else the
 * piece that overlaps first. */
static inline int set_hit(const glc__hazard_set *s, uint64_t b, uint64_t e,
                          glc__hazard_piece *out)
{
    unsigned lanes = tail_lanes(s, b, e);
    if (lanes) {
        if (out) {
            unsigned k = TAIL - 1;
            while (!(lanes & (1u << k)))
                k--;
            *out = (glc__hazard_piece){s->tb[k], s->te[k], s->tid[k]};
        }
        return 1;
    }
    size_t n = s->n;
    if (n == 0 || s->v[n - 1].end <= b || s->v[0].begin >= e)
        return 0;
    size_t i = first_end_after(s->v, n, b);
    if (i == n || s->v[i].begin >= e)
        return 0;
    if (out)
        *out = s->v[i];
    return 1;
}

void glc__hazard_init(glc__hazard *h)
{
    memset(h, 0, sizeof *h);
}

void glc__hazard_finish(glc__hazard *h)
{
    for (size_t i = 0; i < h->pool; i++) {
        glc__free(h->bufs[i].set[SET_READ].v);
        glc__free(h->bufs[i].set[SET_WRITE].v);
    }
    glc__free(h->bufs);
    glc__free(h->slots);
    memset(h, 0, sizeof *h);
}

unsigned glc__hazard_check(const glc__hazard *h, const glc__span *spans, int n,
                           glc__conflict *why)
{
    unsigned kinds = 0;
    glc__hazard_piece hit = {0, 0, 0};
    const glc__span *hit_span = NULL;

    if (h->nbufs == 0)
        return 0;
    for (int k = 0; k < n; k++) {
        const glc__span *sp = &spans[k];
        if (sp->begin >= sp->end)
            continue;
        const glc__hazard_slot *slot = find_slot(h, sp->buffer);
        if (!slot)
            continue;
        uint32_t look = 0; /* the sets to look in: non-empty and relevant */
        if (sp->access & GLC_READ)
            look |= REC_HAS(SET_WRITE);
        if (sp->access & GLC_WRITE)
            look |= REC_HAS(SET_READ) | REC_HAS(SET_WRITE);
        look &= slot->rec;
        if (!look)
            continue;
        const glc__hazard_buf *buf = &h->bufs[(slot->rec & REC_INDEX) - 1];
        glc__hazard_piece *out = why && !hit_span ? &hit : NULL;
        if ((sp->access & GLC_READ) && (look & REC_HAS(SET_WRITE)) &&
            set_hit(&buf->set[SET_WRITE], sp->begin, sp->end, out)) {
            kinds |= GLC__HAZ_RAW;
            if (out)
                hit_span = sp, out = NULL;
        }
        if (sp->access & GLC_WRITE) {
            if ((look & REC_HAS(SET_READ)) &&
                set_hit(&buf->set[SET_READ], sp->begin, sp->end, out)) {
                kinds |= GLC__HAZ_WAR;
                if (out)
                    hit_span = sp, out = NULL;
            }
            if ((look & REC_HAS(SET_WRITE)) &&
                set_hit(&buf->set[SET_WRITE], sp->begin, sp->end, out)) {
                kinds |= GLC__HAZ_WAW;
                if (out)
                    hit_span = sp;
            }
        }
        if (kinds == (GLC__HAZ_RAW | GLC__HAZ_WAR | GLC__HAZ_WAW) &&
            (hit_span || !why))
            break;
    }
    if (kinds && why) {
        why->kinds = kinds;
        why->earlier = hit.id;
        why->buffer = hit_span->buffer;
        why->begin = hit.begin > hit_span->begin ? hit.begin : hit_span->begin;
        why->end = hit.end < hit_span->end ? hit.end : hit_span->end;
    }
    return kinds;
}

/* Makes room for `want` pieces; 0 when out of memory (s unchanged). */
static int set_reserve(glc__hazard_set *s, size_t want)
{
    if (want <= s->cap)
        return 1;
    size_t cap = s->cap ? s->cap : 8;
    while (cap < want) {
        if (cap > SIZE_MAX / 2 / sizeof *s->v)
            return 0;
        cap *= 2;
    }
    glc__hazard_piece *v = glc__realloc(s->v, cap * sizeof *v);
    if (!v)
        return 0;
    s->v = v;
    s->cap = cap;
    return 1;
}

/* Room for the add in progress to put `need` ranges into `s`: when they
 * overflow the tail, every range in the tail now and every one added may
 * be painted into the pieces, each adding at most 2. */
static inline int set_room(glc__hazard_set *s, uint32_t need)
{
    size_t t = (size_t)s->nt + need;
    if (t <= TAIL)
        return 1;
    if (t > (SIZE_MAX - s->n) / 2)
        return 0;
    return s->n + 2 * t <= s->cap || set_reserve(s, s->n + 2 * t);
}

static void slot_insert(glc__hazard *h, size_t rec)
{
    const glc__hazard_buf *b = &h->bufs[rec];
    uint32_t i = home_slot(h, b->buffer);
    while (h->slots[i].rec != 0)
        i = (i + 1) & h->mask;
    h->slots[i].key = b->buffer;
    h->slots[i].rec = (uint32_t)rec + 1;
    for (int set = SET_READ; set <= SET_WRITE; set++)
        if (b->set[set].nt || b->set[set].n)
            h->slots[i].rec |= REC_HAS(set);
    h->bufs[rec].slot = i;
}

/* Doubles the hash table (16 slots at first), reinserting records in index
 * order; 0 when out of memory (table unchanged). */
static int table_grow(glc__hazard *h)
{
    size_t size = h->slots ? (size_t)h->mask + 1 : 0;
    size_t nsize = size ? size * 2 : 16;
    if (nsize > ((size_t)1 << 31))
        return 0;
    glc__hazard_slot *slots = glc__calloc(nsize, sizeof *slots);
    if (!slots)
        return 0;
    unsigned bits = 0;
    while (((size_t)1 << bits) < nsize)
        bits++;
    glc__free(h->slots);
    h->slots = slots;
    h->mask = (uint32_t)(nsize - 1);
    h->shift = 32 - bits;
    for (size_t r = 0; r < h->nbufs; r++)
        slot_insert(h, r);
    return 1;
}

/* A new, empty record for `key` (which has none); NULL when out of memory,
 * with nothing changed. */
static glc__hazard_buf *create_buf(glc__hazard *h, uint32_t key)
{
    if (h->nbufs == h->bufcap) {
        size_t ncap = h->bufcap ? h->bufcap * 2 : 16;
        if (ncap > MAX_BUFS || ncap > SIZE_MAX / sizeof *h->bufs)
            return NULL;
        glc__hazard_buf *bufs = glc__realloc(h->bufs, ncap * sizeof *bufs);
        if (!bufs)
            return NULL;
        h->bufs = bufs;
        h->bufcap = ncap;
    }
    if (!h->slots || (h->nbufs + 1) * 2 > (size_t)h->mask + 1) {
        if (!table_grow(h))
            return NULL;
    }
    size_t rec = h->nbufs;
    glc__hazard_buf *b = &h->bufs[rec];
    if (rec == h->pool) {
        memset(b, 0, sizeof *b);
        h->pool++;
    }
    b->buffer = key;
    b->stamp = h->stamp;
    b->need[SET_READ] = b->need[SET_WRITE] = 0;
    h->nbufs++;
    slot_insert(h, rec);
    return b;
}

/* Records [first, nbufs) were created by a failed add: forget them (their
 * sets are empty; their memory stays in the pool). */
static void drop_new_bufs(glc__hazard *h, size_t first)
{
    while (h->nbufs > first) {
        h->nbufs--;
        h->slots[h->bufs[h->nbufs].slot].rec = 0;
    }
}

/* paint() where its fast paths do not apply; i is the first piece whose
 * end is after b. */
static void paint_general(glc__hazard *h, glc__hazard_set *s, uint64_t b,
                          uint64_t e, uint32_t id, size_t i)
{
    glc__hazard_piece *v = s->v;
    size_t n = s->n, j = i;
    while (j < n && v[j].begin < e)
        j++;
    /* v[i, j) overlap [b, e); v[lo, hi) are replaced. */
    size_t lo = i, hi = j;
    uint64_t nb = b, ne = e;
    glc__hazard_piece left = {0, 0, 0}, right = {0, 0, 0};
    size_t has_left = 0, has_right = 0;

    if (i < j && v[i].begin < b) {
        if (v[i].id == id)
            nb = v[i].begin;
        else {
            left = (glc__hazard_piece){v[i].begin, b, v[i].id};
            has_left = 1;
        }
    } else if (i > 0 && v[i - 1].end == b && v[i - 1].id == id) {
        lo = i - 1;
        nb = v[lo].begin;
    }
    if (i < j && v[j - 1].end > e) {
        if (v[j - 1].id == id)
            ne = v[j - 1].end;
        else {
            right = (glc__hazard_piece){e, v[j - 1].end, v[j - 1].id};
            has_right = 1;
        }
    } else if (j < n && v[j].begin == e && v[j].id == id) {
        hi = j + 1;
        ne = v[j].end;
    }

    /* The remnants were copied out above, so the tail may move first. */
    size_t m = has_left + 1 + has_right, removed = hi - lo;
    if (m != removed && hi < n)
        memmove(&v[lo + m], &v[hi], (n - hi) * sizeof *v);
    glc__hazard_piece *w = &v[lo];
    if (has_left)
        *w++ = left;
    *w++ = (glc__hazard_piece){nb, ne, id};
    if (has_right)
        *w = right;
    s->n = n - removed + m;
    h->entries = h->entries - removed + m;
}

/* Paints [b, e) with `id` over the pieces of `s`: the pieces it overlaps
 * are cut back or replaced, so each byte keeps the last id painted over
 * it. Needs room for 2 more pieces. The two common cases are handled
 * inline: a range after every piece (arena slices written in order) and a
 * range equal to one piece (a whole tensor read again). */
static inline void paint(glc__hazard *h, glc__hazard_set *s, uint64_t b,
                         uint64_t e, uint32_t id)
{
    glc__hazard_piece *v = s->v;
    size_t n = s->n;
    if (n == 0 || v[n - 1].end < b || (v[n - 1].end == b && v[n - 1].id != id)) {
        v[n] = (glc__hazard_piece){b, e, id};
        s->n = n + 1;
        h->entries++;
        return;
    }
    size_t i = first_end_after(v, n, b);
    if (i < n && v[i].begin == b && v[i].end == e &&
        (i == 0 || v[i - 1].end != b || v[i - 1].id != id) &&
        (i + 1 == n || v[i + 1].begin != e || v[i + 1].id != id)) {
        v[i].id = id;
        return;
    }
    paint_general(h, s, b, e, id, i);
}

/* Moves the tail's ranges into the pieces, oldest first. */
static void flush_tail(glc__hazard *h, glc__hazard_set *s)
{
    for (unsigned k = 0; k < s->nt; k++)
        paint(h, s, s->tb[k], s->te[k], s->tid[k]);
    h->entries -= s->nt;
    s->nt = 0;
}

/* Adds [b, e) (non-empty) with `id` to set `set` of `buf`; room was made
 * by set_room. A range equal to the newest one only takes its id: a tensor
 * read by consecutive dispatches keeps one lane. */
static inline void set_add(glc__hazard *h, glc__hazard_buf *buf, int set,
                           uint64_t b, uint64_t e, uint32_t id)
{
    glc__hazard_set *s = &buf->set[set];
    uint32_t nt = s->nt;
    h->slots[buf->slot].rec |= REC_HAS(set);
    if (nt > 0 && s->tb[nt - 1] == b && s->te[nt - 1] == e) {
        s->tid[nt - 1] = id;
        return;
    }
    if (nt == TAIL) {
        flush_tail(h, s);
        nt = 0;
    }
    s->tb[nt] = b;
    s->te[nt] = e;
    s->tid[nt] = id;
    s->nt = nt + 1;
    h->entries++;
}

glc_status glc__hazard_add(glc__hazard *h, const glc__span *spans, int n,
                           uint32_t id)
{
    if (n < 0 || (n > 0 && !spans))
        return GLC_ERR_INVALID_ARG;

    /* Phase 1: validation, records and room; on failure the records it
     * created are dropped again. The records of the first spans are
     * remembered for phase 2 (a record's index is stable; its address is
     * not, while the record array may grow). */
    enum { REMEMBER = 32 };
    uint32_t rec_of[REMEMBER];
    size_t first_new = h->nbufs;
    glc_status st = GLC_ERR_INVALID_ARG;
    uint32_t stamp = ++h->stamp;
    for (int k = 0; k < n; k++) {
        const glc__span *sp = &spans[k];
        uint32_t acc = sp->access;
        if (sp->begin > sp->end || acc < 1 || acc > 3)
            goto fail;
        if (sp->begin == sp->end)
            continue;
        glc__hazard_buf *buf = find_buf(h, sp->buffer);
        if (!buf && !(buf = create_buf(h, sp->buffer)))
            goto oom;
        if (k < REMEMBER)
            rec_of[k] = (uint32_t)(buf - h->bufs);
        if (buf->stamp != stamp) {
            buf->stamp = stamp;
            buf->need[SET_READ] = buf->need[SET_WRITE] = 0;
        }
        if ((acc & GLC_READ) &&
            !set_room(&buf->set[SET_READ], ++buf->need[SET_READ]))
            goto oom;
        if ((acc & GLC_WRITE) &&
            !set_room(&buf->set[SET_WRITE], ++buf->need[SET_WRITE]))
            goto oom;
    }

    /* Phase 2: appends and paints; cannot fail. */
    for (int k = 0; k < n; k++) {
        const glc__span *sp = &spans[k];
        if (sp->begin == sp->end)
            continue;
        glc__hazard_buf *buf =
            k < REMEMBER ? &h->bufs[rec_of[k]] : find_buf(h, sp->buffer);
        if (sp->access & GLC_READ)
            set_add(h, buf, SET_READ, sp->begin, sp->end, id);
        if (sp->access & GLC_WRITE)
            set_add(h, buf, SET_WRITE, sp->begin, sp->end, id);
    }
    return GLC_OK;

oom:
    st = GLC_ERR_OUT_OF_MEMORY;
fail:
    drop_new_bufs(h, first_new);
    return st;
}

void glc__hazard_clear(glc__hazard *h)
{
    for (size_t r = 0; r < h->nbufs; r++) {
        glc__hazard_buf *b = &h->bufs[r];
        h->slots[b->slot].rec = 0;
        b->set[SET_READ].nt = b->set[SET_WRITE].nt = 0;
        b->set[SET_READ].n = b->set[SET_WRITE].n = 0;
    }
    h->nbufs = 0;
    h->entries = 0;
}

size_t glc__hazard_entries(const glc__hazard *h)
{
    return h->entries;
}
