/*
 * f32 <-> f16 / bf16 on the host (see convert.h), by bit manipulation so
 * the result does not depend on the compiler's or CPU's half support.
 * (GGML blocks on the host: blocks.c.)
 */
#include "convert.h"

#include <string.h>

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t glc__f32_to_f16(float f)
{
    uint32_t u = bits_of(f), sign = (u >> 16) & 0x8000u, abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) /* inf, NaN (a quiet NaN stays NaN) */
        return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    if (abs >= 0x477ff000u) /* rounds past 65504 */
        return (uint16_t)(sign | 0x7c00u);
    if (abs < 0x38800000u) { /* below the smallest normal half: subnormal or 0 */
        /* scale so the half's subnormal step is 1, round to nearest even by
         * adding in float (the FPU rounds) */
        float v = float_of(abs) * 16777216.0f; /* 2^24 */
        uint32_t r = (uint32_t)v;
        float rem = v - (float)r;
        if (rem > 0.5f || (rem == 0.5f && (r & 1u)))
            r++;
        return (uint16_t)(sign | r);
    }
    {
        uint32_t mant = abs & 0x7fffffu, exp = (abs >> 23) - 112u;
        uint32_t h = (exp << 10) | (mant >> 13), rest = mant & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
            h++; /* may carry into the exponent: still right */
        return (uint16_t)(sign | h);
    }
}

float glc__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0)
        return float_of(sign) + (sign ? -1.0f : 1.0f) * (float)mant * (1.0f / 16777216.0f);
    if (exp == 31)
        return float_of(sign | 0x7f800000u | (mant << 13));
    return float_of(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t glc__f32_to_bf16(float f)
{
    uint32_t u = bits_of(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* NaN stays NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float glc__bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

void glc__convert_from_f32(glc_dtype dtype, const float *src, void *dst, size_t n)
{
    uint16_t *d = dst;
    size_t i;
    if (dtype == GLC_DTYPE_F16)
        for (i = 0; i < n; i++)
            d[i] = glc__f32_to_f16(src[i]);
    else if (dtype == GLC_DTYPE_BF16)
        for (i = 0; i < n; i++)
            d[i] = glc__f32_to_bf16(src[i]);
    else
        memcpy(dst, src, n * 4);
}

void glc__convert_to_f32(glc_dtype dtype, const void *src, float *dst, size_t n)
{
    const uint16_t *s = src;
    size_t i;
    if (dtype == GLC_DTYPE_F16)
        for (i = 0; i < n; i++)
            dst[i] = glc__f16_to_f32(s[i]);
    else if (dtype == GLC_DTYPE_BF16)
        for (i = 0; i < n; i++)
            dst[i] = glc__bf16_to_f32(s[i]);
    else
        memcpy(dst, src, n * 4);
}
