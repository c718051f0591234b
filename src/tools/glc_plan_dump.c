/*
 * glc-plan-dump: compiles a small demo graph on the default device and
 * prints the plan's listing (glc_plan_dump): buffers, tensor places, each
 * dispatch with its kernel, op, groups and bindings, and where the
 * barriers fall. The graph is the norm-and-gate half of a transformer MLP
 * without the matmuls:
 *
 *     h = rms_norm(x, g);  y = silu(h + b) * h       x: [T, D], T <= 16
 *
 * Usage: glc-plan-dump [--source] [--no-fuse] [--rows T] (--help: the options)
 * Exit status: 0 on success (or --help), 1 when no device or plan could be
 * made, 2 on a bad argument.
 */
#include "glcompute.h"

#include <errno.h>
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

/* Warnings to stderr; errors come back as the failing call's message,
 * printed once by main (the default log would print them again). */
static void log_cb(void *user, glc_log_level level, glc_status status, const char *msg)
{
    (void)user;
    (void)status;
    if (level != GLC_LOG_ERROR)
        fprintf(stderr, "glc-plan-dump: %s\n", msg);
}

static int usage(FILE *f, int rc)
{
    fprintf(f,
            "usage: glc-plan-dump [--source] [--no-fuse] [--rows T]\n"
            "Compiles a small demo graph, h = rms_norm(x, g); y = silu(h + b) * h with\n"
            "x [T, %d], on the default device and lists the plan: buffers, tensor places,\n"
            "each dispatch and where the barriers fall.\n"
            "  --source     also print the GLSL each kernel program is compiled from\n"
            "  --no-fuse    compile with GLC_COMPILE_NO_FUSE: one dispatch per op\n"
            "  --rows T     list the plan at T rows, 1..%d (default %d)\n"
            "  -h, --help   this text\n",
            D, TMAX, TMAX);
    return rc;
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
    glc_device_desc ddesc;
    glc_status st;
    int i, rc = 1;
    desc.flags = 0;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--source") == 0) {
            flags |= GLC_PLAN_DUMP_SOURCE;
        } else if (strcmp(argv[i], "--no-fuse") == 0) {
            desc.flags |= GLC_COMPILE_NO_FUSE;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            return usage(stdout, 0);
        } else if (strcmp(argv[i], "--rows") == 0) {
            char *end;
            const char *v = i + 1 < argc ? argv[++i] : NULL;
            if (!v) {
                fprintf(stderr, "glc-plan-dump: --rows needs a value\n");
                return usage(stderr, 2);
            }
            errno = 0;
            rows = strtoll(v, &end, 10);
            if (end == v || *end || errno == ERANGE || rows < 1 || rows > TMAX) {
                fprintf(stderr, "glc-plan-dump: --rows \"%s\": not an integer in 1..%d\n", v,
                        TMAX);
                return 2;
            }
        } else {
            fprintf(stderr, "glc-plan-dump: unknown option %s\n", argv[i]);
            return usage(stderr, 2);
        }
    }
    memset(&ddesc, 0, sizeof ddesc);
    ddesc.log = log_cb;
    ddesc.log_level = GLC_LOG_WARN;
    if ((st = glc_device_create(&ddesc, &dev)) != GLC_OK) {
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
