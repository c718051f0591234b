// storage.glsl: loading and storing float tensors of any storage dtype
// (included by common.glsl, so every kernel has it).
// Float tensors are bound as uint arrays whatever their dtype, so one
// declaration serves F32 (a word per element), F16 and BF16 (two per word,
// the lower index in the low half). T is a compile-time constant:
// GLC_T_F32, GLC_T_F16 or GLC_T_BF16 (enums.glsl); the compiler folds the
// choice.

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

// arr[i .. i + 3] as a vec4, zeros from the n-th on (n: values left in the
// row).
#define GLC_LOAD4(arr, t, i, n)                                                \
    vec4(GLC_LOAD(arr, t, (i)), (n) > 1u ? GLC_LOAD(arr, t, (i) + 1u) : 0.0,   \
         (n) > 2u ? GLC_LOAD(arr, t, (i) + 2u) : 0.0,                          \
         (n) > 3u ? GLC_LOAD(arr, t, (i) + 3u) : 0.0)

// Four f16 values packed in two words.
vec4 glc_half4(uvec2 w)
{
    return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
}

// Four 16-bit values of dtype t (GLC_T_F16 or GLC_T_BF16) packed in two
// words.
vec4 glc_16x4(uvec2 w, int t)
{
    return t == GLC_T_F16 ? glc_half4(w)
                          : uintBitsToFloat(uvec4(w.x << 16, w.x & 0xffff0000u, w.y << 16,
                                                  w.y & 0xffff0000u));
}

// Word s (0..3) of a texel of words (an RGBA32UI buffer texture's uvec4).
uint glc_word(uvec4 t, uint s)
{
    return s == 0u ? t.x : s == 1u ? t.y : s == 2u ? t.z : t.w;
}

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
