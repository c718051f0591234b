/*
 * glc-bench-ops: the kernel library's throughput per op and size, each
 * against a reference measured on the same machine: on llvmpipe, memcpy
 * bandwidth and OpenBLAS SGEMM on the same cores (measured here; OpenBLAS
 * is loaded with dlopen when installed); on NVIDIA, PyTorch device copy
 * bandwidth and cuBLAS FP32 SGEMM from bench/torch_ref.py, passed in as
 * GLC_REF=<json file> (bench/run_nvidia.sh does both in one call).
 *
 * Bandwidth-bound ops report GB/s (bytes each op must read and write once)
 * and the ratio to copy bandwidth; matmuls report GFLOP/s and the ratio to
 * SGEMM of the same size. Times are wall clock over `reps` back-to-back
 * runs in one session, after a warm-up run (which compiles the kernel).
 *
 * Usage: glc-bench-ops [--quick] [--only NAME]
 */
#include "glcompute.h"
#include "op_run.h" /* glc__device_tune: the mat-vec sweep (static library only) */
#include "device.h" /* dev->gl: the spin chain's raw dispatches */
#include "kernel.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static glc_device *dev;
static int quick, gpu;
static const char *only; /* --only NAME: the ops whose name starts with NAME */
static double ref_copy_gbs;
static char ref_json[4096];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static glc_buffer *buffer(glc_dtype dt, int64_t n)
{
    glc_buffer *b;
    if (glc_buffer_create(dev, dt, 1, &n, &b) != GLC_OK) {
        fprintf(stderr, "glc-bench-ops: buffer of %lld: %s\n", (long long)n, glc_device_errmsg(dev));
        exit(1);
    }
    return b;
}

static void fill_random(glc_buffer *b)
{
    size_t n = glc_buffer_size(b) / 4, i;
    float *h = malloc(n * 4);
    uint32_t s = 12345;
    for (i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = (float)(s >> 8) / (float)(1u << 24) - 0.5f;
    }
    glc_buffer_write(b, 0, n * 4, h);
    free(h);
}

/* A weight matrix of `count` elements in dtype t with a model's kind of
 * values: uniform in [-0.5, 0.5) (f32, f16), GGML blocks with a small f16
 * scale and random quants; never the NaN, Inf or subnormal patterns that
 * random bits give. */
static uint16_t half_of(float f)
{
    uint32_t u, m;
    int e;
    memcpy(&u, &f, 4);
    e = (int)((u >> 23) & 0xff) - 127 + 15;
    m = (u >> 13) & 0x3ff;
    if (e <= 0)
        return (uint16_t)((u >> 16) & 0x8000);
    return (uint16_t)(((u >> 16) & 0x8000) | ((uint32_t)e << 10) | m);
}

/* count weights of type t as bytes (*bytes set; the caller frees): model-like
 * values, |w| up to about `scale` (GGML blocks: random quants, the block's
 * f16 scales (and mins) set for it) */
static unsigned char *weight_bytes(glc_dtype t, int64_t count, float scale, size_t *bytes_out)
{
    int64_t elems = glc_dtype_size(t) ? 1 : glc_dtype_row_bytes(t, 32) ? 32 : 256;
    size_t block = elems > 1 ? glc_dtype_row_bytes(t, elems) : 0;
    size_t bytes = block ? (size_t)(count / elems) * block : (size_t)count * glc_dtype_size(t), i;
    /* where the f16 fields are and what they hold: d = scale / (the largest
     * |quant| (times the largest sub-block scale)), a min of -scale */
    int at = t == GLC_DTYPE_Q6_K ? 208 : 0, has_min = 0;
    float d = scale / 8;
    unsigned char *h = malloc(bytes);
    switch (t) {
    case GLC_DTYPE_Q8_0: d = scale / 128; break;
    case GLC_DTYPE_Q4_1: has_min = 1; d = scale / 8; break;
    case GLC_DTYPE_Q5_0: d = scale / 16; break;
    case GLC_DTYPE_Q5_1: has_min = 1; d = scale / 16; break;
    case GLC_DTYPE_Q4_K: has_min = 1; d = scale / (63 * 8); break;
    case GLC_DTYPE_Q5_K: has_min = 1; d = scale / (63 * 16); break;
    case GLC_DTYPE_Q6_K: d = scale / (128 * 32); break;
    default: break;
    }
    uint32_t s = 777;
    *bytes_out = bytes;
    if (!h)
        return NULL;
    for (i = 0; i < bytes; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = (unsigned char)(s >> 24);
    }
    if (block) {
        uint16_t hd = half_of(d), hm = half_of(t == GLC_DTYPE_Q4_K || t == GLC_DTYPE_Q5_K
                                                    ? scale / 63 /* dmin */
                                                    : -scale);
        for (i = 0; i < bytes; i += block) {
            memcpy(h + i + at, &hd, 2);
            if (has_min)
                memcpy(h + i + 2, &hm, 2);
        }
    } else {
        for (i = 0; i < (size_t)count; i++) {
            float v;
            s = s * 1664525u + 1013904223u;
            v = ((float)(s >> 8) / (float)(1u << 24) - 0.5f) * 2 * scale;
            if (t == GLC_DTYPE_F16) {
                uint16_t hv = half_of(v);
                memcpy(h + 2 * i, &hv, 2);
            } else {
                memcpy(h + 4 * i, &v, 4);
            }
        }
    }
    return h;
}

static void fill_weights(glc_buffer *b, glc_dtype t, int64_t count)
{
    size_t bytes;
    unsigned char *h = weight_bytes(t, count, 1.0f, &bytes);
    if (h)
        glc_buffer_write(b, 0, bytes, h);
    free(h);
}

static glc_view v1(glc_buffer *b, glc_dtype dt, int rank, int64_t d0, int64_t d1, int64_t d2,
                   int64_t d3)
{
    int64_t shape[4];
    shape[0] = d0;
    shape[1] = d1;
    shape[2] = d2;
    shape[3] = d3;
    return glc_view_make(b, 0, dt, rank, shape);
}

static int want(const char *op)
{
    return !only || strncmp(op, only, strlen(only)) == 0;
}

/* When a GPU has idled (programs compiling, data uploading), its clocks
 * drop, and a latency-bound run timed within the next tenth of a second
 * runs at them: the H100's quantized FFN chain measured up to 1.6x slower
 * right after its programs compiled than after a settling run
 * (bench/RESULTS.md). So on a GPU a row first runs for SETTLE_S whenever
 * the last timing ended more than IDLE_S ago (settle()). */
#define SETTLE_S 0.3
#define IDLE_S 0.05
static double last_busy;

static int settle(void)
{
    return gpu && now_s() - last_busy > IDLE_S;
}

typedef glc_status (*run_fn)(glc_session *s, void *ctx);

/* Seconds per run, or -1 when the op is not supported (yet). After a
 * warm-up run (the compile), reps runs back to back, doubled until they
 * take MIN_TIMED seconds (a GPU's clocks settle; a short row is noise).
 * On llvmpipe the best of CPU_ROUNDS such timings: its thread pool gives
 * the same dispatch two speeds from call to call (bench/RESULTS.md, ninth
 * session), and the best is the kernel's. */
#define MIN_TIMED 0.03
#define CPU_ROUNDS 3
static double time_op_once(run_fn fn, void *ctx, int reps);
static double time_op(run_fn fn, void *ctx, int reps)
{
    double best = time_op_once(fn, ctx, reps), t;
    int r;
    for (r = 1; !gpu && best >= 0 && r < CPU_ROUNDS; r++)
        if ((t = time_op_once(fn, ctx, reps)) >= 0 && t < best)
            best = t;
    return best;
}

static double time_op_once(run_fn fn, void *ctx, int reps)
{
    glc_session *s;
    glc_status st;
    double t0, t;
    int i;
    glc_session_begin(dev, GLC_SESSION_DIRECT, &s);
    st = fn(s, ctx);
    glc_session_finish(s, NULL);
    if (st != GLC_OK)
        return st == GLC_ERR_UNSUPPORTED ? -1 : -2;
    if (settle()) {
        glc_session_begin(dev, GLC_SESSION_DIRECT, &s);
        for (t0 = now_s(); now_s() - t0 < SETTLE_S;)
            fn(s, ctx);
        glc_session_finish(s, NULL);
    }
    for (;;) {
        glc_session_begin(dev, GLC_SESSION_DIRECT, &s);
        t0 = now_s();
        for (i = 0; i < reps; i++)
            fn(s, ctx);
        glc_session_finish(s, NULL);
        t = now_s() - t0;
        if (t >= MIN_TIMED || reps >= 1 << 20) {
            last_busy = now_s();
            return t / reps;
        }
        reps *= 2;
    }
}

static void row_bw(const char *op, const char *size, double t, double bytes)
{
    if (t == -1) {
        printf("| %s | %s | not implemented yet | | |\n", op, size);
        return;
    }
    if (t < 0) {
        printf("| %s | %s | failed: %s | | |\n", op, size, glc_device_errmsg(dev));
        return;
    }
    printf("| %s | %s | %.3f ms | %.1f GB/s | %.0f%% of copy |\n", op, size, t * 1e3,
           bytes / t / 1e9, ref_copy_gbs > 0 ? 100.0 * bytes / t / 1e9 / ref_copy_gbs : 0);
}

/* ---- the spin chain (issue 13): a dependent dispatch waiting on its
 * producer's groups instead of a glMemoryBarrier ----
 *
 * SPIN_LEN mat-vecs y = W_(i % 8) x (2048 x 2048 f16; 8 matrices, 64 MB,
 * more than the H100's L2), x and y ping-ponging between two buffers, one
 * dispatch each, issued with raw GL (dev->gl) so that nothing inserts a
 * barrier. Modes: a storage barrier between dispatches (what plans do);
 * none (no barrier, no wait: the results are wrong, the launch floor);
 * spin: each group's first invocation polls the producer's counter (every
 * group adds 1 to its own when done, after memoryBarrierBuffer) before the
 * group reads x; spin + prefetch: a lane loads its weights before the
 * wait. Counters are never reset: run r waits for (r + 1) x groups. The
 * results of every mode are compared bit for bit with the barrier mode's.
 * NVIDIA launches a grid's groups after all of the earlier grid's; GLES
 * promises nothing of the kind, so a wait gives up after 2^22 polls (the
 * mismatch count then shows it). */
#define SPIN_LEN 64
#define SPIN_K 2048
static const char spin_src[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };\n"
    "layout(std430, binding = 1) coherent readonly buffer X { vec4 x[]; };\n"
    "layout(std430, binding = 2) coherent writeonly buffer Y { float y[]; };\n"
    "layout(std430, binding = 3) coherent buffer C { uint ctr[]; };\n"
    "layout(std430, binding = 4) volatile coherent readonly buffer V { uint vctr[]; };\n"
    "shared float part[GLC_LOCAL_SIZE_X];\n"
    "/* params: 0 mode (0 none, 1 spin, 2 spin + prefetch), 1 this dispatch's\n"
    "   counter, 2 the producer's (or ~0u), 3 the count to wait for */\n"
    "void main() {\n"
    "  uint t = gl_LocalInvocationID.x, lane = t & 31u, row = gl_WorkGroupID.x * 8u + (t >> 5);\n"
    "  uint base = row * 256u + lane;\n"
    "  uvec4 q[8];\n"
    "  if (glc_p[0] >= 2u)\n"
    "    for (int j = 0; j < 8; j++) q[j] = w[base + uint(j) * 32u];\n"
    "  if (glc_p[0] != 0u && glc_p[2] != ~0u) {\n"
    "    if (t == 0u) { uint n = 0u;\n"
    "      if (glc_p[0] == 3u) while (vctr[glc_p[2]] < glc_p[3] && n < (1u << 22)) n++;\n"
    "      else while (atomicAdd(ctr[glc_p[2]], 0u) < glc_p[3] && n < (1u << 22)) n++; }\n"
    "    barrier();\n"
    "    memoryBarrierBuffer();\n"
    "  }\n"
    "  float s = 0.0;\n"
    "  for (int j = 0; j < 8; j++) {\n"
    "    uvec4 v = glc_p[0] >= 2u ? q[j] : w[base + uint(j) * 32u];\n"
    "    uint e = (lane + uint(j) * 32u) * 2u;\n"
    "    vec4 a = x[e], b = x[e + 1u];\n"
    "    s += dot(vec4(unpackHalf2x16(v.x), unpackHalf2x16(v.y)), a)\n"
    "       + dot(vec4(unpackHalf2x16(v.z), unpackHalf2x16(v.w)), b);\n"
    "  }\n"
    "  part[t] = s;\n"
    "  barrier();\n"
    "  for (uint o = 16u; o > 0u; o >>= 1) { if (lane < o) part[t] += part[t + o]; barrier(); }\n"
    "  if (lane == 0u) y[row] = part[t] * 0.0383;\n"
    "  if (glc_p[0] != 0u) { memoryBarrierBuffer(); barrier(); if (t == 0u) atomicAdd(ctr[glc_p[1]], 1u); }\n"
    "}\n";

static void spin_chain(void)
{
    static const char *mode_name[] = {"a storage barrier between dispatches",
                                      "no barrier, no wait (wrong results: the floor)",
                                      "no barrier; each group waits on its producer's counter",
                                      "the same, a lane's weights loaded before the wait",
                                      "the same, polling with a volatile load, not an atomic"};
    enum { MATS = 8, ROWS = SPIN_K, GROUPS = ROWS / 8 };
    size_t wbytes = (size_t)ROWS * SPIN_K * 2;
    glc_buffer *Wb = buffer(GLC_DTYPE_U8, (int64_t)wbytes * MATS), *P[2], *C;
    glc_kernel *k = NULL;
    glc_kernel_desc kd;
    glc__glstate gs;
    float *ref = malloc(ROWS * 4), *got = malloc(ROWS * 4), *x0 = malloc(SPIN_K * 4);
    uint32_t *zero = calloc(SPIN_LEN, 4), sruns = 0;
    int mode, i, m;
    P[0] = buffer(GLC_DTYPE_F32, SPIN_K);
    P[1] = buffer(GLC_DTYPE_F32, SPIN_K);
    C = buffer(GLC_DTYPE_U32, SPIN_LEN);
    glc_buffer_write(C, 0, SPIN_LEN * 4, zero);
    for (m = 0; m < MATS; m++) {
        size_t b;
        unsigned char *h = weight_bytes(GLC_DTYPE_F16, (int64_t)ROWS * SPIN_K, 1.0f, &b);
        for (i = 0; h && i < ROWS * SPIN_K / 2; i += 4099) /* matrices differ */
            h[2 * i] ^= (unsigned char)(m + 1);
        if (h)
            glc_buffer_write(Wb, (size_t)m * wbytes, b, h);
        free(h);
    }
    for (i = 0; i < SPIN_K; i++)
        x0[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
    memset(&kd, 0, sizeof kd);
    kd.name = "spin chain", kd.source = spin_src, kd.local_size_x = 256;
    if (!ref || !got || !x0 || !zero || glc_kernel_create(dev, &kd, &k) != GLC_OK) {
        printf("| spin chain | | failed: %s | | |\n", glc_device_errmsg(dev));
        goto out;
    }
    for (mode = 0; mode < 5; mode++) {
        int reps = 20, r, pass;
        double t0, t = 0;
        long bad = 0;
        for (pass = 0; pass < 3; pass++) { /* 0: checked run; 1: settle; 2: timed */
            int nrun = pass == 0 ? 1 : pass == 1 ? 200 : reps;
            if (pass == 0)
                glc_buffer_write(P[0], 0, SPIN_K * 4, x0);
            if (glc__enter(dev, GLC__TOUCH_PROGRAM | GLC__TOUCH_SSBO, 5, &gs) != GLC_OK)
                goto out;
            t0 = now_s();
            for (r = 0; r < nrun; r++, sruns += mode >= 2)
                for (i = 0; i < SPIN_LEN; i++) {
                    uint32_t pr[4];
                    pr[0] = mode < 2 ? 0u : (uint32_t)mode - 1;
                    pr[1] = (uint32_t)i;
                    pr[2] = i ? (uint32_t)i - 1 : ~0u;
                    pr[3] = (sruns + 1) * GROUPS;
                    if (mode == 0 && i)
                        dev->gl.glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
                    dev->gl.glUseProgram(k->program);
                    dev->gl.glUniform1uiv(k->params_loc, 4, pr);
                    dev->gl.glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, glc_buffer_gl_name(Wb),
                                              (GLintptr)((size_t)(i % MATS) * wbytes), (GLsizeiptr)wbytes);
                    dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, glc_buffer_gl_name(P[i & 1]));
                    dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, glc_buffer_gl_name(P[(i + 1) & 1]));
                    dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, glc_buffer_gl_name(C));
                    dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 4, glc_buffer_gl_name(C));
                    dev->gl.glDispatchCompute(GROUPS, 1, 1);
                    if (i == 15)
                        dev->gl.glFlush();
                }
            dev->gl.glMemoryBarrier(GL_ALL_BARRIER_BITS);
            dev->gl.glFinish();
            t = now_s() - t0;
            glc__leave(dev, &gs);
            if (pass == 0) {
                glc_buffer_read(P[SPIN_LEN & 1], 0, ROWS * 4, mode ? got : ref);
                for (i = 0; mode && i < ROWS; i++)
                    bad += memcmp(&got[i], &ref[i], 4) != 0;
            }
        }
        printf("| spin chain | %d dependent 2048 x 2048 f16 mat-vecs: %s | %.2f us a dispatch | "
               "%.1f GB/s | %ld of %d results differ from the barrier mode's |\n",
               SPIN_LEN, mode_name[mode], t * 1e6 / reps / SPIN_LEN,
               (double)wbytes * SPIN_LEN * reps / t / 1e9, bad, ROWS);
    }
out:
    last_busy = now_s();
    glc_kernel_destroy(k);
    glc_buffer_destroy(Wb);
    glc_buffer_destroy(P[0]);
    glc_buffer_destroy(P[1]);
    glc_buffer_destroy(C);
    free(ref), free(got), free(x0), free(zero);
}

/* ---- a plan run's fixed cost (issue 13): upload, one small dispatch,
 * readback of 4 bytes, of a vocabulary's logits, or of both, synchronous
 * (glc_plan_run_raw) as the decode's steps run: the median of 301 ---- */
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void run_latency(void)
{
    static const struct { int64_t n; int argmax; const char *what; } cs[] = {
        {1, 0, "one add of 1 f32, 4 B out"},
        {32000, 0, "one add of 32000 f32, 128000 B out"},
        {32000, 1, "an add of 32000 f32 and its argmax, 128004 B out (the decode's outputs)"},
        {32000, 2, "an add of 32000 f32, only its argmax out (4 B)"}};
    size_t j;
    for (j = 0; j < sizeof cs / sizeof cs[0]; j++) {
        glc_graph *g;
        glc_plan *p = NULL;
        glc_compile_desc cd = {0};
        glc_tensor x, y;
        float *in = calloc((size_t)cs[j].n, 4);
        const void *ins[1], *outs[2];
        double t[301];
        int r, ok = in && glc_graph_create(dev, &g) == GLC_OK;
        if (ok) {
            x = glc_graph_input(g, "x", GLC_DTYPE_F32, 1, &cs[j].n);
            y = glc_add(g, x, x);
            if (cs[j].argmax != 2)
                glc_graph_output(g, "y", y);
            if (cs[j].argmax)
                glc_graph_output(g, "i", glc_argmax(g, y));
            ok = glc_graph_compile(g, &cd, &p) == GLC_OK;
            glc_graph_destroy(g);
        }
        ins[0] = in;
        for (r = -50; ok && r < 301; r++) {
            double t0 = now_s();
            in[0] = (float)r;
            ok = glc_plan_run_raw(p, ins, outs) == GLC_OK;
            if (r >= 0)
                t[r] = now_s() - t0;
        }
        if (ok) {
            qsort(t, 301, sizeof t[0], cmp_dbl);
            printf("| run latency | %s | %.1f us a run (median; 10%%: %.1f, 90%%: %.1f) | | |\n",
                   cs[j].what, t[150] * 1e6, t[30] * 1e6, t[270] * 1e6);
        } else {
            printf("| run latency | %s | failed: %s | | |\n", cs[j].what, glc_device_errmsg(dev));
        }
        glc_plan_destroy(p);
        free(in);
    }
    last_busy = now_s();
}

/* ---- llvmpipe's load paths (issue 17): z = x + y with x and y read as
 * buffer textures (texelFetch of an RGBA32F samplerBuffer over the same
 * buffer objects) against SSBO loads. Mesa 22's llvmpipe turns an SSBO
 * load into a loop over the SIMD lanes with a bounds test and a branch a
 * component; a texel fetch is one gather. Raw GL (dev->gl): the library
 * binds no textures yet. ---- */
static const char tex_src_ssbo[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(std430, binding = 0) readonly buffer A { vec4 a[]; };\n"
    "layout(std430, binding = 1) readonly buffer B { vec4 b[]; };\n"
    "layout(std430, binding = 2) writeonly buffer O { vec4 o[]; };\n"
    "void main() { uint i = gl_GlobalInvocationID.x; if (i < glc_p[0]) o[i] = a[i] + b[i]; }\n";
static const char tex_src_fetch[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(binding = 0) uniform highp samplerBuffer ta;\n"
    "layout(binding = 1) uniform highp samplerBuffer tb;\n"
    "layout(std430, binding = 2) writeonly buffer O { vec4 o[]; };\n"
    "void main() { uint i = gl_GlobalInvocationID.x; if (i < glc_p[0])\n"
    "  o[i] = texelFetch(ta, int(i)) + texelFetch(tb, int(i)); }\n";
static const char tex_src_image[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(binding = 0) uniform highp samplerBuffer ta;\n"
    "layout(binding = 1) uniform highp samplerBuffer tb;\n"
    "layout(rgba32f, binding = 0) writeonly uniform highp imageBuffer io;\n"
    "void main() { uint i = gl_GlobalInvocationID.x; if (i < glc_p[0])\n"
    "  imageStore(io, int(i), texelFetch(ta, int(i)) + texelFetch(tb, int(i))); }\n";
static const char tex_src_fetch4[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(binding = 0) uniform highp samplerBuffer ta;\n"
    "layout(binding = 1) uniform highp samplerBuffer tb;\n"
    "layout(std430, binding = 2) writeonly buffer O { vec4 o[]; };\n"
    "void main() { uint i0 = gl_WorkGroupID.x * uint(GLC_LOCAL_SIZE_X) * 4u + gl_LocalInvocationID.x;\n"
    "  for (uint k = 0u; k < 4u; k++) { uint i = i0 + k * uint(GLC_LOCAL_SIZE_X);\n"
    "    if (i < glc_p[0]) o[i] = texelFetch(ta, int(i)) + texelFetch(tb, int(i)); } }\n";

static const char tex_src_lib[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(binding = 0) uniform highp samplerBuffer ta;\n"
    "layout(binding = 1) uniform highp samplerBuffer tb;\n"
    "layout(std430, binding = 2) writeonly buffer O { vec4 o[]; };\n"
    "void main() { uint n4 = glc_p[0], i0 = glc_global_index();\n"
    "  if (glc_group_out_of_range()) return;\n"
    "  for (uint k = 0u; k < 1u; k++) { uint i = i0 + k; if (i >= n4) return;\n"
    "    o[i] = texelFetch(ta, int(i)) + texelFetch(tb, int(i)); } }\n";

static void tex_probe(glc_buffer *X, glc_buffer *Y, glc_buffer *Z, int64_t n)
{
    static const struct { const char *name, *src; int per, tex, image; } pk[] = {
        {"SSBO loads, SSBO store (a vec4 an invocation)", tex_src_ssbo, 1, 0, 0},
        {"texel fetches, SSBO store", tex_src_fetch, 1, 1, 0},
        {"texel fetches, image store", tex_src_image, 1, 1, 1},
        {"texel fetches, SSBO store, 4 vec4 an invocation", tex_src_fetch4, 4, 1, 0},
        {"texel fetches, SSBO store, binary.comp's shape", tex_src_lib, 1, 1, 0}};
    static const uint32_t locals[] = {128, 256};
    GLuint tex[3] = {0, 0, 0};
    glc__glstate gs;
    size_t j, l;
    uint32_t vecs = (uint32_t)(n / 4);
    char size[160];
    if (!dev->gl.glTexBufferRangeOES) {
        printf("| tex probe | | no glTexBufferRangeOES | | |\n");
        return;
    }
    for (j = 0; j < sizeof pk / sizeof pk[0]; j++)
        for (l = 0; l < sizeof locals / sizeof locals[0]; l++) {
            glc_kernel_desc kd;
            glc_kernel *k = NULL;
            double t0, t = 0;
            int reps = 4, r, i;
            memset(&kd, 0, sizeof kd);
            kd.name = "tex probe", kd.source = pk[j].src, kd.local_size_x = locals[l];
            kd.defines = "#extension GL_OES_texture_buffer : require";
            if (glc_kernel_create(dev, &kd, &k) != GLC_OK) {
                printf("| tex probe | %s | compile failed: %s | | |\n", pk[j].name, glc_device_errmsg(dev));
                continue;
            }
            if (glc__enter(dev, GLC__TOUCH_PROGRAM | GLC__TOUCH_SSBO | GLC__TOUCH_IMAGE, 3, &gs) != GLC_OK)
                return;
            if (!tex[0]) {
                glc_buffer *bs[3];
                bs[0] = X, bs[1] = Y, bs[2] = Z;
                dev->gl.glGenTextures(3, tex);
                for (i = 0; i < 3; i++) {
                    dev->gl.glBindTexture(GL_TEXTURE_BUFFER_OES, tex[i]);
                    dev->gl.glTexBufferRangeOES(GL_TEXTURE_BUFFER_OES, GL_RGBA32F, glc_buffer_gl_name(bs[i]),
                                                0, (GLsizeiptr)n * 4);
                }
            }
            dev->gl.glUseProgram(k->program);
            dev->gl.glUniform1uiv(k->params_loc, 1, &vecs);
            if (k->total_loc >= 0) /* glc_group_out_of_range's count */
                dev->gl.glUniform1ui(k->total_loc,
                                     (vecs / (uint32_t)pk[j].per + locals[l] - 1) / locals[l]);
            for (i = 0; i < 2; i++) {
                dev->gl.glActiveTexture(GL_TEXTURE0 + (GLenum)i);
                dev->gl.glBindTexture(GL_TEXTURE_BUFFER_OES, tex[i]);
            }
            dev->gl.glActiveTexture(GL_TEXTURE0);
            if (!pk[j].tex) {
                dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, glc_buffer_gl_name(X));
                dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, glc_buffer_gl_name(Y));
            }
            dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, glc_buffer_gl_name(Z));
            if (pk[j].image)
                dev->gl.glBindImageTexture(0, tex[2], 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
            for (;;) {
                dev->gl.glDispatchCompute((GLuint)((vecs / (uint32_t)pk[j].per + locals[l] - 1) / locals[l]), 1, 1);
                dev->gl.glFinish();
                t0 = now_s();
                for (r = 0; r < reps; r++)
                    dev->gl.glDispatchCompute((GLuint)((vecs / (uint32_t)pk[j].per + locals[l] - 1) / locals[l]), 1, 1);
                dev->gl.glFinish();
                t = now_s() - t0;
                if (t >= MIN_TIMED || reps >= 1 << 16)
                    break;
                reps *= 2;
            }
            if (pk[j].image)
                dev->gl.glBindImageTexture(0, 0, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
            glc__leave(dev, &gs);
            { /* checked: z = x + y at a few places */
                float xs[4], ys[4], zs[4];
                int64_t at[3] = {0, n / 2 + 4, n - 4};
                int bad = 0;
                for (i = 0; i < 3; i++) {
                    glc_buffer_read(X, (size_t)at[i] * 4, 16, xs);
                    glc_buffer_read(Y, (size_t)at[i] * 4, 16, ys);
                    glc_buffer_read(Z, (size_t)at[i] * 4, 16, zs);
                    bad += zs[0] != xs[0] + ys[0] || zs[3] != xs[3] + ys[3];
                }
                snprintf(size, sizeof size, "%lld f32 add: %s, local %u%s", (long long)n, pk[j].name,
                         (unsigned)locals[l], bad ? " (WRONG RESULTS)" : "");
            }
            row_bw("tex probe", size, t / reps, 3.0 * n * 4);
            glc_buffer_write(Z, 0, 16, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
            glc_kernel_destroy(k);
        }
    if (glc__enter(dev, 0, 0, &gs) == GLC_OK) {
        dev->gl.glDeleteTextures(3, tex);
        glc__leave(dev, &gs);
    }
}

/* ---- What the GPU streams through GL (issue 13): reads of a weight-sized
 * buffer by a plain kernel (UNROLL 16-byte loads a lane, all issued before
 * any is used, one store a group that never fires), dispatches back to
 * back and with a storage barrier between them (the decode's chain), and
 * the driver's own glCopyBufferSubData: the ceiling a mat-vec can reach,
 * in the same process as its rows. Raw GL (dev->gl). ---- */
static const char read_src[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };\n"
    "layout(std430, binding = 1) writeonly buffer O { uint o[]; };\n"
    "void main() { uint b = gl_WorkGroupID.x * uint(GLC_LOCAL_SIZE_X * UNROLL) + gl_LocalInvocationID.x;\n"
    "  uvec4 v[UNROLL]; for (int k = 0; k < UNROLL; k++) v[k] = w[b + uint(k * GLC_LOCAL_SIZE_X)];\n"
    "  uvec4 x = uvec4(0u); for (int k = 0; k < UNROLL; k++) x ^= v[k];\n"
    "  if ((x.x ^ x.y ^ x.z ^ x.w) == glc_p[0]) o[gl_WorkGroupID.x] = 1u; }\n";

/* The same plain reads in the decode's shape (issue 13): a chain of
 * dispatches, each reading its own slice of a 1 GB buffer (bound with
 * glBindBufferRange, so no two consecutive ones share bytes and L2 holds
 * none of the next), a storage barrier between them. Sizes are the 1b f16
 * products' weights, alone and as a layer's four in turn: the most a
 * mat-vec chain of those sizes can stream through GL here; and the read
 * probe's 192 MB, each dispatch on new bytes (the probe reads the same
 * ones each time); and the Q8_0 and Q4_0 products' bytes. The pool is a
 * library buffer (GL_DYNAMIC_COPY), or with GLC_READ_POOLS raw GL buffers
 * of other usage hints or immutable storage, every byte written first:
 * whether the driver places them differently. Raw GL (dev->gl). */
static void read_chain(void)
{
    static const struct { const char *name; size_t bytes[4]; } shapes[] = {
        {"wo 2048 x 2048", {(size_t)2048 * 2048 * 2}},
        {"qkv 3072 x 2048", {(size_t)3072 * 2048 * 2}},
        {"w2 2048 x 8192", {(size_t)2048 * 8192 * 2}},
        {"w1+w3 16384 x 2048", {(size_t)16384 * 2048 * 2}},
        {"a layer: qkv, wo, w1+w3, w2", {(size_t)3072 * 2048 * 2, (size_t)2048 * 2048 * 2,
                                         (size_t)16384 * 2048 * 2, (size_t)2048 * 8192 * 2}},
        {"192 MB (the read probe's size)", {(size_t)192 << 20}},
#define QB(n, k, b) ((size_t)(n) * (k) / 32 * (b)) /* a 32-value block type's bytes */
        {"q8_0 wo", {QB(2048, 2048, 34)}}, {"q8_0 qkv", {QB(3072, 2048, 34)}},
        {"q8_0 w2", {QB(2048, 8192, 34)}}, {"q8_0 w1+w3", {QB(16384, 2048, 34)}},
        {"q8_0 layer", {QB(3072, 2048, 34), QB(2048, 2048, 34), QB(16384, 2048, 34), QB(2048, 8192, 34)}},
        {"q4_0 wo", {QB(2048, 2048, 18)}}, {"q4_0 qkv", {QB(3072, 2048, 18)}},
        {"q4_0 w2", {QB(2048, 8192, 18)}}, {"q4_0 w1+w3", {QB(16384, 2048, 18)}},
        {"q4_0 layer", {QB(3072, 2048, 18), QB(2048, 2048, 18), QB(16384, 2048, 18), QB(2048, 8192, 18)}}};
#undef QB
    static const struct { const char *name; GLenum usage; GLbitfield storage; } pools[] = {
        {"library buffer (DYNAMIC_COPY)", 0, 0},
        {"STATIC_DRAW", GL_STATIC_DRAW, 0},
        {"STREAM_DRAW", GL_STREAM_DRAW, 0},
        {"STATIC_READ", GL_STATIC_READ, 0},
        {"DYNAMIC_DRAW", GL_DYNAMIC_DRAW, 0},
        {"STATIC_COPY", GL_STATIC_COPY, 0},
        {"glBufferStorageEXT, flags 0", 0, 0},
        {"glBufferStorageEXT, DYNAMIC_STORAGE", 0, 0x0100 /* GL_DYNAMIC_STORAGE_BIT_EXT */}};
    const size_t total = (size_t)1 << 30, fill = (size_t)16 << 20;
    int64_t words = (int64_t)(total / 4), few = 1 << 18;
    glc_buffer *W = NULL, *O = NULL;
    glc_kernel *k = NULL;
    glc_kernel_desc kd;
    glc__glstate gs;
    uint32_t magic = 0x9e3779b9u;
    unsigned char *bytes = malloc(fill);
    size_t s, q, pq, at;
    char size[192];
    if (!bytes || glc_buffer_create(dev, GLC_DTYPE_U32, 1, &words, &W) != GLC_OK ||
        glc_buffer_create(dev, GLC_DTYPE_U32, 1, &few, &O) != GLC_OK) {
        printf("| read chain | | failed: %s | | |\n", glc_device_errmsg(dev));
        goto done;
    }
    for (at = 0; at < fill; at++)
        bytes[at] = (unsigned char)(at * 2654435761u >> 13);
    memset(&kd, 0, sizeof kd);
    kd.name = "read chain", kd.source = read_src, kd.local_size_x = 256, kd.defines = "#define UNROLL 1";
    if (glc_kernel_create(dev, &kd, &k) != GLC_OK) {
        printf("| read chain | | compile failed: %s | | |\n", glc_device_errmsg(dev));
        goto done;
    }
    /* the library's buffer; or the indices in GLC_READ_POOLS ("0,1,2,1,0") */
    const char *order = getenv("GLC_READ_POOLS");
    size_t n = sizeof pools / sizeof pools[0], norder = 1;
    if (order && *order)
        for (norder = 1, at = 0; order[at]; at++)
            norder += order[at] == ',';
    for (pq = 0; pq < norder; pq++) {
        GLuint name = 0;
        int storage;
        q = 0;
        if (order && *order) {
            const char *c = order;
            for (at = 0; at < pq; c++)
                at += *c == ',';
            q = (size_t)strtoul(c, NULL, 10) % n;
        }
        storage = strncmp(pools[q].name, "glBufferStorage", 15) == 0;
        if (glc__enter(dev, GLC__TOUCH_PROGRAM | GLC__TOUCH_SSBO | GLC__TOUCH_COPY, 2, &gs) != GLC_OK)
            break;
        if (q == 0) {
            name = glc_buffer_gl_name(W);
        } else if (storage && !dev->gl.glBufferStorageEXT) {
            glc__leave(dev, &gs);
            printf("| read chain | %s | not available | | |\n", pools[q].name);
            continue;
        } else {
            dev->gl.glGenBuffers(1, &name);
            dev->gl.glBindBuffer(GL_COPY_WRITE_BUFFER, name);
            if (storage)
                dev->gl.glBufferStorageEXT(GL_COPY_WRITE_BUFFER, (GLsizeiptr)total, NULL,
                                           pools[q].storage);
            else
                dev->gl.glBufferData(GL_COPY_WRITE_BUFFER, (GLsizeiptr)total, NULL, pools[q].usage);
        }
        { /* every byte written, copied from one staging buffer (immutable
           * storage without DYNAMIC_STORAGE takes no glBufferSubData) */
            GLuint src = 0;
            dev->gl.glGenBuffers(1, &src);
            dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, src);
            dev->gl.glBufferData(GL_COPY_READ_BUFFER, (GLsizeiptr)fill, bytes, GL_STATIC_DRAW);
            dev->gl.glBindBuffer(GL_COPY_WRITE_BUFFER, name);
            for (at = 0; at < total; at += fill)
                dev->gl.glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0,
                                            (GLintptr)at, (GLsizeiptr)fill);
            dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, 0);
            dev->gl.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
            dev->gl.glDeleteBuffers(1, &src);
        }
        dev->gl.glUseProgram(k->program);
        dev->gl.glUniform1uiv(k->params_loc, 1, &magic);
        dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, glc_buffer_gl_name(O));
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            size_t moved = 0, per = 0, j;
            int nb = 0, reps = 64, r, pass;
            double t0, t1, t = 0;
            while (nb < 4 && shapes[s].bytes[nb])
                per += shapes[s].bytes[nb++];
            at = 0;
            /* warm-up chains (on a GPU for SETTLE_S: the fill left it idle,
             * its clocks low), then the timed one */
            for (pass = 0, t1 = now_s(); pass < 2; pass += !gpu || now_s() - t1 > SETTLE_S) {
                dev->gl.glFinish();
                t0 = now_s();
                moved = 0;
                for (r = 0; r < reps; r++)
                    for (j = 0; j < (size_t)nb; j++) {
                        size_t b = shapes[s].bytes[j];
                        if (at + b > total)
                            at = 0;
                        dev->gl.glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, name, (GLintptr)at,
                                                  (GLsizeiptr)b);
                        dev->gl.glDispatchCompute((GLuint)(b / 16 / 256), 1, 1);
                        dev->gl.glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
                        at += (b + 4095) / 4096 * 4096;
                        moved += b;
                    }
                dev->gl.glFinish();
                t = now_s() - t0;
            }
            snprintf(size, sizeof size, "%s: %s, %.1f MB a link%s", pools[q].name, shapes[s].name,
                     (double)per / 1e6, nb > 1 ? " (4 dispatches)" : "");
            row_bw("read chain", size, t / reps, (double)moved / reps);
        }
        dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0);
        if (q > 0)
            dev->gl.glDeleteBuffers(1, &name);
        glc__leave(dev, &gs);
    }
done:
    glc_kernel_destroy(k);
    glc_buffer_destroy(W);
    glc_buffer_destroy(O);
    free(bytes);
}

static void read_probe(void)
{
    static const uint32_t locals[] = {256, 512}, unrolls[] = {1, 4, 8, 16};
    const size_t bytes = (size_t)192 << 20; /* past the 50 MB of L2; 49152 groups of 256 at most */
    glc_buffer *W = NULL, *O = NULL, *C = NULL;
    glc__glstate gs;
    size_t l, u;
    int bar;
    char size[160];
    int64_t words = (int64_t)(bytes / 4), few = 1 << 18;
    if (glc_buffer_create(dev, GLC_DTYPE_U32, 1, &words, &W) != GLC_OK ||
        glc_buffer_create(dev, GLC_DTYPE_U32, 1, &words, &C) != GLC_OK ||
        glc_buffer_create(dev, GLC_DTYPE_U32, 1, &few, &O) != GLC_OK) {
        printf("| read probe | | failed: %s | | |\n", glc_device_errmsg(dev));
        goto done;
    }
    for (l = 0; l < sizeof locals / sizeof locals[0]; l++)
        for (u = 0; u < sizeof unrolls / sizeof unrolls[0]; u++)
            for (bar = 0; bar < 2; bar++) {
                glc_kernel_desc kd;
                glc_kernel *k = NULL;
                char defs[64];
                uint32_t groups = (uint32_t)(bytes / 16 / (locals[l] * unrolls[u])), magic = 0x9e3779b9u;
                double t0, t = 0;
                int reps = 4, r, i;
                memset(&kd, 0, sizeof kd);
                snprintf(defs, sizeof defs, "#define UNROLL %u", (unsigned)unrolls[u]);
                kd.name = "read probe", kd.source = read_src, kd.local_size_x = locals[l];
                kd.defines = defs;
                if (glc_kernel_create(dev, &kd, &k) != GLC_OK) {
                    printf("| read probe | | compile failed: %s | | |\n", glc_device_errmsg(dev));
                    continue;
                }
                if (glc__enter(dev, GLC__TOUCH_PROGRAM | GLC__TOUCH_SSBO, 2, &gs) != GLC_OK) {
                    glc_kernel_destroy(k);
                    goto done;
                }
                dev->gl.glUseProgram(k->program);
                dev->gl.glUniform1uiv(k->params_loc, 1, &magic);
                dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, glc_buffer_gl_name(W));
                dev->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, glc_buffer_gl_name(O));
                for (;;) {
                    for (i = 0; i < 3; i++)
                        dev->gl.glDispatchCompute(groups, 1, 1);
                    dev->gl.glFinish();
                    t0 = now_s();
                    for (r = 0; r < reps; r++) {
                        dev->gl.glDispatchCompute(groups, 1, 1);
                        if (bar)
                            dev->gl.glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
                    }
                    dev->gl.glFinish();
                    t = now_s() - t0;
                    if (t >= MIN_TIMED || reps >= 1 << 14)
                        break;
                    reps *= 2;
                }
                glc__leave(dev, &gs);
                snprintf(size, sizeof size, "%zu MB read: local %u, %u loads a lane in flight, %s",
                         bytes >> 20, (unsigned)locals[l], (unsigned)unrolls[u],
                         bar ? "a barrier between dispatches" : "back to back");
                row_bw("read probe", size, t / reps, (double)bytes);
                glc_kernel_destroy(k);
            }
    if (glc__enter(dev, GLC__TOUCH_COPY, 0, &gs) == GLC_OK) { /* the driver's copy: read + write */
        double t0, t;
        int reps = 4, r;
        GLuint src = glc_buffer_gl_name(W), dst = glc_buffer_gl_name(C);
        dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, src);
        dev->gl.glBindBuffer(GL_COPY_WRITE_BUFFER, dst);
        for (;;) {
            dev->gl.glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)bytes);
            dev->gl.glFinish();
            t0 = now_s();
            for (r = 0; r < reps; r++)
                dev->gl.glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0,
                                            (GLsizeiptr)bytes);
            dev->gl.glFinish();
            t = now_s() - t0;
            if (t >= MIN_TIMED || reps >= 1 << 14)
                break;
            reps *= 2;
        }
        dev->gl.glBindBuffer(GL_COPY_READ_BUFFER, 0);
        dev->gl.glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        glc__leave(dev, &gs);
        snprintf(size, sizeof size, "%zu MB glCopyBufferSubData (read + write)", bytes >> 20);
        row_bw("read probe", size, t / reps, 2.0 * (double)bytes);
    }
done:
    glc_buffer_destroy(W);
    glc_buffer_destroy(C);
    glc_buffer_destroy(O);
}

/* ---- cases ---- */

typedef struct ctx {
    glc_view a, b, c, d, e;
    float f;
    glc_rope_desc rope;
    glc_matmul_desc mm;
    glc_sdpa_desc sdpa;
} ctx;

static glc_status r_add(glc_session *s, void *p) { ctx *c = p; return glc_op_add(s, c->a, c->b, c->c); }

/* the probe kernels (issue 17): one dispatch of probe_k over x, y -> z */
static glc_kernel *probe_k;
static glc_buffer *probe_x, *probe_y, *probe_z;
static uint32_t probe_n;
static uint64_t probe_groups;
static glc_status r_probe(glc_session *s, void *p)
{
    glc_binding b[3];
    glc_dispatch_desc d;
    int i;
    (void)p;
    memset(b, 0, sizeof b);
    memset(&d, 0, sizeof d);
    b[0].buffer = probe_x, b[1].buffer = probe_y, b[2].buffer = probe_z;
    for (i = 0; i < 3; i++) {
        b[i].size = (size_t)probe_n * 4;
        b[i].access = i < 2 ? GLC_READ : GLC_WRITE;
    }
    d.kernel = probe_k;
    d.groups = probe_groups;
    d.bindings = b;
    d.binding_count = 3;
    d.params = &probe_n;
    d.param_count = 1;
    return glc_session_dispatch(s, &d);
}

/* A decode mat-vec's operands: 1 x k in X times [n, k]^T weights of type t
 * (filled into W) into Z. The weights' bytes, or -1 when they do not fit
 * W or the row is not wanted. */
static double mv_setup(ctx *c, glc_buffer *X, glc_buffer *W, glc_buffer *Z, glc_dtype t,
                       int64_t n, int64_t k, int wanted)
{
    double wbytes = glc_dtype_size(t) ? (double)n * k * glc_dtype_size(t)
                                      : (double)n * glc_dtype_row_bytes(t, k);
    if (wbytes > (double)glc_buffer_size(W) || !wanted)
        return -1;
    fill_weights(W, t, n * k);
    c->a = v1(X, GLC_DTYPE_F32, 2, 1, k, 1, 1);
    c->b = v1(W, t, 2, n, k, 1, 1);
    c->c = v1(Z, GLC_DTYPE_F32, 2, 1, n, 1, 1);
    c->d.buffer = NULL;
    c->mm.transpose_b = 1;
    return wbytes;
}

/* The decode mat-vec with its weights read from memory: `copies` copies of
 * them in W, each run reading the next (mv_rotate). One matrix read again
 * and again stays in a large L2 (50 MB on the H100), which a decode's
 * weights, each read once a token, never do. */
#define MV_MEMORY_BYTES (256.0 * 1024 * 1024) /* the copies span at least this, W permitting */
static int64_t mv_copies;
static size_t mv_stride;
static uint64_t mv_turn;

/* Copies of the n x k weights of type t placed in W (an aligned stride);
 * 0 where W holds fewer than two. */
static int64_t mv_spread(glc_buffer *W, glc_dtype t, int64_t n, int64_t k, double wbytes)
{
    glc_device_info in;
    size_t align, bytes;
    unsigned char *h;
    int64_t i;
    if (glc_device_get_info(dev, &in) != GLC_OK)
        return 0;
    align = in.limits.ssbo_offset_alignment ? in.limits.ssbo_offset_alignment : 256;
    mv_stride = ((size_t)wbytes + align - 1) / align * align;
    mv_copies = (int64_t)(glc_buffer_size(W) / mv_stride);
    if ((double)mv_copies * (double)mv_stride > MV_MEMORY_BYTES)
        mv_copies = (int64_t)(MV_MEMORY_BYTES / (double)mv_stride) + 1;
    if (mv_copies < 2 || !(h = weight_bytes(t, n * k, 1.0f, &bytes)))
        return mv_copies = 0;
    for (i = 0; i < mv_copies; i++)
        glc_buffer_write(W, (size_t)i * mv_stride, bytes, h);
    free(h);
    mv_turn = 0;
    return mv_copies;
}

/* The dispatch chain (issue 13): CHAIN adds of a small vector, each
 * reading the previous one's output (a barrier each: the decode's kind of
 * chain) or each writing its own range (no barrier between them). */
#define CHAIN 64
static int chain_dependent;
static glc_status r_chain(glc_session *s, void *p)
{
    ctx *c = p;
    glc_view x = c->a, y = c->c;
    glc_status st = GLC_OK;
    int i;
    for (i = 0; i < CHAIN && st == GLC_OK; i++) {
        if (chain_dependent) {
            st = glc_op_add(s, i % 2 ? y : x, c->b, i % 2 ? x : y);
        } else {
            y.offset = c->c.offset + (size_t)i * (size_t)c->c.shape[0] * 4;
            st = glc_op_add(s, x, c->b, y);
        }
    }
    return st;
}
static glc_status r_silu(glc_session *s, void *p) { ctx *c = p; return glc_op_unary(s, GLC_UNARY_SILU, c->a, 0, c->c); }
static glc_status r_softmax(glc_session *s, void *p) { ctx *c = p; return glc_op_softmax(s, c->a, NULL, c->c); }
static glc_status r_rms(glc_session *s, void *p) { ctx *c = p; return glc_op_rms_norm(s, c->a, c->b, 1e-6f, c->c); }
static glc_status r_rope(glc_session *s, void *p) { ctx *c = p; return glc_op_rope(s, c->a, c->b, &c->rope, c->c); }
static glc_status r_copy_t(glc_session *s, void *p)
{
    static const int perm[2] = {1, 0};
    ctx *c = p;
    return glc_op_copy(s, c->a, perm, c->c);
}
static glc_status r_get_rows(glc_session *s, void *p) { ctx *c = p; return glc_op_get_rows(s, c->a, c->b, c->c); }
static glc_status r_matmul(glc_session *s, void *p) { ctx *c = p; return glc_op_matmul(s, c->a, c->b, c->d, &c->mm, c->c); }
static glc_status r_matmul_q(glc_session *s, void *p) { ctx *c = p; return glc_op_matmul_q(s, c->a, c->b, c->d, c->c); }
/* the mat-vec of c, its weights the next of mv_spread's copies */
static glc_status r_mv_rotate(glc_session *s, void *p)
{
    ctx c = *(ctx *)p;
    c.b.offset += (size_t)(mv_turn++ % (uint64_t)mv_copies) * mv_stride;
    return glc_dtype_size(c.b.dtype) == 0 ? glc_op_matmul_q(s, c.a, c.b, c.d, c.c)
                                          : glc_op_matmul(s, c.a, c.b, c.d, &c.mm, c.c);
}
/* The L2 warm probe (issue 13): a slow one-group dispatch (the attention
 * of a short context, say), then the next mat-vec's weights, a copy from
 * memory (mv_spread): with warm_mode 1 a dispatch reading those weights
 * runs beside the slow one (no barrier between them), so the mat-vec after
 * the barrier finds them in L2. */
static const char warm_src[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };\n"
    "layout(std430, binding = 1) writeonly buffer S { uint s[]; };\n"
    "void main() { uint n = glc_p[0], step = glc_p[1], i = glc_global_index();\n"
    "  uvec4 x = uvec4(0u);\n"
    "  for (; i + 3u * step < n; i += 4u * step)\n"
    "    x ^= w[i] ^ w[i + step] ^ w[i + 2u * step] ^ w[i + 3u * step];\n"
    "  for (; i < n; i += step) x ^= w[i];\n"
    "  if (x.x == glc_p[2] && glc_p[3] != 0u) s[0] = x.y; }\n";
static const char slow_src[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(std430, binding = 0) writeonly buffer S { uint s[]; };\n"
    "void main() { uint h = gl_LocalInvocationID.x;\n"
    "  for (uint k = 0u; k < glc_p[0]; k++) h = h * 1664525u + 1013904223u;\n"
    "  s[gl_LocalInvocationID.x] = h & glc_p[1]; }\n";
static glc_kernel *warm_k, *slow_k;
static glc_buffer *warm_sink, *slow_out;
static uint32_t slow_spin;
static int warm_mode; /* 0: slow, mat-vec; 1: slow + warm, mat-vec; 2: slow only; 3: warm, mat-vec */
static glc_status r_warm(glc_session *s, void *p)
{
    ctx c = *(ctx *)p;
    glc_binding b[2];
    glc_dispatch_desc d;
    uint32_t par[4];
    glc_status st = GLC_OK;
    size_t off = (size_t)(mv_turn % (uint64_t)mv_copies) * mv_stride;
    size_t bytes = glc_view_bytes(&c.b) / 16 * 16;
    memset(b, 0, sizeof b);
    memset(&d, 0, sizeof d);
    if (warm_mode != 3 && slow_spin) {
        b[0].buffer = slow_out, b[0].size = 256, b[0].access = GLC_WRITE;
        par[0] = slow_spin, par[1] = 0;
        d.kernel = slow_k, d.groups = 1, d.bindings = b, d.binding_count = 1;
        d.params = par, d.param_count = 2;
        st = glc_session_dispatch(s, &d);
    }
    if (st == GLC_OK && (warm_mode == 1 || warm_mode == 3)) {
        b[0].buffer = c.b.buffer, b[0].offset = c.b.offset + off, b[0].size = bytes;
        b[0].access = GLC_READ;
        b[1].buffer = warm_sink, b[1].size = 16, b[1].access = GLC_READ; /* (never written) */
        par[0] = (uint32_t)(bytes / 16), par[1] = 528u * 256u, par[2] = 0x9e3779b9u, par[3] = 0;
        d.kernel = warm_k, d.groups = 528, d.bindings = b, d.binding_count = 2;
        d.params = par, d.param_count = 4;
        st = glc_session_dispatch(s, &d);
    }
    if (st == GLC_OK)
        st = glc_session_barrier(s);
    if (warm_mode == 2) {
        mv_turn++;
        return st;
    }
    return st == GLC_OK ? r_mv_rotate(s, p) : st;
}

static glc_status r_decode(glc_session *s, void *p) { ctx *c = p; return glc_op_sdpa_decode(s, c->a, c->b, c->d, &c->sdpa, c->e, c->c); }

/* ---- references ---- */

/* The same chain as a compiled plan: replayed, runs pipelined (the GPU runs
 * one while the next is encoded: the time is the GPU's unless encoding is
 * slower), and once profiled (each dispatch timed on the GPU). */
static void plan_chain(int64_t len, int width, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_compile_desc cd = {GLC_COMPILE_NO_FUSE | flags};
    glc_tensor x[8], b, y;
    glc_plan_dispatch_time e[CHAIN + 8];
    glc_plan_profile prof;
    glc_plan_slice sl[1];
    float *in = calloc((size_t)len, 4), *out = calloc((size_t)len * 32, 4);
    const void *ins[32];
    void *outs[32];
    double t0, t;
    uint64_t ns = 0;
    int i, runs = 32;
    if (glc_graph_create(dev, &g) != GLC_OK || !in || !out)
        return;
    /* width chains interleaved: a barrier every width dispatches */
    x[0] = glc_graph_input(g, "x", GLC_DTYPE_F32, 1, &len);
    b = glc_graph_param(g, "b", GLC_DTYPE_F32, 1, &len);
    for (i = 1; i < width; i++)
        x[i] = x[0];
    for (i = 0; i < CHAIN; i++)
        x[i % width] = glc_add(g, x[i % width], b);
    y = x[0];
    for (i = 1; i < width; i++) /* joined at the end (width - 1 more adds) */
        y = glc_add(g, y, x[i]);
    glc_graph_output(g, "y", y);
    if (glc_graph_compile(g, &cd, &p) != GLC_OK) {
        printf("| dispatch chain | plan | failed: %s | | |\n", glc_device_errmsg(dev));
        glc_graph_destroy(g);
        return;
    }
    glc_graph_destroy(g);
    glc_plan_set_param(p, "b", in, (size_t)len);
    for (i = 0; i < runs; i++) {
        ins[i] = in;
        outs[i] = out + (size_t)i * (size_t)len;
    }
    glc_plan_run_pipelined(p, runs, ins, outs); /* warm-up */
    t0 = now_s();
    glc_plan_run_pipelined(p, runs, ins, outs);
    t = now_s() - t0;
    memset(&prof, 0, sizeof prof);
    prof.entries = e;
    prof.capacity = CHAIN + 8;
    if (glc_plan_run_profiled(p, ins, sl, &prof) == GLC_OK)
        for (i = 0; i < (int)prof.count; i++)
            ns += prof.entries[i].gpu_ns;
    {
        glc_plan_info pi;
        glc_plan_stats(p, &pi);
        printf("| dispatch chain | plan of %d adds of %lld f32 in %d interleaved chains%s (%u "
               "dispatches, %u barriers, arena %zu bytes), %d runs pipelined | %.2f us a dispatch "
               "(GPU-timed one by one: %.2f us) | | |\n",
               CHAIN, (long long)len, width, flags ? ", memory-tight" : "", pi.dispatches,
               pi.barriers, pi.arena_bytes, runs, t * 1e6 / (runs * pi.dispatches),
               prof.count ? ns / 1e3 / prof.count : 0.0);
    }
    glc_plan_destroy(p);
    free(in);
    free(out);
}

/* Seconds a run of p, the best of 5 batches of `runs` pipelined runs
 * (calls on a fresh GPU machine varied up to 2.5x; the best is the least
 * disturbed). */
static double pipelined_best(glc_plan *p, int runs, const void *const *ins, void *const *outs)
{
    double best = 0, t0, t;
    int k;
    if (settle())
        for (t0 = now_s(); now_s() - t0 < SETTLE_S;)
            glc_plan_run_pipelined(p, runs, ins, outs);
    for (k = 0; k < 5; k++) {
        t0 = now_s();
        glc_plan_run_pipelined(p, runs, ins, outs);
        t = (now_s() - t0) / runs;
        if (k == 0 || t < best)
            best = t;
    }
    last_busy = now_s();
    return best;
}

/* Wide plans (issue 14), branches the data lets run together:
 * kind 0, MoE-like: `width` experts, each silu(x W_e^T) V_e^T (f16
 * weights, x [rows, k]), summed; kind 1: `width` sequences' attention, each
 * its own q [rows, 8, 64] over its own f16 cache [kv, 8, 64], outputs
 * summed. Compiled with `flags`, timed as plan_chain's plans (pipelined,
 * the best of 5 batches). */
static void plan_wide(int kind, int width, int64_t rows, int64_t k, uint32_t flags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_compile_desc cd = {flags};
    glc_matmul_desc nt = {1};
    glc_sdpa_desc sd;
    glc_tensor x, y = {0}, t;
    int64_t xs[2] = {rows, k}, ws[2] = {k, k}, qs[3] = {rows, 8, 64}, cs[3] = {k, 8, 64};
    size_t inb = (size_t)(kind ? rows * 512 : rows * k), i;
    float *in = calloc(inb, 4), *out = calloc(inb * 8, 4);
    void *wbytes = calloc((size_t)(k * k), 2);
    const void *ins[8];
    void *outs[8];
    glc_plan_info pi;
    double t1;
    int e;
    memset(&sd, 0, sizeof sd);
    sd.q_offset = -1;
    if (!in || !out || !wbytes || glc_graph_create(dev, &g) != GLC_OK)
        goto done;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, kind ? 3 : 2, kind ? qs : xs);
    for (e = 0; e < width; e++) {
        char a[16], b[16];
        snprintf(a, sizeof a, "a%d", e);
        snprintf(b, sizeof b, "b%d", e);
        if (kind == 0) {
            t = glc_matmul(g, x, glc_graph_param(g, a, GLC_DTYPE_F16, 2, ws), glc_none(), &nt);
            t = glc_unary(g, GLC_UNARY_SILU, t, 0);
            t = glc_matmul(g, t, glc_graph_param(g, b, GLC_DTYPE_F16, 2, ws), glc_none(), &nt);
        } else {
            t = glc_sdpa(g, glc_scale(g, x, 1.0f + (float)e, 0.0f),
                         glc_graph_param(g, a, GLC_DTYPE_F16, 3, cs),
                         glc_graph_param(g, b, GLC_DTYPE_F16, 3, cs), &sd);
        }
        y = e ? glc_add(g, y, t) : t;
    }
    glc_graph_output(g, "y", y);
    if (glc_graph_compile(g, &cd, &p) != GLC_OK) {
        printf("| wide plan | %s | failed: %s | | |\n", kind ? "attention" : "experts",
               glc_device_errmsg(dev));
        glc_graph_destroy(g);
        goto done;
    }
    glc_graph_destroy(g);
    for (e = 0; e < width; e++) {
        char a[16], b[16];
        snprintf(a, sizeof a, "a%d", e);
        snprintf(b, sizeof b, "b%d", e);
        size_t pb = (size_t)(kind ? k * 512 : k * k) * 2;
        glc_plan_set_param_typed(p, a, wbytes, pb, GLC_DTYPE_F16);
        glc_plan_set_param_typed(p, b, wbytes, pb, GLC_DTYPE_F16);
    }
    for (i = 0; i < 8; i++) {
        ins[i] = in;
        outs[i] = out + i * inb;
    }
    if (glc_plan_run_pipelined(p, 8, ins, outs) != GLC_OK) { /* warm-up */
        printf("| wide plan | %s | failed: %s | | |\n", kind ? "attention" : "experts",
               glc_device_errmsg(dev));
        goto done;
    }
    t1 = pipelined_best(p, 8, ins, outs);
    glc_plan_stats(p, &pi);
    printf("| wide plan | %d %s, %lld rows%s (%u dispatches, %u barriers, the DAG's least %u; arena "
           "%zu bytes) | %.1f us a run | | |\n",
           width, kind ? "sequences' attention over 1024 f16 keys, 8 heads of 64" : "experts 1024 x 1024 f16 (up, silu, down)",
           (long long)rows, flags & GLC_COMPILE_MEMORY_TIGHT ? ", memory-tight" : "",
           pi.dispatches, pi.barriers, pi.min_barriers, pi.arena_bytes, t1 * 1e6);
done:
    glc_plan_destroy(p);
    free(in);
    free(out);
    free(wbytes);
}

/* A chain of MV_LEN dependent mat-vecs as a compiled plan, replayed with
 * the runs pipelined, so the time is the GPU's: x [1, k] times W [n, k]^T,
 * then times V [k, n]^T (alternately; V = W when square), each reading the
 * last one's output as a decode step does. mv_make builds one (under the
 * device's tune, glc__device_tune), mv_time gives seconds per mat-vec pair
 * (one mat-vec when square), best of its batches. */
#define MV_LEN 16
#define MV_RUNS 16
typedef struct mv_plan {
    glc_plan *p;
    int sq;
    int64_t k;
    double bytes; /* weight bytes per pair */
    float *in, *out;
    const void *ins[MV_RUNS];
    void *outs[MV_RUNS];
} mv_plan;

static void mv_free(mv_plan *c)
{
    glc_plan_destroy(c->p);
    free(c->in);
    free(c->out);
    memset(c, 0, sizeof *c);
}

static int mv_make(mv_plan *c, glc_dtype t, int64_t n, int64_t k)
{
    glc_graph *g;
    glc_compile_desc cd = {0};
    glc_matmul_desc nt = {1};
    int64_t ws[2] = {n, k}, vs[2] = {k, n}, xs[2] = {1, k};
    int q = glc_dtype_size(t) == 0, i, ok = 0;
    glc_tensor x, mats[8];
    size_t wb, vb = 0;
    unsigned char *wh = weight_bytes(t, n * k, 1.0f / sqrtf((float)k), &wb), *vh;
    memset(c, 0, sizeof *c);
    c->sq = n == k;
    c->k = k;
    vh = c->sq ? NULL : weight_bytes(t, n * k, 1.0f / sqrtf((float)n), &vb);
    c->in = calloc((size_t)k, 4);
    c->out = calloc((size_t)k * MV_RUNS, 4);
    if (!wh || (!c->sq && !vh) || !c->in || !c->out || glc_graph_create(dev, &g) != GLC_OK)
        goto done;
    for (i = 0; i < k; i++)
        c->in[i] = (float)((i * 37) % 17) / 17.0f - 0.5f;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    /* 8 matrices of their own (each step's weights come from memory, not
     * from the L2 cache the last steps filled, as in a decode) */
    for (i = 0; i < 8; i++) { /* step i takes mats[i % 8]: w, v alternately unless square */
        char name[16];
        int odd = !c->sq && i % 2;
        snprintf(name, sizeof name, "%c%d", odd ? 'v' : 'w', i);
        mats[i] = glc_graph_param(g, name, t, 2, odd ? vs : ws);
    }
    for (i = 0; i < MV_LEN; i++)
        x = q ? glc_matmul_q(g, x, mats[i % 8], glc_none())
              : glc_matmul(g, x, mats[i % 8], glc_none(), &nt);
    glc_graph_output(g, "y", x);
    i = glc_graph_compile(g, &cd, &c->p) == GLC_OK;
    glc_graph_destroy(g);
    if (!i)
        goto done;
    for (i = 0; i < 8; i++) {
        char name[16];
        int odd = !c->sq && i % 2;
        snprintf(name, sizeof name, "%c%d", odd ? 'v' : 'w', i);
        if (glc_plan_set_param_typed(c->p, name, odd ? vh : wh, odd ? vb : wb, t) != GLC_OK)
            goto done;
    }
    for (i = 0; i < MV_RUNS; i++) {
        c->ins[i] = c->in;
        c->outs[i] = c->out + (size_t)i * (size_t)k;
    }
    if (glc_plan_run_pipelined(c->p, MV_RUNS, c->ins, c->outs) != GLC_OK) /* warm-up */
        goto done;
    c->bytes = (double)wb * (c->sq ? 1 : 2);
    ok = 1;
done:
    free(wh);
    free(vh);
    if (!ok)
        mv_free(c);
    return ok;
}

static double mv_time(mv_plan *c)
{
    return pipelined_best(c->p, MV_RUNS, c->ins, c->outs) / (c->sq ? MV_LEN : MV_LEN / 2);
}

/* Each dispatch timed on the GPU (every one inflated by the queries): the
 * W and the V products apart, us. */
static void mv_profile(mv_plan *c, double prof_us[2])
{
    glc_plan_dispatch_time e[MV_LEN];
    glc_plan_profile prof;
    glc_plan_slice sl[1];
    int i;
    memset(&prof, 0, sizeof prof);
    prof.entries = e;
    prof.capacity = MV_LEN;
    prof_us[0] = prof_us[1] = 0;
    if (glc_plan_run_profiled(c->p, c->ins, sl, &prof) == GLC_OK && prof.count == MV_LEN)
        for (i = 0; i < MV_LEN; i++)
            prof_us[i % 2] += prof.entries[i].gpu_ns / 1e3 / (MV_LEN / 2);
}

/* The 1b decode's MLP block (weights of type wt, d 2048, ffn 8192)
 * FFN_BLOCKS times in a chain, each with weights of its own: x += w2
 * (silu(w1 h) * w3 h), h = rms_norm(x, g) with norm, else x: the fused plan
 * runs w1 | w3 (norm prologue, SwiGLU epilogue) and w2 (residual) a block;
 * cflags GLC_COMPILE_NO_FUSE keeps each op its own dispatch. Prints the
 * time a block (pipelined runs) and, fused, each of the two products'
 * profiled GPU time. */
#define FFN_BLOCKS 8
static glc_tensor ffn_proj(glc_graph *g, glc_tensor h, const char *name, glc_dtype wt,
                           const int64_t shape[2])
{
    static const glc_matmul_desc nt = {1};
    glc_tensor w = glc_graph_param(g, name, wt, 2, shape);
    return glc_dtype_size(wt) == 0 ? glc_matmul_q(g, h, w, glc_none())
                                   : glc_matmul(g, h, w, glc_none(), &nt);
}

static void ffn_chain(int norm, glc_dtype wt, uint32_t cflags)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_compile_desc cd = {cflags};
    int64_t d = 2048, f = 8192, xs[2] = {1, d}, w13[2] = {f, d}, w2s[2] = {d, f};
    size_t wb1, wb2, i;
    unsigned char *h1 = weight_bytes(wt, f * d, 1.0f / sqrtf((float)d), &wb1);
    unsigned char *h2 = weight_bytes(wt, f * d, 1.0f / sqrtf((float)f), &wb2);
    float *in = calloc((size_t)d, 4), *out = calloc((size_t)d * MV_RUNS, 4), *gw = calloc((size_t)d, 4);
    const void *ins[MV_RUNS];
    void *outs[MV_RUNS];
    glc_plan_dispatch_time e[4 * FFN_BLOCKS];
    glc_plan_profile prof;
    glc_plan_slice sl[1];
    glc_plan_info pi;
    double t, us[2] = {0, 0};
    glc_tensor x;
    char size[200];
    if (!h1 || !h2 || !in || !out || !gw || glc_graph_create(dev, &g) != GLC_OK)
        goto done;
    for (i = 0; i < (size_t)d; i++) {
        in[i] = (float)((i * 37) % 17) / 17.0f - 0.5f;
        gw[i] = 1.0f + (float)(i % 7) / 16.0f;
    }
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    for (i = 0; i < FFN_BLOCKS; i++) {
        char n1[16], n2[16], n3[16], ng[16];
        glc_tensor h, a;
        snprintf(n1, sizeof n1, "w1_%zu", i);
        snprintf(n2, sizeof n2, "w2_%zu", i);
        snprintf(n3, sizeof n3, "w3_%zu", i);
        snprintf(ng, sizeof ng, "g_%zu", i);
        h = norm ? glc_rms_norm(g, x, glc_graph_param(g, ng, GLC_DTYPE_F32, 1, &d), 1e-5f) : x;
        a = glc_mul(g, glc_unary(g, GLC_UNARY_SILU, ffn_proj(g, h, n1, wt, w13), 0),
                    ffn_proj(g, h, n3, wt, w13));
        x = glc_add(g, x, ffn_proj(g, a, n2, wt, w2s));
    }
    glc_graph_output(g, "y", x);
    i = glc_graph_compile(g, &cd, &p) == GLC_OK;
    glc_graph_destroy(g);
    if (!i)
        goto done;
    for (i = 0; i < FFN_BLOCKS; i++) {
        char n[16];
        snprintf(n, sizeof n, "w1_%zu", i);
        glc_plan_set_param_typed(p, n, h1, wb1, wt);
        snprintf(n, sizeof n, "w3_%zu", i);
        glc_plan_set_param_typed(p, n, h1, wb1, wt);
        snprintf(n, sizeof n, "w2_%zu", i);
        glc_plan_set_param_typed(p, n, h2, wb2, wt);
        snprintf(n, sizeof n, "g_%zu", i);
        if (norm)
            glc_plan_set_param(p, n, gw, (size_t)d);
    }
    for (i = 0; i < MV_RUNS; i++) {
        ins[i] = in;
        outs[i] = out + i * (size_t)d;
    }
    if (glc_plan_run_pipelined(p, MV_RUNS, ins, outs) != GLC_OK)
        goto done;
    t = pipelined_best(p, MV_RUNS, ins, outs) / FFN_BLOCKS;
    glc_plan_stats(p, &pi);
    memset(&prof, 0, sizeof prof);
    prof.entries = e;
    prof.capacity = 4 * FFN_BLOCKS;
    if (!cflags && glc_plan_run_profiled(p, ins, sl, &prof) == GLC_OK && prof.count == 2 * FFN_BLOCKS)
        for (i = 0; i < prof.count; i++)
            us[i % 2] += prof.entries[i].gpu_ns / 1e3 / FFN_BLOCKS;
    snprintf(size, sizeof size, "%s %s: %u dispatches", glc_dtype_name(wt),
             norm ? "rms_norm, w1+w3, SwiGLU, w2, residual" : "w1+w3, SwiGLU, w2, residual",
             pi.dispatches);
    if (cflags)
        snprintf(size + strlen(size), sizeof size - strlen(size), " (no fusion)");
    else
        snprintf(size + strlen(size), sizeof size - strlen(size),
                 " (w1+w3 profiled %.1f us, w2 %.1f us)", us[0], us[1]);
    row_bw("ffn chain", size, t, (double)(2 * wb1 + wb2));
done:
    if (!p)
        printf("| ffn chain | %s norm %d | failed: %s | | |\n", glc_dtype_name(wt), norm,
               glc_device_errmsg(dev));
    glc_plan_destroy(p);
    free(h1);
    free(h2);
    free(in);
    free(out);
    free(gw);
}

/* A chain of MV_LEN decode attentions as a pipelined plan (GPU time): q
 * [1, hq, d] over a cache of kv keys (k, v [kv, hkv, d] params of type
 * ct), each call's output the next one's q. Seconds a call; cache bytes
 * read a call in *bytes; negative on failure. */
static double sdpa_chain(int64_t kv, int64_t hq, int64_t hkv, int64_t d, glc_dtype ct,
                         double *bytes)
{
    glc_graph *g;
    glc_plan *p = NULL;
    glc_compile_desc cd = {0};
    glc_sdpa_desc sd;
    int64_t qs[3] = {1, hq, d}, ks[3] = {kv, hkv, d};
    int i, runs = 16;
    glc_tensor x, k, v;
    size_t cb;
    unsigned char *kh = weight_bytes(ct, kv * hkv * d, 1.0f, &cb);
    float *in = calloc((size_t)(hq * d), 4), *out = calloc((size_t)(hq * d) * (size_t)runs, 4);
    const void *ins[16];
    void *outs[16];
    double el = -1;
    memset(&sd, 0, sizeof sd);
    sd.q_offset = -1;
    if (!kh || !in || !out || glc_graph_create(dev, &g) != GLC_OK)
        goto done;
    for (i = 0; i < hq * d; i++)
        in[i] = (float)((i * 37) % 17) / 17.0f - 0.5f;
    x = glc_graph_input(g, "q", GLC_DTYPE_F32, 3, qs);
    k = glc_graph_param(g, "k", ct, 3, ks);
    v = glc_graph_param(g, "v", ct, 3, ks);
    for (i = 0; i < MV_LEN; i++)
        x = glc_sdpa_decode(g, x, k, v, &sd);
    glc_graph_output(g, "y", x);
    if (glc_graph_compile(g, &cd, &p) != GLC_OK) {
        glc_graph_destroy(g);
        goto done;
    }
    glc_graph_destroy(g);
    if (glc_plan_set_param_typed(p, "k", kh, cb, ct) != GLC_OK ||
        glc_plan_set_param_typed(p, "v", kh, cb, ct) != GLC_OK)
        goto done;
    for (i = 0; i < runs; i++) {
        ins[i] = in;
        outs[i] = out + (size_t)i * (size_t)(hq * d);
    }
    if (glc_plan_run_pipelined(p, runs, ins, outs) != GLC_OK) /* warm-up */
        goto done;
    el = pipelined_best(p, runs, ins, outs) / MV_LEN;
    *bytes = 2.0 * (double)cb;
done:
    glc_plan_destroy(p);
    free(kh);
    free(in);
    free(out);
    return el;
}

static double memcpy_gbs(size_t bytes)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    double t0, best = 1e30;
    int i;
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    for (i = 0; i < 5; i++) {
        t0 = now_s();
        memcpy(b, a, bytes);
        if (now_s() - t0 < best)
            best = now_s() - t0;
    }
    free(a);
    free(b);
    return 2.0 * (double)bytes / best / 1e9;
}

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);

/* OpenBLAS SGEMM GFLOP/s for n^3 (row-major, no transposes), or 0. */
static double openblas_gflops(int n)
{
    static void *lib;
    sgemm_fn sgemm;
    float *a, *b, *c;
    double t0, best = 1e30;
    int i;
    if (!lib)
        lib = dlopen("libopenblas.so.0", RTLD_NOW);
    if (!lib || !(*(void **)&sgemm = dlsym(lib, "cblas_sgemm")))
        return 0;
    a = calloc((size_t)n * n, 4);
    b = calloc((size_t)n * n, 4);
    c = calloc((size_t)n * n, 4);
    for (i = 0; i < 4; i++) {
        t0 = now_s();
        sgemm(101 /* row major */, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        if (now_s() - t0 < best)
            best = now_s() - t0;
    }
    free(a);
    free(b);
    free(c);
    return 2.0 * n * (double)n * n / best / 1e9;
}

/* A number from the GLC_REF JSON: the value after "key": (key may be a
 * nested "size" inside sgemm_tflops). */
static double ref_number(const char *key)
{
    char pat[64];
    const char *p;
    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(ref_json, pat);
    return p ? atof(p + strlen(pat)) : 0;
}

static void matmul_row(int n, int reps)
{
    ctx c;
    double t, ref;
    char size[32];
    glc_buffer *A = buffer(GLC_DTYPE_F32, (int64_t)n * n), *B = buffer(GLC_DTYPE_F32, (int64_t)n * n),
               *C = buffer(GLC_DTYPE_F32, (int64_t)n * n);
    char key[16];
    memset(&c, 0, sizeof c);
    fill_random(A);
    fill_random(B);
    c.a = v1(A, GLC_DTYPE_F32, 2, n, n, 1, 1);
    c.b = v1(B, GLC_DTYPE_F32, 2, n, n, 1, 1);
    c.c = v1(C, GLC_DTYPE_F32, 2, n, n, 1, 1);
    t = time_op(r_matmul, &c, reps);
    snprintf(size, sizeof size, "%d^3 f32", n);
    snprintf(key, sizeof key, "%d", n);
    ref = gpu ? ref_number(key) * 1e3 : openblas_gflops(n);
    if (t < 0)
        printf("| matmul | %s | %s | | |\n", size, t == -1 ? "not implemented yet" : "failed");
    else
        printf("| matmul | %s | %.3f ms | %.1f GFLOP/s | %s%.0f%% of %s |\n", size, t * 1e3,
               2.0 * n * (double)n * n / t / 1e9, ref > 0 ? "" : "(no reference) ",
               ref > 0 ? 100.0 * 2.0 * n * (double)n * n / t / 1e9 / ref : 0,
               gpu ? "cuBLAS FP32" : "OpenBLAS");
    glc_buffer_destroy(A);
    glc_buffer_destroy(B);
    glc_buffer_destroy(C);
}

/* ---- Q4_0 / Q8_0 decode mat-vec layouts (issues 13 and 16) ----
 * How fast a mat-vec of 32-value blocks reads its weights when a group's
 * lanes split K (a lane a block, a's 32 values in registers, RN rows a
 * group): from the GGML layout (18- or 34-byte blocks on 2-byte
 * boundaries: 5 or 9 word loads a block) or from rows repacked as [the
 * rows' quant words][their f16 scales] (one or two 16-byte loads a block,
 * a scale word). Copies of the matrix span MV_MEMORY_BYTES, each run
 * reading the next (weights from memory, as in a decode). The output is
 * checked against a C dot product. A measurement for choosing a layout;
 * nothing in the library uses it. QB: quant words a block, 4 (Q4_0) or
 * 8 (Q8_0); XF: how quants become floats (nib, byt); PRE 1: every row's
 * words loaded before any is used. */
static const char q4p_src[] =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(std430, binding = 0) readonly buffer A { vec4 a4[]; };\n"
    "layout(std430, binding = 1) readonly buffer W { uint w[]; };\n"
    "layout(std430, binding = 2) writeonly buffer O { float o[]; };\n"
    "layout(std430, binding = 3) readonly buffer WQ { uvec4 wq[]; };\n"
    "#define G GLC_LOCAL_SIZE_X\n"
    "#define BB (uint(QB) * 4u + 2u)\n"
    "#ifdef GLC_HAS_SUBGROUP\n"
    "shared float red[(G / 4) * RN];\n"
    "#else\n"
    "shared float red[G * RN];\n"
    "#endif\n"
    "// block b of a row: its quant words and scale\n"
    "struct QW { uvec4 q0, q1; float d; };\n"
    "QW qload(uint row, uint rsb, uint nb, uint b)\n"
    "{\n"
    "    QW r;\n"
    "    r.q1 = uvec4(0u);\n"
    "#if REP\n"
    "    uint base = row * rsb >> 4;\n"
    "    r.q0 = wq[base + uint(QB / 4) * b];\n"
    "#if QB == 8\n"
    "    r.q1 = wq[base + 2u * b + 1u];\n"
    "#endif\n"
    "    r.d = unpackHalf2x16(w[(row * rsb + nb * uint(QB * 4)) / 4u + b / 2u] >> (16u * (b & 1u))).x;\n"
    "#else\n"
    "    uint o8 = row * rsb + b * BB, i0 = o8 >> 2;\n"
    "    bool odd = (o8 & 2u) != 0u;\n"
    "    uint ww[QB + 1];\n"
    "    for (int i = 0; i <= QB; i++)\n"
    "        ww[i] = w[i0 + uint(i)];\n"
    "    uint qq[QB];\n"
    "    for (int i = 0; i < QB; i++)\n"
    "        qq[i] = odd ? ww[i + 1] : (ww[i] >> 16) | (ww[i + 1] << 16);\n"
    "    r.d = unpackHalf2x16(odd ? ww[0] >> 16 : ww[0]).x;\n"
    "    r.q0 = uvec4(qq[0], qq[1], qq[2], qq[3]);\n"
    "#if QB == 8\n"
    "    r.q1 = uvec4(qq[4], qq[5], qq[6], qq[7]);\n"
    "#endif\n"
    "#endif\n"
    "    return r;\n"
    "}\n"
    "// XF 0: int -> float conversions; 1: the 2^23 exponent trick (exact n,\n"
    "// a subtraction a value); 2: the value's bits at the top of a mantissa\n"
    "// of 1.0 (1 + n / 16 or 1 + b / 256: a shift and a mask a value, the\n"
    "// offset taken out once a block through the sum of a)\n"
    "vec4 nib(uint x, uint s)\n"
    "{\n"
    "#if XF == 0\n"
    "    return vec4((uvec4(x) >> uvec4(s, s + 8u, s + 16u, s + 24u)) & 0xFu);\n"
    "#elif XF == 1\n"
    "    return uintBitsToFloat(((uvec4(x) >> uvec4(s, s + 8u, s + 16u, s + 24u)) & 0xFu) | 0x4B000000u) - 8388608.0;\n"
    "#else\n"
    "    uvec4 y = s == 0u ? uvec4(x << 19, x << 11, x << 3, x >> 5) : uvec4(x << 15, x << 7, x >> 1, x >> 9);\n"
    "    return uintBitsToFloat((y & 0x00780000u) | 0x3F800000u);\n"
    "#endif\n"
    "}\n"
    "vec4 byt(uint x)\n"
    "{\n"
    "#if XF == 0\n"
    "    return vec4(ivec4(uvec4(x) << uvec4(24u, 16u, 8u, 0u)) >> 24);\n"
    "#elif XF == 1\n"
    "    return uintBitsToFloat(((uvec4(x ^ 0x80808080u) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu) | 0x4B000000u) - 8388736.0;\n"
    "#else\n"
    "    uint z = x ^ 0x80808080u;\n"
    "    uvec4 y = uvec4(z << 15, z << 7, z >> 1, z >> 9);\n"
    "    return uintBitsToFloat((y & 0x007F8000u) | 0x3F800000u);\n"
    "#endif\n"
    "}\n"
    "// the sum of block b of a's chunk j (32 values) times its quants\n"
    "float qcomp(QW r, int j, float as, vec4 av[LB * 8])\n"
    "{\n"
    "#if NOCOMP\n"
    "    uvec4 x = r.q0 ^ r.q1;\n"
    "    return r.d * av[j * 8].x * float((x.x ^ x.y ^ x.z ^ x.w) & 0xFFu);\n"
    "#endif\n"
    "    float t = 0.0;\n"
    "    for (int c = 0; c < 4; c++) {\n"
    "#if QB == 4\n"
    "        t += dot(nib(r.q0[c], 0u), av[j * 8 + c]) + dot(nib(r.q0[c], 4u), av[j * 8 + 4 + c]);\n"
    "#else\n"
    "        t += dot(byt(r.q0[c]), av[j * 8 + c]) + dot(byt(r.q1[c]), av[j * 8 + 4 + c]);\n"
    "#endif\n"
    "    }\n"
    "#if XF == 2 && QB == 4\n"
    "    t = 16.0 * (t - as) - 8.0 * as;\n"
    "#elif XF == 2\n"
    "    t = 256.0 * (t - as) - 128.0 * as;\n"
    "#elif QB == 4\n"
    "    t -= 8.0 * as;\n"
    "#endif\n"
    "    return r.d * t;\n"
    "}\n"
    "void main() {\n"
    "  uint N = glc_p[0], nb = glc_p[1], rsb = glc_p[2];\n"
    "  uint l = gl_LocalInvocationID.x, n0 = glc_group_index() * uint(RN);\n"
    "  vec4 av[LB * 8]; float as[LB];\n"
    "  for (int j = 0; j < LB; j++) {\n"
    "    uint b = l + uint(j * G); as[j] = 0.0;\n"
    "    for (int q = 0; q < 8; q++) {\n"
    "#if NOA\n"
    "      av[j * 8 + q] = vec4(float(b * 8u + uint(q)) * 1e-3);\n"
    "#else\n"
    "      av[j * 8 + q] = b < nb ? a4[b * 8u + uint(q)] : vec4(0.0);\n"
    "#endif\n"
    "      as[j] += dot(av[j * 8 + q], vec4(1.0)); } }\n"
    "  float acc[RN];\n"
    "#if PRE\n"
    "  QW qs[RN * LB];\n"
    "  for (int r = 0; r < RN; r++)\n"
    "    for (int j = 0; j < LB; j++) {\n"
    "      uint b = min(l + uint(j * G), nb - 1u);\n"
    "      qs[r * LB + j] = qload(min(n0 + uint(r), N - 1u), rsb, nb, b); }\n"
    "  for (int r = 0; r < RN; r++) {\n"
    "    float s = 0.0;\n"
    "    for (int j = 0; j < LB; j++)\n"
    "      if (l + uint(j * G) < nb)\n"
    "        s += qcomp(qs[r * LB + j], j, as[j], av);\n"
    "    acc[r] = s; }\n"
    "#else\n"
    "  for (int r = 0; r < RN; r++) {\n"
    "    uint row = min(n0 + uint(r), N - 1u);\n"
    "    float s = 0.0;\n"
    "    for (int j = 0; j < LB; j++) {\n"
    "      uint b = l + uint(j * G);\n"
    "      if (b < nb)\n"
    "        s += qcomp(qload(row, rsb, nb, b), j, as[j], av); }\n"
    "    acc[r] = s; }\n"
    "#endif\n"
    "#ifdef GLC_HAS_SUBGROUP\n"
    "  for (int r = 0; r < RN; r++) { float v = subgroupAdd(acc[r]);\n"
    "    if (subgroupElect()) red[gl_SubgroupID * uint(RN) + uint(r)] = v; }\n"
    "  barrier();\n"
    "  if (l < uint(RN)) { float v = 0.0;\n"
    "    for (uint g = 0u; g < gl_NumSubgroups; g++) v += red[g * uint(RN) + l];\n"
    "    if (n0 + l < N) o[n0 + l] = v; }\n"
    "#else\n"
    "  for (int r = 0; r < RN; r++) red[uint(r * G) + l] = acc[r];\n"
    "  barrier();\n"
    "  for (uint h = uint(G) / 2u; h > 0u; h >>= 1) {\n"
    "    if (l < h) for (int r = 0; r < RN; r++) red[uint(r * G) + l] += red[uint(r * G) + l + h];\n"
    "    barrier(); }\n"
    "  if (l < uint(RN) && n0 + l < N) o[n0 + l] = red[l * uint(G)];\n"
    "#endif\n"
    "}\n";

static glc_kernel *q4p_k;
static glc_buffer *q4p_a, *q4p_w, *q4p_o;
static uint32_t q4p_par[3];
static size_t q4p_stride, q4p_bytes;
static int64_t q4p_copies, q4p_turn;
static uint64_t q4p_groups;

static glc_status r_q4p(glc_session *s, void *p)
{
    glc_binding b[4];
    glc_dispatch_desc d;
    size_t at = (size_t)(q4p_turn++ % q4p_copies) * q4p_stride;
    (void)p;
    memset(b, 0, sizeof b);
    memset(&d, 0, sizeof d);
    b[0].buffer = q4p_a, b[0].size = (size_t)q4p_par[1] * 128, b[0].access = GLC_READ;
    b[1].buffer = q4p_w, b[1].offset = at, b[1].size = q4p_stride, b[1].access = GLC_READ;
    b[2].buffer = q4p_o, b[2].size = (size_t)q4p_par[0] * 4, b[2].access = GLC_WRITE;
    b[3] = b[1];
    d.kernel = q4p_k;
    d.groups = q4p_groups;
    d.bindings = b;
    d.binding_count = 4;
    d.params = q4p_par;
    d.param_count = 3;
    return glc_session_dispatch(s, &d);
}

/* One block type's rows of the probe (qb: quant words a block, 4 or 8) */
static void block_layout_probe(const glc_device_info *in, int reps, int qb, int factors)
{
    static const struct { const char *name; int64_t n, k; } sh[] = {
        {"wo", 2048, 2048}, {"w1+w3", 16384, 2048}, {"w2", 2048, 8192}, {"lm_head", 32000, 2048}};
    static const int rns[] = {2, 4, 8};
    size_t j, align = in->limits.ssbo_offset_alignment ? in->limits.ssbo_offset_alignment : 256;
    size_t bb = (size_t)qb * 4 + 2; /* a block's bytes */
    double span = gpu ? MV_MEMORY_BYTES : 16.0 * 1024 * 1024;
    const char *tname = qb == 4 ? "q4_0" : "q8_0";
    for (j = 0; j < sizeof sh / sizeof sh[0]; j++) {
        int64_t n = sh[j].n, k = sh[j].k, nb = k / 32, r, b, i, c;
        size_t rsb = (size_t)nb * bb, bytes = (size_t)n * rsb;
        unsigned char *aos = malloc(bytes), *rep = malloc(bytes);
        float *a = malloc((size_t)k * 4), *out = malloc((size_t)n * 4);
        double *ref = malloc((size_t)n * sizeof *ref);
        uint32_t s = 777u + (uint32_t)j, lanes = (uint32_t)((nb + 31) / 32 * 32);
        int layout, vi;
        if (!gpu && n > 2048)
            goto next; /* llvmpipe: a correctness run at the smallest shape */
        if (lanes > 256)
            lanes = 256;
        if (lanes > in->limits.max_invocations)
            lanes = in->limits.max_invocations;
        for (i = 0; i < k; i++) {
            s = s * 1664525u + 1013904223u;
            a[i] = (float)(s >> 8) / (float)(1u << 24) - 0.5f;
        }
        for (r = 0; r < n; r++) { /* GGML blocks, and the repacked row */
            double acc = 0;
            for (b = 0; b < nb; b++) {
                unsigned char *blk = aos + (size_t)r * rsb + (size_t)b * bb;
                uint16_t h;
                float d;
                s = s * 1664525u + 1013904223u;
                h = (uint16_t)(0x1c00u + (s >> 20) % 0x800u); /* 2^-8 .. 2^-6 */
                memcpy(blk, &h, 2);
                glc_dtype_to_f32(GLC_DTYPE_F16, &h, 1, &d);
                for (c = 0; c < qb * 4; c++) {
                    s = s * 1664525u + 1013904223u;
                    blk[2 + c] = (unsigned char)(s >> 24);
                    if (qb == 4) /* low nibble value c, high c + 16, both offset by 8 */
                        acc += (double)d * (((blk[2 + c] & 15) - 8) * (double)a[b * 32 + c] +
                                            ((blk[2 + c] >> 4) - 8) * (double)a[b * 32 + c + 16]);
                    else
                        acc += (double)d * (int8_t)blk[2 + c] * (double)a[b * 32 + c];
                }
                memcpy(rep + (size_t)r * rsb + (size_t)b * qb * 4, blk + 2, (size_t)qb * 4);
                memcpy(rep + (size_t)r * rsb + (size_t)nb * qb * 4 + (size_t)b * 2, blk, 2);
            }
            ref[r] = acc;
        }
        q4p_stride = (bytes + 64 + align - 1) / align * align;
        q4p_copies = (int64_t)(span / (double)q4p_stride) + 1;
        if (q4p_copies < 2)
            q4p_copies = 2;
        if ((double)q4p_copies * (double)q4p_stride > (double)in->limits.max_ssbo_size)
            q4p_copies = (int64_t)(in->limits.max_ssbo_size / q4p_stride);
        q4p_bytes = bytes;
        q4p_a = buffer(GLC_DTYPE_F32, k);
        q4p_o = buffer(GLC_DTYPE_F32, n);
        q4p_w = buffer(GLC_DTYPE_U8, (int64_t)q4p_stride * q4p_copies);
        glc_buffer_write(q4p_a, 0, (size_t)k * 4, a);
        for (layout = 0; layout < 2; layout++) {
            for (i = 0; i < q4p_copies; i++)
                glc_buffer_write(q4p_w, (size_t)i * q4p_stride, bytes, layout ? rep : aos);
            for (vi = 0; vi < (int)(sizeof rns / sizeof rns[0]) * 6; vi++) {
                /* factors: GGML blocks, the 2^23 trick, a row at a time,
                 * without a's loads (synthetic a) and / or the arithmetic */
                int ri = vi / 6, xf = factors ? 1 : vi % 3, pre = factors ? 0 : vi / 3 % 2;
                int noa = factors && vi % 6 % 2, nocomp = factors && vi % 6 / 2 % 2;
                if ((factors && (layout || vi % 6 >= 4 || ri == 0)))
                    continue;
                glc_kernel_desc kd;
                char defs[256], size[256];
                double t, num = 0, den = 0;
                memset(&kd, 0, sizeof kd);
                snprintf(defs, sizeof defs,
                         "#define RN %d\n#define LB %lld\n#define REP %d\n#define QB %d\n"
                         "#define XF %d\n#define PRE %d\n#define NOA %d\n#define NOCOMP %d\n",
                         rns[ri], (long long)((nb + lanes - 1) / lanes), layout, qb, xf, pre, noa,
                         nocomp);
                kd.name = "block layout probe";
                kd.source = q4p_src;
                kd.local_size_x = lanes;
                kd.defines = defs;
                snprintf(size, sizeof size,
                         "%s %s %lld x %lld, %s, %u lanes, %d rows a group, %s, loads %s%s%s "
                         "(%lld copies)",
                         tname, sh[j].name, (long long)n, (long long)k,
                         layout ? "repacked rows" : "GGML blocks", lanes, rns[ri],
                         xf == 0 ? "int to float" : xf == 1 ? "2^23 trick" : "mantissa trick",
                         pre ? "first" : "a row at a time", noa ? ", NO a LOADS" : "",
                         nocomp ? ", NO ARITHMETIC" : "", (long long)q4p_copies);
                if (glc_kernel_create(dev, &kd, &q4p_k) != GLC_OK) {
                    printf("| block layout | %s | compile failed: %s | | |\n", size,
                           glc_device_errmsg(dev));
                    continue;
                }
                q4p_par[0] = (uint32_t)n, q4p_par[1] = (uint32_t)nb, q4p_par[2] = (uint32_t)rsb;
                q4p_groups = (uint64_t)((n + rns[ri] - 1) / rns[ri]);
                q4p_turn = 0;
                t = time_op(r_q4p, NULL, reps);
                glc_buffer_read(q4p_o, 0, (size_t)n * 4, out);
                for (r = 0; r < n; r++) {
                    num += ((double)out[r] - ref[r]) * ((double)out[r] - ref[r]);
                    den += ref[r] * ref[r];
                }
                if (!(num <= 1e-10 * den) && !noa && !nocomp)
                    printf("| block layout | MISMATCH against C: %s, nmse %g | | | |\n", size,
                           den > 0 ? num / den : num);
                row_bw("block layout", size, t, (double)bytes + 4.0 * (double)(k + n));
                glc_kernel_destroy(q4p_k);
            }
        }
        glc_buffer_destroy(q4p_a);
        glc_buffer_destroy(q4p_o);
        glc_buffer_destroy(q4p_w);
    next:
        free(aos);
        free(rep);
        free(a);
        free(out);
        free(ref);
    }
}

int main(int argc, char **argv)
{
    glc_device_info in;
    const char *ref = getenv("GLC_REF");
    int64_t n, rows, width = 4096;
    int reps, i;
    ctx c;
    char size[160];
    glc_buffer *X, *Y, *Z, *W;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
    }
    if (glc_device_create(NULL, &dev) != GLC_OK) {
        fprintf(stderr, "glc-bench-ops: no device: %s\n", glc_device_errmsg(NULL));
        return 1;
    }
    glc_device_get_info(dev, &in);
    gpu = strstr(in.renderer, "llvmpipe") == NULL;
    n = gpu ? (quick ? 1 << 24 : 1 << 26) : (quick ? 1 << 20 : 1 << 24);
    reps = gpu ? 20 : 3;
    if (ref) {
        FILE *f = fopen(ref, "r");
        size_t got = f ? fread(ref_json, 1, sizeof ref_json - 1, f) : 0;
        ref_json[got] = '\0';
        if (f)
            fclose(f);
        ref_copy_gbs = ref_number("copy_gbs");
    }
    if (!gpu || ref_copy_gbs == 0)
        ref_copy_gbs = gpu ? 0 : memcpy_gbs((size_t)n * 4);
    printf("## glc-bench-ops: %s (%s)\n\n", in.renderer, in.version);
    printf("reference: %s copy %.1f GB/s%s\n\n", gpu ? "PyTorch device" : "memcpy", ref_copy_gbs,
           gpu ? " (bench/torch_ref.py, same machine, same run)" : " (same cores, same run)");
    printf("| op | size | time | throughput | vs reference |\n|---|---|---:|---:|---:|\n");

    X = buffer(GLC_DTYPE_F32, n);
    Y = buffer(GLC_DTYPE_F32, n);
    Z = buffer(GLC_DTYPE_F32, n);
    W = buffer(GLC_DTYPE_F32, n);
    fill_random(X);
    fill_random(Y);
    memset(&c, 0, sizeof c);
    snprintf(size, sizeof size, "%lld f32", (long long)n);
    c.a = v1(X, GLC_DTYPE_F32, 1, n, 1, 1, 1);
    c.b = v1(Y, GLC_DTYPE_F32, 1, n, 1, 1, 1);
    c.c = v1(Z, GLC_DTYPE_F32, 1, n, 1, 1, 1);
    if (want("add"))

        row_bw("add", size, time_op(r_add, &c, reps), 3.0 * n * 4);
    if (only && want("probe")) {
        /* What llvmpipe's JIT makes fast (issue 17): z = x + y over n f32 by
         * kernels of one shape each, written here (glc_kernel_create), beside
         * the library's add above. Local sizes 64 / 128 / 256; one float, one
         * vec4 or 4 floats (a group's contiguous) per invocation. */
        static const struct { const char *name, *src; int per; } pk[] = {
            {"scalar, one float an invocation",
             "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
             "layout(std430, binding = 0) readonly buffer A { float a[]; };\n"
             "layout(std430, binding = 1) readonly buffer B { float b[]; };\n"
             "layout(std430, binding = 2) writeonly buffer O { float o[]; };\n"
             "void main() { uint i = glc_global_index(); if (i < glc_p[0]) o[i] = a[i] + b[i]; }\n", 1},
            {"vec4, one vec4 an invocation",
             "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
             "layout(std430, binding = 0) readonly buffer A { vec4 a[]; };\n"
             "layout(std430, binding = 1) readonly buffer B { vec4 b[]; };\n"
             "layout(std430, binding = 2) writeonly buffer O { vec4 o[]; };\n"
             "void main() { uint i = glc_global_index(); if (i < glc_p[0] / 4u) o[i] = a[i] + b[i]; }\n", 4},
            {"scalar, 4 floats an invocation (strided by the group)",
             "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
             "layout(std430, binding = 0) readonly buffer A { float a[]; };\n"
             "layout(std430, binding = 1) readonly buffer B { float b[]; };\n"
             "layout(std430, binding = 2) writeonly buffer O { float o[]; };\n"
             "void main() { uint i0 = glc_group_index() * uint(GLC_LOCAL_SIZE_X) * 4u + gl_LocalInvocationID.x;\n"
             "  for (uint k = 0u; k < 4u; k++) { uint i = i0 + k * uint(GLC_LOCAL_SIZE_X);\n"
             "    if (i < glc_p[0]) o[i] = a[i] + b[i]; } }\n", 4},
            {"vec4, 4 vec4 an invocation (strided by the group)",
             "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
             "layout(std430, binding = 0) readonly buffer A { vec4 a[]; };\n"
             "layout(std430, binding = 1) readonly buffer B { vec4 b[]; };\n"
             "layout(std430, binding = 2) writeonly buffer O { vec4 o[]; };\n"
             "void main() { uint i0 = glc_group_index() * uint(GLC_LOCAL_SIZE_X) * 4u + gl_LocalInvocationID.x;\n"
             "  for (uint k = 0u; k < 4u; k++) { uint i = i0 + k * uint(GLC_LOCAL_SIZE_X);\n"
             "    if (i < glc_p[0] / 4u) o[i] = a[i] + b[i]; } }\n", 16},
            {"vec4, 4 vec4 an invocation (consecutive)",
             "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
             "layout(std430, binding = 0) readonly buffer A { vec4 a[]; };\n"
             "layout(std430, binding = 1) readonly buffer B { vec4 b[]; };\n"
             "layout(std430, binding = 2) writeonly buffer O { vec4 o[]; };\n"
             "void main() { uint i0 = glc_global_index() * 4u;\n"
             "  for (uint k = 0u; k < 4u; k++) { uint i = i0 + k;\n"
             "    if (i < glc_p[0] / 4u) o[i] = a[i] + b[i]; } }\n", 16},
            {"uint bits, one float an invocation",
             "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
             "layout(std430, binding = 0) readonly buffer A { uint a[]; };\n"
             "layout(std430, binding = 1) readonly buffer B { uint b[]; };\n"
             "layout(std430, binding = 2) writeonly buffer O { uint o[]; };\n"
             "void main() { uint i = glc_global_index(); if (i < glc_p[0])\n"
             "  o[i] = floatBitsToUint(uintBitsToFloat(a[i]) + uintBitsToFloat(b[i])); }\n", 1}};
        static const uint32_t locals[] = {64, 128, 256};
        size_t j, l;
        for (j = 0; j < sizeof pk / sizeof pk[0]; j++)
            for (l = 0; l < sizeof locals / sizeof locals[0]; l++) {
                glc_kernel_desc kd;
                memset(&kd, 0, sizeof kd);
                kd.name = "probe";
                kd.source = pk[j].src;
                kd.local_size_x = locals[l];
                if (glc_kernel_create(dev, &kd, &probe_k) != GLC_OK) {
                    printf("| probe | %s | compile failed: %s | | |\n", pk[j].name, glc_device_errmsg(dev));
                    continue;
                }
                probe_x = X, probe_y = Y, probe_z = Z, probe_n = (uint32_t)n;
                probe_groups = ((uint64_t)n / (uint64_t)pk[j].per + locals[l] - 1) / locals[l];
                snprintf(size, sizeof size, "%lld f32 add: %s, local %u", (long long)n, pk[j].name,
                         (unsigned)locals[l]);
                row_bw("probe", size, time_op(r_probe, &c, reps), 3.0 * n * 4);
                glc_kernel_destroy(probe_k);
            }
    }
    if (only && want("tex probe"))
        tex_probe(X, Y, Z, n);
    if (only && want("read probe"))
        read_probe();
    if (only && want("read chain"))
        read_chain();
    if (want("dispatch chain")) {
        int64_t len = 2048;
        double t;
        c.a = v1(X, GLC_DTYPE_F32, 1, len, 1, 1, 1);
        c.b = v1(Y, GLC_DTYPE_F32, 1, len, 1, 1, 1);
        c.c = v1(Z, GLC_DTYPE_F32, 1, len, 1, 1, 1);
        for (chain_dependent = 1; chain_dependent >= 0; chain_dependent--) {
            if ((t = time_op(r_chain, &c, reps)) < 0) {
                printf("| dispatch chain | | failed: %s | | |\n", glc_device_errmsg(dev));
                continue;
            }
            { /* the CPU's part: encoding alone, before the wait */
                glc_session *s;
                double t0, enc;
                glc_session_begin(dev, GLC_SESSION_DIRECT, &s);
                t0 = now_s();
                for (i = 0; i < 20; i++)
                    r_chain(s, &c);
                enc = (now_s() - t0) / 20;
                glc_session_finish(s, NULL);
                printf("| dispatch chain | %d %s adds of %lld f32 | %.2f us a dispatch (CPU "
                       "encoding %.2f us) | | |\n",
                       CHAIN, chain_dependent ? "dependent (a barrier each)" : "independent (no barrier)",
                       (long long)len, t * 1e6 / CHAIN, enc * 1e6 / CHAIN);
            }
        }
        c.a = v1(X, GLC_DTYPE_F32, 1, n, 1, 1, 1);
        c.b = v1(Y, GLC_DTYPE_F32, 1, n, 1, 1, 1);
        c.c = v1(Z, GLC_DTYPE_F32, 1, n, 1, 1, 1);
        /* 1 to 16 chains built interleaved and joined: with the default
         * schedule a barrier every width dispatches; memory-tight reuses
         * bytes op by op and may add barriers between the chains */
        for (i = 1; i <= (gpu ? 16 : 4); i *= 4) {
            plan_chain(len, i, 0);
            if (i > 1)
                plan_chain(len, i, GLC_COMPILE_MEMORY_TIGHT);
        }
    }
    if (want("silu"))

        row_bw("silu", size, time_op(r_silu, &c, reps), 2.0 * n * 4);
    rows = n / width;
    snprintf(size, sizeof size, "%lld x %lld f32", (long long)rows, (long long)width);
    c.a = v1(X, GLC_DTYPE_F32, 2, rows, width, 1, 1);
    c.c = v1(Z, GLC_DTYPE_F32, 2, rows, width, 1, 1);
    c.b = v1(Y, GLC_DTYPE_F32, 1, width, 1, 1, 1);
    if (want("softmax"))

        row_bw("softmax", size, time_op(r_softmax, &c, reps), 2.0 * n * 4);
    if (want("rms_norm"))

        row_bw("rms_norm", size, time_op(r_rms, &c, reps), 2.0 * n * 4);
    {
        int64_t t = n / (32 * 128);
        glc_buffer *pos = buffer(GLC_DTYPE_I32, t);
        int32_t *h = malloc((size_t)t * 4);
        for (i = 0; i < t; i++)
            h[i] = i;
        glc_buffer_write(pos, 0, (size_t)t * 4, h);
        free(h);
        c.a = v1(X, GLC_DTYPE_F32, 3, t, 32, 128, 1);
        c.b = v1(pos, GLC_DTYPE_I32, 1, t, 1, 1, 1);
        c.c = v1(Z, GLC_DTYPE_F32, 3, t, 32, 128, 1);
        c.rope.mode = GLC_ROPE_NEOX;
        snprintf(size, sizeof size, "%lld x 32 x 128 f32 (neox)", (long long)t);
        if (want("rope"))

            row_bw("rope", size, time_op(r_rope, &c, reps), 2.0 * n * 4);
        glc_buffer_destroy(pos);
    }
    c.a = v1(X, GLC_DTYPE_F32, 2, rows, width, 1, 1);
    c.c = v1(Z, GLC_DTYPE_F32, 2, width, rows, 1, 1);
    snprintf(size, sizeof size, "%lld x %lld f32 transpose", (long long)rows, (long long)width);
    if (want("copy"))

        row_bw("copy", size, time_op(r_copy_t, &c, reps), 2.0 * n * 4);
    {
        int64_t nid = rows;
        glc_buffer *ids = buffer(GLC_DTYPE_I32, nid);
        int32_t *h = malloc((size_t)nid * 4);
        for (i = 0; i < nid; i++)
            h[i] = (int32_t)((i * 7919) % rows);
        glc_buffer_write(ids, 0, (size_t)nid * 4, h);
        free(h);
        c.a = v1(X, GLC_DTYPE_F32, 2, rows, width, 1, 1);
        c.b = v1(ids, GLC_DTYPE_I32, 1, nid, 1, 1, 1);
        c.c = v1(Z, GLC_DTYPE_F32, 2, nid, width, 1, 1);
        snprintf(size, sizeof size, "%lld rows of %lld f32", (long long)nid, (long long)width);
        if (want("get_rows"))

            row_bw("get_rows", size, time_op(r_get_rows, &c, reps), 2.0 * n * 4);
        glc_buffer_destroy(ids);
    }
    {
        /* decode mat-vec: 1 x K times [N, K]^T, weights read once */
        int64_t k = 4096, nn = gpu ? 14336 : 1024;
        glc_buffer *Wq = buffer(GLC_DTYPE_U8, nn * (k / 32) * 18);
        c.a = v1(X, GLC_DTYPE_F32, 2, 1, k, 1, 1);
        c.b = v1(W, GLC_DTYPE_F16, 2, nn, k, 1, 1);
        c.c = v1(Z, GLC_DTYPE_F32, 2, 1, nn, 1, 1);
        c.d = v1(NULL, GLC_DTYPE_F32, 1, 1, 1, 1, 1);
        c.d.buffer = NULL;
        c.mm.transpose_b = 1;
        snprintf(size, sizeof size, "1 x %lld x %lld, f16 weights", (long long)k, (long long)nn);
        if (nn * k * 2 <= n * 4)
            if (want("matmul (decode)"))

                row_bw("matmul (decode)", size, time_op(r_matmul, &c, reps), 2.0 * nn * k);
        c.b = v1(Wq, GLC_DTYPE_Q4_0, 2, nn, k, 1, 1);
        snprintf(size, sizeof size, "1 x %lld x %lld, q4_0 weights", (long long)k, (long long)nn);
        if (want("matmul_q (decode)"))

            row_bw("matmul_q (decode)", size, time_op(r_matmul_q, &c, reps), (double)nn * k / 32 * 18);
        glc_buffer_destroy(Wq);
    }
    {
        /* the 1b decoder's mat-vecs (issue 13): 1 x K times [N, K]^T for each
         * projection of a step, in each weight type; each run waits on the
         * previous one's output (the session's write-after-write barrier),
         * as one step's chain does */
        static const struct { const char *name; int64_t n, k; } mv[] = {
            {"qkv", 3072, 2048}, {"wo", 2048, 2048}, {"w1+w3", 16384, 2048},
            {"w2", 2048, 8192}, {"lm_head", 32000, 2048}};
        static const glc_dtype wt[] = {GLC_DTYPE_F16,  GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_0,
                                       GLC_DTYPE_F32,  GLC_DTYPE_Q4_K, GLC_DTYPE_Q6_K,
                                       GLC_DTYPE_Q5_K, GLC_DTYPE_Q4_1, GLC_DTYPE_Q5_0,
                                       GLC_DTYPE_Q5_1};
        int64_t most = 32000LL * 2048 * 4, cap = (int64_t)in.limits.max_ssbo_size;
        glc_buffer *Wm = buffer(GLC_DTYPE_U8, most < cap ? most : cap);
        size_t j, t;
        /* --only "decode mat-vec, from memory" runs those rows alone */
        int plain = want("decode mat-vec"), memory = gpu && want("decode mat-vec, from memory");
        for (j = 0; j < sizeof mv / sizeof mv[0]; j++)
            for (t = 0; t < sizeof wt / sizeof wt[0]; t++) {
                int q = glc_dtype_size(wt[t]) == 0;
                double wbytes = mv_setup(&c, X, Wm, Z, wt[t], mv[j].n, mv[j].k, plain || memory);
                if (wbytes < 0)
                    continue;
                snprintf(size, sizeof size, "%s %lld x %lld, %s", mv[j].name, (long long)mv[j].n,
                         (long long)mv[j].k, glc_dtype_name(wt[t]));
                if (plain)
                    row_bw("decode mat-vec", size, time_op(q ? r_matmul_q : r_matmul, &c, reps),
                           wbytes + 4.0 * (mv[j].k + mv[j].n));
                if (memory && mv_spread(Wm, wt[t], mv[j].n, mv[j].k, wbytes) >= 2) {
                    char sz2[192];
                    snprintf(sz2, sizeof sz2, "%s (%lld copies)", size, (long long)mv_copies);
                    row_bw("decode mat-vec, from memory", sz2, time_op(r_mv_rotate, &c, reps),
                           wbytes + 4.0 * (mv[j].k + mv[j].n));
                }
            }
        glc_buffer_destroy(Wm);
    }
    if (want("prefill matmul") && (gpu || only)) {
        /* prefill shapes (issue 16): 512 rows of a times the 1b decoder's
         * [N, K]^T weights, each type against f16 weights of the same shape
         * (the dense path: the target is 1.3x of it at most) */
        static const struct { const char *name; int64_t n, k; } pm[] = {
            {"wo", 2048, 2048}, {"w1", 8192, 2048}, {"w2", 2048, 8192}};
        static const glc_dtype pt[] = {GLC_DTYPE_F16,  GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_0,
                                       GLC_DTYPE_Q4_K, GLC_DTYPE_Q5_K, GLC_DTYPE_Q6_K};
        int64_t m = 512, cap = (int64_t)in.limits.max_ssbo_size;
        glc_buffer *Wm = buffer(GLC_DTYPE_U8, 8192LL * 2048 * 2 < cap ? 8192LL * 2048 * 2 : cap);
        size_t j, t;
        for (j = 0; j < sizeof pm / sizeof pm[0]; j++) {
            double f16 = 0;
            for (t = 0; t < sizeof pt / sizeof pt[0]; t++) {
                int q = glc_dtype_size(pt[t]) == 0;
                double tt, flops = 2.0 * (double)m * (double)pm[j].n * (double)pm[j].k;
                if (mv_setup(&c, X, Wm, Z, pt[t], pm[j].n, pm[j].k, 1) < 0 || m * pm[j].k > n ||
                    m * pm[j].n > n)
                    continue;
                c.a = v1(X, GLC_DTYPE_F32, 2, m, pm[j].k, 1, 1);
                c.c = v1(Z, GLC_DTYPE_F32, 2, m, pm[j].n, 1, 1);
                tt = time_op(q ? r_matmul_q : r_matmul, &c, reps);
                if (t == 0)
                    f16 = tt;
                snprintf(size, sizeof size, "%lld x %s %lld x %lld, %s", (long long)m, pm[j].name,
                         (long long)pm[j].n, (long long)pm[j].k, glc_dtype_name(pt[t]));
                if (tt < 0)
                    printf("| prefill matmul | %s | failed | | |\n", size);
                else
                    printf("| prefill matmul | %s | %.3f ms | %.1f GFLOP/s | %.2fx the f16 time |\n",
                           size, tt * 1e3, flops / tt / 1e9, f16 > 0 ? tt / f16 : 0);
            }
        }
        glc_buffer_destroy(Wm);
    }
    if (only && want("block layout")) {
        block_layout_probe(&in, reps, 4, 0);
        block_layout_probe(&in, reps, 8, 0);
    }
    if (only && want("block factors")) {
        block_layout_probe(&in, reps, 4, 1);
        block_layout_probe(&in, reps, 8, 1);
    }
    if (only && want("l2 warm")) { /* the mat-vec after a slow dispatch, its weights warmed or not */
        static const struct { const char *name; int64_t n, k; } mv[] = {
            {"wo", 2048, 2048}, {"qkv", 3072, 2048}, {"w2", 2048, 8192}, {"w1+w3", 16384, 2048}};
        static const glc_dtype wt[] = {GLC_DTYPE_F16, GLC_DTYPE_Q4_0, GLC_DTYPE_Q8_0};
        static const uint32_t spins[] = {0, 1000, 3000};
        static const char *mode_name[] = {"slow, barrier, mat-vec", "slow + warm, barrier, mat-vec",
                                          "slow alone", "warm, barrier, mat-vec"};
        int64_t cap = (int64_t)in.limits.max_ssbo_size, most = 512LL << 20;
        glc_buffer *Wm = buffer(GLC_DTYPE_U8, most < cap ? most : cap);
        glc_kernel_desc kd;
        size_t j, t, sp;
        memset(&kd, 0, sizeof kd);
        kd.name = "warm", kd.source = warm_src, kd.local_size_x = 256;
        if (glc_kernel_create(dev, &kd, &warm_k) != GLC_OK)
            printf("| l2 warm | compile failed: %s | | | |\n", glc_device_errmsg(dev));
        kd.name = "slow", kd.source = slow_src, kd.local_size_x = 64;
        if (glc_kernel_create(dev, &kd, &slow_k) != GLC_OK)
            printf("| l2 warm | compile failed: %s | | | |\n", glc_device_errmsg(dev));
        warm_sink = buffer(GLC_DTYPE_U8, 256);
        slow_out = buffer(GLC_DTYPE_U8, 256);
        for (j = 0; warm_k && slow_k && j < sizeof mv / sizeof mv[0]; j++)
            for (t = 0; t < sizeof wt / sizeof wt[0]; t++) {
                double wbytes = mv_setup(&c, X, Wm, Z, wt[t], mv[j].n, mv[j].k, 1);
                if (wbytes < 0 || mv_spread(Wm, wt[t], mv[j].n, mv[j].k, wbytes) < 2)
                    continue;
                for (sp = 0; sp < sizeof spins / sizeof spins[0]; sp++)
                    for (warm_mode = 0; warm_mode < 4; warm_mode++) {
                        if ((warm_mode == 2 && !spins[sp]) || (warm_mode == 3 && sp))
                            continue;
                        slow_spin = spins[sp];
                        snprintf(size, sizeof size, "%s %lld x %lld %s (%lld copies), spin %u: %s",
                                 mv[j].name, (long long)mv[j].n, (long long)mv[j].k,
                                 glc_dtype_name(wt[t]), (long long)mv_copies, (unsigned)spins[sp],
                                 mode_name[warm_mode]);
                        row_bw("l2 warm", size, time_op(r_warm, &c, reps), wbytes);
                    }
            }
        glc_kernel_destroy(warm_k);
        glc_kernel_destroy(slow_k);
        glc_buffer_destroy(warm_sink);
        glc_buffer_destroy(slow_out);
        glc_buffer_destroy(Wm);
    }
    if (only && want("spin chain"))
        spin_chain();
    if (only && want("run latency"))
        run_latency();
    if (only && want("mv chain")) { /* the mat-vec variants in a decode-like chain */
        static const struct { const char *name; int64_t n, k; } mv[] = {
            {"wo", 2048, 2048}, {"w1+w3 / 2048 x 16384", 16384, 2048},
            {"w1 / w2", 8192, 2048}, {"qkv / 2048 x 3072", 3072, 2048}, {"w2", 2048, 8192}};
        static const glc_dtype wt[] = {GLC_DTYPE_F16, GLC_DTYPE_Q4_0, GLC_DTYPE_Q8_0,
                                       GLC_DTYPE_Q4_K, GLC_DTYPE_Q6_K};
        /* rn, unroll, slots, ks, lanes (glc__tune; lanes 1: matvec's
         * subgroup-per-row layout), then 1: f16 rows only (matvec), 2:
         * quantized rows only (matmul_q's split variant) */
        static const uint32_t var[][7] = {
            {0, 0, 0, 0, 0, 0},   {0, 0, 0, 2, 1, 1},   {1, 0, 0, 0, 64, 1},
            {1, 0, 0, 0, 128, 1}, {2, 0, 0, 0, 128, 1}, {4, 0, 0, 0, 128, 1},
            {1, 0, 0, 0, 256, 1}, {2, 0, 0, 0, 256, 1}, {1, 0, 0, 0, 512, 1},
            {1, 0, 0, 0, 0, 2},   {2, 0, 0, 0, 0, 2},   {4, 0, 0, 0, 0, 2},
            {0, 0, 8, 0, 0, 2},   {0, 0, 16, 0, 0, 2},  {0, 0, 0, 0, 0, 2, 1},
            {0, 0, 0, 0, 0, 2, 32768}, {0, 0, 8, 0, 0, 2, 32768},
            {4, 0, 8, 0, 0, 2, 32768}, {1, 0, 8, 0, 0, 2, 32768}}; /* (matmul_q: rn, slots, ash) */
        enum { NV = sizeof var / sizeof var[0], ROUNDS = 3 };
        static mv_plan mp[NV];
        static float ref0[16384];
        double best[NV];
        size_t j, t, r, round;
        for (t = 0; t < sizeof wt / sizeof wt[0]; t++)
            for (j = 0; j < sizeof mv / sizeof mv[0]; j++) {
                /* every variant built, then timed in interleaved rounds (the
                 * best of each): a drift of the GPU's clocks hits them all */
                for (r = 0; r < NV; r++) {
                    glc__tune tu = {var[r][0], var[r][1], var[r][2], var[r][3], var[r][4], var[r][6]};
                    memset(&mp[r], 0, sizeof mp[r]);
                    if (r && (wt[t] == GLC_DTYPE_F16) != (var[r][5] == 1))
                        continue;
                    glc__device_tune(dev, &tu);
                    if (!mv_make(&mp[r], wt[t], mv[j].n, mv[j].k))
                        printf("| mv chain | %s %s variant %zu | failed: %s | | |\n", mv[j].name,
                               glc_dtype_name(wt[t]), r, glc_device_errmsg(dev));
                    glc__device_tune(dev, NULL);
                }
                for (round = 0; round < ROUNDS; round++)
                    for (r = 0; r < NV; r++)
                        if (mp[r].p) {
                            double el = mv_time(&mp[r]);
                            if (round == 0 || el < best[r])
                                best[r] = el;
                        }
                for (r = 0; r < NV; r++) {
                    double pu[2], num = 0, den = 0;
                    int64_t e;
                    if (!mp[r].p)
                        continue;
                    mv_profile(&mp[r], pu);
                    if (r == 0)
                        memcpy(ref0, mp[0].out, (size_t)mv[j].k * 4); /* run 0's: [1, k] */
                    for (e = 0; r && mp[0].p && e < mv[j].k; e++) { /* against the default */
                        double dv = (double)mp[r].out[e] - ref0[e];
                        num += dv * dv;
                        den += (double)ref0[e] * ref0[e];
                    }
                    if (r && mp[0].p && !(num <= 1e-8 * den))
                        printf("| mv chain | MISMATCH against the default: nmse %g | | | |\n",
                               den > 0 ? num / den : num);
                    snprintf(size, sizeof size,
                             "%s %lld x %lld %s, rn %u unroll %u slots %u ks %u lanes %u ash %u "
                             "(profiled: %.1f, %.1f us)",
                             mv[j].name, (long long)mv[j].n, (long long)mv[j].k,
                             glc_dtype_name(wt[t]), var[r][0], var[r][1], var[r][2], var[r][3],
                             var[r][4], var[r][6], pu[0], pu[1]);
                    row_bw("mv chain", size, best[r], mp[r].bytes);
                }
                for (r = 0; r < NV; r++)
                    mv_free(&mp[r]);
            }
    }
    if (only && want("ffn chain")) { /* the decode's MLP block: weight types, norm, fused or not */
        static const glc_dtype wts[] = {GLC_DTYPE_F16, GLC_DTYPE_Q4_0, GLC_DTYPE_Q8_0};
        int norm, fuse;
        size_t t;
        for (t = 0; t < sizeof wts / sizeof wts[0]; t++)
            for (norm = 0; norm < 2; norm++)
                for (fuse = 0; fuse < 2; fuse++)
                    ffn_chain(norm, wts[t], fuse ? 0 : GLC_COMPILE_NO_FUSE);
    }
    if (want("wide plan")) { /* independent branches: the schedule's gain */
        int kind, wdt;
        for (kind = 0; kind < 2; kind++)
            for (wdt = 4; wdt <= 8; wdt += 4) {
                plan_wide(kind, wdt, kind ? 1 : 4, 1024, 0);
                plan_wide(kind, wdt, kind ? 1 : 4, 1024, GLC_COMPILE_MEMORY_TIGHT);
            }
    }
    if (want("sdpa chain")) { /* decode attention in a chain (GPU time) */
        static const struct { int64_t kv, hq, hkv, d; glc_dtype ct; } sc[] = {
            {128, 32, 8, 64, GLC_DTYPE_F16},   {192, 32, 8, 64, GLC_DTYPE_F16},
            {1024, 32, 8, 64, GLC_DTYPE_F16},  {4096, 32, 8, 64, GLC_DTYPE_F16},
            {8192, 32, 8, 128, GLC_DTYPE_F32}, {8192, 32, 8, 64, GLC_DTYPE_F16}};
        size_t j;
        for (j = 0; j < sizeof sc / sizeof sc[0] && gpu; j++) {
            double by = 0, el = sdpa_chain(sc[j].kv, sc[j].hq, sc[j].hkv, sc[j].d, sc[j].ct, &by);
            snprintf(size, sizeof size, "kv %lld, %lld/%lld heads, d %lld, %s cache",
                     (long long)sc[j].kv, (long long)sc[j].hq, (long long)sc[j].hkv,
                     (long long)sc[j].d, glc_dtype_name(sc[j].ct));
            if (el < 0)
                printf("| sdpa chain | %s | failed: %s | | |\n", size, glc_device_errmsg(dev));
            else
                row_bw("sdpa chain", size, el, by);
        }
    }
    if (only && want("mv sweep")) { /* long: only when asked for */
        /* the 1b mat-vecs under each variant shape (glc__tune): which the
         * planner should pick, measured */
        static const struct { const char *name; int64_t n, k; } mv[] = {
            {"qkv", 3072, 2048}, {"wo", 2048, 2048}, {"w1+w3", 16384, 2048},
            {"w2", 2048, 8192}, {"lm_head", 32000, 2048}};
        static const glc_dtype wt[] = {GLC_DTYPE_F16, GLC_DTYPE_Q4_0, GLC_DTYPE_Q8_0,
                                       GLC_DTYPE_Q4_K, GLC_DTYPE_Q6_K};
        static const uint32_t vals[] = {1, 2, 4, 8};
        int64_t most = 32000LL * 2048 * 2, cap = (int64_t)in.limits.max_ssbo_size;
        glc_buffer *Wm = buffer(GLC_DTYPE_U8, most < cap ? most : cap);
        size_t j, t, r, u, sl;
        for (t = 0; t < sizeof wt / sizeof wt[0]; t++)
            for (j = 0; j < sizeof mv / sizeof mv[0]; j++) {
                int q = wt[t] != GLC_DTYPE_F16;
                double wbytes = mv_setup(&c, X, Wm, Z, wt[t], mv[j].n, mv[j].k, 1);
                if (wbytes < 0)
                    continue;
                for (r = 0; r < 4; r++)
                    for (u = q ? 3 : 1; u < 4; u++)
                        for (sl = 1; sl < 4; sl++) {
                            glc__tune tu = {vals[r], q ? 0 : vals[u], vals[sl], 0, 1, 0};
                            glc__device_tune(dev, &tu);
                            snprintf(size, sizeof size, "%s %s rn %u unroll %u slots %u",
                                     mv[j].name, glc_dtype_name(wt[t]), tu.rn, tu.unroll, tu.slots);
                            row_bw("mv sweep", size, time_op(q ? r_matmul_q : r_matmul, &c, reps),
                                   wbytes + 4.0 * (mv[j].k + mv[j].n));
                        }
                glc__device_tune(dev, NULL);
            }
        glc_buffer_destroy(Wm);
    }
    {
        int64_t kv = gpu ? 8192 : 1024, hq = 32, hkv = 8, d = 128;
        glc_buffer *scratch = buffer(GLC_DTYPE_F32, glc_sdpa_decode_scratch(hq, d, kv) + 1);
        memset(&c.sdpa, 0, sizeof c.sdpa);
        c.sdpa.q_offset = -1;
        c.a = v1(X, GLC_DTYPE_F32, 3, 1, hq, d, 1);
        c.b = v1(Y, GLC_DTYPE_F32, 3, kv, hkv, d, 1);
        c.d = v1(W, GLC_DTYPE_F32, 3, kv, hkv, d, 1);
        c.e = v1(scratch, GLC_DTYPE_F32, 1, glc_sdpa_decode_scratch(hq, d, kv) + 1, 1, 1, 1);
        c.c = v1(Z, GLC_DTYPE_F32, 3, 1, hq, d, 1);
        snprintf(size, sizeof size, "kv %lld, 32/8 heads, d 128, f32 cache", (long long)kv);
        if (want("sdpa_decode"))

            row_bw("sdpa_decode", size, time_op(r_decode, &c, reps), 2.0 * kv * hkv * d * 4);
        glc_buffer_destroy(scratch);
    }
    glc_buffer_destroy(X);
    glc_buffer_destroy(Y);
    glc_buffer_destroy(Z);
    glc_buffer_destroy(W);
    {
        static const int gpu_sizes[] = {1024, 2048, 4096}, cpu_sizes[] = {256, 512};
        int nsz = gpu ? (quick ? 2 : 3) : (quick ? 1 : 2);
        for (i = 0; i < nsz && want("matmul"); i++)
            matmul_row(gpu ? gpu_sizes[i] : cpu_sizes[i], gpu ? 5 : 1);
    }
    glc_device_destroy(dev);
    return 0;
}
