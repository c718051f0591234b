// sdpa: attention over a grouped-query KV cache with online softmax (no
// score matrix is stored), in three variants chosen by VARIANT:
//   0 rows:  one invocation per (query row, head), or split per (query row,
//            head, chunk of keys); q and the output row in
//            registers, no shared memory (llvmpipe: barrier() is slow there).
//            The head dims are params and the loops over them are not
//            unrolled: one compile serves every shape, and llvmpipe compiles
//            unrolled gathers very slowly (over 1 s at D = 128). KB keys are
//            scored per pass over the head dims, which keeps the loop
//            iterations of an invocation under llvmpipe's cap (65535 in all
//            loops together; the plan checks)
//   1 tile:  prefill on GPUs: one work group per (block of BQ query rows,
//            head); BK-key tiles of K and V go through shared memory, each
//            thread makes an RQ x RK block of scores, then owns a slice of
//            one row's output
//   2 split: decode on GPUs (flash-decoding's first pass): one work group
//            per (kv head, block of GB of the query heads that share it,
//            chunk of CHUNK keys); a thread scores whole keys for all GB
//            heads, so each K and V row is read once per group
// Base 2 throughout: q is scaled by scale * log2(e), weights are exp2.
// bindings: 0 q (read, f32 [Tq, Hq, D]), 1 k (read, KT [Tk, Hkv, D]),
//           2 v (read, VT [Tk, Hkv, DV]),
//           3 out (written, f32 [Tq, Hq, DV]); when split and not
//             normalize: the scratch (written, f32 [Tq, Hq, nsplit,
//             DV + 2]: per chunk the max score, the sum of weights and the
//             unnormalised output)
// params:   rows:  0 Tq, 1 Hq, 2 group (Hq / Hkv), 3 Hkv, 4 kv_len, 5 q_offset,
//                  6 causal, 7 scale * log2(e) (float bits), 8 keys per chunk,
//                  9 nsplit, 10 invocations in use, 11 D, 12 DV, 13 split
//                  (1: invocations are (row, head, chunk), partials to the
//                  scratch)
//           tile:  0-7 as rows, 8 query blocks (ceil(Tq / BQ))
//           split: 0 Hq, 1 group, 2 Hkv, 3 keys in use (kv_len and causal
//                  applied), 4 nsplit, 5 head blocks per kv head (ceil(group
//                  / GB)), 6 scale * log2(e), 7 normalize (a single chunk:
//                  write out directly)
// defines:  VARIANT; KT, VT (GLC_T_F32, GLC_T_F16); KVEC, VVEC (1: the head
//           dim of k / v is a multiple of 4); rows: KB; tile and split: D, DV (head
//           dims, <= 256); tile: BQ, BK, RQ, RK; split: GB, RG (heads per
//           reduction round), CHUNK, LANES (threads across DV, a power of two)
// local size: GLC_LOCAL_SIZE_X (tile and split: 128)

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Q { uint q[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };

#define NT uint(GLC_LOCAL_SIZE_X)
#define NEG (-1.0e30)
#if VARIANT == 0
#define D_ glc_p[11]
#define DV_ glc_p[12]
#else
#define DU ((D + 3) / 4)
#define DVU ((DV + 3) / 4)
#define D_ uint(D)
#define DV_ uint(DV)
#endif
#define DU_ ((D_ + 3u) / 4u)
#define DVU_ ((DV_ + 3u) / 4u)
#define IS_MASKED(s) ((s) < -5.0e29)

// k_unit(row, u) / v_unit(row, u): values 4u .. 4u+3 of a K / V row (zeros
// past the head dim), one 16-byte (f32) or 8-byte (f16) load when rows are
// whole vec4s.
#if KVEC && KT == GLC_T_F32
layout(std430, binding = 1) readonly buffer K { uvec4 k[]; };
vec4 k_unit(uint row, uint u) { return uintBitsToFloat(k[row * DU_ + u]); }
#elif KVEC
layout(std430, binding = 1) readonly buffer K { uvec2 k[]; };
vec4 k_unit(uint row, uint u)
{
    uvec2 w = k[row * DU_ + u];
    return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
}
#else
layout(std430, binding = 1) readonly buffer K { uint k[]; };
vec4 k_unit(uint row, uint u)
{
    uint i = row * D_ + u * 4u, n = D_ - u * 4u;
    return vec4(GLC_LOAD(k, KT, i), n > 1u ? GLC_LOAD(k, KT, i + 1u) : 0.0,
                n > 2u ? GLC_LOAD(k, KT, i + 2u) : 0.0, n > 3u ? GLC_LOAD(k, KT, i + 3u) : 0.0);
}
#endif

#if VVEC && VT == GLC_T_F32
layout(std430, binding = 2) readonly buffer V { uvec4 v[]; };
vec4 v_unit(uint row, uint u) { return uintBitsToFloat(v[row * DVU_ + u]); }
#elif VVEC
layout(std430, binding = 2) readonly buffer V { uvec2 v[]; };
vec4 v_unit(uint row, uint u)
{
    uvec2 w = v[row * DVU_ + u];
    return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
}
#else
layout(std430, binding = 2) readonly buffer V { uint v[]; };
vec4 v_unit(uint row, uint u)
{
    uint i = row * DV_ + u * 4u, n = DV_ - u * 4u;
    return vec4(GLC_LOAD(v, VT, i), n > 1u ? GLC_LOAD(v, VT, i + 1u) : 0.0,
                n > 2u ? GLC_LOAD(v, VT, i + 2u) : 0.0, n > 3u ? GLC_LOAD(v, VT, i + 3u) : 0.0);
}
#endif

vec4 q_unit(uint row, uint u)
{
    uint i = row * D_ + u * 4u, n = D_ - u * 4u;
    return vec4(uintBitsToFloat(q[i]), n > 1u ? uintBitsToFloat(q[i + 1u]) : 0.0,
                n > 2u ? uintBitsToFloat(q[i + 2u]) : 0.0,
                n > 3u ? uintBitsToFloat(q[i + 3u]) : 0.0);
}

// Stores vec4 u of an output row at o[base + 4u ..], the values inside DV.
void store_unit(uint base, uint u, vec4 val)
{
    for (uint c = 0u; c < 4u; c++)
        if (u * 4u + c < DV_)
            o[base + u * 4u + c] = val[c];
}

#if VARIANT == 0 // ---- rows ----

void main()
{
    if (glc_group_out_of_range())
        return;
    uint idx = glc_global_index();
    if (idx >= glc_p[10])
        return;
    uint hq = glc_p[1], hkv = glc_p[3], nsplit = glc_p[9], du = DU_, dvu = DVU_;
    bool split = glc_p[13] != 0u;
    uint rh = split ? idx / nsplit : idx; // row * Hq + head
    uint h = rh % hq, row = rh / hq;
    uint hk = h / glc_p[2];
    uint kend = glc_p[4];
    if (glc_p[6] != 0u)
        kend = min(kend, glc_p[5] + row + 1u);
    uint j0 = 0u, j1 = kend;
    if (split) {
        j0 = (idx % nsplit) * glc_p[8];
        j1 = min(j0 + glc_p[8], kend);
    }
    float qscale = glc_pf(7);
    // sized for the largest head dim (256): arrays this size, indexed in
    // loops that are not unrolled, stay cheap on llvmpipe
    vec4 qr[64], acc[64];
    for (uint u = 0u; u < du; u++)
        qr[u] = q_unit(row * hq + h, u) * qscale;
    for (uint u = 0u; u < dvu; u++)
        acc[u] = vec4(0.0);
    float m = NEG, l = 0.0;
    // KB keys a pass over the head dims
    for (uint j = j0; j < j1; j += uint(KB)) {
        uint kr[KB];
        float s[KB];
        for (int b = 0; b < KB; b++) {
            kr[b] = min(j + uint(b), j1 - 1u) * hkv + hk; // past j1: a valid row, weight 0
            s[b] = 0.0;
        }
        for (uint u = 0u; u < du; u++) {
            vec4 qv = qr[u];
            for (int b = 0; b < KB; b++)
                s[b] += dot(qv, k_unit(kr[b], u));
        }
        float mb = m;
        for (int b = 0; b < KB; b++)
            if (j + uint(b) < j1)
                mb = max(mb, s[b]);
        float a = exp2(m - mb);
        l *= a;
        for (int b = 0; b < KB; b++) {
            s[b] = j + uint(b) < j1 ? exp2(s[b] - mb) : 0.0;
            l += s[b];
        }
        m = mb;
        for (uint u = 0u; u < dvu; u++) {
            vec4 sum = acc[u] * a;
            for (int b = 0; b < KB; b++)
                sum += s[b] * v_unit(kr[b], u);
            acc[u] = sum;
        }
    }
    uint base = (row * hq + h) * DV_;
    float inv = l > 0.0 ? 1.0 / l : 0.0;
    if (split) {
        base = idx * (DV_ + 2u); // (rh * nsplit + chunk) * (DV + 2)
        o[base] = m;
        o[base + 1u] = l;
        base += 2u;
        inv = 1.0;
    }
    for (uint u = 0u; u < dvu; u++)
        store_unit(base, u, acc[u] * inv);
}

#elif VARIANT == 1 // ---- tile ----

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
    uint tq = glc_p[0], hq = glc_p[1], hkv = glc_p[3], qoff = glc_p[5], nqb = glc_p[8];
    bool causal = glc_p[6] != 0u;
    float qscale = glc_pf(7);
    // the blocks of a head are neighbours (they share K and V in the cache);
    // the last rows first, which see the most keys with causal
    uint h = g / nqb, qb = nqb - 1u - g % nqb, hk = h / glc_p[2];
    uint row0 = qb * uint(BQ);
    for (uint it = t; it < uint(BQ * DU); it += NT) {
        uint r = it / uint(DU), u = it % uint(DU);
        qs[r * uint(ST) + u] =
            row0 + r < tq ? q_unit((row0 + r) * hq + h, u) * qscale : vec4(0.0);
    }
    uint kend = glc_p[4];
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

#else // ---- split ----

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
    uint group = glc_p[1], hkv = glc_p[2], nkeys = glc_p[3], nsplit = glc_p[4];
    uint nhb = glc_p[5];
    float qscale = glc_pf(6);
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
            if (glc_p[7] != 0u) {
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

#endif
