// subgroup.glsl: a kernel's subgroup, for the kernels that give each
// subgroup its own piece of work and sum its lanes (matmul_q.glsl's split
// variant, matvec.comp's subgroup-a-row layout): its id, lane, size, count
// in the group, elect and sum. The device's (GL_KHR_shader_subgroup); or,
// where the kernel defines VSG, VSG lanes of the group whose sums meet in
// shared memory: a device without subgroup sums (the tests on llvmpipe
// run the GPUs' decode kernels so, GLC_MATMUL=matvec). Each sg_add is then
// a barrier of the whole group, so every invocation must call it as often:
// such a kernel gives each emulated subgroup one piece of work, a piece
// past the grid included (it stores nothing).

#ifdef VSG
#define SG_ID (gl_LocalInvocationID.x / uint(VSG))
#define SG_LANE (gl_LocalInvocationID.x % uint(VSG))
#define SG_SIZE uint(VSG)
#define SG_COUNT (uint(GLC_LOCAL_SIZE_X) / uint(VSG))
#define SG_ELECT (SG_LANE == 0u)
shared float vsg_sum[GLC_LOCAL_SIZE_X];

float sg_add(float v)
{
    uint l = gl_LocalInvocationID.x, first = l - l % uint(VSG);
    vsg_sum[l] = v;
    barrier();
    float s = 0.0;
    for (uint i = 0u; i < uint(VSG); i++)
        s += vsg_sum[first + i];
    barrier();
    return s;
}
#else
#define SG_ID gl_SubgroupID
#define SG_LANE gl_SubgroupInvocationID
#define SG_SIZE gl_SubgroupSize
#define SG_COUNT gl_NumSubgroups
#define SG_ELECT subgroupElect()
#define sg_add subgroupAdd
#endif
