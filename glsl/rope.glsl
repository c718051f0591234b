// rope.glsl: the rotation of one unit of a row, the one home for rope.comp
// and rope_qkv.comp. The including kernel declares ff[] (when HAS_FF) and,
// in main, the locals rot (rotation units per row) and rd (rope_dim); it
// defines NEOX, ALIGNED, HAS_FF and names P_THETA_STEP (kparams.glsl).
// A unit (see rope.comp): u < rot rotates RW pairs, else copies TW
// elements past rope_dim; 16-bit outputs not in whole words are stored a
// half-word at a time with atomics (a neighbour may be another
// invocation's).

// (cos, sin) of theta_i at position p
vec2 rot_of(float p, uint i)
{
    float theta = p * exp2(float(i) * glc_pf(P_THETA_STEP));
#if HAS_FF
    theta /= ff[i];
#endif
    return vec2(cos(theta), sin(theta));
}

// O[e] = val alone: a 16-bit neighbour may belong to another invocation.
#define STORE1(O, T_, e, val)                                                  \
    {                                                                          \
        float v_ = (val); /* read before the half-word is cleared (in place) */ \
        uint e_ = (e);                                                         \
        if ((T_) == GLC_T_F32) {                                               \
            O[e_] = floatBitsToUint(v_);                                       \
        } else {                                                               \
            uint keep_ = (e_ & 1u) == 0u ? 0xffff0000u : 0x0000ffffu;          \
            atomicAnd(O[e_ >> 1], keep_);                                      \
            atomicOr(O[e_ >> 1], glc_pack16(v_, v_, (T_)) & ~keep_);          \
        }                                                                      \
    }

// Unit u of the row starting at element `first` of X (dtype TX_), written
// to O (dtype TO_) at the same element + sh; p the position.
#if ALIGNED && NEOX
#define ROT_UNIT(X, TX_, O, TO_, first, sh, u, p)                              \
    {                                                                          \
        uint i = 2u * (u), a = (first) + i, b = a + (rd >> 1);                 \
        vec2 c0 = rot_of(p, i), c1 = rot_of(p, i + 1u);                        \
        float xa0 = GLC_LOAD(X, TX_, a), xa1 = GLC_LOAD(X, TX_, a + 1u);       \
        float xb0 = GLC_LOAD(X, TX_, b), xb1 = GLC_LOAD(X, TX_, b + 1u);       \
        GLC_STORE2(O, TO_, a + (sh), xa0 * c0.x - xb0 * c0.y,                  \
                   xa1 * c1.x - xb1 * c1.y, true)                              \
        GLC_STORE2(O, TO_, b + (sh), xa0 * c0.y + xb0 * c0.x,                  \
                   xa1 * c1.y + xb1 * c1.x, true)                              \
    }
#else
#if NEOX
#define PAIR_OF(first, u) uint a = (first) + (u), b = a + (rd >> 1);
#else
#define PAIR_OF(first, u) uint a = (first) + 2u * (u), b = a + 1u;
#endif
#if ALIGNED
#define STORE_PAIR(O, TO_, a, b, ya, yb) GLC_STORE2(O, TO_, a, ya, yb, true)
#else
#define STORE_PAIR(O, TO_, a, b, ya, yb) \
    STORE1(O, TO_, a, ya)                \
    STORE1(O, TO_, b, yb)
#endif
#define ROT_UNIT(X, TX_, O, TO_, first, sh, u, p)                              \
    {                                                                          \
        PAIR_OF(first, u)                                                      \
        vec2 c = rot_of(p, (u));                                               \
        float xa = GLC_LOAD(X, TX_, a), xb = GLC_LOAD(X, TX_, b);              \
        float ya = xa * c.x - xb * c.y, yb = xa * c.y + xb * c.x;              \
        STORE_PAIR(O, TO_, a + (sh), b + (sh), ya, yb)                         \
    }
#endif

// The copied unit u (u >= rot) past rope_dim.
#if ALIGNED
#define TAIL_UNIT(X, TX_, O, TO_, first, sh, u)                                \
    {                                                                          \
        uint e = (first) + rd + 2u * ((u) - rot);                              \
        if ((TX_) == (TO_) && (TX_) != GLC_T_F32) /* the word as it is */      \
            O[(e + (sh)) >> 1] = X[e >> 1];                                    \
        else                                                                   \
            GLC_STORE2(O, TO_, e + (sh), GLC_LOAD(X, TX_, e), GLC_LOAD(X, TX_, e + 1u), true) \
    }
#else
#define TAIL_UNIT(X, TX_, O, TO_, first, sh, u)                                \
    {                                                                          \
        uint e = (first) + rd + ((u) - rot);                                   \
        STORE1(O, TO_, e + (sh), GLC_LOAD(X, TX_, e))                          \
    }
#endif
