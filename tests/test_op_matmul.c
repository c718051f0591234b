/*
 * Dense matmul against the C reference: A x B and A x B^T, f32/f16/bf16 b,
 * bias or none, batched (b shared, per batch, broadcast in either batch
 * dim), shapes from 1 x 1 x 1 through odd, prime and partial-tile sizes,
 * every kernel variant forced (direct; shared-memory tiles of 64 and 128;
 * on GPUs with subgroups the mat-vec path: the device's own choice runs in
 * the case table of test_ops.c, eagerly and through plans), on the default
 * device and on one clamped to the ES 3.1 minimums, a grid past 65535
 * groups, the loop cap, sentinels on every output; the direct kernel's f32
 * b read from SSBOs and through buffer textures on each side of the texel
 * limit; then the errors.
 */
#include "testutil.h"

#include "device.h"
#include "op_run.h"
#include "ops.h"
#include "optest.h"
#include "ref_matmul.h"

static const glc_dtype floats[3] = {GLC_DTYPE_F32, GLC_DTYPE_F16, GLC_DTYPE_BF16};
static const char *const variants[] = {NULL, "direct", "tiled64", "tiled128", "matvec"};

typedef struct mm_case {
    int64_t ab[2];    /* a's batch dims (outer, inner); {1, 1}: rank 2 */
    int brank;        /* 2: shared b; 3: [bb1, ..]; 4: [bb0, bb1, ..] */
    int64_t bb[2];
    int64_t m, n, k;
    int nt, bias;
    glc_dtype tb;
    const char *variant; /* GLC_MATMUL; NULL: the device's choice */
    uint32_t loop_cap;   /* > 0: the device's max_loop_iterations for this case */
} mm_case;

static void run_mm(glc_device *dev, uint64_t *seed, const mm_case *c)
{
    int64_t nb = c->ab[0] * c->ab[1], nbb = c->bb[0] * c->bb[1];
    int arank = c->ab[0] > 1 ? 4 : c->ab[1] > 1 ? 3 : 2, r;
    int64_t as[4], bs[4], os[4], ns = c->n;
    size_t na = (size_t)(nb * c->m * c->k), nbe = (size_t)(nbb * c->n * c->k);
    size_t no = (size_t)(nb * c->m * c->n);
    float *a = malloc(na * 4), *b = malloc(nbe * 4), *bias = malloc((size_t)c->n * 4);
    float *ref = malloc(no * 4), *got = malloc(no * 4);
    ot_tensor A, B, BI, O;
    glc_matmul_desc desc;
    glc_session *s;
    char what[240];
    uint32_t cap;
    r = 0;
    if (arank == 4)
        as[r++] = c->ab[0];
    if (arank >= 3)
        as[r++] = c->ab[1];
    as[r] = c->m;
    as[r + 1] = c->k;
    memcpy(os, as, sizeof os);
    os[arank - 1] = c->n;
    r = 0;
    if (c->brank == 4)
        bs[r++] = c->bb[0];
    if (c->brank >= 3)
        bs[r++] = c->bb[1];
    bs[r] = c->nt ? c->n : c->k;
    bs[r + 1] = c->nt ? c->k : c->n;
    ot_fill(seed, a, na, -1.0f, 1.0f);
    ot_fill(seed, b, nbe, -1.0f, 1.0f);
    ot_fill(seed, bias, (size_t)c->n, -2.0f, 2.0f);
    ot_round(c->tb, b, nbe);
    ref_matmul(a, b, c->bias ? bias : NULL, c->ab, c->bb, c->m, c->n, c->k, c->nt, ref);
    A = ot_tensor_new(dev, GLC_DTYPE_F32, arank, as, a);
    B = ot_tensor_new(dev, c->tb, c->brank, bs, b);
    BI = ot_tensor_new(dev, GLC_DTYPE_F32, 1, &ns, bias);
    O = ot_tensor_new(dev, GLC_DTYPE_F32, arank, os, NULL);
    desc.transpose_b = c->nt;
    /* GLC_MATMUL as the device read it at creation */
    assert_int_equal(glc__env_set(&dev->env, GLC__ENV_MATMUL, c->variant, what, sizeof what),
                     GLC_OK);
    cap = dev->info.limits.max_loop_iterations;
    if (c->loop_cap)
        dev->info.limits.max_loop_iterations = c->loop_cap;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    if (glc_op_matmul(s, A.view, B.view, c->bias ? BI.view : ot_none(), &desc, O.view) != GLC_OK)
        fail_msg("matmul: %s", glc_device_errmsg(dev));
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    dev->info.limits.max_loop_iterations = cap;
    glc__env_set(&dev->env, GLC__ENV_MATMUL, NULL, what, sizeof what);
    snprintf(what, sizeof what,
             "matmul%s a [%lld, %lld | %lld x %lld] b%s [%lld, %lld] %s, N %lld%s, %s",
             c->nt ? " nt" : "", (long long)c->ab[0], (long long)c->ab[1], (long long)c->m,
             (long long)c->k, c->brank == 2 ? " shared" : "", (long long)c->bb[0],
             (long long)c->bb[1], glc_dtype_name(c->tb), (long long)c->n,
             c->bias ? " + bias" : "", c->variant ? c->variant : "auto");
    if (!ot_read(&O, got))
        fail_msg("%s: a sentinel byte changed", what);
    ot_check(what, got, ref, no, OT_NMSE_MATMUL);
    ot_free(&A);
    ot_free(&B);
    ot_free(&BI);
    ot_free(&O);
    free(a);
    free(b);
    free(bias);
    free(ref);
    free(got);
}

static glc_device *open_dev(int min)
{
    glc_device_desc d = tu_desc(NULL);
    d.flags = min ? GLC_DEVICE_LIMITS_MIN : 0;
    return tu_device_desc(&d);
}

/* m, n, k: ones, odd, prime, partial 64- and 128-tiles, K not a multiple of 4 */
static const int64_t sizes[][3] = {{1, 1, 1},   {1, 37, 64},  {7, 13, 5},  {33, 65, 31},
                                   {4, 96, 128}, {97, 101, 103}, {130, 129, 36}, {2, 3, 300},
                                   {64, 64, 64}, {9, 250, 17}, {1, 300, 257}, {5, 8, 3}};

static void test_matmul_shapes(void **state)
{
    uint64_t seed = 0x5eed;
    int min, v, i;
    (void)state;
    for (min = 0; min < 2; min++) {
        glc_device *dev = open_dev(min);
        /* variant 0 (the device's choice): test_ops' case table */
        for (v = 1; v < 5; v++)
            for (i = 0; i < 12; i++) {
                if (min && v != 2)
                    continue; /* under the minimums the others fall back to these */
                mm_case c;
                memset(&c, 0, sizeof c);
                c.ab[0] = c.ab[1] = c.bb[0] = c.bb[1] = 1;
                c.brank = 2;
                c.m = sizes[i][0];
                c.n = sizes[i][1];
                c.k = sizes[i][2];
                c.nt = (i + v) % 2;
                c.tb = floats[(i + v + min) % 3];
                c.bias = (i + v) % 3 == 0;
                c.variant = variants[v];
                run_mm(dev, &seed, &c);
            }
        glc_device_destroy(dev);
    }
}

/* The direct kernel's b^T (llvmpipe reads f32 b through a buffer texture
 * of RGBA32F texels, f16 and bf16 b as their words through RGBA32UI ones,
 * where b fits the device's texel limit, here narrowed to 1024 texels: b of
 * 4096 f32 values is read as texels, of 4100 from its SSBO), and from its
 * SSBO on a device without buffer textures: the decode's one row, llvmpipe's
 * 16- and 32-row invocations, batched b, a bias, odd N, each dtype; then 24
 * generated shapes with a limit within 2 texels of b's size. */
static void test_matmul_direct_reads(void **state)
{
    static const int64_t shp[][3] = {{1, 64, 64},   {1, 41, 100}, {16, 32, 128},
                                      {70, 33, 124}, {3, 1025, 4}, {2, 32, 64}};
    glc_device *dev = open_dev(0);
    int have = dev->info.features.texel_buffers, texel, i;
    uint64_t seed = 0xd1ec7;
    (void)state;
    for (texel = 0; texel <= have; texel++) {
        TU_TEXEL_ROUND(dev, texel, 1024);
        dev->rows_min_macs = 0; /* 16 and 32 rows at these sizes too */
        for (i = 0; i < 9; i++) {
            mm_case c;
            memset(&c, 0, sizeof c);
            c.ab[0] = c.ab[1] = c.bb[0] = c.bb[1] = 1;
            c.brank = 2;
            if (i % 6 == 5) /* b per batch: the texel view spans both */
                c.ab[1] = c.bb[1] = 2, c.brank = 3;
            c.m = shp[i % 6][0];
            c.n = shp[i % 6][1];
            c.k = shp[i % 6][2];
            c.nt = 1;
            /* then 16-bit b: its raw words as RGBA32UI texels */
            c.tb = i < 6 ? GLC_DTYPE_F32 : i % 2 ? GLC_DTYPE_F16 : GLC_DTYPE_BF16;
            c.bias = i % 2;
            c.variant = "direct";
            run_mm(dev, &seed, &c);
        }
    }
    dev->rows_min_macs = GLC__ROWS_MIN_MACS;
    if (have) { /* 16-bit b as texels, K in parts (a forced loop cap) */
        mm_case c;
        memset(&c, 0, sizeof c);
        c.ab[0] = c.ab[1] = c.bb[0] = c.bb[1] = 1;
        c.brank = 2;
        c.m = 3, c.n = 9, c.k = 4000, c.nt = 1, c.bias = 1;
        c.tb = GLC_DTYPE_F16;
        c.variant = "direct";
        c.loop_cap = 300;
        TU_TEXEL_ROUND(dev, 1, 1 << 20);
        run_mm(dev, &seed, &c);
    }
    /* generated: rows of a 1-70, N 1-90, K mostly a multiple of 4, b shared
     * or per batch, a bias or none, a texel limit within 2 texels of b's */
    for (i = 0; have && i < 24; i++) {
        uint64_t r = tu_rand(&seed);
        mm_case c;
        int64_t nb;
        memset(&c, 0, sizeof c);
        c.ab[0] = c.ab[1] = c.bb[0] = c.bb[1] = 1;
        c.brank = 2;
        if (r % 4 == 0)
            c.ab[1] = c.bb[1] = 2, c.brank = 3;
        c.m = 1 + (int64_t)((r >> 4) % 70);
        c.n = 1 + (int64_t)((r >> 12) % 90);
        c.k = 4 * (1 + (int64_t)((r >> 20) % 64)) + ((r >> 28) % 6 == 0 ? 1 + (int64_t)((r >> 32) % 3) : 0);
        c.nt = 1;
        c.tb = floats[(r >> 48) % 3];
        c.bias = (r >> 36) % 2;
        c.variant = "direct";
        nb = c.bb[1] * c.n * c.k;
        /* (16-bit b: half the f32 values' texels) */
        TU_TEXEL_ROUND(dev, 1, tu_texel_limit_near(r >> 40, c.tb == GLC_DTYPE_F32 ? nb : nb / 2));
        run_mm(dev, &seed, &c);
    }
    glc_device_destroy(dev);
}

/* batch dims: shared b, b per batch, b broadcast in the outer or inner dim */
static void test_matmul_batched(void **state)
{
    static const struct {
        int64_t ab[2];
        int brank;
        int64_t bb[2];
    } b[] = {{{1, 3}, 2, {1, 1}}, {{1, 3}, 3, {1, 3}}, {{1, 4}, 3, {1, 1}},
             {{2, 3}, 4, {2, 3}}, {{2, 3}, 4, {1, 3}}, {{2, 3}, 4, {2, 1}},
             {{2, 3}, 3, {1, 3}}, {{3, 2}, 2, {1, 1}}};
    uint64_t seed = 0xba7c;
    int v, i;
    glc_device *dev = open_dev(0);
    (void)state;
    for (v = 1; v < 4; v++) /* 0, the device's choice: test_ops' case table */
        for (i = 0; i < 8; i++) {
            mm_case c;
            memset(&c, 0, sizeof c);
            c.ab[0] = b[i].ab[0];
            c.ab[1] = b[i].ab[1];
            c.brank = b[i].brank;
            c.bb[0] = b[i].bb[0];
            c.bb[1] = b[i].bb[1];
            c.m = 3 + i * 5;
            c.n = 7 + i * 3;
            c.k = 4 + (i % 3) * 13;
            c.nt = (i + v) % 2;
            c.tb = floats[(i + v) % 3];
            c.bias = i % 2;
            c.variant = variants[v];
            run_mm(dev, &seed, &c);
        }
    glc_device_destroy(dev);
}

/* Past 65535 groups (direct: 4 columns per invocation, 64 per group). */
static void test_matmul_big_grid(void **state)
{
    glc_device *dev = open_dev(1);
    uint64_t seed = 0xb16;
    mm_case c;
    (void)state;
    memset(&c, 0, sizeof c);
    c.ab[0] = c.ab[1] = c.bb[0] = c.bb[1] = 1;
    c.brank = 2;
    c.m = 1;
    c.k = 2;
    c.n = 4 * 64 * 65536 + 12;
    c.tb = GLC_DTYPE_F16;
    c.variant = "direct";
    run_mm(dev, &seed, &c);
    glc_device_destroy(dev);
}

/* K past what one invocation loops over under llvmpipe's 65535 iterations:
 * the K split and its summing pass. [1, 300000] x [2, 300000]^T summed
 * only the first 262136 of K before, with GLC_OK. M 5 (4 rows an
 * invocation) and the tiled kernel at their largest parts; then a small
 * forced cap over batches, bias and 16-bit b on both kernels; then the
 * same for 16 rows an invocation. */
static void test_matmul_loop_cap(void **state)
{
    static const struct {
        int64_t ab1, m, n, k;
        int nt, bias, brank;
        glc_dtype tb;
        const char *variant;
        uint32_t cap;
    } cases[] = {
        {1, 1, 2, 300000, 1, 0, 2, GLC_DTYPE_F32, NULL, 65535},
        {1, 5, 3, 120000, 0, 1, 2, GLC_DTYPE_F32, "direct", 65535},
        {1, 3, 5, 40000, 1, 0, 2, GLC_DTYPE_F16, "tiled64", 65535},
        {3, 7, 9, 2001, 1, 1, 3, GLC_DTYPE_F16, "direct", 300},
        {3, 7, 9, 2001, 0, 1, 2, GLC_DTYPE_BF16, "direct", 300},
        {2, 5, 70, 3000, 0, 0, 3, GLC_DTYPE_F32, "tiled64", 600},
        {1, 66, 65, 3000, 1, 1, 2, GLC_DTYPE_F16, "tiled128", 600},
        /* 16 rows an invocation (llvmpipe's direct from 16 rows): K where
         * the row loop, if not unrolled, would pass the cap unsplit; then
         * split, and a forced small cap over batches */
        {1, 16, 8, 20000, 1, 0, 2, GLC_DTYPE_F32, "direct", 65535},
        {1, 17, 5, 120000, 0, 1, 2, GLC_DTYPE_F32, "direct", 65535},
        {2, 20, 9, 3001, 1, 1, 3, GLC_DTYPE_F16, "direct", 300},
    };
    glc_device *dev = open_dev(0);
    uint64_t seed = 0x10c;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mm_case c;
        memset(&c, 0, sizeof c);
        c.ab[0] = 1;
        c.ab[1] = cases[i].ab1;
        c.bb[0] = 1;
        c.bb[1] = cases[i].brank == 3 ? cases[i].ab1 : 1;
        c.brank = cases[i].brank;
        c.m = cases[i].m;
        c.n = cases[i].n;
        c.k = cases[i].k;
        c.nt = cases[i].nt;
        c.bias = cases[i].bias;
        c.tb = cases[i].tb;
        c.variant = cases[i].variant;
        c.loop_cap = cases[i].cap;
        run_mm(dev, &seed, &c);
    }
    glc_device_destroy(dev);
}

static void test_matmul_errors(void **state)
{
    tu_log log;
    glc_device *dev = tu_device(&log);
    glc_session *s;
    int64_t sa[2] = {4, 8}, sb[2] = {8, 6}, sbt[2] = {6, 8}, so[2] = {4, 6}, sbad[2] = {7, 6};
    int64_t sa3[3] = {2, 4, 8}, sb3[3] = {3, 8, 6}, s6[1] = {6}, s5[1] = {5};
    ot_tensor a = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sa, NULL);
    ot_tensor ah = ot_tensor_new(dev, GLC_DTYPE_F16, 2, sa, NULL);
    ot_tensor b = ot_tensor_new(dev, GLC_DTYPE_F16, 2, sb, NULL);
    ot_tensor bt = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sbt, NULL);
    ot_tensor bi = ot_tensor_new(dev, GLC_DTYPE_I32, 2, sb, NULL);
    ot_tensor bbad = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sbad, NULL);
    ot_tensor a3 = ot_tensor_new(dev, GLC_DTYPE_F32, 3, sa3, NULL);
    ot_tensor b3 = ot_tensor_new(dev, GLC_DTYPE_F32, 3, sb3, NULL);
    ot_tensor o = ot_tensor_new(dev, GLC_DTYPE_F32, 2, so, NULL);
    ot_tensor bias6 = ot_tensor_new(dev, GLC_DTYPE_F32, 1, s6, NULL);
    ot_tensor bias5 = ot_tensor_new(dev, GLC_DTYPE_F32, 1, s5, NULL);
    glc_matmul_desc nt = {1}, nn = {0};
    glc_view past;
    glc_dispatch_stats st;
    (void)state;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    assert_int_equal(glc_op_matmul(s, a.view, bbad.view, ot_none(), &nn, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul: a [4, 8] f32 and b [7, 6] f32: K differs (8 vs 7)");
    assert_int_equal(glc_op_matmul(s, a.view, b.view, ot_none(), &nt, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul: a [4, 8] f32 and b [8, 6] f16 (transposed): K differs (8 vs 6)");
    assert_int_equal(glc_op_matmul(s, ah.view, b.view, ot_none(), &nn, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "matmul: a [4, 8] f16: must be f32 [.., M, K]");
    assert_int_equal(glc_op_matmul(s, a.view, bi.view, ot_none(), &nn, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul: b [8, 6] i32: must be f32, f16 or bf16 [.., K, N]");
    assert_int_equal(glc_op_matmul(s, a.view, b.view, bias5.view, &nn, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "matmul: bias [5] f32: must be f32 [6]");
    assert_int_equal(glc_op_matmul(s, a3.view, b3.view, ot_none(), &nn, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul: a [2, 4, 8] f32 and b [3, 8, 6] f32: b's batch dims must each "
                        "be 1 or a's");
    assert_int_equal(glc_op_matmul(s, a.view, bt.view, ot_none(), &nn, o.view),
                     GLC_ERR_INVALID_ARG); /* [6, 8] read as [K, N]: K 6 */
    assert_int_equal(glc_op_matmul(s, a.view, b.view, bias6.view, &nn, a.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul: output 0 is [4, 8] f32, the op makes [4, 6] f32");
    past = b.view;
    past.offset = glc_buffer_size(b.buf) - 64;
    assert_int_equal(glc_op_matmul(s, a.view, past, ot_none(), &nn, o.view), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "matmul: tensor 1: bytes [");
    tu_assert_contains(glc_device_errmsg(dev), "run past the buffer's");
    assert_int_equal(glc_op_matmul(NULL, a.view, b.view, ot_none(), &nn, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_int_equal(glc_session_finish(s, &st), GLC_OK);
    assert_int_equal(st.dispatches, 0);
    assert_int_equal(log.last_status, GLC_ERR_BOUNDS);
    ot_free(&a);
    ot_free(&ah);
    ot_free(&b);
    ot_free(&bt);
    ot_free(&bi);
    ot_free(&bbad);
    ot_free(&a3);
    ot_free(&b3);
    ot_free(&o);
    ot_free(&bias6);
    ot_free(&bias5);
    glc_device_destroy(dev);
}

/* GLC_MATMUL=matvec, b f32 [8, 64] transposed, a [M, 64]: the shapes that
 * reach plan_matvec (f32, K a multiple of 4). It runs on every device and
 * matches the reference: one row of a with its lanes across K (LK), more
 * rows a subgroup a row, emulated where the device has no subgroup sums
 * (llvmpipe: glsl/subgroup.glsl VSG). (Before, a device without subgroup
 * arithmetic refused it, and earlier still divided by a local size of 0.)
 * Past matvec's 8 rows (M 9, 20) the device's own variant runs: forced, it
 * had left the rows past 8 unwritten. */
static void test_matmul_forced_matvec(void **state)
{
    tu_log log;
    glc_device *dev;
    int64_t sa[2] = {1, 64}, sb[2] = {8, 64}, so[2] = {1, 8}, ab[2] = {1, 1};
    float a[20 * 64], b[8 * 64], ref[20 * 8], got[20 * 8];
    uint64_t seed = 0x3a7;
    ot_tensor A, B, O;
    glc_matmul_desc nt = {1};
    glc_session *s;
    glc_status st;
    int m;
    (void)state;
    setenv("GLC_MATMUL", "matvec", 1); /* read when the device is made */
    dev = tu_device(&log);
    unsetenv("GLC_MATMUL");
    static const int ms[] = {1, 2, 5, 8, 9, 20};
    for (int mi = 0; mi < 6; mi++) {
        m = ms[mi];
        sa[0] = so[0] = m;
        ot_fill(&seed, a, (size_t)(m * 64), -1.0f, 1.0f);
        ot_fill(&seed, b, 8 * 64, -1.0f, 1.0f);
        ref_matmul(a, b, NULL, ab, ab, m, 8, 64, 1, ref);
        A = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sa, a);
        B = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sb, b);
        O = ot_tensor_new(dev, GLC_DTYPE_F32, 2, so, NULL);
        assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
        st = glc_op_matmul(s, A.view, B.view, ot_none(), &nt, O.view);
        assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
        assert_int_equal(st, GLC_OK);
        assert_true(ot_read(&O, got));
        ot_check("matmul forced matvec", got, ref, (size_t)(m * 8), OT_NMSE_MATMUL);
        ot_free(&A);
        ot_free(&B);
        ot_free(&O);
    }
    glc_device_destroy(dev);
}

/* Every op's plan goes through glc__op_make_plan, which refuses a
 * dispatch whose local size the target cannot run (0, or past its
 * invocations per group) instead of dividing by it or dispatching it. */
static void test_plan_local_size_checked(void **state)
{
    glc__op_args a;
    glc__target tg;
    glc__op_plan p;
    char err[256];
    (void)state;
    glc__op_args_init(&a, GLC__OP_MATMUL, 3, 1);
    memset(a.t, 0, sizeof a.t);
    a.t[0].present = a.t[1].present = 1;
    a.t[0].dtype = a.t[1].dtype = GLC_DTYPE_F32;
    a.t[0].rank = a.t[1].rank = 2;
    a.t[0].shape[0] = 1;
    a.t[0].shape[1] = a.t[1].shape[0] = 8;
    a.t[1].shape[1] = 4;
    assert_int_equal(glc__ops[GLC__OP_MATMUL]->infer(&a, err, sizeof err), GLC_OK);
    memset(&tg, 0, sizeof tg);
    tg.limits.max_invocations = 128;
    tg.is_llvmpipe = 1;
    memset(&p, 0, sizeof p);
    assert_int_equal(glc__op_make_plan(&a, &tg, &p, err, sizeof err), GLC_OK);
    tg.limits.max_invocations = 16; /* below the direct kernel's 64 */
    memset(&p, 0, sizeof p);
    assert_int_equal(glc__op_make_plan(&a, &tg, &p, err, sizeof err), GLC_ERR_UNSUPPORTED);
    assert_string_equal(err, "matmul: kernel matmul planned with local size 64 and 1 groups: this "
                             "device (at most 16 invocations per group) cannot run it");
}

/* glc__op_plan_check (every op's plan, through glc__op_make_plan) also
 * refuses a dispatch whose defines glc__define cut short: one define past
 * the buffer would otherwise compile a kernel missing it, or a name cut in
 * half. */
static void test_plan_defines_checked(void **state)
{
    glc__target tg;
    glc__op_plan p;
    glc__dispatch_plan *d;
    char err[256], want[256];
    int i;
    (void)state;
    memset(&tg, 0, sizeof tg);
    tg.limits.max_invocations = 128;
    memset(&p, 0, sizeof p);
    d = glc__plan_dispatch(&p, "matvec", 64, 64);
    glc__define_int(d, "RN", 2);
    assert_int_equal(glc__op_plan_check(&p, "matmul", &tg, err, sizeof err), GLC_OK);
    for (i = 0; strlen(d->defines) + 32 < sizeof d->defines; i++)
        glc__define_int(d, "PAD", i);
    assert_int_equal(glc__op_plan_check(&p, "matmul", &tg, err, sizeof err), GLC_OK);
    glc__define(d, "LAST_DEFINE_OF_THE_KERNEL", "123456789"); /* past the end: cut short */
    assert_int_equal(glc__op_plan_check(&p, "matmul", &tg, err, sizeof err), GLC_ERR_INVALID_ARG);
    snprintf(want, sizeof want, "matmul: internal: kernel matvec's defines fill its %zu bytes",
             sizeof d->defines);
    assert_string_equal(err, want);
}

/* The rope epilogue's rule (glc__mm_rope_infer, the rotation's part the
 * rope op's own rule; fuse.c qkv_rope makes such
 * nodes): a valid node (one row of a over q | k | v columns, 2 q heads and
 * 1 kv head of 8; or q | v, no k cache) passes; a node that breaks one
 * requirement is refused,
 * with a message naming it, and the planner refuses it on a target
 * without the matvec kernel (llvmpipe's default) rather than drop the
 * rope. */
static void test_rope_epilogue_rule(void **state)
{
    glc__op_args a, bad;
    glc__target tg;
    glc__op_plan p;
    char err[256];
    int i;
    (void)state;
    glc__op_args_init(&a, GLC__OP_MATMUL, 9, 1);
    memset(a.t, 0, sizeof a.t);
    for (i = 0; i < 9; i++)
        a.t[i].present = i != 2 && i != 3 && i != 4 && i != 6;
    a.mm.transpose_b = 1;
    a.mm.rope_mode = GLC_ROPE_NEOX;
    a.mm.rope_hd = 8;
    a.mm.rope_qw = 16;
    a.mm.rope_kw = 8;
    a.t[0].dtype = GLC_DTYPE_F32; /* a [1, 16] */
    a.t[0].rank = 2;
    a.t[0].shape[0] = 1;
    a.t[0].shape[1] = 16;
    a.t[1].dtype = GLC_DTYPE_F16; /* b [32, 16]: q 16 | k 8 | v 8 */
    a.t[1].rank = 2;
    a.t[1].shape[0] = 32;
    a.t[1].shape[1] = 16;
    a.t[5].dtype = GLC_DTYPE_I32; /* pos [1] */
    a.t[5].rank = 1;
    a.t[5].shape[0] = 1;
    for (i = 7; i < 9; i++) { /* caches [5, 1, 8] */
        a.t[i].dtype = GLC_DTYPE_F16;
        a.t[i].rank = 3;
        a.t[i].shape[0] = 5;
        a.t[i].shape[1] = 1;
        a.t[i].shape[2] = 8;
    }
    bad = a;
    assert_int_equal(glc__ops[GLC__OP_MATMUL]->infer(&bad, err, sizeof err), GLC_OK);
    bad = a;
    bad.t[5].dtype = GLC_DTYPE_F32;
    assert_int_equal(glc__ops[GLC__OP_MATMUL]->infer(&bad, err, sizeof err), GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(err, "positions [1] f32 do not fit"));
    bad = a;
    bad.mm.rope_base = -1.0f; /* the rope op's rule: the base too */
    assert_int_equal(glc__ops[GLC__OP_MATMUL]->infer(&bad, err, sizeof err), GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(err, "base -1: must be > 0"));
    bad = a;
    bad.t[1].shape[0] = 30; /* v 6: not whole heads of 8 */
    assert_int_equal(glc__ops[GLC__OP_MATMUL]->infer(&bad, err, sizeof err), GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(err, "30 columns are no q | k | v"));
    bad = a;
    bad.t[8].present = 0; /* v columns without their cache */
    assert_int_equal(glc__ops[GLC__OP_MATMUL]->infer(&bad, err, sizeof err), GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(err, "the caches do not fit 8 k and 8 v columns"));
    bad = a;
    bad.mm.rope_kw = 0; /* q | v apart from k: its cache must go */
    bad.t[1].shape[0] = 24;
    bad.t[7].present = 0;
    assert_int_equal(glc__ops[GLC__OP_MATMUL]->infer(&bad, err, sizeof err), GLC_OK);
    bad = a;
    bad.mm.rope_dim = 3;
    assert_int_equal(glc__ops[GLC__OP_MATMUL]->infer(&bad, err, sizeof err), GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(err, "rope_dim 3"));
    bad = a;
    bad.t[0].shape[0] = 2; /* two rows of a */
    bad.t[9].rank = 0;
    assert_int_equal(glc__ops[GLC__OP_MATMUL]->infer(&bad, err, sizeof err), GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(err, "one row of a"));
    bad = a;
    assert_int_equal(glc__ops[GLC__OP_MATMUL]->infer(&bad, err, sizeof err), GLC_OK);
    memset(&tg, 0, sizeof tg);
    tg.limits.max_invocations = 128;
    tg.limits.max_group_size[0] = 128;
    tg.is_llvmpipe = 1; /* the direct kernel: no rope epilogue */
    memset(&p, 0, sizeof p);
    assert_int_equal(glc__op_make_plan(&bad, &tg, &p, err, sizeof err), GLC_ERR_INVALID_ARG);
    assert_non_null(strstr(err, "the rope epilogue needs the matvec kernel"));
    tg.matmul = GLC__MATMUL_MATVEC; /* GLC_MATMUL=matvec: planned, the rope defined */
    memset(&p, 0, sizeof p);
    assert_int_equal(glc__op_make_plan(&bad, &tg, &p, err, sizeof err), GLC_OK);
    assert_non_null(strstr(p.disp[0].defines, "QKV_ROPE"));
}

/* llvmpipe's direct matmul takes 32 rows of a an invocation from 64 rows
 * and GLC__ROWS_MIN_MACS multiply-adds, 16 from 16 rows and a 16th of
 * that, else 4 (and 4 on other drivers), at every edge of the rule; with
 * the threshold at 0, by rows alone. */
static void test_direct_rows_rule(void **state)
{
    static const struct {
        int64_t m, n, k;
        int llvmpipe;
        uint64_t min;
        int rm;
    } cases[] = {
        {64, 512, 512, 1, GLC__ROWS_MIN_MACS, 32},     /* 2^24 */
        {64, 512, 511, 1, GLC__ROWS_MIN_MACS, 16},     /* one column of K short */
        {63, 1024, 1024, 1, GLC__ROWS_MIN_MACS, 16},   /* one row short */
        {16, 256, 256, 1, GLC__ROWS_MIN_MACS, 16},     /* 2^20 */
        {16, 256, 255, 1, GLC__ROWS_MIN_MACS, 4},
        {15, 4096, 4096, 1, GLC__ROWS_MIN_MACS, 4},
        {64, 512, 512, 0, GLC__ROWS_MIN_MACS, 4},      /* not llvmpipe */
        {97, 101, 103, 1, 0, 32},
        {16, 3, 5, 1, 0, 16},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        glc__op_args a;
        glc__target tg;
        glc__op_plan p;
        char want[16];
        int j;
        glc__op_args_init(&a, GLC__OP_MATMUL, 3, 1);
        memset(a.t, 0, sizeof a.t);
        a.t[0].present = a.t[1].present = 1;
        a.mm.transpose_b = 1;
        for (j = 0; j < 2; j++) {
            a.t[j].dtype = GLC_DTYPE_F32;
            a.t[j].rank = 2;
            a.t[j].shape[0] = j ? cases[i].n : cases[i].m;
            a.t[j].shape[1] = cases[i].k;
        }
        tu_rule_target(&tg, cases[i].llvmpipe);
        tg.limits.max_shared_bytes = 16384;
        tg.matmul = GLC__MATMUL_DIRECT;
        tg.rows_min = cases[i].min;
        tu_plan_op(&a, &tg, &p);
        snprintf(want, sizeof want, "RM %d\n", cases[i].rm);
        if (!strstr(p.disp[0].defines, want))
            fail_msg("%lld x %lld x %lld, llvmpipe %d, threshold %llu: want %s in %s",
                     (long long)cases[i].m, (long long)cases[i].n, (long long)cases[i].k,
                     cases[i].llvmpipe, (unsigned long long)cases[i].min, want,
                     p.disp[0].defines);
    }
}

/* The K split's summing pass applies what the compiler's fusions put in a
 * matmul: a fused activation (relu) and the Q/K/V segments (columns [0, 5),
 * [5, 9), [9, 12) as three row-major matrices), with bias, under a small
 * forced cap; run through the op table as the compiler would. */
static void test_matmul_loop_cap_fused(void **state)
{
    int64_t m = 3, n = 12, k = 3000, sa[2] = {3, 3000}, sb[2] = {12, 3000}, so[2] = {3, 12};
    int64_t s1 = 5, s12 = 9, ab[2] = {1, 1}, sn[1] = {12};
    float *a = malloc((size_t)(m * k) * 4), *b = malloc((size_t)(n * k) * 4), bias[12];
    float ref[36], want[36], got[36];
    glc_device *dev = open_dev(0);
    uint64_t seed = 0xf05;
    ot_tensor A, B, BI, O;
    glc__op_args args;
    glc_view v[4];
    glc_session *s;
    int64_t r, c;
    (void)state;
    ot_fill(&seed, a, (size_t)(m * k), -1.0f, 1.0f);
    ot_fill(&seed, b, (size_t)(n * k), -1.0f, 1.0f);
    ot_fill(&seed, bias, 12, -1.0f, 1.0f);
    ref_matmul(a, b, bias, ab, ab, m, n, k, 1, ref);
    for (r = 0; r < m; r++)
        for (c = 0; c < n; c++) {
            float x = ref[r * n + c] > 0 ? ref[r * n + c] : 0.0f;
            if (c < s1)
                want[r * s1 + c] = x;
            else if (c < s12)
                want[m * s1 + r * (s12 - s1) + c - s1] = x;
            else
                want[m * s12 + r * (n - s12) + c - s12] = x;
        }
    A = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sa, a);
    B = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sb, b);
    BI = ot_tensor_new(dev, GLC_DTYPE_F32, 1, sn, bias);
    O = ot_tensor_new(dev, GLC_DTYPE_F32, 2, so, NULL);
    v[0] = A.view;
    v[1] = B.view;
    v[2] = BI.view;
    v[3] = O.view;
    glc__op_args_init(&args, GLC__OP_MATMUL, 3, 1);
    args.mm.transpose_b = 1;
    args.mm.act = GLC_UNARY_RELU;
    args.mm.seg[0] = s1;
    args.mm.seg[1] = s12;
    args.mm.seg[2] = m * s1;
    args.mm.seg[3] = m * s12;
    dev->info.limits.max_loop_iterations = 300;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    if (glc__op_run(s, &args, v, NULL) != GLC_OK)
        fail_msg("matmul fused: %s", glc_device_errmsg(dev));
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    assert_true(ot_read(&O, got));
    ot_check("matmul + relu, Q/K/V segments, K split", got, want, 36, OT_NMSE_MATMUL);
    ot_free(&A);
    ot_free(&B);
    ot_free(&BI);
    ot_free(&O);
    free(a);
    free(b);
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_shapes),
        cmocka_unit_test(test_matmul_direct_reads),
        cmocka_unit_test(test_matmul_batched),
        cmocka_unit_test(test_matmul_big_grid),
        cmocka_unit_test(test_matmul_loop_cap),
        cmocka_unit_test(test_matmul_loop_cap_fused),
        cmocka_unit_test(test_matmul_errors),
        cmocka_unit_test(test_matmul_forced_matvec),
        cmocka_unit_test(test_plan_local_size_checked),
        cmocka_unit_test(test_plan_defines_checked),
        cmocka_unit_test(test_rope_epilogue_rule),
        cmocka_unit_test(test_direct_rows_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
