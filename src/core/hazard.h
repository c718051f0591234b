/*
 * Buffer-range hazard tracking, GL-free so it is unit-tested without a GPU.
 *
 * A dispatch binds byte ranges ("spans") of buffers for reading, writing or
 * both. Since the last barrier the tracker keeps the bytes read and the
 * bytes written; a new dispatch conflicts when it reads bytes written
 * earlier (RAW) or writes bytes read (WAR) or written (WAW) earlier. Ranges
 * are half-open, so touching ranges do not overlap; empty ranges never
 * conflict; spans of one dispatch never conflict with each other.
 *
 * glc__hazard is the fast tracker the session and the barrier planner use;
 * glc__oracle is the brute-force checker that keeps every dispatch and
 * compares all pairs: the tracker is tested against it on random streams,
 * and GLC_VALIDATE checks every emitted stream with glc__oracle_validate.
 *
 * Both are caller-owned (_init/_finish) and used from one thread.
 */
#ifndef GLC_HAZARD_H
#define GLC_HAZARD_H

#include "glcompute.h"

#include <stddef.h>
#include <stdint.h>

/* One byte range [begin, end) of a buffer and how a dispatch uses it.
 * `buffer` is any 32-bit id (the library's buffer id); `access` holds the
 * GLC_READ / GLC_WRITE bits. begin == end is an empty span. */
typedef struct glc__span {
    uint32_t buffer;
    uint64_t begin, end;
    uint32_t access;
} glc__span;

enum { GLC__HAZ_RAW = 1, GLC__HAZ_WAR = 2, GLC__HAZ_WAW = 4 };

/* The barriers GL-free code asks for, by what the consumer reads; the
 * encoder (encode.c, glc__gl_barrier_bits) maps them to GL bits. STORAGE
 * orders storage accesses (RAW, WAR, WAW); BUFFER_UPDATE host reads and
 * API writes after shader writes; UNIFORM uniform-block reads; COMMAND
 * indirect group counts. */
typedef enum glc__barrier_kind {
    GLC__BARRIER_STORAGE = 1u << 0,
    GLC__BARRIER_BUFFER_UPDATE = 1u << 1,
    GLC__BARRIER_UNIFORM = 1u << 2,
    GLC__BARRIER_COMMAND = 1u << 3
} glc__barrier_kind;

/* Why a dispatch conflicts. `kinds` is the whole dispatch's mask (the value
 * the check returned); the other fields describe one conflict found: an
 * earlier dispatch's id, and the overlapping bytes [begin, end) of `buffer`
 * that both it and the new dispatch touch, with accesses that conflict. */
typedef struct glc__conflict {
    unsigned kinds;
    uint32_t earlier;
    uint32_t buffer;
    uint64_t begin, end;
} glc__conflict;

/* 1 when spans[0..n) is a well-formed span list for an add: n >= 0, spans
 * non-NULL when n > 0, every span with begin <= end and access one of
 * GLC_READ, GLC_WRITE, GLC_READ_WRITE. Shared by the tracker and the oracle
 * so both reject exactly the same input. */
static inline int glc__spans_valid(const glc__span *spans, int n)
{
    if (n < 0 || (n > 0 && !spans))
        return 0;
    for (int i = 0; i < n; i++)
        if (spans[i].begin > spans[i].end || spans[i].access < 1 ||
            spans[i].access > 3)
            return 0;
    return 1;
}

/* ---- The tracker --------------------------------------------------------- */

/* Internal representation; read the fields only in tests. */
enum { GLC__HAZ_TAIL = 8 }; /* recent ranges kept unsorted per set */

typedef struct glc__hazard_piece {
    uint64_t begin, end;
    uint32_t id;
} glc__hazard_piece;

typedef struct glc__hazard_set {
    /* The latest ranges added, unsorted, oldest first: lanes [0, nt) in
     * use; the others hold stale values, masked off by nt. */
    uint64_t tb[GLC__HAZ_TAIL], te[GLC__HAZ_TAIL];
    uint32_t tid[GLC__HAZ_TAIL];
    uint32_t nt;
    /* Older ranges: sorted, disjoint, non-empty pieces, each with the id of
     * the last dispatch that touched its bytes. */
    glc__hazard_piece *v;
    size_t n, cap;
} glc__hazard_set;

typedef struct glc__hazard_buf {
    uint32_t buffer;
    uint32_t slot;    /* its index in the hash table */
    uint32_t stamp;   /* the add call that last reset need[] */
    uint32_t need[2]; /* ranges the add in progress puts in each set */
    glc__hazard_set set[2]; /* [0]: bytes read, [1]: bytes written */
} glc__hazard_buf;

typedef struct glc__hazard_slot {
    uint32_t key; /* buffer id */
    uint32_t rec; /* index into bufs + 1 (low 30 bits), a flag per non-empty
                     set (bits 30, 31); 0 marks an empty slot */
} glc__hazard_slot;

typedef struct glc__hazard {
    glc__hazard_buf *bufs;   /* [0, nbufs): buffers touched since the barrier */
    size_t nbufs, pool, bufcap; /* [nbufs, pool): idle, keeping capacity */
    glc__hazard_slot *slots; /* open addressing, linear probing, load <= 1/2 */
    uint32_t mask;           /* table size - 1 (table size is a power of 2) */
    unsigned shift;          /* 32 - log2(table size) */
    uint32_t stamp;          /* counts add calls */
    size_t entries;          /* ranges held: pieces plus tail lanes in use */
} glc__hazard;

/* Initialises an empty tracker; it allocates nothing until the first add. */
void glc__hazard_init(glc__hazard *h);

/* Frees everything the tracker holds and leaves it empty and initialised
 * (finishing twice, or adding again after finish, is allowed). */
void glc__hazard_finish(glc__hazard *h);

/* Returns the mask of GLC__HAZ_* kinds by which the dispatch spans[0..n)
 * conflicts with the dispatches added since the last clear, 0 for none.
 * Does not modify the tracker. Empty spans (begin >= end) and access bits
 * other than GLC_READ / GLC_WRITE are ignored. When the mask is not 0 and
 * `why` is not NULL, *why gets the mask and one conflict: the bytes where
 * one span of the new dispatch meets the bytes last touched (in the
 * conflicting way) by the dispatch named in why->earlier; when the mask is
 * 0, *why is untouched. Cost per span: a hash lookup, a scan of
 * GLC__HAZ_TAIL recent ranges and a binary search of the older ones. */
unsigned glc__hazard_check(const glc__hazard *h, const glc__span *spans, int n,
                           glc__conflict *why);

/* Adds the dispatch spans[0..n), identified by `id` (any value, not
 * necessarily unique), to the read and write sets. Does not check for
 * conflicts (call check first and clear when it
 * reports one, if the dispatch is to follow a barrier). Errors:
 * GLC_ERR_INVALID_ARG when the list is not glc__spans_valid,
 * GLC_ERR_OUT_OF_MEMORY; on either the tracker is unchanged (same
 * decisions, same entries) and still usable. After warm-up on a repeated
 * stream, add allocates nothing. Cost per span: a hash lookup and an
 * append, plus, every GLC__HAZ_TAIL ranges of a set, merging them into its
 * sorted pieces. Spans of one dispatch may overlap each other. */
glc_status glc__hazard_add(glc__hazard *h, const glc__span *spans, int n,
                           uint32_t id);

/* A barrier: forgets every range. Costs O(buffers touched since the last
 * clear) and keeps all capacity, so the steady state does not allocate. */
void glc__hazard_clear(glc__hazard *h);

/* The number of ranges held now, over all buffers and both sets: sorted
 * pieces plus recent unsorted ranges; 0 after a clear. For tests and
 * statistics. */
size_t glc__hazard_entries(const glc__hazard *h);

/* ---- The brute-force oracle --------------------------------------------- */

typedef struct glc__oracle_disp {
    uint32_t id;
    size_t first, n; /* its non-empty spans: spans[first, first + n) */
} glc__oracle_disp;

/* Keeps every dispatch's spans since the last clear; checks all pairs. */
typedef struct glc__oracle {
    glc__span *spans;
    size_t nspans, span_cap;
    glc__oracle_disp *disp;
    size_t ndisp, disp_cap;
} glc__oracle;

/* Initialises an empty oracle; it allocates nothing until the first add. */
void glc__oracle_init(glc__oracle *o);

/* Frees everything and leaves the oracle empty and initialised. */
void glc__oracle_finish(glc__oracle *o);

/* Same contract and same mask as glc__hazard_check, by comparing the new
 * spans with every span kept. *why names the oldest earlier dispatch that
 * conflicts, and the overlap of the first conflicting pair of spans (new
 * spans in order, its spans in order). Cost: O(n * spans kept). */
unsigned glc__oracle_check(const glc__oracle *o, const glc__span *spans,
                           int n, glc__conflict *why);

/* Keeps the dispatch spans[0..n) with `id`. Errors as glc__hazard_add;
 * on error the oracle is unchanged. */
glc_status glc__oracle_add(glc__oracle *o, const glc__span *spans, int n,
                           uint32_t id);

/* A barrier: forgets every dispatch; keeps capacity. */
void glc__oracle_clear(glc__oracle *o);

/* One event of an emitted stream: a barrier, or a dispatch with its spans. */
typedef struct glc__event {
    int is_barrier;
    uint32_t id;
    const glc__span *spans;
    int n;
} glc__event;

/* Checks the stream ev[0..n) in order: GLC_OK when every dispatch that
 * conflicts with an earlier dispatch has a barrier in between. Else
 * GLC_ERR_HAZARD with *bad = the index in ev of the first dispatch that
 * conflicts and *why as glc__oracle_check gives it (why->earlier: the oldest
 * dispatch since the last barrier it conflicts with). GLC_ERR_INVALID_ARG
 * when ev is NULL with n > 0 (*bad untouched) or a dispatch's spans are not
 * glc__spans_valid (*bad = its index); GLC_ERR_OUT_OF_MEMORY. `bad` and
 * `why` may be NULL; they are written only with GLC_ERR_HAZARD (and *bad
 * with GLC_ERR_INVALID_ARG as said). */
glc_status glc__oracle_validate(const glc__event *ev, size_t n, size_t *bad,
                                glc__conflict *why);

#endif
