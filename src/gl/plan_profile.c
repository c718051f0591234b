/*
 * Profiled runs: a run by slots with a probe around each dispatch of the
 * replay, after its barrier, so a barrier's wait is not billed to the
 * dispatch after it. GL_TIME_ELAPSED is the clock meant for this, but Mesa
 * llvmpipe reads (next to) nothing for compute (1 ns a dispatch on Mesa
 * 22.3.6), so a plan records GL_TIMESTAMP pairs as well until one run has
 * shown which of the two measures, and keeps that one. Timer queries are
 * used only when the extension string has GL_EXT_disjoint_timer_query
 * (glvnd returns stubs for any name). Without them the host clock times
 * each dispatch after a glFinish.
 *
 * Once warm a profiled run allocates nothing: the query names and host
 * times grow on first use and are kept until glc_plan_destroy (plan.c).
 */
#include "plan.h"

#include "alloc.h"
#include "device.h"
#include "kernel.h"
#include "select.h"

#include <stdlib.h>

enum { MODE_CPU = 1, MODE_ELAPSED = 2, MODE_TIMESTAMP = 4 };

static void probe(glc_plan *p, size_t i, int after)
{
    glc__plan_prof *x = &p->prof;
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
    glc__plan_prof *x = &p->prof;
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
        return p->prof.cpu_ns[i];
    q = p->prof.queries + 3 * i;
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
    glc__plan_prof *x;
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
    x = &p->prof;
    if (!prof || (prof->capacity && !prof->entries) || (p->nout && !outs))
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: prof, its entries or outs is NULL", fn);
    if ((st = glc__plan_refuse_pending(p, fn)) != GLC_OK)
        return st;
    if (prof->capacity < p->prog.ncmd)
        return glc__fail(dev, GLC_ERR_BOUNDS, "%s: room for %u dispatch times, the plan has %zu",
                         fn, prof->capacity, p->prog.ncmd);
    if ((st = glc__plan_check_inputs(p, inputs, fn)) != GLC_OK ||
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
    st = glc__plan_run_slots(p, inputs, outs, probe, fn);
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

