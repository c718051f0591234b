/*
 * The op test harness (see optest.h).
 */
#include "optest.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

uint16_t ot_f32_to_f16(float f)
{
    uint32_t x;
    uint32_t sign, exp, mant;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    exp = (x >> 23) & 0xffu;
    mant = x & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    {
        int e = (int)exp - 127 + 15;
        if (e >= 31)
            return (uint16_t)(sign | 0x7c00u);
        if (e <= 0) { /* subnormal or zero */
            uint32_t m, shift, r;
            if (e < -10)
                return (uint16_t)sign;
            m = mant | 0x800000u;
            shift = (uint32_t)(14 - e);
            r = m >> shift;
            if ((m & ((1u << shift) - 1)) > (1u << (shift - 1)) ||
                ((m & ((1u << shift) - 1)) == (1u << (shift - 1)) && (r & 1u)))
                r++;
            return (uint16_t)(sign | r);
        }
        {
            uint32_t h = sign | ((uint32_t)e << 10) | (mant >> 13);
            uint32_t rest = mant & 0x1fffu;
            if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
                h++;
            return (uint16_t)h;
        }
    }
}

float ot_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    uint32_t x;
    float f;
    if (exp == 0) {
        f = ldexpf((float)mant, -24);
        return sign ? -f : f;
    }
    if (exp == 31)
        x = sign | 0x7f800000u | (mant << 13);
    else
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    memcpy(&f, &x, 4);
    return f;
}

uint16_t ot_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float ot_bf16_to_f32(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

void ot_round(glc_dtype dtype, float *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (dtype == GLC_DTYPE_F16)
            v[i] = ot_f16_to_f32(ot_f32_to_f16(v[i]));
        else if (dtype == GLC_DTYPE_BF16)
            v[i] = ot_bf16_to_f32(ot_f32_to_bf16(v[i]));
    }
}

void ot_to_bytes(glc_dtype dtype, const float *v, void *out, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (dtype == GLC_DTYPE_F32)
            ((float *)out)[i] = v[i];
        else
            ((uint16_t *)out)[i] =
                dtype == GLC_DTYPE_F16 ? ot_f32_to_f16(v[i]) : ot_f32_to_bf16(v[i]);
}

void ot_from_bytes(glc_dtype dtype, const void *in, float *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        v[i] = dtype == GLC_DTYPE_F32   ? ((const float *)in)[i]
               : dtype == GLC_DTYPE_F16 ? ot_f16_to_f32(((const uint16_t *)in)[i])
                                        : ot_bf16_to_f32(((const uint16_t *)in)[i]);
}

/* GLC_TEST_SEED=<n> (unset: 0): every stream of ot_rand, and so of every
 * generated shape and input of the tests, becomes another one, reproducible
 * by the same n (the suite runs with it unset). */
static uint64_t salt(void)
{
    static int read;
    static uint64_t v;
    if (!read) {
        const char *e = getenv("GLC_TEST_SEED");
        v = e && *e ? strtoull(e, NULL, 0) : 0;
        read = 1;
    }
    return v;
}

uint64_t ot_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull) ^ salt();
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void ot_fill(uint64_t *seed, float *v, size_t n, float lo, float hi)
{
    size_t i;
    for (i = 0; i < n; i++) {
        float u = (float)((ot_rand(seed) >> 40) + 1) / (float)(1ull << 24); /* (0, 1] */
        v[i] = lo + (hi - lo) * u;
        if (v[i] == 0.0f)
            v[i] = 1e-3f;
    }
}

int64_t ot_numel(int rank, const int64_t *shape)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

static size_t pad_for(glc_device *dev)
{
    glc_device_info in;
    glc_device_get_info(dev, &in);
    return in.limits.ssbo_offset_alignment < 64 ? 64 : in.limits.ssbo_offset_alignment;
}

ot_tensor ot_tensor_bytes(glc_device *dev, glc_dtype dtype, int rank, const int64_t *shape,
                          const void *bytes)
{
    ot_tensor t;
    int64_t total;
    unsigned char *host;
    memset(&t, 0, sizeof t);
    t.pad = pad_for(dev);
    t.view = glc_view_make(NULL, t.pad, dtype, rank, shape);
    t.bytes = glc_view_bytes(&t.view);
    assert_true(t.bytes > 0);
    total = (int64_t)(t.pad * 2 + ((t.bytes + 3) & ~(size_t)3));
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U8, 1, &total, &t.buf), GLC_OK);
    t.view.buffer = t.buf;
    host = malloc((size_t)total);
    memset(host, OT_SENTINEL, (size_t)total);
    if (bytes)
        memcpy(host + t.pad, bytes, t.bytes);
    assert_int_equal(glc_buffer_write(t.buf, 0, (size_t)total, host), GLC_OK);
    free(host);
    return t;
}

static void to_bytes(glc_dtype dtype, const float *v, size_t n, unsigned char *out)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (dtype == GLC_DTYPE_F32) {
            memcpy(out + 4 * i, &v[i], 4);
        } else if (dtype == GLC_DTYPE_F16 || dtype == GLC_DTYPE_BF16) {
            uint16_t h = dtype == GLC_DTYPE_F16 ? ot_f32_to_f16(v[i]) : ot_f32_to_bf16(v[i]);
            memcpy(out + 2 * i, &h, 2);
        } else if (dtype == GLC_DTYPE_I32) {
            int32_t x = (int32_t)v[i];
            memcpy(out + 4 * i, &x, 4);
        } else if (dtype == GLC_DTYPE_U32) {
            uint32_t x = (uint32_t)v[i];
            memcpy(out + 4 * i, &x, 4);
        } else {
            fail_msg("ot_tensor_new: dtype %s needs ot_tensor_bytes", glc_dtype_name(dtype));
        }
    }
}

static void from_bytes(glc_dtype dtype, const unsigned char *in, size_t n, float *v)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (dtype == GLC_DTYPE_F32) {
            memcpy(&v[i], in + 4 * i, 4);
        } else if (dtype == GLC_DTYPE_F16 || dtype == GLC_DTYPE_BF16) {
            uint16_t h;
            memcpy(&h, in + 2 * i, 2);
            v[i] = dtype == GLC_DTYPE_F16 ? ot_f16_to_f32(h) : ot_bf16_to_f32(h);
        } else if (dtype == GLC_DTYPE_I32) {
            int32_t x;
            memcpy(&x, in + 4 * i, 4);
            v[i] = (float)x;
        } else if (dtype == GLC_DTYPE_U32) {
            uint32_t x;
            memcpy(&x, in + 4 * i, 4);
            v[i] = (float)x;
        }
    }
}

ot_tensor ot_tensor_new(glc_device *dev, glc_dtype dtype, int rank, const int64_t *shape,
                        const float *values)
{
    size_t n = (size_t)ot_numel(rank, shape), es = glc_dtype_size(dtype);
    unsigned char *bytes;
    ot_tensor t;
    assert_true(es > 0);
    if (!values)
        return ot_tensor_bytes(dev, dtype, rank, shape, NULL);
    bytes = malloc(n * es);
    to_bytes(dtype, values, n, bytes);
    t = ot_tensor_bytes(dev, dtype, rank, shape, bytes);
    free(bytes);
    return t;
}

glc_view ot_none(void)
{
    glc_view v;
    memset(&v, 0, sizeof v);
    return v;
}

int ot_read_bytes(const ot_tensor *t, void *out)
{
    size_t total = glc_buffer_size(t->buf), i;
    unsigned char *host = malloc(total);
    int ok = 1;
    assert_int_equal(glc_buffer_read(t->buf, 0, total, host), GLC_OK);
    for (i = 0; i < total; i++) {
        if ((i < t->pad || i >= t->pad + t->bytes) && host[i] != OT_SENTINEL) {
            fprintf(stderr, "sentinel byte %ld (relative to the tensor) changed: 0x%02x\n",
                    (long)i - (long)t->pad, host[i]);
            ok = 0;
            break;
        }
    }
    memcpy(out, host + t->pad, t->bytes);
    free(host);
    return ok;
}

int ot_read(const ot_tensor *t, float *out)
{
    unsigned char *bytes = malloc(t->bytes);
    int ok = ot_read_bytes(t, bytes);
    from_bytes(t->view.dtype, bytes, (size_t)ot_numel(t->view.rank, t->view.shape), out);
    free(bytes);
    return ok;
}

void ot_free(ot_tensor *t)
{
    glc_buffer_destroy(t->buf);
    t->buf = NULL;
}

double ot_nmse(const float *got, const float *ref, size_t n)
{
    double err = 0, norm = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double d;
        if (!isfinite(got[i]) || !isfinite(ref[i]))
            return INFINITY;
        d = (double)got[i] - (double)ref[i];
        err += d * d;
        norm += (double)ref[i] * (double)ref[i];
    }
    return norm > 0 ? err / norm : err;
}

void ot_check(const char *what, const float *got, const float *ref, size_t n, double limit)
{
    double e = ot_nmse(got, ref, n);
    if (!(e <= limit)) {
        size_t i, shown = 0;
        for (i = 0; i < n && shown < 5; i++)
            if (got[i] != ref[i] || !isfinite(got[i])) {
                fprintf(stderr, "  [%zu] got %.9g ref %.9g\n", i, (double)got[i], (double)ref[i]);
                shown++;
            }
        fail_msg("%s: NMSE %.3g > %.3g", what, e, limit);
    }
}
