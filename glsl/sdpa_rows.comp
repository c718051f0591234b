// sdpa_rows: attention over a grouped-query KV cache with online softmax
// (no score matrix is stored): one invocation per (query row, head), or
// split per (query row, head, chunk of keys); q and the output row in
// registers, no shared memory (llvmpipe: barrier() is slow there). The
// head dims are params and the loops over them are not unrolled: one
// compile serves every shape, and llvmpipe compiles unrolled gathers very
// slowly (over 1 s at D = 128). KB keys are scored per pass over the head
// dims, which keeps the loop iterations of an invocation under llvmpipe's
// cap (65535 in all loops together; the plan checks). Shared parts:
// sdpa.glsl.
// bindings: sdpa.glsl's; 3 out (f32 [Tq, Hq, DV]); when split: the scratch
//           (f32 [Tq, Hq, nsplit, DV + 2]: per chunk the max score, the sum
//           of weights and the unnormalised output)
// params:   0 Tq, 1 Hq, 2 group (Hq / Hkv), 3 Hkv, 4 kv_len, 5 q_offset,
//           6 causal, 7 scale * log2(e) (float bits), 8 keys per chunk,
//           9 nsplit, 10 invocations in use, 11 D, 12 DV, 13 split (1:
//           invocations are (row, head, chunk), partials to the scratch)
// defines:  sdpa.glsl's, KB; ROPE (sdpa.glsl): params 14 theta step, 15
//           cache rows; the invocation of a kv head's first query head (and
//           chunk 0) writes its row
// local size: GLC_LOCAL_SIZE_X

#define GLC_KP_SDPA_ROWS
#include "kparams.glsl"

#define D_ glc_p[P_D]
#define DV_ glc_p[P_DV]
#include "sdpa.glsl"


void main()
{
    if (glc_group_out_of_range())
        return;
    uint idx = glc_global_index();
    if (idx >= glc_p[P_ITEMS])
        return;
    uint hq = glc_p[P_HQ], hkv = glc_p[P_HKV], nsplit = glc_p[P_NSPLIT], du = DU_, dvu = DVU_;
    bool split = glc_p[P_SPLIT] != 0u;
    uint rh = split ? idx / nsplit : idx; // row * Hq + head
    uint h = rh % hq, row = rh / hq;
    uint hk = h / glc_p[P_GROUP];
    uint kend = glc_p[P_KV_LEN];
    if (glc_p[P_CAUSAL] != 0u)
        kend = min(kend, glc_p[P_Q_OFFSET] + row + 1u);
    uint j0 = 0u, j1 = kend;
    if (split) {
        j0 = (idx % nsplit) * glc_p[P_CHUNK_KEYS];
        j1 = min(j0 + glc_p[P_CHUNK_KEYS], kend);
    }
    float qscale = glc_pf(P_QSCALE);
#ifdef ROPE
    float rp = rope_p();
    // the current row's index in the caches (none: no row of them)
    uint cur = rope_row() < glc_p[P_ROPE_ROWS] ? rope_row() * hkv + hk : 0xffffffffu;
    if (h % glc_p[P_GROUP] == 0u && (!split || idx % nsplit == 0u))
        rope_write(hk, hkv, 0u, 1u);
#endif
    // sized for the largest head dim (256): arrays this size, indexed in
    // loops that are not unrolled, stay cheap on llvmpipe
    vec4 qr[64], acc[64];
    for (uint u = 0u; u < du; u++)
#ifdef ROPE
        qr[u] = q_rope_unit(row * hq + h, u, rp) * qscale;
#else
        qr[u] = q_unit(row * hq + h, u) * qscale;
#endif
    for (uint u = 0u; u < dvu; u++)
        acc[u] = vec4(0.0);
#ifdef ROPE
    // the token's key scored once (its cache row is being written: the
    // loop below reads it but takes this score and the token's v instead)
    float scur = 0.0;
    for (uint u = 0u; u < du; u++)
        scur += dot(qr[u], k_cur_unit(hk, u, rp));
#endif
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
#ifdef ROPE
        bool here = false; // the token's key among this pass's
        for (int b = 0; b < KB; b++) {
            here = here || kr[b] == cur;
            s[b] = kr[b] == cur ? scur : s[b];
        }
#endif
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
#ifdef ROPE
            vec4 vc = vec4(0.0);
            if (here)
                vc = v_cur_unit(hk, u);
            for (int b = 0; b < KB; b++)
                sum += s[b] * (kr[b] == cur ? vc : v_unit(kr[b], u));
#else
            for (int b = 0; b < KB; b++)
                sum += s[b] * v_unit(kr[b], u);
#endif
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
