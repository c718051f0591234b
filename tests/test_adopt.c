/*
 * Platform CURRENT: glcompute adopts a host application's EGL context and
 * every call leaves the host's GL state exactly as it found it (program,
 * generic and indexed SSBO/UBO bindings, copy and indirect bindings, the
 * VAO's element buffer). The snapshot here is taken with the host's own GL
 * calls, independent of the library's save/restore code; one case turns the
 * restore off to show the snapshot catches a change.
 */
#define GL_GLES_PROTOTYPES 1 /* this test is the host: it calls GL directly */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl31.h>

#include "testutil.h"

#include "device.h"

typedef struct host {
    EGLDisplay dpy;
    EGLContext ctx;
    GLuint buf[6], prog, vao;
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
    for (i = 0; i < 2; i++) {
        glGetIntegeri_v(GL_UNIFORM_BUFFER_BINDING, (GLuint)i, &s->v[n++]);
        glGetInteger64i_v(GL_UNIFORM_BUFFER_START, (GLuint)i, &s->w[m++]);
        glGetInteger64i_v(GL_UNIFORM_BUFFER_SIZE, (GLuint)i, &s->w[m++]);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_state_preserved),
        cmocka_unit_test(test_restore_off_is_caught),
        cmocka_unit_test(test_adopted_context_not_current),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
