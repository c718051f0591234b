/*
 * Kernels: the embedded GLSL table (generated from glsl/ at build time),
 * the shared prelude, compile + link with an in-memory cache of built-in
 * programs keyed by (name, defines, local size), and the optional on-disk
 * program-binary cache (progcache.c).
 */
#ifndef GLC_KERNEL_H
#define GLC_KERNEL_H

#include "glcompute.h"
#include "gl.h"

#include <stddef.h>

typedef struct glc__glsl_source {
    const char *name; /* file name without extension: "common", "fill", ... */
    const char *text;
} glc__glsl_source;

extern const glc__glsl_source glc__glsl_table[];
extern const size_t glc__glsl_count;

/* The embedded source of glsl/<name>.comp (or common.glsl), or NULL. */
const char *glc__glsl_find(const char *name);

struct glc_kernel {
    struct glc_device *dev;
    GLuint program;
    char *name;
    char *defines;          /* as given, for the cache key ("" when none) */
    uint32_t local_size_x;
    GLint params_loc;       /* glc_p, or -1 when the kernel reads no params */
    GLint total_loc;        /* glc_total_groups, or -1 */
    /* the uniform values the program holds (uniforms are program state and
     * only dispatches set ours): a dispatch with the same values skips the
     * upload */
    uint32_t last_params[GLC_MAX_PARAMS];
    int last_nparams;       /* 0: none uploaded yet */
    uint32_t last_total;
    int total_set;
    int builtin;            /* owned by the device's cache, not by the user */
    struct glc_kernel *next;
};

/* The built-in kernel glsl/<name>.comp with extra `defines` (may be NULL)
 * and local size x, compiled on first use and cached by the device. */
glc_status glc__kernel_get(struct glc_device *dev, const char *name, const char *defines,
                           uint32_t local_size_x, struct glc_kernel **out);

/* Frees the cache; deletes its programs when delete_programs is set (the
 * device's context is current then; else they are left to the context). */
void glc__kcache_destroy(struct glc_device *dev, int delete_programs);

/* The full source text a kernel is compiled from (prelude + common +
 * body), allocated; for inspection and tests. NULL on OOM. */
char *glc__kernel_source(struct glc_device *dev, const char *name, const char *body,
                         const char *defines, uint32_t local_size_x);

#endif
