/*
 * The decode kernels' variants, forced for a test's graph (test_fuse_glu,
 * test_fuse_res): the planner's own choice follows from the shape and
 * reaches few of them.
 * - ks: dense weights: matvec with a subgroup a row and its K split in 2,
 *   4 or 8 subgroups (parts past K included); on GPUs (subgroups) in every
 *   case, elsewhere (llvmpipe, GLC_MATMUL=matvec: emulated subgroups) in
 *   every third (llvmpipe compiles each).
 * - lk: one row of a (T 1) on every device, GLC_MATMUL=matvec where there
 *   are no subgroups (llvmpipe): dense weights take matvec's lanes across
 *   K (32 or 64 lanes, more where K needs them: at most 4 words a lane;
 *   1-3 rows a group); blocks, on a device without subgroups only,
 *   matmul_q's split variant with an emulated subgroup (VSG; 1-2 rows a
 *   tile: on GPUs the default plan is that variant already). On GPUs dense
 *   weights take lk at any T (the LK layout applies where M is 1, the
 *   subgroup layout elsewhere).
 * The forced plans take matvec whatever GLC_MATMUL says (a dense tile
 * variant forced there would leave them none). NULL where the case takes
 * no such plan. ci varies the shapes by case.
 */
#ifndef GLC_TESTS_FORCED_MV_H
#define GLC_TESTS_FORCED_MV_H

#include "device.h" /* the device's GLC_MATMUL (env.matmul) */
#include "op_run.h" /* glc__device_tune */

typedef glc_plan *(*fm_build)(glc_device *dev, const void *c, uint32_t flags);

static inline void fm_plans(glc_device *dev, fm_build build, const void *c, size_t ci,
                            glc_dtype w, int64_t k, int64_t tm, glc_plan **ks, glc_plan **lk)
{
    int sg = dev->info.features.subgroup, mm = dev->env.matmul, blocks = glc_dtype_size(w) == 0;
    uint32_t lanes = 32u << ci % 2, words = (uint32_t)(k / (w == GLC_DTYPE_F32 ? 4 : 8));
    glc__tune tu = {0, 0, 0, 2u << ci % 3, 1, 0}, tl = {1 + ci % 3, 0, 0, 0, 0, 0};
    *ks = *lk = NULL;
    if (blocks) {
        if (sg || tm != 1) /* (GPUs: the default plan is the split variant) */
            return;
        tl.rn = 1 + ci % 2; /* (llvmpipe compiles each: kept small) */
    } else {
        while (lanes * 4 < words)
            lanes *= 2;
        tl.lanes = lanes;
        if (sg || ci % 3 == 0) {
            dev->env.matmul = GLC__MATMUL_MATVEC;
            glc__device_tune(dev, &tu);
            *ks = build(dev, c, 0);
            dev->env.matmul = mm;
        }
        /* without subgroups the LK layout is the only one: K must fit the
         * device's lanes */
        if (!sg && (tm != 1 || lanes > dev->info.limits.max_invocations ||
                    lanes > dev->info.limits.max_group_size[0])) {
            glc__device_tune(dev, NULL);
            return;
        }
    }
    dev->env.matmul = GLC__MATMUL_MATVEC; /* (whatever GLC_MATMUL says) */
    glc__device_tune(dev, &tl);
    *lk = build(dev, c, 0);
    glc__device_tune(dev, NULL);
    dev->env.matmul = mm;
}

#endif
