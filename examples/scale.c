/*
 * scale: the program the README's API tour quotes. Scales 1000 floats by 2
 * on the GPU with a user kernel, then checks them.
 * Run: build/examples/scale (exit status 0 when the numbers are right).
 */
#include <glcompute.h>

#include <stdio.h>
#include <string.h>

static const char *scale_src =
    "layout(local_size_x = GLC_LOCAL_SIZE_X) in;\n"
    "layout(std430, binding = 0) buffer B { float v[]; };\n"
    "void main() {\n"
    "    uint i = glc_global_index();\n"
    "    if (glc_group_out_of_range() || i >= glc_p[0]) return;\n"
    "    v[i] *= glc_pf(1);\n"
    "}\n";

int main(void)
{
    static float data[1000];
    int64_t n = 1000;
    float two = 2.0f;
    uint32_t params[2] = {1000, 0};
    glc_device *dev;
    glc_buffer *buf;
    glc_kernel *k;
    glc_session *s;
    glc_kernel_desc kd = {0};
    glc_status st;
    int i;

    for (i = 0; i < n; i++)
        data[i] = (float)i;
    if ((st = glc_device_create(NULL, &dev)) != GLC_OK) { /* NULL desc: defaults */
        fprintf(stderr, "scale: %s: %s\n", glc_status_str(st), glc_device_errmsg(NULL));
        return 1;
    }
    kd.name = "scale";
    kd.source = scale_src; /* the prelude adds #version, defines and common.glsl */
    memcpy(&params[1], &two, sizeof two);
    if ((st = glc_buffer_create(dev, GLC_DTYPE_F32, 1, &n, &buf)) != GLC_OK ||
        (st = glc_buffer_write(buf, 0, sizeof data, data)) != GLC_OK ||
        (st = glc_kernel_create(dev, &kd, &k)) != GLC_OK) {
        fprintf(stderr, "scale: %s: %s\n", glc_status_str(st), glc_device_errmsg(dev));
        return 1;
    }
    {
        /* offset 0 and size 0: the whole buffer */
        glc_binding b = {.buffer = buf, .access = GLC_READ_WRITE};
        glc_dispatch_desc d = {.kernel = k, .groups = (1000 + 63) / 64, .bindings = &b,
                               .binding_count = 1, .params = params, .param_count = 2,
                               .label = "scale"};
        if ((st = glc_session_begin(dev, GLC_SESSION_DIRECT, &s)) != GLC_OK ||
            (st = glc_session_dispatch(s, &d)) != GLC_OK ||
            (st = glc_session_finish(s, NULL)) != GLC_OK ||   /* the one sync point */
            (st = glc_buffer_read(buf, 0, sizeof data, data)) != GLC_OK) {
            fprintf(stderr, "scale: %s: %s\n", glc_status_str(st), glc_device_errmsg(dev));
            return 1;
        }
    }
    glc_buffer_destroy(buf);
    glc_kernel_destroy(k);
    glc_device_destroy(dev);
    for (i = 0; i < n; i++) {
        if (data[i] != 2.0f * (float)i) {
            printf("scale: element %d is %g, want %g\n", i, data[i], 2.0 * i);
            return 1;
        }
    }
    printf("scale: 1000 floats scaled by 2 on the GPU: ok\n");
    return 0;
}
