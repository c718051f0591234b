/*
 * The smallest complete glcompute program with a graph: y = silu(x + b)
 * for 8 rows of 4, built once, compiled, run twice with run_slots. The
 * README quotes it; `make check` runs it.
 */
#include <glcompute.h>

#include <math.h>
#include <stdio.h>

int main(void)
{
    float x[8 * 4], b[4] = {0.5f, -0.5f, 1.0f, 0.0f};
    int64_t xs[2] = {8, 4}, bs[1] = {4};
    const void *inputs[1] = {x};
    glc_plan_slice out[1];
    glc_device *dev;
    glc_graph *g;
    glc_plan *plan;
    glc_tensor tx, tb;
    int i, run, bad = 0;

    if (glc_device_create(NULL, &dev) != GLC_OK) {
        fprintf(stderr, "hello: no GLES 3.1 device: %s\n", glc_device_errmsg(NULL));
        return 1;
    }
    glc_graph_create(dev, &g);
    tx = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, xs);
    tb = glc_graph_param(g, "b", GLC_DTYPE_F32, 1, bs);
    glc_graph_output(g, "y", glc_unary(g, GLC_UNARY_SILU, glc_add(g, tx, tb), 0));
    if (glc_graph_compile(g, NULL, &plan) != GLC_OK) { /* builder errors land here too */
        fprintf(stderr, "hello: %s\n", glc_device_errmsg(dev));
        return 1;
    }
    glc_graph_destroy(g);
    glc_plan_set_param(plan, "b", b, 4);

    for (run = 0; run < 2; run++) {
        const float *y;
        for (i = 0; i < 8 * 4; i++)
            x[i] = (float)(i - 16 + run) / 8.0f;
        if (glc_plan_run_slots(plan, inputs, out) != GLC_OK) {
            fprintf(stderr, "hello: %s\n", glc_device_errmsg(dev));
            return 1;
        }
        y = (const float *)((const char *)glc_plan_arena_ptr(plan) + out[0].offset);
        for (i = 0; i < 8 * 4; i++) {
            float v = x[i] + b[i % 4], want = v / (1.0f + expf(-v));
            bad += fabsf(y[i] - want) > 1e-5f * (1.0f + fabsf(want));
        }
    }
    printf("hello: y = silu(x + b) over 2 runs: %s\n", bad ? "WRONG" : "ok");
    glc_plan_destroy(plan);
    glc_device_destroy(dev);
    return bad != 0;
}
