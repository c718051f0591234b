/*
 * The device object shared by every layer: the GL entry table, limits and
 * features, the per-device error message and log, and the enter/leave
 * bracket every GL-touching public call runs inside (context check, and for
 * an adopted context the save/restore of the GL state the call changes).
 */
#ifndef GLC_DEVICE_H
#define GLC_DEVICE_H

#include "gl.h"
#include "glcompute.h"
#include "glstate.h"
#include "egl.h"
#include "hazard.h"

#include <stdarg.h>

struct glc__kcache; /* kernel.c: programs cached by (name, defines) */
struct glc__heap;   /* alloc.c: the desc's allocator */

struct glc_device {
    glc__gl gl;
    struct glc__heap *heap; /* every host allocation for the device and its objects */
    glc__egl *egl;         /* NULL for a fake (recording) device */
    int adopted;           /* platform CURRENT: save/restore host state */
    uint32_t flags;        /* glc_device_flags */
    glc_device_info info;  /* strings point into the arrays below */
    char vendor[128], renderer[256], version[128], glsl_version[128];
    char *extensions;      /* GL extensions joined by spaces */

    glc_log_fn log;
    void *log_user;
    glc_log_level log_level;
    char errmsg[2048];

    char *cache_dir;             /* program-binary cache, or NULL */
    struct glc__kcache *kcache;  /* built-in kernels by (name, defines) */
    uint32_t next_buffer_id;     /* ids for the hazard tracker, never reused */
    uint64_t dispatch_seq;        /* dispatches encoded so far */
    uint64_t update_barrier_seq;  /* dispatch_seq at the last BUFFER_UPDATE barrier */
    uint64_t uniform_barrier_seq; /* ... UNIFORM barrier */
    uint64_t command_barrier_seq; /* ... COMMAND barrier */

    /* Barrier state is the context's, not a session's: a dispatch of the
     * next session can depend on one of the last. */
    glc__hazard haz;              /* storage ranges since the last barrier */
    size_t since_barrier;         /* dispatches encoded since the last barrier */
    int barrier_policy;           /* GLC__BARRIERS_* */
    int validate, trace;          /* GLC_VALIDATE=1, GLC_TRACE=barriers */
    glc__oracle oracle;           /* validate: the brute-force check of what is emitted */
    struct glc__named *named;     /* validate/trace: names of dispatches since the barrier */
    size_t nnamed, named_cap;
    long test_drop_barrier;       /* test hook: skip the k-th needed barrier (1-based) */
    long live_objects;           /* buffers, kernels, sessions not destroyed */
    int skip_restore;            /* test hook: show the state test can fail */

    /* What the last dispatches bound, so a run of them skips GL calls that
     * would set what is already set. Valid within one API call only (the
     * host may change bindings between calls on an adopted context):
     * glc__enter clears it. */
    struct glc__bound {
        int valid;
        GLuint program;
        struct {
            GLuint name;
            GLintptr offset;
            GLsizeiptr size;
        } ssbo[16];
    } bound;

};

enum { GLC__BARRIERS_TRACKED = 0, GLC__BARRIERS_ALWAYS, GLC__BARRIERS_NEVER /* race test only */ };

/* Formats a message, stores it as the device's errmsg, logs it at ERROR and
 * returns `status`. dev may be NULL (then it only returns status). */
glc_status glc__fail(struct glc_device *dev, glc_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Logs at `level` when the device's level allows it. */
void glc__log(struct glc_device *dev, glc_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void glc__vlog(struct glc_device *dev, glc_log_level level, glc_status status,
               const char *fmt, va_list ap);
/* GLC_TRACE output (encode.c): to the log callback at INFO whatever its
 * level, else to stderr. */
void glc__trace(struct glc_device *dev, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Brackets a public call that touches GL. `touch` is a glc__glstate mask
 * of what the call changes; for an adopted context that state is saved in
 * *st here and restored by glc__leave. GLC_ERR_STATE when the device's
 * context is not usable on this thread (then glc__leave must not be called). */
glc_status glc__enter(struct glc_device *dev, unsigned touch, int nssbo, glc__glstate *st);
/* The same for the dispatch hot path. eglGetCurrentContext costs ~1 us
 * through glvnd, so on an owned context the full check is skipped when the
 * last device this thread checked or created is this one (a thread-local
 * pointer). A context made current behind the library's back on the same
 * thread is then caught at the next full check (session begin, commit,
 * finish, any non-dispatch call, or every call with GLC_DEBUG). Adopted
 * contexts always get the full check. */
glc_status glc__enter_hot(struct glc_device *dev, unsigned touch, int nssbo, glc__glstate *st);
void glc__leave(struct glc_device *dev, glc__glstate *st);

/* A GL error check, only with GLC_DEVICE_DEBUG: logs and returns ERR_GL. */
glc_status glc__check_gl(struct glc_device *dev, const char *where);

/* For tests: a device over a caller-filled GL table (a recording fake) with
 * the given limits; no EGL, no context checks. */
glc_status glc__device_create_fake(const glc__gl *gl, const glc_device_limits *limits,
                                   glc_device **out);

#define GLC__ARG(dev, cond)                                                      \
    do {                                                                         \
        if (!(cond))                                                             \
            return glc__fail((dev), GLC_ERR_INVALID_ARG, "%s: invalid argument: %s", \
                             __func__, #cond);                                   \
    } while (0)

#endif
