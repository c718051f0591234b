// copy: a strided gather into a contiguous output, converting dtypes; one
// kernel for copy (permute), slice and concat. The output is seen as
// [n0, n1, n2, n3] (dims collapsed by the plan; the first 4 - NDIM are 1);
// element (i0, i1, i2, i3) comes from a at base + sum ik * sa[k], or, with
// TWO (concat: its axis is the last dim once collapsed), where i3 >= split,
// from b at sum ik * sb[k] with i3 - split.
// An invocation writes UNROLL pairs of consecutive outputs (a group's pairs
// contiguous), so 16-bit outputs are stored a word at a time; only a last
// lone element is stored half-word, with atomics (the other half may belong
// to the next tensor of an arena). Where every source has the output's
// dtype, raw bits move (no float round trip, NaN payloads kept).
// TILE (a transpose: out dim TK is the source's contiguous one, the last
// is not): a group covers TKL (along TK) x 2 LOCAL / TKL (along the last
// dim) outputs, a pair of the last dim per invocation, invocation l at
// (l % TKL, l / TKL): consecutive invocations load consecutive source
// elements (TKL of them: 32 bytes) and each row's stores are contiguous.
// Groups: (rest, k tile, w tile), w fastest. 16-bit outputs need an even
// last dim here (the plan's choice), so pairs stay whole words.
// bindings: 0 a (read), 1 b (read, TWO only), then out (written); all
//           uint-backed floats
// params:   0 N (output elements), 1 n1, 2 n2, 3 n3, 4..7 strides of a
//           (elements, per output dim), 8..11 strides of b (TWO), 12 split
//           (TWO), 13 base (element offset of a); TILE: 8 n0, 9 tiles
//           along the last dim, 10 tiles along TK
// defines:  TA, TB, TO (GLC_T_*; TB = TA without TWO), TWO (0/1), NDIM
//           (1, 2 or 4: dims decomposed), WORDS (1: NDIM 1, stride 1, one
//           source of TO's 16-bit dtype: whole words move), UNROLL (pairs
//           per invocation), TILE (0/1), with TILE: TK (0..2), TKL (8 for
//           an f32 source, 16 for a 16-bit one)
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_COPY
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
#if TWO
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) buffer O { uint o[]; };
#else
layout(std430, binding = 1) buffer O { uint o[]; };
#endif

#define RAW (TA == TO && (TWO == 0 || TB == TO))

// The output index i as coordinates (x outermost, w innermost).
uvec4 coords(uint i)
{
    uvec4 c = uvec4(0u);
#if NDIM == 1
    c.w = i;
#else
    c.w = i % glc_p[P_N3];
    uint r = i / glc_p[P_N3];
#if NDIM == 2
    c.z = r;
#else
    c.z = r % glc_p[P_N2];
    r /= glc_p[P_N2];
    c.y = r % glc_p[P_N1];
    c.x = r / glc_p[P_N1];
#endif
#endif
    return c;
}

uint offset_of(uvec4 c, int s)
{
    return c.x * glc_p[s] + c.y * glc_p[s + 1] + c.z * glc_p[s + 2] + c.w * glc_p[s + 3];
}

#if RAW
// the element's bits in TO's format (a 16-bit value in the low half)
#if TO == GLC_T_F32
#define BITS_AT(arr, e) arr[(e)]
#else
#define BITS_AT(arr, e) ((arr[(e) >> 1] >> (((e) & 1u) << 4)) & 0xffffu)
#endif
#define VAL uint
#define LOAD_A(e) BITS_AT(a, (e))
#define LOAD_B(e) BITS_AT(b, (e))
#else
#define VAL float
#define LOAD_A(e) GLC_LOAD(a, TA, (e))
#define LOAD_B(e) GLC_LOAD(b, TB, (e))
#endif

VAL fetch(uvec4 c)
{
#if TWO
    if (c.w >= glc_p[P_SPLIT]) {
        c.w -= glc_p[P_SPLIT];
        uint eb = offset_of(c, P_B_STRIDES);
        return LOAD_B(eb);
    }
#endif
    uint e = glc_p[P_BASE] + offset_of(c, P_A_STRIDES);
    return LOAD_A(e);
}

// out[i], out[i + 1] (i even; the second when has_hi)
void put(uint i, VAL lo, VAL hi, bool has_hi)
{
#if RAW && TO == GLC_T_F32
    o[i] = lo;
    if (has_hi)
        o[i + 1u] = hi;
#elif RAW
    if (has_hi) {
        o[i >> 1] = lo | (hi << 16);
    } else {
        atomicAnd(o[i >> 1], 0xffff0000u);
        atomicOr(o[i >> 1], lo);
    }
#else
    GLC_STORE2(o, TO, i, lo, hi, has_hi)
#endif
}

#if TILE

void main()
{
    if (glc_group_out_of_range())
        return;
    uint g = glc_group_index(), l = gl_LocalInvocationID.x;
    uint wt = g % glc_p[P_TILE_W];
    g /= glc_p[P_TILE_W];
    uint kt = g % glc_p[P_TILE_K], rest = g / glc_p[P_TILE_K];
    uvec4 n = uvec4(glc_p[P_TILE_N0], glc_p[P_N1], glc_p[P_N2], glc_p[P_N3]), c;
    c.w = (wt * uint(GLC_LOCAL_SIZE_X / TKL) + l / uint(TKL)) * 2u;
    c[TK] = kt * uint(TKL) + l % uint(TKL);
#if TK == 2
    c.y = rest % n.y;
    c.x = rest / n.y;
#elif TK == 1
    c.z = rest % n.z;
    c.x = rest / n.z;
#else
    c.z = rest % n.z;
    c.y = rest / n.z;
#endif
    if (c.w >= n.w || c[TK] >= n[TK])
        return;
    bool has_hi = c.w + 1u < n.w;
    uint e = glc_p[P_BASE] + offset_of(c, P_A_STRIDES), e1 = e + glc_p[P_A_STRIDES + 3];
    VAL lo = LOAD_A(e), hi = VAL(0);
    if (has_hi)
        hi = LOAD_A(e1);
    put(((c.x * n.y + c.y) * n.z + c.z) * n.w + c.w, lo, hi, has_hi);
}

#else

void main()
{
    if (glc_group_out_of_range())
        return;
    uint n = glc_p[P_N], pairs = (n >> 1) + (n & 1u);
    uint first = glc_group_index() * uint(GLC_LOCAL_SIZE_X * UNROLL) + gl_LocalInvocationID.x;
    for (uint k = 0u; k < uint(UNROLL); k++) {
        uint pair = first + k * uint(GLC_LOCAL_SIZE_X);
        if (pair >= pairs)
            return;
        uint i = pair * 2u;
        bool has_hi = i + 1u < n;
#if WORDS
        if (has_hi) {
            uint e = glc_p[P_BASE] + i;
            o[pair] = (e & 1u) == 0u ? a[e >> 1]
                                     : (a[e >> 1] >> 16) | (a[(e >> 1) + 1u] << 16);
            continue;
        }
#endif
        uvec4 c = coords(i);
        VAL lo = fetch(c), hi = VAL(0);
        if (has_hi) {
            c.w += 1u;
            if (c.w == glc_p[P_N3])
                c = coords(i + 1u);
            hi = fetch(c);
        }
        put(i, lo, hi, has_hi);
    }
}

#endif
