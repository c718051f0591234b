// matmul_w.glsl: the weights of matmul_q.comp and matmul_expert.comp for
// the tile engine (matmul_q.glsl, included here): W at binding 1 as f32 or
// f16 values (AVEC: whole vec4s a row) or GGML blocks (quant.glsl), WF its
// GLC_T_*. The including kernel declares its other buffers first.
// A chunk of K (32 values) of GGML blocks is a whole block (32-value
// types) or a sub-block (K types: chunk c is sub-block c % 8 of block c /
// 8). Q8_0 and Q4_0 keep their raw words (8 or 4) and split the lanes in
// weights(); the other types are decoded into 8 words of lanes when the
// chunk is loaded (quant.glsl's glc_q_chunk), with the chunk's scale in
// wsc and its offset (the min: Q4_K, Q5_K, Q4_1, Q5_1) in wbi, times the
// chunk's sum of a (NEED_ASUM). Q6_K has two scales a chunk: wsc holds d,
// wsub the two int8 scales, and weights() multiplies them in (exact
// integers still).
// WTEX (matmul_q's row variant on llvmpipe): the texture unit through
// which W's words are read as RGBA32UI texels instead of its SSBO.

#ifndef AVEC
#define AVEC 1
#endif
#define QUANT (WF >= GLC_T_Q8_0)
#if QUANT
#define GLC_QT WF
#endif
#if WF == GLC_T_Q4_0
#define NW 4
#elif QUANT
#define NW 8
#else
#define NW 1
#endif
#define SCALED 1
#if WF == GLC_T_Q4_K || WF == GLC_T_Q5_K || WF == GLC_T_Q4_1 || WF == GLC_T_Q5_1
#define NEED_ASUM 1
#else
#define NEED_ASUM 0
#endif
#define KTAIL (!QUANT)
#define HAS_W 1

#if WF == GLC_T_F32 && AVEC
layout(std430, binding = 1) readonly buffer W { vec4 w4[]; };
#elif WF == GLC_T_F16 && AVEC
layout(std430, binding = 1) readonly buffer W { uvec2 w2[]; };
#else
layout(std430, binding = 1) readonly buffer W { uint w1[]; };
#endif
#ifdef WTEX
// W read as RGBA32UI texels (texture unit WTEX, GLC_BIND_TEXEL_UINT; its
// SSBO binding 1 stays bound, unread): llvmpipe's texel fetch is a gather,
// its SSBO load a loop over the lanes (the row variant there)
layout(binding = WTEX) uniform highp usamplerBuffer twt;
#define W1(i) glc_word(texelFetch(twt, int((i) >> 2u)), (i) & 3u)
#define W2(i) w2_of(texelFetch(twt, int((i) >> 1u)), (i) & 1u)
#define W4(i) uintBitsToFloat(texelFetch(twt, int(i)))
uvec2 w2_of(uvec4 t, uint h)
{
    return h == 0u ? t.xy : t.zw;
}
#else
#define W1(i) w1[i]
#define W2(i) w2[i]
#define W4(i) w4[i]
#endif

#include "matmul_q.glsl"

#if QUANT
uint glc_qw(uint i)
{
    return W1(i);
}
#include "quant.glsl"

#if WF == GLC_T_Q6_K
vec2 wsub[RN]; // the int8 scales of a chunk's two halves
#endif

void load_chunk(int r, uint w, uint c)
{
#if WF == GLC_T_Q8_0 || WF == GLC_T_Q4_0
    uint o8 = w * glc_p[P_WSTRIDE] + c * GLC_Q_BYTES;
    // blocks sit on 2-byte boundaries: NW + 1 words cover one
    uint i0 = o8 >> 2;
    bool odd = (o8 & 2u) != 0u;
    uint wd[NW + 1];
#ifdef WTEX
    // the NW + 1 words from the 2 (Q4_0) or 3 (Q8_0) texels that hold them
    uvec4 t0 = texelFetch(twt, int(i0 >> 2u)), t1 = texelFetch(twt, int(i0 >> 2u) + 1);
#if NW > 4
    uvec4 t2 = texelFetch(twt, int(i0 >> 2u) + 2);
#endif
    for (int j = 0; j <= NW; j++) {
        uint q = (i0 & 3u) + uint(j);
#if NW > 4
        wd[j] = q < 4u ? glc_word(t0, q) : q < 8u ? glc_word(t1, q - 4u) : glc_word(t2, q - 8u);
#else
        wd[j] = q < 4u ? glc_word(t0, q) : glc_word(t1, q - 4u);
#endif
    }
#else
    for (int j = 0; j <= NW; j++)
        wd[j] = w1[i0 + uint(j)];
#endif
    wsc[r] = glc_q_scale(wd[0], odd);
    for (int j = 0; j < NW; j++)
        raw[r][j] = odd ? wd[j + 1] : glc_q_word(wd[j], wd[j + 1], true);
#else
    uint blk = w * glc_p[P_WSTRIDE] + (c / GLC_Q_CHUNKS) * GLC_Q_BYTES, j = c % GLC_Q_CHUNKS;
    glc_q_chunk(blk, j, raw[r]);
#if WF == GLC_T_Q6_K
    wsc[r] = glc_q_f16(blk + 208u);
    wsub[r] = vec2(float(glc_q6_k_scale(blk, j, 0u)), float(glc_q6_k_scale(blk, j, 1u)));
#else
    vec2 so = glc_q_scale_offset(blk, j, 0u);
    wsc[r] = so.x;
    wbi[r] = so.y;
#endif
#endif
}

vec4 weights(int r, int q, uint k)
{
#if WF == GLC_T_Q8_0
    return glc_exact_float4(glc_q8_0_lanes(raw[r][q]), float(GLC_Q_BIAS));
#elif WF == GLC_T_Q4_0
    return glc_exact_float4(glc_q4_0_lanes(raw[r][q & 3], q < 4 ? 0u : 4u), float(GLC_Q_BIAS));
#elif WF == GLC_T_Q6_K
    return glc_exact_float4(glc_q_lanes(raw[r][q]), float(GLC_Q_BIAS)) * wsub[r][q >> 2];
#else
    return glc_exact_float4(glc_q_lanes(raw[r][q]), float(GLC_Q_BIAS));
#endif
}

#else

#if !AVEC
float w_at(uint i)
{
#if WF == GLC_T_F32
    return uintBitsToFloat(W1(i));
#else
    return glc_half_of(W1(i >> 1), i);
#endif
}
#endif

vec4 weights(int r, int q, uint k)
{
#if AVEC && WF == GLC_T_F32
    return W4(wrow[r] * glc_p[P_WSTRIDE] + (k >> 2));
#elif AVEC
    return glc_half4(W2(wrow[r] * glc_p[P_WSTRIDE] + (k >> 2)));
#else
    uint K = glc_p[P_K], i = wrow[r] * K + k;
    return vec4(w_at(i), k + 1u < K ? w_at(i + 1u) : 0.0, k + 2u < K ? w_at(i + 2u) : 0.0,
                k + 3u < K ? w_at(i + 3u) : 0.0);
#endif
}
#endif
