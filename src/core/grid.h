/*
 * Folding a 1-D work-group count into a grid within the device's
 * per-dimension limits (GL-free). ES 3.1 guarantees only 65535 groups per
 * dimension, so a 1-D dispatch of more groups must become 2-D or 3-D; the
 * kernel side (glc_group_index in common.glsl) linearises it again and
 * surplus groups exit.
 */
#ifndef GLC_GRID_H
#define GLC_GRID_H

#include "glcompute.h"

/* Picks x, y, z with x*y*z >= groups, each within max[], and the surplus
 * small (the last dimension is balanced). groups must be 1..UINT32_MAX
 * (kernels index groups with a 32-bit uint). GLC_ERR_BOUNDS otherwise. */
glc_status glc__grid_fold(uint64_t groups, const uint32_t max[3], uint32_t out[3]);

#endif
