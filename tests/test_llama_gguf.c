/*
 * The decoder's GGUF path (examples/llama_gguf.c): a model saved as a
 * llama GGUF file and loaded back computes what the original computes.
 *
 * The original is our NeoX-RoPE model; the file holds its Q and K rows
 * permuted as llama.cpp's converter permutes a Hugging Face checkpoint's,
 * and the loader runs them with adjacent-pair RoPE, as llama.cpp runs the
 * llama architecture. So equal logits (C reference of the original vs the
 * C reference and the GPU plans of the loaded file) show that the pairing
 * and the permutation agree; the same file run with the other pairing
 * must differ, which shows the comparison can see a wrong pairing (text
 * from a wrong pairing looks plausible; logits do not). Plus: the config
 * and tensors read back, tied output and rope_freqs, and every refusal of
 * the loader on files written here with the public GGUF writer.
 */
#include "testutil.h"

#include "device.h" /* the buffer limit, lowered */
#include "llama.h"

#include <math.h>
#include <unistd.h>

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/glc_llama_gguf_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A small model: d 64, 2 layers, 4 heads (2 kv) of 16, ffn 96, vocab 300;
 * for 256-value blocks (and the Q4_K_M-like mix, wdtype Q4_K and mix set
 * by the caller) d 256, heads of 64, ffn 512. */
static void small_cfg(llama_cfg *c, glc_dtype wdtype, int tied, int freqs, int bias)
{
    int big = glc_dtype_row_bytes(wdtype, 32) == 0;
    assert_true(llama_config("tiny", c));
    c->d = big ? 256 : 64, c->layers = 2, c->heads = 4, c->kv_heads = 2, c->head_dim = big ? 64 : 16;
    c->ffn = big ? 512 : 96, c->vocab = 300, c->max_seq = 32;
    c->wdtype = wdtype;
    c->tied = tied;
    c->rope_freqs = freqs;
    c->qkv_bias = bias;
    c->seed = 77;
}

static double nmse(const float *a, const float *b, int n)
{
    double e = 0, s = 0;
    int i;
    for (i = 0; i < n; i++) {
        e += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        s += (double)b[i] * b[i];
    }
    return e / (s > 0 ? s : 1);
}

/* The reference's logits after a 7-token prompt and then after each of 3
 * more tokens: 4 x vocab floats. */
static void ref_logits(llama_weights *w, float *out)
{
    static const int32_t prompt[10] = {5, 299, 17, 3, 260, 42, 7, 100, 1, 250};
    llama_ref *r;
    int i;
    assert_true(llama_values(w));
    assert_non_null(r = llama_ref_create(w));
    llama_ref_forward(r, prompt, 7, 0, out);
    for (i = 0; i < 3; i++)
        llama_ref_forward(r, prompt + 7 + i, 1, 7 + i, out + (size_t)(i + 1) * w->cfg.vocab);
    llama_ref_destroy(r);
}

static void save_load(llama_weights *orig, const char *name, llama_weights *back)
{
    char path[128], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!llama_save_gguf(orig, path, err, sizeof err))
        fail_msg("save %s: %s", path, err);
    if (!llama_load_gguf(path, 0, back, err, sizeof err))
        fail_msg("load %s: %s", path, err);
}

/* Save, load, compare: config, bytes (Q and K through the permutation),
 * and the reference's logits with either pairing. */
static void round_trip(glc_dtype wdtype, int tied, int freqs, int bias, int mix)
{
    llama_cfg c;
    llama_weights w, g;
    const llama_cfg *b = &g.cfg;
    float *lo, *lg;
    int i;
    small_cfg(&c, wdtype, tied, freqs, bias);
    c.mix = mix;
    assert_true(llama_generate(&c, &w));
    save_load(&w, "m.gguf", &g);
    /* llama files: adjacent pairs, Q and K rows permuted; qwen2 (biases):
     * NeoX, rows as they are */
    assert_int_equal(b->d, c.d);
    assert_int_equal(b->layers, c.layers);
    assert_int_equal(b->heads, c.heads);
    assert_int_equal(b->kv_heads, c.kv_heads);
    assert_int_equal(b->head_dim, c.head_dim);
    assert_int_equal(b->ffn, c.ffn);
    assert_int_equal(b->vocab, c.vocab);
    assert_int_equal(b->max_seq, c.max_seq);
    assert_true(b->rope_base == c.rope_base && b->eps == c.eps);
    assert_int_equal(b->rope, bias ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL);
    assert_int_equal(b->qkv_bias, bias);
    assert_int_equal(b->tied, tied);
    assert_int_equal(b->rope_freqs, freqs);
    assert_int_equal(b->wdtype, wdtype); /* the mix: q4_K the most common */
    assert_int_equal(g.n, w.n);
    for (i = 0; i < w.n; i++) {
        const llama_tensor *t = &w.t[i], *u = &g.t[i];
        assert_string_equal(u->name, t->name);
        assert_int_equal(u->dtype, t->dtype);
        assert_int_equal(u->bytes, t->bytes);
        if (!bias && (t->name[0] == 'w' || t->name[0] == 'b') && (t->name[1] == 'q' || t->name[1] == 'k')) {
            size_t row = t->bytes / (size_t)t->shape[0];
            int64_t r;
            for (r = 0; r < t->shape[0]; r++)
                assert_memory_equal(u->data + (size_t)r * row,
                                    t->data + (size_t)llama_rope_row(r, c.head_dim, 0) * row, row);
            assert_int_equal(llama_rope_row(llama_rope_row(5, 16, 0), 16, 1), 5);
        } else {
            assert_memory_equal(u->data, t->data, t->bytes);
        }
    }
    lo = malloc(4 * sizeof *lo * (size_t)c.vocab);
    lg = malloc(4 * sizeof *lg * (size_t)c.vocab);
    assert_non_null(lo);
    assert_non_null(lg);
    ref_logits(&w, lo);
    ref_logits(&g, lg);
    for (i = 0; i < 4; i++) {
        double e = nmse(lg + (size_t)i * c.vocab, lo + (size_t)i * c.vocab, c.vocab);
        if (e > 1e-10)
            fail_msg("%s tied %d freqs %d bias %d: step %d: nmse %g between the loaded file and "
                     "the original", glc_dtype_name(wdtype), tied, freqs, bias, i, e);
    }
    /* the same file with the other pairing must not match: the check sees it */
    g.cfg.rope = bias ? GLC_ROPE_NORMAL : GLC_ROPE_NEOX;
    for (i = 0; i < g.n; i++) {
        free(g.t[i].values);
        g.t[i].values = NULL;
    }
    ref_logits(&g, lg);
    assert_true(nmse(lg + (size_t)3 * c.vocab, lo + (size_t)3 * c.vocab, c.vocab) > 1e-4);
    free(lo);
    free(lg);
    llama_free(&w);
    llama_free(&g);
}

static void test_round_trip(void **state)
{
    (void)state;
    round_trip(GLC_DTYPE_F32, 0, 0, 0, 0);
    round_trip(GLC_DTYPE_F16, 1, 0, 0, 0);
    round_trip(GLC_DTYPE_Q8_0, 0, 1, 0, 0);
    round_trip(GLC_DTYPE_Q4_0, 1, 1, 0, 0);
    round_trip(GLC_DTYPE_F32, 1, 0, 1, 0); /* qwen2 */
    round_trip(GLC_DTYPE_Q8_0, 0, 1, 1, 0);
    /* every other tensor type, and the Q4_K_M-like mix */
    round_trip(GLC_DTYPE_BF16, 0, 0, 0, 0);
    round_trip(GLC_DTYPE_Q4_1, 1, 0, 0, 0);
    round_trip(GLC_DTYPE_Q5_0, 0, 0, 0, 0);
    round_trip(GLC_DTYPE_Q5_1, 0, 1, 1, 0);
    round_trip(GLC_DTYPE_Q4_K, 0, 0, 0, 0);
    round_trip(GLC_DTYPE_Q5_K, 1, 0, 0, 0);
    round_trip(GLC_DTYPE_Q6_K, 0, 0, 1, 0);
    round_trip(GLC_DTYPE_Q4_K, 0, 1, 0, 1);
}

/* The GPU plans on the loaded file (fused or not) against the reference of
 * the original model: a llama file (adjacent pairs, q8_0, tied, rope_freqs)
 * and a qwen2 one (NeoX, f16, Q K V biases); then both in f32 on a device
 * whose bindings hold less than the embedding (split params). On a device
 * without subgroups (llvmpipe) the fused decode plan is made with
 * GLC_MATMUL=matvec: the GPUs' decode kernels (matvec's lanes across K,
 * matmul_q's split variant with emulated subgroups) run the model. */
static void plans_on_gguf(glc_device *dev, glc_dtype wdtype, int tied, int freqs, int bias, int mix)
{
    static const int32_t tokens[10] = {5, 299, 17, 3, 260, 42, 7, 100, 1, 250};
    static const int32_t pos[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    llama_cfg c;
    llama_weights w, g;
    float *lo, logits[300];
    int fuse, i;
    small_cfg(&c, wdtype, tied, freqs, bias);
    c.mix = mix;
    assert_true(llama_generate(&c, &w));
    save_load(&w, "p.gguf", &g);
    lo = malloc(4 * sizeof *lo * (size_t)c.vocab);
    assert_non_null(lo);
    ref_logits(&w, lo);
    for (fuse = 0; fuse < 2; fuse++) {
        glc_plan *pre = NULL, *dec = NULL;
        uint32_t flags = fuse ? 0 : GLC_COMPILE_NO_FUSE;
        int mm = dev->env.matmul;
        if (llama_plan(dev, &g.cfg, &g, 0, 8, flags, &pre) != GLC_OK)
            fail_msg("plan: %s", glc_device_errmsg(dev));
        if (fuse && !dev->info.features.subgroup)
            dev->env.matmul = GLC__MATMUL_MATVEC;
        if (llama_plan(dev, &g.cfg, &g, 1, 1, flags, &dec) != GLC_OK)
            fail_msg("decode plan: %s", glc_device_errmsg(dev));
        dev->env.matmul = mm;
        assert_int_equal(glc_plan_share(dec, pre, GLC_SHARE_PARAMS | GLC_SHARE_HANDLES), GLC_OK);
        assert_int_equal(llama_set_params(pre, &g), GLC_OK);
        assert_int_equal(llama_reset_cache(pre, &g.cfg), GLC_OK);
        for (i = 0; i < 4; i++) {
            glc_plan *p = i ? dec : pre;
            glc_plan_var v;
            const void *in[3], *out[2];
            int32_t last = i ? 0 : 6;
            double e;
            v.name = i ? "L" : "T";
            v.value = i ? 7 + i : 7;
            in[0] = i ? tokens + 6 + i : tokens;
            in[1] = i ? pos + 6 + i : pos;
            in[2] = &last;
            assert_int_equal(glc_plan_set_vars(p, &v, 1), GLC_OK);
            assert_int_equal(glc_plan_run_raw(p, in, out), GLC_OK);
            memcpy(logits, out[0], sizeof logits);
            e = nmse(logits, lo + (size_t)i * c.vocab, c.vocab);
            if (e > 1e-5)
                fail_msg("%s bias %d fuse %d step %d: GPU on the GGUF file vs the original's "
                         "reference: nmse %g", glc_dtype_name(wdtype), bias, fuse, i, e);
        }
        glc_plan_destroy(dec);
        glc_plan_destroy(pre);
    }
    free(lo);
    llama_free(&w);
    llama_free(&g);
}

static void test_plans_on_gguf(void **state)
{
    glc_device *dev = tu_device(NULL);
    (void)state;
    plans_on_gguf(dev, GLC_DTYPE_Q8_0, 1, 1, 0, 0);
    plans_on_gguf(dev, GLC_DTYPE_F16, 0, 0, 1, 0);
    plans_on_gguf(dev, GLC_DTYPE_Q4_K, 0, 0, 0, 1); /* the Q4_K_M-like mix */
    plans_on_gguf(dev, GLC_DTYPE_Q5_1, 1, 0, 1, 0);
    /* the embedding (300 x 64 f32, tied: get_rows and the logits) and the
     * output past a 32 KiB binding: split params */
    dev->info.limits.max_ssbo_size = 32768;
    plans_on_gguf(dev, GLC_DTYPE_F32, 1, 0, 0, 0);
    plans_on_gguf(dev, GLC_DTYPE_F32, 0, 0, 1, 0);
    glc_device_destroy(dev);
}

/* A prompt in chunks (examples/llama.c LLAMA_CHUNK, what generate runs for
 * prompts past --batch): the first chunk through the prefill plan, the rest
 * through the chunk plan at cache length L, each chunk's last logits
 * against the C reference fed the same chunks. Seeded cases: prompts of 1
 * to the whole cache (32), chunks of 1 to 8 tokens, fused and not, on a
 * llama q8_0 file (adjacent pairs, tied), a qwen2 f16 one (NeoX, biases)
 * and the Q4_K_M-like mix (Q, K and V unpacked). */
static void chunks_on_gguf(glc_device *dev, glc_dtype wdtype, int tied, int bias, int mix,
                           uint64_t seed)
{
    llama_cfg c;
    llama_weights w, g;
    float *want;
    int32_t tokens[32], pos[32];
    int cs, i;
    small_cfg(&c, wdtype, tied, 0, bias);
    c.mix = mix;
    assert_true(llama_generate(&c, &w));
    save_load(&w, "c.gguf", &g);
    assert_true(llama_values(&g));
    assert_non_null(want = malloc(sizeof *want * (size_t)c.vocab));
    for (i = 0; i < 32; i++)
        pos[i] = i;
    for (cs = 0; cs < 6; cs++) {
        glc_plan *pre = NULL, *chk = NULL;
        uint32_t flags = cs % 2 ? GLC_COMPILE_NO_FUSE : 0;
        llama_ref *r;
        int n = (int)tu_range(&seed, 1, 32), batch = (int)tu_range(&seed, 1, 8), p, t;
        if (cs == 0)
            n = 32, batch = 8; /* the cache full, the largest chunk */
        for (i = 0; i < n; i++)
            tokens[i] = (int32_t)tu_range(&seed, 0, (uint32_t)c.vocab - 1);
        if (llama_plan(dev, &g.cfg, &g, LLAMA_PREFILL, batch, flags, &pre) != GLC_OK ||
            llama_plan(dev, &g.cfg, &g, LLAMA_CHUNK, batch, flags, &chk) != GLC_OK)
            fail_msg("plan: %s", glc_device_errmsg(dev));
        assert_int_equal(glc_plan_share(chk, pre, GLC_SHARE_PARAMS | GLC_SHARE_HANDLES), GLC_OK);
        assert_int_equal(llama_set_params(pre, &g), GLC_OK);
        assert_int_equal(llama_reset_cache(pre, &g.cfg), GLC_OK);
        assert_non_null(r = llama_ref_create(&g));
        for (p = 0; p < n; p += t) {
            glc_plan_var v[2] = {{"T", 0}, {"L", 0}};
            const void *in[3], *out[2];
            int32_t last;
            double e;
            t = n - p < batch ? n - p : batch;
            last = t - 1;
            v[0].value = t;
            v[1].value = p + t;
            in[0] = tokens + p;
            in[1] = pos + p;
            in[2] = &last;
            assert_int_equal(glc_plan_set_vars(p ? chk : pre, v, p ? 2 : 1), GLC_OK);
            assert_int_equal(glc_plan_run_raw(p ? chk : pre, in, out), GLC_OK);
            llama_ref_forward(r, tokens + p, t, p, want);
            e = nmse(out[0], want, c.vocab);
            if (e > 1e-5)
                fail_msg("%s%s, prompt %d in chunks of %d, %s: the chunk at %d: nmse %g against "
                         "the reference", glc_dtype_name(wdtype), mix ? " mix" : "", n, batch,
                         flags ? "unfused" : "fused", p, e);
        }
        llama_ref_destroy(r);
        glc_plan_destroy(chk);
        glc_plan_destroy(pre);
    }
    free(want);
    llama_free(&w);
    llama_free(&g);
}

/* Seeded random models (GLC_TEST_SEED picks others): weight type (every
 * 32-value block type, f32, f16, bf16), width, heads and KV heads, head
 * size, FFN width, vocabulary, 1-3 layers, tied output, rope pairing,
 * rope_freqs, Q/K/V biases, an f16 or f32 cache; a prompt of 1-12 tokens
 * through the prefill plan, then 4 tokens through the decode plan, fused
 * and not (the fused decode on a device without subgroups also with
 * GLC_MATMUL=matvec: the GPUs' decode kernels), each step's logits against
 * the C reference. The decode fusions (qkv, rope_qkv, sdpa_rope, glu_out,
 * mm_norm, rows_first, qkv_rope) meet shapes here no hand-written case has. */
static void random_model(glc_device *dev, uint64_t *seed, int k)
{
    static const glc_dtype types[] = {GLC_DTYPE_F32,  GLC_DTYPE_F16,  GLC_DTYPE_BF16,
                                      GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_0, GLC_DTYPE_Q4_1,
                                      GLC_DTYPE_Q5_0, GLC_DTYPE_Q5_1};
    static const int hds[] = {8, 16, 32};
    llama_cfg c;
    llama_weights w;
    int32_t tokens[16], pos[16];
    float *want;
    int n, i, fuse, hq;
    assert_true(llama_config("tiny", &c));
    c.wdtype = types[tu_range(seed, 0, sizeof types / sizeof types[0] - 1)];
    c.d = 32 * (int)tu_range(seed, 1, 3);
    c.head_dim = hds[tu_range(seed, 0, 2)];
    do /* Q's width a whole number of 32-value blocks (wo's K) */
        c.heads = (int)tu_range(seed, 1, 8);
    while ((c.heads * c.head_dim) % 32);
    for (hq = 0, c.kv_heads = 1; hq < 3; hq++) { /* a divisor of the heads */
        int kv = (int)tu_range(seed, 1, (uint32_t)c.heads);
        if (c.heads % kv == 0)
            c.kv_heads = kv;
    }
    c.ffn = 32 * (int)tu_range(seed, 1, 5);
    c.vocab = (int)tu_range(seed, 40, 300);
    c.layers = (int)tu_range(seed, 1, 3);
    c.max_seq = 16;
    c.tied = (int)tu_range(seed, 0, 1);
    c.rope = tu_range(seed, 0, 1) ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
    c.rope_freqs = (int)tu_range(seed, 0, 1);
    c.qkv_bias = (int)tu_range(seed, 0, 1);
    c.cache = tu_range(seed, 0, 1) ? GLC_DTYPE_F16 : GLC_DTYPE_F32;
    c.seed = (uint32_t)tu_rand(seed);
    n = (int)tu_range(seed, 1, 12);
    for (i = 0; i < 16; i++) {
        tokens[i] = (int32_t)tu_range(seed, 0, (uint32_t)c.vocab - 1);
        pos[i] = i;
    }
    assert_true(llama_generate(&c, &w));
    assert_true(llama_values(&w));
    assert_non_null(want = malloc(sizeof *want * (size_t)c.vocab * 5));
    { /* the reference: the prompt's last logits, then each decoded token's */
        llama_ref *r = llama_ref_create(&w);
        assert_non_null(r);
        llama_ref_forward(r, tokens, n, 0, want);
        for (i = 0; i < 4; i++)
            llama_ref_forward(r, tokens + n + i, 1, n + i, want + (size_t)(i + 1) * c.vocab);
        llama_ref_destroy(r);
    }
    for (fuse = 0; fuse < 3; fuse++) {
        glc_plan *pre = NULL, *dec = NULL;
        uint32_t flags = fuse ? 0 : GLC_COMPILE_NO_FUSE;
        int mm = dev->env.matmul;
        if (fuse == 2 && dev->info.features.subgroup)
            break; /* (GPUs: the fused plan is already theirs) */
        if (llama_plan(dev, &c, &w, LLAMA_PREFILL, 12, flags, &pre) != GLC_OK)
            fail_msg("model %d: prefill plan: %s", k, glc_device_errmsg(dev));
        if (fuse == 2)
            dev->env.matmul = GLC__MATMUL_MATVEC;
        if (llama_plan(dev, &c, &w, LLAMA_DECODE, 1, flags, &dec) != GLC_OK)
            fail_msg("model %d: decode plan: %s", k, glc_device_errmsg(dev));
        dev->env.matmul = mm;
        assert_int_equal(glc_plan_share(dec, pre, GLC_SHARE_PARAMS | GLC_SHARE_HANDLES), GLC_OK);
        assert_int_equal(llama_set_params(pre, &w), GLC_OK);
        assert_int_equal(llama_reset_cache(pre, &c), GLC_OK);
        for (i = 0; i < 5; i++) {
            glc_plan *p = i ? dec : pre;
            glc_plan_var v;
            const void *in[3], *out[2];
            int32_t last = i ? 0 : n - 1;
            double e;
            v.name = i ? "L" : "T";
            v.value = i ? n + i : n;
            in[0] = i ? tokens + n + i - 1 : tokens;
            in[1] = i ? pos + n + i - 1 : pos;
            in[2] = &last;
            assert_int_equal(glc_plan_set_vars(p, &v, 1), GLC_OK);
            assert_int_equal(glc_plan_run_raw(p, in, out), GLC_OK);
            e = nmse(out[0], want + (size_t)i * c.vocab, c.vocab);
            if (!(e <= 1e-5))
                fail_msg("model %d (%s, d %d, %d layers, %d/%d heads of %d, ffn %d, vocab %d, "
                         "tied %d, %s, freqs %d, bias %d, %s cache, prompt %d), %s: step %d: "
                         "nmse %g against the reference",
                         k, glc_dtype_name(c.wdtype), c.d, c.layers, c.heads, c.kv_heads,
                         c.head_dim, c.ffn, c.vocab, c.tied,
                         c.rope == GLC_ROPE_NEOX ? "neox" : "adjacent pairs", c.rope_freqs,
                         c.qkv_bias, glc_dtype_name(c.cache), n,
                         fuse == 0 ? "unfused" : fuse == 1 ? "fused" : "fused, GLC_MATMUL=matvec",
                         i, e);
        }
        glc_plan_destroy(dec);
        glc_plan_destroy(pre);
    }
    free(want);
    llama_free(&w);
}

static void test_random_models(void **state)
{
    glc_device *dev = tu_device(NULL);
    uint64_t seed = 0x11a3a;
    int k;
    (void)state;
    for (k = 0; k < 6; k++)
        random_model(dev, &seed, k);
    glc_device_destroy(dev);
}

static void test_chunked_prefill(void **state)
{
    glc_device *dev = tu_device(NULL);
    (void)state;
    chunks_on_gguf(dev, GLC_DTYPE_Q8_0, 1, 0, 0, 11);
    chunks_on_gguf(dev, GLC_DTYPE_F16, 0, 1, 0, 12);
    chunks_on_gguf(dev, GLC_DTYPE_Q4_K, 0, 0, 1, 13);
    glc_device_destroy(dev);
}

/* ---- refusals: small files written here, one fault each ---- */

enum fault {
    OK_FILE, ARCH, NO_EMBED_LEN, BAD_HEADS, KV_NOT_DIVIDING, KEY_LEN_ODD, SCALING, NO_EPS,
    NO_TENSOR, BAD_SHAPE, NORM_F16, TYPE_Q8_1, EPS_STRING, NFAULTS
};

static void write_model(const char *path, enum fault fault)
{
    static float zeros[64 * 64];
    static const uint16_t hzeros[64];
    glc_gguf_writer *w;
    uint32_t u;
    float f = 1e-5f;
    int l, i;
    char name[64];
    static const char *const mats[] = {"attn_q", "attn_k", "attn_v", "attn_output",
                                       "ffn_gate", "ffn_up", "ffn_down"};
    /* d 32, 1 layer, heads 2, kv 1, head 16, ffn 32, vocab 8 */
    const int64_t shapes[][2] = {{32, 32}, {16, 32}, {16, 32}, {32, 32}, {32, 32}, {32, 32}, {32, 32}};
    assert_int_equal(glc_gguf_writer_create(&w), GLC_OK);
    assert_int_equal(glc_gguf_set_string(w, "general.architecture", fault == ARCH ? "falcon" : "llama"), GLC_OK);
#define U32(key, v) (u = (v), assert_int_equal(glc_gguf_set_value(w, key, 4, &u), GLC_OK))
    if (fault != NO_EMBED_LEN)
        U32("llama.embedding_length", 32);
    U32("llama.block_count", 1);
    U32("llama.attention.head_count", fault == BAD_HEADS ? 0 : 2);
    U32("llama.attention.head_count_kv", fault == KV_NOT_DIVIDING ? 3 : 1);
    U32("llama.feed_forward_length", 32);
    U32("llama.context_length", 64);
    if (fault == KEY_LEN_ODD)
        U32("llama.attention.key_length", 15);
#undef U32
    if (fault == SCALING)
        assert_int_equal(glc_gguf_set_string(w, "llama.rope.scaling.type", "yarn"), GLC_OK);
    if (fault == EPS_STRING)
        assert_int_equal(glc_gguf_set_string(w, "llama.attention.layer_norm_rms_epsilon", "1e-5"), GLC_OK);
    else if (fault != NO_EPS)
        assert_int_equal(glc_gguf_set_value(w, "llama.attention.layer_norm_rms_epsilon", 6, &f), GLC_OK);
    {
        int64_t s[2] = {8, 32};
        assert_int_equal(glc_gguf_add_tensor(w, "token_embd.weight", 0, 2, s, zeros, 8 * 32 * 4), GLC_OK);
        s[0] = 32;
        assert_int_equal(glc_gguf_add_tensor(w, "output_norm.weight", 0, 1, s, zeros, 32 * 4), GLC_OK);
    }
    for (l = 0; l < 1; l++) {
        int64_t s = 32;
        snprintf(name, sizeof name, "blk.%d.attn_norm.weight", l);
        if (fault == NORM_F16)
            assert_int_equal(glc_gguf_add_tensor(w, name, 1, 1, &s, hzeros, 64), GLC_OK);
        else
            assert_int_equal(glc_gguf_add_tensor(w, name, 0, 1, &s, zeros, 128), GLC_OK);
        snprintf(name, sizeof name, "blk.%d.ffn_norm.weight", l);
        assert_int_equal(glc_gguf_add_tensor(w, name, 0, 1, &s, zeros, 128), GLC_OK);
        for (i = 0; i < 7; i++) {
            int64_t sh[2] = {shapes[i][0], shapes[i][1]};
            if (fault == NO_TENSOR && i == 5)
                continue;
            if (fault == BAD_SHAPE && i == 6)
                sh[0] = 31;
            snprintf(name, sizeof name, "blk.%d.%s.weight", l, mats[i]);
            if (fault == TYPE_Q8_1 && i == 2) /* Q8_1: 36 bytes a block of 32 */
                assert_int_equal(glc_gguf_add_tensor(w, name, 9, 2, sh, zeros, 16 * 36), GLC_OK);
            else
                assert_int_equal(glc_gguf_add_tensor(w, name, 0, 2, sh, zeros, (uint64_t)(sh[0] * sh[1] * 4)),
                                 GLC_OK);
        }
    }
    assert_int_equal(glc_gguf_write(w, path), GLC_OK);
    glc_gguf_writer_destroy(w);
}

static void test_refusals(void **state)
{
    static const char *const want[NFAULTS] = {
        NULL,
        "general.architecture is \"falcon\"; this loader reads \"llama\" and \"qwen2\"",
        "key llama.embedding_length is missing",
        "key llama.attention.head_count = 0 is out of range",
        "head_count 2 is not a multiple of head_count_kv 3",
        "key_length 15, value_length 15, rope.dimension_count 15",
        "llama.rope.scaling.type \"yarn\": not supported",
        "key llama.attention.layer_norm_rms_epsilon is missing",
        "tensor blk.0.ffn_up.weight is missing (want [32, 32])",
        "tensor blk.0.ffn_down.weight: shape [31, 32]: the config wants [32, 32]",
        "tensor blk.0.attn_norm.weight: GGML type 1 (f16): norms and rope_freqs must be f32",
        "tensor blk.0.attn_v.weight: GGML type 9 (q8_1, not a type glcompute computes with)",
        "key llama.attention.layer_norm_rms_epsilon: not a number",
    };
    char path[128], err[512];
    llama_weights w;
    int f;
    (void)state;
    snprintf(path, sizeof path, "%s/r.gguf", dir);
    for (f = 0; f < NFAULTS; f++) {
        write_model(path, (enum fault)f);
        memset(err, 0, sizeof err);
        if (f == OK_FILE) {
            if (!llama_load_gguf(path, 0, &w, err, sizeof err))
                fail_msg("the good file: %s", err);
            assert_int_equal(w.cfg.head_dim, 16);
            assert_true(w.cfg.tied);
            assert_int_equal(w.cfg.vocab, 8);
            llama_free(&w);
            assert_true(llama_load_gguf(path, 16, &w, err, sizeof err));
            assert_int_equal(w.cfg.max_seq, 16); /* the cap */
            llama_free(&w);
            continue;
        }
        memset(&w, 0x5a, sizeof w);
        assert_false(llama_load_gguf(path, 0, &w, err, sizeof err));
        tu_assert_contains(err, want[f]);
        assert_null(w.t);
        assert_null(w.gguf);
    }
    snprintf(path, sizeof path, "%s/missing.gguf", dir);
    assert_false(llama_load_gguf(path, 0, &w, err, sizeof err));
    assert_true(err[0] != '\0');
    snprintf(path, sizeof path, "%s/junk.gguf", dir);
    {
        FILE *fp = fopen(path, "wb");
        assert_non_null(fp);
        fputs("GGUF but not really", fp);
        fclose(fp);
    }
    assert_false(llama_load_gguf(path, 0, &w, err, sizeof err));
    assert_true(err[0] != '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_plans_on_gguf),
        cmocka_unit_test(test_chunked_prefill),
        cmocka_unit_test(test_random_models),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
