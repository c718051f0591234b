/*
 * glc_plan_dump: the plan's view for the GL-free listing (core/listing.c):
 * its commands as materialised, the tensors another plan's storage holds,
 * and each program's source. No GL call.
 */
#include "plan.h"

#include "alloc.h"
#include "buffer.h"
#include "errmsg.h"
#include "kernel.h"
#include "listing.h"

#include <string.h>

static void view_cmd(const void *ctx, size_t i, glc__listing_cmd *out)
{
    const glc_plan *p = ctx;
    const glc__cmd *c = &p->cmds[i];
    const glc__ccmd *cc = &p->prog.cmd[i];
    int j;
    out->program = c->kernel;
    out->kernel = c->kernel->name;
    out->label = c->label;
    out->defines = c->kernel->defines;
    out->local_size = c->kernel->local_size_x;
    out->total_groups = c->total_groups;
    memcpy(out->grid, c->grid, sizeof out->grid);
    out->barrier = p->bar[i];
    out->nbind = c->nbind;
    for (j = 0; j < c->nbind; j++) {
        glc__listing_bind *b = &out->bind[j];
        int shared = c->bind[j].buffer != p->buf[cc->bind[j].buffer];
        b->tensor = cc->bind[j].tensor;
        b->buffer = shared ? -1 : cc->bind[j].buffer;
        b->gl_name = shared ? c->bind[j].buffer->name : 0;
        b->offset = c->bind[j].offset;
        b->size = c->bind[j].size;
        b->access = c->bind[j].access;
    }
}

static int view_shared(const void *ctx, int32_t tensor)
{
    const glc_plan *p = ctx;
    return p->ext[tensor].buf != NULL;
}

static char *view_source(const void *ctx, size_t i, int *oom)
{
    const glc_plan *p = ctx;
    const glc_kernel *kn = p->cmds[i].kernel;
    const char *body = glc__glsl_find(kn->name);
    char *src = body ? glc__kernel_source(p->dev, kn->name, body, kn->defines, kn->local_size_x)
                     : NULL;
    *oom = body && !src;
    return src;
}

glc_status glc_plan_dump(const glc_plan *p, unsigned flags, glc_text_fn fn, void *user)
{
    glc__listing v;
    GLC__ARG(NULL, p);
    if (!fn || (flags & ~(unsigned)GLC_PLAN_DUMP_SOURCE))
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG,
                         "glc_plan_dump: %s", fn ? "unknown flags" : "fn is NULL");
    glc__use_device(p->dev); /* the sources are allocated */
    v.g = p->g;
    v.prog = &p->prog;
    glc_plan_stats(p, &v.info);
    v.ctx = p;
    v.cmd = view_cmd;
    v.shared = view_shared;
    v.source = view_source;
    if (glc__listing_write(&v, flags, fn, user) != GLC_OK)
        return glc__fail(p->dev, GLC_ERR_OUT_OF_MEMORY, "glc_plan_dump: out of memory");
    return GLC_OK;
}
