// fill: out[i] = value for i in [0, n): the smallest kernel, used by tests
// of dispatch, grid folding, barriers and state restore.
// bindings: 0 out (u32, written)
// params:   0 n (elements), 1 value (u32 bits), 2 stride (0 or 1: value + i*stride)
// local size: GLC_LOCAL_SIZE_X x 1 x 1

#define GLC_KP_FILL
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) writeonly buffer Out { uint out_data[]; };

void main()
{
    uint i = glc_global_index();
    if (glc_group_out_of_range() || i >= glc_p[P_N])
        return;
    out_data[i] = glc_p[P_VALUE] + i * glc_p[P_STRIDE];
}
