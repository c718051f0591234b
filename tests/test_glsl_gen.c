/*
 * Tests of what the build generates into the embedded kernels (GL-free):
 * the C enum values kernels compare (enums.glsl, inlined into common)
 * equal the C ones; every built-in kernel reads its params by name
 * (glc_p[P_...], no bare index) from a kparams.glsl section that exists,
 * and each name it reads has the slot src/core/kparams.h gives it; no kernel
 * keeps an unresolved #include.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "kernel.h"
#include "kparams.h"
#include "ops.h"

/* Whether text holds the line "#define NAME VALUE". */
static int has_define(const char *text, const char *name, long value)
{
    char line[128];
    snprintf(line, sizeof line, "#define %s %ld\n", name, value);
    return strstr(text, line) != NULL;
}

static void test_enums_match_c(void **state)
{
    const char *common = glc__glsl_find("common");
    (void)state;
    assert_non_null(common);
    assert_true(has_define(common, "GLC_UNARY_GELU", GLC_UNARY_GELU));
    assert_true(has_define(common, "GLC_UNARY_SILU", GLC_UNARY_SILU));
    assert_true(has_define(common, "GLC_UNARY_SOFTCAP", GLC_UNARY_SOFTCAP));
    assert_true(has_define(common, "GLC_UNARY_AFFINE", GLC__UNARY_AFFINE));
    assert_true(has_define(common, "GLC_ROPE_NEOX", GLC_ROPE_NEOX));
    assert_true(has_define(common, "GLC_T_F16", GLC__T_F16));
    assert_true(has_define(common, "GLC_T_BF16", GLC__T_BF16));
    assert_true(has_define(common, "GLC_T_Q4_0", GLC__T_Q4_0));
    assert_true(has_define(common, "GLC_T_Q4_K", GLC__T_Q4_K));
    assert_true(has_define(common, "GLC_T_Q5_K", GLC__T_Q5_K));
    assert_true(has_define(common, "GLC_T_Q6_K", GLC__T_Q6_K));
    assert_true(has_define(common, "GLC_T_Q4_1", GLC__T_Q4_1));
    assert_true(has_define(common, "GLC_T_Q5_0", GLC__T_Q5_0));
    assert_true(has_define(common, "GLC_T_Q5_1", GLC__T_Q5_1));
    assert_true(has_define(common, "GLC_T_AFFINE", GLC__T_AFFINE));
    assert_true(has_define(common, "GLC_R_ARGMAX", GLC__R_ARGMAX));
    assert_true(has_define(common, "GLC_OP_DIV", GLC__OP_DIV));
    /* the dtype mapping planners define */
    assert_int_equal(glc__kdtype_of(GLC_DTYPE_F32), GLC__T_F32);
    assert_int_equal(glc__kdtype_of(GLC_DTYPE_Q8_0), GLC__T_Q8_0);
    assert_int_equal(glc__kdtype_of(GLC_DTYPE_Q6_K), GLC__T_Q6_K);
    assert_int_equal(glc__kdtype_of(GLC_DTYPE_Q5_1), GLC__T_Q5_1);
    /* kernels take the GGML block types as the values from Q8_0 on */
    assert_true(GLC__T_Q8_0 > GLC__T_AFFINE && GLC__T_Q5_1 > GLC__T_Q8_0);
}

/* The kparams section of kernel text: "#define GLC_KP_X" -> "X". */
static int kernel_section(const char *text, char *out, size_t len)
{
    const char *p = strstr(text, "\n#define GLC_KP_");
    size_t n = 0;
    if (!p)
        return 0;
    p += strlen("\n#define GLC_KP_");
    while (n + 1 < len && (isupper((unsigned char)p[n]) || isdigit((unsigned char)p[n]) ||
                           p[n] == '_'))
        n++;
    memcpy(out, p, n);
    out[n] = '\0';
    return 1;
}

/* The slot kparams.h gives kernel k's name, or -1. */
#define KP_CASE(K, NAME, I)                                                                   \
    if (strcmp(kernel, #K) == 0 && strcmp(name, #NAME) == 0)                                  \
        return (I);
#define KP_KERNEL(K) GLC__KP_##K(KP_CASE, K)
static int slot_of(const char *kernel, const char *name)
{
    GLC__KPARAM_KERNELS(KP_KERNEL)
    return -1;
}

static void test_kernels_read_named_params(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < glc__glsl_count; i++) {
        const char *text = glc__glsl_table[i].text, *p;
        char kernel[64], name[96];
        if (strcmp(glc__glsl_table[i].name, "common") == 0)
            continue;
        if (strstr(text, "#include"))
            fail_msg("%s: an #include was left unresolved", glc__glsl_table[i].name);
        for (p = strstr(text, "glc_p["); p; p = strstr(p + 1, "glc_p[")) {
            if (isdigit((unsigned char)p[6]))
                fail_msg("%s reads a parameter by bare index: %.24s", glc__glsl_table[i].name, p);
        }
        if (!strstr(text, "glc_p[") && !strstr(text, "glc_pf("))
            continue;
        if (!kernel_section(text, kernel, sizeof kernel))
            fail_msg("%s reads params but picks no kparams section", glc__glsl_table[i].name);
        /* each P_NAME define of its section of the inlined kparams.glsl
         * has kparams.h's slot */
        snprintf(name, sizeof name, "#if defined(GLC_KP_%s)\n", kernel);
        if (!(p = strstr(text, name)))
            fail_msg("%s: no kparams section %s", glc__glsl_table[i].name, kernel);
        p = strchr(p, '\n') + 1;
        while (strncmp(p, "#endif", 6) != 0) {
            int slot = -1;
            if (sscanf(p, "#define P_%63[A-Z0-9_] %d", name, &slot) != 2 ||
                slot_of(kernel, name) != slot)
                fail_msg("%s: section %s: %.40s", glc__glsl_table[i].name, kernel, p);
            p = strchr(p, '\n') + 1;
        }
    }
    assert_int_equal(slot_of("MATMUL_Q", "ACT_PARAM"), GLC__KP_MATMUL_Q_ACT_PARAM);
    assert_int_equal(slot_of("SDPA_ROWS", "SPLIT"), 13);
    assert_int_equal(slot_of("MATMUL", "GLU_DELTA"), 15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enums_match_c),
        cmocka_unit_test(test_kernels_read_named_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
