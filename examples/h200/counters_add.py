# The kernel of `counters.sh`: a Triton vector add over 2^24 bf16 elements whose buffers are
# padded by PAD (a fraction, from the environment) and processed whole, next to torch.add
# (the control). One `[perf]` line a run; with LAUNCHES set, that many launches of each
# and no timing loop (what a profiler replays).
import os, torch, triton, triton.language as tl

@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)

n = 1 << 24
padded = int(n * (1 + float(os.environ.get("PAD", "0"))))
BLOCK = 1024
x = torch.randn(padded, device="cuda", dtype=torch.bfloat16)
y = torch.randn(padded, device="cuda", dtype=torch.bfloat16)
out = torch.empty_like(x)

def triton_add():
    add_kernel[(triton.cdiv(padded, BLOCK),)](x, y, out, padded, BLOCK=BLOCK)

def torch_add():
    torch.add(x[:n], y[:n], out=out[:n])

launches = int(os.environ.get("LAUNCHES", "0"))
if launches:
    for _ in range(launches):
        torch_add()
        triton_add()
    torch.cuda.synchronize()
    print(f"ran {launches} launches of each (pad {padded - n} elements)", flush=True)
else:
    us = lambda fn: triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
    t, c = us(torch_add), us(triton_add)
    print(f"[perf] dim: ({n},), dtype: torch.bfloat16, torch avg: {t:.2f} us, triton avg: {c:.2f} us", flush=True)
