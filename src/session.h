/*
 * Sessions, internal: the validated command a dispatch becomes, and the
 * encoder that turns commands into GL calls with the barriers the hazard
 * tracker asks for (encode.c).
 */
#ifndef GLC_SESSION_H
#define GLC_SESSION_H

#include "glcompute.h"
#include "hazard.h"
#include "reorder.h"

#define GLC__MAX_BINDINGS 16

/* A validated dispatch, ready to encode: ranges resolved, the grid folded.
 * RECORDED sessions keep a list of these. */
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

/* A pass over a recorded command list before encoding (fusion hooks, and
 * the built-in reorder pass). It may rewrite, drop or permute cmds[0..*n). */
typedef glc_status (*glc__pass_fn)(glc_session *s, glc__cmd *cmds, size_t *n, void *user);

#define GLC__MAX_PASSES 4
#define GLC__SESSION_SCRATCH 8

struct glc_session {
    glc_device *dev;
    int mode;              /* glc_session_mode | GLC_SESSION_EARLY_FLUSH */
    glc__cmd *cmds;        /* RECORDED: commands not yet encoded */
    size_t ncmds, cap;
    size_t *order;         /* reorder pass output */
    glc__span *spans;      /* reorder pass input */
    glc__reorder_item *items;
    size_t order_cap;
    glc__reorder reorder;
    size_t reorder_window; /* 0: reorder off */
    struct {
        glc__pass_fn fn;
        void *user;
    } pass[GLC__MAX_PASSES];
    int npasses;
    glc_dispatch_stats stats;
    /* eager ops' scratch (op_run.c), destroyed by glc_session_finish */
    glc_buffer *scratch[GLC__SESSION_SCRATCH];
    int nscratch;
};

/* Encodes one command: barrier if needed, bindings, params, dispatch. The
 * caller has entered the device (context current, host state saved). */
glc_status glc__encode(glc_session *s, const glc__cmd *c);

/* Binds and dispatches c with no tracking and no barrier (the caller's
 * precomputed plan has them), counting it in the device's sequence. */
void glc__replay(glc_device *dev, const glc__cmd *c);

/* Emits a barrier with `bits` and records it in the trackers. */
void glc__emit_barrier(glc_session *s, unsigned bits);

/* Converts a command's bindings to tracker spans; returns the count. */
int glc__cmd_spans(const glc__cmd *c, glc__span *spans);

/* Registers a pass run on RECORDED command lists before encoding (after
 * the ones registered earlier; the reorder pass runs last). */
glc_status glc__session_add_pass(glc_session *s, glc__pass_fn fn, void *user);

uint64_t glc__now_ns(void);

#endif
