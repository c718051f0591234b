/* Plain C reference of rope, in double. */
#include "ref_rope.h"

#include <math.h>
#include <stdlib.h>

void ref_rope(const float *x, int64_t b, int64_t t, int64_t h, int64_t d, const int32_t *positions,
              int neox, int64_t rope_dim, double base, const float *ff, float *out)
{
    int64_t half = rope_dim / 2, bi, ti, hi, i;
    double *cs = malloc((size_t)(half + 1) * 2 * sizeof(double));
    for (bi = 0; bi < b; bi++) {
        for (ti = 0; ti < t; ti++) {
            for (i = 0; i < half; i++) { /* theta_i of this token, shared by its heads */
                double theta = positions[ti] * pow(base, -2.0 * (double)i / (double)rope_dim);
                if (ff)
                    theta /= ff[i];
                cs[2 * i] = cos(theta);
                cs[2 * i + 1] = sin(theta);
            }
            for (hi = 0; hi < h; hi++) {
                int64_t r = (bi * t + ti) * h + hi;
                const float *xr = x + r * d;
                float *o = out + r * d;
                for (i = rope_dim; i < d; i++)
                    o[i] = xr[i];
                for (i = 0; i < half; i++) {
                    int64_t ia = neox ? i : 2 * i, ib = neox ? i + half : 2 * i + 1;
                    double xa = xr[ia], xb = xr[ib];
                    o[ia] = (float)(xa * cs[2 * i] - xb * cs[2 * i + 1]);
                    o[ib] = (float)(xa * cs[2 * i + 1] + xb * cs[2 * i]);
                }
            }
        }
    }
    free(cs);
}
