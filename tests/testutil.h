/*
 * Shared test helpers: cmocka includes, a capturing log callback (tests
 * assert exact statuses and messages), a device opener that skips when the
 * machine has no EGL at all, and a seeded PRNG for random inputs.
 */
#ifndef GLC_TESTUTIL_H
#define GLC_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glcompute.h"
#include "kernel.h"
#include "ops.h"

typedef struct tu_log {
    int count;
    glc_status last_status;
    char last[2048];
    char all[16384];
} tu_log;

static inline void tu_log_cb(void *user, glc_log_level level, glc_status status, const char *msg)
{
    tu_log *l = (tu_log *)user;
    size_t used = strlen(l->all);
    l->count++;
    if (level == GLC_LOG_ERROR) {
        l->last_status = status;
        snprintf(l->last, sizeof l->last, "%s", msg);
    }
    snprintf(l->all + used, sizeof l->all - used, "%s\n", msg);
}

static inline glc_device_desc tu_desc(tu_log *log)
{
    glc_device_desc d;
    memset(&d, 0, sizeof d);
    if (log) {
        memset(log, 0, sizeof *log);
        d.log = tu_log_cb;
        d.log_user = log;
        d.log_level = GLC_LOG_DEBUG;
    }
    return d;
}

/* A device on the default platform; skips the test when there is no EGL. */
static inline glc_device *tu_device_desc(const glc_device_desc *d)
{
    glc_device *dev = NULL;
    glc_status st = glc_device_create(d, &dev);
    if (st == GLC_ERR_NO_DEVICE) {
        fprintf(stderr, "no EGL device: skipping\n");
        skip();
    }
    assert_int_equal(st, GLC_OK);
    assert_non_null(dev);
    return dev;
}

static inline glc_device *tu_device(tu_log *log)
{
    glc_device_desc d = tu_desc(log);
    return tu_device_desc(&d);
}

/* What decides whether a fusion can fire on dev (the ES 3.1 minimum
 * limits, GLC_LIMITS=min, stop some): a part of a packed value may start
 * `bytes` in only on the binding alignment (the qkv pass); a fused
 * residual takes a 5th storage block (mm_res). */
static inline int tu_aligned(glc_device *dev, size_t bytes)
{
    glc_device_info in;
    assert_int_equal(glc_device_get_info(dev, &in), GLC_OK);
    return bytes % in.limits.ssbo_offset_alignment == 0;
}

static inline size_t tu_ssbo_alignment(glc_device *dev)
{
    glc_device_info in;
    assert_int_equal(glc_device_get_info(dev, &in), GLC_OK);
    return in.limits.ssbo_offset_alignment;
}

static inline uint32_t tu_ssbo_blocks(glc_device *dev)
{
    glc_device_info in;
    assert_int_equal(glc_device_get_info(dev, &in), GLC_OK);
    return in.limits.max_ssbo_blocks;
}

/* Round `texel` (0 or 1) of a test of llvmpipe's texel forms on dev (the
 * caller includes device.h): 0 without buffer textures, 1 with them at
 * any size and at most `limit` texels a binding. Set before any plan: the
 * kernels' prelude follows the feature. */
#define TU_TEXEL_ROUND(dev, texel, limit)                                               \
    do {                                                                                 \
        (dev)->texel_min_bytes = 0;                                                      \
        (dev)->info.features.texel_buffers = (texel);                                    \
        (dev)->info.limits.max_texel_buffer_size = (texel) ? (limit) : 0;                \
    } while (0)

/* A texel limit within 2 texels of what `values` f32 need (r picks the
 * offset), at least 1: generated texel cases land on both sides of it. */
static inline uint32_t tu_texel_limit_near(uint64_t r, int64_t values)
{
    int64_t l = values / 4 + (int64_t)(r % 5) - 2;
    return (uint32_t)(l > 0 ? l : 1);
}

#define tu_assert_contains(hay, needle)                                                  \
    do {                                                                                 \
        if (!strstr((hay), (needle)))                                                    \
            fail_msg("expected \"%s\" in \"%s\"", (needle), (hay));                      \
    } while (0)

/* The tests' one generator (tests/ref/optest.c ot_rand: splitmix64,
 * GLC_TEST_SEED salts every stream) */
uint64_t ot_rand(uint64_t *seed);
static inline uint64_t tu_rand(uint64_t *s)
{
    return ot_rand(s);
}

static inline uint32_t tu_range(uint64_t *s, uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)(tu_rand(s) % (uint64_t)(hi - lo + 1));
}

/* The built-in fill kernel: out[i] = value + i*stride over n u32 elements
 * of `buf` from byte `offset`, in one dispatch of a DIRECT session. */
static inline glc_status tu_fill(glc_device *dev, glc_buffer *buf, size_t offset, uint32_t n,
                                 uint32_t value, uint32_t stride, uint32_t local)
{
    glc_kernel *k;
    glc_session *s;
    glc_binding b;
    glc_dispatch_desc d;
    uint32_t params[3];
    glc_status st = glc__kernel_get(dev, "fill", NULL, local, &k);
    if (st != GLC_OK)
        return st;
    st = glc_session_begin(dev, GLC_SESSION_DIRECT, &s);
    if (st != GLC_OK)
        return st;
    memset(&b, 0, sizeof b);
    b.buffer = buf;
    b.offset = offset;
    b.size = (size_t)n * 4;
    b.access = GLC_WRITE;
    params[0] = n;
    params[1] = value;
    params[2] = stride;
    memset(&d, 0, sizeof d);
    d.kernel = k;
    d.groups = (n + k->local_size_x - 1) / k->local_size_x;
    d.bindings = &b;
    d.binding_count = 1;
    d.params = params;
    d.param_count = 3;
    d.label = "fill";
    st = glc_session_dispatch(s, &d);
    if (st != GLC_OK) {
        glc_session_finish(s, NULL);
        return st;
    }
    return glc_session_finish(s, NULL);
}


/* Compiles g with the compile flags `flags`, destroys g and returns the
 * plan; a compile that fails fails the test with the device's message. */
static inline glc_plan *tu_compile(glc_device *dev, glc_graph *g, uint32_t flags)
{
    glc_compile_desc cd;
    glc_plan *p = NULL;
    memset(&cd, 0, sizeof cd);
    cd.flags = flags;
    if (glc_graph_compile(g, &cd, &p) != GLC_OK)
        fail_msg("compile: %s", glc_device_errmsg(dev));
    glc_graph_destroy(g);
    return p;
}

/* The planner's rule tests: op a inferred, then planned on tg into p;
 * either failing fails the test with its message. */
static inline void tu_plan_op(glc__op_args *a, const glc__target *tg, glc__op_plan *p)
{
    char err[256];
    if (glc__ops[a->op]->infer(a, err, sizeof err) != GLC_OK)
        fail_msg("infer: %s", err);
    memset(p, 0, sizeof *p);
    if (glc__op_make_plan(a, tg, p, err, sizeof err) != GLC_OK)
        fail_msg("plan: %s", err);
}

/* A planning target of ES 3.1's minima (128 invocations a group, 65535
 * groups, no loop cap), llvmpipe's or not: the rule tests' device */
static inline void tu_rule_target(glc__target *tg, int llvmpipe)
{
    memset(tg, 0, sizeof *tg);
    tg->limits.max_invocations = 128;
    tg->limits.max_group_size[0] = 128;
    tg->limits.max_group_count[0] = 65535;
    tg->is_llvmpipe = llvmpipe;
}

#endif
