/*
 * GL state save/restore for adopted contexts (see glstate.h). Indexed
 * bindings are restored with glBindBufferRange when the host bound a range
 * and glBindBufferBase otherwise (size 0 means "whole buffer" or "nothing
 * bound"); the generic binding is restored after the indexed ones because
 * glBindBufferBase/Range overwrite it.
 */
#include "glstate.h"

static void save_indexed(const glc__gl *gl, GLenum binding, GLenum start, GLenum size,
                         GLuint i, GLint *buf, GLint64 *st, GLint64 *sz)
{
    gl->glGetIntegeri_v(binding, i, buf);
    gl->glGetInteger64i_v(start, i, st);
    gl->glGetInteger64i_v(size, i, sz);
}

static void restore_indexed(const glc__gl *gl, GLenum target, GLuint i, GLint buf,
                            GLint64 start, GLint64 size)
{
    if (buf != 0 && size > 0)
        gl->glBindBufferRange(target, i, (GLuint)buf, (GLintptr)start, (GLsizeiptr)size);
    else
        gl->glBindBufferBase(target, i, (GLuint)buf);
}

void glc__glstate_save(const glc__gl *gl, glc__glstate *st, unsigned mask, int n)
{
    int i;
    st->mask = mask;
    st->n = n < GLC__MAX_SAVED_SSBO ? n : GLC__MAX_SAVED_SSBO;
    st->program_deleted = 0;
    if (mask & GLC__TOUCH_PROGRAM) {
        GLint deleted = GL_FALSE;
        gl->glGetIntegerv(GL_CURRENT_PROGRAM, &st->program);
        /* a program deleted while current lives only while it stays current:
         * once the call binds its own, the name is gone and binding it back
         * would raise GL_INVALID_VALUE */
        if (st->program)
            gl->glGetProgramiv((GLuint)st->program, GL_DELETE_STATUS, &deleted);
        st->program_deleted = deleted == GL_TRUE;
    }
    if (mask & GLC__TOUCH_COPY) {
        gl->glGetIntegerv(GL_COPY_READ_BUFFER_BINDING, &st->copy_read);
        gl->glGetIntegerv(GL_COPY_WRITE_BUFFER_BINDING, &st->copy_write);
    }
    if (mask & GLC__TOUCH_INDIRECT)
        gl->glGetIntegerv(GL_DISPATCH_INDIRECT_BUFFER_BINDING, &st->indirect);
    if (mask & GLC__TOUCH_SSBO) {
        gl->glGetIntegerv(GL_SHADER_STORAGE_BUFFER_BINDING, &st->ssbo);
        for (i = 0; i < st->n; i++)
            save_indexed(gl, GL_SHADER_STORAGE_BUFFER_BINDING, GL_SHADER_STORAGE_BUFFER_START,
                         GL_SHADER_STORAGE_BUFFER_SIZE, (GLuint)i, &st->ssbo_at[i].buffer,
                         &st->ssbo_at[i].start, &st->ssbo_at[i].size);
    }
    if (mask & GLC__TOUCH_IMAGE) {
        static const GLenum q[6] = {GL_IMAGE_BINDING_NAME,  GL_IMAGE_BINDING_LEVEL,
                                    GL_IMAGE_BINDING_LAYERED, GL_IMAGE_BINDING_LAYER,
                                    GL_IMAGE_BINDING_ACCESS, GL_IMAGE_BINDING_FORMAT};
        for (i = 0; i < 6; i++)
            gl->glGetIntegeri_v(q[i], 0, &st->image[i]);
    }
    if (mask & GLC__TOUCH_TEXTURE)
        gl->glGetIntegerv(GL_TEXTURE_BINDING_2D, &st->texture_2d);
    if (mask & GLC__TOUCH_TEXEL) {
        gl->glGetIntegerv(GL_ACTIVE_TEXTURE, &st->active_unit);
        for (i = 0; i < GLC__TEXEL_UNITS; i++) {
            gl->glActiveTexture(GL_TEXTURE0 + (GLenum)i);
            gl->glGetIntegerv(GL_TEXTURE_BINDING_BUFFER_OES, &st->texel_at[i]);
        }
        gl->glActiveTexture((GLenum)st->active_unit);
    }
    if (mask & GLC__TOUCH_UBO) {
        gl->glGetIntegerv(GL_UNIFORM_BUFFER_BINDING, &st->ubo);
        for (i = 0; i < st->n; i++)
            save_indexed(gl, GL_UNIFORM_BUFFER_BINDING, GL_UNIFORM_BUFFER_START,
                         GL_UNIFORM_BUFFER_SIZE, (GLuint)i, &st->ubo_at[i].buffer,
                         &st->ubo_at[i].start, &st->ubo_at[i].size);
    }
}

int glc__glstate_restore(const glc__gl *gl, const glc__glstate *st)
{
    int i, lost = 0;
    if (st->mask & GLC__TOUCH_PROGRAM) {
        GLint now = 0;
        if (st->program_deleted)
            gl->glGetIntegerv(GL_CURRENT_PROGRAM, &now);
        /* still current (the call dispatched nothing): it lives on as it is */
        if (!st->program_deleted || now != st->program) {
            lost = st->program_deleted;
            gl->glUseProgram(lost ? 0u : (GLuint)st->program);
        }
    }
    if (st->mask & GLC__TOUCH_COPY) {
        gl->glBindBuffer(GL_COPY_READ_BUFFER, (GLuint)st->copy_read);
        gl->glBindBuffer(GL_COPY_WRITE_BUFFER, (GLuint)st->copy_write);
    }
    if (st->mask & GLC__TOUCH_INDIRECT)
        gl->glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, (GLuint)st->indirect);
    if (st->mask & GLC__TOUCH_SSBO) {
        for (i = 0; i < st->n; i++)
            restore_indexed(gl, GL_SHADER_STORAGE_BUFFER, (GLuint)i, st->ssbo_at[i].buffer,
                            st->ssbo_at[i].start, st->ssbo_at[i].size);
        gl->glBindBuffer(GL_SHADER_STORAGE_BUFFER, (GLuint)st->ssbo);
    }
    if (st->mask & GLC__TOUCH_IMAGE)
        gl->glBindImageTexture(0, (GLuint)st->image[0], st->image[1],
                               st->image[2] ? GL_TRUE : GL_FALSE, st->image[3],
                               (GLenum)st->image[4], (GLenum)st->image[5]);
    if (st->mask & GLC__TOUCH_TEXTURE)
        gl->glBindTexture(GL_TEXTURE_2D, (GLuint)st->texture_2d);
    if (st->mask & GLC__TOUCH_TEXEL) {
        for (i = 0; i < GLC__TEXEL_UNITS; i++) {
            gl->glActiveTexture(GL_TEXTURE0 + (GLenum)i);
            gl->glBindTexture(GL_TEXTURE_BUFFER_OES, (GLuint)st->texel_at[i]);
        }
        gl->glActiveTexture((GLenum)st->active_unit);
    }
    if (st->mask & GLC__TOUCH_UBO) {
        for (i = 0; i < st->n; i++)
            restore_indexed(gl, GL_UNIFORM_BUFFER, (GLuint)i, st->ubo_at[i].buffer,
                            st->ubo_at[i].start, st->ubo_at[i].size);
        gl->glBindBuffer(GL_UNIFORM_BUFFER, (GLuint)st->ubo);
    }
    return lost;
}
