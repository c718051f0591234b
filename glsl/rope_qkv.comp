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

#include "rope.glsl"

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
