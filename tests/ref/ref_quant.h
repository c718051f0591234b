/* Plain C references of the quantized matmuls: GGML's reference
 * quantizers (quantize_row_q8_0_ref / quantize_row_q4_0_ref), the other
 * GGML block types, MLX-style affine quantization, dequantization, and the
 * f32 matmul they are checked against. */
#ifndef GLC_REF_QUANT_H
#define GLC_REF_QUANT_H

#include "glcompute.h"

#include <stddef.h>
#include <stdint.h>

/* n values (a multiple of 32) into n / 32 blocks of 34 (Q8_0) or 18 (Q4_0)
 * bytes, exactly as GGML writes them. */
void ref_quantize_q8_0(const float *x, size_t n, uint8_t *out);
void ref_quantize_q4_0(const float *x, size_t n, uint8_t *out);
/* Blocks back to n floats. */
void ref_dequantize_q8_0(const uint8_t *q, size_t n, float *out);
void ref_dequantize_q4_0(const uint8_t *q, size_t n, float *out);

/* The other GGML block types, each a plain reading of its GGML block
 * definition (the layouts in words are at each decoder in ref_quant.c):
 * Q4_K, Q5_K, Q6_K (256 values a block), Q4_1, Q5_0, Q5_1 (32). The
 * decoders give GGML's floats for any bytes whose f16 fields are finite;
 * the quantizers are simple rounding ones (not GGML's searches): enough
 * for realistic test data. n: a whole number of blocks of dt. The
 * generic entry points take every block type, Q8_0 and Q4_0 included. */
void ref_quantize(glc_dtype dt, const float *x, size_t n, uint8_t *out);
void ref_dequantize(glc_dtype dt, const uint8_t *q, size_t n, float *out);
/* n values of dt as random blocks: every quant bit random, the f16 scales
 * (and mins) finite, nonzero and of either sign, magnitudes 2^-9 .. 2^-3. */
void ref_random_blocks(glc_dtype dt, size_t n, uint64_t *seed, uint8_t *out);

/* w [n, k] into packed u32 [n, k * bits / 32] (element j of a row at bit
 * (j * bits) % 32 of word (j * bits) / 32), and scales / biases [n, k / group]
 * rounded through sdtype (F32 or F16: what the tensor will hold). Per
 * group: scale = (max - min) / (2^bits - 1), bias = min,
 * q = round((x - bias) / scale) clamped to [0, 2^bits - 1]. */
void ref_quantize_affine(const float *w, int64_t n, int64_t k, int bits, int group,
                         glc_dtype sdtype, uint32_t *wq, float *scales, float *biases);
void ref_dequantize_affine(const uint32_t *wq, const float *scales, const float *biases,
                           int64_t n, int64_t k, int bits, int group, float *w);

/* out[i, j] = sum_k a[i, k] * w[j, k] (+ bias[j] when bias is not NULL),
 * accumulated in double. */
void ref_matmul_nt(const float *a, const float *w, const float *bias, int64_t m, int64_t n,
                   int64_t k, float *out);

#endif
