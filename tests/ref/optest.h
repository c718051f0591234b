/*
 * The op test harness: tensors with sentinel bytes around them, host-side
 * dtype conversion, random inputs and the comparison every kernel test
 * makes against its plain C reference (NMSE threshold as in ggml's
 * test-backend-ops; NaN/Inf never pass).
 */
#ifndef GLC_OPTEST_H
#define GLC_OPTEST_H

#include "glcompute.h"

#include <stddef.h>
#include <stdint.h>

/* NMSE thresholds (DESIGN.md, "Kernels"). */
#define OT_NMSE_DEFAULT 1e-7
#define OT_NMSE_MATMUL 5e-4
#define OT_NMSE_ROPE 1e-3
#define OT_NMSE_SOFTMAX 1e-6

#define OT_SENTINEL 0xCD

/* A tensor in its own buffer, with `pad` sentinel bytes before and after. */
typedef struct ot_tensor {
    glc_buffer *buf;
    glc_view view;
    size_t pad, bytes;
} ot_tensor;

/* f32 <-> f16 / bf16 on the host (round to nearest even). */
uint16_t ot_f32_to_f16(float f);
float ot_f16_to_f32(uint16_t h);
uint16_t ot_f32_to_bf16(float f);
float ot_bf16_to_f32(uint16_t h);
/* Rounds each value through dtype (what storing it as dtype keeps). */
void ot_round(glc_dtype dtype, float *v, size_t n);
/* n floats as dtype's bytes (f32, f16, bf16), and back. */
void ot_to_bytes(glc_dtype dtype, const float *v, void *out, size_t n);
void ot_from_bytes(glc_dtype dtype, const void *in, float *v, size_t n);

/* Uniform random floats in [lo, hi), never exactly 0. */
void ot_fill(uint64_t *seed, float *v, size_t n, float lo, float hi);
/* splitmix64 from *seed (advanced), salted by GLC_TEST_SEED where set: a
 * fixed stream per seed, so failures reproduce */
uint64_t ot_rand(uint64_t *seed);

/* Creates a tensor of dtype/shape padded by sentinels; values (may be NULL:
 * sentinel bytes inside too) are converted to dtype (float dtypes, I32, U32
 * given as floats). For raw bytes (U8, Q8_0, Q4_0) use ot_tensor_bytes. */
ot_tensor ot_tensor_new(glc_device *dev, glc_dtype dtype, int rank, const int64_t *shape,
                        const float *values);
ot_tensor ot_tensor_bytes(glc_device *dev, glc_dtype dtype, int rank, const int64_t *shape,
                          const void *bytes);
/* An absent optional input. */
glc_view ot_none(void);
/* Reads the tensor back as floats (n = its element count) and checks the
 * sentinel bytes on both sides; returns 0 and prints what was touched if
 * any sentinel changed. */
int ot_read(const ot_tensor *t, float *out);
/* Raw bytes, with the same sentinel check. */
int ot_read_bytes(const ot_tensor *t, void *out);
void ot_free(ot_tensor *t);

/* Normalised mean squared error of got against ref; +inf when got holds
 * NaN or Inf (or ref does: a reference must stay finite). */
double ot_nmse(const float *got, const float *ref, size_t n);
/* Fails the current cmocka test with `what` when nmse > limit. */
void ot_check(const char *what, const float *got, const float *ref, size_t n, double limit);

int64_t ot_numel(int rank, const int64_t *shape);

#endif
