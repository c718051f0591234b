/*
 * glcompute: ML compute graphs on OpenGL ES 3.1 compute shaders.
 *
 * One public header; valid C99 (-pedantic), C11 and C++. Every object is an
 * opaque handle made from a glc_device. A device and everything made from it
 * are used from one thread, with the device's context current on it (the
 * library makes an owned context current itself when no other context is);
 * calls that break this rule return GLC_ERR_STATE.
 *
 * Conventions
 *  - Every fallible call returns glc_status (GLC_OK == 0, errors < 0). The
 *    detail (which call, which value, which limit) goes to the device's log
 *    callback and to glc_device_errmsg(); there is no global error state
 *    (a failed glc_device_create leaves its message for the calling thread:
 *    glc_device_errmsg(NULL)).
 *  - Creation takes a const desc struct whose zero value means "default";
 *    it is read only during the call.
 *  - Outputs (out pointers, destination memory) are untouched on failure.
 *  - Every destroy accepts NULL.
 */
#ifndef GLCOMPUTE_H
#define GLCOMPUTE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GLC_API __attribute__((visibility("default")))
#else
#define GLC_API
#endif

#define GLC_VERSION_MAJOR 0
#define GLC_VERSION_MINOR 1
#define GLC_VERSION_PATCH 0

/* ---- Status ------------------------------------------------------------ */

/* X(name, value, description): the one table behind glc_status and
 * glc_status_str(). */
#define GLC_STATUS_MAP(X)                                                   \
    X(OK, 0, "success")                                                     \
    X(ERR_INVALID_ARG, -1, "invalid argument")                              \
    X(ERR_OUT_OF_MEMORY, -2, "out of memory")                               \
    X(ERR_NO_DEVICE, -3, "no usable EGL display or device")                 \
    X(ERR_UNSUPPORTED, -4, "not supported by this device or driver")        \
    X(ERR_COMPILE, -5, "shader compile or link failed")                     \
    X(ERR_STATE, -6, "wrong thread, context or object state")              \
    X(ERR_BOUNDS, -7, "range outside the buffer or a device limit")         \
    X(ERR_GL, -8, "unexpected GL error")                                    \
    X(ERR_TIMEOUT, -9, "timed out")                                         \
    X(ERR_CONTEXT_LOST, -10, "the GL context was lost (GPU reset)")         \
    X(ERR_IO, -11, "file input/output failed")                              \
    X(ERR_HAZARD, -12, "validation found a missing barrier")

typedef enum glc_status {
#define GLC__STATUS_ENUM(name, value, text) GLC_##name = value,
    GLC_STATUS_MAP(GLC__STATUS_ENUM)
#undef GLC__STATUS_ENUM
    GLC_STATUS_MIN_ = -13
} glc_status;

/* A static, never-NULL description of a status ("unknown status" for values
 * outside the table). */
GLC_API const char *glc_status_str(glc_status status);

/* ---- Data types ---------------------------------------------------------- */

typedef enum glc_dtype {
    GLC_DTYPE_F32 = 1,
    GLC_DTYPE_F16,
    GLC_DTYPE_BF16,
    GLC_DTYPE_I32,
    GLC_DTYPE_U32,
    GLC_DTYPE_U8,  /* raw bytes */
    /* GGML blocks along the last dim, byte-exact with GGUF (little-endian;
     * glsl/quant.glsl spells out each layout). Blocks of 32 values:
     * Q8_0 = f16 scale + 32 x int8 (34 bytes), Q4_0 = f16 scale + 16 bytes
     * of 4-bit values, low nibbles first (18 bytes). */
    GLC_DTYPE_Q8_0,
    GLC_DTYPE_Q4_0,
    /* "K" super-blocks of 256 values (8 sub-blocks of 32, 6-bit scales):
     * Q4_K = f16 d, f16 dmin, 12 bytes of scales and mins, 128 bytes of
     * 4-bit values (144 bytes); Q5_K = Q4_K's fields plus 32 bytes of fifth
     * bits before the 4-bit values (176 bytes); Q6_K = 128 bytes of low 4
     * bits, 64 of high 2 bits, 16 int8 scales (one per 16 values), f16 d
     * (210 bytes). */
    GLC_DTYPE_Q4_K,
    GLC_DTYPE_Q5_K,
    GLC_DTYPE_Q6_K,
    /* Blocks of 32: Q4_1 = f16 d, f16 m, 16 bytes of 4-bit values (20
     * bytes; d * q + m); Q5_0 = f16 d, 4 bytes of fifth bits, 16 bytes of
     * 4-bit values (22 bytes; d * (q - 16)); Q5_1 = f16 d, f16 m, 4 bytes
     * of fifth bits, 16 bytes of 4-bit values (24 bytes; d * q + m). */
    GLC_DTYPE_Q4_1,
    GLC_DTYPE_Q5_0,
    GLC_DTYPE_Q5_1
} glc_dtype;

#define GLC_MAX_DIMS 4

/* Bytes per element, or 0 for a block type or a value that is not a
 * glc_dtype. */
GLC_API size_t glc_dtype_size(glc_dtype dtype);
/* Bytes of n consecutive elements along the last dim (block types: n must
 * be whole blocks, a multiple of 32, or of 256 for the K types), or 0 when
 * n does not fit the dtype. */
GLC_API size_t glc_dtype_row_bytes(glc_dtype dtype, int64_t n);
/* A static name ("f32", ...), or "?" for a value that is not a glc_dtype. */
GLC_API const char *glc_dtype_name(glc_dtype dtype);
/* The GGML type id a GGUF file gives this dtype (F32 0, F16 1, Q4_0 2,
 * Q4_1 3, Q5_0 6, Q5_1 7, Q8_0 8, Q4_K 12, Q5_K 13, Q6_K 14, I32 26,
 * BF16 30), or -1 for U32, U8 and values that are not glc_dtypes; and
 * the dtype of a GGML type id, or 0 for one glcompute does not compute
 * with. */
GLC_API int glc_dtype_ggml_type(glc_dtype dtype);
GLC_API glc_dtype glc_dtype_from_ggml_type(uint32_t ggml_type);
/* Decodes n consecutive elements of dtype at src (block types: whole
 * blocks, as the GGML definitions lay them out) into n floats at dst, on
 * the host. GLC_ERR_INVALID_ARG for NULL pointers or an n the dtype cannot
 * hold (dst untouched). */
GLC_API glc_status glc_dtype_to_f32(glc_dtype dtype, const void *src, int64_t n, float *dst);
/* Encodes n floats into dtype at dst (the bytes glc_dtype_row_bytes(dtype,
 * n) gives): f16 / bf16 round to nearest even; block types round each
 * value to its block's nearest level, scales from each block's range (as
 * GGML's reference quantizers; no search for better scales). I32, U32 and
 * U8 are not encoded (GLC_ERR_UNSUPPORTED); a non-finite value for a block
 * type, NULL pointers or an n the dtype cannot hold: GLC_ERR_INVALID_ARG. */
GLC_API glc_status glc_dtype_from_f32(glc_dtype dtype, const float *src, int64_t n, void *dst);

/* ---- Device -------------------------------------------------------------- */

typedef struct glc_device glc_device;
typedef struct glc_buffer glc_buffer;
typedef struct glc_kernel glc_kernel;
typedef struct glc_session glc_session;
typedef struct glc_fence glc_fence;

typedef enum glc_platform {
    GLC_PLATFORM_AUTO = 0,    /* device, then gbm, then surfaceless, then default */
    GLC_PLATFORM_DEVICE,      /* EGL_EXT_platform_device, ranked devices */
    GLC_PLATFORM_GBM,         /* EGL on a GBM device over /dev/dri/renderD* */
    GLC_PLATFORM_SURFACELESS, /* EGL_MESA_platform_surfaceless */
    GLC_PLATFORM_DEFAULT,     /* eglGetDisplay(EGL_DEFAULT_DISPLAY) */
    GLC_PLATFORM_CURRENT      /* adopt the calling thread's current context */
} glc_platform;

/* A static name ("auto", "device", ...), or "?" for other values. */
GLC_API const char *glc_platform_name(glc_platform platform);

typedef enum glc_log_level {
    GLC_LOG_ERROR = 1,
    GLC_LOG_WARN = 2,
    GLC_LOG_INFO = 3,
    GLC_LOG_DEBUG = 4
} glc_log_level;

/* Receives each message at or below the device's log level. `message` is
 * valid only during the call. Called on the thread that made the call. */
typedef void (*glc_log_fn)(void *user, glc_log_level level, glc_status status,
                           const char *message);

enum glc_device_flags {
    GLC_DEVICE_LIMITS_MIN = 1u << 0, /* clamp limits to the ES 3.1 minimums */
    GLC_DEVICE_DEBUG = 1u << 1,      /* glGetError after GL calls, canaries */
    GLC_DEVICE_NO_ROBUST = 1u << 2,  /* do not ask for a robust context */
    GLC_DEVICE_VALIDATE = 1u << 3    /* check every emitted stream (as GLC_VALIDATE=1) */
};

/* Host memory hook. Every heap allocation the library makes for a device
 * and for everything made from it (buffers, kernels, sessions, fences,
 * graphs, plans), glc_device_create's own included, goes through the
 * allocator of the device's desc (calls that take no device, such as
 * glc_device_list, use malloc).
 *  - alloc: `size` bytes aligned for any object type (as malloc), or NULL;
 *    the call that needed them then fails with GLC_ERR_OUT_OF_MEMORY and
 *    leaves everything as it was. Sizes include a small header the library
 *    keeps in each block.
 *  - realloc (optional, NULL: alloc, copy, free): resize the block `ptr` of
 *    `old_size` bytes to `new_size`, or return NULL and keep it.
 *  - free: release a block this allocator returned, with its size; never
 *    called with NULL.
 * alloc and free are both set, or both NULL (with realloc NULL too): malloc
 * and free. The functions are called on the thread making the library call,
 * must not call back into glcompute, and `user` is passed to each. They stay
 * in use until glc_device_destroy returns and every object of the device is
 * destroyed. A compiled plan's runs make no allocation. */
typedef struct glc_allocator {
    void *(*alloc)(void *user, size_t size);
    void *(*realloc)(void *user, void *ptr, size_t old_size, size_t new_size);
    void (*free)(void *user, void *ptr, size_t size);
    void *user;
} glc_allocator;

typedef struct glc_device_desc {
    /* 0 (AUTO): the environment's GLC_PLATFORM=device|gbm|surfaceless|default
     * if set, else try each platform in the order listed at glc_platform.
     * Any other value is used as given; the environment does not override it. */
    glc_platform platform;
    /* NULL: the environment's GLC_DEVICE if set, else the best ranked device.
     * A decimal index into the ranked EGL device list (see glc_device_list),
     * or a /dev/dri path (matched against EGL devices, else opened by GBM). */
    const char *device;
    /* Optional log callback; messages up to log_level (0: GLC_LOG_INFO).
     * Without one, messages up to GLC_LOG's level go to stderr (by default
     * errors and warnings; GLC_LOG=off: none). */
    glc_log_fn log;
    void *log_user;
    glc_log_level log_level;
    /* glc_device_flags; the environment adds GLC_LIMITS=min, GLC_DEBUG=1,
     * GLC_VALIDATE=1 (read here, once: they hold for every session and plan
     * of the device, and a bad value of any GLC_* variable fails the call
     * with GLC_ERR_INVALID_ARG; README, "Environment"). */
    uint32_t flags;
    /* Directory of the on-disk program-binary cache. NULL: the environment's
     * GLC_SHADER_CACHE, else no cache. A missing directory is created (mode
     * 0700, with its parents); when that fails, a warning is logged and the
     * device has no cache. */
    const char *shader_cache_dir;
    /* Host memory of the device and its objects (see glc_allocator); all
     * zero: malloc and free. Copied during the call. */
    glc_allocator allocator;
} glc_device_desc;

typedef struct glc_device_limits {
    uint32_t max_group_count[3];    /* work groups per dispatch, per dim */
    uint32_t max_group_size[3];     /* local size per dim */
    uint32_t max_invocations;       /* local size x*y*z */
    uint32_t max_shared_bytes;      /* shared memory per work group */
    uint32_t max_ssbo_blocks;       /* SSBO blocks per compute shader */
    uint32_t max_ssbo_bindings;     /* SSBO binding points */
    uint64_t max_ssbo_size;         /* bytes one binding may span */
    uint32_t ssbo_offset_alignment; /* binding offsets are multiples of this */
    uint32_t max_uniform_block_size;
    uint32_t uniform_offset_alignment; /* UNIFORM binding offsets are multiples of this */
    /* Loop iterations one shader invocation may run, all its loops together;
     * 0 = no limit. No GL query gives it: Mesa llvmpipe ends an invocation
     * silently after 65535 iterations, so the kernels' planners keep every
     * invocation under this number. GLC_LIMITS=min sets it to 65535. */
    uint32_t max_loop_iterations;
    /* Texels one GLC_BIND_TEXEL binding may span (GL_MAX_TEXTURE_BUFFER_SIZE;
     * 0 without features.texel_buffers); its offset alignment is
     * ssbo_offset_alignment (the feature is on only where that suffices). */
    uint32_t max_texel_buffer_size;
} glc_device_limits;

typedef struct glc_device_features {
    int subgroup;                 /* GL_KHR_shader_subgroup with compute support */
    uint32_t subgroup_size;       /* 0 when no subgroups */
    uint32_t subgroup_ops;        /* GL_SUBGROUP_FEATURE_*_BIT_KHR mask */
    int timer_query;              /* GL_EXT_disjoint_timer_query */
    int buffer_storage;           /* GL_EXT_buffer_storage (persistent maps) */
    int program_binary_formats;   /* GL_NUM_PROGRAM_BINARY_FORMATS */
    int fp16_arithmetic;          /* GL_NV_gpu_shader5 or GL_AMD_gpu_shader_half_float */
    int robust_context;           /* the context loses itself on GPU reset */
    /* buffer textures (GL_OES_texture_buffer): GLC_BIND_TEXEL bindings;
     * off under GLC_LIMITS=min (ES 3.1 core has none) */
    int texel_buffers;
} glc_device_features;

typedef struct glc_device_info {
    glc_platform platform;  /* the platform actually used, never AUTO */
    const char *egl_device; /* which EGL device or node: "cuda:0", a /dev/dri path, "software", "" */
    const char *egl_vendor; /* EGL_VENDOR, or "" for an adopted context */
    const char *vendor;     /* GL_VENDOR */
    const char *renderer;   /* GL_RENDERER */
    const char *version;    /* GL_VERSION */
    const char *glsl_version; /* GL_SHADING_LANGUAGE_VERSION */
    int gl_major, gl_minor;
    int limits_clamped;     /* limits were clamped to the ES 3.1 minimums (GLC_LIMITS=min) */
    /* The knobs in force, read once at glc_device_create from the desc and
     * the environment. */
    const char *barriers;   /* "tracked" or "always" (GLC_BARRIERS) */
    int validate;           /* GLC_VALIDATE=1 or GLC_DEVICE_VALIDATE: emitted streams checked */
    glc_device_limits limits;
    glc_device_features features;
} glc_device_info;

/* Creates a device: an owned headless EGL context made current on the calling
 * thread, or (platform CURRENT) the calling thread's current EGL context,
 * adopted without being owned; in that mode every call that touches GL saves
 * and restores the GL state it changes. `desc` may be NULL (all defaults).
 * Errors: GLC_ERR_NO_DEVICE (no EGL library, no display initialised, no
 * current context for CURRENT), GLC_ERR_UNSUPPORTED (no ES 3.1 context),
 * GLC_ERR_INVALID_ARG (bad desc, a bad value of any GLC_* variable, or a
 * device selector the platform cannot take, such as GLC_DEVICE=0 with
 * GLC_PLATFORM=surfaceless), GLC_ERR_OUT_OF_MEMORY (desc->allocator or
 * malloc failed). Each platform tried logs why it failed; when none works,
 * the messages are joined in the message passed to the log callback and
 * returned by glc_device_errmsg(NULL). A device index (desc.device or
 * GLC_DEVICE) with platform AUTO tries only the device platform. On failure
 * *out is untouched. */
GLC_API glc_status glc_device_create(const glc_device_desc *desc, glc_device **out);

/* Destroys the device (owned contexts are destroyed, adopted ones kept).
 * Every object made from it must have been destroyed first. NULL: no-op. */
GLC_API void glc_device_destroy(glc_device *dev);

/* The message of the last failed call on this device (or "" when none
 * failed). Valid until the next call on the device.
 * NULL dev: the message of this thread's last call that failed with no
 * device to hold it: a glc_device_create that failed (why no device was
 * made: a bad GLC_* variable, each platform tried and why it failed), or a
 * call given a NULL handle. "" after a glc_device_create that succeeded. */
GLC_API const char *glc_device_errmsg(const glc_device *dev);

/* Fills *out; its strings are owned by the device and live as long as it. */
GLC_API glc_status glc_device_get_info(glc_device *dev, glc_device_info *out);

/* One EGL device as enumerated through EGL_EXT_device_enumeration, in rank
 * order (hardware first: CUDA, then DRM-backed; Mesa's software device last). */
typedef struct glc_device_entry {
    int index;            /* position in rank order: the GLC_DEVICE index */
    int rank;             /* lower is preferred */
    int is_software;      /* EGL_MESA_device_software */
    int has_cuda;         /* EGL_NV_device_cuda */
    int has_drm;          /* EGL_EXT_device_drm */
    char drm_path[128];   /* EGL_DRM_DEVICE_FILE_EXT, or "" */
    char render_path[128];/* EGL_DRM_RENDER_NODE_FILE_EXT, or "" */
    char extensions[512]; /* device extension string, truncated */
} glc_device_entry;

/* Lists the EGL devices in rank order. Writes up to `max` entries to
 * `entries` (may be NULL when max is 0) and the total count to *count.
 * Needs no device. Errors: GLC_ERR_NO_DEVICE when EGL or its device
 * enumeration extensions are missing (then *count is 0). */
GLC_API glc_status glc_device_list(glc_device_entry *entries, int max, int *count);

/* ---- Buffers ------------------------------------------------------------- */

/* Creates a shader-storage buffer of `dtype` and `shape` (rank 1..4, every
 * dim >= 1), contents undefined. Errors: GLC_ERR_INVALID_ARG (dtype, rank,
 * shape, size overflow), GLC_ERR_OUT_OF_MEMORY (the driver refused). */
GLC_API glc_status glc_buffer_create(glc_device *dev, glc_dtype dtype, int rank,
                             const int64_t *shape, glc_buffer **out);

/* Wraps a buffer object of the device's context (a host application's
 * buffer, with platform CURRENT) as a glc_buffer of dtype and shape; the
 * shape's bytes must fit in the GL buffer's size. The GL buffer is borrowed:
 * glc_buffer_destroy never deletes it. */
GLC_API glc_status glc_buffer_wrap_gl(glc_device *dev, uint32_t gl_buffer,
                              glc_dtype dtype, int rank, const int64_t *shape,
                              glc_buffer **out);

/* Copies `size` bytes from host memory into the buffer at byte `offset`.
 * Errors: GLC_ERR_BOUNDS when [offset, offset+size) is not inside it. */
GLC_API glc_status glc_buffer_write(glc_buffer *buf, size_t offset, size_t size,
                            const void *data);

/* Copies `size` bytes at byte `offset` into host memory, after the barrier
 * that makes earlier shader writes visible. Waits for the GPU. On failure
 * `data` is untouched. */
GLC_API glc_status glc_buffer_read(glc_buffer *buf, size_t offset, size_t size,
                           void *data);

/* Size in bytes (the shape's bytes); 0 for NULL. */
GLC_API size_t glc_buffer_size(const glc_buffer *buf);
/* dtype, rank and shape; shape gets GLC_MAX_DIMS values (unused dims = 1). */
GLC_API glc_dtype glc_buffer_dtype(const glc_buffer *buf);
GLC_API int glc_buffer_shape(const glc_buffer *buf, int64_t shape[GLC_MAX_DIMS]);
/* The GL buffer name, for using the buffer in the host's own GL calls. */
GLC_API uint32_t glc_buffer_gl_name(const glc_buffer *buf);

/* Deletes the GL buffer unless it was wrapped. NULL: no-op. A buffer a
 * plan's input or output is bound to (glc_plan_bind_input) goes when the
 * last such binding does. */
GLC_API void glc_buffer_destroy(glc_buffer *buf);

/* ---- Kernels ------------------------------------------------------------- */

#define GLC_MAX_PARAMS 16

typedef struct glc_kernel_desc {
    const char *name;    /* label used in messages; NULL: "user" */
    const char *source;  /* GLSL body, no #version line (required) */
    /* Local size x (0: 64). The kernel declares
     * layout(local_size_x = GLC_LOCAL_SIZE_X) in; itself. */
    uint32_t local_size_x;
    const char *defines; /* extra preprocessor lines, or NULL */
} glc_kernel_desc;

/* Compiles user GLSL with the prelude of the built-in kernels: #version 310
 * es, GLC_LOCAL_SIZE_X, feature defines (GLC_HAS_SUBGROUP, ...), precision
 * statements and glsl/common.glsl, which declares `uniform uint
 * glc_p[GLC_MAX_PARAMS]` (the dispatch's params) and the grid helpers
 * glc_group_index() / glc_global_index() that undo grid folding.
 * Errors: GLC_ERR_COMPILE with the info log in the message. */
GLC_API glc_status glc_kernel_create(glc_device *dev, const glc_kernel_desc *desc,
                             glc_kernel **out);
GLC_API void glc_kernel_destroy(glc_kernel *kernel);

/* ---- Sessions ------------------------------------------------------------ */

/* A session mode, optionally or-ed with GLC_SESSION_EARLY_FLUSH. */
typedef enum glc_session_mode {
    GLC_SESSION_DIRECT = 0,  /* encode each dispatch as it is made */
    GLC_SESSION_RECORDED = 1 /* capture; run passes (reorder, fusion) and encode at commit/finish */
} glc_session_mode;

/* glc_session_desc.flags (and glc_session_begin's mode bits) */
enum glc_session_flags {
    /* RECORDED only: when encoding n commands, flush after the first
     * max(64, n/10) so the GPU starts while the rest is encoded. */
    GLC_SESSION_EARLY_FLUSH = 1u << 8
};

typedef enum glc_access {
    GLC_READ = 1,
    GLC_WRITE = 2,
    GLC_READ_WRITE = 3
} glc_access;

/* How a binding reaches the shader. SSBO bindings take SSBO binding points
 * 0, 1, ... in the order they appear in the array; UNIFORM bindings (read
 * only; offsets multiples of limits.uniform_offset_alignment, at most
 * limits.max_uniform_block_size bytes) take uniform-block binding points
 * 0, 1, ... the same way; TEXEL
 * bindings (read only; devices with features.texel_buffers) take texture
 * units 0, 1, ... the same way, as a buffer texture of RGBA32F texels over
 * the range (the kernel declares `layout(binding = u) uniform highp
 * samplerBuffer` and reads texelFetch(s, i), a vec4, and puts
 * `#define GLC_TEXEL 1` in its desc.defines, for which the prelude enables
 * GL_OES_texture_buffer: enabling it in every kernel would double Mesa's
 * compile time); TEXEL_UINT bindings the same as RGBA32UI texels (`uniform
 * highp usamplerBuffer`, a uvec4 a texel: the raw words of any data), the
 * two kinds sharing the units in array order. A texel range is whole texels
 * (size a multiple of 16), at most limits.max_texel_buffer_size of them. */
typedef enum glc_binding_kind {
    GLC_BIND_STORAGE = 0,
    GLC_BIND_UNIFORM = 1,
    GLC_BIND_TEXEL = 2,
    GLC_BIND_TEXEL_UINT = 3
} glc_binding_kind;

/* [offset, offset+size) of a buffer; size 0: to the end. */
typedef struct glc_binding {
    glc_buffer *buffer;
    size_t offset;
    size_t size;
    glc_access access;
    glc_binding_kind kind;
} glc_binding;

enum glc_dispatch_flags {
    /* The recorded reorder pass never moves a dispatch across this one. */
    GLC_DISPATCH_NO_REORDER = 1u << 0
};

typedef struct glc_dispatch_desc {
    glc_kernel *kernel;
    uint64_t groups;              /* 1-D work-group count, folded as needed */
    const glc_binding *bindings;
    int binding_count;
    const uint32_t *params;       /* glc_p[0..param_count) (floats as bits) */
    int param_count;
    const char *label;            /* for messages and traces; may be NULL */
    uint32_t flags;               /* glc_dispatch_flags */
    /* When set, the group counts (3 x u32) are read on the GPU from this
     * buffer at indirect_offset (glDispatchComputeIndirect; groups is then
     * ignored and no folding happens: glc_total_groups is UINT32_MAX). */
    glc_buffer *indirect;
    size_t indirect_offset;
} glc_dispatch_desc;

#define GLC_HISTOGRAM_BUCKETS 12

typedef struct glc_dispatch_stats {
    uint64_t dispatches;
    uint64_t barriers;          /* glMemoryBarrier calls between dispatches */
    uint64_t flushes;
    /* dispatches by work-group count: bucket i counts groups in
     * [4^i, 4^(i+1)), the last bucket everything above */
    uint64_t group_histogram[GLC_HISTOGRAM_BUCKETS];
    uint64_t tracker_ns;        /* time in the hazard tracker */
    uint64_t encode_ns;         /* time issuing GL commands (tracker included) */
    uint64_t gpu_wait_ns;       /* time blocked waiting for the GPU at finish/fence waits */
} glc_dispatch_stats;

/* How a session encodes. A zeroed desc (or NULL) is a DIRECT session. */
typedef struct glc_session_desc {
    glc_session_mode mode; /* DIRECT or RECORDED */
    uint32_t flags;        /* GLC_SESSION_EARLY_FLUSH (RECORDED only); others reserved (0) */
} glc_session_desc;

/* Starts a session on the device, ended by glc_session_finish.
 * GLC_ERR_INVALID_ARG for an unknown mode or flag, or EARLY_FLUSH with
 * DIRECT. The device's barrier policy applies (read once at device
 * creation): GLC_BARRIERS=always puts a barrier between every two
 * dispatches; GLC_VALIDATE=1 checks every emitted stream with the
 * brute-force oracle (GLC_ERR_HAZARD names both dispatches of a missing
 * barrier); GLC_TRACE=barriers logs each barrier with the pair of
 * dispatches that needed it. */
GLC_API glc_status glc_session_create(glc_device *dev, const glc_session_desc *desc,
                                      glc_session **out);
/* The same with the desc packed in one int: `mode` is a glc_session_mode,
 * or-ed with GLC_SESSION_EARLY_FLUSH for RECORDED. */
GLC_API glc_status glc_session_begin(glc_device *dev, int mode, glc_session **out);

/* Records (RECORDED) or encodes (DIRECT) one dispatch, with a barrier first
 * where the hazard tracker finds a conflict with a dispatch since the last
 * barrier: GL_SHADER_STORAGE_BARRIER_BIT for storage access,
 * GL_UNIFORM_BARRIER_BIT where a written range is read as a uniform block,
 * GL_COMMAND_BARRIER_BIT where it holds indirect group counts. Checks every
 * binding against the buffer's size, the device's offset alignment and
 * SSBO/UBO size, and the binding count against the device's block limits;
 * nothing is recorded on failure. */
GLC_API glc_status glc_session_dispatch(glc_session *s, const glc_dispatch_desc *d);

/* A full barrier now (all bits the session uses), whatever the tracker says. */
GLC_API glc_status glc_session_barrier(glc_session *s);

/* Manual control, for dispatches made outside the session on the same
 * context. barrier_between: issues a barrier when a dispatch reading
 * `reads` and writing `writes` would conflict with what is tracked, and
 * sets *emitted (may be NULL) to 1 if it did. track_dispatch: adds such a
 * dispatch to the tracker without issuing anything. */
GLC_API glc_status glc_session_barrier_between(glc_session *s, const glc_binding *reads, int nreads,
                                               const glc_binding *writes, int nwrites,
                                               int *emitted);
GLC_API glc_status glc_session_track_dispatch(glc_session *s, const glc_binding *reads, int nreads,
                                              const glc_binding *writes, int nwrites);

/* Barriers emitted so far (0 for NULL). */
GLC_API uint64_t glc_session_barrier_count(const glc_session *s);
GLC_API glc_status glc_session_stats(const glc_session *s, glc_dispatch_stats *out);

/* Encodes everything recorded, flushes, and returns a fence that signals
 * when the GPU has done it all. The session stays open. */
GLC_API glc_status glc_session_commit(glc_session *s, glc_fence **out);

/* Waits up to timeout_ns (0: just poll) for the fence. GLC_ERR_TIMEOUT
 * when it has not signalled; GLC_ERR_CONTEXT_LOST on a GPU reset. */
GLC_API glc_status glc_fence_wait(glc_fence *f, uint64_t timeout_ns);
GLC_API void glc_fence_destroy(glc_fence *f);

/* Encodes what is left, waits for all work (the one sync point), fills
 * *stats when non-NULL, and ends the session. The session is destroyed
 * whatever the status. */
GLC_API glc_status glc_session_finish(glc_session *s, glc_dispatch_stats *stats);

/* ---- Ops: the kernel library, eager ------------------------------------- */

/* A tensor in a buffer: dtype and shape (row-major, contiguous, the last
 * dim fastest) at a byte offset. Offsets of views bound by ops must be
 * multiples of the device's SSBO offset alignment. */
typedef struct glc_view {
    glc_buffer *buffer;
    size_t offset;
    glc_dtype dtype;
    int rank;
    int64_t shape[GLC_MAX_DIMS];
} glc_view;

/* The whole buffer with its own dtype and shape. */
GLC_API glc_view glc_view_of(glc_buffer *buf);
/* A view of `buf` at `offset` with the given dtype and shape. */
GLC_API glc_view glc_view_make(glc_buffer *buf, size_t offset, glc_dtype dtype, int rank,
                               const int64_t *shape);
/* Bytes the view spans (0 when its dtype/shape are invalid). */
GLC_API size_t glc_view_bytes(const glc_view *v);

/* Every op records dispatches into the session (barriers as the tracker
 * decides), computes in f32, and checks its views first: shapes, dtypes,
 * ranges inside their buffers, alignment. A bad call returns
 * GLC_ERR_INVALID_ARG (or GLC_ERR_BOUNDS / GLC_ERR_UNSUPPORTED) with a
 * message naming the op and the shapes, and records nothing. Storage
 * dtypes per op are listed at each; "float" means F32 or F16 (and BF16
 * where stated). */

/* Elementwise with numpy broadcasting (shapes aligned at the last dim,
 * each dim equal or 1); out has the broadcast shape. a, b, out: float. */
GLC_API glc_status glc_op_add(glc_session *s, glc_view a, glc_view b, glc_view out);
GLC_API glc_status glc_op_sub(glc_session *s, glc_view a, glc_view b, glc_view out);
GLC_API glc_status glc_op_mul(glc_session *s, glc_view a, glc_view b, glc_view out);
GLC_API glc_status glc_op_div(glc_session *s, glc_view a, glc_view b, glc_view out);
/* out = x * a + b */
GLC_API glc_status glc_op_scale(glc_session *s, glc_view x, float a, float b, glc_view out);

typedef enum glc_unary_op {
    GLC_UNARY_GELU = 1, /* tanh approximation */
    GLC_UNARY_GELU_ERF,
    GLC_UNARY_SILU,
    GLC_UNARY_RELU,
    GLC_UNARY_EXP,
    GLC_UNARY_TANH,
    GLC_UNARY_SOFTCAP /* param * tanh(x / param) */
} glc_unary_op;

/* out = op(x) elementwise; x and out of one shape. `param` is the cap of
 * SOFTCAP and unused otherwise. */
GLC_API glc_status glc_op_unary(glc_session *s, glc_unary_op op, glc_view x, float param,
                                glc_view out);

/* Reductions along the last dim; every other dim is a row. */
typedef struct glc_softmax_desc {
    float scale;         /* applied to x first; 0: 1 */
    int causal;          /* mask key j > q + pos_offset, q = index in dim -2 */
    int64_t pos_offset;
} glc_softmax_desc;
GLC_API glc_status glc_op_softmax(glc_session *s, glc_view x, const glc_softmax_desc *desc,
                                  glc_view out);
/* weight: a view with .buffer NULL for none; shape [last dim]. eps 0: 1e-6 */
GLC_API glc_status glc_op_rms_norm(glc_session *s, glc_view x, glc_view weight, float eps,
                                   glc_view out);
/* weight, bias: shape [last dim], either may be absent (.buffer NULL). eps 0: 1e-5 */
GLC_API glc_status glc_op_layer_norm(glc_session *s, glc_view x, glc_view weight, glc_view bias,
                                     float eps, glc_view out);
/* out: x's shape without the last dim (rank 1 input: shape [1]). */
GLC_API glc_status glc_op_sum(glc_session *s, glc_view x, glc_view out);
GLC_API glc_status glc_op_mean(glc_session *s, glc_view x, glc_view out);
/* out: I32 or U32 index of the first maximum. */
GLC_API glc_status glc_op_argmax(glc_session *s, glc_view x, glc_view out);

typedef enum glc_rope_mode {
    GLC_ROPE_NORMAL = 0, /* rotate adjacent pairs (x[2i], x[2i+1]) */
    GLC_ROPE_NEOX = 1    /* rotate halves (x[i], x[i + rope_dim/2]) */
} glc_rope_mode;

typedef struct glc_rope_desc {
    glc_rope_mode mode;
    int64_t rope_dim;     /* dims rotated, even, <= head dim; 0: all */
    float base;           /* 0: 10000 */
    glc_view freq_factors;/* optional F32 [rope_dim/2]: theta_i /= factor_i */
} glc_rope_desc;
/* x, out: [T, H, D] or [B, T, H, D] (float); positions: I32 [T]. */
GLC_API glc_status glc_op_rope(glc_session *s, glc_view x, glc_view positions,
                               const glc_rope_desc *desc, glc_view out);

typedef struct glc_matmul_desc {
    int transpose_b; /* 1: b is [.., N, K] (A x B^T, weights as stored by
                      * most checkpoints); 0: b is [.., K, N] */
} glc_matmul_desc;
/* a: F32 [.., M, K]; b: F32/F16/BF16 [.., K, N] or [.., N, K]; batch dims
 * of b broadcast (rank-2 b is shared); bias: optional F32 [N]; out: F32
 * [.., M, N]. */
GLC_API glc_status glc_op_matmul(glc_session *s, glc_view a, glc_view b, glc_view bias,
                                 const glc_matmul_desc *desc, glc_view out);

/* Affine-quantized weights as in MLX: w is U32 [N, K * bits / 32] (values
 * packed low bits first), scales and biases F32 or F16 [N, K / group];
 * weight = scale * q + bias. bits 4 or 8, group 32/64/128 (must divide K).
 * out = a x W^T (+ bias_n when the optional F32 [N] `bias` is given). */
GLC_API glc_status glc_op_matmul_affine(glc_session *s, glc_view a, glc_view w, glc_view scales,
                                        glc_view biases, int bits, int group_size,
                                        glc_view bias, glc_view out);
/* GGML blocks: w is [N, K] of any GGML block type (Q8_0, Q4_0, Q4_1,
 * Q5_0, Q5_1, Q4_K, Q5_K, Q6_K; K whole blocks); out = a x W^T (+ bias),
 * the weights dequantized as GGML does. */
GLC_API glc_status glc_op_matmul_q(glc_session *s, glc_view a, glc_view w, glc_view bias,
                                   glc_view out);
/* Expert-routed (MoE): w is [E, N, K] (F32, F16 or a GGML block type), ids I32
 * [M, k] picks k experts per row of a [M, K]; out F32 [M, k, N]. */
GLC_API glc_status glc_op_matmul_expert(glc_session *s, glc_view a, glc_view w, glc_view ids,
                                        glc_view out);

typedef struct glc_sdpa_desc {
    float scale;        /* 0: 1/sqrt(D) */
    int causal;
    int64_t q_offset;   /* position of query row 0 among the keys; -1: kv_len - Tq */
    int64_t kv_len;     /* keys in use (<= the cache's T); 0: all */
} glc_sdpa_desc;
/* Prefill attention, grouped-query: q [Tq, Hq, D], k [Tk, Hkv, D],
 * v [Tk, Hkv, Dv], Hq a multiple of Hkv; out [Tq, Hq, Dv]. q, out F32;
 * k, v F32 or F16. */
GLC_API glc_status glc_op_sdpa(glc_session *s, glc_view q, glc_view k, glc_view v,
                               const glc_sdpa_desc *desc, glc_view out);
/* Decode attention for one query row over a long KV cache (flash-decoding:
 * the keys are split across work groups, partial results combined):
 * q [1, Hq, D]; scratch: an F32 view of at least glc_sdpa_decode_scratch()
 * elements. */
GLC_API glc_status glc_op_sdpa_decode(glc_session *s, glc_view q, glc_view k, glc_view v,
                                      const glc_sdpa_desc *desc, glc_view scratch,
                                      glc_view out);
GLC_API int64_t glc_sdpa_decode_scratch(int64_t hq, int64_t dv, int64_t kv_len);

/* Data movement. Exact: values are moved, or converted between F32, F16
 * and BF16 with one round to nearest even (raw bits move where the dtypes
 * agree). Outputs must not overlap inputs. Float dtypes may differ between
 * inputs and output (the output's view chooses). A negative axis counts
 * from the end (-1: the last dim). */
/* out[..., :] = table[ids[...], :] (embedding lookup); table F32, F16,
 * BF16 or a GGML block type (D whole blocks: 32 or 256 values) [V, D],
 * dequantized to the floats GGML gives; ids I32 of rank 1 to 3; out F32
 * (or F16, BF16) of shape ids.shape + [D]. An id outside [0, V) yields a
 * row of zeros. */
GLC_API glc_status glc_op_get_rows(glc_session *s, glc_view table, glc_view ids, glc_view out);
/* dst[ids[i], ...] = src[i, ...] (KV-cache writes at positions); src float
 * [n, ...], dst float [V, ...] with the same trailing dims, ids I32 [n]. A
 * row whose id is outside [0, V) is skipped; rows of dst not named keep
 * their contents. Repeated ids: which src row lands is unspecified. */
GLC_API glc_status glc_op_set_rows(glc_session *s, glc_view src, glc_view ids, glc_view dst);
/* out = x with dims permuted: out.shape[i] = x.shape[perm[i]]; also
 * converts between F32, F16 and BF16 (perm NULL: the identity; else rank
 * entries, a permutation of 0 .. rank-1). Rank 1 to GLC_MAX_DIMS. */
GLC_API glc_status glc_op_copy(glc_session *s, glc_view x, const int *perm, glc_view out);
/* out = a and b joined along `axis` (all other dims equal). */
GLC_API glc_status glc_op_concat(glc_session *s, glc_view a, glc_view b, int axis, glc_view out);
/* out = x[..., start:start+len, ...] along `axis`, len = out.shape[axis];
 * GLC_ERR_BOUNDS when [start, start + len) is not inside x's dim. */
GLC_API glc_status glc_op_slice(glc_session *s, glc_view x, int axis, int64_t start,
                                glc_view out);

/* ---- Graphs: build once, compile, run many times ------------------------ */

typedef struct glc_graph glc_graph;

/* A tensor of a graph: an id; id < 0 is "no tensor" (also what a builder
 * returns once the graph has an error). */
typedef struct glc_tensor {
    int32_t id;
} glc_tensor;

/* A symbolic dim: glc_graph_var returns GLC_DIM_VAR(i), a negative value
 * that stands for variable i in shapes. */
#define GLC_DIM_VAR(i) (-1 - (int64_t)(i))

/* Creates an empty graph for `dev` (the builder itself touches no GL). */
GLC_API glc_status glc_graph_create(glc_device *dev, glc_graph **out);
GLC_API void glc_graph_destroy(glc_graph *g);

/* The graph's first error (sticky: every builder after it is a no-op
 * returning no tensor) and its message ("" when none). */
GLC_API glc_status glc_graph_status(const glc_graph *g);
GLC_API const char *glc_graph_errmsg(const glc_graph *g);

/* A named dim variable with bounds (sequence length, KV length); returns
 * the value to put in shapes, or 0 after an error. */
GLC_API int64_t glc_graph_var(glc_graph *g, const char *name, int64_t min, int64_t max);

/* Inputs (fed at each run), params (weights: set once, any dtype the
 * consuming op reads, quantized included) and named outputs. */
GLC_API glc_tensor glc_graph_input(glc_graph *g, const char *name, glc_dtype dtype, int rank,
                                   const int64_t *shape);
GLC_API glc_tensor glc_graph_param(glc_graph *g, const char *name, glc_dtype dtype, int rank,
                                   const int64_t *shape);
GLC_API void glc_graph_output(glc_graph *g, const char *name, glc_tensor t);
/* A handle: named persistent state (a KV cache, optimizer state) in its
 * own GPU buffer, kept across runs; ops read it, and ops that write in
 * place (glc_set_rows) write it. Fixed shape. */
GLC_API glc_tensor glc_graph_handle(glc_graph *g, const char *name, glc_dtype dtype, int rank,
                                    const int64_t *shape);

/* Shape of a tensor (symbolic dims as GLC_DIM_VAR values); returns the
 * rank, 0 for no tensor. */
GLC_API int glc_tensor_shape(const glc_graph *g, glc_tensor t, int64_t shape[GLC_MAX_DIMS]);
GLC_API glc_dtype glc_tensor_dtype(const glc_graph *g, glc_tensor t);

/* Op builders: the ops of the kernel library on graph tensors, results in
 * f32 unless said. Absent optional inputs: a tensor with id -1. */
GLC_API glc_tensor glc_none(void);
GLC_API glc_tensor glc_add(glc_graph *g, glc_tensor a, glc_tensor b);
GLC_API glc_tensor glc_sub(glc_graph *g, glc_tensor a, glc_tensor b);
GLC_API glc_tensor glc_mul(glc_graph *g, glc_tensor a, glc_tensor b);
GLC_API glc_tensor glc_div(glc_graph *g, glc_tensor a, glc_tensor b);
GLC_API glc_tensor glc_scale(glc_graph *g, glc_tensor x, float a, float b);
GLC_API glc_tensor glc_unary(glc_graph *g, glc_unary_op op, glc_tensor x, float param);
GLC_API glc_tensor glc_softmax(glc_graph *g, glc_tensor x, const glc_softmax_desc *desc);
GLC_API glc_tensor glc_rms_norm(glc_graph *g, glc_tensor x, glc_tensor weight, float eps);
GLC_API glc_tensor glc_layer_norm(glc_graph *g, glc_tensor x, glc_tensor weight, glc_tensor bias,
                                  float eps);
GLC_API glc_tensor glc_sum(glc_graph *g, glc_tensor x);
GLC_API glc_tensor glc_mean(glc_graph *g, glc_tensor x);
/* I32 indices */
GLC_API glc_tensor glc_argmax(glc_graph *g, glc_tensor x);
/* desc->freq_factors is ignored: the graph takes them as a tensor. */
GLC_API glc_tensor glc_rope(glc_graph *g, glc_tensor x, glc_tensor positions,
                            const glc_rope_desc *desc, glc_tensor freq_factors);
GLC_API glc_tensor glc_matmul(glc_graph *g, glc_tensor a, glc_tensor b, glc_tensor bias,
                              const glc_matmul_desc *desc);
GLC_API glc_tensor glc_matmul_affine(glc_graph *g, glc_tensor a, glc_tensor w, glc_tensor scales,
                                     glc_tensor biases, int bits, int group_size,
                                     glc_tensor bias);
GLC_API glc_tensor glc_matmul_q(glc_graph *g, glc_tensor a, glc_tensor w, glc_tensor bias);
GLC_API glc_tensor glc_matmul_expert(glc_graph *g, glc_tensor a, glc_tensor w, glc_tensor ids);
/* Attention; desc->kv_len may be a dim variable (GLC_DIM_VAR) of the
 * graph: the keys in use follow it at each run. The decode scratch is the
 * compiler's. */
GLC_API glc_tensor glc_sdpa(glc_graph *g, glc_tensor q, glc_tensor k, glc_tensor v,
                            const glc_sdpa_desc *desc);
GLC_API glc_tensor glc_sdpa_decode(glc_graph *g, glc_tensor q, glc_tensor k, glc_tensor v,
                                   const glc_sdpa_desc *desc);
/* A new shape over x's bytes (same element count at every variable value;
 * dims may be variables): no copy, no dispatch. Not for quantized dtypes. */
GLC_API glc_tensor glc_reshape(glc_graph *g, glc_tensor x, int rank, const int64_t *shape);
/* Writes rows of src into persistent state: dst[ids[i], ...] = src[i, ...]
 * where dst is a handle (glc_graph_handle) or what an earlier glc_set_rows
 * returned. Returns the handle after the write: ops that should see the
 * new rows read that tensor. The write runs at every run of the plan
 * whether or not anything in the graph reads it (a KV cache append). It
 * is in place: ops made before it that read the handle see the rows before
 * it, and a value of the handle from before it (dst, a reshape of dst) can
 * no longer be read, written or named an output afterwards
 * (GLC_ERR_INVALID_ARG, naming the handle); copy it first to keep it. */
GLC_API glc_tensor glc_set_rows(glc_graph *g, glc_tensor dst, glc_tensor src, glc_tensor ids);
/* Data movement (as glc_op_*). get_rows gives f32; copy gives out_dtype
 * (0: x's dtype); concat and slice keep the dtype of their (first) input.
 * slice's start and len are numbers, not dim variables. */
GLC_API glc_tensor glc_get_rows(glc_graph *g, glc_tensor table, glc_tensor ids);
GLC_API glc_tensor glc_copy(glc_graph *g, glc_tensor x, const int *perm, glc_dtype out_dtype);
GLC_API glc_tensor glc_concat(glc_graph *g, glc_tensor a, glc_tensor b, int axis);
GLC_API glc_tensor glc_slice(glc_graph *g, glc_tensor x, int axis, int64_t start, int64_t len);

/* ---- Plans: a compiled graph, run many times ------------------------------ */

typedef struct glc_plan glc_plan;

/* glc_compile_desc.flags */
enum glc_compile_flags {
    GLC_COMPILE_NO_FUSE = 1u << 0, /* keep every op its own dispatch (bisecting, comparing) */
    /* Memory before overlap: reuse bytes as soon as a tensor's last reader
     * ran, which may put a barrier between ops the data lets run together.
     * Default: ops go in levels of their dependency DAG and bytes are
     * reused only across a barrier the data needs anyway, so the plan has
     * the fewest barriers the graph allows (glc_plan_info.min_barriers). */
    GLC_COMPILE_MEMORY_TIGHT = 1u << 1
};
typedef struct glc_compile_desc {
    uint32_t flags; /* GLC_COMPILE_* bits; others reserved (0) */
} glc_compile_desc;

/* Compiles g (desc may be NULL): live ops, kernels, one memory plan, the
 * barrier plan. The plan keeps what it needs of g: the graph may be
 * destroyed afterwards. The graph's first builder error comes out here. */
GLC_API glc_status glc_graph_compile(glc_graph *g, const glc_compile_desc *desc, glc_plan **out);
GLC_API void glc_plan_destroy(glc_plan *p);

/* Inputs and outputs in GPU memory: glc_plan_bind_input / _output make
 * input or output `name` live in view's range (a glcompute buffer, or an
 * application's GL buffer through glc_buffer_wrap_gl) for every later run,
 * until bound elsewhere or unbound (a view with buffer NULL). A bound input
 * is read there, never uploaded: runs take no data for it (named runs must
 * not name it; run_slots / run_raw / commit_no_wait ignore its slot, which
 * may be NULL, and inputs itself may be NULL when every input is bound). A
 * bound output is written there by the op that makes it, with no copy
 * (an output whose bytes are not its own: a view of another value, the
 * same value as another output, or one that feeds a handle, stays where
 * the plan keeps it and one GPU copy after each run puts it there); runs
 * leave nothing of it in host memory (named runs must not name it; its
 * slice has 0 bytes). The view's dtype and shape are the declared ones,
 * variables at their maxima; its offset a multiple of the device's SSBO
 * offset alignment. Refused (nothing changes): a bound output range that
 * overlaps another bound range of the plan, a buffer of another device or
 * of the plan.
 * The plan keeps a bound buffer alive: glc_buffer_destroy of it takes
 * effect at unbinding, and a run meanwhile is refused. A wrapped GL buffer
 * the application deleted is detected at the next run (glIsBuffer).
 * Ordering with the application's own GL work: writes by GL commands
 * (glBufferSubData, glCopyBufferSubData, transform feedback, rendering)
 * are ordered before a later run by GL itself; writes by the application's
 * own shaders (SSBO or image stores) need glMemoryBarrier with
 * GL_SHADER_STORAGE_BARRIER_BIT (or GL_SHADER_IMAGE_ACCESS_BARRIER_BIT)
 * before the run. Before the application uses a bound output (a draw, a
 * map, a copy, a fetch), glMemoryBarrier with the bit of that use
 * (GL_VERTEX_ATTRIB_ARRAY_BARRIER_BIT, ...; glc_device_release_to_gl).
 * glc_plan_run_pipelined: every set reads a bound input where it is (its
 * pointers may be NULL) and a bound output holds the last set's result
 * (its pointers may be NULL). */
GLC_API glc_status glc_plan_bind_input(glc_plan *p, const char *name, glc_view view);
GLC_API glc_status glc_plan_bind_output(glc_plan *p, const char *name, glc_view view);
/* One run on views, by slot (glc_plan_input_count / _output_count of
 * them): a view with a buffer binds that input or output for this run only
 * (as glc_plan_bind_input / _output, the same checks), one with buffer NULL
 * keeps its persistent binding, which every input then must have (no host
 * data is taken); outputs not bound anywhere are left in the plan (a later
 * run_slots-style read is not made). The bindings before the call are back
 * afterwards, also on failure. Rebinding costs host time per call: a plan
 * run every frame on the same memory binds it once instead. */
GLC_API glc_status glc_plan_run_views(glc_plan *p, const glc_view *inputs,
                                      const glc_view *outputs);
/* Texture inputs and outputs: glc_plan_bind_input_texture makes input
 * `name` be read from level `level` of the application's 2D texture (GL
 * name; immutable storage from glTexStorage2D, GL_RGBA8 or GL_R32F: the
 * ES 3.1 image formats a plan reads and writes, others GLC_ERR_UNSUPPORTED)
 * at every later run, glc_plan_bind_output_texture makes output `name` be
 * written there; 0 unbinds. The tensor is f32 [H, W, 4] (RGBA8: unorm
 * channels in [0, 1]; stores clamp and round) or [H, W, 1] (R32F), H and W
 * the level's size, no variable dims; texel (x, y) is element [y, x, ..],
 * row 0 the texture's first (GL's bottom). A bound texture replaces a bound
 * buffer range and the other way round. Runs take no data and give nothing
 * in host memory for it, as for a bound buffer; the plan copies between the
 * texture and its own storage on the GPU (one dispatch each way, image unit
 * 0). Texels the application rendered need no barrier before a run; ones
 * it wrote with image stores need GL_SHADER_IMAGE_ACCESS_BARRIER_BIT; after
 * a run, the bit of its use (GL_TEXTURE_FETCH_BARRIER_BIT before sampling,
 * GL_FRAMEBUFFER_BARRIER_BIT, ...). A texture the application deleted is
 * reported at the next run. On a refusal that names a texture of another
 * target, the GL_INVALID_OPERATION the check raised is consumed. */
GLC_API glc_status glc_plan_bind_input_texture(glc_plan *p, const char *name,
                                               uint32_t gl_texture, int level);
GLC_API glc_status glc_plan_bind_output_texture(glc_plan *p, const char *name,
                                                uint32_t gl_texture, int level);
/* For the application's own use of what glcompute wrote: issues
 * glMemoryBarrier(gl_barrier_bits) in the device's context (the bits of
 * the uses to come: GL_VERTEX_ATTRIB_ARRAY_BARRIER_BIT before a draw reads
 * a bound output as vertices, GL_BUFFER_UPDATE_BARRIER_BIT before a map or
 * glBufferSubData, ...; GL_ALL_BARRIER_BITS). Bits ES 3.1 does not define:
 * GLC_ERR_INVALID_ARG. */
GLC_API glc_status glc_device_release_to_gl(glc_device *dev, uint32_t gl_barrier_bits);

/* Params (weights): f32 values converted to the param's dtype (F32, F16,
 * BF16), count = its element count; or bytes in the param's own dtype
 * (quantized blocks included: dtype must be the declared one). */
GLC_API glc_status glc_plan_set_param(glc_plan *p, const char *name, const float *data,
                                      size_t count);
GLC_API glc_status glc_plan_set_param_typed(glc_plan *p, const char *name, const void *data,
                                            size_t bytes, glc_dtype dtype);

/* Named inputs and outputs of glc_plan_run: float tensors as f32 values
 * (converted from/to a 16-bit declared dtype), integer tensors as 32-bit
 * integers; count = the tensor's elements at the current variable values. */
typedef struct glc_plan_input {
    const char *name;
    const void *data;
    size_t count;
} glc_plan_input;
typedef struct glc_plan_output {
    const char *name;
    void *data;
    size_t count;
} glc_plan_output;

/* Runs once: every input given, the outputs named in out copied to caller
 * memory. On failure nothing is written to out. */
GLC_API glc_status glc_plan_run(glc_plan *p, const glc_plan_input *in, int nin,
                                const glc_plan_output *out, int nout);

/* Slots: inputs and outputs by position (the order of glc_graph_input /
 * glc_graph_output), data in the declared dtype. */
GLC_API int glc_plan_input_count(const glc_plan *p);
GLC_API int glc_plan_output_count(const glc_plan *p);
/* (offset, bytes) of an output inside glc_plan_arena_ptr's region */
typedef struct glc_plan_slice {
    size_t offset, bytes;
} glc_plan_slice;
/* inputs[i]: the bytes of input slot i; outs[j] gets output slot j's place
 * in the host region of glc_plan_arena_ptr, valid until the next run. */
GLC_API glc_status glc_plan_run_slots(glc_plan *p, const void *const *inputs,
                                      glc_plan_slice *outs);
GLC_API const void *glc_plan_arena_ptr(const glc_plan *p);
/* As run_slots, with the outputs as pointers. */
GLC_API glc_status glc_plan_run_raw(glc_plan *p, const void *const *inputs, const void **outs);

/* Handles: contents set (bytes in the handle's dtype) before the first run
 * and read back at any time; a feed copies an output (same dtype and
 * shape) into a handle on the GPU after each run, no host round trip. */
GLC_API glc_status glc_plan_bind_handle(glc_plan *p, const char *name, const void *data,
                                        size_t bytes);
GLC_API glc_status glc_plan_read_handle(glc_plan *p, const char *name, void *data,
                                        size_t bytes);
GLC_API glc_status glc_plan_set_handle_feed(glc_plan *p, const char *handle, const char *output);

/* Sharing storage between plans of one device (a prefill and a decode plan
 * of one model): every param (GLC_SHARE_PARAMS) and/or handle
 * (GLC_SHARE_HANDLES) of dst that src has too, with the same dtype and
 * shape, uses src's buffer from now on. src must outlive dst. */
enum glc_share_flags {
    GLC_SHARE_PARAMS = 1u << 0,
    GLC_SHARE_HANDLES = 1u << 1
};
GLC_API glc_status glc_plan_share(glc_plan *dst, const glc_plan *src, unsigned what);
/* A plan of the same graph with its own arena and handles, sharing src's
 * programs and params (src must outlive it). It is compiled as src was
 * (its glc_compile_desc flags, the same fused program). */
GLC_API glc_status glc_plan_clone(const glc_plan *src, glc_plan **out);

/* Variables: a plan is compiled for their maxima and runs at any values
 * within their bounds, no recompile. Values stay until set again.
 * Errors (the plan keeps its values): GLC_ERR_INVALID_ARG for an unknown
 * name; GLC_ERR_BOUNDS for a value outside its bounds; values at which an
 * op of the graph does not hold get its rule's status (GLC_ERR_BOUNDS for a
 * range, as a slice past a dim they shrink; GLC_ERR_INVALID_ARG for the
 * rest); GLC_ERR_UNSUPPORTED when a step would need more scratch than was
 * planned at the maxima. */
typedef struct glc_plan_var {
    const char *name;
    int64_t value;
} glc_plan_var;
GLC_API glc_status glc_plan_set_vars(glc_plan *p, const glc_plan_var *vars, int n);
GLC_API glc_status glc_plan_run_with_vars(glc_plan *p, const glc_plan_var *vars, int nvars,
                                          const glc_plan_input *in, int nin,
                                          const glc_plan_output *out, int nout);
/* The first variable of the graph (the sequence length, by convention). */
GLC_API glc_status glc_plan_set_active_extent(glc_plan *p, int64_t rows);

typedef struct glc_plan_info {
    uint32_t dispatches, barriers; /* per run, at the current variable values */
    uint32_t steps;                /* ops after fusion and dead-code removal */
    uint32_t fused;                /* patterns the fusion passes rewrote */
    size_t arena_bytes;            /* all arena buffers */
    size_t liveness_bound;         /* max bytes live at once under the plan's memory
                                    * policy: what any placement of it needs */
    size_t params_bytes;
    int arena_buffers;
    /* The ops' dependency DAG: its levels (intervals between barriers) and
     * min_barriers = levels - 1, the longest dependency path, the fewest
     * barriers between ops any order allows (an op of several dispatches
     * adds its own). The liveness bounds with lifetimes counted in ops
     * (GLC_COMPILE_MEMORY_TIGHT's) and in levels (the default's). */
    uint32_t levels, min_barriers;
    size_t liveness_bound_ops, liveness_bound_levels;
} glc_plan_info;
GLC_API glc_status glc_plan_stats(const glc_plan *p, glc_plan_info *out);

/* ---- Plans: runs without a wait, pipelined, typed, profiled; listing ---- */

/* Bytes of input / output slot `slot` at the current variable values (in
 * the declared dtype, as run_slots takes and gives them); 0 for a slot
 * that does not exist. */
GLC_API size_t glc_plan_input_bytes(const glc_plan *p, int slot);
GLC_API size_t glc_plan_output_bytes(const glc_plan *p, int slot);

/* A run in two halves, so the host can work while the GPU runs.
 * glc_plan_commit_no_wait uploads the inputs by slot (bytes in the declared
 * dtype, as glc_plan_run_slots), encodes the plan's commands, flushes them
 * with a fence the plan keeps and returns without waiting for the GPU.
 * glc_plan_sync_pending waits for that fence, reads the outputs into the
 * host region of glc_plan_arena_ptr and writes each output slot's place
 * there to outs[j] (valid until the next run), sized at the variable values
 * the run was committed with.
 * One run may be pending per plan. While it is, every other run of the plan
 * (run, run_slots, run_raw, run_typed, run_with_vars, run_pipelined,
 * run_profiled, commit_no_wait) is refused with GLC_ERR_STATE and changes
 * nothing; params, handles and variables may be set (GL orders those writes
 * after the pending commands). sync_pending with nothing pending is
 * GLC_ERR_STATE. When the wait fails (GLC_ERR_CONTEXT_LOST, GLC_ERR_GL)
 * nothing is pending afterwards and outs is untouched. glc_plan_destroy
 * drops a pending run. Neither call allocates. */
GLC_API glc_status glc_plan_commit_no_wait(glc_plan *p, const void *const *inputs);
GLC_API glc_status glc_plan_sync_pending(glc_plan *p, glc_plan_slice *outs);
/* Waits up to timeout_ns (0: just a poll) for the GPU to finish the pending
 * run, which stays pending: GLC_OK when it has (glc_plan_sync_pending then
 * returns without blocking), GLC_ERR_TIMEOUT when not yet (a frame loop
 * polls and draws meanwhile), GLC_ERR_STATE when no run is pending. */
GLC_API glc_status glc_plan_wait_pending(glc_plan *p, uint64_t timeout_ns);
/* 1 while a run of glc_plan_commit_no_wait waits for glc_plan_sync_pending. */
GLC_API int glc_plan_is_pending(const glc_plan *p);

/* n runs in a row with one wait at the end. inputs holds n * input_count
 * pointers: set k's slot i is inputs[k * input_count + i] (bytes in the
 * declared dtype); outputs holds n * output_count pointers: set k's output
 * slot j goes to outputs[k * output_count + j] (glc_plan_output_bytes(p, j)
 * bytes). All sets are uploaded into a staging buffer first; then for each
 * set its inputs are copied into the plan's input slots on the GPU, the
 * commands run, the outputs are copied into the set's own region of a
 * second staging buffer, and the work is flushed, so the GPU runs set k
 * while set k + 1 is encoded. The result is that of n glc_plan_run_slots
 * calls in order (handle feeds included). The staging buffers grow to the
 * largest n seen and are kept, so a later call with no larger n allocates
 * nothing. On failure nothing is written to outputs. */
GLC_API glc_status glc_plan_run_pipelined(glc_plan *p, int n, const void *const *inputs,
                                          void *const *outputs);

/* Named inputs and outputs of glc_plan_run_typed: bytes in the tensor's
 * declared dtype, no conversion. dtype must be the declared one and bytes
 * its byte count at the current variable values (block types included). */
typedef struct glc_plan_typed_input {
    const char *name;
    const void *data;
    size_t bytes;
    glc_dtype dtype;
} glc_plan_typed_input;
typedef struct glc_plan_typed_output {
    const char *name;
    void *data;
    size_t bytes;
    glc_dtype dtype;
} glc_plan_typed_output;
/* As glc_plan_run, with typed data: every input given, each output named
 * in out copied to caller memory. GLC_ERR_INVALID_ARG (message naming the
 * tensor, the bytes and dtype given and expected) for a missing, unknown,
 * repeated or mis-sized tensor; on failure nothing is written to out. */
GLC_API glc_status glc_plan_run_typed(glc_plan *p, const glc_plan_typed_input *in, int nin,
                                      const glc_plan_typed_output *out, int nout);

/* How the times of a profiled run were taken. */
typedef enum glc_profile_clock {
    GLC_PROFILE_CLOCK_NONE = 0,
    GLC_PROFILE_CLOCK_ELAPSED,   /* a GL_TIME_ELAPSED query around each dispatch */
    GLC_PROFILE_CLOCK_TIMESTAMP, /* GL_TIMESTAMP queries before and after each dispatch */
    GLC_PROFILE_CLOCK_CPU        /* no timer queries: glFinish around each dispatch */
} glc_profile_clock;

typedef struct glc_plan_dispatch_time {
    const char *kernel; /* the kernel program ("reduce", "binary", ...) */
    const char *op;     /* the op it runs for ("rms_norm", "add", ...) */
    uint32_t index;     /* its position in the plan's command list */
    uint64_t gpu_ns;
} glc_plan_dispatch_time;

/* entries and capacity are the caller's (capacity >= the plan's
 * dispatches, glc_plan_stats); the rest is written by the run. */
typedef struct glc_plan_profile {
    glc_plan_dispatch_time *entries;
    uint32_t capacity;
    uint32_t count;          /* dispatches of the run, in command order */
    uint64_t total_ns;       /* the sum of entries[].gpu_ns */
    glc_profile_clock clock;
    int disjoint;            /* 1: the GPU reported a disjoint event
                              * (GL_GPU_DISJOINT_EXT): the times are not
                              * reliable, run again */
} glc_plan_profile;

/* As glc_plan_run_slots, timing each dispatch on the GPU. With
 * GL_EXT_disjoint_timer_query, a GL_TIME_ELAPSED query around each
 * dispatch, and GL_TIMESTAMP pairs as well until the plan has seen which
 * of the two measures compute (Mesa llvmpipe's TIME_ELAPSED reads next to
 * nothing for compute); without it, the host clock around each dispatch
 * with a glFinish before and after. Profiled runs are slower than plain ones and
 * allocate on first use (the query objects). The kernel and op strings
 * live as long as the device. GLC_ERR_BOUNDS when prof->capacity is below
 * the plan's dispatches; on failure *prof and outs are untouched. On an
 * adopted context the application's timer state is left alone: while it has
 * a GL_TIME_ELAPSED query active the run times with GL_TIMESTAMP queries (or
 * the host clock), and GL_GPU_DISJOINT_EXT, which reading clears, is never
 * read there (disjoint stays 0). */
GLC_API glc_status glc_plan_run_profiled(glc_plan *p, const void *const *inputs,
                                         glc_plan_slice *outs, glc_plan_profile *prof);
/* Orders prof's entries by time, longest first (ties: command order). */
GLC_API void glc_plan_profile_sort(glc_plan_profile *prof);

/* A listing of a plan, for people: its buffers, inputs, outputs and
 * params with their places, then each dispatch in command order with its
 * kernel, op, defines, work groups and bindings (program buffer, byte
 * range, access, tensor), and a line wherever a barrier falls, at the
 * current variable values. With GLC_PLAN_DUMP_SOURCE the GLSL source each
 * distinct kernel program is compiled from follows. The text is passed to
 * fn in pieces (lines, and whole sources) in order. Touches no GL. */
enum glc_plan_dump_flags {
    GLC_PLAN_DUMP_SOURCE = 1u << 0
};
typedef void (*glc_text_fn)(void *user, const char *text);
GLC_API glc_status glc_plan_dump(const glc_plan *p, unsigned flags, glc_text_fn fn, void *user);

/* ---- GGUF files (llama.cpp's model format): a reader, GL-free --------- */

/* A GGUF file, mapped and checked whole at open: versions 2 and 3,
 * little-endian. Every count, length, value type, the alignment
 * (general.alignment), each tensor's dims, GGML type, offset and size are
 * checked against the file's bytes; a bad file gets GLC_ERR_INVALID_ARG and
 * a message (glc_device_errmsg(NULL)) naming the field and its byte
 * offset, never a crash. Tensor types the reader knows the block size of:
 * F32 F16 BF16 F64 I8 I16 I32 I64, Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q8_1, Q2_K to
 * Q8_K (other types: the file is refused). */
typedef struct glc_gguf glc_gguf;
typedef struct glc_gguf_tensor {
    const char *name;   /* terminated; valid until glc_gguf_close */
    uint32_t ggml_type; /* GGML's type id: 0 F32, 1 F16, 2 Q4_0, 8 Q8_0, 30 BF16, ... */
    int rank;
    int64_t shape[4];   /* outermost first (the file lists them innermost first) */
    uint64_t offset;    /* of the data, from the file's start */
    uint64_t bytes;
    const void *data;   /* the mapped bytes: valid until glc_gguf_close */
} glc_gguf_tensor;
GLC_API glc_status glc_gguf_open(const char *path, glc_gguf **out);
/* The same over bytes in memory (they must outlive the reader). */
GLC_API glc_status glc_gguf_open_memory(const void *data, size_t size, glc_gguf **out);
GLC_API void glc_gguf_close(glc_gguf *f);
GLC_API uint32_t glc_gguf_version(const glc_gguf *f);
GLC_API uint32_t glc_gguf_alignment(const glc_gguf *f);
GLC_API int64_t glc_gguf_tensor_count(const glc_gguf *f);
GLC_API glc_status glc_gguf_tensor_at(const glc_gguf *f, int64_t i, glc_gguf_tensor *out);
GLC_API int64_t glc_gguf_find_tensor(const glc_gguf *f, const char *name); /* -1: none */
/* GGML's name of a type id ("q4_K", "iq4_nl", "bf16", ...), "?" for ids it
 * does not have. */
GLC_API const char *glc_gguf_type_name(uint32_t ggml_type);
/* Metadata by key. Value types (GGUF's): 0 u8, 1 i8, 2 u16, 3 i16, 4 u32,
 * 5 i32, 6 f32, 7 bool, 8 string, 9 array, 10 u64, 11 i64, 12 f64;
 * glc_gguf_value_type gives -1 for a missing key. get_int takes integers
 * and bools (a u64 past INT64_MAX refused), get_float numbers, get_string
 * a string (not terminated: its bytes and length), get_array an array's
 * element type, count and first element's bytes (fixed-size elements are
 * packed little-endian), glc_gguf_array_string element i of a string
 * array. */
GLC_API int64_t glc_gguf_kv_count(const glc_gguf *f);
/* Key i (0 .. kv_count - 1): its bytes (not terminated) and length; NULL
 * past the end. */
GLC_API const char *glc_gguf_key_at(const glc_gguf *f, int64_t i, size_t *len);
GLC_API int glc_gguf_value_type(const glc_gguf *f, const char *key);
GLC_API glc_status glc_gguf_get_int(const glc_gguf *f, const char *key, int64_t *out);
GLC_API glc_status glc_gguf_get_float(const glc_gguf *f, const char *key, double *out);
GLC_API glc_status glc_gguf_get_string(const glc_gguf *f, const char *key, const char **s,
                                       size_t *len);
GLC_API glc_status glc_gguf_get_array(const glc_gguf *f, const char *key, int *elem_type,
                                      uint64_t *count, const void **data);
GLC_API glc_status glc_gguf_array_string(const glc_gguf *f, const char *key, uint64_t i,
                                         const char **s, size_t *len);

/* A GGUF writer: keys and tensors in the order given, written as version 3
 * with each tensor's data at a multiple of the alignment (general.alignment
 * when set: a u32 power of two up to 65536; else 32). set_value takes a
 * fixed-size value type (not 8 string or 9 array) and its value in host
 * memory; set_array a fixed-size element type; a key or tensor name given
 * twice, a type or byte count that does not fit (add_tensor: GGML type id,
 * shape outermost first, the bytes that shape takes) is refused with a
 * message. Tensor data is read at glc_gguf_write: it must stay valid until
 * then. */
typedef struct glc_gguf_writer glc_gguf_writer;
GLC_API glc_status glc_gguf_writer_create(glc_gguf_writer **out);
GLC_API void glc_gguf_writer_destroy(glc_gguf_writer *w);
GLC_API glc_status glc_gguf_set_value(glc_gguf_writer *w, const char *key, int type,
                                      const void *value);
GLC_API glc_status glc_gguf_set_string(glc_gguf_writer *w, const char *key, const char *s);
GLC_API glc_status glc_gguf_set_array(glc_gguf_writer *w, const char *key, int elem_type,
                                      uint64_t count, const void *data);
GLC_API glc_status glc_gguf_set_string_array(glc_gguf_writer *w, const char *key,
                                             const char *const *strings, uint64_t count);
GLC_API glc_status glc_gguf_add_tensor(glc_gguf_writer *w, const char *name, uint32_t ggml_type,
                                       int rank, const int64_t *shape, const void *data,
                                       uint64_t bytes);
GLC_API glc_status glc_gguf_write(glc_gguf_writer *w, const char *path);

/* ---- Tokenizer: a GGUF file's vocabulary, GL-free ------------------------ */

/* Text to token ids and back, as the file's tokenizer.ggml.* metadata says
 * and as llama.cpp does it:
 *  - model "llama" (SentencePiece BPE): spaces become U+2581 and one is put
 *    before the text and before text that follows a special token
 *    (tokenizer.ggml.add_space_prefix, default true); the text is cut into
 *    UTF-8 characters and the adjacent pair whose concatenation is a token
 *    of the highest score (tokenizer.ggml.scores; ties: the leftmost) is
 *    merged until none is; a piece that is no token becomes its bytes'
 *    tokens (<0xNN>, else the byte alone), or one unknown token when a byte
 *    has neither.
 *  - model "gpt2" (byte-level BPE): the text is split by the pre-tokenizer
 *    tokenizer.ggml.pre names (absent, "gpt-2", "phi-2", "mpt", "olmo",
 *    "jais": GPT-2's split; "llama-bpe", "llama3", "llama-v3", "falcon3",
 *    "falcon-h1", "pixtral", "midm-2.0", "lfm2": Llama 3's, where a piece
 *    that is a token whole is taken whole; "qwen2", "deepseek-r1-qwen",
 *    "stablelm2", "megrez": Qwen2's; other names are refused), each piece's
 *    bytes are written as GPT-2's byte characters and merged by
 *    tokenizer.ggml.merges, a merge listed earlier first.
 * The splits' letters, numbers and white space are Unicode's (categories
 * L and N of Unicode 14, and White_Space). Invalid UTF-8 is kept byte for
 * byte (llama.cpp makes it U+FFFD): every byte string encodes, and decodes
 * back exactly for "gpt2", and for "llama" when the vocabulary has byte
 * tokens, U+2581 and no U+2581 of the text's own.
 *
 * Token types (tokenizer.ggml.token_type; absent: all normal) and what a
 * token decodes to: normal (SentencePiece: U+2581 as a space; gpt2: the
 * byte characters as their bytes), byte (<0xNN>: the byte), user defined
 * (its text), control, unknown and unused (nothing; control and unknown
 * give their text with GLC_DETOKENIZE_SPECIAL). Special tokens in the
 * input: user-defined tokens' texts are always matched before the text is
 * split, control and unknown tokens' texts with
 * GLC_TOKENIZE_PARSE_SPECIAL; the longest match at the leftmost place
 * wins.
 *
 * A tokenizer copies what it needs: it stays valid after glc_gguf_close.
 * It does not change after create, so any number of threads may use one at
 * once (a stream: one thread at a time). */
typedef struct glc_tokenizer glc_tokenizer;
typedef struct glc_tokenizer_stream glc_tokenizer_stream;

typedef enum glc_tokenizer_model {
    GLC_TOKENIZER_LLAMA = 1, /* SentencePiece */
    GLC_TOKENIZER_GPT2       /* byte-level BPE */
} glc_tokenizer_model;
typedef enum glc_tokenizer_pre {
    GLC_TOKENIZER_PRE_NONE = 0, /* model "llama" */
    GLC_TOKENIZER_PRE_GPT2,
    GLC_TOKENIZER_PRE_LLAMA3,
    GLC_TOKENIZER_PRE_QWEN2
} glc_tokenizer_pre;
typedef enum glc_token_type {
    GLC_TOKEN_NORMAL = 1,
    GLC_TOKEN_UNKNOWN,
    GLC_TOKEN_CONTROL,
    GLC_TOKEN_USER_DEFINED,
    GLC_TOKEN_UNUSED,
    GLC_TOKEN_BYTE
} glc_token_type;

/* Reads tokenizer.ggml.model, .pre, .tokens, .scores, .token_type,
 * .merges, .bos_token_id, .eos_token_id, .eot_token_id, .eom_token_id,
 * .unknown_token_id, .padding_token_id, .add_bos_token, .add_eos_token and
 * .add_space_prefix. Defaults as llama.cpp's: "llama" takes BOS 1, EOS 2
 * and unknown 0 (ids the vocabulary has), adds BOS and no EOS; "gpt2" has
 * none of them and adds BOS only for Llama 3's pre-tokenizer. Every count,
 * type and id is checked: scores and types one per token, types 1..6, a
 * "llama" byte token written <0xNN>, ids inside the vocabulary, an add
 * flag with its id, each merge "a b" of two tokens that make a token; a bad
 * file gets GLC_ERR_INVALID_ARG and a message naming the key and the index
 * (glc_device_errmsg(NULL)); a model or pre-tokenizer this library does
 * not have, GLC_ERR_UNSUPPORTED naming it. End of generation (is_eog): the
 * EOS, EOT and EOM ids and the tokens llama.cpp knows by their text
 * (<|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, <|endoftext|>,
 * <|eom_id|>, <EOT>, <|end_of_text|>), which are made control tokens as
 * llama.cpp does. *out is untouched on failure. */
GLC_API glc_status glc_tokenizer_create(const glc_gguf *f, glc_tokenizer **out);
GLC_API void glc_tokenizer_destroy(glc_tokenizer *t);

typedef struct glc_tokenizer_info {
    glc_tokenizer_model model;
    glc_tokenizer_pre pre;
    int32_t vocab_size;
    int32_t bos, eos, eot, unk, pad; /* -1: none */
    int add_bos, add_eos;            /* the file's (or the default) */
    int add_space_prefix;            /* "llama" only */
    size_t max_token_bytes;          /* the most bytes glc_tokenizer_token_bytes gives */
} glc_tokenizer_info;
GLC_API glc_status glc_tokenizer_get_info(const glc_tokenizer *t, glc_tokenizer_info *out);
/* Token id's text as the vocabulary has it (terminated; len without the
 * NUL, a text may hold NULs of its own), or NULL (len untouched) for an id
 * outside 0 .. vocab_size - 1. */
GLC_API const char *glc_tokenizer_token_text(const glc_tokenizer *t, int32_t id, size_t *len);
/* The glc_token_type of id, or 0 outside the vocabulary. */
GLC_API int glc_tokenizer_token_type(const glc_tokenizer *t, int32_t id);
/* Nonzero when id ends generation (see glc_tokenizer_create). */
GLC_API int glc_tokenizer_is_eog(const glc_tokenizer *t, int32_t id);
/* The id of the token whose text is text[0 .. len), or -1 (a text given
 * twice in the vocabulary: the last, as llama.cpp). */
GLC_API int32_t glc_tokenizer_find(const glc_tokenizer *t, const char *text, size_t len);

enum glc_tokenize_flags {
    GLC_TOKENIZE_NO_BOS_EOS = 1u << 0,   /* none of the file's add_bos / add_eos */
    GLC_TOKENIZE_ADD_BOS = 1u << 1,      /* BOS first, whatever the file says */
    GLC_TOKENIZE_ADD_EOS = 1u << 2,      /* EOS last, whatever the file says */
    GLC_TOKENIZE_PARSE_SPECIAL = 1u << 3 /* match control and unknown tokens' texts */
};
/* Encodes text[0 .. len) (any bytes; text may be NULL when len is 0) into
 * ids[0 .. *n). BOS and EOS as the file says (add_bos_token,
 * add_eos_token), changed by flags. When the ids do not fit in cap
 * (cap 0 and ids NULL: a size query) it returns GLC_ERR_BOUNDS with *n set
 * to the count needed and ids untouched. GLC_ERR_INVALID_ARG for a NULL
 * argument, an unknown flag, a text of 2^29 bytes or more, a BOS or EOS
 * asked for that the vocabulary does not have, or a character with
 * neither byte tokens nor an unknown token to stand for it.
 * GLC_ERR_OUT_OF_MEMORY: scratch memory (about 70
 * bytes per input byte) was not had. */
GLC_API glc_status glc_tokenizer_encode(const glc_tokenizer *t, const char *text, size_t len,
                                        unsigned flags, int32_t *ids, size_t cap, size_t *n);

enum glc_detokenize_flags {
    GLC_DETOKENIZE_SPECIAL = 1u << 0,   /* control and unknown tokens as their text */
    GLC_DETOKENIZE_KEEP_SPACE = 1u << 1 /* "llama": keep the leading space (below) */
};
/* The bytes token id decodes to (terminated; *len without the NUL; valid
 * while t lives), or NULL (len untouched) for an id outside the
 * vocabulary. flags: GLC_DETOKENIZE_SPECIAL. A token's bytes may be a part
 * of a UTF-8 character. */
GLC_API const char *glc_tokenizer_token_bytes(const glc_tokenizer *t, int32_t id, unsigned flags,
                                              size_t *len);
/* Decodes ids[0 .. n) into buf: the tokens' bytes in order and a NUL
 * (*len: the bytes without it). "llama" with add_space_prefix: the leading
 * space of a normal token that comes first, or right after a control or
 * user-defined token, is left out (where encode put one), unless
 * GLC_DETOKENIZE_KEEP_SPACE (for ids that continue a text). Bytes are
 * given as they are, invalid UTF-8 included. When they and the NUL do not
 * fit in cap: GLC_ERR_BOUNDS, *len the bytes needed (without the NUL), buf
 * untouched; an id outside the vocabulary: GLC_ERR_INVALID_ARG naming its
 * index. */
GLC_API glc_status glc_tokenizer_decode(const glc_tokenizer *t, const int32_t *ids, size_t n,
                                        unsigned flags, char *buf, size_t cap, size_t *len);

/* Decoding token by token, for generation: each push gives the text that
 * is complete so far and holds back the bytes of a UTF-8 character that
 * the next tokens may complete (at most 3); a byte that cannot start or
 * continue one is given as it is. The pushes' texts and then flush's (the
 * bytes held back) are, joined, glc_tokenizer_decode's text for the same
 * ids and flags, and no text ends inside a character a later byte
 * completes. flags: as glc_tokenizer_decode's. *text is terminated and
 * valid until the next call on s. push: GLC_ERR_INVALID_ARG for an id
 * outside the vocabulary (s unchanged). A stream uses t: t must outlive
 * it. flush makes s as new. */
GLC_API glc_status glc_tokenizer_stream_create(const glc_tokenizer *t, unsigned flags,
                                               glc_tokenizer_stream **out);
GLC_API void glc_tokenizer_stream_destroy(glc_tokenizer_stream *s);
GLC_API glc_status glc_tokenizer_stream_push(glc_tokenizer_stream *s, int32_t id,
                                             const char **text, size_t *len);
GLC_API glc_status glc_tokenizer_stream_flush(glc_tokenizer_stream *s, const char **text,
                                              size_t *len);

#ifdef __cplusplus
}
#endif

#endif
