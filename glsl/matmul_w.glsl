// matmul_w.glsl: the weights of matmul_q.comp and matmul_expert.comp for
// the tile engine (matmul_q.glsl, included here): W at binding 1 as f32 or
// f16 values (AVEC: whole vec4s a row) or GGML blocks (quant.glsl), WF its
// GLC_T_*. The including kernel declares its other buffers first.

#ifndef AVEC
#define AVEC 1
#endif
#define QUANT (WF == GLC_T_Q8_0 || WF == GLC_T_Q4_0)
#if WF == GLC_T_Q8_0
#define NW 8
#elif WF == GLC_T_Q4_0
#define NW 4
#else
#define NW 1
#endif
#define SCALED 1
#define NEED_ASUM 0
#define KTAIL (!QUANT)
#define HAS_W 1

#if WF == GLC_T_F32 && AVEC
layout(std430, binding = 1) readonly buffer W { vec4 w4[]; };
#elif WF == GLC_T_F16 && AVEC
layout(std430, binding = 1) readonly buffer W { uvec2 w2[]; };
#else
layout(std430, binding = 1) readonly buffer W { uint w1[]; };
#endif

#include "matmul_q.glsl"

#if QUANT
#include "quant.glsl"

void load_chunk(int r, uint w, uint c)
{
    uint o8 = w * glc_p[P_WSTRIDE] + c * GLC_Q_BLOCK_BYTES(WF);
    // blocks sit on 2-byte boundaries: NW + 1 words cover one
    uint i0 = o8 >> 2;
    bool odd = (o8 & 2u) != 0u;
    uint wd[NW + 1];
    for (int j = 0; j <= NW; j++)
        wd[j] = w1[i0 + uint(j)];
    wsc[r] = glc_q_scale(wd[0], odd);
    for (int j = 0; j < NW; j++)
        raw[r][j] = odd ? wd[j + 1] : glc_q_word(wd[j], wd[j + 1], true);
}

vec4 weights(int r, int q, uint k)
{
#if WF == GLC_T_Q8_0
    return glc_exact_float4(glc_q8_0_lanes(raw[r][q]), float(GLC_Q8_0_BIAS));
#else
    return glc_exact_float4(glc_q4_0_lanes(raw[r][q & 3], q < 4 ? 0u : 4u), float(GLC_Q4_0_BIAS));
#endif
}

#else

#if !AVEC
float w_at(uint i)
{
#if WF == GLC_T_F32
    return uintBitsToFloat(w1[i]);
#else
    return glc_half_of(w1[i >> 1], i);
#endif
}
#endif

vec4 weights(int r, int q, uint k)
{
#if AVEC && WF == GLC_T_F32
    return w4[wrow[r] * glc_p[P_WSTRIDE] + (k >> 2)];
#elif AVEC
    uvec2 u = w2[wrow[r] * glc_p[P_WSTRIDE] + (k >> 2)];
    return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y));
#else
    uint K = glc_p[P_K], i = wrow[r] * K + k;
    return vec4(w_at(i), k + 1u < K ? w_at(i + 1u) : 0.0, k + 2u < K ? w_at(i + 2u) : 0.0,
                k + 3u < K ? w_at(i + 3u) : 0.0);
#endif
}
#endif
