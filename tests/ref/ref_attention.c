/* Plain C reference of scaled dot-product attention, in double. */
#include "ref_attention.h"

#include <math.h>
#include <stdlib.h>

void ref_sdpa(const ref_sdpa_shape *s, const float *q, const float *k, const float *v,
              float *out)
{
    double *score = malloc((size_t)(s->kv_len > 0 ? s->kv_len : 1) * sizeof *score);
    double *acc = malloc((size_t)s->dv * sizeof *acc);
    int64_t group = s->hq / s->hkv, i, h, j, c;
    for (i = 0; i < s->tq; i++) {
        int64_t end = s->kv_len;
        if (s->causal && s->q_offset + i + 1 < end)
            end = s->q_offset + i + 1;
        for (h = 0; h < s->hq; h++) {
            const float *qr = q + (i * s->hq + h) * s->d;
            int64_t hk = h / group;
            double mx = -INFINITY, sum = 0;
            for (c = 0; c < s->dv; c++)
                acc[c] = 0;
            for (j = 0; j < end; j++) {
                const float *kr = k + (j * s->hkv + hk) * s->d;
                double dot = 0;
                for (c = 0; c < s->d; c++)
                    dot += (double)qr[c] * kr[c];
                score[j] = dot * s->scale;
                if (score[j] > mx)
                    mx = score[j];
            }
            for (j = 0; j < end; j++) {
                const float *vr = v + (j * s->hkv + hk) * s->dv;
                double p = exp(score[j] - mx);
                sum += p;
                for (c = 0; c < s->dv; c++)
                    acc[c] += p * vr[c];
            }
            for (c = 0; c < s->dv; c++)
                out[(i * s->hq + h) * s->dv + c] = sum > 0 ? (float)(acc[c] / sum) : 0.0f;
        }
    }
    free(score);
    free(acc);
}
