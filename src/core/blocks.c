/*
 * GGML blocks on the host (GL-free): the public decoding of every dtype
 * into f32 (glc_dtype_to_f32) and encoding of f32 into every dtype
 * (glc_dtype_from_f32), byte-exact to the GGML block definitions (the
 * kernels' side of the same layouts: glsl/quant.glsl). The encoders round
 * to the nearest level with scales from each block's (sub-block's) range,
 * as GGML's reference quantizers do; they do not search for better scales
 * (GGML's k-quant quantizers do), so they lose a little more precision:
 * good for test models and exports, not a replacement for llama.cpp's
 * quantize tool.
 */
#include "convert.h"

#include <math.h>
#include <string.h>

/* ---- decoders: one block at b into 32 (or 256) floats ---- */

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


/* ---- encoders ---- */

static void put_f16(unsigned char *b, float v)
{
    uint16_t h = glc__f32_to_f16(v);
    b[0] = (unsigned char)(h & 255);
    b[1] = (unsigned char)(h >> 8);
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* the value of largest magnitude among x[0 .. n), and that magnitude */
static float extreme(const float *x, int n, float *amax)
{
    float m = 0;
    int j;
    *amax = 0;
    for (j = 0; j < n; j++)
        if (fabsf(x[j]) > *amax) {
            *amax = fabsf(x[j]);
            m = x[j];
        }
    return m;
}

static void range(const float *x, int n, float *lo, float *hi)
{
    int j;
    *lo = *hi = x[0];
    for (j = 1; j < n; j++) {
        *lo = x[j] < *lo ? x[j] : *lo;
        *hi = x[j] > *hi ? x[j] : *hi;
    }
}

/* Q8_0: d = max |x| / 127, q = round(x / d) */
static void enc_q8_0(const float *x, unsigned char *b)
{
    float amax, d, id;
    int j;
    extreme(x, 32, &amax);
    d = amax / 127.0f;
    id = d != 0 ? 1.0f / d : 0;
    put_f16(b, d);
    for (j = 0; j < 32; j++)
        b[2 + j] = (unsigned char)(signed char)clampi((int)lrintf(x[j] * id), -127, 127);
}

/* The quants q[0..31] of a 32-value block: their low 4 bits at qs (value
 * j in byte j % 16, the low nibble for j < 16), the fifth bits (qh, when
 * not NULL) as a little-endian word, bit j for value j. */
static void pack_q32(const int *q, unsigned char *qs, unsigned char *qh)
{
    uint32_t h = 0;
    int j;
    for (j = 0; j < 16; j++) {
        qs[j] = (unsigned char)((q[j] & 15) | (q[j + 16] & 15) << 4);
        h |= (uint32_t)(q[j] >> 4) << j | (uint32_t)(q[j + 16] >> 4) << (j + 16);
    }
    if (qh)
        for (j = 0; j < 4; j++)
            qh[j] = (unsigned char)(h >> 8 * j);
}

/* Q4_0 / Q5_0: d = the extreme value / -8 (-16), q = x / d + 8 (16) rounded */
static void enc_sym(const float *x, unsigned char *b, int five)
{
    float amax, m = extreme(x, 32, &amax), d = m / (five ? -16.0f : -8.0f);
    float id = d != 0 ? 1.0f / d : 0;
    int j, q[32], top = five ? 31 : 15, mid = five ? 16 : 8;
    put_f16(b, d);
    for (j = 0; j < 32; j++)
        q[j] = clampi((int)(x[j] * id + (float)mid + 0.5f), 0, top);
    pack_q32(q, b + (five ? 6 : 2), five ? b + 2 : NULL);
}

/* Q4_1 / Q5_1: d = (max - min) / 15 (31), m = min, q = (x - m) / d rounded */
static void enc_asym(const float *x, unsigned char *b, int five)
{
    float lo, hi, d, id;
    int j, q[32], top = five ? 31 : 15;
    range(x, 32, &lo, &hi);
    d = (hi - lo) / (float)top;
    id = d != 0 ? 1.0f / d : 0;
    put_f16(b, d);
    put_f16(b + 2, lo);
    for (j = 0; j < 32; j++)
        q[j] = clampi((int)lrintf((x[j] - lo) * id), 0, top);
    pack_q32(q, b + (five ? 8 : 4), five ? b + 4 : NULL);
}

/* Q4_K / Q5_K: per sub-block of 32 a scale (range / 15 or 31) and a min
 * (-min(0, lowest)), both 6-bit multiples of the block's d and dmin */
static void enc_k(const float *x, unsigned char *b, int five)
{
    float sub_d[8], sub_m[8], dmax = 0, mmax = 0, d, dmin;
    int sc[8], mn[8], j, l, top = five ? 31 : 15;
    unsigned char *sm = b + 4, *qh = b + 16, *qs = b + (five ? 48 : 16);
    memset(b, 0, five ? 176 : 144);
    for (j = 0; j < 8; j++) {
        float lo, hi;
        range(x + 32 * j, 32, &lo, &hi);
        lo = lo < 0 ? lo : 0;
        sub_d[j] = (hi - lo) / (float)top;
        sub_m[j] = -lo;
        dmax = sub_d[j] > dmax ? sub_d[j] : dmax;
        mmax = sub_m[j] > mmax ? sub_m[j] : mmax;
    }
    d = glc__f16_to_f32(glc__f32_to_f16(dmax / 63.0f));
    dmin = glc__f16_to_f32(glc__f32_to_f16(mmax / 63.0f));
    put_f16(b, d);
    put_f16(b + 2, dmin);
    for (j = 0; j < 8; j++) {
        sc[j] = d > 0 ? clampi((int)lrintf(sub_d[j] / d), 0, 63) : 0;
        mn[j] = dmin > 0 ? clampi((int)lrintf(sub_m[j] / dmin), 0, 63) : 0;
        if (j < 4) {
            sm[j] = (unsigned char)sc[j];
            sm[j + 4] = (unsigned char)mn[j];
        } else {
            sm[j + 4] = (unsigned char)((sc[j] & 15) | (mn[j] & 15) << 4);
            sm[j - 4] |= (unsigned char)((sc[j] >> 4) << 6);
            sm[j] |= (unsigned char)((mn[j] >> 4) << 6);
        }
    }
    for (j = 0; j < 8; j++) {
        float step = d * (float)sc[j], off = dmin * (float)mn[j];
        for (l = 0; l < 32; l++) {
            int q = step > 0 ? clampi((int)lrintf((x[32 * j + l] + off) / step), 0, top) : 0;
            qs[32 * (j / 2) + l] |= (unsigned char)((q & 15) << 4 * (j % 2));
            if (five)
                qh[l] |= (unsigned char)((q >> 4) << j);
        }
    }
}

/* Q6_K: per 16 values an int8 scale (the extreme value / -32, a multiple
 * of d = the largest / 127), q = x / (d scale) + 32 in 0 .. 63 */
static void enc_q6_k(const float *x, unsigned char *b)
{
    float sub[16], amax_all = 0, d;
    int s, v;
    memset(b, 0, 210);
    for (s = 0; s < 16; s++) {
        float amax;
        sub[s] = extreme(x + 16 * s, 16, &amax) / -32.0f;
        amax_all = fabsf(sub[s]) > amax_all ? fabsf(sub[s]) : amax_all;
    }
    d = glc__f16_to_f32(glc__f32_to_f16(amax_all / 127.0f));
    put_f16(b + 208, d);
    for (s = 0; s < 16; s++)
        b[192 + s] = (unsigned char)(signed char)(d > 0 ? clampi((int)lrintf(sub[s] / d), -127, 127) : 0);
    for (v = 0; v < 256; v++) {
        int h = v / 128, c = v % 128 / 32, l = v % 32;
        float step = d * (float)(signed char)b[192 + v / 16];
        int q = step != 0 ? clampi((int)lrintf(x[v] / step) + 32, 0, 63) : 32;
        b[64 * h + 32 * (c % 2) + l] |= (unsigned char)((q & 15) << 4 * (c / 2));
        b[128 + 32 * h + l] |= (unsigned char)((q >> 4) << 2 * c);
    }
}

static void enc_q4_0(const float *x, unsigned char *b) { enc_sym(x, b, 0); }
static void enc_q5_0(const float *x, unsigned char *b) { enc_sym(x, b, 1); }
static void enc_q4_1(const float *x, unsigned char *b) { enc_asym(x, b, 0); }
static void enc_q5_1(const float *x, unsigned char *b) { enc_asym(x, b, 1); }
static void enc_q4_k(const float *x, unsigned char *b) { enc_k(x, b, 0); }
static void enc_q5_k(const float *x, unsigned char *b) { enc_k(x, b, 1); }

/* ---- the dtype table of both directions ---- */

typedef struct block_codec {
    glc_dtype dtype;
    int elems;
    void (*decode)(const unsigned char *, float *);
    void (*encode)(const float *, unsigned char *);
} block_codec;

static const block_codec codecs[] = {
    {GLC_DTYPE_Q8_0, 32, q8_0_block, enc_q8_0}, {GLC_DTYPE_Q4_0, 32, q4_0_block, enc_q4_0},
    {GLC_DTYPE_Q4_1, 32, q4_1_block, enc_q4_1}, {GLC_DTYPE_Q5_0, 32, q5_0_block, enc_q5_0},
    {GLC_DTYPE_Q5_1, 32, q5_1_block, enc_q5_1}, {GLC_DTYPE_Q4_K, 256, q4_k_block, enc_q4_k},
    {GLC_DTYPE_Q5_K, 256, q5_k_block, enc_q5_k}, {GLC_DTYPE_Q6_K, 256, q6_k_block, enc_q6_k}};

static const block_codec *codec_of(glc_dtype dt)
{
    size_t i;
    for (i = 0; i < sizeof codecs / sizeof codecs[0]; i++)
        if (codecs[i].dtype == dt)
            return &codecs[i];
    return NULL;
}

glc_status glc_dtype_to_f32(glc_dtype dtype, const void *src, int64_t n, float *dst)
{
    const unsigned char *s = src;
    const block_codec *c = codec_of(dtype);
    size_t i, per;
    if (!src || !dst || n < 0 || (n > 0 && glc_dtype_row_bytes(dtype, n) == 0))
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
    default:
        break;
    }
    if (!c)
        return GLC_ERR_UNSUPPORTED;
    per = glc_dtype_row_bytes(dtype, c->elems);
    for (i = 0; i < (size_t)n / (size_t)c->elems; i++)
        c->decode(s + i * per, dst + i * (size_t)c->elems);
    return GLC_OK;
}

glc_status glc_dtype_from_f32(glc_dtype dtype, const float *src, int64_t n, void *dst)
{
    unsigned char *d = dst;
    const block_codec *c = codec_of(dtype);
    size_t i, per;
    if (!src || !dst || n < 0 || (n > 0 && glc_dtype_row_bytes(dtype, n) == 0))
        return GLC_ERR_INVALID_ARG;
    if (dtype == GLC_DTYPE_F32 || dtype == GLC_DTYPE_F16 || dtype == GLC_DTYPE_BF16) {
        glc__convert_from_f32(dtype, src, dst, (size_t)n);
        return GLC_OK;
    }
    if (!c)
        return GLC_ERR_UNSUPPORTED;
    for (i = 0; i < (size_t)n; i++)
        if (!isfinite(src[i]))
            return GLC_ERR_INVALID_ARG; /* a block's scale cannot hold it */
    per = glc_dtype_row_bytes(dtype, c->elems);
    for (i = 0; i < (size_t)n / (size_t)c->elems; i++)
        c->encode(src + i * (size_t)c->elems, d + i * per);
    return GLC_OK;
}
