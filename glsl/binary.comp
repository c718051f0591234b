// binary: out = a OP b elementwise, with numpy broadcasting.
// Each invocation makes two consecutive outputs (one 16-bit word).
// bindings: 0 a (read), 1 b (read), 2 out (written); all uint-backed floats
// params:   0 n (outputs), 1-3 out dims 1..3 of its 4-D shape,
//           4-7 a's element strides per out dim (0 where a broadcasts),
//           8-11 b's strides
// defines:  OP (the glc__op: GLC_OP_ADD, _SUB, _MUL, _DIV), TA, TB, TO (GLC_T_*),
//           BROADCAST (0: a, b, out share one shape and strides are unused),
//           VEC4 (llvmpipe: f32 operands of one shape, n a multiple of 4:
//           VEC4 consecutive vec4s an invocation, the form its JIT runs
//           fastest: bench_ops --only probe)
//           TEXEL (with VEC4: a and b read as RGBA32F texels, texture
//           units 0 and 1, GLC_BIND_TEXEL; out is then SSBO 0)
//           ACT_A: glc_act op applied to a first (the fused SwiGLU: silu(a) * b),
//           its param 12; UNROLL: pairs per invocation (a group covers LOCAL * UNROLL pairs)
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_BINARY
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;

#ifndef ACT_A
#define ACT_A 0
#endif
// the op on floats or vec4s
#if OP == GLC_OP_ADD
#define APPLY(x, y) ((x) + (y))
#elif OP == GLC_OP_SUB
#define APPLY(x, y) ((x) - (y))
#elif OP == GLC_OP_MUL
#define APPLY(x, y) ((x) * (y))
#else
#define APPLY(x, y) ((x) / (y))
#endif

#if defined(VEC4)
#ifdef TEXEL
layout(binding = 0) uniform highp samplerBuffer ta;
layout(binding = 1) uniform highp samplerBuffer tb;
layout(std430, binding = 0) writeonly buffer O { vec4 o[]; };
#define A_AT(i) texelFetch(ta, int(i))
#define B_AT(i) texelFetch(tb, int(i))
#else
layout(std430, binding = 0) readonly buffer A { vec4 a[]; };
layout(std430, binding = 1) readonly buffer B { vec4 b[]; };
layout(std430, binding = 2) writeonly buffer O { vec4 o[]; };
#define A_AT(i) a[i]
#define B_AT(i) b[i]
#endif

void main()
{
    uint n4 = glc_p[P_N] / 4u, i0 = glc_global_index() * uint(VEC4);
    if (glc_group_out_of_range())
        return;
    for (uint k = 0u; k < uint(VEC4); k++) {
        uint i = i0 + k;
        if (i >= n4)
            return;
        vec4 x = A_AT(i);
#if ACT_A
        float p = glc_pf(P_ACT_PARAM);
        x = vec4(glc_act(x.x, ACT_A, p), glc_act(x.y, ACT_A, p), glc_act(x.z, ACT_A, p),
                 glc_act(x.w, ACT_A, p));
#endif
        o[i] = APPLY(x, B_AT(i));
    }
}
#else
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) buffer O { uint o[]; };

float apply(float x, float y) { return APPLY(x, y); }

float at(uint i, bool from_a)
{
#if BROADCAST
    uint c3 = i % glc_p[P_DIM3], r = i / glc_p[P_DIM3];
    uint c2 = r % glc_p[P_DIM2];
    r /= glc_p[P_DIM2];
    uint c1 = r % glc_p[P_DIM1], c0 = r / glc_p[P_DIM1];
    uint k = from_a ? uint(P_A_STRIDES) : uint(P_B_STRIDES);
    uint j = c0 * glc_p[k] + c1 * glc_p[k + 1u] + c2 * glc_p[k + 2u] + c3 * glc_p[k + 3u];
#else
    uint j = i;
#endif
    return from_a ? glc_act(GLC_LOAD(a, TA, j), ACT_A, glc_pf(P_ACT_PARAM)) : GLC_LOAD(b, TB, j);
}

void main()
{
    uint n = glc_p[P_N];
    if (glc_group_out_of_range())
        return;
    // UNROLL pairs per invocation, a group's pairs contiguous
    uint first = glc_group_index() * uint(GLC_LOCAL_SIZE_X * UNROLL) + gl_LocalInvocationID.x;
    for (uint k = 0u; k < uint(UNROLL); k++) {
        uint i = (first + k * uint(GLC_LOCAL_SIZE_X)) * 2u;
        if (i >= n)
            return;
        bool has_hi = i + 1u < n;
        float lo = apply(at(i, true), at(i, false));
        float hi = has_hi ? apply(at(i + 1u, true), at(i + 1u, false)) : 0.0;
        GLC_STORE2(o, TO, i, lo, hi, has_hi)
    }
}
#endif
