/*
 * Plain C references of the quantized matmuls (see ref_quant.h). The GGML
 * quantizers of Q8_0 and Q4_0 follow ggml-quants.c (quantize_row_q8_0_ref,
 * quantize_row_q4_0_ref) line for line, so their bytes are GGUF's. The
 * other block types: decoders written from the GGML block definitions
 * (each layout in words at its decoder), checked against hand-built blocks
 * in test_op_quant; their quantizers are simple rounding ones of our own.
 */
#include "ref_quant.h"

#include "optest.h"

#include <math.h>
#include <string.h>

static void put_f16(uint8_t *p, float v)
{
    uint16_t h = ot_f32_to_f16(v);
    p[0] = (uint8_t)(h & 0xff);
    p[1] = (uint8_t)(h >> 8);
}

static float get_f16(const uint8_t *p)
{
    return ot_f16_to_f32((uint16_t)(p[0] | (p[1] << 8)));
}

void ref_quantize_q8_0(const float *x, size_t n, uint8_t *out)
{
    size_t b, j;
    for (b = 0; b < n / 32; b++, x += 32, out += 34) {
        float amax = 0.0f, d, id;
        for (j = 0; j < 32; j++)
            amax = fmaxf(amax, fabsf(x[j]));
        d = amax / ((1 << 7) - 1);
        id = d ? 1.0f / d : 0.0f;
        put_f16(out, d);
        for (j = 0; j < 32; j++)
            out[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
    }
}

void ref_quantize_q4_0(const float *x, size_t n, uint8_t *out)
{
    size_t b, j;
    for (b = 0; b < n / 32; b++, x += 32, out += 18) {
        float amax = 0.0f, max = 0.0f, d, id;
        for (j = 0; j < 32; j++)
            if (amax < fabsf(x[j])) {
                amax = fabsf(x[j]);
                max = x[j];
            }
        d = max / -8;
        id = d ? 1.0f / d : 0.0f;
        put_f16(out, d);
        for (j = 0; j < 16; j++) {
            int8_t x0 = (int8_t)(x[j] * id + 8.5f), x1 = (int8_t)(x[16 + j] * id + 8.5f);
            uint8_t q0 = (uint8_t)(x0 < 15 ? x0 : 15), q1 = (uint8_t)(x1 < 15 ? x1 : 15);
            out[2 + j] = (uint8_t)(q0 | (q1 << 4));
        }
    }
}

void ref_dequantize_q8_0(const uint8_t *q, size_t n, float *out)
{
    size_t b, j;
    for (b = 0; b < n / 32; b++, q += 34, out += 32) {
        float d = get_f16(q);
        for (j = 0; j < 32; j++)
            out[j] = d * (float)(int8_t)q[2 + j];
    }
}

void ref_dequantize_q4_0(const uint8_t *q, size_t n, float *out)
{
    size_t b, j;
    for (b = 0; b < n / 32; b++, q += 18, out += 32) {
        float d = get_f16(q);
        for (j = 0; j < 16; j++) {
            out[j] = d * (float)((q[2 + j] & 0xf) - 8);
            out[16 + j] = d * (float)((q[2 + j] >> 4) - 8);
        }
    }
}

/* ---- the other GGML block types ----
 * Each decoder is a plain reading of the GGML block definition, the
 * layout in words at its head; float operations in GGML's order (where
 * a product is not exact, as Q6_K's d * scale * q, the order decides the
 * rounding). */

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Q4_K and Q5_K: the 12 bytes s after d and dmin hold 8 six-bit scales and
 * 8 six-bit mins, one of each per sub-block of 32 values. Sub-blocks 0-3:
 * scale = low 6 bits of s[j], min = low 6 bits of s[j + 4]. Sub-blocks 4-7:
 * the low 4 bits of both in s[j + 4] (scale the low nibble, min the high),
 * their top 2 bits in the top 2 bits of s[j - 4] (scale) and s[j] (min). */
static void k_scale_min(const uint8_t *s, int j, int *sc, int *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
        *m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
    }
}

static void k_pack_scale_min(uint8_t *s, const int *sc, const int *m)
{
    int j;
    for (j = 0; j < 4; j++) {
        s[j] = (uint8_t)(sc[j] | (sc[j + 4] >> 4) << 6);
        s[j + 4] = (uint8_t)(m[j] | (m[j + 4] >> 4) << 6);
        s[j + 8] = (uint8_t)((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
    }
}

/* Q4_K, 144 bytes per 256 values: f16 d at 0, f16 dmin at 2, the scales and
 * mins at 4 (12 bytes, k_scale_min), 128 bytes of 4-bit quants at 16.
 * Sub-blocks 2i and 2i + 1 share the 32 bytes at 16 + 32 i: value l of
 * sub-block 2i is the low nibble of byte l, of 2i + 1 the high nibble.
 * Value = (d * scale) * q - (dmin * min). */
static void dequant_q4_k(const uint8_t *b, float *y)
{
    float d = get_f16(b), dmin = get_f16(b + 2);
    int j, l, sc, m;
    for (j = 0; j < 8; j++) {
        float d1, m1;
        k_scale_min(b + 4, j, &sc, &m);
        d1 = d * (float)sc;
        m1 = dmin * (float)m;
        for (l = 0; l < 32; l++)
            y[32 * j + l] = d1 * (float)((b[16 + 32 * (j / 2) + l] >> 4 * (j % 2)) & 15) - m1;
    }
}

/* Q5_K, 176 bytes per 256 values: Q4_K's d, dmin and scales (bytes 0-15),
 * then qh, 32 bytes at 16, then the 4-bit quants as Q4_K's at 48. Value l
 * of sub-block j has bit j of qh[l] as its fifth bit (16). */
static void dequant_q5_k(const uint8_t *b, float *y)
{
    float d = get_f16(b), dmin = get_f16(b + 2);
    int j, l, sc, m;
    for (j = 0; j < 8; j++) {
        float d1, m1;
        k_scale_min(b + 4, j, &sc, &m);
        d1 = d * (float)sc;
        m1 = dmin * (float)m;
        for (l = 0; l < 32; l++) {
            int q = ((b[48 + 32 * (j / 2) + l] >> 4 * (j % 2)) & 15) | ((b[16 + l] >> j) & 1) << 4;
            y[32 * j + l] = d1 * (float)q - m1;
        }
    }
}

/* Q6_K, 210 bytes per 256 values: ql (low 4 bits) 128 bytes at 0, qh (high
 * 2 bits) 64 bytes at 128, 16 int8 scales at 192, f16 d at 208. Two halves
 * of 128 values, h = 0, 1; in half h, value 32 c + l (c < 4, l < 32) has
 * its low 4 bits in byte 64 h + 32 (c % 2) + l of ql (low nibble for c <
 * 2, high for c >= 2), its high 2 bits at bit 2 c of byte 32 h + l of qh,
 * and scale 8 h + 2 c + l / 16. Value = (d * scale) * (q - 32). */
static void dequant_q6_k(const uint8_t *b, float *y)
{
    float d = get_f16(b + 208);
    int h, c, l;
    for (h = 0; h < 2; h++)
        for (c = 0; c < 4; c++)
            for (l = 0; l < 32; l++) {
                int lo = (b[64 * h + 32 * (c % 2) + l] >> 4 * (c / 2)) & 15;
                int hi = (b[128 + 32 * h + l] >> 2 * c) & 3;
                int sc = (int8_t)b[192 + 8 * h + 2 * c + l / 16];
                y[128 * h + 32 * c + l] = d * (float)sc * (float)((lo | hi << 4) - 32);
            }
}

/* Q4_1, 20 bytes per 32 values: f16 d at 0, f16 m at 2, 16 bytes of 4-bit
 * quants at 4 (value l < 16 the low nibble of byte l, value l + 16 its
 * high nibble). Value = q * d + m. */
static void dequant_q4_1(const uint8_t *b, float *y)
{
    float d = get_f16(b), m = get_f16(b + 2);
    int l;
    for (l = 0; l < 16; l++) {
        y[l] = (float)(b[4 + l] & 15) * d + m;
        y[l + 16] = (float)(b[4 + l] >> 4) * d + m;
    }
}

/* Q5_0, 22 bytes per 32 values: f16 d at 0, qh (a little-endian u32) at 2,
 * 16 bytes of 4-bit quants at 6 as Q4_1's; value v's fifth bit (16) is bit
 * v of qh. Value = (q - 16) * d. */
static void dequant_q5_0(const uint8_t *b, float *y)
{
    float d = get_f16(b);
    uint32_t qh = get_u32(b + 2);
    int l;
    for (l = 0; l < 16; l++) {
        int q0 = (b[6 + l] & 15) | (int)((qh >> l) & 1) << 4;
        int q1 = (b[6 + l] >> 4) | (int)((qh >> (l + 16)) & 1) << 4;
        y[l] = (float)(q0 - 16) * d;
        y[l + 16] = (float)(q1 - 16) * d;
    }
}

/* Q5_1, 24 bytes per 32 values: f16 d at 0, f16 m at 2, qh at 4, the 4-bit
 * quants at 8, bits as Q5_0's. Value = q * d + m. */
static void dequant_q5_1(const uint8_t *b, float *y)
{
    float d = get_f16(b), m = get_f16(b + 2);
    uint32_t qh = get_u32(b + 4);
    int l;
    for (l = 0; l < 16; l++) {
        int q0 = (b[8 + l] & 15) | (int)((qh >> l) & 1) << 4;
        int q1 = (b[8 + l] >> 4) | (int)((qh >> (l + 16)) & 1) << 4;
        y[l] = (float)q0 * d + m;
        y[l + 16] = (float)q1 * d + m;
    }
}

/* Q4_K / Q5_K (levels 15 / 31): per sub-block of 32, scale (max - lo) /
 * levels and min -lo with lo = min(0, smallest value); d and dmin the
 * largest of them / 63; each value rounded against the stored scale and
 * min. */
static void quant_k(const float *x, uint8_t *b, int levels)
{
    float scale[8], mn[8], ms = 0.0f, mm = 0.0f, d, dmin;
    int sc[8], m[8], j, l;
    for (j = 0; j < 8; j++) {
        float lo = 0.0f, hi = x[32 * j];
        for (l = 0; l < 32; l++) {
            lo = fminf(lo, x[32 * j + l]);
            hi = fmaxf(hi, x[32 * j + l]);
        }
        scale[j] = (hi - lo) / (float)levels;
        mn[j] = -lo;
        ms = fmaxf(ms, scale[j]);
        mm = fmaxf(mm, mn[j]);
    }
    put_f16(b, ms / 63.0f);
    put_f16(b + 2, mm / 63.0f);
    d = get_f16(b);
    dmin = get_f16(b + 2);
    for (j = 0; j < 8; j++) {
        sc[j] = d > 0.0f ? clampi((int)lroundf(scale[j] / d), 0, 63) : 0;
        m[j] = dmin > 0.0f ? clampi((int)lroundf(mn[j] / dmin), 0, 63) : 0;
    }
    k_pack_scale_min(b + 4, sc, m);
    if (levels == 31)
        memset(b + 16, 0, 32);
    memset(b + (levels == 31 ? 48 : 16), 0, 128);
    for (j = 0; j < 8; j++) {
        float d1 = d * (float)sc[j], m1 = dmin * (float)m[j];
        for (l = 0; l < 32; l++) {
            int q = d1 > 0.0f ? clampi((int)lroundf((x[32 * j + l] + m1) / d1), 0, levels) : 0;
            b[(levels == 31 ? 48 : 16) + 32 * (j / 2) + l] |= (uint8_t)((q & 15) << 4 * (j % 2));
            if (levels == 31)
                b[16 + l] |= (uint8_t)((q >> 4) << j);
        }
    }
}

/* Q6_K: per 16 values a scale amax / 31; d the largest / 127; the int8
 * scales and the quants rounded against what is stored. */
static void quant_q6_k(const float *x, uint8_t *b)
{
    float scale[16], ms = 0.0f, d;
    int g, l;
    for (g = 0; g < 16; g++) {
        float amax = 0.0f;
        for (l = 0; l < 16; l++)
            amax = fmaxf(amax, fabsf(x[16 * g + l]));
        scale[g] = amax / 31.0f;
        ms = fmaxf(ms, scale[g]);
    }
    put_f16(b + 208, ms / 127.0f);
    d = get_f16(b + 208);
    memset(b, 0, 192);
    for (g = 0; g < 16; g++)
        b[192 + g] =
            (uint8_t)(int8_t)(d > 0.0f ? clampi((int)lroundf(scale[g] / d), -128, 127) : 0);
    for (l = 0; l < 256; l++) {
        int h = l / 128, c = (l % 128) / 32, i = l % 32;
        int sc = (int8_t)b[192 + 8 * h + 2 * c + i / 16];
        float s = d * (float)sc;
        int q = s != 0.0f ? clampi((int)lroundf(x[l] / s), -32, 31) + 32 : 32;
        b[64 * h + 32 * (c % 2) + i] |= (uint8_t)((q & 15) << 4 * (c / 2));
        b[128 + 32 * h + i] |= (uint8_t)((q >> 4) << 2 * c);
    }
}

/* Q4_1 / Q5_1 (levels 15 / 31): d = (max - min) / levels, m = min. Q5_0:
 * d = -(the value of largest magnitude) / 16, as Q4_0 does with 8. */
static void quant_32(glc_dtype dt, const float *x, uint8_t *b)
{
    int levels = dt == GLC_DTYPE_Q4_1 ? 15 : 31, hasmin = dt != GLC_DTYPE_Q5_0, l;
    int qs = dt == GLC_DTYPE_Q4_1 ? 4 : dt == GLC_DTYPE_Q5_0 ? 6 : 8;
    float lo = x[0], hi = x[0], amax = 0.0f, max = 0.0f, d, m;
    uint32_t qh = 0;
    for (l = 0; l < 32; l++) {
        lo = fminf(lo, x[l]);
        hi = fmaxf(hi, x[l]);
        if (fabsf(x[l]) > amax) {
            amax = fabsf(x[l]);
            max = x[l];
        }
    }
    put_f16(b, hasmin ? (hi - lo) / (float)levels : max / -16.0f);
    if (hasmin)
        put_f16(b + 2, lo);
    d = get_f16(b);
    m = hasmin ? get_f16(b + 2) : 0.0f;
    memset(b + qs, 0, 16);
    for (l = 0; l < 32; l++) {
        int q = d != 0.0f ? (int)lroundf((x[l] - m) / d) + (hasmin ? 0 : 16) : 16 * !hasmin;
        q = clampi(q, 0, levels);
        b[qs + l % 16] |= (uint8_t)((q & 15) << (l < 16 ? 0 : 4));
        qh |= (uint32_t)(q >> 4) << l;
    }
    if (levels == 31) {
        int o = hasmin ? 4 : 2, i;
        for (i = 0; i < 4; i++)
            b[o + i] = (uint8_t)(qh >> 8 * i);
    }
}

/* values per block: 32, or 256 (K types) */
static size_t block_elems(glc_dtype dt)
{
    return glc_dtype_row_bytes(dt, 32) ? 32 : 256;
}

void ref_quantize(glc_dtype dt, const float *x, size_t n, uint8_t *out)
{
    size_t elems = block_elems(dt), per = glc_dtype_row_bytes(dt, (int64_t)elems), i;
    if (dt == GLC_DTYPE_Q8_0) {
        ref_quantize_q8_0(x, n, out);
        return;
    }
    if (dt == GLC_DTYPE_Q4_0) {
        ref_quantize_q4_0(x, n, out);
        return;
    }
    for (i = 0; i < n / elems; i++, x += elems, out += per) {
        if (dt == GLC_DTYPE_Q4_K || dt == GLC_DTYPE_Q5_K)
            quant_k(x, out, dt == GLC_DTYPE_Q4_K ? 15 : 31);
        else if (dt == GLC_DTYPE_Q6_K)
            quant_q6_k(x, out);
        else
            quant_32(dt, x, out);
    }
}

void ref_dequantize(glc_dtype dt, const uint8_t *q, size_t n, float *out)
{
    size_t elems = block_elems(dt), per = glc_dtype_row_bytes(dt, (int64_t)elems), i;
    void (*block)(const uint8_t *, float *) =
        dt == GLC_DTYPE_Q4_K ? dequant_q4_k : dt == GLC_DTYPE_Q5_K ? dequant_q5_k
        : dt == GLC_DTYPE_Q6_K ? dequant_q6_k : dt == GLC_DTYPE_Q4_1 ? dequant_q4_1
        : dt == GLC_DTYPE_Q5_0 ? dequant_q5_0 : dt == GLC_DTYPE_Q5_1 ? dequant_q5_1 : NULL;
    if (dt == GLC_DTYPE_Q8_0) {
        ref_dequantize_q8_0(q, n, out);
        return;
    }
    if (dt == GLC_DTYPE_Q4_0) {
        ref_dequantize_q4_0(q, n, out);
        return;
    }
    for (i = 0; i < n / elems; i++)
        block(q + i * per, out + i * elems);
}

void ref_random_blocks(glc_dtype dt, size_t n, uint64_t *seed, uint8_t *out)
{
    size_t elems = block_elems(dt), per = glc_dtype_row_bytes(dt, (int64_t)elems), i, j;
    /* where the f16 fields of a block are */
    int at[2] = {dt == GLC_DTYPE_Q6_K ? 208 : 0, -1}, f;
    if (dt == GLC_DTYPE_Q4_K || dt == GLC_DTYPE_Q5_K || dt == GLC_DTYPE_Q4_1 ||
        dt == GLC_DTYPE_Q5_1)
        at[1] = 2;
    for (i = 0; i < n / elems * per; i++)
        out[i] = (uint8_t)(ot_rand(seed) >> 56);
    for (i = 0; i < n / elems; i++)
        for (f = 0; f < 2 && at[f] >= 0; f++) {
            uint64_t r = ot_rand(seed);
            /* exponent 6 .. 12 of 15: 2^-9 .. 2^-3 (times 1 to 2) */
            uint16_t h = (uint16_t)((r & 1) << 15 | (6 + (r >> 8) % 7) << 10 | ((r >> 20) & 0x3ff));
            j = i * per + (size_t)at[f];
            out[j] = (uint8_t)(h & 0xff);
            out[j + 1] = (uint8_t)(h >> 8);
        }
}

void ref_quantize_affine(const float *w, int64_t n, int64_t k, int bits, int group,
                         glc_dtype sdtype, uint32_t *wq, float *scales, float *biases)
{
    int64_t r, g, j, words = k * bits / 32, groups = k / group;
    uint32_t qmax = (1u << bits) - 1;
    memset(wq, 0, (size_t)(n * words) * 4);
    for (r = 0; r < n; r++)
        for (g = 0; g < groups; g++) {
            const float *x = w + r * k + g * group;
            float lo = x[0], hi = x[0], scale, bias;
            for (j = 1; j < group; j++) {
                lo = fminf(lo, x[j]);
                hi = fmaxf(hi, x[j]);
            }
            scale = (hi - lo) / (float)qmax;
            bias = lo;
            ot_round(sdtype, &scale, 1);
            ot_round(sdtype, &bias, 1);
            scales[r * groups + g] = scale;
            biases[r * groups + g] = bias;
            for (j = 0; j < group; j++) {
                float qf = scale > 0 ? roundf((x[j] - bias) / scale) : 0.0f;
                uint32_t q = qf < 0 ? 0 : qf > (float)qmax ? qmax : (uint32_t)qf;
                int64_t e = g * group + j, bit = e * bits;
                wq[r * words + bit / 32] |= q << (bit % 32);
            }
        }
}

void ref_dequantize_affine(const uint32_t *wq, const float *scales, const float *biases,
                           int64_t n, int64_t k, int bits, int group, float *w)
{
    int64_t r, j, words = k * bits / 32, groups = k / group;
    uint32_t mask = (1u << bits) - 1;
    for (r = 0; r < n; r++)
        for (j = 0; j < k; j++) {
            int64_t bit = j * bits;
            uint32_t q = (wq[r * words + bit / 32] >> (bit % 32)) & mask;
            w[r * k + j] = scales[r * groups + j / group] * (float)q + biases[r * groups + j / group];
        }
}

void ref_matmul_nt(const float *a, const float *w, const float *bias, int64_t m, int64_t n,
                   int64_t k, float *out)
{
    int64_t i, j, l;
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            double s = bias ? bias[j] : 0.0;
            for (l = 0; l < k; l++)
                s += (double)a[i * k + l] * (double)w[j * k + l];
            out[i * n + j] = (float)s;
        }
}
