// spin: a deliberately slow producer for the race test and the overlap
// benchmark: x[i] = (tag << 24) + (i + first) after `spin` rounds of an LCG
// the compiler cannot drop (the result is masked with a param that is 0,
// but only the host knows that).
// bindings: 0 x (u32, written)
// params:   0 n, 1 tag, 2 spin, 3 mask (pass 0), 4 first
// local size: GLC_LOCAL_SIZE_X x 1 x 1

#define GLC_KP_SPIN
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) writeonly buffer X { uint x[]; };

void main()
{
    uint i = glc_global_index();
    if (glc_group_out_of_range() || i >= glc_p[P_N])
        return;
    uint j = i + glc_p[P_FIRST];
    uint h = j ^ glc_p[P_TAG];
    for (uint k = 0u; k < glc_p[P_SPIN]; k++)
        h = h * 1664525u + 1013904223u;
    x[i] = (glc_p[P_TAG] << 24) + j + (h & glc_p[P_MASK]);
}
