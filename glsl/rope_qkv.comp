// rope_qkv: one decode layer's attention prologue in one grid (the fusion
// of rope(q), rope_rows(k -> kcache) and set_rows(vcache, v), see
// src/core/op_rope.c). Global units, in three consecutive ranges:
//   [0, Q_END):      a unit of a q row (one head of one token), rotated in
//                    place as rope.comp does it
//   [Q_END, K_END):  a unit of a k row, rotated into kcache row pos[t]
//                    (rope.comp's OUT_ROWS)
//   [K_END, UNITS):  VW elements of token t's v row (VD elements: all of
//                    v's dims after the first), copied to vcache row pos[t]
// A position outside a cache skips the row. Every element is read and
// written by the one invocation that owns it, so q in place is safe. No
// loops: nothing to split for the device's loop cap.
// bindings: 0 q (read, written), 1 k, 2 v, 3 positions i32 [T],
//           4 freq_factors f32 (when HAS_FF), then kcache, vcache (written);
//           floats uint-backed
// params:   0 Q_END, 1 K_END, 2 UNITS, 3 units per q/k row, 4 rotation
//           units per row, 5 HQ, 6 HK, 7 T, 8 D, 9 rope_dim, 10 theta step
//           (-2 log2(base) / rope_dim, float bits), 11 kcache rows,
//           12 vcache rows, 13 v units per token, 14 VD
// defines:  TQ, TK, TV, TKC, TVC (GLC_T_*), NEOX, HAS_FF, ALIGNED (as
//           rope.comp: D even, NEOX with rope_dim/2 even), VW (2 when VD is
//           even, else 1: then the v cache is f32)
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_ROPE_QKV
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) buffer Q { uint q[]; };
layout(std430, binding = 1) readonly buffer K { uint k[]; };
layout(std430, binding = 2) readonly buffer V { uint v[]; };
layout(std430, binding = 3) readonly buffer P { int pos[]; };
#if HAS_FF
layout(std430, binding = 4) readonly buffer F { float ff[]; };
layout(std430, binding = 5) buffer KC { uint kc[]; };
layout(std430, binding = 6) buffer VC { uint vc[]; };
#else
layout(std430, binding = 4) buffer KC { uint kc[]; };
layout(std430, binding = 5) buffer VC { uint vc[]; };
#endif

// (cos, sin) of theta_i at position p
vec2 rot_of(float p, uint i)
{
    float theta = p * exp2(float(i) * glc_pf(P_THETA_STEP));
#if HAS_FF
    theta /= ff[i];
#endif
    return vec2(cos(theta), sin(theta));
}

// O[e] = val alone: a 16-bit neighbour may belong to another invocation.
#define STORE1(O, T_, e, val)                                                  \
    if ((T_) == GLC_T_F32) {                                                   \
        O[(e)] = floatBitsToUint(val);                                         \
    } else {                                                                   \
        uint keep_ = ((e) & 1u) == 0u ? 0xffff0000u : 0x0000ffffu;             \
        atomicAnd(O[(e) >> 1], keep_);                                         \
        atomicOr(O[(e) >> 1], glc_pack16((val), (val), (T_)) & ~keep_);       \
    }

// Unit u of the row starting at element `first` of X (dtype TX_), written
// to O (dtype TO_) at the same element + sh; p the position.
#if ALIGNED && NEOX
#define ROT_UNIT(X, TX_, O, TO_, first, sh, u, p)                              \
    {                                                                          \
        uint i = 2u * (u), a = (first) + i, b = a + (rd >> 1);                 \
        vec2 c0 = rot_of(p, i), c1 = rot_of(p, i + 1u);                        \
        float xa0 = GLC_LOAD(X, TX_, a), xa1 = GLC_LOAD(X, TX_, a + 1u);       \
        float xb0 = GLC_LOAD(X, TX_, b), xb1 = GLC_LOAD(X, TX_, b + 1u);       \
        GLC_STORE2(O, TO_, a + (sh), xa0 * c0.x - xb0 * c0.y,                  \
                   xa1 * c1.x - xb1 * c1.y, true)                              \
        GLC_STORE2(O, TO_, b + (sh), xa0 * c0.y + xb0 * c0.x,                  \
                   xa1 * c1.y + xb1 * c1.x, true)                              \
    }
#else
#if NEOX
#define PAIR_OF(first, u) uint a = (first) + (u), b = a + (rd >> 1);
#else
#define PAIR_OF(first, u) uint a = (first) + 2u * (u), b = a + 1u;
#endif
#if ALIGNED
#define STORE_PAIR(O, TO_, a, b, ya, yb) GLC_STORE2(O, TO_, a, ya, yb, true)
#else
#define STORE_PAIR(O, TO_, a, b, ya, yb) \
    STORE1(O, TO_, a, ya)                \
    STORE1(O, TO_, b, yb)
#endif
#define ROT_UNIT(X, TX_, O, TO_, first, sh, u, p)                              \
    {                                                                          \
        PAIR_OF(first, u)                                                      \
        vec2 c = rot_of(p, (u));                                               \
        float xa = GLC_LOAD(X, TX_, a), xb = GLC_LOAD(X, TX_, b);              \
        float ya = xa * c.x - xb * c.y, yb = xa * c.y + xb * c.x;              \
        STORE_PAIR(O, TO_, a + (sh), b + (sh), ya, yb)                         \
    }
#endif

// The copied unit u (u >= rot) past rope_dim.
#if ALIGNED
#define TAIL_UNIT(X, TX_, O, TO_, first, sh, u)                                \
    {                                                                          \
        uint e = (first) + rd + 2u * ((u) - rot);                              \
        GLC_STORE2(O, TO_, e + (sh), GLC_LOAD(X, TX_, e), GLC_LOAD(X, TX_, e + 1u), true) \
    }
#else
#define TAIL_UNIT(X, TX_, O, TO_, first, sh, u)                                \
    {                                                                          \
        uint e = (first) + rd + ((u) - rot);                                   \
        STORE1(O, TO_, e + (sh), GLC_LOAD(X, TX_, e))                          \
    }
#endif

void main()
{
    uint g = glc_global_index();
    if (glc_group_out_of_range() || g >= glc_p[P_UNITS])
        return;
    uint units = glc_p[P_ROW_UNITS], rot = glc_p[P_ROT], rd = glc_p[P_ROPE_DIM];
    uint D = glc_p[P_D], T = glc_p[P_T];
    if (g < glc_p[P_Q_END]) {
        uint row = g / units, u = g - row * units, first = row * D;
        float p = float(pos[(row / glc_p[P_HQ]) % T]);
        if (u < rot)
            ROT_UNIT(q, TQ, q, TQ, first, 0u, u, p)
        else
            TAIL_UNIT(q, TQ, q, TQ, first, 0u, u)
    } else if (g < glc_p[P_K_END]) {
        uint gk = g - glc_p[P_Q_END], hk = glc_p[P_HK];
        uint row = gk / units, u = gk - row * units, first = row * D;
        int pt = pos[(row / hk) % T];
        uint dst = uint(pt);
        if (dst >= glc_p[P_K_ROWS])
            return;
        uint sh = (dst * hk + row % hk) * D - first; // wraps: fine
        float p = float(pt);
        if (u < rot)
            ROT_UNIT(k, TK, kc, TKC, first, sh, u, p)
        else
            TAIL_UNIT(k, TK, kc, TKC, first, sh, u)
    } else {
        uint gv = g - glc_p[P_K_END], vu = glc_p[P_V_UNITS], vd = glc_p[P_VD];
        uint t = gv / vu, e = t * vd + (gv - t * vu) * uint(VW);
        uint dst = uint(pos[t]);
        if (dst >= glc_p[P_V_ROWS])
            return;
        uint o = dst * vd + (e - t * vd);
#if VW == 2
        GLC_STORE2(vc, TVC, o, GLC_LOAD(v, TV, e), GLC_LOAD(v, TV, e + 1u), true)
#else
        vc[o] = floatBitsToUint(GLC_LOAD(v, TV, e));
#endif
    }
}
