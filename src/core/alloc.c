/*
 * Host memory (see alloc.h): heaps over a glc_allocator, the thread's
 * current heap, a header per block naming its heap, and the failure
 * injection countdown of the tests.
 *
 * Invariants: a block's header says which heap made it and the size asked
 * for; realloc and free use that heap, never the current one. A heap
 * counts its live blocks (only its device's thread touches it); the
 * malloc heap used when no device is current counts nothing, so threads
 * share it without a race. The countdown is process-wide test state:
 * release code never sets it, so it stays 0.
 */
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct glc__heap {
    glc_allocator a;
    long live;     /* blocks not freed */
    int released;  /* the owner is gone: free the heap with its last block */
    int counted;   /* 0 for the shared malloc heap */
};

typedef struct hdr {
    glc__heap *heap;
    size_t size; /* the caller's bytes */
} hdr;

/* The header, padded so the caller's bytes keep malloc's alignment. */
#define HDR ((sizeof(hdr) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) * _Alignof(max_align_t))

static void *libc_alloc(void *user, size_t size)
{
    (void)user;
    return malloc(size);
}

static void *libc_realloc(void *user, void *ptr, size_t old_size, size_t new_size)
{
    (void)user;
    (void)old_size;
    return realloc(ptr, new_size);
}

static void libc_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)size;
    free(ptr);
}

static glc__heap libc_heap = {{libc_alloc, libc_realloc, libc_free, NULL}, 0, 0, 0};

static _Thread_local glc__heap *tls_heap;

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

/* ---- heaps ---- */

glc_status glc__heap_create(const glc_allocator *a, glc__heap **out)
{
    glc__heap *h;
    glc_allocator use = libc_heap.a;
    if (a && (a->alloc || a->free || a->realloc)) {
        if (!a->alloc || !a->free)
            return GLC_ERR_INVALID_ARG;
        use = *a;
    }
    if (should_fail())
        return GLC_ERR_OUT_OF_MEMORY;
    h = use.alloc(use.user, sizeof *h);
    if (!h)
        return GLC_ERR_OUT_OF_MEMORY;
    memset(h, 0, sizeof *h);
    h->a = use;
    h->counted = 1;
    *out = h;
    return GLC_OK;
}

static void heap_free(glc__heap *h)
{
    glc_allocator a = h->a;
    if (tls_heap == h)
        tls_heap = NULL;
    a.free(a.user, h, sizeof *h);
}

void glc__heap_release(glc__heap *h)
{
    if (!h)
        return;
    if (tls_heap == h)
        tls_heap = NULL;
    h->released = 1;
    if (h->live == 0)
        heap_free(h);
}

void glc__heap_use(glc__heap *h) { tls_heap = h; }
glc__heap *glc__heap_current(void) { return tls_heap; }
long glc__heap_live(const glc__heap *h) { return h ? h->live : 0; }

/* ---- blocks ---- */

static void *user_ptr(hdr *b) { return (unsigned char *)b + HDR; }
static hdr *header_of(void *p) { return (hdr *)(void *)((unsigned char *)p - HDR); }

void *glc__malloc(size_t size)
{
    glc__heap *h = tls_heap ? tls_heap : &libc_heap;
    hdr *b;
    if (should_fail() || size > SIZE_MAX - HDR)
        return NULL;
    b = h->a.alloc(h->a.user, HDR + size);
    if (!b)
        return NULL;
    b->heap = h;
    b->size = size;
    if (h->counted)
        h->live++;
    return user_ptr(b);
}

void *glc__calloc(size_t count, size_t size)
{
    void *p;
    if (size && count > SIZE_MAX / size)
        return NULL;
    p = glc__malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *glc__realloc(void *ptr, size_t size)
{
    hdr *b, *nb;
    glc__heap *h;
    size_t old;
    if (!ptr)
        return glc__malloc(size);
    b = header_of(ptr);
    h = b->heap;
    old = b->size;
    if (should_fail() || size > SIZE_MAX - HDR)
        return NULL;
    if (h->a.realloc) {
        nb = h->a.realloc(h->a.user, b, HDR + old, HDR + size);
        if (!nb)
            return NULL;
    } else {
        nb = h->a.alloc(h->a.user, HDR + size);
        if (!nb)
            return NULL;
        memcpy(user_ptr(nb), ptr, old < size ? old : size);
        h->a.free(h->a.user, b, HDR + old);
        nb->heap = h;
    }
    nb->size = size;
    return user_ptr(nb);
}

void glc__free(void *ptr)
{
    hdr *b;
    glc__heap *h;
    if (!ptr)
        return;
    b = header_of(ptr);
    h = b->heap;
    h->a.free(h->a.user, b, HDR + b->size);
    if (!h->counted)
        return;
    h->live--;
    if (h->released && h->live == 0)
        heap_free(h);
}

char *glc__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = glc__malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}
