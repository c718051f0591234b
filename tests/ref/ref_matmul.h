/*
 * Plain C reference of the dense matmul: batched, b transposed or not,
 * batch dims of b broadcast, optional bias; double accumulation.
 */
#ifndef GLC_REF_MATMUL_H
#define GLC_REF_MATMUL_H

#include <stdint.h>

/* a: [batch, M, K] (batch = the product of a's batch dims, ab[0..1] the
 * outer and inner of up to two of them, 1 where absent); b: per batch
 * (bb[i] = 1: broadcast) [N, K] when nt, else [K, N]; out [batch, M, N]. */
void ref_matmul(const float *a, const float *b, const float *bias, const int64_t ab[2],
                const int64_t bb[2], int64_t m, int64_t n, int64_t k, int nt, float *out);

#endif
