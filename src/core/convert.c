/*
 * f32 <-> f16 / bf16 on the host (see convert.h), by bit manipulation so
 * the result does not depend on the compiler's or CPU's half support; and
 * glc_dtype_to_f32, the public host decoding of every dtype (GGML blocks
 * included) into f32.
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

/* GGML block decoders: one block at b into 32 (or 256) floats. */
static void q8_0_block(const unsigned char *b, float *x)
{
    float d = glc__f16_to_f32((uint16_t)(b[0] | b[1] << 8));
    int j;
    for (j = 0; j < 32; j++)
        x[j] = d * (float)(signed char)b[2 + j];
}

/* 16 bytes of nibbles: value j is byte j's low nibble, value j + 16 its high */
static void q4_0_block(const unsigned char *b, float *x)
{
    float d = glc__f16_to_f32((uint16_t)(b[0] | b[1] << 8));
    int j;
    for (j = 0; j < 16; j++) {
        x[j] = d * (float)((b[2 + j] & 15) - 8);
        x[j + 16] = d * (float)((b[2 + j] >> 4) - 8);
    }
}

glc_status glc_dtype_to_f32(glc_dtype dtype, const void *src, int64_t n, float *dst)
{
    const unsigned char *s = src;
    size_t row = glc_dtype_row_bytes(dtype, n), i, per, elems = 32;
    void (*block)(const unsigned char *, float *) = NULL;
    if (!src || !dst || n < 0 || (n > 0 && row == 0))
        return GLC_ERR_INVALID_ARG;
    switch (dtype) {
    case GLC_DTYPE_F32:
    case GLC_DTYPE_F16:
    case GLC_DTYPE_BF16:
        glc__convert_to_f32(dtype, src, dst, (size_t)n);
        return GLC_OK;
    case GLC_DTYPE_I32:
        for (i = 0; i < (size_t)n; i++) {
            int32_t v;
            memcpy(&v, s + i * 4, 4);
            dst[i] = (float)v;
        }
        return GLC_OK;
    case GLC_DTYPE_U32:
        for (i = 0; i < (size_t)n; i++) {
            uint32_t v;
            memcpy(&v, s + i * 4, 4);
            dst[i] = (float)v;
        }
        return GLC_OK;
    case GLC_DTYPE_U8:
        for (i = 0; i < (size_t)n; i++)
            dst[i] = (float)s[i];
        return GLC_OK;
    case GLC_DTYPE_Q8_0:
        block = q8_0_block;
        break;
    case GLC_DTYPE_Q4_0:
        block = q4_0_block;
        break;
    default:
        return GLC_ERR_UNSUPPORTED;
    }
    per = glc_dtype_row_bytes(dtype, (int64_t)elems);
    for (i = 0; i < (size_t)n / elems; i++)
        block(s + i * per, dst + i * elems);
    return GLC_OK;
}
