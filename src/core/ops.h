/*
 * The op descriptor table, GL-free: for each op, its shape and dtype rule
 * and its plan (which kernels, with which defines, local size, work-group
 * counts, bindings as byte ranges of its tensors, and params). Eager ops
 * (op_run.c) and the graph compiler both use it, so an op is described
 * once.
 *
 * Tensors of an op are numbered inputs first, then outputs; optional
 * inputs (a bias, say) are present or not (`present`). A plan may hold
 * several dispatches (two-pass reductions, flash-decoding) and name
 * scratch bytes, bound as tensor GLC__SCRATCH.
 */
#ifndef GLC_OPS_H
#define GLC_OPS_H

#include "glcompute.h"
#include "kparams.h"

#include <stddef.h>

#define GLC__OP_MAX_TENSORS 10 /* matmul with the rope epilogue: 9 inputs and its output */
#define GLC__OP_MAX_DISPATCH 4
#define GLC__OP_MAX_BIND 10
#define GLC__SCRATCH (-1)

/* X(id, name): every op of the kernel library. */
#define GLC__OP_LIST(X)              \
    X(ADD, "add")                    \
    X(SUB, "sub")                    \
    X(MUL, "mul")                    \
    X(DIV, "div")                    \
    X(SCALE, "scale")                \
    X(UNARY, "unary")                \
    X(SOFTMAX, "softmax")            \
    X(RMS_NORM, "rms_norm")          \
    X(LAYER_NORM, "layer_norm")      \
    X(SUM, "sum")                    \
    X(MEAN, "mean")                  \
    X(ARGMAX, "argmax")              \
    X(ROPE, "rope")                  \
    X(MATMUL, "matmul")              \
    X(MATMUL_AFFINE, "matmul_affine")\
    X(MATMUL_Q, "matmul_q")          \
    X(MATMUL_EXPERT, "matmul_expert")\
    X(SDPA, "sdpa")                  \
    X(SDPA_DECODE, "sdpa_decode")    \
    X(GET_ROWS, "get_rows")          \
    X(SET_ROWS, "set_rows")          \
    X(COPY, "copy")                  \
    X(CONCAT, "concat")              \
    X(SLICE, "slice")                \
    X(ADD_RMS_NORM, "add_rms_norm") /* internal: made by the fusion passes */ \
    X(ROPE_ROWS, "rope_rows")       /* internal: made by the fusion passes */ \
    X(ROPE_QKV, "rope_qkv")         /* internal: made by the fusion passes */

typedef enum glc__op {
#define GLC__OP_ENUM(id, name) GLC__OP_##id,
    GLC__OP_LIST(GLC__OP_ENUM)
#undef GLC__OP_ENUM
    GLC__OP_COUNT
} glc__op;

/* How a kernel reads a tensor's storage (defines TA, TO, WF, ... hold
 * these; kernels compare them as GLC_T_*, generated into enums.glsl).
 * Float tensors are uint words whatever their dtype (storage.glsl). */
typedef enum glc__kdtype {
    GLC__T_F32 = 0,
    GLC__T_F16,
    GLC__T_BF16,
    GLC__T_AFFINE, /* MLX affine groups (matmul_affine's w) */
    GLC__T_Q8_0,   /* GGML blocks (glsl/quant.glsl), the last values */
    GLC__T_Q4_0,
    GLC__T_Q4_K,
    GLC__T_Q5_K,
    GLC__T_Q6_K,
    GLC__T_Q4_1,
    GLC__T_Q5_0,
    GLC__T_Q5_1
} glc__kdtype;

/* reduce.comp's OP (kernels: GLC_R_*); sum, mean and argmax last. */
typedef enum glc__kreduce {
    GLC__R_SOFTMAX = 0,
    GLC__R_RMS_NORM,
    GLC__R_LAYER_NORM,
    GLC__R_SUM,
    GLC__R_MEAN,
    GLC__R_ARGMAX
} glc__kreduce;

/* unary.comp's op past glc_unary_op: x * a + b (the scale op). */
#define GLC__UNARY_AFFINE (GLC_UNARY_SOFTCAP + 1)

/* The shape of a tensor; no storage. */
typedef struct glc__tensor {
    int present;        /* 0 for an absent optional input */
    glc_dtype dtype;
    int rank;
    int64_t shape[GLC_MAX_DIMS];
} glc__tensor;

/* The scalars of an op as its family reads them: one struct per family,
 * laid over the f[GLC__OP_NF] and i[GLC__OP_NI] that graphs store (the
 * asserts in ops.c keep both views in step). Floats first, f_ pads to
 * i[]. What each means: the family file's header. Code reads and writes
 * them by family (a->mm.act); f[] and i[] are for copying all slots. */
#define GLC__OP_NF 4
#define GLC__OP_NI 16
typedef struct glc__binary_args { /* add, sub, mul, div */
    float act_param, f_[3];
    int64_t act; /* fused: an activation of a, 0 none */
} glc__binary_args;
typedef struct glc__unary_args {
    float param, f_[3];
    int64_t op; /* glc_unary_op */
} glc__unary_args;
typedef struct glc__scale_args {
    float mul, add;
} glc__scale_args;
typedef struct glc__softmax_args {
    float scale, f_[3];
    int64_t causal, pos_offset;
} glc__softmax_args;
typedef struct glc__norm_args { /* rms_norm, layer_norm, add_rms_norm */
    float eps, f_[3];
    int64_t at; /* add_rms_norm: where the norm goes in out (elements) */
} glc__norm_args;
typedef struct glc__rope_args {
    float base, f_[3];
    int64_t mode, dim;
} glc__rope_args;
typedef struct glc__matmul_args { /* matmul; matmul_q from act on */
    float act_param, norm_eps; /* norm_eps: a fused rms_norm prologue's (fuse.c) */
    float rope_base, f_[1];    /* rope_*: the fused rope epilogue's (fuse.c qkv_rope) */
    int64_t transpose_b, act;
    int64_t seg[4]; /* fused Q/K/V: column bounds s1, s12; where segments 1, 2 start */
    int64_t glu;      /* fused SwiGLU input: its activation */
    int64_t glu_gate; /* where its gate half starts in a (elements) */
    int64_t glu_up;   /* where its up half starts in a (elements) */
    int64_t glu_out;  /* fused SwiGLU epilogue: its activation; the weight rows are gate | up
                       * halves and out[.., n] = act(gate row n's sum) * (up row n's) */
    int64_t glu_up_first; /* 1: the halves are up | gate */
    int64_t rope_mode, rope_dim; /* the rope epilogue (inputs 5-8: pos, freq_factors, caches) */
    int64_t rope_qw, rope_kw;    /* its columns of q, then of k (the rest: v's) */
    int64_t rope_hd;             /* its head dim */
} glc__matmul_args;
typedef struct glc__affine_args {
    float f_[4];
    int64_t bits, group;
} glc__affine_args;
typedef struct glc__sdpa_args { /* sdpa, sdpa_decode; rope_*: sdpa_decode's fused rope_qkv */
    float scale, rope_base, f_[2];
    int64_t causal, q_offset, kv_len, scratch, rope_mode, rope_dim;
} glc__sdpa_args;
typedef struct glc__copy_args {
    float f_[4];
    int64_t permuted, perm[GLC_MAX_DIMS];
} glc__copy_args;
typedef struct glc__axis_args { /* concat (axis), slice */
    float f_[4];
    int64_t axis, start, len;
} glc__axis_args;

/* The members of the scalar args union: all slots, and each family's view. */
#define GLC__OP_SCALAR_MEMBERS     \
    struct {                       \
        float f[GLC__OP_NF];       \
        int64_t i[GLC__OP_NI];     \
    }; /* as graphs store them */  \
    glc__binary_args bin;          \
    glc__unary_args unary;         \
    glc__scale_args scale;         \
    glc__softmax_args softmax;     \
    glc__norm_args norm;           \
    glc__rope_args rope;           \
    glc__matmul_args mm;           \
    glc__affine_args affine;       \
    glc__sdpa_args sdpa;           \
    glc__copy_args copy;           \
    glc__axis_args axis;

/* The i[] slot that family member m (e.g. sdpa.kv_len) lies over. */
#define GLC__I_SLOT(m) \
    ((int)((offsetof(glc__op_args, m) - offsetof(glc__op_args, i)) / sizeof(int64_t)))

/* An op's scalar arguments alone (a graph node's, as given: graph.h). */
typedef union glc__op_scalars {
    GLC__OP_SCALAR_MEMBERS
} glc__op_scalars;

/* One op instance: its tensors and scalar arguments. */
typedef struct glc__op_args {
    glc__op op;
    int nin, nout;
    glc__tensor t[GLC__OP_MAX_TENSORS]; /* inputs, then outputs */
    union {
        GLC__OP_SCALAR_MEMBERS
    };
} glc__op_args;

typedef struct glc__bind_plan {
    int tensor;          /* index into t[], or GLC__SCRATCH */
    glc_access access;
    size_t offset, size; /* bytes from the tensor's start; size 0: to its end */
    glc_binding_kind kind; /* STORAGE, or TEXEL / TEXEL_UINT (read through a buffer texture) */
} glc__bind_plan;

typedef struct glc__dispatch_plan {
    const char *kernel;  /* glsl/<kernel>.comp */
    char defines[512];
    uint32_t local_size;
    uint64_t groups;
    int nbind;
    glc__bind_plan bind[GLC__OP_MAX_BIND];
    uint32_t params[GLC_MAX_PARAMS];
    int nparams;
} glc__dispatch_plan;

typedef struct glc__op_plan {
    int ndisp;
    glc__dispatch_plan disp[GLC__OP_MAX_DISPATCH];
    size_t scratch_bytes;
} glc__op_plan;

/* Shape overrides of the mat-vec variants, for the benchmark that sweeps
 * them (bench/bench_ops.c through glc__device_tune); 0 keeps the planner's
 * value. Nothing in the library sets them. rn: weight rows a subgroup
 * owns; unroll: matvec's 16-byte loads a lane has in flight per row;
 * slots: subgroups a group (matvec with ks: slots / ks row slots); ks:
 * matvec's subgroups that share a row slot's K (1: none); lanes: matvec's
 * group size with its lanes across K (LK; 1: that mode off); ash: the most
 * bytes of a matmul_q's decode stages in shared memory (1: none). */
typedef struct glc__tune {
    uint32_t rn, unroll, slots, ks, lanes, ash;
} glc__tune;

/* What a plan may depend on: the device's limits and features. */
typedef struct glc__target {
    glc_device_limits limits;
    glc_device_features features;
    int is_llvmpipe;     /* some variants are chosen by measurement per driver */
    int matmul;          /* GLC__MATMUL_* (env.h): a dense matmul variant forced by GLC_MATMUL */
    uint64_t texel_min;  /* the least bytes a dispatch streams for its texel form (glc__texel_worth) */
    uint64_t rows_min;   /* the least multiply-adds for llvmpipe's 32-row direct matmul (op_matmul.c) */
    glc__tune tune;
} glc__target;

typedef struct glc__op_desc {
    const char *name;
    /* Checks the inputs and writes the outputs' dtype and shape into
     * a->t[nin..]. (dtype of an output may be preset by the caller where
     * the op allows a choice; the rule then checks it.) On error writes a
     * message naming the op and the shapes to err. */
    glc_status (*infer)(glc__op_args *a, char *err, size_t errlen);
    /* Fills the plan for a checked op. */
    glc_status (*plan)(const glc__op_args *a, const glc__target *tg, glc__op_plan *p, char *err,
                       size_t errlen);
} glc__op_desc;

extern const glc__op_desc *const glc__ops[GLC__OP_COUNT];

/* Each family file defines the descs of its ops: glc__op_<id>_desc. */
#define GLC__OP_EXTERN(id, name) extern const glc__op_desc glc__op_##id##_desc;
GLC__OP_LIST(GLC__OP_EXTERN)
#undef GLC__OP_EXTERN

/* ---- helpers for rules and plans ---- */

int64_t glc__numel(const glc__tensor *t);
size_t glc__tensor_bytes(const glc__tensor *t);
int glc__is_float(glc_dtype d);            /* F32, F16 or BF16 */
/* Elements per block of dtype d: 1 for an element type, 32 or 256 for a
 * GGML block type (status.c's table), 0 for a value that is no dtype. */
int64_t glc__dtype_block(glc_dtype d);
int glc__is_block(glc_dtype d);            /* a GGML block type (Q8_0, Q4_K, ...) */
int glc__same_shape(const glc__tensor *a, const glc__tensor *b);
/* "[2, 3, 5] f16" into buf. */
const char *glc__shape_str(const glc__tensor *t, char *buf, size_t len);
/* An error message "op: ..." into err; returns GLC_ERR_INVALID_ARG. */
glc_status glc__op_error(char *err, size_t errlen, const char *op, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The kernel storage type of dtype d (F32 for a dtype kernels read as
 * f32 words or do not read as floats). */
glc__kdtype glc__kdtype_of(glc_dtype d);
/* Appends "#define NAME VALUE\n" to a plan's defines. */
void glc__define(glc__dispatch_plan *d, const char *name, const char *value);
void glc__define_int(glc__dispatch_plan *d, const char *name, long long value);
/* "#define NAME <the kernel storage type of dtype>\n". */
void glc__define_t(glc__dispatch_plan *d, const char *name, glc_dtype dtype);
/* A dispatch of `kernel` with local size `local` covering `items` work
 * items (groups = ceil(items / local)); returns it for bindings/params. */
glc__dispatch_plan *glc__plan_dispatch(glc__op_plan *p, const char *kernel, uint32_t local,
                                       uint64_t items);
/* The plan of a's op, then glc__op_plan_check of it. Eager ops and the
 * compiler plan through this. */
glc_status glc__op_make_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                             char *err, size_t errlen);
/* What every op's plan must be, checked once for all ops: each dispatch a
 * local size in [1, max_invocations] and at least one group
 * (GLC_ERR_UNSUPPORTED otherwise), and defines that fit their buffer
 * (GLC_ERR_INVALID_ARG, "internal": glc__define would have cut one
 * short). op names the op in err. */
glc_status glc__op_plan_check(const glc__op_plan *p, const char *op, const glc__target *tg,
                              char *err, size_t errlen);
/* The rope epilogue of the decode's Q/K/V product (fuse.c qkv_rope; matmul
 * and matmul_q, inputs 5-8: positions, freq_factors, k and v caches):
 * its rule over the product of m rows of a and n columns, and its
 * defines, bindings and params (slots: q's columns, q's and k's, head dim,
 * rope_dim, theta step, the caches' rows; glsl/qkv_rope.glsl). */
glc_status glc__mm_rope_infer(const glc__op_args *a, int64_t m, int64_t n, char *err, size_t len);
void glc__plan_rope(glc__dispatch_plan *d, const glc__op_args *a, const int slot[7]);
/* 1 when a matmul's or matmul_q's args carry the rope epilogue */
static inline int glc__mm_has_rope(const glc__op_args *a)
{
    return (a->op == GLC__OP_MATMUL || a->op == GLC__OP_MATMUL_Q) && a->nin > 5;
}
/* Loop iterations a planner may give one shader invocation, all its loops
 * together (nested loops count each inner iteration; loops the compiler
 * unrolls do not count): the device's max_loop_iterations less 1/8, for
 * the planners' counts are estimates. 0: no cap. Planners that can exceed
 * it split the work (more invocations, a K split with a summing pass, a
 * row split with a merge pass) or refuse with a message, never run a
 * kernel the driver would cut short. */
uint64_t glc__loop_budget(const glc__target *tg);
/* The summing pass of a matmul whose K was split for the loop cap
 * (glsl/ksum.comp, op_matmul.c): out (tensor `out`) = the sum of `parts`
 * slices of `total` floats in the scratch, + tensor `bias` (-1: none), with
 * a's activation and Q/K/V segments (matmul, matmul_q); sets the plan's
 * scratch bytes. Refuses partials one binding cannot hold. */
glc_status glc__plan_ksum(glc__op_plan *p, const glc__op_args *a, uint64_t total, int64_t n,
                          uint32_t parts, int bias, int out, const glc__target *tg, char *err,
                          size_t len);
void glc__plan_bind(glc__dispatch_plan *d, int tensor, glc_access access);
/* A read of the tensor as RGBA32F texels through the next texture unit
 * (GLC_BIND_TEXEL): the planner has checked the target has buffer textures
 * (glc__texel_ok) and the bytes are whole texels. _as: of the given texel
 * kind (GLC_BIND_TEXEL_UINT: RGBA32UI, raw words). */
void glc__plan_bind_texel(glc__dispatch_plan *d, int tensor);
void glc__plan_bind_texel_as(glc__dispatch_plan *d, int tensor, glc_binding_kind kind);
/* Whether a binding kind is a buffer texture's (TEXEL or TEXEL_UINT) */
static inline int glc__is_texel(glc_binding_kind kind)
{
    return kind == GLC_BIND_TEXEL || kind == GLC_BIND_TEXEL_UINT;
}
/* Whether `bytes` may be read through a buffer texture on tg: whole
 * 16-byte texels (RGBA32F or RGBA32UI) within the device's limit */
int glc__texel_ok(const glc__target *tg, uint64_t bytes);
/* Whether a dispatch streaming `bytes` takes its texel form: only where
 * there are bytes to stream (GLC__TEXEL_MIN_BYTES; tests lower it): a
 * small dispatch gains nothing, and each texel variant is one more
 * program to compile (a cold `make check` 93 s with the bound, 100 s with
 * every eligible read as texels, all tests passing either way) */
int glc__texel_worth(const glc__target *tg, uint64_t bytes);
#define GLC__TEXEL_MIN_BYTES (256u << 10)
/* llvmpipe's direct matmul computes 32 rows of a an invocation (+15% speed
 * over 16 at 512^3) only for products of this many multiply-adds or more,
 * and 16 rows (2x over 4) from a 16th of it: its JIT takes 1.2 s for 32
 * rows, 0.24 s for 16, 0.04 s for 4 (bench/RESULTS.md); tests lower it. */
#define GLC__ROWS_MIN_MACS (1ull << 24)
/* The fused Q/K/V projection of a dense or GGML matmul (a->mm.seg, see
 * op_matmul.c), when a->mm.seg[0] is set: the SEG define and the params S1,
 * S12, SEG1, SEG2 from slot s1 on (GLC__KP_SEGS). */
void glc__plan_segments(glc__dispatch_plan *d, const glc__op_args *a, int s1);
/* For a fused SwiGLU epilogue (a->mm.glu_out): the GLU_OUT define (and
 * GLU_UP_FIRST) of the kernel that applies it (common.glsl). */
void glc__define_glu_out(glc__dispatch_plan *d, const glc__op_args *a);
/* Param `slot` (GLC__KP_<KERNEL>_<NAME>, kparams.h) of d = v; d then
 * uploads params 0 .. the highest slot set (unset ones 0). */
void glc__plan_param_at(glc__dispatch_plan *d, int slot, uint32_t v);
void glc__plan_paramf_at(glc__dispatch_plan *d, int slot, float v);

/* ---- op arguments ----
 * An op's scalar arguments travel in glc__op_args f[] and i[], laid out as
 * its family file's header says. The typed arguments (the public desc
 * structs and scalars) are packed there by one function per family, which
 * the eager entry point (op_*.c) and the graph builder (graph_ops.c) both
 * call, so a layout is written once (the family's struct above). Each
 * packs into args already set up by glc__op_args_init. */
void glc__pack_scale(glc__op_args *a, float mul, float add);      /* op_elementwise.c */
void glc__pack_unary(glc__op_args *a, glc_unary_op op, float param);
void glc__pack_softmax(glc__op_args *a, const glc_softmax_desc *desc); /* op_reduce.c */
void glc__pack_norm(glc__op_args *a, float eps);                 /* rms_norm, layer_norm */
void glc__pack_rope(glc__op_args *a, const glc_rope_desc *desc); /* op_rope.c */
void glc__pack_matmul(glc__op_args *a, const glc_matmul_desc *desc); /* op_matmul.c */
void glc__pack_affine(glc__op_args *a, int bits, int group_size); /* op_quant.c */
/* sdpa, sdpa_decode (scratch: its dtype, 0 for the compiler's f32) */
void glc__pack_sdpa(glc__op_args *a, const glc_sdpa_desc *desc, glc_dtype scratch);
/* op_data.c: copy (perm NULL or rank entries), concat, slice */
void glc__pack_copy(glc__op_args *a, const int *perm, int rank);
void glc__pack_concat(glc__op_args *a, int axis);
void glc__pack_slice(glc__op_args *a, int axis, int64_t start, int64_t len);

/* Shorthand for entry points and builders: sets up args for `op` with nin inputs
 * and nout outputs. */
static inline void glc__op_args_init(glc__op_args *a, glc__op op, int nin, int nout)
{
    int i;
    a->op = op;
    a->nin = nin;
    a->nout = nout;
    for (i = 0; i < GLC__OP_NF; i++)
        a->f[i] = 0;
    for (i = 0; i < GLC__OP_NI; i++)
        a->i[i] = 0;
}

#endif
