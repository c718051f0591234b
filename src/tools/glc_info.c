/*
 * glc-info: which device glcompute picks, through which EGL platform, its
 * GL strings, limits and features, and the EGL devices with their rank
 * (like clinfo or vulkaninfo --summary). --json prints the same for scripts.
 * Exit status: 0 when a device was created (or --help), 1 when none could
 * be, 2 on a bad argument.
 */
#include "glcompute.h"

#include <stdio.h>
#include <string.h>

static void log_stderr(void *user, glc_log_level level, glc_status status, const char *msg)
{
    int verbose = *(int *)user;
    (void)status; /* errors: the caller prints glc_device_errmsg */
    if (level == GLC_LOG_WARN || (verbose && level != GLC_LOG_ERROR))
        fprintf(stderr, "glc-info: %s\n", msg);
}

static void json_str(const char *key, const char *v, int last)
{
    printf("  \"%s\": \"", key);
    for (; *v; v++) {
        if (*v == '"' || *v == '\\')
            printf("\\%c", *v);
        else if ((unsigned char)*v < 0x20)
            printf("\\u%04x", *v);
        else
            putchar(*v);
    }
    printf("\"%s\n", last ? "" : ",");
}

static void print_json(const glc_device_info *in, const glc_device_entry *ent, int n)
{
    const glc_device_limits *l = &in->limits;
    const glc_device_features *f = &in->features;
    int i;
    printf("{\n");
    json_str("platform", glc_platform_name(in->platform), 0);
    json_str("egl_device", in->egl_device, 0);
    json_str("egl_vendor", in->egl_vendor, 0);
    json_str("vendor", in->vendor, 0);
    json_str("renderer", in->renderer, 0);
    json_str("version", in->version, 0);
    json_str("glsl_version", in->glsl_version, 0);
    printf("  \"limits_clamped\": %s,\n", in->limits_clamped ? "true" : "false");
    printf("  \"limits\": {\"max_group_count\": [%u, %u, %u], \"max_group_size\": [%u, %u, %u], "
           "\"max_invocations\": %u, \"max_shared_bytes\": %u, \"max_ssbo_blocks\": %u, "
           "\"max_ssbo_bindings\": %u, \"max_ssbo_size\": %llu, \"ssbo_offset_alignment\": %u, "
           "\"max_uniform_block_size\": %u, \"uniform_offset_alignment\": %u, "
           "\"max_loop_iterations\": %u},\n",
           l->max_group_count[0], l->max_group_count[1], l->max_group_count[2],
           l->max_group_size[0], l->max_group_size[1], l->max_group_size[2], l->max_invocations,
           l->max_shared_bytes, l->max_ssbo_blocks, l->max_ssbo_bindings,
           (unsigned long long)l->max_ssbo_size, l->ssbo_offset_alignment,
           l->max_uniform_block_size, l->uniform_offset_alignment, l->max_loop_iterations);
    printf("  \"barriers\": \"%s\",\n  \"validate\": %s,\n", in->barriers ? in->barriers : "",
           in->validate ? "true" : "false");
    printf("  \"features\": {\"subgroup\": %d, \"subgroup_size\": %u, \"subgroup_ops\": %u, "
           "\"timer_query\": %d, \"buffer_storage\": %d, \"program_binary_formats\": %d, "
           "\"fp16_arithmetic\": %d, \"robust_context\": %d},\n",
           f->subgroup, f->subgroup_size, f->subgroup_ops, f->timer_query, f->buffer_storage,
           f->program_binary_formats, f->fp16_arithmetic, f->robust_context);
    printf("  \"egl_devices\": [");
    for (i = 0; i < n; i++)
        printf("%s\n    {\"index\": %d, \"rank\": %d, \"software\": %d, \"cuda\": %d, "
               "\"drm\": \"%s\", \"render\": \"%s\"}",
               i ? "," : "", ent[i].index, ent[i].rank, ent[i].is_software, ent[i].has_cuda,
               ent[i].drm_path, ent[i].render_path);
    printf("%s]\n}\n", n ? "\n  " : "");
}

static void print_text(const glc_device_info *in, const glc_device_entry *ent, int n)
{
    const glc_device_limits *l = &in->limits;
    const glc_device_features *f = &in->features;
    int i;
    printf("glcompute %d.%d.%d\n", GLC_VERSION_MAJOR, GLC_VERSION_MINOR, GLC_VERSION_PATCH);
    printf("platform        %s (%s)\n", glc_platform_name(in->platform), in->egl_device);
    printf("EGL vendor      %s\n", in->egl_vendor);
    printf("GL vendor       %s\n", in->vendor);
    printf("GL renderer     %s\n", in->renderer);
    printf("GL version      %s\n", in->version);
    printf("GLSL version    %s\n", in->glsl_version);
    printf("limits%s\n", in->limits_clamped ? " (clamped to the ES 3.1 minimums: GLC_LIMITS=min)"
                                             : "");
    printf("  work groups per dispatch   %u x %u x %u\n", l->max_group_count[0],
           l->max_group_count[1], l->max_group_count[2]);
    printf("  local size                 %u x %u x %u, %u invocations\n", l->max_group_size[0],
           l->max_group_size[1], l->max_group_size[2], l->max_invocations);
    printf("  shared memory              %u bytes\n", l->max_shared_bytes);
    printf("  SSBO blocks (compute)      %u (of %u bindings)\n", l->max_ssbo_blocks,
           l->max_ssbo_bindings);
    printf("  SSBO size                  %llu bytes\n", (unsigned long long)l->max_ssbo_size);
    printf("  SSBO offset alignment      %u bytes\n", l->ssbo_offset_alignment);
    printf("  uniform block size         %u bytes\n", l->max_uniform_block_size);
    printf("  uniform offset alignment   %u bytes\n", l->uniform_offset_alignment);
    if (l->max_loop_iterations)
        printf("  loop iterations            %u per invocation (all loops together)\n",
               l->max_loop_iterations);
    else
        printf("  loop iterations            no limit\n");
    printf("barriers        %s (GLC_BARRIERS)\n", in->barriers ? in->barriers : "");
    printf("validation      %s (GLC_VALIDATE)\n", in->validate ? "on" : "off");
    printf("features\n");
    printf("  subgroups                  %s", f->subgroup ? "yes" : "no");
    if (f->subgroup)
        printf(" (size %u, ops 0x%x)", f->subgroup_size, f->subgroup_ops);
    printf("\n  timer queries              %s\n", f->timer_query ? "yes" : "no");
    printf("  buffer storage             %s\n", f->buffer_storage ? "yes" : "no");
    printf("  program binary formats     %d\n", f->program_binary_formats);
    printf("  fp16 arithmetic            %s\n", f->fp16_arithmetic ? "yes" : "no");
    printf("  robust context             %s\n", f->robust_context ? "yes" : "no");
    printf("EGL devices (rank order; GLC_DEVICE=<index> picks one)\n");
    if (n == 0)
        printf("  (none enumerated)\n");
    for (i = 0; i < n; i++)
        printf("  %d  rank %d  %-8s %s%s%s\n", ent[i].index, ent[i].rank,
               ent[i].is_software ? "software" : ent[i].has_cuda ? "cuda" : "hardware",
               ent[i].drm_path, *ent[i].render_path ? " " : "", ent[i].render_path);
}

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: glc-info [--json] [-v]\n"
               "Prints the device glcompute picks: platform, GL strings, limits, features,\n"
               "the barrier and validation knobs in force, and the EGL devices by rank.\n"
               "  --json          the same as JSON\n"
               "  -v, --verbose   also print the library's info messages\n"
               "  -h, --help      this text\n"
               "Environment: GLC_PLATFORM, GLC_DEVICE, GLC_LIMITS, GLC_BARRIERS, GLC_VALIDATE\n"
               "(see the README).\n");
    return rc;
}

int main(int argc, char **argv)
{
    glc_device_desc desc;
    glc_device *dev = NULL;
    glc_device_info info;
    glc_device_entry ent[16];
    int i, n = 0, json = 0, verbose = 0;
    glc_status st;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout, 0);
        else {
            fprintf(stderr, "glc-info: unknown option %s\n", argv[i]);
            return usage(stderr, 2);
        }
    }
    memset(&desc, 0, sizeof desc);
    desc.log = log_stderr;
    desc.log_user = &verbose;
    desc.log_level = GLC_LOG_INFO;
    st = glc_device_create(&desc, &dev);
    if (st != GLC_OK) {
        fprintf(stderr, "glc-info: no device: %s\n", glc_device_errmsg(NULL));
        return 1;
    }
    glc_device_get_info(dev, &info);
    if (glc_device_list(ent, 16, &n) != GLC_OK)
        n = 0;
    if (n > 16)
        n = 16;
    if (json)
        print_json(&info, ent, n);
    else
        print_text(&info, ent, n);
    glc_device_destroy(dev);
    return 0;
}
