# A small A/A-able GEMM benchmark for `perfdb ab` on an NVIDIA GPU: each run prints one
# `[perf]` line per shape, `torch` (torch.mm, the control) next to `cand`, a candidate
# that is torch.mm as well for AB_VARIANT=base and, for AB_VARIANT=head, torch.mm with K
# padded by AB_PAD (default 256) on the shapes named in AB_PADDED (default "2048,4096"),
# a known, small slowdown. With AB_TABLE=1 it prints an aiter-style `summary
# (markdown):` table instead, with each variant's TFLOPS (held to the GPU's peak).
import os, torch, triton

variant = os.environ.get("AB_VARIANT", "base")
pad = int(os.environ.get("AB_PAD", "256"))
padded = {int(m) for m in os.environ.get("AB_PADDED", "2048,4096").split(",") if m}
shapes = [(1, 4096, 4096), (512, 4096, 4096), (2048, 4096, 4096), (4096, 4096, 4096), (2048, 8192, 8192)]

def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3

table = os.environ.get("AB_TABLE") == "1"
rows = []
for m, n, k in shapes:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    t = us(lambda: torch.mm(a, b))
    if variant == "head" and m in padded and n == 4096:
        ap = torch.randn(m, k + pad, device="cuda", dtype=torch.bfloat16)
        bp = torch.randn(k + pad, n, device="cuda", dtype=torch.bfloat16)
        c = us(lambda: torch.mm(ap, bp))
    else:
        c = us(lambda: torch.mm(a, b))
    rows.append((m, n, k, t, c))
    if table:
        continue
    print(f"[perf] dim: ({m}, {n}, {k}), dtype: torch.bfloat16, torch avg: {t:.2f} us, cand avg: {c:.2f} us, uplift: {(t / c - 1) * 100:.1f}%", flush=True)

if table:
    tf = lambda m, n, k, us: 2 * m * n * k / us / 1e6
    print("[aiter] gemm_ab summary (markdown):")
    print("|    M |     N |     K | dtype          |   torch us |   torch TFLOPS |   cand us |   cand TFLOPS |")
    print("|-----:|------:|------:|:---------------|-----------:|---------------:|----------:|--------------:|")
    for m, n, k, t, c in rows:
        print(f"| {m} | {n} | {k} | torch.bfloat16 | {t:.3f} | {tf(m, n, k, t):.4f} | {c:.3f} | {tf(m, n, k, c):.4f} |", flush=True)
