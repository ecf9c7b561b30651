# The benchmark of `profile_ab.sh`'s repository: a Triton vector add whose buffers are
# padded by config.PAD (processed whole) and a Triton GEMM whose tile is config.TILE,
# each beside its torch control. One `[perf][add]` and one `[perf][matmul]` line a run:
# the tag is the table, so a kernel named for it (`add_kernel`, `matmul_kernel`) joins
# its rows by name.
import torch, triton, triton.language as tl
from config import PAD, TILE

@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)

@triton.jit
def matmul_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a + rm[:, None] * K + (k + rk)[None, :]),
                      tl.load(b + (k + rk)[:, None] * N + rn[None, :]))
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))

us = lambda fn: triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median") * 1e3

n = 1 << 24
padded = int(n * (1 + PAD))
x = torch.randn(padded, device="cuda", dtype=torch.bfloat16)
y = torch.randn(padded, device="cuda", dtype=torch.bfloat16)
out = torch.empty_like(x)
t = us(lambda: torch.add(x[:n], y[:n], out=out[:n]))
g = us(lambda: add_kernel[(triton.cdiv(padded, 1024),)](x, y, out, padded, BLOCK=1024))
print(f"[perf][add] dim: ({n},), dtype: torch.bfloat16, torch avg: {t:.2f} us, triton avg: {g:.2f} us", flush=True)

M = N = K = 2048
a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
t = us(lambda: torch.matmul(a, b, out=c))
g = us(lambda: matmul_kernel[(M // TILE, N // TILE)](a, b, c, M, N, K, BM=TILE, BN=TILE, BK=64,
                                                   num_warps=8 if TILE >= 128 else 4, num_stages=3))
print(f"[perf][matmul] M: {M}, N: {N}, K: {K}, dtype: torch.bfloat16, torch avg: {t:.2f} us, triton avg: {g:.2f} us", flush=True)
