/*
 * The recording fake GL table: a device over fake entry points records
 * every GL call, so the exact order of uploads, barriers and dispatches is
 * asserted without a GPU. Shows: reads issue GL_BUFFER_UPDATE_BARRIER_BIT
 * only after a shader write; dependent dispatches get one
 * GL_SHADER_STORAGE_BARRIER_BIT, independent ones none; GLC_BARRIERS=always
 * puts one between every two.
 */
#include "testutil.h"

#include "buffer.h"
#include "device.h"

static char calls[16384];
static unsigned char mapped[1 << 16];
static GLuint next_name = 1;

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

static GLenum GL_APIENTRY f_GetError(void) { return GL_NO_ERROR; }
static void GL_APIENTRY f_GenBuffers(GLsizei n, GLuint *b) { while (n--) *b++ = next_name++; }
static void GL_APIENTRY f_DeleteBuffers(GLsizei n, const GLuint *b) { (void)n; rec("del(%u)", *b); }
static void GL_APIENTRY f_BindBuffer(GLenum t, GLuint b) { (void)t; (void)b; }
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
static GLboolean GL_APIENTRY f_UnmapBuffer(GLenum t) { (void)t; return GL_TRUE; }
static GLuint GL_APIENTRY f_CreateShader(GLenum t) { (void)t; return next_name++; }
static void GL_APIENTRY f_ShaderSource(GLuint s, GLsizei c, const GLchar *const *str, const GLint *l)
{
    (void)s; (void)c; (void)str; (void)l;
}
static void GL_APIENTRY f_Shader(GLuint s) { (void)s; }
static void GL_APIENTRY f_GetShaderiv(GLuint s, GLenum p, GLint *v) { (void)s; (void)p; *v = GL_TRUE; }
static GLuint GL_APIENTRY f_CreateProgram(void) { return next_name++; }
static void GL_APIENTRY f_Attach(GLuint p, GLuint s) { (void)p; (void)s; }
static void GL_APIENTRY f_GetProgramiv(GLuint p, GLenum n, GLint *v) { (void)p; (void)n; *v = GL_TRUE; }
static void GL_APIENTRY f_DeleteProgram(GLuint p) { (void)p; }
static void GL_APIENTRY f_UseProgram(GLuint p) { rec("use(%u)", p); }
static GLint GL_APIENTRY f_GetUniformLocation(GLuint p, const GLchar *n)
{
    (void)p;
    return strcmp(n, "glc_p") == 0 ? 0 : 1;
}
static void GL_APIENTRY f_Uniform1ui(GLint l, GLuint v) { (void)l; (void)v; }
static void GL_APIENTRY f_Uniform1uiv(GLint l, GLsizei c, const GLuint *v) { (void)l; (void)c; (void)v; }
static void GL_APIENTRY f_BindBufferRange(GLenum t, GLuint i, GLuint b, GLintptr o, GLsizeiptr s)
{
    (void)t;
    rec("bind%u(%u,%ld,%ld)", i, b, (long)o, (long)s);
}
static void GL_APIENTRY f_DispatchCompute(GLuint x, GLuint y, GLuint z) { rec("dispatch(%u,%u,%u)", x, y, z); }
static void GL_APIENTRY f_MemoryBarrier(GLbitfield b)
{
    rec("%s", b == GL_SHADER_STORAGE_BARRIER_BIT ? "BARRIER(ssbo)"
              : b == GL_BUFFER_UPDATE_BARRIER_BIT ? "BARRIER(update)" : "BARRIER(?)");
}
static void GL_APIENTRY f_Flush(void) { rec("flush"); }
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
    return GL_ALREADY_SIGNALED;
}
static void GL_APIENTRY f_DeleteSync(GLsync s) { (void)s; }

static glc_device *fake_device(void)
{
    glc__gl gl;
    glc_device_limits lim;
    glc_device *dev;
    memset(&gl, 0, sizeof gl);
    gl.glGetError = f_GetError;
    gl.glGenBuffers = f_GenBuffers;
    gl.glDeleteBuffers = f_DeleteBuffers;
    gl.glBindBuffer = f_BindBuffer;
    gl.glBufferData = f_BufferData;
    gl.glBufferSubData = f_BufferSubData;
    gl.glMapBufferRange = f_MapBufferRange;
    gl.glUnmapBuffer = f_UnmapBuffer;
    gl.glCreateShader = f_CreateShader;
    gl.glShaderSource = f_ShaderSource;
    gl.glCompileShader = f_Shader;
    gl.glDeleteShader = f_Shader;
    gl.glGetShaderiv = f_GetShaderiv;
    gl.glCreateProgram = f_CreateProgram;
    gl.glAttachShader = f_Attach;
    gl.glDetachShader = f_Attach;
    gl.glLinkProgram = f_Shader;
    gl.glGetProgramiv = f_GetProgramiv;
    gl.glDeleteProgram = f_DeleteProgram;
    gl.glUseProgram = f_UseProgram;
    gl.glGetUniformLocation = f_GetUniformLocation;
    gl.glUniform1ui = f_Uniform1ui;
    gl.glUniform1uiv = f_Uniform1uiv;
    gl.glBindBufferRange = f_BindBufferRange;
    gl.glDispatchCompute = f_DispatchCompute;
    gl.glMemoryBarrier = f_MemoryBarrier;
    gl.glFlush = f_Flush;
    gl.glFenceSync = f_FenceSync;
    gl.glClientWaitSync = f_ClientWaitSync;
    gl.glDeleteSync = f_DeleteSync;
    memset(&lim, 0, sizeof lim);
    lim.max_group_count[0] = lim.max_group_count[1] = lim.max_group_count[2] = 65535;
    lim.max_group_size[0] = 1024;
    lim.max_invocations = 1024;
    lim.max_ssbo_blocks = 8;
    lim.max_ssbo_bindings = 8;
    lim.max_ssbo_size = 1u << 27;
    lim.ssbo_offset_alignment = 16;
    assert_int_equal(glc__device_create_fake(&gl, &lim, &dev), GLC_OK);
    calls[0] = '\0';
    next_name = 1;
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
    size_t off0 = 0;
    (void)state;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b), GLC_OK);
    assert_int_equal(glc_buffer_write(b, 16, 16, x), GLC_OK);
    assert_int_equal(glc_buffer_read(b, 0, 16, x), GLC_OK);
    /* no shader wrote it: no barrier before the read */
    assert_string_equal(calls, "data(256) sub(16,16) map(0,16) ");
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
    setenv("GLC_BARRIERS", "always", 1);
    calls[0] = '\0';
    dispatch_writes(dev, b, disjoint, 3, 16);
    unsetenv("GLC_BARRIERS");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upload_and_read_barriers),
        cmocka_unit_test(test_dispatch_barriers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
