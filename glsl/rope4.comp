// rope4: rope of f32 rows in vec4s, an invocation across a token's heads:
// the form llvmpipe runs fastest (src/core/op_rope.c picks it there for f32
// x and out with whole quads). Invocation g owns quad u of every head of
// token g / units: it takes the cosines and sines of its pairs once and
// applies them to the H rows, so the transcendentals are paid once a token
// instead of once a row, and it reads x as vec4s (as texels with TEXEL: a
// gather, where llvmpipe's SSBO load is a loop over the lanes).
//   u < rot: NEOX pairs 4u .. 4u+3, elements 4u.. and 4u + rope_dim/2..
//            (rope_dim % 8 == 0); NORMAL the quad's two pairs 2u, 2u + 1,
//            elements 4u .. 4u+3 (rope_dim % 4 == 0)
//   else:    quad rope_dim/4 + u - rot past rope_dim, copied
// The same rotation as rope.comp's (rope.glsl's rot_of, to rounding). An
// invocation reads its elements before writing them and no other touches
// them, so x and out may be one tensor.
// bindings: 0 x (read; TEXEL: also texture unit 0, which the kernel reads),
//           1 positions i32 [T] (read), 2 freq_factors f32 (read, when
//           HAS_FF), then out (written)
// params:   rope.comp's: 0 total units (tokens x units), 1 units a token,
//           2 rotating units a token (rot), 3 H, 4 T, 5 D, 6 rope_dim, 7
//           -2 log2(base) / rope_dim (float bits)
// defines:  NEOX (0/1), HAS_FF (0/1), TEXEL
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_ROPE
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
#ifdef TEXEL
layout(binding = 0) uniform highp samplerBuffer tx;
#define X_AT(i) texelFetch(tx, int(i))
#else
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
#define X_AT(i) x[i]
#endif
layout(std430, binding = 1) readonly buffer P { int pos[]; };
#if HAS_FF
layout(std430, binding = 2) readonly buffer F { float ff[]; };
layout(std430, binding = 3) writeonly buffer O { vec4 o[]; };
#else
layout(std430, binding = 2) writeonly buffer O { vec4 o[]; };
#endif

// theta of pairs i .. i+3 (NEOX) or i, i+1 (NORMAL) at position p
// (rope.glsl's rot_of, several at once)
#if NEOX
vec4 thetas(float p, uint i)
{
    vec4 th = p * exp2(vec4(uvec4(i) + uvec4(0u, 1u, 2u, 3u)) * glc_pf(P_THETA_STEP));
#if HAS_FF
    th /= vec4(ff[i], ff[i + 1u], ff[i + 2u], ff[i + 3u]);
#endif
    return th;
}
#else
vec2 thetas(float p, uint i)
{
    vec2 th = p * exp2(vec2(uvec2(i) + uvec2(0u, 1u)) * glc_pf(P_THETA_STEP));
#if HAS_FF
    th /= vec2(ff[i], ff[i + 1u]);
#endif
    return th;
}
#endif

void main()
{
    uint g = glc_global_index();
    if (glc_group_out_of_range() || g >= glc_p[P_UNITS])
        return;
    uint units = glc_p[P_ROW_UNITS], rot = glc_p[P_ROT], H = glc_p[P_H];
    uint d4 = glc_p[P_D] >> 2, rd = glc_p[P_ROPE_DIM];
    uint tok = g / units, u = g - tok * units;
    uint r4 = tok * H * d4; // the token's first row, in vec4s
    if (u >= rot) {
        uint q = (rd >> 2) + (u - rot);
        for (uint h = 0u; h < H; h++, r4 += d4)
            o[r4 + q] = X_AT(r4 + q);
        return;
    }
    float p = float(pos[tok % glc_p[P_T]]);
#if NEOX
    vec4 th = thetas(p, 4u * u), c = cos(th), s = sin(th);
    uint qb = u + (rd >> 3); // the quad of the pairs' second elements
    for (uint h = 0u; h < H; h++, r4 += d4) {
        vec4 va = X_AT(r4 + u), vb = X_AT(r4 + qb);
        o[r4 + u] = va * c - vb * s;
        o[r4 + qb] = va * s + vb * c;
    }
#else
    // pairs 2u and 2u + 1
    vec2 th = thetas(p, 2u * u);
    vec4 c = cos(th).xxyy, s = sin(th).xxyy;
    for (uint h = 0u; h < H; h++, r4 += d4) {
        vec4 v = X_AT(r4 + u);
        o[r4 + u] = v * c + vec4(-v.y, v.x, -v.w, v.z) * s;
    }
#endif
}
