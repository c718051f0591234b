/*
 * Dense matmul: out = a x B (+ bias) or a x B^T, batched. Rules and plans
 * here (GL-free); kernels glsl/matmul.comp and, for mat-vec shapes on
 * GPUs, glsl/matvec.comp (past its loop cap, glsl/matmul_q.comp, whose
 * f32/f16 weight path is the same product).
 *
 * Args: tensors a, b, bias (optional), out; a->mm (ops.h): transpose_b;
 * act, an activation applied after the bias (a glc_unary_op; set by the
 * compiler's fusion pass), and its act_param; seg[0..3] (fused Q/K/V,
 * rank-2 shared b only): columns [0, seg[0]), [seg[0], seg[1]), [seg[1], N)
 * of the product go to three row-major matrices in out, at elements 0,
 * seg[2] and seg[3]; glu (fused SwiGLU, rank-2 transposed b): a holds a
 * gate matrix and an up matrix, [M, K] each, at the element offsets
 * glu_gate and glu_up; the product reads act(gate) * up (a's last dim is
 * 2K). The fusion passes (fuse.c) set act, seg and glu.
 * A fused residual (fuse.c's mm_res): a 4th input x, f32, out's elements
 * (its last dim N; a gated input's pack may give out another batch shape),
 * read before out (tensors a, b, bias, x, out): out = x + act(a B + bias),
 * the add rounded as a separate add would. Its kernels (define RES, a 5th
 * binding: fuse.c asks for 5 SSBO blocks): matvec, direct, tiled and ksum
 * (K split); not with seg, and never the matmul_q kernel
 * (a mat-vec past matvec.comp's loop cap or K % 8 goes direct instead).
 * A fused rms_norm prologue (fuse.c's mm_norm): a 5th input w_n, f32 [K],
 * and mm.norm_eps: the product reads rms_norm(a row, w_n) in a's place
 * (tensors a, b, bias, residual or none, w_n, out). Decode shapes: the
 * matvec and direct kernels (NORM), each invocation or subgroup computing
 * the norm of the rows it reads (from the values it loads anyway); K % 4
 * == 0, shared transposed b.
 * A fused SwiGLU epilogue (fuse.c's glu_out, mm.glu_out its activation,
 * mm.glu_up_first the halves' order): b's N rows are a gate half and an
 * up half, out [.., M, N / 2] = act(gate + bias) * (up + bias), a
 * subgroup or invocation summing a gate row and its partner. Decode
 * shapes: matvec, direct (never tiled), matmul_q; past the loop cap the
 * product is plain and ksum applies it.
 * a F32 [.., M, K]; b F32/F16/BF16 [N, K] (transpose_b) or [K, N], or with
 * batch dims that broadcast against a's (each equal or 1, aligned at the
 * end); out F32 [a's batch dims.., M, N]. A b with no batch (or all batch
 * dims 1) is shared: a's batch dims fold into M, one matrix product.
 * matmul_q's prefill shapes plan here with b GGML blocks [N, K]
 * (transposed, shared; op_quant.c's plan_dense, never matmul's own args):
 * the tiled and direct kernels decode b's quads as they load them.
 *
 * Variants (chosen from the target; GLC_MATMUL forces one, for tests and
 * benchmarks on drivers where it would not be chosen):
 * - matvec: transpose_b, shared b, M <= 8, f32/f16/bf16 b, subgroups, not
 *   llvmpipe: glsl/matvec.comp (a subgroup per RN rows of b, lanes split
 *   K; a product of few rows splits each row's K over 2 subgroups of the
 *   group, matvec_ks): the decode path, bound by reading b once. One row
 *   of a (M 1) takes its LK layout (matvec_lk): a group of up to 512 lanes
 *   across K per row of b, a's values read once into registers. Both
 *   layouts also run without subgroup sums (in shared memory: LK_SG 0, and
 *   glsl/subgroup.glsl's emulated subgroup, VSG), so GLC_MATMUL=matvec
 *   runs them on llvmpipe: the tests' way to run the GPUs' decode kernel
 *   there.
 * - tiled: shared-memory blocks of BM x BN outputs, BK = 16 at a time,
 *   TM x TN per invocation: 128 x 128 (256 invocations, 8 x 8 each, 16 KiB
 *   of shared memory) when the device allows 256 invocations and the grid
 *   has >= 192 blocks of it; else 64 x 64 (4 x 4 each on 256 invocations,
 *   8 x 4 on the ES 3.1 minimum of 128; 8 KiB). Measured on the H100
 *   (bench/RESULTS.md): 128 x 128 reaches 62-66% of cuBLAS FP32 at 2048^3
 *   and 4096^3, but only with its loops unrolled (NVIDIA's optionNV pragma;
 *   without it 4%); at 1024^3 (64 blocks) 64 x 64 is faster (56% vs 39%).
 * - direct: an invocation per RM x 4 outputs straight from global memory,
 *   no shared memory: llvmpipe, where barrier() costs more than the reuse
 *   gains (measured: DESIGN.md).
 */
#include "env.h"
#include "op_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIRECT_RM_LLVMPIPE 16 /* the direct kernel's rows an invocation on llvmpipe */
#define DIRECT_RM_LLVMPIPE_BIG 32 /* ... from DIRECT_RM_BIG_FROM rows of a */
#define DIRECT_RM_BIG_FROM 64
#define DIRECT_RM_SMALL 4 /* elsewhere, and on llvmpipe for small products */
#define DIRECT_LOCAL 64
#define KSUM_LOCAL 64
#define MM_LOOP_OVERHEAD 64 /* loop iterations besides the K loop, with room */
/* matvec shape, measured on the H100 (1 x 4096 x 14336 f16: 64% of device
 * copy bandwidth with these; 2 rows per subgroup 52%, 4 rows 44%) */
#define MATVEC_SLOTS 8  /* subgroups per group */
#define MATVEC_RN 1     /* rows of b per subgroup */
#define MATVEC_UNROLL 4 /* 16-byte loads per row and lane in flight */
/* K parts until a product has this many subgroups, at most MATVEC_KS_MAX:
 * H100, glc-bench-ops "mv chain" (f16): 2 parts 1.00-1.27x the GB/s of 1
 * on the 1b shapes (wo, qkv, w2), 4 or 8 parts 0.92-0.98x of 2 */
#define MATVEC_KS_SUBGROUPS 4096
#define MATVEC_KS_MAX 2
/* Lanes across K (matvec.comp LK, one row of a): the group's lanes, the
 * most words of a row a lane owns, and the 16-byte loads a lane has in
 * flight (rows x its words). H100, 1b f16 decode 2.31-2.37 -> 1.94-1.98
 * ms/token (256 lanes, 2 loads; "mv chain": 1 row a group of 512 lanes
 * 1.00-1.14x the GB/s of 2 subgroups a row, 2 rows 0.90-1.02x, 4 rows
 * 0.65-0.90x; bench/RESULTS.md) */
#define MATVEC_LK_LANES 512
#define MATVEC_LK_MAX 4
#define MATVEC_LK_LOADS 2

/* The rope epilogue (fuse.c qkv_rope; matmul and matmul_q): one row of a
 * over b [N, K] (transposed for matmul) whose columns are mm.rope_qw of q,
 * then mm.rope_kw of k, then the rest v's (any of the three may be empty:
 * the projections may be packed or apart), heads of mm.rope_hd; no
 * activation, gated input, SwiGLU epilogue, residual or segments. Inputs
 * 5-8: the positions (i32 [1]), the freq_factors (f32 [rope_dim / 2], or
 * none), the k cache [rows, k's heads, head dim] where there are k
 * columns, the v cache [rows, v's heads, head dim] where there are v
 * columns (f32/f16/bf16, written). q's and k's pairs rotate as rope(mode,
 * rope_dim, base) does; out gets q rotated, k and v as they are; k's
 * rotated row goes to the k cache row pos, v's row to the v cache row pos
 * (a position outside a cache: not written). */
glc_status glc__mm_rope_infer(const glc__op_args *a, int64_t m, int64_t n, char *err, size_t len)
{
    const glc__tensor *pos = &a->t[5], *ff = &a->t[6], *kc = &a->t[7], *vc = &a->t[8];
    int64_t hd = a->mm.rope_hd, qw = a->mm.rope_qw, kw = a->mm.rope_kw, vw = n - qw - kw;
    const char *op = a->op == GLC__OP_MATMUL ? "matmul" : "matmul_q";
    glc__op_args r;
    if (a->nin != 9 || m != 1 || (a->op == GLC__OP_MATMUL && !a->mm.transpose_b) ||
        a->t[1].rank != 2 || a->mm.act || a->mm.glu || a->mm.glu_out || a->mm.seg[0] ||
        a->t[3].present)
        return glc__op_error(err, len, op,
                             "the rope epilogue takes one row of a over b [N, K] transposed, "
                             "without activation, gated input, SwiGLU, residual or segments");
    if (hd <= 0 || hd % 2 || qw < 0 || kw < 0 || vw < 0 || qw % hd || kw % hd || vw % hd)
        return glc__op_error(err, len, op,
                             "rope epilogue: %lld columns are no q | k | v of %lld, %lld and the "
                             "rest in heads of %lld (even)",
                             (long long)n, (long long)qw, (long long)kw, (long long)hd);
    if (kc->present != (kw > 0) || vc->present != (vw > 0) ||
        (kw && (kc->rank != 3 || !glc__is_float(kc->dtype) || kc->shape[1] * hd != kw ||
                kc->shape[2] != hd || glc__numel(kc) > 0xffffffffll)) ||
        (vw && (vc->rank != 3 || !glc__is_float(vc->dtype) || vc->shape[1] * hd != vw ||
                vc->shape[2] != hd || glc__numel(vc) > 0xffffffffll)))
        return glc__op_error(err, len, op,
                             "rope epilogue: the caches do not fit %lld k and %lld v columns "
                             "([rows, heads, %lld] each where there are columns)",
                             (long long)kw, (long long)vw, (long long)hd);
    /* the rotation: the rope op's rule over one row of a head (mode,
     * rope_dim, base, positions, freq_factors) */
    glc__op_args_init(&r, GLC__OP_ROPE, 3, 1);
    memset(r.t, 0, sizeof r.t);
    r.t[0].present = 1;
    r.t[0].dtype = GLC_DTYPE_F32;
    r.t[0].rank = 3;
    r.t[0].shape[0] = r.t[0].shape[1] = 1;
    r.t[0].shape[2] = hd;
    r.t[1] = *pos;
    r.t[2] = *ff;
    r.rope.mode = a->mm.rope_mode;
    r.rope.dim = a->mm.rope_dim;
    r.rope.base = a->mm.rope_base;
    return glc__ops[GLC__OP_ROPE]->infer(&r, err, len);
}

static glc_status mm_infer(glc__op_args *a, char *err, size_t len)
{
    const glc__tensor *x = &a->t[0], *b = &a->t[1], *bias = &a->t[2];
    glc__tensor *o = &a->t[a->nin], *res = a->nin > 3 ? &a->t[3] : NULL;
    const glc__tensor *nw = a->nin > 4 ? &a->t[4] : NULL;
    int nt = a->mm.transpose_b != 0, i, nbatch_a, nbatch_b;
    int64_t k, kb, n;
    char sx[96], sb[96], sc[96];
    if (x->dtype != GLC_DTYPE_F32 || x->rank < 1)
        return glc__op_error(err, len, "matmul", "a %s: must be f32 [.., M, K]",
                             glc__shape_str(x, sx, sizeof sx));
    if (!glc__is_float(b->dtype) || b->rank < 2)
        return glc__op_error(err, len, "matmul", "b %s: must be f32, f16 or bf16 %s",
                             glc__shape_str(b, sb, sizeof sb), nt ? "[.., N, K]" : "[.., K, N]");
    k = x->shape[x->rank - 1];
    if (a->mm.glu) { /* fused SwiGLU input: a row is gate | up, K each */
        int64_t g0 = a->mm.glu_gate, u0 = a->mm.glu_up, lo = g0 < u0 ? g0 : u0;
        int64_t hi = g0 < u0 ? u0 : g0;
        /* the halves may not overlap; their extent (hi + M K elements, where
         * a's shape at lower variable values no longer says) is the binding
         * glu_params asks for, which the compiler checks against a's memory */
        if (!nt || b->rank != 2 || k % 8 || g0 % 4 || u0 % 4 || hi - lo < glc__numel(x) / 2 ||
            a->mm.glu < GLC_UNARY_GELU || a->mm.glu > GLC_UNARY_RELU)
            return glc__op_error(err, len, "matmul", "a %s: not a gated input this matmul takes",
                                 glc__shape_str(x, sx, sizeof sx));
        k /= 2;
    }
    kb = nt ? b->shape[b->rank - 1] : b->shape[b->rank - 2];
    n = nt ? b->shape[b->rank - 2] : b->shape[b->rank - 1];
    if (k != kb)
        return glc__op_error(err, len, "matmul", "a %s and b %s%s: K differs (%lld vs %lld)",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(b, sb, sizeof sb),
                             nt ? " (transposed)" : "", (long long)k, (long long)kb);
    nbatch_a = x->rank > 2 ? x->rank - 2 : 0;
    nbatch_b = b->rank - 2;
    for (i = 0; i < nbatch_b; i++) {
        int64_t db = b->shape[nbatch_b - 1 - i];
        int64_t da = i < nbatch_a ? x->shape[nbatch_a - 1 - i] : 1;
        if (db != 1 && (i >= nbatch_a || db != da))
            return glc__op_error(err, len, "matmul",
                                 "a %s and b %s: b's batch dims must each be 1 or a's",
                                 glc__shape_str(x, sx, sizeof sx),
                                 glc__shape_str(b, sb, sizeof sb));
    }
    if (bias->present && (bias->dtype != GLC_DTYPE_F32 || bias->rank != 1 || bias->shape[0] != n))
        return glc__op_error(err, len, "matmul", "bias %s: must be f32 [%lld]",
                             glc__shape_str(bias, sc, sizeof sc), (long long)n);
    if (a->mm.glu_out && (!nt || b->rank != 2 || n % 2 || a->mm.glu || a->mm.act || a->mm.seg[0] ||
                          (res && res->present) || a->mm.glu_out < GLC_UNARY_GELU ||
                          a->mm.glu_out > GLC_UNARY_RELU))
        return glc__op_error(err, len, "matmul",
                             "b %s: not a gate | up pair this matmul's SwiGLU epilogue takes",
                             glc__shape_str(b, sb, sizeof sb));
    o->dtype = GLC_DTYPE_F32;
    o->rank = x->rank;
    memcpy(o->shape, x->shape, sizeof o->shape);
    o->shape[x->rank - 1] = a->mm.glu_out ? n / 2 : n;
    if (glc__numel(o) > 0xffffffffll || glc__numel(x) > 0xffffffffll ||
        glc__numel(b) > 0xffffffffll)
        return glc__op_error(err, len, "matmul", "a %s, b %s: more than 2^32 - 1 elements",
                             glc__shape_str(x, sx, sizeof sx), glc__shape_str(b, sb, sizeof sb));
    if (res && res->present &&
        (res->dtype != GLC_DTYPE_F32 || glc__numel(res) != glc__numel(o) ||
         res->shape[res->rank - 1] != n || a->mm.seg[0]))
        return glc__op_error(err, len, "matmul", "residual %s: must be f32, %s's elements, no segments",
                             glc__shape_str(res, sc, sizeof sc), glc__shape_str(o, sx, sizeof sx));
    if (nw && nw->present &&
        (nw->dtype != GLC_DTYPE_F32 || nw->rank != 1 || nw->shape[0] != k || k % 4 || !nt ||
         b->rank != 2 || a->mm.glu))
        return glc__op_error(err, len, "matmul",
                             "norm weight %s: must be f32 [K], K %% 4 == 0, b [N, K] transposed, "
                             "no gated input",
                             glc__shape_str(nw, sc, sizeof sc));
    if (glc__mm_has_rope(a))
        return glc__mm_rope_infer(a, glc__numel(x) / (a->mm.glu ? 2 * k : k), n, err, len);
    return GLC_OK;
}

enum { V_AUTO, V_MATVEC, V_TILED128, V_TILED64, V_DIRECT };

/* GLC_MATMUL, read at device creation (env.c) */
static int forced_variant(const glc__target *tg)
{
    switch (tg->matmul) {
    case GLC__MATMUL_MATVEC: return V_MATVEC;
    case GLC__MATMUL_TILED128: return V_TILED128;
    case GLC__MATMUL_TILED64: return V_TILED64;
    case GLC__MATMUL_DIRECT: return V_DIRECT;
    default: return V_AUTO;
    }
}

/* For the fused Q/K/V projection (a->mm.seg), the SEG define and the
 * segments' params from slot s1 on (GLC__KP_SEGS: S1, S12, SEG1, SEG2). */
void glc__plan_segments(glc__dispatch_plan *d, const glc__op_args *a, int s1)
{
    int j;
    if (!a->mm.seg[0])
        return;
    glc__define(d, "SEG", "1");
    for (j = 0; j < 4; j++)
        glc__plan_param_at(d, s1 + j, (uint32_t)a->mm.seg[j]);
}

void glc__define_glu_out(glc__dispatch_plan *d, const glc__op_args *a)
{
    glc__define_int(d, "GLU_OUT", a->mm.glu_out);
    if (a->mm.glu_up_first)
        glc__define(d, "GLU_UP_FIRST", "1");
}

/* 1 when a matmul's args carry a fused residual (the 4th input) */
static int has_res(const glc__op_args *a)
{
    return (a->op == GLC__OP_MATMUL || a->op == GLC__OP_MATMUL_Q) && a->nin > 3 && a->t[3].present;
}

/* 1 when they carry a fused rms_norm prologue (its weight the 5th input) */
static int has_norm(const glc__op_args *a)
{
    return a->op == GLC__OP_MATMUL && a->nin > 4 && a->t[4].present;
}

void glc__plan_rope(glc__dispatch_plan *d, const glc__op_args *a, const int slot[7])
{
    const glc__tensor *kc = &a->t[7], *vc = &a->t[8];
    int64_t hd = a->mm.rope_hd, rd = a->mm.rope_dim ? a->mm.rope_dim : hd;
    double base = a->mm.rope_base != 0 ? a->mm.rope_base : 10000.0;
    glc__define(d, "QKV_ROPE", "1");
    glc__define_int(d, "NEOX", a->mm.rope_mode == GLC_ROPE_NEOX);
    glc__define_int(d, "HAS_FF", a->t[6].present);
    glc__define_int(d, "ROPE_POS", d->nbind);
    glc__plan_bind(d, 5, GLC_READ);
    if (a->t[6].present) {
        glc__define_int(d, "ROPE_FF", d->nbind);
        glc__plan_bind(d, 6, GLC_READ);
    }
    if (kc->present) { /* k columns: their cache */
        glc__define_t(d, "TKC", kc->dtype);
        glc__define_int(d, "ROPE_KC", d->nbind);
        glc__plan_bind(d, 7, GLC_WRITE);
    }
    if (vc->present) {
        glc__define_t(d, "TVC", vc->dtype);
        glc__define_int(d, "ROPE_VC", d->nbind);
        glc__plan_bind(d, 8, GLC_WRITE);
    }
    glc__plan_param_at(d, slot[0], (uint32_t)a->mm.rope_qw);
    glc__plan_param_at(d, slot[1], (uint32_t)(a->mm.rope_qw + a->mm.rope_kw));
    glc__plan_param_at(d, slot[2], (uint32_t)hd);
    glc__plan_param_at(d, slot[3], (uint32_t)rd);
    glc__plan_paramf_at(d, slot[4], (float)(-2.0 * log2(base) / (double)rd));
    glc__plan_param_at(d, slot[5], kc->present ? (uint32_t)kc->shape[0] : 0u);
    glc__plan_param_at(d, slot[6], vc->present ? (uint32_t)vc->shape[0] : 0u);
}

/* The bindings every dense variant takes (a, b, out, bias or a in its
 * place; with a residual, the RES define and it as a 5th) and, for the fused Q/K/V projection, the segments: their params
 * (from slot s1) and an out binding through the last segment's end. */
static void bind_dense(glc__dispatch_plan *d, const glc__op_args *a, int64_t m, int64_t n,
                       int s1)
{
    glc__plan_segments(d, a, s1);
    glc__plan_bind(d, 0, GLC_READ);
    glc__plan_bind(d, 1, GLC_READ);
    glc__plan_bind(d, a->nin, GLC_WRITE);
    glc__plan_bind(d, a->t[2].present ? 2 : 0, GLC_READ); /* a stands in for no bias */
    if (has_res(a)) {
        glc__define(d, "RES", "1");
        glc__plan_bind(d, 3, GLC_READ);
    }
    if (has_norm(a)) { /* NORM: its binding; NORM_EPS a float literal */
        char eps[32];
        snprintf(eps, sizeof eps, "%.9g", (double)a->mm.norm_eps);
        glc__define_int(d, "NORM", d->nbind);
        glc__define(d, "NORM_EPS", eps);
        glc__plan_bind(d, 4, GLC_READ);
    }
    if (a->mm.seg[0])
        d->bind[2].size = (size_t)(a->mm.seg[3] + m * (n - a->mm.seg[1])) * 4;
}

/* The fused SwiGLU input (mm.glu the activation; mm.glu_gate, mm.glu_up
 * where the gate and up halves start in a, elements): the define, a bound
 * from the first half on through the second's m x k elements (not a's
 * shape: below the maxima the halves keep their places, further apart
 * than a's shape says), and the signed distance as param `at`. */
static void glu_params(glc__dispatch_plan *d, const glc__op_args *a, int at, int64_t m,
                       int64_t k)
{
    int64_t g0 = a->mm.glu_gate, u0 = a->mm.glu_up;
    if (!a->mm.glu)
        return;
    glc__define_int(d, "GLU", a->mm.glu);
    glc__plan_param_at(d, at, (uint32_t)(int32_t)(u0 - g0));
    d->bind[0].offset = (size_t)(g0 < u0 ? g0 : u0) * 4; /* a from the first half on */
    d->bind[0].size = (size_t)((g0 < u0 ? u0 - g0 : g0 - u0) + m * k) * 4;
}

/* llvmpipe's direct kernel reads b^T (f32 as RGBA32F, f16 and bf16 as their
 * raw words, RGBA32UI), a and the norm's weight through
 * buffer textures where they are whole texels within the device's limit
 * (its SSBO loads are a loop over the SIMD lanes, a texel fetch one
 * gather: the tiny decode 2.6 -> 1.6-1.9 ms/token with b alone). Each keeps
 * its SSBO binding (unread), so the kernel's binding points stay; the
 * texture units go in order: BTEX 0, then ATEX, NTEX (their defines). */
static void direct_texels(glc__dispatch_plan *d, const glc__op_args *a, const glc__target *tg,
                          int nt, int64_t k)
{
    const glc__tensor *b = &a->t[1];
    size_t abytes = d->bind[0].size ? d->bind[0].size : (size_t)glc__numel(&a->t[0]) * 4;
    int unit = 0;
    /* (b's values the measure of what the product streams, whatever its dtype) */
    if (k % 4 || !glc__texel_worth(tg, (uint64_t)glc__numel(b) * 4))
        return;
    if (nt && b->dtype == GLC_DTYPE_F32 && glc__texel_ok(tg, (uint64_t)glc__numel(b) * 4)) {
        glc__define(d, "BTEX", "1");
        glc__plan_bind_texel(d, 1);
        unit++;
    } else if (nt && (b->dtype == GLC_DTYPE_F16 || b->dtype == GLC_DTYPE_BF16) &&
               glc__texel_ok(tg, (uint64_t)glc__numel(b) * 2)) { /* their raw words */
        glc__define(d, "BTEX", "1");
        if (k % 8 == 0) /* a texel a row's 8 values: one fetch for two steps */
            glc__define(d, "BTEX8", "1");
        glc__plan_bind_texel_as(d, 1, GLC_BIND_TEXEL_UINT);
        unit++;
    }
    /* (GLU: both halves; an offset legal for a's SSBO binding is one for
     * its texels: texel_buffers says so) */
    if (glc__texel_ok(tg, abytes)) {
        glc__define_int(d, "ATEX", unit++);
        glc__plan_bind_texel(d, 0);
        d->bind[d->nbind - 1].offset = d->bind[0].offset;
        d->bind[d->nbind - 1].size = d->bind[0].size;
    }
    if (has_norm(a) && glc__texel_ok(tg, (uint64_t)glc__numel(&a->t[4]) * 4)) {
        glc__define_int(d, "NTEX", unit++);
        glc__plan_bind_texel(d, 4);
    }
}

/* The subgroup size matvec's subgroup sums may use; 0: none (no subgroup
 * arithmetic, or subgroups of fewer than 4) */
static uint32_t subgroup_size(const glc__target *tg)
{
    const glc_device_features *f = &tg->features;
    return f->subgroup && (f->subgroup_ops & 0x4u) && f->subgroup_size >= 4 ? f->subgroup_size : 0;
}

/* The lanes of matvec's subgroup-a-row layout: the device's subgroup, or
 * on a device without subgroup sums (GLC_MATMUL=matvec in tests) an
 * emulated one of MATVEC_VSG lanes (glsl/subgroup.glsl VSG) */
#define MATVEC_VSG 8
static uint32_t matvec_sg(const glc__target *tg)
{
    uint32_t sg = subgroup_size(tg);
    return sg ? sg : MATVEC_VSG;
}

/* b's elements in one of matvec's 16-byte words */
static uint32_t matvec_epw(const glc__tensor *b)
{
    return b->dtype == GLC_DTYPE_F32 ? 4 : 8;
}

/* K parts (glsl/matvec.comp KS): a product of few rows and long K, as the
 * decode's w2 (2048 rows of 8192), has too few subgroups to keep the GPU's
 * memory busy; KS subgroups then share each slot's K, each part at least
 * one step of the subgroup's loads, until there are MATVEC_KS_SUBGROUPS. */
static uint32_t matvec_ks(const glc__target *tg, uint64_t slots, int64_t words, uint32_t unroll)
{
    uint32_t sg = matvec_sg(tg), ks = 1;
    if (tg->tune.ks)
        ks = tg->tune.ks;
    else
        while (ks < MATVEC_KS_MAX && slots * ks < MATVEC_KS_SUBGROUPS &&
               (uint64_t)words >= 2u * ks * sg * unroll)
            ks *= 2;
    while (ks > 1 && (uint64_t)ks * sg > tg->limits.max_invocations)
        ks /= 2;
    return ks;
}


/* Lanes across K for a product of one row of a: the group size (a multiple
 * of the subgroup, within the device's limit, no larger than the row's
 * words need) and the words a lane owns; 0 where a row has more words than
 * MATVEC_LK_MAX a lane (the subgroup-per-row layout then). */
static uint32_t matvec_lk(const glc__target *tg, int64_t m, int64_t words, uint32_t *lk)
{
    uint32_t sg = subgroup_size(tg), lanes = MATVEC_LK_LANES;
    if (m != 1 || tg->tune.lanes == 1)
        return 0;
    if (tg->tune.lanes)
        lanes = tg->tune.lanes;
    if (lanes > tg->limits.max_invocations)
        lanes = tg->limits.max_invocations;
    if (tg->limits.max_group_size[0] && lanes > tg->limits.max_group_size[0])
        lanes = tg->limits.max_group_size[0];
    sg = sg ? sg : 1; /* no subgroups: GLC_MATMUL=matvec in tests (matvec.comp) */
    lanes = lanes / sg * sg;
    if ((int64_t)lanes > words) /* (words > 0: K % 8 == 0, K > 0) */
        lanes = (uint32_t)((words + sg - 1) / sg * sg);
    if (!lanes || (words + lanes - 1) / lanes > MATVEC_LK_MAX)
        return 0;
    *lk = (uint32_t)((words + lanes - 1) / lanes);
    return lanes;
}

/* The decode path: glsl/matvec.comp, a subgroup per RN rows of b, 16-byte
 * coalesced loads, UNROLL of them in flight per row and lane; for one row
 * of a, a group per RN rows with its lanes across K (matvec_lk). */
static void plan_matvec(const glc__op_args *a, const glc__target *tg, glc__op_plan *p, int64_t m,
                        int64_t n, int64_t k)
{
    const glc__tensor *b = &a->t[1];
    uint32_t sg = matvec_sg(tg), slots = MATVEC_SLOTS, rn = MATVEC_RN;
    uint32_t unroll = MATVEC_UNROLL, epw = matvec_epw(b), ks = 1, lk = 0;
    uint32_t lanes = matvec_lk(tg, m, k / epw, &lk), rows = (uint32_t)(a->mm.glu_out ? n / 2 : n);
    glc__dispatch_plan *d;
    if (lanes) { /* RN rows (gates and ups: 2 RN) a group, MATVEC_LK_LOADS loads a lane */
        rn = MATVEC_LK_LOADS / lk / (a->mm.glu_out ? 2 : 1);
        rn = rn ? rn : 1;
        unroll = slots = 1;
    }
    if (tg->tune.rn) /* a benchmark's sweep (ops.h) */
        rn = tg->tune.rn;
    if (glc__mm_has_rope(a)) /* a slot is a pair of columns that rotate together */
        rn = 2;
    if (tg->tune.unroll && !lanes)
        unroll = tg->tune.unroll;
    if (tg->tune.slots && !lanes)
        slots = tg->tune.slots;
    if (slots * sg > tg->limits.max_invocations) /* fewer subgroups a group (GLC_LIMITS=min) */
        slots = sg <= tg->limits.max_invocations ? tg->limits.max_invocations / sg : 1;
    if (!lanes)
        ks = matvec_ks(tg, (uint64_t)rows / rn, k / epw, unroll);
    if (ks > 1) /* the group keeps its subgroups: fewer slots */
        slots = slots > ks ? slots / ks : 1;
    d = glc__plan_dispatch(p, "matvec", lanes ? lanes : slots * ks * sg, 1);
    d->groups = ((uint64_t)rows + slots * rn - 1) / (slots * rn);
    if (ks > 1)
        glc__define_int(d, "KS", ks);
    if (!lanes && !subgroup_size(tg))
        glc__define_int(d, "VSG", sg);
    if (lanes) {
        glc__define_int(d, "LK", lk);
        glc__define_int(d, "LK_SG", subgroup_size(tg) != 0);
    }
    if (a->mm.glu_out) /* the SwiGLU epilogue: a slot's gate rows and their up rows */
        glc__define_glu_out(d, a);
    glc__define_t(d, "TW", b->dtype);
    glc__define_int(d, "CM", m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : 8);
    glc__define_int(d, "RN", rn);
    glc__define_int(d, "UNROLL", unroll);
    glc__define_int(d, "SLOTS", slots);
    if (a->mm.act)
        glc__define_int(d, "ACT", a->mm.act);
    glc__plan_param_at(d, GLC__KP_MATVEC_M, (uint32_t)m);
    glc__plan_param_at(d, GLC__KP_MATVEC_N, (uint32_t)n);
    glc__plan_param_at(d, GLC__KP_MATVEC_K, (uint32_t)k);
    glc__plan_param_at(d, GLC__KP_MATVEC_WORDS, (uint32_t)(k / epw));
    glc__plan_param_at(d, GLC__KP_MATVEC_FLAGS, a->t[2].present ? 1u : 0u);
    glc__plan_paramf_at(d, GLC__KP_MATVEC_ACT_PARAM, a->mm.act_param);
    bind_dense(d, a, m, n, GLC__KP_MATVEC_S1);
    glu_params(d, a, GLC__KP_MATVEC_GLU_DELTA, m, k);
    if (glc__mm_has_rope(a)) {
        static const int slot[7] = {GLC__KP_MATVEC_R_QW,    GLC__KP_MATVEC_R_KEND,
                                    GLC__KP_MATVEC_R_D,     GLC__KP_MATVEC_R_DIM,
                                    GLC__KP_MATVEC_R_THETA, GLC__KP_MATVEC_R_KROWS,
                                    GLC__KP_MATVEC_R_VROWS};
        glc__plan_rope(d, a, slot);
    }
}

static glc_status k_split(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                          int64_t step, int64_t cost, uint64_t tiles, uint64_t total, int64_t n,
                          char *err, size_t len);
static uint64_t k_parts(const glc__op_args *a, const glc__target *tg, int64_t step, int64_t cost);

/* Whether matvec.comp's K loop stays under the device's loop budget: a
 * lane walks K / (elements a word * subgroup * UNROLL) steps, each up to
 * MATVEC_STEP_COST iterations with its inner loops. Past it, the matmul_q
 * kernel (whose K is split) takes the product. */
#define MATVEC_STEP_COST 40
static int matvec_fits(const glc__target *tg, const glc__tensor *b, int64_t k)
{
    uint64_t budget = glc__loop_budget(tg), sg = tg->features.subgroup_size;
    uint64_t per = (b->dtype == GLC_DTYPE_F32 ? 4u : 8u) * (sg ? sg : 1) * MATVEC_UNROLL;
    return !budget || ((uint64_t)k + per - 1) / per * MATVEC_STEP_COST + 64 <= budget;
}

static glc_status mm_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                          char *err, size_t len)
{
    const glc__tensor *x = &a->t[0], *b = &a->t[1];
    int nt = a->mm.transpose_b != 0, shared_b = 1, i, v, takes;
    int glu = a->mm.glu != 0, blocks = glc__is_block(b->dtype); /* matmul_q's (plan_dense) */
    int64_t alast = x->shape[x->rank - 1], k = glu ? alast / 2 : alast;
    int64_t n = nt ? b->shape[b->rank - 2] : b->shape[b->rank - 1], nout = n;
    int64_t m, batches = 1, inner = 1, kcost, rm;
    uint32_t s_hi = 0, s_lo = 0;
    uint64_t tm, tn, macs;
    glc__dispatch_plan *d;
    int subgroups = subgroup_size(tg) != 0;
    for (i = 0; i < b->rank - 2; i++)
        if (b->shape[i] != 1)
            shared_b = 0;
    if (shared_b) {
        m = x->rank >= 2 ? glc__numel(x) / alast : 1;
    } else {
        int r = x->rank, rb = b->rank;
        m = x->shape[r - 2];
        batches = glc__numel(x) / (m * k);
        inner = x->shape[r - 3];
        s_lo = b->shape[rb - 3] == 1 ? 0u : (uint32_t)(k * n);
        if (r == 4 && rb == 4 && b->shape[0] != 1)
            s_hi = (uint32_t)(b->shape[1] * k * n);
    }

    v = forced_variant(tg);
    /* (matvec's rows of a: CM, at most 8; more go the device's way) */
    if (v == V_MATVEC && !(nt && b->rank == 2 && !blocks && m <= 8))
        v = V_AUTO;
    if (v == V_TILED128 && tg->limits.max_invocations < 256)
        v = V_TILED64;
    if (v == V_AUTO) {
        if (tg->is_llvmpipe)
            v = V_DIRECT;
        else if (nt && b->rank == 2 && m <= 8 && subgroups && !blocks)
            v = V_MATVEC;
        else if (m <= 4)
            v = V_DIRECT;
        else if (tg->limits.max_invocations >= 256 &&
                 (uint64_t)((m + 127) / 128) * (uint64_t)((n + 127) / 128) * (uint64_t)batches >= 192)
            v = V_TILED128;
        else
            v = V_TILED64;
    }
    /* matvec takes the product where K is whole words and its loop fits */
    takes = k % matvec_epw(b) == 0 && matvec_fits(tg, b, k);
    if (glu && !(v == V_MATVEC && k % matvec_epw(b) == 0))
        v = V_DIRECT; /* the kernels that read a gated input */
    if (a->mm.glu_out && v != V_MATVEC)
        v = V_DIRECT; /* the kernels with the SwiGLU epilogue (and matmul_q's) */
    if (has_res(a) && v == V_MATVEC && !takes)
        v = V_DIRECT; /* the matmul_q kernel adds no residual */
    if (has_norm(a) && !(v == V_MATVEC && takes))
        v = V_DIRECT; /* the kernels with a norm prologue */
    if (glc__mm_has_rope(a) && !(v == V_MATVEC && takes)) /* (fuse.c plans it before it fuses) */
        return glc__op_error(err, len, "matmul", "the rope epilogue needs the matvec kernel");
    if (v == V_MATVEC && takes) { /* (any device: matvec_sg) */
        plan_matvec(a, tg, p, m, n, k);
        return GLC_OK;
    }
    if (v == V_MATVEC && b->dtype != GLC_DTYPE_BF16) /* (matmul_q reads no bf16) */
        return glc__op_MATMUL_Q_desc.plan(a, tg, p, err, len);
    if (v == V_MATVEC)
        v = V_DIRECT;

    /* direct: RM rows of a an invocation; on llvmpipe 16 from 16 rows (its
     * JIT keeps them in registers: 512^3 20.5 -> 40.7 GFLOP/s on 2 cores)
     * and 32 from 64 (-> 47), each only for a product with the work to
     * repay its compile (GLC__ROWS_MIN_MACS) */
    macs = (uint64_t)m * (uint64_t)n * (uint64_t)k * (uint64_t)batches;
    rm = m == 1 ? 1
         : tg->is_llvmpipe && m >= DIRECT_RM_BIG_FROM && macs >= tg->rows_min
             ? DIRECT_RM_LLVMPIPE_BIG
         : tg->is_llvmpipe && m >= 16 && macs >= tg->rows_min / 16 ? DIRECT_RM_LLVMPIPE
                                                                   : DIRECT_RM_SMALL;
    /* the K loop's cost a step: the SwiGLU epilogue's 8 columns twice the
     * 4; 16 rows four times 4 rows' (llvmpipe unrolls the row loop, and the
     * tests pass at a cost of 1; this stays safe where it would not) */
    kcost = v != V_DIRECT ? 24 : (m == 1 ? 1 : 2 * (rm / 4)) * (a->mm.glu_out ? 2 : 1);
    if (v == V_DIRECT) {
        uint32_t local = DIRECT_LOCAL;
        /* the SwiGLU epilogue here when K is whole; else a plain product in
         * parts (as many as the epilogue's cost would need: 2 at least) and
         * ksum applies it */
        if (a->mm.glu_out && k_parts(a, tg, 4, kcost) == 1)
            nout = n / 2;
        tm = (uint64_t)((m + rm - 1) / rm);
        tn = (uint64_t)((nout + 3) / 4);
        d = glc__plan_dispatch(p, "matmul", local, tm * tn * (uint64_t)batches);
        glc__define(d, "TILED", "0");
        glc__define_int(d, "RM", rm);
        if (nout != n)
            glc__define_glu_out(d, a);
    } else {
        int big = v == V_TILED128, wide = tg->limits.max_invocations >= 256;
        int bm = big ? 128 : 64, bn = bm, tmv = big || !wide ? 8 : 4, tnv = big ? 8 : 4;
        uint32_t local = (uint32_t)((bm / tmv) * (bn / tnv));
        tm = (uint64_t)((m + bm - 1) / bm);
        tn = (uint64_t)((n + bn - 1) / bn);
        d = glc__plan_dispatch(p, "matmul", local, 1);
        d->groups = tm * tn * (uint64_t)batches;
        glc__define(d, "TILED", "1");
        glc__define_int(d, "BM", bm);
        glc__define_int(d, "BN", bn);
        glc__define(d, "BK", "16");
        glc__define_int(d, "TM", tmv);
        glc__define_int(d, "TN", tnv);
        if (big) /* 8 x 8 per invocation: slow unless the loops are unrolled */
            glc__define(d, "NVUNROLL", "1");
    }
    glc__define_t(d, "TB", b->dtype);
    glc__define_int(d, "NT", nt);
    glc__define_int(d, "AVEC", k % 4 == 0);
    glc__define_int(d, "BVEC", nt ? k % 4 == 0 : n % 4 == 0);
    if (a->mm.act)
        glc__define_int(d, "ACT", a->mm.act);
    glc__plan_param_at(d, GLC__KP_MATMUL_M, (uint32_t)m);
    glc__plan_param_at(d, GLC__KP_MATMUL_N, (uint32_t)nout);
    glc__plan_param_at(d, GLC__KP_MATMUL_K, (uint32_t)k);
    glc__plan_param_at(d, GLC__KP_MATMUL_MTILES, (uint32_t)tm);
    glc__plan_param_at(d, GLC__KP_MATMUL_NTILES, (uint32_t)tn);
    glc__plan_param_at(d, GLC__KP_MATMUL_BATCHES, (uint32_t)batches);
    glc__plan_param_at(d, GLC__KP_MATMUL_INNER, (uint32_t)inner);
    glc__plan_param_at(d, GLC__KP_MATMUL_B_STRIDE_HI, s_hi);
    if (blocks) /* one matrix (s_hi 0): the slot holds a row's bytes */
        glc__plan_param_at(d, GLC__KP_MATMUL_B_ROW_BYTES, (uint32_t)glc_dtype_row_bytes(b->dtype, k));
    glc__plan_param_at(d, GLC__KP_MATMUL_B_STRIDE_LO, s_lo);
    glc__plan_param_at(d, GLC__KP_MATMUL_FLAGS, a->t[2].present ? 1u : 0u);
    glc__plan_paramf_at(d, GLC__KP_MATMUL_ACT_PARAM, a->mm.act_param);
    bind_dense(d, a, m, n, GLC__KP_MATMUL_S1);
    glu_params(d, a, GLC__KP_MATMUL_GLU_DELTA, m, k);
    if (v == V_DIRECT && tg->is_llvmpipe)
        direct_texels(d, a, tg, nt, k);
    if (nout != n)
        return GLC_OK; /* the epilogue: K whole (k_parts) */
    return k_split(a, tg, p, v == V_DIRECT ? 4 : 16, kcost, tm * tn * (uint64_t)batches,
                   (uint64_t)batches * (uint64_t)m * (uint64_t)n, n, err, len);
}

/* The loop cap (glc__loop_budget): the K loop of matmul.comp runs K / step
 * times an invocation, `cost` iterations each (inner loops the compiler
 * keeps). Past the budget, K is split into parts of KC: the dispatch writes
 * each part's partial products into the scratch and glsl/ksum.comp sums
 * them into out. */
/* The K parts (1: none) and their length kc for a K loop of `step` and
 * `cost` (k_split). */
static uint64_t k_parts_of(const glc__op_args *a, const glc__target *tg, int64_t step,
                           int64_t cost, uint64_t *kc)
{
    int64_t k = a->t[0].shape[a->t[0].rank - 1] / (a->mm.glu ? 2 : 1);
    uint64_t budget = glc__loop_budget(tg), steps;
    uint64_t over = MM_LOOP_OVERHEAD + (has_norm(a) ? (uint64_t)k / 4 : 0); /* + the norm's loop */
    *kc = (uint64_t)k;
    if (!budget || ((uint64_t)k + step - 1) / step * cost + over <= budget)
        return 1;
    steps = budget > over + cost ? (budget - over) / cost : 1;
    *kc = steps * step / 16 * 16;
    if (*kc < 16)
        *kc = 16;
    return ((uint64_t)k + *kc - 1) / *kc;
}

static uint64_t k_parts(const glc__op_args *a, const glc__target *tg, int64_t step, int64_t cost)
{
    uint64_t kc;
    return k_parts_of(a, tg, step, cost, &kc);
}

static glc_status k_split(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                          int64_t step, int64_t cost, uint64_t tiles, uint64_t total, int64_t n,
                          char *err, size_t len)
{
    glc__dispatch_plan *d = &p->disp[0];
    uint64_t kc, parts = k_parts_of(a, tg, step, cost, &kc);
    if (parts == 1)
        return GLC_OK;
    glc__define_int(d, "KC", (long long)kc);
    d->bind[2].tensor = GLC__SCRATCH; /* out: the partial products */
    d->bind[2].size = 0;
    if (step == 16) /* tiled: a group per block and part */
        d->groups *= parts;
    else /* direct: an invocation per tile and part */
        d->groups = (tiles * parts + d->local_size - 1) / d->local_size;
    return glc__plan_ksum(p, a, total, n, (uint32_t)parts, a->t[2].present ? 2 : -1, a->nin,
                          tg, err, len);
}

glc_status glc__plan_ksum(glc__op_plan *p, const glc__op_args *a, uint64_t total, int64_t n,
                          uint32_t parts, int bias, int out, const glc__target *tg, char *err,
                          size_t len)
{
    int seg = a->op != GLC__OP_MATMUL_EXPERT && a->op != GLC__OP_MATMUL_AFFINE && a->mm.seg[0];
    int act = a->op != GLC__OP_MATMUL_EXPERT && a->op != GLC__OP_MATMUL_AFFINE ? (int)a->mm.act : 0;
    int glu_out = a->op == GLC__OP_MATMUL || a->op == GLC__OP_MATMUL_Q ? (int)a->mm.glu_out : 0;
    uint64_t bytes = total * parts * 4;
    glc__dispatch_plan *d;
    if (total * parts > 0xffffffffull || bytes > tg->limits.max_ssbo_size)
        return glc__op_error(err, len, glc__ops[a->op]->name,
                             "K split in %u parts for the device's loop cap (%u iterations an "
                             "invocation): %llu bytes of partial products, more than one "
                             "binding holds",
                             parts, tg->limits.max_loop_iterations, (unsigned long long)bytes);
    p->scratch_bytes = (size_t)bytes;
    d = glc__plan_dispatch(p, "ksum", KSUM_LOCAL, glu_out ? total / 2 : total);
    if (act)
        glc__define_int(d, "ACT", act);
    if (glu_out) /* the SwiGLU epilogue: an output from two columns of the product */
        glc__define_glu_out(d, a);
    glc__plan_bind(d, GLC__SCRATCH, GLC_READ);
    glc__plan_bind(d, out, GLC_WRITE);
    glc__plan_bind(d, bias >= 0 ? bias : GLC__SCRATCH, GLC_READ);
    if (has_res(a)) {
        glc__define(d, "RES", "1");
        glc__plan_bind(d, 3, GLC_READ);
    }
    if (seg) /* segments start at fixed places: bind through the last one's end */
        d->bind[1].size =
            (size_t)(a->mm.seg[3] + (int64_t)(total / (uint64_t)n) * (n - a->mm.seg[1])) * 4;
    glc__plan_param_at(d, GLC__KP_KSUM_TOTAL, (uint32_t)total);
    glc__plan_param_at(d, GLC__KP_KSUM_N, (uint32_t)n);
    glc__plan_param_at(d, GLC__KP_KSUM_S, parts);
    glc__plan_param_at(d, GLC__KP_KSUM_FLAGS, bias >= 0 ? 1u : 0u);
    glc__plan_paramf_at(d, GLC__KP_KSUM_ACT_PARAM, act || glu_out ? a->mm.act_param : 0.0f);
    if (seg)
        glc__plan_segments(d, a, GLC__KP_KSUM_S1);
    return GLC_OK;
}

const glc__op_desc glc__op_MATMUL_desc = {"matmul", mm_infer, mm_plan};

void glc__pack_matmul(glc__op_args *a, const glc_matmul_desc *desc)
{
    a->mm.transpose_b = desc ? desc->transpose_b != 0 : 0;
}

glc_status glc_op_matmul(glc_session *s, glc_view a, glc_view b, glc_view bias,
                         const glc_matmul_desc *desc, glc_view out)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_MATMUL, 3, 1);
    glc__pack_matmul(&args, desc);
    return glc__op_run(s, &args, (glc_view[]){a, b, bias, out}, NULL);
}
