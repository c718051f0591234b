/*
 * Sessions (see session.h). Validation happens when a dispatch is made, in
 * both modes, so a bad binding is reported at the call that made it and
 * nothing is recorded. Encoding is shared: DIRECT encodes each command at
 * once, RECORDED keeps the list and encodes it at finish.
 *
 * Barrier policy: before each command, the tracker is asked whether the
 * command's spans conflict with anything since the last barrier; if so,
 * one GL_SHADER_STORAGE_BARRIER_BIT (it orders RAW, WAR and WAW between
 * dispatches) and the tracker is cleared. GLC_BARRIERS=always instead puts
 * a barrier between every two dispatches (the peers' policy, and the
 * reference for benchmarks and bisecting).
 */
#include "session.h"

#include "alloc.h"
#include "buffer.h"
#include "device.h"
#include "grid.h"
#include "kernel.h"

#include <stdlib.h>
#include <string.h>

struct glc_session {
    glc_device *dev;
    glc_session_mode mode;
    int always_barrier;
    glc__hazard haz;
    size_t since_barrier; /* dispatches encoded since the last barrier */
    glc__cmd *cmds;       /* RECORDED: the command list */
    size_t ncmds, cap;
    uint64_t dispatches, barriers;
};

glc_status glc_session_begin(glc_device *dev, glc_session_mode mode, glc_session **out)
{
    glc_session *s;
    const char *pol = getenv("GLC_BARRIERS");
    if (!dev)
        return GLC_ERR_INVALID_ARG;
    GLC__ARG(dev, out);
    if (mode != GLC_SESSION_DIRECT && mode != GLC_SESSION_RECORDED)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "glc_session_begin: mode %d", (int)mode);
    s = glc__calloc(1, sizeof *s);
    if (!s)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "glc_session_begin: out of memory");
    s->dev = dev;
    s->mode = mode;
    s->always_barrier = pol && strcmp(pol, "always") == 0;
    glc__hazard_init(&s->haz);
    dev->live_objects++;
    *out = s;
    return GLC_OK;
}

static glc_status validate(glc_session *s, const glc_dispatch_desc *d, glc__cmd *c)
{
    glc_device *dev = s->dev;
    const glc_device_limits *lim = &dev->info.limits;
    int i;
    if (!d || !d->kernel)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "glc_session_dispatch: no kernel");
    if (d->kernel->dev != dev)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "glc_session_dispatch: kernel %s belongs to another device",
                         d->kernel->name);
    if (d->binding_count < 0 || (d->binding_count > 0 && !d->bindings) ||
        d->param_count < 0 || d->param_count > GLC_MAX_PARAMS ||
        (d->param_count > 0 && !d->params))
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "glc_session_dispatch(%s): %d bindings, %d params (at most %d)",
                         d->kernel->name, d->binding_count, d->param_count, GLC_MAX_PARAMS);
    if ((uint32_t)d->binding_count > lim->max_ssbo_blocks ||
        d->binding_count > GLC__MAX_BINDINGS)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "glc_session_dispatch(%s): %d bindings, the device allows %u SSBO "
                         "blocks per compute shader",
                         d->kernel->name, d->binding_count, lim->max_ssbo_blocks);
    if (glc__grid_fold(d->groups, lim->max_group_count, c->grid) != GLC_OK)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "glc_session_dispatch(%s): %llu work groups (need 1..%u within the "
                         "device's grid)",
                         d->kernel->name, (unsigned long long)d->groups, UINT32_MAX);
    for (i = 0; i < d->binding_count; i++) {
        const glc_binding *b = &d->bindings[i];
        size_t size;
        if (!b->buffer || b->buffer->dev != dev || b->access < GLC_READ ||
            b->access > GLC_READ_WRITE)
            return glc__fail(dev, GLC_ERR_INVALID_ARG,
                             "glc_session_dispatch(%s): binding %d: %s", d->kernel->name, i,
                             !b->buffer ? "no buffer"
                             : b->buffer->dev != dev ? "buffer of another device"
                                                     : "access is not READ/WRITE/READ_WRITE");
        if (b->offset >= b->buffer->bytes ||
            (b->size ? b->size : b->buffer->bytes - b->offset) > b->buffer->bytes - b->offset)
            return glc__fail(dev, GLC_ERR_BOUNDS,
                             "glc_session_dispatch(%s): binding %d: bytes [%zu, +%zu) outside "
                             "the buffer's %zu bytes",
                             d->kernel->name, i, b->offset, b->size, b->buffer->bytes);
        size = b->size ? b->size : b->buffer->bytes - b->offset;
        if (b->offset % lim->ssbo_offset_alignment)
            return glc__fail(dev, GLC_ERR_BOUNDS,
                             "glc_session_dispatch(%s): binding %d: offset %zu is not a "
                             "multiple of the device's SSBO offset alignment %u",
                             d->kernel->name, i, b->offset, lim->ssbo_offset_alignment);
        if (size > lim->max_ssbo_size)
            return glc__fail(dev, GLC_ERR_BOUNDS,
                             "glc_session_dispatch(%s): binding %d: %zu bytes exceed the "
                             "device's SSBO size limit %llu",
                             d->kernel->name, i, size, (unsigned long long)lim->max_ssbo_size);
        c->bind[i].buffer = b->buffer;
        c->bind[i].offset = b->offset;
        c->bind[i].size = size;
        c->bind[i].access = b->access;
    }
    c->kernel = d->kernel;
    c->total_groups = (uint32_t)d->groups;
    c->nbind = d->binding_count;
    c->nparams = d->param_count;
    if (d->param_count)
        memcpy(c->params, d->params, sizeof(uint32_t) * (size_t)d->param_count);
    c->label = d->label;
    return GLC_OK;
}

static void barrier(glc_session *s)
{
    /* why: orders RAW, WAR and WAW on SSBOs between dispatches */
    s->dev->gl.glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    glc__hazard_clear(&s->haz);
    s->since_barrier = 0;
    s->barriers++;
}

static glc_status encode(glc_session *s, const glc__cmd *c)
{
    glc_device *dev = s->dev;
    glc__span spans[GLC__MAX_BINDINGS];
    glc_status st;
    int i;
    for (i = 0; i < c->nbind; i++) {
        spans[i].buffer = c->bind[i].buffer->id;
        spans[i].begin = c->bind[i].offset;
        spans[i].end = c->bind[i].offset + c->bind[i].size;
        spans[i].access = (uint32_t)c->bind[i].access;
    }
    if (s->since_barrier &&
        (s->always_barrier || glc__hazard_check(&s->haz, spans, c->nbind, NULL)))
        barrier(s);
    st = glc__hazard_add(&s->haz, spans, c->nbind, (uint32_t)s->dispatches);
    if (st != GLC_OK)
        return glc__fail(dev, st, "glc_session_dispatch: out of memory");
    dev->gl.glUseProgram(c->kernel->program);
    for (i = 0; i < c->nbind; i++)
        dev->gl.glBindBufferRange(GL_SHADER_STORAGE_BUFFER, (GLuint)i, c->bind[i].buffer->name,
                                  (GLintptr)c->bind[i].offset, (GLsizeiptr)c->bind[i].size);
    if (c->kernel->params_loc >= 0 && c->nparams)
        dev->gl.glUniform1uiv(c->kernel->params_loc, c->nparams, c->params);
    if (c->kernel->total_loc >= 0)
        dev->gl.glUniform1ui(c->kernel->total_loc, c->total_groups);
    dev->gl.glDispatchCompute(c->grid[0], c->grid[1], c->grid[2]);
    dev->dispatch_seq++;
    for (i = 0; i < c->nbind; i++)
        if (c->bind[i].access & GLC_WRITE)
            c->bind[i].buffer->write_seq = dev->dispatch_seq;
    s->since_barrier++;
    s->dispatches++;
    return glc__check_gl(dev, "glc_session_dispatch");
}

glc_status glc_session_dispatch(glc_session *s, const glc_dispatch_desc *d)
{
    glc__cmd c;
    glc__glstate gs;
    glc_status st;
    if (!s)
        return GLC_ERR_INVALID_ARG;
    st = validate(s, d, &c);
    if (st != GLC_OK)
        return st;
    if (s->mode == GLC_SESSION_RECORDED) {
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
    st = glc__enter(s->dev, GLC__TOUCH_PROGRAM | GLC__TOUCH_SSBO, c.nbind, &gs);
    if (st != GLC_OK)
        return st;
    st = encode(s, &c);
    glc__leave(s->dev, &gs);
    return st;
}

glc_status glc_session_finish(glc_session *s)
{
    glc_device *dev;
    glc__glstate gs;
    glc_status st;
    size_t i;
    int nbind = 0;
    if (!s)
        return GLC_ERR_INVALID_ARG;
    dev = s->dev;
    for (i = 0; i < s->ncmds; i++)
        nbind = s->cmds[i].nbind > nbind ? s->cmds[i].nbind : nbind;
    st = glc__enter(dev, GLC__TOUCH_PROGRAM | GLC__TOUCH_SSBO, nbind, &gs);
    if (st == GLC_OK) {
        for (i = 0; i < s->ncmds && st == GLC_OK; i++)
            st = encode(s, &s->cmds[i]);
        dev->gl.glFinish();
        glc__leave(dev, &gs);
    }
    glc__hazard_finish(&s->haz);
    glc__free(s->cmds);
    dev->live_objects--;
    glc__free(s);
    return st;
}
