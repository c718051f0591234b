/* Plain C references of the row ops, in double. */
#include "ref_reduce.h"

#include <math.h>

void ref_softmax(const float *x, int64_t rows, int64_t n, float scale, int causal, int64_t tq,
                 int64_t pos_offset, float *out)
{
    int64_t r, j;
    for (r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *o = out + r * n;
        int64_t lim = n;
        double m = -INFINITY, s = 0;
        if (causal) {
            lim = r % tq + pos_offset + 1;
            lim = lim < 0 ? 0 : lim > n ? n : lim;
        }
        for (j = 0; j < lim; j++)
            m = fmax(m, (double)scale * xr[j]);
        for (j = 0; j < lim; j++)
            s += exp((double)scale * xr[j] - m);
        for (j = 0; j < n; j++)
            o[j] = j < lim ? (float)(exp((double)scale * xr[j] - m) / s) : 0.0f;
    }
}

void ref_rms_norm(const float *x, int64_t rows, int64_t n, const float *w, float eps, float *out)
{
    int64_t r, j;
    for (r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        double ss = 0, k;
        for (j = 0; j < n; j++)
            ss += (double)xr[j] * xr[j];
        k = 1.0 / sqrt(ss / (double)n + eps);
        for (j = 0; j < n; j++)
            out[r * n + j] = (float)(xr[j] * k * (w ? w[j] : 1.0));
    }
}

void ref_layer_norm(const float *x, int64_t rows, int64_t n, const float *w, const float *b,
                    float eps, float *out)
{
    int64_t r, j;
    for (r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        double mean = 0, var = 0, k;
        for (j = 0; j < n; j++)
            mean += xr[j];
        mean /= (double)n;
        for (j = 0; j < n; j++)
            var += (xr[j] - mean) * (xr[j] - mean);
        k = 1.0 / sqrt(var / (double)n + eps);
        for (j = 0; j < n; j++)
            out[r * n + j] = (float)((xr[j] - mean) * k * (w ? w[j] : 1.0) + (b ? b[j] : 0.0));
    }
}

void ref_sum(const float *x, int64_t rows, int64_t n, int mean, float *out)
{
    int64_t r, j;
    for (r = 0; r < rows; r++) {
        double s = 0;
        for (j = 0; j < n; j++)
            s += x[r * n + j];
        out[r] = (float)(mean ? s / (double)n : s);
    }
}

void ref_argmax(const float *x, int64_t rows, int64_t n, float *out)
{
    int64_t r, j;
    for (r = 0; r < rows; r++) {
        int64_t best = 0;
        for (j = 1; j < n; j++)
            if (x[r * n + j] > x[r * n + best])
                best = j;
        out[r] = (float)best;
    }
}
