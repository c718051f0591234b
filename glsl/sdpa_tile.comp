// sdpa_tile: attention, prefill on GPUs: one work group per (block of BQ
// query rows, head); BK-key tiles of K and V go through shared memory,
// each thread makes an RQ x RK block of scores, then owns a slice of one
// row's output. Shared parts: sdpa.glsl.
// bindings: sdpa.glsl's; 3 out (f32 [Tq, Hq, DV])
// params:   0-7 as sdpa_rows.comp, 8 query blocks (ceil(Tq / BQ))
// defines:  sdpa.glsl's, D, DV (head dims, <= 256), BQ, BK, RQ, RK
// local size: GLC_LOCAL_SIZE_X (128)

#define GLC_KP_SDPA_TILE
#include "kparams.glsl"

#define DU ((D + 3) / 4)
#define DVU ((DV + 3) / 4)
#define D_ uint(D)
#define DV_ uint(DV)
#include "sdpa.glsl"


// q and k rows padded to an odd number of vec4: threads reading one column
// of consecutive rows hit distinct banks; score rows padded by one float.
#define ST (DU + 1 - DU % 2)
#define SS (BK + 1)
#define KC (BK / RK)                   // threads across the keys of a tile
#define NS uint((BQ / RQ) * KC)         // threads that make scores
#define TPR (GLC_LOCAL_SIZE_X / BQ)    // threads per query row for the output
#define CPT ((DVU + TPR - 1) / TPR)    // output vec4s per thread
#define PPT ((BK + TPR - 1) / TPR)     // weights per thread

shared vec4 qs[BQ * ST];
shared vec4 ks[BK * ST];
shared vec4 vs[BK * DVU];
shared float ss[BQ * SS];
shared float ps[BQ * SS];

void main()
{
    if (glc_group_out_of_range())
        return;
    uint t = gl_LocalInvocationID.x, g = glc_group_index();
    uint tq = glc_p[P_TQ], hq = glc_p[P_HQ], hkv = glc_p[P_HKV], qoff = glc_p[P_Q_OFFSET], nqb = glc_p[P_QBLOCKS];
    bool causal = glc_p[P_CAUSAL] != 0u;
    float qscale = glc_pf(P_QSCALE);
    // the blocks of a head are neighbours (they share K and V in the cache);
    // the last rows first, which see the most keys with causal
    uint h = g / nqb, qb = nqb - 1u - g % nqb, hk = h / glc_p[P_GROUP];
    uint row0 = qb * uint(BQ);
    for (uint it = t; it < uint(BQ * DU); it += NT) {
        uint r = it / uint(DU), u = it % uint(DU);
        qs[r * uint(ST) + u] =
            row0 + r < tq ? q_unit((row0 + r) * hq + h, u) * qscale : vec4(0.0);
    }
    uint kend = glc_p[P_KV_LEN];
    if (causal)
        kend = min(kend, qoff + min(row0 + uint(BQ), tq));

    uint pr = t / uint(TPR), lane = t % uint(TPR); // output role: row pr
    uint kc = t % uint(KC), rg = t / uint(KC);     // score role
    float m = NEG, l = 0.0;
    vec4 acc[CPT];
    for (int c = 0; c < CPT; c++)
        acc[c] = vec4(0.0);

    for (uint k0 = 0u; k0 < kend; k0 += uint(BK)) {
        for (uint it = t; it < uint(BK * DU); it += NT) {
            uint j = it / uint(DU), u = it % uint(DU), key = k0 + j;
            ks[j * uint(ST) + u] = key < kend ? k_unit(key * hkv + hk, u) : vec4(0.0);
        }
        for (uint it = t; it < uint(BK * DVU); it += NT) {
            uint j = it / uint(DVU), u = it % uint(DVU), key = k0 + j;
            vs[it] = key < kend ? v_unit(key * hkv + hk, u) : vec4(0.0);
        }
        barrier();
        if (t < NS) {
            float sc[RQ * RK];
            for (int i = 0; i < RQ * RK; i++)
                sc[i] = 0.0;
            for (uint u = 0u; u < uint(DU); u++) {
                vec4 qv[RQ];
                for (int a = 0; a < RQ; a++)
                    qv[a] = qs[(rg * uint(RQ) + uint(a)) * uint(ST) + u];
                for (int b = 0; b < RK; b++) {
                    vec4 kv = ks[(kc + uint(KC * b)) * uint(ST) + u];
                    for (int a = 0; a < RQ; a++)
                        sc[a * RK + b] += dot(qv[a], kv);
                }
            }
            for (int a = 0; a < RQ; a++)
                for (int b = 0; b < RK; b++) {
                    uint r = rg * uint(RQ) + uint(a), j = kc + uint(KC * b), key = k0 + j;
                    bool ok = key < kend && (!causal || key <= qoff + row0 + r);
                    ss[r * uint(SS) + j] = ok ? sc[a * RK + b] : NEG;
                }
        }
        barrier();
        // online softmax of row pr: every thread of the row finds the new
        // max, each turns PPT of the scores into weights
        float mt = NEG;
        for (uint j = 0u; j < uint(BK); j++)
            mt = max(mt, ss[pr * uint(SS) + j]);
        float mn = max(m, mt), alpha = exp2(m - mn);
        m = mn;
        for (int i = 0; i < PPT; i++) {
            uint j = lane + uint(TPR * i);
#if BK % TPR != 0
            if (j < uint(BK))
#endif
            {
                float s = ss[pr * uint(SS) + j];
                ps[pr * uint(SS) + j] = IS_MASKED(s) ? 0.0 : exp2(s - mn);
            }
        }
        barrier();
        l *= alpha;
        for (int c = 0; c < CPT; c++)
            acc[c] *= alpha;
        uint jn = min(uint(BK), kend - k0);
        for (uint j = 0u; j < jn; j++) {
            float p = ps[pr * uint(SS) + j];
            l += p;
            for (int c = 0; c < CPT; c++) {
                uint u = lane + uint(TPR * c);
#if DVU % TPR != 0
                if (u < uint(DVU))
#endif
                    acc[c] += p * vs[j * uint(DVU) + u];
            }
        }
        barrier();
    }
    uint row = row0 + pr;
    if (row < tq) {
        float inv = l > 0.0 ? 1.0 / l : 0.0;
        for (int c = 0; c < CPT; c++) {
            uint u = lane + uint(TPR * c);
            if (u < uint(DVU))
                store_unit((row * hq + h) * uint(DV), u, acc[c] * inv);
        }
    }
}
