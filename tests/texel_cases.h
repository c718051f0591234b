/*
 * Written op cases run through both read paths of a kernel that has a
 * texel form (test_op_elementwise, test_op_data, test_op_rope): each case
 * eagerly and through a plan, from SSBOs (texels off), then, on a device
 * with buffer textures, as texels at any size (the threshold at 0) under a
 * texel limit of `limit` texels.
 */
#ifndef GLC_TESTS_TEXEL_CASES_H
#define GLC_TESTS_TEXEL_CASES_H

#include "testutil.h"

#include "device.h" /* the texel feature and limit, set per round */
#include "optable.h"

#include <stdio.h>

static inline void tc_run_both(glc_device *dev, const oc_case *cases, size_t n, uint64_t seed,
                               uint32_t limit, const char *what)
{
    int have = dev->info.features.texel_buffers, texel;
    size_t i;
    for (texel = 0; texel <= have; texel++) {
        char label[64];
        TU_TEXEL_ROUND(dev, texel, limit);
        snprintf(label, sizeof label, "%s, %s", what, texel ? "texels" : "SSBO");
        for (i = 0; i < n; i++) {
            oc_run_eager(dev, &cases[i], seed + i, label);
            oc_run_graph(dev, &cases[i], seed + i, label);
        }
    }
}

#endif
