/*
 * The one list of GL entry points the library calls. Every GL call goes
 * through a glc__gl table held by the device, loaded once from the EGL
 * driver (or, in tests, filled with a recording fake), so no file calls a
 * GL function directly and the call order can be asserted without a GPU.
 *
 * X(return type, name, parameter list). GLC__GL_CORE are ES 3.1 core and
 * must all resolve; GLC__GL_EXT are extension entry points that may be NULL
 * and are used only when the extension string says so (glvnd returns
 * non-NULL stubs for any gl* name, so a pointer proves nothing).
 */
#ifndef GLC_GL_H
#define GLC_GL_H

#ifndef GL_GLES_PROTOTYPES
#define GL_GLES_PROTOTYPES 0 /* no direct calls: everything goes through glc__gl */
#endif
#include <GLES3/gl31.h>
#include <GLES2/gl2ext.h>

#define GLC__GL_CORE(X)                                                                     \
    X(GLenum, glGetError, (void))                                                           \
    X(const GLubyte *, glGetString, (GLenum name))                                          \
    X(const GLubyte *, glGetStringi, (GLenum name, GLuint index))                           \
    X(void, glGetIntegerv, (GLenum pname, GLint *data))                                     \
    X(void, glGetIntegeri_v, (GLenum target, GLuint index, GLint *data))                    \
    X(void, glGetInteger64v, (GLenum pname, GLint64 *data))                                 \
    X(void, glGetInteger64i_v, (GLenum target, GLuint index, GLint64 *data))                \
    X(void, glGenBuffers, (GLsizei n, GLuint *buffers))                                     \
    X(void, glDeleteBuffers, (GLsizei n, const GLuint *buffers))                            \
    X(GLboolean, glIsBuffer, (GLuint buffer))                                               \
    X(void, glBindBuffer, (GLenum target, GLuint buffer))                                   \
    X(void, glBindBufferBase, (GLenum target, GLuint index, GLuint buffer))                 \
    X(void, glBindBufferRange, (GLenum target, GLuint index, GLuint buffer,                 \
                                GLintptr offset, GLsizeiptr size))                          \
    X(void, glBufferData, (GLenum target, GLsizeiptr size, const void *data, GLenum usage)) \
    X(void, glBufferSubData, (GLenum target, GLintptr offset, GLsizeiptr size,              \
                              const void *data))                                            \
    X(void, glCopyBufferSubData, (GLenum rt, GLenum wt, GLintptr ro, GLintptr wo,           \
                                  GLsizeiptr size))                                         \
    X(void *, glMapBufferRange, (GLenum target, GLintptr offset, GLsizeiptr length,         \
                                 GLbitfield access))                                        \
    X(GLboolean, glUnmapBuffer, (GLenum target))                                            \
    X(void, glGetBufferParameteri64v, (GLenum target, GLenum pname, GLint64 *params))       \
    X(GLuint, glCreateShader, (GLenum type))                                                \
    X(void, glShaderSource, (GLuint shader, GLsizei count, const GLchar *const *string,      \
                             const GLint *length))                                          \
    X(void, glCompileShader, (GLuint shader))                                               \
    X(void, glGetShaderiv, (GLuint shader, GLenum pname, GLint *params))                    \
    X(void, glGetShaderInfoLog, (GLuint shader, GLsizei max, GLsizei *len, GLchar *log))    \
    X(void, glDeleteShader, (GLuint shader))                                                \
    X(GLuint, glCreateProgram, (void))                                                      \
    X(void, glAttachShader, (GLuint program, GLuint shader))                                \
    X(void, glDetachShader, (GLuint program, GLuint shader))                                \
    X(void, glLinkProgram, (GLuint program))                                                \
    X(void, glGetProgramiv, (GLuint program, GLenum pname, GLint *params))                  \
    X(void, glGetProgramInfoLog, (GLuint program, GLsizei max, GLsizei *len, GLchar *log))  \
    X(void, glDeleteProgram, (GLuint program))                                              \
    X(void, glUseProgram, (GLuint program))                                                 \
    X(GLint, glGetUniformLocation, (GLuint program, const GLchar *name))                    \
    X(void, glUniform1ui, (GLint location, GLuint v0))                                      \
    X(void, glUniform1uiv, (GLint location, GLsizei count, const GLuint *value))            \
    X(void, glProgramParameteri, (GLuint program, GLenum pname, GLint value))               \
    X(void, glGetProgramBinary, (GLuint program, GLsizei size, GLsizei *length,             \
                                 GLenum *format, void *binary))                             \
    X(void, glProgramBinary, (GLuint program, GLenum format, const void *binary,            \
                              GLsizei length))                                              \
    X(void, glDispatchCompute, (GLuint x, GLuint y, GLuint z))                              \
    X(void, glDispatchComputeIndirect, (GLintptr indirect))                                 \
    X(void, glMemoryBarrier, (GLbitfield barriers))                                         \
    X(void, glFinish, (void))                                                               \
    X(void, glFlush, (void))                                                                \
    X(GLsync, glFenceSync, (GLenum condition, GLbitfield flags))                            \
    X(GLenum, glClientWaitSync, (GLsync sync, GLbitfield flags, GLuint64 timeout))          \
    X(void, glDeleteSync, (GLsync sync))                                                    \
    X(void, glBindImageTexture, (GLuint unit, GLuint texture, GLint level, GLboolean layered, \
                                 GLint layer, GLenum access, GLenum format))                \
    X(GLboolean, glIsTexture, (GLuint texture))                                             \
    X(void, glBindTexture, (GLenum target, GLuint texture))                                 \
    X(void, glGenTextures, (GLsizei n, GLuint *textures))                                   \
    X(void, glDeleteTextures, (GLsizei n, const GLuint *textures))                          \
    X(void, glActiveTexture, (GLenum texture))                                              \
    X(void, glGetTexParameteriv, (GLenum target, GLenum pname, GLint *params))              \
    X(void, glGetTexLevelParameteriv, (GLenum target, GLint level, GLenum pname,            \
                                       GLint *params))

#define GLC__GL_EXT(X)                                                                      \
    X(void, glBufferStorageEXT, (GLenum target, GLsizeiptr size, const void *data,          \
                                 GLbitfield flags))                                         \
    X(GLenum, glGetGraphicsResetStatusEXT, (void))                                          \
    X(void, glTexBufferRangeOES, (GLenum target, GLenum internalformat, GLuint buffer,       \
                                  GLintptr offset, GLsizeiptr size))                        \
    X(void, glGenQueriesEXT, (GLsizei n, GLuint *ids))                                      \
    X(void, glDeleteQueriesEXT, (GLsizei n, const GLuint *ids))                             \
    X(void, glBeginQueryEXT, (GLenum target, GLuint id))                                    \
    X(void, glEndQueryEXT, (GLenum target))                                                 \
    X(void, glQueryCounterEXT, (GLuint id, GLenum target))                                  \
    X(void, glGetQueryivEXT, (GLenum target, GLenum pname, GLint *params))                  \
    X(void, glGetQueryObjectui64vEXT, (GLuint id, GLenum pname, GLuint64 *params))          \
    X(void, glGetQueryObjectuivEXT, (GLuint id, GLenum pname, GLuint *params))

typedef struct glc__gl {
#define GLC__GL_MEMBER(ret, name, params) ret(GL_APIENTRY *name) params;
    GLC__GL_CORE(GLC__GL_MEMBER)
    GLC__GL_EXT(GLC__GL_MEMBER)
#undef GLC__GL_MEMBER
} glc__gl;

#endif
