// matvec: out = a x W^T (+ bias, activation) for few rows of a (decode),
// W [N, K] f32, f16 or bf16, read exactly once and coalesced.
// A subgroup owns RN rows of W. Per step its lanes read UNROLL consecutive
// 16-byte words of each row, lane-interleaved (a subgroup reads 512
// contiguous bytes per load), so every load is fully coalesced and each
// lane keeps RN * UNROLL loads in flight; the partial dot products are
// summed with subgroupAdd. a (CM rows, f32) is read through the cache.
// LK (one row of a, the decode): the lanes of a group split K instead, a
// lane holding its values of a in registers while it reads each of the
// group's rows (lanes_k).
// bindings: 0 a (vec4[]), 1 w (uvec4[]), 2 out (float[]), 3 bias (float[];
//   a stands in when there is none), RES: 4 residual (float[], out's shape,
//   added last)
// params: 0 M (rows of a, <= CM), 1 N, 2 K, 3 words (uvec4) per row of W,
//   4 flags (1: add bias), 5 activation param, SEG: 6 s1, 7 s12, 8, 9
//   where segments 1 and 2 start in out (elements; see matmul.comp);
//   GLU: 10 the up half's offset from the gate half (elements, signed; the
//   binding starts at the first of the two)
// defines: TW (GLC_T_*), CM, RN, UNROLL, SLOTS (row slots per group), KS
//   (subgroups per slot, each summing one of KS runs of K; default 1), LK
//   (CM 1: the group's lanes across K, LK words of each row a lane, one
//   slot of RN rows a group: lanes_k; LK_SG 1: with subgroup sums), VSG
//   (not LK, a device without subgroup sums: subgroup.glsl's emulated
//   subgroup of VSG lanes), ACT,
//   SEG, RES (a residual added last), GLU_OUT (the fused SwiGLU epilogue, a
//   glc_act op: W's rows are gate | up halves, N in all; a subgroup reads
//   its RN gate rows and the up rows N / 2 further, and writes
//   act(gate + bias) * (up + bias) to out [M, N / 2]), NORM (the binding of an rms_norm
//   weight, vec4[] [K]: each row of a is read as rms_norm(row, weight), the
//   norm's eps NORM_EPS: a subgroup reads all of K for its rows anyway, so
//   it sums the squares of what it loads, at no extra read, barrier or
//   shared memory), GLU (the fused SwiGLU input: a row is act(gate) * up),
//   QKV_ROPE (the rope epilogue, CM 1, RN 2: columns q | k | v, a slot a
//   pair of columns that rotate together (rope_cols); out gets q rotated,
//   k and v as they are, the k cache row pos k rotated, the v cache's v;
//   with NEOX, HAS_FF, TKC, TVC, and the bindings ROPE_POS, ROPE_FF,
//   ROPE_KC, ROPE_VC)
// local size: GLC_LOCAL_SIZE_X = SLOTS x KS x the subgroup size (VSG: the
//   emulated one's; LK: any multiple of it)

#define GLC_KP_MATVEC
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;

#ifndef ACT
#define ACT 0
#endif
#ifndef KS
#define KS 1
#endif
#ifdef GLU_OUT
#define RW (2 * RN) // weight rows a subgroup reads
#else
#define RW RN
#endif

layout(std430, binding = 0) readonly buffer A { vec4 a4[]; };
layout(std430, binding = 1) readonly buffer W { uvec4 w4[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(std430, binding = 3) readonly buffer BIAS { float bias[]; };
#ifdef RES
layout(std430, binding = 4) readonly buffer RESIDUAL { float res[]; };
#endif
#ifdef NORM
layout(std430, binding = NORM) readonly buffer NORMW { vec4 nw4[]; };
#endif

// elements per 16-byte word
#if TW == GLC_T_F32
#define EPW 4u
#else
#define EPW 8u
#endif

// a's vec4 i (with GLU: the gate's, times act, times the up part's)
vec4 a_at(uint i)
{
#ifdef GLU
    return glc_glu4(a4[i + glc_glu_gate_shift(glc_p[P_GLU_DELTA])], a4[i + glc_glu_up_shift(glc_p[P_GLU_DELTA])]);
#else
    return a4[i];
#endif
}

// The dot product of weight word w with a's values a0 (a1: the next four
// for 16-bit weights)
float dot_word(uvec4 w, vec4 a0, vec4 a1)
{
#if TW == GLC_T_F32
    return dot(uintBitsToFloat(w), a0);
#elif TW == GLC_T_F16
    return dot(vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y)), a0) +
           dot(vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w)), a1);
#else
    vec4 lo = uintBitsToFloat(uvec4(w.x << 16, w.x & 0xffff0000u, w.y << 16, w.y & 0xffff0000u));
    vec4 hi = uintBitsToFloat(uvec4(w.z << 16, w.z & 0xffff0000u, w.w << 16, w.w & 0xffff0000u));
    return dot(lo, a0) + dot(hi, a1);
#endif
}

#ifdef QKV_ROPE
#include "qkv_rope.glsl"
#endif

// Weight row r of the slot at row n0 (N its output columns; a slot past
// them: the last): RN consecutive rows, with GLU_OUT their up rows N
// further, with QKV_ROPE the slot's pair of columns
uint w_row(uint n0, int r, uint N)
{
#ifdef QKV_ROPE
    uvec2 c = rope_cols(min(n0, N - 2u));
    return r == 0 ? c.x : c.y;
#else
    return min(n0 + uint(r % RN), N - 1u) + uint(r / RN) * N;
#endif
}

void put(uint row, uint col, float v)
{
    uint N = glc_p[P_N];
    if ((glc_p[P_FLAGS] & 1u) != 0u)
        v += bias[col];
    v = glc_act(v, ACT, glc_pf(P_ACT_PARAM));
#ifdef RES
    v = res[row * N + col] + v;
#endif
#ifdef SEG
    uint s1 = glc_p[P_S1], s12 = glc_p[P_S12];
    if (col < s1)
        o[row * s1 + col] = v;
    else if (col < s12)
        o[glc_p[P_SEG1] + row * (s12 - s1) + col - s1] = v;
    else
        o[glc_p[P_SEG2] + row * (N - s12) + col - s12] = v;
#else
    o[row * N + col] = v;
#endif
}

// A slot's sums, reduced over its subgroup: the products of its weight
// rows (GLU_OUT: gates, then ups) and the rows of a, and with NORM the
// rows' sums of squares
float acc[RW][CM];
#ifdef NORM
float ssq[CM];
#endif

#ifndef LK
// A slot's subgroup (subgroup.glsl; VSG: emulated, one slot each, a slot
// past N included: emit stores nothing there)
#include "subgroup.glsl"

// The sums of the slot at weight row n0 over words [wb, we) of K
void partial(uint n0, uint wb, uint we, uint lane, uint S)
{
    uint N = glc_p[P_N] / uint(RW / RN), M = glc_p[P_M], words = glc_p[P_WORDS];
    uint rows[RW]; // GLU_OUT: the gate rows, then the up rows N further
    for (int r = 0; r < RW; r++)
        rows[r] = w_row(n0, r, N) * words;
    for (int r = 0; r < RW; r++)
        for (int m = 0; m < CM; m++)
            acc[r][m] = 0.0;
#ifdef NORM
    for (int m = 0; m < CM; m++)
        ssq[m] = 0.0;
#endif
    for (uint w0 = wb + lane; w0 < we; w0 += S * uint(UNROLL)) {
        uvec4 wv[RW][UNROLL];
        for (int u = 0; u < UNROLL; u++) {
            uint w = w0 + uint(u) * S;
            for (int r = 0; r < RW; r++)
                wv[r][u] = w < we ? w4[rows[r] + w] : uvec4(0u);
        }
        for (int u = 0; u < UNROLL; u++) {
            uint w = w0 + uint(u) * S;
            if (w >= we)
                break;
            for (int m = 0; m < CM; m++) {
                uint base = (min(uint(m), M - 1u) * glc_p[P_K] + w * EPW) >> 2; // a's vec4
                vec4 a0 = a_at(base), a1 = vec4(0.0);
#if TW != GLC_T_F32
                a1 = a_at(base + 1u);
#endif
#ifdef NORM
                ssq[m] += dot(a0, a0) + dot(a1, a1);
                a0 *= nw4[(w * EPW) >> 2];
#if TW != GLC_T_F32
                a1 *= nw4[((w * EPW) >> 2) + 1u];
#endif
#endif
                for (int r = 0; r < RW; r++)
                    acc[r][m] += dot_word(wv[r][u], a0, a1);
            }
        }
    }
    for (int r = 0; r < RW; r++)
        for (int m = 0; m < CM; m++)
            acc[r][m] = sg_add(acc[r][m]);
#ifdef NORM
    for (int m = 0; m < CM; m++)
        ssq[m] = sg_add(ssq[m]);
#endif
}

#endif

// Stores the slot at weight row n0 from its sums
void emit(uint n0, uint lane, uint S)
{
    uint N = glc_p[P_N] / uint(RW / RN), M = glc_p[P_M];
#ifdef NORM
    float nscale[CM]; // 1 / rms of each row
    for (int m = 0; m < CM; m++)
        nscale[m] = inversesqrt(ssq[m] / float(glc_p[P_K]) + float(NORM_EPS));
#endif
#ifdef QKV_ROPE
    if (lane == 0u && n0 < N) { // (CM 1, RN 2)
        float v0 = acc[0][0], v1 = acc[1][0];
#ifdef NORM
        v0 *= nscale[0];
        v1 *= nscale[0];
#endif
        rope_put(rope_cols(n0), v0, v1);
    }
    return;
#endif
    for (int r = 0; r < RN; r++)
        for (int m = 0; m < CM; m++) {
            float v = acc[r][m];
#ifdef GLU_OUT
            float up = acc[RN + r][m];
#endif
#ifdef NORM
            v *= nscale[m];
#ifdef GLU_OUT
            up *= nscale[m];
#endif
#endif
            uint n = n0 + uint(r);
            if (lane == uint(r * CM + m) % S && n < N && uint(m) < M) {
#ifdef GLU_OUT
                if ((glc_p[P_FLAGS] & 1u) != 0u) {
                    v += bias[n];
                    up += bias[N + n];
                }
                o[uint(m) * N + n] = glc_glu_out(v, up, glc_pf(P_ACT_PARAM));
#else
                put(uint(m), n, v);
#endif
            }
        }
}

#ifdef LK
// Lanes across K (CM 1, one slot of RN rows a group): lane l of the group
// owns words l, l + G, ... (LK of them, G the local size) of every row. It
// reads a's values for them once (normed, gated) into registers and then
// streams the slot's RW rows through them: the group reads each row as G
// contiguous 16-byte words, and a is read once a group instead of once a
// row. The lanes' sums meet through subgroupAdd, then lk_sum after one
// barrier (slot 0's subgroup stores). Without LK_SG (a device without
// subgroup sums: the tests on llvmpipe, GLC_MATMUL=matvec) every lane puts
// its sums in lk_sum and the group's first lanes store.
#define LG GLC_LOCAL_SIZE_X
#ifdef NORM
#define LK_NS (RW + 1) // sums a lane part: its rows', and with NORM the sum of squares
#else
#define LK_NS RW
#endif
#if LK_SG
shared float lk_sum[(LG / 4) * (RW + 1)]; // a subgroup's sums each (4: the least subgroup size)
#else
shared float lk_sum[LG * (RW + 1)]; // a lane's sums each
#endif

// Puts sum i (< RW + 1) of this lane's part in lk_sum
void lk_put(uint i, float v)
{
#if LK_SG
    v = subgroupAdd(v);
    if (subgroupElect())
        lk_sum[gl_SubgroupID * uint(RW + 1) + i] = v;
#else
    lk_sum[gl_LocalInvocationID.x * uint(RW + 1) + i] = v;
#endif
}

void lanes_k()
{
    uint N = glc_p[P_N] / uint(RW / RN), words = glc_p[P_WORDS];
    uint l = gl_LocalInvocationID.x, n0 = glc_group_index() * uint(RN);
    vec4 a0[LK], a1[LK];
    float ss = 0.0;
    for (int j = 0; j < LK; j++) {
        uint w = l + uint(j * LG);
        a0[j] = vec4(0.0);
        a1[j] = vec4(0.0);
        if (w >= words)
            continue;
        uint base = (w * EPW) >> 2;
        a0[j] = a_at(base);
#if TW != GLC_T_F32
        a1[j] = a_at(base + 1u);
#endif
#ifdef NORM
        ss += dot(a0[j], a0[j]) + dot(a1[j], a1[j]);
        a0[j] *= nw4[base];
#if TW != GLC_T_F32
        a1[j] *= nw4[base + 1u];
#endif
#endif
    }
    uint rows[RW];
    for (int r = 0; r < RW; r++)
        rows[r] = w_row(n0, r, N) * words;
    uvec4 wv[RW][LK];
    for (int j = 0; j < LK; j++) {
        uint w = l + uint(j * LG);
        for (int r = 0; r < RW; r++)
            wv[r][j] = w < words ? w4[rows[r] + w] : uvec4(0u);
    }
    for (int r = 0; r < RW; r++) {
        float v = 0.0;
        for (int j = 0; j < LK; j++)
            v += dot_word(wv[r][j], a0[j], a1[j]);
        lk_put(uint(r), v);
    }
#ifdef NORM
    lk_put(uint(RW), ss);
#endif
    barrier();
#if LK_SG
    uint parts = gl_NumSubgroups, lane = gl_SubgroupInvocationID, S = gl_SubgroupSize;
    if (gl_SubgroupID != 0u || n0 >= N)
        return;
#else
    uint parts = uint(LG), lane = l, S = uint(LG);
    if (n0 >= N)
        return;
#endif
    for (int i = 0; i < LK_NS; i++) {
        float v = 0.0;
        for (uint g = 0u; g < parts; g++)
            v += lk_sum[g * uint(RW + 1) + uint(i)];
        if (i < RW)
            acc[i][0] = v;
#ifdef NORM
        else
            ssq[0] = v;
#endif
    }
    emit(n0, lane, S);
}
#endif

#if KS > 1
// K parts: KS subgroups share a slot, part p summing the p-th of KS runs
// of K (whole 512-byte strides of a subgroup's loads), so a product of
// few rows and long K (the decode's w2: 2048 rows of 8192) still has
// enough subgroups, and bytes in flight, to fill the GPU. A part leaves
// its sums in ks_sum (unit u = slot * KS + p); after the group's barrier
// the slot's subgroup adds them and stores.
#ifdef NORM
#define KS_N (RW * CM + CM)
#else
#define KS_N (RW * CM)
#endif
shared float ks_sum[SLOTS * KS * KS_N];
#endif

void main()
{
    if (glc_group_out_of_range())
        return;
#ifdef LK
    lanes_k();
#else
    uint N = glc_p[P_N] / uint(RW / RN); // output columns
    uint lane = SG_LANE, S = SG_SIZE, words = glc_p[P_WORDS];
#if KS > 1
    uint per = (words + uint(KS) * S - 1u) / (uint(KS) * S) * S; // words a part
    for (uint u = SG_ID; u < uint(SLOTS * KS); u += SG_COUNT) {
        uint n0 = (glc_group_index() * uint(SLOTS) + u / uint(KS)) * uint(RN);
#ifndef VSG
        if (n0 >= N)
            break;
#endif
        uint wb = (u % uint(KS)) * per;
        partial(n0, wb, min(words, wb + per), lane, S);
        if (SG_ELECT) {
            for (int r = 0; r < RW; r++)
                for (int m = 0; m < CM; m++)
                    ks_sum[u * uint(KS_N) + uint(r * CM + m)] = acc[r][m];
#ifdef NORM
            for (int m = 0; m < CM; m++)
                ks_sum[u * uint(KS_N) + uint(RW * CM + m)] = ssq[m];
#endif
        }
    }
    barrier();
    for (uint slot = SG_ID; slot < uint(SLOTS); slot += SG_COUNT) {
        uint n0 = (glc_group_index() * uint(SLOTS) + slot) * uint(RN);
        if (n0 >= N)
            break;
        for (int i = 0; i < KS_N; i++) {
            float v = 0.0;
            for (uint p = 0u; p < uint(KS); p++)
                v += ks_sum[(slot * uint(KS) + p) * uint(KS_N) + uint(i)];
            if (i < RW * CM)
                acc[i / CM][i % CM] = v;
#ifdef NORM
            else
                ssq[i - RW * CM] = v;
#endif
        }
        emit(n0, lane, S);
    }
#else
    for (uint slot = SG_ID; slot < uint(SLOTS); slot += SG_COUNT) {
        uint n0 = (glc_group_index() * uint(SLOTS) + slot) * uint(RN);
#ifndef VSG
        if (n0 >= N)
            break;
#endif
        partial(n0, 0u, words, lane, S);
        emit(n0, lane, S);
    }
#endif
#endif
}
