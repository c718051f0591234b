/*
 * The llama-style decoder's weights (llama.h) as a llama-architecture GGUF
 * file, llama.cpp's format, through the library's GGUF reader and writer.
 *
 * Names: our tok_emb, attn_norm.N, wq.N, wk.N, wv.N, wo.N, ffn_norm.N,
 * w1.N (gate), w3.N (up), w2.N (down), out_norm, out are GGUF's
 * token_embd, blk.N.attn_norm, blk.N.attn_q / attn_k / attn_v /
 * attn_output, blk.N.ffn_norm, blk.N.ffn_gate / ffn_up / ffn_down,
 * output_norm, output (".weight" after each); no output tensor means the
 * logits use token_embd (tied), and an optional rope_freqs.weight [hd/2]
 * divides each pair's frequency.
 *
 * RoPE pairing: llama.cpp runs the llama architecture with adjacent pairs
 * (2i, 2i + 1), and its converter permutes the rows of each head of a
 * Hugging Face checkpoint's Q and K (written for rotate-half, NeoX pairs
 * (i, i + hd/2)) so that the two agree: row 2i + s of a head comes from row
 * s * hd/2 + i. Our own weights are NeoX; the writer applies that
 * permutation and the loader runs the file's rows with adjacent pairs, so a
 * model saved and loaded computes the same logits (tests/test_llama_gguf.c
 * checks it, and that the other pairing does not).
 */
#include "llama.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* GGUF value types */
enum { GG_U32 = 4, GG_I32 = 5, GG_F32 = 6, GG_BOOL = 7, GG_STRING = 8 };

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return 0;
}

int64_t llama_rope_row(int64_t row, int head_dim, int inverse)
{
    int64_t h = row / head_dim, r = row % head_dim, half = head_dim / 2;
    if (!inverse) /* result row r = 2i + s comes from s * half + i */
        return h * head_dim + (r % 2) * half + r / 2;
    return h * head_dim + (r % half) * 2 + r / half; /* input row s * half + i goes to 2i + s */
}

/* Our name of a tensor -> GGUF's */
static void gguf_name(const char *ours, char *out, size_t len)
{
    static const char *const map[][2] = {
        {"attn_norm", "attn_norm.weight"}, {"wq", "attn_q.weight"},   {"wk", "attn_k.weight"},
        {"wv", "attn_v.weight"},           {"bq", "attn_q.bias"},     {"bk", "attn_k.bias"},
        {"bv", "attn_v.bias"},             {"wo", "attn_output.weight"},
        {"ffn_norm", "ffn_norm.weight"},   {"w1", "ffn_gate.weight"}, {"w3", "ffn_up.weight"},
        {"w2", "ffn_down.weight"}};
    const char *dot = strchr(ours, '.');
    size_t i;
    if (!dot) {
        snprintf(out, len, "%s.weight",
                 strcmp(ours, "tok_emb") == 0    ? "token_embd"
                 : strcmp(ours, "out_norm") == 0 ? "output_norm"
                 : strcmp(ours, "out") == 0      ? "output"
                                                 : ours);
        return;
    }
    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i][0]) == (size_t)(dot - ours) && strncmp(ours, map[i][0], (size_t)(dot - ours)) == 0) {
            snprintf(out, len, "blk.%s.%s", dot + 1, map[i][1]);
            return;
        }
    snprintf(out, len, "%s", ours);
}

/* Q and K (weights and biases) are permuted between NeoX rows and
 * adjacent-pair rows */
static int is_qk(const char *name)
{
    return (name[0] == 'w' || name[0] == 'b') && (name[1] == 'q' || name[1] == 'k') && name[2] == '.';
}

/* ---- loading ---- */

/* An integer key "<arch>.<name>" >= 1 (and <= max): 0 and the reason when
 * missing or out of range, def when missing and def > 0. */
static int key_int(const glc_gguf *f, const char *arch, const char *name, int64_t def, int64_t max,
                   int *out, char *err, size_t len)
{
    char key[96];
    int64_t v;
    snprintf(key, sizeof key, "%s.%s", arch, name);
    if (glc_gguf_value_type(f, key) < 0) {
        if (def > 0) {
            *out = (int)def;
            return 1;
        }
        return fail(err, len, "key %s is missing", key);
    }
    if (glc_gguf_get_int(f, key, &v) != GLC_OK)
        return fail(err, len, "key %s: not an integer (value type %d)", key, glc_gguf_value_type(f, key));
    if (v < 1 || v > max)
        return fail(err, len, "key %s = %lld is out of range (1..%lld)", key, (long long)v, (long long)max);
    *out = (int)v;
    return 1;
}

static int key_float(const glc_gguf *f, const char *arch, const char *name, double def, float *out,
                     char *err, size_t len)
{
    char key[96];
    double v = def;
    snprintf(key, sizeof key, "%s.%s", arch, name);
    if (glc_gguf_value_type(f, key) >= 0 && glc_gguf_get_float(f, key, &v) != GLC_OK)
        return fail(err, len, "key %s: not a number (value type %d)", key, glc_gguf_value_type(f, key));
    if (glc_gguf_value_type(f, key) < 0 && def <= 0)
        return fail(err, len, "key %s is missing", key);
    if (!(v > 0 && v < 1e30))
        return fail(err, len, "key %s = %g must be finite and > 0", key, v);
    *out = (float)v;
    return 1;
}

/* The config from the llama.* keys; c->vocab and c->tied from the tensors. */
static int read_config(const glc_gguf *f, int max_seq_cap, llama_cfg *c, char *err, size_t len)
{
    const char *arch, *scaling;
    char a[8], key[96];
    size_t n, sn;
    int key_len = 0, val_len = 0, rope_dim = 0;
    int64_t i;
    glc_gguf_tensor t;
    memset(c, 0, sizeof *c);
    if (glc_gguf_get_string(f, "general.architecture", &arch, &n) != GLC_OK)
        return fail(err, len, "key general.architecture is missing or not a string");
    if ((n == 5 && memcmp(arch, "llama", 5) == 0) || (n == 5 && memcmp(arch, "qwen2", 5) == 0))
        memcpy(a, arch, 5), a[5] = '\0';
    else
        return fail(err, len, "general.architecture is \"%.*s\"; this loader reads \"llama\" and "
                              "\"qwen2\"", (int)(n > 64 ? 64 : n), arch);
    if (!key_int(f, a, "embedding_length", 0, 65536, &c->d, err, len) ||
        !key_int(f, a, "block_count", 0, 1024, &c->layers, err, len) ||
        !key_int(f, a, "attention.head_count", 0, 1024, &c->heads, err, len) ||
        !key_int(f, a, "attention.head_count_kv", c->heads, 1024, &c->kv_heads, err, len) ||
        !key_int(f, a, "feed_forward_length", 0, 1 << 20, &c->ffn, err, len) ||
        !key_int(f, a, "context_length", 0, 1 << 24, &c->max_seq, err, len) ||
        !key_int(f, a, "attention.key_length", c->d / c->heads, 1024, &key_len, err, len) ||
        !key_int(f, a, "attention.value_length", key_len, 1024, &val_len, err, len) ||
        !key_int(f, a, "rope.dimension_count", key_len, 1024, &rope_dim, err, len) ||
        !key_float(f, a, "rope.freq_base", 10000.0, &c->rope_base, err, len) ||
        !key_float(f, a, "attention.layer_norm_rms_epsilon", 0, &c->eps, err, len))
        return 0;
    if (c->heads % c->kv_heads != 0)
        return fail(err, len, "%s.attention.head_count %d is not a multiple of head_count_kv %d", a,
                    c->heads, c->kv_heads);
    if (key_len != val_len || rope_dim != key_len || key_len % 2)
        return fail(err, len,
                    "head sizes: key_length %d, value_length %d, rope.dimension_count %d: this "
                    "loader needs them equal and even",
                    key_len, val_len, rope_dim);
    snprintf(key, sizeof key, "%s.rope.scaling.type", a);
    if (glc_gguf_get_string(f, key, &scaling, &sn) == GLC_OK && !(sn == 4 && memcmp(scaling, "none", 4) == 0))
        return fail(err, len, "%s \"%.*s\": not supported (only none)", key, (int)(sn > 32 ? 32 : sn),
                    scaling);
    c->head_dim = key_len;
    if (max_seq_cap > 0 && c->max_seq > max_seq_cap)
        c->max_seq = max_seq_cap;
    /* llama.cpp: adjacent pairs for llama (Q, K permuted by its converter),
     * NeoX halves for qwen2 (rows as trained); qwen2 has Q, K, V biases */
    c->rope = a[0] == 'l' ? GLC_ROPE_NORMAL : GLC_ROPE_NEOX;
    c->qkv_bias = a[0] == 'q';
    c->cache = c->d >= 1024 ? GLC_DTYPE_F16 : GLC_DTYPE_F32;
    if ((i = glc_gguf_find_tensor(f, "token_embd.weight")) < 0)
        return fail(err, len, "tensor token_embd.weight is missing");
    glc_gguf_tensor_at(f, i, &t);
    if (t.rank != 2 || t.shape[0] < 1 || t.shape[0] > (1 << 22))
        return fail(err, len, "tensor token_embd.weight: rank %d, %lld rows: want [vocab, %d]",
                    t.rank, (long long)t.shape[0], c->d);
    c->vocab = (int)t.shape[0];
    c->tied = glc_gguf_find_tensor(f, "output.weight") < 0;
    c->rope_freqs = glc_gguf_find_tensor(f, "rope_freqs.weight") >= 0;
    return 1;
}

int llama_load_gguf(const char *path, int max_seq_cap, llama_weights *w, char *err, size_t len)
{
    glc_gguf *f = NULL;
    llama_cfg c;
    int i, counts[64] = {0}, best = 0;
    memset(w, 0, sizeof *w);
    if (glc_gguf_open(path, &f) != GLC_OK)
        return fail(err, len, "%s", glc_device_errmsg(NULL));
    if (!read_config(f, max_seq_cap, &c, err, len) || (!llama_layout(&c, w) && !fail(err, len, "out of memory"))) {
        glc_gguf_close(f);
        llama_free(w);
        return 0;
    }
    w->gguf = f;
    for (i = 0; i < w->n; i++) {
        llama_tensor *lt = &w->t[i];
        char name[64], want[48];
        glc_gguf_tensor t;
        int64_t k = glc_gguf_find_tensor(f, (gguf_name(lt->name, name, sizeof name), name));
        glc_dtype dt;
        if (lt->rank == 2)
            snprintf(want, sizeof want, "[%lld, %lld]", (long long)lt->shape[0], (long long)lt->shape[1]);
        else
            snprintf(want, sizeof want, "[%lld]", (long long)lt->shape[0]);
        if (k < 0) {
            fail(err, len, "tensor %s is missing (want %s)", name, want);
            break;
        }
        glc_gguf_tensor_at(f, k, &t);
        if (t.rank != lt->rank || t.shape[0] != lt->shape[0] || (lt->rank == 2 && t.shape[1] != lt->shape[1])) {
            char got[96];
            int d, o = 0;
            for (d = 0; d < t.rank; d++)
                o += snprintf(got + o, sizeof got - (size_t)o, "%s%lld", d ? ", " : "[",
                              (long long)t.shape[d]);
            fail(err, len, "tensor %s: shape %s]: the config wants %s", name, got, want);
            break;
        }
        dt = glc_dtype_from_ggml_type(t.ggml_type);
        if (lt->rank == 1 ? dt != GLC_DTYPE_F32
                          : !(dt == GLC_DTYPE_F32 || dt == GLC_DTYPE_F16 || dt == GLC_DTYPE_BF16 ||
                              (dt && glc_dtype_size(dt) == 0))) {
            fail(err, len, "tensor %s: GGML type %u (%s%s): %s", name, t.ggml_type,
                 glc_gguf_type_name(t.ggml_type), dt ? "" : ", not a type glcompute computes with",
                 lt->rank == 1 ? "norms and rope_freqs must be f32"
                               : "matrices must be f32, f16, bf16 or a GGML block type glcompute has");
            break;
        }
        lt->dtype = dt;
        lt->bytes = (size_t)t.bytes;
        lt->data = (unsigned char *)(uintptr_t)t.data;
        if (lt->rank == 2 && (int)dt < 64 && ++counts[dt] > counts[best])
            best = (int)dt;
    }
    if (i < w->n) {
        llama_free(w);
        return 0;
    }
    w->cfg.wdtype = (glc_dtype)best;
    return 1;
}

/* ---- saving ---- */

/* The demo's vocabulary: <unk> <s> </s>, the 256 byte tokens, "▁", then
 * pieces of letters ("a", "▁a", "ab", "▁ab", "abc", ...) until vocab is
 * full; scores fall with the index. */
static char **demo_vocab(int vocab, float **scores, int32_t **types)
{
    char **tok = calloc((size_t)vocab, sizeof *tok);
    int i, n = 0, len;
    *scores = malloc((size_t)vocab * sizeof **scores);
    *types = malloc((size_t)vocab * sizeof **types);
    if (!tok || !*scores || !*types)
        goto oom;
    for (i = 0; i < vocab; i++) {
        char s[16];
        int type = 1;
        if (i < 3)
            snprintf(s, sizeof s, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>"), type = i ? 3 : 2;
        else if (i < 259)
            snprintf(s, sizeof s, "<0x%02X>", i - 3), type = 6;
        else if (i == 259)
            snprintf(s, sizeof s, "\xe2\x96\x81");
        else {
            /* piece n: lengths 1, 2, 3 of letters, each bare and after "▁" */
            int k = n++, m, j, o = 0;
            for (len = 1, m = 26; k >= 2 * m; k -= 2 * m, m *= 26)
                len++;
            if (k >= m) {
                memcpy(s, "\xe2\x96\x81", 3);
                o = 3;
                k -= m;
            }
            for (j = len - 1; j >= 0; j--, k /= 26)
                s[o + j] = (char)('a' + k % 26);
            s[o + len] = '\0';
        }
        if (!(tok[i] = malloc(strlen(s) + 1)))
            goto oom;
        memcpy(tok[i], s, strlen(s) + 1);
        (*scores)[i] = i < 259 ? 0.0f : -(float)(i - 259);
        (*types)[i] = type;
    }
    return tok;
oom:
    for (i = 0; tok && i < vocab; i++)
        free(tok[i]);
    free(tok);
    free(*scores);
    free(*types);
    *scores = NULL;
    *types = NULL;
    return NULL;
}

/* The llama.cpp file type (general.file_type) of a model whose matrices
 * are dt, mix: the Q4_K_M-like one (-1: none) */
static int file_type(glc_dtype dt, int mix)
{
    static const struct { glc_dtype dt; int ft; } t[] = {
        {GLC_DTYPE_F32, 0},  {GLC_DTYPE_F16, 1},  {GLC_DTYPE_Q4_0, 2},  {GLC_DTYPE_Q4_1, 3},
        {GLC_DTYPE_Q8_0, 7}, {GLC_DTYPE_Q5_0, 8}, {GLC_DTYPE_Q5_1, 9},  {GLC_DTYPE_Q4_K, 14},
        {GLC_DTYPE_Q5_K, 16}, {GLC_DTYPE_Q6_K, 18}, {GLC_DTYPE_BF16, 32}};
    size_t i;
    for (i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].dt == dt)
            return mix && dt == GLC_DTYPE_Q4_K ? 15 : t[i].ft;
    return -1;
}

int llama_save_gguf(const llama_weights *w, const char *path, char *err, size_t len)
{
    const llama_cfg *c = &w->cfg;
    glc_gguf_writer *g = NULL;
    unsigned char **perm = calloc((size_t)w->n, sizeof *perm);
    float *scores = NULL, f;
    int32_t *types = NULL;
    char **vocab = NULL;
    uint32_t u;
    int i, ok = 0, ft = file_type(c->wdtype, c->mix);
    /* qwen2 (Q, K, V biases) runs NeoX pairs, llama adjacent ones */
    const char *arch = c->qkv_bias ? "qwen2" : "llama";
    glc_rope_mode file_rope = c->qkv_bias ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
    char key[96];
    glc_status st = GLC_OK;
    if (!perm || glc_gguf_writer_create(&g) != GLC_OK || !(vocab = demo_vocab(c->vocab, &scores, &types))) {
        fail(err, len, "out of memory");
        goto done;
    }
#define ARCH_KEY(name) (snprintf(key, sizeof key, "%s.%s", arch, name), key)
#define SET_U32(name, v) (u = (uint32_t)(v), glc_gguf_set_value(g, ARCH_KEY(name), GG_U32, &u))
#define SET_F32(name, v) (f = (float)(v), glc_gguf_set_value(g, ARCH_KEY(name), GG_F32, &f))
    u = 1;
    if ((st = glc_gguf_set_string(g, "general.architecture", arch)) != GLC_OK ||
        (st = glc_gguf_set_string(g, "general.name", "glcompute demo")) != GLC_OK ||
        (ft >= 0 && (u = (uint32_t)ft, st = glc_gguf_set_value(g, "general.file_type", GG_U32, &u)) != GLC_OK) ||
        (st = SET_U32("context_length", c->max_seq)) != GLC_OK ||
        (st = SET_U32("embedding_length", c->d)) != GLC_OK ||
        (st = SET_U32("block_count", c->layers)) != GLC_OK ||
        (st = SET_U32("feed_forward_length", c->ffn)) != GLC_OK ||
        (st = SET_U32("attention.head_count", c->heads)) != GLC_OK ||
        (st = SET_U32("attention.head_count_kv", c->kv_heads)) != GLC_OK ||
        (st = SET_U32("attention.key_length", c->head_dim)) != GLC_OK ||
        (st = SET_U32("attention.value_length", c->head_dim)) != GLC_OK ||
        (st = SET_U32("rope.dimension_count", c->head_dim)) != GLC_OK ||
        (st = SET_F32("rope.freq_base", c->rope_base)) != GLC_OK ||
        (st = SET_F32("attention.layer_norm_rms_epsilon", c->eps)) != GLC_OK ||
        (st = SET_U32("vocab_size", c->vocab)) != GLC_OK ||
        (st = glc_gguf_set_string(g, "tokenizer.ggml.model", "llama")) != GLC_OK ||
        (st = glc_gguf_set_string_array(g, "tokenizer.ggml.tokens", (const char *const *)vocab,
                                        (uint64_t)c->vocab)) != GLC_OK ||
        (st = glc_gguf_set_array(g, "tokenizer.ggml.scores", GG_F32, (uint64_t)c->vocab, scores)) != GLC_OK ||
        (st = glc_gguf_set_array(g, "tokenizer.ggml.token_type", GG_I32, (uint64_t)c->vocab, types)) != GLC_OK ||
        (u = 0, st = glc_gguf_set_value(g, "tokenizer.ggml.unknown_token_id", GG_U32, &u)) != GLC_OK ||
        (u = 1, st = glc_gguf_set_value(g, "tokenizer.ggml.bos_token_id", GG_U32, &u)) != GLC_OK ||
        (u = 2, st = glc_gguf_set_value(g, "tokenizer.ggml.eos_token_id", GG_U32, &u)) != GLC_OK ||
        (u = 1, st = glc_gguf_set_value(g, "tokenizer.ggml.add_bos_token", GG_BOOL, &u)) != GLC_OK)
        goto done;
#undef SET_U32
#undef SET_F32
#undef ARCH_KEY
    for (i = 0; i < w->n && st == GLC_OK; i++) {
        const llama_tensor *t = &w->t[i];
        const unsigned char *data = t->data;
        char name[64];
        int ggml = glc_dtype_ggml_type(t->dtype);
        if (ggml < 0) {
            fail(err, len, "tensor %s: dtype %s has no GGML type", t->name, glc_dtype_name(t->dtype));
            goto done;
        }
        if (c->rope != file_rope && is_qk(t->name)) { /* rows (a bias: values) reordered */
            size_t row = t->bytes / (size_t)t->shape[0];
            int64_t r;
            if (!(perm[i] = malloc(t->bytes))) {
                fail(err, len, "out of memory");
                goto done;
            }
            for (r = 0; r < t->shape[0]; r++)
                memcpy(perm[i] + (size_t)r * row,
                       t->data + (size_t)llama_rope_row(r, c->head_dim, file_rope == GLC_ROPE_NEOX) * row,
                       row);
            data = perm[i];
        }
        gguf_name(t->name, name, sizeof name);
        st = glc_gguf_add_tensor(g, name, (uint32_t)ggml, t->rank, t->shape, data, t->bytes);
    }
    if (st == GLC_OK)
        st = glc_gguf_write(g, path);
    ok = st == GLC_OK;
done:
    if (!ok && st != GLC_OK)
        fail(err, len, "%s", glc_device_errmsg(NULL));
    for (i = 0; perm && i < w->n; i++)
        free(perm[i]);
    for (i = 0; vocab && i < c->vocab; i++)
        free(vocab[i]);
    free(perm);
    free(vocab);
    free(scores);
    free(types);
    glc_gguf_writer_destroy(g);
    return ok;
}
