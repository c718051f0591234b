/*
 * Fusion passes over a plan's own copy of the graph (GL-free). Each pass
 * rewrites a pattern into one node whose kernel does the work of several,
 * and leaves the nodes it absorbed without consumers, so the compiler's
 * liveness drops them. A pattern fires only when the values it hides are
 * used by nothing else (one consumer, not a graph output), and the fused
 * node is checked by its op's rule before it replaces anything.
 *
 * Passes (in this order, each over the whole graph):
 *  - norm_mul:  mul(rms_norm(x), w) with w [D]          -> rms_norm(x, w)
 *  - swiglu:    mul(act(a), b), act a unary activation -> mul with act on a
 *  - mm_bias:   add(matmul(a, b), bias [N] f32)         -> matmul(a, b, bias)
 *  - mm_act:    act(matmul(a, b[, bias]))               -> matmul with act
 *  - mm_res:    add(x, matmul(..)), x f32 of the product's shape (either
 *               order)                                  -> matmul reading x
 *               as a 4th input, adding it last (a residual epilogue; dense
 *               matmul or matmul_q; devices with 5 SSBO blocks a shader,
 *               not the ES 3.1 minimum of 4). Before
 *               add_norm, so a decode layer's x + W o; rms_norm(..) becomes
 *               the matmul with its residual and a plain rms_norm
 *  - rope_rows: set_rows(cache, rope(x, pos), pos)      -> rope writing its
 *               rows into the cache at the positions (KV-cache append)
 *  - add_norm:  h = x + r; rms_norm(h, w)               -> add_rms_norm writing
 *               h and the norm into one packed value (both become aliases
 *               of it: compile.c places them inside it)
 *  - qkv:       2-3 transposed matmuls of one input with weights of their
 *               own (Q, K, V)                            -> one matmul over
 *               the weights packed as one param, writing the outputs as
 *               parts of one packed value
 *  - glu_out:   act(gate) * up where gate | up is such a pack (w1 | w3)
 *                                                       -> the packed matmul
 *               with a SwiGLU epilogue writing the product (decode shapes)
 *  - glu:       matmul(act(gate) * up) where gate | up is such a pack (w1 | w3)
 *                                                       -> the matmul reads
 *               the pack and gates its input as it loads it (decode shapes)
 *  - sdpa_rope: sdpa_decode(rope_qkv's q, caches) run right after it
 *                                                       -> sdpa_decode that
 *               rotates q as it reads it and writes the caches' rows itself
 *  - rows_first: get_rows(rms_norm(x, w), ids)          -> rms_norm(get_rows(x,
 *               ids), w): the norm of the picked rows only (then mm_norm's)
 *  - mm_norm (last): matmul[_q](rms_norm(x, w), W) at decode shapes (<= 8 rows,
 *               K <= 8192) where every reader of the norm is such a product
 *               (after qkv and glu: the packed projections are its one
 *               reader; unpacked ones each take it)
 *                                                       -> the matmul reads
 *               x and w and computes each row's norm itself: the norm's
 *               dispatch (and its barrier) goes
 *  - qkv_rope (after mm_norm): sdpa_rope's node reading q, k and v from
 *               the one-row products run just before it (packed q | k | v,
 *               or apart), on a target that plans them with a mat-vec
 *               kernel (matvec, matmul_q's split variant)
 *                                                       -> the products
 *               with a rope epilogue (q rotated, the caches' rows written)
 *               and a plain sdpa_decode over the caches
 * The later node of a pattern takes the fused op (its output tensor stays
 * the one the rest of the graph reads); inputs all come from before the
 * earlier node, so graph order stays topological.
 */
#include "fuse.h"

#include "alloc.h"

#include <stdio.h>
#include <string.h>

typedef struct fctx {
    glc_graph *g;
    uint32_t *uses; /* per tensor: consumer nodes, + 1 when a graph output */
    size_t align;   /* SSBO offset alignment: where a packed part may start */
    uint32_t ssbo;  /* SSBO blocks a compute shader may bind */
    uint64_t max_bytes; /* the most bytes a binding may take: no pack is larger */
    const glc__target *tg; /* which kernels the target runs (qkv_rope) */
    int fused;
} fctx;

static int32_t out_of(const glc__gnode *n) { return n->tensor[n->args.nin]; }

static void count_uses(fctx *c)
{
    glc_graph *g = c->g;
    size_t i;
    int j;
    memset(c->uses, 0, (g->nt ? g->nt : 1) * sizeof *c->uses);
    for (i = 0; i < g->nn; i++)
        for (j = 0; j < g->n[i].args.nin && !g->n[i].dead; j++)
            if (g->n[i].tensor[j] >= 0)
                c->uses[g->n[i].tensor[j]]++;
    for (i = 0; i < g->nout; i++)
        c->uses[g->out[i].tensor]++;
    for (i = 0; i < g->nt; i++)
        if (g->t[i].alias)
            c->uses[g->t[i].alias - 1] += 2; /* read through a view: not ours to hide */
}

/* The node producing tensor t when it is op `op`, used only once. A view
 * (a reshape, a part of a packed value: any alias) is a boundary: its
 * producer wrote other indices (another shape, another offset), so a
 * consumer fused with it would read the producer's elements at the view's
 * indices. */
static glc__gnode *single_use_producer(fctx *c, int32_t t, glc__op op)
{
    const glc__gtensor *gt;
    if (t < 0)
        return NULL;
    gt = &c->g->t[t];
    if (gt->kind != GLC__T_VALUE || gt->producer < 0 || gt->alias || c->uses[t] != 1)
        return NULL;
    return c->g->n[gt->producer].args.op == op ? &c->g->n[gt->producer] : NULL;
}

/* 1 when node idx (a fused candidate in place) is accepted by its op's
 * rule at every variable value the plan may be re-planned for, sampled:
 * each variable at its minimum with the others at their maxima, and all at
 * their minima (the maxima are the caller's check). With same_out, its
 * output must also be its output tensor's shape at those values (the node
 * it replaces made that tensor). */
static int holds_over_vars(const fctx *c, size_t idx, int same_out)
{
    const glc_graph *g = c->g;
    int64_t vals[GLC__GRAPH_MAX_VARS];
    glc__op_args a;
    glc__tensor t;
    char err[256];
    int v, i;
    for (v = g->nvars ? -1 : 0; v < g->nvars; v++) {
        for (i = 0; i < g->nvars; i++)
            vals[i] = v < 0 || i == v ? g->var[i].min : g->var[i].max;
        if (glc__graph_node_args(g, idx, vals, &a, err, sizeof err) != GLC_OK)
            return 0;
        glc__graph_tensor_at(g, out_of(&g->n[idx]), vals, &t);
        if (same_out && !glc__same_shape(&a.t[a.nin], &t))
            return 0;
    }
    return 1;
}

/* Replaces node n by `cand` (same output tensor) when the op's rule accepts
 * it at the variables' maxima and over their range; returns 1 if it did. */
static int replace(fctx *c, glc__gnode *n, glc__gnode *cand)
{
    glc__gnode keep = *n;
    glc__op_args a;
    char err[256];
    size_t idx = (size_t)(n - c->g->n);
    *n = *cand;
    if (glc__graph_node_args(c->g, idx, NULL, &a, err, sizeof err) != GLC_OK ||
        a.t[a.nin].dtype != c->g->t[out_of(n)].dtype ||
        !glc__same_shape(&a.t[a.nin], &keep.args.t[keep.args.nin]) ||
        !holds_over_vars(c, idx, 1)) {
        *n = keep;
        return 0;
    }
    n->args = a;
    c->fused++;
    count_uses(c);
    return 1;
}

/* A node for `op` with inputs in[0..nin) and output `out`, scalar args
 * as `like` was given them (its raw) unless overwritten by the caller. */
static glc__gnode make(glc__op op, const int32_t *in, int nin, int32_t out, glc_dtype odt,
                       const glc__gnode *like)
{
    glc__gnode n;
    int i;
    memset(&n, 0, sizeof n);
    glc__op_args_init(&n.args, op, nin, 1);
    n.raw = like->raw;
    for (i = 0; i < GLC__OP_MAX_TENSORS; i++)
        n.tensor[i] = i < nin ? in[i] : i == nin ? out : -1;
    n.odt = odt;
    return n;
}

static int is_vector_of(const glc_graph *g, int32_t t, int64_t len, int f32_only)
{
    const glc__gtensor *gt = &g->t[t];
    return gt->rank == 1 && gt->shape[0] == len &&
           (f32_only ? gt->dtype == GLC_DTYPE_F32 : glc__is_float(gt->dtype));
}

static int64_t last_dim(const glc_graph *g, int32_t t) { return g->t[t].shape[g->t[t].rank - 1]; }

/* mul(rms_norm(x), w) -> rms_norm(x, w) */
static void norm_mul(fctx *c, glc__gnode *m)
{
    int s;
    if (m->args.op != GLC__OP_MUL || m->args.bin.act)
        return;
    for (s = 0; s < 2; s++) {
        glc__gnode *r = single_use_producer(c, m->tensor[s], GLC__OP_RMS_NORM), cand;
        int32_t w = m->tensor[1 - s], in[2];
        if (!r || r->tensor[1] >= 0 || !is_vector_of(c->g, w, last_dim(c->g, m->tensor[s]), 0))
            continue;
        in[0] = r->tensor[0];
        in[1] = w;
        cand = make(GLC__OP_RMS_NORM, in, 2, out_of(m), m->odt, r);
        if (replace(c, m, &cand))
            return;
    }
}

/* mul(act(a), b) -> mul with act applied to a in the kernel */
static void swiglu(fctx *c, glc__gnode *m)
{
    int s;
    if (m->args.op != GLC__OP_MUL || m->args.bin.act)
        return;
    for (s = 0; s < 2; s++) {
        glc__gnode *u = single_use_producer(c, m->tensor[s], GLC__OP_UNARY), cand;
        int32_t in[2];
        if (!u || u->odt != GLC_DTYPE_F32)
            continue; /* a 16-bit activation output rounds: fusing would not */
        in[0] = u->tensor[0];
        in[1] = m->tensor[1 - s];
        cand = make(GLC__OP_MUL, in, 2, out_of(m), m->odt, u);
        cand.raw.bin.act = u->args.unary.op;
        cand.raw.bin.act_param = u->args.unary.param;
        if (replace(c, m, &cand))
            return;
    }
}

/* set_rows(cache, rope(x, pos), pos) -> rope_rows: the rotated rows are
 * written straight into the cache (a KV-cache append in one dispatch) */
static void rope_rows(fctx *c, glc__gnode *n)
{
    glc__gnode *r, cand;
    int32_t in[4];
    if (n->args.op != GLC__OP_SET_ROWS)
        return;
    r = single_use_producer(c, n->tensor[0], GLC__OP_ROPE);
    if (!r || r->tensor[1] != n->tensor[1] || c->g->t[r->tensor[0]].rank != 3)
        return;
    in[0] = r->tensor[0];
    in[1] = r->tensor[1];
    in[2] = r->tensor[2];
    in[3] = n->tensor[2];
    cand = make(GLC__OP_ROPE_ROWS, in, 4, out_of(n), n->odt, r);
    replace(c, n, &cand);
}

static glc__gnode *matmul_producer(fctx *c, int32_t t)
{
    glc__gnode *p = single_use_producer(c, t, GLC__OP_MATMUL);
    return p ? p : single_use_producer(c, t, GLC__OP_MATMUL_Q);
}

/* add(matmul(a, b), bias) -> matmul(a, b, bias) */
static void mm_bias(fctx *c, glc__gnode *d)
{
    int s;
    if (d->args.op != GLC__OP_ADD || d->args.bin.act || d->odt != GLC_DTYPE_F32)
        return;
    for (s = 0; s < 2; s++) {
        glc__gnode *mm = matmul_producer(c, d->tensor[s]), cand;
        int32_t bias = d->tensor[1 - s], in[3];
        if (!mm || mm->tensor[2] >= 0 || mm->args.mm.act ||
            !is_vector_of(c->g, bias, last_dim(c->g, d->tensor[s]), 1))
            continue;
        in[0] = mm->tensor[0];
        in[1] = mm->tensor[1];
        in[2] = bias;
        cand = make(mm->args.op, in, 3, out_of(d), GLC_DTYPE_F32, mm);
        if (replace(c, d, &cand)) {
            mm->dead = 1; /* its input's one reader is the fused node (mm_norm, glu count) */
            count_uses(c);
            return;
        }
    }
}

/* act(matmul(..)) -> matmul with act in its epilogue */
static void mm_act(fctx *c, glc__gnode *u)
{
    glc__gnode *mm, cand;
    if (u->args.op != GLC__OP_UNARY || u->odt != GLC_DTYPE_F32)
        return;
    mm = matmul_producer(c, u->tensor[0]);
    if (!mm || mm->args.mm.act)
        return;
    cand = make(mm->args.op, mm->tensor, 3, out_of(u), GLC_DTYPE_F32, mm);
    cand.raw.mm.act = u->args.unary.op;
    cand.raw.mm.act_param = u->args.unary.param;
    if (replace(c, u, &cand)) {
        mm->dead = 1; /* as in mm_bias */
        count_uses(c);
    }
}

/* add(x, matmul(..)) -> matmul(.., x): out = x + act(a B + bias), the
 * same f32 sum as the add's (its operands commute exactly) */
static void mm_res(fctx *c, glc__gnode *d)
{
    int s;
    if (d->args.op != GLC__OP_ADD || d->args.bin.act || d->odt != GLC_DTYPE_F32 || c->ssbo < 5)
        return; /* the kernels bind a, b, out, bias (or a stand-in) and the residual */
    for (s = 0; s < 2; s++) {
        glc__gnode *mm = matmul_producer(c, d->tensor[s]), cand;
        int32_t x = d->tensor[1 - s], in[4];
        const glc__gtensor *xt = &c->g->t[x], *pt = &c->g->t[d->tensor[s]];
        if (!mm || mm->args.nin != 3 || mm->args.mm.seg[0] || xt->dtype != GLC_DTYPE_F32 ||
            xt->rank != pt->rank || memcmp(xt->shape, pt->shape, sizeof xt->shape[0] * (size_t)xt->rank))
            continue;
        in[0] = mm->tensor[0];
        in[1] = mm->tensor[1];
        in[2] = mm->tensor[2];
        in[3] = x;
        cand = make(mm->args.op, in, 4, out_of(d), GLC_DTYPE_F32, mm);
        if (replace(c, d, &cand)) {
            mm->dead = 1; /* its inputs' uses are the fused node's now (the glu pass counts) */
            count_uses(c);
            return;
        }
    }
}

/* h = add(x, r); n = rms_norm(h, w) -> one add_rms_norm node writing h
 * and n into one packed value (h at 0, n at noff: both aliases of it).
 * The fused node takes the add's place, so h is ready for every reader it
 * had. 4 bindings: x, r, w, the pack. */
static glc_status add_norm(fctx *c, size_t ni)
{
    glc_graph *g = c->g;
    glc__gnode *r = &g->n[ni], *d, cand;
    glc__op_args a;
    int32_t h, n, pack, in[3];
    int64_t numel, noff, shape[1];
    size_t di, align_el = c->align / 4;
    char err[256];
    if (r->dead || r->args.op != GLC__OP_RMS_NORM || r->odt != GLC_DTYPE_F32)
        return GLC_OK;
    h = r->tensor[0];
    n = out_of(r);
    if (g->t[h].kind != GLC__T_VALUE || g->t[h].producer < 0 || g->t[h].alias || g->t[n].alias)
        return GLC_OK;
    di = (size_t)g->t[h].producer;
    d = &g->n[di];
    if (d->dead || d->args.op != GLC__OP_ADD || d->args.bin.act || d->odt != GLC_DTYPE_F32 ||
        g->t[d->tensor[0]].dtype != GLC_DTYPE_F32 || g->t[d->tensor[1]].dtype != GLC_DTYPE_F32)
        return GLC_OK;
    if (r->tensor[1] >= 0 && g->t[r->tensor[1]].producer >= (int32_t)di)
        return GLC_OK; /* the weight is made after the add */
    numel = glc__numel(&d->args.t[2]);
    noff = (int64_t)((((size_t)numel + align_el - 1) / align_el) * align_el);
    noff += noff % 2;
    in[0] = d->tensor[0];
    in[1] = d->tensor[1];
    in[2] = r->tensor[1];
    shape[0] = noff + numel;
    pack = glc__graph_add_tensor(g, GLC__T_VALUE, NULL, GLC_DTYPE_F32, 1, shape);
    if (pack < 0)
        return GLC_ERR_OUT_OF_MEMORY;
    r = &g->n[ni]; /* (nodes do not move; tensors may have) */
    d = &g->n[di];
    cand = make(GLC__OP_ADD_RMS_NORM, in, 3, pack, GLC_DTYPE_F32, r);
    cand.raw.norm.at = noff;
    {
        glc__gnode keep = *d;
        *d = cand;
        if (glc__graph_node_args(g, di, NULL, &a, err, sizeof err) != GLC_OK ||
            !holds_over_vars(c, di, 0)) {
            *d = keep;
            g->nt--; /* the pack was the last tensor added */
            return GLC_OK;
        }
        d->args = a;
    }
    r->dead = 1;
    g->t[pack].producer = (int32_t)di;
    g->t[h].alias = pack + 1;
    g->t[h].alias_offset = 0;
    g->t[n].alias = pack + 1;
    g->t[n].alias_offset = (size_t)noff * 4;
    g->t[n].producer = (int32_t)di;
    c->fused++;
    return GLC_OK;
}

/* One member of a Q/K/V group: a transposed matmul with its own weight
 * (and bias) params, no epilogue yet. */
static int qkv_member(const fctx *c, const glc__gnode *n)
{
    const glc_graph *g = c->g;
    int32_t b = n->tensor[1], bias = n->tensor[2];
    if (n->dead || (n->args.op != GLC__OP_MATMUL && n->args.op != GLC__OP_MATMUL_Q) ||
        (n->args.op == GLC__OP_MATMUL && !n->args.mm.transpose_b) || n->args.mm.act ||
        n->args.mm.seg[0] || n->args.nin != 3 ||
        n->odt != GLC_DTYPE_F32 || g->t[out_of(n)].alias)
        return 0;
    if (g->t[b].kind != GLC__T_PARAM || g->t[b].rank != 2 || g->t[b].alias || c->uses[b] != 1)
        return 0;
    return bias < 0 || (g->t[bias].kind == GLC__T_PARAM && !g->t[bias].alias &&
                        c->uses[bias] == 1);
}

/* "a+b+c" of the members' param names */
static void joined(const glc_graph *g, const size_t *m, int nm, int slot, char *buf, size_t len)
{
    int i;
    buf[0] = '\0';
    for (i = 0; i < nm; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? "+" : "", g->t[g->n[m[i]].tensor[slot]].name);
    }
}

/* Matmuls reading one a, each with weights of its own (the Q, K and V
 * projections): one dispatch over the weights packed into one param, its
 * output columns written as up to three matrices packed into one value.
 * Weights, biases and outputs become aliases of the packs, so users still
 * set wq, wk, wv and later ops still read q, k, v. The fused node takes
 * the first member's place. */
static glc_status qkv(fctx *c, size_t first)
{
    glc_graph *g = c->g;
    glc__gnode *f = &g->n[first], cand, keep;
    glc__op_args a;
    size_t m[3], j, nt0 = g->nt, rowb;
    int nm = 1, i, has_bias;
    int64_t n[3], ntot = 0, mmax, off[3], shape[GLC_MAX_DIMS], k;
    int32_t wpack, bpack = -1, opack, in[3];
    glc_dtype dt;
    char name[256], err[256];
    if (!qkv_member(c, f))
        return GLC_OK;
    dt = g->t[f->tensor[1]].dtype;
    k = g->t[f->tensor[1]].shape[1];
    has_bias = f->tensor[2] >= 0;
    m[0] = first;
    for (j = first + 1; j < g->nn && nm < 3; j++) {
        const glc__gnode *o = &g->n[j];
        if (o->tensor[0] == f->tensor[0] && o->args.op == f->args.op && qkv_member(c, o) &&
            g->t[o->tensor[1]].dtype == dt && g->t[o->tensor[1]].shape[1] == k &&
            (o->tensor[2] >= 0) == has_bias)
            m[nm++] = j;
    }
    if (nm < 2)
        return GLC_OK;
    mmax = glc__numel(&f->args.t[3]) / f->args.t[3].shape[f->args.t[3].rank - 1];
    for (i = 0; i < nm; i++) {
        n[i] = g->t[g->n[m[i]].tensor[1]].shape[0];
        off[i] = mmax * ntot; /* where segment i starts in the output pack */
        ntot += n[i];
        if ((size_t)off[i] * 4 % c->align)
            return GLC_OK; /* a part would start off the binding alignment */
    }
    rowb = glc_dtype_row_bytes(dt, k);
    if ((uint64_t)rowb * (uint64_t)ntot > c->max_bytes ||
        (uint64_t)(off[nm - 1] + mmax * n[nm - 1]) * 4 > c->max_bytes)
        return GLC_OK; /* the pack would not fit a binding (split params: its pieces) */
    /* the packs: weights [ntot, K], biases [ntot], output [.., M, ntot] */
    joined(g, m, nm, 1, name, sizeof name);
    shape[0] = ntot;
    shape[1] = k;
    wpack = glc__graph_add_tensor(g, GLC__T_PARAM, name, dt, 2, shape);
    if (has_bias && wpack >= 0) {
        joined(g, m, nm, 2, name, sizeof name);
        bpack = glc__graph_add_tensor(g, GLC__T_PARAM, name, GLC_DTYPE_F32, 1, shape);
    }
    f = &g->n[first];
    memcpy(shape, g->t[out_of(f)].shape, sizeof shape);
    shape[g->t[out_of(f)].rank - 1] = ntot;
    opack = wpack < 0 || (has_bias && bpack < 0)
                ? -1
                : glc__graph_add_tensor(g, GLC__T_VALUE, NULL, GLC_DTYPE_F32,
                                        g->t[out_of(f)].rank, shape);
    if (opack < 0)
        return GLC_ERR_OUT_OF_MEMORY;
    in[0] = f->tensor[0];
    in[1] = wpack;
    in[2] = bpack;
    cand = make(f->args.op, in, 3, opack, GLC_DTYPE_F32, f);
    cand.raw.mm.transpose_b = f->args.op == GLC__OP_MATMUL ? 1 : 0;
    if (mmax > 1) { /* one row: the segments are simply consecutive */
        cand.raw.mm.seg[0] = n[0];
        cand.raw.mm.seg[1] = nm > 2 ? n[0] + n[1] : ntot; /* 2 members: no third segment */
        cand.raw.mm.seg[2] = off[1];
        cand.raw.mm.seg[3] = nm > 2 ? off[2] : off[1] + mmax * n[1];
    }
    keep = *f;
    *f = cand;
    if (glc__graph_node_args(g, first, NULL, &a, err, sizeof err) != GLC_OK ||
        !holds_over_vars(c, first, 0)) {
        *f = keep;
        while (g->nt > nt0)
            glc__free(g->t[--g->nt].name);
        return GLC_OK;
    }
    f->args = a;
    g->t[wpack].packed = 1;
    if (bpack >= 0)
        g->t[bpack].packed = 1;
    g->t[opack].packed = 1;
    g->t[opack].producer = (int32_t)first;
    for (i = 0; i < nm; i++) {
        glc__gnode *o = i ? &g->n[m[i]] : &keep;
        int32_t out = out_of(o);
        g->t[out].alias = opack + 1;
        g->t[out].alias_offset = (size_t)off[i] * 4;
        g->t[out].producer = (int32_t)first;
        g->t[o->tensor[1]].alias = wpack + 1;
        g->t[o->tensor[1]].alias_offset = (size_t)(off[i] / (mmax ? mmax : 1)) * rowb;
        if (bpack >= 0) {
            g->t[o->tensor[2]].alias = bpack + 1;
            g->t[o->tensor[2]].alias_offset = (size_t)(off[i] / (mmax ? mmax : 1)) * 4;
        }
        if (i)
            g->n[m[i]].dead = 1;
    }
    c->fused++;
    count_uses(c);
    return GLC_OK;
}

/* 1 when node n will run: not absorbed, and its output read, a graph
 * output or persistent state (a node a pass left without consumers is
 * dropped by the compiler). */
static int runs(const fctx *c, const glc__gnode *n)
{
    size_t off;
    int32_t out = out_of(n);
    return !n->dead && (c->uses[out] || c->g->t[glc__alias_root(c->g, out, &off)].kind == GLC__T_HANDLE);
}

/* The uses of tensor t (count_uses) less reads by nodes that will not
 * run (an activation a pass folded into its consumer stays in the graph,
 * unread). */
static uint32_t live_uses(const fctx *c, int32_t t)
{
    uint32_t n = c->uses[t];
    size_t i;
    int j;
    for (i = 0; i < c->g->nn; i++)
        for (j = 0; j < c->g->n[i].args.nin; j++)
            if (c->g->n[i].tensor[j] == t && !c->g->n[i].dead && !runs(c, &c->g->n[i]))
                n--;
    return n;
}

#define GLU_MAX_ROWS 8 /* glu_out and glu: decode shapes */

/* mul(act(gate), up) where gate and up are the halves of a pack the qkv
 * pass made of two matmuls (w1 | w3, in either order, equal widths) and read by
 * nothing else -> the packed matmul with a SwiGLU epilogue (mm.glu_out)
 * writing the mul's output: a subgroup or invocation owns a gate row and
 * its up row, so act(gate) * up is computed once per output, the pack is
 * never stored and the elementwise dispatch goes. Decode shapes (the
 * kernels: op_matmul.c's matvec and direct, matmul_q); before glu, which
 * would otherwise fold the same mul into the next matmul's loads. */
static void glu_out(fctx *c, size_t ui)
{
    glc_graph *g = c->g;
    glc__gnode *u = &g->n[ui], *p, cand, keep;
    glc__op_args a;
    glc__tensor gt;
    int32_t gate, up, pack, out;
    int64_t half, mmax;
    size_t pi, second;
    char err[256];
    if (u->dead || !runs(c, u) || u->args.op != GLC__OP_MUL || u->args.bin.act < GLC_UNARY_GELU ||
        u->args.bin.act > GLC_UNARY_RELU)
        return; /* (a mul nothing reads: its own reads are not live_uses', and the
                 * pack's producer would leave the pack to write it) */
    gate = u->tensor[0];
    up = u->tensor[1];
    out = out_of(u);
    pack = g->t[gate].alias - 1;
    if (pack < 0 || !g->t[pack].packed || g->t[up].alias != pack + 1 ||
        g->t[pack].producer < 0 || g->t[out].alias || g->t[out].kind != GLC__T_VALUE ||
        live_uses(c, gate) != 1 || live_uses(c, up) != 1 || c->uses[pack] != 4)
        return; /* the pack holds exactly these two parts, each read once */
    pi = (size_t)g->t[pack].producer;
    p = &g->n[pi];
    if (p->dead || out_of(p) != pack || p->args.nin != 3 || p->args.mm.act || p->args.mm.glu ||
        (p->args.op != GLC__OP_MATMUL && p->args.op != GLC__OP_MATMUL_Q))
        return;
    half = g->t[p->tensor[1]].shape[0] / 2;
    mmax = glc__numel(&p->args.t[3]) / (2 * (half ? half : 1));
    second = (size_t)(mmax * half) * 4; /* where the pack's second part starts */
    if (half < 1 || g->t[p->tensor[1]].shape[0] != 2 * half || last_dim(g, pack) != 2 * half ||
        last_dim(g, gate) != half || last_dim(g, up) != half || mmax > GLU_MAX_ROWS ||
        !((g->t[gate].alias_offset == 0 && g->t[up].alias_offset == second) ||
          (g->t[up].alias_offset == 0 && g->t[gate].alias_offset == second)))
        return; /* the two halves of the weight rows, in either order */
    glc__graph_tensor_at(g, gate, NULL, &gt);
    if (!glc__same_shape(&gt, &u->args.t[0]) || glc__numel(&gt) / half > GLU_MAX_ROWS)
        return;
    cand = make(p->args.op, p->tensor, 3, out, GLC_DTYPE_F32, p);
    memset(cand.raw.mm.seg, 0, sizeof cand.raw.mm.seg);
    cand.raw.mm.glu_out = u->args.bin.act;
    cand.raw.mm.glu_up_first = g->t[up].alias_offset == 0;
    cand.raw.mm.act_param = u->args.bin.act_param;
    keep = *p;
    *p = cand;
    if (glc__graph_node_args(g, pi, NULL, &a, err, sizeof err) != GLC_OK ||
        !glc__same_shape(&a.t[a.nin], &u->args.t[u->args.nin]) || !holds_over_vars(c, pi, 1)) {
        *p = keep;
        return;
    }
    p->args = a;
    g->t[out].producer = (int32_t)pi;
    g->n[ui].dead = 1;
    c->fused++;
    count_uses(c);
}

/* matmul(act(gate) * up, W) where gate and up are the two halves of one
 * packed value (the qkv pass packs w1 | w3): the matmul reads the pack and
 * applies act(gate) * up as it loads its input, and the elementwise
 * dispatch goes. Decode shapes only (at most 8 rows): the kernels that
 * read a gated input are the mat-vec and the direct one. */
static void glu(fctx *c, glc__gnode *m)
{
    glc_graph *g = c->g;
    glc__gnode *u, cand;
    glc__tensor gt;
    int32_t gate, up, pack, in[4];
    int64_t k;
    if (m->dead || m->args.op != GLC__OP_MATMUL || !m->args.mm.transpose_b ||
        m->args.mm.seg[0] || m->args.mm.glu || g->t[m->tensor[1]].rank != 2)
        return;
    u = single_use_producer(c, m->tensor[0], GLC__OP_MUL);
    if (!u || u->args.bin.act < GLC_UNARY_GELU || u->args.bin.act > GLC_UNARY_RELU)
        return;
    gate = u->tensor[0];
    up = u->tensor[1];
    pack = g->t[gate].alias - 1;
    k = g->t[m->tensor[1]].shape[1];
    if (pack < 0 || !g->t[pack].packed || g->t[up].alias != pack + 1 ||
        g->t[pack].shape[g->t[pack].rank - 1] != 2 * k)
        return; /* the halves are the qkv pass's parts of one pack, not views of them */
    glc__graph_tensor_at(g, gate, NULL, &gt);
    if (!glc__same_shape(&gt, &u->args.t[1]) || glc__numel(&gt) / k > GLU_MAX_ROWS)
        return;
    in[0] = pack;
    in[1] = m->tensor[1];
    in[2] = m->tensor[2];
    in[3] = m->tensor[3]; /* a residual (mm_res), when nin is 4 */
    cand = make(GLC__OP_MATMUL, in, m->args.nin, out_of(m), GLC_DTYPE_F32, m);
    cand.raw.mm.glu = u->args.bin.act;
    cand.raw.mm.glu_gate = (int64_t)(g->t[gate].alias_offset / 4);
    cand.raw.mm.glu_up = (int64_t)(g->t[up].alias_offset / 4);
    replace(c, m, &cand);
}

/* get_rows(rms_norm(x, w), ids) -> rms_norm(get_rows(x, ids), w): a norm
 * of each row commutes with picking rows, and after the swap it reads only
 * the rows picked (a prompt's last row for its logits) and, one to a few
 * of them, becomes the next matmul's prologue (mm_norm, after this). x f32
 * [R, D] (R may be a variable), both results f32; ids made before the norm
 * (graph order stays topological). The get_rows node takes the norm's
 * place, the norm the get_rows'. */
static void rows_first(fctx *c, size_t gi)
{
    glc_graph *g = c->g;
    glc__gnode *gr = &g->n[gi], *r, cg, cn, keep_r, keep_g;
    glc__op_args ag, an;
    glc__tensor ot;
    int32_t in[2], sel, nt0 = (int32_t)g->nt;
    int64_t shape[GLC_MAX_DIMS];
    size_t ri;
    char err[256];
    if (gr->dead || gr->args.op != GLC__OP_GET_ROWS || gr->odt != GLC_DTYPE_F32 ||
        !(r = single_use_producer(c, gr->tensor[0], GLC__OP_RMS_NORM)) ||
        r->odt != GLC_DTYPE_F32 || g->t[r->tensor[0]].dtype != GLC_DTYPE_F32 ||
        g->t[r->tensor[0]].rank != 2 || g->t[gr->tensor[1]].producer >= (int32_t)(r - g->n))
        return;
    ri = (size_t)(r - g->n);
    glc__graph_tensor_at(g, out_of(gr), NULL, &ot);
    memcpy(shape, g->t[out_of(gr)].shape, sizeof shape); /* adding a tensor may move g->t */
    sel = glc__graph_add_tensor(g, GLC__T_VALUE, NULL, GLC_DTYPE_F32, g->t[out_of(gr)].rank, shape);
    if (sel < 0)
        return;
    r = &g->n[ri]; /* (adding a tensor leaves the nodes where they are) */
    gr = &g->n[gi];
    in[0] = r->tensor[0];
    in[1] = gr->tensor[1];
    cg = make(GLC__OP_GET_ROWS, in, 2, sel, GLC_DTYPE_F32, gr);
    in[0] = sel;
    in[1] = r->tensor[1];
    cn = make(GLC__OP_RMS_NORM, in, 2, out_of(gr), GLC_DTYPE_F32, r);
    keep_r = *r;
    keep_g = *gr;
    *r = cg;
    *gr = cn;
    if (glc__graph_node_args(g, ri, NULL, &ag, err, sizeof err) != GLC_OK ||
        glc__graph_node_args(g, gi, NULL, &an, err, sizeof err) != GLC_OK ||
        !glc__same_shape(&an.t[an.nin], &ot) || !holds_over_vars(c, ri, 0) ||
        !holds_over_vars(c, gi, 1)) {
        *r = keep_r;
        *gr = keep_g;
        while ((int32_t)g->nt > nt0)
            glc__free(g->t[--g->nt].name);
        return;
    }
    r->args = ag;
    gr->args = an;
    g->t[sel].producer = (int32_t)ri;
    g->t[out_of(gr)].producer = (int32_t)gi;
    g->t[keep_r.tensor[keep_r.args.nin]].producer = -1; /* the whole table's norm: gone */
    c->fused++;
    count_uses(c);
}

/* matmul(rms_norm(x, w), W) -> matmul(x, W, .., w) with the norm as its
 * prologue (op_matmul.c, op_quant.c: NORM). A dense transposed matmul with
 * no gated input, or a matmul_q; the norm's weight f32 [K]; decode shapes
 * only, where the norm's dispatch costs more than each group recomputing
 * it. Every reader of the norm must be such a product (up to
 * NORM_MAX_READERS: Q, K and V projections left unpacked, e.g. weights of
 * different types, as in a Q4_K_M file); each takes the prologue, and the
 * norm's dispatch goes once all have. */
#define NORM_MAX_ROWS 8
#define NORM_MAX_K 8192
#define NORM_MAX_READERS 4

/* 1 when node m may take a norm prologue over its input a */
static int norm_taker(const fctx *c, const glc__gnode *m)
{
    return !m->dead && m->args.nin <= 4 && c->ssbo >= 6 &&
           (m->args.op == GLC__OP_MATMUL_Q ||
            (m->args.op == GLC__OP_MATMUL && m->args.mm.transpose_b && !m->args.mm.glu)) &&
           c->g->t[m->tensor[1]].rank == 2; /* the op first: other ops may have no tensor[1] */
}

static void mm_norm(fctx *c, glc__gnode *m)
{
    glc_graph *g = c->g;
    glc__gnode *r, cand;
    const glc__gtensor *gt;
    glc__tensor xt;
    size_t readers[NORM_MAX_READERS], i;
    int32_t in[5], t = m->tensor[0];
    int64_t k;
    int nr = 0, j, all = 1;
    if (!norm_taker(c, m) || t < 0)
        return;
    gt = &g->t[t];
    if (gt->kind != GLC__T_VALUE || gt->producer < 0 || gt->alias ||
        g->n[gt->producer].args.op != GLC__OP_RMS_NORM)
        return;
    r = &g->n[gt->producer];
    k = last_dim(g, t);
    if (r->tensor[1] < 0 || !is_vector_of(g, r->tensor[1], k, 1) || k % 4 || k > NORM_MAX_K ||
        g->t[r->tensor[0]].dtype != GLC_DTYPE_F32 || last_dim(g, r->tensor[0]) != k)
        return;
    glc__graph_tensor_at(g, r->tensor[0], NULL, &xt);
    if (glc__numel(&xt) / k > NORM_MAX_ROWS)
        return;
    /* its readers: each a taker reading it as a only (and no graph output,
     * no view: their uses would be more than the readers) */
    for (i = 0; i < g->nn; i++) {
        const glc__gnode *n = &g->n[i];
        int reads = 0;
        for (j = 0; j < n->args.nin && !n->dead; j++) {
            if (n->tensor[j] != t)
                continue;
            if (j != 0 || !norm_taker(c, n) || g->t[n->tensor[1]].shape[1] != k)
                return; /* read otherwise: the norm stays */
            reads = 1;
        }
        if (reads && nr == NORM_MAX_READERS)
            return;
        if (reads)
            readers[nr++] = i;
    }
    if ((uint32_t)nr != c->uses[t])
        return;
    for (j = 0; j < nr; j++) {
        const glc__gnode *n = &g->n[readers[j]];
        in[0] = r->tensor[0];
        in[1] = n->tensor[1];
        in[2] = n->tensor[2];
        in[3] = n->args.nin > 3 ? n->tensor[3] : -1;
        in[4] = r->tensor[1];
        cand = make(n->args.op, in, 5, out_of(n), GLC_DTYPE_F32, n);
        cand.raw.mm.norm_eps = r->args.norm.eps;
        all &= replace(c, &g->n[readers[j]], &cand); /* one refused keeps the norm for it */
    }
    if (all) {
        r->dead = 1;
        count_uses(c);
    }
}

/* The node before node i that runs (NULL: none). */
static glc__gnode *live_before(const fctx *c, size_t i)
{
    while (i-- > 0)
        if (runs(c, &c->g->n[i]))
            return &c->g->n[i];
    return NULL;
}

/* The bytes [*lo, *hi) of root `root` that tensor t (an alias of it, at
 * the variables' maxima) covers; 0 when t is not inside root. */
static int span_in(const glc_graph *g, int32_t t, int32_t root, size_t *lo, size_t *hi)
{
    glc__tensor v;
    size_t off;
    if (glc__alias_root(g, t, &off) != root)
        return 0;
    glc__graph_tensor_at(g, t, NULL, &v);
    *lo = off;
    *hi = off + glc__tensor_bytes(&v);
    return 1;
}

/* 1 when the bytes of q (inside root) are read or written by no node that
 * runs but `reader` (its slot 0) and root's producer, and are in no graph
 * output: rotating q in place then hides nothing. */
static int q_exclusive(const fctx *c, int32_t q, int32_t root, const glc__gnode *reader)
{
    const glc_graph *g = c->g;
    size_t qlo, qhi, lo, hi, i;
    int j;
    if (!span_in(g, q, root, &qlo, &qhi))
        return 0;
    for (i = 0; i < g->nn; i++) {
        const glc__gnode *n = &g->n[i];
        if (!runs(c, n) || (int32_t)i == g->t[root].producer)
            continue;
        for (j = 0; j <= n->args.nin; j++) {
            int32_t t = n->tensor[j];
            if (t < 0 || (n == reader && j == 0))
                continue;
            if (span_in(g, t, root, &lo, &hi) && lo < qhi && qlo < hi)
                return 0;
        }
    }
    for (i = 0; i < g->nout; i++)
        if (span_in(g, g->out[i].tensor, root, &lo, &hi) && lo < qhi && qlo < hi)
            return 0;
    return 1;
}

/* qr = rope(q, pos); kc' = rope_rows(k, pos, ff, kc); vc' = set_rows(v, pos,
 * vc), the three nodes that run, in a row (rope and rope_rows in either order),
 * q, k and v parts of one value (the qkv pass's pack) or each its own (the
 * projections left apart: weights of different types), the same positions, freq_factors and
 * rope scalars -> one rope_qkv node in the set_rows' place writing the
 * three. Adjacency keeps every other reader and writer of the caches and
 * of qr where it was (after the last of them, or before the first); q
 * rotates in place, so its bytes must be nobody else's (q_exclusive), and
 * qr (q's dtype and shape, rope's output) becomes an alias of q. Shapes
 * with variables are checked over their range by the op's rule. */
static void rope_qkv(fctx *c, glc__gnode *s)
{
    glc_graph *g = c->g;
    glc__gnode *a, *b, *r, *k, cand;
    int32_t in[7], pos, root;
    size_t off, si = (size_t)(s - g->n);
    if (s->dead || s->args.op != GLC__OP_SET_ROWS || !(a = live_before(c, si)) ||
        !(b = live_before(c, (size_t)(a - g->n))))
        return;
    r = a->args.op == GLC__OP_ROPE ? a : b;
    k = a->args.op == GLC__OP_ROPE_ROWS ? a : b;
    if (r == k || r->args.op != GLC__OP_ROPE || k->args.op != GLC__OP_ROPE_ROWS)
        return;
    pos = s->tensor[1];
    if (r->tensor[1] != pos || k->tensor[1] != pos || r->tensor[2] != k->tensor[2] ||
        r->raw.rope.mode != k->raw.rope.mode || r->raw.rope.dim != k->raw.rope.dim ||
        r->raw.rope.base != k->raw.rope.base)
        return;
    /* the later nodes read nothing the earlier ones make */
    if (s->tensor[0] == out_of(r) || s->tensor[0] == out_of(k) || s->tensor[2] == out_of(r) ||
        s->tensor[2] == out_of(k) || (r < k ? k->tensor[0] == out_of(r) || k->tensor[3] == out_of(r)
                                              : r->tensor[0] == out_of(k)))
        return;
    /* q, k and v: parts of one packed value or values of their own (a
     * binding each); q a view of its value (rotated in place); 6 storage
     * blocks, 7 with freq_factors */
    root = glc__alias_root(g, r->tensor[0], &off);
    if (g->t[root].kind != GLC__T_VALUE || root == r->tensor[0] ||
        c->ssbo < (r->tensor[2] >= 0 ? 7u : 6u) ||
        glc__alias_root(g, k->tensor[3], &off) == glc__alias_root(g, s->tensor[2], &off))
        return;
    if (g->t[out_of(r)].alias || g->t[out_of(r)].dtype != g->t[r->tensor[0]].dtype ||
        !q_exclusive(c, r->tensor[0], root, r))
        return;
    in[0] = r->tensor[0];
    in[1] = k->tensor[0];
    in[2] = s->tensor[0];
    in[3] = pos;
    in[4] = r->tensor[2];
    in[5] = k->tensor[3];
    in[6] = s->tensor[2];
    cand = make(GLC__OP_ROPE_QKV, in, 7, out_of(s), s->odt, r);
    if (!replace(c, s, &cand))
        return;
    r->dead = 1;
    k->dead = 1;
    g->t[out_of(r)].alias = r->tensor[0] + 1;
    g->t[out_of(r)].alias_offset = 0;
    g->t[out_of(r)].producer = (int32_t)si;
    g->t[out_of(k)].producer = (int32_t)si;
    count_uses(c);
}

/* a = sdpa_decode(qr, kc', vc') run right after the rope_qkv node R that
 * made qr (q rotated in place: an alias of q), kc' and vc' (the caches
 * with the token's rows) -> sdpa_decode of 7 inputs (q, the caches as R
 * found them, k, v, pos, freq_factors; op_attention.c), whose kernels
 * rotate q as they read it and write the caches' rows themselves: R's
 * dispatch and the barrier after it go. qr must have no reader but the
 * attention (q's bytes now stay as the projection wrote them); kc' and vc'
 * may have more (the fused node writes them as R did). 7 storage blocks,
 * 8 with freq_factors. */
static void sdpa_rope(fctx *c, glc__gnode *s)
{
    glc_graph *g = c->g;
    glc__gnode *r, cand;
    int32_t in[7], qr = s->tensor[0], kc = s->tensor[1], vc = s->tensor[2], ri;
    size_t si = (size_t)(s - g->n);
    if (s->dead || s->args.op != GLC__OP_SDPA_DECODE || s->args.nin != 3 ||
        !(r = live_before(c, si)) || r->args.op != GLC__OP_ROPE_QKV)
        return;
    ri = (int32_t)(r - g->n);
    if (g->t[qr].alias != r->tensor[0] + 1 || g->t[qr].producer != ri || c->uses[qr] != 1 ||
        kc < 0 || g->t[kc].producer != ri || vc != out_of(r) ||
        c->ssbo < (r->tensor[4] >= 0 ? 8u : 7u))
        return;
    in[0] = r->tensor[0];
    in[1] = r->tensor[5];
    in[2] = r->tensor[6];
    in[3] = r->tensor[1];
    in[4] = r->tensor[2];
    in[5] = r->tensor[3];
    in[6] = r->tensor[4];
    cand = make(GLC__OP_SDPA_DECODE, in, 7, out_of(s), s->odt, s);
    cand.raw.sdpa.rope_base = r->raw.rope.base;
    cand.raw.sdpa.rope_mode = r->raw.rope.mode;
    cand.raw.sdpa.rope_dim = r->raw.rope.dim;
    if (!replace(c, s, &cand))
        return;
    r->dead = 1;
    g->t[kc].producer = (int32_t)si;
    g->t[vc].producer = (int32_t)si;
    count_uses(c);
}

/* 1 when the target plans node n as it stands (a fused form only some
 * kernels have) */
static int plans(const fctx *c, const glc__gnode *n)
{
    glc__op_plan *p = glc__calloc(1, sizeof *p);
    char err[256];
    int ok = p && glc__op_make_plan(&n->args, c->tg, p, err, sizeof err) == GLC_OK;
    glc__free(p);
    return ok;
}

/* 1 when node m may take the rope epilogue: a one-row product (dense
 * transposed or GGML weights) with no activation, gated input, SwiGLU
 * epilogue, residual or segments, not fused with a rope already */
static int rope_taker(const fctx *c, const glc__gnode *m)
{
    const glc_graph *g = c->g;
    const glc__gtensor *w;
    if ((m->args.op != GLC__OP_MATMUL && m->args.op != GLC__OP_MATMUL_Q) || m->args.nin > 5 ||
        (m->args.nin > 3 && m->tensor[3] >= 0) ||
        (m->args.op == GLC__OP_MATMUL && !m->args.mm.transpose_b) || m->args.mm.act ||
        m->args.mm.glu || m->args.mm.glu_out || m->args.mm.seg[0])
        return 0;
    w = &g->t[m->tensor[1]];
    /* one row of a (no variable in it: a's elements at the maxima are K) */
    return w->rank == 2 && glc__numel(&m->args.t[0]) == w->shape[1] &&
           g->t[m->tensor[0]].shape[0] == 1;
}

/* a = sdpa_decode(q, kc, vc, k, v, pos, ff) (sdpa_rope's node) where q, k
 * and v are the outputs of one-row products that run right before it
 * (nothing else between: no reader of the caches moves), each product's
 * output the whole of some of them in the order q, k, v (the qkv pass's
 * pack q | k | v, or projections left apart: Q | K and V of a Q4_K_M
 * file), on a target whose plan for each has the epilogue (matvec.comp,
 * matmul_q.comp's split variant: GPUs; on llvmpipe sdpa_rope's rows
 * kernel stays, and GLC_MATMUL=matvec forces this for the tests; each
 * fused node is planned before anything is replaced) -> the products with
 * the rope epilogue (inputs 5-8: pos, ff, the caches of the columns each
 * has; op_matmul.c glc__mm_rope_infer), which write q rotated and the
 * caches' rows, and sdpa_decode(q, kc', vc') over the caches (kc', vc':
 * the caches after the write, made by the products now): rope_qkv's
 * dispatch and the barrier after it go. q's bytes are the attention's
 * alone (rope_qkv's q_exclusive held). */
#define ROPE_PARTS 3
static void qkv_rope(fctx *c, glc__gnode *s)
{
    glc_graph *g = c->g;
    glc__gnode *prod[ROPE_PARTS], cand[ROPE_PARTS], keep[ROPE_PARTS], cs, keep_s, *n;
    int32_t ins[3], kc2 = -1, vc2 = -1, part[ROPE_PARTS];
    int64_t width[ROPE_PARTS], hd;
    size_t si = (size_t)(s - g->n), off[ROPE_PARTS], i;
    int np = 0, j, r, owner[ROPE_PARTS], done = 0;
    if (!c->tg || s->dead || s->args.op != GLC__OP_SDPA_DECODE || s->args.nin != 7 ||
        !glc__same_shape(&s->args.t[1], &s->args.t[2]) || s->args.t[1].rank != 3)
        return;
    hd = s->args.t[1].shape[2];
    part[0] = s->tensor[0];
    part[1] = s->tensor[3];
    part[2] = s->tensor[4];
    /* each part's product: one of the live nodes right before s */
    for (j = 0; j < ROPE_PARTS; j++) {
        int32_t root = glc__alias_root(g, part[j], &off[j]), pi = g->t[root].producer;
        width[j] = glc__numel(&s->args.t[j == 0 ? 0 : j + 2]);
        if (pi < 0 || out_of(&g->n[pi]) != root || !rope_taker(c, &g->n[pi]))
            return;
        for (r = 0; r < np && prod[r] != &g->n[pi]; r++)
            ;
        if (r == np)
            prod[np++] = &g->n[pi];
        owner[j] = r;
    }
    for (n = s, r = 0; r < np; r++) { /* the products run right before s */
        n = live_before(c, (size_t)(n - g->n));
        for (j = 0; j < np && prod[j] != n; j++)
            ;
        if (j == np)
            return;
    }
    /* a product's output: its parts whole and in order, from 0 */
    for (r = 0; r < np; r++) {
        size_t at = 0;
        int32_t in[9];
        uint32_t blocks = 4 + (prod[r]->args.nin > 4 && prod[r]->tensor[4] >= 0) + 1;
        for (j = 0; j < ROPE_PARTS; j++)
            if (owner[j] == r) {
                if (off[j] != at)
                    return;
                at += (size_t)width[j] * 4;
            }
        if (at != (size_t)glc__numel(&prod[r]->args.t[prod[r]->args.nin]) * 4)
            return;
        for (i = 0; i < 5; i++)
            in[i] = (int)i < prod[r]->args.nin ? prod[r]->tensor[i] : -1;
        in[5] = s->tensor[5];
        in[6] = owner[0] == r || owner[1] == r ? s->tensor[6] : -1;
        in[7] = owner[1] == r ? s->tensor[1] : -1;
        in[8] = owner[2] == r ? s->tensor[2] : -1;
        blocks += (in[6] >= 0) + (in[7] >= 0) + (in[8] >= 0);
        if (c->ssbo < blocks)
            return;
        cand[r] = make(prod[r]->args.op, in, 9, out_of(prod[r]), GLC_DTYPE_F32, prod[r]);
        cand[r].raw.mm.rope_mode = s->raw.sdpa.rope_mode;
        cand[r].raw.mm.rope_dim = s->raw.sdpa.rope_dim;
        cand[r].raw.mm.rope_base = s->raw.sdpa.rope_base;
        cand[r].raw.mm.rope_hd = hd;
        cand[r].raw.mm.rope_qw = owner[0] == r ? width[0] : 0;
        cand[r].raw.mm.rope_kw = owner[1] == r ? width[1] : 0;
    }
    for (i = 0; i < g->nt; i++) /* kc' and vc': s made them */
        if (g->t[i].producer == (int32_t)si && g->t[i].alias) {
            if (g->t[i].alias - 1 == s->tensor[1])
                kc2 = (int32_t)i;
            else if (g->t[i].alias - 1 == s->tensor[2])
                vc2 = (int32_t)i;
        }
    if (kc2 < 0 || vc2 < 0)
        return;
    ins[0] = s->tensor[0];
    ins[1] = kc2;
    ins[2] = vc2;
    cs = make(GLC__OP_SDPA_DECODE, ins, 3, out_of(s), s->odt, s);
    cs.raw.sdpa.rope_mode = cs.raw.sdpa.rope_dim = 0;
    cs.raw.sdpa.rope_base = 0;
    keep_s = *s;
    if (!replace(c, s, &cs))
        return;
    for (r = 0; r < np; r++) {
        keep[r] = *prod[r];
        if (!replace(c, prod[r], &cand[r]))
            break;
        done++;
        if (!plans(c, prod[r]))
            break;
    }
    if (r < np) { /* one refused or not planned: all as they were */
        for (j = 0; j < done; j++)
            *prod[j] = keep[j];
        *s = keep_s;
        c->fused -= done + 1;
        count_uses(c);
        return;
    }
    c->fused -= np; /* one pattern, np + 1 nodes replaced */
    g->t[kc2].producer = (int32_t)(prod[owner[1]] - g->n);
    g->t[vc2].producer = (int32_t)(prod[owner[2]] - g->n);
}

glc_status glc__fuse(glc_graph *g, const glc__target *tg, int *fused)
{
    static void (*const passes[])(fctx *, glc__gnode *) = {norm_mul, swiglu, mm_bias, mm_act,
                                                           mm_res,   rope_rows};
    fctx c;
    size_t p, i;
    glc_status st = GLC_OK;
    *fused = 0;
    if (g->status != GLC_OK)
        return GLC_OK; /* the compiler reports it */
    c.g = g;
    c.fused = 0;
    c.align = tg->limits.ssbo_offset_alignment < 4 ? 4 : tg->limits.ssbo_offset_alignment;
    c.ssbo = tg->limits.max_ssbo_blocks;
    c.max_bytes = tg->limits.max_ssbo_size;
    c.tg = tg;
    glc__use_device(g->dev);
    /* each fusion adds at most 3 tensors and retires at least one node */
    if (!(c.uses = glc__malloc((g->nt + 3 * g->nn + 1) * sizeof *c.uses)))
        return GLC_ERR_OUT_OF_MEMORY;
    count_uses(&c);
    for (p = 0; p < sizeof passes / sizeof passes[0]; p++)
        for (i = 0; i < g->nn; i++)
            if (!g->n[i].dead)
                passes[p](&c, &g->n[i]);
    for (i = 0; i < g->nn && st == GLC_OK; i++)
        st = add_norm(&c, i);
    count_uses(&c);
    for (i = 0; i < g->nn && st == GLC_OK; i++)
        st = qkv(&c, i);
    for (i = 0; i < g->nn && st == GLC_OK; i++)
        glu_out(&c, i);
    for (i = 0; i < g->nn && st == GLC_OK; i++)
        glu(&c, &g->n[i]);
    for (i = 0; i < g->nn; i++)
        rope_qkv(&c, &g->n[i]);
    for (i = 0; i < g->nn; i++)
        sdpa_rope(&c, &g->n[i]);
    for (i = 0; i < g->nn; i++)
        rows_first(&c, i);
    for (i = 0; i < g->nn; i++)
        mm_norm(&c, &g->n[i]);
    for (i = 0; i < g->nn; i++)
        qkv_rope(&c, &g->n[i]);
    glc__free(c.uses);
    *fused = c.fused;
    return st;
}
