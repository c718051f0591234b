// unary: out = f(x) elementwise; two consecutive outputs per invocation.
// bindings: 0 x (read), 1 out (written); uint-backed floats
// params:   0 n, 1 param (float bits: the cap of SOFTCAP, the a of SCALE),
//           2 b of SCALE (float bits)
// defines:  OP (a glc_unary_op, GLC_UNARY_*, or GLC_UNARY_AFFINE for the
//           scale op: x*a+b), TX, TO (GLC_T_*)
//           UNROLL: pairs per invocation (a group covers LOCAL * UNROLL pairs);
//           VEC4 (llvmpipe: f32 x and out, n a multiple of 4: VEC4
//           consecutive vec4s an invocation, as binary.comp); TEXEL (with
//           VEC4: x read as RGBA32F texels, texture unit 0; out is SSBO 0)
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_UNARY
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
#if defined(VEC4) && defined(TEXEL)
layout(binding = 0) uniform highp samplerBuffer tx;
layout(std430, binding = 0) writeonly buffer O { vec4 o[]; };
#define X_AT(i) texelFetch(tx, int(i))
#elif defined(VEC4)
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) writeonly buffer O { vec4 o[]; };
#define X_AT(i) x[i]
#else
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) buffer O { uint o[]; };
#endif

float f(float v)
{
#if OP != GLC_UNARY_AFFINE
    return glc_act(v, OP, glc_pf(P_A));
#else
    return v * glc_pf(P_A) + glc_pf(P_B);
#endif
}

#if defined(VEC4)
void main()
{
    uint n4 = glc_p[P_N] / 4u, i0 = glc_global_index() * uint(VEC4);
    if (glc_group_out_of_range())
        return;
    for (uint k = 0u; k < uint(VEC4); k++) {
        uint i = i0 + k;
        if (i >= n4)
            return;
        vec4 v = X_AT(i);
        o[i] = vec4(f(v.x), f(v.y), f(v.z), f(v.w));
    }
}
#else
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
        float lo = f(GLC_LOAD(x, TX, i));
        float hi = has_hi ? f(GLC_LOAD(x, TX, i + 1u)) : 0.0;
        GLC_STORE2(o, TO, i, lo, hi, has_hi)
    }
}
#endif
