/*
 * Reorder pass (see reorder.h). Invariant: a command is emitted only after
 * every earlier command it conflicts with (RAW, WAR or WAW on overlapping
 * bytes), so the permutation preserves every dependency. `group` holds the
 * spans emitted since the point where a barrier will fall; `skipped` holds
 * the commands a pulled-forward command jumps over. Both are hazard
 * trackers, so each test costs what a dispatch's tracking costs.
 */
#include "reorder.h"

#include "alloc.h"

#include <string.h>

void glc__reorder_init(glc__reorder *r)
{
    memset(r, 0, sizeof *r);
    glc__hazard_init(&r->group);
    glc__hazard_init(&r->skipped);
}

void glc__reorder_finish(glc__reorder *r)
{
    glc__hazard_finish(&r->group);
    glc__hazard_finish(&r->skipped);
    glc__free(r->taken);
    memset(r, 0, sizeof *r);
}

static void identity(size_t *order, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        order[i] = i;
}

glc_status glc__reorder_run(glc__reorder *r, const glc__reorder_item *items, size_t n,
                            size_t window, size_t *order)
{
    size_t i = 0, out = 0, j;
    glc_status st = GLC_OK;
    identity(order, n);
    if (window == 0 || n < 3)
        return GLC_OK;
    if (n > r->cap) {
        unsigned char *t = glc__realloc(r->taken, n);
        if (!t)
            return GLC_ERR_OUT_OF_MEMORY;
        r->taken = t;
        r->cap = n;
    }
    memset(r->taken, 0, n);
    glc__hazard_clear(&r->group);
    while (i < n && st == GLC_OK) {
        const glc__reorder_item *c = &items[i];
        if (r->taken[i]) {
            i++;
            continue;
        }
        if (c->fence) {
            order[out++] = i;
            r->taken[i++] = 1;
            glc__hazard_clear(&r->group);
            continue;
        }
        if (glc__hazard_check(&r->group, c->spans, c->n, NULL)) {
            /* a barrier falls before c: first pull forward what can share
             * the current group */
            glc__hazard_clear(&r->skipped);
            st = glc__hazard_add(&r->skipped, c->spans, c->n, (uint32_t)i);
            for (j = i + 1; j < n && j <= i + window && st == GLC_OK; j++) {
                const glc__reorder_item *d = &items[j];
                if (r->taken[j])
                    continue;
                if (d->fence)
                    break;
                if (!glc__hazard_check(&r->group, d->spans, d->n, NULL) &&
                    !glc__hazard_check(&r->skipped, d->spans, d->n, NULL)) {
                    st = glc__hazard_add(&r->group, d->spans, d->n, (uint32_t)j);
                    order[out++] = j;
                    r->taken[j] = 1;
                } else {
                    st = glc__hazard_add(&r->skipped, d->spans, d->n, (uint32_t)j);
                }
            }
            glc__hazard_clear(&r->group);
        }
        if (st == GLC_OK)
            st = glc__hazard_add(&r->group, c->spans, c->n, (uint32_t)i);
        order[out++] = i;
        r->taken[i++] = 1;
    }
    if (st != GLC_OK) {
        identity(order, n);
        return st;
    }
    return GLC_OK;
}
