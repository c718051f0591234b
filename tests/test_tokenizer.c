/*
 * The tokenizer (src/core/tokenizer.c) on vocabularies this test writes
 * with the library's GGUF writer and reads back (the tokenizer outlives
 * the file it came from):
 *  - hand-worked encodings for "llama" (SentencePiece: merges by score, a
 *    score tie going to the leftmost pair, byte fallback for a 2- and a
 *    4-byte character, the unknown token without byte tokens, BOS and EOS
 *    by the file and by flag, control and user-defined tokens parsed or
 *    not, the longest special match) and "gpt2" (merges by rank, the same
 *    pair leftmost first, Llama 3's whole-piece rule), decode and
 *    token_bytes both ways;
 *  - the three pre-tokenizers on hand-split texts (Unicode letters,
 *    numbers, white space, contractions, invalid bytes);
 *  - independent references: SentencePiece merging rescanning every pair
 *    each step (highest score, leftmost), GPT-2 BPE likewise by rank, and
 *    a pre-tokenizer that tries the regular expressions' alternatives as a
 *    backtracking matcher would, against the library on thousands of
 *    seeded random strings over random vocabularies (multi-byte and
 *    invalid UTF-8 included);
 *  - decode(encode(s)) == s for random byte strings, both models;
 *  - streaming decode: the chunks join to decode's text and none ends
 *    inside a character that later bytes complete;
 *  - every refusal of a bad file and of bad arguments, each on a good file
 *    with one fault, with its message; outputs untouched; allocation
 *    failures injected one by one;
 *  - 100 KB texts (a quadratic encoder would show in the suite's time).
 */
#include "testutil.h"

#include "alloc.h"

#include <math.h>
#include <unistd.h>

/* The pre-tokenizer's split (internal, src/core/tokenizer.c). */
size_t glc__tokenizer_split(int pre, const unsigned char *s, size_t n, size_t i);

#define LL "\xe2\x96\x81" /* U+2581, SentencePiece's space */

/* ---- vocabularies written as GGUF files ---- */

typedef struct tvocab {
    const char *model, *pre; /* pre NULL: absent */
    const char *const *tok;
    int n;
    const float *score;  /* NULL: absent */
    const int32_t *type; /* NULL: absent */
    const char *const *merge;
    int nmerge; /* -1: no merges key */
    int64_t bos, eos, unk, eot; /* -1: absent */
    int add_bos, add_eos, add_space; /* -1: absent */
} tvocab;

static tvocab tv_init(const char *model, const char *const *tok, int n)
{
    tvocab v;
    memset(&v, 0, sizeof v);
    v.model = model;
    v.tok = tok;
    v.n = n;
    v.nmerge = -1;
    v.bos = v.eos = v.unk = v.eot = -1;
    v.add_bos = v.add_eos = v.add_space = -1;
    return v;
}

static void put_id(glc_gguf_writer *w, const char *key, int64_t id)
{
    uint32_t u = (uint32_t)id;
    if (id >= 0)
        assert_int_equal(glc_gguf_set_value(w, key, 4, &u), GLC_OK);
}

static void put_bool(glc_gguf_writer *w, const char *key, int b)
{
    uint8_t u = (uint8_t)b;
    if (b >= 0)
        assert_int_equal(glc_gguf_set_value(w, key, 7, &u), GLC_OK);
}

/* A writer holding v's keys (more may be added before tv_finish). */
static glc_gguf_writer *tv_writer(const tvocab *v)
{
    glc_gguf_writer *w;
    assert_int_equal(glc_gguf_writer_create(&w), GLC_OK);
    assert_int_equal(glc_gguf_set_string(w, "general.architecture", "llama"), GLC_OK);
    if (v->model)
        assert_int_equal(glc_gguf_set_string(w, "tokenizer.ggml.model", v->model), GLC_OK);
    if (v->pre)
        assert_int_equal(glc_gguf_set_string(w, "tokenizer.ggml.pre", v->pre), GLC_OK);
    if (v->tok)
        assert_int_equal(glc_gguf_set_string_array(w, "tokenizer.ggml.tokens", v->tok,
                                                   (uint64_t)v->n),
                         GLC_OK);
    if (v->score)
        assert_int_equal(glc_gguf_set_array(w, "tokenizer.ggml.scores", 6, (uint64_t)v->n,
                                            v->score),
                         GLC_OK);
    if (v->type)
        assert_int_equal(glc_gguf_set_array(w, "tokenizer.ggml.token_type", 5, (uint64_t)v->n,
                                            v->type),
                         GLC_OK);
    if (v->nmerge >= 0)
        assert_int_equal(glc_gguf_set_string_array(w, "tokenizer.ggml.merges", v->merge,
                                                   (uint64_t)v->nmerge),
                         GLC_OK);
    put_id(w, "tokenizer.ggml.bos_token_id", v->bos);
    put_id(w, "tokenizer.ggml.eos_token_id", v->eos);
    put_id(w, "tokenizer.ggml.unknown_token_id", v->unk);
    put_id(w, "tokenizer.ggml.eot_token_id", v->eot);
    put_bool(w, "tokenizer.ggml.add_bos_token", v->add_bos);
    put_bool(w, "tokenizer.ggml.add_eos_token", v->add_eos);
    put_bool(w, "tokenizer.ggml.add_space_prefix", v->add_space);
    return w;
}

/* Writes w to a file, reads it, makes the tokenizer and closes the file. */
static glc_status tv_finish(glc_gguf_writer *w, glc_tokenizer **out)
{
    char path[] = "/tmp/glc-tok-XXXXXX";
    glc_gguf *f;
    glc_status st;
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(glc_gguf_write(w, path), GLC_OK);
    glc_gguf_writer_destroy(w);
    if (glc_gguf_open(path, &f) != GLC_OK)
        fail_msg("open: %s", glc_device_errmsg(NULL));
    unlink(path);
    st = glc_tokenizer_create(f, out);
    glc_gguf_close(f);
    return st;
}

static glc_tokenizer *tv_make(const tvocab *v)
{
    glc_tokenizer *t = NULL;
    if (tv_finish(tv_writer(v), &t) != GLC_OK)
        fail_msg("tokenizer: %s", glc_device_errmsg(NULL));
    return t;
}

/* Encodes text and compares with want[0 .. n). */
static void expect_ids(const glc_tokenizer *t, const char *text, unsigned flags,
                       const int32_t *want, size_t n)
{
    int32_t got[256];
    size_t k, i;
    if (glc_tokenizer_encode(t, text, strlen(text), flags, got, 256, &k) != GLC_OK)
        fail_msg("encode \"%s\": %s", text, glc_device_errmsg(NULL));
    for (i = 0; i < k && i < n && got[i] == want[i]; i++)
        ;
    if (k != n || i != n) {
        char b[1024];
        size_t at = 0;
        for (i = 0; i < k && at < sizeof b - 16; i++)
            at += (size_t)snprintf(b + at, sizeof b - at, " %d", (int)got[i]);
        b[at] = '\0';
        fail_msg("encode \"%s\": got%s (%zu ids, %zu wanted; first difference at %zu)", text, b, k,
                 n, i);
    }
}

#define EXPECT(t, text, flags, ...)                                                  \
    do {                                                                             \
        static const int32_t want_[] = {__VA_ARGS__};                                \
        expect_ids((t), (text), (flags), want_, sizeof want_ / sizeof want_[0]);     \
    } while (0)

static void expect_text(const glc_tokenizer *t, const int32_t *ids, size_t n, unsigned flags,
                        const char *want, size_t want_len)
{
    char buf[4096];
    size_t len;
    if (glc_tokenizer_decode(t, ids, n, flags, buf, sizeof buf, &len) != GLC_OK)
        fail_msg("decode: %s", glc_device_errmsg(NULL));
    if (len != want_len || memcmp(buf, want, len) != 0 || buf[len] != '\0')
        fail_msg("decode: \"%.*s\" (%zu bytes), wanted \"%.*s\" (%zu)", (int)len, buf, len,
                 (int)want_len, want, want_len);
}

#define EXPECT_TEXT(t, flags, want, ...)                                             \
    do {                                                                             \
        static const int32_t ids_[] = {__VA_ARGS__};                                 \
        expect_text((t), ids_, sizeof ids_ / sizeof ids_[0], (flags), (want),       \
                    strlen(want));                                                   \
    } while (0)

/* ---- the hand-worked "llama" vocabulary ----
 * 0 <unk> (unknown), 1 <s>, 2 </s> (control), 3 .. 258 <0x00> .. <0xFF>
 * (byte), then normal tokens with scores, then user-defined and control
 * tokens for the special matching. */
enum {
    S_BYTE = 3,
    S_HE = 259, S_LL, S_LLHE, S_LLO, S_LLHELLO, S_WO, S_RL, S_LLWO, S_RLD, S_LLWORLD,
    S_LLSP, S_O, S_D, S_L, S_R, S_W, S_E, S_H, S_AB, S_BC, S_C, S_A, S_B,
    S_USER, S_X, S_XY, S_IM_END, S_N
};

static const char *const spm_extra[S_N - S_HE] = {
    "He", "ll", LL "He", "llo", LL "Hello", "wo", "rl", LL "wo", "rld", LL "world",
    LL, "o", "d", "l", "r", "w", "e", "H", "ab", "bc", "c", "a", "b",
    "<|user|>", "<x>", "<x><y>", "<|im_end|>"};
static const float spm_extra_score[S_N - S_HE] = {
    -1, -2, -3, -4, -5, -6, -7, -8, -9, -10,
    -20, -30, -30, -30, -30, -30, -30, -30, -1, -1, -30, -30, -30,
    0, 0, 0, 0};

typedef struct spm_file {
    const char *tok[S_N];
    char bytes[256][8];
    float score[S_N];
    int32_t type[S_N];
} spm_file;

/* The vocabulary; without_bytes: the byte tokens are "x00" .. "xff"
 * instead (normal, never matched). */
static tvocab spm_vocab(spm_file *s, int without_bytes)
{
    tvocab v;
    int i;
    s->tok[0] = "<unk>";
    s->tok[1] = "<s>";
    s->tok[2] = "</s>";
    s->type[0] = GLC_TOKEN_UNKNOWN;
    s->type[1] = s->type[2] = GLC_TOKEN_CONTROL;
    s->score[0] = s->score[1] = s->score[2] = 0;
    for (i = 0; i < 256; i++) {
        snprintf(s->bytes[i], sizeof s->bytes[i], without_bytes ? "x%02x" : "<0x%02X>", i);
        s->tok[S_BYTE + i] = s->bytes[i];
        s->type[S_BYTE + i] = without_bytes ? GLC_TOKEN_NORMAL : GLC_TOKEN_BYTE;
        s->score[S_BYTE + i] = 0;
    }
    for (i = S_HE; i < S_N; i++) {
        s->tok[i] = spm_extra[i - S_HE];
        s->score[i] = spm_extra_score[i - S_HE];
        s->type[i] = i == S_USER ? GLC_TOKEN_USER_DEFINED
                     : i == S_X || i == S_XY ? GLC_TOKEN_CONTROL : GLC_TOKEN_NORMAL;
    }
    v = tv_init("llama", s->tok, S_N);
    v.score = s->score;
    v.type = s->type;
    v.bos = 1;
    v.eos = 2;
    v.unk = 0;
    return v;
}

#define B(x) (S_BYTE + (x))

static void test_spm_hand(void **state)
{
    static spm_file sf;
    tvocab v = spm_vocab(&sf, 0);
    glc_tokenizer *t = tv_make(&v);
    glc_tokenizer_info in;
    const unsigned nb = GLC_TOKENIZE_NO_BOS_EOS;
    (void)state;
    assert_int_equal(glc_tokenizer_get_info(t, &in), GLC_OK);
    assert_int_equal(in.model, GLC_TOKENIZER_LLAMA);
    assert_int_equal(in.pre, GLC_TOKENIZER_PRE_NONE);
    assert_int_equal(in.vocab_size, S_N);
    assert_true(in.bos == 1 && in.eos == 2 && in.unk == 0 && in.eot == -1 && in.pad == -1);
    assert_true(in.add_bos == 1 && in.add_eos == 0 && in.add_space_prefix == 1);
    /* "▁Hello▁world": He(-1), ll(-2), ▁He(-3), llo(-4), ▁Hello(-5), wo(-6),
     * rl(-7), ▁wo(-8), rld(-9), ▁world(-10), each pair made by the one
     * before it; BOS first as the file says (add_bos_token absent: true) */
    EXPECT(t, "Hello world", 0, 1, S_LLHELLO, S_LLWORLD);
    EXPECT(t, "Hello world", nb, S_LLHELLO, S_LLWORLD);
    EXPECT(t, "Hello world", nb | GLC_TOKENIZE_ADD_EOS, S_LLHELLO, S_LLWORLD, 2);
    EXPECT(t, "", 0, 1); /* no text, no space */
    {
        int32_t id = -7;
        size_t k = 9;
        assert_int_equal(glc_tokenizer_encode(t, NULL, 0, nb, &id, 1, &k), GLC_OK);
        assert_true(k == 0 && id == -7);
    }
    /* a tie: "ab" and "bc" both -1, the leftmost pair wins: ▁ ab c */
    EXPECT(t, "abc", nb, S_LLSP, S_AB, S_C);
    /* two spaces: ▁▁Hello: "▁▁" is no token, ▁ stays alone */
    EXPECT(t, " Hello", nb, S_LLSP, S_LLHELLO);
    /* byte fallback: é (C3 A9) and 😀 (F0 9F 98 80) are no tokens */
    EXPECT(t, "\xc3\xa9", nb, S_LLSP, B(0xc3), B(0xa9));
    EXPECT(t, "a\xf0\x9f\x98\x80", nb, S_LLSP, S_A, B(0xf0), B(0x9f), B(0x98), B(0x80));
    /* an invalid byte is a character of its own: ▁ <0xFF> a */
    EXPECT(t, "\xff" "a", nb, S_LLSP, B(0xff), S_A);
    /* "<s>" is text without PARSE_SPECIAL: ▁ < s > by bytes, then He llo
     * ("Hello" alone is no token) */
    EXPECT(t, "<s>Hello", nb, S_LLSP, B('<'), B('s'), B('>'), S_HE, S_LLO);
    /* with it, the control token, then "▁Hello" (a space after a special
     * token, as at the start) */
    EXPECT(t, "<s>Hello", nb | GLC_TOKENIZE_PARSE_SPECIAL, 1, S_LLHELLO);
    EXPECT(t, "<s>Hello", GLC_TOKENIZE_PARSE_SPECIAL, 1, 1, S_LLHELLO);
    /* user-defined tokens are always matched: a ▁ before each text */
    EXPECT(t, "a<|user|>b", nb, S_LLSP, S_A, S_USER, S_LLSP, S_B);
    /* the longest special text at a place wins: <x><y>, not <x> then <y> */
    EXPECT(t, "<x><y>", nb | GLC_TOKENIZE_PARSE_SPECIAL, S_XY);
    EXPECT(t, "<x><x>", nb | GLC_TOKENIZE_PARSE_SPECIAL, S_X, S_X);
    /* <|im_end|> was normal in the file: made control and end of generation */
    assert_int_equal(glc_tokenizer_token_type(t, S_IM_END), GLC_TOKEN_CONTROL);
    assert_true(glc_tokenizer_is_eog(t, S_IM_END) && glc_tokenizer_is_eog(t, 2));
    assert_false(glc_tokenizer_is_eog(t, 1) || glc_tokenizer_is_eog(t, S_N));
    assert_int_equal(glc_tokenizer_token_type(t, S_USER), GLC_TOKEN_USER_DEFINED);
    assert_int_equal(glc_tokenizer_token_type(t, -1), 0);
    assert_int_equal(glc_tokenizer_find(t, LL "Hello", 8), S_LLHELLO);
    assert_int_equal(glc_tokenizer_find(t, "Hello", 5), -1);
    assert_int_equal(glc_tokenizer_find(t, "", 0), -1);

    /* decode: the leading space after BOS (and at the start) left out */
    EXPECT_TEXT(t, 0, "Hello world", 1, S_LLHELLO, S_LLWORLD, 2);
    EXPECT_TEXT(t, 0, "Hello world", S_LLHELLO, S_LLWORLD);
    EXPECT_TEXT(t, GLC_DETOKENIZE_KEEP_SPACE, " Hello world", 1, S_LLHELLO, S_LLWORLD);
    EXPECT_TEXT(t, GLC_DETOKENIZE_SPECIAL, "<s>Hello world</s>", 1, S_LLHELLO, S_LLWORLD, 2);
    EXPECT_TEXT(t, GLC_DETOKENIZE_SPECIAL, "<unk>", 0);
    EXPECT_TEXT(t, 0, "", 0);
    EXPECT_TEXT(t, 0, "\xc3\xa9", S_LLSP, B(0xc3), B(0xa9));
    EXPECT_TEXT(t, 0, "a<|user|>b", S_LLSP, S_A, S_USER, S_LLSP, S_B);
    EXPECT_TEXT(t, 0, "Hello", 1, 1, S_LLHELLO); /* after each control token */
    {
        size_t len = 99;
        const char *p = glc_tokenizer_token_bytes(t, S_LLHELLO, 0, &len);
        assert_true(p && len == 6 && strcmp(p, " Hello") == 0);
        p = glc_tokenizer_token_bytes(t, B(0xc3), 0, &len);
        assert_true(p && len == 1 && (unsigned char)p[0] == 0xc3 && p[1] == '\0');
        p = glc_tokenizer_token_bytes(t, 1, 0, &len);
        assert_true(p && len == 0);
        p = glc_tokenizer_token_bytes(t, 1, GLC_DETOKENIZE_SPECIAL, &len);
        assert_true(p && len == 3 && strcmp(p, "<s>") == 0);
        p = glc_tokenizer_token_bytes(t, S_USER, 0, &len);
        assert_true(p && len == 8 && strcmp(p, "<|user|>") == 0);
        p = glc_tokenizer_token_text(t, S_LLWORLD, &len);
        assert_true(p && len == 8 && strcmp(p, LL "world") == 0);
        len = 99;
        assert_null(glc_tokenizer_token_bytes(t, S_N, 0, &len));
        assert_null(glc_tokenizer_token_text(t, -1, &len));
        assert_int_equal(len, 99);
        assert_int_equal(in.max_token_bytes, 10); /* "<|im_end|>" rendered */
    }
    glc_tokenizer_destroy(t);

    /* a score higher on the right: ▁ a bc */
    sf.score[S_BC] = -0.5f;
    t = tv_make(&v);
    EXPECT(t, "abc", nb, S_LLSP, S_A, S_BC);
    glc_tokenizer_destroy(t);

    /* no add_space_prefix, add_bos false, add_eos true in the file */
    sf.score[S_BC] = -1;
    v.add_space = 0;
    v.add_bos = 0;
    v.add_eos = 1;
    t = tv_make(&v);
    EXPECT(t, "Hello", 0, S_HE, S_LLO, 2);
    EXPECT(t, "Hello", GLC_TOKENIZE_ADD_BOS, 1, S_HE, S_LLO, 2);
    EXPECT(t, "Hello", nb | GLC_TOKENIZE_ADD_BOS, 1, S_HE, S_LLO);
    EXPECT_TEXT(t, 0, " Hello", S_LLHELLO); /* no space to leave out */
    glc_tokenizer_destroy(t);

    /* no scores (all 0: every pair ties, the leftmost first), no ids in
     * the file: "llama"'s defaults BOS 1, EOS 2, <unk> 0 */
    v = spm_vocab(&sf, 0);
    v.score = NULL;
    v.bos = v.eos = v.unk = -1;
    t = tv_make(&v);
    assert_int_equal(glc_tokenizer_get_info(t, &in), GLC_OK);
    assert_true(in.bos == 1 && in.eos == 2 && in.unk == 0 && in.add_bos == 1);
    EXPECT(t, "abc", 0, 1, S_LLSP, S_AB, S_C);
    glc_tokenizer_destroy(t);

    /* no byte tokens: a character that is no token becomes <unk> */
    v = spm_vocab(&sf, 1);
    t = tv_make(&v);
    EXPECT(t, "\xc3\xa9" "a", nb, S_LLSP, 0, S_A);
    EXPECT(t, "\xf0\x9f\x98\x80", nb, S_LLSP, 0);
    glc_tokenizer_destroy(t);
}

/* ---- the hand-worked "gpt2" vocabulary ----
 * Tokens 0 .. 255: GPT-2's character of byte 0 .. 255; then the merges'
 * tokens and <|endoftext|> (control). */

/* GPT-2's character for byte b (the published table, written again). */
static uint32_t gpt2_char(int b)
{
    int x, n = 0;
    for (x = 0; x < b; x++)
        if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255)))
            n++;
    return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)
               ? (uint32_t)b : 256u + (uint32_t)n;
}

static void put_char(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        o[1] = 0;
    } else {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        o[2] = 0;
    }
}

enum { G_HE = 256, G_LL, G_HELL, G_HELLO, G_GW, G_OR, G_GWOR, G_LD, G_GWORLD, G_BC, G_AB,
       G_AA, G_EOT, G_N };

typedef struct gpt2_file {
    char bytes[256][4];
    const char *tok[G_N];
    int32_t type[G_N];
} gpt2_file;

static const char *const gpt2_merges[] = {"H e",  "l l",     "He ll", "Hell o", "\xc4\xa0 w",
                                          "o r",  "\xc4\xa0w or", "l d", "\xc4\xa0wor ld",
                                          "b c",  "a b",     "a a",   "b c"};

static tvocab gpt2_vocab(gpt2_file *g, const char *pre)
{
    static const char *const extra[] = {"He", "ll", "Hell", "Hello", "\xc4\xa0w", "or",
                                        "\xc4\xa0wor", "ld", "\xc4\xa0world", "bc", "ab", "aa",
                                        "<|endoftext|>"};
    tvocab v;
    int i;
    for (i = 0; i < 256; i++) {
        put_char(g->bytes[i], gpt2_char(i));
        g->tok[i] = g->bytes[i];
        g->type[i] = GLC_TOKEN_NORMAL;
    }
    for (i = G_HE; i < G_N; i++) {
        g->tok[i] = extra[i - G_HE];
        g->type[i] = i == G_EOT ? GLC_TOKEN_CONTROL : GLC_TOKEN_NORMAL;
    }
    v = tv_init("gpt2", g->tok, G_N);
    v.pre = pre;
    v.type = g->type;
    v.merge = gpt2_merges;
    v.nmerge = (int)(sizeof gpt2_merges / sizeof gpt2_merges[0]);
    v.bos = v.eos = G_EOT;
    return v;
}

static void test_gpt2_hand(void **state)
{
    static gpt2_file gf;
    tvocab v = gpt2_vocab(&gf, NULL);
    glc_tokenizer *t = tv_make(&v);
    glc_tokenizer_info in;
    (void)state;
    assert_int_equal(glc_tokenizer_get_info(t, &in), GLC_OK);
    assert_true(in.model == GLC_TOKENIZER_GPT2 && in.pre == GLC_TOKENIZER_PRE_GPT2);
    assert_true(in.add_bos == 0 && in.add_eos == 0 && in.unk == -1 && in.bos == G_EOT);
    /* "Hello": H e (rank 0), l l (1), He ll (2), Hell o (3); " world": Ġ w
     * (4), o r (5), Ġw or (6), l d (7), Ġwor ld (8) */
    EXPECT(t, "Hello world", 0, G_HELLO, G_GWORLD);
    /* "b c" ranks before "a b" (its second listing, after, changes
     * nothing): a bc; the same pair twice in the text: the leftmost */
    EXPECT(t, "abc", 0, 'a', G_BC);
    EXPECT(t, "aaa", 0, G_AA, 'a');
    EXPECT(t, "aaaa", 0, G_AA, G_AA);
    /* pieces: "Hello", " ", " world" (two spaces: the first alone) */
    EXPECT(t, "Hello  world", 0, G_HELLO, ' ', G_GWORLD);
    /* bytes of é and a control token as text or parsed */
    EXPECT(t, "\xc3\xa9", 0, 0xc3, 0xa9);
    EXPECT(t, "<|endoftext|>", GLC_TOKENIZE_PARSE_SPECIAL, G_EOT);
    EXPECT(t, "a<|endoftext|>", GLC_TOKENIZE_ADD_BOS | GLC_TOKENIZE_PARSE_SPECIAL, G_EOT, 'a',
           G_EOT);
    EXPECT(t, "<|", 0, '<', '|');
    /* decode: byte characters back to bytes; no leading space rule */
    EXPECT_TEXT(t, 0, "Hello world", G_HELLO, G_GWORLD);
    EXPECT_TEXT(t, 0, " world\n", G_GWORLD, '\n');
    EXPECT_TEXT(t, 0, "\xc3\xa9", 0xc3, 0xa9);
    EXPECT_TEXT(t, 0, "a", G_EOT, 'a');
    EXPECT_TEXT(t, GLC_DETOKENIZE_SPECIAL, "<|endoftext|>a", G_EOT, 'a');
    assert_true(glc_tokenizer_is_eog(t, G_EOT) && !glc_tokenizer_is_eog(t, G_AA));
    glc_tokenizer_destroy(t);
    v.eot = G_AA; /* an EOT id ends generation too */
    t = tv_make(&v);
    assert_int_equal(glc_tokenizer_get_info(t, &in), GLC_OK);
    assert_true(in.eot == G_AA && glc_tokenizer_is_eog(t, G_AA));
    glc_tokenizer_destroy(t);

    /* Llama 3: a piece that is a token is taken whole ("aaa" is none:
     * merged as before); BOS by default */
    v = gpt2_vocab(&gf, "llama-bpe");
    gf.tok[G_AB] = "abc"; /* no merge makes it: only the whole-piece rule */
    v.merge = gpt2_merges;
    v.nmerge = 9; /* (the merges of "abc" and "aa" left out) */
    t = tv_make(&v);
    assert_int_equal(glc_tokenizer_get_info(t, &in), GLC_OK);
    assert_true(in.pre == GLC_TOKENIZER_PRE_LLAMA3 && in.add_bos == 1);
    EXPECT(t, "abc", 0, G_EOT, G_AB);
    EXPECT(t, "abcd", GLC_TOKENIZE_NO_BOS_EOS, 'a', 'b', 'c', 'd');
    EXPECT(t, "Hello world", GLC_TOKENIZE_NO_BOS_EOS, G_HELLO, G_GWORLD);
    glc_tokenizer_destroy(t);
}

/* ---- the pre-tokenizers on hand-split texts ---- */

static void expect_split(int pre, const char *text, const char *const *want)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t n = strlen(text), i = 0, k = 0;
    while (i < n) {
        size_t j = glc__tokenizer_split(pre, s, n, i);
        if (!want[k] || j - i != strlen(want[k]) || memcmp(s + i, want[k], j - i) != 0)
            fail_msg("pre %d, \"%s\": piece %zu is \"%.*s\", wanted \"%s\"", pre, text, k,
                     (int)(j - i), text + i, want[k] ? want[k] : "(the end)");
        i = j;
        k++;
    }
    if (want[k])
        fail_msg("pre %d, \"%s\": the end before \"%s\"", pre, text, want[k]);
}

static void test_pretokenizers(void **state)
{
    static const char *const g1[] = {"Hello", " world", "'s", " ", " test", "\n\n", " x", " 123",
                                     " \xc2\xa1\xc2\xa1", " ab", NULL};
    static const char *const g2[] = {"\xc3\xa9\xe4\xb8\xad", "\xc2\xb2\xd9\xa3", " x",
                                     "\xcc\x81\xe2\x80\x94\xf0\x9f\x98\x80", "\xe3\x80\x80", "y",
                                     NULL};
    static const char *const g3[] = {"a", "\xff\xfe", "b", "\xe4\xb8!", " ", "\t", "'", "S", "'re",
                                     "   ", NULL};
    static const char *const l1[] = {"Hello", " world", "'s", " ", " test", "\n\n", " x", " ",
                                     "123", "45", " (", "ab", ")", " I", "'M", "\r\n", NULL};
    static const char *const q1[] = {"Hello", " world", "'s", " ", " test", "\n\n", " x", " ",
                                     "1", "2", "3", "4", "5", " (", "ab", ")", " I", "'M", "\r\n",
                                     NULL};
    static const char *const l2[] = {"x",  "(ab", ")\n", " \n", "\t", "?!", "\xc2\xa0\xc3\xa9",
                                     NULL};
    (void)state;
    expect_split(GLC_TOKENIZER_PRE_GPT2, "Hello world's  test\n\n x 123 \xc2\xa1\xc2\xa1 ab", g1);
    /* é 中 letters, ² ٣ numbers, U+0301 (a mark), — and 😀 none of them,
     * U+3000 white space */
    expect_split(GLC_TOKENIZER_PRE_GPT2,
                 "\xc3\xa9\xe4\xb8\xad\xc2\xb2\xd9\xa3 x\xcc\x81\xe2\x80\x94\xf0\x9f\x98\x80"
                 "\xe3\x80\x80y",
                 g2);
    /* invalid bytes are neither; 'S is no GPT-2 contraction (case) */
    expect_split(GLC_TOKENIZER_PRE_GPT2, "a\xff\xfe" "b\xe4\xb8! \t'S're   ", g3);
    expect_split(GLC_TOKENIZER_PRE_LLAMA3, "Hello world's  test\n\n x 12345 (ab) I'M\r\n", l1);
    expect_split(GLC_TOKENIZER_PRE_QWEN2, "Hello world's  test\n\n x 12345 (ab) I'M\r\n", q1);
    /* Llama 3: one character other than a letter, number, \r or \n joins
     * the letters after it; punctuation takes the line ends after it */
    expect_split(GLC_TOKENIZER_PRE_LLAMA3, "x(ab)\n \n\t?!\xc2\xa0\xc3\xa9", l2);
}

/* ---- the references ---- */

/* A sorted table (text -> value) for the references' look-ups. */
typedef struct dent {
    char *s;
    size_t n;
    int32_t v;
} dent;

typedef struct dict {
    dent *e;
    size_t n, cap;
} dict;

static int dent_cmp(const void *x, const void *y)
{
    const dent *a = x, *b = y;
    int c = memcmp(a->s, b->s, a->n < b->n ? a->n : b->n);
    return c ? c : (a->n > b->n) - (a->n < b->n);
}

static int32_t dict_get(const dict *d, const void *s, size_t n)
{
    dent key, *hit;
    key.s = (char *)(uintptr_t)s;
    key.n = n;
    hit = d->n ? bsearch(&key, d->e, d->n, sizeof *d->e, dent_cmp) : NULL;
    return hit ? hit->v : -1;
}

static void dict_add(dict *d, const void *s, size_t n, int32_t v)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 256;
        d->e = realloc(d->e, d->cap * sizeof *d->e);
        assert_non_null(d->e);
    }
    d->e[d->n].s = malloc(n + 1);
    assert_non_null(d->e[d->n].s);
    memcpy(d->e[d->n].s, s, n);
    d->e[d->n].s[n] = '\0';
    d->e[d->n].n = n;
    d->e[d->n++].v = v;
    qsort(d->e, d->n, sizeof *d->e, dent_cmp);
}

static void dict_free(dict *d)
{
    size_t i;
    for (i = 0; i < d->n; i++)
        free(d->e[i].s);
    free(d->e);
    memset(d, 0, sizeof *d);
}

/* The length of the valid UTF-8 character at s, or 0 (decoded, then the
 * ranges checked: no overlong form, surrogate or code point past
 * U+10FFFF). */
static size_t u8len(const unsigned char *s, size_t n)
{
    size_t len, i;
    uint32_t cp, min;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        len = 2, cp = s[0] & 0x1fu, min = 0x80;
    else if ((s[0] & 0xf0) == 0xe0)
        len = 3, cp = s[0] & 0x0fu, min = 0x800;
    else if ((s[0] & 0xf8) == 0xf0)
        len = 4, cp = s[0] & 0x07u, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : len;
}

/* -- SentencePiece, rescanning every pair each step -- */

typedef struct spm_ref {
    dict vocab;
    const float *score;
    int32_t unk;
    int32_t byte_id[256];
} spm_ref;

static size_t ref_spm(const spm_ref *r, const unsigned char *text, size_t n, int32_t *out)
{
    unsigned char esc[3 * 256 + 3];
    size_t at[3 * 256 + 3], len[3 * 256 + 3], m = 0, k = 0, i, j, nout = 0;
    assert_true(n <= 256);
    memcpy(esc, LL, 3);
    for (m = 3, i = 0; i < n; i++) {
        if (text[i] == ' ') {
            memcpy(esc + m, LL, 3);
            m += 3;
        } else {
            esc[m++] = text[i];
        }
    }
    for (i = 0; i < m; k++) {
        size_t c = u8len(esc + i, m - i);
        at[k] = i;
        len[k] = c ? c : 1;
        i += len[k];
    }
    for (;;) {
        size_t best = k;
        float bs = 0;
        for (i = 0; i + 1 < k; i++) {
            int32_t id = dict_get(&r->vocab, esc + at[i], len[i] + len[i + 1]);
            if (id >= 0 && (best == k || r->score[id] > bs)) {
                best = i;
                bs = r->score[id];
            }
        }
        if (best == k)
            break;
        len[best] += len[best + 1];
        for (i = best + 1; i + 1 < k; i++) {
            at[i] = at[i + 1];
            len[i] = len[i + 1];
        }
        k--;
    }
    for (i = 0; i < k; i++) {
        int32_t id = dict_get(&r->vocab, esc + at[i], len[i]);
        int all = 1;
        if (id >= 0) {
            out[nout++] = id;
            continue;
        }
        for (j = 0; j < len[i]; j++)
            all = all && r->byte_id[esc[at[i] + j]] >= 0;
        if (all)
            for (j = 0; j < len[i]; j++)
                out[nout++] = r->byte_id[esc[at[i] + j]];
        else
            out[nout++] = r->unk;
    }
    return nout;
}

/* Random text from pieces of UTF-8, valid and not. */
static size_t random_text(uint64_t *seed, const char *const *alpha, size_t nalpha, size_t max_elems,
                          unsigned char *out)
{
    size_t k = tu_range(seed, 0, (uint32_t)max_elems), i, n = 0;
    for (i = 0; i < k; i++) {
        const char *e = alpha[tu_rand(seed) % nalpha];
        memcpy(out + n, e, strlen(e));
        n += strlen(e);
    }
    return n;
}

static const char *const spm_alpha[] = {"a", "b", "c", "d", " ", " ", "\xc3\xa9", "\xe4\xb8\xad",
                                        "\xf0\x9f\x98\x80", "\xff", "\xe4\xb8", "x", "\n"};
#define NSPM_ALPHA (sizeof spm_alpha / sizeof spm_alpha[0])

/* A random "llama" vocabulary: <unk> <s> </s>, the byte tokens (or not),
 * ▁, then pieces of random escaped texts with scores from a few values
 * (ties are common). */
typedef struct rand_vocab {
    char **tok;
    float *score;
    int32_t *type;
    int n;
    dict vocab;
} rand_vocab;

static void rv_add(rand_vocab *v, const void *s, size_t n, float score, int32_t type)
{
    v->tok = realloc(v->tok, (size_t)(v->n + 1) * sizeof *v->tok);
    v->score = realloc(v->score, (size_t)(v->n + 1) * sizeof *v->score);
    v->type = realloc(v->type, (size_t)(v->n + 1) * sizeof *v->type);
    assert_true(v->tok && v->score && v->type);
    v->tok[v->n] = malloc(n + 1);
    assert_non_null(v->tok[v->n]);
    memcpy(v->tok[v->n], s, n);
    v->tok[v->n][n] = '\0';
    v->score[v->n] = score;
    v->type[v->n] = type;
    dict_add(&v->vocab, s, n, v->n);
    v->n++;
}

static void rv_free(rand_vocab *v)
{
    int i;
    for (i = 0; i < v->n; i++)
        free(v->tok[i]);
    free(v->tok);
    free(v->score);
    free(v->type);
    dict_free(&v->vocab);
    memset(v, 0, sizeof *v);
}

static void random_spm_vocab(uint64_t *seed, int with_bytes, rand_vocab *v)
{
    int i;
    memset(v, 0, sizeof *v);
    rv_add(v, "<unk>", 5, 0, GLC_TOKEN_UNKNOWN);
    rv_add(v, "<s>", 3, 0, GLC_TOKEN_CONTROL);
    rv_add(v, "</s>", 4, 0, GLC_TOKEN_CONTROL);
    for (i = 0; with_bytes && i < 256; i++) {
        char b[8];
        snprintf(b, sizeof b, "<0x%02X>", i);
        rv_add(v, b, 6, 0, GLC_TOKEN_BYTE);
    }
    rv_add(v, LL, 3, -5, GLC_TOKEN_NORMAL);
    for (i = 0; i < 400; i++) {
        unsigned char text[128], esc[400];
        size_t n = random_text(seed, spm_alpha, NSPM_ALPHA, 10, text), m = 3, j, c, a, len;
        size_t at[400], nch = 0;
        memcpy(esc, LL, 3);
        for (j = 0; j < n; j++) {
            if (text[j] == ' ') {
                memcpy(esc + m, LL, 3);
                m += 3;
            } else {
                esc[m++] = text[j];
            }
        }
        for (j = 0; j < m; j += c, nch++) {
            c = u8len(esc + j, m - j);
            c = c ? c : 1;
            at[nch] = j;
        }
        at[nch] = m;
        a = tu_rand(seed) % nch;
        len = 1 + tu_rand(seed) % 4;
        if (a + len > nch)
            len = nch - a;
        if (dict_get(&v->vocab, esc + at[a], at[a + len] - at[a]) < 0)
            rv_add(v, esc + at[a], at[a + len] - at[a], -(float)tu_range(seed, 1, 6),
                   GLC_TOKEN_NORMAL);
    }
}

static glc_tokenizer *rv_make(const rand_vocab *v, const char *model, const char *pre,
                              const char *const *merges, int nmerge)
{
    tvocab tv = tv_init(model, (const char *const *)v->tok, v->n);
    tv.pre = pre;
    tv.type = v->type;
    if (strcmp(model, "llama") == 0) {
        tv.score = v->score;
        tv.bos = 1;
        tv.eos = 2;
        tv.unk = 0;
    } else {
        tv.merge = merges;
        tv.nmerge = nmerge;
        tv.bos = tv.eos = 256;
    }
    return tv_make(&tv);
}

static void spm_ref_init(spm_ref *r, const rand_vocab *v)
{
    int b;
    r->vocab = v->vocab;
    r->score = v->score;
    r->unk = 0;
    for (b = 0; b < 256; b++) {
        char hex[8];
        unsigned char one = (unsigned char)b;
        snprintf(hex, sizeof hex, "<0x%02X>", b);
        r->byte_id[b] = dict_get(&v->vocab, hex, 6);
        if (r->byte_id[b] < 0)
            r->byte_id[b] = dict_get(&v->vocab, &one, 1);
    }
}

static void compare_ids(const char *what, int round, const unsigned char *text, size_t n,
                        const int32_t *got, size_t ngot, const int32_t *want, size_t nwant)
{
    size_t i;
    for (i = 0; i < ngot && i < nwant && got[i] == want[i]; i++)
        ;
    if (ngot != nwant || i != ngot) {
        char hex[800];
        size_t k, at = 0;
        for (k = 0; k < n && at + 4 < sizeof hex; k++)
            at += (size_t)snprintf(hex + at, sizeof hex - at, "%02x ", text[k]);
        hex[at] = '\0';
        fail_msg("%s, string %d (%s): %zu ids, the reference %zu; first difference at %zu (%d, "
                 "the reference %d)",
                 what, round, hex, ngot, nwant, i, i < ngot ? (int)got[i] : -1,
                 i < nwant ? (int)want[i] : -1);
    }
}

static void test_spm_reference(void **state)
{
    uint64_t seed = 1616;
    int variant, round;
    (void)state;
    for (variant = 0; variant < 2; variant++) { /* byte tokens, then <unk> */
        rand_vocab v;
        spm_ref r;
        glc_tokenizer *t;
        random_spm_vocab(&seed, variant == 0, &v);
        t = rv_make(&v, "llama", NULL, NULL, -1);
        spm_ref_init(&r, &v);
        for (round = 0; round < 2000; round++) {
            unsigned char text[256];
            int32_t got[1024], want[1024];
            size_t n = random_text(&seed, spm_alpha, NSPM_ALPHA, 30, text), ngot, nwant;
            if (glc_tokenizer_encode(t, (const char *)text, n, GLC_TOKENIZE_NO_BOS_EOS, got, 1024,
                                     &ngot) != GLC_OK)
                fail_msg("encode: %s", glc_device_errmsg(NULL));
            nwant = n ? ref_spm(&r, text, n, want) : 0;
            compare_ids(variant ? "llama, <unk>" : "llama, byte tokens", round, text, n, got, ngot,
                        want, nwant);
        }
        glc_tokenizer_destroy(t);
        rv_free(&v);
    }
}

/* -- the pre-tokenizers, as a backtracking matcher tries the regular
 * expressions' alternatives in order -- */

typedef struct unit {
    size_t at, len;
    char cls; /* 'L' 'N' 'S' 'O' */
    int ch;   /* the ASCII character, or -1 */
} unit;

typedef struct elem {
    const char *s, *cls; /* cls: one letter per unit (an invalid byte is one) */
} elem;

static const elem bpe_alpha[] = {
    {"a", "L"}, {"b", "L"}, {"Z", "L"}, {"s", "L"}, {"t", "L"}, {"r", "L"}, {"e", "L"},
    {"l", "L"}, {"d", "L"}, {"S", "L"}, {"M", "L"}, {"\xc3\xa9", "L"}, {"\xe4\xb8\xad", "L"},
    {"\xc3\x9f", "L"}, {"1", "N"}, {"7", "N"}, {"\xc2\xb2", "N"}, {"\xd9\xa3", "N"}, {" ", "S"},
    {" ", "S"}, {" ", "S"}, {"\n", "S"}, {"\r", "S"}, {"\t", "S"}, {"\xe3\x80\x80", "S"},
    {"\xc2\xa0", "S"}, {"!", "O"}, {"'", "O"}, {"'", "O"}, {"(", "O"}, {"\xcc\x81", "O"},
    {"\xe2\x80\x94", "O"}, {"\xf0\x9f\x98\x80", "O"}, {"\xff", "O"}, {"\xc0\xaf", "OO"},
    {"\xe4\xb8", "OO"}, {"\xed\xa0\x80", "OOO"}};
#define NBPE_ALPHA (sizeof bpe_alpha / sizeof bpe_alpha[0])

static size_t random_units(uint64_t *seed, size_t max_elems, unsigned char *text, unit *u,
                           size_t *nu)
{
    size_t k = tu_range(seed, 0, (uint32_t)max_elems), i, n = 0, j;
    *nu = 0;
    for (i = 0; i < k; i++) {
        const elem *e = &bpe_alpha[tu_rand(seed) % NBPE_ALPHA];
        size_t len = strlen(e->s), per = strlen(e->cls) == 1 ? len : 1;
        for (j = 0; j < strlen(e->cls); j++) {
            u[*nu].at = n + j * per;
            u[*nu].len = per;
            u[*nu].cls = e->cls[j];
            u[*nu].ch = len == 1 ? e->s[0] : -1;
            (*nu)++;
        }
        memcpy(text + n, e->s, len);
        n += len;
    }
    return n;
}

static int u_is(const unit *u, size_t nu, size_t k, char cls) { return k < nu && u[k].cls == cls; }
static int u_ch(const unit *u, size_t nu, size_t k) { return k < nu ? u[k].ch : -2; }

static size_t alt_contraction(const unit *u, size_t nu, size_t i, int fold)
{
    static const char *const forms[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    size_t f, j;
    if (u_ch(u, nu, i) != '\'')
        return 0;
    for (f = 0; f < 7; f++) {
        for (j = 0; forms[f][j]; j++) {
            int c = u_ch(u, nu, i + 1 + j);
            if (fold && c >= 'A' && c <= 'Z')
                c += 'a' - 'A';
            if (c != forms[f][j])
                break;
        }
        if (!forms[f][j])
            return 1 + j;
    }
    return 0;
}

/* " ?X+": the space taken first, given back when X+ then fails */
static size_t alt_space_run(const unit *u, size_t nu, size_t i, char cls)
{
    size_t start, j;
    for (start = i + (u_ch(u, nu, i) == ' '); ; start--) {
        for (j = start; u_is(u, nu, j, cls); j++)
            ;
        if (j > start)
            return j - i;
        if (start == i)
            return 0;
    }
}

/* \s+(?!\S): the longest run whose next unit is white space or the end */
static size_t alt_ws_ahead(const unit *u, size_t nu, size_t i)
{
    size_t max = 0, j;
    while (u_is(u, nu, i + max, 'S'))
        max++;
    for (j = max; j >= 1; j--)
        if (i + j >= nu || u[i + j].cls == 'S')
            return j;
    return 0;
}

static size_t alt_ws(const unit *u, size_t nu, size_t i)
{
    size_t j = i;
    while (u_is(u, nu, j, 'S'))
        j++;
    return j - i;
}

/* \s*[\r\n]+: \s* gives back one unit at a time until [\r\n]+ matches */
static size_t alt_ws_newlines(const unit *u, size_t nu, size_t i)
{
    size_t s0 = alt_ws(u, nu, i) + 1, k;
    while (s0-- > 0) {
        for (k = i + s0; u_ch(u, nu, k) == '\r' || u_ch(u, nu, k) == '\n'; k++)
            ;
        if (k > i + s0)
            return k - i;
    }
    return 0;
}

/* [^\r\n\p{L}\p{N}]?\p{L}+ */
static size_t alt_opt_letters(const unit *u, size_t nu, size_t i)
{
    size_t j;
    if (i < nu && u[i].cls != 'L' && u[i].cls != 'N' && u[i].ch != '\r' && u[i].ch != '\n' &&
        u_is(u, nu, i + 1, 'L')) {
        for (j = i + 1; u_is(u, nu, j, 'L'); j++)
            ;
        return j - i;
    }
    for (j = i; u_is(u, nu, j, 'L'); j++)
        ;
    return j - i;
}

/* " ?[^\s\p{L}\p{N}]+[\r\n]*" */
static size_t alt_other_nl(const unit *u, size_t nu, size_t i)
{
    size_t k = alt_space_run(u, nu, i, 'O');
    if (!k)
        return 0;
    while (u_ch(u, nu, i + k) == '\r' || u_ch(u, nu, i + k) == '\n')
        k++;
    return k;
}

/* The units of the piece at i. */
static size_t ref_split(int pre, const unit *u, size_t nu, size_t i)
{
    size_t k;
    if (pre == GLC_TOKENIZER_PRE_GPT2) {
        if ((k = alt_contraction(u, nu, i, 0)) || (k = alt_space_run(u, nu, i, 'L')) ||
            (k = alt_space_run(u, nu, i, 'N')) || (k = alt_space_run(u, nu, i, 'O')) ||
            (k = alt_ws_ahead(u, nu, i)) || (k = alt_ws(u, nu, i)))
            return k;
        fail_msg("no alternative matched");
    }
    if ((k = alt_contraction(u, nu, i, 1)) || (k = alt_opt_letters(u, nu, i)))
        return k;
    for (k = 0; u_is(u, nu, i + k, 'N') && k < (pre == GLC_TOKENIZER_PRE_LLAMA3 ? 3u : 1u); k++)
        ;
    if (k || (k = alt_other_nl(u, nu, i)) || (k = alt_ws_newlines(u, nu, i)) ||
        (k = alt_ws_ahead(u, nu, i)) || (k = alt_ws(u, nu, i)))
        return k;
    fail_msg("no alternative matched");
    return 0;
}

static void test_pretokenizer_reference(void **state)
{
    static const int pres[3] = {GLC_TOKENIZER_PRE_GPT2, GLC_TOKENIZER_PRE_LLAMA3,
                                GLC_TOKENIZER_PRE_QWEN2};
    uint64_t seed = 1617;
    int round, p;
    (void)state;
    for (p = 0; p < 3; p++)
        for (round = 0; round < 3000; round++) {
            unsigned char text[512];
            unit u[512];
            size_t nu, n = random_units(&seed, 40, text, u, &nu), i = 0, k = 0;
            while (k < nu) {
                size_t ku = ref_split(pres[p], u, nu, k);
                size_t want = k + ku < nu ? u[k + ku].at : n;
                size_t got = glc__tokenizer_split(pres[p], text, n, i);
                if (got != want)
                    fail_msg("pre %d, string %d: the piece at byte %zu ends at %zu, the reference "
                             "at %zu",
                             pres[p], round, i, got, want);
                i = got;
                k += ku;
            }
        }
}

/* -- byte-level BPE, rescanning every pair each step -- */

typedef struct bpe_ref {
    dict vocab, merges; /* merges: "a b" -> rank */
    int pre;
} bpe_ref;

/* The symbols BPE leaves of piece p[0 .. n) (texts in GPT-2's characters,
 * at[k] .. at[k + 1] in buf); ignore: Llama 3's whole-piece rule. */
static size_t ref_bpe_symbols(const bpe_ref *r, const unsigned char *p, size_t n, int ignore,
                              char *buf, size_t *at)
{
    size_t m = 0, k, i, best;
    char key[512];
    for (i = 0; i < n; i++) {
        at[i] = m;
        put_char(buf + m, gpt2_char(p[i]));
        m += strlen(buf + m);
    }
    at[n] = m;
    k = n;
    if (ignore && dict_get(&r->vocab, buf, m) >= 0) {
        at[1] = m;
        return 1;
    }
    for (;;) {
        int32_t br = -1;
        best = k;
        for (i = 0; i + 1 < k; i++) {
            size_t la = at[i + 1] - at[i], lb = at[i + 2] - at[i + 1];
            int32_t rank;
            memcpy(key, buf + at[i], la);
            key[la] = ' ';
            memcpy(key + la + 1, buf + at[i + 1], lb);
            rank = dict_get(&r->merges, key, la + 1 + lb);
            if (rank >= 0 && (best == k || rank < br)) {
                best = i;
                br = rank;
            }
        }
        if (best == k)
            return k;
        for (i = best + 1; i < k; i++)
            at[i] = at[i + 1];
        k--;
    }
}

static size_t ref_bpe(const bpe_ref *r, const unsigned char *text, const unit *u, size_t nu,
                      size_t n, int32_t *out)
{
    size_t k = 0, nout = 0, i;
    while (k < nu) {
        size_t ku = ref_split(r->pre, u, nu, k), end = k + ku < nu ? u[k + ku].at : n;
        char buf[2048];
        size_t at[600], ns;
        ns = ref_bpe_symbols(r, text + u[k].at, end - u[k].at, r->pre == GLC_TOKENIZER_PRE_LLAMA3,
                             buf, at);
        for (i = 0; i < ns; i++) {
            int32_t id = dict_get(&r->vocab, buf + at[i], at[i + 1] - at[i]);
            assert_true(id >= 0);
            out[nout++] = id;
        }
        k += ku;
    }
    return nout;
}

/* A random "gpt2" vocabulary: the 256 byte characters, <|endoftext|>,
 * then merges learnt as BPE does: a random adjacent pair of the symbols a
 * random piece has now becomes a merge and a token. */
static void random_bpe_vocab(uint64_t *seed, rand_vocab *v, bpe_ref *r, char ***merges,
                             int *nmerge)
{
    int b, tries;
    memset(v, 0, sizeof *v);
    memset(r, 0, sizeof *r);
    r->pre = GLC_TOKENIZER_PRE_GPT2;
    *merges = NULL;
    *nmerge = 0;
    for (b = 0; b < 256; b++) {
        char c[4];
        put_char(c, gpt2_char(b));
        rv_add(v, c, strlen(c), 0, GLC_TOKEN_NORMAL);
    }
    rv_add(v, "<|endoftext|>", 13, 0, GLC_TOKEN_CONTROL);
    for (tries = 0; tries < 4000 && *nmerge < 300; tries++) {
        unsigned char text[512];
        unit u[512];
        size_t nu, n = random_units(seed, 12, text, u, &nu), k = 0, ku, pick, ns, at[600], la, lb;
        char buf[2048], key[512];
        if (!nu)
            continue;
        pick = tu_rand(seed) % nu; /* the piece holding unit pick */
        for (;;) {
            ku = ref_split(r->pre, u, nu, k);
            if (k + ku > pick)
                break;
            k += ku;
        }
        r->vocab = v->vocab;
        ns = ref_bpe_symbols(r, text + u[k].at, (k + ku < nu ? u[k + ku].at : n) - u[k].at, 0, buf,
                             at);
        if (ns < 2)
            continue;
        pick = tu_rand(seed) % (ns - 1);
        la = at[pick + 1] - at[pick];
        lb = at[pick + 2] - at[pick + 1];
        memcpy(key, buf + at[pick], la);
        key[la] = ' ';
        memcpy(key + la + 1, buf + at[pick + 1], lb);
        key[la + 1 + lb] = '\0';
        if (dict_get(&r->merges, key, la + 1 + lb) >= 0)
            continue;
        dict_add(&r->merges, key, la + 1 + lb, *nmerge);
        *merges = realloc(*merges, (size_t)(*nmerge + 1) * sizeof **merges);
        assert_non_null(*merges);
        (*merges)[*nmerge] = strdup(key);
        (*nmerge)++;
        if (dict_get(&v->vocab, buf + at[pick], la + lb) < 0)
            rv_add(v, buf + at[pick], la + lb, 0, GLC_TOKEN_NORMAL);
    }
    r->vocab = v->vocab;
    assert_true(*nmerge >= 200);
}

static void free_merges(char **m, int n)
{
    int i;
    for (i = 0; i < n; i++)
        free(m[i]);
    free(m);
}

static void test_bpe_reference(void **state)
{
    static const char *const pres[3] = {"gpt-2", "llama-bpe", "qwen2"};
    static const int pre_ids[3] = {GLC_TOKENIZER_PRE_GPT2, GLC_TOKENIZER_PRE_LLAMA3,
                                   GLC_TOKENIZER_PRE_QWEN2};
    uint64_t seed = 1618;
    rand_vocab v;
    bpe_ref r;
    char **merges;
    int nmerge, p, round;
    (void)state;
    random_bpe_vocab(&seed, &v, &r, &merges, &nmerge);
    for (p = 0; p < 3; p++) {
        glc_tokenizer *t = rv_make(&v, "gpt2", pres[p], (const char *const *)merges, nmerge);
        r.pre = pre_ids[p];
        for (round = 0; round < 1500; round++) {
            unsigned char text[512];
            unit u[512];
            int32_t got[1024], want[1024];
            size_t nu, n = random_units(&seed, 40, text, u, &nu), ngot, nwant;
            if (glc_tokenizer_encode(t, (const char *)text, n, GLC_TOKENIZE_NO_BOS_EOS, got, 1024,
                                     &ngot) != GLC_OK)
                fail_msg("encode: %s", glc_device_errmsg(NULL));
            nwant = ref_bpe(&r, text, u, nu, n, want);
            compare_ids(pres[p], round, text, n, got, ngot, want, nwant);
        }
        glc_tokenizer_destroy(t);
    }
    free_merges(merges, nmerge);
    dict_free(&r.merges);
    rv_free(&v);
}

/* ---- round trips and the stream ---- */

static size_t random_bytes(uint64_t *seed, unsigned char *out, size_t max)
{
    size_t n = tu_range(seed, 0, (uint32_t)max), i;
    for (i = 0; i < n; i++) {
        uint32_t k = tu_range(seed, 0, 9);
        out[i] = k < 3 ? ' ' : k < 6 ? (unsigned char)('a' + tu_range(seed, 0, 3))
                                     : (unsigned char)tu_rand(seed);
        if (i >= 2 && out[i - 2] == 0xe2 && out[i - 1] == 0x96 && out[i] == 0x81)
            out[i] = 'a'; /* no U+2581 of the text's own */
    }
    return n;
}

/* Decodes ids token by token through a stream: the chunks must join to
 * decode's text, and none may end inside a character of that text. */
static void check_stream(const glc_tokenizer *t, const int32_t *ids, size_t n, unsigned flags)
{
    glc_tokenizer_stream *s;
    char whole[8192], joined[8192];
    size_t len, at = 0, i, ends[2048], nends = 0, c;
    const char *p;
    size_t k;
    assert_int_equal(glc_tokenizer_decode(t, ids, n, flags, whole, sizeof whole, &len), GLC_OK);
    assert_int_equal(glc_tokenizer_stream_create(t, flags, &s), GLC_OK);
    for (i = 0; i <= n; i++) {
        if (i < n)
            assert_int_equal(glc_tokenizer_stream_push(s, ids[i], &p, &k), GLC_OK);
        else
            assert_int_equal(glc_tokenizer_stream_flush(s, &p, &k), GLC_OK);
        assert_true(p[k] == '\0' && at + k <= sizeof joined);
        memcpy(joined + at, p, k);
        at += k;
        if (k)
            ends[nends++] = at;
    }
    glc_tokenizer_stream_destroy(s);
    if (at != len || memcmp(joined, whole, len) != 0)
        fail_msg("the stream's text (%zu bytes) is not decode's (%zu)", at, len);
    for (i = 0, k = 0; i < len; i += c) { /* chunk ends against the characters */
        c = u8len((const unsigned char *)whole + i, len - i);
        c = c ? c : 1;
        for (; k < nends && ends[k] <= i; k++)
            ;
        if (k < nends && ends[k] < i + c)
            fail_msg("a chunk ends at %zu, inside the character at %zu", ends[k], i);
    }
}

static void test_round_trips(void **state)
{
    uint64_t seed = 1619;
    int round;
    rand_vocab v;
    bpe_ref r;
    char **merges;
    int nmerge;
    glc_tokenizer *t;
    (void)state;
    /* "llama" with byte tokens: BOS, the leading space, bytes of all kinds */
    random_spm_vocab(&seed, 1, &v);
    t = rv_make(&v, "llama", NULL, NULL, -1);
    for (round = 0; round < 1500; round++) {
        unsigned char text[64];
        char back[1024];
        int32_t ids[512];
        size_t n = random_bytes(&seed, text, 60), k, len;
        assert_int_equal(glc_tokenizer_encode(t, (const char *)text, n, 0, ids, 512, &k), GLC_OK);
        assert_true(k >= 1 && ids[0] == 1);
        assert_int_equal(glc_tokenizer_decode(t, ids, k, 0, back, sizeof back, &len), GLC_OK);
        if (len != n || memcmp(back, text, n) != 0)
            fail_msg("llama, string %d: %zu bytes back for %zu", round, len, n);
        check_stream(t, ids, k, 0);
        check_stream(t, ids, k, GLC_DETOKENIZE_KEEP_SPACE | GLC_DETOKENIZE_SPECIAL);
    }
    glc_tokenizer_destroy(t);
    rv_free(&v);
    /* "gpt2": always exact */
    random_bpe_vocab(&seed, &v, &r, &merges, &nmerge);
    t = rv_make(&v, "gpt2", NULL, (const char *const *)merges, nmerge);
    for (round = 0; round < 1500; round++) {
        unsigned char text[128];
        char back[1024];
        int32_t ids[512];
        size_t n = random_bytes(&seed, text, 120), k, len;
        assert_int_equal(glc_tokenizer_encode(t, (const char *)text, n, 0, ids, 512, &k), GLC_OK);
        assert_int_equal(glc_tokenizer_decode(t, ids, k, 0, back, sizeof back, &len), GLC_OK);
        if (len != n || memcmp(back, text, n) != 0)
            fail_msg("gpt2, string %d: %zu bytes back for %zu", round, len, n);
        check_stream(t, ids, k, 0);
    }
    glc_tokenizer_destroy(t);
    free_merges(merges, nmerge);
    dict_free(&r.merges);
    rv_free(&v);
}

static void test_stream(void **state)
{
    static spm_file sf;
    static const char text[] = "H\xc3\xa9 \xe4\xb8\xad\xf0\x9f\x98\x80 x\xff\xe4\xb8!";
    tvocab v = spm_vocab(&sf, 0);
    glc_tokenizer *t = tv_make(&v);
    glc_tokenizer_stream *s;
    int32_t ids[64];
    size_t n, k;
    const char *p;
    (void)state;
    /* [BOS, ▁, H, <C3>, <A9>]: "", "" (the leading space), "H", "" (held),
     * "é"; an id outside the vocabulary changes nothing */
    EXPECT(t, "H\xc3\xa9", 0, 1, S_LLSP, S_H, B(0xc3), B(0xa9));
    assert_int_equal(glc_tokenizer_stream_create(t, 0, &s), GLC_OK);
    assert_int_equal(glc_tokenizer_stream_push(s, 1, &p, &k), GLC_OK);
    assert_true(k == 0 && p[0] == '\0');
    assert_int_equal(glc_tokenizer_stream_push(s, S_LLSP, &p, &k), GLC_OK);
    assert_int_equal(k, 0);
    assert_int_equal(glc_tokenizer_stream_push(s, S_H, &p, &k), GLC_OK);
    assert_true(k == 1 && strcmp(p, "H") == 0);
    assert_int_equal(glc_tokenizer_stream_push(s, B(0xc3), &p, &k), GLC_OK);
    assert_int_equal(k, 0);
    assert_int_equal(glc_tokenizer_stream_push(s, S_N, &p, &k), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "is not a token id");
    assert_int_equal(glc_tokenizer_stream_push(s, B(0xa9), &p, &k), GLC_OK);
    assert_true(k == 2 && strcmp(p, "\xc3\xa9") == 0);
    /* held bytes come out at flush, and the stream starts again: the
     * leading space is left out once more */
    assert_int_equal(glc_tokenizer_stream_push(s, B(0xf0), &p, &k), GLC_OK);
    assert_int_equal(glc_tokenizer_stream_push(s, B(0x9f), &p, &k), GLC_OK);
    assert_int_equal(k, 0);
    assert_int_equal(glc_tokenizer_stream_flush(s, &p, &k), GLC_OK);
    assert_true(k == 2 && memcmp(p, "\xf0\x9f", 2) == 0 && p[2] == '\0');
    assert_int_equal(glc_tokenizer_stream_push(s, S_LLHELLO, &p, &k), GLC_OK);
    assert_true(k == 5 && strcmp(p, "Hello") == 0);
    /* a held lead byte that the next byte cannot continue: out as it is */
    assert_int_equal(glc_tokenizer_stream_push(s, B(0xe4), &p, &k), GLC_OK);
    assert_int_equal(k, 0);
    assert_int_equal(glc_tokenizer_stream_push(s, S_A, &p, &k), GLC_OK);
    assert_true(k == 2 && memcmp(p, "\xe4" "a", 2) == 0);
    glc_tokenizer_stream_destroy(s);
    glc_tokenizer_stream_destroy(NULL);
    /* the whole text, multi-byte characters split across byte tokens */
    assert_int_equal(glc_tokenizer_encode(t, text, strlen(text), 0, ids, 64, &n), GLC_OK);
    assert_true(n > 12);
    check_stream(t, ids, n, 0);
    check_stream(t, ids, n, GLC_DETOKENIZE_SPECIAL);
    glc_tokenizer_destroy(t);
}

/* ---- refusals ---- */

static glc_gguf *tv_open(glc_gguf_writer *w)
{
    char path[] = "/tmp/glc-tok-XXXXXX";
    glc_gguf *f;
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(glc_gguf_write(w, path), GLC_OK);
    glc_gguf_writer_destroy(w);
    assert_int_equal(glc_gguf_open(path, &f), GLC_OK);
    unlink(path); /* (mapped: the bytes stay) */
    return f;
}

static void refuse(glc_gguf_writer *w, glc_status want, const char *needle)
{
    glc_tokenizer *t = (glc_tokenizer *)(uintptr_t)0x1;
    glc_status st = tv_finish(w, &t);
    if (st != want)
        fail_msg("status %d (\"%s\"), wanted %d with \"%s\"", (int)st, glc_device_errmsg(NULL),
                 (int)want, needle);
    assert_ptr_equal(t, (glc_tokenizer *)(uintptr_t)0x1);
    tu_assert_contains(glc_device_errmsg(NULL), needle);
}

static const char *const small_tok[7] = {"<unk>", "<s>", "</s>", "<0x41>", "a", "b", "ab"};
static const float small_score[7] = {0, 0, 0, 0, -1, -1, -0.5f};
static const int32_t small_type[7] = {2, 3, 3, 6, 1, 1, 1};
static const char *const small_gtok[4] = {"a", "b", "ab", "\xc4\xa0"};
static const char *const small_merge[1] = {"a b"};

static tvocab small_llama(void)
{
    tvocab v = tv_init("llama", small_tok, 7);
    v.score = small_score;
    v.type = small_type;
    v.bos = 1;
    v.eos = 2;
    v.unk = 0;
    return v;
}

static tvocab small_gpt2(void)
{
    tvocab v = tv_init("gpt2", small_gtok, 4);
    v.merge = small_merge;
    v.nmerge = 1;
    return v;
}

static void test_file_refusals(void **state)
{
    static const char *const bad_byte[7] = {"<unk>", "<s>", "</s>", "<0x4G>", "a", "b", "ab"};
    const int32_t i32[3] = {1, 2, 3}, minus1 = -1;
    const uint32_t u32 = 7, big = 999;
    const uint8_t one = 1;
    float sc[7];
    int32_t ty[7];
    tvocab v;
    glc_gguf_writer *w;
    glc_tokenizer *t;
    (void)state;
    /* the good files */
    v = small_llama();
    t = tv_make(&v);
    EXPECT(t, "aab", GLC_TOKENIZE_NO_BOS_EOS, 0, 4, 6); /* ▁ a ab; ▁ (no bytes): <unk> */
    glc_tokenizer_destroy(t);
    v = small_gpt2();
    t = tv_make(&v);
    EXPECT(t, "ab a", 0, 2, 3, 0);
    glc_tokenizer_destroy(t);
    {
        /* a text given twice: the last id (as llama.cpp); byte fallback
         * to one-byte tokens when there is no <0xNN> */
        static const char *const twice[9] = {"<unk>", "<s>", "</s>", "ab", "a", "b", "ab",
                                             "\xc3", "\xa9"};
        v = tv_init("llama", twice, 9);
        t = tv_make(&v);
        assert_int_equal(glc_tokenizer_find(t, "ab", 2), 6);
        EXPECT(t, "ab\xc3\xa9", GLC_TOKENIZE_NO_BOS_EOS, 0, 6, 7, 8);
        glc_tokenizer_destroy(t);
    }

    /* the model */
    v = small_llama();
    v.model = NULL;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "tokenizer.ggml.model: no such key");
    v.model = "bert";
    refuse(tv_writer(&v), GLC_ERR_UNSUPPORTED, "tokenizer.ggml.model \"bert\": not a tokenizer");
    v.model = NULL;
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_value(w, "tokenizer.ggml.model", 4, &u32), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.model: a u32, not a string");
    /* the tokens */
    v = small_llama();
    v.tok = NULL;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "tokenizer.ggml.tokens: no such key");
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_array(w, "tokenizer.ggml.tokens", 5, 3, i32), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG,
           "tokenizer.ggml.tokens: an array of i32, not an array of string");
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_string(w, "tokenizer.ggml.tokens", "a"), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.tokens: a string, not an array of string");
    v.score = NULL;
    v.type = NULL;
    v.bos = v.eos = v.unk = -1;
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_string_array(w, "tokenizer.ggml.tokens", NULL, 0), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.tokens: 0 tokens");
    /* scores and types: one each per token, numbers, types 1 .. 6 */
    v = small_llama();
    v.score = NULL;
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_array(w, "tokenizer.ggml.scores", 6, 6, small_score), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.scores: 6 scores for 7 tokens");
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_array(w, "tokenizer.ggml.scores", 5, 3, i32), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.scores: an array of i32, not an array of f32");
    memcpy(sc, small_score, sizeof sc);
    sc[4] = (float)NAN;
    v.score = sc;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "tokenizer.ggml.scores[4]: NaN");
    v = small_llama();
    v.type = NULL;
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_array(w, "tokenizer.ggml.token_type", 5, 6, small_type), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.token_type: 6 types for 7 tokens");
    memcpy(ty, small_type, sizeof ty);
    ty[5] = 9;
    v.type = ty;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "tokenizer.ggml.token_type[5]: 9, not a token type");
    ty[5] = 0;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "tokenizer.ggml.token_type[5]: 0, not a token type");
    /* a byte token not written <0xNN> */
    v = small_llama();
    v.tok = bad_byte;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG,
           "tokenizer.ggml.tokens[3]: a byte token (type 6) \"<0x4G>\", not <0xNN>");
    /* ids and flags */
    v = small_llama();
    v.bos = 999;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG,
           "tokenizer.ggml.bos_token_id: 999, not a token id (the vocabulary has 7 tokens)");
    v.bos = 7;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "tokenizer.ggml.bos_token_id: 7, not a token id");
    v.bos = -1;
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_string(w, "tokenizer.ggml.bos_token_id", "1"), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.bos_token_id: a string, not a token id");
    v = small_llama();
    v.eos = -1;
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_value(w, "tokenizer.ggml.eos_token_id", 5, &minus1), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.eos_token_id: -1, not a token id");
    v = small_llama();
    v.unk = 999;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "tokenizer.ggml.unknown_token_id: 999");
    v = small_llama();
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_value(w, "tokenizer.ggml.padding_token_id", 4, &big), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.padding_token_id: 999");
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_value(w, "tokenizer.ggml.add_bos_token", 0, &one), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.add_bos_token: a u8, not a bool");
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_string(w, "tokenizer.ggml.add_space_prefix", "yes"), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.add_space_prefix: a string, not a bool");
    v = small_gpt2();
    v.add_bos = 1;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "there is no tokenizer.ggml.bos_token_id");
    v.add_bos = -1;
    v.add_eos = 1;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "there is no tokenizer.ggml.eos_token_id");
    v.add_eos = -1;
    v.pre = "llama-bpe"; /* (BOS added by default) */
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "there is no tokenizer.ggml.bos_token_id");
    /* the pre-tokenizer */
    v.pre = "tekken";
    refuse(tv_writer(&v), GLC_ERR_UNSUPPORTED,
           "tokenizer.ggml.pre \"tekken\": not a pre-tokenizer");
    v.pre = NULL;
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_value(w, "tokenizer.ggml.pre", 4, &u32), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG, "tokenizer.ggml.pre: a u32, not a string");
    /* the merges */
    v = small_gpt2();
    v.nmerge = -1;
    refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, "tokenizer.ggml.merges: no such key");
    w = tv_writer(&v);
    assert_int_equal(glc_gguf_set_array(w, "tokenizer.ggml.merges", 5, 3, i32), GLC_OK);
    refuse(w, GLC_ERR_INVALID_ARG,
           "tokenizer.ggml.merges: an array of i32, not an array of string");
    {
        static const char *const bad[][2] = {{"a b", "ab"},
                                             {"a b", "a "},
                                             {"a b", " a"},
                                             {"a b", "q b"},
                                             {"a b", "a q"},
                                             {"a b", "b a"},
                                             {"a b", "ab ab"}};
        static const char *const why[] = {
            "merges[1] \"ab\": not two texts joined by a space",
            "merges[1] \"a \": not two texts joined by a space",
            "merges[1] \" a\": not two texts joined by a space",
            "merges[1] \"q b\": the first is not a token",
            "merges[1] \"a q\": the second is not a token",
            "merges[1] \"b a\": the two together are not a token",
            "merges[1] \"ab ab\": the two together are not a token"};
        size_t k;
        for (k = 0; k < sizeof why / sizeof why[0]; k++) {
            v.merge = bad[k];
            v.nmerge = 2;
            refuse(tv_writer(&v), GLC_ERR_INVALID_ARG, why[k]);
        }
    }
}

static void test_call_refusals(void **state)
{
    static spm_file sf;
    tvocab v = spm_vocab(&sf, 0);
    glc_gguf *f = tv_open(tv_writer(&v));
    glc_tokenizer *t, *x = (glc_tokenizer *)(uintptr_t)0x1, *g;
    glc_tokenizer_stream *s = (glc_tokenizer_stream *)(uintptr_t)0x1;
    glc_tokenizer_info in;
    int32_t ids[8], good[3] = {1, S_LLHELLO, S_LLWORLD}, bad[2] = {1, 9999};
    size_t n, len, i;
    char buf[64];
    const char *p;
    (void)state;
    assert_int_equal(glc_tokenizer_create(NULL, &x), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL),
                       "glc_tokenizer_create: invalid argument: f is NULL");
    assert_int_equal(glc_tokenizer_create(f, NULL), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "out is NULL");
    assert_ptr_equal(x, (glc_tokenizer *)(uintptr_t)0x1);
    assert_int_equal(glc_tokenizer_create(f, &t), GLC_OK);
    glc_gguf_close(f);
    glc_tokenizer_destroy(NULL);
    assert_int_equal(glc_tokenizer_get_info(NULL, &in), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_tokenizer_get_info(t, NULL), GLC_ERR_INVALID_ARG);

    /* encode */
    n = 77;
    assert_int_equal(glc_tokenizer_encode(NULL, "a", 1, 0, ids, 8, &n), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "t is NULL");
    assert_int_equal(glc_tokenizer_encode(t, "a", 1, 0, ids, 8, NULL), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "n is NULL");
    assert_int_equal(glc_tokenizer_encode(t, NULL, 1, 0, ids, 8, &n), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "text is NULL");
    assert_int_equal(glc_tokenizer_encode(t, "a", 1, 0, NULL, 8, &n), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "ids is NULL");
    assert_int_equal(glc_tokenizer_encode(t, "a", 1, 1u << 7, ids, 8, &n), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "an unknown flag");
    assert_int_equal(n, 77);
    /* too small: the count needed, the ids untouched */
    for (i = 0; i < 8; i++)
        ids[i] = -9;
    assert_int_equal(glc_tokenizer_encode(t, "Hello world", 11, 0, ids, 2, &n), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(NULL), "3 ids do not fit in 2");
    assert_int_equal(n, 3);
    for (i = 0; i < 8; i++)
        assert_int_equal(ids[i], -9);
    assert_int_equal(glc_tokenizer_encode(t, "Hello world", 11, 0, NULL, 0, &n), GLC_ERR_BOUNDS);
    assert_int_equal(n, 3);
    assert_int_equal(glc_tokenizer_encode(t, "Hello world", 11, 0, ids, 3, &n), GLC_OK);
    assert_true(n == 3 && ids[0] == 1 && ids[1] == S_LLHELLO && ids[2] == S_LLWORLD &&
                ids[3] == -9);

    /* decode */
    len = 77;
    assert_int_equal(glc_tokenizer_decode(NULL, good, 3, 0, buf, 64, &len), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "t is NULL");
    assert_int_equal(glc_tokenizer_decode(t, good, 3, 0, buf, 64, NULL), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "len is NULL");
    assert_int_equal(glc_tokenizer_decode(t, NULL, 3, 0, buf, 64, &len), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "ids is NULL");
    assert_int_equal(glc_tokenizer_decode(t, good, 3, 0, NULL, 64, &len), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "buf is NULL");
    assert_int_equal(glc_tokenizer_decode(t, good, 3, 1u << 5, buf, 64, &len), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "an unknown flag");
    assert_int_equal(glc_tokenizer_decode(t, bad, 2, 0, buf, 64, &len), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "ids[1] is 9999, not a token id");
    bad[1] = -1;
    assert_int_equal(glc_tokenizer_decode(t, bad, 2, 0, buf, 64, &len), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "ids[1] is -1");
    assert_int_equal(len, 77);
    memset(buf, 'Z', sizeof buf);
    assert_int_equal(glc_tokenizer_decode(t, good, 3, 0, buf, 11, &len), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(NULL), "11 bytes and a NUL do not fit in 11");
    assert_int_equal(len, 11);
    for (i = 0; i < sizeof buf; i++)
        assert_int_equal(buf[i], 'Z');
    assert_int_equal(glc_tokenizer_decode(t, good, 3, 0, NULL, 0, &len), GLC_ERR_BOUNDS);
    assert_int_equal(len, 11);
    assert_int_equal(glc_tokenizer_decode(t, good, 3, 0, buf, 12, &len), GLC_OK);
    assert_true(len == 11 && strcmp(buf, "Hello world") == 0 && buf[12] == 'Z');
    assert_int_equal(glc_tokenizer_decode(t, NULL, 0, 0, buf, 1, &len), GLC_OK);
    assert_true(len == 0 && buf[0] == '\0');

    /* accessors */
    len = 77;
    assert_null(glc_tokenizer_token_bytes(t, 1, 0, NULL));
    assert_null(glc_tokenizer_token_text(t, 1, NULL));
    assert_null(glc_tokenizer_token_bytes(NULL, 1, 0, &len));
    assert_int_equal(glc_tokenizer_find(NULL, "a", 1), -1);
    assert_int_equal(glc_tokenizer_find(t, NULL, 1), -1);
    assert_int_equal(glc_tokenizer_token_type(NULL, 1), 0);
    assert_false(glc_tokenizer_is_eog(NULL, 2));
    assert_int_equal(len, 77);

    /* streams */
    assert_int_equal(glc_tokenizer_stream_create(NULL, 0, &s), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_tokenizer_stream_create(t, 1u << 4, &s), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "an unknown flag");
    assert_int_equal(glc_tokenizer_stream_create(t, 0, NULL), GLC_ERR_INVALID_ARG);
    assert_ptr_equal(s, (glc_tokenizer_stream *)(uintptr_t)0x1);
    assert_int_equal(glc_tokenizer_stream_create(t, 0, &s), GLC_OK);
    assert_int_equal(glc_tokenizer_stream_push(NULL, 1, &p, &len), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_tokenizer_stream_push(s, 1, NULL, &len), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_tokenizer_stream_push(s, 1, &p, NULL), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_tokenizer_stream_push(s, -3, &p, &len), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "-3 is not a token id");
    assert_int_equal(glc_tokenizer_stream_flush(NULL, &p, &len), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_tokenizer_stream_flush(s, NULL, &len), GLC_ERR_INVALID_ARG);
    glc_tokenizer_stream_destroy(s);
    glc_tokenizer_destroy(t);

    /* BOS or EOS asked of a vocabulary without; bytes with no token */
    v = small_gpt2();
    g = tv_make(&v);
    assert_int_equal(glc_tokenizer_encode(g, "a", 1, GLC_TOKENIZE_ADD_BOS, ids, 8, &n),
                     GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "BOS asked for, but the vocabulary has none");
    assert_int_equal(glc_tokenizer_encode(g, "a", 1, GLC_TOKENIZE_ADD_EOS, ids, 8, &n),
                     GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "EOS asked for");
    assert_int_equal(glc_tokenizer_encode(g, "ac", 2, 0, ids, 8, &n), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL),
                       "byte 0x63 has no token (no GPT-2 byte character) and the vocabulary has "
                       "no unknown token");
    glc_tokenizer_destroy(g);
    v.unk = 1;
    g = tv_make(&v);
    EXPECT(g, "ac b", 0, 0, 1, 3, 1); /* a <unk>(c) Ġ b */
    glc_tokenizer_destroy(g);
}

/* Every allocation of create, encode and stream_create failed in turn:
 * GLC_ERR_OUT_OF_MEMORY, outputs untouched, nothing leaked (ASan). */
static void test_alloc_failures(void **state)
{
    static spm_file sf;
    static gpt2_file gf;
    tvocab vs[2];
    int m;
    (void)state;
    vs[0] = spm_vocab(&sf, 0);
    vs[1] = gpt2_vocab(&gf, "llama-bpe");
    for (m = 0; m < 2; m++) {
        glc_gguf *f = tv_open(tv_writer(&vs[m]));
        glc_tokenizer *t = NULL;
        glc_tokenizer_stream *s = NULL;
        glc_status st = GLC_ERR_OUT_OF_MEMORY;
        long k;
        for (k = 1; st != GLC_OK; k++) {
            glc_tokenizer *x = (glc_tokenizer *)(uintptr_t)0x1;
            glc__alloc_fail_after(k);
            st = glc_tokenizer_create(f, &x);
            glc__alloc_fail_after(0);
            if (st == GLC_OK) {
                t = x;
            } else {
                assert_int_equal(st, GLC_ERR_OUT_OF_MEMORY);
                assert_ptr_equal(x, (glc_tokenizer *)(uintptr_t)0x1);
            }
        }
        assert_true(k > 5);
        glc_gguf_close(f);
        for (k = 1, st = GLC_ERR_OUT_OF_MEMORY; st != GLC_OK; k++) {
            int32_t ids[64];
            size_t n = 77;
            glc__alloc_fail_after(k);
            st = glc_tokenizer_encode(t, "Hello world, \xc3\xa9 and more", 22, 0, ids, 64, &n);
            glc__alloc_fail_after(0);
            if (st != GLC_OK) {
                assert_int_equal(st, GLC_ERR_OUT_OF_MEMORY);
                assert_int_equal(n, 77);
            }
        }
        for (k = 1, st = GLC_ERR_OUT_OF_MEMORY; st != GLC_OK; k++) {
            glc__alloc_fail_after(k);
            st = glc_tokenizer_stream_create(t, 0, &s);
            glc__alloc_fail_after(0);
            if (st != GLC_OK)
                assert_int_equal(st, GLC_ERR_OUT_OF_MEMORY);
        }
        glc_tokenizer_stream_destroy(s);
        glc_tokenizer_destroy(t);
    }
}

/* 100 KB texts: words, one character repeated (one long run of merges),
 * and for GPT-2 one piece of 100 KB. */
static void test_long_texts(void **state)
{
    static spm_file sf;
    static gpt2_file gf;
    const size_t len = 100 * 1024;
    char *text = malloc(len + 1), *back = malloc(len + 1);
    int32_t *ids = malloc((len + 2) * sizeof *ids);
    tvocab v;
    glc_tokenizer *t;
    size_t i, n, k;
    int m;
    (void)state;
    assert_true(text && back && ids);
    for (m = 0; m < 2; m++) {
        v = m == 0 ? spm_vocab(&sf, 0) : gpt2_vocab(&gf, NULL);
        t = tv_make(&v);
        for (i = 0; i < len; i++)
            text[i] = "Hello world "[i % 12];
        assert_int_equal(glc_tokenizer_encode(t, text, len, 0, ids, len + 2, &n), GLC_OK);
        assert_true(n > len / 8 && n <= len / 4 + 1);
        assert_int_equal(glc_tokenizer_decode(t, ids, n, 0, back, len + 1, &k), GLC_OK);
        assert_true(k == len && memcmp(back, text, len) == 0);
        memset(text, m == 0 ? 'l' : 'a', len); /* "ll" (SentencePiece) or "a a" (GPT-2) */
        assert_int_equal(
            glc_tokenizer_encode(t, text, len, GLC_TOKENIZE_NO_BOS_EOS, ids, len + 2, &n), GLC_OK);
        assert_int_equal(n, len / 2 + (m == 0)); /* (▁ alone first) */
        for (i = m == 0; i < n; i++)
            assert_int_equal(ids[i], m == 0 ? S_LL : G_AA);
        glc_tokenizer_destroy(t);
    }
    free(text);
    free(back);
    free(ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spm_hand),
        cmocka_unit_test(test_gpt2_hand),
        cmocka_unit_test(test_pretokenizers),
        cmocka_unit_test(test_spm_reference),
        cmocka_unit_test(test_pretokenizer_reference),
        cmocka_unit_test(test_bpe_reference),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_file_refusals),
        cmocka_unit_test(test_call_refusals),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_long_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
