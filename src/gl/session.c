/*
 * Sessions: the public API over the encoder (encode.c). Validation happens
 * when a dispatch is made, in both modes, so a bad binding is reported at
 * the call that made it and nothing is recorded. DIRECT encodes each
 * command at once; RECORDED keeps the list and, at commit or finish, runs
 * the passes (registered fusion hooks, then reorder) and encodes it.
 *
 * The barrier state (tracker, last barrier of each kind) is the device's
 * encoder's (encode.h), so the first dispatch of a session is ordered after
 * the last one of the previous session, or of a plan run, when they
 * conflict; the session changes it only through the encoder's calls.
 */
#include "session.h"

#include "alloc.h"
#include "buffer.h"
#include "device.h"
#include "grid.h"
#include "kernel.h"
#include "select.h"

#include <stdlib.h>
#include <string.h>

#define REORDER_WINDOW 32

struct glc_fence {
    glc_device *dev;
    GLsync sync;
    glc_session *session; /* whose gpu_wait_ns a wait adds to, or NULL */
};

static glc_status reorder_pass(glc_session *s, glc__cmd *cmds, size_t *n, void *user);

/* Checks a session's mode and flags; fn names the public call. */
static glc_status check_mode(glc_device *dev, unsigned mode, uint32_t flags, const char *fn)
{
    if ((mode != GLC_SESSION_DIRECT && mode != GLC_SESSION_RECORDED) ||
        (flags & ~(uint32_t)GLC_SESSION_EARLY_FLUSH) ||
        (mode == GLC_SESSION_DIRECT && (flags & GLC_SESSION_EARLY_FLUSH)))
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "%s: mode 0x%x (DIRECT, or RECORDED optionally with EARLY_FLUSH)", fn,
                         mode | flags);
    return GLC_OK;
}

static glc_status begin(glc_device *dev, int mode, glc_session **out, const char *fn)
{
    glc__glstate gs;
    glc_session *s;
    glc_status st = glc__enter(dev, 0, 0, &gs); /* the full context check */
    if (st != GLC_OK)
        return st;
    glc__leave(dev, &gs);
    s = glc__calloc(1, sizeof *s);
    if (!s)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    s->dev = dev;
    s->mode = mode;
    s->reorder_window = REORDER_WINDOW;
    glc__reorder_init(&s->reorder);
    dev->live_objects++;
    *out = s;
    return GLC_OK;
}

glc_status glc_session_create(glc_device *dev, const glc_session_desc *desc, glc_session **out)
{
    static const char fn[] = "glc_session_create";
    glc_session_desc d;
    glc_status st;
    GLC__ARG(NULL, dev);
    GLC__ARG(dev, out);
    memset(&d, 0, sizeof d);
    if (desc)
        d = *desc;
    if ((st = check_mode(dev, (unsigned)d.mode, d.flags, fn)) != GLC_OK)
        return st;
    return begin(dev, (int)d.mode | (int)d.flags, out, fn);
}

glc_status glc_session_begin(glc_device *dev, int mode, glc_session **out)
{
    static const char fn[] = "glc_session_begin";
    glc_status st;
    GLC__ARG(NULL, dev);
    GLC__ARG(dev, out);
    if ((st = check_mode(dev, (unsigned)mode & ~(unsigned)GLC_SESSION_EARLY_FLUSH,
                         (uint32_t)mode & GLC_SESSION_EARLY_FLUSH, fn)) != GLC_OK)
        return st;
    return begin(dev, mode, out, fn);
}

glc_status glc__session_add_pass(glc_session *s, glc__pass_fn fn, void *user)
{
    if (s->npasses == GLC__MAX_PASSES)
        return GLC_ERR_BOUNDS;
    s->pass[s->npasses].fn = fn;
    s->pass[s->npasses].user = user;
    s->npasses++;
    return GLC_OK;
}

static glc_status bad_binding(glc_device *dev, const char *kname, int i, const char *what)
{
    return glc__fail(dev, GLC_ERR_INVALID_ARG, "glc_session_dispatch(%s): binding %d: %s", kname,
                     i, what);
}

/* Checks one binding and resolves its range into c->bind[i]. */
static glc_status check_binding(glc_device *dev, const char *kname, int i, const glc_binding *b,
                                glc__cmd *c)
{
    const glc_device_limits *lim = &dev->info.limits;
    int uniform, texel;
    size_t size, limit;
    if (!b->buffer)
        return bad_binding(dev, kname, i, "no buffer");
    if (b->buffer->dev != dev)
        return bad_binding(dev, kname, i, "buffer of another device");
    if (b->access < GLC_READ || b->access > GLC_READ_WRITE)
        return bad_binding(dev, kname, i, "access is not READ/WRITE/READ_WRITE");
    if (b->kind != GLC_BIND_STORAGE && b->kind != GLC_BIND_UNIFORM && !glc__is_texel(b->kind))
        return bad_binding(dev, kname, i, "kind is not STORAGE/UNIFORM/TEXEL/TEXEL_UINT");
    uniform = b->kind == GLC_BIND_UNIFORM;
    texel = glc__is_texel(b->kind);
    if (uniform && b->access != GLC_READ)
        return bad_binding(dev, kname, i, "a uniform block is read only");
    if (texel && !dev->info.features.texel_buffers)
        return bad_binding(dev, kname, i, "TEXEL, and the device has no buffer textures");
    if (texel && b->access != GLC_READ)
        return bad_binding(dev, kname, i, "a texel binding is read only");
    if (b->offset >= b->buffer->capacity ||
        (b->size ? b->size : b->buffer->bytes - b->offset) > b->buffer->capacity - b->offset)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "glc_session_dispatch(%s): binding %d: bytes [%zu, +%zu) outside the "
                         "buffer's %zu bytes",
                         kname, i, b->offset, b->size, b->buffer->bytes);
    size = b->size ? b->size : b->buffer->bytes - b->offset;
    if (b->offset % lim->ssbo_offset_alignment && !uniform)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "glc_session_dispatch(%s): binding %d: offset %zu is not a multiple of "
                         "the device's SSBO offset alignment %u",
                         kname, i, b->offset, lim->ssbo_offset_alignment);
    if (uniform && b->offset % lim->uniform_offset_alignment)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "glc_session_dispatch(%s): binding %d: offset %zu is not a multiple of "
                         "the device's uniform offset alignment %u",
                         kname, i, b->offset, lim->uniform_offset_alignment);
    if (texel && (size % 16 || size / 16 > lim->max_texel_buffer_size))
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "glc_session_dispatch(%s): binding %d: a texel binding of %zu bytes is "
                         "not whole 16-byte texels up to the device's %u",
                         kname, i, size, lim->max_texel_buffer_size);
    limit = uniform ? lim->max_uniform_block_size : (size_t)lim->max_ssbo_size;
    if (size > limit)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "glc_session_dispatch(%s): binding %d: %zu bytes exceed the device's %s "
                         "size limit %zu",
                         kname, i, size, uniform ? "uniform block" : "SSBO", limit);
    c->bind[i].buffer = b->buffer;
    c->bind[i].offset = b->offset;
    c->bind[i].size = size;
    c->bind[i].access = b->access;
    c->bind[i].kind = b->kind;
    dev->texel_used |= texel;
    return GLC_OK;
}

static glc_status validate(glc_session *s, const glc_dispatch_desc *d, glc__cmd *c)
{
    glc_device *dev = s->dev;
    const glc_device_limits *lim = &dev->info.limits;
    const char *kname;
    int i, nssbo = 0, ntexel = 0;
    glc_status st;
    if (!d || !d->kernel)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "glc_session_dispatch: no kernel");
    kname = d->kernel->name;
    if (d->kernel->dev != dev)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "glc_session_dispatch: kernel %s belongs to another device", kname);
    if (d->binding_count < 0 || (d->binding_count > 0 && !d->bindings) || d->param_count < 0 ||
        d->param_count > GLC_MAX_PARAMS || (d->param_count > 0 && !d->params))
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "glc_session_dispatch(%s): %d bindings, %d params (at most %d)", kname,
                         d->binding_count, d->param_count, GLC_MAX_PARAMS);
    for (i = 0; i < d->binding_count; i++) {
        nssbo += d->bindings[i].kind == GLC_BIND_STORAGE;
        ntexel += glc__is_texel(d->bindings[i].kind);
    }
    if (ntexel > GLC__TEXEL_UNITS)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "glc_session_dispatch(%s): %d texel bindings (at most %d)", kname, ntexel,
                         GLC__TEXEL_UNITS);
    if ((uint32_t)nssbo > lim->max_ssbo_blocks || d->binding_count > GLC__MAX_BINDINGS)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "glc_session_dispatch(%s): %d bindings, the device allows %u SSBO "
                         "blocks per compute shader",
                         kname, d->binding_count, lim->max_ssbo_blocks);
    if (d->indirect) {
        if (d->indirect->dev != dev || d->indirect_offset % 4 ||
            d->indirect_offset > d->indirect->bytes || d->indirect->bytes - d->indirect_offset < 12)
            return glc__fail(dev, GLC_ERR_BOUNDS,
                             "glc_session_dispatch(%s): indirect counts at byte %zu: need 12 "
                             "bytes at a multiple of 4 inside a buffer of this device",
                             kname, d->indirect_offset);
        c->grid[0] = c->grid[1] = c->grid[2] = 0;
        c->total_groups = UINT32_MAX;
    } else {
        if (glc__grid_fold(d->groups, lim->max_group_count, c->grid) != GLC_OK)
            return glc__fail(dev, GLC_ERR_BOUNDS,
                             "glc_session_dispatch(%s): %llu work groups (need 1..%u within "
                             "the device's grid)",
                             kname, (unsigned long long)d->groups, UINT32_MAX);
        c->total_groups = (uint32_t)d->groups;
    }
    for (i = 0; i < d->binding_count; i++)
        if ((st = check_binding(dev, kname, i, &d->bindings[i], c)) != GLC_OK)
            return st;
    c->kernel = d->kernel;
    c->nbind = d->binding_count;
    c->nparams = d->param_count;
    c->flags = d->flags;
    c->indirect = d->indirect;
    c->indirect_offset = d->indirect_offset;
    if (d->param_count)
        memcpy(c->params, d->params, sizeof(uint32_t) * (size_t)d->param_count);
    c->label = d->label;
    return GLC_OK;
}

static glc_status enter(glc_session *s, int nbind, glc__glstate *gs)
{
    return glc__enter_hot(s->dev,
                          GLC__TOUCH_PROGRAM | GLC__TOUCH_SSBO | GLC__TOUCH_UBO |
                              GLC__TOUCH_INDIRECT | glc__touch_texel(s->dev),
                          nbind, gs);
}

glc_status glc_session_dispatch(glc_session *s, const glc_dispatch_desc *d)
{
    glc__cmd c;
    glc__glstate gs;
    glc_status st;
    GLC__ARG(NULL, s);
    glc__use_device(s->dev); /* a recorded list grows before any GL call */
    st = validate(s, d, &c);
    if (st != GLC_OK)
        return st;
    if (s->mode & GLC_SESSION_RECORDED) {
        if (s->ncmds == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 64;
            glc__cmd *n = glc__realloc(s->cmds, cap * sizeof *n);
            if (!n)
                return glc__fail(s->dev, GLC_ERR_OUT_OF_MEMORY,
                                 "glc_session_dispatch: out of memory");
            s->cmds = n;
            s->cap = cap;
        }
        s->cmds[s->ncmds++] = c;
        return GLC_OK;
    }
    st = enter(s, c.nbind, &gs);
    if (st != GLC_OK)
        return st;
    st = glc__encode(s->dev, &c, &s->stats);
    glc__leave(s->dev, &gs);
    return st;
}

/* ---- recorded lists: passes and encoding ---- */

static glc_status reorder_pass(glc_session *s, glc__cmd *cmds, size_t *n, void *user)
{
    size_t i, nspans = 0;
    glc__cmd tmp;
    glc_status st;
    (void)user;
    if (*n > s->order_cap) {
        size_t cap = *n;
        size_t *order = glc__realloc(s->order, cap * sizeof *order);
        glc__reorder_item *items;
        glc__span *spans;
        if (order)
            s->order = order;
        items = order ? glc__realloc(s->items, cap * sizeof *items) : NULL;
        if (items)
            s->items = items;
        spans = items ? glc__realloc(s->spans, cap * (GLC__MAX_BINDINGS + 1) * sizeof *spans)
                      : NULL;
        if (!spans)
            return GLC_ERR_OUT_OF_MEMORY;
        s->spans = spans;
        s->order_cap = cap;
    }
    for (i = 0; i < *n; i++) {
        s->items[i].spans = s->spans + nspans;
        s->items[i].n = glc__cmd_spans(&cmds[i], s->spans + nspans);
        s->items[i].fence = (cmds[i].flags & GLC_DISPATCH_NO_REORDER) != 0;
        nspans += (size_t)s->items[i].n;
    }
    st = glc__reorder_run(&s->reorder, s->items, *n, s->reorder_window, s->order);
    if (st != GLC_OK)
        return st;
    /* apply the permutation in place, cycle by cycle */
    for (i = 0; i < *n; i++) {
        size_t cur = i, next;
        if (s->order[i] == i || s->order[i] >= *n)
            continue;
        tmp = cmds[i];
        while ((next = s->order[cur]) != i) {
            cmds[cur] = cmds[next];
            s->order[cur] = *n; /* done */
            cur = next;
        }
        cmds[cur] = tmp;
        s->order[cur] = *n;
    }
    return GLC_OK;
}

/* Runs the passes over the recorded list and encodes it. */
static glc_status encode_recorded(glc_session *s)
{
    glc__glstate gs;
    glc_status st = GLC_OK;
    size_t i, n = s->ncmds, flush_at;
    int p, nbind = 0;
    if (n == 0)
        return GLC_OK;
    glc__use_device(s->dev); /* the passes allocate before any GL call */
    for (p = 0; p < s->npasses && st == GLC_OK; p++)
        st = s->pass[p].fn(s, s->cmds, &n, s->pass[p].user);
    if (st == GLC_OK)
        st = reorder_pass(s, s->cmds, &n, NULL);
    if (st != GLC_OK) {
        s->ncmds = 0;
        return glc__fail(s->dev, st, "glc_session: a pass over the recorded list failed (%s)",
                         glc_status_str(st));
    }
    for (i = 0; i < n; i++)
        nbind = s->cmds[i].nbind > nbind ? s->cmds[i].nbind : nbind;
    st = enter(s, nbind, &gs);
    if (st != GLC_OK)
        return st;
    flush_at = n / 10 > 64 ? n / 10 : 64;
    for (i = 0; i < n && st == GLC_OK; i++) {
        st = glc__encode(s->dev, &s->cmds[i], &s->stats);
        if ((s->mode & GLC_SESSION_EARLY_FLUSH) && i + 1 == flush_at && i + 1 < n) {
            s->dev->gl.glFlush();
            s->stats.flushes++;
        }
    }
    glc__leave(s->dev, &gs);
    s->ncmds = 0;
    return st;
}

/* ---- barriers by hand ---- */

glc_status glc_session_barrier(glc_session *s)
{
    glc__glstate gs;
    glc_status st;
    GLC__ARG(NULL, s);
    if ((st = encode_recorded(s)) != GLC_OK || (st = glc__enter(s->dev, 0, 0, &gs)) != GLC_OK)
        return st;
    glc__enc_barrier(s->dev, GLC__BARRIER_STORAGE | GLC__BARRIER_UNIFORM | GLC__BARRIER_COMMAND,
                     &s->stats);
    glc__leave(s->dev, &gs);
    return GLC_OK;
}

/* Spans of reads then writes, checked like dispatch bindings. */
static glc_status manual_spans(glc_session *s, const char *fn, const glc_binding *reads,
                               int nreads, const glc_binding *writes, int nwrites,
                               glc__span *spans)
{
    glc__cmd c;
    int i;
    glc_status st;
    if (nreads < 0 || nwrites < 0 || nreads + nwrites > GLC__MAX_BINDINGS ||
        (nreads && !reads) || (nwrites && !writes))
        return glc__fail(s->dev, GLC_ERR_INVALID_ARG, "%s: %d reads, %d writes (at most %d)", fn,
                         nreads, nwrites, GLC__MAX_BINDINGS);
    for (i = 0; i < nreads + nwrites; i++) {
        glc_binding b = i < nreads ? reads[i] : writes[i - nreads];
        b.access = i < nreads ? GLC_READ : GLC_WRITE;
        b.kind = GLC_BIND_STORAGE;
        if ((st = check_binding(s->dev, fn, i, &b, &c)) != GLC_OK)
            return st;
        spans[i].buffer = b.buffer->id;
        spans[i].begin = c.bind[i].offset;
        spans[i].end = c.bind[i].offset + c.bind[i].size;
        spans[i].access = (uint32_t)b.access;
    }
    return GLC_OK;
}

glc_status glc_session_barrier_between(glc_session *s, const glc_binding *reads, int nreads,
                                       const glc_binding *writes, int nwrites, int *emitted)
{
    glc__span spans[GLC__MAX_BINDINGS];
    glc__glstate gs;
    glc_status st;
    int conflict;
    GLC__ARG(NULL, s);
    st = manual_spans(s, "glc_session_barrier_between", reads, nreads, writes, nwrites, spans);
    if (st != GLC_OK || (st = encode_recorded(s)) != GLC_OK)
        return st;
    conflict = glc__enc_conflicts(s->dev, spans, nreads + nwrites);
    if (conflict) {
        if ((st = glc__enter(s->dev, 0, 0, &gs)) != GLC_OK)
            return st;
        glc__enc_barrier(s->dev, GLC__BARRIER_STORAGE, &s->stats);
        glc__leave(s->dev, &gs);
    }
    if (emitted)
        *emitted = conflict;
    return GLC_OK;
}

glc_status glc_session_track_dispatch(glc_session *s, const glc_binding *reads, int nreads,
                                      const glc_binding *writes, int nwrites)
{
    glc__span spans[GLC__MAX_BINDINGS];
    glc_status st;
    GLC__ARG(NULL, s);
    st = manual_spans(s, "glc_session_track_dispatch", reads, nreads, writes, nwrites, spans);
    if (st != GLC_OK || (st = encode_recorded(s)) != GLC_OK)
        return st;
    return glc__enc_track_outside(s->dev, spans, nreads + nwrites, writes, nwrites,
                                  "glc_session_track_dispatch");
}

uint64_t glc_session_barrier_count(const glc_session *s) { return s ? s->stats.barriers : 0; }

glc_status glc_session_stats(const glc_session *s, glc_dispatch_stats *out)
{
    GLC__ARG(NULL, s);
    GLC__ARG(s->dev, out);
    *out = s->stats;
    return GLC_OK;
}

/* ---- fences and the end ---- */

static glc_status fence_new(glc_session *s, glc_fence **out)
{
    glc_device *dev = s->dev;
    glc_fence *f = glc__calloc(1, sizeof *f);
    if (!f)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "glc_session_commit: out of memory");
    f->dev = dev;
    f->sync = dev->gl.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    dev->gl.glFlush();
    s->stats.flushes++;
    if (!f->sync) {
        glc__free(f);
        return glc__fail(dev, GLC_ERR_GL, "glc_session_commit: glFenceSync failed");
    }
    *out = f;
    return GLC_OK;
}

glc_status glc_session_commit(glc_session *s, glc_fence **out)
{
    glc__glstate gs;
    glc_status st;
    GLC__ARG(NULL, s);
    GLC__ARG(s->dev, out);
    if ((st = encode_recorded(s)) != GLC_OK || (st = glc__enter(s->dev, 0, 0, &gs)) != GLC_OK)
        return st;
    st = fence_new(s, out);
    if (st == GLC_OK)
        s->dev->live_objects++;
    glc__leave(s->dev, &gs);
    return st;
}

glc_status glc_fence_wait(glc_fence *f, uint64_t timeout_ns)
{
    glc__glstate gs;
    uint64_t waited = 0;
    glc_status st;
    GLC__ARG(NULL, f);
    if ((st = glc__enter(f->dev, 0, 0, &gs)) != GLC_OK)
        return st;
    st = glc__sync_wait(f->dev, f->sync, timeout_ns, &waited, "glc_fence_wait");
    glc__leave(f->dev, &gs);
    return st;
}

void glc_fence_destroy(glc_fence *f)
{
    glc__glstate gs;
    if (!f)
        return;
    if (glc__enter(f->dev, 0, 0, &gs) == GLC_OK) {
        f->dev->gl.glDeleteSync(f->sync);
        glc__leave(f->dev, &gs);
    }
    f->dev->live_objects--;
    glc__free(f);
}

glc_status glc_session_finish(glc_session *s, glc_dispatch_stats *stats)
{
    glc_device *dev;
    glc__glstate gs;
    glc_fence *f = NULL;
    glc_status st;
    GLC__ARG(NULL, s);
    dev = s->dev;
    st = encode_recorded(s);
    if (st == GLC_OK && (st = glc__enter(dev, 0, 0, &gs)) == GLC_OK) {
        st = fence_new(s, &f);
        if (st == GLC_OK) {
            st = glc__sync_wait(dev, f->sync, UINT64_MAX, &s->stats.gpu_wait_ns, "glc_fence_wait");
            dev->gl.glDeleteSync(f->sync);
            glc__free(f);
        }
        glc__leave(dev, &gs);
    }
    if (stats)
        *stats = s->stats;
    glc__reorder_finish(&s->reorder);
    while (s->nscratch > 0)
        glc_buffer_destroy(s->scratch[--s->nscratch]);
    glc__free(s->cmds);
    glc__free(s->order);
    glc__free(s->items);
    glc__free(s->spans);
    dev->live_objects--;
    glc__free(s);
    return st;
}
