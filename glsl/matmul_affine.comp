// matmul_affine: out = a x W^T (+ bias) with W [N, K] of MLX affine
// groups (BITS 4 or 8 bits a value; per group of K a scale and a bias, f32
// or f16): w = scale * q + bias. The tile engine is matmul_q.glsl.
// On a device with fewer than 6 SSBO blocks a shader, two passes: PASS 1
// out = sum scale * (q . a), then PASS 2 out += sum bias * (sum of a over
// the group) (+ bias).
// bindings: 0 a, then PASS 0: 1 w (uvec4s), 2 out, 3 scales, 4 biases,
//   5 bias; PASS 1: 1 w, 2 out, 3 scales; PASS 2: 1 out, 2 biases, 3 bias
//   (the plan binds a in the bias's place when the op has none; flag 1
//   says whether to add it)
// params: matmul_q.glsl's, 4 mtiles, 8 scale groups per row, 9 chunks per
//   group, 12 flags: 1 add bias, 2 scales f16, 4 biases f16
// defines: matmul_q.glsl's, where not the default: BITS (4), PASS (0)

#define GLC_KP_MATMUL_AFFINE
#include "kparams.glsl"

#define WF GLC_T_AFFINE
#ifndef PASS
#define PASS 0
#endif
#ifndef BITS
#define BITS 4
#endif
#if BITS == 8
#define NW 8
#else
#define NW 4
#endif
#define HAS_W (PASS != 2)
#define HAS_SC (PASS != 2)
#define HAS_BI (PASS != 1)
#define HAS_BIAS (PASS != 1)
#define QUANT 1
#define SCALED HAS_SC
#define NEED_ASUM HAS_BI
#define KTAIL 0
#define ACCUM (PASS == 2)

#if HAS_W
layout(std430, binding = 1) readonly buffer W { uvec4 w4[]; };
layout(std430, binding = 2) buffer O { float o[]; };
layout(std430, binding = 3) readonly buffer SC { uint sc[]; };
#if HAS_BI
layout(std430, binding = 4) readonly buffer BI { uint bi[]; };
layout(std430, binding = 5) readonly buffer BIAS { float bias[]; };
#endif
#else
layout(std430, binding = 1) buffer O { float o[]; };
layout(std430, binding = 2) readonly buffer BI { uint bi[]; };
layout(std430, binding = 3) readonly buffer BIAS { float bias[]; };
#endif

#include "matmul_q.glsl"

void load_chunk(int r, uint w, uint c)
{
#if HAS_W
    uint base = w * glc_p[P_WSTRIDE] + c * uint(NW / 4);
    uvec4 v = w4[base];
    raw[r][0] = v.x;
    raw[r][1] = v.y;
    raw[r][2] = v.z;
    raw[r][3] = v.w;
#if NW == 8
    v = w4[base + 1u];
    raw[r][4] = v.x;
    raw[r][5] = v.y;
    raw[r][6] = v.z;
    raw[r][7] = v.w;
#endif
#endif
    uint g = w * glc_p[P_GROUPS] + c / glc_p[P_GROUP_CHUNKS];
#if HAS_SC
    wsc[r] = GLC_LOAD(sc, int(glc_p[P_FLAGS] >> 1) & 1, g);
#endif
#if HAS_BI
    wbi[r] = GLC_LOAD(bi, int(glc_p[P_FLAGS] >> 2) & 1, g);
#endif
}

vec4 weights(int r, int q, uint k)
{
#if BITS == 4
    uint s = uint(q & 1) * 16u;
    return glc_exact_float4((uvec4(raw[r][q >> 1]) >> uvec4(s, s + 4u, s + 8u, s + 12u)) & 0xFu, 0.0);
#else
    return glc_exact_float4((uvec4(raw[r][q]) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu, 0.0);
#endif
}

void put(uint row, uint n, float v)
{
    uint i = row * glc_p[P_N] + n;
#if HAS_BIAS
    if ((glc_p[P_FLAGS] & 1u) != 0u)
        v += bias[n];
#endif
#if ACCUM
    v += o[i];
#endif
    o[i] = v;
}

void do_tile(uint tile, uint lane, uint step)
{
    dense_tile(tile, lane, step);
}
