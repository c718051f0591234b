/*
 * Fusion passes (fuse.c), GL-free: rewrite a plan's own copy of a graph so
 * that patterns of ops run as one dispatch (rms_norm * weight, SwiGLU,
 * matmul + bias + activation + residual, residual add + rms_norm, rms_norm
 * as a decode matmul's prologue).
 */
#ifndef GLC_FUSE_H
#define GLC_FUSE_H

#include "graph.h"

/* Rewrites g in place; *fused gets the number of patterns fused; align:
 * the device's SSBO offset alignment (parts of a packed value start at
 * multiples of it); ssbo_blocks: its SSBO blocks per compute shader (a
 * matmul with a residual binds 5); max_bytes: the most a binding may take
 * (no pack is made larger). Only GLC_ERR_OUT_OF_MEMORY can fail it. */
glc_status glc__fuse(glc_graph *g, size_t align, uint32_t ssbo_blocks, uint64_t max_bytes,
                     int *fused);

#endif
