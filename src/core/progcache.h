/*
 * The on-disk program-binary cache, GL-free: file naming, the blob's header
 * and checksum. A driver may accept a corrupt binary and link garbage (seen
 * on NVIDIA), so the blob carries our own checksum and is rejected before
 * it reaches the driver. Writes go to a temporary file renamed into place,
 * so a reader never sees a half-written entry.
 */
#ifndef GLC_PROGCACHE_H
#define GLC_PROGCACHE_H

#include "glcompute.h"

#include <stddef.h>
#include <stdint.h>

/* FNV-1a 64 over `len` bytes, continuing from `h` (start: GLC__FNV_SEED). */
#define GLC__FNV_SEED 0xcbf29ce484222325ull
uint64_t glc__fnv1a(uint64_t h, const void *data, size_t len);

typedef struct glc__progkey {
    uint64_t a, b; /* two independent hashes of driver identity + source */
} glc__progkey;

/* Path of the entry for `key` under `dir` into out (len bytes). */
void glc__progcache_path(const char *dir, glc__progkey key, char *out, size_t len);

/* Loads the entry for `key`: *blob is allocated (caller frees). Returns
 * GLC_ERR_IO with a reason in `why` when missing, truncated, of another key
 * or failing its checksum. */
glc_status glc__progcache_load(const char *dir, glc__progkey key, uint32_t *format,
                               void **blob, size_t *len, char *why, size_t whylen);

/* Stores an entry atomically; GLC_ERR_IO with a reason on failure. */
glc_status glc__progcache_store(const char *dir, glc__progkey key, uint32_t format,
                                const void *blob, size_t len, char *why, size_t whylen);

#endif
