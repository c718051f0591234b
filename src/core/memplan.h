/*
 * The memory plan of a compiled graph, GL-free so it is unit-tested without
 * a GPU: where each tensor lives in the arena.
 *
 * Each tensor has a byte size, a live interval [first, last] of steps
 * (dispatches, in order; both ends inclusive) and a kind. FIXED tensors
 * (inputs, outputs, handles) own their bytes for the whole run; SHARED
 * tensors (intermediates) may share bytes with any tensor whose interval
 * does not overlap theirs. The arena is one or more buffers, each at most
 * max_buffer bytes (the device's SSBO size limit); no tensor straddles two.
 * Offsets are multiples of the alignment (the device's SSBO offset
 * alignment) and sizes are rounded up to it.
 *
 * The plan is the best of several greedy placements (orders by size,
 * start, end, lifetime and size x lifetime, each with best and first fit)
 * refined by a short local search and random orders (see memplan.c);
 * the liveness lower bound it reports lets glc_plan_stats say how close
 * it came.
 */
#ifndef GLC_MEMPLAN_H
#define GLC_MEMPLAN_H

#include "glcompute.h"

#include <stddef.h>
#include <stdint.h>

typedef enum glc__mem_kind {
    GLC__MEM_SHARED = 0, /* intermediate: bytes reused outside [first, last] */
    GLC__MEM_FIXED = 1   /* input, output, handle: bytes of its own */
} glc__mem_kind;

/* One tensor: size, first, last and kind are read; buffer and offset are
 * written by glc__memplan_make. first and last are read only for SHARED
 * tensors. */
typedef struct glc__mem_tensor {
    size_t size;          /* bytes; 0 is allowed */
    int32_t first, last;  /* steps that write it first and read it last */
    glc__mem_kind kind;
    int buffer;           /* out: index of its buffer */
    size_t offset;        /* out: byte offset in that buffer */
} glc__mem_tensor;

/* The result; caller-owned, freed with glc__memplan_finish. */
typedef struct glc__memplan {
    int nbuffers;
    size_t *buffer_size; /* [nbuffers] bytes, each <= max_buffer; NULL when 0 */
    size_t total;        /* sum of buffer_size: the arena's bytes */
    size_t lower_bound;  /* max over steps of the aligned bytes live then,
                            FIXED tensors counting at every step */
} glc__memplan;

/* Plans t[0..n): sets t[i].buffer and t[i].offset for every tensor and
 * fills *out (whose previous contents are ignored, not freed).
 *
 * align must be a power of two >= 4; max_buffer must be in
 * [1, SIZE_MAX / 4]. A tensor of size 0 gets buffer 0 and offset 0 and
 * takes no bytes (buffer 0 may not exist when every tensor is empty).
 * A non-empty tensor lies at an offset that is a multiple of align with
 * offset + size <= buffer_size[buffer]; no two non-empty tensors in one
 * buffer share a byte when either is FIXED or their intervals overlap.
 * A buffer's size is a multiple of align, except that it is capped at
 * max_buffer (so a tensor's padding may pass the end of its buffer, never
 * its bytes). The result depends only on the inputs (ties are broken by
 * index), never on the platform's qsort.
 *
 * Errors, with a message in err (when err is not NULL and errlen > 0):
 * GLC_ERR_INVALID_ARG when out is NULL, t is NULL with n > 0, n is over
 * INT32_MAX, align or max_buffer is out of range, a kind is unknown, a
 * SHARED tensor has first > last, a tensor is larger than max_buffer (the
 * message names its index and size), or the sizes add up past SIZE_MAX;
 * GLC_ERR_OUT_OF_MEMORY. On error neither t nor *out is changed.
 *
 * Cost: each greedy placement is O(n log n + P log n) where P is the
 * number of pairs of SHARED tensors whose intervals overlap, O(n^2) at
 * worst (every interval overlapping every other), plus O(n * nbuffers);
 * there are at most 10 of them plus min(128, 16384 / n) for the local
 * search, and the search ends as soon as a plan meets the lower bound.
 * Thread-safe (no state). */
glc_status glc__memplan_make(glc__mem_tensor *t, size_t n, size_t align, size_t max_buffer,
                             glc__memplan *out, char *err, size_t errlen);

/* Frees what glc__memplan_make allocated and zeroes *p; p may be NULL, and
 * finishing a zeroed plan or finishing twice is allowed. */
void glc__memplan_finish(glc__memplan *p);

#endif
