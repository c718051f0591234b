// matvec: out = a x W^T (+ bias, activation) for few rows of a (decode),
// W [N, K] f32, f16 or bf16, read exactly once and coalesced.
// A subgroup owns RN rows of W. Per step its lanes read UNROLL consecutive
// 16-byte words of each row, lane-interleaved (a subgroup reads 512
// contiguous bytes per load), so every load is fully coalesced and each
// lane keeps RN * UNROLL loads in flight; the partial dot products are
// summed with subgroupAdd. a (CM rows, f32) is read through the cache.
// bindings: 0 a (vec4[]), 1 w (uvec4[]), 2 out (float[]), 3 bias (float[];
//   a stands in when there is none), RES: 4 residual (float[], out's shape,
//   added last)
// params: 0 M (rows of a, <= CM), 1 N, 2 K, 3 words (uvec4) per row of W,
//   4 flags (1: add bias), 5 activation param, SEG: 6 s1, 7 s12, 8, 9
//   where segments 1 and 2 start in out (elements; see matmul.comp);
//   GLU: 10 the up half's offset from the gate half (elements, signed; the
//   binding starts at the first of the two)
// defines: TW (GLC_T_*), CM, RN, UNROLL, SLOTS (subgroups per group), ACT,
//   SEG, RES (a residual added last), GLU_OUT (the fused SwiGLU epilogue, a
//   glc_act op: W's rows are gate | up halves, N in all; a subgroup reads
//   its RN gate rows and the up rows N / 2 further, and writes
//   act(gate + bias) * (up + bias) to out [M, N / 2]), NORM (the binding of an rms_norm
//   weight, vec4[] [K]: each row of a is read as rms_norm(row, weight), the
//   norm's eps NORM_EPS: a subgroup reads all of K for its rows anyway, so
//   it sums the squares of what it loads, at no extra read, barrier or
//   shared memory), GLU (the fused SwiGLU input: a row is act(gate) * up)
// local size: GLC_LOCAL_SIZE_X = SLOTS x the subgroup size

#define GLC_KP_MATVEC
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;

#ifndef ACT
#define ACT 0
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

void main()
{
    if (glc_group_out_of_range())
        return;
    uint M = glc_p[P_M], words = glc_p[P_WORDS];
    uint N = glc_p[P_N] / uint(RW / RN); // output columns
    uint lane = gl_SubgroupInvocationID, S = gl_SubgroupSize;
    for (uint slot = gl_SubgroupID; slot < uint(SLOTS); slot += gl_NumSubgroups) {
        uint n0 = (glc_group_index() * uint(SLOTS) + slot) * uint(RN);
        if (n0 >= N)
            break;
        uint rows[RW]; // GLU_OUT: the gate rows, then the up rows N further
        for (int r = 0; r < RW; r++)
            rows[r] = (min(n0 + uint(r % RN), N - 1u) + uint(r / RN) * N) * words;
        float acc[RW][CM];
        for (int r = 0; r < RW; r++)
            for (int m = 0; m < CM; m++)
                acc[r][m] = 0.0;
#ifdef NORM
        float ssq[CM]; // the rows' sums of squares (the norm prologue)
        for (int m = 0; m < CM; m++)
            ssq[m] = 0.0;
#endif
        for (uint w0 = lane; w0 < words; w0 += S * uint(UNROLL)) {
            uvec4 wv[RW][UNROLL];
            for (int u = 0; u < UNROLL; u++) {
                uint w = w0 + uint(u) * S;
                for (int r = 0; r < RW; r++)
                    wv[r][u] = w < words ? w4[rows[r] + w] : uvec4(0u);
            }
            for (int u = 0; u < UNROLL; u++) {
                uint w = w0 + uint(u) * S;
                if (w >= words)
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
#ifdef NORM
        float nscale[CM]; // 1 / rms of each row
        for (int m = 0; m < CM; m++)
            nscale[m] = inversesqrt(subgroupAdd(ssq[m]) / float(glc_p[P_K]) + float(NORM_EPS));
#endif
        for (int r = 0; r < RN; r++)
            for (int m = 0; m < CM; m++) {
                float v = subgroupAdd(acc[r][m]);
#ifdef GLU_OUT
                float up = subgroupAdd(acc[RN + r][m]);
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
}
