/*
 * Device layer: status table, selection rules (GL-free), grid folding, and
 * device creation on llvmpipe through each platform, with the exact
 * statuses and messages for bad input and missing EGL.
 */
#include "testutil.h"

#include "ref_quant.h"

#include "convert.h"
#include "device.h"
#include "env.h"
#include "grid.h"
#include "select.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_status_table(void **state)
{
    (void)state;
    assert_string_equal(glc_status_str(GLC_OK), "success");
    assert_string_equal(glc_status_str(GLC_ERR_NO_DEVICE), "no usable EGL display or device");
    assert_string_equal(glc_status_str((glc_status)-999), "unknown status");
    assert_string_equal(glc_status_str((glc_status)5), "unknown status");
    assert_int_equal(glc_dtype_size(GLC_DTYPE_F16), 2);
    assert_int_equal(glc_dtype_size((glc_dtype)99), 0);
    assert_string_equal(glc_dtype_name(GLC_DTYPE_BF16), "bf16");
    assert_int_equal(glc_dtype_ggml_type(GLC_DTYPE_Q4_0), 2);
    assert_int_equal(glc_dtype_ggml_type(GLC_DTYPE_U8), -1);
    assert_int_equal(glc_dtype_ggml_type((glc_dtype)99), -1);
    assert_int_equal(glc_dtype_from_ggml_type(8), GLC_DTYPE_Q8_0);
    assert_int_equal(glc_dtype_from_ggml_type(30), GLC_DTYPE_BF16);
    assert_int_equal(glc_dtype_from_ggml_type(12), GLC_DTYPE_Q4_K);
    assert_int_equal(glc_dtype_from_ggml_type(14), GLC_DTYPE_Q6_K);
    assert_int_equal(glc_dtype_from_ggml_type(7), GLC_DTYPE_Q5_1);
    assert_int_equal(glc_dtype_from_ggml_type(10), 0); /* Q2_K: not computed with */
    assert_string_equal(glc_dtype_name(GLC_DTYPE_Q5_K), "q5_K");
    assert_int_equal(glc_dtype_row_bytes(GLC_DTYPE_Q4_K, 512), 288);
    assert_int_equal(glc_dtype_row_bytes(GLC_DTYPE_Q6_K, 2816), 11 * 210);
    assert_int_equal(glc_dtype_row_bytes(GLC_DTYPE_Q5_K, 256), 176);
    assert_int_equal(glc_dtype_row_bytes(GLC_DTYPE_Q6_K, 32), 0); /* not whole blocks */
    assert_int_equal(glc_dtype_row_bytes(GLC_DTYPE_Q4_1, 64), 40);
    assert_int_equal(glc_dtype_row_bytes(GLC_DTYPE_Q5_0, 32), 22);
    assert_int_equal(glc_dtype_row_bytes(GLC_DTYPE_Q5_1, 96), 72);
    assert_int_equal(glc_dtype_size(GLC_DTYPE_Q4_K), 0);
    assert_int_equal(glc_dtype_from_ggml_type(0xffffffffu), 0);
    assert_string_equal(glc_gguf_type_name(12), "q4_K");
    assert_string_equal(glc_gguf_type_name(20), "iq4_nl");
    assert_string_equal(glc_gguf_type_name(4), "?");
    assert_string_equal(glc_gguf_type_name(99), "?");
    {
        glc_dtype d;
        for (d = GLC_DTYPE_F32; d <= GLC_DTYPE_Q5_1; d++)
            if (glc_dtype_ggml_type(d) >= 0)
                assert_int_equal(glc_dtype_from_ggml_type((uint32_t)glc_dtype_ggml_type(d)), d);
    }
    assert_string_equal(glc_platform_name(GLC_PLATFORM_SURFACELESS), "surfaceless");
}

/* glc_dtype_to_f32 against the test references: random blocks (finite
 * scales), bit for bit; a partial block or NULL refused, dst untouched. */
static void test_dtype_to_f32(void **state)
{
    static const glc_dtype q[] = {GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_0};
    static const glc_dtype more[] = {GLC_DTYPE_Q4_K, GLC_DTYPE_Q5_K, GLC_DTYPE_Q6_K,
                                     GLC_DTYPE_Q4_1, GLC_DTYPE_Q5_0, GLC_DTYPE_Q5_1};
    enum { N = 32 * 37, NK = 256 * 5 };
    uint8_t bytes[N / 32 * 34], kbytes[NK / 256 * 210];
    float got[N], want[N], x[N], kgot[NK], kwant[NK];
    uint16_t h[3] = {0x3c00, 0xc500, 0x7bff}; /* 1, -5, 65504 as f16 */
    uint32_t s = 7;
    uint64_t seed = 3;
    size_t i, k;
    (void)state;
    for (k = 0; k < sizeof more / sizeof more[0]; k++) { /* random blocks, finite scales */
        size_t n = glc_dtype_row_bytes(more[k], 32) ? N : NK;
        float *g = n == N ? got : kgot, *w = n == N ? want : kwant;
        uint8_t *b = n == N ? bytes : kbytes;
        ref_random_blocks(more[k], n, &seed, b);
        assert_int_equal(glc_dtype_to_f32(more[k], b, (int64_t)n, g), GLC_OK);
        ref_dequantize(more[k], b, n, w);
        assert_memory_equal(g, w, n * 4);
        g[0] = 12345.0f;
        assert_int_equal(glc_dtype_to_f32(more[k], b, n == N ? 48 : 384, g), GLC_ERR_INVALID_ARG);
        assert_true(g[0] == 12345.0f);
    }
    for (k = 0; k < 2; k++) {
        size_t per = glc_dtype_row_bytes(q[k], 32);
        for (i = 0; i < sizeof bytes; i++)
            bytes[i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 16);
        for (i = 0; i < N / 32; i++)
            memcpy(bytes + i * per, &h[i % 3], 2);
        assert_int_equal(glc_dtype_to_f32(q[k], bytes, N, got), GLC_OK);
        (k ? ref_dequantize_q4_0 : ref_dequantize_q8_0)(bytes, N, want);
        assert_memory_equal(got, want, sizeof got);
        got[0] = 12345.0f;
        assert_int_equal(glc_dtype_to_f32(q[k], bytes, 31, got), GLC_ERR_INVALID_ARG);
        assert_true(got[0] == 12345.0f);
    }
    for (i = 0; i < N; i++)
        x[i] = (float)i * 0.25f - 8.0f;
    glc__convert_from_f32(GLC_DTYPE_BF16, x, bytes, 64);
    assert_int_equal(glc_dtype_to_f32(GLC_DTYPE_BF16, bytes, 64, got), GLC_OK);
    for (i = 0; i < 64; i++)
        assert_true(got[i] == x[i]); /* these are exact in bf16 */
    assert_int_equal(glc_dtype_to_f32(GLC_DTYPE_F32, NULL, 4, got), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_dtype_to_f32((glc_dtype)99, x, 4, got), GLC_ERR_INVALID_ARG);
}

/* glc_dtype_from_f32 for every block type: what it writes decodes (by the
 * independent test reference, tests/ref) close to what it was given, as
 * close as the levels allow; zeros and a constant block; refusals leave
 * dst untouched. */
static void test_dtype_from_f32(void **state)
{
    static const struct { glc_dtype dt; double bound; } t[] = {
        {GLC_DTYPE_Q8_0, 1e-4}, {GLC_DTYPE_Q6_K, 2e-3}, {GLC_DTYPE_Q5_0, 4e-3},
        {GLC_DTYPE_Q5_1, 4e-3}, {GLC_DTYPE_Q5_K, 6e-3}, {GLC_DTYPE_Q4_0, 2e-2},
        {GLC_DTYPE_Q4_1, 2e-2}, {GLC_DTYPE_Q4_K, 2.5e-2}};
    enum { N = 256 * 12 };
    static float x[N], y[N];
    static uint8_t q[N * 2];
    uint64_t seed = 5;
    size_t k, i;
    (void)state;
    for (i = 0; i < N; i++) { /* blocks of different scales and offsets; a zero block, a constant one */
        double u = (double)(tu_rand(&seed) >> 11) / 9007199254740992.0 * 2 - 1;
        double scale = pow(10.0, (double)(i / 256) / 3.0 - 2.0);
        x[i] = i / 256 == 3 ? 0.0f : i / 256 == 4 ? 0.75f : (float)(u * scale + (i / 256 % 2 ? 0.3 * scale : 0));
    }
    for (k = 0; k < sizeof t / sizeof t[0]; k++) {
        double e = 0, s = 0;
        assert_int_equal(glc_dtype_from_f32(t[k].dt, x, N, q), GLC_OK);
        ref_dequantize(t[k].dt, q, N, y);
        for (i = 0; i < N; i++) {
            if (i / 256 == 3 && y[i] != 0.0f)
                fail_msg("%s: a zero block decodes to %g", glc_dtype_name(t[k].dt), y[i]);
            e += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
            s += (double)x[i] * x[i];
        }
        if (!(e / s < t[k].bound))
            fail_msg("%s: nmse %g of the decoded blocks (bound %g)", glc_dtype_name(t[k].dt), e / s,
                     t[k].bound);
        for (i = 4 * 256; i < 5 * 256; i++)
            if (fabsf(y[i] - 0.75f) > 0.75f * 0.07f)
                fail_msg("%s: the constant block decodes %g at %zu", glc_dtype_name(t[k].dt), y[i], i);
    }
    /* f16 round trip; refusals */
    assert_int_equal(glc_dtype_from_f32(GLC_DTYPE_F16, x, 64, q), GLC_OK);
    assert_int_equal(glc_dtype_to_f32(GLC_DTYPE_F16, q, 64, y), GLC_OK);
    for (i = 0; i < 64; i++) /* half an f16 ulp: 2^-11 relative, 2^-25 below 2^-14 (subnormals) */
        if (!(fabsf(y[i] - x[i]) <= fmaxf(fabsf(x[i]) * 0x1p-11f, 0x1p-25f)))
            fail_msg("f16 round trip of %.9g: %.9g", (double)x[i], (double)y[i]);
    memset(q, 0xab, 64);
    x[5] = NAN;
    assert_int_equal(glc_dtype_from_f32(GLC_DTYPE_Q4_K, x, 256, q), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_dtype_from_f32(GLC_DTYPE_Q8_0, x, 31, q), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_dtype_from_f32(GLC_DTYPE_I32, x, 4, q), GLC_ERR_UNSUPPORTED);
    for (i = 0; i < 64; i++)
        assert_int_equal(q[i], 0xab);
}

static void test_select_rules(void **state)
{
    glc__env env;
    glc__device_sel sel;
    char err[256];
    (void)state;
    glc__env_defaults(&env);
    env.platform = GLC_PLATFORM_CURRENT;
    assert_int_equal(glc__env_set(&env, GLC__ENV_PLATFORM, NULL, err, sizeof err), GLC_OK);
    assert_int_equal(env.platform, GLC_PLATFORM_AUTO);
    assert_int_equal(glc__env_set(&env, GLC__ENV_PLATFORM, "Surfaceless", err, sizeof err),
                     GLC_OK);
    assert_int_equal(env.platform, GLC_PLATFORM_SURFACELESS);
    env.platform = GLC_PLATFORM_GBM;
    assert_int_equal(glc__env_set(&env, GLC__ENV_PLATFORM, "vulkan", err, sizeof err),
                     GLC_ERR_INVALID_ARG);
    assert_int_equal(env.platform, GLC_PLATFORM_GBM); /* untouched on failure */

    assert_int_equal(glc__parse_device("", &sel), GLC_OK);
    assert_int_equal(sel.kind, GLC__SEL_NONE);
    assert_int_equal(glc__parse_device("12", &sel), GLC_OK);
    assert_int_equal(sel.kind, GLC__SEL_INDEX);
    assert_int_equal(sel.index, 12);
    assert_int_equal(glc__parse_device("/dev/dri/renderD129", &sel), GLC_OK);
    assert_int_equal(sel.kind, GLC__SEL_PATH);
    assert_string_equal(sel.path, "/dev/dri/renderD129");
    assert_int_equal(glc__parse_device("-1", &sel), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc__parse_device("1x", &sel), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc__parse_device("99999999999", &sel), GLC_ERR_INVALID_ARG);

    /* exact-token extension matching */
    assert_true(glc__has_ext("EGL_A EGL_NV_device_cuda EGL_B", "EGL_NV_device_cuda"));
    assert_false(glc__has_ext("EGL_NV_device_cuda_x", "EGL_NV_device_cuda"));
    assert_false(glc__has_ext("X_EGL_EXT_device_drm", "EGL_EXT_device_drm"));
    assert_false(glc__has_ext(NULL, "EGL_EXT_device_drm"));

    /* hardware before software, whatever the enumeration order */
    assert_true(glc__device_rank("EGL_NV_device_cuda EGL_EXT_device_drm", 0) <
                glc__device_rank("EGL_EXT_device_drm", 1));
    assert_true(glc__device_rank("EGL_EXT_device_drm", 1) < glc__device_rank("", 0));
    assert_true(glc__device_rank("", 0) < glc__device_rank("EGL_MESA_device_software", 0));
    assert_true(glc__device_rank("EGL_EXT_device_drm", 0) <
                glc__device_rank("EGL_MESA_device_software EGL_EXT_device_drm", 1));
}

static void check_fold(uint64_t groups, const uint32_t max[3])
{
    uint32_t g[3];
    assert_int_equal(glc__grid_fold(groups, max, g), GLC_OK);
    assert_true(g[0] >= 1 && g[0] <= max[0]);
    assert_true(g[1] >= 1 && g[1] <= max[1]);
    assert_true(g[2] >= 1 && g[2] <= max[2]);
    assert_true((uint64_t)g[0] * g[1] * g[2] >= groups);
    /* surplus below one row per slice */
    assert_true((uint64_t)g[0] * g[1] * g[2] - groups < (uint64_t)g[0] * g[2] + g[2]);
}

static void test_grid_fold(void **state)
{
    const uint32_t es[3] = {65535, 65535, 65535};
    const uint32_t tiny[3] = {7, 5, 3};
    uint32_t g[3];
    uint64_t seed = 1, i, n;
    (void)state;
    assert_int_equal(glc__grid_fold(65535, es, g), GLC_OK);
    assert_true(g[0] == 65535 && g[1] == 1 && g[2] == 1);
    assert_int_equal(glc__grid_fold(65536, es, g), GLC_OK);
    assert_true(g[1] == 2 && g[2] == 1);
    check_fold(65536, es);
    check_fold(65535ull * 65535 + 1, es); /* needs 3-D */
    check_fold(UINT32_MAX, es);
    for (n = 1; n <= 7 * 5 * 3; n++)
        check_fold(n, tiny);
    for (i = 0; i < 10000; i++)
        check_fold(1 + tu_rand(&seed) % UINT32_MAX, es);
    assert_int_equal(glc__grid_fold(7 * 5 * 3 + 1, tiny, g), GLC_ERR_BOUNDS);
    assert_int_equal(glc__grid_fold(0, es, g), GLC_ERR_BOUNDS);
    assert_int_equal(glc__grid_fold((uint64_t)UINT32_MAX + 1, es, g), GLC_ERR_BOUNDS);
}

static void test_create_default(void **state)
{
    tu_log log;
    glc_device *dev = tu_device(&log);
    glc_device_info in;
    (void)state;
    assert_int_equal(glc_device_get_info(dev, &in), GLC_OK);
    assert_int_not_equal(in.platform, GLC_PLATFORM_AUTO);
    assert_true(strlen(in.renderer) > 0);
    assert_true(in.gl_major > 3 || (in.gl_major == 3 && in.gl_minor >= 1));
    /* the ES 3.1 minimums hold on any conformant driver */
    assert_true(in.limits.max_group_count[0] >= 65535);
    assert_true(in.limits.max_invocations >= 128);
    assert_true(in.limits.max_shared_bytes >= 16384);
    assert_true(in.limits.max_ssbo_blocks >= 4);
    assert_true(in.limits.max_ssbo_size >= (1u << 27));
    assert_true(in.limits.ssbo_offset_alignment >= 1 && in.limits.ssbo_offset_alignment <= 256);
    /* clamped only when the environment asks (GLC_LIMITS=min) */
    assert_int_equal(in.limits_clamped,
                     getenv("GLC_LIMITS") != NULL && strcmp(getenv("GLC_LIMITS"), "min") == 0);
    tu_assert_contains(log.all, "device: ");
    assert_string_equal(glc_device_errmsg(dev), "");
    glc_device_destroy(dev);
    glc_device_destroy(NULL);
}

static void test_each_platform(void **state)
{
    static const glc_platform ps[] = {GLC_PLATFORM_DEVICE, GLC_PLATFORM_SURFACELESS,
                                      GLC_PLATFORM_GBM, GLC_PLATFORM_DEFAULT};
    size_t i;
    int worked = 0;
    (void)state;
    for (i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        tu_log log;
        glc_device_desc d = tu_desc(&log);
        glc_device *dev = NULL;
        glc_status st;
        d.platform = ps[i];
        st = glc_device_create(&d, &dev);
        if (st == GLC_OK) {
            glc_device_info in;
            glc_device_get_info(dev, &in);
            assert_int_equal(in.platform, ps[i]);
            glc_device_destroy(dev);
            worked++;
        } else {
            /* a platform that is not there says which and why */
            assert_int_equal(st, GLC_ERR_NO_DEVICE);
            assert_null(dev);
            tu_assert_contains(log.last, glc_platform_name(ps[i]));
        }
    }
    assert_true(worked >= 1);
}

static void test_two_devices_share_display(void **state)
{
    glc_device *a = tu_device(NULL), *b = NULL;
    glc_device_desc d = tu_desc(NULL);
    glc_buffer *buf;
    int64_t n = 4;
    uint32_t v[4] = {1, 2, 3, 4}, r[4];
    glc_status st;
    (void)state;
    /* the second device's context becomes current: the first must refuse
     * to run rather than touch the wrong context */
    st = glc_device_create(&d, &b);
    assert_int_equal(st, GLC_OK);
    assert_int_equal(glc_buffer_create(a, GLC_DTYPE_U32, 1, &n, &buf), GLC_ERR_STATE);
    tu_assert_contains(glc_device_errmsg(a), "another EGL context is current");
    /* destroying b (the same EGL display) must not end a's display */
    glc_device_destroy(b);
    assert_int_equal(glc_buffer_create(a, GLC_DTYPE_U32, 1, &n, &buf), GLC_OK);
    assert_int_equal(glc_buffer_write(buf, 0, sizeof v, v), GLC_OK);
    assert_int_equal(glc_buffer_read(buf, 0, sizeof r, r), GLC_OK);
    assert_memory_equal(v, r, sizeof v);
    glc_buffer_destroy(buf);
    glc_device_destroy(a);
}

static void test_bad_env_and_desc(void **state)
{
    tu_log log;
    glc_device_desc d;
    glc_device *dev = (glc_device *)(uintptr_t)0x1;
    (void)state;

    d = tu_desc(&log);
    d.device = "gpu0";
    assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_INVALID_ARG);
    tu_assert_contains(log.last, "device \"gpu0\": expected an EGL device index or a /dev/dri path");
    assert_ptr_equal(dev, (glc_device *)(uintptr_t)0x1); /* untouched */

    d = tu_desc(&log);
    d.device = "99";
    d.platform = GLC_PLATFORM_DEVICE;
    assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_NO_DEVICE);
    tu_assert_contains(log.last, "GLC_DEVICE index 99, but there are");

    d = tu_desc(&log);
    d.device = "/dev/dri/renderD250";
    assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_NO_DEVICE);
    tu_assert_contains(log.last, "no EGL device has DRM path /dev/dri/renderD250");
    tu_assert_contains(log.last, "gbm"); /* "cannot open", or no GBM platform (NVIDIA) */

    d = tu_desc(&log);
    d.platform = (glc_platform)42;
    assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_INVALID_ARG);
    tu_assert_contains(log.last, "desc.platform 42");

    setenv("GLC_PLATFORM", "vulkan", 1);
    d = tu_desc(&log);
    assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_INVALID_ARG);
    tu_assert_contains(log.last, "GLC_PLATFORM=\"vulkan\"");
    unsetenv("GLC_PLATFORM");

    setenv("GLC_DEVICE", "abc", 1);
    d = tu_desc(&log);
    assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_INVALID_ARG);
    tu_assert_contains(log.last, "GLC_DEVICE=\"abc\": expected an EGL device index or a /dev/dri");
    unsetenv("GLC_DEVICE");

    /* CURRENT with no current context */
    d = tu_desc(&log);
    d.platform = GLC_PLATFORM_CURRENT;
    assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_NO_DEVICE);
    tu_assert_contains(log.last, "no EGL context is current on this thread");
    assert_ptr_equal(dev, (glc_device *)(uintptr_t)0x1);

    assert_int_equal(glc_device_create(NULL, NULL), GLC_ERR_INVALID_ARG);
}

static void test_no_egl_library(void **state)
{
    tu_log log;
    glc_device_desc d = tu_desc(&log);
    glc_device *dev = NULL;
    int n = 7;
    (void)state;
    setenv("GLC_EGL_LIBRARY", "libEGL-missing.so.9", 1);
    assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_NO_DEVICE);
    assert_null(dev);
    tu_assert_contains(log.last, "cannot load libEGL-missing.so.9");
    tu_assert_contains(log.last, "install libegl1");
    assert_int_equal(log.last_status, GLC_ERR_NO_DEVICE);
    assert_int_equal(glc_device_list(NULL, 0, &n), GLC_ERR_NO_DEVICE);
    assert_int_equal(n, 0);
    unsetenv("GLC_EGL_LIBRARY");
}

static void test_limits_min(void **state)
{
    glc_device_desc d = tu_desc(NULL);
    glc_device *dev;
    glc_device_info in;
    (void)state;
    setenv("GLC_LIMITS", "min", 1);
    dev = tu_device_desc(&d);
    unsetenv("GLC_LIMITS");
    glc_device_get_info(dev, &in);
    assert_true(in.limits_clamped);
    assert_int_equal(in.limits.max_ssbo_blocks, 4);
    assert_int_equal(in.limits.max_shared_bytes, 16384);
    assert_int_equal(in.limits.max_invocations, 128);
    assert_int_equal(in.limits.max_group_count[0], 65535);
    assert_int_equal(in.limits.max_ssbo_size, 1u << 27);
    assert_int_equal(in.limits.ssbo_offset_alignment, 256);
    glc_device_destroy(dev);
    d.flags = GLC_DEVICE_LIMITS_MIN;
    dev = tu_device_desc(&d);
    glc_device_get_info(dev, &in);
    assert_true(in.limits_clamped);
    glc_device_destroy(dev);
}

static void test_device_list(void **state)
{
    glc_device_entry e[8];
    int n = -1, i;
    (void)state;
    if (glc_device_list(e, 8, &n) != GLC_OK)
        skip();
    assert_true(n >= 0);
    for (i = 1; i < n && i < 8; i++)
        assert_true(e[i - 1].rank <= e[i].rank);
    for (i = 0; i < n && i < 8; i++) {
        assert_int_equal(e[i].index, i);
        if (e[i].is_software)
            assert_int_equal(e[i].rank, 3);
    }
    assert_int_equal(glc_device_list(NULL, 1, &n), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_device_list(e, 1, NULL), GLC_ERR_INVALID_ARG);
}

typedef struct thread_arg {
    glc_device *dev;
    glc_status st;
} thread_arg;

static void *other_thread(void *p)
{
    thread_arg *a = p;
    int64_t n = 16;
    glc_buffer *b = NULL;
    a->st = glc_buffer_create(a->dev, GLC_DTYPE_F32, 1, &n, &b);
    return NULL;
}

static void test_wrong_thread(void **state)
{
    glc_device *dev = tu_device(NULL);
    thread_arg a;
    pthread_t t;
    (void)state;
    a.dev = dev;
    a.st = GLC_OK;
    assert_int_equal(pthread_create(&t, NULL, other_thread, &a), 0);
    pthread_join(t, NULL);
    assert_int_equal(a.st, GLC_ERR_STATE);
    tu_assert_contains(glc_device_errmsg(dev), "a device is used from one thread at a time");
    glc_device_destroy(dev);
}

static void test_null_args(void **state)
{
    glc_device *dev = tu_device(NULL);
    glc_device_info in;
    glc_buffer *b = NULL;
    glc_kernel *k = NULL;
    glc_session *s = NULL;
    int64_t n = 4;
    char x[4];
    (void)state;
    assert_int_equal(glc_device_get_info(NULL, &in), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_device_get_info(dev, NULL), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(dev), "glc_device_get_info: invalid argument");
    tu_assert_contains(glc_device_errmsg(NULL), "glc_device_get_info: invalid argument: dev");
    assert_int_equal(glc_buffer_create(NULL, GLC_DTYPE_F32, 1, &n, &b), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, NULL), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, NULL, &b), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_buffer_wrap_gl(dev, 0, GLC_DTYPE_F32, 1, &n, &b), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_buffer_write(NULL, 0, 4, x), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_buffer_read(NULL, 0, 4, x), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_kernel_create(dev, NULL, &k), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_kernel_create(NULL, NULL, &k), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_begin(NULL, GLC_SESSION_DIRECT, &s), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_begin(dev, (glc_session_mode)9, &s), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_dispatch(NULL, NULL), GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_finish(NULL, NULL), GLC_ERR_INVALID_ARG);
    assert_null(b);
    assert_null(k);
    assert_null(s);
    assert_int_equal(glc_buffer_size(NULL), 0);
    glc_buffer_destroy(NULL);
    glc_kernel_destroy(NULL);
    glc_device_destroy(dev);
}

/* Sets (value non-NULL) or clears one variable. */
static void env_put(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

/* glc_device_create(desc) under GLC_PLATFORM and GLC_DEVICE; on success the
 * device is destroyed at once. */
static glc_status create_under(const char *platform, const char *device,
                               const glc_device_desc *desc)
{
    glc_device *dev = NULL;
    glc_status st;
    env_put("GLC_PLATFORM", platform);
    env_put("GLC_DEVICE", device);
    st = glc_device_create(desc, &dev);
    env_put("GLC_PLATFORM", NULL);
    env_put("GLC_DEVICE", NULL);
    if (st == GLC_OK)
        glc_device_destroy(dev);
    return st;
}

/* Found from outside: GLC_DEVICE=0 was silently ignored under
 * GLC_PLATFORM=surfaceless, and GLC_DEVICE=1 on a one-device machine said
 * "no usable gbm EGL platform: device platform: ...". A selector the
 * platform cannot take is an error naming both; AUTO with an index tries
 * the device platform only, and the message leads with it. */
static void test_device_selector_and_platform(void **state)
{
    static const struct {
        const char *platform, *device, *want;
    } bad[] = {
        {"surfaceless", "0",
         "GLC_DEVICE=\"0\" selects an EGL device, but GLC_PLATFORM=surfaceless has none"},
        {"SURFACELESS", "/dev/dri/renderD128",
         "GLC_DEVICE=\"/dev/dri/renderD128\" selects an EGL device, but "
         "GLC_PLATFORM=surfaceless"},
        {"default", "0", "GLC_DEVICE=\"0\" selects an EGL device, but GLC_PLATFORM=default"},
        {"current", "0", "GLC_DEVICE=\"0\" selects an EGL device, but GLC_PLATFORM=current"},
        {"gbm", "0", "GLC_DEVICE=\"0\" is an EGL device index, but GLC_PLATFORM=gbm takes a "
                     "/dev/dri path"},
    };
    tu_log log;
    glc_device_desc d;
    glc_device_entry e[8];
    char idx[16], want[160];
    int n = 0;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = tu_desc(&log);
        assert_int_equal(create_under(bad[i].platform, bad[i].device, &d), GLC_ERR_INVALID_ARG);
        tu_assert_contains(glc_device_errmsg(NULL), bad[i].want);
        assert_string_equal(log.last, glc_device_errmsg(NULL));
    }
    /* the same through the desc names the desc's fields */
    d = tu_desc(&log);
    d.platform = GLC_PLATFORM_SURFACELESS;
    d.device = "0";
    assert_int_equal(create_under(NULL, NULL, &d), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL),
                       "desc.device \"0\" selects an EGL device, but desc.platform surfaceless");
    /* the desc's platform overrides the environment's, the selector too */
    d = tu_desc(&log);
    d.platform = GLC_PLATFORM_DEVICE;
    d.device = "0";
    if (glc_device_list(e, 8, &n) != GLC_OK || n == 0)
        return; /* no EGL device platform here: the rest needs one */
    assert_int_equal(create_under("surfaceless", "5", &d), GLC_OK);

    /* one past the last device, AUTO: only the device platform is tried */
    snprintf(idx, sizeof idx, "%d", n);
    d = tu_desc(&log);
    assert_int_equal(create_under(NULL, idx, &d), GLC_ERR_NO_DEVICE);
    snprintf(want, sizeof want,
             "no usable device EGL platform: device platform: GLC_DEVICE index %d, but there "
             "are %d EGL devices",
             n, n);
    assert_string_equal(glc_device_errmsg(NULL), want);
    assert_null(strstr(log.all, "gbm"));
}

typedef struct create_arg {
    const char *device;
    glc_status st;
    char msg[2048];
} create_arg;

static void *create_in_thread(void *p)
{
    create_arg *a = p;
    glc_device_desc d;
    glc_device *dev = NULL;
    memset(&d, 0, sizeof d);
    d.device = a->device;
    d.log = tu_log_cb; /* quiet: the message is read back below */
    d.log_user = calloc(1, sizeof(tu_log));
    a->st = glc_device_create(&d, &dev);
    snprintf(a->msg, sizeof a->msg, "%s", glc_device_errmsg(NULL));
    if (a->st == GLC_OK)
        glc_device_destroy(dev);
    free(d.log_user);
    return NULL;
}

/* Reads what `fn` writes to stderr. */
static void capture_stderr(void (*fn)(void), char *out, size_t len)
{
    FILE *tmp = tmpfile();
    int saved = dup(2);
    size_t got;
    assert_non_null(tmp);
    fflush(stderr);
    dup2(fileno(tmp), 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    got = fread(out, 1, len - 1, tmp);
    out[got] = '\0';
    fclose(tmp);
}

static void create_bad_platform(void)
{
    glc_device *dev = NULL;
    setenv("GLC_PLATFORM", "vulkan", 1);
    assert_int_equal(glc_device_create(NULL, &dev), GLC_ERR_INVALID_ARG);
    unsetenv("GLC_PLATFORM");
}

static void create_bad_platform_log_off(void)
{
    setenv("GLC_LOG", "off", 1);
    create_bad_platform();
    unsetenv("GLC_LOG");
}

/* Found from outside: a failed creation said only "no usable EGL display
 * or device"; the reason showed only with GLC_LOG=error. It is this
 * thread's glc_device_errmsg(NULL) now, and the default log prints it. */
static void test_create_failure_message(void **state)
{
    create_arg a;
    pthread_t t;
    char err[4096];
    glc_device *dev;
    (void)state;
    assert_int_equal(glc_device_create(NULL, NULL), GLC_ERR_INVALID_ARG);
    tu_assert_contains(glc_device_errmsg(NULL), "out is NULL");

    capture_stderr(create_bad_platform, err, sizeof err);
    tu_assert_contains(glc_device_errmsg(NULL), "GLC_PLATFORM=\"vulkan\": expected auto, device");
    tu_assert_contains(err, "glcompute error: GLC_PLATFORM=\"vulkan\": expected");
    capture_stderr(create_bad_platform_log_off, err, sizeof err);
    assert_string_equal(err, "");
    tu_assert_contains(glc_device_errmsg(NULL), "GLC_PLATFORM=\"vulkan\"");

    /* per thread: another thread's failure is its own */
    dev = tu_device(NULL);
    assert_string_equal(glc_device_errmsg(NULL), ""); /* the last creation worked */
    memset(&a, 0, sizeof a);
    a.device = "gpu0";
    assert_int_equal(pthread_create(&t, NULL, create_in_thread, &a), 0);
    pthread_join(t, NULL);
    assert_int_equal(a.st, GLC_ERR_INVALID_ARG);
    tu_assert_contains(a.msg, "desc.device \"gpu0\"");
    assert_string_equal(glc_device_errmsg(NULL), "");
    glc_device_destroy(dev);
}

/* Removes dir/name files and then the directories from `leaf` up to and
 * including `top` (test cleanup). */
static void remove_tree(const char *top, const char *leaf)
{
    char path[600];
    DIR *d = opendir(leaf);
    struct dirent *ent;
    size_t n;
    if (d) {
        while ((ent = readdir(d)) != NULL) {
            if (ent->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%s", leaf, ent->d_name);
            unlink(path);
        }
        closedir(d);
    }
    snprintf(path, sizeof path, "%s", leaf);
    for (;;) {
        char *slash;
        rmdir(path);
        n = strlen(top);
        if (strlen(path) <= n || !(slash = strrchr(path, '/')))
            break;
        *slash = '\0';
    }
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    const char *p = hay;
    while ((p = strstr(p, needle)) != NULL) {
        n++;
        p += strlen(needle);
    }
    return n;
}

static int cache_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *ent;
    int n = 0;
    if (!d)
        return -1;
    while ((ent = readdir(d)) != NULL)
        n += strncmp(ent->d_name, "glc-", 4) == 0;
    closedir(d);
    return n;
}

/* Found from outside: GLC_SHADER_CACHE=<a directory that does not exist>
 * failed every cache write. The directory is created now (0700, parents
 * too); where that is impossible one warning says so and the cache is off. */
static void test_shader_cache_dir_created(void **state)
{
    char top[] = "/tmp/glc-cache-XXXXXX", dir[256], file[256], under[300];
    tu_log log;
    glc_device_desc d;
    glc_device *dev;
    glc_device_info in;
    glc_kernel *k;
    struct stat sb;
    FILE *f;
    (void)state;
    assert_non_null(mkdtemp(top));
    snprintf(dir, sizeof dir, "%s/a/b/cache", top);
    setenv("GLC_SHADER_CACHE", dir, 1);
    d = tu_desc(&log);
    dev = tu_device_desc(&d);
    unsetenv("GLC_SHADER_CACHE");
    assert_int_equal(stat(dir, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0700);
    snprintf(under, sizeof under, "%s/a", top);
    assert_int_equal(stat(under, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    glc_device_get_info(dev, &in);
    assert_int_equal(glc__kernel_get(dev, "fill", NULL, 64, &k), GLC_OK);
    if (in.features.program_binary_formats > 0)
        assert_true(cache_files(dir) >= 1); /* the cache works there */
    assert_int_equal(count_of(log.all, "cache is off"), 0);
    assert_int_equal(count_of(log.all, "cannot"), 0);
    glc_device_destroy(dev);

    /* under a regular file: impossible; one warning, no cache, no failure */
    snprintf(file, sizeof file, "%s/file", top);
    f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(under, sizeof under, "%s/sub", file);
    setenv("GLC_SHADER_CACHE", under, 1);
    d = tu_desc(&log);
    dev = tu_device_desc(&d);
    unsetenv("GLC_SHADER_CACHE");
    tu_assert_contains(log.all, "GLC_SHADER_CACHE \"");
    tu_assert_contains(log.all, "the program cache is off");
    assert_int_equal(count_of(log.all, "the program cache is off"), 1);
    assert_null(dev->cache_dir);
    assert_int_equal(glc__kernel_get(dev, "fill", NULL, 128, &k), GLC_OK);
    assert_int_equal(count_of(log.all, "program cache"), 1); /* once, not per program */
    glc_device_destroy(dev);

    /* the desc's directory is created the same way */
    snprintf(under, sizeof under, "%s/desc", top);
    d = tu_desc(&log);
    d.shader_cache_dir = under;
    dev = tu_device_desc(&d);
    assert_int_equal(stat(under, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    glc_device_destroy(dev);

    unlink(file);
    remove_tree(top, under);
    remove_tree(top, dir);
    assert_int_equal(stat(top, &sb), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_table),
        cmocka_unit_test(test_dtype_to_f32),
        cmocka_unit_test(test_dtype_from_f32),
        cmocka_unit_test(test_select_rules),
        cmocka_unit_test(test_grid_fold),
        cmocka_unit_test(test_create_default),
        cmocka_unit_test(test_each_platform),
        cmocka_unit_test(test_two_devices_share_display),
        cmocka_unit_test(test_bad_env_and_desc),
        cmocka_unit_test(test_no_egl_library),
        cmocka_unit_test(test_limits_min),
        cmocka_unit_test(test_device_list),
        cmocka_unit_test(test_wrong_thread),
        cmocka_unit_test(test_null_args),
        cmocka_unit_test(test_device_selector_and_platform),
        cmocka_unit_test(test_create_failure_message),
        cmocka_unit_test(test_shader_cache_dir_created),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
