// sdpa_split: attention, decode on GPUs (flash-decoding's first pass): one
// work group per (kv head, block of GB of the query heads that share it,
// chunk of CHUNK keys); a thread scores whole keys for all GB heads, so
// each K and V row is read once per group. Shared parts: sdpa.glsl.
// bindings: sdpa.glsl's; 3 out (f32 [Tq, Hq, DV]); when not normalize: the
//           scratch (f32 [Tq, Hq, nsplit, DV + 2]: per chunk the max score,
//           the sum of weights and the unnormalised output)
// params:   0 Hq, 1 group, 2 Hkv, 3 keys in use (kv_len and causal
//           applied), 4 nsplit, 5 head blocks per kv head (ceil(group /
//           GB)), 6 scale * log2(e), 7 normalize (a single chunk: write out
//           directly)
// defines:  sdpa.glsl's, D, DV (head dims, <= 256), GB, RG (heads per
//           reduction round), CHUNK, LANES (threads across DV, a power of
//           two)
// local size: GLC_LOCAL_SIZE_X (128)

#define GLC_KP_SDPA_SPLIT
#include "kparams.glsl"

#define DU ((D + 3) / 4)
#define DVU ((DV + 3) / 4)
#define D_ uint(D)
#define DV_ uint(DV)
#include "sdpa.glsl"


#define KPT (CHUNK / GLC_LOCAL_SIZE_X) // keys scored per thread
#define GB4 ((GB + 3) / 4)
#define KG (GLC_LOCAL_SIZE_X / LANES)  // key groups in the output pass

shared vec4 qs[GB * DU];
shared vec4 ps[CHUNK * GB4];           // weights, the GB heads of a key together
shared float redm[GB * GLC_LOCAL_SIZE_X];
shared vec4 red[RG * GLC_LOCAL_SIZE_X];
shared float redl[RG * GLC_LOCAL_SIZE_X];

void main()
{
    if (glc_group_out_of_range())
        return;
    uint t = gl_LocalInvocationID.x, g = glc_group_index();
    uint group = glc_p[P_GROUP], hkv = glc_p[P_HKV], nkeys = glc_p[P_KEYS], nsplit = glc_p[P_NSPLIT];
    uint nhb = glc_p[P_HEAD_BLOCKS];
    float qscale = glc_pf(P_QSCALE);
    uint split = g % nsplit, rest = g / nsplit, hb = rest % nhb, hk = rest / nhb;
    uint h0 = hk * group + hb * uint(GB), ng = min(uint(GB), group - hb * uint(GB));
    for (uint it = t; it < uint(GB * DU); it += NT) {
        uint gi = it / uint(DU), u = it % uint(DU);
        qs[it] = gi < ng ? q_unit(h0 + gi, u) * qscale : vec4(0.0);
    }
    barrier();
    uint j0 = split * uint(CHUNK), n = min(uint(CHUNK), nkeys - j0);

    // scores: thread t takes keys t, t + NT, ...
    float sreg[KPT * GB], lm[GB];
    for (int gi = 0; gi < GB; gi++)
        lm[gi] = NEG;
    for (int kk = 0; kk < KPT; kk++) {
        uint jj = t + NT * uint(kk);
        float s[GB];
        for (int gi = 0; gi < GB; gi++)
            s[gi] = NEG;
        if (jj < n) {
            uint kr = (j0 + jj) * hkv + hk;
            for (int gi = 0; gi < GB; gi++)
                s[gi] = 0.0;
            for (uint u = 0u; u < uint(DU); u++) {
                vec4 kv = k_unit(kr, u);
                for (int gi = 0; gi < GB; gi++)
                    s[gi] += dot(qs[uint(gi * DU) + u], kv);
            }
        }
        for (int gi = 0; gi < GB; gi++) {
            sreg[kk * GB + gi] = s[gi];
            lm[gi] = max(lm[gi], s[gi]);
        }
    }

    // the chunk's max per head
    float mx[GB];
#if defined(GLC_HAS_SUBGROUP) && defined(GL_KHR_shader_subgroup_arithmetic)
    for (int gi = 0; gi < GB; gi++) {
        float r = subgroupMax(lm[gi]);
        if (gl_SubgroupInvocationID == 0u)
            redm[uint(gi) * NT + gl_SubgroupID] = r;
    }
    barrier();
    for (int gi = 0; gi < GB; gi++) {
        mx[gi] = NEG;
        for (uint i = 0u; i < gl_NumSubgroups; i++)
            mx[gi] = max(mx[gi], redm[uint(gi) * NT + i]);
    }
#else
    for (int gi = 0; gi < GB; gi++)
        redm[uint(gi) * NT + t] = lm[gi];
    barrier();
    for (uint st = NT / 2u; st > 0u; st >>= 1) {
        if (t < st)
            for (int gi = 0; gi < GB; gi++)
                redm[uint(gi) * NT + t] = max(redm[uint(gi) * NT + t], redm[uint(gi) * NT + t + st]);
        barrier();
    }
    for (int gi = 0; gi < GB; gi++)
        mx[gi] = redm[uint(gi) * NT];
#endif

    // weights
    for (int kk = 0; kk < KPT; kk++) {
        vec4 pv[GB4];
        for (int b = 0; b < GB4; b++)
            pv[b] = vec4(0.0);
        for (int gi = 0; gi < GB; gi++) {
            float s = sreg[kk * GB + gi];
            pv[gi / 4][gi % 4] = IS_MASKED(s) ? 0.0 : exp2(s - mx[gi]);
        }
        for (int b = 0; b < GB4; b++)
            ps[(t + NT * uint(kk)) * uint(GB4) + uint(b)] = pv[b];
    }
    barrier();

    // output: lane owns vec4 `lane` of the row, key group kg every KG-th key
    uint lane = t % uint(LANES), kg = t / uint(LANES);
    vec4 acc[GB];
    float lp[GB];
    for (int gi = 0; gi < GB; gi++) {
        acc[gi] = vec4(0.0);
        lp[gi] = 0.0;
    }
    for (uint jj = kg; jj < n; jj += uint(KG)) {
        vec4 pv[GB4];
        for (int b = 0; b < GB4; b++)
            pv[b] = ps[jj * uint(GB4) + uint(b)];
#if LANES > DVU
        vec4 vv = lane < uint(DVU) ? v_unit((j0 + jj) * hkv + hk, lane) : vec4(0.0);
#else
        vec4 vv = v_unit((j0 + jj) * hkv + hk, lane);
#endif
        for (int gi = 0; gi < GB; gi++) {
            float p = pv[gi / 4][gi % 4];
            lp[gi] += p;
            acc[gi] += p * vv;
        }
    }
#if KG > 1
    // sum the key groups, RG heads a round; key group 0 keeps the totals
    for (int r0 = 0; r0 < GB; r0 += RG) {
        for (int gi = r0; gi < r0 + RG && gi < GB; gi++) {
            red[uint(gi - r0) * NT + t] = acc[gi];
            redl[uint(gi - r0) * NT + t] = lp[gi];
        }
        barrier();
        if (kg == 0u)
            for (int gi = r0; gi < r0 + RG && gi < GB; gi++) {
                vec4 sum = vec4(0.0);
                float ls = 0.0;
                for (uint i = 0u; i < uint(KG); i++) {
                    sum += red[uint(gi - r0) * NT + i * uint(LANES) + lane];
                    ls += redl[uint(gi - r0) * NT + i * uint(LANES) + lane];
                }
                acc[gi] = sum;
                lp[gi] = ls;
            }
        barrier();
    }
#endif
    if (kg == 0u && lane < uint(DVU))
        for (int gi = 0; gi < GB; gi++) {
            if (uint(gi) >= ng)
                break;
            uint h = h0 + uint(gi);
            if (glc_p[P_NORMALIZE] != 0u) {
                store_unit(h * uint(DV), lane, acc[gi] * (lp[gi] > 0.0 ? 1.0 / lp[gi] : 0.0));
            } else {
                uint base = (h * nsplit + split) * uint(DV + 2);
                if (lane == 0u) {
                    o[base] = mx[gi];
                    o[base + 1u] = lp[gi];
                }
                store_unit(base + 2u, lane, acc[gi]);
            }
        }
}
