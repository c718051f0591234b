// common.glsl: included after the prelude in every kernel (built-in or
// user): the dispatch's parameters and grid, the generated C enum values
// (enums.glsl), float storage (storage.glsl) and the activations.
// glc_p: the dispatch's parameters (floats passed as their bits); built-in
// kernels read them by name, glc_p[P_NAME] (their slots: src/core/kparams.h,
// generated into kparams.glsl).
// Grids past the per-dimension group limit are folded into 2-D or 3-D;
// glc_group_index() undoes the folding and glc_total_groups says how many
// groups the caller asked for, so surplus groups of the folded grid exit.

uniform uint glc_p[GLC_MAX_PARAMS];
uniform uint glc_total_groups;

uint glc_group_index(void)
{
    return gl_WorkGroupID.x +
           gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
}

uint glc_global_index(void)
{
    return glc_group_index() * uint(GLC_LOCAL_SIZE_X) + gl_LocalInvocationID.x;
}

bool glc_group_out_of_range(void)
{
    return glc_group_index() >= glc_total_groups;
}

float glc_pf(int i)
{
    return uintBitsToFloat(glc_p[i]);
}

#include "enums.glsl"
#include "storage.glsl"

// ---- activations ----
// glc_act(v, op, param): op a glc_unary_op (GLC_UNARY_*, enums.glsl:
// gelu, tanh approximation; gelu, erf; silu; relu; exp; tanh; softcap:
// param * tanh(v / param)); anything else returns v. Callers pass a
// compile-time constant, so the choice folds away. The unary kernel and
// the fused epilogues (matmul, binary) share it, so a fused result is the
// unfused one bit for bit.

// tanh that cannot overflow to NaN: tanh(10) is 1 in f32 already.
float glc_safe_tanh(float v)
{
    return tanh(clamp(v, -10.0, 10.0));
}

// erf, Abramowitz and Stegun 7.1.26 (absolute error < 1.5e-7).
float glc_erf(float v)
{
    float s = sign(v), a = abs(v);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) *
                         t + 0.254829592) * t * exp(-a * a);
    return s * y;
}

float glc_act(float v, int op, float param)
{
    if (op == GLC_UNARY_GELU)
        return 0.5 * v * (1.0 + glc_safe_tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    if (op == GLC_UNARY_GELU_ERF)
        return 0.5 * v * (1.0 + glc_erf(v * 0.7071067811865476));
    if (op == GLC_UNARY_SILU)
        return v / (1.0 + exp(-v));
    if (op == GLC_UNARY_RELU)
        return max(v, 0.0);
    if (op == GLC_UNARY_EXP)
        return exp(v);
    if (op == GLC_UNARY_TANH)
        return glc_safe_tanh(v);
    if (op == GLC_UNARY_SOFTCAP)
        return param * glc_safe_tanh(v / param);
    return v;
}

// Unsigned integers below 2^23 minus offset, as floats, exactly: the
// exponent trick (uintBitsToFloat(0x4B000000 | n) == 2^23 + n) in place of
// an int -> float conversion (the quantized weights' decoding).
vec4 glc_exact_float4(uvec4 b, float offset)
{
    return uintBitsToFloat(b | 0x4B000000u) - (8388608.0 + offset);
}

#ifdef GLU_OUT
// The SwiGLU epilogue of a matmul whose weight rows are two halves: the
// output from the sums (biases added) of a row of the first half, f, and
// of its partner in the second, s: act(gate) * up, the gate the first half
// unless GLU_UP_FIRST (GLU_OUT names the glc_act op).
float glc_glu_out(float f, float s, float param)
{
#ifdef GLU_UP_FIRST
    return glc_act(s, GLU_OUT, param) * f;
#else
    return glc_act(f, GLU_OUT, param) * s;
#endif
}
#endif

// The gated input of a fused SwiGLU-style matmul: act(gate) * up, per
// component (GLU names the glc_act op; compile-time).
#ifdef GLU
// The two halves sit `delta` elements apart in one binding that starts at
// the first of them: the gate's and the up half's vec4 shifts.
uint glc_glu_gate_shift(uint delta)
{
    return int(delta) < 0 ? uint(-int(delta)) >> 2 : 0u;
}

uint glc_glu_up_shift(uint delta)
{
    return int(delta) < 0 ? 0u : delta >> 2;
}

vec4 glc_glu4(vec4 g, vec4 u)
{
    return vec4(glc_act(g.x, GLU, 0.0), glc_act(g.y, GLU, 0.0), glc_act(g.z, GLU, 0.0),
                glc_act(g.w, GLU, 0.0)) * u;
}
#endif
