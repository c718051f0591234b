// matmul_q: out = a x W^T with W [N, K] stored quantized (GGML Q8_0 / Q4_0
// blocks, MLX affine groups) or as f32 / f16 (the experts of
// matmul_expert); one kernel for matmul_q, matmul_affine and matmul_expert.
//
// K is walked in chunks of 32 values (a GGML block; an affine group holds
// 1, 2 or 4 chunks). A tile is RN weight rows x CM rows of a; per chunk the
// raw words of the RN rows are loaded once and dequantized in registers
// (integers made floats by the 2^23 exponent trick, no int->float
// conversion), and each a vec4 is loaded once for the RN rows.
//   SPLIT 1: a subgroup per tile (SLOTS tiles per group, handed out by
//            gl_SubgroupID, so any real subgroup size works), its lanes
//            take chunks lane, lane + S, ...; subgroupAdd reduces. Coalesced
//            weight reads: the decode (M = 1..4) path on GPUs.
//   SPLIT 0: an invocation per tile over the whole of K, no reduction, no
//            shared memory, no barrier: llvmpipe and devices without
//            subgroups.
// Tile t: n-tile t / mtiles, m-tile t % mtiles (consecutive tiles share
// weight rows). EXPERT: tile t is expert e = t / ntiles (e == E: the pairs
// whose id is outside [0, E), written as zeros) and n-tile t % ntiles; it
// scans ids for the pairs routed to e, CM at a time, so each weight chunk
// is read once per CM tokens.
//
// bindings: 0 a (f32 [M, K]: vec4[] when AVEC, float[] otherwise), then
//   matmul_q:      1 w, 2 out, 3 bias
//   matmul_expert: 1 w, 2 out, 3 ids (i32 [M, k])
//   matmul_affine: 1 w, 2 out, 3 scales, 4 biases, 5 bias (PASS 0);
//                  1 w, 2 out, 3 scales (PASS 1); 1 out, 2 biases, 3 bias (PASS 2)
// params: 0 M (rows of a; EXPERT: pairs M * k), 1 N, 2 K, 3 chunks
//   (ceil(K / 32)), 4 mtiles (EXPERT: k), 5 ntiles, 6 tiles, 7 weight row
//   stride (Q8_0/Q4_0: bytes; AFFINE: uvec4s; F32/F16 with AVEC: vec4 units;
//   otherwise elements), 8 scale groups per row (AFFINE), 9 chunks per group
//   (AFFINE), 10 E (EXPERT), 11 a row per pair (EXPERT: 1 when a is
//   [M, k, K], 0 when [M, K]), 12 flags: 1 add bias, 2 scales f16, 4 biases
//   f16; SEG (matmul_q / dense): 8 s1, 9 s12 (segment column bounds), 10,
//   11 where segments 1 and 2 start in out (elements)
// defines: WF (0 f32, 1 f16, 2 q8_0, 3 q4_0, 4 affine), RN, CM, and where
//   not the default: SEG (out is three matrices: the fused Q/K/V
//   projection), ACT (glc_act op after the bias, param 13; fused
//   matmul + activation), SLOTS (tiles per group; > 0 selects SPLIT), BITS
//   (affine: 4 or 8), EXPERT, PASS (affine: 0 one pass; 1 scales only; 2
//   biases only, added into out), AVEC (0: K % 4 != 0), KCH (K split for
//   a device's loop cap: part j of the grid sums chunks [j KCH, (j + 1) KCH)
//   and writes raw partial products at j * M * N of out, the plan's
//   scratch, in [M, N] order; glsl/ksum.comp adds them up with bias and
//   the rest)
// Grid: tile t is base tile t % base (base = mtiles * ntiles; EXPERT:
//   (E + 1) * ntiles) of part t / base, param 6 the tiles of all parts.
//   EXPERT with param 8 > 0 (pairs per range, for the loop cap): part
//   r + R * j scans only pairs [r * p8, (r + 1) * p8) (R ranges), K part j.
// A bias binding is always there (the plan binds a in its place when the
// op has none; flag 1 says whether to add it), so bias, the scales' dtypes
// and a K that is no multiple of 32 (f32/f16 only) cost no variants.
// local size: GLC_LOCAL_SIZE_X (SPLIT: a multiple of the subgroup size)

layout(local_size_x = GLC_LOCAL_SIZE_X) in;

#define WF_F32 0
#define WF_F16 1
#define WF_Q8_0 2
#define WF_Q4_0 3
#define WF_AFFINE 4

// Plans define only what differs from these defaults (a plan's defines
// are short); GLSL ES has no implicit 0 for an undefined name in #if.
#ifndef SLOTS
#define SLOTS 0
#endif
#ifndef PASS
#define PASS 0
#endif
#ifndef AVEC
#define AVEC 1
#endif
#ifndef EXPERT
#define EXPERT 0
#endif
#ifndef ACT
#define ACT 0
#endif
#ifndef SEG
#define SEG 0
#endif
#ifndef BITS
#define BITS 4
#endif
#ifndef KCH
#define KCH 0
#endif
#define SPLIT (SLOTS > 0)
#define HAS_W (PASS != 2)
#define HAS_SC (WF == WF_AFFINE && PASS != 2)
#define HAS_BI (WF == WF_AFFINE && PASS != 1)
#define ACCUM (PASS == 2)
#define HAS_BIAS (EXPERT == 0 && PASS != 1)
#define KTAIL (WF < WF_Q8_0)

// binding numbers (layout() takes literals): a, w, out, then the extras in
// the order the plans bind them
#define B_A 0
#if HAS_W
#define B_W 1
#define B_OUT 2
#define B_SC 3
#define B_BI 4
#if HAS_SC
#define B_BIAS 5
#else
#define B_BIAS 3
#endif
#else
#define B_OUT 1
#define B_BI 2
#define B_BIAS 3
#endif
#define B_IDS 3

#if AVEC
layout(std430, binding = B_A) readonly buffer A { vec4 a4[]; };
#else
layout(std430, binding = B_A) readonly buffer A { float a1[]; };
#endif

#if HAS_W
#if WF == WF_F32 && AVEC
layout(std430, binding = B_W) readonly buffer W { vec4 w4[]; };
#elif WF == WF_F16 && AVEC
layout(std430, binding = B_W) readonly buffer W { uvec2 w2[]; };
#elif WF == WF_AFFINE
layout(std430, binding = B_W) readonly buffer W { uvec4 w4[]; };
#else
layout(std430, binding = B_W) readonly buffer W { uint w1[]; };
#endif
#endif

layout(std430, binding = B_OUT) buffer O { float o[]; };

#if HAS_SC
layout(std430, binding = B_SC) readonly buffer SC { uint sc[]; };
#endif
#if HAS_BI
layout(std430, binding = B_BI) readonly buffer BI { uint bi[]; };
#endif
#if HAS_BIAS
layout(std430, binding = B_BIAS) readonly buffer BIAS { float bias[]; };
#endif
#if EXPERT
layout(std430, binding = B_IDS) readonly buffer IDS { int ids[]; };
#endif

// raw words per row and chunk, and whether a chunk's sum of a is needed
#if WF == WF_Q8_0 || (WF == WF_AFFINE && BITS == 8)
#define NW 8
#elif WF == WF_Q4_0 || WF == WF_AFFINE
#define NW 4
#else
#define NW 1
#endif
#define QUANT (WF >= WF_Q8_0)
#define NEED_ASUM HAS_BI

const float MAGIC = 8388608.0; // 2^23: uintBitsToFloat(0x4B000000 | n) == MAGIC + n

uint raw[RN][NW];
float wsc[RN], wbi[RN];
float acc[RN][CM];
uint wrow[RN], arow[CM];
uint cbeg, cend; // this tile's chunks of K
uint part0;      // KCH: where its part's partial products start in out

vec4 bits_to_vec(uvec4 b, float offset)
{
    return uintBitsToFloat(b | 0x4B000000u) - (MAGIC + offset);
}

// The raw words, scale and bias of chunk c of weight row w into slot r.
void load_chunk(int r, uint w, uint c)
{
#if WF == WF_Q8_0 || WF == WF_Q4_0
#if WF == WF_Q8_0
    uint o8 = w * glc_p[7] + c * 34u;
#else
    uint o8 = w * glc_p[7] + c * 18u;
#endif
    // blocks sit on 2-byte boundaries: NW + 1 words cover one
    uint i0 = o8 >> 2;
    bool odd = (o8 & 2u) != 0u;
    uint wd[NW + 1];
    for (int j = 0; j <= NW; j++)
        wd[j] = w1[i0 + uint(j)];
    wsc[r] = unpackHalf2x16(odd ? wd[0] >> 16 : wd[0]).x;
    for (int j = 0; j < NW; j++)
        raw[r][j] = odd ? wd[j + 1] : (wd[j] >> 16) | (wd[j + 1] << 16);
#elif WF == WF_AFFINE
#if HAS_W
    uint base = w * glc_p[7] + c * uint(NW / 4);
    uvec4 v = w4[base];
    raw[r][0] = v.x;
    raw[r][1] = v.y;
    raw[r][2] = v.z;
    raw[r][3] = v.w;
#if NW == 8
    v = w4[base + 1u];
    raw[r][4] = v.x;
    raw[r][5] = v.y;
    raw[r][6] = v.z;
    raw[r][7] = v.w;
#endif
#endif
    uint g = w * glc_p[8] + c / glc_p[9];
#if HAS_SC
    wsc[r] = GLC_LOAD(sc, int(glc_p[12] >> 1) & 1, g);
#endif
#if HAS_BI
    wbi[r] = GLC_LOAD(bi, int(glc_p[12] >> 2) & 1, g);
#endif
#endif
}

vec4 load_a(uint row, uint k)
{
#if AVEC
    return a4[row * (glc_p[2] >> 2) + (k >> 2)];
#else
    uint K = glc_p[2], i = row * K + k;
    return vec4(a1[i], k + 1u < K ? a1[i + 1u] : 0.0, k + 2u < K ? a1[i + 2u] : 0.0,
                k + 3u < K ? a1[i + 3u] : 0.0);
#endif
}

#if !QUANT && !AVEC
float w_at(uint i)
{
#if WF == WF_F32
    return uintBitsToFloat(w1[i]);
#else
    return glc_half_of(w1[i >> 1], i);
#endif
}
#endif

// Weights k .. k+3 (k = 32 c + 4 q) of slot r: exact integers for the
// quantized formats (scaled per chunk), values for f32 / f16.
vec4 weights(int r, int q, uint k)
{
#if WF == WF_Q8_0
    uint x = raw[r][q] ^ 0x80808080u; // offset binary: byte + 128
    return bits_to_vec((uvec4(x) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu, 128.0);
#elif WF == WF_Q4_0
    uint s = q < 4 ? 0u : 4u;
    return bits_to_vec((uvec4(raw[r][q & 3]) >> uvec4(s, s + 8u, s + 16u, s + 24u)) & 0xFu, 8.0);
#elif WF == WF_AFFINE && BITS == 4
    uint s = uint(q & 1) * 16u;
    return bits_to_vec((uvec4(raw[r][q >> 1]) >> uvec4(s, s + 4u, s + 8u, s + 12u)) & 0xFu, 0.0);
#elif WF == WF_AFFINE
    return bits_to_vec((uvec4(raw[r][q]) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu, 0.0);
#elif AVEC && WF == WF_F32
    return w4[wrow[r] * glc_p[7] + (k >> 2)];
#elif AVEC
    uvec2 u = w2[wrow[r] * glc_p[7] + (k >> 2)];
    return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y));
#else
    uint K = glc_p[2], i = wrow[r] * K + k;
    return vec4(w_at(i), k + 1u < K ? w_at(i + 1u) : 0.0, k + 2u < K ? w_at(i + 2u) : 0.0,
                k + 3u < K ? w_at(i + 3u) : 0.0);
#endif
}

// acc = the tile's partial sums over chunks first, first + step, ...
void accumulate(uint first, uint step)
{
    for (int r = 0; r < RN; r++)
        for (int m = 0; m < CM; m++)
            acc[r][m] = 0.0;
    for (uint c = cbeg + first; c < cend; c += step) {
#if QUANT
        float dq[RN][CM];
        for (int r = 0; r < RN; r++) {
            load_chunk(r, wrow[r], c);
            for (int m = 0; m < CM; m++)
                dq[r][m] = 0.0;
        }
#endif
#if NEED_ASUM
        float asum[CM];
        for (int m = 0; m < CM; m++)
            asum[m] = 0.0;
#endif
        for (int q = 0; q < 8; q++) {
            uint k = c * 32u + uint(q) * 4u;
#if KTAIL
            if (k >= glc_p[2])
                break;
#endif
            vec4 av[CM];
            for (int m = 0; m < CM; m++) {
                av[m] = load_a(arow[m], k);
#if NEED_ASUM
                asum[m] += dot(av[m], vec4(1.0));
#endif
            }
#if HAS_W
            for (int r = 0; r < RN; r++) {
                vec4 wv = weights(r, q, k);
                for (int m = 0; m < CM; m++) {
#if QUANT
                    dq[r][m] += dot(wv, av[m]);
#else
                    acc[r][m] += dot(wv, av[m]);
#endif
                }
            }
#endif
        }
#if QUANT
        for (int r = 0; r < RN; r++)
            for (int m = 0; m < CM; m++) {
#if HAS_SC || WF != WF_AFFINE
                acc[r][m] += wsc[r] * dq[r][m];
#endif
#if NEED_ASUM
                acc[r][m] += wbi[r] * asum[m];
#endif
            }
#endif
    }
}

// Writes acc (reduced over the subgroup under SPLIT) for out rows
// orow[m] (m < mcount) and columns n0 + r (< N).
void store(uint lane, uint n0, uint orow[CM], uint mcount, bool zero)
{
    uint N = glc_p[1];
    for (int r = 0; r < RN; r++)
        for (int m = 0; m < CM; m++) {
            float v = zero ? 0.0 : acc[r][m];
#if SPLIT
            v = subgroupAdd(v);
            // lane r * CM + m writes (wrapping when the tile has more outputs than lanes)
            if (lane != uint(r * CM + m) % gl_SubgroupSize)
                continue;
#endif
            uint n = n0 + uint(r);
            if (n >= N || uint(m) >= mcount)
                continue;
#if KCH
            uint i = part0 + orow[m] * N + n; // ksum adds bias, segments, act
#else
#if HAS_BIAS
            if ((glc_p[12] & 1u) != 0u)
                v += bias[n];
#endif
#if SEG
            // the fused Q/K/V projection: columns [0, s1), [s1, s12), [s12, N)
            // are three row-major matrices of out
            uint s1 = glc_p[8], s12 = glc_p[9];
            uint i = n < s1    ? orow[m] * s1 + n
                     : n < s12 ? glc_p[10] + orow[m] * (s12 - s1) + n - s1
                               : glc_p[11] + orow[m] * (N - s12) + n - s12;
#else
            uint i = orow[m] * N + n;
#endif
#endif
#if ACCUM
            v += o[i];
#endif
#if ACT && !KCH
#if PASS != 1
            v = glc_act(v, ACT, glc_pf(13));
#endif
#endif
            o[i] = v;
        }
}

#if EXPERT
bool routed_to(int id, uint e, uint E)
{
    return e < E ? id == int(e) : (id < 0 || id >= int(E));
}
#endif

void do_tile(uint tile, uint lane, uint step)
{
    uint M = glc_p[0], N = glc_p[1];
    uint orow[CM];
#if EXPERT
    uint base = (glc_p[10] + 1u) * glc_p[5];
#else
    uint base = glc_p[4] * glc_p[5];
#endif
    uint part = tile / base;
    tile -= part * base;
#if EXPERT
    uint pr = glc_p[8], nr = pr == 0u ? 1u : (M + pr - 1u) / pr, rg = part % nr;
    uint pbeg = pr == 0u ? 0u : rg * pr, pend = pr == 0u ? M : min(M, pbeg + pr);
    part /= nr;
#endif
#if KCH
    cbeg = part * uint(KCH);
    cend = min(glc_p[3], cbeg + uint(KCH));
    part0 = part * M * N;
#else
    cbeg = 0u;
    cend = glc_p[3];
#endif
#if EXPERT
    uint E = glc_p[10], kslots = glc_p[4];
    uint e = tile / glc_p[5], n0 = (tile % glc_p[5]) * uint(RN);
    for (int r = 0; r < RN; r++)
        wrow[r] = min(e, E - 1u) * N + min(n0 + uint(r), N - 1u);
    uint p = pbeg;
    while (p < pend) {
        // the next CM pairs routed to e (uniform across the subgroup)
        uint count = 0u;
        for (; p < pend && count < uint(CM); p++) {
            if (!routed_to(ids[p], e, E))
                continue;
            for (int m = 0; m < CM; m++)
                if (uint(m) == count)
                    orow[m] = p;
            count++;
        }
        if (count == 0u)
            break;
        for (int m = 0; m < CM; m++) {
            if (uint(m) >= count)
                orow[m] = orow[0];
            arow[m] = glc_p[11] != 0u ? orow[m] : orow[m] / kslots;
        }
        if (e < E)
            accumulate(lane, step);
        store(lane, n0, orow, count, e >= E);
    }
#else
    uint mt = tile % glc_p[4], n0 = (tile / glc_p[4]) * uint(RN), m0 = mt * uint(CM);
    for (int r = 0; r < RN; r++)
        wrow[r] = min(n0 + uint(r), N - 1u);
    for (int m = 0; m < CM; m++) {
        orow[m] = m0 + uint(m);
        arow[m] = min(orow[m], M - 1u);
    }
    accumulate(lane, step);
    store(lane, n0, orow, M - m0, false);
#endif
}

void main()
{
    if (glc_group_out_of_range())
        return;
#if SPLIT
    for (uint slot = gl_SubgroupID; slot < uint(SLOTS); slot += gl_NumSubgroups) {
        uint tile = glc_group_index() * uint(SLOTS) + slot;
        if (tile >= glc_p[6])
            break;
        do_tile(tile, gl_SubgroupInvocationID, gl_SubgroupSize);
    }
#else
    uint tile = glc_global_index();
    if (tile >= glc_p[6])
        return;
    do_tile(tile, 0u, 1u);
#endif
}
