/*
 * Fusion passes (fuse.c), GL-free: rewrite a plan's own copy of a graph so
 * that patterns of ops run as one dispatch (rms_norm * weight, SwiGLU,
 * matmul + bias + activation + residual, residual add + rms_norm, rms_norm
 * as a decode matmul's prologue).
 */
#ifndef GLC_FUSE_H
#define GLC_FUSE_H

#include "graph.h"

/* Rewrites g in place for target tg; *fused gets the number of patterns
 * fused. From the target: its SSBO offset alignment (parts of a packed
 * value start at multiples of it), SSBO blocks per compute shader (a
 * matmul with a residual binds 5), the most a binding may take (no pack
 * is made larger) and which kernels it runs (qkv_rope). Only
 * GLC_ERR_OUT_OF_MEMORY can fail it. */
glc_status glc__fuse(glc_graph *g, const glc__target *tg, int *fused);

#endif
