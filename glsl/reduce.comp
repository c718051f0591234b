// reduce: ops along the last dim, one row per team of TS invocations:
// softmax, rms_norm, layer_norm, sum, mean, argmax.
// A group holds GLC_LOCAL_SIZE_X / TS teams. Lanes take pairs of elements
// aligned to even global indices (one 16-bit word), so 16-bit rows are
// written a word at a time; the word a row shares with its neighbour is
// written half by half with atomics.
// bindings: 0 x (read), 1 out (written), BW weight and BB bias (norms, read;
//           defined only when present and read by the pass), BR the residual
//           r (add_rms_norm, but its merge pass), BP the partials (SEGS 1, 2);
//           all uint-backed floats, argmax out is i32/u32
// params:   0 rows, 1 n (row length),
//           2 Tq, 3 offp, 4 offn: softmax keeps keys j < q + 1 + offp - offn
//             of row r, q = r % Tq (not causal: Tq 1, offp n - 1)
//           5 softmax: scale; norms: eps (float bits)
//           6 add_rms_norm: where the norm goes in out (pairs)
//           7 SEGS: pairs per segment, 8 SEGS: segments per row
// defines:  OP (GLC_R_*: softmax, rms_norm, layer_norm, sum, mean, argmax),
//           TX, TO, TW, TB (GLC_T_*), TS (power of two), PER (pairs a lane
//           keeps in registers: the row is read once; 0: loop over the row),
//           SEGS (rows cut into segments, for a device's cap on the loop
//           iterations of an invocation; a team per (row, segment), PER 0):
//           1 each team writes its segment's partial (two words) to BP,
//           2 the partials are merged: sum, mean, argmax a team per row that
//           writes out; softmax and the norms a team per (row, segment) that
//           merges its row's partials and writes its segment (SUMO:
//           add_rms_norm's row x + r read back from out, where pass 1 wrote
//           it, instead of x and r), 3 a layer_norm's bias BB added to out
//           in place, a team per (row, segment) (a device with 4 SSBOs)
// local size: GLC_LOCAL_SIZE_X, a multiple of TS (<= 1024)
//
// barrier() stays outside control flow and no return precedes it (GLSL ES
// 3.10 rules): inactive teams and surplus groups of a folded grid run the
// reductions with neutral values.

#define GLC_KP_REDUCE
#include "kparams.glsl"

layout(local_size_x = GLC_LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) buffer O { uint o[]; };
#ifdef BW
layout(std430, binding = BW) readonly buffer W { uint w[]; };
#endif
#ifdef BB
layout(std430, binding = BB) readonly buffer Bias { uint bias[]; };
#endif
// add_rms_norm: x + r is the row (TX f32), written to out at its own index
// (the sum h), and the norm goes to out at pair offset NOFF.
#ifdef BR
layout(std430, binding = BR) readonly buffer R { uint rr[]; };
#endif
#if defined(BR) || defined(SUMO)
#define NOFF glc_p[P_NOFF]
#else
#define NOFF 0u
#endif

#ifndef SEGS
#define SEGS 0
#endif
#if SEGS == 1 || SEGS == 2
// partial of (row, segment) t: words 2t and 2t + 1
layout(std430, binding = BP) buffer P { uint part[]; };
#endif

#define L uint(GLC_LOCAL_SIZE_X)
#define NEG_BIG (-3.402823e38)

shared float red[2u * L];
#if OP == GLC_R_ARGMAX
shared uint redu[L];
#endif

uint lid, lane, team_first;

void sync_shared(void)
{
    memoryBarrierShared();
    barrier();
}

// Team reductions. `slot` alternates the halves of red, so a reduction can
// follow another with no barrier between them. The subgroup path needs the
// team to be the whole group (gl_SubgroupID then numbers its subgroups).
#define SUBGROUP_PATH 0
#ifdef GLC_HAS_SUBGROUP
#if TS == GLC_LOCAL_SIZE_X && TS >= GLC_SUBGROUP_SIZE
#undef SUBGROUP_PATH
#define SUBGROUP_PATH 1
#endif
#endif

float add2(float a, float b) { return a + b; }

#if SUBGROUP_PATH
#define TEAM_REDUCE(T, arr, SGOP, OPF, init, v, first)                 \
    v = SGOP(v);                                                        \
    if (subgroupElect())                                                \
        arr[(first) + gl_SubgroupID] = v;                               \
    sync_shared();                                                      \
    T t = init;                                                         \
    for (uint i = 0u; i < gl_NumSubgroups; i++)                         \
        t = OPF(t, arr[(first) + i]);                                   \
    return t;
#else
// A tree halves the partials down to 8, which every lane then combines.
#define TREE_STEP(arr, OPF, base, S)                                    \
    if (lane < uint(S))                                                 \
        arr[base + lane] = OPF(arr[base + lane], arr[base + lane + uint(S)]); \
    sync_shared();
#if TS >= 1024
#define TREE_512(a, f, b) TREE_STEP(a, f, b, 512)
#else
#define TREE_512(a, f, b)
#endif
#if TS >= 512
#define TREE_256(a, f, b) TREE_STEP(a, f, b, 256)
#else
#define TREE_256(a, f, b)
#endif
#if TS >= 256
#define TREE_128(a, f, b) TREE_STEP(a, f, b, 128)
#else
#define TREE_128(a, f, b)
#endif
#if TS >= 128
#define TREE_64(a, f, b) TREE_STEP(a, f, b, 64)
#else
#define TREE_64(a, f, b)
#endif
#if TS >= 64
#define TREE_32(a, f, b) TREE_STEP(a, f, b, 32)
#else
#define TREE_32(a, f, b)
#endif
#if TS >= 32
#define TREE_16(a, f, b) TREE_STEP(a, f, b, 16)
#else
#define TREE_16(a, f, b)
#endif
#if TS >= 16
#define TREE_8(a, f, b) TREE_STEP(a, f, b, 8)
#else
#define TREE_8(a, f, b)
#endif
#define TEAM_REDUCE(T, arr, SGOP, OPF, init, v, first)                 \
    uint base = (first) + team_first;                                   \
    arr[base + lane] = v;                                               \
    sync_shared();                                                      \
    TREE_512(arr, OPF, base) TREE_256(arr, OPF, base) TREE_128(arr, OPF, base) \
    TREE_64(arr, OPF, base) TREE_32(arr, OPF, base) TREE_16(arr, OPF, base)    \
    TREE_8(arr, OPF, base)                                              \
    T t = arr[base];                                                    \
    for (uint i = 1u; i < min(uint(TS), 8u); i++)                       \
        t = OPF(t, arr[base + i]);                                      \
    return t;
#endif

float team_sum(float v, uint slot) { TEAM_REDUCE(float, red, subgroupAdd, add2, 0.0, v, slot * L) }
float team_max(float v, uint slot) { TEAM_REDUCE(float, red, subgroupMax, max, NEG_BIG, v, slot * L) }
#if OP == GLC_R_ARGMAX
uint team_min_u(uint v) { TEAM_REDUCE(uint, redu, subgroupMin, min, 0xffffffffu, v, 0u) }
#endif

// ---- pairs ----
// Pair p holds elements 2p and 2p + 1; a row [e0, e0 + n) spans pairs
// e0/2 .. (e0 + n - 1)/2. ok: which of the two lie in the row's first lim
// columns (uint wrap-around makes the element before e0 fail the test).

bvec2 pair_ok(uint p, uint e0, uint lim)
{
    return bvec2(2u * p - e0 < lim, 2u * p + 1u - e0 < lim);
}

// out's pair p (TO), 0 where not ok
vec2 load_out_pair(uint p, bvec2 ok)
{
#if TO == GLC_T_F32
    return vec2(ok.x ? uintBitsToFloat(o[2u * p]) : 0.0, ok.y ? uintBitsToFloat(o[2u * p + 1u]) : 0.0);
#else
    uint v = o[p];
    vec2 r = TO == GLC_T_F16 ? unpackHalf2x16(v)
                             : vec2(uintBitsToFloat(v << 16), uintBitsToFloat(v & 0xffff0000u));
    return vec2(ok.x ? r.x : 0.0, ok.y ? r.y : 0.0);
#endif
}

vec2 load_pair(uint p, bvec2 ok)
{
#ifdef SUMO
    return load_out_pair(p, ok); // add_rms_norm's merge pass: x + r, as the partials pass wrote it
#elif TX == GLC_T_F32
#ifdef BR
    return vec2(ok.x ? uintBitsToFloat(x[2u * p]) + uintBitsToFloat(rr[2u * p]) : 0.0,
                ok.y ? uintBitsToFloat(x[2u * p + 1u]) + uintBitsToFloat(rr[2u * p + 1u]) : 0.0);
#else
    return vec2(ok.x ? uintBitsToFloat(x[2u * p]) : 0.0,
                ok.y ? uintBitsToFloat(x[2u * p + 1u]) : 0.0);
#endif
#else
    uint v = x[p];
    vec2 r = TX == GLC_T_F16 ? unpackHalf2x16(v)
                             : vec2(uintBitsToFloat(v << 16), uintBitsToFloat(v & 0xffff0000u));
    // the other half may belong to another tensor: never let it through
    return vec2(ok.x ? r.x : 0.0, ok.y ? r.y : 0.0);
#endif
}

void store_pair(uint p, vec2 v, bvec2 ok)
{
#if TO == GLC_T_F32
    if (ok.x)
        o[2u * p] = floatBitsToUint(v.x);
    if (ok.y)
        o[2u * p + 1u] = floatBitsToUint(v.y);
#else
    if (ok.x && ok.y) {
        o[p] = glc_pack16(v.x, v.y, TO);
    } else if (ok.x) {
        atomicAnd(o[p], 0xffff0000u);
        atomicOr(o[p], glc_pack16(v.x, 0.0, TO) & 0xffffu);
    } else if (ok.y) {
        atomicAnd(o[p], 0x0000ffffu);
        atomicOr(o[p], glc_pack16(0.0, v.y, TO) & 0xffff0000u);
    }
#endif
}

// One output value per row (sum, mean): 16-bit rows share words.
void store_one(uint i, float v)
{
#if TO == GLC_T_F32
    o[i] = floatBitsToUint(v);
#else
    uint bits = glc_pack16(v, v, TO);
    if ((i & 1u) == 0u) {
        atomicAnd(o[i >> 1], 0xffff0000u);
        atomicOr(o[i >> 1], bits & 0xffffu);
    } else {
        atomicAnd(o[i >> 1], 0x0000ffffu);
        atomicOr(o[i >> 1], bits & 0xffff0000u);
    }
#endif
}

#if OP == GLC_R_RMS_NORM || OP == GLC_R_LAYER_NORM
// weight * v + bias for the pair's columns j (those of ok only)
vec2 affine(vec2 v, uint j, bvec2 ok)
{
#ifdef BW
    v.x *= ok.x ? GLC_LOAD(w, TW, j) : 0.0;
    v.y *= ok.y ? GLC_LOAD(w, TW, j + 1u) : 0.0;
#endif
#ifdef BB
    v.x += ok.x ? GLC_LOAD(bias, TB, j) : 0.0;
    v.y += ok.y ? GLC_LOAD(bias, TB, j + 1u) : 0.0;
#endif
    return v;
}
#endif

void main()
{
    lid = gl_LocalInvocationID.x;
    lane = lid % uint(TS);
    team_first = lid - lane;
    uint rows = glc_p[P_ROWS], n = glc_p[P_N];
    uint team = glc_group_index() * (L / uint(TS)) + lid / uint(TS);
#if SEGS == 0 || (SEGS == 2 && OP >= GLC_R_SUM)
    uint nseg = 1u, row = team, seg = 0u;
#else
    uint nseg = glc_p[P_NSEG], row = team / nseg, seg = team % nseg;
#endif
    bool live = !glc_group_out_of_range() && row < rows;
    uint e0 = live ? row * n : 0u;
    uint p0 = e0 >> 1;
    uint np = live ? ((e0 + n - 1u) >> 1) - p0 + 1u : 0u; // pairs this row spans
    // this team's pairs of the row: [cb, ce)
#if SEGS == 0
    uint cb = 0u, ce = np;
#else
    uint cb = min(seg * glc_p[P_SEG_PAIRS], np), ce = min(cb + glc_p[P_SEG_PAIRS], np);
    uint ns = live ? glc_p[P_NSEG] : 0u, pr = row * glc_p[P_NSEG]; // the row's partials
#endif

#if OP == GLC_R_SOFTMAX
    // ---- softmax ----
    uint q = row % glc_p[P_TQ], keep = q + 1u + glc_p[P_OFFP];
    uint lim = min(n, keep > glc_p[P_OFFN] ? keep - glc_p[P_OFFN] : 0u);
    float scale = glc_pf(P_SCALE);
#if PER > 0
    vec2 v[PER];
    float m = NEG_BIG;
    for (int k = 0; k < PER; k++) {
        uint c = lane + uint(k) * uint(TS), p = p0 + c;
        bvec2 ok = c < np ? pair_ok(p, e0, lim) : bvec2(false);
        vec2 t = load_pair(p, ok) * scale;
        v[k] = vec2(ok.x ? t.x : NEG_BIG, ok.y ? t.y : NEG_BIG);
        m = max(m, max(v[k].x, v[k].y));
    }
    float mx = team_max(m, 0u);
    float s = 0.0;
    for (int k = 0; k < PER; k++) {
        uint c = lane + uint(k) * uint(TS);
        bvec2 ok = c < np ? pair_ok(p0 + c, e0, lim) : bvec2(false);
        v[k] = vec2(ok.x ? exp(v[k].x - mx) : 0.0, ok.y ? exp(v[k].y - mx) : 0.0);
        s += v[k].x + v[k].y;
    }
    float total = team_sum(s, 1u);
    float inv = total > 0.0 ? 1.0 / total : 0.0;
    for (int k = 0; k < PER; k++) {
        uint c = lane + uint(k) * uint(TS);
        if (c < np)
            store_pair(p0 + c, v[k] * inv, pair_ok(p0 + c, e0, n));
    }
#else
    // online: a running max and the sum of exp relative to it
#if SEGS != 2
    float m = NEG_BIG, s = 0.0;
    for (uint c = cb + lane; c < ce; c += uint(TS)) {
        bvec2 ok = pair_ok(p0 + c, e0, lim);
        vec2 t = load_pair(p0 + c, ok) * scale;
        float mn = max(m, max(ok.x ? t.x : NEG_BIG, ok.y ? t.y : NEG_BIG));
        s = s * exp(m - mn) + (ok.x ? exp(t.x - mn) : 0.0) + (ok.y ? exp(t.y - mn) : 0.0);
        m = mn;
    }
    float mx = team_max(m, 0u);
    float total = team_sum(s * exp(m - mx), 1u);
#else
    // the same merge over the row's segments
    float mx = NEG_BIG, total = 0.0;
    for (uint g = 0u; g < ns; g++) {
        float mg = uintBitsToFloat(part[2u * (pr + g)]), mn = max(mx, mg);
        total = total * exp(mx - mn) + uintBitsToFloat(part[2u * (pr + g) + 1u]) * exp(mg - mn);
        mx = mn;
    }
#endif
#if SEGS == 1
    if (live && lane == 0u) {
        part[2u * team] = floatBitsToUint(mx);
        part[2u * team + 1u] = floatBitsToUint(total);
    }
#else
    float inv = total > 0.0 ? 1.0 / total : 0.0;
    for (uint c = cb + lane; c < ce; c += uint(TS)) {
        bvec2 ok = pair_ok(p0 + c, e0, lim);
        vec2 t = load_pair(p0 + c, ok) * scale;
        vec2 y = vec2(ok.x ? exp(t.x - mx) * inv : 0.0, ok.y ? exp(t.y - mx) * inv : 0.0);
        store_pair(p0 + c, y, pair_ok(p0 + c, e0, n));
    }
#endif
#endif

#elif OP == GLC_R_RMS_NORM || OP == GLC_R_LAYER_NORM
    // ---- rms_norm, layer_norm ----
    float eps = glc_pf(P_EPS), fn = float(n);
#if PER > 0
    vec2 v[PER];
    float s = 0.0;
    for (int k = 0; k < PER; k++) {
        uint c = lane + uint(k) * uint(TS), p = p0 + c;
        bvec2 ok = c < np ? pair_ok(p, e0, n) : bvec2(false);
        v[k] = load_pair(p, ok);
#ifdef BR
        if (c < np)
            store_pair(p, v[k], ok);
#endif
#if OP == GLC_R_RMS_NORM
        s += v[k].x * v[k].x + v[k].y * v[k].y;
#else
        s += v[k].x + v[k].y;
#endif
    }
#if OP == GLC_R_RMS_NORM
    float mean = 0.0;
    float r = inversesqrt(team_sum(s, 0u) / fn + eps);
#else
    float mean = team_sum(s, 0u) / fn;
    float s2 = 0.0;
    for (int k = 0; k < PER; k++) {
        uint c = lane + uint(k) * uint(TS);
        bvec2 ok = c < np ? pair_ok(p0 + c, e0, n) : bvec2(false);
        vec2 d = v[k] - mean;
        s2 += (ok.x ? d.x * d.x : 0.0) + (ok.y ? d.y * d.y : 0.0);
    }
    float r = inversesqrt(team_sum(s2, 1u) / fn + eps);
#endif
    for (int k = 0; k < PER; k++) {
        uint c = lane + uint(k) * uint(TS), p = p0 + c;
        if (c < np) {
            bvec2 ok = pair_ok(p, e0, n);
            store_pair(p + NOFF, affine((v[k] - mean) * r, 2u * p - e0, ok), ok);
        }
    }
#elif SEGS == 3
    // a layer_norm's bias, added to its segment in place
    for (uint c = cb + lane; c < ce; c += uint(TS)) {
        uint p = p0 + c;
        bvec2 ok = pair_ok(p, e0, n);
        store_pair(p, affine(load_out_pair(p, ok), 2u * p - e0, ok), ok);
    }
#else
    // layer_norm sums x - x[row start]: no cancellation when |mean| >> std
    float shift = OP == GLC_R_LAYER_NORM && live ? GLC_LOAD(x, TX, e0) : 0.0;
#if SEGS != 2
    float s = 0.0, s2 = 0.0;
    for (uint c = cb + lane; c < ce; c += uint(TS)) {
        bvec2 ok = pair_ok(p0 + c, e0, n);
        vec2 t = load_pair(p0 + c, ok);
#ifdef BR
        store_pair(p0 + c, t, ok);
#endif
        vec2 d = vec2(ok.x ? t.x - shift : 0.0, ok.y ? t.y - shift : 0.0);
        s += d.x + d.y;
        s2 += d.x * d.x + d.y * d.y;
    }
#if OP == GLC_R_RMS_NORM
    float t1 = 0.0, t2 = team_sum(s2, 0u);
#else
    float t1 = team_sum(s, 0u), t2 = team_sum(s2, 1u);
#endif
#else
    float t1 = 0.0, t2 = 0.0;
    for (uint g = 0u; g < ns; g++) {
        t1 += uintBitsToFloat(part[2u * (pr + g)]);
        t2 += uintBitsToFloat(part[2u * (pr + g) + 1u]);
    }
#endif
#if SEGS == 1
    if (live && lane == 0u) {
        part[2u * team] = floatBitsToUint(t1);
        part[2u * team + 1u] = floatBitsToUint(t2);
    }
#else
#if OP == GLC_R_RMS_NORM
    float mean = 0.0;
    float r = inversesqrt(t2 / fn + eps);
#else
    float m1 = t1 / fn;
    float var = max(t2 / fn - m1 * m1, 0.0);
    float mean = shift + m1;
    float r = inversesqrt(var + eps);
#endif
    for (uint c = cb + lane; c < ce; c += uint(TS)) {
        uint p = p0 + c;
        bvec2 ok = pair_ok(p, e0, n);
        store_pair(p + NOFF, affine((load_pair(p, ok) - mean) * r, 2u * p - e0, ok), ok);
    }
#endif
#endif

#elif OP == GLC_R_SUM || OP == GLC_R_MEAN
    // ---- sum, mean ----
    float s = 0.0;
#if SEGS == 2
    for (uint g = lane; g < ns; g += uint(TS))
        s += uintBitsToFloat(part[2u * (pr + g)]);
#else
    for (uint c = cb + lane; c < ce; c += uint(TS)) {
        vec2 t = load_pair(p0 + c, pair_ok(p0 + c, e0, n));
        s += t.x + t.y;
    }
#endif
    float total = team_sum(s, 0u);
#if SEGS == 1
    if (live && lane == 0u)
        part[2u * team] = floatBitsToUint(total);
#else
    if (live && lane == 0u)
        store_one(row, OP == GLC_R_MEAN ? total / float(n) : total);
#endif

#else
    // ---- argmax: the first index of the maximum ----
    float best = NEG_BIG;
    uint at = 0xffffffffu;
#if SEGS == 2
    // each segment's first maximum; the earlier segment wins a tie
    for (uint g = lane; g < ns; g += uint(TS)) {
        float v = uintBitsToFloat(part[2u * (pr + g)]);
        uint i = part[2u * (pr + g) + 1u];
        if (i != 0xffffffffu && (v > best || at == 0xffffffffu)) {
            best = v;
            at = i;
        }
    }
#else
    for (uint c = cb + lane; c < ce; c += uint(TS)) {
        uint p = p0 + c;
        bvec2 ok = pair_ok(p, e0, n);
        vec2 t = load_pair(p, ok);
        if (ok.x && (t.x > best || at == 0xffffffffu)) {
            best = t.x;
            at = 2u * p - e0;
        }
        if (ok.y && (t.y > best || at == 0xffffffffu)) {
            best = t.y;
            at = 2u * p + 1u - e0;
        }
    }
#endif
    float mx = team_max(best, 0u);
    uint first = team_min_u(best == mx ? at : 0xffffffffu);
#if SEGS == 1
    if (live && lane == 0u) {
        part[2u * team] = floatBitsToUint(mx);
        part[2u * team + 1u] = first;
    }
#else
    if (live && lane == 0u)
        o[row] = first;
#endif
#endif
}
