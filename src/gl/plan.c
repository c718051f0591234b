/*
 * Compiled plans, the GL side of the compiler (compile.c): the program's
 * buffers become GL buffers, its commands become ready-to-encode commands
 * (kernel programs fetched, grids folded, bindings resolved, barrier kinds
 * chosen by the device's policy), and the plan's lifetime, params, handles,
 * variables and sharing. The runs are plan_run.c's, the profiled run
 * plan_profile.c's, the listing plan_dump.c's (plan.h says how they
 * depend on this file, and never the other way).
 */
#include "plan.h"

#include "alloc.h"
#include "buffer.h"
#include "convert.h"
#include "device.h"
#include "grid.h"
#include "kernel.h"
#include "op_run.h"
#include "session.h"

#include <stdio.h>
#include <string.h>

static size_t numel_now(const glc_plan *p, int32_t id)
{
    glc__tensor t;
    glc__graph_tensor_at(p->g, id, p->prog.vals, &t);
    return (size_t)glc__numel(&t);
}

/* ---- commands ---- */

static glc_status build_cmds(glc_plan *p)
{
    glc_device *dev = p->dev;
    const glc__program *pr = &p->prog;
    size_t i;
    int j;
    glc_status st;
    if (pr->ncmd > p->cmdcap) {
        glc__cmd *c = glc__realloc(p->cmds, pr->ncmd * sizeof *c);
        unsigned *b;
        if (!c)
            return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
        p->cmds = c;
        b = glc__realloc(p->bar, pr->ncmd * sizeof *b);
        if (!b)
            return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
        p->bar = b;
        p->cmdcap = pr->ncmd;
    }
    p->max_bind = 0;
    for (i = 0; i < pr->ncmd; i++) {
        const glc__ccmd *cc = &pr->cmd[i];
        const glc__dispatch_plan *d = cc->plan;
        glc__cmd *c = &p->cmds[i];
        memset(c, 0, sizeof *c);
        if ((st = glc__kernel_get(dev, d->kernel, d->defines, d->local_size, &c->kernel)) !=
            GLC_OK)
            return st;
        if (glc__grid_fold(d->groups, dev->info.limits.max_group_count, c->grid) != GLC_OK)
            return glc__fail(dev, GLC_ERR_BOUNDS, "%s: %llu work groups: more than a grid holds",
                             glc__ops[pr->step[cc->step].args.op]->name,
                             (unsigned long long)d->groups);
        c->total_groups = (uint32_t)d->groups;
        c->nbind = cc->nbind;
        for (j = 0; j < cc->nbind; j++) {
            size_t aoff;
            /* an alias lives in what it is part of: that one may be shared */
            int32_t t = cc->bind[j].tensor >= 0 ? glc__alias_root(p->g, cc->bind[j].tensor, &aoff)
                                                : -1;
            c->bind[j].buffer = p->buf[cc->bind[j].buffer];
            c->bind[j].offset = cc->bind[j].offset;
            if (t >= 0 && p->ext[t].buf) {
                c->bind[j].buffer = p->ext[t].buf;
                c->bind[j].offset = cc->bind[j].offset - pr->place[t].offset + p->ext[t].offset;
            }
            c->bind[j].size = cc->bind[j].size;
            c->bind[j].access = cc->bind[j].access;
            c->bind[j].kind = cc->bind[j].kind;
            dev->texel_used |= glc__is_texel(c->bind[j].kind);
        }
        if (cc->nbind > p->max_bind)
            p->max_bind = cc->nbind;
        c->nparams = d->nparams;
        memcpy(c->params, d->params, sizeof c->params);
        c->label = glc__ops[pr->step[cc->step].args.op]->name;
        p->bar[i] = dev->barrier_policy == GLC__BARRIERS_ALWAYS ? (i ? GLC__BARRIER_STORAGE : 0u)
                    : dev->barrier_policy == GLC__BARRIERS_NEVER ? 0u
                                                                 : cc->barrier;
    }
    /* what the device's tracker must learn after a replay */
    glc__free(p->tail);
    p->ntail = 0;
    p->tail = glc__malloc((pr->ncmd + 1) * GLC__MAX_BINDINGS * sizeof *p->tail);
    if (!p->tail)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
    if (pr->ncmd) {
        /* from the last barrier on, in the device's buffer ids */
        size_t k = pr->ncmd - 1;
        while (k > 0 && !p->bar[k])
            k--;
        for (; k < pr->ncmd; k++)
            p->ntail += glc__cmd_spans(&p->cmds[k], p->tail + p->ntail);
    }
    return GLC_OK;
}

/* GLC_VALIDATE: the oracle checks the stream the plan will emit. */
static glc_status validate_stream(glc_plan *p)
{
    glc_device *dev = p->dev;
    glc__event *ev;
    glc__span *sp;
    glc__conflict why;
    size_t i, n = 0, bad = 0, ns = 0;
    glc_status st;
    ev = glc__malloc((2 * p->prog.ncmd + 1) * sizeof *ev);
    sp = glc__malloc((p->prog.ncmd + 1) * GLC__MAX_BINDINGS * sizeof *sp);
    if (!ev || !sp) {
        glc__free(ev);
        glc__free(sp);
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "GLC_VALIDATE: out of memory");
    }
    for (i = 0; i < p->prog.ncmd; i++) {
        if (p->bar[i]) {
            memset(&ev[n], 0, sizeof ev[n]);
            ev[n++].is_barrier = 1;
        }
        ev[n].is_barrier = 0;
        ev[n].id = (uint32_t)i + 1;
        ev[n].spans = sp + ns;
        ev[n].n = glc__cmd_spans(&p->cmds[i], sp + ns);
        ns += (size_t)ev[n].n;
        n++;
    }
    st = glc__oracle_validate(ev, n, &bad, &why);
    if (st == GLC_ERR_HAZARD) {
        size_t k = ev[bad].id - 1;
        st = glc__fail(dev, GLC_ERR_HAZARD,
                       "GLC_VALIDATE: plan dispatch %zu (%s \"%s\") %s bytes [%llu, %llu) of "
                       "buffer %u after dispatch %u with no barrier between",
                       k, p->cmds[k].kernel->name, p->cmds[k].label,
                       why.kinds & GLC__HAZ_RAW ? "reads" : "writes",
                       (unsigned long long)why.begin, (unsigned long long)why.end, why.buffer,
                       why.earlier - 1);
    } else if (st != GLC_OK) {
        st = glc__fail(dev, st, "GLC_VALIDATE: out of memory");
    }
    glc__free(ev);
    glc__free(sp);
    return st;
}

/* What command k binds over bytes [begin, end) of program buffer b: a
 * tensor's name, or what made it ("matmul output, tensor 7"), or scratch. */
static const char *bound_over(const glc_plan *p, size_t k, uint32_t b, uint64_t begin,
                              uint64_t end, char *buf, size_t len)
{
    const glc__ccmd *c = &p->prog.cmd[k];
    int j;
    for (j = 0; j < c->nbind; j++) {
        const glc__cbind *x = &c->bind[j];
        const glc__gtensor *t;
        if ((uint32_t)x->buffer != b || x->offset >= end || x->offset + x->size <= begin)
            continue;
        if (x->tensor < 0)
            return "op scratch";
        t = &p->g->t[x->tensor];
        if (t->name)
            snprintf(buf, len, "\"%s\"", t->name);
        else if (t->producer >= 0)
            snprintf(buf, len, "%s output, tensor %d",
                     glc__ops[p->g->n[t->producer].args.op]->name, (int)x->tensor);
        else
            snprintf(buf, len, "tensor %d", (int)x->tensor);
        return buf;
    }
    return "?";
}

/* GLC_TRACE=barriers: each barrier of the command list and the conflict
 * that needs it (at compile and when new variable values rebuild it). */
static void trace_barriers(glc_plan *p)
{
    size_t i;
    if (!p->dev->trace)
        return;
    if (p->dev->barrier_policy == GLC__BARRIERS_ALWAYS)
        glc__trace(p->dev, "plan of %zu dispatches: GLC_BARRIERS=always: a barrier before each "
                   "but the first; those the data needs:", p->prog.ncmd);
    for (i = 0; i < p->prog.ncmd; i++) {
        const glc__conflict *w = &p->prog.cmd[i].why;
        size_t e = w->earlier ? w->earlier - 1 : 0;
        char a[160], b[160];
        if (!p->prog.cmd[i].barrier)
            continue;
        glc__trace(p->dev,
                   "plan barrier before dispatch %zu (%s \"%s\", %s): %s on bytes [%llu, %llu) "
                   "of plan buffer %u with dispatch %zu (%s \"%s\", %s)",
                   i, p->cmds[i].kernel->name, p->cmds[i].label,
                   bound_over(p, i, w->buffer, w->begin, w->end, a, sizeof a),
                   w->kinds & GLC__HAZ_RAW ? "RAW" : w->kinds & GLC__HAZ_WAR ? "WAR" : "WAW",
                   (unsigned long long)w->begin, (unsigned long long)w->end, w->buffer, e,
                   p->cmds[e].kernel->name, p->cmds[e].label,
                   bound_over(p, e, w->buffer, w->begin, w->end, b, sizeof b));
    }
}

static glc_status rebuild(glc_plan *p)
{
    glc_status st = build_cmds(p);
    if (st == GLC_OK && p->dev->validate)
        st = validate_stream(p);
    return st;
}

/* ---- compile / destroy ---- */

/* What the runs and profiled runs made: a pending fence, timer queries,
 * staging buffers and their arrays. */
static void release_runs(glc_plan *p)
{
    glc__glstate gs;
    if ((p->run.pending || p->prof.nqueries) && glc__enter(p->dev, 0, 0, &gs) == GLC_OK) {
        if (p->run.pending)
            p->dev->gl.glDeleteSync(p->run.pending);
        if (p->prof.nqueries)
            p->dev->gl.glDeleteQueriesEXT((GLsizei)p->prof.nqueries, p->prof.queries);
        glc__leave(p->dev, &gs);
    }
    glc_buffer_destroy(p->run.stage_in);
    glc__free(p->run.stage_host);
    glc_buffer_destroy(p->run.stage_out);
    glc__free(p->run.inputs);
    glc__free(p->run.slices);
    glc__free(p->prof.queries);
    glc__free(p->prof.cpu_ns);
}

static void unbind(glc_plan *p, glc__plan_io *io);

void glc_plan_destroy(glc_plan *p)
{
    int i;
    if (!p)
        return;
    release_runs(p);
    for (i = 0; p->in && i < p->nin; i++)
        unbind(p, &p->in[i]);
    for (i = 0; p->out && i < p->nout; i++)
        unbind(p, &p->out[i]);
    if (p->buf)
        for (i = 0; i < p->prog.nbuffers; i++)
            glc_buffer_destroy(p->buf[i]);
    glc__free(p->buf);
    glc__program_free(&p->prog);
    glc_graph_destroy(p->g);
    glc__free(p->cmds);
    glc__free(p->bar);
    glc__free(p->tail);
    glc__free(p->in);
    glc__free(p->out);
    glc__free(p->mirror);
    glc__free(p->stage);
    glc__free(p->param_set);
    glc__free(p->ext);
    p->dev->live_objects--;
    glc__free(p);
}

static glc_status make_io(glc_plan *p)
{
    const glc_graph *g = p->g;
    size_t i, pack;
    int k = 0;
    for (i = 0; i < g->nt; i++)
        p->nin += g->t[i].kind == GLC__T_INPUT;
    p->nout = (int)g->nout;
    p->in = glc__calloc((size_t)p->nin + 1, sizeof *p->in);
    p->out = glc__calloc((size_t)p->nout + 1, sizeof *p->out);
    p->param_set = glc__calloc(g->nt + 1, 1);
    p->ext = glc__calloc(g->nt + 1, sizeof *p->ext);
    p->run.inputs = glc__calloc((size_t)p->nin + 1, sizeof *p->run.inputs);
    p->run.slices = glc__calloc((size_t)p->nout + 1, sizeof *p->run.slices);
    if (!p->in || !p->out || !p->param_set || !p->ext || !p->run.inputs || !p->run.slices)
        return GLC_ERR_OUT_OF_MEMORY;
    for (i = 0; i < g->nt; i++) {
        if (g->t[i].kind != GLC__T_INPUT)
            continue;
        p->in[k++].tensor = (int32_t)i;
        if (p->prog.place[i].bytes > p->stage_bytes)
            p->stage_bytes = p->prog.place[i].bytes;
    }
    for (k = 0; k < p->nout; k++) {
        p->out[k].tensor = g->out[k].tensor;
        p->out[k].host_off = p->mirror_bytes;
        p->mirror_bytes += glc__align16(p->prog.place[g->out[k].tensor].bytes);
    }
    pack = glc__plan_pack_bytes(p);
    if (pack > p->stage_bytes)
        p->stage_bytes = pack;
    p->mirror = glc__malloc(p->mirror_bytes + 16);
    p->stage = glc__calloc(p->stage_bytes + 16, 1);
    return p->mirror && p->stage ? GLC_OK : GLC_ERR_OUT_OF_MEMORY;
}

/* A plan of g compiled with flags. from: the plan whose graph g is (a
 * clone's source: fused already, so its fusion count is taken, not redone),
 * or NULL. Runs inside glc__enter (compile_entered). */
static glc_status compile_plan(const glc_graph *g, uint32_t flags, const glc_plan *from,
                               glc_plan **out)
{
    glc_device *dev = g->dev;
    glc__target tg;
    glc_plan *p;
    char err[512];
    glc_status st;
    int i;
    glc__use_device(dev);
    p = glc__calloc(1, sizeof *p);
    if (!p)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
    p->dev = dev;
    p->flags = flags;
    dev->live_objects++;
    if (!(p->g = glc__graph_clone(g))) {
        glc_plan_destroy(p);
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
    }
    glc__target_of(dev, &tg);
    err[0] = '\0';
    /* a clone's source graph is fused already: compiled as it is, its count taken */
    if ((st = glc__compile_graph(p->g, &tg, !from && !(flags & GLC_COMPILE_NO_FUSE),
                                 (flags & GLC_COMPILE_MEMORY_TIGHT) != 0, &p->prog,
                                 err, sizeof err)) != GLC_OK) {
        glc_plan_destroy(p);
        return glc__fail(dev, st, "%s", err);
    }
    if (from)
        p->prog.fused = from->prog.fused;
    if ((st = make_io(p)) != GLC_OK) {
        glc_plan_destroy(p);
        return glc__fail(dev, st, "glc_graph_compile: out of memory");
    }
    p->buf = glc__calloc((size_t)p->prog.nbuffers + 1, sizeof *p->buf);
    if (!p->buf) {
        glc_plan_destroy(p);
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "glc_graph_compile: out of memory");
    }
    for (i = 0; i < p->prog.nbuffers; i++) {
        int64_t bytes = (int64_t)(p->prog.buffer_bytes[i] ? p->prog.buffer_bytes[i] : 4);
        if ((st = glc_buffer_create(dev, GLC_DTYPE_U8, 1, &bytes, &p->buf[i])) != GLC_OK) {
            glc_plan_destroy(p);
            return st;
        }
    }
    if ((st = rebuild(p)) != GLC_OK) {
        glc_plan_destroy(p);
        return st;
    }
    trace_barriers(p);
    *out = p;
    return GLC_OK;
}

/* One context check around the whole compile: it creates buffers and
 * programs, and none may go to another context. */
static glc_status compile_entered(const glc_graph *g, uint32_t flags, const glc_plan *from,
                                  glc_plan **out)
{
    glc__glstate gs;
    glc_status st;
    if ((st = glc__enter(g->dev, 0, 0, &gs)) != GLC_OK)
        return st;
    st = compile_plan(g, flags, from, out);
    if (st == GLC_OK && g->dev->texel_used) /* (its runs make no GL objects) */
        glc__enc_texel_make(g->dev);
    glc__leave(g->dev, &gs);
    return st;
}

glc_status glc_graph_compile(glc_graph *g, const glc_compile_desc *desc, glc_plan **out)
{
    GLC__ARG(NULL, g);
    GLC__ARG(g->dev, out);
    if (desc && (desc->flags & ~(uint32_t)(GLC_COMPILE_NO_FUSE | GLC_COMPILE_MEMORY_TIGHT)))
        return glc__fail(g->dev, GLC_ERR_INVALID_ARG, "glc_graph_compile: flags 0x%x are reserved",
                         desc->flags &
                             ~(uint32_t)(GLC_COMPILE_NO_FUSE | GLC_COMPILE_MEMORY_TIGHT));
    if (g->status != GLC_OK)
        return glc__fail(g->dev, g->status, "%s", g->errmsg);
    return compile_entered(g, desc ? desc->flags : 0, NULL, out);
}

/* ---- params ---- */

static int32_t find_tensor(const glc_plan *p, glc__tkind kind, const char *name)
{
    size_t i;
    for (i = 0; i < p->g->nt; i++)
        if (p->g->t[i].kind == kind && p->g->t[i].name && strcmp(p->g->t[i].name, name) == 0)
            return (int32_t)i;
    return -1;
}

/* The storage of tensor id: this plan's buffer, or a sharing plan's. */
static glc_buffer *storage(const glc_plan *p, int32_t id, size_t *offset)
{
    size_t aoff;
    int32_t r = glc__alias_root(p->g, id, &aoff);
    if (p->ext[r].buf) {
        *offset = p->ext[r].offset + aoff;
        return p->ext[r].buf;
    }
    if (p->ext[id].buf) {
        *offset = p->ext[id].offset;
        return p->ext[id].buf;
    }
    *offset = p->prog.place[id].offset;
    return p->buf[p->prog.place[id].buffer];
}

/* Writes (or reads, when `in` is NULL) bytes of tensor id's storage. */
static glc_status transfer(glc_plan *p, int32_t id, const void *data, void *in, size_t bytes,
                           const char *fn)
{
    glc__glstate gs;
    size_t off;
    glc_buffer *b = storage(p, id, &off);
    glc_status st = glc__enter(p->dev, GLC__TOUCH_COPY, 0, &gs);
    if (st != GLC_OK)
        return st;
    st = data ? glc__buffer_write_in(b, off, bytes, data, fn)
              : glc__buffer_read_in(b, off, bytes, in, fn);
    glc__leave(p->dev, &gs);
    return st;
}

/* The param `name`, or -1 after an error message. */
static int32_t find_param(glc_plan *p, const char *name, const void *data)
{
    int32_t id;
    if (!p) {
        glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_plan_set_param: the plan is NULL");
        return -1;
    }
    if (!name || !data) {
        glc__fail(p->dev, GLC_ERR_INVALID_ARG, "glc_plan_set_param: name or data is NULL");
        return -1;
    }
    if ((id = find_tensor(p, GLC__T_PARAM, name)) < 0 || p->g->t[id].piece_of) {
        glc__fail(p->dev, GLC_ERR_INVALID_ARG, "glc_plan_set_param: no param \"%s\"", name);
        return -1;
    }
    return id;
}

glc_status glc_plan_set_param_typed(glc_plan *p, const char *name, const void *data,
                                    size_t bytes, glc_dtype dtype)
{
    int32_t id;
    const glc__place *pl;
    glc_status st;
    if ((id = find_param(p, name, data)) < 0)
        return GLC_ERR_INVALID_ARG;
    pl = &p->prog.place[id];
    if (dtype != p->g->t[id].dtype || bytes != pl->bytes)
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG,
                         "glc_plan_set_param(\"%s\"): %zu bytes of %s given, the param is %zu "
                         "bytes of %s",
                         name, bytes, glc_dtype_name(dtype), pl->bytes,
                         glc_dtype_name(p->g->t[id].dtype));
    if (p->g->t[id].pieces) { /* split by rows (graph_split.c): each piece its rows */
        const glc__gtensor *t = &p->g->t[id];
        int32_t j;
        for (j = t->pieces - 1; j < t->pieces - 1 + t->npieces; j++) {
            if (p->prog.place[j].region != GLC__REGION_NONE &&
                (st = transfer(p, j, (const unsigned char *)data + p->g->t[j].piece_offset, NULL,
                               p->prog.place[j].bytes, "glc_plan_set_param")) != GLC_OK)
                return st;
            p->param_set[j] = 1;
        }
    }
    if (pl->region == GLC__REGION_NONE) {
        p->param_set[id] = 1; /* no live op reads it */
        return GLC_OK;
    }
    if ((st = transfer(p, id, data, NULL, bytes, "glc_plan_set_param")) == GLC_OK)
        p->param_set[id] = 1;
    return st;
}

glc_status glc_plan_set_param(glc_plan *p, const char *name, const float *data, size_t count)
{
    int32_t id;
    glc_dtype dt;
    void *tmp;
    glc_status st;
    size_t n;
    if ((id = find_param(p, name, data)) < 0)
        return GLC_ERR_INVALID_ARG;
    glc__use_device(p->dev);
    dt = p->g->t[id].dtype;
    n = numel_now(p, id);
    if (!glc__is_float(dt) || count != n)
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG,
                         "glc_plan_set_param(\"%s\"): %zu f32 values given, the param is %zu "
                         "values of %s%s",
                         name, count, n, glc_dtype_name(dt),
                         glc__is_float(dt) ? "" : " (use glc_plan_set_param_typed)");
    if (dt == GLC_DTYPE_F32)
        return glc_plan_set_param_typed(p, name, data, n * 4, dt);
    if (!(tmp = glc__malloc(n * 2 + 4)))
        return glc__fail(p->dev, GLC_ERR_OUT_OF_MEMORY, "glc_plan_set_param: out of memory");
    glc__convert_from_f32(dt, data, tmp, n);
    st = glc_plan_set_param_typed(p, name, tmp, n * 2, dt);
    glc__free(tmp);
    return st;
}

/* ---- params ready, counts ---- */

static glc_status params_ready(glc_plan *p, const char *fn)
{
    size_t i;
    for (i = 0; i < p->g->nt; i++) {
        glc__tkind k = p->g->t[i].kind;
        if ((k == GLC__T_PARAM || k == GLC__T_HANDLE) && !p->param_set[i] &&
            p->prog.place[i].region != GLC__REGION_NONE && !p->g->t[i].packed &&
            !p->ext[i].buf /* another plan's storage: that plan sets it */)
            return glc__fail(p->dev, GLC_ERR_STATE, "%s: %s \"%s\" was never %s", fn,
                             k == GLC__T_PARAM ? "param" : "handle",
                             p->g->t[i].piece_of ? p->g->t[p->g->t[i].piece_of - 1].name
                                                 : p->g->t[i].name,
                             k == GLC__T_PARAM ? "set" : "bound");
    }
    return GLC_OK;
}

int glc_plan_input_count(const glc_plan *p) { return p ? p->nin : 0; }
int glc_plan_output_count(const glc_plan *p) { return p ? p->nout : 0; }
const void *glc_plan_arena_ptr(const glc_plan *p) { return p ? p->mirror : NULL; }

size_t glc_plan_input_bytes(const glc_plan *p, int slot)
{
    return p && slot >= 0 && slot < p->nin ? glc__plan_bytes_at(p, p->in[slot].tensor, NULL) : 0;
}

size_t glc_plan_output_bytes(const glc_plan *p, int slot)
{
    return p && slot >= 0 && slot < p->nout ? glc__plan_bytes_at(p, p->out[slot].tensor, NULL)
                                            : 0;
}

/* ---- variables ---- */

static glc_status set_vars(glc_plan *p, const glc_plan_var *vars, int n);

/* Checks the context on every call, whether or not the values replan. */
glc_status glc_plan_set_vars(glc_plan *p, const glc_plan_var *vars, int n)
{
    glc__glstate gs;
    glc_status st;
    GLC__ARG(NULL, p);
    if ((st = glc__enter(p->dev, 0, 0, &gs)) != GLC_OK)
        return st;
    st = set_vars(p, vars, n);
    glc__leave(p->dev, &gs);
    return st;
}

static glc_status set_vars(glc_plan *p, const glc_plan_var *vars, int n)
{
    int64_t vals[GLC__GRAPH_MAX_VARS], old[GLC__GRAPH_MAX_VARS];
    char err[512];
    glc_status st;
    int i, v;
    if (n < 0 || (n && !vars))
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "glc_plan_set_vars: %d variables", n);
    glc__use_device(p->dev); /* replanning allocates */
    memcpy(vals, p->prog.vals, sizeof vals);
    memcpy(old, p->prog.vals, sizeof old);
    for (i = 0; i < n; i++) {
        const glc__gvar *gv = NULL;
        for (v = 0; v < p->g->nvars && !gv; v++)
            if (vars[i].name && strcmp(p->g->var[v].name, vars[i].name) == 0)
                gv = &p->g->var[v];
        if (!gv)
            return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "glc_plan_set_vars: no variable \"%s\"",
                             vars[i].name ? vars[i].name : "(null)");
        if (vars[i].value < gv->min || vars[i].value > gv->max)
            return glc__fail(p->dev, GLC_ERR_BOUNDS,
                             "glc_plan_set_vars: %s = %lld is outside its bounds [%lld, %lld]",
                             gv->name, (long long)vars[i].value, (long long)gv->min,
                             (long long)gv->max);
        vals[v - 1] = vars[i].value;
    }
    err[0] = '\0';
    if (memcmp(vals, old, sizeof vals) == 0)
        return GLC_OK;
    if ((st = glc__program_set_vars(&p->prog, vals, err, sizeof err)) != GLC_OK)
        return glc__fail(p->dev, st, "%s", err);
    if (p->prog.params_only) { /* the commands stand; refresh their params */
        size_t k;
        for (k = 0; k < p->prog.ncmd; k++)
            memcpy(p->cmds[k].params, p->prog.cmd[k].plan->params, sizeof p->cmds[k].params);
        return GLC_OK;
    }
    if ((st = rebuild(p)) != GLC_OK) {
        /* back to the values that built before */
        if (glc__program_set_vars(&p->prog, old, err, sizeof err) == GLC_OK)
            rebuild(p);
    } else {
        trace_barriers(p);
    }
    return st;
}

glc_status glc_plan_set_active_extent(glc_plan *p, int64_t rows)
{
    glc_plan_var v;
    GLC__ARG(NULL, p);
    if (p->g->nvars == 0)
        return glc__fail(p->dev, GLC_ERR_STATE,
                         "glc_plan_set_active_extent: the graph has no variables");
    v.name = p->g->var[0].name;
    v.value = rows;
    return glc_plan_set_vars(p, &v, 1);
}

glc_status glc_plan_stats(const glc_plan *p, glc_plan_info *out)
{
    size_t i;
    GLC__ARG(NULL, p);
    GLC__ARG(p->dev, out);
    memset(out, 0, sizeof *out);
    out->dispatches = (uint32_t)p->prog.ncmd;
    for (i = 0; i < p->prog.ncmd; i++)
        out->barriers += p->bar[i] != 0;
    out->steps = (uint32_t)p->prog.nsteps;
    out->fused = p->prog.fused;
    out->arena_bytes = p->prog.arena_bytes;
    out->liveness_bound = p->prog.lower_bound;
    out->params_bytes = p->prog.params_bytes;
    out->arena_buffers = p->prog.narena;
    out->levels = p->prog.levels;
    out->min_barriers = p->prog.levels ? p->prog.levels - 1 : 0;
    out->liveness_bound_ops = p->prog.bound_steps;
    out->liveness_bound_levels = p->prog.bound_levels;
    return GLC_OK;
}

/* ---- handles, sharing ---- */

static int32_t find_handle(glc_plan *p, const char *name, const char *fn)
{
    int32_t id = name ? find_tensor(p, GLC__T_HANDLE, name) : -1;
    if (id < 0)
        glc__fail(p->dev, GLC_ERR_INVALID_ARG, "%s: no handle \"%s\"", fn,
                  name ? name : "(null)");
    return id;
}

static glc_status handle_io(glc_plan *p, const char *name, const void *data, void *in,
                            size_t bytes, const char *fn)
{
    int32_t id;
    glc_status st;
    if (!p)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "%s: the plan is NULL", fn);
    if ((id = find_handle(p, name, fn)) < 0)
        return GLC_ERR_INVALID_ARG;
    if ((!data && !in) || bytes != p->prog.place[id].bytes)
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG,
                         "%s(\"%s\"): %zu bytes, the handle has %zu (%s)", fn, name, bytes,
                         p->prog.place[id].bytes, glc_dtype_name(p->g->t[id].dtype));
    if (in && !p->param_set[id])
        return glc__fail(p->dev, GLC_ERR_STATE, "%s(\"%s\"): the handle was never bound", fn,
                         name);
    st = transfer(p, id, data, in, bytes, fn);
    if (st == GLC_OK && data)
        p->param_set[id] = 1;
    return st;
}

glc_status glc_plan_bind_handle(glc_plan *p, const char *name, const void *data, size_t bytes)
{
    return handle_io(p, name, data, NULL, bytes, "glc_plan_bind_handle");
}

glc_status glc_plan_read_handle(glc_plan *p, const char *name, void *data, size_t bytes)
{
    return handle_io(p, name, NULL, data, bytes, "glc_plan_read_handle");
}

glc_status glc_plan_set_handle_feed(glc_plan *p, const char *handle, const char *output)
{
    int32_t h, o;
    size_t i;
    int j;
    glc__tensor th, to;
    GLC__ARG(NULL, p);
    if ((h = find_handle(p, handle, "glc_plan_set_handle_feed")) < 0)
        return GLC_ERR_INVALID_ARG;
    if ((j = glc__plan_output_slot(p, output)) < 0)
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "glc_plan_set_handle_feed: no output \"%s\"",
                         output ? output : "(null)");
    o = p->out[j].tensor;
    glc__graph_tensor_at(p->g, h, NULL, &th);
    glc__graph_tensor_at(p->g, o, NULL, &to);
    if (!glc__same_shape(&th, &to) || th.dtype != to.dtype) {
        char sh[96], so[96];
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG,
                         "glc_plan_set_handle_feed: output \"%s\" %s does not fit handle \"%s\" %s",
                         output, glc__shape_str(&to, so, sizeof so), handle,
                         glc__shape_str(&th, sh, sizeof sh));
    }
    for (i = 0; i < (size_t)p->nfeed; i++)
        if (p->feed[i].to == h) {
            p->feed[i].from = o;
            return GLC_OK;
        }
    if (p->nfeed == (int)(sizeof p->feed / sizeof p->feed[0]))
        return glc__fail(p->dev, GLC_ERR_BOUNDS, "glc_plan_set_handle_feed: at most %d feeds",
                         (int)(sizeof p->feed / sizeof p->feed[0]));
    p->feed[p->nfeed].from = o;
    p->feed[p->nfeed].to = h;
    p->nfeed++;
    return GLC_OK;
}

static glc_status share(glc_plan *dst, const glc_plan *src, unsigned what);

glc_status glc_plan_share(glc_plan *dst, const glc_plan *src, unsigned what)
{
    glc__glstate gs;
    glc_status st;
    if (!dst)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_plan_share: invalid argument: dst");
    if ((st = glc__enter(dst->dev, 0, 0, &gs)) != GLC_OK)
        return st;
    st = share(dst, src, what);
    glc__leave(dst->dev, &gs);
    return st;
}

static glc_status share(glc_plan *dst, const glc_plan *src, unsigned what)
{
    struct ext *ext;
    size_t i;
    glc_status st;
    if (!dst || !src || src == dst || (what & ~3u))
        return glc__fail(dst ? dst->dev : NULL, GLC_ERR_INVALID_ARG,
                         "glc_plan_share: invalid arguments");
    if (src->dev != dst->dev)
        return glc__fail(dst->dev, GLC_ERR_INVALID_ARG,
                         "glc_plan_share: the plans belong to different devices");
    glc__use_device(dst->dev);
    ext = glc__malloc((dst->g->nt + 1) * sizeof *ext);
    if (!ext)
        return glc__fail(dst->dev, GLC_ERR_OUT_OF_MEMORY, "glc_plan_share: out of memory");
    memcpy(ext, dst->ext, dst->g->nt * sizeof *ext);
    for (i = 0; i < dst->g->nt; i++) {
        const glc__gtensor *t = &dst->g->t[i];
        glc__tensor a, b;
        int32_t j;
        if (!((t->kind == GLC__T_PARAM && (what & GLC_SHARE_PARAMS)) ||
              (t->kind == GLC__T_HANDLE && (what & GLC_SHARE_HANDLES))))
            continue;
        if ((j = find_tensor(src, t->kind, t->name)) < 0 ||
            src->prog.place[j].region == GLC__REGION_NONE) {
            if (t->packed && dst->prog.place[i].region != GLC__REGION_NONE) {
                /* its parts would go to src's buffers, the pack itself not */
                glc__free(ext);
                return glc__fail(dst->dev, GLC_ERR_UNSUPPORTED,
                                 "glc_plan_share: \"%s\" is packed by fusion here but not in "
                                 "the source plan (compile both with the same flags)",
                                 t->name);
            }
            continue;
        }
        glc__graph_tensor_at(dst->g, (int32_t)i, NULL, &a);
        glc__graph_tensor_at(src->g, j, NULL, &b);
        if (!glc__same_shape(&a, &b) || a.dtype != b.dtype) {
            char sa[96], sb[96];
            glc__free(ext);
            return glc__fail(dst->dev, GLC_ERR_INVALID_ARG,
                             "glc_plan_share: \"%s\" is %s here and %s in the source plan",
                             t->name, glc__shape_str(&a, sa, sizeof sa),
                             glc__shape_str(&b, sb, sizeof sb));
        }
        ext[i].buf = storage(src, j, &ext[i].offset);
    }
    {
        struct ext *old = dst->ext;
        dst->ext = ext;
        if ((st = rebuild(dst)) != GLC_OK) {
            dst->ext = old;
            glc__free(ext);
            rebuild(dst);
            return st;
        }
        glc__free(old);
    }
    for (i = 0; i < dst->g->nt; i++)
        if (dst->ext[i].buf) {
            int32_t j = find_tensor(src, dst->g->t[i].kind, dst->g->t[i].name);
            dst->param_set[i] = src->param_set[j];
        }
    return GLC_OK;
}

glc_status glc_plan_clone(const glc_plan *src, glc_plan **out)
{
    glc_plan *p;
    glc_status st;
    GLC__ARG(NULL, src);
    GLC__ARG(src->dev, out);
    /* src's graph as it compiled it (fused or not): the same program, the
     * same packs, so every param can be shared */
    if ((st = compile_entered(src->g, src->flags, src, &p)) != GLC_OK)
        return st;
    if ((st = glc_plan_share(p, src, GLC_SHARE_PARAMS)) != GLC_OK) {
        glc_plan_destroy(p);
        return st;
    }
    *out = p;
    return GLC_OK;
}

/* ---- inputs and outputs in GPU memory ---- */

static void unbind(glc_plan *p, glc__plan_io *io)
{
    io->tex = 0; /* (its kernel is the device's cache's) */
    io->tex_kernel = NULL;
    if (!io->bound)
        return;
    if (!io->copied) {
        p->ext[io->tensor].buf = NULL;
        p->ext[io->tensor].offset = 0;
    }
    io->copied = 0;
    glc__buffer_hold(io->bound, -1);
    io->bound = NULL;
    io->bound_off = io->bound_bytes = 0;
}

/* The reasons view v cannot hold io's tensor (bytes at the maxima), or NULL. */
static const char *bind_refusal(glc_plan *p, const glc__plan_io *io, glc_view v, int output,
                                size_t bytes, char *why, size_t len)
{
    const glc_graph *g = p->g;
    int32_t id = io->tensor;
    glc__tensor t;
    size_t off, align = p->prog.align;
    int i, k;
    glc__graph_tensor_at(g, id, NULL, &t);
    if (v.buffer->dev != p->dev)
        return "the view's buffer belongs to another device";
    for (i = 0; i < p->prog.nbuffers; i++)
        if (p->buf[i] == v.buffer || p->buf[i]->name == v.buffer->name)
            return "the view's buffer is the plan's own";
    if (v.buffer->destroyed)
        return "the view's buffer was destroyed";
    if (v.dtype != t.dtype || v.rank != t.rank ||
        memcmp(v.shape, t.shape, (size_t)t.rank * sizeof t.shape[0]) != 0) {
        char a[96], b[96];
        glc__tensor vt;
        memset(&vt, 0, sizeof vt);
        vt.dtype = v.dtype;
        vt.rank = v.rank > 0 && v.rank <= GLC_MAX_DIMS ? v.rank : 0;
        memcpy(vt.shape, v.shape, sizeof vt.shape);
        snprintf(why, len, "the view is %s, the %s is %s (variables at their maxima)",
                 glc__shape_str(&vt, a, sizeof a), output ? "output" : "input",
                 glc__shape_str(&t, b, sizeof b));
        return why;
    }
    if (v.offset % align || v.offset > v.buffer->capacity || bytes > v.buffer->capacity - v.offset) {
        snprintf(why, len,
                 "bytes [%zu, %zu) of a %zu-byte buffer: the range must fit and start at a "
                 "multiple of %zu (the device's SSBO offset alignment)",
                 v.offset, v.offset + bytes, v.buffer->capacity, align);
        return why;
    }
    (void)off;
    /* a written range may share no byte with another bound range */
    for (k = 0; k < p->nin + p->nout; k++) {
        const glc__plan_io *o = k < p->nin ? &p->in[k] : &p->out[k - p->nin];
        if (o == io || !o->bound || o->bound != v.buffer || (!output && k < p->nin))
            continue;
        if (v.offset < o->bound_off + o->bound_bytes && o->bound_off < v.offset + bytes)
            return "the range overlaps another bound input or output of the plan";
    }
    return NULL;
}

/* 1 when output io's bytes are its own: the op that makes it can write
 * it into the bound range (else one GPU copy after each run). */
static int own_bytes(const glc_plan *p, const glc__plan_io *io)
{
    const glc_graph *g = p->g;
    int32_t id = io->tensor;
    size_t off;
    int k;
    if (glc__alias_root(g, id, &off) != id || g->t[id].kind != GLC__T_VALUE)
        return 0; /* part of another value, or an input */
    for (k = 0; k < p->nout; k++)
        if (&p->out[k] != io && p->out[k].tensor == id)
            return 0; /* the same value as another output */
    for (k = 0; k < p->nfeed; k++)
        if (p->feed[k].from == id)
            return 0; /* a handle's feed copies it after the run */
    return 1;
}

void glc__plan_copy_bound(glc_plan *p)
{
    int k;
    for (k = 0; k < p->nout; k++) {
        const glc__plan_io *io = &p->out[k];
        size_t off, bytes = glc__plan_bytes_at(p, io->tensor, NULL);
        glc_buffer *b;
        if (!io->bound || !io->copied || !bytes)
            continue;
        b = glc__plan_storage(p, io->tensor, &off);
        glc__buffer_host_access(b); /* a copy reads what shaders wrote after this bit */
        p->dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, b->name);
        p->dev->gl.glBindBuffer(GL_COPY_WRITE_BUFFER, io->bound->name);
        p->dev->gl.glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)off,
                                       (GLintptr)io->bound_off, (GLsizeiptr)bytes);
    }
}

/* Input or output `name` of p (output: an output slot), for a binding
 * call fn; refused while a run is pending. */
static glc_status io_named(glc_plan *p, const char *name, int output, const char *fn,
                           glc__plan_io **io)
{
    int k;
    *io = NULL;
    if (output) {
        if ((k = glc__plan_output_slot(p, name)) >= 0)
            *io = &p->out[k];
    } else {
        for (k = 0; name && k < p->nin; k++)
            if (strcmp(p->g->t[p->in[k].tensor].name, name) == 0)
                *io = &p->in[k];
    }
    if (!*io)
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "%s: no %s named \"%s\"", fn,
                         output ? "output" : "input", name ? name : "(null)");
    return glc__plan_refuse_pending(p, fn);
}

static glc_status bind_io(glc_plan *p, const char *name, glc_view v, int output, const char *fn)
{
    glc_device *dev = p->dev;
    glc__plan_io *io = NULL, saved;
    glc__glstate gs;
    glc_status st;
    const char *no;
    char why[256];
    size_t bytes;
    if ((st = io_named(p, name, output, fn, &io)) != GLC_OK)
        return st;
    {
        glc__tensor t;
        glc__graph_tensor_at(p->g, io->tensor, NULL, &t); /* at the maxima */
        bytes = glc__tensor_bytes(&t);
    }
    if (v.buffer && (no = bind_refusal(p, io, v, output, bytes, why, sizeof why)) != NULL)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s(\"%s\"): %s", fn, name, no);
    if ((st = glc__enter(dev, 0, 0, &gs)) != GLC_OK)
        return st;
    saved = *io;
    if (saved.bound) /* kept alive until the new commands are built */
        glc__buffer_hold(saved.bound, 1);
    unbind(p, io); /* (a texture binding too) */
    if (v.buffer) {
        io->bound = v.buffer;
        io->bound_off = v.offset;
        io->bound_bytes = bytes;
        io->copied = output && !own_bytes(p, io);
        glc__buffer_hold(v.buffer, 1);
        if (!io->copied) {
            p->ext[io->tensor].buf = v.buffer;
            p->ext[io->tensor].offset = v.offset;
        }
    }
    if ((st = build_cmds(p)) != GLC_OK) { /* as it was */
        unbind(p, io);
        *io = saved;
        if (saved.bound) {
            if (!saved.copied) {
                p->ext[io->tensor].buf = saved.bound;
                p->ext[io->tensor].offset = saved.bound_off;
            }
            glc__buffer_hold(saved.bound, 1);
        }
        build_cmds(p);
    }
    if (saved.bound)
        glc__buffer_hold(saved.bound, -1);
    glc__leave(dev, &gs);
    return st;
}

glc_status glc_plan_bind_input(glc_plan *p, const char *name, glc_view view)
{
    GLC__ARG(NULL, p);
    glc__use_device(p->dev);
    return bind_io(p, name, view, 0, "glc_plan_bind_input");
}

glc_status glc_plan_bind_output(glc_plan *p, const char *name, glc_view view)
{
    GLC__ARG(NULL, p);
    glc__use_device(p->dev);
    return bind_io(p, name, view, 1, "glc_plan_bind_output");
}

/* ---- texture inputs and outputs ---- */

int glc__plan_has_textures(const glc_plan *p)
{
    int k;
    for (k = 0; k < p->nin + p->nout; k++)
        if ((k < p->nin ? &p->in[k] : &p->out[k - p->nin])->tex)
            return 1;
    return 0;
}

void glc__plan_textures(glc_plan *p, int out)
{
    glc_device *dev = p->dev;
    int k, n = out ? p->nout : p->nin, any = 0;
    for (k = 0; k < n; k++) {
        glc__plan_io *io = out ? &p->out[k] : &p->in[k];
        glc__cmd c;
        size_t off;
        if (!io->tex)
            continue;
        if (out && !any++) /* the plan's writes before the image kernel reads them */
            glc__enc_raw_barrier(dev, GLC__BARRIER_STORAGE);
        memset(&c, 0, sizeof c);
        c.kernel = io->tex_kernel;
        c.total_groups = (uint32_t)(((uint64_t)io->tex_w * (uint64_t)io->tex_h + 63) / 64);
        glc__grid_fold(c.total_groups, dev->info.limits.max_group_count, c.grid);
        c.nbind = 1;
        c.bind[0].buffer = glc__plan_storage(p, io->tensor, &off);
        c.bind[0].offset = off;
        c.bind[0].size = glc__plan_bytes_at(p, io->tensor, NULL);
        c.bind[0].access = out ? GLC_READ : GLC_WRITE;
        c.bind[0].kind = GLC_BIND_STORAGE;
        c.nparams = 3;
        c.params[GLC__KP_IMAGE_IO_W] = (uint32_t)io->tex_w;
        c.params[GLC__KP_IMAGE_IO_H] = (uint32_t)io->tex_h;
        c.params[GLC__KP_IMAGE_IO_C] = io->tex_fmt ? 1u : 4u;
        c.label = "image_io";
        dev->gl.glBindImageTexture(0, io->tex, io->tex_level, GL_FALSE, 0,
                                   out ? GL_WRITE_ONLY : GL_READ_ONLY,
                                   io->tex_fmt ? GL_R32F : GL_RGBA8);
        glc__replay(dev, &c);
        any = 1;
    }
    if (!out && any) /* the tensors written before the plan's first command reads them */
        glc__enc_raw_barrier(dev, GLC__BARRIER_STORAGE);
}

/* Texture `tex` level `level` checked against io's tensor (f32 [H, W, C],
 * C 4 for RGBA8, 1 for R32F) and recorded in io. Inside glc__enter with
 * GLC__TOUCH_TEXTURE. */
static glc_status bind_texture(glc_plan *p, glc__plan_io *io, uint32_t tex, int level, int output,
                               const char *fn, const char *name)
{
    glc_device *dev = p->dev;
    const glc__gtensor *gt = &p->g->t[io->tensor];
    GLint immutable = 0, levels = 0, fmt = 0, w = 0, h = 0;
    char defs[48];
    int c, d;
    glc_status st;
    GLint now = 0;
    if (!dev->gl.glIsTexture(tex))
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s(\"%s\"): %u is not a GL texture", fn, name,
                         tex);
    dev->gl.glBindTexture(GL_TEXTURE_2D, tex);
    dev->gl.glGetIntegerv(GL_TEXTURE_BINDING_2D, &now);
    if ((uint32_t)now != tex) { /* another target's: the bind failed, and raised this */
        dev->gl.glGetError();
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s(\"%s\"): texture %u is not a 2D texture",
                         fn, name, tex);
    }
    dev->gl.glGetTexParameteriv(GL_TEXTURE_2D, GL_TEXTURE_IMMUTABLE_FORMAT, &immutable);
    dev->gl.glGetTexParameteriv(GL_TEXTURE_2D, GL_TEXTURE_IMMUTABLE_LEVELS, &levels);
    if (!immutable)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "%s(\"%s\"): texture %u has mutable storage; image units need "
                         "glTexStorage2D's",
                         fn, name, tex);
    if (level < 0 || level >= levels)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s(\"%s\"): level %d of a texture of %d",
                         fn, name, level, levels);
    dev->gl.glGetTexLevelParameteriv(GL_TEXTURE_2D, level, GL_TEXTURE_INTERNAL_FORMAT, &fmt);
    dev->gl.glGetTexLevelParameteriv(GL_TEXTURE_2D, level, GL_TEXTURE_WIDTH, &w);
    dev->gl.glGetTexLevelParameteriv(GL_TEXTURE_2D, level, GL_TEXTURE_HEIGHT, &h);
    if (fmt != GL_RGBA8 && fmt != GL_R32F)
        return glc__fail(dev, GLC_ERR_UNSUPPORTED,
                         "%s(\"%s\"): texture format 0x%04x; a plan reads and writes GL_RGBA8 "
                         "and GL_R32F textures",
                         fn, name, (unsigned)fmt);
    c = fmt == GL_RGBA8 ? 4 : 1;
    for (d = 0; d < gt->rank; d++)
        if (gt->shape[d] < 0)
            break;
    if (gt->dtype != GLC_DTYPE_F32 || gt->rank != 3 || d < 3 || gt->shape[0] != h ||
        gt->shape[1] != w || gt->shape[2] != c)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "%s(\"%s\"): a %dx%d %s texture level is an f32 [%d, %d, %d] tensor "
                         "(no variable dims); the %s is not",
                         fn, name, w, h, c == 4 ? "RGBA8" : "R32F", h, w, c,
                         output ? "output" : "input");
    snprintf(defs, sizeof defs, "#define OUT %d\n#define FMT %d\n", output, c == 1);
    if ((st = glc__kernel_get(dev, "image_io", defs, 64, &io->tex_kernel)) != GLC_OK)
        return st;
    io->tex = tex;
    io->tex_level = level;
    io->tex_fmt = c == 1;
    io->tex_w = w;
    io->tex_h = h;
    return GLC_OK;
}

static glc_status bind_tex_io(glc_plan *p, const char *name, uint32_t tex, int level, int output,
                              const char *fn)
{
    glc_device *dev = p->dev;
    glc__plan_io *io = NULL, saved;
    glc__glstate gs;
    glc_status st;
    if ((st = io_named(p, name, output, fn, &io)) != GLC_OK)
        return st;
    if (output && glc__alias_root(p->g, io->tensor, &(size_t){0}) != io->tensor)
        return glc__fail(dev, GLC_ERR_UNSUPPORTED,
                         "%s(\"%s\"): the output is part of another value", fn, name);
    if ((st = glc__enter(dev, GLC__TOUCH_TEXTURE, 0, &gs)) != GLC_OK)
        return st;
    saved = *io;
    if (!tex) {
        io->tex = 0;
        io->tex_kernel = NULL;
    } else if ((st = bind_texture(p, io, tex, level, output, fn, name)) != GLC_OK) {
        *io = saved;
    } else if (saved.bound) { /* the texture takes the buffer's place */
        glc__plan_io t = *io;
        unbind(p, io); /* releases the buffer, clears its ext (and the texture) */
        io->tex = t.tex;
        io->tex_level = t.tex_level;
        io->tex_fmt = t.tex_fmt;
        io->tex_w = t.tex_w;
        io->tex_h = t.tex_h;
        io->tex_kernel = t.tex_kernel;
        st = build_cmds(p);
    }
    glc__leave(dev, &gs);
    return st;
}

glc_status glc_plan_bind_input_texture(glc_plan *p, const char *name, uint32_t gl_texture,
                                       int level)
{
    GLC__ARG(NULL, p);
    glc__use_device(p->dev);
    return bind_tex_io(p, name, gl_texture, level, 0, "glc_plan_bind_input_texture");
}

glc_status glc_plan_bind_output_texture(glc_plan *p, const char *name, uint32_t gl_texture,
                                        int level)
{
    GLC__ARG(NULL, p);
    glc__use_device(p->dev);
    return bind_tex_io(p, name, gl_texture, level, 1, "glc_plan_bind_output_texture");
}

glc_status glc_plan_run_views(glc_plan *p, const glc_view *inputs, const glc_view *outputs)
{
    static const char fn[] = "glc_plan_run_views";
    glc__plan_io *saved;
    glc_status st = GLC_OK, back;
    int k, n;
    GLC__ARG(NULL, p);
    glc__use_device(p->dev);
    if ((p->nin && !inputs) || (p->nout && !outputs))
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "%s: inputs or outputs is NULL", fn);
    n = p->nin + p->nout;
    if (!(saved = glc__malloc((size_t)(n ? n : 1) * sizeof *saved)))
        return glc__fail(p->dev, GLC_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    for (k = 0; k < n; k++) { /* what was bound, kept alive while this call rebinds */
        saved[k] = k < p->nin ? p->in[k] : p->out[k - p->nin];
        if (saved[k].bound)
            glc__buffer_hold(saved[k].bound, 1);
    }
    for (k = 0; k < n && st == GLC_OK; k++) {
        const glc_view *v = k < p->nin ? &inputs[k] : &outputs[k - p->nin];
        int out = k >= p->nin;
        const char *name = out ? p->g->out[k - p->nin].name : p->g->t[p->in[k].tensor].name;
        if (v->buffer)
            st = bind_io(p, name, *v, out, fn);
        else if (!out && !glc__io_external(&p->in[k]))
            st = glc__fail(p->dev, GLC_ERR_INVALID_ARG,
                           "%s: input slot %d (\"%s\"): no view and no binding", fn, k, name);
    }
    if (st == GLC_OK)
        st = glc__plan_run_slots(p, NULL, p->run.slices, NULL, fn);
    for (k = 0; k < n; k++) { /* as before */
        glc__plan_io *io = k < p->nin ? &p->in[k] : &p->out[k - p->nin];
        const char *name = k >= p->nin ? p->g->out[k - p->nin].name : p->g->t[io->tensor].name;
        glc_view v;
        if (io->bound == saved[k].bound && io->bound_off == saved[k].bound_off &&
            io->tex == saved[k].tex)
            continue;
        if (saved[k].tex) { /* a texture binding the call's view replaced */
            back = bind_tex_io(p, name, saved[k].tex, saved[k].tex_level, k >= p->nin, fn);
            if (st == GLC_OK)
                st = back;
            continue;
        }
        memset(&v, 0, sizeof v);
        if (saved[k].bound) {
            const glc__gtensor *gt = &p->g->t[io->tensor];
            glc__tensor t;
            glc__graph_tensor_at(p->g, io->tensor, NULL, &t);
            v = glc_view_make(saved[k].bound, saved[k].bound_off, gt->dtype, t.rank, t.shape);
        }
        back = bind_io(p, name, v, k >= p->nin, fn);
        if (st == GLC_OK)
            st = back;
    }
    for (k = 0; k < n; k++)
        if (saved[k].bound)
            glc__buffer_hold(saved[k].bound, -1);
    glc__free(saved);
    return st;
}

int glc__plan_has_bindings(const glc_plan *p)
{
    int k;
    for (k = 0; k < p->nin; k++)
        if (glc__io_external(&p->in[k]))
            return 1;
    for (k = 0; k < p->nout; k++)
        if (glc__io_external(&p->out[k]))
            return 1;
    return 0;
}

glc_status glc__plan_bindings_ok(glc_plan *p, const char *fn)
{
    int k;
    for (k = 0; k < p->nin + p->nout; k++) {
        const glc__plan_io *io = k < p->nin ? &p->in[k] : &p->out[k - p->nin];
        const char *what = k < p->nin ? "input" : "output", *name = p->g->t[io->tensor].name;
        if (k >= p->nin)
            name = p->g->out[k - p->nin].name;
        if (io->tex && !p->dev->gl.glIsTexture(io->tex))
            return glc__fail(p->dev, GLC_ERR_INVALID_ARG,
                             "%s: GL texture %u, bound to %s \"%s\", is no longer a texture "
                             "(deleted by the application?)",
                             fn, io->tex, what, name);
        if (!io->bound)
            continue;
        if (io->bound->destroyed)
            return glc__fail(p->dev, GLC_ERR_STATE,
                             "%s: the buffer bound to %s \"%s\" was destroyed while bound; bind "
                             "the %s elsewhere or unbind it",
                             fn, what, name, what);
        if (io->bound->wrapped && !p->dev->gl.glIsBuffer(io->bound->name))
            return glc__fail(p->dev, GLC_ERR_INVALID_ARG,
                             "%s: GL buffer %u, bound to %s \"%s\", is no longer a buffer "
                             "(deleted by the application?)",
                             fn, io->bound->name, what, name);
    }
    return GLC_OK;
}

/* ---- for the other plan files (plan.h) ---- */

glc_status glc__plan_params_ready(glc_plan *p, const char *fn) { return params_ready(p, fn); }

glc_buffer *glc__plan_storage(const glc_plan *p, int32_t id, size_t *offset)
{
    return storage(p, id, offset);
}

size_t glc__plan_bytes_at(const glc_plan *p, int32_t id, const int64_t *vals)
{
    glc__tensor t;
    glc__graph_tensor_at(p->g, id, vals ? vals : p->prog.vals, &t);
    return glc__tensor_bytes(&t);
}

size_t glc__plan_numel(const glc_plan *p, int32_t id) { return numel_now(p, id); }

int32_t glc__plan_find(const glc_plan *p, int kind, const char *name)
{
    return name ? find_tensor(p, (glc__tkind)kind, name) : -1;
}

int glc__plan_output_slot(const glc_plan *p, const char *name)
{
    int j;
    for (j = 0; name && j < p->nout; j++)
        if (strcmp(p->g->out[j].name, name) == 0)
            return j;
    return -1;
}
