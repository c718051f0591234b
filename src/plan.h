/*
 * The compiled plan object, shared by plan.c (compile, params, plain runs,
 * handles, variables, sharing) and plan_exec.c (runs without a wait,
 * pipelined, typed and profiled runs, the dump).
 *
 * Invariants: cmds[i] is prog.cmd[i] resolved at the current variable
 * values and bar[i] the barrier bits emitted before it; inputs and outputs
 * have fixed places in the arena (their offsets never move with the
 * variables); the mirror holds output j at out[j].host_off, laid out for
 * the maxima. exec is zero after compile and owned by plan_exec.c.
 */
#ifndef GLC_PLAN_H
#define GLC_PLAN_H

#include "compile.h"
#include "gl.h"
#include "session.h"

typedef struct glc__plan_io {
    int32_t tensor;
    size_t host_off; /* outputs: where the mirror holds it */
} glc__plan_io;

/* plan_exec.c's state of a plan. */
typedef struct glc__plan_exec {
    GLsync pending;                        /* glc_plan_commit_no_wait's fence, or 0 */
    int64_t pending_vals[GLC__GRAPH_MAX_VARS]; /* variable values of that run */
    struct glc_buffer *stage_in, *stage_out;   /* glc_plan_run_pipelined's per-set regions */
    /* glc_plan_run_profiled: called around each dispatch of a replay (after
     * its barrier) while set; NULL otherwise */
    void (*probe)(struct glc_plan *p, size_t i, int after);
    GLuint *queries;   /* 3 per dispatch: elapsed, timestamp before, after */
    size_t nqueries;   /* query names generated */
    uint64_t *cpu_ns;  /* per dispatch, without timer queries */
    size_t ncpu;
    uint64_t t0;
    int mode;          /* the clocks recorded in this run (plan_exec.c) */
    int clock;         /* the glc_profile_clock found to measure compute, 0 before */
} glc__plan_exec;

struct glc_plan {
    glc_device *dev;
    glc_graph *g; /* the plan's own copy of the graph, after fusion */
    uint32_t flags; /* the glc_compile_desc flags it was compiled with */
    glc__program prog;
    glc_buffer **buf;      /* [prog.nbuffers] */
    glc__cmd *cmds;        /* [prog.ncmd], at the current variable values */
    unsigned *bar;         /* barrier bits before each command */
    size_t cmdcap;
    int max_bind;
    glc__span *tail;       /* prog.tail with the GL buffers' tracker ids */
    int ntail;
    glc__plan_io *in, *out;
    int nin, nout;
    unsigned char *mirror; /* outputs, host side */
    size_t mirror_bytes;
    unsigned char *stage;  /* input conversions */
    size_t stage_bytes;
    unsigned char *param_set; /* params and handles: 1 once given contents */
    struct ext {
        glc_buffer *buf; /* another plan's storage for this tensor (shared) */
        size_t offset;
    } *ext;              /* per graph tensor */
    struct feed {
        int32_t from, to; /* output tensor -> handle tensor */
    } feed[8];
    int nfeed;
    glc__plan_exec exec;
};

/* ---- plan.c, for plan_exec.c ---- */

/* GLC_ERR_STATE naming fn when a param or handle was never given contents. */
glc_status glc__plan_params_ready(glc_plan *p, const char *fn);
/* The buffer and byte offset holding graph tensor id (a sharing plan's
 * buffer for a shared param or handle). */
glc_buffer *glc__plan_storage(const glc_plan *p, int32_t id, size_t *offset);
/* Bytes of tensor id at the variable values vals (NULL: the current ones). */
size_t glc__plan_bytes_at(const glc_plan *p, int32_t id, const int64_t *vals);
/* The graph tensor of kind `kind` named name, or -1. */
int32_t glc__plan_find(const glc_plan *p, int kind, const char *name);
/* Uploads inputs by slot (bytes in the declared dtype, or f32/i32 values
 * converted when from_f32 is set). The caller has entered the device with
 * GLC__TOUCH_COPY. */
glc_status glc__plan_upload(glc_plan *p, const void *const *inputs, int from_f32,
                            const char *fn);
/* Replays the commands with their barriers (exec.probe around each) and
 * copies the handle feeds. The caller has entered the device with
 * GLC__TOUCH_PROGRAM | GLC__TOUCH_SSBO | GLC__TOUCH_COPY and max_bind. */
void glc__plan_replay(glc_plan *p);

/* ---- plan_exec.c ---- */

/* Releases exec's GL objects and memory (glc_plan_destroy). */
void glc__plan_exec_release(glc_plan *p);

#endif
