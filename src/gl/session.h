/*
 * Sessions, internal: the session object and its passes over recorded
 * command lists. The command type and the encoder that turns commands
 * into GL calls with the barriers they need are encode.h's.
 */
#ifndef GLC_SESSION_H
#define GLC_SESSION_H

#include "encode.h"
#include "glcompute.h"
#include "hazard.h"
#include "reorder.h"

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

/* Registers a pass run on RECORDED command lists before encoding (after
 * the ones registered earlier; the reorder pass runs last). */
glc_status glc__session_add_pass(glc_session *s, glc__pass_fn fn, void *user);

#endif
