/*
 * What the command-line examples (transformer, generate) share: the clock,
 * strict parsing of numeric options (the whole argument, in range, every
 * bad value named with the program and option), the library's log routed
 * to stderr under the program's name, and the NMSE of a run's logits
 * against the C reference's.
 */
#ifndef CLI_H
#define CLI_H

#include <glcompute.h>

/* Monotonic seconds. */
double cli_now(void);
/* A decimal integer in [min, max], the whole of s; 0 after a message
 * "prog: opt "s": ..." on stderr. */
int cli_int(const char *prog, const char *opt, const char *s, long long min, long long max,
            long long *out);
/* A finite decimal number in [min, max], the whole of s; as cli_int. */
int cli_num(const char *prog, const char *opt, const char *s, double min, double max, double *out);
/* A glc_log_fn: warnings and traces to stderr, prefixed by the program's
 * name (user: the name, a const char *); errors are left to the caller,
 * which prints each failing call's message once. */
void cli_log(void *user, glc_log_level level, glc_status status, const char *msg);
/* sum (got - ref)^2 / sum ref^2 in double; infinite where got is not
 * finite. */
double cli_nmse(const float *got, const float *ref, int n);

#endif
