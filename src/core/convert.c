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

static float f16_at(const unsigned char *b)
{
    return glc__f16_to_f32((uint16_t)(b[0] | b[1] << 8));
}

/* Q4_1: f16 d, f16 m, nibbles as Q4_0's; q * d + m */
static void q4_1_block(const unsigned char *b, float *x)
{
    float d = f16_at(b), m = f16_at(b + 2);
    int j;
    for (j = 0; j < 16; j++) {
        x[j] = (float)(b[4 + j] & 15) * d + m;
        x[j + 16] = (float)(b[4 + j] >> 4) * d + m;
    }
}

/* Q5_0 / Q5_1: f16 d (and f16 m), then 4 bytes qh whose bit j is value j's
 * fifth bit, then nibbles as Q4_0's; (q - 16) * d, or q * d + m */
static void q5_block(const unsigned char *b, float *x, int has_m)
{
    float d = f16_at(b), m = has_m ? f16_at(b + 2) : 0.0f;
    const unsigned char *h = b + (has_m ? 4 : 2), *qs = h + 4;
    uint32_t qh = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
                  (uint32_t)h[3] << 24;
    int j;
    for (j = 0; j < 32; j++) {
        int q = (qs[j % 16] >> (j < 16 ? 0 : 4) & 15) | (int)(qh >> j & 1) << 4;
        x[j] = has_m ? (float)q * d + m : (float)(q - 16) * d;
    }
}

static void q5_0_block(const unsigned char *b, float *x) { q5_block(b, x, 0); }
static void q5_1_block(const unsigned char *b, float *x) { q5_block(b, x, 1); }

/* Q4_K / Q5_K: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins (sub-
 * blocks 0-3: low 6 bits of bytes j and j + 4; 4-7: low and high nibble of
 * byte j + 4, top 2 bits from the top of bytes j - 4 and j), Q5_K's 32
 * bytes of fifth bits (bit j of byte l: value l of sub-block j), 128 bytes
 * of nibbles (sub-blocks 2i, 2i + 1: low, high nibbles of bytes 32 i ..
 * 32 i + 31); (d * scale) * q - dmin * min */
static void k_block(const unsigned char *b, float *x, int five)
{
    float d = f16_at(b), dmin = f16_at(b + 2);
    const unsigned char *sm = b + 4, *qh = b + 16, *qs = b + (five ? 48 : 16);
    int j, l;
    for (j = 0; j < 8; j++) {
        int sc = j < 4 ? sm[j] & 63 : (sm[j + 4] & 15) | (sm[j - 4] >> 6) << 4;
        int m = j < 4 ? sm[j + 4] & 63 : (sm[j + 4] >> 4) | (sm[j] >> 6) << 4;
        float d1 = d * (float)sc, m1 = dmin * (float)m;
        for (l = 0; l < 32; l++) {
            int q = qs[32 * (j / 2) + l] >> 4 * (j % 2) & 15;
            if (five)
                q |= (qh[l] >> j & 1) << 4;
            x[32 * j + l] = d1 * (float)q - m1;
        }
    }
}

static void q4_k_block(const unsigned char *b, float *x) { k_block(b, x, 0); }
static void q5_k_block(const unsigned char *b, float *x) { k_block(b, x, 1); }

/* Q6_K: 128 bytes of low 4 bits, 64 of high 2 bits, 16 int8 scales, f16 d.
 * Value 128 h + 32 c + l: low bits in byte 64 h + 32 (c % 2) + l (nibble c
 * / 2), high bits at bit 2 c of byte 128 + 32 h + l, scale (its index / 16);
 * (d * scale) * (q - 32) */
static void q6_k_block(const unsigned char *b, float *x)
{
    float d = f16_at(b + 208);
    int v;
    for (v = 0; v < 256; v++) {
        int h = v / 128, c = v % 128 / 32, l = v % 32;
        int q = (b[64 * h + 32 * (c % 2) + l] >> 4 * (c / 2) & 15) |
                (b[128 + 32 * h + l] >> 2 * c & 3) << 4;
        x[v] = d * (float)(signed char)b[192 + v / 16] * (float)(q - 32);
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
    case GLC_DTYPE_Q4_1:
        block = q4_1_block;
        break;
    case GLC_DTYPE_Q5_0:
        block = q5_0_block;
        break;
    case GLC_DTYPE_Q5_1:
        block = q5_1_block;
        break;
    case GLC_DTYPE_Q4_K:
        block = q4_k_block;
        elems = 256;
        break;
    case GLC_DTYPE_Q5_K:
        block = q5_k_block;
        elems = 256;
        break;
    case GLC_DTYPE_Q6_K:
        block = q6_k_block;
        elems = 256;
        break;
    default:
        return GLC_ERR_UNSUPPORTED;
    }
    per = glc_dtype_row_bytes(dtype, (int64_t)elems);
    for (i = 0; i < (size_t)n / elems; i++)
        block(s + i * per, dst + i * elems);
    return GLC_OK;
}
