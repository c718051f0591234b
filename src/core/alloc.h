/*
 * Host memory. Every heap allocation of the library goes through these
 * wrappers, which route it to a heap: the glc_allocator of a device
 * (glc_device_desc.allocator), or malloc.
 *
 * Which heap: a thread-local "current heap", set by glc__use_device at the
 * entry of the calls that allocate (glc__enter does it for every GL call,
 * the graph builders and the compiler do it themselves). A device and its
 * objects are used from one thread, so the current heap is the device's.
 * Each block keeps, in a small header, the heap it came from and its size:
 * realloc and free go back to that heap whatever is current, so a block is
 * never freed by an allocator that did not make it, even when an entry
 * point forgot to set the current heap (then the block is merely counted
 * against the wrong device). A heap is freed when its device is gone and
 * its last block is freed.
 *
 * Failure injection for tests: glc__alloc_fail_after(n) makes the n-th
 * allocation from now on return NULL (n >= 1), and every one after it
 * until reset with n = 0. Tests loop n = 1, 2, ... until the call under
 * test succeeds, under ASan, to show that every failure path reports
 * GLC_ERR_OUT_OF_MEMORY and leaks nothing (SQLite's OOM-test habit).
 * tests/test_oom.c does the same through a device's allocator hook.
 */
#ifndef GLC_ALLOC_H
#define GLC_ALLOC_H

#include "glcompute.h"

#include <stddef.h>

void *glc__malloc(size_t size);
void *glc__calloc(size_t count, size_t size);
void *glc__realloc(void *ptr, size_t size);
void glc__free(void *ptr);
char *glc__strdup(const char *s);

typedef struct glc__heap glc__heap;

/* A heap over `a` (NULL or all zero: malloc). GLC_ERR_INVALID_ARG when
 * only one of alloc and free is set, or realloc without them;
 * GLC_ERR_OUT_OF_MEMORY when the heap's own block cannot be had. */
glc_status glc__heap_create(const glc_allocator *a, glc__heap **out);
/* Its owner is gone: the heap is freed now if no block of it is live, else
 * when the last one is freed. NULL: no-op. */
void glc__heap_release(glc__heap *h);
/* This thread's allocations go to h from now on (NULL: malloc). */
void glc__heap_use(glc__heap *h);
glc__heap *glc__heap_current(void);
/* Blocks of h not freed yet. */
long glc__heap_live(const glc__heap *h);

/* glc__heap_use of the device's heap (device.c); NULL: malloc. */
struct glc_device;
void glc__use_device(const struct glc_device *dev);

/* Test hook; not thread-safe, tests only. */
void glc__alloc_fail_after(long n);
/* How many allocations failed since the last glc__alloc_fail_after. */
long glc__alloc_failures(void);

#endif
