/*
 * Params larger than one buffer (GL-free): a device binds at most
 * max_ssbo_size bytes to a shader storage block (llvmpipe: 128 MiB; the ES
 * minimum is 128 MiB too), so a 32000 x 2048 f32 embedding (262 MB) cannot
 * be one binding there. Such a param, when a node that can work per piece
 * reads it, is split by rows into pieces of its own (params "<name>#<i>",
 * consecutive tensors, each a contiguous row range of the user's data; the
 * param itself stays the name the user sets: plan.c scatters its bytes
 * into the pieces), and the node is built per piece:
 *   get_rows(P, ids)       -> sum over pieces of get_rows(P_i, ids) with
 *                             the piece's first row as the ids' origin (an
 *                             id outside a piece reads zeros there, so the
 *                             sum is exact: x + 0 = x)
 *   matmul(a, P^T [+ bias]) and matmul_q(a, P [+ bias])
 *                          -> concat over pieces of the products of the
 *                             piece's rows (outputs along the last dim),
 *                             each with its slice of the bias
 *   matmul(a, P) (P [K, N], not transposed)
 *                          -> sum over pieces of slice(a, K range) P_i,
 *                             plus the bias once
 * The rewrite happens as the node is added, so graph order stays
 * topological; fusion and compilation see ordinary nodes. Other readers of
 * such a param are not rewritten: the compiler refuses the param as too
 * large, as before.
 */
#include "graph.h"

#include <stdio.h>
#include <string.h>

/* At most this many pieces a param (a 4 GiB param on the ES minimum of
 * 128 MiB bindings takes 32): past it the param is refused as too large. */
#define MAX_PIECES 64

/* The device's binding limit, in bytes (0: none known) */
static uint64_t max_binding(const glc_graph *g)
{
    glc_device_info info;
    if (!g->dev || glc_device_get_info(g->dev, &info) != GLC_OK)
        return 0;
    return info.limits.max_ssbo_size;
}

static int named(const glc_graph *g, const char *name)
{
    size_t i;
    for (i = 0; i < g->nt; i++)
        if (g->t[i].name && strcmp(g->t[i].name, name) == 0)
            return 1;
    return 0;
}

int glc__split_param(glc_graph *g, glc_tensor w, int32_t *first)
{
    glc__gtensor *t;
    uint64_t limit, row, rows_per, bytes;
    int64_t rows, r0, k, i;
    if (!g || g->status != GLC_OK || w.id < 0 || (size_t)w.id >= g->nt)
        return 0;
    t = &g->t[w.id];
    if (t->pieces) {
        *first = t->pieces - 1;
        return t->npieces;
    }
    if (t->kind != GLC__T_PARAM || t->rank != 2 || t->alias || t->packed || t->piece_of ||
        t->shape[0] < 2 || t->shape[1] < 1 || (limit = max_binding(g)) == 0)
        return 0;
    row = glc_dtype_row_bytes(t->dtype, t->shape[1]);
    rows = t->shape[0];
    if (row == 0 || row * (uint64_t)rows <= limit || row > limit)
        return 0; /* it fits, or not even a row does (the compiler says so) */
    rows_per = limit / row;
    k = (int64_t)((uint64_t)(rows + (int64_t)rows_per - 1) / rows_per);
    if (k > MAX_PIECES)
        return 0; /* the compiler refuses it as too large */
    rows_per = (uint64_t)((rows + k - 1) / k); /* balanced: the pieces differ by a row at most */
    for (i = 0, r0 = 0; i < k; i++, r0 += (int64_t)rows_per) {
        char name[256];
        int64_t shape[2];
        int32_t id;
        shape[0] = rows - r0 < (int64_t)rows_per ? rows - r0 : (int64_t)rows_per;
        shape[1] = g->t[w.id].shape[1]; /* g->t moves as pieces are added */
        snprintf(name, sizeof name, "%.200s#%lld", g->t[w.id].name, (long long)i);
        if (named(g, name)) {
            glc__graph_fail(g, GLC_ERR_INVALID_ARG,
                            "param \"%s\" (%llu bytes) must be split for the device's %llu-byte "
                            "buffers, and its piece's name \"%s\" is taken",
                            g->t[w.id].name, (unsigned long long)(row * (uint64_t)rows),
                            (unsigned long long)limit, name);
            return -1;
        }
        if ((id = glc__graph_add_tensor(g, GLC__T_PARAM, name, g->t[w.id].dtype, 2, shape)) < 0)
            return -1;
        bytes = row * (uint64_t)r0;
        g->t[id].piece_of = w.id + 1;
        g->t[id].piece_offset = (size_t)bytes;
        g->t[id].piece_row0 = r0;
        if (i == 0)
            *first = id;
    }
    t = &g->t[w.id]; /* the array may have moved */
    t->pieces = *first + 1;
    t->npieces = (int32_t)k;
    return (int)k;
}

/* The product of a with piece i's rows (transposed: with its slice of the
 * bias) or its K range (not: the bias is whole, given to the first piece) */
static glc_tensor piece_product(glc_graph *g, glc__op op, glc_tensor a, int32_t piece,
                                glc_tensor bias, int nt)
{
    /* (copied: g->t moves as the slices add tensors) */
    int64_t row0 = g->t[piece].piece_row0, rows = g->t[piece].shape[0];
    glc_tensor w, x = a, b = glc_none();
    glc_matmul_desc d;
    w.id = piece;
    if (!nt) { /* rows of P are a's K range */
        x = glc_slice(g, a, -1, row0, rows);
        b = row0 == 0 ? bias : glc_none();
    } else if (bias.id >= 0)
        b = glc_slice(g, bias, -1, row0, rows);
    if (op == GLC__OP_MATMUL_Q)
        return glc_matmul_q(g, x, w, b);
    d.transpose_b = nt;
    return glc_matmul(g, x, w, b, &d);
}

glc_tensor glc__split_matmul(glc_graph *g, glc__op op, glc_tensor a, int32_t first, int n,
                             glc_tensor bias, int nt)
{
    glc_tensor acc = glc_none();
    int i;
    for (i = 0; i < n; i++) {
        glc_tensor y = piece_product(g, op, a, first + i, bias, nt);
        acc = i == 0 ? y : nt ? glc_concat(g, acc, y, -1) : glc_add(g, acc, y);
    }
    return acc;
}
