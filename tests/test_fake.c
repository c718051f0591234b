/*
 * The recording fake GL table: a device over fake entry points records
 * every GL call, so the exact order of uploads, barriers and dispatches is
 * asserted without a GPU. Shows: reads issue GL_BUFFER_UPDATE_BARRIER_BIT
 * only after a shader write; dependent dispatches get one
 * GL_SHADER_STORAGE_BARRIER_BIT, independent ones none; GLC_BARRIERS=always
 * puts one between every two; a texel binding's read of a shader's write
 * gets GL_TEXTURE_FETCH_BARRIER_BIT with the storage bit.
 */
#include "testutil.h"

#include "buffer.h"
#include "device.h"
#include "fakegl.h"

static char calls[16384];
static unsigned char mapped[1 << 16];

static void rec(const char *fmt, ...)
{
    size_t used = strlen(calls);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(calls + used, sizeof calls - used, fmt, ap);
    va_end(ap);
    used = strlen(calls);
    snprintf(calls + used, sizeof calls - used, " ");
}

static void GL_APIENTRY f_DeleteBuffers(GLsizei n, const GLuint *b) { (void)n; rec("del(%u)", *b); }
static void GL_APIENTRY f_BufferData(GLenum t, GLsizeiptr s, const void *d, GLenum u)
{
    (void)t; (void)d; (void)u;
    rec("data(%ld)", (long)s);
}
static void GL_APIENTRY f_BufferSubData(GLenum t, GLintptr o, GLsizeiptr s, const void *d)
{
    (void)t; (void)d;
    rec("sub(%ld,%ld)", (long)o, (long)s);
}
static void *GL_APIENTRY f_MapBufferRange(GLenum t, GLintptr o, GLsizeiptr l, GLbitfield a)
{
    (void)t; (void)a;
    rec("map(%ld,%ld)", (long)o, (long)l);
    return mapped;
}
static void GL_APIENTRY f_UseProgram(GLuint p) { rec("use(%u)", p); }
static void GL_APIENTRY f_BindBufferRange(GLenum t, GLuint i, GLuint b, GLintptr o, GLsizeiptr s)
{
    rec("%s%u(%u,%ld,%ld)", t == GL_UNIFORM_BUFFER ? "ubo" : "bind", i, b, (long)o, (long)s);
}
static void GL_APIENTRY f_DispatchIndirect(GLintptr o) { rec("indirect(%ld)", (long)o); }
static GLenum wait_result = GL_ALREADY_SIGNALED;
static void GL_APIENTRY f_DispatchCompute(GLuint x, GLuint y, GLuint z) { rec("dispatch(%u,%u,%u)", x, y, z); }
static void GL_APIENTRY f_MemoryBarrier(GLbitfield b)
{
    char bits[64] = "";
    if (b & GL_SHADER_STORAGE_BARRIER_BIT)
        strcat(bits, "|ssbo");
    if (b & GL_UNIFORM_BARRIER_BIT)
        strcat(bits, "|uniform");
    if (b & GL_COMMAND_BARRIER_BIT)
        strcat(bits, "|command");
    if (b & GL_BUFFER_UPDATE_BARRIER_BIT)
        strcat(bits, "|update");
    if (b & GL_TEXTURE_FETCH_BARRIER_BIT)
        strcat(bits, "|fetch");
    rec("BARRIER(%s)", bits + 1);
}
static void GL_APIENTRY f_Flush(void) { rec("flush"); }
static void GL_APIENTRY f_Finish(void) { rec("finish"); }
static void GL_APIENTRY f_ActiveTexture(GLenum u) { rec("unit%u", u - GL_TEXTURE0); }
static void GL_APIENTRY f_TexBufferRange(GLenum t, GLenum f, GLuint b, GLintptr o, GLsizeiptr s)
{
    (void)t;
    rec("tex%s(%u,%ld,%ld)", f == GL_RGBA32F ? "" : f == GL_RGBA32UI ? "u" : "?", b, (long)o,
        (long)s);
}
static GLsync GL_APIENTRY f_FenceSync(GLenum c, GLbitfield f)
{
    (void)c; (void)f;
    rec("fence");
    return (GLsync)mapped;
}
static GLenum GL_APIENTRY f_ClientWaitSync(GLsync s, GLbitfield f, GLuint64 t)
{
    (void)s; (void)f; (void)t;
    rec("wait");
    return wait_result;
}

static glc_device *fake_device(void)
{
    glc__gl gl;
    glc_device_limits lim;
    glc_device *dev;
    fakegl_fill(&gl); /* silent; the calls whose order the tests assert are recorded */
    gl.glDeleteBuffers = f_DeleteBuffers;
    gl.glBufferData = f_BufferData;
    gl.glBufferSubData = f_BufferSubData;
    gl.glMapBufferRange = f_MapBufferRange;
    gl.glUseProgram = f_UseProgram;
    gl.glBindBufferRange = f_BindBufferRange;
    gl.glDispatchCompute = f_DispatchCompute;
    gl.glDispatchComputeIndirect = f_DispatchIndirect;
    gl.glMemoryBarrier = f_MemoryBarrier;
    gl.glFlush = f_Flush;
    gl.glFinish = f_Finish;
    gl.glActiveTexture = f_ActiveTexture;
    gl.glTexBufferRangeOES = f_TexBufferRange;
    gl.glFenceSync = f_FenceSync;
    gl.glClientWaitSync = f_ClientWaitSync;
    memset(&lim, 0, sizeof lim);
    lim.max_group_count[0] = lim.max_group_count[1] = lim.max_group_count[2] = 65535;
    lim.max_group_size[0] = 1024;
    lim.max_invocations = 1024;
    lim.max_ssbo_blocks = 8;
    lim.max_ssbo_bindings = 8;
    lim.max_ssbo_size = 1u << 27;
    lim.ssbo_offset_alignment = 16;
    lim.max_uniform_block_size = 16384;
    lim.uniform_offset_alignment = 256;
    assert_int_equal(glc__device_create_fake(&gl, &lim, &dev), GLC_OK);
    calls[0] = '\0';
    fakegl_next_name = 1;
    return dev;
}

/* One fill-kernel dispatch per entry, each writing `bytes` at `offset`. */
static void dispatch_writes(glc_device *dev, glc_buffer *b, const size_t *offsets, int n,
                            size_t bytes)
{
    glc_kernel *k;
    glc_session *s;
    glc_binding bind = {NULL, 0, 0, GLC_WRITE, GLC_BIND_STORAGE};
    glc_dispatch_desc d;
    uint32_t p[3] = {4, 0, 0};
    int i;
    assert_int_equal(glc__kernel_get(dev, "fill", NULL, 64, &k), GLC_OK);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    memset(&d, 0, sizeof d);
    d.kernel = k;
    d.groups = 1;
    d.bindings = &bind;
    d.binding_count = 1;
    d.params = p;
    d.param_count = 3;
    bind.buffer = b;
    bind.size = bytes;
    for (i = 0; i < n; i++) {
        bind.offset = offsets[i];
        assert_int_equal(glc_session_dispatch(s, &d), GLC_OK);
    }
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
}

static void test_upload_and_read_barriers(void **state)
{
    glc_device *dev = fake_device();
    glc_buffer *b;
    int64_t n = 64;
    unsigned char x[16];
    size_t off0 = 0, off80 = 80;
    (void)state;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b), GLC_OK);
    assert_int_equal(glc_buffer_write(b, 16, 16, x), GLC_OK);
    assert_int_equal(glc_buffer_read(b, 0, 16, x), GLC_OK);
    /* no shader wrote it: no barrier before the read */
    assert_string_equal(calls, "data(256) sub(16,16) map(0,16) ");
    /* on NVIDIA's drivers a write that follows another waits for the GPU
     * first (buffer.c): the whole-word write (after the one above), the
     * odd one's words and the patch of its end word; after a dispatch the
     * next write goes at once, the one after it waits again */
    dev->write_waits = 1;
    calls[0] = '\0';
    assert_int_equal(glc_buffer_write(b, 16, 16, x), GLC_OK);
    assert_int_equal(glc_buffer_write(b, 32, 6, x), GLC_OK);
    assert_string_equal(calls, "finish sub(16,16) finish sub(32,4) map(36,4) finish sub(36,4) ");
    dispatch_writes(dev, b, &off80, 1, 16);
    calls[0] = '\0';
    assert_int_equal(glc_buffer_write(b, 48, 16, x), GLC_OK);
    assert_int_equal(glc_buffer_write(b, 64, 16, x), GLC_OK);
    assert_string_equal(calls, "BARRIER(update) sub(48,16) finish sub(64,16) ");
    dev->write_waits = 0;
    calls[0] = '\0';
    dispatch_writes(dev, b, &off0, 1, 16);
    assert_int_equal(glc_buffer_read(b, 0, 16, x), GLC_OK);
    assert_int_equal(glc_buffer_read(b, 0, 16, x), GLC_OK);
    assert_string_equal(calls, "use(3) bind0(1,0,16) dispatch(1,1,1) fence flush wait "
                               "BARRIER(update) map(0,16) map(0,16) ");
    glc_buffer_destroy(b);
    glc_device_destroy(dev);
}

static void test_dispatch_barriers(void **state)
{
    glc_device *dev = fake_device();
    glc_buffer *b;
    int64_t n = 64;
    const size_t disjoint[3] = {0, 16, 32}, same[2] = {64, 64};
    (void)state;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b), GLC_OK);
    calls[0] = '\0';
    dispatch_writes(dev, b, disjoint, 3, 16); /* three disjoint slices: no barrier */
    assert_null(strstr(calls, "BARRIER"));
    calls[0] = '\0';
    dispatch_writes(dev, b, same, 2, 16); /* WAW on the same bytes: one */
    assert_string_equal(calls, "use(3) bind0(1,64,16) dispatch(1,1,1) BARRIER(ssbo) use(3) "
                               "bind0(1,64,16) dispatch(1,1,1) fence flush wait ");
    dev->barrier_policy = GLC__BARRIERS_ALWAYS; /* GLC_BARRIERS=always at creation */
    calls[0] = '\0';
    dispatch_writes(dev, b, disjoint, 3, 16);
    dev->barrier_policy = GLC__BARRIERS_TRACKED;
    /* the first one too: the last session's dispatch came before it */
    assert_string_equal(calls, "BARRIER(ssbo) use(3) bind0(1,0,16) dispatch(1,1,1) BARRIER(ssbo) "
                               "use(3) bind0(1,16,16) dispatch(1,1,1) BARRIER(ssbo) use(3) "
                               "bind0(1,32,16) dispatch(1,1,1) fence flush wait ");
    /* tracked again: a dependency on the previous session's last write */
    calls[0] = '\0';
    dispatch_writes(dev, b, &disjoint[2], 1, 16);
    assert_string_equal(calls, "BARRIER(ssbo) use(3) bind0(1,32,16) dispatch(1,1,1) fence flush wait ");
    glc_buffer_destroy(b);
    glc_device_destroy(dev);
}


/* ---- sessions: the exact barrier stream ---- */

typedef struct access_spec {
    glc_buffer *buf;
    size_t offset, size;
    glc_access access;
    glc_binding_kind kind;
} access_spec;

/* One dispatch of the fill kernel (its GLSL does not matter to the fake)
 * with the given bindings. */
static void run1(glc_session *s, glc_kernel *k, const access_spec *a, int n, const char *label)
{
    glc_binding b[8];
    glc_dispatch_desc d;
    uint32_t p[3] = {1, 0, 0};
    int i;
    for (i = 0; i < n; i++) {
        b[i].buffer = a[i].buf;
        b[i].offset = a[i].offset;
        b[i].size = a[i].size;
        b[i].access = a[i].access;
        b[i].kind = a[i].kind;
    }
    memset(&d, 0, sizeof d);
    d.kernel = k;
    d.groups = 1;
    d.bindings = b;
    d.binding_count = n;
    d.params = p;
    d.param_count = 3;
    d.label = label;
    assert_int_equal(glc_session_dispatch(s, &d), GLC_OK);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (; (hay = strstr(hay, needle)) != NULL; hay++)
        n++;
    return n;
}

typedef struct fixture {
    glc_device *dev;
    glc_kernel *k;
    glc_buffer *x, *y, *z, *w;
} fixture;

static void fixture_open(fixture *f)
{
    int64_t n = 256;
    f->dev = fake_device(); /* GL names: buffers x=1 y=2 z=3 w=4, program 6 */
    assert_int_equal(glc_buffer_create(f->dev, GLC_DTYPE_U32, 1, &n, &f->x), GLC_OK);
    assert_int_equal(glc_buffer_create(f->dev, GLC_DTYPE_U32, 1, &n, &f->y), GLC_OK);
    assert_int_equal(glc_buffer_create(f->dev, GLC_DTYPE_U32, 1, &n, &f->z), GLC_OK);
    assert_int_equal(glc_buffer_create(f->dev, GLC_DTYPE_U32, 1, &n, &f->w), GLC_OK);
    assert_int_equal(glc__kernel_get(f->dev, "fill", NULL, 64, &f->k), GLC_OK);
    calls[0] = '\0';
}

static void fixture_close(fixture *f)
{
    glc_buffer_destroy(f->x);
    glc_buffer_destroy(f->y);
    glc_buffer_destroy(f->z);
    glc_buffer_destroy(f->w);
    glc_device_destroy(f->dev);
}

#define R(b) {(b), 0, 0, GLC_READ, GLC_BIND_STORAGE}
#define W(b) {(b), 0, 0, GLC_WRITE, GLC_BIND_STORAGE}
#define RW(b) {(b), 0, 0, GLC_READ_WRITE, GLC_BIND_STORAGE}

static void test_barrier_counts(void **state)
{
    fixture f;
    glc_session *s;
    glc_dispatch_stats st;
    (void)state;
    fixture_open(&f);
    assert_int_equal(glc_session_begin(f.dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    { /* independent branches: each reads x, writes its own buffer: 0 */
        access_spec a[2] = {R(f.x), W(f.y)}, b[2] = {R(f.x), W(f.z)}, c[2] = {R(f.x), W(f.w)};
        run1(s, f.k, a, 2, "a");
        run1(s, f.k, b, 2, "b");
        run1(s, f.k, c, 2, "c");
        assert_int_equal(glc_session_barrier_count(s), 0);
    }
    assert_int_equal(glc_session_barrier(s), GLC_OK);
    assert_int_equal(glc_session_barrier_count(s), 1);
    tu_assert_contains(calls, "BARRIER(ssbo|uniform|command)");
    { /* chain x -> y -> z -> w: one per link */
        access_spec a[1] = {W(f.x)}, b[2] = {R(f.x), W(f.y)}, c[2] = {R(f.y), W(f.z)},
                    d[2] = {R(f.z), W(f.w)};
        calls[0] = '\0';
        run1(s, f.k, a, 1, "a");
        run1(s, f.k, b, 2, "b");
        run1(s, f.k, c, 2, "c");
        run1(s, f.k, d, 2, "d");
        assert_int_equal(count(calls, "BARRIER(ssbo)"), 3);
    }
    assert_int_equal(glc_session_barrier(s), GLC_OK);
    { /* diamond: A writes x; B x->y; C x->z; D y,z->w: 2 */
        access_spec a[1] = {W(f.x)}, b[2] = {R(f.x), W(f.y)}, c[2] = {R(f.x), W(f.z)},
                    d[3] = {R(f.y), R(f.z), W(f.w)};
        calls[0] = '\0';
        run1(s, f.k, a, 1, "A");
        run1(s, f.k, b, 2, "B");
        run1(s, f.k, c, 2, "C");
        run1(s, f.k, d, 3, "D");
        assert_string_equal(calls,
                            "use(6) bind0(1,0,1024) dispatch(1,1,1) BARRIER(ssbo) "
                            "use(6) bind0(1,0,1024) bind1(2,0,1024) dispatch(1,1,1) "
                            "use(6) bind0(1,0,1024) bind1(3,0,1024) dispatch(1,1,1) BARRIER(ssbo) "
                            "use(6) bind0(2,0,1024) bind1(3,0,1024) bind2(4,0,1024) "
                            "dispatch(1,1,1) ");
    }
    assert_int_equal(glc_session_barrier(s), GLC_OK);
    { /* in place twice on the same bytes: 1; disjoint slices of one buffer: 0 */
        access_spec a[1] = {RW(f.x)}, s0[1] = {{f.y, 0, 256, GLC_WRITE, GLC_BIND_STORAGE}},
                    s1[1] = {{f.y, 256, 256, GLC_WRITE, GLC_BIND_STORAGE}},
                    s2[1] = {{f.y, 512, 512, GLC_READ_WRITE, GLC_BIND_STORAGE}};
        calls[0] = '\0';
        run1(s, f.k, a, 1, "in-place");
        run1(s, f.k, a, 1, "in-place");
        assert_int_equal(count(calls, "BARRIER"), 1);
        calls[0] = '\0';
        run1(s, f.k, s0, 1, "slice0");
        run1(s, f.k, s1, 1, "slice1");
        run1(s, f.k, s2, 1, "slice2");
        assert_int_equal(count(calls, "BARRIER"), 0);
    }
    assert_int_equal(glc_session_finish(s, &st), GLC_OK);
    assert_int_equal(st.dispatches, 16);
    assert_int_equal(st.barriers, 3 + 3 + 2 + 1);
    assert_int_equal(st.group_histogram[0], 16); /* every dispatch had 1 group */
    assert_true(st.encode_ns >= st.tracker_ns);
    fixture_close(&f);
}

static void test_uniform_and_command_bits(void **state)
{
    fixture f;
    glc_session *s;
    glc_dispatch_desc d;
    glc_binding b = {NULL, 0, 0, GLC_READ, GLC_BIND_STORAGE};
    uint32_t p[3] = {1, 0, 0};
    (void)state;
    fixture_open(&f);
    assert_int_equal(glc_session_begin(f.dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    {
        access_spec wx[1] = {W(f.x)}, ux[2] = {{f.x, 0, 256, GLC_READ, GLC_BIND_UNIFORM}, W(f.y)};
        run1(s, f.k, wx, 1, "write x");
        run1(s, f.k, ux, 2, "x as uniforms");
        /* a storage read would need no storage barrier here (x read only as
         * uniforms), but the uniform read needs the uniform bit */
        assert_string_equal(calls, "use(6) bind0(1,0,1024) dispatch(1,1,1) "
                                   "BARRIER(ssbo|uniform) use(6) ubo0(1,0,256) bind0(2,0,1024) "
                                   "dispatch(1,1,1) ");
        calls[0] = '\0';
        run1(s, f.k, ux, 2, "again"); /* x unchanged since: no uniform bit; y WAW: ssbo */
        assert_string_equal(calls, "BARRIER(ssbo) use(6) ubo0(1,0,256) bind0(2,0,1024) "
                                   "dispatch(1,1,1) ");
    }
    { /* indirect counts written by a shader, then consumed */
        access_spec wz[1] = {W(f.z)};
        calls[0] = '\0';
        run1(s, f.k, wz, 1, "write counts");
        memset(&d, 0, sizeof d);
        d.kernel = f.k;
        d.bindings = &b;
        b.buffer = f.w;
        d.binding_count = 1;
        d.params = p;
        d.param_count = 3;
        d.indirect = f.z;
        d.indirect_offset = 12;
        assert_int_equal(glc_session_dispatch(s, &d), GLC_OK);
        assert_string_equal(calls, "use(6) bind0(3,0,1024) dispatch(1,1,1) "
                                   "BARRIER(ssbo|command) use(6) bind0(4,0,1024) indirect(12) ");
        d.indirect_offset = 1020; /* 12 bytes do not fit */
        assert_int_equal(glc_session_dispatch(s, &d), GLC_ERR_BOUNDS);
        tu_assert_contains(glc_device_errmsg(f.dev), "indirect counts at byte 1020");
    }
    {
        access_spec bad[1] = {{f.x, 0, 256, GLC_READ_WRITE, GLC_BIND_UNIFORM}};
        glc_binding bb = {f.x, 0, 256, GLC_READ_WRITE, GLC_BIND_UNIFORM};
        (void)bad;
        d.indirect = NULL;
        d.groups = 1;
        d.bindings = &bb;
        assert_int_equal(glc_session_dispatch(s, &d), GLC_ERR_INVALID_ARG);
        tu_assert_contains(glc_device_errmsg(f.dev), "a uniform block is read only");
        /* a storage-legal offset (16) that the uniform alignment (256) is not */
        bb.access = GLC_READ;
        bb.offset = 16;
        assert_int_equal(glc_session_dispatch(s, &d), GLC_ERR_BOUNDS);
        tu_assert_contains(glc_device_errmsg(f.dev), "uniform offset alignment 256");
    }
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    fixture_close(&f);
}

/* A buffer a shader wrote, read through a buffer texture (GLC_BIND_TEXEL):
 * the storage barrier carries GL_TEXTURE_FETCH_BARRIER_BIT; the unit gets
 * the range as RGBA32F texels once, and the next dispatch of the same
 * range binds the unit's texture again (a call's bindings are forgotten
 * at the next call) but gives it no range. */
static void test_texel_fetch_bit(void **state)
{
    fixture f;
    glc_session *s;
    (void)state;
    fixture_open(&f);
    f.dev->info.features.texel_buffers = 1; /* (the fake's limits have none) */
    f.dev->info.limits.max_texel_buffer_size = 1u << 20;
    assert_int_equal(glc_session_begin(f.dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    {
        access_spec wx[1] = {W(f.x)}, tx[2] = {{f.x, 0, 256, GLC_READ, GLC_BIND_TEXEL}, W(f.y)};
        run1(s, f.k, wx, 1, "write x");
        run1(s, f.k, tx, 2, "x as texels");
        assert_string_equal(calls, "use(6) bind0(1,0,1024) dispatch(1,1,1) "
                                   "BARRIER(ssbo|fetch) use(6) unit0 tex(1,0,256) "
                                   "bind0(2,0,1024) unit0 dispatch(1,1,1) ");
        calls[0] = '\0';
        run1(s, f.k, tx, 2, "again"); /* y WAW: a barrier; the texture as it was */
        assert_string_equal(calls, "BARRIER(ssbo|fetch) use(6) unit0 bind0(2,0,1024) unit0 "
                                   "dispatch(1,1,1) ");
        /* the same range as RGBA32UI texels: the unit's texture takes the
         * format (a texture keyed by range alone would keep RGBA32F) */
        calls[0] = '\0';
        tx[0].kind = GLC_BIND_TEXEL_UINT;
        run1(s, f.k, tx, 2, "x as words");
        assert_string_equal(calls, "BARRIER(ssbo|fetch) use(6) unit0 texu(1,0,256) "
                                   "bind0(2,0,1024) unit0 dispatch(1,1,1) ");
    }
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    fixture_close(&f);
}

static void test_manual_barriers(void **state)
{
    fixture f;
    glc_session *s;
    glc_binding rx = {NULL, 0, 0, GLC_READ, GLC_BIND_STORAGE}, wy = rx;
    int emitted = -1;
    (void)state;
    fixture_open(&f);
    rx.buffer = f.x;
    wy.buffer = f.y;
    assert_int_equal(glc_session_begin(f.dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    /* a dispatch made outside the session writes y */
    assert_int_equal(glc_session_track_dispatch(s, &rx, 1, &wy, 1), GLC_OK);
    assert_string_equal(calls, "");
    assert_int_equal(glc_session_barrier_between(s, &rx, 1, NULL, 0, &emitted), GLC_OK);
    assert_int_equal(emitted, 0); /* reading x after a read of x: nothing */
    assert_int_equal(glc_session_barrier_between(s, &wy, 1, NULL, 0, &emitted), GLC_OK);
    assert_int_equal(emitted, 1); /* reading y after the write: a barrier */
    assert_string_equal(calls, "BARRIER(ssbo) ");
    assert_int_equal(glc_session_barrier_between(s, &wy, 1, NULL, 0, &emitted), GLC_OK);
    assert_int_equal(emitted, 0);
    /* the tracked write also makes a host read issue the update bit */
    {
        unsigned char x[4];
        calls[0] = '\0';
        assert_int_equal(glc_buffer_read(f.y, 0, 4, x), GLC_OK);
        assert_string_equal(calls, "BARRIER(update) map(0,4) ");
    }
    assert_int_equal(glc_session_track_dispatch(s, &rx, -1, NULL, 0), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    fixture_close(&f);
}

static void test_recorded_reorder(void **state)
{
    fixture f;
    glc_session *s;
    access_spec a[1], b[2], c[1], d[2];
    (void)state;
    fixture_open(&f);
    a[0] = (access_spec)W(f.x);
    b[0] = (access_spec)R(f.x);
    b[1] = (access_spec)W(f.y);
    c[0] = (access_spec)W(f.z);
    d[0] = (access_spec)R(f.z);
    d[1] = (access_spec)W(f.w);
    /* A: x; B: x->y; C: z; D: z->w. In order that is A | B C | D (2
     * barriers); recorded, C is pulled up beside A: A C | B D (1). */
    assert_int_equal(glc_session_begin(f.dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    run1(s, f.k, a, 1, "A");
    run1(s, f.k, b, 2, "B");
    run1(s, f.k, c, 1, "C");
    run1(s, f.k, d, 2, "D");
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    assert_int_equal(count(calls, "BARRIER"), 2);
    glc_session_begin(f.dev, GLC_SESSION_RECORDED, &s);
    assert_int_equal(glc_session_barrier(s), GLC_OK);
    calls[0] = '\0';
    run1(s, f.k, a, 1, "A");
    run1(s, f.k, b, 2, "B");
    run1(s, f.k, c, 1, "C");
    run1(s, f.k, d, 2, "D");
    assert_string_equal(calls, ""); /* recorded: nothing encoded yet */
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    /* one program for all four: bound once; a binding is set only where
     * it differs from the last dispatch's */
    assert_string_equal(calls, "use(6) bind0(1,0,1024) dispatch(1,1,1) "
                               "bind0(3,0,1024) dispatch(1,1,1) BARRIER(ssbo) "
                               "bind0(1,0,1024) bind1(2,0,1024) dispatch(1,1,1) "
                               "bind0(3,0,1024) bind1(4,0,1024) dispatch(1,1,1) "
                               "fence flush wait ");
    fixture_close(&f);
}

static void test_fence_timeout(void **state)
{
    fixture f;
    glc_session *s;
    glc_fence *fence = NULL;
    (void)state;
    fixture_open(&f);
    assert_int_equal(glc_session_begin(f.dev, GLC_SESSION_RECORDED, &s), GLC_OK);
    assert_int_equal(glc_session_commit(s, &fence), GLC_OK);
    wait_result = GL_TIMEOUT_EXPIRED;
    assert_int_equal(glc_fence_wait(fence, 1000), GLC_ERR_TIMEOUT);
    assert_string_equal(glc_device_errmsg(f.dev), "glc_fence_wait: not signalled after 1000 ns");
    wait_result = GL_ALREADY_SIGNALED;
    assert_int_equal(glc_fence_wait(fence, 1000), GLC_OK);
    glc_fence_destroy(fence);
    glc_fence_destroy(NULL);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    fixture_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upload_and_read_barriers),
        cmocka_unit_test(test_dispatch_barriers),
        cmocka_unit_test(test_barrier_counts),
        cmocka_unit_test(test_uniform_and_command_bits),
        cmocka_unit_test(test_texel_fetch_bit),
        cmocka_unit_test(test_manual_barriers),
        cmocka_unit_test(test_recorded_reorder),
        cmocka_unit_test(test_fence_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
