/* Plain C reference of rope, in double. */
#ifndef GLC_REF_ROPE_H
#define GLC_REF_ROPE_H

#include <stdint.h>

/* x, out: [B, T, H, D] (B may be 1), positions [T]; neox: 0 rotates
 * (x[2i], x[2i+1]), 1 rotates (x[i], x[i + rope_dim/2]); elements past
 * rope_dim are copied; theta_i = pos * base^(-2i/rope_dim) / ff[i] (ff may
 * be NULL). out may be x. */
void ref_rope(const float *x, int64_t b, int64_t t, int64_t h, int64_t d, const int32_t *positions,
              int neox, int64_t rope_dim, double base, const float *ff, float *out);

#endif
