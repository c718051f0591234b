/*
 * Several threads at once, as the header allows (each device used from one
 * thread at a time): devices created and destroyed on many threads (every
 * create succeeds, on the platform asked for), a device's eager op from a
 * thread where its context is not current (GLC_ERR_STATE, nothing cached),
 * and threads sharing one shader-cache directory (no write lost, no
 * temporary file left, every entry whole).
 */
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <unistd.h>

#define THREADS 4

typedef struct worker {
    pthread_t tid;
    glc_platform platform; /* asked for */
    glc_platform want;     /* expected in the device's info */
    const char *cache_dir;
    int rounds;
    int failures;          /* creates or checks that went wrong */
    char first[512];       /* the first failure, for the message */
    tu_log log;
} worker;

static void failed(worker *w, const char *fmt, ...)
{
    va_list ap;
    if (w->failures++ == 0) {
        va_start(ap, fmt);
        vsnprintf(w->first, sizeof w->first, fmt, ap);
        va_end(ap);
    }
}

/* A device, a buffer written and read back, destroyed: many times. */
static void *create_destroy(void *arg)
{
    worker *w = arg;
    int r, i;
    for (r = 0; r < w->rounds; r++) {
        glc_device_desc d;
        glc_device *dev = NULL;
        glc_device_info info;
        glc_buffer *b = NULL;
        int64_t n = 32;
        uint32_t data[32], got[32];
        glc_status st;
        memset(&d, 0, sizeof d);
        d.platform = w->platform;
        st = glc_device_create(&d, &dev);
        if (st != GLC_OK) {
            failed(w, "round %d: glc_device_create: %s", r, glc_status_str(st));
            continue;
        }
        glc_device_get_info(dev, &info);
        if (info.platform != w->want)
            failed(w, "round %d: platform %s, expected %s", r, glc_platform_name(info.platform),
                   glc_platform_name(w->want));
        for (i = 0; i < 32; i++)
            data[i] = (uint32_t)(r * 1000 + i);
        memset(got, 0, sizeof got);
        if ((st = glc_buffer_create(dev, GLC_DTYPE_U32, 1, &n, &b)) != GLC_OK ||
            (st = glc_buffer_write(b, 0, sizeof data, data)) != GLC_OK ||
            (st = glc_buffer_read(b, 0, sizeof got, got)) != GLC_OK)
            failed(w, "round %d: buffer: %s (%s)", r, glc_status_str(st),
                   glc_device_errmsg(dev));
        else if (memcmp(data, got, sizeof got) != 0)
            failed(w, "round %d: buffer read back differs", r);
        glc_buffer_destroy(b);
        glc_device_destroy(dev);
    }
    return NULL;
}

/* The default platform here, or skip. */
static glc_platform default_platform(void)
{
    glc_device *dev = tu_device(NULL);
    glc_device_info info;
    glc_device_get_info(dev, &info);
    glc_device_destroy(dev);
    return info.platform;
}

static void run_workers(worker *w, int n, void *(*fn)(void *))
{
    int i;
    for (i = 0; i < n; i++)
        assert_int_equal(pthread_create(&w[i].tid, NULL, fn, &w[i]), 0);
    for (i = 0; i < n; i++)
        assert_int_equal(pthread_join(w[i].tid, NULL), 0);
    for (i = 0; i < n; i++)
        if (w[i].failures)
            fail_msg("thread %d: %d failures, the first: %s", i, w[i].failures, w[i].first);
}

static void test_devices_on_threads(void **state)
{
    worker w[THREADS];
    glc_platform p = default_platform();
    int i;
    (void)state;
    memset(w, 0, sizeof w);
    for (i = 0; i < THREADS; i++) {
        /* half ask for the platform by name, half for AUTO: both land on it */
        w[i].platform = i % 2 ? p : GLC_PLATFORM_AUTO;
        w[i].want = p;
        w[i].rounds = 150;
    }
    run_workers(w, THREADS, create_destroy);
}

/* ---- an eager op from a thread where the context is not current ---- */

typedef struct op_call {
    glc_session *s;
    glc_buffer *x, *y;
    glc_status st;
} op_call;

static void *tanh_elsewhere(void *arg)
{
    op_call *c = arg;
    c->st = glc_op_unary(c->s, GLC_UNARY_TANH, glc_view_of(c->x), 0, glc_view_of(c->y));
    return NULL;
}

static void test_op_from_other_thread(void **state)
{
    tu_log log;
    glc_device *dev = tu_device(&log);
    op_call c;
    pthread_t t;
    float in[64], out[64];
    int64_t n = 64;
    int i;
    (void)state;
    for (i = 0; i < 64; i++)
        in[i] = (float)(i - 32) / 8.0f;
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &c.x), GLC_OK);
    assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &c.y), GLC_OK);
    assert_int_equal(glc_buffer_write(c.x, 0, sizeof in, in), GLC_OK);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_RECORDED, &c.s), GLC_OK);
    /* the context stays current on this thread: the other cannot use it */
    assert_int_equal(pthread_create(&t, NULL, tanh_elsewhere, &c), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(c.st, GLC_ERR_STATE);
    tu_assert_contains(glc_device_errmsg(dev), "cannot make the device's context current");
    /* here it works and computes */
    assert_int_equal(glc_op_unary(c.s, GLC_UNARY_TANH, glc_view_of(c.x), 0, glc_view_of(c.y)),
                     GLC_OK);
    assert_int_equal(glc_session_finish(c.s, NULL), GLC_OK);
    assert_int_equal(glc_buffer_read(c.y, 0, sizeof out, out), GLC_OK);
    for (i = 0; i < 64; i++)
        assert_true(fabsf(out[i] - tanhf(in[i])) < 1e-5f);
    glc_buffer_destroy(c.x);
    glc_buffer_destroy(c.y);
    glc_device_destroy(dev);
}

/* ---- one shader-cache directory, several threads ---- */

static const uint32_t local_sizes[] = {8, 16, 24, 32, 40, 48};
#define NLOCAL (sizeof local_sizes / sizeof local_sizes[0])

/* Compiles the fill kernel at every local size (one cache entry each). */
static void *compile_cached(void *arg)
{
    worker *w = arg;
    int r;
    size_t k;
    for (r = 0; r < w->rounds; r++) {
        glc_device_desc d = tu_desc(&w->log);
        glc_device *dev = NULL;
        glc_kernel *kern;
        glc_status st;
        d.shader_cache_dir = w->cache_dir;
        d.log_level = GLC_LOG_WARN;
        if ((st = glc_device_create(&d, &dev)) != GLC_OK) {
            failed(w, "round %d: glc_device_create: %s", r, glc_status_str(st));
            continue;
        }
        for (k = 0; k < NLOCAL; k++)
            if ((st = glc__kernel_get(dev, "fill", NULL, local_sizes[k], &kern)) != GLC_OK)
                failed(w, "round %d: fill/%u: %s", r, local_sizes[k], glc_status_str(st));
        glc_device_destroy(dev);
        if (w->log.count)
            failed(w, "round %d: %s", r, w->log.all);
        w->log.count = 0;
        w->log.all[0] = '\0';
    }
    return NULL;
}

static int count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (len > sl && strcmp(e->d_name + len - sl, suffix) == 0)
            n++;
    }
    closedir(d);
    return n;
}

static void remove_all(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[1024];
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    closedir(d);
    rmdir(dir);
}

static void test_shared_shader_cache(void **state)
{
    worker w[THREADS];
    char dir[] = "/tmp/glc-threads-XXXXXX";
    glc_device_desc d;
    glc_device *dev;
    glc_device_info info;
    glc_kernel *kern;
    tu_log log;
    size_t k;
    int i, round;
    (void)state;
    dev = tu_device(NULL);
    glc_device_get_info(dev, &info);
    glc_device_destroy(dev);
    if (info.features.program_binary_formats < 1)
        skip(); /* no program binaries: nothing is cached */
    for (round = 0; round < 3; round++) {
        assert_non_null(mkdtemp(dir));
        memset(w, 0, sizeof w);
        for (i = 0; i < THREADS; i++) {
            w[i].cache_dir = dir;
            w[i].rounds = 2;
        }
        run_workers(w, THREADS, compile_cached);
        assert_int_equal(count_files(dir, ".tmp"), 0);
        assert_int_equal(count_files(dir, ".bin"), (int)NLOCAL);
        /* every entry whole: a new device loads each one */
        d = tu_desc(&log);
        d.shader_cache_dir = dir;
        dev = tu_device_desc(&d);
        for (k = 0; k < NLOCAL; k++)
            assert_int_equal(glc__kernel_get(dev, "fill", NULL, local_sizes[k], &kern), GLC_OK);
        glc_device_destroy(dev);
        {
            /* exactly one load per entry */
            const char *p = log.all;
            int loads = 0;
            while ((p = strstr(p, "loaded from the program cache")) != NULL) {
                loads++;
                p++;
            }
            assert_int_equal(loads, (int)NLOCAL);
        }
        remove_all(dir);
        memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devices_on_threads),
        cmocka_unit_test(test_op_from_other_thread),
        cmocka_unit_test(test_shared_shader_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
