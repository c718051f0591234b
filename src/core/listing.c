/*
 * The listing of a compiled plan (glc_plan_dump, see listing.h): its
 * buffers, tensors, barriers and dispatches as text, and optionally each
 * program's source. GL-free: what only the GL side knows comes through
 * the view.
 */
#include "listing.h"

#include "alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct dumper {
    glc_text_fn fn;
    void *user;
} dumper;

static void put(const dumper *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(const dumper *d, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    d->fn(d->user, line);
}

static const char *access_name(glc_access a)
{
    return a == GLC_READ ? "read" : a == GLC_WRITE ? "write" : "read_write";
}

/* "#define A 1\n#define B x\n" as "A=1 B=x". */
static const char *compact_defines(const char *defs, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    while (defs && *defs) {
        const char *end = strchr(defs, '\n');
        size_t l = end ? (size_t)(end - defs) : strlen(defs);
        const char *s = defs;
        if (l > 8 && strncmp(s, "#define ", 8) == 0) {
            const char *sp;
            s += 8;
            l -= 8;
            sp = memchr(s, ' ', l);
            if (n < len)
                n += (size_t)snprintf(buf + n, len - n, "%s%.*s%s%.*s", n ? " " : "",
                                      (int)(sp ? (size_t)(sp - s) : l), s, sp ? "=" : "",
                                      sp ? (int)(l - (size_t)(sp - s) - 1) : 0, sp ? sp + 1 : "");
        }
        defs = end ? end + 1 : defs + l;
    }
    return buf;
}

static const char *tensor_label(const glc_graph *g, int32_t t, char *buf, size_t len)
{
    size_t k;
    if (t < 0)
        return "scratch";
    if (g->t[t].name)
        return g->t[t].name;
    for (k = 0; k < g->nout; k++)
        if (g->out[k].tensor == t)
            return g->out[k].name;
    snprintf(buf, len, "t%d", (int)t);
    return buf;
}

static const char *barrier_names(unsigned bits, char *buf, size_t len)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{GLC__BARRIER_STORAGE, "storage"},
                 {GLC__BARRIER_BUFFER_UPDATE, "buffer_update"},
                 {GLC__BARRIER_UNIFORM, "uniform"},
                 {GLC__BARRIER_COMMAND, "command"}};
    size_t i, n = 0;
    buf[0] = '\0';
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((bits & names[i].bit) && n < len) {
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", names[i].name);
            bits &= ~names[i].bit;
        }
    if (bits && n < len)
        snprintf(buf + n, len - n, "%s0x%x", n ? " " : "", bits);
    return buf;
}

static void dump_tensors(const glc__listing *v, const dumper *d)
{
    static const struct {
        glc__tkind kind;
        const char *word;
    } kinds[] = {{GLC__T_INPUT, "input"}, {GLC__T_PARAM, "param"}, {GLC__T_HANDLE, "handle"}};
    const glc_graph *g = v->g;
    char sh[96];
    size_t i, k;
    for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (i = 0; i < g->nt; i++) {
            const glc__place *pl = &v->prog->place[i];
            glc__tensor t;
            if (g->t[i].kind != kinds[k].kind)
                continue;
            glc__graph_tensor_at(g, (int32_t)i, v->prog->vals, &t);
            if (pl->region == GLC__REGION_NONE)
                put(d, "%s %s: %s, unused\n", kinds[k].word, g->t[i].name,
                    glc__shape_str(&t, sh, sizeof sh));
            else
                put(d, "%s %s: %s at b%d[%zu, %zu)%s\n", kinds[k].word, g->t[i].name,
                    glc__shape_str(&t, sh, sizeof sh), pl->buffer, pl->offset,
                    pl->offset + glc__tensor_bytes(&t),
                    v->shared(v->ctx, (int32_t)i) ? " (shared: another plan's storage)" : "");
        }
    for (k = 0; k < g->nout; k++) {
        int32_t id = g->out[k].tensor;
        const glc__place *pl = &v->prog->place[id];
        glc__tensor t;
        glc__graph_tensor_at(g, id, v->prog->vals, &t);
        put(d, "output %s: %s at b%d[%zu, %zu)\n", g->out[k].name,
            glc__shape_str(&t, sh, sizeof sh), pl->buffer, pl->offset,
            pl->offset + glc__tensor_bytes(&t));
    }
}

static void dump_dispatch(const glc__listing *v, const dumper *d, size_t i,
                          const glc__listing_cmd *c)
{
    char defs[512], tn[24], bn[64];
    int j;
    if (c->barrier)
        put(d, "barrier: %s (before dispatch %zu)\n", barrier_names(c->barrier, bn, sizeof bn), i);
    put(d, "dispatch %zu: %s (%s), level %u, groups %u = [%u, %u, %u], local %u%s%s\n", i,
        c->kernel, c->label ? c->label : "", v->prog->step[v->prog->cmd[i].step].level,
        c->total_groups, c->grid[0], c->grid[1], c->grid[2], c->local_size,
        c->defines[0] ? ", defines " : "", compact_defines(c->defines, defs, sizeof defs));
    for (j = 0; j < c->nbind; j++) {
        const glc__listing_bind *b = &c->bind[j];
        if (b->buffer < 0)
            put(d, "  bind %d: shared(gl %u)[%zu, %zu) %s %s\n", j, b->gl_name, b->offset,
                b->offset + b->size, access_name(b->access),
                tensor_label(v->g, b->tensor, tn, sizeof tn));
        else
            put(d, "  bind %d: b%d[%zu, %zu) %s %s\n", j, b->buffer, b->offset,
                b->offset + b->size, access_name(b->access),
                tensor_label(v->g, b->tensor, tn, sizeof tn));
    }
}

/* The source of each distinct program, in order of first use. */
static glc_status dump_sources(const glc__listing *v, const dumper *d)
{
    glc__listing_cmd c, o;
    char defs[512];
    size_t i, k;
    for (i = 0; i < v->prog->ncmd; i++) {
        char *src;
        size_t len;
        int oom = 0;
        v->cmd(v->ctx, i, &c);
        for (k = 0; k < i; k++) {
            v->cmd(v->ctx, k, &o);
            if (o.program == c.program)
                break;
        }
        if (k < i)
            continue;
        if (!(src = v->source(v->ctx, i, &oom))) {
            if (oom)
                return GLC_ERR_OUT_OF_MEMORY;
            continue;
        }
        put(d, "---- kernel %s (local %u%s%s), first at dispatch %zu ----\n", c.kernel,
            c.local_size, c.defines[0] ? "; " : "", compact_defines(c.defines, defs, sizeof defs),
            i);
        d->fn(d->user, src);
        len = strlen(src);
        if (len && src[len - 1] != '\n')
            d->fn(d->user, "\n");
        glc__free(src);
    }
    return GLC_OK;
}

glc_status glc__listing_write(const glc__listing *v, unsigned flags, glc_text_fn fn, void *user)
{
    const glc__program *pr = v->prog;
    const glc_plan_info *info = &v->info;
    glc__listing_cmd c;
    dumper d;
    size_t i;
    int b, k;
    d.fn = fn;
    d.user = user;
    put(&d, "plan: %u steps, %u dispatches, %u barriers (the ops' DAG: %u levels, %u at least)\n",
        info->steps, info->dispatches, info->barriers, info->levels, info->min_barriers);
    put(&d,
        "memory: arena %zu bytes in %d buffer%s (liveness bound %zu; lifetimes in ops %zu, in "
        "levels %zu), params %zu bytes\n",
        info->arena_bytes, info->arena_buffers, info->arena_buffers == 1 ? "" : "s",
        info->liveness_bound, info->liveness_bound_ops, info->liveness_bound_levels,
        info->params_bytes);
    for (k = 0; k < v->g->nvars; k++)
        put(&d, "var %s = %lld (bounds %lld..%lld)\n", v->g->var[k].name,
            (long long)pr->vals[k], (long long)v->g->var[k].min, (long long)v->g->var[k].max);
    for (b = 0; b < pr->nbuffers; b++)
        put(&d, "buffer b%d: %s, %zu bytes\n", b,
            b < pr->narena ? "arena" : b < pr->nparams ? "params" : "handle",
            pr->buffer_bytes[b]);
    dump_tensors(v, &d);
    for (i = 0; i < pr->ncmd; i++) {
        v->cmd(v->ctx, i, &c);
        dump_dispatch(v, &d, i, &c);
    }
    return flags & GLC_PLAN_DUMP_SOURCE ? dump_sources(v, &d) : GLC_OK;
}
