/*
 * The brute-force hazard oracle: the definition of a conflict, written as
 * plainly as possible so that it can be trusted without a proof.
 *
 * It keeps every dispatch since the last barrier (its id and a copy of its
 * non-empty spans, in order) and checks a new dispatch against every kept
 * span: same buffer, overlapping half-open ranges, and accesses that
 * conflict (new read / old write: RAW; new write / old read: WAR; new
 * write / old write: WAW). Nothing is merged or summarised, so it also knows
 * exactly which earlier dispatch conflicts.
 *
 * It is the reference the tracker is tested against on random streams, and
 * it validates emitted streams under GLC_VALIDATE (glc__oracle_validate).
 * Costs are quadratic on purpose; it is never on the fast path.
 *
 * Invariants: spans[0, nspans) holds the spans of disp[0, ndisp) in order,
 * disp[i] owning spans[first, first + n); empty spans are not kept (they
 * never conflict). Add reserves both arrays before it changes anything, so
 * out-of-memory leaves the oracle as it was.
 */
#include "hazard.h"

#include "alloc.h"

#include <string.h>

void glc__oracle_init(glc__oracle *o)
{
    memset(o, 0, sizeof *o);
}

void glc__oracle_finish(glc__oracle *o)
{
    glc__free(o->spans);
    glc__free(o->disp);
    memset(o, 0, sizeof *o);
}

/* The kinds by which a new span with access `a` conflicts with an earlier
 * one with access `e`, their ranges overlapping. */
static unsigned pair_kinds(uint32_t a, uint32_t e)
{
    unsigned k = 0;
    if ((a & GLC_READ) && (e & GLC_WRITE))
        k |= GLC__HAZ_RAW;
    if ((a & GLC_WRITE) && (e & GLC_READ))
        k |= GLC__HAZ_WAR;
    if ((a & GLC_WRITE) && (e & GLC_WRITE))
        k |= GLC__HAZ_WAW;
    return k;
}

unsigned glc__oracle_check(const glc__oracle *o, const glc__span *spans,
                           int n, glc__conflict *why)
{
    unsigned kinds = 0;
    int found = 0;
    glc__conflict first = {0, 0, 0, 0, 0};

    for (size_t d = 0; d < o->ndisp; d++) {
        const glc__oracle_disp *dp = &o->disp[d];
        for (int k = 0; k < n; k++) {
            const glc__span *a = &spans[k];
            if (a->begin >= a->end)
                continue;
            for (size_t t = dp->first; t < dp->first + dp->n; t++) {
                const glc__span *e = &o->spans[t];
                if (e->buffer != a->buffer || a->begin >= e->end ||
                    e->begin >= a->end)
                    continue;
                unsigned k2 = pair_kinds(a->access, e->access);
                if (!k2)
                    continue;
                kinds |= k2;
                if (!found) {
                    found = 1;
                    first.earlier = dp->id;
                    first.buffer = a->buffer;
                    first.begin = a->begin > e->begin ? a->begin : e->begin;
                    first.end = a->end < e->end ? a->end : e->end;
                }
            }
        }
    }
    if (kinds && why) {
        first.kinds = kinds;
        *why = first;
    }
    return kinds;
}

/* Makes room for `want` elements of `size` bytes; 0 when out of memory. */
static int reserve(void **p, size_t *cap, size_t want, size_t size)
{
    if (want <= *cap)
        return 1;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < want) {
        if (ncap > SIZE_MAX / 2 / size)
            return 0;
        ncap *= 2;
    }
    void *np = glc__realloc(*p, ncap * size);
    if (!np)
        return 0;
    *p = np;
    *cap = ncap;
    return 1;
}

glc_status glc__oracle_add(glc__oracle *o, const glc__span *spans, int n,
                           uint32_t id)
{
    if (!glc__spans_valid(spans, n))
        return GLC_ERR_INVALID_ARG;
    size_t kept = 0;
    for (int k = 0; k < n; k++)
        kept += spans[k].begin < spans[k].end;

    void *p = o->spans;
    if (!reserve(&p, &o->span_cap, o->nspans + kept, sizeof *o->spans))
        return GLC_ERR_OUT_OF_MEMORY;
    o->spans = p;
    p = o->disp;
    if (!reserve(&p, &o->disp_cap, o->ndisp + 1, sizeof *o->disp))
        return GLC_ERR_OUT_OF_MEMORY;
    o->disp = p;

    glc__oracle_disp *dp = &o->disp[o->ndisp++];
    dp->id = id;
    dp->first = o->nspans;
    dp->n = kept;
    for (int k = 0; k < n; k++)
        if (spans[k].begin < spans[k].end)
            o->spans[o->nspans++] = spans[k];
    return GLC_OK;
}

void glc__oracle_clear(glc__oracle *o)
{
    o->nspans = 0;
    o->ndisp = 0;
}

glc_status glc__oracle_validate(const glc__event *ev, size_t n, size_t *bad,
                                glc__conflict *why)
{
    if (n > 0 && !ev)
        return GLC_ERR_INVALID_ARG;

    glc__oracle o;
    glc_status st = GLC_OK;
    glc__oracle_init(&o);
    for (size_t i = 0; i < n; i++) {
        if (ev[i].is_barrier) {
            glc__oracle_clear(&o);
            continue;
        }
        if (!glc__spans_valid(ev[i].spans, ev[i].n)) {
            if (bad)
                *bad = i;
            st = GLC_ERR_INVALID_ARG;
            break;
        }
        glc__conflict c;
        if (glc__oracle_check(&o, ev[i].spans, ev[i].n, &c)) {
            if (bad)
                *bad = i;
            if (why)
                *why = c;
            st = GLC_ERR_HAZARD;
            break;
        }
        st = glc__oracle_add(&o, ev[i].spans, ev[i].n, ev[i].id);
        if (st != GLC_OK)
            break;
    }
    glc__oracle_finish(&o);
    return st;
}
