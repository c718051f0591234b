/*
 * The graph compiler, GL-free: a graph (fused first, fuse.c, unless the
 * caller says not) becomes a program, a flat list of
 * dispatches whose bindings are byte ranges of a few buffers (the arena
 * buffers, the params buffers, a buffer per handle), with the barrier bits each dispatch
 * needs before it precomputed by the hazard tracker. plan.c turns the
 * buffers into GL buffers and the kernels into programs, and replays the
 * list.
 *
 * Steps:
 *  1. live nodes: those an output depends on, in graph order (the graph
 *     is built in topological order);
 *  2. each step's dispatch plans from the op table at the variables'
 *     maxima (the arena is sized for them);
 *  3. the memory plan (memplan.c): inputs and outputs get fixed slots,
 *     intermediates and op scratch share by liveness, over as many arena
 *     buffers as the device's SSBO size needs; params packed one after
 *     another into read-only buffers;
 *  4. commands: bindings resolved to (buffer, offset, size), then the
 *     session's reorder pass (reorder.c) pulls independent dispatches
 *     together between barriers;
 *  5. barriers: the tracker walks the commands once.
 * With other variable values (glc__program_set_vars) the steps that
 * depend on a variable are planned again and steps 4-5 redone; offsets
 * never move.
 */
#ifndef GLC_COMPILE_H
#define GLC_COMPILE_H

#include "graph.h"
#include "hazard.h"

typedef enum glc__region {
    GLC__REGION_NONE = 0, /* an absent tensor, or one no live step uses */
    GLC__REGION_ARENA,
    GLC__REGION_PARAMS,
    GLC__REGION_HANDLE  /* a buffer of its own */
} glc__region;

/* Where a graph tensor lives. */
typedef struct glc__place {
    glc__region region;
    int buffer;    /* index into the program's buffers */
    size_t offset; /* bytes */
    size_t bytes;  /* at the maxima */
} glc__place;

typedef struct glc__cbind {
    int32_t tensor; /* graph tensor, or -1 for op scratch */
    int buffer;
    size_t offset, size;
    glc_access access;
    glc_binding_kind kind;
} glc__cbind;

/* One dispatch of the program. */
typedef struct glc__ccmd {
    int step;
    const glc__dispatch_plan *plan; /* kernel, defines, groups, params */
    glc__cbind bind[GLC__OP_MAX_BIND];
    int nbind;
    unsigned barrier; /* glc__barrier_kind bits to emit before it (0: none) */
    glc__conflict why; /* with a barrier: the conflict that needs it (earlier:
                        * 1 + the command index) */
} glc__ccmd;

typedef struct glc__cstep {
    size_t node;         /* graph node */
    uint32_t level;      /* in the dependency DAG (compile.c's schedule) */
    int vars;            /* 1: a shape or arg follows a variable */
    glc__op_args args;   /* at the current variable values */
    glc__op_plan plan;
} glc__cstep;

typedef struct glc__program {
    const glc_graph *g;
    glc__target target;
    size_t align;
    /* buffers: [0, narena) arena, [narena, nparams) params, then handles */
    int narena, nparams, nbuffers;
    size_t *buffer_bytes;
    glc__place *place;    /* per graph tensor */
    glc__place *scratch;  /* per step */
    glc__cstep *step;
    size_t nsteps;
    glc__ccmd *cmd;
    size_t ncmd, cmdcap;
    size_t arena_bytes, lower_bound, params_bytes;
    int tight;           /* memory-tight policy: lifetimes in steps, not levels */
    uint32_t levels;     /* of the steps' dependency DAG: levels - 1 barriers at least */
    size_t bound_steps, bound_levels; /* liveness bounds, lifetimes in steps / levels */
    int64_t vals[GLC__GRAPH_MAX_VARS]; /* the variable values of the commands */
    uint32_t barriers;
    uint32_t fused; /* patterns the fusion passes rewrote (glc__compile_graph) */
    int params_only;  /* the last set_vars changed params only: commands and
                       * barriers as they were */
} glc__program;

/* The compiler's entry: fuses g in place when `fuse` is set (fuse.c), then
 * compiles it; p->fused counts the patterns fused. A graph fused already
 * (a clone's source) is compiled with fuse 0 and its count set by the
 * caller. On failure err holds a message. */
glc_status glc__compile_graph(glc_graph *g, const glc__target *tg, int fuse, int tight,
                              glc__program *p, char *err, size_t errlen);

/* Compiles g for a target (GL-free), no fusion. On failure err holds a
 * message. */
glc_status glc__compile(const glc_graph *g, const glc__target *tg, glc__program *p, char *err,
                        size_t errlen);
/* The same with a memory policy: tight 0 plans memory by dependency level
 * (no reuse adds a barrier), 1 by step (least memory; reuse may add
 * barriers). glc__compile is policy 0. */
glc_status glc__compile_policy(const glc_graph *g, const glc__target *tg, int tight,
                               glc__program *p, char *err, size_t errlen);
void glc__program_free(glc__program *p);

/* Plans the steps that follow a variable again for vals (in bounds, checked
 * by the caller) and rebuilds the commands and barriers. On failure the
 * program stays as it was. */
glc_status glc__program_set_vars(glc__program *p, const int64_t *vals, char *err, size_t errlen);

#endif
