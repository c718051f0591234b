/*
 * Names of statuses, dtypes and platforms: each comes from one table, so
 * adding a value is one line (the status table is GLC_STATUS_MAP in the
 * public header).
 */
#include "ops.h"

const char *glc_status_str(glc_status status)
{
    switch (status) {
#define GLC__STATUS_CASE(name, value, text) case GLC_##name: return text;
        GLC_STATUS_MAP(GLC__STATUS_CASE)
#undef GLC__STATUS_CASE
    default:
        return "unknown status";
    }
}

/* X(name, text, elements per block, bytes per block, GGML type id or -1).
 * Names and ids are GGML's (ggml_type); the block layouts are in
 * glsl/quant.glsl. */
#define GLC__DTYPE_MAP(X)           \
    X(F32, "f32", 1, 4, 0)          \
    X(F16, "f16", 1, 2, 1)          \
    X(BF16, "bf16", 1, 2, 30)       \
    X(I32, "i32", 1, 4, 26)         \
    X(U32, "u32", 1, 4, -1)         \
    X(U8, "u8", 1, 1, -1)           \
    X(Q8_0, "q8_0", 32, 34, 8)      \
    X(Q4_0, "q4_0", 32, 18, 2)      \
    X(Q4_K, "q4_K", 256, 144, 12)   \
    X(Q5_K, "q5_K", 256, 176, 13)   \
    X(Q6_K, "q6_K", 256, 210, 14)   \
    X(Q4_1, "q4_1", 32, 20, 3)      \
    X(Q5_0, "q5_0", 32, 22, 6)      \
    X(Q5_1, "q5_1", 32, 24, 7)

static int dtype_block(glc_dtype dtype, int64_t *elems, size_t *bytes)
{
    switch (dtype) {
#define GLC__DTYPE_BLOCK(name, text, e, b, g) \
    case GLC_DTYPE_##name:                 \
        *elems = e;                        \
        *bytes = b;                        \
        return 1;
        GLC__DTYPE_MAP(GLC__DTYPE_BLOCK)
#undef GLC__DTYPE_BLOCK
    }
    return 0;
}

int64_t glc__dtype_block(glc_dtype dtype)
{
    int64_t e;
    size_t b;
    return dtype_block(dtype, &e, &b) ? e : 0;
}

size_t glc_dtype_size(glc_dtype dtype)
{
    int64_t e;
    size_t b;
    return dtype_block(dtype, &e, &b) && e == 1 ? b : 0;
}

size_t glc_dtype_row_bytes(glc_dtype dtype, int64_t n)
{
    int64_t e;
    size_t b;
    if (!dtype_block(dtype, &e, &b) || n < 0 || n % e || (uint64_t)(n / e) > SIZE_MAX / b)
        return 0;
    return (size_t)(n / e) * b;
}

const char *glc_dtype_name(glc_dtype dtype)
{
    switch (dtype) {
#define GLC__DTYPE_NAME(name, text, e, b, g) case GLC_DTYPE_##name: return text;
        GLC__DTYPE_MAP(GLC__DTYPE_NAME)
#undef GLC__DTYPE_NAME
    }
    return "?";
}

int glc_dtype_ggml_type(glc_dtype dtype)
{
    switch (dtype) {
#define GLC__DTYPE_GGML(name, text, e, b, g) case GLC_DTYPE_##name: return g;
        GLC__DTYPE_MAP(GLC__DTYPE_GGML)
#undef GLC__DTYPE_GGML
    }
    return -1;
}

glc_dtype glc_dtype_from_ggml_type(uint32_t ggml_type)
{
    static const glc_dtype all[] = {
#define GLC__DTYPE_VALUE(name, text, e, b, g) GLC_DTYPE_##name,
        GLC__DTYPE_MAP(GLC__DTYPE_VALUE)
#undef GLC__DTYPE_VALUE
    };
    size_t i;
    for (i = 0; i < sizeof all / sizeof all[0]; i++)
        if (glc_dtype_ggml_type(all[i]) >= 0 && (uint32_t)glc_dtype_ggml_type(all[i]) == ggml_type)
            return all[i];
    return (glc_dtype)0;
}

const char *glc_platform_name(glc_platform platform)
{
    switch (platform) {
    case GLC_PLATFORM_AUTO: return "auto";
    case GLC_PLATFORM_DEVICE: return "device";
    case GLC_PLATFORM_GBM: return "gbm";
    case GLC_PLATFORM_SURFACELESS: return "surfaceless";
    case GLC_PLATFORM_DEFAULT: return "default";
    case GLC_PLATFORM_CURRENT: return "current";
    }
    return "?";
}
