/* Plain C reference of scaled dot-product attention (prefill and decode). */
#ifndef GLC_REF_ATTENTION_H
#define GLC_REF_ATTENTION_H

#include <stdint.h>

/* The shape of one attention call: q [tq, hq, d], k [tk, hkv, d],
 * v [tk, hkv, dv], out [tq, hq, dv]; query head h reads kv head
 * h / (hq / hkv). Keys j < kv_len are used; with causal, query row i sits
 * at position q_offset + i and sees keys j <= that position. */
typedef struct ref_sdpa_shape {
    int64_t tq, tk, hq, hkv, d, dv;
    float scale;
    int causal;
    int64_t q_offset, kv_len;
} ref_sdpa_shape;

/* Softmax(q k^T * scale) v in double, one row at a time (the full score
 * row: the reference may materialise what the kernels must not). A row
 * that sees no key gets zeros. */
void ref_sdpa(const ref_sdpa_shape *s, const float *q, const float *k, const float *v,
              float *out);

#endif
