/*
 * The listing of a compiled plan for people (glc_plan_dump), GL-free: it
 * reads the program (compile.h) and the graph, and the little it needs of
 * the GL side through a view the plan fills (src/gl/plan_dump.c): each
 * command as materialised (grid, bindings of another plan's storage),
 * which tensors are shared, and each program's source.
 */
#ifndef GLC_LISTING_H
#define GLC_LISTING_H

#include "compile.h"

typedef struct glc__listing_bind {
    int32_t tensor;    /* graph tensor, or -1: scratch */
    int buffer;        /* the program's buffer b<n>, or -1: another plan's (shared) */
    unsigned gl_name;  /* shared: that buffer's GL name, for people */
    size_t offset, size;
    glc_access access;
} glc__listing_bind;

/* Command i as the plan replays it. */
typedef struct glc__listing_cmd {
    const void *program; /* the same for commands of one program */
    const char *kernel, *label, *defines;
    uint32_t local_size, total_groups, grid[3];
    unsigned barrier;    /* glc__barrier_kind bits emitted before it */
    int nbind;
    glc__listing_bind bind[GLC__OP_MAX_BIND];
} glc__listing_cmd;

typedef struct glc__listing {
    const glc_graph *g;       /* the plan's graph (after fusion) */
    const glc__program *prog;
    glc_plan_info info;
    const void *ctx;          /* the plan, passed to the calls below */
    void (*cmd)(const void *ctx, size_t i, glc__listing_cmd *out);
    int (*shared)(const void *ctx, int32_t tensor); /* 1: another plan's storage */
    /* The GLSL source of command i's program (glc__malloc'ed), or NULL:
     * none embedded (*oom 0) or out of memory (*oom 1). */
    char *(*source)(const void *ctx, size_t i, int *oom);
} glc__listing;

/* Passes the listing to fn in pieces (glc_plan_dump's text), the sources
 * too with GLC_PLAN_DUMP_SOURCE. GLC_ERR_OUT_OF_MEMORY when a source could
 * not be made (the caller reports it). */
glc_status glc__listing_write(const glc__listing *v, unsigned flags, glc_text_fn fn, void *user);

#endif
