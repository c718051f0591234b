// quant.glsl: GGML block decoding, the one home of the Q8_0 / Q4_0 block
// layout for every kernel that reads blocks (get_rows, matmul_q,
// matmul_expert). A block holds 32 values along a row: an f16 scale d,
// then Q8_0 32 int8 (34 bytes), Q4_0 16 bytes of nibbles (18 bytes): value
// j < 16 the low nibble of byte j, value j + 16 its high nibble, q - 8.
// Value = d * q in f32, as GGML dequantizes.
// Blocks sit on 2-byte boundaries, so a 32-bit read may straddle two
// words: glc_q_word funnel-shifts them.
// The lanes functions return 4 values as unsigned offset-binary integers
// (q + GLC_Q8_0_BIAS / q + GLC_Q4_0_BIAS), exact in any float conversion.

#define GLC_QK 32u
#define GLC_Q8_0_BYTES 34u
#define GLC_Q4_0_BYTES 18u
#define GLC_Q8_0_BIAS 128
#define GLC_Q4_0_BIAS 8

// Bytes of one block of storage type t (GLC_T_Q8_0 or GLC_T_Q4_0).
#define GLC_Q_BLOCK_BYTES(t) ((t) == GLC_T_Q8_0 ? GLC_Q8_0_BYTES : GLC_Q4_0_BYTES)

// The 32 bits at byte 4i (high false) or 4i + 2 (high true), given words
// i (lo) and i + 1 (hi).
uint glc_q_word(uint lo, uint hi, bool high)
{
    return high ? (lo >> 16) | (hi << 16) : lo;
}

// The scale d of a block whose first word is w (high: the block starts
// in its high 16 bits).
float glc_q_scale(uint w, bool high)
{
    return unpackHalf2x16(high ? w >> 16 : w).x;
}

// Q8_0: values 4j .. 4j + 3 of a block from its quant word j.
uvec4 glc_q8_0_lanes(uint qw)
{
    uint x = qw ^ 0x80808080u; // offset binary: byte + 128
    return (uvec4(x) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu;
}

// Q4_0: values 4j .. 4j + 3 (s 0) or 16 + 4j .. 16 + 4j + 3 (s 4) of a
// block from its quant word j (j < 4).
uvec4 glc_q4_0_lanes(uint qw, uint s)
{
    return (uvec4(qw) >> uvec4(s, s + 8u, s + 16u, s + 24u)) & 0xFu;
}
