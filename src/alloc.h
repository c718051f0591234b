/*
 * Every heap allocation of the library goes through these wrappers, so tests
 * can inject failures: glc__alloc_fail_after(n) makes the n-th allocation
 * from now on return NULL (n >= 1), and every one after it until reset with
 * n = 0. Tests loop n = 1, 2, ... until the call under test succeeds, under
 * ASan, to show that every failure path reports GLC_ERR_OUT_OF_MEMORY and
 * leaks nothing (SQLite's OOM-test habit).
 */
#ifndef GLC_ALLOC_H
#define GLC_ALLOC_H

#include <stddef.h>

void *glc__malloc(size_t size);
void *glc__calloc(size_t count, size_t size);
void *glc__realloc(void *ptr, size_t size);
void glc__free(void *ptr);
char *glc__strdup(const char *s);

/* Test hook; not thread-safe, tests only. */
void glc__alloc_fail_after(long n);
/* How many allocations failed since the last glc__alloc_fail_after. */
long glc__alloc_failures(void);

#endif
