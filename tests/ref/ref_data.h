/* Plain C references of the data-movement ops, on f32 values: rounding to
 * a 16-bit storage dtype is the caller's (ot_round), as the ops round once
 * when they store. Shapes are row-major, the last dim fastest. */
#ifndef GLC_REF_DATA_H
#define GLC_REF_DATA_H

#include <stdint.h>

/* out[i, :] = table[ids[i], :] for i < n, zeros where ids[i] is outside
 * [0, v). */
void ref_get_rows(const float *table, int64_t v, int64_t d, const int32_t *ids, int64_t n,
                  float *out);
/* dst[ids[i], :] = src[i, :] for i < n, skipping ids outside [0, v); the
 * other rows of dst are left as they are. */
void ref_set_rows(const float *src, int64_t n, int64_t d, const int32_t *ids, float *dst,
                  int64_t v);
/* out = x with dims permuted: out.shape[i] = shape[perm[i]] (perm NULL:
 * a plain copy). */
void ref_permute(const float *x, int rank, const int64_t *shape, const int *perm, float *out);
/* out = a and b joined along axis (0 .. rank-1). */
void ref_concat(const float *a, const int64_t *ashape, const float *b, const int64_t *bshape,
                int rank, int axis, float *out);
/* out = x[..., start:start+len, ...] along axis (0 .. rank-1). */
void ref_slice(const float *x, int rank, const int64_t *shape, int axis, int64_t start,
               int64_t len, float *out);

#endif
