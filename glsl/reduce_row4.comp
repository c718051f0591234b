// reduce_row4: softmax and rms_norm of f32 rows whose length is a multiple
// of 4, a row an invocation in vec4s: the form llvmpipe's JIT runs fastest
// (no barrier, no shared memory; src/core/op_reduce.c picks it there for
// the rows reduce.comp would give a team of one). The same params and
// results as reduce.comp's (to rounding): softmax of scale * x over the
// keys a row keeps (causal: j < q + 1 + offp - offn, q = row % Tq), the
// others 0; rms_norm x * inversesqrt(mean(x^2) + eps) (* weight).
// bindings: 0 x (read), 1 out (written), BW the weight (rms_norm, read)
// params:   reduce.comp's: 0 rows, 1 n, 2 Tq, 3 offp, 4 offn, 5 scale / eps
// defines:  OP (GLC_R_SOFTMAX or GLC_R_RMS_NORM), BW (the weight's binding),
//           TEXEL (x read as RGBA32F texels, texture unit 0; its SSBO stays
//           bound, unread), TEXEL_W (the weight too, unit 1): llvmpipe's
//           texel fetch is a gather, its SSBO load a loop over the lanes
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_REDUCE
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
#ifdef TEXEL
layout(binding = 0) uniform highp samplerBuffer tx;
#define X_AT(i) texelFetch(tx, int(i))
#else
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
#define X_AT(i) x[i]
#endif
layout(std430, binding = 1) writeonly buffer O { vec4 o[]; };
#if defined(BW) && defined(TEXEL_W)
layout(binding = 1) uniform highp samplerBuffer tw;
#define W_AT(i) texelFetch(tw, int(i))
#elif defined(BW)
layout(std430, binding = BW) readonly buffer W { vec4 w[]; };
#define W_AT(i) w[i]
#endif

#define NEG_BIG (-3.402823e38)

void main()
{
    uint row = glc_global_index(), rows = glc_p[P_ROWS], n4 = glc_p[P_N] >> 2;
    if (glc_group_out_of_range() || row >= rows)
        return;
    uint b = row * n4;
#if OP == GLC_R_SOFTMAX
    uint q = row % glc_p[P_TQ], keep = q + 1u + glc_p[P_OFFP];
    uint lim = min(glc_p[P_N], keep > glc_p[P_OFFN] ? keep - glc_p[P_OFFN] : 0u);
    float scale = glc_pf(P_SCALE);
    // one pass for the kept keys' max and the sum of exp relative to it
    // (online: each lane of the vec4 rescales its sum when its max grows,
    // 4 vec4s at a time), then the row
    vec4 m4 = vec4(NEG_BIG), s4 = vec4(0.0);
    for (uint i = 0u; i < n4; i += 4u) {
        vec4 v[4];
        vec4 bm = m4;
        for (uint u = 0u; u < 4u; u++) {
            bvec4 ok = lessThan(uvec4(4u * (i + u)) + uvec4(0u, 1u, 2u, 3u), uvec4(lim));
            v[u] = i + u < n4 ? mix(vec4(NEG_BIG), X_AT(b + i + u) * scale, ok) : vec4(NEG_BIG);
            bm = max(bm, v[u]);
        }
        s4 *= exp(m4 - bm);
        for (uint u = 0u; u < 4u; u++)
            s4 += exp(v[u] - bm);
        m4 = bm;
    }
    float mx = max(max(m4.x, m4.y), max(m4.z, m4.w));
    s4 *= exp(m4 - vec4(mx));
    float total = s4.x + s4.y + s4.z + s4.w;
    float inv = total > 0.0 ? 1.0 / total : 0.0;
    for (uint i = 0u; i < n4; i++) {
        bvec4 ok = lessThan(uvec4(4u * i) + uvec4(0u, 1u, 2u, 3u), uvec4(lim));
        o[b + i] = mix(vec4(0.0), exp(X_AT(b + i) * scale - mx) * inv, ok);
    }
#else
    vec4 s4 = vec4(0.0);
    for (uint i = 0u; i < n4; i++) {
        vec4 v = X_AT(b + i);
        s4 += v * v;
    }
    float r = inversesqrt((s4.x + s4.y + s4.z + s4.w) / float(glc_p[P_N]) + glc_pf(P_EPS));
    for (uint i = 0u; i < n4; i++) {
#ifdef BW
        o[b + i] = X_AT(b + i) * r * W_AT(i);
#else
        o[b + i] = X_AT(b + i) * r;
#endif
    }
#endif
}
