# A Triton GEMM (the tutorial's matmul, one tile size from the environment) next to
# torch.matmul (the control): M = N = K = 2048 in bf16, whose operands fit in the L2 of
# an H100 or H200, so a smaller tile lowers compute throughput while device-memory
# traffic stays where it was. One `[perf][matmul]` line a run; with LAUNCHES set, that
# many launches of each and no timing loop (what a profiler replays). NVTX=1 wraps each
# launch in an NVTX range named for its variant.
import os, torch, triton, triton.language as tl

@triton.jit
def matmul_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))

M = N = K = int(os.environ.get("SIZE", "2048"))
TILE = int(os.environ.get("TILE", "128"))
a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)

def triton_mm():
    matmul_kernel[(M // TILE, N // TILE)](a, b, c, M, N, K, BM=TILE, BN=TILE, BK=64,
                                          num_warps=8 if TILE >= 128 else 4, num_stages=3)

def torch_mm():
    torch.matmul(a, b, out=c)

nvtx = os.environ.get("NVTX") == "1"
def ranged(name, fn):
    if not nvtx:
        return fn()
    torch.cuda.nvtx.range_push(name); fn(); torch.cuda.nvtx.range_pop()

launches = int(os.environ.get("LAUNCHES", "0"))
if launches:
    for _ in range(launches):
        ranged("torch", torch_mm)
        ranged("triton", triton_mm)
    torch.cuda.synchronize()
    print(f"ran {launches} launches of each (tile {TILE})", flush=True)
else:
    us = lambda fn: triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
    t, g = us(torch_mm), us(triton_mm)
    print(f"[perf][matmul] M: {M}, N: {N}, K: {K}, dtype: torch.bfloat16, torch avg: {t:.2f} us, triton avg: {g:.2f} us", flush=True)
