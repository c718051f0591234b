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
