#!/usr/bin/env python3
"""PyTorch reference side of the glcompute benchmarks on an NVIDIA machine.

Modes (needs torch + numpy, except --self-test, which needs numpy only):

  torch_ref.py [--quick] > ref.json
      Device-to-device copy bandwidth and cuBLAS FP32 SGEMM (TF32 off),
      one JSON line, read by glc-bench-ops (GLC_REF=<file>).

  torch_ref.py --mv-chain
      The 1b decode's f16 mat-vecs (cuBLAS through F.linear, batch 1) in a
      chain captured in one CUDA graph, each link with its own weights from
      a 1 GB pool (L2 holds none of the next), alone and as a layer's four
      in turn: the CUDA side of glc-bench-ops' "read chain" and "mv chain".

  torch_ref.py --model WEIGHTS --logits LOGITS [--dtype f32|f16] [--json OUT]
      Correctness: loads the weights written by examples/transformer.c
      (--save), builds the same llama-style decoder in PyTorch eager, replays
      the token sequence of the logits file (written by the transformer with
      --logits: prefill of the prompt, then one decode step per record, with
      a KV cache) and compares its logits with ours, step by step: max abs
      diff, max relative diff (max|a-b| / max|b|), NMSE (sum (a-b)^2 /
      sum b^2) and argmax agreement. Prints a table and a verdict; exit
      status 1 on a mismatch. Tolerances (override with --tol-nmse, --margin):
        f32 reference (TF32 off): NMSE <= 1e-5 on every step;
        f16 reference:            NMSE <= 1e-4 on every step;
        (bf16 reference:          NMSE <= 3e-3, not measured);
      and on every step our argmax (the record's `next`, which must also be
      the argmax of our logits) equals the reference's wherever the
      reference's top-2 margin exceeds `margin` x max|reference logits|
      (1e-3 for f32, 1e-2 for f16); closer steps are near-ties and only
      counted. Any non-finite logit fails. Why these numbers: both sides read
      the same stored weights (dequantized exactly), so with everything in
      f32 the difference is rounding and summation order, NMSE ~1e-13 (seen
      on the H100 with the tiny config); an f16 KV cache or f16 activations
      on our side (the 1b config keeps its cache in f16) give ~1e-7 (2e-7
      seen on a 1b-sized model with an f16 cache); a logic error (RoPE
      pairing or position, the GQA head map, the causal mask, the RoPE base)
      gives ~1e-3 to 1 (--self-test measures such bugs on a small model:
      GPT-J pairing 0.13, query position off by one 0.05, base x2 9e-4, GQA
      map j % Hkv 0.8, no causal mask 0.26). 1e-5 sits between the two with
      about two orders of margin each way. An f16 PyTorch model is off by
      ~4e-6 on its own (seen, 1b-sized), hence 1e-4 for it. The verdict also
      names the level reached (f32-level at NMSE <= 1e-9).

  torch_ref.py --model WEIGHTS --decode-bench N [--dtype f32|f16|bf16]
               [--impl eager|graph|compile]
               [--prompt P | --logits LOGITS] [--warmup W] [--json OUT]
      Speed: PyTorch decode of the same model. --impl eager (default): each
      step op by op, the baseline a plain PyTorch program gets. --impl graph:
      what a PyTorch user who cares about speed runs: a static KV cache
      (attention over all of it, later positions masked), fused projections,
      the whole step (argmax included) captured once in a CUDA graph and
      replayed per token, the token and position copied in first. --impl
      compile: torch.compile(mode="reduce-overhead") of that static step
      (its own CUDA graphs; needs a working Triton). One prefill of P prompt
      tokens (or the logits file's prompt), then N decode steps, each timed
      alone (argmax and its .item() included, then torch.cuda.synchronize);
      reports the median ms per token over R passes (--reps, default 3;
      after a warm-up pass of prefill + W tokens) and the prefill time
      (median of 3 a pass) as tokens/s; without --attn both attention paths
      are timed, taking turns, and the faster reported. Also reports the
      weight bytes a decode step reads (as stored in the file, and as held by
      the PyTorch model in its dtype) and the bandwidth floor: those bytes / the
      device copy GB/s measured in the same run (bytes read + written per
      second, as in the default mode). One JSON line on stdout (progress
      goes to stderr) for bench/run_nvidia.sh to merge with ours.

  torch_ref.py --logits LOGITS --compare OTHER [--tol-nmse T] [--json OUT]
      Two glcompute runs of one model against each other (numpy only), e.g.
      the native weights against the same model saved and loaded as GGUF
      (transformer --save-gguf / --load): the same prompt, and at every step
      the same token and position (a run that chose another token has left
      the comparable sequence); then the logits as the check compares them,
      OTHER as the reference, NMSE <= 1e-5 unless --tol-nmse says.

  torch_ref.py --self-test
      Checks the file parsing, the numpy dequantization (against a scalar
      decoder) and the comparison on small generated models against a numpy
      float64 reference, and measures how far some deliberate bugs move the
      logits; with torch present also the PyTorch model (on --device).

Other flags: --device (default cuda), --attn math|sdpa (default: math for
the correctness check, the faster of the two for the benchmark), --unfused
(separate q/k/v and w1/w3 matmuls; default fuses them, as glcompute does),
--manual-norm (RMSNorm spelled out in f32 ops rather than torch's fused
F.rms_norm), --quick (smaller copy buffers). PyTorch eager means no
torch.compile and no CUDA graphs: the baseline a plain PyTorch program gets;
the cuDNN attention backend is off (it re-plans for every new key length).

The model (must match examples/transformer.c): x = tok_emb[tokens]; per
layer: h = rmsnorm(x) * attn_norm, rmsnorm(x) = x / sqrt(mean(x^2) + eps);
q, k, v = h wq^T, h wk^T, h wv^T as [T, heads, head_dim]; RoPE NeoX at the
tokens' positions (pairs (i, i + hd/2), theta = pos * base^(-2i/hd)); k, v
appended to the layer's cache; grouped-query causal attention (query head j
reads kv head j // (Hq/Hkv)), scale 1/sqrt(hd); x += attn wo^T; h2 =
rmsnorm(x) * ffn_norm; x += (silu(h2 w1^T) * (h2 w3^T)) w2^T. Logits =
(rmsnorm(x) * out_norm) out^T of the last position.
"""
import argparse
import json
import math
import os
import statistics
import struct
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:  # the plain-python parts still work
    np = None

torch = None  # imported by need_torch(): the self-test runs without it

# ---------------------------------------------------------------- formats --

DT_F32, DT_F16, DT_BF16, DT_I32, DT_U32, DT_U8, DT_Q8_0, DT_Q4_0 = range(1, 9)
DT_NAMES = {DT_F32: "f32", DT_F16: "f16", DT_BF16: "bf16", DT_I32: "i32", DT_U32: "u32",
            DT_U8: "u8", DT_Q8_0: "q8_0", DT_Q4_0: "q4_0"}
DT_SIZE = {DT_F32: 4, DT_F16: 2, DT_BF16: 2, DT_I32: 4, DT_U32: 4, DT_U8: 1}
BLOCK = 32
BLOCK_BYTES = {DT_Q8_0: 34, DT_Q4_0: 18}
CFG_KEYS = ("d_model", "n_layers", "n_heads", "n_kv_heads", "head_dim", "ffn", "vocab",
            "max_seq")
WMAGIC = b"GLCWTS01"
LMAGIC = b"GLCLOG01"


class FormatError(Exception):
    pass


def numel(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


def storage_bytes(dtype, shape):
    n = numel(shape)
    if dtype in BLOCK_BYTES:
        if not shape or shape[-1] % BLOCK:
            raise FormatError("%s tensor's last dim %s is not a multiple of 32"
                              % (DT_NAMES[dtype], shape[-1] if shape else "?"))
        return n // BLOCK * BLOCK_BYTES[dtype]
    if dtype not in DT_SIZE:
        raise FormatError("unknown dtype code %d" % dtype)
    return n * DT_SIZE[dtype]


class Weights:
    """A weights file: cfg (dict: the header) and tensors (name -> (dtype,
    shape tuple, raw bytes)). values(name) gives float32 numpy values."""

    def __init__(self, cfg, tensors, path=None):
        self.cfg, self.tensors, self.path = cfg, tensors, path

    def values(self, name):
        dtype, shape, raw = self.tensors[name]
        return dequant(dtype, shape, raw)

    def file_bytes(self, names=None):
        return sum(len(t[2]) for n, t in self.tensors.items() if names is None or n in names)


def read_weights(path):
    with open(path, "rb") as f:
        data = f.read()
    mv = memoryview(data)
    if len(data) < 60 or data[:8] != WMAGIC:
        raise FormatError("%s: not a glcompute weights file (magic %r)" % (path, data[:8]))
    vals = struct.unpack_from("<8I", data, 8)
    cfg = dict(zip(CFG_KEYS, vals))
    cfg["rope_base"], cfg["norm_eps"] = struct.unpack_from("<2f", data, 40)
    wdtype, cfg["seed"], ntensors = struct.unpack_from("<3I", data, 48)
    cfg["wdtype"] = DT_NAMES.get(wdtype, str(wdtype))
    off, tensors = 60, {}
    for i in range(ntensors):
        try:
            (nlen,) = struct.unpack_from("<I", data, off)
            name = bytes(mv[off + 4:off + 4 + nlen]).decode("utf-8")
            off += 4 + nlen
            dtype, rank = struct.unpack_from("<2I", data, off)
            shape = struct.unpack_from("<%dq" % rank, data, off + 8)
            off += 8 + 8 * rank
            (nbytes,) = struct.unpack_from("<Q", data, off)
            off += 8
        except struct.error:
            raise FormatError("%s: truncated in the header of tensor %d" % (path, i))
        if off + nbytes > len(data):
            raise FormatError("%s: tensor %s runs past the end of the file" % (path, name))
        want = storage_bytes(dtype, shape)
        if nbytes != want:
            raise FormatError("%s: tensor %s %s %s has %d bytes, expected %d"
                              % (path, name, DT_NAMES.get(dtype, dtype), list(shape), nbytes, want))
        tensors[name] = (dtype, tuple(shape), mv[off:off + nbytes])
        off += nbytes
    if off != len(data):
        raise FormatError("%s: %d trailing bytes after %d tensors" % (path, len(data) - off, ntensors))
    return Weights(cfg, tensors, path)


def write_weights(path, cfg, tensors):
    """cfg as read_weights gives it (wdtype may be a name); tensors: a list
    of (name, dtype code, shape, raw bytes)."""
    wd = cfg["wdtype"]
    if not isinstance(wd, int):
        wd = {v: k for k, v in DT_NAMES.items()}[wd]
    with open(path, "wb") as f:
        f.write(WMAGIC)
        f.write(struct.pack("<8I", *[cfg[k] for k in CFG_KEYS]))
        f.write(struct.pack("<2f", cfg["rope_base"], cfg["norm_eps"]))
        f.write(struct.pack("<3I", wd, cfg.get("seed", 0), len(tensors)))
        for name, dtype, shape, raw in tensors:
            nb = name.encode("utf-8")
            f.write(struct.pack("<I", len(nb)) + nb + struct.pack("<2I", dtype, len(shape)))
            f.write(struct.pack("<%dq" % len(shape), *shape))
            f.write(struct.pack("<Q", len(raw)))
            f.write(raw)


def dequant(dtype, shape, raw):
    """float32 numpy array of a tensor's stored bytes (vectorized)."""
    if np is None:
        raise RuntimeError("numpy is needed to read tensor values")
    if dtype == DT_F32:
        a = np.frombuffer(raw, "<f4").astype(np.float32)  # a writable copy
    elif dtype == DT_F16:
        a = np.frombuffer(raw, "<f2").astype(np.float32)
    elif dtype == DT_BF16:
        a = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
    elif dtype in (DT_I32, DT_U32, DT_U8):
        a = np.frombuffer(raw, {DT_I32: "<i4", DT_U32: "<u4", DT_U8: "u1"}[dtype]).astype(np.float32)
    elif dtype == DT_Q8_0:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 34)
        d = b[:, :2].copy().view("<f2").astype(np.float32)  # [blocks, 1]
        q = b[:, 2:].copy().view(np.int8).astype(np.float32)  # [blocks, 32]
        a = (d * q).reshape(-1)  # exact in f32: 11-bit scale x 8-bit q
    elif dtype == DT_Q4_0:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 18)
        d = b[:, :2].copy().view("<f2").astype(np.float32)
        qs = b[:, 2:]
        # byte j: value j in the low nibble, value j + 16 in the high one
        q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0
        a = (d * q).reshape(-1)
    else:
        raise FormatError("unknown dtype code %d" % dtype)
    return a.reshape(shape)


class Logits:
    """A logits file: prompt (list of int), and per step token, pos, next
    (int32 numpy arrays) and logits (float32 [nsteps, vocab])."""

    def __init__(self, prompt, vocab, token, pos, nxt, logits):
        self.prompt, self.vocab = prompt, vocab
        self.token, self.pos, self.next, self.logits = token, pos, nxt, logits

    def __len__(self):
        return len(self.token)


def read_logits(path):
    if np is None:
        raise RuntimeError("numpy is needed to read a logits file")
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 16 or data[:8] != LMAGIC:
        raise FormatError("%s: not a glcompute logits file (magic %r)" % (path, data[:8]))
    (nprompt,) = struct.unpack_from("<I", data, 8)
    off = 12 + 4 * nprompt
    if off + 8 > len(data):
        raise FormatError("%s: truncated in the prompt" % path)
    prompt = list(struct.unpack_from("<%di" % nprompt, data, 12))
    nsteps, vocab = struct.unpack_from("<2I", data, off)
    off += 8
    rec = np.dtype([("token", "<i4"), ("pos", "<i4"), ("next", "<i4"), ("logits", "<f4", (vocab,))])
    have = (len(data) - off) // rec.itemsize
    if have < nsteps or len(data) - off != nsteps * rec.itemsize:
        raise FormatError("%s: header says %d steps of vocab %d, the file holds %d (+%d bytes)"
                          % (path, nsteps, vocab, have, (len(data) - off) - have * rec.itemsize))
    r = np.frombuffer(data, rec, count=nsteps, offset=off)
    return Logits(prompt, vocab, r["token"].copy(), r["pos"].copy(), r["next"].copy(),
                  r["logits"].reshape(nsteps, vocab).astype(np.float32))


def write_logits(path, prompt, token, pos, nxt, logits):
    vocab = logits.shape[1] if len(logits) else 0
    with open(path, "wb") as f:
        f.write(LMAGIC + struct.pack("<I", len(prompt)) + struct.pack("<%di" % len(prompt), *prompt))
        f.write(struct.pack("<2I", len(token), vocab))
        for i in range(len(token)):
            f.write(struct.pack("<3i", int(token[i]), int(pos[i]), int(nxt[i])))
            f.write(np.asarray(logits[i], "<f4").tobytes())


# ------------------------------------------------------------- comparison --

TOLERANCES = {  # reference dtype: (NMSE bound, argmax margin as a fraction of max|ref|)
    "f32": (1e-5, 1e-3),
    "f16": (1e-4, 1e-2),
    "bf16": (3e-3, 3e-2),
}


def compare(ours, ref, nxt, tol_nmse, margin_frac):
    """ours, ref: [steps, vocab] arrays; nxt: our chosen tokens. Returns
    (rows, summary)."""
    rows, ok_all = [], True
    for i in range(len(ref)):
        a = np.asarray(ours[i], np.float64)
        b = np.asarray(ref[i], np.float64)
        finite = bool(np.isfinite(a).all())
        diff = np.abs(a - b)
        scale = float(np.abs(b).max()) if b.size else 0.0
        den = float((b * b).sum())
        max_abs = float(diff.max()) if finite else math.inf
        nmse = float((diff * diff).sum() / den) if finite and den > 0 else (0.0 if finite and max_abs == 0 else math.inf)
        ref_arg = int(np.argmax(b))
        our_arg = int(np.argmax(a)) if finite else -1
        if b.size >= 2:
            top2 = np.partition(b, -2)[-2:]
            margin = float(top2[1] - top2[0])
        else:
            margin = math.inf
        decided = margin > margin_frac * scale
        notes = []
        if not finite:
            notes.append("non-finite logits")
        if int(nxt[i]) != our_arg:
            notes.append("next %d is not the argmax %d of our logits" % (int(nxt[i]), our_arg))
        if nmse > tol_nmse:
            notes.append("nmse")
        if decided and int(nxt[i]) != ref_arg:
            notes.append("argmax")
        ok = not notes
        ok_all &= ok
        rows.append({"step": i, "max_abs": max_abs, "max_rel": max_abs / scale if scale > 0 else math.inf,
                     "nmse": nmse, "ours": int(nxt[i]), "ref": ref_arg,
                     "margin_rel": margin / scale if scale > 0 else math.inf,
                     "decided": bool(decided), "agree": int(nxt[i]) == ref_arg, "ok": ok,
                     "worst_index": int(np.argmax(diff)) if finite and b.size else -1,
                     "notes": notes})
    summary = {
        "pass": bool(ok_all) and len(rows) > 0,
        "steps": len(rows),
        "worst_nmse": max((r["nmse"] for r in rows), default=0.0),
        "worst_max_abs": max((r["max_abs"] for r in rows), default=0.0),
        "worst_max_rel": max((r["max_rel"] for r in rows), default=0.0),
        "argmax_agree": sum(r["agree"] for r in rows),
        "argmax_decided": sum(r["decided"] for r in rows),
        "argmax_agree_decided": sum(r["agree"] and r["decided"] for r in rows),
        "tol_nmse": tol_nmse,
        "margin": margin_frac,
    }
    return rows, summary


def level(nmse):
    if nmse <= 1e-9:
        return "f32-level agreement (NMSE <= 1e-9)"
    if nmse <= 1e-5:
        return "f16-level agreement (1e-9 < NMSE <= 1e-5)"
    if nmse <= 1e-3:
        return "loose agreement (1e-5 < NMSE <= 1e-3)"
    return "no agreement (NMSE > 1e-3)"


def print_table(lg, rows, summary, what, out=sys.stdout):
    p = lambda *a: print(*a, file=out)
    p("| step | pos | token | max abs | max rel | NMSE | ours | ref | margin/scale | ok |")
    p("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        i = r["step"]
        p("| %d | %d | %d | %.3g | %.3g | %.3g | %d | %d | %.2g%s | %s |" % (
            i, lg.pos[i], lg.token[i], r["max_abs"], r["max_rel"], r["nmse"], r["ours"], r["ref"],
            r["margin_rel"], "" if r["decided"] else " (tie)",
            "ok" if r["ok"] else "FAIL: " + ", ".join(r["notes"])))
    s = summary
    p("")
    p("%s: %d steps (prompt %d tokens); worst NMSE %.3g, worst max abs %.3g, worst max rel %.3g; "
      "argmax agrees on %d/%d steps (%d/%d where the reference's top-2 margin > %g of max|logit|)"
      % (what, s["steps"], len(lg.prompt), s["worst_nmse"], s["worst_max_abs"], s["worst_max_rel"],
         s["argmax_agree"], s["steps"], s["argmax_agree_decided"], s["argmax_decided"], s["margin"]))
    p("verdict: %s (tolerance: NMSE <= %g on every step and argmax agreement where decided); %s"
      % ("PASS" if s["pass"] else "FAIL", s["tol_nmse"], level(s["worst_nmse"])))


# ------------------------------------------------------------ torch model --

def need_torch():
    global torch
    if torch is None:
        import torch as t
        torch = t
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        # scaled_dot_product_attention: no cuDNN backend. It builds a plan
        # for every new key length, so each decode step (one more key) paid
        # tens of ms (seen on the H100: f16 decode 8 to 68 ms a token);
        # flash / memory-efficient / math kernels remain.
        if hasattr(torch.backends.cuda, "enable_cudnn_sdp"):
            torch.backends.cuda.enable_cudnn_sdp(False)
    return torch


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def device_name(dev):
    return torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"


class TorchModel:
    """The decoder in PyTorch eager, weights in `dtype` (float32 or
    float16/bfloat16), softmax in f32, RMSNorm by torch's fused rms_norm
    where it has one (f32 accumulation), else spelled out in f32 with f32
    norm weights; a preallocated KV cache of max_len positions."""

    def __init__(self, w, dtype, dev, max_len, attn="math", fused=True, fused_norm=True):
        t = need_torch()
        c = w.cfg
        self.dev, self.dt, self.attn, self.fused = dev, dtype, attn, fused
        self.D, self.L = c["d_model"], c["n_layers"]
        self.Hq, self.Hkv, self.hd = c["n_heads"], c["n_kv_heads"], c["head_dim"]
        self.F, self.V = c["ffn"], c["vocab"]
        self.eps = float(c["norm_eps"])
        if self.Hq % self.Hkv or self.hd % 2:
            raise FormatError("n_heads must be a multiple of n_kv_heads and head_dim even")
        self.g = self.Hq // self.Hkv
        self.scale = 1.0 / math.sqrt(self.hd)
        self.max_len = max_len
        self._gqa = None  # whether sdpa takes enable_gqa, found on first use
        self.fused_norm = fused_norm and hasattr(t.nn.functional, "rms_norm")

        def load(name, shape, keep_f32=False):
            if name not in w.tensors:
                raise FormatError("weights file has no tensor %r" % name)
            if tuple(w.tensors[name][1]) != tuple(shape):
                raise FormatError("tensor %s has shape %s, expected %s"
                                  % (name, list(w.tensors[name][1]), list(shape)))
            x = t.from_numpy(w.values(name)).to(dev)
            return x if keep_f32 and not self.fused_norm else x.to(dtype)

        D, F, qd, kd = self.D, self.F, self.Hq * self.hd, self.Hkv * self.hd
        self.emb = load("tok_emb", (self.V, D))
        self.layers = []
        for l in range(self.L):
            p = {"attn_norm": load("attn_norm.%d" % l, (D,), True),
                 "ffn_norm": load("ffn_norm.%d" % l, (D,), True),
                 "wo": load("wo.%d" % l, (D, qd)), "w2": load("w2.%d" % l, (D, F))}
            wq, wk, wv = load("wq.%d" % l, (qd, D)), load("wk.%d" % l, (kd, D)), load("wv.%d" % l, (kd, D))
            w1, w3 = load("w1.%d" % l, (F, D)), load("w3.%d" % l, (F, D))
            if fused:
                p["wqkv"] = t.cat([wq, wk, wv], 0)
                p["w13"] = t.cat([w1, w3], 0)
                del wq, wk, wv, w1, w3
            else:
                p.update(wq=wq, wk=wk, wv=wv, w1=w1, w3=w3)
            self.layers.append(p)
        self.out_norm = load("out_norm", (D,), True)
        self.out = load("out", (self.V, D))
        # RoPE tables from float64 angles, then rounded once to the model dtype
        half = self.hd // 2
        inv = float(c["rope_base"]) ** (-2.0 * t.arange(half, dtype=t.float64) / self.hd)
        ang = t.arange(max_len, dtype=t.float64)[:, None] * inv[None, :]
        self.cos = ang.cos().to(dtype).to(dev)
        self.sin = ang.sin().to(dtype).to(dev)
        self.kc = [t.zeros(self.Hkv, max_len, self.hd, dtype=dtype, device=dev) for _ in range(self.L)]
        self.vc = [t.zeros(self.Hkv, max_len, self.hd, dtype=dtype, device=dev) for _ in range(self.L)]

    def decode_weight_bytes(self):
        """Bytes of weights one decode step reads (all but the embedding)."""
        n = sum(x.numel() * x.element_size() for p in self.layers for x in p.values())
        return n + sum(x.numel() * x.element_size() for x in (self.out_norm, self.out))

    def rmsnorm(self, x, w):
        if self.fused_norm:  # one kernel (f32 accumulation inside for f16)
            return torch.nn.functional.rms_norm(x, (self.D,), w, self.eps)
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * w.float()).to(self.dt)

    def rope(self, x, cos, sin):  # x [T, H, hd]; cos, sin [T, 1, hd/2]
        h = self.hd // 2
        x1, x2 = x[..., :h], x[..., h:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)

    def attend_math(self, q, k, v, start):
        # q [T, Hq, hd]; k, v [Hkv, S, hd] -> [T, Hq*hd]
        T, S = q.shape[0], k.shape[1]
        qh = q.transpose(0, 1).reshape(self.Hkv, self.g * T, self.hd)  # row r*T + t: head kvh*g + r
        s = torch.matmul(qh, k.transpose(1, 2)).float() * self.scale  # [Hkv, g*T, S]
        if T > 1:
            qpos = start + torch.arange(T, device=self.dev).repeat(self.g)
            kpos = torch.arange(S, device=self.dev)
            s = s.masked_fill(kpos[None, :] > qpos[:, None], float("-inf"))
        p = torch.softmax(s, dim=-1).to(self.dt)
        o = torch.matmul(p, v)  # [Hkv, g*T, hd]
        return o.reshape(self.Hq, T, self.hd).transpose(0, 1).reshape(T, self.Hq * self.hd)

    def attend_sdpa(self, q, k, v, start):
        F = torch.nn.functional
        T, S = q.shape[0], k.shape[1]
        q4 = q.transpose(0, 1).unsqueeze(0)  # [1, Hq, T, hd]
        k4, v4 = k.unsqueeze(0), v.unsqueeze(0)
        kw = {}
        if T > 1 and start == 0:
            kw["is_causal"] = True
        elif T > 1:
            qpos = start + torch.arange(T, device=self.dev)
            kw["attn_mask"] = torch.arange(S, device=self.dev)[None, :] <= qpos[:, None]
        if self.g > 1 and self._gqa is not False:
            try:
                o = F.scaled_dot_product_attention(q4, k4, v4, scale=self.scale, enable_gqa=True, **kw)
                self._gqa = True
            except TypeError:  # torch < 2.5
                self._gqa = False
        if self.g == 1 or self._gqa is False:
            if self.g > 1:
                k4, v4 = k4.repeat_interleave(self.g, 1), v4.repeat_interleave(self.g, 1)
            o = F.scaled_dot_product_attention(q4, k4, v4, scale=self.scale, **kw)
        return o[0].transpose(0, 1).reshape(T, self.Hq * self.hd)

    def qkv(self, h, p):
        F = torch.nn.functional
        Hq, Hkv, hd = self.Hq, self.Hkv, self.hd
        if self.fused:
            return F.linear(h, p["wqkv"]).split([Hq * hd, Hkv * hd, Hkv * hd], dim=-1)
        return F.linear(h, p["wq"]), F.linear(h, p["wk"]), F.linear(h, p["wv"])

    def ffn(self, h2, p):
        F = torch.nn.functional
        if self.fused:
            g, u = F.linear(h2, p["w13"]).split([self.F, self.F], dim=-1)
        else:
            g, u = F.linear(h2, p["w1"]), F.linear(h2, p["w3"])
        return F.linear(F.silu(g) * u, p["w2"])

    def forward(self, ids, start):
        """ids: LongTensor [T] on the device, at positions start..start+T-1
        (the cache must hold 0..start-1). Returns f32 logits [vocab] of the
        last position."""
        F = torch.nn.functional
        T = ids.shape[0]
        if start + T > self.max_len:
            raise ValueError("position %d past the cache (%d)" % (start + T - 1, self.max_len))
        Hq, Hkv, hd = self.Hq, self.Hkv, self.hd
        cos = self.cos[start:start + T, None, :]
        sin = self.sin[start:start + T, None, :]
        attend = self.attend_sdpa if self.attn == "sdpa" else self.attend_math
        x = self.emb[ids]
        for l, p in enumerate(self.layers):
            q, k, v = self.qkv(self.rmsnorm(x, p["attn_norm"]), p)
            q = self.rope(q.reshape(T, Hq, hd), cos, sin)
            k = self.rope(k.reshape(T, Hkv, hd), cos, sin)
            self.kc[l][:, start:start + T] = k.transpose(0, 1)
            self.vc[l][:, start:start + T] = v.reshape(T, Hkv, hd).transpose(0, 1)
            S = start + T
            a = attend(q, self.kc[l][:, :S], self.vc[l][:, :S], start)
            x = x + F.linear(a, p["wo"])
            x = x + self.ffn(self.rmsnorm(x, p["ffn_norm"]), p)
        return F.linear(self.rmsnorm(x[-1:], self.out_norm), self.out)[0].float()

    def step_static(self, tok, pos):
        """One decode step with static shapes, for CUDA graph capture (and
        torch.compile): tok and pos are LongTensor [1] on the device. Returns
        the argmax, LongTensor [1]."""
        return self.logits_static(tok, pos).argmax().view(1)

    def logits_static(self, tok, pos):
        """The f32 logits of one decode step with static shapes: the new k, v
        go to the cache at pos and attention reads the whole cache with the
        positions past pos masked."""
        F = torch.nn.functional
        Hq, Hkv, hd = self.Hq, self.Hkv, self.hd
        cos = self.cos.index_select(0, pos)[:, None, :]
        sin = self.sin.index_select(0, pos)[:, None, :]
        keep = torch.arange(self.max_len, device=self.dev) <= pos  # [max_len]
        x = self.emb.index_select(0, tok)
        for l, p in enumerate(self.layers):
            q, k, v = self.qkv(self.rmsnorm(x, p["attn_norm"]), p)
            q = self.rope(q.reshape(1, Hq, hd), cos, sin)
            k = self.rope(k.reshape(1, Hkv, hd), cos, sin)
            self.kc[l].index_copy_(1, pos, k.transpose(0, 1))
            self.vc[l].index_copy_(1, pos, v.reshape(1, Hkv, hd).transpose(0, 1))
            a = self.attend_static(q, self.kc[l], self.vc[l], keep)
            x = x + F.linear(a, p["wo"])
            x = x + self.ffn(self.rmsnorm(x, p["ffn_norm"]), p)
        return F.linear(self.rmsnorm(x, self.out_norm), self.out)[0].float()

    def attend_static(self, q, k, v, keep):
        # q [1, Hq, hd]; k, v [Hkv, max_len, hd]; keep [max_len] -> [1, Hq*hd]
        if self.attn == "sdpa":
            F = torch.nn.functional
            q4, k4, v4 = q.transpose(0, 1).unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)
            if self.g > 1:  # static shapes: repeat rather than probe enable_gqa
                k4, v4 = k4.repeat_interleave(self.g, 1), v4.repeat_interleave(self.g, 1)
            o = F.scaled_dot_product_attention(q4, k4, v4, attn_mask=keep[None, :], scale=self.scale)
            return o[0].transpose(0, 1).reshape(1, self.Hq * self.hd)
        qh = q.transpose(0, 1).reshape(self.Hkv, self.g, self.hd)  # row r: head kvh*g + r
        s = torch.matmul(qh, k.transpose(1, 2)).float() * self.scale  # [Hkv, g, max_len]
        s = s.masked_fill(~keep, float("-inf"))
        o = torch.matmul(torch.softmax(s, dim=-1).to(self.dt), v)  # [Hkv, g, hd]
        return o.reshape(1, self.Hq * self.hd)


TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
IMPLS = {"eager": "pytorch eager", "graph": "pytorch cuda graph",
         "compile": "pytorch compile reduce-overhead"}


def build_model(w, args, max_len, attn):
    t = need_torch()
    dev = t.device(args.device)
    dt = getattr(t, TORCH_DTYPES[args.dtype])
    t0 = time.perf_counter()
    m = TorchModel(w, dt, dev, max_len, attn=attn, fused=not args.unfused,
                   fused_norm=not args.manual_norm)
    sync(dev)
    log("model: %s on %s (%s), attention %s, %s, %s; built in %.1f s"
        % (args.dtype, device_name(dev), dev, attn, "unfused" if args.unfused else "fused qkv and w1|w3",
           "F.rms_norm" if m.fused_norm else "rmsnorm spelled out", time.perf_counter() - t0))
    return m, dev


def replay(model, dev, lg):
    """Our token sequence through the model: prefill of the prompt, then one
    decode step per later record. Returns [steps, vocab] float32 numpy."""
    n = len(lg)
    out = np.zeros((n, lg.vocab), np.float32)
    with torch.inference_mode():
        for i in range(n):
            if i == 0:
                ids, start = list(lg.prompt), 0
            else:
                ids, start = [int(lg.token[i])], int(lg.pos[i])
            out[i] = model.forward(torch.tensor(ids, dtype=torch.long, device=dev), start).cpu().numpy()
    return out


def replay_static(model, dev, lg):
    """As replay, but every decode step through the static step the CUDA
    graph captures (the prompt still through forward)."""
    n = len(lg)
    out = np.zeros((n, lg.vocab), np.float32)
    with torch.inference_mode():
        out[0] = model.forward(torch.tensor(list(lg.prompt), dtype=torch.long, device=dev), 0).cpu().numpy()
        for i in range(1, n):
            tok = torch.tensor([int(lg.token[i])], dtype=torch.long, device=dev)
            pos = torch.tensor([int(lg.pos[i])], dtype=torch.long, device=dev)
            out[i] = model.logits_static(tok, pos).cpu().numpy()
    return out


def check_sequence(lg, cfg):
    """The logits file must describe a replayable sequence; raises otherwise."""
    n, P = len(lg), len(lg.prompt)
    if lg.vocab != cfg["vocab"]:
        raise FormatError("logits vocab %d != model vocab %d" % (lg.vocab, cfg["vocab"]))
    if P == 0 or n == 0:
        raise FormatError("logits file has %d prompt tokens and %d steps" % (P, n))
    bad = [t for t in lg.prompt + [int(x) for x in lg.token] if not 0 <= t < cfg["vocab"]]
    if bad:
        raise FormatError("token %d out of the vocabulary" % bad[0])
    if int(lg.token[0]) != lg.prompt[-1] or int(lg.pos[0]) != P - 1:
        raise FormatError("step 0 is token %d at %d, expected the last prompt token %d at %d"
                          % (lg.token[0], lg.pos[0], lg.prompt[-1], P - 1))
    other = []
    for i in range(1, n):
        if int(lg.pos[i]) != P - 1 + i:
            raise FormatError("step %d is at position %d, expected %d" % (i, lg.pos[i], P - 1 + i))
        if int(lg.token[i]) != int(lg.next[i - 1]):
            other.append(i)
    if other:
        log("note: %d steps (first: %d) feed another token than the previous step chose; "
            "replaying the file's tokens" % (len(other), other[0]))


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ modes --

def measure_copy(dev, n):
    def timed(fn, reps):
        fn()
        sync(dev)
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync(dev)
        return (time.perf_counter() - t0) / reps

    x = torch.randn(n, device=dev)
    y = torch.empty_like(x)
    t = timed(lambda: y.copy_(x), 20)
    return 2 * n * 4 / t / 1e9


def mode_mv_chain(args):
    """cuBLAS f16 mat-vecs of the decode's shapes, chained in a CUDA graph."""
    need_torch()
    dev = torch.device(args.device)
    shapes = [("wo 2048 x 2048", [(2048, 2048)]), ("qkv 3072 x 2048", [(3072, 2048)]),
              ("w2 2048 x 8192", [(2048, 8192)]), ("w1+w3 16384 x 2048", [(16384, 2048)]),
              ("a layer: qkv, wo, w1+w3, w2", [(3072, 2048), (2048, 2048), (16384, 2048), (2048, 8192)]),
              ("192 MB: 49152 x 2048", [(49152, 2048)])]
    pool = torch.randn((1 << 29,), device=dev, dtype=torch.float16)  # 1 GB
    print("| shape | us a link | GB/s |\n|---|---:|---:|")
    for name, links in shapes:
        per = sum(r * k for r, k in links)
        n = max(1, (1 << 29) // per)
        ws, at = [], 0
        for i in range(n):
            for r, k in links:
                ws.append(pool[at:at + r * k].view(r, k))
                at += r * k
        xs = {k: torch.randn(1, k, device=dev, dtype=torch.float16) for _, ls in shapes for _, k in ls}
        reps = 64

        def chain():
            for i in range(reps):
                w = ws[i % len(ws)]
                torch.nn.functional.linear(xs[w.shape[1]], w)

        chain()
        sync(dev)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            chain()
        g.replay()
        sync(dev)
        best = None
        for _ in range(5):
            t0 = time.perf_counter()
            g.replay()
            sync(dev)
            t = time.perf_counter() - t0
            best = t if best is None or t < best else best
        links_per_rep = len(links)
        us = best / reps * 1e6
        moved = sum(ws[i % len(ws)].numel() * 2 for i in range(reps))
        print("| %s | %.1f%s | %.0f |" % (name, us * links_per_rep if links_per_rep > 1 else us,
                                        " (a layer)" if links_per_rep > 1 else "", moved / best / 1e9))
    print("copy (read + write): %.0f GB/s" % measure_copy(dev, 1 << 26))
    return 0


def mode_ops(args):
    """The original output: copy bandwidth and SGEMM, one JSON line."""
    need_torch()
    dev = torch.device(args.device)

    def timed(fn, reps):
        fn()
        sync(dev)
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync(dev)
        return (time.perf_counter() - t0) / reps

    n = (1 << 24) if args.quick else (1 << 26)  # f32 elements
    copy_gbs = measure_copy(dev, n)
    sgemm = {}
    for size in ([1024, 2048] if args.quick else [1024, 2048, 4096]):
        a = torch.randn(size, size, device=dev)
        b = torch.randn(size, size, device=dev)
        t = timed(lambda: torch.mm(a, b), 10)
        sgemm[str(size)] = 2 * size ** 3 / t / 1e12
    print(json.dumps({
        "device": device_name(dev),
        "torch": torch.__version__,
        "copy_gbs": copy_gbs,
        "sgemm_tflops": sgemm,
    }))
    return 0


def tolerances(args):
    nm, mg = TOLERANCES[args.dtype]
    return (args.tol_nmse if args.tol_nmse is not None else nm,
            args.margin if args.margin is not None else mg)


def mode_check(args):
    w = read_weights(args.model)
    lg = read_logits(args.logits)
    check_sequence(lg, w.cfg)
    log("weights: %s, %s" % (args.model, json.dumps(w.cfg)))
    model, dev = build_model(w, args, int(lg.pos[-1]) + 1, args.attn or "math")
    ref = replay(model, dev, lg)
    tol, margin = tolerances(args)
    rows, s = compare(lg.logits, ref, lg.next, tol, margin)
    print("PyTorch %s reference (%s, torch %s) vs %s, model %s"
          % (args.dtype, device_name(dev), torch.__version__, args.logits,
             " ".join("%s=%s" % kv for kv in w.cfg.items())))
    print_table(lg, rows, s, "%s reference" % args.dtype)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(s, mode="check", dtype=args.dtype, attn=args.attn or "math",
                           device=device_name(dev), torch=torch.__version__, config=w.cfg,
                           prompt_tokens=len(lg.prompt), rows=rows), f, indent=1)
    return 0 if s["pass"] else 1


def mode_compare(args):
    ours, other = read_logits(args.logits), read_logits(args.compare)
    if ours.prompt != other.prompt or ours.vocab != other.vocab or len(ours) != len(other):
        raise FormatError("%s and %s: different prompts, vocabularies or step counts"
                          % (args.logits, args.compare))
    for i in range(len(ours)):
        if (ours.token[i], ours.pos[i]) != (other.token[i], other.pos[i]):
            raise FormatError("step %d: token %d at %d against %d at %d: the runs diverged earlier"
                              % (i, ours.token[i], ours.pos[i], other.token[i], other.pos[i]))
    tol, margin = tolerances(args)
    rows, s = compare(ours.logits, other.logits, ours.next, tol, margin)
    print("%s vs %s (the reference), %d prompt tokens" % (args.logits, args.compare, len(ours.prompt)))
    print_table(ours, rows, s, "the other run")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(s, mode="compare", logits=args.logits, reference=args.compare,
                           prompt_tokens=len(ours.prompt), rows=rows), f, indent=1)
    return 0 if s["pass"] else 1


def mode_bench(args):
    w = read_weights(args.model)
    c = w.cfg
    if args.logits:
        prompt = read_logits(args.logits).prompt
    else:
        rng = __import__("random").Random(1)
        prompt = [rng.randrange(c["vocab"]) for _ in range(args.prompt)]
    P, N, W = len(prompt), args.decode_bench, args.warmup
    max_len = P + max(N, W) + 1
    if max_len > c["max_seq"]:
        log("note: %d positions exceed the model's max_seq %d" % (max_len, c["max_seq"]))
    need_torch()
    dev = torch.device(args.device)
    copy_gbs = measure_copy(dev, (1 << 24) if args.quick else (1 << 26))
    attns = [args.attn] if args.attn else ["sdpa", "math"]
    model, dev = build_model(w, args, max_len, attns[0])
    ids = torch.tensor(prompt, dtype=torch.long, device=dev)

    def prefill():
        sync(dev)
        t0 = time.perf_counter()
        tok = model.forward(ids, 0).argmax().view(1)
        tok.item()
        sync(dev)
        return time.perf_counter() - t0, tok

    def make_step():
        """The decode step of --impl for model.attn: (tok [1], pos) -> argmax [1]."""
        if args.impl == "eager":
            return lambda tok, pos: model.forward(tok, pos).argmax().view(1)
        tok_s = torch.zeros(1, dtype=torch.long, device=dev)
        pos_s = torch.full((1,), max_len - 1, dtype=torch.long, device=dev)  # warm-up writes there
        if args.impl == "compile":
            fn = torch.compile(model.step_static, mode="reduce-overhead", fullgraph=True)
            for _ in range(3):
                fn(tok_s, pos_s)
            sync(dev)

            def step(tok, pos):
                tok_s.copy_(tok)
                pos_s.fill_(pos)
                return fn(tok_s, pos_s)
            return step
        side = torch.cuda.Stream(dev)  # warm-up off the capture stream, as CUDA graphs want
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            for _ in range(3):
                model.step_static(tok_s, pos_s)
        torch.cuda.current_stream(dev).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out_s = model.step_static(tok_s, pos_s)

        def step(tok, pos):
            tok_s.copy_(tok)
            pos_s.fill_(pos)
            graph.replay()
            return out_s
        return step

    steps = {}

    def decode(tok, n, times):
        if model.attn not in steps:
            t0 = time.perf_counter()
            steps[model.attn] = make_step()
            log("%s step for %s attention made in %.1f s" % (args.impl, model.attn, time.perf_counter() - t0))
        step = steps[model.attn]
        for i in range(n):
            t0 = time.perf_counter()
            tok = step(tok, P + i)
            tok.item()  # the host learns the token, as a generation loop does
            sync(dev)
            times.append(time.perf_counter() - t0)

    times = {a: [] for a in attns}
    pre = {a: [] for a in attns}
    with torch.inference_mode():
        for attn in attns:  # a warm-up pass for each: prefill + W tokens
            model.attn = attn
            _, tok = prefill()
            decode(tok, W, [])
        # the attention paths take turns, so that drift of the host's speed
        # (eager decode is bound by launching kernels) falls on each alike
        for _ in range(args.reps):
            for attn in attns:
                model.attn = attn
                pre[attn] += [prefill()[0] for _ in range(3)]
                _, tok = prefill()
                decode(tok, N, times[attn])
    runs = {}
    for attn in attns:
        ms = sorted(1e3 * t for t in times[attn])
        runs[attn] = (statistics.median(ms), ms, statistics.median(pre[attn]))
        log("decode %s, %s attention: %.3f ms/token median of %d (min %.3f, max %.3f)"
            % (args.dtype, attn, runs[attn][0], len(ms), ms[0], ms[-1]))
    best = min(runs, key=lambda k: runs[k][0])  # the faster path is PyTorch's number
    med, ms, pre_s = runs[best]
    emb = {"tok_emb"}
    file_tok = w.file_bytes() - w.file_bytes(emb)
    model_tok = model.decode_weight_bytes()
    res = {
        "mode": "decode_bench", "impl": IMPLS[args.impl], "dtype": args.dtype,
        "attn": best, "fused": not args.unfused,
        "norm": "F.rms_norm" if model.fused_norm else "spelled out",
        "decode_ms_by_attn": {k: v[0] for k, v in runs.items()},
        "device": device_name(dev), "torch": torch.__version__,
        "config": c, "prompt_tokens": P, "decode_tokens": N, "warmup_tokens": W, "reps": args.reps,
        "decode_ms_per_token": med,
        "decode_ms_min": ms[0], "decode_ms_p90": ms[min(len(ms) - 1, int(0.9 * len(ms)))],
        "decode_ms_mean": statistics.mean(ms),
        "decode_tokens_per_s": 1e3 / med,
        "prefill_ms": 1e3 * pre_s, "prefill_tokens_per_s": P / pre_s,
        "copy_gbs": copy_gbs,
        "weight_bytes_file": w.file_bytes(),
        "weight_bytes_per_token_file": file_tok,
        "weight_bytes_per_token_model": model_tok,
        "floor_ms_per_token_file": file_tok / (copy_gbs * 1e9) * 1e3,
        "floor_ms_per_token_model": model_tok / (copy_gbs * 1e9) * 1e3,
    }
    res["x_floor_model"] = med / res["floor_ms_per_token_model"]
    log("decode %s %s: %.3f ms/token median of %d (min %.3f, p90 %.3f), prefill %d tokens %.2f ms "
        "(%.0f tokens/s); floor %.3f ms (%.2f GB / %.0f GB/s), %.2fx of it"
        % (args.impl, args.dtype, med, len(ms), ms[0], res["decode_ms_p90"], P, 1e3 * pre_s, res["prefill_tokens_per_s"],
           res["floor_ms_per_token_model"], model_tok / 1e9, copy_gbs, res["x_floor_model"]))
    line = json.dumps(res)
    print(line)
    if args.json:
        with open(args.json, "w") as f:
            f.write(line + "\n")
    return 0


# -------------------------------------------------------------- self-test --

def quant_q8_0(x):
    b = x.reshape(-1, BLOCK).astype(np.float32)
    d = (np.abs(b).max(1) / 127.0).astype(np.float16)
    inv = np.where(d != 0, 1.0 / np.maximum(d.astype(np.float32), 1e-30), 0.0)
    q = np.clip(np.rint(b * inv[:, None]), -127, 127).astype(np.int8)
    out = np.zeros((len(b), 34), np.uint8)
    out[:, :2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def quant_q4_0(x):
    b = x.reshape(-1, BLOCK).astype(np.float32)
    idx = np.abs(b).argmax(1)
    m = b[np.arange(len(b)), idx]  # signed value of largest magnitude -> -8
    d = (m / -8.0).astype(np.float16)
    df = d.astype(np.float32)
    inv = np.where(df != 0, 1.0 / np.where(df != 0, df, 1), 0.0)
    q = np.clip(np.rint(b * inv[:, None]) + 8, 0, 15).astype(np.uint8)
    out = np.zeros((len(b), 18), np.uint8)
    out[:, :2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q[:, :16] | (q[:, 16:] << 4)
    return out.tobytes()


def encode(x, dtype):
    if dtype == DT_F32:
        return x.astype("<f4").tobytes()
    if dtype == DT_F16:
        return x.astype("<f2").tobytes()
    if dtype == DT_BF16:  # round to nearest even
        u = x.astype("<f4").view(np.uint32).astype(np.uint64)
        u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
        return u.astype("<u2").tobytes()
    if dtype == DT_Q8_0:
        return quant_q8_0(x)
    if dtype == DT_Q4_0:
        return quant_q4_0(x)
    raise ValueError(dtype)


def scalar_decode(dtype, raw, count):
    """An independent, element-at-a-time decoder (struct only)."""
    out = []
    if dtype in BLOCK_BYTES:
        bb = BLOCK_BYTES[dtype]
        for blk in range(count // BLOCK):
            base = blk * bb
            (d,) = struct.unpack_from("<e", raw, base)
            if dtype == DT_Q8_0:
                qs = struct.unpack_from("<32b", raw, base + 2)
            else:
                by = raw[base + 2:base + 18]
                qs = [(by[j] & 15) - 8 for j in range(16)] + [(by[j] >> 4) - 8 for j in range(16)]
            out += [d * q for q in qs]
        return out
    if dtype == DT_BF16:
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0]
                for h in struct.unpack_from("<%dH" % count, raw)]
    return list(struct.unpack_from("<%d%s" % (count, {DT_F32: "f", DT_F16: "e"}[dtype]), raw))


def np_forward(V, c, tokens, bug=None):
    """float64 numpy model over a whole sequence (causal, no cache): logits
    [T, vocab] at every position. bug: a deliberate error (or "f16 KV
    cache", a precision loss), to size the tolerance against (self-test)."""
    T, hd, Hq, Hkv = len(tokens), c["head_dim"], c["n_heads"], c["n_kv_heads"]
    g, half, eps = Hq // Hkv, c["head_dim"] // 2, float(c["norm_eps"])
    f = lambda n: V[n].astype(np.float64)
    rms = lambda x, w: x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w
    pos = np.arange(T, dtype=np.float64)
    base = float(c["rope_base"]) * (2.0 if bug == "rope base x2" else 1.0)
    inv = base ** (-2.0 * np.arange(half) / hd)

    def rope(x, qpos_shift=0):
        ang = (pos + qpos_shift)[:, None] * inv[None, :]
        cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        if bug == "rope interleaved (GPT-J)":
            x1, x2 = x[..., 0::2], x[..., 1::2]
            y = np.empty_like(x)
            y[..., 0::2], y[..., 1::2] = x1 * cos - x2 * sin, x1 * sin + x2 * cos
            return y
        x1, x2 = x[..., :half], x[..., half:]
        return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)

    x = f("tok_emb")[tokens]
    for l in range(c["n_layers"]):
        h = rms(x, f("attn_norm.%d" % l))
        q = rope((h @ f("wq.%d" % l).T).reshape(T, Hq, hd), 1 if bug == "rope query position + 1" else 0)
        k = rope((h @ f("wk.%d" % l).T).reshape(T, Hkv, hd))
        v = (h @ f("wv.%d" % l).T).reshape(T, Hkv, hd)
        if bug == "f16 KV cache":
            k, v = k.astype(np.float16).astype(np.float64), v.astype(np.float16).astype(np.float64)
        o = np.zeros((T, Hq, hd))
        for j in range(Hq):
            kv = j % Hkv if bug == "GQA head j % Hkv" else j // g
            s = q[:, j] @ k[:, kv].T / math.sqrt(hd)
            if bug != "no causal mask":
                s = np.where(np.arange(T)[None, :] > np.arange(T)[:, None], -np.inf, s)
            s = np.exp(s - s.max(-1, keepdims=True))
            o[:, j] = (s / s.sum(-1, keepdims=True)) @ v[:, kv]
        x = x + o.reshape(T, Hq * hd) @ f("wo.%d" % l).T
        h2 = rms(x, f("ffn_norm.%d" % l))
        a, b = h2 @ f("w1.%d" % l).T, h2 @ f("w3.%d" % l).T
        x = x + (a / (1 + np.exp(-a)) * b) @ f("w2.%d" % l).T
    return rms(x, f("out_norm")) @ f("out").T


def make_model(rng, cfg, wdtype):
    """Random weights (uniform, scaled by fan-in; norms near 1) as the list
    write_weights takes, in the file's order reversed (the reader must go by
    name)."""
    D, F, V = cfg["d_model"], cfg["ffn"], cfg["vocab"]
    qd, kd = cfg["n_heads"] * cfg["head_dim"], cfg["n_kv_heads"] * cfg["head_dim"]
    ts = []

    def mat(name, n, k):
        ts.append((name, wdtype, (n, k), encode(rng.uniform(-1, 1, (n, k)) * math.sqrt(3.0 / k), wdtype)))

    def norm(name):
        ts.append((name, DT_F32, (D,), encode(1 + 0.1 * rng.standard_normal(D), DT_F32)))

    ts.append(("tok_emb", wdtype, (V, D), encode(rng.uniform(-1, 1, (V, D)), wdtype)))
    for l in range(cfg["n_layers"]):
        norm("attn_norm.%d" % l)
        mat("wq.%d" % l, qd, D), mat("wk.%d" % l, kd, D), mat("wv.%d" % l, kd, D)
        mat("wo.%d" % l, D, qd)
        norm("ffn_norm.%d" % l)
        mat("w1.%d" % l, F, D), mat("w3.%d" % l, F, D), mat("w2.%d" % l, D, F)
    norm("out_norm")
    mat("out", V, D)
    return ts[::-1]


def mode_self_test(args):
    if np is None:
        print("self-test needs numpy")
        return 1
    results = []

    def check(name, ok, detail=""):
        results.append(bool(ok))
        print("%s  %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""), flush=True)

    rng = np.random.default_rng(7)
    # 1. dequantization against the scalar decoder, values of every kind
    x = np.concatenate([rng.standard_normal(32 * 41) * 3, np.zeros(32), np.full(32, -2.5),
                        np.linspace(-1, 1, 32) * 1e-3]).astype(np.float32).reshape(-1, 64)
    for dt in (DT_F32, DT_F16, DT_BF16, DT_Q8_0, DT_Q4_0):
        raw = encode(x, dt)
        a = dequant(dt, x.shape, memoryview(raw))
        s = np.array(scalar_decode(dt, raw, x.size), np.float32).reshape(x.shape)
        err = float(np.abs(a - x).max() / np.abs(x).max())
        bound = {DT_F32: 0, DT_F16: 1e-3, DT_BF16: 4e-3, DT_Q8_0: 1e-2, DT_Q4_0: 0.15}[dt]
        check("dequant %s = scalar decode, %d values" % (DT_NAMES[dt], x.size),
              a.dtype == np.float32 and np.array_equal(a, s) and err <= bound,
              "max error of the encoding %.2g of max|x| (bound %g)" % (err, bound))
    # nibble order and the -8 offset, spelled out
    blk = bytes(struct.pack("<e", 0.5)) + bytes((j & 15) | (((15 - j) & 15) << 4) for j in range(16))
    want = [0.5 * (j - 8) for j in range(16)] + [0.5 * (15 - j - 8) for j in range(16)]
    check("q4_0 byte j = value j (low nibble) | value j+16 (high), d * (q - 8)",
          dequant(DT_Q4_0, (32,), blk).tolist() == want)
    blk = bytes(struct.pack("<e", -0.25)) + struct.pack("<32b", *range(-16, 16))
    check("q8_0 = d * int8", dequant(DT_Q8_0, (32,), blk).tolist() == [-0.25 * q for q in range(-16, 16)])

    # 2. small models through the files and the float64 reference
    cfg = {"d_model": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "head_dim": 16, "ffn": 96,
           "vocab": 128, "max_seq": 64, "rope_base": 10000.0, "norm_eps": 1e-5, "seed": 5}
    tmp = tempfile.mkdtemp(prefix="torch_ref_selftest.")
    files = {}
    for wd in (DT_F32, DT_F16, DT_BF16, DT_Q8_0, DT_Q4_0):
        c = dict(cfg, wdtype=DT_NAMES[wd])
        ts = make_model(np.random.default_rng(11), c, wd)
        path = os.path.join(tmp, "w_%s.bin" % DT_NAMES[wd])
        write_weights(path, c, ts)
        w = read_weights(path)
        same = all(w.tensors[n][0] == d and w.tensors[n][1] == tuple(s) and bytes(w.tensors[n][2]) == r
                   for n, d, s, r in ts)
        hdr = all(w.cfg[k] == c[k] for k in CFG_KEYS) and w.cfg["wdtype"] == DT_NAMES[wd] and \
            abs(w.cfg["norm_eps"] - 1e-5) < 1e-12 and w.cfg["rope_base"] == 10000.0
        check("weights file %s: header and %d tensors read back" % (DT_NAMES[wd], len(ts)), same and hdr)
        files[wd] = path
    # a truncated file and a wrong size are refused
    raw = open(files[DT_Q4_0], "rb").read()
    bad = os.path.join(tmp, "bad.bin")
    open(bad, "wb").write(raw[:-5])
    try:
        read_weights(bad)
        check("truncated weights file refused", False)
    except FormatError as e:
        check("truncated weights file refused", True, str(e).split(": ", 1)[1])

    # 3. a logits file from the float64 model, greedy, then compared
    w = read_weights(files[DT_Q4_0])
    V = {n: w.values(n) for n in w.tensors}
    prompt = [int(t) for t in np.random.default_rng(3).integers(0, cfg["vocab"], 6)]
    seq, steps = list(prompt), 10
    full = None
    for i in range(steps):
        full = np_forward(V, w.cfg, seq)
        seq.append(int(np.argmax(full[-1])))
    P = len(prompt)
    tok = np.array([seq[P - 1 + i] for i in range(steps)], np.int32)
    pos = np.array([P - 1 + i for i in range(steps)], np.int32)
    ref64 = full[P - 1:P - 1 + steps]  # logits at each step's position, from one causal pass
    nxt = np.array(seq[P:P + steps], np.int32)
    check("one causal pass = the step-by-step passes", np.array_equal(np.argmax(ref64, 1), nxt))
    lpath = os.path.join(tmp, "logits.bin")
    write_logits(lpath, prompt, tok, pos, nxt, ref64.astype(np.float32))
    lg = read_logits(lpath)
    check_sequence(lg, w.cfg)
    check("logits file read back", lg.prompt == prompt and np.array_equal(lg.token, tok) and
          np.array_equal(lg.pos, pos) and np.array_equal(lg.next, nxt) and
          np.array_equal(lg.logits, ref64.astype(np.float32)))
    tol, margin = TOLERANCES["f32"]
    rows, s = compare(lg.logits, ref64, lg.next, tol, margin)
    check("compare: our f32 logits vs float64 pass", s["pass"], "worst NMSE %.2g" % s["worst_nmse"])
    noisy = lg.logits + np.float32(3e-3) * np.abs(lg.logits).max() * \
        np.random.default_rng(1).standard_normal(lg.logits.shape).astype(np.float32)
    rows, s = compare(noisy, ref64, lg.next, tol, margin)
    check("compare: 3e-3 noise fails on NMSE", not s["pass"] and s["worst_nmse"] > tol,
          "worst NMSE %.2g" % s["worst_nmse"])
    wrong = lg.next.copy()
    wrong[2] = (wrong[2] + 1) % cfg["vocab"]
    rows, s = compare(lg.logits, ref64, wrong, tol, margin)
    check("compare: a wrong `next` fails", not s["pass"] and not rows[2]["ok"])
    # the sizes of some bugs, to set the tolerance against
    seqlen = P + steps - 1
    good = np_forward(V, w.cfg, seq[:seqlen])[P - 1:]
    for bug in ("rope interleaved (GPT-J)", "rope query position + 1", "rope base x2", "GQA head j % Hkv",
                "no causal mask"):
        b = np_forward(V, w.cfg, seq[:seqlen], bug)[P - 1:]
        nm = float(((b - good) ** 2).sum() / (good ** 2).sum())
        check("bug '%s' is caught: NMSE %.2g > %g" % (bug, nm, tol), nm > tol)
    w8 = read_weights(files[DT_Q8_0])
    v8 = {n: w8.values(n) for n in w8.tensors}
    nm = float(((np_forward(v8, w8.cfg, seq[:seqlen])[P - 1:] - good) ** 2).sum() / (good ** 2).sum())
    print("      (for scale: the same weights stored in q8_0 instead of q4_0 move the logits by NMSE %.2g)" % nm)
    # what must pass: an f16 KV cache (the 1b config's) on our side
    b = np_forward(V, w.cfg, seq[:seqlen], "f16 KV cache")[P - 1:]
    nm = float(((b - good) ** 2).sum() / (good ** 2).sum())
    check("an f16 KV cache passes: NMSE %.2g <= %g" % (nm, tol), nm <= tol)

    # 4. the PyTorch model, when torch is here
    try:
        need_torch()
    except ImportError:
        print("torch not importable here: PyTorch model checks skipped")
    else:
        dev = torch.device(args.device if (args.device != "cuda" or torch.cuda.is_available()) else "cpu")
        sargs = argparse.Namespace(**vars(args))
        sargs.device = str(dev)
        for wd in (DT_F32, DT_F16, DT_Q8_0, DT_Q4_0):
            w = read_weights(files[wd])
            Vw = {n: w.values(n) for n in w.tensors}
            ref = np_forward(Vw, w.cfg, seq[:seqlen])[P - 1:]  # "ours": the float64 model
            lgw = Logits(prompt, cfg["vocab"], tok, pos, np.argmax(ref, 1).astype(np.int32),
                         ref.astype(np.float32))
            for dtn, attn, fused, manual in (("f32", "math", True, False), ("f32", "sdpa", True, False),
                                             ("f32", "math", False, True), ("f16", "math", True, False),
                                             ("f16", "sdpa", True, False), ("f16", "sdpa", False, True)):
                if dtn == "f16" and dev.type == "cpu":
                    continue
                sargs.dtype, sargs.unfused, sargs.manual_norm = dtn, not fused, manual
                m, _ = build_model(w, sargs, P + steps, attn)
                out = replay(m, dev, lgw)
                tol, margin = TOLERANCES[dtn]
                rows, s = compare(lgw.logits, out, lgw.next, tol, margin)
                check("torch %s %s%s%s on %s weights vs float64 numpy"
                      % (dtn, attn, "" if fused else " unfused", " manual-norm" if manual else "", DT_NAMES[wd]),
                      s["pass"], "worst NMSE %.2g, argmax %d/%d" % (s["worst_nmse"], s["argmax_agree"], s["steps"]))
                m, _ = build_model(w, sargs, P + steps, attn)
                rows, s = compare(lgw.logits, replay_static(m, dev, lgw), lgw.next, tol, margin)
                check("torch %s %s%s%s static step on %s weights vs float64 numpy"
                      % (dtn, attn, "" if fused else " unfused", " manual-norm" if manual else "", DT_NAMES[wd]),
                      s["pass"], "worst NMSE %.2g, argmax %d/%d" % (s["worst_nmse"], s["argmax_agree"], s["steps"]))
        # the benchmark's code path on the small model
        bargs = argparse.Namespace(**vars(sargs))
        bargs.model, bargs.logits, bargs.dtype, bargs.unfused = files[DT_F16], lpath, "f16" if dev.type == "cuda" else "f32", False
        bargs.decode_bench, bargs.warmup, bargs.json, bargs.quick, bargs.attn = 4, 2, None, True, None
        bargs.manual_norm, bargs.reps = False, 2
        bargs.impl = "eager"
        check("decode benchmark runs", mode_bench(bargs) == 0)
        if dev.type == "cuda":
            bargs.impl = "graph"
            check("decode benchmark runs its CUDA graph", mode_bench(bargs) == 0)
    nf = results.count(False)
    print("self-test: %d passed, %d failed" % (len(results) - nf, nf))
    return 1 if nf else 0


# ------------------------------------------------------------------- main --

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring for the modes.")
    ap.add_argument("--quick", action="store_true", help="smaller copy/SGEMM sizes")
    ap.add_argument("--model", metavar="WEIGHTS", help="weights file (transformer --save)")
    ap.add_argument("--logits", metavar="LOGITS", help="logits file (transformer --logits)")
    ap.add_argument("--dtype", choices=sorted(TORCH_DTYPES), default="f32",
                    help="PyTorch model dtype (default f32, TF32 off)")
    ap.add_argument("--json", metavar="OUT", help="also write the result as JSON here")
    ap.add_argument("--decode-bench", type=int, metavar="N", help="time N decode tokens")
    ap.add_argument("--prompt", type=int, default=16, metavar="P",
                    help="prompt tokens for --decode-bench without --logits (default 16)")
    ap.add_argument("--warmup", type=int, default=8, metavar="W", help="warm-up decode tokens (default 8)")
    ap.add_argument("--reps", type=int, default=3, metavar="R",
                    help="timed passes (prefill + N tokens) per attention path, taking turns (default 3)")
    ap.add_argument("--tol-nmse", type=float, help="NMSE bound per step (default 1e-5 f32, 1e-4 f16)")
    ap.add_argument("--margin", type=float,
                    help="argmax must agree where the reference's top-2 margin exceeds this "
                         "fraction of max|logit| (default 1e-3 f32, 1e-2 f16)")
    ap.add_argument("--attn", choices=["math", "sdpa"],
                    help="attention: explicit (default for the check) or scaled_dot_product_attention "
                         "(default for the benchmark: both, the faster reported)")
    ap.add_argument("--impl", choices=sorted(IMPLS), default="eager",
                    help="decode step for --decode-bench: eager (default), graph (static KV cache, "
                         "the step captured once in a CUDA graph and replayed), compile "
                         "(torch.compile mode reduce-overhead of the same static step)")
    ap.add_argument("--unfused", action="store_true", help="separate q/k/v and w1/w3 matmuls")
    ap.add_argument("--manual-norm", action="store_true",
                    help="RMSNorm spelled out in f32 ops instead of torch's fused rms_norm")
    ap.add_argument("--device", default="cuda", help="torch device (default cuda)")
    ap.add_argument("--compare", metavar="OTHER",
                    help="compare --logits with another glcompute logits file (numpy only)")
    ap.add_argument("--self-test", action="store_true", help="check this script (numpy; torch if present)")
    ap.add_argument("--mv-chain", action="store_true", help="cuBLAS decode mat-vecs chained in a CUDA graph")
    args = ap.parse_args(argv)
    try:
        if args.self_test:
            return mode_self_test(args)
        if args.mv_chain:
            return mode_mv_chain(args)
        if args.decode_bench is not None:
            if not args.model:
                ap.error("--decode-bench needs --model")
            if args.decode_bench < 1 or args.reps < 1 or args.warmup < 0:
                ap.error("--decode-bench needs N >= 1, --reps >= 1, --warmup >= 0")
            return mode_bench(args)
        if args.compare:
            if not args.logits or args.model:
                ap.error("--compare needs --logits and no --model")
            return mode_compare(args)
        if args.model or args.logits:
            if not (args.model and args.logits):
                ap.error("the check needs both --model and --logits")
            return mode_check(args)
        return mode_ops(args)
    except (FormatError, OSError) as e:
        print("torch_ref.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
