/*
 * Plain C references of the data-movement ops (see ref_data.h): loops over
 * multi-indices, no cleverness, so they are easy to trust.
 */
#include "ref_data.h"

#include <string.h>

void ref_get_rows(const float *table, int64_t v, int64_t d, const int32_t *ids, int64_t n,
                  float *out)
{
    int64_t i, j;
    for (i = 0; i < n; i++)
        for (j = 0; j < d; j++)
            out[i * d + j] = ids[i] >= 0 && ids[i] < v ? table[(int64_t)ids[i] * d + j] : 0.0f;
}

void ref_set_rows(const float *src, int64_t n, int64_t d, const int32_t *ids, float *dst,
                  int64_t v)
{
    int64_t i;
    for (i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < v)
            memcpy(dst + (int64_t)ids[i] * d, src + i * d, (size_t)d * sizeof *dst);
}

/* Row-major strides of shape. */
static void strides(int rank, const int64_t *shape, int64_t *s)
{
    int64_t acc = 1;
    int i;
    for (i = rank - 1; i >= 0; i--) {
        s[i] = acc;
        acc *= shape[i];
    }
}

/* Advances the multi-index idx over shape (last dim fastest). */
static void next_index(int rank, const int64_t *shape, int64_t *idx)
{
    int i;
    for (i = rank - 1; i >= 0; i--) {
        if (++idx[i] < shape[i])
            return;
        idx[i] = 0;
    }
}

static int64_t count(int rank, const int64_t *shape)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

void ref_permute(const float *x, int rank, const int64_t *shape, const int *perm, float *out)
{
    int64_t xs[8], os[8], idx[8] = {0}, n = count(rank, shape), e;
    int i;
    strides(rank, shape, xs);
    for (i = 0; i < rank; i++)
        os[i] = shape[perm ? perm[i] : i];
    for (e = 0; e < n; e++) {
        int64_t src = 0;
        for (i = 0; i < rank; i++)
            src += idx[i] * xs[perm ? perm[i] : i];
        out[e] = x[src];
        next_index(rank, os, idx);
    }
}

void ref_concat(const float *a, const int64_t *ashape, const float *b, const int64_t *bshape,
                int rank, int axis, float *out)
{
    int64_t as[8], bs[8], os[8], idx[8] = {0}, n, e;
    int i;
    strides(rank, ashape, as);
    strides(rank, bshape, bs);
    for (i = 0; i < rank; i++)
        os[i] = i == axis ? ashape[i] + bshape[i] : ashape[i];
    n = count(rank, os);
    for (e = 0; e < n; e++) {
        int64_t off = 0;
        if (idx[axis] < ashape[axis]) {
            for (i = 0; i < rank; i++)
                off += idx[i] * as[i];
            out[e] = a[off];
        } else {
            for (i = 0; i < rank; i++)
                off += (i == axis ? idx[i] - ashape[axis] : idx[i]) * bs[i];
            out[e] = b[off];
        }
        next_index(rank, os, idx);
    }
}

void ref_slice(const float *x, int rank, const int64_t *shape, int axis, int64_t start,
               int64_t len, float *out)
{
    int64_t xs[8], os[8], idx[8] = {0}, n, e;
    int i;
    strides(rank, shape, xs);
    for (i = 0; i < rank; i++)
        os[i] = i == axis ? len : shape[i];
    n = count(rank, os);
    for (e = 0; e < n; e++) {
        int64_t off = 0;
        for (i = 0; i < rank; i++)
            off += (i == axis ? idx[i] + start : idx[i]) * xs[i];
        out[e] = x[off];
        next_index(rank, os, idx);
    }
}
