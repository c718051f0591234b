/*
 * Sessions: one dispatch at a time (DIRECT) or a recorded command list
 * encoded at finish (RECORDED). Barriers come from the hazard tracker: a
 * dispatch that conflicts with one since the last barrier gets
 * GL_SHADER_STORAGE_BARRIER_BIT first; independent dispatches get none.
 */
#ifndef GLC_SESSION_H
#define GLC_SESSION_H

#include "glcompute.h"
#include "hazard.h"

#define GLC__MAX_BINDINGS 16

/* A validated dispatch, ready to encode: bindings resolved to byte ranges,
 * the grid folded. RECORDED sessions keep these in a list. */
typedef struct glc__cmd {
    glc_kernel *kernel;
    uint32_t grid[3];
    uint32_t total_groups;
    int nbind, nparams;
    struct {
        glc_buffer *buffer;
        size_t offset, size;
        glc_access access;
    } bind[GLC__MAX_BINDINGS];
    uint32_t params[GLC_MAX_PARAMS];
    const char *label;
} glc__cmd;

#endif
