/*
 * Buffers (see buffer.h). Uploads bind GL_COPY_WRITE_BUFFER and readbacks
 * GL_COPY_READ_BUFFER: neither is VAO state, and both are saved/restored
 * for an adopted context. GL_OUT_OF_MEMORY on allocation is always checked
 * (allocation is not a hot path) and becomes GLC_ERR_OUT_OF_MEMORY with the
 * GL name deleted again.
 */
#include "buffer.h"

#include "alloc.h"
#include "device.h"
#include "ops.h"

#include <stdint.h>
#include <string.h>

static glc_status shape_bytes(glc_device *dev, const char *fn, glc_dtype dtype, int rank,
                              const int64_t *shape, size_t *bytes)
{
    size_t n;
    int i;
    if (!glc__dtype_block(dtype))
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: dtype %d is not a glc_dtype", fn,
                         (int)dtype);
    if (rank < 1 || rank > GLC_MAX_DIMS || !shape)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: rank %d (need 1..%d and a shape)", fn,
                         rank, GLC_MAX_DIMS);
    for (i = 0; i < rank; i++)
        if (shape[i] < 1)
            return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: shape[%d] = %lld (need >= 1)", fn,
                             i, (long long)shape[i]);
    if ((uint64_t)shape[rank - 1] > (uint64_t)PTRDIFF_MAX / 8)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: shape overflows the address space", fn);
    n = glc_dtype_row_bytes(dtype, shape[rank - 1]);
    if (n == 0)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "%s: the last dim %lld is not a multiple of the %s block (%lld)", fn,
                         (long long)shape[rank - 1], glc_dtype_name(dtype),
                         (long long)glc__dtype_block(dtype));
    for (i = 0; i < rank - 1; i++) {
        if ((uint64_t)shape[i] > (uint64_t)(PTRDIFF_MAX / 2) / n)
            return glc__fail(dev, GLC_ERR_INVALID_ARG, "%s: shape overflows the address space",
                             fn);
        n *= (size_t)shape[i];
    }
    *bytes = n;
    return GLC_OK;
}

static glc_buffer *buffer_new(glc_device *dev, glc_dtype dtype, int rank, const int64_t *shape,
                              size_t bytes)
{
    glc_buffer *b;
    int i;
    glc__use_device(dev); /* before glc__enter: the block is the device's */
    if (!(b = glc__calloc(1, sizeof *b)))
        return NULL;
    b->dev = dev;
    b->id = dev->next_buffer_id++;
    b->dtype = dtype;
    b->rank = rank;
    for (i = 0; i < GLC_MAX_DIMS; i++)
        b->shape[i] = i < rank ? shape[i] : 1;
    b->bytes = bytes;
    b->capacity = (bytes + 3) & ~(size_t)3;
    return b;
}

/* Drains stale errors of our own context so the next check is ours. An
 * adopted context's pending errors belong to the host: leave them. */
static void drain_errors(glc_device *dev)
{
    int i;
    if (dev->adopted)
        return;
    for (i = 0; i < 16 && dev->gl.glGetError() != GL_NO_ERROR; i++)
        ;
}

glc_status glc_buffer_create(glc_device *dev, glc_dtype dtype, int rank, const int64_t *shape,
                             glc_buffer **out)
{
    glc__glstate gs;
    glc_buffer *b;
    size_t bytes;
    GLenum err;
    glc_status st;
    GLC__ARG(NULL, dev);
    GLC__ARG(dev, out);
    st = shape_bytes(dev, "glc_buffer_create", dtype, rank, shape, &bytes);
    if (st != GLC_OK)
        return st;
    b = buffer_new(dev, dtype, rank, shape, bytes);
    if (!b)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "glc_buffer_create: out of memory");
    st = glc__enter(dev, GLC__TOUCH_COPY, 0, &gs);
    if (st != GLC_OK) {
        glc__free(b);
        return st;
    }
    drain_errors(dev);
    dev->gl.glGenBuffers(1, &b->name);
    dev->gl.glBindBuffer(GL_COPY_WRITE_BUFFER, b->name);
    dev->gl.glBufferData(GL_COPY_WRITE_BUFFER, (GLsizeiptr)b->capacity, NULL, GL_DYNAMIC_COPY);
    if (dev->adopted) {
        /* glGetError would take the host's pending error for ours (and
         * swallow it): ask the buffer for its size instead */
        GLint64 got = 0;
        dev->gl.glGetBufferParameteri64v(GL_COPY_WRITE_BUFFER, GL_BUFFER_SIZE, &got);
        err = got == (GLint64)b->capacity ? GL_NO_ERROR : GL_OUT_OF_MEMORY;
    } else {
        err = dev->gl.glGetError();
    }
    if (err != GL_NO_ERROR) {
        dev->gl.glDeleteBuffers(1, &b->name);
        glc__leave(dev, &gs);
        glc__free(b);
        if (err == GL_OUT_OF_MEMORY)
            return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY,
                             "glc_buffer_create: the driver could not allocate %zu bytes",
                             bytes);
        return glc__fail(dev, GLC_ERR_GL, "glc_buffer_create: %zu bytes: GL error 0x%04x",
                         bytes, err);
    }
    glc__leave(dev, &gs);
    dev->live_objects++;
    *out = b;
    return GLC_OK;
}

glc_status glc_buffer_wrap_gl(glc_device *dev, uint32_t gl_buffer, glc_dtype dtype, int rank,
                              const int64_t *shape, glc_buffer **out)
{
    glc__glstate gs;
    glc_buffer *b;
    GLint64 gl_size = 0;
    size_t bytes;
    glc_status st;
    GLC__ARG(NULL, dev);
    GLC__ARG(dev, out && gl_buffer != 0);
    st = shape_bytes(dev, "glc_buffer_wrap_gl", dtype, rank, shape, &bytes);
    if (st != GLC_OK)
        return st;
    st = glc__enter(dev, GLC__TOUCH_COPY, 0, &gs);
    if (st != GLC_OK)
        return st;
    if (!dev->gl.glIsBuffer(gl_buffer)) {
        glc__leave(dev, &gs);
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "glc_buffer_wrap_gl: %u is not a buffer of this context", gl_buffer);
    }
    dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, gl_buffer);
    dev->gl.glGetBufferParameteri64v(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, &gl_size);
    glc__leave(dev, &gs);
    if (gl_size < 0 || (uint64_t)gl_size < bytes)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "glc_buffer_wrap_gl: shape needs %zu bytes, GL buffer %u has %lld",
                         bytes, gl_buffer, (long long)gl_size);
    b = buffer_new(dev, dtype, rank, shape, bytes);
    if (!b)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "glc_buffer_wrap_gl: out of memory");
    b->name = gl_buffer;
    b->wrapped = 1;
    b->capacity = (uint64_t)gl_size < b->capacity ? bytes : b->capacity;
    dev->live_objects++;
    *out = b;
    return GLC_OK;
}

static glc_status check_range(glc_buffer *buf, const char *fn, size_t offset, size_t size,
                              const void *data)
{
    if (!data)
        return glc__fail(buf->dev, GLC_ERR_INVALID_ARG, "%s: data is NULL", fn);
    if (offset > buf->bytes || size > buf->bytes - offset)
        return glc__fail(buf->dev, GLC_ERR_BOUNDS,
                         "%s: bytes [%zu, %zu + %zu) outside the buffer's %zu bytes", fn,
                         offset, offset, size, buf->bytes);
    return GLC_OK;
}

void glc__buffer_host_access(glc_buffer *buf)
{
    glc__enc_host_access(buf->dev, buf->write_seq);
}

glc_status glc_buffer_write(glc_buffer *buf, size_t offset, size_t size, const void *data)
{
    glc__glstate gs;
    glc_status st;
    GLC__ARG(NULL, buf);
    st = check_range(buf, "glc_buffer_write", offset, size, data);
    if (st != GLC_OK || size == 0)
        return st;
    st = glc__enter(buf->dev, GLC__TOUCH_COPY, 0, &gs);
    if (st != GLC_OK)
        return st;
    st = glc__buffer_write_in(buf, offset, size, data, "glc_buffer_write");
    glc__leave(buf->dev, &gs);
    return st;
}

/* size bytes at offset of the buffer bound to GL_COPY_READ_BUFFER, read
 * into to through a mapping */
static glc_status mapped_read(glc_device *dev, size_t offset, size_t size, void *to,
                              const char *fn)
{
    void *p = dev->gl.glMapBufferRange(GL_COPY_READ_BUFFER, (GLintptr)offset, (GLsizeiptr)size,
                                       GL_MAP_READ_BIT);
    if (!p) {
        GLenum err = dev->gl.glGetError();
        return glc__fail(dev, err == GL_OUT_OF_MEMORY ? GLC_ERR_OUT_OF_MEMORY : GLC_ERR_GL,
                         "%s: glMapBufferRange failed (GL error 0x%04x)", fn, err);
    }
    memcpy(to, p, size);
    if (!dev->gl.glUnmapBuffer(GL_COPY_READ_BUFFER))
        return glc__fail(dev, GLC_ERR_GL, "%s: buffer contents were lost while mapped", fn);
    return GLC_OK;
}

/* glBufferSubData of size bytes at offset; on NVIDIA's drivers after a
 * glFinish when it follows another write (below) */
static glc_status sub_data(glc_device *dev, glc_buffer *buf, size_t offset, size_t size,
                           const void *data, const char *fn)
{
    if (dev->write_waits && dev->wrote_last)
        dev->gl.glFinish();
    dev->wrote_last = 1;
    dev->gl.glBindBuffer(GL_COPY_WRITE_BUFFER, buf->name);
    dev->gl.glBufferSubData(GL_COPY_WRITE_BUFFER, (GLintptr)offset, (GLsizeiptr)size, data);
    return glc__check_gl(dev, fn);
}

/* The word at `at` (a multiple of 4) with bytes [from, to) of it taken
 * from src (src's byte `from` first): the others read back first (a mapped
 * read, which waits for what is pending), then the whole word written */
static glc_status patch_word(glc_buffer *buf, size_t at, size_t from, size_t to,
                             const unsigned char *src, const char *fn)
{
    unsigned char w[4];
    glc_status st;
    buf->dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, buf->name);
    if ((st = mapped_read(buf->dev, at, 4, w, fn)) != GLC_OK)
        return st;
    memcpy(w + (from - at), src, to - from);
    return sub_data(buf->dev, buf, at, 4, w, fn);
}

/* Every write goes to GL as whole words, and on NVIDIA's drivers after a
 * glFinish when it follows another write with no dispatch between
 * (dev->write_waits: NVIDIA in GL_VENDOR or GL_RENDERER; dev->wrote_last).
 * Two facts of NVIDIA's driver (580, the H100, GL_DYNAMIC_COPY buffers),
 * both measured (bench/RESULTS.md, eleventh to thirteenth sessions), their
 * mechanism not known:
 *  - an earlier glBufferSubData of whole words could land after a later
 *    one of odd offset or size to the same bytes (the later write lost,
 *    for the GPU's reads too): so an odd write goes as its whole words
 *    (one glBufferSubData, straight from data) and the words at its ends,
 *    their other bytes read back first (patch_word), allocating nothing (a
 *    plan's run writes its inputs here);
 *  - even so, random graphs with f16 inputs of a variable length read the
 *    values of the run before at a shorter length (test_fuse_random: 39 of
 *    40 seeds failed there; writes in whole 16- or 64-byte blocks failed
 *    as often); with a glFinish before each write all 40 passed. Nothing
 *    cheaper held (thirteenth session: a glFinish only before writes over
 *    bytes written since the last one, a glFlush, a
 *    GL_BUFFER_UPDATE_BARRIER_BIT barrier: each failed 39-60 of 40-60
 *    seeds): after a glFinish, two writes in a row to disjoint bytes of
 *    one buffer lost one. Once a plan's run packed its inputs into one
 *    write (plan_run.c's upload), the same seeds, test_plan_exec and
 *    test_llama_gguf passed with no wait at all: a write, the run's
 *    dispatches, its read-back, the next run's write. So the wait goes
 *    only between writes in a row (parameter and handle uploads, inputs
 *    too spread to pack; on an adopted context the first of each call, the
 *    application's own work before it not known): the decode writes
 *    without one. Mesa's drivers showed neither fault and do not wait.
 * A wrapped GL buffer whose size ends mid-word takes the odd
 * glBufferSubData as it is. */
glc_status glc__buffer_write_in(glc_buffer *buf, size_t offset, size_t size, const void *data,
                                const char *fn)
{
    glc_device *dev = buf->dev;
    const unsigned char *src = data;
    size_t end = offset + size, mid0 = (offset + 3) & ~(size_t)3, mid1 = end & ~(size_t)3;
    glc_status st = GLC_OK;
    glc__buffer_host_access(buf);
    if ((offset % 4 == 0 && size % 4 == 0) || ((end + 3) & ~(size_t)3) > buf->capacity)
        return sub_data(dev, buf, offset, size, data, fn);
    if (mid0 > mid1) /* inside one word */
        return patch_word(buf, mid1, offset, end, src, fn);
    if (mid1 > mid0)
        st = sub_data(dev, buf, mid0, mid1 - mid0, src + (mid0 - offset), fn);
    if (st == GLC_OK && offset != mid0)
        st = patch_word(buf, mid0 - 4, offset, mid0, src, fn);
    if (st == GLC_OK && end != mid1)
        st = patch_word(buf, mid1, mid1, end, src + (mid1 - offset), fn);
    return st;
}

glc_status glc_buffer_read(glc_buffer *buf, size_t offset, size_t size, void *data)
{
    glc__glstate gs;
    glc_device *dev;
    glc_status st;
    GLC__ARG(NULL, buf);
    dev = buf->dev;
    st = check_range(buf, "glc_buffer_read", offset, size, data);
    if (st != GLC_OK || size == 0)
        return st;
    st = glc__enter(dev, GLC__TOUCH_COPY, 0, &gs);
    if (st != GLC_OK)
        return st;
    st = glc__buffer_read_in(buf, offset, size, data, "glc_buffer_read");
    glc__leave(dev, &gs);
    return st;
}

glc_status glc__buffer_read_in(glc_buffer *buf, size_t offset, size_t size, void *data,
                               const char *fn)
{
    glc__buffer_host_access(buf);
    buf->dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, buf->name);
    return mapped_read(buf->dev, offset, size, data, fn);
}

size_t glc_buffer_size(const glc_buffer *buf) { return buf ? buf->bytes : 0; }
glc_dtype glc_buffer_dtype(const glc_buffer *buf) { return buf ? buf->dtype : (glc_dtype)0; }
uint32_t glc_buffer_gl_name(const glc_buffer *buf) { return buf ? buf->name : 0; }

int glc_buffer_shape(const glc_buffer *buf, int64_t shape[GLC_MAX_DIMS])
{
    int i;
    if (!buf || !shape)
        return 0;
    for (i = 0; i < GLC_MAX_DIMS; i++)
        shape[i] = buf->shape[i];
    return buf->rank;
}

void glc__buffer_hold(glc_buffer *buf, int delta)
{
    buf->binds += delta;
    if (buf->binds == 0 && buf->destroyed) {
        buf->destroyed = 0;
        glc_buffer_destroy(buf);
    }
}

void glc_buffer_destroy(glc_buffer *buf)
{
    glc__glstate gs;
    glc_device *dev;
    int shows;
    if (!buf)
        return;
    if (buf->binds > 0) { /* a plan reads or writes it: freed at its unbinding */
        buf->destroyed = 1;
        return;
    }
    dev = buf->dev;
    shows = glc__enc_shows_texel(dev, buf->id); /* (a wrapped one's too: it holds the storage) */
    if ((!buf->wrapped || shows) && glc__enter(dev, 0, 0, &gs) == GLC_OK) {
        if (shows)
            glc__enc_drop_texel(dev, buf->id);
        if (!buf->wrapped)
            dev->gl.glDeleteBuffers(1, &buf->name);
        glc__leave(dev, &gs);
    }
    dev->live_objects--;
    glc__free(buf);
}
