/*
 * Graph builder (see graph.h). Builders never fail loudly: the first error
 * is kept with its message and every later builder is a no-op returning
 * "no tensor", so building code stays straight-line and the error comes
 * out of glc_graph_status / glc_graph_compile.
 */
#include "graph.h"

#include "alloc.h"
#include "errmsg.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const glc_tensor no_tensor = {-1};

glc_tensor glc_none(void) { return no_tensor; }

#define fail glc__graph_fail

glc_tensor glc__graph_fail(glc_graph *g, glc_status st, const char *fmt, ...)
{
    va_list ap;
    if (g->status != GLC_OK)
        return no_tensor;
    g->status = st;
    va_start(ap, fmt);
    vsnprintf(g->errmsg, sizeof g->errmsg, fmt, ap);
    va_end(ap);
    return no_tensor;
}

glc_status glc_graph_create(glc_device *dev, glc_graph **out)
{
    glc_graph *g;
    GLC__ARG(NULL, dev);
    GLC__ARG(dev, out);
    glc__use_device(dev);
    g = glc__calloc(1, sizeof *g);
    if (!g)
        return GLC_ERR_OUT_OF_MEMORY;
    g->dev = dev;
    *out = g;
    return GLC_OK;
}

void glc_graph_destroy(glc_graph *g)
{
    size_t i;
    int v;
    if (!g)
        return;
    for (i = 0; i < g->nt; i++)
        glc__free(g->t[i].name);
    for (i = 0; i < g->nout; i++)
        glc__free(g->out[i].name);
    for (v = 0; v < g->nvars; v++)
        glc__free(g->var[v].name);
    glc__free(g->t);
    glc__free(g->n);
    glc__free(g->out);
    glc__free(g);
}

glc_status glc_graph_status(const glc_graph *g) { return g ? g->status : GLC_ERR_INVALID_ARG; }
const char *glc_graph_errmsg(const glc_graph *g) { return g ? g->errmsg : ""; }

/* Grows an array of `size`-byte items to hold one more; 0 on OOM. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    void *p;
    size_t c;
    if (n < *cap)
        return 1;
    c = *cap ? *cap * 2 : 16;
    p = glc__realloc(*v, c * size);
    if (!p)
        return 0;
    *v = p;
    *cap = c;
    return 1;
}

int64_t glc__dim_value(const glc_graph *g, int64_t d, const int64_t *vals)
{
    int64_t i = -1 - d;
    if (d >= 1)
        return d;
    if (i < 0 || i >= g->nvars)
        return 0;
    return vals ? vals[i] : g->var[i].max;
}

int64_t glc_graph_var(glc_graph *g, const char *name, int64_t min, int64_t max)
{
    glc__gvar *v;
    int i;
    if (!g || g->status != GLC_OK)
        return 0;
    if (!name || min < 1 || max < min) {
        fail(g, GLC_ERR_INVALID_ARG, "glc_graph_var(\"%s\"): bounds [%lld, %lld] (need 1 <= min <= max)",
             name ? name : "(null)", (long long)min, (long long)max);
        return 0;
    }
    for (i = 0; i < g->nvars; i++)
        if (strcmp(g->var[i].name, name) == 0) {
            /* plans set variables by name: a second one could not be set */
            fail(g, GLC_ERR_INVALID_ARG, "glc_graph_var(\"%s\"): the name is taken", name);
            return 0;
        }
    if (g->nvars == GLC__GRAPH_MAX_VARS) {
        fail(g, GLC_ERR_BOUNDS, "glc_graph_var(\"%s\"): at most %d variables", name,
             GLC__GRAPH_MAX_VARS);
        return 0;
    }
    v = &g->var[g->nvars];
    glc__use_device(g->dev);
    if (!(v->name = glc__strdup(name))) {
        fail(g, GLC_ERR_OUT_OF_MEMORY, "glc_graph_var: out of memory");
        return 0;
    }
    v->min = min;
    v->max = max;
    return GLC_DIM_VAR(g->nvars++);
}

static int32_t add_tensor(glc_graph *g, glc__tkind kind, const char *name, glc_dtype dtype,
                          int rank, const int64_t *shape)
{
    glc__gtensor *t;
    glc__use_device(g->dev);
    if (!grow((void **)&g->t, &g->tcap, g->nt, sizeof *g->t)) {
        fail(g, GLC_ERR_OUT_OF_MEMORY, "graph: out of memory");
        return -1;
    }
    t = &g->t[g->nt];
    memset(t, 0, sizeof *t);
    if (name && !(t->name = glc__strdup(name))) {
        fail(g, GLC_ERR_OUT_OF_MEMORY, "graph: out of memory");
        return -1;
    }
    t->kind = kind;
    t->dtype = dtype;
    t->rank = rank;
    memcpy(t->shape, shape, sizeof(int64_t) * (size_t)rank);
    t->producer = -1;
    return (int32_t)g->nt++;
}

int32_t glc__graph_add_tensor(glc_graph *g, glc__tkind kind, const char *name, glc_dtype dtype,
                              int rank, const int64_t *shape)
{
    return add_tensor(g, kind, name, dtype, rank, shape);
}

/* The most bytes a tensor may take at the variables' maxima, as buffers
 * (buffer.c): sizes beyond it cannot be allocated, and keeping them out
 * keeps every later size computation (arena offsets, byte ranges) far from
 * overflowing. */
#define MAX_TENSOR_BYTES ((size_t)PTRDIFF_MAX / 2)

static size_t leaf_bytes(const glc_graph *g, glc_dtype dtype, int rank, const int64_t *shape)
{
    glc__tensor t;
    int d;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.rank = rank;
    for (d = 0; d < rank; d++)
        t.shape[d] = glc__dim_value(g, shape[d], NULL);
    return glc__tensor_bytes(&t);
}

static glc_tensor leaf(glc_graph *g, glc__tkind kind, const char *what, const char *name,
                       glc_dtype dtype, int rank, const int64_t *shape)
{
    glc_tensor r;
    size_t i;
    int d;
    if (!g || g->status != GLC_OK)
        return no_tensor;
    if (!name || !*name)
        return fail(g, GLC_ERR_INVALID_ARG, "%s: a name is required", what);
    for (i = 0; i < g->nt; i++)
        if (g->t[i].name && strcmp(g->t[i].name, name) == 0)
            return fail(g, GLC_ERR_INVALID_ARG, "%s(\"%s\"): the name is taken", what, name);
    if (!glc__dtype_block(dtype) || rank < 1 || rank > GLC_MAX_DIMS || !shape)
        return fail(g, GLC_ERR_INVALID_ARG, "%s(\"%s\"): dtype %d, rank %d", what, name,
                    (int)dtype, rank);
    for (d = 0; d < rank; d++) {
        if (shape[d] == 0 || (shape[d] < 0 && -1 - shape[d] >= g->nvars))
            return fail(g, GLC_ERR_INVALID_ARG, "%s(\"%s\"): shape[%d] = %lld is neither >= 1 "
                        "nor a variable of this graph", what, name, d, (long long)shape[d]);
    }
    if (!glc_dtype_row_bytes(dtype, glc__dim_value(g, shape[rank - 1], NULL)))
        return fail(g, GLC_ERR_INVALID_ARG, "%s(\"%s\"): the last dim does not fit %s blocks",
                    what, name, glc_dtype_name(dtype));
    if (leaf_bytes(g, dtype, rank, shape) > MAX_TENSOR_BYTES)
        return fail(g, GLC_ERR_INVALID_ARG, "%s(\"%s\"): the shape overflows the address space",
                    what, name);
    r.id = add_tensor(g, kind, name, dtype, rank, shape);
    return r;
}

glc_tensor glc_graph_input(glc_graph *g, const char *name, glc_dtype dtype, int rank,
                           const int64_t *shape)
{
    return leaf(g, GLC__T_INPUT, "glc_graph_input", name, dtype, rank, shape);
}

glc_tensor glc_graph_param(glc_graph *g, const char *name, glc_dtype dtype, int rank,
                           const int64_t *shape)
{
    return leaf(g, GLC__T_PARAM, "glc_graph_param", name, dtype, rank, shape);
}

glc_tensor glc_graph_handle(glc_graph *g, const char *name, glc_dtype dtype, int rank,
                            const int64_t *shape)
{
    int d;
    for (d = 0; g && shape && d < rank && d < GLC_MAX_DIMS; d++)
        if (shape[d] < 0)
            return fail(g, GLC_ERR_INVALID_ARG,
                        "glc_graph_handle(\"%s\"): shape[%d] is a variable (handles keep one "
                        "shape; size them for the maximum)", name ? name : "(null)", d);
    return leaf(g, GLC__T_HANDLE, "glc_graph_handle", name, dtype, rank, shape);
}

static int valid(const glc_graph *g, glc_tensor t)
{
    return t.id >= 0 && (size_t)t.id < g->nt;
}

void glc_graph_output(glc_graph *g, const char *name, glc_tensor t)
{
    glc__goutput *o;
    size_t i;
    int32_t root;
    if (!g || g->status != GLC_OK)
        return;
    if (!name || !*name || !valid(g, t)) {
        fail(g, GLC_ERR_INVALID_ARG, "glc_graph_output(\"%s\"): %s", name ? name : "(null)",
             valid(g, t) ? "a name is required" : "no such tensor");
        return;
    }
    for (i = 0; i < g->nout; i++)
        if (strcmp(g->out[i].name, name) == 0) {
            fail(g, GLC_ERR_INVALID_ARG, "glc_graph_output(\"%s\"): the name is taken", name);
            return;
        }
    if ((root = glc__handle_stale(g, t.id)) >= 0) {
        fail(g, GLC_ERR_INVALID_ARG,
             "glc_graph_output(\"%s\"): the handle \"%s\" before a later write to it "
             "(writes are in place: name the tensor the last glc_set_rows returned)",
             name, g->t[root].name);
        return;
    }
    glc__use_device(g->dev);
    if (!grow((void **)&g->out, &g->outcap, g->nout, sizeof *g->out)) {
        fail(g, GLC_ERR_OUT_OF_MEMORY, "graph: out of memory");
        return;
    }
    o = &g->out[g->nout];
    if (!(o->name = glc__strdup(name))) {
        fail(g, GLC_ERR_OUT_OF_MEMORY, "graph: out of memory");
        return;
    }
    o->tensor = t.id;
    g->nout++;
}

int glc_tensor_shape(const glc_graph *g, glc_tensor t, int64_t shape[GLC_MAX_DIMS])
{
    int i;
    if (!g || !valid(g, t) || !shape)
        return 0;
    for (i = 0; i < GLC_MAX_DIMS; i++)
        shape[i] = i < g->t[t.id].rank ? g->t[t.id].shape[i] : 1;
    return g->t[t.id].rank;
}

glc_dtype glc_tensor_dtype(const glc_graph *g, glc_tensor t)
{
    return g && valid(g, t) ? g->t[t.id].dtype : (glc_dtype)0;
}

/* The scalar args of an op that may name a dim variable in a graph
 * (GLC_DIM_VAR), a bit per a->i[] slot: attention's kv_len. */
static unsigned sym_args(glc__op op)
{
    return op == GLC__OP_SDPA || op == GLC__OP_SDPA_DECODE ? 1u << GLC__I_SLOT(sdpa.kv_len) : 0u;
}

/* An op's args with the variables at vals (NULL: maxima): input tensors
 * from the graph, scalar args resolved, the output's dtype preset to odt. */
static void node_args(const glc_graph *g, glc__op op, const int32_t *ids, int nin, glc_dtype odt,
                      const glc__op_scalars *raw, const int64_t *vals, glc__op_args *a)
{
    int i;
    glc__op_args_init(a, op, nin, 1);
    /* every slot, used or not: the compiler compares args bytewise to see
     * whether a replan changed anything */
    memset(a->t, 0, sizeof a->t);
    for (i = 0; i < GLC__OP_NF; i++)
        a->f[i] = raw->f[i];
    for (i = 0; i < GLC__OP_NI; i++)
        a->i[i] = (sym_args(op) >> i & 1u) && raw->i[i] < 0 ? glc__dim_value(g, raw->i[i], vals)
                                                             : raw->i[i];
    for (i = 0; i <= nin; i++) {
        glc__tensor *t = &a->t[i];
        memset(t, 0, sizeof *t);
        if (i == nin) {
            t->present = 1;
            t->dtype = odt;
            continue;
        }
        if (ids[i] >= 0)
            glc__graph_tensor_at(g, ids[i], vals, t);
    }
}

void glc__graph_tensor_at(const glc_graph *g, int32_t id, const int64_t *vals, glc__tensor *t)
{
    int d;
    memset(t, 0, sizeof *t);
    t->present = 1;
    t->dtype = g->t[id].dtype;
    t->rank = g->t[id].rank;
    for (d = 0; d < GLC_MAX_DIMS; d++)
        t->shape[d] = d < t->rank ? glc__dim_value(g, g->t[id].shape[d], vals) : 1;
}

glc_status glc__graph_node_args(const glc_graph *g, size_t node, const int64_t *vals,
                                glc__op_args *a, char *err, size_t errlen)
{
    const glc__gnode *n = &g->n[node];
    node_args(g, n->args.op, n->tensor, n->args.nin, n->odt, &n->raw, vals, a);
    return glc__ops[n->args.op]->infer(a, err, errlen);
}

glc_tensor glc__graph_node(glc_graph *g, glc__op op, const int32_t *in, int nin, glc_dtype odt,
                           const glc__op_scalars *raw)
{
    const glc__op_desc *desc = glc__ops[op];
    glc__op_args a, probe;
    glc__op_scalars zero;
    int64_t vals[GLC__GRAPH_MAX_VARS], sym[GLC_MAX_DIMS];
    char err[400];
    glc__gnode *node;
    int i, v, d;
    int32_t out;
    glc_status st;
    if (!g || g->status != GLC_OK)
        return no_tensor;
    for (i = 0; i < nin; i++)
        if (in[i] != -1 && (in[i] < 0 || (size_t)in[i] >= g->nt))
            return fail(g, GLC_ERR_INVALID_ARG, "%s: input %d is not a tensor of this graph",
                        desc->name, i);
    /* a handle's writes are in place: a value of it from before a later
     * write is gone (the op would read the later rows) */
    for (i = 0; i < nin; i++) {
        int32_t root = in[i] >= 0 ? glc__handle_stale(g, in[i]) : -1;
        if (root >= 0)
            return fail(g, GLC_ERR_INVALID_ARG,
                        "%s: input %d is the handle \"%s\" before a later write to it (writes "
                        "are in place: read the tensor the last glc_set_rows returned, or copy "
                        "it before the write)",
                        desc->name, i, g->t[root].name);
    }
    if (!raw) {
        memset(&zero, 0, sizeof zero);
        raw = &zero;
    }
    for (i = 0; i < GLC__OP_NI; i++)
        if ((sym_args(op) >> i & 1u) && raw->i[i] < 0 && glc__dim_value(g, raw->i[i], NULL) == 0)
            return fail(g, GLC_ERR_INVALID_ARG, "%s: argument %d is %lld, not a variable of "
                        "this graph", desc->name, i, (long long)raw->i[i]);
    odt = odt ? odt : GLC_DTYPE_F32;
    node_args(g, op, in, nin, odt, raw, NULL, &a);
    err[0] = '\0';
    if ((st = desc->infer(&a, err, sizeof err)) != GLC_OK)
        return fail(g, st, "%s", err);
    if (glc__tensor_bytes(&a.t[nin]) > MAX_TENSOR_BYTES)
        return fail(g, GLC_ERR_INVALID_ARG, "%s: the output %s overflows the address space",
                    desc->name, glc__shape_str(&a.t[nin], err, sizeof err));
    /* which output dims follow a variable: infer again with it one lower */
    for (d = 0; d < GLC_MAX_DIMS; d++)
        sym[d] = a.t[nin].shape[d];
    for (v = 0; v < g->nvars; v++) {
        if (g->var[v].min == g->var[v].max)
            continue;
        for (i = 0; i < g->nvars; i++)
            vals[i] = g->var[i].max;
        vals[v] = g->var[v].max - 1;
        node_args(g, op, in, nin, odt, raw, vals, &probe);
        if (desc->infer(&probe, err, sizeof err) != GLC_OK)
            continue; /* only the maxima need to be valid here; runs re-check */
        for (d = 0; d < a.t[nin].rank; d++) {
            if (probe.t[nin].shape[d] == a.t[nin].shape[d])
                continue;
            if (a.t[nin].shape[d] != g->var[v].max || probe.t[nin].shape[d] != vals[v] ||
                sym[d] < 0)
                return fail(g, GLC_ERR_UNSUPPORTED,
                            "%s: output dim %d depends on variable %s in a way a plan cannot "
                            "express (only the variable itself)",
                            desc->name, d, g->var[v].name);
            sym[d] = GLC_DIM_VAR(v);
        }
    }
    glc__use_device(g->dev);
    if (!grow((void **)&g->n, &g->ncap, g->nn, sizeof *g->n))
        return fail(g, GLC_ERR_OUT_OF_MEMORY, "graph: out of memory");
    out = add_tensor(g, GLC__T_VALUE, NULL, a.t[nin].dtype, a.t[nin].rank, sym);
    if (out < 0)
        return no_tensor;
    g->t[out].producer = (int32_t)g->nn;
    node = &g->n[g->nn++];
    node->args = a;
    node->odt = odt;
    node->dead = 0;
    node->raw = *raw;
    for (i = 0; i < GLC__OP_MAX_TENSORS; i++)
        node->tensor[i] = i < nin ? in[i] : i == nin ? out : -1;
    {
        glc_tensor r;
        r.id = out;
        return r;
    }
}

glc_graph *glc__graph_clone(const glc_graph *g)
{
    glc_graph *c;
    size_t i;
    int v, ok = 1;
    glc__use_device(g->dev);
    if (!(c = glc__calloc(1, sizeof *c)))
        return NULL;
    *c = *g;
    c->t = NULL;
    c->n = NULL;
    c->out = NULL;
    c->nt = c->nn = c->nout = 0;
    c->tcap = c->ncap = c->outcap = 0;
    c->nvars = 0;
    c->t = glc__malloc((g->nt ? g->nt : 1) * sizeof *c->t);
    c->n = glc__malloc((g->nn ? g->nn : 1) * sizeof *c->n);
    c->out = glc__malloc((g->nout ? g->nout : 1) * sizeof *c->out);
    if (!c->t || !c->n || !c->out) {
        glc_graph_destroy(c);
        return NULL;
    }
    if (g->nn)
        memcpy(c->n, g->n, g->nn * sizeof *c->n);
    c->nn = c->ncap = g->nn;
    c->tcap = g->nt;
    c->outcap = g->nout;
    for (i = 0; i < g->nt; i++) {
        c->t[i] = g->t[i];
        c->t[i].name = NULL;
        c->nt++;
        if (g->t[i].name && !(c->t[i].name = glc__strdup(g->t[i].name)))
            ok = 0;
    }
    for (i = 0; i < g->nout; i++) {
        c->out[i] = g->out[i];
        c->out[i].name = NULL;
        c->nout++;
        if (!(c->out[i].name = glc__strdup(g->out[i].name)))
            ok = 0;
    }
    for (v = 0; v < g->nvars; v++) {
        c->var[v] = g->var[v];
        c->var[v].name = NULL;
        c->nvars++;
        if (!(c->var[v].name = glc__strdup(g->var[v].name)))
            ok = 0;
    }
    if (!ok) {
        glc_graph_destroy(c);
        return NULL;
    }
    return c;
}
