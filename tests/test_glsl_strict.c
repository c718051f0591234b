/*
 * The kernels as a GPU gets them, through a strict GLSL ES 3.10 front end.
 * Mesa accepts some sources that NVIDIA's compiler refuses (an int times a
 * uint, 2026-11-27), and the GPU-only variants (matvec's subgroup paths,
 * split matmul_q with subgroups, sdpa_split, the tiled matmul) are never
 * compiled by llvmpipe (the tests there run the decode kernels' emulated
 * forms, LK_SG 0 and VSG, under GLC_MATMUL=matvec). So a fake
 * device with an NVIDIA-like target (subgroups of 32, 48 KiB of shared
 * memory, 1024 invocations, no loop cap), one with the ES 3.1 minimum
 * limits, and (the decoder only) one named llvmpipe with the GPU's limits
 * (the attention that does the rope, llvmpipe's variant), compile the
 * decoder's plans (examples/llama.c, tiny and 1b
 * configs: f32, f16, q8_0, q4_0, q4_K, q6_K, bf16 and the Q4_K_M-like mix, f32 and f16
 * caches, prefill and decode) and every case of the op table
 * (tests/ref/opcases.c, but the large ones), recording every source they
 * are handed,
 * and each distinct source goes through glslangValidator (Khronos'
 * reference front end). Skipped when glslangValidator is missing
 * (ci/deps.sh installs glslang-tools). A source with that int * uint is
 * shown to fail the check.
 */
#include "testutil.h"

#include "device.h"
#include "fakegl.h"
#include "kernel.h"
#include "llama.h"
#include "optable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SRC 2048

static char *sources[MAX_SRC];
static int nsrc;
/* the source, recorded once (the parts joined) */
static void GL_APIENTRY f_ShaderSource(GLuint s, GLsizei c, const GLchar *const *str,
                                       const GLint *l)
{
    size_t total = 1, used = 0;
    char *all;
    int i;
    (void)s;
    for (i = 0; i < c; i++)
        total += l && l[i] >= 0 ? (size_t)l[i] : strlen(str[i]);
    all = malloc(total);
    assert_non_null(all);
    for (i = 0; i < c; i++) {
        size_t n = l && l[i] >= 0 ? (size_t)l[i] : strlen(str[i]);
        memcpy(all + used, str[i], n);
        used += n;
    }
    all[used] = '\0';
    for (i = 0; i < nsrc; i++)
        if (strcmp(sources[i], all) == 0) {
            free(all);
            return;
        }
    assert_true(nsrc < MAX_SRC);
    sources[nsrc++] = all;
}

/* A device over the fake GL. gpu: an NVIDIA H100's limits and features
 * (README's platform table), so plans pick the GPU variants; else the
 * OpenGL ES 3.1 minimum (4 storage blocks, 128 invocations, 16 KiB of
 * shared memory, 256-byte binding alignment, no subgroups): the variants
 * a small board gets. */
/* gpu 1: NVIDIA-like; 0: the ES 3.1 minimums; 2: the GPU's limits under
 * llvmpipe's name, no subgroups (its variants with room to fuse: the
 * rows attention doing the rope) */
static glc_device *fake_target(int gpu)
{
    glc__gl gl;
    glc_device_limits lim;
    glc_device *dev;
    fakegl_fill(&gl);
    gl.glShaderSource = f_ShaderSource;
    memset(&lim, 0, sizeof lim);
    lim.max_group_count[0] = 2147483647u;
    lim.max_group_count[1] = lim.max_group_count[2] = 65535;
    lim.max_group_size[0] = lim.max_group_size[1] = 1024;
    lim.max_group_size[2] = 64;
    lim.max_invocations = 1024;
    lim.max_shared_bytes = 49152;
    lim.max_ssbo_size = 2147483647u;
    lim.max_uniform_block_size = 65536;
    lim.max_ssbo_blocks = 16;
    lim.max_ssbo_bindings = 16;
    lim.ssbo_offset_alignment = 16;
    lim.uniform_offset_alignment = 16;
    lim.max_loop_iterations = 0;
    if (!gpu) {
        lim.max_group_count[0] = 65535;
        lim.max_group_size[0] = lim.max_group_size[1] = 128;
        lim.max_invocations = 128;
        lim.max_shared_bytes = 16384;
        lim.max_ssbo_size = 1u << 27;
        lim.max_ssbo_blocks = lim.max_ssbo_bindings = 4;
        lim.ssbo_offset_alignment = 256;
        lim.uniform_offset_alignment = 256;
        lim.max_uniform_block_size = 16384;
    }
    assert_int_equal(glc__device_create_fake(&gl, &lim, &dev), GLC_OK);
    if (gpu == 2)
        snprintf(dev->renderer, sizeof dev->renderer, "llvmpipe (fake)");
    if (gpu == 1) {
        dev->info.features.subgroup = 1;
        dev->info.features.subgroup_size = 32;
        dev->info.features.subgroup_ops = 0x1u | 0x4u; /* basic, arithmetic */
    }
    return dev;
}

static int have_validator(void)
{
    return system("command -v glslangValidator >/dev/null 2>&1") == 0;
}

/* glslangValidator's verdict on srcs[0 .. n) in one run: 1 when it takes
 * them all; else 0 with its output (the first of it: file names, errors)
 * in msg. */
static int validates_all(char *const *srcs, int n, char *msg, size_t len)
{
    char dir[] = "/tmp/glc-strict-XXXXXX", path[64], cmd[160];
    FILE *f;
    size_t got;
    int rc, i;
    assert_non_null(mkdtemp(dir));
    for (i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/k%04d.comp", dir, i);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(srcs[i], f);
        fclose(f);
    }
    snprintf(cmd, sizeof cmd, "glslangValidator %s/*.comp > %s/out 2>&1", dir, dir);
    rc = system(cmd);
    snprintf(path, sizeof path, "%s/out", dir);
    f = fopen(path, "r");
    got = f ? fread(msg, 1, len - 1, f) : 0;
    msg[got] = '\0';
    if (f)
        fclose(f);
    remove(path);
    for (i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/k%04d.comp", dir, i);
        remove(path);
    }
    rmdir(dir);
    return rc == 0;
}

static int validates(const char *src, char *msg, size_t len)
{
    char *one = (char *)src;
    return validates_all(&one, 1, msg, len);
}

/* The decoder's plans (tiny and 1b; every weight and cache type; prefill
 * and decode) made on dev. */
static void plan_decoder(glc_device *dev, int gpu)
{
    static const glc_dtype wt[] = {GLC_DTYPE_F32,  GLC_DTYPE_F16,  GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_0,
                                   GLC_DTYPE_Q4_K, GLC_DTYPE_Q6_K, GLC_DTYPE_BF16};
    static const glc_dtype ct[] = {GLC_DTYPE_F32, GLC_DTYPE_F16};
    static const char *const config[] = {"tiny", "1b"};
    int n, w, c, dec, nw = (int)(sizeof wt / sizeof wt[0]);
    for (n = 0; n < 2; n++)
        for (w = 0; w <= nw; w++) /* nw: the Q4_K_M-like mix (Q | K and V apart) */
            for (c = 0; c < 2; c++)
                for (dec = LLAMA_PREFILL; dec <= LLAMA_CHUNK; dec++) {
                    llama_cfg cfg;
                    llama_weights lw; /* the mix: the tensors' dtypes (no data) */
                    glc_plan *p = NULL;
                    glc_status st;
                    assert_true(llama_config(config[n], &cfg));
                    cfg.wdtype = w < nw ? wt[w] : GLC_DTYPE_Q4_K;
                    cfg.mix = w == nw;
                    cfg.cache = ct[c];
                    if (cfg.mix)
                        assert_true(llama_layout(&cfg, &lw));
                    st = llama_plan(dev, &cfg, cfg.mix ? &lw : NULL, dec, n ? 128 : 16, 0, &p);
                    if (cfg.mix)
                        llama_free(&lw);
                    if (st != GLC_OK)
                        fail_msg("plan (%s, %s weights, %s cache, %s, %s target): %s", config[n],
                                 w < nw ? glc_dtype_name(wt[w]) : "q4_K_M", glc_dtype_name(ct[c]),
                                 dec == LLAMA_DECODE ? "decode" : dec ? "chunk" : "prefill",
                                 gpu == 1 ? "GPU" : gpu ? "llvmpipe" : "minimum",
                                 glc_device_errmsg(dev));
                    glc_plan_destroy(p);
                }
}

/* Every case of the op table (tests/ref/opcases.c: hand-written, but the
 * large ones, and generated) planned on dev. */
static void plan_op_table(glc_device *dev, int gpu)
{
    size_t n, ngen, i;
    const oc_case *cases = oc_cases(&n);
    oc_case *gen = malloc(OC_NGEN * sizeof *gen);
    assert_non_null(gen);
    ngen = oc_generate(gen);
    for (i = 0; i < n + ngen; i++) {
        const oc_case *c = i < n ? &cases[i] : &gen[i - n];
        if (c->flags & C_BIG)
            continue;
        if (oc_compile_graph(dev, c, 0x5eed0000u + i) != GLC_OK)
            fail_msg("op case %zu (%s target): %s", i, gpu ? "GPU" : "minimum",
                     glc_device_errmsg(dev));
    }
    free(gen);
}

static void test_kernels_strict(void **state)
{
    static char msg[65536];
    int gpu, i, gpu_only = 0, staged = 0, parts = 0, lanes = 0, rope = 0, qkv[3] = {0, 0, 0};
    (void)state;
    if (!have_validator()) {
        fprintf(stderr, "glslangValidator missing (ci/deps.sh installs glslang-tools): skipping\n");
        skip();
    }
    for (gpu = 2; gpu >= 0; gpu--) {
        glc_device *dev = fake_target(gpu);
        plan_decoder(dev, gpu);
        if (gpu == 2) {
            glc_device_destroy(dev);
            continue;
        }
        plan_op_table(dev, gpu);
        {
            /* the texture transfers (plan.c binds them outside any op) */
            int out, fmt;
            for (out = 0; out < 2; out++)
                for (fmt = 0; fmt < 2; fmt++) {
                    char defs[48];
                    glc_kernel *k;
                    snprintf(defs, sizeof defs, "#define OUT %d\n#define FMT %d\n", out, fmt);
                    assert_int_equal(glc__kernel_get(dev, "image_io", defs, 64, &k), GLC_OK);
                }
        }
        glc_device_destroy(dev);
    }
    assert_true(nsrc > 10);
    for (i = 0; i < nsrc; i++) { /* the GPU variants are there: subgroup kernels llvmpipe never builds */
        gpu_only += strstr(sources[i], "subgroupAdd") != NULL;
        staged += strstr(sources[i], "#define ASH ") != NULL; /* matmul_q's a in shared memory */
        parts += strstr(sources[i], "#define KS ") != NULL;   /* K parts in a group */
        lanes += strstr(sources[i], "#define LK ") != NULL;   /* matvec's lanes across K */
        rope += strstr(sources[i], "#define ROPE ") != NULL;  /* the rope in the attention */
        if (strstr(sources[i], "#define QKV_ROPE ")) { /* the rope in the Q/K/V products */
            int kc = strstr(sources[i], "#define ROPE_KC ") != NULL;
            int vc = strstr(sources[i], "#define ROPE_VC ") != NULL;
            qkv[kc && vc ? 0 : kc ? 1 : 2]++; /* q | k | v; q | k (V apart); v */
        }
    }
    printf("glslangValidator: %d kernel sources, %d with subgroup sums, %d with a staged, %d "
           "with K parts, %d with lanes across K, %d attention with the rope, %d / %d / %d "
           "products with it (q | k | v, q | k, v)\n",
           nsrc, gpu_only, staged, parts, lanes, rope, qkv[0], qkv[1], qkv[2]);
    assert_true(qkv[0] > 0 && qkv[1] > 0 && qkv[2] > 0);
    assert_true(gpu_only > 0);
    assert_true(staged > 0);
    assert_true(parts > 0);
    assert_true(lanes > 0);
    assert_true(rope > 0);
    if (!validates_all(sources, nsrc, msg, sizeof msg))
        fail_msg("glslangValidator refused kernel sources (k<i>.comp is source i):\n%s", msg);
    for (i = 0; i < nsrc; i++)
        free(sources[i]);
    nsrc = 0;
}

/* The check catches what it exists for: matvec's SwiGLU store with the int
 * row index times the uint width, as it was before 5d3a2d7. */
static void test_catches_int_times_uint(void **state)
{
    const char *good = "#version 310 es\nlayout(local_size_x = 1) in;\n"
                       "layout(std430, binding = 0) buffer O { float o[]; };\n"
                       "void main() { uint N = 4u; for (int m = 0; m < 2; m++) o[uint(m) * N] = 1.0; }\n";
    const char *bad = "#version 310 es\nlayout(local_size_x = 1) in;\n"
                      "layout(std430, binding = 0) buffer O { float o[]; };\n"
                      "void main() { uint N = 4u; for (int m = 0; m < 2; m++) o[m * N] = 1.0; }\n";
    char msg[2048];
    (void)state;
    if (!have_validator())
        skip();
    assert_true(validates(good, msg, sizeof msg));
    assert_false(validates(bad, msg, sizeof msg));
    tu_assert_contains(msg, "wrong operand types");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_strict),
        cmocka_unit_test(test_catches_int_times_uint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
