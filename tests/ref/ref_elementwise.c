/* Plain C references of the elementwise ops, in double where it helps. */
#include "ref_elementwise.h"

#include <math.h>

static int64_t dim_at(int rank, const int64_t *shape, int i4)
{
    int k = i4 - (4 - rank);
    return k >= 0 ? shape[k] : 1;
}

static int64_t index_of(int rank, const int64_t *shape, const int64_t c[4])
{
    int64_t idx = 0;
    int i;
    for (i = 0; i < 4; i++) {
        int64_t d = dim_at(rank, shape, i);
        idx = idx * d + (d == 1 ? 0 : c[i]);
    }
    return idx;
}

void ref_binary(int op, const float *a, int ra, const int64_t *sa, const float *b, int rb,
                const int64_t *sb, float *out, int ro, const int64_t *so)
{
    int64_t c[4], d[4], n = 1, i;
    int k;
    for (k = 0; k < 4; k++) {
        d[k] = dim_at(ro, so, k);
        n *= d[k];
    }
    for (i = 0; i < n; i++) {
        int64_t r = i;
        float x, y;
        for (k = 3; k >= 0; k--) {
            c[k] = r % d[k];
            r /= d[k];
        }
        x = a[index_of(ra, sa, c)];
        y = b[index_of(rb, sb, c)];
        out[i] = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
    }
}

double ref_act(int op, double v, double param, double param2)
{
    switch (op) {
    case GLC_UNARY_GELU: return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case GLC_UNARY_GELU_ERF: return 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
    case GLC_UNARY_SILU: return v / (1.0 + exp(-v));
    case GLC_UNARY_RELU: return v > 0 ? v : 0;
    case GLC_UNARY_EXP: return exp(v);
    case GLC_UNARY_TANH: return tanh(v);
    case GLC_UNARY_SOFTCAP: return param * tanh(v / param);
    default: return v * param + param2;
    }
}

void ref_unary(int op, const float *x, float *out, size_t n, float param, float param2)
{
    size_t i;
    for (i = 0; i < n; i++)
        out[i] = (float)ref_act(op, x[i], param, param2);
}
