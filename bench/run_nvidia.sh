#!/usr/bin/env bash
# Both sides of the benchmarks in one call on an NVIDIA machine, run from the
# repo root with build/ made:
#
#   OUT=<dir> bench/run_nvidia.sh [--quick] [--no-ops] [--no-transformer]
#
# 1. ops: the PyTorch reference (bench/torch_ref.py: copy GB/s and cuBLAS
#    SGEMM -> $OUT/torch_ref.json), glc-bench-ops with it (GLC_REF),
#    glc-bench, bench_hazard;
# 2. transformer: build/examples/transformer --config 1b --wdtype f16 saves
#    the weights ($OUT/w1b.bin), our logits ($OUT/logits.bin) and our decode
#    report ($OUT/glc_decode.json); torch_ref.py checks the logits against
#    PyTorch f32 ($OUT/torch_check.json) and times PyTorch decode on the
#    same weights and prompt ($OUT/torch_decode.jsonl): eager and CUDA graph
#    (static KV cache, the step captured once) in f16 and bf16, eager f32,
#    and torch.compile reduce-overhead in f16 with GLC_TORCH_COMPILE=1;
# 3. a markdown table ($OUT/summary.md): our ms/token against each PyTorch
#    row, and each against the bandwidth floor (weight bytes read per
#    token / the device copy GB/s measured in this run).
#
# --quick: smaller op sizes and --config tiny everywhere (a smoke run).
# --no-ops / --no-transformer: leave out part 1 / part 2.
# Environment: OUT (default /tmp), GLC_WDTYPE (f16), GLC_DECODE (32 tokens),
# GLC_COMMIT (default: git describe --always --dirty: "-dirty" when the copy
# differs from its HEAD, as a copied working tree may).
# Every part runs even when an earlier one failed (a part that needs a
# missing file is skipped); the end lists each part's exit status, and the
# script exits 1 if any part failed (a logits mismatch included).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
mkdir -p "$out"
quick="" config=1b ops=1 tr=1
for a in "$@"; do
    case $a in
    --quick) quick=--quick config=tiny ;;
    --no-ops) ops=0 ;;
    --no-transformer) tr=0 ;;
    *)
        echo "usage: OUT=<dir> $0 [--quick] [--no-ops] [--no-transformer]" >&2
        exit 2
        ;;
    esac
done
wdtype=${GLC_WDTYPE:-f16}
decode=${GLC_DECODE:-32}
commit=${GLC_COMMIT:-$(git describe --always --dirty 2>/dev/null || echo '?')}
weights="$out/w$config.bin"
logits="$out/logits.bin"

statuses=""
failed=0
# part NAME CMD...: runs CMD, records its exit status, never stops the script.
part() {
    local name=$1 st=0
    shift
    echo
    echo "=== $name: $*"
    "$@" || st=$?
    statuses="$statuses| $name | $([ "$st" = 0 ] && echo ok || echo "FAILED (exit $st)") |"$'\n'
    [ "$st" = 0 ] || failed=1
    return 0
}
skip() {
    echo
    echo "=== $1: skipped ($2)"
    statuses="$statuses| $1 | skipped: $2 |"$'\n'
}
have() { [ -x "$1" ] || { echo "missing $1 (build it first: make)" >&2; return 127; }; }

# ---- 1. op benchmarks
ref_json() {
    python3 bench/torch_ref.py $quick >"$out/torch_ref.json" && cat "$out/torch_ref.json"
}
ops_bench() {
    have build/glc-bench-ops || return
    if [ -s "$out/torch_ref.json" ]; then
        GLC_REF="$out/torch_ref.json" build/glc-bench-ops $quick
    else
        echo "(no PyTorch reference: glc-bench-ops runs without GLC_REF)"
        build/glc-bench-ops $quick
    fi
}
session_bench() { have build/glc-bench && GLC_COMMIT=$commit build/glc-bench $quick; }
hazard_bench() { have build/bench_hazard && build/bench_hazard; }

if [ "$ops" = 1 ]; then
    rm -f "$out/torch_ref.json"
    part torch_ref ref_json
    part glc-bench-ops ops_bench
    part glc-bench session_bench
    part bench_hazard hazard_bench
fi

# ---- 2. transformer: ours, then PyTorch's check and decode benchmark
ours() {
    have build/examples/transformer &&
        build/examples/transformer --config "$config" --wdtype "$wdtype" --save "$weights" \
            --logits "$logits" --decode "$decode" --report-json "$out/glc_decode.json"
}
torch_bench() { # dtype impl
    local src=()
    [ -s "$logits" ] && src=(--logits "$logits") # the same prompt as ours
    python3 bench/torch_ref.py --model "$weights" --decode-bench "$decode" --dtype "$1" --impl "$2" \
        ${src[@]+"${src[@]}"} $quick | tee -a "$out/torch_decode.jsonl"
}

if [ "$tr" = 1 ]; then
    rm -f "$weights" "$logits" "$out/glc_decode.json" "$out/torch_check.json" "$out/torch_decode.jsonl"
    part transformer ours
    if [ -s "$weights" ] && [ -s "$logits" ]; then
        part torch_check_f32 python3 bench/torch_ref.py --model "$weights" --logits "$logits" \
            --dtype f32 --json "$out/torch_check.json"
    else
        skip torch_check_f32 "no weights or logits file from the transformer"
    fi
    if [ -s "$weights" ]; then
        part torch_graph_f16 torch_bench f16 graph
        part torch_eager_f16 torch_bench f16 eager
        part torch_graph_bf16 torch_bench bf16 graph
        part torch_eager_bf16 torch_bench bf16 eager
        part torch_eager_f32 torch_bench f32 eager
        if [ "${GLC_TORCH_COMPILE:-0}" = 1 ]; then
            part torch_compile_f16 torch_bench f16 compile
        fi
    else
        skip torch_decode "no weights file"
    fi
fi

# ---- 3. the tables
summary() {
    python3 - "$out" "$config" "$commit" "$wdtype" <<'EOF' | tee "$out/summary.md"
import datetime, json, os, subprocess, sys

out, config, commit, wdtype = sys.argv[1:5]


def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


ref, glc, chk = load("torch_ref.json"), load("glc_decode.json"), load("torch_check.json")
pt = {}
try:
    for line in open(os.path.join(out, "torch_decode.jsonl")):
        if line.strip().startswith("{"):
            r = json.loads(line)
            pt[(r.get("impl", "pytorch eager"), r["dtype"])] = r
except (OSError, ValueError):
    pass
try:
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    gpu, driver = [s.strip() for s in smi.split(",", 1)]
except Exception:
    gpu, driver = (ref or {}).get("device", "?"), "?"
any_pt = next(iter(pt.values()), None)
torch_v = (ref or any_pt or chk or {}).get("torch", "?")
print("### %s, driver %s, torch %s; commit %s; %s" % (gpu, driver, torch_v, commit,
                                                     datetime.date.today().isoformat()))
print()
if not glc and not pt:
    print("(no transformer results)")
    sys.exit(0)

def num(d, k):
    v = (d or {}).get(k)
    return v if isinstance(v, (int, float)) else None

def f(v, fmt="%.3f"):
    return "-" if v is None else fmt % v

copy = num(ref, "copy_gbs") or num(any_pt, "copy_gbs")
cfg = (any_pt or chk or {}).get("config") or {}
if cfg:
    print("Transformer decode, config %s: d_model %s, %s layers, %s/%s heads x %s, ffn %s, vocab %s; "
          "weights %s; prompt %s tokens, %s decode tokens timed."
          % (config, cfg.get("d_model"), cfg.get("n_layers"), cfg.get("n_heads"), cfg.get("n_kv_heads"),
             cfg.get("head_dim"), cfg.get("ffn"), cfg.get("vocab"), cfg.get("wdtype"),
             (any_pt or {}).get("prompt_tokens", "?"), (any_pt or {}).get("decode_tokens", "?")))
print("Floor: weight bytes one decode step reads (all but the embedding) / PyTorch device copy "
      "%s GB/s (bytes read + written per second, measured in this run). PyTorch eager: op by op; "
      "PyTorch cuda graph: static KV cache, fused projections, the step (argmax included) captured "
      "once and replayed; each: prefill, then each token timed alone with its argmax's .item() and "
      "torch.cuda.synchronize; median over 3 passes; the faster of its two attention paths."
      % f(copy, "%.0f"))
print()
glc_ms = num(glc, "decode_ms_per_token")
file_bytes = num(any_pt, "weight_bytes_per_token_file")
glc_floor = file_bytes / (copy * 1e9) * 1e3 if file_bytes and copy else None
rows = [("glcompute", (glc or {}).get("wdtype") or cfg.get("wdtype") or wdtype, glc_ms, num(glc, "prefill_tokens_per_s"), glc_floor)]
for (impl, dt), r in sorted(pt.items(), key=lambda kv: kv[1]["decode_ms_per_token"]):
    floor = r["weight_bytes_per_token_model"] / (copy * 1e9) * 1e3 if copy else None
    rows.append(("%s %s (%s)" % (impl.replace("pytorch", "PyTorch"), dt, r.get("attn", "?")), dt,
                 r["decode_ms_per_token"], r.get("prefill_tokens_per_s"), floor))
print("| implementation | weights read as | decode ms/token | tokens/s | prefill tokens/s | "
      "glcompute ms / its ms | floor ms/token | ms / floor |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for name, dt, ms, pre, floor in rows:
    print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
        name, dt, f(ms), f(1e3 / ms if ms else None, "%.1f"), f(pre, "%.0f"),
        f(glc_ms / ms if glc_ms and ms else None, "%.2fx"), f(floor),
        f(ms / floor if ms and floor else None, "%.2fx")))
if glc:
    extra = ["%s %s" % (k.replace("_", " "), glc[k]) for k in ("dispatches_per_token", "barriers_per_token")
             if k in glc]
    if extra:
        print()
        print("glcompute: " + ", ".join(extra) + ".")
print()
if chk:
    print("Correctness (PyTorch %s, %s attention, vs our logits): %s; %d steps, worst NMSE %.3g, "
          "worst max rel %.3g, argmax agrees %d/%d (%d/%d decided); tolerance NMSE <= %g."
          % (chk.get("dtype"), chk.get("attn"), "PASS" if chk.get("pass") else "FAIL", chk["steps"],
             chk["worst_nmse"], chk["worst_max_rel"], chk["argmax_agree"], chk["steps"],
             chk["argmax_agree_decided"], chk["argmax_decided"], chk["tol_nmse"]))
else:
    print("Correctness: no result (see torch_check_f32 below).")
EOF
}
part summary summary

echo
echo "| part | status |"
echo "|---|---|"
printf '%s' "$statuses"
printf '\n| part | status |\n|---|---|\n%s' "$statuses" >>"$out/summary.md"
exit $failed
