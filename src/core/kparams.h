/*
 * The parameter layout (glc_p[]) of every built-in kernel, one home for
 * both sides. A kernel's list X(K, NAME, INDEX) makes the C enum its
 * planner writes through (GLC__KP_<K>_<NAME>, glc__plan_param_at) and,
 * through src/tools/glsl_enums.c, the GLSL define the kernel reads
 * (P_<NAME>, in build/gen/kparams.glsl, in the section a kernel picks with
 * `#define GLC_KP_<K>` before `#include "kparams.glsl"`). A name may stand
 * for the first of several slots (per-dim strides) or share its slot with
 * another name (slots whose meaning differs by variant). GL-free.
 */
#ifndef GLC_KPARAMS_H
#define GLC_KPARAMS_H

#define GLC__KP_FILL(X, k) X(k, N, 0) X(k, VALUE, 1) X(k, STRIDE, 2)
#define GLC__KP_SPIN(X, k) X(k, N, 0) X(k, TAG, 1) X(k, SPIN, 2) X(k, MASK, 3) X(k, FIRST, 4)
/* unary: A the cap of SOFTCAP and the a of x * a + b */
#define GLC__KP_UNARY(X, k) X(k, N, 0) X(k, A, 1) X(k, B, 2)
/* binary: out dims 1..3 of its 4-D shape, a's and b's element strides per
 * out dim (4 each), ACT_A's param */
#define GLC__KP_BINARY(X, k) \
    X(k, N, 0) X(k, DIM1, 1) X(k, DIM2, 2) X(k, DIM3, 3) X(k, A_STRIDES, 4) X(k, B_STRIDES, 8) \
    X(k, ACT_PARAM, 12)
/* copy: TILE keeps its three in B_STRIDES' slots */
#define GLC__KP_COPY(X, k) \
    X(k, N, 0) X(k, N1, 1) X(k, N2, 2) X(k, N3, 3) X(k, A_STRIDES, 4) X(k, B_STRIDES, 8) \
    X(k, TILE_N0, 8) X(k, TILE_W, 9) X(k, TILE_K, 10) X(k, SPLIT, 12) X(k, BASE, 13)
#define GLC__KP_GET_ROWS(X, k) \
    X(k, UNITS, 0) X(k, D, 1) X(k, V, 2) X(k, ROW_BYTES, 3) X(k, N, 4) X(k, ROW0, 5)
#define GLC__KP_SET_ROWS(X, k) X(k, UNITS, 0) X(k, U, 1) X(k, D, 2) X(k, V, 3)
/* reduce: SCALE (softmax) and EPS (norms) share a slot */
#define GLC__KP_REDUCE(X, k) \
    X(k, ROWS, 0) X(k, N, 1) X(k, TQ, 2) X(k, OFFP, 3) X(k, OFFN, 4) X(k, SCALE, 5) \
    X(k, EPS, 5) X(k, NOFF, 6) X(k, SEG_PAIRS, 7) X(k, NSEG, 8)
#define GLC__KP_ROPE(X, k) \
    X(k, UNITS, 0) X(k, ROW_UNITS, 1) X(k, ROT, 2) X(k, H, 3) X(k, T, 4) X(k, D, 5) \
    X(k, ROPE_DIM, 6) X(k, THETA_STEP, 7) X(k, CACHE_ROWS, 8)
/* rope_qkv: the end of the q units, of the k units, of all units; units
 * per q/k row, rotation units per row, q and k heads, T, D, rope_dim, the
 * theta step, rows of the k and v caches, v units per token, v elements
 * per token */
#define GLC__KP_ROPE_QKV(X, k) \
    X(k, Q_END, 0) X(k, K_END, 1) X(k, UNITS, 2) X(k, ROW_UNITS, 3) X(k, ROT, 4) X(k, HQ, 5) \
    X(k, HK, 6) X(k, T, 7) X(k, D, 8) X(k, ROPE_DIM, 9) X(k, THETA_STEP, 10) X(k, K_ROWS, 11) \
    X(k, V_ROWS, 12) X(k, V_UNITS, 13) X(k, VD, 14)
/* the fused Q/K/V projection's segments: column bounds S1, S12, and where
 * segments 1 and 2 start in out, from `at` on */
#define GLC__KP_SEGS(X, k, at) X(k, S1, at) X(k, S12, at + 1) X(k, SEG1, at + 2) X(k, SEG2, at + 3)
#define GLC__KP_KSUM(X, k) \
    X(k, TOTAL, 0) X(k, N, 1) X(k, S, 2) X(k, FLAGS, 3) X(k, ACT_PARAM, 4) GLC__KP_SEGS(X, k, 5)
/* matvec; ROPE (no segments, no GLU): q's columns, q's and k's, the head
 * dim, rope_dim, the theta step (float bits), the caches' rows */
#define GLC__KP_MATVEC(X, k) \
    X(k, M, 0) X(k, N, 1) X(k, K, 2) X(k, WORDS, 3) X(k, FLAGS, 4) X(k, ACT_PARAM, 5) \
    GLC__KP_SEGS(X, k, 6) X(k, GLU_DELTA, 10) X(k, R_QW, 6) X(k, R_KEND, 7) X(k, R_D, 8) \
    X(k, R_DIM, 9) X(k, R_THETA, 10) X(k, R_KROWS, 11) X(k, R_VROWS, 12)
#define GLC__KP_MATMUL(X, k) \
    X(k, M, 0) X(k, N, 1) X(k, K, 2) X(k, MTILES, 3) X(k, NTILES, 4) X(k, BATCHES, 5) \
    X(k, INNER, 6) X(k, B_STRIDE_HI, 7) X(k, B_ROW_BYTES, 7) X(k, B_STRIDE_LO, 8) X(k, FLAGS, 9) \
    X(k, ACT_PARAM, 10) GLC__KP_SEGS(X, k, 11) X(k, GLU_DELTA, 15)
/* the tile engine of matmul_q, matmul_affine, matmul_expert
 * (glsl/matmul_q.glsl); FLAGS: 1 add bias, 2 scales f16, 4 biases f16 */
#define GLC__KP_MQ(X, k) \
    X(k, M, 0) X(k, N, 1) X(k, K, 2) X(k, CHUNKS, 3) X(k, MTILES, 4) X(k, NTILES, 5) \
    X(k, TILES, 6) X(k, WSTRIDE, 7) X(k, FLAGS, 12)
#define GLC__KP_MATMUL_Q(X, k) \
    GLC__KP_MQ(X, k) GLC__KP_SEGS(X, k, 8) X(k, ACT_PARAM, 13) X(k, R_QW, 8) X(k, R_KEND, 9) \
    X(k, R_D, 10) X(k, R_DIM, 11) X(k, R_THETA, 13) X(k, R_KROWS, 14) X(k, R_VROWS, 15)
#define GLC__KP_MATMUL_AFFINE(X, k) GLC__KP_MQ(X, k) X(k, GROUPS, 8) X(k, GROUP_CHUNKS, 9)
#define GLC__KP_MATMUL_EXPERT(X, k) \
    GLC__KP_MQ(X, k) X(k, KSLOTS, 4) X(k, RANGE_PAIRS, 8) X(k, E, 10) X(k, PAIR_ROWS, 11)
/* sdpa_rows and sdpa_tile: the first eight */
#define GLC__KP_SDPA_HEAD(X, k) \
    X(k, TQ, 0) X(k, HQ, 1) X(k, GROUP, 2) X(k, HKV, 3) X(k, KV_LEN, 4) X(k, Q_OFFSET, 5) \
    X(k, CAUSAL, 6) X(k, QSCALE, 7)
/* sdpa_rows with ROPE (the fused rope_qkv): the rope's theta step and
 * the caches' rows */
#define GLC__KP_SDPA_ROWS(X, k) \
    GLC__KP_SDPA_HEAD(X, k) X(k, CHUNK_KEYS, 8) X(k, NSPLIT, 9) X(k, ITEMS, 10) X(k, D, 11) \
    X(k, DV, 12) X(k, SPLIT, 13) X(k, THETA_STEP, 14) X(k, ROPE_ROWS, 15)
#define GLC__KP_SDPA_TILE(X, k) GLC__KP_SDPA_HEAD(X, k) X(k, QBLOCKS, 8)
#define GLC__KP_SDPA_SPLIT(X, k) \
    X(k, HQ, 0) X(k, GROUP, 1) X(k, HKV, 2) X(k, KEYS, 3) X(k, NSPLIT, 4) X(k, HEAD_BLOCKS, 5) \
    X(k, QSCALE, 6) X(k, NORMALIZE, 7)
#define GLC__KP_SDPA_COMBINE(X, k) X(k, NSPLIT, 0) X(k, DV, 1)
/* a plan's texture input or output (plan_run.c): its size and channels */
#define GLC__KP_IMAGE_IO(X, k) X(k, W, 0) X(k, H, 1) X(k, C, 2)

/* Y(K): every kernel with params. */
#define GLC__KPARAM_KERNELS(Y) \
    Y(FILL) Y(SPIN) Y(UNARY) Y(BINARY) Y(COPY) Y(GET_ROWS) Y(SET_ROWS) Y(REDUCE) Y(ROPE) \
    Y(ROPE_QKV) \
    Y(KSUM) Y(MATVEC) Y(MATMUL) Y(MATMUL_Q) Y(MATMUL_AFFINE) Y(MATMUL_EXPERT) Y(SDPA_ROWS) \
    Y(SDPA_TILE) Y(SDPA_SPLIT) Y(SDPA_COMBINE) Y(IMAGE_IO)

#define GLC__KP_ENUM(K, NAME, I) GLC__KP_##K##_##NAME = (I),
#define GLC__KP_KERNEL_ENUM(K) enum { GLC__KP_##K(GLC__KP_ENUM, K) GLC__KP_##K##_END_ };
GLC__KPARAM_KERNELS(GLC__KP_KERNEL_ENUM)
/* the slots sdpa_rows and sdpa_tile share, for the planner that fills both */
GLC__KP_KERNEL_ENUM(SDPA_HEAD)
#undef GLC__KP_KERNEL_ENUM

#endif
