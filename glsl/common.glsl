// common.glsl: included after the prelude in every kernel.
// glc_p: the dispatch's parameters (floats passed as their bits).
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

// ---- storage dtypes ----
// Float tensors are bound as uint arrays whatever their dtype, so one
// declaration serves F32 (a word per element), F16 and BF16 (two per word,
// the lower index in the low half). T is a compile-time constant:
// GLC_T_F32, GLC_T_F16 or GLC_T_BF16; the compiler folds the choice.
#define GLC_T_F32 0
#define GLC_T_F16 1
#define GLC_T_BF16 2

float glc_half_of(uint w, uint i)
{
    vec2 v = unpackHalf2x16(w);
    return (i & 1u) == 0u ? v.x : v.y;
}

float glc_bf16_of(uint w, uint i)
{
    return uintBitsToFloat((i & 1u) == 0u ? (w << 16) : (w & 0xffff0000u));
}

// f32 -> bf16 bits, round to nearest even; NaN stays NaN.
uint glc_bf16_bits(float v)
{
    uint u = floatBitsToUint(v);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (u >> 16) | 0x40u;
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

uint glc_pack16(float lo, float hi, int t)
{
    return t == GLC_T_F16 ? packHalf2x16(vec2(lo, hi))
                          : (glc_bf16_bits(lo) | (glc_bf16_bits(hi) << 16));
}

#define GLC_LOAD(arr, t, i)                                      \
    ((t) == GLC_T_F32 ? uintBitsToFloat(arr[(i)])                \
     : (t) == GLC_T_F16 ? glc_half_of(arr[(i) >> 1], (i))        \
                        : glc_bf16_of(arr[(i) >> 1], (i)))

// Stores out[i] and out[i + 1] (i even); when only i is inside the tensor
// (has_hi false) the other half of a 16-bit word is left as it was: it may
// belong to the next tensor of an arena.
#define GLC_STORE2(arr, t, i, lo, hi, has_hi)                                    \
    if ((t) == GLC_T_F32) {                                                      \
        arr[(i)] = floatBitsToUint(lo);                                          \
        if (has_hi)                                                              \
            arr[(i) + 1u] = floatBitsToUint(hi);                                 \
    } else if (has_hi) {                                                         \
        arr[(i) >> 1] = glc_pack16((lo), (hi), (t));                             \
    } else {                                                                     \
        atomicAnd(arr[(i) >> 1], 0xffff0000u);                                   \
        atomicOr(arr[(i) >> 1], glc_pack16((lo), 0.0, (t)) & 0xffffu);           \
    }

// ---- activations ----
// glc_act(v, op, param): op numbered as glc_unary_op (1 gelu, tanh
// approximation; 2 gelu, erf; 3 silu; 4 relu; 5 exp; 6 tanh; 7 softcap:
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
    if (op == 1)
        return 0.5 * v * (1.0 + glc_safe_tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    if (op == 2)
        return 0.5 * v * (1.0 + glc_erf(v * 0.7071067811865476));
    if (op == 3)
        return v / (1.0 + exp(-v));
    if (op == 4)
        return max(v, 0.0);
    if (op == 5)
        return exp(v);
    if (op == 6)
        return glc_safe_tanh(v);
    if (op == 7)
        return param * glc_safe_tanh(v / param);
    return v;
}

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
