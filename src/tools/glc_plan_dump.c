/*
 * glc-plan-dump: compiles a small demo graph on the default device and
 * prints the plan's listing (glc_plan_dump): buffers, tensor places, each
 * dispatch with its kernel, op, groups and bindings, and where the
 * barriers fall. The graph is the norm-and-gate half of a transformer MLP
 * without the matmuls:
 *
 *     h = rms_norm(x, g);  y = silu(h + b) * h       x: [T, D], T <= 16
 *
 * Usage: glc-plan-dump [--source] [--no-fuse] [--rows T]
 *   --source   also print the GLSL each kernel program is compiled from
 *   --no-fuse  compile with GLC_COMPILE_NO_FUSE: one dispatch per op
 *   --rows T   list the plan at T rows (1..16; default 16)
 * Exit status: 0 on success, 1 on a bad argument or when no device or
 * plan could be made.
 */
#include "glcompute.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D 64
#define TMAX 16

static void to_stdout(void *user, const char *text)
{
    (void)user;
    fputs(text, stdout);
}

static int usage(void)
{
    fprintf(stderr, "usage: glc-plan-dump [--source] [--no-fuse] [--rows T]   (1 <= T <= %d)\n",
            TMAX);
    return 1;
}

int main(int argc, char **argv)
{
    glc_device *dev = NULL;
    glc_graph *g = NULL;
    glc_plan *plan = NULL;
    glc_tensor x, gw, b, h, y;
    int64_t xs[2], ws[1] = {D}, rows = TMAX;
    unsigned flags = 0;
    glc_compile_desc desc;
    glc_status st;
    int i, rc = 1;
    desc.flags = 0;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--source") == 0) {
            flags |= GLC_PLAN_DUMP_SOURCE;
        } else if (strcmp(argv[i], "--no-fuse") == 0) {
            desc.flags |= GLC_COMPILE_NO_FUSE;
        } else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
            char *end;
            rows = strtoll(argv[++i], &end, 10);
            if (*end || rows < 1 || rows > TMAX)
                return usage();
        } else {
            return usage();
        }
    }
    if ((st = glc_device_create(NULL, &dev)) != GLC_OK) {
        fprintf(stderr, "glc-plan-dump: no device: %s\n", glc_device_errmsg(NULL));
        return 1;
    }
    if ((st = glc_graph_create(dev, &g)) != GLC_OK)
        goto fail;
    xs[0] = glc_graph_var(g, "T", 1, TMAX);
    xs[1] = D;
    x = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    gw = glc_graph_param(g, "g", GLC_DTYPE_F32, 1, ws);
    b = glc_graph_param(g, "b", GLC_DTYPE_F16, 1, ws);
    h = glc_rms_norm(g, x, gw, 1e-6f);
    y = glc_mul(g, glc_unary(g, GLC_UNARY_SILU, glc_add(g, h, b), 0), h);
    glc_graph_output(g, "y", y);
    if ((st = glc_graph_compile(g, &desc, &plan)) != GLC_OK)
        goto fail;
    if ((st = glc_plan_set_active_extent(plan, rows)) != GLC_OK)
        goto fail;
    if ((st = glc_plan_dump(plan, flags, to_stdout, NULL)) != GLC_OK)
        goto fail;
    rc = 0;
fail:
    if (rc)
        fprintf(stderr, "glc-plan-dump: %s\n", glc_device_errmsg(dev));
    glc_plan_destroy(plan);
    glc_graph_destroy(g);
    glc_device_destroy(dev);
    return rc;
}
