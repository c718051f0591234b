// set_rows: dst[ids[r], :] = src[r, :] over the rows r of src (KV-cache
// writes at positions); a row whose id is outside [0, V) is skipped, and the
// rest of dst is left as it was. A row is D elements (all dims after the
// first). An invocation owns one unit of a row, U = ceil(D / 2) units:
//   TD f32:    elements 2k, 2k + 1 of the row
//   TD 16-bit: word k of the words the destination row touches; an end
//              element whose word it shares with a neighbouring row (odd D)
//              is stored half-word with atomics, so rows written at once
//              by other invocations, and rows not written at all, keep
//              their halves
// When src has dst's dtype, raw bits move. Repeated ids: which src row
// lands is unspecified (each element is one of them).
// bindings: 0 src (read), 1 ids (read; i32 [rows]), 2 dst (written);
//           src and dst uint-backed floats
// params:   0 units (rows * U), 1 U, 2 D, 3 V
// defines:  TS, TD (GLC_T_*)
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_SET_ROWS
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer S { uint s[]; };
layout(std430, binding = 1) readonly buffer I { int ids[]; };
layout(std430, binding = 2) buffer Dst { uint d[]; };

#define RAW (TS == TD)
#if RAW && TD == GLC_T_F32
#define LOAD(e) s[(e)]
#elif RAW
#define LOAD(e) ((s[(e) >> 1] >> (((e) & 1u) << 4)) & 0xffffu)
#elif TD == GLC_T_F32
#define LOAD(e) floatBitsToUint(GLC_LOAD(s, TS, (e)))
#else
#define LOAD(e) (glc_pack16(GLC_LOAD(s, TS, (e)), 0.0, TD) & 0xffffu)
#endif

void main()
{
    uint g = glc_global_index();
    if (glc_group_out_of_range() || g >= glc_p[P_UNITS])
        return;
    uint U = glc_p[P_U], D = glc_p[P_D];
    uint r = g / U, k = g - r * U;
    uint id = uint(ids[r]);
    if (id >= glc_p[P_V])
        return;
    uint first = r * D, start = id * D; // src and dst elements of column 0
#if TD == GLC_T_F32
    uint c = 2u * k;
    d[start + c] = LOAD(first + c);
    if (c + 1u < D)
        d[start + c + 1u] = LOAD(first + c + 1u);
#else
    uint w = (start >> 1) + k, lo = 2u * w; // elements lo, lo + 1
    bool in_lo = lo >= start, in_hi = lo + 1u < start + D;
    if (in_lo && in_hi) {
        uint e = first + (lo - start);
#if RAW
        if ((first & 1u) == (start & 1u)) {
            d[w] = s[e >> 1]; // src and dst words line up
            return;
        }
#endif
        uint e1 = e + 1u;
        d[w] = LOAD(e) | (LOAD(e1) << 16);
    } else if (in_lo) {
        uint e = first + (lo - start);
        atomicAnd(d[w], 0xffff0000u);
        atomicOr(d[w], LOAD(e));
    } else {
        uint e = first; // lo + 1 == start: the row's first element
        atomicAnd(d[w], 0x0000ffffu);
        atomicOr(d[w], LOAD(e) << 16);
    }
#endif
}
