// image_io: a plan's texture input or output (glc_plan_bind_input_texture /
// _output_texture, plan_run.c): texel (x, y) of a 2D image <-> elements
// [y, x, 0 .. C) of an f32 [H, W, C] tensor (row y = 0 the texture's first
// row, GL's bottom one). RGBA8 reads as 4 unorm channels in [0, 1] and
// stores clamped and rounded; R32F as one float channel.
// bindings: SSBO 0 the tensor; image unit 0 the texture
// params: 0 W, 1 H, 2 C (4: RGBA8, 1: R32F)
// defines: OUT (0: image -> tensor, 1: tensor -> image), FMT (0 RGBA8,
//          1 R32F)
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_IMAGE_IO
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;

#if OUT
#define ACCESS writeonly
layout(std430, binding = 0) readonly buffer T { float t[]; };
#else
#define ACCESS readonly
layout(std430, binding = 0) writeonly buffer T { float t[]; };
#endif
#if FMT == 0
layout(rgba8, binding = 0) ACCESS uniform highp image2D img;
#else
layout(r32f, binding = 0) ACCESS uniform highp image2D img;
#endif

void main()
{
    uint i = glc_global_index(), w = glc_p[P_W], c = glc_p[P_C];
    if (glc_group_out_of_range() || i >= w * glc_p[P_H])
        return;
    ivec2 at = ivec2(int(i % w), int(i / w));
#if OUT
    vec4 v = c == 4u ? vec4(t[4u * i], t[4u * i + 1u], t[4u * i + 2u], t[4u * i + 3u])
                     : vec4(t[i], 0.0, 0.0, 1.0);
    imageStore(img, at, v);
#else
    vec4 v = imageLoad(img, at);
    if (c == 4u) {
        t[4u * i] = v.x;
        t[4u * i + 1u] = v.y;
        t[4u * i + 2u] = v.z;
        t[4u * i + 3u] = v.w;
    } else {
        t[i] = v.x;
    }
#endif
}
