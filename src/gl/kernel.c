/*
 * Kernel compilation. Every program, built-in or user, is compiled from the
 * same three pieces: a prelude (#version 310 es, GLC_LOCAL_SIZE_X, feature
 * defines, the caller's defines, precision), glsl/common.glsl, and the body,
 * with #line directives so info-log line numbers point into the body.
 * The family includes a kernel or common.glsl names (#include "x.glsl")
 * were inlined at build time (src/tools/embed_glsl.c), each as a source
 * string of its own number (3, 4, ...: the table's comments say which).
 *
 * Built-in kernels are compiled lazily on first use and kept in a per-device
 * list keyed by (name, defines, local size); the list is short (one entry
 * per variant in use), so a linear search is cheaper than hashing.
 *
 * With a cache directory and a driver offering binary formats, linked
 * programs are saved with glGetProgramBinary and reloaded with
 * glProgramBinary; any rejected, corrupt or stale entry falls back to a
 * compile from source, which then rewrites the entry.
 */
#include "kernel.h"

#include "alloc.h"
#include "device.h"
#include "progcache.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_LOCAL_SIZE 64

const char *glc__glsl_find(const char *name)
{
    size_t i;
    for (i = 0; i < glc__glsl_count; i++)
        if (strcmp(glc__glsl_table[i].name, name) == 0)
            return glc__glsl_table[i].text;
    return NULL;
}

static void prelude(struct glc_device *dev, const char *defines, uint32_t local_size_x,
                    char *out, size_t len)
{
    const glc_device_features *f = &dev->info.features;
    int n = snprintf(out, len,
                     "#version 310 es\n"
                     "#define GLC_LOCAL_SIZE_X %u\n"
                     "#define GLC_MAX_PARAMS %d\n",
                     local_size_x, GLC_MAX_PARAMS);
    if (f->subgroup && n > 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n,
                      "#extension GL_KHR_shader_subgroup_basic : require\n"
                      "#extension GL_KHR_shader_subgroup_arithmetic : enable\n"
                      "#define GLC_HAS_SUBGROUP 1\n#define GLC_SUBGROUP_SIZE %u\n",
                      f->subgroup_size);
    /* a kernel that reads GLC_BIND_TEXEL defines GLC_TEXEL: only it enables
     * the extension, whose builtins double llvmpipe's compile of every
     * kernel (test_ops with a cold shader cache: 35 -> 64 s) */
    if (f->texel_buffers && defines && strstr(defines, "GLC_TEXEL") && n > 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, "#extension GL_OES_texture_buffer : require\n");
    if (n > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n,
                 "%s%s"
                 "precision highp float;\nprecision highp int;\n",
                 defines ? defines : "", defines && *defines ? "\n" : "");
}

/* The pieces handed to glShaderSource, in order. */
typedef struct source_parts {
    char head[2048];
    const char *part[5];
    int n;
} source_parts;

static void make_parts(struct glc_device *dev, const char *body, const char *defines,
                       uint32_t local_size_x, source_parts *p)
{
    prelude(dev, defines, local_size_x, p->head, sizeof p->head);
    p->part[0] = p->head;
    p->part[1] = "#line 1 1\n";
    p->part[2] = glc__glsl_find("common");
    p->part[3] = "#line 1 2\n";
    p->part[4] = body;
    p->n = 5;
}

char *glc__kernel_source(struct glc_device *dev, const char *name, const char *body,
                         const char *defines, uint32_t local_size_x)
{
    source_parts p;
    size_t total = 1;
    char *s;
    int i;
    (void)name;
    make_parts(dev, body, defines, local_size_x ? local_size_x : DEFAULT_LOCAL_SIZE, &p);
    for (i = 0; i < p.n; i++)
        total += strlen(p.part[i]);
    s = glc__malloc(total);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (i = 0; i < p.n; i++)
        strcat(s, p.part[i]);
    return s;
}

static glc__progkey program_key(struct glc_device *dev, const source_parts *p)
{
    glc__progkey k = {GLC__FNV_SEED, GLC__FNV_SEED ^ 0x9e3779b97f4a7c15ull};
    const char *id[3];
    int i;
    id[0] = dev->vendor;
    id[1] = dev->renderer;
    id[2] = dev->version;
    for (i = 0; i < 3; i++) {
        k.a = glc__fnv1a(k.a, id[i], strlen(id[i]) + 1);
        k.b = glc__fnv1a(k.b, id[i], strlen(id[i]) + 1);
    }
    for (i = 0; i < p->n; i++) {
        k.a = glc__fnv1a(k.a, p->part[i], strlen(p->part[i]));
        k.b = glc__fnv1a(k.b ^ (uint64_t)i, p->part[i], strlen(p->part[i]));
    }
    return k;
}

static int cache_enabled(struct glc_device *dev)
{
    return dev->cache_dir && dev->info.features.program_binary_formats > 0;
}

static int linked(struct glc_device *dev, GLuint program)
{
    GLint ok = 0;
    dev->gl.glGetProgramiv(program, GL_LINK_STATUS, &ok);
    return ok == GL_TRUE;
}

static GLuint load_cached(struct glc_device *dev, const char *name, glc__progkey key)
{
    uint32_t format;
    void *blob;
    size_t len;
    char why[1200];
    GLuint prog;
    if (glc__progcache_load(dev->cache_dir, key, &format, &blob, &len, why, sizeof why) !=
        GLC_OK) {
        glc__log(dev, GLC_LOG_DEBUG, "kernel %s: program cache: %s", name, why);
        return 0;
    }
    prog = dev->gl.glCreateProgram();
    dev->gl.glProgramBinary(prog, (GLenum)format, blob, (GLsizei)len);
    glc__free(blob);
    if (prog && linked(dev, prog)) {
        glc__log(dev, GLC_LOG_DEBUG, "kernel %s: loaded from the program cache", name);
        return prog;
    }
    glc__log(dev, GLC_LOG_INFO, "kernel %s: the driver rejected its cached binary; compiling",
             name);
    dev->gl.glDeleteProgram(prog);
    return 0;
}

static void store_cached(struct glc_device *dev, const char *name, GLuint prog,
                         glc__progkey key)
{
    GLint len = 0;
    GLsizei got = 0;
    GLenum format = 0;
    void *blob;
    char why[1200];
    dev->gl.glGetProgramiv(prog, GL_PROGRAM_BINARY_LENGTH, &len);
    if (len <= 0 || !(blob = glc__malloc((size_t)len)))
        return;
    dev->gl.glGetProgramBinary(prog, len, &got, &format, blob);
    if (got > 0 && glc__progcache_store(dev->cache_dir, key, format, blob, (size_t)got, why,
                                        sizeof why) != GLC_OK)
        glc__log(dev, GLC_LOG_WARN, "kernel %s: program cache: %s", name, why);
    glc__free(blob);
}

static glc_status info_log_fail(struct glc_device *dev, const char *name, const char *stage,
                                GLuint obj, int is_program)
{
    char log[1536] = "";
    GLsizei n = 0;
    if (is_program)
        dev->gl.glGetProgramInfoLog(obj, (GLsizei)sizeof log, &n, log);
    else
        dev->gl.glGetShaderInfoLog(obj, (GLsizei)sizeof log, &n, log);
    return glc__fail(dev, GLC_ERR_COMPILE, "kernel %s: %s failed: %s", name, stage,
                     n > 0 ? log : "(no info log)");
}

/* Compiles and links (or loads from the cache); returns the program. */
static glc_status build_program(struct glc_device *dev, const char *name, const char *body,
                                const char *defines, uint32_t local_size_x, GLuint *out)
{
    source_parts p;
    glc__progkey key;
    GLuint sh, prog;
    GLint ok = 0;
    glc_status st;
    make_parts(dev, body, defines, local_size_x, &p);
    if (!p.part[2])
        return glc__fail(dev, GLC_ERR_COMPILE, "kernel %s: common.glsl is not embedded", name);
    key = program_key(dev, &p);
    if (cache_enabled(dev) && (prog = load_cached(dev, name, key)) != 0) {
        *out = prog;
        return GLC_OK;
    }
    sh = dev->gl.glCreateShader(GL_COMPUTE_SHADER);
    if (!sh)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "kernel %s: glCreateShader failed", name);
    dev->gl.glShaderSource(sh, p.n, p.part, NULL);
    dev->gl.glCompileShader(sh);
    dev->gl.glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (ok != GL_TRUE) {
        st = info_log_fail(dev, name, "compile", sh, 0);
        dev->gl.glDeleteShader(sh);
        return st;
    }
    prog = dev->gl.glCreateProgram();
    if (cache_enabled(dev))
        dev->gl.glProgramParameteri(prog, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE);
    dev->gl.glAttachShader(prog, sh);
    dev->gl.glLinkProgram(prog);
    dev->gl.glDetachShader(prog, sh);
    dev->gl.glDeleteShader(sh);
    if (!linked(dev, prog)) {
        st = info_log_fail(dev, name, "link", prog, 1);
        dev->gl.glDeleteProgram(prog);
        return st;
    }
    if (cache_enabled(dev))
        store_cached(dev, name, prog, key);
    *out = prog;
    return GLC_OK;
}

static glc_status kernel_new(struct glc_device *dev, const char *name, const char *body,
                             const char *defines, uint32_t local_size_x, int builtin,
                             struct glc_kernel **out)
{
    struct glc_kernel *k = glc__calloc(1, sizeof *k);
    glc_status st;
    if (!k || !(k->name = glc__strdup(name)) ||
        !(k->defines = glc__strdup(defines ? defines : ""))) {
        if (k)
            glc__free(k->name);
        glc__free(k);
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "kernel %s: out of memory", name);
    }
    st = build_program(dev, name, body, defines, local_size_x, &k->program);
    if (st != GLC_OK) {
        glc__free(k->defines);
        glc__free(k->name);
        glc__free(k);
        return st;
    }
    k->dev = dev;
    k->local_size_x = local_size_x;
    k->builtin = builtin;
    k->params_loc = dev->gl.glGetUniformLocation(k->program, "glc_p");
    k->total_loc = dev->gl.glGetUniformLocation(k->program, "glc_total_groups");
    *out = k;
    return GLC_OK;
}

static void free_host(struct glc_kernel *k)
{
    glc__free(k->defines);
    glc__free(k->name);
    glc__free(k);
}

static void kernel_free(struct glc_kernel *k)
{
    k->dev->gl.glDeleteProgram(k->program);
    free_host(k);
}

static glc_status check_local_size(struct glc_device *dev, const char *name, uint32_t *size)
{
    if (*size == 0)
        *size = DEFAULT_LOCAL_SIZE;
    if (*size > dev->info.limits.max_group_size[0] || *size > dev->info.limits.max_invocations)
        return glc__fail(dev, GLC_ERR_BOUNDS,
                         "kernel %s: local size %u exceeds the device's limit (%u x, %u "
                         "invocations)",
                         name, *size, dev->info.limits.max_group_size[0],
                         dev->info.limits.max_invocations);
    return GLC_OK;
}

struct glc__kcache {
    struct glc_kernel *head;
};

glc_status glc__kernel_get(struct glc_device *dev, const char *name, const char *defines,
                           uint32_t local_size_x, struct glc_kernel **out)
{
    struct glc_kernel *k;
    const char *body = glc__glsl_find(name);
    glc_status st;
    if (!body || strcmp(name, "common") == 0)
        return glc__fail(dev, GLC_ERR_INVALID_ARG, "no built-in kernel named \"%s\"", name);
    st = check_local_size(dev, name, &local_size_x);
    if (st != GLC_OK)
        return st;
    if (!defines)
        defines = "";
    glc__use_device(dev); /* callers may allocate for it before any GL call */
    if (!dev->kcache && !(dev->kcache = glc__calloc(1, sizeof *dev->kcache)))
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "kernel %s: out of memory", name);
    for (k = dev->kcache->head; k; k = k->next) {
        if (k->local_size_x == local_size_x && strcmp(k->name, name) == 0 &&
            strcmp(k->defines, defines) == 0) {
            *out = k;
            return GLC_OK;
        }
    }
    /* a compile goes into whatever context is current: the cache is this
     * device's context's, so never build (and keep) a program elsewhere */
    if ((st = glc__check_context(dev)) != GLC_OK)
        return st;
    st = kernel_new(dev, name, body, defines, local_size_x, 1, &k);
    if (st != GLC_OK)
        return st;
    k->next = dev->kcache->head;
    dev->kcache->head = k;
    *out = k;
    return GLC_OK;
}

void glc__kcache_destroy(struct glc_device *dev, int delete_programs)
{
    struct glc_kernel *k, *next;
    if (!dev->kcache)
        return;
    for (k = dev->kcache->head; k; k = next) {
        next = k->next;
        if (delete_programs)
            kernel_free(k);
        else
            free_host(k);
    }
    glc__free(dev->kcache);
    dev->kcache = NULL;
}

glc_status glc_kernel_create(glc_device *dev, const glc_kernel_desc *desc, glc_kernel **out)
{
    glc__glstate gs;
    uint32_t local = desc ? desc->local_size_x : 0;
    const char *name = desc && desc->name ? desc->name : "user";
    glc_status st;
    GLC__ARG(NULL, dev);
    GLC__ARG(dev, desc && desc->source && out);
    st = check_local_size(dev, name, &local);
    if (st != GLC_OK)
        return st;
    st = glc__enter(dev, 0, 0, &gs);
    if (st != GLC_OK)
        return st;
    st = kernel_new(dev, name, desc->source, desc->defines, local, 0, out);
    if (st == GLC_OK)
        dev->live_objects++;
    glc__leave(dev, &gs);
    return st;
}

void glc_kernel_destroy(glc_kernel *k)
{
    glc__glstate gs;
    glc_device *dev;
    if (!k || k->builtin)
        return;
    dev = k->dev;
    if (glc__enter(dev, 0, 0, &gs) == GLC_OK) {
        kernel_free(k);
        glc__leave(dev, &gs);
    } else {
        free_host(k);
    }
    dev->live_objects--;
}
