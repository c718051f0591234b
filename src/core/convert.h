/*
 * Host conversions between f32 and the 16-bit storage dtypes (IEEE half,
 * bfloat16), GL-free: round to nearest even, NaN kept NaN, overflow to
 * infinity, half subnormals exact. Plans use them for f32 inputs, params
 * and outputs of 16-bit tensors.
 */
#ifndef GLC_CONVERT_H
#define GLC_CONVERT_H

#include "glcompute.h"

uint16_t glc__f32_to_f16(float f);
float glc__f16_to_f32(uint16_t h);
uint16_t glc__f32_to_bf16(float f);
float glc__bf16_to_f32(uint16_t h);

/* n values from f32 into dtype (F32, F16, BF16) at dst, and back. */
void glc__convert_from_f32(glc_dtype dtype, const float *src, void *dst, size_t n);
void glc__convert_to_f32(glc_dtype dtype, const void *src, float *dst, size_t n);

#endif
