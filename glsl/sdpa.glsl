// sdpa.glsl: what the three attention kernels share (sdpa_rows.comp,
// sdpa_tile.comp, sdpa_split.comp): q, k, v and out bindings and their
// loads, online softmax in base 2 (q is scaled by scale * log2(e), weights
// are exp2). The including kernel defines D_ and DV_ (the head dims of k
// and v, uint expressions) first.
// bindings: 0 q (read, f32 [Tq, Hq, D]), 1 k (read, KT [Tk, Hkv, D]),
//           2 v (read, VT [Tk, Hkv, DV]), 3 out (written)
// defines:  KT, VT (GLC_T_F32, GLC_T_F16); KVEC, VVEC (1: the head dim of
//           k / v is a multiple of 4)

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Q { uint q[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };

#define NT uint(GLC_LOCAL_SIZE_X)
#define NEG (-1.0e30)
#define DU_ ((D_ + 3u) / 4u)
#define DVU_ ((DV_ + 3u) / 4u)
#define IS_MASKED(s) ((s) < -5.0e29)

// k_unit(row, u) / v_unit(row, u): values 4u .. 4u+3 of a K / V row (zeros
// past the head dim), one 16-byte (f32) or 8-byte (f16) load when rows are
// whole vec4s.
// (the bodies compute the row's index once, as one uniform read)
#if KVEC && KT == GLC_T_F32
layout(std430, binding = 1) readonly buffer K { uvec4 k[]; };
#define K_UNIT return uintBitsToFloat(k[row * DU_ + u]);
#elif KVEC
layout(std430, binding = 1) readonly buffer K { uvec2 k[]; };
#define K_UNIT return glc_half4(k[row * DU_ + u]);
#else
layout(std430, binding = 1) readonly buffer K { uint k[]; };
#define K_UNIT                                      \
    uint i = row * D_ + u * 4u, n = D_ - u * 4u;    \
    return GLC_LOAD4(k, KT, i, n);
#endif

#if VVEC && VT == GLC_T_F32
layout(std430, binding = 2) readonly buffer V { uvec4 v[]; };
#define V_UNIT return uintBitsToFloat(v[row * DVU_ + u]);
#elif VVEC
layout(std430, binding = 2) readonly buffer V { uvec2 v[]; };
#define V_UNIT return glc_half4(v[row * DVU_ + u]);
#else
layout(std430, binding = 2) readonly buffer V { uint v[]; };
#define V_UNIT                                      \
    uint i = row * DV_ + u * 4u, n = DV_ - u * 4u;  \
    return GLC_LOAD4(v, VT, i, n);
#endif

vec4 k_unit(uint row, uint u) { K_UNIT }
vec4 v_unit(uint row, uint u) { V_UNIT }

vec4 q_unit(uint row, uint u)
{
    uint i = row * D_ + u * 4u, n = D_ - u * 4u;
    return GLC_LOAD4(q, GLC_T_F32, i, n);
}

// Stores vec4 u of an output row at o[base + 4u ..], the values inside DV.
void store_unit(uint base, uint u, vec4 val)
{
    for (uint c = 0u; c < 4u; c++)
        if (u * 4u + c < DV_)
            o[base + u * 4u + c] = val[c];
}
