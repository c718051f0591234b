/*
 * The one environment parser (see env.h): the table of every GLC_* variable
 * the library reads, with its keywords, and the only getenv calls in the
 * library. glc_device_create reads it once into the device; a policy then
 * holds for everything made from that device (sessions and plans alike),
 * and a bad value fails the creation instead of being silently ignored.
 */
#include "env.h"

#include "select.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOOL_WORDS                                                                       \
    {"0", 0}, {"1", 1}, {"off", 0}, {"on", 1}, {"no", 0}, {"yes", 1}, {"false", 0},      \
        {"true", 1}, {NULL, 0}
#define BOOL_VALUES "`0`, `1` (also `off`/`on`, `no`/`yes`, `false`/`true`)"

static const glc__env_word platform_words[] = {
    {"auto", GLC_PLATFORM_AUTO},
    {"device", GLC_PLATFORM_DEVICE},
    {"gbm", GLC_PLATFORM_GBM},
    {"surfaceless", GLC_PLATFORM_SURFACELESS},
    {"default", GLC_PLATFORM_DEFAULT},
    {"current", GLC_PLATFORM_CURRENT},
    {NULL, 0}};
static const glc__env_word limits_words[] = {
    {"device", GLC__LIMITS_DEVICE}, {"min", GLC__LIMITS_MIN}, {NULL, 0}};
static const glc__env_word barriers_words[] = {
    {"tracked", GLC__ENV_BARRIERS_TRACKED}, {"always", GLC__ENV_BARRIERS_ALWAYS}, {NULL, 0}};
static const glc__env_word bool_words[] = {BOOL_WORDS};
static const glc__env_word trace_words[] = {
    {"off", GLC__TRACE_OFF}, {"barriers", GLC__TRACE_BARRIERS}, {NULL, 0}};
static const glc__env_word log_words[] = {
    {"off", 0},
    {"error", GLC_LOG_ERROR},
    {"warn", GLC_LOG_WARN},
    {"info", GLC_LOG_INFO},
    {"debug", GLC_LOG_DEBUG},
    {NULL, 0}};
static const glc__env_word matmul_words[] = {
    {"auto", GLC__MATMUL_AUTO},
    {"direct", GLC__MATMUL_DIRECT},
    {"tiled64", GLC__MATMUL_TILED64},
    {"tiled128", GLC__MATMUL_TILED128},
    {"matvec", GLC__MATMUL_MATVEC},
    {NULL, 0}};

const glc__env_var glc__env_vars[GLC__ENV_COUNT] = {
    [GLC__ENV_PLATFORM] = {"GLC_PLATFORM", platform_words,
                           "`auto`, `device`, `gbm`, `surfaceless`, `default`, `current`",
                           "`auto`"},
    [GLC__ENV_DEVICE] = {"GLC_DEVICE", NULL, "an index (see `glc-info`), a `/dev/dri/...` path",
                         "the best ranked device"},
    [GLC__ENV_LIMITS] = {"GLC_LIMITS", limits_words, "`device`, `min`", "`device`"},
    [GLC__ENV_SHADER_CACHE] = {"GLC_SHADER_CACHE", NULL, "a directory", "no cache"},
    [GLC__ENV_BARRIERS] = {"GLC_BARRIERS", barriers_words, "`tracked`, `always`", "`tracked`"},
    [GLC__ENV_VALIDATE] = {"GLC_VALIDATE", bool_words, BOOL_VALUES, "`0`"},
    [GLC__ENV_TRACE] = {"GLC_TRACE", trace_words, "`off`, `barriers`", "`off`"},
    [GLC__ENV_DEBUG] = {"GLC_DEBUG", bool_words, BOOL_VALUES, "`0`"},
    [GLC__ENV_LOG] = {"GLC_LOG", log_words, "`off`, `error`, `warn`, `info`, `debug`", "`warn`"},
    [GLC__ENV_EGL_LIBRARY] = {"GLC_EGL_LIBRARY", NULL, "a file name or path", "`libEGL.so.1`"},
    [GLC__ENV_MATMUL] = {"GLC_MATMUL", matmul_words,
                         "`auto`, `direct`, `tiled64`, `tiled128`, `matvec`", "`auto`"},
};

void glc__env_defaults(glc__env *env)
{
    memset(env, 0, sizeof *env);
    env->platform = GLC_PLATFORM_AUTO;
    env->log = GLC_LOG_WARN;
    snprintf(env->egl_library, sizeof env->egl_library, "libEGL.so.1");
}

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* Where variable `id` lives in the struct: an int for keywords, else a
 * char array of `*len` bytes. */
static int *int_field(glc__env *env, glc__env_id id)
{
    switch (id) {
    case GLC__ENV_PLATFORM: return &env->platform;
    case GLC__ENV_LIMITS: return &env->limits;
    case GLC__ENV_BARRIERS: return &env->barriers;
    case GLC__ENV_VALIDATE: return &env->validate;
    case GLC__ENV_TRACE: return &env->trace;
    case GLC__ENV_DEBUG: return &env->debug;
    case GLC__ENV_LOG: return &env->log;
    case GLC__ENV_MATMUL: return &env->matmul;
    default: return NULL;
    }
}

static char *str_field(glc__env *env, glc__env_id id, size_t *len)
{
    switch (id) {
    case GLC__ENV_DEVICE: *len = sizeof env->device; return env->device;
    case GLC__ENV_SHADER_CACHE: *len = sizeof env->shader_cache; return env->shader_cache;
    case GLC__ENV_EGL_LIBRARY: *len = sizeof env->egl_library; return env->egl_library;
    default: *len = 0; return NULL;
    }
}

/* "expected a, b or c" from the distinct keywords of a variable. */
static void expected(const glc__env_word *w, char *out, size_t len)
{
    size_t used = 0;
    int i, n = 0;
    for (i = 0; w[i].word; i++)
        n++;
    for (i = 0; i < n && used < len; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
        int k = snprintf(out + used, len - used, "%s%s", sep, w[i].word);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

glc_status glc__env_set(glc__env *env, glc__env_id id, const char *value, char *err,
                        size_t errlen)
{
    const glc__env_var *v;
    glc__env def;
    if ((unsigned)id >= GLC__ENV_COUNT) {
        snprintf(err, errlen, "environment: no variable %d", (int)id);
        return GLC_ERR_INVALID_ARG;
    }
    v = &glc__env_vars[id];
    glc__env_defaults(&def);
    if (v->words) {
        int *field = int_field(env, id);
        int i;
        if (!value || !*value) {
            *field = *int_field(&def, id);
            return GLC_OK;
        }
        for (i = 0; v->words[i].word; i++) {
            if (ieq(value, v->words[i].word)) {
                *field = v->words[i].value;
                return GLC_OK;
            }
        }
        {
            char list[256];
            expected(v->words, list, sizeof list);
            snprintf(err, errlen, "%s=\"%s\": expected %s", v->name, value, list);
        }
        return GLC_ERR_INVALID_ARG;
    } else {
        size_t len;
        char *field = str_field(env, id, &len);
        const char *use = value && *value ? value : str_field(&def, id, &len);
        if (strlen(use) >= len) {
            snprintf(err, errlen, "%s: %zu characters, at most %zu", v->name, strlen(use),
                     len - 1);
            return GLC_ERR_INVALID_ARG;
        }
        if (id == GLC__ENV_DEVICE) {
            glc__device_sel sel;
            if (glc__parse_device(use, &sel) != GLC_OK) {
                snprintf(err, errlen,
                         "%s=\"%s\": expected an EGL device index or a /dev/dri path",
                         v->name, use);
                return GLC_ERR_INVALID_ARG;
            }
        }
        memcpy(field, use, strlen(use) + 1);
        return GLC_OK;
    }
}

glc_status glc__env_read_one(glc__env *env, glc__env_id id, char *err, size_t errlen)
{
    if ((unsigned)id >= GLC__ENV_COUNT) {
        snprintf(err, errlen, "environment: no variable %d", (int)id);
        return GLC_ERR_INVALID_ARG;
    }
    return glc__env_set(env, id, getenv(glc__env_vars[id].name), err, errlen);
}

glc_status glc__env_read(glc__env *env, char *err, size_t errlen)
{
    glc_status first = GLC_OK;
    int i;
    glc__env_defaults(env);
    for (i = 0; i < GLC__ENV_COUNT; i++) {
        char why[1200];
        glc_status st = glc__env_read_one(env, (glc__env_id)i, why, sizeof why);
        if (st != GLC_OK && first == GLC_OK) {
            first = st;
            snprintf(err, errlen, "%s", why);
        }
    }
    return first;
}

const char *glc__env_word_of(glc__env_id id, int value)
{
    const glc__env_word *w;
    if ((unsigned)id >= GLC__ENV_COUNT || !glc__env_vars[id].words)
        return "?";
    for (w = glc__env_vars[id].words; w->word; w++)
        if (w->value == value)
            return w->word;
    return "?";
}
