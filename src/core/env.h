/*
 * The environment: every GLC_* variable the library reads, in one table
 * (env.c), parsed once at device creation into a glc__env the device keeps.
 * Nothing else in the library calls getenv, so a knob cannot change under a
 * live device, and every value is checked: keywords are case-insensitive,
 * an empty value means the default, and anything else is an error naming
 * the variable and the values it takes. GL-free.
 */
#ifndef GLC_ENV_H
#define GLC_ENV_H

#include "glcompute.h"

#include <stddef.h>

typedef enum glc__env_id {
    GLC__ENV_PLATFORM,
    GLC__ENV_DEVICE,
    GLC__ENV_LIMITS,
    GLC__ENV_SHADER_CACHE,
    GLC__ENV_BARRIERS,
    GLC__ENV_VALIDATE,
    GLC__ENV_TRACE,
    GLC__ENV_DEBUG,
    GLC__ENV_LOG,
    GLC__ENV_EGL_LIBRARY,
    GLC__ENV_MATMUL,
    GLC__ENV_COUNT
} glc__env_id;

enum { GLC__LIMITS_DEVICE = 0, GLC__LIMITS_MIN };
enum { GLC__ENV_BARRIERS_TRACKED = 0, GLC__ENV_BARRIERS_ALWAYS };
enum { GLC__TRACE_OFF = 0, GLC__TRACE_BARRIERS };
/* GLC_MATMUL: the dense matmul variant forced on op_matmul.c's planner */
enum {
    GLC__MATMUL_AUTO = 0,
    GLC__MATMUL_DIRECT,
    GLC__MATMUL_TILED64,
    GLC__MATMUL_TILED128,
    GLC__MATMUL_MATVEC
};

/* The parsed values; strings are copies ("" when unset). */
typedef struct glc__env {
    int platform;  /* glc_platform; AUTO when unset */
    char device[256];
    int limits;    /* GLC__LIMITS_* */
    char shader_cache[1024];
    int barriers;  /* GLC__ENV_BARRIERS_* */
    int validate;  /* 0 or 1 */
    int trace;     /* GLC__TRACE_* */
    int debug;     /* 0 or 1 */
    int log;       /* 0 (off) or a glc_log_level: what goes to stderr without a callback */
    char egl_library[1024];
    int matmul;    /* GLC__MATMUL_* */
} glc__env;

/* One row of the table, also what the README's Environment table shows
 * (tests/test_env.c keeps the two in sync). */
typedef struct glc__env_word {
    const char *word;
    int value;
} glc__env_word;

typedef struct glc__env_var {
    const char *name;           /* "GLC_BARRIERS" */
    const glc__env_word *words; /* keywords, NULL-terminated; NULL for a free-form value */
    const char *values;         /* the values as the README lists them */
    const char *def;            /* the default as the README lists it */
} glc__env_var;

/* The table, GLC__ENV_COUNT rows indexed by glc__env_id. */
extern const glc__env_var glc__env_vars[GLC__ENV_COUNT];

/* Every variable at its default. */
void glc__env_defaults(glc__env *env);

/* Sets one variable from `value` (NULL or "": the default). On a bad value
 * returns GLC_ERR_INVALID_ARG with a message naming the variable, the value
 * and what it takes in err, and leaves *env as it was. */
glc_status glc__env_set(glc__env *env, glc__env_id id, const char *value, char *err,
                        size_t errlen);

/* Defaults, then every variable of the process environment. A bad value
 * stays at its default and the first one fails the call as glc__env_set
 * does (the good ones are set: GLC_LOG=off still silences that failure). */
glc_status glc__env_read(glc__env *env, char *err, size_t errlen);

/* Only variable `id` from the process environment (for calls that have no
 * device, such as glc_device_list); the rest stay as they are. */
glc_status glc__env_read_one(glc__env *env, glc__env_id id, char *err, size_t errlen);

/* The keyword of `value` for a keyword variable, or "?". */
const char *glc__env_word_of(glc__env_id id, int value);

#endif
