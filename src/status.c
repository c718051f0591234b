/*
 * Names of statuses, dtypes and platforms: each comes from one table, so
 * adding a value is one line (the status table is GLC_STATUS_MAP in the
 * public header).
 */
#include "glcompute.h"

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

#define GLC__DTYPE_MAP(X) \
    X(F32, "f32", 4)      \
    X(F16, "f16", 2)      \
    X(BF16, "bf16", 2)    \
    X(I32, "i32", 4)      \
    X(U32, "u32", 4)      \
    X(U8, "u8", 1)

size_t glc_dtype_size(glc_dtype dtype)
{
    switch (dtype) {
#define GLC__DTYPE_SIZE(name, text, size) case GLC_DTYPE_##name: return size;
        GLC__DTYPE_MAP(GLC__DTYPE_SIZE)
#undef GLC__DTYPE_SIZE
    }
    return 0;
}

const char *glc_dtype_name(glc_dtype dtype)
{
    switch (dtype) {
#define GLC__DTYPE_NAME(name, text, size) case GLC_DTYPE_##name: return text;
        GLC__DTYPE_MAP(GLC__DTYPE_NAME)
#undef GLC__DTYPE_NAME
    }
    return "?";
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
