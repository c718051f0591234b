/*
 * Save and restore the slice of GL state a library call changes, for an
 * adopted (host-owned) context: the host must find its state exactly as it
 * left it. Only what the call declares it touches is queried, so the cost
 * scales with the call, and nothing is done for owned contexts.
 *
 * Never touched at all: GL_ELEMENT_ARRAY_BUFFER (it is VAO state) and
 * GL_ARRAY_BUFFER; uploads use the copy-write binding, reads copy-read.
 */
#ifndef GLC_GLSTATE_H
#define GLC_GLSTATE_H

#include "gl.h"

enum {
    GLC__TOUCH_PROGRAM = 1u << 0,  /* glUseProgram */
    GLC__TOUCH_COPY = 1u << 1,     /* GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER */
    GLC__TOUCH_SSBO = 1u << 2,     /* generic + indexed SSBO 0..nssbo-1 */
    GLC__TOUCH_INDIRECT = 1u << 3, /* GL_DISPATCH_INDIRECT_BUFFER */
    GLC__TOUCH_UBO = 1u << 4,      /* generic + indexed UBO 0..n-1 */
    GLC__TOUCH_IMAGE = 1u << 5,    /* image unit 0 */
    GLC__TOUCH_TEXTURE = 1u << 6,  /* GL_TEXTURE_2D of the active texture unit */
    GLC__TOUCH_TEXEL = 1u << 7     /* the active unit; buffer textures of units 0..TEXEL_UNITS-1 */
};

#define GLC__TEXEL_UNITS 4 /* texture units a dispatch's GLC_BIND_TEXEL(_UINT) bindings may take */

#define GLC__MAX_SAVED_SSBO 16

typedef struct glc__glstate {
    unsigned mask;
    int n; /* indexed SSBO and UBO bindings saved */
    GLint program, copy_read, copy_write, indirect, ssbo, ubo;
    int program_deleted; /* the host deleted its current program: it dies when unbound */
    GLint image[6];      /* unit 0: name, level, layered, layer, access, format */
    GLint texture_2d;
    GLint active_unit, texel_at[GLC__TEXEL_UNITS];
    struct {
        GLint buffer;
        GLint64 start, size;
    } ssbo_at[GLC__MAX_SAVED_SSBO], ubo_at[GLC__MAX_SAVED_SSBO];
} glc__glstate;

/* Saves what `mask` names; the indexed SSBO/UBO bindings 0..n-1. */
void glc__glstate_save(const glc__gl *gl, glc__glstate *st, unsigned mask, int n);
/* Returns 1 when the host's program could not be restored (it had been
 * deleted while current, so it was freed when the call bound its own):
 * program 0 is current then. Raises no GL error. */
int glc__glstate_restore(const glc__gl *gl, const glc__glstate *st);

#endif
