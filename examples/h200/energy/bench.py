"""One kernel timed by CUDA events over a fixed number of calls, for `perfdb ab`'s energy
verdict: a fixed count of calls makes a trial's energy the calls' energy plus the
process's own start and end, the same in both arms.

  KIND=add  (default) x + y into out over SIZE float32s (memory-bound: below the power
            limit, its time set by memory bandwidth, not by the values)
  KIND=add2 the same add done twice a call (twice the time and the energy)
  INPUT=random (default) | zeros: zeros toggle fewer bits, so they draw less power at
            the same speed while the kernel stays below the power limit
  SIZE (default 2**27), CALLS (default 3000)

Prints one aiter `[perf]` line: `[perf][add] dim: (SIZE,), dtype: torch.float32, torch avg: US us`.
Under `perfdb ab --energy`, `perfdb_energy.per_call` measures the call's energy first (a
`perfdb-energy call` line the row gets as its `energy_per_call`); elsewhere it is skipped.
"""
import os

import torch

kind = os.environ.get("KIND", "add")
n = int(os.environ.get("SIZE", str(1 << 27)))
calls = int(os.environ.get("CALLS", "3000"))
make = torch.zeros if os.environ.get("INPUT", "random") == "zeros" else torch.randn
x, y = make(n, device="cuda"), make(n, device="cuda")
out = torch.empty(n, device="cuda")


def call():
    torch.add(x, y, out=out)
    if kind == "add2":
        torch.add(out, y, out=out)


for _ in range(20):
    call()
torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(calls):
    call()
end.record()
torch.cuda.synchronize()
us = start.elapsed_time(end) * 1e3 / calls
try:
    import perfdb_energy
except ImportError:
    perfdb_energy = None
if perfdb_energy is not None:
    perfdb_energy.per_call(call)
print(f"[perf][add] dim: ({n},), dtype: torch.float32, torch avg: {us:.3f} us", flush=True)
