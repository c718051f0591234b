/*
 * Kernels and dispatch on llvmpipe: the built-in fill kernel over odd sizes
 * and local sizes with sentinels, grids past 65535 groups (2-D and, with
 * narrowed limits, 3-D folding), user GLSL, compile errors with the info
 * log, dispatch validation, texel bindings (buffer textures), and the
 * on-disk program cache surviving corrupt entries.
 */
#include "testutil.h"

#include "device.h"
#include "progcache.h"

#include <dirent.h>
#include <unistd.h>

#define SENTINEL 0xDEADBEEFu

/* Fills n u32 at element offset `at` of a buffer of n + at + 16 elements
 * prefilled with SENTINEL; checks values and that nothing else changed. */
static void fill_and_check(glc_device *dev, uint32_t n, uint32_t at, uint32_t local)
{
    int64_t total = (int64_t)n + at + 16;
    uint32_t *host = malloc((size_t)total * 4);
    glc_buffer *b;
    int64_t i;
    for (i = 0; i < total; i++)
        host[i] = SENTINEL;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &total, &b), GLC_OK);
    assert_int_equal(glc_buffer_write(b, 0, (size_t)total * 4, host), GLC_OK);
    assert_int_equal(tu_fill(dev, b, (size_t)at * 4, n, 7, 3, local), GLC_OK);
    memset(host, 0, (size_t)total * 4);
    assert_int_equal(glc_buffer_read(b, 0, (size_t)total * 4, host), GLC_OK);
    for (i = 0; i < total; i++) {
        uint32_t want = i >= at && i < (int64_t)at + n ? 7u + 3u * (uint32_t)(i - at) : SENTINEL;
        if (host[i] != want)
            fail_msg("n=%u at=%u local=%u: element %lld is %u, want %u", n, at, local,
                     (long long)i, host[i], want);
    }
    glc_buffer_destroy(b);
    free(host);
}

static void test_fill_odd_sizes(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_device_info in;
    static const uint32_t sizes[] = {1, 2, 3, 31, 63, 64, 65, 127, 1009, 4099};
    static const uint32_t locals[] = {1, 7, 64, 128};
    size_t i, j;
    (void)state;
    glc_device_get_info(dev, &in);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (j = 0; j < sizeof locals / sizeof locals[0]; j++)
            fill_and_check(dev, sizes[i], in.limits.ssbo_offset_alignment / 4 * (uint32_t)j,
                           locals[j]);
    glc_device_destroy(dev);
}

static void test_grid_beyond_65535(void **state)
{
    glc_device_desc d = tu_desc(NULL);
    glc_device *dev;
    (void)state;
    setenv("GLC_LIMITS", "min", 1); /* the portable path: 65535 groups per dim */
    dev = tu_device_desc(&d);
    unsetenv("GLC_LIMITS");
    fill_and_check(dev, 200003, 0, 1);      /* 200003 groups: a 2-D grid */
    fill_and_check(dev, 65535 * 2 + 1, 64, 2); /* 65536 groups */
    /* 3-D folding, made reachable by narrowing the limits: 16 x 16 x 4 */
    dev->info.limits.max_group_count[0] = 16;
    dev->info.limits.max_group_count[1] = 16;
    dev->info.limits.max_group_count[2] = 16;
    fill_and_check(dev, 1000, 0, 1);
    fill_and_check(dev, 4096, 0, 1);
    glc_device_destroy(dev);
}

static const char *user_src =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(std430, binding = 0) buffer B { float v[]; };\n"
    "void main() {\n"
    "    uint i = glc_global_index();\n"
    "    if (glc_group_out_of_range() || i >= glc_p[0]) return;\n"
    "    v[i] = v[i] * glc_pf(1) + float(i);\n"
    "}\n";

static void test_user_kernel(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_kernel_desc kd;
    glc_kernel *k;
    glc_session *s;
    glc_buffer *b;
    int64_t n = 1001;
    float v[1001];
    glc_binding bind = {NULL, 0, 0, GLC_READ_WRITE, GLC_BIND_STORAGE};
    glc_dispatch_desc dd;
    uint32_t params[2];
    float scale = 2.5f;
    int i;
    (void)state;
    memset(&kd, 0, sizeof kd);
    kd.name = "axpi";
    kd.source = user_src;
    kd.local_size_x = 32;
    assert_int_equal(glc_kernel_create(dev, &kd, &k), GLC_OK);
    for (i = 0; i < n; i++)
        v[i] = (float)i * 0.5f - 3.0f;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &b), GLC_OK);
    assert_int_equal(glc_buffer_write(b, 0, sizeof v, v), GLC_OK);
    bind.buffer = b;
    params[0] = (uint32_t)n;
    memcpy(&params[1], &scale, 4);
    memset(&dd, 0, sizeof dd);
    dd.kernel = k;
    dd.groups = (uint64_t)(n + 31) / 32;
    dd.bindings = &bind;
    dd.binding_count = 1;
    dd.params = params;
    dd.param_count = 2;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_RECORDED, &s), GLC_OK);
    assert_int_equal(glc_session_dispatch(s, &dd), GLC_OK); /* twice: RAW on the same bytes */
    assert_int_equal(glc_session_dispatch(s, &dd), GLC_OK);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    {
        float got[1001];
        assert_int_equal(glc_buffer_read(b, 0, sizeof got, got), GLC_OK);
        for (i = 0; i < n; i++) {
            float once = v[i] * scale + (float)i, want = once * scale + (float)i;
            assert_true(got[i] == want);
        }
    }
    glc_buffer_destroy(b);
    glc_kernel_destroy(k);
    glc_device_destroy(dev);
}

static const char *texel_src =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(binding = 0) uniform highp samplerBuffer t0;\n"
    "layout(binding = 1) uniform highp samplerBuffer t1;\n"
    "layout(std430, binding = 0) writeonly buffer O { vec4 o[]; };\n"
    "void main() {\n"
    "    uint i = glc_global_index();\n"
    "    if (glc_group_out_of_range() || i >= glc_p[0]) return;\n"
    "    o[i] = texelFetch(t0, int(i)) * 2.0 + texelFetch(t1, int(i));\n"
    "}\n";

/* o = 2 t0 + t1 (vec4s), t0 and t1 texel bindings of [off, off + 16 n) of
 * a and of b (whole), after the user kernel made a what it reads (RAW
 * through a texel binding); checked against the host's arithmetic. */
static void texel_run(glc_device *dev, glc_kernel *tk, glc_kernel *uk, glc_buffer *a,
                      size_t off, glc_buffer *b, glc_buffer *o, uint32_t n)
{
    glc_binding bt[3] = {{NULL, 0, 0, GLC_READ, GLC_BIND_TEXEL},
                         {NULL, 0, 0, GLC_READ, GLC_BIND_TEXEL},
                         {NULL, 0, 0, GLC_WRITE, GLC_BIND_STORAGE}};
    glc_binding bu = {NULL, 0, 0, GLC_READ_WRITE, GLC_BIND_STORAGE};
    glc_dispatch_desc dd;
    glc_session *s;
    uint32_t pu[2], total = (uint32_t)(glc_buffer_size(a) / 4), i;
    float scale = 0.5f, *ha = malloc((size_t)total * 4), *hb = malloc((size_t)n * 16),
          *got = malloc((size_t)n * 16);
    assert_int_equal(glc_buffer_read(a, 0, (size_t)total * 4, ha), GLC_OK);
    assert_int_equal(glc_buffer_read(b, 0, (size_t)n * 16, hb), GLC_OK);
    bu.buffer = a;
    pu[0] = total;
    memcpy(&pu[1], &scale, 4);
    memset(&dd, 0, sizeof dd);
    dd.kernel = uk, dd.groups = (total + 31) / 32, dd.bindings = &bu, dd.binding_count = 1;
    dd.params = pu, dd.param_count = 2;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    assert_int_equal(glc_session_dispatch(s, &dd), GLC_OK);
    bt[0].buffer = a, bt[0].offset = off, bt[0].size = (size_t)n * 16;
    bt[1].buffer = b, bt[2].buffer = o;
    dd.kernel = tk, dd.groups = (n + 31) / 32, dd.bindings = bt, dd.binding_count = 3;
    dd.params = &n, dd.param_count = 1;
    assert_int_equal(glc_session_dispatch(s, &dd), GLC_OK);
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    assert_int_equal(glc_buffer_read(o, 0, (size_t)n * 16, got), GLC_OK);
    for (i = 0; i < 4 * n; i++) {
        uint32_t j = (uint32_t)(off / 4) + i;
        float want = (ha[j] * scale + (float)j) * 2.0f + hb[i];
        if (got[i] != want)
            fail_msg("texel read %u: %g, want %g", i, (double)got[i], (double)want);
    }
    free(ha), free(hb), free(got);
}

static glc_buffer *f32_buffer(glc_device *dev, int64_t n, float base)
{
    glc_buffer *b;
    float *h = malloc((size_t)n * 4);
    int64_t i;
    for (i = 0; i < n; i++)
        h[i] = base + (float)(i % 97) * 0.25f;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &b), GLC_OK);
    assert_int_equal(glc_buffer_write(b, 0, (size_t)n * 4, h), GLC_OK);
    free(h);
    return b;
}

/* The refusals of a texel binding (b[0], of the dispatch dd, whose last
 * binding is its written output): writable, part of a texel, a kind that
 * is none; then 5 texel bindings, the first `of_texel` of them TEXEL and
 * the rest TEXEL_UINT: more than the units. dd is as it was after. */
static void texel_refusals(glc_device *dev, glc_dispatch_desc *dd, glc_binding *b, int of_texel)
{
    glc_binding keep = b[0], many[6];
    glc_session *s;
    int u;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    b[0].access = GLC_READ_WRITE;
    assert_int_equal(glc_session_dispatch(s, dd), GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(glc_device_errmsg(dev), "texel binding is read only"));
    b[0] = keep, b[0].size = 20;
    assert_int_equal(glc_session_dispatch(s, dd), GLC_ERR_BOUNDS);
    assert_non_null(strstr(glc_device_errmsg(dev), "whole 16-byte texels"));
    b[0] = keep, b[0].kind = (glc_binding_kind)4;
    assert_int_equal(glc_session_dispatch(s, dd), GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(glc_device_errmsg(dev), "kind is not"));
    b[0] = keep;
    for (u = 0; u < 5; u++) {
        many[u] = keep;
        many[u].kind = u < of_texel ? GLC_BIND_TEXEL : GLC_BIND_TEXEL_UINT;
    }
    many[5] = dd->bindings[dd->binding_count - 1];
    {
        const glc_binding *was = dd->bindings;
        int count = dd->binding_count;
        dd->bindings = many, dd->binding_count = 6;
        assert_int_equal(glc_session_dispatch(s, dd), GLC_ERR_BOUNDS);
        assert_non_null(strstr(glc_device_errmsg(dev), "5 texel bindings (at most 4)"));
        dd->bindings = was, dd->binding_count = count;
    }
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
}

/* GLC_BIND_TEXEL: user GLSL reading buffer textures (two units, a range at
 * an offset) equal to the host's sums; a buffer destroyed takes the
 * texture that showed it along, and another made (GL may give it the same
 * name) reads as the new one; the refusals: a writable texel binding, a
 * range of part of a texel, more texel bindings than texture units, a
 * device without buffer textures (GLC_LIMITS=min). */
static void test_texel_bindings(void **state)
{
    glc_device *dev = tu_device(NULL), *min_dev;
    glc_device_desc md = tu_desc(NULL);
    glc_device_info in;
    glc_kernel_desc kd;
    glc_kernel *tk, *uk, *mk;
    glc_buffer *a, *b, *o, *c;
    glc_binding bt[3] = {{NULL, 0, 0, GLC_READ, GLC_BIND_TEXEL},
                         {NULL, 0, 0, GLC_READ, GLC_BIND_TEXEL},
                         {NULL, 0, 0, GLC_WRITE, GLC_BIND_STORAGE}};
    glc_dispatch_desc dd;
    glc_session *s;
    uint32_t n = 1000, off;
    (void)state;
    glc_device_get_info(dev, &in);
    if (!in.features.texel_buffers) {
        glc_device_destroy(dev);
        skip();
    }
    memset(&kd, 0, sizeof kd);
    kd.name = "texel", kd.source = texel_src, kd.local_size_x = 32;
    kd.defines = "#define GLC_TEXEL 1"; /* (the prelude enables buffer textures) */
    assert_int_equal(glc_kernel_create(dev, &kd, &tk), GLC_OK);
    kd.name = "axpi", kd.source = user_src, kd.defines = NULL;
    assert_int_equal(glc_kernel_create(dev, &kd, &uk), GLC_OK);
    off = in.limits.ssbo_offset_alignment * 3;
    a = f32_buffer(dev, 4 * n + off / 4 + 8, 1.0f);
    b = f32_buffer(dev, 4 * n, -2.0f);
    o = f32_buffer(dev, 4 * n, 0.0f);
    texel_run(dev, tk, uk, a, off, b, o, n);
    texel_run(dev, tk, uk, a, 0, b, o, n); /* the same unit, another range */
    assert_true(dev->texel_tex[0] != 0 && dev->texel_tex[1] != 0);
    glc_buffer_destroy(a);
    /* the texture that showed a is gone with it (it would keep a's storage
     * alive); the one that shows b stays */
    assert_true(dev->texel_tex[0] == 0 && dev->texel_tex[1] != 0);
    c = f32_buffer(dev, 4 * n + 8, 5.0f);
    texel_run(dev, tk, uk, c, 0, b, o, n);

    memset(&dd, 0, sizeof dd);
    bt[0].buffer = c, bt[1].buffer = b, bt[2].buffer = o;
    dd.kernel = tk, dd.groups = 1, dd.bindings = bt, dd.binding_count = 3;
    dd.params = &n, dd.param_count = 1;
    texel_refusals(dev, &dd, bt, 5); /* more texel bindings than units: all TEXEL */

    md.flags |= GLC_DEVICE_LIMITS_MIN;
    min_dev = tu_device_desc(&md);
    glc_device_get_info(min_dev, &in);
    assert_int_equal(in.features.texel_buffers, 0);
    assert_int_equal(in.limits.max_texel_buffer_size, 0);
    kd.name = "plain", kd.source = user_src;
    assert_int_equal(glc_kernel_create(min_dev, &kd, &mk), GLC_OK);
    {
        glc_buffer *m = f32_buffer(min_dev, 64, 0.0f);
        glc_binding bm = {NULL, 0, 0, GLC_READ, GLC_BIND_TEXEL};
        bm.buffer = m;
        dd.kernel = mk, dd.bindings = &bm, dd.binding_count = 1;
        assert_int_equal(glc_session_begin(min_dev, GLC_SESSION_DIRECT, &s), GLC_OK);
        assert_int_equal(glc_session_dispatch(s, &dd), GLC_ERR_INVALID_ARG);
        assert_non_null(strstr(glc_device_errmsg(min_dev), "no buffer textures"));
        assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
        glc_buffer_destroy(m);
    }
    glc_kernel_destroy(mk);
    glc_device_destroy(min_dev);
    glc_buffer_destroy(b);
    glc_buffer_destroy(c);
    glc_buffer_destroy(o);
    glc_kernel_destroy(tk);
    glc_kernel_destroy(uk);
    glc_device_destroy(dev);
}

/* GLC_BIND_TEXEL_UINT: user GLSL reading the raw words of a buffer as
 * RGBA32UI texels beside RGBA32F ones (the kinds share the units in
 * binding order), words a float fetch may not keep (NaN payloads,
 * denormals) included; then the same range on the same unit as floats and
 * as words in turn (that the unit's texture takes each format shows in
 * test_fake's recorded calls: llvmpipe reads either format's bits alike);
 * the refusals as TEXEL's. */
static const char texel_uint_src[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(binding = 0) uniform highp usamplerBuffer tu;\n"
    "layout(binding = 1) uniform highp samplerBuffer tf;\n"
    "layout(std430, binding = 0) writeonly buffer O { uvec4 o[]; };\n"
    "void main() { uint i = gl_GlobalInvocationID.x; if (i < glc_p[0])\n"
    "  o[i] = texelFetch(tu, int(i)) ^ floatBitsToUint(texelFetch(tf, int(i))); }\n";
static const char texel_float_src[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(binding = 0) uniform highp samplerBuffer tf;\n"
    "layout(std430, binding = 0) writeonly buffer O { vec4 o[]; };\n"
    "void main() { uint i = gl_GlobalInvocationID.x; if (i < glc_p[0])\n"
    "  o[i] = texelFetch(tf, int(i)) * 2.0; }\n";

static void test_texel_uint_bindings(void **state)
{
    enum { N = 300 };
    glc_device *dev = tu_device(NULL);
    glc_device_info in;
    glc_kernel_desc kd;
    glc_kernel *ku, *kf;
    glc_buffer *w, *f, *o;
    glc_binding bu[3] = {{NULL, 0, 0, GLC_READ, GLC_BIND_TEXEL_UINT},
                         {NULL, 0, 0, GLC_READ, GLC_BIND_TEXEL},
                         {NULL, 0, 0, GLC_WRITE, GLC_BIND_STORAGE}};
    glc_binding bf[2] = {{NULL, 0, 0, GLC_READ, GLC_BIND_TEXEL},
                         {NULL, 0, 0, GLC_WRITE, GLC_BIND_STORAGE}};
    glc_dispatch_desc dd;
    glc_session *s;
    int64_t words = 4 * N;
    uint32_t *hw = malloc(N * 16), *got = malloc(N * 16), n = N, i, round;
    float *hf = malloc(N * 16), *gotf = malloc(N * 16);
    (void)state;
    glc_device_get_info(dev, &in);
    if (!in.features.texel_buffers) {
        free(hw), free(got), free(hf), free(gotf);
        glc_device_destroy(dev);
        skip();
    }
    for (i = 0; i < 4 * N; i++) {
        static const uint32_t odd[4] = {0x7fc00001u, 0x00000001u, 0xffffffffu, 0x7f800001u};
        hw[i] = i % 5 == 0 ? odd[(i / 5) % 4] : (uint32_t)(i * 2654435761u);
        hf[i] = (float)(i % 37) - 18.5f;
    }
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &words, &w), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &words, &f), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &words, &o), GLC_OK);
    assert_int_equal(glc_buffer_write(w, 0, N * 16, hw), GLC_OK);
    assert_int_equal(glc_buffer_write(f, 0, N * 16, hf), GLC_OK);
    memset(&kd, 0, sizeof kd);
    kd.name = "texel_uint", kd.source = texel_uint_src, kd.local_size_x = 32;
    kd.defines = "#define GLC_TEXEL 1";
    assert_int_equal(glc_kernel_create(dev, &kd, &ku), GLC_OK);
    kd.name = "texel_float", kd.source = texel_float_src;
    assert_int_equal(glc_kernel_create(dev, &kd, &kf), GLC_OK);
    memset(&dd, 0, sizeof dd);
    dd.groups = (N + 31) / 32, dd.params = &n, dd.param_count = 1;
    for (round = 0; round < 2; round++) {
        /* unit 0: f's range as floats, then as words, then w's words */
        bf[0].buffer = f, bf[1].buffer = o;
        dd.kernel = kf, dd.bindings = bf, dd.binding_count = 2;
        assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
        assert_int_equal(glc_session_dispatch(s, &dd), GLC_OK);
        assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
        assert_int_equal(glc_buffer_read(o, 0, N * 16, gotf), GLC_OK);
        for (i = 0; i < 4 * N; i++)
            if (gotf[i] != 2.0f * hf[i])
                fail_msg("round %u: float texel %u: %g, want %g", round, i, (double)gotf[i],
                         (double)(2.0f * hf[i]));
        bu[0].buffer = round ? w : f, bu[1].buffer = f, bu[2].buffer = o;
        dd.kernel = ku, dd.bindings = bu, dd.binding_count = 3;
        assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
        assert_int_equal(glc_session_dispatch(s, &dd), GLC_OK);
        assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
        assert_int_equal(glc_buffer_read(o, 0, N * 16, got), GLC_OK);
        for (i = 0; i < 4 * N; i++) {
            uint32_t fb, want;
            memcpy(&fb, &hf[i], 4);
            want = (round ? hw[i] : fb) ^ fb;
            if (got[i] != want)
                fail_msg("round %u: word %u: %08x, want %08x", round, i, got[i], want);
        }
    }
    /* the refusals, as TEXEL's; the two kinds count together against the units */
    texel_refusals(dev, &dd, bu, 3);
    glc_kernel_destroy(ku);
    glc_kernel_destroy(kf);
    glc_buffer_destroy(w);
    glc_buffer_destroy(f);
    glc_buffer_destroy(o);
    free(hw), free(got), free(hf), free(gotf);
    glc_device_destroy(dev);
}

static void test_compile_errors(void **state)
{
    tu_log log;
    glc_device *dev = tu_device(&log);
    glc_kernel_desc kd;
    glc_kernel *k = NULL;
    (void)state;
    memset(&kd, 0, sizeof kd);
    kd.name = "broken";
    kd.source = "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\nvoid main() { undeclared_x = 1; }\n";
    assert_int_equal(glc_kernel_create(dev, &kd, &k), GLC_ERR_COMPILE);
    assert_null(k);
    tu_assert_contains(glc_device_errmsg(dev), "kernel broken: compile failed: ");
    tu_assert_contains(glc_device_errmsg(dev), "undeclared_x");
    assert_int_equal(log.last_status, GLC_ERR_COMPILE);

    kd.source = user_src;
    kd.local_size_x = 4096;
    assert_int_equal(glc_kernel_create(dev, &kd, &k), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "kernel broken: local size 4096 exceeds");
    assert_int_equal(glc__kernel_get(dev, "nonesuch", NULL, 0, &k), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "no built-in kernel named \"nonesuch\"");
    assert_int_equal(glc__kernel_get(dev, "common", NULL, 0, &k), GLC_ERR_INVALID_ARG);
    assert_null(k);
    glc_device_destroy(dev);
}

static void test_dispatch_validation(void **state)
{
    glc_device_desc desc = tu_desc(NULL);
    glc_device *dev;
    glc_kernel *k;
    glc_session *s;
    glc_buffer *b;
    int64_t n = 1024;
    uint32_t before[1024], after[1024], params[3] = {1024, 5, 0};
    glc_binding bind[5];
    glc_dispatch_desc d;
    int i;
    (void)state;
    desc.flags = GLC_DEVICE_LIMITS_MIN; /* 4 SSBO blocks, 256-byte alignment */
    dev = tu_device_desc(&desc);
    assert_int_equal(glc__kernel_get(dev, "fill", NULL, 64, &k), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b), GLC_OK);
    for (i = 0; i < 1024; i++)
        before[i] = (uint32_t)i;
    assert_int_equal(glc_buffer_write(b, 0, sizeof before, before), GLC_OK);
    for (i = 0; i < 5; i++) {
        bind[i].buffer = b;
        bind[i].offset = 0;
        bind[i].size = 0;
        bind[i].access = GLC_WRITE;
        bind[i].kind = GLC_BIND_STORAGE;
    }
    memset(&d, 0, sizeof d);
    d.kernel = k;
    d.groups = 16;
    d.bindings = bind;
    d.binding_count = 1;
    d.params = params;
    d.param_count = 3;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);

    bind[0].offset = 4000;
    bind[0].size = 100;
    assert_int_equal(glc_session_dispatch(s, &d), GLC_ERR_BOUNDS);
    assert_string_equal(glc_device_errmsg(dev), "glc_session_dispatch(fill): binding 0: bytes "
                                                "[4000, +100) outside the buffer's 4096 bytes");
    bind[0].offset = 128;
    bind[0].size = 0;
    assert_int_equal(glc_session_dispatch(s, &d), GLC_ERR_BOUNDS);
    assert_string_equal(glc_device_errmsg(dev),
                        "glc_session_dispatch(fill): binding 0: offset 128 is not a multiple of "
                        "the device's SSBO offset alignment 256");
    bind[0].offset = 0;
    d.binding_count = 5;
    assert_int_equal(glc_session_dispatch(s, &d), GLC_ERR_BOUNDS);
    assert_string_equal(glc_device_errmsg(dev),
                        "glc_session_dispatch(fill): 5 bindings, the device allows 4 SSBO "
                        "blocks per compute shader");
    d.binding_count = 1;
    d.groups = 0;
    assert_int_equal(glc_session_dispatch(s, &d), GLC_ERR_BOUNDS);
    d.groups = 16;
    bind[0].access = (glc_access)0;
    assert_int_equal(glc_session_dispatch(s, &d), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "access is not READ/WRITE/READ_WRITE");
    bind[0].access = GLC_WRITE;
    d.param_count = 17;
    assert_int_equal(glc_session_dispatch(s, &d), GLC_ERR_INVALID_ARG);
    d.param_count = 3;
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    /* nothing was dispatched */
    assert_int_equal(glc_buffer_read(b, 0, sizeof after, after), GLC_OK);
    assert_memory_equal(before, after, sizeof before);
    glc_buffer_destroy(b);
    glc_device_destroy(dev);
}

static void cache_device(const char *dir, tu_log *log, glc_device **dev)
{
    glc_device_desc d = tu_desc(log);
    d.shader_cache_dir = dir;
    *dev = tu_device_desc(&d);
}

static int find_entry(const char *dir, char *path, size_t len)
{
    DIR *dd = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (dd && (e = readdir(dd)) != NULL) {
        if (strncmp(e->d_name, "glc-", 4) == 0 && strstr(e->d_name, ".bin")) {
            snprintf(path, len, "%s/%s", dir, e->d_name);
            found++;
        }
    }
    if (dd)
        closedir(dd);
    return found;
}

static void corrupt_byte(const char *path, long at)
{
    FILE *f = fopen(path, "r+b");
    int c;
    assert_non_null(f);
    fseek(f, at, SEEK_SET);
    c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x5A, f);
    fclose(f);
}

/* Replaces the blob with garbage of the same length and a matching
 * checksum: only the driver can reject it now. */
static void garbage_with_valid_checksum(const char *path)
{
    FILE *f = fopen(path, "r+b");
    unsigned char hdr[48];
    uint64_t len, sum;
    unsigned char *blob;
    size_t i;
    assert_non_null(f);
    assert_int_equal(fread(hdr, 1, 48, f), 48);
    memcpy(&len, hdr + 32, 8);
    blob = malloc((size_t)len);
    for (i = 0; i < len; i++)
        blob[i] = (unsigned char)(i * 131 + 7);
    sum = glc__fnv1a(GLC__FNV_SEED, blob, (size_t)len);
    memcpy(hdr + 40, &sum, 8);
    fseek(f, 0, SEEK_SET);
    fwrite(hdr, 1, 48, f);
    fwrite(blob, 1, (size_t)len, f);
    fclose(f);
    free(blob);
}

static void test_program_cache(void **state)
{
    char dir[] = "/tmp/glc-cache-XXXXXX", path[512];
    tu_log log;
    glc_device *dev;
    glc_device_info in;
    (void)state;
    assert_non_null(mkdtemp(dir));
    cache_device(dir, &log, &dev);
    glc_device_get_info(dev, &in);
    if (in.features.program_binary_formats == 0) {
        glc_device_destroy(dev);
        rmdir(dir);
        skip(); /* the driver offers no binaries: the cache is off */
    }
    fill_and_check(dev, 100, 0, 64);
    glc_device_destroy(dev);
    assert_int_equal(find_entry(dir, path, sizeof path), 1);

    cache_device(dir, &log, &dev); /* a fresh device: loads the binary */
    fill_and_check(dev, 101, 0, 64);
    tu_assert_contains(log.all, "kernel fill: loaded from the program cache");
    glc_device_destroy(dev);

    corrupt_byte(path, 100); /* inside the blob: our checksum catches it */
    cache_device(dir, &log, &dev);
    fill_and_check(dev, 102, 0, 64);
    tu_assert_contains(log.all, "checksum mismatch (corrupt entry)");
    glc_device_destroy(dev);

    cache_device(dir, &log, &dev); /* rewritten by the compile above */
    fill_and_check(dev, 103, 0, 64);
    tu_assert_contains(log.all, "kernel fill: loaded from the program cache");
    glc_device_destroy(dev);

    garbage_with_valid_checksum(path); /* only the driver can tell */
    cache_device(dir, &log, &dev);
    fill_and_check(dev, 104, 0, 64);
    tu_assert_contains(log.all, "kernel fill: the driver rejected its cached binary; compiling");
    glc_device_destroy(dev);

    corrupt_byte(path, 0); /* the header's magic */
    cache_device(dir, &log, &dev);
    fill_and_check(dev, 105, 0, 64);
    tu_assert_contains(log.all, "bad header");
    glc_device_destroy(dev);

    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_odd_sizes),
        cmocka_unit_test(test_grid_beyond_65535),
        cmocka_unit_test(test_user_kernel),
        cmocka_unit_test(test_texel_bindings),
        cmocka_unit_test(test_texel_uint_bindings),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_dispatch_validation),
        cmocka_unit_test(test_program_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
