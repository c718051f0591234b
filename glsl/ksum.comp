// ksum: the second pass of a matmul whose K was split (a device caps the
// loop iterations of one invocation): out = the sum of the S partial
// products, then the bias, the activation and, for the fused Q/K/V
// projection, the three matrices (or a fused residual added), as the
// matmul kernels write them.
// An invocation per output.
// bindings: 0 part (float[]: S slices of `total` floats, out's [.., M, N]
//   order), 1 out (float[]), 2 bias (float[]; the plan binds part in its
//   place when there is none), RES: 3 residual (float[], out's
//   shape)
// params: 0 total (outputs), 1 N, 2 S, 3 flags (1: add bias), 4 activation
//   param; SEG: 5 s1, 6 s12 (segment column bounds), 7, 8 where segments 1
//   and 2 start in out (elements)
// defines: ACT (glc_act op; 0 none), SEG, RES (add the residual last),
//   GLU_OUT (the SwiGLU epilogue, a glc_act op with param 4: the product's
//   N columns are gate | up halves; an invocation per output of out
//   [.., N / 2]: act(gate + bias) * (up + bias))
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_KSUM
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer P { float part[]; };
layout(std430, binding = 1) writeonly buffer O { float o[]; };
layout(std430, binding = 2) readonly buffer BIAS { float bias[]; };
#ifdef RES
layout(std430, binding = 3) readonly buffer RESIDUAL { float res[]; };
#endif

#ifndef ACT
#define ACT 0
#endif

void main()
{
    uint i = glc_global_index(), total = glc_p[P_TOTAL], N = glc_p[P_N];
#ifdef GLU_OUT
    uint h = N / 2u, gi = (i / h) * N + i % h; // the gate's column of the product
    if (glc_group_out_of_range() || i >= total / 2u)
        return;
    float g = 0.0, u = 0.0;
    for (uint s = 0u; s < glc_p[P_S]; s++) {
        g += part[s * total + gi];
        u += part[s * total + gi + h];
    }
    if ((glc_p[P_FLAGS] & 1u) != 0u) {
        g += bias[i % h];
        u += bias[i % h + h];
    }
    o[i] = glc_glu_out(g, u, glc_pf(P_ACT_PARAM));
#else
    if (glc_group_out_of_range() || i >= total)
        return;
    float v = 0.0;
    for (uint s = 0u; s < glc_p[P_S]; s++)
        v += part[s * total + i];
    uint row = i / N, col = i % N;
    if ((glc_p[P_FLAGS] & 1u) != 0u)
        v += bias[col];
    v = glc_act(v, ACT, glc_pf(P_ACT_PARAM));
#ifdef RES
    v = res[i] + v;
#endif
#ifdef SEG
    uint s1 = glc_p[P_S1], s12 = glc_p[P_S12];
    if (col < s1)
        o[row * s1 + col] = v;
    else if (col < s12)
        o[glc_p[P_SEG1] + row * (s12 - s1) + col - s1] = v;
    else
        o[glc_p[P_SEG2] + row * (N - s12) + col - s12] = v;
#else
    o[i] = v;
#endif
#endif
}
