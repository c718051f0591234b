/*
 * Buffers: a GL buffer object with a dtype and shape. `write_seq` is the
 * device dispatch sequence number of the last shader write (0: none); a
 * host read or update issues GL_BUFFER_UPDATE_BARRIER_BIT only when a shader
 * wrote the buffer after the last such barrier.
 */
#ifndef GLC_BUFFER_H
#define GLC_BUFFER_H

#include "gl.h"
#include "glcompute.h"

struct glc_buffer {
    struct glc_device *dev;
    GLuint name;
    uint32_t id;         /* hazard-tracker id, unique per device */
    glc_dtype dtype;
    int rank;
    int64_t shape[GLC_MAX_DIMS];
    size_t bytes;        /* the shape's bytes */
    size_t capacity;     /* bytes a binding may span: bytes rounded up to a
                          * whole word (16-bit tensors of odd length) */
    int wrapped;         /* borrowed from the host: never deleted */
    uint64_t write_seq;
    int binds;           /* plan inputs / outputs bound to it (glc_plan_bind_input) */
    int destroyed;       /* glc_buffer_destroy came while bound: freed at the last unbind */
};

/* A plan binding takes (+1) or drops (-1) a hold on buf; dropping the last
 * hold of a buffer destroyed meanwhile frees it. */
void glc__buffer_hold(struct glc_buffer *buf, int delta);

/* Issues GL_BUFFER_UPDATE_BARRIER_BIT if a shader wrote `buf` since the last one. */
void glc__buffer_host_access(struct glc_buffer *buf);

/* glc_buffer_write / glc_buffer_read for a caller that has entered the
 * device with GLC__TOUCH_COPY and checked the range; fn names the public
 * call in messages. */
glc_status glc__buffer_write_in(struct glc_buffer *buf, size_t offset, size_t size,
                                const void *data, const char *fn);
glc_status glc__buffer_read_in(struct glc_buffer *buf, size_t offset, size_t size, void *data,
                               const char *fn);

#endif
