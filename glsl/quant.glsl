// quant.glsl: GGML block decoding, the one home of the block layouts for
// every kernel that reads blocks (get_rows, matmul_q, matmul_expert).
// Byte-exact with GGUF (little-endian); each value is what GGML's
// dequantize_row_* gives, in f32.
//
// Blocks of 32 values (the value at position v of a block; "4-bit quants"
// are 16 bytes in which value v < 16 is the low nibble of byte v and value
// v + 16 its high nibble):
//   Q8_0 (34 bytes): f16 d at 0, 32 int8 q at 2. d * q.
//   Q4_0 (18 bytes): f16 d at 0, 4-bit quants at 2. d * (q - 8).
//   Q4_1 (20 bytes): f16 d at 0, f16 m at 2, 4-bit quants at 4. q * d + m.
//   Q5_0 (22 bytes): f16 d at 0, qh (u32) at 2, 4-bit quants at 6; bit v of
//     qh is value v's fifth bit (16). (q - 16) * d.
//   Q5_1 (24 bytes): f16 d at 0, f16 m at 2, qh at 4, 4-bit quants at 8,
//     bits as Q5_0's. q * d + m.
// "K" super-blocks of 256 values, read here in chunks j of 32 (j < 8):
//   Q4_K (144 bytes): f16 d at 0, f16 dmin at 2, 12 bytes of scales and
//     mins at 4, 128 bytes of quants at 16. Chunks 2i and 2i + 1 share the
//     32 bytes at 16 + 32 i: value l of chunk 2i is the low nibble of byte
//     l, of chunk 2i + 1 the high nibble. Chunk j has a 6-bit scale sc and
//     min m (glc_q_k_scale_min): (d * sc) * q - (dmin * m).
//   Q5_K (176 bytes): Q4_K's d, dmin, scales (bytes 0-15), then qh, 32
//     bytes at 16, then the 4-bit quants as Q4_K's at 48; value l of chunk
//     j has bit j of qh byte l as its fifth bit (16). As Q4_K.
//   Q6_K (210 bytes): ql, 128 bytes of low 4 bits at 0; qh, 64 bytes of
//     high 2 bits at 128; 16 int8 scales at 192; f16 d at 208. Chunk j is
//     c = j % 4 of half h = j / 4: its value l has its low bits in ql byte
//     64 h + 32 (c % 2) + l (low nibble for c < 2, high for c >= 2), its
//     high 2 bits at bit 2 c of qh byte 32 h + l, and scale sc = scales[8 h
//     + 2 c + l / 16] (two scales a chunk). (d * sc) * (q - 32).
//
// Quants come as "lanes": 4 values in the bytes of a uint, unsigned (q +
// GLC_Q_BIAS, offset binary), exact in any float conversion. The products
// d * sc, (d * sc) * q for Q4_K / Q5_K, q * d for the 32-value blocks are
// exact in f32 (at most 22 significant bits), so a fused multiply-add
// rounds as GGML's separate operations do; Q6_K's (d * sc) * q is one
// rounding, kept in GGML's order.
//
// The includer defines GLC_QT (its block type, a GLC_T_*) and the function
// uint glc_qw(uint i), word i of the buffer holding the blocks, before
// including this. Blocks start at multiples of 2 bytes (of 4 where the
// block's size is: GLC_Q_ALIGNED; a binding starts at a multiple of 4), so
// a 32-bit read of the others may straddle two words: glc_q_u32
// funnel-shifts them.

// Bytes, values and the lanes' offset of one block of GLC_QT; GLC_Q_MIN 1
// where a chunk has an offset (a min) besides its scale. GLC_Q_K (a K
// type) and GLC_Q_ALIGNED are for the preprocessor (no u suffixes there).
#if GLC_QT == GLC_T_Q8_0
#define GLC_Q_K 0
#define GLC_Q_BYTES 34u
#define GLC_Q_ELEMS 32u
#define GLC_Q_BIAS 128
#define GLC_Q_MIN 0
#define GLC_Q_ALIGNED 0
#elif GLC_QT == GLC_T_Q4_0
#define GLC_Q_K 0
#define GLC_Q_BYTES 18u
#define GLC_Q_ELEMS 32u
#define GLC_Q_BIAS 8
#define GLC_Q_MIN 0
#define GLC_Q_ALIGNED 0
#elif GLC_QT == GLC_T_Q4_1
#define GLC_Q_K 0
#define GLC_Q_BYTES 20u
#define GLC_Q_ELEMS 32u
#define GLC_Q_BIAS 0
#define GLC_Q_MIN 1
#define GLC_Q_ALIGNED 1
#elif GLC_QT == GLC_T_Q5_0
#define GLC_Q_K 0
#define GLC_Q_BYTES 22u
#define GLC_Q_ELEMS 32u
#define GLC_Q_BIAS 16
#define GLC_Q_MIN 0
#define GLC_Q_ALIGNED 0
#elif GLC_QT == GLC_T_Q5_1
#define GLC_Q_K 0
#define GLC_Q_BYTES 24u
#define GLC_Q_ELEMS 32u
#define GLC_Q_BIAS 0
#define GLC_Q_MIN 1
#define GLC_Q_ALIGNED 1
#elif GLC_QT == GLC_T_Q4_K
#define GLC_Q_K 1
#define GLC_Q_BYTES 144u
#define GLC_Q_ELEMS 256u
#define GLC_Q_BIAS 0
#define GLC_Q_MIN 1
#define GLC_Q_ALIGNED 1
#elif GLC_QT == GLC_T_Q5_K
#define GLC_Q_K 1
#define GLC_Q_BYTES 176u
#define GLC_Q_ELEMS 256u
#define GLC_Q_BIAS 0
#define GLC_Q_MIN 1
#define GLC_Q_ALIGNED 1
#elif GLC_QT == GLC_T_Q6_K
#define GLC_Q_K 1
#define GLC_Q_BYTES 210u
#define GLC_Q_ELEMS 256u
#define GLC_Q_BIAS 32
#define GLC_Q_MIN 0
#define GLC_Q_ALIGNED 0
#else
#error "quant.glsl: GLC_QT is not a GGML block type"
#endif
#define GLC_Q_CHUNKS (GLC_Q_ELEMS / 32u) // chunks of 32 values a block

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

// The 32 bits at an even byte offset.
uint glc_q_u32(uint byte)
{
    uint i = byte >> 2;
#if GLC_Q_ALIGNED
    return glc_qw(i);
#else
    return (byte & 2u) == 0u ? glc_qw(i) : glc_q_word(glc_qw(i), glc_qw(i + 1u), true);
#endif
}

// The byte at `byte`, and the f16 at an even byte offset.
uint glc_q_byte(uint byte)
{
    return (glc_qw(byte >> 2) >> ((byte & 3u) * 8u)) & 0xFFu;
}

float glc_q_f16(uint byte)
{
    return glc_q_scale(glc_qw(byte >> 2), (byte & 2u) != 0u);
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

// The four byte lanes of x.
uvec4 glc_q_lanes(uint x)
{
    return (uvec4(x) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu;
}

// Bits 0 .. 3 of x as the fifth bit (16) of the four byte lanes.
uint glc_q_fifth4(uint x)
{
    return ((x & 1u) | ((x & 2u) << 7) | ((x & 4u) << 14) | ((x & 8u) << 21)) << 4;
}

// Where chunk j of the block at byte blk keeps its quants: lanes of quad i
// (values 4i .. 4i + 3) come from the word at byte glc_q_lo(blk, j) + 4 (i
// % GLC_Q_LO_WORDS), the low 4 (Q8_0: all 8) bits, and, for the 5- and
// 6-bit types, the high bits from the u32 at glc_q_hi(blk, j) (Q5_0, Q5_1:
// one for the chunk) or at glc_q_hi(blk, j) + 4i (Q5_K, Q6_K).
#if GLC_QT == GLC_T_Q8_0 || GLC_Q_K
#define GLC_Q_LO_WORDS 8
#else
#define GLC_Q_LO_WORDS 4
#endif
#define GLC_Q_HI \
    (GLC_QT == GLC_T_Q5_0 || GLC_QT == GLC_T_Q5_1 || GLC_QT == GLC_T_Q5_K || GLC_QT == GLC_T_Q6_K)
#define GLC_Q_HI_QUADS (GLC_QT == GLC_T_Q5_K || GLC_QT == GLC_T_Q6_K)

uint glc_q_lo(uint blk, uint j)
{
#if GLC_QT == GLC_T_Q8_0 || GLC_QT == GLC_T_Q4_0
    return blk + 2u;
#elif GLC_QT == GLC_T_Q4_1
    return blk + 4u;
#elif GLC_QT == GLC_T_Q5_0
    return blk + 6u;
#elif GLC_QT == GLC_T_Q5_1
    return blk + 8u;
#elif GLC_QT == GLC_T_Q4_K
    return blk + 16u + 32u * (j >> 1);
#elif GLC_QT == GLC_T_Q5_K
    return blk + 48u + 32u * (j >> 1);
#else // Q6_K: chunk c = j % 4 of half j / 4
    return blk + 64u * (j >> 2) + 32u * (j & 1u);
#endif
}

uint glc_q_hi(uint blk, uint j)
{
#if GLC_QT == GLC_T_Q5_0
    return blk + 2u;
#elif GLC_QT == GLC_T_Q5_1
    return blk + 4u;
#elif GLC_QT == GLC_T_Q5_K
    return blk + 16u;
#elif GLC_QT == GLC_T_Q6_K
    return blk + 128u + 32u * (j >> 2);
#else
    return blk; // no high bits
#endif
}

// The lanes (q + GLC_Q_BIAS) of quad i of chunk j from its low-bits word
// lo and high-bits word hi (glc_q_lo, glc_q_hi).
uint glc_q_combine(uint lo, uint hi, uint j, uint i)
{
#if GLC_QT == GLC_T_Q8_0
    return lo ^ 0x80808080u; // int8 to offset binary
#elif !GLC_Q_K // the 32-value blocks: value v < 16 low nibble, v + 16 high
    uint q = (lo >> (4u * (i >> 2))) & 0x0F0F0F0Fu;
#if GLC_Q_HI
    q |= glc_q_fifth4(hi >> (4u * i)); // bit v of qh: value v's fifth bit
#endif
    return q;
#elif GLC_QT == GLC_T_Q6_K
    uint c = j & 3u; // low nibble for c < 2, high for c >= 2; high bits at 2c
    return ((lo >> (4u * (c >> 1))) & 0x0F0F0F0Fu) | (((hi >> (2u * c)) & 0x03030303u) << 4);
#else // Q4_K, Q5_K: chunk 2i the low nibbles, 2i + 1 the high; Q5_K's bit j
    uint q = (lo >> (4u * (j & 1u))) & 0x0F0F0F0Fu;
#if GLC_Q_HI
    q |= ((hi >> j) & 0x01010101u) << 4;
#endif
    return q;
#endif
}

// Lanes of values 4i .. 4i + 3 (i < 8) of chunk j (j < GLC_Q_CHUNKS) of the
// block at byte blk.
uint glc_q_quad(uint blk, uint j, uint i)
{
    uint lo = glc_q_u32(glc_q_lo(blk, j) + 4u * (i % uint(GLC_Q_LO_WORDS)));
#if GLC_Q_HI_QUADS
    uint hi = glc_q_u32(glc_q_hi(blk, j) + 4u * i);
#elif GLC_Q_HI
    uint hi = glc_q_u32(glc_q_hi(blk, j));
#else
    uint hi = 0u;
#endif
    return glc_q_combine(lo, hi, j, i);
}

// The 8 words at an even byte offset, and the first 4 of them: where
// blocks may sit on 2-byte boundaries, one funnel shift per word over the
// words read once (the word after the span only when the span is odd: it
// holds its last bytes then, else it may lie past the binding).
void glc_q_load8(uint byte, out uint w[8])
{
    uint i0 = byte >> 2;
#if GLC_Q_ALIGNED
    for (int j = 0; j < 8; j++)
        w[j] = glc_qw(i0 + uint(j));
#else
    bool odd = (byte & 2u) != 0u;
    uint cur = glc_qw(i0);
    for (int j = 0; j < 7; j++) {
        uint next = glc_qw(i0 + uint(j) + 1u);
        w[j] = glc_q_word(cur, next, odd);
        cur = next;
    }
    w[7] = odd ? glc_q_word(cur, glc_qw(i0 + 8u), true) : cur;
#endif
}

void glc_q_load4(uint byte, out uint w[4])
{
    uint i0 = byte >> 2;
#if GLC_Q_ALIGNED
    for (int j = 0; j < 4; j++)
        w[j] = glc_qw(i0 + uint(j));
#else
    bool odd = (byte & 2u) != 0u;
    uint cur = glc_qw(i0);
    for (int j = 0; j < 3; j++) {
        uint next = glc_qw(i0 + uint(j) + 1u);
        w[j] = glc_q_word(cur, next, odd);
        cur = next;
    }
    w[3] = odd ? glc_q_word(cur, glc_qw(i0 + 4u), true) : cur;
#endif
}

// All 8 quads of chunk j of the block at byte blk (glc_q_quad's lanes,
// each word read once).
void glc_q_chunk(uint blk, uint j, out uint q[8])
{
    uint lo[GLC_Q_LO_WORDS];
#if GLC_Q_LO_WORDS == 8
    glc_q_load8(glc_q_lo(blk, j), lo);
#else
    glc_q_load4(glc_q_lo(blk, j), lo);
#endif
#if GLC_Q_HI_QUADS
    uint hi[8];
    glc_q_load8(glc_q_hi(blk, j), hi);
    for (int i = 0; i < 8; i++)
        q[i] = glc_q_combine(lo[i], hi[i], j, uint(i));
#else
#if GLC_Q_HI
    uint h = glc_q_u32(glc_q_hi(blk, j));
#else
    uint h = 0u;
#endif
    for (int i = 0; i < 8; i++)
        q[i] = glc_q_combine(lo[i % GLC_Q_LO_WORDS], h, j, uint(i));
#endif
}

#if GLC_QT == GLC_T_Q4_K || GLC_QT == GLC_T_Q5_K
// The 6-bit scale (x) and min (y) of chunk j from the 12 bytes at byte s:
// chunks 0-3 have them in the low 6 bits of bytes j (scale) and j + 4
// (min); chunks 4-7 their low 4 bits in byte j + 4 (scale the low nibble,
// min the high) and their top 2 bits in the top 2 bits of bytes j - 4
// (scale) and j (min).
uvec2 glc_q_k_scale_min(uint s, uint j)
{
    if (j < 4u)
        return uvec2(glc_q_byte(s + j), glc_q_byte(s + j + 4u)) & 63u;
    uint b = glc_q_byte(s + j + 4u);
    return uvec2((b & 15u) | ((glc_q_byte(s + j - 4u) >> 6) << 4),
                 (b >> 4) | ((glc_q_byte(s + j) >> 6) << 4));
}
#endif

#if GLC_QT == GLC_T_Q6_K
// Q6_K: the int8 scale of values 16 s .. 16 s + 15 (s < 2) of chunk j.
int glc_q6_k_scale(uint blk, uint j, uint s)
{
    return int(glc_q_byte(blk + 192u + 8u * (j >> 2) + 2u * (j & 3u) + s) ^ 128u) - 128;
}
#endif

// Chunk j of the block at byte blk, values 4i .. 4i + 3 (i only matters
// for Q6_K): the value is x * (lane - GLC_Q_BIAS) + y.
vec2 glc_q_scale_offset(uint blk, uint j, uint i)
{
#if GLC_QT == GLC_T_Q4_K || GLC_QT == GLC_T_Q5_K
    uvec2 sm = glc_q_k_scale_min(blk + 4u, j);
    vec2 dm = unpackHalf2x16(glc_qw(blk >> 2)); // d, dmin
    return vec2(dm.x * float(sm.x), -(dm.y * float(sm.y)));
#elif GLC_QT == GLC_T_Q6_K
    return vec2(glc_q_f16(blk + 208u) * float(glc_q6_k_scale(blk, j, i >> 2)), 0.0);
#elif GLC_Q_MIN // Q4_1, Q5_1: d, m
    return unpackHalf2x16(glc_qw(blk >> 2));
#else
    return vec2(glc_q_f16(blk), 0.0);
#endif
}

// Values 4i .. 4i + 3 of chunk j of the block at byte blk, in f32 as GGML
// dequantizes them (get_rows.comp's rows, matmul.comp's tiles)
vec4 glc_q_values(uint blk, uint j, uint i)
{
    vec2 so = glc_q_scale_offset(blk, j, i);
    vec4 v = so.x * vec4(ivec4(glc_q_lanes(glc_q_quad(blk, j, i))) - GLC_Q_BIAS);
#if GLC_Q_MIN
    v += so.y;
#endif
    return v;
}
