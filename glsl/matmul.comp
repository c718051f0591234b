// matmul: out[z] = a[z] x op(b[zb]) (+ bias), op(b) = b^T when NT.
// a f32 [M, K] per batch z; b f32/f16/bf16 [N, K] (NT) or [K, N] (NN), or
// GGML blocks [N, K] (NT, one matrix: decoded quad by quad as loaded);
// out f32 [M, N]. Two shapes of kernel, chosen by the plan:
//   TILED 1: a group computes a BM x BN block of out. Per step of BK, the
//            group stages a BM x BK slice of a and a BK x BN slice of b in
//            shared memory (both k-major, as vec4s of 4 rows / 4 columns),
//            and each invocation accumulates TM x TN outputs from them
//            (outer products of vec4s). The next step's slices are loaded
//            into registers while this step computes. The GPU path.
//   TILED 0: an invocation computes RM x 4 outputs straight from global
//            memory with vec4 loads, no shared memory, no barrier:
//            llvmpipe (where barrier() is slow) and mat-vec shapes.
// Invocation rows/columns of a TILED block are strided by vec4 (row vec4 i
// of an invocation is ty + i * BM / TM), so neighbouring invocations read
// neighbouring shared vec4s and write neighbouring outputs.
//
// bindings: 0 a (vec4[] when AVEC else float[]), 1 b (uint[]: any float
//   dtype or GGML blocks; vec4[] for f32 with BVEC), 2 out (float[]), 3 bias (float[]; the plan binds a in its
//   place when there is none), RES: 4 residual (float[], out's
//   shape, added last)
// params: 0 M, 1 N, 2 K, 3 m-tiles, 4 n-tiles, 5 batches, 6 inner batch
//   count (z = z_hi * p6 + z_lo), 7 b's stride for z_hi, 8 for z_lo
//   (elements; 0 broadcasts; GGML blocks: 7 a row's bytes), 9 flags (1: add bias), 10 activation param,
//   SEG: 11 s1, 12 s12 (column bounds of the segments), 13, 14 where
//   segments 1 and 2 start in out (elements); GLU: 15 the up half's offset
//   from the gate half (elements, signed; a's binding starts at the first)
// defines: TB (GLC_T_* of b), NT, TILED, AVEC (K % 4 == 0 for a, and b's
//   vector dim % 4 == 0), BVEC (b readable as 4-element vectors), BTEX
//   (BVEC b read as texels too, texture unit 0: f32 as RGBA32F,
//   GLC_BIND_TEXEL; f16 and bf16 as their words, RGBA32UI,
//   GLC_BIND_TEXEL_UINT), ATEX,
//   NTEX (a, the norm's weight read as texels: their texture units);
//   TILED:
//   BM, BN, BK, TM, TN, NVUNROLL (unroll pragma); else RM; ACT (glc_act op
//   applied after the bias, param 10; 0 none); SEG (the fused Q/K/V
//   projection: one batch, out is three row-major matrices); RES (a
//   residual added last, after the activation; not with KC: ksum adds it);
//   NORM (direct, NT, AVEC: the binding of an rms_norm weight, vec4[] [K];
//   a row of a is read as rms_norm(row, weight), eps NORM_EPS; an
//   invocation computes the norms of its RM rows); GLU (direct
//   only, AVEC: a row is act(gate) * up, the fused SwiGLU input); GLU_OUT
//   (direct, NT, no KC: the fused SwiGLU epilogue, a glc_act op with param
//   10; b's rows are gate | up halves, N (param 1) out's columns, b 2N rows:
//   out = act(gate + bias) * (up + bias), bias [2N]); KC (K
//   split for a device's loop cap: part j of the grid sums k in
//   [j * KC, (j + 1) * KC), a multiple of 16, and writes the raw partial
//   products, out's [.., M, N] order, at j * batches * M * N of out (the
//   plan's scratch); glsl/ksum.comp adds them up with bias and the rest)
// local size: GLC_LOCAL_SIZE_X (TILED: (BM / TM) * (BN / TN))

#define GLC_KP_MATMUL
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;

// NVIDIA's compiler keeps the 8 x 8 accumulators in local memory unless
// told to unroll (10x slower); other compilers ignore the pragma.
#ifdef NVUNROLL
#pragma optionNV(unroll all)
#endif

#ifndef ACT
#define ACT 0
#endif

#if AVEC && defined(ATEX)
// a as RGBA32F texels (texture unit ATEX; its SSBO binding 0 stays, unread)
layout(binding = ATEX) uniform highp samplerBuffer ta4;
#define A4(i) texelFetch(ta4, int(i))
#elif AVEC
layout(std430, binding = 0) readonly buffer A { vec4 a4[]; };
#define A4(i) a4[i]
#else
layout(std430, binding = 0) readonly buffer A { float a1[]; };
#endif
#if TB == GLC_T_F32 && BVEC && defined(BTEX)
// f32 b as RGBA32F texels (texture unit 0, GLC_BIND_TEXEL; its SSBO binding
// 1 stays bound, unread): llvmpipe's fetch is a gather, its SSBO load a
// loop over the lanes
layout(binding = 0) uniform highp samplerBuffer tb4;
#elif TB == GLC_T_F32 && BVEC
// f32 b read four at a time as vec4s (one load, not four: llvmpipe gathers)
layout(std430, binding = 1) readonly buffer B { vec4 b4[]; };
#else
layout(std430, binding = 1) readonly buffer B { uint bw[]; };
#if (TB == GLC_T_F16 || TB == GLC_T_BF16) && BVEC && defined(BTEX)
// 16-bit b as RGBA32UI texels, 8 values a texel (texture unit 0,
// GLC_BIND_TEXEL_UINT; its SSBO binding 1 stays bound)
layout(binding = 0) uniform highp usamplerBuffer tbu;
#endif
#endif
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(std430, binding = 3) readonly buffer BIAS { float bias[]; };
#ifdef RES
layout(std430, binding = 4) readonly buffer RESIDUAL { float res[]; };
#endif
#ifdef NORM
#if TILED || !NT || !AVEC
#error "NORM: the direct kernel, transposed b, K % 4 == 0"
#endif
#ifdef NTEX // the norm's weight as texels (unit NTEX; its SSBO binding stays, unread)
layout(binding = NTEX) uniform highp samplerBuffer tnw4;
#define NW4(i) texelFetch(tnw4, int(i))
#else
layout(std430, binding = NORM) readonly buffer NORMW { vec4 nw4[]; };
#define NW4(i) nw4[i]
#endif

// a's values av at k, read as the norm's input times its weight; ss sums
// their squares (with KC the rows' sums were taken whole beforehand)
vec4 norm_load(inout float ss, vec4 av, uint k)
{
#ifndef KC
    ss += dot(av, av);
#endif
    return av * NW4(k >> 2);
}
#endif

#define QUANT (TB >= GLC_T_Q8_0)
#if QUANT
// b of GGML blocks (matmul_q at prefill shapes, op_quant.c): NT, one matrix
// (b0 0), K whole blocks, B_ROW_BYTES a row's bytes; each quad of a row is
// decoded as it is loaded (quant.glsl: the f32 values get_rows gives)
#define GLC_QT TB
uint glc_qw(uint i)
{
    return bw[i];
}
#include "quant.glsl"
#elif !(TB == GLC_T_F32 && BVEC)
// b element i (any float dtype)
float b_at(uint i)
{
    return GLC_LOAD(bw, TB, i);
}
#endif

// b elements i .. i + 3, i a multiple of 4 (BVEC)
vec4 b_vec(uint i)
{
#if TB == GLC_T_F32 && BVEC && defined(BTEX)
    return texelFetch(tb4, int(i >> 2));
#elif TB == GLC_T_F32 && BVEC
    return b4[i >> 2];
#elif TB == GLC_T_F32
    return vec4(uintBitsToFloat(bw[i]), uintBitsToFloat(bw[i + 1u]), uintBitsToFloat(bw[i + 2u]),
                uintBitsToFloat(bw[i + 3u]));
#elif BVEC && defined(BTEX) // the half of the texel that holds values i .. i + 3
    uvec4 t = texelFetch(tbu, int(i >> 3));
    return glc_16x4((i & 4u) == 0u ? t.xy : t.zw, TB);
#else
    return glc_16x4(uvec2(bw[i >> 1], bw[(i >> 1) + 1u]), TB);
#endif
}

#if (TB == GLC_T_F16 || TB == GLC_T_BF16) && BVEC && defined(BTEX) && defined(BTEX8)
// BTEX8 (NT, K % 8 == 0: every row starts a texel): the texel holding
// b[row, k .. k + 7] (k rounded down to 8), and the values of its half `hi`
uvec4 b_tex8(uint b0, uint row, uint k)
{
    return texelFetch(tbu, int((b0 + row * glc_p[P_K] + k) >> 3));
}

vec4 b_half(uvec4 t, bool hi)
{
    return glc_16x4(hi ? t.zw : t.xy, TB);
}
#define B8 1
#else
#define B8 0
#endif

// NT, BVEC: b[row, k .. k + 3] of the [N, K] matrix at element b0
vec4 b_row4(uint b0, uint row, uint k)
{
#if QUANT
    uint c = k >> 5, blk = row * glc_p[P_B_ROW_BYTES] + (c / GLC_Q_CHUNKS) * GLC_Q_BYTES;
    return glc_q_values(blk, c % GLC_Q_CHUNKS, (k >> 2) & 7u);
#else
    return b_vec(b0 + row * glc_p[P_K] + k);
#endif
}

// a[row, k .. k + 3] of the matrix starting at element a0 (zeros past K)
vec4 a_vec(uint a0, uint row, uint k)
{
    uint K = glc_p[P_K];
#if defined(GLU)
    uint i = (a0 + row * K + k) >> 2; // AVEC: the plan asks it of GLU
    return k < K ? glc_glu4(A4(i + glc_glu_gate_shift(glc_p[P_GLU_DELTA])), A4(i + glc_glu_up_shift(glc_p[P_GLU_DELTA])))
                 : vec4(0.0);
#elif AVEC
    return k < K ? A4((a0 + row * K + k) >> 2) : vec4(0.0);
#else
    uint i = a0 + row * K + k;
    return vec4(k < K ? a1[i] : 0.0, k + 1u < K ? a1[i + 1u] : 0.0, k + 2u < K ? a1[i + 2u] : 0.0,
                k + 3u < K ? a1[i + 3u] : 0.0);
#endif
}

// 4 consecutive elements of b along its fast dim (K for NT, N for NN)
// starting at (row, col) of the [rows, cols] matrix at b0; zeros past cols.
vec4 b_run(uint b0, uint row, uint col, uint cols)
{
#if QUANT // (NT: cols is K)
    return col < cols ? b_row4(b0, row, col) : vec4(0.0);
#else
    uint i = b0 + row * cols + col;
#if BVEC
    return col < cols ? b_vec(i) : vec4(0.0);
#else
    return vec4(col < cols ? b_at(i) : 0.0, col + 1u < cols ? b_at(i + 1u) : 0.0,
                col + 2u < cols ? b_at(i + 2u) : 0.0, col + 3u < cols ? b_at(i + 3u) : 0.0);
#endif
#endif
}

uint part0; // KC: where this part's partial products start in out

void put(uint o0, uint row, uint col, float v)
{
    uint M = glc_p[P_M], N = glc_p[P_N];
    if (row >= M || col >= N)
        return;
#ifdef KC
    o[part0 + o0 + row * N + col] = v;
    return;
#endif
    if ((glc_p[P_FLAGS] & 1u) != 0u)
        v += bias[col];
    v = glc_act(v, ACT, glc_pf(P_ACT_PARAM));
#ifdef RES
    v = res[o0 + row * N + col] + v;
#endif
#ifdef SEG
    // columns [0, s1), [s1, s12), [s12, N) go to three matrices of out
    uint s1 = glc_p[P_S1], s12 = glc_p[P_S12];
    if (col < s1)
        o[row * s1 + col] = v;
    else if (col < s12)
        o[glc_p[P_SEG1] + row * (s12 - s1) + col - s1] = v;
    else
        o[glc_p[P_SEG2] + row * (N - s12) + col - s12] = v;
#else
    o[o0 + row * N + col] = v;
#endif
}

#ifdef GLU_OUT
#if TILED || !NT || defined(KC) || defined(SEG) || defined(RES)
#error "GLU_OUT: the direct kernel, transposed b, no K split, segments or residual"
#endif
// the SwiGLU epilogue: out[row, col] = act(gate + bias) * (up + bias), the
// gate sum of b's row col, the up sum of row N + col (N: out's columns)
void put_glu(uint o0, uint row, uint col, float g, float u)
{
    uint M = glc_p[P_M], N = glc_p[P_N];
    if (row >= M || col >= N)
        return;
    if ((glc_p[P_FLAGS] & 1u) != 0u) {
        g += bias[col];
        u += bias[N + col];
    }
    o[o0 + row * N + col] = glc_glu_out(g, u, glc_pf(P_ACT_PARAM));
}
#endif

#if TILED

#define AV (BM / 4)  // vec4s per k-row of the staged a
#define BV (BN / 4)
#define TMV (TM / 4) // vec4 rows per invocation
#define TNV (TN / 4)
#define NA (BM * BK / 16) // 4x4 blocks per staged slice
#define NB (BN * BK / 16)
#define NBLK (NA + NB)
#define LOADS ((NBLK + GLC_LOCAL_SIZE_X - 1) / GLC_LOCAL_SIZE_X)

// k-major: [BK][BM / 4] and [BK][BN / 4] vec4s
shared vec4 As[BK * AV];
shared vec4 Bs[BK * BV];

vec4 stage[LOADS][4];

// Block q of the slices at k0: 4 rows x 4 k of a, or 4 k x 4 columns (NN) /
// 4 columns x 4 k (NT) of b, loaded into stage[s].
void load_block(int s, uint q, uint a0, uint b0, uint m0, uint n0, uint k0)
{
    uint M = glc_p[P_M], N = glc_p[P_N], K = glc_p[P_K];
    if (q >= uint(NBLK))
        return;
    if (q < uint(NA)) {
        // a: k-block fastest, so 4 invocations read 64 contiguous bytes
        uint kb = q % uint(BK / 4), rb = q / uint(BK / 4);
        for (uint j = 0u; j < 4u; j++)
            stage[s][j] = a_vec(a0, min(m0 + rb * 4u + j, M - 1u), k0 + kb * 4u);
    } else {
        uint qb = q - uint(NA);
#if NT
        uint kb = qb % uint(BK / 4), cb = qb / uint(BK / 4);
        for (uint j = 0u; j < 4u; j++)
            stage[s][j] = b_run(b0, min(n0 + cb * 4u + j, N - 1u), k0 + kb * 4u, K);
#else
        uint cb = qb % uint(BV), kb = qb / uint(BV);
        for (uint j = 0u; j < 4u; j++) {
            uint k = k0 + kb * 4u + j;
            stage[s][j] = k < K ? b_run(b0, k, n0 + cb * 4u, N) : vec4(0.0);
        }
#endif
    }
}

// Stores block q from stage[s] k-major (transposing where it was loaded
// along k).
void store_block(int s, uint q)
{
    if (q >= uint(NBLK))
        return;
    vec4 r0 = stage[s][0], r1 = stage[s][1], r2 = stage[s][2], r3 = stage[s][3];
    if (q < uint(NA)) {
        uint kb = q % uint(BK / 4), rb = q / uint(BK / 4), base = kb * 4u * uint(AV) + rb;
        As[base] = vec4(r0.x, r1.x, r2.x, r3.x);
        As[base + uint(AV)] = vec4(r0.y, r1.y, r2.y, r3.y);
        As[base + 2u * uint(AV)] = vec4(r0.z, r1.z, r2.z, r3.z);
        As[base + 3u * uint(AV)] = vec4(r0.w, r1.w, r2.w, r3.w);
    } else {
        uint qb = q - uint(NA);
#if NT
        uint kb = qb % uint(BK / 4), cb = qb / uint(BK / 4), base = kb * 4u * uint(BV) + cb;
        Bs[base] = vec4(r0.x, r1.x, r2.x, r3.x);
        Bs[base + uint(BV)] = vec4(r0.y, r1.y, r2.y, r3.y);
        Bs[base + 2u * uint(BV)] = vec4(r0.z, r1.z, r2.z, r3.z);
        Bs[base + 3u * uint(BV)] = vec4(r0.w, r1.w, r2.w, r3.w);
#else
        uint cb = qb % uint(BV), kb = qb / uint(BV), base = kb * 4u * uint(BV) + cb;
        Bs[base] = r0;
        Bs[base + uint(BV)] = r1;
        Bs[base + 2u * uint(BV)] = r2;
        Bs[base + 3u * uint(BV)] = r3;
#endif
    }
}

void main()
{
    if (glc_group_out_of_range())
        return;
    uint M = glc_p[P_M], N = glc_p[P_N], K = glc_p[P_K];
    uint tile = glc_group_index(), per = glc_p[P_MTILES] * glc_p[P_NTILES];
#ifdef KC
    uint kpart = tile / (per * glc_p[P_BATCHES]);
    tile -= kpart * per * glc_p[P_BATCHES];
    uint kbeg = kpart * uint(KC), kend = min(K, kbeg + uint(KC));
    part0 = kpart * glc_p[P_BATCHES] * M * N;
#else
    uint kbeg = 0u, kend = K;
#endif
    uint z = tile / per, t = tile % per;
    uint m0 = (t / glc_p[P_NTILES]) * uint(BM), n0 = (t % glc_p[P_NTILES]) * uint(BN);
    uint a0 = z * M * K, o0 = z * M * N;
#if QUANT
    uint b0 = 0u; // one matrix; B_ROW_BYTES holds B_STRIDE_HI's slot
#else
    uint b0 = (z / glc_p[P_INNER]) * glc_p[P_B_STRIDE_HI] + (z % glc_p[P_INNER]) * glc_p[P_B_STRIDE_LO];
#endif
    uint lid = gl_LocalInvocationID.x;
    uint tx = lid % uint(BN / TN), ty = lid / uint(BN / TN);

    vec4 acc[TM][TNV];
    for (int i = 0; i < TM; i++)
        for (int j = 0; j < TNV; j++)
            acc[i][j] = vec4(0.0);

    for (int s = 0; s < LOADS; s++)
        load_block(s, lid + uint(s * GLC_LOCAL_SIZE_X), a0, b0, m0, n0, kbeg);
    for (uint k0 = kbeg; k0 < kend; k0 += uint(BK)) {
        barrier(); // the previous step is done reading the slices
        for (int s = 0; s < LOADS; s++)
            store_block(s, lid + uint(s * GLC_LOCAL_SIZE_X));
        barrier();
        if (k0 + uint(BK) < kend)
            for (int s = 0; s < LOADS; s++)
                load_block(s, lid + uint(s * GLC_LOCAL_SIZE_X), a0, b0, m0, n0, k0 + uint(BK));
        for (int k = 0; k < BK; k++) {
            vec4 av[TMV], bv[TNV];
            for (int i = 0; i < TMV; i++)
                av[i] = As[k * AV + int(ty) + i * (BM / TM)];
            for (int j = 0; j < TNV; j++)
                bv[j] = Bs[k * BV + int(tx) + j * (BN / TN)];
            for (int i = 0; i < TMV; i++)
                for (int j = 0; j < TNV; j++) {
                    acc[i * 4][j] += av[i].x * bv[j];
                    acc[i * 4 + 1][j] += av[i].y * bv[j];
                    acc[i * 4 + 2][j] += av[i].z * bv[j];
                    acc[i * 4 + 3][j] += av[i].w * bv[j];
                }
        }
    }
    for (int i = 0; i < TM; i++) {
        uint row = m0 + (ty + uint(i / 4) * uint(BM / TM)) * 4u + uint(i % 4);
        for (int j = 0; j < TNV; j++) {
            uint col = n0 + (tx + uint(j) * uint(BN / TN)) * 4u;
            put(o0, row, col, acc[i][j].x);
            put(o0, row, col + 1u, acc[i][j].y);
            put(o0, row, col + 2u, acc[i][j].z);
            put(o0, row, col + 3u, acc[i][j].w);
        }
    }
}

#else // !TILED: RM rows x 4 columns per invocation, straight from global memory

void main()
{
    if (glc_group_out_of_range())
        return;
    uint M = glc_p[P_M], N = glc_p[P_N], K = glc_p[P_K];
    uint tile = glc_global_index(), per = glc_p[P_MTILES] * glc_p[P_NTILES];
#ifdef KC
    uint kpart = tile / (per * glc_p[P_BATCHES]);
    tile -= kpart * per * glc_p[P_BATCHES];
    uint kbeg = kpart * uint(KC), kend = min(K, kbeg + uint(KC));
    if (kbeg >= K)
        return;
    part0 = kpart * glc_p[P_BATCHES] * M * N;
#else
    if (tile >= per * glc_p[P_BATCHES])
        return;
    uint kbeg = 0u, kend = K;
#endif
    uint z = tile / per, t = tile % per;
    // consecutive invocations take consecutive column quads of one row block
    uint m0 = (t / glc_p[P_NTILES]) * uint(RM), n0 = (t % glc_p[P_NTILES]) * 4u;
    uint a0 = z * M * K, o0 = z * M * N;
#if QUANT
    uint b0 = 0u; // one matrix; B_ROW_BYTES holds B_STRIDE_HI's slot
#else
    uint b0 = (z / glc_p[P_INNER]) * glc_p[P_B_STRIDE_HI] + (z % glc_p[P_INNER]) * glc_p[P_B_STRIDE_LO];
#endif
    uint rows[RM];
    for (int r = 0; r < RM; r++)
        rows[r] = min(m0 + uint(r), M - 1u);
    vec4 acc[RM];
    for (int r = 0; r < RM; r++)
        acc[r] = vec4(0.0);
#ifdef GLU_OUT
    vec4 accu[RM]; // the up rows' sums
    for (int r = 0; r < RM; r++)
        accu[r] = vec4(0.0);
#endif
#ifdef NORM
    // the rms_norm prologue: the products below read a * weight, scaled at
    // the end by 1 / rms of the row, from the sums of squares of what the
    // loop loads (all of K) or, for a K part (KC), of the whole row first
    float nss[RM];
    for (int r = 0; r < RM; r++) {
        nss[r] = 0.0;
#ifdef KC
        for (uint k = 0u; k < K; k += 4u) {
            vec4 x = A4((a0 + rows[r] * K + k) >> 2);
            nss[r] += dot(x, x);
        }
#endif
    }
#endif
#if AVEC && BVEC
    // whole quads of k and of columns: no bounds checks in the loop (what
    // llvmpipe's SIMD code is fastest with)
    if (n0 + 4u <= N) {
        uint ar[RM];
        for (int r = 0; r < RM; r++)
            ar[r] = (a0 + rows[r] * K) >> 2;
#if NT && B8
        // a texel of each row holds two steps' values: fetched at the
        // first of them (k % 8 == 0; a K part starts at a multiple of 16)
        uvec4 t0, t1, t2, t3;
#ifdef GLU_OUT
        uvec4 s0, s1, s2, s3;
#endif
#endif
        for (uint k = kbeg; k < kend; k += 4u) {
#if NT
#if B8
            bool hi = (k & 4u) != 0u;
            if (!hi) {
                t0 = b_tex8(b0, n0, k), t1 = b_tex8(b0, n0 + 1u, k);
                t2 = b_tex8(b0, n0 + 2u, k), t3 = b_tex8(b0, n0 + 3u, k);
#ifdef GLU_OUT
                s0 = b_tex8(b0, N + n0, k), s1 = b_tex8(b0, N + n0 + 1u, k);
                s2 = b_tex8(b0, N + n0 + 2u, k), s3 = b_tex8(b0, N + n0 + 3u, k);
#endif
            }
            vec4 b0v = b_half(t0, hi), b1v = b_half(t1, hi), b2v = b_half(t2, hi),
                 b3v = b_half(t3, hi);
#ifdef GLU_OUT
            vec4 u0v = b_half(s0, hi), u1v = b_half(s1, hi), u2v = b_half(s2, hi),
                 u3v = b_half(s3, hi);
#endif
#else
            vec4 b0v = b_row4(b0, n0, k), b1v = b_row4(b0, n0 + 1u, k);
            vec4 b2v = b_row4(b0, n0 + 2u, k), b3v = b_row4(b0, n0 + 3u, k);
#ifdef GLU_OUT
            vec4 u0v = b_row4(b0, N + n0, k), u1v = b_row4(b0, N + n0 + 1u, k),
                 u2v = b_row4(b0, N + n0 + 2u, k), u3v = b_row4(b0, N + n0 + 3u, k);
#endif
#endif
            for (int r = 0; r < RM; r++) {
#ifdef GLU
                vec4 av = glc_glu4(A4(ar[r] + (k >> 2) + glc_glu_gate_shift(glc_p[P_GLU_DELTA])),
                                   A4(ar[r] + (k >> 2) + glc_glu_up_shift(glc_p[P_GLU_DELTA])));
#else
                vec4 av = A4(ar[r] + (k >> 2));
#endif
#ifdef NORM
                av = norm_load(nss[r], av, k);
#endif
                acc[r] += vec4(dot(av, b0v), dot(av, b1v), dot(av, b2v), dot(av, b3v));
#ifdef GLU_OUT
                accu[r] += vec4(dot(av, u0v), dot(av, u1v), dot(av, u2v), dot(av, u3v));
#endif
            }
#else
            uint bi = b0 + k * N + n0;
            vec4 bk0 = b_vec(bi), bk1 = b_vec(bi + N), bk2 = b_vec(bi + 2u * N),
                 bk3 = b_vec(bi + 3u * N);
            for (int r = 0; r < RM; r++) {
#ifdef GLU
                vec4 av = glc_glu4(A4(ar[r] + (k >> 2) + glc_glu_gate_shift(glc_p[P_GLU_DELTA])),
                                   A4(ar[r] + (k >> 2) + glc_glu_up_shift(glc_p[P_GLU_DELTA])));
#else
                vec4 av = A4(ar[r] + (k >> 2));
#endif
                acc[r] += av.x * bk0 + av.y * bk1 + av.z * bk2 + av.w * bk3;
            }
#endif
        }
    } else
#endif
    {
#if NT
    uint c[4];
    for (int j = 0; j < 4; j++)
        c[j] = min(n0 + uint(j), N - 1u);
    for (uint k = kbeg; k < kend; k += 4u) {
        vec4 b0v = b_run(b0, c[0], k, K), b1v = b_run(b0, c[1], k, K);
        vec4 b2v = b_run(b0, c[2], k, K), b3v = b_run(b0, c[3], k, K);
#ifdef GLU_OUT
        vec4 u0v = b_run(b0, N + c[0], k, K), u1v = b_run(b0, N + c[1], k, K);
        vec4 u2v = b_run(b0, N + c[2], k, K), u3v = b_run(b0, N + c[3], k, K);
#endif
        for (int r = 0; r < RM; r++) {
            vec4 av = a_vec(a0, rows[r], k);
#ifdef NORM
            av = norm_load(nss[r], av, k);
#endif
            acc[r] += vec4(dot(av, b0v), dot(av, b1v), dot(av, b2v), dot(av, b3v));
#ifdef GLU_OUT
            accu[r] += vec4(dot(av, u0v), dot(av, u1v), dot(av, u2v), dot(av, u3v));
#endif
        }
    }
#else
    for (uint k = kbeg; k < kend; k += 4u) {
        vec4 bk0 = b_run(b0, k, n0, N);
        vec4 bk1 = k + 1u < K ? b_run(b0, k + 1u, n0, N) : vec4(0.0);
        vec4 bk2 = k + 2u < K ? b_run(b0, k + 2u, n0, N) : vec4(0.0);
        vec4 bk3 = k + 3u < K ? b_run(b0, k + 3u, n0, N) : vec4(0.0);
        for (int r = 0; r < RM; r++) {
            vec4 av = a_vec(a0, rows[r], k);
            acc[r] += av.x * bk0 + av.y * bk1 + av.z * bk2 + av.w * bk3;
        }
    }
#endif
    }
    for (int r = 0; r < RM; r++) {
        uint row = m0 + uint(r);
#ifdef NORM
        float nscale = inversesqrt(nss[r] / float(K) + float(NORM_EPS));
        acc[r] *= nscale;
#ifdef GLU_OUT
        accu[r] *= nscale;
#endif
#endif
#ifdef GLU_OUT
        for (int j = 0; j < 4; j++)
            put_glu(o0, row, n0 + uint(j), acc[r][j], accu[r][j]);
#else
        put(o0, row, n0, acc[r].x);
        put(o0, row, n0 + 1u, acc[r].y);
        put(o0, row, n0 + 2u, acc[r].z);
        put(o0, row, n0 + 3u, acc[r].w);
#endif
    }
}

#endif
