/*
 * Device selection rules (see select.h). Ranking is by extension strings,
 * never by position: Mesa lists its software device first, and NVIDIA gives
 * NULL DRM paths when /dev/dri is absent, so "index 0" would pick llvmpipe
 * on a machine with a GPU.
 */
#include "select.h"

#include <ctype.h>
#include <limits.h>
#include <string.h>

int glc__has_ext(const char *exts, const char *name)
{
    size_t n = strlen(name);
    const char *p = exts;
    if (!exts || n == 0)
        return 0;
    while ((p = strstr(p, name)) != NULL) {
        int starts = p == exts || p[-1] == ' ';
        int ends = p[n] == '\0' || p[n] == ' ';
        if (starts && ends)
            return 1;
        p += n;
    }
    return 0;
}

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

glc_status glc__parse_platform(const char *s, glc_platform *out)
{
    static const struct { const char *name; glc_platform p; } names[] = {
        {"auto", GLC_PLATFORM_AUTO},
        {"device", GLC_PLATFORM_DEVICE},
        {"gbm", GLC_PLATFORM_GBM},
        {"surfaceless", GLC_PLATFORM_SURFACELESS},
        {"default", GLC_PLATFORM_DEFAULT},
        {"current", GLC_PLATFORM_CURRENT},
    };
    size_t i;
    if (!s || !*s) {
        *out = GLC_PLATFORM_AUTO;
        return GLC_OK;
    }
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (ieq(s, names[i].name)) {
            *out = names[i].p;
            return GLC_OK;
        }
    }
    return GLC_ERR_INVALID_ARG;
}

glc_status glc__parse_device(const char *s, glc__device_sel *out)
{
    glc__device_sel sel = {GLC__SEL_NONE, 0, NULL};
    if (s && *s == '/') {
        sel.kind = GLC__SEL_PATH;
        sel.path = s;
    } else if (s && *s) {
        long v = 0;
        const char *p;
        for (p = s; *p; p++) {
            if (!isdigit((unsigned char)*p) || v > (INT_MAX - 9) / 10)
                return GLC_ERR_INVALID_ARG;
            v = v * 10 + (*p - '0');
        }
        sel.kind = GLC__SEL_INDEX;
        sel.index = (int)v;
    }
    *out = sel;
    return GLC_OK;
}

int glc__device_rank(const char *exts, int has_drm_file)
{
    if (glc__has_ext(exts, "EGL_MESA_device_software"))
        return 3;
    if (glc__has_ext(exts, "EGL_NV_device_cuda"))
        return 0;
    if (glc__has_ext(exts, "EGL_EXT_device_drm") && has_drm_file)
        return 1;
    return 2;
}
