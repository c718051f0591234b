/* Plain C references of the elementwise ops. */
#ifndef GLC_REF_ELEMENTWISE_H
#define GLC_REF_ELEMENTWISE_H

#include "glcompute.h"

/* op: 0 add, 1 sub, 2 mul, 3 div; numpy broadcasting of a and b into
 * out's shape (ranks up to 4, aligned at the last dim). */
void ref_binary(int op, const float *a, int ra, const int64_t *sa, const float *b, int rb,
                const int64_t *sb, float *out, int ro, const int64_t *so);
/* ref_unary's op past the glc_unary_op values: the scale op. */
#define REF_UNARY_SCALE (GLC_UNARY_SOFTCAP + 1)
/* op: a glc_unary_op value, or REF_UNARY_SCALE (x * param + param2). */
void ref_unary(int op, const float *x, float *out, size_t n, float param, float param2);
/* ref_unary's function of one value, in double */
double ref_act(int op, double v, double param, double param2);

#endif
