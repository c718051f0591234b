// sdpa_combine: flash-decoding's second pass (and prefill's, when its
// keys were chunked for a device's loop cap): merges the per-chunk partial
// results per query row and head: out = sum_s 2^(m_s - M) o_s /
// sum_s 2^(m_s - M) l_s with M the running max (one pass, rescaled online).
// bindings: 0 scratch (read, f32 [Tq, Hq, nsplit, DV + 2]: m, l, o per
//           chunk), 1 out (written, f32 [Tq, Hq, DV])
// params:   0 nsplit, 1 DV
// local size: GLC_LOCAL_SIZE_X; one work group per (query row, head)

#define GLC_KP_SDPA_COMBINE
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer S { float sc[]; };
layout(std430, binding = 1) writeonly buffer O { float o[]; };

void main()
{
    if (glc_group_out_of_range())
        return;
    uint h = glc_group_index(), nsplit = glc_p[P_NSPLIT], dv = glc_p[P_DV];
    for (uint d = gl_LocalInvocationID.x; d < dv; d += uint(GLC_LOCAL_SIZE_X)) {
        float m = -1.0e30, l = 0.0, acc = 0.0;
        for (uint s = 0u; s < nsplit; s++) {
            uint base = (h * nsplit + s) * (dv + 2u);
            float ms = sc[base];
            if (ms > m) {
                float a = exp2(m - ms);
                l *= a;
                acc *= a;
                m = ms;
            }
            float w = exp2(ms - m);
            l += sc[base + 1u] * w;
            acc += sc[base + 2u + d] * w;
        }
        o[h * dv + d] = l > 0.0 ? acc / l : 0.0;
    }
}
