// matmul_expert: out[p] = a[row of pair p] x W[e]^T for each (token,
// slot) pair p routed to expert e = ids[p]; W [E, N, K] of f32, f16 or
// GGML blocks. The tile engine is matmul_q.glsl, the weights matmul_w.glsl.
// Tile t is expert e = t / ntiles (e == E: the pairs whose id is outside
// [0, E), written as zeros) and n-tile t % ntiles; it scans ids for the
// pairs routed to e, CM at a time, so each weight chunk is read once per
// CM tokens. Base tiles: (E + 1) * ntiles. With param 8 > 0 (pairs per
// range, for the loop cap): part r + R * j scans only pairs [r * p8,
// (r + 1) * p8) (R ranges), K part j.
// bindings: 0 a ([M, K] or [M, k, K]), 1 w, 2 out, 3 ids (i32 [M, k])
// params: matmul_q.glsl's (M: the pairs M * k), 4 k (slots per token),
//   8 pairs per range (0: all), 10 E, 11 a row per pair (1 when a is
//   [M, k, K], 0 when [M, K])
// defines: matmul_q.glsl's, WF (GLC_T_F32, _F16 or a GGML block type)

#define GLC_KP_MATMUL_EXPERT
#include "kparams.glsl"

#define ACCUM 0

layout(std430, binding = 2) buffer O { float o[]; };
layout(std430, binding = 3) readonly buffer IDS { int ids[]; };

#include "matmul_w.glsl"

void put(uint row, uint n, float v)
{
    o[row * glc_p[P_N] + n] = v;
}

bool routed_to(int id, uint e, uint E)
{
    return e < E ? id == int(e) : (id < 0 || id >= int(E));
}

void do_tile(uint tile, uint lane, uint step)
{
    uint M = glc_p[P_M], N = glc_p[P_N];
    uint orow[CM];
    uint base = (glc_p[P_E] + 1u) * glc_p[P_NTILES];
    uint part = tile / base;
    tile -= part * base;
    uint pr = glc_p[P_RANGE_PAIRS], nr = pr == 0u ? 1u : (M + pr - 1u) / pr, rg = part % nr;
    uint pbeg = pr == 0u ? 0u : rg * pr, pend = pr == 0u ? M : min(M, pbeg + pr);
    part /= nr;
    k_part(part, M, N);
    uint E = glc_p[P_E], kslots = glc_p[P_KSLOTS];
    uint e = tile / glc_p[P_NTILES], n0 = (tile % glc_p[P_NTILES]) * uint(RN);
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
            arow[m] = glc_p[P_PAIR_ROWS] != 0u ? orow[m] : orow[m] / kslots;
        }
        if (e < E)
            accumulate(lane, step);
        store(lane, n0, orow, count, e >= E);
    }
}
