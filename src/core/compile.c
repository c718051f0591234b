/*
 * The graph compiler (see compile.h): live steps, plans, memory plan,
 * commands, barriers. GL-free; plan.c owns the GL side.
 */
#include "compile.h"

#include "alloc.h"
#include "fuse.h"
#include "memplan.h"
#include "reorder.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static glc_status cfail(char *err, size_t len, glc_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static glc_status cfail(char *err, size_t len, glc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return st;
}

/* A param or handle (`what`) one SSBO cannot hold. */
static glc_status too_large(char *err, size_t len, const char *what, const char *name,
                            size_t bytes, size_t max)
{
    return cfail(err, len, GLC_ERR_BOUNDS,
                 "glc_graph_compile: %s \"%s\" has %zu bytes, more than the device's largest "
                 "SSBO (%zu)",
                 what, name, bytes, max);
}

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static size_t tensor_bytes_at(const glc_graph *g, int32_t id, const int64_t *vals)
{
    glc__tensor t;
    glc__graph_tensor_at(g, id, vals, &t);
    return glc__tensor_bytes(&t);
}

/* 1 when node n has a dim or a scalar arg that follows a variable. */
static int node_has_vars(const glc_graph *g, const glc__gnode *n)
{
    int i, d;
    for (i = 0; i <= n->args.nin; i++) {
        int32_t id = n->tensor[i];
        if (id < 0)
            continue;
        for (d = 0; d < g->t[id].rank; d++)
            if (g->t[id].shape[d] < 0)
                return 1;
    }
    for (i = 0; i < GLC__OP_NI; i++)
        if (n->raw.i[i] != n->args.i[i])
            return 1;
    return 0;
}

/* Plans step s for the variable values vals (NULL: maxima). */
static glc_status plan_step(glc__program *p, glc__cstep *s, const int64_t *vals, char *err,
                            size_t len)
{
    glc__op_args a;
    glc_status st;
    err[0] = '\0';
    if ((st = glc__graph_node_args(p->g, s->node, vals, &a, err, len)) != GLC_OK)
        return st;
    memset(&s->plan, 0, sizeof s->plan);
    if ((st = glc__op_make_plan(&a, &p->target, &s->plan, err, len)) != GLC_OK)
        return st;
    s->args = a;
    return GLC_OK;
}

/* ---- schedule ----
 * Steps go in levels of their dependency DAG (a step's level is one more
 * than the highest of the earlier steps it conflicts with: both touch
 * overlapping bytes of one tensor, by alias roots, and either writes, as
 * the plans' bindings say), stably sorted by level. Every step of a level
 * depends on one of the level before, so the barriers between levels are
 * the ones the data needs: levels - 1, the longest dependency path, is the
 * fewest any order allows. Memory is then planned by level (place_memory):
 * two tensors share bytes only when one's last level ends before the
 * other's first, with a barrier between, so reuse adds none. */

typedef struct access_span {
    int32_t root;
    size_t begin, end;
    int write;
} access_span;

/* The spans step s's dispatches bind, by alias root; returns how many. */
static int step_spans(const glc__program *p, const glc__cstep *s, access_span *out, int cap)
{
    const glc_graph *g = p->g;
    const glc__gnode *nd = &g->n[s->node];
    int d, b, n = 0;
    for (d = 0; d < s->plan.ndisp; d++)
        for (b = 0; b < s->plan.disp[d].nbind && n < cap; b++) {
            const glc__bind_plan *bp = &s->plan.disp[d].bind[b];
            int32_t id;
            size_t off, bytes;
            if (bp->tensor == GLC__SCRATCH || (id = nd->tensor[bp->tensor]) < 0)
                continue;
            bytes = tensor_bytes_at(g, id, NULL);
            out[n].root = glc__alias_root(g, id, &off);
            out[n].begin = off + bp->offset;
            out[n].end = off + bp->offset + (bp->size ? bp->size : bytes);
            out[n].write = (bp->access & GLC_WRITE) != 0;
            n++;
        }
    return n;
}

static int spans_conflict(const access_span *a, int na, const access_span *b, int nb)
{
    int i, j;
    for (i = 0; i < na; i++)
        for (j = 0; j < nb; j++)
            if (a[i].root == b[j].root && (a[i].write || b[j].write) && a[i].begin < b[j].end &&
                b[j].begin < a[i].end)
                return 1;
    return 0;
}

#define STEP_SPANS (GLC__OP_MAX_DISPATCH * GLC__OP_MAX_BIND)

static glc_status schedule_steps(glc__program *p, char *err, size_t len)
{
    size_t n = p->nsteps, i, j, k = 0;
    access_span *sp = glc__malloc((n ? n : 1) * STEP_SPANS * sizeof *sp);
    int *nsp = glc__malloc((n ? n : 1) * sizeof *nsp);
    glc__cstep *sorted = glc__malloc((n ? n : 1) * sizeof *sorted);
    uint32_t lv, top = 0;
    if (!sp || !nsp || !sorted) {
        glc__free(sp);
        glc__free(nsp);
        glc__free(sorted);
        return cfail(err, len, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
    }
    for (i = 0; i < n; i++) {
        nsp[i] = step_spans(p, &p->step[i], sp + i * STEP_SPANS, STEP_SPANS);
        p->step[i].level = 0;
        for (j = 0; j < i; j++)
            if (p->step[j].level + 1 > p->step[i].level &&
                spans_conflict(sp + i * STEP_SPANS, nsp[i], sp + j * STEP_SPANS, nsp[j]))
                p->step[i].level = p->step[j].level + 1;
        if (p->step[i].level > top)
            top = p->step[i].level;
    }
    /* the memory-tight policy keeps the order the graph was built in, which
     * frees values sooner than level by level */
    for (lv = 0; lv <= top && n && !p->tight; lv++)
        for (i = 0; i < n; i++)
            if (p->step[i].level == lv)
                sorted[k++] = p->step[i];
    if (!p->tight)
        memcpy(p->step, sorted, n * sizeof *sorted);
    p->levels = n ? top + 1 : 0;
    glc__free(sp);
    glc__free(nsp);
    glc__free(sorted);
    return GLC_OK;
}

/* ---- memory ---- */

/* Step i's time in lifetimes by level or by step. */
static int32_t unit_of(const glc__program *p, size_t i, int by_level)
{
    return by_level ? (int32_t)p->step[i].level : (int32_t)i;
}

/* Each tensor's first and last use (-1: none) in levels or steps (steps
 * in level order but under the memory-tight policy, whose levels are not
 * sorted: a tensor then spans from its lowest level to its highest).
 * Outputs live past the last unit (read after the run); a tensor that is
 * part of another (alias) keeps that one alive. */
static void lifetimes(const glc__program *p, int by_level, int32_t *first, int32_t *last)
{
    const glc_graph *g = p->g;
    size_t i;
    int j;
    for (i = 0; i < g->nt; i++)
        first[i] = last[i] = -1;
    for (i = 0; i < p->nsteps; i++) {
        const glc__gnode *nd = &g->n[p->step[i].node];
        int32_t u = unit_of(p, i, by_level);
        for (j = 0; j <= nd->args.nin; j++) {
            int32_t id = nd->tensor[j];
            if (id < 0)
                continue;
            if (first[id] < 0 || u < first[id])
                first[id] = u;
            if (u > last[id])
                last[id] = u;
        }
    }
    for (i = 0; i < g->nout; i++) {
        int32_t id = g->out[i].tensor;
        if (first[id] < 0)
            first[id] = 0;
        last[id] = by_level ? (int32_t)p->levels : (int32_t)p->nsteps;
    }
    for (i = 0; i < g->nt; i++) {
        size_t off;
        int32_t b = g->t[i].alias ? glc__alias_root(g, (int32_t)i, &off) : -1;
        if (b < 0 || first[i] < 0)
            continue;
        if (first[b] < 0 || first[i] < first[b])
            first[b] = first[i];
        if (last[i] > last[b])
            last[b] = last[i];
    }
}

/* The most aligned bytes of the arena tensors mt[0..nt) (their sizes and
 * kinds set) and the steps' scratch live at once, lifetimes by level or
 * by step; FIXED tensors count throughout: what any placement needs. */
static size_t liveness(const glc__program *p, const glc__mem_tensor *mt, int by_level,
                       int32_t *first, int32_t *last)
{
    const glc_graph *g = p->g;
    size_t i, k, best = 0, units = (by_level ? p->levels : p->nsteps) + 1;
    lifetimes(p, by_level, first, last);
    for (k = 0; k < units; k++) {
        size_t live = 0;
        for (i = 0; i < g->nt + p->nsteps; i++) {
            int64_t f = i < g->nt ? first[i] : unit_of(p, i - g->nt, by_level);
            int64_t l = i < g->nt ? last[i] : f;
            if (mt[i].size && (mt[i].kind == GLC__MEM_FIXED || ((int64_t)k >= f && (int64_t)k <= l)))
                live += (mt[i].size + p->align - 1) / p->align * p->align;
        }
        best = live > best ? live : best;
    }
    return best;
}

static glc_status place_memory(glc__program *p, char *err, size_t len)
{
    const glc_graph *g = p->g;
    glc__mem_tensor *mt;
    glc__memplan mp;
    int32_t *first, *last;
    size_t i, n = g->nt + p->nsteps, params = 0, cur = 0;
    int hidx = 0;
    size_t max_buf = p->target.limits.max_ssbo_size > SIZE_MAX / 4 ? SIZE_MAX / 4 : (size_t)p->target.limits.max_ssbo_size;
    int j, nparams = 0, nhandles = 0;
    glc_status st = GLC_OK;
    mt = glc__calloc(n ? n : 1, sizeof *mt);
    first = glc__malloc((g->nt ? g->nt : 1) * sizeof *first);
    last = glc__malloc((g->nt ? g->nt : 1) * sizeof *last);
    if (!mt || !first || !last) {
        st = cfail(err, len, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
        goto out;
    }
    lifetimes(p, !p->tight, first, last);
    /* arena tensors: inputs and outputs fixed, values shared; params apart */
    for (i = 0; i < g->nt; i++) {
        const glc__gtensor *t = &g->t[i];
        int fixed = t->kind == GLC__T_INPUT;
        size_t k;
        for (k = 0; k < g->nout; k++) {
            size_t off;
            fixed |= glc__alias_root(g, g->out[k].tensor, &off) == (int32_t)i;
        }
        mt[i].size = 0;
        mt[i].first = mt[i].last = 0;
        mt[i].kind = GLC__MEM_SHARED;
        /* bytes even when unused: a param no live op reads is still set
         * with its full size */
        p->place[i].bytes = tensor_bytes_at(g, (int32_t)i, NULL);
        if (first[i] < 0 && t->kind != GLC__T_INPUT && t->kind != GLC__T_HANDLE)
            continue; /* unused */
        if (t->alias)
            continue; /* placed with what it is part of, below */
        if (t->kind == GLC__T_PARAM) {
            p->place[i].region = GLC__REGION_PARAMS;
            continue;
        }
        if (t->kind == GLC__T_HANDLE) {
            p->place[i].region = GLC__REGION_HANDLE;
            nhandles++;
            continue;
        }
        p->place[i].region = GLC__REGION_ARENA;
        mt[i].size = p->place[i].bytes;
        mt[i].first = first[i] < 0 ? 0 : first[i];
        mt[i].last = last[i] < 0 ? 0 : last[i];
        mt[i].kind = fixed ? GLC__MEM_FIXED : GLC__MEM_SHARED;
    }
    for (i = 0; i < p->nsteps; i++) {
        glc__mem_tensor *s = &mt[g->nt + i];
        s->size = p->step[i].plan.scratch_bytes;
        s->first = s->last = unit_of(p, i, !p->tight);
        s->kind = GLC__MEM_SHARED;
    }
    if ((st = glc__memplan_make(mt, n, p->align, max_buf, &mp, err, len)) != GLC_OK)
        goto out;
    /* params: one after another, a new buffer when one is full */
    for (i = 0; i < g->nt; i++) {
        glc__place *pl = &p->place[i];
        if (pl->region != GLC__REGION_PARAMS)
            continue;
        if (pl->bytes > max_buf) {
            st = too_large(err, len, "param", g->t[i].name, pl->bytes, max_buf);
            glc__memplan_finish(&mp);
            goto out;
        }
        if (nparams == 0 || cur + pl->bytes > max_buf) {
            nparams++;
            cur = 0;
        }
        pl->buffer = nparams - 1; /* made absolute below */
        pl->offset = cur;
        cur = round_up(cur + pl->bytes, p->align);
        params += round_up(pl->bytes, p->align);
    }
    p->narena = mp.nbuffers;
    p->nparams = mp.nbuffers + nparams;
    p->nbuffers = mp.nbuffers + nparams + nhandles;
    p->buffer_bytes = glc__calloc((size_t)(p->nbuffers ? p->nbuffers : 1), sizeof *p->buffer_bytes);
    if (!p->buffer_bytes) {
        glc__memplan_finish(&mp);
        st = cfail(err, len, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
        goto out;
    }
    for (j = 0; j < mp.nbuffers; j++)
        p->buffer_bytes[j] = mp.buffer_size[j];
    for (i = 0; i < g->nt; i++) {
        glc__place *pl = &p->place[i];
        if (pl->region == GLC__REGION_ARENA) {
            pl->buffer = mt[i].buffer;
            pl->offset = mt[i].offset;
        } else if (pl->region == GLC__REGION_PARAMS) {
            pl->buffer += p->narena;
            if (pl->offset + pl->bytes > p->buffer_bytes[pl->buffer])
                p->buffer_bytes[pl->buffer] = round_up(pl->offset + pl->bytes, p->align);
        } else if (pl->region == GLC__REGION_HANDLE) {
            if (pl->bytes > max_buf) {
                st = too_large(err, len, "handle", g->t[i].name, pl->bytes, max_buf);
                glc__memplan_finish(&mp);
                goto out;
            }
            pl->buffer = p->nparams + hidx++;
            pl->offset = 0;
            p->buffer_bytes[pl->buffer] = round_up(pl->bytes, 4);
        }
    }
    for (i = 0; i < g->nt; i++) {
        size_t off;
        int32_t b = g->t[i].alias ? glc__alias_root(g, (int32_t)i, &off) : -1;
        if (b < 0 || p->place[b].region == GLC__REGION_NONE)
            continue;
        p->place[i] = p->place[b];
        p->place[i].offset += off;
        p->place[i].bytes = tensor_bytes_at(g, (int32_t)i, NULL);
    }
    for (i = 0; i < p->nsteps; i++) {
        glc__place *pl = &p->scratch[i];
        pl->bytes = mt[g->nt + i].size;
        pl->region = pl->bytes ? GLC__REGION_ARENA : GLC__REGION_NONE;
        pl->buffer = mt[g->nt + i].buffer;
        pl->offset = mt[g->nt + i].offset;
    }
    p->arena_bytes = mp.total;
    p->lower_bound = mp.lower_bound;
    p->bound_steps = liveness(p, mt, 0, first, last);
    p->bound_levels = liveness(p, mt, 1, first, last);
    p->params_bytes = params;
    glc__memplan_finish(&mp);
out:
    glc__free(mt);
    glc__free(first);
    glc__free(last);
    return st;
}

/* ---- commands and barriers ---- */

static int cmd_spans(const glc__ccmd *c, glc__span *sp)
{
    int i, n = 0;
    for (i = 0; i < c->nbind; i++) {
        if (!c->bind[i].size)
            continue;
        sp[n].buffer = (uint32_t)c->bind[i].buffer;
        sp[n].begin = c->bind[i].offset;
        sp[n].end = c->bind[i].offset + c->bind[i].size;
        sp[n].access = c->bind[i].access;
        n++;
    }
    return n;
}

/* The session's reorder pass over the list: independent dispatches pulled
 * together between barriers (dependencies keep their order, so results do
 * not change; only barriers can drop). */
#define REORDER_WINDOW 64

static glc_status reorder_commands(glc__program *p, char *err, size_t len)
{
    glc__reorder r;
    glc__reorder_item *items;
    glc__span *spans;
    glc__ccmd *sorted;
    size_t *order, i;
    glc_status st;
    if (p->ncmd < 3)
        return GLC_OK;
    items = glc__malloc(p->ncmd * sizeof *items);
    spans = glc__malloc(p->ncmd * GLC__OP_MAX_BIND * sizeof *spans);
    sorted = glc__malloc(p->ncmd * sizeof *sorted);
    order = glc__malloc(p->ncmd * sizeof *order);
    st = items && spans && sorted && order ? GLC_OK : GLC_ERR_OUT_OF_MEMORY;
    if (st == GLC_OK) {
        for (i = 0; i < p->ncmd; i++) {
            items[i].spans = spans + i * GLC__OP_MAX_BIND;
            items[i].n = cmd_spans(&p->cmd[i], spans + i * GLC__OP_MAX_BIND);
            items[i].fence = 0;
        }
        glc__reorder_init(&r);
        st = glc__reorder_run(&r, items, p->ncmd, REORDER_WINDOW, order);
        glc__reorder_finish(&r);
    }
    if (st == GLC_OK) {
        for (i = 0; i < p->ncmd; i++)
            sorted[i] = p->cmd[order[i]];
        memcpy(p->cmd, sorted, p->ncmd * sizeof *sorted);
    }
    glc__free(items);
    glc__free(spans);
    glc__free(sorted);
    glc__free(order);
    return st == GLC_OK ? GLC_OK
                        : cfail(err, len, st, "glc_graph_compile: out of memory (reorder)");
}

static glc_status build_commands(glc__program *p, char *err, size_t len)
{
    const glc_graph *g = p->g;
    glc__hazard h;
    glc__span sp[GLC__OP_MAX_BIND];
    size_t i, n = 0, last_barrier = 0;
    int j, k;
    glc_status st = GLC_OK;
    for (i = 0; i < p->nsteps; i++)
        n += (size_t)p->step[i].plan.ndisp;
    if (n > p->cmdcap) {
        glc__ccmd *c = glc__realloc(p->cmd, n * sizeof *c);
        if (!c)
            return cfail(err, len, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
        p->cmd = c;
        p->cmdcap = n;
    }
    p->ncmd = 0;
    for (i = 0; i < p->nsteps; i++) {
        const glc__cstep *s = &p->step[i];
        const glc__gnode *nd = &g->n[s->node];
        for (j = 0; j < s->plan.ndisp; j++) {
            const glc__dispatch_plan *d = &s->plan.disp[j];
            glc__ccmd *c = &p->cmd[p->ncmd++];
            memset(c, 0, sizeof *c);
            c->step = (int)i;
            c->plan = d;
            c->nbind = d->nbind;
            for (k = 0; k < d->nbind; k++) {
                const glc__bind_plan *b = &d->bind[k];
                const glc__place *pl;
                size_t whole;
                if (b->tensor == GLC__SCRATCH) {
                    pl = &p->scratch[i];
                    whole = s->plan.scratch_bytes;
                } else {
                    pl = &p->place[nd->tensor[b->tensor]];
                    whole = glc__tensor_bytes(&s->args.t[b->tensor]);
                }
                /* a size of the plan's own (a packed value's parts) may
                 * reach past the tensor's shape now, not past its memory */
                if (pl->region == GLC__REGION_NONE || whole > pl->bytes || b->offset > whole ||
                    b->size > pl->bytes - b->offset)
                    return cfail(err, len, GLC_ERR_INVALID_ARG,
                                 "%s: binding %d does not fit the memory planned for it",
                                 glc__ops[s->args.op]->name, k);
                c->bind[k].tensor = b->tensor == GLC__SCRATCH ? -1 : nd->tensor[b->tensor];
                c->bind[k].buffer = pl->buffer;
                c->bind[k].offset = pl->offset + b->offset;
                c->bind[k].size = (b->size ? b->size : whole - b->offset);
                c->bind[k].size = (c->bind[k].size + 3) & ~(size_t)3;
                c->bind[k].access = b->access;
                c->bind[k].kind = b->kind;
            }
        }
    }
    if ((st = reorder_commands(p, err, len)) != GLC_OK)
        return st;
    /* barriers: the tracker over the list (the run's start is the caller's) */
    glc__hazard_init(&h);
    p->barriers = 0;
    for (i = 0; i < p->ncmd && st == GLC_OK; i++) {
        glc__conflict why;
        int ns = cmd_spans(&p->cmd[i], sp);
        if (i > last_barrier && glc__hazard_check(&h, sp, ns, &why)) {
            p->cmd[i].barrier = GLC__BARRIER_STORAGE;
            p->cmd[i].why = why;
            p->barriers++;
            glc__hazard_clear(&h);
            last_barrier = i;
        }
        st = glc__hazard_add(&h, sp, ns, (uint32_t)i + 1);
    }
    glc__hazard_finish(&h);
    if (st != GLC_OK)
        return cfail(err, len, st, "glc_graph_compile: out of memory in the hazard tracker");
    return GLC_OK;
}

/* ---- the compiler ---- */

/* t is needed, and so is everything it is part of. */
static void mark_live(const glc_graph *g, char *live, int32_t t)
{
    for (;;) {
        live[t] = 1;
        if (!g->t[t].alias)
            return;
        t = g->t[t].alias - 1;
    }
}

/* Marks in writer[] the nodes that write persistent state: a handle after
 * a write (an alias of a handle) names its writer as producer, whether it
 * is the node's output (set_rows) or made beside it (a fused product's
 * rope epilogue writing the caches: fuse.c qkv_rope). Such a node runs
 * whether or not anything reads it in this graph. */
static void handle_writers(const glc_graph *g, char *writer)
{
    size_t i, off;
    for (i = 0; i < g->nt; i++)
        if (g->t[i].alias && g->t[i].producer >= 0 &&
            g->t[glc__alias_root(g, (int32_t)i, &off)].kind == GLC__T_HANDLE)
            writer[g->t[i].producer] = 1;
}

glc_status glc__compile(const glc_graph *g, const glc__target *tg, glc__program *p, char *err,
                        size_t len)
{
    return glc__compile_policy(g, tg, 0, p, err, len);
}

glc_status glc__compile_policy(const glc_graph *g, const glc__target *tg, int tight,
                               glc__program *p, char *err, size_t len)
{
    char *live = NULL, *writer = NULL;
    size_t i, k;
    int j;
    glc_status st;
    memset(p, 0, sizeof *p);
    p->g = g;
    p->target = *tg;
    p->tight = tight;
    p->align = tg->limits.ssbo_offset_alignment > 4 ? tg->limits.ssbo_offset_alignment : 4;
    for (j = 0; j < g->nvars; j++)
        p->vals[j] = g->var[j].max;
    if (g->status != GLC_OK)
        return cfail(err, len, g->status, "%s", g->errmsg);
    if (g->nout == 0)
        return cfail(err, len, GLC_ERR_INVALID_ARG, "glc_graph_compile: the graph has no outputs");
    live = glc__calloc(g->nt ? g->nt : 1, 1);
    writer = glc__calloc(g->nn ? g->nn : 1, 1);
    p->place = glc__calloc(g->nt ? g->nt : 1, sizeof *p->place);
    p->step = glc__calloc(g->nn ? g->nn : 1, sizeof *p->step);
    p->scratch = glc__calloc(g->nn ? g->nn : 1, sizeof *p->scratch);
    if (!live || !writer || !p->place || !p->step || !p->scratch) {
        st = cfail(err, len, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
        goto out;
    }
    /* live nodes: what the outputs need, found walking back */
    for (k = 0; k < g->nout; k++)
        mark_live(g, live, g->out[k].tensor);
    handle_writers(g, writer);
    for (i = g->nn; i-- > 0;) {
        const glc__gnode *nd = &g->n[i];
        if (!nd->dead && writer[i])
            mark_live(g, live, nd->tensor[nd->args.nin]);
        if (nd->dead || !live[nd->tensor[nd->args.nin]])
            continue;
        for (j = 0; j < nd->args.nin; j++)
            if (nd->tensor[j] >= 0)
                mark_live(g, live, nd->tensor[j]);
    }
    for (i = 0; i < g->nn; i++) {
        const glc__gnode *nd = &g->n[i];
        glc__cstep *s;
        if (nd->dead || !live[nd->tensor[nd->args.nin]])
            continue;
        s = &p->step[p->nsteps++];
        s->node = i;
        s->vars = node_has_vars(g, nd);
        if ((st = plan_step(p, s, NULL, err, len)) != GLC_OK)
            goto out;
    }
    if ((st = schedule_steps(p, err, len)) != GLC_OK || (st = place_memory(p, err, len)) != GLC_OK)
        goto out;
    st = build_commands(p, err, len);
out:
    glc__free(live);
    glc__free(writer);
    if (st != GLC_OK)
        glc__program_free(p);
    return st;
}

glc_status glc__compile_graph(glc_graph *g, const glc__target *tg, int fuse, int tight,
                              glc__program *p, char *err, size_t len)
{
    glc_status st;
    int fused = 0;
    if (fuse && (st = glc__fuse(g, tg, &fused)) != GLC_OK) {
        memset(p, 0, sizeof *p);
        return cfail(err, len, st, "glc_graph_compile: out of memory");
    }
    if ((st = glc__compile_policy(g, tg, tight, p, err, len)) == GLC_OK)
        p->fused = (uint32_t)fused;
    return st;
}

/* 1 when plan b is plan a with other params only: the same kernels,
 * defines, grids and bindings (what the command list and its barriers are
 * made of). */
static int same_but_params(const glc__op_plan *a, const glc__op_plan *b)
{
    int j;
    if (a->ndisp != b->ndisp || a->scratch_bytes != b->scratch_bytes)
        return 0;
    for (j = 0; j < a->ndisp; j++) {
        const glc__dispatch_plan *x = &a->disp[j], *y = &b->disp[j];
        if (strcmp(x->kernel, y->kernel) || strcmp(x->defines, y->defines) ||
            x->local_size != y->local_size || x->groups != y->groups || x->nbind != y->nbind ||
            x->nparams != y->nparams || memcmp(x->bind, y->bind, sizeof x->bind))
            return 0;
    }
    return 1;
}

/* 1 when the ops' tensors have the same presence, dtypes and shapes. */
static int same_tensors(const glc__op_args *a, const glc__op_args *b)
{
    int i;
    if (a->nin + a->nout != b->nin + b->nout)
        return 0;
    for (i = 0; i < a->nin + a->nout; i++) {
        const glc__tensor *x = &a->t[i], *y = &b->t[i];
        if (x->present != y->present || x->dtype != y->dtype || !glc__same_shape(x, y))
            return 0;
    }
    return 1;
}

static glc_status replan(glc__program *p, const int64_t *vals, char *err, size_t len)
{
    size_t i;
    glc_status st;
    int same = 1;
    for (i = 0; i < p->nsteps; i++) {
        glc__cstep *s = &p->step[i];
        glc__op_plan before;
        glc__op_args args_before;
        if (!s->vars)
            continue;
        before = s->plan;
        args_before = s->args;
        if ((st = plan_step(p, s, vals, err, len)) != GLC_OK)
            return st;
        same &= same_but_params(&before, &s->plan) && same_tensors(&args_before, &s->args);
        if (s->plan.scratch_bytes > p->scratch[i].bytes)
            return cfail(err, len, GLC_ERR_UNSUPPORTED,
                         "%s: needs %zu bytes of scratch at these sizes, %zu were planned at "
                         "the maxima",
                         glc__ops[s->args.op]->name, s->plan.scratch_bytes, p->scratch[i].bytes);
    }
    /* only params moved (a KV length, say): the commands point at the
     * steps' plans, so they are current; keep the list and its barriers */
    p->params_only = same;
    return same ? GLC_OK : build_commands(p, err, len);
}

glc_status glc__program_set_vars(glc__program *p, const int64_t *vals, char *err, size_t len)
{
    int v, same = 1;
    glc_status st;
    for (v = 0; v < p->g->nvars; v++)
        same &= p->vals[v] == vals[v];
    if (same)
        return GLC_OK;
    st = replan(p, vals, err, len);
    if (st == GLC_OK) {
        for (v = 0; v < p->g->nvars; v++)
            p->vals[v] = vals[v];
    } else {
        char ignored[64];
        replan(p, p->vals, ignored, sizeof ignored); /* worked before */
    }
    return st;
}

void glc__program_free(glc__program *p)
{
    if (!p)
        return;
    glc__free(p->buffer_bytes);
    glc__free(p->place);
    glc__free(p->scratch);
    glc__free(p->step);
    glc__free(p->cmd);
    memset(p, 0, sizeof *p);
}
