/*
 * Platform CURRENT: glcompute adopts a host application's EGL context and
 * every call leaves the host's GL state exactly as it found it (program,
 * generic and indexed SSBO/UBO bindings, copy and indirect bindings, the
 * VAO's element buffer, the active texture unit and the buffer textures of
 * units 0-3, which GLC_BIND_TEXEL reads take). The snapshot here is taken with the host's own GL
 * calls, independent of the library's save/restore code; one case turns the
 * restore off to show the snapshot catches a change.
 */
#define GL_GLES_PROTOTYPES 1 /* this test is the host: it calls GL directly */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl31.h>
#include <GLES2/gl2ext.h>

#include <math.h>

#include "testutil.h"

#include "device.h"

typedef struct host {
    EGLDisplay dpy;
    EGLContext ctx;
    GLuint buf[6], prog, vao, tex[4];
} host;

typedef struct snapshot {
    GLint v[64];
    GLint64 w[64];
} snapshot;

static void take(snapshot *s)
{
    int i, n = 0, m = 0;
    memset(s, 0, sizeof *s);
    glGetIntegerv(GL_CURRENT_PROGRAM, &s->v[n++]);
    glGetIntegerv(GL_SHADER_STORAGE_BUFFER_BINDING, &s->v[n++]);
    glGetIntegerv(GL_UNIFORM_BUFFER_BINDING, &s->v[n++]);
    glGetIntegerv(GL_COPY_READ_BUFFER_BINDING, &s->v[n++]);
    glGetIntegerv(GL_COPY_WRITE_BUFFER_BINDING, &s->v[n++]);
    glGetIntegerv(GL_DISPATCH_INDIRECT_BUFFER_BINDING, &s->v[n++]);
    glGetIntegerv(GL_ARRAY_BUFFER_BINDING, &s->v[n++]);
    glGetIntegerv(GL_ELEMENT_ARRAY_BUFFER_BINDING, &s->v[n++]);
    glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &s->v[n++]);
    for (i = 0; i < 8; i++) {
        glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, (GLuint)i, &s->v[n++]);
        glGetInteger64i_v(GL_SHADER_STORAGE_BUFFER_START, (GLuint)i, &s->w[m++]);
        glGetInteger64i_v(GL_SHADER_STORAGE_BUFFER_SIZE, (GLuint)i, &s->w[m++]);
    }
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &s->v[n++]);
    glGetIntegerv(GL_ACTIVE_TEXTURE, &s->v[n++]);
    glGetIntegeri_v(GL_IMAGE_BINDING_NAME, 0, &s->v[n++]);
    glGetIntegeri_v(GL_IMAGE_BINDING_FORMAT, 0, &s->v[n++]);
    glGetIntegeri_v(GL_IMAGE_BINDING_ACCESS, 0, &s->v[n++]);
    for (i = 0; i < 2; i++) {
        glGetIntegeri_v(GL_UNIFORM_BUFFER_BINDING, (GLuint)i, &s->v[n++]);
        glGetInteger64i_v(GL_UNIFORM_BUFFER_START, (GLuint)i, &s->w[m++]);
        glGetInteger64i_v(GL_UNIFORM_BUFFER_SIZE, (GLuint)i, &s->w[m++]);
    }
    if (strstr((const char *)glGetString(GL_EXTENSIONS), "GL_OES_texture_buffer")) {
        GLint active = 0;
        glGetIntegerv(GL_ACTIVE_TEXTURE, &active);
        for (i = 0; i < 4; i++) {
            glActiveTexture(GL_TEXTURE0 + (GLenum)i);
            glGetIntegerv(GL_TEXTURE_BINDING_BUFFER_OES, &s->v[n++]);
        }
        glActiveTexture((GLenum)active);
    }
    s->v[n++] = (GLint)glGetError();
}

static int host_open(host *h)
{
    static const EGLint attr[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1,
                                  EGL_NONE};
    PFNEGLGETPLATFORMDISPLAYEXTPROC gpd =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    PFNEGLQUERYDEVICESEXTPROC qd = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    EGLDeviceEXT devs[8];
    EGLint n = 0, i;
    memset(h, 0, sizeof *h);
    h->dpy = EGL_NO_DISPLAY;
    if (qd && gpd && qd(8, devs, &n)) {
        for (i = n - 1; i >= 0 && h->dpy == EGL_NO_DISPLAY; i--) { /* any device will do */
            h->dpy = gpd(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL);
            if (h->dpy != EGL_NO_DISPLAY && !eglInitialize(h->dpy, NULL, NULL))
                h->dpy = EGL_NO_DISPLAY;
        }
    }
    if (h->dpy == EGL_NO_DISPLAY)
        return 0;
    eglBindAPI(EGL_OPENGL_ES_API);
    h->ctx = eglCreateContext(h->dpy, (EGLConfig)0, EGL_NO_CONTEXT, attr);
    return h->ctx != EGL_NO_CONTEXT &&
           eglMakeCurrent(h->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, h->ctx);
}

/* Gives every binding a distinctive value the library could disturb. */
static void host_bind_everything(host *h)
{
    static const char *src = "#version 310 es\nlayout(local_size_x = 1) in;\n"
                             "layout(std430, binding = 0) buffer B { uint x[]; };\n"
                             "void main() { x[0] = 1u; }\n";
    GLuint sh = glCreateShader(GL_COMPUTE_SHADER);
    int i;
    glGenBuffers(6, h->buf);
    for (i = 0; i < 6; i++) {
        glBindBuffer(GL_COPY_WRITE_BUFFER, h->buf[i]);
        glBufferData(GL_COPY_WRITE_BUFFER, 4096, NULL, GL_DYNAMIC_DRAW);
    }
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    h->prog = glCreateProgram();
    glAttachShader(h->prog, sh);
    glLinkProgram(h->prog);
    glDeleteShader(sh);
    glUseProgram(h->prog);
    glGenVertexArrays(1, &h->vao);
    glBindVertexArray(h->vao);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, h->buf[5]);
    glBindBuffer(GL_ARRAY_BUFFER, h->buf[4]);
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, h->buf[1], 256, 512);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, h->buf[2]);
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 3, h->buf[3], 0, 64);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, h->buf[0]);
    glBindBufferRange(GL_UNIFORM_BUFFER, 0, h->buf[4], 0, 256);
    glBindBuffer(GL_UNIFORM_BUFFER, h->buf[5]);
    glBindBuffer(GL_COPY_READ_BUFFER, h->buf[2]);
    glBindBuffer(GL_COPY_WRITE_BUFFER, h->buf[3]);
    glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, h->buf[1]);
    if (strstr((const char *)glGetString(GL_EXTENSIONS), "GL_OES_texture_buffer")) {
        glGenTextures(4, h->tex);
        for (i = 0; i < 4; i++) { /* unit 2 left empty */
            glActiveTexture(GL_TEXTURE0 + (GLenum)i);
            if (i != 2)
                glBindTexture(GL_TEXTURE_BUFFER_OES, h->tex[i]);
        }
        glActiveTexture(GL_TEXTURE2);
    }
}

static void host_close(host *h)
{
    eglMakeCurrent(h->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(h->dpy, h->ctx);
}

#define SAME(ref)                                                                        \
    do {                                                                                 \
        snapshot now_;                                                                   \
        take(&now_);                                                                     \
        assert_memory_equal(&now_, &(ref), sizeof now_);                                 \
    } while (0)

static glc_device *adopt(tu_log *log)
{
    glc_device_desc d = tu_desc(log);
    glc_device *dev = NULL;
    d.platform = GLC_PLATFORM_CURRENT;
    assert_int_equal(glc_device_create(&d, &dev), GLC_OK);
    return dev;
}

static void test_host_state_preserved(void **state)
{
    host h;
    snapshot ref;
    tu_log log;
    glc_device *dev;
    glc_device_info in;
    glc_buffer *b, *wrapped;
    int64_t n = 300, hn = 1024;
    uint32_t data[300], got[300];
    glc_session *s;
    int i;
    (void)state;
    if (!host_open(&h))
        skip();
    host_bind_everything(&h);
    take(&ref);

    dev = adopt(&log);
    SAME(ref);
    glc_device_get_info(dev, &in);
    assert_int_equal(in.platform, GLC_PLATFORM_CURRENT);
    /* a GL error the host has not read yet is neither ours nor lost */
    glEnable(0xDEAD);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b), GLC_OK);
    assert_int_equal(glGetError(), GL_INVALID_ENUM);
    SAME(ref);
    for (i = 0; i < 300; i++)
        data[i] = (uint32_t)i * 7u;
    assert_int_equal(glc_buffer_write(b, 0, sizeof data, data), GLC_OK);
    SAME(ref);
    assert_int_equal(tu_fill(dev, b, 0, 300, 11, 2, 64), GLC_OK);
    SAME(ref);
    assert_int_equal(glc_buffer_read(b, 0, sizeof got, got), GLC_OK);
    SAME(ref);
    for (i = 0; i < 300; i++)
        assert_int_equal(got[i], 11u + 2u * (uint32_t)i);

    /* compute on the host's own buffer, seen by the host afterwards */
    assert_int_equal(glc_buffer_wrap_gl(dev, h.buf[3], GLC_DTYPE_U32, 1, &hn, &wrapped), GLC_OK);
    SAME(ref);
    assert_int_equal(tu_fill(dev, wrapped, 256, 64, 5, 1, 16), GLC_OK);
    SAME(ref);
    {
        GLuint *p;
        glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
        glBindBuffer(GL_COPY_READ_BUFFER, h.buf[3]);
        p = glMapBufferRange(GL_COPY_READ_BUFFER, 256, 256, GL_MAP_READ_BIT);
        assert_non_null(p);
        for (i = 0; i < 64; i++)
            assert_int_equal(p[i], 5u + (uint32_t)i);
        glUnmapBuffer(GL_COPY_READ_BUFFER);
        glBindBuffer(GL_COPY_READ_BUFFER, h.buf[2]);
    }
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_RECORDED, &s), GLC_OK);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    SAME(ref);
    { /* an f32 add: on llvmpipe its inputs are read through buffer textures */
        int64_t m = 64;
        dev->texel_min_bytes = 0; /* (at any size) */
        float x[64], y[64], z[64];
        glc_buffer *bx, *by, *bz;
        assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &m, &bx), GLC_OK);
        assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &m, &by), GLC_OK);
        assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &m, &bz), GLC_OK);
        for (i = 0; i < 64; i++)
            x[i] = (float)i, y[i] = 0.5f * (float)i;
        assert_int_equal(glc_buffer_write(bx, 0, sizeof x, x), GLC_OK);
        assert_int_equal(glc_buffer_write(by, 0, sizeof y, y), GLC_OK);
        assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
        assert_int_equal(glc_op_add(s, glc_view_of(bx), glc_view_of(by), glc_view_of(bz)), GLC_OK);
        assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
        SAME(ref);
        assert_int_equal(glc_buffer_read(bz, 0, sizeof z, z), GLC_OK);
        for (i = 0; i < 64; i++)
            assert_true(z[i] == 1.5f * (float)i);
        glc_buffer_destroy(bx);
        glc_buffer_destroy(by);
        glc_buffer_destroy(bz);
        SAME(ref);
    }
    glc_buffer_destroy(wrapped);
    glc_buffer_destroy(b);
    SAME(ref);
    assert_true(glIsBuffer(h.buf[3]));
    glc_device_destroy(dev);
    SAME(ref);
    /* the host's context is still the host's */
    assert_true(eglGetCurrentContext() == h.ctx);
    host_close(&h);
}

static glc_plan *plan_of(glc_device *dev, int with_var);

/* A plan on the application's own buffers: its input read from one GL
 * buffer and its output written into another (glc_plan_bind_input /
 * _output over glc_buffer_wrap_gl), equal to a host run, also committed
 * without a wait and polled (glc_plan_wait_pending); the barrier for the
 * application's read through glc_device_release_to_gl (bits ES 3.1 lacks
 * refused); the host's state unchanged by all of it; the output buffer
 * deleted by the application while bound: the next run is refused, naming
 * it. */
static void test_plan_on_host_buffers(void **state)
{
    host h;
    snapshot ref;
    glc_device *dev;
    glc_plan *p;
    glc_buffer *bx, *by;
    glc_view none;
    int64_t n = 16, hn = 1024;
    float x[16], want[16], *got;
    glc_plan_input in = {"x", x, 16};
    glc_plan_output out = {"y", want, 16};
    glc_plan_var var = {"T", 16};
    int i;
    (void)state;
    if (!host_open(&h))
        skip();
    host_bind_everything(&h);
    dev = adopt(NULL);
    p = plan_of(dev, 1); /* y = 2 x + 1, x [T] */
    for (i = 0; i < 16; i++)
        x[i] = (float)i * 0.75f - 3.0f;
    assert_int_equal(glc_plan_run_with_vars(p, &var, 1, &in, 1, &out, 1), GLC_OK);
    glBindBuffer(GL_COPY_WRITE_BUFFER, h.buf[2]);
    glBufferSubData(GL_COPY_WRITE_BUFFER, 512, sizeof x, x); /* the application's data */
    glBindBuffer(GL_COPY_WRITE_BUFFER, h.buf[3]);
    take(&ref);
    assert_int_equal(glc_buffer_wrap_gl(dev, h.buf[2], GLC_DTYPE_F32, 1, &hn, &bx), GLC_OK);
    assert_int_equal(glc_buffer_wrap_gl(dev, h.buf[3], GLC_DTYPE_F32, 1, &hn, &by), GLC_OK);
    assert_int_equal(glc_plan_bind_input(p, "x", glc_view_make(bx, 512, GLC_DTYPE_F32, 1, &n)),
                     GLC_OK);
    assert_int_equal(glc_plan_bind_output(p, "y", glc_view_make(by, 256, GLC_DTYPE_F32, 1, &n)),
                     GLC_OK);
    SAME(ref);
    /* committed without a wait: the frame loop polls, then syncs */
    assert_int_equal(glc_plan_wait_pending(p, 0), GLC_ERR_STATE);
    assert_int_equal(glc_plan_commit_no_wait(p, NULL), GLC_OK);
    {
        glc_status st;
        int polls = 0;
        glc_plan_slice sl[1];
        while ((st = glc_plan_wait_pending(p, 1000000)) == GLC_ERR_TIMEOUT && polls < 10000)
            polls++; /* a frame would draw here */
        assert_int_equal(st, GLC_OK);
        assert_int_equal(glc_plan_sync_pending(p, sl), GLC_OK);
        assert_int_equal(sl[0].bytes, 0);
    }
    assert_int_equal(glc_plan_run(p, NULL, 0, NULL, 0), GLC_OK);
    SAME(ref);
    /* the application reads its buffer after the barrier its use needs */
    assert_int_equal(glc_device_release_to_gl(dev, 0x10), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "are not GL ES 3.1 barrier bits");
    assert_int_equal(glc_device_release_to_gl(dev, 0), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_device_release_to_gl(dev, GL_BUFFER_UPDATE_BARRIER_BIT |
                                                       GL_VERTEX_ATTRIB_ARRAY_BARRIER_BIT),
                     GLC_OK);
    SAME(ref);
    glBindBuffer(GL_COPY_READ_BUFFER, h.buf[3]);
    got = glMapBufferRange(GL_COPY_READ_BUFFER, 256, sizeof x, GL_MAP_READ_BIT);
    assert_non_null(got);
    assert_memory_equal(got, want, sizeof want);
    glUnmapBuffer(GL_COPY_READ_BUFFER);
    glBindBuffer(GL_COPY_READ_BUFFER, h.buf[2]);
    SAME(ref);
    /* the application deletes the output's buffer while it is bound */
    glDeleteBuffers(1, &h.buf[3]);
    assert_int_equal(glc_plan_run(p, NULL, 0, NULL, 0), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "bound to output \"y\", is no longer a buffer");
    memset(&none, 0, sizeof none);
    assert_int_equal(glc_plan_bind_output(p, "y", none), GLC_OK);
    assert_int_equal(glc_plan_run(p, NULL, 0, &out, 1), GLC_OK);
    glc_plan_destroy(p);
    glc_buffer_destroy(bx);
    glc_buffer_destroy(by);
    glc_device_destroy(dev);
    host_close(&h);
}

/* An RGBA8 texture of the application's as a plan's input, y = 1 - x
 * written into another RGBA8 texture it then reads with glReadPixels (a
 * texture replacing a buffer binding and a buffer a texture's); an
 * R32F texture in and out (checked by a second plan reading it back); every
 * refusal (mutable storage, a format other than RGBA8 / R32F, a size or
 * shape that differs, a non-texture), the host's texture and image-unit
 * bindings unchanged, a texture the application deleted caught. */
static GLuint texture(GLenum fmt, int w, int h, const void *data, GLenum dfmt, GLenum dtype)
{
    GLuint t;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexStorage2D(GL_TEXTURE_2D, 1, fmt, w, h);
    if (data)
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, dfmt, dtype, data);
    return t;
}

/* The RGBA8 texels of texture t through a framebuffer of its own (the
 * read framebuffer binding back to 0 after) */
static void read_rgba8(GLuint t, int w, int h, GLubyte *px)
{
    GLuint fbo;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, t, 0);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
}

/* NVIDIA's write rule (buffer.c: a buffer write that follows another with
 * no dispatch between waits for the GPU first) on an adopted context: the
 * application's GL work between our calls is not known, so each call's
 * first write waits (on the library's own context a run's write after the
 * last run's dispatches does not: test_plan_exec). The rule forced on
 * (llvmpipe: a glFinish is harmless), glFinish counted: two runs with the
 * application's glBufferSubData between them, a wait each. */
static int nfinish;
static void(GL_APIENTRY *real_finish)(void);
static void GL_APIENTRY counting_finish(void)
{
    nfinish++;
    real_finish();
}

static void test_host_write_then_run_waits(void **state)
{
    host h;
    glc_device *dev;
    glc_plan *p;
    float x[16], y[16];
    glc_plan_input in = {"x", x, 16};
    glc_plan_output out = {"y", y, 16};
    glc_plan_var var = {"T", 16};
    int i;
    (void)state;
    if (!host_open(&h))
        skip();
    dev = adopt(NULL);
    p = plan_of(dev, 1); /* y = 2 x + 1, x [T] */
    for (i = 0; i < 16; i++)
        x[i] = (float)i - 8.0f;
    dev->write_waits = 1;
    real_finish = dev->gl.glFinish;
    dev->gl.glFinish = counting_finish;
    for (i = 0; i < 2; i++) {
        nfinish = 0;
        assert_int_equal(glc_plan_run_with_vars(p, &var, 1, &in, 1, &out, 1), GLC_OK);
        assert_int_equal(nfinish, 1);
        assert_true(y[3] == 2.0f * x[3] + 1.0f);
        glBindBuffer(GL_COPY_WRITE_BUFFER, h.buf[2]);
        glBufferSubData(GL_COPY_WRITE_BUFFER, 0, sizeof x, x); /* the application's write */
    }
    dev->gl.glFinish = real_finish;
    glc_plan_destroy(p);
    glc_device_destroy(dev);
    host_close(&h);
}

static void test_plan_textures(void **state)
{
    enum { W = 5, H = 3 };
    host h;
    snapshot ref;
    glc_device *dev;
    glc_graph *g;
    glc_plan *p, *q, *r;
    int64_t s4[3] = {H, W, 4}, s1[3] = {H, W, 1};
    GLubyte in[H * W * 4], got[H * W * 4];
    float f[H * W], f2[H * W];
    GLuint tin, tout, tr, tr2, tmut, t16, tbig;
    GLint keep = 0;
    int i;
    (void)state;
    if (!host_open(&h))
        skip();
    host_bind_everything(&h);
    for (i = 0; i < H * W * 4; i++)
        in[i] = (GLubyte)(i * 37 % 256);
    for (i = 0; i < H * W; i++)
        f[i] = (float)i * 0.5f - 3.0f;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &keep);
    tin = texture(GL_RGBA8, W, H, in, GL_RGBA, GL_UNSIGNED_BYTE);
    tout = texture(GL_RGBA8, W, H, NULL, 0, 0);
    tr = texture(GL_R32F, W, H, f, GL_RED, GL_FLOAT);
    tr2 = texture(GL_R32F, W, H, NULL, 0, 0);
    t16 = texture(GL_RGBA16F, W, H, NULL, 0, 0);
    tbig = texture(GL_RGBA8, W + 1, H, NULL, 0, 0);
    glGenTextures(1, &tmut);
    glBindTexture(GL_TEXTURE_2D, tmut);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, W, H, 0, GL_RGBA, GL_UNSIGNED_BYTE, in);
    glBindTexture(GL_TEXTURE_2D, (GLuint)keep);
    glBindImageTexture(0, h.buf[0] ? tbig : 0, 0, GL_FALSE, 0, GL_READ_WRITE, GL_RGBA8);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    take(&ref);
    dev = adopt(NULL);
    /* y = 1 - x over RGBA8 */
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    glc_graph_output(g, "y", glc_scale(g, glc_graph_input(g, "x", GLC_DTYPE_F32, 3, s4), -1, 1));
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    /* z = 2 x + 1 over R32F, and a plan that reads an R32F texture back */
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    glc_graph_output(g, "z", glc_scale(g, glc_graph_input(g, "x", GLC_DTYPE_F32, 3, s1), 2, 1));
    assert_int_equal(glc_graph_compile(g, NULL, &q), GLC_OK);
    glc_graph_destroy(g);
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    glc_graph_output(g, "c", glc_scale(g, glc_graph_input(g, "x", GLC_DTYPE_F32, 3, s1), 1, 0));
    assert_int_equal(glc_graph_compile(g, NULL, &r), GLC_OK);
    glc_graph_destroy(g);
    SAME(ref);
    /* the refusals, each leaving nothing bound */
    assert_int_equal(glc_plan_bind_input_texture(p, "x", tmut, 0), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "mutable storage");
    assert_int_equal(glc_plan_bind_input_texture(p, "x", t16, 0), GLC_ERR_UNSUPPORTED);
    tu_assert_contains(glc_device_errmsg(dev), "GL_RGBA8 and GL_R32F");
    assert_int_equal(glc_plan_bind_input_texture(p, "x", tbig, 0), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "a 6x3 RGBA8 texture level is an f32 [3, 6, 4]");
    assert_int_equal(glc_plan_bind_input_texture(p, "x", tr, 0), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_plan_bind_input_texture(p, "x", tin, 1), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "level 1 of a texture of 1");
    assert_int_equal(glc_plan_bind_input_texture(p, "x", 999999, 0), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "is not a GL texture");
    assert_int_equal(glc_plan_bind_input_texture(p, "nope", tin, 0), GLC_ERR_INVALID_ARG);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    SAME(ref);
    /* RGBA8 in and out; the input first bound to a buffer, which the
     * texture replaces */
    {
        glc_buffer *b;
        int64_t n = H * W * 4;
        assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &b), GLC_OK);
        assert_int_equal(glc_plan_bind_input(p, "x", glc_view_make(b, 0, GLC_DTYPE_F32, 3, s4)),
                         GLC_OK);
        glc_buffer_destroy(b); /* held by the binding until the texture replaces it */
    }
    assert_int_equal(glc_plan_bind_input_texture(p, "x", tin, 0), GLC_OK);
    assert_int_equal(glc_plan_bind_output_texture(p, "y", tout, 0), GLC_OK);
    SAME(ref);
    assert_int_equal(glc_plan_run(p, NULL, 0, NULL, 0), GLC_OK);
    SAME(ref);
    assert_int_equal(glc_device_release_to_gl(dev, GL_FRAMEBUFFER_BARRIER_BIT |
                                                       GL_TEXTURE_FETCH_BARRIER_BIT),
                     GLC_OK);
    read_rgba8(tout, W, H, got);
    for (i = 0; i < H * W * 4; i++)
        if (got[i] != 255 - in[i])
            fail_msg("RGBA8 texel byte %d: %d, want %d", i, got[i], 255 - in[i]);
    {
        /* a buffer range replaces the input texture: the run reads it */
        static float ones[H * W * 4];
        glc_buffer *b;
        int64_t n = H * W * 4;
        for (i = 0; i < H * W * 4; i++)
            ones[i] = 1.0f;
        assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &b), GLC_OK);
        assert_int_equal(glc_buffer_write(b, 0, sizeof ones, ones), GLC_OK);
        assert_int_equal(glc_plan_bind_input(p, "x", glc_view_make(b, 0, GLC_DTYPE_F32, 3, s4)),
                         GLC_OK);
        assert_int_equal(glc_plan_run(p, NULL, 0, NULL, 0), GLC_OK);
        assert_int_equal(glc_device_release_to_gl(dev, GL_FRAMEBUFFER_BARRIER_BIT), GLC_OK);
        read_rgba8(tout, W, H, got);
        for (i = 0; i < H * W * 4; i++)
            if (got[i] != 0)
                fail_msg("RGBA8 texel byte %d after the buffer replaced the texture: %d", i,
                         got[i]);
        glc_buffer_destroy(b);
    }
    /* R32F in and out; the result read back through a texture input */
    assert_int_equal(glc_plan_bind_input_texture(q, "x", tr, 0), GLC_OK);
    assert_int_equal(glc_plan_bind_output_texture(q, "z", tr2, 0), GLC_OK);
    assert_int_equal(glc_plan_run(q, NULL, 0, NULL, 0), GLC_OK);
    assert_int_equal(glc_device_release_to_gl(dev, GL_SHADER_IMAGE_ACCESS_BARRIER_BIT), GLC_OK);
    assert_int_equal(glc_plan_bind_input_texture(r, "x", tr2, 0), GLC_OK);
    {
        glc_plan_output out = {"c", f2, H * W};
        assert_int_equal(glc_plan_run(r, NULL, 0, &out, 1), GLC_OK);
    }
    for (i = 0; i < H * W; i++)
        if (f2[i] != 2.0f * f[i] + 1.0f)
            fail_msg("R32F texel %d: %g, want %g", i, (double)f2[i], 2.0 * f[i] + 1.0);
    SAME(ref);
    /* the application deletes an input texture while it is bound */
    glDeleteTextures(1, &tr);
    assert_int_equal(glc_plan_run(q, NULL, 0, NULL, 0), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "is no longer a texture");
    assert_int_equal(glc_plan_bind_input_texture(q, "x", 0, 0), GLC_OK);
    SAME(ref);
    glc_plan_destroy(p);
    glc_plan_destroy(q);
    glc_plan_destroy(r);
    glc_device_destroy(dev);
    SAME(ref);
    glDeleteTextures(1, &tin);
    glDeleteTextures(1, &tout);
    glDeleteTextures(1, &tr2);
    glDeleteTextures(1, &t16);
    glDeleteTextures(1, &tbig);
    glDeleteTextures(1, &tmut);
    host_close(&h);
}

static void test_restore_off_is_caught(void **state)
{
    host h;
    snapshot ref, now;
    glc_device *dev;
    glc_buffer *b;
    int64_t n = 64;
    (void)state;
    if (!host_open(&h))
        skip();
    host_bind_everything(&h);
    take(&ref);
    dev = adopt(NULL);
    dev->skip_restore = 1; /* the fault the snapshot exists to catch */
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b), GLC_OK);
    assert_int_equal(tu_fill(dev, b, 0, 64, 1, 1, 64), GLC_OK);
    take(&now);
    assert_memory_not_equal(&now, &ref, sizeof now);
    assert_int_not_equal(now.v[0], ref.v[0]); /* the current program changed */
    glc_buffer_destroy(b);
    glc_device_destroy(dev);
    host_close(&h);
}

static void test_adopted_context_not_current(void **state)
{
    host h;
    glc_device *dev;
    glc_buffer *b = NULL;
    int64_t n = 4;
    (void)state;
    if (!host_open(&h))
        skip();
    dev = adopt(NULL);
    eglMakeCurrent(h.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b), GLC_ERR_STATE);
    tu_assert_contains(glc_device_errmsg(dev), "the adopted context is not current");
    assert_null(b);
    eglMakeCurrent(h.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, h.ctx);
    glc_device_destroy(dev);
    host_close(&h);
}

/* ---- another context current: no GL call may reach it ---- */

/* Names the next object of each namespace would get, twice, so a later
 * probe tells whether anything was created in between whatever the
 * driver's name allocation (reuse or not). */
typedef struct names {
    GLuint prog[2], buf[2];
} names;

static void probe_names(names *n)
{
    int i;
    for (i = 0; i < 2; i++) {
        n->prog[i] = glCreateProgram();
        glDeleteProgram(n->prog[i]);
        glGenBuffers(1, &n->buf[i]);
        glDeleteBuffers(1, &n->buf[i]);
    }
}

/* Nothing was created between `before` and now in the current context. */
static void same_names(const names *before)
{
    names now;
    probe_names(&now);
    assert_int_equal(now.prog[0] - before->prog[1], before->prog[1] - before->prog[0]);
    assert_int_equal(now.buf[0] - before->buf[1], before->buf[1] - before->buf[0]);
}

static EGLContext host_context(const host *h)
{
    static const EGLint attr[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1,
                                  EGL_NONE};
    return eglCreateContext(h->dpy, (EGLConfig)0, EGL_NO_CONTEXT, attr);
}

static glc_status tanh_op(glc_session *s, glc_buffer *x, glc_buffer *y)
{
    return glc_op_unary(s, GLC_UNARY_TANH, glc_view_of(x), 0, glc_view_of(y));
}

/* y = tanh(x) on `dev`, checked against the host's tanhf. */
static void check_tanh(glc_device *dev, glc_buffer *x, glc_buffer *y)
{
    glc_session *s;
    float in[64], out[64];
    int i;
    for (i = 0; i < 64; i++)
        in[i] = (float)(i - 32) / 8.0f;
    memset(out, 0, sizeof out);
    assert_int_equal(glc_buffer_write(y, 0, sizeof out, out), GLC_OK);
    assert_int_equal(glc_buffer_write(x, 0, sizeof in, in), GLC_OK);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    assert_int_equal(tanh_op(s, x, y), GLC_OK);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    assert_int_equal(glc_buffer_read(y, 0, sizeof out, out), GLC_OK);
    for (i = 0; i < 64; i++)
        assert_true(fabsf(out[i] - tanhf(in[i])) < 1e-5f);
}

/* Device 2's context current: an eager op of device 1 is refused and
 * leaves nothing behind (no program cached from device 2's context). */
static void test_other_device_current(void **state)
{
    glc_device *d1, *d2;
    glc_buffer *x, *y;
    glc_session *s;
    int64_t n = 64;
    (void)state;
    d1 = tu_device(NULL);
    assert_int_equal(glc_buffer_create(d1, GLC_DTYPE_F32, 1, &n, &x), GLC_OK);
    assert_int_equal(glc_buffer_create(d1, GLC_DTYPE_F32, 1, &n, &y), GLC_OK);
    assert_int_equal(glc_session_begin(d1, GLC_SESSION_RECORDED, &s), GLC_OK);
    d2 = tu_device(NULL); /* its context is current now */
    assert_int_equal(tanh_op(s, x, y), GLC_ERR_STATE);
    tu_assert_contains(glc_device_errmsg(d1), "another EGL context is current");
    glc_device_destroy(d2);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    check_tanh(d1, x, y);
    glc_buffer_destroy(x);
    glc_buffer_destroy(y);
    glc_device_destroy(d1);
}

static void noop_text(void *user, const char *text)
{
    (void)user;
    (void)text;
}

/* The objects every entry point of the table is called on. */
typedef struct world {
    glc_device *dev;
    glc_buffer *x, *y, *tmp;
    glc_kernel *fill, *user, *tmp_kernel;
    glc_session *direct, *recorded, *doomed;
    glc_fence *fence, *tmp_fence;
    glc_plan *p, *pending, *dst, *vp, *tmp_plan;
    GLuint host_buf;
} world;

static const char *user_src = "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
                              "layout(std430, binding = 0) buffer B { uint x[]; };\n"
                              "void main() { x[gl_GlobalInvocationID.x] = 7u; }\n";

static glc_plan *plan_of(glc_device *dev, int with_var)
{
    glc_graph *g;
    glc_plan *p = NULL;
    int64_t s16 = 16, st[1];
    glc_tensor x, w, h;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    if (with_var) {
        st[0] = glc_graph_var(g, "T", 1, 16);
        x = glc_graph_input(g, "x", GLC_DTYPE_F32, 1, st);
        glc_graph_output(g, "y", glc_scale(g, x, 2, 1));
    } else {
        x = glc_graph_input(g, "x", GLC_DTYPE_F32, 1, &s16);
        w = glc_graph_param(g, "w", GLC_DTYPE_F32, 1, &s16);
        h = glc_graph_handle(g, "h", GLC_DTYPE_F32, 1, &s16);
        glc_graph_output(g, "y", glc_add(g, glc_mul(g, x, w), h));
    }
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    return p;
}

static void world_make(world *w)
{
    static const float ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    const void *in[1] = {ones};
    glc_kernel_desc kd;
    int64_t n = 64;
    memset(&kd, 0, sizeof kd);
    kd.source = user_src;
    assert_int_equal(glc_buffer_create(w->dev, GLC_DTYPE_F32, 1, &n, &w->x), GLC_OK);
    assert_int_equal(glc_buffer_create(w->dev, GLC_DTYPE_F32, 1, &n, &w->y), GLC_OK);
    assert_int_equal(glc_buffer_create(w->dev, GLC_DTYPE_F32, 1, &n, &w->tmp), GLC_OK);
    assert_int_equal(glc__kernel_get(w->dev, "fill", NULL, 64, &w->fill), GLC_OK);
    assert_int_equal(glc_kernel_create(w->dev, &kd, &w->user), GLC_OK);
    assert_int_equal(glc_session_begin(w->dev, GLC_SESSION_DIRECT, &w->direct), GLC_OK);
    assert_int_equal(glc_session_begin(w->dev, GLC_SESSION_DIRECT, &w->doomed), GLC_OK);
    assert_int_equal(glc_session_begin(w->dev, GLC_SESSION_RECORDED, &w->recorded), GLC_OK);
    assert_int_equal(glc_session_commit(w->recorded, &w->fence), GLC_OK);
    assert_int_equal(glc_session_commit(w->recorded, &w->tmp_fence), GLC_OK);
    assert_int_equal(glc_kernel_create(w->dev, &kd, &w->tmp_kernel), GLC_OK);
    w->p = plan_of(w->dev, 0);
    w->pending = plan_of(w->dev, 0);
    w->dst = plan_of(w->dev, 0);
    w->tmp_plan = plan_of(w->dev, 0);
    w->vp = plan_of(w->dev, 1);
    assert_int_equal(glc_plan_set_param(w->p, "w", ones, 16), GLC_OK);
    assert_int_equal(glc_plan_bind_handle(w->p, "h", ones, sizeof ones), GLC_OK);
    assert_int_equal(glc_plan_set_param(w->pending, "w", ones, 16), GLC_OK);
    assert_int_equal(glc_plan_bind_handle(w->pending, "h", ones, sizeof ones), GLC_OK);
    assert_int_equal(glc_plan_commit_no_wait(w->pending, in), GLC_OK);
    {
        /* x written: a read of it needs a barrier (entry 11) */
        glc_binding b;
        glc_dispatch_desc d;
        memset(&b, 0, sizeof b);
        b.buffer = w->x;
        b.size = 256;
        b.access = GLC_WRITE;
        memset(&d, 0, sizeof d);
        d.kernel = w->user;
        d.groups = 1;
        d.bindings = &b;
        d.binding_count = 1;
        assert_int_equal(glc_session_dispatch(w->direct, &d), GLC_OK);
    }
}

/* Calls entry point i on w's objects; the name goes to *name. -1: no more. */
static int call_entry(world *w, int i, const char **name)
{
    static const float data[64];
    static float out[64];
    const void *in[16] = {data, data, data, data};
    void *outs[4] = {out, out, out, out};
    const void *raw[4];
    glc_plan_slice sl[4];
    glc_plan_input pin = {"x", data, 16};
    glc_plan_output pout = {"y", out, 16};
    glc_plan_typed_input tin = {"x", data, 64, GLC_DTYPE_F32};
    glc_plan_typed_output tout = {"y", out, 64, GLC_DTYPE_F32};
    glc_plan_var var = {"T", 16};
    glc_plan_dispatch_time times[8];
    glc_plan_profile prof;
    glc_binding b;
    glc_dispatch_desc d;
    glc_kernel_desc kd;
    glc_graph *g;
    glc_plan *p = NULL;
    glc_buffer *nb = NULL;
    glc_kernel *nk = NULL;
    glc_session *ns = NULL;
    glc_fence *nf = NULL;
    int64_t n = 16, hn = 1024, s16 = 16;
    glc_view unbound;
    glc_status st;
    memset(&unbound, 0, sizeof unbound);
    memset(&b, 0, sizeof b);
    b.buffer = w->x;
    b.size = 256;
    b.access = GLC_WRITE;
    memset(&d, 0, sizeof d);
    d.kernel = w->user;
    d.groups = 1;
    d.bindings = &b;
    d.binding_count = 1;
    memset(&kd, 0, sizeof kd);
    kd.source = user_src;
    memset(&prof, 0, sizeof prof);
    prof.entries = times;
    prof.capacity = 8;
#define ENTRY(k, call)                                                                   \
    case k:                                                                              \
        *name = #call;                                                                   \
        st = call;                                                                       \
        break;
    switch (i) {
    ENTRY(0, glc_buffer_create(w->dev, GLC_DTYPE_F32, 1, &n, &nb))
    ENTRY(1, glc_buffer_wrap_gl(w->dev, w->host_buf, GLC_DTYPE_U32, 1, &hn, &nb))
    ENTRY(2, glc_buffer_write(w->x, 0, sizeof data, data))
    ENTRY(3, glc_buffer_read(w->x, 0, sizeof out, out))
    ENTRY(4, glc_kernel_create(w->dev, &kd, &nk))
    ENTRY(5, glc_session_begin(w->dev, GLC_SESSION_DIRECT, &ns))
    ENTRY(6, glc_session_dispatch(w->direct, &d))
    ENTRY(7, tanh_op(w->direct, w->x, w->y))
    ENTRY(8, tanh_op(w->recorded, w->x, w->y))
    ENTRY(9, glc_op_scale(w->direct, glc_view_of(w->x), 2, 1, glc_view_of(w->y)))
    ENTRY(10, glc_session_barrier(w->direct))
    ENTRY(11, glc_session_barrier_between(w->direct, &b, 1, NULL, 0, NULL))
    ENTRY(12, glc_session_commit(w->recorded, &nf))
    ENTRY(13, glc_fence_wait(w->fence, 0))
    ENTRY(14, glc_session_finish(w->doomed, NULL))
    case 15:
        *name = "glc_graph_compile";
        assert_int_equal(glc_graph_create(w->dev, &g), GLC_OK);
        glc_graph_output(g, "y", glc_unary(g, GLC_UNARY_GELU_ERF,
                                           glc_graph_input(g, "x", GLC_DTYPE_F32, 1, &n), 0));
        st = glc_graph_compile(g, NULL, &p);
        glc_graph_destroy(g);
        break;
    ENTRY(16, glc_plan_set_param(w->p, "w", data, 16))
    ENTRY(17, glc_plan_set_param_typed(w->p, "w", data, 64, GLC_DTYPE_F32))
    ENTRY(18, glc_plan_run(w->p, &pin, 1, &pout, 1))
    ENTRY(19, glc_plan_run_slots(w->p, in, sl))
    ENTRY(20, glc_plan_run_raw(w->p, in, raw))
    ENTRY(21, glc_plan_bind_handle(w->p, "h", data, 64))
    ENTRY(22, glc_plan_read_handle(w->p, "h", out, 64))
    ENTRY(23, glc_plan_share(w->dst, w->p, GLC_SHARE_PARAMS | GLC_SHARE_HANDLES))
    ENTRY(24, glc_plan_clone(w->p, &p))
    ENTRY(25, glc_plan_set_vars(w->vp, &var, 1))
    ENTRY(26, glc_plan_run_with_vars(w->vp, &var, 1, &pin, 1, &pout, 1))
    ENTRY(27, glc_plan_set_active_extent(w->vp, 16))
    ENTRY(28, glc_plan_commit_no_wait(w->p, in))
    ENTRY(29, glc_plan_sync_pending(w->pending, sl))
    ENTRY(30, glc_plan_run_pipelined(w->p, 1, in, outs))
    ENTRY(31, glc_plan_run_typed(w->p, &tin, 1, &tout, 1))
    ENTRY(32, glc_plan_run_profiled(w->p, in, sl, &prof))
    ENTRY(33, glc_plan_bind_input(w->vp, "x", glc_view_make(w->x, 0, GLC_DTYPE_F32, 1, &s16)))
    ENTRY(34, glc_plan_bind_input(w->vp, "x", unbound))
    ENTRY(35, glc_device_release_to_gl(w->dev, GL_VERTEX_ATTRIB_ARRAY_BARRIER_BIT))
    ENTRY(36, glc_plan_wait_pending(w->pending, 0))
    ENTRY(37, glc_plan_bind_input_texture(w->vp, "x", 1, 0))
    ENTRY(38, glc_plan_bind_output_texture(w->vp, "y", 1, 0))
    default:
        return -1;
    }
#undef ENTRY
    assert_null(nb);
    assert_null(nk);
    assert_null(ns);
    assert_null(nf);
    assert_null(p);
    return (int)st;
}

/* What an application can destroy from the wrong context: nothing reaches GL. */
static void destroy_some(world *w)
{
    glc_buffer_destroy(w->tmp);
    glc_plan_destroy(w->tmp_plan);
    glc_kernel_destroy(w->tmp_kernel);
    glc_fence_destroy(w->tmp_fence);
    glc_plan_dump(w->p, GLC_PLAN_DUMP_SOURCE, noop_text, NULL);
}

static void world_free(world *w)
{
    glc_plan_slice sl[1];
    assert_int_equal(glc_plan_sync_pending(w->pending, sl), GLC_OK);
    glc_plan_destroy(w->p);
    glc_plan_destroy(w->pending);
    glc_plan_destroy(w->dst);
    glc_plan_destroy(w->vp);
    glc_fence_destroy(w->fence);
    assert_int_equal(glc_session_finish(w->direct, NULL), GLC_OK);
    assert_int_equal(glc_session_finish(w->recorded, NULL), GLC_OK);
    glc_kernel_destroy(w->user);
    glc_buffer_destroy(w->x);
    glc_buffer_destroy(w->y);
}

/* Adopted context A, the application's context B current: every entry
 * point refuses with GLC_ERR_STATE and makes no GL call in B (no object
 * created, no state changed, no error raised); back on A the same calls
 * work and an eager op computes the right values. */
static void test_other_context_current(void **state)
{
    host h;
    world w;
    snapshot ref_a, ref_b;
    names nb;
    EGLContext b;
    const char *name;
    int i, st;
    (void)state;
    if (!host_open(&h))
        skip();
    memset(&w, 0, sizeof w);
    host_bind_everything(&h);
    w.host_buf = h.buf[3];
    take(&ref_a);
    w.dev = adopt(NULL);
    world_make(&w);
    SAME(ref_a);

    b = host_context(&h);
    assert_true(b != EGL_NO_CONTEXT);
    assert_true(eglMakeCurrent(h.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, b));
    take(&ref_b);
    probe_names(&nb);
    for (i = 0; (st = call_entry(&w, i, &name)) != -1; i++) {
        if (st != GLC_ERR_STATE)
            fail_msg("%s with another context current: %s, expected GLC_ERR_STATE", name,
                     glc_status_str((glc_status)st));
        tu_assert_contains(glc_device_errmsg(w.dev), "the adopted context is not current");
    }
    assert_true(i > 30);
    destroy_some(&w);
    same_names(&nb);
    SAME(ref_b);

    assert_true(eglMakeCurrent(h.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, h.ctx));
    SAME(ref_a);
    check_tanh(w.dev, w.x, w.y);
    SAME(ref_a);
    world_free(&w);
    glc_device_destroy(w.dev);
    SAME(ref_a);
    eglDestroyContext(h.dpy, b);
    host_close(&h);
}

/* The host deleted its current program (it lives while current): a call
 * that binds its own program cannot bind it back; it leaves program 0
 * current, raises no GL error and says so in the log. */
static void test_deleted_current_program(void **state)
{
    host h;
    tu_log log;
    glc_device *dev;
    glc_buffer *b;
    int64_t n = 64;
    GLint cur = -1;
    (void)state;
    if (!host_open(&h))
        skip();
    host_bind_everything(&h);
    glDeleteProgram(h.prog); /* still current: only flagged */
    dev = adopt(&log);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b), GLC_OK);
    glGetIntegerv(GL_CURRENT_PROGRAM, &cur);
    assert_int_equal(cur, (GLint)h.prog); /* a call that binds no program keeps it */
    assert_int_equal(glGetError(), GL_NO_ERROR);
    assert_int_equal(tu_fill(dev, b, 0, 64, 3, 1, 64), GLC_OK);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    glGetIntegerv(GL_CURRENT_PROGRAM, &cur);
    assert_int_equal(cur, 0);
    tu_assert_contains(log.all, "had been deleted");
    glc_buffer_destroy(b);
    glc_device_destroy(dev);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    host_close(&h);
}

/* GLC_DEVICE_DEBUG checks GL errors after its calls; an error the host had
 * pending before a call is the host's: not reported as the library's, and
 * still pending for the host afterwards. */
static void test_host_errors_kept(void **state)
{
    static const GLenum kinds[3] = {GL_INVALID_ENUM, GL_INVALID_VALUE, GL_INVALID_OPERATION};
    host h;
    tu_log log;
    glc_device_desc d;
    glc_device *dev = NULL;
    glc_buffer *b;
    int64_t n = 64;
    uint32_t data[64], got[64];
    int k, i;
    (void)state;
    if (!host_open(&h))
        skip();
    d = tu_desc(&log);
    d.platform = GLC_PLATFORM_CURRENT;
    d.flags = GLC_DEVICE_DEBUG;
    assert_int_equal(glc_device_create(&d, &dev), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b), GLC_OK);
    for (i = 0; i < 64; i++)
        data[i] = (uint32_t)i * 3u;
    for (k = 0; k < 3; k++) {
        if (kinds[k] == GL_INVALID_ENUM)
            glEnable(0xDEAD);
        else if (kinds[k] == GL_INVALID_VALUE)
            glGetStringi(GL_EXTENSIONS, 100000u);
        else
            glEndQuery(GL_ANY_SAMPLES_PASSED); /* none active */
        log.count = 0;
        log.last[0] = '\0';
        assert_int_equal(glc_buffer_write(b, 0, sizeof data, data), GLC_OK);
        assert_int_equal(tu_fill(dev, b, 0, 16, 5, 1, 16), GLC_OK); /* offset 0: any alignment */
        assert_int_equal(glc_buffer_read(b, 0, sizeof got, got), GLC_OK);
        assert_string_equal(log.last, "");
        assert_int_equal(glGetError(), kinds[k]);
        assert_int_equal(glGetError(), GL_NO_ERROR);
        for (i = 0; i < 64; i++)
            assert_int_equal(got[i], i < 16 ? 5u + (uint32_t)i : (uint32_t)i * 3u);
    }
    glc_buffer_destroy(b);
    glc_device_destroy(dev);
    host_close(&h);
}

/* ---- profiling next to the application's own timer query ---- */

static int disjoint_reads;
static void(GL_APIENTRY *real_get_integerv)(GLenum, GLint *);

static void GL_APIENTRY counting_get_integerv(GLenum pname, GLint *data)
{
    disjoint_reads += pname == GL_GPU_DISJOINT_EXT;
    real_get_integerv(pname, data);
}

/* The host times its frame with GL_TIME_ELAPSED and profiles a plan inside
 * it: the plan's run neither ends nor breaks the host's query, raises no GL
 * error, and never reads (so clears) the host's disjoint flag. */
static void test_profile_under_host_query(void **state)
{
    PFNGLGENQUERIESEXTPROC gen;
    PFNGLBEGINQUERYEXTPROC begin;
    PFNGLENDQUERYEXTPROC end;
    PFNGLGETQUERYIVEXTPROC getq;
    PFNGLGETQUERYOBJECTUIVEXTPROC getobj;
    PFNGLDELETEQUERIESEXTPROC del;
    host h;
    glc_device *dev;
    glc_graph *g;
    glc_plan *p;
    glc_plan_dispatch_time times[8];
    glc_plan_profile prof;
    glc_plan_slice sl[1];
    int64_t n = 64;
    float x[64];
    const void *in[1] = {x};
    const float *y;
    GLuint q;
    GLint cur = 0;
    GLuint avail = 0;
    int i, run;
    (void)state;
    if (!host_open(&h))
        skip();
    if (!strstr((const char *)glGetString(GL_EXTENSIONS), "GL_EXT_disjoint_timer_query"))
        skip();
    gen = (PFNGLGENQUERIESEXTPROC)eglGetProcAddress("glGenQueriesEXT");
    begin = (PFNGLBEGINQUERYEXTPROC)eglGetProcAddress("glBeginQueryEXT");
    end = (PFNGLENDQUERYEXTPROC)eglGetProcAddress("glEndQueryEXT");
    getq = (PFNGLGETQUERYIVEXTPROC)eglGetProcAddress("glGetQueryivEXT");
    getobj = (PFNGLGETQUERYOBJECTUIVEXTPROC)eglGetProcAddress("glGetQueryObjectuivEXT");
    del = (PFNGLDELETEQUERIESEXTPROC)eglGetProcAddress("glDeleteQueriesEXT");
    dev = adopt(NULL);
    real_get_integerv = dev->gl.glGetIntegerv;
    dev->gl.glGetIntegerv = counting_get_integerv;
    disjoint_reads = 0;
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    glc_graph_output(g, "y", glc_scale(g, glc_unary(g, GLC_UNARY_EXP,
                                                    glc_graph_input(g, "x", GLC_DTYPE_F32, 1, &n),
                                                    0),
                                       2, 0));
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    glc_graph_destroy(g);
    for (i = 0; i < 64; i++)
        x[i] = (float)i / 64.0f;
    gen(1, &q);
    for (run = 0; run < 2; run++) {
        assert_int_equal(glGetError(), GL_NO_ERROR);
        begin(GL_TIME_ELAPSED_EXT, q);
        memset(&prof, 0, sizeof prof);
        prof.entries = times;
        prof.capacity = 8;
        assert_int_equal(glc_plan_run_profiled(p, in, sl, &prof), GLC_OK);
        assert_int_equal(glGetError(), GL_NO_ERROR);
        getq(GL_TIME_ELAPSED_EXT, GL_CURRENT_QUERY_EXT, &cur);
        assert_int_equal(cur, (GLint)q); /* still the host's, still running */
        end(GL_TIME_ELAPSED_EXT);
        assert_int_equal(glGetError(), GL_NO_ERROR);
        glFinish();
        getobj(q, GL_QUERY_RESULT_AVAILABLE_EXT, &avail);
        assert_int_equal(avail, GL_TRUE);
        assert_int_not_equal(prof.clock, GLC_PROFILE_CLOCK_ELAPSED);
        assert_true(prof.count >= 1);
        y = (const float *)((const char *)glc_plan_arena_ptr(p) + sl[0].offset);
        for (i = 0; i < 64; i++)
            assert_true(fabsf(y[i] - 2.0f * expf(x[i])) < 1e-4f * 2.0f * expf(x[i]));
        /* without the host's query the plan may use GL_TIME_ELAPSED again */
        memset(&prof, 0, sizeof prof);
        prof.entries = times;
        prof.capacity = 8;
        assert_int_equal(glc_plan_run_profiled(p, in, sl, &prof), GLC_OK);
        assert_int_equal(glGetError(), GL_NO_ERROR);
    }
    assert_int_equal(disjoint_reads, 0);
    del(1, &q);
    glc_plan_destroy(p);
    dev->gl.glGetIntegerv = real_get_integerv;
    glc_device_destroy(dev);
    host_close(&h);
}

/* The application initialised an EGL display itself; a device of the
 * library's own on that display (same EGL device) must not terminate it
 * when destroyed: the application's context stays usable. */
static void test_host_display_kept(void **state)
{
    host h;
    glc_device_desc d;
    glc_device *dev = NULL;
    EGLContext c2;
    (void)state;
    if (!host_open(&h))
        skip();
    memset(&d, 0, sizeof d);
    d.platform = GLC_PLATFORM_DEVICE;
    if (glc_device_create(&d, &dev) != GLC_OK) {
        host_close(&h);
        skip();
    }
    glc_device_destroy(dev);
    assert_true(eglMakeCurrent(h.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, h.ctx));
    c2 = host_context(&h);
    assert_true(c2 != EGL_NO_CONTEXT);
    eglDestroyContext(h.dpy, c2);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    host_close(&h);
}

/* An owned device's context replaced behind the library's back on the same
 * thread (the application made its own current): an eager op, its kernel
 * cached already, is refused and sends nothing to the application's context. */
static void test_owned_context_switched(void **state)
{
    host h;
    snapshot ref;
    names nb;
    glc_device *dev;
    glc_buffer *x, *y;
    glc_session *s;
    int64_t n = 64;
    (void)state;
    if (!host_open(&h))
        skip();
    host_bind_everything(&h);
    dev = tu_device(NULL); /* its own context is current now */
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &x), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &y), GLC_OK);
    check_tanh(dev, x, y); /* the kernel is cached */
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    assert_true(eglMakeCurrent(h.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, h.ctx));
    take(&ref);
    probe_names(&nb);
    assert_int_equal(tanh_op(s, x, y), GLC_ERR_STATE);
    tu_assert_contains(glc_device_errmsg(dev), "another EGL context is current");
    same_names(&nb);
    SAME(ref);
    eglMakeCurrent(h.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    check_tanh(dev, x, y);
    glc_buffer_destroy(x);
    glc_buffer_destroy(y);
    glc_device_destroy(dev);
    assert_true(eglMakeCurrent(h.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, h.ctx));
    host_close(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_state_preserved),
        cmocka_unit_test(test_plan_on_host_buffers),
        cmocka_unit_test(test_host_write_then_run_waits),
        cmocka_unit_test(test_plan_textures),
        cmocka_unit_test(test_restore_off_is_caught),
        cmocka_unit_test(test_adopted_context_not_current),
        cmocka_unit_test(test_other_device_current),
        cmocka_unit_test(test_other_context_current),
        cmocka_unit_test(test_deleted_current_program),
        cmocka_unit_test(test_host_errors_kept),
        cmocka_unit_test(test_profile_under_host_query),
        cmocka_unit_test(test_host_display_kept),
        cmocka_unit_test(test_owned_context_switched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
