/*
 * Grid folding (see grid.h). x is balanced against y (and y against z) so a
 * folded grid wastes at most one row of groups per slice instead of up to
 * max-1 groups.
 */
#include "grid.h"

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

glc_status glc__grid_fold(uint64_t groups, const uint32_t max[3], uint32_t out[3])
{
    uint64_t per_slice, x, y, z;
    if (groups == 0 || groups > UINT32_MAX || !max[0] || !max[1] || !max[2])
        return GLC_ERR_BOUNDS;
    z = ceil_div(groups, (uint64_t)max[0] * max[1]);
    if (z > max[2])
        return GLC_ERR_BOUNDS;
    per_slice = ceil_div(groups, z);
    y = ceil_div(per_slice, max[0]);
    x = ceil_div(per_slice, y);
    out[0] = (uint32_t)x;
    out[1] = (uint32_t)y;
    out[2] = (uint32_t)z;
    return GLC_OK;
}
