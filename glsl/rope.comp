// rope: rotary position embedding over rows of D elements (one head of one
// token), in place or not. An invocation owns one unit of a row:
//   u < rot: RW rotation pairs i = u*RW .. : NORMAL (2i, 2i + 1), NEOX
//            (i, i + rope_dim/2), by theta_i = pos * base^(-2i/rope_dim)
//            (/ freq_factors[i])
//   else:    TW elements past rope_dim, copied
// It reads its elements before writing them and no other invocation
// touches them, so x and out may be one tensor.
// bindings: 0 x (read), 1 positions i32 [T] (read), 2 freq_factors f32
//           (read, when HAS_FF), then out (written); x, out uint-backed floats
// params:   0 total units, 1 units per row, 2 rotation units per row (rot),
//           3 H, 4 T, 5 D, 6 rope_dim, 7 -2 log2(base) / rope_dim (float bits)
// defines:  TX, TO (GLC_T_*), NEOX (0/1), HAS_FF (0/1), OUT_ROWS (0/1),
//           ALIGNED: every unit's outputs are whole 16-bit words (D even,
//           NEOX with rope_dim/2 even): RW = 1 + NEOX, TW = 2, word stores;
//           else RW = TW = 1 and 16-bit outputs are stored half-word with
//           atomics
//           OUT_ROWS (the fused KV-cache append: row t goes to row pos[t] of
//           out, a [p8, H, D] cache; param 8 its rows; D even when 16-bit)
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_ROPE
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
#ifndef OUT_ROWS
#define OUT_ROWS 0
#endif
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer P { int pos[]; };
#if HAS_FF
layout(std430, binding = 2) readonly buffer F { float ff[]; };
layout(std430, binding = 3) buffer O { uint o[]; };
#else
layout(std430, binding = 2) buffer O { uint o[]; };
#endif

#include "rope.glsl"

void main()
{
    uint g = glc_global_index();
    if (glc_group_out_of_range() || g >= glc_p[P_UNITS])
        return;
    uint units = glc_p[P_ROW_UNITS], rot = glc_p[P_ROT], rd = glc_p[P_ROPE_DIM];
    uint row = g / units, u = g - row * units;
    uint first = row * glc_p[P_D];
#if OUT_ROWS
    // the row goes to row pos[t] of a [p8, H, D] cache (rows past it: skipped)
    uint dst = uint(pos[(row / glc_p[P_H]) % glc_p[P_T]]);
    if (dst >= glc_p[P_CACHE_ROWS])
        return;
    uint sh = (dst * glc_p[P_H] + row % glc_p[P_H]) * glc_p[P_D] - first; // wraps: fine
#else
    const uint sh = 0u;
#endif
    float p = float(pos[(row / glc_p[P_H]) % glc_p[P_T]]);
    if (u < rot)
        ROT_UNIT(x, TX, o, TO, first, sh, u, p)
    else
        TAIL_UNIT(x, TX, o, TO, first, sh, u)
}
