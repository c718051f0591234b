/*
 * Op builders of the graph API: each packs its arguments into the op
 * table's args with the family's glc__pack_* (ops.h), the function the
 * eager entry point glc_op_<name> calls too, then adds a node (graph.c)
 * whose rule infers the output. GL-free.
 */
#include "graph.h"

#include <string.h>

/* A node of op with a's scalars (packed by a glc__pack_*), output dtype
 * odt (0: f32). */
static glc_tensor node_args(glc_graph *g, const glc__op_args *a, const glc_tensor *in,
                            glc_dtype odt)
{
    int32_t ids[GLC__OP_MAX_TENSORS];
    glc__op_scalars raw;
    int i;
    for (i = 0; i < a->nin; i++)
        ids[i] = in[i].id;
    for (i = 0; i < GLC__OP_NF; i++)
        raw.f[i] = a->f[i];
    for (i = 0; i < GLC__OP_NI; i++)
        raw.i[i] = a->i[i];
    return glc__graph_node(g, a->op, ids, a->nin, odt, &raw);
}

/* A node of op with no scalars. */
static glc_tensor node(glc_graph *g, glc__op op, int nin, const glc_tensor *in)
{
    glc__op_args args;
    glc__op_args_init(&args, op, nin, 1);
    return node_args(g, &args, in, 0);
}

static glc_tensor node2(glc_graph *g, glc__op op, glc_tensor a, glc_tensor b)
{
    glc_tensor in[2] = {a, b};
    return node(g, op, 2, in);
}

/* ---- elementwise ---- */

glc_tensor glc_add(glc_graph *g, glc_tensor a, glc_tensor b) { return node2(g, GLC__OP_ADD, a, b); }
glc_tensor glc_sub(glc_graph *g, glc_tensor a, glc_tensor b) { return node2(g, GLC__OP_SUB, a, b); }
glc_tensor glc_mul(glc_graph *g, glc_tensor a, glc_tensor b) { return node2(g, GLC__OP_MUL, a, b); }
glc_tensor glc_div(glc_graph *g, glc_tensor a, glc_tensor b) { return node2(g, GLC__OP_DIV, a, b); }

glc_tensor glc_scale(glc_graph *g, glc_tensor x, float a, float b)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_SCALE, 1, 1);
    glc__pack_scale(&args, a, b);
    return node_args(g, &args, &x, 0);
}

glc_tensor glc_unary(glc_graph *g, glc_unary_op op, glc_tensor x, float param)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_UNARY, 1, 1);
    glc__pack_unary(&args, op, param);
    return node_args(g, &args, &x, 0);
}

/* ---- rows ---- */

glc_tensor glc_softmax(glc_graph *g, glc_tensor x, const glc_softmax_desc *desc)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_SOFTMAX, 1, 1);
    glc__pack_softmax(&args, desc);
    return node_args(g, &args, &x, 0);
}

glc_tensor glc_rms_norm(glc_graph *g, glc_tensor x, glc_tensor weight, float eps)
{
    glc__op_args args;
    glc_tensor in[2] = {x, weight};
    glc__op_args_init(&args, GLC__OP_RMS_NORM, 2, 1);
    glc__pack_norm(&args, eps);
    return node_args(g, &args, in, 0);
}

glc_tensor glc_layer_norm(glc_graph *g, glc_tensor x, glc_tensor weight, glc_tensor bias,
                          float eps)
{
    glc__op_args args;
    glc_tensor in[3] = {x, weight, bias};
    glc__op_args_init(&args, GLC__OP_LAYER_NORM, 3, 1);
    glc__pack_norm(&args, eps);
    return node_args(g, &args, in, 0);
}

glc_tensor glc_sum(glc_graph *g, glc_tensor x) { return node(g, GLC__OP_SUM, 1, &x); }
glc_tensor glc_mean(glc_graph *g, glc_tensor x) { return node(g, GLC__OP_MEAN, 1, &x); }

glc_tensor glc_argmax(glc_graph *g, glc_tensor x)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_ARGMAX, 1, 1);
    return node_args(g, &args, &x, GLC_DTYPE_I32);
}

glc_tensor glc_rope(glc_graph *g, glc_tensor x, glc_tensor positions, const glc_rope_desc *desc,
                    glc_tensor freq_factors)
{
    glc__op_args args;
    glc_tensor in[3] = {x, positions, freq_factors};
    glc__op_args_init(&args, GLC__OP_ROPE, 3, 1);
    glc__pack_rope(&args, desc);
    return node_args(g, &args, in, 0);
}

/* ---- matmuls ---- */

glc_tensor glc_matmul(glc_graph *g, glc_tensor a, glc_tensor b, glc_tensor bias,
                      const glc_matmul_desc *desc)
{
    glc__op_args args;
    glc_tensor in[3] = {a, b, bias};
    int32_t first;
    int n = glc__split_param(g, b, &first);
    if (n != 0) /* b past the device's buffer size: per piece */
        return n < 0 ? glc_none() : glc__split_matmul(g, GLC__OP_MATMUL, a, first, n, bias,
                                                      desc && desc->transpose_b);
    glc__op_args_init(&args, GLC__OP_MATMUL, 3, 1);
    glc__pack_matmul(&args, desc);
    return node_args(g, &args, in, 0);
}

glc_tensor glc_matmul_affine(glc_graph *g, glc_tensor a, glc_tensor w, glc_tensor scales,
                             glc_tensor biases, int bits, int group_size, glc_tensor bias)
{
    glc__op_args args;
    glc_tensor in[5] = {a, w, scales, biases, bias};
    glc__op_args_init(&args, GLC__OP_MATMUL_AFFINE, 5, 1);
    glc__pack_affine(&args, bits, group_size);
    return node_args(g, &args, in, 0);
}

glc_tensor glc_matmul_q(glc_graph *g, glc_tensor a, glc_tensor w, glc_tensor bias)
{
    glc_tensor in[3];
    int32_t first;
    int n = glc__split_param(g, w, &first);
    if (n != 0) /* w past the device's buffer size: per piece */
        return n < 0 ? glc_none() : glc__split_matmul(g, GLC__OP_MATMUL_Q, a, first, n, bias, 1);
    in[0] = a;
    in[1] = w;
    in[2] = bias;
    return node(g, GLC__OP_MATMUL_Q, 3, in);
}

glc_tensor glc_matmul_expert(glc_graph *g, glc_tensor a, glc_tensor w, glc_tensor ids)
{
    glc_tensor in[3];
    in[0] = a;
    in[1] = w;
    in[2] = ids;
    return node(g, GLC__OP_MATMUL_EXPERT, 3, in);
}

/* ---- attention ---- */

static glc_tensor attention(glc_graph *g, glc__op op, glc_tensor q, glc_tensor k, glc_tensor v,
                            const glc_sdpa_desc *desc)
{
    glc__op_args args;
    glc_tensor in[3] = {q, k, v};
    glc__op_args_init(&args, op, 3, 1);
    glc__pack_sdpa(&args, desc, 0); /* scratch: the compiler's, f32 */
    return node_args(g, &args, in, 0);
}

glc_tensor glc_sdpa(glc_graph *g, glc_tensor q, glc_tensor k, glc_tensor v,
                    const glc_sdpa_desc *desc)
{
    return attention(g, GLC__OP_SDPA, q, k, v, desc);
}

glc_tensor glc_sdpa_decode(glc_graph *g, glc_tensor q, glc_tensor k, glc_tensor v,
                           const glc_sdpa_desc *desc)
{
    return attention(g, GLC__OP_SDPA_DECODE, q, k, v, desc);
}

/* ---- data movement ---- */

glc_tensor glc__get_rows_from(glc_graph *g, glc_tensor table, glc_tensor ids, int64_t row0)
{
    glc__op_args args;
    glc_tensor in[2] = {table, ids};
    glc__op_args_init(&args, GLC__OP_GET_ROWS, 2, 1);
    args.i[0] = row0;
    return node_args(g, &args, in, 0);
}

glc_tensor glc_get_rows(glc_graph *g, glc_tensor table, glc_tensor ids)
{
    int32_t first;
    int n = glc__split_param(g, table, &first), i;
    glc_tensor acc;
    if (n == 0)
        return node2(g, GLC__OP_GET_ROWS, table, ids);
    if (n < 0)
        return glc_none();
    /* a table past the device's buffer size: each piece gives the rows it
     * holds and zeros for the others; their sum is exact */
    for (i = 0; i < n; i++) {
        glc_tensor piece = {first + i};
        glc_tensor r = glc__get_rows_from(g, piece, ids, g->t[first + i].piece_row0);
        acc = i == 0 ? r : glc_add(g, acc, r);
    }
    return acc;
}

glc_tensor glc_copy(glc_graph *g, glc_tensor x, const int *perm, glc_dtype out_dtype)
{
    glc__op_args args;
    int64_t shape[GLC_MAX_DIMS];
    glc__op_args_init(&args, GLC__OP_COPY, 1, 1);
    glc__pack_copy(&args, perm, glc_tensor_shape(g, x, shape));
    return node_args(g, &args, &x, out_dtype ? out_dtype : glc_tensor_dtype(g, x));
}

glc_tensor glc_concat(glc_graph *g, glc_tensor a, glc_tensor b, int axis)
{
    glc__op_args args;
    glc_tensor in[2] = {a, b};
    glc__op_args_init(&args, GLC__OP_CONCAT, 2, 1);
    glc__pack_concat(&args, axis);
    return node_args(g, &args, in, glc_tensor_dtype(g, a));
}

glc_tensor glc_slice(glc_graph *g, glc_tensor x, int axis, int64_t start, int64_t len)
{
    glc__op_args args;
    glc__op_args_init(&args, GLC__OP_SLICE, 1, 1);
    glc__pack_slice(&args, axis, start, len);
    return node_args(g, &args, &x, glc_tensor_dtype(g, x));
}
