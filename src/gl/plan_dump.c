/*
 * The listing of a compiled plan (glc_plan_dump): its buffers, tensors,
 * barriers and dispatches as text, and optionally each program's source.
 * Made from the command list alone: no GL call.
 */
#include "plan.h"

#include "alloc.h"
#include "buffer.h"
#include "errmsg.h"
#include "kernel.h"

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

static const char *tensor_label(const glc_plan *p, int32_t t, char *buf, size_t len)
{
    size_t k;
    if (t < 0)
        return "scratch";
    if (p->g->t[t].name)
        return p->g->t[t].name;
    for (k = 0; k < p->g->nout; k++)
        if (p->g->out[k].tensor == t)
            return p->g->out[k].name;
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

static void dump_tensors(const glc_plan *p, const dumper *d)
{
    static const struct {
        glc__tkind kind;
        const char *word;
    } kinds[] = {{GLC__T_INPUT, "input"}, {GLC__T_PARAM, "param"}, {GLC__T_HANDLE, "handle"}};
    char sh[96];
    size_t i, k;
    for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (i = 0; i < p->g->nt; i++) {
            const glc__place *pl = &p->prog.place[i];
            glc__tensor t;
            if (p->g->t[i].kind != kinds[k].kind)
                continue;
            glc__graph_tensor_at(p->g, (int32_t)i, p->prog.vals, &t);
            if (pl->region == GLC__REGION_NONE)
                put(d, "%s %s: %s, unused\n", kinds[k].word, p->g->t[i].name,
                    glc__shape_str(&t, sh, sizeof sh));
            else
                put(d, "%s %s: %s at b%d[%zu, %zu)%s\n", kinds[k].word, p->g->t[i].name,
                    glc__shape_str(&t, sh, sizeof sh), pl->buffer, pl->offset,
                    pl->offset + glc__tensor_bytes(&t),
                    p->ext[i].buf ? " (shared: another plan's storage)" : "");
        }
    for (k = 0; k < p->g->nout; k++) {
        int32_t id = p->g->out[k].tensor;
        const glc__place *pl = &p->prog.place[id];
        glc__tensor t;
        glc__graph_tensor_at(p->g, id, p->prog.vals, &t);
        put(d, "output %s: %s at b%d[%zu, %zu)\n", p->g->out[k].name,
            glc__shape_str(&t, sh, sizeof sh), pl->buffer, pl->offset,
            pl->offset + glc__tensor_bytes(&t));
    }
}

static void dump_dispatch(const glc_plan *p, const dumper *d, size_t i)
{
    const glc__cmd *c = &p->cmds[i];
    const glc__ccmd *cc = &p->prog.cmd[i];
    char defs[512], tn[24], bn[64];
    int j;
    if (p->bar[i])
        put(d, "barrier: %s (before dispatch %zu)\n", barrier_names(p->bar[i], bn, sizeof bn), i);
    put(d, "dispatch %zu: %s (%s), groups %u = [%u, %u, %u], local %u%s%s\n", i,
        c->kernel->name, c->label ? c->label : "", c->total_groups, c->grid[0], c->grid[1],
        c->grid[2], c->kernel->local_size_x, c->kernel->defines[0] ? ", defines " : "",
        compact_defines(c->kernel->defines, defs, sizeof defs));
    for (j = 0; j < c->nbind; j++) {
        int32_t t = cc->bind[j].tensor;
        int shared = c->bind[j].buffer != p->buf[cc->bind[j].buffer];
        if (shared)
            put(d, "  bind %d: shared(gl %u)[%zu, %zu) %s %s\n", j, c->bind[j].buffer->name,
                c->bind[j].offset, c->bind[j].offset + c->bind[j].size,
                access_name(c->bind[j].access), tensor_label(p, t, tn, sizeof tn));
        else
            put(d, "  bind %d: b%d[%zu, %zu) %s %s\n", j, cc->bind[j].buffer, c->bind[j].offset,
                c->bind[j].offset + c->bind[j].size, access_name(c->bind[j].access),
                tensor_label(p, t, tn, sizeof tn));
    }
}

/* The source of each distinct program, in order of first use. */
static glc_status dump_sources(const glc_plan *p, const dumper *d)
{
    char defs[512];
    size_t i, k;
    for (i = 0; i < p->prog.ncmd; i++) {
        const glc_kernel *kn = p->cmds[i].kernel;
        const char *body = glc__glsl_find(kn->name);
        char *src;
        size_t len;
        for (k = 0; k < i && p->cmds[k].kernel != kn; k++)
            ;
        if (k < i || !body)
            continue;
        src = glc__kernel_source(p->dev, kn->name, body, kn->defines, kn->local_size_x);
        if (!src)
            return glc__fail(p->dev, GLC_ERR_OUT_OF_MEMORY, "glc_plan_dump: out of memory");
        put(d, "---- kernel %s (local %u%s%s), first at dispatch %zu ----\n", kn->name,
            kn->local_size_x, kn->defines[0] ? "; " : "",
            compact_defines(kn->defines, defs, sizeof defs), i);
        d->fn(d->user, src);
        len = strlen(src);
        if (len && src[len - 1] != '\n')
            d->fn(d->user, "\n");
        glc__free(src);
    }
    return GLC_OK;
}

glc_status glc_plan_dump(const glc_plan *p, unsigned flags, glc_text_fn fn, void *user)
{
    const glc__program *pr;
    glc_plan_info info;
    dumper d;
    size_t i;
    int b, v;
    GLC__ARG(NULL, p);
    if (!fn || (flags & ~(unsigned)GLC_PLAN_DUMP_SOURCE))
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG,
                         "glc_plan_dump: %s", fn ? "unknown flags" : "fn is NULL");
    glc__use_device(p->dev); /* the sources are allocated */
    pr = &p->prog;
    d.fn = fn;
    d.user = user;
    glc_plan_stats(p, &info);
    put(&d, "plan: %u steps, %u dispatches, %u barriers\n", info.steps, info.dispatches,
        info.barriers);
    put(&d, "memory: arena %zu bytes in %d buffer%s (liveness bound %zu), params %zu bytes\n",
        info.arena_bytes, info.arena_buffers, info.arena_buffers == 1 ? "" : "s",
        info.liveness_bound, info.params_bytes);
    for (v = 0; v < p->g->nvars; v++)
        put(&d, "var %s = %lld (bounds %lld..%lld)\n", p->g->var[v].name,
            (long long)pr->vals[v], (long long)p->g->var[v].min, (long long)p->g->var[v].max);
    for (b = 0; b < pr->nbuffers; b++)
        put(&d, "buffer b%d: %s, %zu bytes\n", b,
            b < pr->narena ? "arena" : b < pr->nparams ? "params" : "handle",
            pr->buffer_bytes[b]);
    dump_tensors(p, &d);
    for (i = 0; i < pr->ncmd; i++)
        dump_dispatch(p, &d, i);
    return flags & GLC_PLAN_DUMP_SOURCE ? dump_sources(p, &d) : GLC_OK;
}

