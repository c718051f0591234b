/*
 * GGUF reader and writer (llama.cpp's model files), GL-free. The file is mapped (or
 * given in memory) and parsed once: the header, the key-value metadata,
 * the tensor directory and where the tensor data starts; every length,
 * count, type id, alignment, offset and size is checked against the bytes
 * there are before anything is read or allocated, and a refusal names the
 * field and its byte offset. Versions 2 and 3, little-endian (a version
 * read byte-swapped says the file is big-endian: refused).
 *
 * Layout (public GGUF specification): "GGUF", u32 version, u64 tensor
 * count, u64 key-value count; per pair a string key, a u32 value type and
 * the value (arrays: u32 element type, u64 count, the elements); per
 * tensor a string name, u32 dims, u64 dims (innermost first), u32 GGML
 * type, u64 offset into the data section; the data section starts at the
 * next multiple of general.alignment (a u32, default 32). Strings are a u64
 * length and that many bytes, no terminator.
 */
#include "glcompute.h"

#include "alloc.h"
#include "errmsg.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 4 /* arrays of arrays */

typedef struct kv {
    const char *key; /* in the file, not terminated */
    size_t key_len;
    uint32_t type;
    size_t at;        /* the value's bytes (arrays: the first element) */
    uint32_t elem;    /* arrays */
    uint64_t count;
    size_t str0;      /* a string array: its first element's place in str_at */
} kv;

struct glc_gguf {
    const unsigned char *data;
    size_t size;
    int mapped;
    uint32_t version, alignment;
    size_t data_start;
    kv *kvs;
    int64_t nkv;
    glc_gguf_tensor *tensors;
    int64_t ntensors;
    char *names; /* the tensors' names, terminated */
    size_t *str_at; /* every string array element's offset (its length field) */
};

/* ---- duplicates: a hash set of (bytes, length), so that a file with a
 * million keys or tensors is checked in linear time ---- */

typedef struct dupset {
    struct { const char *s; size_t n; } *slot;
    size_t mask;
} dupset;

static int dupset_init(dupset *d, uint64_t count)
{
    size_t size = 16;
    while (size < 2 * count + 1)
        size *= 2;
    d->mask = size - 1;
    d->slot = glc__calloc(size, sizeof *d->slot);
    return d->slot != NULL;
}

/* 1 when s[0 .. n) was inserted before (then it is not inserted again) */
static int dupset_insert(dupset *d, const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    for (i = (size_t)h & d->mask; d->slot[i].s; i = (i + 1) & d->mask)
        if (d->slot[i].n == n && memcmp(d->slot[i].s, s, n) == 0)
            return 1;
    d->slot[i].s = s;
    d->slot[i].n = n;
    return 0;
}

const char *glc_gguf_type_name(uint32_t t)
{
    /* GGML's type ids (ggml.h's enum ggml_type); 4 and 5 are retired */
    static const char *const names[] = {
        "f32",     "f16",    "q4_0",    "q4_1",  "?",      "?",      "q5_0",   "q5_1",
        "q8_0",    "q8_1",   "q2_K",    "q3_K",  "q4_K",   "q5_K",   "q6_K",   "q8_K",
        "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl", "iq3_s",  "iq2_s",  "iq4_xs",
        "i8",      "i16",    "i32",     "i64",   "f64",    "iq1_m",  "bf16"};
    return t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* Elements a block and bytes a block of GGML type t (0 0: unknown). */
static void ggml_block(uint32_t t, uint32_t *elems, uint32_t *bytes)
{
    static const struct { uint32_t t, e, b; } tab[] = {
        {0, 1, 4},      {1, 1, 2},      {2, 32, 18},    {3, 32, 20},    {6, 32, 22},
        {7, 32, 24},    {8, 32, 34},    {9, 32, 36},    {10, 256, 84},  {11, 256, 110},
        {12, 256, 144}, {13, 256, 176}, {14, 256, 210}, {15, 256, 292}, {24, 1, 1},
        {25, 1, 2},     {26, 1, 4},     {27, 1, 8},     {28, 1, 8},     {30, 1, 2}};
    size_t i;
    *elems = *bytes = 0;
    for (i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tab[i].t == t) {
            *elems = tab[i].e;
            *bytes = tab[i].b;
        }
}

/* Bytes of one value of a fixed-size type (0: string or array). */
static size_t fixed_size(uint32_t type)
{
    static const size_t sz[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return type < 13 ? sz[type] : 0;
}

typedef struct cursor {
    const unsigned char *p;
    size_t size, at;
} cursor;

static glc_status bad(size_t at, const char *what, const char *why)
{
    return glc__fail(NULL, GLC_ERR_INVALID_ARG, "gguf: %s at byte %zu: %s", what, at, why);
}

static int take(cursor *c, size_t n, size_t *at)
{
    if (n > c->size - c->at)
        return 0;
    *at = c->at;
    c->at += n;
    return 1;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    int i;
    for (i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static glc_status u32(cursor *c, const char *what, uint32_t *v)
{
    size_t at;
    if (!take(c, 4, &at))
        return bad(c->at, what, "the file ends inside it");
    *v = (uint32_t)le(c->p + at, 4);
    return GLC_OK;
}

static glc_status u64(cursor *c, const char *what, uint64_t *v)
{
    size_t at;
    if (!take(c, 8, &at))
        return bad(c->at, what, "the file ends inside it");
    *v = le(c->p + at, 8);
    return GLC_OK;
}

static glc_status str(cursor *c, const char *what, const char **s, size_t *len)
{
    uint64_t n;
    size_t at = c->at, d;
    glc_status st = u64(c, what, &n);
    if (st != GLC_OK)
        return st;
    if (n > c->size - c->at)
        return bad(at, what, "its length runs past the end of the file");
    take(c, (size_t)n, &d);
    *s = (const char *)c->p + d;
    *len = (size_t)n;
    return GLC_OK;
}

/* Skips a value of `type` (its first byte at c->at), checking it. */
static glc_status value(cursor *c, uint32_t type, int depth, const char *what)
{
    size_t at = c->at, d;
    if (type > 12)
        return bad(at, what, "an unknown value type");
    if (type == 8) {
        const char *s;
        size_t n;
        return str(c, what, &s, &n);
    }
    if (type == 9) {
        uint32_t elem;
        uint64_t count, i;
        glc_status st;
        if (depth >= MAX_DEPTH)
            return bad(at, what, "arrays nested too deep");
        if ((st = u32(c, what, &elem)) != GLC_OK || (st = u64(c, what, &count)) != GLC_OK)
            return st;
        if (elem > 12)
            return bad(at, what, "an array of an unknown value type");
        if (fixed_size(elem)) {
            if (count > (c->size - c->at) / fixed_size(elem))
                return bad(at, what, "its elements run past the end of the file");
            take(c, (size_t)count * fixed_size(elem), &d);
            return GLC_OK;
        }
        if (count > (c->size - c->at) / 8) /* a string or an array takes 8 bytes at least */
            return bad(at, what, "its elements run past the end of the file");
        for (i = 0; i < count; i++)
            if ((st = value(c, elem, depth + 1, what)) != GLC_OK)
                return st;
        return GLC_OK;
    }
    if (!take(c, fixed_size(type), &d))
        return bad(at, what, "the file ends inside it");
    if (type == 7 && c->p[d] > 1)
        return bad(at, what, "a bool other than 0 or 1");
    return GLC_OK;
}

static int same_key(const kv *k, const char *s, size_t n)
{
    return k->key_len == n && memcmp(k->key, s, n) == 0;
}

/* The file's header, pairs and tensor table, checked; dup: the duplicates
 * set (keys, then names), the caller's to free */
static glc_status parse_file(glc_gguf *f, dupset *dup)
{
    cursor c = {f->data, f->size, 0};
    uint64_t nt, nkv, i;
    size_t at, names = 0;
    glc_status st;
    uint32_t magic;
    char what[96];
    if ((st = u32(&c, "magic", &magic)) != GLC_OK)
        return st;
    if (memcmp(f->data, "GGUF", 4) != 0)
        return bad(0, "magic", "not \"GGUF\": not a GGUF file");
    if ((st = u32(&c, "version", &f->version)) != GLC_OK)
        return st;
    if (f->version != 2 && f->version != 3)
        return bad(4, "version",
                   f->version == 1 ? "1 (32-bit counts) is not read; versions 2 and 3 are"
                   : (f->version & 0xffff) == 0 ? "byte-swapped: a big-endian file, not read"
                                                 : "unknown; versions 2 and 3 are read");
    if ((st = u64(&c, "tensor count", &nt)) != GLC_OK || (st = u64(&c, "key-value count", &nkv)) != GLC_OK)
        return st;
    /* a pair takes 12 bytes at least, a tensor 24 */
    if (nkv > (c.size - c.at) / 12)
        return bad(16, "key-value count", "more pairs than the file has bytes for");
    if (nt > (c.size - c.at) / 24)
        return bad(8, "tensor count", "more tensors than the file has bytes for");
    f->kvs = glc__calloc((size_t)nkv + 1, sizeof *f->kvs);
    f->tensors = glc__calloc((size_t)nt + 1, sizeof *f->tensors);
    if (!f->kvs || !f->tensors)
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    f->alignment = 32;
    if (!dupset_init(dup, nkv))
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    for (i = 0; i < nkv; i++) {
        kv *k = &f->kvs[i];
        at = c.at;
        snprintf(what, sizeof what, "key %llu", (unsigned long long)i);
        if ((st = str(&c, what, &k->key, &k->key_len)) != GLC_OK)
            return st;
        if (dupset_insert(dup, k->key, k->key_len))
            return bad(at, what, "the same key twice");
        snprintf(what, sizeof what, "the value of \"%.*s\"", (int)(k->key_len < 48 ? k->key_len : 48),
                 k->key);
        if ((st = u32(&c, what, &k->type)) != GLC_OK)
            return st;
        k->at = c.at;
        if (k->type == 9 && c.size - c.at >= 12) {
            k->elem = (uint32_t)le(c.p + c.at, 4);
            k->count = le(c.p + c.at + 4, 8);
            k->at = c.at + 12;
        }
        if ((st = value(&c, k->type, 0, what)) != GLC_OK)
            return st;
        f->nkv++;
        if (same_key(k, "general.alignment", 17)) {
            uint32_t a = k->type == 4 ? (uint32_t)le(c.p + k->at, 4) : 0;
            if (a == 0 || (a & (a - 1)) || a > 65536)
                return bad(k->at - 4, what, "not a u32 power of two up to 65536");
            f->alignment = a;
        }
    }
    glc__free(dup->slot); /* a new set for the names */
    if (!dupset_init(dup, nt))
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    for (i = 0; i < nt; i++) {
        glc_gguf_tensor *t = &f->tensors[i];
        const char *name;
        size_t name_len;
        uint32_t dims, type, be, bb;
        uint64_t dim[4], numel = 1, off;
        int d2;
        at = c.at;
        snprintf(what, sizeof what, "tensor %llu's name", (unsigned long long)i);
        if ((st = str(&c, what, &name, &name_len)) != GLC_OK)
            return st;
        if (dupset_insert(dup, name, name_len))
            return bad(at, what, "the same name twice");
        snprintf(what, sizeof what, "tensor \"%.*s\"", (int)(name_len < 48 ? name_len : 48), name);
        if ((st = u32(&c, what, &dims)) != GLC_OK)
            return st;
        if (dims < 1 || dims > 4)
            return bad(c.at - 4, what, "dims not in 1..4");
        for (d2 = 0; d2 < (int)dims; d2++) {
            if ((st = u64(&c, what, &dim[d2])) != GLC_OK)
                return st;
            if (dim[d2] < 1 || dim[d2] > ((uint64_t)1 << 62) / numel)
                return bad(c.at - 8, what,
                           dim[d2] < 1 ? "a dim below 1" : "its element count overflows");
            numel *= dim[d2];
        }
        if ((st = u32(&c, what, &type)) != GLC_OK)
            return st;
        ggml_block(type, &be, &bb);
        if (!be)
            return bad(c.at - 4, what, "a GGML type this reader does not know the size of");
        if (dim[0] % be)
            return bad(c.at - 4, what, "rows not a whole number of the type's blocks");
        if (numel / be > ((uint64_t)1 << 62) / bb)
            return bad(c.at - 4, what, "its byte count overflows");
        if ((st = u64(&c, what, &off)) != GLC_OK)
            return st;
        t->ggml_type = type;
        t->rank = (int)dims;
        for (d2 = 0; d2 < (int)dims; d2++) /* outermost first */
            t->shape[d2] = (int64_t)dim[dims - 1 - d2];
        t->bytes = numel / be * bb;
        t->offset = off;
        t->name = name; /* (in the file for now; copied below) */
        names += name_len + 1;
    }
    /* the data section */
    f->data_start = c.at + (f->alignment - c.at % f->alignment) % f->alignment;
    if (nt && f->data_start > f->size)
        return bad(c.at, "the tensor data", "the file ends before it starts");
    f->names = glc__malloc(names + 1);
    if (!f->names)
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    {
        /* names copied (terminated); offsets checked: aligned, inside the file */
        size_t w = 0;
        for (i = 0; i < nt; i++) {
            glc_gguf_tensor *t = &f->tensors[i];
            const char *name = t->name;
            size_t n = (size_t)le((const unsigned char *)name - 8, 8); /* its length field */
            memcpy(f->names + w, name, n);
            f->names[w + n] = '\0';
            t->name = f->names + w;
            w += n + 1;
            if (t->offset % f->alignment || t->offset > f->size - f->data_start ||
                t->bytes > f->size - f->data_start - t->offset)
                return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                                 "gguf: tensor \"%s\": data at %llu + %llu bytes from byte %zu: %s",
                                 t->name, (unsigned long long)t->offset,
                                 (unsigned long long)t->bytes, f->data_start,
                                 t->offset % f->alignment ? "offset not a multiple of the alignment"
                                                          : "past the end of the file");
            t->offset += f->data_start;
            t->data = f->data + t->offset;
            f->ntensors++;
        }
    }
    return GLC_OK;
}

/* Every string array element's offset, so that glc_gguf_array_string
 * takes constant time (a vocabulary read in order would take quadratic
 * time without it); lengths were checked by parse_file. */
static glc_status index_strings(glc_gguf *f)
{
    size_t n = 0, w = 0;
    int64_t i;
    uint64_t j;
    for (i = 0; i < f->nkv; i++)
        if (f->kvs[i].type == 9 && f->kvs[i].elem == 8)
            n += (size_t)f->kvs[i].count;
    if (!(f->str_at = glc__malloc((n ? n : 1) * sizeof *f->str_at)))
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    for (i = 0; i < f->nkv; i++) {
        kv *k = &f->kvs[i];
        size_t at = k->at;
        if (k->type != 9 || k->elem != 8)
            continue;
        k->str0 = w;
        for (j = 0; j < k->count; j++) {
            f->str_at[w++] = at;
            at += 8 + (size_t)le(f->data + at, 8);
        }
    }
    return GLC_OK;
}

static glc_status parse(glc_gguf *f)
{
    dupset dup = {NULL, 0};
    glc_status st = parse_file(f, &dup);
    glc__free(dup.slot);
    return st == GLC_OK ? index_strings(f) : st;
}

glc_status glc_gguf_open_memory(const void *data, size_t size, glc_gguf **out)
{
    glc_gguf *f;
    glc_status st;
    if (!out || (!data && size))
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_gguf_open_memory: invalid argument");
    *out = NULL;
    if (!(f = glc__calloc(1, sizeof *f)))
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    f->data = data;
    f->size = size;
    if ((st = parse(f)) != GLC_OK) {
        glc_gguf_close(f);
        return st;
    }
    *out = f;
    return GLC_OK;
}

glc_status glc_gguf_open(const char *path, glc_gguf **out)
{
    struct stat sb;
    void *m;
    int fd;
    glc_status st;
    if (!path || !out)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_gguf_open: invalid argument");
    *out = NULL;
    if ((fd = open(path, O_RDONLY)) < 0)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_gguf_open: cannot open %s", path);
    if (fstat(fd, &sb) != 0 || sb.st_size <= 0) {
        close(fd);
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "gguf: %s: empty or unreadable", path);
    }
    m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: %s: mmap failed", path);
    if ((st = glc_gguf_open_memory(m, (size_t)sb.st_size, out)) != GLC_OK) {
        munmap(m, (size_t)sb.st_size);
        return st;
    }
    (*out)->mapped = 1;
    return GLC_OK;
}

void glc_gguf_close(glc_gguf *f)
{
    if (!f)
        return;
    if (f->mapped)
        munmap((void *)f->data, f->size);
    glc__free(f->kvs);
    glc__free(f->tensors);
    glc__free(f->names);
    glc__free(f->str_at);
    glc__free(f);
}

uint32_t glc_gguf_version(const glc_gguf *f) { return f ? f->version : 0; }
int64_t glc_gguf_tensor_count(const glc_gguf *f) { return f ? f->ntensors : 0; }
int64_t glc_gguf_kv_count(const glc_gguf *f) { return f ? f->nkv : 0; }
uint32_t glc_gguf_alignment(const glc_gguf *f) { return f ? f->alignment : 0; }

glc_status glc_gguf_tensor_at(const glc_gguf *f, int64_t i, glc_gguf_tensor *out)
{
    if (!f || !out || i < 0 || i >= f->ntensors)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_gguf_tensor_at: no tensor %lld",
                         (long long)i);
    *out = f->tensors[i];
    return GLC_OK;
}

int64_t glc_gguf_find_tensor(const glc_gguf *f, const char *name)
{
    int64_t i;
    for (i = 0; f && name && i < f->ntensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return i;
    return -1;
}

static const kv *find(const glc_gguf *f, const char *key)
{
    int64_t i;
    for (i = 0; f && key && i < f->nkv; i++)
        if (same_key(&f->kvs[i], key, strlen(key)))
            return &f->kvs[i];
    return NULL;
}

static glc_status no_key(const char *fn, const char *key, const char *why)
{
    return glc__fail(NULL, GLC_ERR_INVALID_ARG, "%s(\"%s\"): %s", fn, key ? key : "(null)", why);
}

const char *glc_gguf_key_at(const glc_gguf *f, int64_t i, size_t *len)
{
    if (!f || !len || i < 0 || i >= f->nkv)
        return NULL;
    *len = f->kvs[i].key_len;
    return f->kvs[i].key;
}

int glc_gguf_value_type(const glc_gguf *f, const char *key)
{
    const kv *k = find(f, key);
    return k ? (int)k->type : -1;
}

glc_status glc_gguf_get_int(const glc_gguf *f, const char *key, int64_t *out)
{
    const kv *k = find(f, key);
    const unsigned char *p;
    if (!k || !out)
        return no_key("glc_gguf_get_int", key, "no such key");
    p = f->data + k->at;
    switch (k->type) {
    case 0: *out = p[0]; return GLC_OK;
    case 1: *out = (int8_t)p[0]; return GLC_OK;
    case 2: *out = (int64_t)le(p, 2); return GLC_OK;
    case 3: *out = (int16_t)le(p, 2); return GLC_OK;
    case 4: *out = (int64_t)le(p, 4); return GLC_OK;
    case 5: *out = (int32_t)le(p, 4); return GLC_OK;
    case 7: *out = p[0]; return GLC_OK;
    case 10:
        if (le(p, 8) > (uint64_t)INT64_MAX)
            return no_key("glc_gguf_get_int", key, "a u64 past the int64 range");
        *out = (int64_t)le(p, 8);
        return GLC_OK;
    case 11: *out = (int64_t)le(p, 8); return GLC_OK;
    default: return no_key("glc_gguf_get_int", key, "not an integer or bool value");
    }
}

glc_status glc_gguf_get_float(const glc_gguf *f, const char *key, double *out)
{
    const kv *k = find(f, key);
    int64_t i;
    if (!k || !out)
        return no_key("glc_gguf_get_float", key, "no such key");
    if (k->type == 6) {
        uint32_t b = (uint32_t)le(f->data + k->at, 4);
        float v;
        memcpy(&v, &b, 4);
        *out = v;
        return GLC_OK;
    }
    if (k->type == 12) {
        uint64_t b = le(f->data + k->at, 8);
        memcpy(out, &b, 8);
        return GLC_OK;
    }
    if (k->type != 8 && k->type != 9 && glc_gguf_get_int(f, key, &i) == GLC_OK) {
        *out = (double)i;
        return GLC_OK;
    }
    return no_key("glc_gguf_get_float", key, "not a number");
}

glc_status glc_gguf_get_string(const glc_gguf *f, const char *key, const char **s, size_t *len)
{
    const kv *k = find(f, key);
    if (!k || !s || !len)
        return no_key("glc_gguf_get_string", key, "no such key");
    if (k->type != 8)
        return no_key("glc_gguf_get_string", key, "not a string");
    *len = (size_t)le(f->data + k->at, 8);
    *s = (const char *)f->data + k->at + 8;
    return GLC_OK;
}

glc_status glc_gguf_get_array(const glc_gguf *f, const char *key, int *elem_type, uint64_t *count,
                              const void **data)
{
    const kv *k = find(f, key);
    if (!k || !elem_type || !count || !data)
        return no_key("glc_gguf_get_array", key, "no such key");
    if (k->type != 9)
        return no_key("glc_gguf_get_array", key, "not an array");
    *elem_type = (int)k->elem;
    *count = k->count;
    *data = f->data + k->at;
    return GLC_OK;
}

glc_status glc_gguf_array_string(const glc_gguf *f, const char *key, uint64_t i, const char **s,
                                 size_t *len)
{
    const kv *k = find(f, key);
    const unsigned char *p;
    if (!k || k->type != 9 || k->elem != 8 || i >= k->count || !s || !len)
        return no_key("glc_gguf_array_string", key, "no string array with that element");
    p = f->data + f->str_at[k->str0 + (size_t)i]; /* indexed at open */
    *len = (size_t)le(p, 8);
    *s = (const char *)p + 8;
    return GLC_OK;
}

/* ---- the writer ----
 * Keys and tensors are kept in the order given (values copied, tensor
 * data by pointer until glc_gguf_write); the file is version 3 with the
 * tensors' data at multiples of the alignment (general.alignment when
 * set, else 32), in the order added. */

typedef struct wkv {
    char *key;
    uint32_t type, elem;
    unsigned char *val; /* the value's bytes as the file holds them */
    size_t len;
} wkv;

typedef struct wtensor {
    char *name;
    uint32_t ggml_type;
    int rank;
    int64_t shape[4];
    const void *data;
    uint64_t bytes, offset;
} wtensor;

struct glc_gguf_writer {
    wkv *kv;
    int64_t nkv, kvcap;
    wtensor *t;
    int64_t nt, tcap;
    uint32_t alignment;
};

glc_status glc_gguf_writer_create(glc_gguf_writer **out)
{
    if (!out)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_gguf_writer_create: out is NULL");
    if (!(*out = glc__calloc(1, sizeof **out)))
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    (*out)->alignment = 32;
    return GLC_OK;
}

void glc_gguf_writer_destroy(glc_gguf_writer *w)
{
    int64_t i;
    if (!w)
        return;
    for (i = 0; i < w->nkv; i++) {
        glc__free(w->kv[i].key);
        glc__free(w->kv[i].val);
    }
    for (i = 0; i < w->nt; i++)
        glc__free(w->t[i].name);
    glc__free(w->kv);
    glc__free(w->t);
    glc__free(w);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = glc__malloc(n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
    int i;
    for (i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Adds key with value bytes val[len] of `type` (elem: arrays). */
static glc_status add_kv(glc_gguf_writer *w, const char *fn, const char *key, uint32_t type,
                         uint32_t elem, const unsigned char *val, size_t len)
{
    wkv *k;
    int64_t i;
    if (!w || !key || !key[0])
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "%s: invalid argument", fn);
    for (i = 0; i < w->nkv; i++)
        if (strcmp(w->kv[i].key, key) == 0)
            return glc__fail(NULL, GLC_ERR_INVALID_ARG, "%s(\"%s\"): the key is set already", fn,
                             key);
    if (w->nkv == w->kvcap) {
        int64_t cap = w->kvcap ? 2 * w->kvcap : 16;
        wkv *n = glc__realloc(w->kv, (size_t)cap * sizeof *n);
        if (!n)
            return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
        w->kv = n;
        w->kvcap = cap;
    }
    k = &w->kv[w->nkv];
    k->key = dup_str(key);
    k->val = glc__malloc(len ? len : 1);
    if (!k->key || !k->val) {
        glc__free(k->key);
        glc__free(k->val);
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    }
    memcpy(k->val, val, len);
    k->len = len;
    k->type = type;
    k->elem = elem;
    w->nkv++;
    return GLC_OK;
}

glc_status glc_gguf_set_value(glc_gguf_writer *w, const char *key, int type, const void *value)
{
    unsigned char b[8];
    size_t n = type >= 0 && type != 8 && type != 9 ? fixed_size((uint32_t)type) : 0;
    if (!n || !value)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "glc_gguf_set_value(\"%s\"): type %d is not a fixed-size value type",
                         key ? key : "(null)", type);
    memcpy(b, value, n); /* (this host is little-endian, as the file) */
    if (type == 7 && b[0] > 1)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_gguf_set_value(\"%s\"): a bool of %d",
                         key ? key : "(null)", b[0]);
    if (key && strcmp(key, "general.alignment") == 0) {
        uint32_t a;
        memcpy(&a, b, 4);
        if (type != 4 || a == 0 || (a & (a - 1)) || a > 65536)
            return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                             "glc_gguf_set_value: general.alignment must be a u32 power of two up "
                             "to 65536");
        if (w)
            w->alignment = a;
    }
    return add_kv(w, "glc_gguf_set_value", key, (uint32_t)type, 0, b, n);
}

glc_status glc_gguf_set_string(glc_gguf_writer *w, const char *key, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    unsigned char *b;
    glc_status st;
    if (!s)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_gguf_set_string: s is NULL");
    if (!(b = glc__malloc(8 + n)))
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    put_le(b, n, 8);
    memcpy(b + 8, s, n);
    st = add_kv(w, "glc_gguf_set_string", key, 8, 0, b, 8 + n);
    glc__free(b);
    return st;
}

glc_status glc_gguf_set_array(glc_gguf_writer *w, const char *key, int elem_type, uint64_t count,
                              const void *data)
{
    size_t es = elem_type >= 0 && elem_type != 8 && elem_type != 9 ? fixed_size((uint32_t)elem_type)
                                                                  : 0;
    unsigned char *b;
    glc_status st;
    if (!es || (count && !data) || count > (SIZE_MAX - 12) / es)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "glc_gguf_set_array(\"%s\"): element type %d (a fixed-size one), %llu "
                         "elements",
                         key ? key : "(null)", elem_type, (unsigned long long)count);
    if (!(b = glc__malloc(12 + (size_t)count * es)))
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    put_le(b, (uint64_t)elem_type, 4);
    put_le(b + 4, count, 8);
    if (count)
        memcpy(b + 12, data, (size_t)count * es);
    st = add_kv(w, "glc_gguf_set_array", key, 9, (uint32_t)elem_type, b, 12 + (size_t)count * es);
    glc__free(b);
    return st;
}

glc_status glc_gguf_set_string_array(glc_gguf_writer *w, const char *key,
                                     const char *const *strings, uint64_t count)
{
    size_t total = 12, at = 12;
    uint64_t i;
    unsigned char *b;
    glc_status st;
    for (i = 0; i < count; i++) {
        if (!strings || !strings[i])
            return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                             "glc_gguf_set_string_array(\"%s\"): string %llu is NULL",
                             key ? key : "(null)", (unsigned long long)i);
        total += 8 + strlen(strings[i]);
    }
    if (!(b = glc__malloc(total)))
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    put_le(b, 8, 4);
    put_le(b + 4, count, 8);
    for (i = 0; i < count; i++) {
        size_t n = strlen(strings[i]);
        put_le(b + at, n, 8);
        memcpy(b + at + 8, strings[i], n);
        at += 8 + n;
    }
    st = add_kv(w, "glc_gguf_set_string_array", key, 9, 8, b, total);
    glc__free(b);
    return st;
}

glc_status glc_gguf_add_tensor(glc_gguf_writer *w, const char *name, uint32_t ggml_type, int rank,
                               const int64_t *shape, const void *data, uint64_t bytes)
{
    static const char fn[] = "glc_gguf_add_tensor";
    uint32_t be, bb;
    uint64_t numel = 1;
    int64_t i;
    int d;
    wtensor *t;
    if (!w || !name || !name[0] || !shape || rank < 1 || rank > 4 || (bytes && !data))
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "%s: invalid argument", fn);
    for (i = 0; i < w->nt; i++)
        if (strcmp(w->t[i].name, name) == 0)
            return glc__fail(NULL, GLC_ERR_INVALID_ARG, "%s(\"%s\"): the name is taken", fn,
                             name);
    ggml_block(ggml_type, &be, &bb);
    for (d = 0; d < rank; d++) {
        if (shape[d] < 1 || (uint64_t)shape[d] > ((uint64_t)1 << 62) / numel)
            return glc__fail(NULL, GLC_ERR_INVALID_ARG, "%s(\"%s\"): dim %d is %lld", fn, name,
                             d, (long long)shape[d]);
        numel *= (uint64_t)shape[d];
    }
    if (!be || shape[rank - 1] % be || numel / be * bb != bytes)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG,
                         "%s(\"%s\"): GGML type %u, %llu elements, %llu bytes given: %s", fn, name,
                         ggml_type, (unsigned long long)numel, (unsigned long long)bytes,
                         !be ? "a type this writer does not know the size of"
                         : shape[rank - 1] % be ? "rows not a whole number of blocks"
                                                : "not the bytes that many elements take");
    if (w->nt == w->tcap) {
        int64_t cap = w->tcap ? 2 * w->tcap : 16;
        wtensor *n = glc__realloc(w->t, (size_t)cap * sizeof *n);
        if (!n)
            return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
        w->t = n;
        w->tcap = cap;
    }
    t = &w->t[w->nt];
    if (!(t->name = dup_str(name)))
        return glc__fail(NULL, GLC_ERR_OUT_OF_MEMORY, "gguf: out of memory");
    t->ggml_type = ggml_type;
    t->rank = rank;
    memcpy(t->shape, shape, (size_t)rank * sizeof *shape);
    t->data = data;
    t->bytes = bytes;
    w->nt++;
    return GLC_OK;
}

static int out_bytes(FILE *o, const void *p, size_t n) { return fwrite(p, 1, n, o) == n; }

static int out_le(FILE *o, uint64_t v, int n)
{
    unsigned char b[8];
    put_le(b, v, n);
    return out_bytes(o, b, (size_t)n);
}

static int out_pad(FILE *o, uint64_t *at, uint32_t align)
{
    static const unsigned char zeros[64];
    while (*at % align) {
        size_t n = (size_t)(align - *at % align);
        n = n < sizeof zeros ? n : sizeof zeros;
        if (!out_bytes(o, zeros, n))
            return 0;
        *at += n;
    }
    return 1;
}

glc_status glc_gguf_write(glc_gguf_writer *w, const char *path)
{
    FILE *o;
    uint64_t at = 24, off = 0;
    int64_t i;
    int d, ok;
    if (!w || !path)
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_gguf_write: invalid argument");
    if (!(o = fopen(path, "wb")))
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_gguf_write: cannot create %s", path);
    ok = out_bytes(o, "GGUF", 4) && out_le(o, 3, 4) && out_le(o, (uint64_t)w->nt, 8) &&
         out_le(o, (uint64_t)w->nkv, 8);
    for (i = 0; ok && i < w->nkv; i++) {
        size_t n = strlen(w->kv[i].key);
        ok = out_le(o, n, 8) && out_bytes(o, w->kv[i].key, n) && out_le(o, w->kv[i].type, 4) &&
             out_bytes(o, w->kv[i].val, w->kv[i].len);
        at += 8 + n + 4 + w->kv[i].len;
    }
    for (i = 0; ok && i < w->nt; i++) { /* offsets: each at a multiple of the alignment */
        wtensor *t = &w->t[i];
        size_t n = strlen(t->name);
        off = (off + w->alignment - 1) / w->alignment * w->alignment;
        ok = out_le(o, n, 8) && out_bytes(o, t->name, n) && out_le(o, (uint64_t)t->rank, 4);
        for (d = t->rank - 1; ok && d >= 0; d--) /* innermost first */
            ok = out_le(o, (uint64_t)t->shape[d], 8);
        ok = ok && out_le(o, t->ggml_type, 4) && out_le(o, off, 8);
        at += 8 + n + 4 + 8 * (uint64_t)t->rank + 4 + 8;
        t->offset = off;
        off += t->bytes;
    }
    ok = ok && out_pad(o, &at, w->alignment);
    for (i = 0, off = 0; ok && i < w->nt; i++) {
        const wtensor *t = &w->t[i];
        uint64_t pad = t->offset - off; /* up to the alignment */
        while (ok && pad) {
            static const unsigned char zeros[64];
            size_t n = pad < sizeof zeros ? (size_t)pad : sizeof zeros;
            ok = out_bytes(o, zeros, n);
            pad -= n;
        }
        ok = ok && out_bytes(o, t->data, (size_t)t->bytes);
        off = t->offset + t->bytes;
    }
    if (fclose(o) != 0)
        ok = 0;
    if (!ok) {
        remove(path);
        return glc__fail(NULL, GLC_ERR_INVALID_ARG, "glc_gguf_write: writing %s failed", path);
    }
    return GLC_OK;
}
