// common.glsl: included after the prelude in every kernel.
// glc_p: the dispatch's parameters (floats passed as their bits).
// Grids past the per-dimension group limit are folded into 2-D or 3-D;
// glc_group_index() undoes the folding and glc_total_groups says how many
// groups the caller asked for, so surplus groups of the folded grid exit.

uniform uint glc_p[GLC_MAX_PARAMS];
uniform uint glc_total_groups;

uint glc_group_index(void)
{
    return gl_WorkGroupID.x +
           gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
}

uint glc_global_index(void)
{
    return glc_group_index() * uint(GLC_LOCAL_SIZE_X) + gl_LocalInvocationID.x;
}

bool glc_group_out_of_range(void)
{
    return glc_group_index() >= glc_total_groups;
}

float glc_pf(int i)
{
    return uintBitsToFloat(glc_p[i]);
}
