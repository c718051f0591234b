/*
 * The llama-style decoder of examples/transformer.c (see llama.h): configs,
 * weights (generation, GGML block quantization, the file format), and the
 * graph of the prefill and decode plans, built with the public API only.
 *
 * Weights file (little-endian), read by bench/torch_ref.py too:
 *   "GLCWTS01"; u32 d, layers, heads, kv_heads, head_dim, ffn, vocab,
 *   max_seq; f32 rope_base, eps; u32 wdtype (+ 256: the Q4_K_M-like
 *   mix), seed, ntensors; then per
 *   tensor: u32 name length, name, u32 dtype (glc_dtype), u32 rank, i64
 *   shape[rank], u64 bytes, the bytes.
 */
#include "llama.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int llama_config(const char *name, llama_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->rope_base = 10000.0f;
    c->eps = 1e-5f;
    c->rope = GLC_ROPE_NEOX;
    c->wdtype = GLC_DTYPE_F32;
    c->cache = GLC_DTYPE_F32;
    c->seed = 1234;
    if (strcmp(name, "tiny") == 0) {
        c->d = 256, c->layers = 4, c->heads = 8, c->kv_heads = 2, c->head_dim = 32;
        c->ffn = 768, c->vocab = 2048, c->max_seq = 256;
        return 1;
    }
    if (strcmp(name, "1b") == 0) {
        c->d = 2048, c->layers = 16, c->heads = 32, c->kv_heads = 8, c->head_dim = 64;
        c->ffn = 8192, c->vocab = 32000, c->max_seq = 2048;
        c->cache = GLC_DTYPE_F16;
        return 1;
    }
    return 0;
}

/* v as stored in f16 (the library's rounding) and read back */
float llama_f16_round(float v)
{
    uint16_t h;
    float r = v;
    if (glc_dtype_from_f32(GLC_DTYPE_F16, &v, 1, &h) == GLC_OK)
        glc_dtype_to_f32(GLC_DTYPE_F16, &h, 1, &r);
    return r;
}

/* ---- weights ---- */

static llama_tensor *add(llama_weights *w, const char *name, int layer, glc_dtype dt, int64_t r,
                         int64_t c)
{
    llama_tensor *t = &w->t[w->n++];
    memset(t, 0, sizeof *t);
    if (layer >= 0)
        snprintf(t->name, sizeof t->name, "%s.%d", name, layer);
    else
        snprintf(t->name, sizeof t->name, "%s", name);
    t->dtype = dt;
    t->rank = c ? 2 : 1;
    t->shape[0] = r;
    t->shape[1] = c;
    t->bytes = c ? (size_t)r * glc_dtype_row_bytes(dt, c) : (size_t)r * 4;
    return t;
}

int llama_layout(const llama_cfg *c, llama_weights *w)
{
    int l, q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim;
    glc_dtype m = c->wdtype, hi = c->mix ? GLC_DTYPE_Q6_K : m; /* a Q4_K_M-like mix */
    w->cfg = *c;
    w->n = 0;
    w->gguf = NULL;
    w->t = calloc((size_t)(12 * c->layers + 4), sizeof *w->t);
    if (!w->t)
        return 0;
    add(w, "tok_emb", -1, m, c->vocab, c->d);
    if (c->rope_freqs)
        add(w, "rope_freqs", -1, GLC_DTYPE_F32, c->head_dim / 2, 0);
    for (l = 0; l < c->layers; l++) {
        add(w, "attn_norm", l, GLC_DTYPE_F32, c->d, 0);
        add(w, "wq", l, m, q, c->d);
        add(w, "wk", l, m, kv, c->d);
        add(w, "wv", l, hi, kv, c->d);
        if (c->qkv_bias) {
            add(w, "bq", l, GLC_DTYPE_F32, q, 0);
            add(w, "bk", l, GLC_DTYPE_F32, kv, 0);
            add(w, "bv", l, GLC_DTYPE_F32, kv, 0);
        }
        add(w, "wo", l, m, c->d, q);
        add(w, "ffn_norm", l, GLC_DTYPE_F32, c->d, 0);
        add(w, "w1", l, m, c->ffn, c->d);
        add(w, "w3", l, m, c->ffn, c->d);
        add(w, "w2", l, hi, c->d, c->ffn);
    }
    add(w, "out_norm", -1, GLC_DTYPE_F32, c->d, 0);
    if (!c->tied)
        add(w, "out", -1, hi, c->vocab, c->d);
    return 1;
}

static uint64_t next_u64(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

int llama_generate(const llama_cfg *c, llama_weights *w)
{
    int i;
    if (!llama_layout(c, w))
        return 0;
    for (i = 0; i < w->n; i++) {
        llama_tensor *t = &w->t[i];
        int64_t rows = t->shape[0], cols = t->rank == 2 ? t->shape[1] : rows, r, j;
        uint64_t s = ((uint64_t)c->seed << 20) ^ (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull;
        /* matrices: std 1/sqrt(fan in); the embedding: std 0.5; norms: 1 +- 0.1 */
        float a = t->rank == 1 ? 0.1f : i == 0 ? 0.866f : sqrtf(3.0f / (float)cols);
        float row[65536];
        if (!(t->data = malloc(t->bytes ? t->bytes : 1)))
            return 0;
        if (t->rank == 1)
            rows = 1;
        for (r = 0; r < rows; r++) {
            unsigned char *dst = t->data + (size_t)r * glc_dtype_row_bytes(t->dtype, cols);
            for (j = 0; j < cols; j++) {
                float u = (float)(next_u64(&s) >> 40) / (float)(1u << 24) * 2.0f - 1.0f;
                row[j] = (t->rank == 1 ? 1.0f : 0.0f) + a * u;
            }
            /* f32 as is, f16 / bf16 rounded, GGML blocks quantized */
            if (glc_dtype_from_f32(t->dtype, row, cols, dst) != GLC_OK)
                return 0;
        }
    }
    return 1;
}

int llama_values(llama_weights *w)
{
    int i;
    for (i = 0; i < w->n; i++) {
        llama_tensor *t = &w->t[i];
        size_t n = (size_t)t->shape[0] * (size_t)(t->rank == 2 ? t->shape[1] : 1);
        if (t->values)
            continue;
        if (!(t->values = malloc(n * 4)) ||
            glc_dtype_to_f32(t->dtype, t->data, (int64_t)n, t->values) != GLC_OK)
            return 0;
    }
    return 1;
}

void llama_free(llama_weights *w)
{
    int i;
    for (i = 0; w->t && i < w->n; i++) {
        if (!w->gguf)
            free(w->t[i].data);
        free(w->t[i].values);
    }
    free(w->t);
    glc_gguf_close(w->gguf);
    w->t = NULL;
    w->gguf = NULL;
    w->n = 0;
}

const llama_tensor *llama_find(const llama_weights *w, const char *name)
{
    int i;
    for (i = 0; i < w->n; i++)
        if (strcmp(w->t[i].name, name) == 0)
            return &w->t[i];
    return NULL;
}

int llama_save(const llama_weights *w, const char *path)
{
    const llama_cfg *c = &w->cfg;
    FILE *f = fopen(path, "wb");
    uint32_t h[11] = {(uint32_t)c->d, (uint32_t)c->layers, (uint32_t)c->heads,
                      (uint32_t)c->kv_heads, (uint32_t)c->head_dim, (uint32_t)c->ffn,
                      (uint32_t)c->vocab, (uint32_t)c->max_seq, 0, 0, 0};
    float fl[2] = {c->rope_base, c->eps};
    uint32_t tail[3] = {(uint32_t)c->wdtype | (c->mix ? 256u : 0u), c->seed, (uint32_t)w->n};
    int i, ok;
    if (!f)
        return 0;
    ok = fwrite("GLCWTS01", 1, 8, f) == 8 && fwrite(h, 4, 8, f) == 8 && fwrite(fl, 4, 2, f) == 2 &&
         fwrite(tail, 4, 3, f) == 3;
    for (i = 0; ok && i < w->n; i++) {
        const llama_tensor *t = &w->t[i];
        uint32_t meta[3] = {(uint32_t)strlen(t->name), (uint32_t)t->dtype, (uint32_t)t->rank};
        uint64_t bytes = t->bytes;
        ok = fwrite(meta, 4, 1, f) == 1 && fwrite(t->name, 1, meta[0], f) == meta[0] &&
             fwrite(meta + 1, 4, 2, f) == 2 &&
             fwrite(t->shape, 8, (size_t)t->rank, f) == (size_t)t->rank &&
             fwrite(&bytes, 8, 1, f) == 1 && fwrite(t->data, 1, t->bytes, f) == t->bytes;
    }
    return fclose(f) == 0 && ok;
}

/* Why a load failed: the message in err, 0 returned. */
static int load_fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return 0;
}

#define HEADER_BYTES 60 /* magic 8, u32 x 8, f32 x 2, u32 x 3 */

/* The bytes of tensor t's record in the file. */
static long long record_bytes(const llama_tensor *t)
{
    return 4 + (long long)strlen(t->name) + 8 + 8LL * t->rank + 8 + (long long)t->bytes;
}

/* Checks the header's config: every field in range, named with its value
 * (unsigned, as stored) when not. */
static int check_config(const char *path, const uint32_t h[8], const float fl[2],
                        const uint32_t tail[3], char *err, size_t len)
{
    static const char *const names[8] = {"d", "layers", "heads", "kv_heads",
                                         "head_dim", "ffn", "vocab", "max_seq"};
    static const uint32_t max[8] = {65536, 1024, 1024, 1024, 1024, 1u << 20, 1u << 22, 1u << 20};
    int i;
    for (i = 0; i < 8; i++)
        if (h[i] < 1 || h[i] > max[i])
            return load_fail(err, len, "%s: header: %s = %u is out of range (1..%u)", path,
                             names[i], h[i], max[i]);
    if (h[2] % h[3] != 0)
        return load_fail(err, len, "%s: header: heads = %u is not a multiple of kv_heads = %u",
                         path, h[2], h[3]);
    /* wdtype: a float or GGML block dtype, bit 8 the Q4_K_M-like mix */
    if (!(glc_dtype_row_bytes((glc_dtype)(tail[0] & 255), 256) &&
          (tail[0] & 255) != GLC_DTYPE_I32 && (tail[0] & 255) != GLC_DTYPE_U32 &&
          (tail[0] & 255) != GLC_DTYPE_U8) ||
        (tail[0] >> 8) > 1 || ((tail[0] >> 8) && (tail[0] & 255) != GLC_DTYPE_Q4_K))
        return load_fail(err, len, "%s: header: wdtype = %u is not a weight dtype", path, tail[0]);
    if (!glc_dtype_row_bytes((glc_dtype)(tail[0] & 255), h[0]) ||
        !glc_dtype_row_bytes((glc_dtype)(tail[0] & 255), h[5]) ||
        !glc_dtype_row_bytes((glc_dtype)(tail[0] & 255), h[2] * h[4]) ||
        ((tail[0] >> 8) && !glc_dtype_row_bytes(GLC_DTYPE_Q6_K, h[5])))
        return load_fail(err, len,
                         "%s: header: %s weights need d, ffn and heads x head_dim in whole "
                         "blocks (d %u, ffn %u, heads x head_dim %u)",
                         path, glc_dtype_name((glc_dtype)(tail[0] & 255)), h[0], h[5], h[2] * h[4]);
    if (!(fl[0] > 0 && isfinite(fl[0])) || !(fl[1] > 0 && isfinite(fl[1])))
        return load_fail(err, len, "%s: header: rope_base %g and eps %g must be finite and > 0",
                         path, (double)fl[0], (double)fl[1]);
    return 1;
}

int llama_load(const char *path, llama_weights *w, char *err, size_t len)
{
    FILE *f;
    char magic[8];
    uint32_t h[8], tail[3];
    float fl[2];
    llama_cfg c;
    long long size, total = HEADER_BYTES, at;
    struct stat sb;
    int i, ok = 1;
    memset(w, 0, sizeof *w);
    if (!(f = fopen(path, "rb")))
        return load_fail(err, len, "%s: %s", path, strerror(errno));
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return load_fail(err, len, "%s: not a regular file", path);
    }
    size = (long long)sb.st_size;
    if (size == 0)
        ok = load_fail(err, len, "%s: empty (0 bytes)", path);
    else if (size < 8 || fread(magic, 1, 8, f) != 8 || memcmp(magic, "GLCWTS", 6) != 0)
        ok = load_fail(err, len, "%s: not a weights file (%lld bytes; it does not start with "
                                 "the magic \"GLCWTS01\")", path, size);
    else if (memcmp(magic + 6, "01", 2) != 0)
        ok = load_fail(err, len, "%s: weights file version \"%.2s\"; this build reads \"01\"",
                       path, magic + 6);
    else if (size < HEADER_BYTES || fread(h, 4, 8, f) != 8 || fread(fl, 4, 2, f) != 2 ||
             fread(tail, 4, 3, f) != 3)
        ok = load_fail(err, len, "%s: %lld bytes, shorter than the %d-byte header (truncated)",
                       path, size, HEADER_BYTES);
    if (ok && (ok = check_config(path, h, fl, tail, err, len))) {
        memset(&c, 0, sizeof c);
        c.d = (int)h[0], c.layers = (int)h[1], c.heads = (int)h[2], c.kv_heads = (int)h[3];
        c.head_dim = (int)h[4], c.ffn = (int)h[5], c.vocab = (int)h[6], c.max_seq = (int)h[7];
        c.rope_base = fl[0], c.eps = fl[1], c.wdtype = (glc_dtype)(tail[0] & 255), c.seed = tail[1];
        c.mix = (int)(tail[0] >> 8);
        c.cache = c.d >= 1024 ? GLC_DTYPE_F16 : GLC_DTYPE_F32;
        if (!llama_layout(&c, w))
            ok = load_fail(err, len, "%s: out of memory", path);
        else if (tail[2] != (uint32_t)w->n)
            ok = load_fail(err, len, "%s: header: %u tensors, the config (%d layers) has %d",
                           path, tail[2], c.layers, w->n);
    }
    /* The size the header implies, before reading (or allocating) any data:
     * a short file names the tensor it ends in, a long one is refused. */
    for (i = 0; ok && i < w->n; i++)
        total += record_bytes(&w->t[i]);
    if (ok && size != total) {
        for (i = 0, at = HEADER_BYTES; i < w->n && at + record_bytes(&w->t[i]) <= size; i++)
            at += record_bytes(&w->t[i]);
        if (size < total)
            ok = load_fail(err, len,
                           "%s: %lld bytes, its header implies %lld: truncated in tensor %d of "
                           "%d (\"%s\", bytes %lld..%lld)",
                           path, size, total, i + 1, w->n, w->t[i].name, at,
                           at + record_bytes(&w->t[i]));
        else
            ok = load_fail(err, len,
                           "%s: %lld bytes, its header implies %lld: %lld bytes after the last "
                           "tensor",
                           path, size, total, size - total);
    }
    for (i = 0; ok && i < w->n; i++) {
        llama_tensor *t = &w->t[i];
        uint32_t n, meta[2];
        int64_t shape[2] = {0, 0};
        uint64_t bytes = 0;
        char name[32];
        ok = fread(&n, 4, 1, f) == 1 && n < sizeof name && fread(name, 1, n, f) == n &&
             fread(meta, 4, 2, f) == 2 && meta[1] >= 1 && meta[1] <= 2 &&
             fread(shape, 8, meta[1], f) == meta[1] && fread(&bytes, 8, 1, f) == 1;
        if (ok) {
            name[n] = '\0';
            ok = strcmp(name, t->name) == 0 && meta[0] == (uint32_t)t->dtype &&
                 (int)meta[1] == t->rank && shape[0] == t->shape[0] && shape[1] == t->shape[1] &&
                 bytes == t->bytes;
        }
        if (!ok) {
            char want[48];
            if (t->rank == 2)
                snprintf(want, sizeof want, "[%lld, %lld]", (long long)t->shape[0],
                         (long long)t->shape[1]);
            else
                snprintf(want, sizeof want, "[%lld]", (long long)t->shape[0]);
            load_fail(err, len,
                      "%s: tensor %d of %d is not \"%s\" (%s %s, %zu bytes) as the header's "
                      "config implies",
                      path, i + 1, w->n, t->name, glc_dtype_name(t->dtype), want, t->bytes);
            break;
        }
        if (!(t->data = malloc(t->bytes ? t->bytes : 1)))
            ok = load_fail(err, len, "%s: out of memory for tensor \"%s\"", path, t->name);
        else if (fread(t->data, 1, t->bytes, f) != t->bytes)
            ok = load_fail(err, len, "%s: read error in tensor \"%s\"", path, t->name);
    }
    fclose(f);
    if (!ok)
        llama_free(w);
    return ok;
}

/* ---- plans ---- */

/* What the plan's graph is built from: the config and where the weights'
 * dtypes come from. */
typedef struct builder {
    glc_graph *g;
    const llama_cfg *c;
    const llama_weights *w;
} builder;

/* Param "name.layer" (or "name"): [r, c] (c = 0: [r], f32), in its
 * tensor's dtype in the weights, or the config's. */
static glc_tensor weight(const builder *b, const char *name, int layer, int64_t r, int64_t c)
{
    const llama_tensor *t;
    char full[32];
    int64_t s[2];
    glc_dtype dt = c ? b->c->wdtype : GLC_DTYPE_F32;
    s[0] = r;
    s[1] = c;
    if (layer >= 0)
        snprintf(full, sizeof full, "%s.%d", name, layer);
    else
        snprintf(full, sizeof full, "%s", name);
    if (b->w && (t = llama_find(b->w, full)) != NULL)
        dt = t->dtype;
    return glc_graph_param(b->g, full, dt, c ? 2 : 1, s);
}

/* x W^T (+ bias): matmul_q for a block dtype, matmul otherwise */
static glc_tensor proj_bias(const builder *b, glc_tensor x, glc_tensor w, glc_tensor bias)
{
    glc_matmul_desc nt = {1};
    if (glc_dtype_size(glc_tensor_dtype(b->g, w)) == 0)
        return glc_matmul_q(b->g, x, w, bias);
    return glc_matmul(b->g, x, w, bias, &nt);
}

static glc_tensor proj(const builder *b, glc_tensor x, glc_tensor w)
{
    return proj_bias(b, x, w, glc_none());
}

/* Q, K or V's bias ("bq", ...) of layer l, or none */
static glc_tensor qkv_bias(const builder *b, const char *name, int l, int64_t n)
{
    return b->c->qkv_bias ? weight(b, name, l, n, 0) : glc_none();
}

glc_status llama_plan(glc_device *dev, const llama_cfg *c, const llama_weights *w, int decode,
                      int max_prompt, uint32_t compile_flags, glc_plan **out)
{
    int64_t q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim, t, len, s2[2], s3[3];
    int64_t one = 1;
    glc_tensor tokens, pos, last, emb, freqs, x, logits;
    glc_rope_desc rope;
    glc_compile_desc cd;
    glc_graph *g;
    glc_status st;
    builder b;
    int l;
    if ((st = glc_graph_create(dev, &g)) != GLC_OK)
        return st;
    b.g = g, b.c = c, b.w = w;
    t = decode == LLAMA_DECODE ? 1 : glc_graph_var(g, "T", 1, max_prompt);
    len = decode != LLAMA_PREFILL ? glc_graph_var(g, "L", 1, c->max_seq) : 0;
    tokens = glc_graph_input(g, "tokens", GLC_DTYPE_I32, 1, &t);
    pos = glc_graph_input(g, "pos", GLC_DTYPE_I32, 1, &t);
    last = glc_graph_input(g, "last", GLC_DTYPE_I32, 1, &one);
    memset(&rope, 0, sizeof rope);
    rope.mode = c->rope;
    rope.base = c->rope_base;
    emb = weight(&b, "tok_emb", -1, c->vocab, c->d);
    freqs = c->rope_freqs ? weight(&b, "rope_freqs", -1, c->head_dim / 2, 0) : glc_none();
    x = glc_get_rows(g, emb, tokens);
    for (l = 0; l < c->layers; l++) {
        glc_tensor h, qv, kvv, vv, kc, vc, a, f, h2;
        glc_sdpa_desc sd;
        char name[32];
        s3[0] = c->max_seq;
        s3[1] = c->kv_heads;
        s3[2] = c->head_dim;
        snprintf(name, sizeof name, "kcache.%d", l);
        kc = glc_graph_handle(g, name, c->cache, 3, s3);
        snprintf(name, sizeof name, "vcache.%d", l);
        vc = glc_graph_handle(g, name, c->cache, 3, s3);
        h = glc_rms_norm(g, x, weight(&b, "attn_norm", l, c->d, 0), c->eps);
        s3[0] = t;
        s3[1] = c->heads;
        qv = glc_reshape(g, proj_bias(&b, h, weight(&b, "wq", l, q, c->d), qkv_bias(&b, "bq", l, q)), 3, s3);
        s3[1] = c->kv_heads;
        kvv = glc_reshape(g, proj_bias(&b, h, weight(&b, "wk", l, kv, c->d), qkv_bias(&b, "bk", l, kv)), 3,
                          s3);
        vv = glc_reshape(g, proj_bias(&b, h, weight(&b, "wv", l, kv, c->d), qkv_bias(&b, "bv", l, kv)), 3,
                         s3);
        qv = glc_rope(g, qv, pos, &rope, freqs);
        kvv = glc_rope(g, kvv, pos, &rope, freqs);
        kc = glc_set_rows(g, kc, kvv, pos);
        vc = glc_set_rows(g, vc, vv, pos);
        memset(&sd, 0, sizeof sd);
        if (decode == LLAMA_DECODE) {
            sd.q_offset = -1;
            sd.kv_len = len;
            a = glc_sdpa_decode(g, qv, kc, vc, &sd);
        } else if (decode == LLAMA_CHUNK) { /* the cache's first L rows, this chunk its last T */
            sd.causal = 1;
            sd.q_offset = -1;
            sd.kv_len = len;
            a = glc_sdpa(g, qv, kc, vc, &sd);
        } else {
            sd.causal = 1;
            a = glc_sdpa(g, qv, kvv, vv, &sd);
        }
        s2[0] = t;
        s2[1] = q;
        x = glc_add(g, x, proj(&b, glc_reshape(g, a, 2, s2), weight(&b, "wo", l, c->d, q)));
        h2 = glc_rms_norm(g, x, weight(&b, "ffn_norm", l, c->d, 0), c->eps);
        f = glc_mul(g, glc_unary(g, GLC_UNARY_SILU,
                                 proj(&b, h2, weight(&b, "w1", l, c->ffn, c->d)), 0),
                    proj(&b, h2, weight(&b, "w3", l, c->ffn, c->d)));
        x = glc_add(g, x, proj(&b, f, weight(&b, "w2", l, c->d, c->ffn)));
    }
    x = glc_rms_norm(g, x, weight(&b, "out_norm", -1, c->d, 0), c->eps);
    logits = proj(&b, glc_get_rows(g, x, last),
                  c->tied ? emb : weight(&b, "out", -1, c->vocab, c->d));
    glc_graph_output(g, "logits", logits);
    glc_graph_output(g, "next", glc_argmax(g, logits));
    cd.flags = compile_flags;
    /* a failure's message (a builder's included) is the device's: the
     * caller prints it */
    st = glc_graph_compile(g, &cd, out);
    glc_graph_destroy(g);
    return st;
}

glc_status llama_set_params(glc_plan *p, const llama_weights *w)
{
    glc_status st;
    int i;
    for (i = 0; i < w->n; i++)
        if ((st = glc_plan_set_param_typed(p, w->t[i].name, w->t[i].data, w->t[i].bytes,
                                           w->t[i].dtype)) != GLC_OK)
            return st;
    return GLC_OK;
}

glc_status llama_reset_cache(glc_plan *p, const llama_cfg *c)
{
    size_t bytes = (size_t)c->max_seq * (size_t)(c->kv_heads * c->head_dim) *
                   (c->cache == GLC_DTYPE_F16 ? 2 : 4);
    void *zeros = calloc(1, bytes);
    glc_status st = GLC_OK;
    char name[32];
    int l, kv;
    if (!zeros)
        return GLC_ERR_OUT_OF_MEMORY;
    for (l = 0; l < c->layers && st == GLC_OK; l++)
        for (kv = 0; kv < 2 && st == GLC_OK; kv++) {
            snprintf(name, sizeof name, "%ccache.%d", kv ? 'v' : 'k', l);
            st = glc_plan_bind_handle(p, name, zeros, bytes);
        }
    free(zeros);
    return st;
}
