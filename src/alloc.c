/*
 * Allocation wrappers with a failure-injection countdown (see alloc.h).
 * The countdown is process-wide test state, not error state: release code
 * never sets it, so it stays 0 and every call is a plain libc call.
 */
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

static long fail_countdown; /* 0: off; k: the k-th next allocation fails */
static long failures;

static int should_fail(void)
{
    if (fail_countdown == 0)
        return 0;
    if (fail_countdown > 1) {
        fail_countdown--;
        return 0;
    }
    failures++;
    return 1; /* stays at 1: every later allocation fails too */
}

void glc__alloc_fail_after(long n)
{
    fail_countdown = n > 0 ? n : 0;
    failures = 0;
}

long glc__alloc_failures(void) { return failures; }

void *glc__malloc(size_t size)
{
    return should_fail() ? NULL : malloc(size ? size : 1);
}

void *glc__calloc(size_t count, size_t size)
{
    return should_fail() ? NULL : calloc(count ? count : 1, size ? size : 1);
}

void *glc__realloc(void *ptr, size_t size)
{
    return should_fail() ? NULL : realloc(ptr, size ? size : 1);
}

void glc__free(void *ptr) { free(ptr); }

char *glc__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = glc__malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}
