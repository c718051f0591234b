/*
 * Plain C references of the quantized matmuls (see ref_quant.h). The GGML
 * quantizers follow ggml-quants.c (quantize_row_q8_0_ref,
 * quantize_row_q4_0_ref) line for line, so their bytes are GGUF's.
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
