/*
 * The op case table (what tests/test_ops.c runs every way, and
 * tests/test_glsl_strict plans for a GPU-like target): hand-written cases
 * (oc_cases) and seeded generated ones (oc_generate) over the space the
 * table samples. Each case is one op, its operand dtypes and shapes, its
 * arguments, an NMSE limit and flags (optable.h).
 */
#include "optable.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>


/* ---- the table ---- */

#define T16 OC_T16
#define TB16 OC_TB16
#define MM OT_NMSE_MATMUL
#define EXACT OC_EXACT

static const oc_case cases[] = {
    /* elementwise: broadcasting, 1 / odd / prime dims, dtype mixes */
    {OC_ADD, {F32, F32}, F32, {S2(7, 13), S1(13)}, {0}, {0}, OT_NMSE_DEFAULT, 0},
    {OC_ADD, {F16, BF16}, F16, {S3(3, 1, 5), S2(4, 1)}, {0}, {0}, T16, 0},
    {OC_ADD, {F32, F32}, F32, {S2(5, 31), S2(5, 31)}, {0}, {0}, OT_NMSE_DEFAULT, C_NANINF},
    {OC_SUB, {F32, F16}, F32, {S4(2, 3, 5, 7), S3(3, 1, 7)}, {0}, {0}, OT_NMSE_DEFAULT, 0},
    {OC_SUB, {BF16, F32}, BF16, {S1(97), S1(1)}, {0}, {0}, TB16, 0},
    {OC_MUL, {F32, F32}, F32, {S2(13, 127), S2(1, 127)}, {0}, {0}, OT_NMSE_DEFAULT, C_NANINF},
    {OC_MUL, {F16, F16}, F16, {S1(1), S2(3, 7)}, {0}, {0}, T16, 0},
    {OC_DIV, {F32, F32}, F32, {S3(2, 31, 3), S1(3)}, {0}, {0}, OT_NMSE_DEFAULT, 0},
    {OC_DIV, {BF16, F16}, F32, {S2(17, 5), S2(17, 1)}, {0}, {0}, OT_NMSE_DEFAULT, 0},
    {OC_SCALE, {F32}, F32, {S1(257)}, {1.5f, -0.25f}, {0}, OT_NMSE_DEFAULT, C_NANINF},
    {OC_SCALE, {BF16}, F16, {S2(3, 7)}, {-2.0f, 0.5f}, {0}, T16, 0},
    {OC_UNARY, {F32}, F32, {S1(4099)}, {0}, {GLC_UNARY_GELU}, OT_NMSE_DEFAULT, 0},
    {OC_UNARY, {F16}, F16, {S1(7)}, {0}, {GLC_UNARY_GELU_ERF}, T16, 0},
    {OC_UNARY, {BF16}, F32, {S2(3, 29)}, {0}, {GLC_UNARY_SILU}, OT_NMSE_DEFAULT, 0},
    {OC_UNARY, {F32}, BF16, {S1(1)}, {0}, {GLC_UNARY_RELU}, TB16, 0},
    {OC_UNARY, {F32}, F32, {S1(257)}, {0}, {GLC_UNARY_EXP}, OT_NMSE_DEFAULT, C_NANINF},
    {OC_UNARY, {F16}, F32, {S1(2)}, {0}, {GLC_UNARY_TANH}, OT_NMSE_DEFAULT, 0},
    {OC_UNARY, {BF16}, BF16, {S2(3, 33)}, {0}, {GLC_UNARY_GELU}, TB16, C_INPLACE},
    {OC_UNARY, {F32}, F16, {S2(5, 11)}, {3.0f}, {GLC_UNARY_SOFTCAP}, T16, 0},
    /* past 65535 groups (the limit of llvmpipe and of LIMITS_MIN) */
    {OC_UNARY, {F32}, F32, {S1(65535 * 256 + 2049)}, {0}, {GLC_UNARY_RELU}, OT_NMSE_DEFAULT,
     C_BIG},
    {OC_ADD, {F32, F32}, F32, {S2(65535 * 2 + 7, 128), S1(128)}, {0}, {0}, OT_NMSE_DEFAULT, C_BIG},

    /* row ops */
    {OC_SOFTMAX, {F32}, F32, {S2(5, 37)}, {0}, {0}, OT_NMSE_SOFTMAX, 0},
    {OC_SOFTMAX, {F16}, F16, {S3(2, 3, 1001)}, {0.5f}, {0}, T16, 0},
    {OC_SOFTMAX, {F32}, F32, {S3(2, 7, 11)}, {0.125f}, {1, 3}, OT_NMSE_SOFTMAX, 0},
    {OC_SOFTMAX, {F32}, F32, {S2(4, 9)}, {0}, {1, 0}, OT_NMSE_SOFTMAX, 0},
    {OC_SOFTMAX, {F16}, F16, {S2(3, 130)}, {2.0f}, {0}, T16, C_INPLACE},
    {OC_RMS_NORM, {F32, F32}, F32, {S2(3, 4097), S1(4097)}, {1e-6f}, {0}, OT_NMSE_DEFAULT, 0},
    {OC_RMS_NORM, {BF16}, F16, {S3(2, 5, 33)}, {1e-5f}, {0}, T16, 0},
    {OC_RMS_NORM, {F32, F16}, F32, {S2(9, 64), S1(64)}, {0}, {0}, OT_NMSE_DEFAULT, C_INPLACE},
    {OC_LAYER_NORM, {F32, F32, F32}, F32, {S2(7, 129), S1(129), S1(129)}, {1e-5f}, {0},
     OT_NMSE_DEFAULT, 0},
    {OC_LAYER_NORM, {F16, F16}, F32, {S2(3, 31), S1(31)}, {1e-3f}, {0}, 1e-6, 0},
    {OC_LAYER_NORM, {F32, F32, F32}, BF16, {S1(1000), {0}, S1(1000)}, {1e-5f}, {0}, TB16, 0},
    {OC_SUM, {F32}, F32, {S2(13, 1023)}, {0}, {0}, OT_NMSE_DEFAULT, 0},
    {OC_SUM, {F16}, F32, {S1(7)}, {0}, {0}, OT_NMSE_DEFAULT, 0},
    {OC_MEAN, {F32}, F32, {S3(2, 3, 5)}, {0}, {0}, OT_NMSE_DEFAULT, 0},
    {OC_MEAN, {BF16}, F16, {S2(5, 4099)}, {0}, {0}, T16, 0},
    {OC_ARGMAX, {F32}, I32, {S2(7, 1001)}, {0}, {0}, EXACT, 0},
    {OC_ARGMAX, {F16}, I32, {S1(3)}, {0}, {0}, EXACT, 0},

    /* rope: normal / neox, part of the head, frequency factors, batch */
    {OC_ROPE, {F32, I32}, F32, {S3(5, 3, 16), S1(5)}, {0}, {GLC_ROPE_NORMAL, 0}, OT_NMSE_ROPE, 0},
    {OC_ROPE, {F16, I32, F32}, F16, {S3(3, 2, 24), S1(3), S1(8)}, {500000.0f}, {GLC_ROPE_NEOX, 16},
     OT_NMSE_ROPE, 0},
    {OC_ROPE, {BF16, I32}, F32, {S4(2, 7, 1, 6), S1(7)}, {0}, {GLC_ROPE_NORMAL, 4}, OT_NMSE_ROPE,
     0},
    /* past 65535 groups of 128: rows of one rotating pair, in place */
    {OC_ROPE, {F32, I32}, F32, {S3(65536 * 2 + 3, 64, 2), S1(65536 * 2 + 3)}, {0},
     {GLC_ROPE_NORMAL, 0, 64}, OT_NMSE_ROPE, C_BIG | C_INPLACE},

    /* matmul: b transposed or not, bias, batches broadcast, M = 1 */
    {OC_MATMUL, {F32, F32}, F32, {S2(5, 7), S2(7, 3)}, {0}, {0}, MM, 0},
    {OC_MATMUL, {F32, F16, F32}, F32, {S2(13, 37), S2(11, 37), S1(11)}, {0}, {1}, MM, 0},
    {OC_MATMUL, {F32, BF16}, F32, {S2(1, 129), S2(31, 129)}, {0}, {1}, MM, 0},
    {OC_MATMUL, {F32, F32}, F32, {S4(2, 3, 4, 9), S3(3, 9, 5)}, {0}, {0}, MM, 0},
    {OC_MATMUL, {F32, F16}, F32, {S3(3, 17, 33), S2(19, 33)}, {0}, {1}, MM, 0},
    /* matmul_affine: s[1] = {N}; dt[1] the scales' dtype */
    {OC_MATMUL_AFFINE, {F32, F32}, F32, {S2(3, 64), S1(5)}, {0}, {4, 32}, MM, 0},
    {OC_MATMUL_AFFINE, {F32, F16}, F32, {S2(1, 256), S1(7), S1(7)}, {0}, {8, 128},
     MM, 0},
    {OC_MATMUL_AFFINE, {F32, F16}, F32, {S2(9, 128), S1(3)}, {0}, {8, 64}, MM, 0},
    /* matmul_q */
    {OC_MATMUL_Q, {F32, Q8}, F32, {S2(3, 64), S2(5, 64)}, {0}, {0}, MM, 0},
    {OC_MATMUL_Q, {F32, Q4, F32}, F32, {S2(1, 96), S2(7, 96), S1(7)}, {0}, {0}, MM, 0},
    {OC_MATMUL_Q, {F32, Q8}, F32, {S2(17, 32), S2(3, 32)}, {0}, {0}, MM, 0},
    {OC_MATMUL_Q, {F32, Q4K}, F32, {S2(3, 256), S2(5, 256)}, {0}, {0}, MM, 0},
    {OC_MATMUL_Q, {F32, Q6K, F32}, F32, {S2(1, 512), S2(7, 512), S1(7)}, {0}, {0}, MM, C_RAWQ},
    {OC_MATMUL_Q, {F32, Q5K}, F32, {S2(17, 256), S2(3, 256)}, {0}, {0}, MM, 0},
    {OC_MATMUL_Q, {F32, Q41, F32}, F32, {S2(2, 64), S2(11, 64), S1(11)}, {0}, {0}, MM, C_RAWQ},
    {OC_MATMUL_Q, {F32, Q50}, F32, {S2(1, 96), S2(13, 96)}, {0}, {0}, MM, 0},
    {OC_MATMUL_Q, {F32, Q51}, F32, {S2(5, 32), S2(3, 32)}, {0}, {0}, MM, C_RAWQ},
    /* matmul_expert: a [M, K] or per pair [M, k, K] */
    {OC_MATMUL_EXPERT, {F32, F32, I32}, F32, {S2(5, 37), S3(3, 13, 37), S2(5, 2)}, {0}, {0}, MM, 0},
    {OC_MATMUL_EXPERT, {F32, F16, I32}, F32, {S3(3, 2, 40), S3(4, 5, 40), S2(3, 2)}, {0}, {0}, MM,
     0},
    {OC_MATMUL_EXPERT, {F32, Q8, I32}, F32, {S2(1, 64), S3(4, 7, 64), S2(1, 2)}, {0}, {0}, MM, 0},
    {OC_MATMUL_EXPERT, {F32, Q4, I32}, F32, {S2(6, 96), S3(2, 3, 96), S2(6, 1)}, {0}, {0}, MM, 0},
    {OC_MATMUL_EXPERT, {F32, Q4K, I32}, F32, {S2(1, 256), S3(4, 7, 256), S2(1, 2)}, {0}, {0}, MM,
     0},
    {OC_MATMUL_EXPERT, {F32, Q6K, I32}, F32, {S3(3, 2, 256), S3(2, 3, 256), S2(3, 2)}, {0}, {0}, MM,
     C_RAWQ},

    /* attention: grouped-query, causal, offsets, kv_len, f16 caches */
    {OC_SDPA, {F32, F32, F32}, F32, {S3(5, 4, 16), S3(5, 2, 16), S3(5, 2, 16)}, {0}, {1, 0, 0},
     MM, 0},
    {OC_SDPA, {F32, F16, F16}, F32, {S3(3, 2, 8), S3(11, 1, 8), S3(11, 1, 12)}, {0.3f}, {1, -1, 9},
     MM, 0},
    {OC_SDPA, {F32, F32, F32}, F32, {S3(7, 3, 5), S3(13, 3, 5), S3(13, 3, 5)}, {0}, {0, 0, 0}, MM,
     0},
    {OC_SDPA_DECODE, {F32, F32, F32}, F32, {S3(1, 4, 16), S3(37, 2, 16), S3(37, 2, 16)}, {0},
     {0, -1, 0}, MM, 0},
    {OC_SDPA_DECODE, {F32, F16, F16}, F32, {S3(1, 2, 32), S3(300, 1, 32), S3(300, 1, 32)}, {0},
     {1, -1, 257}, MM, 0},

    /* data movement: exact */
    {OC_GET_ROWS, {F32, I32}, F32, {S2(11, 7), S1(9)}, {0}, {0}, EXACT, 0},
    {OC_GET_ROWS, {F16, I32}, F16, {S2(5, 3), S2(2, 4)}, {0}, {0}, EXACT, C_NANINF},
    {OC_GET_ROWS, {Q8, I32}, F32, {S2(7, 64), S1(5)}, {0}, {0}, EXACT, 0},
    {OC_GET_ROWS, {Q4, I32}, BF16, {S2(3, 32), S3(2, 2, 2)}, {0}, {0}, EXACT, 0},
    {OC_GET_ROWS, {Q4K, I32}, F32, {S2(7, 256), S1(5)}, {0}, {0}, EXACT, C_RAWQ},
    {OC_GET_ROWS, {Q6K, I32}, F32, {S2(3, 512), S1(4)}, {0}, {0}, EXACT, C_RAWQ},
    {OC_GET_ROWS, {Q5K, I32}, F16, {S2(2, 256), S2(2, 3)}, {0}, {0}, EXACT, 0},
    {OC_GET_ROWS, {Q41, I32}, F32, {S2(5, 64), S1(7)}, {0}, {0}, EXACT, C_RAWQ},
    {OC_GET_ROWS, {Q50, I32}, F32, {S2(4, 96), S1(3)}, {0}, {0}, EXACT, C_RAWQ},
    {OC_GET_ROWS, {Q51, I32}, BF16, {S2(3, 32), S1(4)}, {0}, {0}, EXACT, 0},
    {OC_SET_ROWS, {F32, I32, F32}, F32, {S2(3, 5), S1(3), S2(9, 5)}, {0}, {0}, EXACT, 0},
    {OC_SET_ROWS, {F32, I32, F16}, F16, {S3(4, 2, 3), S1(4), S3(11, 2, 3)}, {0}, {0}, EXACT,
     C_NANINF},
    {OC_COPY, {F32}, F32, {S3(3, 5, 7)}, {0}, {1, 2, 0, 1}, EXACT, C_NANINF},
    {OC_COPY, {F32}, F16, {S2(13, 1)}, {0}, {0}, EXACT, 0},
    {OC_COPY, {BF16}, BF16, {S4(2, 3, 5, 2)}, {0}, {1, 3, 1, 0, 2}, EXACT, 0},
    {OC_COPY, {F16}, BF16, {S1(31)}, {0}, {0}, EXACT, C_NANINF},
    {OC_CONCAT, {F32, F32}, F32, {S2(3, 5), S2(4, 5)}, {0}, {0}, EXACT, 0},
    {OC_CONCAT, {F16, F16}, F16, {S3(2, 3, 1), S3(2, 3, 4)}, {0}, {-1}, EXACT, C_NANINF},
    {OC_CONCAT, {BF16, BF16}, BF16, {S3(2, 1, 3), S3(2, 5, 3)}, {0}, {1}, EXACT, 0},
    {OC_SLICE, {F32}, F32, {S3(4, 9, 3)}, {0}, {1, 2, 5}, EXACT, C_NANINF},
    {OC_SLICE, {F16}, F16, {S2(7, 13)}, {0}, {-1, 12, 1}, EXACT, 0},
    {OC_SLICE, {BF16}, BF16, {S1(31)}, {0}, {0, 0, 31}, EXACT, 0},
    {OC_RESHAPE, {F32}, F32, {S3(2, 3, 5), S2(5, 6)}, {2.0f}, {0}, OT_NMSE_DEFAULT, 0},
    {OC_RESHAPE, {F16}, F32, {S1(12), S3(2, 2, 3)}, {-1.0f}, {0}, OT_NMSE_DEFAULT, 0},
    /* f32 of one shape, whole vec4s: llvmpipe's vec4 form (op_elementwise.c) */
    {OC_ADD, {F32, F32}, F32, {S2(64, 36), S2(64, 36)}, {0}, {0}, OT_NMSE_DEFAULT, C_NANINF},
    {OC_SUB, {F32, F32}, F32, {S1(4096), S1(4096)}, {0}, {0}, OT_NMSE_DEFAULT, 0},
    {OC_DIV, {F32, F32}, F32, {S3(2, 3, 8), S3(2, 3, 8)}, {0}, {0}, OT_NMSE_DEFAULT, C_NANINF},
    {OC_MUL, {F32, F32}, F32, {S1(8), S1(8)}, {0}, {0}, OT_NMSE_DEFAULT, C_INPLACE},
    {OC_UNARY, {F32}, F32, {S1(4100)}, {0}, {GLC_UNARY_SILU}, OT_NMSE_DEFAULT, 0},
    {OC_UNARY, {F32}, F32, {S2(16, 64)}, {0}, {GLC_UNARY_GELU}, OT_NMSE_DEFAULT, C_NANINF},
    {OC_SCALE, {F32}, F32, {S1(1028)}, {0.5f, -2.0f}, {0}, OT_NMSE_DEFAULT, C_INPLACE},
    /* f32 rows of whole vec4s: llvmpipe's vec4 get_rows (op_data.c) */
    {OC_GET_ROWS, {F32, I32}, F32, {S2(13, 36), S1(17)}, {0}, {0}, EXACT, C_NANINF},
    {OC_GET_ROWS, {F32, I32}, F32, {S2(5, 4), S2(3, 3)}, {0}, {0}, EXACT, 0},
    /* f32 rows of whole vec4s: llvmpipe's reduce_row4 (op_reduce.c) */
    {OC_SOFTMAX, {F32}, F32, {S2(5, 36)}, {0}, {0}, OT_NMSE_SOFTMAX, 0},
    {OC_SOFTMAX, {F32}, F32, {S3(2, 7, 12)}, {0.125f}, {1, 3}, OT_NMSE_SOFTMAX, 0},
    {OC_SOFTMAX, {F32}, F32, {S2(6, 8)}, {2.0f}, {1, -2}, OT_NMSE_SOFTMAX, C_INPLACE},
    {OC_RMS_NORM, {F32, F32}, F32, {S2(9, 64), S1(64)}, {1e-6f}, {0}, OT_NMSE_DEFAULT, C_NANINF},
    {OC_RMS_NORM, {F32}, F32, {S2(3, 8)}, {0}, {0}, OT_NMSE_DEFAULT, C_INPLACE},
};

/* ---- generated cases: seeded, over the space the table samples ---- */


static const glc_dtype floats[3] = {F32, F16, BF16};

/* 16-bit storage rounds inputs and outputs: compare in that light. */
static double limit_for(glc_dtype o)
{
    return o == F32 ? OT_NMSE_DEFAULT : o == F16 ? T16 : TB16;
}

static void random_shape(uint64_t *seed, int64_t *s)
{
    static const int64_t dims[] = {1, 2, 3, 5, 7, 13, 31, 64, 97, 127};
    int i, rank = 1 + (int)(ot_rand(seed) % 4);
    s[0] = rank;
    for (i = 0; i < rank; i++)
        s[1 + i] = dims[ot_rand(seed) % (rank > 2 ? 7 : 10)];
}

static oc_case *add(oc_case *out, size_t *k, int op, glc_dtype t0, glc_dtype odt, int rank,
                    const int64_t *shape)
{
    oc_case *c = &out[(*k)++];
    c->op = op;
    c->dt[0] = t0;
    c->odt = odt;
    c->s[0][0] = rank;
    memcpy(&c->s[0][1], shape, (size_t)rank * sizeof *shape);
    c->nmse = EXACT;
    return c;
}

static void random_perm(uint64_t *seed, int rank, int64_t *perm)
{
    int i;
    for (i = 0; i < rank; i++)
        perm[i] = i;
    for (i = rank - 1; i > 0; i--) {
        int j = (int)(ot_rand(seed) % (uint64_t)(i + 1));
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Row ops: random shapes (rows of 1 to 4099 elements), scales, causal
 * masks with every kind of offset (past every key, none, negative: rows
 * fully masked), weights and biases of any float dtype or none, eps,
 * argmax with ties and U32 indices, in place; then row lengths at the
 * variant boundaries (teams of 1, 4, 16, 64 lanes, the loop) and a
 * 151936-wide vocab row. */
static size_t generate_rows(oc_case *out, size_t k, uint64_t *seed)
{
    static const int64_t lens[] = {1, 2, 3, 7, 13, 31, 64, 97, 127, 256, 257, 1000, 2049, 4099};
    static const int64_t dims[] = {1, 2, 3, 5, 7, 13};
    static const int64_t bound[] = {8, 9, 33, 129, 513, 4097};
    int iter, r, op;
    size_t i;
    for (iter = 0; iter < 48; iter++) {
        oc_case *c = &out[k++];
        int64_t *x = c->s[0], n;
        op = iter < 12 ? OC_SOFTMAX : iter < 30 ? (iter % 2 ? OC_LAYER_NORM : OC_RMS_NORM)
                                                : OC_SUM + iter % 3;
        c->op = op;
        x[0] = 1 + (int64_t)(ot_rand(seed) % 4);
        for (r = 0; r < x[0] - 1; r++)
            x[1 + r] = dims[ot_rand(seed) % 6];
        n = x[x[0]] = lens[ot_rand(seed) % 14];
        c->dt[0] = floats[iter % 3];
        c->odt = op == OC_ARGMAX ? (iter & 1 ? GLC_DTYPE_U32 : I32) : floats[(iter / 3) % 3];
        c->nmse = op == OC_ARGMAX ? EXACT : c->odt == F16 ? T16 : c->odt == BF16 ? TB16
                  : op == OC_SOFTMAX ? OT_NMSE_SOFTMAX : OT_NMSE_DEFAULT;
        if (op == OC_SOFTMAX) {
            c->f[0] = iter % 4 == 0 ? 0.0f : 0.125f + (float)(iter % 5);
            c->i[0] = iter % 2;
            c->i[1] = iter % 6 == 1 ? 0 : iter % 6 == 3 ? -3 : iter % 6 == 5 ? 5 : 1000000;
            if (c->i[0] && x[0] == 1) {
                x[0] = 2;
                x[1] = 7;
                x[2] = 13;
            }
            if (iter % 5 == 2 && c->dt[0] == c->odt)
                c->flags = C_INPLACE;
        } else if (op == OC_RMS_NORM || op == OC_LAYER_NORM) {
            int j = iter - 12;
            if (j % 3) {
                c->dt[1] = floats[(j / 2) % 3];
                c->s[1][0] = 1;
                c->s[1][1] = n;
            }
            if (op == OC_LAYER_NORM && j % 4 != 1) {
                c->dt[2] = floats[(j / 4) % 3];
                c->s[2][0] = 1;
                c->s[2][1] = n;
            }
            c->f[0] = j % 3 == 1 ? 1e-3f : 0.0f; /* 0: the default */
            if (j % 7 == 3 && c->dt[0] == c->odt)
                c->flags = C_INPLACE;
        } else if (op == OC_ARGMAX && iter % 2 == 0) {
            c->flags = C_TIES;
        }
    }
    for (i = 0; i < sizeof bound / sizeof bound[0]; i++)
        for (op = OC_SOFTMAX + (int)i % 2; op <= OC_SOFTMAX + 5; op += 2) {
            oc_case *c = &out[k++];
            static const int ops6[6] = {OC_SOFTMAX, OC_RMS_NORM, OC_LAYER_NORM, OC_SUM, OC_MEAN,
                                        OC_ARGMAX};
            c->op = ops6[op - OC_SOFTMAX];
            c->s[0][0] = 2;
            c->s[0][1] = 3;
            c->s[0][2] = bound[i];
            c->dt[0] = F32;
            c->odt = c->op == OC_ARGMAX ? I32 : F32;
            c->nmse = c->op == OC_ARGMAX ? EXACT : c->op == OC_SOFTMAX ? OT_NMSE_SOFTMAX
                                                                         : OT_NMSE_DEFAULT;
            if (c->op == OC_RMS_NORM || c->op == OC_LAYER_NORM) {
                c->s[1][0] = 1;
                c->s[1][1] = bound[i];
                c->f[0] = 1e-5f;
            }
            if (c->op == OC_SOFTMAX && i % 4 == 1) {
                c->i[0] = 1;
                c->i[1] = bound[i] / 2 - 2;
            }
            if (c->op == OC_ARGMAX && i % 2)
                c->flags = C_TIES;
        }
    for (i = 0; i < 2; i++) { /* a vocab row */
        oc_case *c = &out[k++];
        c->op = i ? OC_ARGMAX : OC_SOFTMAX;
        c->s[0][0] = 2;
        c->s[0][1] = 2;
        c->s[0][2] = 151936;
        c->dt[0] = F16;
        c->odt = i ? I32 : F32;
        c->nmse = i ? EXACT : OT_NMSE_SOFTMAX;
    }
    return k;
}

static void mm_case(oc_case *c, const int64_t ab[2], int brank, const int64_t bb[2], int64_t m,
                    int64_t n, int64_t kk, int nt, glc_dtype tb, int bias)
{
    int64_t *a = c->s[0], *b = c->s[1];
    int r = 0;
    c->op = OC_MATMUL;
    a[0] = ab[0] > 1 ? 4 : ab[1] > 1 ? 3 : 2;
    if (a[0] == 4)
        a[++r] = ab[0];
    if (a[0] >= 3)
        a[++r] = ab[1];
    a[++r] = m;
    a[++r] = kk;
    b[0] = brank;
    r = 0;
    if (brank == 4)
        b[++r] = bb[0];
    if (brank >= 3)
        b[++r] = bb[1];
    b[++r] = nt ? n : kk;
    b[++r] = nt ? kk : n;
    if (bias) {
        c->s[2][0] = 1;
        c->s[2][1] = n;
    }
    c->dt[0] = F32;
    c->dt[1] = tb;
    c->odt = F32;
    c->i[0] = nt;
    c->nmse = MM;
}

/* Dense matmul on the device's own choice of kernel (test_op_matmul forces
 * each variant): ones, odd, prime, partial 64- and 128-tiles, K not a
 * multiple of 4; batch dims with b shared, per batch, broadcast in the
 * outer or inner dim. */
static size_t generate_matmul(oc_case *out, size_t k)
{
    static const int64_t sizes[][3] = {{1, 1, 1},     {1, 37, 64},    {7, 13, 5},
                                       {33, 65, 31},  {4, 96, 128},   {97, 101, 103},
                                       {130, 129, 36}, {2, 3, 300},   {64, 64, 64},
                                       {9, 250, 17},  {1, 300, 257},  {5, 8, 3}};
    static const struct {
        int64_t ab[2];
        int brank;
        int64_t bb[2];
    } b[] = {{{1, 3}, 2, {1, 1}}, {{1, 3}, 3, {1, 3}}, {{1, 4}, 3, {1, 1}},
             {{2, 3}, 4, {2, 3}}, {{2, 3}, 4, {1, 3}}, {{2, 3}, 4, {2, 1}},
             {{2, 3}, 3, {1, 3}}, {{3, 2}, 2, {1, 1}}};
    static const int64_t one[2] = {1, 1};
    int i;
    for (i = 0; i < 12; i++)
        mm_case(&out[k++], one, 2, one, sizes[i][0], sizes[i][1], sizes[i][2], i % 2,
                floats[i % 3], i % 3 == 0);
    for (i = 0; i < 8; i++)
        mm_case(&out[k++], b[i].ab, b[i].brank, b[i].bb, 3 + i * 5, 7 + i * 3, 4 + (i % 3) * 13,
                i % 2, floats[i % 3], i % 2);
    return k;
}

/* Quantized matmuls: Q8_0 / Q4_0 with odd and prime M and N, K from 32 to
 * 4128, a of rank 3; the other GGML block types with M 1, 3, 17 and 64, K
 * of 1 to 11 blocks (256 to 2816 for the K types), quantized and random
 * blocks; affine of both widths and every group size, f32 or
 * f16 scales and biases, K of one group; experts of every weight dtype
 * (decode, prefill, a per pair, 8+ pairs per expert), ids repeated and out
 * of range. Hand-written GGUF blocks, narrowed grids and the loop cap stay
 * in test_op_quant. */
static size_t generate_quant(oc_case *out, size_t k)
{
    static const int64_t qs[][3] = {{1, 1, 32},   {1, 7, 96},    {2, 13, 64}, {3, 5, 4128},
                                    {4, 67, 256}, {5, 17, 160},  {7, 31, 96}, {9, 3, 32},
                                    {13, 29, 320}, {1, 127, 1024}};
    static const int64_t as[][3] = {{1, 7, 128}, {3, 13, 384}, {2, 5, 4096},
                                    {5, 1, 256}, {9, 11, 128}, {1, 33, 640}};
    static const int groups[3] = {32, 64, 128};
    static const glc_dtype edt[4] = {F32, F16, Q8, Q4};
    static const glc_dtype more[6] = {Q4K, Q6K, Q5K, Q41, Q50, Q51};
    static const int64_t mq[][3] = {{1, 7, 1}, {3, 13, 2}, {17, 5, 11}, {64, 3, 1}, {2, 31, 3}};
    oc_case *c;
    size_t i;
    int t, b, g, j = 0;
    for (t = 0; t < 6; t++)
        for (i = 0; i < 5; i++) { /* M, N, blocks of K */
            const int64_t *q = mq[(i + (size_t)t) % 5];
            c = &out[k++];
            c->op = OC_MATMUL_Q;
            c->dt[0] = F32;
            c->dt[1] = more[t];
            c->odt = F32;
            c->nmse = MM;
            c->flags = i % 2 ? C_RAWQ : 0;
            c->s[0][0] = c->s[1][0] = 2;
            c->s[0][1] = q[0];
            c->s[1][1] = q[1];
            c->s[0][2] = c->s[1][2] = q[2] * (t < 3 ? 256 : 32);
            if ((i + (size_t)t) % 2) {
                c->s[2][0] = 1;
                c->s[2][1] = q[1];
            }
        }
    for (t = 0; t < 6; t++)
        for (j = 0; j < 2; j++) { /* experts: a [M, K] decode, a [M, k, K] prefill */
            int64_t kk = t < 3 ? 256 : 64;
            c = &out[k++];
            c->op = OC_MATMUL_EXPERT;
            c->dt[0] = F32;
            c->dt[1] = more[t];
            c->dt[2] = I32;
            c->odt = F32;
            c->nmse = MM;
            c->flags = (t + j) % 2 ? C_RAWQ : 0;
            c->s[0][0] = j ? 3 : 2;
            c->s[0][1] = j ? 5 : 1;
            c->s[0][2] = j ? 2 : kk;
            c->s[0][3] = kk;
            c->s[1][0] = 3;
            c->s[1][1] = 3;
            c->s[1][2] = j ? 9 : 4;
            c->s[1][3] = kk;
            c->s[2][0] = 2;
            c->s[2][1] = j ? 5 : 1;
            c->s[2][2] = 2;
        }
    j = 0;
    for (t = 0; t < 2; t++) {
        for (i = 0; i <= sizeof qs / sizeof qs[0]; i++) {
            int last = i == sizeof qs / sizeof qs[0];
            c = &out[k++];
            c->op = OC_MATMUL_Q;
            c->dt[0] = F32;
            c->dt[1] = t ? Q4 : Q8;
            c->odt = F32;
            c->nmse = MM;
            if (last) { /* a [3, 3, 64]: leading dims are rows too */
                int64_t a3[4] = {3, 3, 3, 64};
                memcpy(c->s[0], a3, sizeof a3);
                c->s[1][0] = 2;
                c->s[1][1] = 11;
                c->s[1][2] = 64;
            } else {
                c->s[0][0] = 2;
                c->s[0][1] = qs[i][0];
                c->s[0][2] = qs[i][2];
                c->s[1][0] = 2;
                c->s[1][1] = qs[i][1];
                c->s[1][2] = qs[i][2];
            }
            if (last || (i + (size_t)t) % 2) {
                c->s[2][0] = 1;
                c->s[2][1] = c->s[1][1];
            }
        }
    }
    for (b = 4; b <= 8; b += 4)
        for (g = 0; g < 3 + (b == 8) * 2; g++, j++) {
            const int64_t *sh = as[j % 6];
            c = &out[k++];
            c->op = OC_MATMUL_AFFINE;
            c->dt[0] = F32;
            c->dt[1] = j % 2 ? F16 : F32;
            c->dt[3] = j % 3 ? F16 : F32;
            c->odt = F32;
            c->nmse = MM;
            c->s[0][0] = 2;
            c->s[0][1] = sh[0];
            c->s[0][2] = sh[2];
            c->s[1][0] = 1;
            c->s[1][1] = sh[1];
            c->i[0] = b;
            c->i[1] = groups[g % 3];
            if (g == 3) { /* K = one group */
                c->s[0][1] = 4;
                c->s[0][2] = 32;
                c->s[1][1] = 3;
                c->i[0] = 4;
                c->i[1] = 32;
            } else if (g == 4) {
                c->s[0][1] = 7;
                c->s[0][2] = 192;
                c->s[1][1] = 19;
                c->i[1] = 64;
            }
            if (j % 2) {
                c->s[2][0] = 1;
                c->s[2][1] = c->s[1][1];
            }
        }
    for (t = 0; t < 4; t++) {
        /* per pair, M, k, E, N, K */
        int q = t >= 2;
        int64_t e[4][6] = {{0, 1, 2, 4, 7, q ? 64 : 37}, {t % 2, 5, 3, 3, 13, q ? 96 : 40},
                           {1, 3, 1, 1, 5, q ? 32 : 3}, {0, 17, 2, 5, 3, q ? 128 : 64}};
        for (j = 0; j < 4; j++) {
            c = &out[k++];
            c->op = OC_MATMUL_EXPERT;
            c->dt[0] = F32;
            c->dt[1] = edt[t];
            c->dt[2] = I32;
            c->odt = F32;
            c->nmse = MM;
            c->s[0][0] = e[j][0] ? 3 : 2;
            c->s[0][1] = e[j][1];
            c->s[0][2] = e[j][0] ? e[j][2] : e[j][5];
            c->s[0][3] = e[j][5];
            c->s[1][0] = 3;
            c->s[1][1] = e[j][3];
            c->s[1][2] = e[j][4];
            c->s[1][3] = e[j][5];
            c->s[2][0] = 2;
            c->s[2][1] = e[j][1];
            c->s[2][2] = e[j][2];
        }
    }
    return k;
}

/* Attention on the device's own variant (test_op_attention forces the GPU
 * ones): all ones with desc NULL, causal from 0 and after a cache, GQA,
 * f16 and mixed caches, kv_len < Tk, odd dims, q_offset, head dims up to
 * 256, many keys a row; decode shapes (one key, two and 17 chunks, a
 * causal cut, 12 heads a kv head) as decode and as prefill. */
static size_t generate_attention(oc_case *out, size_t k)
{
    /* tq, tk, hq, hkv, d, dv, k dtype, v dtype, causal, q_offset, kv_len,
     * scale * 10, desc NULL */
    static const int64_t a[][13] = {
        {1, 1, 1, 1, 1, 1, F32, F16, 0, 0, 0, 0, 1},
        {13, 13, 4, 4, 64, 64, F32, F32, 1, 0, 0, 0, 0},
        {37, 37, 8, 2, 40, 24, F16, F16, 1, -1, 0, 0, 0},
        {5, 70, 6, 3, 32, 48, F32, F32, 0, -1, 61, 3, 0},
        {9, 50, 2, 1, 128, 128, F16, F16, 1, -1, 45, 0, 0},
        {17, 23, 3, 1, 33, 7, F16, F32, 1, 5, 0, 0, 0},
        {3, 20, 2, 1, 256, 256, F32, F32, 1, -1, 0, 0, 0},
        {40, 100, 4, 2, 64, 64, F32, F32, 1, -1, 0, 0, 0},
        {23, 41, 4, 4, 96, 80, F16, F16, 0, 0, 0, 0, 1},
        /* decode shapes */
        {1, 1, 2, 1, 64, 64, F32, F32, 0, 0, 0, 0, 1},
        {1, 17, 4, 2, 40, 40, F16, F16, 1, -1, 0, 0, 0},
        {1, 300, 8, 2, 64, 32, F32, F32, 0, -1, 0, 2, 0},
        {1, 4099, 4, 1, 64, 64, F16, F16, 1, -1, 0, 0, 0},
        {1, 600, 3, 3, 33, 7, F32, F16, 0, -1, 513, 0, 0},
        {1, 700, 4, 4, 16, 16, F32, F32, 1, 299, 0, 0, 0},
        {1, 520, 12, 1, 128, 128, F32, F32, 1, -1, 0, 0, 0},
        {1, 260, 2, 1, 256, 256, F16, F16, 1, -1, 0, 0, 0},
    };
    size_t i;
    int dec;
    for (i = 0; i < sizeof a / sizeof a[0]; i++)
        for (dec = 0; dec <= (a[i][0] == 1 && i >= 9); dec++) {
            oc_case *c = &out[k++];
            c->op = dec ? OC_SDPA_DECODE : OC_SDPA;
            c->dt[0] = F32;
            c->dt[1] = (glc_dtype)a[i][6];
            c->dt[2] = (glc_dtype)a[i][7];
            c->odt = F32;
            c->s[0][0] = c->s[1][0] = c->s[2][0] = 3;
            c->s[0][1] = a[i][0];
            c->s[0][2] = a[i][2];
            c->s[0][3] = a[i][4];
            c->s[1][1] = c->s[2][1] = a[i][1];
            c->s[1][2] = c->s[2][2] = a[i][3];
            c->s[1][3] = a[i][4];
            c->s[2][3] = a[i][5];
            c->i[0] = a[i][8];
            c->i[1] = a[i][9];
            c->i[2] = a[i][10];
            c->i[3] = a[i][12];
            c->f[0] = (float)a[i][11] / 10.0f;
            c->nmse = MM;
        }
    return k;
}

/* Data movement, exact: copy (every permutation shape of rank 2 to 4,
 * every conversion contiguous, transposes large enough for 2-D tiles,
 * random shapes and permutations), slice (every axis at the start, an odd
 * middle and the end; whole dims, one element, odd bases), concat (every
 * axis, mixed and equal dtypes), get_rows (raw, converted and dequantized
 * tables of every block type, ids of rank 1 to 3), set_rows (raw and converted, odd D, one and
 * many rows). Strided cases take (in, out) dtypes from `strided`: each
 * raw-bits path and two conversions (each variant is a shader compile). */
static size_t generate_data(oc_case *out, size_t k, uint64_t *seed)
{
    static const glc_dtype strided[4][2] = {{F32, F32}, {F16, F16}, {BF16, F32}, {F32, BF16}};
    static const int64_t perms[][5] = {{2, 1, 0},       {2, 0, 1},       {3, 0, 2, 1},
                                       {3, 1, 0, 2},    {3, 2, 1, 0},    {3, 1, 2, 0},
                                       {3, 2, 0, 1},    {4, 0, 2, 1, 3}, {4, 3, 2, 1, 0},
                                       {4, 0, 1, 3, 2}, {4, 2, 3, 0, 1}, {4, 1, 0, 2, 3},
                                       {4, 0, 3, 1, 2}};
    static const int64_t ps[5][4] = {{0}, {0}, {13, 7}, {5, 3, 11}, {3, 5, 2, 7}};
    static const int64_t dims[] = {1, 2, 3, 5, 7, 8, 13, 4, 11, 1, 6};
    static const int64_t tiles[5][5] = {{2, 37, 41}, {2, 24, 50}, {2, 40, 16}, {3, 20, 5, 12},
                                        {4, 18, 3, 2, 16}};
    static const glc_dtype tile_dt[5][2] = {{F32, F32}, {F16, F16}, {BF16, F32}, {F32, BF16},
                                            {F16, F16}};
    static const int64_t sl[4][4] = {{101}, {9, 7}, {5, 6, 7}, {3, 4, 5, 6}};
    static const int64_t cs[4][4] = {{37}, {5, 7}, {3, 5, 7}, {2, 3, 5, 7}};
    static const int64_t other[] = {1, 4, 3, 2};
    static const glc_dtype mixed[2][3] = {{F16, F32, BF16}, {BF16, F16, F32}};
    static const glc_dtype gr[10][2] = {{F32, F32}, {F16, F16}, {BF16, BF16}, {F32, F16},
                                        {F16, BF16}, {BF16, F32}, {Q8, F32}, {Q8, BF16},
                                        {Q4, F32},  {Q4, F16}};
    static const glc_dtype sr[7][2] = {{F32, F32}, {F16, F16}, {BF16, BF16}, {F32, F16},
                                       {F32, BF16}, {F16, F32}, {BF16, F16}};
    oc_case *c;
    size_t p;
    int i, rank, ax, where, n = 0;
    for (p = 0; p < sizeof perms / sizeof perms[0]; p++) {
        rank = (int)perms[p][0];
        c = add(out, &k, OC_COPY, strided[p % 4][0], strided[p % 4][1], rank, ps[rank]);
        c->i[0] = 1;
        memcpy(&c->i[1], &perms[p][1], (size_t)rank * sizeof(int64_t));
    }
    for (i = 0; i < 9; i++) { /* every conversion, contiguous, odd counts */
        int64_t len = i % 2 ? 1001 : 70, sh[3] = {7, 11, 13};
        if (i < 6)
            add(out, &k, OC_COPY, floats[i / 3], floats[i % 3], 1, &len);
        else
            add(out, &k, OC_COPY, floats[i % 3], floats[(i + 1) % 3], 3, sh);
    }
    for (i = 0; i < 5; i++) { /* transposes: the contiguous dim lands everywhere */
        int r;
        rank = (int)tiles[i][0];
        c = add(out, &k, OC_COPY, tile_dt[i][0], tile_dt[i][1], rank, &tiles[i][1]);
        c->i[0] = 1;
        for (r = 0; r < rank; r++)
            c->i[1 + r] = rank - 1 - r;
    }
    for (i = 0; i < 24; i++) { /* random shapes (1s too) and permutations */
        int64_t sh[4];
        int r;
        rank = 1 + i % 4;
        do {
            for (r = 0; r < rank; r++)
                sh[r] = dims[ot_rand(seed) % (sizeof dims / sizeof dims[0])];
        } while (ot_numel(rank, sh) > 3000);
        c = add(out, &k, OC_COPY, strided[i % 4][0], strided[i % 4][1], rank, sh);
        c->i[0] = i % 5 != 4;
        random_perm(seed, rank, &c->i[1]);
    }
    for (rank = 1; rank <= 4; rank++)
        for (ax = 0; ax < rank; ax++)
            for (where = 0; where < 3; where++, n++) {
                int64_t dd = sl[rank - 1][ax];
                int64_t len = where == 1 ? dd / 2 : (dd + 1) / 2;
                int64_t start = where == 0 ? 0 : where == 1 ? 1 + (dd - 1 - dd / 2) / 2 : dd - len;
                if (where == 1 && start % 2 == 0 && start + len < dd)
                    start++;
                /* (a plan's slice keeps the input's dtype: compared as such) */
                c = add(out, &k, OC_SLICE, strided[n % 4][0], strided[n % 4][1], rank,
                         sl[rank - 1]);
                c->i[0] = n % 4 == 3 ? ax - rank : ax;
                c->i[1] = start;
                c->i[2] = len;
            }
    {
        static const int64_t sc[5][4] = {{2, 1, 0, 7}, {3, 2, 4, 1}, {2, 0, 1, 5}, {1, 0, 3, 97},
                                         {1, -1, 50, 50}}; /* rank, axis, start, len */
        static const glc_dtype sd[5][2] = {{F16, F16}, {BF16, F32}, {F16, F16}, {BF16, BF16},
                                           {F16, F16}};
        for (i = 0; i < 5; i++) {
            rank = (int)sc[i][0];
            c = add(out, &k, OC_SLICE, sd[i][0], sd[i][1], rank, sl[rank - 1]);
            memcpy(c->i, &sc[i][1], 3 * sizeof(int64_t));
        }
    }
    for (rank = 1, n = 0; rank <= 4; rank++)
        for (ax = 0; ax < rank; ax++, n++) {
            int64_t bs[4];
            memcpy(bs, cs[rank - 1], sizeof bs);
            bs[ax] = other[(ax + rank) % 4];
            /* a, b and out dtypes all differ (a plan's concat keeps a's) */
            c = add(out, &k, OC_CONCAT, mixed[n % 2][0], mixed[n % 2][2], rank, cs[rank - 1]);
            c->dt[1] = mixed[n % 2][1];
            c->s[1][0] = rank;
            memcpy(&c->s[1][1], bs, sizeof bs);
            c->i[0] = n % 4 == 1 ? ax - rank : ax;
            c = add(out, &k, OC_CONCAT, floats[n % 3], floats[n % 3], rank, bs);
            c->dt[1] = floats[n % 3];
            c->s[1][0] = rank;
            memcpy(&c->s[1][1], cs[rank - 1], sizeof bs);
            c->i[0] = ax;
        }
    for (i = 0; i < 14; i++) {
        static const int64_t fd[] = {1, 7, 64, 13, 2}, qd[] = {32, 96, 64};
        static const int64_t extra[4][5] = {{1, 31, 1, 1}, {97, 127, 1, 517}, {50, 160, 1, 517},
                                            {3, 32, 3, 2, 3}}; /* V, D, ids rank, ids */
        static const glc_dtype edt[4][2] = {{F32, F32}, {F16, F16}, {Q4, F32}, {Q8, BF16}};
        int64_t tshape[2], ids3[3] = {2, 3, 7};
        glc_dtype tt = i < 10 ? gr[i][0] : edt[i - 10][0], to = i < 10 ? gr[i][1] : edt[i - 10][1];
        int quant = tt == Q8 || tt == Q4;
        if (i < 10) {
            tshape[0] = 1 + (int64_t)(ot_rand(seed) % 23);
            tshape[1] = quant ? qd[i % 3] : fd[i % 5];
        } else {
            tshape[0] = extra[i - 10][0];
            tshape[1] = extra[i - 10][1];
        }
        c = add(out, &k, OC_GET_ROWS, tt, to, 2, tshape);
        c->dt[1] = I32;
        if (i < 10 && i % 4 == 3) {
            c->s[1][0] = 2;
            c->s[1][1] = 3;
            c->s[1][2] = 5;
        } else if (i == 13) {
            c->s[1][0] = 3;
            memcpy(&c->s[1][1], ids3, sizeof ids3);
        } else {
            c->s[1][0] = 1;
            c->s[1][1] = i < 10 ? 1 + (int64_t)(ot_rand(seed) % 19) : extra[i - 10][3];
        }
    }
    for (i = 0; i < 12; i++) {
        static const int64_t ds[] = {7, 8, 1, 13, 64, 3};
        static const int64_t last[3][3] = {{1, 5, 1}, {300, 1, 301}, {300, 1, 307}};
        static const glc_dtype ldt[3][2] = {{F32, BF16}, {F16, F16}, {F32, F16}};
        int64_t sh[3], v;
        glc_dtype ts = i < 9 ? sr[i % 7][0] : ldt[i - 9][0];
        glc_dtype td = i < 9 ? sr[i % 7][1] : ldt[i - 9][1];
        rank = i < 9 ? 2 + i % 2 : 2;
        if (i < 9) {
            v = 11 + (int64_t)(ot_rand(seed) % 30);
            sh[0] = 1 + (int64_t)(ot_rand(seed) % 10);
            sh[1] = rank == 3 ? 3 : ds[i % 6];
            sh[2] = ds[i % 6];
        } else {
            sh[0] = last[i - 9][0];
            sh[1] = last[i - 9][1];
            v = last[i - 9][2];
        }
        c = add(out, &k, OC_SET_ROWS, ts, td, rank, sh);
        c->dt[1] = I32;
        c->s[1][0] = 1;
        c->s[1][1] = sh[0];
        c->dt[2] = td;
        c->s[2][0] = rank;
        c->s[2][1] = v;
        memcpy(&c->s[2][2], &sh[1], (size_t)(rank - 1) * sizeof *sh);
    }
    for (i = 0; i < 12; i++) { /* get_rows of the other block types: 1 to 3 blocks a row */
        static const glc_dtype more[6] = {Q4K, Q6K, Q5K, Q41, Q50, Q51};
        static const glc_dtype to[3] = {F32, F16, BF16};
        int64_t tshape[2];
        glc_dtype tt = more[i % 6];
        tshape[0] = 1 + (int64_t)(ot_rand(seed) % 23);
        tshape[1] = (i % 6 < 3 ? 256 : 32) * (1 + (int64_t)(ot_rand(seed) % 3));
        c = add(out, &k, OC_GET_ROWS, tt, to[i % 3], 2, tshape);
        c->flags = i < 6 ? C_RAWQ : 0;
        c->dt[1] = I32;
        c->s[1][0] = 1 + i % 2;
        c->s[1][1] = 1 + (int64_t)(ot_rand(seed) % 19);
        c->s[1][2] = 2;
    }
    return k;
}

/* 36 binary ops on random shapes (1, odd, prime dims; b the same shape, a
 * suffix or with 1s, sometimes a broadcast against b) in every dtype mix;
 * every unary op and scale at sizes 1 to 4099; 18 ropes: NORMAL and NEOX,
 * [T, H, D] and [B, T, H, D], full and partial rope_dim, odd D and odd
 * rope_dim / 2 (the half-word path), bases, factors, in place. */
size_t oc_generate(oc_case *out)
{
    static const int64_t sizes[] = {1, 2, 7, 257, 4099};
    uint64_t seed = 101;
    int iter, op, j;
    size_t k = 0;
    memset(out, 0, OC_NGEN * sizeof *out);
    for (iter = 0; iter < 36; iter++, k++) {
        oc_case *c = &out[k];
        int64_t *sa = c->s[0], *sb = c->s[1];
        c->op = OC_ADD + iter % 4;
        random_shape(&seed, sa);
        sb[0] = 1 + (int64_t)(ot_rand(&seed) % (uint64_t)sa[0]);
        for (j = 0; j < sb[0]; j++)
            sb[1 + j] = ot_rand(&seed) % 3 == 0 ? 1 : sa[1 + sa[0] - sb[0] + j];
        if (iter % 5 == 0) {
            int64_t t[5];
            memcpy(t, sa, sizeof t);
            memcpy(sa, sb, sizeof t);
            memcpy(sb, t, sizeof t);
        }
        c->dt[0] = floats[iter % 3];
        c->dt[1] = floats[(iter / 3) % 3];
        c->odt = floats[(iter / 9) % 3];
        c->nmse = limit_for(c->odt);
    }
    for (op = GLC_UNARY_GELU; op <= GLC_UNARY_SOFTCAP + 1; op++)
        for (j = 0; j < 5; j++, k++) {
            oc_case *c = &out[k];
            c->op = op > GLC_UNARY_SOFTCAP ? OC_SCALE : OC_UNARY;
            c->i[0] = op;
            c->f[0] = c->op == OC_SCALE ? 1.5f : 3.0f;
            c->f[1] = c->op == OC_SCALE ? -0.25f : 0.0f;
            c->s[0][0] = 1;
            c->s[0][1] = sizes[j];
            c->dt[0] = floats[(op + j) % 3];
            c->odt = floats[(op + 2 * j) % 3];
            c->nmse = limit_for(c->odt);
        }
    for (iter = 0; iter < 18; iter++, k++) {
        /* D, rope_dim */
        static const int64_t dr[][2] = {{128, 0}, {64, 32}, {2, 0}, {7, 4}, {10, 0},
                                        {96, 20}, {5, 2}, {14, 6}, {3, 2}};
        oc_case *c = &out[k];
        int64_t *x = c->s[0], rank = 3 + iter % 2, rd;
        c->op = OC_ROPE;
        x[0] = rank;
        if (rank == 4)
            x[1] = 1 + (int64_t)(ot_rand(&seed) % 3);
        x[rank - 2] = 1 + (int64_t)(ot_rand(&seed) % 13);
        x[rank - 1] = 1 + (int64_t)(ot_rand(&seed) % 5);
        x[rank] = dr[iter % 9][0];
        rd = dr[iter % 9][1] ? dr[iter % 9][1] : x[rank];
        c->i[0] = (iter / 2) % 2 ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
        c->i[1] = dr[iter % 9][1];
        c->s[1][0] = 1;
        c->s[1][1] = x[rank - 2];
        c->dt[1] = I32;
        if (iter % 5 == 2 && rd / 2) {
            c->s[2][0] = 1;
            c->s[2][1] = rd / 2;
        }
        c->dt[0] = floats[iter % 3];
        c->odt = floats[(iter / 3) % 3];
        c->f[0] = iter % 4 == 3 ? 500000.0f : iter % 4 == 1 ? 10.0f : 0.0f;
        if (iter % 4 == 0 && c->dt[0] == c->odt)
            c->flags = C_INPLACE;
        c->nmse = OT_NMSE_ROPE;
    }
    k = generate_rows(out, k, &seed);
    k = generate_matmul(out, k);
    k = generate_quant(out, k);
    k = generate_attention(out, k);
    k = generate_data(out, k, &seed);
    assert_true(k <= OC_NGEN);
    return k;
}

const oc_case *oc_cases(size_t *n)
{
    *n = sizeof cases / sizeof cases[0];
    return cases;
}
