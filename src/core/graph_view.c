/*
 * Graph tensors that share another tensor's bytes (GL-free): reshapes (a
 * new shape over the same bytes: no node, no dispatch) and in-place writes
 * into persistent state (set_rows into a handle: the node's output is the
 * handle after the write, so later readers are ordered after it). Both are
 * aliases (graph.h); compile.c places an alias inside what it is part of
 * and keeps that alive as long as the alias is used. A node whose output
 * is part of a handle always runs, read or not.
 */
#include "graph.h"

#include <stdint.h>
#include <string.h>

int32_t glc__alias_root(const glc_graph *g, int32_t t, size_t *offset)
{
    size_t off = 0;
    while (g->t[t].alias) {
        off += g->t[t].alias_offset;
        t = g->t[t].alias - 1;
    }
    *offset = off;
    return t;
}

int32_t glc__handle_stale(const glc_graph *g, int32_t t)
{
    size_t off;
    int32_t root = glc__alias_root(g, t, &off);
    return g->t[root].kind == GLC__T_HANDLE && g->t[t].hver != g->t[root].hwrites ? root : -1;
}

static int valid(const glc_graph *g, glc_tensor t)
{
    return t.id >= 0 && (size_t)t.id < g->nt;
}

/* Elements of a graph shape at the variable values vals (NULL: maxima);
 * -1 when the product overflows (a shape asked for, never a tensor's). */
static int64_t numel_at(const glc_graph *g, int rank, const int64_t *shape, const int64_t *vals)
{
    int64_t n = 1;
    int d;
    for (d = 0; d < rank; d++) {
        int64_t v = glc__dim_value(g, shape[d], vals);
        if (v < 1 || n > INT64_MAX / v)
            return -1;
        n *= v;
    }
    return n;
}

glc_tensor glc_reshape(glc_graph *g, glc_tensor x, int rank, const int64_t *shape)
{
    int64_t vals[GLC__GRAPH_MAX_VARS];
    const glc__gtensor *t;
    glc_tensor r;
    int d, v, i;
    if (!g || g->status != GLC_OK)
        return glc_none();
    if (!valid(g, x) || rank < 1 || rank > GLC_MAX_DIMS || !shape)
        return glc__graph_fail(g, GLC_ERR_INVALID_ARG, "reshape: %s",
                               valid(g, x) ? "rank must be 1 to 4" : "no such tensor");
    t = &g->t[x.id];
    if (glc__is_block(t->dtype))
        return glc__graph_fail(g, GLC_ERR_UNSUPPORTED, "reshape: quantized tensors keep their shape");
    for (d = 0; d < rank; d++)
        if (shape[d] == 0 || (shape[d] < 0 && glc__dim_value(g, shape[d], NULL) == 0))
            return glc__graph_fail(g, GLC_ERR_INVALID_ARG,
                                   "reshape: dim %d is %lld, not a size or a variable", d,
                                   (long long)shape[d]);
    /* the same element count at the maxima and with each variable lower */
    for (v = -1; v < g->nvars; v++) {
        for (i = 0; i < g->nvars; i++)
            vals[i] = g->var[i].max;
        if (v >= 0)
            vals[v] = g->var[v].min;
        if (numel_at(g, t->rank, t->shape, vals) != numel_at(g, rank, shape, vals))
            return glc__graph_fail(g, GLC_ERR_INVALID_ARG,
                                   "reshape: %lld elements cannot take a shape of %lld%s",
                                   (long long)numel_at(g, t->rank, t->shape, vals),
                                   (long long)numel_at(g, rank, shape, vals),
                                   v >= 0 ? " (at a variable's minimum)" : "");
    }
    r.id = glc__graph_add_tensor(g, GLC__T_VALUE, NULL, t->dtype, rank, shape);
    if (r.id < 0)
        return glc_none();
    g->t[r.id].producer = g->t[x.id].producer;
    g->t[r.id].alias = x.id + 1;
    g->t[r.id].hver = g->t[x.id].hver;
    return r;
}

glc_tensor glc_set_rows(glc_graph *g, glc_tensor dst, glc_tensor src, glc_tensor ids)
{
    int32_t in[3], root;
    size_t off, k;
    glc_tensor out;
    if (!g || g->status != GLC_OK)
        return glc_none();
    if (!valid(g, dst) || g->t[glc__alias_root(g, dst.id, &off)].kind != GLC__T_HANDLE)
        return glc__graph_fail(g, GLC_ERR_INVALID_ARG,
                               "set_rows: dst must be a handle (or a handle after a write)");
    in[0] = src.id;
    in[1] = ids.id;
    in[2] = dst.id;
    out = glc__graph_node(g, GLC__OP_SET_ROWS, in, 3, g->t[dst.id].dtype, NULL);
    if (out.id < 0)
        return out;
    root = glc__alias_root(g, dst.id, &off);
    /* an output named earlier as the handle before this write would be
     * read after it: the rows it had are gone (the write is in place) */
    for (k = 0; k < g->nout; k++)
        if (glc__alias_root(g, g->out[k].tensor, &off) == root)
            return glc__graph_fail(g, GLC_ERR_INVALID_ARG,
                                   "set_rows: output \"%s\" is the handle \"%s\" before this "
                                   "write, and outputs are read after the run (name the "
                                   "handle after the last write, or a copy of it, as the "
                                   "output)",
                                   g->out[k].name, g->t[root].name);
    g->t[out.id].alias = dst.id + 1; /* the handle, after the write */
    g->t[out.id].hver = ++g->t[root].hwrites;
    return out;
}
