/*
 * libFuzzer harness: arbitrary bytes become a sequence of graph-builder
 * calls (dim variables, inputs, params, handles with odd shapes and dtypes,
 * every op builder with arbitrary tensors and scalar args, outputs), then
 * the graph is compiled. Built by `make fuzz` with clang
 * -fsanitize=fuzzer,address,undefined; `make fuzz-run` runs it.
 *
 * What it checks, beyond "no crash, no sanitizer report, no leak":
 *  - a graph with a builder error fails to compile with that error;
 *  - a compiled program keeps every binding inside its buffer, never
 *    places two arena tensors that are live at once on the same bytes,
 *    and its barrier plan passes the brute-force oracle (compile.c is run
 *    directly, GL-free, for three targets: llvmpipe's limits, the ES 3.1
 *    minimums, a GPU with subgroups), also after replanning at other
 *    variable values, and fused as the device would for that target;
 *  - the whole glc_graph_compile on the llvmpipe device (one per process,
 *    renewed now and then so its kernel cache stays small) succeeds
 *    whenever compile.c alone does; optionally followed by a clone and
 *    runs with zero params, handles and inputs: by slots, by name, at the
 *    variables' minima and maxima, commit + sync, two runs pipelined, a
 *    handle fed from an output, the dump;
 *  - with failure injection on, every failure is GLC_ERR_OUT_OF_MEMORY
 *    (or the graph's own error, or a state error after an earlier failed
 *    call) and nothing leaks.
 *
 * Input format: byte 0 is the mode (bits 0-1: 0/1/2 the GL-free targets
 * above, 3 the device; bit 2: run the plan; bit 3: fail the k-th
 * allocation, k = next byte + 1). Then records: an opcode byte and its
 * arguments, read by the helpers below (reading past the end gives 0).
 * Tensors are picked from the ones made so far by index; dims are small
 * numbers, multiples of 32, variables (also undeclared ones) or extremes.
 * Graphs whose tensors would take more than LIMIT_BYTES are built but not
 * compiled, so no input allocates much; graphs whose run would take more
 * than about WORK_LIMIT multiply-adds are compiled but not run, so none
 * takes llvmpipe long.
 *
 * `fuzz_graph -write_seeds=DIR` writes a seed corpus (an attention block
 * and a decode layer's attention in every mode, a small graph around each
 * builder) and exits;
 * FUZZ_STATS=1 prints at exit how far the inputs got.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "alloc.h"
#include "compile.h"
#include "device.h"
#include "graph.h"
#include "hazard.h"
#include "op_run.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RECORDS 48
#define MAX_TENSORS 64
#define LIMIT_BYTES ((uint64_t)1 << 22) /* per tensor, at the variables' maxima */
#define RENEW_DEVICE_AFTER 200          /* full compiles */

static glc_device *dev;
static long full_compiles;
/* FUZZ_STATS=1 prints how far inputs got, at exit (to tune the format) */
static struct {
    long inputs, built, small, compiled, full, ran;
} stats;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "fuzz_graph: check failed at line %d: %s\n", __LINE__, #cond); \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* A status the call may return; anything else aborts with the message. */
#define CHECK_ST(st, ok)                                                             \
    do {                                                                             \
        if (!(ok)) {                                                                 \
            fprintf(stderr, "fuzz_graph: line %d: unexpected %s: %s\n", __LINE__,   \
                    glc_status_str(st), glc_device_errmsg(dev));                     \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* ---- reading the input ---- */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t u8(reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static uint64_t u64(reader *r)
{
    uint64_t v = 0;
    int i;
    for (i = 0; i < 8; i++)
        v |= (uint64_t)u8(r) << (8 * i);
    return v;
}

/* Small numbers mostly, block multiples, variables, extremes. */
static int64_t num(reader *r)
{
    static const int64_t special[16] = {0,           -1,         2,          3,
                                        31,          33,         65535,      65536,
                                        1ll << 31,   1ll << 32,  INT32_MAX,  INT64_MAX,
                                        INT64_MIN,   -2,         1ll << 40,  1ll << 62};
    uint8_t b = u8(r);
    switch (b >> 5) {
    case 0:
    case 1:
    case 2:
        return 1 + (b & 63);
    case 3:
        return 32 * (1 + (b & 7));
    case 4:
        return GLC_DIM_VAR(b & 7); /* some are not variables of the graph */
    case 5:
        return special[b & 15];
    case 6:
        return (int64_t)(b & 31) - 8;
    default:
        return (int64_t)u64(r);
    }
}

static float fnum(reader *r)
{
    static const float special[8] = {0.0f, 1.0f, -1.0f, 0.5f, 1e-6f, 1e30f, -1e-30f, 10000.0f};
    uint8_t b = u8(r);
    uint32_t bits;
    float f;
    if (b < 0x80)
        return special[b & 7];
    if (b < 0xc0)
        return (float)(b & 63) - 16.0f;
    bits = (uint32_t)u64(r); /* NaN, inf, denormals */
    memcpy(&f, &bits, sizeof f);
    return f;
}

typedef struct state {
    reader r;
    glc_graph *g;
    glc_tensor t[MAX_TENSORS];
    int nt;
} state;

static glc_tensor tensor(state *s)
{
    uint8_t b = u8(&s->r);
    glc_tensor t;
    if (b < 0xf0 && s->nt)
        return s->t[b % s->nt];
    t.id = b == 0xf0 ? -1 : b == 0xf1 ? INT32_MIN : b == 0xf2 ? INT32_MAX : (int32_t)(b & 15);
    return t;
}

static glc_dtype dtype(reader *r) { return (glc_dtype)(u8(r) % 16); } /* 0 and 15: invalid */

static const char *name(reader *r)
{
    static const char *names[8] = {"x", "y", "w", "b", "k", "v", "", NULL};
    return names[u8(r) & 7];
}

static void keep(state *s, glc_tensor t)
{
    if (s->nt < MAX_TENSORS)
        s->t[s->nt++] = t;
}

/* ---- the builder calls ---- */

enum {
    OP_VAR, OP_INPUT, OP_PARAM, OP_HANDLE, OP_OUTPUT, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SCALE,
    OP_UNARY, OP_SOFTMAX, OP_RMS_NORM, OP_LAYER_NORM, OP_SUM, OP_MEAN, OP_ARGMAX, OP_ROPE,
    OP_MATMUL, OP_MATMUL_AFFINE, OP_MATMUL_Q, OP_MATMUL_EXPERT, OP_SDPA, OP_SDPA_DECODE,
    OP_GET_ROWS, OP_COPY, OP_CONCAT, OP_SLICE, OP_RESHAPE, OP_SET_ROWS, OP_QUERY, OP_COUNT_
};

static void record(state *s)
{
    reader *r = &s->r;
    glc_graph *g = s->g;
    int op = u8(r) % OP_COUNT_;
    switch (op) {
    case OP_VAR: {
        const char *n = name(r);
        int64_t lo = num(r), hi = num(r);
        int64_t v = glc_graph_var(g, n, lo, hi);
        (void)v;
        break;
    }
    case OP_INPUT:
    case OP_PARAM:
    case OP_HANDLE: {
        const char *n = name(r);
        glc_dtype dt = dtype(r);
        int rank = (int)(u8(r) % 6), i; /* 0 and 5: invalid */
        int64_t shape[8];
        for (i = 0; i < 8; i++)
            shape[i] = i < rank ? num(r) : 1;
        keep(s, op == OP_INPUT   ? glc_graph_input(g, n, dt, rank, u8(r) == 0xff ? NULL : shape)
                : op == OP_PARAM ? glc_graph_param(g, n, dt, rank, shape)
                                 : glc_graph_handle(g, n, dt, rank, shape));
        break;
    }
    case OP_OUTPUT: {
        const char *n = name(r);
        glc_graph_output(g, n, tensor(s));
        break;
    }
    case OP_ADD: keep(s, glc_add(g, tensor(s), tensor(s))); break;
    case OP_SUB: keep(s, glc_sub(g, tensor(s), tensor(s))); break;
    case OP_MUL: keep(s, glc_mul(g, tensor(s), tensor(s))); break;
    case OP_DIV: keep(s, glc_div(g, tensor(s), tensor(s))); break;
    case OP_SCALE: {
        glc_tensor x = tensor(s);
        float a = fnum(r), b = fnum(r);
        keep(s, glc_scale(g, x, a, b));
        break;
    }
    case OP_UNARY: {
        glc_unary_op u = (glc_unary_op)(u8(r) % 9);
        glc_tensor x = tensor(s);
        keep(s, glc_unary(g, u, x, fnum(r)));
        break;
    }
    case OP_SOFTMAX: {
        glc_softmax_desc d;
        glc_tensor x = tensor(s);
        int use = u8(r) & 1;
        d.scale = fnum(r);
        d.causal = (int)(u8(r) % 3) - 1;
        d.pos_offset = num(r);
        keep(s, glc_softmax(g, x, use ? &d : NULL));
        break;
    }
    case OP_RMS_NORM: {
        glc_tensor x = tensor(s), w = tensor(s);
        keep(s, glc_rms_norm(g, x, w, fnum(r)));
        break;
    }
    case OP_LAYER_NORM: {
        glc_tensor x = tensor(s), w = tensor(s), b = tensor(s);
        keep(s, glc_layer_norm(g, x, w, b, fnum(r)));
        break;
    }
    case OP_SUM: keep(s, glc_sum(g, tensor(s))); break;
    case OP_MEAN: keep(s, glc_mean(g, tensor(s))); break;
    case OP_ARGMAX: keep(s, glc_argmax(g, tensor(s))); break;
    case OP_ROPE: {
        glc_rope_desc d;
        glc_tensor x = tensor(s), pos = tensor(s), ff = tensor(s);
        int use = u8(r) & 1;
        memset(&d, 0, sizeof d);
        d.mode = (glc_rope_mode)(u8(r) % 3);
        d.rope_dim = num(r);
        d.base = fnum(r);
        keep(s, glc_rope(g, x, pos, use ? &d : NULL, ff));
        break;
    }
    case OP_MATMUL: {
        glc_matmul_desc d;
        glc_tensor a = tensor(s), b = tensor(s), bias = tensor(s);
        int use = u8(r) & 1;
        d.transpose_b = (int)(u8(r) % 3);
        keep(s, glc_matmul(g, a, b, bias, use ? &d : NULL));
        break;
    }
    case OP_MATMUL_AFFINE: {
        glc_tensor a = tensor(s), w = tensor(s), sc = tensor(s), bi = tensor(s), bias = tensor(s);
        int bits = (int)num(r), group = (int)num(r);
        keep(s, glc_matmul_affine(g, a, w, sc, bi, bits, group, bias));
        break;
    }
    case OP_MATMUL_Q: {
        glc_tensor a = tensor(s), w = tensor(s), bias = tensor(s);
        keep(s, glc_matmul_q(g, a, w, bias));
        break;
    }
    case OP_MATMUL_EXPERT: {
        glc_tensor a = tensor(s), w = tensor(s), ids = tensor(s);
        keep(s, glc_matmul_expert(g, a, w, ids));
        break;
    }
    case OP_SDPA:
    case OP_SDPA_DECODE: {
        glc_sdpa_desc d;
        glc_tensor q = tensor(s), k = tensor(s), v = tensor(s);
        int use = u8(r) & 1;
        d.scale = fnum(r);
        d.causal = (int)(u8(r) % 3);
        d.q_offset = num(r);
        d.kv_len = num(r);
        keep(s, op == OP_SDPA ? glc_sdpa(g, q, k, v, use ? &d : NULL)
                              : glc_sdpa_decode(g, q, k, v, use ? &d : NULL));
        break;
    }
    case OP_GET_ROWS: {
        glc_tensor t = tensor(s), ids = tensor(s);
        keep(s, glc_get_rows(g, t, ids));
        break;
    }
    case OP_COPY: {
        int perm[GLC_MAX_DIMS], i, use = u8(r) & 1;
        glc_tensor x = tensor(s);
        for (i = 0; i < GLC_MAX_DIMS; i++)
            perm[i] = (int)(u8(r) % 6) - 1;
        keep(s, glc_copy(g, x, use ? perm : NULL, dtype(r)));
        break;
    }
    case OP_CONCAT: {
        glc_tensor a = tensor(s), b = tensor(s);
        keep(s, glc_concat(g, a, b, (int)(u8(r) % 7) - 2));
        break;
    }
    case OP_SLICE: {
        glc_tensor x = tensor(s);
        int axis = (int)(u8(r) % 7) - 2;
        int64_t start = num(r), len = num(r);
        keep(s, glc_slice(g, x, axis, start, len));
        break;
    }
    case OP_RESHAPE: {
        glc_tensor x = tensor(s);
        int rank = (int)(u8(r) % 6), i;
        int64_t shape[8];
        for (i = 0; i < 8; i++)
            shape[i] = i < rank ? num(r) : 1;
        keep(s, glc_reshape(g, x, rank, u8(r) == 0xff ? NULL : shape));
        break;
    }
    case OP_SET_ROWS: {
        glc_tensor dst = tensor(s), src = tensor(s), ids = tensor(s);
        keep(s, glc_set_rows(g, dst, src, ids));
        break;
    }
    default: { /* the read-only queries */
        int64_t shape[GLC_MAX_DIMS];
        glc_tensor t = tensor(s);
        int rank = glc_tensor_shape(g, t, shape);
        CHECK(rank >= 0 && rank <= GLC_MAX_DIMS);
        (void)glc_tensor_dtype(g, t);
        break;
    }
    }
}

/* ---- checks of a compiled program ---- */

/* Every tensor's bytes at the maxima, or -1 past the limit. */
static int small_enough(const glc_graph *g)
{
    size_t i;
    int d;
    for (i = 0; i < g->nt; i++) {
        /* block types: fewer than 34 bytes an element */
        uint64_t n = glc_dtype_size(g->t[i].dtype) ? glc_dtype_size(g->t[i].dtype) : 34;
        for (d = 0; d < g->t[i].rank; d++) {
            int64_t v = glc__dim_value(g, g->t[i].shape[d], NULL);
            if (v < 1 || (uint64_t)v > LIMIT_BYTES || n * (uint64_t)v > LIMIT_BYTES)
                return 0;
            n *= (uint64_t)v;
        }
    }
    return 1;
}

/* 1 when a run costs llvmpipe little: about WORK_LIMIT multiply-adds in
 * all, at the variables' maxima. Tensors under LIMIT_BYTES still allow an
 * attention or a product of minutes (CI's fuzz run timed out on an sdpa
 * over a long sequence, LP_NUM_THREADS=0); such graphs are compiled and
 * checked, not run. */
#define WORK_LIMIT ((double)(1 << 26))
static int cheap_to_run(const glc_graph *g)
{
    double work = 0;
    size_t i;
    for (i = 0; i < g->nn; i++) {
        glc__op_args a;
        char err[128];
        double out;
        if (glc__graph_node_args(g, i, NULL, &a, err, sizeof err) != GLC_OK)
            continue;
        out = (double)glc__numel(&a.t[a.nin]);
        switch (a.op) {
        case GLC__OP_SDPA:
        case GLC__OP_SDPA_DECODE: /* each output: every key, over the head dim */
            work += out * (double)a.t[1].shape[0] * (double)a.t[0].shape[a.t[0].rank - 1];
            break;
        case GLC__OP_MATMUL:
        case GLC__OP_MATMUL_Q:
        case GLC__OP_MATMUL_AFFINE:
        case GLC__OP_MATMUL_EXPERT: /* each output: K of a */
            work += out * (double)a.t[0].shape[a.t[0].rank - 1];
            break;
        default:
            work += out + (double)glc__numel(&a.t[0]);
        }
    }
    return work <= WORK_LIMIT;
}

static void check_program(const glc__program *p)
{
    const glc_graph *g = p->g;
    size_t i, j, ns = 0;
    int32_t *first, *last;
    glc__event *ev;
    glc__span *sp;
    size_t nev = 0;
    int k;
    /* bindings inside their buffers */
    for (i = 0; i < p->ncmd; i++)
        for (k = 0; k < p->cmd[i].nbind; k++) {
            const glc__cbind *b = &p->cmd[i].bind[k];
            CHECK(b->buffer >= 0 && b->buffer < p->nbuffers);
            CHECK(b->offset <= p->buffer_bytes[b->buffer]);
            CHECK(b->size <= p->buffer_bytes[b->buffer] - b->offset);
            CHECK(b->offset % 4 == 0);
        }
    /* tensors live at once never share bytes (an output lives to the end,
     * an input from the start) */
    first = malloc((g->nt + 1) * sizeof *first);
    last = malloc((g->nt + 1) * sizeof *last);
    CHECK(first && last);
    for (i = 0; i < g->nt; i++) {
        first[i] = g->t[i].kind == GLC__T_INPUT ? 0 : INT32_MAX;
        last[i] = -1;
    }
    for (i = 0; i < p->nsteps; i++) {
        const glc__gnode *nd = &g->n[p->step[i].node];
        for (k = 0; k <= nd->args.nin; k++) {
            int32_t id = nd->tensor[k];
            if (id < 0)
                continue;
            if ((int32_t)i < first[id])
                first[id] = (int32_t)i;
            if ((int32_t)i > last[id])
                last[id] = (int32_t)i;
        }
    }
    for (i = 0; i < g->nout; i++)
        last[g->out[i].tensor] = (int32_t)p->nsteps;
    /* a view (alias) lies inside its root and keeps it alive: compare roots */
    for (i = 0; i < g->nt; i++) {
        size_t off;
        int32_t b = g->t[i].alias ? glc__alias_root(g, (int32_t)i, &off) : -1;
        if (b < 0 || last[i] < 0)
            continue;
        CHECK(p->place[i].region == GLC__REGION_NONE ||
              (p->place[i].buffer == p->place[b].buffer &&
               p->place[i].offset >= p->place[b].offset &&
               p->place[i].offset + p->place[i].bytes <= p->place[b].offset + p->place[b].bytes));
        if (first[i] < first[b])
            first[b] = first[i];
        if (last[i] > last[b])
            last[b] = last[i];
    }
    for (i = 0; i < g->nt; i++) {
        const glc__place *a = &p->place[i];
        if (a->region != GLC__REGION_ARENA || !a->bytes || last[i] < 0 || g->t[i].alias)
            continue;
        CHECK(a->offset + a->bytes <= p->buffer_bytes[a->buffer]);
        for (j = i + 1; j < g->nt; j++) {
            const glc__place *b = &p->place[j];
            if (b->region != GLC__REGION_ARENA || !b->bytes || last[j] < 0 ||
                b->buffer != a->buffer || g->t[j].alias)
                continue;
            if (last[i] < first[j] || last[j] < first[i])
                continue; /* never live at once */
            CHECK(a->offset + a->bytes <= b->offset || b->offset + b->bytes <= a->offset);
        }
        /* and no step's scratch lands on a tensor live during that step */
        for (j = 0; j < p->nsteps; j++) {
            const glc__place *sc = &p->scratch[j];
            if (sc->region != GLC__REGION_ARENA || !sc->bytes || sc->buffer != a->buffer ||
                (int32_t)j < first[i] || (int32_t)j > last[i])
                continue;
            CHECK(a->offset + a->bytes <= sc->offset || sc->offset + sc->bytes <= a->offset);
        }
    }
    free(first);
    free(last);
    /* the schedule adds no barrier (compile.c): between ops the levels of
     * their DAG less one, plus at most one for each further dispatch */
    {
        int64_t nb = 0;
        for (i = 0; i < p->ncmd; i++)
            nb += p->cmd[i].barrier != 0;
        CHECK(nb <= (int64_t)(p->levels ? p->levels - 1 : 0) + (int64_t)p->ncmd - (int64_t)p->nsteps ||
              p->ncmd < p->nsteps);
    }
    /* the barrier plan against the brute-force oracle */
    ev = malloc((2 * p->ncmd + 1) * sizeof *ev);
    sp = malloc((p->ncmd * GLC__OP_MAX_BIND + 1) * sizeof *sp);
    CHECK(ev && sp);
    for (i = 0; i < p->ncmd; i++) {
        const glc__ccmd *c = &p->cmd[i];
        if (c->barrier) {
            memset(&ev[nev], 0, sizeof ev[nev]);
            ev[nev++].is_barrier = 1;
        }
        ev[nev].is_barrier = 0;
        ev[nev].id = (uint32_t)i + 1;
        ev[nev].spans = sp + ns;
        ev[nev].n = 0;
        for (k = 0; k < c->nbind; k++) {
            if (!c->bind[k].size)
                continue;
            sp[ns].buffer = (uint32_t)c->bind[k].buffer;
            sp[ns].begin = c->bind[k].offset;
            sp[ns].end = c->bind[k].offset + c->bind[k].size;
            sp[ns].access = c->bind[k].access;
            ns++;
            ev[nev].n++;
        }
        nev++;
    }
    {
        glc_status st = glc__oracle_validate(ev, nev, NULL, NULL);
        CHECK(st == GLC_OK || st == GLC_ERR_OUT_OF_MEMORY);
    }
    free(ev);
    free(sp);
}

static void target_for(int which, glc__target *tg)
{
    glc__target_of(dev, tg);
    if (which == 1) {
        glc_device_limits *l = &tg->limits;
        int i;
        for (i = 0; i < 3; i++) {
            l->max_group_count[i] = 65535;
            l->max_group_size[i] = i < 2 ? 128 : 64;
        }
        l->max_invocations = 128;
        l->max_shared_bytes = 16384;
        l->max_ssbo_blocks = l->max_ssbo_bindings = 4;
        l->max_ssbo_size = 1u << 27;
        l->ssbo_offset_alignment = 256;
        memset(&tg->features, 0, sizeof tg->features);
    } else if (which == 2) {
        tg->is_llvmpipe = 0;
        tg->limits.max_group_count[0] = 0x7fffffff;
        tg->limits.max_shared_bytes = 49152;
        tg->limits.max_ssbo_size = (uint64_t)1 << 31;
        tg->features.subgroup = 1;
        tg->features.subgroup_size = 32;
        tg->features.subgroup_ops = 0xff;
        tg->features.fp16_arithmetic = 1;
    }
}

static void compile_gl_free(state *s, int which)
{
    glc__target tg;
    glc__program p;
    char err[512];
    glc_status st;
    int v;
    target_for(which, &tg);
    err[0] = '\0';
    st = glc__compile(s->g, &tg, &p, err, sizeof err);
    if (glc_graph_status(s->g) != GLC_OK)
        CHECK(st == glc_graph_status(s->g));
    if (st != GLC_OK)
        return;
    stats.compiled++;
    check_program(&p);
    /* other variable values: every one at its minimum, then alternating */
    for (v = 0; v < 2 && s->g->nvars; v++) {
        int64_t vals[GLC__GRAPH_MAX_VARS];
        int i;
        for (i = 0; i < s->g->nvars; i++)
            vals[i] = (i + v) % 2 ? s->g->var[i].max : s->g->var[i].min;
        if (glc__program_set_vars(&p, vals, err, sizeof err) == GLC_OK)
            check_program(&p);
    }
    glc__program_free(&p);
    /* fused (a copy: the passes rewrite the graph), as the device compiles
     * it for this target: the same checks, and a graph that compiles
     * unfused compiles fused */
    {
        glc_graph *f = glc__graph_clone(s->g);
        if (!f)
            return;
        st = glc__compile_graph(f, &tg, 1, 0, &p, err, sizeof err);
        CHECK_ST(st, st == GLC_OK || st == GLC_ERR_OUT_OF_MEMORY);
        if (st == GLC_OK) {
            check_program(&p);
            glc__program_free(&p);
        }
        glc_graph_destroy(f);
    }
}

/* Mesa's DRI driver leaks a few blocks each time the last EGL display
 * goes and it is unloaded (swrast_dri.so, Mesa 22.3): kept loaded, they
 * stay reachable, so renewing the device reports no leak of ours. */
static int pin_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (strstr(info->dlpi_name, "_dri.so") || strstr(info->dlpi_name, "libgallium"))
        dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    return 0;
}

/* Most inputs are rejected by design: their messages are not news. */
static void quiet_log(void *user, glc_log_level level, glc_status status, const char *msg)
{
    (void)user;
    (void)level;
    (void)status;
    (void)msg;
}

static void device_renew(void)
{
    glc_device_desc desc;
    glc_device_destroy(dev);
    dev = NULL;
    memset(&desc, 0, sizeof desc);
    desc.log = quiet_log;
    desc.log_level = GLC_LOG_ERROR;
    if (glc_device_create(&desc, &dev) != GLC_OK) {
        fprintf(stderr, "fuzz_graph: no device: %s\n", glc_device_errmsg(NULL));
        abort();
    }
    dl_iterate_phdr(pin_one, NULL);
}

static void dump_sink(void *user, const char *text)
{
    (void)user;
    CHECK(text != NULL);
}

/* Runs by name: every input (f32 or i32 values of zero) and every output,
 * at the current variable values. */
static void run_by_name(glc_plan *p, const glc_graph *g, const int64_t *vals, int injecting)
{
    static unsigned char zeros[4 * LIMIT_BYTES + 64], outbuf[4 * LIMIT_BYTES + 64];
    glc_plan_input in[MAX_TENSORS];
    glc_plan_output out[MAX_TENSORS];
    size_t i, used = 0;
    int nin = 0, nout = 0;
    glc_status st;
    for (i = 0; i < g->nt && nin < MAX_TENSORS; i++) {
        glc__tensor t;
        if (g->t[i].kind != GLC__T_INPUT)
            continue;
        glc__graph_tensor_at(g, (int32_t)i, vals, &t);
        in[nin].name = g->t[i].name;
        in[nin].data = zeros;
        in[nin].count = (size_t)glc__numel(&t);
        nin++;
    }
    for (i = 0; i < g->nout && nout < MAX_TENSORS; i++) {
        glc__tensor t;
        glc__graph_tensor_at(g, g->out[i].tensor, vals, &t);
        if (used + 4 * (size_t)glc__numel(&t) > sizeof outbuf)
            return;
        out[nout].name = g->out[i].name;
        out[nout].data = outbuf + used;
        out[nout].count = (size_t)glc__numel(&t);
        used += 4 * (size_t)glc__numel(&t);
        nout++;
    }
    st = glc_plan_run(p, in, nin, out, nout);
    /* quantized inputs or outputs have no f32 form; more than 64 inputs
     * by name is refused */
    CHECK_ST(st, st == GLC_OK || st == GLC_ERR_INVALID_ARG || st == GLC_ERR_UNSUPPORTED ||
                     (injecting && (st == GLC_ERR_OUT_OF_MEMORY || st == GLC_ERR_STATE)));
}

/* Zero params and handles, zero inputs, runs by slots and by name at two
 * variable settings, a handle fed from an output. */
static void run_plan(state *s, glc_plan *p, int injecting)
{
    const glc_graph *g = s->g;
    const void *inputs[MAX_TENSORS + 1];
    glc_plan_slice outs[MAX_TENSORS + 1];
    static unsigned char zeros[LIMIT_BYTES + 64];
    glc_plan_var vars[GLC__GRAPH_MAX_VARS];
    int64_t vals[GLC__GRAPH_MAX_VARS];
    size_t i;
    int k, nin = 0;
    glc_status st;
    for (i = 0; i < g->nt; i++) {
        glc__tensor t;
        glc__graph_tensor_at(g, (int32_t)i, NULL, &t);
        if (g->t[i].kind == GLC__T_PARAM) {
            st = glc_plan_set_param_typed(p, g->t[i].name, zeros, glc__tensor_bytes(&t),
                                          g->t[i].dtype);
            CHECK_ST(st, st == GLC_OK || (injecting && st == GLC_ERR_OUT_OF_MEMORY));
        } else if (g->t[i].kind == GLC__T_HANDLE) {
            st = glc_plan_bind_handle(p, g->t[i].name, zeros, glc__tensor_bytes(&t));
            CHECK_ST(st, st == GLC_OK || (injecting && st == GLC_ERR_OUT_OF_MEMORY));
            if (g->nout) {
                st = glc_plan_set_handle_feed(p, g->t[i].name, g->out[i % g->nout].name);
                CHECK_ST(st, st == GLC_OK || st == GLC_ERR_INVALID_ARG || st == GLC_ERR_BOUNDS);
            }
        } else if (g->t[i].kind == GLC__T_INPUT && nin < MAX_TENSORS) {
            inputs[nin++] = zeros;
        }
    }
    CHECK(glc_plan_input_count(p) == nin);
    if (glc_plan_output_count(p) > MAX_TENSORS)
        return;
    for (k = 0; k < 2; k++) {
        int v;
        st = glc_plan_run_slots(p, inputs, outs);
        CHECK_ST(st, st == GLC_OK || (injecting && (st == GLC_ERR_OUT_OF_MEMORY ||
                                                    st == GLC_ERR_STATE)));
        for (v = 0; v < g->nvars; v++) {
            vars[v].name = g->var[v].name;
            vars[v].value = k ? g->var[v].max : g->var[v].min;
        }
        st = glc_plan_set_vars(p, vars, g->nvars);
        /* a shape that is valid at the maxima need not be at the minima (a
         * slice's range past a dim they shrink: BOUNDS); a step may need
         * more scratch there */
        CHECK_ST(st, st == GLC_OK || st == GLC_ERR_UNSUPPORTED || st == GLC_ERR_INVALID_ARG ||
                         st == GLC_ERR_BOUNDS || (injecting && st == GLC_ERR_OUT_OF_MEMORY));
        if (st != GLC_OK)
            continue;
        for (v = 0; v < g->nvars; v++)
            vals[v] = vars[v].value;
        run_by_name(p, g, vals, injecting);
    }
    /* the two halves of a run, two runs pipelined, the dump */
    st = glc_plan_commit_no_wait(p, inputs);
    CHECK_ST(st, st == GLC_OK || (injecting && (st == GLC_ERR_OUT_OF_MEMORY || st == GLC_ERR_STATE)));
    if (st == GLC_OK) {
        CHECK(glc_plan_is_pending(p));
        st = glc_plan_sync_pending(p, outs);
        CHECK_ST(st, st == GLC_OK);
    }
    {
        static unsigned char outbuf[2][MAX_TENSORS][LIMIT_BYTES / 64];
        const void *in2[2 * (MAX_TENSORS + 1)];
        void *out2[2 * (MAX_TENSORS + 1)];
        int j, nout = glc_plan_output_count(p), fits = 1;
        for (j = 0; j < nout; j++)
            fits &= glc_plan_output_bytes(p, j) <= sizeof outbuf[0][0];
        for (k = 0; k < 2 && fits; k++) {
            for (j = 0; j < nin; j++)
                in2[k * nin + j] = zeros;
            for (j = 0; j < nout; j++)
                out2[k * nout + j] = outbuf[k][j];
        }
        if (fits) {
            st = glc_plan_run_pipelined(p, 2, in2, out2);
            CHECK_ST(st, st == GLC_OK || (injecting && (st == GLC_ERR_OUT_OF_MEMORY ||
                                                        st == GLC_ERR_STATE)));
        }
    }
    st = glc_plan_dump(p, GLC_PLAN_DUMP_SOURCE, dump_sink, NULL);
    CHECK_ST(st, st == GLC_OK || (injecting && st == GLC_ERR_OUT_OF_MEMORY));
}

static void compile_full(state *s, int run, int injecting)
{
    glc_plan *p = NULL, *c = NULL;
    glc__target tg;
    glc__program prog;
    char err[512];
    glc_status st, gl_free;
    /* what compile.c says for this device, first: the GL side must agree */
    target_for(0, &tg);
    gl_free = glc__compile(s->g, &tg, &prog, err, sizeof err);
    if (gl_free == GLC_OK)
        glc__program_free(&prog);
    st = glc_graph_compile(s->g, NULL, &p);
    if (glc_graph_status(s->g) != GLC_OK)
        CHECK(st == glc_graph_status(s->g));
    if (gl_free == GLC_OK && !injecting)
        CHECK_ST(st, st == GLC_OK);
    if (st != GLC_OK) {
        CHECK(p == NULL);
        return;
    }
    if (run && (st = glc_plan_clone(p, &c)) == GLC_OK) {
        CHECK(glc_plan_input_count(c) == glc_plan_input_count(p));
        glc_plan_destroy(c);
    }
    CHECK_ST(st, st == GLC_OK || injecting);
    stats.full++;
    if (run && cheap_to_run(s->g)) {
        stats.ran++;
        run_plan(s, p, injecting);
    }
    glc_plan_destroy(p);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    state s;
    int mode, records;
    long fail_after = 0;
    memset(&s, 0, sizeof s);
    s.r.p = data;
    s.r.n = size;
    mode = u8(&s.r);
    if (mode & 8)
        fail_after = 1 + u8(&s.r);
    if (!dev || ((mode & 3) == 3 && ++full_compiles % RENEW_DEVICE_AFTER == 0))
        device_renew();
    glc__alloc_fail_after(fail_after);
    if (glc_graph_create(dev, &s.g) != GLC_OK) {
        glc__alloc_fail_after(0);
        return 0;
    }
    for (records = 0; records < MAX_RECORDS && s.r.n; records++)
        record(&s);
    stats.inputs++;
    stats.built += glc_graph_status(s.g) == GLC_OK;
    if (small_enough(s.g)) {
        stats.small++;
        if ((mode & 3) == 3)
            compile_full(&s, (mode & 4) != 0, fail_after != 0);
        else
            compile_gl_free(&s, mode & 3);
    }
    glc__alloc_fail_after(0);
    glc_graph_destroy(s.g);
    return 0;
}

/* ---- the seed corpus ---- */

static void put(uint8_t *buf, size_t *n, int v) { buf[(*n)++] = (uint8_t)v; }

static void write_seed(const char *dir, const char *file, const uint8_t *buf, size_t n)
{
    char path[1024];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (!(f = fopen(path, "wb")) || fwrite(buf, 1, n, f) != n) {
        fprintf(stderr, "fuzz_graph: cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

/* dims: 1 + v for v < 64 (byte v), 32 * k (byte 0x60 + k - 1), var i (0x80 + i) */
#define DIM(v) ((v) - 1)
#define DIM32(k) (0x60 + (k) - 1)
#define VAR(i) (0x80 + (i))
/* names: x y w b k v */
enum { NX, NY, NW, NB, NK, NV };

static void write_seeds(const char *dir)
{
    uint8_t b[512];
    size_t n;
    int mode, op;
    for (mode = 0; mode < 8; mode++) {
        /* a transformer block: T = var [1, 4], D = 32 */
        char file[64];
        n = 0;
        put(b, &n, mode);
        put(b, &n, OP_VAR); put(b, &n, NK); put(b, &n, DIM(1)); put(b, &n, DIM(4));
        /* x: input f32 [T, 1, 32] (t0) */
        put(b, &n, OP_INPUT); put(b, &n, NX); put(b, &n, GLC_DTYPE_F32); put(b, &n, 3);
        put(b, &n, VAR(0)); put(b, &n, DIM(1)); put(b, &n, DIM32(1)); put(b, &n, 0);
        /* pos: input i32 [T] (t1) */
        put(b, &n, OP_INPUT); put(b, &n, NY); put(b, &n, GLC_DTYPE_I32); put(b, &n, 1);
        put(b, &n, VAR(0)); put(b, &n, 0);
        /* w: param f32 [32] (t2); b: q8_0 [32, 32] (t3) */
        put(b, &n, OP_PARAM); put(b, &n, NW); put(b, &n, GLC_DTYPE_F32); put(b, &n, 1);
        put(b, &n, DIM32(1));
        put(b, &n, OP_PARAM); put(b, &n, NB); put(b, &n, GLC_DTYPE_Q8_0); put(b, &n, 2);
        put(b, &n, DIM32(1)); put(b, &n, DIM32(1));
        /* h = rms_norm(x, w) (t4); q = matmul_q(h, b) (t5); r = rope(q, pos) (t6) */
        put(b, &n, OP_RMS_NORM); put(b, &n, 0); put(b, &n, 2); put(b, &n, 0);
        put(b, &n, OP_MATMUL_Q); put(b, &n, 4); put(b, &n, 3); put(b, &n, 0xf0);
        put(b, &n, OP_ROPE); put(b, &n, 5); put(b, &n, 1); put(b, &n, 0xf0); put(b, &n, 0);
        put(b, &n, 0); put(b, &n, 0xa0); put(b, &n, 0);
        /* a = sdpa(r, r, q) causal (t7) */
        put(b, &n, OP_SDPA); put(b, &n, 6); put(b, &n, 6); put(b, &n, 5); put(b, &n, 1);
        put(b, &n, 0); put(b, &n, 1); put(b, &n, 0xa0 + 1); put(b, &n, 0xa0);
        /* y = add(x, a) (t8); silu, mul, softmax */
        put(b, &n, OP_ADD); put(b, &n, 0); put(b, &n, 7);
        put(b, &n, OP_UNARY); put(b, &n, GLC_UNARY_SILU); put(b, &n, 8); put(b, &n, 0);
        put(b, &n, OP_MUL); put(b, &n, 9); put(b, &n, 8);
        put(b, &n, OP_SOFTMAX); put(b, &n, 10); put(b, &n, 0); put(b, &n, 0); put(b, &n, 1);
        put(b, &n, 0);
        put(b, &n, OP_OUTPUT); put(b, &n, NY); put(b, &n, 11);
        put(b, &n, OP_OUTPUT); put(b, &n, NV); put(b, &n, 8);
        snprintf(file, sizeof file, "block-%d", mode);
        write_seed(dir, file, b, n);
    }
    for (mode = 0; mode < 8; mode++) {
        /* a decode layer's attention: one projection sliced into q, k, v,
         * rope on q and k, the rows into two caches, sdpa_decode over them
         * with kv_len = L (var [1, 8]): the qkv, rope_rows, rope_qkv and
         * sdpa_rope fusions' pattern */
        char file[64];
        n = 0;
        put(b, &n, mode);
        put(b, &n, OP_VAR); put(b, &n, NK); put(b, &n, DIM(1)); put(b, &n, DIM(8));
        /* x: input f32 [1, 32] (t0); pos: input i32 [1] (t1) */
        put(b, &n, OP_INPUT); put(b, &n, NX); put(b, &n, GLC_DTYPE_F32); put(b, &n, 2);
        put(b, &n, DIM(1)); put(b, &n, DIM32(1)); put(b, &n, 0);
        put(b, &n, OP_INPUT); put(b, &n, NY); put(b, &n, GLC_DTYPE_I32); put(b, &n, 1);
        put(b, &n, DIM(1)); put(b, &n, 0);
        /* w: param f32 [128, 32] (t2); k, v: handles f32 [8, 1, 32] (t3, t4) */
        put(b, &n, OP_PARAM); put(b, &n, NW); put(b, &n, GLC_DTYPE_F32); put(b, &n, 2);
        put(b, &n, DIM32(4)); put(b, &n, DIM32(1));
        put(b, &n, OP_HANDLE); put(b, &n, NK); put(b, &n, GLC_DTYPE_F32); put(b, &n, 3);
        put(b, &n, DIM(8)); put(b, &n, DIM(1)); put(b, &n, DIM32(1));
        put(b, &n, OP_HANDLE); put(b, &n, NV); put(b, &n, GLC_DTYPE_F16); put(b, &n, 3);
        put(b, &n, DIM(8)); put(b, &n, DIM(1)); put(b, &n, DIM32(1));
        /* p = x w^T [1, 128] (t5); its columns 0, 64, 96: q, k, v (t6-t8) */
        put(b, &n, OP_MATMUL); put(b, &n, 0); put(b, &n, 2); put(b, &n, 0xf0); put(b, &n, 1);
        put(b, &n, 1);
        put(b, &n, OP_SLICE); put(b, &n, 5); put(b, &n, 3); put(b, &n, 0xa0); put(b, &n, DIM(64));
        put(b, &n, OP_SLICE); put(b, &n, 5); put(b, &n, 3); put(b, &n, DIM(64)); put(b, &n, DIM(32));
        put(b, &n, OP_SLICE); put(b, &n, 5); put(b, &n, 3); put(b, &n, DIM32(3)); put(b, &n, DIM(32));
        /* [1, 2, 32], [1, 1, 32], [1, 1, 32] (t9-t11) */
        put(b, &n, OP_RESHAPE); put(b, &n, 6); put(b, &n, 3); put(b, &n, DIM(1)); put(b, &n, DIM(2));
        put(b, &n, DIM32(1)); put(b, &n, 0);
        put(b, &n, OP_RESHAPE); put(b, &n, 7); put(b, &n, 3); put(b, &n, DIM(1)); put(b, &n, DIM(1));
        put(b, &n, DIM32(1)); put(b, &n, 0);
        put(b, &n, OP_RESHAPE); put(b, &n, 8); put(b, &n, 3); put(b, &n, DIM(1)); put(b, &n, DIM(1));
        put(b, &n, DIM32(1)); put(b, &n, 0);
        /* rope(q), rope(k) at pos, NEOX, base 10000 (t12, t13) */
        put(b, &n, OP_ROPE); put(b, &n, 9); put(b, &n, 1); put(b, &n, 0xf0); put(b, &n, 1);
        put(b, &n, 1); put(b, &n, 0xa0); put(b, &n, 7);
        put(b, &n, OP_ROPE); put(b, &n, 10); put(b, &n, 1); put(b, &n, 0xf0); put(b, &n, 1);
        put(b, &n, 1); put(b, &n, 0xa0); put(b, &n, 7);
        /* the caches' rows (t14, t15); a = sdpa_decode, q_offset -1, kv_len L (t16) */
        put(b, &n, OP_SET_ROWS); put(b, &n, 3); put(b, &n, 13); put(b, &n, 1);
        put(b, &n, OP_SET_ROWS); put(b, &n, 4); put(b, &n, 11); put(b, &n, 1);
        put(b, &n, OP_SDPA_DECODE); put(b, &n, 12); put(b, &n, 14); put(b, &n, 15); put(b, &n, 1);
        put(b, &n, 0); put(b, &n, 0); put(b, &n, 0xa1); put(b, &n, VAR(0));
        put(b, &n, OP_OUTPUT); put(b, &n, NB); put(b, &n, 16);
        snprintf(file, sizeof file, "decode-%d", mode);
        write_seed(dir, file, b, n);
    }
    { /* found by fuzzing: a matmul over a param split into pieces whose
       * slicing grew the tensor array under piece_product's pointer
       * (graph_split.c; a heap use after free under ASan) */
        static const uint8_t split_slice[84] = {
            0x86, 0x02, 0x02, 0x01, 0x02, 0xba, 0x00, 0x00, 0x00, 0x6d, 0xed, 0x0e, 0x0e, 0x0e,
            0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e,
            0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0xf4, 0x6f, 0x07, 0x00, 0x30, 0x60,
            0x00, 0x00, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e,
            0x0e, 0x0e, 0x0e, 0x63, 0x6f, 0x6d, 0x6d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x6f, 0x5d, 0x00, 0x02, 0x41, 0x0a, 0x01};
        write_seed(dir, "regress-split-slice", split_slice, sizeof split_slice);
    }
    /* every builder once, on small f32 tensors [4, 32], with an output */
    for (op = OP_ADD; op < OP_COUNT_; op++) {
        char file[64];
        int i;
        n = 0;
        put(b, &n, op % 2 ? 3 : op % 3);
        put(b, &n, OP_INPUT); put(b, &n, NX); put(b, &n, GLC_DTYPE_F32); put(b, &n, 2);
        put(b, &n, DIM(4)); put(b, &n, DIM32(1)); put(b, &n, 0);
        put(b, &n, OP_PARAM); put(b, &n, NW); put(b, &n, GLC_DTYPE_F32); put(b, &n, 2);
        put(b, &n, DIM(4)); put(b, &n, DIM32(1));
        put(b, &n, op);
        for (i = 0; i < 8; i++)
            put(b, &n, i % 2);
        put(b, &n, OP_OUTPUT); put(b, &n, NY); put(b, &n, 2);
        snprintf(file, sizeof file, "op-%02d", op);
        write_seed(dir, file, b, n);
    }
}

static void print_stats(void)
{
    fprintf(stderr,
            "fuzz_graph: %ld inputs, %ld built without error, %ld small enough, %ld compiled "
            "GL-free, %ld compiled on the device, %ld run\n",
            stats.inputs, stats.built, stats.small, stats.compiled, stats.full, stats.ran);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    int i;
    if (getenv("FUZZ_STATS"))
        atexit(print_stats);
    for (i = 1; i < *argc; i++)
        if (strncmp((*argv)[i], "-write_seeds=", 13) == 0) {
            write_seeds((*argv)[i] + 13);
            exit(0);
        }
    return 0;
}
