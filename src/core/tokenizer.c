/*
 * Tokenizer: the vocabulary of a GGUF file's tokenizer.ggml.* metadata,
 * text to token ids and back, GL-free. It gives llama.cpp's ids, written
 * anew from the algorithms' descriptions, except where it differs on
 * purpose:
 *  - invalid UTF-8 keeps its bytes (below), where llama.cpp makes each bad
 *    byte U+FFFD ("gpt2") or cuts characters by the lead byte ("llama");
 *  - special tokens are matched leftmost-longest (as Hugging Face's added
 *    tokens), where llama.cpp splits the text by each special token in
 *    turn, longest first (the same unless two special texts overlap);
 *  - a character with no token and no byte token: the unknown token, or a
 *    refusal, where llama.cpp throws ("llama") or drops it ("gpt2");
 *  - merges are checked as Hugging Face checks them (both parts and the
 *    result tokens); llama.cpp takes any;
 *  - decode leaves out the leading space after BOS too (SentencePiece and
 *    Hugging Face do; llama.cpp keeps it there), so decode inverts encode.
 *
 * At create everything is checked and copied: the token texts (one block,
 * each text followed by a NUL), scores, types, the bytes each token
 * decodes to (computed once), a hash table text -> id (open addressing,
 * load at most 1/2; a text given twice maps to the last id, as llama.cpp),
 * a hash table of the merges (left id, right id) -> (rank, merged id), the
 * token of each byte (SentencePiece byte fallback; GPT-2's byte
 * characters), and the special tokens bucketed by first byte, longest
 * first. After create nothing changes: encode and decode allocate their
 * scratch per call, so threads may share a tokenizer.
 *
 * Merging (both models) is the linked-symbol, priority-queue algorithm:
 * symbols are a doubly linked list over the text; every adjacent pair that
 * may merge is pushed on a binary heap (SentencePiece: the merged token's
 * score, highest first; GPT-2: the merge's rank, lowest first; ties: the
 * leftmost, by symbol index, which is text order); a popped pair is stale
 * when either symbol is gone or has grown (symbols only grow and keep their
 * index, so equal sizes mean the pair still stands). Each merge pushes at
 * most two pairs: O(n log n) for n characters, the heap at most 2n. Only
 * concatenations up to the longest token's length are looked up.
 *
 * The GPT-2, Llama 3 and Qwen2 pre-tokenizers are their regular
 * expressions (written out below) matched by hand on characters: letters
 * and numbers are Unicode's categories L and N (Unicode 14, the table
 * below), white space the White_Space property; an invalid UTF-8 byte is a
 * character of its own that is none of them (so invalid text keeps its
 * bytes; llama.cpp makes them U+FFFD). SentencePiece's characters are
 * the same: llama.cpp cuts them by the lead byte alone (a lead byte takes
 * the next 1..3 bytes whatever they are), which is the same for valid
 * UTF-8 but cuts an escaped space apart after an invalid lead byte (and
 * then decode gives U+2581's bytes, not the space).
 */
#include "glcompute.h"

#include "alloc.h"
#include "errmsg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EOG 0x80u /* attr: the token ends generation (over the type, bits 0..2) */
/* encode: symbol indices and sizes are int32; scratch is about 70 bytes a byte */
#define MAX_TEXT ((size_t)INT32_MAX / 4 < SIZE_MAX / 128 ? (size_t)INT32_MAX / 4 : SIZE_MAX / 128)

static const char K_MODEL[] = "tokenizer.ggml.model";
static const char K_PRE[] = "tokenizer.ggml.pre";
static const char K_TOKENS[] = "tokenizer.ggml.tokens";
static const char K_SCORES[] = "tokenizer.ggml.scores";
static const char K_TYPES[] = "tokenizer.ggml.token_type";
static const char K_MERGES[] = "tokenizer.ggml.merges";

typedef struct merge {
    int32_t a, b; /* the pair's tokens; a = -1: an empty slot */
    int32_t rank, id;
} merge;

struct glc_tokenizer {
    glc_tokenizer_info info;
    int ignore_merges;  /* Llama 3: a piece that is a token is taken whole */
    char *text;         /* token i: text + text_at[i], text_at[i + 1] - text_at[i] - 1 bytes */
    size_t *text_at;
    char *piece;        /* the bytes token i decodes to, the same way */
    size_t *piece_at;
    float *score;       /* NULL: all 0 */
    uint8_t *attr;      /* glc_token_type | EOG */
    int32_t *slots;     /* text -> id, -1: empty */
    size_t mask;
    merge *merges;
    size_t mmask;
    int32_t byte_id[256];  /* SentencePiece: <0xNN> or the byte alone; GPT-2: its character */
    uint32_t byte_cp[256]; /* GPT-2's character for each byte */
    int32_t *special;      /* special tokens, by first byte, longest first */
    size_t special_at[257];
    size_t max_len;        /* the longest token text */
};

struct glc_tokenizer_stream {
    const glc_tokenizer *t;
    unsigned flags;
    int strip;
    unsigned char held[4];
    size_t nheld;
    char *buf; /* what push gives: held bytes, a token's bytes, a NUL */
};

static glc_status oom(void)
{
    return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
}

static const char *tok_text(const glc_tokenizer *t, int32_t id, size_t *n)
{
    *n = t->text_at[id + 1] - t->text_at[id] - 1;
    return t->text + t->text_at[id];
}

static int type_of(const glc_tokenizer *t, int32_t id) { return t->attr[id] & 7; }

/* ---- hash tables ---- */

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static uint64_t hash_pair(int32_t a, int32_t b)
{
    uint64_t z = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t table_size(size_t n) /* a power of two at least 2n */
{
    size_t c = 16;
    while (c < 2 * n)
        c *= 2;
    return c;
}

static int32_t vocab_find(const glc_tokenizer *t, const void *s, size_t n)
{
    size_t i, len;
    int32_t id;
    if (n > t->max_len)
        return -1;
    for (i = (size_t)hash_bytes(s, n) & t->mask; (id = t->slots[i]) >= 0; i = (i + 1) & t->mask) {
        const char *o = tok_text(t, id, &len);
        if (len == n && memcmp(o, s, n) == 0)
            return id;
    }
    return -1;
}

static void vocab_add(glc_tokenizer *t, int32_t id)
{
    size_t n, i, len;
    const char *s = tok_text(t, id, &n);
    for (i = (size_t)hash_bytes(s, n) & t->mask; t->slots[i] >= 0; i = (i + 1) & t->mask) {
        const char *o = tok_text(t, t->slots[i], &len);
        if (len == n && memcmp(o, s, n) == 0)
            break; /* the same text again: the last id wins */
    }
    t->slots[i] = id;
}

static const merge *merge_find(const glc_tokenizer *t, int32_t a, int32_t b)
{
    size_t i;
    if (!t->merges)
        return NULL;
    for (i = (size_t)hash_pair(a, b) & t->mmask; t->merges[i].a >= 0; i = (i + 1) & t->mmask)
        if (t->merges[i].a == a && t->merges[i].b == b)
            return &t->merges[i];
    return NULL;
}

/* ---- UTF-8 ---- */

/* The length of the sequence lead byte b starts (0: b starts none) and the
 * range of its second byte (overlong forms, surrogates and code points
 * past U+10FFFF are not valid). */
static size_t utf8_lead(unsigned b, unsigned *lo, unsigned *hi)
{
    *lo = 0x80;
    *hi = 0xbf;
    if (b < 0x80)
        return 1;
    if (b < 0xc2 || b > 0xf4)
        return 0;
    if (b == 0xe0)
        *lo = 0xa0;
    else if (b == 0xed)
        *hi = 0x9f;
    else if (b == 0xf0)
        *lo = 0x90;
    else if (b == 0xf4)
        *hi = 0x8f;
    return b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
}

/* How many bytes of s[0 .. n) agree with a valid character starting at
 * s[0], up to its length *len (0: s[0] starts none). A valid character:
 * the result is *len; a valid one cut short by the end: n < *len. */
static size_t utf8_match(const unsigned char *s, size_t n, size_t *len)
{
    unsigned lo, hi;
    size_t i;
    *len = utf8_lead(s[0], &lo, &hi);
    if (!*len)
        return 0;
    for (i = 1; i < *len && i < n; i++)
        if (s[i] < (i == 1 ? lo : 0x80u) || s[i] > (i == 1 ? hi : 0xbfu))
            break;
    return i;
}

/* GPT-2's byte characters (all below U+0800) in UTF-8. */
static size_t utf8_put(uint32_t cp, unsigned char *o)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    o[0] = (unsigned char)(0xc0 | cp >> 6);
    o[1] = (unsigned char)(0x80 | (cp & 0x3f));
    return 2;
}

/* ---- loading ---- */

static const char *value_type_name(int vt)
{
    static const char *const names[13] = {"u8",  "i8",   "u16",    "i16",   "u32", "i32", "f32",
                                          "bool", "string", "array", "u64",  "i64", "f64"};
    return vt >= 0 && vt < 13 ? names[vt] : "?";
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    while (n--)
        v = v << 8 | p[n];
    return v;
}

/* An array under key of element type want: its count and elements (fixed-
 * size elements packed; a string array's are read by glc_gguf_array_string).
 * 0 and NULL when absent. */
static glc_status get_array(const glc_gguf *f, const char *key, int want, uint64_t *count,
                            const unsigned char **p)
{
    int vt = glc_gguf_value_type(f, key), et = -1;
    const void *d = NULL;
    *count = 0;
    *p = NULL;
    if (vt < 0)
        return GLC_OK;
    if (vt != 9 || glc_gguf_get_array(f, key, &et, count, &d) != GLC_OK || et != want)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s: %s%s, not an array of %s", key,
                         vt == 9 ? "an array of " : "a ", value_type_name(vt == 9 ? et : vt),
                         value_type_name(want));
    *p = d;
    return GLC_OK;
}

/* A token id under key, if the file has one: an integer inside the
 * vocabulary. */
static glc_status get_id(const glc_gguf *f, const char *key, int32_t nvocab, int32_t *id)
{
    int vt = glc_gguf_value_type(f, key);
    int64_t v;
    if (vt < 0)
        return GLC_OK;
    if (vt == 7 || glc_gguf_get_int(f, key, &v) != GLC_OK)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s: a %s, not a token id", key,
                         value_type_name(vt));
    if (v < 0 || v >= nvocab)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "tokenizer: %s: %lld, not a token id (the vocabulary has %d tokens)", key,
                         (long long)v, (int)nvocab);
    *id = (int32_t)v;
    return GLC_OK;
}

static glc_status get_bool(const glc_gguf *f, const char *key, int *b)
{
    int vt = glc_gguf_value_type(f, key);
    int64_t v;
    if (vt < 0)
        return GLC_OK;
    if (vt != 7 || glc_gguf_get_int(f, key, &v) != GLC_OK)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s: a %s, not a bool", key,
                         value_type_name(vt));
    *b = v != 0;
    return GLC_OK;
}

static int is_one_of(const char *s, size_t n, const char *const *names)
{
    for (; *names; names++)
        if (strlen(*names) == n && memcmp(*names, s, n) == 0)
            return 1;
    return 0;
}

static glc_status load_model(glc_tokenizer *t, const glc_gguf *f)
{
    static const char *const gpt2[] = {"gpt-2", "phi-2", "mpt", "olmo", "jais", NULL};
    static const char *const llama3[] = {"llama-bpe", "llama3", "llama-v3", "falcon3",
                                         "falcon-h1", "pixtral", "midm-2.0", "lfm2", NULL};
    static const char *const qwen2[] = {"qwen2", "deepseek-r1-qwen", "stablelm2", "megrez", NULL};
    const char *s;
    size_t n;
    int vt = glc_gguf_value_type(f, K_MODEL);
    if (vt < 0)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "tokenizer: %s: no such key: no tokenizer in the file", K_MODEL);
    if (vt != 8 || glc_gguf_get_string(f, K_MODEL, &s, &n) != GLC_OK)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s: a %s, not a string", K_MODEL,
                         value_type_name(vt));
    if (n == 5 && memcmp(s, "llama", 5) == 0)
        t->info.model = GLC_TOKENIZER_LLAMA;
    else if (n == 4 && memcmp(s, "gpt2", 4) == 0)
        t->info.model = GLC_TOKENIZER_GPT2;
    else
        return glc__fail(NULL, GLC_ERR_UNSUPPORTED,
                         "tokenizer: %s \"%.*s\": not a tokenizer this library has (\"llama\", "
                         "\"gpt2\")",
                         K_MODEL, (int)(n < 40 ? n : 40), s);
    if (t->info.model != GLC_TOKENIZER_GPT2)
        return GLC_OK;
    t->info.pre = GLC_TOKENIZER_PRE_GPT2;
    if ((vt = glc_gguf_value_type(f, K_PRE)) < 0)
        return GLC_OK;
    if (vt != 8 || glc_gguf_get_string(f, K_PRE, &s, &n) != GLC_OK)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s: a %s, not a string", K_PRE,
                         value_type_name(vt));
    if (is_one_of(s, n, llama3)) {
        t->info.pre = GLC_TOKENIZER_PRE_LLAMA3;
        t->ignore_merges = 1;
        t->info.add_bos = 1;
    } else if (is_one_of(s, n, qwen2)) {
        t->info.pre = GLC_TOKENIZER_PRE_QWEN2;
    } else if (!is_one_of(s, n, gpt2)) {
        return glc__fail(NULL, GLC_ERR_UNSUPPORTED,
                         "tokenizer: %s \"%.*s\": not a pre-tokenizer this library has (GPT-2's, "
                         "Llama 3's, Qwen2's)",
                         K_PRE, (int)(n < 40 ? n : 40), s);
    }
    return GLC_OK;
}

/* tokenizer.ggml.tokens, .scores and .token_type. */
static glc_status load_tokens(glc_tokenizer *t, const glc_gguf *f)
{
    uint64_t count, c2, i;
    const unsigned char *p;
    size_t total = 0;
    int32_t n;
    glc_status st;
    if ((st = get_array(f, K_TOKENS, 8, &count, &p)) != GLC_OK)
        return st;
    if (!p)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s: no such key", K_TOKENS);
    if (count < 1 || count > (uint64_t)INT32_MAX - 1)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "tokenizer: %s: %llu tokens (1 .. 2^31 - 2 taken)", K_TOKENS,
                         (unsigned long long)count);
    n = (int32_t)count;
    t->info.vocab_size = n;
    for (i = 0; i < count; i++) {
        const char *str;
        size_t len;
        glc_gguf_array_string(f, K_TOKENS, i, &str, &len); /* constant time: indexed at open */
        total += len + 1;
    }
    t->text = glc__malloc(total);
    t->piece = glc__malloc(total); /* (a token decodes to at most its text's bytes) */
    t->text_at = glc__malloc(((size_t)n + 1) * sizeof *t->text_at);
    t->piece_at = glc__malloc(((size_t)n + 1) * sizeof *t->piece_at);
    t->attr = glc__malloc((size_t)n);
    t->mask = table_size((size_t)n) - 1;
    t->slots = glc__malloc((t->mask + 1) * sizeof *t->slots);
    if (!t->text || !t->piece || !t->text_at || !t->piece_at || !t->attr || !t->slots)
        return oom();
    for (i = 0, total = 0; i < count; i++) {
        const char *str;
        size_t len;
        glc_gguf_array_string(f, K_TOKENS, i, &str, &len);
        t->text_at[i] = total;
        memcpy(t->text + total, str, len);
        t->text[total + len] = '\0';
        total += len + 1;
        if (len > t->max_len)
            t->max_len = len;
        t->attr[i] = GLC_TOKEN_NORMAL;
    }
    t->text_at[n] = total;
    if ((st = get_array(f, K_SCORES, 6, &c2, &p)) != GLC_OK)
        return st;
    if (p && c2 != count)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s: %llu scores for %d tokens",
                         K_SCORES, (unsigned long long)c2, (int)n);
    if (p) {
        if (!(t->score = glc__malloc((size_t)n * sizeof *t->score)))
            return oom();
        for (i = 0; i < count; i++) {
            uint32_t b = (uint32_t)le(p + 4 * i, 4);
            memcpy(&t->score[i], &b, 4);
            if (isnan(t->score[i]))
                return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s[%llu]: NaN", K_SCORES,
                                 (unsigned long long)i);
        }
    }
    if ((st = get_array(f, K_TYPES, 5, &c2, &p)) != GLC_OK)
        return st;
    if (p && c2 != count)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s: %llu types for %d tokens",
                         K_TYPES, (unsigned long long)c2, (int)n);
    for (i = 0; p && i < count; i++) {
        int32_t ty = (int32_t)(uint32_t)le(p + 4 * i, 4);
        if (ty < GLC_TOKEN_NORMAL || ty > GLC_TOKEN_BYTE)
            return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                             "tokenizer: %s[%llu]: %d, not a token type (1 normal .. 6 byte)",
                             K_TYPES, (unsigned long long)i, (int)ty);
        t->attr[i] = (uint8_t)ty;
    }
    memset(t->slots, 0xff, (t->mask + 1) * sizeof *t->slots);
    for (i = 0; i < count; i++)
        if (t->text_at[i + 1] - t->text_at[i] > 1) /* (an empty text is never looked up) */
            vocab_add(t, (int32_t)i);
    return GLC_OK;
}

/* The special ids, the add flags and the end-of-generation tokens. */
static glc_status load_specials(glc_tokenizer *t, const glc_gguf *f)
{
    static const char *const eog_texts[] = {"<|eot_id|>",    "<|im_end|>",   "<|end|>",
                                            "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",
                                            "<EOT>",         "<|end_of_text|>"};
    static const char prefix_key[] = "tokenizer.ggml.add_space_prefix";
    glc_tokenizer_info *in = &t->info;
    int32_t n = in->vocab_size, eom = -1;
    size_t k;
    glc_status st;
    in->bos = in->eos = in->eot = in->unk = in->pad = -1;
    if (in->model == GLC_TOKENIZER_LLAMA) {
        in->unk = 0;
        in->bos = n > 1 ? 1 : -1;
        in->eos = n > 2 ? 2 : -1;
        in->add_bos = 1;
        in->add_space_prefix = 1;
    }
    if ((st = get_id(f, "tokenizer.ggml.bos_token_id", n, &in->bos)) != GLC_OK ||
        (st = get_id(f, "tokenizer.ggml.eos_token_id", n, &in->eos)) != GLC_OK ||
        (st = get_id(f, "tokenizer.ggml.eot_token_id", n, &in->eot)) != GLC_OK ||
        (st = get_id(f, "tokenizer.ggml.eom_token_id", n, &eom)) != GLC_OK ||
        (st = get_id(f, "tokenizer.ggml.unknown_token_id", n, &in->unk)) != GLC_OK ||
        (st = get_id(f, "tokenizer.ggml.padding_token_id", n, &in->pad)) != GLC_OK ||
        (st = get_bool(f, "tokenizer.ggml.add_bos_token", &in->add_bos)) != GLC_OK ||
        (st = get_bool(f, "tokenizer.ggml.add_eos_token", &in->add_eos)) != GLC_OK)
        return st;
    if (in->model == GLC_TOKENIZER_LLAMA &&
        (st = get_bool(f, prefix_key, &in->add_space_prefix)) != GLC_OK)
        return st;
    if (in->add_bos && in->bos < 0)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "tokenizer: tokenizer.ggml.add_bos_token: BOS is to be added, but "
                         "there is no tokenizer.ggml.bos_token_id");
    if (in->add_eos && in->eos < 0)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "tokenizer: tokenizer.ggml.add_eos_token: EOS is to be added, but "
                         "there is no tokenizer.ggml.eos_token_id");
    for (k = 0; k < sizeof eog_texts / sizeof eog_texts[0]; k++) {
        int32_t id = vocab_find(t, eog_texts[k], strlen(eog_texts[k]));
        if (id >= 0)
            t->attr[id] = GLC_TOKEN_CONTROL | EOG;
    }
    if (in->eos >= 0)
        t->attr[in->eos] |= EOG;
    if (in->eot >= 0)
        t->attr[in->eot] |= EOG;
    if (eom >= 0)
        t->attr[eom] |= EOG;
    return GLC_OK;
}

static int hex_digit(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                        : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A "llama" byte token's byte, from its text <0xNN>; -1: not so written. */
static int byte_of_text(const char *s, size_t n)
{
    int hi, lo;
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
        return -1;
    hi = hex_digit((unsigned char)s[3]);
    lo = hex_digit((unsigned char)s[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/* Byte tokens, GPT-2's byte characters, the merges. */
static glc_status load_bytes_and_merges(glc_tokenizer *t, const glc_gguf *f)
{
    uint64_t count, i;
    const unsigned char *p;
    char *cat = NULL;
    int b, k = 0;
    glc_status st;
    for (b = 0; b < 256; b++) {
        unsigned char u[4];
        char hex[8];
        int printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
        t->byte_cp[b] = printable ? (uint32_t)b : 256u + (uint32_t)k++;
        if (t->info.model == GLC_TOKENIZER_GPT2) {
            t->byte_id[b] = vocab_find(t, u, utf8_put(t->byte_cp[b], u));
            continue;
        }
        snprintf(hex, sizeof hex, "<0x%02X>", b);
        t->byte_id[b] = vocab_find(t, hex, 6);
        if (t->byte_id[b] < 0) {
            u[0] = (unsigned char)b;
            t->byte_id[b] = vocab_find(t, u, 1);
        }
    }
    if (t->info.model == GLC_TOKENIZER_LLAMA) {
        int32_t id;
        for (id = 0; id < t->info.vocab_size; id++) {
            size_t n;
            const char *s = tok_text(t, id, &n);
            if (type_of(t, id) == GLC_TOKEN_BYTE && byte_of_text(s, n) < 0)
                return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                                 "tokenizer: %s[%d]: a byte token (type 6) \"%.*s\", not <0xNN>",
                                 K_TOKENS, (int)id, (int)(n < 40 ? n : 40), s);
        }
        return GLC_OK;
    }
    if ((st = get_array(f, K_MERGES, 8, &count, &p)) != GLC_OK)
        return st;
    if (!p)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "tokenizer: %s: no such key (model \"gpt2\" needs it)", K_MERGES);
    if (count > (uint64_t)INT32_MAX)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s: %llu merges", K_MERGES,
                         (unsigned long long)count);
    t->mmask = table_size((size_t)count) - 1;
    t->merges = glc__malloc((t->mmask + 1) * sizeof *t->merges);
    cat = glc__malloc(t->max_len + 1);
    if (!t->merges || !cat) {
        glc__free(cat);
        return oom();
    }
    for (i = 0; i <= t->mmask; i++)
        t->merges[i].a = -1;
    for (i = 0; i < count; i++) {
        size_t len, sp, j;
        const char *s;
        int32_t a, bb, id = -1;
        const char *why = NULL;
        glc_gguf_array_string(f, K_MERGES, i, &s, &len);
        for (sp = 1; sp < len && s[sp] != ' '; sp++)
            ;
        if (sp + 1 >= len)
            why = "not two texts joined by a space";
        else if ((a = vocab_find(t, s, sp)) < 0)
            why = "the first is not a token";
        else if ((bb = vocab_find(t, s + sp + 1, len - sp - 1)) < 0)
            why = "the second is not a token";
        else if (len - 1 > t->max_len)
            why = "the two together are not a token";
        else {
            memcpy(cat, s, sp);
            memcpy(cat + sp, s + sp + 1, len - sp - 1);
            if ((id = vocab_find(t, cat, len - 1)) < 0)
                why = "the two together are not a token";
        }
        if (why) {
            glc__free(cat);
            return glc__fail(NULL, GLC_ERR_INVALID_ARG, "tokenizer: %s[%llu] \"%.*s\": %s",
                             K_MERGES, (unsigned long long)i, (int)(len < 60 ? len : 60), s, why);
        }
        for (j = (size_t)hash_pair(a, bb) & t->mmask; t->merges[j].a >= 0; j = (j + 1) & t->mmask)
            if (t->merges[j].a == a && t->merges[j].b == bb)
                break; /* the same pair again: the first rank stays */
        if (t->merges[j].a < 0) {
            t->merges[j].a = a;
            t->merges[j].b = bb;
            t->merges[j].rank = (int32_t)i;
            t->merges[j].id = id;
        }
    }
    glc__free(cat);
    return GLC_OK;
}

/* The bytes each token decodes to. */
static void load_pieces(glc_tokenizer *t)
{
    int16_t char_byte[256 + 68]; /* GPT-2's characters back to bytes (-1: none) */
    unsigned char *o = (unsigned char *)t->piece;
    size_t at = 0, n, i;
    int32_t id;
    int b;
    memset(char_byte, 0xff, sizeof char_byte);
    for (b = 0; b < 256; b++)
        char_byte[t->byte_cp[b]] = (int16_t)b;
    for (id = 0; id < t->info.vocab_size; id++) {
        const unsigned char *s = (const unsigned char *)tok_text(t, id, &n);
        int type = type_of(t, id);
        t->piece_at[id] = at;
        if (type == GLC_TOKEN_USER_DEFINED) {
            memcpy(o + at, s, n);
            at += n;
        } else if (type == GLC_TOKEN_BYTE && t->info.model == GLC_TOKENIZER_LLAMA) {
            o[at++] = (unsigned char)byte_of_text((const char *)s, n);
        } else if ((type == GLC_TOKEN_NORMAL || type == GLC_TOKEN_BYTE) &&
                   t->info.model == GLC_TOKENIZER_LLAMA) {
            for (i = 0; i < n; i++) {
                if (i + 2 < n && s[i] == 0xe2 && s[i + 1] == 0x96 && s[i + 2] == 0x81) {
                    o[at++] = ' ';
                    i += 2;
                } else {
                    o[at++] = s[i];
                }
            }
        } else if (type == GLC_TOKEN_NORMAL || type == GLC_TOKEN_BYTE) {
            /* a character GPT-2 has for a byte: that byte; others as they are */
            for (i = 0; i < n;) {
                size_t len, m = utf8_match(s + i, n - i, &len);
                if (len == 2 && m == 2) {
                    uint32_t cp = (uint32_t)(s[i] & 0x1f) << 6 | (s[i + 1] & 0x3f);
                    if (cp < sizeof char_byte / sizeof char_byte[0] && char_byte[cp] >= 0) {
                        o[at++] = (unsigned char)char_byte[cp];
                        i += 2;
                        continue;
                    }
                }
                if (len == 1) {
                    o[at++] = char_byte[s[i]] >= 0 ? (unsigned char)char_byte[s[i]] : s[i];
                    i++;
                    continue;
                }
                len = len && m == len ? len : 1;
                memcpy(o + at, s + i, len);
                at += len;
                i += len;
            }
        }
        o[at++] = '\0';
        n = at - 1 - t->piece_at[id];
        if (n > t->info.max_token_bytes)
            t->info.max_token_bytes = n;
        if ((type == GLC_TOKEN_CONTROL || type == GLC_TOKEN_UNKNOWN) &&
            t->text_at[id + 1] - t->text_at[id] - 1 > t->info.max_token_bytes)
            t->info.max_token_bytes = t->text_at[id + 1] - t->text_at[id] - 1;
    }
    t->piece_at[t->info.vocab_size] = at;
}

typedef struct special_key {
    unsigned char first;
    size_t len;
    int32_t id;
} special_key;

static int special_order(const void *x, const void *y)
{
    const special_key *a = x, *b = y;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    if (a->len != b->len)
        return a->len > b->len ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The tokens matched in the text before it is split: control, unknown and
 * user defined, non-empty, one id per text. */
static glc_status load_special_list(glc_tokenizer *t)
{
    special_key *keys;
    size_t count = 0, i, n;
    int32_t id;
    for (id = 0; id < t->info.vocab_size; id++) {
        int type = type_of(t, id);
        const char *s = tok_text(t, id, &n);
        if ((type == GLC_TOKEN_CONTROL || type == GLC_TOKEN_UNKNOWN ||
             type == GLC_TOKEN_USER_DEFINED) && n && vocab_find(t, s, n) == id)
            count++;
    }
    keys = glc__malloc((count ? count : 1) * sizeof *keys);
    t->special = glc__malloc((count ? count : 1) * sizeof *t->special);
    if (!keys || !t->special) {
        glc__free(keys);
        return oom();
    }
    for (id = 0, i = 0; id < t->info.vocab_size; id++) {
        int type = type_of(t, id);
        const char *s = tok_text(t, id, &n);
        if ((type == GLC_TOKEN_CONTROL || type == GLC_TOKEN_UNKNOWN ||
             type == GLC_TOKEN_USER_DEFINED) && n && vocab_find(t, s, n) == id) {
            keys[i].first = (unsigned char)s[0];
            keys[i].len = n;
            keys[i++].id = id;
        }
    }
    qsort(keys, count, sizeof *keys, special_order);
    memset(t->special_at, 0, sizeof t->special_at);
    for (i = 0; i < count; i++) {
        t->special[i] = keys[i].id;
        t->special_at[keys[i].first + 1] = i + 1;
    }
    for (i = 1; i <= 256; i++) /* (empty buckets start where the one before ends) */
        if (t->special_at[i] < t->special_at[i - 1])
            t->special_at[i] = t->special_at[i - 1];
    glc__free(keys);
    return GLC_OK;
}

glc_status glc_tokenizer_create(const glc_gguf *f, glc_tokenizer **out)
{
    glc_tokenizer *t;
    glc_status st;
    if (!f || !out)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_tokenizer_create: invalid argument: %s",
                         !f ? "f is NULL" : "out is NULL");
    if (!(t = glc__calloc(1, sizeof *t)))
        return oom();
    if ((st = load_model(t, f)) != GLC_OK || (st = load_tokens(t, f)) != GLC_OK ||
        (st = load_specials(t, f)) != GLC_OK || (st = load_bytes_and_merges(t, f)) != GLC_OK)
        goto fail;
    load_pieces(t);
    if ((st = load_special_list(t)) != GLC_OK)
        goto fail;
    *out = t;
    return GLC_OK;
fail:
    glc_tokenizer_destroy(t);
    return st;
}

void glc_tokenizer_destroy(glc_tokenizer *t)
{
    if (!t)
        return;
    glc__free(t->text);
    glc__free(t->text_at);
    glc__free(t->piece);
    glc__free(t->piece_at);
    glc__free(t->score);
    glc__free(t->attr);
    glc__free(t->slots);
    glc__free(t->merges);
    glc__free(t->special);
    glc__free(t);
}

/* ---- accessors ---- */

glc_status glc_tokenizer_get_info(const glc_tokenizer *t, glc_tokenizer_info *out)
{
    if (!t || !out)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_tokenizer_get_info: invalid argument");
    *out = t->info;
    return GLC_OK;
}

static int valid_id(const glc_tokenizer *t, int32_t id)
{
    return t && id >= 0 && id < t->info.vocab_size;
}

const char *glc_tokenizer_token_text(const glc_tokenizer *t, int32_t id, size_t *len)
{
    if (!valid_id(t, id) || !len)
        return NULL;
    return tok_text(t, id, len);
}

int glc_tokenizer_token_type(const glc_tokenizer *t, int32_t id)
{
    return valid_id(t, id) ? type_of(t, id) : 0;
}

int glc_tokenizer_is_eog(const glc_tokenizer *t, int32_t id)
{
    return valid_id(t, id) && (t->attr[id] & EOG);
}

int32_t glc_tokenizer_find(const glc_tokenizer *t, const char *text, size_t len)
{
    if (!t || (!text && len) || !len)
        return -1;
    return vocab_find(t, text, len);
}

const char *glc_tokenizer_token_bytes(const glc_tokenizer *t, int32_t id, unsigned flags,
                                      size_t *len)
{
    int type;
    if (!valid_id(t, id) || !len)
        return NULL;
    type = type_of(t, id);
    if ((flags & GLC_DETOKENIZE_SPECIAL) &&
        (type == GLC_TOKEN_CONTROL || type == GLC_TOKEN_UNKNOWN))
        return tok_text(t, id, len);
    *len = t->piece_at[id + 1] - t->piece_at[id] - 1;
    return t->piece + t->piece_at[id];
}

/* ---- Unicode classes for the pre-tokenizers ---- */

enum { CL_END = -1, CL_OTHER, CL_LETTER, CL_NUMBER, CL_SPACE };

/* From U+0080 on, runs of code points by class: each entry is a run's first
 * code point << 2 | its class (0 other, 1 letter: category L, 2 number:
 * category N), the run lasting to the next entry's first code point.
 * Unicode 14.0, generated by
 *   python3 -c 'import unicodedata as u; p = None
 *   for c in range(0x80, 0x110000):
 *       k = "LN".find(u.category(chr(c))[0]) + 1
 *       if k != p: print(hex(c << 2 | k), end=", "); p = k' */
static const uint32_t class_runs[] = {
    0x200, 0x2a9, 0x2ac, 0x2ca, 0x2d0, 0x2d5, 0x2d8, 0x2e6, 0x2e9, 0x2ec, 0x2f2, 0x2fc, 0x301,
    0x35c, 0x361, 0x3dc, 0x3e1, 0xb08, 0xb19, 0xb48, 0xb81, 0xb94, 0xbb1, 0xbb4, 0xbb9, 0xbbc,
    0xdc1, 0xdd4, 0xdd9, 0xde0, 0xde9, 0xdf8, 0xdfd, 0xe00, 0xe19, 0xe1c, 0xe21, 0xe2c, 0xe31,
    0xe34, 0xe39, 0xe88, 0xe8d, 0xfd8, 0xfdd, 0x1208, 0x1229, 0x14c0, 0x14c5, 0x155c, 0x1565,
    0x1568, 0x1581, 0x1624, 0x1741, 0x17ac, 0x17bd, 0x17cc, 0x1881, 0x192c, 0x1982, 0x19a8, 0x19b9,
    0x19c0, 0x19c5, 0x1b50, 0x1b55, 0x1b58, 0x1b95, 0x1b9c, 0x1bb9, 0x1bc2, 0x1be9, 0x1bf4, 0x1bfd,
    0x1c00, 0x1c41, 0x1c44, 0x1c49, 0x1cc0, 0x1d35, 0x1e98, 0x1ec5, 0x1ec8, 0x1f02, 0x1f29, 0x1fac,
    0x1fd1, 0x1fd8, 0x1fe9, 0x1fec, 0x2001, 0x2058, 0x2069, 0x206c, 0x2091, 0x2094, 0x20a1, 0x20a4,
    0x2101, 0x2164, 0x2181, 0x21ac, 0x21c1, 0x2220, 0x2225, 0x223c, 0x2281, 0x2328, 0x2411, 0x24e8,
    0x24f5, 0x24f8, 0x2541, 0x2544, 0x2561, 0x2588, 0x259a, 0x25c0, 0x25c5, 0x2604, 0x2615, 0x2634,
    0x263d, 0x2644, 0x264d, 0x26a4, 0x26a9, 0x26c4, 0x26c9, 0x26cc, 0x26d9, 0x26e8, 0x26f5, 0x26f8,
    0x2739, 0x273c, 0x2771, 0x2778, 0x277d, 0x2788, 0x279a, 0x27c1, 0x27c8, 0x27d2, 0x27e8, 0x27f1,
    0x27f4, 0x2815, 0x282c, 0x283d, 0x2844, 0x284d, 0x28a4, 0x28a9, 0x28c4, 0x28c9, 0x28d0, 0x28d5,
    0x28dc, 0x28e1, 0x28e8, 0x2965, 0x2974, 0x2979, 0x297c, 0x299a, 0x29c0, 0x29c9, 0x29d4, 0x2a15,
    0x2a38, 0x2a3d, 0x2a48, 0x2a4d, 0x2aa4, 0x2aa9, 0x2ac4, 0x2ac9, 0x2ad0, 0x2ad5, 0x2ae8, 0x2af5,
    0x2af8, 0x2b41, 0x2b44, 0x2b81, 0x2b88, 0x2b9a, 0x2bc0, 0x2be5, 0x2be8, 0x2c15, 0x2c34, 0x2c3d,
    0x2c44, 0x2c4d, 0x2ca4, 0x2ca9, 0x2cc4, 0x2cc9, 0x2cd0, 0x2cd5, 0x2ce8, 0x2cf5, 0x2cf8, 0x2d71,
    0x2d78, 0x2d7d, 0x2d88, 0x2d9a, 0x2dc0, 0x2dc5, 0x2dca, 0x2de0, 0x2e0d, 0x2e10, 0x2e15, 0x2e2c,
    0x2e39, 0x2e44, 0x2e49, 0x2e58, 0x2e65, 0x2e6c, 0x2e71, 0x2e74, 0x2e79, 0x2e80, 0x2e8d, 0x2e94,
    0x2ea1, 0x2eac, 0x2eb9, 0x2ee8, 0x2f41, 0x2f44, 0x2f9a, 0x2fcc, 0x3015, 0x3034, 0x3039, 0x3044,
    0x3049, 0x30a4, 0x30a9, 0x30e8, 0x30f5, 0x30f8, 0x3161, 0x316c, 0x3175, 0x3178, 0x3181, 0x3188,
    0x319a, 0x31c0, 0x31e2, 0x31fc, 0x3201, 0x3204, 0x3215, 0x3234, 0x3239, 0x3244, 0x3249, 0x32a4,
    0x32a9, 0x32d0, 0x32d5, 0x32e8, 0x32f5, 0x32f8, 0x3375, 0x337c, 0x3381, 0x3388, 0x339a, 0x33c0,
    0x33c5, 0x33cc, 0x3411, 0x3434, 0x3439, 0x3444, 0x3449, 0x34ec, 0x34f5, 0x34f8, 0x3539, 0x353c,
    0x3551, 0x355c, 0x3562, 0x357d, 0x3588, 0x359a, 0x35e4, 0x35e9, 0x3600, 0x3615, 0x365c, 0x3669,
    0x36c8, 0x36cd, 0x36f0, 0x36f5, 0x36f8, 0x3701, 0x371c, 0x379a, 0x37c0, 0x3805, 0x38c4, 0x38c9,
    0x38d0, 0x3901, 0x391c, 0x3942, 0x3968, 0x3a05, 0x3a0c, 0x3a11, 0x3a14, 0x3a19, 0x3a2c, 0x3a31,
    0x3a90, 0x3a95, 0x3a98, 0x3a9d, 0x3ac4, 0x3ac9, 0x3ad0, 0x3af5, 0x3af8, 0x3b01, 0x3b14, 0x3b19,
    0x3b1c, 0x3b42, 0x3b68, 0x3b71, 0x3b80, 0x3c01, 0x3c04, 0x3c82, 0x3cd0, 0x3d01, 0x3d20, 0x3d25,
    0x3db4, 0x3e21, 0x3e34, 0x4001, 0x40ac, 0x40fd, 0x4102, 0x4128, 0x4141, 0x4158, 0x4169, 0x4178,
    0x4185, 0x4188, 0x4195, 0x419c, 0x41b9, 0x41c4, 0x41d5, 0x4208, 0x4239, 0x423c, 0x4242, 0x4268,
    0x4281, 0x4318, 0x431d, 0x4320, 0x4335, 0x4338, 0x4341, 0x43ec, 0x43f1, 0x4924, 0x4929, 0x4938,
    0x4941, 0x495c, 0x4961, 0x4964, 0x4969, 0x4978, 0x4981, 0x4a24, 0x4a29, 0x4a38, 0x4a41, 0x4ac4,
    0x4ac9, 0x4ad8, 0x4ae1, 0x4afc, 0x4b01, 0x4b04, 0x4b09, 0x4b18, 0x4b21, 0x4b5c, 0x4b61, 0x4c44,
    0x4c49, 0x4c58, 0x4c61, 0x4d6c, 0x4da6, 0x4df4, 0x4e01, 0x4e40, 0x4e81, 0x4fd8, 0x4fe1, 0x4ff8,
    0x5005, 0x59b4, 0x59bd, 0x5a00, 0x5a05, 0x5a6c, 0x5a81, 0x5bac, 0x5bba, 0x5bc5, 0x5be4, 0x5c01,
    0x5c48, 0x5c7d, 0x5cc8, 0x5d01, 0x5d48, 0x5d81, 0x5db4, 0x5db9, 0x5dc4, 0x5e01, 0x5ed0, 0x5f5d,
    0x5f60, 0x5f71, 0x5f74, 0x5f82, 0x5fa8, 0x5fc2, 0x5fe8, 0x6042, 0x6068, 0x6081, 0x61e4, 0x6201,
    0x6214, 0x621d, 0x62a4, 0x62a9, 0x62ac, 0x62c1, 0x63d8, 0x6401, 0x647c, 0x651a, 0x6541, 0x65b8,
    0x65c1, 0x65d4, 0x6601, 0x66b0, 0x66c1, 0x6728, 0x6742, 0x676c, 0x6801, 0x685c, 0x6881, 0x6954,
    0x6a02, 0x6a28, 0x6a42, 0x6a68, 0x6a9d, 0x6aa0, 0x6c15, 0x6cd0, 0x6d15, 0x6d34, 0x6d42, 0x6d68,
    0x6e0d, 0x6e84, 0x6eb9, 0x6ec2, 0x6ee9, 0x6f98, 0x7001, 0x7090, 0x7102, 0x7128, 0x7135, 0x7142,
    0x7169, 0x71f8, 0x7201, 0x7224, 0x7241, 0x72ec, 0x72f5, 0x7300, 0x73a5, 0x73b4, 0x73b9, 0x73d0,
    0x73d5, 0x73dc, 0x73e9, 0x73ec, 0x7401, 0x7700, 0x7801, 0x7c58, 0x7c61, 0x7c78, 0x7c81, 0x7d18,
    0x7d21, 0x7d38, 0x7d41, 0x7d60, 0x7d65, 0x7d68, 0x7d6d, 0x7d70, 0x7d75, 0x7d78, 0x7d7d, 0x7df8,
    0x7e01, 0x7ed4, 0x7ed9, 0x7ef4, 0x7ef9, 0x7efc, 0x7f09, 0x7f14, 0x7f19, 0x7f34, 0x7f41, 0x7f50,
    0x7f59, 0x7f70, 0x7f81, 0x7fb4, 0x7fc9, 0x7fd4, 0x7fd9, 0x7ff4, 0x81c2, 0x81c5, 0x81c8, 0x81d2,
    0x81e8, 0x81fd, 0x8202, 0x8228, 0x8241, 0x8274, 0x8409, 0x840c, 0x841d, 0x8420, 0x8429, 0x8450,
    0x8455, 0x8458, 0x8465, 0x8478, 0x8491, 0x8494, 0x8499, 0x849c, 0x84a1, 0x84a4, 0x84a9, 0x84b8,
    0x84bd, 0x84e8, 0x84f1, 0x8500, 0x8515, 0x8528, 0x8539, 0x853c, 0x8542, 0x860d, 0x8616, 0x8628,
    0x9182, 0x9270, 0x93aa, 0x9400, 0x9dda, 0x9e50, 0xb001, 0xb394, 0xb3ad, 0xb3bc, 0xb3c9, 0xb3d0,
    0xb3f6, 0xb3f8, 0xb401, 0xb498, 0xb49d, 0xb4a0, 0xb4b5, 0xb4b8, 0xb4c1, 0xb5a0, 0xb5bd, 0xb5c0,
    0xb601, 0xb65c, 0xb681, 0xb69c, 0xb6a1, 0xb6bc, 0xb6c1, 0xb6dc, 0xb6e1, 0xb6fc, 0xb701, 0xb71c,
    0xb721, 0xb73c, 0xb741, 0xb75c, 0xb761, 0xb77c, 0xb8bd, 0xb8c0, 0xc015, 0xc01e, 0xc020, 0xc086,
    0xc0a8, 0xc0c5, 0xc0d8, 0xc0e2, 0xc0ed, 0xc0f4, 0xc105, 0xc25c, 0xc275, 0xc280, 0xc285, 0xc3ec,
    0xc3f1, 0xc400, 0xc415, 0xc4c0, 0xc4c5, 0xc63c, 0xc64a, 0xc658, 0xc681, 0xc700, 0xc7c1, 0xc800,
    0xc882, 0xc8a8, 0xc922, 0xc940, 0xc946, 0xc980, 0xca02, 0xca28, 0xcac6, 0xcb00, 0xd001,
    0x13700, 0x13801, 0x29234, 0x29341, 0x293f8, 0x29401, 0x29834, 0x29841, 0x29882, 0x298a9,
    0x298b0, 0x29901, 0x299bc, 0x299fd, 0x29a78, 0x29a81, 0x29b9a, 0x29bc0, 0x29c5d, 0x29c80,
    0x29c89, 0x29e24, 0x29e2d, 0x29f2c, 0x29f41, 0x29f48, 0x29f4d, 0x29f50, 0x29f55, 0x29f68,
    0x29fc9, 0x2a008, 0x2a00d, 0x2a018, 0x2a01d, 0x2a02c, 0x2a031, 0x2a08c, 0x2a0c2, 0x2a0d8,
    0x2a101, 0x2a1d0, 0x2a209, 0x2a2d0, 0x2a342, 0x2a368, 0x2a3c9, 0x2a3e0, 0x2a3ed, 0x2a3f0,
    0x2a3f5, 0x2a3fc, 0x2a402, 0x2a429, 0x2a498, 0x2a4c1, 0x2a51c, 0x2a581, 0x2a5f4, 0x2a611,
    0x2a6cc, 0x2a73d, 0x2a742, 0x2a768, 0x2a781, 0x2a794, 0x2a799, 0x2a7c2, 0x2a7e9, 0x2a7fc,
    0x2a801, 0x2a8a4, 0x2a901, 0x2a90c, 0x2a911, 0x2a930, 0x2a942, 0x2a968, 0x2a981, 0x2a9dc,
    0x2a9e9, 0x2a9ec, 0x2a9f9, 0x2aac0, 0x2aac5, 0x2aac8, 0x2aad5, 0x2aadc, 0x2aae5, 0x2aaf8,
    0x2ab01, 0x2ab04, 0x2ab09, 0x2ab0c, 0x2ab6d, 0x2ab78, 0x2ab81, 0x2abac, 0x2abc9, 0x2abd4,
    0x2ac05, 0x2ac1c, 0x2ac25, 0x2ac3c, 0x2ac45, 0x2ac5c, 0x2ac81, 0x2ac9c, 0x2aca1, 0x2acbc,
    0x2acc1, 0x2ad6c, 0x2ad71, 0x2ada8, 0x2adc1, 0x2af8c, 0x2afc2, 0x2afe8, 0x2b001, 0x35e90,
    0x35ec1, 0x35f1c, 0x35f2d, 0x35ff0, 0x3e401, 0x3e9b8, 0x3e9c1, 0x3eb68, 0x3ec01, 0x3ec1c,
    0x3ec4d, 0x3ec60, 0x3ec75, 0x3ec78, 0x3ec7d, 0x3eca4, 0x3eca9, 0x3ecdc, 0x3ece1, 0x3ecf4,
    0x3ecf9, 0x3ecfc, 0x3ed01, 0x3ed08, 0x3ed0d, 0x3ed14, 0x3ed19, 0x3eec8, 0x3ef4d, 0x3f4f8,
    0x3f541, 0x3f640, 0x3f649, 0x3f720, 0x3f7c1, 0x3f7f0, 0x3f9c1, 0x3f9d4, 0x3f9d9, 0x3fbf4,
    0x3fc42, 0x3fc68, 0x3fc85, 0x3fcec, 0x3fd05, 0x3fd6c, 0x3fd99, 0x3fefc, 0x3ff09, 0x3ff20,
    0x3ff29, 0x3ff40, 0x3ff49, 0x3ff60, 0x3ff69, 0x3ff74, 0x40001, 0x40030, 0x40035, 0x4009c,
    0x400a1, 0x400ec, 0x400f1, 0x400f8, 0x400fd, 0x40138, 0x40141, 0x40178, 0x40201, 0x403ec,
    0x4041e, 0x404d0, 0x40502, 0x405e4, 0x4062a, 0x40630, 0x40a01, 0x40a74, 0x40a81, 0x40b44,
    0x40b86, 0x40bf0, 0x40c01, 0x40c82, 0x40c90, 0x40cb5, 0x40d06, 0x40d09, 0x40d2a, 0x40d2c,
    0x40d41, 0x40dd8, 0x40e01, 0x40e78, 0x40e81, 0x40f10, 0x40f21, 0x40f40, 0x40f46, 0x40f58,
    0x41001, 0x41278, 0x41282, 0x412a8, 0x412c1, 0x41350, 0x41361, 0x413f0, 0x41401, 0x414a0,
    0x414c1, 0x41590, 0x415c1, 0x415ec, 0x415f1, 0x4162c, 0x41631, 0x4164c, 0x41651, 0x41658,
    0x4165d, 0x41688, 0x4168d, 0x416c8, 0x416cd, 0x416e8, 0x416ed, 0x416f4, 0x41801, 0x41cdc,
    0x41d01, 0x41d58, 0x41d81, 0x41da0, 0x41e01, 0x41e18, 0x41e1d, 0x41ec4, 0x41ec9, 0x41eec,
    0x42001, 0x42018, 0x42021, 0x42024, 0x42029, 0x420d8, 0x420dd, 0x420e4, 0x420f1, 0x420f4,
    0x420fd, 0x42158, 0x42162, 0x42181, 0x421dc, 0x421e6, 0x42201, 0x4227c, 0x4229e, 0x422c0,
    0x42381, 0x423cc, 0x423d1, 0x423d8, 0x423ee, 0x42401, 0x4245a, 0x42470, 0x42481, 0x424e8,
    0x42601, 0x426e0, 0x426f2, 0x426f9, 0x42702, 0x42740, 0x4274a, 0x42801, 0x42804, 0x42841,
    0x42850, 0x42855, 0x42860, 0x42865, 0x428d8, 0x42902, 0x42924, 0x42981, 0x429f6, 0x429fc,
    0x42a01, 0x42a76, 0x42a80, 0x42b01, 0x42b20, 0x42b25, 0x42b94, 0x42bae, 0x42bc0, 0x42c01,
    0x42cd8, 0x42d01, 0x42d58, 0x42d62, 0x42d81, 0x42dcc, 0x42de2, 0x42e01, 0x42e48, 0x42ea6,
    0x42ec0, 0x43001, 0x43124, 0x43201, 0x432cc, 0x43301, 0x433cc, 0x433ea, 0x43401, 0x43490,
    0x434c2, 0x434e8, 0x43982, 0x439fc, 0x43a01, 0x43aa8, 0x43ac1, 0x43ac8, 0x43c01, 0x43c76,
    0x43c9d, 0x43ca0, 0x43cc1, 0x43d18, 0x43d46, 0x43d54, 0x43dc1, 0x43e08, 0x43ec1, 0x43f16,
    0x43f30, 0x43f81, 0x43fdc, 0x4400d, 0x440e0, 0x4414a, 0x441c0, 0x441c5, 0x441cc, 0x441d5,
    0x441d8, 0x4420d, 0x442c0, 0x44341, 0x443a4, 0x443c2, 0x443e8, 0x4440d, 0x4449c, 0x444da,
    0x44500, 0x44511, 0x44514, 0x4451d, 0x44520, 0x44541, 0x445cc, 0x445d9, 0x445dc, 0x4460d,
    0x446cc, 0x44705, 0x44714, 0x44742, 0x44769, 0x4476c, 0x44771, 0x44774, 0x44786, 0x447d4,
    0x44801, 0x44848, 0x4484d, 0x448b0, 0x44a01, 0x44a1c, 0x44a21, 0x44a24, 0x44a29, 0x44a38,
    0x44a3d, 0x44a78, 0x44a7d, 0x44aa4, 0x44ac1, 0x44b7c, 0x44bc2, 0x44be8, 0x44c15, 0x44c34,
    0x44c3d, 0x44c44, 0x44c4d, 0x44ca4, 0x44ca9, 0x44cc4, 0x44cc9, 0x44cd0, 0x44cd5, 0x44ce8,
    0x44cf5, 0x44cf8, 0x44d41, 0x44d44, 0x44d75, 0x44d88, 0x45001, 0x450d4, 0x4511d, 0x4512c,
    0x45142, 0x45168, 0x4517d, 0x45188, 0x45201, 0x452c0, 0x45311, 0x45318, 0x4531d, 0x45320,
    0x45342, 0x45368, 0x45601, 0x456bc, 0x45761, 0x45770, 0x45801, 0x458c0, 0x45911, 0x45914,
    0x45942, 0x45968, 0x45a01, 0x45aac, 0x45ae1, 0x45ae4, 0x45b02, 0x45b28, 0x45c01, 0x45c6c,
    0x45cc2, 0x45cf0, 0x45d01, 0x45d1c, 0x46001, 0x460b0, 0x46281, 0x46382, 0x463cc, 0x463fd,
    0x4641c, 0x46425, 0x46428, 0x46431, 0x46450, 0x46455, 0x4645c, 0x46461, 0x464c0, 0x464fd,
    0x46500, 0x46505, 0x46508, 0x46542, 0x46568, 0x46681, 0x466a0, 0x466a9, 0x46744, 0x46785,
    0x46788, 0x4678d, 0x46790, 0x46801, 0x46804, 0x4682d, 0x468cc, 0x468e9, 0x468ec, 0x46941,
    0x46944, 0x46971, 0x46a28, 0x46a75, 0x46a78, 0x46ac1, 0x46be4, 0x47001, 0x47024, 0x47029,
    0x470bc, 0x47101, 0x47104, 0x47142, 0x471b4, 0x471c9, 0x47240, 0x47401, 0x4741c, 0x47421,
    0x47428, 0x4742d, 0x474c4, 0x47519, 0x4751c, 0x47542, 0x47568, 0x47581, 0x47598, 0x4759d,
    0x475a4, 0x475a9, 0x47628, 0x47661, 0x47664, 0x47682, 0x476a8, 0x47b81, 0x47bcc, 0x47ec1,
    0x47ec4, 0x47f02, 0x47f54, 0x48001, 0x48e68, 0x49002, 0x491bc, 0x49201, 0x49510, 0x4be41,
    0x4bfc4, 0x4c001, 0x4d0bc, 0x51001, 0x5191c, 0x5a001, 0x5a8e4, 0x5a901, 0x5a97c, 0x5a982,
    0x5a9a8, 0x5a9c1, 0x5aafc, 0x5ab02, 0x5ab28, 0x5ab41, 0x5abb8, 0x5ac01, 0x5acc0, 0x5ad01,
    0x5ad10, 0x5ad42, 0x5ad68, 0x5ad6e, 0x5ad88, 0x5ad8d, 0x5ade0, 0x5adf5, 0x5ae40, 0x5b901,
    0x5ba02, 0x5ba5c, 0x5bc01, 0x5bd2c, 0x5bd41, 0x5bd44, 0x5be4d, 0x5be80, 0x5bf81, 0x5bf88,
    0x5bf8d, 0x5bf90, 0x5c001, 0x61fe0, 0x62001, 0x63358, 0x63401, 0x63424, 0x6bfc1, 0x6bfd0,
    0x6bfd5, 0x6bff0, 0x6bff5, 0x6bffc, 0x6c001, 0x6c48c, 0x6c541, 0x6c54c, 0x6c591, 0x6c5a0,
    0x6c5c1, 0x6cbf0, 0x6f001, 0x6f1ac, 0x6f1c1, 0x6f1f4, 0x6f201, 0x6f224, 0x6f241, 0x6f268,
    0x74b82, 0x74bd0, 0x74d82, 0x74de4, 0x75001, 0x75154, 0x75159, 0x75274, 0x75279, 0x75280,
    0x75289, 0x7528c, 0x75295, 0x7529c, 0x752a5, 0x752b4, 0x752b9, 0x752e8, 0x752ed, 0x752f0,
    0x752f5, 0x75310, 0x75315, 0x75418, 0x7541d, 0x7542c, 0x75435, 0x75454, 0x75459, 0x75474,
    0x75479, 0x754e8, 0x754ed, 0x754fc, 0x75501, 0x75514, 0x75519, 0x7551c, 0x75529, 0x75544,
    0x75549, 0x75a98, 0x75aa1, 0x75b04, 0x75b09, 0x75b6c, 0x75b71, 0x75bec, 0x75bf1, 0x75c54,
    0x75c59, 0x75cd4, 0x75cd9, 0x75d3c, 0x75d41, 0x75dbc, 0x75dc1, 0x75e24, 0x75e29, 0x75ea4,
    0x75ea9, 0x75f0c, 0x75f11, 0x75f30, 0x75f3a, 0x76000, 0x77c01, 0x77c7c, 0x78401, 0x784b4,
    0x784dd, 0x784f8, 0x78502, 0x78528, 0x78539, 0x7853c, 0x78a41, 0x78ab8, 0x78b01, 0x78bb0,
    0x78bc2, 0x78be8, 0x79f81, 0x79f9c, 0x79fa1, 0x79fb0, 0x79fb5, 0x79fbc, 0x79fc1, 0x79ffc,
    0x7a001, 0x7a314, 0x7a31e, 0x7a340, 0x7a401, 0x7a510, 0x7a52d, 0x7a530, 0x7a542, 0x7a568,
    0x7b1c6, 0x7b2b0, 0x7b2b6, 0x7b2c0, 0x7b2c6, 0x7b2d4, 0x7b406, 0x7b4b8, 0x7b4be, 0x7b4f8,
    0x7b801, 0x7b810, 0x7b815, 0x7b880, 0x7b885, 0x7b88c, 0x7b891, 0x7b894, 0x7b89d, 0x7b8a0,
    0x7b8a5, 0x7b8cc, 0x7b8d1, 0x7b8e0, 0x7b8e5, 0x7b8e8, 0x7b8ed, 0x7b8f0, 0x7b909, 0x7b90c,
    0x7b91d, 0x7b920, 0x7b925, 0x7b928, 0x7b92d, 0x7b930, 0x7b935, 0x7b940, 0x7b945, 0x7b94c,
    0x7b951, 0x7b954, 0x7b95d, 0x7b960, 0x7b965, 0x7b968, 0x7b96d, 0x7b970, 0x7b975, 0x7b978,
    0x7b97d, 0x7b980, 0x7b985, 0x7b98c, 0x7b991, 0x7b994, 0x7b99d, 0x7b9ac, 0x7b9b1, 0x7b9cc,
    0x7b9d1, 0x7b9e0, 0x7b9e5, 0x7b9f4, 0x7b9f9, 0x7b9fc, 0x7ba01, 0x7ba28, 0x7ba2d, 0x7ba70,
    0x7ba85, 0x7ba90, 0x7ba95, 0x7baa8, 0x7baad, 0x7baf0, 0x7c402, 0x7c434, 0x7efc2, 0x7efe8,
    0x80001, 0xa9b80, 0xa9c01, 0xadce4, 0xadd01, 0xae078, 0xae081, 0xb3a88, 0xb3ac1, 0xbaf84,
    0xbe001, 0xbe878, 0xc0001, 0xc4d2c,
};

static int uclass(uint32_t cp)
{
    size_t lo = 0, hi = sizeof class_runs / sizeof class_runs[0];
    if (cp < 0x80) {
        if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z')
            return CL_LETTER;
        if (cp >= '0' && cp <= '9')
            return CL_NUMBER;
        return cp == ' ' || (cp >= 9 && cp <= 13) ? CL_SPACE : CL_OTHER;
    }
    if (cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
        cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000)
        return CL_SPACE;
    while (hi - lo > 1) { /* the last run starting at or before cp */
        size_t mid = (lo + hi) / 2;
        if (class_runs[mid] >> 2 <= cp)
            lo = mid;
        else
            hi = mid;
    }
    return (int)(class_runs[lo] & 3);
}

/* ---- the pre-tokenizers ----
 * GPT-2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 *          ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * Qwen2:   Llama 3's with \p{N} for \p{N}{1,3}.
 * The first alternative that matches at a place wins; each piece starts
 * where the one before ended. */

typedef struct uch {
    uint32_t cp; /* UINT32_MAX: an invalid byte, or the end */
    size_t len;
    int cls;
} uch;

static uch char_at(const unsigned char *s, size_t n, size_t i)
{
    uch c = {UINT32_MAX, 0, CL_END};
    size_t len, m, k;
    if (i >= n)
        return c;
    m = utf8_match(s + i, n - i, &len);
    c.len = 1;
    c.cls = CL_OTHER;
    if (!len || m != len)
        return c;
    c.cp = len == 1 ? s[i] : s[i] & (0x7fu >> len);
    for (k = 1; k < len; k++)
        c.cp = c.cp << 6 | (s[i + k] & 0x3fu);
    c.len = len;
    c.cls = uclass(c.cp);
    return c;
}

/* The end of the characters of class cls from i, at most max of them (0:
 * any number). */
static size_t run(const unsigned char *s, size_t n, size_t i, int cls, int max)
{
    int k;
    for (k = 0; max == 0 || k < max; k++) {
        uch c = char_at(s, n, i);
        if (c.cls != cls)
            break;
        i += c.len;
    }
    return i;
}

/* 's 't 're 've 'm 'll 'd at i (the apostrophe), ASCII case folded when
 * fold: the end, or 0. */
static size_t contraction(const unsigned char *s, size_t n, size_t i, int fold)
{
    static const char *const forms[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    size_t k, j;
    for (k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        size_t len = strlen(forms[k]);
        if (i + 1 + len > n)
            continue;
        for (j = 0; j < len; j++) {
            unsigned c = s[i + 1 + j];
            if (fold && c >= 'A' && c <= 'Z')
                c |= 0x20;
            if (c != (unsigned char)forms[k][j])
                break;
        }
        if (j == len)
            return i + 1 + len;
    }
    return 0;
}

/* White space from i: \s*[\r\n]+ first when nl, then \s+(?!\S) (a run
 * followed by more text leaves its last character to the next piece),
 * then \s+. */
static size_t spaces(const unsigned char *s, size_t n, size_t i, int nl)
{
    size_t j = i, last = i, after_nl = 0;
    int count = 0;
    for (;;) {
        uch c = char_at(s, n, j);
        if (c.cls != CL_SPACE)
            break;
        if (nl && (c.cp == '\r' || c.cp == '\n'))
            after_nl = j + 1;
        last = j;
        j += c.len;
        count++;
    }
    if (after_nl)
        return after_nl;
    return j == n || count == 1 ? j : last;
}

/* The end of the piece that starts at i < n (internal; the tests call it). */
size_t glc__tokenizer_split(int pre, const unsigned char *s, size_t n, size_t i);
size_t glc__tokenizer_split(int pre, const unsigned char *s, size_t n, size_t i)
{
    uch c = char_at(s, n, i), d = char_at(s, n, i + c.len);
    size_t j;
    if (c.cp == '\'' && (j = contraction(s, n, i, pre != GLC_TOKENIZER_PRE_GPT2)) != 0)
        return j;
    if (pre == GLC_TOKENIZER_PRE_GPT2) {
        if (c.cls != CL_SPACE)
            return run(s, n, i, c.cls, 0);
        if (c.cp == ' ' && d.cls != CL_END && d.cls != CL_SPACE)
            return run(s, n, i + 1, d.cls, 0);
        return spaces(s, n, i, 0);
    }
    if (c.cls == CL_LETTER)
        return run(s, n, i, CL_LETTER, 0);
    if (c.cls != CL_NUMBER && c.cp != '\r' && c.cp != '\n' && d.cls == CL_LETTER)
        return run(s, n, i + c.len, CL_LETTER, 0);
    if (c.cls == CL_NUMBER)
        return run(s, n, i, CL_NUMBER, pre == GLC_TOKENIZER_PRE_LLAMA3 ? 3 : 1);
    if (c.cls == CL_OTHER || (c.cp == ' ' && d.cls == CL_OTHER)) {
        j = run(s, n, c.cls == CL_OTHER ? i : i + 1, CL_OTHER, 0);
        while (j < n && (s[j] == '\r' || s[j] == '\n'))
            j++;
        return j;
    }
    return spaces(s, n, i, 1);
}

/* ---- encoding ---- */

typedef struct sym {
    int32_t a;          /* SentencePiece: where it starts; GPT-2: its token (-1: none) */
    int32_t n;          /* bytes; 0: merged into the one before */
    int32_t prev, next; /* -1: none */
} sym;

typedef struct pair {
    double prio; /* higher first: a score, or minus a rank */
    int32_t left, right, size, id;
} pair;

typedef struct enc {
    const glc_tokenizer *t;
    int32_t *out;
    size_t n, cap;
    unsigned char *esc; /* SentencePiece: the text, spaces escaped; GPT-2: a piece's characters */
    sym *sym;
    pair *heap;
    size_t nheap;
} enc;

static int better(const pair *a, const pair *b)
{
    return a->prio > b->prio || (a->prio == b->prio && a->left < b->left);
}

static void heap_push(enc *e, pair p)
{
    size_t i = e->nheap++;
    while (i > 0 && better(&p, &e->heap[(i - 1) / 2])) {
        e->heap[i] = e->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    e->heap[i] = p;
}

static pair heap_pop(enc *e)
{
    pair top = e->heap[0], last = e->heap[--e->nheap];
    size_t i = 0, c;
    while ((c = 2 * i + 1) < e->nheap) {
        if (c + 1 < e->nheap && better(&e->heap[c + 1], &e->heap[c]))
            c++;
        if (!better(&e->heap[c], &last))
            break;
        e->heap[i] = e->heap[c];
        i = c;
    }
    e->heap[i] = last;
    return top;
}

static glc_status emit(enc *e, int32_t id)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 64;
        int32_t *o = glc__realloc(e->out, cap * sizeof *o);
        if (!o)
            return oom();
        e->out = o;
        e->cap = cap;
    }
    e->out[e->n++] = id;
    return GLC_OK;
}

/* Joins symbol r into l (its next). */
static void join(enc *e, int32_t l, int32_t r)
{
    sym *a = &e->sym[l], *b = &e->sym[r];
    a->n += b->n;
    b->n = 0;
    a->next = b->next;
    if (a->next >= 0)
        e->sym[a->next].prev = l;
}

/* A piece that is no token: its bytes' tokens, or one unknown token. */
static glc_status no_token(enc *e, const unsigned char *p, size_t n)
{
    const glc_tokenizer *t = e->t;
    size_t i;
    glc_status st = GLC_OK;
    for (i = 0; i < n && t->byte_id[p[i]] >= 0; i++)
        ;
    if (i == n) {
        for (i = 0; i < n && st == GLC_OK; i++)
            st = emit(e, t->byte_id[p[i]]);
        return st;
    }
    if (t->info.unk >= 0)
        return emit(e, t->info.unk);
    return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                     "glc_tokenizer_encode: byte 0x%02x has no token (%s) and the vocabulary "
                     "has no unknown token",
                     p[i], t->info.model == GLC_TOKENIZER_LLAMA ? "no <0xNN>, no one-byte token"
                                                                : "no GPT-2 byte character");
}

static void spm_pair(enc *e, int32_t l, int32_t r)
{
    const glc_tokenizer *t = e->t;
    pair p;
    if (l < 0 || r < 0 || (size_t)e->sym[l].n + (size_t)e->sym[r].n > t->max_len)
        return;
    p.size = e->sym[l].n + e->sym[r].n;
    if ((p.id = vocab_find(t, e->esc + e->sym[l].a, (size_t)p.size)) < 0)
        return;
    p.prio = t->score ? t->score[p.id] : 0;
    p.left = l;
    p.right = r;
    heap_push(e, p);
}

/* The merging both models share: every adjacent pair of the n symbols
 * queued by pair_fn, then the best joined until none is left (a popped
 * pair whose sides changed since is stale); bpe: the joined symbol takes
 * the merge's token id. */
static void merge_all(enc *e, int32_t n, void (*pair_fn)(enc *, int32_t, int32_t), int bpe)
{
    int32_t k;
    e->nheap = 0;
    for (k = 1; k < n; k++)
        pair_fn(e, k - 1, k);
    while (e->nheap) {
        pair p = heap_pop(e);
        sym *l = &e->sym[p.left], *r = &e->sym[p.right];
        if (!l->n || !r->n || l->n + r->n != p.size)
            continue; /* stale */
        join(e, p.left, p.right);
        if (bpe)
            l->a = p.id;
        pair_fn(e, l->prev, p.left);
        pair_fn(e, p.left, l->next);
    }
}

/* SentencePiece on one fragment of text (no special tokens in it). */
static glc_status spm_fragment(enc *e, const unsigned char *s, size_t len, int prefix)
{
    size_t m = 0, i;
    int32_t k, nsym = 0;
    glc_status st = GLC_OK;
    for (i = 0; i < len + (prefix != 0); i++) { /* the prefix, then the text */
        unsigned c = prefix ? (i ? s[i - 1] : ' ') : s[i];
        if (c == ' ') {
            e->esc[m++] = 0xe2; /* U+2581 */
            e->esc[m++] = 0x96;
            e->esc[m++] = 0x81;
        } else {
            e->esc[m++] = (unsigned char)c;
        }
    }
    for (i = 0; i < m; nsym++) { /* characters; an invalid byte is one */
        size_t cl, ok = utf8_match(e->esc + i, m - i, &cl);
        e->sym[nsym].a = (int32_t)i;
        e->sym[nsym].n = (int32_t)(cl && ok == cl ? cl : 1);
        e->sym[nsym].prev = nsym - 1;
        e->sym[nsym].next = nsym + 1;
        i += (size_t)e->sym[nsym].n;
    }
    if (!nsym)
        return GLC_OK;
    e->sym[nsym - 1].next = -1;
    merge_all(e, nsym, spm_pair, 0);
    for (k = 0; k >= 0 && st == GLC_OK; k = e->sym[k].next) {
        const unsigned char *p = e->esc + e->sym[k].a;
        int32_t id = vocab_find(e->t, p, (size_t)e->sym[k].n);
        st = id >= 0 ? emit(e, id) : no_token(e, p, (size_t)e->sym[k].n);
    }
    return st;
}

static void bpe_pair(enc *e, int32_t l, int32_t r)
{
    const merge *mg;
    pair p;
    if (l < 0 || r < 0 || e->sym[l].a < 0 || e->sym[r].a < 0 ||
        !(mg = merge_find(e->t, e->sym[l].a, e->sym[r].a)))
        return;
    p.prio = -(double)mg->rank;
    p.left = l;
    p.right = r;
    p.size = e->sym[l].n + e->sym[r].n;
    p.id = mg->id;
    heap_push(e, p);
}

/* Byte-level BPE on one piece of the pre-tokenizer. */
static glc_status bpe_piece(enc *e, const unsigned char *s, size_t len)
{
    const glc_tokenizer *t = e->t;
    int32_t k, n = (int32_t)len;
    glc_status st = GLC_OK;
    if (t->ignore_merges) {
        size_t m = 0, i;
        int32_t id;
        for (i = 0; i < len; i++)
            m += utf8_put(t->byte_cp[s[i]], e->esc + m);
        if ((id = vocab_find(t, e->esc, m)) >= 0)
            return emit(e, id);
    }
    for (k = 0; k < n; k++) {
        e->sym[k].a = t->byte_id[s[k]];
        e->sym[k].n = 1;
        e->sym[k].prev = k - 1;
        e->sym[k].next = k + 1 < n ? k + 1 : -1;
    }
    merge_all(e, n, bpe_pair, 1);
    /* (a symbol with no token is one byte: byte k) */
    for (k = 0; k >= 0 && st == GLC_OK; k = e->sym[k].next)
        st = e->sym[k].a >= 0 ? emit(e, e->sym[k].a) : no_token(e, s + k, 1);
    return st;
}

/* Text with no special token in it. It starts the text or follows a
 * special token: SentencePiece puts a space before it. */
static glc_status fragment(enc *e, const unsigned char *s, size_t len)
{
    const glc_tokenizer *t = e->t;
    size_t i, j;
    glc_status st = GLC_OK;
    if (!len)
        return GLC_OK;
    if (t->info.model == GLC_TOKENIZER_LLAMA)
        return spm_fragment(e, s, len, t->info.add_space_prefix);
    for (i = 0; i < len && st == GLC_OK; i = j) {
        j = glc__tokenizer_split(t->info.pre, s, len, i);
        st = bpe_piece(e, s + i, j - i);
    }
    return st;
}

/* The special token whose text starts s (the longest), or -1. */
static int32_t special_at(const glc_tokenizer *t, const unsigned char *s, size_t n, int parse,
                          size_t *len)
{
    size_t k;
    for (k = t->special_at[s[0]]; k < t->special_at[s[0] + 1]; k++) {
        int32_t id = t->special[k];
        const char *x = tok_text(t, id, len);
        if ((parse || type_of(t, id) == GLC_TOKEN_USER_DEFINED) && *len <= n &&
            memcmp(x, s, *len) == 0)
            return id;
    }
    return -1;
}

glc_status glc_tokenizer_encode(const glc_tokenizer *t, const char *text, size_t len,
                                unsigned flags, int32_t *ids, size_t cap, size_t *n)
{
    static const unsigned known = GLC_TOKENIZE_NO_BOS_EOS | GLC_TOKENIZE_ADD_BOS |
                                  GLC_TOKENIZE_ADD_EOS | GLC_TOKENIZE_PARSE_SPECIAL;
    const unsigned char *s = (const unsigned char *)(text ? text : ""); /* (NULL + 0: UB) */
    enc e;
    size_t at = 0, from = 0, mlen;
    int bos, eos;
    glc_status st = GLC_OK;
    if (!t || !n || (!text && len) || (!ids && cap) || (flags & ~known))
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_tokenizer_encode: invalid argument: %s",
                         !t ? "t is NULL" : !n ? "n is NULL" : !text && len ? "text is NULL"
                         : !ids && cap ? "ids is NULL" : "an unknown flag");
    if (len > MAX_TEXT)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "glc_tokenizer_encode: %zu bytes of text (at most %zu at once)", len,
                         MAX_TEXT);
    bos = (!(flags & GLC_TOKENIZE_NO_BOS_EOS) && t->info.add_bos) || (flags & GLC_TOKENIZE_ADD_BOS);
    eos = (!(flags & GLC_TOKENIZE_NO_BOS_EOS) && t->info.add_eos) || (flags & GLC_TOKENIZE_ADD_EOS);
    if ((bos && t->info.bos < 0) || (eos && t->info.eos < 0))
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "glc_tokenizer_encode: %s asked for, but the vocabulary has none",
                         bos && t->info.bos < 0 ? "BOS" : "EOS");
    memset(&e, 0, sizeof e);
    e.t = t;
    /* scratch: the escaped text (3 bytes a space, 2 a GPT-2 character), a
     * symbol a byte, 2 pairs a symbol (n - 1 pairs at first; a merge pops
     * one and pushes at most two, and there are at most n - 1 merges) */
    e.esc = glc__malloc(3 * len + 3);
    e.sym = glc__malloc((len + 1) * sizeof *e.sym);
    e.heap = glc__malloc(2 * (len + 1) * sizeof *e.heap);
    if (!e.esc || !e.sym || !e.heap) {
        st = oom();
        goto done;
    }
    if (bos)
        st = emit(&e, t->info.bos);
    while (at < len && st == GLC_OK) {
        int32_t id =
            special_at(t, s + at, len - at, (flags & GLC_TOKENIZE_PARSE_SPECIAL) != 0, &mlen);
        if (id < 0) {
            at++;
            continue;
        }
        if ((st = fragment(&e, s + from, at - from)) == GLC_OK)
            st = emit(&e, id);
        at += mlen;
        from = at;
    }
    if (st == GLC_OK)
        st = fragment(&e, s + from, len - from);
    if (st == GLC_OK && eos)
        st = emit(&e, t->info.eos);
    if (st == GLC_OK && e.n > cap) {
        *n = e.n;
        st = glc__fail(NULL, GLC_ERR_BOUNDS, "glc_tokenizer_encode: %zu ids do not fit in %zu", e.n,
                       cap);
    } else if (st == GLC_OK) {
        if (e.n)
            memcpy(ids, e.out, e.n * sizeof *ids);
        *n = e.n;
    }
done:
    glc__free(e.esc);
    glc__free(e.sym);
    glc__free(e.heap);
    glc__free(e.out);
    return st;
}

/* ---- decoding ---- */

/* Whether decoding leaves out leading spaces. */
static int strips(const glc_tokenizer *t, unsigned flags)
{
    return t->info.model == GLC_TOKENIZER_LLAMA && t->info.add_space_prefix &&
           !(flags & GLC_DETOKENIZE_KEEP_SPACE);
}

/* Token id's bytes at this place of a sequence. *strip: a leading space is
 * to be left out (SentencePiece, at the start and after a control or
 * user-defined token, where encode puts one). */
static const char *piece_in_text(const glc_tokenizer *t, int32_t id, unsigned flags, int *strip,
                                 size_t *n)
{
    int type = type_of(t, id);
    const char *p = glc_tokenizer_token_bytes(t, id, flags, n);
    if (type == GLC_TOKEN_NORMAL && *strip && *n && p[0] == ' ') {
        p++;
        (*n)--;
    }
    if (type == GLC_TOKEN_CONTROL || type == GLC_TOKEN_USER_DEFINED)
        *strip = strips(t, flags);
    else if (type != GLC_TOKEN_UNUSED)
        *strip = 0;
    return p;
}

glc_status glc_tokenizer_decode(const glc_tokenizer *t, const int32_t *ids, size_t n,
                                unsigned flags, char *buf, size_t cap, size_t *len)
{
    static const unsigned known = GLC_DETOKENIZE_SPECIAL | GLC_DETOKENIZE_KEEP_SPACE;
    size_t i, total = 0, k;
    int strip;
    if (!t || !len || (!ids && n) || (!buf && cap) || (flags & ~known))
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_tokenizer_decode: invalid argument: %s",
                         !t ? "t is NULL" : !len ? "len is NULL" : !ids && n ? "ids is NULL"
                         : !buf && cap ? "buf is NULL" : "an unknown flag");
    for (i = 0; i < n; i++)
        if (!valid_id(t, ids[i]))
            return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                             "glc_tokenizer_decode: ids[%zu] is %d, not a token id (0 .. %d)", i,
                             (int)ids[i], (int)t->info.vocab_size - 1);
    for (i = 0, strip = strips(t, flags); i < n; i++) {
        piece_in_text(t, ids[i], flags, &strip, &k);
        total += k;
    }
    if (total >= cap) {
        *len = total;
        return glc__fail(NULL, GLC_ERR_BOUNDS,
                         "glc_tokenizer_decode: %zu bytes and a NUL do not fit in %zu", total, cap);
    }
    for (i = 0, total = 0, strip = strips(t, flags); i < n; i++) {
        const char *p = piece_in_text(t, ids[i], flags, &strip, &k);
        memcpy(buf + total, p, k);
        total += k;
    }
    buf[total] = '\0';
    *len = total;
    return GLC_OK;
}

glc_status glc_tokenizer_stream_create(const glc_tokenizer *t, unsigned flags,
                                       glc_tokenizer_stream **out)
{
    glc_tokenizer_stream *s;
    if (!t || !out || (flags & ~(unsigned)(GLC_DETOKENIZE_SPECIAL | GLC_DETOKENIZE_KEEP_SPACE)))
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "glc_tokenizer_stream_create: invalid argument: %s",
                         !t ? "t is NULL" : !out ? "out is NULL" : "an unknown flag");
    if (!(s = glc__calloc(1, sizeof *s)) || !(s->buf = glc__malloc(t->info.max_token_bytes + 4))) {
        glc__free(s);
        return oom();
    }
    s->t = t;
    s->flags = flags;
    s->strip = strips(t, flags);
    *out = s;
    return GLC_OK;
}

void glc_tokenizer_stream_destroy(glc_tokenizer_stream *s)
{
    if (!s)
        return;
    glc__free(s->buf);
    glc__free(s);
}

glc_status glc_tokenizer_stream_push(glc_tokenizer_stream *s, int32_t id, const char **text,
                                     size_t *len)
{
    unsigned char *b;
    const char *p;
    size_t n, total, keep = 0, i;
    if (!s || !text || !len)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_tokenizer_stream_push: invalid argument");
    if (!valid_id(s->t, id))
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "glc_tokenizer_stream_push: %d is not a token id (0 .. %d)", (int)id,
                         (int)s->t->info.vocab_size - 1);
    b = (unsigned char *)s->buf;
    p = piece_in_text(s->t, id, s->flags, &s->strip, &n);
    memcpy(b, s->held, s->nheld);
    memcpy(b + s->nheld, p, n);
    total = s->nheld + n;
    /* hold back the end when it is a character cut short: a lead byte
     * within the last 3, only the bytes its character allows after it */
    for (i = total; i > 0 && total - i < 3; i--) {
        size_t clen, m;
        if ((b[i - 1] & 0xc0) == 0x80)
            continue;
        m = utf8_match(b + i - 1, total - i + 1, &clen);
        if (clen > 1 && m == total - i + 1 && m < clen)
            keep = m;
        break;
    }
    memcpy(s->held, b + total - keep, keep);
    s->nheld = keep;
    b[total - keep] = '\0';
    *text = s->buf;
    *len = total - keep;
    return GLC_OK;
}

glc_status glc_tokenizer_stream_flush(glc_tokenizer_stream *s, const char **text, size_t *len)
{
    if (!s || !text || !len)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_tokenizer_stream_flush: invalid argument");
    memcpy(s->buf, s->held, s->nheld);
    s->buf[s->nheld] = '\0';
    *text = s->buf;
    *len = s->nheld;
    s->nheld = 0;
    s->strip = strips(s->t, s->flags);
    return GLC_OK;
}
