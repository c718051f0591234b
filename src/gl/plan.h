/*
 * The compiled plan object, shared by the four plan files; dependencies
 * run one way, plan.c at the bottom:
 *
 *   plan.c          materialise (buffers, commands, barriers), lifetime,
 *                   params, handles, variables, share/clone, stats
 *   plan_run.c      the replay and every run (plain, slots, raw, typed,
 *                   with variables, without a wait, pipelined), with one
 *                   name resolver           -> plan.c
 *   plan_profile.c  profiled runs           -> plan_run.c, plan.c
 *   plan_dump.c     glc_plan_dump: the view core/listing.c lists (no GL
 *                   call)                   -> plan.c
 *
 * Invariants: cmds[i] is prog.cmd[i] resolved at the current variable
 * values and bar[i] the barrier kinds (glc__barrier_kind) emitted before
 * it; inputs and outputs have fixed places in the arena (their offsets
 * never move with the variables); the mirror holds output j at
 * out[j].host_off, laid out for the maxima. run and prof are zero after
 * compile; glc_plan_destroy (plan.c) releases what they hold.
 */
#ifndef GLC_PLAN_H
#define GLC_PLAN_H

#include "compile.h"
#include "gl.h"
#include "session.h"

typedef struct glc__plan_io {
    int32_t tensor;
    size_t host_off;        /* outputs: where the mirror holds it */
    struct glc_buffer *bound; /* glc_plan_bind_input / _output: its GPU memory, or NULL */
    size_t bound_off, bound_bytes;
    int copied;               /* an output kept where the plan put it, copied to `bound`
                               * after each run (its bytes are not its own) */
    uint32_t tex;             /* glc_plan_bind_input_texture / _output_texture: the GL
                               * texture (2D), or 0; the tensor stays in the plan */
    int tex_level, tex_fmt;   /* its level; 0 RGBA8, 1 R32F */
    int tex_w, tex_h;
    struct glc_kernel *tex_kernel; /* image_io for it */
} glc__plan_io;

/* plan_run.c's state of a plan. */
typedef struct glc__plan_runs {
    GLsync pending;                            /* glc_plan_commit_no_wait's fence, or 0 */
    int64_t pending_vals[GLC__GRAPH_MAX_VARS]; /* variable values of that run */
    struct glc_buffer *stage_in, *stage_out;   /* glc_plan_run_pipelined's per-set regions */
    unsigned char *stage_host;                 /* stage_in's bytes packed on the host */
    size_t stage_host_bytes;
    const void **inputs;                       /* [nin]: named inputs by slot */
    glc_plan_slice *slices;                    /* [nout]: a run's output slices */
} glc__plan_runs;

/* plan_profile.c's state of a plan. */
typedef struct glc__plan_prof {
    GLuint *queries;   /* 3 per dispatch: elapsed, timestamp before, after */
    size_t nqueries;   /* query names generated */
    uint64_t *cpu_ns;  /* per dispatch, without timer queries */
    size_t ncpu;
    uint64_t t0;
    int mode;          /* the clocks recorded in this run (plan_profile.c) */
    int clock;         /* the glc_profile_clock found to measure compute, 0 before */
} glc__plan_prof;

struct glc_plan {
    glc_device *dev;
    glc_graph *g; /* the plan's own copy of the graph, after fusion */
    uint32_t flags; /* the glc_compile_desc flags it was compiled with */
    glc__program prog;
    glc_buffer **buf;      /* [prog.nbuffers] */
    glc__cmd *cmds;        /* [prog.ncmd], at the current variable values */
    unsigned *bar;         /* barrier kinds (glc__barrier_kind) before each command */
    size_t cmdcap;
    int max_bind;
    glc__span *tail;       /* prog.tail with the GL buffers' tracker ids */
    int ntail;
    glc__plan_io *in, *out;
    int nin, nout;
    unsigned char *mirror; /* outputs, host side */
    size_t mirror_bytes;
    unsigned char *stage;  /* input conversions, and a run's packed upload (plan_run.c) */
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
    glc__plan_runs run;
    glc__plan_prof prof;
};

/* Host-side layout step of the mirror and the staging regions. */
static inline size_t glc__align16(size_t v) { return (v + 15) & ~(size_t)15; }

/* ---- plan.c ---- */

/* GLC_ERR_STATE (or INVALID_ARG) naming fn when a bound buffer is no
 * longer usable: destroyed by its owner while bound, or a wrapped GL
 * buffer the application deleted. The caller has entered the device. */
glc_status glc__plan_bindings_ok(glc_plan *p, const char *fn);
/* 1 when any input or output is bound to GPU memory (a buffer range or a
 * texture); io_external: this one. */
int glc__plan_has_bindings(const glc_plan *p);
static inline int glc__io_external(const glc__plan_io *io) { return io->bound || io->tex; }
/* 1 when any input or output is bound to a texture. */
int glc__plan_has_textures(const glc_plan *p);
/* The texture transfers around a replay: inputs (out 0) before its first
 * command, outputs (out 1) after its last; with the storage barriers
 * between them and the commands. Inside the caller's glc__enter with
 * GLC__TOUCH_IMAGE. */
void glc__plan_textures(glc_plan *p, int out);
/* The copies of bound outputs that are not their own bytes (after a replay,
 * inside the caller's glc__enter). */
void glc__plan_copy_bound(glc_plan *p);

/* GLC_ERR_STATE naming fn when a param or handle was never given contents. */
glc_status glc__plan_params_ready(glc_plan *p, const char *fn);
/* The buffer and byte offset holding graph tensor id (a sharing plan's
 * buffer for a shared param or handle). */
glc_buffer *glc__plan_storage(const glc_plan *p, int32_t id, size_t *offset);
/* Bytes and elements of tensor id at the variable values vals (NULL: the
 * current ones). */
size_t glc__plan_bytes_at(const glc_plan *p, int32_t id, const int64_t *vals);
size_t glc__plan_numel(const glc_plan *p, int32_t id);
/* The graph tensor of kind `kind` named name, or -1 (name may be NULL). */
int32_t glc__plan_find(const glc_plan *p, int kind, const char *name);
/* The output slot named name, or -1 (name may be NULL). */
int glc__plan_output_slot(const glc_plan *p, const char *name);

/* ---- plan_run.c ---- */

/* GLC_ERR_STATE naming fn while a run of glc_plan_commit_no_wait is
 * pending: another run would overwrite the arena that run's outputs are
 * still to be read from. GLC_OK otherwise. */
glc_status glc__plan_refuse_pending(glc_plan *p, const char *fn);
/* Every input slot given (inputs[0..nin) of one set). */
glc_status glc__plan_check_inputs(glc_plan *p, const void *const *inputs, const char *fn);
/* Host bytes a run's packed upload needs in p->stage (upload()). */
size_t glc__plan_pack_bytes(const glc_plan *p);

/* Called around each dispatch of a replay (after its barrier). */
typedef void (*glc__plan_probe)(glc_plan *p, size_t i, int after);

/* glc_plan_run_slots with probe called around each dispatch (NULL: none);
 * fn names the public call in messages. */
glc_status glc__plan_run_slots(glc_plan *p, const void *const *inputs, glc_plan_slice *outs,
                               glc__plan_probe probe, const char *fn);

#endif
