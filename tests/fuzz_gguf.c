/*
 * libFuzzer on the GGUF reader (src/core/gguf.c): any bytes must be read or
 * refused with a message, never crash, hang or read past them (ASan and
 * UBSan watch). A file that reads is walked whole: every key through every
 * getter (string arrays element by element), every tensor's bytes summed.
 * `fuzz_gguf -write_seeds=DIR` writes a seed: a small valid file of every
 * value type and a few tensors.
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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    int i;
    for (i = 1; i < *argc; i++)
        if (strncmp((*argv)[i], "-write_seeds=", 13) == 0) {
            write_seeds((*argv)[i] + 13);
            exit(0);
        }
    return 0;
}
