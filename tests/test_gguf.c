/*
 * The GGUF reader against files this test writes byte by byte from the
 * public layout: every value type and accessor, nested and string arrays,
 * tensors of F32, F16, Q8_0 and Q4_K with their shapes (outermost first),
 * offsets and bytes, through glc_gguf_open (a mapped file) and
 * glc_gguf_open_memory; general.alignment honoured. Then the refusals,
 * each naming its field and byte offset: magic, versions 1, 4 and a
 * byte-swapped one, counts past the file, a string past the end, value
 * and element types, a bool of 2, arrays nested too deep, a duplicate key
 * or tensor name, the alignment, dims, a zero dim, an element count that
 * overflows, an unknown GGML type, a row not made of whole blocks, a
 * misaligned offset, data past the end. And every prefix of a good file
 * and seeded single-byte corruptions: refused or read, never a crash (the
 * sanitizer build runs this too; fuzz_gguf.c keeps looking). Then the
 * writer: every kind of value and four tensor types out and back through
 * the reader, and its refusals.
 */
#include "testutil.h"

#include <math.h>
#include <unistd.h>

typedef struct buf {
    unsigned char b[8192];
    size_t n;
} buf;

static void put(buf *w, uint64_t v, int bytes)
{
    int i;
    for (i = 0; i < bytes; i++)
        w->b[w->n++] = (unsigned char)(v >> (8 * i));
}

static void put_str(buf *w, const char *s)
{
    put(w, strlen(s), 8);
    memcpy(w->b + w->n, s, strlen(s));
    w->n += strlen(s);
}

static void key(buf *w, const char *k, uint32_t type)
{
    put_str(w, k);
    put(w, type, 4);
}

static void pad_to(buf *w, size_t align)
{
    while (w->n % align)
        w->b[w->n++] = 0;
}

/* Offsets of the fields the refusal tests poke at. */
typedef struct layout {
    size_t kv_count, align_value, bool_value, first_tensor, q8_type, q8_offset;
} layout;

/* A good file: the metadata of every type, then four tensors. */
static void good_file(buf *w, layout *at)
{
    float f32v = 1.5f;
    double f64v = -2.25;
    uint32_t bits;
    uint64_t bits64;
    size_t data_start, i;
    memset(w, 0, sizeof *w);
    put(w, 0x46554747u, 4); /* "GGUF" */
    put(w, 3, 4);
    put(w, 4, 8); /* tensors */
    at->kv_count = w->n;
    put(w, 13, 8); /* pairs */
    key(w, "general.architecture", 8);
    put_str(w, "llama");
    key(w, "general.alignment", 4);
    at->align_value = w->n;
    put(w, 64, 4);
    key(w, "u8", 0);
    put(w, 200, 1);
    key(w, "i8", 1);
    put(w, (uint8_t)-5, 1);
    key(w, "u16", 2);
    put(w, 60000, 2);
    key(w, "i16", 3);
    put(w, (uint16_t)-300, 2);
    key(w, "i32", 5);
    put(w, (uint32_t)-70000, 4);
    key(w, "f32", 6);
    memcpy(&bits, &f32v, 4);
    put(w, bits, 4);
    key(w, "flag", 7);
    at->bool_value = w->n;
    put(w, 1, 1);
    key(w, "u64", 10);
    put(w, 5000000000ull, 8);
    key(w, "f64", 12);
    memcpy(&bits64, &f64v, 8);
    put(w, bits64, 8);
    key(w, "tokens", 9); /* an array of strings */
    put(w, 8, 4);
    put(w, 3, 8);
    put_str(w, "<s>");
    put_str(w, "");
    put_str(w, "hello");
    key(w, "nested", 9); /* an array of arrays of i32 */
    put(w, 9, 4);
    put(w, 2, 8);
    put(w, 5, 4);
    put(w, 2, 8);
    put(w, 1, 4);
    put(w, 2, 4);
    put(w, 5, 4);
    put(w, 1, 8);
    put(w, 3, 4);
    /* tensors: name, dims, dims innermost first, type, offset */
    at->first_tensor = w->n;
    put_str(w, "a");
    put(w, 2, 4);
    put(w, 3, 8);
    put(w, 2, 8); /* [2, 3] */
    put(w, 0, 4);
    put(w, 0, 8);
    put_str(w, "b.weight");
    put(w, 1, 4);
    put(w, 5, 8);
    put(w, 1, 4); /* f16 [5] */
    put(w, 64, 8);
    put_str(w, "q8");
    put(w, 2, 4);
    put(w, 64, 8);
    put(w, 3, 8); /* [3, 64] */
    at->q8_type = w->n;
    put(w, 8, 4);
    at->q8_offset = w->n;
    put(w, 128, 8);
    put_str(w, "q4");
    put(w, 1, 4);
    put(w, 256, 8);
    put(w, 12, 4); /* Q4_K [256]: one block of 144 bytes */
    put(w, 384, 8);
    pad_to(w, 64);
    data_start = w->n;
    for (i = 0; i < 384 + 144; i++) /* a: 24 bytes, b: 10, q8: 3 * 2 * 34 = 204, q4k: 144 */
        w->b[data_start + i] = (unsigned char)(i * 7);
    w->n = data_start + 384 + 144;
}

static void check_good(glc_gguf *f, const buf *w)
{
    glc_gguf_tensor t;
    int64_t i;
    double d;
    const char *s;
    size_t len;
    int et;
    uint64_t count;
    const void *arr;
    assert_int_equal(glc_gguf_version(f), 3);
    assert_int_equal(glc_gguf_alignment(f), 64);
    assert_int_equal(glc_gguf_kv_count(f), 13);
    assert_int_equal(glc_gguf_get_string(f, "general.architecture", &s, &len), GLC_OK);
    assert_true(len == 5 && memcmp(s, "llama", 5) == 0);
    assert_int_equal(glc_gguf_get_int(f, "u8", &i), GLC_OK);
    assert_int_equal(i, 200);
    assert_int_equal(glc_gguf_get_int(f, "i8", &i), GLC_OK);
    assert_int_equal(i, -5);
    assert_int_equal(glc_gguf_get_int(f, "u16", &i), GLC_OK);
    assert_int_equal(i, 60000);
    assert_int_equal(glc_gguf_get_int(f, "i16", &i), GLC_OK);
    assert_int_equal(i, -300);
    assert_int_equal(glc_gguf_get_int(f, "i32", &i), GLC_OK);
    assert_int_equal(i, -70000);
    assert_int_equal(glc_gguf_get_int(f, "u64", &i), GLC_OK);
    assert_int_equal(i, 5000000000ll);
    assert_int_equal(glc_gguf_get_int(f, "flag", &i), GLC_OK);
    assert_int_equal(i, 1);
    assert_int_equal(glc_gguf_get_float(f, "f32", &d), GLC_OK);
    assert_true(d == 1.5);
    assert_int_equal(glc_gguf_get_float(f, "f64", &d), GLC_OK);
    assert_true(d == -2.25);
    assert_int_equal(glc_gguf_get_float(f, "u16", &d), GLC_OK);
    assert_true(d == 60000.0);
    assert_int_equal(glc_gguf_value_type(f, "nested"), 9);
    assert_int_equal(glc_gguf_value_type(f, "missing"), -1);
    assert_int_equal(glc_gguf_get_int(f, "f32", &i), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "not an integer");
    assert_int_equal(glc_gguf_get_string(f, "u8", &s, &len), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_gguf_get_int(f, "missing", &i), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "no such key");
    assert_int_equal(glc_gguf_get_array(f, "tokens", &et, &count, &arr), GLC_OK);
    assert_true(et == 8 && count == 3);
    assert_int_equal(glc_gguf_array_string(f, "tokens", 2, &s, &len), GLC_OK);
    assert_true(len == 5 && memcmp(s, "hello", 5) == 0);
    assert_int_equal(glc_gguf_array_string(f, "tokens", 1, &s, &len), GLC_OK);
    assert_int_equal(len, 0);
    assert_int_equal(glc_gguf_array_string(f, "tokens", 3, &s, &len), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_gguf_get_array(f, "nested", &et, &count, &arr), GLC_OK);
    assert_true(et == 9 && count == 2);
    assert_int_equal(glc_gguf_tensor_count(f), 4);
    assert_int_equal(glc_gguf_find_tensor(f, "q8"), 2);
    assert_int_equal(glc_gguf_find_tensor(f, "nope"), -1);
    assert_int_equal(glc_gguf_tensor_at(f, 0, &t), GLC_OK);
    assert_string_equal(t.name, "a");
    assert_true(t.ggml_type == 0 && t.rank == 2 && t.shape[0] == 2 && t.shape[1] == 3);
    assert_true(t.bytes == 24 && t.offset % 64 == 0);
    assert_memory_equal(t.data, w->b + t.offset, 24);
    assert_int_equal(glc_gguf_tensor_at(f, 1, &t), GLC_OK);
    assert_true(t.ggml_type == 1 && t.rank == 1 && t.shape[0] == 5 && t.bytes == 10);
    assert_int_equal(glc_gguf_tensor_at(f, 2, &t), GLC_OK);
    assert_true(t.ggml_type == 8 && t.shape[0] == 3 && t.shape[1] == 64 && t.bytes == 204);
    assert_int_equal(glc_gguf_tensor_at(f, 3, &t), GLC_OK);
    assert_true(t.ggml_type == 12 && t.bytes == 144);
    assert_memory_equal(t.data, w->b + t.offset, 144);
    assert_int_equal(glc_gguf_tensor_at(f, 4, &t), GLC_ERR_INVALID_ARG);
}

static void test_good_file(void **state)
{
    static buf w;
    layout at;
    glc_gguf *f;
    char path[] = "/tmp/glc-gguf-XXXXXX";
    int fd;
    (void)state;
    good_file(&w, &at);
    assert_int_equal(glc_gguf_open_memory(w.b, w.n, &f), GLC_OK);
    check_good(f, &w);
    glc_gguf_close(f);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, w.b, w.n), (ssize_t)w.n);
    close(fd);
    if (glc_gguf_open(path, &f) != GLC_OK)
        fail_msg("open %s: %s", path, glc_device_errmsg(NULL));
    {
        glc_gguf_tensor t;
        assert_int_equal(glc_gguf_tensor_at(f, 3, &t), GLC_OK);
        assert_memory_equal(t.data, w.b + t.offset, 144); /* the mapped bytes */
    }
    glc_gguf_close(f);
    unlink(path);
    assert_int_equal(glc_gguf_open("/nonexistent/x.gguf", &f), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "cannot open");
}

/* Where `pat` (n bytes) first occurs in w. */
static size_t find(const buf *w, const char *pat, size_t n)
{
    size_t i;
    for (i = 0; i + n <= w->n; i++)
        if (memcmp(w->b + i, pat, n) == 0)
            return i;
    fail_msg("pattern not in the file");
    return 0;
}

/* The good file with `n` bytes at `at` replaced by v (little-endian). */
static void refuse(const buf *good, size_t at, uint64_t v, int n, const char *needle)
{
    static buf w;
    glc_gguf *f = NULL;
    w = *good;
    if (n) {
        size_t keep = w.n;
        w.n = at;
        put(&w, v, n);
        w.n = keep;
    }
    if (glc_gguf_open_memory(w.b, w.n, &f) != GLC_ERR_INVALID_ARG)
        fail_msg("a file with %llu at byte %zu was read (wanted: %s)", (unsigned long long)v, at,
                 needle);
    assert_null(f);
    tu_assert_contains(glc_device_errmsg(NULL), needle);
}

static void test_refusals(void **state)
{
    static buf w, x;
    layout at;
    (void)state;
    good_file(&w, &at);
    refuse(&w, 0, 0x46554748u, 4, "magic at byte 0: not \"GGUF\"");
    refuse(&w, 4, 1, 4, "version at byte 4: 1 (32-bit counts)");
    refuse(&w, 4, 4, 4, "version at byte 4: unknown");
    refuse(&w, 4, 0x03000000u, 4, "big-endian");
    refuse(&w, 8, 1ull << 40, 8, "tensor count at byte 8");
    refuse(&w, at.kv_count, 1ull << 40, 8, "key-value count at byte 16");
    refuse(&w, 24, 1ull << 30, 8, "key 0 at byte 24: its length runs past the end");
    refuse(&w, 24 + 8 + 20, 13, 4, "an unknown value type");
    refuse(&w, at.bool_value, 2, 1, "a bool other than 0 or 1");
    refuse(&w, at.align_value, 48, 4, "not a u32 power of two");
    refuse(&w, at.align_value, 0, 4, "not a u32 power of two");
    x = w;
    x.n = 20; /* inside the key-value count */
    refuse(&x, 0, 0, 0, "key-value count at byte 16: the file ends inside it");
    refuse(&w, at.first_tensor + 9, 5, 4, "dims not in 1..4");
    refuse(&w, at.first_tensor + 13, 0, 8, "a dim below 1");
    refuse(&w, at.first_tensor + 13, 1ull << 61, 8, "its byte count overflows");
    refuse(&w, at.first_tensor + 13, 1ull << 62, 8, "its element count overflows");
    refuse(&w, at.q8_type, 99, 4, "a GGML type this reader does not know");
    refuse(&w, at.q8_type, 12, 4, "rows not a whole number of the type's blocks");
    refuse(&w, at.q8_offset, 130, 8, "offset not a multiple of the alignment");
    refuse(&w, at.q8_offset, 1024, 8, "past the end of the file");
    /* the same key twice ("i8" made "u8"); the same tensor name twice ("q4"
     * made "q8") */
    x = w;
    x.b[find(&x, "\x02\0\0\0\0\0\0\0i8", 10) + 8] = 'u';
    refuse(&x, 0, 0, 0, "key 3 at byte");
    tu_assert_contains(glc_device_errmsg(NULL), "the same key twice");
    x = w;
    x.b[find(&x, "\x02\0\0\0\0\0\0\0q4", 10) + 9] = '8';
    refuse(&x, 0, 0, 0, "tensor 3's name at byte");
    tu_assert_contains(glc_device_errmsg(NULL), "the same name twice");
}

/* Every prefix of a good file and seeded corruptions: refused or read. */
static void test_truncations_and_corruptions(void **state)
{
    static buf w, x;
    layout at;
    uint64_t seed = 1601;
    size_t n;
    int i, read = 0;
    (void)state;
    good_file(&w, &at);
    for (n = 0; n < w.n; n++) {
        glc_gguf *f = NULL;
        glc_status st = glc_gguf_open_memory(w.b, n, &f);
        if (st == GLC_OK)
            glc_gguf_close(f);
        else
            assert_true(glc_device_errmsg(NULL)[0] != '\0');
    }
    for (i = 0; i < 3000; i++) {
        glc_gguf *f = NULL;
        size_t k = (size_t)(tu_rand(&seed) % w.n);
        x = w;
        x.b[k] ^= (unsigned char)(1u << (tu_rand(&seed) % 8));
        if (glc_gguf_open_memory(x.b, x.n, &f) == GLC_OK) {
            glc_gguf_tensor t;
            int64_t j;
            for (j = 0; j < glc_gguf_tensor_count(f); j++) { /* every tensor inside the bytes */
                assert_int_equal(glc_gguf_tensor_at(f, j, &t), GLC_OK);
                assert_true(t.offset + t.bytes <= x.n);
            }
            glc_gguf_close(f);
            read++;
        }
    }
    assert_true(read > 0); /* (flips in tensor data leave a file that reads) */
}

/* The writer: every value kind and four tensors (F32, F16, Q8_0, Q4_K) out
 * and back through the reader, alignment 64 honoured; and its refusals. */
/* A file of 200000 tensors and a 200000-string array: read in linear time
 * (duplicates are found by hashing, strings are indexed at open; the
 * quadratic checks this replaced would take minutes here), every string
 * by index, and a duplicate name at the very end still found. */
static void test_many_entries(void **state)
{
    enum { N = 200000 };
    size_t cap = (size_t)N * 64 + 4096, n = 0, last_name = 0;
    unsigned char *b = malloc(cap);
    glc_gguf *f = NULL;
    glc_gguf_tensor t;
    const char *str;
    size_t len;
    uint64_t i;
    char name[32];
#define PUT(v, bytes)                                                  \
    do {                                                               \
        int k_;                                                        \
        for (k_ = 0; k_ < (bytes); k_++)                               \
            b[n++] = (unsigned char)((uint64_t)(v) >> (8 * k_));       \
    } while (0)
#define PUT_STR(s)                                                     \
    do {                                                               \
        PUT(strlen(s), 8);                                             \
        memcpy(b + n, (s), strlen(s));                                 \
        n += strlen(s);                                                \
    } while (0)
    (void)state;
    assert_non_null(b);
    PUT(0x46554747u, 4);
    PUT(3, 4);
    PUT(N, 8);
    PUT(1, 8);
    PUT_STR("words");
    PUT(9, 4);
    PUT(8, 4);
    PUT(N, 8);
    for (i = 0; i < N; i++) {
        snprintf(name, sizeof name, "w%llu", (unsigned long long)i);
        PUT_STR(name);
    }
    for (i = 0; i < N; i++) { /* each an f32 [1] at offset 0: they share their 4 bytes */
        if (i == N - 1)
            last_name = n;
        snprintf(name, sizeof name, "t%06llu", (unsigned long long)i);
        PUT_STR(name);
        PUT(1, 4);
        PUT(1, 8);
        PUT(0, 4);
        PUT(0, 8);
    }
    while (n % 32)
        b[n++] = 0;
    PUT(0x3f800000u, 4);
    assert_int_equal(glc_gguf_open_memory(b, n, &f), GLC_OK);
    assert_int_equal(glc_gguf_tensor_count(f), N);
    assert_int_equal(glc_gguf_tensor_at(f, N - 1, &t), GLC_OK);
    assert_string_equal(t.name, "t199999");
    for (i = 0; i < N; i++) { /* in order: constant time each */
        snprintf(name, sizeof name, "w%llu", (unsigned long long)i);
        assert_int_equal(glc_gguf_array_string(f, "words", i, &str, &len), GLC_OK);
        assert_int_equal(len, strlen(name));
        assert_memory_equal(str, name, len);
    }
    glc_gguf_close(f);
    memcpy(b + last_name + 8, "t000000", 7); /* the last name made the first's */
    assert_int_equal(glc_gguf_open_memory(b, n, &f), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "the same name twice");
    free(b);
#undef PUT
#undef PUT_STR
}

static void test_writer_round_trip(void **state)
{
    glc_gguf_writer *w;
    glc_gguf *f;
    glc_gguf_tensor t;
    char path[] = "/tmp/glc-gguf-w-XXXXXX";
    static unsigned char q8[3 * 2 * 34], q4k[144];
    float a[6] = {1, 2, 3, 4, 5, 6}, fv = 0.25f, got_f;
    uint16_t h[5] = {0x3c00, 0x4000, 0, 0xbc00, 0x7c00};
    uint32_t align = 64, u = 7;
    int32_t arr[3] = {-1, 0, 70000};
    int64_t i64 = -5000000000ll, iv, sa[2] = {2, 3}, sh[1] = {5}, sq[2] = {3, 64}, sk[1] = {256};
    uint8_t yes = 1, two = 2;
    const char *words[3] = {"<s>", "", "hello"}, *s;
    size_t len, k;
    int et, fd;
    uint64_t count;
    const void *data;
    double d;
    (void)state;
    for (k = 0; k < sizeof q8; k++)
        q8[k] = (unsigned char)(k * 13);
    for (k = 0; k < sizeof q4k; k++)
        q4k[k] = (unsigned char)(k * 5);
    assert_int_equal(glc_gguf_writer_create(&w), GLC_OK);
    assert_int_equal(glc_gguf_set_string(w, "general.architecture", "llama"), GLC_OK);
    assert_int_equal(glc_gguf_set_value(w, "general.alignment", 4, &align), GLC_OK);
    assert_int_equal(glc_gguf_set_value(w, "u32", 4, &u), GLC_OK);
    assert_int_equal(glc_gguf_set_value(w, "i64", 11, &i64), GLC_OK);
    assert_int_equal(glc_gguf_set_value(w, "f32", 6, &fv), GLC_OK);
    assert_int_equal(glc_gguf_set_value(w, "yes", 7, &yes), GLC_OK);
    assert_int_equal(glc_gguf_set_array(w, "arr", 5, 3, arr), GLC_OK);
    assert_int_equal(glc_gguf_set_string_array(w, "words", words, 3), GLC_OK);
    assert_int_equal(glc_gguf_add_tensor(w, "a", 0, 2, sa, a, sizeof a), GLC_OK);
    assert_int_equal(glc_gguf_add_tensor(w, "h", 1, 1, sh, h, sizeof h), GLC_OK);
    assert_int_equal(glc_gguf_add_tensor(w, "q8", 8, 2, sq, q8, sizeof q8), GLC_OK);
    assert_int_equal(glc_gguf_add_tensor(w, "q4k", 12, 1, sk, q4k, sizeof q4k), GLC_OK);
    /* the refusals, each changing nothing */
    assert_int_equal(glc_gguf_set_value(w, "u32", 4, &u), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "the key is set already");
    assert_int_equal(glc_gguf_set_value(w, "s", 8, "x"), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_gguf_set_value(w, "b", 7, &two), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_gguf_set_value(w, "general.alignment2", 4, &u), GLC_OK);
    assert_int_equal(glc_gguf_add_tensor(w, "a", 0, 2, sa, a, sizeof a), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "the name is taken");
    assert_int_equal(glc_gguf_add_tensor(w, "b", 0, 2, sa, a, 20), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "not the bytes");
    assert_int_equal(glc_gguf_add_tensor(w, "c", 8, 2, sa, q8, 34), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "rows not a whole number of blocks");
    assert_int_equal(glc_gguf_add_tensor(w, "d", 99, 1, sh, a, 20), GLC_ERR_INVALID_ARG);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(glc_gguf_write(w, path), GLC_OK);
    glc_gguf_writer_destroy(w);
    if (glc_gguf_open(path, &f) != GLC_OK)
        fail_msg("the written file: %s", glc_device_errmsg(NULL));
    assert_int_equal(glc_gguf_version(f), 3);
    assert_int_equal(glc_gguf_alignment(f), 64);
    assert_int_equal(glc_gguf_kv_count(f), 9);
    assert_int_equal(glc_gguf_get_string(f, "general.architecture", &s, &len), GLC_OK);
    assert_true(len == 5 && memcmp(s, "llama", 5) == 0);
    assert_int_equal(glc_gguf_get_int(f, "u32", &iv), GLC_OK);
    assert_int_equal(iv, 7);
    assert_int_equal(glc_gguf_get_int(f, "i64", &iv), GLC_OK);
    assert_int_equal(iv, i64);
    assert_int_equal(glc_gguf_get_float(f, "f32", &d), GLC_OK);
    got_f = (float)d;
    assert_true(got_f == fv);
    assert_int_equal(glc_gguf_get_int(f, "yes", &iv), GLC_OK);
    assert_int_equal(iv, 1);
    assert_int_equal(glc_gguf_get_array(f, "arr", &et, &count, &data), GLC_OK);
    assert_true(et == 5 && count == 3);
    assert_memory_equal(data, arr, sizeof arr);
    for (k = 0; k < 3; k++) {
        assert_int_equal(glc_gguf_array_string(f, "words", k, &s, &len), GLC_OK);
        assert_true(len == strlen(words[k]) && memcmp(s, words[k], len) == 0);
    }
    assert_int_equal(glc_gguf_tensor_count(f), 4);
    assert_int_equal(glc_gguf_tensor_at(f, 0, &t), GLC_OK);
    assert_true(t.rank == 2 && t.shape[0] == 2 && t.shape[1] == 3 && t.offset % 64 == 0);
    assert_memory_equal(t.data, a, sizeof a);
    assert_int_equal(glc_gguf_tensor_at(f, 1, &t), GLC_OK);
    assert_memory_equal(t.data, h, sizeof h);
    assert_int_equal(glc_gguf_tensor_at(f, glc_gguf_find_tensor(f, "q8"), &t), GLC_OK);
    assert_true(t.ggml_type == 8 && t.shape[0] == 3 && t.shape[1] == 64 && t.offset % 64 == 0);
    assert_memory_equal(t.data, q8, sizeof q8);
    assert_int_equal(glc_gguf_tensor_at(f, glc_gguf_find_tensor(f, "q4k"), &t), GLC_OK);
    assert_memory_equal(t.data, q4k, sizeof q4k);
    glc_gguf_close(f);
    unlink(path);
    assert_int_equal(glc_gguf_writer_create(&w), GLC_OK);
    assert_int_equal(glc_gguf_set_value(w, "general.alignment", 4, &u), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "power of two");
    assert_int_equal(glc_gguf_write(w, "/nonexistent/dir/x.gguf"), GLC_ERR_INVALID_ARG);
    glc_gguf_writer_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_truncations_and_corruptions),
        cmocka_unit_test(test_writer_round_trip),
        cmocka_unit_test(test_many_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
