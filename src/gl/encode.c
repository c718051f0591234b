/*
 * The encoder (encode.h): one command to GL calls, with the barriers it
 * needs, and every change of the state that orders a context's work.
 *
 * Which barrier bit is chosen by how the consumer reads what a shader
 * wrote: GL_SHADER_STORAGE_BARRIER_BIT between storage accesses (it orders
 * RAW, WAR and WAW), GL_UNIFORM_BARRIER_BIT before a written buffer is read
 * as a uniform block, GL_COMMAND_BARRIER_BIT before it supplies indirect
 * group counts; once a device has a texel binding every storage barrier
 * also carries GL_TEXTURE_FETCH_BARRIER_BIT (GLC_BIND_TEXEL reads are
 * tracked as storage reads). Storage conflicts are found per byte range
 * by the device's hazard tracker; uniform and command use is rarer and tracked per buffer
 * (the buffer's last write against the last barrier of that bit). Callers
 * name barriers by kind (glc__barrier_kind); glc__gl_barrier_bits is the
 * one place kinds become GL bits.
 *
 * With GLC_VALIDATE the brute-force oracle sees the same emitted stream and
 * fails the call, naming both dispatches, when a conflicting dispatch is
 * encoded with no barrier in between. GLC_TRACE=barriers logs each barrier
 * with the pair that needed it.
 */
#include "encode.h"

#include "alloc.h"
#include "buffer.h"
#include "device.h"
#include "kernel.h"
#include "select.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Names of the dispatches since the last barrier, for validate and trace. */
struct glc__named {
    char kernel[32];
    char label[48];
};

uint64_t glc__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int glc__cmd_spans(const glc__cmd *c, glc__span *spans)
{
    int i, n = 0;
    for (i = 0; i < c->nbind; i++) {
        spans[n].buffer = c->bind[i].buffer->id;
        spans[n].begin = c->bind[i].offset;
        spans[n].end = c->bind[i].offset + c->bind[i].size;
        spans[n].access = (uint32_t)c->bind[i].access;
        n++;
    }
    if (c->indirect) {
        spans[n].buffer = c->indirect->id;
        spans[n].begin = c->indirect_offset;
        spans[n].end = c->indirect_offset + 12;
        spans[n].access = GLC_READ;
        n++;
    }
    return n;
}

static const char *kind_name(unsigned kinds)
{
    return kinds & GLC__HAZ_RAW ? "RAW" : kinds & GLC__HAZ_WAR ? "WAR" : "WAW";
}

void glc__trace(glc_device *dev, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (dev->log)
        dev->log(dev->log_user, GLC_LOG_INFO, GLC_OK, msg);
    else
        fprintf(stderr, "glcompute trace: %s\n", msg);
}

static const struct glc__named *named(glc_device *dev, uint32_t id)
{
    static const struct glc__named unknown = {"?", "?"};
    /* ids are dispatch_seq values; named[] holds those since the barrier */
    uint64_t first = dev->enc.dispatch_seq + 1 - dev->enc.nnamed;
    return id >= first && id - first < dev->enc.nnamed ? &dev->enc.named[id - first] : &unknown;
}

static void remember_name(glc_device *dev, const glc__cmd *c)
{
    if (dev->enc.nnamed == dev->enc.named_cap) {
        size_t cap = dev->enc.named_cap ? dev->enc.named_cap * 2 : 64;
        struct glc__named *n = glc__realloc(dev->enc.named, cap * sizeof *n);
        if (!n)
            return; /* names are for messages only */
        dev->enc.named = n;
        dev->enc.named_cap = cap;
    }
    snprintf(dev->enc.named[dev->enc.nnamed].kernel, sizeof dev->enc.named[0].kernel, "%s", c->kernel->name);
    snprintf(dev->enc.named[dev->enc.nnamed].label, sizeof dev->enc.named[0].label, "%s",
             c->label ? c->label : "");
    dev->enc.nnamed++;
}

void glc__enc_init(glc__encoder *e)
{
    memset(e, 0, sizeof *e);
    glc__hazard_init(&e->haz);
    glc__oracle_init(&e->oracle);
}

void glc__enc_finish(glc__encoder *e)
{
    glc__hazard_finish(&e->haz);
    glc__oracle_finish(&e->oracle);
    glc__free(e->named);
    e->named = NULL;
}

void glc__enc_forget_bindings(glc__encoder *e) { e->bound.valid = 0; }

GLbitfield glc__gl_barrier_bits(unsigned kinds)
{
    return (kinds & GLC__BARRIER_STORAGE ? GL_SHADER_STORAGE_BARRIER_BIT : 0u) |
           (kinds & GLC__BARRIER_BUFFER_UPDATE ? GL_BUFFER_UPDATE_BARRIER_BIT : 0u) |
           (kinds & GLC__BARRIER_UNIFORM ? GL_UNIFORM_BARRIER_BIT : 0u) |
           (kinds & GLC__BARRIER_COMMAND ? GL_COMMAND_BARRIER_BIT : 0u);
}

/* The bits for dev: texel reads see shader writes only after FETCH */
static GLbitfield device_bits(const glc_device *dev, unsigned kinds)
{
    return glc__gl_barrier_bits(kinds) |
           (kinds & GLC__BARRIER_STORAGE && dev->texel_used
                ? (GLbitfield)GL_TEXTURE_FETCH_BARRIER_BIT
                : 0u);
}

void glc__enc_barrier(glc_device *dev, unsigned kinds, glc_dispatch_stats *stats)
{
    glc__encoder *e = &dev->enc;
    dev->gl.glMemoryBarrier(device_bits(dev, kinds));
    if (kinds & GLC__BARRIER_STORAGE) {
        glc__hazard_clear(&e->haz);
        e->since_barrier = 0;
        if (dev->validate)
            glc__oracle_clear(&e->oracle);
        e->nnamed = 0;
    }
    if (kinds & GLC__BARRIER_UNIFORM)
        e->uniform_barrier_seq = e->dispatch_seq;
    if (kinds & GLC__BARRIER_COMMAND)
        e->command_barrier_seq = e->dispatch_seq;
    if (kinds & GLC__BARRIER_BUFFER_UPDATE)
        e->update_barrier_seq = e->dispatch_seq;
    if (stats)
        stats->barriers++;
}

void glc__enc_settle(glc_device *dev)
{
    if (dev->enc.since_barrier)
        glc__enc_barrier(dev, GLC__BARRIER_STORAGE, NULL);
}

void glc__enc_host_access(glc_device *dev, uint64_t write_seq)
{
    /* why: host reads/updates see shader writes only after this bit */
    if (write_seq > dev->enc.update_barrier_seq)
        glc__enc_barrier(dev, GLC__BARRIER_BUFFER_UPDATE, NULL);
}

void glc__enc_raw_barrier(glc_device *dev, unsigned kinds)
{
    dev->gl.glMemoryBarrier(device_bits(dev, kinds));
}

/* Spans into the tracker (and the oracle under GLC_VALIDATE) as dispatch id. */
static glc_status track(glc_device *dev, const glc__span *spans, int n, uint32_t id)
{
    glc_status st = glc__hazard_add(&dev->enc.haz, spans, n, id);
    if (st == GLC_OK && dev->validate)
        st = glc__oracle_add(&dev->enc.oracle, spans, n, id);
    return st;
}

void glc__enc_learn(glc_device *dev, const glc__span *spans, int n)
{
    if (n == 0)
        return;
    /* the tracker keeps its capacity: no allocation after the first runs */
    if (track(dev, spans, n, (uint32_t)dev->enc.dispatch_seq) != GLC_OK) {
        /* cannot track: a barrier makes every later dispatch safe */
        glc__enc_barrier(dev, GLC__BARRIER_STORAGE, NULL);
        return;
    }
    dev->enc.since_barrier = 1;
}

int glc__enc_conflicts(glc_device *dev, const glc__span *spans, int n)
{
    return glc__hazard_check(&dev->enc.haz, spans, n, NULL) != 0;
}

glc_status glc__enc_track_outside(glc_device *dev, const glc__span *spans, int n,
                                  const glc_binding *writes, int nwrites, const char *fn)
{
    glc__encoder *e = &dev->enc;
    int i;
    if (track(dev, spans, n, (uint32_t)(e->dispatch_seq + 1)) != GLC_OK)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    e->dispatch_seq++;
    e->since_barrier++;
    e->nnamed = 0; /* the outside dispatch has no name: forget the window's */
    for (i = 0; i < nwrites; i++)
        writes[i].buffer->write_seq = e->dispatch_seq;
    return GLC_OK;
}

glc_status glc__sync_wait(glc_device *dev, GLsync sync, uint64_t timeout_ns, uint64_t *waited,
                          const char *fn)
{
    uint64_t t0 = glc__now_ns();
    GLenum r = dev->gl.glClientWaitSync(sync, GL_SYNC_FLUSH_COMMANDS_BIT, timeout_ns);
    while (r == GL_TIMEOUT_EXPIRED && timeout_ns == UINT64_MAX) /* a driver may clamp it */
        r = dev->gl.glClientWaitSync(sync, 0, UINT64_MAX);
    *waited += glc__now_ns() - t0;
    if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED)
        return GLC_OK;
    if (r == GL_TIMEOUT_EXPIRED)
        return glc__fail(dev, GLC_ERR_TIMEOUT, "%s: not signalled after %llu ns", fn,
                         (unsigned long long)timeout_ns);
    if (dev->info.features.robust_context && dev->gl.glGetGraphicsResetStatusEXT &&
        glc__has_ext(dev->extensions, "GL_EXT_robustness") &&
        dev->gl.glGetGraphicsResetStatusEXT() != GL_NO_ERROR)
        return glc__fail(dev, GLC_ERR_CONTEXT_LOST, "%s: the GPU was reset", fn);
    return glc__fail(dev, GLC_ERR_GL, "%s: glClientWaitSync failed (0x%04x)", fn, r);
}

/* The barrier kinds command c needs before it; *why gets the storage conflict. */
static unsigned needed_kinds(glc_device *dev, const glc__cmd *c, const glc__span *spans, int n,
                             glc__conflict *why, glc_dispatch_stats *stats)
{
    unsigned bits = 0;
    uint64_t t0 = glc__now_ns();
    int i;
    if (dev->enc.since_barrier &&
        (dev->barrier_policy == GLC__BARRIERS_ALWAYS || glc__hazard_check(&dev->enc.haz, spans, n, why)))
        bits |= GLC__BARRIER_STORAGE;
    stats->tracker_ns += glc__now_ns() - t0;
    for (i = 0; i < c->nbind; i++)
        if (c->bind[i].kind == GLC_BIND_UNIFORM &&
            c->bind[i].buffer->write_seq > dev->enc.uniform_barrier_seq)
            bits |= GLC__BARRIER_UNIFORM; /* why: uniform reads see shader writes only after it */
    if (c->indirect && c->indirect->write_seq > dev->enc.command_barrier_seq)
        bits |= GLC__BARRIER_COMMAND; /* why: indirect counts are fetched by the command processor */
    if (dev->barrier_policy == GLC__BARRIERS_NEVER)
        bits = 0;
    return bits;
}

/* GLC_VALIDATE: the oracle's view of the stream just emitted. */
static glc_status validate_emitted(glc_device *dev, const glc__cmd *c, const glc__span *spans,
                                   int n)
{
    glc__conflict why;
    glc_status st;
    if (glc__oracle_check(&dev->enc.oracle, spans, n, &why)) {
        const struct glc__named *e = named(dev, why.earlier);
        return glc__fail(dev, GLC_ERR_HAZARD,
                         "GLC_VALIDATE: missing barrier: dispatch %llu (%s \"%s\") %s bytes "
                         "[%llu, %llu) of buffer %u after dispatch %u (%s \"%s\") with no "
                         "barrier between",
                         (unsigned long long)dev->enc.dispatch_seq + 1, c->kernel->name,
                         c->label ? c->label : "", kind_name(why.kinds),
                         (unsigned long long)why.begin, (unsigned long long)why.end, why.buffer,
                         why.earlier, e->kernel, e->label);
    }
    st = glc__oracle_add(&dev->enc.oracle, spans, n, (uint32_t)(dev->enc.dispatch_seq + 1));
    return st == GLC_OK ? GLC_OK
                        : glc__fail(dev, st, "GLC_VALIDATE: out of memory in the oracle");
}

/* Texture unit u shows bytes [off, off + size) of buf as RGBA32F
 * (GLC_BIND_TEXEL) or RGBA32UI (GLC_BIND_TEXEL_UINT) texels through the
 * device's buffer texture of the unit; 1 when the active unit was changed. */
static int bind_texel(glc_device *dev, GLuint u, const glc_buffer *buf, GLintptr off,
                      GLsizeiptr size, int kind)
{
    struct glc__bound *b = &dev->enc.bound;
    GLenum format = kind == GLC_BIND_TEXEL_UINT ? GL_RGBA32UI : GL_RGBA32F;
    int moved = 0, same = dev->texel_tex[u] && dev->texel_shows[u].id == buf->id &&
                          dev->texel_shows[u].offset == off && dev->texel_shows[u].size == size &&
                          dev->texel_shows[u].format == format;
    if (!dev->texel_tex[u])
        dev->gl.glGenTextures(1, &dev->texel_tex[u]);
    if (!(b->texel_units & (1u << u)) || !same) {
        dev->gl.glActiveTexture(GL_TEXTURE0 + u);
        dev->gl.glBindTexture(GL_TEXTURE_BUFFER_OES, dev->texel_tex[u]);
        b->texel_units |= 1u << u;
        moved = 1;
    }
    if (!same) {
        dev->gl.glTexBufferRangeOES(GL_TEXTURE_BUFFER_OES, format, buf->name, off, size);
        dev->texel_shows[u].format = format;
        dev->texel_shows[u].id = buf->id;
        dev->texel_shows[u].offset = off;
        dev->texel_shows[u].size = size;
    }
    return moved;
}

void glc__enc_texel_make(glc_device *dev)
{
    GLuint u;
    for (u = 0; u < GLC__TEXEL_UNITS; u++)
        if (!dev->texel_tex[u])
            dev->gl.glGenTextures(1, &dev->texel_tex[u]);
}

int glc__enc_shows_texel(const glc_device *dev, uint32_t id)
{
    GLuint u;
    for (u = 0; u < GLC__TEXEL_UNITS; u++)
        if (dev->texel_tex[u] && dev->texel_shows[u].id == id)
            return 1;
    return 0;
}

void glc__enc_drop_texel(glc_device *dev, uint32_t id)
{
    GLuint u;
    for (u = 0; u < GLC__TEXEL_UNITS; u++)
        if (dev->texel_tex[u] && dev->texel_shows[u].id == id) {
            dev->gl.glDeleteTextures(1, &dev->texel_tex[u]); /* (unbinds it) */
            dev->texel_tex[u] = 0;
            dev->texel_shows[u].id = 0;
            dev->enc.bound.texel_units &= ~(1u << u);
        }
}

/* Sets what differs from what the last dispatch of this API call set
 * (dev->bound) and from the uniforms the program already holds: a plan's
 * replay of consecutive dispatches skips most GL calls. */
static void bind_and_dispatch(glc_device *dev, const glc__cmd *c)
{
    struct glc__bound *b = &dev->enc.bound;
    glc_kernel *k = c->kernel;
    GLuint ssbo = 0, ubo = 0, texel = 0;
    int i, unit_moved = 0;
    if (!b->valid) {
        memset(b, 0, sizeof *b);
        b->valid = 1;
    }
    if (b->program != k->program) {
        dev->gl.glUseProgram(k->program);
        b->program = k->program;
    }
    for (i = 0; i < c->nbind; i++) {
        GLuint name = c->bind[i].buffer->name;
        GLintptr off = (GLintptr)c->bind[i].offset;
        GLsizeiptr size = (GLsizeiptr)c->bind[i].size;
        if (c->bind[i].kind == GLC_BIND_UNIFORM) {
            dev->gl.glBindBufferRange(GL_UNIFORM_BUFFER, ubo++, name, off, size);
            continue;
        }
        if (glc__is_texel(c->bind[i].kind)) { /* (session.c checked: a unit, whole texels) */
            unit_moved |= bind_texel(dev, texel++, c->bind[i].buffer, off, size, c->bind[i].kind);
            continue;
        }
        if (ssbo < 16 && b->ssbo[ssbo].name == name && b->ssbo[ssbo].offset == off &&
            b->ssbo[ssbo].size == size) {
            ssbo++;
            continue;
        }
        if (ssbo < 16) {
            b->ssbo[ssbo].name = name;
            b->ssbo[ssbo].offset = off;
            b->ssbo[ssbo].size = size;
        }
        dev->gl.glBindBufferRange(GL_SHADER_STORAGE_BUFFER, ssbo++, name, off, size);
    }
    if (unit_moved) /* (adopted contexts get theirs back from glstate) */
        dev->gl.glActiveTexture(GL_TEXTURE0);
    if (k->params_loc >= 0 && c->nparams &&
        (k->last_nparams != c->nparams ||
         memcmp(k->last_params, c->params, (size_t)c->nparams * sizeof c->params[0]))) {
        dev->gl.glUniform1uiv(k->params_loc, c->nparams, c->params);
        memcpy(k->last_params, c->params, (size_t)c->nparams * sizeof c->params[0]);
        k->last_nparams = c->nparams;
    }
    if (k->total_loc >= 0 && (!k->total_set || k->last_total != c->total_groups)) {
        dev->gl.glUniform1ui(k->total_loc, c->total_groups);
        k->last_total = c->total_groups;
        k->total_set = 1;
    }
    if (c->indirect) {
        dev->gl.glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, c->indirect->name);
        dev->gl.glDispatchComputeIndirect((GLintptr)c->indirect_offset);
    } else {
        dev->gl.glDispatchCompute(c->grid[0], c->grid[1], c->grid[2]);
    }
    dev->wrote_last = 0; /* (buffer.c: NVIDIA's writes in a row) */
}

void glc__replay(glc_device *dev, const glc__cmd *c)
{
    int i;
    bind_and_dispatch(dev, c);
    dev->enc.dispatch_seq++;
    for (i = 0; i < c->nbind; i++)
        if (c->bind[i].access & GLC_WRITE)
            c->bind[i].buffer->write_seq = dev->enc.dispatch_seq;
}

static int histogram_bucket(uint64_t groups)
{
    int b = 0;
    while (groups >= 4 && b < GLC_HISTOGRAM_BUCKETS - 1) {
        groups >>= 2;
        b++;
    }
    return b;
}

glc_status glc__encode(glc_device *dev, const glc__cmd *c, glc_dispatch_stats *stats)
{
    glc__span spans[GLC__MAX_BINDINGS + 1];
    glc__conflict why;
    uint64_t t0 = glc__now_ns(), t1;
    unsigned bits;
    glc_status st;
    int n = glc__cmd_spans(c, spans);
    bits = needed_kinds(dev, c, spans, n, &why, stats);
    if (bits & GLC__BARRIER_STORAGE) {
        if (dev->trace) {
            const struct glc__named *e = named(dev, why.earlier);
            if (dev->barrier_policy == GLC__BARRIERS_ALWAYS)
                glc__trace(dev, "barrier before dispatch %llu (%s \"%s\"): GLC_BARRIERS=always",
                           (unsigned long long)dev->enc.dispatch_seq + 1, c->kernel->name,
                           c->label ? c->label : "");
            else
                glc__trace(dev,
                           "barrier before dispatch %llu (%s \"%s\"): %s on bytes [%llu, %llu) "
                           "of buffer %u with dispatch %u (%s \"%s\")",
                           (unsigned long long)dev->enc.dispatch_seq + 1, c->kernel->name,
                           c->label ? c->label : "", kind_name(why.kinds),
                           (unsigned long long)why.begin, (unsigned long long)why.end,
                           why.buffer, why.earlier, e->kernel, e->label);
        }
        if (dev->test_drop_barrier > 0 && --dev->test_drop_barrier == 0) {
            /* test hook: forget the ranges as if the barrier were emitted */
            glc__hazard_clear(&dev->enc.haz);
            dev->enc.since_barrier = 0;
            bits &= ~(unsigned)GLC__BARRIER_STORAGE;
        }
    }
    if (bits)
        glc__enc_barrier(dev, bits, stats);
    if (dev->validate && (st = validate_emitted(dev, c, spans, n)) != GLC_OK)
        return st;
    t1 = glc__now_ns();
    st = glc__hazard_add(&dev->enc.haz, spans, n, (uint32_t)(dev->enc.dispatch_seq + 1));
    stats->tracker_ns += glc__now_ns() - t1;
    if (st != GLC_OK)
        return glc__fail(dev, st, "glc_session_dispatch: out of memory in the hazard tracker");
    if (dev->validate || dev->trace)
        remember_name(dev, c);
    glc__replay(dev, c);
    dev->enc.since_barrier++;
    stats->dispatches++;
    stats->group_histogram[histogram_bucket(c->total_groups)]++;
    stats->encode_ns += glc__now_ns() - t0;
    return glc__check_gl(dev, "glc_session_dispatch");
}
