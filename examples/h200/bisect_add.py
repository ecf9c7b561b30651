# The benchmark of `examples/h200/bisect_demo.sh`'s repository: a Triton vector add whose
# block size the commit's `config.py` sets, next to torch.add (the control), 2^24 bf16
# elements, one `[perf]` line a run.
import torch, triton, triton.language as tl
from config import BLOCK

@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)

n = 1 << 24
x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
y = torch.randn(n, device="cuda", dtype=torch.bfloat16)
out = torch.empty_like(x)

def triton_add():
    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)

def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3

t = us(lambda: torch.add(x, y, out=out))
c = us(triton_add)
print(f"[perf] dim: ({n},), dtype: torch.bfloat16, torch avg: {t:.2f} us, triton avg: {c:.2f} us", flush=True)
