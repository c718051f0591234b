/*
 * Benchmark of the hazard tracker against the brute-force oracle, in the
 * same run: CPU nanoseconds per dispatch for check + add (+ the clear when
 * the check asks for a barrier), on streams shaped like real workloads:
 *
 *   chain        every dispatch reads what the previous one wrote: a barrier
 *                every dispatch (3 spans each)
 *   independent  256 independent dispatches between barriers, 8 spans each
 *                (6 reads of whole tensors, 2 writes) over 512 buffers
 *   indep-rnd    the same with reads of random ranges, which cut each
 *                buffer's read set into many pieces (adversarial)
 *   wide         128 independent dispatches between barriers, 16 spans each
 *                (12 reads, 4 writes) over 512 buffers: the most spans a
 *                dispatch binds
 *   wide-rnd     the same with reads of random ranges
 *   transformer  32 layers: 4 weight buffers read-only, one arena buffer
 *                with disjoint slices written and read (norm, parallel q/k/v,
 *                attention, output + residual, norm, parallel gate/up, act,
 *                down + residual)
 *
 * For scale: a GPU dispatch costs ~1.2 us of CPU on NVIDIA (DESIGN.md).
 * The barrier counts of tracker and oracle are printed side by side; they
 * must be equal. The first lines record the CPU, compiler, commit (pass
 * -DGLC_COMMIT='"..."') and date. Build and run:
 *   gcc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iinclude -Isrc \
 *       bench/bench_hazard.c src/core/hazard.c src/core/hazard_oracle.c src/core/alloc.c
 *   ./a.out [milliseconds per measurement, default 200]
 */
#include "hazard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct item {
    const glc__span *s;
    int n; /* -1: an explicit barrier */
} item;

typedef struct stream {
    const char *name;
    item *items;
    size_t nitems, ndisp;
    glc__span *spans;
    size_t nspans, cap;
} stream;

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(uint64_t n)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return (x * 0x2545F4914F6CDD1Dull) % n;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static void stream_init(stream *s, const char *name, size_t max_items,
                        size_t max_spans)
{
    s->name = name;
    s->items = xmalloc(max_items * sizeof *s->items);
    s->spans = xmalloc(max_spans * sizeof *s->spans);
    s->nitems = s->ndisp = s->nspans = 0;
    s->cap = max_spans;
}

static void stream_free(stream *s)
{
    free(s->items);
    free(s->spans);
}

static void barrier(stream *s)
{
    s->items[s->nitems++] = (item){NULL, -1};
}

static void dispatch(stream *s, const glc__span *sp, int n)
{
    if (s->nspans + (size_t)n > s->cap) {
        fprintf(stderr, "stream %s: span array too small\n", s->name);
        exit(1);
    }
    memcpy(&s->spans[s->nspans], sp, (size_t)n * sizeof *sp);
    s->items[s->nitems++] = (item){&s->spans[s->nspans], n};
    s->nspans += (size_t)n;
    s->ndisp++;
}

static glc__span span(uint32_t buf, uint64_t b, uint64_t e, uint32_t acc)
{
    glc__span s = {buf, b, e, acc};
    return s;
}

static void make_chain(stream *s)
{
    enum { N = 1024 };
    stream_init(s, "chain", N + 1, N * 3);
    for (int i = 0; i < N; i++) {
        glc__span sp[3] = {
            span((uint32_t)(i % 4), 0, 1 << 16, GLC_READ),
            span((uint32_t)((i + 1) % 4), 0, 1 << 16, GLC_WRITE),
            span(100, 0, 1 << 20, GLC_READ),
        };
        dispatch(s, sp, 3);
    }
    barrier(s);
}

/* Groups of `per` independent dispatches with `nr` reads of buffers
 * [0, 256) and `nw` writes to disjoint ranges of buffers [256, 512). Reads
 * are whole tensors (one of 16 4-KiB slices of a buffer), or with
 * `random_ranges` any 256-byte-aligned range of 256 B..4 KiB, which cuts
 * the read sets into many more pieces (the adversarial case). */
static void make_independent(stream *s, const char *name, int groups, int per,
                             int nr, int nw, int random_ranges)
{
    stream_init(s, name, (size_t)groups * (size_t)(per + 1),
                (size_t)groups * (size_t)per * (size_t)(nr + nw));
    for (int g = 0; g < groups; g++) {
        for (int j = 0; j < per; j++) {
            glc__span sp[16];
            int n = 0;
            for (int r = 0; r < nr; r++) {
                uint32_t buf = (uint32_t)rnd(256);
                if (random_ranges) {
                    uint64_t b = rnd(256) * 256;
                    sp[n++] = span(buf, b, b + 256 * (1 + rnd(16)), GLC_READ);
                } else {
                    uint64_t b = rnd(16) * 4096;
                    sp[n++] = span(buf, b, b + 4096, GLC_READ);
                }
            }
            for (int w = 0; w < nw; w++) {
                /* Dispatch j owns slot w of buffer 256 + (j + w*per/nw) % 256. */
                uint32_t buf = 256 + (uint32_t)((j + w * per / nw) % 256);
                uint64_t b = (uint64_t)w * 4096;
                sp[n++] = span(buf, b, b + 4096, GLC_WRITE);
            }
            dispatch(s, sp, n);
        }
        barrier(s);
    }
}

static void make_transformer(stream *s)
{
    enum { LAYERS = 32, OPS = 11, ARENA = 10 };
    stream_init(s, "transformer", LAYERS * OPS + 1, LAYERS * OPS * 4);
    const uint64_t S = 1 << 16; /* bytes of one activation */
    for (int l = 0; l < LAYERS; l++) {
        uint64_t x = (uint64_t)(l % 2) * S, x2 = (uint64_t)((l + 1) % 2) * S;
        uint64_t h = 2 * S, q = 3 * S, k = 4 * S, v = 5 * S, a = 6 * S,
                 f1 = 7 * S, f2 = 11 * S;
        uint32_t w = (uint32_t)(l % 4);
        const uint64_t M = 1 << 22;
#define OP(...)                                                               \
    do {                                                                      \
        const glc__span t_[] = {__VA_ARGS__};                                 \
        dispatch(s, t_, (int)(sizeof t_ / sizeof t_[0]));                     \
    } while (0)
        OP(span(ARENA, x, x + S, GLC_READ), span(w, 0, 4096, GLC_READ),
           span(ARENA, h, h + S, GLC_WRITE));
        OP(span(ARENA, h, h + S, GLC_READ), span(w, M, 2 * M, GLC_READ),
           span(ARENA, q, q + S, GLC_WRITE));
        OP(span(ARENA, h, h + S, GLC_READ), span(w, 2 * M, 3 * M, GLC_READ),
           span(ARENA, k, k + S, GLC_WRITE));
        OP(span(ARENA, h, h + S, GLC_READ), span(w, 3 * M, 4 * M, GLC_READ),
           span(ARENA, v, v + S, GLC_WRITE));
        OP(span(ARENA, q, q + S, GLC_READ), span(ARENA, k, k + S, GLC_READ),
           span(ARENA, v, v + S, GLC_READ), span(ARENA, a, a + S, GLC_WRITE));
        OP(span(ARENA, a, a + S, GLC_READ), span(ARENA, x, x + S, GLC_READ),
           span(w, 4 * M, 5 * M, GLC_READ), span(ARENA, x2, x2 + S, GLC_WRITE));
        OP(span(ARENA, x2, x2 + S, GLC_READ), span(w, 0, 4096, GLC_READ),
           span(ARENA, h, h + S, GLC_WRITE));
        OP(span(ARENA, h, h + S, GLC_READ), span(w, 5 * M, 9 * M, GLC_READ),
           span(ARENA, f1, f1 + 4 * S, GLC_WRITE));
        OP(span(ARENA, h, h + S, GLC_READ), span(w, 9 * M, 13 * M, GLC_READ),
           span(ARENA, f2, f2 + 4 * S, GLC_WRITE));
        OP(span(ARENA, f1, f1 + 4 * S, GLC_READ),
           span(ARENA, f2, f2 + 4 * S, GLC_READ_WRITE));
        OP(span(ARENA, f2, f2 + 4 * S, GLC_READ), span(w, 13 * M, 17 * M, GLC_READ),
           span(ARENA, x2, x2 + S, GLC_READ_WRITE));
#undef OP
    }
    barrier(s);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One pass of the stream with "if check != 0: barrier, then add". */
static long pass_tracker(glc__hazard *h, const stream *s)
{
    long barriers = 0;
    for (size_t i = 0; i < s->nitems; i++) {
        const item *it = &s->items[i];
        if (it->n < 0) {
            glc__hazard_clear(h);
            continue;
        }
        if (glc__hazard_check(h, it->s, it->n, NULL)) {
            glc__hazard_clear(h);
            barriers++;
        }
        if (glc__hazard_add(h, it->s, it->n, (uint32_t)i) != GLC_OK) {
            fprintf(stderr, "tracker add failed\n");
            exit(1);
        }
    }
    return barriers;
}

static long pass_oracle(glc__oracle *o, const stream *s)
{
    long barriers = 0;
    for (size_t i = 0; i < s->nitems; i++) {
        const item *it = &s->items[i];
        if (it->n < 0) {
            glc__oracle_clear(o);
            continue;
        }
        if (glc__oracle_check(o, it->s, it->n, NULL)) {
            glc__oracle_clear(o);
            barriers++;
        }
        if (glc__oracle_add(o, it->s, it->n, (uint32_t)i) != GLC_OK) {
            fprintf(stderr, "oracle add failed\n");
            exit(1);
        }
    }
    return barriers;
}

/* Runs passes for at least `min_ms` (after one warm-up pass); returns the
 * best of 5 rounds in ns per dispatch. */
static double time_tracker(const stream *s, long *barriers, double min_ms)
{
    glc__hazard h;
    glc__hazard_init(&h);
    *barriers = pass_tracker(&h, s);
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        long passes = 0;
        double t0 = now_ns(), t1;
        do {
            pass_tracker(&h, s);
            passes++;
            t1 = now_ns();
        } while (t1 - t0 < min_ms * 1e6 / 5);
        double per = (t1 - t0) / ((double)passes * (double)s->ndisp);
        if (per < best)
            best = per;
    }
    glc__hazard_finish(&h);
    return best;
}

static double time_oracle(const stream *s, long *barriers, double min_ms)
{
    glc__oracle o;
    glc__oracle_init(&o);
    *barriers = pass_oracle(&o, s);
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        long passes = 0;
        double t0 = now_ns(), t1;
        do {
            pass_oracle(&o, s);
            passes++;
            t1 = now_ns();
        } while (t1 - t0 < min_ms * 1e6 / 5);
        double per = (t1 - t0) / ((double)passes * (double)s->ndisp);
        if (per < best)
            best = per;
    }
    glc__oracle_finish(&o);
    return best;
}

#ifndef GLC_COMMIT
#define GLC_COMMIT "unknown"
#endif

/* The CPU model from /proc/cpuinfo, or "unknown". */
static void cpu_model(char *out, size_t size)
{
    char line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(out, size, "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += colon[1] == ' ' ? 2 : 1;
            colon[strcspn(colon, "\n")] = 0;
            snprintf(out, size, "%s", colon);
            break;
        }
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    double min_ms = argc > 1 ? atof(argv[1]) : 200;
    char cpu[128], date[32];
    time_t now = time(NULL);
    cpu_model(cpu, sizeof cpu);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
#ifdef __VERSION__
    const char *compiler = __VERSION__;
#else
    const char *compiler = "unknown";
#endif
    printf("cpu: %s\ncompiler: %s\ncommit: %s\ndate: %s\n", cpu, compiler,
           GLC_COMMIT, date);
    enum { NSTREAMS = 6 };
    stream s[NSTREAMS];
    make_chain(&s[0]);
    make_independent(&s[1], "independent", 8, 256, 6, 2, 0);
    make_independent(&s[2], "indep-rnd", 8, 256, 6, 2, 1);
    make_independent(&s[3], "wide", 8, 128, 12, 4, 0);
    make_independent(&s[4], "wide-rnd", 8, 128, 12, 4, 1);
    make_transformer(&s[5]);

    printf("hazard tracker vs oracle: ns per dispatch (check + add, + clear on a barrier), best of 5\n");
    printf("%-12s %9s %7s %10s %10s %9s %9s %8s\n", "stream", "dispatches",
           "spans", "tracker", "oracle", "barriers", "(oracle)", "speedup");
    int mismatch = 0;
    for (int i = 0; i < NSTREAMS; i++) {
        long bt, bo;
        double t = time_tracker(&s[i], &bt, min_ms);
        double o = time_oracle(&s[i], &bo, min_ms);
        printf("%-12s %9zu %7.1f %10.1f %10.1f %9ld %9ld %7.1fx\n", s[i].name,
               s[i].ndisp, (double)s[i].nspans / (double)s[i].ndisp, t, o, bt,
               bo, o / t);
        mismatch |= bt != bo;
        stream_free(&s[i]);
    }
    if (mismatch) {
        printf("MISMATCH: tracker and oracle placed different barriers\n");
        return 1;
    }
    return 0;
}
