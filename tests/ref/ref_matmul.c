/*
 * The dense matmul reference (see ref_matmul.h): the textbook triple loop
 * per batch, in double.
 */
#include "ref_matmul.h"

void ref_matmul(const float *a, const float *b, const float *bias, const int64_t ab[2],
                const int64_t bb[2], int64_t m, int64_t n, int64_t k, int nt, float *out)
{
    int64_t z1, z0, i, j, l;
    for (z1 = 0; z1 < ab[0]; z1++)
        for (z0 = 0; z0 < ab[1]; z0++) {
            int64_t z = z1 * ab[1] + z0;
            int64_t zb = (bb[0] == 1 ? 0 : z1) * bb[1] + (bb[1] == 1 ? 0 : z0);
            const float *az = a + z * m * k, *bz = b + zb * n * k;
            float *oz = out + z * m * n;
            for (i = 0; i < m; i++)
                for (j = 0; j < n; j++) {
                    double s = bias ? bias[j] : 0.0;
                    for (l = 0; l < k; l++)
                        s += (double)az[i * k + l] * (double)(nt ? bz[j * k + l] : bz[l * n + j]);
                    oz[i * n + j] = (float)s;
                }
        }
}
