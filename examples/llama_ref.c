/*
 * The plain C reference of the llama-style decoder (llama.h): the model
 * written out as loops over the weights' f32 values, in the textbook
 * order, accumulating in double. Its KV cache keeps what the GPU's keeps
 * (values rounded to f16 when the cache is f16), so the two see the same
 * numbers. Slow on purpose; meant for the tiny config.
 */
#include "llama.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct llama_ref {
    const llama_weights *w;
    float *kc, *vc; /* [layers][max_seq][kv_heads * head_dim] */
};

llama_ref *llama_ref_create(const llama_weights *w)
{
    const llama_cfg *c = &w->cfg;
    size_t n = (size_t)c->layers * (size_t)c->max_seq * (size_t)(c->kv_heads * c->head_dim);
    llama_ref *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->w = w;
    r->kc = calloc(n, 4);
    r->vc = calloc(n, 4);
    if (!r->kc || !r->vc) {
        llama_ref_destroy(r);
        return NULL;
    }
    return r;
}

void llama_ref_destroy(llama_ref *r)
{
    if (!r)
        return;
    free(r->kc);
    free(r->vc);
    free(r);
}

static const float *vals(const llama_ref *r, const char *name, int layer)
{
    char full[32];
    if (layer >= 0)
        snprintf(full, sizeof full, "%s.%d", name, layer);
    else
        snprintf(full, sizeof full, "%s", name);
    return llama_find(r->w, full)->values;
}

static void rms_norm(const float *x, const float *w, int d, float eps, float *out)
{
    double s = 0;
    int i;
    for (i = 0; i < d; i++)
        s += (double)x[i] * x[i];
    s = 1.0 / sqrt(s / d + eps);
    for (i = 0; i < d; i++)
        out[i] = (float)(x[i] * s) * w[i];
}

/* out[n] = x[k] W^T, W [n, k] */
static void matvec(const float *x, const float *w, int n, int k, float *out)
{
    int i, j;
    for (i = 0; i < n; i++) {
        double s = 0;
        for (j = 0; j < k; j++)
            s += (double)x[j] * w[(size_t)i * k + j];
        out[i] = (float)s;
    }
}

/* Pair i rotated by theta_i = pos * base^(-2i/hd) / factor_i (factors:
 * rope_freqs, or 1): (i, i + hd/2) for NeoX, (2i, 2i + 1) otherwise. */
static void rope(float *v, int heads, int hd, int pos, float base, glc_rope_mode mode,
                 const float *factors)
{
    int h, i;
    for (h = 0; h < heads; h++)
        for (i = 0; i < hd / 2; i++) {
            double th = pos * pow(base, -2.0 * i / hd) / (factors ? factors[i] : 1.0);
            float *a = v + h * hd + (mode == GLC_ROPE_NEOX ? i : 2 * i);
            float *b = a + (mode == GLC_ROPE_NEOX ? hd / 2 : 1);
            double x0 = *a, x1 = *b;
            *a = (float)(x0 * cos(th) - x1 * sin(th));
            *b = (float)(x0 * sin(th) + x1 * cos(th));
        }
}

static void one_token(llama_ref *r, int token, int pos, float *x)
{
    const llama_cfg *c = &r->w->cfg;
    int d = c->d, hd = c->head_dim, q = c->heads * hd, kv = c->kv_heads * hd, l, i, h, p;
    int group = c->heads / c->kv_heads;
    float *h1 = malloc((size_t)d * 4), *qv = malloc((size_t)q * 4), *att = malloc((size_t)q * 4);
    float *o = malloc((size_t)d * 4), *f1 = malloc((size_t)c->ffn * 4), *f3 = malloc((size_t)c->ffn * 4);
    double *sc = malloc((size_t)(pos + 1) * sizeof *sc);
    const float *freqs = c->rope_freqs ? vals(r, "rope_freqs", -1) : NULL;
    memcpy(x, vals(r, "tok_emb", -1) + (size_t)token * d, (size_t)d * 4);
    for (l = 0; l < c->layers; l++) {
        float *kl = r->kc + ((size_t)l * c->max_seq) * kv, *vl = r->vc + ((size_t)l * c->max_seq) * kv;
        rms_norm(x, vals(r, "attn_norm", l), d, c->eps, h1);
        matvec(h1, vals(r, "wq", l), q, d, qv);
        matvec(h1, vals(r, "wk", l), kv, d, kl + (size_t)pos * kv);
        matvec(h1, vals(r, "wv", l), kv, d, vl + (size_t)pos * kv);
        if (c->qkv_bias) {
            const float *bq = vals(r, "bq", l), *bk = vals(r, "bk", l), *bv = vals(r, "bv", l);
            for (i = 0; i < q; i++)
                qv[i] += bq[i];
            for (i = 0; i < kv; i++) {
                kl[(size_t)pos * kv + i] += bk[i];
                vl[(size_t)pos * kv + i] += bv[i];
            }
        }
        rope(qv, c->heads, hd, pos, c->rope_base, c->rope, freqs);
        rope(kl + (size_t)pos * kv, c->kv_heads, hd, pos, c->rope_base, c->rope, freqs);
        if (c->cache == GLC_DTYPE_F16)
            for (i = 0; i < kv; i++) {
                kl[(size_t)pos * kv + i] = llama_f16_round(kl[(size_t)pos * kv + i]);
                vl[(size_t)pos * kv + i] = llama_f16_round(vl[(size_t)pos * kv + i]);
            }
        for (h = 0; h < c->heads; h++) {
            const float *qh = qv + h * hd;
            int g = h / group;
            double mx = -1e300, sum = 0;
            for (p = 0; p <= pos; p++) {
                double s = 0;
                for (i = 0; i < hd; i++)
                    s += (double)qh[i] * kl[(size_t)p * kv + g * hd + i];
                sc[p] = s / sqrt((double)hd);
                if (sc[p] > mx)
                    mx = sc[p];
            }
            for (p = 0; p <= pos; p++)
                sum += (sc[p] = exp(sc[p] - mx));
            for (i = 0; i < hd; i++) {
                double a = 0;
                for (p = 0; p <= pos; p++)
                    a += sc[p] * vl[(size_t)p * kv + g * hd + i];
                att[h * hd + i] = (float)(a / sum);
            }
        }
        matvec(att, vals(r, "wo", l), d, q, o);
        for (i = 0; i < d; i++)
            x[i] += o[i];
        rms_norm(x, vals(r, "ffn_norm", l), d, c->eps, h1);
        matvec(h1, vals(r, "w1", l), c->ffn, d, f1);
        matvec(h1, vals(r, "w3", l), c->ffn, d, f3);
        for (i = 0; i < c->ffn; i++)
            f1[i] = f1[i] / (1.0f + expf(-f1[i])) * f3[i];
        matvec(f1, vals(r, "w2", l), d, c->ffn, o);
        for (i = 0; i < d; i++)
            x[i] += o[i];
    }
    free(h1);
    free(qv);
    free(att);
    free(o);
    free(f1);
    free(f3);
    free(sc);
}

void llama_ref_forward(llama_ref *r, const int32_t *tokens, int n, int pos0, float *logits)
{
    const llama_cfg *c = &r->w->cfg;
    float *x = malloc((size_t)c->d * 4), *xn = malloc((size_t)c->d * 4);
    int i;
    for (i = 0; i < n; i++)
        one_token(r, tokens[i], pos0 + i, x);
    rms_norm(x, vals(r, "out_norm", -1), c->d, c->eps, xn);
    matvec(xn, vals(r, c->tied ? "tok_emb" : "out", -1), c->vocab, c->d, logits);
    free(x);
    free(xn);
}
