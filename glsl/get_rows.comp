// get_rows: out[r, :] = table[ids[r], :] over the rows r of out (an
// embedding lookup); a row whose id is outside [0, V) is written as zeros.
//   float tables (TT GLC_T_F32, F16, BF16): a unit is a pair of consecutive outputs (flat,
//     so a pair may span two rows when D is odd), stored a word at a time;
//     only a last lone element is stored half-word, with atomics. When the
//     table has the output's dtype, raw bits move.
//   GGML blocks (TT GLC_T_Q8_0, Q4_0, Q4_K, ...; quant.glsl): a unit is 4
//     values of one chunk of 32 of a block (the same scale and offset), in
//     f32 as GGML dequantizes.
// bindings: 0 table (read; uint words), 1 ids (read; i32 [rows]),
//           2 out (written; uint-backed floats)
// params:   0 units, 1 D, 2 V, 3 bytes per table row (GGML blocks),
//           4 N (output elements), 5 the id of the table's first row (a
//           piece of a split param; else 0): ids outside the table read zeros
// defines:  TT (the table's GLC_T_*: f32, f16, bf16, a block type), TO (GLC_T_*),
//           UNROLL (units per invocation, a group's units contiguous),
//           IDS_ALL (1: out row r is table row r; the ids are not read),
//           VEC4 (llvmpipe, an f32 table into f32 rows of whole vec4s: VEC4
//           consecutive vec4 units an invocation; UNROLL unused), TEXEL
//           (VEC4 or GGML blocks, llvmpipe: the table's words read as
//           RGBA32UI texels, texture unit 0, its SSBO binding kept: a gather
//           where an SSBO load is a loop over the lanes)
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_GET_ROWS
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
#if defined(VEC4) // f32 rows of whole vec4s (llvmpipe): a unit is a vec4
layout(std430, binding = 0) readonly buffer T { uvec4 t[]; };
layout(std430, binding = 2) writeonly buffer O { uvec4 o[]; };
#else
layout(std430, binding = 0) readonly buffer T { uint t[]; };
layout(std430, binding = 2) buffer O { uint o[]; };
#endif
layout(std430, binding = 1) readonly buffer I { int ids[]; };
#ifdef TEXEL
layout(binding = 0) uniform highp usamplerBuffer tt;
#endif

#define QUANT (TT >= GLC_T_Q8_0)
#if defined(IDS_ALL) // every row in order, the ids unread (matmul_q's decode of its weights)
#define ROW_ID(r) (r)
#else // below the first row: huge, so read as zeros
#define ROW_ID(r) uint(ids[r] - int(glc_p[P_ROW0]))
#endif

#if defined(VEC4)
// Unit u: outputs 4u .. 4u + 3, one row's (D a multiple of 4)
void unit(uint u)
{
    uint D4 = glc_p[P_D] >> 2, r = u / D4, id = ROW_ID(r);
#ifdef TEXEL
    o[u] = id < glc_p[P_V] ? texelFetch(tt, int(id * D4 + (u - r * D4))) : uvec4(0u);
#else
    o[u] = id < glc_p[P_V] ? t[id * D4 + (u - r * D4)] : uvec4(0u);
#endif
}

#elif QUANT
#define GLC_QT TT
uint glc_qw(uint i)
{
#ifdef TEXEL
    return glc_word(texelFetch(tt, int(i >> 2u)), i & 3u);
#else
    return t[i];
#endif
}
#include "quant.glsl"

// Unit u: values 4q .. 4q + 3 of row r (q = u % (D / 4)): quad q % 8 of
// chunk q / 8 of the row (chunk % GLC_Q_CHUNKS of its block).
void unit(uint u)
{
    uint per_row = glc_p[P_D] >> 2, r = u / per_row, q = u - r * per_row;
    uint id = ROW_ID(r);
    vec4 v = vec4(0.0);
    if (id < glc_p[P_V]) {
        uint c = q >> 3, i = q & 7u, j = c % GLC_Q_CHUNKS;
        uint blk = id * glc_p[P_ROW_BYTES] + (c / GLC_Q_CHUNKS) * GLC_Q_BYTES;
        v = glc_q_values(blk, j, i);
    }
    uint e = u * 4u;
#if TO == GLC_T_F32
    o[e] = floatBitsToUint(v.x);
    o[e + 1u] = floatBitsToUint(v.y);
    o[e + 2u] = floatBitsToUint(v.z);
    o[e + 3u] = floatBitsToUint(v.w);
#else
    o[e >> 1] = glc_pack16(v.x, v.y, TO);
    o[(e >> 1) + 1u] = glc_pack16(v.z, v.w, TO);
#endif
}

#else

#define RAW (TT == TO)
#if RAW && TO == GLC_T_F32
#define VAL uint
#define LOAD(e) t[(e)]
#elif RAW
#define VAL uint
#define LOAD(e) ((t[(e) >> 1] >> (((e) & 1u) << 4)) & 0xffffu)
#else
#define VAL float
#define LOAD(e) GLC_LOAD(t, TT, (e))
#endif

// output element r * D + c
VAL value(uint r, uint c)
{
    uint id = ROW_ID(r);
    if (id >= glc_p[P_V])
        return VAL(0);
    uint e = id * glc_p[P_D] + c;
    return LOAD(e);
}

// Unit u: outputs 2u and 2u + 1.
void unit(uint u)
{
    uint n = glc_p[P_N], D = glc_p[P_D], i = u * 2u;
    uint r = i / D, c = i - r * D;
    bool has_hi = i + 1u < n;
    VAL lo = value(r, c), hi = VAL(0);
    if (has_hi) {
        c += 1u;
        if (c == D) {
            r += 1u;
            c = 0u;
        }
        hi = value(r, c);
    }
#if RAW && TO == GLC_T_F32
    o[i] = lo;
    if (has_hi)
        o[i + 1u] = hi;
#elif RAW
    if (has_hi) {
        o[u] = lo | (hi << 16);
    } else {
        atomicAnd(o[u], 0xffff0000u);
        atomicOr(o[u], lo);
    }
#else
    GLC_STORE2(o, TO, i, lo, hi, has_hi)
#endif
}

#endif

void main()
{
    if (glc_group_out_of_range())
        return;
#if defined(VEC4) // VEC4 consecutive units an invocation (llvmpipe's fast form)
    uint u0 = glc_global_index() * uint(VEC4);
    for (uint k = 0u; k < uint(VEC4); k++) {
        if (u0 + k >= glc_p[P_UNITS])
            return;
        unit(u0 + k);
    }
#else
    uint first = glc_group_index() * uint(GLC_LOCAL_SIZE_X * UNROLL) + gl_LocalInvocationID.x;
    for (uint k = 0u; k < uint(UNROLL); k++) {
        uint u = first + k * uint(GLC_LOCAL_SIZE_X);
        if (u >= glc_p[P_UNITS])
            return;
        unit(u);
    }
#endif
}
