/*
 * The command-line examples' shared helpers (cli.h).
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cli_int(const char *prog, const char *opt, const char *s, long long min, long long max,
            long long *out)
{
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || isspace((unsigned char)*s)) {
        fprintf(stderr, "%s: %s \"%s\": not an integer\n", prog, opt, s);
        return 0;
    }
    if (errno == ERANGE || v < min || v > max) {
        fprintf(stderr, "%s: %s \"%s\": out of range (%lld..%lld)\n", prog, opt, s, min, max);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_num(const char *prog, const char *opt, const char *s, double min, double max, double *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0' || isspace((unsigned char)*s) || !isfinite(v)) {
        fprintf(stderr, "%s: %s \"%s\": not a number\n", prog, opt, s);
        return 0;
    }
    if (v < min || v > max) {
        fprintf(stderr, "%s: %s \"%s\": out of range (%g..%g)\n", prog, opt, s, min, max);
        return 0;
    }
    *out = v;
    return 1;
}

void cli_log(void *user, glc_log_level level, glc_status status, const char *msg)
{
    (void)status;
    if (level != GLC_LOG_ERROR)
        fprintf(stderr, "%s: glcompute %s: %s\n", (const char *)user,
                level == GLC_LOG_WARN ? "warning" : "info", msg);
}

double cli_nmse(const float *got, const float *ref, int n)
{
    double e = 0, s = 0;
    int i;
    for (i = 0; i < n; i++) {
        if (!isfinite(got[i]))
            return INFINITY;
        e += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
        s += (double)ref[i] * ref[i];
    }
    return s > 0 ? e / s : e;
}
