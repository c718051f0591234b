/*
 * glc-bench: what barrier elision and the session cost, measured against
 * references taken in the same run on the same machine.
 *
 *  1. CPU cost per dispatch: raw GL calls through the entry table (the
 *     floor: no session, no tracking), DIRECT with the tracker, DIRECT with
 *     GLC_BARRIERS=always, RECORDED (record + encode), and a dependent
 *     chain (a barrier each).
 *  2. GPU overlap: N independent slow dispatches with elision vs a barrier
 *     after each (the peers' policy), and a dependent chain of N both ways.
 *
 * Usage: glc-bench [--quick]. Prints markdown tables with the device,
 * driver, commit (GLC_COMMIT) and date.
 */
#include "buffer.h"
#include "device.h"
#include "glcompute.h"
#include "kernel.h"
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static glc_device *dev;
static glc_kernel *fill, *spin;

static void check(glc_status st, const char *what)
{
    if (st != GLC_OK) {
        fprintf(stderr, "glc-bench: %s: %s: %s\n", what, glc_status_str(st), glc_device_errmsg(dev));
        exit(1);
    }
}

static glc_dispatch_desc desc_of(glc_kernel *k, glc_binding *b, uint32_t *p, uint64_t groups)
{
    glc_dispatch_desc d;
    memset(&d, 0, sizeof d);
    d.kernel = k;
    d.groups = groups;
    d.bindings = b;
    d.binding_count = 1;
    d.params = p;
    d.param_count = 5;
    return d;
}

typedef enum { RAW_GL, DIRECT, DIRECT_ALWAYS, RECORDED, CHAIN } cpu_case;

/* ns of CPU per dispatch over m dispatches of 1 group, each to its own
 * 256-byte slice (or the same slice for CHAIN); the GPU wait is excluded. */
static double cpu_per_dispatch(cpu_case c, int m, glc_buffer *buf, double *tracker_ns)
{
    glc_session *s = NULL;
    glc_dispatch_stats st;
    uint32_t p[5] = {64, 1, 0, 0, 0};
    uint64_t t0, t1;
    int i;
    memset(&st, 0, sizeof st);
    /* GLC_BARRIERS=always, which a device takes at creation */
    dev->barrier_policy = c == DIRECT_ALWAYS ? GLC__BARRIERS_ALWAYS : GLC__BARRIERS_TRACKED;
    if (c != RAW_GL)
        check(glc_session_begin(dev, c == RECORDED ? GLC_SESSION_RECORDED : GLC_SESSION_DIRECT, &s),
              "begin");
    t0 = glc__now_ns();
    for (i = 0; i < m; i++) {
        size_t off = c == CHAIN ? 0 : (size_t)i * 256;
        if (c == RAW_GL) {
            dev->gl.glUseProgram(fill->program);
            dev->gl.glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, buf->name, (GLintptr)off, 256);
            dev->gl.glUniform1uiv(fill->params_loc, 3, p);
            dev->gl.glUniform1ui(fill->total_loc, 1);
            dev->gl.glDispatchCompute(1, 1, 1);
        } else {
            glc_binding b = {buf, off, 256, c == CHAIN ? GLC_READ_WRITE : GLC_WRITE,
                             GLC_BIND_STORAGE};
            glc_dispatch_desc d = desc_of(fill, &b, p, 1);
            d.param_count = 3;
            check(glc_session_dispatch(s, &d), "dispatch");
        }
    }
    t1 = glc__now_ns();
    if (c == RAW_GL) {
        dev->gl.glFinish();
        *tracker_ns = 0;
        return (double)(t1 - t0) / m;
    }
    check(glc_session_finish(s, &st), "finish");
    *tracker_ns = (double)st.tracker_ns / m;
    if (c == RECORDED) /* recording happened in the loop, encoding in finish */
        return (double)(t1 - t0 + st.encode_ns) / m;
    return (double)(t1 - t0) / m;
}

/* Wall time of one session of n slow dispatches: independent (each to its
 * own buffer) or a chain (all to the same buffer, read-write). */
static double overlap_ms(int n, int chain, int always, uint32_t elems, uint32_t spins,
                         glc_buffer **bufs, uint64_t *barriers)
{
    glc_session *s;
    glc_dispatch_stats st;
    uint64_t t0;
    int i;
    dev->barrier_policy = always ? GLC__BARRIERS_ALWAYS : GLC__BARRIERS_TRACKED;
    check(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), "begin");
    check(glc_session_barrier(s), "barrier"); /* start clean */
    t0 = glc__now_ns();
    for (i = 0; i < n; i++) {
        glc_binding b = {bufs[chain ? 0 : i], 0, 0, chain ? GLC_READ_WRITE : GLC_WRITE,
                         GLC_BIND_STORAGE};
        uint32_t p[5] = {elems, (uint32_t)i, spins, 0, 0};
        glc_dispatch_desc d = desc_of(spin, &b, p, (elems + 255) / 256);
        check(glc_session_dispatch(s, &d), "dispatch");
    }
    check(glc_session_finish(s, &st), "finish");
    *barriers = st.barriers - 1;
    return (double)(glc__now_ns() - t0) / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* A plan on GPU memory (issue 15): y = 2x + 1 over n f32, run with x and y
 * bound to buffers (no host copy; committed, then synced: a fence wait)
 * against run_slots with x uploaded and y read back and copied out (the
 * host round trip an application would otherwise make). Median ms a run
 * of reps. */
static void bound_vs_host(int64_t n, int reps)
{
    glc_graph *g;
    glc_plan *p;
    glc_buffer *bx, *by;
    glc_plan_slice sl[1];
    float *x = calloc((size_t)n, 4), *y = calloc((size_t)n, 4);
    const void *ins[1];
    double tb[9], th[9];
    int i;
    check(glc_graph_create(dev, &g), "graph");
    glc_graph_output(g, "y", glc_scale(g, glc_graph_input(g, "x", GLC_DTYPE_F32, 1, &n), 2, 1));
    check(glc_graph_compile(g, NULL, &p), "compile");
    glc_graph_destroy(g);
    check(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &bx), "buffer");
    check(glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &by), "buffer");
    ins[0] = x;
    /* bound once, as an application would, then unbound for the host runs;
     * each side warmed up by one run */
    check(glc_plan_bind_input(p, "x", glc_view_of(bx)), "bind");
    check(glc_plan_bind_output(p, "y", glc_view_of(by)), "bind");
    for (i = -1; i < reps; i++) {
        uint64_t t0 = glc__now_ns();
        check(glc_plan_commit_no_wait(p, NULL), "bound run");
        check(glc_plan_sync_pending(p, sl), "bound sync"); /* waits; copies nothing */
        if (i >= 0)
            tb[i] = (double)(glc__now_ns() - t0) / 1e6;
    }
    {
        glc_view none;
        memset(&none, 0, sizeof none);
        check(glc_plan_bind_input(p, "x", none), "unbind");
        check(glc_plan_bind_output(p, "y", none), "unbind");
    }
    for (i = -1; i < reps; i++) {
        uint64_t t0 = glc__now_ns();
        check(glc_plan_run_slots(p, ins, sl), "host run");
        memcpy(y, (const char *)glc_plan_arena_ptr(p) + sl[0].offset, (size_t)n * 4);
        if (i >= 0)
            th[i] = (double)(glc__now_ns() - t0) / 1e6;
    }
    printf("| %lld f32 | %.3f | %.3f | %.2fx |\n", (long long)n, median(tb, reps),
           median(th, reps), median(th, reps) / median(tb, reps));
    glc_plan_destroy(p);
    glc_buffer_destroy(bx);
    glc_buffer_destroy(by);
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
    glc_device_info in;
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int m = quick ? 2000 : 20000, reps = quick ? 3 : 7, i, n = 8;
    glc_buffer *slices, *bufs[8];
    char date[32];
    time_t now = time(NULL);
    const char *commit = getenv("GLC_COMMIT");
    static const char *names[] = {"raw GL calls (floor: no session)", "DIRECT, tracked",
                                  "DIRECT, GLC_BARRIERS=always", "RECORDED (record + encode)",
                                  "DIRECT, dependent chain (barrier each)"};
    int64_t len;
    uint32_t elems, spins;
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    check(glc_device_create(NULL, &dev), "device");
    glc_device_get_info(dev, &in);
    check(glc__kernel_get(dev, "fill", NULL, 64, &fill), "fill kernel");
    check(glc__kernel_get(dev, "spin", NULL, 256, &spin), "spin kernel");
    printf("## glc-bench: %s\n\n", in.renderer);
    printf("%s, %s platform; commit %s; %s\n\n", in.version, glc_platform_name(in.platform),
           commit ? commit : "?", date);

    len = (int64_t)m * 64;
    check(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &len, &slices), "buffer");
    printf("### CPU cost per dispatch (%d dispatches of 1 work group, median of %d)\n\n", m, reps);
    printf("| case | ns per dispatch | tracker ns | vs raw GL |\n|---|---:|---:|---:|\n");
    {
        double floor_ns = 0;
        int c;
        for (c = RAW_GL; c <= CHAIN; c++) {
            double v[9], tr[9], tracker;
            for (i = 0; i < reps; i++)
                v[i] = cpu_per_dispatch((cpu_case)c, m, slices, &tr[i]);
            tracker = median(tr, reps);
            v[0] = median(v, reps);
            if (c == RAW_GL)
                floor_ns = v[0];
            printf("| %s | %.0f | %.0f | %.2fx |\n", names[c], v[0], tracker, v[0] / floor_ns);
        }
    }
    {
        /* what the per-call context check costs alone (eglGetCurrentContext) */
        uint64_t t0 = glc__now_ns();
        for (i = 0; i < m; i++)
            glc__egl_ensure_current(dev, dev->egl);
        printf("| context check alone (eglGetCurrentContext) | %.0f | - | - |\n",
               (double)(glc__now_ns() - t0) / m);
    }
    glc_buffer_destroy(slices);

    /* two shapes: few groups that run long (latency-bound, as small decode
     * kernels are: here independent dispatches can overlap) and many groups
     * (each dispatch fills the GPU alone) */
    {
        int llvm = strstr(in.renderer, "llvmpipe") != NULL, shape;
        uint32_t shape_elems[2], shape_spins[2];
        shape_elems[0] = 4096;
        shape_spins[0] = llvm ? 256 : quick ? 2000 : 20000;
        shape_elems[1] = llvm ? 1u << 14 : 1u << 21;
        shape_spins[1] = llvm ? 64 : 512;
        len = shape_elems[1];
        for (i = 0; i < n; i++)
            check(glc_buffer_create(dev, GLC_DTYPE_U32, 1, &len, &bufs[i]), "buffer");
        printf("\n### GPU overlap: %d slow dispatches, median of %d\n\n", n, reps);
        printf("| shape | pattern | policy | barriers | ms | vs always |\n"
               "|---|---|---|---:|---:|---:|\n");
        for (shape = 0; shape < 2; shape++) {
            int chain;
            uint64_t bar;
            double one[9];
            char label[64];
            elems = shape_elems[shape];
            spins = shape_spins[shape];
            snprintf(label, sizeof label, "%u groups x %u rounds", elems / 256, spins);
            for (i = 0; i < reps; i++)
                one[i] = overlap_ms(1, 0, 0, elems, spins, bufs, &bar);
            printf("| %s | one dispatch alone | - | 0 | %.3f | - |\n", label, median(one, reps));
            for (chain = 0; chain < 2; chain++) {
                double t[2][9], med[2];
                uint64_t bars[2];
                int always;
                for (always = 0; always < 2; always++) {
                    for (i = 0; i < reps; i++)
                        t[always][i] =
                            overlap_ms(n, chain, always, elems, spins, bufs, &bars[always]);
                    med[always] = median(t[always], reps);
                }
                printf("| %s | %d %s | tracked | %llu | %.3f | %.2fx |\n", label, n,
                       chain ? "dependent (chain)" : "independent", (unsigned long long)bars[0],
                       med[0], med[0] / med[1]);
                printf("| %s | %d %s | always | %llu | %.3f | 1.00x |\n", label, n,
                       chain ? "dependent (chain)" : "independent", (unsigned long long)bars[1],
                       med[1]);
            }
        }
    }
    for (i = 0; i < n; i++)
        glc_buffer_destroy(bufs[i]);

    printf("\n### A plan on GPU memory: y = 2x + 1, bound to buffers vs host copies (median of "
           "%d)\n\n",
           reps);
    printf("| size | bound run ms | run_slots + copies ms | host copies cost |\n"
           "|---|---:|---:|---:|\n");
    bound_vs_host(4096, reps);
    bound_vs_host(quick ? 1 << 20 : 1 << 24, reps);
    glc_device_destroy(dev);
    return 0;
}
