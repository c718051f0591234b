/*
 * The device: EGL context (via device_egl.c), GL entry table, queried limits
 * and features, per-device error message and log, and the enter/leave
 * bracket of GL-touching calls.
 *
 * Invariants: info strings point into the device and live as long as it;
 * errmsg holds the message of the last failure only; limits are final after
 * create (GLC_LIMITS=min clamps them once, here, so every later layer sees
 * one set of numbers); so are the knobs: the GLC_* variables are read once,
 * at create (env.c), and the policies they set (barriers, validation,
 * trace) hold for every session and plan of the device. A failed create
 * leaves its message for the calling thread (glc_device_errmsg(NULL)).
 */
#include "device.h"

#include "alloc.h"
#include "kernel.h"
#include "select.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *level_name(glc_log_level level)
{
    switch (level) {
    case GLC_LOG_ERROR: return "error";
    case GLC_LOG_WARN: return "warn";
    case GLC_LOG_INFO: return "info";
    case GLC_LOG_DEBUG: return "debug";
    }
    return "?";
}

void glc__vlog(struct glc_device *dev, glc_log_level level, glc_status status,
               const char *fmt, va_list ap)
{
    char msg[2048];
    glc_log_level limit;
    if (!dev)
        return;
    limit = dev->log ? dev->log_level : (glc_log_level)dev->env.log; /* GLC_LOG */
    if (level > limit)
        return;
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (dev->log)
        dev->log(dev->log_user, level, status, msg);
    else
        fprintf(stderr, "glcompute %s: %s\n", level_name(level), msg);
}

void glc__log(struct glc_device *dev, glc_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    glc__vlog(dev, level, GLC_OK, fmt, ap);
    va_end(ap);
}

static void log_status(struct glc_device *dev, glc_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    glc__vlog(dev, GLC_LOG_ERROR, status, fmt, ap);
    va_end(ap);
}

/* The message of this thread's last call that failed with no device to
 * hold it: a failed glc_device_create ("" after one that succeeded: a
 * failed creation leaves no device to ask), or a call given a NULL handle. */
static _Thread_local char tls_errmsg[2048];

glc_status glc__fail(struct glc_device *dev, glc_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!dev) {
        vsnprintf(tls_errmsg, sizeof tls_errmsg, fmt, ap);
        va_end(ap);
        return status;
    }
    vsnprintf(dev->errmsg, sizeof dev->errmsg, fmt, ap);
    va_end(ap);
    log_status(dev, status, "%s", dev->errmsg);
    return status;
}

const char *glc_device_errmsg(const glc_device *dev)
{
    return dev ? dev->errmsg : tls_errmsg;
}

glc_status glc__check_gl(struct glc_device *dev, const char *where)
{
    GLenum e;
    if (!(dev->flags & GLC_DEVICE_DEBUG))
        return GLC_OK;
    e = dev->gl.glGetError();
    if (e == GL_NO_ERROR)
        return GLC_OK;
    if (e == GL_OUT_OF_MEMORY)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "%s: GL_OUT_OF_MEMORY", where);
    return glc__fail(dev, GLC_ERR_GL, "%s: GL error 0x%04x", where, e);
}

/* The device whose context this thread last checked or made current. */
static _Thread_local struct glc_device *tls_checked;

glc_status glc__check_context(struct glc_device *dev)
{
    glc_status s;
    if (!dev->egl)
        return GLC_OK;
    s = glc__egl_ensure_current(dev, dev->egl);
    tls_checked = s == GLC_OK ? dev : NULL;
    return s;
}

/* GLC_DEVICE_DEBUG: the application's pending GL errors, taken aside so the
 * library's checks see only its own. */
static void take_host_errors(struct glc_device *dev)
{
    GLenum e;
    int n = 0;
    dev->nhost_err = 0;
    while (n++ < 8 && (e = dev->gl.glGetError()) != GL_NO_ERROR)
        if (dev->nhost_err < (int)(sizeof dev->host_err / sizeof dev->host_err[0]))
            dev->host_err[dev->nhost_err++] = e;
}

/* Raises each taken error again with a call that fails that way and has no
 * other effect, so the application reads what it would have without us. */
static void give_back_host_errors(struct glc_device *dev)
{
    int i;
    for (i = 0; i < dev->nhost_err; i++) {
        GLint v;
        GLuint sh;
        switch (dev->host_err[i]) {
        case GL_INVALID_ENUM:
            dev->gl.glGetIntegerv(0, &v); /* no such parameter */
            break;
        case GL_INVALID_VALUE:
            dev->gl.glGetStringi(GL_EXTENSIONS, 0xffffffffu); /* past the last index */
            break;
        case GL_INVALID_OPERATION:
            /* a shader's name where a program's is expected */
            sh = dev->gl.glCreateShader(GL_COMPUTE_SHADER);
            dev->gl.glGetProgramiv(sh, GL_LINK_STATUS, &v);
            dev->gl.glDeleteShader(sh);
            break;
        default:
            glc__log(dev, GLC_LOG_WARN,
                     "GLC_DEVICE_DEBUG: the application's pending GL error 0x%04x was read "
                     "by the error check and cannot be raised again",
                     dev->host_err[i]);
            break;
        }
    }
    dev->nhost_err = 0;
}

glc_status glc__enter(struct glc_device *dev, unsigned touch, int nssbo, glc__glstate *st)
{
    glc__use_device(dev); /* what the call allocates is the device's */
    glc__enc_forget_bindings(&dev->enc);
    if (dev->egl) {
        glc_status s = glc__check_context(dev);
        if (s != GLC_OK)
            return s;
    }
    st->mask = 0;
    /* the application's GL work since our last call may have ended in a
     * buffer write: ours waits (buffer.c, NVIDIA's writes in a row) */
    if (dev->adopted && dev->depth == 0)
        dev->wrote_last = 1;
    /* on an owned context every error is ours */
    if (dev->depth++ == 0 && dev->adopted && (dev->flags & GLC_DEVICE_DEBUG))
        take_host_errors(dev);
    if (dev->adopted)
        glc__glstate_save(&dev->gl, st, touch, nssbo);
    return GLC_OK;
}

glc_status glc__enter_hot(struct glc_device *dev, unsigned touch, int nssbo, glc__glstate *st)
{
    if (tls_checked == dev && !dev->adopted && !(dev->flags & GLC_DEVICE_DEBUG)) {
        glc__use_device(dev);
        glc__enc_forget_bindings(&dev->enc);
        st->mask = 0;
        dev->depth++;
        return GLC_OK;
    }
    return glc__enter(dev, touch, nssbo, st);
}

void glc__leave(struct glc_device *dev, glc__glstate *st)
{
    if (dev->adopted && !dev->skip_restore && glc__glstate_restore(&dev->gl, st))
        glc__log(dev, GLC_LOG_WARN,
                 "the application's current program %d had been deleted: it ended when "
                 "glcompute bound its own; program 0 is current now",
                 (int)st->program);
    if (dev->depth > 0 && --dev->depth == 0 && dev->nhost_err)
        give_back_host_errors(dev);
}

/* ---- creation ---- */

static glc_status load_gl(glc_device *dev)
{
#define GLC__GL_LOAD_CORE(ret, name, params)                                             \
    *(void **)&dev->gl.name = glc__egl_proc(dev->egl, #name);                            \
    if (!dev->gl.name)                                                                   \
        return glc__fail(dev, GLC_ERR_UNSUPPORTED, "GL entry point %s not found", #name);
    GLC__GL_CORE(GLC__GL_LOAD_CORE)
#undef GLC__GL_LOAD_CORE
#define GLC__GL_LOAD_EXT(ret, name, params) *(void **)&dev->gl.name = glc__egl_proc(dev->egl, #name);
    GLC__GL_EXT(GLC__GL_LOAD_EXT)
#undef GLC__GL_LOAD_EXT
    return GLC_OK;
}

static void copy_gl_string(glc_device *dev, GLenum name, char *dst, size_t len)
{
    const GLubyte *s = dev->gl.glGetString(name);
    snprintf(dst, len, "%s", s ? (const char *)s : "");
}

static glc_status query_extensions(glc_device *dev)
{
    GLint n = 0, i;
    size_t total = 1, used = 0;
    dev->gl.glGetIntegerv(GL_NUM_EXTENSIONS, &n);
    for (i = 0; i < n; i++) {
        const GLubyte *e = dev->gl.glGetStringi(GL_EXTENSIONS, (GLuint)i);
        total += e ? strlen((const char *)e) + 1 : 0;
    }
    dev->extensions = glc__malloc(total);
    if (!dev->extensions)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "device: out of memory");
    dev->extensions[0] = '\0';
    for (i = 0; i < n; i++) {
        const char *e = (const char *)dev->gl.glGetStringi(GL_EXTENSIONS, (GLuint)i);
        size_t len = e ? strlen(e) : 0;
        if (!len)
            continue;
        if (used)
            dev->extensions[used++] = ' ';
        memcpy(dev->extensions + used, e, len + 1);
        used += len;
    }
    return GLC_OK;
}

static uint32_t get_u32(glc_device *dev, GLenum pname)
{
    GLint v = 0;
    dev->gl.glGetIntegerv(pname, &v);
    return v > 0 ? (uint32_t)v : 0;
}

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* The ES 3.1 minimums (OpenGL ES 3.1 spec, table 20.45 and 20.47). */
static void clamp_to_minimums(glc_device_limits *l)
{
    int i;
    for (i = 0; i < 3; i++) {
        l->max_group_count[i] = min_u32(l->max_group_count[i], 65535);
        l->max_group_size[i] = min_u32(l->max_group_size[i], i < 2 ? 128 : 64);
    }
    l->max_invocations = min_u32(l->max_invocations, 128);
    l->max_shared_bytes = min_u32(l->max_shared_bytes, 16384);
    l->max_ssbo_blocks = min_u32(l->max_ssbo_blocks, 4);
    l->max_ssbo_bindings = min_u32(l->max_ssbo_bindings, 4);
    if (l->max_ssbo_size > (1u << 27))
        l->max_ssbo_size = 1u << 27;
    if (l->ssbo_offset_alignment < 256)
        l->ssbo_offset_alignment = 256;
    l->max_uniform_block_size = min_u32(l->max_uniform_block_size, 16384);
    l->uniform_offset_alignment = 256;
    if (l->max_loop_iterations == 0 || l->max_loop_iterations > 65535)
        l->max_loop_iterations = 65535; /* the smallest cap seen (llvmpipe) */
}

static void query_limits(glc_device *dev)
{
    glc_device_limits *l = &dev->info.limits;
    glc_device_features *f = &dev->info.features;
    GLint64 v64 = 0;
    GLint v;
    int i;
    for (i = 0; i < 3; i++) {
        v = 0;
        dev->gl.glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, (GLuint)i, &v);
        l->max_group_count[i] = v > 0 ? (uint32_t)v : 0;
        v = 0;
        dev->gl.glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_SIZE, (GLuint)i, &v);
        l->max_group_size[i] = v > 0 ? (uint32_t)v : 0;
    }
    l->max_invocations = get_u32(dev, GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS);
    l->max_shared_bytes = get_u32(dev, GL_MAX_COMPUTE_SHARED_MEMORY_SIZE);
    l->max_ssbo_blocks = get_u32(dev, GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS);
    l->max_ssbo_bindings = get_u32(dev, GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS);
    dev->gl.glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &v64);
    l->max_ssbo_size = v64 > 0 ? (uint64_t)v64 : 0;
    l->ssbo_offset_alignment = get_u32(dev, GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT);
    if (l->ssbo_offset_alignment == 0)
        l->ssbo_offset_alignment = 256;
    l->max_uniform_block_size = get_u32(dev, GL_MAX_UNIFORM_BLOCK_SIZE);
    l->uniform_offset_alignment = get_u32(dev, GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT);
    if (l->uniform_offset_alignment == 0)
        l->uniform_offset_alignment = 256;
    /* gallivm (llvmpipe) caps each invocation's loop iterations at 65535 */
    l->max_loop_iterations = strstr(dev->renderer, "llvmpipe") ? 65535 : 0;

    if (glc__has_ext(dev->extensions, "GL_KHR_shader_subgroup")) {
        uint32_t stages = get_u32(dev, GL_SUBGROUP_SUPPORTED_STAGES_KHR);
        if (stages & GL_COMPUTE_SHADER_BIT) {
            f->subgroup = 1;
            f->subgroup_size = get_u32(dev, GL_SUBGROUP_SIZE_KHR);
            f->subgroup_ops = get_u32(dev, GL_SUBGROUP_SUPPORTED_FEATURES_KHR);
        }
    }
    f->timer_query = glc__has_ext(dev->extensions, "GL_EXT_disjoint_timer_query");
    f->buffer_storage = glc__has_ext(dev->extensions, "GL_EXT_buffer_storage");
    f->program_binary_formats = (int)get_u32(dev, GL_NUM_PROGRAM_BINARY_FORMATS);
    f->fp16_arithmetic = glc__has_ext(dev->extensions, "GL_NV_gpu_shader5") ||
                         glc__has_ext(dev->extensions, "GL_AMD_gpu_shader_half_float") ||
                         glc__has_ext(dev->extensions,
                                      "GL_EXT_shader_explicit_arithmetic_types_float16");
    /* buffer textures, where a storage binding's offset is a legal texel
     * offset (so a planner may choose either for any range) */
    if (glc__has_ext(dev->extensions, "GL_OES_texture_buffer") && dev->gl.glTexBufferRangeOES) {
        uint32_t align = get_u32(dev, GL_TEXTURE_BUFFER_OFFSET_ALIGNMENT_OES);
        uint32_t texels = get_u32(dev, GL_MAX_TEXTURE_BUFFER_SIZE_OES);
        if (align && l->ssbo_offset_alignment % align == 0 && texels) {
            f->texel_buffers = 1;
            l->max_texel_buffer_size = texels;
        }
    }
    if (dev->flags & GLC_DEVICE_LIMITS_MIN) {
        f->texel_buffers = 0; /* ES 3.1 core has no buffer textures */
        l->max_texel_buffer_size = 0;
        clamp_to_minimums(l);
        dev->info.limits_clamped = 1;
    }
}

/* The device with its heap, which is this thread's current heap from now
 * on (glc_device_create puts the previous one back on failure). */
static glc_status device_alloc(const glc_device_desc *desc, glc_device **out)
{
    glc__heap *heap;
    glc_device *dev;
    glc_status st = glc__heap_create(desc ? &desc->allocator : NULL, &heap);
    if (st != GLC_OK)
        return st;
    glc__heap_use(heap);
    if (!(dev = glc__calloc(1, sizeof *dev))) {
        glc__heap_release(heap);
        return GLC_ERR_OUT_OF_MEMORY;
    }
    dev->heap = heap;
    glc__env_defaults(&dev->env);
    if (desc) {
        dev->log = desc->log;
        dev->log_user = desc->log_user;
        dev->log_level = desc->log_level ? desc->log_level : GLC_LOG_INFO;
        dev->flags = desc->flags;
    }
    dev->next_buffer_id = 1;
    glc__enc_init(&dev->enc);
    dev->texel_min_bytes = GLC__TEXEL_MIN_BYTES;
    dev->rows_min_macs = GLC__ROWS_MIN_MACS;
    *out = dev;
    return GLC_OK;
}

static void device_free(glc_device *dev)
{
    glc__heap *heap = dev->heap;
    glc__enc_finish(&dev->enc);
    glc__free(dev->extensions);
    glc__free(dev->cache_dir);
    glc__free(dev);
    glc__heap_release(heap);
}

void glc__use_device(const struct glc_device *dev) { glc__heap_use(dev ? dev->heap : NULL); }

/* The policies the environment and the flags set, for every session and
 * plan of the device from its creation on. */
static void apply_policies(glc_device *dev)
{
    dev->barrier_policy = dev->env.barriers == GLC__ENV_BARRIERS_ALWAYS ? GLC__BARRIERS_ALWAYS
                                                                         : GLC__BARRIERS_TRACKED;
    dev->validate = dev->env.validate || (dev->flags & GLC_DEVICE_VALIDATE);
    dev->trace = dev->env.trace == GLC__TRACE_BARRIERS;
    dev->info.barriers = glc__env_word_of(GLC__ENV_BARRIERS, dev->env.barriers);
    dev->info.validate = dev->validate;
}

/* Creates `path` and its missing parents, mode 0700 (the cache holds
 * programs the library loads back: not for other users to write). */
static int make_dirs(const char *path, char *why, size_t len)
{
    char buf[1024];
    struct stat sb;
    size_t i, n = strlen(path);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return 0;
    if (n >= sizeof buf) {
        snprintf(why, len, "path too long");
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (i = 1; i <= n; i++) {
        char c = buf[i];
        if (c != '/' && c != '\0')
            continue;
        buf[i] = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
            snprintf(why, len, "cannot create %s: %s", buf, strerror(errno));
            return -1;
        }
        buf[i] = c;
    }
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(why, len, "not a directory");
        return -1;
    }
    return 1;
}

/* The shader cache directory: created when missing; when that fails, one
 * warning and no cache (rather than a failed write per program). */
static glc_status set_cache_dir(glc_device *dev, const char *dir, const char *source)
{
    char why[1200];
    int made;
    if (!dir || !*dir)
        return GLC_OK;
    made = make_dirs(dir, why, sizeof why);
    if (made < 0) {
        glc__log(dev, GLC_LOG_WARN, "%s \"%s\": %s; the program cache is off", source, dir, why);
        return GLC_OK;
    }
    if (made)
        glc__log(dev, GLC_LOG_INFO, "%s: created %s", source, dir);
    if (!(dev->cache_dir = glc__strdup(dir)))
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "device: out of memory");
    return GLC_OK;
}

/* The platform and device selector from the desc, else the environment,
 * checked together: a selector names an EGL device or a DRM node, which the
 * surfaceless and default platforms (and an adopted context) do not have,
 * and an index names an EGL device, which only the device platform lists
 * (so AUTO with an index tries only that platform). */
static glc_status choose_platform(glc_device *dev, const glc_device_desc *desc,
                                  glc_platform *platform, const char **device)
{
    int from_desc = desc && desc->platform != GLC_PLATFORM_AUTO;
    const char *dsrc = desc && desc->device ? "desc.device " : "GLC_DEVICE=";
    glc__device_sel sel;
    *platform = desc ? desc->platform : GLC_PLATFORM_AUTO;
    if ((unsigned)*platform > GLC_PLATFORM_CURRENT)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "device: desc.platform %d is not a glc_platform", (int)*platform);
    if (*platform == GLC_PLATFORM_AUTO)
        *platform = (glc_platform)dev->env.platform;
    *device = desc && desc->device ? desc->device : dev->env.device[0] ? dev->env.device : NULL;
    if (glc__parse_device(*device, &sel) != GLC_OK)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "desc.device \"%s\": expected an EGL device index or a /dev/dri path",
                         *device);
    if (sel.kind == GLC__SEL_NONE)
        return GLC_OK;
    if (*platform == GLC_PLATFORM_SURFACELESS || *platform == GLC_PLATFORM_DEFAULT ||
        *platform == GLC_PLATFORM_CURRENT)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "%s\"%s\" selects an EGL device, but %s%s has none to select: drop "
                         "one of the two, or use the device or gbm platform",
                         dsrc, *device, from_desc ? "desc.platform " : "GLC_PLATFORM=",
                         glc_platform_name(*platform));
    if (*platform == GLC_PLATFORM_GBM && sel.kind == GLC__SEL_INDEX)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "%s\"%s\" is an EGL device index, but %sgbm takes a /dev/dri path "
                         "(or use the device platform)",
                         dsrc, *device, from_desc ? "desc.platform " : "GLC_PLATFORM=");
    if (*platform == GLC_PLATFORM_AUTO && sel.kind == GLC__SEL_INDEX)
        *platform = GLC_PLATFORM_DEVICE;
    return GLC_OK;
}

glc_status glc_device_create(const glc_device_desc *desc, glc_device **out)
{
    glc_device *dev;
    glc__heap *prev_heap = glc__heap_current();
    glc_platform platform = GLC_PLATFORM_AUTO;
    const char *device = NULL;
    char err[1200];
    glc_status st;
    tls_errmsg[0] = '\0';
    if (!out) {
        snprintf(tls_errmsg, sizeof tls_errmsg,
                 "glc_device_create: invalid argument: out is NULL");
        return GLC_ERR_INVALID_ARG;
    }
    if ((st = device_alloc(desc, &dev)) != GLC_OK) {
        glc__heap_use(prev_heap);
        snprintf(tls_errmsg, sizeof tls_errmsg,
                 "glc_device_create: out of memory (the desc's allocator failed)");
        return st;
    }
    if ((st = glc__env_read(&dev->env, err, sizeof err)) != GLC_OK) {
        st = glc__fail(dev, st, "%s", err);
        goto fail;
    }
    if ((st = choose_platform(dev, desc, &platform, &device)) != GLC_OK)
        goto fail;
    if (dev->env.limits == GLC__LIMITS_MIN)
        dev->flags |= GLC_DEVICE_LIMITS_MIN;
    if (dev->env.debug)
        dev->flags |= GLC_DEVICE_DEBUG;
    st = desc && desc->shader_cache_dir
             ? set_cache_dir(dev, desc->shader_cache_dir, "desc.shader_cache_dir")
             : set_cache_dir(dev, dev->env.shader_cache, "GLC_SHADER_CACHE");
    if (st != GLC_OK)
        goto fail;
    st = glc__egl_open(dev, platform, device, dev->flags, &dev->egl);
    if (st != GLC_OK)
        goto fail;
    dev->adopted = glc__egl_platform(dev->egl) == GLC_PLATFORM_CURRENT;
    st = load_gl(dev);
    if (st != GLC_OK)
        goto fail;
    st = query_extensions(dev);
    if (st != GLC_OK)
        goto fail;
    copy_gl_string(dev, GL_VENDOR, dev->vendor, sizeof dev->vendor);
    copy_gl_string(dev, GL_RENDERER, dev->renderer, sizeof dev->renderer);
    copy_gl_string(dev, GL_VERSION, dev->version, sizeof dev->version);
    copy_gl_string(dev, GL_SHADING_LANGUAGE_VERSION, dev->glsl_version, sizeof dev->glsl_version);
    dev->write_waits = strstr(dev->vendor, "NVIDIA") || strstr(dev->renderer, "NVIDIA");
    dev->wrote_last = 1; /* (what came before is not known) */
    dev->info.platform = glc__egl_platform(dev->egl);
    dev->info.egl_device = glc__egl_device_name(dev->egl);
    dev->info.egl_vendor = glc__egl_vendor(dev->egl);
    dev->info.vendor = dev->vendor;
    dev->info.renderer = dev->renderer;
    dev->info.version = dev->version;
    dev->info.glsl_version = dev->glsl_version;
    sscanf(dev->version, "OpenGL ES %d.%d", &dev->info.gl_major, &dev->info.gl_minor);
    dev->info.features.robust_context = glc__egl_robust(dev->egl);
    query_limits(dev);
    apply_policies(dev);
    glc__log(dev, GLC_LOG_INFO, "device: %s on %s (%s platform, %s)", dev->renderer,
             dev->vendor, glc_platform_name(dev->info.platform), dev->info.egl_device);
    dev->errmsg[0] = '\0';
    tls_checked = dev->adopted ? NULL : dev; /* its context is now current here */
    *out = dev;
    return GLC_OK;
fail:
    snprintf(tls_errmsg, sizeof tls_errmsg, "%s",
             dev->errmsg[0] ? dev->errmsg : glc_status_str(st));
    glc__egl_close(dev->egl);
    device_free(dev);
    glc__heap_use(prev_heap);
    return st;
}

glc_status glc__device_create_fake(const glc__gl *gl, const glc_device_limits *limits,
                                   glc_device **out)
{
    glc_device *dev;
    glc_status st = device_alloc(NULL, &dev);
    if (st != GLC_OK)
        return st;
    dev->gl = *gl;
    dev->info.platform = GLC_PLATFORM_DEFAULT;
    dev->info.egl_device = dev->info.egl_vendor = "fake";
    dev->info.vendor = dev->info.renderer = dev->info.version = dev->info.glsl_version = "fake";
    dev->info.gl_major = 3;
    dev->info.gl_minor = 1;
    dev->info.limits = *limits;
    if (!dev->info.limits.uniform_offset_alignment) /* (as query_limits) */
        dev->info.limits.uniform_offset_alignment = 256;
    /* the policies as a real device gets them (tests and GLC_VALIDATE=1
     * runs); the flags that need GL (GLC_DEBUG, GLC_LIMITS) are left out */
    if ((st = glc__env_read(&dev->env, dev->errmsg, sizeof dev->errmsg)) != GLC_OK) {
        device_free(dev);
        return st;
    }
    apply_policies(dev);
    *out = dev;
    return GLC_OK;
}

void glc_device_destroy(glc_device *dev)
{
    if (!dev)
        return;
    glc__use_device(dev);
    if (dev->live_objects)
        glc__log(dev, GLC_LOG_ERROR,
                 "glc_device_destroy: %ld buffers, kernels or sessions still alive",
                 dev->live_objects);
    {
        glc__glstate st;
        if (glc__enter(dev, GLC__TOUCH_PROGRAM, 0, &st) == GLC_OK) {
            int u;
            glc__kcache_destroy(dev, 1);
            for (u = 0; u < GLC__TEXEL_UNITS; u++)
                if (dev->texel_tex[u])
                    dev->gl.glDeleteTextures(1, &dev->texel_tex[u]);
            glc__leave(dev, &st);
        } else {
            if (dev->kcache)
                glc__log(dev, GLC_LOG_WARN, "glc_device_destroy: the device's context is not "
                                            "current: its programs are left to the context");
            glc__kcache_destroy(dev, 0);
        }
    }
    glc__egl_close(dev->egl);
    if (tls_checked == dev)
        tls_checked = NULL;
    device_free(dev);
}

/* glMemoryBarrier's bits in ES 3.1 */
#define ES31_BARRIER_BITS                                                                     \
    (GL_VERTEX_ATTRIB_ARRAY_BARRIER_BIT | GL_ELEMENT_ARRAY_BARRIER_BIT | GL_UNIFORM_BARRIER_BIT | \
     GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT | GL_COMMAND_BARRIER_BIT | \
     GL_PIXEL_BUFFER_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT | \
     GL_FRAMEBUFFER_BARRIER_BIT | GL_TRANSFORM_FEEDBACK_BARRIER_BIT |                        \
     GL_ATOMIC_COUNTER_BARRIER_BIT | GL_SHADER_STORAGE_BARRIER_BIT)

glc_status glc_device_release_to_gl(glc_device *dev, uint32_t gl_barrier_bits)
{
    glc__glstate gs;
    glc_status st;
    GLC__ARG(NULL, dev);
    if (gl_barrier_bits != GL_ALL_BARRIER_BITS &&
        (!gl_barrier_bits || (gl_barrier_bits & ~(uint32_t)ES31_BARRIER_BITS)))
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "glc_device_release_to_gl: bits 0x%x are not GL ES 3.1 barrier bits "
                         "(GL_*_BARRIER_BIT, or GL_ALL_BARRIER_BITS)",
                         gl_barrier_bits);
    if ((st = glc__enter(dev, 0, 0, &gs)) != GLC_OK)
        return st;
    dev->gl.glMemoryBarrier(gl_barrier_bits);
    glc__leave(dev, &gs);
    return GLC_OK;
}

glc_status glc_device_get_info(glc_device *dev, glc_device_info *out)
{
    GLC__ARG(NULL, dev);
    GLC__ARG(dev, out);
    *out = dev->info;
    return GLC_OK;
}
