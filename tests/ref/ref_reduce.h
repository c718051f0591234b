/* Plain C references of the row ops (reductions along the last dim), in
 * double. x is [rows, n]; every row independent. */
#ifndef GLC_REF_REDUCE_H
#define GLC_REF_REDUCE_H

#include <stdint.h>

/* softmax of scale * x; causal: row r is query q = r % tq and keys
 * j > q + pos_offset get 0 (a row with every key masked is all zeros). */
void ref_softmax(const float *x, int64_t rows, int64_t n, float scale, int causal, int64_t tq,
                 int64_t pos_offset, float *out);
/* w (may be NULL): [n]. */
void ref_rms_norm(const float *x, int64_t rows, int64_t n, const float *w, float eps, float *out);
/* w, b (either may be NULL): [n]. */
void ref_layer_norm(const float *x, int64_t rows, int64_t n, const float *w, const float *b,
                    float eps, float *out);
/* out[r] = sum (or mean) of row r. */
void ref_sum(const float *x, int64_t rows, int64_t n, int mean, float *out);
/* out[r] = index of the first maximum of row r. */
void ref_argmax(const float *x, int64_t rows, int64_t n, float *out);

#endif
