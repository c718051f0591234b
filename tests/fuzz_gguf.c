/*
 * libFuzzer on the GGUF reader (src/core/gguf.c): any bytes must be read or
 * refused with a message, never crash, hang or read past them (ASan and
 * UBSan watch). A file that reads is walked whole: every key through every
 * getter (string arrays element by element), every tensor's bytes summed;
 * then the tokenizer it describes, if any (src/core/tokenizer.c): built or
 * refused with a message, and when built, fixed texts encoded, decoded and
 * streamed back (decode must give the stream's text).
 * `fuzz_gguf -write_seeds=DIR` writes seeds: a small valid file of every
 * value type and a few tensors, and two tokenizer files ("llama", "gpt2").
 *   make fuzz-gguf-run FUZZ_SECONDS=30
 */
#include "glcompute.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned sink;

/* The tokenizer of f, when it has one: every call on it must end in a
 * status, and the stream must join to decode's text. */
static void tokenizer(const glc_gguf *f)
{
    static const char *const texts[] = {"Hello world", " a  b\n\tc", "\xc3\xa9\xf0\x9f\x98\x80 1234",
                                        "<s>x</s>", "\xff\xfe", ""};
    glc_tokenizer *t = NULL;
    size_t i;
    if (glc_tokenizer_create(f, &t) != GLC_OK) {
        if (!glc_device_errmsg(NULL)[0])
            abort();
        return;
    }
    for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        int32_t ids[256];
        char text[4096], joined[4096];
        size_t n = 0, len = 0, at = 0, k, pl;
        const char *piece;
        glc_tokenizer_stream *s = NULL;
        if (glc_tokenizer_encode(t, texts[i], strlen(texts[i]), i & 1 ? GLC_TOKENIZE_PARSE_SPECIAL : 0,
                                 ids, 256, &n) != GLC_OK)
            continue;
        if (glc_tokenizer_decode(t, ids, n, 0, text, sizeof text, &len) != GLC_OK ||
            glc_tokenizer_stream_create(t, 0, &s) != GLC_OK)
            continue;
        for (k = 0; k < n && at < sizeof joined; k++)
            if (glc_tokenizer_stream_push(s, ids[k], &piece, &pl) == GLC_OK && at + pl <= sizeof joined) {
                memcpy(joined + at, piece, pl);
                at += pl;
            }
        if (glc_tokenizer_stream_flush(s, &piece, &pl) == GLC_OK && at + pl <= sizeof joined) {
            memcpy(joined + at, piece, pl);
            at += pl;
        }
        if (at != len || memcmp(joined, text, len) != 0)
            abort(); /* the stream and decode disagree */
        glc_tokenizer_stream_destroy(s);
    }
    glc_tokenizer_destroy(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    glc_gguf *f = NULL;
    int64_t i;
    if (glc_gguf_open_memory(data, size, &f) != GLC_OK) {
        if (!glc_device_errmsg(NULL)[0])
            abort(); /* a refusal without a message */
        return 0;
    }
    for (i = 0; i < glc_gguf_kv_count(f); i++) {
        size_t len, n;
        const char *k = glc_gguf_key_at(f, i, &len), *s;
        char key[256];
        int64_t iv;
        double dv;
        int et;
        uint64_t count, j;
        const void *arr;
        if (!k || len >= sizeof key)
            continue;
        memcpy(key, k, len);
        key[len] = '\0';
        if (strlen(key) != len)
            continue; /* a key with a NUL: not reachable by name */
        glc_gguf_get_int(f, key, &iv);
        glc_gguf_get_float(f, key, &dv);
        if (glc_gguf_get_string(f, key, &s, &n) == GLC_OK && n)
            sink += (unsigned char)s[n - 1];
        if (glc_gguf_get_array(f, key, &et, &count, &arr) == GLC_OK && et == 8)
            for (j = 0; j < count && j < 1000; j++)
                if (glc_gguf_array_string(f, key, j, &s, &n) == GLC_OK && n)
                    sink += (unsigned char)s[n - 1];
    }
    for (i = 0; i < glc_gguf_tensor_count(f); i++) {
        glc_gguf_tensor t;
        uint64_t b;
        if (glc_gguf_tensor_at(f, i, &t) != GLC_OK)
            abort();
        if (t.offset + t.bytes > size || glc_gguf_find_tensor(f, t.name) < 0)
            abort();
        for (b = 0; b < t.bytes; b += 61)
            sink += ((const unsigned char *)t.data)[b];
    }
    tokenizer(f);
    glc_gguf_close(f);
    return 0;
}

static void put(FILE *o, uint64_t v, int bytes)
{
    int i;
    for (i = 0; i < bytes; i++)
        fputc((int)(v >> (8 * i) & 0xff), o);
}

static void put_str(FILE *o, const char *s)
{
    put(o, strlen(s), 8);
    fwrite(s, 1, strlen(s), o);
}

static void write_seeds(const char *dir)
{
    char path[512];
    FILE *o;
    long at;
    int i;
    snprintf(path, sizeof path, "%s/small.gguf", dir);
    if (!(o = fopen(path, "wb")))
        exit(1);
    put(o, 0x46554747u, 4);
    put(o, 3, 4);
    put(o, 2, 8);
    put(o, 5, 8);
    put_str(o, "general.alignment");
    put(o, 4, 4);
    put(o, 32, 4);
    put_str(o, "name");
    put(o, 8, 4);
    put_str(o, "seed");
    put_str(o, "vals");
    put(o, 9, 4);
    put(o, 6, 4);
    put(o, 2, 8);
    put(o, 0x3f800000u, 4);
    put(o, 0x40000000u, 4);
    put_str(o, "words");
    put(o, 9, 4);
    put(o, 8, 4);
    put(o, 2, 8);
    put_str(o, "a");
    put_str(o, "bc");
    put_str(o, "big");
    put(o, 11, 4);
    put(o, 1ull << 40, 8);
    put_str(o, "w");
    put(o, 2, 4);
    put(o, 32, 8);
    put(o, 2, 8);
    put(o, 8, 4); /* q8_0 [2, 32] */
    put(o, 0, 8);
    put_str(o, "v");
    put(o, 1, 4);
    put(o, 4, 8);
    put(o, 0, 4); /* f32 [4] */
    put(o, 96, 8);
    at = ftell(o);
    while (at++ % 32)
        fputc(0, o);
    for (i = 0; i < 96 + 16; i++)
        fputc(i, o);
    fclose(o);
}

/* Two tokenizer files through the library's writer: "llama" (pieces,
 * scores, types, byte tokens) and "gpt2" (GPT-2's byte characters, merges). */
static void write_tokenizer_seeds(const char *dir)
{
    static const char *const spm[] = {"<unk>", "<s>", "</s>", "<0x20>", "<0xC3>", "<0xA9>",
                                      "\xe2\x96\x81", "H", "e", "l", "o", "w", "r", "d",
                                      "\xe2\x96\x81H", "He", "ll", "llo", "\xe2\x96\x81w", "or"};
    static const char *const bpe[] = {"H", "e", "l", "o", "\xc4\xa0", "w", "r", "d", "He", "ll",
                                      "llo", "\xc4\xa0w", "or", "1", "2", "<|endoftext|>"};
    static const char *const merges[] = {"H e", "l l", "ll o", "\xc4\xa0 w", "o r"};
    float scores[20];
    int32_t types[20];
    uint32_t u;
    char path[512];
    int i, m;
    for (m = 0; m < 2; m++) {
        glc_gguf_writer *w = NULL;
        if (glc_gguf_writer_create(&w) != GLC_OK)
            exit(1);
        glc_gguf_set_string(w, "tokenizer.ggml.model", m ? "gpt2" : "llama");
        if (!m) {
            for (i = 0; i < 20; i++) {
                scores[i] = -(float)i;
                types[i] = i == 0 ? 2 : i < 3 ? 3 : i < 6 ? 6 : 1;
            }
            glc_gguf_set_string_array(w, "tokenizer.ggml.tokens", spm, 20);
            glc_gguf_set_array(w, "tokenizer.ggml.scores", 6, 20, scores);
            glc_gguf_set_array(w, "tokenizer.ggml.token_type", 5, 20, types);
        } else {
            glc_gguf_set_string_array(w, "tokenizer.ggml.tokens", bpe, 16);
            glc_gguf_set_string_array(w, "tokenizer.ggml.merges", merges, 5);
            u = 15;
            glc_gguf_set_value(w, "tokenizer.ggml.eos_token_id", 4, &u);
        }
        snprintf(path, sizeof path, "%s/tokenizer_%s.gguf", dir, m ? "gpt2" : "llama");
        if (glc_gguf_write(w, path) != GLC_OK)
            exit(1);
        glc_gguf_writer_destroy(w);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    int i;
    for (i = 1; i < *argc; i++)
        if (strncmp((*argv)[i], "-write_seeds=", 13) == 0) {
            write_seeds((*argv)[i] + 13);
            write_tokenizer_seeds((*argv)[i] + 13);
            exit(0);
        }
    return 0;
}
