// matmul_q: out = a x W^T (+ bias) with W [N, K] of GGML blocks (any
// type quant.glsl knows), or f32 / f16 (a dense matmul's mat-vec past matvec.comp's loop
// cap); the tile engine is matmul_q.glsl, the weights matmul_w.glsl.
// Also the fused Q/K/V projection (SEG) and a fused activation (ACT).
// bindings: 0 a, 1 w, 2 out, 3 bias (the plan binds a in its
//   place when the op has none; flag 1 says whether to add it), RES: 4 a
//   residual (out's shape, added last), NORM: its binding, the weight of
//   an rms_norm prologue (matmul_q.glsl)
// params: matmul_q.glsl's, 4 mtiles, 8 s1, 9 s12
//   (SEG: segment column bounds), 10, 11 where segments 1 and 2 start in
//   out (elements), 12 flags (1 add bias), 13 ACT's param; 7 as
//   matmul_q.glsl says
// defines: matmul_q.glsl's, WF (a GGML block GLC_T_*, _F32, _F16), where not 0: SEG
//   (out is three matrices: the fused Q/K/V projection), ACT (glc_act op
//   after the bias); GLU_OUT (matmul_q.glsl) takes ACT's param 13;
//   QKV_ROPE (qkv_rope.glsl: the rope epilogue, its params 8-11, 13-15,
//   its bindings after the others)

#define GLC_KP_MATMUL_Q
#include "kparams.glsl"

#ifndef ACT
#define ACT 0
#endif
#ifndef SEG
#define SEG 0
#endif
#define ACCUM 0

layout(std430, binding = 2) buffer O { float o[]; };
layout(std430, binding = 3) readonly buffer BIAS { float bias[]; };
#ifdef RES
layout(std430, binding = 4) readonly buffer RESIDUAL { float res[]; };
#endif

#ifdef QKV_ROPE
#include "qkv_rope.glsl"
#endif
#include "matmul_w.glsl"

void put(uint row, uint n, float v)
{
    uint N = glc_p[P_N];
    if ((glc_p[P_FLAGS] & 1u) != 0u)
        v += bias[n];
#if SEG
    // the fused Q/K/V projection: columns [0, s1), [s1, s12), [s12, N)
    // are three row-major matrices of out
    uint s1 = glc_p[P_S1], s12 = glc_p[P_S12];
    uint i = n < s1    ? row * s1 + n
             : n < s12 ? glc_p[P_SEG1] + row * (s12 - s1) + n - s1
                       : glc_p[P_SEG2] + row * (N - s12) + n - s12;
#else
    uint i = row * N + n;
#endif
#if ACT
    v = glc_act(v, ACT, glc_pf(P_ACT_PARAM));
#endif
#ifdef RES
    v = res[i] + v; // (never with SEG: i is row * N + n)
#endif
    o[i] = v;
}

#ifdef GLU_OUT
void put_glu(uint row, uint n, float g, float u)
{
    uint N = glc_p[P_N] / 2u; // out's columns; the up row of n is N + n
    if ((glc_p[P_FLAGS] & 1u) != 0u) {
        g += bias[n];
        u += bias[N + n];
    }
    o[row * N + n] = glc_glu_out(g, u, glc_pf(P_ACT_PARAM));
}
#endif

void do_tile(uint tile, uint lane, uint step)
{
    dense_tile(tile, lane, step);
}
