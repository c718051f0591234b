/*
 * The graph builder, GL-free: tensors (inputs, params, values made by
 * nodes), nodes (an op instance of the op table with its tensor ids), dim
 * variables, named outputs, and the sticky first error. Shapes of values
 * are inferred by the op table's rules when a node is added; a dim that
 * follows a variable is kept symbolic (GLC_DIM_VAR), found by inferring the
 * node again with each variable one below its maximum.
 */
#ifndef GLC_GRAPH_H
#define GLC_GRAPH_H

#include "ops.h"

#define GLC__GRAPH_MAX_VARS 8

typedef enum glc__tkind {
    GLC__T_INPUT = 1,
    GLC__T_PARAM,
    GLC__T_VALUE,
    GLC__T_HANDLE /* persistent state: its own buffer, kept across runs */
} glc__tkind;

typedef struct glc__gtensor {
    glc__tkind kind;
    glc_dtype dtype;
    int rank;
    int64_t shape[GLC_MAX_DIMS]; /* >= 1, or GLC_DIM_VAR(i) */
    char *name;                  /* inputs, params; NULL for values */
    int32_t producer;            /* node index for values, else -1 */
    int32_t alias;               /* 0, or 1 + the tensor whose bytes this one is part of
                                  * (fusion: an output of a multi-output kernel, a weight
                                  * inside a packed weight) */
    size_t alias_offset;         /* bytes into it */
    uint32_t hver;               /* a handle, or a value that is one after writes (set_rows,
                                  * a reshape of it): the writes to it this value has seen */
    uint32_t hwrites;            /* a handle: the writes made to it so far */
    int packed;                  /* made by fusion from aliases, which are what users
                                  * set and read (a packed param is set through them) */
    /* params past the device's buffer size, split by rows (graph_split.c) */
    int32_t pieces, npieces;     /* the param: 1 + its first piece (pieces are
                                  * consecutive), and their count; 0 0 unsplit */
    int32_t piece_of;            /* a piece: 1 + the param it is rows of */
    int64_t piece_row0;          /* its first row there */
    size_t piece_offset;         /* and the bytes before it in the param's data */
} glc__gtensor;

typedef struct glc__gnode {
    glc__op_args args;                     /* shapes at the variables' maxima */
    int32_t tensor[GLC__OP_MAX_TENSORS];   /* inputs then outputs; -1 absent */
    glc_dtype odt;                         /* the output dtype asked for */
    glc__op_scalars raw;                   /* scalar args as given (may name variables) */
    int dead;                              /* absorbed by a fused node: never runs */
} glc__gnode;

typedef struct glc__gvar {
    char *name;
    int64_t min, max;
} glc__gvar;

typedef struct glc__goutput {
    char *name;
    int32_t tensor;
} glc__goutput;

struct glc_graph {
    struct glc_device *dev;
    glc_status status;
    char errmsg[512];
    glc__gtensor *t;
    size_t nt, tcap;
    glc__gnode *n;
    size_t nn, ncap;
    glc__gvar var[GLC__GRAPH_MAX_VARS];
    int nvars;
    glc__goutput *out;
    size_t nout, outcap;
};

/* Adds a node for `op` with inputs in[0..nin) (-1: absent optional), the
 * output dtype `odt` (0: the rule's choice, F32 by default) and scalar args
 * `raw` (NULL: all 0); returns the output tensor. Sticky errors. */
glc_tensor glc__graph_node(glc_graph *g, glc__op op, const int32_t *in, int nin, glc_dtype odt,
                           const glc__op_scalars *raw);

/* Appends a tensor of `kind` (fusion: a packed value or weight); returns
 * its id, or -1 with the graph's sticky error set. */
int32_t glc__graph_add_tensor(glc_graph *g, glc__tkind kind, const char *name, glc_dtype dtype,
                              int rank, const int64_t *shape);

/* Param w split into pieces when it is larger than the device binds and
 * a per-piece node can read it (graph_split.c): the number of pieces, the
 * first's id in *first; 0 when it needs no split (or cannot have one), -1
 * with the graph's error set on failure. Pieces are made once. */
int glc__split_param(glc_graph *g, glc_tensor w, int32_t *first);
/* matmul (op GLC__OP_MATMUL: transposed nt or not) or matmul_q of a with
 * split param pieces first .. first + n - 1, bias optional (id < 0). */
glc_tensor glc__split_matmul(glc_graph *g, glc__op op, glc_tensor a, int32_t first, int n,
                             glc_tensor bias, int nt);

/* get_rows whose table's first row has id row0 (ids outside it: zeros). */
glc_tensor glc__get_rows_from(glc_graph *g, glc_tensor table, glc_tensor ids, int64_t row0);

/* Sets the graph's sticky error (when it has none) and returns no tensor. */
glc_tensor glc__graph_fail(glc_graph *g, glc_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The tensor t is part of, followed to the end (t itself when it is no
 * alias); *offset gets the bytes into it. */
int32_t glc__alias_root(const glc_graph *g, int32_t t, size_t *offset);
/* The handle t is, as it was before a later write to it (a read of it now
 * would see that write's rows): its root, else -1. */
int32_t glc__handle_stale(const glc_graph *g, int32_t t);

/* Node `node`'s args with the variables at vals (NULL: maxima), checked
 * by the op's rule (which fills in the output). */
glc_status glc__graph_node_args(const glc_graph *g, size_t node, const int64_t *vals,
                                glc__op_args *a, char *err, size_t errlen);

/* A deep copy (names included), for a plan to keep; NULL when out of
 * memory. */
glc_graph *glc__graph_clone(const glc_graph *g);

/* Tensor `id` with the variables at vals (NULL: maxima). */
void glc__graph_tensor_at(const glc_graph *g, int32_t id, const int64_t *vals, glc__tensor *t);

/* The value of a shape dim with the variables at `vals` (NULL: maxima). */
int64_t glc__dim_value(const glc_graph *g, int64_t d, const int64_t *vals);

#endif
