/*
 * Op builders of the graph API: each maps its arguments into the op
 * table's args exactly as the eager entry point glc_op_<name> does (the
 * packing is documented in the family's src/op_*.c), then adds a node
 * (graph.c) whose rule infers the output. GL-free.
 */
#include "graph.h"

#include <string.h>

static glc_tensor node(glc_graph *g, glc__op op, int nin, const glc_tensor *in, const float *f,
                       int nf, const int64_t *iv, int ni)
{
    int32_t ids[GLC__OP_MAX_TENSORS];
    int i;
    for (i = 0; i < nin; i++)
        ids[i] = in[i].id;
    return glc__graph_node(g, op, ids, nin, 0, f, nf, iv, ni);
}

static glc_tensor node2(glc_graph *g, glc__op op, glc_tensor a, glc_tensor b)
{
    glc_tensor in[2];
    in[0] = a;
    in[1] = b;
    return node(g, op, 2, in, NULL, 0, NULL, 0);
}

/* ---- elementwise ---- */

glc_tensor glc_add(glc_graph *g, glc_tensor a, glc_tensor b) { return node2(g, GLC__OP_ADD, a, b); }
glc_tensor glc_sub(glc_graph *g, glc_tensor a, glc_tensor b) { return node2(g, GLC__OP_SUB, a, b); }
glc_tensor glc_mul(glc_graph *g, glc_tensor a, glc_tensor b) { return node2(g, GLC__OP_MUL, a, b); }
glc_tensor glc_div(glc_graph *g, glc_tensor a, glc_tensor b) { return node2(g, GLC__OP_DIV, a, b); }

glc_tensor glc_scale(glc_graph *g, glc_tensor x, float a, float b)
{
    float f[2];
    f[0] = a;
    f[1] = b;
    return node(g, GLC__OP_SCALE, 1, &x, f, 2, NULL, 0);
}

glc_tensor glc_unary(glc_graph *g, glc_unary_op op, glc_tensor x, float param)
{
    int64_t i = op;
    return node(g, GLC__OP_UNARY, 1, &x, &param, 1, &i, 1);
}

/* ---- rows ---- */

glc_tensor glc_softmax(glc_graph *g, glc_tensor x, const glc_softmax_desc *desc)
{
    float f = desc ? desc->scale : 0.0f;
    int64_t i[2];
    i[0] = desc ? desc->causal != 0 : 0;
    i[1] = desc ? desc->pos_offset : 0;
    return node(g, GLC__OP_SOFTMAX, 1, &x, &f, 1, i, 2);
}

glc_tensor glc_rms_norm(glc_graph *g, glc_tensor x, glc_tensor weight, float eps)
{
    glc_tensor in[2];
    in[0] = x;
    in[1] = weight;
    return node(g, GLC__OP_RMS_NORM, 2, in, &eps, 1, NULL, 0);
}

glc_tensor glc_layer_norm(glc_graph *g, glc_tensor x, glc_tensor weight, glc_tensor bias,
                          float eps)
{
    glc_tensor in[3];
    in[0] = x;
    in[1] = weight;
    in[2] = bias;
    return node(g, GLC__OP_LAYER_NORM, 3, in, &eps, 1, NULL, 0);
}

glc_tensor glc_sum(glc_graph *g, glc_tensor x) { return node(g, GLC__OP_SUM, 1, &x, NULL, 0, NULL, 0); }
glc_tensor glc_mean(glc_graph *g, glc_tensor x) { return node(g, GLC__OP_MEAN, 1, &x, NULL, 0, NULL, 0); }

glc_tensor glc_argmax(glc_graph *g, glc_tensor x)
{
    int32_t id = x.id;
    return glc__graph_node(g, GLC__OP_ARGMAX, &id, 1, GLC_DTYPE_I32, NULL, 0, NULL, 0);
}

glc_tensor glc_rope(glc_graph *g, glc_tensor x, glc_tensor positions, const glc_rope_desc *desc,
                    glc_tensor freq_factors)
{
    glc_tensor in[3];
    float base = desc ? desc->base : 0.0f;
    int64_t i[2];
    in[0] = x;
    in[1] = positions;
    in[2] = freq_factors;
    i[0] = desc ? desc->mode : GLC_ROPE_NORMAL;
    i[1] = desc ? desc->rope_dim : 0;
    return node(g, GLC__OP_ROPE, 3, in, &base, 1, i, 2);
}

/* ---- matmuls ---- */

glc_tensor glc_matmul(glc_graph *g, glc_tensor a, glc_tensor b, glc_tensor bias,
                      const glc_matmul_desc *desc)
{
    glc_tensor in[3];
    int64_t i = desc ? desc->transpose_b != 0 : 0;
    in[0] = a;
    in[1] = b;
    in[2] = bias;
    return node(g, GLC__OP_MATMUL, 3, in, NULL, 0, &i, 1);
}

glc_tensor glc_matmul_affine(glc_graph *g, glc_tensor a, glc_tensor w, glc_tensor scales,
                             glc_tensor biases, int bits, int group_size, glc_tensor bias)
{
    glc_tensor in[5];
    int64_t i[2];
    in[0] = a;
    in[1] = w;
    in[2] = scales;
    in[3] = biases;
    in[4] = bias;
    i[0] = bits;
    i[1] = group_size;
    return node(g, GLC__OP_MATMUL_AFFINE, 5, in, NULL, 0, i, 2);
}

glc_tensor glc_matmul_q(glc_graph *g, glc_tensor a, glc_tensor w, glc_tensor bias)
{
    glc_tensor in[3];
    in[0] = a;
    in[1] = w;
    in[2] = bias;
    return node(g, GLC__OP_MATMUL_Q, 3, in, NULL, 0, NULL, 0);
}

glc_tensor glc_matmul_expert(glc_graph *g, glc_tensor a, glc_tensor w, glc_tensor ids)
{
    glc_tensor in[3];
    in[0] = a;
    in[1] = w;
    in[2] = ids;
    return node(g, GLC__OP_MATMUL_EXPERT, 3, in, NULL, 0, NULL, 0);
}

/* ---- attention ---- */

static glc_tensor attention(glc_graph *g, glc__op op, glc_tensor q, glc_tensor k, glc_tensor v,
                            const glc_sdpa_desc *desc)
{
    glc_tensor in[3];
    float scale = desc ? desc->scale : 0.0f;
    int64_t i[4];
    in[0] = q;
    in[1] = k;
    in[2] = v;
    i[0] = desc ? desc->causal : 0;
    i[1] = desc ? desc->q_offset : -1;
    i[2] = desc ? desc->kv_len : 0;
    i[3] = 0; /* scratch: the compiler's, f32 */
    return node(g, op, 3, in, &scale, 1, i, 4);
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

glc_tensor glc_get_rows(glc_graph *g, glc_tensor table, glc_tensor ids)
{
    return node2(g, GLC__OP_GET_ROWS, table, ids);
}

glc_tensor glc_copy(glc_graph *g, glc_tensor x, const int *perm, glc_dtype out_dtype)
{
    int64_t shape[GLC_MAX_DIMS], i[1 + GLC_MAX_DIMS];
    int32_t id = x.id;
    int rank = glc_tensor_shape(g, x, shape), k, ni = 1;
    i[0] = perm != NULL;
    for (k = 0; perm && k < rank; k++)
        i[ni++] = perm[k];
    return glc__graph_node(g, GLC__OP_COPY, &id, 1, out_dtype ? out_dtype : glc_tensor_dtype(g, x),
                           NULL, 0, i, ni);
}

glc_tensor glc_concat(glc_graph *g, glc_tensor a, glc_tensor b, int axis)
{
    int32_t id[2];
    int64_t i = axis;
    id[0] = a.id;
    id[1] = b.id;
    return glc__graph_node(g, GLC__OP_CONCAT, id, 2, glc_tensor_dtype(g, a), NULL, 0, &i, 1);
}

glc_tensor glc_slice(glc_graph *g, glc_tensor x, int axis, int64_t start, int64_t len)
{
    int32_t id = x.id;
    int64_t i[3];
    i[0] = axis;
    i[1] = start;
    i[2] = len;
    return glc__graph_node(g, GLC__OP_SLICE, &id, 1, glc_tensor_dtype(g, x), NULL, 0, i, 3);
}
