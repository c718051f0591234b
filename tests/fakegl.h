/*
 * A fake GL table for tests that need no GPU: every entry point a device
 * calls, silent (names from one counter, every query succeeds, maps
 * return a static block, fences are signalled). Tests override the
 * entries they watch: test_fake records the order of calls,
 * test_glsl_strict the shader sources.
 */
#ifndef GLC_TEST_FAKEGL_H
#define GLC_TEST_FAKEGL_H

#include "device.h"

#include <string.h>

static GLuint fakegl_next_name = 1;
static unsigned char fakegl_mapped[1 << 16];

static GLenum GL_APIENTRY fg_GetError(void) { return GL_NO_ERROR; }
static void GL_APIENTRY fg_GenBuffers(GLsizei n, GLuint *b) { while (n--) *b++ = fakegl_next_name++; }
static void GL_APIENTRY fg_DeleteBuffers(GLsizei n, const GLuint *b) { (void)n; (void)b; }
static void GL_APIENTRY fg_BindBuffer(GLenum t, GLuint b) { (void)t; (void)b; }
static void GL_APIENTRY fg_BufferData(GLenum t, GLsizeiptr s, const void *d, GLenum u)
{
    (void)t; (void)s; (void)d; (void)u;
}
static void GL_APIENTRY fg_BufferSubData(GLenum t, GLintptr o, GLsizeiptr s, const void *d)
{
    (void)t; (void)o; (void)s; (void)d;
}
static void *GL_APIENTRY fg_MapBufferRange(GLenum t, GLintptr o, GLsizeiptr l, GLbitfield a)
{
    (void)t; (void)o; (void)l; (void)a;
    return fakegl_mapped;
}
static GLboolean GL_APIENTRY fg_UnmapBuffer(GLenum t) { (void)t; return GL_TRUE; }
static GLuint GL_APIENTRY fg_CreateShader(GLenum t) { (void)t; return fakegl_next_name++; }
static void GL_APIENTRY fg_ShaderSource(GLuint s, GLsizei c, const GLchar *const *str, const GLint *l)
{
    (void)s; (void)c; (void)str; (void)l;
}
static void GL_APIENTRY fg_Name(GLuint s) { (void)s; }
static void GL_APIENTRY fg_GetShaderiv(GLuint s, GLenum p, GLint *v) { (void)s; (void)p; *v = GL_TRUE; }
static GLuint GL_APIENTRY fg_CreateProgram(void) { return fakegl_next_name++; }
static void GL_APIENTRY fg_Attach(GLuint p, GLuint s) { (void)p; (void)s; }
static void GL_APIENTRY fg_GetProgramiv(GLuint p, GLenum n, GLint *v) { (void)p; (void)n; *v = GL_TRUE; }
static GLint GL_APIENTRY fg_GetUniformLocation(GLuint p, const GLchar *n)
{
    (void)p;
    return strcmp(n, "glc_p") == 0 ? 0 : 1;
}
static void GL_APIENTRY fg_Uniform1ui(GLint l, GLuint v) { (void)l; (void)v; }
static void GL_APIENTRY fg_Uniform1uiv(GLint l, GLsizei c, const GLuint *v) { (void)l; (void)c; (void)v; }
static void GL_APIENTRY fg_BindBufferRange(GLenum t, GLuint i, GLuint b, GLintptr o, GLsizeiptr s)
{
    (void)t; (void)i; (void)b; (void)o; (void)s;
}
static void GL_APIENTRY fg_DispatchCompute(GLuint x, GLuint y, GLuint z) { (void)x; (void)y; (void)z; }
static void GL_APIENTRY fg_DispatchIndirect(GLintptr o) { (void)o; }
static void GL_APIENTRY fg_MemoryBarrier(GLbitfield b) { (void)b; }
static void GL_APIENTRY fg_Flush(void) {}
static GLsync GL_APIENTRY fg_FenceSync(GLenum c, GLbitfield f)
{
    (void)c; (void)f;
    return (GLsync)fakegl_mapped;
}
static GLenum GL_APIENTRY fg_ClientWaitSync(GLsync s, GLbitfield f, GLuint64 t)
{
    (void)s; (void)f; (void)t;
    return GL_ALREADY_SIGNALED;
}
static void GL_APIENTRY fg_DeleteSync(GLsync s) { (void)s; }
static GLuint fakegl_next_texture = 100; /* apart from the other names */
static void GL_APIENTRY fg_GenTextures(GLsizei n, GLuint *t) { while (n--) *t++ = fakegl_next_texture++; }
static void GL_APIENTRY fg_DeleteTextures(GLsizei n, const GLuint *t) { (void)n; (void)t; }
static void GL_APIENTRY fg_ActiveTexture(GLenum u) { (void)u; }
static void GL_APIENTRY fg_CopyBufferSubData(GLenum a, GLenum b, GLintptr c, GLintptr d,
                                              GLsizeiptr e)
{
    (void)a; (void)b; (void)c; (void)d; (void)e;
}

/* gl: every entry above; names restart at 1 */
static void fakegl_fill(glc__gl *gl)
{
    memset(gl, 0, sizeof *gl);
    fakegl_next_name = 1;
    gl->glGetError = fg_GetError;
    gl->glGenBuffers = fg_GenBuffers;
    gl->glDeleteBuffers = fg_DeleteBuffers;
    gl->glBindBuffer = fg_BindBuffer;
    gl->glBufferData = fg_BufferData;
    gl->glBufferSubData = fg_BufferSubData;
    gl->glMapBufferRange = fg_MapBufferRange;
    gl->glUnmapBuffer = fg_UnmapBuffer;
    gl->glCreateShader = fg_CreateShader;
    gl->glShaderSource = fg_ShaderSource;
    gl->glCompileShader = fg_Name;
    gl->glDeleteShader = fg_Name;
    gl->glGetShaderiv = fg_GetShaderiv;
    gl->glCreateProgram = fg_CreateProgram;
    gl->glAttachShader = fg_Attach;
    gl->glDetachShader = fg_Attach;
    gl->glLinkProgram = fg_Name;
    gl->glGetProgramiv = fg_GetProgramiv;
    gl->glDeleteProgram = fg_Name;
    gl->glUseProgram = fg_Name;
    gl->glGetUniformLocation = fg_GetUniformLocation;
    gl->glUniform1ui = fg_Uniform1ui;
    gl->glUniform1uiv = fg_Uniform1uiv;
    gl->glBindBufferRange = fg_BindBufferRange;
    gl->glDispatchCompute = fg_DispatchCompute;
    gl->glDispatchComputeIndirect = fg_DispatchIndirect;
    gl->glMemoryBarrier = fg_MemoryBarrier;
    gl->glFlush = fg_Flush;
    gl->glFinish = fg_Flush; /* (the same shape: no arguments) */
    gl->glFenceSync = fg_FenceSync;
    gl->glClientWaitSync = fg_ClientWaitSync;
    gl->glDeleteSync = fg_DeleteSync;
    gl->glCopyBufferSubData = fg_CopyBufferSubData;
    gl->glGenTextures = fg_GenTextures;
    gl->glDeleteTextures = fg_DeleteTextures;
    gl->glBindTexture = fg_BindBuffer; /* (the same shape: a target and a name) */
    gl->glActiveTexture = fg_ActiveTexture;
}

#endif
