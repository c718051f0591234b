// matmul_q.glsl: the tile engine of the weight-streaming matmuls, out =
// a x W^T: matmul_q.comp (GGML blocks; f32 / f16 for dense matmuls past
// matvec's loop cap), matmul_affine.comp (MLX affine groups),
// matmul_expert.comp (per-expert f32 / f16 / GGML weights); the weights of
// the first and last are matmul_w.glsl.
//
// K is walked in chunks of 32 values (a GGML block, or a sub-block of a K
// type's 256; an affine group holds 1, 2 or 4 chunks). A tile is RN weight
// rows x CM rows of a; per chunk the raw words of the RN rows are loaded
// once and dequantized in registers
// (integers made floats by the 2^23 exponent trick, no int->float
// conversion), and each a vec4 is loaded once for the RN rows.
//   SPLIT (SLOTS > 0): a subgroup per tile (SLOTS tiles per group, handed
//            out by gl_SubgroupID, so any real subgroup size works), its
//            lanes take chunks lane, lane + S, ...; subgroupAdd reduces
//            (VSG: an emulated subgroup, sg_add).
//            Coalesced weight reads: the decode (M = 1..4) path on GPUs.
//   otherwise: an invocation per tile over the whole of K, no reduction,
//            no shared memory, no barrier: llvmpipe and devices without
//            subgroups.
// Dense tiles (dense_tile): tile t is n-tile t / mtiles, m-tile t % mtiles
// (consecutive tiles share weight rows).
// Grid: tile t is base tile t % base of part t / base, param 6 the tiles of
// all parts (the kernel's do_tile says what base is).
//
// The kernel including this defines, before it: WF (its GLC_T_*), NW (raw
// words per row and chunk), QUANT (1: chunks are integers scaled per chunk
// through raw / wsc / wbi and load_chunk), SCALED (1: wsc scales a chunk's
// products), NEED_ASUM (1: wbi times the chunk's sum of a is added), KTAIL
// (1: K need not be a multiple of 32), HAS_W (0: no weights are read),
// ACCUM (1: the result is added into out), and declares out as o[] (float).
// After it, it defines weights(), put() (an output's epilogue and store),
// do_tile() and, when QUANT, load_chunk().
// bindings: 0 a (f32 [M, K]: vec4[] when AVEC, float[] otherwise); the
//   rest per kernel
// params (all kernels): 0 M, 1 N, 2 K, 3 chunks (ceil(K / 32)), 5 ntiles,
//   6 tiles, 7 weight row stride (GGML: bytes; affine: uvec4s; f32 / f16
//   with AVEC: vec4 units; otherwise elements); the rest per kernel
// defines (all kernels): RN, CM, and where not the default: GLU_OUT
//   (matmul_q, no KCH: the SwiGLU epilogue, a glc_act op; W's N rows are
//   gate | up halves, a tile's first RN / 2 weight rows gates and the rest
//   their up rows N / 2 further, out [M, N / 2] through put_glu), SLOTS (tiles
//   per group; > 0 selects SPLIT), AVEC (0: K % 4 != 0), KCH (K split for
//   a device's loop cap: part j of the grid sums chunks [j KCH, (j + 1)
//   KCH) and writes raw partial products at j * M * N of out, the plan's
//   scratch, in [M, N] order; glsl/ksum.comp adds them up with bias and
//   the rest)
//   ASH (matmul_q, SPLIT, M 1, AVEC, no KCH: K / 4, a staged in shared
//   memory; with NORM times the norm's weight, its sum of squares taken
//   once a group), VSG (SPLIT on a device without subgroup sums: the
//   emulated subgroup's lanes, SLOTS x VSG the local size, matmul_q.comp
//   only), ATEX (AVEC, matmul_q's row variant on llvmpipe: the texture
//   unit through which a is read as RGBA32F texels)
// local size: GLC_LOCAL_SIZE_X (SPLIT: a multiple of the subgroup size)

layout(local_size_x = GLC_LOCAL_SIZE_X) in;

// Plans define only what differs from these defaults (a plan's defines
// are short); GLSL ES has no implicit 0 for an undefined name in #if.
#ifndef SLOTS
#define SLOTS 0
#endif
#ifndef AVEC
#define AVEC 1
#endif
#ifndef KCH
#define KCH 0
#endif
#define SPLIT (SLOTS > 0)

// A tile's subgroup under SPLIT (subgroup.glsl). With VSG main runs one
// tile a subgroup, a tile past the grid as the last one, storing nothing
// (tile_live).
#if SPLIT
#include "subgroup.glsl"
#endif
#ifdef VSG
bool tile_live = true;
#endif

#if AVEC
layout(std430, binding = 0) readonly buffer A { vec4 a4[]; };
#ifdef ATEX
// a read as RGBA32F texels (texture unit ATEX; its SSBO binding 0 stays)
layout(binding = ATEX) uniform highp samplerBuffer tat;
#define A4(i) texelFetch(tat, int(i))
#else
#define A4(i) a4[i]
#endif
#else
layout(std430, binding = 0) readonly buffer A { float a1[]; };
#endif

uint raw[RN][NW];
float wsc[RN], wbi[RN];
float acc[RN][CM];
uint wrow[RN], arow[CM];
uint cbeg, cend; // this tile's chunks of K
uint part0;      // KCH: where its part's partial products start in out

#ifdef NORM
// a fused rms_norm prologue (matmul_q only, AVEC): NORM the binding of its
// weight (f32 [K]), NORM_EPS its eps; a row is read as row * weight and
// each output scaled by the row's 1 / rms when stored. A tile's lanes read
// all of K for its rows, so accumulate() sums the squares of what they
// load (no extra read, barrier or shared memory); a K part (KCH) sees only
// its chunks and reads the whole rows first (norm_full).
layout(std430, binding = NORM) readonly buffer NORMW { vec4 nw4[]; };
float nss[CM]; // sums of squares of a's rows (lane partials under SPLIT)

#if KCH
void norm_full(uint lane, uint step)
{
    uint k4 = glc_p[P_K] >> 2;
    for (int m = 0; m < CM; m++) {
        float s = 0.0;
        for (uint i = lane; i < k4; i += step) {
            vec4 x = A4(arow[m] * k4 + i);
            s += dot(x, x);
        }
        nss[m] = s;
    }
}
#endif
#endif

#ifdef ASH
// a staged in shared memory (matmul_q, SPLIT, one row of a, K whole
// chunks, no KCH; ASH = K / 4): the group reads it once, coalesced; vec4 q
// of chunk c sits at 8 c + (q ^ (c % 8)), so the lanes of a subgroup, a
// chunk each, read 8 different bank quads at each step instead of one.
// With NORM the row is staged times the norm's weight, and its sum of
// squares (ash_ss) is taken here, once a group: the tiles then read
// neither the weight nor a again.
shared vec4 ash[ASH];

uint ash_at(uint v)
{
    return v ^ ((v >> 3) & 7u);
}

#ifdef NORM
shared float ash_part[GLC_LOCAL_SIZE_X]; // a subgroup's sum each
float ash_ss;
#endif

// Each invocation's vec4s of a are all loaded before any is stored: one
// round trip to memory before the barrier instead of one a vec4 (H100, 1b
// decode: q4_0 1.33-1.40 -> 1.32 ms/token, the other types within noise).
#define ASH_PER ((ASH + GLC_LOCAL_SIZE_X - 1) / GLC_LOCAL_SIZE_X)

void stage_a()
{
#ifdef NORM
    float ss = 0.0;
#endif
    vec4 xs[ASH_PER];
    for (int j = 0; j < ASH_PER; j++) {
        uint v = gl_LocalInvocationID.x + uint(j * GLC_LOCAL_SIZE_X);
        if (v < uint(ASH))
            xs[j] = a4[v];
    }
    for (int j = 0; j < ASH_PER; j++) {
        uint v = gl_LocalInvocationID.x + uint(j * GLC_LOCAL_SIZE_X);
        if (v < uint(ASH)) {
#ifdef NORM
            ss += dot(xs[j], xs[j]);
            xs[j] *= nw4[v];
#endif
            ash[ash_at(v)] = xs[j];
        }
    }
#ifdef NORM
    ss = sg_add(ss);
    if (SG_ELECT)
        ash_part[SG_ID] = ss;
#endif
    barrier();
#ifdef NORM
    ash_ss = 0.0;
    for (uint i = 0u; i < SG_COUNT; i++)
        ash_ss += ash_part[i];
#endif
}
#endif

vec4 load_a(uint row, uint k)
{
#ifdef ASH
    return ash[ash_at(k >> 2)]; // row 0: the only one
#elif AVEC
    return A4(row * (glc_p[P_K] >> 2) + (k >> 2));
#else
    uint K = glc_p[P_K], i = row * K + k;
    return vec4(a1[i], k + 1u < K ? a1[i + 1u] : 0.0, k + 2u < K ? a1[i + 2u] : 0.0,
                k + 3u < K ? a1[i + 3u] : 0.0);
#endif
}

// Defined by the kernel. The raw words, scale and bias of chunk c of
// weight row w into slot r:
#if QUANT
void load_chunk(int r, uint w, uint c);
#endif
// Weights k .. k+3 (k = 32 c + 4 q) of slot r: exact integers for the
// quantized formats (scaled per chunk), values for f32 / f16:
vec4 weights(int r, int q, uint k);
// Stores v, the sum for out row `row`, column n (no K split):
void put(uint row, uint n, float v);
#ifdef GLU_OUT
// The SwiGLU epilogue's store (matmul_q.comp): g and u the sums of the
// gate row n and its up row
void put_glu(uint row, uint n, float g, float u);
#define RO (RN / 2) // outputs a tile: its first RO weight rows are gates
#else
#define RO RN
#endif
void do_tile(uint tile, uint lane, uint step);

// acc = the tile's partial sums over chunks first, first + step, ...
void accumulate(uint first, uint step)
{
    for (int r = 0; r < RN; r++)
        for (int m = 0; m < CM; m++)
            acc[r][m] = 0.0;
#if defined(NORM) && !defined(ASH) // (staged: summed once a group, stage_a)
#if KCH
    norm_full(first, step);
#else
    for (int m = 0; m < CM; m++)
        nss[m] = 0.0;
#endif
#endif
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
            if (k >= glc_p[P_K])
                break;
#endif
            vec4 av[CM];
            for (int m = 0; m < CM; m++) {
                av[m] = load_a(arow[m], k);
#if defined(NORM) && !defined(ASH) // (staged: weighted, summed once)
#if !KCH
                nss[m] += dot(av[m], av[m]);
#endif
                av[m] *= nw4[k >> 2];
#endif
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
#if SCALED
                acc[r][m] += wsc[r] * dq[r][m];
#endif
#if NEED_ASUM
                acc[r][m] += wbi[r] * asum[m];
#endif
            }
#endif
    }
}

// A lane's partial sum made the tile's (SPLIT: summed over the subgroup)
float total(float v)
{
#if SPLIT
    return sg_add(v);
#else
    return v;
#endif
}

// Whether this lane stores the tile's output i (SPLIT: lane i, wrapping
// when the tile has more outputs than lanes; VSG: only a live tile's)
bool stores_at(uint lane, uint i)
{
#if SPLIT
    if (lane != i % SG_SIZE)
        return false;
#endif
#ifdef VSG
    if (!tile_live)
        return false;
#endif
    return true;
}

// Writes acc (reduced over the subgroup under SPLIT) for out rows
// orow[m] (m < mcount) and columns n0 + r (< N).
void store(uint lane, uint n0, uint orow[CM], uint mcount, bool zero)
{
    uint N = glc_p[P_N] / uint(RN / RO); // out's columns
#ifdef NORM
    float nsc[CM]; // 1 / rms of each row
    for (int m = 0; m < CM; m++)
#ifdef ASH
        nsc[m] = inversesqrt(ash_ss / float(glc_p[P_K]) + float(NORM_EPS)); // (CM 1)
#else
        nsc[m] = inversesqrt(total(nss[m]) / float(glc_p[P_K]) + float(NORM_EPS));
#endif
#endif
#ifdef QKV_ROPE // (CM 1, no K parts) the pairs' sums to rope_put
    for (int r = 0; r < RO; r += 2) {
        float v0 = total(zero ? 0.0 : acc[r][0]), v1 = total(zero ? 0.0 : acc[r + 1][0]);
#ifdef NORM
        v0 *= nsc[0];
        v1 *= nsc[0];
#endif
        uint n = n0 + uint(r);
        if (stores_at(lane, uint(r)) && n < N && mcount > 0u)
            rope_put(rope_cols(n), v0, v1);
    }
    return;
#endif
    for (int r = 0; r < RO; r++)
        for (int m = 0; m < CM; m++) {
            float v = total(zero ? 0.0 : acc[r][m]);
#ifdef NORM
            v *= nsc[m];
#endif
#ifdef GLU_OUT
            float u = total(zero ? 0.0 : acc[RO + r][m]);
#ifdef NORM
            u *= nsc[m];
#endif
#endif
            if (!stores_at(lane, uint(r * CM + m)))
                continue;
            uint n = n0 + uint(r);
            if (n >= N || uint(m) >= mcount)
                continue;
#if KCH
            uint i = part0 + orow[m] * N + n; // ksum adds bias, segments, act
#if ACCUM
            v += o[i];
#endif
            o[i] = v;
#elif defined(GLU_OUT)
            put_glu(orow[m], n, v, u);
#else
            put(orow[m], n, v);
#endif
        }
}

// This tile's chunks of K, for K part `part` (KCH) of an [M, N] out.
void k_part(uint part, uint M, uint N)
{
#if KCH
    cbeg = part * uint(KCH);
    cend = min(glc_p[P_CHUNKS], cbeg + uint(KCH));
    part0 = part * M * N;
#else
    cbeg = 0u;
    cend = glc_p[P_CHUNKS];
#endif
}

// A dense tile (matmul_q, matmul_affine): param 4 mtiles; base tiles
// mtiles * ntiles.
void dense_tile(uint tile, uint lane, uint step)
{
    uint M = glc_p[P_M], N = glc_p[P_N];
    uint orow[CM];
    uint base = glc_p[P_MTILES] * glc_p[P_NTILES];
    uint part = tile / base;
    tile -= part * base;
    k_part(part, M, N);
    uint mt = tile % glc_p[P_MTILES], n0 = (tile / glc_p[P_MTILES]) * uint(RO), m0 = mt * uint(CM);
    uint NO = N / uint(RN / RO); // GLU_OUT: rows [NO, N) are the up rows of [0, NO)
    for (int r = 0; r < RN; r++) {
#ifdef QKV_ROPE // (qkv_rope.glsl: RN even, a tile's rows pairs that rotate together)
        uvec2 c = rope_cols(min(n0 + uint(r & ~1), N - 2u));
        wrow[r] = (r & 1) == 0 ? c.x : c.y;
#else
        wrow[r] = min(n0 + uint(r % RO), NO - 1u) + uint(r / RO) * NO;
#endif
    }
    for (int m = 0; m < CM; m++) {
        orow[m] = m0 + uint(m);
        arow[m] = min(orow[m], M - 1u);
    }
    accumulate(lane, step);
    store(lane, n0, orow, M - m0, false);
}

void main()
{
    if (glc_group_out_of_range())
        return;
#if SPLIT
#ifdef ASH
    stage_a();
#endif
    for (uint slot = SG_ID; slot < uint(SLOTS); slot += SG_COUNT) {
        uint tile = glc_group_index() * uint(SLOTS) + slot;
#ifdef VSG
        tile_live = tile < glc_p[P_TILES];
        tile = min(tile, glc_p[P_TILES] - 1u);
#else
        if (tile >= glc_p[P_TILES])
            break;
#endif
        do_tile(tile, SG_LANE, SG_SIZE);
    }
#else
    uint tile = glc_global_index();
    if (tile >= glc_p[P_TILES])
        return;
    do_tile(tile, 0u, 1u);
#endif
}
