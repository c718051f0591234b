/*
 * The encoder: the one owner of the state that orders GPU work on a
 * device's context, and the few operations that change it. Sessions
 * (session.c), plans (plan_run.c) and buffers (buffer.c) change it only
 * through these calls.
 *
 * Its state is the context's, not a session's or a plan's: a dispatch of
 * the next session, or of a plan run after eager work, can depend on one of
 * the last. It holds the hazard tracker (storage ranges since the last
 * storage barrier), the GLC_VALIDATE oracle over the same stream, the names
 * of the dispatches since the barrier (messages and traces), the dispatch
 * sequence and the last barrier of each other kind, and the binding cache
 * that lets consecutive dispatches of one API call skip GL calls.
 *
 * The policy (GLC_BARRIERS, GLC_VALIDATE, GLC_TRACE, read once by env.c at
 * device creation) stays in the device; the encoder reads it.
 */
#ifndef GLC_ENCODE_H
#define GLC_ENCODE_H

#include "gl.h"
#include "glstate.h"
#include "glcompute.h"
#include "hazard.h"

#define GLC__MAX_BINDINGS 16

/* A validated dispatch, ready to encode: ranges resolved, the grid folded.
 * RECORDED sessions keep a list of these; plans an array of them. */
typedef struct glc__cmd {
    glc_kernel *kernel;
    uint32_t grid[3];
    uint32_t total_groups;
    int nbind, nparams;
    uint32_t flags;
    struct {
        glc_buffer *buffer;
        size_t offset, size;
        glc_access access;
        glc_binding_kind kind;
    } bind[GLC__MAX_BINDINGS];
    glc_buffer *indirect;
    size_t indirect_offset;
    uint32_t params[GLC_MAX_PARAMS];
    const char *label;
} glc__cmd;

struct glc__named; /* encode.c: a dispatch's kernel and label */

typedef struct glc__encoder {
    glc__hazard haz;              /* storage ranges since the last storage barrier */
    size_t since_barrier;         /* dispatches encoded since the last storage barrier */
    glc__oracle oracle;           /* GLC_VALIDATE: the brute-force check of what is emitted */
    struct glc__named *named;     /* validate/trace: names of dispatches since the barrier */
    size_t nnamed, named_cap;
    uint64_t dispatch_seq;        /* dispatches encoded so far */
    uint64_t update_barrier_seq;  /* dispatch_seq at the last BUFFER_UPDATE barrier */
    uint64_t uniform_barrier_seq; /* ... UNIFORM barrier */
    uint64_t command_barrier_seq; /* ... COMMAND barrier */
    /* What the last dispatches bound. Valid within one API call only (the
     * host may change bindings between calls on an adopted context):
     * glc__enter forgets it (glc__enc_forget_bindings). */
    struct glc__bound {
        int valid;
        GLuint program;
        struct {
            GLuint name;
            GLintptr offset;
            GLsizeiptr size;
        } ssbo[16];
        unsigned texel_units; /* the units that hold the device's buffer textures */
    } bound;
} glc__encoder;

struct glc_device;

void glc__enc_init(glc__encoder *e);
void glc__enc_finish(glc__encoder *e);
void glc__enc_forget_bindings(glc__encoder *e);
/* Whether one of the device's buffer textures shows buffer `id` (no GL
 * call); glc__enc_drop_texel deletes those (before the buffer is deleted:
 * a texture would keep its storage alive). */
int glc__enc_shows_texel(const struct glc_device *dev, uint32_t id);
/* Makes the device's missing buffer textures (a plan's compile, so that
 * its runs make none; a dispatch makes its own on first use). */
void glc__enc_texel_make(struct glc_device *dev);
void glc__enc_drop_texel(struct glc_device *dev, uint32_t id);

/* The GL bits of barrier kinds (glc__barrier_kind): the one mapping. */
GLbitfield glc__gl_barrier_bits(unsigned kinds);

/* Emits a barrier of `kinds` and records it: a storage barrier empties the
 * tracker and the oracle. stats (may be NULL) counts it. */
void glc__enc_barrier(struct glc_device *dev, unsigned kinds, glc_dispatch_stats *stats);
/* A storage barrier when any dispatch since the last one is tracked (what
 * a plan's replay starts with). */
void glc__enc_settle(struct glc_device *dev);
/* The BUFFER_UPDATE barrier the host's access to a buffer last written by
 * the dispatch numbered write_seq needs, when none came after it. */
void glc__enc_host_access(struct glc_device *dev, uint64_t write_seq);

/* Encodes one command: barrier if needed, bindings, params, dispatch. The
 * caller has entered the device; the session's stats count it. */
glc_status glc__encode(struct glc_device *dev, const glc__cmd *c, glc_dispatch_stats *stats);

/* Binds and dispatches c with no tracking and no barrier (a plan's
 * precomputed list has them), counting it in the dispatch sequence; a
 * plan's barrier before it goes through glc__enc_raw_barrier. */
void glc__replay(struct glc_device *dev, const glc__cmd *c);
void glc__enc_raw_barrier(struct glc_device *dev, unsigned kinds);
/* After a replay: the tracker learns the spans after the plan's last
 * barrier (a storage barrier instead when it cannot hold them). */
void glc__enc_learn(struct glc_device *dev, const glc__span *spans, int n);

/* 1 when the spans conflict with what was tracked since the barrier. */
int glc__enc_conflicts(struct glc_device *dev, const glc__span *spans, int n);
/* A dispatch made outside the library (glc_session_track_dispatch): its
 * spans tracked as the next dispatch, `writes` marked written by it. */
glc_status glc__enc_track_outside(struct glc_device *dev, const glc__span *spans, int n,
                                  const glc_binding *writes, int nwrites, const char *fn);

/* Converts a command's bindings to tracker spans; returns the count. */
int glc__cmd_spans(const glc__cmd *c, glc__span *spans);

/* Waits for sync up to timeout_ns (UINT64_MAX: until signalled, whatever
 * the driver clamps a timeout to), adding the time blocked to *waited.
 * GLC_ERR_TIMEOUT, GLC_ERR_CONTEXT_LOST or GLC_ERR_GL naming fn. */
glc_status glc__sync_wait(struct glc_device *dev, GLsync sync, uint64_t timeout_ns,
                          uint64_t *waited, const char *fn);

uint64_t glc__now_ns(void);

#endif
