// sdpa.glsl: what the three attention kernels share (sdpa_rows.comp,
// sdpa_tile.comp, sdpa_split.comp): q, k, v and out bindings and their
// loads, online softmax in base 2 (q is scaled by scale * log2(e), weights
// are exp2). The including kernel defines D_ and DV_ (the head dims of k
// and v, uint expressions) first.
// bindings: 0 q (read, f32 [Tq, Hq, D]), 1 k (read, KT [Tk, Hkv, D]),
//           2 v (read, VT [Tk, Hkv, DV]), 3 out (written)
// defines:  KT, VT (GLC_T_F32, GLC_T_F16); KVEC, VVEC (1: the head dim of
//           k / v is a multiple of 4); ROPE (decode only, KVEC and VVEC:
//           rope_dim: the fused rope_qkv, see below) with NEOX, HAS_FF

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Q { uint q[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };

#define NT uint(GLC_LOCAL_SIZE_X)
#define NEG (-1.0e30)
#define DU_ ((D_ + 3u) / 4u)
#define DVU_ ((DV_ + 3u) / 4u)
#define IS_MASKED(s) ((s) < -5.0e29)

// With ROPE the dispatch writes the caches (the current row), so they are
// not readonly.
#ifdef ROPE
#define KV_ACCESS
#else
#define KV_ACCESS readonly
#endif

// k_unit(row, u) / v_unit(row, u): values 4u .. 4u+3 of a K / V row (zeros
// past the head dim), one 16-byte (f32) or 8-byte (f16) load when rows are
// whole vec4s.
// (the bodies compute the row's index once, as one uniform read)
#if KVEC && KT == GLC_T_F32
layout(std430, binding = 1) KV_ACCESS buffer K { uvec4 k[]; };
#define K_UNIT return uintBitsToFloat(k[row * DU_ + u]);
#elif KVEC
layout(std430, binding = 1) KV_ACCESS buffer K { uvec2 k[]; };
#define K_UNIT return glc_half4(k[row * DU_ + u]);
#else
layout(std430, binding = 1) KV_ACCESS buffer K { uint k[]; };
#define K_UNIT                                      \
    uint i = row * D_ + u * 4u, n = D_ - u * 4u;    \
    return GLC_LOAD4(k, KT, i, n);
#endif

#if VVEC && VT == GLC_T_F32
layout(std430, binding = 2) KV_ACCESS buffer V { uvec4 v[]; };
#define V_UNIT return uintBitsToFloat(v[row * DVU_ + u]);
#elif VVEC
layout(std430, binding = 2) KV_ACCESS buffer V { uvec2 v[]; };
#define V_UNIT return glc_half4(v[row * DVU_ + u]);
#else
layout(std430, binding = 2) KV_ACCESS buffer V { uint v[]; };
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

#ifdef ROPE
// The fused rope_qkv (src/core/op_attention.c; the one query row of a
// decode; sdpa_rows, llvmpipe's: on GPUs the split kernel doing it was
// slower than rope_qkv's own dispatch before it): q (binding 0) and the
// token's k and v rows (4, 5, f32 [1, Hkv, D / DV]) come as the
// projections wrote them, position pos[0] (6), the freq_factors (7,
// HAS_FF). q is rotated as it is read; the token's k row, rotated, and its
// v row are written to cache row pos (when inside the caches, P_ROPE_ROWS
// rows) by the kernel's writer, and every key j == pos is read from them
// (rounded to the cache's type, as the cache holds them) instead of from
// the cache, which this same dispatch writes. The values are rope.glsl's
// (rot_of), so they are rope_qkv's.
#if !KVEC || !VVEC
#error "ROPE: head dims of whole vec4s"
#endif
#ifndef ALIGNED
#define ALIGNED 0 // (rope.glsl's store macros are not used here)
#endif
layout(std430, binding = 4) readonly buffer KCUR { float kcur[]; };
layout(std430, binding = 5) readonly buffer VCUR { float vcur[]; };
layout(std430, binding = 6) readonly buffer POS { int rpos[]; };
#if HAS_FF
layout(std430, binding = 7) readonly buffer FF { float ff[]; };
#endif
#include "rope.glsl"

// Element e (< D) of a row starting at element `first`, X(i) its element
// i, rotated at position p
#if NEOX
#define ROPE_AT(X, first, e, p)                                                \
    ((e) >= uint(ROPE) ? X((first) + (e))                                  \
     : (e) < uint(ROPE / 2)                                                \
         ? rope_lo(X((first) + (e)), X((first) + (e) + uint(ROPE / 2)), rot_of(p, (e))) \
         : rope_hi(X((first) + (e) - uint(ROPE / 2)), X((first) + (e)),   \
                   rot_of(p, (e) - uint(ROPE / 2))))
#else
#define ROPE_AT(X, first, e, p)                                                \
    ((e) >= uint(ROPE) ? X((first) + (e))                                  \
     : ((e) & 1u) == 0u ? rope_lo(X((first) + (e)), X((first) + (e) + 1u), rot_of(p, (e) >> 1)) \
                        : rope_hi(X((first) + (e) - 1u), X((first) + (e)), rot_of(p, (e) >> 1)))
#endif

// A pair (a, b) rotated by c = (cos, sin): its first and second element,
// as rope.glsl computes them
float rope_lo(float a, float b, vec2 c) { return a * c.x - b * c.y; }
float rope_hi(float a, float b, vec2 c) { return a * c.y + b * c.x; }

float q_at(uint i) { return uintBitsToFloat(q[i]); }
float kcur_at(uint i) { return kcur[i]; }

// The token's position, and its cache row (not below P_ROPE_ROWS: none)
float rope_p() { return float(rpos[0]); }
uint rope_row() { return uint(rpos[0]); }

// vec4 u of query row `row`, rotated
vec4 q_rope_unit(uint row, uint u, float p)
{
    vec4 r;
    for (uint c = 0u; c < 4u; c++) {
        uint e = 4u * u + c;
        r[c] = ROPE_AT(q_at, row * D_, e, p);
    }
    return r;
}

// x as the cache of type T holds it
vec4 cache_round(vec4 x, int t)
{
    return t == GLC_T_F32 ? x
                          : vec4(unpackHalf2x16(packHalf2x16(x.xy)), unpackHalf2x16(packHalf2x16(x.zw)));
}

// vec4 u of the token's k row for kv head hk, rotated, as the cache holds it
vec4 k_cur_unit(uint hk, uint u, float p)
{
    vec4 r;
    for (uint c = 0u; c < 4u; c++)
        r[c] = ROPE_AT(kcur_at, hk * D_, 4u * u + c, p);
    return cache_round(r, KT);
}

// vec4 u of the token's v row for kv head hk, as the cache holds it
vec4 v_cur_unit(uint hk, uint u)
{
    uint i = hk * DV_ + 4u * u;
    return cache_round(vec4(vcur[i], vcur[i + 1u], vcur[i + 2u], vcur[i + 3u]), VT);
}

// Writes vec4 u of cache row `row` (row * Hkv + kv head)
void k_store(uint row, uint u, vec4 x)
{
#if KT == GLC_T_F32
    k[row * DU_ + u] = floatBitsToUint(x);
#else
    k[row * DU_ + u] = uvec2(packHalf2x16(x.xy), packHalf2x16(x.zw));
#endif
}

void v_store(uint row, uint u, vec4 x)
{
#if VT == GLC_T_F32
    v[row * DVU_ + u] = floatBitsToUint(x);
#else
    v[row * DVU_ + u] = uvec2(packHalf2x16(x.xy), packHalf2x16(x.zw));
#endif
}

// The writer's share: units first, first + step, .. of kv head hk's rows
void rope_write(uint hk, uint hkv, uint first, uint step)
{
    uint row = rope_row();
    if (row >= glc_p[P_ROPE_ROWS])
        return;
    float p = rope_p();
    for (uint u = first; u < DU_; u += step)
        k_store(row * hkv + hk, u, k_cur_unit(hk, u, p));
    for (uint u = first; u < DVU_; u += step)
        v_store(row * hkv + hk, u, v_cur_unit(hk, u));
}
#endif
