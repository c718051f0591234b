// qkv_rope.glsl: the rope epilogue of the decode's Q/K/V product (fuse.c
// qkv_rope), the one home for matvec.comp and matmul_q.comp. The product's
// columns are q | k | v; a slot (tile) holds pairs of columns that rotate
// together (rope_cols), and its storing lane gives rope_put a pair's sums:
// out gets q rotated, k and v as they are; the k cache row pos gets k
// rotated, the v cache row pos v (a position outside a cache: not
// written). The including kernel declares o[] (f32 out) and bias[], and
// names the params P_N, P_FLAGS (1: add the bias), P_R_QW (q's columns), P_R_KEND (q's and k's), P_R_D (the
// head dim), P_R_DIM (rope_dim), P_R_THETA (the theta step, float bits),
// P_R_KROWS, P_R_VROWS (the caches' rows); defines: NEOX, HAS_FF, TKC,
// TVC (GLC_T_*), the bindings ROPE_POS (i32 [1]), ROPE_FF, ROPE_KC and
// ROPE_VC (a product of q | k | v packed, or of some of them: the caches of
// the columns it has).

layout(std430, binding = ROPE_POS) readonly buffer RPOS { int rpos[]; };
#if HAS_FF
layout(std430, binding = ROPE_FF) readonly buffer RFF { float ff[]; };
#endif
#ifdef ROPE_KC // (a product with k columns; 16-bit: half-word atomics)
layout(std430, binding = ROPE_KC) buffer RKC { uint kc[]; };
#endif
#ifdef ROPE_VC // (a product with v columns)
layout(std430, binding = ROPE_VC) buffer RVC { uint vc[]; };
#endif
#define P_THETA_STEP P_R_THETA
#define ALIGNED 0 // (rope.glsl's unit macros: not used here)
#include "rope.glsl"

// The pair of columns of the slot at n0 (even): within q's and k's heads
// NEOX pairs (j, j + rope_dim / 2) for j < rope_dim / 2, the columns past
// rope_dim two by two; everywhere else (NORMAL, v) adjacent columns.
uvec2 rope_cols(uint n0)
{
#if NEOX
    if (n0 < glc_p[P_R_KEND]) {
        uint qw = glc_p[P_R_QW], D = glc_p[P_R_D], hr = glc_p[P_R_DIM] >> 1;
        uint base = n0 < qw ? 0u : qw, l = n0 - base, h0 = base + l / D * D, j = (l % D) >> 1;
        return j < hr ? uvec2(h0 + j, h0 + j + hr) : uvec2(h0 + 2u * j, h0 + 2u * j + 1u);
    }
#endif
    return uvec2(n0, n0 + 1u);
}

// Elements e0 and e1 of cache C (storage T_): one word when they share it
#define CACHE_PUT(C, T_, e0, e1, y0, y1)                                       \
    if ((T_) == GLC_T_F32 || (e1 == e0 + 1u && (e0 & 1u) == 0u)) {            \
        GLC_STORE2(C, T_, e0, y0, y1, e1 == e0 + 1u)                           \
        if ((T_) == GLC_T_F32 && e1 != e0 + 1u)                                \
            C[e1] = floatBitsToUint(y1);                                       \
    } else {                                                                   \
        STORE1(C, T_, e0, y0)                                                  \
        STORE1(C, T_, e1, y1)                                                  \
    }

// Stores the pair of columns c (their sums v0, v1; the bias added when
// flag 1 of P_FLAGS says): q rotated into out, k and v as they are; k
// rotated into the k cache and v into the v cache at row pos (when inside
// them)
void rope_put(uvec2 c, float v0, float v1)
{
    uint qw = glc_p[P_R_QW], kend = glc_p[P_R_KEND], N = glc_p[P_N];
    int p = rpos[0];
    if ((glc_p[P_FLAGS] & 1u) != 0u) {
        v0 += bias[c.x];
        v1 += bias[c.y];
    }
    float y0 = v0, y1 = v1;
    if (c.x < kend) {
        uint base = c.x < qw ? 0u : qw, d0 = (c.x - base) % glc_p[P_R_D];
        if (d0 < glc_p[P_R_DIM]) {
#if NEOX
            vec2 cs = rot_of(float(p), d0);
#else
            vec2 cs = rot_of(float(p), d0 >> 1);
#endif
            y0 = v0 * cs.x - v1 * cs.y;
            y1 = v0 * cs.y + v1 * cs.x;
        }
    }
    o[c.x] = c.x < qw ? y0 : v0;
    o[c.y] = c.x < qw ? y1 : v1;
    if (c.x < qw || p < 0)
        return;
    if (c.x < kend) {
#ifdef ROPE_KC
        uint e0 = uint(p) * (kend - qw) + c.x - qw, e1 = e0 + (c.y - c.x);
        if (uint(p) < glc_p[P_R_KROWS])
            CACHE_PUT(kc, TKC, e0, e1, y0, y1)
#endif
    } else {
#ifdef ROPE_VC
        uint e0 = uint(p) * (N - kend) + c.x - kend, e1 = e0 + 1u;
        if (uint(p) < glc_p[P_R_VROWS])
            CACHE_PUT(vc, TVC, e0, e1, v0, v1)
#endif
    }
}
