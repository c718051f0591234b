/*
 * The op case table's runner: a case (oc_case, one table line: op,
 * operand dtypes and shapes, arguments, NMSE limit) is made concrete with
 * seeded inputs and its plain C reference (tests/ref, double
 * accumulation), then run eagerly through glc_op_* in a session
 * (oc_run_eager: outputs between sentinel bytes) or through a plan compiled
 * from the glc_* graph builders (oc_run_graph: outputs followed by sentinel
 * words). NaN and infinities must come out where the reference has them;
 * the rest is within the case's NMSE (0: exact).
 *
 * tests/ref/opcases.c holds the table (test_ops runs it every way,
 * test_glsl_strict plans it for other targets); per-op tests run cases of
 * their own on devices they set up (narrowed limits, forced variants).
 * Public API only.
 */
#ifndef GLC_OPTABLE_H
#define GLC_OPTABLE_H

#include "glcompute.h"
#include "optest.h"

#include <stddef.h>
#include <stdint.h>

enum {
    OC_ADD, OC_SUB, OC_MUL, OC_DIV, OC_SCALE, OC_UNARY, OC_SOFTMAX, OC_RMS_NORM, OC_LAYER_NORM,
    OC_SUM, OC_MEAN, OC_ARGMAX, OC_ROPE, OC_MATMUL, OC_MATMUL_AFFINE, OC_MATMUL_Q,
    OC_MATMUL_EXPERT, OC_SDPA, OC_SDPA_DECODE, OC_GET_ROWS, OC_SET_ROWS, OC_COPY, OC_CONCAT,
    OC_SLICE, OC_RESHAPE, OC_COUNT
};

/* dtype short names for case lines */
#define F32 GLC_DTYPE_F32
#define F16 GLC_DTYPE_F16
#define BF16 GLC_DTYPE_BF16
#define I32 GLC_DTYPE_I32
#define Q8 GLC_DTYPE_Q8_0
#define Q4 GLC_DTYPE_Q4_0
#define Q4K GLC_DTYPE_Q4_K
#define Q5K GLC_DTYPE_Q5_K
#define Q6K GLC_DTYPE_Q6_K
#define Q41 GLC_DTYPE_Q4_1
#define Q50 GLC_DTYPE_Q5_0
#define Q51 GLC_DTYPE_Q5_1

/* case flags */
#define C_NANINF 1u    /* NaN, +Inf, -Inf among the first input's values */
#define C_BIG 2u       /* a large case (test_ops: eager on the default device, plan on min) */
#define C_INPLACE 4u   /* eager: the output is input 0 (same dtype); plans copy */
#define C_TIES 8u      /* input 0 holds small integers: maxima repeat (argmax) */
#define C_RAWQ 16u     /* GGML weights / tables: random blocks, not quantized values */

#define MAXIN 5

/* One table line. s[i]: operand i as {rank, dims...} (rank 0: absent, or
 * op-defined sizes); dt[i]: its storage dtype; odt: the eager output's. */
typedef struct oc_case {
    int op;
    glc_dtype dt[MAXIN];
    glc_dtype odt;
    int64_t s[MAXIN][5];
    float f[3];
    int64_t i[6];
    double nmse;
    unsigned flags;
} oc_case;

/* A case made concrete: operand values and the expected output. */
typedef struct oc_operand {
    glc_dtype dt;
    int rank;
    int64_t shape[4];
    float *f;      /* values (dtype-rounded; integers for I32) */
    void *raw;     /* quantized / packed bytes in dt (then f: NULL) */
    int param;     /* a param of the graph, not an input */
} oc_operand;

typedef struct oc_data {
    oc_operand in[MAXIN];
    float *aux;    /* dequantized weights for the reference */
    int orank;
    int64_t oshape[4];
    float *ref;    /* unrounded expected output */
} oc_data;

typedef struct oc_opinfo {
    const char *builder; /* the graph builder it runs (without "glc_") */
    int inplace;         /* output: operand 2, a graph handle (set_rows) */
    void (*gen)(const oc_case *c, oc_data *d, uint64_t *seed);
    void (*ref)(const oc_case *c, oc_data *d);
    glc_status (*eager)(glc_session *s, glc_device *dev, const oc_case *c, const glc_view *in,
                        glc_view out);
    glc_tensor (*graph)(glc_graph *g, const oc_case *c, const glc_tensor *in);
} oc_opinfo;

/* Operand shapes in a table line: {rank, dims...}. */
#define S1(a) {1, a}
#define S2(a, b) {2, a, b}
#define S3(a, b, c) {3, a, b, c}
#define S4(a, b, c, d) {4, a, b, c, d}
/* NMSE limits besides optest.h's */
#define OC_T16 1e-6  /* an f16 output: one rounding */
#define OC_TB16 3e-5 /* a bf16 output */
#define OC_EXACT 0.0

/* Every op, by OC_* value. */
extern const oc_opinfo oc_ops[OC_COUNT];
/* Cases each op passed through a compiled plan (oc_run_graph). */
extern int oc_ran[OC_COUNT];

/* Runs case c (inputs from `seed`); `label` names it in failures. An op
 * without an eager entry point (reshape) is skipped by oc_run_eager. */
void oc_run_eager(glc_device *dev, const oc_case *c, uint64_t seed, const char *label);
void oc_run_graph(glc_device *dev, const oc_case *c, uint64_t seed, const char *label);
/* Builds case c's graph and compiles its plan on dev, nothing run or
 * checked (GLC_OK, or the compile's status with dev's message). */
glc_status oc_compile_graph(glc_device *dev, const oc_case *c, uint64_t seed);

/* The case table (opcases.c): the hand-written cases, and the generated
 * ones written to out (room for OC_NGEN), their count returned. */
#define OC_NGEN 1024
const oc_case *oc_cases(size_t *n);
size_t oc_generate(oc_case *out);

#endif
