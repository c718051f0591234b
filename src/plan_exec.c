/*
 * The other ways to run a compiled plan (plan.c has compile, params and the
 * plain runs), and its listing.
 *
 *  - commit_no_wait / sync_pending: a run split at a fence. The commit
 *    emits the BUFFER_UPDATE barrier the readback will need before the
 *    fence, so the fence covers everything the sync waits for. The outputs
 *    stay in the arena until the sync maps them; that is why every other
 *    run of the plan is refused while one is pending, and why the sync
 *    sizes them by the variable values kept at the commit.
 *  - run_pipelined: n runs with one wait. Every set's inputs go to a
 *    staging buffer first (nothing in flight reads it); each set is then
 *    copied into the arena's input slots on the GPU (an API write, which a
 *    later shader read needs no barrier for), replayed (replay() starts
 *    with a storage barrier whenever the device holds unbarriered work, so
 *    set k + 1's dispatches wait for set k's), and its outputs are copied
 *    into the set's own region of a second staging buffer after a
 *    BUFFER_UPDATE barrier (a copy sees shader writes only after it). One
 *    glMapBufferRange of that buffer at the end is the only wait.
 *  - run_typed: run_slots by name, byte counts checked.
 *  - run_profiled: run_slots with exec.probe called around each dispatch
 *    of the replay, after its barrier, so a barrier's wait is not billed to
 *    the dispatch after it. GL_TIME_ELAPSED is the clock meant for this,
 *    but Mesa llvmpipe reads (next to) nothing for compute (1 ns a
 *    dispatch on Mesa 22.3.6), so a plan records GL_TIMESTAMP pairs as
 *    well until one run has shown which of the two measures, and keeps
 *    that one.
 *    Timer queries are used only when the extension string has
 *    GL_EXT_disjoint_timer_query (glvnd returns stubs for any name).
 *  - dump: text from the command list; no GL.
 *
 * Once warm no run here allocates: staging buffers and query arrays grow
 * on first use and are kept until glc_plan_destroy.
 */
#include "plan.h"

#include "alloc.h"
#include "buffer.h"
#include "device.h"
#include "kernel.h"
#include "select.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MODE_CPU = 1, MODE_ELAPSED = 2, MODE_TIMESTAMP = 4 };

#define TOUCH_RUN (GLC__TOUCH_PROGRAM | GLC__TOUCH_SSBO | GLC__TOUCH_COPY)

static size_t align16(size_t v) { return (v + 15) & ~(size_t)15; }

static glc_status refuse_pending(glc_plan *p, const char *fn)
{
    return glc__fail(p->dev, GLC_ERR_STATE,
                     "%s: a run of glc_plan_commit_no_wait is pending (call "
                     "glc_plan_sync_pending first)",
                     fn);
}

/* Every input slot given (inputs[0..nin) of one set). */
static glc_status check_inputs(glc_plan *p, const void *const *inputs, const char *fn)
{
    int i;
    if (p->nin && !inputs)
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "%s: inputs is NULL", fn);
    for (i = 0; i < p->nin; i++)
        if (!inputs[i])
            return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "%s: input slot %d (\"%s\") is NULL",
                             fn, i, p->g->t[p->in[i].tensor].name);
    return GLC_OK;
}

size_t glc_plan_input_bytes(const glc_plan *p, int slot)
{
    return p && slot >= 0 && slot < p->nin ? glc__plan_bytes_at(p, p->in[slot].tensor, NULL) : 0;
}

size_t glc_plan_output_bytes(const glc_plan *p, int slot)
{
    return p && slot >= 0 && slot < p->nout ? glc__plan_bytes_at(p, p->out[slot].tensor, NULL)
                                            : 0;
}

/* ---- commit without a wait ---- */

glc_status glc_plan_commit_no_wait(glc_plan *p, const void *const *inputs)
{
    static const char fn[] = "glc_plan_commit_no_wait";
    glc_device *dev;
    glc__glstate gs;
    glc_status st;
    int j;
    GLC__ARG(NULL, p);
    dev = p->dev;
    if (p->exec.pending)
        return refuse_pending(p, fn);
    if ((st = check_inputs(p, inputs, fn)) != GLC_OK ||
        (st = glc__plan_params_ready(p, fn)) != GLC_OK)
        return st;
    if ((st = glc__enter(dev, TOUCH_RUN, p->max_bind, &gs)) != GLC_OK)
        return st;
    st = glc__plan_upload(p, inputs, 0, fn);
    if (st == GLC_OK) {
        glc__plan_replay(p);
        for (j = 0; j < p->nout; j++) {
            size_t off;
            /* the sync maps what shaders wrote: its barrier goes before the fence */
            glc__buffer_host_access(glc__plan_storage(p, p->out[j].tensor, &off));
        }
        p->exec.pending = dev->gl.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        dev->gl.glFlush();
        if (!p->exec.pending)
            st = glc__fail(dev, GLC_ERR_GL, "%s: glFenceSync failed", fn);
        else
            memcpy(p->exec.pending_vals, p->prog.vals, sizeof p->exec.pending_vals);
    }
    glc__leave(dev, &gs);
    return st;
}

static glc_status wait_sync(glc_device *dev, GLsync sync, const char *fn)
{
    GLenum r = dev->gl.glClientWaitSync(sync, GL_SYNC_FLUSH_COMMANDS_BIT, UINT64_MAX);
    while (r == GL_TIMEOUT_EXPIRED) /* a driver may clamp the timeout */
        r = dev->gl.glClientWaitSync(sync, 0, UINT64_MAX);
    if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED)
        return GLC_OK;
    if (dev->info.features.robust_context && glc__has_ext(dev->extensions, "GL_EXT_robustness") &&
        dev->gl.glGetGraphicsResetStatusEXT() != GL_NO_ERROR)
        return glc__fail(dev, GLC_ERR_CONTEXT_LOST, "%s: the GPU was reset", fn);
    return glc__fail(dev, GLC_ERR_GL, "%s: glClientWaitSync failed (0x%04x)", fn, r);
}

glc_status glc_plan_sync_pending(glc_plan *p, glc_plan_slice *outs)
{
    static const char fn[] = "glc_plan_sync_pending";
    glc_device *dev;
    glc__glstate gs;
    glc_status st;
    int j;
    GLC__ARG(NULL, p);
    dev = p->dev;
    if (p->nout && !outs)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: outs is NULL", fn);
    if (!p->exec.pending)
        return glc__fail(dev, GLC_ERR_STATE,
                         "%s: no run is pending (glc_plan_commit_no_wait starts one)", fn);
    if ((st = glc__enter(dev, GLC__TOUCH_COPY, 0, &gs)) != GLC_OK)
        return st; /* still pending: the caller may sync from the right thread */
    st = wait_sync(dev, p->exec.pending, fn);
    dev->gl.glDeleteSync(p->exec.pending);
    p->exec.pending = 0;
    for (j = 0; j < p->nout && st == GLC_OK; j++) {
        size_t off, bytes = glc__plan_bytes_at(p, p->out[j].tensor, p->exec.pending_vals);
        glc_buffer *b = glc__plan_storage(p, p->out[j].tensor, &off);
        if (bytes)
            st = glc__buffer_read_in(b, off, bytes, p->mirror + p->out[j].host_off, fn);
    }
    glc__leave(dev, &gs);
    if (st != GLC_OK)
        return st;
    for (j = 0; j < p->nout; j++) {
        outs[j].offset = p->out[j].host_off;
        outs[j].bytes = glc__plan_bytes_at(p, p->out[j].tensor, p->exec.pending_vals);
    }
    return GLC_OK;
}

int glc_plan_is_pending(const glc_plan *p) { return p && p->exec.pending != 0; }

/* ---- pipelined ---- */

/* *b holds at least `bytes` (grown, never shrunk). */
static glc_status ensure_stage(glc_plan *p, glc_buffer **b, size_t bytes)
{
    int64_t n = (int64_t)bytes;
    glc_buffer *nb;
    glc_status st;
    if (*b && (*b)->bytes >= bytes)
        return GLC_OK;
    if ((st = glc_buffer_create(p->dev, GLC_DTYPE_U8, 1, &n, &nb)) != GLC_OK)
        return st;
    glc_buffer_destroy(*b);
    *b = nb;
    return GLC_OK;
}

static void copy_range(glc_device *dev, glc_buffer *from, size_t from_off, glc_buffer *to,
                       size_t to_off, size_t bytes)
{
    dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, from->name);
    dev->gl.glBindBuffer(GL_COPY_WRITE_BUFFER, to->name);
    dev->gl.glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)from_off,
                                (GLintptr)to_off, (GLsizeiptr)bytes);
}

/* Maps the output staging buffer once (the wait) and hands each set's
 * outputs to the caller. */
static glc_status read_sets(glc_plan *p, int n, size_t region, void *const *outputs,
                            const char *fn)
{
    glc_device *dev = p->dev;
    const unsigned char *m;
    int k, j;
    dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, p->exec.stage_out->name);
    m = dev->gl.glMapBufferRange(GL_COPY_READ_BUFFER, 0, (GLsizeiptr)((size_t)n * region),
                                 GL_MAP_READ_BIT);
    if (!m) {
        GLenum err = dev->gl.glGetError();
        return glc__fail(dev, err == GL_OUT_OF_MEMORY ? GLC_ERR_OUT_OF_MEMORY : GLC_ERR_GL,
                         "%s: glMapBufferRange failed (GL error 0x%04x)", fn, err);
    }
    for (k = 0; k < n; k++)
        for (j = 0; j < p->nout; j++)
            memcpy(outputs[(size_t)k * (size_t)p->nout + (size_t)j],
                   m + (size_t)k * region + p->out[j].host_off,
                   glc__plan_bytes_at(p, p->out[j].tensor, NULL));
    if (!dev->gl.glUnmapBuffer(GL_COPY_READ_BUFFER))
        return glc__fail(dev, GLC_ERR_GL, "%s: buffer contents were lost while mapped", fn);
    return GLC_OK;
}

glc_status glc_plan_run_pipelined(glc_plan *p, int n, const void *const *inputs,
                                  void *const *outputs)
{
    static const char fn[] = "glc_plan_run_pipelined";
    glc_device *dev;
    glc__glstate gs;
    size_t in_region = 0, out_region, nin, nout;
    glc_status st;
    int i, j, k;
    GLC__ARG(NULL, p);
    dev = p->dev;
    nin = (size_t)p->nin;
    nout = (size_t)p->nout;
    if (n < 1 || (nin && !inputs) || (nout && !outputs))
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: %d sets, inputs %s, outputs %s", fn, n,
                         inputs ? "given" : "NULL", outputs ? "given" : "NULL");
    if (p->exec.pending)
        return refuse_pending(p, fn);
    for (k = 0; k < n; k++) {
        for (i = 0; i < p->nin; i++)
            if (!inputs[(size_t)k * nin + (size_t)i])
                return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: set %d: input slot %d (\"%s\") is NULL",
                                 fn, k, i, p->g->t[p->in[i].tensor].name);
        for (j = 0; j < p->nout; j++)
            if (!outputs[(size_t)k * nout + (size_t)j])
                return glc__fail(dev, GLC_ERR_INVALID_ARG,
                                 "%s: set %d: output slot %d (\"%s\") is NULL", fn, k, j,
                                 p->g->out[j].name);
    }
    if ((st = glc__plan_params_ready(p, fn)) != GLC_OK)
        return st;
    for (i = 0; i < p->nin; i++)
        if (p->prog.place[p->in[i].tensor].region != GLC__REGION_NONE)
            in_region += align16(p->prog.place[p->in[i].tensor].bytes);
    out_region = p->mirror_bytes;
    if ((in_region && (size_t)n > SIZE_MAX / 2 / in_region) ||
        (out_region && (size_t)n > SIZE_MAX / 2 / out_region))
        return glc__fail(dev, GLC_ERR_BOUNDS, "%s: %d sets overflow the staging size", fn, n);
    if ((in_region && (st = ensure_stage(p, &p->exec.stage_in, (size_t)n * in_region)) != GLC_OK) ||
        (out_region && (st = ensure_stage(p, &p->exec.stage_out, (size_t)n * out_region)) != GLC_OK))
        return st;
    if ((st = glc__enter(dev, TOUCH_RUN, p->max_bind, &gs)) != GLC_OK)
        return st;
    /* every set's inputs at once: nothing in flight reads the staging buffer */
    for (k = 0; k < n && st == GLC_OK; k++) {
        size_t off = (size_t)k * in_region;
        for (i = 0; i < p->nin && st == GLC_OK; i++) {
            int32_t id = p->in[i].tensor;
            size_t bytes = glc__plan_bytes_at(p, id, NULL);
            if (p->prog.place[id].region == GLC__REGION_NONE)
                continue;
            if (bytes)
                st = glc__buffer_write_in(p->exec.stage_in, off, bytes,
                                          inputs[(size_t)k * nin + (size_t)i], fn);
            off += align16(p->prog.place[id].bytes);
        }
    }
    for (k = 0; k < n && st == GLC_OK; k++) {
        size_t off = (size_t)k * in_region;
        for (i = 0; i < p->nin; i++) {
            int32_t id = p->in[i].tensor;
            size_t bytes = glc__plan_bytes_at(p, id, NULL), to;
            glc_buffer *b;
            if (p->prog.place[id].region == GLC__REGION_NONE)
                continue;
            b = glc__plan_storage(p, id, &to);
            glc__buffer_host_access(b); /* an API write after shader writes to the buffer */
            if (bytes)
                copy_range(dev, p->exec.stage_in, off, b, to, bytes);
            off += align16(p->prog.place[id].bytes);
        }
        glc__plan_replay(p);
        for (j = 0; j < p->nout; j++) {
            size_t bytes = glc__plan_bytes_at(p, p->out[j].tensor, NULL), from;
            glc_buffer *b = glc__plan_storage(p, p->out[j].tensor, &from);
            glc__buffer_host_access(b); /* a copy reads what shaders wrote after this bit */
            if (bytes)
                copy_range(dev, b, from, p->exec.stage_out,
                           (size_t)k * out_region + p->out[j].host_off, bytes);
        }
        dev->gl.glFlush(); /* the GPU starts on set k while set k + 1 is encoded */
    }
    if (st == GLC_OK && out_region)
        st = read_sets(p, n, out_region, outputs, fn);
    glc__leave(dev, &gs);
    return st;
}

/* ---- typed ---- */

glc_status glc_plan_run_typed(glc_plan *p, const glc_plan_typed_input *in, int nin,
                              const glc_plan_typed_output *out, int nout)
{
    static const char fn[] = "glc_plan_run_typed";
    const void *inputs[64];
    glc_plan_slice sl[64];
    glc_device *dev;
    glc_status st;
    int i, k;
    GLC__ARG(NULL, p);
    dev = p->dev;
    if (nin < 0 || nout < 0 || (nin && !in) || (nout && !out))
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: %d inputs, %d outputs", fn, nin, nout);
    if (p->nin > 64 || p->nout > 64)
        return glc__fail(dev, GLC_ERR_UNSUPPORTED,
                         "%s: %d inputs, %d outputs (at most 64 each by name; use "
                         "glc_plan_run_slots)",
                         fn, p->nin, p->nout);
    if (p->exec.pending)
        return refuse_pending(p, fn);
    for (k = 0; k < nin; k++)
        if (glc__plan_find(p, GLC__T_INPUT, in[k].name) < 0)
            return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: no input named \"%s\"", fn,
                             in[k].name ? in[k].name : "(null)");
    for (i = 0; i < p->nin; i++) {
        int32_t id = p->in[i].tensor;
        const char *name = p->g->t[id].name;
        glc_dtype dt = p->g->t[id].dtype;
        size_t bytes = glc__plan_bytes_at(p, id, NULL);
        inputs[i] = NULL;
        for (k = 0; k < nin; k++) {
            if (strcmp(in[k].name, name) != 0)
                continue;
            if (inputs[i] || !in[k].data || in[k].dtype != dt || in[k].bytes != bytes)
                return glc__fail(dev, GLC_ERR_INVALID_ARG,
                                 "%s: input \"%s\": %s%zu bytes of %s given, it takes %zu bytes "
                                 "of %s",
                                 fn, name,
                                 inputs[i] ? "given twice; " : !in[k].data ? "no data; " : "",
                                 in[k].bytes, glc_dtype_name(in[k].dtype), bytes,
                                 glc_dtype_name(dt));
            inputs[i] = in[k].data;
        }
        if (!inputs[i])
            return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: input \"%s\" is missing", fn, name);
    }
    for (k = 0; k < nout; k++) {
        int j = -1;
        int32_t id;
        size_t bytes;
        for (i = 0; i < p->nout && j < 0; i++)
            if (out[k].name && strcmp(p->g->out[i].name, out[k].name) == 0)
                j = i;
        if (j < 0)
            return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: no output named \"%s\"", fn,
                             out[k].name ? out[k].name : "(null)");
        id = p->out[j].tensor;
        bytes = glc__plan_bytes_at(p, id, NULL);
        if (!out[k].data || out[k].dtype != p->g->t[id].dtype || out[k].bytes != bytes)
            return glc__fail(dev, GLC_ERR_INVALID_ARG,
                             "%s: output \"%s\": %sroom for %zu bytes of %s, it has %zu bytes "
                             "of %s",
                             fn, out[k].name, out[k].data ? "" : "no data; ", out[k].bytes,
                             glc_dtype_name(out[k].dtype), bytes,
                             glc_dtype_name(p->g->t[id].dtype));
    }
    if ((st = glc__plan_params_ready(p, fn)) != GLC_OK)
        return st;
    if ((st = glc_plan_run_slots(p, inputs, sl)) != GLC_OK)
        return st;
    for (k = 0; k < nout; k++)
        for (i = 0; i < p->nout; i++)
            if (strcmp(p->g->out[i].name, out[k].name) == 0) {
                memcpy(out[k].data, p->mirror + sl[i].offset, sl[i].bytes);
                break;
            }
    return GLC_OK;
}

/* ---- profiled ---- */

static void probe(glc_plan *p, size_t i, int after)
{
    glc__plan_exec *x = &p->exec;
    const glc__gl *gl = &p->dev->gl;
    const GLuint *q;
    if (x->mode & MODE_CPU) {
        gl->glFinish();
        if (after)
            x->cpu_ns[i] = glc__now_ns() - x->t0;
        else
            x->t0 = glc__now_ns();
        return;
    }
    q = x->queries + 3 * i;
    if (!after) {
        if (x->mode & MODE_ELAPSED)
            gl->glBeginQueryEXT(GL_TIME_ELAPSED_EXT, q[0]);
        if (x->mode & MODE_TIMESTAMP)
            gl->glQueryCounterEXT(q[1], GL_TIMESTAMP_EXT);
    } else {
        if (x->mode & MODE_TIMESTAMP)
            gl->glQueryCounterEXT(q[2], GL_TIMESTAMP_EXT);
        if (x->mode & MODE_ELAPSED)
            gl->glEndQueryEXT(GL_TIME_ELAPSED_EXT);
    }
}

/* Room for the plan's dispatches: host times, and query names when the
 * device has timer queries. The caller has entered the device. */
static glc_status ensure_probe(glc_plan *p, int timers, const char *fn)
{
    glc__plan_exec *x = &p->exec;
    size_t n = p->prog.ncmd ? p->prog.ncmd : 1;
    if (x->ncpu < n) {
        uint64_t *c = glc__realloc(x->cpu_ns, n * sizeof *c);
        if (!c)
            return glc__fail(p->dev, GLC_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        x->cpu_ns = c;
        x->ncpu = n;
    }
    if (timers && x->nqueries < 3 * n) {
        GLuint *q = glc__malloc(3 * n * sizeof *q);
        if (!q)
            return glc__fail(p->dev, GLC_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        if (x->nqueries)
            p->dev->gl.glDeleteQueriesEXT((GLsizei)x->nqueries, x->queries);
        glc__free(x->queries);
        p->dev->gl.glGenQueriesEXT((GLsizei)(3 * n), q);
        x->queries = q;
        x->nqueries = 3 * n;
    }
    return GLC_OK;
}

static uint64_t query_result(const glc__gl *gl, GLuint q)
{
    GLuint64 v = 0;
    gl->glGetQueryObjectui64vEXT(q, GL_QUERY_RESULT_EXT, &v);
    return (uint64_t)v;
}

/* Dispatch i's time by `clock` (the queries are complete: the run has
 * mapped its outputs, and a result query waits anyway). */
static uint64_t time_of(const glc_plan *p, size_t i, int clock)
{
    const glc__gl *gl = &p->dev->gl;
    const GLuint *q;
    uint64_t a, b;
    if (clock == GLC_PROFILE_CLOCK_CPU)
        return p->exec.cpu_ns[i];
    q = p->exec.queries + 3 * i;
    if (clock == GLC_PROFILE_CLOCK_ELAPSED)
        return query_result(gl, q[0]);
    a = query_result(gl, q[1]);
    b = query_result(gl, q[2]);
    return b > a ? b - a : 0;
}

/* An application's GL_TIME_ELAPSED query is active (adopted contexts). */
static int host_query_active(glc_device *dev)
{
    GLint cur = 0;
    if (!dev->adopted || !dev->gl.glGetQueryivEXT)
        return 0;
    dev->gl.glGetQueryivEXT(GL_TIME_ELAPSED_EXT, GL_CURRENT_QUERY_EXT, &cur);
    return cur != 0;
}

glc_status glc_plan_run_profiled(glc_plan *p, const void *const *inputs, glc_plan_slice *outs,
                                 glc_plan_profile *prof)
{
    static const char fn[] = "glc_plan_run_profiled";
    glc__plan_exec *x;
    glc_device *dev;
    glc__glstate gs;
    glc_profile_clock clock;
    uint64_t total = 0;
    GLint disjoint = 0;
    glc_status st;
    int timers, forced = 0;
    size_t i;
    GLC__ARG(NULL, p);
    dev = p->dev;
    x = &p->exec;
    if (!prof || (prof->capacity && !prof->entries) || (p->nout && !outs))
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: prof, its entries or outs is NULL", fn);
    if (p->exec.pending)
        return refuse_pending(p, fn);
    if (prof->capacity < p->prog.ncmd)
        return glc__fail(dev, GLC_ERR_BOUNDS, "%s: room for %u dispatch times, the plan has %zu",
                         fn, prof->capacity, p->prog.ncmd);
    if ((st = check_inputs(p, inputs, fn)) != GLC_OK ||
        (st = glc__plan_params_ready(p, fn)) != GLC_OK)
        return st;
    /* the extension string, never a proc pointer: glvnd hands out stubs */
    timers = dev->info.features.timer_query &&
             glc__has_ext(dev->extensions, "GL_EXT_disjoint_timer_query");
    x->mode = !timers                                  ? MODE_CPU
              : x->clock == GLC_PROFILE_CLOCK_ELAPSED   ? MODE_ELAPSED
              : x->clock == GLC_PROFILE_CLOCK_TIMESTAMP ? MODE_TIMESTAMP
                                                       : MODE_ELAPSED | MODE_TIMESTAMP;
    if ((st = glc__enter(dev, 0, 0, &gs)) != GLC_OK)
        return st;
    if ((x->mode & MODE_ELAPSED) && host_query_active(dev)) {
        /* one GL_TIME_ELAPSED query at a time: ours would fail to begin and
         * our end would end the application's */
        GLint bits = 0;
        dev->gl.glGetQueryivEXT(GL_TIMESTAMP_EXT, GL_QUERY_COUNTER_BITS_EXT, &bits);
        x->mode = bits > 0 ? MODE_TIMESTAMP : MODE_CPU;
        forced = 1;
        glc__log(dev, GLC_LOG_INFO,
                 "%s: the application's GL_TIME_ELAPSED query is active: timing with %s", fn,
                 bits > 0 ? "GL_TIMESTAMP queries" : "the host clock");
    }
    st = ensure_probe(p, timers, fn);
    /* reading the disjoint flag clears it: on an adopted context it is the
     * application's, so it is left alone there */
    if (timers && !dev->adopted)
        dev->gl.glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);
    glc__leave(dev, &gs);
    if (st != GLC_OK)
        return st;
    x->probe = probe;
    st = glc_plan_run_slots(p, inputs, outs);
    x->probe = NULL;
    if (st != GLC_OK)
        return st;
    if ((st = glc__enter(dev, 0, 0, &gs)) != GLC_OK)
        return st;
    if (x->mode == MODE_CPU) {
        clock = GLC_PROFILE_CLOCK_CPU;
    } else if (x->mode == MODE_ELAPSED) {
        clock = GLC_PROFILE_CLOCK_ELAPSED;
    } else if (x->mode == MODE_TIMESTAMP) {
        clock = GLC_PROFILE_CLOCK_TIMESTAMP;
    } else {
        /* elapsed measures compute unless it reads next to nothing: about
         * 1 ns a dispatch, or a sliver of what the timestamps saw (llvmpipe:
         * 1 ns against milliseconds). On a GPU the two are of one order. */
        uint64_t elapsed = 0, stamped = 0;
        for (i = 0; i < p->prog.ncmd; i++) {
            elapsed += time_of(p, i, GLC_PROFILE_CLOCK_ELAPSED);
            stamped += time_of(p, i, GLC_PROFILE_CLOCK_TIMESTAMP);
        }
        clock = elapsed > p->prog.ncmd && elapsed >= stamped / 64 ? GLC_PROFILE_CLOCK_ELAPSED
                                                                 : GLC_PROFILE_CLOCK_TIMESTAMP;
    }
    for (i = 0; i < p->prog.ncmd; i++) {
        glc_plan_dispatch_time *e = &prof->entries[i];
        e->kernel = p->cmds[i].kernel->name;
        e->op = p->cmds[i].label ? p->cmds[i].label : "";
        e->index = (uint32_t)i;
        e->gpu_ns = time_of(p, i, clock);
        total += e->gpu_ns;
    }
    disjoint = 0;
    if (timers && !dev->adopted)
        dev->gl.glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);
    glc__leave(dev, &gs);
    prof->count = (uint32_t)p->prog.ncmd;
    prof->total_ns = total;
    prof->clock = clock;
    prof->disjoint = disjoint != 0;
    if (timers && !forced && !disjoint && total > 0)
        x->clock = clock; /* from now on only the clock that measures */
    return GLC_OK;
}

static int by_time(const void *a, const void *b)
{
    const glc_plan_dispatch_time *x = a, *y = b;
    if (x->gpu_ns != y->gpu_ns)
        return x->gpu_ns > y->gpu_ns ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void glc_plan_profile_sort(glc_plan_profile *prof)
{
    if (prof && prof->entries && prof->count > 1)
        qsort(prof->entries, prof->count, sizeof *prof->entries, by_time);
}

/* ---- the listing ---- */

typedef struct dumper {
    glc_text_fn fn;
    void *user;
} dumper;

static void put(const dumper *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(const dumper *d, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    d->fn(d->user, line);
}

static const char *access_name(glc_access a)
{
    return a == GLC_READ ? "read" : a == GLC_WRITE ? "write" : "read_write";
}

/* "#define A 1\n#define B x\n" as "A=1 B=x". */
static const char *compact_defines(const char *defs, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    while (defs && *defs) {
        const char *end = strchr(defs, '\n');
        size_t l = end ? (size_t)(end - defs) : strlen(defs);
        const char *s = defs;
        if (l > 8 && strncmp(s, "#define ", 8) == 0) {
            const char *sp;
            s += 8;
            l -= 8;
            sp = memchr(s, ' ', l);
            if (n < len)
                n += (size_t)snprintf(buf + n, len - n, "%s%.*s%s%.*s", n ? " " : "",
                                      (int)(sp ? (size_t)(sp - s) : l), s, sp ? "=" : "",
                                      sp ? (int)(l - (size_t)(sp - s) - 1) : 0, sp ? sp + 1 : "");
        }
        defs = end ? end + 1 : defs + l;
    }
    return buf;
}

static const char *tensor_label(const glc_plan *p, int32_t t, char *buf, size_t len)
{
    size_t k;
    if (t < 0)
        return "scratch";
    if (p->g->t[t].name)
        return p->g->t[t].name;
    for (k = 0; k < p->g->nout; k++)
        if (p->g->out[k].tensor == t)
            return p->g->out[k].name;
    snprintf(buf, len, "t%d", (int)t);
    return buf;
}

static const char *barrier_names(unsigned bits, char *buf, size_t len)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{GL_SHADER_STORAGE_BARRIER_BIT, "storage"},
                 {GL_BUFFER_UPDATE_BARRIER_BIT, "buffer_update"},
                 {GL_UNIFORM_BARRIER_BIT, "uniform"},
                 {GL_COMMAND_BARRIER_BIT, "command"}};
    size_t i, n = 0;
    buf[0] = '\0';
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((bits & names[i].bit) && n < len) {
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", names[i].name);
            bits &= ~names[i].bit;
        }
    if (bits && n < len)
        snprintf(buf + n, len - n, "%s0x%x", n ? " " : "", bits);
    return buf;
}

static void dump_tensors(const glc_plan *p, const dumper *d)
{
    static const struct {
        glc__tkind kind;
        const char *word;
    } kinds[] = {{GLC__T_INPUT, "input"}, {GLC__T_PARAM, "param"}, {GLC__T_HANDLE, "handle"}};
    char sh[96];
    size_t i, k;
    for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (i = 0; i < p->g->nt; i++) {
            const glc__place *pl = &p->prog.place[i];
            glc__tensor t;
            if (p->g->t[i].kind != kinds[k].kind)
                continue;
            glc__graph_tensor_at(p->g, (int32_t)i, p->prog.vals, &t);
            if (pl->region == GLC__REGION_NONE)
                put(d, "%s %s: %s, unused\n", kinds[k].word, p->g->t[i].name,
                    glc__shape_str(&t, sh, sizeof sh));
            else
                put(d, "%s %s: %s at b%d[%zu, %zu)%s\n", kinds[k].word, p->g->t[i].name,
                    glc__shape_str(&t, sh, sizeof sh), pl->buffer, pl->offset,
                    pl->offset + glc__tensor_bytes(&t),
                    p->ext[i].buf ? " (shared: another plan's storage)" : "");
        }
    for (k = 0; k < p->g->nout; k++) {
        int32_t id = p->g->out[k].tensor;
        const glc__place *pl = &p->prog.place[id];
        glc__tensor t;
        glc__graph_tensor_at(p->g, id, p->prog.vals, &t);
        put(d, "output %s: %s at b%d[%zu, %zu)\n", p->g->out[k].name,
            glc__shape_str(&t, sh, sizeof sh), pl->buffer, pl->offset,
            pl->offset + glc__tensor_bytes(&t));
    }
}

static void dump_dispatch(const glc_plan *p, const dumper *d, size_t i)
{
    const glc__cmd *c = &p->cmds[i];
    const glc__ccmd *cc = &p->prog.cmd[i];
    char defs[512], tn[24], bn[64];
    int j;
    if (p->bar[i])
        put(d, "barrier: %s (before dispatch %zu)\n", barrier_names(p->bar[i], bn, sizeof bn), i);
    put(d, "dispatch %zu: %s (%s), groups %u = [%u, %u, %u], local %u%s%s\n", i,
        c->kernel->name, c->label ? c->label : "", c->total_groups, c->grid[0], c->grid[1],
        c->grid[2], c->kernel->local_size_x, c->kernel->defines[0] ? ", defines " : "",
        compact_defines(c->kernel->defines, defs, sizeof defs));
    for (j = 0; j < c->nbind; j++) {
        int32_t t = cc->bind[j].tensor;
        int shared = c->bind[j].buffer != p->buf[cc->bind[j].buffer];
        if (shared)
            put(d, "  bind %d: shared(gl %u)[%zu, %zu) %s %s\n", j, c->bind[j].buffer->name,
                c->bind[j].offset, c->bind[j].offset + c->bind[j].size,
                access_name(c->bind[j].access), tensor_label(p, t, tn, sizeof tn));
        else
            put(d, "  bind %d: b%d[%zu, %zu) %s %s\n", j, cc->bind[j].buffer, c->bind[j].offset,
                c->bind[j].offset + c->bind[j].size, access_name(c->bind[j].access),
                tensor_label(p, t, tn, sizeof tn));
    }
}

/* The source of each distinct program, in order of first use. */
static glc_status dump_sources(const glc_plan *p, const dumper *d)
{
    char defs[512];
    size_t i, k;
    for (i = 0; i < p->prog.ncmd; i++) {
        const glc_kernel *kn = p->cmds[i].kernel;
        const char *body = glc__glsl_find(kn->name);
        char *src;
        size_t len;
        for (k = 0; k < i && p->cmds[k].kernel != kn; k++)
            ;
        if (k < i || !body)
            continue;
        src = glc__kernel_source(p->dev, kn->name, body, kn->defines, kn->local_size_x);
        if (!src)
            return glc__fail(p->dev, GLC_ERR_OUT_OF_MEMORY, "glc_plan_dump: out of memory");
        put(d, "---- kernel %s (local %u%s%s), first at dispatch %zu ----\n", kn->name,
            kn->local_size_x, kn->defines[0] ? "; " : "",
            compact_defines(kn->defines, defs, sizeof defs), i);
        d->fn(d->user, src);
        len = strlen(src);
        if (len && src[len - 1] != '\n')
            d->fn(d->user, "\n");
        glc__free(src);
    }
    return GLC_OK;
}

glc_status glc_plan_dump(const glc_plan *p, unsigned flags, glc_text_fn fn, void *user)
{
    const glc__program *pr;
    glc_plan_info info;
    dumper d;
    size_t i;
    int b, v;
    GLC__ARG(NULL, p);
    if (!fn || (flags & ~(unsigned)GLC_PLAN_DUMP_SOURCE))
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG,
                         "glc_plan_dump: %s", fn ? "unknown flags" : "fn is NULL");
    glc__use_device(p->dev); /* the sources are allocated */
    pr = &p->prog;
    d.fn = fn;
    d.user = user;
    glc_plan_stats(p, &info);
    put(&d, "plan: %u steps, %u dispatches, %u barriers\n", info.steps, info.dispatches,
        info.barriers);
    put(&d, "memory: arena %zu bytes in %d buffer%s (liveness bound %zu), params %zu bytes\n",
        info.arena_bytes, info.arena_buffers, info.arena_buffers == 1 ? "" : "s",
        info.liveness_bound, info.params_bytes);
    for (v = 0; v < p->g->nvars; v++)
        put(&d, "var %s = %lld (bounds %lld..%lld)\n", p->g->var[v].name,
            (long long)pr->vals[v], (long long)p->g->var[v].min, (long long)p->g->var[v].max);
    for (b = 0; b < pr->nbuffers; b++)
        put(&d, "buffer b%d: %s, %zu bytes\n", b,
            b < pr->narena ? "arena" : b < pr->nparams ? "params" : "handle",
            pr->buffer_bytes[b]);
    dump_tensors(p, &d);
    for (i = 0; i < pr->ncmd; i++)
        dump_dispatch(p, &d, i);
    return flags & GLC_PLAN_DUMP_SOURCE ? dump_sources(p, &d) : GLC_OK;
}

/* ---- release ---- */

void glc__plan_exec_release(glc_plan *p)
{
    glc__plan_exec *x = &p->exec;
    glc__glstate gs;
    if ((x->pending || x->nqueries) && glc__enter(p->dev, 0, 0, &gs) == GLC_OK) {
        if (x->pending)
            p->dev->gl.glDeleteSync(x->pending);
        if (x->nqueries)
            p->dev->gl.glDeleteQueriesEXT((GLsizei)x->nqueries, x->queries);
        glc__leave(p->dev, &gs);
    }
    x->pending = 0;
    x->nqueries = 0;
    glc_buffer_destroy(x->stage_in);
    glc_buffer_destroy(x->stage_out);
    x->stage_in = x->stage_out = NULL;
    glc__free(x->queries);
    glc__free(x->cpu_ns);
    x->queries = NULL;
    x->cpu_ns = NULL;
    x->ncpu = 0;
}
