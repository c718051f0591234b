/*
 * The environment parser (src/core/env.c), GL-free except where a device is
 * created: every variable of the table with its good, bad and case-variant
 * values; a bad value of any variable fails glc_device_create with a
 * message naming it; no file of the library but env.c calls getenv; the
 * README's Environment table lists exactly the table's variables, values
 * and defaults; GLC_MATMUL reaches the matmul planner through the device.
 */
#include "testutil.h"

#include "env.h"

#include <ctype.h>
#include <dirent.h>

/* The repository root, from this file's path as the Makefile compiles it
 * (tests/test_env.c, relative to the root make runs in). */
static void root_path(const char *rel, char *out, size_t len)
{
    const char *f = __FILE__, *t = strstr(f, "tests/test_env.c");
    int n = t ? (int)(t - f) : 0;
    snprintf(out, len, "%.*s%s", n, f, rel);
}

/* A whole file, NUL-terminated (caller frees), or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static void case_variant(const char *in, char *out, size_t len, int upper_all)
{
    size_t i;
    for (i = 0; in[i] && i + 1 < len; i++)
        out[i] = (char)(upper_all || i % 2 == 0 ? toupper((unsigned char)in[i]) : in[i]);
    out[i] = '\0';
}

/* The int a keyword variable holds. */
static int value_of(const glc__env *env, glc__env_id id)
{
    switch (id) {
    case GLC__ENV_PLATFORM: return env->platform;
    case GLC__ENV_LIMITS: return env->limits;
    case GLC__ENV_BARRIERS: return env->barriers;
    case GLC__ENV_VALIDATE: return env->validate;
    case GLC__ENV_TRACE: return env->trace;
    case GLC__ENV_DEBUG: return env->debug;
    case GLC__ENV_LOG: return env->log;
    case GLC__ENV_MATMUL: return env->matmul;
    default: fail_msg("variable %d has no keywords", (int)id);
    }
    return -1;
}

static void expect_bad(glc__env_id id, const char *value)
{
    const glc__env_var *v = &glc__env_vars[id];
    glc__env env, before;
    char err[512] = "", want[320];
    glc__env_defaults(&env);
    before = env;
    if (glc__env_set(&env, id, value, err, sizeof err) != GLC_ERR_INVALID_ARG)
        fail_msg("%s=\"%s\" was accepted", v->name, value);
    assert_memory_equal(&env, &before, sizeof env); /* untouched */
    snprintf(want, sizeof want, "%s=\"%s\": expected ", v->name, value);
    if (strlen(value) < 200) /* a too-long value is not echoed */
        tu_assert_contains(err, want);
    else
        tu_assert_contains(err, v->name);
    if (v->words) {
        int i;
        for (i = 0; v->words[i].word; i++)
            tu_assert_contains(err, v->words[i].word);
    }
}

/* Every keyword of every variable, as written and in other cases; empty
 * and unset give the default; bogus values fail naming the variable and
 * every accepted value. */
static void test_every_variable(void **state)
{
    static const char *bogus[] = {"bogus", " always", "1 ", "yes!", "-1", "on off"};
    int id;
    (void)state;
    for (id = 0; id < GLC__ENV_COUNT; id++) {
        const glc__env_var *v = &glc__env_vars[id];
        glc__env env, def;
        char err[512], cased[64];
        size_t b;
        int i;
        assert_non_null(v->name);
        assert_true(strncmp(v->name, "GLC_", 4) == 0);
        assert_true(v->values && *v->values && v->def && *v->def);
        glc__env_defaults(&def);
        if (!v->words)
            continue;
        for (i = 0; v->words[i].word; i++) {
            int k;
            for (k = 0; k < 3; k++) {
                const char *val = v->words[i].word;
                if (k > 0) {
                    case_variant(val, cased, sizeof cased, k == 1);
                    val = cased;
                }
                glc__env_defaults(&env);
                if (glc__env_set(&env, (glc__env_id)id, val, err, sizeof err) != GLC_OK)
                    fail_msg("%s=\"%s\": %s", v->name, val, err);
                assert_int_equal(value_of(&env, (glc__env_id)id), v->words[i].value);
            }
            /* "" and unset: the default */
            assert_int_equal(glc__env_set(&env, (glc__env_id)id, "", err, sizeof err), GLC_OK);
            assert_int_equal(value_of(&env, (glc__env_id)id), value_of(&def, (glc__env_id)id));
        }
        assert_int_equal(glc__env_set(&env, (glc__env_id)id, NULL, err, sizeof err), GLC_OK);
        assert_int_equal(value_of(&env, (glc__env_id)id), value_of(&def, (glc__env_id)id));
        /* the README's default is a keyword with the default's value */
        for (i = 0; v->words[i].word; i++) {
            char quoted[64];
            snprintf(quoted, sizeof quoted, "`%s`", v->words[i].word);
            if (strcmp(quoted, v->def) == 0)
                break;
        }
        assert_non_null(v->words[i].word);
        assert_int_equal(v->words[i].value, value_of(&def, (glc__env_id)id));
        assert_string_equal(glc__env_word_of((glc__env_id)id, v->words[i].value),
                            v->words[i].word);
        for (b = 0; b < sizeof bogus / sizeof bogus[0]; b++)
            expect_bad((glc__env_id)id, bogus[b]);
    }
}

/* The values the issue found ignored or misread, one by one. */
static void test_values_found_misread(void **state)
{
    glc__env env;
    char err[512];
    static char longpath[2000];
    (void)state;
    glc__env_defaults(&env);
    assert_int_equal(glc__env_set(&env, GLC__ENV_LIMITS, "MIN", err, sizeof err), GLC_OK);
    assert_int_equal(env.limits, GLC__LIMITS_MIN);
    assert_int_equal(glc__env_set(&env, GLC__ENV_VALIDATE, "yes", err, sizeof err), GLC_OK);
    assert_int_equal(env.validate, 1);
    assert_int_equal(glc__env_set(&env, GLC__ENV_VALIDATE, "False", err, sizeof err), GLC_OK);
    assert_int_equal(env.validate, 0);
    assert_int_equal(glc__env_set(&env, GLC__ENV_MATMUL, "MatVec", err, sizeof err), GLC_OK);
    assert_int_equal(env.matmul, GLC__MATMUL_MATVEC);
    assert_int_equal(glc__env_set(&env, GLC__ENV_LOG, "ERROR", err, sizeof err), GLC_OK);
    assert_int_equal(env.log, GLC_LOG_ERROR);
    expect_bad(GLC__ENV_LIMITS, "max");
    expect_bad(GLC__ENV_BARRIERS, "bogus");
    expect_bad(GLC__ENV_MATMUL, "bogus");
    expect_bad(GLC__ENV_LOG, "bogus");
    expect_bad(GLC__ENV_VALIDATE, "2");
    assert_int_equal(glc__env_set(&env, GLC__ENV_BARRIERS, "bogus", err, sizeof err),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(err, "GLC_BARRIERS=\"bogus\": expected tracked or always");

    /* the free-form ones: a device selector is checked, paths are kept */
    expect_bad(GLC__ENV_DEVICE, "gpu0");
    expect_bad(GLC__ENV_DEVICE, "-1");
    assert_int_equal(glc__env_set(&env, GLC__ENV_DEVICE, "2", err, sizeof err), GLC_OK);
    assert_string_equal(env.device, "2");
    assert_int_equal(glc__env_set(&env, GLC__ENV_DEVICE, "/dev/dri/renderD128", err,
                                  sizeof err), GLC_OK);
    assert_string_equal(env.device, "/dev/dri/renderD128");
    assert_int_equal(glc__env_set(&env, GLC__ENV_SHADER_CACHE, "/tmp/x y", err, sizeof err),
                     GLC_OK);
    assert_string_equal(env.shader_cache, "/tmp/x y");
    assert_int_equal(glc__env_set(&env, GLC__ENV_EGL_LIBRARY, NULL, err, sizeof err), GLC_OK);
    assert_string_equal(env.egl_library, "libEGL.so.1");
    memset(longpath, 'a', sizeof longpath - 1);
    longpath[0] = '/';
    expect_bad(GLC__ENV_SHADER_CACHE, longpath);
    expect_bad(GLC__ENV_EGL_LIBRARY, longpath);
    assert_string_equal(glc__env_word_of(GLC__ENV_DEVICE, 0), "?");
    assert_string_equal(glc__env_word_of(GLC__ENV_BARRIERS, 7), "?");
}

/* A bad value of any variable fails glc_device_create (before any EGL
 * work) with GLC_ERR_INVALID_ARG; glc_device_errmsg(NULL) names it. */
static void test_bad_value_fails_create(void **state)
{
    int id;
    (void)state;
    for (id = 0; id < GLC__ENV_COUNT; id++) {
        const glc__env_var *v = &glc__env_vars[id];
        const char *bad = v->words ? "Bogus" : id == GLC__ENV_DEVICE ? "gpu0" : NULL;
        glc_device *dev = (glc_device *)(uintptr_t)0x1;
        tu_log log;
        glc_device_desc d = tu_desc(&log);
        char want[128];
        if (!bad)
            continue; /* any string is a directory or a file name */
        setenv(v->name, bad, 1);
        assert_int_equal(glc_device_create(&d, &dev), GLC_ERR_INVALID_ARG);
        unsetenv(v->name);
        assert_ptr_equal(dev, (glc_device *)(uintptr_t)0x1);
        snprintf(want, sizeof want, "%s=\"%s\": expected ", v->name, bad);
        tu_assert_contains(glc_device_errmsg(NULL), want);
        assert_string_equal(log.last, glc_device_errmsg(NULL));
        assert_int_equal(log.last_status, GLC_ERR_INVALID_ARG);
    }
}

/* No file of the library but env.c reads the environment. */
static void test_only_env_c_reads_the_environment(void **state)
{
    static const char *dirs[] = {"src/core", "src/gl", "src/tools"};
    size_t k;
    int files = 0;
    (void)state;
    for (k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        char dir[512];
        DIR *d;
        struct dirent *ent;
        root_path(dirs[k], dir, sizeof dir);
        d = opendir(dir);
        if (!d) {
            fprintf(stderr, "no %s (run from the repository root): skipping\n", dir);
            skip();
        }
        while ((ent = readdir(d)) != NULL) {
            char path[1024];
            size_t n = strlen(ent->d_name);
            char *text;
            if (n < 3 || (strcmp(ent->d_name + n - 2, ".c") != 0 &&
                          strcmp(ent->d_name + n - 2, ".h") != 0))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
            text = slurp(path);
            assert_non_null(text);
            files++;
            if (strcmp(ent->d_name, "env.c") == 0 && k == 0)
                assert_non_null(strstr(text, "getenv("));
            else if (strstr(text, "getenv(") || strstr(text, "secure_getenv"))
                fail_msg("%s reads the environment: use env.c's table", path);
            free(text);
        }
        closedir(d);
    }
    assert_true(files > 20);
}

/* One README cell, trimmed, into out; returns the rest of the row after
 * the cell's closing '|', or NULL at the end of the row. */
static const char *cell(const char *p, char *out, size_t len)
{
    const char *end = p;
    size_t n;
    while (*end && *end != '\n' && !(*end == '|' && end[-1] != '\\'))
        end++;
    if (*end != '|')
        return NULL;
    while (p < end && *p == ' ')
        p++;
    n = (size_t)(end - p);
    while (n > 0 && p[n - 1] == ' ')
        n--;
    snprintf(out, len, "%.*s", (int)n, p);
    return end + 1;
}

/* The README's Environment table names every variable of env.c's table
 * once, with the same values and default, and no other. */
static void test_readme_in_sync(void **state)
{
    char path[512], name[128], values[512], def[256];
    char *readme, *section, *stop;
    const char *p;
    int seen[GLC__ENV_COUNT] = {0}, id, rows = 0;
    (void)state;
    root_path("README.md", path, sizeof path);
    readme = slurp(path);
    if (!readme) {
        fprintf(stderr, "no %s (run from the repository root): skipping\n", path);
        skip();
    }
    section = strstr(readme, "\n## Environment\n");
    assert_non_null(section);
    stop = strstr(section + 1, "\n## ");
    if (stop)
        *stop = '\0';
    for (p = section; (p = strstr(p, "\n| `GLC_")) != NULL; p++) {
        const char *q = cell(p + 2, name, sizeof name);
        assert_non_null(q);
        q = cell(q, values, sizeof values);
        assert_non_null(q);
        q = cell(q, def, sizeof def);
        assert_non_null(q);
        rows++;
        for (id = 0; id < GLC__ENV_COUNT; id++) {
            char quoted[64];
            snprintf(quoted, sizeof quoted, "`%s`", glc__env_vars[id].name);
            if (strcmp(quoted, name) == 0)
                break;
        }
        if (id == GLC__ENV_COUNT)
            fail_msg("README lists %s, which src/core/env.c does not read", name);
        if (seen[id]++)
            fail_msg("README lists %s twice", name);
        if (strcmp(values, glc__env_vars[id].values) != 0)
            fail_msg("%s: README values \"%s\", env.c \"%s\"", name, values,
                     glc__env_vars[id].values);
        if (strcmp(def, glc__env_vars[id].def) != 0)
            fail_msg("%s: README default \"%s\", env.c \"%s\"", name, def,
                     glc__env_vars[id].def);
    }
    for (id = 0; id < GLC__ENV_COUNT; id++) {
        const glc__env_var *v = &glc__env_vars[id];
        int i;
        if (!seen[id])
            fail_msg("README's Environment table lacks %s", v->name);
        for (i = 0; v->words && v->words[i].word; i++) { /* the values list every keyword */
            char quoted[64];
            snprintf(quoted, sizeof quoted, "`%s`", v->words[i].word);
            tu_assert_contains(v->values, quoted);
        }
    }
    assert_int_equal(rows, GLC__ENV_COUNT);
    free(readme);
}

static void append(void *user, const char *text)
{
    char *buf = user;
    size_t used = strlen(buf);
    snprintf(buf + used, 16384 - used, "%s", text);
}

/* The dump of a [8, 64] x [64, 64] matmul plan on a device made under
 * GLC_MATMUL=`value` (NULL: unset). */
static void matmul_dump(const char *value, char *dump)
{
    glc_device *dev;
    glc_graph *g;
    glc_plan *p;
    int64_t as[2] = {8, 64}, ws[2] = {64, 64};
    if (value)
        setenv("GLC_MATMUL", value, 1);
    dev = tu_device(NULL);
    unsetenv("GLC_MATMUL");
    assert_int_equal(glc_graph_create(dev, &g), GLC_OK);
    glc_graph_output(g, "y",
                     glc_matmul(g, glc_graph_input(g, "a", GLC_DTYPE_F32, 2, as),
                                glc_graph_param(g, "w", GLC_DTYPE_F32, 2, ws), glc_none(), NULL));
    assert_int_equal(glc_graph_compile(g, NULL, &p), GLC_OK);
    dump[0] = '\0';
    assert_int_equal(glc_plan_dump(p, 0, append, dump), GLC_OK);
    glc_plan_destroy(p);
    glc_graph_destroy(g);
    glc_device_destroy(dev);
}

/* GLC_MATMUL reaches op_matmul.c's planner from the device (read there
 * with getenv before): a forced tiled variant shows in the plan. */
static void test_matmul_variant_from_env(void **state)
{
    static char dump[16384];
    (void)state;
    matmul_dump("Tiled64", dump);
    tu_assert_contains(dump, "TILED=1 BM=64");
    matmul_dump("direct", dump);
    tu_assert_contains(dump, "TILED=0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_variable),
        cmocka_unit_test(test_values_found_misread),
        cmocka_unit_test(test_bad_value_fails_create),
        cmocka_unit_test(test_only_env_c_reads_the_environment),
        cmocka_unit_test(test_readme_in_sync),
        cmocka_unit_test(test_matmul_variant_from_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
