#!/usr/bin/env python3
"""Reference side of the op benchmark on an NVIDIA machine: PyTorch device
copy bandwidth and cuBLAS FP32 SGEMM (TF32 off), measured on the machine
the glcompute benchmark runs on, printed as JSON for glc-bench-ops
(GLC_REF=<file>). Usage: torch_ref.py [--quick] > ref.json"""
import json
import sys
import time

import torch

quick = "--quick" in sys.argv
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda")


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps


n = (1 << 24) if quick else (1 << 26)  # f32 elements
x = torch.randn(n, device=dev)
y = torch.empty_like(x)
t = timed(lambda: y.copy_(x), 20)
copy_gbs = 2 * n * 4 / t / 1e9

sgemm = {}
for size in ([1024, 2048] if quick else [1024, 2048, 4096]):
    a = torch.randn(size, size, device=dev)
    b = torch.randn(size, size, device=dev)
    t = timed(lambda: torch.mm(a, b), 10)
    sgemm[str(size)] = 2 * size ** 3 / t / 1e12

print(json.dumps({
    "device": torch.cuda.get_device_name(0),
    "torch": torch.__version__,
    "copy_gbs": copy_gbs,
    "sgemm_tflops": sgemm,
}))
