/*
 * Quantized matmuls beyond the case table of test_ops.c (which runs Q8_0,
 * Q4_0, affine and expert shapes, eagerly and through plans, on the
 * default device and with GLC_DEVICE_LIMITS_MIN): hand-written blocks that
 * pin the GGUF bytes, narrowed grid limits, the loop cap (natural and
 * forced), each on the default device and on one with the minimums; then
 * the errors. Weights are quantized in C with GGML's reference rules or
 * MLX-style affine groups, and the GPU result is compared with the f32
 * matmul on the dequantized weights.
 */
#include "testutil.h"

#include "device.h"
#include "op_run.h" /* glc__target_of: the planner's view of the device */
#include "optest.h"
#include "ref_quant.h"

#include <ctype.h>
#include <math.h>

/* The reference multiplies the very weights the kernel dequantizes, so
 * only the f32 summation order differs: far inside the matmul threshold. */
#define LIMIT OT_NMSE_MATMUL

/* Runs `cases` on the default device, then on one clamped to the ES 3.1
 * minimums (one device at a time: each makes its own context current). */
static void on_both(void (*cases)(glc_device *dev, uint64_t seed), uint64_t seed)
{
    glc_device_desc d = tu_desc(NULL);
    glc_device *dev = tu_device_desc(&d);
    cases(dev, seed);
    glc_device_destroy(dev);
    d.flags = GLC_DEVICE_LIMITS_MIN;
    dev = tu_device_desc(&d);
    cases(dev, seed + 1);
    glc_device_destroy(dev);
}

static size_t q_bytes(glc_dtype dt, int64_t n, int64_t k)
{
    return (size_t)n * glc_dtype_row_bytes(dt, k);
}

/* When set, GGML weights are random blocks (every quant bit pattern,
 * scales of either sign) instead of w quantized. */
static uint64_t *random_blocks;

/* w (n x k floats) into dt's storage bytes; wd: what those bytes hold. */
static void *encode(glc_dtype dt, const float *w, int64_t n, int64_t k, float *wd)
{
    size_t count = (size_t)(n * k), bytes = q_bytes(dt, n, k), i;
    uint8_t *b = malloc(bytes);
    if (glc_dtype_size(dt) == 0) { /* GGML blocks */
        if (random_blocks)
            ref_random_blocks(dt, count, random_blocks, b);
        else
            ref_quantize(dt, w, count, b);
        ref_dequantize(dt, b, count, wd);
    } else if (dt == GLC_DTYPE_F16) {
        for (i = 0; i < count; i++) {
            uint16_t h = ot_f32_to_f16(w[i]);
            memcpy(b + 2 * i, &h, 2);
            wd[i] = ot_f16_to_f32(h);
        }
    } else {
        memcpy(b, w, count * 4);
        memcpy(wd, w, count * 4);
    }
    return b;
}

static void check_out(const char *what, const ot_tensor *o, const float *ref, size_t n)
{
    float *got = malloc(n * 4);
    if (!ot_read(o, got))
        fail_msg("%s: a sentinel byte changed", what);
    ot_check(what, got, ref, n, LIMIT);
    free(got);
}

/* ---- matmul_q ---- */

static void run_q(glc_device *dev, uint64_t *seed, glc_dtype dt, int batch, int64_t m, int64_t n,
                  int64_t k, int with_bias)
{
    int64_t rows = batch * m, sa[3], sw[2], so[3], sb[1];
    float *a = malloc((size_t)(rows * k) * 4), *w = malloc((size_t)(n * k) * 4);
    float *wd = malloc((size_t)(n * k) * 4), *bias = malloc((size_t)n * 4);
    float *ref = malloc((size_t)(rows * n) * 4);
    void *wq;
    ot_tensor A, W, B, O;
    glc_session *s;
    glc_status st;
    char what[160];
    int r = batch > 1 ? 3 : 2;
    ot_fill(seed, a, (size_t)(rows * k), -1.0f, 1.0f);
    ot_fill(seed, w, (size_t)(n * k), -1.0f, 1.0f);
    ot_fill(seed, bias, (size_t)n, -1.0f, 1.0f);
    wq = encode(dt, w, n, k, wd);
    ref_matmul_nt(a, wd, with_bias ? bias : NULL, rows, n, k, ref);
    sa[0] = so[0] = batch;
    sa[r - 2] = so[r - 2] = m;
    sa[r - 1] = k;
    so[r - 1] = n;
    sw[0] = n;
    sw[1] = k;
    sb[0] = n;
    A = ot_tensor_new(dev, GLC_DTYPE_F32, r, sa, a);
    W = ot_tensor_bytes(dev, dt, 2, sw, wq);
    B = ot_tensor_new(dev, GLC_DTYPE_F32, 1, sb, bias);
    O = ot_tensor_new(dev, GLC_DTYPE_F32, r, so, NULL);
    snprintf(what, sizeof what, "matmul_q %s, %d x %lld x %lld x %lld%s", glc_dtype_name(dt),
             batch, (long long)m, (long long)n, (long long)k, with_bias ? " + bias" : "");
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    st = glc_op_matmul_q(s, A.view, W.view, with_bias ? B.view : ot_none(), O.view);
    if (st != GLC_OK)
        fail_msg("%s: %s", what, glc_device_errmsg(dev));
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    check_out(what, &O, ref, (size_t)(rows * n));
    ot_free(&A);
    ot_free(&W);
    ot_free(&B);
    ot_free(&O);
    free(a);
    free(w);
    free(wd);
    free(bias);
    free(ref);
    free(wq);
}

/* ---- hand-written blocks: the exact GGUF bytes and values ---- */

static void block_cases(glc_device *dev, uint64_t seed)
{
    /* Q8_0: x_j = (8 j - 127 -+ 0.3) / 64: amax = 127 / 64, so d = 1/64 (f16
     * 0x2400) and q_j = 8 j - 127 */
    static const uint8_t q8[34] = {
        0x00, 0x24, 0x81, 0x89, 0x91, 0x99, 0xa1, 0xa9, 0xb1, 0xb9, 0xc1, 0xc9, 0xd1, 0xd9,
        0xe1, 0xe9, 0xf1, 0xf9, 0x01, 0x09, 0x11, 0x19, 0x21, 0x29, 0x31, 0x39, 0x41, 0x49,
        0x51, 0x59, 0x61, 0x69, 0x71, 0x79};
    /* Q4_0: x_0 = -2 has the largest magnitude, so d = -2 / -8 = 0.25 (f16
     * 0x3400); nibbles n_j = j for j < 16 (x = (j - 8) / 4 + 0.1), 15 - (j -
     * 16) above (x_16 = 1.99 clamps to 15; x_31 = -1.9 truncates to 0) */
    static const uint8_t q4[18] = {0x00, 0x34, 0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96,
                                   0x87, 0x78, 0x69, 0x5a, 0x4b, 0x3c, 0x2d, 0x1e, 0x0f};
    float x8[32], x4[32], v8[32], v4[32], eye[32 * 32], got[32];
    uint8_t b8[34], b4[18];
    int64_t se[2] = {32, 32}, sw[2] = {1, 32}, so[2] = {32, 1};
    int j, t;
    for (j = 0; j < 32; j++) {
        int n = j < 16 ? j : 15 - (j - 16);
        x8[j] = ((float)(8 * j - 127) + (j == 0 ? 0.0f : j % 2 ? 0.3f : -0.3f)) / 64.0f;
        v8[j] = (float)(8 * j - 127) / 64.0f;
        x4[j] = j == 0 ? -2.0f : j == 16 ? 1.99f : j == 31 ? -1.9f : (float)(n - 8) / 4.0f + 0.1f;
        v4[j] = (float)(n - 8) * 0.25f;
    }
    ref_quantize_q8_0(x8, 32, b8);
    ref_quantize_q4_0(x4, 32, b4);
    assert_memory_equal(b8, q8, 34);
    assert_memory_equal(b4, q4, 18);
    /* a = I: out[m, 0] = w[0, m], the kernel's dequantized block, exactly */
    memset(eye, 0, sizeof eye);
    for (j = 0; j < 32; j++)
        eye[j * 33] = 1.0f;
    (void)seed;
    {
        for (t = 0; t < 2; t++) {
            ot_tensor A = ot_tensor_new(dev, GLC_DTYPE_F32, 2, se, eye);
            ot_tensor W = ot_tensor_bytes(dev, t ? GLC_DTYPE_Q4_0 : GLC_DTYPE_Q8_0, 2, sw,
                                          t ? (const void *)q4 : (const void *)q8);
            ot_tensor O = ot_tensor_new(dev, GLC_DTYPE_F32, 2, so, NULL);
            glc_session *s;
            assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
            assert_int_equal(glc_op_matmul_q(s, A.view, W.view, ot_none(), O.view), GLC_OK);
            assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
            assert_true(ot_read(&O, got));
            for (j = 0; j < 32; j++)
                if (got[j] != (t ? v4[j] : v8[j]))
                    fail_msg("%s block, value %d: got %.9g, want %.9g", t ? "q4_0" : "q8_0", j,
                             (double)got[j], (double)(t ? v4[j] : v8[j]));
            ot_free(&A);
            ot_free(&W);
            ot_free(&O);
        }
    }
}

/* The other block types, one block each, built by hand from the GGML block
 * definitions, with the values they must decode to written out per chunk
 * (want). Quants follow a stated rule per value, so every nibble, high bit
 * and scale position is distinct. f16: 0x3800 0.5, 0x3400 0.25, 0x3000
 * 0.125, 0xbe00 -1.5, 0x3a00 0.75. */
static size_t hand_block(glc_dtype dt, uint8_t *b, float *want)
{
    /* Q4_K / Q5_K: d 0.5, dmin 0.25; 6-bit scales 1 2 3 4 17 35 50 63 and
     * mins 0 5 10 63 16 33 48 7, packed: bytes 0-3 the scales of chunks 0-3
     * with the top 2 bits of 17 35 50 63 above them; bytes 4-7 the mins
     * 0-3 with the top 2 bits of 16 33 48 7; bytes 8-11 the low nibbles of
     * the scales 4-7, with the low nibbles of their mins above them */
    static const uint8_t khead[16] = {0x00, 0x38, 0x00, 0x34, 0x41, 0x82, 0xc3, 0xc4,
                                      0x40, 0x85, 0xca, 0x3f, 0x01, 0x13, 0x02, 0x7f};
    /* per chunk: d * scale and dmin * min */
    static const float kd[8] = {0.5f, 1.0f, 1.5f, 2.0f, 8.5f, 17.5f, 25.0f, 31.5f};
    static const float km[8] = {0.0f, 1.25f, 2.5f, 15.75f, 4.0f, 8.25f, 12.0f, 1.75f};
    /* Q6_K: d 0.125; values 16 g .. 16 g + 15 use int8 scale g */
    static const int8_t s6[16] = {1, -2, 3, -4, 5, -6, 7, -8, 127, -128, 64, -64, 10, 20, -30, 40};
    int v, j, l, q;
    if (dt == GLC_DTYPE_Q4_K || dt == GLC_DTYPE_Q5_K) {
        int five = dt == GLC_DTYPE_Q5_K, qs = five ? 48 : 16;
        memset(b, 0, five ? 176 : 144);
        memcpy(b, khead, 16);
        for (j = 0; j < 8; j++)
            for (l = 0; l < 32; l++) {
                /* value l of chunk j: q = (l + 3 j) % 16, or (l + 5 j) % 32; chunks 2i and
                 * 2i + 1 share bytes 32 i + l of the quants (low nibble, high nibble); the
                 * fifth bit is bit j of byte l of qh (bytes 16-47) */
                q = five ? (l + 5 * j) % 32 : (l + 3 * j) % 16;
                b[qs + 32 * (j / 2) + l] |= (uint8_t)((q & 15) << 4 * (j % 2));
                if (five)
                    b[16 + l] |= (uint8_t)((q >> 4) << j);
                want[32 * j + l] = kd[j] * (float)q - km[j];
            }
        return 256;
    }
    if (dt == GLC_DTYPE_Q6_K) {
        memset(b, 0, 210);
        for (v = 0; v < 256; v++) {
            /* value v = 128 h + 32 c + l: q = (5 v + 7) % 64; its low 4 bits in byte 64 h +
             * 32 (c % 2) + l (low nibble for c < 2, high for c >= 2), its high 2 bits at
             * bit 2 c of byte 128 + 32 h + l */
            int h = v / 128, c = v % 128 / 32;
            l = v % 32;
            q = (5 * v + 7) % 64;
            b[64 * h + 32 * (c % 2) + l] |= (uint8_t)((q & 15) << 4 * (c / 2));
            b[128 + 32 * h + l] |= (uint8_t)((q >> 4) << 2 * c);
            want[v] = 0.125f * (float)s6[v / 16] * (float)(q - 32);
        }
        memcpy(b + 192, s6, 16);
        b[208] = 0x00;
        b[209] = 0x30;
        return 256;
    }
    /* 32 values: value v < 16 the low nibble of byte v of the quants, v + 16
     * its high nibble; Q5's fifth bit of value v is bit v of qh (a
     * little-endian u32) */
    {
        int qs = dt == GLC_DTYPE_Q4_1 ? 4 : dt == GLC_DTYPE_Q5_0 ? 6 : 8, qh = qs - 4;
        uint32_t hbits = 0;
        memset(b, 0, (size_t)qs + 16);
        b[1] = dt == GLC_DTYPE_Q5_0 ? 0x34 : 0x38; /* d 0.25, or 0.5 */
        if (dt != GLC_DTYPE_Q5_0)
            b[3] = dt == GLC_DTYPE_Q4_1 ? 0xbe : 0x3a; /* m -1.5, or 0.75 */
        for (v = 0; v < 32; v++) {
            q = dt == GLC_DTYPE_Q4_1 ? (3 * v + 1) % 16 : dt == GLC_DTYPE_Q5_0 ? (7 * v + 2) % 32
                                                                            : (11 * v + 5) % 32;
            b[qs + v % 16] |= (uint8_t)((q & 15) << (v < 16 ? 0 : 4));
            hbits |= (uint32_t)(q >> 4) << v;
            want[v] = dt == GLC_DTYPE_Q4_1   ? (float)q * 0.5f - 1.5f
                      : dt == GLC_DTYPE_Q5_0 ? (float)(q - 16) * 0.25f
                                             : (float)q * 0.5f + 0.75f;
        }
        if (dt != GLC_DTYPE_Q4_1)
            for (j = 0; j < 4; j++)
                b[qh + j] = (uint8_t)(hbits >> 8 * j);
        return 32;
    }
}

/* Whether matmul_q at these 256 rows of a runs the dense prefill path,
 * which decodes Q6_K into f16 first (src/core/op_quant.c dense_first,
 * decode_first): where GLC_MATMUL forces a dense kernel, and on GPUs
 * unless it forces matvec. */
static int q6_k_as_f16(glc_device *dev)
{
    int mm = dev->env.matmul;
    return mm == GLC__MATMUL_TILED64 || mm == GLC__MATMUL_TILED128 || mm == GLC__MATMUL_DIRECT ||
           (mm == GLC__MATMUL_AUTO && !strstr(dev->renderer, "llvmpipe"));
}

/* Each hand-built block through the C reference, matmul_q (a = I: out[m,
 * 0] = w[0, m]) and get_rows, all exactly the values written out (matmul_q
 * on Q6_K where it decodes to f16 first: those values as f16). A few are
 * spelled out as numbers too: a misread layout would have to agree with
 * all of them. */
static void kblock_cases(glc_device *dev, uint64_t seed)
{
    static const glc_dtype types[] = {GLC_DTYPE_Q4_K, GLC_DTYPE_Q5_K, GLC_DTYPE_Q6_K,
                                      GLC_DTYPE_Q4_1, GLC_DTYPE_Q5_0, GLC_DTYPE_Q5_1};
    uint8_t b[256];
    float want[256], got[256], *eye = calloc(256 * 256, 4);
    size_t t;
    int j;
    (void)seed;
    for (t = 0; t < sizeof types / sizeof types[0]; t++) {
        glc_dtype dt = types[t];
        int64_t e = (int64_t)hand_block(dt, b, want), se[2] = {e, e}, sw[2] = {1, e};
        int64_t so[2] = {e, 1}, si[1] = {1};
        float zero = 0.0f;
        ot_tensor A, W, O, I, G;
        glc_session *s;
        int pass;
        memset(eye, 0, 256 * 256 * 4);
        for (j = 0; j < e; j++)
            eye[j * (e + 1)] = 1.0f;
        A = ot_tensor_new(dev, GLC_DTYPE_F32, 2, se, eye);
        W = ot_tensor_bytes(dev, dt, 2, sw, b);
        O = ot_tensor_new(dev, GLC_DTYPE_F32, 2, so, NULL);
        I = ot_tensor_new(dev, GLC_DTYPE_I32, 1, si, &zero);
        G = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sw, NULL);
        ref_dequantize(dt, b, (size_t)e, got);
        for (j = 0; j < e; j++)
            if (got[j] != want[j])
                fail_msg("%s block, value %d: the C reference gives %.9g, want %.9g",
                         glc_dtype_name(dt), j, (double)got[j], (double)want[j]);
        assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
        assert_int_equal(glc_op_matmul_q(s, A.view, W.view, ot_none(), O.view), GLC_OK);
        assert_int_equal(glc_op_get_rows(s, W.view, I.view, G.view), GLC_OK);
        assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
        for (pass = 0; pass < 2; pass++) {
            float w16[256];
            memcpy(w16, want, sizeof w16);
            if (!pass && dt == GLC_DTYPE_Q6_K && q6_k_as_f16(dev))
                ot_round(GLC_DTYPE_F16, w16, (size_t)e);
            assert_true(ot_read(pass ? &G : &O, got));
            for (j = 0; j < e; j++)
                if (got[j] != w16[j])
                    fail_msg("%s block, value %d: %s gives %.9g, want %.9g", glc_dtype_name(dt),
                             j, pass ? "get_rows" : "matmul_q", (double)got[j], (double)w16[j]);
        }
        ot_free(&A);
        ot_free(&W);
        ot_free(&O);
        ot_free(&I);
        ot_free(&G);
    }
    /* spelled out: Q4_K value 0 (chunk 0, q 0): 0.5 * 0 - 0; value 37 (chunk 1, l 5,
     * q 8): 1 * 8 - 1.25; value 255 (chunk 7, l 31, q (31 + 21) % 16 = 4): 31.5 * 4 -
     * 1.75. Q6_K value 200 (h 1, c 2, l 8, q 1007 % 64 = 47, scale 12 = 10): 0.125 *
     * 10 * 15. Q5_0 value 31 (q 219 % 32 = 27): 11 * 0.25 */
    hand_block(GLC_DTYPE_Q4_K, b, want);
    assert_true(want[0] == 0.0f && want[37] == 6.75f && want[255] == 124.25f);
    assert_true(b[16 + 32 * 0 + 5] == 0x85 && b[16 + 96 + 31] == 0x41);
    hand_block(GLC_DTYPE_Q6_K, b, want);
    assert_true(want[200] == 18.75f);
    hand_block(GLC_DTYPE_Q5_0, b, want);
    assert_true(want[31] == 2.75f);
    free(eye);
}

static void test_q_blocks(void **state)
{
    (void)state;
    on_both(block_cases, 0);
    on_both(kblock_cases, 0);
}

/* ---- decode shapes ----
 * Up to 8 rows of a (the decode; GPUs with subgroups run the split
 * variant, a subgroup per tile of RN weight rows): seeded shapes over
 * block counts a row may have (1, 2, 3 .. past a subgroup's lanes, odd and
 * even, so rows start at every 2-byte alignment), rows of W in any number,
 * each row count of a, both formats, with and without bias. */
static void decode_cases(glc_device *dev, uint64_t seed)
{
    static const int blocks[] = {1, 2, 3, 5, 8, 11, 33, 64, 129, 256};
    size_t i;
    for (i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        glc_dtype dt = (seed + i) % 2 ? GLC_DTYPE_Q4_0 : GLC_DTYPE_Q8_0;
        int64_t m = 1 + (int64_t)(tu_rand(&seed) % 8), n = 1 + (int64_t)(tu_rand(&seed) % 97);
        run_q(dev, &seed, dt, 1, m, n, 32 * blocks[i], (int)(i % 2));
    }
    run_q(dev, &seed, GLC_DTYPE_Q4_0, 1, 1, 3072, 2048, 1); /* the 1b decoder's QKV */
    run_q(dev, &seed, GLC_DTYPE_Q8_0, 1, 1, 8195, 96, 0);   /* many rows, odd */
    run_q(dev, &seed, GLC_DTYPE_Q8_0, 2, 2, 515, 512, 0);   /* rank 3 a: 4 rows */
}

static void test_q_decode(void **state)
{
    (void)state;
    on_both(decode_cases, 71);
}

/* The other block types: K of 1, 2, 3, 5 and 11 blocks (256 to 2816 for
 * the K types), 1, 3, 17 and 64 rows of a, odd and prime N, quantized
 * weights and random blocks, with and without bias. */
static const glc_dtype more_types[] = {GLC_DTYPE_Q4_K, GLC_DTYPE_Q6_K, GLC_DTYPE_Q5_K,
                                       GLC_DTYPE_Q4_1, GLC_DTYPE_Q5_0, GLC_DTYPE_Q5_1};
#define NMORE (sizeof more_types / sizeof more_types[0])

static int64_t block_of(glc_dtype dt)
{
    return glc_dtype_row_bytes(dt, 32) ? 32 : 256;
}

static void more_cases(glc_device *dev, uint64_t seed)
{
    static const int64_t blocks[] = {1, 11, 2, 3, 5}, rows[] = {1, 3, 17, 64},
                         cols[] = {7, 1, 31, 13, 97};
    size_t t, i;
    for (t = 0; t < NMORE; t++)
        for (i = 0; i < 4; i++) {
            uint64_t rs = seed + t;
            random_blocks = i % 2 ? &rs : NULL;
            run_q(dev, &seed, more_types[t], 1, rows[i], cols[(t + i) % 5],
                  block_of(more_types[t]) * blocks[(t + i) % 5], (int)((t + i) % 2));
        }
    random_blocks = NULL;
    run_q(dev, &seed, GLC_DTYPE_Q4_K, 1, 1, 3072, 2048, 1); /* the 1b decoder's QKV */
    run_q(dev, &seed, GLC_DTYPE_Q6_K, 2, 2, 515, 512, 0);   /* rank 3 a: 4 rows */
}

static void test_q_more_types(void **state)
{
    (void)state;
    on_both(more_cases, 73);
}

/* llvmpipe's row variant with its weights as RGBA32UI texels (their raw
 * words) and a as RGBA32F texels: every block type, random blocks, weights
 * of whole texels whose rows start anywhere in a texel (Q4_0 and Q8_0
 * rows of 18 and 34 bytes), one and several rows of a, with texels and
 * without (the SSBO reads); then 24 generated shapes of one row of a with
 * a texel limit within 2 texels of the weights' (and weights of part of a
 * texel, which stay SSBO reads), against the C reference. (Each texel
 * form is a program llvmpipe compiles: the generated rows keep to one row
 * of a, whose texels stay under the limit.) */
static void test_q_row_texels(void **state)
{
    static const glc_dtype types[] = {GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_0, GLC_DTYPE_Q4_1,
                                      GLC_DTYPE_Q5_0, GLC_DTYPE_Q5_1, GLC_DTYPE_Q4_K,
                                      GLC_DTYPE_Q5_K, GLC_DTYPE_Q6_K};
    enum { NT = sizeof types / sizeof types[0] };
    glc_device *dev = tu_device(NULL);
    int have = dev->info.features.texel_buffers, texel;
    uint64_t seed = 0x7e11e5, rs;
    size_t t, i;
    (void)state;
    for (texel = 0; texel <= have; texel++) {
        TU_TEXEL_ROUND(dev, texel, 1 << 20);
        for (t = 0; t < NT; t++) {
            int64_t blk = block_of(types[t]);
            rs = seed + t;
            random_blocks = &rs;
            /* 8 or 24 rows: whole texels of any row size; rows of one block */
            run_q(dev, &seed, types[t], 1, 1, t % 2 ? 24 : 8, blk, (int)(t % 2));
            run_q(dev, &seed, types[t], 1, 3, 40, blk * (1 + (int64_t)(t % 3)), (int)(t % 2 == 0));
        }
    }
    for (i = 0; have && i < 24; i++) {
        uint64_t r = tu_rand(&seed);
        glc_dtype dt = types[r % NT];
        int64_t blk = block_of(dt), m = 1; /* (a under the limit: the weights' texels toggle) */
        int64_t n = 8 * (1 + (int64_t)((r >> 8) % 9)) + ((r >> 16) % 4 == 0 ? (int64_t)((r >> 20) % 8) : 0);
        int64_t k = blk * (1 + (int64_t)((r >> 24) % (blk > 32 ? 3 : 8)));
        rs = r;
        random_blocks = &rs;
        TU_TEXEL_ROUND(dev, 1, tu_texel_limit_near(r >> 40, (int64_t)(q_bytes(dt, n, k) / 4)));
        run_q(dev, &seed, dt, 1, m, n, k, (int)((r >> 32) % 2));
    }
    random_blocks = NULL;
    glc_device_destroy(dev);
}

/* ---- matmul_affine ---- */

static void run_affine(glc_device *dev, uint64_t *seed, int bits, int group, glc_dtype tsc,
                       glc_dtype tbi, int64_t m, int64_t n, int64_t k, int with_bias)
{
    int64_t groups = k / group, words = k * bits / 32;
    int64_t sa[2], sw[2], ss[2], so[2], sb[1];
    float *a = malloc((size_t)(m * k) * 4), *w = malloc((size_t)(n * k) * 4);
    float *wd = malloc((size_t)(n * k) * 4), *bias = malloc((size_t)n * 4);
    float *sc = malloc((size_t)(n * groups) * 4), *bi = malloc((size_t)(n * groups) * 4);
    float *ref = malloc((size_t)(m * n) * 4);
    uint32_t *wq = malloc((size_t)(n * words) * 4);
    ot_tensor A, W, S, Bi, B, O;
    glc_session *s;
    glc_status st;
    char what[160];
    ot_fill(seed, a, (size_t)(m * k), -1.0f, 1.0f);
    ot_fill(seed, w, (size_t)(n * k), -1.0f, 1.0f);
    ot_fill(seed, bias, (size_t)n, -1.0f, 1.0f);
    /* biases in f32 need no rounding, but both tensors share one rounding
     * rule when they share a dtype; quantize with the scales' dtype and
     * round the biases to theirs */
    ref_quantize_affine(w, n, k, bits, group, tsc, wq, sc, bi);
    ot_round(tbi, bi, (size_t)(n * groups));
    ref_dequantize_affine(wq, sc, bi, n, k, bits, group, wd);
    ref_matmul_nt(a, wd, with_bias ? bias : NULL, m, n, k, ref);
    sa[0] = so[0] = m;
    sa[1] = k;
    so[1] = n;
    sw[0] = ss[0] = sb[0] = n;
    sw[1] = words;
    ss[1] = groups;
    A = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sa, a);
    W = ot_tensor_bytes(dev, GLC_DTYPE_U32, 2, sw, wq);
    S = ot_tensor_new(dev, tsc, 2, ss, sc);
    Bi = ot_tensor_new(dev, tbi, 2, ss, bi);
    B = ot_tensor_new(dev, GLC_DTYPE_F32, 1, sb, bias);
    O = ot_tensor_new(dev, GLC_DTYPE_F32, 2, so, NULL);
    snprintf(what, sizeof what, "matmul_affine %d bits, group %d, scales %s, biases %s, %lld x "
             "%lld x %lld%s", bits, group, glc_dtype_name(tsc), glc_dtype_name(tbi),
             (long long)m, (long long)n, (long long)k, with_bias ? " + bias" : "");
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    st = glc_op_matmul_affine(s, A.view, W.view, S.view, Bi.view, bits, group,
                              with_bias ? B.view : ot_none(), O.view);
    if (st != GLC_OK)
        fail_msg("%s: %s", what, glc_device_errmsg(dev));
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    check_out(what, &O, ref, (size_t)(m * n));
    ot_free(&A);
    ot_free(&W);
    ot_free(&S);
    ot_free(&Bi);
    ot_free(&B);
    ot_free(&O);
    free(a);
    free(w);
    free(wd);
    free(bias);
    free(sc);
    free(bi);
    free(ref);
    free(wq);
}

/* ---- matmul_expert ---- */

/* id >= 0: every pair routed to expert id; -1: random ids, some outside
 * [0, E) */
static void run_expert(glc_device *dev, uint64_t *seed, glc_dtype dt, int per_pair, int64_t m,
                       int64_t kk, int64_t e, int64_t n, int64_t k, int64_t id_all)
{
    int64_t pairs = m * kk, arows = per_pair ? pairs : m, sa[3], sw[3], si[2], so[3], p, j;
    float *a = malloc((size_t)(arows * k) * 4), *w = malloc((size_t)(e * n * k) * 4);
    float *wd = malloc((size_t)(e * n * k) * 4), *ref = malloc((size_t)(pairs * n) * 4);
    float *ids = malloc((size_t)pairs * 4);
    void *wq;
    ot_tensor A, W, I, O;
    glc_session *s;
    glc_status st;
    char what[160];
    ot_fill(seed, a, (size_t)(arows * k), -1.0f, 1.0f);
    ot_fill(seed, w, (size_t)(e * n * k), -1.0f, 1.0f);
    wq = encode(dt, w, e * n, k, wd);
    for (p = 0; p < pairs; p++) {
        uint64_t r = ot_rand(seed) % 16;
        int64_t id = (int64_t)(ot_rand(seed) % (uint64_t)e);
        if (r == 0)
            id = -1; /* outside [0, E): a zero row */
        else if (r == 1)
            id = e;
        else if (r == 2)
            id = 100000;
        else if (r < 6 && p % kk)
            id = (int64_t)ids[p - 1]; /* the same expert twice for one row */
        ids[p] = (float)(id_all >= 0 ? id_all : id);
    }
    for (p = 0; p < pairs; p++) {
        int64_t id = (int64_t)ids[p];
        if (id < 0 || id >= e)
            for (j = 0; j < n; j++)
                ref[p * n + j] = 0.0f;
        else
            ref_matmul_nt(a + (per_pair ? p : p / kk) * k, wd + id * n * k, NULL, 1, n, k,
                          ref + p * n);
    }
    sa[0] = si[0] = so[0] = m;
    si[1] = so[1] = kk;
    so[2] = n;
    sa[1] = per_pair ? kk : k;
    sa[2] = k;
    sw[0] = e;
    sw[1] = n;
    sw[2] = k;
    A = ot_tensor_new(dev, GLC_DTYPE_F32, per_pair ? 3 : 2, sa, a);
    W = ot_tensor_bytes(dev, dt, 3, sw, wq);
    I = ot_tensor_new(dev, GLC_DTYPE_I32, 2, si, ids);
    O = ot_tensor_new(dev, GLC_DTYPE_F32, 3, so, NULL);
    snprintf(what, sizeof what, "matmul_expert %s, a %s, M %lld, k %lld, E %lld, N %lld, K %lld",
             glc_dtype_name(dt), per_pair ? "[M, k, K]" : "[M, K]", (long long)m, (long long)kk,
             (long long)e, (long long)n, (long long)k);
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    st = glc_op_matmul_expert(s, A.view, W.view, I.view, O.view);
    if (st != GLC_OK)
        fail_msg("%s: %s", what, glc_device_errmsg(dev));
    assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
    check_out(what, &O, ref, (size_t)(pairs * n));
    ot_free(&A);
    ot_free(&W);
    ot_free(&I);
    ot_free(&O);
    free(a);
    free(w);
    free(wd);
    free(ref);
    free(ids);
    free(wq);
}

/* Experts of the other block types: a decode row, a prefill with a row
 * per pair, ids out of range. */
static void expert_more_cases(glc_device *dev, uint64_t seed)
{
    size_t t;
    for (t = 0; t < NMORE; t++) {
        int64_t k = block_of(more_types[t]) * (t % 2 ? 3 : 1);
        run_expert(dev, &seed, more_types[t], 0, 1, 2, 4, 7, k, -1);
        run_expert(dev, &seed, more_types[t], 1, 9, 2, 3, 13, k, -1);
    }
}

static void test_expert_more_types(void **state)
{
    (void)state;
    on_both(expert_more_cases, 79);
}

/* ---- grids past the group limit ---- */

static void folded_cases(glc_device *dev, uint64_t seed)
{
    /* narrowed limits fold even small grids into 3-D (room for the 447
     * groups the GPU variant of the expert case needs) */
    dev->info.limits.max_group_count[0] = 3;
    dev->info.limits.max_group_count[1] = 2;
    dev->info.limits.max_group_count[2] = 128;
    run_q(dev, &seed, GLC_DTYPE_Q4_0, 1, 3, 1021, 64, 1);
    run_q(dev, &seed, GLC_DTYPE_Q6_K, 1, 2, 1021, 256, 0);
    run_affine(dev, &seed, 4, 64, GLC_DTYPE_F16, GLC_DTYPE_F32, 5, 997, 128, 1);
    run_expert(dev, &seed, GLC_DTYPE_Q8_0, 0, 4, 2, 6, 509, 32, -1);
}

static void test_grid_folding(void **state)
{
    (void)state;
    on_both(folded_cases, 41);
}

/* ---- the loop cap ----
 * llvmpipe ends an invocation after 65535 loop iterations. Before, with
 * GLC_OK: matmul_q Q4_0 with K 262144 left an output unwritten;
 * matmul_expert a [256, 4096], w f32 [1, 1, 4096], ids all 0 never wrote
 * rows 204-255; a MoE prefill (512 tokens, top-2 of 4 experts, K 4096, f16)
 * left 1664 of 8192 outputs unwritten. Now expert tiles scan ranges of
 * pairs and long K is split into parts summed by a second pass. */
static void test_loop_cap(void **state)
{
    glc_device_desc d = tu_desc(NULL);
    glc_device *dev = tu_device_desc(&d);
    uint64_t seed = 51;
    (void)state;
    if (!dev->info.limits.max_loop_iterations)
        dev->info.limits.max_loop_iterations = 65535; /* plan as llvmpipe must */
    run_q(dev, &seed, GLC_DTYPE_Q4_0, 1, 1, 3, 262144, 1);
    run_q(dev, &seed, GLC_DTYPE_Q4_K, 1, 1, 3, 262144, 0);
    run_q(dev, &seed, GLC_DTYPE_Q6_K, 1, 2, 2, 262144, 1);
    run_expert(dev, &seed, GLC_DTYPE_F32, 0, 256, 1, 1, 1, 4096, 0);
    run_expert(dev, &seed, GLC_DTYPE_F16, 0, 512, 2, 4, 8, 4096, -1);
    glc_device_destroy(dev);
}

/* A small forced cap: K parts and pair ranges at small sizes, every format,
 * affine in one pass and (ES minimums: 4 SSBOs) in two. */
static void cap_cases(glc_device *dev, uint64_t seed)
{
    dev->info.limits.max_loop_iterations = 2000;
    run_q(dev, &seed, GLC_DTYPE_Q8_0, 1, 5, 7, 8192, 1);
    run_q(dev, &seed, GLC_DTYPE_Q4_0, 3, 2, 9, 8192, 0);
    {
        size_t t;
        for (t = 0; t < NMORE; t++) /* each block type in K parts (a part may end inside
                                     * a super-block) */
            run_q(dev, &seed, more_types[t], 1, 1 + (int64_t)t % 3, 5,
                  8192 + 2 * block_of(more_types[t]), (int)(t % 2));
    }
    run_affine(dev, &seed, 4, 64, GLC_DTYPE_F16, GLC_DTYPE_F32, 3, 5, 8192, 1);
    run_affine(dev, &seed, 8, 32, GLC_DTYPE_F32, GLC_DTYPE_F16, 2, 3, 8192, 0);
    run_expert(dev, &seed, GLC_DTYPE_Q8_0, 0, 40, 2, 3, 5, 1024, -1); /* K parts and ranges */
    run_expert(dev, &seed, GLC_DTYPE_F32, 1, 30, 2, 2, 3, 100, -1);   /* ranges only */
    run_expert(dev, &seed, GLC_DTYPE_Q4_0, 0, 64, 1, 2, 3, 256, 1);
    run_expert(dev, &seed, GLC_DTYPE_Q4_K, 0, 40, 2, 3, 5, 1024, -1); /* K parts and ranges */
    run_expert(dev, &seed, GLC_DTYPE_F16, 0, 9, 2, 3, 4, 3000, -1);
}

static void test_loop_cap_forced(void **state)
{
    (void)state;
    on_both(cap_cases, 61);
}

/* ---- NaN and infinities ----
 * Blocks whose f16 scale is +-Inf or NaN dequantize as GGML's do (Inf * 0
 * is NaN): get_rows gives the reference's values bit for bit, NaN where it
 * has NaN. A NaN in a row of a makes that row of matmul_q's output NaN,
 * and only that row. (An infinite a is not checked: the kernels sum a
 * chunk's quants before scaling, so a quant of 0 times Inf gives NaN where
 * the dequantized weight, a nonzero min, would give an infinity.) */
static int same_float(float a, float b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static void naninf_cases(glc_device *dev, uint64_t seed)
{
    static const glc_dtype types[] = {GLC_DTYPE_Q4_K, GLC_DTYPE_Q6_K, GLC_DTYPE_Q5_K,
                                      GLC_DTYPE_Q4_1, GLC_DTYPE_Q5_0, GLC_DTYPE_Q5_1,
                                      GLC_DTYPE_Q8_0};
    static const uint16_t bad[3] = {0x7c00, 0xfc00, 0x7e00}; /* +Inf, -Inf, NaN */
    size_t t;
    for (t = 0; t < sizeof types / sizeof types[0]; t++) {
        glc_dtype dt = types[t];
        int64_t e = block_of(dt), v = 5, d = 2 * e, m = 3, n = v, j, i;
        int64_t st[2] = {v, d}, si[1] = {v}, so[2] = {v, d}, sa[2] = {m, d}, sm[2] = {m, n};
        size_t per = glc_dtype_row_bytes(dt, e), nb = (size_t)(v * d / e), b;
        uint8_t *q = malloc(nb * per);
        float *want = malloc((size_t)(v * d) * 4), *got = malloc((size_t)(v * d) * 4);
        float ids[5] = {4, 3, 2, 1, 0}, *a = malloc((size_t)(m * d) * 4), out[15];
        /* the f16 field of the scale: d of Q6_K sits at 208, every other's at 0 */
        size_t at = dt == GLC_DTYPE_Q6_K ? 208 : 0;
        ot_tensor T, I, O, A, M;
        glc_session *s;
        ref_random_blocks(dt, (size_t)(v * d), &seed, q);
        for (b = 0; b < nb; b += 3) /* every third block's scale bad */
            memcpy(q + b * per + at, &bad[(b / 3) % 3], 2);
        ref_dequantize(dt, q, (size_t)(v * d), want);
        ot_fill(&seed, a, (size_t)(m * d), -1.0f, 1.0f);
        a[d + 7] = NAN; /* row 1 */
        T = ot_tensor_bytes(dev, dt, 2, st, q);
        I = ot_tensor_new(dev, GLC_DTYPE_I32, 1, si, ids);
        O = ot_tensor_new(dev, GLC_DTYPE_F32, 2, so, NULL);
        A = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sa, a);
        M = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sm, NULL);
        assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
        assert_int_equal(glc_op_get_rows(s, T.view, I.view, O.view), GLC_OK);
        assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
        assert_true(ot_read(&O, got));
        for (i = 0; i < v; i++)
            for (j = 0; j < d; j++)
                if (!same_float(got[i * d + j], want[(4 - i) * d + j]))
                    fail_msg("%s get_rows with bad scales, row %lld value %lld: got %g, want %g",
                             glc_dtype_name(dt), (long long)i, (long long)j,
                             (double)got[i * d + j], (double)want[(4 - i) * d + j]);
        ref_random_blocks(dt, (size_t)(v * d), &seed, q); /* finite weights for the matmul */
        ot_free(&T);
        T = ot_tensor_bytes(dev, dt, 2, st, q);
        assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
        assert_int_equal(glc_op_matmul_q(s, A.view, T.view, ot_none(), M.view), GLC_OK);
        assert_int_equal(glc_session_finish(s, NULL), GLC_OK);
        assert_true(ot_read(&M, out));
        for (i = 0; i < m * n; i++)
            if ((i / n == 1) != (isnan(out[i]) != 0) || (i / n != 1 && !isfinite(out[i])))
                fail_msg("%s matmul_q with a NaN in row 1 of a: output %lld is %g",
                         glc_dtype_name(dt), (long long)i, (double)out[i]);
        ot_free(&T);
        ot_free(&I);
        ot_free(&O);
        ot_free(&A);
        ot_free(&M);
        free(q);
        free(want);
        free(got);
        free(a);
    }
}

static void test_q_nan_inf(void **state)
{
    (void)state;
    on_both(naninf_cases, 83);
}

/* ---- errors ---- */

static void test_errors(void **state)
{
    tu_log log;
    glc_device *dev = tu_device(&log);
    glc_session *s;
    glc_dispatch_stats stats;
    int64_t sa[2] = {2, 96}, sa64[2] = {2, 64}, sq[2] = {5, 96}, sw4[2] = {5, 12},
            ssc[2] = {5, 3}, so[2] = {2, 5}, so6[2] = {2, 6}, sb[1] = {5}, sb4[1] = {4},
            sqf[2] = {5, 48}, sew[3] = {4, 5, 96}, sid[2] = {2, 2}, sid3[2] = {3, 2},
            seo[3] = {2, 2, 5};
    ot_tensor a = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sa, NULL);
    ot_tensor a64 = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sa64, NULL);
    ot_tensor ah = ot_tensor_new(dev, GLC_DTYPE_F16, 2, sa, NULL);
    ot_tensor wq = ot_tensor_bytes(dev, GLC_DTYPE_Q8_0, 2, sq, NULL);
    ot_tensor wf = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sq, NULL);
    ot_tensor w4 = ot_tensor_bytes(dev, GLC_DTYPE_U32, 2, sw4, NULL);
    ot_tensor sc = ot_tensor_new(dev, GLC_DTYPE_F16, 2, ssc, NULL);
    ot_tensor sci = ot_tensor_new(dev, GLC_DTYPE_I32, 2, ssc, NULL);
    ot_tensor o = ot_tensor_new(dev, GLC_DTYPE_F32, 2, so, NULL);
    ot_tensor o6 = ot_tensor_new(dev, GLC_DTYPE_F32, 2, so6, NULL);
    ot_tensor b = ot_tensor_new(dev, GLC_DTYPE_F32, 1, sb, NULL);
    ot_tensor b4 = ot_tensor_new(dev, GLC_DTYPE_F32, 1, sb4, NULL);
    ot_tensor ew = ot_tensor_bytes(dev, GLC_DTYPE_Q4_0, 3, sew, NULL);
    ot_tensor id = ot_tensor_new(dev, GLC_DTYPE_I32, 2, sid, NULL);
    ot_tensor idf = ot_tensor_new(dev, GLC_DTYPE_F32, 2, sid, NULL);
    ot_tensor id3 = ot_tensor_new(dev, GLC_DTYPE_I32, 2, sid3, NULL);
    ot_tensor eo = ot_tensor_new(dev, GLC_DTYPE_F32, 3, seo, NULL);
    glc_view v, none = ot_none();
    (void)state;
    assert_int_equal(glc_session_begin(dev, GLC_SESSION_DIRECT, &s), GLC_OK);
    /* affine: the group must divide K, bits and group sizes as listed */
    assert_int_equal(glc_op_matmul_affine(s, a.view, w4.view, sc.view, sc.view, 4, 64, none,
                                          o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_affine: group_size 64 does not divide K = 96 (a [2, 96] f32)");
    assert_int_equal(glc_op_matmul_affine(s, a.view, w4.view, sc.view, sc.view, 3, 32, none,
                                          o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "matmul_affine: bits 3 (need 4 or 8)");
    assert_int_equal(glc_op_matmul_affine(s, a.view, w4.view, sc.view, sc.view, 4, 16, none,
                                          o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_affine: group_size 16 (need 32, 64 or 128)");
    assert_int_equal(glc_op_matmul_affine(s, a.view, w4.view, sc.view, sc.view, 8, 32, none,
                                          o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_affine: w [5, 12] u32: must be u32 [N, K * bits / 32] = [N, 24] "
                        "for a [2, 96] f32");
    assert_int_equal(glc_op_matmul_affine(s, a.view, w4.view, sci.view, sc.view, 4, 32, none,
                                          o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_affine: scales [5, 3] i32: must be f32 or f16");
    v = sc.view;
    v.shape[1] = 2;
    assert_int_equal(glc_op_matmul_affine(s, a.view, w4.view, sc.view, v, 4, 32, none, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_affine: scales [5, 3] f16 and biases [5, 2] f16: must be [N, K "
                        "/ group_size] = [5, 3]");
    assert_int_equal(glc_op_matmul_affine(s, a.view, w4.view, sc.view, sc.view, 4, 32, b4.view,
                                          o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "matmul_affine: bias [4] f32: must be f32 [5]");
    /* matmul_q: dtypes, K, the output's shape */
    assert_int_equal(glc_op_matmul_q(s, a.view, wf.view, none, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_q: w [5, 96] f32: must be GGML blocks [N, K] (q8_0, q4_0, q4_1, "
                        "q5_0, q5_1, q4_K, q5_K, q6_K)");
    assert_int_equal(glc_op_matmul_q(s, ah.view, wq.view, none, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "matmul_q: a [2, 96] f16: must be f32");
    assert_int_equal(glc_op_matmul_q(s, a64.view, wq.view, none, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_q: a [2, 64] f32 and w [5, 96] q8_0: K must match and be whole "
                        "blocks (32 values)");
    assert_int_equal(glc_op_matmul_q(s, a.view, wq.view, b.view, o6.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_q: output 0 is [2, 6] f32, the op makes [2, 5] f32");
    /* K = 48 is no whole number of Q8_0 blocks: the view itself is refused */
    v = glc_view_make(wq.buf, wq.pad, GLC_DTYPE_Q8_0, 2, sqf);
    assert_int_equal(glc_op_matmul_q(s, a.view, v, none, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_q: tensor 1: rank 2, dtype q8_0: not a valid shape for the dtype");
    /* K = 96 is no whole Q4_K super-block (256 values): the view, and a
     * buffer of that shape, are refused */
    v = glc_view_make(wq.buf, wq.pad, GLC_DTYPE_Q4_K, 2, sq);
    assert_int_equal(glc_op_matmul_q(s, a.view, v, none, o.view), GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_q: tensor 1: rank 2, dtype q4_K: not a valid shape for the dtype");
    {
        glc_buffer *kb = NULL;
        assert_int_equal(glc_buffer_create(dev, GLC_DTYPE_Q6_K, 2, sq, &kb), GLC_ERR_INVALID_ARG);
        assert_null(kb);
        assert_string_equal(glc_device_errmsg(dev), "glc_buffer_create: the last dim 96 is not a "
                                                    "multiple of the q6_K block (256)");
    }
    /* a view past the buffer's end (past the sentinel pad after it too, which
     * is the binding alignment: 256 bytes under GLC_LIMITS=min) */
    v = wq.view;
    v.shape[0] = 5 + (int64_t)(wq.pad / 34) + 2;
    assert_int_equal(glc_op_matmul_q(s, a.view, v, none, o.view), GLC_ERR_BOUNDS);
    tu_assert_contains(glc_device_errmsg(dev), "matmul_q: tensor 1: bytes [");
    tu_assert_contains(glc_device_errmsg(dev), "run past the buffer's");
    /* matmul_expert */
    assert_int_equal(glc_op_matmul_expert(s, a.view, ew.view, idf.view, eo.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev), "matmul_expert: ids [2, 2] f32: must be i32 [M, k]");
    assert_int_equal(glc_op_matmul_expert(s, a.view, ew.view, id3.view, eo.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_expert: a [2, 96] f32, w [4, 5, 96] q4_0, ids [3, 2] i32: a must "
                        "be [M, K] or [M, k, K] for ids [M, k] and w [E, N, K]");
    assert_int_equal(glc_op_matmul_expert(s, a.view, wq.view, id.view, eo.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_expert: w [5, 96] q8_0: must be f32, f16 or GGML blocks [E, N, K] "
                        "(q8_0, q4_0, q4_1, q5_0, q5_1, q4_K, q5_K, q6_K)");
    assert_int_equal(glc_op_matmul_expert(s, a.view, ew.view, id.view, o.view),
                     GLC_ERR_INVALID_ARG);
    assert_string_equal(glc_device_errmsg(dev),
                        "matmul_expert: output 0 is [2, 5] f32, the op makes [2, 2, 5] f32");
    assert_int_equal(glc_session_finish(s, &stats), GLC_OK);
    assert_int_equal(stats.dispatches, 0); /* nothing was recorded */
    assert_int_equal(log.last_status, GLC_ERR_INVALID_ARG);
    ot_free(&a);
    ot_free(&a64);
    ot_free(&ah);
    ot_free(&wq);
    ot_free(&wf);
    ot_free(&w4);
    ot_free(&sc);
    ot_free(&sci);
    ot_free(&o);
    ot_free(&o6);
    ot_free(&b);
    ot_free(&b4);
    ot_free(&ew);
    ot_free(&id);
    ot_free(&idf);
    ot_free(&id3);
    ot_free(&eo);
    glc_device_destroy(dev);
}

/* The plan of matmul_q's decode (a [1, k], w [64, k] of type w, with a
 * fused rms_norm when norm) on dev as the planner sees it under
 * GLC_MATMUL=matvec (the GPUs' split kernel; emulated subgroups where the
 * device has none), with max_shared bytes of shared memory and no loop
 * cap. */
static void stage_plan(glc_device *dev, glc_dtype w, int64_t k, int norm, uint32_t max_shared,
                       glc__op_plan *p)
{
    glc__op_args a;
    glc__target tg;
    glc__op_args_init(&a, GLC__OP_MATMUL_Q, 5, 1);
    memset(a.t, 0, sizeof a.t);
    a.t[0].present = a.t[1].present = 1;
    a.t[0].dtype = GLC_DTYPE_F32;
    a.t[0].rank = 2;
    a.t[0].shape[0] = 1;
    a.t[0].shape[1] = k;
    a.t[1].dtype = w;
    a.t[1].rank = 2;
    a.t[1].shape[0] = 64;
    a.t[1].shape[1] = k;
    if (norm) { /* the rms_norm's weight [k] */
        a.t[4].present = 1;
        a.t[4].dtype = GLC_DTYPE_F32;
        a.t[4].rank = 1;
        a.t[4].shape[0] = k;
        a.mm.norm_eps = 1e-5f;
    }
    glc__target_of(dev, &tg);
    tg.matmul = GLC__MATMUL_MATVEC;
    tg.limits.max_shared_bytes = max_shared;
    tg.limits.max_loop_iterations = 0; /* no cap: K whole */
    tu_plan_op(&a, &tg, p);
}

/* The value of `#define name v` in d's defines, or -1 */
static long define_of(const glc__dispatch_plan *d, const char *name)
{
    char key[32];
    const char *at;
    snprintf(key, sizeof key, "#define %s ", name);
    at = strstr(d->defines, key);
    return at ? strtol(at + strlen(key), NULL, 10) : -1;
}

/* matmul_q's decode stages a in shared memory (glsl/matmul_q.glsl ASH)
 * only where the stage, a fused rms_norm's sums and an emulated subgroup's
 * sums (4 bytes an invocation each) all fit the device's shared memory
 * (op_quant.c shared_bytes: before it, a K 4096 product with its norm was
 * planned past a 16 KiB limit); past 16 KiB only for the types measured to
 * gain (Q4_0, Q8_0, Q4_K) and up to 32 KiB, with 8 tiles a group. Written
 * cases, then seeded random types, K (past both bounds), norms and limits
 * around each bound, against the rule as stated here. */
static void test_stage_fits_shared(void **state)
{
    static const struct {
        glc_dtype w;
        int64_t k;
        int norm;
        uint32_t shared;
        long want; /* ASH's value expected (K / 4), or -1: no stage */
    } c[] = {{GLC_DTYPE_Q4_0, 4096, 1, 16384, -1},  {GLC_DTYPE_Q4_0, 4096, 1, 65536, 1024},
             {GLC_DTYPE_Q4_0, 2048, 0, 8000, -1},   {GLC_DTYPE_Q4_0, 2048, 1, 65536, 512},
             {GLC_DTYPE_Q4_0, 8192, 0, 32000, -1},  {GLC_DTYPE_Q4_0, 8192, 0, 65536, 2048},
             {GLC_DTYPE_Q8_0, 8192, 1, 65536, 2048}, {GLC_DTYPE_Q4_K, 8192, 0, 65536, 2048},
             {GLC_DTYPE_Q6_K, 8192, 0, 65536, -1},  {GLC_DTYPE_Q4_0, 16384, 0, 1 << 20, -1}};
    static const glc_dtype types[] = {GLC_DTYPE_Q4_0, GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_K,
                                      GLC_DTYPE_Q6_K, GLC_DTYPE_Q5_K, GLC_DTYPE_Q4_1,
                                      GLC_DTYPE_Q5_0, GLC_DTYPE_Q5_1};
    glc_device *dev = tu_device(NULL);
    uint32_t inv = dev->info.limits.max_invocations < 128 ? dev->info.limits.max_invocations : 128;
    uint64_t seed = 0x57a9e;
    int i, wide_seen = 0, small_seen = 0, refused_seen = 0, wide_ok = 0;
    (void)state;
    for (i = 0; i < 400; i++) {
        glc_dtype w;
        int64_t k, blk;
        int norm, vsg;
        uint32_t shared, lanes, local;
        uint64_t bytes, extra;
        long want, got;
        glc__op_plan p;
        if (i < (int)(sizeof c / sizeof c[0])) {
            w = c[i].w, k = c[i].k, norm = c[i].norm, shared = c[i].shared;
        } else {
            static const int64_t around[] = {-1024, -4, 0, 4, 512, 1024, 1536, 2048};
            w = types[ot_rand(&seed) % (sizeof types / sizeof types[0])];
            blk = (int64_t)glc__dtype_block(w);
            k = blk * (int64_t)(1 + ot_rand(&seed) % (uint64_t)(12288 / blk));
            norm = (int)(ot_rand(&seed) % 2);
            shared = (uint32_t)((int64_t)k * 4 + around[ot_rand(&seed) % 8]);
        }
        stage_plan(dev, w, k, norm, shared, &p);
        assert_int_equal(p.ndisp, 1);
        assert_true(define_of(&p.disp[0], "SLOTS") > 0); /* the split variant */
        vsg = define_of(&p.disp[0], "VSG") > 0;
        lanes = vsg ? 8 : dev->info.features.subgroup_size;
        bytes = (uint64_t)k * 4;
        /* the rule: within 16 KiB any type at the planner's group; to 32 KiB
         * the measured types, 8 tiles a group where the subgroups are real */
        local = bytes > 16384 && !vsg ? 8 * lanes : inv / lanes * lanes;
        extra = 4u * local * (uint64_t)(norm + vsg);
        want = bytes + extra <= shared &&
                       (bytes <= 16384 ||
                        (bytes <= 32768 && local <= dev->info.limits.max_invocations &&
                         (w == GLC_DTYPE_Q4_0 || w == GLC_DTYPE_Q8_0 || w == GLC_DTYPE_Q4_K)))
                   ? (long)(k / 4)
                   : -1;
        /* the written cases agree with the rule, on a device that holds 8
         * subgroups a group (the wide ones' group: not under GLC_LIMITS=min
         * on a GPU, where the rule refuses them) */
        wide_ok = vsg || 8 * lanes <= dev->info.limits.max_invocations;
        if (i < (int)(sizeof c / sizeof c[0]) && wide_ok)
            assert_int_equal(want, c[i].want);
        got = define_of(&p.disp[0], "ASH");
        if (got != want)
            fail_msg("case %d (%s, K %lld, norm %d, %u bytes shared, %s): ASH %ld, expected %ld; "
                     "defines \"%s\"",
                     i, glc_dtype_name(w), (long long)k, norm, shared, vsg ? "VSG" : "subgroups",
                     got, want, p.disp[0].defines);
        if (got > 0)
            assert_int_equal(p.disp[0].local_size, local);
        wide_seen += got > 0 && bytes > 16384;
        small_seen += got > 0 && bytes <= 16384;
        refused_seen += got < 0;
    }
    /* the generated cases reached each outcome (the wide stage where the
     * device holds its group) */
    assert_true((wide_seen > 5 || !wide_ok) && small_seen > 5 && refused_seen > 5);
    glc_device_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_q_blocks),
        cmocka_unit_test(test_q_decode),
        cmocka_unit_test(test_q_more_types),
        cmocka_unit_test(test_q_row_texels),
        cmocka_unit_test(test_expert_more_types),
        cmocka_unit_test(test_q_nan_inf),
        cmocka_unit_test(test_grid_folding),
        cmocka_unit_test(test_loop_cap),
        cmocka_unit_test(test_loop_cap_forced),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_stage_fits_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
