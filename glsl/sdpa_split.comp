// sdpa_split: attention, decode on GPUs (flash-decoding): one work group
// per (kv head, block of GB of the query heads that share it, chunk of
// `chunk` keys, at most CT); a thread scores whole keys for all GB heads and
// the output pass reads V in rows, so each K and V row is read once per
// group, with 16-byte loads (f16 rows of whole 8-value units: K8, V8). Loads
// that depend on nothing are issued first (the first batch of V rows, and
// with KPRE the thread's K rows, before q), and the next batch of V rows is
// loaded while one is used. Shared parts: sdpa.glsl.
// Each group's result is its chunk's (max score, sum of weights,
// unnormalised output) per head. With FUSED the chunks of a (kv head, head
// block) are merged in the same dispatch: each group stores its partials in
// the scratch, memoryBarrierBuffer(), then counts itself on the block's
// counter (atomicAdd); the group that counts last merges every chunk and
// writes out, then puts the counter back to 0 for the next run. No group
// ever waits for another (GLES gives no forward progress between groups).
// The counters must be 0 when the dispatch starts (op state: op_attention.c
// and glc__op_plan.state_bytes say who clears them).
// Without FUSED (devices with 4 storage blocks) the partials go to binding
// 3 and sdpa_combine merges them; one chunk (normalize) writes out.
// bindings: sdpa.glsl's; 3 out (f32 [Tq, Hq, DV]), or without FUSED and
//           normalize the scratch's partials; with FUSED 4 the scratch
//           (coherent u32: the counters, one per head block, then from word
//           pbase the partials)
//           partials: f32 [Hq, nsplit, DV + 2]: per chunk the max score, the
//           sum of weights and the unnormalised output
// params:   0 Hq, 1 group, 2 Hkv, 3 keys in use (kv_len and causal
//           applied), 4 nsplit, 5 head blocks per kv head (ceil(group /
//           GB)), 6 scale * log2(e), 7 normalize (a single chunk: write out
//           directly), 8 keys per chunk (<= CT), 9 pbase (words of counters
//           before the partials, FUSED)
// defines:  sdpa.glsl's, D, DV (head dims, <= 256), GB, RG (accumulators
//           per reduction round), CT (most keys a chunk), LANES (threads
//           across a V row's units, a power of two), FUSED, VBV (16-byte V
//           loads a thread has in flight per batch), MB (chunks the merge
//           loads before using them), KPRE (1: the thread's K rows are
//           loaded into registers before q, so the two loads overlap: where
//           they fit); the last three smaller or 0 on llvmpipe, whose
//           compile time grows with the unrolled loads
// local size: GLC_LOCAL_SIZE_X (128)

#define GLC_KP_SDPA_SPLIT
#include "kparams.glsl"

#define DU ((D + 3) / 4)
#define DVU ((DV + 3) / 4)
#define D_ uint(D)
#define DV_ uint(DV)
#include "sdpa.glsl"

#if FUSED
layout(std430, binding = 4) coherent buffer S { uint sc[]; };
#define PSTORE(i, val) sc[(i)] = floatBitsToUint(val)
#else
#define PSTORE(i, val) o[(i)] = (val)
#endif

#define KPT ((CT + GLC_LOCAL_SIZE_X - 1) / GLC_LOCAL_SIZE_X) // keys scored per thread
#define GB4 ((GB + 3) / 4)
#if K8
#define KWU (DU / 2) // 16-byte loads a K row
#else
#define KWU DU
#endif
#if V8
#define VW 2 // vec4s a lane owns in the output pass
#else
#define VW 1
#endif
#define DVW (DVU / VW)                // units of VW vec4s in a V row
#define KG (GLC_LOCAL_SIZE_X / LANES) // key groups in the output pass
#define VPT ((CT + KG - 1) / KG)      // keys per key group, at most
#if VPT < VBV / VW
#define VB VPT                        // V rows a batch (VBV 16-byte loads)
#else
#define VB (VBV / VW)
#endif
#define NA (GB * VW)

shared vec4 qs[GB * DU];
shared vec4 ps[CT * GB4];             // weights, the GB heads of a key together
shared float redm[GB * GLC_LOCAL_SIZE_X];
shared vec4 red[RG * GLC_LOCAL_SIZE_X];
shared float redl[RG * GLC_LOCAL_SIZE_X];
#if FUSED
shared uint is_last;
#endif

// a partial's unit of 4 output values (zeros past DV)
void pstore_unit(uint base, uint u, vec4 val)
{
    for (uint c = 0u; c < 4u; c++)
        if (u * 4u + c < DV_)
            PSTORE(base + u * 4u + c, val[c]);
}

#if FUSED
vec4 pload_unit(uint base, uint u)
{
    vec4 r = vec4(0.0);
    for (uint c = 0u; c < 4u; c++)
        if (u * 4u + c < DV_)
            r[c] = uintBitsToFloat(sc[base + u * 4u + c]);
    return r;
}
#endif

// V rows kg + KG * (i0 + b), b < VB, of the chunk (rows past n: row n - 1,
// weight 0), units `lane` of each
void load_v(uint i0, uint kg, uint lane, uint j0, uint n, uint hkv, uint hk,
            out vec4 vv[VB * VW])
{
    for (int b = 0; b < VB; b++) {
        uint row = (j0 + min(kg + uint(KG) * (i0 + uint(b)), n - 1u)) * hkv + hk;
#if LANES > DVW
        if (lane >= uint(DVW)) {
            for (int c = 0; c < VW; c++)
                vv[b * VW + c] = vec4(0.0);
            continue;
        }
#endif
#if V8
        v_unit8(row, lane, vv[b * 2], vv[b * 2 + 1]);
#else
        vv[b] = v_unit(row, lane);
#endif
    }
}

void main()
{
    if (glc_group_out_of_range())
        return;
    uint t = gl_LocalInvocationID.x, g = glc_group_index();
    uint group = glc_p[P_GROUP], hkv = glc_p[P_HKV], nkeys = glc_p[P_KEYS], nsplit = glc_p[P_NSPLIT];
    uint nhb = glc_p[P_HEAD_BLOCKS], chunk = glc_p[P_CHUNK];
    float qscale = glc_pf(P_QSCALE);
    uint split = g % nsplit, rest = g / nsplit, hb = rest % nhb, hk = rest / nhb;
    uint h0 = hk * group + hb * uint(GB), ng = min(uint(GB), group - hb * uint(GB));
    uint j0 = split * chunk, n = min(chunk, nkeys - j0);
    uint lane = t % uint(LANES), kg = t / uint(LANES);

    // loads that wait for nothing first: the first batch of V rows and
    // (KPRE) the K rows, in flight while q goes to shared memory
    vec4 vv[VB * VW];
    load_v(0u, kg, lane, j0, n, hkv, hk, vv);
#if KPRE
#if K8
    uvec4 kreg[KPT * KWU];
#else
    vec4 kreg[KPT * KWU];
#endif
    for (int kk = 0; kk < KPT; kk++) {
        uint jj = t + NT * uint(kk), kr = (j0 + jj) * hkv + hk;
        for (int w = 0; w < KWU; w++)
#if K8
            kreg[kk * KWU + w] = jj < n ? k[kr * uint(KWU) + uint(w)] : uvec4(0u);
#else
            kreg[kk * KWU + w] = jj < n ? k_unit(kr, uint(w)) : vec4(0.0);
#endif
    }
#endif
    for (uint it = t; it < uint(GB * DU); it += NT) {
        uint gi = it / uint(DU), u = it % uint(DU);
        qs[it] = gi < ng ? q_unit(h0 + gi, u) * qscale : vec4(0.0);
    }
    barrier();

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
            for (int w = 0; w < KWU; w++) {
#if K8
#if KPRE
                uvec4 x = kreg[kk * KWU + w];
#else
                uvec4 x = k[kr * uint(KWU) + uint(w)];
#endif
                vec4 ka = glc_half4(x.xy), kb = glc_half4(x.zw);
                for (int gi = 0; gi < GB; gi++)
                    s[gi] += dot(qs[gi * DU + 2 * w], ka) + dot(qs[gi * DU + 2 * w + 1], kb);
#else
#if KPRE
                vec4 kv = kreg[kk * KWU + w];
#else
                vec4 kv = k_unit(kr, uint(w));
#endif
                for (int gi = 0; gi < GB; gi++)
                    s[gi] += dot(qs[gi * DU + w], kv);
#endif
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

    // weights (0 for keys past the chunk)
    for (int kk = 0; kk < KPT; kk++) {
        uint jj = t + NT * uint(kk);
        vec4 pv[GB4];
        for (int b = 0; b < GB4; b++)
            pv[b] = vec4(0.0);
        for (int gi = 0; gi < GB; gi++) {
            float s = sreg[kk * GB + gi];
            pv[gi / 4][gi % 4] = IS_MASKED(s) ? 0.0 : exp2(s - mx[gi]);
        }
        if (jj < uint(CT))
            for (int b = 0; b < GB4; b++)
                ps[jj * uint(GB4) + uint(b)] = pv[b];
    }
    barrier();

    // output: lane owns VW vec4s of the row (unit `lane`), key group kg
    // every KG-th key; the next batch of V rows is loaded before this one
    // is used
    vec4 acc[NA];
    float lp[GB];
    for (int a = 0; a < NA; a++)
        acc[a] = vec4(0.0);
    for (int gi = 0; gi < GB; gi++)
        lp[gi] = 0.0;
    for (uint i0 = 0u; kg + uint(KG) * i0 < n; i0 += uint(VB)) {
        vec4 vn[VB * VW];
        bool more = kg + uint(KG) * (i0 + uint(VB)) < n;
        if (more)
            load_v(i0 + uint(VB), kg, lane, j0, n, hkv, hk, vn);
        for (int b = 0; b < VB; b++) {
            uint jj = kg + uint(KG) * (i0 + uint(b));
            if (jj >= n)
                break;
            vec4 pv[GB4];
            for (int q4 = 0; q4 < GB4; q4++)
                pv[q4] = ps[jj * uint(GB4) + uint(q4)];
            for (int gi = 0; gi < GB; gi++) {
                float p = pv[gi / 4][gi % 4];
                lp[gi] += p;
                for (int c = 0; c < VW; c++)
                    acc[gi * VW + c] += p * vv[b * VW + c];
            }
        }
        if (more)
            vv = vn;
    }
#if KG > 1
    // sum the key groups, RG accumulators a round; key group 0 keeps the
    // totals
    for (int r0 = 0; r0 < NA; r0 += RG) {
        for (int a = r0; a < r0 + RG && a < NA; a++) {
            red[uint(a - r0) * NT + t] = acc[a];
            if (a % VW == 0)
                redl[uint(a - r0) * NT + t] = lp[a / VW];
        }
        barrier();
        if (kg == 0u)
            for (int a = r0; a < r0 + RG && a < NA; a++) {
                vec4 sum = vec4(0.0);
                float ls = 0.0;
                for (uint i = 0u; i < uint(KG); i++) {
                    sum += red[uint(a - r0) * NT + i * uint(LANES) + lane];
                    if (a % VW == 0)
                        ls += redl[uint(a - r0) * NT + i * uint(LANES) + lane];
                }
                acc[a] = sum;
                if (a % VW == 0)
                    lp[a / VW] = ls;
            }
        barrier();
    }
#endif
    bool normalize = glc_p[P_NORMALIZE] != 0u;
    if (kg == 0u && lane < uint(DVW))
        for (int gi = 0; gi < GB; gi++) {
            if (uint(gi) >= ng)
                break;
            uint h = h0 + uint(gi);
            if (normalize) {
                float inv = lp[gi] > 0.0 ? 1.0 / lp[gi] : 0.0;
                for (int c = 0; c < VW; c++)
                    store_unit(h * uint(DV), lane * uint(VW) + uint(c), acc[gi * VW + c] * inv);
            } else {
                uint base = glc_p[P_PBASE] + (h * nsplit + split) * uint(DV + 2);
                if (lane == 0u) {
                    PSTORE(base, mx[gi]);
                    PSTORE(base + 1u, lp[gi]);
                }
                for (int c = 0; c < VW; c++)
                    pstore_unit(base + 2u, lane * uint(VW) + uint(c), acc[gi * VW + c]);
            }
        }
#if FUSED
    if (normalize)
        return;
    // the partials out to the device before this group counts itself
    memoryBarrierBuffer();
    barrier();
    uint slot = hk * nhb + hb;
    if (t == 0u)
        is_last = atomicAdd(sc[slot], 1u) == nsplit - 1u ? 1u : 0u;
    barrier();
    if (is_last == 0u)
        return;
    memoryBarrierBuffer();

    // the last group merges the block's chunks: thread (item = (head,
    // unit of 4 outputs), part) takes chunks part, part + np, ..., online;
    // the parts are merged through shared memory
    uint ni = ng * uint(DVU), np = ni < NT ? NT / ni : 1u, pbase = glc_p[P_PBASE];
    for (uint i0 = 0u; i0 < ni; i0 += NT) { // one round unless ni > NT (np 1)
        uint item = np > 1u ? t % ni : i0 + t, part = np > 1u ? t / ni : 0u;
        bool act = item < ni && part < np;
        uint gi = item / uint(DVU), u = item % uint(DVU), h = h0 + gi;
        float m = NEG, l = 0.0;
        vec4 o4 = vec4(0.0);
        if (act)
            for (uint s0 = part; s0 < nsplit; s0 += np * uint(MB)) {
                float ms[MB], ls[MB];
                vec4 os[MB];
                for (int b = 0; b < MB; b++) {
                    uint s = s0 + uint(b) * np;
                    ms[b] = NEG;
                    ls[b] = 0.0;
                    os[b] = vec4(0.0);
                    if (s < nsplit) {
                        uint base = pbase + (h * nsplit + s) * uint(DV + 2);
                        ms[b] = uintBitsToFloat(sc[base]);
                        ls[b] = uintBitsToFloat(sc[base + 1u]);
                        os[b] = pload_unit(base + 2u, u);
                    }
                }
                for (int b = 0; b < MB; b++) {
                    float mn = max(m, ms[b]), a = exp2(m - mn), w = exp2(ms[b] - mn);
                    l = l * a + ls[b] * w;
                    o4 = o4 * a + os[b] * w;
                    m = mn;
                }
            }
        if (np > 1u) {
            redm[t] = m;
            redl[t] = l;
            red[t] = o4;
            barrier();
            if (act && part == 0u) {
                float mm = NEG;
                for (uint p = 0u; p < np; p++)
                    mm = max(mm, redm[item + p * ni]);
                l = 0.0;
                o4 = vec4(0.0);
                for (uint p = 0u; p < np; p++) {
                    float w = exp2(redm[item + p * ni] - mm);
                    l += redl[item + p * ni] * w;
                    o4 += red[item + p * ni] * w;
                }
            }
        }
        if (act && part == 0u)
            store_unit(h * uint(DV), u, o4 * (l > 0.0 ? 1.0 / l : 0.0));
    }
    if (t == 0u)
        atomicExchange(sc[slot], 0u);
#endif
}
