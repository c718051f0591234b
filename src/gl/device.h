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
#include "encode.h"
#include "env.h"
#include "errmsg.h"
#include "hazard.h"
#include "ops.h"

#include <stdarg.h>

struct glc__kcache; /* kernel.c: programs cached by (name, defines) */
struct glc__heap;   /* alloc.c: the desc's allocator */

struct glc_device {
    glc__gl gl;
    struct glc__heap *heap; /* every host allocation for the device and its objects */
    glc__egl *egl;         /* NULL for a fake (recording) device */
    int adopted;           /* platform CURRENT: save/restore host state */
    uint32_t flags;        /* glc_device_flags */
    glc__env env;          /* the GLC_* variables, read once at create (env.c) */
    glc_device_info info;  /* strings point into the arrays below */
    char vendor[128], renderer[256], version[128], glsl_version[128];
    char *extensions;      /* GL extensions joined by spaces */

    glc_log_fn log;
    void *log_user;
    glc_log_level log_level;
    char errmsg[2048];

    char *cache_dir;             /* program-binary cache, or NULL */
    struct glc__kcache *kcache;  /* built-in kernels by (name, defines) */
    /* the buffer textures of GLC_BIND_TEXEL bindings (one a texture unit,
     * made on first use) and the range each shows (by buffer id: a GL name
     * can be reused, an id never is) */
    GLuint texel_tex[GLC__TEXEL_UNITS];
    /* a texel binding was validated (a dispatch or a plan): from then on
     * storage barriers carry the fetch bit and calls save the texture
     * units, so a device that never reads texels (NVIDIA: no planner picks
     * them there) pays for neither */
    int texel_used;
    uint64_t texel_min_bytes;    /* planners' texel threshold (GLC__TEXEL_MIN_BYTES; tests lower it) */
    uint64_t rows_min_macs;      /* the direct matmul's (GLC__ROWS_MIN_MACS; tests lower it) */
    struct {
        uint32_t id;
        GLintptr offset;
        GLsizeiptr size;
        GLenum format; /* GL_RGBA32F or GL_RGBA32UI */
    } texel_shows[GLC__TEXEL_UNITS];
    uint32_t next_buffer_id;     /* ids for the hazard tracker, never reused */
    glc__encoder enc;            /* the ordering state of the context's work (encode.h) */
    int barrier_policy;           /* GLC__BARRIERS_*, from GLC_BARRIERS at create */
    int write_waits;              /* glFinish before a buffer write that follows
                                   * another: NVIDIA in GL_VENDOR or GL_RENDERER
                                   * (buffer.c) */
    int wrote_last;               /* the last GL work here may have been a buffer
                                   * write: set by ours and, on an adopted context,
                                   * by every call's entry; a dispatch clears it */
    int validate, trace;          /* GLC_VALIDATE or GLC_DEVICE_VALIDATE, GLC_TRACE=barriers */
    long test_drop_barrier;       /* test hook: skip the k-th needed barrier (1-based) */
    long live_objects;           /* buffers, kernels, sessions not destroyed */
    int skip_restore;            /* test hook: show the state test can fail */
    glc__tune tune;              /* benchmark hook (glc__device_tune) */
    int depth;                   /* glc__enter brackets open (calls nest) */
    /* GLC_DEVICE_DEBUG: GL errors the application had pending when the
     * outermost bracket opened; they are its, not ours, and are raised
     * again when the bracket closes */
    GLenum host_err[4];
    int nhost_err;

};

enum { GLC__BARRIERS_TRACKED = 0, GLC__BARRIERS_ALWAYS, GLC__BARRIERS_NEVER /* race test only */ };

/* The context check alone: GLC_OK when the device's context is current on
 * this thread (an owned one is made current when no context is), else
 * GLC_ERR_STATE with a message. No GL call is made. */
glc_status glc__check_context(struct glc_device *dev);

/* GLC__TOUCH_TEXEL once the device's dispatches may bind buffer textures */
#define glc__touch_texel(dev) ((dev)->texel_used ? (unsigned)GLC__TOUCH_TEXEL : 0u)

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

/* A GL error check, only with GLC_DEVICE_DEBUG: logs and returns ERR_GL.
 * Errors pending before the outermost glc__enter are the application's:
 * glc__enter takes them aside and glc__leave raises them again. */
glc_status glc__check_gl(struct glc_device *dev, const char *where);

/* For tests: a device over a caller-filled GL table (a recording fake) with
 * the given limits; no EGL, no context checks. */
glc_status glc__device_create_fake(const glc__gl *gl, const glc_device_limits *limits,
                                   glc_device **out);

#endif
