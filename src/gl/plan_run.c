/*
 * Every way to run a compiled plan, over one replay and one name resolver.
 *
 * A run: inputs uploaded (glBufferSubData: an API write a later shader read
 * needs no barrier for), one storage barrier first when the device's
 * encoder holds unbarriered work of anything before, the commands with
 * their precomputed barriers (no tracking, no lookup, no allocation), then
 * the encoder learns the spans after the plan's last barrier (so eager
 * work and other plans after it stay correct), and outputs are read back
 * (BUFFER_UPDATE barrier, map) into the host mirror preallocated at
 * compile time.
 *
 *  - run / run_typed: by name. resolve() matches the caller's names to
 *    the slots (every input given once, sizes checked) into arrays sized
 *    at compile, so a run by name has no cap on the tensor count.
 *  - run_slots / run_raw: by position, outputs left in the mirror.
 *  - commit_no_wait / sync_pending: a run split at a fence. The commit
 *    emits the BUFFER_UPDATE barrier the readback will need before the
 *    fence, so the fence covers everything the sync waits for. The outputs
 *    stay in the arena until the sync maps them; that is why every other
 *    run of the plan is refused while one is pending (refuse_pending), and
 *    why the sync sizes them by the variable values kept at the commit.
 *  - run_pipelined: n runs with one wait. Every set's inputs go to a
 *    staging buffer first (nothing in flight reads it); each set is then
 *    copied into the arena's input slots on the GPU (an API write, which a
 *    later shader read needs no barrier for), replayed (replay() starts
 *    with a storage barrier whenever the device holds unbarriered work, so
 *    set k + 1's dispatches wait for set k's), and its outputs are copied
 *    into the set's own region of a second staging buffer after a
 *    BUFFER_UPDATE barrier (a copy sees shader writes only after it). One
 *    glMapBufferRange of that buffer at the end is the only wait.
 *
 * Once warm no run allocates: staging buffers grow on first use and are
 * kept until glc_plan_destroy.
 */
#include "plan.h"

#include "alloc.h"
#include "buffer.h"
#include "convert.h"
#include "device.h"
#include "encode.h"

#include <string.h>

#define TOUCH_RUN (GLC__TOUCH_PROGRAM | GLC__TOUCH_SSBO | GLC__TOUCH_COPY)
/* a run's state: image unit 0 too when a texture is bound */
#define TOUCH_OF(p)                                                                         \
    (TOUCH_RUN | (glc__plan_has_textures(p) ? GLC__TOUCH_IMAGE : 0u) | glc__touch_texel((p)->dev))
#define EARLY_FLUSH_AT 16

glc_status glc__plan_refuse_pending(glc_plan *p, const char *fn)
{
    if (!p->run.pending)
        return GLC_OK;
    return glc__fail(p->dev, GLC_ERR_STATE,
                     "%s: a run of glc_plan_commit_no_wait is pending (call "
                     "glc_plan_sync_pending first)",
                     fn);
}

glc_status glc__plan_check_inputs(glc_plan *p, const void *const *inputs, const char *fn)
{
    int i;
    for (i = 0; i < p->nin && !inputs; i++)
        if (!glc__io_external(&p->in[i])) /* NULL takes no data: every input bound */
            return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "%s: inputs is NULL", fn);
    for (i = 0; i < p->nin && inputs; i++)
        if (!inputs[i] && !glc__io_external(&p->in[i]))
            return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "%s: input slot %d (\"%s\") is NULL",
                             fn, i, p->g->t[p->in[i].tensor].name);
    return GLC_OK;
}

/* ---- the replay ---- */

static void copy_range(glc_device *dev, glc_buffer *from, size_t from_off, glc_buffer *to,
                       size_t to_off, size_t bytes)
{
    dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, from->name);
    dev->gl.glBindBuffer(GL_COPY_WRITE_BUFFER, to->name);
    dev->gl.glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)from_off,
                                (GLintptr)to_off, (GLsizeiptr)bytes);
}

/* Replays the commands with their barriers (probe around each) and copies
 * the handle feeds. The caller has entered the device with TOUCH_RUN and
 * max_bind. */
static void replay(glc_plan *p, glc__plan_probe probe)
{
    glc_device *dev = p->dev;
    size_t i;
    int k;
    glc__enc_settle(dev);
    glc__plan_textures(p, 0);
    for (i = 0; i < p->prog.ncmd; i++) {
        if (p->bar[i])
            glc__enc_raw_barrier(dev, p->bar[i]);
        if (probe)
            probe(p, i, 0);
        glc__replay(dev, &p->cmds[i]);
        if (probe)
            probe(p, i, 1);
        /* long lists: hand the first commands to the GPU early, so it
         * works while the CPU encodes the rest (a flush costs ~us) */
        if (i + 1 == EARLY_FLUSH_AT && p->prog.ncmd >= 2 * EARLY_FLUSH_AT)
            dev->gl.glFlush();
    }
    glc__enc_learn(dev, p->tail, p->ntail);
    for (k = 0; k < p->nfeed; k++) {
        size_t fo, to;
        glc_buffer *fb = glc__plan_storage(p, p->feed[k].from, &fo);
        glc_buffer *tb = glc__plan_storage(p, p->feed[k].to, &to);
        glc__buffer_host_access(fb); /* a copy reads what shaders wrote after this bit */
        copy_range(dev, fb, fo, tb, to, p->prog.place[p->feed[k].to].bytes);
    }
    glc__plan_copy_bound(p);
    glc__plan_textures(p, 1);
}

/* A run's uploads, packed: the inputs of one arena buffer go to GL as one
 * write, from p->stage, covering the bytes from the first one's offset to
 * the last one's end (rounded up to a whole word: the next tensor starts
 * on the device's alignment). The gaps between them belong to outputs and
 * intermediates, none of which holds a value when a run starts (handles
 * and params have buffers of their own), so whatever they get is
 * overwritten before anything reads it. Why: on NVIDIA's drivers a write
 * that follows another waits for the GPU first, as two writes in a row
 * lose one without it (buffer.c): a decode step's three inputs took two or
 * three waits; its one write follows the last run's dispatches and takes
 * none. Packed where the span is at most PACK_SLACK bytes more than
 * the inputs' own at the maxima (an output between them, as a model's
 * logits, would cost more to send than the waits). A buffer's one input
 * is packed only when its size is no whole word (the rounded write spares
 * the end word's read-back, a wait for the GPU); elsewhere each input is
 * written alone. The packed bytes share p->stage with the conversions of
 * inputs written alone (a buffer's write is sent before the next one's
 * inputs are converted). */
#define PACK_SLACK 4096

/* Whether input slot i is uploaded from the host, into arena buffer b at
 * *off, *bytes at the current values (maxima: at the maxima). */
static int arena_input(const glc_plan *p, int i, int b, int maxima, size_t *off, size_t *bytes)
{
    int32_t id = p->in[i].tensor;
    const glc__place *pl = &p->prog.place[id];
    if (pl->region != GLC__REGION_ARENA || pl->buffer != b || glc__io_external(&p->in[i]))
        return 0;
    *off = pl->offset;
    *bytes = maxima ? pl->bytes : glc__plan_bytes_at(p, id, NULL);
    return *bytes != 0;
}

/* The span [*lo, *hi) of buffer b's uploaded inputs, hi a whole word
 * within the buffer, and their count; *sum their bytes. */
static int input_span(const glc_plan *p, int b, int maxima, size_t *lo, size_t *hi, size_t *sum)
{
    size_t off, bytes, cap = p->prog.buffer_bytes[b];
    int i, n = 0;
    *lo = SIZE_MAX;
    *hi = *sum = 0;
    for (i = 0; i < p->nin; i++)
        if (arena_input(p, i, b, maxima, &off, &bytes)) {
            *lo = off < *lo ? off : *lo;
            *hi = off + bytes > *hi ? off + bytes : *hi;
            *sum += bytes;
            n++;
        }
    if (n && (*hi + 3) / 4 * 4 <= cap)
        *hi = (*hi + 3) / 4 * 4;
    return n;
}

size_t glc__plan_pack_bytes(const glc_plan *p)
{
    size_t lo, hi, sum, most = 0;
    int b;
    for (b = 0; b < p->prog.narena; b++)
        if (input_span(p, b, 1, &lo, &hi, &sum) && hi - lo <= sum + PACK_SLACK && hi - lo > most)
            most = hi - lo;
    return most;
}

/* Input slot i's bytes (in the declared dtype, or f32/i32 values converted
 * when from_f32 is set) at to, or written alone when to is NULL. */
static glc_status put_input(glc_plan *p, const void *const *inputs, int i, int from_f32,
                            unsigned char *to, const char *fn)
{
    int32_t id = p->in[i].tensor;
    const glc__place *pl = &p->prog.place[id];
    glc_dtype dt = p->g->t[id].dtype;
    size_t bytes = glc__plan_bytes_at(p, id, NULL);
    const void *src = inputs[i];
    if (from_f32 && (dt == GLC_DTYPE_F16 || dt == GLC_DTYPE_BF16)) {
        glc__convert_from_f32(dt, src, to ? to : p->stage, glc__plan_numel(p, id));
        if (to)
            return GLC_OK;
        src = p->stage;
    }
    if (to) {
        memcpy(to, src, bytes);
        return GLC_OK;
    }
    return glc__buffer_write_in(p->buf[pl->buffer], pl->offset, bytes, src, fn);
}

/* Uploads inputs by slot (bytes in the declared dtype, or f32/i32 values
 * converted when from_f32 is set), packed where it pays (above). The
 * caller has entered the device. */
static glc_status upload(glc_plan *p, const void *const *inputs, int from_f32, const char *fn)
{
    glc_status st = GLC_OK;
    size_t lo, hi, sum, off, bytes;
    int b, i, n;
    for (b = 0; b < p->prog.narena && st == GLC_OK; b++) {
        int pack = (n = input_span(p, b, 0, &lo, &hi, &sum)) && (n > 1 || hi - lo != sum) &&
                   hi - lo <= p->stage_bytes;
        for (i = 0; i < p->nin && st == GLC_OK && n; i++)
            if (arena_input(p, i, b, 0, &off, &bytes))
                st = put_input(p, inputs, i, from_f32, pack ? p->stage + (off - lo) : NULL, fn);
        if (pack && st == GLC_OK)
            st = glc__buffer_write_in(p->buf[b], lo, hi - lo, p->stage, fn);
    }
    return st;
}

/* Uploads, replays, reads every output into the mirror. */
static glc_status run_core(glc_plan *p, const void *const *inputs, int from_f32,
                           glc__plan_probe probe, const char *fn)
{
    glc_device *dev = p->dev;
    glc__glstate gs;
    glc_status st;
    int i;
    if ((st = glc__plan_refuse_pending(p, fn)) != GLC_OK)
        return st;
    if ((st = glc__enter(dev, TOUCH_OF(p), p->max_bind, &gs)) != GLC_OK)
        return st;
    st = glc__plan_bindings_ok(p, fn);
    if (st == GLC_OK)
        st = upload(p, inputs, from_f32, fn);
    if (st == GLC_OK) {
        replay(p, probe);
        for (i = 0; i < p->nout && st == GLC_OK; i++) {
            size_t bytes = glc__plan_bytes_at(p, p->out[i].tensor, NULL), off;
            glc_buffer *b = glc__plan_storage(p, p->out[i].tensor, &off);
            if (bytes && !glc__io_external(&p->out[i]))
                st = glc__buffer_read_in(b, off, bytes, p->mirror + p->out[i].host_off, fn);
        }
    }
    glc__leave(dev, &gs);
    return st;
}

/* ---- by name ---- */

/* One named tensor of a run as the caller gave it: typed runs give bytes
 * of a dtype, plain runs an element count of f32 or i32 values. */
typedef struct named {
    const char *name;
    const void *data;
    size_t size; /* bytes (typed) or values */
    glc_dtype dtype;
} named;

typedef void (*named_at)(const void *arr, int k, named *out);

static void plain_in(const void *arr, int k, named *o)
{
    const glc_plan_input *x = (const glc_plan_input *)arr + k;
    o->name = x->name, o->data = x->data, o->size = x->count, o->dtype = GLC_DTYPE_F32;
}
static void plain_out(const void *arr, int k, named *o)
{
    const glc_plan_output *x = (const glc_plan_output *)arr + k;
    o->name = x->name, o->data = x->data, o->size = x->count, o->dtype = GLC_DTYPE_F32;
}
static void typed_in(const void *arr, int k, named *o)
{
    const glc_plan_typed_input *x = (const glc_plan_typed_input *)arr + k;
    o->name = x->name, o->data = x->data, o->size = x->bytes, o->dtype = x->dtype;
}
static void typed_out(const void *arr, int k, named *o)
{
    const glc_plan_typed_output *x = (const glc_plan_typed_output *)arr + k;
    o->name = x->name, o->data = x->data, o->size = x->bytes, o->dtype = x->dtype;
}

/* 1 when x fits tensor id: the values it holds (plain), or its bytes and
 * dtype (typed); *want gets what it takes. */
static int fits(const glc_plan *p, int32_t id, const named *x, int typed, size_t *want)
{
    *want = typed ? glc__plan_bytes_at(p, id, NULL) : glc__plan_numel(p, id);
    return x->data && x->size == *want && (!typed || x->dtype == p->g->t[id].dtype);
}

/* Matches the caller's named inputs and outputs to the plan's slots:
 * p->run.inputs[slot] gets each input's data. Every input once, every
 * output known, sizes checked; messages name the tensor. */
static glc_status resolve(glc_plan *p, const void *in, int nin, named_at in_at, const void *out,
                          int nout, named_at out_at, int typed, const char *fn)
{
    glc_device *dev = p->dev;
    named x;
    size_t want;
    int i, k;
    for (k = 0; k < nin; k++) {
        in_at(in, k, &x);
        if (glc__plan_find(p, GLC__T_INPUT, x.name) < 0)
            return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: no input named \"%s\"", fn,
                             x.name ? x.name : "(null)");
        for (i = 0; i < p->nin; i++)
            if (glc__io_external(&p->in[i]) &&
                strcmp(p->g->t[p->in[i].tensor].name, x.name) == 0)
                return glc__fail(dev, GLC_ERR_INVALID_ARG,
                                 "%s: input \"%s\" is bound to GPU memory "
                                 "(glc_plan_bind_input): runs read it there, and take no data",
                                 fn, x.name);
    }
    for (i = 0; i < p->nin; i++) {
        int32_t id = p->in[i].tensor;
        const char *name = p->g->t[id].name;
        const void **slot = &p->run.inputs[i];
        *slot = NULL;
        for (k = 0; k < nin; k++) {
            in_at(in, k, &x);
            if (strcmp(x.name, name) != 0)
                continue;
            if (*slot || !fits(p, id, &x, typed, &want)) {
                const char *why = *slot ? "given twice; " : !x.data ? "no data; " : "";
                if (typed)
                    return glc__fail(dev, GLC_ERR_INVALID_ARG,
                                     "%s: input \"%s\": %s%zu bytes of %s given, it takes %zu "
                                     "bytes of %s",
                                     fn, name, why, x.size, glc_dtype_name(x.dtype), want,
                                     glc_dtype_name(p->g->t[id].dtype));
                return glc__fail(dev, GLC_ERR_INVALID_ARG,
                                 "%s: input \"%s\": %s%zu values given, it takes %zu", fn, name,
                                 why, x.size, want);
            }
            *slot = x.data;
        }
        if (!*slot && !glc__io_external(&p->in[i]))
            return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: input \"%s\" is missing", fn, name);
    }
    for (k = 0; k < nout; k++) {
        int j;
        int32_t id;
        out_at(out, k, &x);
        if ((j = glc__plan_output_slot(p, x.name)) < 0)
            return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: no output named \"%s\"", fn,
                             x.name ? x.name : "(null)");
        id = p->out[j].tensor;
        if (glc__io_external(&p->out[j]))
            return glc__fail(dev, GLC_ERR_INVALID_ARG,
                             "%s: output \"%s\" is bound to GPU memory (glc_plan_bind_output): "
                             "runs write it there, not to host memory",
                             fn, x.name);
        if (fits(p, id, &x, typed, &want))
            continue;
        if (typed)
            return glc__fail(dev, GLC_ERR_INVALID_ARG,
                             "%s: output \"%s\": %sroom for %zu bytes of %s, it has %zu bytes "
                             "of %s",
                             fn, x.name, x.data ? "" : "no data; ", x.size,
                             glc_dtype_name(x.dtype), want, glc_dtype_name(p->g->t[id].dtype));
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "%s: output \"%s\": room for %zu values, it has %zu", fn, x.name,
                         x.data ? x.size : 0, want);
    }
    return GLC_OK;
}

/* A run by name: resolve, run (f32 conversions for plain runs), copy the
 * named outputs out of the mirror. */
static glc_status run_named(glc_plan *p, const void *in, int nin, named_at in_at, void *out,
                            int nout, named_at out_at, int typed, const char *fn)
{
    glc_status st;
    int k;
    if (nin < 0 || nout < 0 || (nin && !in) || (nout && !out))
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "%s: %d inputs, %d outputs", fn, nin, nout);
    if ((st = glc__plan_refuse_pending(p, fn)) != GLC_OK ||
        (st = resolve(p, in, nin, in_at, out, nout, out_at, typed, fn)) != GLC_OK ||
        (st = glc__plan_params_ready(p, fn)) != GLC_OK ||
        (st = run_core(p, p->run.inputs, !typed, NULL, fn)) != GLC_OK)
        return st;
    for (k = 0; k < nout; k++) {
        named x;
        int j;
        int32_t id;
        glc_dtype dt;
        const unsigned char *src;
        out_at(out, k, &x);
        j = glc__plan_output_slot(p, x.name);
        id = p->out[j].tensor;
        dt = p->g->t[id].dtype;
        src = p->mirror + p->out[j].host_off;
        if (!typed && (dt == GLC_DTYPE_F16 || dt == GLC_DTYPE_BF16))
            glc__convert_to_f32(dt, src, (void *)x.data, x.size);
        else
            memcpy((void *)x.data, src, glc__plan_bytes_at(p, id, NULL));
    }
    return GLC_OK;
}

glc_status glc_plan_run(glc_plan *p, const glc_plan_input *in, int nin,
                        const glc_plan_output *out, int nout)
{
    GLC__ARG(NULL, p);
    return run_named(p, in, nin, plain_in, (void *)out, nout, plain_out, 0, "glc_plan_run");
}

glc_status glc_plan_run_typed(glc_plan *p, const glc_plan_typed_input *in, int nin,
                              const glc_plan_typed_output *out, int nout)
{
    GLC__ARG(NULL, p);
    return run_named(p, in, nin, typed_in, (void *)out, nout, typed_out, 1,
                     "glc_plan_run_typed");
}

glc_status glc_plan_run_with_vars(glc_plan *p, const glc_plan_var *vars, int nvars,
                                  const glc_plan_input *in, int nin, const glc_plan_output *out,
                                  int nout)
{
    glc_status st = glc_plan_set_vars(p, vars, nvars);
    return st != GLC_OK ? st : glc_plan_run(p, in, nin, out, nout);
}

/* ---- by position ---- */

glc_status glc__plan_run_slots(glc_plan *p, const void *const *inputs, glc_plan_slice *outs,
                               glc__plan_probe probe, const char *fn)
{
    glc_status st;
    int i;
    if (p->nout && !outs)
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "%s: outs is NULL", fn);
    if ((st = glc__plan_check_inputs(p, inputs, fn)) != GLC_OK ||
        (st = glc__plan_params_ready(p, fn)) != GLC_OK ||
        (st = run_core(p, inputs, 0, probe, fn)) != GLC_OK)
        return st;
    for (i = 0; i < p->nout; i++) {
        outs[i].offset = p->out[i].host_off;
        outs[i].bytes =
            glc__io_external(&p->out[i]) ? 0 : glc__plan_bytes_at(p, p->out[i].tensor, NULL);
    }
    return GLC_OK;
}

glc_status glc_plan_run_slots(glc_plan *p, const void *const *inputs, glc_plan_slice *outs)
{
    GLC__ARG(NULL, p);
    return glc__plan_run_slots(p, inputs, outs, NULL, "glc_plan_run_slots");
}

glc_status glc_plan_run_raw(glc_plan *p, const void *const *inputs, const void **outs)
{
    glc_status st;
    int i;
    GLC__ARG(NULL, p);
    if (p->nout && !outs)
        return glc__fail(p->dev, GLC_ERR_INVALID_ARG, "glc_plan_run_raw: outs is NULL");
    if ((st = glc__plan_run_slots(p, inputs, p->run.slices, NULL, "glc_plan_run_slots")) !=
        GLC_OK)
        return st;
    for (i = 0; i < p->nout; i++)
        outs[i] = p->mirror + p->run.slices[i].offset;
    return GLC_OK;
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
    if ((st = glc__plan_refuse_pending(p, fn)) != GLC_OK || (st = glc__plan_check_inputs(p, inputs, fn)) != GLC_OK ||
        (st = glc__plan_params_ready(p, fn)) != GLC_OK)
        return st;
    if ((st = glc__enter(dev, TOUCH_OF(p), p->max_bind, &gs)) != GLC_OK)
        return st;
    st = glc__plan_bindings_ok(p, fn);
    if (st == GLC_OK)
        st = upload(p, inputs, 0, fn);
    if (st == GLC_OK) {
        replay(p, NULL);
        for (j = 0; j < p->nout; j++) {
            size_t off;
            /* the sync maps what shaders wrote: its barrier goes before the fence */
            if (!glc__io_external(&p->out[j]))
                glc__buffer_host_access(glc__plan_storage(p, p->out[j].tensor, &off));
        }
        p->run.pending = dev->gl.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        dev->gl.glFlush();
        if (!p->run.pending)
            st = glc__fail(dev, GLC_ERR_GL, "%s: glFenceSync failed", fn);
        else
            memcpy(p->run.pending_vals, p->prog.vals, sizeof p->run.pending_vals);
    }
    glc__leave(dev, &gs);
    return st;
}

glc_status glc_plan_sync_pending(glc_plan *p, glc_plan_slice *outs)
{
    static const char fn[] = "glc_plan_sync_pending";
    glc_device *dev;
    glc__glstate gs;
    glc_status st;
    uint64_t waited = 0;
    int j;
    GLC__ARG(NULL, p);
    dev = p->dev;
    if (p->nout && !outs)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: outs is NULL", fn);
    if (!p->run.pending)
        return glc__fail(dev, GLC_ERR_STATE,
                         "%s: no run is pending (glc_plan_commit_no_wait starts one)", fn);
    if ((st = glc__enter(dev, GLC__TOUCH_COPY, 0, &gs)) != GLC_OK)
        return st; /* still pending: the caller may sync from the right thread */
    st = glc__sync_wait(dev, p->run.pending, UINT64_MAX, &waited, fn);
    dev->gl.glDeleteSync(p->run.pending);
    p->run.pending = 0;
    for (j = 0; j < p->nout && st == GLC_OK; j++) {
        size_t off, bytes = glc__plan_bytes_at(p, p->out[j].tensor, p->run.pending_vals);
        glc_buffer *b = glc__plan_storage(p, p->out[j].tensor, &off);
        if (bytes && !glc__io_external(&p->out[j]))
            st = glc__buffer_read_in(b, off, bytes, p->mirror + p->out[j].host_off, fn);
    }
    glc__leave(dev, &gs);
    if (st != GLC_OK)
        return st;
    for (j = 0; j < p->nout; j++) {
        outs[j].offset = p->out[j].host_off;
        outs[j].bytes = glc__io_external(&p->out[j]) ? 0
                                         : glc__plan_bytes_at(p, p->out[j].tensor,
                                                              p->run.pending_vals);
    }
    return GLC_OK;
}

glc_status glc_plan_wait_pending(glc_plan *p, uint64_t timeout_ns)
{
    static const char fn[] = "glc_plan_wait_pending";
    glc__glstate gs;
    glc_status st;
    uint64_t waited = 0;
    GLC__ARG(NULL, p);
    if (!p->run.pending)
        return glc__fail(p->dev, GLC_ERR_STATE,
                         "%s: no run is pending (glc_plan_commit_no_wait starts one)", fn);
    if ((st = glc__enter(p->dev, 0, 0, &gs)) != GLC_OK)
        return st;
    st = glc__sync_wait(p->dev, p->run.pending, timeout_ns, &waited, fn);
    glc__leave(p->dev, &gs);
    return st;
}

int glc_plan_is_pending(const glc_plan *p) { return p && p->run.pending != 0; }

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

/* Maps the output staging buffer once (the wait) and hands each set's
 * outputs to the caller. */
static glc_status read_sets(glc_plan *p, int n, size_t region, void *const *outputs,
                            const char *fn)
{
    glc_device *dev = p->dev;
    const unsigned char *m;
    int k, j;
    dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, p->run.stage_out->name);
    m = dev->gl.glMapBufferRange(GL_COPY_READ_BUFFER, 0, (GLsizeiptr)((size_t)n * region),
                                 GL_MAP_READ_BIT);
    if (!m) {
        GLenum err = dev->gl.glGetError();
        return glc__fail(dev, err == GL_OUT_OF_MEMORY ? GLC_ERR_OUT_OF_MEMORY : GLC_ERR_GL,
                         "%s: glMapBufferRange failed (GL error 0x%04x)", fn, err);
    }
    for (k = 0; k < n; k++)
        for (j = 0; j < p->nout; j++)
            if (!glc__io_external(&p->out[j])) /* (a bound output holds the last set's) */
                memcpy(outputs[(size_t)k * (size_t)p->nout + (size_t)j],
                       m + (size_t)k * region + p->out[j].host_off,
                       glc__plan_bytes_at(p, p->out[j].tensor, NULL));
    if (!dev->gl.glUnmapBuffer(GL_COPY_READ_BUFFER))
        return glc__fail(dev, GLC_ERR_GL, "%s: buffer contents were lost while mapped", fn);
    return GLC_OK;
}

/* Copies set k's inputs from the input staging region into the arena's
 * input slots (the caller has entered the device). */
static void stage_set_in(glc_plan *p, size_t off)
{
    int i;
    for (i = 0; i < p->nin; i++) {
        int32_t id = p->in[i].tensor;
        size_t bytes = glc__plan_bytes_at(p, id, NULL), to;
        glc_buffer *b;
        if (p->prog.place[id].region == GLC__REGION_NONE)
            continue;
        b = glc__plan_storage(p, id, &to);
        if (bytes && !glc__io_external(&p->in[i])) { /* (a bound input: where it is) */
            glc__buffer_host_access(b); /* an API write after shader writes to the buffer */
            copy_range(p->dev, p->run.stage_in, off, b, to, bytes);
        }
        off += glc__align16(p->prog.place[id].bytes);
    }
}

glc_status glc_plan_run_pipelined(glc_plan *p, int n, const void *const *inputs,
                                  void *const *outputs)
{
    static const char fn[] = "glc_plan_run_pipelined";
    glc_device *dev;
    glc__glstate gs;
    size_t in_region = 0, out_region, nin, nout, sent = 0;
    glc_status st;
    int i, j, k, pack;
    GLC__ARG(NULL, p);
    dev = p->dev;
    nin = (size_t)p->nin;
    nout = (size_t)p->nout;
    if (n < 1 || (nin && !inputs) || (nout && !outputs))
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: %d sets, inputs %s, outputs %s", fn, n,
                         inputs ? "given" : "NULL", outputs ? "given" : "NULL");
    if ((st = glc__plan_refuse_pending(p, fn)) != GLC_OK)
        return st;
    for (k = 0; k < n; k++) {
        for (i = 0; i < p->nin; i++)
            if (!inputs[(size_t)k * nin + (size_t)i] && !glc__io_external(&p->in[i]))
                return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: set %d: input slot %d (\"%s\") is NULL",
                                 fn, k, i, p->g->t[p->in[i].tensor].name);
        for (j = 0; j < p->nout; j++)
            if (!outputs[(size_t)k * nout + (size_t)j] && !glc__io_external(&p->out[j]))
                return glc__fail(dev, GLC_ERR_INVALID_ARG,
                                 "%s: set %d: output slot %d (\"%s\") is NULL", fn, k, j,
                                 p->g->out[j].name);
    }
    if ((st = glc__plan_params_ready(p, fn)) != GLC_OK)
        return st;
    for (i = 0; i < p->nin; i++)
        if (p->prog.place[p->in[i].tensor].region != GLC__REGION_NONE)
            in_region += glc__align16(p->prog.place[p->in[i].tensor].bytes);
    out_region = p->mirror_bytes;
    if ((in_region && (size_t)n > SIZE_MAX / 2 / in_region) ||
        (out_region && (size_t)n > SIZE_MAX / 2 / out_region))
        return glc__fail(dev, GLC_ERR_BOUNDS, "%s: %d sets overflow the staging size", fn, n);
    if ((in_region && (st = ensure_stage(p, &p->run.stage_in, (size_t)n * in_region)) != GLC_OK) ||
        (out_region && (st = ensure_stage(p, &p->run.stage_out, (size_t)n * out_region)) != GLC_OK))
        return st;
    /* every set's inputs at once (nothing in flight reads the staging
     * buffer); packed, as upload() packs a run's, into one write of the
     * whole region where it is mostly their bytes (the rest is padding and
     * the slots' unused tails), else a write each */
    for (i = 0; i < p->nin; i++)
        if (p->prog.place[p->in[i].tensor].region != GLC__REGION_NONE &&
            !glc__io_external(&p->in[i]))
            sent += glc__plan_bytes_at(p, p->in[i].tensor, NULL);
    pack = in_region && (size_t)n * in_region <= 2 * (size_t)n * sent + PACK_SLACK;
    if ((st = glc__enter(dev, TOUCH_OF(p), p->max_bind, &gs)) != GLC_OK)
        return st;
    st = glc__plan_bindings_ok(p, fn);
    if (pack && p->run.stage_host_bytes < (size_t)n * in_region) { /* (the device's heap) */
        glc__free(p->run.stage_host);
        p->run.stage_host = glc__calloc((size_t)n * in_region, 1);
        p->run.stage_host_bytes = p->run.stage_host ? (size_t)n * in_region : 0;
        pack = p->run.stage_host != NULL; /* (else a write each: no error) */
    }
    for (k = 0; k < n && st == GLC_OK; k++) {
        size_t off = (size_t)k * in_region;
        for (i = 0; i < p->nin && st == GLC_OK; i++) {
            int32_t id = p->in[i].tensor;
            size_t bytes = glc__plan_bytes_at(p, id, NULL);
            const void *src = inputs[(size_t)k * nin + (size_t)i];
            if (p->prog.place[id].region == GLC__REGION_NONE)
                continue;
            if (!bytes || glc__io_external(&p->in[i]))
                ; /* nothing to send */
            else if (pack)
                memcpy(p->run.stage_host + off, src, bytes);
            else
                st = glc__buffer_write_in(p->run.stage_in, off, bytes, src, fn);
            off += glc__align16(p->prog.place[id].bytes);
        }
    }
    if (pack && st == GLC_OK)
        st = glc__buffer_write_in(p->run.stage_in, 0, (size_t)n * in_region, p->run.stage_host,
                                  fn);
    for (k = 0; k < n && st == GLC_OK; k++) {
        stage_set_in(p, (size_t)k * in_region);
        replay(p, NULL);
        for (j = 0; j < p->nout; j++) {
            size_t bytes = glc__plan_bytes_at(p, p->out[j].tensor, NULL), from;
            glc_buffer *b = glc__plan_storage(p, p->out[j].tensor, &from);
            if (glc__io_external(&p->out[j]))
                continue; /* written where it is bound */
            glc__buffer_host_access(b); /* a copy reads what shaders wrote after this bit */
            if (bytes)
                copy_range(dev, b, from, p->run.stage_out,
                           (size_t)k * out_region + p->out[j].host_off, bytes);
        }
        dev->gl.glFlush(); /* the GPU starts on set k while set k + 1 is encoded */
    }
    if (st == GLC_OK && out_region)
        st = read_sets(p, n, out_region, outputs, fn);
    glc__leave(dev, &gs);
    return st;
}
