/*
 * Elementwise ops: add, sub, mul, div with numpy broadcasting, scale
 * (x*a+b) and the unary activations. Rules and plans here (GL-free), the
 * kernels in glsl/binary.comp and glsl/unary.comp. Every storage dtype is
 * F32, F16 or BF16; the arithmetic is f32. Two outputs per invocation, so
 * 16-bit outputs are written a word at a time.
 *
 * Args (ops.h): binary ops a->bin: act, an activation applied to a first
 * (a glc_unary_op, 0 none; set by the compiler's SwiGLU fusion), and its
 * act_param; unary a->unary: op, the glc_unary_op, and its param; scale
 * a->scale: mul, add.
 */
#include "op_run.h"

#include <stdio.h>
#include <string.h>

#define LOCAL 128 /* the ES 3.1 minimum of invocations: fits every device */
#define UNROLL 4  /* pairs per invocation: amortises per-invocation cost (llvmpipe) */
/* llvmpipe, f32 of one shape: consecutive vec4s per invocation (read as
 * texels too: 4 against 1, add 12.2-13.5 -> 16.4-19.2 GB/s, 2 cores) */
#define VEC4 4

/* llvmpipe's fast form (bench_ops --only probe: twice the pairs' speed):
 * f32 in and out, no broadcast, whole vec4s */
static int vec4_form(const glc__target *tg, int all_f32, int broadcast, uint64_t n)
{
    return tg->is_llvmpipe && all_f32 && !broadcast && n % 4 == 0;
}

/* The vec4 form's inputs read through buffer textures: llvmpipe's texel
 * fetches are gathers, its SSBO loads a loop over the lanes with a branch
 * a component (`glc-bench-ops --only "tex probe"`, 2 cores: an f32 add at
 * 24.6 GB/s against 10.3) */
static int texel_form(const glc__target *tg, int vec4, uint64_t n)
{
    return vec4 && glc__texel_ok(tg, n * 4) && glc__texel_worth(tg, n * 4);
}

/* The dispatch of n elements: vec4 groups (texel: read as texels), or pairs */
static glc__dispatch_plan *elementwise_dispatch(glc__op_plan *p, const char *kernel, int vec4,
                                                int texel, uint64_t n)
{
    uint64_t per = vec4 ? 4u * VEC4 : 2u * UNROLL, items = vec4 ? n / 4 : (n + 1) / 2;
    glc__dispatch_plan *d = glc__plan_dispatch(p, kernel, LOCAL, items);
    d->groups = (n + (uint64_t)LOCAL * per - 1) / ((uint64_t)LOCAL * per);
    if (d->groups == 0)
        d->groups = 1;
    if (vec4)
        glc__define_int(d, "VEC4", VEC4);
    else
        glc__define_int(d, "UNROLL", UNROLL);
    if (texel)
        glc__define(d, "TEXEL", "1");
    return d;
}

static const char *binary_names[4] = {"add", "sub", "mul", "div"};

static glc_status binary_infer(glc__op_args *a, char *err, size_t len)
{
    const char *name = binary_names[a->op - GLC__OP_ADD];
    glc__tensor *x = &a->t[0], *y = &a->t[1], *o = &a->t[2];
    char sx[96], sy[96];
    int r, i;
    if (!glc__is_float(x->dtype) || !glc__is_float(y->dtype) || !glc__is_float(o->dtype))
        return glc__op_error(err, len, name, "a %s, b %s, out %s: storage must be f32, f16 or bf16",
                             glc_dtype_name(x->dtype), glc_dtype_name(y->dtype),
                             glc_dtype_name(o->dtype));
    r = x->rank > y->rank ? x->rank : y->rank;
    o->rank = r;
    for (i = 0; i < r; i++) {
        int64_t dx = i - (r - x->rank) >= 0 ? x->shape[i - (r - x->rank)] : 1;
        int64_t dy = i - (r - y->rank) >= 0 ? y->shape[i - (r - y->rank)] : 1;
        if (dx != dy && dx != 1 && dy != 1)
            return glc__op_error(err, len, name, "shapes %s and %s do not broadcast (dim %d: %lld vs %lld)",
                                 glc__shape_str(x, sx, sizeof sx), glc__shape_str(y, sy, sizeof sy),
                                 i, (long long)dx, (long long)dy);
        o->shape[i] = dx > dy ? dx : dy;
    }
    if (glc__numel(o) > 0xffffffffll)
        return glc__op_error(err, len, name, "%lld elements (at most 2^32 - 1)",
                             (long long)glc__numel(o));
    return GLC_OK;
}

/* Element strides of `t` against the 4-D padded output shape: 0 where t
 * broadcasts. */
static void broadcast_strides(const glc__tensor *t, const glc__tensor *o, uint32_t s[4])
{
    int64_t stride = 1;
    int i;
    for (i = 3; i >= 0; i--) {
        int ti = i - (4 - t->rank), oi = i - (4 - o->rank);
        int64_t dt = ti >= 0 ? t->shape[ti] : 1, dout = oi >= 0 ? o->shape[oi] : 1;
        s[i] = dt == dout ? (uint32_t)stride : 0;
        stride *= dt;
    }
}

static glc_status binary_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                              char *err, size_t len)
{
    const glc__tensor *x = &a->t[0], *y = &a->t[1], *o = &a->t[2];
    int broadcast = !glc__same_shape(x, o) || !glc__same_shape(y, o);
    uint64_t n = (uint64_t)glc__numel(o);
    int all_f32 = x->dtype == GLC_DTYPE_F32 && y->dtype == GLC_DTYPE_F32 && o->dtype == GLC_DTYPE_F32;
    int vec4 = vec4_form(tg, all_f32, broadcast, n), texel = texel_form(tg, vec4, n);
    glc__dispatch_plan *d = elementwise_dispatch(p, "binary", vec4, texel, n);
    (void)err;
    (void)len;
    glc__define_int(d, "OP", a->op);
    glc__define_t(d, "TA", x->dtype);
    glc__define_t(d, "TB", y->dtype);
    glc__define_t(d, "TO", o->dtype);
    glc__define_int(d, "BROADCAST", broadcast);
    if (texel) {
        glc__plan_bind_texel(d, 0);
        glc__plan_bind_texel(d, 1);
    } else {
        glc__plan_bind(d, 0, GLC_READ);
        glc__plan_bind(d, 1, GLC_READ);
    }
    glc__plan_bind(d, 2, GLC_WRITE);
    glc__plan_param_at(d, GLC__KP_BINARY_N, (uint32_t)n);
    {
        uint32_t sa[4], sb[4];
        int i;
        for (i = 1; i < 4; i++) {
            int oi = i - (4 - o->rank);
            glc__plan_param_at(d, GLC__KP_BINARY_DIM1 - 1 + i,
                               (uint32_t)(oi >= 0 ? o->shape[oi] : 1));
        }
        broadcast_strides(x, o, sa);
        broadcast_strides(y, o, sb);
        for (i = 0; i < 4; i++)
            glc__plan_param_at(d, GLC__KP_BINARY_A_STRIDES + i, sa[i]);
        for (i = 0; i < 4; i++)
            glc__plan_param_at(d, GLC__KP_BINARY_B_STRIDES + i, sb[i]);
    }
    if (a->bin.act) { /* fused: that activation (and its param) on a first */
        glc__define_int(d, "ACT_A", a->bin.act);
        glc__plan_paramf_at(d, GLC__KP_BINARY_ACT_PARAM, a->bin.act_param);
    }
    return GLC_OK;
}

static glc_status unary_infer(glc__op_args *a, char *err, size_t len)
{
    const char *name = a->op == GLC__OP_SCALE ? "scale" : "unary";
    glc__tensor *x = &a->t[0], *o = &a->t[1];
    if (a->op == GLC__OP_UNARY && (a->unary.op < GLC_UNARY_GELU || a->unary.op > GLC_UNARY_SOFTCAP))
        return glc__op_error(err, len, name, "%lld is not a glc_unary_op", (long long)a->unary.op);
    if (a->op == GLC__OP_UNARY && a->unary.op == GLC_UNARY_SOFTCAP && !(a->unary.param > 0))
        return glc__op_error(err, len, name, "softcap needs a cap > 0, got %g",
                             (double)a->unary.param);
    if (!glc__is_float(x->dtype) || !glc__is_float(o->dtype))
        return glc__op_error(err, len, name, "x %s, out %s: storage must be f32, f16 or bf16",
                             glc_dtype_name(x->dtype), glc_dtype_name(o->dtype));
    o->rank = x->rank;
    memcpy(o->shape, x->shape, sizeof o->shape);
    if (glc__numel(o) > 0xffffffffll)
        return glc__op_error(err, len, name, "%lld elements (at most 2^32 - 1)",
                             (long long)glc__numel(o));
    return GLC_OK;
}

static glc_status unary_plan(const glc__op_args *a, const glc__target *tg, glc__op_plan *p,
                             char *err, size_t len)
{
    uint64_t n = (uint64_t)glc__numel(&a->t[0]);
    int all_f32 = a->t[0].dtype == GLC_DTYPE_F32 && a->t[1].dtype == GLC_DTYPE_F32;
    int vec4 = vec4_form(tg, all_f32, 0, n), texel = texel_form(tg, vec4, n);
    glc__dispatch_plan *d = elementwise_dispatch(p, "unary", vec4, texel, n);
    (void)err;
    (void)len;
    glc__define_int(d, "OP", a->op == GLC__OP_SCALE ? GLC__UNARY_AFFINE : a->unary.op);
    glc__define_t(d, "TX", a->t[0].dtype);
    glc__define_t(d, "TO", a->t[1].dtype);
    if (texel)
        glc__plan_bind_texel(d, 0);
    else
        glc__plan_bind(d, 0, GLC_READ);
    glc__plan_bind(d, 1, GLC_WRITE);
    glc__plan_param_at(d, GLC__KP_UNARY_N, (uint32_t)n);
    glc__plan_paramf_at(d, GLC__KP_UNARY_A, a->scale.mul);
    glc__plan_paramf_at(d, GLC__KP_UNARY_B, a->scale.add);
    return GLC_OK;
}

const glc__op_desc glc__op_ADD_desc = {"add", binary_infer, binary_plan};
const glc__op_desc glc__op_SUB_desc = {"sub", binary_infer, binary_plan};
const glc__op_desc glc__op_MUL_desc = {"mul", binary_infer, binary_plan};
const glc__op_desc glc__op_DIV_desc = {"div", binary_infer, binary_plan};
const glc__op_desc glc__op_SCALE_desc = {"scale", unary_infer, unary_plan};
const glc__op_desc glc__op_UNARY_desc = {"unary", unary_infer, unary_plan};

static glc_status binary(glc_session *s, glc__op op, glc_view a, glc_view b, glc_view out)
{
    glc__op_args args;
    glc__op_args_init(&args, op, 2, 1);
    return glc__op_run(s, &args, (glc_view[]){a, b, out}, NULL);
}

glc_status glc_op_add(glc_session *s, glc_view a, glc_view b, glc_view out)
{
    return binary(s, GLC__OP_ADD, a, b, out);
}

glc_status glc_op_sub(glc_session *s, glc_view a, glc_view b, glc_view out)
{
    return binary(s, GLC__OP_SUB, a, b, out);
}

glc_status glc_op_mul(glc_session *s, glc_view a, glc_view b, glc_view out)
{
    return binary(s, GLC__OP_MUL, a, b, out);
}

glc_status glc_op_div(glc_session *s, glc_view a, glc_view b, glc_view out)
{
    return binary(s, GLC__OP_DIV, a, b, out);
}

void glc__pack_scale(glc__op_args *a, float mul, float add)
{
    a->scale.mul = mul;
    a->scale.add = add;
}

void glc__pack_unary(glc__op_args *a, glc_unary_op op, float param)
{
    a->unary.op = op;
    a->unary.param = param;
}

glc_status glc_op_scale(glc_session *s, glc_view x, float a, float b, glc_view out)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_SCALE, 1, 1);
    glc__pack_scale(&args, a, b);
    return glc__op_run(s, &args, (glc_view[]){x, out}, NULL);
}

glc_status glc_op_unary(glc_session *s, glc_unary_op op, glc_view x, float param, glc_view out)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_UNARY, 1, 1);
    glc__pack_unary(&args, op, param);
    return glc__op_run(s, &args, (glc_view[]){x, out}, NULL);
}
