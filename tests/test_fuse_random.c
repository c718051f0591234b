/*
 * Seeded random graphs through the fusion passes: each graph is compiled
 * fused and with GLC_COMPILE_NO_FUSE, both are run, and every output is
 * held against a double-precision evaluation of the same graph on the
 * host. The generator mixes plain ops (activations, scale, add / sub / mul
 * with numpy broadcasting, reshapes, matmuls with and without transposed
 * weights and biases, rms_norm) with the shapes each pass looks for
 * (act * b, norm * w, matmul + bias + act, add + rms_norm, two or three
 * projections of one input, the SwiGLU block), with reshapes between them
 * and intermediate values made outputs too (which must block a fusion);
 * weights in GGML block types where K allows (matmul_q, its norm prologue,
 * packed projections of mixed types), softmax (scaled, causal with an
 * offset), get_rows (from params of any type, from computed values,
 * after a norm: rows_first; ids out of the table's range at some row
 * counts, which give zero rows) and rope (a row seen as heads of any even
 * size, either pairing, all of a head or a part, two bases, positions up
 * to 4095).
 * Half the graphs have a variable row count, run at its maximum, its
 * minimum and values between, so every re-planned fused step is checked
 * too. The plans run by name; their clones by slot (run_slots,
 * commit_no_wait + sync_pending, run_pipelined). A third of the graphs take
 * their inputs in f16. Both plans' barriers stay within the ops' DAG minimum plus one for
 * each further dispatch of a multi-dispatch op (compile.c's schedule), and
 * their arenas within 1.05x the liveness bound with lifetimes in levels.
 *
 * GLC_TEST_SEED=<n> picks another seed; each failure names the seed and
 * the graph, and prints the graph's ops.
 */
#include "testutil.h"

#include "optest.h"
#include "ref_elementwise.h"
#include "ref_quant.h"
#include "ref_rope.h"

#include <math.h>

#define MAXT 96   /* tensors of one graph */
#define CACHE_ROWS 16 /* rows of the handle set_rows writes */
#define MAXE 4096 /* elements of one tensor at the maxima */

enum { H_INPUT, H_PARAM, H_UNARY, H_SCALE, H_BIN, H_RESHAPE, H_MATMUL, H_NORM, H_SOFTMAX,
       H_IDS, H_GETROWS, H_CAST, H_POS, H_ROPE, H_HANDLE, H_SETROWS };

typedef struct ht {
    int kind;
    int in[3];       /* operands; -1 absent (a matmul's bias, a norm's weight) */
    int act, binop;  /* H_UNARY: glc_unary_op; H_BIN: 0 add, 1 sub, 2 mul */
    int nt;          /* H_MATMUL: transposed weight */
    float f[2];      /* H_SCALE: a, b; H_SOFTMAX: scale, causal offset (causal: f[1] >= 0);
                      * H_ROPE: base, rope_dim */
    int rank;
    int64_t shape[4]; /* GLC_DIM_VAR(0) (-1): the row variable */
    glc_tensor gt;
    char name[16];   /* inputs and params */
    float *pval;     /* params: the values set (rounded as stored) */
    glc_dtype pdt;
    uint8_t *qraw;   /* params of a GGML block type: the blocks set */
    double *v;       /* host values at the current T */
    int hv;          /* the cache after its hv-th write (a set_rows, a reshape of it); 0 not */
} ht;

typedef struct gen {
    uint64_t r;
    glc_graph *g;
    ht t[MAXT];
    int nt, var, rows, nparams;
    int out[4], nout;
    int ids, nids;   /* the ids input (H_IDS; -1 none) and its length */
    glc_dtype in_dt; /* x, c and s: f32, or f16 (slot runs then take 2-byte
                      * values: an odd row count is not whole words) */
    int32_t idv[8];  /* its values at the current run */
    int pos;         /* the positions input (H_POS, I32 [rows]; -1 none) */
    int32_t posv[8]; /* its values at the current run */
    int late[2], nlate; /* the inputs made at first use (ids, positions), in order */
    int cache, cache_at; /* the handle "h" [CACHE_ROWS, H, D] (H_HANDLE; -1 none), and its
                          * value after the graph's last set_rows so far */
    int writes;          /* set_rows made so far: a cache value of fewer is gone (the
                          * writes are in place; the library refuses to read it) */
    double *cache_v;     /* its contents before the current run (the host's model) */
    char log[32768];
} gen;

static uint64_t g_seed = 0xF05Eull;

static int64_t dim_at(int64_t d, int64_t tv) { return d < 0 ? tv : d; }

static int64_t numel_at(const ht *x, int64_t tv)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < x->rank; i++)
        n *= dim_at(x->shape[i], tv);
    return n;
}

static void note(gen *G, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void note(gen *G, const char *fmt, ...)
{
    size_t used = strlen(G->log);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(G->log + used, sizeof G->log - used, fmt, ap);
    va_end(ap);
}

/* glc_plan_dump's text into the log */
static void log_text(void *user, const char *text)
{
    note((gen *)user, "%s", text);
}

static const char *shape_str(const ht *x, char *buf, size_t len)
{
    size_t used = 0;
    int i;
    buf[0] = '\0';
    for (i = 0; i < x->rank && used < len; i++) {
        if (x->shape[i] < 0)
            used += (size_t)snprintf(buf + used, len - used, "%sT", i ? "," : "[");
        else
            used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? "," : "[",
                                     (long long)x->shape[i]);
    }
    if (used < len)
        snprintf(buf + used, len - used, "]");
    return buf;
}

/* Appends a tensor made by gt (checked: the generator makes valid graphs
 * only, so a refusal is a failure). */
static int push(gen *G, ht *x, const char *what)
{
    char sb[64];
    if (x->gt.id < 0 || glc_graph_status(G->g) != GLC_OK)
        fail_msg("seed %llu: building %s: %s\n%s", (unsigned long long)g_seed, what,
                 glc_graph_errmsg(G->g), G->log);
    G->t[G->nt] = *x;
    note(G, "  t%d = %s %s\n", G->nt, what, shape_str(x, sb, sizeof sb));
    return G->nt++;
}

static uint32_t rnd(gen *G, uint32_t lo, uint32_t hi) { return tu_range(&G->r, lo, hi); }

/* A param of dtype qt (0: f32, or f16 when f16ok, at random); a GGML
 * block type's values are what its blocks hold (quantized, then read
 * back), so the host reference sees the same weights. */
static int qparam(gen *G, int rank, int64_t d0, int64_t d1, float scale, int f16ok, glc_dtype qt)
{
    ht x;
    int64_t n = d0 * (rank > 1 ? d1 : 1);
    uint64_t s = G->r ^ (uint64_t)G->nparams * 0x9E37ull;
    char what[32];
    memset(&x, 0, sizeof x);
    x.kind = H_PARAM;
    x.in[0] = x.in[1] = x.in[2] = -1;
    x.rank = rank;
    x.shape[0] = d0;
    x.shape[1] = d1;
    x.pdt = qt ? qt : rnd(G, 0, 2) || !f16ok ? GLC_DTYPE_F32 : GLC_DTYPE_F16;
    snprintf(x.name, sizeof x.name, "p%d", G->nparams++);
    x.pval = malloc((size_t)n * sizeof *x.pval);
    assert_non_null(x.pval);
    ot_fill(&s, x.pval, (size_t)n, -scale, scale);
    if (qt) {
        x.qraw = malloc(glc_dtype_row_bytes(qt, n));
        assert_non_null(x.qraw);
        ref_quantize(qt, x.pval, (size_t)n, x.qraw);
        ref_dequantize(qt, x.qraw, (size_t)n, x.pval);
    } else {
        ot_round(x.pdt, x.pval, (size_t)n);
    }
    x.gt = glc_graph_param(G->g, x.name, x.pdt, rank, x.shape);
    snprintf(what, sizeof what, "param %s", glc_dtype_name(x.pdt));
    return push(G, &x, what);
}

static int param(gen *G, int rank, int64_t d0, int64_t d1, float scale, int f16ok)
{
    return qparam(G, rank, d0, d1, scale, f16ok, (glc_dtype)0);
}

/* A GGML block type for rows of k values (0: none fits): the 32-value
 * blocks, and the K types (256) where k allows */
static glc_dtype block_type(gen *G, int64_t k)
{
    static const glc_dtype small[] = {GLC_DTYPE_Q8_0, GLC_DTYPE_Q4_0, GLC_DTYPE_Q4_1,
                                      GLC_DTYPE_Q5_0, GLC_DTYPE_Q5_1};
    static const glc_dtype big[] = {GLC_DTYPE_Q4_K, GLC_DTYPE_Q5_K, GLC_DTYPE_Q6_K};
    if (k % 256 == 0 && rnd(G, 0, 1))
        return big[rnd(G, 0, 2)];
    return k % 32 == 0 ? small[rnd(G, 0, 4)] : (glc_dtype)0;
}

/* A random pool tensor (not a param), recent ones more likely; pred may
 * narrow it (NULL: any); -1 when none fits. */
static int pick(gen *G, int (*pred)(const gen *, const ht *, const void *), const void *arg)
{
    int cand[MAXT], n = 0, i;
    for (i = 0; i < G->nt; i++)
        if (G->t[i].kind != H_PARAM && G->t[i].kind != H_IDS && G->t[i].kind != H_POS &&
            G->t[i].kind != H_HANDLE && (!G->t[i].hv || G->t[i].hv == G->writes) &&
            !(G->t[i].kind == H_INPUT && G->in_dt != GLC_DTYPE_F32) &&
            (!pred || pred(G, &G->t[i], arg)))
            cand[n++] = i;
    if (!n)
        return -1;
    if (rnd(G, 0, 1))
        return cand[n - 1 - (int)rnd(G, 0, (uint32_t)(n < 3 ? n - 1 : 2))];
    return cand[rnd(G, 0, (uint32_t)n - 1)];
}

static int64_t last(const ht *x) { return x->shape[x->rank - 1]; }

static int small_last(const gen *G, const ht *x, const void *arg)
{
    (void)G;
    (void)arg;
    return last(x) > 0 && last(x) <= 32 && numel_at(x, 8) * 16 <= MAXE;
}

static int mult8_last(const gen *G, const ht *x, const void *arg)
{
    return small_last(G, x, arg) && last(x) % 8 == 0;
}

/* b broadcasts against a (numpy rules; the row variable only against
 * itself or 1), and is not a itself. */
static int broadcasts(const gen *G, const ht *b, const void *arg)
{
    const ht *a = arg;
    int r = a->rank > b->rank ? a->rank : b->rank, i;
    if (b == a)
        return 0;
    (void)G;
    for (i = 0; i < r; i++) {
        int64_t da = i - (r - a->rank) >= 0 ? a->shape[i - (r - a->rank)] : 1;
        int64_t db = i - (r - b->rank) >= 0 ? b->shape[i - (r - b->rank)] : 1;
        if (da != db && da != 1 && db != 1)
            return 0;
    }
    return numel_at(a, 8) * numel_at(b, 8) <= 64 * MAXE;
}

/* [n, 1] or [1, n], n > 1, fixed */
static int col_or_row(const gen *G, const ht *x, const void *arg)
{
    (void)G;
    (void)arg;
    return x->rank == 2 && x->shape[0] > 0 && x->shape[1] > 0 &&
           (x->shape[0] == 1) != (x->shape[1] == 1);
}

static int same_shape(const gen *G, const ht *b, const void *arg)
{
    const ht *a = arg;
    (void)G;
    return b != a && b->rank == a->rank && memcmp(b->shape, a->shape, sizeof a->shape) == 0;
}

static int bin(gen *G, int a, int b, int op)
{
    static const char *const names[3] = {"add", "sub", "mul"};
    glc_tensor (*const fn[3])(glc_graph *, glc_tensor, glc_tensor) = {glc_add, glc_sub, glc_mul};
    ht x;
    char what[64];
    int r, i;
    memset(&x, 0, sizeof x);
    x.kind = H_BIN;
    x.binop = op;
    x.in[0] = a;
    x.in[1] = b;
    x.in[2] = -1;
    r = G->t[a].rank > G->t[b].rank ? G->t[a].rank : G->t[b].rank;
    x.rank = r;
    for (i = 0; i < r; i++) {
        const ht *A = &G->t[a], *B = &G->t[b];
        int64_t da = i - (r - A->rank) >= 0 ? A->shape[i - (r - A->rank)] : 1;
        int64_t db = i - (r - B->rank) >= 0 ? B->shape[i - (r - B->rank)] : 1;
        x.shape[i] = da == 1 ? db : da;
    }
    x.gt = fn[op](G->g, G->t[a].gt, G->t[b].gt);
    snprintf(what, sizeof what, "%s(t%d, t%d)", names[op], a, b);
    return push(G, &x, what);
}

static int unary(gen *G, int a, int act)
{
    static const char *const names[] = {"", "gelu", "gelu_erf", "silu", "relu", "exp", "tanh"};
    ht x = G->t[a];
    char what[64];
    x.kind = H_UNARY;
    x.act = act;
    x.in[0] = a;
    x.in[1] = x.in[2] = -1;
    x.gt = glc_unary(G->g, (glc_unary_op)act, G->t[a].gt, 0);
    snprintf(what, sizeof what, "%s(t%d)", names[act], a);
    return push(G, &x, what);
}

static int rand_act(gen *G)
{
    static const int acts[] = {GLC_UNARY_GELU, GLC_UNARY_SILU, GLC_UNARY_RELU, GLC_UNARY_TANH};
    return acts[rnd(G, 0, 3)];
}

/* a W (+ bias); W [n, k] transposed (nt) may be of a GGML block type
 * (qt: that type; 0: one at random a third of the time, where k allows) */
static int matmul_qt(gen *G, int a, int64_t n, int nt, int with_bias, glc_dtype qt)
{
    glc_matmul_desc md;
    int64_t k = last(&G->t[a]);
    int w;
    if (nt && !qt && rnd(G, 0, 2) == 0)
        qt = block_type(G, k);
    w = nt ? qparam(G, 2, n, k, 1.5f / sqrtf((float)k), 1, qt)
           : param(G, 2, k, n, 1.5f / sqrtf((float)k), 1);
    int bias = with_bias ? param(G, 1, n, 0, 0.5f, 0) : -1;
    ht x = G->t[a];
    char what[64];
    memset(&md, 0, sizeof md);
    md.transpose_b = nt;
    x.kind = H_MATMUL;
    x.nt = nt;
    x.in[0] = a;
    x.in[1] = w;
    x.in[2] = bias;
    x.shape[x.rank - 1] = n;
    x.gt = qt ? glc_matmul_q(G->g, G->t[a].gt, G->t[w].gt, bias >= 0 ? G->t[bias].gt : glc_none())
              : glc_matmul(G->g, G->t[a].gt, G->t[w].gt, bias >= 0 ? G->t[bias].gt : glc_none(),
                           &md);
    snprintf(what, sizeof what, "matmul%s(t%d, t%d%s%s)", qt ? "_q" : "", a, w, nt ? "^T" : "",
             bias >= 0 ? ", bias" : "");
    return push(G, &x, what);
}

static int matmul(gen *G, int a, int64_t n, int nt, int with_bias)
{
    return matmul_qt(G, a, n, nt, with_bias, (glc_dtype)0);
}

/* softmax over the last dim: scaled, and causal (rank >= 2) with an offset */
static int softmax(gen *G, int a)
{
    glc_softmax_desc sd;
    ht x = G->t[a];
    char what[64];
    memset(&sd, 0, sizeof sd);
    sd.scale = (float)rnd(G, 1, 8) / 4.0f;
    sd.causal = x.rank >= 2 && rnd(G, 0, 1);
    sd.pos_offset = sd.causal ? rnd(G, 0, 3) : 0;
    x.kind = H_SOFTMAX;
    x.in[0] = a;
    x.in[1] = x.in[2] = -1;
    x.f[0] = sd.scale;
    x.f[1] = sd.causal ? (float)sd.pos_offset : -1.0f;
    x.gt = glc_softmax(G->g, G->t[a].gt, &sd);
    snprintf(what, sizeof what, "softmax(t%d, scale %g%s)", a, sd.scale,
             sd.causal ? ", causal" : "");
    return push(G, &x, what);
}

/* An I32 [len] input made at its first use (the ids, the positions),
 * kept in the order the late inputs were made; *slot its tensor */
static int late_input(gen *G, int *slot, int kind, const char *name, int64_t len,
                      const char *what)
{
    ht x;
    if (*slot >= 0)
        return *slot;
    memset(&x, 0, sizeof x);
    x.kind = kind;
    x.in[0] = x.in[1] = x.in[2] = -1;
    x.rank = 1;
    x.shape[0] = len;
    snprintf(x.name, sizeof x.name, "%s", name);
    x.gt = glc_graph_input(G->g, name, GLC_DTYPE_I32, 1, x.shape);
    *slot = push(G, &x, what);
    G->late[G->nlate++] = *slot;
    return *slot;
}

/* The graph's one ids input (I32 [nids]) */
static int ids_input(gen *G)
{
    if (G->ids < 0)
        G->nids = (int)rnd(G, 1, 6);
    return late_input(G, &G->ids, H_IDS, "i", G->nids, "ids");
}

/* The graph's positions input (I32 [rows], the row dim as x's) */
static int pos_input(gen *G)
{
    return late_input(G, &G->pos, H_POS, "p", G->t[0].shape[0], "positions");
}

/* [rows, L] with L even (rows: x's row dim) */
static int ropeable(const gen *G, const ht *x, const void *arg)
{
    (void)arg;
    return x->rank == 2 && x->shape[0] == G->t[0].shape[0] && x->shape[1] >= 2 &&
           x->shape[1] % 2 == 0 && x->kind != H_IDS && x->kind != H_POS;
}

/* rope over a [rows, L] value seen as [rows, H, D] (D even), either
 * pairing, all of D or a part, then (back) as [rows, L] again; *r3 the
 * rope's own [rows, H, D] value */
static int rope(gen *G, int a, int *r3, int back)
{
    glc_rope_desc rd;
    int64_t L = G->t[a].shape[1], d, divs[16];
    int nd = 0, p = pos_input(G);
    ht x;
    char what[80];
    for (d = 2; d <= L && nd < 16; d += 2)
        if (L % d == 0)
            divs[nd++] = d;
    d = divs[rnd(G, 0, (uint32_t)nd - 1)];
    x = G->t[a];
    x.kind = H_RESHAPE;
    x.in[0] = a;
    x.in[1] = x.in[2] = -1;
    x.rank = 3;
    x.shape[1] = L / d;
    x.shape[2] = d;
    x.gt = glc_reshape(G->g, G->t[a].gt, 3, x.shape);
    snprintf(what, sizeof what, "reshape(t%d)", a);
    a = push(G, &x, what);
    memset(&rd, 0, sizeof rd);
    rd.mode = rnd(G, 0, 1) ? GLC_ROPE_NEOX : GLC_ROPE_NORMAL;
    rd.rope_dim = rnd(G, 0, 1) ? 0 : 2 * (int64_t)rnd(G, 1, (uint32_t)(d / 2));
    rd.base = rnd(G, 0, 1) ? 10000.0f : 500000.0f;
    x.kind = H_ROPE;
    x.in[0] = a;
    x.in[1] = p;
    x.nt = rd.mode == GLC_ROPE_NEOX;
    x.f[0] = rd.base;
    x.f[1] = (float)(rd.rope_dim ? rd.rope_dim : d);
    x.gt = glc_rope(G->g, G->t[a].gt, G->t[p].gt, &rd, glc_none());
    snprintf(what, sizeof what, "rope(t%d, t%d, %s, dims %g of %lld, base %g)", a, p,
             x.nt ? "neox" : "normal", x.f[1], (long long)d, rd.base);
    a = *r3 = push(G, &x, what);
    if (!back)
        return a;
    x = G->t[a];
    x.kind = H_RESHAPE;
    x.in[0] = a;
    x.rank = 2;
    x.shape[1] = L;
    x.shape[2] = 0;
    x.gt = glc_reshape(G->g, G->t[a].gt, 2, x.shape);
    snprintf(what, sizeof what, "reshape(t%d)", a);
    return push(G, &x, what);
}

/* table [V, D] (rank 2; V may be the row variable) */
static int rank2(const gen *G, const ht *x, const void *arg)
{
    (void)G;
    (void)arg;
    return x->rank == 2 && x->kind != H_IDS;
}

static int get_rows(gen *G, int table)
{
    int ids = ids_input(G);
    ht x;
    char what[64];
    memset(&x, 0, sizeof x);
    x.kind = H_GETROWS;
    x.in[0] = table;
    x.in[1] = ids;
    x.in[2] = -1;
    x.rank = 2;
    x.shape[0] = G->nids;
    x.shape[1] = G->t[table].shape[1];
    x.gt = glc_get_rows(G->g, G->t[table].gt, G->t[ids].gt);
    snprintf(what, sizeof what, "get_rows(t%d, t%d)", table, ids);
    return push(G, &x, what);
}

static int norm(gen *G, int a, int weighted)
{
    int w = weighted ? param(G, 1, last(&G->t[a]), 0, 1.0f, 1) : -1;
    ht x = G->t[a];
    char what[64];
    x.kind = H_NORM;
    x.in[0] = a;
    x.in[1] = w;
    x.in[2] = -1;
    x.gt = glc_rms_norm(G->g, G->t[a].gt, w >= 0 ? G->t[w].gt : glc_none(), 1e-5f);
    snprintf(what, sizeof what, "rms_norm(t%d%s)", a, w >= 0 ? ", w" : "");
    return push(G, &x, what);
}

/* A new shape over a's elements: the row variable stays the first dim;
 * with fixed rows any shape of rank 1-3 (rows and columns may trade). */
static int reshape(gen *G, int a)
{
    const ht *A = &G->t[a];
    ht x = *A;
    int64_t rest = 1, f[3], n;
    int i, nf = 0, lead = A->shape[0] < 0;
    char what[64];
    for (i = lead; i < A->rank; i++) {
        if (A->shape[i] < 0)
            return a; /* a second variable dim: not split here */
        rest *= A->shape[i];
    }
    /* rest as 1-2 factors (its divisors, random), after the row dim */
    n = rest;
    while (nf < 2 && n > 1 && rnd(G, 0, 2)) {
        int64_t d, div[32];
        int nd = 0;
        for (d = 1; d <= n && nd < 32; d++)
            if (n % d == 0)
                div[nd++] = d;
        f[nf] = div[rnd(G, 0, (uint32_t)nd - 1)];
        n /= f[nf++];
    }
    f[nf++] = n;
    x.kind = H_RESHAPE;
    x.in[0] = a;
    x.in[1] = x.in[2] = -1;
    x.rank = lead + nf;
    memset(x.shape, 0, sizeof x.shape);
    if (lead)
        x.shape[0] = -1;
    for (i = 0; i < nf; i++)
        x.shape[lead + i] = f[i];
    if (x.rank > 3 || (x.rank == A->rank && memcmp(x.shape, A->shape, sizeof x.shape) == 0))
        return a; /* nothing new */
    x.gt = glc_reshape(G->g, A->gt, x.rank, x.shape);
    snprintf(what, sizeof what, "reshape(t%d)", a);
    return push(G, &x, what);
}

/* src [rows, H, D] into the handle "h" [CACHE_ROWS, H, D] at the
 * positions (made at the first use; a second shape is skipped), then the
 * whole cache read as [CACHE_ROWS, H D]: rows of every run so far */
static void set_rows(gen *G, int src)
{
    ht x;
    char what[64];
    if (G->cache < 0) {
        memset(&x, 0, sizeof x);
        x.kind = H_HANDLE;
        x.in[0] = x.in[1] = x.in[2] = -1;
        x.rank = 3;
        x.shape[0] = CACHE_ROWS;
        x.shape[1] = G->t[src].shape[1];
        x.shape[2] = G->t[src].shape[2];
        snprintf(x.name, sizeof x.name, "h");
        x.gt = glc_graph_handle(G->g, "h", GLC_DTYPE_F32, 3, x.shape);
        G->cache = G->cache_at = push(G, &x, "handle");
    }
    if (G->t[src].shape[1] != G->t[G->cache].shape[1] ||
        G->t[src].shape[2] != G->t[G->cache].shape[2])
        return;
    x = G->t[G->cache];
    x.kind = H_SETROWS;
    x.in[0] = G->cache_at;
    x.in[1] = src;
    x.in[2] = G->pos;
    x.gt = glc_set_rows(G->g, G->t[G->cache_at].gt, G->t[src].gt, G->t[G->pos].gt);
    x.hv = ++G->writes;
    snprintf(what, sizeof what, "set_rows(t%d, t%d, t%d)", G->cache_at, src, G->pos);
    G->cache_at = push(G, &x, what);
    x.kind = H_RESHAPE;
    x.in[0] = G->cache_at;
    x.in[1] = x.in[2] = -1;
    x.rank = 2;
    x.shape[1] *= x.shape[2];
    x.shape[2] = 0;
    x.gt = glc_reshape(G->g, G->t[G->cache_at].gt, 2, x.shape);
    snprintf(what, sizeof what, "reshape(t%d)", G->cache_at);
    push(G, &x, what);
}

/* One step of the generator: a plain op or a pattern a pass looks for. */
static void step(gen *G)
{
    int a = pick(G, NULL, NULL), b, k = (int)rnd(G, 0, 16), n8 = rnd(G, 0, 1) ? 8 : 16;
    switch (k) {
    case 0: /* act */
        unary(G, a, rand_act(G));
        break;
    case 1: { /* scale */
        ht x = G->t[a];
        char what[64];
        x.kind = H_SCALE;
        x.in[0] = a;
        x.in[1] = x.in[2] = -1;
        x.f[0] = (float)rnd(G, 1, 8) / 4.0f * (rnd(G, 0, 1) ? 1 : -1);
        x.f[1] = (float)rnd(G, 0, 8) / 8.0f - 0.5f;
        x.gt = glc_scale(G->g, G->t[a].gt, x.f[0], x.f[1]);
        snprintf(what, sizeof what, "scale(t%d)", a);
        push(G, &x, what);
        break;
    }
    case 2: /* a (op) b, b broadcasting, either order */
    case 3:
        b = pick(G, broadcasts, &G->t[a]);
        if (b < 0)
            b = param(G, 1, last(&G->t[a]), 0, 1.0f, 1);
        if (rnd(G, 0, 1))
            bin(G, a, b, (int)rnd(G, 0, 2));
        else
            bin(G, b, a, (int)rnd(G, 0, 2));
        break;
    case 4: /* reshape, then maybe a pattern over it */
        a = reshape(G, a);
        if (rnd(G, 0, 1))
            break;
        /* fall through */
    case 5: /* act(a) * b: the swiglu pass (through a reshape, sometimes) */
        a = unary(G, a, rand_act(G));
        if (rnd(G, 0, 2) == 0)
            a = reshape(G, a);
        b = pick(G, broadcasts, &G->t[a]);
        if (b < 0)
            b = param(G, 1, last(&G->t[a]), 0, 1.0f, 1);
        if (rnd(G, 0, 1))
            bin(G, a, b, 2);
        else
            bin(G, b, a, 2);
        break;
    case 6: /* rms_norm(a) (* w): the norm_mul pass */
        a = norm(G, a, rnd(G, 0, 1));
        if (rnd(G, 0, 3) == 0)
            a = reshape(G, a);
        if (rnd(G, 0, 1)) {
            int w = param(G, 1, last(&G->t[a]), 0, 1.0f, 1);
            if (rnd(G, 0, 1))
                bin(G, a, w, 2);
            else
                bin(G, w, a, 2);
        }
        break;
    case 7: /* act(a W (+ bias)): mm_bias, mm_act */
        a = pick(G, small_last, NULL);
        if (a < 0)
            break;
        a = matmul(G, a, (int64_t)rnd(G, 1, 4) * 4, (int)rnd(G, 0, 1), 0);
        if (rnd(G, 0, 3) == 0)
            a = reshape(G, a);
        if (rnd(G, 0, 3)) {
            int bias = param(G, 1, last(&G->t[a]), 0, 0.5f, 1);
            a = rnd(G, 0, 1) ? bin(G, a, bias, 0) : bin(G, bias, a, 0);
        }
        if (rnd(G, 0, 3))
            unary(G, a, rand_act(G));
        break;
    case 8: { /* h = a + b; rms_norm(h, w): add_norm */
        int h;
        b = pick(G, same_shape, &G->t[a]);
        if (b < 0)
            break;
        h = bin(G, a, b, 0);
        if (rnd(G, 0, 3) == 0)
            h = reshape(G, h);
        norm(G, h, rnd(G, 0, 2) != 0);
        if (rnd(G, 0, 1)) /* the residual read again */
            bin(G, h, G->nt - 1, 0);
        break;
    }
    case 9: { /* two or three projections of one input: qkv */
        int m = (int)rnd(G, 2, 3), i, bias = (int)rnd(G, 0, 1);
        a = pick(G, small_last, NULL);
        if (a < 0)
            break;
        for (i = 0; i < m; i++)
            matmul(G, a, (int64_t)rnd(G, 1, 3) * 8, 1, bias);
        break;
    }
    case 10: { /* (act(a W1^T) * (a W3^T)) W2^T: the SwiGLU block */
        int gate, up, first = (int)rnd(G, 0, 1);
        a = pick(G, mult8_last, NULL);
        if (a < 0 || numel_at(&G->t[a], 8) / last(&G->t[a]) > 8)
            break;
        gate = first ? matmul(G, a, n8, 1, 0) : -1;
        up = matmul(G, a, n8, 1, 0);
        if (!first)
            gate = matmul(G, a, n8, 1, 0);
        b = bin(G, unary(G, gate, rand_act(G)), up, 2);
        matmul(G, b, (int64_t)rnd(G, 1, 4) * 4, 1, 0);
        break;
    }
    case 11: { /* a column as a row ([n, 1] as [1, n]) after an act, times
                * what it broadcasts against: another layout, same bytes */
        ht x;
        char what[64];
        a = pick(G, col_or_row, NULL);
        if (a < 0)
            break;
        a = unary(G, a, rand_act(G));
        x = G->t[a];
        x.kind = H_RESHAPE;
        x.in[0] = a;
        x.in[1] = x.in[2] = -1;
        x.shape[0] = G->t[a].shape[1];
        x.shape[1] = G->t[a].shape[0];
        x.gt = glc_reshape(G->g, G->t[a].gt, 2, x.shape);
        snprintf(what, sizeof what, "reshape(t%d)", a);
        a = push(G, &x, what);
        b = pick(G, broadcasts, &G->t[a]);
        if (b >= 0 && rnd(G, 0, 1))
            bin(G, a, b, (int)rnd(G, 0, 2));
        else if (b >= 0)
            bin(G, b, a, (int)rnd(G, 0, 2));
        break;
    }
    case 12: { /* get_rows from a param (any type) or a value, after a norm
                * sometimes (rows_first) */
        int t;
        if (rnd(G, 0, 2) == 0) {
            int64_t d = (int64_t)rnd(G, 1, 3) * 32;
            t = qparam(G, 2, (int64_t)rnd(G, 2, 9), d, 1.0f, 1,
                       rnd(G, 0, 1) ? block_type(G, d) : (glc_dtype)0);
        } else {
            t = pick(G, rank2, NULL);
            if (t < 0 || numel_at(&G->t[t], 8) > MAXE / 2)
                break;
            if (rnd(G, 0, 1))
                t = norm(G, t, rnd(G, 0, 1));
        }
        a = get_rows(G, t);
        if (rnd(G, 0, 1) && last(&G->t[a]) <= 96)
            matmul(G, a, (int64_t)rnd(G, 1, 4) * 4, 1, 0);
        break;
    }
    case 13: /* softmax, then maybe something reading it */
        a = softmax(G, a);
        if (rnd(G, 0, 1))
            unary(G, a, rand_act(G));
        break;
    case 14: { /* a wide product in a block type, its input normed (mm_norm
                * with matmul_q) or not, by K types when 256 wide */
        int64_t d = rnd(G, 0, 1) ? 256 : (int64_t)rnd(G, 1, 3) * 32;
        glc_dtype qt;
        a = pick(G, small_last, NULL);
        if (a < 0 || numel_at(&G->t[a], 8) / last(&G->t[a]) > 8)
            break;
        a = matmul(G, a, d, 1, 0);
        if (rnd(G, 0, 1))
            a = norm(G, a, rnd(G, 0, 1));
        qt = block_type(G, d);
        a = matmul_qt(G, a, (int64_t)rnd(G, 1, 4) * 4, 1, (int)rnd(G, 0, 3) == 0, qt);
        break;
    }
    case 15: { /* rope, then maybe a norm of it, or its rows into the cache
                * (a KV-cache append: rope_rows when nothing else reads it) */
        int r3, rows = (int)rnd(G, 0, 1);
        a = pick(G, ropeable, NULL);
        if (a < 0)
            break;
        a = rope(G, a, &r3, !rows || rnd(G, 0, 1)); /* (without the view back, the
                                                     * cache is its one reader) */
        if (rows)
            set_rows(G, r3);
        else if (rnd(G, 0, 1))
            norm(G, a, rnd(G, 0, 1));
        break;
    }
    default: /* make an intermediate an output: fusions through it must stop (not
              * the cache: a later write would leave it gone) */
        if (G->nout < 3 && G->t[a].kind != H_INPUT && !G->t[a].hv) {
            int i;
            for (i = 0; i < G->nout; i++)
                if (G->out[i] == a)
                    return;
            G->out[G->nout++] = a;
        }
        break;
    }
}

/* ---- the host evaluation ---- */

/* The graph on the host at row count tv, in double; with f32, each value
 * rounded to f32 as it is made (values stored as the GPU stores them),
 * whose distance from the double values measures how much f32 rounding
 * alone moves an output (a chain that cancels, then an rms_norm that
 * scales the rounding up: seed 2500's c - x c - c + x c) */
static void eval(gen *G, int64_t tv, const float *x, const float *c, const float *sq, int f32)
{
    int i;
    for (i = 0; i < G->nt; i++) {
        ht *h = &G->t[i];
        int64_t n = numel_at(h, tv), e;
        free(h->v);
        h->v = calloc((size_t)n, sizeof *h->v);
        assert_non_null(h->v);
        switch (h->kind) {
        case H_INPUT:
            for (e = 0; e < n; e++)
                h->v[e] = h->name[0] == 'x' ? x[e] : h->name[0] == 'c' ? c[e] : sq[e];
            break;
        case H_PARAM:
            for (e = 0; e < n; e++)
                h->v[e] = h->pval[e];
            break;
        case H_RESHAPE:
        case H_CAST: /* (the f16 inputs' values are f16 already) */
            memcpy(h->v, G->t[h->in[0]].v, (size_t)n * sizeof *h->v);
            break;
        case H_SCALE:
            for (e = 0; e < n; e++)
                h->v[e] = G->t[h->in[0]].v[e] * h->f[0] + h->f[1];
            break;
        case H_UNARY:
            for (e = 0; e < n; e++)
                h->v[e] = ref_act(h->act, G->t[h->in[0]].v[e], 0.0, 0.0);
            break;
        case H_BIN: {
            const ht *A = &G->t[h->in[0]], *B = &G->t[h->in[1]];
            int r = h->rank, d;
            for (e = 0; e < n; e++) {
                int64_t rem = e, ia = 0, ib = 0, sa = 1, sb = 1;
                double va, vb;
                for (d = r - 1; d >= 0; d--) {
                    int64_t od = dim_at(h->shape[d], tv), idx = rem % od;
                    int ad = d - (r - A->rank), bd = d - (r - B->rank);
                    int64_t na = ad >= 0 ? dim_at(A->shape[ad], tv) : 1;
                    int64_t nb = bd >= 0 ? dim_at(B->shape[bd], tv) : 1;
                    rem /= od;
                    ia += (na == 1 ? 0 : idx) * sa;
                    ib += (nb == 1 ? 0 : idx) * sb;
                    sa *= na;
                    sb *= nb;
                }
                va = A->v[ia];
                vb = B->v[ib];
                h->v[e] = h->binop == 0 ? va + vb : h->binop == 1 ? va - vb : va * vb;
            }
            break;
        }
        case H_MATMUL: {
            const ht *A = &G->t[h->in[0]], *W = &G->t[h->in[1]];
            int64_t k = last(A), nn = last(h), rows = n / nn, r, j, q;
            for (r = 0; r < rows; r++)
                for (j = 0; j < nn; j++) {
                    double s = h->in[2] >= 0 ? G->t[h->in[2]].v[j] : 0;
                    for (q = 0; q < k; q++)
                        s += A->v[r * k + q] * (h->nt ? W->v[j * k + q] : W->v[q * nn + j]);
                    h->v[r * nn + j] = s;
                }
            break;
        }
        case H_IDS:
        case H_POS:
            for (e = 0; e < n; e++)
                h->v[e] = h->kind == H_IDS ? G->idv[e] : G->posv[e];
            break;
        case H_HANDLE:
            memcpy(h->v, G->cache_v, (size_t)n * sizeof *h->v);
            break;
        case H_SETROWS: { /* (the positions are distinct rows of the cache) */
            const ht *S = &G->t[h->in[1]];
            int64_t w = h->shape[1] * h->shape[2], r;
            memcpy(h->v, G->t[h->in[0]].v, (size_t)n * sizeof *h->v);
            for (r = 0; r < dim_at(S->shape[0], tv); r++)
                memcpy(&h->v[G->posv[r] * w], &S->v[r * w], (size_t)w * sizeof *h->v);
            break;
        }
        case H_ROPE: { /* ref_rope's, in float, on the operand's values */
            const ht *A = &G->t[h->in[0]];
            int64_t t = dim_at(h->shape[0], tv), hh = h->shape[1], d = h->shape[2];
            float *xf = malloc((size_t)n * sizeof *xf), *of = malloc((size_t)n * sizeof *of);
            assert_true(xf && of);
            for (e = 0; e < n; e++)
                xf[e] = (float)A->v[e];
            ref_rope(xf, 1, t, hh, d, G->posv, h->nt, (int64_t)h->f[1], h->f[0], NULL, of);
            for (e = 0; e < n; e++)
                h->v[e] = of[e];
            free(xf);
            free(of);
            break;
        }
        case H_GETROWS: { /* rows of ids outside the table's rows are zeros */
            const ht *A = &G->t[h->in[0]];
            int64_t d = last(h), rows = numel_at(A, tv) / d, r, j;
            for (r = 0; r < G->nids; r++)
                for (j = 0; j < d; j++)
                    h->v[r * d + j] =
                        G->idv[r] >= 0 && G->idv[r] < rows ? A->v[G->idv[r] * d + j] : 0;
            break;
        }
        case H_SOFTMAX: { /* causal (f[1] >= 0): query q = the row's index in
                           * dim -2 sees keys j <= q + f[1] */
            const ht *A = &G->t[h->in[0]];
            int64_t d = last(h), rows = n / d;
            int64_t tq = h->rank >= 2 ? dim_at(h->shape[h->rank - 2], tv) : 1;
            int64_t r, j;
            for (r = 0; r < rows; r++) {
                int64_t keys = h->f[1] >= 0 ? r % tq + (int64_t)h->f[1] + 1 : d;
                double m = -INFINITY, sum = 0;
                keys = keys < d ? keys : d;
                for (j = 0; j < keys; j++)
                    m = fmax(m, h->f[0] * A->v[r * d + j]);
                for (j = 0; j < keys; j++)
                    sum += exp(h->f[0] * A->v[r * d + j] - m);
                for (j = 0; j < d; j++)
                    h->v[r * d + j] = j < keys ? exp(h->f[0] * A->v[r * d + j] - m) / sum : 0;
            }
            break;
        }
        case H_NORM: {
            const ht *A = &G->t[h->in[0]];
            int64_t d = last(h), rows = n / d, r, j;
            for (r = 0; r < rows; r++) {
                double ss = 0;
                for (j = 0; j < d; j++)
                    ss += A->v[r * d + j] * A->v[r * d + j];
                ss = 1.0 / sqrt(ss / (double)d + 1e-5);
                for (j = 0; j < d; j++)
                    h->v[r * d + j] = A->v[r * d + j] * ss *
                                      (h->in[1] >= 0 ? G->t[h->in[1]].v[j] : 1.0);
            }
            break;
        }
        }
        for (e = 0; f32 && e < n; e++)
            h->v[e] = (double)(float)h->v[e];
    }
}

/* ---- the test ---- */

static glc_plan *compile(gen *G, glc_device *dev, uint32_t flags)
{
    glc_compile_desc cd;
    glc_plan *p = NULL;
    int i;
    cd.flags = flags;
    if (glc_graph_compile(G->g, &cd, &p) != GLC_OK)
        fail_msg("seed %llu: compile (flags %u): %s\n%s", (unsigned long long)g_seed, flags,
                 glc_device_errmsg(dev), G->log);
    for (i = 0; i < G->nt; i++)
        if (G->t[i].kind == H_PARAM &&
            (G->t[i].qraw ? glc_plan_set_param_typed(p, G->t[i].name, G->t[i].qraw,
                                                     glc_dtype_row_bytes(G->t[i].pdt,
                                                                         numel_at(&G->t[i], 1)),
                                                     G->t[i].pdt)
                          : glc_plan_set_param(p, G->t[i].name, G->t[i].pval,
                                               (size_t)numel_at(&G->t[i], 1))) != GLC_OK)
            (void)0; /* a param no live op reads: compile drops it */
    return p;
}

/* A run through the slot API, in the declared order of inputs (x, c[, s][,
 * i]) and outputs: how 0 run_slots, 1 commit_no_wait + sync_pending, 2
 * run_pipelined of two sets (the same inputs; both must match). Outputs
 * as out[k].data gets them. */
static glc_status run_by_slots(gen *G, glc_plan *p, int how, const glc_plan_var *v,
                               const glc_plan_input *in, int nin, const glc_plan_output *out,
                               int nout)
{
    const void *ins[10];
    uint16_t *h[5] = {NULL, NULL, NULL, NULL, NULL}; /* f16 inputs' bytes */
    glc_plan_slice sl[4];
    glc_status st;
    int i;
    if (glc_plan_input_count(p) != nin || glc_plan_output_count(p) != nout)
        fail_msg("seed %llu: the plan has %d inputs and %d outputs, the graph %d and %d\n%s",
                 (unsigned long long)g_seed, glc_plan_input_count(p), glc_plan_output_count(p),
                 nin, nout, G->log);
    if (G->var && (st = glc_plan_set_vars(p, v, 1)) != GLC_OK)
        return st;
    assert_true(nin <= 5);
    for (i = 0; i < nin; i++) {
        ins[i] = in[i].data;
        if (G->in_dt == GLC_DTYPE_F16 && in[i].name[0] != 'i' && in[i].name[0] != 'p') {
            h[i] = malloc(in[i].count * 2 + 1);
            assert_non_null(h[i]);
            assert_int_equal(
                glc_dtype_from_f32(GLC_DTYPE_F16, in[i].data, (int64_t)in[i].count, h[i]), GLC_OK);
            ins[i] = h[i];
        }
        assert_int_equal(glc_plan_input_bytes(p, i),
                         in[i].count * (ins[i] == h[i] ? 2 : 4));
        ins[nin + i] = ins[i];
    }
    if (how == 2) {
        void *outs[8];
        float *second[4];
        for (i = 0; i < nout; i++) {
            assert_int_equal(glc_plan_output_bytes(p, i), out[i].count * sizeof(float));
            second[i] = malloc(out[i].count * sizeof(float));
            assert_non_null(second[i]);
            outs[i] = out[i].data;
            outs[nout + i] = second[i];
        }
        st = glc_plan_run_pipelined(p, 2, ins, outs);
        for (i = 0; i < nout; i++) {
            if (st == GLC_OK && memcmp(second[i], out[i].data, out[i].count * sizeof(float)))
                fail_msg("seed %llu: run_pipelined gave output %d two values for one input\n%s",
                         (unsigned long long)g_seed, i, G->log);
            free(second[i]);
        }
    } else {
        st = how ? glc_plan_commit_no_wait(p, ins) : glc_plan_run_slots(p, ins, sl);
        if (st == GLC_OK && how)
            st = glc_plan_sync_pending(p, sl);
        for (i = 0; st == GLC_OK && i < nout; i++) {
            assert_int_equal(sl[i].bytes, out[i].count * sizeof(float));
            memcpy(out[i].data, (const char *)glc_plan_arena_ptr(p) + sl[i].offset, sl[i].bytes);
        }
    }
    for (i = 0; i < 5; i++)
        free(h[i]);
    return st;
}

static void one_graph(glc_device *dev, int which, int *fused_total)
{
    gen *G = calloc(1, sizeof *G);
    static const char *const kinds[4] = {"fused", "unfused", "fused clone", "unfused clone"};
    glc_plan *pl[4];
    glc_plan_info fi;
    int64_t xs[2], tmax, tv;
    float x[8 * 16], c[8], sq[64];
    int i, i0, nsteps, f, uniq[4], nu = 0;
    assert_non_null(G);
    G->r = g_seed * 1000003ull + (uint64_t)which;
    G->ids = G->pos = G->cache = G->cache_at = -1;
    G->in_dt = rnd(G, 0, 2) ? GLC_DTYPE_F32 : GLC_DTYPE_F16;
    assert_int_equal(glc_graph_create(dev, &G->g), GLC_OK);
    G->var = (int)rnd(G, 0, 1);
    tmax = G->var ? rnd(G, 2, 8) : rnd(G, 1, 8);
    xs[0] = G->var ? glc_graph_var(G->g, "T", 1, tmax) : tmax;
    xs[1] = (int64_t)4 << rnd(G, 0, 2);
    snprintf(G->log, sizeof G->log, "graph %d (%s rows %lld):\n", which,
             G->var ? "variable" : "fixed", (long long)tmax);
    /* x [R, D], c [R, 1] and, with fixed rows, s [R, R] (a reshape of c to
     * [1, R] broadcasts against it: the case) */
    for (i = 0; i < 3 - G->var; i++) {
        static const char *const names[3] = {"x", "c", "s"};
        ht in;
        memset(&in, 0, sizeof in);
        in.kind = H_INPUT;
        in.in[0] = in.in[1] = in.in[2] = -1;
        in.rank = 2;
        in.shape[0] = xs[0];
        in.shape[1] = i == 0 ? xs[1] : i == 1 ? 1 : tmax;
        snprintf(in.name, sizeof in.name, "%s", names[i]);
        in.gt = glc_graph_input(G->g, in.name, G->in_dt, 2, in.shape);
        i0 = push(G, &in, in.name);
        if (G->in_dt != GLC_DTYPE_F32) { /* the ops take f32: a copy to it */
            in.kind = H_CAST;
            in.in[0] = i0;
            in.gt = glc_copy(G->g, in.gt, NULL, GLC_DTYPE_F32);
            push(G, &in, "copy to f32");
        }
    }
    nsteps = (int)rnd(G, 3, 8);
    for (i = 0; i < nsteps && G->nt < MAXT - 12; i++)
        step(G);
    i = G->nt - 1; /* the last value made (not a param, not the ids) */
    while (G->t[i].kind == H_PARAM || G->t[i].kind == H_IDS || G->t[i].kind == H_POS ||
           G->t[i].kind == H_HANDLE)
        i--;
    if (i != G->nt - 1 || G->t[i].kind == H_INPUT)
        unary(G, i, GLC_UNARY_TANH);
    G->out[G->nout++] = G->nt - 1;
    for (i = 0; i < G->nout; i++) {
        char name[8];
        int j, dup = 0;
        for (j = 0; j < nu; j++)
            dup |= uniq[j] == G->out[i];
        if (dup)
            continue;
        snprintf(name, sizeof name, "o%d", nu);
        uniq[nu++] = G->out[i];
        glc_graph_output(G->g, name, G->t[G->out[i]].gt);
    }
    pl[0] = compile(G, dev, 0);
    pl[1] = compile(G, dev, GLC_COMPILE_NO_FUSE);
    for (f = 2; f < 4; f++) /* clones: the same programs, the params shared */
        if (glc_plan_clone(pl[f - 2], &pl[f]) != GLC_OK)
            fail_msg("seed %llu: clone of the %s plan: %s\n%s", (unsigned long long)g_seed,
                     kinds[f - 2], glc_device_errmsg(dev), G->log);
    if (G->cache >= 0) { /* every plan's cache starts at zeros */
        size_t cn = (size_t)numel_at(&G->t[G->cache], 1);
        G->cache_v = calloc(cn, sizeof *G->cache_v);
        float *zero = calloc(cn, sizeof *zero);
        assert_true(G->cache_v && zero);
        for (f = 0; f < 4; f++)
            if (glc_plan_bind_handle(pl[f], "h", zero, cn * sizeof *zero) != GLC_OK)
                fail_msg("seed %llu: binding the cache of the %s plan: %s\n%s",
                         (unsigned long long)g_seed, kinds[f], glc_device_errmsg(dev), G->log);
        free(zero);
    }
    for (f = 1; f >= 0; f--) {
        /* the schedule adds no barrier: between ops the DAG's minimum, plus
         * at most one for each further dispatch of an op */
        assert_int_equal(glc_plan_stats(pl[f], &fi), GLC_OK);
        if (fi.barriers > fi.min_barriers + (fi.dispatches - fi.steps) ||
            fi.levels != (fi.steps ? fi.min_barriers + 1 : 0) ||
            (double)fi.arena_bytes > 1.05 * (double)fi.liveness_bound_levels) {
            glc_plan_dump(pl[f], 0, log_text, G);
            fputs(G->log, stdout); /* (longer than fail_msg's text) */
            fail_msg("seed %llu: %s plan: %u barriers, %u dispatches of %u ops, a DAG of %u "
                     "levels; arena %zu bytes, bound %zu\n%s",
                     (unsigned long long)g_seed, kinds[f], fi.barriers, fi.dispatches, fi.steps,
                     fi.levels, fi.arena_bytes, fi.liveness_bound_levels, G->log);
        }
    }
    *fused_total += (int)fi.fused;
    note(G, "fused %u patterns\n", fi.fused);
    for (tv = tmax; tv >= 1; tv = tv == tmax && tv > 2 ? (tv + 1) / 2 : tv - 1) {
        uint64_t s = G->r ^ (uint64_t)tv;
        glc_plan_var v = {"T", tv};
        int64_t rows = G->var ? tv : tmax;
        double *vf[4]; /* the outputs, f32-rounded (eval) */
        int k;
        ot_fill(&s, x, (size_t)(rows * xs[1]), -1.5f, 1.5f);
        ot_fill(&s, c, (size_t)rows, -1.5f, 1.5f);
        ot_fill(&s, sq, (size_t)(rows * rows), -1.5f, 1.5f);
        ot_round(G->in_dt, x, (size_t)(rows * xs[1])); /* as the plan stores them */
        ot_round(G->in_dt, c, (size_t)rows);
        ot_round(G->in_dt, sq, (size_t)(rows * rows));
        for (k = 0; k < G->nids; k++) /* mostly rows every table has; some past them, or -1 */
            G->idv[k] = (int32_t)(tu_range(&s, 0, 3) ? tu_range(&s, 0, (uint32_t)rows - 1)
                                                      : tu_range(&s, 0, (uint32_t)tmax + 10) - 1);
        for (k = 0; k < rows; k++) /* any position a cache might hold; with the
                                    * cache, distinct rows of it */
            G->posv[k] = (int32_t)tu_range(&s, 0, 4095);
        if (G->cache >= 0) {
            int32_t perm[CACHE_ROWS];
            for (k = 0; k < CACHE_ROWS; k++)
                perm[k] = k;
            for (k = CACHE_ROWS; k > 1; k--) {
                uint32_t j = tu_range(&s, 0, (uint32_t)k - 1);
                int32_t t = perm[k - 1];
                perm[k - 1] = perm[j];
                perm[j] = t;
            }
            for (k = 0; k < rows; k++)
                G->posv[k] = perm[k];
        }
        eval(G, rows, x, c, sq, 1);
        for (k = 0; k < nu; k++) {
            size_t bytes = (size_t)numel_at(&G->t[uniq[k]], rows) * sizeof(double);
            vf[k] = malloc(bytes);
            assert_non_null(vf[k]);
            memcpy(vf[k], G->t[uniq[k]].v, bytes);
        }
        eval(G, rows, x, c, sq, 0);
        for (f = 0; f < 4; f++) {
            glc_plan_input in[5] = {{"x", x, (size_t)(rows * xs[1])},
                                    {"c", c, (size_t)rows},
                                    {"s", sq, (size_t)(rows * rows)}};
            int nin = 3 - G->var, l;
            for (l = 0; l < G->nlate; l++) /* in the order they were made */
                in[nin++] = G->late[l] == G->ids
                                ? (glc_plan_input){"i", G->idv, (size_t)G->nids}
                                : (glc_plan_input){"p", G->posv, (size_t)rows};
            static const char *const names[4] = {"o0", "o1", "o2", "o3"};
            glc_plan_output out[4];
            float *got[4];
            glc_status st;
            for (k = 0; k < nu; k++) {
                out[k].name = names[k];
                out[k].count = (size_t)numel_at(&G->t[uniq[k]], rows);
                got[k] = malloc(out[k].count * sizeof(float));
                out[k].data = got[k];
            }
            if (f < 2) /* the originals by name, the clones by slot */
                st = G->var ? glc_plan_run_with_vars(pl[f], &v, 1, in, nin, out, nu)
                            : glc_plan_run(pl[f], in, nin, out, nu);
            else
                st = run_by_slots(G, pl[f], f == 3 ? 1 + (int)(tv & 1) : 0, &v, in, nin, out, nu);
            if (st != GLC_OK)
                fail_msg("seed %llu, %s plan, T %lld: %s: %s\n%s", (unsigned long long)g_seed,
                         kinds[f], (long long)rows, glc_status_str(st),
                         glc_device_errmsg(dev), G->log);
            for (k = 0; k < nu; k++) {
                const ht *o = &G->t[uniq[k]];
                int64_t e;
                double maxabs = 1;
                for (e = 0; e < (int64_t)out[k].count; e++)
                    maxabs = fabs(o->v[e]) > maxabs ? fabs(o->v[e]) : maxabs;
                for (e = 0; e < (int64_t)out[k].count; e++)
                    if (!(fabs(got[k][e] - o->v[e]) <=
                          2e-3 * maxabs + 4 * fabs(vf[k][e] - o->v[e]))) {
                        note(G, "the %s plan:\n", kinds[f]);
                        glc_plan_dump(pl[f], 0, log_text, G);
                        fputs(G->log, stdout); /* (longer than fail_msg's text) */
                        fail_msg("seed %llu, %s plan, T %lld: output t%d [%lld] is %.7g, "
                                 "reference %.7g",
                                 (unsigned long long)g_seed, kinds[f], (long long)rows, uniq[k],
                                 (long long)e, got[k][e], o->v[e]);
                    }
                free(got[k]);
            }
        }
        for (k = 0; k < nu; k++)
            free(vf[k]);
        if (G->cache >= 0) /* the rows this run wrote stay for the next */
            memcpy(G->cache_v, G->t[G->cache_at].v,
                   (size_t)numel_at(&G->t[G->cache], 1) * sizeof *G->cache_v);
        if (!G->var)
            break;
    }
    for (f = 4; f-- > 0;)
        glc_plan_destroy(pl[f]);
    glc_graph_destroy(G->g);
    for (i = 0; i < G->nt; i++) {
        free(G->t[i].v);
        free(G->t[i].pval);
        free(G->t[i].qraw);
    }
    free(G->cache_v);
    free(G);
}

static void test_random_graphs(void **state)
{
    glc_device *dev = tu_device(NULL);
    int k, fused = 0;
    (void)state;
    for (k = 0; k < 60; k++)
        one_graph(dev, k, &fused);
    printf("random graphs: %d patterns fused over 60 graphs (seed %llu)\n", fused,
           (unsigned long long)g_seed);
    assert_true(fused >= 30); /* the generator does reach the passes */
    glc_device_destroy(dev);
}

int main(void)
{
    const char *seed = getenv("GLC_TEST_SEED");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_graphs),
    };
    if (seed && *seed)
        g_seed = strtoull(seed, NULL, 0);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
