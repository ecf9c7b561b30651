"""A Triton add timed by `triton.testing.do_bench` at three sizes, unchanged for
`perfdb ab --energy-per-call` (which measures each do_bench's function for energy per
call after its timing, from perfdb's sitecustomize).

  INPUT=random (default) | zeros: zeros draw less power at the same speed
  KIND=add (default) | add2 (the add done twice a call)

Prints one `[perf]` line a size: `[perf][triton_add] dim: (N,), dtype: torch.float32, triton avg: US us`.
"""
import os

import torch
import triton
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def add_kernel(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


make = torch.zeros if os.environ.get("INPUT", "random") == "zeros" else torch.randn
twice = os.environ.get("KIND", "add") == "add2"
for n in (1 << 24, 1 << 26, 1 << 27):
    x, y, out = make(n, device="cuda"), make(n, device="cuda"), torch.empty(n, device="cuda")
    grid = (triton.cdiv(n, 1024),)

    def call():
        add_kernel[grid](x, y, out, n, BLOCK=1024)
        if twice:
            add_kernel[grid](out, y, out, n, BLOCK=1024)

    ms = do_bench(call)
    print(f"[perf][triton_add] dim: ({n},), dtype: torch.float32, triton avg: {ms * 1e3:.3f} us", flush=True)
